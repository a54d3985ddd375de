/* SPDX-License-Identifier: MIT */
/* timerkit: the hierarchical timing wheel engine (tk_engine_hwheel()): the
 * cascading wheel of hwheel-core.c as a pure core (tk_core_ops) on the
 * generic blocking adapter (adapter/blocking.c), and its parameters.
 *
 * Keys of its spec: "hwheel:tick=1ms,bits=6,levels=6,max_pending=0,spin=0ns".
 * tick, bits and levels are always written in the canonical spec: together
 * they say what the wheel is (its grid, its slots a level, its span
 * tick x 2^(bits x levels)).
 *
 * The core is ticked: a node is due from the first tick of the grid laid
 * from the queue's creation at or after its deadline, so it leaves at most
 * one tick late (plus the adapter's wake-up latency) and never early, in
 * exact (deadline, seq) order. insert and remove are O(1); the adapter
 * sleeps until the core's next() instant, which is never an empty tick. */
#include <stddef.h>
#include <stdint.h>

#include "hwheel-core.h"
#include "params-internal.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

static const tk_queue_param hwheel_table[] = {
    {.key = "tick",
     .type = TK_PARAM_DURATION,
     .flags = TK_PARAM_ALWAYS,
     .offset = offsetof(tk__hwheel_params, tick_ns),
     .size = sizeof(int64_t),
     .min = 1,
     .max = INT64_MAX,
     .def = TK__HWHEEL_DEFAULT_TICK_NS,
     .help = "tick duration: expiry granularity, lateness bound"},
    {.key = "bits",
     .type = TK_PARAM_COUNT,
     .flags = TK_PARAM_ALWAYS,
     .offset = offsetof(tk__hwheel_params, bits),
     .size = sizeof(uint32_t),
     .min = TK__HWHEEL_MIN_BITS,
     .max = TK__HWHEEL_MAX_BITS,
     .def = TK__HWHEEL_DEFAULT_BITS,
     .help = "bits per level: each level has 2^bits slots"},
    {.key = "levels",
     .type = TK_PARAM_COUNT,
     .flags = TK_PARAM_ALWAYS,
     .offset = offsetof(tk__hwheel_params, levels),
     .size = sizeof(uint32_t),
     .min = TK__HWHEEL_MIN_LEVELS,
     .max = TK__HWHEEL_MAX_LEVELS,
     .def = TK__HWHEEL_DEFAULT_LEVELS,
     .help = "levels; deadlines past tick x 2^(bits x levels) wait in an overflow list"},
    TK_BLOCKING_PARAMS,
};

int tk__hwheel_params_validate(const void *params, char *err, size_t err_len) {
    const tk__hwheel_params *p = params;
    unsigned span_bits = p->bits * p->levels;
    if (span_bits > TK__HWHEEL_MAX_SPAN_BITS) {
        tk__err_printf(err, err_len,
                       "hwheel: bits=%u x levels=%u makes a span of 2^%u ticks, more than int64 "
                       "nanoseconds hold (2^%u at most); make bits or levels smaller",
                       (unsigned)p->bits, (unsigned)p->levels, span_bits,
                       (unsigned)TK__HWHEEL_MAX_SPAN_BITS);
        return TK_EINVAL;
    }
    if (p->tick_ns > (INT64_MAX >> span_bits)) {
        tk__err_printf(err, err_len,
                       "hwheel: the span tick=%lldns x 2^(bits=%u x levels=%u) overflows int64 "
                       "nanoseconds; make the tick, bits or levels smaller",
                       (long long)p->tick_ns, (unsigned)p->bits, (unsigned)p->levels);
        return TK_EINVAL;
    }
    return TK_OK;
}

static const tk_queue_ops hwheel_ops = {
    .name = "hwheel",
    .description = "hierarchical timing wheel with cascading (Varghese and Lauck's scheme 7)",
    .caps = TK_QUEUE_CAP_EXACT_ORDER | TK_QUEUE_CAP_O1_REMOVE | TK_QUEUE_CAP_TICKED |
            TK_QUEUE_CAP_SLACK | TK_BLOCKING_CAPS,
    TK_BLOCKING_ADAPTER,
    .params = hwheel_table,
    .param_count = sizeof(hwheel_table) / sizeof(hwheel_table[0]),
    .params_size = sizeof(tk__hwheel_params),
    .validate = tk__hwheel_params_validate,
    .core = &tk__hwheel_core_ops,
};

/* Returns the hierarchical wheel engine's ops table (static, immutable).
 * Never NULL. */
const tk_queue_ops *tk_engine_hwheel(void) {
    return &hwheel_ops;
}
