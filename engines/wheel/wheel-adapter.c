/* SPDX-License-Identifier: MIT */
/* timerkit: the hashed wheel engine (blocking adapter over wheel-core).
 *
 * Files. This one: the queue operations behind tk_engine_wheel() and this
 * essay. wheel-tick.c: the tick thread and the work of its pass.
 * wheel-adapter-internal.h: what those two share (the queue struct, its
 * shards, the node state word). wheel-ready.c: the ready set. wheel-core.c:
 * the pure wheel the tick thread drives.
 *
 * Structure. Netty's HashedWheelTimer, rebuilt for a delay queue, with its
 * hand-off sharded:
 *
 *   user threads --offer--> shard k: pending stack --+
 *                --remove->          cancel stack ---+--> tick thread: core wheel
 *                           (k: the node's shard key)      |  (buckets, bitmap)
 *   worker threads <--take/poll-- ready set <--------------+  expired batches, sorted
 *                 /take_batch   (sorted runs)
 *
 * - offer() pushes the node onto its shard's pending stack, a lock-free
 *   Treiber stack linked through tk__wheel_priv.next that only the holder of
 *   core_lock empties, whole, with one atomic exchange (no ABA: nothing pops
 *   single nodes). Offering never touches the wheel or any lock: a fetch-add
 *   on the shard's count of offers, a store and a CAS, plus loads of
 *   `closed` and of the tick thread's wake threshold.
 * - The tick thread owns the core (under core_lock). Each pass it unlinks the
 *   cancelled nodes and releases them, RELEASE_CHUNK at a time (the chunk's
 *   neighbours prefetched together, core_lock dropped for the callbacks, so
 *   a flood of removals goes back to its owner while still in cache, not
 *   after the whole flood was unlinked), takes every shard's pending stack
 *   (the shards' nodes merged in key order), moves pending nodes into
 *   buckets (at most TRANSFER_LIMIT and about one tick of work a pass, as
 *   Netty bounds it, so a flood of offers cannot starve expiry; unlike
 *   Netty, nodes due within a revolution go first, so a flood of far timers
 *   cannot hold up a near one either; a pass that stops short expires no
 *   tick a node left behind may belong to), advances the core to the tick
 *   of the current time, and publishes the expired nodes to the ready set
 *   (under ready_lock), which the executor's workers take from, in chunks of
 *   about EXPIRE_CHUNK nodes (see "Catching up"): a chunk is cut into pieces
 *   of TK__NODE_SORT_PIECE nodes, each sorted while it is in cache (the
 *   first before ready_lock is taken) and added as a sorted run (or appended
 *   to the previous run when it continues it), and a winner tree over the
 *   runs' heads hands the smallest out first (wheel-ready.h), so publishing
 *   costs O(batch), whatever the number of nodes already ready.
 * - remove() reads the node's state word, which names the node's shard too,
 *   and claims a pending or bucketed node with one CAS of it (for a
 *   bucketed node the CAS also links it into its shard's cancel stack), a
 *   bucketed one then with one CAS pushing it onto that stack, and counts it
 *   with one fetch-add on the shard's count of removals; it returns
 *   TK_EINPROGRESS and size() drops at once. That is Netty's cancel (a CAS
 *   on the timeout and an append to one queue shared by all threads) plus
 *   the count, on the node's line and its shard's only. The tick thread
 *   unlinks the node at its next pass, within RECLAIM_NS (10 ms; the
 *   remover wakes it if that pass is planned later), and runs the release
 *   callback with no lock held. A ready node is unlinked at once under
 *   ready_lock (TK_OK). Created without a release callback, the queue
 *   removes synchronously under core_lock instead and always answers TK_OK
 *   or TK_ENOENT.
 *
 * Shards. The hand-off has tk__shard_count() shards, fixed at create() (a
 * power of two: the CPUs online, at most TK_NODE_SHARD_KEYS), and a node
 * goes to shard tk_node_shard_key(n) & (shards - 1) when it is offered and
 * when it is removed (its seq does not change meanwhile). A shard is one
 * line pair (TK__WHEEL_LINE bytes) holding its pending stack, its cancel
 * stack, its count of offers and its count of removals (pending or
 * bucketed nodes that remove() took), so offers and removals of nodes in
 * different shards write no common cache line; all of them read the line of
 * `closed` and the tick thread's plan, which change rarely. The count of
 * nodes that leave under ready_lock (handed out, removed while ready, taken
 * by remove_first/drain/remove_if) is one more counter, `left`, beside that
 * lock. size() is the sum of the shards' offers less their removals less
 * `left`: exact (offered and not handed out or removed; a removed node
 * awaiting release does not count), O(shards), with `left` and each shard's
 * removals read before its offers, so that a concurrent read is never
 * negative. What takers see does not depend on the shards: the tick thread
 * empties every shard's stacks in each pass, and order is decided in the
 * core and the ready set. A bounded queue (max_pending) is the exception to
 * "no common line": its offers take bound_lock, sum the shards, and add
 * only if the sum is below the limit, so the limit is never passed, even
 * transiently, and two offers racing for the last place do not both fail.
 *
 * Node state. The 64-bit word tk__wheel_priv.state (tk__priv.raw[3]),
 * accessed only atomically, is the node's state, in its low three bits, and
 * (except NONE and ptr | 7) the index of the node's shard, above them
 * (st_make()): remove() learns the shard from the word it must read anyway,
 * where the seq that names the shard too may lie on another cache line of
 * the caller's object. The states:
 *   NONE (0)      not in the queue (handed out, removed, released; a node
 *                 never offered must have a zeroed private area for remove()
 *                 to answer TK_ENOENT, as a zero-initialised task has);
 *   PENDING       on its shard's pending stack or the tick thread's backlog;
 *   CANCELLED_PENDING  removed while pending; released when the tick thread
 *                 finds it in the backlog;
 *   BUCKETED      in the core;
 *   READY         in the ready set (tk__wheel_priv.rounds: its run's slot);
 *   ptr | 7       removed while bucketed: it is on its shard's cancel stack
 *                 and the word is also the stack link (nodes are 8-byte
 *                 aligned). The bucket keeps using next/prev, so the cancel
 *                 link cannot share them; one CAS both claims the node and
 *                 links it.
 * Transitions PENDING -> BUCKETED and BUCKETED -> READY are CASes by the
 * core_lock holder, which keep the shard bits (word_move()), racing with
 * remove()'s CASes: exactly one side wins. A node the core expired while a
 * remover claimed it is marked detached (rounds = DETACHED) so the cancel
 * pass does not unlink it twice.
 *
 * Ordering and accuracy. Each expired chunk is sorted by (deadline, seq) (in
 * pieces, merged by the ready set's pops) and published whole under one hold
 * of ready_lock, or, when it is in key order already, in order piece by piece
 * (no later piece holds a smaller key); a chunk holds whole ticks, or the
 * first part of a tick whose bucket is in key order (whose rest holds no
 * smaller key), and the nodes of a later tick have strictly later deadlines
 * than those of an earlier one (wheel-core.c), so the nodes the tick thread has taken in leave
 * in the heap's order even when a taker takes between two chunks. It is not
 * exact across the hand-off: a node offered with a deadline already past
 * becomes visible to take() only at the next tick, so a ready node with a
 * larger key may leave before it (a reordering within one tick, which the
 * semantics contract allows an engine that says so, docs/design.md; so the
 * engine does not claim TK_QUEUE_CAP_EXACT_ORDER). A node is moved to the
 * ready set only once the clock has reached a tick instant t_k >= its
 * deadline: never early.
 * Lateness <= one tick + the tick thread's wake-up latency (timer slack is
 * set to 1 us on that thread) + the time to process the pass + a worker's
 * wake-up (docs/engine-notes.md has measured figures), counted from the
 * end of the node's window (its deadline when it has no slack).
 *
 * Slack (TK_QUEUE_CAP_SLACK; queue.h, "Slack"). A node may leave at any
 * instant in [deadline, deadline + slack_ns]; the tick thread uses that to
 * wake once for many. It plans its sleep to the tick of the earliest end of
 * a window among the bucketed nodes (wheel-core.c's latest tick; without
 * slack, the next tick that can expire something, as before), and the pass
 * it wakes for expires every tick up to the current time, so every node
 * already due leaves then, in whole ticks, each sorted as always: slack
 * changes when the thread wakes, never what a pass hands out or in which
 * order (equal deadlines share a tick and leave in seq order whatever their
 * slacks). An offer compares the end of its node's window, not its
 * deadline, with the wake threshold; a node without slack wakes the thread
 * exactly as before. Slack lives in the node (tk_node.slack_ns, set by its
 * owner, only read here): the private area is full, and nothing about slack
 * is stored per node or per bucket; the plan reads the nodes it needs. A
 * removal can leave the plan earlier than needed: the thread wakes once for
 * nothing and plans again (wheel-tick.c, "Slack"). offer() answers
 * TK_EINVAL for slack_ns < 0 before it touches the node or the queue.
 *
 * Spinning (tk_queue_config.spin_ns, default 0: off). The tick thread's
 * timed sleep ends the OS's timer wake-up latency after the tick instant,
 * even with 1 us of slack (docs/engine-notes.md has figures), and that adds
 * to the up to one tick a node waits for its tick.
 * With spin_ns > 0 the thread sleeps until spin_ns before the instant it
 * plans to wake at and busy-waits the rest (ending early on stop, or on an
 * offer that would have woken it, as the heap's leader does). The cost is
 * up to spin_ns of one core per pass; an idle wheel plans no pass.
 *
 * Catching up. When the thread wakes several ticks late (a busy machine, a
 * long pass), it does not expire every due tick before it publishes any.
 * It expires whole ticks until it has EXPIRE_CHUNK (1024) nodes or more
 * (tk__wheel_core_expire_some), publishes them, and goes on, so the workers
 * start on the earliest ticks at once and each chunk is sorted and linked
 * while it is in cache. A single tick of more nodes is split the same way
 * when its bucket is in key order (nodes offered in key order, the usual
 * burst): its first EXPIRE_CHUNK nodes are published before the rest of the
 * bucket is walked, so a million timers due at one instant start running
 * after a walk of a thousand, not of a million. The bucket walk itself, a chain of dependent
 * misses when the nodes are spread over memory, runs from both ends of the
 * bucket (wheel-core.c).
 *
 * Idle behaviour. Netty's thread wakes every tick. Here the tick thread
 * sleeps until the instant of the next tick that can expire something (the
 * core's bucket minima and occupancy bitmap), or, with slack, until the
 * earliest end of a window (see "Slack"), or forever when empty. Before
 * sleeping it publishes a wake threshold, t_next - tick: an offer whose
 * window ends at or before it (deadline + slack_ns: the node must leave at
 * an earlier tick) wakes the thread; any other offer just waits on the
 * stack for the planned wake-up.
 * A removal wakes it only if the planned sleep is longer than RECLAIM_NS.
 * The publish and the producers' push are sequentially consistent (Dekker):
 * either the producer sees the plan, or the tick thread sees the pushed node
 * before it sleeps, and then sleeps only to the next tick, so that a stream
 * of offers or removals is taken in per-tick batches rather than spun on.
 * One timer an hour ahead costs a wake-up to take it in (an offer to a
 * thread that sleeps without a plan wakes it) and one when it is due, none
 * in between, and an empty wheel none: not 3.6 million (Netty). Takers with
 * nothing ready wait on ready_cond without a time-out (take(),
 * take_batch()), woken only by a publish, close() or wake().
 * A flood is the exception: every FLOOD_OFFERS-th (4096th) offer into a
 * shard wakes the thread, whatever its deadline, so that a million timers
 * scheduled ahead are moved into buckets while they arrive, instead of
 * being grabbed and moved all at once at the first expiry, which that work
 * would make late. The grid counts a shard's offers since create(), so the
 * offer decides from the count its own fetch-add returned, reading no other
 * shard; the shards' counts are staggered (flood_phase: the shard's index
 * bit-reversed, in steps of FLOOD_OFFERS / shards), so that offers spread
 * evenly over the shards, or over the first 2^j of them (threads take slots
 * in turn), wake the thread about every FLOOD_OFFERS offers in all, as one
 * shard's do; at most FLOOD_OFFERS offers per shard in use wait for a flood
 * wake-up. And while a flood lasts (a pass took FLOOD_POLL_MIN = 2048 offers
 * or more, until FLOOD_QUIET_NS = 40 ms pass without an offer taken) the
 * thread sleeps at most FLOOD_POLL_NS (10 ms), so the flood's tail, the
 * offers after its last flood wake-up, is in buckets 10 ms after the flood
 * ends rather than moved at the first expiry. Those looks cost a few
 * wake-ups per flood, none when idle. A flood that resumes after a pause
 * longer than FLOOD_QUIET_NS (which ended the looks) wakes the thread again
 * within FLOOD_OFFERS offers per shard in use, so at most that many wait for
 * the first expiry, for about one wake-up per FLOOD_OFFERS offers to a
 * thread that planned a long sleep (docs/engine-notes.md: how the flood
 * limits were chosen).
 *
 * Configuration. tick_ns: default 1 ms, floor TK__WHEEL_MIN_TICK_NS (10 us,
 * see wheel-internal.h), below it TK_EINVAL. ticks_per_wheel: default 512,
 * rounded up to a power of two, above 2^24 TK_EINVAL. max_pending bounds
 * size() (Netty's maxPendingTimeouts counts the same: every node offered and
 * not yet handed out or removed); past it offer() returns TK_EFULL (see
 * "Shards": bounded offers meet on bound_lock). The tick thread (named
 * thread_name, default "tk-wheel") starts on the first offer.
 *
 * Waking takers. wake() bumps wake_gen and broadcasts ready_cond under
 * ready_lock. A taker reads wake_gen when it enters and, after each wait on
 * ready_cond, returns TK_EINTR if it changed, having taken nothing (ready
 * nodes stay for the next taker); one that enters after wake() returned
 * reads the new value and is not affected. wake() holds ready_lock only to
 * bump and broadcast: it never waits for a taker.
 *
 * Locks and order: core_lock -> ready_lock -> tick_lock; start_lock and
 * bound_lock (a spin lock a bounded offer holds while it sums the shards and
 * adds) are taken alone. No callback runs with any of them held except remove_if()'s `pred`
 * (allowed by queue.h). A chunk whose expiry walk found it in key order
 * already (one producer's nodes leave their bucket in offer order) is
 * linked PUBLISH_PIECE (1024) nodes per hold of ready_lock, and takers take
 * its first pieces while the rest is linked. Any other chunk holds
 * ready_lock while it is linked and while its pieces after the first are
 * sorted: O(chunk). A chunk of up to TK__NODE_SORT_PIECE nodes (the usual
 * one) is sorted before the lock is taken, so takers go on taking earlier
 * nodes meanwhile; a larger one (a single tick of more nodes) sorts each
 * further piece just before linking it, under the lock, which links nodes
 * still in cache (a miss per node saved) and keeps the whole tick invisible
 * until it is all linked. Takers count themselves in
 * ready_waiters, so that publishing and taking signal ready_cond only when
 * someone waits, and wake no more takers than there are new nodes.
 * take_batch() pops up to its `max` ready nodes under one hold of ready_lock
 * and counts them in `left` once for them all, cutting whole stretches of a run
 * that lead every other run (tk__wheel_ready_pop_batch()), so it costs less
 * per node than take() and the engine says so (TK_QUEUE_CAP_BATCH_TAKE);
 * while others wait it takes at most a fair share, max(1, ready /
 * (ready_waiters + 1)), and a taker that leaves ready nodes behind with
 * someone waiting signals one of them (the baton).
 * Complexity: offer O(1) lock-free (bounded: O(shards) under bound_lock);
 * remove O(1) (lock-free, or ready_lock for a ready node, plus O(log runs)
 * if it heads its run); size O(shards);
 * take/poll O(log runs) (at most TK__WHEEL_READY_RUNS = 256 runs; one in the
 * steady state), take_batch O(k + cuts log runs) for k nodes; per tick pass
 * O(shards + cancelled + taken log shards + moved + expired log
 * min(expired, TK__NODE_SORT_PIECE)) (taken: offers taken off the stacks,
 * merged across the shards that had some), the last term O(expired) when
 * the batch is already in order (the usual case), plus, with slack, the
 * nodes the plan reads (at most LATEST_BUDGET, wheel-tick.c);
 * peek/remove_first flush the pending stacks and scan the earliest buckets;
 * drain/remove_if O(n).
 *
 * Reference: Netty io.netty.util.HashedWheelTimer; G. Varghese and T. Lauck,
 * "Hashed and hierarchical timing wheels", SOSP 1987.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common-internal.h"
#include "params-internal.h"
#include "timerkit/queue.h"
#include "wheel-adapter-internal.h"
#include "wheel-core.h"
#include "wheel-internal.h"
#include "wheel-ready.h"

/* ---- waking the tick thread; the size --------------------------------------- */

