/* SPDX-License-Identifier: MIT */
/* timerkit reliability: fault injection and hostile callbacks.
 *
 * Allocation failure. An injected tk_allocator (executor options and engine
 * config) fails the Nth allocation counted from a chosen point; N sweeps
 * 1, 2, 3, ... until an operation completes without reaching the Nth
 * allocation, so every allocation site of that operation fails once. Each
 * failure must give a status (never a crash), leak nothing (bytes allocated
 * == bytes freed once the executor is destroyed, every free with the size it
 * was allocated with), and leave the executor usable: with allocation
 * allowed again a new task is accepted and runs. Operations swept: create,
 * each scheduling call (on prestarted and on lazily started pools), cancel
 * and purge, periodic re-queue, shutdown / shutdown_now / destroy. One
 * driver, sweep_sites(), runs every sweep; a sweep is its step function.
 *
 * Thread creation failure. A thread factory that fails chosen calls, swept
 * the same way; and every third call while workers time out and start
 * again.
 *
 * Hostile callbacks. Tasks that fail, cancel themselves, schedule more work,
 * shut the executor down from inside, or block until interrupted; each
 * checked against executor.h.
 *
 * Every test runs on every registered engine (ENGINE_TEST). Tasks only
 * record (atomics); the test thread asserts. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rel-common.h"

#define WAIT_NS (10 * TK_NS_PER_S)
#define HOUR_NS (3600 * TK_NS_PER_S)
#define MAX_SWEEP 400 /* far above any sane number of allocations per operation */
#define SENTINEL ((tk_future *)(uintptr_t)0x5e17e1)

/* ---- recording ------------------------------------------------------------------ */

/* Failures are collected (and printed) rather than asserted one by one, so a
 * sweep reports every failing N at once; the test asserts the count. */
static int problems;

static void problem(const char *fmt, ...) {
    va_list ap;
    char buf[512];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    print_error("  %s\n", buf);
    problems++;
}

/* ---- every engine ----------------------------------------------------------------- */

/* A test's body, run once per registered engine. */
typedef void (*engine_body)(const tk_queue_ops *engine);

/* Runs the body of *state on every engine, then asserts that no problem was
 * recorded (a body may also assert directly). */
static void on_every_engine(void **state) {
    engine_body body = *(engine_body *)*state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++)
        body(tk_engine_at(e));
    assert_int_equal(problems, 0);
}

/* The cmocka test named after `body`, which it runs on every engine. */
#define ENGINE_TEST(body)                                                                          \
    {                                                                                              \
#body, on_every_engine, NULL, NULL, &(engine_body) {                                       \
            body                                                                                   \
        }                                                                                          \
    }

/* ---- probes --------------------------------------------------------------------- */

typedef struct probe {
    atomic_long runs;
    atomic_long frees;
} probe;

static void probe_init(probe *p) {
    atomic_init(&p->runs, 0);
    atomic_init(&p->frees, 0);
}

static int t_probe(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add(&((probe *)arg)->runs, 1);
    return 0;
}

static void probe_free(void *arg) {
    atomic_fetch_add(&((probe *)arg)->frees, 1);
}

/* A one-shot task that counts its runs and its arg_free calls in `p`. */
static tk_task_spec probe_spec(probe *p, int64_t delay_ns) {
    return (tk_task_spec){.fn = t_probe,
                          .arg = p,
                          .arg_free = probe_free,
                          .kind = TK_TASK_ONE_SHOT,
                          .delay_ns = delay_ns};
}

/* A thread factory that always fails. */
static int fail_factory(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                        const char *name) {
    (void)ctx;
    (void)thread;
    (void)start;
    (void)arg;
    (void)name;
    return -1;
}

/* After a failure: with allocation allowed, a new task is accepted and runs. */
static bool still_usable(tk_executor *ex, const char *where) {
    probe p;
    probe_init(&p);
    tk_future *fu = NULL;
    int rc = tk_executor_schedule(ex, t_probe, &p, 0, &fu);
    if (rc != TK_OK) {
        problem("%s: executor unusable: schedule -> %s", where, tk_status_name(rc));
        return false;
    }
    rc = tk_future_get_timeout(fu, WAIT_NS, NULL);
    tk_future_release(fu);
    if (rc != TK_OK || atomic_load(&p.runs) != 1) {
        problem("%s: probe task: get -> %s, runs %ld", where, tk_status_name(rc),
                atomic_load(&p.runs));
        return false;
    }
    return true;
}

static void check_no_leak(rel_alloc *a, const char *where) {
    if (rel_alloc_live_blocks(a) != 0 || rel_alloc_live_bytes(a) != 0)
        problem("%s: leak: %llu blocks / %llu bytes still allocated (allocated %llu bytes, freed "
                "%llu)",
                where, rel_alloc_live_blocks(a), rel_alloc_live_bytes(a),
                (unsigned long long)atomic_load(&a->bytes_alloc),
                (unsigned long long)atomic_load(&a->bytes_freed));
    if (atomic_load(&a->bad_frees) != 0)
        problem("%s: %llu frees with a wrong size or a foreign pointer", where,
                (unsigned long long)atomic_load(&a->bad_frees));
}

/* What an executor made for a test is like. */
typedef struct pool {
    unsigned threads; /* core threads */
    bool prestart;    /* prestart them all (a failure is a problem) */
    bool small;       /* an engine array that starts with two slots (where the engine
                         has a "capacity" parameter), so that its growth is exercised */
    int (*decorate)(tk_executor *ex, tk_task_spec *spec, void *ctx); /* may be NULL */
} pool;

/* Creates an executor on `engine` allocating through `a` (may be NULL: the
 * default allocator). Returns the status of create(). */
static int create_ex(rel_alloc *a, const tk_queue_ops *engine, pool p, tk_executor **ex) {
    tk_executor_options opt;
    tk_queue_config cfg; /* copied at create */
    rel_options(&opt, &cfg, engine, p.threads, a != NULL ? &a->iface : NULL);
    if (p.small)
        (void)tk_queue_config_set_value(&cfg, "capacity", 2);
    opt.hooks.decorate = p.decorate;
    return tk_executor_create(&opt, ex);
}

/* ---- allocation-failure sweeps ----------------------------------------------------- */

/* One run of a sweep: an operation with allocation #n failing. */
typedef struct sweep {
    const tk_queue_ops *engine;
    unsigned long long n; /* the allocation that fails, counted from sweep_arm() */
    rel_alloc a;          /* new for each run: what timerkit allocates through */
    char where[160];      /* "[engine] what, allocation #n fails": each problem's prefix */
    void *ctx;            /* what the step needs besides (a form, a mode) */
} sweep;

/* A sweep's step: one run. It sets up what the operation needs, calls
 * sweep_arm() just before the operation and sweep_disarm() just after it,
 * checks the outcome and returns what sweep_disarm() said (false also when a
 * set-up failed, which ends the sweep). */
typedef bool (*sweep_step)(sweep *s);

/* Runs step with allocation #1, #2, ... failing until a run does not reach
 * allocation #n (every allocation site of the operation has failed once),
 * or `max` runs, which is a problem. After each run the allocator must hold
 * nothing. Prints and returns the number of sites swept. */
static unsigned long long sweep_sites(const tk_queue_ops *engine, const char *what,
                                      unsigned long long max, sweep_step step, void *ctx) {
    sweep s;
    s.engine = engine;
    s.ctx = ctx;
    for (s.n = 1; s.n <= max; s.n++) {
        snprintf(s.where, sizeof(s.where), "[%s] %s, allocation #%llu fails", engine->name, what,
                 s.n);
        rel_alloc_init(&s.a);
        bool hit = step(&s);
        check_no_leak(&s.a, s.where);
        if (!hit)
            break;
    }
    print_message("  [%s] %s: %llu allocation sites swept\n", engine->name, what, s.n - 1);
    if (s.n > max)
        problem("[%s] %s: still allocating after %llu sites", engine->name, what, max);
    return s.n - 1;
}

static void sweep_arm(sweep *s) {
    rel_alloc_fail_nth(&s->a, s->n);
}

/* Allows allocation again; returns whether allocation #n was reached. */
static bool sweep_disarm(sweep *s) {
    bool hit = atomic_load(&s->a.failures) > 0;
    rel_alloc_disarm(&s->a);
    return hit;
}

/* An executor for the run, allocating through its allocator; NULL (a
 * problem) if create() fails. */
static tk_executor *sweep_executor(sweep *s, pool p) {
    tk_executor *ex = NULL;
    int rc = create_ex(&s->a, s->engine, p, &ex);
    if (rc != TK_OK) {
        problem("%s: create -> %s", s->where, tk_status_name(rc));
        return NULL;
    }
    if (p.prestart && tk_executor_prestart_all_core_threads(ex) < 0)
        problem("%s: prestart failed", s->where);
    return ex;
}

/* A call that failed in a run: TK_ENOMEM, and only because allocation #n
 * failed. */
static void check_enomem(const sweep *s, int rc, bool hit) {
    if (rc != TK_ENOMEM)
        problem("%s: -> %s, want TK_ENOMEM", s->where, tk_status_name(rc));
    if (!hit)
        problem("%s: failed with no allocation failure", s->where);
}

/* Ends a run whose executor survived the failure: still usable, destroyed. */
static void sweep_finish(sweep *s, tk_executor *ex) {
    still_usable(ex, s->where);
    if (tk_executor_destroy(ex) != TK_OK)
        problem("%s: destroy failed", s->where);
}

/* ---- create --------------------------------------------------------------------- */

static bool step_create(sweep *s) {
    tk_executor *ex = (tk_executor *)SENTINEL;
    sweep_arm(s);
    int rc = create_ex(&s->a, s->engine, (pool){.threads = 2}, &ex);
    bool hit = sweep_disarm(s);
    if (rc == TK_OK) {
        sweep_finish(s, ex);
    } else {
        check_enomem(s, rc, hit);
        if (ex != (tk_executor *)SENTINEL)
            problem("%s: *out written on failure", s->where);
    }
    return hit;
}

static void test_alloc_fail_create(const tk_queue_ops *engine) {
    sweep_sites(engine, "create", MAX_SWEEP, step_create, NULL);
}

/* ---- scheduling calls ------------------------------------------------------------- */

enum form {
    F_SCHEDULE,
    F_SCHEDULE_NO_FUTURE,
    F_EXECUTE,
    F_SUBMIT,
    F_FIXED_RATE,
    F_FIXED_DELAY,
    F_SPEC_ARG_FREE,
    F_COUNT
};
static const char *const form_names[F_COUNT] = {"schedule",     "schedule(out=NULL)", "execute",
                                                "submit",       "fixed_rate",         "fixed_delay",
                                                "spec+arg_free"};

