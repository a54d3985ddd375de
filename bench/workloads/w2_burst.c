/* SPDX-License-Identifier: MIT */
/* tkbench workload `W2_burst`: N timers due at one instant: the raw expiry
 * throughput of a service (docs/workloads.md). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "harness/harness.h"

typedef struct burst_ctx {
    tkb_fire base;
    uint64_t n;
    _Atomic uint64_t fired;
    _Atomic int64_t first_ns, last_ns;
} burst_ctx;

static void burst_fire(tkb_fire *f) {
    burst_ctx *b = (burst_ctx *)f;
    uint64_t k = atomic_fetch_add_explicit(&b->fired, 1, memory_order_relaxed) + 1;
    if (k == 1)
        atomic_store_explicit(&b->first_ns, tkb_now_ns(), memory_order_relaxed);
    if (k == b->n)
        atomic_store_explicit(&b->last_ns, tkb_now_ns(), memory_order_release);
}

/* Embedded peers: a record per timer (it follows the timer's storage) that
 * points to the shared context, as a user's struct would. */
typedef struct burst_rec {
    tkb_fire base;
    burst_ctx *b;
} burst_rec;

static void burst_rec_fire(tkb_fire *f) {
    burst_fire(&((burst_rec *)f)->b->base);
}

/* W2_burst: N timers due at the same instant; callbacks per second from the
 * deadline to the last callback. */
static void w2_burst(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    size_t n = (size_t)c->arg;
    tkb_fire_slots fs = {0};
    if (ops->embedded && tkb_fire_slots_alloc(&fs, ops, n, sizeof(burst_rec)) != 0) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    while (tk_gb_keep_running(st)) {
        void *self;
        if (tkb_svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "service create failed");
            break;
        }
        burst_ctx b = {.base = {burst_fire}, .n = n};
        if (fs.storage) {
            tkb_fire_slots_prepare(&fs, ops, self, n);
            for (size_t i = 0; i < n; i++)
                *(burst_rec *)tkb_fire_slot_record(&fs, i) = (burst_rec){{burst_rec_fire}, &b};
        }
        ops->schedule(self, NULL, &tkb_noop, 0);
        tkb_sleep_ns(20 * TKB_NS_PER_MS);
        int64_t offset = tkb_w2_offset_ns(n);
        int64_t due = tkb_now_ns() + offset;
        int fails = 0;
        for (size_t i = 0; i < n; i++) {
            tkb_fire *f = fs.storage ? tkb_fire_slot_record(&fs, i) : &b.base;
            fails += tkb_schedule_for(ops, self, tkb_fire_slot_timer(&fs, i), f, due) != 0;
        }
        int64_t sched_end = tkb_now_ns();
        bool all = tkb_wait_fired(&b.fired, n, due + 60 * TKB_NS_PER_S);
        int64_t last = atomic_load_explicit(&b.last_ns, memory_order_acquire);
        c->peer->svc->destroy(self);
        if (fails || !all) {
            tk_gb_skip(st, fails ? "schedule failed" : "not every timer fired within 60 s");
            break;
        }
        if (sched_end > due)
            fprintf(stderr, "tkbench: W2_burst %s: scheduling overran the offset by %.1f ms\n",
                    c->peer->label, (double)(sched_end - due) / 1e6);
        int64_t span = last - due > 0 ? last - due : 1;
        tk_gb_set_iteration_time(st, (double)span / 1e9);
        tk_gb_counter(st, "burst_fire_rate_per_s", (double)n / ((double)span / 1e9));
        /* added: first to last callback, without the wait for the tick */
        int64_t drain = last - atomic_load(&b.first_ns);
        tk_gb_counter(st, "burst_drain_rate_per_s",
                      (double)n / ((double)(drain > 0 ? drain : 1) / 1e9));
    }
    free(fs.mem);
}

static size_t w2_burst_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                             tkb_case *cases, size_t cap) {
    size_t n = plan->sizes[0];
    return tkb_case_add_realtime(cases, cap, w, plan, p, (double)n, (int64_t)n, w2_burst,
                                 0.8 + (double)tkb_w2_offset_ns(n) / 1e9);
}

static const tkb_metric w2_burst_metrics[] = {
    {.name = "burst_fire_rate_per_s",
     .unit = "per_s",
     .better = TKB_BETTER_HIGHER,
     .label = "burst",
     .head = {2, "burst/s", "(M)", 1e6, 2},
     .field = 4},
    {.name = "burst_drain_rate_per_s",
     .unit = "per_s",
     .better = TKB_BETTER_HIGHER,
     .label = "drain"},
};

static const tkb_figure w2_burst_figures[] = {
    {"w2_burst_rate", TKB_FIG_BARS, "burst_fire_rate_per_s", "W2 burst: firing throughput",
     "W2 burst: all timers due at the same instant; callbacks per second from the deadline to the "
     "last callback (higher is better)",
     NULL, "firing rate (callbacks/s)", .yscale = TKB_SCALE_LIN},
};

const tkb_workload tkb_wl_w2_burst = {
    .name = "W2_burst",
    .group = "W2",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "N timers due at one instant: callbacks per second",
    .x = {"timers", "timers", TKB_SCALE_LOG},
    .metrics = w2_burst_metrics,
    .nmetrics = TKB_COUNT(w2_burst_metrics),
    .figures = w2_burst_figures,
    .nfigures = TKB_COUNT(w2_burst_figures),
    .child = "burst",
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {10000}, .reps = 1},
            [TKB_QUICK] = {.sizes = {1000000}, .reps = 1},
            [TKB_FULL] = {.sizes = {1000000}, .reps = 3},
        },
    .cases = w2_burst_cases,
};
