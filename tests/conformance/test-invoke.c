/* SPDX-License-Identifier: MIT */
/* Conformance: future states (the JDK 19 Future.state(), resultNow(),
 * exceptionNow()), aborting a blocked get (what interrupting the waiting
 * thread does in Java), and bulk invocation (AbstractExecutorService
 * invokeAll / invokeAny). Each case quotes the JDK javadoc it implements.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "conformance.h"

#define HOUR ((int64_t)3600 * TK_NS_PER_S)

/* A task that sets `result` and returns `ret`. */
typedef struct job {
    atomic_int runs;
    atomic_int freed;
    int ret;
    void *result;
} job;

static int job_fn(tk_run *run, void *arg) {
    job *j = arg;
    tk_run_set_result(run, j->result);
    atomic_fetch_add(&j->runs, 1);
    return j->ret;
}

static void job_free(void *arg) {
    atomic_fetch_add(&((job *)arg)->freed, 1);
}

static tk_task_spec job_spec(job *j, int64_t delay_ns) {
    tk_task_spec s = {.fn = job_fn,
                      .arg = j,
                      .arg_free = job_free,
                      .kind = TK_TASK_ONE_SHOT,
                      .delay_ns = delay_ns};
    return s;
}

/* Cancels its own future, then returns non-zero: the task ends cancelled. */
static int cancel_self_fn(tk_run *run, void *arg) {
    (void)arg;
    (void)tk_future_cancel(tk_run_future(run), false);
    return 3;
}

/* ---- Future.state(), resultNow(), exceptionNow() --------------------------------- */

/* JDK 19 Future.State.RUNNING: "The task has not completed."
 * Future.State.SUCCESS: "The task completed with a result."
 * Future.resultNow(): "Returns the computed result, without waiting." and
 * "@throws IllegalStateException if the task has not completed or the task
 * did not complete with a result". */
static void state_is_running_until_the_task_succeeds(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    tk_future *f = ct_submit(t, ex, gate_fn, g);
    /* queued or running: RUNNING */
    assert_int_equal(tk_future_state(f), TK_TASK_RUNNING);
    gate_wait_entered(g, 1);
    assert_int_equal(tk_future_state(f), TK_TASK_RUNNING);
    void *result = (void *)&result;
    int status = 12345;
    assert_int_equal(tk_future_result_now(f, &result), TK_ESTATE);
    assert_ptr_equal(result, (void *)&result);
    assert_int_equal(tk_future_exception_now(f, &status), TK_ESTATE);
    assert_int_equal(status, 12345);
    gate_open(g);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(tk_future_state(f), TK_TASK_SUCCESS);
    assert_string_equal(tk_task_state_name(tk_future_state(f)), "SUCCESS");

    job *j = ct_calloc(t, 1, sizeof(*j));
    j->result = (void *)(uintptr_t)0xBEEF;
    tk_future *h = ct_schedule(t, ex, job_fn, j, MS(1));
    assert_int_equal(tk_future_get_timeout(h, CONF_WAIT, NULL), TK_OK);
    result = NULL;
    assert_int_equal(tk_future_result_now(h, &result), TK_OK);
    assert_ptr_equal(result, j->result);
    assert_int_equal(tk_future_result_now(h, NULL), TK_OK);
    /* JDK exceptionNow(): "@throws IllegalStateException if ... the task
     * completed normally" */
    assert_int_equal(tk_future_exception_now(h, &status), TK_ESTATE);
}

/* JDK 19 Future.State.FAILED: "The task completed with an exception."
 * Future.exceptionNow(): "Returns the exception thrown by the task, without
 * waiting." A failed callback's non-zero status stands for the exception. */
static void state_is_failed_and_exception_now_gives_the_status(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    job *j = ct_calloc(t, 1, sizeof(*j));
    j->ret = 7;
    tk_future *f = ct_submit(t, ex, job_fn, j);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_state(f), TK_TASK_FAILED);
    int status = 0;
    assert_int_equal(tk_future_exception_now(f, &status), TK_OK);
    assert_int_equal(status, 7);
    void *result = (void *)&result;
    assert_int_equal(tk_future_result_now(f, &result), TK_ESTATE);
    assert_ptr_equal(result, (void *)&result);

    /* A periodic task is RUNNING between runs and FAILED once a run fails. */
    counter *c = counter_new(t);
    tk_future *p = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, counter_fn, c, 0, MS(5));
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    assert_int_equal(tk_future_state(p), TK_TASK_RUNNING);
    atomic_store(&c->ret, 9);
    assert_int_equal(tk_future_get_timeout(p, CONF_WAIT, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_state(p), TK_TASK_FAILED);
    assert_int_equal(tk_future_exception_now(p, &status), TK_OK);
    assert_int_equal(status, 9);
}

