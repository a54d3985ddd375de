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
 * and purge, periodic re-queue, shutdown / shutdown_now / destroy.
 *
 * Thread creation failure. A thread factory that fails chosen calls, swept
 * the same way; and every third call while workers time out and start
 * again.
 *
 * Hostile callbacks. Tasks that fail, cancel themselves, schedule more work,
 * shut the executor down from inside, or block until interrupted; each
 * checked against executor.h.
 *
 * Tasks only record (atomics); the test thread asserts. */
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

static int create_ex(rel_alloc *a, const tk_queue_ops *engine, unsigned threads, tk_executor **ex) {
    tk_executor_options opt;
    static tk_queue_config cfg; /* copied at create */
    rel_options(&opt, &cfg, engine, threads, &a->iface);
    return tk_executor_create(&opt, ex);
}

/* ---- create --------------------------------------------------------------------- */

static void test_alloc_fail_create(void **state) {
    (void)state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        unsigned long long n;
        for (n = 1; n <= MAX_SWEEP; n++) {
            rel_alloc a;
            char where[96];
            snprintf(where, sizeof(where), "[%s] create, allocation #%llu fails", engine->name, n);
            rel_alloc_init(&a);
            rel_alloc_fail_nth(&a, n);
            tk_executor *ex = (tk_executor *)SENTINEL;
            int rc = create_ex(&a, engine, 2, &ex);
            bool hit = atomic_load(&a.failures) > 0;
            rel_alloc_disarm(&a);
            if (rc == TK_OK) {
                still_usable(ex, where);
                if (tk_executor_destroy(ex) != TK_OK)
                    problem("%s: destroy failed", where);
            } else {
                if (rc != TK_ENOMEM)
                    problem("%s: create -> %s, want TK_ENOMEM", where, tk_status_name(rc));
                if (!hit)
                    problem("%s: create failed with no allocation failure", where);
                if (ex != (tk_executor *)SENTINEL)
                    problem("%s: *out written on failure", where);
            }
            check_no_leak(&a, where);
            if (!hit)
                break;
        }
        print_message("  [%s] create: %llu allocation sites swept\n", engine->name, n - 1);
        if (n > MAX_SWEEP)
            problem("[%s] create: still allocating after %d sites", engine->name, MAX_SWEEP);
    }
    assert_int_equal(problems, 0);
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
        tk_task_spec s;
        memset(&s, 0, sizeof(s));
        s.fn = t_probe;
        s.arg = p;
        s.arg_free = probe_free;
        s.kind = TK_TASK_ONE_SHOT;
        s.delay_ns = TK_NS_PER_MS;
        return tk_executor_schedule_spec(ex, &s, out);
    }
    }
}

static void sweep_schedule(const tk_queue_ops *engine, enum form f, bool prestart,
                           unsigned long long *sites) {
    unsigned long long n;
    bool periodic = f == F_FIXED_RATE || f == F_FIXED_DELAY;
    for (n = 1; n <= MAX_SWEEP; n++) {
        rel_alloc a;
        char where[128];
        snprintf(where, sizeof(where), "[%s] %s (%s), allocation #%llu fails", engine->name,
                 form_names[f], prestart ? "prestarted" : "lazy start", n);
        rel_alloc_init(&a);
        tk_executor *ex = NULL;
        int rc = create_ex(&a, engine, 2, &ex);
        if (rc != TK_OK) {
            problem("%s: create -> %s", where, tk_status_name(rc));
            return;
        }
        if (prestart && tk_executor_prestart_all_core_threads(ex) < 0)
            problem("%s: prestart failed", where);
        probe p;
        probe_init(&p);
        tk_future *fu = SENTINEL;
        rel_alloc_fail_nth(&a, n);
        rc = schedule_form(ex, f, &p, &fu);
        bool hit = atomic_load(&a.failures) > 0;
        rel_alloc_disarm(&a);
        bool has_future = f != F_SCHEDULE_NO_FUTURE && f != F_EXECUTE;
        if (rc == TK_OK) {
            /* Accepted: it runs (periodic: at least twice), then we stop it. */
            if (!rel_wait_at_least(&p.runs, periodic ? 2 : 1, WAIT_NS))
                problem("%s: accepted task did not run (runs %ld)", where, atomic_load(&p.runs));
            if (has_future) {
                if (fu == SENTINEL || fu == NULL) {
                    problem("%s: TK_OK without a future", where);
                } else {
                    if (periodic)
                        tk_future_cancel(fu, false);
                    tk_future_get_timeout(fu, WAIT_NS, NULL);
                    tk_future_release(fu);
                }
            }
        } else {
            if (rc != TK_ENOMEM)
                problem("%s: -> %s, want TK_ENOMEM", where, tk_status_name(rc));
            if (!hit)
                problem("%s: failed with no allocation failure", where);
            if (has_future && fu != SENTINEL)
                problem("%s: *out written on failure", where);
        }
        still_usable(ex, where);
        if (tk_executor_destroy(ex) != TK_OK)
            problem("%s: destroy failed", where);
        if (rc != TK_OK && atomic_load(&p.runs) != 0)
            problem("%s: a task whose call failed ran %ld times", where, atomic_load(&p.runs));
        if (!periodic && rc == TK_OK && atomic_load(&p.runs) != 1)
            problem("%s: one-shot ran %ld times", where, atomic_load(&p.runs));
        if (f == F_SPEC_ARG_FREE) {
            long want = rc == TK_OK ? 1 : 0; /* a failed call keeps ownership with the caller */
            if (atomic_load(&p.frees) != want)
                problem("%s (status %s): arg_free ran %ld times, want %ld", where,
                        tk_status_name(rc), atomic_load(&p.frees), want);
        }
        check_no_leak(&a, where);
        if (!hit)
            break;
    }
    *sites = n - 1;
    if (n > MAX_SWEEP)
        problem("[%s] %s: still allocating after %d sites", engine->name, form_names[f], MAX_SWEEP);
}

static void test_alloc_fail_schedule(void **state) {
    (void)state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        for (int f = 0; f < F_COUNT; f++) {
            unsigned long long pre = 0, lazy = 0;
            sweep_schedule(engine, (enum form)f, true, &pre);
            sweep_schedule(engine, (enum form)f, false, &lazy);
            print_message("  [%s] %-20s allocation sites: %llu prestarted, %llu lazy start\n",
                          engine->name, form_names[f], pre, lazy);
        }
    }
    assert_int_equal(problems, 0);
}

