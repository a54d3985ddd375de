/* SPDX-License-Identifier: MIT */
/* Conformance: every rejection policy, after shutdown and past the engine's pending limit. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

static int schedule_one(tk_executor *ex, counter *c, tk_task_kind kind, int64_t delay,
                        tk_future **out) {
    tk_task_spec spec = counter_spec(c, kind, delay, kind == TK_TASK_ONE_SHOT ? 0 : MS(5));
    return tk_executor_schedule_spec(ex, &spec, out);
}

/* Asserts a call was discarded: TK_OK, a cancelled future, nothing ran, arg freed. */
static void expect_discarded(ct *t, tk_executor *ex, tk_task_kind kind) {
    counter *c = counter_new(t);
    tk_future *f = NULL;
    assert_int_equal(schedule_one(ex, c, kind, MS(1), &f), TK_OK);
    ct_track(t, f);
    assert_true(tk_future_is_done(f));
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(tk_future_get_timeout(f, 0, NULL), TK_ECANCELLED);
    assert_int_equal(tk_future_cancel(f, false), TK_EDONE);
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    sleep_ns(MS(10));
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(atomic_load(&c->freed), 1);
}

static void abort_policy_rejects_after_shutdown(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_ABORT, NULL, NULL, 0);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    counter *c = counter_new(t);
    tk_future *const sentinel = (tk_future *)c;
    tk_future *f = sentinel;
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_EREJECTED);
    assert_int_equal(tk_executor_submit(ex, counter_fn, c, &f), TK_EREJECTED);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(1), &f), TK_EREJECTED);
    assert_int_equal(tk_executor_schedule_at_fixed_rate(ex, counter_fn, c, 0, MS(1), &f),
                     TK_EREJECTED);
    assert_int_equal(tk_executor_schedule_with_fixed_delay(ex, counter_fn, c, 0, MS(1), &f),
                     TK_EREJECTED);
    assert_int_equal(schedule_one(ex, c, TK_TASK_ONE_SHOT, 0, &f), TK_EREJECTED);
    assert_ptr_equal(f, sentinel);
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    sleep_ns(MS(10));
    assert_int_equal(atomic_load(&c->freed), 1); /* only the spec had an arg_free */
    assert_int_equal(atomic_load(&c->runs), 0);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.rejected_count, 6);
    assert_int_equal(s.task_count, 0);
}

static void discard_policy_cancels_after_shutdown(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_DISCARD, NULL, NULL, 0);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    expect_discarded(t, ex, TK_TASK_ONE_SHOT);
    expect_discarded(t, ex, TK_TASK_FIXED_RATE);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    sleep_ns(MS(5));
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(stats_of(ex).rejected_count, 3);
}

static void discard_oldest_discards_the_new_task_after_shutdown(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_DISCARD_OLDEST, NULL, NULL, 0);
    counter *queued = counter_new(t);
    tk_future *qf = NULL;
    assert_int_equal(schedule_one(ex, queued, TK_TASK_ONE_SHOT, MS(30), &qf), TK_OK);
    ct_track(t, qf);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    expect_discarded(t, ex, TK_TASK_ONE_SHOT);
    /* The queued task is not the one dropped: it still runs (execute-delayed). */
    assert_int_equal(tk_future_get_timeout(qf, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&queued->runs), 1);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(stats_of(ex).rejected_count, 1);
}

static void caller_runs_discards_after_shutdown(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_CALLER_RUNS, NULL, NULL, 0);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    expect_discarded(t, ex, TK_TASK_ONE_SHOT);
    /* Periodic tasks cannot be hosted by the caller: abort. */
    counter *c = counter_new(t);
    tk_future *f = NULL;
    assert_int_equal(schedule_one(ex, c, TK_TASK_FIXED_DELAY, 0, &f), TK_EREJECTED);
    assert_null(f);
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(atomic_load(&c->main_thread_runs), 0);
}

typedef struct reject_log {
    atomic_int calls;
    atomic_int ret; /* what the handler returns */
    atomic_int reason;
    atomic_int on_caller_thread;
    atomic_int saw_shutdown;
    pthread_t caller;
    tk_task_info info; /* written before calls is bumped */
    tk_executor *ex;
    void *ctx;
} reject_log;

