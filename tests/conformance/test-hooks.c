/* SPDX-License-Identifier: MIT */
/* Conformance: hooks, decorate, counters, the thread factory, thread names, timer slack. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "conformance.h"

/* ---- before/after ------------------------------------------------------------------ */

enum { EV_CAP = 256 };

typedef struct evlog {
    atomic_int n;
    char kind[EV_CAP]; /* 'B' before, 'R' run, 'A' after */
    void *arg[EV_CAP];
    uint64_t seq[EV_CAP], run_count[EV_CAP];
    int status[EV_CAP];
    int on_main[EV_CAP];
    pthread_t main_thread;
    void *ctx_seen[EV_CAP];
} evlog;

static void ev_add(evlog *l, char kind, const tk_task_info *info, int status, void *ctx) {
    int i = atomic_fetch_add(&l->n, 1);
    if (i >= EV_CAP)
        return;
    l->kind[i] = kind;
    l->arg[i] = info != NULL ? info->arg : NULL;
    l->seq[i] = info != NULL ? info->seq : 0;
    l->run_count[i] = info != NULL ? info->run_count : UINT64_MAX;
    l->status[i] = status;
    l->on_main[i] = pthread_equal(pthread_self(), l->main_thread);
    l->ctx_seen[i] = ctx;
}

static int ev_before(tk_executor *ex, const tk_task_info *task, void *ctx) {
    (void)ex;
    ev_add(ctx, 'B', task, 0, ctx);
    return 0;
}

static void ev_after(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    (void)ex;
    ev_add(ctx, 'A', task, status, ctx);
}

typedef struct evtask {
    evlog *log;
    int ret;
    atomic_int runs;
} evtask;

static int ev_fn(tk_run *run, void *arg) {
    evtask *e = arg;
    ev_add(e->log, 'R', tk_run_info(run), 0, NULL);
    atomic_fetch_add(&e->runs, 1);
    return e->ret;
}

static void before_and_after_hooks_see_every_run(void **state) {
    ct *t = CT(state);
    evlog *l = ct_calloc(t, 1, sizeof(*l));
    l->main_thread = pthread_self();
    tk_executor_hooks hooks = {.before_execute = ev_before, .after_execute = ev_after, .ctx = l};
    tk_executor *ex = ct_executor_with_hooks(t, 1, &hooks);
    evtask *a = ct_calloc(t, 1, sizeof(*a));
    evtask *b = ct_calloc(t, 1, sizeof(*b));
    evtask *p = ct_calloc(t, 1, sizeof(*p));
    a->log = b->log = p->log = l;
    b->ret = 17;
    tk_future *fa = NULL, *fb = NULL, *fp = NULL;
    fa = ct_submit(t, ex, ev_fn, a);
    assert_int_equal(tk_future_get_timeout(fa, CONF_WAIT, NULL), TK_OK);
    fb = ct_schedule(t, ex, ev_fn, b, MS(2));
    assert_int_equal(tk_future_get_timeout(fb, CONF_WAIT, NULL), TK_ETASKFAILED);
    fp = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, ev_fn, p, 0, MS(3));
    assert_true(wait_ge(&p->runs, 3, CONF_WAIT));
    int rc = tk_future_cancel(fp, false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);

    int n = atomic_load(&l->n);
    int runs = atomic_load(&a->runs) + atomic_load(&b->runs) + atomic_load(&p->runs);
    assert_int_equal(n, 3 * runs);
    /* Every run is bracketed B, R, A on a pool thread, with the hook ctx. */
    for (int i = 0; i + 2 < n; i += 3) {
        assert_int_equal(l->kind[i], 'B');
        assert_int_equal(l->kind[i + 1], 'R');
        assert_int_equal(l->kind[i + 2], 'A');
        assert_ptr_equal(l->arg[i], l->arg[i + 1]);
        assert_ptr_equal(l->arg[i + 2], l->arg[i + 1]);
        assert_int_equal(l->seq[i], l->seq[i + 1]);
        assert_int_equal(l->run_count[i], l->run_count[i + 1]);
        assert_ptr_equal(l->ctx_seen[i], l);
        assert_ptr_equal(l->ctx_seen[i + 2], l);
        assert_false(l->on_main[i] || l->on_main[i + 1] || l->on_main[i + 2]);
        int want = l->arg[i] == b ? 17 : 0;
        if (l->arg[i] == p && i + 3 >= n && rc == TK_ERUNNING)
            want = TK_ECANCELLED; /* the run that was cancelled while running */
        assert_int_equal(l->status[i + 2], want);
    }
    /* The periodic runs count up. */
    uint64_t k = 0;
    for (int i = 0; i < n; i += 3)
        if (l->arg[i] == p)
            assert_int_equal(l->run_count[i], k++);
    assert_int_equal(stats_of(ex).runs, (uint64_t)runs);
}

