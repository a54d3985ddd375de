/* SPDX-License-Identifier: MIT */
/* timerkit: status table, default allocator, clock, the engine-neutral config. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common-internal.h"
#include "timerkit/queue.h"

const char *tk_strerror(int status) {
    switch (status) {
#define TK__STATUS_TEXT(name, value, text)                                                         \
    case (value):                                                                                  \
        return (text);
        TK_STATUS_MAP(TK__STATUS_TEXT)
#undef TK__STATUS_TEXT
    default:
        return "unknown status";
    }
}

const char *tk_status_name(int status) {
    switch (status) {
#define TK__STATUS_NAME(name, value, text)                                                         \
    case (value):                                                                                  \
        return "TK_" #name;
        TK_STATUS_MAP(TK__STATUS_NAME)
#undef TK__STATUS_NAME
    default:
        return "TK_UNKNOWN";
    }
}

static void *default_alloc(void *ctx, size_t size) {
    (void)ctx;
    return malloc(size);
}

static void default_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    free(ptr);
}

/* Immutable after static initialisation: not mutable global state. */
static const tk_allocator default_allocator = {default_alloc, default_free, NULL};

const tk_allocator *tk_allocator_default(void) {
    return &default_allocator;
}

int64_t tk_clock_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * TK_NS_PER_S + (int64_t)ts.tv_nsec;
}

int64_t tk_deadline_after_ns(int64_t now_ns, int64_t delay_ns) {
    if (delay_ns <= 0)
        return now_ns;
    return tk__sat_add(now_ns, delay_ns);
}

int tk_queue_config_init(tk_queue_config *cfg) {
    if (cfg == NULL)
        return TK_EINVAL;
    memset(cfg, 0, sizeof(*cfg));
    cfg->allocator = NULL;   /* tk_allocator_default() */
    cfg->thread_name = NULL; /* the engine's own default */
    cfg->spin_ns = 0;
    cfg->max_pending = 0;
    cfg->engine = NULL; /* no engine's parameters: each engine's defaults */
    return TK_OK;
}

int tk__cond_init_monotonic(pthread_cond_t *cond) {
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc != 0)
        return rc;
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}

void tk__thread_set_name(const char *name) {
    char buf[16];
    if (name == NULL)
        return;
    strncpy(buf, name, sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = '\0';
    (void)pthread_setname_np(pthread_self(), buf);
}

void tk__spin_wait(tk__spinlock *l) {
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(&l->held, memory_order_relaxed) == 0 &&
            atomic_exchange_explicit(&l->held, 1, memory_order_acquire) == 0)
            return;
        if (spins < 64)
            tk__cpu_relax();
        else
            sched_yield();
    }
}

_Static_assert(TK__THREAD_SLOTS == TK_NODE_SHARD_KEYS, "a slot is a shard key");

_Thread_local unsigned tk__thread_slot_plus1;

/* The next slot to hand out (common-internal.h: the one place of this state). */
static _Atomic unsigned slot_turn;

unsigned tk__thread_slot_assign(void) {
    unsigned s = atomic_fetch_add_explicit(&slot_turn, 1, memory_order_relaxed) % TK__THREAD_SLOTS;
    tk__thread_slot_plus1 = s + 1;
    return s;
}

unsigned tk__shard_count(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned n = 1;
    while (n < TK__THREAD_SLOTS && (long)n < cpus)
        n *= 2;
    return n;
}
