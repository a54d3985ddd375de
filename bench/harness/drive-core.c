/* SPDX-License-Identifier: MIT */
/* tkbench: random inputs and the core-level driver shared by the workloads
 * (harness.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"

void *tkb_xmalloc_touched(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p != NULL)
        memset(p, 0, bytes); /* fault every page in now, not in a timed loop */
    return p;
}

int64_t *tkb_uniform_deadlines(size_t n, int64_t lo, int64_t hi, uint64_t seed) {
    int64_t *d = malloc((n ? n : 1) * sizeof *d);
    if (d == NULL)
        return NULL;
    tkb_rng r = {seed};
    for (size_t i = 0; i < n; i++)
        d[i] = tkb_rng_range(&r, lo, hi);
    return d;
}

uint32_t *tkb_permutation(size_t n, uint64_t seed) {
    uint32_t *p = malloc((n ? n : 1) * sizeof *p);
    if (p == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint32_t)i;
    tkb_rng r = {seed};
    for (size_t i = n; i > 1; i--) {
        size_t j = tkb_rng_next(&r) % i;
        uint32_t t = p[i - 1];
        p[i - 1] = p[j];
        p[j] = t;
    }
    return p;
}

uint32_t *tkb_random_indices(size_t count, size_t n, uint64_t seed) {
    uint32_t *p = malloc((count ? count : 1) * sizeof *p);
    if (p == NULL)
        return NULL;
    tkb_rng r = {seed};
    for (size_t i = 0; i < count; i++)
        p[i] = (uint32_t)(tkb_rng_next(&r) % n);
    return p;
}

double tkb_per_op(int64_t ns, size_t n) {
    return n ? (double)ns / (double)n : 0.0;
}

void tkb_hist_counters(tk_gb_state *st, const tkb_hist *h, const char *prefix, bool full) {
    char name[64];
    static const struct {
        const char *suffix;
        double p;
    } pts[] = {{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p999", 99.9}};
    for (size_t i = 0; i < 4; i++) {
        if (!full && (i == 1 || i == 3))
            continue;
        snprintf(name, sizeof name, "%s_%s_us", prefix, pts[i].suffix);
        tk_gb_counter(st, name, (double)tkb_hist_percentile(h, pts[i].p) / 1000.0);
    }
}

int tkb_core_open(tkb_core_inst *ci, const tkb_peer *p, size_t n) {
    ci->ops = p->core;
    ci->n = n;
    ci->self = NULL;
    ci->timers = tkb_xmalloc_touched(n * ci->ops->timer_size);
    if (ci->timers == NULL || ci->ops->create(p, n, &ci->self) != 0) {
        free(ci->timers);
        ci->timers = NULL;
        return -1;
    }
    if (ci->ops->prepare)
        ci->ops->prepare(ci->self, ci->timers, n);
    return 0;
}

/* One untimed insert/cancel cycle over all timers, so the peer's own arrays
 * (heap array, libevent's min-heap) are grown and their pages faulted in
 * before a timed phase, instead of charging first touches (costly on a VM:
 * docs/bench-notes.md) to the first inserts. Skipped for the strawmen
 * (quadratic, and their cost dwarfs it). */
void tkb_core_warm(tkb_core_inst *ci, const tkb_peer *p, const int64_t *dl) {
    if (strcmp(p->kind, "strawman") == 0)
        return;
    uint32_t *seq = malloc((ci->n ? ci->n : 1) * sizeof *seq);
    if (seq == NULL)
        return;
    for (size_t i = 0; i < ci->n; i++)
        seq[i] = (uint32_t)(ci->n - 1 - i);
    ci->ops->add_range(ci->self, ci->timers, 0, ci->n, dl);
    ci->ops->cancel_list(ci->self, ci->timers, seq, ci->n);
    free(seq);
}

void tkb_core_close(tkb_core_inst *ci) {
    if (ci->self)
        ci->ops->destroy(ci->self); /* before the timers: libuv closes its handles */
    free(ci->timers);
    ci->self = NULL;
    ci->timers = NULL;
}

/* Hold-model churn at population N under GB's timer: one pair = cancel a
 * random outstanding timer + insert it again with a fresh deadline. */
void tkb_core_churn_run(tk_gb_state *st, const tkb_peer *peer, size_t n, const int64_t *init,
                        const int64_t *next, const uint32_t *victims) {
    tkb_core_inst ci;
    if (init == NULL || next == NULL || victims == NULL || tkb_core_open(&ci, peer, n) != 0) {
        tk_gb_skip(st, "setup failed (out of memory?)");
        return;
    }
    ci.ops->add_range(ci.self, ci.timers, 0, n, init);
    size_t pos = 0;
    int64_t k;
    while (tk_gb_next_batch(st, TKB_BATCH, &k)) {
        ci.ops->churn(ci.self, ci.timers, victims + pos, next + pos, (size_t)k);
        pos += (size_t)k;
    }
    tk_gb_set_items_processed(st, (int64_t)pos);
    tkb_core_close(&ci);
}

size_t tkb_churn_pairs(const tkb_plan *plan, const tkb_peer *p) {
    size_t k = plan->count;
    if (tkb_is_strawman(p) && tkb_the_run.suite->strawman_pairs < k)
        k = tkb_the_run.suite->strawman_pairs;
    return k;
}
