/* SPDX-License-Identifier: MIT */
/* Conformance: the counters with the JDK's meanings (task count, completed
 * count, accepted), nothing hidden in a worker's batch, and access to the
 * queue (contains, remove, the visitor). */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

/* The identities documented at tk_executor_stats, checked when nothing is in
 * flight (every worker idle or inside a callback). */
static void assert_identities(tk_executor *ex) {
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.task_count, s.completed_count + s.active_count + s.queue_size);
    assert_int_equal(s.accepted_count + s.requeued_count, s.completed_count + s.active_count +
                                                              s.queue_size + s.removed_count +
                                                              s.handed_back_count);
}

static bool is_terminated(void *ex) {
    return tk_executor_is_terminated(ex);
}

/* A task spec due at an absolute deadline. */
static tk_task_spec at(tk_task_fn fn, void *arg, int64_t deadline_ns) {
    tk_task_spec s = {.fn = fn,
                      .arg = arg,
                      .kind = TK_TASK_ONE_SHOT,
                      .delay_ns = deadline_ns,
                      .flags = TK_TASK_AT_DEADLINE};
    return s;
}

typedef struct drop_log {
    int n;
    void *args[16];
    int64_t deadlines[16];
} drop_log;

static void log_drop(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    (void)arg_free;
    drop_log *l = ctx;
    if (l->n < 16) {
        l->args[l->n] = task->arg;
        l->deadlines[l->n] = task->deadline_ns;
    }
    l->n++;
}

typedef struct visit_log {
    int n;
    int stop_after; /* 0: never */
    void *args[16];
    uint64_t seqs[16];
    int64_t deadlines[16];
    tk_executor *ex;
    int stats_ok; /* calls into the executor from the visitor that returned */
} visit_log;

static bool log_visit(const tk_task_info *task, void *ctx) {
    visit_log *l = ctx;
    if (l->n < 16) {
        l->args[l->n] = task->arg;
        l->seqs[l->n] = task->seq;
        l->deadlines[l->n] = task->deadline_ns;
    }
    l->n++;
    if (l->ex != NULL) {
        /* No executor lock is held: calls that take them return. */
        tk_executor_stats s;
        if (tk_executor_stats_get(l->ex, &s) == TK_OK && tk_executor_purge(l->ex) >= 0)
            l->stats_ok++;
    }
    return l->stop_after == 0 || l->n < l->stop_after;
}

/* ScheduledThreadPoolExecutor.shutdownNow(): "Attempts to stop all actively
 * executing tasks, halts the processing of waiting tasks, and returns a list
 * of the tasks that were awaiting execution." and ThreadPoolExecutor.getQueue():
 * "Returns the task queue used by this executor."
 * Due tasks that the worker of a one-thread pool took in one batch behind a
 * running task are still awaiting execution: they count in the queue size,
 * contains() and the visitor see them, and shutdown_now() hands them back,
 * in deadline order with the engine's. */
static void due_tasks_behind_a_running_one_stay_queued(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    counter *c[6];
    tk_future *f[6];
    for (int i = 0; i < 6; i++)
        c[i] = counter_new(t);
    /* The gate and four tasks share one deadline: the worker takes the five
     * together (in one batch where the engine batches) and runs the gate. */
    int64_t due = now_ns() + MS(300);
    tk_task_spec s = at(gate_fn, g, due);
    assert_int_equal(tk_executor_schedule_spec(ex, &s, NULL), TK_OK);
    for (int i = 1; i <= 4; i++) {
        s = at(counter_fn, c[i], due);
        f[i] = ct_schedule_spec(t, ex, &s);
    }
    gate_wait_entered(g, 1);
    /* one due before them, offered now (the worker is busy), one far off */
    s = at(counter_fn, c[0], due - 1);
    f[0] = ct_schedule_spec(t, ex, &s);
    s = at(counter_fn, c[5], now_ns() + 10 * TK_NS_PER_S);
    f[5] = ct_schedule_spec(t, ex, &s);

    tk_executor_stats st = stats_of(ex);
    assert_int_equal(st.active_count, 1);
    assert_int_equal(st.queue_size, 6);
    assert_identities(ex);
    for (int i = 0; i < 6; i++)
        assert_true(tk_executor_contains(ex, f[i]));

    visit_log v = {0};
    assert_int_equal(tk_executor_visit_queue(ex, log_visit, &v), 6);
    assert_int_equal(v.n, 6);
    for (int i = 0; i < 6; i++)
        assert_ptr_equal(v.args[i], c[i]); /* (deadline, seq) order */

    drop_log d = {0};
    assert_int_equal(tk_executor_shutdown_now(ex, log_drop, &d), 6);
    assert_int_equal(d.n, 6);
    for (int i = 0; i < 6; i++) {
        assert_ptr_equal(d.args[i], c[i]);
        assert_true(tk_future_is_cancelled(f[i]));
        assert_false(tk_executor_contains(ex, f[i]));
    }
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    for (int i = 0; i < 6; i++)
        assert_int_equal(atomic_load(&c[i]->runs), 0);
    st = stats_of(ex);
    assert_int_equal(st.queue_size, 0);
    assert_int_equal(st.handed_back_count, 6);
    assert_int_equal(st.accepted_count, 7);
    assert_int_equal(st.completed_count, 1); /* the gate */
    assert_int_equal(st.task_count, st.completed_count);
    assert_identities(ex);
}

