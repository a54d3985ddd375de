/* SPDX-License-Identifier: MIT */
/* Conformance: shutdown, shutdown_now, the two shutdown policies, await, states, destroy. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

typedef struct term_log {
    atomic_int calls;
    atomic_int state_in_hook;
    atomic_int terminated_in_hook;
    tk_executor *_Atomic ex;
} term_log;

static void tl_terminated(tk_executor *ex, void *ctx) {
    term_log *l = ctx;
    atomic_store(&l->state_in_hook, (int)tk_executor_state(ex));
    atomic_store(&l->terminated_in_hook, tk_executor_is_terminated(ex));
    atomic_store(&l->ex, ex);
    atomic_fetch_add(&l->calls, 1);
}

static tk_executor *executor_with_term_hook(ct *t, unsigned threads, term_log **out) {
    term_log *l = ct_calloc(t, 1, sizeof(*l));
    tk_executor_options opt;
    ct_options(t, &opt, threads);
    opt.hooks.terminated = tl_terminated;
    opt.hooks.ctx = l;
    *out = l;
    return ct_create(t, &opt);
}

static void shutdown_is_idempotent_and_rejects_new_work(void **state) {
    ct *t = CT(state);
    term_log *l;
    tk_executor *ex = executor_with_term_hook(t, 1, &l);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    assert_false(tk_executor_is_shutdown(ex));
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_true(tk_executor_is_shutdown(ex));
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_EREJECTED);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_true(tk_executor_is_terminated(ex));
    assert_false(tk_executor_is_terminating(ex));
    assert_int_equal(tk_executor_state(ex), TK_POOL_TERMINATED);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_shutdown_now(ex, NULL, NULL), 0);
    assert_int_equal(tk_executor_await_termination(ex, 0), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 1);
    assert_int_equal(atomic_load(&l->calls), 1);
    assert_int_equal(stats_of(ex).pool_size, 0);
}

static void states_progress_and_terminated_hook_runs_once(void **state) {
    ct *t = CT(state);
    term_log *l;
    tk_executor *ex = executor_with_term_hook(t, 1, &l);
    assert_int_equal(tk_executor_state(ex), TK_POOL_RUNNING);
    assert_false(tk_executor_is_terminating(ex));
    /* A running executor never terminates by itself. */
    assert_int_equal(tk_executor_await_termination(ex, MS(5)), TK_ETIMEDOUT);
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 1);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_state(ex), TK_POOL_SHUTDOWN);
    assert_true(tk_executor_is_shutdown(ex));
    assert_true(tk_executor_is_terminating(ex));
    assert_false(tk_executor_is_terminated(ex));
    int64_t t0 = now_ns();
    assert_int_equal(tk_executor_await_termination(ex, MS(20)), TK_ETIMEDOUT);
    assert_true(now_ns() - t0 >= MS(20));
    assert_int_equal(atomic_load(&l->calls), 0);
    gate_open(g);
    assert_int_equal(tk_executor_await_termination(ex, INT64_MAX), TK_OK); /* no overflow */
    assert_int_equal(tk_executor_await_termination(ex, 0), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, -1), TK_OK);
    assert_int_equal(tk_executor_state(ex), TK_POOL_TERMINATED);
    assert_true(tk_executor_is_terminated(ex));
    assert_false(tk_executor_is_terminating(ex));
    assert_int_equal(atomic_load(&l->calls), 1);
    assert_int_equal(atomic_load(&l->state_in_hook), TK_POOL_TIDYING);
    assert_false(atomic_load(&l->terminated_in_hook));
    assert_ptr_equal(atomic_load(&l->ex), ex);
    ct_destroy(t, ex);
    assert_int_equal(atomic_load(&l->calls), 1);
}