static void signal_tick(struct tk_queue *q) {
    lock(&q->tick_lock);
    q->wake_flag = true;
    pthread_cond_signal(&q->tick_cond);
    unlock(&q->tick_lock);
}

/* Wakes the tick thread if it sleeps and a node whose window ends at
 * `end_ns` (deadline + slack_ns) cannot wait for its planned wake-up, or if
 * `flood`. Any thread, no lock held (takes tick_lock). */
static void maybe_wake(struct tk_queue *q, int64_t end_ns, bool flood) {
    int64_t thr = atomic_load(&q->wake_threshold);
    while (thr != AWAKE && (flood || end_ns <= thr)) {
        if (atomic_compare_exchange_weak(&q->wake_threshold, &thr, AWAKE)) {
            signal_tick(q);
            return;
        }
    }
}

/* Whether the offer that brought shard s's count of offers to `offered` is
 * on the flood grid: every FLOOD_OFFERS-th offer of a shard, the shards'
 * counts staggered by flood_phase (see "Idle behaviour"). */
static inline bool on_flood_grid(const tk__wheel_shard *s, size_t offered) {
    return ((offered + s->flood_phase) & (FLOOD_OFFERS - 1)) == 0;
}

/* Wakes the tick thread if removed nodes would otherwise wait more than
 * RECLAIM_NS for release. Any thread, no lock held (takes tick_lock). */
