/* SPDX-License-Identifier: MIT */
/* tkbench workload `W2_spread`: N timers due uniformly over one second, all
 * scheduled before the first is due: how well a service keeps up, and its
 * lateness (docs/workloads.md). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "harness/harness.h"

/* W2_spread: N timers due uniformly over [base, base + 1 s), all scheduled
 * before base. */
static void w2_spread(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    size_t n = (size_t)c->arg;
    int64_t *u = tkb_uniform_deadlines(n, 0, TKB_NS_PER_S - 1, TKB_SEED + 23);
    tkb_fire_slots fs;
    int fs_rc = tkb_fire_slots_alloc(&fs, ops, n, sizeof(tkb_late_rec));
    tkb_hist h;
    if (u == NULL || fs_rc != 0 || tkb_hist_init(&h)) {
        tk_gb_skip(st, "out of memory");
        free(u);
        free(fs.mem);
        return;
    }
    while (tk_gb_keep_running(st)) {
        void *self;
        if (tkb_svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "service create failed");
            break;
        }
        tkb_late_ctx ctx = {.h = &h};
        tkb_hist_reset(&h);
        tkb_fire_slots_prepare(&fs, ops, self, n);
        ops->schedule(self, NULL, &tkb_noop, 0); /* start the threads */
        tkb_sleep_ns(20 * TKB_NS_PER_MS);
        int64_t offset = tkb_w2_offset_ns(n);
        int64_t base = tkb_now_ns() + offset;
        int fails = 0;
        for (size_t i = 0; i < n; i++) {
            tkb_late_rec *r = tkb_fire_slot_record(&fs, i);
            *r = (tkb_late_rec){{tkb_late_fire}, base + u[i], &ctx};
            fails += tkb_schedule_for(ops, self, tkb_fire_slot_timer(&fs, i), &r->base,
                                      base + u[i]) != 0;
        }
        int64_t sched_end = tkb_now_ns();
        bool all = tkb_wait_fired(&ctx.fired, n - (size_t)fails, base + 60 * TKB_NS_PER_S);
        int64_t last = atomic_load(&ctx.last_ns);
        c->peer->svc->destroy(self);
        if (fails || !all) {
            tk_gb_skip(st, fails ? "schedule failed" : "not every timer fired within 60 s");
            break;
        }
        if (sched_end > base)
            fprintf(stderr, "tkbench: W2_spread %s: scheduling overran the offset by %.1f ms\n",
                    c->peer->label, (double)(sched_end - base) / 1e6);
        tk_gb_set_iteration_time(st, (double)(last - base) / 1e9);
        tk_gb_counter(st, "expire_wall_ms", (double)(last - base) / 1e6);
        tk_gb_counter(st, "late_p50_us", (double)tkb_hist_percentile(&h, 50) / 1000.0);
        tk_gb_counter(st, "late_p99_us", (double)tkb_hist_percentile(&h, 99) / 1000.0);
        tk_gb_counter(st, "late_max_us", (double)h.max / 1000.0);
        tk_gb_counter(st, "offset_ms", (double)offset / 1e6);
        tk_gb_counter(st, "early_count", (double)h.early_count);
        if (c->hist)
            tkb_hist_merge(c->hist, &h);
    }
    tkb_hist_destroy(&h);
    free(u);
    free(fs.mem);
}

static size_t w2_spread_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                              tkb_case *cases, size_t cap) {
    size_t n = plan->sizes[0];
    return tkb_case_add_realtime(cases, cap, w, plan, p, (double)n, (int64_t)n, w2_spread,
                                 1.5 + (double)tkb_w2_offset_ns(n) / 1e9);
}

static const tkb_metric w2_spread_metrics[] = {
    {.name = "expire_wall_ms", .unit = "ms", .better = TKB_BETTER_LOWER, .label = "wall"},
    {.name = "late_p50_us", .unit = "us", .better = TKB_BETTER_LOWER, .label = "p50", .pct = 50},
    {.name = "late_p99_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "p99",
     .pct = 99,
     .head = {2, "spread99", "(ms)", 1000, 2}},
    {.name = "late_max_us", .unit = "us", .better = TKB_BETTER_LOWER, .label = "max"},
    {.name = "offset_ms", .unit = "ms", .better = TKB_BETTER_NONE, .label = "scheduling offset"},
    {.name = "early_count", .unit = "count", .better = TKB_BETTER_LOWER, .label = "early"},
};

static const tkb_figure w2_spread_figures[] = {
    {"w2_spread_lateness", TKB_FIG_BARS, "late_p50_us,late_p99_us,late_max_us",
     "W2 spread: lateness",
     "W2 spread: deadlines uniform over 1 s, pre-scheduled; lateness percentiles per peer", NULL,
     "lateness", .yscale = TKB_SCALE_AUTO},
    TKB_LATENESS_FIGURE,
};

const tkb_workload tkb_wl_w2_spread = {
    .name = "W2_spread",
    .group = "W2",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "N timers due uniformly over 1 s: wall time and lateness",
    .x = {"timers", "timers", TKB_SCALE_LOG},
    .metrics = w2_spread_metrics,
    .nmetrics = TKB_COUNT(w2_spread_metrics),
    .figures = w2_spread_figures,
    .nfigures = TKB_COUNT(w2_spread_figures),
    .hist = true,
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {10000}, .reps = 1},
            [TKB_QUICK] = {.sizes = {1000000}, .reps = 1},
            [TKB_FULL] = {.sizes = {1000000}, .reps = 3},
        },
    .cases = w2_spread_cases,
};
