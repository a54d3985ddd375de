/* SPDX-License-Identifier: MIT */
/* timerkit: the wheel engine's tick thread and the work of its pass.
 *
 * wheel-adapter.c describes the engine as a whole (structure, node states,
 * ordering and accuracy, idle behaviour, locks); this file holds the tick
 * thread and what one of its passes does, in this order, one function a
 * step (tick_main() calls them), with core_lock held except while release
 * callbacks run and while the thread sleeps:
 *
 *   1. pass_cancels_locked(): takes each shard's whole cancel stack and,
 *      RELEASE_CHUNK nodes at a time, unlinks them from their buckets (their
 *      neighbours prefetched together) and releases them with core_lock
 *      dropped;
 *   2. pass_pending_locked(): takes every shard's whole pending stack into
 *      the backlog (the shards' nodes merged in key order), nodes due within
 *      a revolution apart from the rest, and moves backlog nodes into
 *      buckets, near ones first: at most TRANSFER_LIMIT of them and about
 *      one tick of work per pass. A pass that takes FLOOD_POLL_MIN offers or
 *      more starts a flood (see "Idle behaviour" in wheel-adapter.c);
 *   3. pass_expire_locked(): advances the core towards the tick of the
 *      current time, whole ticks at a time (a tick of many nodes whose
 *      bucket is in key order a chunk at a time), and publishes each chunk
 *      of about EXPIRE_CHUNK nodes to the ready set before it expires the
 *      next. While the backlog is not empty it stops before the tick of the
 *      backlog's earliest deadline, so that a node the transfer left behind
 *      still joins its own tick;
 *   4. pass_release_zombies_locked(): releases the zombie list (nodes found
 *      cancelled while pending, and those that other core_lock holders
 *      unlinked) with core_lock dropped;
 *   5. plan_sleep_locked(): plans the sleep: to the tick of the earliest
 *      end of a window among the bucketed nodes (deadline + slack_ns; the
 *      next tick that can expire something when no node has slack), the
 *      next tick while a backlog remains or hand-offs arrived during the
 *      pass, at most FLOOD_POLL_NS ahead during a flood, without limit when
 *      the wheel is empty; publishes the wake threshold and sleep_long for
 *      producers and removers, then looks at the stacks once more (the
 *      Dekker protocol of the essay);
 *   6. sleep_to_plan(): sleeps, with core_lock dropped, busy-waiting the
 *      last spin_ns when that is set.
 *
 * Invariants. The pass moves a node on only by a CAS of its state word
 * (PENDING -> BUCKETED in the transfer, BUCKETED -> READY when published)
 * and a remover claims it by a CAS too, so exactly one of them wins each
 * node; a node the core expired after a remover had claimed it gets
 * rounds = DETACHED and is not unlinked twice. backlog_min_ns is a lower
 * bound of the backlog's deadlines, so no tick a backlog node belongs to is
 * expired before the node is in its bucket. A chunk holds whole ticks, or
 * the first part of a tick whose bucket is in key order, so the keys of
 * successive chunks never interleave.
 *
 * Complexity per pass: O(shards + cancelled + taken log shards + moved +
 * expired log min(expired, TK__NODE_SORT_PIECE)), `taken` the offers taken
 * off the stacks (the log only when several shards had some), the last term
 * O(expired) when a chunk is in key order already (the usual case), plus
 * the plan's scan of the occupied buckets and, when a node in the core may
 * have slack, the nodes its walk reads (at most LATEST_BUDGET). The pass
 * reads an idle shard's line only; it writes a shard's line (its exchange)
 * only when that shard's stack holds a node.
 *
 * Accuracy. A node reaches the ready set only once the clock has reached a
 * tick instant at or after its deadline: never early. Its lateness past the
 * end of its window (its deadline when it has no slack) is at most one tick
 * plus this thread's wake-up latency (its timer slack is set to 1 us), the
 * time of the pass and a worker's wake-up.
 *
 * Slack. The thread sleeps until the earliest end of a window, not the
 * earliest deadline (see "Slack" in wheel-adapter.c), and its pass then
 * expires every tick up to the current time, as always: whatever is due by
 * then leaves in that one pass, in the order of whole ticks. The plan is
 * wheel-core.c's latest tick, whose walk reads at most LATEST_BUDGET nodes;
 * past that it answers the tick where it stopped: an earlier wake-up, never
 * a later one. A removal of the node whose window
 * set the plan leaves the plan early: the thread wakes, finds nothing due,
 * and plans again from the wheel as it is then, later than before (every
 * plan is a tick after the current one, so it never spins).
 *
 * Reclaiming. A removal the thread must finish (the node was bucketed)
 * wakes it only when it plans to sleep longer than RECLAIM_NS (sleep_long),
 * so that the node comes back within about that long. Plans that long are
 * rare without slack, but with slack they are the point; a stream of
 * removals (connections closed before their timeouts) would then wake the
 * thread once per removal. So a pass that released removed nodes caps its
 * plan at RECLAIM_NS and leaves sleep_long clear: the removals that follow
 * wait for that wake-up, which releases them all, and the thread goes back
 * to its long plan after a pass that released none. A stream of removals
 * costs at most one wake-up per RECLAIM_NS; each node still comes back
 * within about RECLAIM_NS.
 *
 * Reference: the worker loop of Netty's HashedWheelTimer
 * (processCancelledTasks, transferTimeoutsToBuckets, expireTimeouts), which
 * also bounds the nodes moved per tick; here the transfer is bounded in time
 * as well, and expiry publishes in chunks. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "common-internal.h"
#include "timerkit/queue.h"
#include "wheel-adapter-internal.h"
#include "wheel-core.h"
#include "wheel-ready.h"

/* ---- the pass's limits ------------------------------------------------------ */

