/* SPDX-License-Identifier: MIT */
/* Conformance: embedded timers (tk_timer), the zero-allocation path: bad
 * input, firing, order shared with tasks, stop, restart and free from the
 * callback, stop racing with the firing, the shutdown paths, the pending
 * limit and discard-oldest, absolute deadlines (start_at). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* A timer embedded in a record, as a user would do it. */
typedef struct rec {
    tk_timer timer;
    atomic_int fired;
    atomic_llong start_ns; /* when the callback began */
    atomic_int restarts;   /* restart_fn: starts still to do */
    atomic_int fault;      /* restart_fn: -1 ran early, -2 a restart failed, 0 neither */
    tk_executor *ex;       /* restart_fn */
    atomic_int *order;     /* order_fn: next slot of the shared log */
    atomic_int *log;       /* order_fn: ids in callback order */
    int id;
} rec;

/* container_of, as a user reaches its record from the callback's timer. */
#define REC_OF(ptr, type) ((type *)(void *)((char *)(ptr)-offsetof(type, timer)))

static rec *rec_of(tk_timer *t) {
    return REC_OF(t, rec);
}

static void fire_fn(tk_timer *t) {
    rec *r = rec_of(t);
    atomic_store(&r->start_ns, (long long)now_ns());
    atomic_fetch_add(&r->fired, 1);
}

static rec *recs_new(ct *t, int n, tk_timer_fn fn) {
    rec *r = ct_calloc(t, (size_t)n, sizeof(*r));
    for (int i = 0; i < n; i++) {
        assert_int_equal(tk_timer_init(&r[i].timer, fn), TK_OK);
        r[i].id = i;
    }
    return r;
}

/* Waits until the timer is IDLE (a stopped timer may still be held by an
 * engine thread for a while). */
static bool wait_idle(tk_timer *tm) {
    int64_t end = now_ns() + CONF_WAIT;
    while (!tk_timer_is_idle(tm)) {
        if (now_ns() > end)
            return false;
        sleep_ns(MS(1) / 5);
    }
    return true;
}

static void timer_bad_input(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    tk_executor *other = ct_executor(t, 1);
    rec *r = recs_new(t, 1, fire_fn);
    tk_timer raw;
    memset(&raw, 0, sizeof(raw));

    assert_int_equal(tk_timer_init(NULL, fire_fn), TK_EINVAL);
    assert_int_equal(tk_timer_init(&raw, NULL), TK_EINVAL);
    assert_int_equal(tk_timer_start(NULL, &r->timer, 0), TK_EINVAL);
    assert_int_equal(tk_timer_start(ex, NULL, 0), TK_EINVAL);
    assert_int_equal(tk_timer_start(ex, &raw, 0), TK_EINVAL); /* never initialised */
    assert_int_equal(tk_timer_stop(NULL, &r->timer), TK_EINVAL);
    assert_int_equal(tk_timer_stop(ex, NULL), TK_EINVAL);
    assert_int_equal(tk_timer_stop(ex, &r->timer), TK_ENOENT); /* idle */
    assert_false(tk_timer_is_pending(NULL));
    assert_false(tk_timer_is_idle(NULL));
    assert_int_equal(tk_timer_deadline_ns(NULL), 0);
    assert_true(tk_timer_is_idle(&r->timer));
    assert_false(tk_timer_is_pending(&r->timer));

    int64_t before = now_ns();
    assert_int_equal(tk_timer_start(ex, &r->timer, TK_NS_PER_S * 20), TK_OK);
    assert_true(tk_timer_is_pending(&r->timer));
    assert_false(tk_timer_is_idle(&r->timer));
    assert_true(tk_timer_deadline_ns(&r->timer) >= before + TK_NS_PER_S * 20);
    /* A pending timer cannot be started again, nor stopped on another executor. */
    assert_int_equal(tk_timer_start(ex, &r->timer, 0), TK_ESTATE);
    assert_int_equal(tk_timer_start(other, &r->timer, 0), TK_ESTATE);
    assert_int_equal(tk_timer_stop(other, &r->timer), TK_EINVAL);
    assert_true(tk_timer_is_pending(&r->timer));
    assert_int_equal(stats_of(other).queue_size, 0);
    assert_int_equal(tk_timer_stop(ex, &r->timer), TK_OK);
    assert_true(wait_idle(&r->timer));
    assert_int_equal(tk_timer_stop(ex, &r->timer), TK_ENOENT);
    /* A huge delay is clamped, a negative one means now. */
    assert_int_equal(tk_timer_start(ex, &r->timer, INT64_MAX), TK_OK);
    assert_int_equal(tk_timer_deadline_ns(&r->timer), INT64_MAX);
    assert_int_equal(tk_timer_stop(ex, &r->timer), TK_OK);
    assert_true(wait_idle(&r->timer));
    assert_int_equal(tk_timer_start(ex, &r->timer, -TK_NS_PER_S), TK_OK);
    assert_true(wait_ge(&r->fired, 1, CONF_WAIT));
    assert_true(wait_idle(&r->timer));
    assert_int_equal(atomic_load(&r->fired), 1);
}