static void wake_for_release(struct tk_queue *q) {
    if (!atomic_load(&q->sleep_long))
        return;
    bool expected = true;
    if (atomic_compare_exchange_strong(&q->sleep_long, &expected, false))
        signal_tick(q);
}

/* The number of nodes queued: the shards' offers less their removals and
 * less the nodes that left under ready_lock. `left` is read first and each
 * shard's removals before its offers, so that a node whose leaving is
 * counted has its offer counted too (its offer happened before): concurrent
 * changes may make the sum stale, never negative. Any thread, no lock
 * needed. O(shards). */
static size_t size_sum(struct tk_queue *q) {
    size_t out = atomic_load(&q->left), in = 0;
    for (size_t i = 0; i <= q->shard_mask; i++) {
        out += atomic_load(&q->shards[i].removed);
        in += atomic_load(&q->shards[i].offered);
    }
    size_t d = in - out; /* the counters wrap together */
    return d <= SIZE_MAX / 2 ? d : 0;
}

/* A closed queue that became empty releases its takers (TK_ECLOSED). Called
 * after a node left; `ready_locked`: the caller holds ready_lock. The
 * count's change and this look at `closed` are seq_cst, as close()'s store
 * and a taker's look at both are, so a taker that saw a node counted sees
 * this broadcast. */
