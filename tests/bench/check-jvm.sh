#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The JVM peers (bench/peers/jvm.c, bench/peers/jvm/): their rows from a real JVM, and a
# clear message, never a crash or a silent zero, when the harness cannot run
# or its child misbehaves. No speed is asserted.
#   check-jvm.sh TKBENCH WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# a run that reaches the JVM: every JVM peer's rows, finite, the main ones positive
out=$work/ok
"$tkb" run --suite smoke --workloads W1_exec,W2_burst,W3,W5 \
  --peers heap,jdk-stpe,jdk-stpe-roc,netty-1ms,netty-100ms --out "$out" >"$work/ok.out" 2>"$work/ok.err"
rc=$?
((rc == 0)) || { tail -n 20 "$work/ok.err"; fail "run with the JVM peers exited $rc"; }
python3 - "$out/results.csv" <<'PY' || fail "JVM rows"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
need = {"W1_exec": ["schedule_ns", "cancel_ns", "churn_ns"], "W2_burst": ["burst_fire_rate_per_s"],
        "W3_latency": ["late_p50_us", "late_p99_us", "process_cpu_pct"],
        "W5_memory": ["bytes_per_timer", "bytes_per_timer_no_handle"]}
for peer in ("jdk-stpe", "jdk-stpe-roc", "netty-1ms", "netty-100ms"):
    mine = [r for r in rows if r["peer"] == peer]
    for r in mine:
        assert math.isfinite(float(r["value"])), r
    for wl, metrics in need.items():
        for m in metrics:
            v = [float(r["value"]) for r in mine if r["workload"] == wl and r["metric"] == m]
            assert len(v) == 1, "%s %s %s: %d rows" % (peer, wl, m, len(v))
            assert v[0] > 0, "%s %s %s = %g" % (peer, wl, m, v[0])
    early = [r for r in mine if r["workload"] == "W3_latency" and r["metric"] == "early_count"]
    assert len(early) == 1, peer + ": no early_count"
print("JVM rows: every peer, every workload")
PY
for p in jdk-stpe netty-1ms; do
  [ -s "$out/hist/W3_latency.$p.hgrm" ] || fail "no W3 histogram of $p"
done
grep -q '^netty-1ms ' "$work/ok.out" || fail "netty-1ms is not in the headline"

# no harness jar: the JVM peers are dropped with the reason, the others run
TKBENCH_JVM_JAR=$work/none.jar "$tkb" run --suite smoke --workloads W1_exec --peers heap,jdk-stpe \
  --out "$work/nojar" >"$work/nojar.out" 2>"$work/nojar.err" || fail "a run without the jar failed"
grep -q "jdk-stpe: the JVM harness jar $work/none.jar is not there" "$work/nojar.err" ||
  { cat "$work/nojar.err"; fail "no message naming the missing jar"; }
grep -q '^heap,W1_exec,' "$work/nojar/results.csv" || fail "heap did not run without the jar"
! grep -q '^jdk-stpe,' "$work/nojar/results.csv" || fail "jdk-stpe has rows without its jar"
TKBENCH_JVM_JAR=$work/none.jar "$tkb" list >"$work/list.out" 2>&1
grep -q '^  netty-1ms .*cannot run: the JVM harness jar' "$work/list.out" || fail "tkbench list hides why"
# only JVM peers, and none can run: nothing to run, status 2
TKBENCH_JVM_JAR=$work/none.jar "$tkb" run --suite smoke --workloads W1_exec --peers jdk-stpe \
  --out "$work/nojar2" >/dev/null 2>"$work/nojar2.err"
rc=$?
((rc == 2)) || fail "only a JVM peer without its jar: status $rc, not 2"
grep -q "nothing to run" "$work/nojar2.err" || fail "no 'nothing to run'"
TKBENCH_JAVA=$work/none "$tkb" run --suite smoke --workloads W1_exec --peers heap,netty-1ms \
  --out "$work/nojava" >/dev/null 2>"$work/nojava.err"
grep -q "netty-1ms: no java to run ($work/none; set TKBENCH_JAVA)" "$work/nojava.err" ||
  fail "no message naming the missing java"

# a child that misbehaves: a failed benchmark with the reason, status 1, no rows of it
fake() { # fake NAME BODY: a "java" that runs BODY
  printf '#!/bin/sh\n%s\n' "$2" >"$work/$1"
  chmod +x "$work/$1"
}
fake garbage 'echo "this is not a line of the harness"; echo done'
fake status 'echo "1000 0 schedule_ns 5"; echo "tkbench-jvm: something broke" >&2; exit 3'
fake unknown 'echo "1000 0 bogus_ns 5"; echo "1000 0 iteration_s 1"; echo done'
fake nan 'echo "1000 0 schedule_ns nan"; echo "1000 0 iteration_s 1"; echo done'
fake short 'echo "1000 0 schedule_ns 5"; echo "1000 0 iteration_s 1"'
fake otherrep 'echo "1000 5 schedule_ns 5"; echo "1000 5 iteration_s 1"; echo done'
for k in garbage:"unreadable line 1" status:"exited with status 3" unknown:"not a metric of W1_exec" \
         nan:"unreadable line 1" short:"ends before \`done\`" otherrep:"no values for n=1000, repetition 0"; do
  name=${k%%:*} want=${k#*:}
  TKBENCH_JAVA=$work/$name "$tkb" run --suite smoke --workloads W1_exec --peers jdk-stpe \
    --out "$work/$name.d" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  ((rc == 1)) || fail "$name: status $rc, not 1"
  grep -qF "$want" "$work/$name.err" || { cat "$work/$name.err"; fail "$name: no '$want'"; }
  grep -q "1 failed" "$work/$name.out" || fail "$name: not a failed benchmark"
  ! grep -q '^jdk-stpe,' "$work/$name.d/results.csv" || fail "$name: rows from a failed child"
done
# a child that hangs: killed after its silence limit, a failed benchmark
fake hang 'echo "1000 0 schedule_ns 5"; exec sleep 60'
TKBENCH_JVM_SILENCE_S=2 TKBENCH_JAVA=$work/hang timeout 50 "$tkb" run --suite smoke \
  --workloads W1_exec --peers jdk-stpe --out "$work/hang.d" >"$work/hang.out" 2>"$work/hang.err"
rc=$?
((rc == 1)) || fail "hang: status $rc, not 1"
grep -qF "printed nothing for 2 s: killed" "$work/hang.err" || { cat "$work/hang.err"; fail "hang: no message"; }
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
