/* SPDX-License-Identifier: MIT */
/* Conformance: fixed rate, fixed delay, catch-up vs skip, non-overlap, failure suppression. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"

/* A periodic task that logs every run. Plain fields set before scheduling;
 * slots published through `done`. */
typedef struct plog {
    atomic_int n, done;
    int cap;
    int64_t *start, *end, *deadline;
    uint64_t *run_count;
    long *plain_seen;
    long plain; /* deliberately not atomic: runs must happen-before each other */
    atomic_int in_run, overlaps;
    int64_t run_ns;  /* every run takes this long */
    int overrun_run; /* this run (0-based) takes overrun_ns instead; -1: none */
    int64_t overrun_ns;
    int fail_run; /* this run returns fail_status; -1: none */
    int fail_status;
    atomic_int freed;
} plog;

static plog *plog_new(ct *t, int cap) {
    plog *l = ct_calloc(t, 1, sizeof(*l));
    l->cap = cap;
    l->start = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    l->end = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    l->deadline = ct_calloc(t, (size_t)cap, sizeof(int64_t));
    l->run_count = ct_calloc(t, (size_t)cap, sizeof(uint64_t));
    l->plain_seen = ct_calloc(t, (size_t)cap, sizeof(long));
    l->overrun_run = -1;
    l->fail_run = -1;
    return l;
}

static int plog_fn(tk_run *run, void *arg) {
    plog *l = arg;
    int64_t start = now_ns();
    if (atomic_exchange(&l->in_run, 1) != 0)
        atomic_fetch_add(&l->overlaps, 1);
    int i = atomic_fetch_add(&l->n, 1);
    long p = l->plain;
    l->plain = p + 1;
    const tk_task_info *info = tk_run_info(run);
    sleep_ns(i == l->overrun_run ? l->overrun_ns : l->run_ns);
    if (i < l->cap) {
        l->start[i] = start;
        l->deadline[i] = info != NULL ? info->deadline_ns : INT64_MIN;
        l->run_count[i] = info != NULL ? info->run_count : UINT64_MAX;
        l->plain_seen[i] = p;
        l->end[i] = now_ns();
    }
    atomic_store(&l->in_run, 0);
    atomic_fetch_add_explicit(&l->done, 1, memory_order_release);
    return i == l->fail_run ? l->fail_status : 0;
}

static void plog_free(void *arg) {
    plog *l = arg;
    atomic_fetch_add(&l->freed, 1);
}

static tk_future *start_periodic(ct *t, tk_executor *ex, plog *l, tk_task_kind kind,
                                 int64_t initial, int64_t period, unsigned flags, int64_t *before,
                                 int64_t *after) {
    tk_task_spec spec = {.fn = plog_fn,
                         .arg = l,
                         .arg_free = plog_free,
                         .kind = kind,
                         .delay_ns = initial,
                         .period_ns = period,
                         .flags = flags};
    tk_future *f = NULL;
    *before = now_ns();
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_OK);
    *after = now_ns();
    return ct_track(t, f);
}

/* Cancels `f` and checks that no run starts afterwards. Returns the runs. */
static int stop_periodic(tk_future *f, plog *l) {
    int n0 = atomic_load(&l->n);
    int rc = tk_future_cancel(f, false);
    assert_true(rc == TK_OK || rc == TK_ERUNNING);
    assert_true(tk_future_is_cancelled(f));
    assert_true(tk_future_is_done(f));
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_ECANCELLED);
    assert_int_equal(tk_future_cancel(f, false), TK_EDONE);
    /* A run in progress (TK_ERUNNING) may still be entering the callback;
     * after that nothing more starts. */
    sleep_ns(MS(30));
    int n = atomic_load(&l->n);
    assert_true(n <= n0 + 1);
    sleep_ns(MS(30));
    assert_int_equal(atomic_load(&l->n), n);
    assert_true(wait_ge(&l->done, n, CONF_WAIT));
    assert_true(wait_ge(&l->freed, 1, CONF_WAIT));
    assert_int_equal(atomic_load(&l->freed), 1);
    return n < l->cap ? n : l->cap;
}

static void check_runs_sequential(plog *l, int n) {
    assert_int_equal(atomic_load(&l->overlaps), 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(l->run_count[i], (uint64_t)i);
        assert_int_equal(l->plain_seen[i], i);
        assert_true(l->start[i] >= l->deadline[i]);
        if (i > 0)
            assert_true(l->start[i] >= l->end[i - 1]);
    }
}

static void fixed_rate_runs_at_first_plus_k_periods(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    plog *l = plog_new(t, 64);
    int64_t before, after, period = MS(8);
    tk_future *f = start_periodic(t, ex, l, TK_TASK_FIXED_RATE, MS(5), period, 0, &before, &after);
    assert_true(tk_future_is_periodic(f));
    assert_true(wait_ge(&l->done, 8, CONF_WAIT));
    int n = stop_periodic(f, l);
    assert_true(n >= 8);
    check_runs_sequential(l, n);
    assert_true(l->deadline[0] >= before + MS(5));
    assert_true(l->deadline[0] <= after + MS(5));
    for (int k = 0; k < n; k++)
        assert_int_equal(l->deadline[k], l->deadline[0] + k * period);
    assert_true(tk_future_run_count(f) >= (uint64_t)n - 1);
    assert_int_equal(tk_future_skipped_count(f), 0);
}

