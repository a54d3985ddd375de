/* SPDX-License-Identifier: MIT */
/* tkbench workload `W1_core`: insert, cancel, churn and expire at a fixed
 * population N, on the pure data structure with virtual time
 * (docs/workloads.md). Delays uniform in [10 s, 20 s]; the plan's `count` is
 * the hold-model pairs. */
#include <stdio.h>
#include <stdlib.h>

#include "harness/harness.h"

/* W1_core: insert N, cancel N (random order), insert N again and expire them. */
static void w1_core_phases(tk_gb_state *st, tkb_case *c) {
    size_t n = (size_t)c->arg;
    int64_t *dl = tkb_uniform_deadlines(n, TKB_W1_LO, TKB_W1_HI, TKB_SEED + n);
    uint32_t *perm = tkb_permutation(n, TKB_SEED * 3 + n);
    double sched = 0, cancel = 0, expire = 0;
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
        int64_t t1 = tkb_now_ns();
        ci.ops->cancel_list(ci.self, ci.timers, perm, n);
        int64_t t2 = tkb_now_ns();
        int64_t timed = t2 - t0;
        sched += tkb_per_op(t1 - t0, n);
        cancel += tkb_per_op(t2 - t1, n);
        if (ci.ops->can_expire) {
            ci.ops->add_range(ci.self, ci.timers, 0, n, dl);
            int64_t t3 = tkb_now_ns();
            size_t got = ci.ops->expire_all(ci.self, TKB_W1_HI);
            int64_t t4 = tkb_now_ns();
            if (got != n) {
                tkb_core_close(&ci);
                tk_gb_skip(st, "expire_all did not expire every timer");
                break;
            }
            expire += tkb_per_op(t4 - t3, n);
            timed += t4 - t3;
        }
        tkb_core_close(&ci);
        tk_gb_set_iteration_time(st, (double)timed / 1e9);
        runs++;
    }
    if (runs > 0) {
        tk_gb_counter(st, "schedule_ns", sched / runs);
        tk_gb_counter(st, "cancel_ns", cancel / runs);
        if (c->peer->core->can_expire)
            tk_gb_counter(st, "expire_ns", expire / runs);
    }
    free(dl);
    free(perm);
}

static void w1_core_churn(tk_gb_state *st, tkb_case *c) {
    size_t n = (size_t)c->arg, pairs = (size_t)tk_gb_max_iterations(st);
    int64_t *init = tkb_uniform_deadlines(n, TKB_W1_LO, TKB_W1_HI, TKB_SEED + n);
    int64_t *next = tkb_uniform_deadlines(pairs, TKB_W1_LO, TKB_W1_HI, TKB_SEED * 5 + n);
    uint32_t *victims = tkb_random_indices(pairs, n, TKB_SEED * 7 + n);
    tkb_core_churn_run(st, c->peer, n, init, next, victims);
    free(init);
    free(next);
    free(victims);
}

static size_t w1_core_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                            tkb_case *cases, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < TKB_COUNT(plan->sizes) && plan->sizes[i] != 0; i++) {
        size_t n = plan->sizes[i], pairs = tkb_churn_pairs(plan, p);
        if (!tkb_core_fits(p, n))
            continue;
        tkb_case_add(cases, cap, &k, w, plan, p, (double)n, (int64_t)n, w1_core_phases, plan->reps,
                     tkb_est_phases(p, (double)n, 1.0));
        tkb_case *c = tkb_case_add(cases, cap, &k, w, plan, p, (double)n, (int64_t)n, w1_core_churn,
                                   plan->reps, tkb_est_churn(p, (double)n, (double)pairs));
        if (c != NULL) {
            c->time_metric = "churn_ns";
            c->iterations = (int64_t)pairs;
            snprintf(c->name, sizeof c->name, "%s/%s/%zu/churn", w->name, p->spec, n);
        }
    }
    return k;
}

static const tkb_metric w1_core_metrics[] = {
    {.name = "schedule_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "insert",
     .head = {1, "core.ins", NULL, 1, 1}},
    {.name = "cancel_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "cancel",
     .head = {1, "core.can", NULL, 1, 1}},
    {.name = "churn_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "churn (cancel+insert)",
     .head = {1, "core.chu", NULL, 1, 1}},
    {.name = "expire_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "expiry",
     .head = {1, "core.exp", NULL, 1, 1}},
};

#define W1_CORE_WHAT "W1 core level (pure data structure, one thread): "
static const tkb_figure w1_core_figures[] = {
    {"w1_core_schedule", TKB_FIG_LINES, "schedule_ns", "W1_core: insert (schedule)",
     W1_CORE_WHAT "insert (schedule) cost per operation against the population N.", NULL,
     "time per insert", .yscale = TKB_SCALE_LOG,
     .refs = {{&tkb_wl_floor, "array_append_ns", "array append"}}},
    {"w1_core_cancel", TKB_FIG_LINES, "cancel_ns", "W1_core: cancel",
     W1_CORE_WHAT "cancel cost per operation against the population N.", NULL, "time per cancel",
     .yscale = TKB_SCALE_LOG},
    {"w1_core_churn", TKB_FIG_LINES, "churn_ns", "W1_core: churn (cancel one, insert one)",
     W1_CORE_WHAT "churn (cancel one, insert one) cost per operation against the population N.",
     NULL, "time per cancel+insert pair", .yscale = TKB_SCALE_LOG},
    {"w1_core_expire", TKB_FIG_LINES, "expire_ns", "W1_core: expire",
     W1_CORE_WHAT "expire cost per operation against the population N.", NULL, "time per expiry",
     .yscale = TKB_SCALE_LOG},
    {"w1_core_overview", TKB_FIG_PANELS, "schedule_ns,cancel_ns,churn_ns,expire_ns",
     "W1 core: cost per operation",
     "W1 core level, all four operations side by side (double column).", "N", "time per operation",
     .yscale = TKB_SCALE_LOG, .wide = true},
};

const tkb_workload tkb_wl_w1_core = {
    .name = "W1_core",
    .group = "W1",
    .level = TKB_LEVEL_CORE,
    .summary = "insert / cancel / churn / expire at population N (delays 10-20 s)",
    .x = {"timers outstanding, N", "N", TKB_SCALE_LOG},
    .metrics = w1_core_metrics,
    .nmetrics = TKB_COUNT(w1_core_metrics),
    .figures = w1_core_figures,
    .nfigures = TKB_COUNT(w1_core_figures),
    .sizes_from_n = true,
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {TKB_W1_SIZES_SMOKE}, .reps = 1, .count = 10000},
            [TKB_QUICK] = {.sizes = {TKB_W1_SIZES_QUICK}, .reps = 5, .count = 1000000},
            [TKB_FULL] = {.sizes = {TKB_W1_SIZES_FULL}, .reps = 5, .count = 1000000},
        },
    .cases = w1_core_cases,
};
