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
 * by itself, so waiting for it would wait for ever. */
static int check_specs(const tk_task_spec *specs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (specs[i].kind != TK_TASK_ONE_SHOT || tk__spec_check(&specs[i]) != TK_OK)
            return TK_EINVAL;
    }
    return TK_OK;
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
    if (check_specs(specs, n) != TK_OK)
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

int tk_executor_invoke_any_timeout(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                   int64_t timeout_ns, void **result) {
    if (ex == NULL || specs == NULL || n == 0)
        return TK_EINVAL;
    if (n > SIZE_MAX / sizeof(tk_future *))
        return TK_ENOMEM; /* before the specs are read: no such array exists */
    if (check_specs(specs, n) != TK_OK)
        return TK_EINVAL;
    /* The futures not yet seen ended, fs[0..active). */
    size_t bytes = n * sizeof(tk_future *);
    tk_future **fs = tk__alloc(&ex->alloc, bytes);
    if (fs == NULL)
        return TK_ENOMEM;
    int64_t deadline = deadline_for(timeout_ns);
    size_t scheduled = 0, active = 0;
    int rc = TK_ECANCELLED; /* replaced by the first failure seen */
    atomic_fetch_add(&ex->any_waiters, 1);
    for (;;) {
        uint32_t seq = atomic_load(&ex->any_seq);
        bool won = false;
        for (size_t j = 0; j < active && !won;) {
            tk_future *f = fs[j];
            switch (tk_future_state(f)) {
            case TK_TASK_RUNNING:
                j++;
                continue;
            case TK_TASK_SUCCESS:
                (void)tk_future_result_now(f, result);
                won = true;
                break;
            default: /* failed or cancelled: "the last failure" so far */
                rc = tk_future_state(f) == TK_TASK_FAILED ? TK_ETASKFAILED : TK_ECANCELLED;
                break;
            }
            (void)tk_future_release(f);
            fs[j] = fs[--active];
        }
        if (won) {
            rc = TK_OK;
            break;
        }
        if (scheduled < n) {
            tk_future *f = NULL;
            int src = tk_executor_schedule_spec(ex, &specs[scheduled], &f);
            if (src != TK_OK) {
                rc = src;
                break;
            }
            scheduled++;
            fs[active++] = f;
            continue; /* look again before scheduling the next (JDK: poll) */
        }
        if (active == 0)
            break; /* every task failed: rc is the last failure */
        int64_t left = time_left(deadline);
        if (left == 0) {
            rc = TK_ETIMEDOUT;
            break;
        }
        tk__futex_wait_until(&ex->any_seq, seq, deadline);
    }
    atomic_fetch_sub(&ex->any_waiters, 1);
    /* "Upon normal or exceptional return, tasks that have not completed are
     * cancelled." */
    cancel_release(fs, active);
    tk__free(&ex->alloc, fs, bytes);
    return rc;
}

int tk_executor_invoke_any(tk_executor *ex, const tk_task_spec *specs, size_t n, void **result) {
    return tk_executor_invoke_any_timeout(ex, specs, n, -1, result);
}
