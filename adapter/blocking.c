/* SPDX-License-Identifier: MIT */
/* timerkit: the generic blocking adapter (TK_BLOCKING_ADAPTER, engine.h).
 *
 * Structure. Any engine's pure core (tk_core_ops), one copy per shard, and a
 * waiting room for the takers. This is the JDK's DelayedWorkQueue
 * (ScheduledThreadPoolExecutor) in C, with the core in place of its heap,
 * leader-follower wait included, and split so that threads that offer at
 * the same time meet in no lock:
 *
 *   offer / remove ----> shard[key]: spin lock, core, head_due, wake_due,
 *                                     |  count (read by takers)
 *   take / poll / take_batch <--------+  room: mutex `lock`, condition
 *                                        variable `available`, leader
 *
 * - Shards. tk__shard_count() of them (the CPUs, rounded up to a power of
 *   two), each a core under a spin lock of its own, on cache lines of its
 *   own. A node lives in the shard its key says (tk_node_shard_key(n) modulo
 *   the shard count), so remove() finds it from the node alone; the
 *   executor gives each thread a key of its own. Each shard publishes
 *   `count` and two instants (INT64_MAX while it is empty):
 *     head_due, no later than the earliest due() of its nodes: from then on
 *       a taker that looks finds a node to hand out;
 *     wake_due, no later than the earliest end of a window among its nodes
 *       (a node's window ends at due(deadline + slack_ns), see "Slack"):
 *       the instant the room must wake for.
 *   An offer lowers head_due to its node's due() and wake_due to its
 *   window's end; a take (and any operation that refreshes a shard on its
 *   way out) raises them to the core's next() and latest() where those are
 *   later; a removal leaves them as they are, since the earliest
 *   node and window can only be later then (a taker that wakes for a node
 *   that was removed finds nothing and looks again). No write but an
 *   offer's ever lowers them: a published instant stays a correct lower
 *   bound when nodes leave, while a core's answer (a lower bound itself) may
 *   be earlier than an instant the room already waits for, and lowering to
 *   it would let a later offer skip the signal it needs (below). All three
 *   are written under the shard's lock and read by anyone.
 * - The room. Takers wait under `lock` on `available` (CLOCK_MONOTONIC). Of
 *   the threads blocked in take()/poll()/take_batch() while no node is due,
 *   only one, the leader, sleeps until the earliest wake_due of all shards;
 *   the others, the followers, wait without a deadline (or until their own
 *   poll timeout), so one due node wakes one thread instead of a herd. The
 *   room publishes `sleep_due`: an offer of a node whose window ends before
 *   it must take `lock` and signal. It is the leader's instant while one
 *   sleeps, INT64_MAX while takers wait with no leader (every offer wakes
 *   one), and INT64_MIN while nobody waits (no offer signals: a taker that
 *   comes later looks at the shards itself). So an offer that does not end
 *   a window earlier than its shard's, the usual case, touches its shard
 *   and the room's line it reads the close from.
 *   No lost wake-up: an offer stores its shard's wake_due, then reads
 *   sleep_due; a taker stores sleep_due, then reads every wake_due again
 *   before it sleeps (all sequentially consistent): one of them sees the
 *   other. The signal itself is sent under `lock`, which a taker holds from
 *   that look until pthread_cond_wait() releases it. An offer that lowers
 *   no wake_due sends nothing: its window ends at or after its shard's
 *   wake_due W. Either W was lowered by an offer since the taker looked,
 *   which ran this same exchange, or W is at least what the taker saw there,
 *   since nothing else lowers it, so the leader wakes no later than W.
 * - Slack (queue.h, "Slack"). The leader sleeps until the earliest window
 *   end, not the earliest deadline, and a taker that looks hands out every
 *   node whose head_due has passed, in (deadline, seq) order across the
 *   shards exactly as without slack: so one wake-up at a window's end hands
 *   out every node due by then. A core without latest() ignores slack: its
 *   windows end at due(deadline) (window_due()), and wake_due follows its
 *   next(). A node with slack 0 has its window end at its due(), so it
 *   wakes the room exactly as it would without slack. A wake_due left at
 *   or before `now` while no shard looks due (a scan that raced an offer's
 *   two stores) is raised from the core before the leader sleeps
 *   (refresh_passed_wakes()), so no leader spins on an instant already
 *   past; since head_due <= wake_due, a wake_due that went stale through a
 *   removal makes its shard look due, and the take that finds nothing there
 *   raises both.
 * - The rules that keep a thread responsible for the next window end: an
 *   offer whose window ends before the leader's instant (or while nobody
 *   leads) clears the leader and signals once; a taker that leaves (with
 *   nodes, a timeout, TK_ECLOSED or TK_EINTR) while nobody leads and nodes
 *   remain signals one waiter to take over; a take_batch() that leaves due nodes behind while
 *   others wait signals one of them; close(), wake() and a removal that
 *   empties a closed queue broadcast. Removals otherwise need no signal: the
 *   next instant can only move later, so the leader wakes no later than
 *   needed and sleeps again.
 * - Taking. A taker holds `lock` while it expires, so expire() sees a `now`
 *   that never decreases (read under `lock`). With one shard due, it expires
 *   up to its limit from that shard under one hold of the shard's lock.
 *   With several due at once, it takes one node at a time from the shard
 *   whose first node has the smallest (deadline, seq), so the nodes leave in
 *   exact (deadline, seq) order across shards, as they do within one.
 *
 * Lock order: `lock` -> a shard's lock; shards among themselves in index
 * order (drain, peek, remove_first and check take them all). A producer
 * never holds a shard's lock while it takes `lock`. No lock is held across
 * an allocation, except that a core may allocate inside insert() where it
 * resizes itself (cores without `resize`).
 *
 * The core's next() and latest() may be lower bounds (a hierarchical
 * wheel's next cascade): a taker that expires nothing at one asks the core
 * again, and the core contract guarantees next() has moved later. Idle
 * costs nothing: a leader sleeps until the earliest latest(), never per
 * tick, and with no node nobody sleeps with a deadline at all.
 *
 * Invariants: those of each shard's core (checked by check()); a shard's
 * count is its core's count() whenever its lock is free, and (checked by
 * check()) head_due <= wake_due, head_due no later than the earliest due()
 * of its nodes, wake_due no later than the earliest window end of its nodes
 * (wake_due is not kept at or below the core's latest(): that may be a
 * lower bound an insert lowered, and the window end the offer published
 * stays the better instant); `leader` is NULL or the token of a thread blocked in a
 * take on `available`, and `leader_due` the instant it waits for;
 * `waiters` counts the takers inside a wait or a spin; a shard's `resizing`
 * is set only while one thread, having claimed a resize of that shard, is
 * between dropping its lock to build the block and retaking it to adopt.
 *
 * Complexity: the core's, under a shard's lock, plus O(shards) loads of
 * head_due per take and O(1) per offer and remove; a take that finds
 * several shards due pays O(shards) lock round trips per node. drain() is a
 * remove_if() of every shard and an O(n log n) merge sort of the list (the
 * cores hand their nodes out in any order there; the sort runs with every
 * shard locked, since it rewrites the link word a racing remove() reads).
 * No operation allocates per node.
 *
 * Resizing without a lock held (cores with tk_core_ops.resize; the heap).
 * Each shard's core runs with its own resizing off (resize->manual()), so
 * nothing is allocated, first-touched or freed while a lock is held; the
 * one resize step under it is a copy into pages already faulted in. (A
 * first touch of a page is a fault: moving a large array into fresh pages
 * under a lock would stall every thread waiting for it;
 * docs/engine-notes.md has figures.) The steps, per shard:
 *   1. under the shard's lock, an operation sees resize->wanted() differ from
 *      the capacity and claims the resize (`resizing`: one at a time);
 *   2. it drops the lock, allocates the block and touches one byte per 4 KiB
 *      of the part that will be written soon (the entries to copy plus a
 *      sixteenth for the inserts that follow), then retakes the lock;
 *   3. resize->adopt() copies into the block if the move is still wanted;
 *      the array it leaves, or the block it refused, is freed after the lock
 *      is dropped again.
 * An offer that finds its shard's core full (TK_EFULL) waits (yielding) for
 * a resize under way, or claims one and grows the array itself, then
 * inserts again; only a failed allocation makes it return TK_ENOMEM (core
 * unchanged). An offer asks the core only when its shard is near its
 * capacity or down to a quarter of it (near_a_resize): the look is two
 * calls into the core, and most offers land in between. Who pays: offer
 * (growth, and a shrink that takes left due)
 * and the removal calls (shrink; remove() looks once in SHRINK_EVERY
 * removals and when its shard empties) do the work on their own time, after
 * their operation is complete. take(), poll() and take_batch() never resize on
 * the way out with nodes, since a worker's delay there delays its tasks;
 * they return an idle queue's memory only when about to wait on an empty
 * queue, with `lock` dropped. A failed allocation for a resize nobody waits
 * for is simply dropped; the next operation that sees the need tries again.
 *
 * Accuracy. Never early, whatever the slack: a node leaves through take()/poll()/take_batch()
 * only from expire(now) with `now` read from tk_clock_now_ns()
 * (CLOCK_MONOTONIC) under `lock` after waking, and the core hands out only
 * nodes with due(deadline) <= now, due() never below the deadline; a
 * wake-up that comes early (spurious, a signal, a clock rounding) just
 * loops. Lateness is the core's rounding (due(d) - d: nothing for an exact
 * core, up to a tick for a ticked one) plus the wake-up latency of
 * pthread_cond_timedwait (scheduler latency plus the thread's timer slack,
 * 50 us by default on Linux) and lock contention, counted from the node's
 * window end (its deadline with slack 0); with every taker busy a
 * due node waits for the next free one, which no queue can help.
 *
 * Spinning (tk_queue_config.spin_ns, default 0: off). A timed sleep wakes
 * after the OS's timer wake-up latency, which remains even with 1 ns of
 * timer slack. With spin_ns > 0 the leader sleeps only until spin_ns before
 * the instant it waits for (the earliest window end) and then busy-waits, with `lock` dropped so
 * offers and removals go on, until that instant, an earlier node (an offer
 * that signals bumps `head_gen`), a close or a wake() (which bump it too);
 * then it re-checks under `lock` as after any wake-up, so the never-early
 * rule is the same. The cost is CPU: up to spin_ns of one core per wait
 * that ends in a due node, nothing while the next node is further away.
 * Followers never spin.
 *
 * Batches. take_batch() waits exactly as take() does, then expires due
 * nodes under the same hold of `lock`, up to its `max`. While other takers
 * wait (`waiters`), it first counts the due nodes (core->count_due() of the
 * due shards, which stops at max * (waiters + 1)) and takes only a fair
 * share, max(1, due / (waiters + 1)). If due nodes are left it signals one
 * waiter, which takes its share the same way. Alone, it counts nothing and
 * takes up to max.
 *
 * The pending limit (tk_queue_config.max_pending, 0: none): offer() into a
 * queue that already holds that many nodes gets TK_EFULL. A bounded queue
 * keeps one count for every shard (`bounded`): an offer reserves its place
 * there before it takes its shard's lock, and every node that leaves gives
 * its place back, so the limit holds exactly whatever the shards. An
 * unbounded queue never touches it.
 *
 * wake() makes every taker blocked at that moment return TK_EINTR: it bumps
 * `wake_gen` under `lock` and broadcasts; a taker compares the generation
 * it saw on entry after each wait.
 *
 * remove() always completes at once (TK_OK or TK_ENOENT): the adapter never
 * returns TK_EINPROGRESS and never calls the `release` callback, so create()
 * accepts a NULL one. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
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

/* A removal looks whether its shard's array should shrink once in this
 * many removals (and when the shard empties): the look costs two calls into
 * the core, which a cancel that does nothing else cannot afford every
 * time, and an array left a little too large for a few more removals
 * costs nothing. */
