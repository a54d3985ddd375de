/* SPDX-License-Identifier: MIT */
/* timerkit: what the wheel adapter's two files share. Internal.
 *
 * wheel-adapter.c holds the queue operations behind tk_engine_wheel() and
 * the engine's design essay; wheel-tick.c holds the tick thread and the work
 * of its pass. Both need the queue struct and the node state word, and the
 * operations that must see every node (peek, remove_first, drain, remove_if,
 * a synchronous remove, destroy) call a few steps of the pass themselves,
 * under core_lock. Only those two files include this header: its macros and
 * static inline helpers are theirs alone, and each function it declares is
 * named tk__wheel_*. */
#ifndef TIMERKIT_WHEEL_ADAPTER_INTERNAL_H
#define TIMERKIT_WHEEL_ADAPTER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common-internal.h"
#include "timerkit/queue.h"
#include "wheel-core.h"
#include "wheel-ready.h"

/* ---- node state word ------------------------------------------------------ */

#define ST_NONE UINT64_C(0)
#define ST_PENDING UINT64_C(1)
#define ST_BUCKETED UINT64_C(2)
#define ST_READY UINT64_C(3)
#define ST_CANCELLED_PENDING UINT64_C(4)
#define ST_CANCEL_TAG UINT64_C(7) /* low bits of "removed, on the cancel stack" */

_Static_assert(offsetof(tk__wheel_priv, state) == 3 * sizeof(uint64_t),
               "the state word is the last word of the private area");
_Static_assert(_Alignof(tk_node) >= 8, "cancel links need 3 free low bits");

static inline uint64_t *word_of(tk_node *n) {
    return &n->tk__priv.raw[3];
}

static inline uint64_t word_load(const tk_node *n) {
    return __atomic_load_n(&n->tk__priv.raw[3], __ATOMIC_ACQUIRE);
}

static inline void word_store(tk_node *n, uint64_t v) {
    __atomic_store_n(word_of(n), v, __ATOMIC_RELEASE);
}