static void timer_fires_once_never_early(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    enum { N = 60 };
    rec *r = recs_new(t, N, fire_fn);
    int64_t t0 = now_ns();
    for (int i = 0; i < N; i++)
        assert_int_equal(tk_timer_start(ex, &r[i].timer, (i * 7 % 40) * TK_NS_PER_MS), TK_OK);
    for (int i = 0; i < N; i++)
        assert_true(wait_ge(&r[i].fired, 1, CONF_WAIT));
    sleep_ns(MS(50));
    for (int i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&r[i].fired), 1);
        int64_t deadline = tk_timer_deadline_ns(&r[i].timer);
        assert_true(deadline >= t0 + (i * 7 % 40) * TK_NS_PER_MS);
        assert_true(atomic_load(&r[i].start_ns) >= deadline); /* never early */
        assert_true(tk_timer_is_idle(&r[i].timer));
        assert_int_equal(tk_timer_stop(ex, &r[i].timer), TK_ENOENT);
    }
    assert_int_equal(wait_stat(ex, st_completed, N, CONF_WAIT), N);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.task_count, N);
    assert_int_equal(s.runs, N);
    assert_int_equal(s.completed_count, N);
    assert_int_equal(s.cancelled_count, 0);
    assert_int_equal(s.queue_size, 0);
}

/* Timers and tasks share one (deadline, seq) order: with one worker held by
 * a gate, interleaved timers and tasks, some with equal deadlines, run in
 * (deadline, submission) order. */
typedef struct order_task {
    atomic_int *next;
    atomic_int *log;
    int id;
} order_task;

static int order_task_fn(tk_run *run, void *arg) {
    (void)run;
    order_task *o = arg;
    atomic_store(&o->log[atomic_fetch_add(o->next, 1)], o->id + 1);
    return 0;
}

static void order_timer_fn(tk_timer *tm) {
    rec *r = rec_of(tm);
    atomic_store(&r->log[atomic_fetch_add(r->order, 1)], r->id + 1);
    atomic_fetch_add(&r->fired, 1);
}

static void timer_order_with_tasks(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    assert_int_equal(tk_executor_schedule(ex, gate_fn, g, 0, NULL), TK_OK);
    gate_wait_entered(g, 1);

    enum { N = 40 };
    atomic_int *next = ct_calloc(t, 1, sizeof(*next));
    atomic_int *log = ct_calloc(t, N, sizeof(*log));
    int64_t *delay = ct_calloc(t, N, sizeof(int64_t));
    rec *r = recs_new(t, N, order_timer_fn);
    order_task *o = ct_calloc(t, N, sizeof(*o));
    for (int i = 0; i < N; i++) {
        delay[i] = (i % 3 == 0) ? MS(5) : MS(5) + (N - i) * TK_NS_PER_MS / 10;
        if (i % 2 == 0) {
            r[i].order = next;
            r[i].log = log;
            assert_int_equal(tk_timer_start(ex, &r[i].timer, delay[i]), TK_OK);
        } else {
            o[i] = (order_task){.next = next, .log = log, .id = i};
            assert_int_equal(tk_executor_schedule(ex, order_task_fn, &o[i], delay[i], NULL), TK_OK);
        }
    }
    sleep_ns(MS(30)); /* all due while the worker is held */
    gate_open(g);
    assert_true(wait_ge(next, N, CONF_WAIT));
    for (int k = 0; k < N; k++) /* ids are stored + 1, so 0 is "not yet" */
        assert_true(wait_ge(&log[k], 1, CONF_WAIT));
    /* Submission order is the index order; deadlines follow the delays, so
     * two entries are in order iff (deadline, index) grows. Compare delays
     * only where they differ by far more than the submission spread. */
    for (int k = 1; k < N; k++) {
        int a = atomic_load(&log[k - 1]) - 1, b = atomic_load(&log[k]) - 1;
        if (delay[a] == delay[b])
            assert_true(a < b); /* FIFO among equal delays */
        else if (llabs(delay[a] - delay[b]) >= MS(1))
            assert_true(delay[a] < delay[b]);
    }
}

