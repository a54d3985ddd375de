/* SPDX-License-Identifier: MIT */
/* timerkit: the generic blocking adapter (TK_BLOCKING_ADAPTER, engine.h).
 *
 * Structure. Any engine's pure core (tk_core_ops) behind one mutex, plus one
 * condition variable, `available`, created on CLOCK_MONOTONIC. This is the
 * JDK's DelayedWorkQueue (ScheduledThreadPoolExecutor) in C, with the core in
 * place of its heap, leader-follower wait included: of the threads blocked in
 * take()/poll() on a core whose next node is not yet due, only one, the
 * leader, sleeps until the core's next() instant; the others, the followers,
 * wait without a deadline (or until their own poll timeout), so one due node
 * wakes one thread instead of a herd. The rules that keep a thread always
 * responsible for the next due instant:
 *   - offer() of a node due before the instant the leader waits for (or
 *     while nobody leads) clears the leader (its instant is stale) and
 *     signals `available` once;
 *   - a taker that leaves (with a node, a timeout or TK_ECLOSED) while there
 *     is no leader and nodes remain signals one waiter to take over;
 *   - a take_batch() that leaves due nodes behind while others wait signals
 *     one of them (leader or not), so that it takes its share at once;
 *   - close() and any removal that empties a closed queue broadcast, so every
 *     taker re-checks the closed state.
 * Removing nodes (remove, remove_first, remove_if) needs no signal: the next
 * instant can only move later, so the leader wakes no later than needed and
 * simply sleeps again.
 *
 * The core's next() may be a lower bound (a hierarchical wheel's next
 * cascade): a leader that wakes at it and finds nothing due after expire()
 * asks next() again, which the core contract guarantees has moved later.
 * Idle costs nothing: a leader sleeps until next(), never per tick, and with
 * no node nobody sleeps with a deadline at all.
 *
 * Invariants: those of the core (checked by check()), plus: `leader` is NULL
 * or the token of a thread blocked in take()/poll()/take_batch() on
 * `available`, and `leader_due` the instant it waits for; `waiters` counts the
 * threads inside such a wait or spin; `resizing` is set only while one
 * thread, having claimed a resize, is between dropping the lock to build the
 * block and retaking it to adopt.
 *
 * Complexity: the core's, under the lock, plus O(1) per operation: offer
 * one insert() and one due(); take one next() and one expire(); drain a
 * remove_if() and an O(n log n) merge sort of the list (the core hands its
 * nodes out in any order there; the sort runs under the lock, since it
 * rewrites the link word a racing remove() reads). No operation allocates per
 * node; cores with
 * a resizable array (tk_core_ops.resize) are resized as below.
 *
 * Resizing without the lock (cores with `resize` only; the heap). The core
 * runs with its own resizing off (resize->manual()), so nothing is
 * allocated, first-touched or freed while the lock is held; the one resize
 * step under it is a copy into pages already faulted in. (A first touch of a
 * page is a fault: moving a large array into fresh pages under the lock
 * would stall every taker for as long as those faults take;
 * docs/engine-notes.md has figures.) The steps:
 *   1. under the lock, an operation sees resize->wanted() differ from the
 *      capacity and claims the resize (`resizing`: one at a time, so
 *      concurrent producers do not each build a block);
 *   2. it drops the lock, allocates the block and touches one byte per 4 KiB
 *      of the part that will be written soon (the entries to copy plus a
 *      sixteenth for the inserts that follow), then retakes the lock;
 *   3. resize->adopt() copies into the block if the move is still wanted; the
 *      array it leaves, or the block it refused, is freed after the lock is
 *      dropped again. The claim is released and `resized` broadcast.
 * An offer that finds the core full (TK_EFULL) waits on `resized` for a
 * resize under way, or claims one and grows the array itself, then inserts
 * again; only a failed allocation makes it return TK_ENOMEM (core
 * unchanged). Who pays: offer (growth, and a shrink that takes left due) and
 * the removal calls (shrink) do the work on their own time, after their
 * operation is complete. take(), poll() and take_batch() never resize on the
 * way out with nodes, since a worker's delay there delays its tasks; they
 * return an idle queue's memory only when about to wait on an empty queue. A
 * failed allocation for a resize nobody waits for is simply dropped; the
 * next operation that sees the need tries again.
 *
 * Accuracy. Never early: a node leaves through take()/poll()/take_batch()
 * only from expire(now) with `now` read from tk_clock_now_ns()
 * (CLOCK_MONOTONIC) under the lock after waking, and the core hands out only
 * nodes with due(deadline) <= now, due() never below the deadline; a
 * wake-up that comes early (spurious, a signal, a clock rounding) just loops.
 * Lateness is the core's rounding (due(d) - d: nothing for an exact core, up
 * to a tick for a ticked one) plus the wake-up latency of
 * pthread_cond_timedwait (scheduler latency plus the thread's timer slack,
 * 50 us by default on Linux) and lock contention; with every taker busy a
 * due node waits for the next free one, which no queue can help.
 *
 * Spinning (tk_queue_config.spin_ns, default 0: off). A timed sleep wakes
 * after the OS's timer wake-up latency, which remains even with 1 ns of
 * timer slack. With spin_ns > 0 the leader sleeps only until spin_ns before
 * the instant it waits for and then busy-waits, with the lock dropped so
 * offers and removals go on, until that instant, an earlier node (offer()
 * bumps `head_gen`) or a close (close() bumps it too); then it re-checks
 * under the lock as after any wake-up, so the never-early rule is the same.
 * The cost is CPU: up to spin_ns of one core per wait that ends in a due
 * node, nothing while the next node is further away (an idle queue with a
 * far node still sleeps). Followers never spin.
 *
 * Batches. take_batch() waits exactly as take() does (leader, follower,
 * spin), then expires due nodes under the same hold of the lock, up to its
 * `max`. While other takers wait (`waiters`), it first counts the due nodes
 * (core->count_due(), which stops at max * (waiters + 1)) and takes only a
 * fair share, max(1, due / (waiters + 1)). If due nodes are left it signals
 * one waiter, which takes its share the same way. Alone, it counts nothing and takes up to max.
 *
 * The pending limit (tk_queue_config.max_pending, 0: none): offer() into a
 * queue that already holds that many nodes gets TK_EFULL.
 *
 * remove() always completes at once (TK_OK or TK_ENOENT): the adapter never
 * returns TK_EINPROGRESS and never calls the `release` callback, so create()
 * accepts a NULL one. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common-internal.h"
#include "node-sort.h"
#include "params-internal.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"

/* tk_queue.closed holds OPEN or the strongest tk_queue_close_mode received so
 * far (TK_QUEUE_CLOSE_NOW > TK_QUEUE_CLOSE_WHEN_EMPTY > open). */
