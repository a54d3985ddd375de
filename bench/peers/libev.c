/* SPDX-License-Identifier: MIT */
/* tkbench: libev's timers (Debian libev-dev 4.33) as a baseline.
 *
 * libev keeps the timers of a loop in a 4-ary heap whose array caches each
 * timer's deadline next to its pointer (EV_USE_4HEAP, EV_HEAP_CACHE_AT, both
 * on in Debian's build), each watcher holding its own index in the heap:
 * start and stop are O(log n), the minimum is at the root.
 *
 * Core level: ev_timer_start/ev_timer_stop on a loop that is not running, so
 * the cost is libev's timer heap alone. libev adds its cached loop time
 * (mn_now, CLOCK_MONOTONIC in seconds, fixed while the loop does not run) to
 * a timer's `after` when it starts it; the peer reads mn_now once (a probe
 * timer started and stopped) and starts a deadline of D ns with after =
 * D / 1e9 - mn_now, so the timer is due at D on the monotonic clock: virtual
 * time 0 is the clock's origin (the boot), as libuv's peer sets loop->time to
 * 0, and expire_all() runs the loop once (EVRUN_NOWAIT) when every timer is
 * due on the real clock. Knowing mn_now is a benchmark-only liberty; libev
 * users start timers relative to it. Expiry is not partial in virtual time,
 * so there is no core-level replay (as for libuv, docs/replay.md).
 *
 * Executor level: a loop thread of ours runs ev_run(); libev's loops are not
 * thread-safe, so user threads hand start/stop requests over through a
 * mutex-protected queue and ev_async_send() (libev's documented way in from
 * other threads), the queue and thread libuv's peer uses too (handoff.h). libev's
 * timers are relative to mn_now, the time the loop last woke: the loop thread
 * reads the clock, then ev_now_update(), once per batch, and starts each
 * timer with the delay left until its deadline from that reading, so no timer
 * is due before its deadline (libev's own advice for timers started long after
 * the loop woke). */
#define _GNU_SOURCE
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handoff.h"
#include "tkbench.h"

/* ---- core ------------------------------------------------------------------ */
typedef struct evcore {
    struct ev_loop *loop;
    ev_tstamp base; /* mn_now, the loop's cached monotonic time, while it does not run */
    size_t fired;
} evcore;

static void core_cb(struct ev_loop *loop, ev_timer *w, int revents) {
    (void)loop;
    (void)revents;
    ((evcore *)w->data)->fired++;
}

static void probe_cb(struct ev_loop *loop, ev_timer *w, int revents) {
    (void)loop;
    (void)w;
    (void)revents;
}

/* mn_now: a timer started with after = 0 is due at mn_now. */
static ev_tstamp loop_mn_now(struct ev_loop *loop) {
    ev_timer probe;
    ev_timer_init(&probe, probe_cb, 0., 0.);
    ev_timer_start(loop, &probe);
    ev_tstamp t = probe.at;
    ev_timer_stop(loop, &probe);
    return t;
}

static int core_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)p;
    (void)n_hint;
    evcore *s = calloc(1, sizeof *s);
    if (s == NULL || (s->loop = ev_loop_new(EVFLAG_AUTO)) == NULL) {
        free(s);
        return -1;
    }
    s->base = loop_mn_now(s->loop);
    *out = s;
    return 0;
}

static void core_destroy(void *self) {
    evcore *s = self;
    ev_loop_destroy(s->loop);
    free(s);
}

static void core_prepare(void *self, char *timers, size_t count) {
    ev_timer *t = (ev_timer *)(void *)timers;
    for (size_t i = 0; i < count; i++) {
        ev_init(&t[i], core_cb);
        t[i].data = self;
    }
}

/* `after` for a virtual deadline of ns (see above) */
static inline ev_tstamp after_of(const evcore *s, int64_t ns) {
    return (ev_tstamp)ns * 1e-9 - s->base;
}

