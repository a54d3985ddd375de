/* SPDX-License-Identifier: MIT */
/* timerkit executor: run-time control, as ThreadPoolExecutor's setters.
 *
 * Core pool size, keep-alive time and core thread time-out can change while
 * the pool runs; so can the rejection handler and the thread factory. Every
 * setting is written under pool_lock; the three the workers and the submit
 * path read on their way (core, target, keep_alive_ns, allow_core_timeout)
 * are atomics read lock-free, the two pairs (policy/handler/ctx,
 * factory/ctx) are read under pool_lock so each is seen whole.
 *
 * Worker life (JDK getTask() and processWorkerExit()). A worker "may time
 * out" while core thread time-out is allowed or more workers are alive than
 * the core size. Such a worker waits for work with poll(keep-alive); when
 * that times out it leaves, under pool_lock, if it still may time out and
 * another worker is alive or the queue is empty; so the last worker stays
 * while anything is queued, a delayed task included, and no task is ever
 * stranded or run late. A worker that may not time out waits without a
 * time-out.
 *
 * Settings reach idle workers at once, as the JDK's interruptIdleWorkers()
 * makes them: a setter bumps settings_gen and calls the engine's wake(),
 * which makes every blocked take() return TK_EINTR; the worker reads the
 * settings again. A worker records the generation it read (seen_gen) and
 * that it is on its way into a wait (waiting) before it reads the settings,
 * so a setter that ran between its reading and its blocking finds it
 * waiting with an old generation and wakes again until it has seen the new
 * one (tk__wake_idle_workers: such a worker is between two calls of the
 * library, never in user code, so this takes microseconds). On an engine
 * without wake() a worker that may not time out waits in slices of
 * TK__IDLE_RECHECK_NS instead, and re-reads the settings between them.
 *
 * Leaving races with submission. A retiring worker decrements wc under
 * pool_lock after it saw the queue, and then looks at the queue again and
 * stays after all if work arrived and no worker is left. A submitter
 * offers, then reads wc (sequentially consistent) and starts a worker if it
 * reads 0 (tk__ensure_worker, JDK ensurePrestart). The engine lock orders
 * the worker's looks at the queue and the submitter's offer: either the
 * worker sees the task (and stays), or its decrement happened before the
 * submitter's read (which then starts a worker).
 *
 * A worker that left is joinable until a later thread start (or destroy())
 * joins it and folds its counters into the executor's (tk__reap_workers).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>

#include "executor-internal.h"

/* ---- workers ------------------------------------------------------------- */

/* Whether a worker may time out with `wc` workers counted. */
static bool may_time_out(const tk_executor *ex, unsigned wc) {
    tk_executor *m = (tk_executor *)ex;
    return atomic_load(&m->allow_core_timeout) || wc > atomic_load(&m->core);
}

/* One wait of a worker for work, with the settings as it read them. */
static int take_once(tk_executor *ex, bool wake, tk_node **out, size_t *count) {
    bool timed = may_time_out(ex, atomic_load(&ex->wc));
    if (ex->batch && !timed && atomic_load(&ex->target) == 1) {
        /* One thread: take a batch; take_batch (which cannot time out) waits
         * for the first node to fall due. Without wake() an empty queue is
         * waited on below, in slices, so that an idle worker notices a
         * change of settings; one emptied by removals while take_batch
         * waits notices it only when work arrives. A look at the head
         * (peek) would spare that wait but costs the wheel its core_lock,
         * which its tick thread holds for the whole pass that publishes a
         * burst: the worker would start only once the last node of the
         * burst is published. */
        if (wake || ex->ops->size(ex->q) > 0)
            return ex->ops->take_batch(ex->q, TK__TAKE_BATCH, out, count);
    }
    *count = 1;
    if (!timed) {
        if (wake)
            return ex->ops->take(ex->q, out);
        int rc = ex->ops->poll(ex->q, TK__IDLE_RECHECK_NS, out);
        return rc == TK_ETIMEDOUT ? TK_EINTR : rc; /* a slice ended: look again */
    }
    int64_t wait = atomic_load(&ex->keep_alive_ns);
    /* The last worker stays while anything is queued (see
     * tk__worker_retire): it need not wake every keep-alive. */
    if (wait < TK__IDLE_RECHECK_NS && atomic_load(&ex->wc) <= 1 && ex->ops->size(ex->q) > 0)
        wait = TK__IDLE_RECHECK_NS;
    return ex->ops->poll(ex->q, wait, out);
}

