/* SPDX-License-Identifier: MIT */
/* tkbench workload `floor`: the machine's limits, measured in the same run as
 * the peers (docs/workloads.md): what no timer engine can beat on this
 * machine. Its `count` is the number of clock_nanosleep and hand-off samples,
 * its `seconds` how long one thread spins on the clock. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "harness/harness.h"

static void floor_clock(tk_gb_state *st, tkb_case *c) {
    (void)c;
    int64_t n, sink = 0;
    while (tk_gb_next_batch(st, TKB_BATCH, &n)) {
        for (int64_t i = 0; i < n; i++)
            sink += tkb_now_ns();
    }
    TKB_ESCAPE(sink);
}

typedef struct append_entry {
    int64_t deadline_ns;
    void *timer;
} append_entry;

static void floor_append(tk_gb_state *st, tkb_case *c) {
    (void)c;
    const size_t cap = (size_t)1 << 20; /* 16 MB: wraps, so it stays in memory */
    append_entry *a = tkb_xmalloc_touched(cap * sizeof *a);
    if (a == NULL) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    size_t pos = 0;
    int64_t n;
    while (tk_gb_next_batch(st, TKB_BATCH, &n)) {
        for (int64_t i = 0; i < n; i++) {
            a[pos & (cap - 1)] = (append_entry){(int64_t)pos, &a[pos & (cap - 1)]};
            pos++;
        }
        TKB_ESCAPE(a);
    }
    free(a);
}

/* One uncontended locked read-modify-write (on x86 a `lock xadd`) on a line
 * this thread owns: what each atomic counter, sequence number or CAS on a
 * hot path costs before any sharing. */
static void floor_rmw(tk_gb_state *st, tkb_case *c) {
    (void)c;
    _Atomic uint64_t word = 0;
    int64_t n;
    while (tk_gb_next_batch(st, TKB_BATCH, &n)) {
        for (int64_t i = 0; i < n; i++)
            atomic_fetch_add(&word, 1); /* sequentially consistent, as the engines' */
    }
    uint64_t v = atomic_load(&word);
    TKB_ESCAPE(&v);
}

/* A load that misses every cache and the TLB and waits for the one before:
 * a chain through MISS_LINES 64-byte lines (64 MB, a million 64-byte timers)
 * in one random cycle. It is the price of touching a random timer at
 * N = 1e6 when nothing else can overlap with the miss. */
#define MISS_LINES ((size_t)1 << 20)
typedef struct miss_line {
    struct miss_line *next;
    char pad[56];
} miss_line;

static void floor_miss(tk_gb_state *st, tkb_case *c) {
    (void)c;
    miss_line *a = tkb_xmalloc_touched(MISS_LINES * sizeof *a);
    uint32_t *order = tkb_permutation(MISS_LINES, TKB_SEED ^ 11);
    if (a == NULL || order == NULL) {
        tk_gb_skip(st, "out of memory");
        free(a);
        free(order);
        return;
    }
    for (size_t i = 0; i < MISS_LINES; i++)
        a[order[i]].next = &a[order[(i + 1) % MISS_LINES]];
    miss_line *p = &a[order[0]];
    free(order);
    int64_t n;
    while (tk_gb_next_batch(st, TKB_BATCH, &n)) {
        for (int64_t i = 0; i < n; i++)
            p = p->next;
    }
    TKB_ESCAPE(p);
    free(a);
}

/* What the machine takes from a thread that spins (a timer thread in its
 * last microseconds before a deadline): one thread reads the clock in a loop
 * for the plan's `seconds`, and any gap over SPIN_STALL_NS between two reads is
 * a stall (an interrupt, a preemption, a hypervisor exit). A deadline that
 * falls inside a stall is late by up to the stall's length, whatever the
 * engine does. */
