/* SPDX-License-Identifier: MIT */
/* timerkit: helpers shared by every library target. Internal. */
#ifndef TIMERKIT_COMMON_INTERNAL_H
#define TIMERKIT_COMMON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "timerkit/alloc.h"
#include "timerkit/clock.h"
#include "timerkit/status.h"

#define tk__container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#define TK__UNUSED(x) ((void)(x))

#if defined(__GNUC__)
#define TK__LIKELY(x) __builtin_expect(!!(x), 1)
#define TK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TK__LIKELY(x) (x)
#define TK__UNLIKELY(x) (x)
#endif

/* One pause of a busy-wait loop (lets a sibling hyper-thread run). */
static inline void tk__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* `size` rounded up to the alignment of any type: where a block that holds a
 * header and then an engine core's state puts the state (the blocking
 * adapter's queue, the passive loop). */
#define TK__MAX_ALIGN_UP(size)                                                                     \
    (((size) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) * _Alignof(max_align_t))

/* Poison value written into unlinked pointers in debug builds. */
#define TK__POISON_PTR ((void *)(uintptr_t)0xdead000000000100ull)

/* Allocation through an allocator that may be NULL (= default). */
static inline void *tk__alloc(const tk_allocator *a, size_t size) {
    if (a == NULL)
        a = tk_allocator_default();
    return a->alloc(a->ctx, size);
}

static inline void tk__free(const tk_allocator *a, void *ptr, size_t size) {
    if (ptr == NULL)
        return;
    if (a == NULL)
        a = tk_allocator_default();
    a->free(a->ctx, ptr, size);
}

/* Absolute CLOCK_MONOTONIC nanoseconds to a timespec (for
 * pthread_cond_timedwait on a condvar whose clock is CLOCK_MONOTONIC). */
static inline struct timespec tk__ns_to_timespec(int64_t ns) {
    struct timespec ts;
    if (ns < 0)
        ns = 0;
    ts.tv_sec = (time_t)(ns / TK_NS_PER_S);
    ts.tv_nsec = (long)(ns % TK_NS_PER_S);
    return ts;
}

/* Saturating add of two non-negative-or-any int64 values. */
static inline int64_t tk__sat_add(int64_t a, int64_t b) {
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* ---- spin locks -------------------------------------------------------------
 * For leaf locks around a few pointer updates that are rarely contended
 * (the executor's slab and batch locks, an engine's shard locks). Taking one
 * is one exchange; releasing it a plain release store, where a mutex's
 * unlock is another locked instruction. A waiter spins briefly, then yields
 * the CPU, so that a holder that was preempted gets to run (a machine may
 * have fewer cores than threads). Never held across a call out of the
 * library, a wait or an allocation. */
#include <stdatomic.h>
#include <stdbool.h>

typedef struct tk__spinlock {
    _Atomic uint32_t held;
} tk__spinlock;

void tk__spin_wait(tk__spinlock *l); /* common.c: the contended path */

static inline void tk__spin_init(tk__spinlock *l) {
    atomic_init(&l->held, 0);
}

static inline bool tk__spin_trylock(tk__spinlock *l) {
    return atomic_load_explicit(&l->held, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&l->held, 1, memory_order_acquire) == 0;
}

static inline void tk__spin_lock(tk__spinlock *l) {
    if (TK__UNLIKELY(atomic_exchange_explicit(&l->held, 1, memory_order_acquire) != 0))
        tk__spin_wait(l);
}

static inline void tk__spin_unlock(tk__spinlock *l) {
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

/* ---- threads' slots and shards ------------------------------------------------
 * Each thread that asks gets a slot, a small number that stays its own for
 * its life: threads take slots in turn, 0, 1, ..., wrapping at
 * TK__THREAD_SLOTS, so that up to that many threads asking at the same time
 * hold different slots. A sharded structure indexes its shards by the
 * caller's slot (the executor's per-thread counters and task caches; the
 * shard key of the nodes it offers, tk_node_shard_key()), so that threads
 * meet in no lock and write no common cache line.
 * The turn counter (common.c, `slot_turn`) is the library's one piece of
 * process-wide mutable state for this: a relaxed fetch-add, once per thread. */
#define TK__THREAD_SLOTS 128u /* = TK_NODE_SHARD_KEYS (queue.h) */

extern _Thread_local unsigned tk__thread_slot_plus1; /* 0: none yet */
unsigned tk__thread_slot_assign(void);

/* The calling thread's slot, 0 to TK__THREAD_SLOTS - 1. */
static inline unsigned tk__thread_slot(void) {
    unsigned s = tk__thread_slot_plus1;
    return TK__LIKELY(s != 0) ? s - 1 : tk__thread_slot_assign();
}

/* How many shards a structure shared by every thread should have: the CPUs
 * online rounded up to a power of two, 1 to TK__THREAD_SLOTS. */
unsigned tk__shard_count(void);

/* Initialises a condition variable that waits on CLOCK_MONOTONIC.
 * Returns 0 or an errno value. Defined in common.c. */
#include <pthread.h>
int tk__cond_init_monotonic(pthread_cond_t *cond);

/* Sets the calling thread's name (truncated to 15 bytes); best effort. */
void tk__thread_set_name(const char *name);

#endif