static void timer_stop_before_deadline(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    rec *r = recs_new(t, 1, fire_fn);
    assert_int_equal(tk_timer_start(ex, &r->timer, MS(100)), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, 1);
    assert_int_equal(tk_timer_stop(ex, &r->timer), TK_OK);
    assert_false(tk_timer_is_pending(&r->timer));
    assert_int_equal(tk_timer_stop(ex, &r->timer), TK_ENOENT);
    assert_true(wait_idle(&r->timer));
    assert_int_equal(stats_of(ex).queue_size, 0);
    sleep_ns(MS(150));
    assert_int_equal(atomic_load(&r->fired), 0);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.cancelled_count, 1);
    assert_int_equal(s.runs, 0);
    /* Reusable once idle. */
    assert_int_equal(tk_timer_start(ex, &r->timer, MS(1)), TK_OK);
    assert_true(wait_ge(&r->fired, 1, CONF_WAIT));
    sleep_ns(MS(20));
    assert_int_equal(atomic_load(&r->fired), 1);
}

/* A stopped timer is the caller's again without waiting for unrelated
 * callbacks: due timers that the worker of a one-thread pool took behind a
 * long-running task (in one batch, where the engine batches) have not
 * started, so stop() takes them out of there and they turn idle (at once,
 * or at the engine's next pass where it releases later) while that task
 * still runs. Restarted, the timer fires once the worker is free. */
static void timer_stop_reaches_a_timer_waiting_behind_a_run(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    gate *first = gate_new(t), *second = gate_new(t);
    rec *r = recs_new(t, 3, fire_fn);
    /* the worker is busy while the second gate and the timers fall due */
    assert_int_equal(tk_executor_execute(ex, gate_fn, first), TK_OK);
    gate_wait_entered(first, 1);
    assert_int_equal(tk_executor_schedule(ex, gate_fn, second, 0, NULL), TK_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tk_timer_start(ex, &r[i].timer, 0), TK_OK);
    sleep_ns(MS(20));
    gate_open(first); /* the worker takes everything due, the second gate first */
    gate_wait_entered(second, 1);
    assert_int_equal(tk_timer_stop(ex, &r[1].timer), TK_OK);
    assert_true(wait_idle(&r[1].timer)); /* while the second gate is still closed */
    assert_int_equal(atomic_load(&second->left), 0);
    assert_int_equal(tk_timer_start(ex, &r[1].timer, 0), TK_OK);
    gate_open(second);
    for (int i = 0; i < 3; i++)
        assert_true(wait_ge(&r[i].fired, 1, CONF_WAIT));
    sleep_ns(MS(20));
    assert_int_equal(atomic_load(&r[1].fired), 1);
}

/* The callback owns an idle timer: it may start it again. */
static void restart_fn(tk_timer *tm) {
    rec *r = rec_of(tm);
    int64_t now = now_ns();
    if (atomic_load(&r->start_ns) != 0 && now < atomic_load(&r->start_ns) + MS(2))
        atomic_store(&r->fault, -1); /* ran early: recorded, checked by the test */
    atomic_store(&r->start_ns, (long long)now);
    atomic_fetch_add(&r->fired, 1);
    if (atomic_fetch_sub(&r->restarts, 1) > 0 && tk_timer_start(r->ex, tm, MS(2)) != TK_OK)
        atomic_store(&r->fault, -2);
}

static void timer_restart_from_callback(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    rec *r = recs_new(t, 1, restart_fn);
    r->ex = ex;
    atomic_store(&r->restarts, 4);
    assert_int_equal(tk_timer_start(ex, &r->timer, 0), TK_OK);
    assert_true(wait_ge(&r->fired, 5, CONF_WAIT));
    assert_true(wait_idle(&r->timer));
    sleep_ns(MS(20));
    assert_int_equal(atomic_load(&r->fired), 5);
    assert_int_equal(atomic_load(&r->fault), 0);
    assert_int_equal(stats_of(ex).runs, 5);
}

