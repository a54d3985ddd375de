#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages timerkit needs, if any is missing.
#   scripts/install-deps.sh [test|bench|docs|all]   (default: all)
# Runs apt-get as root (or through sudo when available). Prints what it
# installs; does nothing when everything is present.
set -euo pipefail

what=${1:-all}
base=(build-essential cmake pkg-config git clang-format)
test_pkgs=(libcmocka-dev valgrind clang libclang-rt-14-dev gnuplot-nox libxml2-utils abigail-tools)
# docs: the API reference (doxygen) and the man pages' check (groff)
docs_pkgs=(doxygen groff-base)
# bench: the in-process peers' libraries (libuv, libevent, libev, Asio), and the foreign
# peers' toolchains (docs/child-protocol.md): the JVM peers (jdk-stpe, netty-1ms...) need a
# JDK 17 and Netty's jars, go-timers Go, tokio Rust with Debian's crate of Tokio
bench_pkgs=(libbenchmark-dev libjansson-dev libuv1-dev libevent-dev libev-dev libasio-dev
            gnuplot-nox fonts-dejavu-core poppler-utils python3
            openjdk-17-jdk-headless libnetty-java golang-go cargo rustc librust-tokio-dev)

case "$what" in
  test) pkgs=("${base[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}" "${docs_pkgs[@]}") ;;
  bench) pkgs=("${base[@]}" "${bench_pkgs[@]}") ;;
  docs) pkgs=("${base[@]}" "${docs_pkgs[@]}") ;;
  all) pkgs=("${base[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}" "${docs_pkgs[@]}") ;;
  *) echo "usage: $0 [test|bench|docs|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps: missing packages (${missing[*]}) and not root; install them with apt-get" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done" >&2
