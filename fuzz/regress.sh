#!/bin/sh
# SPDX-License-Identifier: MIT
# timerkit: replay fuzz/corpus/ and fuzz/regressions/ (or the files and
# directories given) through the core-model check of every registered
# engine's core, built by CMake with gcc and ASan+UBSan, without libFuzzer.
# The same replay runs in CTest as fuzz_replay (built with the project's own
# flags).
#
#   fuzz/regress.sh [FILE|DIR ...]
#
# Environment: CC (default gcc), TK_FUZZ_REPLAY_BUILD_DIR (default
# build/fuzz-replay, kept between runs), JOBS (build jobs, default 2),
# TK_FUZZ_VERBOSE=1 names each input as it starts, TK_FUZZ_TRACE=1 prints
# every operation.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cc=${CC:-gcc}
build=${TK_FUZZ_REPLAY_BUILD_DIR:-$root/build/fuzz-replay}

mkdir -p "$build"
if ! CC="$cc" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIMERKIT_SANITIZE=address \
        -DTIMERKIT_BUILD_TESTS=ON -DTIMERKIT_BUILD_BENCH=OFF -DTIMERKIT_BUILD_EXAMPLES=OFF \
        >"$build/configure.log" 2>&1 ||
    ! cmake --build "$build" -j "${JOBS:-2}" --target tk_fuzz_replay >"$build/build.log" 2>&1; then
    tail -n 40 "$build/configure.log" "$build/build.log" 2>/dev/null >&2 || true
    echo "fuzz/regress.sh: building the replayer with $cc failed (see $build)" >&2
    exit 2
fi
if [ $# -eq 0 ]; then
    set -- "$here/corpus" "$here/regressions"
fi
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$build/fuzz/tk_fuzz_replay" "$@"
