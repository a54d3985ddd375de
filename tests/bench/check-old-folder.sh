#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A results folder an older tkbench wrote (tests/bench/old-folder: no manifest,
# no rep column, peers under their old names) still renders: tkbench plot
# writes it a manifest from the workload descriptors, then draws it.
# Usage: check-old-folder.sh TKBENCH FIXTURE WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; fixture=${2:?old folder}; work=${3:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
d="$work/old run"
cp -R "$fixture" "$d"
"$tkb" plot "$d" >"$work/plot.out" 2>&1 || { cat "$work/plot.out"; fail "tkbench plot of an old folder"; }
grep -q "has no manifest.json" "$work/plot.out" || fail "tkbench plot did not say it wrote a manifest"
python3 - "$d/manifest.json" <<'PY' || fail "the synthesized manifest"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["synthesized"] is True
peers = {p["id"]: p for p in m["peers"]}
assert peers["wheel-1ms-1024"]["spec"] == "wheel:tick=1ms,slots=1024", peers["wheel-1ms-1024"]
assert peers["heap-embedded"]["spec"] == "heap@embedded"
assert peers["heap-embedded"]["slot"] == 13 and peers["heap"]["slot"] == 1
assert len(m["hist"]) == 2, m["hist"]
print("synthesized manifest ok:", ", ".join(p["spec"] for p in m["peers"]))
PY
[[ -s "$d/figures/w1_core_schedule.png" ]] || fail "no w1_core_schedule.png"
[[ -s "$d/figures/w3_latency_percentiles.png" ]] || fail "no w3_latency_percentiles.png"
[[ -s "$d/report.md" ]] || fail "no report.md"
# a second manifest is refused without --force
"$tkb" manifest "$d" 2>"$work/err"; rc=$?
[[ $rc == 2 ]] && grep -q -- "--force" "$work/err" || fail "tkbench manifest over an existing one: exit $rc"
"$tkb" manifest --force "$d" 2>/dev/null || fail "tkbench manifest --force"
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