/* rounds of a node the core already expired but a remover had claimed. */
#define DETACHED INT64_MIN

/* Nodes moved from the pending queue into buckets per tick pass (at most;
 * a pass also stops moving after about one tick of work). */
#define TRANSFER_LIMIT ((size_t)100000)
#define TRANSFER_CLOCK_EVERY 1024u
#define TRANSFER_PREFETCH 16 /* nodes ahead whose bucket is prefetched */

/* Expired nodes the tick thread publishes together: it expires whole ticks
 * until it has at least this many (exactly this many from a tick whose
 * bucket is in key order), publishes them, and goes on (see "Catching up"
 * in wheel-adapter.c). */
#define EXPIRE_CHUNK ((size_t)1024)

/* A pass that takes at least FLOOD_POLL_MIN offers off the pending stacks
 * starts a flood; every pass that takes any offer during a flood extends it
 * to FLOOD_QUIET_NS after that pass. During a flood the thread sleeps at
 * most FLOOD_POLL_NS: it looks again soon, so the flood's tail (the offers
 * after the last flood wake-up) is in buckets shortly after the flood ends
 * rather than moved at the first expiry; a pause of the producer shorter
 * than FLOOD_QUIET_NS does not end the flood. FLOOD_POLL_MIN is half of
 * FLOOD_OFFERS: a flood wake-up, which comes on a grid of each shard's
 * offers, not a count from the sleep, may find somewhat fewer than
 * FLOOD_OFFERS nodes on the stacks. */
#define FLOOD_POLL_MIN (FLOOD_OFFERS / 2)
#define FLOOD_POLL_NS (10 * TK_NS_PER_MS)
#define FLOOD_QUIET_NS (40 * TK_NS_PER_MS)

/* Nodes of an expired batch already in key order linked per hold of
 * ready_lock (publish_ready_locked()), so that takers get the lock between
 * pieces (docs/engine-notes.md has how long a hold takes). */
#define PUBLISH_PIECE ((size_t)1024)

/* Nodes the plan's walk of the buckets reads at most (tk__wheel_core_
 * latest_tick()'s budget): past it the thread plans to wake at the tick of
 * the bucket where the walk stopped (a tick after the current one, and no
 * later than any window end), instead of walking further for a later,
 * exact end of a window. The nodes it read are those of buckets with a
 * node due this revolution, most of them due by then: an early wake-up
 * that hands out many nodes, after which the thread plans again. */
#define LATEST_BUDGET ((size_t)4096)

/* Removed nodes the tick thread unlinks before it releases them. */
#define RELEASE_CHUNK ((size_t)256)

/* ---- core_lock holder's work ------------------------------------------------ */

