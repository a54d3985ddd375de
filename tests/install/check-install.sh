#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the built tree into a temporary prefix, then builds and runs, against
# that prefix only, what lives outside the tree:
#   - a consumer project, with find_package(timerkit) and with pkg-config;
#   - the example engine (examples/engine), with find_package(timerkit), which
#     registers its engine and runs the test kit's suites on it.
#   check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/$(gcc -dumpmachine)/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cmake -S "$src/tests/install/consumer" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/build" >/dev/null
"$tmp/build/consumer_cmake"
"$tmp/build/consumer_pkgconfig"
echo "install: find_package and pkg-config consumers built and ran"

cmake -S "$src/examples/engine" -B "$tmp/engine" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/engine" >/dev/null
(cd "$tmp/engine" && ctest --output-on-failure)
echo "install: the example engine, built outside the tree, passed the test kit's suites"