static void wake_takers_if_emptied(struct tk_queue *q, bool ready_locked) {
    if (TK__LIKELY(atomic_load(&q->closed) == 0) || size_sum(q) != 0)
        return;
    if (!ready_locked)
        lock(&q->ready_lock);
    pthread_cond_broadcast(&q->ready_cond);
    if (!ready_locked)
        unlock(&q->ready_lock);
}

/* Counts k nodes of shard s as removed (taken by remove() while pending or
 * bucketed, or an offer undone). No lock needed. */
static void count_removed(struct tk_queue *q, tk__wheel_shard *s, size_t k) {
    atomic_fetch_add(&s->removed, k);
    wake_takers_if_emptied(q, false);
}

/* Counts k nodes as having left under ready_lock (handed out, removed while
 * ready, taken by remove_first/drain/remove_if). Needs ready_lock. */
static void count_left_locked(struct tk_queue *q, size_t k) {
    if (k == 0)
        return;
    atomic_fetch_add(&q->left, k);
    wake_takers_if_emptied(q, true);
}

/* Counts an offer into shard s if the queue holds fewer than max_pending
 * nodes, and stores the shard's new count of offers in *offered. Bounded
 * offers hold bound_lock while they count and add, so that two of them
 * never both take the last place; a node leaving meanwhile may make the
 * count read high (the offer then answers TK_EFULL, as if it came first),
 * never low. Takes bound_lock. */
static bool admit_bounded(struct tk_queue *q, tk__wheel_shard *s, size_t *offered) {
    tk__spin_lock(&q->bound_lock);
    bool ok = size_sum(q) < q->max_pending;
    if (ok)
        *offered = atomic_fetch_add(&s->offered, 1) + 1;
    tk__spin_unlock(&q->bound_lock);
    return ok;
}

/* The phase of shard i of `shards` (a power of two) against the flood grid:
 * i's bits reversed, in steps of FLOOD_OFFERS / shards, so that the first
 * 2^j shards (threads take their slots in turn from 0) are spread evenly
 * over the grid. */
static size_t flood_phase_of(size_t i, size_t shards) {
    size_t r = 0;
    for (size_t bit = 1; bit < shards; bit <<= 1) {
        r <<= 1;
        r |= (i & bit) != 0;
    }
    return r * (FLOOD_OFFERS / shards);
}

/* Allocates and initialises `n` shards (a power of two, 1 ..
 * TK__THREAD_SLOTS). Returns TK_OK or TK_ENOMEM. */
static int shards_create(struct tk_queue *q, size_t n) {
    _Static_assert(TK__THREAD_SLOTS <= FLOOD_OFFERS, "each shard has a phase of its own");
    q->shard_block_size = n * sizeof(tk__wheel_shard) + TK__WHEEL_LINE - 1;
    q->shard_block = tk__alloc(q->allocator, q->shard_block_size);
    if (q->shard_block == NULL)
        return TK_ENOMEM;
    uintptr_t at =
        ((uintptr_t)q->shard_block + TK__WHEEL_LINE - 1) & ~(uintptr_t)(TK__WHEEL_LINE - 1);
    q->shards = (tk__wheel_shard *)at;
    q->shard_mask = n - 1;
    for (size_t i = 0; i < n; i++) {
        tk__wheel_shard *s = &q->shards[i];
        atomic_init(&s->pending_top, NULL);
        atomic_init(&s->cancel_top, NULL);
        atomic_init(&s->offered, 0);
        atomic_init(&s->removed, 0);
        s->flood_phase = flood_phase_of(i, n);
    }
    return TK_OK;
}

/* ---- operations ----------------------------------------------------------- */

static void wheel_destroy(tk_queue *q);

static int wheel_create(const tk_queue_ops *self, const tk_queue_config *cfg,
                        tk_queue_release_fn release, void *release_ctx, tk_queue **out) {
    return tk__wheel_create_sharded(self, cfg, release, release_ctx, tk__shard_count(), out);
}

