#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tkbench command line. Bad input exits with status 2 and a message that
# names the subcommand and what is wrong (and lists what is known). Every
# subcommand, as `tkbench help` lists them: --help, -h and `tkbench help CMD`
# print its usage, each option of its help is parsed (a missing value or a
# value given to a flag is refused by name), an unknown option is refused, a
# missing argument is refused. Options work as --x=v and --x v, before or after
# the arguments, with the same result (on runs and traces small enough to take
# well under a second). Nothing is timed.
# Usage: check-cli.sh TKBENCH WORKDIR VERSION TRACE_DATA_DIR
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}; version=${3:?version}; data=${4:?trace data dir}
rm -rf "$work"; mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# the version: the project's, from the library (tk_version_string())
if [[ "$("$tkb" --version | head -n 1)" != "tkbench $version" ]]; then
  fail "tkbench --version says '$("$tkb" --version)', the project $version"
else
  echo "ok: tkbench --version -> tkbench $version"
fi
# expect STATUS TEXT ARGS...: tkbench ARGS exits STATUS and its stderr contains TEXT
expect() {
  local want=$1 text=$2; shift 2
  "$tkb" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $rc != "$want" ]]; then
    fail "tkbench $* exited $rc, expected $want"; cat "$work/err"; return
  fi
  if ! grep -qF -- "$text" "$work/err"; then
    fail "tkbench $*: stderr lacks '$text':"; cat "$work/err"; return
  fi
  echo "ok: tkbench $* -> $rc ($(head -c 150 "$work/err" | tr '\n' ' '))"
}
# usage CMD TEXT ARGS...: tkbench ARGS is a usage error of CMD: status 2,
# "tkbench CMD: ...TEXT" and the hint to CMD's help on stderr, nothing on stdout
usage() {
  local cmd=$1 text=$2; shift 2
  "$tkb" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $rc != 2 ]]; then fail "tkbench $* exited $rc, expected 2"; cat "$work/err"; return; fi
  if ! grep "^tkbench $cmd: " "$work/err" | grep -qF -- "$text"; then
    fail "tkbench $*: stderr lacks 'tkbench $cmd: ...$text':"; cat "$work/err"; return
  fi
  grep -qxF -- "(try 'tkbench $cmd --help')" "$work/err" || fail "tkbench $*: no hint to its --help"
  [[ ! -s "$work/out" ]] || fail "tkbench $*: a usage error wrote to stdout"
}

# ---- bad values: the message names what is wrong and what is known
expect 2 "unknown workload 'W0_nope'; known: W1_core" run --workloads W0_nope --out "$work/x"
expect 2 "groups: W1" run --workloads W0_nope --out "$work/x"
expect 2 "unknown peer 'nosuch'; known: engines heap, wheel" run --peers nosuch --out "$work/x"
expect 2 "libuv" run --peers nosuch --out "$work/x"
expect 2 "unknown parameter 'foo'" run --peers wheel:foo=1 --out "$work/x"
expect 2 "known: tick, slots" run --peers wheel:foo=1 --out "$work/x"
expect 2 "tick" run --peers wheel:tick=0 --out "$work/x"
expect 2 "tick" run --peers wheel:tick=5 --out "$work/x"
expect 2 "spin" run --peers heap:spin=-1us --out "$work/x"
expect 2 "libuv takes no parameters" run --peers libuv:tick=1ms --out "$work/x"
expect 2 "unknown mode '@nosuch'" run --peers heap@nosuch --out "$work/x"
expect 2 "only an engine has the mode @embedded" run --peers libuv@embedded --out "$work/x"
expect 2 "unknown suite 'huge'; known: smoke quick full" run --suite huge --out "$work/x"
expect 2 "--n: 'ten' is not a population" run --n ten --out "$work/x"
expect 2 "--reps: expected an integer in 1..1000" run --reps 0 --out "$work/x"
expect 2 "--timer-slack" run --timer-slack -5 --out "$work/x"
expect 2 "nothing to run" run --workloads W1_core --peers floor --out "$work/x"
expect 2 "is not a results folder" plot "$work/does-not-exist"
expect 2 "not a results folder" manifest "$work"
# every form of a bad value of each subcommand that takes values: --x=v and --x v
for form in eq sp; do
  opt() { if [[ $form == eq ]]; then echo "--$1=$2"; else echo "--$1" "$2"; fi; }
  # shellcheck disable=SC2046 # opt's words are meant to split
  {
    usage run "--reps: expected an integer in 1..1000, got '0'" run $(opt reps 0) --out "$work/x"
    usage run "unknown suite 'huge'" run $(opt suite huge) --out "$work/x"
    usage run "--timer-slack: expected nanoseconds" run $(opt timer-slack -5) --out "$work/x"
    usage replay "--speed: expected a factor > 0" replay synth:10 $(opt speed 0) --out "$work/x"
    usage replay "--level: expected core, executor or all, got 'fast'" replay $(opt level fast) synth:10
    usage replay "--step: expected a duration" replay synth:10 $(opt step 5)
    usage advise "--criterion: expected cost, lateness or memory" advise $(opt criterion speed) "$data/tiny.csv"
    usage advise "--need: unknown need 'speed'" advise "$data/tiny.csv" $(opt need speed=3)
    usage "trace convert" "--class: expected wheel, hrtimer or all, got 'both'" \
      trace convert $(opt class both) "$data/tiny.perf.txt" "$work/o.csv"
    usage "trace stats" "--hz: expected jiffies per second in 1..100000, got '0'" \
      trace stats "$data/tiny.perf.txt" $(opt hz 0) --out "$work/x"
  }
