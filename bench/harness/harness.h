/* SPDX-License-Identifier: MIT */
/* tkbench: what the workloads share. Each workload file (workloads/) holds its
 * descriptor, its case builder and its Google Benchmark bodies; this is the
 * machinery they have in common: random inputs, driving a core, driving a
 * running service.
 *
 * Timing rules (the harness must not hide what it measures):
 * - random numbers (fixed seed) and timer objects are made before the timed
 *   region, and the timer memory is touched beforehand (no page faults inside);
 * - a phase (insert N, cancel N, expire N) is one batch: the clock is read once
 *   before and once after it, and manual time reports it;
 * - hold-model loops (churn) run under GB's own timer through the batched
 *   keep-running loop (tk_gb_next_batch), one C/C++ crossing per TKB_BATCH pairs;
 * - nothing pauses the timer per operation.
 * Latency tails come from tkb_hist (per operation), not from GB's statistics
 * (which are across repetitions). */
#ifndef TKB_HARNESS_H
#define TKB_HARNESS_H

#include <sched.h>
#include <stdatomic.h>

#include "tkbench.h"

#define TKB_BATCH 4096

/* W1's delays, also used wherever timers must stay far from firing. */
#define TKB_W1_LO (10 * TKB_NS_PER_S)
#define TKB_W1_HI (20 * TKB_NS_PER_S)
/* W1's populations in each suite (W1_core and W1_exec). */
#define TKB_W1_SIZES_SMOKE 1000
#define TKB_W1_SIZES_QUICK 1000, 10000, 100000, 1000000
#define TKB_W1_SIZES_FULL 1000, 10000, 100000, 1000000, 10000000

/* The floor: other workloads' figures draw its values as references. */
extern const tkb_workload tkb_wl_floor;

/* The lateness figures of a workload with histograms (percentiles and CDF),
 * with the floor's clock_nanosleep lateness as reference points: no timer
 * thread wakes closer to its deadline than that. */
#define TKB_LATENESS_FIGURE                                                                        \
    {                                                                                              \
        NULL, TKB_FIG_LATENESS, NULL, .refs = {                                                    \
            {&tkb_wl_floor, "nanosleep_late_p50_us", "clock_nanosleep"},                           \
            {&tkb_wl_floor, "nanosleep_late_p99_us", "clock_nanosleep"}                            \
        }                                                                                          \
    }

/* ---- inputs (drive-core.c) --------------------------------------------------- */
/* malloc() with every page touched (zeroed): no first touch in a timed loop. */
void *tkb_xmalloc_touched(size_t bytes);
/* n values uniform in [lo, hi], from `seed`. NULL when out of memory. */
int64_t *tkb_uniform_deadlines(size_t n, int64_t lo, int64_t hi, uint64_t seed);
/* A random permutation of 0..n-1. */
uint32_t *tkb_permutation(size_t n, uint64_t seed);
/* count indices uniform in [0, n). */
uint32_t *tkb_random_indices(size_t count, size_t n, uint64_t seed);
double tkb_per_op(int64_t ns, size_t n);
/* Counters <prefix>_p50_us, _p99_us (and _p90_us, _p999_us if full) from h. */
void tkb_hist_counters(tk_gb_state *st, const tkb_hist *h, const char *prefix, bool full);

/* ---- core level (drive-core.c) ------------------------------------------------ */
typedef struct tkb_core_inst {
    const tkb_core_peer_ops *ops;
    void *self;
    char *timers;
    size_t n;
} tkb_core_inst;

/* An empty instance of p's core with n touched timers. Returns 0 or -1. */
int tkb_core_open(tkb_core_inst *ci, const tkb_peer *p, size_t n);
/* One untimed insert/cancel cycle over every timer (grows the peer's arrays). */
void tkb_core_warm(tkb_core_inst *ci, const tkb_peer *p, const int64_t *dl);
void tkb_core_close(tkb_core_inst *ci);
/* The hold model at population n under GB's timer (one pair: cancel
 * victims[k], insert it again at next[k]), from deadlines init. */
void tkb_core_churn_run(tk_gb_state *st, const tkb_peer *peer, size_t n, const int64_t *init,
                        const int64_t *next, const uint32_t *victims);
/* Hold-model pairs for p: the plan's count, capped for the strawmen. */
size_t tkb_churn_pairs(const tkb_plan *plan, const tkb_peer *p);

/* ---- executor level (drive-service.c) ---------------------------------------------- */
/* Creates p's service with `threads` pool threads and the run's timer slack. */
int tkb_svc_open(const tkb_peer *p, unsigned threads, void **self);
/* The shared record of timers that call nothing worth measuring (never
 * written: not const only because schedule() takes a tkb_fire *). */
