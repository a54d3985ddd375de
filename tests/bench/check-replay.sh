#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `tkbench replay` end to end (docs/replay.md): a synthetic trace replayed at
# core level on the suites' default peers (every engine core and the
# strawmen) passes the differential check; its rows, manifest entries, figure
# and report section are there; a perturbed expiry fails the run (status 1,
# the first difference named); bad usage exits with status 2 and a message.
# Nothing is timed. Usage: check-replay.sh TKBENCH WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
need() { grep -qF -- "$2" "$1" || fail "$1 lacks $3 ($2)"; }

# 1. the default peers: every engine core of the build and the strawmen match the reference
out="$work/ok"
"$tkb" replay synth:3000 --reps 2 --out "$out" >"$work/ok.out" 2>"$work/ok.err" ||
  { cat "$work/ok.err"; fail "replay synth:3000 failed"; }
cat "$work/ok.out"
# every engine of the build with a core (hwheel's spec always shows its parameters)
for peer in heap '"wheel:tick=1ms,slots=1024"' '"hwheel:[^"]*"' naive-heap sorted-list; do
  for m in event_ns start_ns modify_ns cancel_ns expire_ns peak_timers expired; do
    grep -qE "^$peer,replay_core:synth-3000,3000,$m," "$out/results.csv" ||
      fail "results.csv lacks $m of $peer"
  done
done
[[ $(grep -c '^heap,replay_core:synth-3000,3000,start_ns,.*,ns,[01]$' "$out/results.csv") == 2 ]] ||
  fail "expected 2 repetitions of heap's start_ns"
need "$work/ok.err" "not on the replay's grid of step 1ms" "the note on the 100 ms wheel"
need "$work/ok.out" "replay_core:synth-3000, 3000 events" "the headline table of the trace"
for p in libuv libevent libev asio; do
  grep -q "^$p,replay_core" "$out/results.csv" && fail "$p has no core-level replay, yet has rows"
done
python3 - "$out/manifest.json" <<'PY' || fail "manifest.json"
import json, sys
m = json.load(open(sys.argv[1]))
w = [w for w in m["workloads"] if w["name"] == "replay_core"]
assert len(w) == 1, "no replay workload in the manifest"
assert w[0]["rows"] == [{"workload": "replay_core:synth-3000", "label": "synth-3000"}], w[0]["rows"]
names = [x["name"] for x in w[0]["metrics"]]
for k in ("event_ns", "start_ns", "modify_ns", "cancel_ns", "expire_ns", "peak_timers"):
    assert k in names, k
f = {x["name"]: x for x in m["figures"] if x["workload"] == "replay_core"}
ops = f["replay_core_ops_synth-3000"]
assert ops["kind"] == "bars", ops
assert [s["metric"] for s in ops["series"]] == ["start_ns", "modify_ns", "cancel_ns", "expire_ns"]
assert {s["workload"] for s in ops["series"]} == {"replay_core:synth-3000"}
print("manifest ok")
PY
"$tkb" plot "$out" >"$work/plot.out" 2>&1 || { cat "$work/plot.out"; fail "tkbench plot"; }
for ext in pdf png svg; do
  [[ -s "$out/figures/replay_core_ops_synth-3000.$ext" ]] || fail "no figures/replay_core_ops_synth-3000.$ext"
done
need "$out/report.md" "## replay_core" "the replay's report section"
need "$out/report.md" "(figures/replay_core_ops_synth-3000.png)" "the replay's figure in the report"
# the trace's shape beside the results, and in the report
for f in summary.txt population.png delay-cdf.png; do
  [[ -s "$out/traces/synth-3000/$f" ]] || fail "no traces/synth-3000/$f"
done
need "$out/report.md" "## Trace synth-3000" "the trace's section in the report"
need "$out/report.md" "(traces/synth-3000/population.png)" "the population figure in the report"

# 2. `tkbench run --workloads replay --trace`: the same rows from a run
"$tkb" run --suite smoke --workloads replay --trace synth:500 --peers heap,sorted-list \
  --out "$work/run" >"$work/run.out" 2>"$work/run.err" || { cat "$work/run.err"; fail "run --trace"; }
need "$work/run/results.csv" "heap,replay_core:synth-500,500,event_ns," "a row of run --trace"

# 2b. a trace file in the neutral CSV format (tests/trace/data/tiny.csv) on every core
here=$(cd "$(dirname "$0")" && pwd)
"$tkb" replay "$here/../trace/data/tiny.csv" --reps 1 --out "$work/csv" >"$work/csv.out" \
  2>"$work/csv.err" || { cat "$work/csv.err"; fail "replay of tiny.csv"; }
# on a 1 ms grid only b expires (at 1 ms: a and c are cancelled before)
for peer in heap '"wheel:tick=1ms,slots=1024"' '"hwheel:[^"]*"' naive-heap sorted-list; do
  grep -qE "^$peer,replay_core:tiny,6,expired,1,count,0$" "$work/csv/results.csv" ||
    fail "tiny.csv: no row of $peer with its 1 timer expired"