static int rl_reject(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    reject_log *r = ctx;
    r->info = *task;
    r->ex = ex;
    r->ctx = ctx;
    atomic_store(&r->reason, reason);
    atomic_store(&r->on_caller_thread, pthread_equal(pthread_self(), r->caller));
    /* No executor lock is held: calling back in is fine. */
    atomic_store(&r->saw_shutdown, tk_executor_is_shutdown(ex));
    tk_executor_stats s;
    (void)tk_executor_stats_get(ex, &s);
    atomic_fetch_add(&r->calls, 1);
    return atomic_load(&r->ret);
}

static void custom_handler_sees_task_and_its_status_is_returned(void **state) {
    ct *t = CT(state);
    reject_log *r = ct_calloc(t, 1, sizeof(*r));
    r->caller = pthread_self();
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_CUSTOM, rl_reject, r, 0);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);

    counter *c = counter_new(t);
    tk_future *const sentinel = (tk_future *)c;
    tk_future *f = sentinel;
    atomic_store(&r->ret, TK_ENOTSUP);
    int64_t before = now_ns();
    tk_task_spec spec = counter_spec(c, TK_TASK_FIXED_RATE, MS(7), MS(3));
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_ENOTSUP);
    int64_t after = now_ns();
    assert_ptr_equal(f, sentinel);
    assert_int_equal(atomic_load(&r->calls), 1);
    assert_int_equal(atomic_load(&r->reason), TK_EREJECTED);
    assert_true(atomic_load(&r->on_caller_thread));
    assert_true(atomic_load(&r->saw_shutdown));
    assert_ptr_equal(r->ex, ex);
    assert_ptr_equal(r->ctx, r);
    assert_ptr_equal(r->info.fn, counter_fn);
    assert_ptr_equal(r->info.arg, c);
    assert_int_equal(r->info.kind, TK_TASK_FIXED_RATE);
    assert_int_equal(r->info.period_ns, MS(3));
    assert_int_equal(r->info.run_count, 0);
    assert_true(r->info.deadline_ns >= before + MS(7));
    assert_true(r->info.deadline_ns <= after + MS(7));
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));

    /* Returning TK_OK pretends acceptance: the future is cancelled. */
    atomic_store(&r->ret, TK_OK);
    counter *d = counter_new(t);
    assert_int_equal(schedule_one(ex, d, TK_TASK_ONE_SHOT, 0, &f), TK_OK);
    ct_track(t, f);
    assert_int_equal(atomic_load(&r->calls), 2);
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(tk_future_get(f, NULL), TK_ECANCELLED);
    assert_true(wait_ge(&d->freed, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&d->runs), 0);
    assert_int_equal(atomic_load(&c->freed), 1);
    assert_int_equal(stats_of(ex).rejected_count, 2);
}

/* ---- past the engine's pending limit ------------------------------------------ */

enum { LIMIT = 4 };

static bool need_pending_limit(ct *t) {
    if (!t->eng->pending_limit) {
        print_message("[  SKIP    ] engine '%s' has no pending limit (it does not claim "
                      "TK_QUEUE_CAP_BOUNDED)\n",
                      t->eng->ops->name);
        return false;
    }
    return true;
}

/* Fills the queue to the limit with far-off tasks; returns their futures. */
static tk_future **fill(ct *t, tk_executor *ex, counter *c) {
    tk_future **f = ct_calloc(t, LIMIT, sizeof(*f));
    for (int i = 0; i < LIMIT; i++) {
        assert_int_equal(schedule_one(ex, c, TK_TASK_ONE_SHOT, TK_NS_PER_S * 20 + i * MS(1), &f[i]),
                         TK_OK);
        ct_track(t, f[i]);
    }
    assert_int_equal(stats_of(ex).queue_size, LIMIT);
    return f;
}