enum { OPEN = 0 };

/* Bytes between two first touches: no page size in use is smaller, so every
 * page of a range gets at least one write. */
#define TOUCH_STRIDE ((size_t)4096)

struct tk_queue {
    pthread_mutex_t lock;          /* guards every field below marked "lock" */
    pthread_cond_t available;      /* CLOCK_MONOTONIC; signalled as described above */
    pthread_cond_t resized;        /* broadcast when a claimed resize ends (with the lock) */
    const tk_core_ops *core;       /* immutable after create() */
    void *state;                   /* lock: the core's state (allocated with the queue) */
    const void *leader;            /* lock: token of the thread waiting for the next node */
    int64_t leader_due;            /* lock: the instant the leader waits for */
    size_t waiters;                /* lock: takers inside a wait or a spin */
    int closed;                    /* lock: OPEN or a tk_queue_close_mode */
    bool resizing;                 /* lock: a thread has claimed a resize and builds the block */
    int64_t spin_ns;               /* immutable after create(): see "Spinning" */
    size_t max_pending;            /* immutable after create(): 0 or the pending limit */
    _Atomic uint64_t head_gen;     /* bumped (under the lock) on an earlier node and on close() */
    _Atomic uint64_t wakeups;      /* leader timed waits that returned (written under the lock) */
    const tk_allocator *allocator; /* immutable after create(); frees the queue itself */
    size_t bytes;                  /* immutable: size of the queue's allocation */
};

