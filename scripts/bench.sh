#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: build in Release, run a benchmark suite, render figures and
# the report, and print where they are.
#   scripts/bench.sh [quick|full|smoke] [RESULTS_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
suite=${1:-quick}
out=${2:-results/$(date -u +%Y%m%d-%H%M%S)-$suite}
jobs=${JOBS:-2}

cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DTIMERKIT_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$jobs" --target tkbench >/dev/null
mkdir -p "$(dirname "$out")"
build/release/bench/tkbench run --suite "$suite" --out "$out"
build/release/bench/tkbench plot "$out"
echo
echo "results:  $out/results.csv"
echo "report:   $out/report.md"
echo "figures:  $out/figures/"
