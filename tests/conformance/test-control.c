/* SPDX-License-Identifier: MIT */
/* Conformance: run-time control, as ThreadPoolExecutor's setters: the core
 * pool size, the keep-alive time and core thread time-out, the rejection
 * handler and thread factory after creation, the stock rejection handlers as
 * functions, and a before_execute hook that vetoes a run. Each case quotes
 * the JDK documentation it implements. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

/* Pool-size changes that reach idle workers within about a second (the
 * executor's idle re-check) plus the keep-alive: generous on a loaded box. */
#define SHRINK_WAIT (TK_NS_PER_S * 10)
#define KEEP_ALIVE MS(50)

static tk_executor *timeout_pool(ct *t, unsigned core, bool allow) {
    tk_executor_options opt;
    ct_options(t, &opt, core);
    opt.keep_alive_ns = KEEP_ALIVE;
    opt.allow_core_thread_timeout = allow;
    return ct_create(t, &opt);
}

/* ---- core pool size ------------------------------------------------------------------ */

/* JDK ThreadPoolExecutor.setCorePoolSize: "Sets the core number of threads. This overrides any
 * value set in the constructor." @throws IllegalArgumentException "if corePoolSize < 0 or
 * corePoolSize is greater than the maximum pool size". */
static void core_pool_size_is_read_and_set_at_run_time(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 3);
    assert_int_equal(tk_executor_get_core_pool_size(ex), 3);
    assert_int_equal(tk_executor_set_core_pool_size(ex, 5), TK_OK);
    assert_int_equal(tk_executor_get_core_pool_size(ex), 5);
    assert_int_equal(tk_executor_set_core_pool_size(ex, 0), TK_OK);
    assert_int_equal(tk_executor_get_core_pool_size(ex), 0);
    assert_int_equal(tk_executor_set_core_pool_size(ex, TK_EXECUTOR_MAX_THREADS), TK_OK);
    assert_int_equal(tk_executor_set_core_pool_size(ex, TK_EXECUTOR_MAX_THREADS + 1), TK_EINVAL);
    assert_int_equal(tk_executor_get_core_pool_size(ex), TK_EXECUTOR_MAX_THREADS);
    assert_int_equal(tk_executor_set_core_pool_size(NULL, 1), TK_EINVAL);
    assert_int_equal(tk_executor_get_core_pool_size(NULL), 0);
    /* Allowed after shutdown, as in Java (the value is stored). */
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_set_core_pool_size(ex, 2), TK_OK);
    assert_int_equal(tk_executor_get_core_pool_size(ex), 2);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
}

/* JDK ThreadPoolExecutor.setCorePoolSize: "If larger, new threads will, if needed, be started to
 * execute any queued tasks." */
static void a_larger_core_size_starts_threads_for_queued_tasks(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 1);
    /* queued behind the one busy thread (not in a batch it took) */
    for (int i = 0; i < 3; i++)
        assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    sleep_ns(MS(10));
    assert_int_equal(atomic_load(&g->entered), 1); /* one thread: the rest wait */
    assert_int_equal(tk_executor_set_core_pool_size(ex, 4), TK_OK);
    gate_wait_entered(g, 4); /* started for the queued tasks, no new submission */
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.pool_size, 4);
    assert_int_equal(s.largest_pool_size, 4);
    gate_open(g);
    assert_true(wait_ge(&g->left, 4, CONF_WAIT));
}

/* JDK ThreadPoolExecutor.setCorePoolSize: "If the new value is smaller than the current value,
 * excess existing threads will be terminated when they next become idle." */
static void a_smaller_core_size_retires_idle_workers_and_drops_nothing(void **state) {
    ct *t = CT(state);
    tk_executor *ex = timeout_pool(t, 4, false);
    assert_int_equal(tk_executor_prestart_all_core_threads(ex), 4);
    /* Busy workers are not cut short: one stays in a gate while the size drops. */
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 1);
    assert_int_equal(tk_executor_set_core_pool_size(ex, 1), TK_OK);
    assert_int_equal(wait_stat(ex, st_pool, 1, SHRINK_WAIT), 1);
    assert_int_equal(atomic_load(&g->left), 0);
    gate_open(g);
    assert_true(wait_ge(&g->left, 1, CONF_WAIT));
    /* Every task still runs, on the one thread left. */
    counter *c = counter_new(t);
    for (int i = 0; i < 20; i++)
        assert_int_equal(tk_executor_schedule(ex, counter_fn, c, i % 3 == 0 ? MS(5) : 0, NULL),
                         TK_OK);
    assert_true(wait_ge(&c->runs, 20, CONF_WAIT));
    assert_int_equal(stats_of(ex).pool_size, 1);
    assert_int_equal(stats_of(ex).largest_pool_size, 4);
}