/* ThreadPoolExecutor.getTaskCount(): "Returns the approximate total number of
 * tasks that have ever been scheduled for execution." The JDK computes it as
 * completed + active + queued, and so does timerkit (exactly, when nothing is
 * in flight); tasks ever accepted are accepted_count. */
static void task_count_is_completed_plus_running_plus_queued(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    assert_int_equal(tk_executor_execute(ex, gate_fn, g), TK_OK);
    gate_wait_entered(g, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tk_executor_schedule(ex, counter_fn, c, 10 * TK_NS_PER_S, NULL), TK_OK);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.completed_count, 1);
    assert_int_equal(s.active_count, 1);
    assert_int_equal(s.queue_size, 3);
    assert_int_equal(s.task_count, 5);
    assert_int_equal(s.accepted_count, 5);
    assert_identities(ex);
    gate_open(g);
    assert_int_equal(wait_stat(ex, st_active, 0, CONF_WAIT), 0);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK); /* the delayed ones still run */
    assert_int_equal(tk_executor_set_execute_delayed_after_shutdown(ex, false), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    s = stats_of(ex);
    assert_int_equal(s.completed_count, 2);
    assert_int_equal(s.removed_count, 3); /* swept by the shutdown policy */
    assert_int_equal(s.task_count, s.completed_count);
    assert_identities(ex);
}

static int fail_after_three(tk_run *run, void *arg) {
    counter *c = arg;
    int n = atomic_fetch_add(&c->runs, 1) + 1;
    (void)run;
    return n >= 3 ? 7 : 0;
}

/* ThreadPoolExecutor.getCompletedTaskCount(): "Returns the approximate total
 * number of tasks that have completed execution." As in the JDK's worker,
 * each run of a periodic task completes one task, and its re-queue is a new
 * entry (requeued_count). */
static void every_periodic_run_completes_a_task(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f;
    f = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, fail_after_three, c, 0, MS(2));
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.accepted_count, 1);
    assert_int_equal(s.requeued_count, 2);
    assert_int_equal(s.completed_count, 3);
    assert_int_equal(s.runs, 3);
    assert_int_equal(s.task_count, 3);
    assert_identities(ex);
}

/* The reading of getCompletedTaskCount(): it counts cancelled tasks a
 * worker dropped while remove-on-cancel was off (the JDK's worker "runs"
 * them, and the run does nothing), not those taken out of the queue.
 * ScheduledThreadPoolExecutor: "By default, such a cancelled task is not
 * automatically removed from the work queue until its delay elapses." */
static void completed_counts_dropped_cancelled_tasks_not_removed_ones(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f;
    f = ct_schedule(t, ex, counter_fn, c, MS(300));
    assert_int_equal(tk_future_cancel(f, false), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, 1); /* still queued */
    assert_true(tk_executor_contains(ex, f));     /* in the queue, as in the JDK */
    /* its deadline passes: the worker takes it and drops it */
    int64_t end = now_ns() + CONF_WAIT;
    while (stats_of(ex).completed_count < 1 && now_ns() < end)
        sleep_ns(MS(1));
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.completed_count, 1);
    assert_int_equal(s.runs, 0);
    assert_int_equal(s.queue_size, 0);
    assert_int_equal(s.removed_count, 0);
    assert_identities(ex);

    assert_int_equal(tk_executor_set_remove_on_cancel(ex, true), TK_OK);
    tk_future *g;
    g = ct_schedule(t, ex, counter_fn, c, MS(300));
    assert_int_equal(tk_future_cancel(g, false), TK_OK);
    s = stats_of(ex);
    assert_int_equal(s.queue_size, 0);
    assert_int_equal(s.removed_count, 1);
    sleep_ns(MS(400));
    assert_int_equal(stats_of(ex).completed_count, 1);
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    s = stats_of(ex);
    assert_int_equal(s.task_count, s.completed_count);
    assert_int_equal(s.accepted_count, 2);
    assert_identities(ex);
}

