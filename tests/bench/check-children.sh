#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The foreign peers (bench/peers/child.c, docs/child-protocol.md): every peer whose
# harness this build made reports finite rows of every workload its harness
# implements, at smoke size; and a harness that cannot run, or a child that
# misbehaves, gives a clear message, never a crash or a silent zero. The
# misbehaving children are fakes given through $TKBENCH_HARNESS_JVM, so those
# checks run in any build. No speed is asserted.
#   check-children.sh TKBENCH WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# ---- the real harnesses: every foreign peer that can run, every workload it implements
"$tkb" list >"$work/list.out" 2>&1 || fail "tkbench list failed"
peers=$(awk '/^  [a-z].*\[harness / && !/cannot run/ { print $1 }' "$work/list.out" | paste -sd, -)
echo "foreign peers that can run: ${peers:-none}"
grep '\[harness .*cannot run' "$work/list.out" | sed 's/^/  note: /'
# a harness this build made must run: only one the build could not make may be missing
for h in "$(dirname "$tkb")"/*/tkbench-*; do
  [ -f "$h" ] && [ -x "$h" ] || continue
  name=${h##*/tkbench-}
  ! grep -q "\[harness $name\].*cannot run" "$work/list.out" ||
    fail "the $name harness was built ($h) but its peers cannot run"
  grep -q "\[harness $name\]" "$work/list.out" || fail "the $name harness was built but no peer names it"
done
if [ -n "$peers" ]; then
  out=$work/ok
  "$tkb" run --suite smoke --workloads W1_exec,W2_burst,W3,W4,W5 --peers "heap,$peers" \
    --out "$out" >"$work/ok.out" 2>"$work/ok.err"
  rc=$?
  ((rc == 0)) || { tail -n 20 "$work/ok.err"; fail "run with the foreign peers exited $rc"; }
  python3 - "$out" "$work/list.out" <<'PY' || fail "foreign peers' rows"
import csv, json, math, re, subprocess, sys
out, listing = sys.argv[1], open(sys.argv[2]).read()
rows = list(csv.DictReader(open(out + "/results.csv")))
meta = json.load(open(out + "/metadata.json"))
# what each measurement must report (docs/child-protocol.md)
need = {"ops": {"W1_exec": ["schedule_ns", "cancel_ns", "churn_ns"]},
        "burst": {"W2_burst": ["burst_fire_rate_per_s"]},
        "latency": {"W3_latency": ["late_p50_us", "late_p99_us", "early_count"]},
        "memory": {"W5_memory": ["bytes_per_timer"]},
        "idle-empty": {"W4_idle_empty": ["idle_wakeups", "idle_cpu_ms"]},
        "idle-hour": {"W4_idle_hour": ["idle_wakeups", "idle_cpu_ms"]}}
positive = {"schedule_ns", "cancel_ns", "churn_ns", "burst_fire_rate_per_s", "bytes_per_timer"}
for line in listing.splitlines():
    m = re.match(r"  (\S+) .*\[harness (\S+)\]", line)
    if not m or "cannot run" in line:
        continue
    peer, harness = m.groups()
    h = meta["harnesses"].get(harness)
    assert h and h["runtime"], "%s: no harness %s in metadata.json" % (peer, harness)
    desc = subprocess.run([h["program"], "--describe"], capture_output=True, text=True, check=True)
    measures = next(l for l in desc.stdout.splitlines() if l.startswith("measurements ")).split()[1:]
    mine = [r for r in rows if r["peer"] == peer]
    for r in mine:
        assert math.isfinite(float(r["value"])), r
    for meas in measures:
        for wl, metrics in need.get(meas, {}).items():
            for metric in metrics:
                v = [float(r["value"]) for r in mine if r["workload"] == wl and r["metric"] == metric]
                assert len(v) >= 1, "%s %s %s: no row" % (peer, wl, metric)
                assert metric not in positive or min(v) > 0, "%s %s %s = %s" % (peer, wl, metric, v)
    print("%s (harness %s): %s" % (peer, harness, " ".join(measures)))
