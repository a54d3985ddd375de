/* SPDX-License-Identifier: MIT */
/* timerkit executor: embedded timers (tk_timer), the zero-allocation path.
 *
 * A timer is a tk_node plus a callback and a state word, in the caller's
 * memory. It shares the engine, the workers and the (deadline, seq) order
 * with the tasks; its node is told apart by an odd seq (tasks take even
 * ones), so no engine needs to know timers exist.
 *
 * States (tk__state, atomic; see executor-internal.h):
 *   IDLE --start()--> STARTING --node written--> PENDING
 *                     PENDING --worker takes it, CAS--> IDLE, then fn(timer)
 *                     PENDING --stop() CAS--> STOPPING --node back--> IDLE
 *                     PENDING --sweep/drain/release--> IDLE (tk__timer_drop)
 * Who owns what:
 * - start() claims the timer with CAS IDLE -> STARTING, so two starts cannot
 *   both queue it; it writes the node, then publishes PENDING (release), then
 *   offers, and never touches the timer after a successful offer(): a worker
 *   may fire it at once and the callback may free it. A stop() acts only on
 *   PENDING, so it reads the node (its seq names the engine shard that will
 *   hold it) only once start() has written it; it may still come before the
 *   offer lands, and then finds nothing to remove (TK_ENOENT below).
 * - The slack (tk__node.slack_ns) is the timer's own and start() leaves it
 *   alone: tk_timer_set_slack() writes it under the IDLE -> STARTING claim,
 *   so the engine reads it plainly while the node is queued.
 * - stop() wins only with CAS PENDING -> STOPPING; then exactly one party
 *   holds the node and turns it IDLE: stop() itself (remove() TK_OK, or the
 *   node was waiting in a worker's batch and stop() took it out), the
 *   engine's release callback (TK_EINPROGRESS), or a worker/start()/sweep
 *   that has the node (TK_ENOENT): a worker only between its take of the
 *   node and the CAS below, never for a whole batch.
 * - A worker reads fn, then CAS PENDING -> IDLE, then calls fn: the callback
 *   owns an IDLE timer and may start it again or free it. If the CAS fails
 *   the timer was stopped: the worker turns it IDLE and does not run it.
 * - Shutdown races. start() reads the pool state before and after its
 *   offer (sequentially consistent, as shutdown's store of the state). If
 *   it still reads RUNNING after the offer, the shutdown's sweep or drain
 *   comes later and sees the timer. If not, the offer may have landed after
 *   the sweep, so start() catches up on what shutdown() did
 *   (tk__shutdown_catch_up: the sweep again, a worker for what is left, the
 *   termination check), through the engine only: it touches its timer after
 *   the offer only if it finds it still queued where nothing will run it (a
 *   stopped or terminated pool, or one that has no worker and can start
 *   none), and then returns TK_EREJECTED. The tasks' re-check pulls its task
 *   out by remove() instead, which needs the reference a timer does not
 *   have. */
#define _GNU_SOURCE
#include <string.h>

#include "executor-internal.h"

/* A tag of the executor, kept in the timer to catch a stop() on the wrong
 * executor (never 0, so a fresh timer matches none). */
static uint32_t owner_tag(const tk_executor *ex) {
    uintptr_t p = (uintptr_t)ex;
    return (uint32_t)((p >> 6) ^ (p >> 38)) | 1u;
}