#define SHRINK_EVERY ((size_t)64)

/* Bytes between two first touches: no page size in use is smaller, so every
 * page of a range gets at least one write. */
#define TOUCH_STRIDE ((size_t)4096)

#define LINE ((size_t)64)
#define LINE_UP(n) (((n) + LINE - 1) / LINE * LINE)

/* One shard: a core and what the takers read of it. */
typedef struct shard {
    tk__spinlock lock; /* guards state and resizing; count, head_due, wake_due written under it */
    bool resizing;     /* lock: a thread has claimed a resize and builds the block */
    size_t capacity;   /* lock: the core's resize->capacity() (only resizes here change it) */
    _Atomic int64_t head_due; /* no later than the earliest due() of a node; read anywhere */
    _Atomic int64_t wake_due; /* no later than the earliest window end; read anywhere */
    _Atomic size_t count;     /* the core's count(); read anywhere */
    void *state;              /* lock: the core's state (in the queue's allocation) */
} shard;

struct tk_queue {
    /* ---- immutable after create() ---- */
    const tk_core_ops *core;
    const tk_allocator *allocator; /* frees the queue itself */
    size_t bytes;                  /* size of the queue's allocation */
    shard *shards;                 /* `nshards` of them, each on lines of its own */
    size_t shard_stride;           /* bytes from one shard to the next */
    unsigned nshards;              /* a power of two */
    int64_t spin_ns;               /* see "Spinning" */
    size_t max_pending;            /* 0 or the pending limit */

