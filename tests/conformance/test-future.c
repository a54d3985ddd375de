/* SPDX-License-Identifier: MIT */
/* Conformance: futures (get, timeouts, deadlock detection, release) and arg_free in every ending.
 */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

typedef struct resulter {
    atomic_int runs;
    void *result;
    /* What the run saw of itself, published through `runs`. */
    tk_executor *ex_seen;
    tk_future *future_seen;
    tk_task_info info;
    bool had_info;
} resulter;

static int resulter_fn(tk_run *run, void *arg) {
    resulter *r = arg;
    r->ex_seen = tk_run_executor(run);
    r->future_seen = tk_run_future(run);
    const tk_task_info *info = tk_run_info(run);
    r->had_info = info != NULL;
    if (info != NULL)
        r->info = *info;
    tk_run_set_result(run, r->result);
    atomic_fetch_add(&r->runs, 1);
    return 0;
}

static void get_returns_the_task_result(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    resulter *r = ct_calloc(t, 1, sizeof(*r));
    r->result = (void *)(uintptr_t)0xC0FFEE;
    tk_future *f = ct_submit(t, ex, resulter_fn, r);
    void *result = NULL;
    assert_int_equal(tk_future_get(f, &result), TK_OK);
    assert_ptr_equal(result, r->result);
    assert_int_equal(tk_future_get(f, NULL), TK_OK);
    result = NULL;
    assert_int_equal(tk_future_get_timeout(f, 0, &result), TK_OK);
    assert_ptr_equal(result, r->result);
    assert_true(tk_future_is_done(f));
    assert_false(tk_future_is_cancelled(f));
    assert_false(tk_future_is_periodic(f));
    assert_int_equal(tk_future_task_status(f), 0);
    assert_int_equal(tk_future_run_count(f), 1);
    /* What the task saw of its own run. */
    assert_int_equal(atomic_load(&r->runs), 1);
    assert_ptr_equal(r->ex_seen, ex);
    assert_ptr_equal(r->future_seen, f);
    assert_true(r->had_info);
    assert_ptr_equal(r->info.fn, resulter_fn);
    assert_ptr_equal(r->info.arg, r);
    assert_int_equal(r->info.kind, TK_TASK_ONE_SHOT);
    assert_int_equal(r->info.period_ns, 0);
    assert_int_equal(r->info.run_count, 0);
}

static void get_with_timeout_times_out_then_returns_the_result(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    resulter *r = ct_calloc(t, 1, sizeof(*r));
    r->result = (void *)r;
    tk_future *f = ct_schedule(t, ex, resulter_fn, r, MS(200));
    void *result = (void *)&result;
    int64_t t0 = now_ns();
    assert_int_equal(tk_future_get_timeout(f, 0, &result), TK_ETIMEDOUT);
    assert_true(now_ns() - t0 < CONF_LATE);
    t0 = now_ns();
    assert_int_equal(tk_future_get_timeout(f, MS(15), &result), TK_ETIMEDOUT);
    assert_true(now_ns() - t0 >= MS(15));
    assert_false(tk_future_is_done(f));
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, &result), TK_OK);
    assert_ptr_equal(result, r);
    /* A negative timeout waits for ever. */
    tk_future *g = ct_schedule(t, ex, resulter_fn, r, MS(10));
    assert_int_equal(tk_future_get_timeout(g, -1, NULL), TK_OK);
    assert_int_equal(atomic_load(&r->runs), 2);
    /* Huge timeouts do not overflow into "already expired". */
    const int64_t huge[] = {INT64_MAX, INT64_MAX - 1, INT64_MIN};
    for (int i = 0; i < 3; i++) {
        tk_future *h = ct_schedule(t, ex, resulter_fn, r, MS(10));
        assert_int_equal(tk_future_get_timeout(h, huge[i], NULL), TK_OK);
    }
}

