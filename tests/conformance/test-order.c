/* SPDX-License-Identifier: MIT */
/* Conformance: never early, deadline order, FIFO ties, negative and huge delays, absolute
 * deadlines, pool sizing. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

/* A log of runs, in start order. Workers fill a slot, then publish it by
 * bumping `done` (release); the main thread reads after seeing `done`. */
typedef struct olog {
    atomic_int n, done;
    int cap;
    int64_t *start, *deadline;
    uint64_t *seq, *run_count;
    int *id;
    pthread_t *thread;
} olog;

typedef struct otask {
    olog *log;
    int id;
    int64_t before, after, delay; /* submission bounds, written before scheduling */
} otask;

static olog *olog_new(ct *t, int cap) {
    olog *l = ct_calloc(t, 1, sizeof(*l));
    l->cap = cap;
    l->start = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    l->deadline = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    l->seq = ct_calloc(t, (size_t)cap, sizeof(uint64_t));
    l->run_count = ct_calloc(t, (size_t)cap, sizeof(uint64_t));
    l->id = ct_calloc(t, (size_t)cap, sizeof(int));
    l->thread = ct_calloc(t, (size_t)cap, sizeof(pthread_t));
    return l;
}

static int olog_fn(tk_run *run, void *arg) {
    int64_t now = now_ns();
    otask *o = arg;
    olog *l = o->log;
    const tk_task_info *info = tk_run_info(run);
    int i = atomic_fetch_add(&l->n, 1);
    if (i < l->cap) {
        l->start[i] = now;
        l->deadline[i] = info != NULL ? info->deadline_ns : INT64_MIN;
        l->seq[i] = info != NULL ? info->seq : 0;
        l->run_count[i] = info != NULL ? info->run_count : UINT64_MAX;
        l->id[i] = o->id;
        l->thread[i] = pthread_self();
    }
    atomic_fetch_add_explicit(&l->done, 1, memory_order_release);
    return 0;
}

static otask *otasks_new(ct *t, olog *l, int n) {
    otask *o = ct_calloc(t, (size_t)n, sizeof(*o));
    for (int i = 0; i < n; i++) {
        o[i].log = l;
        o[i].id = i;
    }
    return o;
}

static int64_t clamp0(int64_t d) {
    return d < 0 ? 0 : d;
}

static int schedule_timed(tk_executor *ex, otask *o, int64_t delay) {
    o->delay = delay;
    o->before = now_ns();
    int rc = tk_executor_schedule(ex, olog_fn, o, delay, NULL);
    o->after = now_ns();
    return rc;
}

