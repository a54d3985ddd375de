/* SPDX-License-Identifier: MIT */
/* Conformance: slack (a timerkit extension, issue 28; no JDK counterpart).
 * A task or timer with slack may start anywhere in [deadline, deadline +
 * slack]: never early, never past the window by more than the engine's
 * precision and the machine's noise, in (deadline, seq) order, periodic
 * kinds keeping their rate or delay. Which slack a task gets: its own under
 * TK_TASK_SLACK, else the executor's default_slack_ns; a timer's is its
 * own. The coalescing case (one wake-up for many windows) runs only on
 * engines that say they use slack (TK_QUEUE_CAP_SLACK); an engine without
 * it hands every node out at the start of its window, which every other
 * case here accepts.
 *
 * Each case quotes the header sentence it checks. Bounds are generous: a
 * window of tens of milliseconds, and CONF_LATE on top for a loaded
 * machine. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

/* A log of runs in start order; slots published through `done`. */
typedef struct slog {
    atomic_int n, done;
    int cap;
    int64_t *start, *end, *deadline;
    int *id;
} slog;

typedef struct stask {
    slog *log;
    int id;
} stask;

static slog *slog_new(ct *t, int cap) {
    slog *l = ct_calloc(t, 1, sizeof(*l));
    l->cap = cap;
    l->start = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    l->end = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    l->deadline = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    l->id = ct_calloc(t, (size_t)cap, sizeof(int));
    return l;
}

static stask *stasks_new(ct *t, slog *l, int n) {
    stask *s = ct_calloc(t, (size_t)n, sizeof(*s));
    for (int i = 0; i < n; i++) {
        s[i].log = l;
        s[i].id = i;
    }
    return s;
}

static int slog_fn(tk_run *run, void *arg) {
    int64_t now = now_ns();
    stask *s = arg;
    slog *l = s->log;
    const tk_task_info *info = tk_run_info(run);
    int i = atomic_fetch_add(&l->n, 1);
    if (i < l->cap) {
        l->start[i] = now;
        l->deadline[i] = info != NULL ? info->deadline_ns : INT64_MIN;
        l->id[i] = s->id;
        l->end[i] = now_ns();
    }
    atomic_fetch_add_explicit(&l->done, 1, memory_order_release);
    return 0;
}

/* A spec for slog_fn on s; slack < 0: without TK_TASK_SLACK. */
static tk_task_spec slack_spec(stask *s, tk_task_kind kind, int64_t delay, int64_t period,
                               unsigned flags, int64_t slack) {
    tk_task_spec spec = {.fn = slog_fn,
                         .arg = s,
                         .kind = kind,
                         .delay_ns = delay,
                         .period_ns = period,
                         .flags = flags};
    if (slack >= 0) {
        spec.flags |= TK_TASK_SLACK;
        spec.slack_ns = slack;
    }
    return spec;
}

/* Every logged run started at or after its deadline and no later than the
 * end of its window plus CONF_LATE. */
static void check_windows(const slog *l, int n, const int64_t *slack_of_id) {
    for (int i = 0; i < n; i++) {
        int64_t late = l->start[i] - l->deadline[i];
        if (late < 0 || late > slack_of_id[l->id[i]] + CONF_LATE)
            print_error("run %d (task %d): %lld ns after its deadline, slack %lld ns\n", i,
                        l->id[i], (long long)late, (long long)slack_of_id[l->id[i]]);
        assert_true(late >= 0);
        assert_true(late <= slack_of_id[l->id[i]] + CONF_LATE);
    }
}

/* executor.h, tk_task_spec.slack_ns: "A run due at d starts at some instant
 * in [d, d + slack_ns] (plus the engine's precision and the OS's wake-up),
 * never before d". Two workers, deadlines over 40 ms, slacks of 0 to 40 ms. */
static void never_starts_before_its_deadline_nor_after_its_window(void **state) {
    ct *t = CT(state);
    enum { N = 200 };
    tk_executor *ex = ct_executor(t, 2);
    slog *l = slog_new(t, N);
    stask *s = stasks_new(t, l, N);
    int64_t *slack = ct_calloc(t, N, sizeof(int64_t));
    uint32_t seed = 2028;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        int64_t delay = (int64_t)((seed >> 8) % 40000) * TK_NS_PER_US;
        slack[i] = (int64_t)(i % 5) * MS(10);
        tk_task_spec spec = slack_spec(&s[i], TK_TASK_ONE_SHOT, delay, 0, 0, slack[i]);
        assert_int_equal(tk_executor_schedule_spec(ex, &spec, NULL), TK_OK);
    }
    assert_true(wait_ge(&l->done, N, CONF_WAIT));
    check_windows(l, N, slack);
}