    /* Nodes queued, kept only when max_pending is set (an offer reserves its
     * place here first): the one line every shard shares in a bounded queue. */
    char pad_bound_[LINE];
    atomic_size_t bounded;

    /* ---- the takers' room ---- */
    char pad0_[LINE];
    pthread_mutex_t lock;     /* guards the fields below marked "lock" */
    pthread_cond_t available; /* CLOCK_MONOTONIC; signalled as the essay says */
    const void *leader;       /* lock: token of the thread waiting for the next node */
    int64_t leader_due;       /* lock: the instant the leader waits for */
    size_t waiters;           /* lock: takers inside a wait or a spin */
    uint64_t wake_gen;        /* lock: wake() calls */
    _Atomic int closed;       /* written under lock (close()); OPEN or a close mode */
    /* Written under lock, read by offers: an offer due before it signals. */
    char pad1_[LINE];
    _Atomic int64_t sleep_due;
    _Atomic uint64_t head_gen; /* bumped (under lock) on an earlier node, close(), wake() */
    _Atomic uint64_t wakeups;  /* leader timed waits that returned (written under lock) */
    char pad2_[LINE];
};

/* ---- shards ------------------------------------------------------------------ */

/* Sets a list link: the detached link of a node (or the head of a list).
 * A list of nodes from several shards is joined with no lock held of the
 * shard the earlier node came from, while a remove() racing on another
 * thread may read that node's private area under that lock (to find that
 * the node has left): the store is atomic, and cores read that word
 * atomically where it may be so written (the heap's index word). */
static inline void link_to(tk_node **link, tk_node *next) {
    __atomic_store_n(link, next, __ATOMIC_RELAXED);
}

static inline shard *shard_at(const tk_queue *q, unsigned i) {
    return (shard *)(void *)((char *)q->shards + (size_t)i * q->shard_stride);
}

static inline shard *shard_of(const tk_queue *q, const tk_node *n) {
    return shard_at(q, tk_node_shard_key(n) & (q->nshards - 1u));
}

/* deadline + slack, saturating at INT64_MAX (slack >= 0: offer() checks). */
static inline int64_t window_end_ns(const tk_node *n) {
    return n->deadline_ns > INT64_MAX - n->slack_ns ? INT64_MAX : n->deadline_ns + n->slack_ns;
}

/* The instant n's window ends for sh's core: due(deadline + slack), or
 * due(deadline) for a core without latest(), which ignores slack and hands
 * each node out at the start of its window. Shard lock held. */
static inline int64_t window_due(const tk_queue *q, const shard *sh, const tk_node *n) {
    if (q->core->latest == NULL)
        return q->core->due(sh->state, n->deadline_ns);
    return q->core->due(sh->state, window_end_ns(n));
}

/* Publishes the shard's count, and raises head_due and wake_due to its
 * core's next() and latest() (next() without latest()) where those are
 * later. Never lowers them: a published instant stays a lower bound when
 * nodes leave, and only an offer, which wakes the room if it must, may make
 * one earlier (see "No lost wake-up"). Shard lock held. */
static void shard_refresh_locked(tk_queue *q, shard *sh) {
    int64_t head = INT64_MAX, wake;
    if (q->core->next(sh->state, &head) != TK_OK)
        head = INT64_MAX;
    wake = head;
    if (q->core->latest != NULL && head != INT64_MAX && q->core->latest(sh->state, &wake) != TK_OK)
        wake = head;
    if (atomic_load_explicit(&sh->head_due, memory_order_relaxed) < head)
        atomic_store(&sh->head_due, head);
    if (atomic_load_explicit(&sh->wake_due, memory_order_relaxed) < wake)
        atomic_store(&sh->wake_due, wake);
    atomic_store_explicit(&sh->count, q->core->count(sh->state), memory_order_relaxed);
}

static size_t total_count(const tk_queue *q) {
    size_t n = 0;
    for (unsigned i = 0; i < q->nshards; i++)
        n += atomic_load_explicit(&shard_at(q, i)->count, memory_order_relaxed);
    return n;
}

/* The earliest of one instant every shard publishes (head_due or wake_due,
 * chosen by `wake`) over all shards (INT64_MAX: every shard empty). */
static int64_t min_published(const tk_queue *q, bool wake) {
    int64_t m = INT64_MAX;
    for (unsigned i = 0; i < q->nshards; i++) {
        const shard *sh = shard_at(q, i);
        int64_t d = atomic_load(wake ? &sh->wake_due : &sh->head_due);
        if (d < m)
            m = d;
    }
    return m;
}

static int64_t min_head_due(const tk_queue *q) {
    return min_published(q, false);
}

static int64_t min_wake_due(const tk_queue *q) {
    return min_published(q, true);
}

static void lock_all(tk_queue *q) {
    for (unsigned i = 0; i < q->nshards; i++)
        tk__spin_lock(&shard_at(q, i)->lock);
}

static void unlock_all(tk_queue *q) {
    for (unsigned i = 0; i < q->nshards; i++) {
        shard *sh = shard_at(q, i);
        shard_refresh_locked(q, sh);
        tk__spin_unlock(&sh->lock);
    }
}

/* Gives back the places of k nodes that left a bounded queue. */
static inline void bound_release(tk_queue *q, size_t k) {
    if (q->max_pending != 0 && k != 0)
        atomic_fetch_sub_explicit(&q->bounded, k, memory_order_relaxed);
}

/* ---- resizing (cores with tk_core_ops.resize) ------------------------------ */

/* A block to hand back to the core's allocator once no lock is held. */
typedef struct spare_block {
    void *block; /* NULL: nothing to free */
    size_t capacity;
    void *state; /* the core it belongs to */
} spare_block;

/* Frees `spare` (if it holds a block) and empties it. No lock held. */
static void spare_free(tk_queue *q, spare_block *spare) {
    if (spare->block != NULL)
        q->core->resize->free_block(spare->state, spare->block, spare->capacity);
    spare->block = NULL;
    spare->capacity = 0;
}

