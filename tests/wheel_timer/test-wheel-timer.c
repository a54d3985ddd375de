/* SPDX-License-Identifier: MIT */
/* tk_wheel_timer (timerkit/wheel_timer.h) against Netty's HashedWheelTimer,
 * Timer, Timeout and TimerTask javadoc, on one engine:
 *   tk_wheel_timer_test --engine NAME [--filter GLOB]
 * Each case quotes the sentence of Netty's documentation it checks. Time
 * bounds are generous (seconds): the cases assert behaviour, never speed.
 *
 * cmocka pitfall: assert only on the test's main thread; callbacks record
 * into atomics that the main thread checks. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rel-common.h"
#include "timerkit.h"

#define WAIT_NS (10 * TK_NS_PER_S)   /* the longest a case waits for a callback */
#define LONG_NS (3600 * TK_NS_PER_S) /* a delay that never ends within a case */

static const tk_queue_ops *engine; /* from --engine */

static void options(tk_wheel_timer_options *opt) {
    assert_int_equal(tk_wheel_timer_options_init(opt), TK_OK);
    assert_int_equal(tk_queue_config_init_for(&opt->queue, engine), TK_OK);
}

static tk_wheel_timer *make(const tk_wheel_timer_options *opt) {
    tk_wheel_timer_options o;
    if (opt == NULL) {
        options(&o);
        opt = &o;
    }
    tk_wheel_timer *t = NULL;
    int rc = tk_wheel_timer_create(opt, &t);
    if (rc != TK_OK)
        fail_msg("%s: tk_wheel_timer_create: %s", engine->name, tk_strerror(rc));
    return t;
}

/* What a callback saw. */
typedef struct rec {
    atomic_long runs;
    int64_t not_before; /* the earliest time it may run */
    _Atomic int64_t ran_at;
    atomic_bool expired_inside; /* tk_timeout_is_expired() in the callback */
    atomic_bool cancel_inside;  /* tk_timeout_cancel() of itself in the callback */
    _Atomic(tk_wheel_timer *) timer_inside;
    _Atomic(void *) arg_inside;
    pthread_t thread;
    atomic_bool have_thread;
} rec;

static void on_timeout(tk_timeout *timeout, void *arg) {
    rec *r = arg;
    atomic_store(&r->ran_at, tk_clock_now_ns());
    atomic_store(&r->expired_inside, tk_timeout_is_expired(timeout));
    atomic_store(&r->cancel_inside, tk_timeout_cancel(timeout));
    atomic_store(&r->timer_inside, tk_timeout_timer(timeout));
    atomic_store(&r->arg_inside, tk_timeout_arg(timeout));
    r->thread = pthread_self();
    atomic_store(&r->have_thread, true);
    atomic_fetch_add(&r->runs, 1);
}

static void noop(tk_timeout *timeout, void *arg) {
    (void)timeout;
    (void)arg;
}

static tk_timeout *arm(tk_wheel_timer *t, rec *r, int64_t delay_ns) {
    memset(r, 0, sizeof(*r));
    r->not_before = tk_deadline_after_ns(tk_clock_now_ns(), delay_ns);
    tk_timeout *h = NULL;
    int rc = tk_wheel_timer_new_timeout(t, on_timeout, r, delay_ns, &h);
    if (rc != TK_OK)
        fail_msg("%s: new_timeout: %s", engine->name, tk_strerror(rc));
    return h;
}

static void wait_runs(rec *r, long want) {
    if (!rel_wait_at_least(&r->runs, want, WAIT_NS))
        fail_msg("%s: %ld runs after %d s, want %ld", engine->name, atomic_load(&r->runs),
                 (int)(WAIT_NS / TK_NS_PER_S), want);
}

/* Timer.newTimeout: "Schedules the specified TimerTask for one-time
 * execution after the specified delay." Never before it, and once. */
static void test_runs_once_after_the_delay(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    rec r[4];
    tk_timeout *h[4];
    const int64_t delays[4] = {0, 5 * TK_NS_PER_MS, 30 * TK_NS_PER_MS, 80 * TK_NS_PER_MS};
    for (int i = 0; i < 4; i++)
        h[i] = arm(t, &r[i], delays[i]);
    for (int i = 0; i < 4; i++)
        wait_runs(&r[i], 1);
    rel_sleep_ns(50 * TK_NS_PER_MS);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(atomic_load(&r[i].runs), 1);
        if (atomic_load(&r[i].ran_at) < r[i].not_before)
            fail_msg("%s: delay %lld ran %lld ns early", engine->name, (long long)delays[i],
                     (long long)(r[i].not_before - atomic_load(&r[i].ran_at)));
        assert_int_equal(tk_timeout_release(h[i]), TK_OK);
    }
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* Timeout.isExpired: "Returns true if and only if the TimerTask associated
 * with this handle has been expired." */