/* JDK 19 Future.State.CANCELLED: "The task was cancelled." FutureTask's
 * state() reports CANCELLED as soon as cancel() succeeds, even while the
 * run goes on. exceptionNow(): "@throws IllegalStateException if ... the task
 * was cancelled". */
static void state_is_cancelled_at_once_even_while_running(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    job *j = ct_calloc(t, 1, sizeof(*j));
    tk_future *q = ct_schedule(t, ex, job_fn, j, HOUR);
    assert_int_equal(tk_future_state(q), TK_TASK_RUNNING);
    assert_int_equal(tk_future_cancel(q, false), TK_OK);
    assert_int_equal(tk_future_state(q), TK_TASK_CANCELLED);

    gate *g = gate_new(t);
    tk_future *f = ct_submit(t, ex, gate_ignore_interrupt_fn, g);
    gate_wait_entered(g, 1);
    assert_int_equal(tk_future_cancel(f, true), TK_ERUNNING);
    assert_int_equal(tk_future_state(f), TK_TASK_CANCELLED);
    assert_int_equal(atomic_load(&g->left), 0); /* the run goes on */
    int status = 0;
    void *result = NULL;
    assert_int_equal(tk_future_exception_now(f, &status), TK_ESTATE);
    assert_int_equal(tk_future_result_now(f, &result), TK_ESTATE);
    gate_open(g);
    assert_true(wait_ge(&g->left, 1, CONF_WAIT));
    assert_int_equal(tk_future_state(f), TK_TASK_CANCELLED);
}

/* ---- aborting a blocked get ------------------------------------------------------ */

/* A thread blocked in get. */
typedef struct getter {
    tk_future *f;
    int64_t timeout_ns;
    atomic_int started;
    atomic_int done;
    atomic_int rc;
    pthread_t thread;
} getter;

static void *getter_main(void *arg) {
    getter *gt = arg;
    atomic_store(&gt->started, 1);
    atomic_store(&gt->rc, tk_future_get_timeout(gt->f, gt->timeout_ns, NULL));
    atomic_store(&gt->done, 1);
    return NULL;
}

static void getter_start(getter *gt, tk_future *f, int64_t timeout_ns) {
    gt->f = f;
    gt->timeout_ns = timeout_ns;
    atomic_store(&gt->done, 0);
    atomic_store(&gt->rc, 1);
    assert_int_equal(pthread_create(&gt->thread, NULL, getter_main, gt), 0);
    assert_true(wait_ge(&gt->started, 1, CONF_WAIT));
}

/* Aborts until the getter returns: whether it had begun to wait when one
 * abort came is a race the test does not control, but a blocked get must
 * return once an abort comes after it began. */
static bool abort_until_done(tk_future *f, getter *gt) {
    int64_t end = now_ns() + CONF_WAIT;
    while (!atomic_load(&gt->done)) {
        assert_int_equal(tk_future_abort_get(f), TK_OK);
        if (now_ns() >= end)
            return false;
        sleep_ns(MS(5));
    }
    return true;
}

/* Future.get(): "@throws InterruptedException if the current thread was
 * interrupted while waiting"; InterruptedException: "Thrown when a thread is
 * waiting, sleeping, or otherwise occupied, and the thread is interrupted,
 * either before or during the activity." Here the abort targets the waits on
 * one future; the task is not affected. */
static void abort_get_makes_blocked_gets_return_eintr(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    tk_future *f = ct_submit(t, ex, gate_fn, g);
    gate_wait_entered(g, 1);
    getter *a = ct_calloc(t, 1, sizeof(*a));
    getter *b = ct_calloc(t, 1, sizeof(*b));
    getter_start(a, f, -1);
    getter_start(b, f, HOUR);
    sleep_ns(MS(20));
    bool a_done = abort_until_done(f, a);
    bool b_done = abort_until_done(f, b);
    if (!a_done || !b_done)
        gate_open(g); /* so the threads can be joined before failing */
    pthread_join(a->thread, NULL);
    pthread_join(b->thread, NULL);
    assert_true(a_done && b_done);
    assert_int_equal(atomic_load(&a->rc), TK_EINTR);
    assert_int_equal(atomic_load(&b->rc), TK_EINTR);
    /* The task was not touched: still running, then it completes. */
    assert_int_equal(atomic_load(&g->left), 0);
    assert_int_equal(tk_future_state(f), TK_TASK_RUNNING);
    gate_open(g);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&g->interrupted), 0);
}