static void shutdown_now_stops_and_interrupts_running_tasks(void **state) {
    ct *t = CT(state);
    term_log *l;
    tk_executor *ex = executor_with_term_hook(t, 2, &l);
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_ignore_interrupt_fn, g), TK_OK);
    assert_int_equal(tk_executor_execute(ex, gate_ignore_interrupt_fn, g), TK_OK);
    gate_wait_entered(g, 2);
    assert_int_equal(tk_executor_shutdown_now(ex, NULL, NULL), 0);
    assert_int_equal(tk_executor_state(ex), TK_POOL_STOP);
    assert_true(tk_executor_is_terminating(ex));
    assert_true(wait_ge(&g->saw_interrupt, 2, CONF_WAIT));
    assert_int_equal(tk_executor_await_termination(ex, MS(5)), TK_ETIMEDOUT);
    gate_open(g);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&l->calls), 1);
    assert_int_equal(atomic_load(&l->state_in_hook), TK_POOL_TIDYING);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(atomic_load(&l->calls), 1);
}

typedef struct dropped {
    atomic_int n;
    int cap;
    tk_task_info *info;
    tk_arg_free_fn *arg_free;
    pthread_t *thread;
} dropped;

static void dropped_fn(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    dropped *d = ctx;
    int i = atomic_fetch_add(&d->n, 1);
    if (i < d->cap) {
        d->info[i] = *task;
        d->arg_free[i] = arg_free;
        d->thread[i] = pthread_self();
    }
}

static void shutdown_now_hands_back_queued_tasks_in_deadline_order(void **state) {
    ct *t = CT(state);
    enum { N = 40 };
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_ignore_interrupt_fn, g), TK_OK);
    gate_wait_entered(g, 1);
    counter **c = ct_calloc(t, N, sizeof(*c));
    tk_future **f = ct_calloc(t, N, sizeof(*f));
    for (int i = 0; i < N; i++) {
        c[i] = counter_new(t);
        /* Deadlines interleave with submission order; some are due already. */
        int64_t delay = i % 4 == 0 ? 0 : TK_NS_PER_S * 20 + ((i * 7919) % N) * TK_NS_PER_MS;
        tk_task_spec spec = counter_spec(c[i], i == 5 ? TK_TASK_FIXED_RATE : TK_TASK_ONE_SHOT,
                                         delay, i == 5 ? MS(10) : 0);
        f[i] = ct_schedule_spec(t, ex, &spec);
    }
    dropped *d = ct_calloc(t, 1, sizeof(*d));
    d->cap = N;
    d->info = ct_calloc(t, N, sizeof(tk_task_info));
    d->arg_free = ct_calloc(t, N, sizeof(tk_arg_free_fn));
    d->thread = ct_calloc(t, N, sizeof(pthread_t));
    assert_int_equal(tk_executor_shutdown_now(ex, dropped_fn, d), N);
    assert_int_equal(atomic_load(&d->n), N);
    assert_true(wait_ge(&g->saw_interrupt, 1, CONF_WAIT));
    char seen[N] = {0};
    for (int i = 0; i < N; i++) {
        if (i > 0) {
            bool ordered = d->info[i - 1].deadline_ns < d->info[i].deadline_ns ||
                           (d->info[i - 1].deadline_ns == d->info[i].deadline_ns &&
                            d->info[i - 1].seq < d->info[i].seq);
            assert_true(ordered);
        }
        assert_ptr_equal(d->info[i].fn, counter_fn);
        assert_ptr_equal(d->arg_free[i], counter_free);
        assert_true(pthread_equal(d->thread[i], pthread_self()));
        int idx = -1;
        for (int j = 0; j < N; j++)
            if (d->info[i].arg == c[j])
                idx = j;
        assert_true(idx >= 0);
        assert_int_equal(seen[idx], 0);
        seen[idx] = 1;
        assert_int_equal(d->info[i].kind, idx == 5 ? TK_TASK_FIXED_RATE : TK_TASK_ONE_SHOT);
    }
    for (int i = 0; i < N; i++) {
        assert_true(tk_future_is_cancelled(f[i]));
        assert_int_equal(tk_future_get_timeout(f[i], 0, NULL), TK_ECANCELLED);
        assert_int_equal(tk_future_cancel(f[i], true), TK_EDONE);
    }
    assert_int_equal(tk_executor_shutdown_now(ex, dropped_fn, d), 0); /* nothing left */
    assert_int_equal(atomic_load(&d->n), N);
    gate_open(g);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    ct_destroy(t, ex);
    /* The caller owns handed-back tasks: the executor never freed or ran them. */
    for (int i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&c[i]->freed), 0);
        assert_int_equal(atomic_load(&c[i]->runs), 0);
    }
}