/* ---- decorate ------------------------------------------------------------------------ */

typedef struct deco {
    atomic_int calls, wrapped_runs, inner_runs;
    atomic_int reject_status; /* non-zero: reject with it */
    tk_task_fn inner;
    tk_task_spec seen[8]; /* written before calls is bumped */
    void *ctx_seen;
    tk_executor *ex_seen;
} deco;

static int deco_wrapper(tk_run *run, void *arg);

static int deco_hook(tk_executor *ex, tk_task_spec *spec, void *ctx) {
    deco *d = ctx;
    int i = atomic_load(&d->calls);
    if (i < 8)
        d->seen[i] = *spec;
    d->ctx_seen = ctx;
    d->ex_seen = ex;
    int rs = atomic_load(&d->reject_status);
    if (rs == 0) {
        d->inner = spec->fn;
        spec->fn = deco_wrapper;
        spec->arg = d; /* replaces arg too; the original is kept in the deco */
        spec->arg_free = NULL;
    }
    atomic_fetch_add(&d->calls, 1);
    return rs;
}

typedef struct deco_arg {
    atomic_int runs;
} deco_arg;

static deco_arg *deco_target; /* set by the test before scheduling */

static int deco_inner(tk_run *run, void *arg) {
    (void)run;
    deco *d = arg; /* the wrapper passes its own arg through */
    (void)d;
    atomic_fetch_add(&deco_target->runs, 1);
    return 0;
}

static int deco_wrapper(tk_run *run, void *arg) {
    deco *d = arg;
    atomic_fetch_add(&d->wrapped_runs, 1);
    int rc = d->inner(run, arg);
    atomic_fetch_add(&d->inner_runs, 1);
    return rc;
}

static void decorate_hook_can_wrap_the_callback(void **state) {
    ct *t = CT(state);
    deco *d = ct_calloc(t, 1, sizeof(*d));
    deco_target = ct_calloc(t, 1, sizeof(*deco_target));
    tk_executor_hooks hooks = {.decorate = deco_hook, .ctx = d};
    tk_executor *ex = ct_executor_with_hooks(t, 1, &hooks);
    counter *c = counter_new(t);
    tk_future *f = ct_schedule(t, ex, deco_inner, c, MS(2));
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&d->calls), 1);
    assert_int_equal(atomic_load(&d->wrapped_runs), 1);
    assert_int_equal(atomic_load(&d->inner_runs), 1);
    assert_int_equal(atomic_load(&deco_target->runs), 1);
    assert_ptr_equal(d->seen[0].fn, deco_inner);
    assert_ptr_equal(d->seen[0].arg, c);
    assert_ptr_equal(d->ctx_seen, d);
    assert_ptr_equal(d->ex_seen, ex);
    assert_int_equal(atomic_load(&c->runs), 0); /* the replaced arg was never used */
}

