/* SPDX-License-Identifier: MIT */
/* Conformance: every cancel path, interrupt flags, remove-on-cancel and purge. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

static tk_future *schedule_counter(ct *t, tk_executor *ex, counter *c, int64_t delay) {
    tk_task_spec spec = counter_spec(c, TK_TASK_ONE_SHOT, delay, 0);
    tk_future *f = NULL;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_OK);
    return ct_track(t, f);
}

static void cancel_pending_task_never_runs(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f = schedule_counter(t, ex, c, MS(100));
    assert_false(tk_future_is_done(f));
    assert_false(tk_future_is_periodic(f));
    assert_int_equal(tk_future_cancel(f, false), TK_OK);
    assert_true(tk_future_is_done(f));
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(tk_future_get(f, NULL), TK_ECANCELLED);
    assert_int_equal(tk_future_get_timeout(f, MS(1), NULL), TK_ECANCELLED);
    assert_int_equal(tk_future_cancel(f, false), TK_EDONE);
    assert_int_equal(tk_future_cancel(f, true), TK_EDONE);
    assert_int_equal(tk_future_task_status(f), 0);
    sleep_ns(MS(150));
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(tk_future_run_count(f), 0);
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&c->freed), 1);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.cancelled_count, 1);
    assert_int_equal(s.runs, 0);
}

typedef struct after_log {
    atomic_int calls;
    atomic_int status;
} after_log;

static void al_after(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    (void)ex;
    (void)task;
    after_log *a = ctx;
    atomic_store(&a->status, status);
    atomic_fetch_add(&a->calls, 1);
}

static void cancel_running_task(ct *t, bool may_interrupt) {
    after_log *a = ct_calloc(t, 1, sizeof(*a));
    tk_executor_hooks hooks = {.after_execute = al_after, .ctx = a};
    tk_executor *ex = ct_executor_with_hooks(t, 1, &hooks);
    gate *g = gate_new(t);
    tk_future *f = ct_submit(t, ex, gate_fn, g);
    gate_wait_entered(g, 1);
    assert_int_equal(tk_future_cancel(f, may_interrupt), TK_ERUNNING);
    assert_true(tk_future_is_cancelled(f));
    assert_true(tk_future_is_done(f));
    assert_int_equal(tk_future_get_timeout(f, 0, NULL), TK_ECANCELLED);
    assert_int_equal(tk_future_cancel(f, true), TK_EDONE);
    if (may_interrupt) {
        assert_true(wait_ge(&g->left, 1, CONF_WAIT));
        assert_int_equal(atomic_load(&g->interrupted), 1);
    } else {
        sleep_ns(MS(30)); /* the run goes on, uninterrupted */
        assert_int_equal(atomic_load(&g->left), 0);
        gate_open(g);
        assert_true(wait_ge(&g->left, 1, CONF_WAIT));
        assert_int_equal(atomic_load(&g->interrupted), 0);
    }
    assert_true(wait_ge(&a->calls, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&a->status), TK_ECANCELLED);
    assert_int_equal(tk_future_get(f, NULL), TK_ECANCELLED);
    assert_int_equal(stats_of(ex).cancelled_count, 1);
    /* The worker is free again. */
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
}

static void cancel_running_task_with_interrupt(void **state) {
    cancel_running_task(CT(state), true);
}

static void cancel_running_task_without_interrupt(void **state) {
    cancel_running_task(CT(state), false);
}

