#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tkbench trace convert / stats (docs/traces.md): a perf sample converted to
# CSV and back through gzip, its summary and figures, and every bad input
# refused with status 2 and a "FILE:LINE: ..." message. Nothing is measured.
# Usage: check-trace.sh TKBENCH DATA_DIR WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; data=${2:?tests/trace/data}; work=${3:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect STATUS TEXT ARGS...: tkbench ARGS exits STATUS and its stderr contains TEXT
expect() {
  local want=$1 text=$2; shift 2
  "$tkb" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $rc != "$want" ]]; then fail "tkbench $* exited $rc, expected $want"; cat "$work/err"; return; fi
  if ! grep -qF -- "$text" "$work/err"; then fail "tkbench $*: stderr lacks '$text':"; cat "$work/err"; return; fi
  echo "ok: tkbench $* -> $rc ($(head -c 150 "$work/err" | tr '\n' ' '))"
}
# expect_out TEXT ARGS...: tkbench ARGS exits 0 and its stdout contains TEXT
expect_out() {
  local text=$1; shift
  "$tkb" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $rc != 0 ]]; then fail "tkbench $* exited $rc"; cat "$work/err"; return; fi
  if ! grep -qF -- "$text" "$work/out"; then fail "tkbench $*: stdout lacks '$text':"; cat "$work/out"; return; fi
  echo "ok: tkbench $* -> 0"
}

# perf text -> CSV -> CSV.gz -> stats
expect_out "25 events, 8 timers" trace convert "$data/tiny.perf.txt" "$work/tiny.csv"
head -n 1 "$work/tiny.csv" | grep -qF "# source: perf script tiny, HZ=250 (found)" || fail "tiny.csv lacks its source line"
grep -qx "t_ns,op,timer,deadline_ns,function,class" "$work/tiny.csv" || fail "tiny.csv lacks its header"
expect_out "tiny.csv (neutral CSV) -> $work/tiny.csv.gz: 25 events" trace convert "$work/tiny.csv" "$work/tiny.csv.gz"
gzip -dc "$work/tiny.csv.gz" | cmp -s - "$work/tiny.csv" || fail "tiny.csv.gz does not hold tiny.csv"
expect_out "12 events, 2 timers" trace convert "$data/tiny.perf.txt" "$work/p.csv" --functions 'process_*'
expect_out "HZ 100 (given)" trace convert "$data/tiny.perf.txt" "$work/h.csv" --hz 100 --class wheel --cpus 0-1
expect_out "events        25: 16 start, 3 cancel, 6 expire" trace stats "$work/tiny.csv.gz" --out "$work/stats"
for f in summary.txt population.dat delays.dat trace.gp population.pdf population.png delay-cdf.pdf delay-cdf.png; do
  [[ -s "$work/stats/$f" ]] || fail "stats did not write $f"
done
grep -qF "1 re-armed before their deadline" "$work/stats/summary.txt" || fail "summary.txt lacks the re-armed count"
grep -qF "and 4 (25.0%) whose deadline passed with no expiry" "$work/stats/summary.txt" || fail "summary.txt lacks the unseen expiries"
expect_out "dropped       3 cancels that were part of an expiry" trace stats "$data/tiny.perf.txt" --out "$work/stats2"
expect_out "events        8: 4 start, 2 cancel, 2 expire" trace stats "$data/tiny.csv" --out "$work/stats3"

# bad input: status 2, FILE:LINE
printf 't_ns,op,timer,deadline_ns\n0,start,a,5\n1,arm,a,\n' >"$work/bad.csv"
expect 2 "$work/bad.csv:3: unknown operation 'arm' (start, cancel or expire)" trace convert "$work/bad.csv" "$work/o.csv"
expect 2 "$work/bad.csv:3: unknown operation 'arm'" trace stats "$work/bad.csv" --out "$work/s"
printf 't_ns,op,timer,deadline_ns\n0,start,a,5\n1,cancel,a' >"$work/cut.csv"
expect 2 "$work/cut.csv:3: the last line has no newline (is the file cut short?)" trace convert "$work/cut.csv" "$work/o.csv"
: >"$work/empty.csv"
expect 2 "$work/empty.csv: empty file" trace convert "$work/empty.csv" "$work/o.csv"
printf ' a 1 [000] 1.000: timer:timer_start: timer=0x1 function=f expires=5\n' >"$work/bad.perf.txt"
expect 2 "$work/bad.perf.txt:1: timer_start without a valid [timeout=N]" trace convert "$work/bad.perf.txt" "$work/o.csv" --hz 250
expect 2 "cannot open: No such file or directory" trace convert "$work/nope.csv" "$work/o.csv"
expect 2 "is neutral CSV: --hz, --functions, --cpus and --class apply to perf script text only" trace convert "$work/tiny.csv" "$work/o.csv" --hz 250
expect 2 "--class: expected wheel, hrtimer or all, got 'both'" trace convert "$data/tiny.perf.txt" "$work/o.csv" --class both
expect 2 "--hz: expected jiffies per second in 1..100000, got '0'" trace convert "$data/tiny.perf.txt" "$work/o.csv" --hz 0
expect 2 "--cpus '2-1': expected a list of CPUs" trace convert "$data/tiny.perf.txt" "$work/o.csv" --cpus 2-1
expect 2 "unknown subcommand 'replay'" trace replay x
expect 2 "trace stats: unknown option '--bogus'" trace stats "$work/tiny.csv" --bogus
expect 2 "usage:" trace convert only-one-argument
[[ ! -e "$work/o.csv" ]] || fail "a refused convert wrote its output"
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
