/* SPDX-License-Identifier: MIT */
/* timerkit executor: worker threads and the run loop.
 *
 * A worker takes due nodes from the engine and runs them (its wait, and its
 * leaving after an idle keep-alive time, are in control.c); it exits when
 * take() reports TK_ECLOSED and, under pool_lock, the pool is stopping or the
 * queue is really empty (JDK getTask()/processWorkerExit(): the emptiness
 * check and the worker-count decrement are one step under the pool lock, so
 * a submitter that offers a task and then looks at the worker count under the
 * same lock either sees the worker gone and starts another, or the worker
 * sees the task and stays). The last worker out takes the pool to TIDYING
 * and TERMINATED (tk__try_terminate_locked). */
#define _GNU_SOURCE
#include <assert.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "executor-internal.h"

/* ---- one run ----------------------------------------------------------- */

int tk__invoke(tk_executor *ex, tk__task *t, bool hooks, tk_task_info *info_out, int64_t *end_ns) {
    struct tk_run run;
    run.task = t;
    run.ex = ex;
    run.fn = t->u.fn;
    run.info_ready = false;
    /* The task's info costs loads of fields a run rarely needs: filled now
     * only if a hook or the caller wants it (before fn can change what it
     * reads), else when fn asks (tk_run_info). */
    if (info_out != NULL ||
        (hooks && (ex->hooks.before_execute != NULL || ex->hooks.after_execute != NULL)))
        tk__run_info_fill(&run);

    tk__task *saved = tk__current.task;
    tk__current.task = t;
    if (hooks && ex->hooks.before_execute != NULL) {
        /* A veto (JDK: beforeExecute threw): fn does not run, and neither
         * does after_execute (runWorker calls afterExecute only around
         * task.run()); the caller fails the task with the veto as status. */
        int veto = ex->hooks.before_execute(ex, &run.info, ex->hooks.ctx);
        if (veto != 0) {
            tk__task_set_status(t, veto, true);
            tk__current.task = saved;
            if (end_ns != NULL)
                *end_ns = tk_clock_now_ns();
            if (info_out != NULL)
                *info_out = run.info;
            return veto;
        }
    }

    if (t->kind == TK_TASK_ONE_SHOT)
        t->u.result = NULL; /* its storage is the result's from now on */
    int status = run.fn(&run, t->arg);
    if (end_ns != NULL)
        *end_ns = tk_clock_now_ns(); /* fixed delay counts from here (JDK) */

    /* one writer: runs of a task never overlap (a periodic task is offered
     * again only after its run), so no read-modify-write */
    if (t->kind != TK_TASK_ONE_SHOT)
        tk__bump(&tk__task_big_of(t)->run_count);
    if (status != 0)
        tk__task_set_status(t, status, false);
    else if (t->kind == TK_TASK_ONE_SHOT)
        atomic_store_explicit(&t->ran, TK__RAN_OK, memory_order_release);
    tk__count(ex, true);
    if (status != 0)
        atomic_fetch_add_explicit(&ex->failed_count, 1, memory_order_relaxed);
    if (hooks && ex->hooks.after_execute != NULL) {
        bool cancelled = atomic_load(&t->state) == TK__TASK_CANCELLED;
        ex->hooks.after_execute(ex, &run.info, cancelled ? TK_ECANCELLED : status, ex->hooks.ctx);
    }
    tk__current.task = saved;
    if (info_out != NULL)
        *info_out = run.info;
    return status;
}

void tk__finish_one_shot(tk_executor *ex, tk__task *t, int status, uint32_t extra) {
    /* arg_free first, so that a future seen done (get(), is_done()) has had
     * its arg_free run; only a cancel during the run publishes earlier. */
    tk__task_drop_arg(t);
    /* If the CAS fails the run was cancelled while running (already counted).
     * completed_count is the worker's (run_batch), as in the JDK. */
    (void)ex;
    (void)tk__task_complete(t, TK__TASK_RUNNING,
                            status == 0 ? TK__TASK_COMPLETED : TK__TASK_FAILED);
    if ((t->bits & TK__TASK_USER_REF) == 0 &&
        atomic_load_explicit(&t->refs, memory_order_relaxed) == 1 + extra)
        tk__task_discard_unused(t); /* the last references are ours: no atomic */
    else
        tk__task_unref(t, 1 + extra);
}

/* The next deadline of a periodic task after a successful run. Called by the
 * worker that owns the node. */
