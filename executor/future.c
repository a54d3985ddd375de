/* SPDX-License-Identifier: MIT */
/* timerkit executor: reference counts, futures, tk_run.
 *
 * Task objects live in the executor's slabs (slab.c). References are
 * counted in t->refs (see the essay in executor.c); the object returns to
 * its slab when the count reaches zero. get() blocks on a futex word in the task
 * (the get() protocol below), so no mutex or condition variable lives in a
 * task and a future stays usable after its executor is destroyed. */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "executor-internal.h"

_Thread_local tk__tls tk__current;

/* ---- futex ------------------------------------------------------------- */

void tk__futex_wake_all(_Atomic uint32_t *word) {
    (void)syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void tk__futex_wait_until(_Atomic uint32_t *word, uint32_t expected, int64_t deadline_ns) {
    struct timespec ts;
    struct timespec *tsp = NULL;
    if (deadline_ns >= 0) {
        ts = tk__ns_to_timespec(deadline_ns);
        tsp = &ts;
    }
    /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC timeout. */
    (void)syscall(SYS_futex, (void *)word, FUTEX_WAIT_BITSET_PRIVATE, expected, tsp, NULL,
                  FUTEX_BITSET_MATCH_ANY);
}

/* The get() protocol. Blocked gets sleep on t->waiters, a word that packs
 * three things (TK__WAIT_*): how many gets are blocked, a DONE bit, and an
 * abort generation (and, for tk_run_interrupted(), the INTERRUPTED bit of a
 * cancel(may_interrupt) during the run, which blocked gets ignore). Every event a blocked get must
 * see changes the word before the wake-up, so a get that read the word before the event finds it
 * changed when it calls FUTEX_WAIT and does not sleep (no lost wake-up):
 * - completion (tk__task_wake, after the state CAS): sets DONE, if anyone
 *   is blocked;
 * - tk_future_abort_get(): adds one to the generation.
 * A get reads the generation when it registers; it returns TK_EINTR once the
 * generation differs, so an abort touches only the gets registered before
 * it. Completion wins: a get that sees a terminal state returns the outcome
 * even if an abort came too. The generation is 10 bits and wraps: a get
 * would miss an abort only if exactly a multiple of 1024 aborts happened
 * between two of its reads of the word, each of which wakes it. */
#define TK__WAIT_COUNT_MASK 0x000FFFFFu /* gets blocked (at most about 1M) */
#define TK__WAIT_DONE 0x00100000u       /* the task reached a terminal state */
#define TK__WAIT_INTERRUPTED 0x00200000u
#define TK__WAIT_GEN_ONE 0x00400000u /* one abort; bits 22..31, wrapping */
#define TK__WAIT_GEN_MASK 0xFFC00000u

void tk__task_wake(tk__task *t) {
    if ((atomic_load(&t->waiters) & TK__WAIT_COUNT_MASK) != 0) {
        atomic_fetch_or(&t->waiters, TK__WAIT_DONE);
        tk__futex_wake_all(&t->waiters);
    }
    tk__invoke_any_notify(tk__task_ex(t));
}

void tk__task_discard_unused(tk__task *t) {
    tk__task_free(t);
}

void tk__task_unref(tk__task *t, uint32_t n) {
    uint32_t old = atomic_fetch_sub_explicit(&t->refs, n, memory_order_acq_rel);
    assert((old & TK__REF_COUNT_MASK) >= n);
    if ((old & TK__REF_COUNT_MASK) == n)
        tk__task_free(t);
}

bool tk__task_complete(tk__task *t, uint32_t from, uint32_t to) {
    uint32_t expected = from;
    if (!atomic_compare_exchange_strong(&t->state, &expected, to))
        return false;
    tk__task_wake(t);
    return true;
}

void tk__task_info(const tk__task *t, tk_task_info *info) {
    info->fn = t->u.fn;
    info->arg = t->arg;
    info->kind = t->kind;
    info->deadline_ns = tk__task_deadline(t);
    info->period_ns = tk__task_period(t);
    info->seq = t->node.seq >> 1; /* tasks and timers share one count */
    info->run_count = tk_future_run_count(t);
}

void tk__task_finish(tk__task *t, uint32_t extra) {
    tk__task_drop_arg(t);
    tk__task_unref(t, 1 + extra);
}

void tk__task_set_status(tk__task *t, int status, bool vetoed) {
    t->u.status = status;
    atomic_store_explicit(&t->ran, vetoed ? TK__RAN_VETOED : TK__RAN_FAILED, memory_order_release);
}

/* The PENDING -> CANCELLED CAS and its bookkeeping, but for the executor's
 * reference, which the caller drops. */
static bool cancel_pending_keep_ref(tk__task *t, bool hand_back) {
    if (!tk__task_complete(t, TK__TASK_PENDING, TK__TASK_CANCELLED))
        return false;
    tk__shard_add(&tk__shard_here(tk__task_ex(t))->cancelled, 1);
    if (!hand_back) /* hand_back: the caller took over fn/arg */
        tk__task_drop_arg(t);
    return true;
}

bool tk__task_cancel_pending(tk__task *t, bool hand_back) {
    if (!cancel_pending_keep_ref(t, hand_back))
        return false;
    tk__task_unref(t, 1);
    return true;
}

void tk__task_cancel_and_remove(tk__task *t) {
    tk_executor *ex = tk__task_ex(t);
    tk__task_cancel_pending(t, false);
    int rc = tk__queue_remove(ex, &t->node);
    if (rc == TK_OK) {
        tk__task_unref(t, 1); /* the queue's reference came back */
        tk__rewake_if_shutdown(ex);
    }
    /* TK_EINPROGRESS: the queue's reference comes back through the release
     * callback. TK_ENOENT: a worker holds the node; it sees CANCELLED (or
     * re-checks after its re-offer) and drops it. */
}

/* ---- futures ----------------------------------------------------------- */

int tk_future_cancel(tk_future *f, bool may_interrupt) {
    if (f == NULL)
        return TK_EINVAL;
    for (;;) {
        uint32_t s = atomic_load(&f->state);
        if (s == TK__TASK_PENDING) {
            /* The canceller holds a reference (the user's, or the run's). */
            tk_executor *ex = tk__task_ex(f);
            if (!cancel_pending_keep_ref(f, false))
                continue;
            /* the executor's reference, and the queue's if it comes back
             * here: one atomic for both */
            uint32_t drop = 1;
            bool removed = false;
            if (atomic_load_explicit(&ex->remove_on_cancel, memory_order_relaxed)) {
                int rc = tk__queue_remove(ex, &f->node);
                /* TK_ENOENT: it may wait in a worker's batch (queue-access.c) */
                removed = rc == TK_OK || (rc == TK_ENOENT && tk__batch_steal(ex, &f->node));
                drop += removed;
            }
            tk__task_unref(f, drop);
            if (removed)
                tk__rewake_if_shutdown(ex);
            return TK_OK;
        }
        if (s == TK__TASK_RUNNING) {
            if (!tk__task_complete(f, TK__TASK_RUNNING, TK__TASK_CANCELLED))
                continue;
            if (may_interrupt)
                atomic_fetch_or(&f->waiters, TK__WAIT_INTERRUPTED);
            tk__shard_add(&tk__shard_here(tk__task_ex(f))->cancelled, 1);
            /* The worker finishes the task when the run returns. */
            return TK_ERUNNING;
        }
        return TK_EDONE;
    }
}

bool tk_future_is_done(const tk_future *f) {
    return f != NULL && tk__task_state_terminal(atomic_load(&((tk_future *)f)->state));
}

bool tk_future_is_cancelled(const tk_future *f) {
    if (f == NULL)
        return false;
    uint32_t s = atomic_load(&((tk_future *)f)->state);
    return s == TK__TASK_CANCELLED || s == TK__TASK_REMOVED;
}

bool tk_future_is_periodic(const tk_future *f) {
    return f != NULL && f->kind != TK_TASK_ONE_SHOT;
}

int tk_future_get_timeout(tk_future *f, int64_t timeout_ns, void **result) {
    if (f == NULL)
        return TK_EINVAL;
    if (tk__current.task == f)
        return TK_EDEADLK;
    uint32_t s = atomic_load_explicit(&f->state, memory_order_acquire);
    if (!tk__task_state_terminal(s)) {
        if (timeout_ns == 0)
            return TK_ETIMEDOUT;
        int64_t deadline =
            timeout_ns < 0 ? -1 : tk_deadline_after_ns(tk_clock_now_ns(), timeout_ns);
        int rc = TK_OK;
        /* Register, then read the state (see the get() protocol above). */
        uint32_t w = atomic_fetch_add(&f->waiters, 1) + 1;
        uint32_t gen = w & TK__WAIT_GEN_MASK;
        for (;;) {
            s = atomic_load(&f->state);
            if (tk__task_state_terminal(s))
                break;
            if ((w & TK__WAIT_GEN_MASK) != gen) {
                rc = TK_EINTR;
                break;
            }
            if (deadline >= 0 && tk_clock_now_ns() >= deadline) {
                rc = TK_ETIMEDOUT;
                break;
            }
            tk__futex_wait_until(&f->waiters, w, deadline);
            w = atomic_load(&f->waiters);
        }
        atomic_fetch_sub(&f->waiters, 1);
        if (rc != TK_OK)
            return rc;
    }
    switch (s) {
    case TK__TASK_COMPLETED:
        if (result != NULL)
            *result = f->u.result;
        return TK_OK;
    case TK__TASK_FAILED:
        return TK_ETASKFAILED;
    case TK__TASK_REMOVED:
        return TK_EREMOVED;
    default:
        return TK_ECANCELLED;
    }
}

int tk_future_get(tk_future *f, void **result) {
    return tk_future_get_timeout(f, -1, result);
}

/* u.status if a run failed or was vetoed; else 0. */
static int status_of(const tk_future *f) {
    uint8_t ran = atomic_load_explicit(&((tk_future *)f)->ran, memory_order_acquire);
    return ran == TK__RAN_FAILED || ran == TK__RAN_VETOED ? f->u.status : 0;
}

int tk_future_task_status(const tk_future *f) {
    return f == NULL ? 0 : status_of(f);
}

int tk_future_abort_get(tk_future *f) {
    if (f == NULL)
        return TK_EINVAL;
    uint32_t w = atomic_fetch_add(&f->waiters, TK__WAIT_GEN_ONE);
    if ((w & TK__WAIT_COUNT_MASK) != 0)
        tk__futex_wake_all(&f->waiters);
    return TK_OK;
}

/* ---- JDK 19 future states ------------------------------------------------ */

tk_task_state tk_future_state(const tk_future *f) {
    if (f == NULL)
        return TK_TASK_STATE_INVALID;
    /* acquire: a caller that sees SUCCESS may read the result */
    switch (atomic_load_explicit(&((tk_future *)f)->state, memory_order_acquire)) {
    case TK__TASK_COMPLETED:
        return TK_TASK_SUCCESS;
    case TK__TASK_FAILED:
        return TK_TASK_FAILED;
    case TK__TASK_CANCELLED:
    case TK__TASK_REMOVED: /* tk_executor_remove(): never ran, cancelled in all but name */
        return TK_TASK_CANCELLED;
    default: /* PENDING (queued, between periodic runs) or RUNNING */
        return TK_TASK_RUNNING;
    }
}

const char *tk_task_state_name(tk_task_state state) {
    switch (state) {
    case TK_TASK_RUNNING:
        return "RUNNING";
    case TK_TASK_SUCCESS:
        return "SUCCESS";
    case TK_TASK_FAILED:
        return "FAILED";
    case TK_TASK_CANCELLED:
        return "CANCELLED";
    default:
        return "UNKNOWN";
    }
}

int tk_future_result_now(const tk_future *f, void **result) {
    if (f == NULL)
        return TK_EINVAL;
    if (tk_future_state(f) != TK_TASK_SUCCESS)
        return TK_ESTATE;
    if (result != NULL)
        *result = f->u.result;
    return TK_OK;
}

int tk_future_exception_now(const tk_future *f, int *status) {
    if (f == NULL || status == NULL)
        return TK_EINVAL;
    if (tk_future_state(f) != TK_TASK_FAILED)
        return TK_ESTATE;
    *status = status_of(f);
    return TK_OK;
}

int64_t tk_future_remaining_ns(const tk_future *f) {
    if (f == NULL)
        return 0;
    int64_t deadline = tk__task_deadline(f);
    return tk__sat_add(deadline, -tk_clock_now_ns());
}

uint64_t tk_future_run_count(const tk_future *f) {
    if (f == NULL)
        return 0;
    if (f->kind != TK_TASK_ONE_SHOT)
        return atomic_load(&tk__task_big_of(f)->run_count);
    uint8_t ran = atomic_load_explicit(&((tk_future *)f)->ran, memory_order_acquire);
    return ran == TK__RAN_OK || ran == TK__RAN_FAILED ? 1 : 0;
}

uint64_t tk_future_skipped_count(const tk_future *f) {
    if (f == NULL || f->kind == TK_TASK_ONE_SHOT)
        return 0;
    return atomic_load(&tk__task_big_of(f)->skipped);
}

int tk_future_release(tk_future *f) {
    if (f == NULL || (f->bits & TK__TASK_USER_REF) == 0)
        return TK_EINVAL;
    /* mark and drop the user's reference in one step */
    uint32_t old = atomic_load_explicit(&f->refs, memory_order_relaxed);
    do {
        if ((old & TK__REF_USER_RELEASED) != 0)
            return TK_EINVAL;
    } while (!atomic_compare_exchange_weak_explicit(&f->refs, &old,
                                                    (old | TK__REF_USER_RELEASED) - 1,
                                                    memory_order_acq_rel, memory_order_relaxed));
    if ((old & TK__REF_COUNT_MASK) == 1)
        tk__task_free(f);
    return TK_OK;
}

/* ---- inside a task ----------------------------------------------------- */

void tk_run_set_result(tk_run *run, void *result) {
    /* Only a one-shot task completes with a result (a periodic task never
     * does, as in the JDK); its storage holds the skip count. */
    if (run != NULL && run->task != NULL && run->task->kind == TK_TASK_ONE_SHOT)
        run->task->u.result = result; /* fn's storage: see struct tk_future */
}

bool tk_run_interrupted(const tk_run *run) {
    if (run == NULL || run->task == NULL)
        return false;
    if ((atomic_load_explicit(&run->task->waiters, memory_order_relaxed) & TK__WAIT_INTERRUPTED) !=
        0)
        return true;
    /* shutdown_now() interrupts every running task: STOP and beyond. */
    return run->ex != NULL &&
           atomic_load_explicit(&run->ex->state, memory_order_relaxed) >= TK_POOL_STOP;
}

tk_executor *tk_run_executor(const tk_run *run) {
    return run == NULL ? NULL : run->ex;
}

void tk__run_info_fill(struct tk_run *run) {
    if (run->info_ready)
        return;
    tk__task_info(run->task, &run->info);
    run->info.fn = run->fn; /* the task's storage of fn may hold the result now */
    run->info_ready = true;
}

const tk_task_info *tk_run_info(const tk_run *run) {
    if (run == NULL)
        return NULL;
    /* the run is the caller's own (on its stack): filled on first use */
    tk__run_info_fill((struct tk_run *)run);
    return &run->info;
}

tk_future *tk_run_future(const tk_run *run) {
    return run == NULL ? NULL : run->task;
}
