/* SPDX-License-Identifier: MIT */
/* tkbench workload `W7_contention`: producer threads scheduling and
 * cancelling into one service (one pool thread) for the plan's `seconds`
 * each: 1, 2, 4, ... up to twice the machine's cores, or the counts --n gives
 * (docs/workloads.md). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness/harness.h"

/* W7_contention: `threads` producers each keep 1000 timers and loop cancel +
 * schedule into one service; total operations per second. Embedded peers
 * whose stopped timers are not reusable at once re-arm spares (tkb_spare_churn),
 * each producer its own. */
/* Spare timers per producer (tkb_spare_churn), and of all producers together:
 * past 128 producers each gets its share of W7_SPARE_ALL. */
#define W7_SPARE ((size_t)1 << 17)
#define W7_SPARE_ALL ((size_t)1 << 24)

typedef struct w7_producer {
    pthread_t th;
    const tkb_svc_ops *ops;
    void *self;
    char *timers;
    size_t pop;
    int64_t *delays;
    uint32_t *victims;
    size_t nrand;
    _Atomic int *stop;
    tkb_spare_churn sc; /* used if ops->reusable */
    uint64_t ops_done;
    int fails;
} w7_producer;

static void *w7_main(void *arg) {
    w7_producer *w = arg;
    const tkb_svc_ops *ops = w->ops;
    size_t ts = ops->timer_size;
    tkb_fire *rec = tkb_idle_record(ops);
    for (size_t i = 0; i < w->pop; i++)
        w->fails += ops->schedule(w->self, w->timers + i * ts, rec, w->delays[i % w->nrand]) != 0;
    uint64_t k = 0;
    if (ops->reusable == NULL) {
        while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
            for (int j = 0; j < 64; j++, k++) {
                char *t = w->timers + (size_t)w->victims[k % w->nrand] * ts;
                ops->cancel(w->self, t);
                w->fails += ops->schedule(w->self, t, rec, w->delays[k % w->nrand]) != 0;
            }
        }
    } else {
        while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
            for (int j = 0; j < 64; j++, k++)
                w->fails +=
                    tkb_spare_churn_pair(&w->sc, ops, w->self, w->timers, w->victims[k % w->nrand],
                                         rec, w->delays[k % w->nrand]);
        }
    }
    w->ops_done = 2 * k;
    return NULL;
}

/* Makes producer i: its timers (prepared for the service), delays, victims
 * and spare timers. Returns false if something could not be allocated. */
static bool w7_producer_init(w7_producer *w, size_t i, const tkb_svc_ops *ops, void *self,
                             size_t pop, size_t nrand, size_t spare, _Atomic int *stop) {
    *w = (w7_producer){.ops = ops, .self = self, .pop = pop, .nrand = nrand, .stop = stop};
    w->timers = tkb_xmalloc_touched((pop + spare) * ops->timer_size);
    w->delays = tkb_uniform_deadlines(nrand, TKB_W1_LO, TKB_W1_HI, TKB_SEED + 31 + (uint64_t)i);
    w->victims = tkb_random_indices(nrand, pop, TKB_SEED + 37 + (uint64_t)i);
    if (w->timers != NULL)
        tkb_prepare_storage(ops, self, w->timers, pop + spare, ops->timer_size, false);
    bool sc = spare == 0 || tkb_spare_churn_init(&w->sc, pop, spare) == 0;
    if (spare != 0 && sc)
        tkb_spare_churn_reset(&w->sc);
    return sc && w->timers != NULL && w->delays != NULL && w->victims != NULL;
}

static void w7_producer_free(w7_producer *w) {
    free(w->timers);
    free(w->delays);
    free(w->victims);
    tkb_spare_churn_free(&w->sc);
}