/* Where the core's state starts in the queue's allocation. */
#define STATE_OFFSET TK__MAX_ALIGN_UP(sizeof(struct tk_queue))

/* ---- resizing (cores with tk_core_ops.resize) ------------------------------ */

/* A block to hand back to the core's allocator once the lock is dropped. */
typedef struct spare_block {
    void *block; /* NULL: nothing to free */
    size_t capacity;
} spare_block;

/* Frees `spare` (if it holds a block) and empties it. Caller does NOT hold
 * the lock. */
static void spare_free(tk_queue *q, spare_block *spare) {
    if (spare->block != NULL)
        q->core->resize->free_block(q->state, spare->block, spare->capacity);
    spare->block = NULL;
    spare->capacity = 0;
}

/* Allocates a block of `capacity` entries and writes one byte in every page
 * of its first `touch` entries, so that the copy and the inserts that follow
 * find those pages already mapped. Caller does NOT hold the lock. Returns
 * NULL if the allocation failed. */
static void *block_alloc_touched(tk_queue *q, size_t capacity, size_t touch) {
    const tk_core_resize_ops *r = q->core->resize;
    void *block = r->alloc_block(q->state, capacity);
    if (block == NULL)
        return NULL;
    if (touch > capacity)
        touch = capacity;
    volatile unsigned char *bytes = (volatile unsigned char *)block;
    size_t len = touch * r->entry_size;
    for (size_t off = 0; off < len; off += TOUCH_STRIDE)
        bytes[off] = 0;
    if (len > 0)
        bytes[len - 1] = 0; /* the last page, when len is not a multiple of the stride */
    return block;
}

/* Carries out a resize towards `capacity` that the caller has claimed (it
 * set q->resizing). Caller holds the lock; it is dropped around the
 * allocation (which first frees what `spare` holds) and held again on
 * return, with the claim released and `resized` broadcast. The array the
 * core left, or the block it no longer wanted, is left in `spare` for the
 * caller to free after unlocking. Returns false if the allocation failed
 * (core unchanged). */
static bool resize_claimed_locked(tk_queue *q, size_t capacity, spare_block *spare) {
    size_t size = q->core->count(q->state);
    size_t touch = size + size / 16 + 1;
    pthread_mutex_unlock(&q->lock);
    spare_free(q, spare);
    void *block = block_alloc_touched(q, capacity, touch);
    pthread_mutex_lock(&q->lock);
    q->resizing = false;
    pthread_cond_broadcast(&q->resized);
    if (block == NULL)
        return false;
    if (!q->core->resize->adopt(q->state, block, capacity, &spare->block, &spare->capacity)) {
        spare->block = block; /* no longer wanted: the size moved meanwhile */
        spare->capacity = capacity;
    }
    return true;
}

/* The capacity to resize to if a resize is due and nobody has claimed one;
 * 0 otherwise (and always for a core without `resize`). Caller holds the
 * lock. */
static size_t resize_due_locked(tk_queue *q) {
    const tk_core_resize_ops *r = q->core->resize;
    if (r == NULL || q->resizing)
        return 0;
    size_t want = r->wanted(q->state);
    return want != r->capacity(q->state) ? want : 0;
}

/* Ends an operation: does any resize that is due (a few steps at most, the
 * lock dropped around each allocation), unlocks, and frees what the core
 * left. Caller holds the lock; `spare` holds what it has to free, if any. */
static void unlock_after_op(tk_queue *q, spare_block *spare) {
    size_t capacity;
    for (int step = 0; step < 4 && (capacity = resize_due_locked(q)) != 0; step++) {
        q->resizing = true;
        if (!resize_claimed_locked(q, capacity, spare))
            break; /* out of memory: a later operation tries again */
    }
    pthread_mutex_unlock(&q->lock);
    spare_free(q, spare);
}

/* Unlocks after an operation that freed nothing and must not resize. */
static void unlock_plain(tk_queue *q, spare_block *spare) {
    pthread_mutex_unlock(&q->lock);
    spare_free(q, spare);
}