int tk__wheel_create_sharded(const tk_queue_ops *self, const tk_queue_config *cfg,
                             tk_queue_release_fn release, void *release_ctx, unsigned shards,
                             tk_queue **out) {
    if (out == NULL)
        return TK_EINVAL;
    *out = NULL;
    if (shards == 0 || shards > TK__THREAD_SLOTS || (shards & (shards - 1)) != 0)
        return TK_EINVAL;
    tk_queue_config c;
    if (tk__queue_config_resolve(self != NULL ? self : tk_engine_wheel(), cfg, &c, NULL, 0) !=
        TK_OK)
        return TK_EINVAL; /* a parameter outside its range, or a span that overflows */
    const tk__wheel_params *prm = tk__queue_config_params(&c);
    if (c.thread_name == NULL)
        c.thread_name = "tk-wheel";

    struct tk_queue *q = tk__alloc(c.allocator, sizeof(*q));
    if (q == NULL)
        return TK_ENOMEM;
    memset(q, 0, sizeof(*q));
    q->backlog_min_ns = INT64_MAX;
    tk__wheel_ready_init(&q->ready);
    q->allocator = c.allocator;
    q->spin_ns = c.spin_ns;
    q->release = release;
    q->release_ctx = release_ctx;
    q->max_pending = c.max_pending;
    q->tick_ns = prm->tick_ns;
    strncpy(q->thread_name, c.thread_name, sizeof(q->thread_name) - 1);
    atomic_init(&q->closed, 0);
    atomic_init(&q->wake_threshold, AWAKE);
    atomic_init(&q->sleep_long, false);
    atomic_init(&q->started, false);
    atomic_init(&q->stop, false);
    tk__spin_init(&q->bound_lock);
    atomic_init(&q->left, 0);

    int rc = shards_create(q, shards);
    if (rc != TK_OK) {
        tk__free(c.allocator, q, sizeof(*q));
        return rc;
    }
    rc = tk__wheel_core_init(&q->core, c.allocator, prm->tick_ns, prm->slots, tk_clock_now_ns());
    if (rc != TK_OK) {
        tk__free(c.allocator, q->shard_block, q->shard_block_size);
        tk__free(c.allocator, q, sizeof(*q));
        return rc;
    }
    int err = 0;
    int made = 0; /* how many of the sync objects below exist */
    if ((err = pthread_mutex_init(&q->core_lock, NULL)) == 0 && ++made &&
        (err = pthread_mutex_init(&q->ready_lock, NULL)) == 0 && ++made &&
        (err = tk__cond_init_monotonic(&q->ready_cond)) == 0 && ++made &&
        (err = pthread_mutex_init(&q->tick_lock, NULL)) == 0 && ++made &&
        (err = tk__cond_init_monotonic(&q->tick_cond)) == 0 && ++made &&
        (err = pthread_mutex_init(&q->start_lock, NULL)) == 0 && ++made) {
        *out = q;
        return TK_OK;
    }
    if (made > 4)
        pthread_cond_destroy(&q->tick_cond);
    if (made > 3)
        pthread_mutex_destroy(&q->tick_lock);
    if (made > 2)
        pthread_cond_destroy(&q->ready_cond);
    if (made > 1)
        pthread_mutex_destroy(&q->ready_lock);
    if (made > 0)
        pthread_mutex_destroy(&q->core_lock);
    tk__wheel_core_destroy(&q->core);
    tk__free(c.allocator, q->shard_block, q->shard_block_size);
    tk__free(c.allocator, q, sizeof(*q));
    return err == ENOMEM ? TK_ENOMEM : TK_EINVAL;
}

static void wheel_destroy(tk_queue *q) {
    if (q == NULL)
        return;
    if (atomic_load(&q->started)) {
        lock(&q->tick_lock);
        atomic_store(&q->stop, true);
        q->wake_flag = true;
        pthread_cond_signal(&q->tick_cond);
        unlock(&q->tick_lock);
        pthread_join(q->thread, NULL);
    }
    /* Alone now. Release every removed node; queued ones stay untouched. */
    lock(&q->core_lock);
    tk__wheel_process_cancels_locked(q);
    tk__wheel_grab_pending_locked(q);
    for (int i = 0; i < 2; i++) {
        for (tk_node *n = q->backlog[i].head; n != NULL;) {
            tk_node *next = NEXT(n);
            if (st_kind(word_load(n)) == ST_CANCELLED_PENDING)
                zombie_push_locked(q, n);
            n = next;
        }
        q->backlog[i].head = q->backlog[i].tail = NULL;
    }
    q->backlog_min_ns = INT64_MAX;
    tk_node *z = q->zombies;
    q->zombies = NULL;
    unlock(&q->core_lock);
    if (z != NULL)
        tk__wheel_release_list(q, z);

    pthread_mutex_destroy(&q->start_lock);
    pthread_cond_destroy(&q->tick_cond);
    pthread_mutex_destroy(&q->tick_lock);
    pthread_cond_destroy(&q->ready_cond);
    pthread_mutex_destroy(&q->ready_lock);
    pthread_mutex_destroy(&q->core_lock);
    tk__wheel_core_destroy(&q->core);
    tk__free(q->allocator, q->shard_block, q->shard_block_size);
    tk__free(q->allocator, q, sizeof(*q));
}

/* offer(): see queue.h and "Structure". Writes only the node and its shard's
 * line (a bounded queue also takes bound_lock); reads `closed` and the tick
 * thread's plan. TK_EINVAL for slack_ns < 0, with nothing touched. */
static int wheel_offer(tk_queue *q, tk_node *n) {
    if (q == NULL || n == NULL || n->slack_ns < 0)
        return TK_EINVAL;
    if (atomic_load_explicit(&q->closed, memory_order_relaxed) == TK_QUEUE_CLOSE_NOW)
        return TK_ECLOSED;
    size_t idx = shard_index(q, n);
    tk__wheel_shard *s = &q->shards[idx];
    size_t offered; /* the shard's count of offers with this one */
    if (q->max_pending == 0)
        offered = atomic_fetch_add_explicit(&s->offered, 1, memory_order_relaxed) + 1;
    else if (!admit_bounded(q, s, &offered))
        return TK_EFULL;
    if (TK__UNLIKELY(!atomic_load_explicit(&q->started, memory_order_acquire))) {
        int rc = tk__wheel_start_thread(q);
        if (rc != TK_OK) {
            count_removed(q, s, 1);
            return rc;
        }
    }
    int64_t end_ns = tk__sat_add(n->deadline_ns, n->slack_ns); /* n may be gone once pushed */
    /* release: a remover that claims the node sees its offer counted */
    word_store(n, st_make(ST_PENDING, idx));
    tk_node *top = atomic_load_explicit(&s->pending_top, memory_order_relaxed);
    do {
        NEXT(n) = top;
    } while (!atomic_compare_exchange_weak_explicit(&s->pending_top, &top, n, memory_order_seq_cst,
                                                    memory_order_relaxed));
    maybe_wake(q, end_ns, on_flood_grid(s, offered));
    return TK_OK;
}