/* ScheduledThreadPoolExecutor: "By default, such a cancelled task is not
 * automatically removed from the work queue until its delay elapses.";
 * purge(): "Tries to remove from the work queue all Future tasks that have
 * been cancelled."; setRemoveOnCancelPolicy(true): "cancelled tasks should be
 * immediately removed from the work queue at time of cancellation". So
 * getQueue().contains(f) is true for a cancelled task until it leaves the
 * queue, and contains() answers the same; whether it will run is
 * tk_future_is_done(). */
static void contains_sees_a_cancelled_task_until_it_leaves_the_queue(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_future *f = ct_schedule(t, ex, counter_fn, c, 10 * TK_NS_PER_S);
    tk_future *g = ct_schedule(t, ex, counter_fn, c, 10 * TK_NS_PER_S);
    assert_int_equal(tk_future_cancel(f, false), TK_OK);
    assert_true(tk_executor_contains(ex, f));
    assert_true(tk_future_is_done(f)); /* it will not run */
    assert_true(tk_executor_contains(ex, g));
    assert_int_equal(stats_of(ex).queue_size, 2);
    /* the visitor shows what will run (it cannot show a cancel mark) */
    visit_log v = {0};
    assert_int_equal(tk_executor_visit_queue(ex, log_visit, &v), 1);
    assert_ptr_equal(v.args[0], c);
    assert_int_equal(tk_executor_purge(ex), 1);
    assert_false(tk_executor_contains(ex, f));
    assert_true(tk_executor_contains(ex, g));
    assert_int_equal(stats_of(ex).queue_size, 1);
    /* with remove-on-cancel the task leaves at once */
    assert_int_equal(tk_executor_set_remove_on_cancel(ex, true), TK_OK);
    assert_int_equal(tk_future_cancel(g, false), TK_OK);
    assert_false(tk_executor_contains(ex, g));
    assert_int_equal(stats_of(ex).queue_size, 0);
    /* a cancel while remove-on-cancel is off, then the policy turned on: the
     * task stays until purged (turning the policy on removes nothing) */
    assert_int_equal(tk_executor_set_remove_on_cancel(ex, false), TK_OK);
    tk_future *h = ct_schedule(t, ex, counter_fn, c, 10 * TK_NS_PER_S);
    assert_int_equal(tk_future_cancel(h, true), TK_OK);
    assert_int_equal(tk_executor_set_remove_on_cancel(ex, true), TK_OK);
    assert_true(tk_executor_contains(ex, h));
    /* a removed task is out of the queue */
    tk_future *r = ct_schedule(t, ex, counter_fn, c, 10 * TK_NS_PER_S);
    assert_int_equal(tk_executor_remove(ex, r), TK_OK);
    assert_false(tk_executor_contains(ex, r));
    assert_int_equal(tk_executor_purge(ex), 1);
    assert_false(tk_executor_contains(ex, h));
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_identities(ex);
}

/* ThreadPoolExecutor.remove(Runnable): "Removes this task from the executor's
 * internal queue if it is present, thus causing it not to be run if it has
 * not already started." Unlike the JDK, the removed task's future completes
 * (get() says TK_EREMOVED), so that nobody waits for ever. */
static void remove_takes_a_queued_task_out_without_cancelling_it(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    counter *c = counter_new(t);
    tk_task_spec s = counter_spec(c, TK_TASK_ONE_SHOT, MS(1000), 0);
    tk_future *f;
    f = ct_schedule_spec(t, ex, &s);
    assert_true(tk_executor_contains(ex, f));
    assert_int_equal(tk_executor_remove(ex, f), TK_OK);
    assert_int_equal(atomic_load(&c->freed), 1); /* arg_free ran, once */
    assert_false(tk_executor_contains(ex, f));
    assert_true(tk_future_is_done(f));
    assert_true(tk_future_is_cancelled(f));
    assert_int_equal(tk_future_get_timeout(f, 0, NULL), TK_EREMOVED);
    assert_int_equal(tk_future_get(f, NULL), TK_EREMOVED);
    /* JDK 19 Future.state(): a removed task never ran; it reads as cancelled */
    assert_int_equal(tk_future_state(f), TK_TASK_CANCELLED);
    assert_int_equal(tk_future_cancel(f, true), TK_EDONE);
    assert_int_equal(tk_executor_remove(ex, f), TK_ENOENT);
    tk_executor_stats st = stats_of(ex);
    assert_int_equal(st.queue_size, 0);
    assert_int_equal(st.removed_count, 1);
    assert_int_equal(st.cancelled_count, 0); /* not a cancel */
    assert_identities(ex);
    sleep_ns(MS(1200));
    assert_int_equal(atomic_load(&c->runs), 0);
    assert_int_equal(atomic_load(&c->freed), 1);

    /* a periodic task, between runs */
    tk_future *p;
    p = ct_schedule_periodic(t, ex, TK_TASK_FIXED_DELAY, counter_fn, c, TK_NS_PER_S, MS(50));
    assert_int_equal(tk_executor_remove(ex, p), TK_OK);
    assert_int_equal(tk_future_get_timeout(p, CONF_WAIT, NULL), TK_EREMOVED);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, CONF_WAIT), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 0);
    st = stats_of(ex);
    assert_int_equal(st.task_count, st.completed_count);
    assert_identities(ex);
}