static void get_reports_cancellation_and_failure(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f = ct_schedule(t, ex, counter_fn, c, TK_NS_PER_S * 20);
    assert_int_equal(tk_future_cancel(f, false), TK_OK);
    assert_int_equal(tk_future_get(f, NULL), TK_ECANCELLED);
    assert_int_equal(tk_future_get_timeout(f, MS(5), NULL), TK_ECANCELLED);
    assert_int_equal(tk_future_get_timeout(f, -1, NULL), TK_ECANCELLED);

    counter *bad = counter_new(t);
    atomic_store(&bad->ret, -77);
    tk_future *g = ct_submit(t, ex, counter_fn, bad);
    assert_int_equal(tk_future_get_timeout(g, CONF_WAIT, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_get(g, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_task_status(g), -77);
    assert_true(tk_future_is_done(g));
    assert_false(tk_future_is_cancelled(g));
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.failed_count, 1);
    assert_int_equal(s.failed_periodic_count, 0);
}

typedef struct waiter {
    tk_future *f;
    int rc;
    void *result;
} waiter;

static void *waiter_main(void *arg) {
    waiter *w = arg;
    w->rc = tk_future_get(w->f, &w->result);
    return NULL;
}

static void get_wakes_every_waiting_thread(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    resulter *r = ct_calloc(t, 1, sizeof(*r));
    r->result = (void *)(uintptr_t)42;
    tk_future *f = ct_schedule(t, ex, resulter_fn, r, MS(20));
    enum { W = 4 };
    waiter *w = ct_calloc(t, W, sizeof(*w));
    pthread_t th[W];
    for (int i = 0; i < W; i++) {
        w[i].f = f;
        w[i].rc = 12345;
        assert_int_equal(pthread_create(&th[i], NULL, waiter_main, &w[i]), 0);
    }
    for (int i = 0; i < W; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < W; i++) {
        assert_int_equal(w[i].rc, TK_OK);
        assert_ptr_equal(w[i].result, r->result);
    }
}

static void handed_back_tasks_wake_their_waiters(void **state) {
    ct *t = CT(state);
    for (int mode = 0; mode < 2; mode++) { /* 0: shutdown_now, then destroy; 1: destroy */
        tk_executor *ex = ct_executor(t, 1);
        counter *c = counter_new(t);
        enum { W = 3 };
        waiter *w = ct_calloc(t, W, sizeof(*w));
        pthread_t th[W];
        for (int i = 0; i < W; i++) {
            w[i].f = ct_schedule(t, ex, counter_fn, c, TK_NS_PER_S * 20);
            w[i].rc = 12345;
            assert_int_equal(pthread_create(&th[i], NULL, waiter_main, &w[i]), 0);
        }
        sleep_ns(MS(20)); /* let them block in get() */
        if (mode == 0)
            assert_int_equal(tk_executor_shutdown_now(ex, NULL, NULL), W);
        ct_destroy(t, ex);
        for (int i = 0; i < W; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(w[i].rc, TK_ECANCELLED);
        }
        assert_int_equal(atomic_load(&c->runs), 0);
    }
}

typedef struct selfget {
    atomic_int runs;
    atomic_int get_rc, get_timeout_rc;
} selfget;

static int selfget_fn(tk_run *run, void *arg) {
    selfget *s = arg;
    tk_future *self = tk_run_future(run);
    atomic_store(&s->get_rc, self != NULL ? tk_future_get(self, NULL) : 999);
    atomic_store(&s->get_timeout_rc,
                 self != NULL ? tk_future_get_timeout(self, MS(50), NULL) : 999);
    atomic_fetch_add(&s->runs, 1);
    return 0;
}

static void get_from_the_tasks_own_run_is_edeadlk(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    selfget *s = ct_calloc(t, 1, sizeof(*s));
    tk_future *f = ct_submit(t, ex, selfget_fn, s);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&s->get_rc), TK_EDEADLK);
    assert_int_equal(atomic_load(&s->get_timeout_rc), TK_EDEADLK);

    selfget *p = ct_calloc(t, 1, sizeof(*p));
    tk_future *pf = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, selfget_fn, p, 0, MS(100));
    assert_true(wait_ge(&p->runs, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&p->get_rc), TK_EDEADLK);
    assert_int_equal(atomic_load(&p->get_timeout_rc), TK_EDEADLK);
    int rc = tk_future_cancel(pf, false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
}

