/* timerkit executor: task objects, reference counts, futures, tk_run.
 *
 * A task object is recycled through the executor's bounded free list
 * (free_lock, a leaf lock held for a pointer swap). References are counted
 * in t->refs (see the essay in executor.c); the object returns to the free
 * list, or to the allocator, when the count reaches zero. get() blocks on the
 * task's state word with a futex, so no mutex or condition variable lives in
 * a task and a future stays usable after its executor is destroyed. */
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

static void futex_wake_all(_Atomic uint32_t *word) {
    (void)syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Sleeps while *word == expected, until woken or the absolute
 * CLOCK_MONOTONIC deadline (< 0: none). Spurious returns are fine. */
static void futex_wait_until(_Atomic uint32_t *word, uint32_t expected, int64_t deadline_ns) {
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

void tk__task_wake(tk__task *t) {
    if (atomic_load(&t->waiters) != 0)
        futex_wake_all(&t->state);
}

/* ---- executor lifetime ------------------------------------------------- */

void tk__free_list_drain(tk_executor *ex) {
    /* Marks the executor destroyed under free_lock, so no task is pushed on
     * the list after this drain; recycled objects count in ex->live. */
    pthread_mutex_lock(&ex->free_lock);
    ex->destroyed = true;
    tk__task *list = ex->free_head;
    ex->free_head = NULL;
    ex->free_len = 0;
    pthread_mutex_unlock(&ex->free_lock);
    size_t n = 0;
    while (list != NULL) {
        tk__task *next = list->free_next;
        tk__free(&ex->alloc, list, sizeof(*list));
        list = next;
        n++;
    }
    if (n > 0)
        atomic_fetch_sub_explicit(&ex->live, n, memory_order_acq_rel);
}

/* Drops one reference on the executor struct; the last one frees it. */
void tk__executor_live_release(tk_executor *ex) {
    if (atomic_fetch_sub_explicit(&ex->live, 1, memory_order_acq_rel) != 1)
        return;
    /* destroy() has run and every task object is gone: free the struct. */
    pthread_mutex_destroy(&ex->free_lock);
    pthread_mutex_destroy(&ex->pool_lock);
    pthread_cond_destroy(&ex->term_cond);
    tk_allocator a = ex->alloc;
    tk__free(&a, ex, sizeof(*ex));
}

/* ---- task objects ------------------------------------------------------ */

tk__task *tk__task_alloc(tk_executor *ex) {
    tk__task *t = NULL;
    pthread_mutex_lock(&ex->free_lock);
    if (ex->free_head != NULL) {
        t = ex->free_head;
        ex->free_head = t->free_next;
        ex->free_len--;
    }
    pthread_mutex_unlock(&ex->free_lock);
    if (t == NULL) {
        t = tk__alloc(&ex->alloc, sizeof(*t));
        if (t == NULL)
            return NULL;
        atomic_fetch_add_explicit(&ex->live, 1, memory_order_relaxed);
    }
    memset(t, 0, sizeof(*t)); /* all atomics start at 0 / PENDING / false */
    t->ex = ex;
    return t;
}

static void task_free(tk__task *t) {
    tk_executor *ex = t->ex;
    pthread_mutex_lock(&ex->free_lock);
    if (!ex->destroyed && ex->free_len < TK__FREE_LIST_MAX) {
        t->free_next = ex->free_head;
        ex->free_head = t;
        ex->free_len++;
        pthread_mutex_unlock(&ex->free_lock);
        return; /* still counted in ex->live */
    }
    pthread_mutex_unlock(&ex->free_lock);
    tk__free(&ex->alloc, t, sizeof(*t));
    tk__executor_live_release(ex);
}

void tk__task_discard_unused(tk__task *t) {
    task_free(t);
}

void tk__task_unref(tk__task *t, uint32_t n) {
    uint32_t old = atomic_fetch_sub_explicit(&t->refs, n, memory_order_acq_rel);
    assert(old >= n);
    if (old == n)
        task_free(t);
}

bool tk__task_complete(tk__task *t, uint32_t from, uint32_t to) {
    uint32_t expected = from;
    if (!atomic_compare_exchange_strong(&t->state, &expected, to))
        return false;
    tk__task_wake(t);
    return true;
}

void tk__task_info(const tk__task *t, tk_task_info *info) {
    info->fn = t->fn;
    info->arg = t->arg;
    info->kind = t->kind;
    info->deadline_ns = atomic_load_explicit(&t->deadline_ns, memory_order_relaxed);
    info->period_ns = t->kind == TK_TASK_ONE_SHOT ? 0 : t->period_ns;
    info->seq = t->node.seq;
    info->run_count = atomic_load_explicit(&t->run_count, memory_order_relaxed);
}

void tk__task_finish(tk__task *t, uint32_t extra) {
    if (t->arg_free != NULL)
        t->arg_free(t->arg);
    tk__task_unref(t, 1 + extra);
}

bool tk__task_cancel_pending(tk__task *t, bool hand_back) {
    if (!tk__task_complete(t, TK__TASK_PENDING, TK__TASK_CANCELLED))
        return false;
    atomic_fetch_add_explicit(&t->ex->cancelled_count, 1, memory_order_relaxed);
    if (hand_back)
        tk__task_unref(t, 1); /* the caller took over fn/arg */
    else
        tk__task_finish(t, 0);
    return true;
}

void tk__task_cancel_and_remove(tk__task *t) {
    tk_executor *ex = t->ex;
    tk__task_cancel_pending(t, false);
    int rc = ex->ops->remove(ex->q, &t->node);
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
            tk_executor *ex = f->ex;
            if (!tk__task_cancel_pending(f, false))
                continue;
            if (atomic_load_explicit(&ex->remove_on_cancel, memory_order_relaxed)) {
                int rc = ex->ops->remove(ex->q, &f->node);
                if (rc == TK_OK) {
                    tk__task_unref(f, 1);
                    tk__rewake_if_shutdown(ex);
                }
            }
            return TK_OK;
        }
        if (s == TK__TASK_RUNNING) {
            if (!tk__task_complete(f, TK__TASK_RUNNING, TK__TASK_CANCELLED))
                continue;
            if (may_interrupt)
                atomic_store(&f->interrupted, true);
            atomic_fetch_add_explicit(&f->ex->cancelled_count, 1, memory_order_relaxed);
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
    return f != NULL && atomic_load(&((tk_future *)f)->state) == TK__TASK_CANCELLED;
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
        bool timed_out = false;
        atomic_fetch_add(&f->waiters, 1);
        for (;;) {
            s = atomic_load(&f->state);
            if (tk__task_state_terminal(s))
                break;
            if (deadline >= 0 && tk_clock_now_ns() >= deadline) {
                timed_out = true;
                break;
            }
            futex_wait_until(&f->state, s, deadline);
        }
        atomic_fetch_sub(&f->waiters, 1);
        if (timed_out)
            return TK_ETIMEDOUT;
    }
    switch (s) {
    case TK__TASK_COMPLETED:
        if (result != NULL)
            *result = f->result;
        return TK_OK;
    case TK__TASK_FAILED:
        return TK_ETASKFAILED;
    default:
        return TK_ECANCELLED;
    }
}

int tk_future_get(tk_future *f, void **result) {
    return tk_future_get_timeout(f, -1, result);
}

int tk_future_task_status(const tk_future *f) {
    return f == NULL ? 0 : atomic_load(&((tk_future *)f)->task_status);
}

int64_t tk_future_remaining_ns(const tk_future *f) {
    if (f == NULL)
        return 0;
    int64_t deadline = atomic_load(&((tk_future *)f)->deadline_ns);
    return tk__sat_add(deadline, -tk_clock_now_ns());
}

uint64_t tk_future_run_count(const tk_future *f) {
    return f == NULL ? 0 : atomic_load(&((tk_future *)f)->run_count);
}

uint64_t tk_future_skipped_count(const tk_future *f) {
    return f == NULL ? 0 : atomic_load(&((tk_future *)f)->skipped);
}

int tk_future_release(tk_future *f) {
    if (f == NULL || !f->has_user_ref)
        return TK_EINVAL;
    if (atomic_exchange(&f->user_released, true))
        return TK_EINVAL;
    tk__task_unref(f, 1);
    return TK_OK;
}

/* ---- inside a task ----------------------------------------------------- */

void tk_run_set_result(tk_run *run, void *result) {
    if (run != NULL && run->task != NULL)
        run->task->result = result;
}

bool tk_run_interrupted(const tk_run *run) {
    if (run == NULL || run->task == NULL)
        return false;
    if (atomic_load_explicit(&run->task->interrupted, memory_order_relaxed))
        return true;
    /* shutdown_now() interrupts every running task: STOP and beyond. */
    return run->ex != NULL &&
           atomic_load_explicit(&run->ex->state, memory_order_relaxed) >= TK_POOL_STOP;
}

tk_executor *tk_run_executor(const tk_run *run) {
    return run == NULL ? NULL : run->ex;
}

const tk_task_info *tk_run_info(const tk_run *run) {
    return run == NULL ? NULL : &run->info;
}

tk_future *tk_run_future(const tk_run *run) {
    return run == NULL ? NULL : run->task;
}
