#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tkbench installed (cmake --install) works away from its source tree: it
# finds its renderer and the suites' traces under <prefix>/share/timerkit,
# from its own location, and draws with them; its man page is installed.
#   check-install.sh BUILD_DIR WORK_DIR
set -uo pipefail
build=$1 work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
prefix=$work/prefix
fail() { echo "bench install: $*"; exit 1; }
cmake --install "$build" --prefix "$prefix" >/dev/null || fail "cmake --install failed"
tkb=$prefix/bin/tkbench
data=$(cd "$prefix/share/timerkit" 2>/dev/null && pwd -P) || fail "no share/timerkit installed"
for f in bin/tkbench share/timerkit/plots/render.py share/timerkit/plots/style.gp \
         share/timerkit/plots/tkplot/cli.py share/timerkit/bench/traces/tcp.csv.xz \
         share/man/man1/tkbench.1 share/man/man3/timerkit.3; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
# it says where its data is: the installed tree, not the source tree
line=$("$tkb" --version | sed -n 2p)
[ "$line" = "data: $data" ] || fail "installed tkbench reads its data from '${line#data: }', not $data"
# TKBENCH_DATA_DIR names another
line=$(TKBENCH_DATA_DIR=/elsewhere "$tkb" --version | sed -n 2p)
[ "$line" = "data: /elsewhere" ] || fail "TKBENCH_DATA_DIR ignored: $line"

# the trace figures, with the installed style
"$tkb" trace stats "$data/bench/traces/idle.csv.xz" --out "$work/stats" >"$work/stats.log" 2>&1 ||
  { cat "$work/stats.log"; fail "trace stats failed"; }
grep -q "STYLE = '$data/plots/style.gp'" "$work/stats/trace.gp" || fail "trace.gp does not load the installed style"
[ -s "$work/stats/population.png" ] || fail "trace stats drew no figure"

# a tiny run, rendered by the installed renderer
"$tkb" run --suite smoke --workloads W1_core --peers heap --n 2000 --reps 1 --out "$work/run" \
  >"$work/run.log" 2>&1 || { tail -n 20 "$work/run.log"; fail "run failed"; }
"$tkb" plot "$work/run" >"$work/plot.log" 2>&1 || { tail -n 20 "$work/plot.log"; fail "plot failed"; }
[ -s "$work/run/report.md" ] || fail "no report.md: the installed renderer did not run"
ls "$work/run/figures/"*.png >/dev/null 2>&1 || fail "no figure drawn"
# the foreign peers' harnesses this build made: installed under share/timerkit/harness,
# and the installed tkbench runs them from there
for h in "$build"/bench/*/tkbench-*; do
  [ -f "$h" ] && [ -x "$h" ] || continue
  name=${h##*/tkbench-}
  [ -x "$data/harness/tkbench-$name" ] || fail "share/timerkit/harness/tkbench-$name is not installed"
done
if [ -x "$data/harness/tkbench-jvm" ]; then
  [ -s "$data/harness/tkbench-jvm.jar" ] || fail "the JVM harness's jar is not installed beside it"
  "$tkb" run --suite smoke --workloads W1_exec --peers jdk-stpe --out "$work/jvm" \
    >"$work/jvm.log" 2>&1 || { tail -n 20 "$work/jvm.log"; fail "JVM peer run failed"; }
  grep -q '^jdk-stpe,W1_exec,1000,schedule_ns,' "$work/jvm/results.csv" || fail "no jdk-stpe row"
  grep -q "\"program\": \"$data/harness/tkbench-jvm\"" "$work/jvm/metadata.json" ||
    fail "the installed tkbench does not run the installed harness"
fi
echo "bench install: tkbench runs from $prefix with its data in $data (renderer, style, traces, man page)"