PY
  for p in ${peers//,/ }; do
    if grep -q "^$p,W3_latency," "$out/results.csv"; then
      [ -s "$out/hist/W3_latency.$p.hgrm" ] || fail "no W3 histogram of $p"
    fi
    grep -q "^$p " "$work/ok.out" || fail "$p is not in the headline"
  done
fi

# ---- no harness: its peers are dropped with the reason, the others run
TKBENCH_HARNESS_JVM=$work/none "$tkb" run --suite smoke --workloads W1_exec --peers heap,jdk-stpe \
  --out "$work/none.d" >"$work/none.out" 2>"$work/none.err" || fail "a run without the harness failed"
grep -q "jdk-stpe: the jvm harness $work/none is not there" "$work/none.err" ||
  { cat "$work/none.err"; fail "no message naming the missing harness"; }
grep -q '^heap,W1_exec,' "$work/none.d/results.csv" || fail "heap did not run without the harness"
! grep -q '^jdk-stpe,' "$work/none.d/results.csv" || fail "jdk-stpe has rows without its harness"
TKBENCH_HARNESS_JVM=$work/none "$tkb" list >"$work/list2.out" 2>&1
grep -q '^  netty-1ms .*cannot run: the jvm harness' "$work/list2.out" || fail "tkbench list hides why"
# only such peers: nothing to run, status 2
TKBENCH_HARNESS_JVM=$work/none "$tkb" run --suite smoke --workloads W1_exec --peers jdk-stpe \
  --out "$work/none2.d" >/dev/null 2>"$work/none2.err"
rc=$?
((rc == 2)) || fail "only a peer without its harness: status $rc, not 2"
grep -q "nothing to run" "$work/none2.err" || fail "no 'nothing to run'"

# ---- a harness that cannot describe itself: it cannot run, its own words say why
fake() { # fake NAME BODY: a harness that describes itself (unless BODY does first), then runs BODY
  printf '#!/bin/sh\n%s\nif [ "$1" = --describe ]; then echo "runtime fake"; echo "measurements ops"; exit 0; fi\n%s\n' \
    "${3:-}" "$2" >"$work/$1"
  chmod +x "$work/$1"
}
fake nodesc 'exit 0' 'echo "tkbench-fake: no runtime here" >&2; exit 2'
TKBENCH_HARNESS_JVM=$work/nodesc "$tkb" list >"$work/nodesc.out" 2>&1
grep -qF "cannot run: the jvm harness $work/nodesc --describe failed: tkbench-fake: no runtime here" \
  "$work/nodesc.out" || { grep jdk-stpe "$work/nodesc.out"; fail "a failing --describe is not the reason"; }

# ---- a child that misbehaves: a failed benchmark with the reason, status 1, no rows of it
fake garbage 'echo "this is not a line of the harness"; echo done'
fake status 'echo "1000 0 schedule_ns 5"; echo "tkbench-fake: something broke" >&2; exit 3'
fake unknown 'echo "1000 0 bogus_ns 5"; echo "1000 0 iteration_s 1"; echo done'
fake nan 'echo "1000 0 schedule_ns nan"; echo "1000 0 iteration_s 1"; echo done'
fake short 'echo "1000 0 schedule_ns 5"; echo "1000 0 iteration_s 1"'
fake otherrep 'echo "1000 5 schedule_ns 5"; echo "1000 5 iteration_s 1"; echo done'
fake after 'echo "1000 0 schedule_ns 5"; echo "1000 0 iteration_s 1"; echo done; echo more'
fake signal 'echo "1000 0 schedule_ns 5"; kill -9 $$'
for k in garbage:"unreadable line 1" status:"exited with status 3" unknown:"not a metric of W1_exec" \
         nan:"unreadable line 1" short:"ends before \`done\`" otherrep:"no values for n=1000, repetition 0" \
         after:"output after \`done\` at line 4" signal:"killed by signal 9"; do
  name=${k%%:*} want=${k#*:}
  TKBENCH_HARNESS_JVM=$work/$name "$tkb" run --suite smoke --workloads W1_exec --peers jdk-stpe \
    --out "$work/$name.d" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  ((rc == 1)) || fail "$name: status $rc, not 1"
  grep "jvm harness: " "$work/$name.err" | grep -qF "$want" ||
    { cat "$work/$name.err"; fail "$name: no '$want'"; }
  grep -q "1 failed" "$work/$name.out" || fail "$name: not a failed benchmark"
  ! grep -q '^jdk-stpe,' "$work/$name.d/results.csv" || fail "$name: rows from a failed child"
done
# a measurement the harness does not list is not asked for: nothing to run
TKBENCH_HARNESS_JVM=$work/garbage "$tkb" run --suite smoke --workloads W2_burst --peers jdk-stpe \
  --out "$work/unlisted.d" >/dev/null 2>"$work/unlisted.err"
rc=$?
((rc == 2)) || fail "a measurement the harness does not implement: status $rc, not 2"
# a child that hangs: killed after its silence limit, a failed benchmark
fake hang 'echo "1000 0 schedule_ns 5"; exec sleep 60'
TKBENCH_CHILD_SILENCE_S=2 TKBENCH_HARNESS_JVM=$work/hang timeout 50 "$tkb" run --suite smoke \
  --workloads W1_exec --peers jdk-stpe --out "$work/hang.d" >"$work/hang.out" 2>"$work/hang.err"
rc=$?
((rc == 1)) || fail "hang: status $rc, not 1"
grep -qF "printed nothing for 2 s: killed" "$work/hang.err" || { cat "$work/hang.err"; fail "hang: no message"; }
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