/* ---- waiting ----------------------------------------------------------------- */

/* After a node left the core (caller holds the lock): a closed queue that
 * just became empty must release every blocked taker with TK_ECLOSED. */
static void wake_if_closed_and_empty_locked(tk_queue *q) {
    if (q->closed != OPEN && q->core->count(q->state) == 0)
        pthread_cond_broadcast(&q->available);
}

/* Waits on `available` until woken or until `deadline_ns` (INT64_MAX: no
 * deadline). Caller holds the lock. Spurious wake-ups are the caller's loop's
 * problem. */
static void wait_locked(tk_queue *q, int64_t deadline_ns) {
    if (deadline_ns == INT64_MAX) {
        pthread_cond_wait(&q->available, &q->lock);
    } else {
        struct timespec ts = tk__ns_to_timespec(deadline_ns);
        (void)pthread_cond_timedwait(&q->available, &q->lock, &ts);
    }
}

/* The leader's busy-wait for the last spin_ns before `deadline_ns`. Caller
 * holds the lock; it is dropped while spinning and held again on return.
 * Ends at the deadline, on an earlier node or on close(). */
static void spin_until_locked(tk_queue *q, int64_t deadline_ns) {
    uint64_t gen = atomic_load_explicit(&q->head_gen, memory_order_relaxed);
    pthread_mutex_unlock(&q->lock);
    while (tk_clock_now_ns() < deadline_ns &&
           atomic_load_explicit(&q->head_gen, memory_order_relaxed) == gen)
        tk__cpu_relax();
    pthread_mutex_lock(&q->lock);
}

/* How many due nodes (due at `now`) a batch of at most `max` takes: all it
 * may alone, a fair share while others wait (see "Batches"). Caller holds
 * the lock. */
static size_t batch_limit_locked(tk_queue *q, int64_t now, size_t max) {
    if (q->waiters == 0)
        return max;
    size_t ways = q->waiters + 1;
    size_t enough = max > SIZE_MAX / ways ? SIZE_MAX : max * ways;
    size_t share = q->core->count_due(q->state, now, enough) / ways;
    return share < 1 ? 1 : share < max ? share : max;
}

/* The body of take(), poll() and take_batch(): waits until a node is due,
 * until `give_up_ns` (INT64_MAX: never) or until the queue is closed, then
 * hands out one node (count NULL: *out is the node) or up to `max` due ones
 * (*out is a list linked through detached_next, *count their number). Caller
 * holds the lock (dropped while waiting, and around a shrink of the empty
 * queue's array, whose old block is left in `spare` for the caller to free
 * after unlocking). Returns TK_OK, TK_ETIMEDOUT or TK_ECLOSED. */