static int schedule_form(tk_executor *ex, enum form f, probe *p, tk_future **out) {
    switch (f) {
    case F_SCHEDULE:
        return tk_executor_schedule(ex, t_probe, p, TK_NS_PER_MS, out);
    case F_SCHEDULE_NO_FUTURE:
        return tk_executor_schedule(ex, t_probe, p, TK_NS_PER_MS, NULL);
    case F_EXECUTE:
        return tk_executor_execute(ex, t_probe, p);
    case F_SUBMIT:
        return tk_executor_submit(ex, t_probe, p, out);
    case F_FIXED_RATE:
        return tk_executor_schedule_at_fixed_rate(ex, t_probe, p, 0, TK_NS_PER_MS, out);
    case F_FIXED_DELAY:
        return tk_executor_schedule_with_fixed_delay(ex, t_probe, p, 0, TK_NS_PER_MS, out);
    default: {
        tk_task_spec s = probe_spec(p, TK_NS_PER_MS);
        return tk_executor_schedule_spec(ex, &s, out);
    }
    }
}

typedef struct schedule_sweep {
    enum form form;
    bool prestart;
} schedule_sweep;

static bool step_schedule(sweep *s) {
    const schedule_sweep *c = s->ctx;
    enum form f = c->form;
    bool periodic = f == F_FIXED_RATE || f == F_FIXED_DELAY;
    bool has_future = f != F_SCHEDULE_NO_FUTURE && f != F_EXECUTE;
    tk_executor *ex = sweep_executor(s, (pool){.threads = 2, .prestart = c->prestart});
    if (ex == NULL)
        return false;
    probe p;
    probe_init(&p);
    tk_future *fu = SENTINEL;
    sweep_arm(s);
    int rc = schedule_form(ex, f, &p, &fu);
    bool hit = sweep_disarm(s);
    if (rc == TK_OK) {
        /* Accepted: it runs (periodic: at least twice), then we stop it. */
        if (!rel_wait_at_least(&p.runs, periodic ? 2 : 1, WAIT_NS))
            problem("%s: accepted task did not run (runs %ld)", s->where, atomic_load(&p.runs));
        if (has_future && (fu == SENTINEL || fu == NULL)) {
            problem("%s: TK_OK without a future", s->where);
        } else if (has_future) {
            if (periodic)
                tk_future_cancel(fu, false);
            tk_future_get_timeout(fu, WAIT_NS, NULL);
            tk_future_release(fu);
        }
    } else {
        check_enomem(s, rc, hit);
        if (has_future && fu != SENTINEL)
            problem("%s: *out written on failure", s->where);
    }
    sweep_finish(s, ex);
    if (rc != TK_OK && atomic_load(&p.runs) != 0)
        problem("%s: a task whose call failed ran %ld times", s->where, atomic_load(&p.runs));
    if (!periodic && rc == TK_OK && atomic_load(&p.runs) != 1)
        problem("%s: one-shot ran %ld times", s->where, atomic_load(&p.runs));
    long want_frees = rc == TK_OK ? 1 : 0; /* a failed call keeps ownership with the caller */
    if (f == F_SPEC_ARG_FREE && atomic_load(&p.frees) != want_frees)
        problem("%s (status %s): arg_free ran %ld times, want %ld", s->where, tk_status_name(rc),
                atomic_load(&p.frees), want_frees);
    return hit;
}

static void test_alloc_fail_schedule(const tk_queue_ops *engine) {
    for (int f = 0; f < F_COUNT; f++) {
        for (int prestart = 1; prestart >= 0; prestart--) {
            schedule_sweep c = {(enum form)f, prestart != 0};
            char what[64];
            snprintf(what, sizeof(what), "%s (%s)", form_names[f],
                     prestart ? "prestarted" : "lazy start");
            sweep_sites(engine, what, MAX_SWEEP, step_schedule, &c);
        }
    }
}

/* ---- cancel, purge ---------------------------------------------------------------- */

typedef struct cancel_sweep {
    bool remove_on_cancel;
    bool periodic;
} cancel_sweep;

static bool step_cancel_purge(sweep *s) {
    const cancel_sweep *c = s->ctx;
    tk_executor *ex = sweep_executor(s, (pool){.threads = 1});
    if (ex == NULL)
        return false;
    tk_executor_set_remove_on_cancel(ex, c->remove_on_cancel);
    probe p;
    probe_init(&p);
    tk_future *fu = NULL;
    int rc = c->periodic
                 ? tk_executor_schedule_at_fixed_rate(ex, t_probe, &p, HOUR_NS, TK_NS_PER_S, &fu)
                 : tk_executor_schedule(ex, t_probe, &p, HOUR_NS, &fu);
    if (rc != TK_OK) {
        problem("%s: schedule -> %s", s->where, tk_status_name(rc));
        tk_executor_destroy(ex);
        return false;
    }
    sweep_arm(s);
    rc = tk_future_cancel(fu, true);
    long purged = tk_executor_purge(ex);
    bool hit = sweep_disarm(s);
    if (rc != TK_OK)
        problem("%s: cancel -> %s, want TK_OK", s->where, tk_status_name(rc));
    if (purged < 0 || purged > 1)
        problem("%s: purge -> %ld", s->where, purged);
    if (tk_future_get_timeout(fu, WAIT_NS, NULL) != TK_ECANCELLED)
        problem("%s: future not cancelled", s->where);
    tk_future_release(fu);
    sweep_finish(s, ex);
    if (atomic_load(&p.runs) != 0)
        problem("%s: cancelled task ran", s->where);
    return hit;
}

static void test_alloc_fail_cancel_purge(const tk_queue_ops *engine) {
    for (int roc = 0; roc < 2; roc++) {
        for (int periodic = 0; periodic < 2; periodic++) {
            cancel_sweep c = {roc != 0, periodic != 0};
            char what[64];
            snprintf(what, sizeof(what), "cancel+purge (%s, remove_on_cancel=%d)",
                     periodic ? "periodic" : "one-shot", roc);
            sweep_sites(engine, what, MAX_SWEEP, step_cancel_purge, &c);
        }
    }
}

/* ---- access to the queue ------------------------------------------------------------ */

static bool visit_counting(const tk_task_info *task, void *ctx) {
    (void)task;
    ++*(long *)ctx;
    return true;
}

/* contains(), visit_queue() (which allocates its snapshot) and remove() with
 * allocation n failing: visit_queue says TK_ENOMEM and calls nothing, or
 * visits every queued task; the others allocate nothing and are unaffected. */
static bool step_queue_access(sweep *s) {
    enum { Q = 5 };
    tk_executor *ex = sweep_executor(s, (pool){.threads = 1});
    if (ex == NULL)
        return false;
    probe p;
    probe_init(&p);
    tk_future *fu[Q];
    int made = 0;
    for (; made < Q; made++) {
        int rc = tk_executor_schedule(ex, t_probe, &p, HOUR_NS, &fu[made]);
        if (rc != TK_OK) {
            problem("%s: schedule -> %s", s->where, tk_status_name(rc));
            break;
        }
    }
    sweep_arm(s);
    long visits = 0;
    long rc = tk_executor_visit_queue(ex, visit_counting, &visits);
    bool in = made > 0 && tk_executor_contains(ex, fu[0]);
    int removed = made > 0 ? tk_executor_remove(ex, fu[0]) : TK_OK;
    bool hit = sweep_disarm(s);
    if (!(rc == TK_ENOMEM && visits == 0) && !(rc == made && visits == made))
        problem("%s: visit_queue -> %ld after %ld visits", s->where, rc, visits);
    if (made > 0 &&
        (!in || removed != TK_OK || tk_future_get_timeout(fu[0], WAIT_NS, NULL) != TK_EREMOVED))
        problem("%s: contains %d, remove %s", s->where, in, tk_status_name(removed));
    for (int i = 0; i < made; i++)
        tk_future_release(fu[i]);
    sweep_finish(s, ex);
    if (atomic_load(&p.runs) != 0)
        problem("%s: a queued task ran", s->where);
    return hit;
}

static void test_alloc_fail_queue_access(const tk_queue_ops *engine) {
    sweep_sites(engine, "queue access", MAX_SWEEP, step_queue_access, NULL);
}

/* ---- periodic re-queue ------------------------------------------------------------- */

typedef struct requeue_sweep {
    bool fixed_delay;
    unsigned long long calls_in_window; /* allocations in the last run's ten periods */
} requeue_sweep;

/* A periodic task runs; allocation n (counted from then) fails within its
 * next ten periods. */
static bool step_periodic_requeue(sweep *s) {
    requeue_sweep *c = s->ctx;
    tk_executor *ex = sweep_executor(s, (pool){.threads = 2});
    if (ex == NULL)
        return false;
    probe p;
    probe_init(&p);
    tk_future *fu = NULL;
    int rc = c->fixed_delay
                 ? tk_executor_schedule_with_fixed_delay(ex, t_probe, &p, 0, TK_NS_PER_MS, &fu)
                 : tk_executor_schedule_at_fixed_rate(ex, t_probe, &p, 0, TK_NS_PER_MS, &fu);
    if (rc != TK_OK) {
        problem("%s: schedule -> %s", s->where, tk_status_name(rc));
        tk_executor_destroy(ex);
        return false;
    }
    rel_wait_at_least(&p.runs, 2, WAIT_NS);
    unsigned long long c0 = atomic_load(&s->a.calls);
    sweep_arm(s);
    long r0 = atomic_load(&p.runs);
    /* Ten more periods: it keeps running, or ends with a status. */
    bool progressed = rel_wait_at_least(&p.runs, r0 + 10, 2 * TK_NS_PER_S);
    c->calls_in_window = atomic_load(&s->a.calls) - c0;
    bool hit = sweep_disarm(s);
    if (!progressed && !tk_future_is_done(fu))
        problem("%s: stalled after %ld runs without completing its future", s->where,
                atomic_load(&p.runs));
    tk_future_cancel(fu, false);
    if (tk_future_get_timeout(fu, WAIT_NS, NULL) == TK_ETIMEDOUT)
        problem("%s: future never completed after cancel", s->where);
    tk_future_release(fu);
    sweep_finish(s, ex);
    return hit;
}

static void test_alloc_fail_periodic_requeue(const tk_queue_ops *engine) {
    for (int kind = 0; kind < 2; kind++) {
        requeue_sweep c = {kind != 0, 0};
        const char *what = kind ? "fixed-delay re-queue" : "fixed-rate re-queue";
        sweep_sites(engine, what, 32, step_periodic_requeue, &c);
        print_message("  [%s] %s: %llu allocations in ten periods\n", engine->name, what,
                      c.calls_in_window);
    }
}