/* ---- keep-alive and core thread time-out ------------------------------------------------ */

/* JDK ThreadPoolExecutor.allowCoreThreadTimeOut: "@throws IllegalArgumentException if value is
 * true and the current keep-alive time is not greater than zero"; setKeepAliveTime: "@throws
 * IllegalArgumentException if time less than zero or time is zero and
 * allowsCoreThreadTimeOut". */
static void keep_alive_and_core_time_out_are_checked(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    assert_int_equal(opt.keep_alive_ns, TK_EXECUTOR_DEFAULT_KEEP_ALIVE_NS);
    assert_false(opt.allow_core_thread_timeout);
    tk_executor *ex = ct_create(t, &opt);
    assert_int_equal(tk_executor_get_keep_alive(ex), TK_EXECUTOR_DEFAULT_KEEP_ALIVE_NS);
    assert_false(tk_executor_allows_core_thread_timeout(ex));

    assert_int_equal(tk_executor_set_keep_alive(ex, -1), TK_EINVAL);
    assert_int_equal(tk_executor_set_keep_alive(ex, 0), TK_OK);
    assert_int_equal(tk_executor_allow_core_thread_timeout(ex, true), TK_EINVAL);
    assert_false(tk_executor_allows_core_thread_timeout(ex));
    assert_int_equal(tk_executor_set_keep_alive(ex, MS(7)), TK_OK);
    assert_int_equal(tk_executor_get_keep_alive(ex), MS(7));
    assert_int_equal(tk_executor_allow_core_thread_timeout(ex, true), TK_OK);
    assert_true(tk_executor_allows_core_thread_timeout(ex));
    assert_int_equal(tk_executor_set_keep_alive(ex, 0), TK_EINVAL);
    assert_int_equal(tk_executor_get_keep_alive(ex), MS(7));
    assert_int_equal(tk_executor_allow_core_thread_timeout(ex, false), TK_OK);
    assert_int_equal(tk_executor_set_keep_alive(ex, 0), TK_OK);

    assert_int_equal(tk_executor_set_keep_alive(NULL, 1), TK_EINVAL);
    assert_int_equal(tk_executor_get_keep_alive(NULL), TK_EINVAL);
    assert_int_equal(tk_executor_allow_core_thread_timeout(NULL, false), TK_EINVAL);
    assert_false(tk_executor_allows_core_thread_timeout(NULL));

    /* The same rules at create. */
    ct_options(t, &opt, 1);
    opt.keep_alive_ns = -1;
    tk_executor *bad = NULL;
    assert_int_equal(tk_executor_create(&opt, &bad), TK_EINVAL);
    ct_options(t, &opt, 1);
    opt.keep_alive_ns = 0;
    opt.allow_core_thread_timeout = true;
    assert_int_equal(tk_executor_create(&opt, &bad), TK_EINVAL);
    assert_null(bad);
}

/* JDK ThreadPoolExecutor.allowCoreThreadTimeOut: "Sets the policy governing whether core threads
 * may time out and terminate if no tasks arrive within the keep-alive time, being replaced if
 * needed when new tasks arrive." */
static void an_idle_pool_shrinks_to_zero_and_grows_again(void **state) {
    ct *t = CT(state);
    tk_executor *ex = timeout_pool(t, 2, true);
    counter *c = counter_new(t);
    for (int round = 1; round <= 3; round++) {
        for (int i = 0; i < 10; i++)
            assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
        assert_true(wait_ge(&c->runs, 10 * round, CONF_WAIT));
        assert_int_equal(wait_stat(ex, st_pool, 0, SHRINK_WAIT), 0);
    }
    assert_int_equal(stats_of(ex).largest_pool_size, 2);
    /* A future of a task submitted to the empty pool completes. */
    tk_future *f = ct_submit(t, ex, counter_fn, c);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
}

