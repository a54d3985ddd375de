/* SPDX-License-Identifier: MIT */
/* timerkit executor: a ScheduledThreadPoolExecutor on a pluggable engine.
 *
 * Design
 * ======
 * The executor follows the JDK's ScheduledThreadPoolExecutor (STPE) on top
 * of ThreadPoolExecutor (TPE), with the engine (tk_queue_ops) in the role of
 * DelayedWorkQueue. This file holds the lifecycle, pool states, shutdown,
 * termination, policies and counters; executor-internal.h lists the others.
 *
 * Pool states (ex->state, tk_pool_state), as TPE's runState:
 *   RUNNING -> SHUTDOWN -> (STOP) -> TIDYING -> TERMINATED, never backwards.
 * Transitions happen under pool_lock; the submit path and workers read the
 * state lock-free (sequentially consistent atomics). The worker count
 * (ex->wc) is a separate atomic, changed only under pool_lock. TPE packs both
 * into ctl so that addWorker can CAS them together; here addWorker and worker
 * exit take pool_lock instead, which is off the submit fast path.
 *
 * Tasks. A task (struct tk_future, future.c) embeds its tk_node; the engine
 * hands nodes back and tk__container_of recovers the task. Every task IS its
 * future. States (atomic, t->state):
 *   PENDING --worker CAS--> RUNNING --one-shot--> COMPLETED | FAILED
 *                              |----periodic ok--> PENDING (re-queued)
 *                              '----periodic fail-> FAILED
 *   PENDING | RUNNING --cancel CAS--> CANCELLED
 *   PENDING --tk_executor_remove() CAS--> REMOVED (queue-access.c)
 * Every terminal transition is one CAS, so exactly one party wins: a cancel
 * of a pending task wins against the worker that took it (the worker's
 * PENDING->RUNNING CAS fails and it drops the node); a cancel of a running
 * task makes the worker's RUNNING->x CAS fail, so it neither completes nor
 * re-queues. get() blocks with a futex on the task's waiters word (future.c).
 *
 * References (t->refs). The task object goes back to its slab (future.c)
 * when the count drops to zero:
 *   - the user's, if a future was handed out (tk_future_release drops it
 *     and sets TK__REF_USER_RELEASED in the same word, which catches a
 *     second release);
 *   - the executor's, from submission until the executor is done with the
 *     task: dropped together with arg_free by whoever ends it (the worker
 *     after the last run, the canceller of a pending task, the rejection
 *     policy, shutdown);
 *   - the queue's, while the engine owns the node. A worker that takes the
 *     node holds that reference ("holder") until it re-offers the node
 *     (periodic) or is done with it. If remove() returns TK_OK the remover
 *     gets it; TK_EINPROGRESS: the engine's release callback drops it later;
 *     TK_ENOENT: a worker holds it and drops it on seeing CANCELLED.
 *   - a guard while a worker re-queuing a periodic task re-checks the pool
 *     state after offer(), when the node may already be run and finished by
 *     another worker. A submitter asking for a future re-checks through the
 *     user's reference; one that asked for none holds no reference after
 *     offer(): its re-check reads only what it copied before, and takes the
 *     task back only by finding its node among the queued ones (submit.c,
 *     take_back), so it never touches a task a worker may have freed.
 * arg_free runs exactly once, where the executor reference is dropped; for a
 * one-shot run it runs before the future is published as done.
 * The executor struct itself lives until destroy() has run and the last task
 * slab is freed (ex->live), so a future released after destroy() is fine.
 *
 * Locks and what they guard:
 *   pool_lock  the state transitions, worker creation and exit (wc changes),
 *              the workers list, termination (term_cond). Never held while
 *              calling user code (thread factory, hooks, fn, arg_free).
 *   batch_lock every worker's pending batch (queue-access.c); a leaf
 *              spin lock (tk__spinlock), taken after pool_lock where both
 *              are.
 *   slab_lock  the task slabs (future.c); a leaf spin lock: nothing is
 *              called while held.
 *   engine     each engine's own lock, inside its ops.
 * Lock order: pool_lock -> engine lock (size() under pool_lock);
 * slab_lock is innermost. Neither executor lock is held across fn, a hook,
 * arg_free, a factory or a rejection handler ("detach, then run").
 *
 * Shutdown races with submission (JDK delayedExecute). The submitter reads
 * the state (RUNNING or reject), offers, and reads the state again. If the
 * pool left RUNNING meanwhile and the task may not run in the new state, it
 * is cancelled and removed (all three remove() results handled); if the
 * shutdown policies keep it, a worker is made sure of under pool_lock
 * (ensurePrestart). A worker exits only when, under pool_lock, the pool is
 * stopping or the queue is empty (or, timed out idle, when another worker is
 * alive: control.c, which also covers the submit side of that race), and
 * decrements wc in the same critical section; so a submitter that offered
 * and then looks under pool_lock either sees the worker gone (and starts
 * one, or, past SHUTDOWN, pulls its task out) or the worker saw the task
 * and stayed. shutdown() sets SHUTDOWN before
 * its remove_if() sweep, so a task offered concurrently is either swept or
 * seen by its submitter's re-check. shutdown_now() closes the queue (NOW)
 * before draining it, so every offer either lands before the drain (handed
 * back) or fails with TK_ECLOSED (rejected). Nothing is lost: every accepted
 * task runs, is cancelled (its future says so) or is handed back.
 *
 * Per-thread state: only tk__current (future.c): the executor a pool thread
 * belongs to and the task the thread is running, for the TK_EDEADLK checks.
 */
