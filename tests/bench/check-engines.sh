#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every engine of the registry is a peer with nothing in bench/ naming it:
# each engine `tkbench list` shows, at its defaults and with @embedded, runs
# W1 at core level (if the list gives it a core) and at executor level, and
# gets a style slot of its own. Nothing is measured (no value is checked).
# Usage: check-engines.sh TKBENCH WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$tkb" list >"$work/list" || fail "tkbench list"
engines=$(sed -n 's/^  \([^ ]*\) *engine .*/\1/p' "$work/list")
[[ -n "$engines" ]] || { fail "tkbench list shows no engine"; exit 1; }
peers=""
for e in $engines; do peers+="${peers:+,}$e,$e@embedded"; done
out="$work/run"
"$tkb" run --suite smoke --workloads W1 --peers "$peers" --n 1000 --reps 1 --out "$out" \
  >"$work/run.out" 2>"$work/run.err" || { tail -n 20 "$work/run.err"; fail "tkbench run --peers $peers"; }
python3 - "$out" "$work/list" $engines <<'PY' || fail "results"
import csv, json, os, re, sys
d, listing, engines = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3:]
m = json.load(open(os.path.join(d, "manifest.json")))
rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
peers = {p["spec"]: p for p in m["peers"]}
slots = [p["slot"] for p in m["peers"]]
assert len(set(slots)) == len(slots), "two peers share a slot: %s" % slots
for e in engines:
    line = re.search(r"^  %s +engine +(.*)$" % re.escape(e), listing, re.M).group(1)
    core = "levels: core, executor" in line
    task = [p for s, p in peers.items() if p["engine"] == e and p["mode"] == "task"]
    emb = [p for s, p in peers.items() if p["engine"] == e and p["mode"] == "embedded"]
    assert len(task) == 1 and len(emb) == 1, (e, list(peers))
    t, b = task[0], emb[0]
    assert t["levels"] == (["core", "executor"] if core else ["executor"]), t
    assert b["levels"] == ["executor"], b
    have = {(r["workload"], r["metric"]) for r in rows if r["peer"] == t["id"]}
    want_core = {("W1_core", x) for x in ("schedule_ns", "cancel_ns", "churn_ns", "expire_ns")}
    assert (want_core <= have) == core, (e, "core rows", sorted(have))
    assert ("W1_exec", "schedule_ns") in have, (e, "executor rows", sorted(have))
    assert any(r["peer"] == b["id"] and r["workload"] == "W1_exec" for r in rows), (e, "embedded")
    if t["slot"] <= 4:
        assert b["slot"] == t["slot"] + 12, (e, t["slot"], b["slot"])
    print("%s: levels %s, slots %d and %d" % (e, ", ".join(t["levels"]), t["slot"], b["slot"]))
PY
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