/* Java's interrupt targets the waiting thread; the abort targets the gets
 * already blocked: a get that begins after it waits as usual, and a done
 * future's outcome wins over an abort. */
static void abort_get_does_not_affect_later_gets(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    job *j = ct_calloc(t, 1, sizeof(*j));
    j->result = j;
    tk_future *f = ct_schedule(t, ex, job_fn, j, MS(300));
    assert_int_equal(tk_future_abort_get(f), TK_OK);
    assert_int_equal(tk_future_abort_get(f), TK_OK);
    int64_t t0 = now_ns();
    assert_int_equal(tk_future_get_timeout(f, MS(30), NULL), TK_ETIMEDOUT);
    assert_true(now_ns() - t0 >= MS(30));
    void *result = NULL;
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, &result), TK_OK);
    assert_ptr_equal(result, j);
    assert_int_equal(tk_future_abort_get(f), TK_OK);
    result = NULL;
    assert_int_equal(tk_future_get(f, &result), TK_OK);
    assert_ptr_equal(result, j);
    assert_int_equal(atomic_load(&j->runs), 1);
}

/* Many aborts and completions racing with many gets: every get returns
 * either the outcome or TK_EINTR, none stays blocked (no lost wake-up). */
static void abort_get_races_with_completion_without_lost_wakeups(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    enum { ROUNDS = 40, GETTERS = 3 };
    getter *gs = ct_calloc(t, GETTERS, sizeof(*gs));
    job *j = ct_calloc(t, 1, sizeof(*j));
    for (int r = 0; r < ROUNDS; r++) {
        tk_future *f = NULL;
        assert_int_equal(tk_executor_schedule(ex, job_fn, j, (r % 4) * TK_NS_PER_MS, &f), TK_OK);
        for (int i = 0; i < GETTERS; i++)
            getter_start(&gs[i], f, CONF_WAIT);
        if (r % 2 == 0)
            (void)tk_future_abort_get(f);
        int bad = 0;
        for (int i = 0; i < GETTERS; i++) {
            pthread_join(gs[i].thread, NULL);
            int rc = atomic_load(&gs[i].rc);
            if (rc != TK_OK && rc != TK_EINTR)
                bad++;
        }
        assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
        assert_int_equal(tk_future_release(f), TK_OK);
        assert_int_equal(bad, 0);
    }
}

/* ---- invokeAll -------------------------------------------------------------------- */

/* ExecutorService.invokeAll: "Executes the given tasks, returning a list of
 * Futures holding their status and results when all complete.
 * Future.isDone() is true for each element of the returned list." */
static void invoke_all_returns_every_future_done(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    enum { N = 8 };
    job *jobs = ct_calloc(t, N, sizeof(*jobs));
    tk_task_spec specs[N];
    for (int i = 0; i < N; i++) {
        jobs[i].result = &jobs[i];
        jobs[i].ret = i == 5 ? 3 : 0; /* one task fails */
        specs[i] = job_spec(&jobs[i], (i % 3) * TK_NS_PER_MS);
    }
    tk_future *fs[N];
    assert_int_equal(tk_executor_invoke_all(ex, specs, N, fs), TK_OK);
    for (int i = 0; i < N; i++)
        ct_track(t, fs[i]);
    for (int i = 0; i < N; i++) {
        assert_true(tk_future_is_done(fs[i]));
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
        assert_int_equal(atomic_load(&jobs[i].freed), 1); /* done: arg_free has run */
        if (i == 5) {
            int status = 0;
            assert_int_equal(tk_future_state(fs[i]), TK_TASK_FAILED);
            assert_int_equal(tk_future_exception_now(fs[i], &status), TK_OK);
            assert_int_equal(status, 3);
        } else {
            void *result = NULL;
            assert_int_equal(tk_future_state(fs[i]), TK_TASK_SUCCESS);
            assert_int_equal(tk_future_result_now(fs[i], &result), TK_OK);
            assert_ptr_equal(result, &jobs[i]);
        }
    }
    /* An empty list: nothing to do. */
    assert_int_equal(tk_executor_invoke_all(ex, NULL, 0, NULL), TK_OK);
}