static void fixed_rate_catches_up_after_an_overrun(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    plog *l = plog_new(t, 64);
    l->overrun_run = 1;
    l->overrun_ns = MS(45);
    int64_t before, after, period = MS(10);
    tk_future *f = start_periodic(t, ex, l, TK_TASK_FIXED_RATE, 0, period, 0, &before, &after);
    assert_true(wait_ge(&l->done, 8, CONF_WAIT));
    int n = stop_periodic(f, l);
    check_runs_sequential(l, n);
    /* Every period runs, the missed ones back to back after the overrun. */
    for (int k = 0; k < n; k++)
        assert_int_equal(l->deadline[k], l->deadline[0] + k * period);
    assert_true(l->deadline[2] < l->end[1]); /* runs 2.. were overdue: caught up */
    assert_int_equal(tk_future_skipped_count(f), 0);
    assert_int_equal(stats_of(ex).skipped_periods, 0);
}

static void fixed_rate_skip_missed_skips_and_counts(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    plog *l = plog_new(t, 64);
    l->overrun_run = 1;
    l->overrun_ns = MS(45);
    int64_t before, after, period = MS(10);
    /* The task ends itself by failing its sixth run, so every run that was
     * scheduled is logged and the skipped periods can be counted exactly
     * (a cancel could land after the next, skipping, deadline was computed). */
    l->fail_run = 5;
    l->fail_status = 1;
    tk_future *f = start_periodic(t, ex, l, TK_TASK_FIXED_RATE, 0, period, TK_TASK_SKIP_MISSED,
                                  &before, &after);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_ETASKFAILED);
    sleep_ns(MS(20));
    int n = atomic_load(&l->n);
    assert_int_equal(n, 6);
    assert_true(wait_ge(&l->done, n, CONF_WAIT));
    check_runs_sequential(l, n);
    uint64_t skipped = 0;
    for (int k = 1; k < n; k++) {
        int64_t gap = l->deadline[k] - l->deadline[k - 1];
        /* Still on the fixed-rate grid... */
        assert_true(gap > 0);
        assert_int_equal(gap % period, 0);
        skipped += (uint64_t)(gap / period - 1);
    }
    /* ...but the periods missed during the 45 ms overrun were skipped, not run:
     * the run after it is due no earlier than one period before it ended. */
    assert_true(l->deadline[2] > l->end[1] - period);
    assert_true(skipped >= 2);
    assert_int_equal(tk_future_skipped_count(f), skipped);
    assert_int_equal(stats_of(ex).skipped_periods, skipped);
}

static void fixed_delay_waits_after_each_run_ends(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 2);
    plog *l = plog_new(t, 64);
    l->overrun_run = 1;
    l->overrun_ns = MS(20);
    l->run_ns = MS(1);
    int64_t before, after, delay = MS(8);
    tk_future *f = start_periodic(t, ex, l, TK_TASK_FIXED_DELAY, MS(3), delay, 0, &before, &after);
    assert_true(tk_future_is_periodic(f));
    assert_true(wait_ge(&l->done, 5, CONF_WAIT));
    int n = stop_periodic(f, l);
    check_runs_sequential(l, n);
    assert_true(l->deadline[0] >= before + MS(3));
    assert_true(l->deadline[0] <= after + MS(3));
    for (int k = 1; k < n; k++) {
        assert_true(l->deadline[k] >= l->end[k - 1] + delay);
        assert_true(l->deadline[k] <= l->end[k - 1] + delay + CONF_LATE);
    }
}

static void periodic_runs_never_overlap(ct *t, tk_task_kind kind) {
    tk_executor *ex = ct_executor(t, 4);
    plog *l = plog_new(t, 256);
    l->run_ns = MS(3); /* longer than the period: always due again at once */
    int64_t before, after;
    tk_future *f = start_periodic(t, ex, l, kind, 0, MS(1), 0, &before, &after);
    /* Keep the other workers busy-ready with unrelated work meanwhile. */
    counter *c = counter_new(t);
    for (int i = 0; i < 50; i++)
        assert_int_equal(tk_executor_schedule(ex, counter_fn, c, i * 1000 * TK_NS_PER_US, NULL),
                         TK_OK);
    assert_true(wait_ge(&l->done, 20, CONF_WAIT));
    int n = stop_periodic(f, l);
    check_runs_sequential(l, n);
    assert_true(wait_ge(&c->runs, 50, CONF_WAIT));
}

static void fixed_rate_runs_never_overlap(void **state) {
    periodic_runs_never_overlap(CT(state), TK_TASK_FIXED_RATE);
}

static void fixed_delay_runs_never_overlap(void **state) {
    periodic_runs_never_overlap(CT(state), TK_TASK_FIXED_DELAY);
}

