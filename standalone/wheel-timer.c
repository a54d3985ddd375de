/* SPDX-License-Identifier: MIT */
/* Netty's HashedWheelTimer as a timerkit object (timerkit/wheel_timer.h).
 *
 * Structure. One tk_loop (loop.h: an engine's pure core, the hashed wheel
 * by default) holds the pending timeouts, each a tk_node embedded in its
 * tk_timeout. One mutex, `lock`, serialises every call on the loop and on
 * the timer's list of pending timeouts; one worker thread waits on `wake`
 * until the loop's latest wake-up (tk_loop_latest(): the next due time,
 * or later when the timeouts' slack allows it), expires what is due into a
 * local list
 * (marking each EXPIRED under the lock), drops the lock and runs the
 * callbacks, or hands them to the task executor (detach, then run). So a
 * callback may create and cancel timeouts on its own timer.
 *
 * Accuracy: the core hands a node out never before its deadline, and the
 * worker asks at the time tk_clock_now_ns() reads, so a callback never
 * starts early; it is late by the core's granularity (one tick on the
 * wheel) plus the wake-up latency of the timed wait. A timeout with slack
 * (options.slack_ns, tk_wheel_timer_new_timeout_within()) may run up to its
 * slack later still: the worker sleeps until the earliest end of a window
 * the core reports (latest()), not the earliest deadline, and one wake-up
 * then expires every timeout due by then. With slack 0 everywhere that is
 * next() and the worker wakes as Netty's does, at the first tick after a
 * deadline.
 *
 * Each timeout ends exactly once: the first of expire (worker), cancel and
 * stop to move it out of PENDING, under `lock`, owns its ending.
 *
 * Cancelled hooks (Netty's TimerTask.cancelled()). A cancel that ends a
 * timeout with a hook appends it to `cancelled` (FIFO, under `lock`) instead
 * of dropping the timer's reference, and wakes the worker if it sleeps. The
 * worker takes the whole list at the top of each round, before it looks at
 * the state, and runs the hooks with the lock dropped, then one batch of
 * expiries, as Netty's worker runs processCancelledTasks() each tick; it
 * empties the list once more as it ends, and never sleeps while the list
 * holds a timeout (a cancel signals only a sleeping worker). A cancel
 * that comes after the worker's last look (while stop joins it) is left in
 * the list, which stop takes together with the pending timeouts and runs on
 * its own thread. So each hook runs exactly once, never with a lock held.
 *
 * Lifetime. A timeout's `refs` counts the timer's reference (from creation
 * until its ending is done: callback returned, visitor returned, cancel
 * returned, or its cancelled hook returned), the caller's (from new_timeout
 * with a handle, until tk_timeout_release()), and the task executor's while
 * it holds the timeout. The timer's `refs` counts its owner (until destroy) and every
 * live timeout, so a handle never points at freed timer memory.
 *
 * Lock order: `lock` is the only lock here. No callback, cancelled hook,
 * thread factory, visitor or executor call runs while it is held; the
 * allocator does only when the engine's core grows inside tk_loop_add() (the
 * heap's array). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common-internal.h"
#include "timerkit/executor.h"
#include "timerkit/loop.h"
#include "timerkit/wheel_timer.h"

/* The one place of process-wide mutable state of this file, as Netty's
 * INSTANCE_COUNTER and WARNED_TOO_MANY_INSTANCES: the number of live timers
 * (created, not yet stopped) and whether the warning was written. Both are
 * atomics, touched only by create, stop and tk_wheel_timer_instances(). */
static atomic_size_t live_timers;
static atomic_bool warned_too_many;

/* Due timeouts taken per round of the worker, so that a stop is seen
 * between rounds even when many expire at once. */
#define EXPIRE_BATCH 256

enum timeout_state { TO_PENDING, TO_EXPIRED, TO_CANCELLED };

/* INIT -> STARTING -> STARTED -> STOPPING -> STOPPED; STARTING falls back to
 * INIT when the thread factory fails; INIT -> STOPPING when stopped unused. */
enum timer_state { ST_INIT, ST_STARTING, ST_STARTED, ST_STOPPING, ST_STOPPED };