/* ---- cancel, purge ---------------------------------------------------------------- */

static void test_alloc_fail_cancel_purge(void **state) {
    (void)state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        for (int roc = 0; roc < 2; roc++) {
            for (int periodic = 0; periodic < 2; periodic++) {
                unsigned long long n;
                for (n = 1; n <= MAX_SWEEP; n++) {
                    rel_alloc a;
                    char where[128];
                    snprintf(where, sizeof(where),
                             "[%s] cancel+purge (%s, remove_on_cancel=%d), allocation #%llu fails",
                             engine->name, periodic ? "periodic" : "one-shot", roc, n);
                    rel_alloc_init(&a);
                    tk_executor *ex = NULL;
                    if (create_ex(&a, engine, 1, &ex) != TK_OK) {
                        problem("%s: create failed", where);
                        break;
                    }
                    tk_executor_set_remove_on_cancel(ex, roc != 0);
                    probe p;
                    probe_init(&p);
                    tk_future *fu = NULL;
                    int rc = periodic
                                 ? tk_executor_schedule_at_fixed_rate(
                                       ex, t_probe, &p, 3600 * TK_NS_PER_S, TK_NS_PER_S, &fu)
                                 : tk_executor_schedule(ex, t_probe, &p, 3600 * TK_NS_PER_S, &fu);
                    if (rc != TK_OK) {
                        problem("%s: schedule -> %s", where, tk_status_name(rc));
                        tk_executor_destroy(ex);
                        break;
                    }
                    rel_alloc_fail_nth(&a, n);
                    rc = tk_future_cancel(fu, true);
                    long purged = tk_executor_purge(ex);
                    bool hit = atomic_load(&a.failures) > 0;
                    rel_alloc_disarm(&a);
                    if (rc != TK_OK)
                        problem("%s: cancel -> %s, want TK_OK", where, tk_status_name(rc));
                    if (purged < 0 || purged > 1)
                        problem("%s: purge -> %ld", where, purged);
                    if (tk_future_get_timeout(fu, WAIT_NS, NULL) != TK_ECANCELLED)
                        problem("%s: future not cancelled", where);
                    tk_future_release(fu);
                    still_usable(ex, where);
                    tk_executor_destroy(ex);
                    if (atomic_load(&p.runs) != 0)
                        problem("%s: cancelled task ran", where);
                    check_no_leak(&a, where);
                    if (!hit)
                        break;
                }
                print_message("  [%s] cancel+purge (%s, remove_on_cancel=%d): %llu allocation "
                              "sites\n",
                              engine->name, periodic ? "periodic" : "one-shot", roc, n - 1);
            }
        }
    }
    assert_int_equal(problems, 0);
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
static void test_alloc_fail_queue_access(void **state) {
    (void)state;
    problems = 0;
    enum { Q = 5 };
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        unsigned long long n;
        for (n = 1; n <= MAX_SWEEP; n++) {
            rel_alloc a;
            char where[128];
            snprintf(where, sizeof(where), "[%s] queue access, allocation #%llu fails",
                     engine->name, n);
            rel_alloc_init(&a);
            tk_executor *ex = NULL;
            if (create_ex(&a, engine, 1, &ex) != TK_OK) {
                problem("%s: create failed", where);
                break;
            }
            probe p;
            probe_init(&p);
            tk_future *fu[Q];
            int made = 0;
            for (; made < Q; made++) {
                int rc = tk_executor_schedule(ex, t_probe, &p, 3600 * TK_NS_PER_S, &fu[made]);
                if (rc != TK_OK) {
                    problem("%s: schedule -> %s", where, tk_status_name(rc));
                    break;
                }
            }
            rel_alloc_fail_nth(&a, n);
            long visits = 0;
            long rc = tk_executor_visit_queue(ex, visit_counting, &visits);
            bool in = made > 0 && tk_executor_contains(ex, fu[0]);
            int removed = made > 0 ? tk_executor_remove(ex, fu[0]) : TK_OK;
            bool hit = atomic_load(&a.failures) > 0;
            rel_alloc_disarm(&a);
            if (!(rc == TK_ENOMEM && visits == 0) && !(rc == made && visits == made))
                problem("%s: visit_queue -> %ld after %ld visits", where, rc, visits);
            if (made > 0 && (!in || removed != TK_OK ||
                             tk_future_get_timeout(fu[0], WAIT_NS, NULL) != TK_EREMOVED))
                problem("%s: contains %d, remove %s", where, in, tk_status_name(removed));
            for (int i = 0; i < made; i++)
                tk_future_release(fu[i]);
            still_usable(ex, where);
            tk_executor_destroy(ex);
            if (atomic_load(&p.runs) != 0)
                problem("%s: a queued task ran", where);
            check_no_leak(&a, where);
            if (!hit)
                break;
        }
        print_message("  [%s] queue access: %llu allocation sites\n", engine->name, n - 1);
    }
    assert_int_equal(problems, 0);
}

/* ---- periodic re-queue ------------------------------------------------------------- */