/* The callback may free the memory the timer lives in (ASan and valgrind
 * catch a touch after that). */
typedef struct heap_rec {
    tk_timer timer;
    atomic_int *done;
} heap_rec;

static void free_fn(tk_timer *tm) {
    heap_rec *h = REC_OF(tm, heap_rec);
    atomic_int *done = h->done;
    free(h);
    atomic_fetch_add(done, 1);
}

static void timer_free_in_callback(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    atomic_int *done = ct_calloc(t, 1, sizeof(*done));
    enum { N = 200 };
    for (int i = 0; i < N; i++) {
        heap_rec *h = malloc(sizeof(*h));
        assert_non_null(h);
        assert_int_equal(tk_timer_init(&h->timer, free_fn), TK_OK);
        h->done = done;
        assert_int_equal(tk_timer_start(ex, &h->timer, (i % 4) * TK_NS_PER_MS / 2), TK_OK);
    }
    assert_true(wait_ge(done, N, CONF_WAIT));
    assert_int_equal(wait_stat(ex, st_queue, 0, CONF_WAIT), 0);
}

/* stop() racing with the firing: each timer either fired (stop says
 * TK_ENOENT) or was stopped (TK_OK) and never fires; never both. */
static void timer_stop_races_fire(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    enum { N = 3000 };
    rec *r = recs_new(t, N, fire_fn);
    int *rc = ct_calloc(t, N, sizeof(int));
    for (int i = 0; i < N; i++)
        assert_int_equal(tk_timer_start(ex, &r[i].timer, (i % 5) * TK_NS_PER_MS / 4), TK_OK);
    for (int i = 0; i < N; i++)
        rc[i] = tk_timer_stop(ex, &r[i].timer);
    int stopped = 0;
    for (int i = 0; i < N; i++) {
        assert_true(wait_idle(&r[i].timer));
        assert_true(rc[i] == TK_OK || rc[i] == TK_ENOENT);
        stopped += rc[i] == TK_OK;
    }
    sleep_ns(MS(20));
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&r[i].fired), rc[i] == TK_OK ? 0 : 1);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.cancelled_count, (uint64_t)stopped);
    assert_int_equal(s.runs, (uint64_t)(N - stopped));
    assert_int_equal(s.queue_size, 0);
}

static void timer_shutdown_policies(void **state) {
    ct *t = CT(state);
    rec *r = recs_new(t, 3, fire_fn);
    /* Default: delayed one-shots still run after shutdown(). */
    tk_executor *ex = ct_executor(t, 1);
    assert_int_equal(tk_timer_start(ex, &r[0].timer, MS(30)), TK_OK);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_timer_start(ex, &r[1].timer, 0), TK_EREJECTED);
    assert_true(tk_timer_is_idle(&r[1].timer));
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&r[0].fired), 1);
    assert_int_equal(atomic_load(&r[1].fired), 0);
    assert_int_equal(stats_of(ex).rejected_count, 1);

    /* execute_delayed_after_shutdown off: the pending timer is dropped. */
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.execute_delayed_after_shutdown = false;
    tk_executor *ex2 = ct_create(t, &opt);
    assert_int_equal(tk_timer_start(ex2, &r[2].timer, TK_NS_PER_S * 20), TK_OK);
    assert_int_equal(tk_executor_shutdown(ex2), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex2, CONF_WAIT), TK_OK);
    assert_true(tk_timer_is_idle(&r[2].timer));
    assert_int_equal(atomic_load(&r[2].fired), 0);
    assert_int_equal(stats_of(ex2).cancelled_count, 1);
}

typedef struct drop_log {
    atomic_int calls;
} drop_log;

static void drop_count(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    (void)task;
    (void)arg_free;
    atomic_fetch_add(&((drop_log *)ctx)->calls, 1);
}

/* shutdown_now() and destroy() stop the queued timers: idle, never fired,
 * not handed to the drop callback. */