struct tk_timeout {
    tk_node node;               /* in timer->loop while PENDING (timer->lock) */
    tk_timeout *prev, *next;    /* timer->pending while PENDING (timer->lock);
                                   after, `next` links timer->cancelled (lock)
                                   or stop's hand-back list (stop's own) */
    tk_wheel_timer *timer;      /* immutable */
    tk_timer_task_fn fn;        /* immutable */
    tk_timer_task_fn on_cancel; /* immutable: the cancelled hook, or NULL */
    void *arg;                  /* immutable */
    _Atomic int state;          /* enum timeout_state; written under timer->lock */
    atomic_uint refs;           /* see "Lifetime" above */
    atomic_bool executor_ref;   /* the task executor holds a reference */
};

struct tk_wheel_timer {
    pthread_mutex_t lock;
    pthread_cond_t wake;         /* the worker waits on it (lock) */
    pthread_cond_t state_cv;     /* waits for STARTING or STOPPING to end (lock) */
    tk_loop *loop;               /* lock; NULL once stopped */
    tk_timeout *pending;         /* lock: every PENDING timeout */
    tk_timeout *cancelled;       /* lock: cancelled, hook not yet run (FIFO via next) */
    tk_timeout **cancelled_tail; /* lock: where the next one is linked */
    int state;                   /* lock: enum timer_state */
    int64_t wait_until;          /* lock: when the worker's wait ends; INT64_MIN: awake */
    int64_t slack_ns;            /* immutable: new_timeout()'s slack (options) */
    int64_t tick_ns;             /* immutable: tk_wheel_timer_tick_ns(); 0: none */
    size_t slots;                /* immutable: tk_wheel_timer_slots(); 0: none */
    bool worker_known;           /* lock: worker_tid is the running worker */
    pthread_t worker_tid;        /* lock */
    pthread_t thread;            /* set by the starter; joined by the stopper */
    atomic_size_t pending_count; /* written under lock, read anywhere */
    atomic_uint refs;            /* the owner's, and one per live timeout */
    /* immutable after create */
    const tk_allocator *allocator;
    size_t max_pending;
    tk_thread_factory_fn factory;
    void *factory_ctx;
    tk_executor *executor;
    char name[16];
};

/* ---- references --------------------------------------------------------- */

static void timer_unref(tk_wheel_timer *t) {
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    tk_loop_destroy(t->loop); /* NULL once stopped; kept for safety */
    pthread_cond_destroy(&t->state_cv);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    tk__free(t->allocator, t, sizeof(*t));
}

static void timeout_unref(tk_timeout *to) {
    if (atomic_fetch_sub_explicit(&to->refs, 1, memory_order_acq_rel) != 1)
        return;
    tk_wheel_timer *t = to->timer;
    tk__free(t->allocator, to, sizeof(*to));
    timer_unref(t);
}

/* ---- the pending list (lock held) ------------------------------------------ */

static void pending_link_locked(tk_wheel_timer *t, tk_timeout *to) {
    to->prev = NULL;
    to->next = t->pending;
    if (t->pending != NULL)
        t->pending->prev = to;
    t->pending = to;
    atomic_fetch_add_explicit(&t->pending_count, 1, memory_order_relaxed);
}

/* Moves `to` out of PENDING into `state`, out of the list and the count.
 * The caller removes it from the loop (or the loop handed it out). */
static void pending_end_locked(tk_wheel_timer *t, tk_timeout *to, int state) {
    if (to->prev != NULL)
        to->prev->next = to->next;
    else
        t->pending = to->next;
    if (to->next != NULL)
        to->next->prev = to->prev;
    to->prev = to->next = NULL;
    atomic_store_explicit(&to->state, state, memory_order_release);
    atomic_fetch_sub_explicit(&t->pending_count, 1, memory_order_relaxed);
}

/* ---- running a callback ------------------------------------------------------- */

static int executor_run(tk_run *run, void *arg) {
    (void)run;
    tk_timeout *to = arg;
    to->fn(to, to->arg);
    return 0;
}

/* The executor is done with the task (ran, cancelled, rejected, dropped). */
static void executor_done(void *arg) {
    tk_timeout *to = arg;
    if (atomic_exchange(&to->executor_ref, false))
        timeout_unref(to);
}

/* Runs an expired timeout's callback, or gives it to the task executor, and
 * drops the timer's reference. No lock held. A callback the executor does
 * not take (its call fails) runs here instead, so none is lost. */
