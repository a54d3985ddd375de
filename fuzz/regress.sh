#!/bin/sh
# timerkit: replay fuzz/corpus/ and fuzz/regressions/ (or the files and
# directories given) through the differential engine check, built with gcc
# and ASan+UBSan, without libFuzzer. The same check runs in CTest as
# fuzz_replay (built with the project's own flags).
#
#   fuzz/regress.sh [FILE|DIR ...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cc=${CC:-gcc}
heap_dir=${TK_FUZZ_HEAP_DIR:-$root/engines/heap}
wheel_dir=${TK_FUZZ_WHEEL_DIR:-$root/engines/wheel}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tk-replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$cc" -std=c11 -g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all \
    -DTK_FUZZ_STANDALONE -DTK_STATIC_DEFINE -I "$root/api" -I "$root/common" -I "$heap_dir" -I "$wheel_dir" \
    "$here/fuzz_engines.c" "$heap_dir/heap-core.c" "$wheel_dir/wheel-core.c" "$root/common/common.c" \
    -pthread -o "$tmp/fuzz_replay"
if [ $# -eq 0 ]; then
    set -- "$here/corpus" "$here/regressions"
fi
"$tmp/fuzz_replay" "$@"