int tk__worker_take(tk_executor *ex, tk_node **out, size_t *count) {
    tk__worker *w = tk__current.worker;
    bool wake = ex->ops->wake != NULL;
    for (;;) {
        if (wake) { /* before the settings are read: see the opening comment */
            atomic_store(&w->seen_gen, atomic_load(&ex->settings_gen));
            atomic_store(&w->waiting, true);
        }
        int rc = take_once(ex, wake, out, count);
        if (wake)
            atomic_store_explicit(&w->waiting, false, memory_order_relaxed);
        if (rc != TK_EINTR)
            return rc;
        /* woken to read the settings again, or an idle slice ended */
    }
}

void tk__wake_idle_workers(tk_executor *ex) {
    uint64_t gen = atomic_fetch_add(&ex->settings_gen, 1) + 1;
    if (ex->ops->wake == NULL)
        return; /* the workers look again within TK__IDLE_RECHECK_NS */
    for (unsigned round = 0;; round++) {
        ex->ops->wake(ex->q);
        bool behind = false;
        pthread_mutex_lock(&ex->pool_lock);
        for (const tk__worker *w = ex->workers; w != NULL && !behind; w = w->next)
            behind = !w->exited && atomic_load(&w->waiting) && atomic_load(&w->seen_gen) < gen;
        pthread_mutex_unlock(&ex->pool_lock);
        if (!behind)
            return;
        /* a worker read the settings before the change and is not blocked
         * yet: let it get there, then wake again */
        if (round < 64) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

bool tk__worker_retire(tk_executor *ex, tk__worker *w) {
    pthread_mutex_lock(&ex->pool_lock);
    unsigned wc = atomic_load(&ex->wc);
    /* JDK getTask(): (timed && timedOut) && (wc > 1 || workQueue.isEmpty()) */
    bool leave = may_time_out(ex, wc) && (wc > 1 || ex->ops->size(ex->q) == 0);
    if (leave) {
        atomic_fetch_sub(&ex->wc, 1);
        ex->alive--;
        tk__try_terminate_locked(ex); /* a SHUTDOWN pool may end here */
    }
    pthread_mutex_unlock(&ex->pool_lock);
    if (!leave)
        return false;
    /* JDK processWorkerExit(): work that arrived after the look above, from
     * a submitter that read wc before the decrement, needs a thread. This
     * one stays instead of starting a replacement that could fail. */
    if (atomic_load(&ex->state) < TK_POOL_STOP && atomic_load(&ex->wc) == 0 &&
        ex->ops->size(ex->q) > 0) {
        pthread_mutex_lock(&ex->pool_lock);
        bool stay = atomic_load(&ex->state) < TK_POOL_STOP && atomic_load(&ex->wc) == 0;
        if (stay) {
            atomic_fetch_add(&ex->wc, 1);
            ex->alive++;
        }
        pthread_mutex_unlock(&ex->pool_lock);
        if (stay)
            return false;
    }
    pthread_mutex_lock(&ex->pool_lock);
    w->exited = true; /* joinable from now on (tk__reap_workers) */
    pthread_mutex_unlock(&ex->pool_lock);
    return true;
}

bool tk__ensure_worker(tk_executor *ex) {
    if (atomic_load(&ex->wc) > 0)
        return true;
    if (tk__add_worker(ex, atomic_load(&ex->target), true) == 1)
        return true;
    pthread_mutex_lock(&ex->pool_lock);
    bool alive = atomic_load(&ex->wc) > 0; /* another thread started one */
    pthread_mutex_unlock(&ex->pool_lock);
    return alive;
}

static bool is_node(const tk_node *n, void *own) {
    return n == own; /* compares addresses only */
}

bool tk__pull_if_queued(tk_executor *ex, const tk_node *n) {
    return ex->ops->remove_if(ex->q, is_node, (void *)n) != NULL;
}

void tk__reap_workers(tk_executor *ex) {
    tk__worker *own = tk__own_worker(ex);
    if (own != NULL && own->exited)
        return; /* two leaving workers must not join each other */
    if (atomic_load(&ex->state) >= TK_POOL_TIDYING)
        return; /* destroy() joins what is left */
    tk__worker *found[16];
    size_t k = 0;
    pthread_mutex_lock(&ex->pool_lock);
    for (tk__worker *w = ex->workers; w != NULL && k < 16; w = w->next) {
        if (w->exited && w->started && !w->reaping && w != own) {
            w->reaping = true;
            found[k++] = w;
        }
    }
    pthread_mutex_unlock(&ex->pool_lock);
    if (k == 0)
        return;
    for (size_t i = 0; i < k; i++)
        pthread_join(found[i]->thread, NULL);
    /* Unlink and fold in one critical section, so tk_executor_stats_get()
     * (which sums the list under pool_lock) never misses a count. */
    pthread_mutex_lock(&ex->pool_lock);
    for (size_t i = 0; i < k; i++) {
        tk__worker *w = found[i];
        for (tk__worker **p = &ex->workers; *p != NULL; p = &(*p)->next) {
            if (*p == w) {
                *p = w->next;
                break;
            }
        }
        atomic_fetch_add_explicit(&ex->runs, atomic_load_explicit(&w->runs, memory_order_relaxed),
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&ex->completed_count,
                                  atomic_load_explicit(&w->completed, memory_order_relaxed),
                                  memory_order_relaxed);
    }
    pthread_mutex_unlock(&ex->pool_lock);
    for (size_t i = 0; i < k; i++)
        tk__free(&ex->alloc, found[i], sizeof(*found[i]));
}

/* ---- core pool size ------------------------------------------------------ */

int tk_executor_set_core_pool_size(tk_executor *ex, unsigned n) {
    if (ex == NULL || n > TK_EXECUTOR_MAX_THREADS)
        return TK_EINVAL;
    pthread_mutex_lock(&ex->pool_lock);
    unsigned old = atomic_load(&ex->core);
    atomic_store(&ex->core, n);
    atomic_store(&ex->target, n > 0 ? n : 1);
    pthread_mutex_unlock(&ex->pool_lock);
    if (n != old) /* excess workers may time out now; a one-thread pool's batches change */
        tk__wake_idle_workers(ex);
    if (n <= old)
        return TK_OK; /* excess workers leave when idle (tk__worker_take) */
    /* JDK setCorePoolSize: start up to min(delta, queue size) threads,
     * stopping when the queue is empty. A start that fails is left to the
     * submissions, which start threads as they need them. */
    size_t k = ex->ops->size(ex->q);
    if (k > n - old)
        k = n - old;
    while (k-- > 0 && ex->ops->size(ex->q) > 0) {
        if (tk__add_worker(ex, n, true) != 1)
            break;
    }
    return TK_OK;
}

unsigned tk_executor_get_core_pool_size(const tk_executor *ex) {
    return ex == NULL ? 0 : atomic_load(&((tk_executor *)ex)->core);
}

/* ---- keep-alive and core thread time-out ---------------------------------- */

int tk_executor_set_keep_alive(tk_executor *ex, int64_t ns) {
    if (ex == NULL || ns < 0)
        return TK_EINVAL;
    int rc = TK_OK;
    pthread_mutex_lock(&ex->pool_lock);
    int64_t old = atomic_load(&ex->keep_alive_ns);
    if (ns == 0 && atomic_load(&ex->allow_core_timeout))
        rc = TK_EINVAL; /* JDK: time is zero and allowsCoreThreadTimeOut */
    else
        atomic_store(&ex->keep_alive_ns, ns);
    pthread_mutex_unlock(&ex->pool_lock);
    if (rc == TK_OK && ns < old)
        tk__wake_idle_workers(ex); /* JDK: a shorter keep-alive interrupts idle workers */
    return rc;
}

int64_t tk_executor_get_keep_alive(const tk_executor *ex) {
    return ex == NULL ? TK_EINVAL : atomic_load(&((tk_executor *)ex)->keep_alive_ns);
}

int tk_executor_allow_core_thread_timeout(tk_executor *ex, bool on) {
    if (ex == NULL)
        return TK_EINVAL;
    int rc = TK_OK;
    pthread_mutex_lock(&ex->pool_lock);
    bool old = atomic_load(&ex->allow_core_timeout);
    if (on && atomic_load(&ex->keep_alive_ns) <= 0)
        rc = TK_EINVAL; /* JDK: "Core threads must have nonzero keep alive times" */
    else
        atomic_store(&ex->allow_core_timeout, on);
    pthread_mutex_unlock(&ex->pool_lock);
    if (rc == TK_OK && on && !old)
        tk__wake_idle_workers(ex); /* JDK: interruptIdleWorkers() */
    return rc;
}

bool tk_executor_allows_core_thread_timeout(const tk_executor *ex) {
    return ex != NULL && atomic_load(&((tk_executor *)ex)->allow_core_timeout);
}

/* ---- rejection handler and thread factory --------------------------------- */

int tk_executor_set_rejection(tk_executor *ex, tk_rejection_policy policy, tk_reject_fn fn,
                              void *ctx) {
    if (ex == NULL || (int)policy < TK_REJECT_ABORT || (int)policy > TK_REJECT_CUSTOM)
        return TK_EINVAL;
    if (policy == TK_REJECT_CUSTOM && fn == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&ex->pool_lock);
    ex->rejection = policy;
    ex->reject = fn;
    ex->reject_ctx = ctx;
    pthread_mutex_unlock(&ex->pool_lock);
    return TK_OK;
}

int tk_executor_get_rejection(const tk_executor *cex, tk_rejection_policy *policy, tk_reject_fn *fn,
                              void **ctx) {
    if (cex == NULL)
        return TK_EINVAL;
    tk_executor *ex = (tk_executor *)cex;
    pthread_mutex_lock(&ex->pool_lock);
    if (policy != NULL)
        *policy = ex->rejection;
    if (fn != NULL)
        *fn = ex->reject;
    if (ctx != NULL)
        *ctx = ex->reject_ctx;
    pthread_mutex_unlock(&ex->pool_lock);
    return TK_OK;
}

int tk_executor_set_thread_factory(tk_executor *ex, tk_thread_factory_fn fn, void *ctx) {
    if (ex == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&ex->pool_lock);
    ex->thread_factory = fn;
    ex->thread_factory_ctx = ctx;
    pthread_mutex_unlock(&ex->pool_lock);
    return TK_OK;
}

int tk_executor_get_thread_factory(const tk_executor *cex, tk_thread_factory_fn *fn, void **ctx) {
    if (cex == NULL)
        return TK_EINVAL;
    tk_executor *ex = (tk_executor *)cex;
    pthread_mutex_lock(&ex->pool_lock);
    if (fn != NULL)
        *fn = ex->thread_factory;
    if (ctx != NULL)
        *ctx = ex->thread_factory_ctx;
    pthread_mutex_unlock(&ex->pool_lock);
    return TK_OK;
}