static void test_alloc_fail_periodic_requeue(void **state) {
    (void)state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        for (int kind = 0; kind < 2; kind++) {
            unsigned long long n, calls_in_window = 0;
            for (n = 1; n <= 32; n++) {
                rel_alloc a;
                char where[128];
                snprintf(where, sizeof(where), "[%s] %s re-queue, allocation #%llu fails",
                         engine->name, kind ? "fixed-delay" : "fixed-rate", n);
                rel_alloc_init(&a);
                tk_executor *ex = NULL;
                if (create_ex(&a, engine, 2, &ex) != TK_OK) {
                    problem("%s: create failed", where);
                    break;
                }
                probe p;
                probe_init(&p);
                tk_future *fu = NULL;
                int rc = kind ? tk_executor_schedule_with_fixed_delay(ex, t_probe, &p, 0,
                                                                      TK_NS_PER_MS, &fu)
                              : tk_executor_schedule_at_fixed_rate(ex, t_probe, &p, 0, TK_NS_PER_MS,
                                                                   &fu);
                if (rc != TK_OK) {
                    problem("%s: schedule -> %s", where, tk_status_name(rc));
                    tk_executor_destroy(ex);
                    break;
                }
                rel_wait_at_least(&p.runs, 2, WAIT_NS);
                unsigned long long c0 = atomic_load(&a.calls);
                rel_alloc_fail_nth(&a, n);
                long r0 = atomic_load(&p.runs);
                /* Ten more periods: it keeps running, or ends with a status. */
                bool progressed = rel_wait_at_least(&p.runs, r0 + 10, 2 * TK_NS_PER_S);
                bool hit = atomic_load(&a.failures) > 0;
                calls_in_window = atomic_load(&a.calls) - c0;
                rel_alloc_disarm(&a);
                if (!progressed && !tk_future_is_done(fu))
                    problem("%s: stalled after %ld runs without completing its future", where,
                            atomic_load(&p.runs));
                tk_future_cancel(fu, false);
                int grc = tk_future_get_timeout(fu, WAIT_NS, NULL);
                if (grc == TK_ETIMEDOUT)
                    problem("%s: future never completed after cancel", where);
                tk_future_release(fu);
                still_usable(ex, where);
                tk_executor_destroy(ex);
                check_no_leak(&a, where);
                if (!hit)
                    break;
            }
            print_message("  [%s] %s re-queue: %llu allocation sites (%llu allocations in ten "
                          "periods)\n",
                          engine->name, kind ? "fixed-delay" : "fixed-rate", n - 1,
                          calls_in_window);
        }
    }
    assert_int_equal(problems, 0);
}

/* ---- shutdown, shutdown_now, destroy ------------------------------------------------ */

static void dropped_cb(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    (void)task;
    (void)arg_free;
    atomic_fetch_add((atomic_long *)ctx, 1);
}

static void test_alloc_fail_shutdown(void **state) {
    (void)state;
    problems = 0;
    static const char *const modes[3] = {"shutdown+shutdown_now", "shutdown_now", "destroy"};
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        for (int mode = 0; mode < 3; mode++) {
            unsigned long long n;
            for (n = 1; n <= MAX_SWEEP; n++) {
                rel_alloc a;
                char where[128];
                snprintf(where, sizeof(where), "[%s] %s, allocation #%llu fails", engine->name,
                         modes[mode], n);
                rel_alloc_init(&a);
                tk_executor *ex = NULL;
                if (create_ex(&a, engine, 2, &ex) != TK_OK) {
                    problem("%s: create failed", where);
                    break;
                }
                probe p;
                probe_init(&p);
                tk_task_spec s;
                memset(&s, 0, sizeof(s));
                s.fn = t_probe;
                s.arg = &p;
                s.arg_free = probe_free;
                s.kind = TK_TASK_ONE_SHOT;
                s.delay_ns = 3600 * TK_NS_PER_S;
                for (int i = 0; i < 3; i++)
                    if (tk_executor_schedule_spec(ex, &s, NULL) != TK_OK)
                        problem("%s: schedule failed", where);
                s.kind = TK_TASK_FIXED_RATE;
                s.delay_ns = 0;
                s.period_ns = TK_NS_PER_MS;
                if (tk_executor_schedule_spec(ex, &s, NULL) != TK_OK)
                    problem("%s: schedule failed", where);
                rel_wait_at_least(&p.runs, 1, WAIT_NS);
                atomic_long dropped = 0;
                rel_alloc_fail_nth(&a, n);
                long handed = -1;
                int rc = TK_OK;
                if (mode == 0) {
                    rc = tk_executor_shutdown(ex);
                    handed = tk_executor_shutdown_now(ex, dropped_cb, &dropped);
                } else if (mode == 1) {
                    handed = tk_executor_shutdown_now(ex, dropped_cb, &dropped);
                }
                int arc = mode < 2 ? tk_executor_await_termination(ex, WAIT_NS) : TK_OK;
                int drc = tk_executor_destroy(ex);
                bool hit = atomic_load(&a.failures) > 0;
                rel_alloc_disarm(&a);
                if (rc != TK_OK || arc != TK_OK || drc != TK_OK)
                    problem("%s: shutdown %s, await %s, destroy %s", where, tk_status_name(rc),
                            tk_status_name(arc), tk_status_name(drc));
                /* shutdown() first drops the periodic task (its arg freed
                 * once), so shutdown_now hands back the three one-shots;
                 * shutdown_now alone also hands back the periodic task
                 * unless it was running at that instant; destroy frees
                 * every argument. */
                long want_handed_min = 3, want_handed_max = mode == 1 ? 4 : 3;
                if (mode < 2 && (handed < want_handed_min || handed > want_handed_max ||
                                 atomic_load(&dropped) != handed))
                    problem("%s: shutdown_now handed back %ld (drop called %ld), want %ld..%ld",
                            where, handed, atomic_load(&dropped), want_handed_min, want_handed_max);
                long want_frees = mode == 2 ? 4 : 4 - (handed < 3 ? 3 : handed);
                if (atomic_load(&p.frees) != want_frees)
                    problem("%s: arg_free ran %ld times, want %ld", where, atomic_load(&p.frees),
                            want_frees);
                check_no_leak(&a, where);
                if (!hit)
                    break;
            }
            print_message("  [%s] %s: %llu allocation sites\n", engine->name, modes[mode], n - 1);
        }
    }
    assert_int_equal(problems, 0);
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

static void test_alloc_fail_with_decorate(void **state) {
    (void)state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        unsigned long long n;
        for (n = 1; n <= MAX_SWEEP; n++) {
            char where[96];
            snprintf(where, sizeof(where), "[%s] decorated schedule, allocation #%llu fails",
                     engine->name, n);
            rel_alloc a;
            rel_alloc_init(&a);
            tk_executor_options opt;
            tk_queue_config cfg;
            rel_options(&opt, &cfg, engine, 1, &a.iface);
            opt.hooks.decorate = decorate_wrap;
            tk_executor *ex = NULL;
            if (tk_executor_create(&opt, &ex) != TK_OK) {
                problem("%s: create failed", where);
                break;
            }
            tk_executor_prestart_all_core_threads(ex);
            atomic_store(&wraps_live, 0);
            probe p;
            probe_init(&p);
            tk_task_spec s;
            memset(&s, 0, sizeof(s));
            s.fn = t_probe;
            s.arg = &p;
            s.arg_free = probe_free;
            rel_alloc_fail_nth(&a, n);
            int rc = tk_executor_schedule_spec(ex, &s, NULL);
            bool hit = atomic_load(&a.failures) > 0;
            rel_alloc_disarm(&a);
            if (rc == TK_OK && !rel_wait_at_least(&p.runs, 1, WAIT_NS))
                problem("%s: accepted task did not run", where);
            if (rc != TK_OK && rc != TK_ENOMEM)
                problem("%s: -> %s", where, tk_status_name(rc));
            tk_executor_destroy(ex);
            if (atomic_load(&wraps_live) != 0)
                problem("%s: the call returned %s and the decorate hook's wrapper leaked "
                        "(%ld live)",
                        where, tk_status_name(rc), atomic_load(&wraps_live));
            if (atomic_load(&p.frees) > 1)
                problem("%s: the caller's arg freed %ld times", where, atomic_load(&p.frees));
            check_no_leak(&a, where);
            if (!hit)
                break;
        }
        print_message("  [%s] decorated schedule: %llu allocation sites swept\n", engine->name,
                      n - 1);

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
    assert_int_equal(problems, 0);
}