static void full_queue_abort_rejects(void **state) {
    ct *t = CT(state);
    if (!need_pending_limit(t))
        skip();
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_ABORT, NULL, NULL, LIMIT);
    counter *c = counter_new(t);
    tk_future **f = fill(t, ex, c);
    counter *extra = counter_new(t);
    tk_future *g = NULL;
    assert_int_equal(schedule_one(ex, extra, TK_TASK_ONE_SHOT, MS(1), &g), TK_EREJECTED);
    assert_null(g);
    assert_true(wait_ge(&extra->freed, 1, CONF_WAIT));
    assert_int_equal(stats_of(ex).rejected_count, 1);
    assert_int_equal(stats_of(ex).queue_size, LIMIT);
    assert_int_equal(tk_executor_state(ex), TK_POOL_RUNNING);
    /* Room again once a task leaves. */
    assert_int_equal(tk_executor_set_remove_on_cancel(ex, true), TK_OK);
    assert_int_equal(tk_future_cancel(f[0], false), TK_OK);
    assert_int_equal(wait_stat(ex, st_queue, LIMIT - 1, CONF_WAIT), LIMIT - 1);
    assert_int_equal(schedule_one(ex, extra, TK_TASK_ONE_SHOT, MS(1), &g), TK_OK);
    ct_track(t, g);
    assert_int_equal(tk_future_get_timeout(g, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&extra->runs), 1);
}

static void full_queue_custom_handler_gets_efull(void **state) {
    ct *t = CT(state);
    if (!need_pending_limit(t))
        skip();
    reject_log *r = ct_calloc(t, 1, sizeof(*r));
    r->caller = pthread_self();
    atomic_store(&r->ret, TK_EFULL);
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_CUSTOM, rl_reject, r, LIMIT);
    counter *c = counter_new(t);
    fill(t, ex, c);
    counter *extra = counter_new(t);
    tk_future *g = NULL;
    assert_int_equal(schedule_one(ex, extra, TK_TASK_FIXED_DELAY, MS(2), &g), TK_EFULL);
    assert_null(g);
    assert_int_equal(atomic_load(&r->calls), 1);
    assert_int_equal(atomic_load(&r->reason), TK_EFULL);
    assert_false(atomic_load(&r->saw_shutdown));
    assert_true(atomic_load(&r->on_caller_thread));
    assert_ptr_equal(r->info.arg, extra);
    assert_int_equal(r->info.kind, TK_TASK_FIXED_DELAY);
    assert_true(wait_ge(&extra->freed, 1, CONF_WAIT));
    assert_int_equal(stats_of(ex).rejected_count, 1);
}

static void full_queue_caller_runs_in_the_calling_thread(void **state) {
    ct *t = CT(state);
    if (!need_pending_limit(t))
        skip();
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_CALLER_RUNS, NULL, NULL, LIMIT);
    counter *c = counter_new(t);
    fill(t, ex, c);
    counter *extra = counter_new(t);
    tk_future *g = NULL;
    int64_t before = now_ns();
    assert_int_equal(schedule_one(ex, extra, TK_TASK_ONE_SHOT, MS(20), &g), TK_OK);
    int64_t after = now_ns();
    ct_track(t, g);
    /* Ran in this thread, before the call returned, and not early. */
    assert_int_equal(atomic_load(&extra->runs), 1);
    assert_int_equal(atomic_load(&extra->main_thread_runs), 1);
    assert_true(atomic_load(&extra->first_start) >= before + MS(20));
    assert_true(atomic_load(&extra->first_start) <= after);
    assert_true(tk_future_is_done(g));
    assert_false(tk_future_is_cancelled(g));
    assert_int_equal(tk_future_get_timeout(g, 0, NULL), TK_OK);
    assert_true(wait_ge(&extra->freed, 1, CONF_WAIT));
    /* A periodic task cannot be hosted by the caller: abort. */
    counter *p = counter_new(t);
    tk_future *pf = NULL;
    assert_int_equal(schedule_one(ex, p, TK_TASK_FIXED_RATE, 0, &pf), TK_EREJECTED);
    assert_null(pf);
    assert_int_equal(atomic_load(&p->runs), 0);
    assert_int_equal(stats_of(ex).rejected_count, 2);
    assert_int_equal(atomic_load(&c->runs), 0);
}