static int64_t next_deadline(tk_executor *ex, tk__task *t, int64_t run_end_ns) {
    int64_t prev = t->node.deadline_ns;
    int64_t period = tk__task_period(t);
    if (t->kind == TK_TASK_FIXED_DELAY)
        return tk_deadline_after_ns(run_end_ns, period);
    int64_t next = tk__sat_add(prev, period); /* fixed rate: catch up */
    if ((t->flags & TK_TASK_SKIP_MISSED) != 0 && next != INT64_MAX) {
        int64_t now = tk_clock_now_ns();
        if (next < now) {
            /* Due times next, next+p, ... that are already past are skipped;
             * the next run is the first due time >= now. */
            uint64_t behind = (uint64_t)now - (uint64_t)next;
            uint64_t missed = (behind + (uint64_t)period - 1) / (uint64_t)period;
            next = tk__sat_add(next, (int64_t)(missed * (uint64_t)period));
            atomic_fetch_add_explicit(&tk__task_big_of(t)->skipped, missed, memory_order_relaxed);
            atomic_fetch_add_explicit(&ex->skipped_periods, missed, memory_order_relaxed);
        }
    }
    return next;
}

/* Runs a node a worker took from the queue. The worker holds the queue's
 * reference ("holder reference") and gives it up here. No lock held. */
void tk__run_task(tk_executor *ex, tk__task *t) {
    int s = atomic_load(&ex->state);
    if (s != TK_POOL_RUNNING && !tk__can_run_in_state(ex, &t->node, s)) {
        /* JDK ScheduledFutureTask.run(): cancel(false) if it may not run. */
        tk__task_cancel_pending(t, false);
        tk__task_unref(t, 1);
        return;
    }
    /* A one-shot task scheduled without a future is this worker's alone
     * once taken: nobody else holds its address (its callback gets it, for
     * the run's duration, through tk_run_future()), so nobody cancelled it
     * and no CAS is needed to start it; its end still races with a cancel
     * through that borrowed future, and stays a CAS. */
    bool sole = t->kind == TK_TASK_ONE_SHOT && (t->bits & TK__TASK_USER_REF) == 0;
    uint32_t expected = TK__TASK_PENDING;
    if (sole)
        atomic_store_explicit(&t->state, TK__TASK_RUNNING, memory_order_relaxed);
    else if (!atomic_compare_exchange_strong(&t->state, &expected, TK__TASK_RUNNING)) {
        tk__task_unref(t, 1); /* cancelled while queued: the canceller finished it */
        return;
    }

    tk__worker *w = tk__current.worker; /* run_task runs on ex's workers only */
    atomic_store_explicit(&w->active, 1, memory_order_relaxed);
    tk_task_info info;
    int64_t end_ns = 0;
    /* the info only the periodic-failure hook uses */
    bool want_info = t->kind != TK_TASK_ONE_SHOT && ex->hooks.periodic_failed != NULL;
    int status = tk__invoke(ex, t, true, want_info ? &info : NULL,
                            t->kind == TK_TASK_FIXED_DELAY ? &end_ns : NULL);
    atomic_store_explicit(&w->active, 0, memory_order_relaxed);

    if (t->kind == TK_TASK_ONE_SHOT) {
        tk__finish_one_shot(ex, t, status, 1);
        return;
    }
    if (status != 0) {
        /* A failed periodic run ends the task (the JDK suppresses later runs);
         * tk__invoke recorded the status. */
        if (tk__task_complete(t, TK__TASK_RUNNING, TK__TASK_FAILED)) {
            atomic_fetch_add_explicit(&ex->failed_periodic_count, 1, memory_order_relaxed);
            if (ex->hooks.periodic_failed != NULL)
                ex->hooks.periodic_failed(ex, &info, status, ex->hooks.ctx);
        }
        tk__task_finish(t, 1);
        return;
    }
    int64_t next = next_deadline(ex, t, end_ns);
    expected = TK__TASK_RUNNING;
    if (!atomic_compare_exchange_strong(&t->state, &expected, TK__TASK_PENDING)) {
        tk__task_finish(t, 1); /* cancelled during the run: no further run */
        return;
    }
    /* the worker owns the node; others read the deadline atomically */
    __atomic_store_n(&t->node.deadline_ns, next, __ATOMIC_RELAXED);
    tk__requeue_periodic(ex, t);
}

/* ---- worker threads ---------------------------------------------------- */

/* Runs (or drops) one node taken from the queue, then counts it completed:
 * the JDK's worker counts every task it took, whether its run finished or
 * it found the task cancelled and dropped it. */
static void run_node(tk_executor *ex, tk__worker *w, tk_node *n) {
    if (tk__node_is_timer(n))
        tk__run_timer(ex, tk__timer_of(n));
    else
        tk__run_task(ex, tk__task_of(n));
    tk__bump(&w->completed);
}

/* Runs the `count` nodes of a list from take_batch() (or the one node from
 * take()), in order. The nodes not started yet stay published in the
 * worker's batch (queue-access.c), so they still count as queued and
 * shutdown_now() or remove() can take them out; the worker pops them one at
 * a time. The engine's pop brought each node's first line in; the line a
 * task's run reads next (fn, arg, ...) is fetched for the next node while
 * this one runs (tk__batch_pop). */
static void run_batch(tk_executor *ex, tk__worker *w, tk_node *n, size_t count) {
    if (count == 1) {
        run_node(ex, w, n);
        return;
    }
    tk__batch_publish(ex, w, n, count);
    while ((n = tk__batch_pop(ex, w)) != NULL)
        run_node(ex, w, n);
}