#define SPIN_STALL_NS 2000
static void floor_spin(tk_gb_state *st, tkb_case *c) {
    tkb_hist h;
    if (tkb_hist_init(&h)) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    int64_t span = (int64_t)(c->plan->seconds * 1e9), spun = 0, lost = 0;
    uint64_t stalls = 0;
    while (tk_gb_keep_running(st)) {
        int64_t t0 = tkb_now_ns(), prev = t0, end = t0 + span;
        while (prev < end) {
            int64_t t = tkb_now_ns();
            if (t - prev > SPIN_STALL_NS) {
                tkb_hist_record(&h, t - prev);
                stalls++;
                lost += t - prev;
            }
            prev = t;
        }
        spun += prev - t0;
        tk_gb_set_iteration_time(st, (double)(prev - t0) / 1e9);
    }
    if (spun > 0) {
        tk_gb_counter(st, "spin_stalls_per_s", (double)stalls * 1e9 / (double)spun);
        tk_gb_counter(st, "spin_lost_pct", 100.0 * (double)lost / (double)spun);
        tk_gb_counter(st, "spin_stall_p50_us", (double)tkb_hist_percentile(&h, 50) / 1000.0);
        tk_gb_counter(st, "spin_stall_p99_us", (double)tkb_hist_percentile(&h, 99) / 1000.0);
    }
    tkb_hist_destroy(&h);
}

typedef struct handoff {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t signal_ns;
    int turn; /* 0: main's turn, 1: waiter's */
    int stop;
    tkb_hist *h;
} handoff;

static void *handoff_waiter(void *arg) {
    handoff *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->turn == 0 && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop)
            break;
        tkb_hist_record(s->h, tkb_now_ns() - s->signal_ns);
        s->turn = 0;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void floor_latency(tk_gb_state *st, tkb_case *c) {
    tkb_hist hs, hc;
    if (tkb_hist_init(&hs) || tkb_hist_init(&hc)) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    size_t samples = c->plan->count;
    while (tk_gb_keep_running(st)) {
        int64_t t0 = tkb_now_ns();
        /* clock_nanosleep(TIMER_ABSTIME) with the timer threads' slack: no timer
         * thread can wake closer to its deadline than this */
        int old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        tkb_set_timer_slack(tkb_the_run.timer_slack_ns);
        tkb_rng r = {TKB_SEED ^ 7};
        for (size_t i = 0; i < samples; i++) {
            int64_t deadline = tkb_now_ns() + tkb_rng_range(&r, 100000, 1000000);
            tkb_sleep_until_ns(deadline);
            tkb_hist_record(&hs, tkb_now_ns() - deadline);
        }
        if (old_slack >= 0)
            prctl(PR_SET_TIMERSLACK, (unsigned long)old_slack, 0, 0, 0);
        /* condvar hand-off: one thread wakes another that is blocked */
        handoff s = {.turn = 0, .h = &hc};
        pthread_mutex_init(&s.mu, NULL);
        pthread_cond_init(&s.cv, NULL);
        pthread_t th;
        if (pthread_create(&th, NULL, handoff_waiter, &s) != 0) {
            tk_gb_skip(st, "pthread_create failed");
            break;
        }
        for (size_t i = 0; i < samples; i++) {
            tkb_sleep_ns(20000); /* let the waiter block again */
            pthread_mutex_lock(&s.mu);
            s.signal_ns = tkb_now_ns();
            s.turn = 1;
            pthread_cond_broadcast(&s.cv);
            while (s.turn == 1)
                pthread_cond_wait(&s.cv, &s.mu);
            pthread_mutex_unlock(&s.mu);
        }
        pthread_mutex_lock(&s.mu);
        s.stop = 1;
        pthread_cond_broadcast(&s.cv);
        pthread_mutex_unlock(&s.mu);
        pthread_join(th, NULL);
        pthread_mutex_destroy(&s.mu);
        pthread_cond_destroy(&s.cv);
        tk_gb_set_iteration_time(st, (double)(tkb_now_ns() - t0) / 1e9);
    }
    tk_gb_counter(st, "nanosleep_late_p50_us", (double)tkb_hist_percentile(&hs, 50) / 1000.0);
    tk_gb_counter(st, "nanosleep_late_p99_us", (double)tkb_hist_percentile(&hs, 99) / 1000.0);
    tk_gb_counter(st, "condvar_handoff_p50_us", (double)tkb_hist_percentile(&hc, 50) / 1000.0);
    tk_gb_counter(st, "condvar_handoff_p99_us", (double)tkb_hist_percentile(&hc, 99) / 1000.0);
    tkb_hist_destroy(&hs);
    tkb_hist_destroy(&hc);
}

/* The floor's cases, in run order. A timed one is a batched loop whose time
 * per iteration (GB's real time) is its metric, `name`; the others
 * (repeated reps_long times, as the workloads that sleep) set counters. */
