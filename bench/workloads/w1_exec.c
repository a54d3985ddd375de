/* SPDX-License-Identifier: MIT */
/* tkbench workload `W1_exec`: schedule, cancel and churn at a fixed
 * population N through a running service, from a user thread
 * (docs/workloads.md). The plan's `count` is the hold-model pairs. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"

extern const tkb_workload tkb_wl_w1_core;

/* Spare timers of the hold-model loop (tkb_spare_churn): enough to cover the
 * time a wheel takes to let go of a stopped timer while it keeps up; the loop
 * reports how many it took and how long it waited once they ran out. */
#define W1_SPARE ((size_t)1 << 18)

/* One W1_exec case's inputs and storage, made before the first repetition. */
typedef struct w1x {
    const tkb_peer *peer;
    const tkb_svc_ops *ops;
    size_t n, pairs, ts, spare;
    tkb_fire *rec;
    int64_t *delays, *next; /* population deadlines; the churn's new ones */
    uint32_t *perm;         /* the cancel order */
    uint32_t *victims;      /* the churn's timers */
    char *timers;           /* n + spare timers' storage */
    tkb_spare_churn sc;
    int fails; /* schedules that failed */
} w1x;

/* Schedules timers[0..n) with their handles and the population's deadlines
 * (untimed), and waits until the service has them. */
static void fill(w1x *x, void *self) {
    for (size_t i = 0; i < x->n; i++)
        x->fails += x->ops->schedule(self, x->timers + i * x->ts, x->rec, x->delays[i]) != 0;
    if (x->ops->sync)
        x->ops->sync(self);
    tkb_settle(x->n);
}

/* One service: a warm-up, the population filled, then cancel N in random
 * order (timed) and schedule N without a handle (timed; embedded: the same
 * storage again, once the service let go of it). Returns 0, or -1 if the
 * service could not be made. */
static int cancel_schedule(w1x *x, int64_t *cancel_ns, int64_t *sched_ns) {
    const tkb_svc_ops *ops = x->ops;
    size_t n = x->n, ts = x->ts;
    void *self;
    if (tkb_svc_open(x->peer, 1, &self))
        return -1;
    ops->schedule(self, NULL, &tkb_noop, 0); /* warm-up: start the service's threads */
    tkb_sleep_ns(20 * TKB_NS_PER_MS);
    memset(x->timers, 0, n * ts);
    tkb_prepare_storage(ops, self, x->timers, n, ts, false);
    fill(x, self); /* also warms the allocator */
    int64_t t0 = tkb_now_ns();
    for (size_t i = 0; i < n; i++)
        ops->cancel(self, x->timers + (size_t)x->perm[i] * ts);
    *cancel_ns = tkb_now_ns() - t0;
    if (ops->sync)
        ops->sync(self);
    tkb_settle(n);       /* e.g. the wheel's tick thread releasing the cancelled tasks */
    if (ops->embedded) { /* the same storage is started again: wait until idle */
        for (size_t i = 0; i < n; i++)
            ops->release(self, x->timers + i * ts);
        ops->sync(self);
    }
    t0 = tkb_now_ns();
    if (ops->embedded) {
        for (size_t i = 0; i < n; i++)
            x->fails += ops->schedule(self, x->timers + i * ts, NULL, x->delays[i]) != 0;
    } else {
        for (size_t i = 0; i < n; i++)
            x->fails += ops->schedule(self, NULL, &tkb_noop, x->delays[i]) != 0;
    }
    *sched_ns = tkb_now_ns() - t0;
    if (ops->sync)
        ops->sync(self);
    ops->destroy(self); /* drops the N pending timers (untimed) */
    return 0;
}

/* A fresh service filled to population N, then the churn pairs (timed):
 * cancel a timer and schedule it again, or a spare one where the peer still
 * holds it (tkb_spare_churn). Returns 0, or -1 if the service could not be
 * made. */
