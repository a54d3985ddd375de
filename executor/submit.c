/* SPDX-License-Identifier: MIT */
/* timerkit executor: the scheduling calls and the rejection policies.
 *
 * The submit path takes no pool lock while the pool is RUNNING and has its
 * threads: an atomic read of the pool state, the engine's offer(), and the
 * JDK's re-check (delayedExecute): if the pool stopped accepting while the
 * task was being offered, the task is pulled out again and cancelled, unless
 * the shutdown policies keep it, in which case a worker is guaranteed
 * (ensurePrestart). Rejected tasks go through the rejection policy with no
 * lock held. */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "executor-internal.h"

/* The flags a spec may carry; any other bit is TK_EINVAL. */
#define KNOWN_FLAGS (TK_TASK_SKIP_MISSED | TK_TASK_AT_DEADLINE | TK_TASK_SLACK)

/* slack_ns is read (and checked) only under TK_TASK_SLACK, so a spec built
 * without the flag may leave it as it likes. */
static int validate_spec(const tk_task_spec *s) {
    if (s->fn == NULL)
        return TK_EINVAL;
    if (s->kind != TK_TASK_ONE_SHOT && s->kind != TK_TASK_FIXED_RATE &&
        s->kind != TK_TASK_FIXED_DELAY)
        return TK_EINVAL;
    if ((s->flags & ~KNOWN_FLAGS) != 0)
        return TK_EINVAL;
    if ((s->flags & TK_TASK_SLACK) != 0 && s->slack_ns < 0)
        return TK_EINVAL;
    if (s->kind != TK_TASK_ONE_SHOT && s->period_ns <= 0)
        return TK_EINVAL;
    return TK_OK;
}

/* Hands the caller its future (its reference was counted when t was built).
 * A call without a future has no reference of its own: t may be gone. */
static void hand_out(tk__task *t, tk_future **out) {
    if (out != NULL)
        *out = t;
}

/* The call fails with `rc` before the task was accepted. The caller keeps
 * its arg, unless a decorate hook had already replaced it: the decorated
 * task then belongs to the executor and is dropped through its arg_free (the
 * hook's wrapper would leak otherwise). t was never shared. */
static int fail_unaccepted(tk__task *t, int rc) {
    if ((t->bits & TK__TASK_DECORATED) != 0)
        tk__task_drop_arg(t);
    tk__task_discard_unused(t);
    return rc;
}

/* The task is dropped and the call fails with `rc`: arg_free runs (the task
 * was rejected), no future is handed out. t was never shared. */
static int drop_rejected(tk__task *t, int rc) {
    tk__task_drop_arg(t);
    tk__task_discard_unused(t);
    return rc;
}

/* Discard: the call succeeds, the future is cancelled, arg_free runs. */
static int discard(tk__task *t, tk_future **out) {
    tk__task_cancel_pending(t, false); /* drops the executor reference */
    hand_out(t, out);
    return TK_OK;
}

/* The rejection a thread is handling: what the stock handlers (tk_reject_*)
 * act on. Lives on the rejecting caller's stack; tk__current.rejection
 * points to it while the handler runs. */
typedef struct tk__rejection {
    tk_executor *ex;
    tk__task *t;
    tk_task_info info; /* what the handler is given */
    bool retried;      /* this is discard-oldest's retry */
    bool used;         /* a stock handler acted on it */
    enum { REJ_DISCARD_OR_FAIL = 0, REJ_RAN, REJ_RETRY } outcome;
} tk__rejection;

static int enqueue(tk_executor *ex, tk__task *t, tk_future **out, bool retried, bool *accepted);

/* The rejection in progress on this thread if `task` is its info and `ex`
 * its executor; else NULL. */
static tk__rejection *current_rejection(const tk_executor *ex, const tk_task_info *task) {
    tk__rejection *r = tk__current.rejection;
    if (r == NULL || ex == NULL || r->ex != ex || task != &r->info)
        return NULL;
    return r;
}

/* Whether a stock handler called outside a rejection can act on `task` as
 * on a task of its own: TK_OK or TK_EINVAL. */