/* xorshift: fixed seeds, so every run schedules the same thing. */
static uint32_t rnd(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* Each logged run's deadline lies in [before + delay, after + delay] of its
 * own scheduling call, and the run did not start before it. */
static void check_deadlines_and_never_early(olog *l, otask *o, int n) {
    for (int i = 0; i < n; i++) {
        otask *src = &o[l->id[i]];
        int64_t d = clamp0(src->delay);
        assert_true(l->deadline[i] >= src->before + d);
        assert_true(l->deadline[i] <= src->after + d);
        assert_true(l->start[i] >= l->deadline[i]);
        assert_true(l->start[i] >= src->before + d);
    }
}

static void never_starts_before_its_deadline(void **state) {
    ct *t = CT(state);
    const int n = 400;
    tk_executor *ex = ct_executor(t, 2);
    olog *l = olog_new(t, n);
    otask *o = otasks_new(t, l, n);
    uint32_t seed = 12345;
    for (int i = 0; i < n; i++) {
        int64_t delay = (int64_t)(rnd(&seed) % 40000) * TK_NS_PER_US; /* 0..40 ms */
        if (i % 37 == 0)
            delay = -MS(5);
        assert_int_equal(schedule_timed(ex, &o[i], delay), TK_OK);
    }
    assert_true(wait_ge(&l->done, n, CONF_WAIT));
    assert_int_equal(atomic_load(&l->n), n);
    check_deadlines_and_never_early(l, o, n);
    int64_t worst = 0;
    for (int i = 0; i < n; i++) {
        int64_t late = l->start[i] - l->deadline[i];
        worst = late > worst ? late : worst;
    }
    assert_true(worst < CONF_LATE);
    for (int i = 0; i < n; i++)
        assert_false(pthread_equal(l->thread[i], pthread_self()));
}

/* Blocks the only worker, queues tasks whose deadlines interleave, waits until
 * all are due, then lets the worker go: they must leave in (deadline, seq). */
static void starts_due_tasks_in_deadline_order(void **state) {
    ct *t = CT(state);
    const int n = 1000;
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 1);
    olog *l = olog_new(t, n);
    otask *o = otasks_new(t, l, n);
    uint32_t seed = 777;
    int64_t last = 0;
    for (int i = 0; i < n; i++) {
        int64_t delay = (int64_t)(rnd(&seed) % 30) * 500 * TK_NS_PER_US; /* 0..14.5 ms */
        assert_int_equal(schedule_timed(ex, &o[i], delay), TK_OK);
        last = o[i].after + delay > last ? o[i].after + delay : last;
    }
    sleep_ns(last - now_ns() + MS(5));
    gate_open(g);
    assert_true(wait_ge(&l->done, n, CONF_WAIT));
    check_deadlines_and_never_early(l, o, n);
    for (int i = 1; i < n; i++) {
        bool ordered = l->deadline[i - 1] < l->deadline[i] ||
                       (l->deadline[i - 1] == l->deadline[i] && l->seq[i - 1] < l->seq[i]);
        if (!ordered)
            print_error("run %d: id %d (deadline %lld) after id %d (deadline %lld)\n", i, l->id[i],
                        (long long)l->deadline[i], l->id[i - 1], (long long)l->deadline[i - 1]);
        assert_true(ordered);
    }
    /* seq is the submission order. */
    uint64_t *seq_of = ct_calloc(t, (size_t)n, sizeof(uint64_t));
    for (int i = 0; i < n; i++)
        seq_of[l->id[i]] = l->seq[i];
    for (int i = 1; i < n; i++)
        assert_true(seq_of[i - 1] < seq_of[i]);
}

static void check_fifo(olog *l, int n) {
    for (int i = 0; i < n; i++) {
        if (l->id[i] != i)
            print_error("run %d is task %d\n", i, l->id[i]);
        assert_int_equal(l->id[i], i);
        if (i > 0)
            assert_true(l->seq[i - 1] < l->seq[i]);
    }
}

/* Tasks due "now" (zero and negative delays alike) queue behind a busy worker
 * and must come out exactly in submission order. */
static void runs_tasks_due_now_in_submission_order(void **state) {
    ct *t = CT(state);
    const int n = 4000;
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 1);
    olog *l = olog_new(t, n);
    otask *o = otasks_new(t, l, n);
    for (int i = 0; i < n; i++) {
        int64_t delay = i % 3 == 0 ? 0 : (i % 3 == 1 ? -MS(50) : INT64_MIN);
        assert_int_equal(schedule_timed(ex, &o[i], delay), TK_OK);
    }
    gate_open(g);
    assert_true(wait_ge(&l->done, n, CONF_WAIT));
    check_deadlines_and_never_early(l, o, n);
    check_fifo(l, n);
}

/* The same delay from successive calls: FIFO through the engine's real-time
 * path (for the wheel, thousands of tasks land in a few ticks). */