/* Allocates a block of `capacity` entries and writes one byte in every page
 * of its first `touch` entries, so that the copy and the inserts that follow
 * find those pages already mapped. No lock held. NULL if the allocation
 * failed. */
static void *block_alloc_touched(tk_queue *q, const void *state, size_t capacity, size_t touch) {
    const tk_core_resize_ops *r = q->core->resize;
    void *block = r->alloc_block(state, capacity);
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

/* Carries out a resize of sh's core towards `capacity` that the caller has
 * claimed (it set sh->resizing). Caller holds sh's lock; it is dropped
 * around the allocation (which first frees what `spare` holds) and held
 * again on return, with the claim released. The array the core left, or the
 * block it no longer wanted, is left in `spare` for the caller to free after
 * unlocking. Returns false if the allocation failed (core unchanged). */
static bool resize_claimed_locked(tk_queue *q, shard *sh, size_t capacity, spare_block *spare) {
    size_t size = q->core->count(sh->state);
    size_t touch = size + size / 16 + 1;
    tk__spin_unlock(&sh->lock);
    spare_free(q, spare);
    void *block = block_alloc_touched(q, sh->state, capacity, touch);
    tk__spin_lock(&sh->lock);
    sh->resizing = false;
    spare->state = sh->state;
    if (block == NULL)
        return false;
    if (!q->core->resize->adopt(sh->state, block, capacity, &spare->block, &spare->capacity)) {
        spare->block = block; /* no longer wanted: the size moved meanwhile */
        spare->capacity = capacity;
    }
    sh->capacity = q->core->resize->capacity(sh->state);
    return true;
}

/* The capacity to resize sh's core to if a resize is due and nobody has
 * claimed one; 0 otherwise (and always for a core without `resize`). Shard
 * lock held. */
static size_t resize_due_locked(tk_queue *q, shard *sh) {
    const tk_core_resize_ops *r = q->core->resize;
    if (r == NULL || sh->resizing)
        return 0;
    size_t want = r->wanted(sh->state);
    return want != r->capacity(sh->state) ? want : 0;
}

/* Whether an offer that brought sh to `count` nodes should ask the core
 * about a resize: near its capacity (growing ahead of need) or down to a
 * quarter of it. Between the two the look, two calls into the core, is
 * skipped; a core that wants to move inside that band is moved at its next
 * look (and a full core still answers TK_EFULL, which grows it). Shard lock
 * held. */
static inline bool near_a_resize(const shard *sh, size_t count) {
    return count + count / 8 + 8 >= sh->capacity || count <= sh->capacity / 4;
}

/* Ends an operation on sh: does any resize that is due (a few steps at
 * most, the lock dropped around each allocation), publishes the shard,
 * unlocks, and frees what the core left. Shard lock held; `spare` holds
 * what is to be freed, if anything. */
static void shard_unlock_after_op(tk_queue *q, shard *sh, spare_block *spare) {
    shard_refresh_locked(q, sh); /* before a resize drops the lock */
    size_t capacity;
    for (int step = 0; step < 4 && (capacity = resize_due_locked(q, sh)) != 0; step++) {
        sh->resizing = true;
        if (!resize_claimed_locked(q, sh, capacity, spare))
            break; /* out of memory: a later operation tries again */
    }
    shard_refresh_locked(q, sh);
    tk__spin_unlock(&sh->lock);
    spare_free(q, spare);
}

/* Returns the memory of every shard whose core wants to shrink. No lock
 * held (a taker about to idle on an empty queue). */
static void shrink_idle(tk_queue *q) {
    if (q->core->resize == NULL)
        return;
    for (unsigned i = 0; i < q->nshards; i++) {
        shard *sh = shard_at(q, i);
        spare_block spare = {NULL, 0, sh->state};
        tk__spin_lock(&sh->lock);
        size_t capacity = resize_due_locked(q, sh);
        if (capacity != 0) {
            sh->resizing = true;
            (void)resize_claimed_locked(q, sh, capacity, &spare);
        }
        shard_refresh_locked(q, sh);
        tk__spin_unlock(&sh->lock);
        spare_free(q, &spare);
    }
}

/* ---- the room ------------------------------------------------------------------- */

/* Publishes sleep_due from the room's state (see the essay). lock held. */
static void publish_sleep_locked(tk_queue *q) {
    int64_t s = q->waiters == 0 ? INT64_MIN : q->leader != NULL ? q->leader_due : INT64_MAX;
    atomic_store(&q->sleep_due, s);
}

/* After a node left a closed queue: if the queue is now empty, release every
 * blocked taker with TK_ECLOSED. No shard lock held; takes `lock`. */
static void wake_if_closed_and_empty(tk_queue *q) {
    if (atomic_load(&q->closed) == OPEN || total_count(q) != 0)
        return;
    pthread_mutex_lock(&q->lock);
    pthread_cond_broadcast(&q->available);
    pthread_mutex_unlock(&q->lock);
}

/* An offer made the window ending at `end` the earliest of its shard (it
 * lowered wake_due): wakes a taker if the room waits for something later.
 * No lock held. */
static void offer_wake(tk_queue *q, int64_t end) {
    if (end >= atomic_load(&q->sleep_due))
        return;
    pthread_mutex_lock(&q->lock);
    if (q->waiters > 0 && (q->leader == NULL || end < q->leader_due)) {
        /* a window ends before what the leader waits for (or nobody leads): wake one */
        q->leader = NULL;
        atomic_fetch_add_explicit(&q->head_gen, 1, memory_order_relaxed);
        publish_sleep_locked(q);
        pthread_cond_signal(&q->available);
    }
    pthread_mutex_unlock(&q->lock);
}

/* Waits on `available` until woken or until `deadline_ns` (INT64_MAX: no
 * deadline). lock held. Spurious wake-ups are the caller's loop's problem. */
static void wait_locked(tk_queue *q, int64_t deadline_ns) {
    if (deadline_ns == INT64_MAX) {
        pthread_cond_wait(&q->available, &q->lock);
    } else {
        struct timespec ts = tk__ns_to_timespec(deadline_ns);
        (void)pthread_cond_timedwait(&q->available, &q->lock, &ts);
    }
}

/* The leader's busy-wait for the last spin_ns before `deadline_ns`. lock
 * held; dropped while spinning and held again on return. Ends at the
 * deadline, on an earlier node, on close() or on wake(). */
static void spin_until_locked(tk_queue *q, int64_t deadline_ns) {
    uint64_t gen = atomic_load_explicit(&q->head_gen, memory_order_relaxed);
    pthread_mutex_unlock(&q->lock);
    while (tk_clock_now_ns() < deadline_ns &&
           atomic_load_explicit(&q->head_gen, memory_order_relaxed) == gen)
        tk__cpu_relax();
    pthread_mutex_lock(&q->lock);
}

/* ---- taking ---------------------------------------------------------------------- */

/* What a taker saw of the shards. */
typedef struct scan {
    int64_t min_due;  /* earliest head_due (INT64_MAX: none, or only nodes at the end of time) */
    int64_t min_wake; /* earliest wake_due: the instant a leader sleeps until */
    unsigned due;     /* shards with head_due <= now */
    shard *first;     /* one of them (the one with the earliest head_due) */
    bool any;         /* a shard holds a node */
} scan;

static scan scan_shards(tk_queue *q, int64_t now) {
    scan s = {INT64_MAX, INT64_MAX, 0, NULL, false};
    for (unsigned i = 0; i < q->nshards; i++) {
        shard *sh = shard_at(q, i);
        int64_t d = atomic_load(&sh->head_due);
        int64_t w = atomic_load(&sh->wake_due);
        if (atomic_load_explicit(&sh->count, memory_order_relaxed) != 0)
            s.any = true;
        if (d <= now)
            s.due++;
        if (d < s.min_due) {
            s.min_due = d;
            s.first = sh;
        }
        if (w < s.min_wake)
            s.min_wake = w;
    }
    return s;
}

/* Raises, from its core, the wake_due of every shard whose wake_due is at
 * or before `now` though its head_due was not (seen by a scan that raced an
 * offer, or a bound left low): a leader that woke for it and found nothing
 * due looks again rather than sleeping until an instant already past.
 * lock held (the shards' locks are taken one at a time). */
static void refresh_passed_wakes(tk_queue *q, int64_t now) {
    for (unsigned i = 0; i < q->nshards; i++) {
        shard *sh = shard_at(q, i);
        if (atomic_load(&sh->wake_due) > now)
            continue;
        tk__spin_lock(&sh->lock);
        shard_refresh_locked(q, sh);
        tk__spin_unlock(&sh->lock);
    }
}

/* How many due nodes (due at `now`) a batch of at most `max` takes: all it
 * may alone, a fair share while others wait (see "Batches"). lock held. */
static size_t batch_limit_locked(tk_queue *q, int64_t now, size_t max) {
    if (q->waiters == 0)
        return max;
    size_t ways = q->waiters + 1;
    size_t enough = max > SIZE_MAX / ways ? SIZE_MAX : max * ways;
    size_t due = 0;
    for (unsigned i = 0; i < q->nshards && due < enough; i++) {
        shard *sh = shard_at(q, i);
        if (atomic_load(&sh->head_due) > now)
            continue;
        tk__spin_lock(&sh->lock);
        due += q->core->count_due(sh->state, now, enough - due);
        tk__spin_unlock(&sh->lock);
    }
    size_t share = due / ways;
    return share < 1 ? 1 : share < max ? share : max;
}

/* Among the shards with head_due <= now, the one whose first node has the
 * smallest (deadline, seq); NULL if none holds a node. lock held (the
 * shards' locks are taken one at a time). */
static shard *earliest_due_shard(tk_queue *q, int64_t now) {
    shard *best = NULL;
    tk_node key = {.deadline_ns = 0, .seq = 0};
    for (unsigned i = 0; i < q->nshards; i++) {
        shard *sh = shard_at(q, i);
        if (atomic_load(&sh->head_due) > now)
            continue;
        tk__spin_lock(&sh->lock);
        const tk_node *f = q->core->first(sh->state);
        if (f != NULL && (best == NULL || tk_node_before(f, &key))) {
            best = sh;
            key.deadline_ns = f->deadline_ns;
            key.seq = f->seq;
        }
        tk__spin_unlock(&sh->lock);
    }
    return best;
}

/* Expires from one shard at most `max` nodes due at `now`, appending them
 * to *tail. lock held. Returns how many. */
static size_t expire_from(tk_queue *q, shard *sh, int64_t now, size_t max, tk_node ***tail) {
    size_t k = 0;
    tk__spin_lock(&sh->lock);
    tk_node *list = q->core->expire(sh->state, now, max, &k);
    shard_refresh_locked(q, sh);
    tk__spin_unlock(&sh->lock);
    bound_release(q, k);
    if (k > 0) {
        link_to(*tail, list);
        tk_node *last = list;
        while (tk_node_next_detached(last) != NULL)
            last = tk_node_next_detached(last);
        *tail = &last->tk__priv.detached_next;
    }
    return k;
}

/* Hands out up to `limit` due nodes (due at `now`; s is the scan that saw
 * them) as a detached list in (deadline, seq) order. lock held. Returns how
 * many (0: next() was a lower bound, or a removal got there first). */
static size_t expire_due_locked(tk_queue *q, const scan *s, int64_t now, size_t limit,
                                tk_node **out) {
    tk_node *head = NULL, **tail = &head;
    size_t k;
    if (s->due == 1) {
        k = expire_from(q, s->first, now, limit, &tail);
    } else {
        /* several shards due: one node at a time from the earliest */
        k = 0;
        shard *sh;
        while (k < limit && (sh = earliest_due_shard(q, now)) != NULL) {
            size_t got = expire_from(q, sh, now, 1, &tail);
            if (got == 0)
                break;
            k += got;
        }
    }
    *out = head;
    return k;
}

/* The body of take(), poll() and take_batch(): waits until a node is due,
 * until `give_up_ns` (INT64_MAX: never), until the queue is closed or until
 * wake(), then hands out one node (count NULL: *out is the node) or up to
 * `max` due ones (*out is a list linked through detached_next, *count their
 * number). lock held (dropped while waiting, spinning or shrinking).
 * Returns TK_OK, TK_ETIMEDOUT, TK_ECLOSED or TK_EINTR. */
static int take_locked(tk_queue *q, int64_t give_up_ns, size_t max, tk_node **out, size_t *count) {
    char me = 0; /* this thread's leader token: its address is unique while we wait */
    bool shrink_tried = false;
    bool due_left = false; /* a batch left due nodes behind */
    uint64_t gen = q->wake_gen;
    int rc;
    for (;;) {
        int closed = atomic_load(&q->closed);
        if (closed == TK_QUEUE_CLOSE_NOW) {
            rc = TK_ECLOSED;
            break;
        }
        int64_t now = tk_clock_now_ns();
        scan s = scan_shards(q, now);
        if (s.due > 0) {
            size_t limit = count == NULL ? 1 : batch_limit_locked(q, now, max);
            tk_node *list = NULL;
            size_t k = expire_due_locked(q, &s, now, limit, &list);
            if (k == 0)
                continue; /* next() was a lower bound (a cascade): it has moved on */
            *out = list;
            if (count != NULL) {
                *count = k;
                due_left = min_head_due(q) <= now;
            }
            if (closed != OPEN && total_count(q) == 0)
                pthread_cond_broadcast(&q->available); /* the rest now see it closed and empty */
            rc = TK_OK;
            break;
        }
        if (s.min_wake <= now) {
            /* a window ended though no shard looked due: a stale bound */
            refresh_passed_wakes(q, now);
            continue;
        }
        bool any = s.any;
        if (!any && closed == TK_QUEUE_CLOSE_WHEN_EMPTY) {
            rc = TK_ECLOSED;
            break;
        }
        if (now >= give_up_ns) {
            rc = TK_ETIMEDOUT;
            break;
        }
        if (q->wake_gen != gen) {
            rc = TK_EINTR;
            break;
        }
        if (!any && !shrink_tried && q->core->resize != NULL) {
            /* about to idle on an empty queue: return its memory first */
            shrink_tried = true;
            pthread_mutex_unlock(&q->lock);
            shrink_idle(q);
            pthread_mutex_lock(&q->lock);
            continue; /* the lock was dropped: look again */
        }
        q->waiters++;
        bool lead = any && q->leader == NULL;
        if (lead) {
            /* Lead, also when giving up before the next node is due (a poll()
             * with a timeout): offers of later nodes compare with leader_due
             * and need not wake us. Leaving early hands the lead on (below). */
            q->leader = &me;
            q->leader_due = s.min_wake;
        }
        publish_sleep_locked(q);
        /* No lost wake-up: look at the shards again after publishing. */
        if (min_wake_due(q) >= atomic_load(&q->sleep_due)) {
            if (!lead) {
                wait_locked(q, give_up_ns); /* follower (or nothing queued) */
            } else {
                int64_t when = s.min_wake; /* the earliest window end */
                int64_t sleep_until = q->spin_ns == 0 ? when : when - q->spin_ns;
                if (q->spin_ns == 0 || when - now > q->spin_ns) {
                    /* sleep until the instant (or until spin_ns before it,
                     * then spin the rest), or until we give up */
                    wait_locked(q, sleep_until < give_up_ns ? sleep_until : give_up_ns);
                    atomic_fetch_add_explicit(&q->wakeups, 1, memory_order_relaxed);
                } else {
                    spin_until_locked(q, when < give_up_ns ? when : give_up_ns);
                }
            }
        }
        if (q->leader == &me)
            q->leader = NULL;
        q->waiters--;
        publish_sleep_locked(q);
    }
    /* Leaving: hand the next node over to a waiter if nobody leads, and the
     * due nodes a batch left to a waiter at once. */
    if (q->waiters != 0 && atomic_load(&q->closed) != TK_QUEUE_CLOSE_NOW && total_count(q) != 0 &&
        (q->leader == NULL || due_left))
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

/* Destroys the first `n` shards' cores. */
static void destroy_cores(tk_queue *q, unsigned n) {
    for (unsigned i = 0; i < n; i++)
        q->core->destroy(shard_at(q, i)->state);
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
    unsigned nshards = tk__shard_count();
    /* the queue, then (on a line boundary) the shards, each followed by its
     * core's state, each shard on lines of its own */
    if (core->size > SIZE_MAX / 2 / TK__THREAD_SLOTS)
        return TK_EINVAL;
    size_t stride = LINE_UP(sizeof(shard)) + LINE_UP(core->size);
    size_t bytes = sizeof(struct tk_queue) + LINE + (size_t)nshards * stride;
    tk_queue *q = tk__alloc(a, bytes);
    if (q == NULL)
        return TK_ENOMEM;
    memset(q, 0, bytes);
    q->allocator = a;
    q->bytes = bytes;
    q->core = core;
    q->nshards = nshards;
    q->shard_stride = stride;
    q->shards = (shard *)(((uintptr_t)(q + 1) + LINE - 1) & ~(uintptr_t)(LINE - 1));
    q->spin_ns = c.spin_ns;
    q->max_pending = c.max_pending;
    q->leader = NULL;
    atomic_init(&q->closed, OPEN);
    atomic_init(&q->bounded, 0);
    atomic_init(&q->sleep_due, INT64_MIN);
    atomic_init(&q->head_gen, 0);
    atomic_init(&q->wakeups, 0);
    int64_t origin = tk_clock_now_ns(); /* one grid for every shard */
    int rc = TK_OK;
    unsigned made = 0;
    for (; made < nshards; made++) {
        shard *sh = shard_at(q, made);
        tk__spin_init(&sh->lock);
        atomic_init(&sh->head_due, INT64_MAX);
        atomic_init(&sh->wake_due, INT64_MAX);
        atomic_init(&sh->count, 0);
        sh->state = (char *)sh + LINE_UP(sizeof(shard));
        rc = core->init(sh->state, tk__queue_config_params(&c), a, origin);
        if (rc != TK_OK)
            break;
        if (core->resize != NULL) {
            core->resize->manual(sh->state); /* we resize, outside the locks */
            sh->capacity = core->resize->capacity(sh->state);
        }
    }
    if (rc != TK_OK) {
        destroy_cores(q, made);
        tk__free(a, q, bytes);
        return rc == TK_EINVAL ? TK_EINVAL : TK_ENOMEM;
    }
    rc = TK_ENOMEM;
    if (pthread_mutex_init(&q->lock, NULL) != 0)
        goto fail_mutex;
    if (tk__cond_init_monotonic(&q->available) != 0)
        goto fail_cond;
    *out = q;
    return TK_OK;

fail_cond:
    pthread_mutex_destroy(&q->lock);
fail_mutex:
    destroy_cores(q, nshards);
    tk__free(a, q, bytes);
    return rc;
}

void tk_blocking_destroy(tk_queue *q) {
    if (q == NULL)
        return;
    destroy_cores(q, q->nshards);
    pthread_cond_destroy(&q->available);
    pthread_mutex_destroy(&q->lock);
    tk__free(q->allocator, q, q->bytes);
}

/* Inserts n into sh's core, growing its array if needed. Shard lock held
 * (dropped and retaken around a resize). Returns insert()'s status. */
static int insert_locked(tk_queue *q, shard *sh, tk_node *n, spare_block *spare) {
    for (;;) {
        int rc = q->core->insert(sh->state, n);
        if (rc == TK_EFULL && q->core->resize == NULL)
            return TK_ENOMEM; /* the core could not take it (TK_EFULL is for manual resizing) */
        if (rc != TK_EFULL)
            return rc;
        if (sh->resizing) { /* someone is building a block: wait for theirs */
            tk__spin_unlock(&sh->lock);
            sched_yield();
            tk__spin_lock(&sh->lock);
            continue;
        }
        size_t capacity = q->core->resize->wanted(sh->state);
        if (capacity <= q->core->resize->capacity(sh->state))
            return TK_ENOMEM; /* no larger array can be represented */
        sh->resizing = true;
        if (!resize_claimed_locked(q, sh, capacity, spare))
            return TK_ENOMEM;
    }
}

int tk_blocking_offer(tk_queue *q, tk_node *n) {
    if (q == NULL || n == NULL || n->slack_ns < 0)
        return TK_EINVAL;
    if (q->max_pending != 0 &&
        atomic_fetch_add_explicit(&q->bounded, 1, memory_order_relaxed) >= q->max_pending) {
        bound_release(q, 1);
        return TK_EFULL;
    }
    shard *sh = shard_of(q, n);
    spare_block spare = {NULL, 0, sh->state};
    tk__spin_lock(&sh->lock);
    if (atomic_load_explicit(&q->closed, memory_order_relaxed) == TK_QUEUE_CLOSE_NOW) {
        tk__spin_unlock(&sh->lock);
        bound_release(q, 1);
        return TK_ECLOSED;
    }
    int rc = insert_locked(q, sh, n, &spare);
    if (rc != TK_OK) {
        tk__spin_unlock(&sh->lock);
        spare_free(q, &spare);
        bound_release(q, 1);
        return rc;
    }
    int64_t due = q->core->due(sh->state, n->deadline_ns);
    int64_t end = n->slack_ns == 0 ? due : window_due(q, sh, n);
    if (due < atomic_load_explicit(&sh->head_due, memory_order_relaxed))
        atomic_store(&sh->head_due, due);
    bool earliest = end < atomic_load_explicit(&sh->wake_due, memory_order_relaxed);
    if (earliest)
        atomic_store(&sh->wake_due, end); /* sequentially consistent: see the essay */
    size_t count = atomic_load_explicit(&sh->count, memory_order_relaxed) + 1;
    atomic_store_explicit(&sh->count, count, memory_order_relaxed);
    if (TK__UNLIKELY(q->core->resize != NULL && near_a_resize(sh, count) &&
                     resize_due_locked(q, sh) != 0)) {
        shard_unlock_after_op(q, sh, &spare); /* grows ahead of need */
    } else {
        tk__spin_unlock(&sh->lock);
        spare_free(q, &spare); /* the array a grow inside insert_locked() left */
    }
    if (earliest)
        offer_wake(q, end);
    return TK_OK;
}

int tk_blocking_take(tk_queue *q, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, INT64_MAX, 1, out, NULL);
    pthread_mutex_unlock(&q->lock);
    return rc;
}

int tk_blocking_poll(tk_queue *q, int64_t timeout_ns, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    int64_t give_up = tk_deadline_after_ns(tk_clock_now_ns(), timeout_ns);
    if (give_up == INT64_MAX)
        give_up = INT64_MAX - 1; /* INT64_MAX means "never" to take_locked */
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, give_up, 1, out, NULL);
    pthread_mutex_unlock(&q->lock);
    return rc;
}