static const struct {
    tkb_case_fn fn;
    const char *name; /* the case is floor/<name> */
    bool timed;
} floor_cases[] = {
    {floor_clock, "clock_ns", true},    {floor_append, "array_append_ns", true},
    {floor_rmw, "locked_rmw_ns", true}, {floor_miss, "cold_miss_ns", true},
    {floor_spin, "spin", false},        {floor_latency, "latency", false},
};

static size_t floor_builder(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                            tkb_case *cases, size_t cap) {
    size_t k = 0;
    if (strcmp(p->kind, "floor") != 0)
        return 0;
    for (size_t i = 0; i < TKB_COUNT(floor_cases); i++) {
        tkb_case_fn fn = floor_cases[i].fn;
        double est = fn == floor_spin      ? plan->seconds + 0.1
                     : fn == floor_latency ? (double)plan->count * 0.0008
                     : fn == floor_miss    ? 1.0
                                           : 0.5;
        bool timed = floor_cases[i].timed;
        tkb_case *c = tkb_case_add(cases, cap, &k, w, plan, p, 1, 0, fn,
                                   timed ? plan->reps : plan->reps_long, est);
        if (c == NULL)
            continue;
        c->time_metric = timed ? floor_cases[i].name : NULL;
        c->realtime = !timed;
        snprintf(c->name, sizeof c->name, "%s/%s", w->name, floor_cases[i].name);
    }
    return k;
}

#define FLOOR_HEAD(h, u, p)                                                                        \
    { .block = 1, .head = h, .head_unit = u, .prec = p }
static const tkb_metric floor_metrics[] = {
    {.name = "clock_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "clock read",
     .head = FLOOR_HEAD("clock", "ns", 1)},
    {.name = "array_append_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "array append",
     .head = FLOOR_HEAD("array append", "ns", 2)},
    {.name = "nanosleep_late_p50_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "nanosleep late p50",
     .pct = 50,
     .head = FLOOR_HEAD("nanosleep late p50", "us", 1)},
    {.name = "nanosleep_late_p99_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "nanosleep late p99",
     .pct = 99,
     .head = FLOOR_HEAD("p99", "us", 1)},
    {.name = "condvar_handoff_p50_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "condvar hand-off p50",
     .head = FLOOR_HEAD("condvar hand-off p50", "us", 1)},
    {.name = "condvar_handoff_p99_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "condvar hand-off p99",
     .head = FLOOR_HEAD("p99", "us", 1)},
    {.name = "locked_rmw_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "locked RMW",
     .head = FLOOR_HEAD("locked RMW", "ns", 1)},
    {.name = "cold_miss_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "cold miss",
     .head = FLOOR_HEAD("cold miss", "ns", 0)},
    {.name = "spin_stalls_per_s",
     .unit = "per_s",
     .better = TKB_BETTER_LOWER,
     .label = "spin stalls",
     .head = FLOOR_HEAD("spin stalls", "/s", 0)},
    {.name = "spin_lost_pct", .unit = "pct", .better = TKB_BETTER_LOWER, .label = "spin time lost"},
    {.name = "spin_stall_p50_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "spin stall p50",
     .head = FLOOR_HEAD("stall p50", "us", 1)},
    {.name = "spin_stall_p99_us",
     .unit = "us",
     .better = TKB_BETTER_LOWER,
     .label = "spin stall p99",
     .head = FLOOR_HEAD("p99", "us", 1)},
};

const tkb_workload tkb_wl_floor = {
    .name = "floor",
    .group = "floor",
    .level = TKB_LEVEL_MACHINE,
    .summary = "the machine's limits: clock read, clock_nanosleep lateness, condvar hand-off, "
               "array append, locked RMW, cold miss, spin stalls",
    .x = {"", "n", TKB_SCALE_LIN},
    .metrics = floor_metrics,
    .nmetrics = TKB_COUNT(floor_metrics),
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1, .reps_long = 1, .count = 100, .seconds = 0.05},
            [TKB_QUICK] = {.reps = 5, .reps_long = 1, .count = 1000, .seconds = 1},
            [TKB_FULL] = {.reps = 5, .reps_long = 3, .count = 5000, .seconds = 2},
        },
    .cases = floor_builder,
};