static void cancel_finished_task_is_edone(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *ok = counter_new(t);
    tk_future *f = schedule_counter(t, ex, ok, 0);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(tk_future_cancel(f, true), TK_EDONE);
    assert_false(tk_future_is_cancelled(f));
    assert_true(tk_future_is_done(f));
    assert_int_equal(tk_future_get(f, NULL), TK_OK);

    counter *bad = counter_new(t);
    atomic_store(&bad->ret, 5);
    tk_future *g = schedule_counter(t, ex, bad, 0);
    assert_int_equal(tk_future_get_timeout(g, CONF_WAIT, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_cancel(g, false), TK_EDONE);
    assert_false(tk_future_is_cancelled(g));
    assert_int_equal(tk_future_task_status(g), 5);
    assert_int_equal(stats_of(ex).cancelled_count, 0);
}

static bool first_run_done(void *ctx) {
    return tk_future_run_count(ctx) >= 1;
}

static void cancel_periodic_between_runs_stops_it(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    const tk_task_kind kinds[] = {TK_TASK_FIXED_RATE, TK_TASK_FIXED_DELAY};
    for (int k = 0; k < 2; k++) {
        counter *c = counter_new(t);
        tk_task_spec spec = counter_spec(c, kinds[k], 0, MS(250));
        tk_future *f = ct_schedule_spec(t, ex, &spec);
        assert_true(wait_for(first_run_done, f, CONF_WAIT));
        assert_int_equal(tk_future_cancel(f, false), TK_OK);
        assert_true(tk_future_is_cancelled(f));
        assert_int_equal(tk_future_get(f, NULL), TK_ECANCELLED);
        sleep_ns(MS(100));
        assert_int_equal(atomic_load(&c->runs), 1);
        assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
        assert_int_equal(atomic_load(&c->freed), 1);
    }
}

typedef struct selfcancel {
    atomic_int runs;
    atomic_int cancel_rc;
    atomic_int freed;
    atomic_int run_future_ok;
} selfcancel;

static int selfcancel_fn(tk_run *run, void *arg) {
    selfcancel *s = arg;
    int i = atomic_fetch_add(&s->runs, 1);
    tk_future *self = tk_run_future(run);
    if (self != NULL)
        atomic_fetch_add(&s->run_future_ok, 1);
    if (i == 2 && self != NULL)
        atomic_store(&s->cancel_rc, tk_future_cancel(self, false));
    return 0;
}

static void selfcancel_free(void *arg) {
    atomic_fetch_add(&((selfcancel *)arg)->freed, 1);
}

static void periodic_task_can_cancel_itself(void **state) {
    ct *t = CT(state);
    after_log *a = ct_calloc(t, 1, sizeof(*a));
    tk_executor_hooks hooks = {.after_execute = al_after, .ctx = a};
    tk_executor *ex = ct_executor_with_hooks(t, 2, &hooks);
    selfcancel *s = ct_calloc(t, 1, sizeof(*s));
    atomic_store(&s->cancel_rc, 12345);
    tk_task_spec spec = {.fn = selfcancel_fn,
                         .arg = s,
                         .arg_free = selfcancel_free,
                         .kind = TK_TASK_FIXED_RATE,
                         .period_ns = MS(3)};
    /* No future asked for: the task still has one of its own. */
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, NULL), TK_OK);
    assert_true(wait_ge(&s->freed, 1, CONF_WAIT));
    sleep_ns(MS(20));
    assert_int_equal(atomic_load(&s->runs), 3);
    assert_int_equal(atomic_load(&s->run_future_ok), 3);
    assert_int_equal(atomic_load(&s->cancel_rc), TK_ERUNNING);
    assert_int_equal(atomic_load(&s->freed), 1);
    assert_int_equal(atomic_load(&a->calls), 3);
    assert_int_equal(atomic_load(&a->status), TK_ECANCELLED);
}

static void remove_on_cancel_drops_from_queue_at_once(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.remove_on_cancel = true;
    tk_executor *ex = ct_create(t, &opt);
    counter *c = counter_new(t);
    tk_future *f[3];
    for (int i = 0; i < 3; i++)
        f[i] = schedule_counter(t, ex, c, TK_NS_PER_S * 30);
    assert_int_equal(stats_of(ex).queue_size, 3);
    assert_int_equal(tk_future_cancel(f[1], false), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, 2);
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    assert_int_equal(tk_executor_purge(ex), 0);
    assert_int_equal(tk_future_cancel(f[0], true), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, 1);
    assert_true(wait_ge(&c->freed, 2, CONF_WAIT));
    assert_int_equal(atomic_load(&c->freed), 2);
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(stats_of(ex).cancelled_count, 2);
}

static void without_remove_on_cancel_purge_drops_cancelled(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    assert_false(tk_executor_get_remove_on_cancel(ex));
    counter *c = counter_new(t);
    tk_future *f[5];
    for (int i = 0; i < 5; i++)
        f[i] = schedule_counter(t, ex, c, TK_NS_PER_S * 30 + i);
    assert_int_equal(tk_future_cancel(f[1], false), TK_OK);
    assert_int_equal(tk_future_cancel(f[3], false), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, 5); /* still queued */
    assert_int_equal(tk_executor_purge(ex), 2);
    assert_int_equal(stats_of(ex).queue_size, 3);
    assert_int_equal(tk_executor_purge(ex), 0);
    assert_true(wait_ge(&c->freed, 2, CONF_WAIT));
    assert_int_equal(atomic_load(&c->freed), 2);
    assert_false(tk_future_is_cancelled(f[0]));
    assert_false(tk_future_is_done(f[4]));
}