/* ---- shutdown, shutdown_now, destroy ------------------------------------------------ */

static void dropped_cb(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    (void)task;
    (void)arg_free;
    atomic_fetch_add((atomic_long *)ctx, 1);
}

enum shutdown_mode { SHUTDOWN_THEN_NOW, SHUTDOWN_NOW, DESTROY, SHUTDOWN_MODES };
static const char *const shutdown_names[SHUTDOWN_MODES] = {"shutdown+shutdown_now", "shutdown_now",
                                                           "destroy"};

/* Three one-shots an hour away and a running periodic task, then the mode
 * with allocation n failing. */
static bool step_shutdown(sweep *s) {
    enum shutdown_mode mode = *(const enum shutdown_mode *)s->ctx;
    tk_executor *ex = sweep_executor(s, (pool){.threads = 2});
    if (ex == NULL)
        return false;
    probe p;
    probe_init(&p);
    tk_task_spec spec = probe_spec(&p, HOUR_NS);
    for (int i = 0; i < 3; i++)
        if (tk_executor_schedule_spec(ex, &spec, NULL) != TK_OK)
            problem("%s: schedule failed", s->where);
    spec.kind = TK_TASK_FIXED_RATE;
    spec.delay_ns = 0;
    spec.period_ns = TK_NS_PER_MS;
    if (tk_executor_schedule_spec(ex, &spec, NULL) != TK_OK)
        problem("%s: schedule failed", s->where);
    rel_wait_at_least(&p.runs, 1, WAIT_NS);
    atomic_long dropped = 0;
    sweep_arm(s);
    long handed = -1;
    int rc = TK_OK;
    if (mode == SHUTDOWN_THEN_NOW)
        rc = tk_executor_shutdown(ex);
    if (mode != DESTROY)
        handed = tk_executor_shutdown_now(ex, dropped_cb, &dropped);
    int arc = mode != DESTROY ? tk_executor_await_termination(ex, WAIT_NS) : TK_OK;
    int drc = tk_executor_destroy(ex);
    bool hit = sweep_disarm(s);
    if (rc != TK_OK || arc != TK_OK || drc != TK_OK)
        problem("%s: shutdown %s, await %s, destroy %s", s->where, tk_status_name(rc),
                tk_status_name(arc), tk_status_name(drc));
    /* shutdown() first drops the periodic task (its arg freed once), so
     * shutdown_now hands back the three one-shots; shutdown_now alone also
     * hands back the periodic task unless it was running at that instant;
     * destroy frees every argument. */
    long want_handed_min = 3, want_handed_max = mode == SHUTDOWN_NOW ? 4 : 3;
    if (mode != DESTROY &&
        (handed < want_handed_min || handed > want_handed_max || atomic_load(&dropped) != handed))
        problem("%s: shutdown_now handed back %ld (drop called %ld), want %ld..%ld", s->where,
                handed, atomic_load(&dropped), want_handed_min, want_handed_max);
    long want_frees = mode == DESTROY ? 4 : 4 - (handed < 3 ? 3 : handed);
    if (atomic_load(&p.frees) != want_frees)
        problem("%s: arg_free ran %ld times, want %ld", s->where, atomic_load(&p.frees),
                want_frees);
    return hit;
}

static void test_alloc_fail_shutdown(const tk_queue_ops *engine) {
    for (enum shutdown_mode mode = 0; mode < SHUTDOWN_MODES; mode++)
        sweep_sites(engine, shutdown_names[mode], MAX_SWEEP, step_shutdown, &mode);
}

/* ---- scheduling through a decorate hook that wraps the task --------------------------- */

/* decorate() is documented to run before the task is created, and to be the
 * place to wrap fn/arg. A wrapper it allocates must not leak when the call
 * then fails for lack of memory (or of a thread): either the executor
 * creates the task first, or it disposes of the decorated arg. The caller's
 * own arg may be freed through the wrapper's chain or kept, not both. */
typedef struct wrap {
    tk_task_fn fn;
    void *arg;
    tk_arg_free_fn arg_free;
} wrap;

static atomic_long wraps_live;

static int wrap_run(tk_run *run, void *a) {
    wrap *w = a;
    return w->fn(run, w->arg);
}

static void wrap_free(void *a) {
    wrap *w = a;
    if (w->arg_free != NULL)
        w->arg_free(w->arg);
    free(w);
    atomic_fetch_sub(&wraps_live, 1);
}

static int decorate_wrap(tk_executor *ex, tk_task_spec *spec, void *ctx) {
    (void)ex;
    (void)ctx;
    wrap *w = malloc(sizeof(*w));
    if (w == NULL)
        return TK_ENOMEM;
    *w = (wrap){spec->fn, spec->arg, spec->arg_free};
    spec->fn = wrap_run;
    spec->arg = w;
    spec->arg_free = wrap_free;
    atomic_fetch_add(&wraps_live, 1);
    return TK_OK;
}

static bool step_decorated_schedule(sweep *s) {
    tk_executor *ex =
        sweep_executor(s, (pool){.threads = 1, .prestart = true, .decorate = decorate_wrap});
    if (ex == NULL)
        return false;
    atomic_store(&wraps_live, 0);
    probe p;
    probe_init(&p);
    tk_task_spec spec = probe_spec(&p, 0);
    sweep_arm(s);
    int rc = tk_executor_schedule_spec(ex, &spec, NULL);
    bool hit = sweep_disarm(s);
    if (rc == TK_OK && !rel_wait_at_least(&p.runs, 1, WAIT_NS))
        problem("%s: accepted task did not run", s->where);
    if (rc != TK_OK && rc != TK_ENOMEM)
        problem("%s: -> %s", s->where, tk_status_name(rc));
    tk_executor_destroy(ex);
    if (atomic_load(&wraps_live) != 0)
        problem("%s: the call returned %s and the decorate hook's wrapper leaked (%ld live)",
                s->where, tk_status_name(rc), atomic_load(&wraps_live));
    if (atomic_load(&p.frees) > 1)
        problem("%s: the caller's arg freed %ld times", s->where, atomic_load(&p.frees));
    return hit;
}

static void test_alloc_fail_with_decorate(const tk_queue_ops *engine) {
    sweep_sites(engine, "decorated schedule", MAX_SWEEP, step_decorated_schedule, NULL);

    /* The same with thread creation failing: TK_ETHREAD after decorate. */
    char where[96];
    snprintf(where, sizeof(where), "[%s] decorated schedule, no thread", engine->name);
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, 1, NULL);
    opt.hooks.decorate = decorate_wrap;
    opt.thread_factory = fail_factory;
    tk_executor *ex = NULL;
    assert_int_equal(tk_executor_create(&opt, &ex), TK_OK);
    atomic_store(&wraps_live, 0);
    int rc = tk_executor_execute(ex, t_probe, &(probe){0});
    tk_executor_destroy(ex);
    if (rc != TK_ETHREAD)
        problem("%s: -> %s, want TK_ETHREAD", where, tk_status_name(rc));
    if (atomic_load(&wraps_live) != 0)
        problem("%s: the decorate hook's wrapper leaked after %s", where, tk_status_name(rc));
}

/* ---- many schedules: engine growth ----------------------------------------------------- */

/* Forty far-off tasks on an engine whose array starts with two slots: the
 * heap grows five times, so its growth (inside offer) fails once too. Exactly
 * one call may fail, with TK_ENOMEM; every accepted task is queued. */
enum { BULK = 40 };

static bool step_bulk_schedule(sweep *s) {
    tk_executor *ex = sweep_executor(s, (pool){.threads = 2, .prestart = true, .small = true});
    if (ex == NULL)
        return false;
    probe p;
    probe_init(&p);
    tk_future *fu[BULK];
    int failed = 0, accepted = 0;
    sweep_arm(s);
    for (int i = 0; i < BULK; i++) {
        fu[i] = SENTINEL;
        int rc = tk_executor_schedule(ex, t_probe, &p, HOUR_NS, &fu[i]);
        if (rc == TK_OK) {
            accepted++;
            continue;
        }
        failed++;
        if (rc != TK_ENOMEM)
            problem("%s: call %d -> %s", s->where, i, tk_status_name(rc));
        if (fu[i] != SENTINEL)
            problem("%s: *out written on failure", s->where);
        fu[i] = NULL;
    }
    bool hit = sweep_disarm(s);
    if (failed > 1 || (failed == 1 && !hit))
        problem("%s: %d calls failed", s->where, failed);
    tk_executor_stats st;
    tk_executor_stats_get(ex, &st);
    if (st.queue_size != (size_t)accepted)
        problem("%s: %d accepted, %zu queued", s->where, accepted, st.queue_size);
    still_usable(ex, s->where);
    for (int i = 0; i < BULK; i++) {
        if (fu[i] == NULL)
            continue;
        int rc = tk_future_cancel(fu[i], false);
        if (rc != TK_OK)
            problem("%s: cancel %d -> %s", s->where, i, tk_status_name(rc));
        tk_future_release(fu[i]);
    }
    tk_executor_destroy(ex);
    if (atomic_load(&p.runs) != 0)
        problem("%s: a cancelled task ran", s->where);
    return hit;
}

static void test_alloc_fail_bulk_schedule(const tk_queue_ops *engine) {
    char what[64];
    snprintf(what, sizeof(what), "%d schedules on a 2-slot engine", BULK);
    sweep_sites(engine, what, MAX_SWEEP, step_bulk_schedule, NULL);
}

/* ---- bulk invocation: invoke_all, invoke_any ------------------------------------------ */

static int t_probe_result(tk_run *run, void *arg) {
    tk_run_set_result(run, arg);
    atomic_fetch_add(&((probe *)arg)->runs, 1);
    return 0;
}

enum invoke_mode { INV_ALL, INV_ALL_TIMED, INV_ANY, INV_COUNT };
static const char *const invoke_names[INV_COUNT] = {"invoke_all", "invoke_all(timeout)",
                                                    "invoke_any"};
enum { INVOKE_TASKS = 1700, INVOKE_THREADS = 2 }; /* a slab holds 1632 small or 1152 big tasks */

/* What the invoke call of a run returned: on TK_OK the documented outcome, on
 * a failure TK_ENOMEM and every future NULL. */
