/* tkbench: the workloads of ../shared/WORKLOADS.md as Google Benchmark bodies.
 *
 * Timing rules (the harness must not hide what it measures):
 * - random numbers (fixed seed) and timer objects are made before the timed
 *   region, and the timer memory is touched beforehand (no page faults inside);
 * - a phase (insert N, cancel N, expire N) is one batch: the clock is read once
 *   before and once after it, and manual time reports it;
 * - hold-model loops (churn) run under GB's own timer through the batched
 *   keep-running loop (tk_gb_next_batch), one C/C++ crossing per 4096 pairs;
 * - nothing pauses the timer per operation.
 * Latency tails come from tkb_hist (per operation), not from GB's statistics
 * (which are across repetitions). */
#define _GNU_SOURCE
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tkbench.h"

#define BATCH 4096
#define NS_PER_S INT64_C(1000000000)
#define NS_PER_MS INT64_C(1000000)

const tkb_workload_info tkb_workloads[] = {
    {"floor", "machine",
     "clock read, clock_nanosleep lateness, condvar hand-off, array append, locked RMW, cold miss, "
     "spin stalls"},
    {"W1_core", "core", "insert / cancel / churn / expire at population N (delays 10-20 s)"},
    {"W1_exec", "executor", "schedule / cancel / churn at population N through a running service"},
    {"W6_cancel_ratio", "core", "0/50/90/99 % cancelled before firing: ns per timer end to end"},
    {"W6_delay_range", "core",
     "delays of 0.1x..100x one wheel revolution: schedule and expiry cost"},
    {"W6_dist", "core", "churn with uniform/exponential/bimodal/constant/monotonic deadlines"},
    {"W7_contention", "executor", "1, 2, 4 producer threads scheduling and cancelling"},
    {"W2_burst", "executor", "N timers due at one instant: callbacks per second"},
    {"W2_spread", "executor", "N timers due uniformly over 1 s: wall time and lateness"},
    {"W3_latency", "executor", "10k timers, delays 1-100 ms, over ~5 s: lateness distribution"},
    {"W4_idle", "executor", "one timer 1 h ahead, then idle: CPU and wake-ups"},
    {"W5_memory", "executor", "RSS per outstanding timer; RSS left after cancelling all"},
};
const size_t tkb_workload_count = sizeof tkb_workloads / sizeof tkb_workloads[0];

/* ---- helpers ----------------------------------------------------------------- */
static void *xmalloc_touched(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p != NULL)
        memset(p, 0, bytes); /* fault every page in now, not in a timed loop */
    return p;
}

static int64_t *uniform_deadlines(size_t n, int64_t lo, int64_t hi, uint64_t seed) {
    int64_t *d = malloc((n ? n : 1) * sizeof *d);
    if (d == NULL)
        return NULL;
    tkb_rng r = {seed};
    for (size_t i = 0; i < n; i++)
        d[i] = tkb_rng_range(&r, lo, hi);
    return d;
}