/* ---- many schedules: engine growth ----------------------------------------------------- */

/* Forty far-off tasks on an engine whose array starts with two slots: the
 * heap grows five times, so its growth (inside offer) fails once too. Exactly
 * one call may fail, with TK_ENOMEM; every accepted task is queued. */
static void test_alloc_fail_bulk_schedule(void **state) {
    (void)state;
    problems = 0;
    enum { K = 40 };
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        unsigned long long n;
        for (n = 1; n <= MAX_SWEEP; n++) {
            rel_alloc a;
            char where[96];
            snprintf(where, sizeof(where), "[%s] %d schedules, allocation #%llu fails",
                     engine->name, K, n);
            rel_alloc_init(&a);
            tk_executor_options opt;
            tk_queue_config cfg;
            rel_options(&opt, &cfg, engine, 2, &a.iface);
            /* a small first array, so that growth is among the allocations swept */
            (void)tk_queue_config_set_value(&cfg, "capacity", 2);
            tk_executor *ex = NULL;
            if (tk_executor_create(&opt, &ex) != TK_OK) {
                problem("%s: create failed", where);
                break;
            }
            if (tk_executor_prestart_all_core_threads(ex) < 0)
                problem("%s: prestart failed", where);
            probe p;
            probe_init(&p);
            tk_future *fu[K];
            int failed = 0, accepted = 0;
            rel_alloc_fail_nth(&a, n);
            for (int i = 0; i < K; i++) {
                fu[i] = SENTINEL;
                int rc = tk_executor_schedule(ex, t_probe, &p, 3600 * TK_NS_PER_S, &fu[i]);
                if (rc == TK_OK) {
                    accepted++;
                } else {
                    failed++;
                    if (rc != TK_ENOMEM)
                        problem("%s: call %d -> %s", where, i, tk_status_name(rc));
                    if (fu[i] != SENTINEL)
                        problem("%s: *out written on failure", where);
                    fu[i] = NULL;
                }
            }
            bool hit = atomic_load(&a.failures) > 0;
            rel_alloc_disarm(&a);
            if (failed > 1 || (failed == 1 && !hit))
                problem("%s: %d calls failed", where, failed);
            tk_executor_stats st;
            tk_executor_stats_get(ex, &st);
            if (st.queue_size != (size_t)accepted)
                problem("%s: %d accepted, %zu queued", where, accepted, st.queue_size);
            if (tk_executor_engine(ex)->check(NULL) != TK_EINVAL) {
                /* check(NULL) is not part of the contract; ignore. */
            }
            still_usable(ex, where);
            for (int i = 0; i < K; i++) {
                if (fu[i] == NULL)
                    continue;
                int rc = tk_future_cancel(fu[i], false);
                if (rc != TK_OK)
                    problem("%s: cancel %d -> %s", where, i, tk_status_name(rc));
                tk_future_release(fu[i]);
            }
            tk_executor_destroy(ex);
            if (atomic_load(&p.runs) != 0)
                problem("%s: a cancelled task ran", where);
            check_no_leak(&a, where);
            if (!hit)
                break;
        }
        print_message("  [%s] %d schedules on a 2-slot engine: %llu allocation sites swept\n",
                      engine->name, K, n - 1);
    }
    assert_int_equal(problems, 0);
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

/* One call of `mode` with K tasks (more than one slab of task objects, and
 * an engine array that starts with two slots, so both grow during the call)
 * while allocation #n fails. invoke_all runs K tasks now; its timed form
 * gets K tasks an hour away and a 1 ms timeout, so it returns with all of
 * them cancelled; invoke_any gets K-1 tasks an hour away and a last one that
 * succeeds now, so all K are scheduled. On TK_OK the outcome is the
 * documented one; on TK_ENOMEM, every future is NULL, no task of the call
 * starts after the call returned (at most the pool's two threads were
 * already inside a callback), and every task the executor accepted was
 * cancelled or ran: its arg_free ran once. Returns whether allocation #n was
 * reached. */