static void check_invoke_return(const sweep *s, enum invoke_mode mode, int rc, bool hit,
                                bool winner, tk_future **fs) {
    if (rc != TK_OK) {
        check_enomem(s, rc, hit);
        for (int i = 0; mode != INV_ANY && i < INVOKE_TASKS; i++) {
            if (fs[i] != NULL) {
                problem("%s: futures[%d] not NULL on failure", s->where, i);
                break;
            }
        }
        return;
    }
    if (mode == INV_ANY && !winner)
        problem("%s: TK_OK without the winner's result", s->where);
    tk_task_state want = mode == INV_ALL ? TK_TASK_SUCCESS : TK_TASK_CANCELLED;
    for (int i = 0; mode != INV_ANY && i < INVOKE_TASKS; i++) {
        if (fs[i] == SENTINEL || fs[i] == NULL) {
            problem("%s: TK_OK without future %d", s->where, i);
            break;
        }
        if (tk_future_state(fs[i]) != want)
            problem("%s: future %d is %s", s->where, i, tk_task_state_name(tk_future_state(fs[i])));
        tk_future_release(fs[i]);
    }
}

/* One call of the mode with INVOKE_TASKS tasks (more than one slab of task
 * objects, and an engine array that starts with two slots, so both grow
 * during the call) while allocation #n fails. invoke_all runs them now; its
 * timed form gets them an hour away and a 1 ms timeout, so it returns with
 * all of them cancelled; invoke_any gets all but one an hour away and a last
 * one that succeeds now, so all are scheduled. On TK_OK the outcome is the
 * documented one; on TK_ENOMEM, every future is NULL, no task of the call
 * starts after the call returned (at most the pool's two threads were
 * already inside a callback), and every task the executor accepted was
 * cancelled or ran: its arg_free ran once. */
static bool step_invoke(sweep *s) {
    enum { K = INVOKE_TASKS };
    enum invoke_mode mode = *(const enum invoke_mode *)s->ctx;
    tk_executor *ex =
        sweep_executor(s, (pool){.threads = INVOKE_THREADS, .prestart = true, .small = true});
    if (ex == NULL)
        return false;
    probe p;
    probe_init(&p);
    static tk_task_spec specs[K];
    static tk_future *fs[K];
    for (int i = 0; i < K; i++) {
        specs[i] = probe_spec(&p, mode == INV_ALL ? 0 : HOUR_NS);
        fs[i] = SENTINEL;
    }
    if (mode == INV_ANY) {
        specs[K - 1].fn = t_probe_result;
        specs[K - 1].delay_ns = 0;
    }
    void *result = NULL;
    sweep_arm(s);
    int rc;
    if (mode == INV_ANY)
        rc = tk_executor_invoke_any(ex, specs, K, &result);
    else
        rc = tk_executor_invoke_all_timeout(ex, specs, K, mode == INV_ALL ? -1 : TK_NS_PER_MS, fs);
    long runs_at_return = atomic_load(&p.runs);
    bool hit = sweep_disarm(s);
    check_invoke_return(s, mode, rc, hit, result == &p, fs);
    /* Let whatever is running finish, then count. */
    if (tk_executor_shutdown(ex) != TK_OK || tk_executor_await_termination(ex, WAIT_NS) != TK_OK)
        problem("%s: the pool did not terminate", s->where);
    tk_executor_stats st;
    tk_executor_stats_get(ex, &st);
    long runs = atomic_load(&p.runs), frees = atomic_load(&p.frees);
    if (runs > runs_at_return + INVOKE_THREADS)
        problem("%s: %ld tasks started after the call returned", s->where, runs - runs_at_return);
    /* Each task the executor accepted had its arg_free run once (the failed
     * one and those never scheduled stay the caller's), and every one of
     * them ran or was cancelled: both, for a task cancelled during its run.
     * How many those are has no bound: the call's cancel sweep goes through
     * the tasks in the order the workers run them, so it can catch one
     * running task after another. */
    uint64_t ended = (uint64_t)runs + st.cancelled_count;
    if (frees > K || (uint64_t)frees != st.accepted_count || ended < (uint64_t)frees)
        problem("%s: %ld arg_free calls for %llu accepted tasks, %ld ran, %llu cancelled", s->where,
                frees, (unsigned long long)st.accepted_count, runs,
                (unsigned long long)st.cancelled_count);
    long want_runs = mode == INV_ALL ? K : mode == INV_ANY ? 1 : 0;
    if (rc == TK_OK && (runs != want_runs || frees != K))
        problem("%s: TK_OK but %ld runs (want %ld), %ld arg_free (want %d)", s->where, runs,
                want_runs, frees, K);
    else if (rc != TK_OK && mode != INV_ALL && runs != 0)
        problem("%s: a far-off task ran", s->where);
    if (tk_executor_destroy(ex) != TK_OK)
        problem("%s: destroy failed", s->where);
    return hit;
}

static void test_alloc_fail_invoke(const tk_queue_ops *engine) {
    for (enum invoke_mode m = 0; m < INV_COUNT; m++) {
        char what[64];
        snprintf(what, sizeof(what), "%s of %d tasks", invoke_names[m], INVOKE_TASKS);
        sweep_sites(engine, what, MAX_SWEEP, step_invoke, &m);
    }
}

/* Counts a schedule's result as accepted or TK_ENOMEM; anything else is a
 * problem. */
static void tally_schedule(int rc, int *ok, int *enomem, const char *where) {
    if (rc == TK_OK)
        (*ok)++;
    else if (rc == TK_ENOMEM)
        (*enomem)++;
    else
        problem("%s: schedule -> %s", where, tk_status_name(rc));
}

/* Allocation fails for good: queued work still runs, new work gets ENOMEM,
 * and recovery is complete once memory comes back. */
static void test_alloc_fail_persistent(const tk_queue_ops *engine) {
    char where[64];
    snprintf(where, sizeof(where), "[%s] out of memory for good", engine->name);
    rel_alloc a;
    rel_alloc_init(&a);
    tk_executor *ex = NULL;
    assert_int_equal(create_ex(&a, engine, (pool){.threads = 2}, &ex), TK_OK);
    probe p, per;
    probe_init(&p);
    probe_init(&per);
    for (int i = 0; i < 20; i++)
        assert_int_equal(tk_executor_schedule(ex, t_probe, &p, 20 * TK_NS_PER_MS, NULL), TK_OK);
    tk_future *fu = NULL;
    assert_int_equal(
        tk_executor_schedule_at_fixed_rate(ex, t_probe, &per, 0, 2 * TK_NS_PER_MS, &fu), TK_OK);
    rel_alloc_fail_from(&a, 1);
    /* Tasks live in slabs, so the memory already held serves some more
     * schedules: hold timers an hour ahead until one call gets TK_ENOMEM (a
     * slab holds a few hundred). */
    int held = 0, enomem = 0;
    while (enomem == 0 && held < 100000)
        tally_schedule(tk_executor_schedule(ex, t_probe, &p, HOUR_NS, NULL), &held, &enomem, where);
    int accepted = 0;
    for (int i = 0; i < 50; i++)
        tally_schedule(tk_executor_schedule(ex, t_probe, &p, 0, NULL), &accepted, &enomem, where);
    /* The queued work goes on without memory. */
    long want = 20 + accepted;
    if (!rel_wait_at_least(&p.runs, want, WAIT_NS))
        problem("%s: %ld runs, want >= %ld", where, atomic_load(&p.runs), want);
    /* So does the periodic task, with one exception: while it runs, its slot
     * in an engine that allocates for offers (the heap's array) can be taken
     * by a held timer; its re-queue then finds the engine full and out of
     * memory, and the task ends cancelled (documented), which its future
     * must say. */
    bool periodic_went_on = rel_wait_at_least(&per.runs, 10, WAIT_NS);
    bool periodic_refused = false;
    if (!periodic_went_on) {
        periodic_refused = tk_future_is_cancelled(fu) && atomic_load(&per.runs) >= 1 &&
                           strcmp(engine->name, "heap") == 0;
        if (!periodic_refused)
            problem("%s: periodic task ran %ld times, want >= 10", where, atomic_load(&per.runs));
    }
    rel_alloc_disarm(&a);
    if (enomem == 0)
        problem("%s: no call reported TK_ENOMEM", where);
    int crc = tk_future_cancel(fu, false);
    if (periodic_refused ? crc != TK_EDONE : (crc != TK_OK && crc != TK_ERUNNING))
        problem("%s: cancel of the periodic task -> %s", where, tk_status_name(crc));
    tk_future_release(fu);
    still_usable(ex, where);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
    check_no_leak(&a, where);
    print_message("  [%s] out of memory for good: %d held timers fit, then %d TK_ENOMEM "
                  "(%d of 50 more accepted), queued work ran, periodic task %s\n",
                  engine->name, held, enomem, accepted,
                  periodic_went_on ? "went on" : "cancelled by a refused re-queue");
}

/* ---- the wheel's pending limit (TK_EFULL) --------------------------------------------- */

static atomic_int custom_reason;

static int reject_record(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    (void)ex;
    (void)task;
    (void)ctx;
    atomic_store(&custom_reason, reason);
    return TK_EFULL;
}

typedef struct filler {
    tk_executor *ex;
    probe *far;
    atomic_long runs;
    atomic_int fill_rc;
} filler;

/* A periodic run that fills the engine's last free place before returning. */
static int t_fill_then_return(tk_run *run, void *arg) {
    filler *f = arg;
    if (atomic_fetch_add(&f->runs, 1) == 1)
        atomic_store(&f->fill_rc,
                     tk_executor_schedule(tk_run_executor(run), t_probe, f->far, HOUR_NS, NULL));
    return 0;
}

static tk_executor *limited_executor(const tk_queue_ops *engine, size_t limit,
                                     tk_rejection_policy pol) {
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, 2, NULL);
    cfg.max_pending = limit;
    opt.rejection = pol;
    opt.reject = reject_record;
    tk_executor *ex = NULL;
    assert_int_equal(tk_executor_create(&opt, &ex), TK_OK);
    return ex;
}

/* A periodic task whose re-queue meets a full engine: whatever the executor
 * does, it is visible (the task keeps running, or its future completes as
 * cancelled, the rejection is counted and its arg is freed once), never
 * silent. */