static void full_queue_discard_cancels_the_new_task(void **state) {
    ct *t = CT(state);
    if (!need_pending_limit(t))
        skip();
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_DISCARD, NULL, NULL, LIMIT);
    counter *c = counter_new(t);
    tk_future **f = fill(t, ex, c);
    expect_discarded(t, ex, TK_TASK_ONE_SHOT);
    for (int i = 0; i < LIMIT; i++)
        assert_false(tk_future_is_done(f[i]));
    assert_int_equal(stats_of(ex).queue_size, LIMIT);
    assert_int_equal(stats_of(ex).rejected_count, 1);
}

static void full_queue_discard_oldest_drops_the_earliest(void **state) {
    ct *t = CT(state);
    if (!need_pending_limit(t))
        skip();
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_DISCARD_OLDEST, NULL, NULL, LIMIT);
    counter *c = counter_new(t);
    tk_future **f = fill(t, ex, c);
    counter *extra = counter_new(t);
    tk_future *g = NULL;
    assert_int_equal(schedule_one(ex, extra, TK_TASK_ONE_SHOT, TK_NS_PER_S * 25, &g), TK_OK);
    ct_track(t, g);
    assert_false(tk_future_is_done(g));
    assert_true(tk_future_is_cancelled(f[0])); /* the earliest deadline */
    for (int i = 1; i < LIMIT; i++)
        assert_false(tk_future_is_done(f[i]));
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&c->freed), 1);
    assert_int_equal(stats_of(ex).queue_size, LIMIT);
    assert_int_equal(stats_of(ex).rejected_count, 1);
}

/* A program may call a handler itself, as decorating handlers and wrappers
 * do: handler.rejectedExecution(r, executor). Each stock handler then acts on
 * the task it is given. AbortPolicy: "Always throws
 * RejectedExecutionException." DiscardPolicy: "Does nothing, which has the
 * effect of discarding task r." CallerRunsPolicy: "Executes task r in the
 * caller's thread, unless the executor has been shut down, in which case the
 * task is discarded." DiscardOldestPolicy: "Obtains and ignores the next task
 * that the executor would otherwise execute, if one is immediately
 * available, and then retries execution of task r, unless the executor is
 * shut down, in which case task r is instead discarded." */
static void stock_handlers_called_outside_a_rejection_act_on_the_given_task(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_task_info info;
    memset(&info, 0, sizeof(info));
    info.fn = counter_fn;
    info.arg = c;
    info.kind = TK_TASK_ONE_SHOT;
    info.deadline_ns = now_ns() + MS(20);
    assert_int_equal(tk_reject_abort(ex, &info, TK_EREJECTED, NULL), TK_EREJECTED);
    assert_int_equal(tk_reject_discard(ex, &info, TK_EREJECTED, NULL), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 0);
    /* caller-runs: in this thread, at the deadline (never early) */
    assert_int_equal(tk_reject_caller_runs(ex, &info, TK_EREJECTED, NULL), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 1);
    assert_int_equal(atomic_load(&c->main_thread_runs), 1);
    assert_true(atomic_load(&c->first_start) >= info.deadline_ns);
    assert_int_equal(atomic_load(&c->freed), 0); /* the arg stays the caller's */
    /* a failed run is reported, since no future holds it */
    atomic_store(&c->ret, 4);
    info.deadline_ns = 0;
    assert_int_equal(tk_reject_caller_runs(ex, &info, TK_EFULL, NULL), TK_ETASKFAILED);
    assert_int_equal(atomic_load(&c->runs), 2);
    /* a periodic task cannot be hosted by a caller, as inside a rejection */
    tk_task_info periodic = info;
    periodic.kind = TK_TASK_FIXED_RATE;
    periodic.period_ns = MS(1);
    assert_int_equal(tk_reject_caller_runs(ex, &periodic, TK_EREJECTED, NULL), TK_EREJECTED);
    assert_int_equal(atomic_load(&c->runs), 2);
    tk_executor_stats st = stats_of(ex);
    assert_int_equal(st.runs, 2);
    assert_int_equal(st.failed_count, 1);
    assert_int_equal(st.rejected_count, 0);
    assert_int_equal(st.accepted_count, 0);

    /* discard-oldest: the earliest queued task is dropped, the given one
     * scheduled */
    counter *old = counter_new(t);
    tk_future *of = ct_schedule(t, ex, counter_fn, old, 10 * TK_NS_PER_S);
    counter *retried = counter_new(t);
    tk_task_info r = info;
    r.arg = retried;
    r.deadline_ns = now_ns();
    assert_int_equal(tk_reject_discard_oldest(ex, &r, TK_EREJECTED, NULL), TK_OK);
    assert_true(tk_future_is_cancelled(of));
    assert_true(wait_ge(&retried->runs, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&old->runs), 0);

    /* shut down: caller-runs and discard-oldest discard; abort still refuses */
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_reject_caller_runs(ex, &r, TK_EREJECTED, NULL), TK_OK);
    assert_int_equal(tk_reject_discard_oldest(ex, &r, TK_EREJECTED, NULL), TK_OK);
    assert_int_equal(tk_reject_abort(ex, &r, TK_EREJECTED, NULL), TK_EREJECTED);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&retried->runs), 1);
}