/* Next node of a cancel list (linked through the state words). */
static inline tk_node *cancel_next(const tk_node *n) {
    return (tk_node *)(uintptr_t)(word_load(n) & ~(uint64_t)7);
}

/* Hints the cache about a cancelled node's bucket neighbours, which its
 * unlink writes. Needs core_lock. */
static inline void prefetch_links(const tk_node *n) {
    if (tk__wheel_priv_of(n)->rounds == DETACHED)
        return;
    if (PREV(n) != NULL)
        __builtin_prefetch(PREV(n), 1);
    if (NEXT(n) != NULL)
        __builtin_prefetch(NEXT(n), 1);
}

/* Unlinks up to `limit` (at most RELEASE_CHUNK) nodes of the cancel list `n`
 * from the core and pushes them on *zombies; returns the rest of the list.
 * With a population far larger than the cache every node and each of its
 * bucket neighbours is a miss: the walk of the list is a chain of dependent
 * misses, so it only collects the nodes, and their neighbours are then
 * fetched all at once (prefetch) before the unlinks. Needs core_lock. */
static tk_node *unlink_cancels_locked(struct tk_queue *q, tk_node *n, size_t limit,
                                      tk_node **zombies) {
    tk_node *batch[RELEASE_CHUNK];
    if (limit > RELEASE_CHUNK)
        limit = RELEASE_CHUNK;
    size_t k = 0;
    for (; n != NULL && k < limit; k++) {
        batch[k] = n;
        n = cancel_next(n);
    }
    for (size_t i = 0; i < k; i++)
        prefetch_links(batch[i]);
    for (size_t i = 0; i < k; i++) {
        tk_node *x = batch[i];
        if (tk__wheel_priv_of(x)->rounds != DETACHED)
            tk__wheel_core_remove(&q->core, x);
        NEXT(x) = *zombies;
        *zombies = x;
    }
    if (k != 0)
        STAT_ADD(q, st_cancelled_bucket, k); /* counted here, off the remove() path */
    return n;
}

/* Unlinks every node on every shard's cancel stack from the core; they await
 * release on the zombie list. Needs core_lock. */
void tk__wheel_process_cancels_locked(struct tk_queue *q) {
    for (size_t i = 0; i <= q->shard_mask; i++) {
        tk__wheel_shard *s = &q->shards[i];
        if (atomic_load_explicit(&s->cancel_top, memory_order_relaxed) == NULL)
            continue; /* leave an idle shard's line alone */
        tk_node *n = atomic_exchange(&s->cancel_top, NULL);
        while (n != NULL)
            n = unlink_cancels_locked(q, n, SIZE_MAX, &q->zombies);
    }
}

static inline bool backlog_empty(const struct tk_queue *q) {
    return q->backlog[0].head == NULL && q->backlog[1].head == NULL;
}

/* Merges two lists linked through next (each head to tail), in key order as
 * far as they are in it: the usual case, each shard's nodes in key order, is
 * merged exactly; a's node goes first on equal keys. */
static struct backlog merge_lists(struct backlog a, struct backlog b) {
    if (a.head == NULL)
        return b;
    if (b.head == NULL)
        return a;
    if (!tk_node_before(b.head, a.tail)) { /* b follows a: often so */
        NEXT(a.tail) = b.head;
        return (struct backlog){a.head, b.tail};
    }
    tk_node *head = NULL, **link = &head, *x = a.head, *y = b.head;
    while (x != NULL && y != NULL) {
        if (tk_node_before(y, x)) {
            *link = y;
            link = &NEXT(y);
            y = NEXT(y);
        } else {
            *link = x;
            link = &NEXT(x);
            x = NEXT(x);
        }
    }
    *link = x != NULL ? x : y;
    return (struct backlog){head, x != NULL ? a.tail : b.tail};
}

/* Lists merged as the bins of a binary counter: bin[i] holds the merge of
 * 2^i lists, so that each node takes part in O(log lists) merges. */
#define MERGE_BINS 9 /* 2^8 > the most shards (TK__THREAD_SLOTS) */
typedef struct merge_bins {
    struct backlog bin[MERGE_BINS];
} merge_bins;