static void shutdown_now_without_drop_frees_queued_tasks(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    for (int i = 0; i < 10; i++) {
        tk_task_spec spec = counter_spec(c, TK_TASK_ONE_SHOT, TK_NS_PER_S * 20, 0);
        assert_int_equal(tk_executor_schedule_spec(ex, &spec, NULL), TK_OK);
    }
    assert_int_equal(tk_executor_shutdown_now(ex, NULL, NULL), 10);
    assert_true(wait_ge(&c->freed, 10, CONF_WAIT));
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&c->freed), 10);
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(stats_of(ex).queue_size, 0);
}

static void delayed_tasks_run_after_shutdown_by_default(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    assert_true(tk_executor_get_execute_delayed_after_shutdown(ex));
    counter *c = counter_new(t);
    tk_future *f = NULL;
    int64_t before = now_ns();
    f = ct_schedule(t, ex, counter_fn, c, MS(100));
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(110), NULL), TK_OK);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_false(tk_executor_is_terminated(ex));
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 2);
    assert_true(atomic_load(&c->first_start) >= before + MS(100));
    assert_int_equal(tk_future_get(f, NULL), TK_OK);
}

static void delayed_tasks_cancelled_at_shutdown_when_policy_off(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.execute_delayed_after_shutdown = false;
    tk_executor *ex = ct_create(t, &opt);
    counter *c = counter_new(t);
    tk_future *f[3];
    for (int i = 0; i < 3; i++) {
        tk_task_spec spec = counter_spec(c, TK_TASK_ONE_SHOT, TK_NS_PER_S * 20, 0);
        f[i] = ct_schedule_spec(t, ex, &spec);
    }
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    for (int i = 0; i < 3; i++) {
        assert_true(tk_future_is_cancelled(f[i]));
        assert_int_equal(tk_future_get(f[i], NULL), TK_ECANCELLED);
    }
    assert_true(wait_ge(&c->freed, 3, CONF_WAIT));
    assert_int_equal(atomic_load(&c->runs), 0);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.cancelled_count, 3);
    assert_int_equal(s.queue_size, 0);
}

static bool future_done(void *ctx) {
    return tk_future_is_done(ctx);
}

static void periodic_tasks_stop_at_shutdown_by_default(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    assert_false(tk_executor_get_continue_periodic_after_shutdown(ex));
    const tk_task_kind kinds[] = {TK_TASK_FIXED_RATE, TK_TASK_FIXED_DELAY};
    counter *c[2];
    tk_future *f[2];
    for (int k = 0; k < 2; k++) {
        c[k] = counter_new(t);
        tk_task_spec spec = counter_spec(c[k], kinds[k], 0, MS(4));
        f[k] = ct_schedule_spec(t, ex, &spec);
        assert_true(wait_ge(&c[k]->runs, 2, CONF_WAIT));
    }
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    for (int k = 0; k < 2; k++) {
        assert_true(wait_for(future_done, f[k], CONF_WAIT));
        assert_true(tk_future_is_cancelled(f[k]));
        assert_int_equal(tk_future_get(f[k], NULL), TK_ECANCELLED);
        int runs = atomic_load(&c[k]->runs);
        sleep_ns(MS(15));
        assert_int_equal(atomic_load(&c[k]->runs), runs);
        assert_int_equal(atomic_load(&c[k]->freed), 1);
    }
}

