/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the trace parsers (bench/trace/): the neutral CSV and
 * the perf script importer on arbitrary bytes, with the checks of
 * tests/trace/trace-fuzz-one.h (status, FILE:LINE messages, tkt_check(), the
 * CSV round trip); a broken promise aborts. Built with TIMERKIT_FUZZER=ON:
 *   build/fuzz/fuzz/tk_fuzz_trace -max_total_time=60 CORPUS tests/trace/data
 * (tk_trace_mutate, a CTest test, runs the same checks on mutated samples.) */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <stdint.h>
#include <stdlib.h>

#include "trace-fuzz-one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!tkt_fuzz_one((const char *)data, size, NULL))
        abort();
    return 0;
}
