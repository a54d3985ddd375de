#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Timer slack in tkbench (issue 28). `slack=` and `os_slack=` on an engine's
# spec parse, reach the canonical spec, the label and the manifest, and
# refuse a baseline, a foreign peer and bad values with a message; W3
# reports wake-ups; the slack frontier, run as a suite runs it on a short part
# of the shipped trace, has a row for every engine at every slack and for the
# heap's OS timer slack, each with finite wake-ups and lateness and nothing
# early, and its two figures and its table render. Nothing is timed.
# Usage: check-slack.sh TKBENCH WORKDIR TRACE
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}; trace=${3:?trace}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# refused SPEC TEXT: a run naming SPEC is a usage error whose message holds TEXT
refused() {
  local spec=$1 text=$2
  "$tkb" run --suite smoke --workloads W3 --peers "$spec" --out "$work/refused" \
    >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $rc != 2 ]]; then fail "--peers $spec exited $rc, expected 2"; cat "$work/err"; return; fi
  grep -qF -- "$text" "$work/err" || { fail "--peers $spec: stderr lacks '$text'"; cat "$work/err"; return; }
  [[ ! -e "$work/refused" ]] || fail "--peers $spec wrote a results folder"
  echo "ok: --peers $spec -> 2 ($(head -n 1 "$work/err"))"
}
refused libuv:slack=1ms "libuv has no slack"
refused netty-1ms:slack=1ms "netty-1ms has no slack"
refused floor:os_slack=1ms "floor has no slack"
refused heap:slack=-1ms "slack: '-1ms' is not a duration"
refused heap:slack=5 "slack: '5' is not a duration"
refused heap:slack=soon "slack: 'soon' is not a duration"
refused heap:slack= "slack: '' is not a duration"
refused heap:os_slack=0ns "os_slack: '0ns' is not a duration of at least 1ns"
refused heap:slack=1ms,slack=2ms "slack is given twice"
"$tkb" list >"$work/list" 2>&1 || fail "tkbench list"
grep -q "^    slack " "$work/list" && grep -q "^    os_slack " "$work/list" \
  || fail "tkbench list does not show slack and os_slack"

# W3 with slacks: the spec, label and rows carry them; wake-ups are reported
out="$work/w3"
"$tkb" run --suite smoke --workloads W3 --reps 1 --out "$out" \
  --peers "heap:slack=1ms,hwheel:tick=1ms,slack=100us,wheel:slots=1024,tick=1ms,slack=0.5ms@embedded,heap:os_slack=1ms" \
  >"$work/w3.out" 2>"$work/w3.err" || { tail -n 20 "$work/w3.err"; fail "W3 with slacks"; }
python3 - "$out" <<'PY' || fail "W3 with slacks: results"
import csv, json, math, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
peers = {p["spec"]: p for p in m["peers"]}
want = {"heap:slack=1ms": ("heap-slack1ms", "heap", 1000000, 0),
        "hwheel:tick=1ms,slack=100us": (None, "hwheel:tick=1ms", 100000, 0),
        "wheel:tick=1ms,slots=1024,slack=500us@embedded":
            ("wheel-1ms-1024-slack500us-embedded", "wheel:tick=1ms,slots=1024@embedded", 500000, 0),
        "heap:os_slack=1ms": ("heap-osslack1ms", "heap", 0, 1000000)}
for spec, (label, base, slack, os_slack) in want.items():
    p = next((q for s, q in peers.items() if s.startswith(spec.split("@")[0].split(",")[0])
              and q["slack_ns"] == slack and q["os_slack_ns"] == os_slack
              and q["mode"] == ("embedded" if "@" in spec else "task")), None)
    assert p is not None, (spec, sorted(peers))
    assert ("slack=" in p["spec"]) and ("slack" in p["label"]), p
    if label:
        assert p["label"] == label and p["spec"] == spec, (p["label"], p["spec"])
    assert p["base"] == base or spec.startswith("hwheel"), (p["base"], base)
