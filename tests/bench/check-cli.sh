#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad input to the tkbench CLI: every case exits with status 2 and a message
# that names what is wrong and lists what is known. Nothing is measured.
# Usage: check-cli.sh TKBENCH WORKDIR VERSION
set -uo pipefail
tkb=${1:?tkbench}; work=${2:?work dir}; version=${3:?version}
rm -rf "$work"; mkdir -p "$work"
fails=0
# the version: the project's, from the library (tk_version_string())
if [[ "$("$tkb" --version)" != "tkbench $version" ]]; then
  echo "FAIL: tkbench --version says '$("$tkb" --version)', the project $version"; fails=$((fails + 1))
else
  echo "ok: tkbench --version -> tkbench $version"
fi
# expect STATUS TEXT ARGS...: tkbench ARGS exits STATUS and its stderr contains TEXT
expect() {
  local want=$1 text=$2; shift 2
  "$tkb" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $rc != "$want" ]]; then
    echo "FAIL: tkbench $* exited $rc, expected $want"; cat "$work/err"; fails=$((fails + 1)); return
  fi
  if ! grep -qF -- "$text" "$work/err"; then
    echo "FAIL: tkbench $*: stderr lacks '$text':"; cat "$work/err"; fails=$((fails + 1)); return
  fi
  echo "ok: tkbench $* -> $rc ($(head -c 150 "$work/err" | tr '\n' ' '))"
}
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
expect 2 "unknown argument '--bogus'" run --bogus --out "$work/x"
expect 2 "nothing to run" run --workloads W1_core --peers floor --out "$work/x"
expect 2 "is not a results folder" plot "$work/does-not-exist"
expect 2 "not a results folder" manifest "$work"
expect 2 "unknown command 'frobnicate'" frobnicate
# an alias and a spec with commas are accepted (nothing runs: list only checks the parse)
"$tkb" list >"$work/list" 2>&1 || { echo "FAIL: tkbench list"; fails=$((fails + 1)); }
for t in W1_core W6_dist_ "heap-spin150us" "wheel:tick=1ms,slots=1024@embedded" "tick"; do
  grep -qF -- "$t" "$work/list" || { echo "FAIL: tkbench list lacks '$t'"; fails=$((fails + 1)); }
done
[[ ! -d "$work/x" ]] || { echo "FAIL: a rejected run created its folder"; fails=$((fails + 1)); }
if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