static uint32_t *permutation(size_t n, uint64_t seed) {
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

static uint32_t *random_indices(size_t count, size_t n, uint64_t seed) {
    uint32_t *p = malloc((count ? count : 1) * sizeof *p);
    if (p == NULL)
        return NULL;
    tkb_rng r = {seed};
    for (size_t i = 0; i < count; i++)
        p[i] = (uint32_t)(tkb_rng_next(&r) % n);
    return p;
}

static double per_op(int64_t ns, size_t n) {
    return n ? (double)ns / (double)n : 0.0;
}

static void hist_counters(tk_gb_state *st, const tkb_hist *h, const char *prefix, bool full) {
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

/* ---- floor ------------------------------------------------------------------- */
static void floor_clock(tk_gb_state *st, tkb_case *c) {
    (void)c;
    int64_t n, sink = 0;
    while (tk_gb_next_batch(st, BATCH, &n)) {
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
    append_entry *a = xmalloc_touched(cap * sizeof *a);
    if (a == NULL) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    size_t pos = 0;
    int64_t n;
    while (tk_gb_next_batch(st, BATCH, &n)) {
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
    while (tk_gb_next_batch(st, BATCH, &n)) {
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
    miss_line *a = xmalloc_touched(MISS_LINES * sizeof *a);
    uint32_t *order = permutation(MISS_LINES, TKB_SEED ^ 11);
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
    while (tk_gb_next_batch(st, BATCH, &n)) {
        for (int64_t i = 0; i < n; i++)
            p = p->next;
    }
    TKB_ESCAPE(p);
    free(a);
}

/* What the machine takes from a thread that spins (a timer thread in its
 * last microseconds before a deadline): one thread reads the clock in a loop
 * for floor_spin_seconds, and any gap over SPIN_STALL_NS between two reads is
 * a stall (an interrupt, a preemption, a hypervisor exit). A deadline that
 * falls inside a stall is late by up to the stall's length, whatever the
 * engine does. */
#define SPIN_STALL_NS 2000
static void floor_spin(tk_gb_state *st, tkb_case *c) {
    (void)c;
    tkb_hist h;
    if (tkb_hist_init(&h)) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    int64_t span = (int64_t)(tkb_cfg.floor_spin_seconds * 1e9), spun = 0, lost = 0;
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
    (void)c;
    tkb_hist hs, hc;
    if (tkb_hist_init(&hs) || tkb_hist_init(&hc)) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    size_t samples = tkb_cfg.floor_samples;
    while (tk_gb_keep_running(st)) {
        int64_t t0 = tkb_now_ns();
        /* clock_nanosleep(TIMER_ABSTIME) with the timer threads' slack: no timer
         * thread can wake closer to its deadline than this */
        int old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        tkb_set_timer_slack(tkb_cfg.timer_slack_ns);
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

/* ---- core level ----------------------------------------------------------------- */
typedef struct core_inst {
    const tkb_core_ops *ops;
    void *self;
    char *timers;
    size_t n;
} core_inst;

static int core_open(core_inst *ci, const tkb_peer *p, size_t n) {
    ci->ops = p->core;
    ci->n = n;
    ci->self = NULL;
    ci->timers = xmalloc_touched(n * ci->ops->timer_size);
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
 * before a timed phase: on this kind of VM a first touch costs tens of
 * microseconds per page, which would otherwise be charged to the first
 * inserts. Skipped for the strawmen (quadratic, and their cost dwarfs it). */
static void core_warm(core_inst *ci, const tkb_peer *p, const int64_t *dl) {
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

static void core_close(core_inst *ci) {
    if (ci->self)
        ci->ops->destroy(ci->self); /* before the timers: libuv closes its handles */
    free(ci->timers);
    ci->self = NULL;
    ci->timers = NULL;
}

static const int64_t W1_LO = 10 * NS_PER_S, W1_HI = 20 * NS_PER_S;

/* W1_core: insert N, cancel N (random order), insert N again and expire them. */
static void w1_core_phases(tk_gb_state *st, tkb_case *c) {
    size_t n = (size_t)c->arg;
    int64_t *dl = uniform_deadlines(n, W1_LO, W1_HI, TKB_SEED + n);
    uint32_t *perm = permutation(n, TKB_SEED * 3 + n);
    double sched = 0, cancel = 0, expire = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        core_inst ci;
        if (dl == NULL || perm == NULL || core_open(&ci, c->peer, n) != 0) {
            tk_gb_skip(st, "setup failed (out of memory?)");
            break;
        }
        core_warm(&ci, c->peer, dl);
        int64_t t0 = tkb_now_ns();
        ci.ops->add_range(ci.self, ci.timers, 0, n, dl);
        int64_t t1 = tkb_now_ns();
        ci.ops->cancel_list(ci.self, ci.timers, perm, n);
        int64_t t2 = tkb_now_ns();
        int64_t timed = t2 - t0;
        sched += per_op(t1 - t0, n);
        cancel += per_op(t2 - t1, n);
        if (ci.ops->can_expire) {
            ci.ops->add_range(ci.self, ci.timers, 0, n, dl);
            int64_t t3 = tkb_now_ns();
            size_t got = ci.ops->expire_all(ci.self, W1_HI);
            int64_t t4 = tkb_now_ns();
            if (got != n) {
                core_close(&ci);
                tk_gb_skip(st, "expire_all did not expire every timer");
                break;
            }
            expire += per_op(t4 - t3, n);
            timed += t4 - t3;
        }
        core_close(&ci);
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

/* Hold-model churn at population N under GB's timer: one pair = cancel a
 * random outstanding timer + insert it again with a fresh deadline. */
static void core_churn_run(tk_gb_state *st, const tkb_peer *peer, size_t n, const int64_t *init,
                           const int64_t *next, const uint32_t *victims) {
    core_inst ci;
    if (init == NULL || next == NULL || victims == NULL || core_open(&ci, peer, n) != 0) {
        tk_gb_skip(st, "setup failed (out of memory?)");
        return;
    }
    ci.ops->add_range(ci.self, ci.timers, 0, n, init);
    size_t pos = 0;
    int64_t k;
    while (tk_gb_next_batch(st, BATCH, &k)) {
        ci.ops->churn(ci.self, ci.timers, victims + pos, next + pos, (size_t)k);
        pos += (size_t)k;
    }
    tk_gb_set_items_processed(st, (int64_t)pos);
    core_close(&ci);
}

static size_t churn_pairs_for(const tkb_peer *p) {
    return strcmp(p->kind, "strawman") == 0 ? tkb_cfg.strawman_churn_pairs : tkb_cfg.churn_pairs;
}

/* W6_dist pairs (W6 fixes no count; fewer in quick to keep it quick) */
static size_t dist_pairs_for(const tkb_peer *p) {
    size_t k = churn_pairs_for(p);
    return k < tkb_cfg.dist_pairs || tkb_cfg.dist_pairs == 0 ? k : tkb_cfg.dist_pairs;
}

static void w1_core_churn(tk_gb_state *st, tkb_case *c) {
    size_t n = (size_t)c->arg, pairs = (size_t)tk_gb_max_iterations(st);
    int64_t *init = uniform_deadlines(n, W1_LO, W1_HI, TKB_SEED + n);
    int64_t *next = uniform_deadlines(pairs, W1_LO, W1_HI, TKB_SEED * 5 + n);
    uint32_t *victims = random_indices(pairs, n, TKB_SEED * 7 + n);
    core_churn_run(st, c->peer, n, init, next, victims);
    free(init);
    free(next);
    free(victims);
}

/* W6_dist: the same churn, deadlines from other distributions (virtual now 0). */
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
            d[i] = tkb_rng_range(&r, W1_LO, W1_HI);
            break;
        case DIST_EXPONENTIAL: { /* mean 10 s, at least 1 ms */
            double x = -log(1.0 - tkb_rng_unit(&r)) * 10.0 * (double)NS_PER_S;
            d[i] = x < (double)NS_PER_MS ? NS_PER_MS : (x > 1e12 ? (int64_t)1e12 : (int64_t)x);
            break;
        }
        case DIST_BIMODAL: /* 90 % short [1 ms, 100 ms], 10 % long [10 s, 60 s] */
            d[i] = tkb_rng_next(&r) % 10 != 0 ? tkb_rng_range(&r, NS_PER_MS, 100 * NS_PER_MS)
                                              : tkb_rng_range(&r, 10 * NS_PER_S, 60 * NS_PER_S);
            break;
        case DIST_CONSTANT: /* every deadline equal: FIFO by sequence */
            d[i] = 15 * NS_PER_S;
            break;
        default: /* monotonic: each new deadline after every earlier one (1 us apart) */
            d[i] = W1_LO + (first_index + (int64_t)i) * 1000;
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
    uint32_t *victims = random_indices(pairs, n, TKB_SEED * 7 + n);
    core_churn_run(st, c->peer, n, init, next, victims);
    free(init);
    free(next);
    free(victims);
}

/* W6_cancel_ratio: insert N (delays 1 ms..1 s), cancel pct % of them, expire
 * the rest; ns per timer end to end. */
static void w6_cancel_ratio(tk_gb_state *st, tkb_case *c) {
    size_t n = tkb_cfg.w6_n, k = n * (size_t)c->arg / 100;
    int64_t *dl = uniform_deadlines(n, NS_PER_MS, NS_PER_S, TKB_SEED + 13);
    uint32_t *perm = permutation(n, TKB_SEED + 17);
    double total = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        core_inst ci;
        if (dl == NULL || perm == NULL || core_open(&ci, c->peer, n) != 0) {
            tk_gb_skip(st, "setup failed (out of memory?)");
            break;
        }
        core_warm(&ci, c->peer, dl);
        int64_t t0 = tkb_now_ns();
        ci.ops->add_range(ci.self, ci.timers, 0, n, dl);
        ci.ops->cancel_list(ci.self, ci.timers, perm, k);
        size_t got = ci.ops->expire_all(ci.self, NS_PER_S);
        int64_t t1 = tkb_now_ns();
        core_close(&ci);
        if (got != n - k) {
            tk_gb_skip(st, "expired count mismatch");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(t1 - t0) / 1e9);
        total += per_op(t1 - t0, n);
        runs++;
    }
    if (runs)
        tk_gb_counter(st, "ns_per_timer", total / runs);
    free(dl);
    free(perm);
}

/* One revolution of the peer's wheel; for non-wheels, of wheel-1ms-1024. */
static int64_t wheel_span_ns(const tkb_peer *p) {
    return p->tick_ns > 0 ? p->tick_ns * (int64_t)p->ticks : NS_PER_MS * 1024;
}

/* W6_delay_range: delays uniform in (0, m x span]; schedule and expiry cost. */
static void w6_delay_range(tk_gb_state *st, tkb_case *c) {
    size_t n = tkb_cfg.w6_n;
    int64_t hi = (int64_t)((double)wheel_span_ns(c->peer) * (double)c->arg / 10.0);
    int64_t *dl = uniform_deadlines(n, 1, hi, TKB_SEED + 19);
    double sched = 0, expire = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        core_inst ci;
        if (dl == NULL || core_open(&ci, c->peer, n) != 0) {
            tk_gb_skip(st, "setup failed (out of memory?)");
            break;
        }
        core_warm(&ci, c->peer, dl);
        int64_t t0 = tkb_now_ns();
        ci.ops->add_range(ci.self, ci.timers, 0, n, dl);
        int64_t t1 = tkb_now_ns();
        size_t got = ci.ops->expire_all(ci.self, hi);
        int64_t t2 = tkb_now_ns();
        core_close(&ci);
        if (got != n) {
            tk_gb_skip(st, "expired count mismatch");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(t2 - t0) / 1e9);
        sched += per_op(t1 - t0, n);
        expire += per_op(t2 - t1, n);
        runs++;
    }
    if (runs) {
        tk_gb_counter(st, "schedule_ns", sched / runs);
        tk_gb_counter(st, "expire_ns", expire / runs);
    }
    free(dl);
}

/* ---- executor level ----------------------------------------------------------------- */
static int svc_open(const tkb_peer *p, unsigned threads, void **self) {
    tkb_svc_opts o = {.timer_slack_ns = tkb_cfg.timer_slack_ns, .threads = threads};
    return p->svc->create(p, &o, self);
}

static void noop_fire(tkb_fire *f) {
    TKB_ESCAPE(f);
}
static tkb_fire noop = {noop_fire};

/* Lets a service's own threads finish the asynchronous part of the previous
 * phase (hand-off queues, deferred releases) so that phases do not overlap:
 * 20 ms + 200 ns per timer. */
static void settle(size_t n) {
    tkb_sleep_ns(20 * NS_PER_MS + (int64_t)n * 200);
}

/* Cancels timers[0..n) and releases their storage: after it returns the
 * storage may be freed (release() + sync(): the embedded peers wait there
 * until every stopped tk_timer is idle). */
static void cancel_all(const tkb_svc_ops *ops, void *self, char *timers, size_t n) {
    for (size_t i = 0; i < n; i++) {
        ops->cancel(self, timers + i * ops->timer_size);
        if (ops->release)
            ops->release(self, timers + i * ops->timer_size);
    }
    if (ops->sync)
        ops->sync(self);
}

/* The record that timers get in workloads where nothing fires (W1, W4, W5,
 * W7): the shared no-op, or none for embedded peers, whose storage is then
 * the whole timer (tkb_svc_ops.embedded). */
static tkb_fire *idle_record(const tkb_svc_ops *ops) {
    return ops->embedded ? NULL : &noop;
}

/* Embedded peers: zeroes `count` timers of storage (untimed) and lets the
 * peer initialise them once, as a user does when it makes its structs.
 * Nothing for the other peers. */
static void prepare_storage(const tkb_svc_ops *ops, void *self, char *timers, size_t count,
                            size_t stride, bool records) {
    if (ops->prepare == NULL)
        return;
    memset(timers, 0, count * stride);
    ops->prepare(self, timers, count, stride, records);
}

/* Records for workloads whose timers fire (W2, W3), one per timer. For the
 * embedded peers each record follows its timer's storage in one allocation,
 * as a user's struct holds its tk_timer, and timers are scheduled with that
 * storage; for every other peer this is the plain array of records it always
 * was, and timers are scheduled without storage. */
typedef struct fire_slots {
    char *mem;
    size_t stride;  /* bytes from one record (or storage + record) to the next */
    size_t rec_off; /* the record's offset in its slot */
    bool storage;
} fire_slots;

static int fire_slots_alloc(fire_slots *fs, const tkb_svc_ops *ops, size_t n, size_t rec_size) {
    fs->storage = ops->embedded;
    fs->stride = fs->storage ? tkb_svc_stride(ops, rec_size) : rec_size;
    fs->rec_off = fs->storage ? tkb_svc_record_offset(ops) : 0;
    fs->mem = xmalloc_touched(n * fs->stride);
    return fs->mem != NULL ? 0 : -1;
}

static inline void *fire_slot_record(const fire_slots *fs, size_t i) {
    return fs->mem + i * fs->stride + fs->rec_off;
}

static inline void *fire_slot_timer(const fire_slots *fs, size_t i) {
    return fs->storage ? fs->mem + i * fs->stride : NULL;
}

/* Before each service: embedded storage zeroed and initialised (untimed). */
static void fire_slots_prepare(fire_slots *fs, const tkb_svc_ops *ops, void *self, size_t n) {
    if (fs->storage)
        prepare_storage(ops, self, fs->mem, n, fs->stride, true);
}

/* Hold-model loops for peers whose cancelled storage cannot take a new
 * schedule() at once (tkb_svc_ops.reusable: a stopped tk_timer that the
 * wheel's tick thread still holds until its next pass). A user of such a
 * timer re-arms another one, so each pair here cancels slot v's timer, queues
 * its storage (FIFO), and re-arms slot v with the oldest queued storage if
 * the peer has let go of it, else with a fresh timer from `spare` extra ones
 * (prepared and touched beforehand, untimed), else (spares all in use) waits
 * for the oldest, inside the timed loop. The working set thus grows only as
 * far as the peer's release latency forces it; the wait, if any, is the
 * user's. Peers without `reusable` run the plain loop (same storage again). */
typedef struct spare_churn {
    size_t n, spare, used; /* used: spare timers taken so far */
    int64_t wait_ns;       /* time spent waiting for the oldest (spares all in use) */
    uint32_t *slot;        /* slot -> storage index */
    uint32_t *fifo;        /* cancelled storage indices, oldest at head */
    size_t mask, head, count;
} spare_churn;

static int spare_churn_init(spare_churn *sc, size_t n, size_t spare) {
    size_t cap = 1;
    while (cap < spare + 1)
        cap <<= 1;
    *sc = (spare_churn){.n = n, .spare = spare, .mask = cap - 1};
    sc->slot = malloc((n ? n : 1) * sizeof *sc->slot);
    sc->fifo = malloc(cap * sizeof *sc->fifo);
    if (sc->slot == NULL || sc->fifo == NULL)
        return -1;
    memset(sc->fifo, 0, cap * sizeof *sc->fifo); /* touched before the timed loop */
    return 0;
}

static void spare_churn_reset(spare_churn *sc) {
    for (size_t i = 0; i < sc->n; i++)
        sc->slot[i] = (uint32_t)i;
    sc->used = sc->head = sc->count = 0;
    sc->wait_ns = 0;
}

static void spare_churn_free(spare_churn *sc) {
    free(sc->slot);
    free(sc->fifo);
}

/* One pair: cancels slot v's timer and schedules slot v after delay_ns.
 * Returns 1 if the schedule failed, else 0. */
static inline int spare_churn_pair(spare_churn *sc, const tkb_svc_ops *ops, void *self,
                                   char *timers, uint32_t v, tkb_fire *f, int64_t delay_ns) {
    const size_t ts = ops->timer_size;
    uint32_t s = sc->slot[v];
    ops->cancel(self, timers + (size_t)s * ts);
    if (!ops->reusable(self, timers + (size_t)s * ts)) {
        sc->fifo[(sc->head + sc->count++) & sc->mask] = s;
        uint32_t oldest = sc->fifo[sc->head];
        if (ops->reusable(self, timers + (size_t)oldest * ts)) {
            s = oldest;
        } else if (sc->used < sc->spare) {
            s = (uint32_t)(sc->n + sc->used++);
            oldest = UINT32_MAX;
        } else {
            int64_t w0 = tkb_now_ns();
            while (!ops->reusable(self, timers + (size_t)oldest * ts))
                sched_yield();
            sc->wait_ns += tkb_now_ns() - w0;
            s = oldest;
        }
        if (oldest != UINT32_MAX) {
            sc->head = (sc->head + 1) & sc->mask;
            sc->count--;
        }
        sc->slot[v] = s;
    }
    return ops->schedule(self, timers + (size_t)s * ts, f, delay_ns) != 0;
}

/* Spare timers of the hold-model loops (see spare_churn): W1_exec's single
 * producer, and each W7 producer. At ~100-500 ns a pair, the ~10 ms a wheel
 * needs to let go of a stopped timer when its tick thread keeps up is
 * 20,000-100,000 pairs; under sustained churn on a busy 2-core machine the
 * tick thread falls behind (stop-to-idle of 100-250 ms was measured), the
 * spares run out and the loop waits for it: W1_exec reports both
 * (churn_spare_timers, churn_spare_wait_ms). */
#define W1_SPARE ((size_t)1 << 18)
#define W7_SPARE ((size_t)1 << 17)

/* W1_exec: cancel N (random order; timers scheduled with the handle a cancel
 * needs, untimed), schedule N (no handle: no future), churn pairs at
 * population N. Cost on the calling thread; peers that hand work to a thread
 * of their own (the wheel's tick thread, libuv's loop) do part of it there.
 * Embedded peers (tk_timer) have no timer without storage: their schedule
 * phase starts the caller's timers again (released and idle by then, untimed),
 * which is their only way and allocates nothing either; their churn re-arms
 * a spare timer where the peer still holds the cancelled one (spare_churn). */
static void w1_exec(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    size_t n = (size_t)c->arg, pairs = tkb_cfg.churn_pairs;
    size_t ts = ops->timer_size;
    size_t spare = ops->reusable ? W1_SPARE : 0;
    tkb_fire *rec = idle_record(ops);
    int64_t *delays = uniform_deadlines(n, W1_LO, W1_HI, TKB_SEED + n);
    int64_t *next = uniform_deadlines(pairs, W1_LO, W1_HI, TKB_SEED * 5 + n);
    uint32_t *perm = permutation(n, TKB_SEED * 3 + n);
    uint32_t *victims = random_indices(pairs, n, TKB_SEED * 7 + n);
    char *timers = xmalloc_touched((n + spare) * ts);
    spare_churn sc = {0};
    bool sc_ok = spare == 0 || spare_churn_init(&sc, n, spare) == 0;
    double sched = 0, cancel = 0, churn = 0;
    int runs = 0;
    while (tk_gb_keep_running(st)) {
        void *self;
        if (!delays || !next || !perm || !victims || !timers || !sc_ok ||
            svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "setup failed");
            break;
        }
        int fails = 0;
        /* warm-up: start the service's threads */
        ops->schedule(self, NULL, &noop, 0);
        tkb_sleep_ns(20 * NS_PER_MS);
        /* fill with cancellable timers (untimed; also warms the allocator), then
         * cancel them all in random order */
        memset(timers, 0, n * ts);
        prepare_storage(ops, self, timers, n, ts, false);
        for (size_t i = 0; i < n; i++)
            fails += ops->schedule(self, timers + i * ts, rec, delays[i]) != 0;
        if (ops->sync)
            ops->sync(self);
        settle(n);
        int64_t t2 = tkb_now_ns();
        for (size_t i = 0; i < n; i++)
            ops->cancel(self, timers + (size_t)perm[i] * ts);
        int64_t t3 = tkb_now_ns();
        if (ops->sync)
            ops->sync(self);
        settle(n); /* e.g. the wheel's tick thread releasing the cancelled tasks */
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
                fails += ops->schedule(self, NULL, &noop, delays[i]) != 0;
        }
        int64_t t1 = tkb_now_ns();
        if (ops->sync)
            ops->sync(self);
        ops->destroy(self); /* drops the N pending timers (untimed) */
        /* churn at population N */
        if (svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "setup failed");
            break;
        }
        memset(timers, 0, (n + spare) * ts); /* fresh storage for the new service */
        prepare_storage(ops, self, timers, n + spare, ts, false);
        for (size_t i = 0; i < n; i++)
            fails += ops->schedule(self, timers + i * ts, rec, delays[i]) != 0;
        if (ops->sync)
            ops->sync(self);
        settle(n);
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
            spare_churn_reset(&sc);
            t4 = tkb_now_ns();
            for (size_t k = 0; k < pairs; k++)
                fails += spare_churn_pair(&sc, ops, self, timers, victims[k], rec, next[k]);
            t5 = tkb_now_ns();
        }
        cancel_all(ops, self, timers, n + sc.used);
        ops->destroy(self);
        if (fails) {
            tk_gb_skip(st, "schedule failed");
            break;
        }
        tk_gb_set_iteration_time(st, (double)((t1 - t0) + (t3 - t2) + (t5 - t4)) / 1e9);
        sched += per_op(t1 - t0, n);
        cancel += per_op(t3 - t2, n);
        churn += per_op(t5 - t4, pairs);
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
    spare_churn_free(&sc);
}

/* Lateness records: callback start minus (clock read before the schedule
 * call + delay), on CLOCK_MONOTONIC. */
typedef struct late_ctx late_ctx;
typedef struct late_rec {
    tkb_fire base;
    int64_t deadline_ns;
    late_ctx *ctx;
} late_rec;

struct late_ctx {
    tkb_hist *h; /* written by the (single) callback thread */
    _Atomic uint64_t fired;
    _Atomic int64_t last_ns;
};

static void late_fire(tkb_fire *f) {
    int64_t now = tkb_now_ns();
    late_rec *r = (late_rec *)f;
    late_ctx *c = r->ctx;
    tkb_hist_record(c->h, now - r->deadline_ns);
    atomic_store_explicit(&c->last_ns, now, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->fired, 1, memory_order_release);
}

/* Waits until `n` callbacks ran or the deadline passed. Returns true if all ran. */
static bool wait_fired(_Atomic uint64_t *fired, uint64_t n, int64_t give_up_ns) {
    while (atomic_load_explicit(fired, memory_order_acquire) < n) {
        if (tkb_now_ns() > give_up_ns)
            return false;
        tkb_sleep_ns(2 * NS_PER_MS);
    }
    return true;
}

/* Schedules `timer`/`f` to fire at `deadline_ns`: as that instant where the
 * peer's API takes one (schedule_at), else as a delay from a clock read just
 * before the call. */
static int schedule_for(const tkb_svc_ops *ops, void *self, void *timer, tkb_fire *f,
                        int64_t deadline_ns) {
    if (ops->schedule_at != NULL)
        return ops->schedule_at(self, timer, f, deadline_ns);
    return ops->schedule(self, timer, f, deadline_ns - tkb_now_ns());
}

static int64_t w2_offset_ns(size_t n) {
    int64_t off = (int64_t)n * 2000; /* 2 us per schedule, generous */
    return off < 200 * NS_PER_MS ? 200 * NS_PER_MS : off;
}

/* W2_spread: N timers due uniformly over [base, base + 1 s), all scheduled
 * before base. */
static void w2_spread(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    size_t n = (size_t)c->arg;
    int64_t *u = uniform_deadlines(n, 0, NS_PER_S - 1, TKB_SEED + 23);
    fire_slots fs;
    int fs_rc = fire_slots_alloc(&fs, ops, n, sizeof(late_rec));
    tkb_hist h;
    if (u == NULL || fs_rc != 0 || tkb_hist_init(&h)) {
        tk_gb_skip(st, "out of memory");
        free(u);
        free(fs.mem);
        return;
    }
    while (tk_gb_keep_running(st)) {
        void *self;
        if (svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "service create failed");
            break;
        }
        late_ctx ctx = {.h = &h};
        tkb_hist_reset(&h);
        fire_slots_prepare(&fs, ops, self, n);
        ops->schedule(self, NULL, &noop, 0); /* start the threads */
        tkb_sleep_ns(20 * NS_PER_MS);
        int64_t offset = w2_offset_ns(n);
        int64_t base = tkb_now_ns() + offset;
        int fails = 0;
        for (size_t i = 0; i < n; i++) {
            late_rec *r = fire_slot_record(&fs, i);
            *r = (late_rec){{late_fire}, base + u[i], &ctx};
            fails += schedule_for(ops, self, fire_slot_timer(&fs, i), &r->base, base + u[i]) != 0;
        }
        int64_t sched_end = tkb_now_ns();
        bool all = wait_fired(&ctx.fired, n - (size_t)fails, base + 60 * NS_PER_S);
        int64_t last = atomic_load(&ctx.last_ns);
        c->peer->svc->destroy(self);
        if (fails || !all) {
            tk_gb_skip(st, fails ? "schedule failed" : "not every timer fired within 60 s");
            break;
        }
        if (sched_end > base)
            fprintf(stderr, "tkbench: W2_spread %s: scheduling overran the offset by %.1f ms\n",
                    c->peer->name, (double)(sched_end - base) / 1e6);
        tk_gb_set_iteration_time(st, (double)(last - base) / 1e9);
        tk_gb_counter(st, "expire_wall_ms", (double)(last - base) / 1e6);
        tk_gb_counter(st, "late_p50_us", (double)tkb_hist_percentile(&h, 50) / 1000.0);
        tk_gb_counter(st, "late_p99_us", (double)tkb_hist_percentile(&h, 99) / 1000.0);
        tk_gb_counter(st, "late_max_us", (double)h.max / 1000.0);
        tk_gb_counter(st, "offset_ms", (double)offset / 1e6);
        tk_gb_counter(st, "early_count", (double)h.early_count);
        if (c->hist)
            tkb_hist_merge(c->hist, &h);
    }
    if (c->hist)
        tkb_write_hgrm(c, c->hist);
    tkb_hist_destroy(&h);
    free(u);
    free(fs.mem);
}

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
    fire_slots fs = {0};
    if (ops->embedded && fire_slots_alloc(&fs, ops, n, sizeof(burst_rec)) != 0) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    while (tk_gb_keep_running(st)) {
        void *self;
        if (svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "service create failed");
            break;
        }
        burst_ctx b = {.base = {burst_fire}, .n = n};
        if (fs.storage) {
            fire_slots_prepare(&fs, ops, self, n);
            for (size_t i = 0; i < n; i++)
                *(burst_rec *)fire_slot_record(&fs, i) = (burst_rec){{burst_rec_fire}, &b};
        }
        ops->schedule(self, NULL, &noop, 0);
        tkb_sleep_ns(20 * NS_PER_MS);
        int64_t offset = w2_offset_ns(n);
        int64_t due = tkb_now_ns() + offset;
        int fails = 0;
        for (size_t i = 0; i < n; i++) {
            tkb_fire *f = fs.storage ? fire_slot_record(&fs, i) : &b.base;
            fails += schedule_for(ops, self, fire_slot_timer(&fs, i), f, due) != 0;
        }
        int64_t sched_end = tkb_now_ns();
        bool all = wait_fired(&b.fired, n, due + 60 * NS_PER_S);
        int64_t last = atomic_load_explicit(&b.last_ns, memory_order_acquire);
        c->peer->svc->destroy(self);
        if (fails || !all) {
            tk_gb_skip(st, fails ? "schedule failed" : "not every timer fired within 60 s");
            break;
        }
        if (sched_end > due)
            fprintf(stderr, "tkbench: W2_burst %s: scheduling overran the offset by %.1f ms\n",
                    c->peer->name, (double)(sched_end - due) / 1e6);
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

/* W3_latency: N timers, delays uniform in [1 ms, 100 ms], scheduled at a
 * steady rate over w3_seconds from this (non-timer) thread. */
static void w3_latency(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    size_t n = (size_t)c->arg;
    int64_t *delay = uniform_deadlines(n, NS_PER_MS, 100 * NS_PER_MS, TKB_SEED + 29);
    fire_slots fs;
    int fs_rc = fire_slots_alloc(&fs, ops, n, sizeof(late_rec));
    tkb_hist h;
    if (delay == NULL || fs_rc != 0 || tkb_hist_init(&h)) {
        tk_gb_skip(st, "out of memory");
        free(delay);
        free(fs.mem);
        return;
    }
    int64_t interval = (int64_t)(tkb_cfg.w3_seconds * 1e9 / (double)n);
    while (tk_gb_keep_running(st)) {
        void *self;
        if (svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "service create failed");
            break;
        }
        late_ctx ctx = {.h = &h};
        tkb_hist_reset(&h);
        fire_slots_prepare(&fs, ops, self, n);
        ops->schedule(self, NULL, &noop, 0);
        tkb_sleep_ns(20 * NS_PER_MS);
        int fails = 0;
        int64_t start = tkb_now_ns();
        int64_t cpu0 = tkb_cpu_ns();
        for (size_t i = 0; i < n; i++) {
            tkb_sleep_until_ns(start + (int64_t)i * interval);
            int64_t now = tkb_now_ns();
            late_rec *r = fire_slot_record(&fs, i);
            *r = (late_rec){{late_fire}, now + delay[i], &ctx};
            fails += ops->schedule(self, fire_slot_timer(&fs, i), &r->base, delay[i]) != 0;
        }
        bool all = wait_fired(&ctx.fired, n - (size_t)fails, tkb_now_ns() + 30 * NS_PER_S);
        int64_t end = tkb_now_ns();
        int64_t cpu1 = tkb_cpu_ns();
        c->peer->svc->destroy(self);
        if (fails || !all) {
            tk_gb_skip(st, fails ? "schedule failed" : "not every timer fired within 30 s");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(end - start) / 1e9);
        hist_counters(st, &h, "late", true);
        tk_gb_counter(st, "late_max_us", (double)h.max / 1000.0);
        tk_gb_counter(st, "early_count", (double)h.early_count);
        /* what the accuracy cost: the whole process's CPU (the producer's
         * included) as a share of one core over the run */
        tk_gb_counter(st, "process_cpu_pct", 100.0 * (double)(cpu1 - cpu0) / (double)(end - start));
        if (c->hist)
            tkb_hist_merge(c->hist, &h);
    }
    if (c->hist)
        tkb_write_hgrm(c, c->hist);
    tkb_hist_destroy(&h);
    free(delay);
    free(fs.mem);
}

/* W4_idle: one timer 1 h ahead, then idle. Wake-ups from the engine's counter
 * if it has one, else the context switches of every thread but this one. */
static void w4_idle(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    int64_t window = (int64_t)(tkb_cfg.w4_seconds * 1e9);
    while (tk_gb_keep_running(st)) {
        void *self;
        char *timer = xmalloc_touched(ops->timer_size);
        if (timer == NULL || svc_open(c->peer, 1, &self)) {
            free(timer);
            tk_gb_skip(st, "service create failed");
            break;
        }
        prepare_storage(ops, self, timer, 1, ops->timer_size, false);
        ops->schedule(self, timer, idle_record(ops), 3600 * NS_PER_S);
        if (ops->sync)
            ops->sync(self);
        tkb_sleep_ns(200 * NS_PER_MS); /* settle: threads started and asleep */
        uint64_t w0 = 0, w1 = 0;
        bool engine = ops->wakeups && ops->wakeups(self, &w0);
        if (!engine)
            w0 = tkb_other_threads_ctxt();
        int64_t c0 = tkb_cpu_ns(), m0 = tkb_thread_cpu_ns();
        tkb_sleep_ns(window);
        int64_t c1 = tkb_cpu_ns(), m1 = tkb_thread_cpu_ns();
        if (engine)
            ops->wakeups(self, &w1);
        else
            w1 = tkb_other_threads_ctxt();
        ops->cancel(self, timer);
        if (ops->release)
            ops->release(self, timer);
        if (ops->sync)
            ops->sync(self);
        ops->destroy(self);
        free(timer);
        tk_gb_set_iteration_time(st, (double)window / 1e9);
        /* the process's CPU without this (sleeping) benchmark thread's own,
         * which is the harness's, not the peer's; the raw figure is added (idle_cpu_process_ms) */
        int64_t others = (c1 - c0) - (m1 - m0);
        tk_gb_counter(st, "idle_cpu_ms", (double)(others > 0 ? others : 0) / 1e6);
        tk_gb_counter(st, "idle_cpu_process_ms", (double)(c1 - c0) / 1e6);
        tk_gb_counter(st, "idle_wakeups", (double)(w1 - w0));
        tk_gb_counter(st, "wakeups_from_engine_counter", engine ? 1.0 : 0.0);
    }
}

/* Runs `tkbench _w5 PEER N SLACK MODE` and reads its `key value` lines into
 * v[0] (bytes per timer) and v[1] (RSS left after cancel). Returns 0 or -1. */
static int w5_run_child(const tkb_case *c, int mode, double v[2]) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/proc/%d/exe _w5 %s %lld %lld %d", (int)getpid(), c->peer->name,
             (long long)c->arg, (long long)tkb_cfg.timer_slack_ns, mode);
    FILE *p = popen(cmd, "r");
    char line[256];
    v[0] = v[1] = -1;
    while (p && fgets(line, sizeof line, p)) {
        sscanf(line, "bytes_per_timer %lf", &v[0]);
        sscanf(line, "rss_after_cancel_bytes %lf", &v[1]);
    }
    int rc = p ? pclose(p) : -1;
    return rc == 0 && v[0] >= 0 ? 0 : -1;
}

