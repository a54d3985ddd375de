/* SPDX-License-Identifier: MIT */
/* tkbench workload `W6_delay_range`: insert and expiry cost as delays grow
 * from 0.1 to 100 times the reference span, at core level; the plan's
 * `count` is the population (docs/workloads.md). */
#define _GNU_SOURCE
#include <stdlib.h>

#include "harness/harness.h"

/* The reference span: one revolution of a single-level wheel with a 1 ms
 * tick and 1024 slots (the suites' wheel:tick=1ms,slots=1024), 1.024 s.
 * Every peer is measured at the same delays, multiples of it, so that the
 * lines of a figure compare at equal x (docs/workloads.md, W6_delay_range). */
#define W6_SPAN_NS (1024 * TKB_NS_PER_MS)

/* W6_delay_range: delays uniform in (0, m x span]; schedule and expiry cost. */
static void w6_delay_range(tk_gb_state *st, tkb_case *c) {
    size_t n = c->plan->count;
    int64_t hi = (int64_t)((double)W6_SPAN_NS * (double)c->arg / 10.0);
    int64_t *dl = tkb_uniform_deadlines(n, 1, hi, TKB_SEED + 19);
    double sched = 0, expire = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        tkb_core_inst ci;
        if (dl == NULL || tkb_core_open(&ci, c->peer, n) != 0) {
            tk_gb_skip(st, "setup failed (out of memory?)");
            break;
        }
        tkb_core_warm(&ci, c->peer, dl);
        int64_t t0 = tkb_now_ns();
        ci.ops->add_range(ci.self, ci.timers, 0, n, dl);
        int64_t t1 = tkb_now_ns();
        size_t got = ci.ops->expire_all(ci.self, hi);
        int64_t t2 = tkb_now_ns();
        tkb_core_close(&ci);
        if (got != n) {
            tk_gb_skip(st, "expired count mismatch");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(t2 - t0) / 1e9);
        sched += tkb_per_op(t1 - t0, n);
        expire += tkb_per_op(t2 - t1, n);
        runs++;
    }
    if (runs) {
        tk_gb_counter(st, "schedule_ns", sched / runs);
        tk_gb_counter(st, "expire_ns", expire / runs);
    }
    free(dl);
}

static size_t w6_delay_range_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                                   tkb_case *cases, size_t cap) {
    static const int tenths[] = {1, 10, 100, 1000}; /* 0.1x, 1x, 10x, 100x the span */
    size_t k = 0;
    if (!tkb_core_fits(p, plan->count) || !p->core->can_expire)
        return 0;
    for (size_t i = 0; i < TKB_COUNT(tenths); i++)
        tkb_case_add(cases, cap, &k, w, plan, p, tenths[i] / 10.0, tenths[i], w6_delay_range,
                     plan->reps,
                     tkb_est_phases(p, (double)plan->count, 0.0) * (1 + tenths[i] / 200.0));
    return k;
}

static const tkb_metric w6_delay_range_metrics[] = {
    {.name = "schedule_ns", .unit = "ns", .better = TKB_BETTER_LOWER, .label = "insert"},
    {.name = "expire_ns", .unit = "ns", .better = TKB_BETTER_LOWER, .label = "expiry"},
};

static const tkb_figure w6_delay_range_figures[] = {
    {"w6_delay_range_schedule", TKB_FIG_LINES, "schedule_ns", "W6: insert cost vs delay range",
     "W6 delay range: insert cost as delays grow from 0.1x to 100x the reference span (1.024 s, "
     "one revolution of a 1 ms x 1024-slot wheel).",
     NULL, "time per insert", .yscale = TKB_SCALE_AUTO},
    {"w6_delay_range_expire", TKB_FIG_LINES, "expire_ns", "W6: expiry cost vs delay range",
     "W6 delay range: expiry cost as delays grow past the reference span (1.024 s, one "
     "revolution of a 1 ms x 1024-slot wheel: a single-level wheel's bad case).",
     NULL, "time per expiry", .yscale = TKB_SCALE_AUTO},
};

const tkb_workload tkb_wl_w6_delay_range = {
    .name = "W6_delay_range",
    .group = "W6",
    .level = TKB_LEVEL_CORE,
    .summary = "delays of 0.1x..100x the reference span (1.024 s): schedule and expiry cost",
    .x = {"longest delay / 1.024 s", "delay/span", TKB_SCALE_LOG},
    .metrics = w6_delay_range_metrics,
    .nmetrics = TKB_COUNT(w6_delay_range_metrics),
    .figures = w6_delay_range_figures,
    .nfigures = TKB_COUNT(w6_delay_range_figures),
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1, .count = 2000},
            [TKB_QUICK] = {.reps = 5, .count = 100000},
            [TKB_FULL] = {.reps = 5, .count = 1000000},
        },
    .cases = w6_delay_range_cases,
};