static void test_is_expired(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    rec r;
    tk_timeout *h = arm(t, &r, 2 * TK_NS_PER_MS);
    assert_false(tk_timeout_is_cancelled(h));
    wait_runs(&r, 1);
    assert_true(atomic_load(&r.expired_inside)); /* already while it runs */
    assert_true(tk_timeout_is_expired(h));
    assert_false(tk_timeout_is_cancelled(h));
    tk_timeout *p = arm(t, &r, LONG_NS);
    assert_false(tk_timeout_is_expired(p));
    assert_true(tk_timeout_cancel(p));
    assert_false(tk_timeout_is_expired(p));
    tk_timeout_release(p);
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* Timeout.cancel: "Attempts to cancel the TimerTask associated with this
 * handle. If the task has been executed or cancelled already, it will return
 * with no side effect." and "@return True if the cancellation completed
 * successfully, otherwise false". Timeout.isCancelled: "Returns true if and
 * only if the TimerTask associated with this handle has been cancelled." */
static void test_cancel(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    rec r;
    tk_timeout *h = arm(t, &r, 20 * TK_NS_PER_MS);
    assert_true(tk_timeout_cancel(h));
    assert_true(tk_timeout_is_cancelled(h));
    assert_false(tk_timeout_cancel(h)); /* cancelled already: no side effect */
    assert_true(tk_timeout_is_cancelled(h));
    assert_int_equal(tk_wheel_timer_pending(t), 0);
    rel_sleep_ns(100 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&r.runs), 0); /* never runs */
    tk_timeout_release(h);

    /* executed already: false, and it stays expired */
    h = arm(t, &r, 0);
    wait_runs(&r, 1);
    assert_false(atomic_load(&r.cancel_inside)); /* its own cancel, from its callback */
    assert_false(tk_timeout_cancel(h));
    assert_true(tk_timeout_is_expired(h));
    assert_false(tk_timeout_is_cancelled(h));
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* Timeout.timer: "Returns the Timer that created this handle." Timeout.task:
 * "Returns the TimerTask which is associated with this handle." (here: its
 * argument) */
static void test_timer_and_task(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    rec r;
    tk_timeout *h = arm(t, &r, 0);
    assert_ptr_equal(tk_timeout_timer(h), t);
    assert_ptr_equal(tk_timeout_arg(h), &r);
    wait_runs(&r, 1);
    assert_ptr_equal(atomic_load(&r.timer_inside), t);
    assert_ptr_equal(atomic_load(&r.arg_inside), &r);
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer.pendingTimeouts: "Returns the number of pending timeouts
 * of this Timer." */
static void test_pending_timeouts(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    tk_timeout *h[10];
    assert_int_equal(tk_wheel_timer_pending(t), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, &h[i]), TK_OK);
    assert_int_equal(tk_wheel_timer_pending(t), 10);
    for (int i = 0; i < 3; i++)
        assert_true(tk_timeout_cancel(h[i]));
    assert_int_equal(tk_wheel_timer_pending(t), 7);
    rec r;
    tk_timeout *e = arm(t, &r, 0);
    wait_runs(&r, 1);
    assert_int_equal(tk_wheel_timer_pending(t), 7); /* an expired one is not pending */
    assert_int_equal(tk_wheel_timer_stop(t, NULL, NULL), 7);
    assert_int_equal(tk_wheel_timer_pending(t), 0);
    for (int i = 0; i < 10; i++)
        tk_timeout_release(h[i]);
    tk_timeout_release(e);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer(..., maxPendingTimeouts): "The maximum number of pending
 * timeouts after which call to newTimeout will result in
 * RejectedExecutionException being thrown. No maximum pending timeouts limit
 * is assumed if this value is 0 or negative." Here: TK_EFULL. */
static void test_max_pending_timeouts(void **state) {
    (void)state;
    tk_wheel_timer_options opt;
    options(&opt);
    opt.max_pending_timeouts = 2;
    tk_wheel_timer *t = make(&opt);
    tk_timeout *a, *b, *c = NULL;
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, &a), TK_OK);
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, &b), TK_OK);
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, &c), TK_EFULL);
    assert_null(c);
    assert_int_equal(tk_wheel_timer_pending(t), 2);
    assert_true(tk_timeout_cancel(a)); /* room again */
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, &c), TK_OK);
    tk_timeout_release(a);
    tk_timeout_release(b);
    tk_timeout_release(c);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);

    options(&opt); /* 0: no limit */
    t = make(&opt);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, NULL), TK_OK);
    assert_int_equal(tk_wheel_timer_pending(t), 1000);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* A thread factory that counts the threads it starts and can be made to
 * fail. */
typedef struct factory {
    atomic_int started;
    atomic_bool fail;
    pthread_t last;
} factory;

static int counting_factory(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                            const char *name) {
    (void)name;
    factory *f = ctx;
    if (atomic_load(&f->fail))
        return -1;
    int rc = pthread_create(thread, NULL, start, arg);
    if (rc == 0) {
        f->last = *thread;
        atomic_fetch_add(&f->started, 1);
    }
    return rc;
}

/* HashedWheelTimer.start: "Starts the background thread explicitly. The
 * background thread will start automatically on demand even if you did not
 * call this method." */
static void test_lazy_start(void **state) {
    (void)state;
    factory f = {0};
    tk_wheel_timer_options opt;
    options(&opt);
    opt.thread_factory = counting_factory;
    opt.thread_factory_ctx = &f;
    tk_wheel_timer *t = make(&opt);
    assert_int_equal(atomic_load(&f.started), 0); /* not at creation */
    rec r;
    tk_timeout *h = arm(t, &r, 0); /* on demand */
    assert_int_equal(atomic_load(&f.started), 1);
    wait_runs(&r, 1);
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_start(t), TK_OK); /* already started: no new thread */
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, 0, NULL), TK_OK);
    assert_int_equal(atomic_load(&f.started), 1);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);

    t = make(&opt); /* explicitly */
    assert_int_equal(tk_wheel_timer_start(t), TK_OK);
    assert_int_equal(atomic_load(&f.started), 2);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer.start: "@throws IllegalStateException if this timer has
 * been stopped already"; Timer.newTimeout: "@throws IllegalStateException if
 * this timer has been stopped already" (HashedWheelTimer.newTimeout() calls
 * start(), which throws "cannot be started once stopped"). One exception,
 * one status from every call: TK_ESTATE. */
static void test_stopped_timer_refuses(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    assert_int_equal(tk_wheel_timer_stop(t, NULL, NULL), 0); /* never started */
    assert_int_equal(tk_wheel_timer_start(t), TK_ESTATE);
    tk_timeout *h = NULL;
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, 0, &h), TK_ESTATE);
    assert_null(h);
    assert_int_equal(tk_wheel_timer_new_timeout_within(t, noop, NULL, 0, 0, &h), TK_ESTATE);
    tk_timeout_spec spec = {.fn = noop};
    assert_int_equal(tk_wheel_timer_new_timeout_spec(t, &spec, &h), TK_ESTATE);
    assert_null(h);
    assert_int_equal(tk_wheel_timer_stop(t, NULL, NULL), 0);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);

    t = make(NULL); /* stopped after it ran: the same */
    rec r;
    h = arm(t, &r, 0);
    wait_runs(&r, 1);
    tk_timeout_release(h);
    h = NULL;
    assert_int_equal(tk_wheel_timer_stop(t, NULL, NULL), 0);
    assert_int_equal(tk_wheel_timer_start(t), TK_ESTATE);
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, 0, &h), TK_ESTATE);
    assert_null(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer(threadFactory, ...): "@param threadFactory a ThreadFactory
 * that creates a background Thread which is dedicated to TimerTask
 * execution." A factory that fails leaves the timer able to try again. */
static void test_thread_factory(void **state) {
    (void)state;
    factory f = {0};
    tk_wheel_timer_options opt;
    options(&opt);
    opt.thread_factory = counting_factory;
    opt.thread_factory_ctx = &f;
    opt.thread_name = "tk-test-timer";
    tk_wheel_timer *t = make(&opt);
    atomic_store(&f.fail, true);
    tk_timeout *h = NULL;
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, 0, &h), TK_ETHREAD);
    assert_null(h);
    assert_int_equal(tk_wheel_timer_start(t), TK_ETHREAD);
    assert_int_equal(tk_wheel_timer_pending(t), 0);
    atomic_store(&f.fail, false);
    rec r;
    h = arm(t, &r, 1 * TK_NS_PER_MS);
    wait_runs(&r, 1);
    assert_int_equal(atomic_load(&f.started), 1);
    assert_true(pthread_equal(r.thread, f.last)); /* on the factory's thread */
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer(..., taskExecutor): "@param taskExecutor The Executor
 * that is used to execute the submitted TimerTasks." When the executor
 * refuses (shut down), the worker runs the callback itself: none is lost. */