static void periodic_requeue_into_a_full_engine(const tk_queue_ops *engine) {
    probe far;
    probe_init(&far);
    filler fl;
    memset(&fl, 0, sizeof(fl));
    fl.far = &far;
    atomic_store(&fl.fill_rc, 1);
    tk_executor *ex = limited_executor(engine, 2, TK_REJECT_ABORT);
    tk_task_spec ps;
    memset(&ps, 0, sizeof(ps));
    ps.fn = t_fill_then_return;
    ps.arg = &fl;
    ps.kind = TK_TASK_FIXED_RATE;
    ps.period_ns = 2 * TK_NS_PER_MS;
    tk_future *fp = NULL;
    /* Another far task, so that the filler's one takes the last place. It
     * goes in first: the filler fills at its second run, 2 ms after the
     * first, and a main thread held up that long on a loaded machine must not
     * find the engine already full (docs/engine-notes.md). */
    assert_int_equal(tk_executor_schedule(ex, t_probe, &far, HOUR_NS, NULL), TK_OK);
    assert_int_equal(tk_executor_schedule_spec(ex, &ps, &fp), TK_OK);
    rel_wait_at_least(&fl.runs, 6, 200 * TK_NS_PER_MS);
    long runs = atomic_load(&fl.runs);
    bool done = tk_future_is_done(fp);
    tk_executor_stats st;
    assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);
    print_message("  [%s] periodic re-queue into a full engine: fill %s, %ld runs, future "
                  "%s, rejected_count %llu\n",
                  engine->name, tk_status_name(atomic_load(&fl.fill_rc)), runs,
                  done ? (tk_future_is_cancelled(fp) ? "cancelled" : "done") : "pending",
                  (unsigned long long)st.rejected_count);
    if (runs < 6) {
        assert_true(done);
        assert_true(tk_future_is_cancelled(fp) || tk_future_task_status(fp) != 0);
        assert_true(st.rejected_count >= 1);
    }
    tk_future_cancel(fp, false);
    tk_future_release(fp);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

static void test_pending_limit(const tk_queue_ops *engine) {
    if ((engine->caps & TK_QUEUE_CAP_TICKED) == 0)
        return; /* only the wheel has a pending limit */
    probe p;
    tk_task_spec s = probe_spec(&p, HOUR_NS);

    /* Abort: the call past the limit gets TK_EREJECTED; arg freed once. */
    probe_init(&p);
    tk_executor *ex = limited_executor(engine, 3, TK_REJECT_ABORT);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tk_executor_schedule_spec(ex, &s, NULL), TK_OK);
    tk_future *out = SENTINEL;
    assert_int_equal(tk_executor_schedule_spec(ex, &s, &out), TK_EREJECTED);
    assert_ptr_equal(out, SENTINEL);
    assert_int_equal(atomic_load(&p.frees), 1);
    tk_executor_stats st;
    assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);
    assert_int_equal(st.rejected_count, 1);
    assert_int_equal(st.queue_size, 3);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
    assert_int_equal(atomic_load(&p.frees), 4);

    /* Custom: the handler sees TK_EFULL, its status is returned. */
    atomic_store(&p.frees, 0);
    ex = limited_executor(engine, 1, TK_REJECT_CUSTOM);
    assert_int_equal(tk_executor_schedule_spec(ex, &s, NULL), TK_OK);
    assert_int_equal(tk_executor_schedule_spec(ex, &s, NULL), TK_EFULL);
    assert_int_equal(atomic_load(&custom_reason), TK_EFULL);
    assert_int_equal(atomic_load(&p.frees), 1);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);

    /* Discard-oldest: the earliest queued task makes room. */
    atomic_store(&p.frees, 0);
    ex = limited_executor(engine, 2, TK_REJECT_DISCARD_OLDEST);
    tk_future *f_old = NULL, *f_mid = NULL, *f_new = NULL;
    s.delay_ns = 3000 * TK_NS_PER_S;
    assert_int_equal(tk_executor_schedule_spec(ex, &s, &f_old), TK_OK);
    s.delay_ns = HOUR_NS;
    assert_int_equal(tk_executor_schedule_spec(ex, &s, &f_mid), TK_OK);
    assert_int_equal(tk_executor_schedule_spec(ex, &s, &f_new), TK_OK);
    assert_true(tk_future_is_cancelled(f_old));
    assert_false(tk_future_is_done(f_mid));
    assert_false(tk_future_is_done(f_new));
    assert_int_equal(atomic_load(&p.frees), 1);
    tk_future_release(f_old);
    tk_future_release(f_mid);
    tk_future_release(f_new);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);

    /* Caller-runs: runs in the caller, at (not before) its deadline. */
    atomic_store(&p.frees, 0);
    atomic_store(&p.runs, 0);
    ex = limited_executor(engine, 1, TK_REJECT_CALLER_RUNS);
    assert_int_equal(tk_executor_schedule_spec(ex, &s, NULL), TK_OK);
    int64_t t0 = tk_clock_now_ns();
    tk_future *f_cr = NULL;
    assert_int_equal(tk_executor_schedule(ex, t_probe, &p, 5 * TK_NS_PER_MS, &f_cr), TK_OK);
    int64_t t1 = tk_clock_now_ns();
    assert_true(t1 - t0 >= 5 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&p.runs), 1);
    assert_int_equal(tk_future_get_timeout(f_cr, 0, NULL), TK_OK);
    tk_future_release(f_cr);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);

    periodic_requeue_into_a_full_engine(engine);
}

/* ---- shutdown policies changed at run time ------------------------------------------- */

static void test_shutdown_policies_at_runtime(const tk_queue_ops *engine) {
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, 2, NULL);
    opt.continue_periodic_after_shutdown = true;
    tk_executor *ex = NULL;
    assert_int_equal(tk_executor_create(&opt, &ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, 0), TK_ETIMEDOUT);

    /* A periodic task outlives shutdown() while the policy says so... */
    probe per, later;
    probe_init(&per);
    probe_init(&later);
    tk_task_spec s = probe_spec(&per, 0);
    s.kind = TK_TASK_FIXED_RATE;
    s.period_ns = TK_NS_PER_MS;
    tk_future *fp = NULL;
    assert_int_equal(tk_executor_schedule_spec(ex, &s, &fp), TK_OK);
    s = probe_spec(&later, HOUR_NS);
    tk_future *fl[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(tk_executor_schedule_spec(ex, &s, &fl[i]), TK_OK);
    assert_true(rel_wait_at_least(&per.runs, 2, WAIT_NS));
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    long r0 = atomic_load(&per.runs);
    assert_true(rel_wait_at_least(&per.runs, r0 + 5, WAIT_NS));
    assert_true(tk_executor_is_terminating(ex));
    assert_int_equal(tk_executor_await_termination(ex, 5 * TK_NS_PER_MS), TK_ETIMEDOUT);

    /* ...and stops at once when the policy is switched off. */
    assert_int_equal(tk_executor_set_continue_periodic_after_shutdown(ex, false), TK_OK);
    assert_int_equal(tk_future_get_timeout(fp, WAIT_NS, NULL), TK_ECANCELLED);
    long r1 = atomic_load(&per.runs);
    rel_sleep_ns(10 * TK_NS_PER_MS);
    assert_true(atomic_load(&per.runs) <= r1 + 1); /* at most the run in progress */
    assert_int_equal(atomic_load(&per.frees), 1);

    /* The delayed one-shots keep the pool alive until the other policy drops
     * them: futures cancelled, args freed, pool terminated. */
    assert_int_equal(tk_executor_await_termination(ex, 5 * TK_NS_PER_MS), TK_ETIMEDOUT);
    assert_int_equal(tk_executor_set_execute_delayed_after_shutdown(ex, false), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, WAIT_NS), TK_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tk_future_get_timeout(fl[i], 0, NULL), TK_ECANCELLED);
        assert_int_equal(tk_future_release(fl[i]), TK_OK);
    }
    assert_int_equal(atomic_load(&later.runs), 0);
    assert_int_equal(atomic_load(&later.frees), 3);
    assert_int_equal(tk_future_release(fp), TK_OK);
    assert_false(tk_executor_get_execute_delayed_after_shutdown(ex));
    assert_false(tk_executor_get_continue_periodic_after_shutdown(ex));
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

/* ---- thread factory ------------------------------------------------------------------ */

typedef struct factory {
    atomic_long calls;      /* factory calls */
    atomic_long fail_at;    /* fail the call with this number (1-based); 0 never */
    atomic_long fail_every; /* fail every call whose number it divides; 0 never */
    atomic_bool fail_all;
    atomic_long started, exited;
} factory;

typedef struct trampoline {
    void *(*start)(void *);
    void *arg;
    factory *f;
} trampoline;

static void *tramp_main(void *p) {
    trampoline t = *(trampoline *)p;
    free(p);
    void *r = t.start(t.arg);
    atomic_fetch_add(&t.f->exited, 1);
    return r;
}

static int factory_fn(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                      const char *name) {
    factory *f = ctx;
    (void)name;
    long n = atomic_fetch_add(&f->calls, 1) + 1;
    long every = atomic_load(&f->fail_every);
    if (atomic_load(&f->fail_all) || n == atomic_load(&f->fail_at) || (every > 0 && n % every == 0))
        return -1;
    trampoline *t = malloc(sizeof(*t));
    if (t == NULL)
        return -1;
    *t = (trampoline){start, arg, f};
    atomic_fetch_add(&f->started, 1);
    if (pthread_create(thread, NULL, tramp_main, t) != 0) {
        atomic_fetch_sub(&f->started, 1);
        free(t);
        return -1;
    }
    return 0;
}

/* A run with a thread factory that fails the calls `f` says: the test sets
 * where and f, then factory_run_start(); factory_run_end() after destroy. */
typedef struct factory_run {
    char where[96];
    rel_alloc a;
    factory f;
    tk_executor *ex;
} factory_run;

/* Creates r->ex with `threads` core threads, r->a and r->f; false (a
 * problem) if create() fails. */
static bool factory_run_start(factory_run *r, const tk_queue_ops *engine, unsigned threads) {
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_alloc_init(&r->a);
    rel_options(&opt, &cfg, engine, threads, &r->a.iface);
    opt.thread_factory = factory_fn;
    opt.thread_factory_ctx = &r->f;
    r->ex = NULL;
    if (tk_executor_create(&opt, &r->ex) != TK_OK) {
        problem("%s: create failed", r->where);
        return false;
    }
    return true;
}

/* After destroy: every thread the factory started has exited (with a grace
 * for one that returned from the executor's start routine but has not yet
 * counted itself), and nothing leaked. */
static void factory_run_end(factory_run *r) {
    rel_wait_at_least(&r->f.exited, atomic_load(&r->f.started), TK_NS_PER_S);
    if (atomic_load(&r->f.started) != atomic_load(&r->f.exited))
        problem("%s: %ld threads started, %ld exited after destroy", r->where,
                atomic_load(&r->f.started), atomic_load(&r->f.exited));
    check_no_leak(&r->a, r->where);
}

/* The k-th thread creation fails: only a submit that finds no thread alive
 * fails (TK_ETHREAD, *out untouched); every accepted task runs once. */
