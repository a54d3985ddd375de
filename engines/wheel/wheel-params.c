/* timerkit: the wheel's parameter table (tk_engine_wheel()->params).
 *
 * One entry per tk_queue_config field the wheel uses, with the range its
 * create() accepts (checked through tk__queue_config_check()) and the key of
 * the wheel's spec, "wheel:tick=1ms,slots=1024,max_pending=100000,spin=150us".
 * tick and slots are always written in the canonical spec: together they say
 * what the wheel is (its granularity and its revolution). */
#include <stddef.h>
#include <stdint.h>

#include "params-internal.h"
#include "timerkit/queue.h"
#include "wheel-core.h"
#include "wheel-internal.h"

/* Declared with its size in wheel-internal.h: a table of another length
 * does not compile. */
const tk_queue_param tk__wheel_params[] = {
    {.key = "tick",
     .type = TK_PARAM_DURATION,
     .flags = TK_PARAM_ALWAYS,
     .offset = offsetof(tk_queue_config, tick_ns),
     .size = sizeof(int64_t),
     .min = TK_WHEEL_MIN_TICK_NS,
     .max = TK_WHEEL_MAX_TICK_NS,
     .help = "tick duration: expiry granularity, lateness bound"},
    {.key = "slots",
     .type = TK_PARAM_COUNT,
     .flags = TK_PARAM_ALWAYS,
     .offset = offsetof(tk_queue_config, ticks_per_wheel),
     .size = sizeof(uint32_t),
     .min = 1,
     .max = (int64_t)TK_WHEEL_MAX_TICKS_PER_WHEEL,
     .help = "buckets per revolution, rounded up to a power of two"},
    {.key = "max_pending",
     .type = TK_PARAM_COUNT,
     .flags = TK_PARAM_ADAPTER,
     .offset = offsetof(tk_queue_config, max_pending),
     .size = sizeof(size_t),
     .min = 0,
     .max = TK__PARAM_SIZE_MAX,
     .help = "offers beyond this many queued nodes get TK_EFULL (0: unbounded)"},
    TK__PARAM_SPIN,
};