done
usage run "unexpected argument 'W1_core'" run W1_core
usage list "unexpected argument 'extra'" list extra
usage plot "one folder at a time" plot "$work" "$work"
usage replay "ambiguous option '--s'" replay --s x synth:10
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "no command given" # no arguments at all
expect 2 "help: unknown command 'frobnicate'" help frobnicate
# an alias and a spec with commas are accepted (nothing runs: list only checks the parse)
"$tkb" list >"$work/list" 2>&1 || fail "tkbench list"
for t in W1_core W6_dist_ "heap-spin150us" "wheel:tick=1ms,slots=1024@embedded" "tick"; do
  grep -qF -- "$t" "$work/list" || fail "tkbench list lacks '$t'"
done

# ---- the subcommands, as the program lists them
"$tkb" help >"$work/help" 2>"$work/help.err" || fail "tkbench help exited $?"
for h in --help -h; do
  "$tkb" $h >"$work/help2" 2>&1 || fail "tkbench $h exited $?"
  cmp -s "$work/help" "$work/help2" || fail "tkbench $h differs from tkbench help"
done
mapfile -t cmds < <(awk -F'  +' '/^commands:$/ {p = 1; next} p && /^$/ {exit} p {print $2}' "$work/help")
((${#cmds[@]} >= 5)) || fail "tkbench help lists ${#cmds[@]} commands: ${cmds[*]}"
echo "tkbench help lists: ${cmds[*]}"
groups=()
for cmd in "${cmds[@]}"; do
  read -ra words <<<"$cmd"
  ((${#words[@]} > 1)) && groups+=("${words[0]}")
  # its help: on stdout, status 0, the same three ways
  "$tkb" "${words[@]}" --help >"$work/h.out" 2>"$work/h.err"
  rc=$?
  [[ $rc == 0 && ! -s "$work/h.err" ]] || { fail "tkbench $cmd --help: status $rc, stderr $(cat "$work/h.err")"; continue; }
  "$tkb" "${words[@]}" -h >"$work/h2.out" 2>&1 || fail "tkbench $cmd -h exited $?"
  cmp -s "$work/h.out" "$work/h2.out" || fail "tkbench $cmd -h differs from --help"
  "$tkb" help "${words[@]}" >"$work/h3.out" 2>&1 || fail "tkbench help $cmd exited $?"
  cmp -s "$work/h.out" "$work/h3.out" || fail "tkbench help $cmd differs from --help"
  [[ $(head -n 1 "$work/h.out") == "usage: tkbench $cmd"* ]] || fail "tkbench $cmd --help does not start with its usage"
  for part in "options" "-h, --help" "example:" "  tkbench $cmd"; do
    grep -qF -- "$part" "$work/h.out" || fail "tkbench $cmd --help lacks '$part'"
  done
  # each option of its help, with a value or without: left without its
  # value, or given one it takes none, it is refused by name (nothing runs)
  mapfile -t opts < <(sed -n 's/^  --\([a-z][-a-z_]*\)\( [^ ]*\)\{0,1\}\( .*\)\{0,1\}$/\1\2/p' "$work/h.out")
  for o in "${opts[@]}"; do
    read -r name arg <<<"$o"
    if [[ -n $arg ]]; then
      usage "$cmd" "--$name needs a value ($arg)" "${words[@]}" "--$name"
    else
      usage "$cmd" "--$name takes no value" "${words[@]}" "--$name=1"
    fi
  done
  usage "$cmd" "unknown option '--no-such-option'" "${words[@]}" --no-such-option
  usage "$cmd" "unknown option '--no-such-option'" "${words[@]}" --no-such-option=1 x
  usage "$cmd" "unknown option '-q'" "${words[@]}" -q
  # a subcommand whose usage line has a required argument refuses to run without one
  synopsis=$(head -n 1 "$work/h.out" | sed -e "s/^usage: tkbench $cmd//" -e 's/\[[^]]*\]//g')
  if grep -q '[A-Z]' <<<"$synopsis"; then
    usage "$cmd" "" "${words[@]}"
  fi
  echo "ok: $cmd: --help (${#opts[@]} options), each option refused without its value, unknown options refused"
done
((${#groups[@]} > 0)) || fail "no subcommand of two words (trace convert, trace stats)"
for g in $(printf '%s\n' "${groups[@]}" | sort -u); do
  "$tkb" "$g" --help >"$work/g.out" 2>&1 || fail "tkbench $g --help exited $?"
  for cmd in "${cmds[@]}"; do
    [[ $cmd == "$g "* ]] || continue
    grep -qF "usage: tkbench $cmd " "$work/g.out" || fail "tkbench $g --help lacks the usage of $cmd"
  done
  expect 2 "tkbench $g: which subcommand?" "$g"
  expect 2 "tkbench $g: unknown subcommand 'nope'" "$g" nope
done
[[ $(head -n 1 "$work/help") == "usage: tkbench "* ]] || fail "tkbench help does not start with usage:"
"$tkb" run --help >"$work/run.help"
for o in suite workloads peers n reps timer-slack trace step out; do
  grep -q -- "^  --$o " "$work/run.help" || fail "tkbench run --help lacks --$o"
done
grep -q -- "_perturb" "$work/run.help" && fail "tkbench run --help shows the hidden --_perturb"
"$tkb" replay --help | grep -q -- "_perturb" && fail "tkbench replay --help shows the hidden --_perturb"

# ---- --x=v and --x v, options before or after the arguments: the same result
# list: its flag
"$tkb" list --names >"$work/names" 2>&1 || fail "tkbench list --names exited $?"
(($(wc -l <"$work/names") >= 5)) || fail "tkbench list --names lists $(wc -l <"$work/names") workloads"
# run: one workload at one size on one peer, one repetition
"$tkb" run --suite=smoke --workloads=W1_core --peers=heap --n=2000 --reps=1 --timer-slack=-1 \
  --out="$work/run-eq" >"$work/run-eq.out" 2>"$work/run-eq.err" || { cat "$work/run-eq.err"; fail "run with --x=v exited $?"; }
"$tkb" run --suite smoke --workloads W1_core --peers heap --n 2000 --reps 1 --timer-slack -1 \
  --out "$work/run-sp" >"$work/run-sp.out" 2>"$work/run-sp.err" || { cat "$work/run-sp.err"; fail "run with --x v exited $?"; }
for d in run-eq run-sp; do
  # W1_core on heap at n 2000 only, one repetition (rep 0)
  awk -F, 'NR > 1 && ($1 != "heap" || $2 != "W1_core" || $3 != 2000 || $7 != 0) {bad = 1} END {exit bad || NR < 2}' \
    "$work/$d/results.csv" || fail "$d/results.csv is not W1_core on heap at n 2000, rep 0: $(head -n 5 "$work/$d/results.csv")"
done
cmp -s <(cut -d, -f1-4 "$work/run-eq/results.csv") <(cut -d, -f1-4 "$work/run-sp/results.csv") ||
  fail "run --x=v and --x v made different rows"
grep -qF -- '--out='"$work/run-eq" "$work/run-eq/metadata.json" || fail "metadata.json does not record the command as typed"
# replay: options after and before the trace
"$tkb" replay synth:300 --peers=heap --level=core --step=1ms --reps=2 --out="$work/rp-eq" \
  >"$work/rp-eq.out" 2>"$work/rp-eq.err" || { cat "$work/rp-eq.err"; fail "replay with --x=v exited $?"; }
"$tkb" replay --peers heap --level core --step 1ms --reps 2 --out "$work/rp-sp" synth:300 \
  >"$work/rp-sp.out" 2>"$work/rp-sp.err" || { cat "$work/rp-sp.err"; fail "replay with --x v exited $?"; }
for d in rp-eq rp-sp; do
  [[ $(grep -c '^heap,replay_core:synth-300,300,start_ns,' "$work/$d/results.csv") == 2 ]] ||
    fail "$d: expected 2 repetitions of heap's start_ns"
  grep -qv '^heap,\|^peer,' "$work/$d/results.csv" && fail "$d: a peer other than heap ran"
done
cmp -s <(cut -d, -f1-4 "$work/rp-eq/results.csv") <(cut -d, -f1-4 "$work/rp-sp/results.csv") ||
  fail "replay --x=v and --x v made different rows"
# advise: options before and after the trace
"$tkb" advise --reps=1 --criterion=memory --need=lateness=2ms "$data/tiny.csv" >"$work/adv-eq.out" 2>"$work/adv-eq.err" ||
  { cat "$work/adv-eq.err"; fail "advise with --x=v exited $?"; }
"$tkb" advise "$data/tiny.csv" --reps 1 --criterion memory --need lateness=2ms >"$work/adv-sp.out" 2>"$work/adv-sp.err" ||
  { cat "$work/adv-sp.err"; fail "advise with --x v exited $?"; }
for f in adv-eq adv-sp; do
  grep -qF "criterion: memory" "$work/$f.out" || fail "$f: the criterion is not memory"
  grep -qF "need p99 lateness <= 2 ms" "$work/$f.out" || fail "$f: the need lateness=2ms is not there"
done
# compare: --out's value is the output folder, not a folder to compare
usage compare "'$work/no-a' is not a results folder" compare --out="$work/cmp" "$work/no-a" "$work/no-b"
usage compare "'$work/no-a' is not a results folder" compare --out "$work/cmp" "$work/no-a" "$work/no-b"
usage compare "'$work/no-a' is not a results folder" compare "$work/no-a" --out "$work/cmp" "$work/no-b"
# manifest: the flag before or after the folder
expect 2 "exists already (--force replaces it)" manifest "$work/run-eq"
"$tkb" manifest "$work/run-eq" --force >/dev/null 2>"$work/m.err" || { cat "$work/m.err"; fail "manifest DIR --force exited $?"; }
"$tkb" manifest --force "$work/run-sp" >/dev/null 2>"$work/m.err" || { cat "$work/m.err"; fail "manifest --force DIR exited $?"; }
# trace convert and trace stats
"$tkb" trace convert --hz=100 --class=wheel --cpus=0-1 "$data/tiny.perf.txt" "$work/c-eq.csv" >"$work/c-eq.out" 2>&1 ||
  { cat "$work/c-eq.out"; fail "trace convert with --x=v exited $?"; }
"$tkb" trace convert "$data/tiny.perf.txt" --hz 100 "$work/c-sp.csv" --class wheel --cpus 0-1 >"$work/c-sp.out" 2>&1 ||
  { cat "$work/c-sp.out"; fail "trace convert with --x v exited $?"; }
grep -qF "HZ 100 (given)" "$work/c-eq.out" || fail "trace convert --hz=100: HZ not given"
cmp -s "$work/c-eq.csv" "$work/c-sp.csv" || fail "trace convert --x=v and --x v wrote different traces"
"$tkb" trace stats --out="$work/s-eq" "$data/tiny.csv" >"$work/s-eq.out" 2>&1 || { cat "$work/s-eq.out"; fail "trace stats --out=DIR exited $?"; }
"$tkb" trace stats "$data/tiny.csv" --out "$work/s-sp" >"$work/s-sp.out" 2>&1 || { cat "$work/s-sp.out"; fail "trace stats --out DIR exited $?"; }
cmp -s "$work/s-eq/summary.txt" "$work/s-sp/summary.txt" || fail "trace stats --out=DIR and --out DIR wrote different summaries"
# `--` ends the options
usage replay "which trace?" replay --peers heap --
expect 2 "cannot read" replay --reps 1 --out "$work/x" -- "$work/--no-such-trace"

[[ ! -d "$work/x" ]] || fail "a rejected run created its folder"
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
