#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `tkbench advise` end to end (docs/advisor.md): on the CSV trace
# tests/trace/data/tiny.csv and on a synthetic trace it prints the trace's
# shape, a table of candidates and a recommendation naming a registered
# engine with its parameters; a lateness need below 1 ms excludes the 1 ms
# ticks, saying why; a results folder with a W3_latency row of a peer makes
# that peer's lateness "from DIR" and a floor row makes the others modelled
# with the wake-up; bad usage exits with status 2 and a message. Nothing is
# timed: which engine wins is not asserted, only that the advice is well
# formed. perf script text is read too. Usage: check-advise.sh TKBENCH TRACE_DATA_DIR WORKDIR
set -uo pipefail
tkb=${1:?tkbench}; data=${2:?trace data dir}; work=${3:?work dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
need() { grep -qF -- "$2" "$1" || fail "$1 lacks $3 ($2)"; }
lacks() { grep -qF -- "$2" "$1" && fail "$1 has $3 ($2)"; }

# The engines this tkbench has, for "names a registered engine".
engines=$("$tkb" list | awk '/^peers/ {p=1; next} /^default peers/ {p=0} p && $2 == "engine" {print $1}')
[[ -n "$engines" ]] || fail "tkbench list names no engine"

# A recommendation line names a registered engine with its parameters.
check_advice() { # FILE
  local line eng
  line=$(grep -m1 '^  Use ' "$1") || { fail "$1: no recommendation"; return; }
  eng=$(sed -E 's/^  Use ([a-z0-9_-]+)[:@]?.*/\1/' <<<"$line")
  grep -qx -- "$eng" <<<"$engines" || fail "$1: '$eng' is not a registered engine: $line"
  # a ticked engine's spec carries its tick and size parameters
  case "$line" in
  "  Use wheel:"*) grep -qE '^  Use wheel:tick=[0-9]+(ns|us|ms),slots=[0-9]+:' <<<"$line" ||
    fail "$1: a wheel without tick and slots: $line" ;;
  "  Use hwheel:"*) grep -qE '^  Use hwheel:tick=[0-9]+(ns|us|ms),bits=[0-9]+,levels=[0-9]+:' <<<"$line" ||
    fail "$1: an hwheel without tick, bits and levels: $line" ;;
  esac
  need "$1" "ns per event" "the cost in the recommendation"
}

# 1. the CSV trace: shape, table, sources, recommendation
"$tkb" advise "$data/tiny.csv" --reps 2 >"$work/tiny.out" 2>"$work/tiny.err" ||
  { cat "$work/tiny.err"; fail "advise tiny.csv failed"; }
cat "$work/tiny.out"
need "$work/tiny.out" "trace tiny: " "the trace's shape"
need "$work/tiny.out" "delay (deadline - start): p50 " "the delay percentiles"
need "$work/tiny.out" "re-arm an armed timer (modify)" "the share of modifies"
need "$work/tiny.out" "ns/event (range)" "the table's header"
need "$work/tiny.out" "where the figures come from:" "the sources"
for c in "heap " "wheel:tick=1ms,slots=" "hwheel:tick=1ms,bits=" "wheel:tick=100us," "hwheel:tick=100us,"; do
  need "$work/tiny.out" "$c" "the candidate $c"
done
need "$work/tiny.err" "core replays ..." "progress on stderr"
lacks "$work/tiny.out" "core replays ..." "progress on stdout"
check_advice "$work/tiny.out"

# 2. a synthetic trace
"$tkb" advise synth:3000 --reps 1 >"$work/synth.out" 2>"$work/synth.err" ||
  { cat "$work/synth.err"; fail "advise synth:3000 failed"; }
need "$work/synth.out" "trace synth-3000: 3000 events" "the synthetic trace's shape"
check_advice "$work/synth.out"

# 2b. perf script text, read by the same loader as `tkbench trace convert`
"$tkb" advise "$data/tiny.perf.txt" --reps 1 >"$work/perf.out" 2>"$work/perf.err" ||
  { cat "$work/perf.err"; fail "advise tiny.perf.txt failed"; }
need "$work/perf.out" "trace tiny: " "the perf trace's shape"
check_advice "$work/perf.out"
expect2_hz() {
  "$tkb" advise "$data/tiny.perf.txt" --hz 0 >"$work/hz.out" 2>"$work/hz.err"
  [[ $? == 2 ]] || fail "--hz 0 did not exit 2"
  need "$work/hz.err" "--hz: expected jiffies per second" "the --hz message"
}
expect2_hz

# 3. a lateness need under 1 ms: the 1 ms ticks are out, with the reason; the
#    ticks come from the need (at most half of it: 200us, and a tenth, 20us)
"$tkb" advise "$data/tiny.csv" --reps 1 --need lateness=500us >"$work/late.out" 2>"$work/late.err" ||
  { cat "$work/late.err"; fail "advise --need lateness=500us failed"; }
cat "$work/late.out"
for c in "wheel:tick=1ms" "hwheel:tick=1ms"; do
  grep -A1 -E "^- +$c," "$work/late.out" | grep -qF "excluded: p99 lateness >= 1 ms (model>=) > need lateness=500 us" ||
    fail "$c is not excluded by the lateness need, with its reason"