static inline bool word_cas(tk_node *n, uint64_t *expected, uint64_t desired) {
    return __atomic_compare_exchange_n(word_of(n), expected, desired, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

static inline bool is_cancel_linked(uint64_t w) {
    return (w & 7u) == ST_CANCEL_TAG;
}

#define NEXT(n) (tk__wheel_priv_of(n)->next)
#define PREV(n) (tk__wheel_priv_of(n)->prev)

/* ---- constants both files use ------------------------------------------- */

/* Offers that wake a sleeping tick thread whatever their deadlines: a flood
 * of timers far ahead is taken in while it arrives, not all at once at the
 * first expiry, where grabbing and moving a million nodes would delay the
 * expiry itself. */
#define FLOOD_OFFERS ((size_t)4096)

/* wake_threshold value while the tick thread is awake (no signal needed). */
#define AWAKE INT64_MIN

/* Removed nodes are released at the tick thread's next pass, within about
 * this long: a removal wakes the thread only if it planned to sleep longer. */
#define RECLAIM_NS (10 * TK_NS_PER_MS)

/* ---- the queue ------------------------------------------------------------ */

struct tk_queue {
    /* Immutable after create(). */
    const tk_allocator *allocator;
    tk_queue_release_fn release; /* NULL: remove() works synchronously */
    void *release_ctx;
    size_t max_pending; /* 0: unbounded */
    int64_t tick_ns;
    int64_t spin_ns; /* the tick thread busy-waits the last spin_ns before a tick */
    char thread_name[16];

    /* Lock-free hand-off. Any thread pushes; only the core_lock holder
     * empties them (atomic exchange with NULL). */
    char pad0[64];
    _Atomic(tk_node *) pending_top; /* offered nodes, linked through next */
    char pad1[64];
    _Atomic(tk_node *) cancel_top; /* removed bucketed nodes, linked via state word */
    char pad2[64];
    atomic_size_t size; /* queued nodes: pending + bucketed + ready - removed */
    atomic_int closed;  /* 0, TK_QUEUE_CLOSE_WHEN_EMPTY or TK_QUEUE_CLOSE_NOW; only grows */
    char pad3[64];
    /* Written by the tick thread before it sleeps (the latest deadline that
     * needs it woken early), CASed to AWAKE by the thread that wakes it. */
    _Atomic int64_t wake_threshold;
    /* Written by the tick thread before it sleeps: the size at which an
     * offer wakes it anyway (FLOOD_OFFERS more than then). */
    atomic_size_t flood_mark;
    /* Set by the tick thread when it plans to sleep longer than RECLAIM_NS;
     * cleared by the thread that wakes it to release removed nodes. */
    atomic_bool sleep_long;
    atomic_bool started; /* tick thread created (set under start_lock) */
    atomic_bool stop;    /* destroy() asks the tick thread to exit */
    char pad4[64];

    /* Guarded by core_lock (held by the tick thread during a pass, and by
     * peek/remove_first/drain/remove_if/check and synchronous remove). */
    pthread_mutex_t core_lock;
    tk__wheel_core core;
    /* Pending nodes taken off the stack, oldest first, not yet in buckets:
     * [0] due within a revolution (moved first), [1] the rest. */
    struct backlog {
        tk_node *head, *tail;
    } backlog[2];
    /* No backlog node is due before this (INT64_MAX when both are empty): a
     * lower bound, taken when nodes join, so that no tick one of them belongs
     * to is expired before it is in its bucket (see tick_main() in
     * wheel-tick.c). */
    int64_t backlog_min_ns;
    tk_node *zombies; /* removed nodes awaiting release, linked through next */

    /* Guarded by ready_lock. */
    pthread_mutex_t ready_lock;
    pthread_cond_t ready_cond; /* takers wait here (CLOCK_MONOTONIC) */
    size_t ready_waiters;      /* takers inside a wait on ready_cond */
    tk__wheel_ready ready;     /* expired nodes in sorted runs (wheel-ready.h) */

    /* Guarded by tick_lock: the tick thread's sleep. */
    pthread_mutex_t tick_lock;
    pthread_cond_t tick_cond; /* CLOCK_MONOTONIC */
    bool wake_flag;

    pthread_mutex_t start_lock; /* serialises the lazy start */
    pthread_t thread;           /* valid once started */

    /* Statistics: relaxed atomics. */
    _Atomic uint64_t st_wakeups, st_loops, st_expired, st_moved, st_released;
    _Atomic uint64_t st_cancelled_pending, st_cancelled_bucket, st_removed_ready;
    _Atomic uint64_t st_ready_runs_max, st_ready_merges; /* written by the tick thread */
};

#define STAT_ADD(q, field, v) atomic_fetch_add_explicit(&(q)->field, (v), memory_order_relaxed)

static inline void lock(pthread_mutex_t *m) {
    int rc = pthread_mutex_lock(m);
    (void)rc;
}

static inline void unlock(pthread_mutex_t *m) {
    int rc = pthread_mutex_unlock(m);
    (void)rc;
}

/* ---- steps of the tick thread's pass (wheel-tick.c) ------------------------ */

/* Pushes `n` on the zombie list (removed nodes awaiting release). Needs
 * core_lock. */
static inline void zombie_push_locked(struct tk_queue *q, tk_node *n) {
    NEXT(n) = q->zombies;
    q->zombies = n;
}

/* Unlinks every node on the cancel stack from the core onto the zombie
 * list. Needs core_lock. */
void tk__wheel_process_cancels_locked(struct tk_queue *q);

/* Appends the whole pending stack to the backlog; returns the number of
 * nodes taken. Needs core_lock. */
size_t tk__wheel_grab_pending_locked(struct tk_queue *q);

/* Moves up to `limit` backlog nodes into the core, stopping once the clock
 * passes `until_ns` (INT64_MAX: never). Needs core_lock. */
void tk__wheel_transfer_locked(struct tk_queue *q, size_t limit, int64_t until_ns);

/* Brings the core up to date with every hand-off; true if nodes now await
 * release. Needs core_lock. */
bool tk__wheel_flush_all_locked(struct tk_queue *q);

/* Runs the release callback on a zombie list. No lock held. */
void tk__wheel_release_list(struct tk_queue *q, tk_node *n);

/* Starts the tick thread unless it has started already. Returns TK_OK or
 * TK_ETHREAD. Takes start_lock. */
int tk__wheel_start_thread(struct tk_queue *q);

#endif