static void *worker_main(void *arg) {
    tk__worker *w = arg;
    tk_executor *ex = w->ex;
    tk__current.ex = ex;
    tk__current.worker = w;
    if (!w->factory)
        tk__thread_set_name(w->name);
    if (ex->timer_slack_ns >= 0)
        (void)prctl(PR_SET_TIMERSLACK, (unsigned long)ex->timer_slack_ns, 0, 0, 0);

    unsigned spins = 0;
    for (;;) {
        tk_node *n = NULL;
        size_t count = 0;
        int rc = tk__worker_take(ex, &n, &count); /* control.c */
        if (rc == TK_OK) {
            spins = 0;
            run_batch(ex, w, n, count);
            tk__worker_flush_frees(w); /* before the next take may block */
            continue;
        }
        if (rc == TK_ETIMEDOUT) {
            if (!tk__worker_retire(ex, w))
                continue;
            /* Left the pool (idle for its keep-alive time). */
            tk__worker_flush_frees(w);
            tk__current.worker = NULL;
            return NULL;
        }
        if (rc != TK_ECLOSED) {
            /* Not part of the contract; back off rather than spin. */
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        pthread_mutex_lock(&ex->pool_lock);
        if (atomic_load(&ex->state) < TK_POOL_STOP && ex->ops->size(ex->q) > 0) {
            /* A node arrived after take() saw the queue empty: stay. */
            pthread_mutex_unlock(&ex->pool_lock);
            if (++spins > 64)
                sched_yield();
            continue;
        }
        atomic_fetch_sub(&ex->wc, 1);
        ex->alive--;
        w->exited = true;
        tk__try_terminate_locked(ex);
        pthread_mutex_unlock(&ex->pool_lock);
        /* The terminated hook may have run here and freed tasks (a schedule
         * it made, rejected); from now on this thread frees like any other. */
        tk__worker_flush_frees(w);
        tk__current.worker = NULL;
        return NULL;
    }
}

static void unlink_worker_locked(tk_executor *ex, tk__worker *w) {
    for (tk__worker **p = &ex->workers; *p != NULL; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            return;
        }
    }
}

int tk__add_worker(tk_executor *ex, unsigned limit, bool shutdown_ok) {
    tk__reap_workers(ex); /* threads that timed out (control.c) */
    tk__worker *w = tk__alloc(&ex->alloc, sizeof(*w));
    if (w == NULL)
        return TK_ENOMEM;
    memset(w, 0, sizeof(*w));
    w->ex = ex;

    pthread_mutex_lock(&ex->pool_lock);
    int s = atomic_load(&ex->state);
    bool admitted = s == TK_POOL_RUNNING || (shutdown_ok && s == TK_POOL_SHUTDOWN);
    unsigned wc = atomic_load(&ex->wc);
    if (!admitted || wc >= limit) {
        pthread_mutex_unlock(&ex->pool_lock);
        tk__free(&ex->alloc, w, sizeof(*w));
        return 0;
    }
    atomic_store(&ex->wc, wc + 1); /* reserve the slot (JDK addWorker's CAS) */
    unsigned n = ++ex->thread_seq;
    snprintf(w->name, sizeof(w->name), "%s-%u", ex->name_prefix, n);
    w->next = ex->workers;
    ex->workers = w;
    /* the factory and its ctx as one pair (tk_executor_set_thread_factory) */
    tk_thread_factory_fn factory = ex->thread_factory;
    void *factory_ctx = ex->thread_factory_ctx;
    w->factory = factory != NULL;
    pthread_mutex_unlock(&ex->pool_lock);

    /* No lock held: the factory is user code. */
    int rc;
    if (factory != NULL)
        rc = factory(factory_ctx, &w->thread, worker_main, w, w->name);
    else
        rc = pthread_create(&w->thread, NULL, worker_main, w);

    pthread_mutex_lock(&ex->pool_lock);
    if (rc != 0) {
        unlink_worker_locked(ex, w);
        atomic_fetch_sub(&ex->wc, 1);
        tk__try_terminate_locked(ex); /* JDK addWorkerFailed() */
        pthread_mutex_unlock(&ex->pool_lock);
        tk__free(&ex->alloc, w, sizeof(*w));
        return TK_ETHREAD;
    }
    w->started = true;
    /* largest_pool_size counts threads really created (JDK: workers added),
     * not slots reserved for a start that failed. `alive` may already have
     * been decremented by this very worker if it exited at once. */
    int alive = ++ex->alive;
    if (alive > 0 && (unsigned)alive > atomic_load_explicit(&ex->largest, memory_order_relaxed))
        atomic_store_explicit(&ex->largest, (unsigned)alive, memory_order_relaxed);
    pthread_mutex_unlock(&ex->pool_lock);
    return 1;
}