static void timer_shutdown_now_and_destroy(void **state) {
    ct *t = CT(state);
    enum { N = 8 };
    rec *r = recs_new(t, N, fire_fn);
    tk_executor *ex = ct_executor(t, 1);
    for (int i = 0; i < N / 2; i++)
        assert_int_equal(tk_timer_start(ex, &r[i].timer, TK_NS_PER_S * 20), TK_OK);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, TK_NS_PER_S * 20, NULL), TK_OK);
    drop_log *d = ct_calloc(t, 1, sizeof(*d));
    assert_int_equal(tk_executor_shutdown_now(ex, drop_count, d), 1); /* the task only */
    assert_int_equal(atomic_load(&d->calls), 1);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    for (int i = 0; i < N / 2; i++) {
        assert_true(tk_timer_is_idle(&r[i].timer));
        assert_int_equal(atomic_load(&r[i].fired), 0);
    }
    assert_int_equal(stats_of(ex).cancelled_count, N / 2 + 1);

    tk_executor *ex2 = ct_executor(t, 1);
    for (int i = N / 2; i < N; i++)
        assert_int_equal(tk_timer_start(ex2, &r[i].timer, TK_NS_PER_S * 20), TK_OK);
    assert_int_equal(tk_timer_stop(ex2, &r[N - 1].timer), TK_OK); /* one stopped first */
    ct_destroy(t, ex2);
    for (int i = N / 2; i < N; i++) {
        assert_true(tk_timer_is_idle(&r[i].timer));
        assert_int_equal(atomic_load(&r[i].fired), 0);
    }
}

/* Producers start timers while the pool shuts down: every start that
 * returned TK_OK fires (delayed one-shots run after shutdown()), every other
 * one is idle and never fires, and the pool terminates. */
typedef struct producer {
    tk_executor *ex;
    rec *r;
    int *rc;
    int n;
    atomic_int *go;
} producer;

static void *produce(void *arg) {
    producer *p = arg;
    while (!atomic_load(p->go))
        ;
    for (int i = 0; i < p->n; i++)
        p->rc[i] = tk_timer_start(p->ex, &p->r[i].timer, (i % 3) * TK_NS_PER_MS);
    return NULL;
}

static void timer_start_races_shutdown(void **state) {
    ct *t = CT(state);
    for (int round = 0; round < 4; round++) {
        tk_executor *ex = ct_executor(t, 2);
        enum { P = 2, N = 4000 };
        atomic_int *go = ct_calloc(t, 1, sizeof(*go));
        producer *p = ct_calloc(t, P, sizeof(*p));
        pthread_t th[P];
        for (int k = 0; k < P; k++) {
            p[k] = (producer){.ex = ex,
                              .r = recs_new(t, N, fire_fn),
                              .rc = ct_calloc(t, N, sizeof(int)),
                              .n = N,
                              .go = go};
            assert_int_equal(pthread_create(&th[k], NULL, produce, &p[k]), 0);
        }
        atomic_store(go, 1);
        sleep_ns(round * TK_NS_PER_MS / 2);
        if (round % 2 == 0)
            assert_int_equal(tk_executor_shutdown(ex), TK_OK);
        else
            assert_true(tk_executor_shutdown_now(ex, NULL, NULL) >= 0);
        for (int k = 0; k < P; k++)
            assert_int_equal(pthread_join(th[k], NULL), 0);
        if (tk_executor_await_termination(ex, CONF_WAIT) != TK_OK) {
            tk_executor_stats s = stats_of(ex);
            print_message(
                "round %d state %d queue %zu pool %u runs %llu cancelled %llu tasks %llu\n", round,
                (int)tk_executor_state(ex), s.queue_size, s.pool_size, (unsigned long long)s.runs,
                (unsigned long long)s.cancelled_count, (unsigned long long)s.task_count);
            fail();
        }
        uint64_t ok = 0, fired = 0;
        for (int k = 0; k < P; k++) {
            for (int i = 0; i < N; i++) {
                rec *r = &p[k].r[i];
                assert_true(tk_timer_is_idle(&r->timer));
                int f = atomic_load(&r->fired);
                assert_true(f <= 1);
                if (p[k].rc[i] == TK_OK) {
                    ok++;
                    if (round % 2 == 0)
                        assert_int_equal(f, 1); /* shutdown(): accepted means it runs */
                } else {
                    assert_int_equal(p[k].rc[i], TK_EREJECTED);
                    assert_int_equal(f, 0);
                }
                fired += (uint64_t)f;
            }
        }
        tk_executor_stats s = stats_of(ex);
        assert_int_equal(s.accepted_count, ok);
        assert_int_equal(s.runs, fired);
        assert_int_equal(s.runs + s.cancelled_count, ok);
        assert_int_equal(s.rejected_count, (uint64_t)(P * N) - ok);
    }
}