static void decorate_sees_the_spec_of_every_call(void **state) {
    ct *t = CT(state);
    deco *d = ct_calloc(t, 1, sizeof(*d));
    atomic_store(&d->reject_status, TK_ENOTSUP); /* reject everything: just look */
    tk_executor_hooks hooks = {.decorate = deco_hook, .ctx = d};
    tk_executor *ex = ct_executor_with_hooks(t, 1, &hooks);
    counter *c = counter_new(t);
    tk_future *const sentinel = (tk_future *)c;
    tk_future *f = sentinel;
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_ENOTSUP);
    assert_int_equal(tk_executor_submit(ex, counter_fn, c, &f), TK_ENOTSUP);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(5), &f), TK_ENOTSUP);
    assert_int_equal(tk_executor_schedule_at_fixed_rate(ex, counter_fn, c, MS(6), MS(7), &f),
                     TK_ENOTSUP);
    assert_int_equal(tk_executor_schedule_with_fixed_delay(ex, counter_fn, c, MS(8), MS(9), &f),
                     TK_ENOTSUP);
    tk_task_spec spec = counter_spec(c, TK_TASK_FIXED_RATE, MS(10), MS(11));
    spec.flags = TK_TASK_SKIP_MISSED;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_ENOTSUP);
    assert_ptr_equal(f, sentinel);
    assert_int_equal(atomic_load(&d->calls), 6);
    const struct {
        tk_task_kind kind;
        int64_t delay, period;
    } want[] = {{TK_TASK_ONE_SHOT, 0, 0},
                {TK_TASK_ONE_SHOT, 0, 0},
                {TK_TASK_ONE_SHOT, MS(5), 0},
                {TK_TASK_FIXED_RATE, MS(6), MS(7)},
                {TK_TASK_FIXED_DELAY, MS(8), MS(9)},
                {TK_TASK_FIXED_RATE, MS(10), MS(11)}};
    for (int i = 0; i < 6; i++) {
        assert_ptr_equal(d->seen[i].fn, counter_fn);
        assert_ptr_equal(d->seen[i].arg, c);
        assert_int_equal(d->seen[i].kind, want[i].kind);
        assert_true(d->seen[i].delay_ns <= want[i].delay); /* execute/submit: 0 or "now" */
        assert_true(d->seen[i].delay_ns >= (want[i].delay ? want[i].delay : INT64_MIN));
        if (want[i].kind != TK_TASK_ONE_SHOT)
            assert_int_equal(d->seen[i].period_ns, want[i].period);
    }
    assert_ptr_equal(d->seen[5].arg_free, counter_free);
    assert_int_equal(d->seen[5].flags, TK_TASK_SKIP_MISSED);
    sleep_ns(MS(15));
    assert_int_equal(atomic_load(&c->runs), 0);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.task_count, 0);
    assert_int_equal(s.queue_size, 0);
    /* Accept again. */
    atomic_store(&d->reject_status, 0);
    deco_target = ct_calloc(t, 1, sizeof(*deco_target));
    f = ct_submit(t, ex, deco_inner, c);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&deco_target->runs), 1);
}

/* ---- counters ------------------------------------------------------------------------ */

