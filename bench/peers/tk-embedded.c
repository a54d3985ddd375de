/* SPDX-License-Identifier: MIT */
/* tkbench: timerkit's executor through its embedded timers (tk_timer, the
 * zero-allocation path) as an executor-level peer: the `*-embedded` peers.
 *
 * The user's storage is the tk_timer itself (72 bytes) and nothing else, as a
 * program embeds it in a struct of its own (tkb_svc_ops.embedded):
 * - prepare() runs tk_timer_init() once per timer, untimed, as a user does
 *   when it creates its struct; schedule() is tk_timer_start(),
 *   schedule_at() tk_timer_start_at(), cancel() tk_timer_stop(). None of
 *   them allocates.
 * - A timer whose record follows it (workloads whose timers fire: W2, W3)
 *   gets slot_fire, which finds the record with container_of; a timer
 *   without one (W1, W4, W5, W7: nothing fires) gets fire_nothing, so no
 *   pointer to a record is kept anywhere and W5 counts 72 bytes a timer plus
 *   what the engine allocates (the heap's array; nothing for the wheel).
 * - Without storage (the warm-ups' fire-and-forget timers) the peer
 *   allocates a tk_timer and a record pointer and frees them when it fires.
 * - stop() always removes the timer from the engine, whatever the
 *   remove-on-cancel policy (on here, as for the task peers, for the
 *   warm-up task only). An engine with TK_QUEUE_CAP_DEFERRED_RELEASE may
 *   keep hold of a stopped timer for a while (the wheel's tick thread, until
 *   its next pass, later while it falls behind sustained churn): release()
 *   notes such timers and sync() waits until every one is idle, so that the
 *   workloads free or re-prepare only idle storage. For those engines the
 *   ops add reusable() (tkb_svc_executor_timer_deferred), which tells the
 *   hold-model loops whether a stopped timer can be started again yet; any
 *   other engine's stop is synchronous, and its peer restarts the same
 *   timer. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timerkit.h"
#include "tkbench.h"

bool tkb_engine_wakeups(tk_executor *ex, uint64_t *out); /* tk-engine-stats.c */
int tkb_executor_open(const tkb_peer *p, const tkb_svc_opts *o, tk_queue_config *qc,
                      tk_executor **out); /* tk-executor.c */

#define CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* A workload's (storage, record) pair: the record starts at
 * tkb_svc_record_offset(), i.e. right after the 64-byte timer. */
typedef struct slot {
    tk_timer timer;
    _Alignas(max_align_t) unsigned char record[];
} slot;
_Static_assert(sizeof(tk_timer) == 72, "tk_timer is documented as 72 bytes");
_Static_assert(offsetof(slot, record) == (sizeof(tk_timer) + _Alignof(max_align_t) - 1) /
                                             _Alignof(max_align_t) * _Alignof(max_align_t),
               "the record sits at tkb_svc_record_offset()");

typedef struct etsvc etsvc;

/* A fire-and-forget timer (no storage given): allocated here, on the
 * service's list of them until it fires and frees itself; destroy() frees
 * those that never fired (a warm-up timer on a wheel with a long tick may
 * still be pending when the workload is done). */
typedef struct owned {
    tk_timer timer;
    tkb_fire *f;
    etsvc *svc;
    struct owned *prev, *next; /* on svc->owned, under svc->mu */
} owned;

struct etsvc {
    tk_executor *ex;
    tk_queue_config qc;
    int64_t slack_ns;   /* the spec's slack=: every timer's own (set once, read-only) */
    pthread_mutex_t mu; /* guards held, nheld, capheld and owned */
    tk_timer **held;    /* released timers that were not idle yet: sync() waits */
    size_t nheld, capheld;
    owned *owned; /* fire-and-forget timers that have not fired */
};

/* tk_timer_init(), then the timer's slack (the spec's slack=), which the
 * timer keeps from one start to the next. */
static void timer_init(const etsvc *s, tk_timer *t, tk_timer_fn fn) {
    tk_timer_init(t, fn);
    tk_timer_set_slack(t, s->slack_ns); /* a fresh timer is IDLE and slack_ns >= 0 */
}

static void fire_nothing(tk_timer *t) {
    TKB_ESCAPE(t);
}

static void slot_fire(tk_timer *t) {
    tkb_fire *f = (tkb_fire *)(void *)CONTAINER_OF(t, slot, timer)->record;
    f->fn(f);
}

static void owned_fire(tk_timer *t) {
    owned *o = CONTAINER_OF(t, owned, timer);
    tkb_fire *f = o->f;
    etsvc *s = o->svc;
    pthread_mutex_lock(&s->mu);
    if (o->prev != NULL)
        o->prev->next = o->next;
    else
        s->owned = o->next;
    if (o->next != NULL)
        o->next->prev = o->prev;
    pthread_mutex_unlock(&s->mu);
    free(o); /* the callback owns the (idle) timer */
    f->fn(f);
}

static int et_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    etsvc *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    if (tkb_executor_open(p, o, &s->qc, &s->ex) != 0) {
        free(s);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    s->slack_ns = p->slack_ns;
    *out = s;
    return 0;
}

/* Destroying the executor stops the timers still queued and waits for its
 * threads: every timer is idle afterwards. */
static void et_destroy(void *self) {
    etsvc *s = self;
    tk_executor_destroy(s->ex);
    for (owned *o = s->owned, *next; o != NULL; o = next) { /* never fired */
        next = o->next;
        free(o);
    }
    pthread_mutex_destroy(&s->mu);
    free(s->held);
    free(s);
}