static bool invoke_one(const tk_queue_ops *engine, enum invoke_mode mode, unsigned long long n) {
    enum { K = 1700, THREADS = 2 }; /* a slab holds 1632 small or 1152 big tasks */
    char where[128];
    snprintf(where, sizeof(where), "[%s] %s of %d tasks, allocation #%llu fails", engine->name,
             invoke_names[mode], K, n);
    rel_alloc a;
    rel_alloc_init(&a);
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, THREADS, &a.iface);
    (void)tk_queue_config_set_value(&cfg, "capacity", 2);
    tk_executor *ex = NULL;
    if (tk_executor_create(&opt, &ex) != TK_OK) {
        problem("%s: create failed", where);
        return false;
    }
    if (tk_executor_prestart_all_core_threads(ex) < 0)
        problem("%s: prestart failed", where);
    probe p;
    probe_init(&p);
    static tk_task_spec specs[K];
    static tk_future *fs[K];
    for (int i = 0; i < K; i++) {
        memset(&specs[i], 0, sizeof(specs[i]));
        specs[i].fn = t_probe;
        specs[i].arg = &p;
        specs[i].arg_free = probe_free;
        specs[i].kind = TK_TASK_ONE_SHOT;
        specs[i].delay_ns = mode == INV_ALL ? 0 : 3600 * TK_NS_PER_S;
        fs[i] = SENTINEL;
    }
    if (mode == INV_ANY) {
        specs[K - 1].fn = t_probe_result;
        specs[K - 1].delay_ns = 0;
    }
    void *result = NULL;
    rel_alloc_fail_nth(&a, n);
    int rc;
    if (mode == INV_ANY)
        rc = tk_executor_invoke_any(ex, specs, K, &result);
    else
        rc = tk_executor_invoke_all_timeout(ex, specs, K, mode == INV_ALL ? -1 : TK_NS_PER_MS, fs);
    long runs_at_return = atomic_load(&p.runs);
    bool hit = atomic_load(&a.failures) > 0;
    rel_alloc_disarm(&a);
    if (rc == TK_OK) {
        if (mode == INV_ANY && result != &p)
            problem("%s: TK_OK without the winner's result", where);
        for (int i = 0; mode != INV_ANY && i < K; i++) {
            tk_task_state want = mode == INV_ALL ? TK_TASK_SUCCESS : TK_TASK_CANCELLED;
            if (fs[i] == SENTINEL || fs[i] == NULL) {
                problem("%s: TK_OK without future %d", where, i);
                break;
            }
            if (tk_future_state(fs[i]) != want)
                problem("%s: future %d is %s", where, i,
                        tk_task_state_name(tk_future_state(fs[i])));
            tk_future_release(fs[i]);
        }
    } else {
        if (rc != TK_ENOMEM)
            problem("%s: -> %s, want TK_ENOMEM", where, tk_status_name(rc));
        if (!hit)
            problem("%s: failed with no allocation failure", where);
        for (int i = 0; mode != INV_ANY && i < K; i++) {
            if (fs[i] != NULL) {
                problem("%s: futures[%d] not NULL on failure", where, i);
                break;
            }
        }
    }
    /* Let whatever is running finish, then count. */
    if (tk_executor_shutdown(ex) != TK_OK || tk_executor_await_termination(ex, WAIT_NS) != TK_OK)
        problem("%s: the pool did not terminate", where);
    tk_executor_stats st;
    tk_executor_stats_get(ex, &st);
    long runs = atomic_load(&p.runs), frees = atomic_load(&p.frees);
    if (runs > runs_at_return + THREADS)
        problem("%s: %ld tasks started after the call returned", where, runs - runs_at_return);
    /* Each task the executor accepted had its arg_free run once (the failed
     * one and those never scheduled stay the caller's), and every one of
     * them ran or was cancelled: both, for a task cancelled during its run.
     * How many those are has no bound: the call's cancel sweep goes through
     * the tasks in the order the workers run them, so it can catch one
     * running task after another. */
    uint64_t ended = (uint64_t)runs + st.cancelled_count;
    if (frees > K || (uint64_t)frees != st.accepted_count || ended < (uint64_t)frees)
        problem("%s: %ld arg_free calls for %llu accepted tasks, %ld ran, %llu cancelled", where,
                frees, (unsigned long long)st.accepted_count, runs,
                (unsigned long long)st.cancelled_count);
    if (rc == TK_OK) {
        long want_runs = mode == INV_ALL ? K : mode == INV_ANY ? 1 : 0;
        if (runs != want_runs || frees != K)
            problem("%s: TK_OK but %ld runs (want %ld), %ld arg_free (want %d)", where, runs,
                    want_runs, frees, K);
    } else if (mode != INV_ALL && runs != 0) {
        problem("%s: a far-off task ran", where);
    }
    if (tk_executor_destroy(ex) != TK_OK)
        problem("%s: destroy failed", where);
    check_no_leak(&a, where);
    return hit;
}

