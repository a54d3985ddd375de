/* SPDX-License-Identifier: MIT */
/* tkbench: building cases (one registered Google Benchmark each) and the
 * rough wall-time model behind the progress estimate. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tkbench.h"

bool tkb_is_strawman(const tkb_peer *p) {
    return strcmp(p->kind, "strawman") == 0;
}

bool tkb_core_fits(const tkb_peer *p, size_t n) {
    size_t cap = p->core_max_n;
    if (tkb_is_strawman(p) && (cap == 0 || tkb_the_run.suite->strawman_max_n < cap))
        cap = tkb_the_run.suite->strawman_max_n;
    return p->core != NULL && (cap == 0 || n <= cap);
}

tkb_case *tkb_case_add(tkb_case *cases, size_t cap, size_t *k, const tkb_workload *w,
                       const tkb_plan *plan, const tkb_peer *p, double n, int64_t arg,
                       tkb_case_fn fn, int reps, double est) {
    if (*k >= cap)
        return NULL;
    if (!tkb_the_run.reps_given) { /* the repetitions the targets need of this case */
        double largest = 0;
        for (size_t i = 0; i < TKB_COUNT(plan->sizes) && plan->sizes[i] != 0; i++)
            largest = (double)plan->sizes[i] > largest ? (double)plan->sizes[i] : largest;
        int need = tkb_targets_min_reps(w, p, n, largest > 0 ? largest : n);
        reps = need > reps ? need : reps;
    }
    tkb_case *c = &cases[(*k)++];
    memset(c, 0, sizeof *c);
    c->wl = w;
    snprintf(c->row, sizeof c->row, "%s", w->name);
    c->plan = plan;
    c->peer = p;
    c->n = n;
    c->arg = arg;
    c->fn = fn;
    c->reps = reps;
    c->est_seconds = est * reps;
    snprintf(c->name, sizeof c->name, "%s/%s/%.10g", c->row, p->spec, n);
    return c;
}

void tkb_case_attach_hist(tkb_case *c) {
    if (c == NULL)
        return;
    c->hist = malloc(sizeof *c->hist);
    if (c->hist && tkb_hist_init(c->hist)) {
        free(c->hist);
        c->hist = NULL;
    }
}

size_t tkb_case_add_realtime(tkb_case *cases, size_t cap, const tkb_workload *w,
                             const tkb_plan *plan, const tkb_peer *p, double n, int64_t arg,
                             tkb_case_fn fn, double est) {
    size_t k = 0;
    if (p->svc == NULL)
        return 0;
    tkb_case *c = tkb_case_add(cases, cap, &k, w, plan, p, n, arg, fn, plan->reps, est);
    if (c == NULL)
        return 0;
    c->realtime = true;
    if (w->hist)
        tkb_case_attach_hist(c);
    return k;
}

/* The wall-time model (seconds per repetition) is rough on purpose: the ETA
 * rescales itself with the ratio of actual to estimated time as the run goes.
 * tkb_peer_factor() is how much slower than the heap a peer's core runs. */
double tkb_peer_factor(const tkb_peer *p) {
    if (p->engine != NULL && (p->engine->caps & TK_QUEUE_CAP_TICKED) != 0)
        return 2.0;
    if (strcmp(p->kind, "baseline") == 0)
        return 5.0;
    return 1.0;
}

/* insert + cancel + expire (+ an untimed warm cycle) of n timers */
double tkb_est_phases(const tkb_peer *p, double n, double cancel_frac) {
    if (tkb_is_strawman(p))
        return 0.02 + n * n * 1.5e-9 * (cancel_frac > 0 ? cancel_frac : 0.1);
    return 0.02 + n * 0.7e-6 * tkb_peer_factor(p);
}

double tkb_est_churn(const tkb_peer *p, double n, double pairs) {
    if (tkb_is_strawman(p))
        return 0.02 + pairs * n * 1.5e-9;
    return 0.02 + n * 0.3e-6 * tkb_peer_factor(p) +
           pairs * 0.1e-6 * tkb_peer_factor(p) * (n >= 1e6 ? 4.0 : 1.0);
}