/* JDK ThreadPoolExecutor.setKeepAliveTime: "Threads that wait this amount of time without
 * processing a task will be terminated if there are more than the core number of threads
 * currently in the pool, or if this pool allows core thread timeout." A delayed task is work:
 * JDK processWorkerExit keeps a thread while the queue is not empty ("if (min == 0 &&
 * ! workQueue.isEmpty()) min = 1;"), so it still runs, and not early. */
static void a_delayed_task_runs_on_time_while_the_pool_may_shrink(void **state) {
    ct *t = CT(state);
    tk_executor *ex = timeout_pool(t, 2, true);
    counter *c = counter_new(t);
    int64_t start = now_ns();
    tk_future *f = ct_schedule(t, ex, counter_fn, c, MS(400));
    sleep_ns(MS(200)); /* four keep-alive times */
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(stats_of(ex).pool_size, 1); /* the last worker stays */
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_true(atomic_load(&c->first_start) >= start + MS(400));
    assert_int_equal(wait_stat(ex, st_pool, 0, SHRINK_WAIT), 0);
    /* With core size 0 too. */
    assert_int_equal(tk_executor_set_core_pool_size(ex, 0), TK_OK);
    start = now_ns();
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(300), NULL), TK_OK);
    assert_true(wait_ge(&c->runs, 2, CONF_WAIT));
    assert_true(atomic_load(&c->last_start) >= start + MS(300));
    assert_int_equal(wait_stat(ex, st_pool, 0, SHRINK_WAIT), 0);
}

/* JDK ThreadPoolExecutor.allowCoreThreadTimeOut: "When true, the same keep-alive policy applying
 * to non-core threads applies also to core threads." Set while the workers sleep, it reaches
 * them. */
static void core_time_out_set_at_run_time_reaches_idle_workers(void **state) {
    ct *t = CT(state);
    tk_executor *ex = timeout_pool(t, 3, false);
    assert_int_equal(tk_executor_prestart_all_core_threads(ex), 3);
    sleep_ns(MS(200));
    assert_int_equal(stats_of(ex).pool_size, 3); /* core threads do not time out */
    assert_int_equal(tk_executor_allow_core_thread_timeout(ex, true), TK_OK);
    assert_int_equal(wait_stat(ex, st_pool, 0, SHRINK_WAIT), 0);
    assert_int_equal(tk_executor_allow_core_thread_timeout(ex, false), TK_OK);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    sleep_ns(MS(200));
    assert_int_equal(stats_of(ex).pool_size, 1); /* kept again */
}

/* JDK ThreadPoolExecutor.allowCoreThreadTimeOut, setKeepAliveTime and setCorePoolSize each call
 * interruptIdleWorkers(): the change reaches idle workers at once, not when their wait ends. On an
 * engine with wake() (TK_QUEUE_CAP_WAKE) an idle worker waits without a time-out and a setter
 * wakes it. Each change is made 200 ms after the workers went idle, so that a worker that only
 * looked again at the settings once a second would take 800 ms or more; they leave within the
 * 50 ms keep-alive plus the wake-up, and AT_ONCE leaves ten times that for a loaded machine. */
#define AT_ONCE MS(600)

/* The pool size reached `want` within AT_ONCE of the change made by `change`. */
static void idle_workers_follow(ct *t, tk_executor *ex, int change, unsigned want) {
    (void)t;
    sleep_ns(MS(200)); /* every worker is asleep by now */
    switch (change) {
    case 0:
        assert_int_equal(tk_executor_allow_core_thread_timeout(ex, true), TK_OK);
        break;
    case 1:
        assert_int_equal(tk_executor_set_core_pool_size(ex, 0), TK_OK);
        break;
    default:
        assert_int_equal(tk_executor_set_keep_alive(ex, KEEP_ALIVE), TK_OK);
        break;
    }
    assert_int_equal(wait_stat(ex, st_pool, want, AT_ONCE), want);
}

