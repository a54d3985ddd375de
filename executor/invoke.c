/* SPDX-License-Identifier: MIT */
/* timerkit executor: bulk invocation, the JDK's AbstractExecutorService
 * invokeAll and invokeAny, built on the public scheduling and future calls.
 *
 * invoke_all schedules every task, then waits for each future in turn (the
 * JDK does the same); with a timeout, whatever is not done at the deadline
 * is cancelled. A scheduling failure part-way cancels what was scheduled and
 * returns the failure (the JDK's cancelAll in its catch block).
 *
 * invoke_any follows the JDK's doInvokeAny: schedule one task, look for one
 * that ended, schedule the next while none has succeeded, and once all are
 * scheduled, sleep until one of them ends. There is no completion queue: the
 * caller sleeps on the executor's any_seq word, which every terminal
 * transition of any task of the executor bumps while an invoke_any caller is
 * registered (tk__invoke_any_notify), and rescans its own futures on each
 * wake-up. No wake-up is lost: the caller registers (any_waiters) before it
 * reads any_seq, and reads any_seq before it reads the futures' states; a
 * task whose terminal state the scan missed made its transition after that
 * read, so it sees the caller registered and changes any_seq after the
 * caller read it, and the FUTEX_WAIT does not sleep. The price: while a call
 * waits, it wakes for every task of the executor that ends, not only its own.
 * Each rescan looks at the futures in scheduling order and keeps that order,
 * so "the last failure seen", which the call reports when every task failed
 * (the JDK throws "the last exception we got"), is well defined: the latest
 * scan that found failures, and in it the task scheduled last.
 *
 * No lock is held anywhere here. */
#define _GNU_SOURCE
#include <stdint.h>

#include "executor-internal.h"

void tk__invoke_any_wake(tk_executor *ex) {
    atomic_fetch_add(&ex->any_seq, 1);
    tk__futex_wake_all(&ex->any_seq);
}

/* Every spec must be a valid one-shot task: a periodic task never completes
 * by itself, so waiting for it would wait for ever. Returns the index of the
 * first spec that is not, or n if all are. */
static size_t first_bad_spec(const tk_task_spec *specs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (specs[i].kind != TK_TASK_ONE_SHOT || tk__spec_check(&specs[i]) != TK_OK)
            return i;
    }
    return n;
}

static int64_t deadline_for(int64_t timeout_ns) {
    return timeout_ns < 0 ? -1 : tk_deadline_after_ns(tk_clock_now_ns(), timeout_ns);
}

/* What is left of the wait until `deadline` (< 0: no deadline, returns -1);
 * 0 once it has passed. */
static int64_t time_left(int64_t deadline) {
    if (deadline < 0)
        return -1;
    int64_t left = deadline - tk_clock_now_ns();
    return left > 0 ? left : 0;
}

/* Cancels (may_interrupt, as the JDK's cancelAll) and releases fs[0..n). */
static void cancel_release(tk_future **fs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        (void)tk_future_cancel(fs[i], true);
        (void)tk_future_release(fs[i]);
        fs[i] = NULL;
    }
}

int tk_executor_invoke_all_timeout(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                   int64_t timeout_ns, tk_future **futures) {
    if (futures != NULL) {
        for (size_t i = 0; i < n; i++)
            futures[i] = NULL; /* what every failure leaves */
    }
    if (ex == NULL || (n > 0 && (specs == NULL || futures == NULL)))
        return TK_EINVAL;
    if (first_bad_spec(specs, n) != n)
        return TK_EINVAL;
    int64_t deadline = deadline_for(timeout_ns);
    for (size_t i = 0; i < n; i++) {
        tk_future *f = NULL;
        int rc = tk_executor_schedule_spec(ex, &specs[i], &f);
        if (rc != TK_OK) {
            cancel_release(futures, i);
            for (size_t j = i; j < n; j++)
                futures[j] = NULL;
            return rc;
        }
        futures[i] = f;
    }
    bool timed_out = false;
    for (size_t i = 0; i < n && !timed_out; i++) {
        int rc;
        do /* TK_EINTR: someone aborted this wait; the call goes on waiting */
            rc = tk_future_get_timeout(futures[i], time_left(deadline), NULL);
        while (rc == TK_EINTR);
        timed_out = rc == TK_ETIMEDOUT;
    }
    if (timed_out) {
        /* "Upon return, tasks that have not completed are cancelled." */
        for (size_t i = 0; i < n; i++)
            (void)tk_future_cancel(futures[i], true);
    }
    return TK_OK;
}

int tk_executor_invoke_all(tk_executor *ex, const tk_task_spec *specs, size_t n,
                           tk_future **futures) {
    return tk_executor_invoke_all_timeout(ex, specs, n, -1, futures);
}

/* One task of an invoke_any call that the call has not yet seen end: its
 * future and its index in the caller's specs. */
