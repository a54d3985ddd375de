#!/bin/sh
# SPDX-License-Identifier: MIT
# timerkit: build the differential engine fuzzer with clang + libFuzzer and
# run it for a bounded time over a scratch copy of fuzz/corpus/.
#
#   fuzz/run.sh [SECONDS]        (default 60)
#
# The fuzzer drives the pure core of every engine in the registry
# (engines/CMakeLists.txt), so it is built by CMake with TIMERKIT_FUZZER=ON:
# the whole library instrumented for coverage with ASan+UBSan, the target
# tk_fuzz_engines linked with libFuzzer. The build directory is kept between
# runs (incremental).
#
# Environment: CC (default clang), TK_FUZZ_BUILD_DIR (default build/fuzz),
# TK_FUZZ_JOBS (parallel workers, default 1), TK_FUZZ_KEEP=1 keeps the
# scratch directory, TK_FUZZ_MERGE=1 merges inputs that add coverage back
# into fuzz/corpus/ (review before committing), JOBS (build jobs, default 2).
# A crash, a mismatch (abort) or a leak exits non-zero; the crashing input is
# copied into fuzz/regressions/ so that fuzz_replay (CTest) keeps replaying it.
set -eu
secs=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cc=${CC:-clang}
build=${TK_FUZZ_BUILD_DIR:-$root/build/fuzz}

mkdir -p "$build"
if ! CC="$cc" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIMERKIT_FUZZER=ON -DTIMERKIT_WERROR=ON \
        -DTIMERKIT_BUILD_TESTS=OFF -DTIMERKIT_BUILD_BENCH=OFF -DTIMERKIT_BUILD_EXAMPLES=OFF \
        >"$build/configure.log" 2>&1 ||
    ! cmake --build "$build" -j "${JOBS:-2}" --target tk_fuzz_engines >"$build/build.log" 2>&1; then
    tail -n 40 "$build/configure.log" "$build/build.log" 2>/dev/null >&2 || true
    echo "fuzz/run.sh: building the fuzzer with $cc failed (see $build)" >&2
    exit 2
fi
fuzzer="$build/fuzz/tk_fuzz_engines"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tk-fuzz.XXXXXX")
[ "${TK_FUZZ_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT INT TERM

mkdir -p "$tmp/corpus" "$tmp/artifacts"
cp "$here"/corpus/* "$tmp/corpus/" 2>/dev/null || true
cp "$here"/regressions/* "$tmp/corpus/" 2>/dev/null || true
count() { find "$1" -type f | wc -l; }
echo "fuzz/run.sh: fuzzing for ${secs}s, seed corpus $(count "$tmp/corpus") files"

jobs=${TK_FUZZ_JOBS:-1}
par=""
[ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"
set +e
# shellcheck disable=SC2086
(cd "$tmp" && "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -max_len=2048 \
    $par -artifact_prefix="$tmp/artifacts/" -print_final_stats=1 "$tmp/corpus") >"$tmp/log" 2>&1
rc=$?
set -e
[ "$jobs" -gt 1 ] && cat "$tmp"/fuzz-*.log >>"$tmp/log" 2>/dev/null
grep -v -e '^INFO: ' -e '^#[0-9]' -e '# Uses: ' -e '^###### ' "$tmp/log" | tail -n 40 >&2 || true
execs=$(grep -E '^stat::number_of_executed_units' "$tmp/log" | awk '{s += $2} END {print s}')
speed=$(grep -E '^stat::average_exec_per_sec' "$tmp/log" | awk '{s += $2} END {print s}')
last=$(grep -E '^#[0-9]+.*cov: ' "$tmp/log" | tail -n 1 | sed -E 's/^.*(cov: .*rss: [0-9]+Mb).*$/\1/')
echo "fuzz/run.sh: ${execs:-?} executions (${speed:-?}/s), corpus grew to $(count "$tmp/corpus") files; last status: ${last:-?}"

found=0
for a in "$tmp"/artifacts/*; do
    [ -f "$a" ] || continue
    found=1
    name=$(basename "$a")
    cp "$a" "$here/regressions/$name"
    echo "fuzz/run.sh: saved $here/regressions/$name" >&2
done
if [ "${TK_FUZZ_MERGE:-0}" = 1 ]; then
    "$fuzzer" -merge=1 "$here/corpus" "$tmp/corpus" >/dev/null 2>&1 || true
fi
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    echo "fuzz/run.sh: FAILED (exit $rc); replay with: fuzz/regress.sh" >&2
    exit 1
fi
echo "fuzz/run.sh: no crash in ${secs}s"
