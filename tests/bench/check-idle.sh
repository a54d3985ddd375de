#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# W4_idle sees every thread of the service (docs/workloads.md, W4): a peer
# of the test build whose service runs a thread of its own that wakes once a
# second (tests/bench/peers/wakeup.c) shows those wake-ups and that thread,
# in both variants (a started pool with an empty queue, and with one timer an
# hour ahead), beside the heap's. Counts of wake-ups, not speeds.
# Usage: check-idle.sh TKBENCH_TEST WORKDIR
set -uo pipefail
tkb=${1:?tkbench_test}; work=${2:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# the quick suite's window (2.5 s): the helper wakes at least twice in it
out="$work/idle"
"$tkb" run --suite quick --workloads W4 --peers test-wakeup-1s,heap --out "$out" \
  >"$work/run.out" 2>"$work/run.err" || { cat "$work/run.err"; fail "run W4"; }
window=$("$tkb" list | sed -n '/^  W4_idle /,/^  [A-Z]/s/^ *quick: .*; \([0-9.]*\) s$/\1/p')
[[ -n "$window" ]] || fail "tkbench list gives no quick window of W4_idle"
value() { # PEER ROW METRIC: its value in results.csv
  awk -F, -v p="$1" -v w="$2" -v m="$3" '$1 == p && $2 == w && $4 == m { print $5 }' "$out/results.csv"
}
for row in W4_idle_empty W4_idle_hour; do
  for peer in test-wakeup-1s heap; do
    for m in idle_wakeups idle_cpu_ms idle_cpu_process_ms idle_threads; do
      [[ -n "$(value $peer $row $m)" ]] || fail "results.csv lacks $m of $peer in $row"
    done
  done
  wakes=$(value test-wakeup-1s $row idle_wakeups); threads=$(value test-wakeup-1s $row idle_threads)
  # a thread that wakes once a second: at least floor(window) wake-ups in the window
  least=$(python3 -c "import math; print(math.floor(float('${window:-0}')))")
  python3 -c "import sys; sys.exit(0 if float('${wakes:-0}') >= $least else 1)" ||
    fail "$row: test-wakeup-1s has $wakes wake-ups in a ${window} s window, expected at least $least"
  # the helper is one of the threads counted, beside the pool's worker
  python3 -c "import sys; sys.exit(0 if float('${threads:-0}') >= 2 else 1)" ||
    fail "$row: test-wakeup-1s counts $threads threads, expected its worker and its helper"
  echo "ok: $row: test-wakeup-1s $wakes wake-ups, $threads threads in ${window} s; heap $(value heap $row idle_wakeups)"
done
grep -q "wakeups_from_engine_counter" "$out/results.csv" && fail "the old engine-counter flag is still written"
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
