#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# W7_contention's producer counts (docs/workloads.md, W7): by default 1, 2,
# 4, ... up to twice the machine's cores, in every suite; --n sets any
# counts (3 and 5 here, which no default has). Nothing is timed.
# Usage: check-contention.sh TKBENCH WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ns() { # FOLDER: the W7 rows' n, sorted, comma-separated
  awk -F, '$2 == "W7_contention" && $4 == "ops_per_s" { print $3 }' "$1/results.csv" | sort -n | uniq | paste -sd,
}

want=$(python3 -c "import os; c = os.cpu_count(); print(','.join(str(2 ** i) for i in range(64) if 2 ** i <= 2 * c))")
for suite in smoke quick full; do
  got=$("$tkb" list | sed -n "/^  W7_contention /,/^  [A-Za-z]/s/^ *$suite *: n \([0-9,]*\);.*/\1/p")
  [[ "$got" == "$want" ]] || fail "tkbench list: W7 in $suite has n $got, expected $want (2 x $(nproc) cores)"
done

"$tkb" run --suite smoke --workloads W7 --peers heap --out "$work/default" >/dev/null 2>"$work/default.err" ||
  { cat "$work/default.err"; fail "run W7"; }
[[ "$(ns "$work/default")" == "$want" ]] || fail "a run of W7 measured n $(ns "$work/default"), expected $want"

"$tkb" run --suite smoke --workloads W7 --peers heap --n 3,5 --out "$work/n" >/dev/null 2>"$work/n.err" ||
  { cat "$work/n.err"; fail "run W7 --n 3,5"; }
[[ "$(ns "$work/n")" == "3,5" ]] || fail "W7 --n 3,5 measured n $(ns "$work/n")"
grep -q '"W7_contention"' "$work/n/metadata.json" && python3 - "$work/n/metadata.json" <<'PY' || fail "metadata plans of W7 --n"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["plans"]["W7_contention"]["sizes"] == [3, 5], m["plans"]["W7_contention"]
PY
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed (W7 n $want by default)"
