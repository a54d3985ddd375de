/* SPDX-License-Identifier: MIT */
/* timerkit reliability tests: shared helpers (see rel-common.h). */
#define _POSIX_C_SOURCE 200809L
#include "rel-common.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each block carries a header with its size and a magic, so a free() with the
 * wrong size (or of a foreign pointer) is detected. 16 bytes keep the payload
 * aligned for max_align_t on the platforms we build on. */
#define REL_HDR 16u
#define REL_MAGIC UINT64_C(0x746b72656c616c63) /* "tkrelalc" */
#define REL_DEAD UINT64_C(0x646561646465616b)

static void *rel_alloc_fn(void *ctx, size_t size) {
    rel_alloc *a = ctx;
    unsigned long long n = atomic_fetch_add(&a->calls, 1) + 1;
    unsigned long long at = atomic_load(&a->fail_at), from = atomic_load(&a->fail_from);
    if ((at != 0 && n == at) || (from != 0 && n >= from)) {
        atomic_fetch_add(&a->failures, 1);
        return NULL;
    }
    unsigned char *p = malloc(REL_HDR + size);
    if (p == NULL)
        return NULL;
    uint64_t hdr[2] = {REL_MAGIC, (uint64_t)size};
    memcpy(p, hdr, sizeof(hdr));
    atomic_fetch_add(&a->allocs, 1);
    atomic_fetch_add(&a->bytes_alloc, size);
    return p + REL_HDR;
}

static void rel_free_fn(void *ctx, void *ptr, size_t size) {
    rel_alloc *a = ctx;
    unsigned char *p = (unsigned char *)ptr - REL_HDR;
    uint64_t hdr[2];
    memcpy(hdr, p, sizeof(hdr));
    if (hdr[0] != REL_MAGIC || hdr[1] != (uint64_t)size) {
        atomic_fetch_add(&a->bad_frees, 1);
        if (hdr[0] != REL_MAGIC)
            return; /* not ours, or freed twice: do not touch it */
    }
    hdr[0] = REL_DEAD;
    memcpy(p, hdr, sizeof(hdr[0]));
    atomic_fetch_add(&a->frees, 1);
    atomic_fetch_add(&a->bytes_freed, size);
    free(p);
}

void rel_alloc_init(rel_alloc *a) {
    memset(a, 0, sizeof(*a));
    a->iface.alloc = rel_alloc_fn;
    a->iface.free = rel_free_fn;
    a->iface.ctx = a;
}

void rel_alloc_fail_nth(rel_alloc *a, unsigned long long n) {
    atomic_store(&a->fail_from, 0);
    atomic_store(&a->fail_at, n == 0 ? 0 : atomic_load(&a->calls) + n);
}

void rel_alloc_fail_from(rel_alloc *a, unsigned long long n) {
    atomic_store(&a->fail_at, 0);
    atomic_store(&a->fail_from, n == 0 ? 0 : atomic_load(&a->calls) + n);
}

void rel_alloc_disarm(rel_alloc *a) {
    atomic_store(&a->fail_at, 0);
    atomic_store(&a->fail_from, 0);
}

unsigned long long rel_alloc_live_blocks(rel_alloc *a) {
    return atomic_load(&a->allocs) - atomic_load(&a->frees);
}

unsigned long long rel_alloc_live_bytes(rel_alloc *a) {
    return atomic_load(&a->bytes_alloc) - atomic_load(&a->bytes_freed);
}

void rel_options(tk_executor_options *opt, tk_queue_config *cfg, const tk_queue_ops *engine,
                 unsigned threads, const tk_allocator *alloc) {
    tk_executor_options_init(opt);
    tk_queue_config_init_for(cfg, engine); /* the engine's defaults */
    cfg->allocator = alloc;
    opt->core_pool_size = threads;
    opt->engine = engine;
    opt->engine_config = cfg;
    opt->allocator = alloc;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define REL_SANITIZED 1
#endif
#endif
#ifndef REL_SANITIZED
#define REL_SANITIZED 0
#endif

bool rel_sanitized(void) {
    return REL_SANITIZED != 0;
}

static bool under_valgrind(void) {
    const char *vg = getenv("TK_VALGRIND"); /* scripts/test.sh sets it under valgrind */
    return vg != NULL && vg[0] != '\0' && vg[0] != '0';
}

bool rel_slowed(void) {
    return rel_sanitized() || under_valgrind();
}

double rel_scale(void) {
    const char *s = getenv("TK_STRESS_SCALE");
    double v = s != NULL ? strtod(s, NULL) : 1.0;
    if (!(v > 0))
        v = 1.0;
    if (under_valgrind())
        v /= 8.0;
    return rel_sanitized() ? v / 8.0 : v;
}

long rel_scaled(long n) {
    double v = (double)n * rel_scale();
    return v < 1 ? 1 : (long)v;
}

double rel_soak_seconds(void) {
    const char *s = getenv("TK_SOAK_SECONDS");
    double v = s != NULL ? strtod(s, NULL) : 0;
    return v > 0 ? v : 0;
}

void rel_sleep_ns(int64_t ns) {
    if (ns <= 0)
        return;
    struct timespec ts = {(time_t)(ns / TK_NS_PER_S), (long)(ns % TK_NS_PER_S)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

bool rel_wait_at_least(atomic_long *flag, long want, int64_t timeout_ns) {
    int64_t end = tk_clock_now_ns() + timeout_ns;
    while (atomic_load(flag) < want) {
        if (tk_clock_now_ns() > end)
            return false;
        rel_sleep_ns(100 * TK_NS_PER_US);
    }
    return true;
}
