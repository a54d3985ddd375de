/* SPDX-License-Identifier: MIT */
/* tkbench workload `W6_dist`: hold-model churn at population N (as W1_core's)
 * with deadlines from five increment distributions, one variant each; its
 * rows are W6_dist_<variant>. The plan's `count` is the pairs
 * (docs/workloads.md). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness/harness.h"

/* W6_dist: the same churn, deadlines from other distributions (virtual now 0). */
/* The variants, in the order of dist_names (the descriptor's variants). */
enum { DIST_UNIFORM, DIST_EXPONENTIAL, DIST_BIMODAL, DIST_CONSTANT, DIST_MONOTONIC };
static const char *const dist_names[] = {"uniform", "exponential", "bimodal", "constant",
                                         "monotonic"};

static int64_t *dist_deadlines(int dist, size_t count, int64_t first_index, uint64_t seed) {
    int64_t *d = malloc((count ? count : 1) * sizeof *d);
    if (d == NULL)
        return NULL;
    tkb_rng r = {seed};
    for (size_t i = 0; i < count; i++) {
        switch (dist) {
        case DIST_UNIFORM: /* as W1: [10 s, 20 s] */
            d[i] = tkb_rng_range(&r, TKB_W1_LO, TKB_W1_HI);
            break;
        case DIST_EXPONENTIAL: { /* mean 10 s, at least 1 ms */
            double x = -log(1.0 - tkb_rng_unit(&r)) * 10.0 * (double)TKB_NS_PER_S;
            d[i] =
                x < (double)TKB_NS_PER_MS ? TKB_NS_PER_MS : (x > 1e12 ? (int64_t)1e12 : (int64_t)x);
            break;
        }
        case DIST_BIMODAL: /* 90 % short [1 ms, 100 ms], 10 % long [10 s, 60 s] */
            d[i] = tkb_rng_next(&r) % 10 != 0
                       ? tkb_rng_range(&r, TKB_NS_PER_MS, 100 * TKB_NS_PER_MS)
                       : tkb_rng_range(&r, 10 * TKB_NS_PER_S, 60 * TKB_NS_PER_S);
            break;
        case DIST_CONSTANT: /* every deadline equal: FIFO by sequence */
            d[i] = 15 * TKB_NS_PER_S;
            break;
        default: /* monotonic: each new deadline after every earlier one (1 us apart) */
            d[i] = TKB_W1_LO + (first_index + (int64_t)i) * 1000;
            break;
        }
    }
    return d;
}

static void w6_dist(tk_gb_state *st, tkb_case *c) {
    size_t n = (size_t)c->arg, pairs = (size_t)tk_gb_max_iterations(st);
    int dist = (int)c->arg2;
    int64_t *init = dist_deadlines(dist, n, 0, TKB_SEED + n + (uint64_t)dist);
    int64_t *next = dist_deadlines(dist, pairs, (int64_t)n, TKB_SEED * 11 + n + (uint64_t)dist);
    uint32_t *victims = tkb_random_indices(pairs, n, TKB_SEED * 7 + n);
    tkb_core_churn_run(st, c->peer, n, init, next, victims);
    free(init);
    free(next);
    free(victims);
}

static size_t w6_dist_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                            tkb_case *cases, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < TKB_COUNT(plan->sizes) && plan->sizes[i] != 0; i++) {
        size_t n = plan->sizes[i], pairs = tkb_churn_pairs(plan, p);
        if (!tkb_core_fits(p, n))
            continue;
        for (size_t d = 0; d < w->nvariants; d++) {
            tkb_case *c = tkb_case_add(cases, cap, &k, w, plan, p, (double)n, (int64_t)n, w6_dist,
                                       plan->reps, tkb_est_churn(p, (double)n, (double)pairs));
            if (c == NULL)
                continue;
            snprintf(c->row, sizeof c->row, "%s_%s", w->name, w->variants[d]);
            snprintf(c->name, sizeof c->name, "%s/%s/%zu", c->row, p->spec, n);
            c->arg2 = (int64_t)d;
            c->time_metric = "churn_ns";
            c->iterations = (int64_t)pairs;
        }
    }
    return k;
}

static const tkb_metric w6_dist_metrics[] = {
    {.name = "churn_ns", .unit = "ns", .better = TKB_BETTER_LOWER, .label = "churn"},
};

static const tkb_figure w6_dist_figures[] = {
    {"w6_dist_churn", TKB_FIG_BARS, "churn_ns", "W6: hold-model churn by increment distribution",
     "W6 increment distributions: churn cost (cancel one, insert one) per distribution, at the "
     "largest population measured",
     NULL, "time per churn pair", .yscale = TKB_SCALE_AUTO, .wide = true},
};

const tkb_workload tkb_wl_w6_dist = {
    .name = "W6_dist",
    .group = "W6",
    .level = TKB_LEVEL_CORE,
    .summary = "churn with uniform/exponential/bimodal/constant/monotonic deadlines",
    .x = {"timers outstanding, N", "N", TKB_SCALE_LOG},
    .metrics = w6_dist_metrics,
    .nmetrics = TKB_COUNT(w6_dist_metrics),
    .figures = w6_dist_figures,
    .nfigures = TKB_COUNT(w6_dist_figures),
    .variants = dist_names,
    .nvariants = TKB_COUNT(dist_names),
    .sizes_from_n = true,
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {1000}, .reps = 1, .count = 10000},
            [TKB_QUICK] = {.sizes = {100000}, .reps = 5, .count = 200000},
            [TKB_FULL] = {.sizes = {1000, 100000, 1000000}, .reps = 5, .count = 1000000},
        },
    .cases = w6_dist_cases,
};
