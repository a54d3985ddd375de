#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ABI of the shared library against the committed baseline (libabigail).
#
#   check-abi.sh LIBRARY BASELINE SOURCE_DIR BUILD_DIR            compare (the `abi` test)
#   check-abi.sh --write LIBRARY BASELINE SOURCE_DIR BUILD_DIR    write the baseline
#
# Only the public headers' types count (api/timerkit/ and the generated
# timerkit/version.h): a change to the layout of tk_timer, tk_node, the
# options or any other public struct, a removed or changed function, or a new
# one, makes the comparison differ, and the test fails until the change is
# made deliberate, in the same commit:
#   - an incompatible change (abidiff's INCOMPATIBLE bit): bump TIMERKIT_SOVERSION
#     in CMakeLists.txt, then write the baseline again;
#   - a compatible one (an added function): write the baseline again.
# Writing it: make abi-baseline (tests/abi/README.md).
set -uo pipefail
write=0
if [ "${1:-}" = "--write" ]; then write=1; shift; fi
if [ $# -ne 4 ]; then
  echo "usage: check-abi.sh [--write] LIBRARY BASELINE SOURCE_DIR BUILD_DIR" >&2; exit 2
fi
lib=$1 baseline=$2 src=$3 build=$4
for tool in abidw abidiff; do
  if ! command -v "$tool" >/dev/null; then
    echo "check-abi: $tool is missing: install Debian's abigail-tools (scripts/install-deps.sh test)" >&2
    exit 1
  fi
done
if [ ! -f "$lib" ]; then echo "check-abi: no library at $lib" >&2; exit 1; fi
if ! readelf -S "$lib" | grep '\.debug_info' >/dev/null; then
  echo "check-abi: $lib has no debug information: build it with -g (RelWithDebInfo or Debug)" >&2
  exit 1
fi
if [ $write -eq 1 ]; then
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  abidw --headers-dir "$src/api/timerkit" --headers-dir "$build/generated-include/timerkit" \
    --drop-private-types --no-show-locs --no-corpus-path \
    --out-file "$tmp" "$lib" || { echo "check-abi: abidw failed" >&2; exit 1; }
  # no paths of this machine in a committed file
  sed -e "s|$src/||g" -e "s|$build|build|g" "$tmp" >"$baseline"
  echo "check-abi: wrote $baseline ($(grep -c '<elf-symbol ' "$baseline") symbols, $(grep -o "soname='[^']*'" "$baseline"))"
  exit 0
fi

if [ ! -f "$baseline" ]; then echo "check-abi: no baseline at $baseline (make abi-baseline)" >&2; exit 1; fi
# The baseline holds the public types only (--drop-private-types above); the
# types it declares without defining (tk_queue, tk_executor) may be defined
# in the library's debug information, which abidiff's default suppressions
# count as harmless, so an internal struct can change freely.
errs=$(mktemp)
report=$(abidiff --no-show-locs "$baseline" "$lib" 2>"$errs")
rc=$?
echo "$report"
# abidiff reads a baseline it cannot parse as an empty one, and may then say
# nothing and exit 0: any message on stderr, or no summary, is a failure
if [ -s "$errs" ] || ! grep -q 'Functions changes summary' <<<"$report"; then
  cat "$errs"; rm -f "$errs"
  echo "check-abi: abidiff could not compare $baseline with $(basename "$lib") (status $rc)"
  exit 1
fi
rm -f "$errs"
want_soname=$(grep -o "soname='[^']*'" "$baseline" | head -n 1)
have_soname="soname='$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')'"
if [ $rc -eq 0 ]; then
  if [ "$want_soname" != "$have_soname" ]; then
    echo "check-abi: the ABI matches the baseline but the SONAME moved ($want_soname -> $have_soname): write the baseline again (make abi-baseline)"
    exit 1
  fi
  echo "check-abi: the ABI of $(basename "$lib") ($have_soname) matches $baseline"
  exit 0
fi
if [ $((rc & 3)) -ne 0 ]; then echo "check-abi: abidiff failed (status $rc)"; exit 1; fi
# Only additions (new functions or variables, nothing removed or changed)
# keep old binaries working; anything else breaks them.
additive=0
if grep -Eq 'Functions changes summary: 0 Removed, 0 Changed' <<<"$report" &&
   grep -Eq 'Variables changes summary: 0 Removed, 0 Changed' <<<"$report" &&
   [ $((rc & 8)) -eq 0 ]; then additive=1; fi
if [ $additive -eq 1 ]; then
  echo "check-abi: the ABI grew (above), compatibly: write the baseline again (make abi-baseline) in the same commit"
elif [ "$want_soname" = "$have_soname" ]; then
  echo "check-abi: an INCOMPATIBLE ABI change (above) under the same $have_soname: bump TIMERKIT_SOVERSION in CMakeLists.txt and write the baseline again (make abi-baseline), in the same commit"
else
  echo "check-abi: an incompatible ABI change with the SOVERSION bumped ($want_soname -> $have_soname): write the baseline again (make abi-baseline)"
fi
exit 1
