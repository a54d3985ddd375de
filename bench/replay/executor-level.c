/* SPDX-License-Identifier: MIT */
/* tkbench: replay of a trace on a running service, in real time (replay.h,
 * executor level).
 *
 * The calling thread is the driver: it maps trace time 0 to a wall instant T0
 * just after the service is up, sleeps until each event is due (T0 + t /
 * speed) and issues every event due by then in one batch. A START becomes a
 * schedule at T0 + deadline / speed (schedule_at where the peer has it, else
 * the delay from a clock read, clamped at 0); a START on an armed timer is a
 * cancel followed by a schedule; a CANCEL is the peer's cancel; EXPIRE is not
 * issued: the service expires timers by their deadlines.
 *
 * Storage. Every slot is a timer's storage followed by its record (rx_rec),
 * tkb_svc_stride() bytes, as the embedded peers need them (the record at
 * tkb_svc_record_offset()); the other peers get the same layout. Slots
 * 0..ntimers-1 are the trace timers' own; cur[] maps a timer to the slot of
 * its current schedule. A timer keeps its slot from one schedule to the next
 * unless the slot cannot take a new schedule yet; then the slot waits in a
 * FIFO (quarantine) and the timer takes a free one, made in chunks of
 * RX_CHUNK when none is free (counted in spare_slots). A slot leaves the
 * quarantine when
 * - reusable() says the peer has let go of it (an engine that releases
 *   stopped timers later: the wheel's embedded timers), and
 * - for a peer that hands requests to its own thread (libuv: sync() and no
 *   embedded storage, rx_run.async_cancel), a sync() has run since its
 *   cancel: until the hand-off queue has been applied the cancelled timer may
 *   still fire, and its record must still say so (a firing of an old
 *   schedule must never count for a new one).
 *
 * The record's state is the one word the driver and the callback thread
 * share (atomics; everything else in the record is written by the driver
 * before the schedule and only read by the callback):
 *   NEW ──schedule──► ARMED ──callback──► FIRED      (counted, lateness recorded)
 *                       │
 *                       └──driver cancel──► CANCELLED ──callback──► STALE
 *   FIRED / CANCELLED / STALE ──driver, slot free again──► IDLE ──► ARMED ...
 * Both sides move the state from ARMED with a compare-and-swap, so exactly
 * one of "fired" and "cancelled" wins. The callback reads the record before
 * its swap and touches only the shared context after it, so a driver that
 * sees FIRED may reuse the slot at once. A cancel the peer says came too late
 * (returns 1: the callback is about to run, running or done) waits until
 * the callback has swapped. The lateness histogram is written by the
 * callback thread only (the service has one pool thread, its loop thread for
 * the baselines); the driver reads it after the service is destroyed. */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "replay/replay.h"

enum rx_state { RX_NEW = 0, RX_ARMED, RX_FIRED, RX_CANCELLED, RX_STALE, RX_IDLE };

#define RX_NONE UINT32_MAX
#define RX_MAX_SLOTS (UINT32_MAX / 2)
#define RX_CHUNK 1024                           /* slots added at a time beyond the timers' own */
#define RX_QSYNC 256                            /* async_cancel peers: sync() once this many wait */
#define RX_ISSUE_LATE_NS TKB_NS_PER_MS          /* an event issued later than this is counted */
#define RX_START_GAP_NS (5 * TKB_NS_PER_MS)     /* T0: this long after the service is ready */
#define RX_GIVE_UP_NS (30 * TKB_NS_PER_S)       /* a timer not fired this long after its deadline */
#define RX_CALLBACK_WAIT_NS (10 * TKB_NS_PER_S) /* a callback the peer says is running */
#define RX_PROGRESS_NS (5 * TKB_NS_PER_S)       /* progress lines on stderr, this far apart */
#define RX_RSS_NS (100 * TKB_NS_PER_MS)         /* RSS samples, this far apart */
#define RX_NAP_NS (100 * TKB_NS_PER_MS)         /* longest sleep between housekeeping */

