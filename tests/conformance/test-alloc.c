/* SPDX-License-Identifier: MIT */
/* Conformance: the injectable allocator, allocation failure, no leaks. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* Counts blocks and bytes; fails the Nth allocation (1-based) or every one. */
typedef struct failing {
    atomic_long calls;   /* alloc() calls, failed ones included */
    atomic_long live;    /* blocks handed out and not freed */
    atomic_llong bytes;  /* bytes handed out and not freed */
    atomic_long fail_at; /* 0: never */
    atomic_int fail_all;
    atomic_long failures;
    atomic_int bad_free; /* free() of a size that does not add up */
    tk_allocator a;
} failing;

static void *failing_alloc(void *ctx, size_t size) {
    failing *f = ctx;
    long n = atomic_fetch_add(&f->calls, 1) + 1;
    if (atomic_load(&f->fail_all) || n == atomic_load(&f->fail_at)) {
        atomic_fetch_add(&f->failures, 1);
        return NULL;
    }
    /* Keep the size in front of the block to check free()'s size argument. */
    size_t *p = malloc(size + 16);
    if (p == NULL)
        return NULL;
    p[0] = size;
    atomic_fetch_add(&f->live, 1);
    atomic_fetch_add(&f->bytes, (long long)size);
    return (char *)p + 16;
}

static void failing_free(void *ctx, void *ptr, size_t size) {
    failing *f = ctx;
    size_t *p = (size_t *)(void *)((char *)ptr - 16);
    if (p[0] != size)
        atomic_fetch_add(&f->bad_free, 1);
    atomic_fetch_sub(&f->live, 1);
    atomic_fetch_sub(&f->bytes, (long long)p[0]);
    free(p);
}

static failing *failing_new(ct *t) {
    failing *f = ct_calloc(t, 1, sizeof(*f));
    f->a.alloc = failing_alloc;
    f->a.free = failing_free;
    f->a.ctx = f;
    return f;
}

/* Options whose executor and engine both allocate through `f`. */
static void failing_options(ct *t, failing *f, tk_executor_options *opt, unsigned threads) {
    ct_options(t, opt, threads);
    tk_queue_config *cfg = ct_calloc(t, 1, sizeof(*cfg));
    *cfg = t->eng->config;
    cfg->allocator = &f->a;
    opt->engine_config = cfg;
    opt->allocator = &f->a;
}

static void allocator_gets_every_block_back(void **state) {
    ct *t = CT(state);
    failing *fa = failing_new(t);
    tk_executor_options opt;
    failing_options(t, fa, &opt, 2);
    tk_executor *ex = ct_create(t, &opt);
    counter *c = counter_new(t);
    tk_future *f = NULL;
    for (int i = 0; i < 200; i++)
        assert_int_equal(tk_executor_schedule(ex, counter_fn, c, (i % 10) * TK_NS_PER_MS, NULL),
                         TK_OK);
    f = ct_schedule_periodic(t, ex, TK_TASK_FIXED_RATE, counter_fn, c, 0, MS(1));
    assert_true(wait_ge(&c->runs, 205, CONF_WAIT));
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, TK_NS_PER_S * 20, NULL), TK_OK);
    ct_destroy(t, ex);
    ct_release(t, f);
    assert_true(atomic_load(&fa->calls) > 0); /* it is used at all */
    assert_int_equal(atomic_load(&fa->failures), 0);
    assert_int_equal(atomic_load(&fa->live), 0);
    assert_int_equal(atomic_load(&fa->bytes), 0);
    assert_int_equal(atomic_load(&fa->bad_free), 0);
}

static void allocation_failure_at_create_is_enomem(void **state) {
    ct *t = CT(state);
    failing *fa = failing_new(t);
    tk_executor_options opt;
    failing_options(t, fa, &opt, 1);
    int failures = 0;
    for (long n = 1; n <= 200; n++) {
        atomic_store(&fa->calls, 0);
        atomic_store(&fa->fail_at, n);
        tk_executor *ex = NULL;
        int rc = tk_executor_create(&opt, &ex);
        if (rc == TK_OK) {
            ct_adopt(t, ex);
            break;
        }
        assert_int_equal(rc, TK_ENOMEM);
        assert_null(ex);
        assert_int_equal(atomic_load(&fa->live), 0); /* nothing leaked on the way out */
        failures++;
    }
    assert_true(failures >= 1); /* create allocates through the allocator */
    atomic_store(&fa->fail_at, 0);
    tk_executor *ex = t->executors.items[t->executors.len - 1];
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(1), NULL), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
    ct_destroy(t, ex);
    assert_int_equal(atomic_load(&fa->live), 0);
}

