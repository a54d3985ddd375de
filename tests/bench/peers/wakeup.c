/* SPDX-License-Identifier: MIT */
/* A peer of the test build only (tests/bench/test-peers.h): timerkit's
 * executor with the heap (bench/peers/tk-executor.c), and beside it a thread
 * of its own that wakes once a second, as a service with a helper thread
 * would. W4 must see that thread's wake-ups among the service's
 * (tests/bench/check-idle.sh). Every operation but create and destroy is the
 * executor's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "tkbench.h"

typedef struct wakeup {
    void *inner;        /* the executor peer's service */
    pthread_t th;       /* the thread that wakes once a second */
    pthread_mutex_t mu; /* guards stop */
    pthread_cond_t cv;  /* signalled by destroy; CLOCK_MONOTONIC */
    bool stop;          /* guarded by mu */
} wakeup;

static void *wakeup_main(void *arg) {
    wakeup *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        at.tv_sec += 1;
        pthread_cond_timedwait(&w->cv, &w->mu, &at); /* one wake-up a second */
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static int wakeup_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    (void)p;
    tkb_peer heap;
    wakeup *w = calloc(1, sizeof *w);
    if (w == NULL)
        return -1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&w->mu, NULL);
    if (tkb_peer_parse("heap", &heap, NULL, 0) != 0 ||
        tkb_svc_executor.create(&heap, o, &w->inner) != 0) {
        free(w);
        return -1;
    }
    if (pthread_create(&w->th, NULL, wakeup_main, w) != 0) {
        tkb_svc_executor.destroy(w->inner);
        free(w);
        return -1;
    }
    *out = w;
    return 0;
}

static void wakeup_destroy(void *self) {
    wakeup *w = self;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    tkb_svc_executor.destroy(w->inner);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

static int wakeup_schedule(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    return tkb_svc_executor.schedule(((wakeup *)self)->inner, timer, f, delay_ns);
}

static int wakeup_schedule_at(void *self, void *timer, tkb_fire *f, int64_t deadline_ns) {
    return tkb_svc_executor.schedule_at(((wakeup *)self)->inner, timer, f, deadline_ns);
}

static int wakeup_cancel(void *self, void *timer) {
    return tkb_svc_executor.cancel(((wakeup *)self)->inner, timer);
}

const tkb_svc_ops tkb_svc_test_wakeup = {
    .timer_size = sizeof(void *),
    .create = wakeup_create,
    .destroy = wakeup_destroy,
    .schedule = wakeup_schedule,
    .schedule_at = wakeup_schedule_at,
    .cancel = wakeup_cancel,
};
