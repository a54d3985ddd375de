/* SPDX-License-Identifier: MIT */
/* timerkit: helpers shared by every library target. Internal. */
#ifndef TIMERKIT_COMMON_INTERNAL_H
#define TIMERKIT_COMMON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "timerkit/alloc.h"
#include "timerkit/clock.h"
#include "timerkit/status.h"

#define tk__container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#define TK__UNUSED(x) ((void)(x))

#if defined(__GNUC__)
#define TK__LIKELY(x) __builtin_expect(!!(x), 1)
#define TK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TK__LIKELY(x) (x)
#define TK__UNLIKELY(x) (x)
#endif

/* One pause of a busy-wait loop (lets a sibling hyper-thread run). */
static inline void tk__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* `size` rounded up to the alignment of any type: where a block that holds a
 * header and then an engine core's state puts the state (the blocking
 * adapter's queue, the passive loop). */
#define TK__MAX_ALIGN_UP(size)                                                                     \
    (((size) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) * _Alignof(max_align_t))

/* Poison value written into unlinked pointers in debug builds. */
#define TK__POISON_PTR ((void *)(uintptr_t)0xdead000000000100ull)

/* Allocation through an allocator that may be NULL (= default). */
static inline void *tk__alloc(const tk_allocator *a, size_t size) {
    if (a == NULL)
        a = tk_allocator_default();
    return a->alloc(a->ctx, size);
}

static inline void tk__free(const tk_allocator *a, void *ptr, size_t size) {
    if (ptr == NULL)
        return;
    if (a == NULL)
        a = tk_allocator_default();
    a->free(a->ctx, ptr, size);
}

/* Absolute CLOCK_MONOTONIC nanoseconds to a timespec (for
 * pthread_cond_timedwait on a condvar whose clock is CLOCK_MONOTONIC). */
static inline struct timespec tk__ns_to_timespec(int64_t ns) {
    struct timespec ts;
    if (ns < 0)
        ns = 0;
    ts.tv_sec = (time_t)(ns / TK_NS_PER_S);
    ts.tv_nsec = (long)(ns % TK_NS_PER_S);
    return ts;
}

/* Saturating add of two non-negative-or-any int64 values. */
static inline int64_t tk__sat_add(int64_t a, int64_t b) {
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* Initialises a condition variable that waits on CLOCK_MONOTONIC.
 * Returns 0 or an errno value. Defined in common.c. */
#include <pthread.h>
int tk__cond_init_monotonic(pthread_cond_t *cond);

/* Sets the calling thread's name (truncated to 15 bytes); best effort. */
void tk__thread_set_name(const char *name);

#endif