/* Timed invokeAll: "Executes the given tasks, returning a list of Futures
 * holding their status and results when all complete or the timeout expires,
 * whichever happens first. ... Upon return, tasks that have not completed are
 * cancelled." */
static void invoke_all_timeout_cancels_what_is_not_done(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    job *quick = ct_calloc(t, 1, sizeof(*quick));
    job *late = ct_calloc(t, 1, sizeof(*late));
    gate *g = gate_new(t);
    quick->result = quick;
    tk_task_spec specs[3] = {job_spec(quick, 0), gate_spec(g), job_spec(late, HOUR)};
    tk_future *fs[3];
    int64_t t0 = now_ns();
    assert_int_equal(tk_executor_invoke_all_timeout(ex, specs, 3, MS(100), fs), TK_OK);
    int64_t took = now_ns() - t0;
    for (int i = 0; i < 3; i++)
        ct_track(t, fs[i]);
    assert_true(took >= MS(100));
    assert_true(took < CONF_WAIT);
    assert_int_equal(tk_future_state(fs[0]), TK_TASK_SUCCESS);
    assert_int_equal(tk_future_state(fs[2]), TK_TASK_CANCELLED);
    assert_int_equal(atomic_load(&late->runs), 0);
    assert_int_equal(atomic_load(&late->freed), 1);
    /* The gate had started (two threads) or was still queued; either way
     * it is cancelled, and a run in progress saw the interrupt. */
    assert_int_equal(tk_future_state(fs[1]), TK_TASK_CANCELLED);
    if (atomic_load(&g->entered) > 0)
        assert_true(wait_ge(&g->interrupted, 1, CONF_WAIT));
    assert_true(wait_ge(&g->freed, 1, CONF_WAIT));
    /* A timeout long enough changes nothing. */
    job *more = ct_calloc(t, 2, sizeof(*more));
    tk_task_spec two[2] = {job_spec(&more[0], 0), job_spec(&more[1], MS(2))};
    tk_future *fs2[2];
    assert_int_equal(tk_executor_invoke_all_timeout(ex, two, 2, CONF_WAIT, fs2), TK_OK);
    for (int i = 0; i < 2; i++) {
        ct_track(t, fs2[i]);
        assert_int_equal(tk_future_state(fs2[i]), TK_TASK_SUCCESS);
    }
}

/* A decorate hook that refuses the third task and every later one. */
static int refuse_third(tk_executor *ex, tk_task_spec *spec, void *ctx) {
    (void)ex;
    (void)spec;
    return atomic_fetch_add((atomic_int *)ctx, 1) >= 2 ? TK_ENOTSUP : TK_OK;
}

/* invokeAll: "@throws RejectedExecutionException if any task cannot be
 * scheduled for execution"; AbstractExecutorService cancels the futures it
 * already has before it throws. */
static void invoke_all_failing_part_way_cancels_what_it_scheduled(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    atomic_int *calls = ct_calloc(t, 1, sizeof(*calls));
    opt.hooks.decorate = refuse_third;
    opt.hooks.ctx = calls;
    tk_executor *ex = ct_create(t, &opt);
    enum { N = 4 };
    job *jobs = ct_calloc(t, N, sizeof(*jobs));
    tk_task_spec specs[N];
    for (int i = 0; i < N; i++)
        specs[i] = job_spec(&jobs[i], HOUR);
    tk_future *fs[N];
    for (int i = 0; i < N; i++)
        fs[i] = (tk_future *)&fs;
    assert_int_equal(tk_executor_invoke_all(ex, specs, N, fs), TK_ENOTSUP);
    for (int i = 0; i < N; i++)
        assert_null(fs[i]);
    /* the two scheduled tasks are cancelled (their arg_free ran); the
     * refused one and the last stay the caller's */
    assert_int_equal(atomic_load(&jobs[0].freed), 1);
    assert_int_equal(atomic_load(&jobs[1].freed), 1);
    assert_int_equal(atomic_load(&jobs[2].freed), 0);
    assert_int_equal(atomic_load(&jobs[3].freed), 0);
    assert_int_equal(stats_of(ex).cancelled_count, 2);
    assert_int_equal(atomic_load(calls), 3);
    /* A shut-down executor rejects the first task: nothing scheduled. */
    tk_executor *shut = ct_executor(t, 1);
    assert_int_equal(tk_executor_shutdown(shut), TK_OK);
    assert_int_equal(tk_executor_invoke_all(shut, specs, N, fs), TK_EREJECTED);
    assert_int_equal(tk_executor_invoke_any(shut, specs, N, NULL), TK_EREJECTED);
    for (int i = 0; i < N; i++)
        assert_null(fs[i]);
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&jobs[i].runs), 0);
}