static void runs_equal_delays_fifo_in_real_time(void **state) {
    ct *t = CT(state);
    const int n = 3000;
    tk_executor *ex = ct_executor(t, 1);
    olog *l = olog_new(t, n);
    otask *o = otasks_new(t, l, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(schedule_timed(ex, &o[i], MS(15)), TK_OK);
    assert_true(wait_ge(&l->done, n, CONF_WAIT));
    check_deadlines_and_never_early(l, o, n);
    check_fifo(l, n);
}

typedef struct droplog {
    atomic_int n;
    int cap;
    int64_t *deadline;
    uint64_t *seq;
    void **arg;
    tk_task_fn *fn;
    tk_arg_free_fn *arg_free;
} droplog;

static droplog *droplog_new(ct *t, int cap) {
    droplog *d = ct_calloc(t, 1, sizeof(*d));
    d->cap = cap;
    d->deadline = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    d->seq = ct_calloc(t, (size_t)cap, sizeof(uint64_t));
    d->arg = ct_calloc(t, (size_t)cap, sizeof(void *));
    d->fn = ct_calloc(t, (size_t)cap, sizeof(tk_task_fn));
    d->arg_free = ct_calloc(t, (size_t)cap, sizeof(tk_arg_free_fn));
    return d;
}

static void droplog_fn(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    droplog *d = ctx;
    int i = atomic_fetch_add(&d->n, 1);
    if (i < d->cap && task != NULL) {
        d->deadline[i] = task->deadline_ns;
        d->seq[i] = task->seq;
        d->arg[i] = task->arg;
        d->fn[i] = task->fn;
        d->arg_free[i] = arg_free;
    }
}

/* Exactly equal deadlines through the public API: every clamped delay has the
 * deadline INT64_MAX. shutdown_now() hands them back in (deadline, seq) order. */
static void keeps_exactly_equal_deadlines_fifo(void **state) {
    ct *t = CT(state);
    const int n = 2000;
    tk_executor *ex = ct_executor(t, 1);
    olog *l = olog_new(t, 1);
    otask *o = otasks_new(t, l, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(tk_executor_schedule(ex, olog_fn, &o[i], INT64_MAX - (i % 2), NULL),
                         TK_OK);
    droplog *d = droplog_new(t, n);
    assert_int_equal(tk_executor_shutdown_now(ex, droplog_fn, d), n);
    assert_int_equal(atomic_load(&d->n), n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(d->deadline[i], INT64_MAX);
        assert_ptr_equal(d->arg[i], &o[i]);
        if (i > 0)
            assert_true(d->seq[i - 1] < d->seq[i]);
    }
    assert_int_equal(atomic_load(&l->n), 0);
}

static void negative_delays_run_now(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    const int n = 4;
    olog *l = olog_new(t, n);
    otask *o = otasks_new(t, l, n);
    const int64_t delays[] = {-1, -TK_NS_PER_S, INT64_MIN, -INT64_MAX};
    for (int i = 0; i < n; i++)
        assert_int_equal(schedule_timed(ex, &o[i], delays[i]), TK_OK);
    assert_true(wait_ge(&l->done, n, CONF_WAIT));
    for (int i = 0; i < n; i++) {
        otask *src = &o[l->id[i]];
        /* Due at "now", not in the past. */
        assert_true(l->deadline[i] >= src->before);
        assert_true(l->deadline[i] <= src->after);
        assert_true(l->start[i] >= l->deadline[i]);
        assert_true(l->start[i] - src->after < CONF_LATE);
    }
    /* A negative initial delay starts a periodic task now, too. */
    counter *c = counter_new(t);
    tk_future *f = NULL;
    int64_t before = now_ns();
    f = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, counter_fn, c, -TK_NS_PER_S, MS(500));
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    assert_true(atomic_load(&c->first_start) - before < CONF_LATE);
    int rc = tk_future_cancel(f, false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
}

static void huge_delays_are_clamped_and_stay_pending(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f[4] = {0};
    f[0] = ct_schedule(t, ex, counter_fn, c, INT64_MAX);
    f[1] = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, counter_fn, c, INT64_MAX, INT64_MAX);
    f[2] =
        ct_schedule_periodic(t, ex, TK_TASK_FIXED_DELAY, counter_fn, c, INT64_MAX - 1, INT64_MAX);
    f[3] = ct_schedule(t, ex, counter_fn, c, INT64_MAX / 2 + 12345);
    /* A near task still runs past them. */
    counter *near = counter_new(t);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, near, MS(5), NULL), TK_OK);
    assert_true(wait_ge(&near->runs, 1, CONF_WAIT));
    sleep_ns(MS(30));
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(stats_of(ex).queue_size, 4);
    for (int i = 0; i < 4; i++) {
        int64_t rem = tk_future_remaining_ns(f[i]);
        assert_true(rem > INT64_MAX / 4);
        assert_false(tk_future_is_done(f[i]));
        assert_int_equal(tk_future_get_timeout(f[i], 0, NULL), TK_ETIMEDOUT);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tk_future_cancel(f[i], false), TK_OK);
        assert_true(tk_future_is_cancelled(f[i]));
        assert_int_equal(tk_future_get_timeout(f[i], 0, NULL), TK_ECANCELLED);
    }
    assert_int_equal(atomic_load(&c->runs), 0);

    /* A huge period after a first run: the next deadline saturates instead of
     * wrapping into the past. */
    counter *p = counter_new(t);
    tk_future *pf[2];
    pf[0] = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, counter_fn, p, 0, INT64_MAX);
    pf[1] = ct_schedule_periodic(t, ex, TK_TASK_FIXED_DELAY, counter_fn, p, 0, INT64_MAX - 1);
    assert_true(wait_ge(&p->runs, 2, CONF_WAIT));
    sleep_ns(MS(30));
    assert_int_equal(atomic_load(&p->runs), 2);
    for (int i = 0; i < 2; i++) {
        assert_true(tk_future_remaining_ns(pf[i]) > INT64_MAX / 4);
        assert_false(tk_future_is_done(pf[i]));
        assert_int_equal(tk_future_cancel(pf[i], false), TK_OK);
    }
}