static void timer_purge_keeps_pending(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    rec *r = recs_new(t, 3, fire_fn);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tk_timer_start(ex, &r[i].timer, TK_NS_PER_S * 20), TK_OK);
    assert_int_equal(tk_executor_purge(ex), 0);
    assert_int_equal(stats_of(ex).queue_size, 3);
    for (int i = 0; i < 3; i++) {
        assert_true(tk_timer_is_pending(&r[i].timer));
        assert_int_equal(tk_timer_stop(ex, &r[i].timer), TK_OK);
        assert_true(wait_idle(&r[i].timer));
    }
}

/* The wheel's pending limit: a start past it gets TK_EFULL (no policy), and
 * discard-oldest may drop a queued timer to make room for a task. */
static void timer_pending_limit(void **state) {
    ct *t = CT(state);
    if (!t->eng->pending_limit) {
        print_message("[  SKIP    ] engine '%s' has no pending limit\n", t->eng->ops->name);
        skip();
    }
    enum { LIMIT = 4 };
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.rejection = TK_REJECT_DISCARD_OLDEST;
    ct_limit_pending(t, &opt, LIMIT);
    tk_executor *ex = ct_create(t, &opt);
    rec *r = recs_new(t, LIMIT + 1, fire_fn);
    for (int i = 0; i < LIMIT; i++)
        assert_int_equal(tk_timer_start(ex, &r[i].timer, TK_NS_PER_S * 20 + i * MS(1)), TK_OK);
    assert_int_equal(tk_timer_start(ex, &r[LIMIT].timer, MS(1)), TK_EFULL);
    assert_true(tk_timer_is_idle(&r[LIMIT].timer));
    assert_int_equal(stats_of(ex).rejected_count, 1);
    /* A task gets in by dropping the earliest timer. */
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(1), NULL), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    assert_true(wait_idle(&r[0].timer));
    assert_int_equal(atomic_load(&r[0].fired), 0);
    for (int i = 1; i < LIMIT; i++)
        assert_true(tk_timer_is_pending(&r[i].timer));
    assert_int_equal(stats_of(ex).cancelled_count, 1);
}

/* tk_timer_start_at(): bad input, the exact deadline, never early, a past
 * deadline due at once. */
static void timer_start_at_basics(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    rec *r = recs_new(t, 3, fire_fn);
    tk_timer raw;
    memset(&raw, 0, sizeof(raw));
    int64_t d = now_ns() + MS(200); /* leaves r[1] time to run first, even under valgrind */
    assert_int_equal(tk_timer_start_at(NULL, &r[0].timer, d), TK_EINVAL);
    assert_int_equal(tk_timer_start_at(ex, NULL, d), TK_EINVAL);
    assert_int_equal(tk_timer_start_at(ex, &raw, d), TK_EINVAL);
    assert_int_equal(tk_timer_start_at(ex, &r[0].timer, d), TK_OK);
    assert_int_equal(tk_timer_deadline_ns(&r[0].timer), d); /* exactly, no clock added */
    assert_int_equal(tk_timer_start_at(ex, &r[0].timer, d), TK_ESTATE);
    assert_int_equal(tk_timer_start(ex, &r[0].timer, 0), TK_ESTATE);
    /* in the past: due at once; far ahead: pending until stopped */
    assert_int_equal(tk_timer_start_at(ex, &r[1].timer, now_ns() - TK_NS_PER_S), TK_OK);
    assert_int_equal(tk_timer_start_at(ex, &r[2].timer, INT64_MAX), TK_OK);
    assert_true(wait_ge(&r[1].fired, 1, CONF_WAIT));
    assert_true(wait_ge(&r[0].fired, 1, CONF_WAIT));
    assert_true(atomic_load(&r[0].start_ns) >= d); /* never early */
    assert_true(atomic_load(&r[1].start_ns) < d);  /* did not wait for r[0] */
    assert_true(tk_timer_is_pending(&r[2].timer));
    assert_int_equal(tk_timer_stop(ex, &r[2].timer), TK_OK);
    assert_true(wait_idle(&r[2].timer));
    assert_true(wait_idle(&r[0].timer));
    assert_int_equal(atomic_load(&r[0].fired), 1);
    assert_int_equal(atomic_load(&r[2].fired), 0);
    assert_int_equal(wait_stat(ex, st_completed, 2, CONF_WAIT), 2);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.completed_count, 2);
    assert_int_equal(s.cancelled_count, 1);
}