static void bins_add(merge_bins *m, struct backlog l) {
    if (l.head == NULL)
        return;
    for (int i = 0; i < MERGE_BINS - 1; i++) {
        if (m->bin[i].head == NULL) {
            m->bin[i] = l;
            return;
        }
        l = merge_lists(m->bin[i], l);
        m->bin[i] = (struct backlog){NULL, NULL};
    }
    m->bin[MERGE_BINS - 1] = merge_lists(m->bin[MERGE_BINS - 1], l);
}

static struct backlog bins_merge(merge_bins *m) {
    struct backlog acc = {NULL, NULL};
    for (int i = MERGE_BINS; i-- > 0;)
        acc = merge_lists(acc, m->bin[i]);
    return acc;
}

/* Splits a pending stack (newest first) into its two classes, oldest first:
 * [0] due at or before `horizon`, [1] the rest (one walk, each node likely
 * a miss: pushing every node on the front of its class's list reverses it;
 * the first node pushed on a list is its tail). Lowers *min_ns to the
 * earliest deadline; returns the number of nodes. */
static size_t split_stack(tk_node *n, int64_t horizon, struct backlog out[2], int64_t *min_ns) {
    size_t k = 0;
    out[0] = out[1] = (struct backlog){NULL, NULL};
    while (n != NULL) {
        tk_node *next = NEXT(n);
        if (n->deadline_ns < *min_ns)
            *min_ns = n->deadline_ns;
        int far = n->deadline_ns > horizon;
        if (out[far].head == NULL)
            out[far].tail = n;
        NEXT(n) = out[far].head;
        out[far].head = n;
        n = next;
        k++;
    }
    return k;
}

/* Appends every shard's whole pending stack to the backlog: nodes due within
 * a revolution to backlog[0], which is moved into buckets first, so a flood
 * of far timers does not hold up a near one. The shards' lists are merged
 * in key order, so that nodes offered in key order (one producer's,
 * spread over the shards by their keys) still reach each bucket in it, the
 * order the core's in-order expiry needs (wheel-core.h). Returns the
 * number of nodes taken. Needs core_lock. */
size_t tk__wheel_grab_pending_locked(struct tk_queue *q) {
    const tk__wheel_core *w = &q->core;
    int64_t horizon = tk__wheel_core_tick_time(w, tk__wheel_core_current_tick(w) + 1 +
                                                      (uint64_t)w->ticks_per_wheel);
    merge_bins m[2] = {0};
    size_t k = 0;
    int64_t min_ns = q->backlog_min_ns;
    for (size_t i = 0; i <= q->shard_mask; i++) {
        tk__wheel_shard *s = &q->shards[i];
        if (atomic_load_explicit(&s->pending_top, memory_order_relaxed) == NULL)
            continue; /* leave an idle shard's line alone */
        struct backlog got[2];
        k += split_stack(atomic_exchange(&s->pending_top, NULL), horizon, got, &min_ns);
        bins_add(&m[0], got[0]);
        bins_add(&m[1], got[1]);
    }
    for (int i = 0; i < 2; i++) {
        struct backlog l = bins_merge(&m[i]);
        if (l.head == NULL)
            continue;
        struct backlog *b = &q->backlog[i];
        if (b->tail != NULL)
            NEXT(b->tail) = l.head;
        else
            b->head = l.head;
        b->tail = l.tail;
    }
    q->backlog_min_ns = min_ns;
    return k;
}

/* Moves up to `limit` backlog nodes into the core, near ones first, and
 * stops early once the clock passes `until_ns` (checked every
 * TRANSFER_CLOCK_EVERY nodes; INT64_MAX: never). Needs core_lock. */
