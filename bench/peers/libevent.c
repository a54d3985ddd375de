/* SPDX-License-Identifier: MIT */
/* tkbench: libevent's timers (Debian libevent-dev 2.1) as a baseline.
 *
 * Core level: evtimer_add/evtimer_del on an event_base with no lock
 * (EVENT_BASE_FLAG_NOLOCK) that is not running. libevent reads its own clock
 * inside evtimer_add (a deadline is relative to "now"), so it has no virtual
 * time: expiry is not measured at core level (can_expire = false).
 *
 * Executor level: evthread_use_pthreads() makes a base thread-safe and
 * notifiable, so user threads call evtimer_add/evtimer_del directly while a
 * loop thread of ours runs event_base_loop(). The base is created with the
 * default configuration (no EVENT_BASE_FLAG_PRECISE_TIMER), as users do: its
 * clock is then CLOCK_MONOTONIC_COARSE, which is why it can fire early. */
#define _GNU_SOURCE
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/thread.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tkbench.h"

/* ---- core ------------------------------------------------------------------ */
static void core_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    TKB_ESCAPE(arg);
}

static int core_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)p;
    (void)n_hint;
    struct event_config *cfg = event_config_new();
    if (cfg == NULL)
        return -1;
    event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
    struct event_base *b = event_base_new_with_config(cfg);
    event_config_free(cfg);
    *out = b;
    return b ? 0 : -1;
}

static void core_destroy(void *self) {
    event_base_free(self);
}

static void core_prepare(void *self, char *timers, size_t count) {
    struct event *ev = (struct event *)(void *)timers;
    for (size_t i = 0; i < count; i++)
        evtimer_assign(&ev[i], (struct event_base *)self, core_cb, NULL);
}

static inline struct timeval tv_of(int64_t ns) {
    if (ns < 0)
        ns = 0;
    int64_t us = (ns + 999) / 1000;
    return (struct timeval){.tv_sec = (time_t)(us / 1000000),
                            .tv_usec = (suseconds_t)(us % 1000000)};
}

static void core_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    (void)self;
    struct event *ev = (struct event *)(void *)timers;
    for (size_t i = i0; i < i1; i++) {
        struct timeval tv = tv_of(dl[i]);
        evtimer_add(&ev[i], &tv);
    }
}

static void core_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    (void)self;
    struct event *ev = (struct event *)(void *)timers;
    for (size_t k = 0; k < count; k++)
        evtimer_del(&ev[idx[k]]);
}

static void core_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl,
                       size_t count) {
    (void)self;
    struct event *ev = (struct event *)(void *)timers;
    for (size_t k = 0; k < count; k++) {
        struct timeval tv = tv_of(dl[k]);
        evtimer_del(&ev[idx[k]]);
        evtimer_add(&ev[idx[k]], &tv);
    }
}

const tkb_core_peer_ops tkb_core_libevent = {
    .timer_size = sizeof(struct event),
    .can_expire = false,
    .create = core_create,
    .destroy = core_destroy,
    .prepare = core_prepare,
    .add_range = core_add_range,
    .cancel_list = core_cancel_list,
    .churn = core_churn,
};

/* ---- service ----------------------------------------------------------------- */
typedef struct evglue {
    struct event ev;
    tkb_fire *f;
    int owned; /* allocated by us (fire-and-forget): freed when it fires */
} evglue;

typedef struct evsvc {
    struct event_base *base;
    pthread_t thread;
    int64_t slack;
    struct event started_ev; /* fires once the loop runs */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started;
} evsvc;

/* event_base_loop() clears a pending loopbreak when it starts, so create()
 * waits until the loop is really running before handing the service out. */
static void svc_started(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    evsvc *s = arg;
    pthread_mutex_lock(&s->mu);
    s->started = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void svc_fire(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    evglue *g = arg;
    g->f->fn(g->f);
    if (g->owned)
        free(g);
}

static void *svc_main(void *arg) {
    evsvc *s = arg;
    tkb_set_timer_slack(s->slack);
    event_base_loop(s->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

static int svc_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    (void)p;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, (void (*)(void))evthread_use_pthreads);
    evsvc *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    s->slack = o->timer_slack_ns;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->base = event_base_new();
    if (s->base == NULL)
        goto fail;
    struct timeval zero = {0, 0};
    evtimer_assign(&s->started_ev, s->base, svc_started, s);
    evtimer_add(&s->started_ev, &zero);
    if (pthread_create(&s->thread, NULL, svc_main, s) != 0)
        goto fail;
    pthread_mutex_lock(&s->mu);
    while (!s->started)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    *out = s;
    return 0;
fail:
    if (s->base)
        event_base_free(s->base);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
    return -1;
}

typedef struct owned_list {
    evglue **v;
    size_t n, cap;
} owned_list;

static int collect_owned(const struct event_base *b, const struct event *ev, void *arg) {
    (void)b;
    owned_list *l = arg;
    if (event_get_callback(ev) != svc_fire)
        return 0;
    evglue *g = event_get_callback_arg(ev);
    if (!g->owned)
        return 0;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 1024;
        evglue **nv = realloc(l->v, nc * sizeof *nv);
        if (nv == NULL)
            return 1;
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = g;
    return 0;
}

static void svc_destroy(void *self) {
    evsvc *s = self;
    event_base_loopbreak(s->base);
    pthread_join(s->thread, NULL);
    owned_list l = {0};
    event_base_foreach_event(s->base, collect_owned, &l);
    for (size_t i = 0; i < l.n; i++) {
        evtimer_del(&l.v[i]->ev);
        free(l.v[i]);
    }
    free(l.v);
    event_base_free(s->base);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

static int svc_schedule(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    evsvc *s = self;
    evglue *g = timer;
    if (g == NULL) {
        g = malloc(sizeof *g);
        if (g == NULL)
            return -1;
        g->owned = 1;
    } else {
        g->owned = 0;
    }
    g->f = f;
    evtimer_assign(&g->ev, s->base, svc_fire, g);
    struct timeval tv = tv_of(delay_ns);
    return evtimer_add(&g->ev, &tv) == 0 ? 0 : -1;
}

static int svc_cancel(void *self, void *timer) {
    (void)self;
    evglue *g = timer;
    return evtimer_del(&g->ev) == 0 ? 0 : 1;
}

const tkb_svc_ops tkb_svc_libevent = {
    .timer_size = sizeof(evglue),
    .create = svc_create,
    .destroy = svc_destroy,
    .schedule = svc_schedule,
    .cancel = svc_cancel,
};