static void test_task_executor(void **state) {
    (void)state;
    tk_executor *ex;
    assert_int_equal(tk_executor_create(NULL, &ex), TK_OK);
    factory f = {0};
    tk_wheel_timer_options opt;
    options(&opt);
    opt.thread_factory = counting_factory;
    opt.thread_factory_ctx = &f;
    opt.task_executor = ex;
    tk_wheel_timer *t = make(&opt);
    rec r;
    tk_timeout *h = arm(t, &r, 1 * TK_NS_PER_MS);
    wait_runs(&r, 1);
    assert_false(pthread_equal(r.thread, f.last)); /* not on the timer's worker */
    assert_true(atomic_load(&r.expired_inside));
    assert_true(tk_timeout_is_expired(h));
    tk_timeout_release(h);

    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, WAIT_NS), TK_OK);
    h = arm(t, &r, 0);
    wait_runs(&r, 1);
    assert_true(pthread_equal(r.thread, f.last)); /* refused: the worker ran it */
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

typedef struct visited {
    long count;
    long cancelled; /* of them, is_cancelled() */
    long marked;    /* of them, the ones the case expects */
    rec *expect_lo, *expect_hi;
} visited;

static void visit(void *ctx, tk_timeout *timeout) {
    visited *v = ctx;
    v->count++;
    v->cancelled += tk_timeout_is_cancelled(timeout) && !tk_timeout_cancel(timeout);
    rec *r = tk_timeout_arg(timeout);
    v->marked += r >= v->expect_lo && r < v->expect_hi;
}

/* Timer.stop: "Releases all resources acquired by this Timer and cancels all
 * tasks which were scheduled but not executed yet." and "@return the
 * handles associated with the tasks which were canceled by this method".
 * Every one once; a second stop hands back nothing. */
static void test_stop_hands_back_the_unprocessed(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    rec r[6];
    tk_timeout *h[6];
    h[0] = arm(t, &r[0], 0); /* expires */
    wait_runs(&r[0], 1);
    for (int i = 1; i < 6; i++)
        h[i] = arm(t, &r[i], LONG_NS);
    assert_true(tk_timeout_cancel(h[1])); /* cancelled before stop */
    visited v = {.expect_lo = &r[2], .expect_hi = &r[6]};
    assert_int_equal(tk_wheel_timer_stop(t, visit, &v), 4);
    assert_int_equal(v.count, 4);
    assert_int_equal(v.cancelled, 4);
    assert_int_equal(v.marked, 4);
    for (int i = 2; i < 6; i++) {
        assert_true(tk_timeout_is_cancelled(h[i]));
        assert_false(tk_timeout_cancel(h[i])); /* stop's cancel was the one */
    }
    visited again = {0};
    assert_int_equal(tk_wheel_timer_stop(t, visit, &again), 0);
    assert_int_equal(again.count, 0);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(atomic_load(&r[i].runs), i == 0 ? 1 : 0);
        tk_timeout_release(h[i]);
    }
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

typedef struct self_stop {
    atomic_int stop_rc, destroy_rc;
    atomic_long runs;
} self_stop;

static void stop_self(tk_timeout *timeout, void *arg) {
    self_stop *s = arg;
    atomic_store(&s->stop_rc, (int)tk_wheel_timer_stop(tk_timeout_timer(timeout), NULL, NULL));
    atomic_store(&s->destroy_rc, tk_wheel_timer_destroy(tk_timeout_timer(timeout)));
    atomic_fetch_add(&s->runs, 1);
}

/* HashedWheelTimer.stop: "stop() cannot be called from TimerTask" (the
 * IllegalStateException it throws). Here: TK_EDEADLK, and nothing done. */
