/* SPDX-License-Identifier: MIT */
/* timerkit: what the wheel adapter's two files share. Internal.
 *
 * wheel-adapter.c holds the queue operations behind tk_engine_wheel() and
 * the engine's design essay; wheel-tick.c holds the tick thread and the work
 * of its pass. Both need the queue struct and the node state word, and the
 * operations that must see every node (peek, remove_first, drain, remove_if,
 * a synchronous remove, destroy) call a few steps of the pass themselves,
 * under core_lock. The struct is laid out by who writes what: what create()
 * fixes, the tick thread's published plan, the bound lock, the core's part
 * (core_lock) and the ready set's (ready_lock), each on lines of its own,
 * and the shards of the hand-off in an array, a line pair each. Only those
 * two files include this header: its macros and
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

/* A node's state word (see "Node state" in wheel-adapter.c): on a cancel
 * stack, the link and ST_CANCEL_TAG; otherwise its state in the low three
 * bits and, from bit ST_SHARD_SHIFT, the index of its shard, so that
 * remove() finds the shard in the word it reads anyway. ST_NONE is 0. */
#define ST_NONE UINT64_C(0)
#define ST_PENDING UINT64_C(1)
#define ST_BUCKETED UINT64_C(2)
#define ST_READY UINT64_C(3)
#define ST_CANCELLED_PENDING UINT64_C(4)
#define ST_CANCEL_TAG UINT64_C(7) /* low bits of "removed, on the cancel stack" */
#define ST_KIND_MASK UINT64_C(7)
#define ST_SHARD_SHIFT 3

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
    return (w & ST_KIND_MASK) == ST_CANCEL_TAG;
}

/* The state of word w: ST_NONE .. ST_CANCELLED_PENDING, or ST_CANCEL_TAG. */
static inline uint64_t st_kind(uint64_t w) {
    return w & ST_KIND_MASK;
}

/* The word of a node of shard `shard` in state `kind`. */
static inline uint64_t st_make(uint64_t kind, size_t shard) {
    return kind | (uint64_t)shard << ST_SHARD_SHIFT;
}

/* Word w (not cancel-linked) with its state changed to `kind`. */
static inline uint64_t st_with_kind(uint64_t w, uint64_t kind) {
    return (w & ~ST_KIND_MASK) | kind;
}

/* The shard index in word w (not cancel-linked, not ST_NONE). */
static inline size_t st_shard(uint64_t w) {
    return (size_t)(w >> ST_SHARD_SHIFT);
}

/* Moves a node whose word says `from` to `to`, its shard kept: one CAS,
 * after a load the caller's walk has usually brought into cache. False if
 * the word says otherwise (a remover claimed the node first). */
static inline bool word_move(tk_node *n, uint64_t from, uint64_t to) {
    uint64_t w = word_load(n);
    return st_kind(w) == from && word_cas(n, &w, st_with_kind(w, to));
}

#define NEXT(n) (tk__wheel_priv_of(n)->next)
#define PREV(n) (tk__wheel_priv_of(n)->prev)

/* ---- constants both files use ------------------------------------------- */

/* Offers that wake a sleeping tick thread whatever their deadlines: every
 * FLOOD_OFFERS-th offer into a shard (a power of two; see "Idle behaviour"
 * in wheel-adapter.c), so that a flood of timers far ahead is taken in while
 * it arrives, not all at once at the first expiry, where grabbing and moving
 * a million nodes would delay the expiry itself. */
#define FLOOD_OFFERS ((size_t)4096)

/* wake_threshold value while the tick thread is awake (no signal needed). */
#define AWAKE INT64_MIN

/* Removed nodes are released at the tick thread's next pass, within about
 * this long: a removal wakes the thread only if it planned to sleep longer. */
#define RECLAIM_NS (10 * TK_NS_PER_MS)

/* Bytes between data that different threads write: two 64-byte cache lines,
 * since a core's adjacent-line prefetcher fetches lines in pairs. */
#define TK__WHEEL_LINE 128

/* ---- the queue ------------------------------------------------------------ */

/* One shard of the hand-off: a node offered or removed goes to shard
 * tk_node_shard_key(n) & shard_mask, so that offers and removals of nodes in
 * different shards write no common cache line (see "Shards" in
 * wheel-adapter.c). Each shard is TK__WHEEL_LINE bytes, aligned to them. */