/* W5_memory: measured in fresh processes (tkbench _w5) so that earlier
 * workloads' heap does not absorb the growth. Mode 0: cancellable timers (the
 * handle a cancel needs: a future...), then cancel them all; mode 1 (added
 * metric bytes_per_timer_no_handle): timers scheduled without a handle. The
 * embedded peers have no timer without storage (a tk_timer is its own
 * handle), so they run mode 0 only and have no bytes_per_timer_no_handle. */
static void w5_memory(tk_gb_state *st, tkb_case *c) {
    bool no_handle = !c->peer->svc->embedded;
    while (tk_gb_keep_running(st)) {
        int64_t t0 = tkb_now_ns();
        double v[2], w[2];
        if (w5_run_child(c, 0, v) != 0 || (no_handle && w5_run_child(c, 1, w) != 0)) {
            tk_gb_skip(st, "W5 child failed");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(tkb_now_ns() - t0) / 1e9);
        tk_gb_counter(st, "bytes_per_timer", v[0]);
        tk_gb_counter(st, "rss_after_cancel_bytes", v[1]);
        if (no_handle)
            tk_gb_counter(st, "bytes_per_timer_no_handle", w[0]);
    }
}

/* W5's storage for the user's timers: an anonymous mapping, page-aligned and
 * touched, so that RSS grows by exactly ceil(bytes / page) pages for it (no
 * malloc header or arena slack: 1e6 x 64 B is exactly 15625 pages), and
 * gives them back at munmap. */