static void test_stop_from_a_callback_is_refused(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    self_stop s = {0};
    assert_int_equal(tk_wheel_timer_new_timeout(t, stop_self, &s, 0, NULL), TK_OK);
    assert_true(rel_wait_at_least(&s.runs, 1, WAIT_NS));
    assert_int_equal(atomic_load(&s.stop_rc), TK_EDEADLK);
    assert_int_equal(atomic_load(&s.destroy_rc), TK_EDEADLK);
    rec r; /* the timer still works */
    tk_timeout *h = arm(t, &r, 0);
    wait_runs(&r, 1);
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

typedef struct chain {
    atomic_long runs;
    long length;
    tk_timeout *victim; /* cancelled by the first run */
    atomic_bool victim_cancelled;
    atomic_int last_rc;
} chain;

static void rearm(tk_timeout *timeout, void *arg) {
    chain *c = arg;
    long n = atomic_fetch_add(&c->runs, 1) + 1;
    if (n == 1)
        atomic_store(&c->victim_cancelled, tk_timeout_cancel(c->victim));
    if (n < c->length) {
        int rc =
            tk_wheel_timer_new_timeout(tk_timeout_timer(timeout), rearm, c, 1 * TK_NS_PER_MS, NULL);
        if (rc != TK_OK)
            atomic_store(&c->last_rc, rc);
    }
}

/* TimerTask.run: "@param timeout a handle which is associated with this
 * task": through it a task reaches its timer, re-arms and cancels, with no
 * deadlock. */
static void test_callback_rearms_and_cancels(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    chain c = {.length = 20};
    rec r;
    c.victim = arm(t, &r, 2 * TK_NS_PER_S);
    assert_int_equal(tk_wheel_timer_new_timeout(t, rearm, &c, 0, NULL), TK_OK);
    assert_true(rel_wait_at_least(&c.runs, c.length, WAIT_NS));
    assert_int_equal(atomic_load(&c.last_rc), TK_OK);
    assert_true(atomic_load(&c.victim_cancelled));
    assert_true(tk_timeout_is_cancelled(c.victim));
    rel_sleep_ns(20 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&c.runs), c.length);
    assert_int_equal(atomic_load(&r.runs), 0);
    tk_timeout_release(c.victim);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer(..., tickDuration, unit, ticksPerWheel): "@param
 * tickDuration the duration between tick" and "@param ticksPerWheel the size
 * of the wheel", set as the engine's "tick" and "slots" where it has them
 * (slots rounded up to a power of two, as Netty normalizes ticksPerWheel).
 * With a coarse tick a callback still never runs early. */
static void test_tick_and_slots(void **state) {
    (void)state;
    tk_wheel_timer_options opt;
    options(&opt);
    int64_t v;
    bool has_tick = tk_queue_config_get_value(&opt.queue, "tick", &v) == TK_OK;
    if (has_tick)
        assert_int_equal(tk_queue_config_set_value(&opt.queue, "tick", 10 * TK_NS_PER_MS), TK_OK);
    if (tk_queue_config_get_value(&opt.queue, "slots", &v) == TK_OK)
        assert_int_equal(tk_queue_config_set_value(&opt.queue, "slots", 3), TK_OK);
    print_message("  %s: tick %s\n", engine->name, has_tick ? "10ms" : "(none)");
    tk_wheel_timer *t = make(&opt);
    rec r[3];
    tk_timeout *h[3];
    for (int i = 0; i < 3; i++)
        h[i] = arm(t, &r[i], (1 + 7 * i) * TK_NS_PER_MS); /* 1, 8 and 15 ms: below, near a tick */
    for (int i = 0; i < 3; i++) {
        wait_runs(&r[i], 1);
        assert_true(atomic_load(&r[i].ran_at) >= r[i].not_before);
        tk_timeout_release(h[i]);
    }
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer, "Ticks per Wheel (Wheel Size)": "a wheel is a hash table
 * of TimerTasks whose hash function is 'dead line of the task'." Delays of
 * several revolutions share slots with near ones and still run once, never
 * early (Netty's testTimerOverflowWheelLength). */
static void test_delays_beyond_one_revolution(void **state) {
    (void)state;
    tk_wheel_timer_options opt;
    options(&opt);
    int64_t v;
    if (tk_queue_config_get_value(&opt.queue, "tick", &v) == TK_OK)
        assert_int_equal(tk_queue_config_set_value(&opt.queue, "tick", 1 * TK_NS_PER_MS), TK_OK);
    if (tk_queue_config_get_value(&opt.queue, "slots", &v) == TK_OK)
        assert_int_equal(tk_queue_config_set_value(&opt.queue, "slots", 4), TK_OK);
    tk_wheel_timer *t = make(&opt);
    enum { K = 6 };
    rec r[K];
    tk_timeout *h[K];
    for (int i = 0; i < K; i++) /* 2, 6, 10, ... ms: up to 5 revolutions of 4 ticks */
        h[i] = arm(t, &r[i], (2 + 4 * i) * TK_NS_PER_MS);
    for (int i = 0; i < K; i++)
        wait_runs(&r[i], 1);
    rel_sleep_ns(20 * TK_NS_PER_MS);
    for (int i = 0; i < K; i++) {
        assert_int_equal(atomic_load(&r[i].runs), 1);
        assert_true(atomic_load(&r[i].ran_at) >= r[i].not_before);
        tk_timeout_release(h[i]);
    }
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer.pendingTimeouts: "Returns the number of pending timeouts
 * of this Timer." An executed timeout leaves the count, so a timer at its
 * maxPendingTimeouts takes new ones again (Netty's
 * testNewTimeoutShouldStopThrowingRejectedExecutionExceptionWhenExistingTimeoutIsExecuted). */
static void test_pending_limit_frees_on_expiry(void **state) {
    (void)state;
    tk_wheel_timer_options opt;
    options(&opt);
    opt.max_pending_timeouts = 2;
    tk_wheel_timer *t = make(&opt);
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, NULL), TK_OK);
    rec r;
    tk_timeout *h = arm(t, &r, 5 * TK_NS_PER_MS);
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, NULL), TK_EFULL);
    wait_runs(&r, 1);
    assert_int_equal(tk_wheel_timer_pending(t), 1);
    tk_timeout_release(h);
    h = arm(t, &r, 5 * TK_NS_PER_MS);
    wait_runs(&r, 1);
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_stop(t, NULL, NULL), 1);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* Netty's testOverflow: a delay of Long.MAX_VALUE milliseconds is accepted
 * ("Guard against overflow.": the deadline is clamped) and never runs. */
static void test_huge_delay_is_clamped(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    rec r;
    tk_timeout *h = arm(t, &r, INT64_MAX);
    rel_sleep_ns(50 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&r.runs), 0);
    assert_false(tk_timeout_is_expired(h));
    assert_true(tk_timeout_cancel(h));
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* Redirects stderr into a temporary file while `fn` runs; returns the lines
 * written. */
static int count_stderr_lines(void (*fn)(void *), void *ctx) {
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), 2) >= 0);
    fn(ctx);
    fflush(stderr);
    assert_true(dup2(saved, 2) >= 0);
    close(saved);
    rewind(tmp);
    int lines = 0, ch;
    while ((ch = fgetc(tmp)) != EOF)
        lines += ch == '\n';
    fclose(tmp);
    return lines;
}

typedef struct many {
    tk_wheel_timer *t[TK_WHEEL_TIMER_WARN_INSTANCES + 8];
    size_t n;
} many;

static void create_many(void *ctx) {
    many *m = ctx;
    tk_wheel_timer_options opt;
    tk_wheel_timer_options_init(&opt);
    tk_queue_config_init_for(&opt.queue, engine);
    while (m->n < sizeof(m->t) / sizeof(m->t[0]) &&
           tk_wheel_timer_create(&opt, &m->t[m->n]) == TK_OK)
        m->n++;
}

/* HashedWheelTimer, "Do not create many instances.": "you should make sure
 * to create only one instance and share it across your application." Past
 * 64 live instances Netty logs once ("You are creating too many
 * HashedWheelTimer instances."); here one stderr line, once per process,
 * and max_instances refuses more. */
static void test_too_many_instances(void **state) {
    (void)state;
    size_t before = tk_wheel_timer_instances();
    tk_wheel_timer_options opt;
    options(&opt);
    opt.max_instances = before + 1;
    tk_wheel_timer *a = NULL, *b = NULL;
    assert_int_equal(tk_wheel_timer_create(&opt, &a), TK_OK);
    assert_int_equal(tk_wheel_timer_instances(), before + 1);
    assert_int_equal(tk_wheel_timer_create(&opt, &b), TK_EFULL);
    assert_null(b);
    assert_int_equal(tk_wheel_timer_instances(), before + 1);
    assert_int_equal(tk_wheel_timer_stop(a, NULL, NULL), 0); /* a stopped one is not live */
    assert_int_equal(tk_wheel_timer_instances(), before);
    assert_int_equal(tk_wheel_timer_create(&opt, &b), TK_OK);
    assert_int_equal(tk_wheel_timer_destroy(a), TK_OK);
    assert_int_equal(tk_wheel_timer_destroy(b), TK_OK);
    assert_int_equal(tk_wheel_timer_instances(), before);

    many m = {.n = 0};
    assert_int_equal(count_stderr_lines(create_many, &m), 1); /* past 64: one line */
    assert_int_equal(m.n, sizeof(m.t) / sizeof(m.t[0]));
    for (size_t i = 0; i < m.n; i++)
        assert_int_equal(tk_wheel_timer_destroy(m.t[i]), TK_OK);
    m.n = 0;
    assert_int_equal(count_stderr_lines(create_many, &m), 0); /* once per process */
    for (size_t i = 0; i < m.n; i++)
        assert_int_equal(tk_wheel_timer_destroy(m.t[i]), TK_OK);
    assert_int_equal(tk_wheel_timer_instances(), before);
}

/* The handle's lifetime (C has no garbage collector): the caller's reference
 * may be dropped before or after expiry, and a handle still held outlives
 * its timer's destroy. ASan and valgrind check that nothing is used after
 * it is freed. */