static void run_expired(tk_wheel_timer *t, tk_timeout *to) {
    if (t->executor != NULL) {
        atomic_fetch_add_explicit(&to->refs, 1, memory_order_relaxed);
        atomic_store(&to->executor_ref, true);
        /* The timeout has had its window: the executor adds no slack of
         * its own (its default_slack_ns) on top. */
        tk_task_spec spec = {.fn = executor_run,
                             .arg = to,
                             .arg_free = executor_done,
                             .kind = TK_TASK_ONE_SHOT,
                             .delay_ns = -1,
                             .flags = TK_TASK_SLACK,
                             .slack_ns = 0};
        int rc = tk_executor_schedule_spec(t->executor, &spec, NULL);
        if (rc == TK_OK) {
            timeout_unref(to);
            return;
        }
        executor_done(to); /* if the failed call kept nothing, drop its reference */
    }
    to->fn(to, to->arg);
    timeout_unref(to);
}

/* ---- cancelled hooks -------------------------------------------------------------- */

/* Takes the list of cancelled timeouts whose hooks have not run. Lock held. */
static tk_timeout *cancelled_take_locked(tk_wheel_timer *t) {
    tk_timeout *list = t->cancelled;
    t->cancelled = NULL;
    t->cancelled_tail = &t->cancelled;
    return list;
}

/* Runs the hooks of a list from cancelled_take_locked(), in cancel order, and
 * drops the timer's reference of each. No lock held. */
static void run_cancelled(tk_timeout *list) {
    for (tk_timeout *to = list, *next; to != NULL; to = next) {
        next = to->next; /* before the hook may release the caller's reference */
        to->next = NULL;
        to->on_cancel(to, to->arg);
        timeout_unref(to);
    }
}

/* ---- the worker ------------------------------------------------------------------ */