md = json.load(open(os.path.join(d, "metadata.json")))
assert md["peer_params"]["heap:slack=1ms"]["slack"] == "1ms", md["peer_params"]["heap:slack=1ms"]
assert md["peer_params"]["heap:os_slack=1ms"]["os_slack"] == "1ms"
assert "heap:os_slack=1ms" in md["peers"].split(), md["peers"]
labels = [p["label"] for p in m["peers"]]
assert len(set(labels)) == len(labels), labels
rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
for p in m["peers"]:
    w = [float(r["value"]) for r in rows if r["peer"] == p["id"] and r["workload"] == "W3_latency"
         and r["metric"] == "wakeups_per_s"]
    assert len(w) == 1 and math.isfinite(w[0]) and w[0] > 0, (p["id"], w)
    e = [float(r["value"]) for r in rows if r["peer"] == p["id"] and r["metric"] == "early_count"]
    assert e == [0.0], (p["id"], e)
PY
[[ $? == 0 ]] && echo "ok: W3 with slacks: specs, labels, base, metadata, wake-ups"

# the frontier as a suite runs it (no --peers): the smoke suite's short part of the trace
out="$work/frontier"
"$tkb" run --suite smoke --workloads slack --trace "$trace" --out "$out" \
  >"$work/frontier.out" 2>"$work/frontier.err" || { tail -n 20 "$work/frontier.err"; fail "the frontier"; }
python3 - "$out" "$work/list" <<'PY' || fail "the frontier: results"
import csv, json, math, os, re, sys
d, listing = sys.argv[1], open(sys.argv[2]).read()
engines = re.findall(r"^  (\S+) +engine ", listing, re.M)
m = json.load(open(os.path.join(d, "manifest.json")))
rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
fr = [r for r in rows if r["workload"].startswith("slack_frontier:")]
assert fr, "no frontier rows"
byid = {p["id"]: p for p in m["peers"]}
ran = {r["peer"] for r in fr}
points = {}
for pid in ran:
    p = byid[pid]
    kind = "os" if p["os_slack_ns"] else "slack"
    points.setdefault((p["engine"], kind), set()).add(p["os_slack_ns"] or p["slack_ns"])
    vals = {r["metric"]: float(r["value"]) for r in fr if r["peer"] == pid}
    for k in ("wakeups_per_s", "late_p99_us", "late_p50_us", "process_cpu_pct"):
        assert math.isfinite(vals[k]) and vals[k] >= 0, (pid, k, vals.get(k))
    assert vals["wakeups_per_s"] > 0, (pid, vals)
    assert vals["early_count"] == 0, (pid, "early", vals["early_count"])
slacks = {0, 100000, 1000000, 10000000}
for e in engines:
    assert points.get((e, "slack")) == slacks, (e, points)
assert points.get(("heap", "os")) == slacks - {0}, points
# the frontier's own peers ran nothing else
only = {pid for pid in ran if byid[pid]["slack_ns"] or byid[pid]["os_slack_ns"]}
assert not [r for r in rows if r["peer"] in only and not r["workload"].startswith("slack_frontier:")]
figs = [f["name"] for f in m["figures"] if f["kind"] == "frontier"]
assert sorted(figs) == ["frontier_cpu_tcp", "frontier_tcp"], figs
t = [x for x in m["targets"] if x["workload"] == "slack_frontier:tcp"]
lines = {byid[pid]["base"] or byid[pid]["spec"] for pid in ran if not byid[pid]["os_slack_ns"]}
assert len(lines) >= len(engines), lines  # every engine, and the suites' extra lines
assert len(t) == 3 * len(lines), (lines, t)  # three targets a line, at 1 ms
assert all(x["peer"].endswith("slack=1ms") for x in t), t
PY
[[ $? == 0 ]] && echo "ok: the frontier: every engine at every slack, the heap's OS slack, 0 early"
if command -v gnuplot >/dev/null 2>&1; then
  "$tkb" plot "$out" >"$work/plot.out" 2>"$work/plot.err" || { tail "$work/plot.err"; fail "tkbench plot"; }
  for f in frontier_tcp frontier_cpu_tcp; do
    [[ -s "$out/figures/$f.pdf" ]] || fail "no figures/$f.pdf"
  done
  grep -q "^| line | slack |" "$out/report.md" || fail "report.md has no frontier table"
  grep -q "wakeups_per_s: " "$out/report.md" || fail "the frontier table names no target's verdict"
  echo "ok: the frontier's figures and table"
fi
if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all slack checks passed"