static void allocation_failure_while_scheduling_is_enomem(void **state) {
    ct *t = CT(state);
    failing *fa = failing_new(t);
    tk_executor_options opt;
    failing_options(t, fa, &opt, 1);
    tk_executor *ex = ct_create(t, &opt);
    assert_int_equal(tk_executor_prestart_all_core_threads(ex), 1);
    counter *c = counter_new(t);
    /* Fail the next allocation, whenever scheduling makes one (task objects
     * may be pre-allocated or recycled, so keep scheduling until it does). */
    atomic_store(&fa->fail_at, atomic_load(&fa->calls) + 1);
    int rc = TK_OK, accepted = 0;
    tk_future *const sentinel = (tk_future *)c;
    tk_future *f = sentinel;
    tk_executor_stats before = stats_of(ex);
    for (int i = 0; i < 5000 && rc == TK_OK; i++) {
        before = stats_of(ex);
        f = sentinel;
        rc = tk_executor_schedule(ex, counter_fn, c, TK_NS_PER_S * 20, &f);
        if (rc == TK_OK) {
            ct_track(t, f);
            accepted++;
        }
    }
    assert_int_equal(rc, TK_ENOMEM);
    assert_int_equal(atomic_load(&fa->failures), 1);
    assert_ptr_equal(f, sentinel);
    tk_executor_stats after = stats_of(ex);
    assert_int_equal(after.task_count, before.task_count);
    assert_int_equal(after.queue_size, before.queue_size);
    assert_int_equal(after.queue_size, (size_t)accepted);
    /* Still usable. */
    counter *d = counter_new(t);
    tk_future *g = ct_schedule(t, ex, counter_fn, d, MS(1));
    assert_int_equal(tk_future_get_timeout(g, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&d->runs), 1);
    /* Failing every allocation from now on: each call fails cleanly or works. */
    atomic_store(&fa->fail_all, 1);
    for (int i = 0; i < 100; i++) {
        f = sentinel;
        rc = tk_executor_schedule(ex, counter_fn, c, TK_NS_PER_S * 20, &f);
        assert_true(rc == TK_OK || rc == TK_ENOMEM);
        if (rc == TK_OK)
            ct_track(t, f);
        else
            assert_ptr_equal(f, sentinel);
    }
    atomic_store(&fa->fail_all, 0);
    ct_destroy(t, ex);
    assert_int_equal(atomic_load(&c->runs), 0);
    for (size_t i = 0; i < t->futures.len; i++)
        assert_int_equal(tk_future_release(t->futures.items[i]), TK_OK);
    t->futures.len = 0;
    assert_int_equal(atomic_load(&fa->live), 0);
}

/* Embedded timers allocate nothing themselves; an engine that must grow to
 * take one (the heap) fails the start with TK_ENOMEM, and that timer is left
 * idle, never fired, while the others are unaffected. */
static void timer_fire(tk_timer *tm) {
    (void)tm;
}

static void timer_start_under_allocation_failure(void **state) {
    ct *t = CT(state);
    failing *fa = failing_new(t);
    tk_executor_options opt;
    failing_options(t, fa, &opt, 1);
    tk_executor *ex = ct_create(t, &opt);
    enum { N = 300 };
    tk_timer *tm = ct_calloc(t, N, sizeof(*tm));
    int *rc = ct_calloc(t, N, sizeof(int));
    assert_int_equal(tk_timer_init(&tm[0], timer_fire), TK_OK);
    assert_int_equal(tk_timer_start(ex, &tm[0], TK_NS_PER_S * 20), TK_OK); /* worker up */
    atomic_store(&fa->fail_all, 1);
    int ok = 1;
    for (int i = 1; i < N; i++) {
        assert_int_equal(tk_timer_init(&tm[i], timer_fire), TK_OK);
        rc[i] = tk_timer_start(ex, &tm[i], TK_NS_PER_S * 20 + i);
        assert_true(rc[i] == TK_OK || rc[i] == TK_ENOMEM);
        if (rc[i] == TK_OK) {
            ok++;
            assert_true(tk_timer_is_pending(&tm[i]));
        } else {
            assert_true(tk_timer_is_idle(&tm[i]));
        }
    }
    assert_int_equal(stats_of(ex).queue_size, (size_t)ok);
    atomic_store(&fa->fail_all, 0);
    for (int i = 1; i < N; i++) /* memory is back: the refused ones start now */
        if (rc[i] == TK_ENOMEM)
            assert_int_equal(tk_timer_start(ex, &tm[i], TK_NS_PER_S * 20 + i), TK_OK);
    assert_int_equal(stats_of(ex).queue_size, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(tk_timer_stop(ex, &tm[i]), TK_OK);
    ct_destroy(t, ex);
    for (int i = 0; i < N; i++)
        assert_true(tk_timer_is_idle(&tm[i]));
    assert_int_equal(atomic_load(&fa->live), 0);
    assert_int_equal(atomic_load(&fa->bad_free), 0);
}

CONF_TABLE(alloc, {"the allocator gets every block back", allocator_gets_every_block_back},
           {"an allocation failure at create returns TK_ENOMEM and leaks nothing",
            allocation_failure_at_create_is_enomem},
           {"an allocation failure while scheduling returns TK_ENOMEM; the executor stays usable",
            allocation_failure_while_scheduling_is_enomem},
           {"embedded timer: a start the engine cannot grow for is TK_ENOMEM, the timer idle",
            timer_start_under_allocation_failure}, );