static void *worker_main(void *arg) {
    tk_wheel_timer *t = arg;
    tk__thread_set_name(t->name);
    pthread_mutex_lock(&t->lock);
    t->worker_tid = pthread_self();
    t->worker_known = true;
    for (;;) {
        /* Each round: the hooks queued so far, then one batch of expiries,
         * so that neither starves the other. */
        if (t->cancelled != NULL) {
            tk_timeout *list = cancelled_take_locked(t);
            pthread_mutex_unlock(&t->lock);
            run_cancelled(list);
            pthread_mutex_lock(&t->lock);
        }
        if (t->state != ST_STARTED && t->state != ST_STARTING) {
            if (t->cancelled != NULL)
                continue; /* drain the hooks once more as the worker ends */
            break;
        }
        tk_node *due = NULL;
        size_t n = tk_loop_expire(t->loop, tk_clock_now_ns(), EXPIRE_BATCH, &due);
        if (n > 0) {
            for (tk_node *node = due; node != NULL; node = tk_node_next_detached(node))
                pending_end_locked(t, tk__container_of(node, tk_timeout, node), TO_EXPIRED);
            pthread_mutex_unlock(&t->lock);
            for (tk_node *node = due, *next; node != NULL; node = next) {
                next = tk_node_next_detached(node); /* before the callback may free it */
                run_expired(t, tk__container_of(node, tk_timeout, node));
            }
            pthread_mutex_lock(&t->lock);
            continue;
        }
        if (t->cancelled != NULL)
            continue; /* queued while this thread was awake: no signal came */
        int64_t when;
        if (tk_loop_latest(t->loop, &when) == TK_OK) {
            t->wait_until = when;
            struct timespec ts = tk__ns_to_timespec(when);
            pthread_cond_timedwait(&t->wake, &t->lock, &ts);
        } else {
            t->wait_until = INT64_MAX;
            pthread_cond_wait(&t->wake, &t->lock);
        }
        t->wait_until = INT64_MIN;
    }
    t->worker_known = false;
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

static int default_factory(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                           const char *name) {
    (void)ctx;
    (void)name;
    return pthread_create(thread, NULL, start, arg);
}

/* Makes sure the worker runs. Lock held; released while the factory runs.
 * Returns TK_OK, TK_ESTATE (stopping or stopped) or TK_ETHREAD. */
static int ensure_started_locked(tk_wheel_timer *t) {
    for (;;) {
        switch (t->state) {
        case ST_STARTED:
            return TK_OK;
        case ST_STARTING:
            pthread_cond_wait(&t->state_cv, &t->lock);
            break;
        case ST_INIT: {
            t->state = ST_STARTING;
            pthread_mutex_unlock(&t->lock);
            pthread_t th;
            int rc = t->factory(t->factory_ctx, &th, worker_main, t, t->name);
            pthread_mutex_lock(&t->lock);
            if (rc == 0)
                t->thread = th;
            t->state = rc == 0 ? ST_STARTED : ST_INIT;
            pthread_cond_broadcast(&t->state_cv);
            if (rc != 0)
                return TK_ETHREAD;
            break;
        }
        default:
            return TK_ESTATE;
        }
    }
}

/* ---- the timer ---------------------------------------------------------------------- */

/* The value of an engine parameter of `cfg`, or 0 if its engine has none. */
static int64_t param_or_0(const tk_queue_config *cfg, const char *key) {
    int64_t v;
    return tk_queue_config_get_value(cfg, key, &v) == TK_OK ? v : 0;
}

/* What tk_wheel_timer_tick_ns() and _slots() answer, from the engine's
 * parameters as its core applies them: "tick" as given; "slots" rounded up
 * to a power of two (the wheel's core); else 2^"bits", a level (the
 * hwheel's). A config that names no engine stands for tk_engine_default()
 * at its defaults, as for tk_loop_create(). */
static void read_geometry(tk_wheel_timer *t, const tk_queue_config *cfg) {
    tk_queue_config defaults;
    if (cfg->engine == NULL) {
        if (tk_queue_config_init_for(&defaults, tk_engine_default()) != TK_OK)
            return;
        cfg = &defaults;
    }
    t->tick_ns = param_or_0(cfg, "tick");
    int64_t slots = param_or_0(cfg, "slots"), bits = param_or_0(cfg, "bits");
    if (slots > 0) {
        uint64_t n = 1;
        while (n < (uint64_t)slots)
            n <<= 1;
        t->slots = (size_t)n;
    } else if (bits > 0 && bits < 63) {
        t->slots = (size_t)1 << bits;
    }
}

int tk_wheel_timer_options_init(tk_wheel_timer_options *opt) {
    if (opt == NULL)
        return TK_EINVAL;
    memset(opt, 0, sizeof(*opt));
    const tk_queue_ops *engine = tk_engine_wheel();
    if (engine == NULL)
        engine = tk_engine_default();
    return tk_queue_config_init_for(&opt->queue, engine);
}

int tk_wheel_timer_create(const tk_wheel_timer_options *opt, tk_wheel_timer **out) {
    if (out == NULL)
        return TK_EINVAL;
    *out = NULL;
    tk_wheel_timer_options defaults;
    if (opt == NULL) {
        int rc = tk_wheel_timer_options_init(&defaults);
        if (rc != TK_OK)
            return rc;
        opt = &defaults;
    }
    if (opt->slack_ns < 0)
        return TK_EINVAL;
    size_t live = atomic_fetch_add(&live_timers, 1) + 1;
    if (opt->max_instances != 0 && live > opt->max_instances) {
        atomic_fetch_sub(&live_timers, 1);
        return TK_EFULL;
    }
    int rc = TK_ENOMEM;
    const tk_allocator *a = opt->queue.allocator;
    tk_wheel_timer *t = tk__alloc(a, sizeof(*t));
    if (t == NULL)
        goto fail;
    memset(t, 0, sizeof(*t));
    t->allocator = a;
    rc = tk_loop_create(&opt->queue, tk_clock_now_ns(), &t->loop);
    if (rc != TK_OK)
        goto fail_free;
    rc = TK_ENOMEM;
    if (pthread_mutex_init(&t->lock, NULL) != 0)
        goto fail_loop;
    if (tk__cond_init_monotonic(&t->wake) != 0)
        goto fail_mutex;
    if (pthread_cond_init(&t->state_cv, NULL) != 0)
        goto fail_wake;
    t->state = ST_INIT;
    t->cancelled_tail = &t->cancelled;
    t->wait_until = INT64_MIN;
    read_geometry(t, &opt->queue);
    atomic_init(&t->pending_count, 0);
    atomic_init(&t->refs, 1);
    t->max_pending = opt->max_pending_timeouts;
    t->factory = opt->thread_factory != NULL ? opt->thread_factory : default_factory;
    t->factory_ctx = opt->thread_factory_ctx;
    t->executor = opt->task_executor;
    t->slack_ns = opt->slack_ns;
    snprintf(t->name, sizeof(t->name), "%s",
             opt->thread_name != NULL ? opt->thread_name : "tk-wheel-timer");
    if (live > TK_WHEEL_TIMER_WARN_INSTANCES && !atomic_exchange(&warned_too_many, true))
        fprintf(stderr,
                "timerkit: more than %d tk_wheel_timer instances are alive; each has a thread "
                "of its own: share a few instead\n",
                TK_WHEEL_TIMER_WARN_INSTANCES);
    *out = t;
    return TK_OK;

fail_wake:
    pthread_cond_destroy(&t->wake);
fail_mutex:
    pthread_mutex_destroy(&t->lock);
fail_loop:
    tk_loop_destroy(t->loop);
fail_free:
    tk__free(a, t, sizeof(*t));
fail:
    atomic_fetch_sub(&live_timers, 1);
    return rc;
}

int tk_wheel_timer_start(tk_wheel_timer *timer) {
    if (timer == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&timer->lock);
    int rc = ensure_started_locked(timer);
    pthread_mutex_unlock(&timer->lock);
    return rc;
}

int tk_wheel_timer_new_timeout(tk_wheel_timer *timer, tk_timer_task_fn fn, void *arg,
                               int64_t delay_ns, tk_timeout **out) {
    tk_timeout_spec spec = {.fn = fn, .arg = arg, .delay_ns = delay_ns};
    return tk_wheel_timer_new_timeout_spec(timer, &spec, out);
}

int tk_wheel_timer_new_timeout_within(tk_wheel_timer *timer, tk_timer_task_fn fn, void *arg,
                                      int64_t delay_ns, int64_t slack_ns, tk_timeout **out) {
    tk_timeout_spec spec = {.fn = fn,
                            .arg = arg,
                            .delay_ns = delay_ns,
                            .flags = TK_TIMEOUT_SLACK,
                            .slack_ns = slack_ns};
    return tk_wheel_timer_new_timeout_spec(timer, &spec, out);
}

int tk_wheel_timer_new_timeout_spec(tk_wheel_timer *timer, const tk_timeout_spec *spec,
                                    tk_timeout **out) {
    if (timer == NULL || spec == NULL || spec->fn == NULL || (spec->flags & ~TK_TIMEOUT_SLACK) != 0)
        return TK_EINVAL;
    int64_t slack_ns = (spec->flags & TK_TIMEOUT_SLACK) != 0 ? spec->slack_ns : timer->slack_ns;
    if (slack_ns < 0)
        return TK_EINVAL;
    int64_t deadline = tk_deadline_after_ns(tk_clock_now_ns(), spec->delay_ns);
    tk_timeout *to = tk__alloc(timer->allocator, sizeof(*to));
    if (to == NULL)
        return TK_ENOMEM;
    memset(to, 0, sizeof(*to));
    to->timer = timer;
    to->fn = spec->fn;
    to->on_cancel = spec->cancelled;
    to->arg = spec->arg;
    atomic_init(&to->state, TO_PENDING);
    atomic_init(&to->refs, out != NULL ? 2u : 1u);
    atomic_init(&to->executor_ref, false);

    pthread_mutex_lock(&timer->lock);
    int rc = ensure_started_locked(timer);
    if (rc == TK_OK && timer->max_pending != 0 &&
        atomic_load_explicit(&timer->pending_count, memory_order_relaxed) >= timer->max_pending)
        rc = TK_EFULL;
    if (rc == TK_OK)
        rc = tk_loop_add_within(timer->loop, &to->node, deadline, slack_ns) == TK_OK ? TK_OK
                                                                                     : TK_ENOMEM;
    if (rc != TK_OK) {
        pthread_mutex_unlock(&timer->lock);
        tk__free(timer->allocator, to, sizeof(*to));
        return rc;
    }
    pending_link_locked(timer, to);
    atomic_fetch_add_explicit(&timer->refs, 1, memory_order_relaxed);
    /* The worker must wake by the end of this window: if its wait ends
     * later, it plans again (a wait that ends inside the window, or before
     * the deadline, already does). */
    if (tk__sat_add(deadline, slack_ns) < timer->wait_until)
        pthread_cond_signal(&timer->wake);
    pthread_mutex_unlock(&timer->lock);
    if (out != NULL)
        *out = to;
    return TK_OK;
}

size_t tk_wheel_timer_pending(const tk_wheel_timer *timer) {
    return timer == NULL ? 0 : atomic_load(&timer->pending_count);
}

int tk_wheel_timer_tick_ns(const tk_wheel_timer *timer, int64_t *tick_ns) {
    if (tick_ns != NULL)
        *tick_ns = 0;
    if (timer == NULL || tick_ns == NULL)
        return TK_EINVAL;
    *tick_ns = timer->tick_ns;
    return timer->tick_ns > 0 ? TK_OK : TK_ENOTSUP;
}

int tk_wheel_timer_slots(const tk_wheel_timer *timer, size_t *slots) {
    if (slots != NULL)
        *slots = 0;
    if (timer == NULL || slots == NULL)
        return TK_EINVAL;
    *slots = timer->slots;
    return timer->slots > 0 ? TK_OK : TK_ENOTSUP;
}

long tk_wheel_timer_stop(tk_wheel_timer *timer, tk_timeout_visit_fn visitor, void *ctx) {
    if (timer == NULL)
        return TK_EINVAL;
    tk_wheel_timer *t = timer;
    pthread_mutex_lock(&t->lock);
    while (t->state == ST_STARTING)
        pthread_cond_wait(&t->state_cv, &t->lock);
    if (t->worker_known && pthread_equal(t->worker_tid, pthread_self())) {
        pthread_mutex_unlock(&t->lock);
        return TK_EDEADLK;
    }
    if (t->state == ST_STOPPING || t->state == ST_STOPPED) {
        /* another stop is at work or done: return when the worker has ended */
        while (t->state == ST_STOPPING)
            pthread_cond_wait(&t->state_cv, &t->lock);
        pthread_mutex_unlock(&t->lock);
        return 0;
    }
    bool had_worker = t->state == ST_STARTED;
    t->state = ST_STOPPING;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    if (had_worker)
        pthread_join(t->thread, NULL);

    pthread_mutex_lock(&t->lock);
    tk_timeout *back = NULL, **tail = &back;
    long count = 0;
    while (t->pending != NULL) {
        tk_timeout *to = t->pending;
        (void)tk_loop_remove(t->loop, &to->node);
        pending_end_locked(t, to, TO_CANCELLED);
        *tail = to;
        tail = &to->next;
        count++;
    }
    tk_timeout *hooks = cancelled_take_locked(t); /* cancelled after the worker's last look */
    tk_loop_destroy(t->loop);
    t->loop = NULL;
    t->state = ST_STOPPED;
    pthread_cond_broadcast(&t->state_cv);
    pthread_mutex_unlock(&t->lock);
    atomic_fetch_sub(&live_timers, 1);

    run_cancelled(hooks);
    for (tk_timeout *to = back, *next; to != NULL; to = next) {
        next = to->next;
        if (visitor != NULL)
            visitor(ctx, to);
        timeout_unref(to);
    }
    return count;
}

int tk_wheel_timer_destroy(tk_wheel_timer *timer) {
    if (timer == NULL)
        return TK_EINVAL;
    long rc = tk_wheel_timer_stop(timer, NULL, NULL);
    if (rc < 0)
        return (int)rc;
    timer_unref(timer);
    return TK_OK;
}

size_t tk_wheel_timer_instances(void) {
    return atomic_load(&live_timers);
}

/* ---- the handle ----------------------------------------------------------------------- */

bool tk_timeout_cancel(tk_timeout *timeout) {
    if (timeout == NULL)
        return false;
    tk_wheel_timer *t = timeout->timer;
    pthread_mutex_lock(&t->lock);
    if (atomic_load_explicit(&timeout->state, memory_order_relaxed) != TO_PENDING) {
        pthread_mutex_unlock(&t->lock);
        return false;
    }
    (void)tk_loop_remove(t->loop, &timeout->node);
    pending_end_locked(t, timeout, TO_CANCELLED);
    bool hook = timeout->on_cancel != NULL;
    if (hook) { /* the worker (or stop) runs it, then drops the timer's reference */
        *t->cancelled_tail = timeout;
        t->cancelled_tail = &timeout->next;
        if (t->wait_until != INT64_MIN) /* asleep: it would not look before its wait ends */
            pthread_cond_signal(&t->wake);
    }
    pthread_mutex_unlock(&t->lock);
    if (!hook)
        timeout_unref(timeout); /* the timer's: the caller still holds one */
    return true;
}

bool tk_timeout_is_cancelled(const tk_timeout *timeout) {
    return timeout != NULL && atomic_load(&timeout->state) == TO_CANCELLED;
}

bool tk_timeout_is_expired(const tk_timeout *timeout) {
    return timeout != NULL && atomic_load(&timeout->state) == TO_EXPIRED;
}

tk_wheel_timer *tk_timeout_timer(const tk_timeout *timeout) {
    return timeout == NULL ? NULL : timeout->timer;
}

void *tk_timeout_arg(const tk_timeout *timeout) {
    return timeout == NULL ? NULL : timeout->arg;
}

int tk_timeout_release(tk_timeout *timeout) {
    if (timeout == NULL)
        return TK_EINVAL;
    timeout_unref(timeout);
    return TK_OK;
}