static int churn(w1x *x, int64_t *churn_ns) {
    const tkb_svc_ops *ops = x->ops;
    void *self;
    if (tkb_svc_open(x->peer, 1, &self))
        return -1;
    memset(x->timers, 0, (x->n + x->spare) * x->ts); /* fresh storage for the new service */
    tkb_prepare_storage(ops, self, x->timers, x->n + x->spare, x->ts, false);
    fill(x, self);
    int64_t t0;
    if (x->spare == 0) {
        t0 = tkb_now_ns();
        for (size_t k = 0; k < x->pairs; k++) {
            char *t = x->timers + (size_t)x->victims[k] * x->ts;
            ops->cancel(self, t);
            x->fails += ops->schedule(self, t, x->rec, x->next[k]) != 0;
        }
    } else {
        tkb_spare_churn_reset(&x->sc);
        t0 = tkb_now_ns();
        for (size_t k = 0; k < x->pairs; k++)
            x->fails += tkb_spare_churn_pair(&x->sc, ops, self, x->timers, x->victims[k], x->rec,
                                             x->next[k]);
    }
    *churn_ns = tkb_now_ns() - t0;
    tkb_cancel_all(ops, self, x->timers, x->n + x->sc.used);
    ops->destroy(self);
    return 0;
}

/* W1_exec: cancel N (random order; timers scheduled with the handle a cancel
 * needs, untimed), schedule N (no handle: no future), churn pairs at
 * population N. Cost on the calling thread; peers that hand work to a thread
 * of their own (the wheel's tick thread, libuv's loop) do part of it there.
 * Embedded peers (tk_timer) have no timer without storage: their schedule
 * phase starts the caller's timers again (released and idle by then, untimed),
 * which is their only way and allocates nothing either; their churn re-arms
 * a spare timer where the peer still holds the cancelled one (tkb_spare_churn). */
static void w1_exec(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    size_t n = (size_t)c->arg, pairs = c->plan->count;
    w1x x = {.peer = c->peer, .ops = ops, .n = n, .pairs = pairs, .ts = ops->timer_size};
    x.spare = ops->reusable ? W1_SPARE : 0;
    x.rec = tkb_idle_record(ops);
    x.delays = tkb_uniform_deadlines(n, TKB_W1_LO, TKB_W1_HI, TKB_SEED + n);
    x.next = tkb_uniform_deadlines(pairs, TKB_W1_LO, TKB_W1_HI, TKB_SEED * 5 + n);
    x.perm = tkb_permutation(n, TKB_SEED * 3 + n);
    x.victims = tkb_random_indices(pairs, n, TKB_SEED * 7 + n);
    x.timers = tkb_xmalloc_touched((n + x.spare) * x.ts);
    bool ok = x.delays && x.next && x.perm && x.victims && x.timers &&
              (x.spare == 0 || tkb_spare_churn_init(&x.sc, n, x.spare) == 0);
    double sched = 0, cancel = 0, churned = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        int64_t t_cancel, t_sched, t_churn;
        if (!ok || cancel_schedule(&x, &t_cancel, &t_sched) != 0 || churn(&x, &t_churn) != 0) {
            tk_gb_skip(st, "setup failed");
            break;
        }
        if (x.fails) {
            tk_gb_skip(st, "schedule failed");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(t_sched + t_cancel + t_churn) / 1e9);
        sched += tkb_per_op(t_sched, n);
        cancel += tkb_per_op(t_cancel, n);
        churned += tkb_per_op(t_churn, pairs);
        runs++;
        if (x.spare != 0) { /* how far the peer's release latency pushed the loop */
            tk_gb_counter(st, "churn_spare_timers", (double)x.sc.used);
            tk_gb_counter(st, "churn_spare_wait_ms", (double)x.sc.wait_ns / 1e6);
        }
    }
    if (runs) {
        tk_gb_counter(st, "schedule_ns", sched / runs);
        tk_gb_counter(st, "cancel_ns", cancel / runs);
        tk_gb_counter(st, "churn_ns", churned / runs);
    }
    free(x.delays);
    free(x.next);
    free(x.perm);
    free(x.victims);
    free(x.timers);
    tkb_spare_churn_free(&x.sc);
}