static void counters_agree_with_what_happened(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.task_count, 0);
    assert_int_equal(s.completed_count, 0);
    assert_int_equal(s.runs, 0);
    assert_int_equal(s.pool_size, 0);
    assert_int_equal(s.active_count, 0);
    assert_int_equal(s.largest_pool_size, 0);
    assert_int_equal(s.queue_size, 0);
    assert_int_equal(s.rejected_count + s.cancelled_count + s.failed_count, 0);
    assert_int_equal(s.failed_periodic_count + s.skipped_periods, 0);

    /* Two runs blocked: both workers active. */
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 2);
    counter *ok = counter_new(t), *bad = counter_new(t), *later = counter_new(t);
    atomic_store(&bad->ret, 3);
    for (int i = 0; i < 6; i++)
        assert_int_equal(tk_executor_execute(ex, counter_fn, ok), TK_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(tk_executor_execute(ex, counter_fn, bad), TK_OK);
    tk_future *cf[2];
    for (int i = 0; i < 2; i++) {
        cf[i] = ct_schedule(t, ex, counter_fn, later, TK_NS_PER_S * 20);
    }
    s = stats_of(ex);
    assert_int_equal(s.active_count, 2);
    assert_int_equal(s.pool_size, 2);
    assert_int_equal(s.queue_size, 10);
    assert_int_equal(s.task_count, 12);
    assert_int_equal(s.runs, 0);
    gate_open(g);
    assert_true(wait_ge(&ok->runs, 6, CONF_WAIT));
    assert_true(wait_ge(&bad->runs, 2, CONF_WAIT));
    assert_int_equal(wait_stat(ex, st_active, 0, CONF_WAIT), 0);
    /* Cancelled without remove-on-cancel: they stay queued until shutdown
     * drops them (as Java's onShutdown). */
    assert_int_equal(tk_future_cancel(cf[0], false), TK_OK);
    assert_int_equal(tk_future_cancel(cf[1], true), TK_OK);
    /* A periodic task that fails on a later run. */
    counter *per = counter_new(t);
    tk_future *pf = ct_schedule_periodic(t, ex, TK_TASK_FIXED_DELAY, counter_fn, per, 0, MS(2));
    assert_true(wait_ge(&per->runs, 2, CONF_WAIT));
    atomic_store(&per->ret, 9);
    assert_int_equal(tk_future_get_timeout(pf, CONF_WAIT, NULL), TK_ETASKFAILED);
    int per_runs = atomic_load(&per->runs);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_execute(ex, counter_fn, ok), TK_EREJECTED);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);

    s = stats_of(ex);
    assert_int_equal(s.accepted_count, 13);
    assert_int_equal(s.runs, (uint64_t)(2 + 6 + 2 + per_runs));
    /* As the JDK's worker counts: every run, the periodic task's included;
     * the two cancelled tasks left the queue by the shutdown's sweep. */
    assert_int_equal(s.completed_count, s.runs);
    assert_int_equal(s.task_count, s.completed_count);
    assert_int_equal(s.requeued_count, (uint64_t)(per_runs - 1));
    assert_int_equal(s.removed_count, 2);
    assert_int_equal(s.failed_count, 3);
    assert_int_equal(s.failed_periodic_count, 1);
    assert_int_equal(s.cancelled_count, 2);
    assert_int_equal(s.rejected_count, 1);
    assert_int_equal(s.skipped_periods, 0);
    assert_int_equal(s.pool_size, 0);
    assert_int_equal(s.active_count, 0);
    assert_int_equal(s.largest_pool_size, 2);
    assert_int_equal(s.queue_size, 0);
}

/* ---- thread factory ------------------------------------------------------------------- */

typedef struct factory {
    atomic_int calls, created;
    atomic_int fail; /* non-zero: refuse */
    pthread_mutex_t mu;
    char names[8][64];
    void *ctx_seen;
} factory;

static int factory_fn(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                      const char *name) {
    factory *f = ctx;
    int i = atomic_fetch_add(&f->calls, 1);
    pthread_mutex_lock(&f->mu);
    if (i < 8)
        snprintf(f->names[i], sizeof(f->names[i]), "%s", name != NULL ? name : "(null)");
    f->ctx_seen = ctx;
    pthread_mutex_unlock(&f->mu);
    if (atomic_load(&f->fail))
        return -1;
    if (pthread_create(thread, NULL, start, arg) != 0)
        return -1;
    atomic_fetch_add(&f->created, 1);
    return 0;
}

static factory *factory_new(ct *t) {
    factory *f = ct_calloc(t, 1, sizeof(*f));
    pthread_mutex_init(&f->mu, NULL);
    return f;
}