/* TK_TASK_AT_DEADLINE: the deadline is taken as given (info->deadline_ns),
 * never early, a past one runs now; many tasks given one instant start in
 * submission order on one worker, more of them than the wheel's tick thread
 * hands over at a time; a fixed-rate task counts its periods from the
 * deadline. */
static int schedule_at(tk_executor *ex, tk_task_kind kind, otask *o, int64_t deadline,
                       int64_t period, tk_future **out) {
    tk_task_spec s = {.fn = olog_fn,
                      .arg = o,
                      .kind = kind,
                      .delay_ns = deadline,
                      .period_ns = period,
                      .flags = TK_TASK_AT_DEADLINE};
    return tk_executor_schedule_spec(ex, &s, out);
}

static void at_deadline_tasks_start_at_it_in_submission_order(void **state) {
    ct *t = CT(state);
    enum { N = 3000 };
    const int64_t lead = MS(1000); /* every submission lands before the instant */
    tk_executor *ex = ct_executor(t, 1);
    olog *l = olog_new(t, N + 4);
    otask *o = otasks_new(t, l, N + 2);

    int64_t d = now_ns() + lead;
    for (int i = 0; i < N; i++)
        assert_int_equal(schedule_at(ex, TK_TASK_ONE_SHOT, &o[i], d, 0, NULL), TK_OK);
    assert_true(now_ns() < d);
    /* a deadline in the past runs now, before the others */
    assert_int_equal(schedule_at(ex, TK_TASK_ONE_SHOT, &o[N], now_ns() - TK_NS_PER_S, 0, NULL),
                     TK_OK);
    assert_true(wait_ge(&l->done, 1, CONF_WAIT));
    assert_int_equal(l->id[0], N);
    assert_true(l->start[0] < d);
    assert_true(wait_ge(&l->done, N + 1, CONF_WAIT + lead / TK_NS_PER_MS));
    for (int i = 1; i <= N; i++) {
        assert_int_equal(l->id[i], i - 1);   /* submission order */
        assert_int_equal(l->deadline[i], d); /* exactly the deadline given */
        assert_true(l->start[i] >= d);       /* never early */
    }

    /* fixed rate from an absolute first deadline: runs at d2, d2 + p, ... */
    const int64_t p = MS(20);
    int64_t d2 = now_ns() + MS(30);
    tk_future *f = NULL;
    assert_int_equal(schedule_at(ex, TK_TASK_FIXED_RATE, &o[N + 1], d2, p, &f), TK_OK);
    assert_true(wait_ge(&l->done, N + 4, CONF_WAIT));
    assert_int_equal(tk_future_cancel(f, false), TK_OK);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(l->id[N + 1 + k], N + 1);
        assert_int_equal(l->deadline[N + 1 + k], d2 + k * p);
        assert_true(l->start[N + 1 + k] >= d2 + k * p);
    }
    tk_future_release(f);
}