static void test_handle_lifetime(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    rec early, late;
    tk_timeout *h = arm(t, &early, 5 * TK_NS_PER_MS);
    assert_int_equal(tk_timeout_release(h), TK_OK); /* before expiry: it still runs */
    wait_runs(&early, 1);
    h = arm(t, &late, 0);
    wait_runs(&late, 1);
    assert_int_equal(tk_timeout_release(h), TK_OK); /* after */
    tk_timeout *held = arm(t, &late, LONG_NS);
    assert_int_equal(tk_wheel_timer_new_timeout(t, noop, NULL, LONG_NS, NULL), TK_OK);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
    assert_true(tk_timeout_is_cancelled(held)); /* handed back by destroy's stop */
    assert_false(tk_timeout_cancel(held));
    assert_ptr_equal(tk_timeout_timer(held), t);
    assert_int_equal(tk_wheel_timer_new_timeout(tk_timeout_timer(held), noop, NULL, 0, NULL),
                     TK_ESTATE);
    assert_int_equal(tk_timeout_release(held), TK_OK); /* the timer's memory goes now */
}

/* Exact accounting, on one thread: every timeout ends once, as expired,
 * cancelled or handed back by stop. */
static void test_every_timeout_ends_once(void **state) {
    (void)state;
    enum { N = 200 };
    tk_wheel_timer *t = make(NULL);
    static rec r[N];
    tk_timeout *h[N];
    uint64_t rng = 12345;
    for (int i = 0; i < N; i++)
        h[i] = arm(t, &r[i],
                   (int64_t)(rel_rand(&rng) % 400) * TK_NS_PER_MS / 4 + (i % 4 == 0 ? LONG_NS : 0));
    long cancelled = 0;
    for (int i = 0; i < N; i += 3)
        cancelled += tk_timeout_cancel(h[i]);
    rel_sleep_ns(50 * TK_NS_PER_MS);
    visited v = {0};
    long back = tk_wheel_timer_stop(t, visit, &v);
    assert_int_equal(back, v.count);
    long expired = 0;
    for (int i = 0; i < N; i++) {
        long runs = atomic_load(&r[i].runs);
        assert_true(runs <= 1);
        assert_true(runs == 1 ? tk_timeout_is_expired(h[i]) : tk_timeout_is_cancelled(h[i]));
        expired += runs;
        tk_timeout_release(h[i]);
    }
    assert_int_equal(expired + cancelled + back, N);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* ---- the normalised tick and wheel size (tk_wheel_timer_tick_ns(), _slots()) ---- */

/* HashedWheelTimer(..., tickDuration, unit, ticksPerWheel): "Normalize
 * ticksPerWheel to power of two and initialize the wheel." (the
 * constructor, then createWheel(): findNextPositivePowerOfTwo). The getters
 * answer what the engine uses: the wheel's tick and slots rounded up, the
 * hwheel's tick and 2^bits slots a level, TK_ENOTSUP and 0 where the engine
 * has none (the heap). */
static void test_normalised_tick_and_slots(void **state) {
    (void)state;
    tk_wheel_timer_options opt;
    options(&opt);
    int64_t v, want_tick = 0, bits = 0;
    size_t want_slots = 0;
    if (tk_queue_config_get_value(&opt.queue, "tick", &v) == TK_OK) {
        assert_int_equal(tk_queue_config_set_value(&opt.queue, "tick", 10 * TK_NS_PER_MS), TK_OK);
        want_tick = 10 * TK_NS_PER_MS;
    }
    if (tk_queue_config_get_value(&opt.queue, "slots", &v) == TK_OK) {
        assert_int_equal(tk_queue_config_set_value(&opt.queue, "slots", 3), TK_OK);
        want_slots = 4; /* 3, rounded up to a power of two */
    } else if (tk_queue_config_get_value(&opt.queue, "bits", &bits) == TK_OK) {
        want_slots = (size_t)1 << bits;
    }
    tk_wheel_timer *t = make(&opt);
    int64_t tick = -1;
    size_t slots = 99;
    assert_int_equal(tk_wheel_timer_tick_ns(t, &tick), want_tick > 0 ? TK_OK : TK_ENOTSUP);
    assert_int_equal(tick, want_tick);
    assert_int_equal(tk_wheel_timer_slots(t, &slots), want_slots > 0 ? TK_OK : TK_ENOTSUP);
    assert_int_equal(slots, want_slots);
    print_message("  %s: tick %lld ns, slots %zu\n", engine->name, (long long)tick, slots);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);

    t = make(NULL); /* the engine's defaults: the same answer as its config */
    options(&opt);
    int rc = tk_wheel_timer_tick_ns(t, &tick);
    if (tk_queue_config_get_value(&opt.queue, "tick", &v) == TK_OK) {
        assert_int_equal(rc, TK_OK);
        assert_int_equal(tick, v);
    } else {
        assert_int_equal(rc, TK_ENOTSUP);
    }
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* ---- TimerTask.cancelled() (tk_timeout_spec.cancelled) ---- */

/* What a cancelled hook saw. */
typedef struct hook {
    atomic_long calls;
    atomic_long runs; /* of fn: must stay 0 for a cancelled timeout */
    _Atomic(void *) arg;
    atomic_bool was_cancelled;   /* tk_timeout_is_cancelled() inside */
    atomic_bool on_worker;       /* ran on the factory's thread */
    atomic_bool cancel_returned; /* the cancel had returned when it ran */
    atomic_int rc_inside;        /* what a call made inside returned */
    factory *f;
    tk_timeout *victim; /* cancelled from inside, if set */
    atomic_bool victim_cancelled;
    rec *spawn;      /* a timeout made from inside, if set */
    long *visit_saw; /* visitor's calls when it ran, if set */
} hook;

static void hook_fn(tk_timeout *timeout, void *arg) {
    (void)timeout;
    atomic_fetch_add(&((hook *)arg)->runs, 1);
}

static void hook_cancelled(tk_timeout *timeout, void *arg) {
    hook *h = arg;
    atomic_store(&h->arg, tk_timeout_arg(timeout));
    atomic_store(&h->was_cancelled, tk_timeout_is_cancelled(timeout));
    if (h->f != NULL)
        atomic_store(&h->on_worker, pthread_equal(pthread_self(), h->f->last));
    if (h->victim != NULL)
        atomic_store(&h->victim_cancelled, tk_timeout_cancel(h->victim));
    if (h->spawn != NULL) {
        h->spawn->not_before = tk_clock_now_ns();
        atomic_store(&h->rc_inside, tk_wheel_timer_new_timeout(tk_timeout_timer(timeout),
                                                               on_timeout, h->spawn, 0, NULL));
    }
    atomic_fetch_add(&h->calls, 1);
}

static tk_timeout *arm_hooked(tk_wheel_timer *t, hook *h, int64_t delay_ns) {
    tk_timeout_spec spec = {
        .fn = hook_fn, .cancelled = hook_cancelled, .arg = h, .delay_ns = delay_ns};
    tk_timeout *out = NULL;
    int rc = tk_wheel_timer_new_timeout_spec(t, &spec, &out);
    if (rc != TK_OK)
        fail_msg("%s: new_timeout_spec: %s", engine->name, tk_strerror(rc));
    return out;
}

/* TimerTask.cancelled: "Called for TimerTasks that are successfully canceled
 * via Timeout.cancel()." Once, with the timeout's handle, on the worker
 * thread (Netty's Worker runs processCancelledTasks()); never for a timeout
 * that expired, nor for a second cancel. */
static void test_cancelled_hook_once_on_the_worker(void **state) {
    (void)state;
    factory f = {0};
    tk_wheel_timer_options opt;
    options(&opt);
    opt.thread_factory = counting_factory;
    opt.thread_factory_ctx = &f;
    tk_wheel_timer *t = make(&opt);
    hook h = {.f = &f};
    tk_timeout *a = arm_hooked(t, &h, LONG_NS);
    assert_true(tk_timeout_cancel(a));
    assert_false(tk_timeout_cancel(a)); /* not "successfully canceled": no call */
    assert_true(rel_wait_at_least(&h.calls, 1, WAIT_NS));
    assert_ptr_equal(atomic_load(&h.arg), &h);
    assert_true(atomic_load(&h.was_cancelled));
    assert_true(atomic_load(&h.on_worker));
    assert_int_equal(atomic_load(&h.runs), 0);
    tk_timeout_release(a);

    hook e = {0}; /* expires: fn runs, the hook never does */
    tk_timeout *b = arm_hooked(t, &e, 0);
    assert_true(rel_wait_at_least(&e.runs, 1, WAIT_NS));
    assert_false(tk_timeout_cancel(b));
    tk_timeout_release(b);

    tk_timeout_spec none = {.fn = hook_fn, .arg = &e, .delay_ns = LONG_NS}; /* no hook: nothing */
    assert_int_equal(tk_wheel_timer_new_timeout_spec(t, &none, &b), TK_OK);
    assert_true(tk_timeout_cancel(b));
    tk_timeout_release(b);
    rel_sleep_ns(20 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&h.calls), 1);
    assert_int_equal(atomic_load(&e.calls), 0);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
    assert_int_equal(atomic_load(&h.calls), 1);
    assert_int_equal(atomic_load(&e.calls), 0);
}