static char *map_touched(size_t bytes) {
    void *p =
        mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 0, bytes);
    return p;
}

/* What bytes_per_timer counts: the RSS growth from after the warm-up to
 * after N timers are scheduled, over N: the user's storage for the N timers
 * (timer_size bytes each: a future pointer, a uv_timer_t, a struct event, a
 * tk_timer; in a page-aligned mapping, so no allocator header is counted) and
 * everything the peer allocates for them (tasks, futures, heap arrays, loop
 * requests). Not counted: the harness's delays (allocated and touched before
 * the first reading) and the shared no-op record (none at all for the
 * embedded peers, whose storage is the whole timer: nothing fires here). */
int tkb_w5_child(const char *peer_name, size_t n, int64_t slack, int mode) {
    const tkb_peer *p = tkb_peer_find(peer_name);
    if (p == NULL || p->svc == NULL || n == 0)
        return 2;
    tkb_cfg.timer_slack_ns = slack;
    const tkb_svc_ops *ops = p->svc;
    const size_t ts = ops->timer_size;
    tkb_fire *rec = idle_record(ops);
    if (mode == 1 && ops->embedded)
        return 2; /* no timer without storage */
    int64_t *delays = uniform_deadlines(n, W1_LO, W1_HI, TKB_SEED + n); /* harness, not counted */
    void *self;
    if (delays == NULL || svc_open(p, 1, &self))
        return 1;
    /* warm-up: threads started, one timer through the whole path */
    char *warm = xmalloc_touched(ts);
    prepare_storage(ops, self, warm, 1, ts, false);
    ops->schedule(self, warm, rec, 3600 * NS_PER_S);
    ops->cancel(self, warm);
    if (ops->release)
        ops->release(self, warm);
    if (ops->sync)
        ops->sync(self);
    tkb_sleep_ns(50 * NS_PER_MS);
    malloc_trim(0);
    /* The first reading after malloc_trim() re-grows the heap its stdio
     * buffer comes from (128 KiB, glibc's top pad) after it read statm, so
     * the next reading would be 128 KiB higher: 0.13 B per timer at 1e6,
     * 131 B at 1e3, for every peer. Read once and drop it. */
    (void)tkb_rss_bytes();
    int64_t rss0 = tkb_rss_bytes();
    if (mode == 1) { /* no handle: the peer allocates whatever it needs */
        for (size_t i = 0; i < n; i++)
            if (ops->schedule(self, NULL, &noop, delays[i]) != 0)
                return 1;
        if (ops->sync)
            ops->sync(self);
        tkb_sleep_ns(50 * NS_PER_MS);
        int64_t rss1 = tkb_rss_bytes();
        printf("bytes_per_timer %.3f\n", (double)(rss1 - rss0) / (double)n);
        fflush(stdout);
        ops->destroy(self);
        free(warm);
        free(delays);
        return 0;
    }
    /* everything a user allocates: its handles/timer objects, and the peer's */
    char *timers = map_touched(n * ts);
    if (timers == NULL)
        return 1;
    prepare_storage(ops, self, timers, n, ts, false); /* tk_timer_init: no allocation */
    for (size_t i = 0; i < n; i++)
        if (ops->schedule(self, timers + i * ts, rec, delays[i]) != 0)
            return 1;
    if (ops->sync)
        ops->sync(self);
    tkb_sleep_ns(50 * NS_PER_MS); /* hand-off queues drained into the engine */
    int64_t rss1 = tkb_rss_bytes();
    /* cancel_all ends with release() + sync(): an embedded peer returns only
     * once every stopped timer is idle (the wheel's tick thread let go), so
     * the storage is unmapped only when the library is done with it */
    cancel_all(ops, self, timers, n);
    munmap(timers, n * ts);
    /* A service may release cancelled timers on a thread of its own (the
     * wheel's tick thread does, within its reclaim period, which takes
     * longer for a million nodes): wait until RSS stops falling (two
     * readings 50 ms apart within 64 KiB), at most 3 s. */
    int64_t rss2 = tkb_rss_bytes();
    for (int i = 0; i < 60; i++) {
        tkb_sleep_ns(50 * NS_PER_MS);
        int64_t r = tkb_rss_bytes();
        bool settled = r > rss2 - 65536;
        rss2 = r < rss2 ? r : rss2;
        if (settled)
            break;
    }
    printf("bytes_per_timer %.3f\n", (double)(rss1 - rss0) / (double)n);
    printf("rss_after_cancel_bytes %lld\n", (long long)(rss2 - rss0));
    fflush(stdout);
    ops->destroy(self);
    free(warm);
    free(delays);
    return 0;
}