#define _GNU_SOURCE
#include <string.h>

#include "executor-internal.h"

/* ---- helpers ----------------------------------------------------------- */

bool tk__can_run(const tk_executor *ex, bool periodic, int64_t deadline_ns, int state) {
    /* JDK canRunInCurrentRunState */
    if (state == TK_POOL_RUNNING)
        return true;
    if (state >= TK_POOL_STOP)
        return false;
    if (periodic)
        return atomic_load_explicit(&((tk_executor *)ex)->continue_periodic, memory_order_relaxed);
    if (atomic_load_explicit(&((tk_executor *)ex)->execute_delayed, memory_order_relaxed))
        return true;
    return deadline_ns <= tk_clock_now_ns();
}

bool tk__can_run_in_state(const tk_executor *ex, const tk_node *n, int state) {
    /* a timer is a one-shot */
    if (state == TK_POOL_RUNNING)
        return true;
    bool periodic = !tk__node_is_timer(n) && tk__task_of((tk_node *)n)->kind != TK_TASK_ONE_SHOT;
    return tk__can_run(ex, periodic, __atomic_load_n(&n->deadline_ns, __ATOMIC_RELAXED), state);
}

void tk__try_terminate_locked(tk_executor *ex) {
    int s = atomic_load(&ex->state);
    if (s == TK_POOL_RUNNING || s >= TK_POOL_TIDYING)
        return;
    if (s == TK_POOL_SHUTDOWN && ex->ops->size(ex->q) > 0)
        return;
    if (atomic_load(&ex->wc) > 0)
        return; /* the last worker out comes back here */
    atomic_store(&ex->state, TK_POOL_TIDYING);
    if (ex->hooks.terminated != NULL) {
        pthread_mutex_unlock(&ex->pool_lock);
        ex->hooks.terminated(ex, ex->hooks.ctx);
        pthread_mutex_lock(&ex->pool_lock);
    }
    atomic_store(&ex->state, TK_POOL_TERMINATED);
    pthread_cond_broadcast(&ex->term_cond);
}