typedef struct gate {
    atomic_bool open;
    atomic_bool saw_open;
    atomic_long calls;
} gate;

/* Waits (bounded) until the test opens the gate, after its cancel returned:
 * a cancel that ran the hook inside itself would never return in time. */
static void gate_cancelled(tk_timeout *timeout, void *arg) {
    (void)timeout;
    gate *g = arg;
    int64_t end = tk_clock_now_ns() + WAIT_NS;
    while (!atomic_load(&g->open) && tk_clock_now_ns() < end)
        rel_sleep_ns(100 * TK_NS_PER_US);
    atomic_store(&g->saw_open, atomic_load(&g->open));
    atomic_fetch_add(&g->calls, 1);
}

/* Timeout.cancel() only queues the timeout (cancelledTimeouts.add()); the
 * worker calls cancelled() later, holding nothing: the cancel does not wait
 * for the hook, and the hook may use the timer (create and cancel
 * timeouts), as a TimerTask may. Its stop is refused, as from run(). */
static void test_cancelled_hook_runs_after_cancel_and_may_use_the_timer(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    gate g = {0};
    tk_timeout_spec spec = {
        .fn = noop, .cancelled = gate_cancelled, .arg = &g, .delay_ns = LONG_NS};
    tk_timeout *a;
    assert_int_equal(tk_wheel_timer_new_timeout_spec(t, &spec, &a), TK_OK);
    assert_true(tk_timeout_cancel(a));
    assert_int_equal(tk_wheel_timer_pending(t), 0); /* exact at once */
    atomic_store(&g.open, true);
    assert_true(rel_wait_at_least(&g.calls, 1, WAIT_NS));
    assert_true(atomic_load(&g.saw_open));
    tk_timeout_release(a);

    hook second = {0};
    tk_timeout *victim = arm_hooked(t, &second, LONG_NS);
    rec spawned;
    memset(&spawned, 0, sizeof(spawned));
    hook first = {.victim = victim, .spawn = &spawned};
    tk_timeout *b = arm_hooked(t, &first, LONG_NS);
    assert_true(tk_timeout_cancel(b));
    assert_true(rel_wait_at_least(&first.calls, 1, WAIT_NS));
    assert_int_equal(atomic_load(&first.rc_inside), TK_OK);
    assert_true(atomic_load(&first.victim_cancelled));
    assert_true(rel_wait_at_least(&second.calls, 1, WAIT_NS)); /* a cancel from a hook: told too */
    wait_runs(&spawned, 1);
    tk_timeout_release(b);
    tk_timeout_release(victim);

    self_stop s = {0}; /* stop and destroy from a hook: TK_EDEADLK, as from a callback */
    tk_timeout_spec stopper = {.fn = noop, .cancelled = stop_self, .arg = &s, .delay_ns = LONG_NS};
    assert_int_equal(tk_wheel_timer_new_timeout_spec(t, &stopper, &b), TK_OK);
    assert_true(tk_timeout_cancel(b));
    assert_true(rel_wait_at_least(&s.runs, 1, WAIT_NS));
    assert_int_equal(atomic_load(&s.stop_rc), TK_EDEADLK);
    assert_int_equal(atomic_load(&s.destroy_rc), TK_EDEADLK);
    tk_timeout_release(b);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

typedef struct hook_visit {
    long count;
    long hooks_before; /* the hook's calls when the visitor first ran */
    hook *h;
} hook_visit;

static void visit_hooked(void *ctx, tk_timeout *timeout) {
    (void)timeout;
    hook_visit *v = ctx;
    if (v->count++ == 0)
        v->hooks_before = atomic_load(&v->h->calls);
}

/* HashedWheelTimer.stop() hands the unprocessed timeouts back ("the handles
 * associated with the tasks which were canceled by this method") and calls
 * no cancelled() for them: its worker has ended. A timeout cancelled just
 * before stop is told before stop returns, and before the visitor runs. */
static void test_cancelled_hook_and_stop(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    hook handed = {0}, told = {0};
    tk_timeout *a = arm_hooked(t, &handed, LONG_NS);
    tk_timeout *b = arm_hooked(t, &told, LONG_NS);
    assert_true(tk_timeout_cancel(b));
    hook_visit v = {.h = &told};
    assert_int_equal(tk_wheel_timer_stop(t, visit_hooked, &v), 1);
    assert_int_equal(v.count, 1);
    assert_int_equal(v.hooks_before, 1); /* b's hook ran before the visitor */
    assert_int_equal(atomic_load(&told.calls), 1);
    assert_int_equal(atomic_load(&handed.calls), 0); /* handed back: not told */
    assert_true(tk_timeout_is_cancelled(a));
    assert_false(tk_timeout_cancel(a)); /* stop ended it: a later cancel tells nothing */
    rel_sleep_ns(20 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&handed.calls), 0);
    assert_int_equal(atomic_load(&handed.runs) + atomic_load(&told.runs), 0);
    tk_timeout_release(a);
    tk_timeout_release(b);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* HashedWheelTimer(..., taskExecutor): the executor runs the expired tasks
 * (timeout.expire() hands them to taskExecutor.execute()); cancelled() is
 * called by the worker itself. */
static void test_cancelled_hook_not_on_the_task_executor(void **state) {
    (void)state;
    tk_executor *ex;
    assert_int_equal(tk_executor_create(NULL, &ex), TK_OK);
    factory f = {0};
    tk_wheel_timer_options opt;
    options(&opt);
    opt.thread_factory = counting_factory;
    opt.thread_factory_ctx = &f;
    opt.task_executor = ex;
    tk_wheel_timer *t = make(&opt);
    hook h = {.f = &f};
    tk_timeout *a = arm_hooked(t, &h, LONG_NS);
    assert_true(tk_timeout_cancel(a));
    assert_true(rel_wait_at_least(&h.calls, 1, WAIT_NS));
    assert_true(atomic_load(&h.on_worker));
    tk_timeout_release(a);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

/* A thread factory whose worker, once its loop has ended, reports it and
 * waits for the test's go before the thread ends (so stop's join waits). */
typedef struct held_exit {
    void *(*start)(void *);
    void *arg;
    atomic_bool exited, go;
} held_exit;

static void *held_trampoline(void *p) {
    held_exit *h = p;
    h->start(h->arg);
    atomic_store(&h->exited, true);
    int64_t end = tk_clock_now_ns() + WAIT_NS;
    while (!atomic_load(&h->go) && tk_clock_now_ns() < end)
        rel_sleep_ns(100 * TK_NS_PER_US);
    return NULL;
}

static int held_factory(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                        const char *name) {
    (void)name;
    held_exit *h = ctx;
    h->start = start;
    h->arg = arg;
    return pthread_create(thread, NULL, held_trampoline, h);
}

typedef struct stopper {
    tk_wheel_timer *t;
    pthread_t self;
    long back;
} stopper;

static void *stop_thread(void *p) {
    stopper *s = p;
    s->self = pthread_self();
    s->back = tk_wheel_timer_stop(s->t, NULL, NULL);
    return NULL;
}

typedef struct where {
    atomic_long calls;
    pthread_t thread;
} where;

static void where_cancelled(tk_timeout *timeout, void *arg) {
    (void)timeout;
    where *w = arg;
    w->thread = pthread_self();
    atomic_fetch_add(&w->calls, 1);
}

/* Netty's worker runs processCancelledTasks() once more as it ends; a
 * Timeout.cancel() that lands after that, while stop() joins the worker,
 * is never told there. Here stop runs that hook, on its own thread, before
 * it returns: every successful cancel is told once. */
static void test_cancelled_hook_after_the_worker_ended(void **state) {
    (void)state;
    held_exit h = {0};
    tk_wheel_timer_options opt;
    options(&opt);
    opt.thread_factory = held_factory;
    opt.thread_factory_ctx = &h;
    tk_wheel_timer *t = make(&opt);
    where w = {0};
    tk_timeout_spec spec = {
        .fn = noop, .cancelled = where_cancelled, .arg = &w, .delay_ns = LONG_NS};
    tk_timeout *a, *b;
    assert_int_equal(tk_wheel_timer_new_timeout_spec(t, &spec, &a), TK_OK);
    assert_int_equal(tk_wheel_timer_new_timeout_spec(t, &spec, &b), TK_OK);
    stopper s = {.t = t};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stop_thread, &s), 0);
    int64_t end = tk_clock_now_ns() + WAIT_NS;
    while (!atomic_load(&h.exited) && tk_clock_now_ns() < end)
        rel_sleep_ns(100 * TK_NS_PER_US);
    assert_true(atomic_load(&h.exited)); /* the worker's loop is over; stop is joining it */
    assert_true(tk_timeout_cancel(a));   /* still pending: stop has not collected yet */
    rel_sleep_ns(10 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&w.calls), 0); /* nobody to run it yet */
    atomic_store(&h.go, true);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(s.back, 1); /* b: handed back, not told */
    assert_int_equal(atomic_load(&w.calls), 1);
    assert_true(pthread_equal(w.thread, s.self)); /* on stop's thread, before it returned */
    tk_timeout_release(a);
    tk_timeout_release(b);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
    assert_int_equal(atomic_load(&w.calls), 1);
}