typedef struct tk__wheel_shard {
    /* Offered nodes, newest first, linked through next: offer() of the
     * shard's nodes pushes (CAS); only the core_lock holder empties it,
     * whole (exchange with NULL). */
    _Alignas(TK__WHEEL_LINE) _Atomic(tk_node *) pending_top;
    /* Removed bucketed nodes, linked through their state words: remove() of
     * the shard's nodes pushes; only the core_lock holder empties it. */
    _Atomic(tk_node *) cancel_top;
    /* Offers into the shard since create() (fetch-add by offer()). */
    atomic_size_t offered;
    /* The shard's nodes that remove() took while pending or bucketed, and
     * offers undone (fetch-add by remove(), and by offer() when the tick
     * thread cannot start). */
    atomic_size_t removed;
    /* Immutable after create(): where the shard's count of offers stands
     * against the flood grid (maybe_wake() in wheel-adapter.c). */
    size_t flood_phase;
} tk__wheel_shard;

_Static_assert(sizeof(tk__wheel_shard) == TK__WHEEL_LINE, "a shard is one line pair");

struct tk_queue {
    /* Immutable after create(), except `closed`, which only close() writes
     * (at most twice): read by every offer and every taker. */
    const tk_allocator *allocator;
    tk_queue_release_fn release; /* NULL: remove() works synchronously */
    void *release_ctx;
    size_t max_pending; /* 0: unbounded */
    int64_t tick_ns;
    int64_t spin_ns;         /* the tick thread busy-waits the last spin_ns before a tick */
    tk__wheel_shard *shards; /* shard_mask + 1 of them (tk__shard_count()) */
    size_t shard_mask;       /* shards - 1; the number is a power of two */
    void *shard_block;       /* the allocation that holds the aligned shards */
    size_t shard_block_size; /* its bytes */
    char thread_name[16];
    atomic_int closed; /* 0, TK_QUEUE_CLOSE_WHEN_EMPTY or TK_QUEUE_CLOSE_NOW; only grows */
    char pad0[TK__WHEEL_LINE];

    /* The tick thread's published plan: written by it before it sleeps and
     * when it wakes, and by the thread that wakes it; read by every offer
     * and removal. */
    /* The latest end of a window (deadline + slack_ns) that needs the
     * thread woken early, or AWAKE; the thread that wakes it CASes it to
     * AWAKE. */
    _Atomic int64_t wake_threshold;
    /* Set when the thread plans to sleep longer than RECLAIM_NS; cleared by
     * the thread that wakes it to release removed nodes. */
    atomic_bool sleep_long;
    atomic_bool started; /* tick thread created (set under start_lock) */
    atomic_bool stop;    /* destroy() asks the tick thread to exit */
    char pad1[TK__WHEEL_LINE];

    /* Taken by offers only when max_pending is set: serialises them, so that
     * two offers never both take the last place (admit_bounded()). */
    tk__spinlock bound_lock;
    char pad2[TK__WHEEL_LINE];

    /* Guarded by core_lock (held by the tick thread during a pass, and by
     * peek/remove_first/drain/remove_if/check and synchronous remove). */
    pthread_mutex_t core_lock;
    tk__wheel_core core;
    /* Pending nodes taken off the stacks, not yet in buckets: [0] due within
     * a revolution (moved first), [1] the rest; each in key order as far as
     * the stacks were (tk__wheel_grab_pending_locked()). */
    struct backlog {
        tk_node *head, *tail;
    } backlog[2];
    /* No backlog node is due before this (INT64_MAX when both are empty): a
     * lower bound, taken when nodes join, so that no tick one of them belongs
     * to is expired before it is in its bucket (see pass_expire_locked() in
     * wheel-tick.c). */
    int64_t backlog_min_ns;
    tk_node *zombies; /* removed nodes awaiting release, linked through next */
    char pad3[TK__WHEEL_LINE];

    /* Guarded by ready_lock. */
    pthread_mutex_t ready_lock;
    pthread_cond_t ready_cond; /* takers wait here (CLOCK_MONOTONIC) */
    size_t ready_waiters;      /* takers inside a wait on ready_cond */
    /* wake() calls so far: a taker that sees it change while it waits
     * returns TK_EINTR */
    uint64_t wake_gen;
    /* Nodes that left under ready_lock since create(): handed out, removed
     * while ready, or taken by remove_first/drain/remove_if. Written only
     * with ready_lock held; size() reads it without. */
    atomic_size_t left;
    tk__wheel_ready ready; /* expired nodes in sorted runs (wheel-ready.h) */

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

/* The index of the shard a node is filed under, from its seq (offer()
 * writes it into the state word, where the other operations read it). */
static inline size_t shard_index(const struct tk_queue *q, const tk_node *n) {
    return tk_node_shard_key(n) & q->shard_mask;
}

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

/* Unlinks every node on every shard's cancel stack from the core onto the
 * zombie list. Needs core_lock. */
void tk__wheel_process_cancels_locked(struct tk_queue *q);

/* Appends every shard's whole pending stack to the backlog, the shards'
 * nodes merged in key order; returns the number of nodes taken. Needs
 * core_lock. */
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