static void core_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    evcore *s = self;
    ev_timer *t = (ev_timer *)(void *)timers;
    for (size_t i = i0; i < i1; i++) {
        ev_timer_set(&t[i], after_of(s, dl[i]), 0.);
        ev_timer_start(s->loop, &t[i]);
    }
}

static void core_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    evcore *s = self;
    ev_timer *t = (ev_timer *)(void *)timers;
    for (size_t k = 0; k < count; k++)
        ev_timer_stop(s->loop, &t[idx[k]]);
}

static void core_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl,
                       size_t count) {
    evcore *s = self;
    ev_timer *t = (ev_timer *)(void *)timers;
    for (size_t k = 0; k < count; k++) {
        ev_timer_stop(s->loop, &t[idx[k]]);
        ev_timer_set(&t[idx[k]], after_of(s, dl[k]), 0.);
        ev_timer_start(s->loop, &t[idx[k]]);
    }
}

static size_t core_expire_all(void *self, int64_t until_ns) {
    evcore *s = self;
    s->fired = 0;
    /* the real clock (since boot) is far past every virtual deadline */
    if (tkb_now_ns() <= until_ns)
        return 0;
    ev_run(s->loop, EVRUN_NOWAIT);
    s->base = loop_mn_now(s->loop); /* the run moved mn_now to the real clock */
    return s->fired;
}

const tkb_core_peer_ops tkb_core_libev = {
    .timer_size = sizeof(ev_timer),
    .can_expire = true,
    .create = core_create,
    .destroy = core_destroy,
    .prepare = core_prepare,
    .add_range = core_add_range,
    .cancel_list = core_cancel_list,
    .churn = core_churn,
    .expire_all = core_expire_all,
};

/* ---- service: a loop thread fed through a hand-off queue (handoff.h) ------- */
typedef struct evglue {
    ev_timer w;
    tkb_fire *f;
    int inited; /* loop thread only */
    int owned;  /* allocated by us (fire-and-forget): freed when it fires */
} evglue;

/* A fire-and-forget timer: the loop thread keeps them in a list, to free
 * those still pending when the service is destroyed (libuv's peer has
 * uv_walk() for that; libev has no way to list a loop's watchers). */
typedef struct evowned {
    evglue g; /* first: the timer's callback reaches it from the watcher */
    struct evowned *prev, *next;
} evowned;

typedef struct evsvc {
    tkb_handoff ho; /* first: the hooks reach the service from it */
    struct ev_loop *loop;
    ev_async async;
    evowned *owned; /* loop thread only */
} evsvc;

static void owned_link(evsvc *s, evowned *o) {
    o->prev = NULL;
    o->next = s->owned;
    if (s->owned != NULL)
        s->owned->prev = o;
    s->owned = o;
}

static void owned_unlink(evsvc *s, evowned *o) {
    if (o->prev != NULL)
        o->prev->next = o->next;
    else
        s->owned = o->next;
    if (o->next != NULL)
        o->next->prev = o->prev;
}

static void svc_fire(struct ev_loop *loop, ev_timer *w, int revents) {
    (void)revents;
    evglue *g = (evglue *)(void *)w;
    g->f->fn(g->f);
    if (g->owned) {
        evowned *o = (evowned *)(void *)g;
        owned_unlink(ev_userdata(loop), o);
        free(o);
    }
}