/* W7_contention: `threads` producers each keep 1000 timers and loop cancel +
 * schedule into one service; total operations per second. Embedded peers
 * whose stopped timers are not reusable at once re-arm spares (spare_churn),
 * each producer its own. */
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
    spare_churn sc; /* used if ops->reusable */
    uint64_t ops_done;
    int fails;
} w7_producer;

static void *w7_main(void *arg) {
    w7_producer *w = arg;
    const tkb_svc_ops *ops = w->ops;
    size_t ts = ops->timer_size;
    tkb_fire *rec = idle_record(ops);
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
                    spare_churn_pair(&w->sc, ops, w->self, w->timers, w->victims[k % w->nrand], rec,
                                     w->delays[k % w->nrand]);
        }
    }
    w->ops_done = 2 * k;
    return NULL;
}

static void w7_contention(tk_gb_state *st, tkb_case *c) {
    const tkb_svc_ops *ops = c->peer->svc;
    int threads = (int)c->arg;
    const size_t pop = 1000, nrand = 1 << 16;
    const size_t spare = ops->reusable ? W7_SPARE : 0;
    while (tk_gb_keep_running(st)) {
        void *self;
        if (svc_open(c->peer, 1, &self)) {
            tk_gb_skip(st, "service create failed");
            break;
        }
        _Atomic int stop = 0;
        w7_producer w[8];
        int started = 0, fails = 0;
        bool setup = true;
        for (int i = 0; i < threads; i++) {
            w[i] =
                (w7_producer){.ops = ops, .self = self, .pop = pop, .nrand = nrand, .stop = &stop};
            w[i].timers = xmalloc_touched((pop + spare) * ops->timer_size);
            w[i].delays = uniform_deadlines(nrand, W1_LO, W1_HI, TKB_SEED + 31 + (uint64_t)i);
            w[i].victims = random_indices(nrand, pop, TKB_SEED + 37 + (uint64_t)i);
            if (w[i].timers != NULL)
                prepare_storage(ops, self, w[i].timers, pop + spare, ops->timer_size, false);
            if (spare != 0 && spare_churn_init(&w[i].sc, pop, spare) == 0)
                spare_churn_reset(&w[i].sc);
            else if (spare != 0)
                setup = false;
        }
        int64_t t0 = tkb_now_ns();
        for (int i = 0; i < threads; i++)
            if (setup && w[i].timers && w[i].delays && w[i].victims &&
                pthread_create(&w[i].th, NULL, w7_main, &w[i]) == 0)
                started++;
            else
                break;
        tkb_sleep_ns((int64_t)(tkb_cfg.w7_seconds * 1e9));
        atomic_store(&stop, 1);
        uint64_t total = 0;
        for (int i = 0; i < started; i++) {
            pthread_join(w[i].th, NULL);
            total += w[i].ops_done;
            fails += w[i].fails;
        }
        int64_t t1 = tkb_now_ns();
        for (int i = 0; i < started; i++)
            cancel_all(ops, self, w[i].timers, pop + w[i].sc.used);
        ops->destroy(self);
        for (int i = 0; i < threads; i++) {
            free(w[i].timers);
            free(w[i].delays);
            free(w[i].victims);
            spare_churn_free(&w[i].sc);
        }
        if (started != threads || fails) {
            tk_gb_skip(st, started != threads ? "thread start failed" : "schedule failed");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(t1 - t0) / 1e9);
        tk_gb_counter(st, "ops_per_s", (double)total / ((double)(t1 - t0) / 1e9));
    }
}