static void remaining_ns_counts_down_to_the_deadline(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f = NULL;
    int64_t before = now_ns();
    f = ct_schedule(t, ex, counter_fn, c, MS(300));
    int64_t r1 = tk_future_remaining_ns(f);
    int64_t elapsed = now_ns() - before;
    assert_true(r1 <= MS(300));
    assert_true(r1 >= MS(300) - elapsed);
    sleep_ns(MS(20));
    int64_t r2 = tk_future_remaining_ns(f);
    assert_true(r2 <= r1 - MS(20));
    assert_true(r2 > 0);
    assert_int_equal(tk_future_cancel(f, false), TK_OK);

    /* After the task ends: relative to its last deadline, so negative. */
    tk_future *g = ct_schedule(t, ex, counter_fn, c, MS(2));
    assert_int_equal(tk_future_get_timeout(g, CONF_WAIT, NULL), TK_OK);
    sleep_ns(MS(2));
    assert_true(tk_future_remaining_ns(g) < 0);
    assert_int_equal(tk_future_remaining_ns(NULL), 0);

    /* A periodic task's remaining time is to its next run. */
    tk_future *p = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, counter_fn, c, 0, MS(200));
    assert_true(wait_ge(&c->runs, 2, CONF_WAIT));
    sleep_ns(MS(5));
    int64_t rp = tk_future_remaining_ns(p);
    assert_true(rp > 0);
    assert_true(rp <= MS(200));
    assert_int_equal(tk_future_cancel(p, false), TK_OK);
}

static void releasing_a_future_early_keeps_the_task(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_task_spec spec = counter_spec(c, TK_TASK_ONE_SHOT, MS(15), 0);
    tk_future *f = NULL;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_OK);
    assert_int_equal(tk_future_release(f), TK_OK); /* not cancelled */
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    /* Periodic, released while it keeps running. */
    counter *p = counter_new(t);
    spec.arg = p;
    spec.kind = TK_TASK_FIXED_RATE;
    spec.delay_ns = 0;
    spec.period_ns = MS(2);
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_OK);
    assert_int_equal(tk_future_release(f), TK_OK);
    assert_true(wait_ge(&p->runs, 3, CONF_WAIT));
    ct_destroy(t, ex); /* stops it */
    assert_int_equal(atomic_load(&c->freed), 1);
    assert_int_equal(atomic_load(&p->freed), 1);
}

static void releasing_a_future_after_completion(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f = NULL;
    assert_int_equal(tk_executor_submit(ex, counter_fn, c, &f), TK_OK);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(tk_future_release(f), TK_OK);
    /* And after the executor is gone. */
    assert_int_equal(tk_executor_submit(ex, counter_fn, c, &f), TK_OK);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    ct_destroy(t, ex);
    assert_true(tk_future_is_done(f));
    assert_int_equal(tk_future_get(f, NULL), TK_OK);
    assert_int_equal(tk_future_release(f), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 2);
}

static void second_release_of_a_live_task_is_einval(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f = NULL;
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, TK_NS_PER_S * 20, &f), TK_OK);
    assert_int_equal(tk_future_release(f), TK_OK);
    assert_int_equal(tk_future_release(f), TK_EINVAL);
    assert_int_equal(stats_of(ex).queue_size, 1); /* still alive, not cancelled */
    assert_int_equal(atomic_load(&c->runs), 0);
}

/* ---- arg_free ------------------------------------------------------------------------ */

static int schedule_freeing(tk_executor *ex, counter *c, tk_task_kind kind, int64_t delay,
                            tk_future **out) {
    tk_task_spec spec = counter_spec(c, kind, delay, kind == TK_TASK_ONE_SHOT ? 0 : MS(2));
    return tk_executor_schedule_spec(ex, &spec, out);
}

