/* SPDX-License-Identifier: MIT */
/* timerkit: the wheel's parameters (tk_engine_wheel()->params): the table,
 * whose ranges and defaults create() checks a config against, and the check
 * of the parameters together.
 *
 * Keys of the wheel's spec: "wheel:tick=1ms,slots=1024,max_pending=100000,
 * spin=150us". tick and slots are always written in the canonical spec:
 * together they say what the wheel is (its granularity and its revolution). */
#include <stddef.h>
#include <stdint.h>

#include "params-internal.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"
#include "wheel-core.h"
#include "wheel-internal.h"

/* Declared with its size in wheel-internal.h: a table of another length
 * does not compile. */
const tk_queue_param tk__wheel_param_table[] = {
    {.key = "tick",
     .type = TK_PARAM_DURATION,
     .flags = TK_PARAM_ALWAYS,
     .offset = offsetof(tk__wheel_params, tick_ns),
     .size = sizeof(int64_t),
     .min = TK__WHEEL_MIN_TICK_NS,
     .max = INT64_MAX,
     .def = TK_NS_PER_MS,
     .help = "tick duration: expiry granularity, lateness bound"},
    {.key = "slots",
     .type = TK_PARAM_COUNT,
     .flags = TK_PARAM_ALWAYS,
     .offset = offsetof(tk__wheel_params, slots),
     .size = sizeof(uint32_t),
     .min = 1,
     .max = (int64_t)TK__WHEEL_MAX_TICKS_PER_WHEEL,
     .def = 512,
     .help = "buckets per revolution, rounded up to a power of two"},
    TK_BLOCKING_PARAMS,
};

int tk__wheel_params_validate(const void *params, char *err, size_t err_len) {
    const tk__wheel_params *p = params;
    uint64_t slots = 1;
    while (slots < p->slots)
        slots <<= 1;
    if ((uint64_t)p->tick_ns > (uint64_t)INT64_MAX / slots) {
        tk__err_printf(err, err_len,
                       "wheel: one revolution, tick=%lldns x slots=%llu, overflows int64 "
                       "nanoseconds; make the tick or the wheel smaller",
                       (long long)p->tick_ns, (unsigned long long)slots);
        return TK_EINVAL;
    }
    return TK_OK;
}
