/* SPDX-License-Identifier: MIT */
/* tkbench: the executor-level driver shared by the workloads (harness.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"

int tkb_svc_open(const tkb_peer *p, unsigned threads, void **self) {
    tkb_svc_opts o = {.timer_slack_ns = tkb_the_run.timer_slack_ns, .threads = threads};
    return p->svc->create(p, &o, self);
}

void tkb_noop_fire(tkb_fire *f) {
    TKB_ESCAPE(f);
}
tkb_fire tkb_noop = {tkb_noop_fire};

/* Lets a service's own threads finish the asynchronous part of the previous
 * phase (hand-off queues, deferred releases) so that phases do not overlap:
 * 20 ms + 200 ns per timer. */
void tkb_settle(size_t n) {
    tkb_sleep_ns(20 * TKB_NS_PER_MS + (int64_t)n * 200);
}

/* Cancels timers[0..n) and releases their storage: after it returns the
 * storage may be freed (release() + sync(): the embedded peers wait there
 * until every stopped tk_timer is idle). */
void tkb_cancel_all(const tkb_svc_ops *ops, void *self, char *timers, size_t n) {
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
tkb_fire *tkb_idle_record(const tkb_svc_ops *ops) {
    return ops->embedded ? NULL : &tkb_noop;
}

/* Embedded peers: zeroes `count` timers of storage (untimed) and lets the
 * peer initialise them once, as a user does when it makes its structs.
 * Nothing for the other peers. */
void tkb_prepare_storage(const tkb_svc_ops *ops, void *self, char *timers, size_t count,
                         size_t stride, bool records) {
    if (ops->prepare == NULL)
        return;
    memset(timers, 0, count * stride);
    ops->prepare(self, timers, count, stride, records);
}

int tkb_fire_slots_alloc(tkb_fire_slots *fs, const tkb_svc_ops *ops, size_t n, size_t rec_size) {
    fs->storage = ops->embedded;
    fs->stride = fs->storage ? tkb_svc_stride(ops, rec_size) : rec_size;
    fs->rec_off = fs->storage ? tkb_svc_record_offset(ops) : 0;
    fs->mem = tkb_xmalloc_touched(n * fs->stride);
    return fs->mem != NULL ? 0 : -1;
}

/* Before each service: embedded storage zeroed and initialised (untimed). */
void tkb_fire_slots_prepare(tkb_fire_slots *fs, const tkb_svc_ops *ops, void *self, size_t n) {
    if (fs->storage)
        tkb_prepare_storage(ops, self, fs->mem, n, fs->stride, true);
}

int tkb_spare_churn_init(tkb_spare_churn *sc, size_t n, size_t spare) {
    size_t cap = 1;
    while (cap < spare + 1)
        cap <<= 1;
    *sc = (tkb_spare_churn){.n = n, .spare = spare, .mask = cap - 1};
    sc->slot = malloc((n ? n : 1) * sizeof *sc->slot);
    sc->fifo = malloc(cap * sizeof *sc->fifo);
    if (sc->slot == NULL || sc->fifo == NULL)
        return -1;
    memset(sc->fifo, 0, cap * sizeof *sc->fifo); /* touched before the timed loop */
    return 0;
}

void tkb_spare_churn_reset(tkb_spare_churn *sc) {
    for (size_t i = 0; i < sc->n; i++)
        sc->slot[i] = (uint32_t)i;
    sc->used = sc->head = sc->count = 0;
    sc->wait_ns = 0;
}

void tkb_spare_churn_free(tkb_spare_churn *sc) {
    free(sc->slot);
    free(sc->fifo);
}

void tkb_late_fire(tkb_fire *f) {
    int64_t now = tkb_now_ns();
    tkb_late_rec *r = (tkb_late_rec *)f;
    tkb_late_ctx *c = r->ctx;
    tkb_hist_record(c->h, now - r->deadline_ns);
    atomic_store_explicit(&c->last_ns, now, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->fired, 1, memory_order_release);
}

/* Waits until `n` callbacks ran or the deadline passed. Returns true if all ran. */
bool tkb_wait_fired(_Atomic uint64_t *fired, uint64_t n, int64_t give_up_ns) {
    while (atomic_load_explicit(fired, memory_order_acquire) < n) {
        if (tkb_now_ns() > give_up_ns)
            return false;
        tkb_sleep_ns(2 * TKB_NS_PER_MS);
    }
    return true;
}

/* Schedules `timer`/`f` to fire at `deadline_ns`: as that instant where the
 * peer's API takes one (schedule_at), else as a delay from a clock read just
 * before the call. */
int tkb_schedule_for(const tkb_svc_ops *ops, void *self, void *timer, tkb_fire *f,
                     int64_t deadline_ns) {
    if (ops->schedule_at != NULL)
        return ops->schedule_at(self, timer, f, deadline_ns);
    return ops->schedule(self, timer, f, deadline_ns - tkb_now_ns());
}

int64_t tkb_w2_offset_ns(size_t n) {
    int64_t off = (int64_t)n * 2000; /* 2 us per schedule, generous */
    return off < 200 * TKB_NS_PER_MS ? 200 * TKB_NS_PER_MS : off;
}