/* queue.h, "Slack": "nodes with equal deadlines still leave in seq order,
 * whatever their slacks". One worker, one instant, slacks that differ. */
static void equal_deadlines_run_in_submission_order_whatever_their_slack(void **state) {
    ct *t = CT(state);
    enum { N = 300 };
    tk_executor *ex = ct_executor(t, 1);
    slog *l = slog_new(t, N);
    stask *s = stasks_new(t, l, N);
    int64_t *slack = ct_calloc(t, N, sizeof(int64_t));
    int64_t d = now_ns() + MS(100);
    for (int i = 0; i < N; i++) {
        slack[i] = (int64_t)((i * 7) % 5) * MS(15); /* the slacks do not grow with seq */
        tk_task_spec spec =
            slack_spec(&s[i], TK_TASK_ONE_SHOT, d, 0, TK_TASK_AT_DEADLINE, slack[i]);
        assert_int_equal(tk_executor_schedule_spec(ex, &spec, NULL), TK_OK);
    }
    assert_true(wait_ge(&l->done, N, CONF_WAIT));
    for (int i = 0; i < N; i++) {
        if (l->id[i] != i)
            print_error("run %d is task %d\n", i, l->id[i]);
        assert_int_equal(l->id[i], i);
        assert_int_equal(l->deadline[i], d);
    }
    check_windows(l, N, slack);
}

/* executor.h, tk_task_spec.slack_ns: "Periodic tasks keep their rate or
 * delay: run k of a fixed-rate task is still due at first + k * period, and
 * each run has its own window." */
static void fixed_rate_with_slack_keeps_its_rate(void **state) {
    ct *t = CT(state);
    enum { RUNS = 6 };
    const int64_t period = MS(25), sl = MS(20);
    tk_executor *ex = ct_executor(t, 1);
    slog *l = slog_new(t, RUNS + 8);
    stask *s = stasks_new(t, l, 1);
    int64_t first = now_ns() + MS(20);
    tk_task_spec spec =
        slack_spec(&s[0], TK_TASK_FIXED_RATE, first, period, TK_TASK_AT_DEADLINE, sl);
    tk_future *f = NULL;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_OK);
    ct_track(t, f);
    assert_true(wait_ge(&l->done, RUNS, CONF_WAIT));
    int rc = tk_future_cancel(f, false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
    int64_t slack_of[1] = {sl};
    for (int k = 0; k < RUNS; k++) {
        assert_int_equal(l->deadline[k], first + k * period); /* the schedule never shifts */
        if (k > 0)
            assert_true(l->start[k] > l->start[k - 1]);
    }
    check_windows(l, RUNS, slack_of);
}

/* executor.h, tk_task_spec.slack_ns: "Periodic tasks keep their rate or
 * delay ... each run has its own window"; a fixed-delay run is due a period
 * after the previous one ended (tk_task_kind). */
static void fixed_delay_with_slack_counts_from_each_runs_end(void **state) {
    ct *t = CT(state);
    enum { RUNS = 5 };
    const int64_t period = MS(15), sl = MS(15);
    tk_executor *ex = ct_executor(t, 1);
    slog *l = slog_new(t, RUNS + 8);
    stask *s = stasks_new(t, l, 1);
    tk_task_spec spec = slack_spec(&s[0], TK_TASK_FIXED_DELAY, MS(5), period, 0, sl);
    tk_future *f = NULL;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_OK);
    ct_track(t, f);
    assert_true(wait_ge(&l->done, RUNS, CONF_WAIT));
    int rc = tk_future_cancel(f, false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
    int64_t slack_of[1] = {sl};
    for (int k = 1; k < RUNS; k++) {
        /* due a period after the previous run returned (which is after its
         * logged end), not after its deadline or its window */
        assert_true(l->deadline[k] >= l->end[k - 1] + period);
        assert_true(l->deadline[k] - l->end[k - 1] <= period + CONF_LATE);
    }
    check_windows(l, RUNS, slack_of);
}

/* executor.h, tk_executor_options.default_slack_ns: "the slack of every
 * task scheduled without TK_TASK_SLACK (tk_task_spec.slack_ns; the plain
 * schedule calls included)"; TK_TASK_SLACK: "slack_ns is this task's slack;
 * without the flag the task gets the executor's default_slack_ns". A task
 * given 0 under a large default runs promptly; plain calls stay within the
 * default's window. */