/* Many timers given one instant, more than the wheel's tick thread hands
 * over at a time (it links an in-order batch 1024 nodes per lock hold and
 * the worker takes while it does), run in start order; timers whose
 * deadlines fall in one tick but were started out of order run in deadline
 * order. One worker, so the callback order is the take order. */
static void timer_start_at_order(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    enum { N = 5000 };
    const int64_t LEAD = MS(1000); /* far longer than 5000 starts take, even under valgrind */
    atomic_int *next = ct_calloc(t, 1, sizeof(*next));
    atomic_int *log = ct_calloc(t, N, sizeof(*log));
    rec *r = recs_new(t, N, order_timer_fn);
    for (int i = 0; i < N; i++) {
        r[i].order = next;
        r[i].log = log;
    }
    /* one instant, the worker free to take while they are handed over; all
     * started before it (a timer started after its deadline has passed
     * waits for the wheel's next tick: the one reordering it documents) */
    int64_t d = now_ns() + LEAD;
    for (int i = 0; i < N; i++)
        assert_int_equal(tk_timer_start_at(ex, &r[i].timer, d), TK_OK);
    assert_true(now_ns() < d);
    assert_true(wait_ge(next, N, CONF_WAIT));
    for (int k = 0; k < N; k++) {
        assert_true(wait_ge(&log[k], 1, CONF_WAIT));
        assert_int_equal(atomic_load(&log[k]) - 1, k);
    }
    for (int i = 0; i < N; i++)
        assert_true(wait_idle(&r[i].timer));

    /* distinct deadlines 100 ns apart, started in a scrambled order
     * (7919 is prime, so i -> i * 7919 mod N is a permutation) */
    atomic_store(next, 0);
    for (int k = 0; k < N; k++)
        atomic_store(&log[k], 0);
    d = now_ns() + LEAD;
    for (int i = 0; i < N; i++) {
        int rank = (int)((long long)i * 7919 % N);
        r[i].id = rank; /* logged as the rank, so the log must read 0, 1, 2 ... */
        assert_int_equal(tk_timer_start_at(ex, &r[i].timer, d + rank * 100), TK_OK);
    }
    assert_true(now_ns() < d);
    assert_true(wait_ge(next, N, CONF_WAIT));
    for (int k = 0; k < N; k++) {
        assert_true(wait_ge(&log[k], 1, CONF_WAIT));
        assert_int_equal(atomic_load(&log[k]) - 1, k);
    }
    assert_int_equal(wait_stat(ex, st_completed, 2 * N, CONF_WAIT), 2 * N);
    assert_int_equal(stats_of(ex).queue_size, 0);
}

CONF_TABLE(timer,
           {"embedded timer: bad input gets a status, a pending timer is not started twice",
            timer_bad_input},
           {"embedded timer: fires once, never early, counted", timer_fires_once_never_early},
           {"embedded timer: shares the (deadline, seq) order with tasks", timer_order_with_tasks},
           {"embedded timer: stop before the deadline, then reuse", timer_stop_before_deadline},
           {"embedded timer: stop reaches a timer waiting behind a long run",
            timer_stop_reaches_a_timer_waiting_behind_a_run},
           {"embedded timer: the callback may start its timer again", timer_restart_from_callback},
           {"embedded timer: the callback may free its timer", timer_free_in_callback},
           {"embedded timer: stop racing with the firing, never both", timer_stop_races_fire},
           {"embedded timer: shutdown policies for delayed timers", timer_shutdown_policies},
           {"embedded timer: shutdown_now and destroy stop queued timers",
            timer_shutdown_now_and_destroy},
           {"embedded timer: start racing with shutdown loses nothing", timer_start_races_shutdown},
           {"embedded timer: purge leaves pending timers alone", timer_purge_keeps_pending},
           {"embedded timer: pending limit and discard-oldest", timer_pending_limit},
           {"embedded timer: start_at takes the deadline as given, never early",
            timer_start_at_basics},
           {"embedded timer: start_at, one instant or scrambled, in (deadline, seq) order",
            timer_start_at_order}, );