typedef struct hooklog {
    atomic_int periodic_failed, after;
    atomic_int pf_status, last_after_status;
    tk_task_info pf_info; /* written before periodic_failed is bumped */
    tk_executor *pf_ex;
} hooklog;

static void hl_periodic_failed(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    hooklog *h = ctx;
    h->pf_info = *task;
    h->pf_ex = ex;
    atomic_store(&h->pf_status, status);
    atomic_fetch_add(&h->periodic_failed, 1);
}

static void hl_after(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    (void)ex;
    (void)task;
    hooklog *h = ctx;
    atomic_store(&h->last_after_status, status);
    atomic_fetch_add(&h->after, 1);
}

static void failing_periodic_run_ends_the_task(void **state) {
    ct *t = CT(state);
    const tk_task_kind kinds[] = {TK_TASK_FIXED_RATE, TK_TASK_FIXED_DELAY};
    for (int k = 0; k < 2; k++) {
        hooklog *h = ct_calloc(t, 1, sizeof(*h));
        tk_executor_hooks hooks = {
            .periodic_failed = hl_periodic_failed, .after_execute = hl_after, .ctx = h};
        tk_executor *ex = ct_executor_with_hooks(t, 2, &hooks);
        plog *l = plog_new(t, 64);
        l->fail_run = 2;
        l->fail_status = 42;
        int64_t before, after;
        tk_future *f = start_periodic(t, ex, l, kinds[k], 0, MS(4), 0, &before, &after);
        assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_ETASKFAILED);
        assert_int_equal(tk_future_task_status(f), 42);
        assert_true(tk_future_is_done(f));
        assert_false(tk_future_is_cancelled(f));
        assert_int_equal(tk_future_cancel(f, true), TK_EDONE);
        assert_true(wait_ge(&h->periodic_failed, 1, CONF_WAIT));
        sleep_ns(MS(30));
        assert_int_equal(atomic_load(&l->n), 3); /* no run after the failed one */
        assert_int_equal(atomic_load(&h->periodic_failed), 1);
        assert_int_equal(atomic_load(&h->pf_status), 42);
        assert_ptr_equal(h->pf_ex, ex);
        assert_ptr_equal(h->pf_info.fn, plog_fn);
        assert_ptr_equal(h->pf_info.arg, l);
        assert_int_equal(h->pf_info.kind, kinds[k]);
        assert_int_equal(h->pf_info.period_ns, MS(4));
        assert_int_equal(h->pf_info.run_count, 2);
        assert_true(wait_ge(&h->after, 3, CONF_WAIT));
        assert_int_equal(atomic_load(&h->last_after_status), 42);
        assert_true(wait_ge(&l->freed, 1, CONF_WAIT));
        assert_int_equal(atomic_load(&l->freed), 1);
        tk_executor_stats s = stats_of(ex);
        assert_int_equal(s.failed_count, 1);
        assert_int_equal(s.failed_periodic_count, 1);
        assert_int_equal(s.runs, 3);
        assert_int_equal(s.cancelled_count, 0);
        assert_int_equal(tk_future_get(f, NULL), TK_ETASKFAILED);
    }
}

static bool run_count_reached(void *ctx) {
    return tk_future_run_count(ctx) >= 3;
}

static void periodic_future_completes_only_by_cancel_or_failure(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    plog *l = plog_new(t, 64);
    int64_t before, after;
    tk_future *f = start_periodic(t, ex, l, TK_TASK_FIXED_DELAY, 0, MS(2), 0, &before, &after);
    assert_true(wait_for(run_count_reached, f, CONF_WAIT));
    void *result = (void *)&result;
    assert_int_equal(tk_future_get_timeout(f, MS(20), &result), TK_ETIMEDOUT);
    assert_false(tk_future_is_done(f));
    assert_true(tk_future_is_periodic(f));
    int64_t rem = tk_future_remaining_ns(f);
    assert_true(rem <= MS(2) + MS(1)); /* at most one delay ahead (plus a run) */
    stop_periodic(f, l);
    assert_true(tk_future_run_count(f) >= 3);
}

CONF_TABLE(periodic,
           {"fixed-rate run k is due at first + k * period",
            fixed_rate_runs_at_first_plus_k_periods},
           {"fixed-rate catches up missed periods after an overrun",
            fixed_rate_catches_up_after_an_overrun},
           {"fixed-rate with TK_TASK_SKIP_MISSED skips missed periods and counts them",
            fixed_rate_skip_missed_skips_and_counts},
           {"fixed-delay runs are due the delay after the previous run ended",
            fixed_delay_waits_after_each_run_ends},
           {"fixed-rate runs never overlap and each happens-before the next",
            fixed_rate_runs_never_overlap},
           {"fixed-delay runs never overlap and each happens-before the next",
            fixed_delay_runs_never_overlap},
           {"a failing periodic run ends the task and is reported",
            failing_periodic_run_ends_the_task},
           {"a periodic future completes only by cancellation or failure",
            periodic_future_completes_only_by_cancel_or_failure}, );