/* How many ready nodes one take may hand out: `max`, cut to a fair share
 * of the ready set, max(1, ready / (waiters + 1)), while other takers wait
 * (queue.h, take_batch()). Needs ready_lock and a non-empty ready set. */
static inline size_t batch_limit_locked(const struct tk_queue *q, size_t max) {
    if (max == 1 || q->ready_waiters == 0)
        return max;
    size_t share = q->ready.size / (q->ready_waiters + 1);
    return share < 1 ? 1 : share < max ? share : max;
}

/* Marks a node leaving the ready set as handed out: remove() then answers
 * TK_ENOENT. Needs ready_lock (a remover reads the word under it). */
static void hand_out(tk_node *n, void *ctx) {
    (void)ctx;
    word_store(n, ST_NONE);
}

/* Takes up to `max` (>= 1) ready nodes, or returns a status; waits until
 * `deadline_ns` if `timed`, else without limit. The nodes leave in the ready
 * set's order, linked through detached_next into *out; *count gets their
 * number. Returns TK_OK, TK_ECLOSED, TK_ETIMEDOUT (only if `timed`), or
 * TK_EINTR when wake() was called while it waited (having taken nothing; the
 * wake generation is read on entry, so a call that starts after wake()
 * returned does not see that wake()). Takes ready_lock. */
static int take_until(struct tk_queue *q, bool timed, int64_t deadline_ns, size_t max,
                      tk_node **out, size_t *count) {
    lock(&q->ready_lock);
    uint64_t gen = q->wake_gen;
    for (;;) {
        int closed = atomic_load(&q->closed);
        if (closed == TK_QUEUE_CLOSE_NOW) {
            unlock(&q->ready_lock);
            return TK_ECLOSED;
        }
        if (q->ready.size != 0) {
            size_t limit = batch_limit_locked(q, max);
            tk_node *head;
            size_t k;
            if (limit == 1) {
                head = tk__wheel_ready_pop(&q->ready);
                hand_out(head, NULL);
                head->tk__priv.detached_next = NULL;
                k = 1;
            } else {
                head = tk__wheel_ready_pop_batch(&q->ready, limit, hand_out, NULL, &k);
            }
            count_left_locked(q, k);
            if (q->ready_waiters != 0 && q->ready.size != 0)
                pthread_cond_signal(&q->ready_cond); /* pass the baton */
            unlock(&q->ready_lock);
            *out = head;
            *count = k;
            return TK_OK;
        }
        if (closed == TK_QUEUE_CLOSE_WHEN_EMPTY && size_sum(q) == 0) {
            unlock(&q->ready_lock);
            return TK_ECLOSED;
        }
        if (timed && tk_clock_now_ns() >= deadline_ns) {
            unlock(&q->ready_lock);
            return TK_ETIMEDOUT;
        }
        q->ready_waiters++;
        if (!timed) {
            pthread_cond_wait(&q->ready_cond, &q->ready_lock);
        } else {
            struct timespec ts = tk__ns_to_timespec(deadline_ns);
            pthread_cond_timedwait(&q->ready_cond, &q->ready_lock, &ts);
        }
        q->ready_waiters--;
        if (q->wake_gen != gen) {
            unlock(&q->ready_lock);
            return TK_EINTR;
        }
    }
}

/* take(): see queue.h. Returns TK_OK, TK_ECLOSED, TK_EINTR (wake()) or
 * TK_EINVAL. */
static int wheel_take(tk_queue *q, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    size_t k;
    return take_until(q, false, 0, 1, out, &k);
}

/* poll(): see queue.h. Returns TK_OK, TK_ETIMEDOUT, TK_ECLOSED, TK_EINTR
 * (wake()) or TK_EINVAL. */
static int wheel_poll(tk_queue *q, int64_t timeout_ns, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    int64_t deadline = tk_deadline_after_ns(tk_clock_now_ns(), timeout_ns);
    size_t k;
    return take_until(q, true, deadline, 1, out, &k);
}

/* take_batch(): see queue.h. One hold of ready_lock pops up to `max` nodes
 * (a fair share of the ready set while other takers wait) and counts them
 * gone once for all of them. Returns TK_OK, TK_ECLOSED, TK_EINTR (wake())
 * or TK_EINVAL. */
static int wheel_take_batch(tk_queue *q, size_t max, tk_node **out, size_t *count) {
    if (out != NULL)
        *out = NULL;
    if (count != NULL)
        *count = 0;
    if (q == NULL || out == NULL || count == NULL || max == 0)
        return TK_EINVAL;
    return take_until(q, false, 0, max, out, count);
}

/* wake(): see queue.h. Every taker waiting on ready_cond wakes, finds the
 * wake generation changed and returns TK_EINTR. Holds ready_lock only to
 * bump the generation and broadcast; waits for no taker. */
static void wheel_wake(tk_queue *q) {
    if (q == NULL)
        return;
    lock(&q->ready_lock);
    q->wake_gen++;
    if (q->ready_waiters != 0)
        pthread_cond_broadcast(&q->ready_cond);
    unlock(&q->ready_lock);
}

/* remove() of a READY node. No lock held on entry. */
static int remove_ready(struct tk_queue *q, tk_node *n) {
    lock(&q->ready_lock);
    if (st_kind(word_load(n)) != ST_READY) {
        unlock(&q->ready_lock);
        return TK_ENOENT; /* handed out (or removed) meanwhile */
    }
    tk__wheel_ready_remove(&q->ready, n);
    word_store(n, ST_NONE);
    count_left_locked(q, 1);
    unlock(&q->ready_lock);
    STAT_ADD(q, st_removed_ready, 1);
    return TK_OK;
}