static void arg_free_runs_once_in_every_ending(void **state) {
    ct *t = CT(state);
    enum {
        RAN,
        FAILED,
        PERIODIC_CANCELLED,
        PERIODIC_FAILED,
        CANCELLED,
        CANCELLED_REMOVED,
        PURGED,
        DROPPED_BY_DESTROY,
        DROPPED_PERIODIC,
        REJECTED,
        DISCARDED,
        N
    };
    counter *c[N];
    for (int i = 0; i < N; i++)
        c[i] = counter_new(t);
    tk_future *f[N] = {0};
    tk_executor *ex = ct_executor(t, 2);
    assert_int_equal(schedule_freeing(ex, c[RAN], TK_TASK_ONE_SHOT, 0, &f[RAN]), TK_OK);
    atomic_store(&c[FAILED]->ret, 1);
    assert_int_equal(schedule_freeing(ex, c[FAILED], TK_TASK_ONE_SHOT, 0, &f[FAILED]), TK_OK);
    assert_int_equal(
        schedule_freeing(ex, c[PERIODIC_CANCELLED], TK_TASK_FIXED_RATE, 0, &f[PERIODIC_CANCELLED]),
        TK_OK);
    atomic_store(&c[PERIODIC_FAILED]->ret, 2);
    assert_int_equal(
        schedule_freeing(ex, c[PERIODIC_FAILED], TK_TASK_FIXED_DELAY, 0, &f[PERIODIC_FAILED]),
        TK_OK);
    assert_int_equal(schedule_freeing(ex, c[CANCELLED], TK_TASK_ONE_SHOT, MS(100), &f[CANCELLED]),
                     TK_OK);
    assert_int_equal(
        schedule_freeing(ex, c[PURGED], TK_TASK_ONE_SHOT, TK_NS_PER_S * 20, &f[PURGED]), TK_OK);
    assert_int_equal(schedule_freeing(ex, c[DROPPED_BY_DESTROY], TK_TASK_ONE_SHOT, TK_NS_PER_S * 20,
                                      &f[DROPPED_BY_DESTROY]),
                     TK_OK);
    assert_int_equal(schedule_freeing(ex, c[DROPPED_PERIODIC], TK_TASK_FIXED_RATE, TK_NS_PER_S * 20,
                                      &f[DROPPED_PERIODIC]),
                     TK_OK);
    for (int i = 0; i < N; i++)
        if (f[i] != NULL)
            ct_track(t, f[i]);
    assert_int_equal(tk_future_cancel(f[CANCELLED], false), TK_OK);
    assert_int_equal(tk_future_cancel(f[PURGED], false), TK_OK);
    /* CANCELLED leaves the queue at its deadline (100 ms); PURGED only by purge. */
    sleep_ns(MS(160));
    assert_int_equal(tk_executor_purge(ex), 1);
    assert_int_equal(tk_executor_set_remove_on_cancel(ex, true), TK_OK);
    assert_int_equal(schedule_freeing(ex, c[CANCELLED_REMOVED], TK_TASK_ONE_SHOT, TK_NS_PER_S * 20,
                                      &f[CANCELLED_REMOVED]),
                     TK_OK);
    ct_track(t, f[CANCELLED_REMOVED]);
    assert_int_equal(tk_future_cancel(f[CANCELLED_REMOVED], false), TK_OK);
    assert_true(wait_ge(&c[PERIODIC_CANCELLED]->runs, 2, CONF_WAIT));
    int rc = tk_future_cancel(f[PERIODIC_CANCELLED], false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
    assert_int_equal(tk_future_get_timeout(f[RAN], CONF_WAIT, NULL), TK_OK);
    assert_int_equal(tk_future_get_timeout(f[FAILED], CONF_WAIT, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_get_timeout(f[PERIODIC_FAILED], CONF_WAIT, NULL), TK_ETASKFAILED);
    ct_destroy(t, ex);

    /* Rejected and discarded, on fresh executors. */
    tk_executor *ab = ct_executor(t, 1);
    assert_int_equal(tk_executor_shutdown(ab), TK_OK);
    assert_int_equal(schedule_freeing(ab, c[REJECTED], TK_TASK_ONE_SHOT, 0, NULL), TK_EREJECTED);
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.rejection = TK_REJECT_DISCARD;
    tk_executor *di = ct_create(t, &opt);
    assert_int_equal(tk_executor_shutdown(di), TK_OK);
    assert_int_equal(schedule_freeing(di, c[DISCARDED], TK_TASK_ONE_SHOT, 0, NULL), TK_OK);
    ct_destroy(t, ab);
    ct_destroy(t, di);

    static const char *const names[N] = {"ran",
                                         "failed",
                                         "periodic cancelled",
                                         "periodic failed",
                                         "cancelled",
                                         "cancelled with remove-on-cancel",
                                         "purged",
                                         "dropped by destroy",
                                         "periodic dropped by destroy",
                                         "rejected",
                                         "discarded"};
    for (int i = 0; i < N; i++) {
        int freed = atomic_load(&c[i]->freed);
        if (freed != 1)
            print_error("%s: arg_free called %d times\n", names[i], freed);
        assert_int_equal(freed, 1);
    }
}

/* A periodic task that sets a result: the call is ignored (only a one-shot
 * task completes with a result) and the skip count is not disturbed; a
 * one-shot task reports no skipped periods. */
static void set_result_in_a_periodic_task_is_ignored(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    resulter *r = ct_calloc(t, 1, sizeof(*r));
    r->result = (void *)(uintptr_t)0xDEADBEE0;
    tk_future *f =
        ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, resulter_fn, r, 0, 2 * TK_NS_PER_MS);
    assert_true(wait_ge(&r->runs, 3, 5 * TK_NS_PER_S));
    assert_int_equal(tk_future_skipped_count(f), 0);
    int rc = tk_future_cancel(f, false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
    void *result = (void *)1;
    assert_int_equal(tk_future_get(f, &result), TK_ECANCELLED);
    assert_ptr_equal(result, (void *)1); /* untouched */
    assert_int_equal(tk_future_skipped_count(f), 0);

    resulter *o = ct_calloc(t, 1, sizeof(*o));
    o->result = (void *)(uintptr_t)0xFFFFFFF0;
    tk_future *g = ct_submit(t, ex, resulter_fn, o);
    assert_int_equal(tk_future_get(g, &result), TK_OK);
    assert_ptr_equal(result, o->result);
    assert_int_equal(tk_future_skipped_count(g), 0);
}

/* A one-shot task's result and its callback share storage inside the task
 * (the result is written only once the run has started): a run that sets a
 * result still sees its own fn in tk_run_info(), before or after setting
 * it, and a run that sets none completes with NULL. */
typedef struct info_after_result {
    void *result;
    tk_task_fn fn_before, fn_after;
} info_after_result;

static int result_then_info_fn(tk_run *run, void *arg) {
    info_after_result *r = arg;
    if (r->result != NULL)
        tk_run_set_result(run, r->result);
    r->fn_after = tk_run_info(run)->fn;
    return 0;
}

static int info_then_result_fn(tk_run *run, void *arg) {
    info_after_result *r = arg;
    r->fn_before = tk_run_info(run)->fn;
    tk_run_set_result(run, r->result);
    r->fn_after = tk_run_info(run)->fn;
    return 0;
}

static void result_and_callback_do_not_clash(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    info_after_result *a = ct_calloc(t, 3, sizeof(*a));
    a[0].result = (void *)(uintptr_t)0xBEEF;
    a[1].result = NULL; /* sets none */
    a[2].result = (void *)(uintptr_t)0xFEED;
    tk_future *f[3];
    assert_int_equal(tk_executor_submit(ex, result_then_info_fn, &a[0], &f[0]), TK_OK);
    assert_int_equal(tk_executor_submit(ex, result_then_info_fn, &a[1], &f[1]), TK_OK);
    assert_int_equal(tk_executor_submit(ex, info_then_result_fn, &a[2], &f[2]), TK_OK);
    for (int i = 0; i < 3; i++) {
        ct_track(t, f[i]);
        void *result = (void *)(uintptr_t)1;
        assert_int_equal(tk_future_get_timeout(f[i], CONF_WAIT, &result), TK_OK);
        assert_ptr_equal(result, a[i].result);
        assert_int_equal(tk_future_result_now(f[i], &result), TK_OK);
        assert_ptr_equal(result, a[i].result);
        assert_int_equal(tk_future_task_status(f[i]), 0);
        assert_int_equal(tk_future_run_count(f[i]), 1);
    }
    assert_ptr_equal(a[0].fn_after, result_then_info_fn);
    assert_ptr_equal(a[1].fn_after, result_then_info_fn);
    assert_ptr_equal(a[2].fn_before, info_then_result_fn);
    assert_ptr_equal(a[2].fn_after, info_then_result_fn);
}

CONF_TABLE(future, {"get returns the task's result", get_returns_the_task_result},
           {"set_result in a periodic task is ignored; one-shot tasks skip nothing",
            set_result_in_a_periodic_task_is_ignored},
           {"get with a timeout times out on a pending task, then returns the result",
            get_with_timeout_times_out_then_returns_the_result},
           {"get reports cancellation and failure with the task status",
            get_reports_cancellation_and_failure},
           {"get wakes every waiting thread", get_wakes_every_waiting_thread},
           {"waiters on tasks dropped by shutdown_now or destroy wake with TK_ECANCELLED",
            handed_back_tasks_wake_their_waiters},
           {"get from the task's own run returns TK_EDEADLK",
            get_from_the_tasks_own_run_is_edeadlk},
           {"remaining_ns counts down to the deadline", remaining_ns_counts_down_to_the_deadline},
           {"releasing a future early neither cancels nor loses the task",
            releasing_a_future_early_keeps_the_task},
           {"releasing a future after completion, even after destroy",
            releasing_a_future_after_completion},
           {"a second release of a live task's future returns TK_EINVAL",
            second_release_of_a_live_task_is_einval},
           {"arg_free runs exactly once in every ending", arg_free_runs_once_in_every_ending},
           {"a task's result and its callback do not clash", result_and_callback_do_not_clash}, );