static void settings_reach_idle_workers_at_once(void **state) {
    ct *t = CT(state);
    if ((t->eng->ops->caps & TK_QUEUE_CAP_WAKE) == 0)
        skip(); /* the one-second look of an engine without wake(): the case above */
    for (int change = 0; change < 3; change++) {
        for (int queued = 0; queued < 2; queued++) {
            /* change 2 shortens the keep-alive of workers that already may time out */
            tk_executor *ex = timeout_pool(t, 2, change == 2);
            if (change == 2)
                assert_int_equal(tk_executor_set_keep_alive(ex, TK_NS_PER_S * 3600), TK_OK);
            assert_int_equal(tk_executor_prestart_all_core_threads(ex), 2);
            if (queued) /* the last worker stays for a task due in an hour (JDK getTask()) */
                assert_int_equal(
                    tk_executor_schedule(ex, counter_fn, counter_new(t), TK_NS_PER_S * 3600, NULL),
                    TK_OK);
            idle_workers_follow(t, ex, change, queued ? 1 : 0);
            ct_destroy(t, ex);
        }
    }
}

/* ---- rejection handler and thread factory ------------------------------------------------- */

typedef struct handler_log {
    atomic_int calls;
    atomic_int ret;
    void *ctx;
} handler_log;

static int log_reject(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    (void)ex;
    (void)task;
    (void)reason;
    handler_log *h = ctx;
    h->ctx = ctx;
    atomic_fetch_add(&h->calls, 1);
    return atomic_load(&h->ret);
}

/* JDK ThreadPoolExecutor.setRejectedExecutionHandler: "Sets a new handler for unexecutable
 * tasks." */
static void the_rejection_handler_is_read_and_set_at_run_time(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    tk_rejection_policy p = TK_REJECT_CUSTOM;
    tk_reject_fn fn = log_reject;
    void *ctx = &p;
    assert_int_equal(tk_executor_get_rejection(ex, &p, &fn, &ctx), TK_OK);
    assert_int_equal(p, TK_REJECT_ABORT);
    assert_null(fn);
    assert_null(ctx);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_EREJECTED);

    assert_int_equal(tk_executor_set_rejection(ex, TK_REJECT_DISCARD, NULL, NULL), TK_OK);
    tk_future *f = ct_schedule(t, ex, counter_fn, c, 0);
    assert_true(tk_future_is_cancelled(f));

    handler_log *h = ct_calloc(t, 1, sizeof(*h));
    atomic_store(&h->ret, TK_ENOTSUP);
    assert_int_equal(tk_executor_set_rejection(ex, TK_REJECT_CUSTOM, log_reject, h), TK_OK);
    assert_int_equal(tk_executor_get_rejection(ex, &p, &fn, &ctx), TK_OK);
    assert_int_equal(p, TK_REJECT_CUSTOM);
    assert_ptr_equal(fn, log_reject);
    assert_ptr_equal(ctx, h);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_ENOTSUP);
    assert_int_equal(atomic_load(&h->calls), 1);
    assert_ptr_equal(h->ctx, h);
    assert_int_equal(atomic_load(&c->runs), 0);

    assert_int_equal(tk_executor_set_rejection(ex, TK_REJECT_CUSTOM, NULL, h), TK_EINVAL);
    assert_int_equal(tk_executor_set_rejection(ex, (tk_rejection_policy)99, NULL, NULL), TK_EINVAL);
    assert_int_equal(tk_executor_set_rejection(NULL, TK_REJECT_ABORT, NULL, NULL), TK_EINVAL);
    assert_int_equal(tk_executor_get_rejection(NULL, &p, NULL, NULL), TK_EINVAL);
    assert_int_equal(tk_executor_get_rejection(ex, NULL, NULL, NULL), TK_OK);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_ENOTSUP); /* unchanged */
}

typedef struct factory_log {
    atomic_int calls;
} factory_log;

static int counting_factory(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                            const char *name) {
    (void)name;
    atomic_fetch_add(&((factory_log *)ctx)->calls, 1);
    return pthread_create(thread, NULL, start, arg);
}

/* JDK ThreadPoolExecutor.setThreadFactory: "Sets the thread factory used to create new
 * threads." and "@throws NullPointerException if threadFactory is null". The second is a kept
 * difference (executor.h, docs/java.md): NULL restores pthread_create, since C has no default
 * factory object to pass back in. */
