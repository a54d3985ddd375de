# The Tokio harness against the child protocol (docs/workloads.md, "tokio"), at
# tiny sizes (a few seconds in all): cmake -DBIN=<tkbench-tokio> -P check.cmake.
# Checks --describe, that bad arguments exit 2, and that every measurement
# prints, for each (N, REP), `N REP KEY VALUE` lines with its metric names and
# iteration_s, then `done`, and exits 0.
if(NOT BIN)
  message(FATAL_ERROR "usage: cmake -DBIN=<tkbench-tokio> -P check.cmake")
endif()

execute_process(COMMAND ${BIN} --describe RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^runtime tokio [0-9.]+, rustc [0-9.]+[^\n]*\nmeasurements ops burst latency memory idle-empty idle-hour\n$")
  message(FATAL_ERROR "--describe: status ${rc}, output '${out}'")
endif()

foreach(bad "tokio;ops;1;0;1;0" "go-timers;ops;1;0;1;0;100" "tokio;nope;1;0;1;0;100"
            "tokio;ops;0;0;1;0;100" "tokio;ops;1;0;1;0;0" "tokio;latency;1;0;1;0;50")
  execute_process(COMMAND ${BIN} ${bad} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR err STREQUAL "")
    message(FATAL_ERROR "'${bad}': status ${rc} (want 2 and a message), stderr '${err}'")
  endif()
endforeach()

# measurement | REPS WARMUPS COUNT SECONDS | N[,N...] | the keys every (N, REP) prints
set(cases
  "ops|1 1 200 0|100,300|schedule_ns churn_ns cancel_ns"
  "burst|2 0 1 0|1000|burst_fire_rate_per_s burst_drain_rate_per_s"
  "latency|1 1 1 0.1|50|late_ns process_cpu_pct"
  "memory|1 0 1 0|1000|bytes_per_timer rss_after_cancel_bytes bytes_per_timer_no_handle"
  "idle-empty|1 0 1 0.05|0|idle_wakeups idle_cpu_ms idle_cpu_process_ms idle_threads"
  "idle-hour|1 0 1 0.05|0|idle_wakeups idle_cpu_ms idle_cpu_process_ms idle_threads")
foreach(c ${cases})
  string(REPLACE "|" ";" parts "${c}")
  list(GET parts 0 m)
  list(GET parts 1 args)
  list(GET parts 2 sizes)
  list(GET parts 3 keys)
  separate_arguments(args UNIX_COMMAND "${args}")
  separate_arguments(keys UNIX_COMMAND "${keys}")
  list(GET args 0 reps)
  execute_process(COMMAND ${BIN} tokio ${m} ${args} ${sizes}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${m}: status ${rc}: ${err}")
  endif()
  if(NOT out MATCHES "\ndone\n$")
    message(FATAL_ERROR "${m}: the output does not end with `done`: '${out}'")
  endif()
  string(REGEX REPLACE "done\n$" "" body "${out}")
  string(REPLACE "\n" ";" lines "${body}")
  foreach(line ${lines})
    if(NOT line MATCHES "^[0-9]+ [0-9]+ [a-z_0-9]+ -?[0-9]+(\\.[0-9]+)?$")
      message(FATAL_ERROR "${m}: not an `N REP KEY VALUE` line: '${line}'")
    endif()
  endforeach()
  string(REPLACE "," ";" sizel "${sizes}")
  math(EXPR last "${reps} - 1")
  foreach(n ${sizel})
    foreach(rep RANGE ${last})
      foreach(k iteration_s ${keys})
        if(NOT out MATCHES "(^|\n)${n} ${rep} ${k} ")
          message(FATAL_ERROR "${m}: no ${k} for n=${n}, repetition ${rep}:\n${out}")
        endif()
      endforeach()
    endforeach()
  endforeach()
  message(STATUS "tkbench-tokio ${m}: ok")
endforeach()