/* ---- invokeAny -------------------------------------------------------------------- */

/* invokeAny: "Executes the given tasks, returning the result of one that has
 * completed successfully (i.e., without throwing an exception), if any do.
 * Upon normal or exceptional return, tasks that have not completed are
 * cancelled." */
static void invoke_any_returns_a_successful_result_and_cancels_the_rest(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    enum { N = 5 };
    job *jobs = ct_calloc(t, N, sizeof(*jobs));
    tk_task_spec specs[N];
    jobs[0].ret = 1; /* fails */
    jobs[1].ret = 2; /* fails */
    jobs[2].result = &jobs[2];
    specs[0] = job_spec(&jobs[0], 0);
    specs[1] = job_spec(&jobs[1], 0);
    specs[2] = job_spec(&jobs[2], MS(5));
    specs[3] = job_spec(&jobs[3], HOUR);
    specs[4] = job_spec(&jobs[4], HOUR);
    void *result = NULL;
    assert_int_equal(tk_executor_invoke_any(ex, specs, N, &result), TK_OK);
    assert_ptr_equal(result, &jobs[2]);
    /* The late tasks never ran; those that were scheduled were cancelled
     * (their arg_free ran), those that were not stay the caller's. */
    int scheduled_late = atomic_load(&jobs[3].freed) + atomic_load(&jobs[4].freed);
    assert_int_equal(atomic_load(&jobs[3].runs) + atomic_load(&jobs[4].runs), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
        assert_true(wait_ge(&jobs[i].freed, 1, CONF_WAIT));
    }
    assert_int_equal(stats_of(ex).cancelled_count, (uint64_t)scheduled_late);
}

/* invokeAny: "@throws ExecutionException if no task successfully completes" */
static void invoke_any_fails_when_every_task_fails(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    enum { N = 3 };
    job *jobs = ct_calloc(t, N, sizeof(*jobs));
    tk_task_spec specs[N];
    for (int i = 0; i < N; i++) {
        jobs[i].ret = 10 + i;
        specs[i] = job_spec(&jobs[i], i * TK_NS_PER_MS);
    }
    void *result = (void *)&result;
    assert_int_equal(tk_executor_invoke_any(ex, specs, N, &result), TK_ETASKFAILED);
    assert_ptr_equal(result, (void *)&result);
    for (int i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
        assert_int_equal(atomic_load(&jobs[i].freed), 1);
    }
    /* "@throws IllegalArgumentException if tasks is empty" */
    assert_int_equal(tk_executor_invoke_any(ex, specs, 0, &result), TK_EINVAL);
    /* A periodic task never completes by itself: refused, nothing runs. */
    tk_task_spec bad[2] = {job_spec(&jobs[0], 0), job_spec(&jobs[1], 0)};
    bad[1].kind = TK_TASK_FIXED_RATE;
    bad[1].period_ns = MS(1);
    tk_future *fs[2];
    assert_int_equal(tk_executor_invoke_any(ex, bad, 2, &result), TK_EINVAL);
    assert_int_equal(tk_executor_invoke_all(ex, bad, 2, fs), TK_EINVAL);
    assert_int_equal(atomic_load(&jobs[0].runs), 1);
}

/* invokeAny: "@throws ExecutionException if no task successfully
 * completes"; ExecutionException: "This exception can be inspected using the
 * Throwable.getCause() method." The JDK throws the last one it got;
 * invoke_any_cause names that task and gives its status. */