void tk__wheel_transfer_locked(struct tk_queue *q, size_t limit, int64_t until_ns) {
    size_t moved = 0, cancelled = 0, done = 0;
    for (int i = 0; i < 2; i++) {
        struct backlog *b = &q->backlog[i];
        /* The bucket a node joins is one more miss (its head node, which the
         * add relinks): a scout TRANSFER_PREFETCH nodes ahead asks for it
         * early, so those misses overlap. */
        tk_node *scout = b->head;
        for (int j = 0; j < TRANSFER_PREFETCH && scout != NULL; j++)
            scout = NEXT(scout);
        while (b->head != NULL && done < limit) {
            if (++done % TRANSFER_CLOCK_EVERY == 0 && until_ns != INT64_MAX &&
                tk_clock_now_ns() >= until_ns) {
                limit = 0;
                break;
            }
            if (scout != NULL) {
                tk__wheel_core_prefetch_add(&q->core, scout);
                scout = NEXT(scout);
            }
            tk_node *n = b->head;
            b->head = NEXT(n);
            if (b->head == NULL)
                b->tail = NULL;
            if (word_move(n, ST_PENDING, ST_BUCKETED)) {
                tk__wheel_core_add(&q->core, n);
                moved++;
            } else {
                zombie_push_locked(q, n); /* CANCELLED_PENDING */
                cancelled++;
            }
        }
    }
    if (backlog_empty(q))
        q->backlog_min_ns = INT64_MAX;
    if (moved != 0)
        STAT_ADD(q, st_moved, moved);
    if (cancelled != 0)
        STAT_ADD(q, st_cancelled_pending, cancelled);
}

/* Brings the core up to date with every hand-off, unbounded (for the
 * operations that need to see every node). Returns true if nodes now await
 * release. Needs core_lock. */
bool tk__wheel_flush_all_locked(struct tk_queue *q) {
    tk__wheel_process_cancels_locked(q);
    tk__wheel_grab_pending_locked(q);
    tk__wheel_transfer_locked(q, SIZE_MAX, INT64_MAX);
    return q->zombies != NULL;
}

/* Claims an expired node for the ready set (BUCKETED -> READY); a node a
 * remover claimed first is on a cancel stack: it is marked detached and
 * left out. Called by tk__wheel_ready_publish(); needs core_lock and
 * ready_lock (a remover that sees READY then waits for ready_lock, so it
 * finds the node linked). */
static bool claim_ready(tk_node *n, void *ctx) {
    (void)ctx;
    if (word_move(n, ST_BUCKETED, ST_READY))
        return true;
    tk__wheel_priv_of(n)->rounds = DETACHED;
    return false;
}

/* Wakes as many waiting takers as `added` new ready nodes can serve: none
 * if nobody waits, all of them (one broadcast) if there are enough nodes,
 * else one signal per node, so a single node does not wake every waiter.
 * Needs ready_lock. */
static void wake_takers_locked(struct tk_queue *q, size_t added) {
    size_t waiters = q->ready_waiters;
    if (waiters == 0 || added == 0)
        return;
    if (added >= waiters) {
        pthread_cond_broadcast(&q->ready_cond);
    } else {
        for (size_t i = 0; i < added; i++)
            pthread_cond_signal(&q->ready_cond);
    }
}

/* Bookkeeping after `added` nodes were linked into the ready set: the
 * tick thread's statistics, and the takers to wake. Needs ready_lock. */
static void published_locked(struct tk_queue *q, size_t added) {
    if (q->ready.nruns > atomic_load_explicit(&q->st_ready_runs_max, memory_order_relaxed))
        atomic_store_explicit(&q->st_ready_runs_max, q->ready.nruns, memory_order_relaxed);
    atomic_store_explicit(&q->st_ready_merges, q->ready.merges, memory_order_relaxed);
    wake_takers_locked(q, added);
}

/* Cuts the first `max` (>= 1) nodes off `*list` (non-empty, linked through
 * next) and returns them as a list of their own. Walking them brings their
 * lines into cache before ready_lock is taken to link them. */
static tk_node *cut_piece(tk_node **list, size_t max) {
    tk_node *head = *list, *t = head;
    for (size_t i = 1; i < max && NEXT(t) != NULL; i++)
        t = NEXT(t);
    *list = NEXT(t);
    NEXT(t) = NULL;
    return head;
}