static void w7_contention(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    size_t threads = (size_t)c->arg;
    const size_t pop = 1000, nrand = 1 << 16;
    size_t spare = ops->reusable ? W7_SPARE : 0;
    if (spare != 0 && threads > W7_SPARE_ALL / W7_SPARE)
        spare = W7_SPARE_ALL / threads;
    w7_producer *w = calloc(threads, sizeof *w);
    while (w != NULL && tk_gb_keep_running(st)) {
        void *self;
        if (tkb_svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "service create failed");
            break;
        }
        _Atomic int stop = 0;
        size_t started = 0;
        int fails = 0;
        bool setup = true;
        for (size_t i = 0; i < threads; i++)
            setup &= w7_producer_init(&w[i], i, ops, self, pop, nrand, spare, &stop);
        int64_t t0 = tkb_now_ns();
        while (setup && started < threads &&
               pthread_create(&w[started].th, NULL, w7_main, &w[started]) == 0)
            started++;
        tkb_sleep_ns((int64_t)(c->plan->seconds * 1e9));
        atomic_store(&stop, 1);
        uint64_t total = 0;
        for (size_t i = 0; i < started; i++) {
            pthread_join(w[i].th, NULL);
            total += w[i].ops_done;
            fails += w[i].fails;
        }
        int64_t t1 = tkb_now_ns();
        for (size_t i = 0; i < started; i++)
            tkb_cancel_all(ops, self, w[i].timers, pop + w[i].sc.used);
        ops->destroy(self);
        for (size_t i = 0; i < threads; i++)
            w7_producer_free(&w[i]);
        if (started != threads || fails) {
            tk_gb_skip(st, started != threads ? "thread start failed" : "schedule failed");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(t1 - t0) / 1e9);
        tk_gb_counter(st, "ops_per_s", (double)total / ((double)(t1 - t0) / 1e9));
    }
    if (w == NULL)
        tk_gb_skip(st, "out of memory");
    free(w);
}

/* The producer counts of every suite: 1, 2, 4, ... up to twice the cores
 * (at most TKB_COUNT(sizes) of them: 1 and the largest ones). */
static size_t w7_machine_sizes(size_t *sizes, size_t cap) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t top = 2 * (size_t)(cores > 0 ? cores : 1), n = 0;
    for (size_t t = 1; t <= top; t *= 2)
        n++;
    size_t skip = n > cap ? n - cap : 0, k = 0, i = 0;
    for (size_t t = 1; t <= top; t *= 2, i++)
        if (i == 0 || i > skip)
            sizes[k++] = t;
    return k;
}

static size_t w7_contention_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                                  tkb_case *cases, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < TKB_COUNT(plan->sizes) && plan->sizes[i] != 0; i++)
        k += tkb_case_add_realtime(cases + k, cap - k, w, plan, p, (double)plan->sizes[i],
                                   (int64_t)plan->sizes[i], w7_contention, plan->seconds + 0.1);
    return k;
}

static const tkb_metric w7_contention_metrics[] = {
    {.name = "ops_per_s", .unit = "per_s", .better = TKB_BETTER_HIGHER, .label = "throughput"},
};

static const tkb_figure w7_contention_figures[] = {
    {"w7_contention", TKB_FIG_LINES, "ops_per_s", "W7: throughput vs producer threads",
     "W7: producers scheduling and cancelling into one executor; total operations per second "
     "(higher is better).",
     NULL, "total throughput (ops/s)", .yscale = TKB_SCALE_LIN},
};

const tkb_workload tkb_wl_w7_contention = {
    .name = "W7_contention",
    .group = "W7",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "1, 2, 4, ... (up to 2 x cores) producer threads scheduling and cancelling",
    .x = {"producer threads", "threads", TKB_SCALE_AUTO},
    .metrics = w7_contention_metrics,
    .nmetrics = TKB_COUNT(w7_contention_metrics),
    .figures = w7_contention_figures,
    .nfigures = TKB_COUNT(w7_contention_figures),
    .sizes_from_n = true,
    .machine_sizes = w7_machine_sizes,
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1, .seconds = 0.1},
            [TKB_QUICK] = {.reps = 1, .seconds = 0.5},
            [TKB_FULL] = {.reps = 3, .seconds = 2},
        },
    .cases = w7_contention_cases,
};