typedef struct any_entry {
    tk_future *f;
    size_t index;
} any_entry;

/* What an invoke_any call reports: its status, and the task it is about. */
typedef struct any_outcome {
    int rc;
    size_t index;    /* n: about no task */
    int task_status; /* the named task's failure status, else 0 */
} any_outcome;

/* Looks once at every task not yet seen end, in scheduling order, and keeps
 * those still running at the front of es (the order stays: among tasks
 * found ended in one scan, the later-scheduled counts as the later failure).
 * A success ends the scan's interest: its result goes to *result, `out`
 * names it, and the tasks after it are kept, to be cancelled. A failure or
 * a cancel becomes the last failure seen (out). Returns the tasks kept. */
static size_t any_scan(any_entry *es, size_t active, void **result, bool *won, any_outcome *out) {
    size_t kept = 0;
    for (size_t j = 0; j < active; j++) {
        any_entry e = es[j];
        tk_task_state st = *won ? TK_TASK_RUNNING : tk_future_state(e.f);
        if (st == TK_TASK_RUNNING) {
            es[kept++] = e;
            continue;
        }
        if (st == TK_TASK_SUCCESS) {
            (void)tk_future_result_now(e.f, result);
            *won = true;
            *out = (any_outcome){TK_OK, e.index, 0};
        } else if (st == TK_TASK_FAILED) {
            *out = (any_outcome){TK_ETASKFAILED, e.index, tk_future_task_status(e.f)};
        } else { /* cancelled (from elsewhere, or dropped by a policy) or removed */
            *out = (any_outcome){TK_ECANCELLED, e.index, 0};
        }
        (void)tk_future_release(e.f);
    }
    return kept;
}

/* The JDK's doInvokeAny without its completion service (see the top of this
 * file). es has room for n entries; returns what the call reports. */
static any_outcome any_run(tk_executor *ex, const tk_task_spec *specs, size_t n, int64_t timeout_ns,
                           void **result, any_entry *es) {
    int64_t deadline = deadline_for(timeout_ns);
    size_t scheduled = 0, active = 0;
    /* Every task fails before the call returns or some path below replaces
     * this; it is never returned as it is (n > 0). */
    any_outcome out = {TK_ECANCELLED, n, 0};
    bool won = false;
    atomic_fetch_add(&ex->any_waiters, 1);
    for (;;) {
        uint32_t seq = atomic_load(&ex->any_seq);
        active = any_scan(es, active, result, &won, &out);
        if (won)
            break;
        if (scheduled < n) {
            tk_future *f = NULL;
            int src = tk_executor_schedule_spec(ex, &specs[scheduled], &f);
            if (src != TK_OK) {
                out = (any_outcome){src, scheduled, 0};
                break;
            }
            es[active++] = (any_entry){f, scheduled++};
            continue; /* look again before scheduling the next (JDK: poll) */
        }
        if (active == 0)
            break; /* every task failed: `out` is the last failure seen */
        if (time_left(deadline) == 0) {
            out = (any_outcome){TK_ETIMEDOUT, n, 0};
            break;
        }
        tk__futex_wait_until(&ex->any_seq, seq, deadline);
    }
    atomic_fetch_sub(&ex->any_waiters, 1);
    /* "Upon normal or exceptional return, tasks that have not completed are
     * cancelled." */
    for (size_t i = 0; i < active; i++) {
        (void)tk_future_cancel(es[i].f, true);
        (void)tk_future_release(es[i].f);
    }
    return out;
}

int tk_executor_invoke_any_cause(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                 int64_t timeout_ns, void **result, size_t *index,
                                 int *task_status) {
    any_outcome out = {TK_EINVAL, n, 0};
    if (ex == NULL || specs == NULL || n == 0) {
        /* nothing to name */
    } else if (n > SIZE_MAX / sizeof(any_entry)) {
        out.rc = TK_ENOMEM; /* before the specs are read: no such array exists */
    } else if ((out.index = first_bad_spec(specs, n)) != n) {
        out.rc = TK_EINVAL;
    } else {
        size_t bytes = n * sizeof(any_entry);
        any_entry *es = tk__alloc(&ex->alloc, bytes);
        if (es == NULL) {
            out.rc = TK_ENOMEM;
        } else {
            out = any_run(ex, specs, n, timeout_ns, result, es);
            tk__free(&ex->alloc, es, bytes);
        }
    }
    if (index != NULL)
        *index = out.index;
    if (task_status != NULL)
        *task_status = out.task_status;
    return out.rc;
}

int tk_executor_invoke_any_timeout(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                   int64_t timeout_ns, void **result) {
    return tk_executor_invoke_any_cause(ex, specs, n, timeout_ns, result, NULL, NULL);
}

int tk_executor_invoke_any(tk_executor *ex, const tk_task_spec *specs, size_t n, void **result) {
    return tk_executor_invoke_any_timeout(ex, specs, n, -1, result);
}