static bool cas_state(tk_timer *tm, uint32_t from, uint32_t to) {
    return __atomic_compare_exchange_n(&tm->tk__state, &from, to, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

static void set_idle(tk_timer *tm) {
    __atomic_store_n(&tm->tk__state, TK__TIMER_IDLE, __ATOMIC_RELEASE);
}

void tk__timer_drop(tk_executor *ex, tk_timer *tm) {
    if (cas_state(tm, TK__TIMER_PENDING, TK__TIMER_IDLE))
        tk__shard_add(&tk__shard_here(ex)->cancelled, 1);
    else
        set_idle(tm); /* STOPPING: stop() counted it */
}

void tk__node_drop(tk_executor *ex, tk_node *n, bool cancel) {
    if (tk__node_is_timer(n)) {
        tk__timer_drop(ex, tk__timer_of(n));
        return;
    }
    tk__task *t = tk__task_of(n);
    if (cancel)
        tk__task_cancel_pending(t, false);
    tk__task_unref(t, 1); /* the queue's reference */
}

void tk__run_timer(tk_executor *ex, tk_timer *tm) {
    tk_timer_fn fn = tm->tk__fn;
    int s = atomic_load(&ex->state);
    if (s != TK_POOL_RUNNING && !tk__can_run_in_state(ex, &tm->tk__node, s)) {
        tk__timer_drop(ex, tm);
        return;
    }
    if (!cas_state(tm, TK__TIMER_PENDING, TK__TIMER_IDLE)) {
        set_idle(tm); /* stopped while queued: stop() counted it */
        return;
    }
    /* The timer is the caller's again: fn may restart or free it. Counted in
     * the worker's own record (one writer: plain stores). */
    tk__worker *w = tk__current.worker;
    atomic_store_explicit(&w->active, 1, memory_order_relaxed);
    fn(tm);
    atomic_store_explicit(&w->active, 0, memory_order_relaxed);
    tk__bump(&w->runs); /* completed: counted by the worker (worker.c) */
}

/* ---- public API -------------------------------------------------------- */

int tk_timer_init(tk_timer *timer, tk_timer_fn fn) {
    if (timer == NULL || fn == NULL)
        return TK_EINVAL;
    memset(timer, 0, sizeof(*timer)); /* zeroed tk__priv, as offer() wants */
    timer->tk__node.slack_ns = 0;     /* fire as soon as the engine can */
    timer->tk__fn = fn;
    return TK_OK;
}

/* The slack is part of the node, which start() and the engine read while
 * the timer is not IDLE; so it changes only under the same claim a start()
 * takes (IDLE -> STARTING), and a start() that races with it gets
 * TK_ESTATE, as it would against another start(). */
int tk_timer_set_slack(tk_timer *timer, int64_t slack_ns) {
    if (timer == NULL || timer->tk__fn == NULL || slack_ns < 0)
        return TK_EINVAL;
    if (!cas_state(timer, TK__TIMER_IDLE, TK__TIMER_STARTING))
        return TK_ESTATE;
    __atomic_store_n(&timer->tk__node.slack_ns, slack_ns, __ATOMIC_RELAXED);
    set_idle(timer); /* release: the next start() sees the slack */
    return TK_OK;
}

int64_t tk_timer_slack_ns(const tk_timer *timer) {
    if (timer == NULL)
        return 0;
    return __atomic_load_n(&timer->tk__node.slack_ns, __ATOMIC_RELAXED);
}

/* A start() that got the timer back from a failed offer: it turns IDLE (a
 * stop() that raced with the call may have moved it to STOPPING). */
static int unqueued(tk_timer *tm, int rc) {
    if (!cas_state(tm, TK__TIMER_PENDING, TK__TIMER_IDLE))
        set_idle(tm);
    return rc;
}

/* As unqueued(), for a start() that had taken a seq. */
static int unaccepted(tk_executor *ex, tk_timer *tm, int rc) {
    atomic_fetch_add_explicit(&tk__shard_here(ex)->unaccepted, 1, memory_order_release);
    return unqueued(tm, rc);
}

/* tk_timer_start() (`absolute` false: t is a delay) and tk_timer_start_at()
 * (t is the deadline). */
static int start(tk_executor *ex, tk_timer *timer, bool absolute, int64_t t) {
    if (ex == NULL || timer == NULL || timer->tk__fn == NULL)
        return TK_EINVAL;
    if (!cas_state(timer, TK__TIMER_IDLE, TK__TIMER_STARTING))
        return TK_ESTATE;

    int rc = TK_OK;
    if (TK__UNLIKELY(atomic_load(&ex->state) != TK_POOL_RUNNING)) {
        rc = TK_EREJECTED;
    } else if (TK__UNLIKELY(atomic_load_explicit(&ex->wc, memory_order_relaxed) < ex->target)) {
        int added = tk__add_worker(ex, ex->target, false);
        if (added < 0 && atomic_load(&ex->wc) == 0)
            rc = added;
    }
    if (TK__UNLIKELY(rc != TK_OK)) {
        if (rc == TK_EREJECTED)
            tk__shard_add(&tk__shard_here(ex)->rejected, 1);
        set_idle(timer); /* STARTING: nobody else acts on it */
        return rc;
    }

    __atomic_store_n(&timer->tk__owner, owner_tag(ex), __ATOMIC_RELAXED);
    int64_t deadline = absolute ? t : tk_deadline_after_ns(tk_clock_now_ns(), t);
    __atomic_store_n(&timer->tk__node.deadline_ns, deadline, __ATOMIC_RELAXED);
    timer->tk__node.seq = tk__next_seq(ex, true);
    __atomic_store_n(&timer->tk__state, TK__TIMER_PENDING,
                     __ATOMIC_RELEASE); /* the node is written */
    rc = ex->ops->offer(ex->q, &timer->tk__node);
    if (TK__UNLIKELY(rc != TK_OK)) {
        if (rc == TK_EFULL || rc == TK_ECLOSED)
            tk__shard_add(&tk__shard_here(ex)->rejected, 1);
        return unaccepted(ex, timer, rc == TK_ECLOSED ? TK_EREJECTED : rc);
    }
    /* From here on the timer may already have fired (and been freed). */
    if (TK__UNLIKELY(atomic_load(&ex->state) != TK_POOL_RUNNING) &&
        tk__shutdown_catch_up(ex, &timer->tk__node)) {
        tk__shard_add(&tk__shard_here(ex)->rejected, 1);
        return unaccepted(ex, timer, TK_EREJECTED); /* it was still queued: ours */
    }
    if (TK__UNLIKELY(!tk__ensure_worker(ex)) && tk__pull_if_queued(ex, &timer->tk__node))
        return unaccepted(ex, timer, TK_ETHREAD); /* every worker timed out, none can start */
    return TK_OK; /* accepted: counted through the seq (tk_executor_stats_get) */
}

int tk_timer_start(tk_executor *ex, tk_timer *timer, int64_t delay_ns) {
    return start(ex, timer, false, delay_ns);
}

int tk_timer_start_at(tk_executor *ex, tk_timer *timer, int64_t deadline_ns) {
    return start(ex, timer, true, deadline_ns);
}

int tk_timer_stop(tk_executor *ex, tk_timer *timer) {
    if (ex == NULL || timer == NULL)
        return TK_EINVAL;
    if (tk__timer_state(timer) != TK__TIMER_PENDING)
        return TK_ENOENT;
    if (__atomic_load_n(&timer->tk__owner, __ATOMIC_RELAXED) != owner_tag(ex))
        return TK_EINVAL;
    if (!cas_state(timer, TK__TIMER_PENDING, TK__TIMER_STOPPING))
        return TK_ENOENT; /* fired or stopped meanwhile */
    tk__shard_add(&tk__shard_here(ex)->cancelled, 1);
    int rc = tk__queue_remove(ex, &timer->tk__node);
    /* Due and taken, but still waiting in a worker's batch: not started, so
     * still queued (queue-access.c), and taken out of there. */
    if (rc == TK_ENOENT && tk__batch_steal(ex, &timer->tk__node))
        rc = TK_OK;
    if (rc == TK_OK) {
        set_idle(timer); /* the last touch */
        tk__rewake_if_shutdown(ex);
    }
    /* TK_EINPROGRESS: the release callback turns it IDLE; TK_ENOENT: the
     * worker, start() or sweep holding the node does. */
    return TK_OK;
}

bool tk_timer_is_pending(const tk_timer *timer) {
    return timer != NULL && tk__timer_state(timer) == TK__TIMER_PENDING;
}

bool tk_timer_is_idle(const tk_timer *timer) {
    return timer != NULL && tk__timer_state(timer) == TK__TIMER_IDLE;
}

int64_t tk_timer_deadline_ns(const tk_timer *timer) {
    if (timer == NULL)
        return 0;
    return __atomic_load_n(&timer->tk__node.deadline_ns, __ATOMIC_RELAXED);
}