static int check_standalone(const tk_executor *ex, const tk_task_info *task) {
    if (ex == NULL || task == NULL || task->fn == NULL)
        return TK_EINVAL;
    if (task->kind != TK_TASK_ONE_SHOT && task->kind != TK_TASK_FIXED_RATE &&
        task->kind != TK_TASK_FIXED_DELAY)
        return TK_EINVAL;
    if (task->kind != TK_TASK_ONE_SHOT && task->period_ns <= 0)
        return TK_EINVAL;
    return TK_OK;
}

/* The stock handlers' common entry. Inside the rejection in progress on this
 * thread (`ex` and `task` are what its handler was given): returns it, or
 * NULL with *rc = TK_ESTATE if a stock handler already acted on it. Outside
 * one (a program calling the handler itself, as the JDK allows): returns
 * NULL with *rc = TK_OK if the handler may act on `task` as on a task of its
 * own, TK_EINVAL if not (check_standalone). */
static tk__rejection *claim(const tk_executor *ex, const tk_task_info *task, int *rc) {
    tk__rejection *r = current_rejection(ex, task);
    if (r == NULL) {
        *rc = check_standalone(ex, task);
        return NULL;
    }
    if (r->used) {
        *rc = TK_ESTATE;
        return NULL;
    }
    r->used = true;
    *rc = TK_OK;
    return r;
}

/* Abort and discard only give the rejection their verdict: the status the
 * scheduling call returns (TK_OK: the task is dropped, its future cancelled).
 * Outside a rejection there is nothing to drop: the verdict is all they do. */
static int verdict(tk_executor *ex, const tk_task_info *task, int status) {
    int rc = TK_OK;
    (void)claim(ex, task, &rc);
    return rc != TK_OK ? rc : status;
}

int tk_reject_abort(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    (void)reason;
    (void)ctx;
    return verdict(ex, task, TK_EREJECTED);
}

int tk_reject_discard(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    (void)reason;
    (void)ctx;
    return verdict(ex, task, TK_OK);
}

/* Caller-runs waits in the caller until `deadline` (never early). Returns
 * false if the pool left RUNNING before or during the wait: the task is then
 * discarded (JDK CallerRunsPolicy). */