static void invoke_any_cause_names_the_last_failure_and_its_status(void **state) {
    ct *t = CT(state);
    /* One thread, deadlines more than a tick apart: the tasks end one after
     * the other in scheduling order on every engine. */
    tk_executor *ex = ct_executor(t, 1);
    enum { N = 4 };
    job *jobs = ct_calloc(t, N, sizeof(*jobs));
    tk_task_spec specs[N];
    for (int i = 0; i < N; i++) {
        jobs[i].ret = 20 + i;
        specs[i] = job_spec(&jobs[i], MS(5) * (i + 1));
    }
    void *result = (void *)&result;
    size_t index = 99;
    int status = 99;
    assert_int_equal(tk_executor_invoke_any_cause(ex, specs, N, -1, &result, &index, &status),
                     TK_ETASKFAILED);
    assert_ptr_equal(result, (void *)&result);
    assert_int_equal(index, N - 1);
    assert_int_equal(status, 20 + N - 1);
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
    /* A success names its task, with status 0; the outputs may be NULL. */
    job *mix = ct_calloc(t, 2, sizeof(*mix));
    mix[0].ret = 7;
    mix[1].result = &mix[1];
    tk_task_spec two[2] = {job_spec(&mix[0], 0), job_spec(&mix[1], 0)};
    assert_int_equal(tk_executor_invoke_any_cause(ex, two, 2, CONF_WAIT, &result, &index, &status),
                     TK_OK);
    assert_ptr_equal(result, &mix[1]);
    assert_int_equal(index, 1);
    assert_int_equal(status, 0);
    job *again = ct_calloc(t, 1, sizeof(*again));
    again->ret = 5;
    tk_task_spec one = job_spec(again, 0);
    assert_int_equal(tk_executor_invoke_any_cause(ex, &one, 1, -1, NULL, NULL, NULL),
                     TK_ETASKFAILED);
    /* A bad spec is named; nothing runs. */
    tk_task_spec bad[3] = {specs[0], specs[1], specs[2]};
    bad[2].fn = NULL;
    assert_int_equal(tk_executor_invoke_any_cause(ex, bad, 3, -1, &result, &index, &status),
                     TK_EINVAL);
    assert_int_equal(index, 2);
    assert_int_equal(status, 0);
    /* A task that could not be scheduled is named (shut down: rejected). */
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    job *late = ct_calloc(t, 1, sizeof(*late));
    tk_task_spec rejected = job_spec(late, 0);
    assert_int_equal(tk_executor_invoke_any_cause(ex, &rejected, 1, -1, &result, &index, &status),
                     TK_EREJECTED);
    assert_int_equal(index, 0);
    assert_int_equal(status, 0);
    assert_int_equal(atomic_load(&jobs[0].runs), 1);
}

/* A cancelled task's get() throws CancellationException, which invokeAny
 * records as its failure ("the last exception we got"): the cause names the
 * task, with no status. Timed invokeAny: "@throws TimeoutException if the
 * given timeout elapses before any task successfully completes": about no
 * task. */
static void invoke_any_cause_of_a_cancel_or_a_timeout(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    job *j = ct_calloc(t, 2, sizeof(*j));
    tk_task_spec specs[2] = {job_spec(&j[0], HOUR), job_spec(&j[1], HOUR)};
    size_t index = 99;
    int status = 99;
    assert_int_equal(tk_executor_invoke_any_cause(ex, specs, 2, MS(20), NULL, &index, &status),
                     TK_ETIMEDOUT);
    assert_int_equal(index, 2);
    assert_int_equal(status, 0);
    /* A task that cancels itself ends the call with TK_ECANCELLED. */
    tk_task_spec self = job_spec(&j[0], 0);
    self.fn = cancel_self_fn;
    assert_int_equal(tk_executor_invoke_any_cause(ex, &self, 1, CONF_WAIT, NULL, &index, &status),
                     TK_ECANCELLED);
    assert_int_equal(index, 0);
    assert_int_equal(status, 0);
}

/* Timed invokeAny: "@throws TimeoutException if the given timeout elapses
 * before any task successfully completes"; the tasks not completed are
 * cancelled. */