/* A decorating handler: it wraps a stock handler, both inside the rejection
 * (delegating with what it was given) and outside it (the same handler
 * called by the program itself on a task of its own). */
typedef struct decorating {
    atomic_int calls;
} decorating;

static int decorating_handler(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    atomic_fetch_add(&((decorating *)ctx)->calls, 1);
    return tk_reject_caller_runs(ex, task, reason, NULL);
}

static void a_decorating_handler_works_inside_and_outside_a_rejection(void **state) {
    ct *t = CT(state);
    decorating *d = ct_calloc(t, 1, sizeof(*d));
    tk_executor *ex = ct_executor_with_policy(t, TK_REJECT_CUSTOM, decorating_handler, d, 0);
    counter *c = counter_new(t);
    tk_task_info info;
    memset(&info, 0, sizeof(info));
    info.fn = counter_fn;
    info.arg = c;
    info.kind = TK_TASK_ONE_SHOT;
    assert_int_equal(decorating_handler(ex, &info, TK_EREJECTED, d), TK_OK);
    assert_int_equal(atomic_load(&c->main_thread_runs), 1);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    /* shut down: the rejection goes through it, and caller-runs discards */
    counter *late = counter_new(t);
    tk_future *f = NULL;
    assert_int_equal(schedule_one(ex, late, TK_TASK_ONE_SHOT, 0, &f), TK_OK);
    ct_track(t, f);
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(atomic_load(&d->calls), 2);
    assert_int_equal(atomic_load(&late->runs), 0);
    assert_int_equal(atomic_load(&c->runs), 1);
}

CONF_TABLE(reject,
           {"abort policy: scheduling after shutdown returns TK_EREJECTED",
            abort_policy_rejects_after_shutdown},
           {"discard policy: after shutdown the call succeeds with a cancelled future",
            discard_policy_cancels_after_shutdown},
           {"discard-oldest policy: after shutdown the new task is discarded",
            discard_oldest_discards_the_new_task_after_shutdown},
           {"caller-runs policy: after shutdown the task is discarded, not run",
            caller_runs_discards_after_shutdown},
           {"custom handler sees the task and its status is returned",
            custom_handler_sees_task_and_its_status_is_returned},
           {"past the pending limit, abort returns TK_EREJECTED", full_queue_abort_rejects},
           {"past the pending limit, a custom handler gets reason TK_EFULL",
            full_queue_custom_handler_gets_efull},
           {"past the pending limit, caller-runs runs the task in the calling thread",
            full_queue_caller_runs_in_the_calling_thread},
           {"past the pending limit, discard cancels the new task",
            full_queue_discard_cancels_the_new_task},
           {"past the pending limit, discard-oldest drops the earliest queued task",
            full_queue_discard_oldest_drops_the_earliest},
           {"stock handlers called outside a rejection act on the task given",
            stock_handlers_called_outside_a_rejection_act_on_the_given_task},
           {"a decorating handler works inside and outside a rejection",
            a_decorating_handler_works_inside_and_outside_a_rejection}, );