static bool wait_while_running(const tk_executor *ex, int64_t deadline) {
    if (atomic_load(&ex->state) != TK_POOL_RUNNING)
        return false;
    while (tk_clock_now_ns() < deadline) {
        struct timespec ts = tk__ns_to_timespec(deadline);
        /* EINTR or an early wake-up: the loop re-reads the clock. */
        (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    return atomic_load(&ex->state) == TK_POOL_RUNNING;
}

/* Caller-runs called outside a rejection: runs task->fn(arg) once on the
 * calling thread at task->deadline_ns, as a one-shot task that no future
 * shows (a task object gives the run its tk_run: tk_run_info(),
 * tk_run_future(), tk_run_set_result() work as in any run). The caller
 * keeps task->arg. */
static int caller_runs_standalone(tk_executor *ex, const tk_task_info *task) {
    if (task->kind != TK_TASK_ONE_SHOT)
        return TK_EREJECTED; /* a caller cannot host a periodic task */
    tk__task *t = tk__task_alloc(ex, false);
    if (t == NULL)
        return TK_ENOMEM;
    if (!wait_while_running(ex, task->deadline_ns)) {
        tk__task_discard_unused(t);
        return TK_OK; /* shut down: discarded */
    }
    t->u.fn = task->fn;
    t->arg = task->arg;
    t->kind = TK_TASK_ONE_SHOT;
    t->node.deadline_ns = task->deadline_ns;
    t->node.seq = task->seq;
    atomic_store_explicit(&t->refs, 1, memory_order_relaxed); /* the executor's */
    atomic_store(&t->state, TK__TASK_RUNNING);
    int status = tk__invoke(ex, t, false, NULL, NULL);
    tk__finish_one_shot(ex, t, status, 0); /* frees t */
    return status == 0 ? TK_OK : TK_ETASKFAILED;
}

/* Caller-runs for a one-shot task: wait for the deadline in the caller, then
 * run it here (never early); discard if the pool shut down meanwhile. */
int tk_reject_caller_runs(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    (void)reason;
    (void)ctx;
    int rc = TK_OK;
    tk__rejection *r = claim(ex, task, &rc);
    if (r == NULL)
        return rc != TK_OK ? rc : caller_runs_standalone(ex, task);
    tk__task *t = r->t;
    if (t->kind != TK_TASK_ONE_SHOT)
        return TK_EREJECTED; /* a caller cannot host a periodic task */
    if (!wait_while_running(ex, t->node.deadline_ns))
        return TK_OK; /* shut down: discard (JDK CallerRunsPolicy) */
    atomic_store(&t->state, TK__TASK_RUNNING);
    int status = tk__invoke(ex, t, false, NULL, NULL);
    tk__finish_one_shot(ex, t, status, 0);
    r->outcome = REJ_RAN;
    return TK_OK;
}

/* Drops the queued task or timer with the earliest deadline, if any
 * (cancelled; a timer is stopped). */
static void drop_oldest(tk_executor *ex) {
    tk_node *n = NULL;
    if (ex->ops->remove_first(ex->q, &n) == TK_OK) {
        tk__shard_add(&tk__shard_here(ex)->removed, 1);
        tk__node_drop(ex, n, true); /* cancelled, the queue's reference back */
    }
}

int tk_reject_discard_oldest(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    (void)reason;
    (void)ctx;
    int rc = TK_OK;
    tk__rejection *r = claim(ex, task, &rc);
    if (r == NULL && rc != TK_OK)
        return rc;
    if (atomic_load(&ex->state) != TK_POOL_RUNNING || (r != NULL && r->retried))
        return TK_OK; /* discard */
    drop_oldest(ex);
    if (r != NULL) {
        r->outcome = REJ_RETRY;
        return TK_OK;
    }
    /* Outside a rejection: "retries execution of task r" as a new task, at
     * the deadline it names, through the scheduling call (and its policy). */
    tk_task_spec spec = {.fn = task->fn,
                         .arg = task->arg,
                         .kind = task->kind,
                         .delay_ns = task->deadline_ns,
                         .period_ns = task->kind == TK_TASK_ONE_SHOT ? 0 : task->period_ns,
                         .flags = TK_TASK_AT_DEADLINE};
    return tk_executor_schedule_spec(ex, &spec, NULL);
}

/* The handler of each enum policy; TK_REJECT_CUSTOM uses ex->reject. */
static const tk_reject_fn stock_handlers[] = {
    [TK_REJECT_ABORT] = tk_reject_abort,
    [TK_REJECT_CALLER_RUNS] = tk_reject_caller_runs,
    [TK_REJECT_DISCARD] = tk_reject_discard,
    [TK_REJECT_DISCARD_OLDEST] = tk_reject_discard_oldest,
};

/* A task the pool did not accept. `reason`: TK_EREJECTED (shut down) or
 * TK_EFULL (engine pending limit). t holds the executor's reference, and the
 * user's if a future was asked for, and was never shared. The handler (a
 * stock one for the enum policies) runs with no lock held; its return value
 * decides, unless a stock handler ran the task (caller-runs) or asked for a
 * retry (discard-oldest). */
static int reject(tk_executor *ex, tk__task *t, int reason, tk_future **out, bool retried,
                  bool *accepted) {
    if (!retried)
        tk__shard_add(&tk__shard_here(ex)->rejected, 1);
    pthread_mutex_lock(&ex->pool_lock); /* policy, handler and ctx: one set */
    tk_rejection_policy policy = ex->rejection;
    tk_reject_fn fn = ex->reject;
    void *ctx = ex->reject_ctx;
    pthread_mutex_unlock(&ex->pool_lock);
    if (policy != TK_REJECT_CUSTOM) {
        fn = stock_handlers[policy];
        ctx = NULL;
    }
    tk__rejection r = {.ex = ex, .t = t, .retried = retried};
    tk__task_info(t, &r.info);
    tk__rejection *saved = tk__current.rejection;
    tk__current.rejection = &r;
    int rc = fn(ex, &r.info, reason, ctx);
    tk__current.rejection = saved;
    if (r.outcome == REJ_RAN) { /* done: its arg_free ran, its future is complete */
        hand_out(t, out);
        return TK_OK;
    }
    if (rc != TK_OK)
        return drop_rejected(t, rc);
    if (r.outcome == REJ_RETRY)
        return enqueue(ex, t, out, true, accepted);
    return discard(t, out);
}

/* The re-check's way to take back a task offered by a call: through its
 * user reference (`t`, alive), or, for a call without a future, by looking
 * for its node among the queued ones (`n`, compared by address only: a task
 * that left the queue may be run and freed already, and whoever took it
 * decides its fate). Cancels it if it was still pending and takes it out of
 * the queue. */
static void take_back(tk_executor *ex, tk__task *t, const tk_node *n) {
    if (t != NULL) {
        tk__task_cancel_and_remove(t);
        return;
    }
    if (!tk__pull_if_queued(ex, n))
        return;
    tk__shard_add(&tk__shard_here(ex)->removed, 1);
    tk__task *q = tk__task_of((tk_node *)n);
    tk__task_cancel_pending(q, false); /* the executor's reference */
    tk__task_unref(q, 1);              /* the queue's, ours now */
    tk__rewake_if_shutdown(ex);
}

/* A task offered while the pool was shutting down and kept by the policies
 * needs a live worker (JDK ensurePrestart). If none can be had, or the pool
 * is already past SHUTDOWN, the task is taken back (take_back). */
static void ensure_prestart_shutdown(tk_executor *ex, tk__task *t, const tk_node *n) {
    if (tk__add_worker(ex, ex->target, true) == 1)
        return;
    pthread_mutex_lock(&ex->pool_lock);
    bool stranded = atomic_load(&ex->state) >= TK_POOL_STOP || atomic_load(&ex->wc) == 0;
    pthread_mutex_unlock(&ex->pool_lock);
    if (stranded)
        take_back(ex, t, n);
}

/* Offers a fully built task. t->refs is not yet shared: the executor's
 * reference, and the user's if a future is asked for. */
static int enqueue(tk_executor *ex, tk__task *t, tk_future **out, bool retried, bool *accepted) {
    if (atomic_load(&ex->state) != TK_POOL_RUNNING)
        return reject(ex, t, TK_EREJECTED, out, retried, accepted);

    /* Workers were ensured by tk_executor_schedule_spec() before decorate. */

    /* + the queue's reference, taken before the node becomes visible. */
    uint32_t refs = out != NULL ? 2 : 1;
    atomic_store_explicit(&t->refs, refs + 1, memory_order_relaxed);
    /* What the re-check needs of the task, read while it is ours: without a
     * future, nothing keeps it alive once offered (a worker may run and
     * free it at once). */
    const tk_node *n = &t->node;
    bool periodic = t->kind != TK_TASK_ONE_SHOT;
    int64_t deadline = t->node.deadline_ns;
    tk__task *kept = out != NULL ? t : NULL;
    int rc = ex->ops->offer(ex->q, &t->node);
    if (TK__UNLIKELY(rc != TK_OK)) {
        atomic_store_explicit(&t->refs, refs, memory_order_relaxed);
        if (rc == TK_EFULL)
            return reject(ex, t, TK_EFULL, out, retried, accepted);
        if (rc == TK_ECLOSED)
            return reject(ex, t, TK_EREJECTED, out, retried, accepted);
        return fail_unaccepted(t, rc);
    }
    *accepted = true; /* counted through the seq (tk_executor_stats_get) */

    /* The re-check (JDK delayedExecute). From here on t is touched only
     * through `kept`, the user's reference, or take_back(). */
    int s = atomic_load(&ex->state);
    if (TK__UNLIKELY(s != TK_POOL_RUNNING)) {
        if (!tk__can_run(ex, periodic, deadline, s))
            take_back(ex, kept, n);
        else
            ensure_prestart_shutdown(ex, kept, n);
    } else if (TK__UNLIKELY(!tk__ensure_worker(ex)) && tk__pull_if_queued(ex, n)) {
        /* Every worker timed out meanwhile and none can start, and the task
         * is still queued, unseen: it is ours again, and the call fails as
         * it would have had no thread been available at its start (as a
         * timer's start() does). Had a worker taken it, one is alive. */
        *accepted = false;
        return fail_unaccepted(t, TK_ETHREAD); /* frees it whatever its references */
    }
    hand_out(kept, out);
    return TK_OK;
}

void tk__requeue_periodic(tk_executor *ex, tk__task *t) {
    int s = atomic_load(&ex->state);
    if (s != TK_POOL_RUNNING && !tk__can_run_in_state(ex, &t->node, s)) {
        tk__task_cancel_pending(t, false); /* JDK reExecutePeriodic: cancel */
        tk__task_unref(t, 1);
        return;
    }
    atomic_fetch_add(&t->refs, 1); /* guard for the re-check below */
    int rc = ex->ops->offer(ex->q, &t->node);
    if (rc != TK_OK) {
        /* Stopped (TK_ECLOSED) or the engine's pending limit (TK_EFULL): the
         * task cannot go on; its future reports it cancelled. */
        if (rc == TK_EFULL)
            tk__shard_add(&tk__shard_here(ex)->rejected, 1);
        tk__task_cancel_pending(t, false);
        tk__task_unref(t, 2);
        return;
    }
    atomic_fetch_add_explicit(&ex->requeued_count, 1, memory_order_relaxed);
    s = atomic_load(&ex->state);
    if (s != TK_POOL_RUNNING && !tk__can_run_in_state(ex, &t->node, s)) {
        tk__task_cancel_and_remove(t);
    } else if (atomic_load(&t->state) == TK__TASK_REMOVED ||
               (atomic_load(&t->state) == TK__TASK_CANCELLED &&
                atomic_load_explicit(&ex->remove_on_cancel, memory_order_relaxed))) {
        /* Cancelled (or removed) between the end of the run and the offer:
         * the canceller's remove() found nothing, so remove it now. */
        if (tk__queue_remove(ex, &t->node) == TK_OK) {
            tk__task_unref(t, 1);
            tk__rewake_if_shutdown(ex);
        }
    }
    tk__task_unref(t, 1);
}

int tk_executor_schedule_spec(tk_executor *ex, const tk_task_spec *spec, tk_future **out) {
    if (ex == NULL || spec == NULL)
        return TK_EINVAL;
    /* read in place: a copy of the caller's fresh stores would wait for them
     * (a load that spans two stores is not forwarded); the decorate hook
     * works on a copy */
    tk_task_spec decorated;
    const tk_task_spec *sp = spec;
    int rc = validate_spec(sp);
    if (rc != TK_OK)
        return rc;
    /* Everything that can fail without the task is done before the decorate
     * hook runs, so a hook's wrapper is never stranded by TK_ENOMEM or
     * TK_ETHREAD: allocate the task, make sure a worker can run it. */
    /* a small task unless something may need a big one's fields */
    bool big = sp->kind != TK_TASK_ONE_SHOT || sp->arg_free != NULL || ex->hooks.decorate != NULL;
    tk__task *t = tk__task_alloc(ex, big);
    if (t == NULL)
        return TK_ENOMEM;
    if (TK__UNLIKELY(atomic_load_explicit(&ex->wc, memory_order_relaxed) < ex->target) &&
        atomic_load(&ex->state) == TK_POOL_RUNNING) {
        rc = tk__add_worker(ex, ex->target, false);
        if (rc < 0 && atomic_load(&ex->wc) == 0) {
            tk__task_discard_unused(t);
            return rc;
        }
    }
    if (ex->hooks.decorate != NULL) {
        decorated = *spec;
        sp = &decorated;
        rc = ex->hooks.decorate(ex, &decorated, ex->hooks.ctx);
        if (rc != TK_OK) {
            tk__task_discard_unused(t);
            return rc;
        }
        t->bits |= TK__TASK_DECORATED;
        if (validate_spec(sp) != TK_OK) {
            t->arg = sp->arg;
            tk__task_big_of(t)->arg_free = sp->arg_free;
            return fail_unaccepted(t, TK_EINVAL);
        }
    }
    t->u.fn = sp->fn;
    t->arg = sp->arg;
    if (big) {
        tk__task_big_of(t)->arg_free = sp->arg_free;
        tk__task_big_of(t)->period_ns = sp->kind == TK_TASK_ONE_SHOT ? 0 : sp->period_ns;
    }
    t->kind = (uint8_t)sp->kind;
    t->flags = (uint8_t)sp->flags;
    if (out != NULL)
        t->bits |= TK__TASK_USER_REF;
    int64_t deadline = (sp->flags & TK_TASK_AT_DEADLINE) != 0
                           ? sp->delay_ns
                           : tk_deadline_after_ns(tk_clock_now_ns(), sp->delay_ns);
    t->node.deadline_ns = deadline; /* not shared before offer() */
    t->node.seq = tk__next_seq(ex, false);
    /* Every run of the task keeps this window: the worker re-offers the same
     * node (tk__requeue_periodic) and never writes it. */
    t->node.slack_ns = (sp->flags & TK_TASK_SLACK) != 0 ? sp->slack_ns : ex->default_slack_ns;
    /* the executor's reference, and the user's (enqueue adds the queue's) */
    atomic_store_explicit(&t->refs, out != NULL ? 2 : 1, memory_order_relaxed);
    bool accepted = false;
    rc = enqueue(ex, t, out, false, &accepted);
    if (!accepted) /* it took a seq: see tk__shard.unaccepted */
        atomic_fetch_add_explicit(&tk__shard_here(ex)->unaccepted, 1, memory_order_release);
    return rc;
}

int tk_executor_execute(tk_executor *ex, tk_task_fn fn, void *arg) {
    tk_task_spec s = {.fn = fn, .arg = arg, .kind = TK_TASK_ONE_SHOT};
    return tk_executor_schedule_spec(ex, &s, NULL);
}

int tk_executor_submit(tk_executor *ex, tk_task_fn fn, void *arg, tk_future **out) {
    if (out == NULL)
        return TK_EINVAL;
    tk_task_spec s = {.fn = fn, .arg = arg, .kind = TK_TASK_ONE_SHOT};
    return tk_executor_schedule_spec(ex, &s, out);
}

int tk_executor_schedule(tk_executor *ex, tk_task_fn fn, void *arg, int64_t delay_ns,
                         tk_future **out) {
    tk_task_spec s = {.fn = fn, .arg = arg, .kind = TK_TASK_ONE_SHOT, .delay_ns = delay_ns};
    return tk_executor_schedule_spec(ex, &s, out);
}

int tk_executor_schedule_at_fixed_rate(tk_executor *ex, tk_task_fn fn, void *arg,
                                       int64_t initial_delay_ns, int64_t period_ns,
                                       tk_future **out) {
    tk_task_spec s = {.fn = fn,
                      .arg = arg,
                      .kind = TK_TASK_FIXED_RATE,
                      .delay_ns = initial_delay_ns,
                      .period_ns = period_ns};
    return tk_executor_schedule_spec(ex, &s, out);
}

int tk_executor_schedule_with_fixed_delay(tk_executor *ex, tk_task_fn fn, void *arg,
                                          int64_t initial_delay_ns, int64_t delay_ns,
                                          tk_future **out) {
    tk_task_spec s = {.fn = fn,
                      .arg = arg,
                      .kind = TK_TASK_FIXED_DELAY,
                      .delay_ns = initial_delay_ns,
                      .period_ns = delay_ns};
    return tk_executor_schedule_spec(ex, &s, out);
}

int tk__spec_check(const tk_task_spec *spec) {
    return spec == NULL ? TK_EINVAL : validate_spec(spec);
}