/* Publishes an expired batch (linked through next; whole ticks, or the
 * first part of a tick in key order) to the
 * ready set. Returns the number of nodes published. Needs core_lock.
 *
 * A batch already in key order (`in_order`, found by the expiry walk: the
 * usual case, one producer's nodes leaving their bucket in offer order) is
 * linked PUBLISH_PIECE nodes per hold of ready_lock, and takers take the
 * first pieces while later ones are linked: no later piece holds a smaller
 * key, so the order is still exact, and a burst of timers due in one tick
 * reaches its first callback once the first piece is linked, not after all
 * of it.
 *
 * Any other batch is cut into pieces of TK__NODE_SORT_PIECE nodes, each
 * sorted and linked into the set (as a run of its own unless it continues
 * the previous one) while its nodes are still in cache; pops merge the runs.
 * The first piece (the whole batch, for a batch of up to a piece) is sorted
 * before ready_lock is taken, so takers go on taking earlier nodes
 * meanwhile; the rest is sorted under the lock, piece by piece, and all of
 * the batch is linked under one hold of it, so takers never see part of a
 * batch (a later piece may hold a smaller key).
 *
 * Cutting and sorting outside the lock write only the nodes' next links:
 * the nodes are out of the core and not yet claimed, and removers change
 * only the state word. */
static size_t publish_ready_locked(struct tk_queue *q, tk_node *batch, bool in_order) {
    size_t added = 0;
    if (in_order) {
        while (batch != NULL) {
            tk_node *piece = cut_piece(&batch, PUBLISH_PIECE);
            lock(&q->ready_lock);
            size_t k = tk__wheel_ready_publish(&q->ready, piece, claim_ready, NULL);
            published_locked(q, k);
            unlock(&q->ready_lock);
            added += k;
        }
        return added;
    }
    tk__node_piece first = tk__node_sort_piece(&batch, TK__NODE_SORT_PIECE);
    lock(&q->ready_lock);
    added += tk__wheel_ready_publish(&q->ready, first.head, claim_ready, NULL);
    while (batch != NULL) {
        tk__node_piece p = tk__node_sort_piece(&batch, TK__NODE_SORT_PIECE);
        added += tk__wheel_ready_publish(&q->ready, p.head, claim_ready, NULL);
    }
    published_locked(q, added);
    unlock(&q->ready_lock);
    return added;
}

/* Runs the release callback on a zombie list. No lock held. */
void tk__wheel_release_list(struct tk_queue *q, tk_node *n) {
    uint64_t k = 0;
    while (n != NULL) {
        tk_node *next = NEXT(n);
        word_store(n, ST_NONE);
        q->release(q->release_ctx, n);
        n = next;
        k++;
    }
    if (k != 0)
        STAT_ADD(q, st_released, k);
}
/* ---- the tick thread's pass, step by step ------------------------------------- */

/* Step 1: removed nodes, shard by shard, unlinked and released RELEASE_CHUNK
 * at a time, each chunk while its nodes are still in cache. Needs core_lock, which it drops
 * for the callbacks (the rest of the list is private to this thread, and its
 * nodes stay cancel-linked in their buckets meanwhile). */
static void pass_cancels_locked(struct tk_queue *q) {
    for (size_t i = 0; i <= q->shard_mask; i++) {
        tk__wheel_shard *s = &q->shards[i];
        if (atomic_load_explicit(&s->cancel_top, memory_order_relaxed) == NULL)
            continue; /* leave an idle shard's line alone */
        for (tk_node *c = atomic_exchange(&s->cancel_top, NULL); c != NULL;) {
            tk_node *z = NULL;
            c = unlink_cancels_locked(q, c, RELEASE_CHUNK, &z);
            unlock(&q->core_lock);
            tk__wheel_release_list(q, z); /* user code: no lock held */
            lock(&q->core_lock);
        }
    }
}

/* Step 2: takes the pending stacks into the backlog and moves backlog nodes
 * into buckets: at most TRANSFER_LIMIT of them and about a tick of work. A
 * pass that takes FLOOD_POLL_MIN offers or more starts a flood, and any
 * offer taken during one extends it: *flood_end is the instant it ends.
 * Needs core_lock. */
static void pass_pending_locked(struct tk_queue *q, int64_t *flood_end) {
    size_t grabbed = tk__wheel_grab_pending_locked(q);
    if (grabbed != 0) {
        int64_t t = tk_clock_now_ns();
        if (grabbed >= FLOOD_POLL_MIN || t < *flood_end)
            *flood_end = tk__sat_add(t, FLOOD_QUIET_NS);
    }
    tk__wheel_transfer_locked(q, TRANSFER_LIMIT, tk__sat_add(tk_clock_now_ns(), q->tick_ns));
}