static int take_locked(tk_queue *q, int64_t give_up_ns, size_t max, tk_node **out, size_t *count,
                       spare_block *spare) {
    char me = 0; /* this thread's leader token: its address is unique while we wait */
    bool shrink_tried = false;
    bool due_left = false; /* a batch left due nodes behind */
    int rc;
    for (;;) {
        if (q->closed == TK_QUEUE_CLOSE_NOW) {
            rc = TK_ECLOSED;
            break;
        }
        int64_t when = INT64_MAX;
        bool any = q->core->next(q->state, &when) == TK_OK;
        if (!any && q->closed == TK_QUEUE_CLOSE_WHEN_EMPTY) {
            rc = TK_ECLOSED;
            break;
        }
        int64_t now = tk_clock_now_ns();
        if (any && when <= now) {
            size_t limit = count == NULL ? 1 : batch_limit_locked(q, now, max);
            size_t k = 0;
            tk_node *list = q->core->expire(q->state, now, limit, &k);
            if (k == 0)
                continue; /* next() was a lower bound (a cascade): it has moved on */
            *out = list;
            if (count != NULL) {
                *count = k;
                due_left = q->core->next(q->state, &when) == TK_OK && when <= now;
            }
            wake_if_closed_and_empty_locked(q);
            rc = TK_OK;
            break;
        }
        if (now >= give_up_ns) {
            rc = TK_ETIMEDOUT;
            break;
        }
        if (!any && !shrink_tried) {
            /* about to idle on an empty queue: return its memory first */
            size_t capacity = resize_due_locked(q);
            if (capacity != 0) {
                shrink_tried = true;
                q->resizing = true;
                (void)resize_claimed_locked(q, capacity, spare);
                continue; /* the lock was dropped: look again */
            }
        }
        q->waiters++;
        if (!any || q->leader != NULL) {
            /* follower (or nothing queued) */
            wait_locked(q, give_up_ns);
        } else {
            /* Lead, also when giving up before the next node is due (a poll()
             * with a timeout): offers of later nodes compare with leader_due
             * and need not wake us. Leaving early hands the lead on (below). */
            q->leader = &me;
            q->leader_due = when;
            int64_t sleep_until = q->spin_ns == 0 ? when : when - q->spin_ns;
            if (q->spin_ns == 0 || when - now > q->spin_ns) {
                /* sleep until the instant (or until spin_ns before it, then spin
                 * the rest), or until we give up */
                wait_locked(q, sleep_until < give_up_ns ? sleep_until : give_up_ns);
                atomic_fetch_add_explicit(&q->wakeups, 1, memory_order_relaxed);
            } else {
                spin_until_locked(q, when < give_up_ns ? when : give_up_ns);
            }
            if (q->leader == &me)
                q->leader = NULL;
        }
        q->waiters--;
    }
    /* Leaving: hand the next node over to a waiter if nobody leads, and the
     * due nodes a batch left to a waiter at once. */
    if (q->closed != TK_QUEUE_CLOSE_NOW && q->core->count(q->state) > 0 &&
        (q->leader == NULL || (due_left && q->waiters != 0)))
        pthread_cond_signal(&q->available);
    return rc;
}

/* ---- operations ------------------------------------------------------------------ */

/* The core, checked as the adapter needs it. */
static bool core_usable(const tk_core_ops *c) {
    return c != NULL && c->size > 0 && c->init != NULL && c->destroy != NULL && c->insert != NULL &&
           c->remove != NULL && c->due != NULL && c->next != NULL && c->expire != NULL &&
           c->count != NULL && c->first != NULL && c->remove_if != NULL && c->check != NULL &&
           c->count_due != NULL;
}

int tk_blocking_create(const tk_queue_ops *self, const tk_queue_config *cfg,
                       tk_queue_release_fn release, void *release_ctx, tk_queue **out) {
    TK__UNUSED(release);
    TK__UNUSED(release_ctx);
    if (out == NULL)
        return TK_EINVAL;
    *out = NULL;
    if (self == NULL || !core_usable(self->core))
        return TK_EINVAL;
    tk_queue_config c;
    if (tk__queue_config_resolve(self, cfg, &c, NULL, 0) != TK_OK)
        return TK_EINVAL;
    const tk_allocator *a = c.allocator != NULL ? c.allocator : tk_allocator_default();
    const tk_core_ops *core = self->core;
    if (core->size > SIZE_MAX - STATE_OFFSET)
        return TK_EINVAL;
    size_t bytes = STATE_OFFSET + core->size;
    tk_queue *q = tk__alloc(a, bytes);
    if (q == NULL)
        return TK_ENOMEM;
    memset(q, 0, bytes);
    q->allocator = a;
    q->bytes = bytes;
    q->core = core;
    q->state = (char *)q + STATE_OFFSET;
    q->closed = OPEN;
    q->leader = NULL;
    q->resizing = false;
    q->spin_ns = c.spin_ns;
    q->max_pending = c.max_pending;
    atomic_init(&q->head_gen, 0);
    atomic_init(&q->wakeups, 0);
    int rc = core->init(q->state, tk__queue_config_params(&c), a, tk_clock_now_ns());
    if (rc != TK_OK) {
        tk__free(a, q, bytes);
        return rc == TK_EINVAL ? TK_EINVAL : TK_ENOMEM;
    }
    if (core->resize != NULL)
        core->resize->manual(q->state); /* we resize, outside the lock */
    rc = TK_ENOMEM;
    if (pthread_mutex_init(&q->lock, NULL) != 0)
        goto fail_mutex;
    if (tk__cond_init_monotonic(&q->available) != 0)
        goto fail_cond;
    if (pthread_cond_init(&q->resized, NULL) != 0)
        goto fail_resized;
    *out = q;
    return TK_OK;

fail_resized:
    pthread_cond_destroy(&q->available);
fail_cond:
    pthread_mutex_destroy(&q->lock);
fail_mutex:
    core->destroy(q->state);
    tk__free(a, q, bytes);
    return rc;
}