static void periodic_tasks_continue_after_shutdown_when_policy_on(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.continue_periodic_after_shutdown = true;
    tk_executor *ex = ct_create(t, &opt);
    counter *c = counter_new(t);
    tk_task_spec spec = counter_spec(c, TK_TASK_FIXED_RATE, 0, MS(3));
    tk_future *f = ct_schedule_spec(t, ex, &spec);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    int at_shutdown = atomic_load(&c->runs);
    assert_true(wait_ge(&c->runs, at_shutdown + 3, CONF_WAIT));
    assert_int_equal(tk_executor_state(ex), TK_POOL_SHUTDOWN);
    assert_int_equal(tk_executor_await_termination(ex, MS(10)), TK_ETIMEDOUT);
    assert_false(tk_future_is_done(f));
    int rc = tk_future_cancel(f, false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_true(wait_ge(&c->freed, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&c->freed), 1);
}

static void delayed_tasks_continue_after_shutdown_until_policy_changes(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f = ct_schedule(t, ex, counter_fn, c, TK_NS_PER_S * 20);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, MS(10)), TK_ETIMEDOUT);
    assert_false(tk_future_is_done(f));
    /* "Setting a shutdown policy after shutdown applies it to the queue at once." */
    assert_int_equal(tk_executor_set_execute_delayed_after_shutdown(ex, false), TK_OK);
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 0);
}

static void periodic_tasks_continue_after_shutdown_until_policy_changes(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.continue_periodic_after_shutdown = true;
    tk_executor *ex = ct_create(t, &opt);
    counter *c = counter_new(t);
    tk_future *f = ct_schedule_periodic(t, ex, TK_TASK_FIXED_DELAY, counter_fn, c, 0, MS(3));
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, MS(10)), TK_ETIMEDOUT);
    assert_int_equal(tk_executor_set_continue_periodic_after_shutdown(ex, false), TK_OK);
    assert_true(wait_for(future_done, f, CONF_WAIT));
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    int runs = atomic_load(&c->runs);
    sleep_ns(MS(10));
    assert_int_equal(atomic_load(&c->runs), runs);
}

static void destroy_stops_a_busy_executor_and_frees_every_task(void **state) {
    ct *t = CT(state);
    term_log *l;
    tk_executor *ex = executor_with_term_hook(t, 2, &l);
    gate *g = gate_new(t);
    tk_task_spec gs = gate_spec(g);
    tk_future *gf = ct_schedule_spec(t, ex, &gs);
    gate_wait_entered(g, 1);
    counter *p = counter_new(t);
    tk_task_spec ps = counter_spec(p, TK_TASK_FIXED_RATE, 0, MS(2));
    tk_future *pf = ct_schedule_spec(t, ex, &ps);
    enum { N = 20 };
    counter *c = counter_new(t);
    tk_future *f[N];
    for (int i = 0; i < N; i++) {
        tk_task_spec spec = counter_spec(c, TK_TASK_ONE_SHOT, TK_NS_PER_S * 20 + i, 0);
        f[i] = ct_schedule_spec(t, ex, &spec);
    }
    assert_true(wait_ge(&p->runs, 2, CONF_WAIT));
    ct_destroy(t, ex);
    /* Everything ended; every arg freed once; futures still readable. */
    assert_int_equal(atomic_load(&g->interrupted), 1);
    assert_int_equal(atomic_load(&g->freed), 1);
    assert_int_equal(atomic_load(&p->freed), 1);
    assert_int_equal(atomic_load(&c->freed), N);
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(atomic_load(&l->calls), 1);
    assert_true(tk_future_is_done(gf));
    assert_true(tk_future_is_done(pf));
    for (int i = 0; i < N; i++) {
        assert_true(tk_future_is_cancelled(f[i]));
        assert_int_equal(tk_future_get_timeout(f[i], 0, NULL), TK_ECANCELLED);
    }
    assert_int_equal(tk_future_cancel(f[0], true), TK_EDONE);
}