/* ---- case lists ------------------------------------------------------------------- */
static bool core_fits(const tkb_peer *p, size_t n) {
    size_t cap = p->core_max_n;
    if (strcmp(p->kind, "strawman") == 0 && tkb_cfg.strawman_max_n < cap)
        cap = tkb_cfg.strawman_max_n;
    return p->core != NULL && (cap == 0 || n <= cap);
}

static tkb_case *add_case(tkb_case *cases, size_t cap, size_t *k, const char *workload,
                          const tkb_peer *p, double n, int64_t arg, tkb_case_fn fn, int reps,
                          double est) {
    if (*k >= cap)
        return NULL;
    tkb_case *c = &cases[(*k)++];
    memset(c, 0, sizeof *c);
    c->workload = workload;
    c->peer = p;
    c->n = n;
    c->arg = arg;
    c->fn = fn;
    c->reps = reps;
    c->est_seconds = est * reps;
    snprintf(c->name, sizeof c->name, "%s/%s/%.10g", workload, p->name, n);
    c->realtime = strncmp(workload, "W2", 2) == 0 || strncmp(workload, "W3", 2) == 0 ||
                  strncmp(workload, "W4", 2) == 0 || strncmp(workload, "W5", 2) == 0 ||
                  strncmp(workload, "W7", 2) == 0 || fn == floor_latency || fn == floor_spin;
    return c;
}

