/* SPDX-License-Identifier: MIT */
/* tkbench workload `W1_exec`: schedule, cancel and churn at a fixed
 * population N through a running service, from a user thread
 * (docs/workloads.md). The plan's `count` is the hold-model pairs. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"

/* Spare timers of the hold-model loop (tkb_spare_churn): enough to cover the
 * time a wheel takes to let go of a stopped timer while it keeps up; the loop
 * reports how many it took and how long it waited once they ran out. */
#define W1_SPARE ((size_t)1 << 18)

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
    size_t ts = ops->timer_size;
    size_t spare = ops->reusable ? W1_SPARE : 0;
    tkb_fire *rec = tkb_idle_record(ops);
    int64_t *delays = tkb_uniform_deadlines(n, TKB_W1_LO, TKB_W1_HI, TKB_SEED + n);
    int64_t *next = tkb_uniform_deadlines(pairs, TKB_W1_LO, TKB_W1_HI, TKB_SEED * 5 + n);
    uint32_t *perm = tkb_permutation(n, TKB_SEED * 3 + n);
    uint32_t *victims = tkb_random_indices(pairs, n, TKB_SEED * 7 + n);
    char *timers = tkb_xmalloc_touched((n + spare) * ts);
    tkb_spare_churn sc = {0};
    bool sc_ok = spare == 0 || tkb_spare_churn_init(&sc, n, spare) == 0;
    double sched = 0, cancel = 0, churn = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        void *self;
        if (!delays || !next || !perm || !victims || !timers || !sc_ok ||
            tkb_svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "setup failed");
            break;
        }
        int fails = 0;
        /* warm-up: start the service's threads */
        ops->schedule(self, NULL, &tkb_noop, 0);
        tkb_sleep_ns(20 * TKB_NS_PER_MS);
        /* fill with cancellable timers (untimed; also warms the allocator), then
         * cancel them all in random order */
        memset(timers, 0, n * ts);
        tkb_prepare_storage(ops, self, timers, n, ts, false);
        for (size_t i = 0; i < n; i++)
            fails += ops->schedule(self, timers + i * ts, rec, delays[i]) != 0;
        if (ops->sync)
            ops->sync(self);
        tkb_settle(n);
        int64_t t2 = tkb_now_ns();
        for (size_t i = 0; i < n; i++)
            ops->cancel(self, timers + (size_t)perm[i] * ts);
        int64_t t3 = tkb_now_ns();
        if (ops->sync)
            ops->sync(self);
        tkb_settle(n); /* e.g. the wheel's tick thread releasing the cancelled tasks */
        /* embedded: the same storage is started again below; wait until idle */
        if (ops->embedded) {
            for (size_t i = 0; i < n; i++)
                ops->release(self, timers + i * ts);
            ops->sync(self);
        }
        /* schedule N without a handle (no future; embedded: the same storage) */
        int64_t t0 = tkb_now_ns();
        if (ops->embedded) {
            for (size_t i = 0; i < n; i++)
                fails += ops->schedule(self, timers + i * ts, NULL, delays[i]) != 0;
        } else {
            for (size_t i = 0; i < n; i++)
                fails += ops->schedule(self, NULL, &tkb_noop, delays[i]) != 0;
        }
        int64_t t1 = tkb_now_ns();
        if (ops->sync)
            ops->sync(self);
        ops->destroy(self); /* drops the N pending timers (untimed) */
        /* churn at population N */
        if (tkb_svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "setup failed");
            break;
        }
        memset(timers, 0, (n + spare) * ts); /* fresh storage for the new service */
        tkb_prepare_storage(ops, self, timers, n + spare, ts, false);
        for (size_t i = 0; i < n; i++)
            fails += ops->schedule(self, timers + i * ts, rec, delays[i]) != 0;
        if (ops->sync)
            ops->sync(self);
        tkb_settle(n);
        int64_t t4, t5;
        if (spare == 0) {
            t4 = tkb_now_ns();
            for (size_t k = 0; k < pairs; k++) {
                char *t = timers + (size_t)victims[k] * ts;
                ops->cancel(self, t);
                fails += ops->schedule(self, t, rec, next[k]) != 0;
            }
            t5 = tkb_now_ns();
        } else {
            tkb_spare_churn_reset(&sc);
            t4 = tkb_now_ns();
            for (size_t k = 0; k < pairs; k++)
                fails += tkb_spare_churn_pair(&sc, ops, self, timers, victims[k], rec, next[k]);
            t5 = tkb_now_ns();
        }
        tkb_cancel_all(ops, self, timers, n + sc.used);
        ops->destroy(self);
        if (fails) {
            tk_gb_skip(st, "schedule failed");
            break;
        }
        tk_gb_set_iteration_time(st, (double)((t1 - t0) + (t3 - t2) + (t5 - t4)) / 1e9);
        sched += tkb_per_op(t1 - t0, n);
        cancel += tkb_per_op(t3 - t2, n);
        churn += tkb_per_op(t5 - t4, pairs);
        runs++;
        if (spare != 0) { /* how far the peer's release latency pushed the loop */
            tk_gb_counter(st, "churn_spare_timers", (double)sc.used);
            tk_gb_counter(st, "churn_spare_wait_ms", (double)sc.wait_ns / 1e6);
        }
    }
    if (runs) {
        tk_gb_counter(st, "schedule_ns", sched / runs);
        tk_gb_counter(st, "cancel_ns", cancel / runs);
        tk_gb_counter(st, "churn_ns", churn / runs);
    }
    free(delays);
    free(next);
    free(perm);
    free(victims);
    free(timers);
    tkb_spare_churn_free(&sc);
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
     .head = {1, "exec.sch", NULL, 1, 1}},
    {.name = "cancel_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "cancel",
     .head = {1, "exec.can", NULL, 1, 1}},
    {.name = "churn_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "churn (cancel+insert)",
     .head = {1, "exec.chu", NULL, 1, 1}},
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
    .jvm = "ops",
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {TKB_W1_SIZES_SMOKE}, .reps = 1, .count = 10000},
            [TKB_QUICK] = {.sizes = {TKB_W1_SIZES_QUICK}, .reps = 1, .count = 1000000},
            [TKB_FULL] = {.sizes = {TKB_W1_SIZES_FULL}, .reps = 3, .count = 1000000},
        },
    .cases = w1_exec_cases,
};