/* ---- slack (a timerkit extension: no Netty counterpart) ---- */

#define SLACK_LATE (300 * TK_NS_PER_MS) /* a loaded machine's allowance */

static tk_timeout *arm_within(tk_wheel_timer *t, rec *r, int64_t delay_ns, int64_t slack_ns) {
    memset(r, 0, sizeof(*r));
    r->not_before = tk_deadline_after_ns(tk_clock_now_ns(), delay_ns);
    tk_timeout *h = NULL;
    int rc = tk_wheel_timer_new_timeout_within(t, on_timeout, r, delay_ns, slack_ns, &h);
    if (rc != TK_OK)
        fail_msg("%s: new_timeout_within: %s", engine->name, tk_strerror(rc));
    return h;
}

/* Ran never before its deadline and no later than its window's end plus the
 * allowance (the deadline was read before the call: the window's end, read
 * after it, may be a little later still). */
static void check_window(rec *r, int64_t slack_ns) {
    int64_t at = atomic_load(&r->ran_at);
    if (at < r->not_before)
        fail_msg("%s: %lld ns early", engine->name, (long long)(r->not_before - at));
    if (at - r->not_before > slack_ns + SLACK_LATE)
        fail_msg("%s: %lld ns late with %lld ns of slack", engine->name,
                 (long long)(at - r->not_before), (long long)slack_ns);
}

/* tk_wheel_timer_options.slack_ns: "The slack of every timeout made by
 * tk_wheel_timer_new_timeout(): its callback runs at some instant in
 * [deadline, deadline + slack_ns], never before"; new_timeout_within():
 * "this timeout's own slack instead of the options' slack_ns". */