extern tkb_fire tkb_noop;
/* Lets a service's own threads finish the asynchronous part of the previous
 * phase: 20 ms + 200 ns per timer. */
void tkb_settle(size_t n);
/* Cancels timers[0..n), releases their storage, and waits until it may be freed. */
void tkb_cancel_all(const tkb_svc_ops *ops, void *self, char *timers, size_t n);
/* The record of timers in workloads where nothing fires: tkb_noop, or none
 * for embedded peers (their storage is the whole timer). */
tkb_fire *tkb_idle_record(const tkb_svc_ops *ops);
/* Embedded peers: zeroes and initialises `count` timers of storage, untimed. */
void tkb_prepare_storage(const tkb_svc_ops *ops, void *self, char *timers, size_t count,
                         size_t stride, bool records);

/* Records for workloads whose timers fire (W2, W3), one per timer. For the
 * embedded peers each record follows its timer's storage in one allocation,
 * as a user's struct holds its tk_timer, and timers are scheduled with that
 * storage; for every other peer this is a plain array of records, and timers
 * are scheduled without storage. */
typedef struct tkb_fire_slots {
    char *mem;
    size_t stride;  /* bytes from one record (or storage + record) to the next */
    size_t rec_off; /* the record's offset in its slot */
    bool storage;
} tkb_fire_slots;

int tkb_fire_slots_alloc(tkb_fire_slots *fs, const tkb_svc_ops *ops, size_t n, size_t rec_size);
static inline void *tkb_fire_slot_record(const tkb_fire_slots *fs, size_t i) {
    return fs->mem + i * fs->stride + fs->rec_off;
}
static inline void *tkb_fire_slot_timer(const tkb_fire_slots *fs, size_t i) {
    return fs->storage ? fs->mem + i * fs->stride : NULL;
}
/* Before each service: embedded storage zeroed and initialised (untimed). */
void tkb_fire_slots_prepare(tkb_fire_slots *fs, const tkb_svc_ops *ops, void *self, size_t n);

/* Hold-model loops for peers whose cancelled storage cannot take a new
 * schedule() at once (tkb_svc_ops.reusable). Each pair cancels slot v's timer,
 * queues its storage (FIFO), and re-arms slot v with the oldest queued storage
 * if the peer has let go of it, else with a fresh timer from `spare` extra
 * ones (prepared and touched beforehand, untimed), else (spares all in use)
 * waits for the oldest, inside the timed loop. */
typedef struct tkb_spare_churn {
    size_t n, spare, used; /* used: spare timers taken so far */
    int64_t wait_ns;       /* time spent waiting for the oldest (spares all in use) */
    uint32_t *slot;        /* slot -> storage index */
    uint32_t *fifo;        /* cancelled storage indices, oldest at head */
    size_t mask, head, count;
} tkb_spare_churn;

int tkb_spare_churn_init(tkb_spare_churn *sc, size_t n, size_t spare);
void tkb_spare_churn_reset(tkb_spare_churn *sc);
void tkb_spare_churn_free(tkb_spare_churn *sc);
/* One pair: cancels slot v's timer and schedules slot v after delay_ns.
 * Returns 1 if the schedule failed, else 0. Inline: it is the timed loop. */
static inline int tkb_spare_churn_pair(tkb_spare_churn *sc, const tkb_svc_ops *ops, void *self,
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

/* Lateness records: callback start minus (clock read before the schedule
 * call + delay), on CLOCK_MONOTONIC. */
typedef struct tkb_late_ctx {
    tkb_hist *h; /* written by the (single) callback thread */
    _Atomic uint64_t fired;
    _Atomic int64_t last_ns;
} tkb_late_ctx;

typedef struct tkb_late_rec {
    tkb_fire base;
    int64_t deadline_ns;
    tkb_late_ctx *ctx;
} tkb_late_rec;

void tkb_late_fire(tkb_fire *f);
/* Waits until `n` callbacks ran or give_up_ns passed. True if all ran. */
bool tkb_wait_fired(_Atomic uint64_t *fired, uint64_t n, int64_t give_up_ns);
/* Schedules timer/f at deadline_ns: as that instant where the peer's API
 * takes one (schedule_at), else as a delay from a clock read just before. */
int tkb_schedule_for(const tkb_svc_ops *ops, void *self, void *timer, tkb_fire *f,
                     int64_t deadline_ns);
/* W2's scheduling offset for n timers: max(200 ms, 2 us x n). */
int64_t tkb_w2_offset_ns(size_t n);

#endif