int tk_blocking_take_batch(tk_queue *q, size_t max, tk_node **out, size_t *count) {
    if (out != NULL)
        *out = NULL;
    if (count != NULL)
        *count = 0;
    if (q == NULL || out == NULL || count == NULL || max == 0)
        return TK_EINVAL;
    tk_node *list = NULL;
    size_t k = 0;
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, INT64_MAX, max, &list, &k);
    pthread_mutex_unlock(&q->lock);
    if (rc == TK_OK) {
        *out = list;
        *count = k;
    }
    return rc;
}

int tk_blocking_remove(tk_queue *q, tk_node *n) {
    if (q == NULL || n == NULL)
        return TK_EINVAL;
    shard *sh = shard_of(q, n);
    tk__spin_lock(&sh->lock);
    if (q->core->remove(sh->state, n) != TK_OK) {
        spare_block spare = {NULL, 0, sh->state};
        shard_unlock_after_op(q, sh, &spare); /* a rare call: it does any shrink due */
        return TK_ENOENT;
    }
    /* head_due and wake_due stay: they were no later than the earliest
     * due() and window end, which can only be later now (a lower bound is
     * allowed) */
    size_t count = atomic_load_explicit(&sh->count, memory_order_relaxed) - 1;
    atomic_store_explicit(&sh->count, count, memory_order_relaxed);
    if (TK__UNLIKELY(count % SHRINK_EVERY == 0 && q->core->resize != NULL)) {
        spare_block spare = {NULL, 0, sh->state};
        shard_unlock_after_op(q, sh, &spare); /* shrinks after a mass cancellation */
    } else {
        tk__spin_unlock(&sh->lock);
    }
    bound_release(q, 1);
    wake_if_closed_and_empty(q);
    return TK_OK;
}