static void thread_factory_starts_every_pool_thread(void **state) {
    ct *t = CT(state);
    factory *fa = factory_new(t);
    tk_executor_options opt;
    ct_options(t, &opt, 3);
    opt.thread_factory = factory_fn;
    opt.thread_factory_ctx = fa;
    opt.thread_name_prefix = "cfx";
    tk_executor *ex = ct_create(t, &opt);
    gate *g = gate_new(t);
    for (int i = 0; i < 6; i++)
        assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 3);
    gate_open(g);
    assert_true(wait_ge(&g->left, 6, CONF_WAIT));
    assert_int_equal(atomic_load(&fa->calls), 3);
    assert_int_equal(atomic_load(&fa->created), 3);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.pool_size, 3);
    assert_int_equal(s.largest_pool_size, 3);
    char names[3][64];
    pthread_mutex_lock(&fa->mu);
    memcpy(names, fa->names, sizeof(names));
    void *ctx_seen = fa->ctx_seen;
    pthread_mutex_unlock(&fa->mu);
    assert_ptr_equal(ctx_seen, fa);
    for (int i = 0; i < 3; i++) {
        if (strncmp(names[i], "cfx", 3) != 0)
            print_error("factory name %d: '%s'\n", i, names[i]);
        assert_int_equal(strncmp(names[i], "cfx", 3), 0);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(names[i], names[j]);
    }
    ct_destroy(t, ex); /* joins the factory's threads */
    assert_int_equal(atomic_load(&fa->calls), 3);
}

static void failing_thread_factory_gives_ethread_and_executor_survives(void **state) {
    ct *t = CT(state);
    factory *fa = factory_new(t);
    atomic_store(&fa->fail, 1);
    tk_executor_options opt;
    ct_options(t, &opt, 2);
    opt.thread_factory = factory_fn;
    opt.thread_factory_ctx = fa;
    tk_executor *ex = ct_create(t, &opt);
    counter *c = counter_new(t);
    tk_future *const sentinel = (tk_future *)c;
    tk_future *f = sentinel;
    assert_int_equal(tk_executor_submit(ex, counter_fn, c, &f), TK_ETHREAD);
    assert_ptr_equal(f, sentinel);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(1), NULL), TK_ETHREAD);
    assert_int_equal(tk_executor_prestart_core_thread(ex), TK_ETHREAD);
    assert_true(atomic_load(&fa->calls) >= 3);
    sleep_ns(MS(10));
    assert_int_equal(atomic_load(&c->runs), 0); /* the task is not kept */
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.pool_size, 0);
    assert_int_equal(s.queue_size, 0);
    assert_int_equal(tk_executor_state(ex), TK_POOL_RUNNING);

    /* Works once threads can start again. */
    atomic_store(&fa->fail, 0);
    f = ct_submit(t, ex, counter_fn, c);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(stats_of(ex).pool_size, 1);
    /* With one thread alive, a failed start does not fail the call. */
    atomic_store(&fa->fail, 1);
    counter *d = counter_new(t);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, d, MS(1), NULL), TK_OK);
    assert_true(wait_ge(&d->runs, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&fa->created), 1);
    assert_int_equal(stats_of(ex).largest_pool_size, 1);
}

/* ---- names and slack ------------------------------------------------------------------- */

typedef struct probe {
    atomic_int done;
    char name[32];
    long slack;
} probe;