static void thread_creation_k_fails(const tk_queue_ops *engine, unsigned threads, long k) {
    factory_run r;
    memset(&r, 0, sizeof(r));
    snprintf(r.where, sizeof(r.where), "[%s] thread creation #%ld fails", engine->name, k);
    atomic_store(&r.f.fail_at, k);
    if (!factory_run_start(&r, engine, threads))
        return;
    probe p;
    probe_init(&p);
    long accepted = 0;
    for (int i = 0; i < 6; i++) {
        tk_future *fu = SENTINEL;
        int rc = tk_executor_submit(r.ex, t_probe, &p, &fu);
        if (rc == TK_OK) {
            accepted++;
            tk_future_release(fu);
        } else if (rc == TK_ETHREAD) {
            /* Only when no thread is alive: the first submit with k = 1. */
            if (!(k == 1 && i == 0))
                problem("%s: submit #%d -> TK_ETHREAD with a thread alive", r.where, i);
            if (fu != SENTINEL)
                problem("%s: *out written on failure", r.where);
        } else {
            problem("%s: submit #%d -> %s", r.where, i, tk_status_name(rc));
        }
    }
    if (!rel_wait_at_least(&p.runs, accepted, WAIT_NS))
        problem("%s: %ld accepted, %ld ran", r.where, accepted, atomic_load(&p.runs));
    int pre = tk_executor_prestart_all_core_threads(r.ex);
    if (pre < 0 && pre != TK_ETHREAD)
        problem("%s: prestart_all -> %s", r.where, tk_status_name(pre));
    still_usable(r.ex, r.where);
    if (tk_executor_destroy(r.ex) != TK_OK)
        problem("%s: destroy failed", r.where);
    if (atomic_load(&p.runs) != accepted)
        problem("%s: %ld accepted, %ld ran", r.where, accepted, atomic_load(&p.runs));
    factory_run_end(&r);
}

/* Every creation fails: every call that needs a thread says TK_ETHREAD and
 * nothing is kept; then recovery. */
static void every_thread_creation_fails(const tk_queue_ops *engine, unsigned threads) {
    factory_run r;
    memset(&r, 0, sizeof(r));
    snprintf(r.where, sizeof(r.where), "[%s] every thread creation fails", engine->name);
    atomic_store(&r.f.fail_all, true);
    if (!factory_run_start(&r, engine, threads))
        return;
    probe p;
    probe_init(&p);
    tk_task_spec s = probe_spec(&p, 0);
    tk_future *fu = SENTINEL;
    int rc = tk_executor_schedule_spec(r.ex, &s, &fu);
    if (rc != TK_ETHREAD || fu != SENTINEL)
        problem("%s: schedule -> %s (out %s)", r.where, tk_status_name(rc),
                fu == SENTINEL ? "untouched" : "written");
    rc = tk_executor_execute(r.ex, t_probe, &p);
    if (rc != TK_ETHREAD)
        problem("%s: execute -> %s", r.where, tk_status_name(rc));
    rc = tk_executor_prestart_core_thread(r.ex);
    if (rc != TK_ETHREAD)
        problem("%s: prestart -> %s", r.where, tk_status_name(rc));
    rc = tk_executor_prestart_all_core_threads(r.ex);
    if (rc != TK_ETHREAD)
        problem("%s: prestart_all -> %s", r.where, tk_status_name(rc));
    tk_executor_stats st;
    tk_executor_stats_get(r.ex, &st);
    if (st.queue_size != 0 || st.pool_size != 0)
        problem("%s: queue %zu, pool %u: a task was kept", r.where, st.queue_size, st.pool_size);
    atomic_store(&r.f.fail_all, false);
    still_usable(r.ex, r.where);
    tk_executor_destroy(r.ex);
    if (atomic_load(&p.runs) != 0)
        problem("%s: a task whose call failed ran", r.where);
    if (atomic_load(&p.frees) != 0)
        problem("%s: arg_free ran %ld times for a task not accepted", r.where,
                atomic_load(&p.frees));
    factory_run_end(&r);
}

static void test_thread_factory_failures(const tk_queue_ops *engine) {
    const unsigned threads = 3;
    for (long k = 1; k <= (long)threads + 1; k++)
        thread_creation_k_fails(engine, threads, k);
    every_thread_creation_fails(engine, threads);
}

/* Workers that time out (core thread time-out, keep-alive 1 ms) leave and
 * start again round after round while every third thread creation fails: a
 * call fails with TK_ETHREAD only with *out untouched, every accepted task
 * runs exactly once, the size changes made meanwhile return TK_OK, and
 * every thread that left is joined (none outlives destroy) and its record
 * freed (no leak). */
static void test_thread_failures_while_the_pool_shrinks(const tk_queue_ops *engine) {
    factory_run r;
    memset(&r, 0, sizeof(r));
    snprintf(r.where, sizeof(r.where), "[%s] time-outs with failing thread starts", engine->name);
    atomic_store(&r.f.fail_every, 3);
    if (!factory_run_start(&r, engine, 2))
        return;
    if (tk_executor_set_keep_alive(r.ex, TK_NS_PER_MS) != TK_OK ||
        tk_executor_allow_core_thread_timeout(r.ex, true) != TK_OK) {
        problem("%s: the core thread time-out was refused", r.where);
        tk_executor_destroy(r.ex);
        return;
    }
    probe p;
    probe_init(&p);
    long accepted = 0;
    for (int round = 0; round < 40; round++) {
        if (tk_executor_set_core_pool_size(r.ex, (unsigned)(round % 4)) != TK_OK)
            problem("%s: set_core_pool_size failed", r.where);
        for (int i = 0; i < 4; i++) {
            tk_future *fu = SENTINEL;
            int rc = tk_executor_schedule(r.ex, t_probe, &p, (i % 2) * TK_NS_PER_MS, &fu);
            if (rc == TK_OK) {
                accepted++;
                tk_future_release(fu);
            } else if (rc != TK_ETHREAD) {
                problem("%s: schedule -> %s", r.where, tk_status_name(rc));
            } else if (fu != SENTINEL) {
                problem("%s: *out written on failure", r.where);
            }
        }
        if (round % 8 == 7) {
            rel_wait_at_least(&p.runs, accepted, WAIT_NS);
            rel_sleep_ns(5 * TK_NS_PER_MS); /* idle: the pool shrinks */
        }
    }
    if (!rel_wait_at_least(&p.runs, accepted, WAIT_NS))
        problem("%s: %ld accepted, %ld ran", r.where, accepted, atomic_load(&p.runs));
    if (tk_executor_destroy(r.ex) != TK_OK)
        problem("%s: destroy failed", r.where);
    if (atomic_load(&p.runs) != accepted)
        problem("%s: %ld accepted, %ld ran", r.where, accepted, atomic_load(&p.runs));
    factory_run_end(&r);
    print_message("  %s: %ld tasks accepted, %ld thread starts (%ld failed)\n", r.where, accepted,
                  atomic_load(&r.f.calls), atomic_load(&r.f.calls) - atomic_load(&r.f.started));
}
/* ---- hostile callbacks ---------------------------------------------------------------- */

typedef struct hooks_rec {
    atomic_long after_calls, after_cancelled, after_failed;
    atomic_long periodic_failed, terminated;
    atomic_int last_after_status;
} hooks_rec;

static void h_after(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    hooks_rec *h = ctx;
    (void)ex;
    (void)task;
    atomic_fetch_add(&h->after_calls, 1);
    if (status == TK_ECANCELLED)
        atomic_fetch_add(&h->after_cancelled, 1);
    else if (status != 0)
        atomic_fetch_add(&h->after_failed, 1);
    atomic_store(&h->last_after_status, status);
}

static void h_periodic_failed(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    (void)ex;
    (void)task;
    (void)status;
    atomic_fetch_add(&((hooks_rec *)ctx)->periodic_failed, 1);
}

static void h_terminated(tk_executor *ex, void *ctx) {
    (void)ex;
    atomic_fetch_add(&((hooks_rec *)ctx)->terminated, 1);
}

static tk_executor *hooked_executor(const tk_queue_ops *engine, unsigned threads, hooks_rec *h) {
    tk_executor_options opt;
    static tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, threads, NULL);
    memset(h, 0, sizeof(*h));
    opt.hooks.after_execute = h_after;
    opt.hooks.periodic_failed = h_periodic_failed;
    opt.hooks.terminated = h_terminated;
    opt.hooks.ctx = h;
    tk_executor *ex = NULL;
    assert_int_equal(tk_executor_create(&opt, &ex), TK_OK);
    return ex;
}

typedef struct hostile {
    atomic_long runs;
    atomic_int fail_on_run;   /* periodic: return 42 on this run (1-based) */
    atomic_int cancel_on_run; /* cancel itself on this run */
    atomic_int cancel_rc;
    atomic_int interrupted_seen;
    atomic_int started;
    atomic_long shutdown_now_count;
    atomic_int shutdown_rc;
    atomic_long dropped;
} hostile;

static int t_fail7(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add(&((hostile *)arg)->runs, 1);
    return 7;
}

static int t_periodic_hostile(tk_run *run, void *arg) {
    hostile *h = arg;
    long r = atomic_fetch_add(&h->runs, 1) + 1;
    if (r == atomic_load(&h->cancel_on_run))
        atomic_store(&h->cancel_rc, tk_future_cancel(tk_run_future(run), false));
    if (r == atomic_load(&h->fail_on_run))
        return 42;
    return 0;
}

static void test_callback_fails(const tk_queue_ops *engine) {
    hooks_rec hr;
    tk_executor *ex = hooked_executor(engine, 2, &hr);
    hostile h;
    memset(&h, 0, sizeof(h));

    /* One-shot failure: the future reports it, the counters see it. */
    tk_future *fu = NULL;
    assert_int_equal(tk_executor_submit(ex, t_fail7, &h, &fu), TK_OK);
    assert_int_equal(tk_future_get_timeout(fu, WAIT_NS, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_task_status(fu), 7);
    assert_true(tk_future_is_done(fu));
    assert_false(tk_future_is_cancelled(fu));
    assert_int_equal(tk_future_release(fu), TK_OK);

    /* Periodic failure on run 3: no run 4, hook once, counters. */
    atomic_store(&h.runs, 0);
    atomic_store(&h.fail_on_run, 3);
    assert_int_equal(
        tk_executor_schedule_at_fixed_rate(ex, t_periodic_hostile, &h, 0, TK_NS_PER_MS, &fu),
        TK_OK);
    assert_int_equal(tk_future_get_timeout(fu, WAIT_NS, NULL), TK_ETASKFAILED);
    assert_int_equal(tk_future_task_status(fu), 42);
    rel_sleep_ns(20 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&h.runs), 3);
    assert_int_equal(tk_future_cancel(fu, false), TK_EDONE);
    assert_int_equal(tk_future_release(fu), TK_OK);
    rel_sleep_ns(5 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&hr.periodic_failed), 1);
    assert_int_equal(atomic_load(&hr.after_failed), 2); /* the one-shot and run 3 */

    tk_executor_stats st;
    assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);
    assert_int_equal(st.failed_count, 2);
    assert_int_equal(st.failed_periodic_count, 1);
    assert_int_equal(st.runs, 4);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