done
need "$work/late.out" "wheel:tick=200us," "a candidate with the need's tick"
grep -qE '^  Use (wheel|hwheel):tick=1ms' "$work/late.out" && fail "advised a 1 ms tick under a 500 us need"
check_advice "$work/late.out"
need "$work/late.out" "need p99 lateness <= 500 us" "the need in the recommendation"

# 4. --results: W3_latency of heap is taken from the folder, the floor's
#    nanosleep p99 models the others; only results.csv is read
dir="$work/results"
mkdir -p "$dir"
cat >"$dir/results.csv" <<'CSV'
peer,workload,n,metric,value,unit,rep
heap,W3_latency,10000,late_p99_us,77,us,0
heap,W3_latency,10000,late_p99_us,75,us,1
heap,W3_latency,10000,late_p50_us,20,us,0
"wheel:tick=1ms,slots=1024",W3_latency,10000,late_p99_us,1100,us,0
floor,floor,1,nanosleep_late_p99_us,60,us,0
CSV
"$tkb" advise "$data/tiny.csv" --reps 1 --results "$dir" >"$work/dir.out" 2>"$work/dir.err" ||
  { cat "$work/dir.err"; fail "advise --results failed"; }
cat "$work/dir.out"
grep -E '^[-0-9]+ +heap ' "$work/dir.out" | grep -qF "76 us (DIR:W3)" ||
  fail "heap's lateness is not the median of its W3_latency rows, from DIR"
grep -E '^[-0-9]+ +hwheel:tick=1ms,' "$work/dir.out" | grep -qF "1.06 ms (model)" ||
  fail "the 1 ms hwheel's lateness is not one tick + the floor's 60 us, modelled"
need "$work/dir.out" "the floor's nanosleep p99 in DIR" "the wake-up's source"
# a lateness need with the folder: the heap's measured 76 us passes 100us; a
# 50 us tick (modelled 50 + 60 us) does not; the wheel refuses a 5 us tick
"$tkb" advise "$data/tiny.csv" --reps 1 --results "$dir" --need lateness=100us --criterion lateness \
  >"$work/dirl.out" 2>"$work/dirl.err" || { cat "$work/dirl.err"; fail "advise --results --need failed"; }
cat "$work/dirl.out"
grep -qE '^[0-9]+ +heap .*76 us \(DIR:W3\)' "$work/dirl.out" || fail "heap (76 us from DIR) is not among the eligible"
grep -A1 -E '^- +wheel:tick=50us,' "$work/dirl.out" | grep -qF "excluded: p99 lateness 110 us (model) > need lateness=100 us" ||
  fail "the 50 us wheel is not excluded by its modelled 110 us"
grep -A1 -E '^- +wheel:tick=5us,' "$work/dirl.out" | grep -qF "excluded: not a valid peer here: " ||
  fail "the 5 us wheel (below its minimum tick) is not excluded with the parser's reason"
check_advice "$work/dirl.out"

# 5. a folder with rows but nothing advise reads: an error; one without results.csv: an error
mkdir -p "$work/useless" "$work/empty"
printf 'peer,workload,n,metric,value,unit,rep\nheap,W1_core,1000,schedule_ns,30,ns,0\n' >"$work/useless/results.csv"
expect2() { # NAME MESSAGE ARGS...
  local name=$1 msg=$2
  shift 2
  "$tkb" advise "$@" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  [[ $rc == 2 ]] || fail "$name: exit status $rc, expected 2 (advise $*)"
  need "$work/$name.err" "$msg" "the message of $name"
}
expect2 useless "none advise can use" "$data/tiny.csv" --results "$work/useless"
expect2 noresults "not a results folder" "$data/tiny.csv" --results "$work/empty"
expect2 nodir "not a folder" "$data/tiny.csv" --results "$work/nowhere"
expect2 badneed "unknown need 'speed'" "$data/tiny.csv" --need speed=3
expect2 baddur "expected a duration with its unit" "$data/tiny.csv" --need lateness=5
expect2 badsize "expected a size" "$data/tiny.csv" --need memory=lots
expect2 badcpu "expected a share of one core" "$data/tiny.csv" --need cpu=-1
expect2 badcrit "expected cost, lateness or memory" "$data/tiny.csv" --criterion speed
expect2 badopt "unknown option '--fast'" "$data/tiny.csv" --fast 1
expect2 notrace "which trace?" --reps 1
expect2 twotraces "one trace at a time" "$data/tiny.csv" "$data/tiny.csv"
expect2 missing "cannot read trace $work/none.csv" "$work/none.csv"
printf 't_ns,op,timer,deadline_ns\n0,start,a,100\n5,bogus,a,0\n' >"$work/bad.csv"
expect2 badtrace "bad.csv:3:" "$work/bad.csv"

# 6. memory and cpu needs are accepted and shown
"$tkb" advise "$data/tiny.csv" --reps 1 --need memory=4KiB --need cpu=50 >"$work/mem.out" 2>"$work/mem.err"
rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "advise --need memory/cpu: exit status $rc"
need "$work/mem.out" "need memory <= 4 KiB" "the memory need"
grep -qE "excluded: memory .* > need memory=4 KiB" "$work/mem.out" || fail "no candidate excluded by the 4 KiB need"

if ((fails > 0)); then
  echo "check-advise: $fails failure(s)"
  exit 1
fi
echo "check-advise: ok"
