/* SPDX-License-Identifier: MIT */
/* timerkit: wheel engine internals shared with its tests. Internal. */
#ifndef TIMERKIT_WHEEL_INTERNAL_H
#define TIMERKIT_WHEEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "timerkit/engine.h"

#include "timerkit/queue.h"
#include "wheel-core.h"

/* Smallest tick the adapter accepts ("tick"): 10 us. Below it a busy wheel
 * would spend its thread on wake-ups alone (each one a futex wake-up) and
 * the tick would sit inside the scheduler's noise, so the bound "lateness <=
 * 1 tick + noise" would say nothing (docs/engine-notes.md). The core itself
 * accepts any tick_ns > 0. */
#define TK__WHEEL_MIN_TICK_NS INT64_C(10000)

/* The wheel's own parameters (tk_queue_config.params). One revolution,
 * tick_ns times slots rounded up to a power of two, must fit in int64_t
 * nanoseconds (tk__wheel_params_validate()). */
typedef struct tk__wheel_params {
    int64_t tick_ns; /* "tick": tick duration */
    uint32_t slots;  /* "slots": buckets per revolution, rounded up to a power of two */
} tk__wheel_params;

/* The wheel's parameter table (tk_queue_ops.params), defined in
 * wheel-params.c: tick, slots, max_pending, spin. */
#define TK__WHEEL_PARAM_COUNT 4
extern const tk_queue_param tk__wheel_param_table[TK__WHEEL_PARAM_COUNT];

/* tk_queue_ops.validate of the wheel: refuses a revolution (tick x slots,
 * slots rounded up to a power of two) beyond INT64_MAX ns. */
int tk__wheel_params_validate(const void *params, char *err, size_t err_len);

/* The wheel's pure core as a tk_core_ops (wheel-core-ops.c): the core of
 * wheel-core.c told `now` instead of the tick, with a list of the nodes that
 * are due but not handed out yet (inserted late, or beyond an expire()'s
 * `max`). Used by the fuzzer, the core-level benchmarks and the core tests;
 * the wheel's own adapter drives wheel-core.c directly. */
extern const tk_core_ops tk__wheel_core_ops;

/* The wheel's create() with the number of shards of its hand-off chosen (a
 * power of two, 1 .. TK_NODE_SHARD_KEYS) instead of tk__shard_count(), so
 * that tests reach many shards on a machine with few CPUs. Otherwise as
 * tk_queue_ops.create of tk_engine_wheel(); TK_EINVAL for another count. */
int tk__wheel_create_sharded(const tk_queue_ops *self, const tk_queue_config *cfg,
                             tk_queue_release_fn release, void *release_ctx, unsigned shards,
                             tk_queue **out);

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
                                   TK__WHEEL_READY_RUNS slots were taken */
} tk__wheel_stats;

/* Fills *st with the counters of `q`, a queue created by tk_engine_wheel(). */
void tk__wheel_stats_get(tk_queue *q, tk__wheel_stats *st);

#endif