static void invoke_any_timeout_times_out_and_cancels_every_task(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    enum { N = 3 };
    job *jobs = ct_calloc(t, N, sizeof(*jobs));
    tk_task_spec specs[N];
    for (int i = 0; i < N; i++)
        specs[i] = job_spec(&jobs[i], HOUR);
    void *result = (void *)&result;
    int64_t t0 = now_ns();
    assert_int_equal(tk_executor_invoke_any_timeout(ex, specs, N, MS(50), &result), TK_ETIMEDOUT);
    int64_t took = now_ns() - t0;
    assert_true(took >= MS(50));
    assert_true(took < CONF_WAIT);
    assert_ptr_equal(result, (void *)&result);
    for (int i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&jobs[i].runs), 0);
        assert_int_equal(atomic_load(&jobs[i].freed), 1);
    }
    assert_int_equal(stats_of(ex).cancelled_count, N);
    /* A task that succeeds within the timeout wins. */
    job *ok = ct_calloc(t, 1, sizeof(*ok));
    ok->result = ok;
    tk_task_spec one = job_spec(ok, MS(2));
    assert_int_equal(tk_executor_invoke_any_timeout(ex, &one, 1, CONF_WAIT, &result), TK_OK);
    assert_ptr_equal(result, ok);
}

/* An invoke_any call on its own thread. */
typedef struct any_call {
    tk_executor *ex;
    tk_task_spec specs[2];
    atomic_int rc;
    atomic_int done;
} any_call;

static void *any_call_main(void *arg) {
    any_call *c = arg;
    atomic_store(&c->rc, tk_executor_invoke_any(c->ex, c->specs, 2, NULL));
    atomic_store(&c->done, 1);
    return NULL;
}

/* Tasks cancelled from elsewhere (here by shutdown_now) count as failures
 * (a cancelled future's get throws CancellationException, which invokeAny
 * records as the failure), so invoke_any ends instead of waiting for ever. */
static void invoke_any_ends_when_its_tasks_are_cancelled_elsewhere(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    job *j = ct_calloc(t, 2, sizeof(*j));
    any_call *c = ct_calloc(t, 1, sizeof(*c));
    c->ex = ex;
    c->specs[0] = job_spec(&j[0], HOUR);
    c->specs[1] = job_spec(&j[1], HOUR);
    atomic_store(&c->rc, 1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, any_call_main, c), 0);
    /* both tasks scheduled, then the pool stops: they are handed back */
    bool queued = wait_stat(ex, st_queue, 2, CONF_WAIT) == 2;
    long dropped = queued ? tk_executor_shutdown_now(ex, NULL, NULL) : 0;
    if (!queued)
        (void)tk_executor_shutdown_now(ex, NULL, NULL);
    bool ended = wait_ge(&c->done, 1, CONF_WAIT);
    pthread_join(th, NULL); /* after shutdown_now the call cannot block */
    assert_true(queued);
    assert_int_equal(dropped, 2);
    assert_true(ended);
    assert_int_equal(atomic_load(&c->rc), TK_ECANCELLED);
    assert_int_equal(atomic_load(&j[0].runs) + atomic_load(&j[1].runs), 0);
}

CONF_TABLE(invoke,
           {"future state is RUNNING until the task succeeds; result_now only then",
            state_is_running_until_the_task_succeeds},
           {"future state is FAILED and exception_now gives the callback's status",
            state_is_failed_and_exception_now_gives_the_status},
           {"future state is CANCELLED at once, even while the run goes on",
            state_is_cancelled_at_once_even_while_running},
           {"abort_get makes blocked gets return TK_EINTR without touching the task",
            abort_get_makes_blocked_gets_return_eintr},
           {"abort_get does not affect gets that begin later, nor a done future",
            abort_get_does_not_affect_later_gets},
           {"abort_get racing with completion loses no wake-up",
            abort_get_races_with_completion_without_lost_wakeups},
           {"invoke_all returns every future done", invoke_all_returns_every_future_done},
           {"invoke_all with a timeout cancels what is not done",
            invoke_all_timeout_cancels_what_is_not_done},
           {"invoke_all failing part-way cancels what it scheduled",
            invoke_all_failing_part_way_cancels_what_it_scheduled},
           {"invoke_any returns a successful result and cancels the rest",
            invoke_any_returns_a_successful_result_and_cancels_the_rest},
           {"invoke_any fails when every task fails", invoke_any_fails_when_every_task_fails},
           {"invoke_any_cause names the last failure and its status",
            invoke_any_cause_names_the_last_failure_and_its_status},
           {"invoke_any_cause of a cancel names the task; of a timeout, none",
            invoke_any_cause_of_a_cancel_or_a_timeout},
           {"invoke_any with a timeout times out and cancels every task",
            invoke_any_timeout_times_out_and_cancels_every_task},
           {"invoke_any ends when its tasks are cancelled elsewhere",
            invoke_any_ends_when_its_tasks_are_cancelled_elsewhere});