static int probe_fn(tk_run *run, void *arg) {
    (void)run;
    probe *p = arg;
    if (pthread_getname_np(pthread_self(), p->name, sizeof(p->name)) != 0)
        strcpy(p->name, "(error)");
    p->slack = (long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    atomic_fetch_add(&p->done, 1);
    return 0;
}

static probe *run_probe(ct *t, const char *prefix, int64_t slack) {
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.thread_name_prefix = prefix;
    opt.timer_slack_ns = slack;
    tk_executor *ex = ct_create(t, &opt);
    probe *p = ct_calloc(t, 1, sizeof(*p));
    assert_int_equal(tk_executor_execute(ex, probe_fn, p), TK_OK);
    assert_true(wait_ge(&p->done, 1, CONF_WAIT));
    return p;
}

static void pool_threads_are_named_with_the_prefix(void **state) {
    ct *t = CT(state);
    probe *p = run_probe(t, NULL, -1);
    if (strncmp(p->name, "tk-pool", 7) != 0)
        print_error("default pool thread name: '%s'\n", p->name);
    assert_int_equal(strncmp(p->name, "tk-pool", 7), 0);
    p = run_probe(t, "cfx", -1);
    if (strncmp(p->name, "cfx", 3) != 0)
        print_error("pool thread name: '%s'\n", p->name);
    assert_int_equal(strncmp(p->name, "cfx", 3), 0);
}

static void timer_slack_option_applies_to_pool_threads(void **state) {
    ct *t = CT(state);
    long mine = (long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    probe *p = run_probe(t, NULL, 1);
    assert_int_equal(p->slack, 1);
    p = run_probe(t, NULL, 1000);
    assert_int_equal(p->slack, 1000);
    if (mine != 1 && mine != 1000) {
        p = run_probe(t, NULL, -1); /* left alone: inherited from this thread */
        assert_int_equal(p->slack, mine);
    }
}

/* A deliberate difference. ThreadPoolExecutor.afterExecute: "Note: When
 * actions are enclosed in tasks (such as FutureTask) either explicitly or via
 * methods such as submit, these task objects catch and maintain
 * computational exceptions, and so they do not cause abrupt termination, and
 * the internal exceptions are not passed to this method." Every task of a
 * ScheduledThreadPoolExecutor is such a task, so the JDK passes null, and a
 * program that wants the failure probes the future. A hook here has no
 * future to probe: after_execute gets the callback's status, which is the
 * status the future then holds (tk_future_exception_now()). */
static void after_execute_gets_the_status_the_future_holds(void **state) {
    ct *t = CT(state);
    evlog *l = ct_calloc(t, 1, sizeof(*l));
    l->main_thread = pthread_self();
    tk_executor_hooks hooks = {.after_execute = ev_after, .ctx = l};
    tk_executor *ex = ct_executor_with_hooks(t, 1, &hooks);
    evtask *ok = ct_calloc(t, 1, sizeof(*ok));
    evtask *bad = ct_calloc(t, 1, sizeof(*bad));
    ok->log = bad->log = l;
    bad->ret = 23;
    tk_future *fo = ct_submit(t, ex, ev_fn, ok);
    assert_int_equal(tk_future_get_timeout(fo, CONF_WAIT, NULL), TK_OK);
    tk_future *fb = ct_submit(t, ex, ev_fn, bad);
    assert_int_equal(tk_future_get_timeout(fb, CONF_WAIT, NULL), TK_ETASKFAILED);
    int status = 0;
    assert_int_equal(tk_future_exception_now(fb, &status), TK_OK);
    assert_int_equal(status, 23);
    /* the hook has run by the time the worker counts the task completed */
    assert_int_equal(wait_stat(ex, st_completed, 2, CONF_WAIT), 2);
    int n = atomic_load(&l->n);
    int seen = 0;
    for (int i = 0; i < n; i++) {
        if (l->kind[i] != 'A')
            continue;
        seen++;
        assert_int_equal(l->status[i], l->arg[i] == bad ? status : 0);
    }
    assert_int_equal(seen, 2);
}

CONF_TABLE(hooks,
           {"before and after hooks bracket every run", before_and_after_hooks_see_every_run},
           {"after_execute gets the status the future holds",
            after_execute_gets_the_status_the_future_holds},
           {"the decorate hook can wrap the callback", decorate_hook_can_wrap_the_callback},
           {"the decorate hook sees every call's spec and can reject it",
            decorate_sees_the_spec_of_every_call},
           {"counters agree with what happened", counters_agree_with_what_happened},
           {"the thread factory starts every pool thread", thread_factory_starts_every_pool_thread},
           {"a failing thread factory gives TK_ETHREAD and the executor survives",
            failing_thread_factory_gives_ethread_and_executor_survives},
           {"pool threads are named with the prefix", pool_threads_are_named_with_the_prefix},
           {"the timer slack option applies to pool threads",
            timer_slack_option_applies_to_pool_threads}, );
