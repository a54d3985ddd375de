/* SPDX-License-Identifier: MIT */
/* timerkit reliability tests: shared helpers.
 *
 * - A fault-injecting, byte-counting allocator (tk_allocator) that fails the
 *   Nth allocation counted from when it was armed, checks that every free
 *   names the size the block was allocated with, and reports what is live.
 * - Executor options for an engine (its default parameters).
 * - Sizing: sanitizer detection and the TK_STRESS_SCALE / TK_SOAK_SECONDS
 *   environment knobs.
 * - Small time helpers.
 *
 * cmocka pitfall: assert only on the test's main thread. Worker and task
 * threads record into atomics; the test thread checks afterwards. */
#ifndef TIMERKIT_REL_COMMON_H
#define TIMERKIT_REL_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timerkit.h"

/* ---- fault-injecting allocator ------------------------------------------- */

typedef struct rel_alloc {
    tk_allocator iface;          /* pass &a->iface to timerkit */
    atomic_ullong calls;         /* alloc() calls, failed ones included */
    atomic_ullong fail_at;       /* fail the call whose number (1-based) is this; 0: never */
    atomic_ullong fail_from;     /* fail every call numbered >= this; 0: never */
    atomic_ullong failures;      /* calls that were made to fail */
    atomic_ullong allocs, frees; /* successful allocations and frees */
    atomic_ullong bytes_alloc, bytes_freed;
    atomic_ullong bad_frees; /* size mismatch or corrupt header */
} rel_alloc;

void rel_alloc_init(rel_alloc *a);
/* Fails the n-th alloc() call from now (n >= 1); 0 disarms. */
void rel_alloc_fail_nth(rel_alloc *a, unsigned long long n);
/* Fails every alloc() call from the n-th from now on (n >= 1); 0 disarms. */
void rel_alloc_fail_from(rel_alloc *a, unsigned long long n);
void rel_alloc_disarm(rel_alloc *a);
unsigned long long rel_alloc_live_blocks(rel_alloc *a);
unsigned long long rel_alloc_live_bytes(rel_alloc *a);

/* ---- executor options ------------------------------------------------------ */

/* Fills opt/cfg for `engine` with `threads` core threads and the engine's
 * default parameters (the wheel: a 1 ms tick, 512 slots). `alloc` (may be
 * NULL) goes into both the
 * executor options and the engine config. */
void rel_options(tk_executor_options *opt, tk_queue_config *cfg, const tk_queue_ops *engine,
                 unsigned threads, const tk_allocator *alloc);

/* ---- sizing ------------------------------------------------------------------ */

/* True in an ASan or TSan build (several times slower). */
bool rel_sanitized(void);
/* True under a sanitizer or under valgrind (TK_VALGRIND=1, set by
 * scripts/test.sh): everything runs many times slower, so time bounds widen. */
bool rel_slowed(void);
/* TK_STRESS_SCALE (default 1.0), divided by 8 in sanitizer builds and by 8
 * under valgrind (TK_VALGRIND=1). */
double rel_scale(void);
/* max(1, n * rel_scale()). */
long rel_scaled(long n);
/* TK_SOAK_SECONDS, 0 if unset. */
double rel_soak_seconds(void);

/* ---- time -------------------------------------------------------------------- */

void rel_sleep_ns(int64_t ns);
/* Polls `flag` until it is at least `want` or `timeout_ns` passes. */
bool rel_wait_at_least(atomic_long *flag, long want, int64_t timeout_ns);

/* A cheap per-thread PRNG (xorshift64*). */
static inline uint64_t rel_rand(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(2685821657736338717);
}

#endif