/* remove() when there is no release callback: under core_lock, TK_OK. */
static int remove_sync(struct tk_queue *q, tk_node *n) {
    lock(&q->core_lock);
    bool flushed = false;
    for (;;) {
        uint64_t w = word_load(n);
        if (st_kind(w) == ST_PENDING && !flushed) {
            tk__wheel_grab_pending_locked(q);
            tk__wheel_transfer_locked(q, SIZE_MAX, INT64_MAX);
            flushed = true;
            continue;
        }
        if (st_kind(w) == ST_BUCKETED) {
            size_t idx = st_shard(w);
            if (!word_cas(n, &w, ST_NONE))
                continue;
            tk__wheel_core_remove(&q->core, n);
            unlock(&q->core_lock);
            count_removed(q, &q->shards[idx], 1);
            STAT_ADD(q, st_cancelled_bucket, 1);
            return TK_OK;
        }
        unlock(&q->core_lock);
        return st_kind(w) == ST_READY ? remove_ready(q, n) : TK_ENOENT;
    }
}

/* remove(): see queue.h and "Structure". Reads the node's state word, which
 * also names its shard (the seq, which names it too, may lie on another
 * line of the caller's object), and claims a pending or bucketed node with
 * one CAS of that word (for a bucketed node the CAS also links it into its
 * shard's cancel stack), pushes a bucketed one with one CAS of that stack,
 * and counts it with one fetch-add: the node's line and its shard's,
 * nothing else. */
static int wheel_remove(tk_queue *q, tk_node *n) {
    if (q == NULL || n == NULL)
        return TK_EINVAL;
    if (q->release == NULL)
        return remove_sync(q, n);
    uint64_t w = word_load(n);
    tk__wheel_shard *s;
    for (;;) {
        uint64_t kind = st_kind(w);
        if (kind == ST_BUCKETED) {
            s = &q->shards[st_shard(w)];
            tk_node *top = atomic_load_explicit(&s->cancel_top, memory_order_relaxed);
            if (!word_cas(n, &w, (uint64_t)(uintptr_t)top | ST_CANCEL_TAG))
                continue;
            while (!atomic_compare_exchange_weak(&s->cancel_top, &top, n))
                __atomic_store_n(word_of(n), (uint64_t)(uintptr_t)top | ST_CANCEL_TAG,
                                 __ATOMIC_RELAXED);
            break;
        }
        if (kind == ST_PENDING) {
            s = &q->shards[st_shard(w)];
            if (!word_cas(n, &w, st_with_kind(w, ST_CANCELLED_PENDING)))
                continue;
            break;
        }
        if (kind == ST_READY)
            return remove_ready(q, n);
        return TK_ENOENT; /* handed out, never offered, or removed already */
    }
    count_removed(q, s, 1);
    wake_for_release(q);
    return TK_EINPROGRESS;
}

static bool accept_bucketed(const tk_node *n, void *ctx) {
    (void)ctx;
    return st_kind(word_load(n)) == ST_BUCKETED;
}

/* Finds the first node, due or not. Needs core_lock and ready_lock; the
 * pending queue must have been flushed. */
static tk_node *first_locked(struct tk_queue *q) {
    tk_node *c = tk__wheel_core_first(&q->core, accept_bucketed, NULL);
    tk_node *r = tk__wheel_ready_first(&q->ready);
    if (c == NULL)
        return r;
    if (r == NULL)
        return c;
    return tk_node_before(c, r) ? c : r;
}

static int wheel_remove_first(tk_queue *q, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    lock(&q->core_lock);
    bool zombies = tk__wheel_flush_all_locked(q);
    lock(&q->ready_lock);
    tk_node *n;
    for (;;) {
        n = first_locked(q);
        if (n == NULL)
            break;
        uint64_t w = word_load(n);
        if (st_kind(w) == ST_READY) {
            tk__wheel_ready_remove(&q->ready, n);
            word_store(n, ST_NONE);
            break;
        }
        if (st_kind(w) == ST_BUCKETED && word_cas(n, &w, ST_NONE)) {
            tk__wheel_core_remove(&q->core, n);
            break;
        }
        /* claimed by a remover meanwhile: look again */
    }
    if (n != NULL)
        count_left_locked(q, 1);
    unlock(&q->ready_lock);
    unlock(&q->core_lock);
    if (zombies)
        wake_for_release(q);
    if (n == NULL)
        return TK_ENOENT;
    *out = n;
    return TK_OK;
}

static int wheel_peek(tk_queue *q, int64_t *deadline_ns, uint64_t *seq) {
    if (q == NULL)
        return TK_EINVAL;
    lock(&q->core_lock);
    bool zombies = tk__wheel_flush_all_locked(q);
    lock(&q->ready_lock);
    tk_node *n = first_locked(q);
    if (n != NULL) {
        if (deadline_ns != NULL)
            *deadline_ns = n->deadline_ns;
        if (seq != NULL)
            *seq = n->seq;
    }
    unlock(&q->ready_lock);
    unlock(&q->core_lock);
    if (zombies)
        wake_for_release(q);
    return n != NULL ? TK_OK : TK_ENOENT;
}

/* size(): see queue.h. Sums the shards' counts: O(shards), no lock. */
static size_t wheel_size(tk_queue *q) {
    return q != NULL ? size_sum(q) : 0;
}

typedef struct extract_ctx {
    bool (*pred)(const tk_node *n, void *ctx); /* NULL: every node */
    void *ctx;
} extract_ctx;

/* Takes a ready node matching the predicate out of the ready set (READY ->
 * NONE; ready_lock held, so no remover races). */
static bool take_ready_if(tk_node *n, void *arg) {
    extract_ctx *x = arg;
    if (x->pred != NULL && !x->pred(n, x->ctx))
        return false;
    word_store(n, ST_NONE);
    return true;
}

/* Claims a bucketed node matching the predicate (BUCKETED -> NONE). */
static bool claim_if(tk_node *n, void *arg) {
    extract_ctx *x = arg;
    uint64_t w = word_load(n);
    if (st_kind(w) != ST_BUCKETED)
        return false;
    if (x->pred != NULL && !x->pred(n, x->ctx))
        return false;
    return word_cas(n, &w, ST_NONE);
}