typedef struct rx_ctx {
    tkb_hist *late;          /* the callback thread only */
    _Atomic uint32_t *fires; /* per trace timer */
    _Atomic uint64_t fired, stale;
    _Atomic int64_t last_fire_ns;
} rx_ctx;

typedef struct rx_rec {
    tkb_fire base;
    rx_ctx *ctx;
    int64_t deadline_ns; /* the schedule's wall deadline */
    uint32_t timer;      /* trace timer */
    _Atomic uint32_t state;
} rx_rec;

typedef struct rx_qent {
    uint32_t slot;
    bool need_sync; /* may still fire until a sync() after seq */
    uint64_t seq;
} rx_qent;

/* The driver's state: its thread only (the callbacks see rx_ctx and records). */
typedef struct rx_run {
    const tkt_trace *t;
    const tkb_peer *p;
    const tkb_svc_ops *ops;
    void *self;
    tkb_replay_exec_result *r;
    char *err;
    size_t err_len;
    rx_ctx ctx;
    bool async_cancel;
    double speed;
    int64_t t0, max_ns;
    size_t ntimers;
    /* slots: chunk[0] holds the ntimers own slots, each further chunk RX_CHUNK */
    size_t stride, rec_off;
    char **chunk;
    size_t nchunks, capchunks, nslots;
    uint32_t *cur; /* per trace timer: its slot, or RX_NONE */
    uint32_t *freel;
    size_t nfree, capfree;
    rx_qent *q; /* ring */
    size_t qhead, qlen, qcap;
    uint64_t qseq, synced_seq;
    /* housekeeping */
    size_t issued;
    int64_t end_ns; /* expected wall end, for progress lines */
    int64_t rss_peak, next_rss, next_progress;
} rx_run;