static void the_thread_factory_is_read_and_set_at_run_time(void **state) {
    ct *t = CT(state);
    factory_log *a = ct_calloc(t, 1, sizeof(*a));
    factory_log *b = ct_calloc(t, 1, sizeof(*b));
    tk_executor_options opt;
    ct_options(t, &opt, 3);
    opt.thread_factory = counting_factory;
    opt.thread_factory_ctx = a;
    tk_executor *ex = ct_create(t, &opt);
    tk_thread_factory_fn fn = NULL;
    void *ctx = NULL;
    assert_int_equal(tk_executor_get_thread_factory(ex, &fn, &ctx), TK_OK);
    assert_ptr_equal(fn, counting_factory);
    assert_ptr_equal(ctx, a);
    assert_int_equal(tk_executor_prestart_core_thread(ex), 1);
    assert_int_equal(tk_executor_set_thread_factory(ex, counting_factory, b), TK_OK);
    assert_int_equal(tk_executor_prestart_all_core_threads(ex), 2);
    assert_int_equal(atomic_load(&a->calls), 1);
    assert_int_equal(atomic_load(&b->calls), 2);
    assert_int_equal(tk_executor_get_thread_factory(ex, &fn, &ctx), TK_OK);
    assert_ptr_equal(ctx, b);
    /* NULL: back to pthread_create. */
    assert_int_equal(tk_executor_set_thread_factory(ex, NULL, NULL), TK_OK);
    assert_int_equal(tk_executor_get_thread_factory(ex, &fn, NULL), TK_OK);
    assert_null(fn);
    assert_int_equal(tk_executor_set_core_pool_size(ex, 4), TK_OK);
    assert_int_equal(tk_executor_prestart_core_thread(ex), 1);
    assert_int_equal(atomic_load(&b->calls), 2);
    assert_int_equal(tk_executor_set_thread_factory(NULL, NULL, NULL), TK_EINVAL);
    assert_int_equal(tk_executor_get_thread_factory(NULL, &fn, &ctx), TK_EINVAL);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
}

/* ---- stock rejection handlers as functions ---------------------------------------------- */

typedef struct delegate {
    tk_reject_fn to;
    atomic_int calls;
    atomic_int second; /* what a second stock call returned */
    atomic_int outside;
} delegate;

static int delegating_reject(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    delegate *d = ctx;
    atomic_fetch_add(&d->calls, 1);
    /* A copy of the info is not the rejection in progress: it is a task of
     * its own, here one without fn, which a call outside a rejection
     * refuses (a copy that names the rejected task would act on it anew;
     * test-reject.c covers calls outside a rejection). */
    tk_task_info copy = *task;
    copy.fn = NULL;
    atomic_store(&d->outside, d->to(ex, &copy, reason, NULL));
    int rc = d->to(ex, task, reason, NULL);
    atomic_store(&d->second, tk_reject_discard(ex, task, reason, NULL));
    return rc;
}

static tk_executor *delegating_pool(ct *t, delegate *d, tk_reject_fn to, size_t max_pending) {
    d->to = to;
    return ct_executor_with_policy(t, TK_REJECT_CUSTOM, delegating_reject, d, max_pending);
}

/* JDK ThreadPoolExecutor.AbortPolicy: "A handler for rejected tasks that throws a
 * RejectedExecutionException."; DiscardPolicy: "A handler for rejected tasks that silently
 * discards the rejected task." A custom handler delegates to them. */