static void zero_core_threads_still_run_tasks(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 0);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(5), NULL), TK_OK);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(10), NULL), TK_OK);
    tk_future *f = ct_submit(t, ex, counter_fn, c);
    assert_true(wait_ge(&c->runs, 4, CONF_WAIT));
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.largest_pool_size, 1);
    assert_int_equal(tk_executor_prestart_core_thread(ex), 0);
    assert_int_equal(tk_executor_prestart_all_core_threads(ex), 0);
}

static void core_threads_start_lazily_up_to_the_core_size(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 3);
    assert_int_equal(stats_of(ex).pool_size, 0);
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    assert_int_equal(wait_stat(ex, st_pool, 1, CONF_WAIT), 1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 3);
    sleep_ns(MS(10));
    assert_int_equal(atomic_load(&g->entered), 3);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.pool_size, 3);
    assert_int_equal(s.active_count, 3);
    assert_int_equal(s.largest_pool_size, 3);
    gate_open(g);
    gate_wait_entered(g, 5);
    assert_int_equal(wait_stat(ex, st_active, 0, CONF_WAIT), 0);
    s = stats_of(ex);
    assert_int_equal(s.pool_size, 3);
    assert_int_equal(s.largest_pool_size, 3);
}

static void prestart_starts_missing_core_threads(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 3);
    assert_int_equal(tk_executor_prestart_core_thread(ex), 1);
    assert_int_equal(tk_executor_prestart_all_core_threads(ex), 2);
    /* Started means alive: the pool and its high-water mark both say 3. */
    tk_executor_stats s0 = stats_of(ex);
    assert_int_equal(s0.pool_size, 3);
    assert_int_equal(s0.largest_pool_size, 3);
    assert_int_equal(tk_executor_prestart_all_core_threads(ex), 0);
    assert_int_equal(tk_executor_prestart_core_thread(ex), 0);
    assert_int_equal(wait_stat(ex, st_pool, 3, CONF_WAIT), 3);
    /* Work does not start more threads than the core size. */
    counter *c = counter_new(t);
    for (int i = 0; i < 10; i++)
        assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    assert_true(wait_ge(&c->runs, 10, CONF_WAIT));
    assert_int_equal(stats_of(ex).largest_pool_size, 3);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_prestart_core_thread(ex), TK_ESTATE);
    assert_int_equal(tk_executor_prestart_all_core_threads(ex), TK_ESTATE);
}

typedef struct producer {
    tk_executor *ex;
    otask *tasks;
    int n;
    int bad; /* non-OK results seen */
} producer;

static void *producer_main(void *arg) {
    producer *p = arg;
    uint32_t seed = 99u + (uint32_t)p->tasks[0].id;
    for (int i = 0; i < p->n; i++) {
        int64_t delay = (int64_t)(rnd(&seed) % 10000) * TK_NS_PER_US;
        if (schedule_timed(p->ex, &p->tasks[i], delay) != TK_OK)
            p->bad++;
    }
    return NULL;
}

