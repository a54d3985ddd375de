#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CMakePresets.json: the presets the README names exist, and each configures
# (into a temporary directory) with the settings it promises.
#   check-presets.sh SOURCE_DIR
set -uo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src" || exit 1
listed=$(cmake --list-presets 2>&1 | sed -n 's/^ *"\([a-z]*\)".*/\1/p' | tr '\n' ' ')
bad=0
# preset: the cache lines it must produce
declare -A want=(
  [dev]="CMAKE_BUILD_TYPE:STRING=RelWithDebInfo TIMERKIT_WERROR:BOOL=ON TIMERKIT_BUILD_TESTS:BOOL=ON"
  [asan]="TIMERKIT_SANITIZE:STRING=address TIMERKIT_WERROR:BOOL=ON"
  [tsan]="TIMERKIT_SANITIZE:STRING=thread TIMERKIT_WERROR:BOOL=ON"
  [release]="CMAKE_BUILD_TYPE:STRING=Release TIMERKIT_BUILD_TESTS:BOOL=OFF TIMERKIT_BUILD_BENCH:BOOL=OFF"
  [bench]="CMAKE_BUILD_TYPE:STRING=Release TIMERKIT_BUILD_BENCH:BOOL=ON"
)
for p in dev asan tsan release bench; do
  if [[ " $listed " != *" $p "* ]]; then echo "presets: '$p' is not in CMakePresets.json (listed: $listed)"; bad=1; continue; fi
  if ! cmake --preset "$p" -B "$tmp/$p" >"$tmp/$p.log" 2>&1; then
    tail -n 20 "$tmp/$p.log"; echo "presets: '$p' does not configure"; bad=1; continue
  fi
  for line in ${want[$p]}; do
    grep -qx -- "$line" "$tmp/$p/CMakeCache.txt" || { echo "presets: '$p' lacks $line"; bad=1; }
  done
  echo "presets: $p configures"
done
exit $bad