/* remove() "if it has not already started": a running or finished task is
 * not removed, and a future of another executor is refused. */
static void remove_leaves_running_and_finished_tasks_alone(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    tk_executor *other = ct_executor(t, 1);
    gate *g = gate_new(t);
    counter *c = counter_new(t);
    tk_future *run, *done, *far;
    done = ct_submit(t, ex, counter_fn, c);
    assert_int_equal(tk_future_get_timeout(done, CONF_WAIT, NULL), TK_OK);
    run = ct_submit(t, ex, gate_fn, g);
    gate_wait_entered(g, 1);
    assert_false(tk_executor_contains(ex, run));
    assert_false(tk_executor_contains(ex, done));
    assert_int_equal(tk_executor_remove(ex, run), TK_ENOENT);
    assert_int_equal(tk_executor_remove(ex, done), TK_ENOENT);
    far = ct_schedule(t, other, counter_fn, c, 10 * TK_NS_PER_S);
    assert_false(tk_executor_contains(ex, far));
    assert_true(tk_executor_contains(other, far));
    assert_int_equal(tk_executor_remove(ex, far), TK_EINVAL);
    assert_true(tk_executor_contains(other, far));
    gate_open(g);
    assert_int_equal(tk_future_get_timeout(run, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 1);
}

static void timer_noop(tk_timer *tm) {
    (void)tm;
}

/* ThreadPoolExecutor.getQueue(): "Access to the task queue is intended
 * primarily for debugging and monitoring." The visitor gives the queued
 * tasks in the order they would start (the JDK's iterator does not promise
 * it), skips embedded timers and cancelled tasks, runs with no executor
 * lock held, and stops when asked. */
static void visitor_walks_queued_tasks_in_deadline_order(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    counter *c[4];
    tk_future *f[4];
    /* far enough that nothing falls due while the test runs, even on a
     * machine loaded with sanitized tests */
    int64_t base = now_ns() + 60 * TK_NS_PER_S;
    int64_t offsets[4] = {MS(300), MS(100), MS(200), MS(100)}; /* 1 and 3 tie */
    for (int i = 0; i < 4; i++) {
        c[i] = counter_new(t);
        tk_task_spec s = at(counter_fn, c[i], base + offsets[i]);
        f[i] = ct_schedule_spec(t, ex, &s);
    }
    tk_timer *tm = ct_calloc(t, 1, sizeof(*tm));
    assert_int_equal(tk_timer_init(tm, timer_noop), TK_OK);
    assert_int_equal(tk_timer_start_at(ex, tm, base), TK_OK);
    tk_future *cancelled;
    cancelled = ct_schedule(t, ex, counter_fn, c[0], 30 * TK_NS_PER_S);
    assert_int_equal(tk_future_cancel(cancelled, false), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, 6); /* the timer and the cancelled task count */

    visit_log v = {.ex = ex};
    assert_int_equal(tk_executor_visit_queue(ex, log_visit, &v), 4);
    assert_int_equal(v.n, 4);
    assert_int_equal(v.stats_ok, 4);
    void *want[4] = {c[1], c[3], c[2], c[0]};
    for (int i = 0; i < 4; i++) {
        assert_ptr_equal(v.args[i], want[i]);
        if (i > 0)
            assert_true(v.deadlines[i - 1] < v.deadlines[i] ||
                        (v.deadlines[i - 1] == v.deadlines[i] && v.seqs[i - 1] < v.seqs[i]));
    }
    assert_int_equal(stats_of(ex).queue_size, 5); /* the visitor's purge() dropped one */

    visit_log two = {.stop_after = 2};
    assert_int_equal(tk_executor_visit_queue(ex, log_visit, &two), 2);
    assert_int_equal(two.n, 2);

    assert_int_equal(tk_executor_remove(ex, f[3]), TK_OK);
    visit_log after = {0};
    assert_int_equal(tk_executor_visit_queue(ex, log_visit, &after), 3);
    assert_ptr_equal(after.args[0], c[1]);
    assert_int_equal(tk_timer_stop(ex, tm), TK_OK);
    assert_identities(ex);
}

/* ThreadPoolExecutor.getQueue(): "Returns the task queue used by this
 * executor." An idle executor's queue, and a terminated one's, is empty: the
 * visitor makes no call. */
static void visitor_on_an_empty_queue_makes_no_call(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    visit_log v = {0};
    assert_int_equal(tk_executor_visit_queue(ex, log_visit, &v), 0);
    assert_int_equal(v.n, 0);
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_true(wait_for(is_terminated, ex, CONF_WAIT));
    assert_int_equal(tk_executor_visit_queue(ex, log_visit, &v), 0);
}

/* ThreadPoolExecutor.remove(Runnable): "Removes this task from the executor's
 * internal queue if it is present, thus causing it not to be run if it has
 * not already started." A due task waiting in a worker's batch has not
 * started: remove() reaches it there, it never runs, and the others of the
 * batch still do, in order. */
static void remove_reaches_a_task_waiting_in_a_batch(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    gate *g = gate_new(t);
    counter *c[4];
    tk_future *f[4];
    int64_t due = now_ns() + MS(300);
    tk_task_spec s = at(gate_fn, g, due);
    assert_int_equal(tk_executor_schedule_spec(ex, &s, NULL), TK_OK);
    for (int i = 0; i < 4; i++) {
        c[i] = counter_new(t);
        s = at(counter_fn, c[i], due);
        f[i] = ct_schedule_spec(t, ex, &s);
    }
    gate_wait_entered(g, 1);
    assert_int_equal(tk_executor_remove(ex, f[2]), TK_OK);
    assert_int_equal(tk_executor_remove(ex, f[3]), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, 2);
    assert_false(tk_executor_contains(ex, f[2]));
    assert_true(tk_executor_contains(ex, f[1]));
    assert_identities(ex);
    gate_open(g);
    assert_int_equal(tk_future_get_timeout(f[1], CONF_WAIT, NULL), TK_OK);
    assert_int_equal(tk_future_get_timeout(f[0], CONF_WAIT, NULL), TK_OK);
    assert_int_equal(tk_future_get(f[2], NULL), TK_EREMOVED);
    assert_int_equal(wait_stat(ex, st_active, 0, CONF_WAIT), 0);
    assert_int_equal(atomic_load(&c[2]->runs), 0);
    assert_int_equal(atomic_load(&c[3]->runs), 0);
    assert_true(atomic_load(&c[0]->first_start) <= atomic_load(&c[1]->first_start));
    /* the worker counts a task completed just after its future shows done */
    assert_int_equal(wait_stat(ex, st_completed, 3, CONF_WAIT), 3);
    tk_executor_stats st = stats_of(ex);
    assert_int_equal(st.queue_size, 0);
    assert_int_equal(st.completed_count + st.removed_count, 5);
    assert_identities(ex);
}

CONF_TABLE(queue,
           {"keeps due tasks taken behind a running one queued, and hands them back",
            due_tasks_behind_a_running_one_stay_queued},
           {"task count is completed plus running plus queued",
            task_count_is_completed_plus_running_plus_queued},
           {"every periodic run completes a task", every_periodic_run_completes_a_task},
           {"completed counts dropped cancelled tasks, not removed ones",
            completed_counts_dropped_cancelled_tasks_not_removed_ones},
           {"contains sees a cancelled task until it leaves the queue",
            contains_sees_a_cancelled_task_until_it_leaves_the_queue},
           {"remove takes a queued task out without cancelling it",
            remove_takes_a_queued_task_out_without_cancelling_it},
           {"remove leaves running and finished tasks alone",
            remove_leaves_running_and_finished_tasks_alone},
           {"visitor walks queued tasks in deadline order",
            visitor_walks_queued_tasks_in_deadline_order},
           {"visitor on an empty queue makes no call", visitor_on_an_empty_queue_makes_no_call},
           {"remove reaches a task waiting in a batch", remove_reaches_a_task_waiting_in_a_batch});
