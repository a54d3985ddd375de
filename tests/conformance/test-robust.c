/* SPDX-License-Identifier: MIT */
/* Conformance: nothing lost under races, callbacks that call back in, mass cancellation. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

/* One task's fate, seen from every side. */
typedef struct fate {
    atomic_int ran, freed, handed;
    int rc; /* the scheduling call's status */
} fate;

static int fate_fn(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add(&((fate *)arg)->ran, 1);
    return 0;
}

static void fate_free(void *arg) {
    atomic_fetch_add(&((fate *)arg)->freed, 1);
}

static void fate_drop(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    (void)ctx;
    (void)arg_free;
    atomic_fetch_add(&((fate *)task->arg)->handed, 1);
}

typedef struct racer {
    tk_executor *ex;
    fate *fates;
    int n;
    atomic_int *go;
    atomic_int *progress;
} racer;

static void *racer_main(void *arg) {
    racer *r = arg;
    while (!atomic_load(r->go))
        ;
    for (int i = 0; i < r->n; i++) {
        tk_task_spec spec = {.fn = fate_fn,
                             .arg = &r->fates[i],
                             .arg_free = fate_free,
                             .kind = TK_TASK_ONE_SHOT,
                             .delay_ns = (i % 50) * 100 * TK_NS_PER_US};
        r->fates[i].rc = tk_executor_schedule_spec(r->ex, &spec, NULL);
        atomic_fetch_add(r->progress, 1);
    }
    return NULL;
}

static void nothing_is_lost_when_shutdown_now_races_with_scheduling(void **state) {
    ct *t = CT(state);
    enum { P = 2, PER = 2000 };
    tk_executor *ex = ct_executor(t, 2);
    fate *fates = ct_calloc(t, P * PER, sizeof(fate));
    racer *r = ct_calloc(t, P, sizeof(racer));
    atomic_int *go = ct_calloc(t, 1, sizeof(atomic_int));
    atomic_int *progress = ct_calloc(t, 1, sizeof(atomic_int));
    pthread_t th[P];
    for (int i = 0; i < P; i++) {
        r[i] = (racer){ex, fates + i * PER, PER, go, progress};
        assert_int_equal(pthread_create(&th[i], NULL, racer_main, &r[i]), 0);
    }
    atomic_store(go, 1);
    /* Stop while both producers are mid-way. */
    assert_true(wait_ge(progress, P * PER / 3, CONF_WAIT));
    long handed = tk_executor_shutdown_now(ex, fate_drop, NULL);
    for (int i = 0; i < P; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    ct_destroy(t, ex);
    long sum_handed = 0, accepted = 0, rejected = 0;
    for (int i = 0; i < P * PER; i++) {
        fate *f = &fates[i];
        int ran = atomic_load(&f->ran), freed = atomic_load(&f->freed), h = atomic_load(&f->handed);
        sum_handed += h;
        if (f->rc == TK_EREJECTED) {
            rejected++;
            assert_int_equal(ran + h, 0);
            assert_int_equal(freed, 1);
        } else {
            assert_int_equal(f->rc, TK_OK);
            accepted++;
            if (h != 0) { /* handed back: the caller owns it */
                assert_int_equal(h, 1);
                assert_int_equal(ran + freed, 0);
            } else { /* ran, or was cancelled: freed exactly once either way */
                assert_true(ran <= 1);
                if (freed != 1)
                    print_error("task %d: ran %d freed %d\n", i, ran, freed);
                assert_int_equal(freed, 1);
            }
        }
    }
    assert_int_equal(sum_handed, handed);
    assert_int_equal(accepted + rejected, P * PER);
    assert_true(accepted >= P * PER / 3);
}

static void mass_remove_on_cancel_frees_each_task_once(void **state) {
    ct *t = CT(state);
    enum { N = 3000 };
    tk_executor_options opt;
    ct_options(t, &opt, 2);
    opt.remove_on_cancel = true;
    tk_executor *ex = ct_create(t, &opt);
    fate *fates = ct_calloc(t, N, sizeof(fate));
    tk_future **f = ct_calloc(t, N, sizeof(*f));
    for (int i = 0; i < N; i++) {
        /* Spread over near and far slots and rounds. */
        int64_t delay = i % 3 == 0 ? MS(1000) + i * TK_NS_PER_US : TK_NS_PER_S * (2 + i % 40);
        tk_task_spec spec = {.fn = fate_fn,
                             .arg = &fates[i],
                             .arg_free = fate_free,
                             .kind = i % 7 == 0 ? TK_TASK_FIXED_RATE : TK_TASK_ONE_SHOT,
                             .delay_ns = delay,
                             .period_ns = i % 7 == 0 ? MS(5) : 0};
        f[i] = ct_schedule_spec(t, ex, &spec);
    }
    assert_int_equal(stats_of(ex).queue_size, N);
    for (int i = 0; i < N; i += 2)
        assert_int_equal(tk_future_cancel(f[i], i % 4 == 0), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, N / 2);
    for (int i = 0; i < N; i += 2)
        assert_true(wait_ge(&fates[i].freed, 1, CONF_WAIT));
    assert_int_equal(tk_executor_purge(ex), 0);
    ct_destroy(t, ex);
    for (int i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&fates[i].freed), 1);
        if (i % 2 == 0)
            assert_int_equal(atomic_load(&fates[i].ran), 0);
    }
    assert_int_equal(tk_future_cancel(f[1], false), TK_EDONE);
}