int tk_blocking_remove_first(tk_queue *q, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    lock_all(q);
    shard *best = NULL;
    tk_node *n = NULL;
    for (unsigned i = 0; i < q->nshards; i++) {
        shard *sh = shard_at(q, i);
        tk_node *f = q->core->first(sh->state);
        if (f != NULL && (n == NULL || tk_node_before(f, n))) {
            n = f;
            best = sh;
        }
    }
    if (n != NULL && q->core->remove(best->state, n) != TK_OK)
        n = NULL; /* a core that breaks its contract: report nothing rather than a node it holds */
    unlock_all(q);
    if (n == NULL)
        return TK_ENOENT;
    bound_release(q, 1);
    wake_if_closed_and_empty(q);
    *out = n;
    return TK_OK;
}

int tk_blocking_peek(tk_queue *q, int64_t *deadline_ns, uint64_t *seq) {
    if (q == NULL)
        return TK_EINVAL;
    lock_all(q);
    const tk_node *n = NULL;
    for (unsigned i = 0; i < q->nshards; i++) {
        const tk_node *f = q->core->first(shard_at(q, i)->state);
        if (f != NULL && (n == NULL || tk_node_before(f, n)))
            n = f;
    }
    if (n != NULL) {
        if (deadline_ns != NULL)
            *deadline_ns = n->deadline_ns;
        if (seq != NULL)
            *seq = n->seq;
    }
    unlock_all(q);
    return n != NULL ? TK_OK : TK_ENOENT;
}

