#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite: what `make test` runs and what CI runs.
#
# Passes (each a separate build under build/):
#   default   RelWithDebInfo, heap as the build-time default: every CTest test (with the
#             API reference build, the man pages, the static install consumers and the
#             add_subdirectory embedding)
#   shared    BUILD_SHARED_LIBS: libtimerkit.so.N exports exactly the TK_API functions, its
#             ABI matches tests/abi/timerkit.abi, the install consumers link it, and the
#             suites that use only the public API run against it
#   wheel     the same tree with the wheel as the build-time default: what runs on every engine
#   asan      ASan + UBSan: every CTest test
#   tsan      ThreadSanitizer: every CTest test
#   valgrind  memcheck over the tests named in VALGRIND_TESTS (default: the conformance and
#             queue-contract suites on every engine, faults, bad input, stress, the core model)
#   fuzz      the differential fuzzer for TK_FUZZ_SECONDS (default 60; 0 skips)
#   bench     Release: the benchmark CLI's tests (ctest -L bench): the smoke suite and its
#             figures, a workload of the test build only, bad input, old folders (no speed asserted);
#             it builds every target, so the tests also compile at -O2 under -Werror
#   format    the tree is formatted as .clang-format says
# TK_TEST_PASSES selects passes (default: all, in that order).
# Every build here is a developer build: warnings are errors (TIMERKIT_WERROR).
# Ends with one line "N passed, N failed" summed over every pass.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${JOBS:-2}
passes=${TK_TEST_PASSES:-"format default shared wheel asan tsan valgrind fuzz bench"}
total_pass=0
total_fail=0
failed_passes=()
start=$(date +%s)

log() { printf '\n=== %s (%ds)\n' "$*" "$(( $(date +%s) - start ))"; }

# configure NAME [cmake args...]: configure and build build/NAME
configure() {
  local name=$1; shift
  cmake -S . -B "build/$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIMERKIT_WERROR=ON "$@" \
    >"build/$name.configure.log" 2>&1 &&
    cmake --build "build/$name" -j "$jobs" >"build/$name.build.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then
    tail -n 40 "build/$name.configure.log" "build/$name.build.log" 2>/dev/null
    echo "pass $name: configure/build FAILED"
  fi
  return $rc
}

# ctest_pass NAME [ctest args...]: run CTest in build/NAME and add its counts
ctest_pass() {
  local name=$1; shift
  local out="build/$name.ctest.log"
  (cd "build/$name" && ctest --output-on-failure -j "$jobs" "$@") 2>&1 | tee "$out"
  local line
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$out" | tail -n 1)
  if [ -z "$line" ]; then
    echo "pass $name: CTest printed no summary"
    total_fail=$((total_fail + 1)); failed_passes+=("$name")
    return
  fi
  local failed all
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  all=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
  total_pass=$((total_pass + all - failed))
  total_fail=$((total_fail + failed))
  [ "$failed" -eq 0 ] || failed_passes+=("$name")
}

# count NAME RC: add one pass-level check
count() {
  if [ "$2" -eq 0 ]; then total_pass=$((total_pass + 1)); else
    total_fail=$((total_fail + 1)); failed_passes+=("$1"); fi
}