static void default_slack_applies_and_task_slack_overrides_it(void **state) {
    ct *t = CT(state);
    const int64_t big = 2 * TK_NS_PER_S;
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.default_slack_ns = big;
    tk_executor *ex = ct_create(t, &opt);
    enum { N = 3 };
    slog *l = slog_new(t, N);
    stask *s = stasks_new(t, l, N);
    int64_t slack[N] = {0, big, big};
    /* task 0: TK_TASK_SLACK with 0 overrides the default: it runs promptly */
    tk_task_spec spec = slack_spec(&s[0], TK_TASK_ONE_SHOT, MS(20), 0, 0, 0);
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, NULL), TK_OK);
    /* tasks 1 and 2: the plain call and a spec without the flag (whose
     * slack_ns, not read, may be anything) get the default */
    assert_int_equal(tk_executor_schedule(ex, slog_fn, &s[1], MS(20), NULL), TK_OK);
    spec = slack_spec(&s[2], TK_TASK_ONE_SHOT, MS(20), 0, 0, -1);
    spec.slack_ns = -5;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, NULL), TK_OK);
    assert_true(wait_ge(&l->done, N, CONF_WAIT + big));
    check_windows(l, N, slack);
    for (int i = 0; i < N; i++) {
        if (l->id[i] == 0)
            assert_true(l->start[i] - l->deadline[i] < CONF_LATE);
    }
}

static bool timer_idle(void *timer) {
    return tk_timer_is_idle(timer);
}

typedef struct slack_timer {
    tk_timer timer;
    atomic_int fired;
    atomic_llong at;
    atomic_int set_in_callback; /* tk_timer_set_slack() from the callback */
} slack_timer;

static void slack_timer_fn(tk_timer *timer) {
    int64_t now = now_ns();
    slack_timer *st = (slack_timer *)(void *)timer; /* the first member */
    atomic_store(&st->at, now);
    atomic_store(&st->set_in_callback, tk_timer_set_slack(timer, MS(7)) + 1000);
    atomic_fetch_add_explicit(&st->fired, 1, memory_order_release);
}

/* executor.h, tk_timer_set_slack(): "fn(timer) then runs at some instant in
 * [deadline, deadline + slack_ns] ... never before the deadline ... 0 after
 * tk_timer_init() ..., kept across starts ... TK_ESTATE (the timer is not
 * IDLE)". */
static void timer_slack_is_its_own_and_kept_across_starts(void **state) {
    ct *t = CT(state);
    const int64_t sl = MS(30);
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.default_slack_ns = 5 * TK_NS_PER_S; /* tasks only: the timer ignores it */
    tk_executor *ex = ct_create(t, &opt);
    slack_timer *st = ct_calloc(t, 1, sizeof(*st));
    assert_int_equal(tk_timer_set_slack(&st->timer, sl), TK_EINVAL); /* never initialised */
    assert_int_equal(tk_timer_init(&st->timer, slack_timer_fn), TK_OK);
    assert_int_equal(tk_timer_slack_ns(&st->timer), 0);
    assert_int_equal(tk_timer_set_slack(&st->timer, -1), TK_EINVAL);
    assert_int_equal(tk_timer_set_slack(&st->timer, sl), TK_OK);
    assert_int_equal(tk_timer_slack_ns(&st->timer), sl);
    assert_true(tk_timer_is_idle(&st->timer));

    int64_t d = now_ns() + MS(40);
    assert_int_equal(tk_timer_start_at(ex, &st->timer, d), TK_OK);
    int rc = tk_timer_set_slack(&st->timer, MS(1));
    /* refused while pending; a timer that already fired is IDLE again */
    assert_true(rc == TK_ESTATE || atomic_load(&st->fired) == 1);
    assert_true(wait_ge(&st->fired, 1, CONF_WAIT));
    int64_t late = atomic_load(&st->at) - d;
    assert_true(late >= 0);
    assert_true(late <= sl + CONF_LATE);
    assert_int_equal(atomic_load(&st->set_in_callback), TK_OK + 1000); /* IDLE in fn */
    assert_true(wait_for(timer_idle, &st->timer, CONF_WAIT));
    /* kept: the callback's, or ours if the timer had fired before our call */
    assert_int_equal(tk_timer_slack_ns(&st->timer), rc == TK_OK ? MS(1) : MS(7));
    assert_int_equal(tk_timer_set_slack(&st->timer, MS(7)), TK_OK);

    /* started again: the timer's own slack, not the tasks' default */
    d = now_ns() + MS(10);
    assert_int_equal(tk_timer_start_at(ex, &st->timer, d), TK_OK);
    assert_true(wait_ge(&st->fired, 2, CONF_WAIT));
    late = atomic_load(&st->at) - d;
    assert_true(late >= 0);
    assert_true(late <= MS(7) + CONF_LATE);
    assert_true(wait_for(timer_idle, &st->timer, CONF_WAIT));
    assert_int_equal(tk_timer_slack_ns(&st->timer), MS(7));
    /* tk_timer_init() starts over from 0 */
    assert_int_equal(tk_timer_init(&st->timer, slack_timer_fn), TK_OK);
    assert_int_equal(tk_timer_slack_ns(&st->timer), 0);
    assert_int_equal(tk_timer_slack_ns(NULL), 0);
    assert_int_equal(tk_timer_set_slack(NULL, 0), TK_EINVAL);
}