static void test_slack_window(void **state) {
    (void)state;
    tk_wheel_timer_options opt;
    options(&opt);
    assert_int_equal(opt.slack_ns, 0); /* the default: Netty's */
    opt.slack_ns = 40 * TK_NS_PER_MS;
    tk_wheel_timer *t = make(&opt);
    enum { N = 6 };
    rec r[N];
    tk_timeout *h[N];
    int64_t slack[N];
    for (int i = 0; i < N; i++) {
        int64_t delay = (int64_t)i * 6 * TK_NS_PER_MS;
        if (i % 3 == 0) {
            h[i] = arm(t, &r[i], delay);
            slack[i] = opt.slack_ns;
        } else {
            slack[i] = (int64_t)(i % 3 - 1) * 20 * TK_NS_PER_MS; /* 0 or 20 ms */
            h[i] = arm_within(t, &r[i], delay, slack[i]);
        }
    }
    for (int i = 0; i < N; i++) {
        wait_runs(&r[i], 1);
        check_window(&r[i], slack[i]);
        assert_true(tk_timeout_is_expired(h[i]));
        assert_int_equal(tk_timeout_release(h[i]), TK_OK);
    }
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* A timeout whose window closes before the worker's planned wake-up must
 * wake it: a first timeout with 300 ms of slack, then one due in 10 ms with
 * none, which runs promptly (and the first within its window). */
static void test_slack_short_window_wakes_the_worker(void **state) {
    (void)state;
    tk_wheel_timer *t = make(NULL);
    rec lazy, prompt;
    tk_timeout *a = arm_within(t, &lazy, 50 * TK_NS_PER_MS, 300 * TK_NS_PER_MS);
    rel_sleep_ns(5 * TK_NS_PER_MS); /* the worker is asleep, planned on `lazy` */
    tk_timeout *b = arm_within(t, &prompt, 10 * TK_NS_PER_MS, 0);
    wait_runs(&prompt, 1);
    check_window(&prompt, 0);
    wait_runs(&lazy, 1);
    check_window(&lazy, 300 * TK_NS_PER_MS);
    tk_timeout_release(a);
    tk_timeout_release(b);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

/* A callback handed to the task executor runs at once there: the timeout
 * has had its window, and the executor's default_slack_ns does not delay it
 * further. */
static void test_slack_task_executor_adds_none(void **state) {
    (void)state;
    tk_executor_options eo;
    assert_int_equal(tk_executor_options_init(&eo), TK_OK);
    eo.default_slack_ns = 5 * TK_NS_PER_S;
    tk_executor *ex;
    assert_int_equal(tk_executor_create(&eo, &ex), TK_OK);
    tk_wheel_timer_options opt;
    options(&opt);
    opt.task_executor = ex;
    tk_wheel_timer *t = make(&opt);
    rec r;
    tk_timeout *h = arm_within(t, &r, 5 * TK_NS_PER_MS, 0);
    wait_runs(&r, 1);
    check_window(&r, 0);
    tk_timeout_release(h);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

/* queue.h, "Slack": "one wake-up serves every node whose window contains
 * it", on an engine with TK_QUEUE_CAP_SLACK: 30 timeouts due over 20 ms
 * with 300 ms of slack are expired together after the last deadline, not
 * one by one (at most 3 early: a spurious wake-up). */
static void test_slack_coalesces(void **state) {
    (void)state;
    if ((engine->caps & TK_QUEUE_CAP_SLACK) == 0)
        skip();
    enum { N = 30 };
    const int64_t spread = 20 * TK_NS_PER_MS, slack = 300 * TK_NS_PER_MS;
    tk_wheel_timer_options opt;
    options(&opt);
    opt.slack_ns = slack;
    tk_wheel_timer *t = make(&opt);
    assert_int_equal(tk_wheel_timer_start(t), TK_OK);
    rec r[N];
    tk_timeout *h[N];
    int64_t first = tk_clock_now_ns() + 100 * TK_NS_PER_MS;
    for (int i = 0; i < N; i++)
        h[i] = arm(t, &r[i], first + spread * i / (N - 1) - tk_clock_now_ns());
    int64_t last = r[N - 1].not_before;
    bool measured = tk_clock_now_ns() < first;
    int early = 0;
    for (int i = 0; i < N; i++) {
        wait_runs(&r[i], 1);
        check_window(&r[i], slack);
        early += atomic_load(&r[i].ran_at) < last;
        tk_timeout_release(h[i]);
    }
    if (measured && early > 3)
        fail_msg("%s: %d of %d timeouts ran before the last deadline", engine->name, early, N);
    assert_int_equal(tk_wheel_timer_destroy(t), TK_OK);
}

int main(int argc, char **argv) {
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--engine") == 0 && i + 1 < argc)
            name = argv[++i];
        else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
            cmocka_set_test_filter(argv[++i]);
        else {
            fprintf(stderr, "usage: %s --engine NAME [--filter GLOB]\n", argv[0]);
            return 2;
        }
    }
    engine = name != NULL ? tk_engine_by_name(name) : tk_engine_default();
    if (engine == NULL) {
        fprintf(stderr, "%s: no engine named %s\n", argv[0], name);
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_once_after_the_delay),
        cmocka_unit_test(test_is_expired),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_timer_and_task),
        cmocka_unit_test(test_pending_timeouts),
        cmocka_unit_test(test_max_pending_timeouts),
        cmocka_unit_test(test_lazy_start),
        cmocka_unit_test(test_stopped_timer_refuses),
        cmocka_unit_test(test_thread_factory),
        cmocka_unit_test(test_task_executor),
        cmocka_unit_test(test_stop_hands_back_the_unprocessed),
        cmocka_unit_test(test_stop_from_a_callback_is_refused),
        cmocka_unit_test(test_callback_rearms_and_cancels),
        cmocka_unit_test(test_tick_and_slots),
        cmocka_unit_test(test_delays_beyond_one_revolution),
        cmocka_unit_test(test_pending_limit_frees_on_expiry),
        cmocka_unit_test(test_huge_delay_is_clamped),
        cmocka_unit_test(test_too_many_instances),
        cmocka_unit_test(test_handle_lifetime),
        cmocka_unit_test(test_every_timeout_ends_once),
        cmocka_unit_test(test_slack_window),
        cmocka_unit_test(test_slack_short_window_wakes_the_worker),
        cmocka_unit_test(test_slack_task_executor_adds_none),
        cmocka_unit_test(test_slack_coalesces),
        cmocka_unit_test(test_normalised_tick_and_slots),
        cmocka_unit_test(test_cancelled_hook_once_on_the_worker),
        cmocka_unit_test(test_cancelled_hook_runs_after_cancel_and_may_use_the_timer),
        cmocka_unit_test(test_cancelled_hook_and_stop),
        cmocka_unit_test(test_cancelled_hook_not_on_the_task_executor),
        cmocka_unit_test(test_cancelled_hook_after_the_worker_ended),
    };
    char group[64];
    snprintf(group, sizeof(group), "wheel_timer_%s", engine->name);
    return cmocka_run_group_tests_name(group, tests, NULL, NULL);
}