static int t_oneshot_self_cancel(tk_run *run, void *arg) {
    hostile *h = arg;
    atomic_fetch_add(&h->runs, 1);
    atomic_store(&h->cancel_rc, tk_future_cancel(tk_run_future(run), true));
    atomic_store(&h->interrupted_seen, tk_run_interrupted(run));
    return 0;
}

static void test_callback_cancels_itself(const tk_queue_ops *engine) {
    hooks_rec hr;
    tk_executor *ex = hooked_executor(engine, 2, &hr);
    hostile h;
    memset(&h, 0, sizeof(h));

    /* A periodic task cancels itself on run 3: ERUNNING, no run 4. */
    atomic_store(&h.cancel_on_run, 3);
    tk_future *fu = NULL;
    assert_int_equal(
        tk_executor_schedule_with_fixed_delay(ex, t_periodic_hostile, &h, 0, TK_NS_PER_MS, &fu),
        TK_OK);
    assert_int_equal(tk_future_get_timeout(fu, WAIT_NS, NULL), TK_ECANCELLED);
    rel_sleep_ns(20 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&h.runs), 3);
    assert_int_equal(atomic_load(&h.cancel_rc), TK_ERUNNING);
    assert_true(tk_future_is_cancelled(fu));
    assert_int_equal(tk_future_release(fu), TK_OK);
    assert_int_equal(atomic_load(&hr.after_cancelled), 1);

    /* A one-shot cancels itself with may_interrupt: it sees the flag. */
    memset(&h, 0, sizeof(h));
    assert_int_equal(tk_executor_submit(ex, t_oneshot_self_cancel, &h, &fu), TK_OK);
    assert_int_equal(tk_future_get_timeout(fu, WAIT_NS, NULL), TK_ECANCELLED);
    rel_sleep_ns(10 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&h.cancel_rc), TK_ERUNNING);
    assert_int_equal(atomic_load(&h.interrupted_seen), 1);
    assert_int_equal(tk_future_release(fu), TK_OK);
    assert_int_equal(atomic_load(&hr.after_cancelled), 2);

    tk_executor_stats st;
    assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);
    assert_int_equal(st.runs, 4);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

/* Each task schedules two children until depth 0: 2^(D+1) - 1 tasks. */
typedef struct tree {
    atomic_long runs, sched_fail;
    int64_t end_of_time;
} tree;

static tree g_tree;

static int t_tree(tk_run *run, void *arg) {
    intptr_t depth = (intptr_t)arg;
    atomic_fetch_add(&g_tree.runs, 1);
    if (depth > 0) {
        for (int i = 0; i < 2; i++) {
            int64_t delay = (int64_t)((depth * 7 + i * 13) % 5) * 100 * TK_NS_PER_US - 100;
            if (tk_executor_schedule(tk_run_executor(run), t_tree, (void *)(depth - 1), delay,
                                     NULL) != TK_OK)
                atomic_fetch_add(&g_tree.sched_fail, 1);
        }
    }
    return 0;
}

static void test_callback_schedules_more_work(const tk_queue_ops *engine) {
    const int depth = rel_sanitized() ? 9 : 11;
    const long total = (2L << depth) - 1;
    hooks_rec hr;
    tk_executor *ex = hooked_executor(engine, 3, &hr);
    atomic_store(&g_tree.runs, 0);
    atomic_store(&g_tree.sched_fail, 0);
    assert_int_equal(tk_executor_execute(ex, t_tree, (void *)(intptr_t)depth), TK_OK);
    assert_true(rel_wait_at_least(&g_tree.runs, total, 30 * TK_NS_PER_S));
    /* Orderly shutdown of an idle pool: terminates, nothing more runs. */
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, WAIT_NS), TK_OK);
    assert_int_equal(atomic_load(&g_tree.runs), total);
    assert_int_equal(atomic_load(&g_tree.sched_fail), 0);
    tk_executor_stats st;
    assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);
    assert_int_equal(st.runs, (uint64_t)total);
    assert_int_equal(st.accepted_count, (uint64_t)total);
    assert_int_equal(st.task_count, (uint64_t)total); /* all ran: completed */
    assert_int_equal(atomic_load(&hr.terminated), 1);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

static int t_shutdown_inside(tk_run *run, void *arg) {
    hostile *h = arg;
    atomic_store(&h->shutdown_rc, tk_executor_shutdown(tk_run_executor(run)));
    atomic_fetch_add(&h->runs, 1);
    return 0;
}

static void drop_count(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    (void)task;
    (void)arg_free;
    atomic_fetch_add(&((hostile *)ctx)->dropped, 1);
}

static int t_shutdown_now_inside(tk_run *run, void *arg) {
    hostile *h = arg;
    atomic_store(&h->shutdown_now_count,
                 tk_executor_shutdown_now(tk_run_executor(run), drop_count, h));
    atomic_store(&h->interrupted_seen, tk_run_interrupted(run));
    atomic_fetch_add(&h->runs, 1);
    return 0;
}

static void test_callback_shuts_down(const tk_queue_ops *engine) {
    /* shutdown() from inside: delayed tasks still run, periodic ones stop. */
    hooks_rec hr;
    tk_executor *ex = hooked_executor(engine, 2, &hr);
    hostile h, per;
    probe later;
    memset(&h, 0, sizeof(h));
    memset(&per, 0, sizeof(per));
    probe_init(&later);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tk_executor_schedule(ex, t_probe, &later, 30 * TK_NS_PER_MS, NULL), TK_OK);
    assert_int_equal(
        tk_executor_schedule_at_fixed_rate(ex, t_periodic_hostile, &per, 0, TK_NS_PER_MS, NULL),
        TK_OK);
    assert_int_equal(tk_executor_schedule(ex, t_shutdown_inside, &h, 5 * TK_NS_PER_MS, NULL),
                     TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, WAIT_NS), TK_OK);
    assert_int_equal(atomic_load(&h.shutdown_rc), TK_OK);
    assert_int_equal(atomic_load(&later.runs), 3);
    long per_runs = atomic_load(&per.runs);
    assert_true(per_runs >= 1);
    rel_sleep_ns(10 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&per.runs), per_runs);
    assert_int_equal(tk_executor_state(ex), TK_POOL_TERMINATED);
    assert_int_equal(atomic_load(&hr.terminated), 1);
    assert_int_equal(tk_executor_schedule(ex, t_probe, &later, 0, NULL), TK_EREJECTED);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);

    /* shutdown_now() from inside: the queued tasks come back, the caller
     * itself is interrupted, the pool terminates. */
    ex = hooked_executor(engine, 2, &hr);
    memset(&h, 0, sizeof(h));
    atomic_store(&later.runs, 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(tk_executor_schedule(ex, t_probe, &later, HOUR_NS, NULL), TK_OK);
    tk_future *fu = NULL;
    assert_int_equal(tk_executor_submit(ex, t_shutdown_now_inside, &h, &fu), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, WAIT_NS), TK_OK);
    assert_int_equal(tk_future_get_timeout(fu, WAIT_NS, NULL), TK_OK);
    assert_int_equal(tk_future_release(fu), TK_OK);
    assert_int_equal(atomic_load(&h.runs), 1);
    assert_int_equal(atomic_load(&h.shutdown_now_count), 4);
    assert_int_equal(atomic_load(&h.dropped), 4);
    assert_int_equal(atomic_load(&h.interrupted_seen), 1);
    assert_int_equal(atomic_load(&later.runs), 0);
    assert_int_equal(atomic_load(&hr.terminated), 1);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

static int t_block_until_interrupted(tk_run *run, void *arg) {
    hostile *h = arg;
    atomic_store(&h->started, 1);
    int64_t end = tk_clock_now_ns() + 20 * TK_NS_PER_S; /* a safety cap, never reached */
    while (!tk_run_interrupted(run) && tk_clock_now_ns() < end)
        rel_sleep_ns(100 * TK_NS_PER_US);
    atomic_store(&h->interrupted_seen, tk_run_interrupted(run));
    atomic_fetch_add(&h->runs, 1);
    return 0;
}

static bool wait_flag(atomic_int *flag) {
    int64_t end = tk_clock_now_ns() + WAIT_NS;
    while (!atomic_load(flag)) {
        if (tk_clock_now_ns() > end)
            return false;
        rel_sleep_ns(100 * TK_NS_PER_US);
    }
    return true;
}

static void test_callback_blocks_until_interrupted(const tk_queue_ops *engine) {
    hooks_rec hr;
    tk_executor *ex = hooked_executor(engine, 3, &hr);

    /* cancel(may_interrupt = false) leaves the flag clear: the run goes on. */
    hostile h;
    memset(&h, 0, sizeof(h));
    tk_future *fu = NULL;
    assert_int_equal(tk_executor_submit(ex, t_block_until_interrupted, &h, &fu), TK_OK);
    assert_true(wait_flag(&h.started));
    assert_int_equal(tk_future_cancel(fu, false), TK_ERUNNING);
    assert_int_equal(tk_future_get_timeout(fu, WAIT_NS, NULL), TK_ECANCELLED);
    rel_sleep_ns(20 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&h.runs), 0); /* still blocked: not interrupted */
    /* A second cancel finds the future done and changes nothing. */
    assert_int_equal(tk_future_cancel(fu, true), TK_EDONE);
    rel_sleep_ns(20 * TK_NS_PER_MS);
    assert_int_equal(atomic_load(&h.runs), 0);
    assert_int_equal(tk_future_release(fu), TK_OK);

    /* cancel(may_interrupt = true) sets the flag the task polls. */
    hostile h2;
    memset(&h2, 0, sizeof(h2));
    assert_int_equal(tk_executor_submit(ex, t_block_until_interrupted, &h2, &fu), TK_OK);
    assert_true(wait_flag(&h2.started));
    assert_int_equal(tk_future_cancel(fu, true), TK_ERUNNING);
    assert_int_equal(tk_future_get_timeout(fu, WAIT_NS, NULL), TK_ECANCELLED);
    assert_true(rel_wait_at_least(&h2.runs, 1, WAIT_NS));
    assert_int_equal(atomic_load(&h2.interrupted_seen), 1);
    assert_int_equal(tk_future_release(fu), TK_OK);

    /* shutdown_now interrupts every running task, including the one
     * cancelled without interrupt above. */
    hostile h3;
    memset(&h3, 0, sizeof(h3));
    assert_int_equal(tk_executor_execute(ex, t_block_until_interrupted, &h3), TK_OK);
    assert_true(wait_flag(&h3.started));
    long handed = tk_executor_shutdown_now(ex, NULL, NULL);
    assert_int_equal(handed, 0);
    assert_int_equal(tk_executor_await_termination(ex, WAIT_NS), TK_OK);
    assert_int_equal(atomic_load(&h3.runs), 1);
    assert_int_equal(atomic_load(&h3.interrupted_seen), 1);
    assert_int_equal(atomic_load(&h.runs), 1);
    assert_int_equal(atomic_load(&h.interrupted_seen), 1);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
    assert_int_equal(atomic_load(&hr.terminated), 1);
}

