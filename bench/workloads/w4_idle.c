/* SPDX-License-Identifier: MIT */
/* tkbench workload `W4_idle`: the cost of waiting: one timer an hour ahead,
 * then an idle window of the plan's `seconds` (docs/workloads.md). */
#define _GNU_SOURCE
#include <stdlib.h>

#include "harness/harness.h"

/* W4_idle: one timer 1 h ahead, then idle. Wake-ups from the engine's counter
 * if it has one, else the context switches of every thread but this one. */
static void w4_idle(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    int64_t window = (int64_t)(c->plan->seconds * 1e9);
    while (tk_gb_keep_running(st)) {
        void *self;
        char *timer = tkb_xmalloc_touched(ops->timer_size);
        if (timer == NULL || tkb_svc_open(c->peer, 1, &self)) {
            free(timer);
            tk_gb_skip(st, "service create failed");
            break;
        }
        tkb_prepare_storage(ops, self, timer, 1, ops->timer_size, false);
        ops->schedule(self, timer, tkb_idle_record(ops), 3600 * TKB_NS_PER_S);
        if (ops->sync)
            ops->sync(self);
        tkb_sleep_ns(200 * TKB_NS_PER_MS); /* tkb_settle: threads started and asleep */
        uint64_t w0 = 0, w1 = 0;
        bool engine = ops->wakeups && ops->wakeups(self, &w0);
        if (!engine)
            w0 = tkb_other_threads_ctxt();
        int64_t c0 = tkb_cpu_ns(), m0 = tkb_thread_cpu_ns();
        tkb_sleep_ns(window);
        int64_t c1 = tkb_cpu_ns(), m1 = tkb_thread_cpu_ns();
        if (engine)
            ops->wakeups(self, &w1);
        else
            w1 = tkb_other_threads_ctxt();
        ops->cancel(self, timer);
        if (ops->release)
            ops->release(self, timer);
        if (ops->sync)
            ops->sync(self);
        ops->destroy(self);
        free(timer);
        tk_gb_set_iteration_time(st, (double)window / 1e9);
        /* the process's CPU without this (sleeping) benchmark thread's own,
         * which is the harness's, not the peer's; the raw figure is added (idle_cpu_process_ms) */
        int64_t others = (c1 - c0) - (m1 - m0);
        tk_gb_counter(st, "idle_cpu_ms", (double)(others > 0 ? others : 0) / 1e6);
        tk_gb_counter(st, "idle_cpu_process_ms", (double)(c1 - c0) / 1e6);
        tk_gb_counter(st, "idle_wakeups", (double)(w1 - w0));
        tk_gb_counter(st, "wakeups_from_engine_counter", engine ? 1.0 : 0.0);
    }
}

static size_t w4_idle_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                            tkb_case *cases, size_t cap) {
    return tkb_case_add_realtime(cases, cap, w, plan, p, plan->seconds, 0, w4_idle,
                                 plan->seconds + 0.3);
}

static const tkb_metric w4_idle_metrics[] = {
    {.name = "idle_cpu_ms",
     .unit = "ms",
     .better = TKB_BETTER_LOWER,
     .label = "idle CPU",
     .head = {2, "idle.cpu", "(ms)", 1, 2}},
    {.name = "idle_cpu_process_ms",
     .unit = "ms",
     .better = TKB_BETTER_LOWER,
     .label = "idle CPU, whole process"},
    {.name = "idle_wakeups",
     .unit = "count",
     .better = TKB_BETTER_LOWER,
     .label = "wake-ups",
     .head = {2, "wakeups", NULL, 1, 0}},
    {.name = "wakeups_from_engine_counter",
     .unit = "count",
     .better = TKB_BETTER_NONE,
     .label = "wake-ups counted by the engine (1/0)"},
};

static const tkb_figure w4_idle_figures[] = {
    {"w4_idle_cpu", TKB_FIG_BARS, "idle_cpu_ms", "W4 idle: CPU while waiting",
     "W4 idle: process CPU (user+sys) during the idle window with one timer an hour ahead (lower "
     "is better; the axis spans at least 1 ms)",
     NULL, "CPU time", .yscale = TKB_SCALE_AUTO, .ymin_top = 1},
    {"w4_idle_wakeups", TKB_FIG_BARS, "idle_wakeups", "W4 idle: wake-ups while waiting",
     "W4 idle: timer-thread wake-ups during the idle period (lower is better; the axis spans at "
     "least 10)",
     NULL, "wake-ups", .yscale = TKB_SCALE_AUTO, .ymin_top = 10},
};

const tkb_workload tkb_wl_w4_idle = {
    .name = "W4_idle",
    .group = "W4",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "one timer 1 h ahead, then idle: CPU and wake-ups",
    .x = {"seconds idle", "s idle", TKB_SCALE_LIN},
    .metrics = w4_idle_metrics,
    .nmetrics = TKB_COUNT(w4_idle_metrics),
    .figures = w4_idle_figures,
    .nfigures = TKB_COUNT(w4_idle_figures),
    .waiting = true,
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1, .seconds = 0.5},
            [TKB_QUICK] = {.reps = 1, .seconds = 5},
            [TKB_FULL] = {.reps = 3, .seconds = 5},
        },
    .cases = w4_idle_cases,
};