size_t tk_blocking_size(tk_queue *q) {
    return q == NULL ? 0 : total_count(q);
}

static bool take_all(const tk_node *n, void *ctx) {
    TK__UNUSED(n);
    TK__UNUSED(ctx);
    return true;
}

/* Appends the list `l` to the list ending at *tail. */
static void append(tk_node ***tail, tk_node *l) {
    link_to(*tail, l);
    while (**tail != NULL)
        *tail = &(**tail)->tk__priv.detached_next;
}

tk_node *tk_blocking_drain(tk_queue *q) {
    if (q == NULL)
        return NULL;
    tk_node *list = NULL, **tail = &list;
    size_t drained = 0;
    lock_all(q);
    for (unsigned i = 0; i < q->nshards; i++) {
        size_t k = 0;
        append(&tail, q->core->remove_if(shard_at(q, i)->state, take_all, NULL, &k));
        drained += k;
    }
    /* Sorted with the shards locked: sorting rewrites each node's link word,
     * which a remove() racing on another thread reads (under its shard's
     * lock) to find that the node is no longer queued. */
    list = tk__node_sort(list, NULL);
    unlock_all(q);
    bound_release(q, drained);
    if (list != NULL) {
        wake_if_closed_and_empty(q);
        shrink_idle(q);
    }
    return list;
}