done
# on a 1 us grid c, armed already due at 2.5 us, expires at 3 us, before its cancel
"$tkb" replay "$here/../trace/data/tiny.csv" --step 1us --peers heap,sorted-list --reps 1 \
  --out "$work/csv1us" >"$work/csv1us.out" 2>"$work/csv1us.err" ||
  { cat "$work/csv1us.err"; fail "replay of tiny.csv at step 1us"; }
for peer in heap sorted-list; do
  grep -qE "^$peer,replay_core:tiny,6,expired,2,count,0$" "$work/csv1us/results.csv" ||
    fail "tiny.csv at 1us: no row of $peer with its 2 timers expired"
done
printf 't_ns,op,timer,deadline_ns,function,class\n0,start,a,100,,\n5,bogus,a,,,\n' >"$work/bad.csv"

# 2d. perf script text replays as it is, and as its conversion to CSV does
"$tkb" replay "$here/../trace/data/tiny.perf.txt" --peers heap,hwheel --reps 1 --out "$work/perf" \
  >"$work/perf.out" 2>"$work/perf.err" || { cat "$work/perf.err"; fail "replay of perf text"; }
"$tkb" trace convert "$here/../trace/data/tiny.perf.txt" "$work/tiny.perf.csv" >/dev/null 2>&1 ||
  fail "convert tiny.perf.txt"
"$tkb" replay "$work/tiny.perf.csv" --peers heap,hwheel --reps 1 --out "$work/perfcsv" \
  >"$work/perfcsv.out" 2>"$work/perfcsv.err" || { cat "$work/perfcsv.err"; fail "replay of its CSV"; }
counts() { grep -E ',replay_core:tiny[^,]*,[0-9]+,(expired|starts|modifies|cancels),' "$1" |
  cut -d, -f1,4,5 | sed 's/,replay_core:[^,]*//' | sort; }
[[ -n "$(counts "$work/perf/results.csv")" ]] || fail "no count rows from the perf text's replay"
[[ "$(counts "$work/perf/results.csv")" == "$(counts "$work/perfcsv/results.csv")" ]] ||
  fail "perf text and its CSV replay differently"

# 2c. both levels: the executor-level rows, its histogram and lateness figures
"$tkb" replay "$here/../trace/data/tiny.csv" --level all --peers heap --reps 1 --speed 2 \
  --out "$work/all" >"$work/all.out" 2>"$work/all.err" || { cat "$work/all.err"; fail "--level all"; }
need "$work/all/results.csv" "heap,replay_core:tiny,6,event_ns," "the core-level row"
need "$work/all/results.csv" "heap,replay_exec:tiny,6,late_p50_us," "the executor-level row"
[[ -s "$work/all/hist/replay_exec:tiny.heap.hgrm" ]] || fail "no hist/replay_exec:tiny.heap.hgrm"
"$tkb" plot "$work/all" >"$work/all-plot.out" 2>&1 || { cat "$work/all-plot.out"; fail "plot --level all"; }
[[ -s "$work/all/figures/replay_exec_cdf_tiny.png" ]] || fail "no figures/replay_exec_cdf_tiny.png"
need "$work/all/report.md" "## replay_exec" "the executor-level report section"
need "$work/all/metadata.txt" "replay.speed: 2" "the replay's speed in the metadata"
need "$work/all/metadata.txt" "replay.traces.tiny.events: 8" "the trace in the metadata"

# 3. the check can fail: one expiry recorded a step late
"$tkb" replay synth:3000 --peers heap --reps 1 --_perturb 7 --out "$work/bad" \
  >"$work/bad.out" 2>"$work/bad.err"
rc=$?
[[ $rc == 1 ]] || fail "a perturbed replay exited with $rc, expected 1"
need "$work/bad.err" "MISMATCH: trace synth-3000: peer heap differs from the reference at virtual time" \
  "the first difference"

# 4. usage errors: status 2 and a message
usage() { # expected-message args...
  local msg=$1; shift
  "$tkb" "$@" >"$work/u.out" 2>"$work/u.err"
  local rc=$?
  [[ $rc == 2 ]] || fail "tkbench $* exited with $rc, expected 2"
  grep -qF -- "$msg" "$work/u.err" || { cat "$work/u.err"; fail "tkbench $*: no '$msg'"; }
}
usage "usage: tkbench replay TRACE" replay
usage "--step: expected a duration" replay synth:10 --step 1xs
usage "--step: expected a duration" replay synth:10 --step 5
usage "--level: expected core, executor or all" replay synth:10 --level fast
usage "--speed: expected a factor" replay synth:10 --speed 0
usage "--reps: expected an integer" replay synth:10 --reps x
usage "replay: unknown option '--bogus'" replay synth:10 --bogus
usage "not on the replay's grid of step 1ms" replay synth:10 --peers wheel:tick=100ms,slots=512
usage "unknown peer" replay synth:10 --peers nosuch
usage "$work/none.csv" replay "$work/none.csv"
usage "$work/bad.csv:3: unknown operation" replay "$work/bad.csv"
usage "the replay needs a trace" run --suite smoke --workloads replay
usage "none of the selected workloads replays" run --workloads W1_core --trace synth:10
usage "the same short name" replay synth:10 synth:10

if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