static void et_prepare(void *self, char *timers, size_t count, size_t stride, bool records) {
    for (size_t i = 0; i < count; i++)
        timer_init(self, (tk_timer *)(void *)(timers + i * stride),
                   records ? slot_fire : fire_nothing);
}

static int et_schedule(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    etsvc *s = self;
    if (timer == NULL) {
        owned *o = malloc(sizeof *o);
        if (o == NULL)
            return -1;
        timer_init(s, &o->timer, owned_fire);
        o->f = f;
        o->svc = s;
        o->prev = NULL;
        pthread_mutex_lock(&s->mu); /* listed before it can fire */
        o->next = s->owned;
        if (s->owned != NULL)
            s->owned->prev = o;
        s->owned = o;
        pthread_mutex_unlock(&s->mu);
        if (tk_timer_start(s->ex, &o->timer, delay_ns) != TK_OK) {
            pthread_mutex_lock(&s->mu);
            s->owned = o->next;
            if (o->next != NULL)
                o->next->prev = NULL;
            pthread_mutex_unlock(&s->mu);
            free(o);
            return -1;
        }
        return 0;
    }
    /* the record, if any, must be the one that follows the storage (prepare()
     * chose the callback accordingly) */
    if (f != NULL && (unsigned char *)f != ((slot *)timer)->record)
        return -1;
    return tk_timer_start(s->ex, timer, delay_ns) == TK_OK ? 0 : -1;
}

static int et_schedule_at(void *self, void *timer, tkb_fire *f, int64_t deadline_ns) {
    etsvc *s = self;
    if (timer == NULL || (f != NULL && (unsigned char *)f != ((slot *)timer)->record))
        return -1;
    return tk_timer_start_at(s->ex, timer, deadline_ns) == TK_OK ? 0 : -1;
}

static int et_cancel(void *self, void *timer) {
    etsvc *s = self;
    return tk_timer_stop(s->ex, timer) == TK_OK ? 0 : 1;
}

/* For an engine whose remove() completes at once: a stop() that won is
 * idle when it returns, but for a worker that had just taken the due timer
 * when the stop won; that worker turns it idle in a few instructions, and
 * the callers restart the same storage, so wait for it here. */
static int et_cancel_sync(void *self, void *timer) {
    int rc = et_cancel(self, timer);
    while (rc == 0 && !tk_timer_is_idle(timer))
        sched_yield();
    return rc;
}

static void et_release(void *self, void *timer) {
    etsvc *s = self;
    if (tk_timer_is_idle(timer))
        return;
    pthread_mutex_lock(&s->mu);
    if (s->nheld == s->capheld) {
        size_t nc = s->capheld ? s->capheld * 2 : 1024;
        tk_timer **nh = realloc(s->held, nc * sizeof *nh);
        if (nh == NULL)
            abort(); /* benchmark harness: out of memory ends the run */
        s->held = nh;
        s->capheld = nc;
    }
    s->held[s->nheld++] = timer;
    pthread_mutex_unlock(&s->mu);
}

/* Waits until every released timer is idle. An engine thread that holds
 * stopped timers (the wheel's tick thread) lets go of them at its next pass,
 * many at once, so only the first waits are long. */
static void et_sync(void *self) {
    etsvc *s = self;
    pthread_mutex_lock(&s->mu);
    int64_t t0 = tkb_now_ns();
    bool warned = false;
    for (size_t i = 0; i < s->nheld; i++) {
        while (!tk_timer_is_idle(s->held[i])) {
            if (!warned && tkb_now_ns() - t0 > INT64_C(10000000000)) {
                fprintf(stderr,
                        "tkbench: embedded timer %p stopped but still not idle after "
                        "10 s; waiting (its memory cannot be freed before)\n",
                        (void *)s->held[i]);
                warned = true;
            }
            tkb_sleep_ns(100000);
        }
    }
    free(s->held);
    s->held = NULL;
    s->nheld = s->capheld = 0;
    pthread_mutex_unlock(&s->mu);
}

static bool et_reusable(void *self, void *timer) {
    (void)self;
    return tk_timer_is_idle(timer);
}

static bool et_wakeups(void *self, uint64_t *out) {
    return tkb_engine_wakeups(((etsvc *)self)->ex, out);
}

/* Every op but cancel() and reusable(): the two tables below differ only in
 * those. */
#define ET_OPS                                                                                     \
    .timer_size = sizeof(tk_timer), .embedded = true, .create = et_create, .destroy = et_destroy,  \
    .schedule = et_schedule, .schedule_at = et_schedule_at, .release = et_release,                 \
    .prepare = et_prepare, .sync = et_sync, .wakeups = et_wakeups

/* An engine without TK_QUEUE_CAP_DEFERRED_RELEASE: its remove() completes at
 * once, so a stopped timer is idle when cancel() returns (et_cancel_sync; a
 * timer waiting in a worker's batch is taken out of it by the stop) and the
 * loops restart the same storage, as for every other peer. A failed restart
 * would show as "schedule failed". */
const tkb_svc_ops tkb_svc_executor_timer = {ET_OPS, .cancel = et_cancel_sync};

/* An engine with TK_QUEUE_CAP_DEFERRED_RELEASE hands a stopped timer back
 * later (the wheel: at its tick thread's next pass), so the hold-model loops
 * ask reusable() and re-arm a spare meanwhile. */
const tkb_svc_ops tkb_svc_executor_timer_deferred = {ET_OPS, .cancel = et_cancel,
                                                     .reusable = et_reusable};