static void a_custom_handler_delegates_to_abort_and_discard(void **state) {
    ct *t = CT(state);
    delegate *d = ct_calloc(t, 1, sizeof(*d));
    tk_executor *ex = delegating_pool(t, d, tk_reject_abort, 0);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    counter *c = counter_new(t);
    tk_task_spec spec = {.fn = counter_fn, .arg = c, .arg_free = counter_free};
    tk_future *f = NULL;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EREJECTED);
    assert_null(f);
    assert_int_equal(atomic_load(&d->calls), 1);
    assert_int_equal(atomic_load(&d->outside), TK_EINVAL);
    assert_int_equal(atomic_load(&d->second), TK_ESTATE);
    assert_int_equal(atomic_load(&c->freed), 1);

    delegate *e = ct_calloc(t, 1, sizeof(*e));
    e->to = tk_reject_discard;
    assert_int_equal(tk_executor_set_rejection(ex, TK_REJECT_CUSTOM, delegating_reject, e), TK_OK);
    f = ct_schedule_spec(t, ex, &spec);
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(atomic_load(&c->freed), 2);
    assert_int_equal(atomic_load(&c->runs), 0);
    /* Outside a rejection, every stock handler refuses a task without fn. */
    tk_task_info info = {0};
    assert_int_equal(tk_reject_abort(ex, &info, TK_EREJECTED, NULL), TK_EINVAL);
    assert_int_equal(tk_reject_discard(ex, &info, TK_EREJECTED, NULL), TK_EINVAL);
    assert_int_equal(tk_reject_caller_runs(ex, &info, TK_EREJECTED, NULL), TK_EINVAL);
    assert_int_equal(tk_reject_discard_oldest(ex, &info, TK_EREJECTED, NULL), TK_EINVAL);
    assert_int_equal(tk_reject_abort(NULL, NULL, TK_EREJECTED, NULL), TK_EINVAL);
}

/* JDK ThreadPoolExecutor.CallerRunsPolicy: "A handler for rejected tasks that runs the rejected
 * task directly in the calling thread of the execute method, unless the executor has been shut
 * down, in which case the task is discarded." */
static void a_custom_handler_delegates_to_caller_runs(void **state) {
    ct *t = CT(state);
    if (!t->eng->pending_limit)
        skip();
    delegate *d = ct_calloc(t, 1, sizeof(*d));
    tk_executor *ex = delegating_pool(t, d, tk_reject_caller_runs, 2);
    counter *far = counter_new(t);
    for (int i = 0; i < 2; i++)
        assert_int_equal(tk_executor_schedule(ex, counter_fn, far, TK_NS_PER_S * 20, NULL), TK_OK);
    counter *c = counter_new(t);
    c->main_thread = pthread_self();
    tk_future *f = NULL;
    int64_t start = now_ns();
    f = ct_schedule(t, ex, counter_fn, c, MS(20));
    assert_true(tk_future_is_done(f));
    assert_int_equal(tk_future_get_timeout(f, 0, NULL), TK_OK);
    assert_int_equal(atomic_load(&c->main_thread_runs), 1);
    assert_true(atomic_load(&c->first_start) >= start + MS(20)); /* never early */
    assert_int_equal(atomic_load(&d->second), TK_ESTATE);
    /* Shut down: discarded. */
    assert_int_equal(tk_executor_shutdown_now(ex, NULL, NULL), 2);
    f = ct_schedule(t, ex, counter_fn, c, 0);
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(atomic_load(&c->runs), 1);
}

/* JDK ThreadPoolExecutor.DiscardOldestPolicy: "A handler for rejected tasks that discards the
 * oldest unhandled request and then retries execute, unless the executor is shut down, in which
 * case the task is discarded." */
static void a_custom_handler_delegates_to_discard_oldest(void **state) {
    ct *t = CT(state);
    if (!t->eng->pending_limit)
        skip();
    delegate *d = ct_calloc(t, 1, sizeof(*d));
    tk_executor *ex = delegating_pool(t, d, tk_reject_discard_oldest, 2);
    counter *far = counter_new(t);
    tk_future *old[2];
    for (int i = 0; i < 2; i++) {
        old[i] = ct_schedule(t, ex, counter_fn, far, TK_NS_PER_S * 20 + i * MS(1));
    }
    counter *c = counter_new(t);
    tk_future *f = ct_schedule(t, ex, counter_fn, c, 0);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK); /* retried, ran */
    assert_true(tk_future_is_cancelled(old[0]));                        /* the oldest */
    assert_false(tk_future_is_done(old[1]));
    assert_int_equal(atomic_load(&d->calls), 1);
    assert_int_equal(atomic_load(&d->second), TK_ESTATE);
    assert_int_equal(stats_of(ex).rejected_count, 1);
}

/* ---- before_execute may veto a run ------------------------------------------------------ */

typedef struct veto_log {
    atomic_int before;
    atomic_int after;
    atomic_int periodic_failed;
    atomic_int veto; /* what before_execute returns */
} veto_log;

static int veto_before(tk_executor *ex, const tk_task_info *task, void *ctx) {
    (void)ex;
    (void)task;
    veto_log *v = ctx;
    atomic_fetch_add(&v->before, 1);
    return atomic_load(&v->veto);
}