/* A histogram accumulated over the repetitions, written to hist/. */
static void attach_hist(tkb_case *c) {
    if (c == NULL)
        return;
    c->hist = malloc(sizeof *c->hist);
    if (c->hist && tkb_hist_init(c->hist)) {
        free(c->hist);
        c->hist = NULL;
    }
}

/* Rough wall-time model for the progress estimate (seconds per repetition),
 * from a quick run on a busy 2-core VM; the ETA rescales itself with the
 * ratio of actual to estimated time as the run goes. */
static double peer_factor(const tkb_peer *p) {
    if (strcmp(p->name, "heap") == 0)
        return 1.0;
    if (strncmp(p->name, "wheel", 5) == 0)
        return 2.0;
    if (strcmp(p->name, "libuv") == 0)
        return 6.0;
    if (strcmp(p->name, "libevent") == 0)
        return 4.0;
    return 1.0;
}

static bool is_strawman(const tkb_peer *p) {
    return strcmp(p->kind, "strawman") == 0;
}

/* insert + cancel + expire (+ an untimed warm cycle) of n timers */
static double est_phases(const tkb_peer *p, double n, double cancel_frac) {
    if (is_strawman(p))
        return 0.02 + n * n * 1.5e-9 * (cancel_frac > 0 ? cancel_frac : 0.1);
    return 0.02 + n * 0.7e-6 * peer_factor(p);
}

static double est_churn(const tkb_peer *p, double n, double pairs) {
    if (is_strawman(p))
        return 0.02 + pairs * n * 1.5e-9;
    return 0.02 + n * 0.3e-6 * peer_factor(p) +
           pairs * 0.1e-6 * peer_factor(p) * (n >= 1e6 ? 4.0 : 1.0);
}

