#!/bin/sh
# timerkit: build the differential engine fuzzer with clang + libFuzzer and
# run it for a bounded time over a scratch copy of fuzz/corpus/.
#
#   fuzz/run.sh [SECONDS]        (default 60)
#
# Environment: CC (default clang), TK_FUZZ_JOBS (parallel workers, default 1),
# TK_FUZZ_KEEP=1 keeps the scratch directory, TK_FUZZ_MERGE=1 merges inputs
# that add coverage back into fuzz/corpus/ (review before committing).
# A crash, a mismatch (abort) or a leak exits non-zero; the crashing input is
# copied into fuzz/regressions/ so that fuzz_replay (CTest) keeps replaying it.
set -eu
secs=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cc=${CC:-clang}
heap_dir=${TK_FUZZ_HEAP_DIR:-$root/engines/heap}
wheel_dir=${TK_FUZZ_WHEEL_DIR:-$root/engines/wheel}
for f in "$heap_dir/heap-core.c" "$wheel_dir/wheel-core.c"; do
    [ -f "$f" ] || { echo "fuzz/run.sh: $f is missing (engine core not landed?)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tk-fuzz.XXXXXX")
[ "${TK_FUZZ_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT INT TERM

"$cc" -std=c11 -g -O1 -Wall -Wextra -Werror \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -DTK_STATIC_DEFINE -I "$root/api" -I "$root/common" -I "$heap_dir" -I "$wheel_dir" \
    "$here/fuzz_engines.c" "$heap_dir/heap-core.c" "$wheel_dir/wheel-core.c" "$root/common/common.c" \
    -pthread -o "$tmp/fuzz_engines"

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
(cd "$tmp" && ./fuzz_engines -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -max_len=1024 \
    $par -artifact_prefix="$tmp/artifacts/" -print_final_stats=1 "$tmp/corpus") >"$tmp/log" 2>&1
rc=$?
set -e
grep -v '^INFO: ' "$tmp/log" | grep -v '^#[0-9]' | tail -n 40 >&2 || true
execs=$(grep -E '^stat::number_of_executed_units' "$tmp/log" | tail -n 1 | awk '{print $2}')
echo "fuzz/run.sh: ${execs:-?} executions, corpus grew to $(count "$tmp/corpus") files"

found=0
for a in "$tmp"/artifacts/*; do
    [ -f "$a" ] || continue
    found=1
    name=$(basename "$a")
    cp "$a" "$here/regressions/$name"
    echo "fuzz/run.sh: saved $here/regressions/$name" >&2
done
if [ "${TK_FUZZ_MERGE:-0}" = 1 ]; then
    "$tmp/fuzz_engines" -merge=1 "$here/corpus" "$tmp/corpus" >/dev/null 2>&1 || true
fi
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    echo "fuzz/run.sh: FAILED (exit $rc); replay with: fuzz/regress.sh" >&2
    exit 1
fi
echo "fuzz/run.sh: no crash in ${secs}s"
