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
 * other threads), exactly as libuv's peer does with uv_async_send(). libev's
 * timers are relative to mn_now, the time the loop last woke: the loop thread
 * reads the clock, then ev_now_update(), once per batch, and starts each
 * timer with the delay left until its deadline from that reading, so no timer
 * is due before its deadline (libev's own advice for timers started long after
 * the loop woke). */
#define _GNU_SOURCE
#include <ev.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- service: a loop thread fed through a hand-off queue ------------------- */
typedef struct evglue {
    ev_timer w;
    tkb_fire *f;
    int inited; /* loop thread only */
    int owned;  /* allocated by us (fire-and-forget): freed when it fires */
} evglue;

/* A fire-and-forget timer: the loop thread keeps them in a list, to free
 * those still pending when the service is destroyed. */
typedef struct evowned {
    evglue g; /* first: the timer's callback reaches it from the watcher */
    struct evowned *prev, *next;
} evowned;

enum { OP_START, OP_STOP, OP_QUIT };

typedef struct evop {
    int kind;
    evglue *g;
    int64_t deadline_ns;
} evop;

typedef struct evsvc {
    struct ev_loop *loop;
    ev_async async;
    pthread_t thread;
    int64_t slack;
    pthread_mutex_t mu; /* guards ops, submitted, processed */
    pthread_cond_t cv;
    evop *ops;
    size_t nops, capops;
    uint64_t submitted, processed;
    evop *work; /* loop thread only */
    size_t capwork;
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

static void svc_async(struct ev_loop *loop, ev_async *a, int revents) {
    (void)revents;
    evsvc *s = a->data;
    pthread_mutex_lock(&s->mu);
    evop *batch = s->ops;
    size_t n = s->nops;
    s->ops = s->work;
    size_t cap = s->capops;
    s->capops = s->capwork;
    s->nops = 0;
    s->work = batch;
    s->capwork = cap;
    pthread_mutex_unlock(&s->mu);
    int64_t now_ns = 0;
    int quit = 0;
    for (size_t i = 0; i < n; i++) {
        evglue *g = batch[i].g;
        switch (batch[i].kind) {
        case OP_START: {
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
            int64_t d = batch[i].deadline_ns - now_ns;
            ev_timer_set(&g->w, d <= 0 ? 0. : (ev_tstamp)d * 1e-9, 0.);
            ev_timer_start(loop, &g->w);
            break;
        }
        case OP_STOP:
            if (g->inited)
                ev_timer_stop(loop, &g->w);
            break;
        case OP_QUIT:
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
    pthread_mutex_lock(&s->mu);
    s->processed += n;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *svc_main(void *arg) {
    evsvc *s = arg;
    tkb_set_timer_slack(s->slack);
    ev_run(s->loop, 0);
    return NULL;
}

static void svc_push(evsvc *s, int kind, evglue *g, int64_t deadline_ns) {
    pthread_mutex_lock(&s->mu);
    if (s->nops == s->capops) {
        size_t nc = s->capops ? s->capops * 2 : 1024;
        evop *no = realloc(s->ops, nc * sizeof *no);
        if (no == NULL)
            abort(); /* benchmark harness: out of memory ends the run */
        s->ops = no;
        s->capops = nc;
    }
    s->ops[s->nops++] = (evop){kind, g, deadline_ns};
    s->submitted++;
    pthread_mutex_unlock(&s->mu);
    ev_async_send(s->loop, &s->async);
}

static int svc_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    (void)p;
    evsvc *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    s->slack = o->timer_slack_ns;
    if ((s->loop = ev_loop_new(EVFLAG_AUTO)) == NULL) {
        free(s);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    ev_set_userdata(s->loop, s);
    ev_async_init(&s->async, svc_async);
    s->async.data = s;
    ev_async_start(s->loop, &s->async);
    if (pthread_create(&s->thread, NULL, svc_main, s) != 0) {
        ev_async_stop(s->loop, &s->async);
        ev_loop_destroy(s->loop);
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void svc_destroy(void *self) {
    evsvc *s = self;
    svc_push(s, OP_QUIT, NULL, 0);
    pthread_join(s->thread, NULL);
    ev_loop_destroy(s->loop);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->ops);
    free(s->work);
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
    svc_push(s, OP_START, g, deadline);
    return 0;
}

static int svc_cancel(void *self, void *timer) {
    svc_push(self, OP_STOP, timer, 0);
    return 0;
}

/* Waits until the loop thread has applied everything submitted so far. One
 * round: a stopped ev_timer is no longer referenced by the loop (libev has
 * no close callbacks), and a stop clears a pending callback. */
static void svc_sync(void *self) {
    evsvc *s = self;
    pthread_mutex_lock(&s->mu);
    uint64_t target = s->submitted;
    while (s->processed < target)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
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
