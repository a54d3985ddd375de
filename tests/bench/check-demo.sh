#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A workload that only the test build has (tests/bench/workloads/w9_demo.c: one file, and
# one line in the table through test-workloads.h) reaches every part of the
# pipeline without any other change: the CLI, `tkbench list`, results.csv,
# manifest.json, the renderer's figure and the report. Nothing is measured.
# Usage: check-demo.sh TKBENCH_TEST WORKDIR
set -uo pipefail
tkb=${1:?tkbench_test}; work=${2:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
need() { grep -qF -- "$2" "$1" || fail "$1 lacks $3 ($2)"; }

"$tkb" list >"$work/list.txt" || fail "tkbench_test list"
need "$work/list.txt" "W9_demo" "the demo workload in tkbench list"
need "$work/list.txt" "cycle_ns" "the demo metric in tkbench list"

out="$work/run"
"$tkb" run --suite smoke --workloads W9 --peers heap,wheel-1ms-1024,naive-heap --out "$out" \
  >"$work/run.out" 2>"$work/run.err" || { cat "$work/run.err"; fail "the demo run failed"; }
cat "$work/run.out"
need "$out/results.csv" "heap,W9_demo,1000,cycle_ns," "a heap row of the demo"
need "$out/results.csv" '"wheel:tick=1ms,slots=1024",W9_demo,100,cycle_ns,' "a wheel row, its spec quoted"
# three repetitions of each (peer, n): rep 0, 1 and 2
[[ $(grep -c '^heap,W9_demo,1000,cycle_ns,.*,ns,[012]$' "$out/results.csv") == 3 ]] ||
  fail "expected 3 repetitions of heap n=1000"
python3 - "$out/manifest.json" <<'PY' || fail "manifest.json"
import json, sys
m = json.load(open(sys.argv[1]))
w = [w for w in m["workloads"] if w["name"] == "W9_demo"]
assert len(w) == 1, "no W9_demo in the manifest"
assert [x["name"] for x in w[0]["metrics"]] == ["cycle_ns"], w[0]["metrics"]
assert w[0]["metrics"][0]["better"] == "lower"
f = [f for f in m["figures"] if f["workload"] == "W9_demo"]
assert [x["name"] for x in f] == ["w9_demo_cycle"], f
assert f[0]["kind"] == "lines" and f[0]["series"][0]["metric"] == "cycle_ns"
assert {p["spec"] for p in m["peers"]} == {"heap", "wheel:tick=1ms,slots=1024", "naive-heap"}
print("manifest ok")
PY
"$tkb" plot "$out" >"$work/plot.out" 2>&1 || { cat "$work/plot.out"; fail "tkbench_test plot"; }
for ext in pdf png svg; do
  [[ -s "$out/figures/w9_demo_cycle.$ext" ]] || fail "no figures/w9_demo_cycle.$ext"
done
need "$out/report.md" "W9_demo" "the demo's report section"
need "$out/report.md" "(figures/w9_demo_cycle.png)" "the demo's figure in the report"
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
