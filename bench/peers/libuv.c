/* SPDX-License-Identifier: MIT */
/* tkbench: libuv's timers (Debian libuv1-dev) as a baseline.
 *
 * Core level: uv_timer_start/uv_timer_stop on a loop that is not running, so
 * the cost is libuv's timer heap alone. Virtual time: the loop's cached time
 * (loop->time, milliseconds) is set to 0 before any insert, so a deadline of
 * D ns becomes a timeout of ceil(D / 1 ms) and every timer is already due on
 * the real clock when expire_all() runs the loop once (UV_RUN_NOWAIT).
 * Touching loop->time is a benchmark-only liberty; libuv users never do it.
 *
 * Executor level: a loop thread of ours runs uv_run(); since libuv's timer
 * calls are not thread-safe, user threads hand start/stop requests over through
 * a mutex-protected queue and uv_async_send(), the way libuv programs do it
 * (the queue and the thread: handoff.h, shared with libev's peer). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "handoff.h"
#include "tkbench.h"

/* ---- core ------------------------------------------------------------------ */
typedef struct uvcore {
    uv_loop_t loop;
    size_t fired;
} uvcore;

static void core_cb(uv_timer_t *h) {
    ((uvcore *)h->data)->fired++;
}

static int core_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)p;
    (void)n_hint;
    uvcore *s = calloc(1, sizeof *s);
    if (s == NULL || uv_loop_init(&s->loop) != 0) {
        free(s);
        return -1;
    }
    s->loop.time = 0; /* virtual time origin, see above */
    *out = s;
    return 0;
}

static void close_walk(uv_handle_t *h, void *arg) {
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void core_destroy(void *self) {
    uvcore *s = self;
    uv_walk(&s->loop, close_walk, NULL);
    uv_run(&s->loop, UV_RUN_DEFAULT);
    uv_loop_close(&s->loop);
    free(s);
}

static void core_prepare(void *self, char *timers, size_t count) {
    uvcore *s = self;
    uv_timer_t *t = (uv_timer_t *)(void *)timers;
    for (size_t i = 0; i < count; i++) {
        uv_timer_init(&s->loop, &t[i]);
        t[i].data = s;
    }
}

static inline uint64_t ms_ceil(int64_t ns) {
    return ns <= 0 ? 0 : (uint64_t)((ns + 999999) / 1000000);
}

static void core_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    (void)self;
    uv_timer_t *t = (uv_timer_t *)(void *)timers;
    for (size_t i = i0; i < i1; i++)
        uv_timer_start(&t[i], core_cb, ms_ceil(dl[i]), 0);
}

static void core_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    (void)self;
    uv_timer_t *t = (uv_timer_t *)(void *)timers;
    for (size_t k = 0; k < count; k++)
        uv_timer_stop(&t[idx[k]]);
}

static void core_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl,
                       size_t count) {
    (void)self;
    uv_timer_t *t = (uv_timer_t *)(void *)timers;
    for (size_t k = 0; k < count; k++) {
        uv_timer_stop(&t[idx[k]]);
        uv_timer_start(&t[idx[k]], core_cb, ms_ceil(dl[k]), 0);
    }
}

static size_t core_expire_all(void *self, int64_t until_ns) {
    uvcore *s = self;
    s->fired = 0;
    /* the real clock (ms since boot) is far past every virtual deadline */
    if ((int64_t)(uv_hrtime() / 1000000) < until_ns / 1000000 + 1)
        return 0;
    uv_run(&s->loop, UV_RUN_NOWAIT);
    return s->fired;
}