/* True if the comma-separated `list` names `item` exactly. */
static bool list_has(const char *list, const char *item) {
    size_t len = strlen(item);
    for (const char *s = list; *s != '\0';) {
        const char *end = strchr(s, ',');
        size_t n = end != NULL ? (size_t)(end - s) : strlen(s);
        if (n == len && strncmp(s, item, n) == 0)
            return true;
        s += n + (end != NULL);
    }
    return false;
}

/* The floor's cases, in run order. A timed one is a batched loop whose time per
 * iteration (GB's real time) is its metric, `name`; the others (repeated
 * reps_long times, as the workloads that sleep) set counters. */
static const struct {
    tkb_case_fn fn;
    const char *name; /* the case is floor/<name> */
    bool timed;
} floor_cases[] = {
    {floor_clock, "clock_ns", true},    {floor_append, "array_append_ns", true},
    {floor_rmw, "locked_rmw_ns", true}, {floor_miss, "cold_miss_ns", true},
    {floor_spin, "spin", false},        {floor_latency, "latency", false},
};

size_t tkb_workload_cases(const char *w, const tkb_peer *p, tkb_case *cases, size_t cap) {
    size_t k = 0;
    const tkb_config *g = &tkb_cfg;
    bool is_floor = strcmp(p->kind, "floor") == 0;
    if (p->only != NULL && !list_has(p->only, w))
        return 0;
    if (strcmp(w, "floor") == 0) {
        if (!is_floor)
            return 0;
        for (size_t i = 0; i < sizeof floor_cases / sizeof floor_cases[0]; i++) {
            tkb_case_fn fn = floor_cases[i].fn;
            double est = fn == floor_spin      ? g->floor_spin_seconds + 0.1
                         : fn == floor_latency ? (double)g->floor_samples * 0.0008
                         : fn == floor_miss    ? 1.0
                                               : 0.5;
            tkb_case *c = add_case(cases, cap, &k, "floor", p, 1, 0, fn,
                                   floor_cases[i].timed ? g->reps : g->reps_long, est);
            if (c == NULL)
                continue;
            if (floor_cases[i].timed)
                c->time_metric = floor_cases[i].name;
            snprintf(c->name, sizeof c->name, "floor/%s", floor_cases[i].name);
        }
        return k;
    }
    if (is_floor)
        return 0;
    if (strcmp(w, "W1_core") == 0) {
        for (size_t i = 0; i < g->w1_count; i++) {
            size_t n = g->w1_sizes[i];
            if (!core_fits(p, n))
                continue;
            add_case(cases, cap, &k, "W1_core", p, (double)n, (int64_t)n, w1_core_phases, g->reps,
                     est_phases(p, (double)n, 1.0));
            tkb_case *c =
                add_case(cases, cap, &k, "W1_core", p, (double)n, (int64_t)n, w1_core_churn,
                         g->reps, est_churn(p, (double)n, (double)churn_pairs_for(p)));
            if (c) {
                c->time_metric = "churn_ns";
                c->iterations = (int64_t)churn_pairs_for(p);
                snprintf(c->name, sizeof c->name, "W1_core/%s/%zu/churn", p->name, n);
            }
        }
    } else if (strcmp(w, "W6_dist") == 0) {
        for (size_t i = 0; i < g->w6_dist_count; i++) {
            size_t n = g->w6_dist_sizes[i];
            if (!core_fits(p, n))
                continue;
            for (int d = 0; d < 5; d++) {
                char wl[32];
                snprintf(wl, sizeof wl, "W6_dist_%s", dist_names[d]);
                tkb_case *c = add_case(cases, cap, &k, "W6_dist", p, (double)n, (int64_t)n, w6_dist,
                                       g->reps, est_churn(p, (double)n, (double)dist_pairs_for(p)));
                if (c) {
                    static const char *const wls[] = {"W6_dist_uniform", "W6_dist_exponential",
                                                      "W6_dist_bimodal", "W6_dist_constant",
                                                      "W6_dist_monotonic"};
                    c->workload = wls[d];
                    c->arg2 = d;
                    c->time_metric = "churn_ns";
                    c->iterations = (int64_t)dist_pairs_for(p);
                    snprintf(c->name, sizeof c->name, "%s/%s/%zu", wl, p->name, n);
                }
            }
        }
    } else if (strcmp(w, "W6_cancel_ratio") == 0) {
        static const int pcts[] = {0, 50, 90, 99};
        if (!core_fits(p, g->w6_n) || !p->core->can_expire)
            return 0;
        for (int i = 0; i < 4; i++) {
            add_case(cases, cap, &k, "W6_cancel_ratio", p, pcts[i], pcts[i], w6_cancel_ratio,
                     g->reps, est_phases(p, (double)g->w6_n, pcts[i] / 100.0));
        }
    } else if (strcmp(w, "W6_delay_range") == 0) {
        static const int tenths[] = {1, 10, 100, 1000};
        if (!core_fits(p, g->w6_n) || !p->core->can_expire)
            return 0;
        for (int i = 0; i < 4; i++)
            add_case(cases, cap, &k, "W6_delay_range", p, tenths[i] / 10.0, tenths[i],
                     w6_delay_range, g->reps,
                     est_phases(p, (double)g->w6_n, 0.0) * (1 + tenths[i] / 200.0));
    } else if (p->svc == NULL) {
        return 0;
    } else if (strcmp(w, "W1_exec") == 0) {
        for (size_t i = 0; i < g->w1_count; i++) {
            size_t n = g->w1_sizes[i];
            if (n > 2000000 && strcmp(p->kind, "engine") != 0)
                continue;
            add_case(cases, cap, &k, "W1_exec", p, (double)n, (int64_t)n, w1_exec, g->reps_exec,
                     0.1 + (double)(5 * n + 2 * g->churn_pairs) * 1.3e-6 *
                               (peer_factor(p) > 1 ? 2 : 1));
        }
    } else if (strcmp(w, "W2_spread") == 0) {
        tkb_case *c = add_case(cases, cap, &k, "W2_spread", p, (double)g->w2_n, (int64_t)g->w2_n,
                               w2_spread, g->reps_long, 1.5 + (double)w2_offset_ns(g->w2_n) / 1e9);
        attach_hist(c);
    } else if (strcmp(w, "W2_burst") == 0) {
        add_case(cases, cap, &k, "W2_burst", p, (double)g->w2_n, (int64_t)g->w2_n, w2_burst,
                 g->reps_long, 0.8 + (double)w2_offset_ns(g->w2_n) / 1e9);
    } else if (strcmp(w, "W3_latency") == 0) {
        tkb_case *c = add_case(cases, cap, &k, "W3_latency", p, (double)g->w3_n, (int64_t)g->w3_n,
                               w3_latency, g->reps_long, g->w3_seconds + 0.2);
        attach_hist(c);
    } else if (strcmp(w, "W4_idle") == 0) {
        add_case(cases, cap, &k, "W4_idle", p, g->w4_seconds, 0, w4_idle, g->reps_long,
                 g->w4_seconds + 0.3);
    } else if (strcmp(w, "W5_memory") == 0) {
        add_case(cases, cap, &k, "W5_memory", p, (double)g->w5_n, (int64_t)g->w5_n, w5_memory,
                 g->reps_long, 0.6 + (double)g->w5_n * 4e-6);
    } else if (strcmp(w, "W7_contention") == 0) {
        static const int th[] = {1, 2, 4};
        for (int i = 0; i < 3; i++)
            add_case(cases, cap, &k, "W7_contention", p, th[i], th[i], w7_contention, g->reps_long,
                     g->w7_seconds + 0.1);
    }
    return k;
}
