#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the built tree (static or shared, whichever BUILD_DIR holds) into a
# temporary prefix, checks what was installed, then builds and runs, against
# that prefix only, what lives outside the tree:
#   - a consumer project, with find_package(timerkit) and with pkg-config's
#     imported target (tests/install/consumer);
#   - the same program compiled by hand with `pkg-config --cflags --libs`
#     (`--static` too for a static install: Libs.private);
#   - the example engine (examples/engine), with find_package(timerkit), which
#     registers its engine and runs the test kit's suites on it (when the
#     build has the test kit).
#   check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
prefix=$tmp/prefix
libdir=$(dirname "$(find "$prefix" -name timerkit.pc -path '*/pkgconfig/*' | head -n 1)")
libdir=${libdir%/pkgconfig}
[ -d "$libdir" ] || fail "no timerkit.pc installed"

# What a package holds: one library (and the test kit), the headers, the
# CMake package, the .pc file, the license.
if [ -e "$libdir/libtimerkit.so" ]; then kind=shared; else kind=static; fi
libs=$(cd "$libdir" && ls | grep -E '^lib' | sort | tr '\n' ' ')
case "$kind" in
  shared) want=('libtimerkit\.so' 'libtimerkit\.so\.[0-9]+' 'libtimerkit\.so\.[0-9]+\.[0-9]+\.[0-9]+') ;;
  static) want=('libtimerkit\.a') ;;
esac
# each file is one of those wanted (or the test kit), and each wanted one is there
for f in $libs; do
  ok=0
  for w in "${want[@]}" 'libtimerkit_testkit\.a'; do [[ "$f" =~ ^$w$ ]] && ok=1; done
  [ $ok -eq 1 ] || fail "$kind install: $f in $libdir is not part of a $kind package (found: $libs)"
done
for w in "${want[@]}"; do
  found=0
  for f in $libs; do [[ "$f" =~ ^$w$ ]] && found=1; done
  [ $found -eq 1 ] || fail "$kind install: nothing in $libdir matches $w (found: $libs)"
done
for f in include/timerkit.h include/timerkit/version.h share/licenses/timerkit/LICENSE; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
if [ $kind = shared ]; then
  soname=$(readelf -d "$libdir/libtimerkit.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
  [ -n "$soname" ] && [ -e "$libdir/$soname" ] || fail "libtimerkit.so has no SONAME, or $soname is not installed"
fi

export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# a shared consumer finds the library at run time through this only
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cmake -S "$src/tests/install/consumer" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/build" >/dev/null
"$tmp/build/consumer_cmake"
"$tmp/build/consumer_pkgconfig"
cc -std=c11 -o "$tmp/consumer_cc" "$src/tests/install/consumer/main.c" \
  $(pkg-config --cflags timerkit) $(pkg-config --libs timerkit)
"$tmp/consumer_cc" >/dev/null
if [ $kind = static ]; then
  pkg-config --static --libs timerkit | grep -q -- '-pthread' || fail "pkg-config --static --libs lacks -pthread"
  cc -std=c11 -o "$tmp/consumer_cc_static" "$src/tests/install/consumer/main.c" \
    $(pkg-config --cflags timerkit) $(pkg-config --static --libs timerkit)
  "$tmp/consumer_cc_static" >/dev/null
else
  for b in consumer_cmake consumer_pkgconfig; do
    readelf -d "$tmp/build/$b" | grep -q "NEEDED.*\[$soname\]" || fail "$b does not load $soname"
  done
fi
echo "install ($kind): find_package, pkg-config and plain cc consumers built and ran"

if [ -f "$prefix/include/timerkit/testkit.h" ]; then
  cmake -S "$src/examples/engine" -B "$tmp/engine" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$tmp/engine" >/dev/null
  (cd "$tmp/engine" && ctest --output-on-failure)
  echo "install ($kind): the example engine, built outside the tree, passed the test kit's suites"
else
  echo "install ($kind): no test kit in this build (tests off): the example engine was not built"
fi
