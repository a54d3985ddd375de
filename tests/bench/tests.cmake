# The benchmark CLI's tests, included by bench/CMakeLists.txt when tests are
# built (label `bench`: scripts/test.sh runs them in its Release pass). They
# check behaviour and output files; none asserts a speed.
set(TKB_T ${PROJECT_SOURCE_DIR}/tests/bench)
set(TKB_W ${CMAKE_CURRENT_BINARY_DIR}/bench-tests)

# tkbench with a workload and a peer of the test build only (workloads/w9_demo.c,
# test-workloads.h; peers/wakeup.c, test-peers.h)
tkbench_add(tkbench_test ${TKB_T}/workloads/w9_demo.c ${TKB_T}/peers/wakeup.c)
target_include_directories(tkbench_test PRIVATE ${TKB_T})
target_compile_definitions(tkbench_test PRIVATE TKB_TEST_WORKLOADS="test-workloads.h"
  TKB_TEST_PEERS="test-peers.h")

# tkb_replay_exec() on every peer built, with traces made in memory: tkbench's
# sources without its CLI. A dependency of tkbench_test, so that building the
# two tkbench binaries (scripts/test.sh's bench pass) builds it too.
tkbench_add(tkbench_replay_exec_test NO_CLI ${TKB_T}/test-replay-exec.c)
add_dependencies(tkbench_test tkbench_replay_exec_test)

add_test(NAME bench_replay_exec COMMAND tkbench_replay_exec_test)
add_test(NAME bench_smoke COMMAND bash ${TKB_T}/check-smoke.sh $<TARGET_FILE:tkbench> ${TKB_W}/smoke)
add_test(NAME bench_workload_descriptor
  COMMAND bash ${TKB_T}/check-demo.sh $<TARGET_FILE:tkbench_test> ${TKB_W}/demo)
add_test(NAME bench_cli_errors
  COMMAND bash ${TKB_T}/check-cli.sh $<TARGET_FILE:tkbench> ${TKB_W}/cli ${PROJECT_VERSION}
          ${PROJECT_SOURCE_DIR}/tests/trace/data)
add_test(NAME bench_old_folder
  COMMAND bash ${TKB_T}/check-old-folder.sh $<TARGET_FILE:tkbench> ${TKB_T}/old-folder ${TKB_W}/old)
add_test(NAME bench_engines
  COMMAND bash ${TKB_T}/check-engines.sh $<TARGET_FILE:tkbench> ${TKB_W}/engines)
add_test(NAME bench_names_once
  COMMAND python3 ${TKB_T}/check-names-once.py ${PROJECT_SOURCE_DIR} $<TARGET_FILE:tkbench>)
add_test(NAME bench_trace
  COMMAND bash ${TKB_T}/check-trace.sh $<TARGET_FILE:tkbench> ${PROJECT_SOURCE_DIR}/tests/trace/data ${TKB_W}/trace)

# The core-level replay on hand-built traces: tkbench's sources without its
# CLI (the test defines what bench/cli/ would), and the test's main().
tkbench_add(test_replay_core NO_CLI ${TKB_T}/test-replay-core.c)
add_dependencies(tkbench_test test_replay_core)
add_test(NAME bench_replay_core COMMAND test_replay_core)
add_test(NAME bench_replay_cli
  COMMAND bash ${TKB_T}/check-replay.sh $<TARGET_FILE:tkbench> ${TKB_W}/replay)
add_test(NAME bench_advise
  COMMAND bash ${TKB_T}/check-advise.sh $<TARGET_FILE:tkbench> ${PROJECT_SOURCE_DIR}/tests/trace/data ${TKB_W}/advise)
# W4 sees a thread the service runs besides its pool (a peer of the test
# build); W7's producer counts follow the machine, or --n
add_test(NAME bench_idle_threads
  COMMAND bash ${TKB_T}/check-idle.sh $<TARGET_FILE:tkbench_test> ${TKB_W}/idle)
add_test(NAME bench_contention_n
  COMMAND bash ${TKB_T}/check-contention.sh $<TARGET_FILE:tkbench> ${TKB_W}/contention)
# timer slack (issue 28): slack= and os_slack= on a spec, W3's wake-ups, the
# frontier on a short part of the shipped trace
add_test(NAME bench_slack
  COMMAND bash ${TKB_T}/check-slack.sh $<TARGET_FILE:tkbench> ${TKB_W}/slack
          ${PROJECT_SOURCE_DIR}/bench/traces/tcp.csv.xz)
set_tests_properties(bench_replay_exec bench_smoke bench_workload_descriptor bench_cli_errors
  bench_old_folder bench_engines bench_names_once bench_trace bench_replay_core bench_replay_cli
  bench_advise bench_idle_threads bench_contention_n bench_slack PROPERTIES LABELS bench TIMEOUT 300)

# The foreign peers (peers/child.c): every harness this build made, and children
# that misbehave (fakes, so in every build).
add_test(NAME bench_children
  COMMAND bash ${TKB_T}/check-children.sh $<TARGET_FILE:tkbench> ${TKB_W}/children)
set_tests_properties(bench_children PROPERTIES LABELS bench TIMEOUT 400)

# tkbench installed and run away from the source tree (its data under
# share/timerkit, found from its own location).
add_test(NAME bench_install
  COMMAND bash ${TKB_T}/check-install.sh ${PROJECT_BINARY_DIR} ${TKB_W}/install)
set_tests_properties(bench_install PROPERTIES LABELS bench TIMEOUT 300)