void tk__rewake_if_shutdown(tk_executor *ex) {
    if (atomic_load(&ex->state) != TK_POOL_SHUTDOWN)
        return;
    /* A removal may have emptied the queue: wake blocked takers so they see
     * it (close() wakes them), and terminate if nobody is left. */
    ex->ops->close(ex->q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    pthread_mutex_lock(&ex->pool_lock);
    tk__try_terminate_locked(ex);
    pthread_mutex_unlock(&ex->pool_lock);
}

static void queue_release(void *ctx, tk_node *n) {
    tk__node_drop(ctx, n, false); /* the queue's reference, or a stopped timer */
}

/* Drops every node of a detached list the executor got back without running
 * it: tasks are cancelled first if `cancel`, timers turn IDLE. Counts them
 * in removed_count. */
static long drop_list(tk_executor *ex, tk_node *n, bool cancel) {
    long count = 0;
    while (n != NULL) {
        tk_node *next = tk_node_next_detached(n);
        tk__node_drop(ex, n, cancel);
        n = next;
        count++;
    }
    tk__shard_add(&tk__shard_here(ex)->removed, (uint64_t)count);
    return count;
}

/* ---- lifecycle --------------------------------------------------------- */

int tk_executor_options_init(tk_executor_options *opt) {
    if (opt == NULL)
        return TK_EINVAL;
    memset(opt, 0, sizeof(*opt));
    opt->core_pool_size = 1;
    opt->rejection = TK_REJECT_ABORT;
    opt->remove_on_cancel = false;
    opt->continue_periodic_after_shutdown = false;
    opt->execute_delayed_after_shutdown = true;
    opt->timer_slack_ns = -1;
    opt->keep_alive_ns = TK_EXECUTOR_DEFAULT_KEEP_ALIVE_NS;
    opt->allow_core_thread_timeout = false;
    opt->default_slack_ns = 0;
    return TK_OK;
}

/* The engine the options name, checked: the options', else the config's,
 * else the build's default. NULL if the options are not valid. */
static const tk_queue_ops *options_checked(const tk_executor_options *opt) {
    if (opt->core_pool_size > TK_EXECUTOR_MAX_THREADS ||
        opt->timer_slack_ns > TK_EXECUTOR_MAX_TIMER_SLACK_NS)
        return NULL;
    if ((int)opt->rejection < TK_REJECT_ABORT || (int)opt->rejection > TK_REJECT_CUSTOM ||
        (opt->rejection == TK_REJECT_CUSTOM && opt->reject == NULL))
        return NULL;
    if (opt->allocator != NULL && (opt->allocator->alloc == NULL || opt->allocator->free == NULL))
        return NULL;
    if (opt->keep_alive_ns < 0 || (opt->allow_core_thread_timeout && opt->keep_alive_ns == 0))
        return NULL;
    if (opt->default_slack_ns < 0)
        return NULL;
    const tk_queue_ops *ops = opt->engine;
    if (ops == NULL && opt->engine_config != NULL)
        ops = opt->engine_config->engine;
    if (ops == NULL)
        ops = tk_engine_default();
    if (tk_engine_check(ops, NULL, 0) != TK_OK ||
        tk_queue_config_check(ops, opt->engine_config, NULL, 0) != TK_OK)
        return NULL;
    return ops;
}

/* A zeroed executor struct from `alloc`, followed by its shards (one per
 * CPU, on lines of their own) with their pools set up; NULL if out of
 * memory. */
static tk_executor *executor_alloc(const tk_allocator *alloc) {
    unsigned nshards = tk__shard_count();
    size_t bytes = sizeof(tk_executor) + TK__CACHELINE + nshards * sizeof(tk__shard);
    void *mem = tk__alloc(alloc, bytes);
    if (mem == NULL)
        return NULL;
    memset(mem, 0, bytes);
    tk_executor *ex = mem;
    ex->mem = mem;
    ex->mem_bytes = bytes;
    ex->shards =
        (tk__shard *)(((uintptr_t)(ex + 1) + TK__CACHELINE - 1) & ~(uintptr_t)(TK__CACHELINE - 1));
    ex->shard_mask = nshards - 1;
    for (unsigned i = 0; i < nshards; i++) {
        tk__spin_init(&ex->shards[i].pool.lock);
        atomic_init(&ex->shards[i].pool.remote, NULL);
        ex->shards[i].pool.ex = ex;
    }
    return ex;
}

int tk_executor_create(const tk_executor_options *opt_in, tk_executor **out) {
    if (out == NULL)
        return TK_EINVAL;
    tk_executor_options defaults;
    const tk_executor_options *opt = opt_in;
    if (opt == NULL) {
        tk_executor_options_init(&defaults);
        opt = &defaults;
    }
    const tk_queue_ops *ops = options_checked(opt);
    if (ops == NULL)
        return TK_EINVAL;

    tk_allocator alloc = opt->allocator != NULL ? *opt->allocator : *tk_allocator_default();
    tk_executor *ex = executor_alloc(&alloc);
    if (ex == NULL)
        return TK_ENOMEM;
    void *mem = ex->mem;
    size_t bytes = ex->mem_bytes;
    ex->alloc = alloc;
    ex->ops = ops;
    atomic_init(&ex->core, opt->core_pool_size);
    atomic_init(&ex->target, opt->core_pool_size > 0 ? opt->core_pool_size : 1);
    atomic_init(&ex->keep_alive_ns, opt->keep_alive_ns);
    atomic_init(&ex->allow_core_timeout, opt->allow_core_thread_timeout);
    ex->rejection = opt->rejection;
    ex->reject = opt->reject;
    ex->reject_ctx = opt->reject_ctx;
    ex->hooks = opt->hooks;
    ex->thread_factory = opt->thread_factory;
    ex->thread_factory_ctx = opt->thread_factory_ctx;
    ex->timer_slack_ns = opt->timer_slack_ns;
    ex->default_slack_ns = opt->default_slack_ns;
    ex->batch = ops->take_batch != NULL && (ops->caps & TK_QUEUE_CAP_BATCH_TAKE) != 0;
    const char *prefix = opt->thread_name_prefix != NULL ? opt->thread_name_prefix : "tk-pool";
    strncpy(ex->name_prefix, prefix, sizeof(ex->name_prefix) - 1);
    atomic_init(&ex->state, TK_POOL_RUNNING);
    atomic_init(&ex->remove_on_cancel, opt->remove_on_cancel);
    atomic_init(&ex->continue_periodic, opt->continue_periodic_after_shutdown);
    atomic_init(&ex->execute_delayed, opt->execute_delayed_after_shutdown);
    atomic_init(&ex->live, 1);
    atomic_init(&ex->slab_closed, false);

    int rc = TK_ENOMEM;
    tk__spin_init(&ex->batch_lock);
    if (pthread_mutex_init(&ex->pool_lock, NULL) != 0)
        goto fail_pool;
    if (tk__cond_init_monotonic(&ex->term_cond) != 0)
        goto fail_cond;

    tk_queue_config cfg;
    if (opt->engine_config != NULL)
        cfg = *opt->engine_config;
    else
        tk_queue_config_init(&cfg); /* names no engine: the engine's defaults */
    if (cfg.allocator == NULL)
        cfg.allocator = &ex->alloc; /* one allocator for everything */
    rc = tk_queue_create(ops, &cfg, queue_release, ex, &ex->q);
    if (rc != TK_OK)
        goto fail_queue;
    *out = ex;
    return TK_OK;

fail_queue:
    pthread_cond_destroy(&ex->term_cond);
fail_cond:
    pthread_mutex_destroy(&ex->pool_lock);
fail_pool:
    tk__free(&alloc, mem, bytes);
    return rc;
}

static bool on_own_thread(const tk_executor *ex) {
    return tk__current.ex == ex;
}

int tk_executor_destroy(tk_executor *ex) {
    if (ex == NULL)
        return TK_EINVAL;
    if (on_own_thread(ex) || (tk__current.task != NULL && tk__task_ex(tk__current.task) == ex))
        return TK_EDEADLK;
    if (atomic_load(&ex->state) != TK_POOL_TERMINATED)
        (void)tk_executor_shutdown_now(ex, NULL, NULL);
    (void)tk_executor_await_termination(ex, -1);

    pthread_mutex_lock(&ex->pool_lock);
    tk__worker *w = ex->workers;
    ex->workers = NULL;
    pthread_mutex_unlock(&ex->pool_lock);
    while (w != NULL) {
        tk__worker *next = w->next;
        if (w->started)
            pthread_join(w->thread, NULL);
        tk__free(&ex->alloc, w, sizeof(*w));
        w = next;
    }

    /* Defensive: a terminated pool's queue is empty. */
    (void)drop_list(ex, ex->ops->drain(ex->q), true);
    ex->ops->destroy(ex->q); /* releases nodes awaiting release */

    tk__slabs_drain(ex); /* marks it destroyed: empty slabs are freed */
    tk__executor_live_release(ex);
    return TK_OK;
}

/* ---- shutdown ---------------------------------------------------------- */

typedef struct sweep_ctx {
    int64_t now_ns;
    bool keep_delayed;
    bool keep_periodic;
} sweep_ctx;

/* A queued node that only waits to be dropped: a cancelled task, or a
 * stopped timer (remove_if() predicate; engine lock held: reads only). */
static bool is_cancelled_node(const tk_node *n, void *arg) {
    (void)arg;
    if (tk__node_is_timer(n))
        return tk__timer_state(tk__timer_of((tk_node *)n)) == TK__TIMER_STOPPING;
    uint32_t s = atomic_load(&tk__task_of((tk_node *)n)->state);
    return s == TK__TASK_CANCELLED || s == TK__TASK_REMOVED;
}

/* remove_if() predicate (engine lock held: reads only). A timer is a
 * one-shot. */
static bool shutdown_excludes(const tk_node *n, void *arg) {
    const sweep_ctx *c = arg;
    if (is_cancelled_node(n, NULL))
        return true;
    if (!tk__node_is_timer(n) && tk__task_of((tk_node *)n)->kind != TK_TASK_ONE_SHOT)
        return !c->keep_periodic;
    return !c->keep_delayed && n->deadline_ns > c->now_ns;
}

/* JDK onShutdown(): removes and cancels what the policies exclude (and what
 * is already cancelled), then re-wakes the takers and tries to terminate. */
static void on_shutdown(tk_executor *ex) {
    sweep_ctx c = {
        .now_ns = tk_clock_now_ns(),
        .keep_delayed = atomic_load(&ex->execute_delayed),
        .keep_periodic = atomic_load(&ex->continue_periodic),
    };
    (void)drop_list(ex, ex->ops->remove_if(ex->q, shutdown_excludes, &c), true);
}

/* Whether what the queue holds has a worker to run it: one is alive (read
 * under pool_lock, where a worker decides to exit only after seeing the queue
 * empty, so a worker on its way out is not counted), the queue is empty, or
 * one can be started. A timer start() that saw the pool RUNNING may have been
 * refused its first worker by the shutdown and still queued its timer
 * (timer.c); tasks re-check for themselves (submit.c). */
static bool queue_served(tk_executor *ex) {
    pthread_mutex_lock(&ex->pool_lock);
    bool served = atomic_load(&ex->wc) > 0 || ex->ops->size(ex->q) == 0;
    pthread_mutex_unlock(&ex->pool_lock);
    if (served || tk__add_worker(ex, ex->target, true) == 1)
        return true;
    pthread_mutex_lock(&ex->pool_lock);
    served = atomic_load(&ex->wc) > 0; /* another thread started one */
    pthread_mutex_unlock(&ex->pool_lock);
    return served;
}

bool tk__shutdown_catch_up(tk_executor *ex, const tk_node *own) {
    if (atomic_load(&ex->state) == TK_POOL_SHUTDOWN) {
        on_shutdown(ex); /* may drop `own` by the policy: as a task, TK_OK */
        bool served = queue_served(ex);
        tk__rewake_if_shutdown(ex);
        if (served && atomic_load(&ex->state) == TK_POOL_SHUTDOWN)
            return false; /* a worker runs it (or it left the queue) */
    }
    /* Nothing will run `own` if it is still queued: the pool stopped (an
     * engine whose offer is lock-free, the wheel, may take it in after
     * shutdown_now()'s drain), terminated (a WHEN_EMPTY queue still takes
     * offers), or has no worker and can start none. It is looked for among
     * the queued nodes, so a node that left the queue (run, freed) is never
     * touched. */
    return tk__pull_if_queued(ex, own);
}

int tk_executor_shutdown(tk_executor *ex) {
    if (ex == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&ex->pool_lock);
    if (atomic_load(&ex->state) == TK_POOL_RUNNING)
        atomic_store(&ex->state, TK_POOL_SHUTDOWN);
    pthread_mutex_unlock(&ex->pool_lock);
    on_shutdown(ex);
    ex->ops->close(ex->q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    if (!queue_served(ex)) /* stranded: drop what is left as cancelled */
        (void)drop_list(ex, ex->ops->drain(ex->q), true);
    pthread_mutex_lock(&ex->pool_lock);
    tk__try_terminate_locked(ex);
    pthread_mutex_unlock(&ex->pool_lock);
    return TK_OK;
}

long tk_executor_shutdown_now(tk_executor *ex, tk_drop_fn drop, void *ctx) {
    if (ex == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&ex->pool_lock);
    if (atomic_load(&ex->state) < TK_POOL_STOP)
        atomic_store(&ex->state, TK_POOL_STOP); /* running tasks now read interrupted */
    pthread_mutex_unlock(&ex->pool_lock);
    ex->ops->close(ex->q, TK_QUEUE_CLOSE_NOW);

    long count = 0;
    uint64_t removed = 0;
    /* The queue, and the due nodes a worker took in a batch but has not
     * started: both handed back, in (deadline, seq) order. */
    tk_node *n = tk__merge_sorted(ex->ops->drain(ex->q), tk__batch_steal_all(ex));
    while (n != NULL) {
        tk_node *next = tk_node_next_detached(n);
        if (tk__node_is_timer(n)) { /* stopped, not handed back */
            tk__timer_drop(ex, tk__timer_of(n));
            removed++;
            n = next;
            continue;
        }
        tk__task *t = tk__task_of(n);
        if (tk__task_cancel_pending(t, true)) {
            tk_task_info info;
            tk__task_info(t, &info);
            tk_arg_free_fn arg_free = tk__task_arg_free(t);
            if (drop != NULL)
                drop(ctx, &info, arg_free);
            else if (arg_free != NULL)
                arg_free(t->arg);
            count++;
        } else {
            removed++; /* already cancelled or removed: only dropped */
        }
        tk__task_unref(t, 1); /* the queue's reference */
        n = next;
    }
    atomic_fetch_add_explicit(&ex->handed_back_count, (uint64_t)count, memory_order_relaxed);
    tk__shard_add(&tk__shard_here(ex)->removed, removed);

    pthread_mutex_lock(&ex->pool_lock);
    tk__try_terminate_locked(ex);
    pthread_mutex_unlock(&ex->pool_lock);
    return count;
}

int tk_executor_await_termination(tk_executor *ex, int64_t timeout_ns) {
    if (ex == NULL)
        return TK_EINVAL;
    if (on_own_thread(ex))
        return TK_EDEADLK;
    int rc = TK_OK;
    int64_t deadline = timeout_ns < 0 ? -1 : tk_deadline_after_ns(tk_clock_now_ns(), timeout_ns);
    pthread_mutex_lock(&ex->pool_lock);
    while (atomic_load(&ex->state) != TK_POOL_TERMINATED) {
        if (deadline < 0) {
            pthread_cond_wait(&ex->term_cond, &ex->pool_lock);
            continue;
        }
        if (tk_clock_now_ns() >= deadline) {
            rc = TK_ETIMEDOUT;
            break;
        }
        struct timespec ts = tk__ns_to_timespec(deadline);
        pthread_cond_timedwait(&ex->term_cond, &ex->pool_lock, &ts);
    }
    pthread_mutex_unlock(&ex->pool_lock);
    return rc;
}

/* ---- state ------------------------------------------------------------- */

tk_pool_state tk_executor_state(const tk_executor *ex) {
    if (ex == NULL)
        return TK_POOL_TERMINATED;
    return (tk_pool_state)atomic_load(&((tk_executor *)ex)->state);
}

bool tk_executor_is_shutdown(const tk_executor *ex) {
    return tk_executor_state(ex) >= TK_POOL_SHUTDOWN;
}

bool tk_executor_is_terminating(const tk_executor *ex) {
    tk_pool_state s = tk_executor_state(ex);
    return s >= TK_POOL_SHUTDOWN && s < TK_POOL_TERMINATED;
}

bool tk_executor_is_terminated(const tk_executor *ex) {
    return tk_executor_state(ex) == TK_POOL_TERMINATED;
}

const char *tk_pool_state_name(tk_pool_state state) {
    switch (state) {
    case TK_POOL_RUNNING:
        return "RUNNING";
    case TK_POOL_SHUTDOWN:
        return "SHUTDOWN";
    case TK_POOL_STOP:
        return "STOP";
    case TK_POOL_TIDYING:
        return "TIDYING";
    case TK_POOL_TERMINATED:
        return "TERMINATED";
    }
    return "UNKNOWN";
}

/* ---- pool control ------------------------------------------------------ */

long tk_executor_purge(tk_executor *ex) {
    if (ex == NULL)
        return TK_EINVAL;
    /* Cancelled tasks were finished by their canceller: only the queue's
     * reference is left to drop. */
    long count = drop_list(ex, ex->ops->remove_if(ex->q, is_cancelled_node, NULL), false);
    if (count > 0)
        tk__rewake_if_shutdown(ex);
    return count;
}

int tk_executor_prestart_core_thread(tk_executor *ex) {
    if (ex == NULL)
        return TK_EINVAL;
    if (atomic_load(&ex->state) != TK_POOL_RUNNING)
        return TK_ESTATE;
    return tk__add_worker(ex, ex->core, false);
}

int tk_executor_prestart_all_core_threads(tk_executor *ex) {
    if (ex == NULL)
        return TK_EINVAL;
    if (atomic_load(&ex->state) != TK_POOL_RUNNING)
        return TK_ESTATE;
    int started = 0;
    for (;;) {
        int rc = tk__add_worker(ex, ex->core, false);
        if (rc == 1) {
            started++;
            continue;
        }
        if (rc < 0 && started == 0)
            return rc;
        return started;
    }
}

/* ---- policies ---------------------------------------------------------- */

int tk_executor_set_remove_on_cancel(tk_executor *ex, bool on) {
    if (ex == NULL)
        return TK_EINVAL;
    atomic_store(&ex->remove_on_cancel, on);
    return TK_OK;
}

/* Setting a shutdown policy to false after shutdown applies it at once (JDK:
 * onShutdown()). */
static void reapply_shutdown_policies(tk_executor *ex) {
    if (atomic_load(&ex->state) < TK_POOL_SHUTDOWN)
        return;
    on_shutdown(ex);
    tk__rewake_if_shutdown(ex);
}

int tk_executor_set_continue_periodic_after_shutdown(tk_executor *ex, bool on) {
    if (ex == NULL)
        return TK_EINVAL;
    atomic_store(&ex->continue_periodic, on);
    if (!on)
        reapply_shutdown_policies(ex);
    return TK_OK;
}

int tk_executor_set_execute_delayed_after_shutdown(tk_executor *ex, bool on) {
    if (ex == NULL)
        return TK_EINVAL;
    atomic_store(&ex->execute_delayed, on);
    if (!on)
        reapply_shutdown_policies(ex);
    return TK_OK;
}

bool tk_executor_get_remove_on_cancel(const tk_executor *ex) {
    return ex != NULL && atomic_load(&((tk_executor *)ex)->remove_on_cancel);
}

bool tk_executor_get_continue_periodic_after_shutdown(const tk_executor *ex) {
    return ex != NULL && atomic_load(&((tk_executor *)ex)->continue_periodic);
}

bool tk_executor_get_execute_delayed_after_shutdown(const tk_executor *ex) {
    return ex != NULL && atomic_load(&((tk_executor *)ex)->execute_delayed);
}

/* ---- introspection ----------------------------------------------------- */

int tk_executor_stats_get(const tk_executor *cex, tk_executor_stats *out) {
    if (cex == NULL || out == NULL)
        return TK_EINVAL;
    tk_executor *ex = (tk_executor *)cex;
    memset(out, 0, sizeof(*out));
    /* The shards' counters. Every call that took a seq was accepted, or
     * counted unaccepted after taking it (release): a count read first
     * (acquire) never exceeds the seqs read after it. */
    for (unsigned i = 0; i <= ex->shard_mask; i++) {
        tk__shard *sh = &ex->shards[i];
        uint64_t unaccepted = atomic_load_explicit(&sh->unaccepted, memory_order_acquire);
        out->accepted_count += atomic_load_explicit(&sh->seq, memory_order_relaxed) - unaccepted;
        out->removed_count += atomic_load_explicit(&sh->removed, memory_order_relaxed);
        out->rejected_count += atomic_load_explicit(&sh->rejected, memory_order_relaxed);
        out->cancelled_count += atomic_load_explicit(&sh->cancelled, memory_order_relaxed);
    }
    out->requeued_count = atomic_load_explicit(&ex->requeued_count, memory_order_relaxed);
    out->handed_back_count = atomic_load_explicit(&ex->handed_back_count, memory_order_relaxed);
    out->completed_count = atomic_load_explicit(&ex->completed_count, memory_order_relaxed);
    out->runs = atomic_load_explicit(&ex->runs, memory_order_relaxed);
    out->pool_size = atomic_load_explicit(&ex->wc, memory_order_relaxed);
    out->largest_pool_size = atomic_load_explicit(&ex->largest, memory_order_relaxed);
    out->queue_size = ex->ops->size(ex->q);
    out->failed_count = atomic_load_explicit(&ex->failed_count, memory_order_relaxed);
    out->failed_periodic_count =
        atomic_load_explicit(&ex->failed_periodic_count, memory_order_relaxed);
    out->skipped_periods = atomic_load_explicit(&ex->skipped_periods, memory_order_relaxed);
    /* the workers' shares (tk__worker) */
    pthread_mutex_lock(&ex->pool_lock);
    for (const tk__worker *w = ex->workers; w != NULL; w = w->next) {
        out->runs += atomic_load_explicit(&w->runs, memory_order_relaxed);
        out->completed_count += atomic_load_explicit(&w->completed, memory_order_relaxed);
        out->active_count += atomic_load_explicit(&w->active, memory_order_relaxed);
        out->queue_size += atomic_load_explicit(&w->batch_left, memory_order_relaxed);
    }
    pthread_mutex_unlock(&ex->pool_lock);
    /* the JDK's getTaskCount() */
    out->task_count = out->completed_count + out->active_count + out->queue_size;
    return TK_OK;
}

const tk_queue_ops *tk_executor_engine(const tk_executor *ex) {
    return ex == NULL ? NULL : ex->ops;
}