/* Schedules N tasks, deadlines spread evenly over `spread` from `base`, on
 * one worker: with their own slack (own) or the executor's default. Returns
 * false if the submissions ran past `base` (a machine too loaded to tell
 * coalescing from promptness). */
static bool schedule_spread(tk_executor *ex, stask *s, int n, int64_t base, int64_t spread,
                            int64_t slack, bool own) {
    for (int i = 0; i < n; i++) {
        int64_t d = base + spread * i / (n - 1);
        tk_task_spec spec =
            slack_spec(&s[i], TK_TASK_ONE_SHOT, d, 0, TK_TASK_AT_DEADLINE, own ? slack : -1);
        assert_int_equal(tk_executor_schedule_spec(ex, &spec, NULL), TK_OK);
    }
    return now_ns() < base;
}

/* queue.h, "Slack", for an engine with TK_QUEUE_CAP_SLACK: "fewer
 * wake-ups: its thread sleeps until the earliest window end among its
 * nodes, not the earliest deadline, and then hands out every node already
 * due; one wake-up serves every node whose window contains it". 30 tasks
 * due over 20 ms with 300 ms of slack each, on one worker: the engine
 * wakes (about) once, at the first window's end, by when all 30 are due,
 * so they run together after the last deadline, not one by one at their
 * deadlines. A few may run early in the spread (a spurious wake-up of the
 * worker): at most 3 of 30 are allowed. Once with TK_TASK_SLACK, once
 * through default_slack_ns. */
static void many_windows_share_one_wake_up(void **state) {
    ct *t = CT(state);
    if ((t->eng->ops->caps & TK_QUEUE_CAP_SLACK) == 0)
        skip(); /* the engine hands each node out at the start of its window */
    enum { N = 30 };
    const int64_t spread = MS(20), sl = MS(300), lead = MS(200);
    for (int pass = 0; pass < 2; pass++) {
        bool own = pass == 0;
        tk_executor_options opt;
        ct_options(t, &opt, 1);
        opt.default_slack_ns = own ? 0 : sl;
        tk_executor *ex = ct_create(t, &opt);
        slog *l = slog_new(t, N);
        stask *s = stasks_new(t, l, N);
        int64_t *slack = ct_calloc(t, N, sizeof(int64_t));
        for (int i = 0; i < N; i++)
            slack[i] = sl;
        assert_int_equal(tk_executor_prestart_core_thread(ex), 1); /* no start in the way */
        int64_t base = now_ns() + lead;
        if (!schedule_spread(ex, s, N, base, spread, sl, own)) {
            print_message("submissions ran past the first deadline: not measured\n");
            continue;
        }
        assert_true(wait_ge(&l->done, N, CONF_WAIT));
        check_windows(l, N, slack);
        int early = 0; /* runs before the last deadline: not coalesced */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (int i = 0; i < N; i++) {
            early += l->start[i] < base + spread;
            lo = l->start[i] < lo ? l->start[i] : lo;
            hi = l->start[i] > hi ? l->start[i] : hi;
        }
        print_message("%s: %d of %d ran before the last deadline; runs spread over %lld us\n",
                      own ? "TK_TASK_SLACK" : "default_slack_ns", early, N,
                      (long long)((hi - lo) / TK_NS_PER_US));
        assert_true(early <= 3);
        for (int i = 0; i < N; i++) /* in (deadline, seq) order */
            assert_int_equal(l->id[i], i);
        ct_destroy(t, ex);
    }
}

CONF_TABLE(slack,
           {"slack: never starts a task before its deadline nor after its window",
            never_starts_before_its_deadline_nor_after_its_window},
           {"slack: equal deadlines run in submission order whatever their slacks",
            equal_deadlines_run_in_submission_order_whatever_their_slack},
           {"slack: a fixed-rate task with slack keeps its rate",
            fixed_rate_with_slack_keeps_its_rate},
           {"slack: a fixed-delay task with slack counts each delay from a run's end",
            fixed_delay_with_slack_counts_from_each_runs_end},
           {"slack: default_slack_ns applies to plain calls, TK_TASK_SLACK overrides it",
            default_slack_applies_and_task_slack_overrides_it},
           {"slack: a timer's slack is its own, set while IDLE and kept across starts",
            timer_slack_is_its_own_and_kept_across_starts},
           {"slack: on an engine that uses slack, many windows share one wake-up",
            many_windows_share_one_wake_up}, );