static void veto_after(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    (void)ex;
    (void)task;
    (void)status;
    atomic_fetch_add(&((veto_log *)ctx)->after, 1);
}

static void veto_periodic_failed(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    (void)ex;
    (void)task;
    (void)status;
    atomic_fetch_add(&((veto_log *)ctx)->periodic_failed, 1);
}

/* JDK ThreadPoolExecutor.runWorker: "Each task run is preceded by a call to beforeExecute, which
 * might throw an exception, in which case we cause thread to die (breaking loop with
 * completedAbruptly true) without processing the task." afterExecute is called only around
 * task.run(). Safer than Java: the vetoed task's future fails with the veto status instead of
 * never completing. */
static void before_execute_vetoes_a_run(void **state) {
    ct *t = CT(state);
    veto_log *v = ct_calloc(t, 1, sizeof(*v));
    tk_executor_hooks hooks = {.before_execute = veto_before,
                               .after_execute = veto_after,
                               .periodic_failed = veto_periodic_failed,
                               .ctx = v};
    tk_executor *ex = ct_executor_with_hooks(t, 2, &hooks);
    atomic_store(&v->veto, 42);

    counter *c = counter_new(t);
    tk_task_spec spec = {.fn = counter_fn, .arg = c, .arg_free = counter_free};
    tk_future *f = ct_schedule_spec(t, ex, &spec);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_task_status(f), 42);
    assert_int_equal(tk_future_run_count(f), 0);
    assert_int_equal(atomic_load(&c->freed), 1);

    /* A periodic task ends at its first vetoed run. */
    counter *p = counter_new(t);
    tk_future *g = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, counter_fn, p, 0, MS(5));
    assert_int_equal(tk_future_get_timeout(g, CONF_WAIT, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_task_status(g), 42);
    assert_true(wait_ge(&v->periodic_failed, 1, CONF_WAIT));
    sleep_ns(MS(30));
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(atomic_load(&p->runs), 0);
    assert_int_equal(atomic_load(&v->before), 2);
    assert_int_equal(atomic_load(&v->after), 0);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.runs, 0);
    assert_int_equal(s.failed_periodic_count, 1);

    /* No veto: runs as before, with both hooks. */
    atomic_store(&v->veto, 0);
    f = ct_submit(t, ex, counter_fn, c);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 1);
    assert_true(wait_ge(&v->after, 1, CONF_WAIT));
}

CONF_TABLE(control,
           {"core pool size: read and set at run time, within 0..TK_EXECUTOR_MAX_THREADS",
            core_pool_size_is_read_and_set_at_run_time},
           {"core pool size: a larger one starts threads for the queued tasks",
            a_larger_core_size_starts_threads_for_queued_tasks},
           {"core pool size: a smaller one retires idle workers and drops no task",
            a_smaller_core_size_retires_idle_workers_and_drops_nothing},
           {"keep-alive and core thread time-out: bad values are refused",
            keep_alive_and_core_time_out_are_checked},
           {"core thread time-out: an idle pool shrinks to zero threads and grows again",
            an_idle_pool_shrinks_to_zero_and_grows_again},
           {"core thread time-out: a delayed task still runs, not early, as the pool shrinks",
            a_delayed_task_runs_on_time_while_the_pool_may_shrink},
           {"core thread time-out set at run time reaches idle workers",
            core_time_out_set_at_run_time_reaches_idle_workers},
           {"core time-out, core size and keep-alive set at run time reach idle workers at once",
            settings_reach_idle_workers_at_once},
           {"rejection handler: read and set at run time",
            the_rejection_handler_is_read_and_set_at_run_time},
           {"thread factory: read and set at run time",
            the_thread_factory_is_read_and_set_at_run_time},
           {"stock handlers: a custom handler delegates to abort and discard",
            a_custom_handler_delegates_to_abort_and_discard},
           {"stock handlers: a custom handler delegates to caller-runs",
            a_custom_handler_delegates_to_caller_runs},
           {"stock handlers: a custom handler delegates to discard-oldest",
            a_custom_handler_delegates_to_discard_oldest},
           {"before_execute: a non-zero return vetoes the run and fails the task",
            before_execute_vetoes_a_run}, );