/* Callbacks run with no executor or engine lock held: each one calls back in. */
typedef struct reentry {
    tk_executor *_Atomic ex;
    atomic_int before, after, freed, runs, followups, terminated;
    atomic_int nested_rc;
    tk_future *_Atomic victim;
} reentry;

static int followup_fn(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add(&((reentry *)arg)->followups, 1);
    return 0;
}

static int reentrant_fn(tk_run *run, void *arg) {
    reentry *r = arg;
    tk_executor *ex = tk_run_executor(run);
    tk_executor_stats s;
    (void)tk_executor_stats_get(ex, &s);
    atomic_store(&r->nested_rc, tk_executor_schedule(ex, followup_fn, r, MS(1), NULL));
    tk_future *v = atomic_load(&r->victim);
    if (v != NULL)
        (void)tk_future_cancel(v, true);
    (void)tk_executor_purge(ex);
    atomic_fetch_add(&r->runs, 1);
    return 0;
}

static int re_before(tk_executor *ex, const tk_task_info *task, void *ctx) {
    (void)task;
    tk_executor_stats s;
    (void)tk_executor_stats_get(ex, &s);
    (void)tk_executor_get_remove_on_cancel(ex);
    atomic_fetch_add(&((reentry *)ctx)->before, 1);
    return 0;
}

static void re_after(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    (void)task;
    (void)status;
    (void)tk_executor_purge(ex);
    atomic_fetch_add(&((reentry *)ctx)->after, 1);
}

static void re_terminated(tk_executor *ex, void *ctx) {
    tk_executor_stats s;
    (void)tk_executor_stats_get(ex, &s);
    (void)tk_executor_is_shutdown(ex);
    atomic_fetch_add(&((reentry *)ctx)->terminated, 1);
}

static void re_free(void *arg) {
    reentry *r = arg;
    tk_executor *ex = atomic_load(&r->ex);
    tk_executor_stats s;
    if (ex != NULL)
        (void)tk_executor_stats_get(ex, &s);
    atomic_fetch_add(&r->freed, 1);
}

static void callbacks_may_call_back_into_the_executor(void **state) {
    ct *t = CT(state);
    reentry *r = ct_calloc(t, 1, sizeof(*r));
    tk_executor_hooks hooks = {.before_execute = re_before,
                               .after_execute = re_after,
                               .terminated = re_terminated,
                               .ctx = r};
    tk_executor *ex = ct_executor_with_hooks(t, 1, &hooks);
    atomic_store(&r->ex, ex);
    counter *c = counter_new(t);
    tk_future *victim = ct_schedule(t, ex, counter_fn, c, TK_NS_PER_S * 20);
    atomic_store(&r->victim, victim);
    tk_task_spec spec = {
        .fn = reentrant_fn, .arg = r, .arg_free = re_free, .kind = TK_TASK_ONE_SHOT};
    tk_future *f = ct_schedule_spec(t, ex, &spec);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_true(wait_ge(&r->followups, 1, CONF_WAIT));
    assert_true(wait_ge(&r->freed, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&r->nested_rc), TK_OK);
    assert_true(tk_future_is_cancelled(victim));
    assert_int_equal(stats_of(ex).queue_size, 0); /* purged from inside the run */
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&r->runs), 1);
    assert_int_equal(atomic_load(&r->before), 2);
    assert_int_equal(atomic_load(&r->after), 2);
    assert_int_equal(atomic_load(&r->terminated), 1);
    assert_int_equal(atomic_load(&r->freed), 1);
    assert_int_equal(atomic_load(&c->runs), 0);
}

CONF_TABLE(robust,
           {"nothing is lost when shutdown_now races with scheduling",
            nothing_is_lost_when_shutdown_now_races_with_scheduling},
           {"remove-on-cancel of thousands of tasks frees each exactly once",
            mass_remove_on_cancel_frees_each_task_once},
           {"callbacks may call back into the executor",
            callbacks_may_call_back_into_the_executor}, );