/* Step 3: expires up to the tick of `now_ns`, publishing every EXPIRE_CHUNK
 * nodes or so (whole ticks, or parts of one in key order): when the thread
 * is behind, the workers start on the earliest ticks while later ones are
 * expired, and each chunk is sorted and linked while it is in cache. Needs
 * core_lock. */
static void pass_expire_locked(struct tk_queue *q, int64_t now_ns) {
    uint64_t k = tk__wheel_core_tick_at(&q->core, now_ns);
    if (!backlog_empty(q)) {
        /* The transfer stopped short (its time or node limit): a node still
         * in the backlog joins its bucket later, so no tick it may belong
         * to is expired now, or the core would put it in the next tick,
         * behind nodes with later keys. */
        uint64_t cur = tk__wheel_core_current_tick(&q->core);
        uint64_t kb = tk__wheel_core_tick_of(&q->core, q->backlog_min_ns);
        uint64_t cap = (kb > cur + 1 ? kb : cur + 1) - 1;
        if (k > cap)
            k = cap;
    }
    while (k > tk__wheel_core_current_tick(&q->core)) {
        size_t count = 0;
        bool in_order = false;
        tk_node *batch = tk__wheel_core_expire_some(&q->core, k, EXPIRE_CHUNK, &count, &in_order);
        if (batch != NULL)
            STAT_ADD(q, st_expired, publish_ready_locked(q, batch, in_order));
    }
}

/* Step 4: releases the zombie list (nodes found cancelled while pending, and
 * those other core_lock holders unlinked). Needs core_lock, which it drops
 * for the callbacks. */
static void pass_release_zombies_locked(struct tk_queue *q) {
    if (q->zombies == NULL)
        return;
    tk_node *z = q->zombies;
    q->zombies = NULL;
    unlock(&q->core_lock);
    tk__wheel_release_list(q, z); /* user code: no lock held */
    lock(&q->core_lock);
}

/* Whether any shard's stack holds a node (seq_cst loads: the tick thread's
 * half of the Dekker protocol, after it published its plan). */
static bool hand_offs_waiting(struct tk_queue *q) {
    for (size_t i = 0; i <= q->shard_mask; i++)
        if (atomic_load(&q->shards[i].pending_top) != NULL ||
            atomic_load(&q->shards[i].cancel_top) != NULL)
            return true;
    return false;
}

/* Step 5: plans the sleep and publishes the plan; returns the instant to
 * wake at (INT64_MAX: until woken). The plan is the tick of the earliest end
 * of a window among the bucketed nodes (tk__wheel_core_latest_tick(), never
 * later than the first end; while no node in the core has slack, the next
 * candidate tick, exactly as without slack), the next tick while a backlog
 * remains, at most FLOOD_POLL_NS ahead during a flood (now_ns < flood_end),
 * at most RECLAIM_NS ahead after a pass that released removed nodes
 * (`reclaimed`; see "Reclaiming"). Publishes the wake threshold (an offer
 * whose window ends at or before it wakes the thread) and sleep_long, then
 * looks at every shard's stacks once more (Dekker with offer/remove, all
 * seq_cst: either a producer sees the plan and wakes the thread, or the
 * thread sees its node here). Needs core_lock. */
static int64_t plan_sleep_locked(struct tk_queue *q, int64_t now_ns, int64_t flood_end,
                                 bool reclaimed) {
    int64_t plan;
    uint64_t next;
    int64_t next_tick =
        tk__wheel_core_tick_time(&q->core, tk__wheel_core_current_tick(&q->core) + 1);
    if (!backlog_empty(q))
        plan = next_tick;
    else if (tk__wheel_core_has_slack(&q->core)
                 ? tk__wheel_core_latest_tick(&q->core, LATEST_BUDGET, &next)
                 : tk__wheel_core_next_candidate(&q->core, &next)) /* as without slack */
        plan = tk__wheel_core_tick_time(&q->core, next);
    else
        plan = INT64_MAX;
    if (now_ns < flood_end && plan > tk__sat_add(now_ns, FLOOD_POLL_NS))
        plan = tk__sat_add(now_ns, FLOOD_POLL_NS); /* a flood: look again soon */
    if (reclaimed && plan > tk__sat_add(now_ns, RECLAIM_NS))
        plan = tk__sat_add(now_ns, RECLAIM_NS); /* removals are coming: see "Reclaiming" */
    int64_t threshold = plan == INT64_MAX ? INT64_MAX : plan - q->tick_ns;
    if (threshold == AWAKE)
        threshold = AWAKE + 1;
    atomic_store(&q->wake_threshold, threshold);
    atomic_store(&q->sleep_long, plan > tk__sat_add(now_ns, RECLAIM_NS));
    if (hand_offs_waiting(q) || q->zombies != NULL) {
        /* Hand-offs arrived during the pass (or other threads left nodes to
         * release while we ran callbacks): pick them up at the next tick
         * (soon enough for the lateness bound), not at once, so a stream of
         * offers or removals is taken in batches instead of the thread
         * spinning against the producers. */
        atomic_store(&q->sleep_long, false);
        if (next_tick < plan)
            plan = next_tick;
    }
    return plan;
}