static void svc_apply(tkb_handoff *ho, const tkb_handoff_op *ops, size_t n) {
    evsvc *s = (evsvc *)(void *)ho;
    struct ev_loop *loop = s->loop;
    int64_t now_ns = 0;
    int quit = 0;
    for (size_t i = 0; i < n; i++) {
        evglue *g = ops[i].timer;
        switch (ops[i].kind) {
        case TKB_HO_START: {
            if (!g->inited) {
                ev_init(&g->w, svc_fire);
                g->inited = 1;
                if (g->owned)
                    owned_link(s, (evowned *)(void *)g);
            } else {
                ev_timer_stop(loop, &g->w); /* a start restarts an armed timer, as uv's does */
            }
            if (now_ns == 0) { /* the clock, then libev's time: mn_now >= now_ns */
                now_ns = tkb_now_ns();
                ev_now_update(loop);
            }
            int64_t d = ops[i].deadline_ns - now_ns;
            ev_timer_set(&g->w, d <= 0 ? 0. : (ev_tstamp)d * 1e-9, 0.);
            ev_timer_start(loop, &g->w);
            break;
        }
        case TKB_HO_STOP:
            if (g->inited)
                ev_timer_stop(loop, &g->w);
            break;
        case TKB_HO_QUIT:
            quit = 1;
            break;
        }
    }
    if (quit) {
        while (s->owned != NULL) {
            evowned *o = s->owned;
            ev_timer_stop(loop, &o->g.w);
            owned_unlink(s, o);
            free(o);
        }
        ev_async_stop(loop, &s->async);
        ev_break(loop, EVBREAK_ALL);
    }
}

static void svc_async(struct ev_loop *loop, ev_async *a, int revents) {
    (void)loop;
    (void)revents;
    tkb_handoff_drain(a->data);
}

static void svc_wake(tkb_handoff *ho) {
    evsvc *s = (evsvc *)(void *)ho;
    ev_async_send(s->loop, &s->async);
}

static void svc_run(tkb_handoff *ho) {
    ev_run(((evsvc *)(void *)ho)->loop, 0);
}

static const tkb_handoff_hooks svc_hooks = {.wake = svc_wake, .run = svc_run, .apply = svc_apply};

static int svc_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    (void)p;
    evsvc *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    if ((s->loop = ev_loop_new(EVFLAG_AUTO)) == NULL) {
        free(s);
        return -1;
    }
    if (tkb_handoff_init(&s->ho, &svc_hooks, o->timer_slack_ns) != 0) {
        ev_loop_destroy(s->loop);
        free(s);
        return -1;
    }
    ev_set_userdata(s->loop, s);
    ev_async_init(&s->async, svc_async);
    s->async.data = &s->ho;
    ev_async_start(s->loop, &s->async);
    if (tkb_handoff_start(&s->ho) != 0) {
        ev_async_stop(s->loop, &s->async);
        ev_loop_destroy(s->loop);
        tkb_handoff_fini(&s->ho);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void svc_destroy(void *self) {
    evsvc *s = self;
    tkb_handoff_stop(&s->ho);
    ev_loop_destroy(s->loop);
    tkb_handoff_fini(&s->ho);
    free(s);
}

static int svc_schedule(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    evsvc *s = self;
    int64_t deadline = tkb_now_ns() + (delay_ns < 0 ? 0 : delay_ns);
    evglue *g = timer;
    if (g == NULL) {
        evowned *o = calloc(1, sizeof *o);
        if (o == NULL)
            return -1;
        g = &o->g;
        g->owned = 1;
    }
    g->f = f;
    tkb_handoff_push(&s->ho, TKB_HO_START, g, deadline);
    return 0;
}

static int svc_cancel(void *self, void *timer) {
    tkb_handoff_push(&((evsvc *)self)->ho, TKB_HO_STOP, timer, 0);
    return 0;
}

/* One round: a stopped ev_timer is no longer referenced by the loop (libev
 * has no close callbacks), and a stop clears a pending callback. */
static void svc_sync(void *self) {
    tkb_handoff_sync(&((evsvc *)self)->ho, 1);
}

const tkb_svc_ops tkb_svc_libev = {
    .timer_size = sizeof(evglue),
    .create = svc_create,
    .destroy = svc_destroy,
    .schedule = svc_schedule,
    .cancel = svc_cancel,
    .sync = svc_sync,
};

/* "4.33": the library's own, at run time */
const char *tkb_libev_version(void) {
    static char v[32];
    if (v[0] == '\0')
        snprintf(v, sizeof v, "%d.%d", ev_version_major(), ev_version_minor());
    return v;
}