static void test_alloc_fail_invoke(void **state) {
    (void)state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        for (int m = 0; m < INV_COUNT; m++) {
            unsigned long long n;
            for (n = 1; n <= MAX_SWEEP; n++) {
                if (!invoke_one(engine, (enum invoke_mode)m, n))
                    break;
            }
            print_message("  [%s] %-20s allocation sites: %llu\n", engine->name, invoke_names[m],
                          n - 1);
            if (n > MAX_SWEEP)
                problem("[%s] %s: still allocating after %d sites", engine->name, invoke_names[m],
                        MAX_SWEEP);
        }
    }
    assert_int_equal(problems, 0);
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
static void test_alloc_fail_persistent(void **state) {
    (void)state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        char where[64];
        snprintf(where, sizeof(where), "[%s] out of memory for good", engine->name);
        rel_alloc a;
        rel_alloc_init(&a);
        tk_executor *ex = NULL;
        assert_int_equal(create_ex(&a, engine, 2, &ex), TK_OK);
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
         * schedules: hold timers an hour ahead until one call gets
         * TK_ENOMEM (a slab holds a few hundred). */
        int held = 0, enomem = 0;
        while (enomem == 0 && held < 100000)
            tally_schedule(tk_executor_schedule(ex, t_probe, &p, 3600 * TK_NS_PER_S, NULL), &held,
                           &enomem, where);
        int accepted = 0;
        for (int i = 0; i < 50; i++)
            tally_schedule(tk_executor_schedule(ex, t_probe, &p, 0, NULL), &accepted, &enomem,
                           where);
        /* The queued work goes on without memory. */
        long want = 20 + accepted;
        if (!rel_wait_at_least(&p.runs, want, WAIT_NS))
            problem("%s: %ld runs, want >= %ld", where, atomic_load(&p.runs), want);
        /* So does the periodic task, with one exception: while it runs, its
         * slot in an engine that allocates for offers (the heap's array) can
         * be taken by a held timer; its re-queue then finds the engine full
         * and out of memory, and the task ends cancelled (documented), which
         * its future must say. */
        bool periodic_went_on = rel_wait_at_least(&per.runs, 10, WAIT_NS);
        bool periodic_refused = false;
        if (!periodic_went_on) {
            periodic_refused = tk_future_is_cancelled(fu) && atomic_load(&per.runs) >= 1 &&
                               strcmp(engine->name, "heap") == 0;
            if (!periodic_refused)
                problem("%s: periodic task ran %ld times, want >= 10", where,
                        atomic_load(&per.runs));
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
    assert_int_equal(problems, 0);
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
        atomic_store(&f->fill_rc, tk_executor_schedule(tk_run_executor(run), t_probe, f->far,
                                                       3600 * TK_NS_PER_S, NULL));
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

static void test_pending_limit(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        if ((engine->caps & TK_QUEUE_CAP_TICKED) == 0)
            continue; /* only the wheel has a pending limit */
        probe p;
        tk_task_spec s;
        memset(&s, 0, sizeof(s));
        s.fn = t_probe;
        s.arg = &p;
        s.arg_free = probe_free;
        s.delay_ns = 3600 * TK_NS_PER_S;

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
        s.delay_ns = 3600 * TK_NS_PER_S;
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

        /* A periodic task whose re-queue meets a full engine: whatever the
         * executor does, it is visible (the task keeps running, or its
         * future completes as cancelled, the rejection is counted and its arg
         * is freed once), never silent. */
        probe far;
        probe_init(&far);
        filler fl;
        memset(&fl, 0, sizeof(fl));
        fl.far = &far;
        atomic_store(&fl.fill_rc, 1);
        ex = limited_executor(engine, 2, TK_REJECT_ABORT);
        tk_task_spec ps;
        memset(&ps, 0, sizeof(ps));
        ps.fn = t_fill_then_return;
        ps.arg = &fl;
        ps.kind = TK_TASK_FIXED_RATE;
        ps.period_ns = 2 * TK_NS_PER_MS;
        tk_future *fp = NULL;
        /* Another far task, so that the filler's one takes the last place.
         * It goes in first: the filler fills at its second run, 2 ms after
         * the first, and a main thread held up that long on a loaded machine
         * must not find the engine already full (docs/engine-notes.md). */
        assert_int_equal(tk_executor_schedule(ex, t_probe, &far, 3600 * TK_NS_PER_S, NULL), TK_OK);
        assert_int_equal(tk_executor_schedule_spec(ex, &ps, &fp), TK_OK);
        rel_wait_at_least(&fl.runs, 6, 200 * TK_NS_PER_MS);
        long runs = atomic_load(&fl.runs);
        bool done = tk_future_is_done(fp);
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
}

/* ---- shutdown policies changed at run time ------------------------------------------- */

static void test_shutdown_policies_at_runtime(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
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
        tk_task_spec s;
        memset(&s, 0, sizeof(s));
        s.fn = t_probe;
        s.arg = &per;
        s.arg_free = probe_free;
        s.kind = TK_TASK_FIXED_RATE;
        s.period_ns = TK_NS_PER_MS;
        tk_future *fp = NULL;
        assert_int_equal(tk_executor_schedule_spec(ex, &s, &fp), TK_OK);
        s.arg = &later;
        s.kind = TK_TASK_ONE_SHOT;
        s.period_ns = 0;
        s.delay_ns = 3600 * TK_NS_PER_S;
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

        /* The delayed one-shots keep the pool alive until the other policy
         * drops them: futures cancelled, args freed, pool terminated. */
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

static int create_with_factory(rel_alloc *a, const tk_queue_ops *engine, unsigned threads,
                               factory *f, tk_executor **ex) {
    tk_executor_options opt;
    static tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, threads, &a->iface);
    opt.thread_factory = factory_fn;
    opt.thread_factory_ctx = f;
    return tk_executor_create(&opt, ex);
}

static void test_thread_factory_failures(void **state) {
    (void)state;
    problems = 0;
    const unsigned threads = 3;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        /* Fail the k-th thread creation, k = 1 .. threads + 1. */
        for (long k = 1; k <= (long)threads + 1; k++) {
            char where[96];
            snprintf(where, sizeof(where), "[%s] thread creation #%ld fails", engine->name, k);
            rel_alloc a;
            rel_alloc_init(&a);
            factory f;
            memset(&f, 0, sizeof(f));
            atomic_store(&f.fail_at, k);
            tk_executor *ex = NULL;
            if (create_with_factory(&a, engine, threads, &f, &ex) != TK_OK) {
                problem("%s: create failed", where);
                continue;
            }
            probe p;
            probe_init(&p);
            long accepted = 0;
            for (int i = 0; i < 6; i++) {
                tk_future *fu = SENTINEL;
                int rc = tk_executor_submit(ex, t_probe, &p, &fu);
                if (rc == TK_OK) {
                    accepted++;
                    tk_future_release(fu);
                } else if (rc == TK_ETHREAD) {
                    /* Only when no thread is alive: the first submit with k = 1. */
                    if (!(k == 1 && i == 0))
                        problem("%s: submit #%d -> TK_ETHREAD with a thread alive", where, i);
                    if (fu != SENTINEL)
                        problem("%s: *out written on failure", where);
                } else {
                    problem("%s: submit #%d -> %s", where, i, tk_status_name(rc));
                }
            }
            if (!rel_wait_at_least(&p.runs, accepted, WAIT_NS))
                problem("%s: %ld accepted, %ld ran", where, accepted, atomic_load(&p.runs));
            int pre = tk_executor_prestart_all_core_threads(ex);
            if (pre < 0 && pre != TK_ETHREAD)
                problem("%s: prestart_all -> %s", where, tk_status_name(pre));
            still_usable(ex, where);
            if (tk_executor_destroy(ex) != TK_OK)
                problem("%s: destroy failed", where);
            if (atomic_load(&p.runs) != accepted)
                problem("%s: %ld accepted, %ld ran", where, accepted, atomic_load(&p.runs));
            /* Grace for a thread that returned from the executor's start
             * routine but has not yet counted itself. */
            rel_wait_at_least(&f.exited, atomic_load(&f.started), TK_NS_PER_S);
            if (atomic_load(&f.started) != atomic_load(&f.exited))
                problem("%s: %ld threads started, %ld exited after destroy", where,
                        atomic_load(&f.started), atomic_load(&f.exited));
            check_no_leak(&a, where);
        }

        /* Every creation fails: nothing is kept, then recovery. */
        {
            char where[96];
            snprintf(where, sizeof(where), "[%s] every thread creation fails", engine->name);
            rel_alloc a;
            rel_alloc_init(&a);
            factory f;
            memset(&f, 0, sizeof(f));
            atomic_store(&f.fail_all, true);
            tk_executor *ex = NULL;
            if (create_with_factory(&a, engine, threads, &f, &ex) != TK_OK) {
                problem("%s: create failed", where);
                continue;
            }
            probe p;
            probe_init(&p);
            tk_task_spec s;
            memset(&s, 0, sizeof(s));
            s.fn = t_probe;
            s.arg = &p;
            s.arg_free = probe_free;
            tk_future *fu = SENTINEL;
            int rc = tk_executor_schedule_spec(ex, &s, &fu);
            if (rc != TK_ETHREAD || fu != SENTINEL)
                problem("%s: schedule -> %s (out %s)", where, tk_status_name(rc),
                        fu == SENTINEL ? "untouched" : "written");
            rc = tk_executor_execute(ex, t_probe, &p);
            if (rc != TK_ETHREAD)
                problem("%s: execute -> %s", where, tk_status_name(rc));
            rc = tk_executor_prestart_core_thread(ex);
            if (rc != TK_ETHREAD)
                problem("%s: prestart -> %s", where, tk_status_name(rc));
            rc = tk_executor_prestart_all_core_threads(ex);
            if (rc != TK_ETHREAD)
                problem("%s: prestart_all -> %s", where, tk_status_name(rc));
            tk_executor_stats st;
            tk_executor_stats_get(ex, &st);
            if (st.queue_size != 0 || st.pool_size != 0)
                problem("%s: queue %zu, pool %u: a task was kept", where, st.queue_size,
                        st.pool_size);
            atomic_store(&f.fail_all, false);
            still_usable(ex, where);
            tk_executor_destroy(ex);
            if (atomic_load(&p.runs) != 0)
                problem("%s: a task whose call failed ran", where);
            if (atomic_load(&p.frees) != 0)
                problem("%s: arg_free ran %ld times for a task not accepted", where,
                        atomic_load(&p.frees));
            rel_wait_at_least(&f.exited, atomic_load(&f.started), TK_NS_PER_S);
            if (atomic_load(&f.started) != atomic_load(&f.exited))
                problem("%s: %ld threads started, %ld exited", where, atomic_load(&f.started),
                        atomic_load(&f.exited));
            check_no_leak(&a, where);
        }
    }
    assert_int_equal(problems, 0);
}

/* Workers that time out (core thread time-out, keep-alive 1 ms) leave and
 * start again round after round while every third thread creation fails: a
 * call fails with TK_ETHREAD only with *out untouched, every accepted task
 * runs exactly once, the size changes made meanwhile return TK_OK, and
 * every thread that left is joined (none outlives destroy) and its record
 * freed (no leak). */
static void test_thread_failures_while_the_pool_shrinks(void **state) {
    (void)state;
    problems = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        char where[96];
        snprintf(where, sizeof(where), "[%s] time-outs with failing thread starts", engine->name);
        rel_alloc a;
        rel_alloc_init(&a);
        factory f;
        memset(&f, 0, sizeof(f));
        atomic_store(&f.fail_every, 3);
        tk_executor *ex = NULL;
        if (create_with_factory(&a, engine, 2, &f, &ex) != TK_OK ||
            tk_executor_set_keep_alive(ex, TK_NS_PER_MS) != TK_OK ||
            tk_executor_allow_core_thread_timeout(ex, true) != TK_OK) {
            problem("%s: create failed", where);
            continue;
        }
        probe p;
        probe_init(&p);
        long accepted = 0;
        for (int round = 0; round < 40; round++) {
            if (tk_executor_set_core_pool_size(ex, (unsigned)(round % 4)) != TK_OK)
                problem("%s: set_core_pool_size failed", where);
            for (int i = 0; i < 4; i++) {
                tk_future *fu = SENTINEL;
                int rc = tk_executor_schedule(ex, t_probe, &p, (i % 2) * TK_NS_PER_MS, &fu);
                if (rc == TK_OK) {
                    accepted++;
                    tk_future_release(fu);
                } else if (rc != TK_ETHREAD) {
                    problem("%s: schedule -> %s", where, tk_status_name(rc));
                } else if (fu != SENTINEL) {
                    problem("%s: *out written on failure", where);
                }
            }
            if (round % 8 == 7) {
                rel_wait_at_least(&p.runs, accepted, WAIT_NS);
                rel_sleep_ns(5 * TK_NS_PER_MS); /* idle: the pool shrinks */
            }
        }
        if (!rel_wait_at_least(&p.runs, accepted, WAIT_NS))
            problem("%s: %ld accepted, %ld ran", where, accepted, atomic_load(&p.runs));
        if (tk_executor_destroy(ex) != TK_OK)
            problem("%s: destroy failed", where);
        if (atomic_load(&p.runs) != accepted)
            problem("%s: %ld accepted, %ld ran", where, accepted, atomic_load(&p.runs));
        rel_wait_at_least(&f.exited, atomic_load(&f.started), TK_NS_PER_S);
        if (atomic_load(&f.started) != atomic_load(&f.exited))
            problem("%s: %ld threads started, %ld exited after destroy", where,
                    atomic_load(&f.started), atomic_load(&f.exited));
        print_message("  %s: %ld tasks accepted, %ld thread starts (%ld failed)\n", where, accepted,
                      atomic_load(&f.calls), atomic_load(&f.calls) - atomic_load(&f.started));
        check_no_leak(&a, where);
    }
    assert_int_equal(problems, 0);
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

static void test_callback_fails(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        hooks_rec hr;
        tk_executor *ex = hooked_executor(tk_engine_at(e), 2, &hr);
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
}

static int t_oneshot_self_cancel(tk_run *run, void *arg) {
    hostile *h = arg;
    atomic_fetch_add(&h->runs, 1);
    atomic_store(&h->cancel_rc, tk_future_cancel(tk_run_future(run), true));
    atomic_store(&h->interrupted_seen, tk_run_interrupted(run));
    return 0;
}

static void test_callback_cancels_itself(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        hooks_rec hr;
        tk_executor *ex = hooked_executor(tk_engine_at(e), 2, &hr);
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

static void test_callback_schedules_more_work(void **state) {
    (void)state;
    const int depth = rel_sanitized() ? 9 : 11;
    const long total = (2L << depth) - 1;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        hooks_rec hr;
        tk_executor *ex = hooked_executor(tk_engine_at(e), 3, &hr);
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

static void test_callback_shuts_down(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        /* shutdown() from inside: delayed tasks still run, periodic ones stop. */
        hooks_rec hr;
        tk_executor *ex = hooked_executor(tk_engine_at(e), 2, &hr);
        hostile h, per;
        probe later;
        memset(&h, 0, sizeof(h));
        memset(&per, 0, sizeof(per));
        probe_init(&later);
        for (int i = 0; i < 3; i++)
            assert_int_equal(tk_executor_schedule(ex, t_probe, &later, 30 * TK_NS_PER_MS, NULL),
                             TK_OK);
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
        ex = hooked_executor(tk_engine_at(e), 2, &hr);
        memset(&h, 0, sizeof(h));
        atomic_store(&later.runs, 0);
        for (int i = 0; i < 4; i++)
            assert_int_equal(tk_executor_schedule(ex, t_probe, &later, 3600 * TK_NS_PER_S, NULL),
                             TK_OK);
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

static void test_callback_blocks_until_interrupted(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        hooks_rec hr;
        tk_executor *ex = hooked_executor(tk_engine_at(e), 3, &hr);

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

static void test_hooks_call_back_into_executor(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        static reentrant r;
        memset(&r, 0, sizeof(r));
        tk_executor_options opt;
        tk_queue_config cfg;
        rel_options(&opt, &cfg, tk_engine_at(e), 2, NULL);
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
}

/* destroy() with a task blocked until interrupted: it interrupts and waits. */
static void test_destroy_interrupts_blocked_task(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        hooks_rec hr;
        tk_executor *ex = hooked_executor(tk_engine_at(e), 1, &hr);
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

/* Every allocation of tk_wheel_timer_create(), and of adding 200 timeouts
 * (the engines' cores grow on the way), fails once: the call answers
 * TK_ENOMEM, the timer stays usable and holds exactly what was accepted,
 * and nothing leaks. */
static void test_alloc_fail_wheel_timer(void **state) {
    (void)state;
    problems = 0;
    enum { ADDS = 200 };
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *engine = tk_engine_at(e);
        unsigned long long n, sites[2] = {0, 0};
        for (int phase = 0; phase < 2; phase++) {
            for (n = 1; n <= MAX_SWEEP; n++) {
                rel_alloc a;
                char where[96];
                snprintf(where, sizeof(where), "[%s] wheel timer %s, allocation #%llu fails",
                         engine->name, phase == 0 ? "create" : "new_timeout", n);
                rel_alloc_init(&a);
                tk_wheel_timer_options o;
                tk_wheel_timer_options_init(&o);
                tk_queue_config_init_for(&o.queue, engine);
                o.queue.allocator = &a.iface;
                tk_wheel_timer *t = NULL;
                if (phase == 0)
                    rel_alloc_fail_nth(&a, n);
                int rc = tk_wheel_timer_create(&o, &t);
                long accepted = 0;
                if (phase == 1 && rc == TK_OK) {
                    rel_alloc_fail_nth(&a, n);
                    for (int i = 0; i < ADDS; i++) {
                        int r =
                            tk_wheel_timer_new_timeout(t, wt_noop, NULL, 3600 * TK_NS_PER_S, NULL);
                        if (r == TK_OK)
                            accepted++;
                        else if (r != TK_ENOMEM)
                            problem("%s: new_timeout -> %s, want TK_ENOMEM", where,
                                    tk_status_name(r));
                    }
                }
                bool hit = atomic_load(&a.failures) > 0;
                rel_alloc_disarm(&a);
                if (rc != TK_OK) {
                    if (rc != TK_ENOMEM || !hit || t != NULL)
                        problem("%s: create -> %s (hit %d)", where, tk_status_name(rc), hit);
                } else {
                    if ((long)tk_wheel_timer_pending(t) != accepted)
                        problem("%s: %zu pending, %ld accepted", where, tk_wheel_timer_pending(t),
                                accepted);
                    if (phase == 1 && hit && accepted != ADDS - 1)
                        problem("%s: %ld of %d accepted", where, accepted, ADDS);
                    atomic_long runs = 0; /* still usable */
                    if (tk_wheel_timer_new_timeout(t, wt_count, &runs, 0, NULL) != TK_OK ||
                        !rel_wait_at_least(&runs, 1, WAIT_NS))
                        problem("%s: not usable after the failure", where);
                    long back = tk_wheel_timer_stop(t, NULL, NULL);
                    if (back != accepted)
                        problem("%s: stop handed back %ld of %ld", where, back, accepted);
                    tk_wheel_timer_destroy(t);
                }
                check_no_leak(&a, where);
                if (!hit)
                    break;
            }
            sites[phase] = n - 1;
            if (n > MAX_SWEEP)
                problem("[%s] wheel timer: still allocating after %d sites", engine->name,
                        MAX_SWEEP);
        }
        print_message("  [%s] wheel timer: create %llu, %d new_timeouts %llu allocation sites\n",
                      engine->name, sites[0], ADDS, sites[1]);
    }
    assert_int_equal(problems, 0);
}

int main(int argc, char **argv) {
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_fail_create),
        cmocka_unit_test(test_alloc_fail_schedule),
        cmocka_unit_test(test_alloc_fail_cancel_purge),
        cmocka_unit_test(test_alloc_fail_queue_access),
        cmocka_unit_test(test_alloc_fail_periodic_requeue),
        cmocka_unit_test(test_alloc_fail_shutdown),
        cmocka_unit_test(test_alloc_fail_bulk_schedule),
        cmocka_unit_test(test_alloc_fail_invoke),
        cmocka_unit_test(test_alloc_fail_with_decorate),
        cmocka_unit_test(test_alloc_fail_persistent),
        cmocka_unit_test(test_pending_limit),
        cmocka_unit_test(test_shutdown_policies_at_runtime),
        cmocka_unit_test(test_thread_factory_failures),
        cmocka_unit_test(test_thread_failures_while_the_pool_shrinks),
        cmocka_unit_test(test_callback_fails),
        cmocka_unit_test(test_callback_cancels_itself),
        cmocka_unit_test(test_callback_schedules_more_work),
        cmocka_unit_test(test_callback_shuts_down),
        cmocka_unit_test(test_callback_blocks_until_interrupted),
        cmocka_unit_test(test_hooks_call_back_into_executor),
        cmocka_unit_test(test_destroy_interrupts_blocked_task),
        cmocka_unit_test(test_alloc_fail_wheel_timer),
    };
    return cmocka_run_group_tests_name("reliability_faults", tests, NULL, NULL);
}