void tk_blocking_destroy(tk_queue *q) {
    if (q == NULL)
        return;
    q->core->destroy(q->state);
    pthread_cond_destroy(&q->resized);
    pthread_cond_destroy(&q->available);
    pthread_mutex_destroy(&q->lock);
    tk__free(q->allocator, q, q->bytes);
}

int tk_blocking_offer(tk_queue *q, tk_node *n) {
    if (q == NULL || n == NULL)
        return TK_EINVAL;
    spare_block spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    int rc;
    for (;;) {
        if (q->closed == TK_QUEUE_CLOSE_NOW) {
            rc = TK_ECLOSED;
            break;
        }
        if (q->max_pending != 0 && q->core->count(q->state) >= q->max_pending) {
            rc = TK_EFULL;
            break;
        }
        rc = q->core->insert(q->state, n);
        if (rc == TK_EFULL && q->core->resize == NULL)
            rc = TK_ENOMEM; /* the core could not take it (TK_EFULL is for manual resizing) */
        if (rc != TK_EFULL)
            break;
        if (q->resizing) { /* someone is building a block: use theirs */
            pthread_cond_wait(&q->resized, &q->lock);
            continue;
        }
        size_t capacity = q->core->resize->wanted(q->state);
        if (capacity <= q->core->resize->capacity(q->state)) {
            rc = TK_ENOMEM; /* no larger array can be represented */
            break;
        }
        q->resizing = true;
        if (!resize_claimed_locked(q, capacity, &spare)) {
            rc = TK_ENOMEM;
            break;
        }
    }
    if (rc == TK_OK &&
        (q->leader == NULL || q->core->due(q->state, n->deadline_ns) < q->leader_due)) {
        /* due before what the leader waits for (or nobody leads): wake one */
        q->leader = NULL;
        atomic_fetch_add_explicit(&q->head_gen, 1, memory_order_relaxed);
        pthread_cond_signal(&q->available);
    }
    if (rc == TK_OK)
        unlock_after_op(q, &spare); /* grows ahead of need */
    else
        unlock_plain(q, &spare);
    return rc;
}

int tk_blocking_take(tk_queue *q, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    spare_block spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, INT64_MAX, 1, out, NULL, &spare);
    unlock_plain(q, &spare);
    return rc;
}

int tk_blocking_poll(tk_queue *q, int64_t timeout_ns, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    int64_t give_up = tk_deadline_after_ns(tk_clock_now_ns(), timeout_ns);
    if (give_up == INT64_MAX)
        give_up = INT64_MAX - 1; /* INT64_MAX means "never" to take_locked */
    spare_block spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, give_up, 1, out, NULL, &spare);
    unlock_plain(q, &spare);
    return rc;
}

int tk_blocking_take_batch(tk_queue *q, size_t max, tk_node **out, size_t *count) {
    if (out != NULL)
        *out = NULL;
    if (count != NULL)
        *count = 0;
    if (q == NULL || out == NULL || count == NULL || max == 0)
        return TK_EINVAL;
    spare_block spare = {NULL, 0};
    tk_node *list = NULL;
    size_t k = 0;
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, INT64_MAX, max, &list, &k, &spare);
    unlock_plain(q, &spare);
    if (rc == TK_OK) {
        *out = list;
        *count = k;
    }
    return rc;
}

