/* SPDX-License-Identifier: MIT */
/* tkbench workload `W4_idle`: what an idle service costs. A service whose
 * threads have started (one task run first, and waited for), then, by
 * variant, an empty queue or one timer an hour ahead, and an idle window of
 * the plan's `seconds` (docs/workloads.md). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>

#include "harness/harness.h"

/* The variants: what the queue holds during the window. */
enum { W4_EMPTY, W4_HOUR };
static const char *const w4_variants[] = {[W4_EMPTY] = "empty", [W4_HOUR] = "hour"};

/* The warm-up task: run once on a service thread, so its threads have
 * started before the window. */
typedef struct w4_warm {
    tkb_fire base;
    _Atomic int ran;
} w4_warm;

static void w4_warm_fire(tkb_fire *f) {
    atomic_store_explicit(&((w4_warm *)f)->ran, 1, memory_order_release);
}

/* Every thread of the process, measured around the window. The benchmark's
 * own thread, which only sleeps through it, is left out (tkb_threads_read());
 * tkbench runs no other thread of its own during a case (the cases run on
 * the main thread, the foreign peers in processes of their own), so every thread
 * counted is the service's: the pool's workers, an engine's tick thread, any
 * helper, whenever they started. */
typedef struct w4_probe {
    tkb_threads before, after; /* too large for a stack frame: one per process */
    int64_t proc_cpu_ns;       /* the whole process, this thread included */
    bool engine;               /* the engine has its own wake-up counter */
    uint64_t engine_wakeups;
} w4_probe;

static w4_probe g_probe; /* main thread only (every case body runs there) */

/* Starts the service's threads: one task due at once, waited for (at most
 * 10 s). Returns true if it ran. */
static bool w4_start_threads(const tkb_svc_ops *ops, void *self) {
    w4_warm warm = {.base = {w4_warm_fire}};
    if (ops->schedule(self, NULL, &warm.base, 0) != 0)
        return false;
    int64_t give_up = tkb_now_ns() + 10 * TKB_NS_PER_S;
    while (!atomic_load_explicit(&warm.ran, memory_order_acquire) && tkb_now_ns() < give_up)
        tkb_sleep_ns(TKB_NS_PER_MS);
    return atomic_load_explicit(&warm.ran, memory_order_acquire);
}

/* One repetition: the service, its threads started, the variant's queue,
 * 200 ms to settle, then the window between two readings of every thread.
 * Returns NULL, or what failed. */
static const char *w4_window(const tkb_case *c, char *timer, int64_t window, tkb_threads_delta *d) {
    const tkb_svc_ops *ops = c->peer->svc;
    w4_probe *pr = &g_probe;
    void *self;
    if (tkb_svc_open(c->peer, 1, &self))
        return "service create failed";
    const char *why = w4_start_threads(ops, self) ? NULL : "the warm-up task did not run";
    if (why == NULL && c->arg2 == W4_HOUR) {
        tkb_prepare_storage(ops, self, timer, 1, ops->timer_size, false);
        if (ops->schedule(self, timer, tkb_idle_record(ops), 3600 * TKB_NS_PER_S) != 0)
            why = "schedule failed";
    }
    if (ops->sync)
        ops->sync(self);
    tkb_sleep_ns(200 * TKB_NS_PER_MS); /* tkb_settle: the threads asleep */
    uint64_t e0 = 0, e1 = 0;
    pr->engine = ops->wakeups && ops->wakeups(self, &e0);
    tkb_threads_read(&pr->before);
    int64_t c0 = tkb_cpu_ns();
    tkb_sleep_ns(window);
    pr->proc_cpu_ns = tkb_cpu_ns() - c0;
    tkb_threads_read(&pr->after);
    if (pr->engine)
        ops->wakeups(self, &e1);
    pr->engine_wakeups = e1 - e0;
    if (c->arg2 == W4_HOUR && why == NULL) {
        ops->cancel(self, timer);
        if (ops->release)
            ops->release(self, timer);
    }
    if (ops->sync)
        ops->sync(self);
    ops->destroy(self);
    tkb_threads_since(&pr->before, &pr->after, d);
    return why;
}

/* W4_idle: the wake-ups and CPU of every thread but this one during the
 * window (w4_probe), the whole process's CPU beside them, and the engine's
 * own wake-up counter where it has one. */
