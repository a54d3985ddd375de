#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timerkit embedded in another project's build (tests/install/embed), with
# nothing but a C compiler:
#   - no C++ compiler: CMAKE_CXX_COMPILER points nowhere, so enabling C++ fails;
#   - no pkg-config and so no cmocka or Google Benchmark lookup;
#   - TIMERKIT_WERROR=ON (a developer's setting) must not reach the parent's
#     own targets: tests/install/embed/loose.c would fail under it;
#   - no tests, benchmarks or examples of timerkit are defined (ctest lists none);
#   - the parent's cache keeps its own build type and gains no BUILD_SHARED_LIBS.
# Then the parent's program runs a task on every engine.
#   check-embed.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "embed: $*" >&2; exit 1; }

cmake -S "$src/tests/install/embed" -B "$tmp/b" -DTIMERKIT_SOURCE_DIR="$src" \
  -DCMAKE_CXX_COMPILER=/nonexistent/c++ -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
  -DTIMERKIT_WERROR=ON >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; fail "configure failed"; }
cmake --build "$tmp/b" -j 2 >"$tmp/build.log" 2>&1 || { tail -n 30 "$tmp/build.log"; fail "build failed"; }
grep -q 'CMAKE_CXX_COMPILER_LOADED\|The CXX compiler identification' "$tmp/configure.log" && fail "C++ was enabled"
n=$(cd "$tmp/b" && ctest -N | sed -n 's/^Total Tests: //p')
[ "$n" = 0 ] || fail "timerkit defined $n tests in the parent's build"
for t in tk_hello tkbench tk_conformance; do
  if grep -q "^$t:" <(cd "$tmp/b" && cmake --build . --target help | sed 's/^\.\.\. //;s/$/:/'); then
    fail "target $t is defined in the parent's build"
  fi
done
grep -q '^CMAKE_BUILD_TYPE:STRING=$' "$tmp/b/CMakeCache.txt" || fail "the parent's CMAKE_BUILD_TYPE was set by timerkit"
grep -q '^BUILD_SHARED_LIBS:' "$tmp/b/CMakeCache.txt" && fail "timerkit added BUILD_SHARED_LIBS to the parent's cache"
"$tmp/b/embed_consumer" >/dev/null
echo "embed: timerkit built inside another project with only a C compiler; nothing leaked; the consumer ran"