static void without_remove_on_cancel_leaves_queue_at_deadline(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    int64_t before = now_ns();
    tk_future *f = schedule_counter(t, ex, c, MS(150));
    assert_int_equal(tk_future_cancel(f, false), TK_OK);
    size_t queued = stats_of(ex).queue_size;
    if (now_ns() - before < MS(140)) /* unless this thread stalled past the deadline */
        assert_int_equal(queued, 1);
    assert_int_equal(wait_stat(ex, st_queue, 0, CONF_WAIT), 0);
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&c->freed), 1);
    assert_int_equal(stats_of(ex).runs, 0);
}

static void set_remove_on_cancel_at_runtime(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f0 = schedule_counter(t, ex, c, TK_NS_PER_S * 30);
    tk_future *f1 = schedule_counter(t, ex, c, TK_NS_PER_S * 30);
    assert_int_equal(tk_future_cancel(f0, false), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, 2);
    assert_int_equal(tk_executor_set_remove_on_cancel(ex, true), TK_OK);
    assert_int_equal(tk_future_cancel(f1, false), TK_OK);
    /* f1 leaves at once; f0 was cancelled under the old policy (as Java). */
    size_t q = stats_of(ex).queue_size;
    assert_true(q <= 1);
    assert_int_equal(tk_executor_purge(ex), (long)q);
    assert_int_equal(stats_of(ex).queue_size, 0);
    assert_true(wait_ge(&c->freed, 2, CONF_WAIT));
}

typedef struct racer {
    atomic_int started;
} racer;

static int racer_fn(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add(&((racer *)arg)->started, 1);
    return 0;
}

static void cancel_racing_with_runs_is_consistent(void **state) {
    ct *t = CT(state);
    enum { N = 2000 };
    tk_executor *ex = ct_executor(t, 2);
    racer *r = ct_calloc(t, N, sizeof(*r));
    tk_future **f = ct_calloc(t, N, sizeof(*f));
    int *rc = ct_calloc(t, N, sizeof(int));
    for (int i = 0; i < N; i++) {
        f[i] = ct_schedule(t, ex, racer_fn, &r[i], (i % 40) * 50 * TK_NS_PER_US);
    }
    int ok = 0, running = 0, done = 0;
    for (int i = 0; i < N; i++) {
        rc[i] = tk_future_cancel(f[i], i % 2 == 0);
        ok += rc[i] == TK_OK;
        running += rc[i] == TK_ERUNNING;
        done += rc[i] == TK_EDONE;
    }
    assert_int_equal(ok + running + done, N);
    assert_true(wait_stat(ex, st_active, 0, CONF_WAIT) == 0);
    sleep_ns(MS(20));
    for (int i = 0; i < N; i++) {
        int s = atomic_load(&r[i].started);
        if (rc[i] == TK_OK)
            assert_int_equal(s, 0);
        else
            assert_int_equal(s, 1);
        assert_true(tk_future_is_done(f[i]));
        assert_int_equal(tk_future_is_cancelled(f[i]), rc[i] != TK_EDONE);
    }
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.cancelled_count, (uint64_t)(ok + running));
    assert_int_equal(s.runs, (uint64_t)(running + done));
}

CONF_TABLE(
    cancel,
    {"cancelling a pending task returns TK_OK and it never runs", cancel_pending_task_never_runs},
    {"cancelling a running task returns TK_ERUNNING and sets the interrupt flag",
     cancel_running_task_with_interrupt},
    {"cancelling a running task without interrupt leaves the flag clear",
     cancel_running_task_without_interrupt},
    {"cancelling a completed or failed task returns TK_EDONE", cancel_finished_task_is_edone},
    {"cancelling a periodic task between runs stops it", cancel_periodic_between_runs_stops_it},
    {"a periodic task can cancel itself from its run", periodic_task_can_cancel_itself},
    {"with remove-on-cancel a cancelled task leaves the queue at once",
     remove_on_cancel_drops_from_queue_at_once},
    {"without remove-on-cancel a cancelled task stays queued until purge",
     without_remove_on_cancel_purge_drops_cancelled},
    {"without remove-on-cancel a cancelled task leaves the queue at its deadline",
     without_remove_on_cancel_leaves_queue_at_deadline},
    {"remove-on-cancel can be switched on at runtime", set_remove_on_cancel_at_runtime},
    {"cancel racing with runs: each task either runs or is cancelled",
     cancel_racing_with_runs_is_consistent}, );
