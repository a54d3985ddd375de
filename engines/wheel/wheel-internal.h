/* timerkit: wheel engine internals shared with its tests. Internal. */
#ifndef TIMERKIT_WHEEL_INTERNAL_H
#define TIMERKIT_WHEEL_INTERNAL_H

#include <stdint.h>

#include "timerkit/queue.h"
#include "wheel-core.h"

/* Smallest tick the adapter accepts (tk_queue_config.tick_ns): 10 us. Below
 * it a busy wheel would spend its thread on wake-ups alone (each one a futex
 * wake-up) and the tick would sit inside the scheduler's noise, so the
 * bound "lateness <= 1 tick + noise" would say nothing
 * (docs/engine-notes.md). The core itself accepts any tick_ns > 0. */
#define TK_WHEEL_MIN_TICK_NS INT64_C(10000)

/* Largest tick the adapter accepts: one revolution of the largest wheel,
 * tick_ns * TK_WHEEL_MAX_TICKS_PER_WHEEL, still fits in int64_t ns (about
 * 550 s). */
#define TK_WHEEL_MAX_TICK_NS (INT64_MAX / (int64_t)TK_WHEEL_MAX_TICKS_PER_WHEEL)

/* The wheel's parameters (tk_queue_ops.params), defined in wheel-params.c:
 * tick, slots, max_pending, spin. create() checks a config against them. */
#define TK__WHEEL_PARAM_COUNT 4
extern const tk_queue_param tk__wheel_params[TK__WHEEL_PARAM_COUNT];

/* Counters of one wheel queue, read with relaxed atomics (a snapshot, not a
 * consistent cut). */
typedef struct tk__wheel_stats {
    uint64_t wakeups;           /* tick thread returns from a sleep */
    uint64_t loops;             /* tick thread passes (wake-ups + re-runs) */
    uint64_t expired;           /* nodes moved to the ready queue */
    uint64_t moved;             /* nodes moved from the pending queue to buckets */
    uint64_t released;          /* release callbacks run */
    uint64_t cancelled_pending; /* removed nodes found still pending (counted when
                                   processed, off the remove() path) */
    uint64_t cancelled_bucket;  /* removed nodes unlinked from a bucket (ditto) */
    uint64_t removed_ready;     /* remove() that unlinked a ready node (TK_OK) */
    uint64_t ready_runs_max;    /* most sorted runs the ready set held at once
                                   (after a publish; see wheel-ready.h) */
    uint64_t ready_merges;      /* pieces merged into a ready run because all
                                   TK_WHEEL_READY_RUNS slots were taken */
} tk__wheel_stats;

/* Fills *st with the counters of `q`, a queue created by tk_engine_wheel(). */
void tk__wheel_stats_get(tk_queue *q, tk__wheel_stats *st);

#endif