/* Removes matching nodes from the core and the ready set. Returns them
 * linked through next; *count set. */
static tk_node *extract(struct tk_queue *q, extract_ctx *x, size_t *count) {
    lock(&q->core_lock);
    bool zombies = tk__wheel_flush_all_locked(q);
    size_t k = 0;
    tk_node *out = tk__wheel_core_extract_if(&q->core, claim_if, x, &k);
    lock(&q->ready_lock);
    size_t r = 0;
    tk_node *ready = tk__wheel_ready_extract_if(&q->ready, take_ready_if, x, &r);
    while (ready != NULL) {
        tk_node *next = NEXT(ready);
        NEXT(ready) = out;
        out = ready;
        ready = next;
    }
    k += r;
    count_left_locked(q, k);
    unlock(&q->ready_lock);
    unlock(&q->core_lock);
    if (zombies)
        wake_for_release(q);
    *count = k;
    return out;
}

static tk_node *wheel_drain(tk_queue *q) {
    if (q == NULL)
        return NULL;
    extract_ctx x = {NULL, NULL};
    size_t k;
    tk_node *list = extract(q, &x, &k);
    return tk__node_sort(list, NULL);
}

static tk_node *wheel_remove_if(tk_queue *q, bool (*pred)(const tk_node *n, void *ctx), void *ctx) {
    if (q == NULL || pred == NULL)
        return NULL;
    extract_ctx x = {pred, ctx};
    size_t k;
    return extract(q, &x, &k);
}

static void wheel_close(tk_queue *q, tk_queue_close_mode mode) {
    if (q == NULL || (mode != TK_QUEUE_CLOSE_WHEN_EMPTY && mode != TK_QUEUE_CLOSE_NOW))
        return;
    int cur = atomic_load(&q->closed);
    while ((int)mode > cur && !atomic_compare_exchange_weak(&q->closed, &cur, (int)mode)) {
    }
    lock(&q->ready_lock);
    pthread_cond_broadcast(&q->ready_cond);
    unlock(&q->ready_lock);
}

/* Whether word w says `kind` and names n's shard. */
static bool word_is(const struct tk_queue *q, const tk_node *n, uint64_t w, uint64_t kind) {
    return st_kind(w) == kind && st_shard(w) == shard_index(q, n);
}

/* A node in the core is bucketed, or removed and on a cancel stack. */
static bool check_core_node(const tk_node *n, void *ctx) {
    uint64_t w = word_load(n);
    return is_cancel_linked(w) || word_is(ctx, n, w, ST_BUCKETED);
}

static bool check_ready_node(const tk_node *n, void *ctx) {
    return word_is(ctx, n, word_load(n), ST_READY);
}

static int wheel_check(tk_queue *q) {
    if (q == NULL)
        return TK_EINVAL;
    int rc = TK_OK;
    lock(&q->core_lock);
    if (tk__wheel_core_check(&q->core) != TK_OK ||
        !tk__wheel_core_foreach(&q->core, check_core_node, q))
        rc = TK_ESTATE;
    lock(&q->ready_lock);
    if (rc == TK_OK && tk__wheel_ready_check(&q->ready, check_ready_node, q) != TK_OK)
        rc = TK_ESTATE;
    unlock(&q->ready_lock);
    unlock(&q->core_lock);
    return rc;
}

void tk__wheel_stats_get(tk_queue *q, tk__wheel_stats *st) {
    st->wakeups = atomic_load_explicit(&q->st_wakeups, memory_order_relaxed);
    st->loops = atomic_load_explicit(&q->st_loops, memory_order_relaxed);
    st->expired = atomic_load_explicit(&q->st_expired, memory_order_relaxed);
    st->moved = atomic_load_explicit(&q->st_moved, memory_order_relaxed);
    st->released = atomic_load_explicit(&q->st_released, memory_order_relaxed);
    st->cancelled_pending = atomic_load_explicit(&q->st_cancelled_pending, memory_order_relaxed);
    st->cancelled_bucket = atomic_load_explicit(&q->st_cancelled_bucket, memory_order_relaxed);
    st->removed_ready = atomic_load_explicit(&q->st_removed_ready, memory_order_relaxed);
    st->ready_runs_max = atomic_load_explicit(&q->st_ready_runs_max, memory_order_relaxed);
    st->ready_merges = atomic_load_explicit(&q->st_ready_merges, memory_order_relaxed);
}

static uint64_t wheel_wakeups(tk_queue *q) {
    return q == NULL ? 0 : atomic_load_explicit(&q->st_wakeups, memory_order_relaxed);
}

static const tk_queue_ops wheel_ops = {
    .name = "wheel",
    .description = "hashed timing wheel with a tick thread (Netty's HashedWheelTimer)",
    .caps = TK_QUEUE_CAP_O1_REMOVE | TK_QUEUE_CAP_TICKED | TK_QUEUE_CAP_OWN_THREAD |
            TK_QUEUE_CAP_BOUNDED | TK_QUEUE_CAP_DEFERRED_RELEASE | TK_QUEUE_CAP_BATCH_TAKE |
            TK_QUEUE_CAP_SHARDED | TK_QUEUE_CAP_WAKE | TK_QUEUE_CAP_SLACK,
    .create = wheel_create,
    .destroy = wheel_destroy,
    .offer = wheel_offer,
    .take = wheel_take,
    .poll = wheel_poll,
    .remove = wheel_remove,
    .remove_first = wheel_remove_first,
    .peek = wheel_peek,
    .size = wheel_size,
    .drain = wheel_drain,
    .remove_if = wheel_remove_if,
    .close = wheel_close,
    .check = wheel_check,
    .take_batch = wheel_take_batch,
    .wakeups = wheel_wakeups,
    .params = tk__wheel_param_table,
    .param_count = TK__WHEEL_PARAM_COUNT,
    .params_size = sizeof(tk__wheel_params),
    .validate = tk__wheel_params_validate,
    .core = &tk__wheel_core_ops,
    .wake = wheel_wake,
};

TK_API const tk_queue_ops *tk_engine_wheel(void) {
    return &wheel_ops;
}