int tk_blocking_remove(tk_queue *q, tk_node *n) {
    if (q == NULL || n == NULL)
        return TK_EINVAL;
    spare_block spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    int rc = q->core->remove(q->state, n);
    if (rc == TK_OK)
        wake_if_closed_and_empty_locked(q);
    else
        rc = TK_ENOENT;
    unlock_after_op(q, &spare); /* shrinks after a mass cancellation */
    return rc;
}

int tk_blocking_remove_first(tk_queue *q, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    spare_block spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    tk_node *n = q->core->first(q->state);
    if (n != NULL && q->core->remove(q->state, n) != TK_OK)
        n = NULL; /* a core that breaks its contract: report nothing rather than a node it holds */
    if (n != NULL)
        wake_if_closed_and_empty_locked(q);
    unlock_after_op(q, &spare);
    if (n == NULL)
        return TK_ENOENT;
    *out = n;
    return TK_OK;
}

int tk_blocking_peek(tk_queue *q, int64_t *deadline_ns, uint64_t *seq) {
    if (q == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&q->lock);
    const tk_node *n = q->core->first(q->state);
    if (n != NULL) {
        if (deadline_ns != NULL)
            *deadline_ns = n->deadline_ns;
        if (seq != NULL)
            *seq = n->seq;
    }
    pthread_mutex_unlock(&q->lock);
    return n != NULL ? TK_OK : TK_ENOENT;
}

size_t tk_blocking_size(tk_queue *q) {
    if (q == NULL)
        return 0;
    pthread_mutex_lock(&q->lock);
    size_t n = q->core->count(q->state);
    pthread_mutex_unlock(&q->lock);
    return n;
}

static bool take_all(const tk_node *n, void *ctx) {
    TK__UNUSED(n);
    TK__UNUSED(ctx);
    return true;
}

tk_node *tk_blocking_drain(tk_queue *q) {
    if (q == NULL)
        return NULL;
    spare_block spare = {NULL, 0};
    size_t k = 0;
    pthread_mutex_lock(&q->lock);
    tk_node *list = q->core->remove_if(q->state, take_all, NULL, &k);
    /* Sorted under the lock: sorting rewrites each node's link word, which a
     * remove() racing on another thread reads (under the lock) to find that
     * the node is no longer queued. */
    list = tk__node_sort(list, NULL);
    if (list != NULL)
        wake_if_closed_and_empty_locked(q);
    unlock_after_op(q, &spare);
    return list;
}

tk_node *tk_blocking_remove_if(tk_queue *q, bool (*pred)(const tk_node *n, void *ctx), void *ctx) {
    if (q == NULL || pred == NULL)
        return NULL;
    spare_block spare = {NULL, 0};
    size_t removed = 0;
    pthread_mutex_lock(&q->lock);
    tk_node *list = q->core->remove_if(q->state, pred, ctx, &removed);
    if (removed > 0)
        wake_if_closed_and_empty_locked(q);
    unlock_after_op(q, &spare);
    return list;
}

void tk_blocking_close(tk_queue *q, tk_queue_close_mode mode) {
    if (q == NULL || (mode != TK_QUEUE_CLOSE_WHEN_EMPTY && mode != TK_QUEUE_CLOSE_NOW))
        return;
    pthread_mutex_lock(&q->lock);
    if ((int)mode > q->closed)
        q->closed = (int)mode;
    atomic_fetch_add_explicit(&q->head_gen, 1, memory_order_relaxed); /* ends a spin */
    pthread_cond_broadcast(&q->available);
    pthread_mutex_unlock(&q->lock);
}

int tk_blocking_check(tk_queue *q) {
    if (q == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&q->lock);
    int rc = q->core->check(q->state) == TK_OK ? TK_OK : TK_ESTATE;
    if (rc == TK_OK && q->closed != OPEN && q->closed != TK_QUEUE_CLOSE_WHEN_EMPTY &&
        q->closed != TK_QUEUE_CLOSE_NOW)
        rc = TK_ESTATE;
    pthread_mutex_unlock(&q->lock);
    return rc;
}

uint64_t tk_blocking_wakeups(tk_queue *q) {
    return q == NULL ? 0 : atomic_load_explicit(&q->wakeups, memory_order_relaxed);
}