static int rx_fail(rx_run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rx_fail(rx_run *x, const char *fmt, ...) {
    if (x->err != NULL && x->err_len > 0 && x->err[0] == '\0') { /* the first failure wins */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->err, x->err_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *rx_timer_name(const tkt_trace *t, uint32_t i) {
    if (t->timers != NULL && t->timers[i].id != NULL)
        return t->timers[i].id;
    return "?";
}

/* The callback, on the service's thread. */
static void rx_fire(tkb_fire *f) {
    int64_t now = tkb_now_ns();
    rx_rec *rec = (rx_rec *)f;
    rx_ctx *c = rec->ctx;
    int64_t deadline = rec->deadline_ns;
    uint32_t timer = rec->timer;
    uint32_t st = RX_ARMED;
    if (atomic_compare_exchange_strong_explicit(&rec->state, &st, RX_FIRED, memory_order_acq_rel,
                                                memory_order_acquire)) {
        /* the record is the driver's again: from here on, only the context */
        tkb_hist_record(c->late, now - deadline);
        atomic_fetch_add_explicit(&c->fires[timer], 1, memory_order_relaxed);
        atomic_store_explicit(&c->last_fire_ns, now, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->fired, 1, memory_order_release);
    } else if (st == RX_CANCELLED &&
               atomic_compare_exchange_strong_explicit(
                   &rec->state, &st, RX_STALE, memory_order_acq_rel, memory_order_acquire)) {
        atomic_fetch_add_explicit(&c->stale, 1, memory_order_relaxed);
    }
}

static inline char *rx_slot(const rx_run *x, uint32_t s) {
    if (s < x->ntimers)
        return x->chunk[0] + (size_t)s * x->stride;
    size_t j = s - x->ntimers;
    return x->chunk[1 + j / RX_CHUNK] + (j % RX_CHUNK) * x->stride;
}

static inline rx_rec *rx_rec_of(const rx_run *x, uint32_t s) {
    return (rx_rec *)(void *)(rx_slot(x, s) + x->rec_off);
}

static inline uint32_t rx_state(const rx_run *x, uint32_t s) {
    return atomic_load_explicit(&rx_rec_of(x, s)->state, memory_order_acquire);
}

/* Trace time to wall time; deadlines beyond any real replay (a source's
 * "never") are clamped to about 36 years either way, so sums stay in range. */
static inline int64_t rx_wall(const rx_run *x, int64_t trace_ns) {
    const double lim = (double)(INT64_MAX / 8);
    double w = (double)x->t0 + (double)trace_ns / x->speed;
    return w > lim ? INT64_MAX / 8 : w < -lim ? -(INT64_MAX / 8) : (int64_t)w;
}

/* Adds a chunk of RX_CHUNK slots (prepared for embedded peers) to the free list. */
static int rx_grow(rx_run *x) {
    if (x->nslots + RX_CHUNK > RX_MAX_SLOTS)
        return rx_fail(x, "replay: more than %zu timer slots needed", (size_t)RX_MAX_SLOTS);
    if (x->nchunks == x->capchunks) {
        size_t nc = x->capchunks * 2;
        char **ncs = realloc(x->chunk, nc * sizeof *ncs);
        if (ncs == NULL)
            return rx_fail(x, "replay: out of memory (timer slots)");
        x->chunk = ncs;
        x->capchunks = nc;
    }
    if (x->nfree + RX_CHUNK > x->capfree) {
        size_t nc = x->capfree ? x->capfree * 2 : RX_CHUNK;
        while (nc < x->nfree + RX_CHUNK)
            nc *= 2;
        uint32_t *nf = realloc(x->freel, nc * sizeof *nf);
        if (nf == NULL)
            return rx_fail(x, "replay: out of memory (timer slots)");
        x->freel = nf;
        x->capfree = nc;
    }
    char *m = tkb_xmalloc_touched(RX_CHUNK * x->stride);
    if (m == NULL)
        return rx_fail(x, "replay: out of memory (timer slots)");
    tkb_prepare_storage(x->ops, x->self, m, RX_CHUNK, x->stride, true);
    x->chunk[x->nchunks++] = m;
    for (size_t k = RX_CHUNK; k-- > 0;) /* lowest index on top */
        x->freel[x->nfree++] = (uint32_t)(x->nslots + k);
    x->nslots += RX_CHUNK;
    return 0;
}

static int rx_quarantine(rx_run *x, uint32_t s, bool need_sync) {
    if (x->qlen == x->qcap) {
        size_t nc = x->qcap ? x->qcap * 2 : 256;
        rx_qent *nq = malloc(nc * sizeof *nq);
        if (nq == NULL)
            return rx_fail(x, "replay: out of memory (timer slots)");
        for (size_t k = 0; k < x->qlen; k++)
            nq[k] = x->q[(x->qhead + k) % x->qcap];
        free(x->q);
        x->q = nq;
        x->qcap = nc;
        x->qhead = 0;
    }
    x->q[(x->qhead + x->qlen++) % x->qcap] = (rx_qent){s, need_sync, x->qseq++};
    return 0;
}

static bool rx_reusable(const rx_run *x, uint32_t s) {
    return x->ops->reusable == NULL || x->ops->reusable(x->self, rx_slot(x, s));
}

/* May the oldest quarantined slot take a schedule? */
static bool rx_q_head_ready(const rx_run *x) {
    const rx_qent *e = &x->q[x->qhead];
    return (!e->need_sync || e->seq < x->synced_seq) && rx_reusable(x, e->slot);
}

/* A slot for a new schedule: a free one, the oldest quarantined one if it is
 * ready (after a sync() when enough wait for one), else a new one. */
static int rx_take(rx_run *x, uint32_t *out) {
    if (x->nfree == 0 && x->qlen > 0) {
        bool ready = rx_q_head_ready(x);
        const rx_qent *e = &x->q[x->qhead];
        if (!ready && e->need_sync && e->seq >= x->synced_seq && x->qlen >= RX_QSYNC &&
            x->ops->sync != NULL) {
            uint64_t upto = x->qseq;
            x->ops->sync(x->self);
            x->synced_seq = upto;
            ready = rx_q_head_ready(x);
        }
        if (ready) {
            *out = e->slot;
            x->qhead = (x->qhead + 1) % x->qcap;
            x->qlen--;
            return 0;
        }
    }
    if (x->nfree == 0 && rx_grow(x) != 0)
        return -1;
    *out = x->freel[--x->nfree];
    if (rx_state(x, *out) == RX_NEW)
        x->r->spare_slots++;
    return 0;
}

typedef enum rx_was { RX_WAS_ARMED, RX_WAS_RACED, RX_WAS_FIRED } rx_was;

/* Ends slot s's schedule (state ARMED or FIRED): the peer's cancel, then
 * which of cancel and firing won. Afterwards the state is CANCELLED or FIRED
 * and no callback of it is running (an async_cancel peer may still run a
 * CANCELLED one until its next sync()). */
static int rx_detach(rx_run *x, uint32_t s, rx_was *was) {
    rx_rec *rec = rx_rec_of(x, s);
    uint32_t st = atomic_load_explicit(&rec->state, memory_order_acquire);
    /* always: frees what the peer attached to it (the executor's future) */
    int rc = x->ops->cancel(x->self, rx_slot(x, s));
    if (st != RX_ARMED) {
        *was = RX_WAS_FIRED;
        return 0;
    }
    if (rc == 1) { /* about to run, running or done: wait for its swap */
        int64_t give_up = tkb_now_ns() + RX_CALLBACK_WAIT_NS;
        while (atomic_load_explicit(&rec->state, memory_order_acquire) == RX_ARMED) {
            if (tkb_now_ns() > give_up)
                return rx_fail(x,
                               "replay: %s: the cancel of timer %u (%s) found it fired, but its "
                               "callback has not run in 10 s",
                               x->p->spec, rec->timer, rx_timer_name(x->t, rec->timer));
            sched_yield();
        }
        *was = RX_WAS_RACED;
        return 0;
    }
    uint32_t expect = RX_ARMED;
    *was = atomic_compare_exchange_strong_explicit(&rec->state, &expect, RX_CANCELLED,
                                                   memory_order_acq_rel, memory_order_acquire)
               ? RX_WAS_ARMED
               : RX_WAS_RACED;
    return 0;
}

/* After rx_detach(): slot s free at once (true: marked IDLE), or quarantined. */
static int rx_settle_slot(rx_run *x, uint32_t s, bool *kept) {
    uint32_t st = rx_state(x, s);
    bool need_sync = st == RX_CANCELLED && x->async_cancel;
    *kept = !need_sync && rx_reusable(x, s);
    if (*kept) {
        atomic_store_explicit(&rx_rec_of(x, s)->state, RX_IDLE, memory_order_relaxed);
        return 0;
    }
    return rx_quarantine(x, s, need_sync);
}

static int rx_schedule(rx_run *x, uint32_t s, uint32_t timer, int64_t deadline_ns) {
    char *slot = rx_slot(x, s);
    rx_rec *rec = (rx_rec *)(void *)(slot + x->rec_off);
    rec->base.fn = rx_fire;
    rec->ctx = &x->ctx;
    rec->deadline_ns = deadline_ns;
    rec->timer = timer;
    atomic_store_explicit(&rec->state, RX_ARMED, memory_order_release);
    int rc;
    if (x->ops->schedule_at != NULL) {
        rc = x->ops->schedule_at(x->self, slot, &rec->base, deadline_ns);
    } else {
        int64_t delay = deadline_ns - tkb_now_ns();
        rc = x->ops->schedule(x->self, slot, &rec->base, delay > 0 ? delay : 0);
    }
    if (rc != 0) {
        atomic_store_explicit(&rec->state, RX_IDLE, memory_order_relaxed);
        return rx_fail(x, "replay: %s: schedule failed for timer %u (%s)", x->p->spec, timer,
                       rx_timer_name(x->t, timer));
    }
    return 0;
}

static int rx_issue(rx_run *x, const tkt_event *ev) {
    uint32_t i = ev->timer;
    uint32_t s = x->cur[i];
    uint32_t st = s != RX_NONE ? rx_state(x, s) : RX_NEW;
    bool live = st == RX_ARMED || st == RX_FIRED; /* a schedule since the last cancel */
    rx_was was;
    bool kept;
    switch (ev->op) {
    case TKT_START:
        if (live) {
            if (rx_detach(x, s, &was) != 0)
                return -1;
            if (was == RX_WAS_FIRED) {
                x->r->starts++;
            } else {
                x->r->modifies++;
                x->r->modifies_late += was == RX_WAS_RACED;
            }
            if (rx_settle_slot(x, s, &kept) != 0)
                return -1;
            if (!kept)
                s = x->cur[i] = RX_NONE;
        } else {
            x->r->starts++;
        }
        if (s == RX_NONE) {
            if (rx_take(x, &s) != 0)
                return -1;
            x->cur[i] = s;
        }
        return rx_schedule(x, s, i, rx_wall(x, ev->deadline_ns));
    case TKT_CANCEL:
        if (!live) {
            x->r->cancels_idle++;
            return 0;
        }
        x->r->cancels++;
        if (rx_detach(x, s, &was) != 0)
            return -1;
        x->r->cancels_missed += was != RX_WAS_ARMED;
        if (rx_settle_slot(x, s, &kept) != 0)
            return -1;
        if (!kept)
            x->cur[i] = RX_NONE;
        return 0;
    default: /* EXPIRE: the service expires timers itself */
        return 0;
    }
}

/* Between events: RSS samples, the time limit, progress lines. */
static int rx_tick(rx_run *x, int64_t now, const char *phase) {
    if (now >= x->next_rss) {
        int64_t v = tkb_rss_bytes();
        if (v > x->rss_peak)
            x->rss_peak = v;
        x->next_rss = now + RX_RSS_NS;
    }
    if (x->max_ns > 0 && now - x->t0 > x->max_ns)
        return rx_fail(x,
                       "replay: %s on %s: gave up after %.1f s (max_seconds %.1f), %s: %zu of "
                       "%zu events issued",
                       x->t->name, x->p->spec, (double)(now - x->t0) / 1e9, (double)x->max_ns / 1e9,
                       phase, x->issued, x->t->count);
    if (now >= x->next_progress) {
        fprintf(stderr,
                "tkbench: replay %s on %s: %zu/%zu events issued, %llu fired, %.1f s of "
                "about %.1f s (%s)\n",
                x->t->name, x->p->spec, x->issued, x->t->count,
                (unsigned long long)atomic_load_explicit(&x->ctx.fired, memory_order_relaxed),
                (double)(now - x->t0) / 1e9, (double)(x->end_ns - x->t0) / 1e9, phase);
        x->next_progress = now + RX_PROGRESS_NS;
    }
    return 0;
}

/* Checks the trace (timers in range, known operations, times in order) and
 * finds the latest trace time the replay must wait for: the last event, or a
 * deadline that fires (one still armed at the end beyond drain_ns of trace
 * time after the last event is not waited for). */
static int rx_check_trace(const tkt_trace *t, int64_t drain_trace_ns, int64_t *end_ns, char *err,
                          size_t err_len) {
    int64_t *pending = malloc((t->ntimers ? t->ntimers : 1) * sizeof *pending);
    if (pending == NULL) {
        snprintf(err, err_len, "replay: out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->ntimers; i++)
        pending[i] = INT64_MIN;
    int64_t end = 0, prev = 0;
    for (size_t k = 0; k < t->count; k++) {
        const tkt_event *e = &t->ev[k];
        const char *bad = NULL;
        if (e->timer >= t->ntimers)
            bad = "timer index out of range";
        else if (e->op > TKT_EXPIRE)
            bad = "unknown operation";
        else if (e->t_ns < prev)
            bad = k ? "before the previous event (events out of order)" : "negative time";
        if (bad != NULL) {
            snprintf(err, err_len, "replay: trace %s: event %zu (t=%lld ns, timer %u, op %u): %s",
                     t->name, k, (long long)e->t_ns, e->timer, e->op, bad);
            free(pending);
            return -1;
        }
        prev = e->t_ns;
        if (e->op == TKT_EXPIRE)
            continue;
        int64_t *pd = &pending[e->timer];
        if (*pd != INT64_MIN && *pd <= e->t_ns && *pd > end) /* it fired before */
            end = *pd;
        *pd = e->op == TKT_START ? e->deadline_ns : INT64_MIN;
    }
    int64_t last = t->count ? t->ev[t->count - 1].t_ns : 0;
    if (last > end)
        end = last;
    for (size_t i = 0; i < t->ntimers; i++)
        if (pending[i] != INT64_MIN && pending[i] > end &&
            (drain_trace_ns <= 0 || pending[i] - last <= drain_trace_ns))
            end = pending[i];
    free(pending);
    *end_ns = end;
    return 0;
}

/* After the last event: cancels what lies beyond the drain limit, waits for
 * the rest to fire (each at most RX_GIVE_UP_NS past its deadline). */
static int rx_drain(rx_run *x, int64_t last_issue, int64_t drain_ns) {
    for (size_t i = 0; i < x->ntimers && drain_ns > 0; i++) {
        uint32_t s = x->cur[i];
        if (s == RX_NONE || rx_state(x, s) != RX_ARMED ||
            rx_rec_of(x, s)->deadline_ns - last_issue <= drain_ns)
            continue;
        rx_was was;
        bool kept;
        if (rx_detach(x, s, &was) != 0 || rx_settle_slot(x, s, &kept) != 0)
            return -1;
        x->r->unfired += was == RX_WAS_ARMED;
        if (!kept)
            x->cur[i] = RX_NONE;
    }
    for (size_t i = 0; i < x->ntimers; i++) {
        uint32_t s = x->cur[i];
        if (s == RX_NONE)
            continue;
        const rx_rec *rec = rx_rec_of(x, s);
        while (atomic_load_explicit(&rec->state, memory_order_acquire) == RX_ARMED) {
            int64_t now = tkb_now_ns();
            if (now > rec->deadline_ns + RX_GIVE_UP_NS)
                return rx_fail(x,
                               "replay: %s on %s: timer %zu (%s) still pending 30 s after its "
                               "deadline",
                               x->t->name, x->p->spec, i, rx_timer_name(x->t, (uint32_t)i));
            if (rx_tick(x, now, "waiting for the last timers") != 0)
                return -1;
            int64_t nap = rec->deadline_ns - now;
            nap = nap < TKB_NS_PER_MS ? TKB_NS_PER_MS : nap > RX_NAP_NS ? RX_NAP_NS : nap;
            tkb_sleep_ns(nap);
        }
    }
    /* a hand-off peer may run a cancelled timer until its queue is applied */
    if (x->async_cancel)
        x->ops->sync(x->self);
    return 0;
}

/* Ends every schedule still in force (fired ones too: the executor's future
 * is released by its cancel), destroys the service, frees the slots. */
static void rx_close(rx_run *x) {
    if (x->self != NULL) {
        for (uint32_t s = 0; s < x->nslots; s++) {
            uint32_t st = rx_state(x, s);
            if (st == RX_ARMED || st == RX_FIRED)
                x->ops->cancel(x->self, rx_slot(x, s));
        }
        x->ops->destroy(x->self);
        x->self = NULL;
    }
    for (size_t k = 0; k < x->nchunks; k++)
        free(x->chunk[k]);
    free(x->chunk);
    free(x->cur);
    free(x->freel);
    free(x->q);
}

static int rx_run_all(rx_run *x, const tkb_replay_exec_opts *o) {
    const tkt_trace *t = x->t;
    int64_t now = tkb_now_ns();
    x->t0 = now + RX_START_GAP_NS;
    x->end_ns = rx_wall(x, x->end_ns);
    x->next_rss = now;
    x->next_progress = x->t0 + RX_PROGRESS_NS;
    int64_t cpu0 = tkb_cpu_ns();
    uint64_t ctxt0 = tkb_other_threads_ctxt();
    int64_t first_issue = 0, last_issue = 0;
    size_t k = 0;
    while (k < t->count) {
        now = tkb_now_ns();
        int64_t due = rx_wall(x, t->ev[k].t_ns);
        if (due > now) {
            if (rx_tick(x, now, "issuing events") != 0)
                return -1;
            tkb_sleep_until_ns(due - now > RX_NAP_NS ? now + RX_NAP_NS : due);
            continue;
        }
        if (k == 0)
            first_issue = now;
        /* every event due by now, in one batch */
        for (unsigned n = 1; k < t->count; n++) {
            due = rx_wall(x, t->ev[k].t_ns);
            if (due > now || (n & 63) == 0)
                now = tkb_now_ns();
            if (due > now)
                break;
            x->r->issue_late += now - due > RX_ISSUE_LATE_NS;
            if (rx_issue(x, &t->ev[k]) != 0)
                return -1;
            k++;
            x->issued = k;
        }
        last_issue = now;
        if (rx_tick(x, now, "issuing events") != 0)
            return -1;
    }
    if (rx_drain(x, last_issue, o->drain_max_ns) != 0)
        return -1;
    x->r->cpu_ns = tkb_cpu_ns() - cpu0;
    x->r->wakeups = tkb_other_threads_ctxt() - ctxt0;
    int64_t v = tkb_rss_bytes();
    if (v > x->rss_peak)
        x->rss_peak = v;
    int64_t last_fire = atomic_load_explicit(&x->ctx.last_fire_ns, memory_order_relaxed);
    x->r->wall_ns = (last_fire > last_issue ? last_fire : last_issue) - first_issue;
    return 0;
}

/* The arguments of tkb_replay_exec(), checked. Returns 0, or -1 with a
 * message in err. */
static int rx_check_args(const tkt_trace *t, const tkb_peer *p, const tkb_replay_exec_opts *o,
                         const tkb_replay_exec_result *r, char *err, size_t err_len) {
    if (t == NULL || p == NULL || o == NULL || r == NULL) {
        snprintf(err, err_len, "replay: NULL argument");
        return -1;
    }
    if (r->late == NULL) {
        snprintf(err, err_len, "replay: no lateness histogram given");
        return -1;
    }
    if (!(o->speed > 0) || !isfinite(o->speed)) {
        snprintf(err, err_len, "replay: speed must be a finite number > 0 (got %g)", o->speed);
        return -1;
    }
    if (isnan(o->max_seconds) || o->drain_max_ns < 0) {
        snprintf(err, err_len, "replay: bad max_seconds (%g) or drain_max_ns (%lld)",
                 o->max_seconds, (long long)o->drain_max_ns);
        return -1;
    }
    if (p->svc == NULL) {
        snprintf(err, err_len, "replay: peer %s has no executor level%s%s", p->spec,
                 p->missing ? ": " : "", p->missing ? p->missing : "");
        return -1;
    }
    if ((t->count > 0 && t->ev == NULL) || t->ntimers >= RX_MAX_SLOTS) {
        snprintf(err, err_len, "replay: trace %s: no events or too many timers (%zu)", t->name,
                 t->ntimers);
        return -1;
    }
    return 0;
}

/* The replay's memory (one timer's storage per trace timer, records laid out
 * after it), the service, and its warm-up: its threads started and through
 * one firing. Returns 0, or -1 (rx_fail() said why). */
static int rx_open(rx_run *x, const tkb_replay_exec_opts *o) {
    const tkt_trace *t = x->t;
    const tkb_svc_ops *ops = x->ops;
    x->ctx.fires = calloc(t->ntimers ? t->ntimers : 1, sizeof *x->ctx.fires);
    x->cur = malloc((t->ntimers ? t->ntimers : 1) * sizeof *x->cur);
    x->chunk = malloc(4 * sizeof *x->chunk);
    x->capchunks = 4;
    if (x->ctx.fires == NULL || x->cur == NULL || x->chunk == NULL)
        return rx_fail(x, "replay: out of memory");
    x->chunk[0] = tkb_xmalloc_touched(t->ntimers * x->stride);
    if (x->chunk[0] == NULL)
        return rx_fail(x, "replay: out of memory (%zu timers)", t->ntimers);
    x->nchunks = 1;
    x->nslots = t->ntimers;
    for (size_t i = 0; i < t->ntimers; i++)
        x->cur[i] = (uint32_t)i;
    tkb_svc_opts so = {.timer_slack_ns = o->timer_slack_ns, .threads = 1};
    void *self = NULL;
    if (ops->create(x->p, &so, &self) != 0)
        return rx_fail(x, "replay: %s: service create failed", x->p->spec);
    x->self = self;
    tkb_prepare_storage(ops, self, x->chunk[0], t->ntimers, x->stride, true);
    if (ops->schedule(self, NULL, &tkb_noop, 0) != 0)
        return rx_fail(x, "replay: %s: warm-up schedule failed", x->p->spec);
    tkb_sleep_ns(20 * TKB_NS_PER_MS);
    return 0;
}

int tkb_replay_exec(const tkt_trace *t, const tkb_peer *p, const tkb_replay_exec_opts *o,
                    tkb_replay_exec_result *r, char *err, size_t err_len) {
    char dummy[1];
    if (err == NULL || err_len == 0) {
        err = dummy;
        err_len = sizeof dummy;
    }
    err[0] = '\0';
    if (rx_check_args(t, p, o, r, err, err_len) != 0)
        return -1;
    /* counters start at zero; the caller's histogram and per-timer counts are added to */
    *r = (tkb_replay_exec_result){.late = r->late, .fires = r->fires};
    int64_t end_trace;
    double drain_trace = (double)o->drain_max_ns * o->speed;
    if (rx_check_trace(t, drain_trace > 9e18 ? INT64_MAX : (int64_t)drain_trace, &end_trace, err,
                       err_len) != 0)
        return -1;
    if (t->count == 0)
        return 0;
    double need_s = (double)end_trace / o->speed / 1e9;
    if (o->max_seconds > 0 && need_s > o->max_seconds) {
        snprintf(err, err_len,
                 "replay: %s at speed %g needs %.1f s (last event at %.1f s, last firing at "
                 "%.1f s of trace time), more than max_seconds %.1f: raise the speed or the limit",
                 t->name, o->speed, need_s, (double)t->ev[t->count - 1].t_ns / 1e9,
                 (double)end_trace / 1e9, o->max_seconds);
        return -1;
    }
    const tkb_svc_ops *ops = p->svc;
    rx_run x = {.t = t,
                .p = p,
                .ops = ops,
                .r = r,
                .err = err,
                .err_len = err_len,
                .async_cancel = ops->sync != NULL && !ops->embedded,
                .speed = o->speed,
                .max_ns = o->max_seconds > 0 ? (int64_t)(o->max_seconds * 1e9) : 0,
                .ntimers = t->ntimers,
                .stride = tkb_svc_stride(ops, sizeof(rx_rec)),
                .rec_off = tkb_svc_record_offset(ops),
                .end_ns = end_trace};
    x.ctx.late = r->late;
    /* RSS before the service and the timers' storage exist */
    x.rss_peak = tkb_rss_bytes();
    int64_t rss0 = x.rss_peak;
    int rc = rx_open(&x, o);
    if (rc == 0)
        rc = rx_run_all(&x, o);
    if (rc == 0 && x.rss_peak >= 0 && rss0 >= 0)
        r->rss_peak_delta_bytes = x.rss_peak - rss0;
    rx_close(&x); /* joins the callback thread: its counts are final */
    r->fired = atomic_load_explicit(&x.ctx.fired, memory_order_acquire);
    r->fired_after_cancel = atomic_load_explicit(&x.ctx.stale, memory_order_relaxed);
    if (r->fires != NULL && x.ctx.fires != NULL)
        for (size_t i = 0; i < t->ntimers; i++)
            r->fires[i] += atomic_load_explicit(&x.ctx.fires[i], memory_order_relaxed);
    free((void *)x.ctx.fires);
    return rc;
}