const tkb_core_peer_ops tkb_core_libuv = {
    .timer_size = sizeof(uv_timer_t),
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
typedef struct uvglue {
    uv_timer_t h;
    tkb_fire *f;
    int inited; /* loop thread only */
    int owned;  /* allocated by us (fire-and-forget): freed when it fires */
} uvglue;

typedef struct uvsvc {
    tkb_handoff ho; /* first: the hooks reach the service from it */
    uv_loop_t loop;
    uv_async_t async;
} uvsvc;

static void svc_fire(uv_timer_t *h) {
    uvglue *g = (uvglue *)(void *)h;
    g->f->fn(g->f);
    if (g->owned)
        uv_close((uv_handle_t *)h, (uv_close_cb)free);
}

/* On QUIT: every handle closed, the fire-and-forget timers freed by their
 * close callbacks; the loop then has nothing left and uv_run() returns. */
static void close_all(uv_handle_t *h, void *arg) {
    uvsvc *s = arg;
    if (uv_is_closing(h))
        return;
    if (h == (uv_handle_t *)&s->async) {
        uv_close(h, NULL);
        return;
    }
    uvglue *g = (uvglue *)(void *)h;
    uv_close(h, g->owned ? (uv_close_cb)free : NULL);
}

static void svc_apply(tkb_handoff *ho, const tkb_handoff_op *ops, size_t n) {
    uvsvc *s = (uvsvc *)(void *)ho;
    uint64_t now_ns = 0;
    int quit = 0;
    for (size_t i = 0; i < n; i++) {
        uvglue *g = ops[i].timer;
        switch (ops[i].kind) {
        case TKB_HO_START: {
            if (!g->inited) {
                uv_timer_init(&s->loop, &g->h);
                g->inited = 1;
            }
            if (now_ns == 0)
                now_ns = (int64_t)uv_hrtime();
            int64_t d = ops[i].deadline_ns - (int64_t)now_ns;
            uv_timer_start(&g->h, svc_fire, d <= 0 ? 0 : (uint64_t)((d + 999999) / 1000000), 0);
            break;
        }
        case TKB_HO_STOP:
            if (g->inited)
                uv_timer_stop(&g->h);
            break;
        case TKB_HO_CLOSE:
            if (g->inited) {
                uv_close((uv_handle_t *)&g->h, NULL);
                g->inited = 0;
            }
            break;
        case TKB_HO_QUIT:
            quit = 1;
            break;
        }
    }
    if (quit)
        uv_walk(&s->loop, close_all, s);
}

static void svc_async(uv_async_t *a) {
    tkb_handoff_drain(a->data);
}

static void svc_wake(tkb_handoff *ho) {
    uv_async_send(&((uvsvc *)(void *)ho)->async);
}

static void svc_run(tkb_handoff *ho) {
    uv_run(&((uvsvc *)(void *)ho)->loop, UV_RUN_DEFAULT);
}

static const tkb_handoff_hooks svc_hooks = {.wake = svc_wake, .run = svc_run, .apply = svc_apply};

static int svc_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    (void)p;
    uvsvc *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    if (tkb_handoff_init(&s->ho, &svc_hooks, o->timer_slack_ns) != 0) {
        free(s);
        return -1;
    }
    if (uv_loop_init(&s->loop) != 0 || uv_async_init(&s->loop, &s->async, svc_async) != 0) {
        tkb_handoff_fini(&s->ho);
        free(s);
        return -1;
    }
    s->async.data = &s->ho;
    if (tkb_handoff_start(&s->ho) != 0) {
        uv_close((uv_handle_t *)&s->async, NULL);
        uv_run(&s->loop, UV_RUN_DEFAULT);
        uv_loop_close(&s->loop);
        tkb_handoff_fini(&s->ho);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void svc_destroy(void *self) {
    uvsvc *s = self;
    tkb_handoff_stop(&s->ho);
    uv_loop_close(&s->loop);
    tkb_handoff_fini(&s->ho);
    free(s);
}

static int svc_schedule(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    uvsvc *s = self;
    int64_t deadline = tkb_now_ns() + (delay_ns < 0 ? 0 : delay_ns);
    uvglue *g = timer;
    if (g == NULL) {
        g = calloc(1, sizeof *g);
        if (g == NULL)
            return -1;
        g->owned = 1;
    }
    g->f = f;
    tkb_handoff_push(&s->ho, TKB_HO_START, g, deadline);
    return 0;
}

static int svc_cancel(void *self, void *timer) {
    tkb_handoff_push(&((uvsvc *)self)->ho, TKB_HO_STOP, timer, 0);
    return 0;
}

static void svc_release(void *self, void *timer) {
    tkb_handoff_push(&((uvsvc *)self)->ho, TKB_HO_CLOSE, timer, 0);
}

/* Two rounds: the second request is handled in a later loop iteration, after
 * the close callbacks of handles closed by the first have run. */
static void svc_sync(void *self) {
    tkb_handoff_sync(&((uvsvc *)self)->ho, 2);
}

const tkb_svc_ops tkb_svc_libuv = {
    .timer_size = sizeof(uvglue),
    .create = svc_create,
    .destroy = svc_destroy,
    .schedule = svc_schedule,
    .cancel = svc_cancel,
    .release = svc_release,
    .sync = svc_sync,
};