mkdir -p build
for pass in $passes; do
  case "$pass" in
    default)
      log "default build (heap default engine)"
      if configure default -DTIMERKIT_BUILD_BENCH=OFF; then ctest_pass default; else count default 1; fi ;;
    shared)
      log "shared library: symbols, ABI, consumers, the public-API suites on the .so"
      if configure shared -DBUILD_SHARED_LIBS=ON -DTIMERKIT_BUILD_BENCH=OFF; then
        # the programs that use only the public API link libtimerkit.so (the others link
        # the tree's static parts and ran in the default pass)
        ctest_pass shared -R '^(exported_symbols|abi|abi_check_fails|install_consumer|version|spec|conformance_.*|queue_contract_.*|wheel_timer_.*|example_.*|loop|reliability_bad_input)$'
      else count shared 1; fi ;;
    wheel)
      log "wheel as the build-time default engine"
      if configure wheel -DTIMERKIT_DEFAULT_ENGINE=wheel -DTIMERKIT_BUILD_BENCH=OFF; then
        # what runs on every engine (the suites, the core model, reliability), with the
        # wheel as the default engine
        ctest_pass wheel -R 'conformance|queue_contract|wheel_timer|example|reliability|fuzz_replay|core_model'
      else count wheel 1; fi ;;
    asan)
      log "ASan + UBSan"
      if configure asan -DTIMERKIT_SANITIZE=address -DTIMERKIT_BUILD_BENCH=OFF; then
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
          ctest_pass asan -E 'plots_'
      else count asan 1; fi ;;
    tsan)
      log "ThreadSanitizer"
      if configure tsan -DTIMERKIT_SANITIZE=thread -DTIMERKIT_BUILD_BENCH=OFF; then
        TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest_pass tsan -E 'plots_'
      else count tsan 1; fi ;;
    valgrind)
      log "valgrind memcheck"
      [ -d build/default ] || configure default -DTIMERKIT_BUILD_BENCH=OFF
      if ! command -v valgrind >/dev/null; then echo "valgrind missing"; count valgrind 1; continue; fi
      # the conformance, queue-contract and wheel-timer suites on every registered engine, the
      # fault, bad-input and stress tests (every engine too), the wheel timer's stress, and the
      # core-model test (every engine's core against the model)
      vg_default=""
      for e in $(build/default/tests/conformance/tk_conformance --list-engines); do
        vg_default+="tests/conformance/tk_conformance --engine $e;tests/queue/tk_queue_contract --engine $e;"
        vg_default+="tests/wheel_timer/tk_wheel_timer_test --engine $e;"
      done
      vg_default+="tests/reliability/reliability_bad_input;tests/reliability/reliability_faults;"
      vg_default+="tests/reliability/reliability_stress;tests/wheel_timer/tk_wheel_timer_stress;fuzz/tk_core_model"
      IFS=';' read -r -a vg_cmds <<<"${VALGRIND_TESTS:-$vg_default}"
      for cmd in "${vg_cmds[@]}"; do
        read -r -a argv <<<"$cmd"
        if [ ! -x "build/default/${argv[0]}" ]; then echo "valgrind: build/default/${argv[0]} not built"; count "valgrind:$cmd" 1; continue; fi
        echo "--- valgrind $cmd"
        (cd build/default && TK_VALGRIND=1 valgrind --quiet --error-exitcode=99 --leak-check=full \
          --errors-for-leak-kinds=definite,indirect --track-origins=no "${argv[@]}") >"build/valgrind.$(basename "${argv[0]}").${argv[2]:-x}.log" 2>&1
        rc=$?
        tail -n 5 "build/valgrind.$(basename "${argv[0]}").${argv[2]:-x}.log"
        echo "valgrind $cmd: exit $rc"
        count "valgrind:$cmd" $rc
      done ;;
    fuzz)
      secs=${TK_FUZZ_SECONDS:-60}
      log "differential fuzzing for ${secs}s"
      if [ "$secs" -gt 0 ] && [ -x fuzz/run.sh ]; then
        fuzz/run.sh "$secs"; count fuzz $?
      else echo "fuzz: skipped (TK_FUZZ_SECONDS=$secs or fuzz/run.sh missing)"; fi ;;
    bench)
      log "benchmark CLI tests (Release): smoke suite, figures, the test-only workload, bad input"
      # everything is built, so the tests and examples also compile at -O2 under -Werror
      # (the optimiser finds warnings the other passes' builds do not); only the bench-
      # labelled tests run: the others ran in the passes above
      if cmake -S . -B build/bench-tests -DCMAKE_BUILD_TYPE=Release -DTIMERKIT_BUILD_TESTS=ON -DTIMERKIT_WERROR=ON \
           >build/bench-tests.configure.log 2>&1 &&
         cmake --build build/bench-tests -j "$jobs" \
           >build/bench-tests.build.log 2>&1; then
        ctest_pass bench-tests -L bench
      else
        tail -n 40 build/bench-tests.configure.log build/bench-tests.build.log 2>/dev/null
        echo "pass bench: configure/build FAILED"; count bench 1
      fi ;;
    format)
      log "formatting (clang-format --dry-run --Werror)"
      if command -v clang-format >/dev/null; then
        git ls-files -z '*.c' '*.h' '*.cc' | xargs -0 clang-format --dry-run --Werror 2>&1 | head -n 40
        count format "${PIPESTATUS[1]}"
      else echo "format: clang-format missing"; count format 1; fi ;;
    *) echo "unknown pass '$pass'"; count "$pass" 1 ;;
  esac
done

log "summary"
if [ ${#failed_passes[@]} -gt 0 ]; then echo "failing passes: ${failed_passes[*]}"; fi
echo "timerkit: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