tk_node *tk_blocking_remove_if(tk_queue *q, bool (*pred)(const tk_node *n, void *ctx), void *ctx) {
    if (q == NULL || pred == NULL)
        return NULL;
    tk_node *list = NULL, **tail = &list;
    size_t removed = 0;
    for (unsigned i = 0; i < q->nshards; i++) {
        shard *sh = shard_at(q, i);
        spare_block spare = {NULL, 0, sh->state};
        size_t k = 0;
        tk__spin_lock(&sh->lock);
        tk_node *l = q->core->remove_if(sh->state, pred, ctx, &k);
        shard_unlock_after_op(q, sh, &spare);
        if (k > 0) {
            append(&tail, l);
            removed += k;
        }
    }
    if (removed > 0) {
        bound_release(q, removed);
        wake_if_closed_and_empty(q);
    }
    return list;
}

void tk_blocking_close(tk_queue *q, tk_queue_close_mode mode) {
    if (q == NULL || (mode != TK_QUEUE_CLOSE_WHEN_EMPTY && mode != TK_QUEUE_CLOSE_NOW))
        return;
    pthread_mutex_lock(&q->lock);
    if ((int)mode > atomic_load(&q->closed))
        atomic_store(&q->closed, (int)mode);
    atomic_fetch_add_explicit(&q->head_gen, 1, memory_order_relaxed); /* ends a spin */
    pthread_cond_broadcast(&q->available);
    pthread_mutex_unlock(&q->lock);
    /* An offer that read the queue open holds its shard's lock until its
     * node is in: after this pass every offer in flight is done, and every
     * later one sees the close. */
    for (unsigned i = 0; i < q->nshards; i++) {
        shard *sh = shard_at(q, i);
        tk__spin_lock(&sh->lock);
        tk__spin_unlock(&sh->lock);
    }
}

void tk_blocking_wake(tk_queue *q) {
    if (q == NULL)
        return;
    pthread_mutex_lock(&q->lock);
    q->wake_gen++;
    atomic_fetch_add_explicit(&q->head_gen, 1, memory_order_relaxed); /* ends a spin */
    pthread_cond_broadcast(&q->available);
    pthread_mutex_unlock(&q->lock);
}

/* check()'s look at every node of a shard: is it filed under its key, and
 * which of its windows ends first? */
typedef struct shard_look {
    const tk_queue *q;
    const shard *sh;
    unsigned index, mask;
    bool misfiled;
    int64_t min_end; /* the smallest window_due() */
} shard_look;

static bool look_at(const tk_node *n, void *ctx) {
    shard_look *look = ctx;
    if ((tk_node_shard_key(n) & look->mask) != look->index)
        look->misfiled = true;
    int64_t end = window_due(look->q, look->sh, n);
    if (end < look->min_end)
        look->min_end = end;
    return false; /* looks only */
}

int tk_blocking_check(tk_queue *q) {
    if (q == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&q->lock);
    lock_all(q);
    int rc = TK_OK;
    for (unsigned i = 0; i < q->nshards && rc == TK_OK; i++) {
        shard *sh = shard_at(q, i);
        if (q->core->check(sh->state) != TK_OK)
            rc = TK_ESTATE;
        /* "Invariants": head_due <= wake_due, head_due no later than the
         * earliest due node, wake_due no later than the earliest window
         * end. Not wake_due <= latest(): a core's latest() may be a lower
         * bound that an insert lowers below the window end an offer
         * published, which stays a correct instant to wake at. */
        const tk_node *f = q->core->first(sh->state);
        int64_t due = f != NULL ? q->core->due(sh->state, f->deadline_ns) : INT64_MAX;
        int64_t head = atomic_load(&sh->head_due);
        int64_t wake = atomic_load(&sh->wake_due);
        if (head > due || head > wake || atomic_load(&sh->count) != q->core->count(sh->state))
            rc = TK_ESTATE;
        shard_look look = {q, sh, i, q->nshards - 1u, false, INT64_MAX};
        size_t none = 0;
        (void)q->core->remove_if(sh->state, look_at, &look, &none);
        if (look.misfiled || none != 0 || wake > look.min_end)
            rc = TK_ESTATE;
    }
    int closed = atomic_load(&q->closed);
    if (rc == TK_OK && closed != OPEN && closed != TK_QUEUE_CLOSE_WHEN_EMPTY &&
        closed != TK_QUEUE_CLOSE_NOW)
        rc = TK_ESTATE;
    if (rc == TK_OK && q->leader != NULL && q->waiters == 0)
        rc = TK_ESTATE;
    for (unsigned i = 0; i < q->nshards; i++)
        tk__spin_unlock(&shard_at(q, i)->lock);
    pthread_mutex_unlock(&q->lock);
    return rc;
}

uint64_t tk_blocking_wakeups(tk_queue *q) {
    return q == NULL ? 0 : atomic_load_explicit(&q->wakeups, memory_order_relaxed);
}