/* Hooks and handlers calling back into the executor: no callback runs with an
 * executor or engine lock held (STYLE 11), so none of these may deadlock. */
typedef struct reentrant {
    atomic_long before, after, terminated, rejects;
    atomic_int sched_in_before, purge_in_after, state_in_terminated, sched_in_terminated;
    atomic_int await_in_terminated, stats_in_reject, sched_in_reject;
    probe extra;
} reentrant;

static int re_before(tk_executor *ex, const tk_task_info *task, void *ctx) {
    reentrant *r = ctx;
    tk_executor_stats st;
    tk_executor_stats_get(ex, &st);
    /* The first task spawns one more task from its before hook. */
    if (task->fn == t_probe && atomic_fetch_add(&r->before, 1) == 0)
        atomic_store(&r->sched_in_before, tk_executor_schedule(ex, t_probe, &r->extra, 0, NULL));
    return 0;
}

static void re_after(tk_executor *ex, const tk_task_info *task, int status, void *ctx) {
    reentrant *r = ctx;
    (void)task;
    (void)status;
    long p = tk_executor_purge(ex);
    if (p < 0)
        atomic_store(&r->purge_in_after, (int)p);
    atomic_fetch_add(&r->after, 1);
}

static void re_terminated(tk_executor *ex, void *ctx) {
    reentrant *r = ctx;
    atomic_store(&r->state_in_terminated, (int)tk_executor_state(ex));
    atomic_store(&r->sched_in_terminated, tk_executor_schedule(ex, t_probe, &r->extra, 0, NULL));
    atomic_store(&r->await_in_terminated, tk_executor_await_termination(ex, 0));
    atomic_fetch_add(&r->terminated, 1);
}

static int re_reject(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    reentrant *r = ctx;
    (void)task;
    tk_executor_stats st;
    atomic_store(&r->stats_in_reject, tk_executor_stats_get(ex, &st));
    /* Scheduling again from the handler is rejected again, once (no
     * recursion guard in the executor is assumed: we guard ourselves). */
    if (atomic_fetch_add(&r->rejects, 1) == 0)
        atomic_store(&r->sched_in_reject, tk_executor_schedule(ex, t_probe, &r->extra, 0, NULL));
    return reason;
}

static void test_hooks_call_back_into_executor(const tk_queue_ops *engine) {
    static reentrant r;
    memset(&r, 0, sizeof(r));
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, 2, NULL);
    opt.hooks.before_execute = re_before;
    opt.hooks.after_execute = re_after;
    opt.hooks.terminated = re_terminated;
    opt.hooks.ctx = &r;
    opt.rejection = TK_REJECT_CUSTOM;
    opt.reject = re_reject;
    opt.reject_ctx = &r;
    tk_executor *ex = NULL;
    assert_int_equal(tk_executor_create(&opt, &ex), TK_OK);
    probe p;
    probe_init(&p);
    for (int i = 0; i < 5; i++)
        assert_int_equal(tk_executor_schedule(ex, t_probe, &p, i * TK_NS_PER_MS, NULL), TK_OK);
    assert_true(rel_wait_at_least(&p.runs, 5, WAIT_NS));
    assert_true(rel_wait_at_least(&r.extra.runs, 1, WAIT_NS));
    assert_int_equal(atomic_load(&r.sched_in_before), TK_OK);
    /* Shut down from this thread with the pool idle: the terminated hook
     * may run here or on a worker; either way it must not deadlock. */
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, WAIT_NS), TK_OK);
    assert_int_equal(atomic_load(&r.terminated), 1);
    assert_int_equal(atomic_load(&r.state_in_terminated), TK_POOL_TIDYING);
    assert_int_equal(atomic_load(&r.sched_in_terminated), TK_EREJECTED);
    int aw = atomic_load(&r.await_in_terminated);
    assert_true(aw == TK_ETIMEDOUT || aw == TK_EDEADLK);
    assert_int_equal(atomic_load(&r.purge_in_after), 0);
    /* After termination: the handler is called and may call back in. */
    long rejects0 = atomic_load(&r.rejects);
    assert_int_equal(tk_executor_schedule(ex, t_probe, &p, 0, NULL), TK_EREJECTED);
    assert_true(atomic_load(&r.rejects) >= rejects0 + 1);
    assert_int_equal(atomic_load(&r.stats_in_reject), TK_OK);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
    assert_int_equal(atomic_load(&r.after), 6 + 0);
}

/* destroy() with a task blocked until interrupted: it interrupts and waits. */
static void test_destroy_interrupts_blocked_task(const tk_queue_ops *engine) {
    hooks_rec hr;
    tk_executor *ex = hooked_executor(engine, 1, &hr);
    static hostile h;
    memset(&h, 0, sizeof(h));
    assert_int_equal(tk_executor_execute(ex, t_block_until_interrupted, &h), TK_OK);
    assert_true(wait_flag(&h.started));
    int64_t t0 = tk_clock_now_ns();
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
    assert_true(tk_clock_now_ns() - t0 < 5 * TK_NS_PER_S);
    assert_int_equal(atomic_load(&h.runs), 1);
    assert_int_equal(atomic_load(&h.interrupted_seen), 1);
}

/* ---- the wheel timer (wheel_timer.h) ------------------------------------------------ */

static void wt_noop(tk_timeout *timeout, void *arg) {
    (void)timeout;
    (void)arg;
}

static void wt_count(tk_timeout *timeout, void *arg) {
    (void)timeout;
    atomic_fetch_add((atomic_long *)arg, 1);
}

enum { WT_ADDS = 200 };

/* tk_wheel_timer_create() with allocation n failing, or (when *ctx says
 * so) WT_ADDS timeouts added with allocation n failing: the call answers
 * TK_ENOMEM, the timer stays usable and holds exactly what was accepted. */
static bool step_wheel_timer(sweep *s) {
    bool adds = *(const bool *)s->ctx;
    tk_wheel_timer_options o;
    tk_wheel_timer_options_init(&o);
    tk_queue_config_init_for(&o.queue, s->engine);
    o.queue.allocator = &s->a.iface;
    tk_wheel_timer *t = NULL;
    if (!adds)
        sweep_arm(s);
    int rc = tk_wheel_timer_create(&o, &t);
    long accepted = 0;
    if (adds && rc == TK_OK) {
        sweep_arm(s);
        for (int i = 0; i < WT_ADDS; i++) {
            int r = tk_wheel_timer_new_timeout(t, wt_noop, NULL, HOUR_NS, NULL);
            if (r == TK_OK)
                accepted++;
            else if (r != TK_ENOMEM)
                problem("%s: new_timeout -> %s, want TK_ENOMEM", s->where, tk_status_name(r));
        }
    }
    bool hit = sweep_disarm(s);
    if (rc != TK_OK) {
        if (rc != TK_ENOMEM || !hit || t != NULL)
            problem("%s: create -> %s (hit %d)", s->where, tk_status_name(rc), hit);
        return hit;
    }
    if ((long)tk_wheel_timer_pending(t) != accepted)
        problem("%s: %zu pending, %ld accepted", s->where, tk_wheel_timer_pending(t), accepted);
    if (adds && hit && accepted != WT_ADDS - 1)
        problem("%s: %ld of %d accepted", s->where, accepted, WT_ADDS);
    atomic_long runs = 0; /* still usable */
    if (tk_wheel_timer_new_timeout(t, wt_count, &runs, 0, NULL) != TK_OK ||
        !rel_wait_at_least(&runs, 1, WAIT_NS))
        problem("%s: not usable after the failure", s->where);
    long back = tk_wheel_timer_stop(t, NULL, NULL);
    if (back != accepted)
        problem("%s: stop handed back %ld of %ld", s->where, back, accepted);
    tk_wheel_timer_destroy(t);
    return hit;
}

/* Every allocation of tk_wheel_timer_create(), and of adding 200 timeouts
 * (the engines' cores grow on the way), fails once: the call answers
 * TK_ENOMEM, the timer stays usable and holds exactly what was accepted,
 * and nothing leaks. */
static void test_alloc_fail_wheel_timer(const tk_queue_ops *engine) {
    bool adds = false;
    sweep_sites(engine, "wheel timer create", MAX_SWEEP, step_wheel_timer, &adds);
    adds = true;
    sweep_sites(engine, "wheel timer new_timeout", MAX_SWEEP, step_wheel_timer, &adds);
}

int main(int argc, char **argv) {
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        ENGINE_TEST(test_alloc_fail_create),
        ENGINE_TEST(test_alloc_fail_schedule),
        ENGINE_TEST(test_alloc_fail_cancel_purge),
        ENGINE_TEST(test_alloc_fail_queue_access),
        ENGINE_TEST(test_alloc_fail_periodic_requeue),
        ENGINE_TEST(test_alloc_fail_shutdown),
        ENGINE_TEST(test_alloc_fail_bulk_schedule),
        ENGINE_TEST(test_alloc_fail_invoke),
        ENGINE_TEST(test_alloc_fail_with_decorate),
        ENGINE_TEST(test_alloc_fail_persistent),
        ENGINE_TEST(test_pending_limit),
        ENGINE_TEST(test_shutdown_policies_at_runtime),
        ENGINE_TEST(test_thread_factory_failures),
        ENGINE_TEST(test_thread_failures_while_the_pool_shrinks),
        ENGINE_TEST(test_callback_fails),
        ENGINE_TEST(test_callback_cancels_itself),
        ENGINE_TEST(test_callback_schedules_more_work),
        ENGINE_TEST(test_callback_shuts_down),
        ENGINE_TEST(test_callback_blocks_until_interrupted),
        ENGINE_TEST(test_hooks_call_back_into_executor),
        ENGINE_TEST(test_destroy_interrupts_blocked_task),
        ENGINE_TEST(test_alloc_fail_wheel_timer),
    };
    return cmocka_run_group_tests_name("reliability_faults", tests, NULL, NULL);
}