static void w4_idle(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    int64_t window = (int64_t)(c->plan->seconds * 1e9);
    while (tk_gb_keep_running(st)) {
        char *timer = tkb_xmalloc_touched(ops->timer_size);
        tkb_threads_delta d;
        const char *why = timer != NULL ? w4_window(c, timer, window, &d) : "out of memory";
        free(timer);
        if (why != NULL) {
            tk_gb_skip(st, why);
            break;
        }
        tk_gb_set_iteration_time(st, (double)window / 1e9);
        tk_gb_counter(st, "idle_wakeups", (double)d.ctxt);
        tk_gb_counter(st, "idle_cpu_ms", (double)d.cpu_ns / 1e6);
        tk_gb_counter(st, "idle_cpu_process_ms", (double)g_probe.proc_cpu_ns / 1e6);
        tk_gb_counter(st, "idle_threads", (double)d.threads);
        if (d.started + d.ended > 0 || g_probe.after.truncated)
            tk_gb_counter(st, "idle_threads_changed", (double)(d.started + d.ended));
        if (g_probe.engine)
            tk_gb_counter(st, "engine_wakeups", (double)g_probe.engine_wakeups);
    }
}

static size_t w4_idle_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                            tkb_case *cases, size_t cap) {
    size_t k = 0;
    for (size_t v = 0; v < w->nvariants; v++) {
        size_t got = tkb_case_add_realtime(cases + k, cap - k, w, plan, p, plan->seconds, 0,
                                           w4_idle, plan->seconds + 0.3);
        if (got == 0)
            break;
        tkb_case *c = &cases[k];
        snprintf(c->row, sizeof c->row, "%s_%s", w->name, w->variants[v]);
        snprintf(c->name, sizeof c->name, "%s/%s/%.10g", c->row, p->spec, c->n);
        c->arg2 = (int64_t)v;
        k += got;
    }
    return k;
}

static const tkb_metric w4_idle_metrics[] = {
    {.name = "idle_wakeups",
     .unit = "count",
     .better = TKB_BETTER_LOWER,
     .label = "wake-ups",
     .head = {2, "wakeups", NULL, 1, 0},
     .field = 7},
    {.name = "idle_cpu_ms",
     .unit = "ms",
     .better = TKB_BETTER_LOWER,
     .label = "idle CPU",
     .head = {2, "idle.cpu", "(ms)", 1, 2}},
    {.name = "idle_cpu_process_ms",
     .unit = "ms",
     .better = TKB_BETTER_LOWER,
     .label = "idle CPU, whole process"},
    {.name = "idle_threads", .unit = "count", .better = TKB_BETTER_NONE, .label = "threads"},
    {.name = "idle_threads_changed",
     .unit = "count",
     .better = TKB_BETTER_NONE,
     .label = "threads started or ended in the window"},
    {.name = "engine_wakeups",
     .unit = "count",
     .better = TKB_BETTER_LOWER,
     .label = "wake-ups by the engine's own counter"},
};

static const tkb_figure w4_idle_figures[] = {
    {"w4_idle_wakeups", TKB_FIG_BARS, "idle_wakeups", "W4 idle: wake-ups while waiting",
     "W4 idle: wake-ups (context switches) of every thread of the service during the idle window, "
     "its workers started, with an empty queue and with one timer an hour ahead (lower is better; "
     "the axis spans at least 10)",
     NULL, "wake-ups", .yscale = TKB_SCALE_AUTO, .ymin_top = 10, .wide = true},
    {"w4_idle_cpu", TKB_FIG_BARS, "idle_cpu_ms", "W4 idle: CPU while waiting",
     "W4 idle: CPU time (user+sys) of every thread of the service during the idle window, with "
     "an empty queue and with one timer an hour ahead (lower is better; the axis spans at least "
     "1 ms)",
     NULL, "CPU time", .yscale = TKB_SCALE_AUTO, .ymin_top = 1, .wide = true},
};

const tkb_workload tkb_wl_w4_idle = {
    .name = "W4_idle",
    .group = "W4",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "a started pool, its queue empty or one timer 1 h ahead, idle: every thread's "
               "wake-ups and CPU",
    .x = {"seconds idle", "s idle", TKB_SCALE_LIN},
    .metrics = w4_idle_metrics,
    .nmetrics = TKB_COUNT(w4_idle_metrics),
    .figures = w4_idle_figures,
    .nfigures = TKB_COUNT(w4_idle_figures),
    .variants = w4_variants,
    .nvariants = TKB_COUNT(w4_variants),
    .waiting = true,
    .child = "idle",
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1, .seconds = 0.3},
            [TKB_QUICK] = {.reps = 1, .seconds = 1},
            [TKB_FULL] = {.reps = 3, .seconds = 5},
        },
    .cases = w4_idle_cases,
};
