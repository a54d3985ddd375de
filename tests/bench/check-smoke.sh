#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The smoke suite end to end: tkbench runs every workload on every default peer
# at tiny sizes, writes a complete results folder, and the renderer draws every
# figure of its manifest. No speed is asserted anywhere.
# Usage: check-smoke.sh TKBENCH WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
out="$work/smoke"
"$tkb" run --suite smoke --out "$out" >"$work/run.out" 2>"$work/run.err"
rc=$?
cat "$work/run.out"
((rc == 0)) || { tail -n 30 "$work/run.err"; fail "tkbench run --suite smoke exited $rc"; }
grep -q '^Headline' "$work/run.out" || fail "no headline table on stdout"
for f in results.csv manifest.json metadata.json metadata.txt raw/gbench.json; do
  [[ -s "$out/$f" ]] || fail "missing $f"
done
[[ "$(head -1 "$out/results.csv")" == "peer,workload,n,metric,value,unit,rep" ]] || fail "results.csv header"
python3 - "$out" <<'PY' || fail "the folder is not what results-format.md says"
import csv, json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
meta = json.load(open(os.path.join(d, "metadata.json")))
for k in ("commit", "commit_dirty", "source_commit", "source_dirty", "suite", "cpu_model"):
    assert k in meta, "metadata lacks " + k
ids = {p["id"] for p in m["peers"]}
declared = {(r["workload"], x["name"]) for w in m["workloads"] for r in w["rows"] for x in w["metrics"]}
rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
assert rows, "no rows"
for r in rows:
    assert r["peer"] in ids, "peer %r not in the manifest" % r["peer"]
    assert (r["workload"], r["metric"]) in declared, "undeclared %s/%s" % (r["workload"], r["metric"])
for h in m["hist"]:
    assert os.path.isfile(os.path.join(d, h["path"])), h
assert len(m["figures"]) >= 20, "only %d figures" % len(m["figures"])
print("%d rows, %d peers, %d workloads, %d figures, %d histograms" %
      (len(rows), len(ids), len(m["workloads"]), len(m["figures"]), len(m["hist"])))
PY
# the foreign peers this build can run are in the suite, with rows of W1_exec (every
# harness implements it; check-children.sh checks the rest)
for p in $("$tkb" list | awk '/\[harness / && !/cannot run/ { print $1 }' | sort -u); do
  grep -q "^$p,W1_exec," "$out/results.csv" || fail "no W1_exec rows of the foreign peer $p"
done
"$tkb" plot "$out" >"$work/plot.out" 2>&1
rc=$?
cat "$work/plot.out"
((rc == 0)) || fail "tkbench plot exited $rc"
python3 - "$out" <<'PY' || fail "figures"
import json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
report = open(os.path.join(d, "report.md"), encoding="utf-8").read()
missing = [f["name"] + "." + e for f in m["figures"] for e in ("pdf", "png", "svg")
           if not os.path.isfile(os.path.join(d, "figures", f["name"] + "." + e))
           and "`%s`" % f["name"] not in report]
assert not missing, "neither drawn nor listed as not drawn: %s" % missing
print("every figure drawn or listed")
PY
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