static size_t w1_exec_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                            tkb_case *cases, size_t cap) {
    size_t k = 0;
    if (p->svc == NULL)
        return 0;
    for (size_t i = 0; i < TKB_COUNT(plan->sizes) && plan->sizes[i] != 0; i++) {
        size_t n = plan->sizes[i];
        if (n > 2000000 && strcmp(p->kind, "engine") != 0)
            continue;
        tkb_case_add(cases, cap, &k, w, plan, p, (double)n, (int64_t)n, w1_exec, plan->reps,
                     0.1 + (double)(5 * n + 2 * plan->count) * 1.3e-6 *
                               (tkb_peer_factor(p) > 1 ? 2 : 1));
    }
    return k;
}

static const tkb_metric w1_exec_metrics[] = {
    {.name = "schedule_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "insert",
     .head = {1, "exec.sch", NULL, 1, 1},
     .field = 1},
    {.name = "cancel_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "cancel",
     .head = {1, "exec.can", NULL, 1, 1},
     .field = 2},
    {.name = "churn_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "churn (cancel+insert)",
     .head = {1, "exec.chu", NULL, 1, 1},
     .field = 3},
    {.name = "churn_spare_timers",
     .unit = "count",
     .better = TKB_BETTER_LOWER,
     .label = "churn spare timers taken"},
    {.name = "churn_spare_wait_ms",
     .unit = "ms",
     .better = TKB_BETTER_LOWER,
     .label = "churn wait for a spare"},
};

#define W1_EXEC_WHAT "W1 executor level (user thread into a running executor): "
static const tkb_figure w1_exec_figures[] = {
    {"w1_exec_schedule", TKB_FIG_LINES, "schedule_ns", "W1_exec: insert (schedule)",
     W1_EXEC_WHAT "insert (schedule) cost per operation against the population N.", NULL,
     "time per insert", .yscale = TKB_SCALE_LOG},
    {"w1_exec_cancel", TKB_FIG_LINES, "cancel_ns", "W1_exec: cancel",
     W1_EXEC_WHAT "cancel cost per operation against the population N.", NULL, "time per cancel",
     .yscale = TKB_SCALE_LOG},
    {"w1_exec_churn", TKB_FIG_LINES, "churn_ns", "W1_exec: churn (cancel one, insert one)",
     W1_EXEC_WHAT "churn (cancel one, insert one) cost per operation against the population N.",
     NULL, "time per cancel+insert pair", .yscale = TKB_SCALE_LOG},
    {"w1_exec_overview", TKB_FIG_PANELS, "schedule_ns,cancel_ns,churn_ns",
     "W1 executor: cost per operation",
     "W1 executor level, all operations side by side (double column).", "N", "time per operation",
     .yscale = TKB_SCALE_LOG, .wide = true},
};

const tkb_workload tkb_wl_w1_exec = {
    .name = "W1_exec",
    .group = "W1",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "schedule / cancel / churn at population N through a running service",
    .x = {"timers outstanding, N", "N", TKB_SCALE_LOG},
    .metrics = w1_exec_metrics,
    .nmetrics = TKB_COUNT(w1_exec_metrics),
    .figures = w1_exec_figures,
    .nfigures = TKB_COUNT(w1_exec_figures),
    .sizes_from_n = true,
    /* what the executor adds to the engine's core, per operation; the aim
     * (issue 26) for schedule and cancel */
    .diff = {&tkb_wl_w1_core,
             "executor overhead",
             {{"schedule_ns", "schedule_ns", 40},
              {"cancel_ns", "cancel_ns", 40},
              {"churn_ns", "churn_ns", 0}}},
    .child = "ops",
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {TKB_W1_SIZES_SMOKE}, .reps = 1, .count = 10000},
            [TKB_QUICK] = {.sizes = {TKB_W1_SIZES_QUICK}, .reps = 1, .count = 1000000},
            [TKB_FULL] = {.sizes = {TKB_W1_SIZES_FULL}, .reps = 3, .count = 1000000},
        },
    .cases = w1_exec_cases,
};