/* Step 6: sleeps until `plan` (INT64_MAX: until woken), or until an offer or
 * a removal wakes the thread, or destroy() stops it; with spin_ns, sleeps
 * until spin_ns before the plan and busy-waits the rest (see "Spinning" in
 * wheel-adapter.c). Then marks the thread awake. No lock held; takes
 * tick_lock. */
static void sleep_to_plan(struct tk_queue *q, int64_t plan) {
    int64_t sleep_until = plan == INT64_MAX ? plan : tk__sat_add(plan, -q->spin_ns);
    bool slept_out = false;
    lock(&q->tick_lock);
    while (!q->wake_flag && !atomic_load(&q->stop)) {
        if (sleep_until == INT64_MAX) {
            pthread_cond_wait(&q->tick_cond, &q->tick_lock);
        } else {
            struct timespec ts = tk__ns_to_timespec(sleep_until);
            if (pthread_cond_timedwait(&q->tick_cond, &q->tick_lock, &ts) == ETIMEDOUT) {
                slept_out = true;
                break;
            }
        }
    }
    if (slept_out && sleep_until != plan) {
        unlock(&q->tick_lock);
        /* ends early on stop, or on an offer whose window ends before the
         * plan (it claims wake_threshold, see maybe_wake() in
         * wheel-adapter.c) */
        while (tk_clock_now_ns() < plan && !atomic_load_explicit(&q->stop, memory_order_relaxed) &&
               atomic_load_explicit(&q->wake_threshold, memory_order_relaxed) != AWAKE)
            tk__cpu_relax();
        lock(&q->tick_lock);
    }
    q->wake_flag = false;
    unlock(&q->tick_lock);
    atomic_store(&q->wake_threshold, AWAKE);
    atomic_store(&q->sleep_long, false);
    STAT_ADD(q, st_wakeups, 1);
}

/* ---- the tick thread -------------------------------------------------------- */

static void *tick_main(void *arg) {
    struct tk_queue *q = arg;
    tk__thread_set_name(q->thread_name);
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL); /* 1 us: docs/design.md, timer slack */
#endif
    int64_t flood_end = INT64_MIN; /* a flood lasts until then (FLOOD_POLL_NS) */
    lock(&q->core_lock);
    while (!atomic_load(&q->stop)) {
        STAT_ADD(q, st_loops, 1);
        pass_cancels_locked(q);
        pass_pending_locked(q, &flood_end);
        int64_t now = tk_clock_now_ns();
        pass_expire_locked(q, now);
        bool reclaimed = q->zombies != NULL; /* removals came since the last pass */
        pass_release_zombies_locked(q);
        int64_t plan = plan_sleep_locked(q, now, flood_end, reclaimed);
        unlock(&q->core_lock);
        sleep_to_plan(q, plan);
        lock(&q->core_lock);
    }
    unlock(&q->core_lock);
    return NULL;
}

int tk__wheel_start_thread(struct tk_queue *q) {
    int rc = TK_OK;
    lock(&q->start_lock);
    if (!atomic_load(&q->started)) {
        if (pthread_create(&q->thread, NULL, tick_main, q) != 0)
            rc = TK_ETHREAD;
        else
            atomic_store(&q->started, true);
    }
    unlock(&q->start_lock);
    return rc;
}