typedef struct selfcall {
    atomic_int done;
    atomic_int destroy_rc, await_rc, await0_rc, shutdown_rc;
    atomic_int shut_down; /* 1: the task also shuts its executor down */
} selfcall;

static int selfcall_fn(tk_run *run, void *arg) {
    selfcall *s = arg;
    tk_executor *ex = tk_run_executor(run);
    atomic_store(&s->destroy_rc, tk_executor_destroy(ex));
    atomic_store(&s->await_rc, tk_executor_await_termination(ex, -1));
    atomic_store(&s->await0_rc, tk_executor_await_termination(ex, MS(1)));
    if (atomic_load(&s->shut_down))
        atomic_store(&s->shutdown_rc, tk_executor_shutdown(ex));
    atomic_fetch_add(&s->done, 1);
    return 0;
}

static void destroy_and_await_from_a_pool_thread_are_edeadlk(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    selfcall *s = ct_calloc(t, 1, sizeof(*s));
    atomic_store(&s->shutdown_rc, 99);
    assert_int_equal(tk_executor_execute(ex, selfcall_fn, s), TK_OK);
    assert_true(wait_ge(&s->done, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&s->destroy_rc), TK_EDEADLK);
    assert_int_equal(atomic_load(&s->await_rc), TK_EDEADLK);
    assert_int_equal(atomic_load(&s->await0_rc), TK_EDEADLK);
    /* Nothing was done: the executor still runs work. */
    assert_int_equal(tk_executor_state(ex), TK_POOL_RUNNING);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(1), NULL), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
}

static void a_task_may_shut_its_executor_down(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    selfcall *s = ct_calloc(t, 1, sizeof(*s));
    atomic_store(&s->shut_down, 1);
    atomic_store(&s->shutdown_rc, 99);
    assert_int_equal(tk_executor_execute(ex, selfcall_fn, s), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&s->shutdown_rc), TK_OK);
    assert_true(tk_executor_is_terminated(ex));
}

CONF_TABLE(
    shutdown,
    {"shutdown is idempotent and rejects new work", shutdown_is_idempotent_and_rejects_new_work},
    {"states go RUNNING, SHUTDOWN, TIDYING, TERMINATED and the terminated hook runs once",
     states_progress_and_terminated_hook_runs_once},
    {"shutdown_now enters STOP and interrupts running tasks",
     shutdown_now_stops_and_interrupts_running_tasks},
    {"shutdown_now hands back never-run tasks in deadline order, futures cancelled",
     shutdown_now_hands_back_queued_tasks_in_deadline_order},
    {"shutdown_now without a drop callback frees the queued tasks",
     shutdown_now_without_drop_frees_queued_tasks},
    {"delayed tasks run after shutdown by default", delayed_tasks_run_after_shutdown_by_default},
    {"delayed tasks are cancelled at shutdown when execute-delayed is off",
     delayed_tasks_cancelled_at_shutdown_when_policy_off},
    {"periodic tasks stop at shutdown by default", periodic_tasks_stop_at_shutdown_by_default},
    {"periodic tasks continue after shutdown when continue-periodic is on",
     periodic_tasks_continue_after_shutdown_when_policy_on},
    {"turning execute-delayed off after shutdown cancels delayed tasks at once",
     delayed_tasks_continue_after_shutdown_until_policy_changes},
    {"turning continue-periodic off after shutdown stops periodic tasks",
     periodic_tasks_continue_after_shutdown_until_policy_changes},
    {"destroy stops a busy executor and frees every task once",
     destroy_stops_a_busy_executor_and_frees_every_task},
    {"destroy and await from a pool thread return TK_EDEADLK",
     destroy_and_await_from_a_pool_thread_are_edeadlk},
    {"a task may shut its own executor down", a_task_may_shut_its_executor_down}, );
