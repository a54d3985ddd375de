/* SPDX-License-Identifier: MIT */
/* tkbench workload `W3_latency`: accuracy at a realistic load: N timers,
 * delays uniform in [1 ms, 100 ms], scheduled at a steady rate over the plan's
 * `seconds` from a thread that is not a timer thread (docs/workloads.md). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "harness/harness.h"

/* W3_latency: N timers, delays uniform in [1 ms, 100 ms], scheduled at a
 * steady rate over the plan's `seconds` from this (non-timer) thread. */
static void w3_latency(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    size_t n = (size_t)c->arg;
    int64_t *delay = tkb_uniform_deadlines(n, TKB_NS_PER_MS, 100 * TKB_NS_PER_MS, TKB_SEED + 29);
    tkb_fire_slots fs;
    int fs_rc = tkb_fire_slots_alloc(&fs, ops, n, sizeof(tkb_late_rec));
    tkb_hist h;
    if (delay == NULL || fs_rc != 0 || tkb_hist_init(&h)) {
        tk_gb_skip(st, "out of memory");
        free(delay);
        free(fs.mem);
        return;
    }
    int64_t interval = (int64_t)(c->plan->seconds * 1e9 / (double)n);
    while (tk_gb_keep_running(st)) {
        void *self;
        if (tkb_svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "service create failed");
            break;
        }
        tkb_late_ctx ctx = {.h = &h};
        tkb_hist_reset(&h);
        tkb_fire_slots_prepare(&fs, ops, self, n);
        ops->schedule(self, NULL, &tkb_noop, 0);
        tkb_sleep_ns(20 * TKB_NS_PER_MS);
        int fails = 0;
        int64_t start = tkb_now_ns();
        int64_t cpu0 = tkb_cpu_ns();
        uint64_t ctxt0 = tkb_other_threads_ctxt();
        for (size_t i = 0; i < n; i++) {
            tkb_sleep_until_ns(start + (int64_t)i * interval);
            int64_t now = tkb_now_ns();
            tkb_late_rec *r = tkb_fire_slot_record(&fs, i);
            *r = (tkb_late_rec){{tkb_late_fire}, now + delay[i], &ctx};
            fails += ops->schedule(self, tkb_fire_slot_timer(&fs, i), &r->base, delay[i]) != 0;
        }
        bool all = tkb_wait_fired(&ctx.fired, n - (size_t)fails, tkb_now_ns() + 30 * TKB_NS_PER_S);
        int64_t end = tkb_now_ns();
        int64_t cpu1 = tkb_cpu_ns();
        uint64_t wakeups = tkb_other_threads_ctxt() - ctxt0;
        c->peer->svc->destroy(self);
        if (fails || !all) {
            tk_gb_skip(st, fails ? "schedule failed" : "not every timer fired within 30 s");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(end - start) / 1e9);
        tkb_hist_counters(st, &h, "late", true);
        tk_gb_counter(st, "late_max_us", (double)h.max / 1000.0);
        tk_gb_counter(st, "early_count", (double)h.early_count);
        /* what the accuracy cost: the whole process's CPU (the producer's
         * included) as a share of one core over the run */
        tk_gb_counter(st, "process_cpu_pct", 100.0 * (double)(cpu1 - cpu0) / (double)(end - start));
        /* how often the service's threads slept and woke (their context
         * switches; this thread, the producer, is not counted), as the
         * executor-level replay counts them */
        tk_gb_counter(st, "wakeups_per_s", (double)wakeups * 1e9 / (double)(end - start));
        if (c->hist)
            tkb_hist_merge(c->hist, &h);
    }
    tkb_hist_destroy(&h);
    free(delay);
    free(fs.mem);
}

static size_t w3_latency_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                               tkb_case *cases, size_t cap) {
    size_t n = plan->sizes[0];
    return tkb_case_add_realtime(cases, cap, w, plan, p, (double)n, (int64_t)n, w3_latency,
                                 plan->seconds + 0.2);
}

static const tkb_metric w3_latency_metrics[] = {
    {.name = "late_p50_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "p50",
     .pct = 50,
     .head = {2, "W3 p50", "(us)", 1, 1},
     .field = 5},
    {.name = "late_p90_us", .unit = "us", .better = TKB_BETTER_LOWER, .label = "p90", .pct = 90},
    {.name = "late_p99_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "p99",
     .pct = 99,
     .head = {2, "W3 p99", "(us)", 1, 1},
     .field = 6},
    {.name = "late_p999_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "p99.9",
     .pct = 99.9},
    {.name = "late_max_us", .unit = "us", .better = TKB_BETTER_LOWER, .label = "max"},
    {.name = "early_count",
     .unit = "count",
     .better = TKB_BETTER_LOWER,
     .label = "early",
     .head = {2, "early", NULL, 1, 0}},
    {.name = "process_cpu_pct",
     .unit = "pct",
     .better = TKB_BETTER_LOWER,
     .label = "CPU (of a core)"},
    {.name = "wakeups_per_s",
     .unit = "per_s",
     .better = TKB_BETTER_LOWER,
     .label = "service thread wake-ups"},
};

static const tkb_figure w3_latency_figures[] = {
    TKB_LATENESS_FIGURE,
};

const tkb_workload tkb_wl_w3_latency = {
    .name = "W3_latency",
    .group = "W3",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "10k timers, delays 1-100 ms, over ~5 s: lateness distribution, CPU, wake-ups",
    .x = {"timers", "timers", TKB_SCALE_LOG},
    .metrics = w3_latency_metrics,
    .nmetrics = TKB_COUNT(w3_latency_metrics),
    .figures = w3_latency_figures,
    .nfigures = TKB_COUNT(w3_latency_figures),
    .hist = true,
    .waiting = true,
    .child = "latency",
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {500}, .reps = 1, .seconds = 0.5},
            [TKB_QUICK] = {.sizes = {6000}, .reps = 1, .seconds = 3},
            [TKB_FULL] = {.sizes = {10000}, .reps = 3, .seconds = 5},
        },
    .cases = w3_latency_cases,
};