static void loses_no_task_scheduled_from_many_threads(void **state) {
    ct *t = CT(state);
    enum { P = 4, PER = 500 };
    const int n = P * PER;
    tk_executor *ex = ct_executor(t, 2);
    olog *l = olog_new(t, n);
    otask *o = otasks_new(t, l, n);
    producer *p = ct_calloc(t, P, sizeof(*p));
    pthread_t th[P];
    for (int i = 0; i < P; i++) {
        p[i] = (producer){ex, o + i * PER, PER, 0};
        assert_int_equal(pthread_create(&th[i], NULL, producer_main, &p[i]), 0);
    }
    for (int i = 0; i < P; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < P; i++)
        assert_int_equal(p[i].bad, 0);
    assert_true(wait_ge(&l->done, n, CONF_WAIT));
    sleep_ns(MS(5));
    assert_int_equal(atomic_load(&l->n), n);
    check_deadlines_and_never_early(l, o, n);
    char *seen = ct_calloc(t, (size_t)n, 1);
    for (int i = 0; i < n; i++) {
        assert_int_equal(seen[l->id[i]], 0);
        seen[l->id[i]] = 1;
    }
    /* a worker counts a task completed just after its callback returned:
     * wait for it rather than for a fixed time (slow under sanitizers) */
    assert_int_equal(wait_stat(ex, st_task_count, (uint64_t)n, CONF_WAIT), (uint64_t)n);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.task_count, (uint64_t)n);
    assert_int_equal(s.runs, (uint64_t)n);
}

/* ScheduledThreadPoolExecutor: "Tasks scheduled for exactly the same
 * execution time are enabled in first-in-first-out (FIFO) order of
 * submission." executor.h, Guarantees: the heap and hwheel keep the
 * (deadline, seq) order exactly; the single-level wheel may reorder within
 * one tick. What each built-in engine claims must say the same. */
static void exact_order_claims_match_the_guarantees(void **state) {
    const tk_queue_ops *ops = CT(state)->eng->ops;
    bool exact = (ops->caps & TK_QUEUE_CAP_EXACT_ORDER) != 0;
    if (strcmp(ops->name, "heap") == 0 || strcmp(ops->name, "hwheel") == 0)
        assert_true(exact);
    else if (strcmp(ops->name, "wheel") == 0)
        assert_false(exact);
    /* the latitude an engine without the claim has is one tick */
    if (!exact)
        assert_true((ops->caps & TK_QUEUE_CAP_TICKED) != 0);
}

CONF_TABLE(order, {"never starts a task before its deadline", never_starts_before_its_deadline},
           {"TK_TASK_AT_DEADLINE: the deadline as given, never early, one instant in FIFO order",
            at_deadline_tasks_start_at_it_in_submission_order},
           {"starts due tasks in (deadline, submission) order", starts_due_tasks_in_deadline_order},
           {"the exact-order claims of the engines match the guarantees",
            exact_order_claims_match_the_guarantees},
           {"runs thousands of tasks due now in submission order (FIFO)",
            runs_tasks_due_now_in_submission_order},
           {"runs thousands of equal delays in submission order in real time (FIFO)",
            runs_equal_delays_fifo_in_real_time},
           {"keeps thousands of exactly equal deadlines in submission order",
            keeps_exactly_equal_deadlines_fifo},
           {"negative delays run now", negative_delays_run_now},
           {"huge delays are clamped: the task stays pending and can be cancelled",
            huge_delays_are_clamped_and_stay_pending},
           {"zero core threads still runs tasks", zero_core_threads_still_run_tasks},
           {"core threads start lazily, one per task, up to the core size",
            core_threads_start_lazily_up_to_the_core_size},
           {"prestart starts the missing core threads", prestart_starts_missing_core_threads},
           {"loses no task scheduled from many threads at once",
            loses_no_task_scheduled_from_many_threads}, );
