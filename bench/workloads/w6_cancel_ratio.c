/* SPDX-License-Identifier: MIT */
/* tkbench workload `W6_cancel_ratio`: the cost per timer end to end when a
 * share of the timers is cancelled before it fires, at core level; the plan's
 * `count` is the population (docs/workloads.md). */
#define _GNU_SOURCE
#include <stdlib.h>

#include "harness/harness.h"

/* W6_cancel_ratio: insert N (delays 1 ms..1 s), cancel pct % of them, expire
 * the rest; ns per timer end to end. */
static void w6_cancel_ratio(tk_gb_state *st, tkb_case *c) {
    size_t n = c->plan->count, k = n * (size_t)c->arg / 100;
    int64_t *dl = tkb_uniform_deadlines(n, TKB_NS_PER_MS, TKB_NS_PER_S, TKB_SEED + 13);
    uint32_t *perm = tkb_permutation(n, TKB_SEED + 17);
    double total = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        tkb_core_inst ci;
        if (dl == NULL || perm == NULL || tkb_core_open(&ci, c->peer, n) != 0) {
            tk_gb_skip(st, "setup failed (out of memory?)");
            break;
        }
        tkb_core_warm(&ci, c->peer, dl);
        int64_t t0 = tkb_now_ns();
        ci.ops->add_range(ci.self, ci.timers, 0, n, dl);
        ci.ops->cancel_list(ci.self, ci.timers, perm, k);
        size_t got = ci.ops->expire_all(ci.self, TKB_NS_PER_S);
        int64_t t1 = tkb_now_ns();
        tkb_core_close(&ci);
        if (got != n - k) {
            tk_gb_skip(st, "expired count mismatch");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(t1 - t0) / 1e9);
        total += tkb_per_op(t1 - t0, n);
        runs++;
    }
    if (runs)
        tk_gb_counter(st, "ns_per_timer", total / runs);
    free(dl);
    free(perm);
}

static size_t w6_cancel_ratio_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                                    tkb_case *cases, size_t cap) {
    size_t k = 0;
    if (!tkb_core_fits(p, plan->count) || !p->core->can_expire)
        return 0;
    static const int pcts[] = {0, 50, 90, 99};
    for (size_t i = 0; i < TKB_COUNT(pcts); i++) {
        int pct = pcts[i];
        tkb_case_add(cases, cap, &k, w, plan, p, (double)pct, (int64_t)pct, w6_cancel_ratio,
                     plan->reps, tkb_est_phases(p, (double)plan->count, (double)pct / 100.0));
    }
    return k;
}

static const tkb_metric w6_cancel_ratio_metrics[] = {
    {.name = "ns_per_timer", .unit = "ns", .better = TKB_BETTER_LOWER, .label = "ns per timer"},
};

static const tkb_figure w6_cancel_ratio_figures[] = {
    {"w6_cancel_ratio", TKB_FIG_LINES, "ns_per_timer", "W6: cost vs cancel ratio",
     "W6 cancel ratio: end-to-end cost per timer when a share of the timers is cancelled before "
     "it fires.",
     NULL, "time per timer", .yscale = TKB_SCALE_AUTO},
};

const tkb_workload tkb_wl_w6_cancel_ratio = {
    .name = "W6_cancel_ratio",
    .group = "W6",
    .level = TKB_LEVEL_CORE,
    .summary = "0/50/90/99 % cancelled before firing: ns per timer end to end",
    .x = {"timers cancelled before firing (%)", "% cancelled", TKB_SCALE_LIN},
    .metrics = w6_cancel_ratio_metrics,
    .nmetrics = TKB_COUNT(w6_cancel_ratio_metrics),
    .figures = w6_cancel_ratio_figures,
    .nfigures = TKB_COUNT(w6_cancel_ratio_figures),
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1, .count = 2000},
            [TKB_QUICK] = {.reps = 5, .count = 100000},
            [TKB_FULL] = {.reps = 5, .count = 1000000},
        },
    .cases = w6_cancel_ratio_cases,
};
