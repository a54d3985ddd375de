/* SPDX-License-Identifier: MIT */
/* A workload that exists only in the test build: the proof that adding a
 * workload is one file and one line in the table (bench/README.md, "Adding a
 * workload"). It inserts n timers into a peer's core and expires them all,
 * and reports the cost per timer of the whole cycle. Nothing else in tkbench,
 * the renderer or the report knows it: its CLI name, list entry, rows,
 * manifest entry, report section and figure all come from this descriptor. */
#include <stdlib.h>

#include "harness/harness.h"

static void w9_cycle(tk_gb_state *st, tkb_case *c) {
    size_t n = (size_t)c->arg;
    int64_t *dl = tkb_uniform_deadlines(n, 1, TKB_NS_PER_S, TKB_SEED + 99);
    double total = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        tkb_core_inst ci;
        if (dl == NULL || tkb_core_open(&ci, c->peer, n) != 0) {
            tk_gb_skip(st, "setup failed (out of memory?)");
            break;
        }
        int64_t t0 = tkb_now_ns();
        ci.ops->add_range(ci.self, ci.timers, 0, n, dl);
        size_t got = ci.ops->expire_all(ci.self, TKB_NS_PER_S);
        int64_t t1 = tkb_now_ns();
        tkb_core_close(&ci);
        if (got != n) {
            tk_gb_skip(st, "not every timer expired");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(t1 - t0) / 1e9);
        total += tkb_per_op(t1 - t0, n);
        runs++;
    }
    if (runs > 0)
        tk_gb_counter(st, "cycle_ns", total / runs);
    free(dl);
}

static size_t w9_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                       tkb_case *cases, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < TKB_COUNT(plan->sizes) && plan->sizes[i] != 0; i++)
        if (tkb_core_fits(p, plan->sizes[i]) && p->core->can_expire)
            tkb_case_add(cases, cap, &k, w, plan, p, (double)plan->sizes[i],
                         (int64_t)plan->sizes[i], w9_cycle, plan->reps, 0.05);
    return k;
}

static const tkb_metric w9_metrics[] = {
    {.name = "cycle_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "insert and expire",
     .figure = TKB_FIG_LINES},
};

const tkb_workload tkb_wl_w9_demo = {
    .name = "W9_demo",
    .group = "W9",
    .level = TKB_LEVEL_CORE,
    .summary = "a test-only workload: insert n timers, expire them all",
    .x = {"timers, n", "n", TKB_SCALE_LOG},
    .metrics = w9_metrics,
    .nmetrics = TKB_COUNT(w9_metrics),
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {100, 1000}, .reps = 3},
            [TKB_QUICK] = {.sizes = {100, 1000, 10000}, .reps = 3},
            [TKB_FULL] = {.sizes = {100, 1000, 10000}, .reps = 5},
        },
    .cases = w9_cases,
};
