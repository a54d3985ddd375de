/* SPDX-License-Identifier: MIT */
/* timerkit: unit tests of the heap engine's pure core (heap-core.h).
 *
 * Single-threaded and deterministic: random operation sequences with fixed
 * seeds are checked step by step against a sorted-array reference model, with
 * tk__heap_core_check() after every step; plus the edges (FIFO ties, growth,
 * shrinking, allocation failure, membership after removal) and the
 * owner-driven resizing the adapter uses (wanted_capacity, alloc_block,
 * adopt, with a failing allocator and with moves that arrive late). The
 * build runs this file twice, at TK__HEAP_ARITY 4 and 2 (heap_core and
 * heap_core_d2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "heap-core.h"
#include "timerkit/status.h"

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(2685821657736338717);
}

static size_t rng_below(uint64_t *s, size_t n) {
    return (size_t)(rng_next(s) % n);
}

static bool key_less(const tk_node *a, const tk_node *b) {
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

static void set_key(tk_node *n, int64_t deadline_ns, uint64_t seq) {
    n->deadline_ns = deadline_ns;
    n->seq = seq;
}

/* An allocator that counts live bytes and can be told to fail. */
typedef struct test_alloc {
    long fail_after; /* allocations left before failures start; < 0: never fail */
    size_t live_bytes;
    size_t allocs;
    size_t frees;
} test_alloc;

static void *test_alloc_fn(void *ctx, size_t size) {
    test_alloc *t = ctx;
    if (t->fail_after == 0)
        return NULL;
    if (t->fail_after > 0)
        t->fail_after--;
    void *p = malloc(size);
    if (p != NULL) {
        t->live_bytes += size;
        t->allocs++;
    }
    return p;
}

static void test_free_fn(void *ctx, void *ptr, size_t size) {
    test_alloc *t = ctx;
    t->live_bytes -= size;
    t->frees++;
    free(ptr);
}

static tk_allocator make_allocator(test_alloc *t) {
    tk_allocator a = {test_alloc_fn, test_free_fn, t};
    return a;
}

/* The reference: nodes kept sorted by (deadline, seq) in a plain array. */
typedef struct model {
    tk_node *v[1024];
    size_t n;
} model;

static void model_insert(model *m, tk_node *x) {
    size_t i = m->n;
    while (i > 0 && key_less(x, m->v[i - 1])) {
        m->v[i] = m->v[i - 1];
        i--;
    }
    m->v[i] = x;
    m->n++;
}

static void model_erase_at(model *m, size_t i) {
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(m->v[0]));
    m->n--;
}

static size_t model_find(const model *m, const tk_node *x) {
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i] == x)
            return i;
    return SIZE_MAX;
}

/* ---- lifecycle -------------------------------------------------------------- */

static void init_with_zero_capacity_gives_default_capacity_and_allocator(void **state) {
    (void)state;
    tk__heap_core h;
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    assert_int_equal(h.capacity, TK__HEAP_DEFAULT_CAPACITY);
    assert_ptr_equal(h.allocator, tk_allocator_default());
    assert_int_equal(tk__heap_core_size(&h), 0);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    tk__heap_core_destroy(&h);
    tk__heap_core_destroy(NULL); /* no-op */
}

static void init_rejects_null_heap_and_impossible_capacity(void **state) {
    (void)state;
    tk__heap_core h;
    assert_int_equal(tk__heap_core_init(NULL, NULL, 0), TK_EINVAL);
    assert_int_equal(tk__heap_core_init(&h, NULL, SIZE_MAX), TK_EINVAL);
    tk__heap_core_destroy(&h); /* safe after a failed init */
}

static void init_reports_enomem_when_the_array_cannot_be_allocated(void **state) {
    (void)state;
    test_alloc t = {.fail_after = 0};
    tk_allocator a = make_allocator(&t);
    tk__heap_core h;
    assert_int_equal(tk__heap_core_init(&h, &a, 16), TK_ENOMEM);
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
}

static void empty_heap_has_nothing_to_peek_pop_or_remove(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node n;
    memset(&n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    assert_null(tk__heap_core_peek(&h));
    assert_null(tk__heap_core_pop(&h));
    assert_null(tk__heap_core_pop_due(&h, INT64_MAX));
    assert_int_equal(tk__heap_core_remove(&h, &n), TK_ENOENT);
    assert_int_equal(tk__heap_core_remove(&h, NULL), TK_ENOENT);
    assert_false(tk__heap_core_contains(&h, &n));
    assert_int_equal(tk__heap_core_remove(NULL, &n), TK_EINVAL);
    assert_int_equal(tk__heap_core_check(NULL), TK_EINVAL);
    tk__heap_core_destroy(&h);
}

/* ---- order ------------------------------------------------------------------ */

static void pop_returns_nodes_by_deadline_then_seq(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node n[6];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    set_key(&n[0], 30, 0);
    set_key(&n[1], 10, 5);
    set_key(&n[2], 20, 1);
    set_key(&n[3], 10, 2);
    set_key(&n[4], INT64_MIN, UINT64_MAX);
    set_key(&n[5], INT64_MAX, 0);
    for (int i = 0; i < 6; i++)
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    const int expect[6] = {4, 3, 1, 2, 0, 5};
    for (int i = 0; i < 6; i++) {
        assert_ptr_equal(tk__heap_core_peek(&h), &n[expect[i]]);
        assert_ptr_equal(tk__heap_core_pop(&h), &n[expect[i]]);
        assert_int_equal(tk__heap_core_check(&h), TK_OK);
    }
    assert_int_equal(tk__heap_core_size(&h), 0);
    tk__heap_core_destroy(&h);
}

static void pop_due_hands_out_the_head_only_once_its_deadline_is_reached(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    set_key(&a, 100, 0);
    set_key(&b, 200, 1);
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    assert_int_equal(tk__heap_core_push(&h, &b), TK_OK);
    assert_int_equal(tk__heap_core_push(&h, &a), TK_OK);
    assert_null(tk__heap_core_pop_due(&h, 99));
    assert_int_equal(tk__heap_core_size(&h), 2);
    assert_ptr_equal(tk__heap_core_pop_due(&h, 100), &a); /* deadline == now is due */
    assert_null(tk__heap_core_pop_due(&h, 199));
    assert_ptr_equal(tk__heap_core_pop_due(&h, 1000), &b);
    assert_null(tk__heap_core_pop_due(&h, INT64_MAX));
    tk__heap_core_destroy(&h);
}

static void thousands_of_equal_deadlines_leave_in_fifo_order(void **state) {
    (void)state;
    enum { N = 5000 };
    tk_node *n = calloc(N, sizeof(*n));
    size_t *order = malloc(N * sizeof(*order));
    assert_non_null(n);
    assert_non_null(order);
    uint64_t rng = 42;
    for (int round = 0; round < 2; round++) {
        tk__heap_core h;
        assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
        /* round 0 pushes in seq order (the usual case), round 1 in a shuffled one */
        for (size_t i = 0; i < N; i++)
            order[i] = i;
        if (round == 1)
            for (size_t i = N - 1; i > 0; i--) {
                size_t j = rng_below(&rng, i + 1), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        for (size_t i = 0; i < N; i++) {
            set_key(&n[order[i]], 777, order[i]);
            assert_int_equal(tk__heap_core_push(&h, &n[order[i]]), TK_OK);
        }
        /* cancel every third one: the rest must still leave FIFO */
        for (size_t i = 0; i < N; i += 3)
            assert_int_equal(tk__heap_core_remove(&h, &n[i]), TK_OK);
        assert_int_equal(tk__heap_core_check(&h), TK_OK);
        for (size_t i = 0; i < N; i++) {
            if (i % 3 == 0)
                continue;
            assert_ptr_equal(tk__heap_core_pop_due(&h, 777), &n[i]);
        }
        assert_int_equal(tk__heap_core_size(&h), 0);
        tk__heap_core_destroy(&h);
    }
    free(order);
    free(n);
}

/* ---- the model-based random test ------------------------------------------------ */

static void run_random_model(uint64_t seed, int64_t deadline_span, int steps) {
    enum { POOL = 600 };
    static tk_node pool[POOL];
    static tk_node outsider; /* never pushed into this heap */
    memset(pool, 0, sizeof(pool));
    memset(&outsider, 0, sizeof(outsider));
    model m = {.n = 0};
    bool in[POOL] = {false};
    uint64_t rng = seed, next_seq = 0;
    tk__heap_core h;
    /* a small initial capacity so the walk crosses growth and shrink points */
    assert_int_equal(tk__heap_core_init(&h, NULL, 4), TK_OK);

    for (int step = 0; step < steps; step++) {
        /* bias towards pushing in the first half, towards removing in the second */
        size_t r = rng_below(&rng, 100);
        size_t push_pct = step < steps / 2 ? 55 : 35;
        if (r < push_pct) {
            size_t i = rng_below(&rng, POOL);
            if (in[i]) {
                assert_int_equal(tk__heap_core_push(&h, &pool[i]), TK_EINVAL); /* already in */
            } else {
                set_key(&pool[i], (int64_t)rng_below(&rng, (size_t)deadline_span), next_seq++);
                assert_int_equal(tk__heap_core_push(&h, &pool[i]), TK_OK);
                in[i] = true;
                model_insert(&m, &pool[i]);
            }
        } else if (r < push_pct + 25) {
            size_t i = rng_below(&rng, POOL);
            int rc = tk__heap_core_remove(&h, &pool[i]);
            if (in[i]) {
                assert_int_equal(rc, TK_OK);
                model_erase_at(&m, model_find(&m, &pool[i]));
                in[i] = false;
            } else {
                assert_int_equal(rc, TK_ENOENT);
            }
            assert_int_equal(tk__heap_core_remove(&h, &outsider), TK_ENOENT);
        } else if (r < push_pct + 35) {
            tk_node *got = tk__heap_core_pop(&h);
            if (m.n == 0) {
                assert_null(got);
            } else {
                assert_ptr_equal(got, m.v[0]);
                in[got - pool] = false;
                model_erase_at(&m, 0);
            }
        } else {
            int64_t now = (int64_t)rng_below(&rng, (size_t)deadline_span);
            tk_node *got = tk__heap_core_pop_due(&h, now);
            if (m.n > 0 && m.v[0]->deadline_ns <= now) {
                assert_ptr_equal(got, m.v[0]);
                in[got - pool] = false;
                model_erase_at(&m, 0);
            } else {
                assert_null(got);
            }
        }
        assert_int_equal(tk__heap_core_check(&h), TK_OK);
        assert_int_equal(tk__heap_core_size(&h), m.n);
        assert_ptr_equal(tk__heap_core_peek(&h), m.n > 0 ? m.v[0] : NULL);
        for (int k = 0; k < 4; k++) {
            size_t i = rng_below(&rng, POOL);
            assert_int_equal(tk__heap_core_contains(&h, &pool[i]), in[i]);
        }
        assert_true(h.capacity >= h.size);
    }
    /* what is left comes out in the model's order */
    for (size_t i = 0; i < m.n; i++)
        assert_ptr_equal(tk__heap_core_pop(&h), m.v[i]);
    assert_null(tk__heap_core_pop(&h));
    tk__heap_core_destroy(&h);
}

static void random_operations_match_a_sorted_reference_model(void **state) {
    (void)state;
    static const uint64_t seeds[] = {1, 2, 3, 0x5eed, 0xdeadbeef, 20240601};
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
        run_random_model(seeds[i], 1000000, 6000);
}

static void random_operations_with_many_ties_match_the_model(void **state) {
    (void)state;
    static const uint64_t seeds[] = {7, 11, 0xc0ffee, 99991};
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
        run_random_model(seeds[i], 8, 6000); /* 8 distinct deadlines: seq decides */
}

/* ---- memory -------------------------------------------------------------- */

static void array_grows_by_half_again_when_full(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node n[10];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, NULL, 4), TK_OK);
    const size_t expect_cap[10] = {4, 4, 4, 4, 6, 6, 9, 9, 9, 13};
    for (int i = 0; i < 10; i++) {
        set_key(&n[i], 10 - i, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
        assert_int_equal(h.capacity, expect_cap[i]);
        assert_int_equal(tk__heap_core_check(&h), TK_OK);
    }
    for (int i = 9; i >= 0; i--)
        assert_ptr_equal(tk__heap_core_pop(&h), &n[i]);
    tk__heap_core_destroy(&h);

    /* capacity 1 still grows */
    assert_int_equal(tk__heap_core_init(&h, NULL, 1), TK_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_int_equal(tk__heap_core_size(&h), 10);
    tk__heap_core_destroy(&h);
}

static void memory_comes_back_after_mass_cancellation(void **state) {
    (void)state;
    enum { N = 100000 };
    test_alloc t = {.fail_after = -1};
    tk_allocator a = make_allocator(&t);
    tk_node *n = calloc(N, sizeof(*n));
    assert_non_null(n);
    tk__heap_core h;
    assert_int_equal(tk__heap_core_init(&h, &a, 0), TK_OK);
    uint64_t rng = 5;
    for (size_t i = 0; i < N; i++) {
        set_key(&n[i], (int64_t)rng_below(&rng, 1000000), i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    size_t peak = t.live_bytes;
    assert_true(peak >= N * sizeof(tk__heap_entry));
    /* cancel in a scattered order down to a handful */
    for (size_t k = 0; k < N - 10; k++)
        assert_int_equal(tk__heap_core_remove(&h, &n[(k * 7919) % N]), TK_OK);
    assert_int_equal(tk__heap_core_size(&h), 10);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_int_equal(h.capacity, TK__HEAP_DEFAULT_CAPACITY);
    assert_int_equal(t.live_bytes, TK__HEAP_DEFAULT_CAPACITY * sizeof(tk__heap_entry));
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
    assert_int_equal(t.allocs, t.frees);
    free(n);
}

static void shrinking_stops_at_the_initial_capacity(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node n[1000];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, NULL, 500), TK_OK);
    for (int i = 0; i < 1000; i++) {
        set_key(&n[i], i % 17, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    assert_true(h.capacity >= 1000);
    while (tk__heap_core_pop(&h) != NULL)
        assert_true(h.capacity >= 500);
    assert_int_equal(h.capacity, 500);
    tk__heap_core_destroy(&h);
}

static void push_that_cannot_grow_reports_enomem_and_leaves_the_heap_intact(void **state) {
    (void)state;
    test_alloc t = {.fail_after = 1}; /* the initial array, then nothing */
    tk_allocator a = make_allocator(&t);
    tk__heap_core h;
    tk_node n[9];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, &a, 8), TK_OK);
    for (int i = 0; i < 8; i++) {
        set_key(&n[i], 100 - i, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    set_key(&n[8], 0, 8); /* would become the head */
    tk__heap_priv_of(&n[8])->index = SIZE_MAX;
    assert_int_equal(tk__heap_core_push(&h, &n[8]), TK_ENOMEM);
    assert_int_equal(tk__heap_core_size(&h), 8);
    assert_int_equal(h.capacity, 8);
    assert_false(tk__heap_core_contains(&h, &n[8]));
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_ptr_equal(tk__heap_core_peek(&h), &n[7]);
    /* memory returns: the same push now works */
    t.fail_after = -1;
    assert_int_equal(tk__heap_core_push(&h, &n[8]), TK_OK);
    assert_ptr_equal(tk__heap_core_pop(&h), &n[8]);
    for (int i = 7; i >= 0; i--)
        assert_ptr_equal(tk__heap_core_pop(&h), &n[i]);
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
}

static void failed_shrink_keeps_the_larger_array_and_the_heap_working(void **state) {
    (void)state;
    test_alloc t = {.fail_after = -1};
    tk_allocator a = make_allocator(&t);
    tk__heap_core h;
    tk_node n[400];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, &a, 4), TK_OK);
    for (int i = 0; i < 400; i++) {
        set_key(&n[i], i, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    size_t cap = h.capacity;
    t.fail_after = 0; /* every shrink fails from now on */
    for (int i = 0; i < 390; i++)
        assert_ptr_equal(tk__heap_core_pop(&h), &n[i]);
    assert_int_equal(h.capacity, cap);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    t.fail_after = -1; /* the next removal shrinks again */
    assert_ptr_equal(tk__heap_core_pop(&h), &n[390]);
    assert_true(h.capacity < cap);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
}

/* ---- owner-driven resizing (auto_resize off) ----------------------------------- */

/* The owner's side of a resize, done at once: allocate what the heap wants,
 * adopt it (which must succeed), free the old array. Returns false if no
 * move was due. */
static bool owner_resize(tk__heap_core *h) {
    size_t want = tk__heap_core_wanted_capacity(h);
    if (want == tk__heap_core_capacity(h))
        return false;
    tk__heap_entry *block = tk__heap_core_alloc_block(h, want);
    assert_non_null(block);
    tk__heap_entry *old = NULL;
    size_t old_cap = 0;
    size_t cap_before = tk__heap_core_capacity(h);
    assert_true(tk__heap_core_adopt(h, block, want, &old, &old_cap));
    assert_non_null(old);
    assert_int_equal(old_cap, cap_before);
    assert_int_equal(tk__heap_core_capacity(h), want);
    tk__heap_core_free_block(h, old, old_cap);
    return true;
}

static void owner_driven_heap_never_allocates_and_reports_a_full_array(void **state) {
    (void)state;
    test_alloc t = {.fail_after = -1};
    tk_allocator a = make_allocator(&t);
    tk__heap_core h;
    tk_node n[9];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, &a, 8), TK_OK);
    tk__heap_core_set_auto_resize(&h, false);
    tk__heap_core_set_auto_resize(NULL, false); /* no-op */
    for (int i = 0; i < 8; i++) {
        set_key(&n[i], 100 - i, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    set_key(&n[8], 0, 8); /* would become the head */
    tk__heap_priv_of(&n[8])->index = SIZE_MAX;
    assert_int_equal(tk__heap_core_push(&h, &n[8]), TK_EFULL);
    assert_int_equal(tk__heap_core_size(&h), 8);
    assert_int_equal(tk__heap_core_capacity(&h), 8);
    assert_false(tk__heap_core_contains(&h, &n[8]));
    assert_ptr_equal(tk__heap_core_peek(&h), &n[7]);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_true(tk__heap_core_wanted_capacity(&h) > 8);
    /* emptying it frees nothing either */
    for (int i = 7; i >= 0; i--)
        assert_ptr_equal(tk__heap_core_pop(&h), &n[i]);
    assert_int_equal(tk__heap_core_capacity(&h), 8);
    assert_int_equal(t.allocs, 1); /* the initial array, nothing since */
    assert_int_equal(t.frees, 0);
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
}

static void wanted_capacity_asks_to_grow_once_fifteen_sixteenths_are_in_use(void **state) {
    (void)state;
    test_alloc t = {.fail_after = -1};
    tk_allocator a = make_allocator(&t);
    tk__heap_core h;
    tk_node n[64];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, &a, 64), TK_OK);
    tk__heap_core_set_auto_resize(&h, false);
    assert_int_equal(tk__heap_core_wanted_capacity(&h), 64);
    for (int i = 0; i < 60; i++) {
        assert_int_equal(tk__heap_core_wanted_capacity(&h), 64);
        set_key(&n[i], (i * 37) % 64, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    assert_int_equal(tk__heap_core_wanted_capacity(&h), 96); /* 60 of 64 in use */
    assert_true(owner_resize(&h));
    assert_int_equal(tk__heap_core_capacity(&h), 96);
    assert_int_equal(tk__heap_core_wanted_capacity(&h), 96);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_int_equal(t.live_bytes, 96 * sizeof(tk__heap_entry));
    /* the move kept every node and its order */
    tk_node *prev = NULL, *got;
    size_t count = 0;
    while ((got = tk__heap_core_pop(&h)) != NULL) {
        if (prev != NULL)
            assert_true(key_less(prev, got));
        prev = got;
        count++;
    }
    assert_int_equal(count, 60);
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
    assert_int_equal(tk__heap_core_wanted_capacity(NULL), 0);
    assert_int_equal(tk__heap_core_capacity(NULL), 0);
}

static void wanted_capacity_returns_the_memory_of_a_mass_removal_in_one_move(void **state) {
    (void)state;
    enum { N = 20000 };
    test_alloc t = {.fail_after = -1};
    tk_allocator a = make_allocator(&t);
    tk_node *n = calloc(N, sizeof(*n));
    assert_non_null(n);
    tk__heap_core h;
    assert_int_equal(tk__heap_core_init(&h, &a, 16), TK_OK);
    tk__heap_core_set_auto_resize(&h, false);
    uint64_t rng = 9;
    for (size_t i = 0; i < N; i++) {
        set_key(&n[i], (int64_t)rng_below(&rng, 1000000), i);
        int rc = tk__heap_core_push(&h, &n[i]);
        if (rc == TK_EFULL) { /* never: the owner below grows ahead of need */
            fail_msg("push %zu found the array full", i);
        }
        assert_int_equal(rc, TK_OK);
        owner_resize(&h);
    }
    size_t peak = tk__heap_core_capacity(&h);
    assert_true(peak > N);
    /* cancel all but 3, scattered; the owner is away meanwhile */
    for (size_t k = 0; k < N - 3; k++)
        assert_int_equal(tk__heap_core_remove(&h, &n[(k * 7919) % N]), TK_OK);
    assert_int_equal(tk__heap_core_capacity(&h), peak); /* removals never shrink */
    assert_int_equal(tk__heap_core_wanted_capacity(&h), 16);
    assert_true(owner_resize(&h));
    assert_false(owner_resize(&h)); /* one move was enough */
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_int_equal(tk__heap_core_size(&h), 3);
    assert_int_equal(t.live_bytes, 16 * sizeof(tk__heap_entry));
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
    assert_int_equal(t.allocs, t.frees);
    free(n);
}

static void adopt_refuses_a_move_that_is_not_wanted_and_leaves_the_heap_alone(void **state) {
    (void)state;
    test_alloc t = {.fail_after = -1};
    tk_allocator a = make_allocator(&t);
    tk__heap_core h;
    tk_node n[200];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, &a, 8), TK_OK);
    tk__heap_core_set_auto_resize(&h, false);
    tk__heap_entry *old = (tk__heap_entry *)&t; /* must stay untouched on refusal */
    size_t old_cap = 12345;
    tk__heap_entry *block = tk__heap_core_alloc_block(&h, 32);
    assert_non_null(block);

    /* nothing due: neither a larger nor a smaller block is taken */
    set_key(&n[0], 5, 0);
    assert_int_equal(tk__heap_core_push(&h, &n[0]), TK_OK);
    assert_false(tk__heap_core_adopt(&h, block, 32, &old, &old_cap));
    assert_false(tk__heap_core_adopt(&h, block, 4, &old, &old_cap));
    /* NULL arguments */
    assert_false(tk__heap_core_adopt(NULL, block, 32, &old, &old_cap));
    assert_false(tk__heap_core_adopt(&h, NULL, 32, &old, &old_cap));
    assert_false(tk__heap_core_adopt(&h, block, 32, NULL, &old_cap));
    assert_false(tk__heap_core_adopt(&h, block, 32, &old, NULL));
    assert_ptr_equal(old, (tk__heap_entry *)&t);
    assert_int_equal(old_cap, 12345);

    /* a grow is due (8 of 8): too small, or so big it would want to shrink */
    for (int i = 1; i < 8; i++) {
        set_key(&n[i], 10 + i, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    assert_int_equal(tk__heap_core_wanted_capacity(&h), 12);
    assert_false(tk__heap_core_adopt(&h, block, 8, &old, &old_cap));
    assert_false(tk__heap_core_adopt(&h, block, 11, &old, &old_cap));
    assert_false(tk__heap_core_adopt(&h, block, 32, &old, &old_cap)); /* 8 <= 32 / 4 */
    assert_int_equal(tk__heap_core_capacity(&h), 8);

    /* claimed while due, no longer due when the block arrives: refused */
    assert_ptr_equal(tk__heap_core_pop(&h), &n[0]);
    assert_ptr_equal(tk__heap_core_pop(&h), &n[1]);
    assert_int_equal(tk__heap_core_wanted_capacity(&h), 8);
    assert_false(tk__heap_core_adopt(&h, block, 12, &old, &old_cap));
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_int_equal(tk__heap_core_size(&h), 6);
    assert_ptr_equal(old, (tk__heap_entry *)&t);
    tk__heap_core_free_block(&h, block, 32);
    tk__heap_core_free_block(&h, NULL, 32); /* no-op */

    /* a shrink is due: a block at or above the current capacity, or below
     * the wanted one, is refused; any step in between is taken */
    for (int i = 8; i < 200; i++) {
        set_key(&n[i], 10 + i, (uint64_t)i);
        owner_resize(&h); /* grows ahead of need, as the adapter does */
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    size_t cap = tk__heap_core_capacity(&h);
    while (tk__heap_core_size(&h) > 3)
        assert_non_null(tk__heap_core_pop(&h));
    size_t want = tk__heap_core_wanted_capacity(&h);
    assert_true(want < cap / 2);
    block = tk__heap_core_alloc_block(&h, cap);
    assert_non_null(block);
    assert_false(tk__heap_core_adopt(&h, block, cap, &old, &old_cap));
    tk__heap_core_free_block(&h, block, cap);
    block = tk__heap_core_alloc_block(&h, want - 1);
    assert_non_null(block);
    assert_false(tk__heap_core_adopt(&h, block, want - 1, &old, &old_cap));
    tk__heap_core_free_block(&h, block, want - 1);
    assert_int_equal(tk__heap_core_capacity(&h), cap);
    block = tk__heap_core_alloc_block(&h, cap / 2);
    assert_non_null(block);
    assert_true(tk__heap_core_adopt(&h, block, cap / 2, &old, &old_cap)); /* part of the way */
    assert_int_equal(old_cap, cap);
    tk__heap_core_free_block(&h, old, old_cap);
    assert_int_equal(tk__heap_core_capacity(&h), cap / 2);
    assert_int_equal(tk__heap_core_wanted_capacity(&h), want); /* the rest is still due */
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_true(owner_resize(&h));
    assert_int_equal(tk__heap_core_capacity(&h), want);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_int_equal(tk__heap_core_size(&h), 3);
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
    assert_int_equal(t.allocs, t.frees);
}

static void a_failed_block_allocation_leaves_the_heap_full_but_working(void **state) {
    (void)state;
    test_alloc t = {.fail_after = 1}; /* the initial array, then nothing */
    tk_allocator a = make_allocator(&t);
    tk__heap_core h;
    tk_node n[5];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, &a, 4), TK_OK);
    tk__heap_core_set_auto_resize(&h, false);
    assert_null(tk__heap_core_alloc_block(&h, 0));
    assert_null(tk__heap_core_alloc_block(&h, SIZE_MAX));
    assert_null(tk__heap_core_alloc_block(NULL, 8));
    for (int i = 0; i < 4; i++) {
        set_key(&n[i], 40 - i, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    set_key(&n[4], 1, 4);
    tk__heap_priv_of(&n[4])->index = SIZE_MAX;
    assert_int_equal(tk__heap_core_push(&h, &n[4]), TK_EFULL);
    size_t want = tk__heap_core_wanted_capacity(&h);
    assert_null(tk__heap_core_alloc_block(&h, want)); /* the allocator fails */
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_int_equal(tk__heap_core_size(&h), 4);
    assert_int_equal(tk__heap_core_capacity(&h), 4);
    assert_ptr_equal(tk__heap_core_peek(&h), &n[3]);
    assert_int_equal(tk__heap_core_push(&h, &n[4]), TK_EFULL);
    /* memory comes back: the move goes through and the push succeeds */
    t.fail_after = -1;
    assert_true(owner_resize(&h));
    assert_int_equal(tk__heap_core_push(&h, &n[4]), TK_OK);
    assert_ptr_equal(tk__heap_core_peek(&h), &n[4]);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
    assert_int_equal(t.allocs, t.frees);
}

/* The model-based walk with the owner in charge of the array. The owner
 * sometimes claims a resize and comes back with the block only a few steps
 * later (as the adapter does around its lock), so adopt() meets sizes that
 * moved on; when it refuses, the block is freed. After every adopted move
 * the heap must want nothing more. */
typedef struct owner_tally {
    size_t full_pushes;  /* pushes that met TK_EFULL */
    size_t late_adopted; /* pending blocks adopt() took */
    size_t late_refused; /* pending blocks adopt() refused */
} owner_tally;

static void run_owner_driven_model(uint64_t seed, size_t min_capacity, int steps,
                                   owner_tally *tally) {
    enum { POOL = 600 };
    static tk_node pool[POOL];
    memset(pool, 0, sizeof(pool));
    model m = {.n = 0};
    bool in[POOL] = {false};
    uint64_t rng = seed, next_seq = 0;
    test_alloc t = {.fail_after = -1};
    tk_allocator a = make_allocator(&t);
    tk__heap_core h;
    assert_int_equal(tk__heap_core_init(&h, &a, min_capacity), TK_OK);
    tk__heap_core_set_auto_resize(&h, false);
    tk__heap_entry *pending = NULL; /* a block claimed earlier, not yet offered */
    size_t pending_cap = 0;
    int pending_steps = 0;
    size_t blocks = 0; /* alloc_block() calls that succeeded */

    for (int step = 0; step < steps; step++) {
        size_t r = rng_below(&rng, 100);
        size_t push_pct = (step / 500) % 2 == 0 ? 60 : 30; /* waves up and down */
        if (r < push_pct) {
            size_t i = rng_below(&rng, POOL);
            if (!in[i]) {
                set_key(&pool[i], (int64_t)rng_below(&rng, 1000), next_seq++);
                int rc = tk__heap_core_push(&h, &pool[i]);
                if (rc == TK_EFULL) {
                    tally->full_pushes++;
                    assert_int_equal(tk__heap_core_size(&h), tk__heap_core_capacity(&h));
                    assert_false(tk__heap_core_contains(&h, &pool[i]));
                    blocks++;
                    assert_true(owner_resize(&h));
                    rc = tk__heap_core_push(&h, &pool[i]);
                }
                assert_int_equal(rc, TK_OK);
                in[i] = true;
                model_insert(&m, &pool[i]);
            }
        } else if (r < push_pct + 30) {
            size_t i = rng_below(&rng, POOL);
            int rc = tk__heap_core_remove(&h, &pool[i]);
            assert_int_equal(rc, in[i] ? TK_OK : TK_ENOENT);
            if (in[i]) {
                model_erase_at(&m, model_find(&m, &pool[i]));
                in[i] = false;
            }
        } else {
            tk_node *got = tk__heap_core_pop(&h);
            assert_ptr_equal(got, m.n > 0 ? m.v[0] : NULL);
            if (got != NULL) {
                in[got - pool] = false;
                model_erase_at(&m, 0);
            }
        }
        /* the owner: finish a pending move, or claim one, or move at once */
        if (pending != NULL && --pending_steps <= 0) {
            tk__heap_entry *old = NULL;
            size_t old_cap = 0;
            if (tk__heap_core_adopt(&h, pending, pending_cap, &old, &old_cap)) {
                tally->late_adopted++;
                tk__heap_core_free_block(&h, old, old_cap);
            } else {
                tally->late_refused++;
                tk__heap_core_free_block(&h, pending, pending_cap);
            }
            pending = NULL;
        }
        size_t want = tk__heap_core_wanted_capacity(&h);
        if (pending == NULL && want != tk__heap_core_capacity(&h)) {
            if (rng_below(&rng, 3) == 0) {
                pending = tk__heap_core_alloc_block(&h, want);
                assert_non_null(pending);
                pending_cap = want;
                pending_steps = 1 + (int)rng_below(&rng, 4);
            } else {
                assert_true(owner_resize(&h));
                assert_int_equal(tk__heap_core_wanted_capacity(&h), want); /* settled */
            }
            blocks++;
        }
        assert_int_equal(tk__heap_core_check(&h), TK_OK);
        assert_int_equal(tk__heap_core_size(&h), m.n);
        assert_ptr_equal(tk__heap_core_peek(&h), m.n > 0 ? m.v[0] : NULL);
        assert_true(tk__heap_core_capacity(&h) >= min_capacity);
    }
    if (pending != NULL)
        tk__heap_core_free_block(&h, pending, pending_cap);
    assert_int_equal(t.allocs, 1 + blocks); /* the heap itself allocated nothing */
    for (size_t i = 0; i < m.n; i++)
        assert_ptr_equal(tk__heap_core_pop(&h), m.v[i]);
    tk__heap_core_destroy(&h);
    assert_int_equal(t.live_bytes, 0);
}

static void owner_driven_random_operations_match_the_model_and_moves_settle(void **state) {
    (void)state;
    static const size_t mins[] = {1, 2, 3, 5, 8, 64};
    static const uint64_t seeds[] = {3, 0xabcdef, 424242};
    owner_tally tally = {0, 0, 0};
    for (size_t k = 0; k < sizeof(mins) / sizeof(mins[0]); k++)
        for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
            run_owner_driven_model(seeds[i] + k, mins[k], 4000, &tally);
    /* the walk met every path: a full array, late moves taken and refused */
    assert_true(tally.full_pushes > 0);
    assert_true(tally.late_adopted > 0);
    assert_true(tally.late_refused > 0);
}

/* ---- membership ------------------------------------------------------------ */

static void removed_and_popped_nodes_are_no_longer_contained(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node n[5];
    memset(n, 0, sizeof(n)); /* index 0 on every node: must not fool contains() */
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    assert_false(tk__heap_core_contains(&h, &n[0]));
    for (int i = 0; i < 5; i++) {
        set_key(&n[i], i, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
        assert_true(tk__heap_core_contains(&h, &n[i]));
    }
    assert_int_equal(tk__heap_core_remove(&h, &n[3]), TK_OK);
    assert_false(tk__heap_core_contains(&h, &n[3]));
    assert_int_equal(tk__heap_priv_of(&n[3])->index, SIZE_MAX);
    assert_int_equal(tk__heap_core_remove(&h, &n[3]), TK_ENOENT);
    assert_ptr_equal(tk__heap_core_pop(&h), &n[0]);
    assert_false(tk__heap_core_contains(&h, &n[0]));
    assert_int_equal(tk__heap_core_remove(&h, &n[0]), TK_ENOENT);
    assert_ptr_equal(tk__heap_core_pop_due(&h, 10), &n[1]);
    assert_false(tk__heap_core_contains(&h, &n[1]));
    /* a removed node can be pushed again */
    assert_int_equal(tk__heap_core_push(&h, &n[3]), TK_OK);
    assert_true(tk__heap_core_contains(&h, &n[3]));
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    tk__heap_core_destroy(&h);
}

static void a_node_of_another_heap_is_not_contained_and_not_removed(void **state) {
    (void)state;
    tk__heap_core h1, h2;
    tk_node a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    set_key(&a, 1, 1);
    set_key(&b, 2, 2);
    assert_int_equal(tk__heap_core_init(&h1, NULL, 0), TK_OK);
    assert_int_equal(tk__heap_core_init(&h2, NULL, 0), TK_OK);
    assert_int_equal(tk__heap_core_push(&h1, &a), TK_OK);
    assert_int_equal(tk__heap_core_push(&h2, &b), TK_OK); /* both at index 0 */
    assert_false(tk__heap_core_contains(&h1, &b));
    assert_int_equal(tk__heap_core_remove(&h1, &b), TK_ENOENT);
    assert_int_equal(tk__heap_core_size(&h2), 1);
    assert_true(tk__heap_core_contains(&h2, &b));
    tk__heap_core_destroy(&h1);
    tk__heap_core_destroy(&h2);
}

static void push_rejects_null_and_a_node_already_in_the_heap(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node a;
    memset(&a, 0, sizeof(a));
    set_key(&a, 1, 1);
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    assert_int_equal(tk__heap_core_push(&h, NULL), TK_EINVAL);
    assert_int_equal(tk__heap_core_push(NULL, &a), TK_EINVAL);
    assert_int_equal(tk__heap_core_push(&h, &a), TK_OK);
    assert_int_equal(tk__heap_core_push(&h, &a), TK_EINVAL);
    assert_int_equal(tk__heap_core_size(&h), 1);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    tk__heap_core_destroy(&h);
}

/* ---- sorted runs ---------------------------------------------------------------- */

/* Nodes pushed in key order leave from the front of the array: a pop writes
 * no other node (every index stays what it was), the heap stays a sorted
 * run, and count_due counts its due prefix. One push below the last slot
 * ends the run; the order stays exact. */
static void a_sorted_run_pops_without_moving_or_reindexing_anything(void **state) {
    (void)state;
    enum { N = 3000, POPS = 1000 };
    tk_node *n = calloc(N + 1, sizeof(*n));
    size_t *idx = malloc(N * sizeof(*idx));
    assert_non_null(n);
    assert_non_null(idx);
    tk__heap_core h;
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    for (size_t i = 0; i < N; i++) {
        set_key(&n[i], 500 + (int64_t)(i / 7), i); /* rising, with ties */
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    assert_true(h.sorted);
    for (size_t i = 0; i < N; i++)
        idx[i] = tk__heap_priv_of(&n[i])->index;
    assert_int_equal(tk__heap_core_count_due(&h, 500 + 9, SIZE_MAX), 70);
    for (size_t i = 0; i < POPS; i++)
        assert_ptr_equal(tk__heap_core_pop_due(&h, INT64_MAX), &n[i]);
    assert_true(h.sorted);
    assert_int_equal(h.start, POPS);
    for (size_t i = POPS; i < N; i++) {
        assert_int_equal(tk__heap_priv_of(&n[i])->index, idx[i]);
        assert_true(tk__heap_core_contains(&h, &n[i]));
    }
    for (size_t i = 0; i < POPS; i++)
        assert_false(tk__heap_core_contains(&h, &n[i]));
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_int_equal(tk__heap_core_count_due(&h, 500 + (POPS + 13) / 7, SIZE_MAX),
                     (POPS + 13) / 7 * 7 + 7 - POPS);
    /* the last one goes from the end, the run stays */
    assert_int_equal(tk__heap_core_remove(&h, &n[N - 1]), TK_OK);
    assert_true(h.sorted);
    assert_int_equal(tk__heap_core_push(&h, &n[N - 1]), TK_OK);
    /* an earlier key ends the run; the order stays exact */
    set_key(&n[N], 0, 0);
    assert_int_equal(tk__heap_core_push(&h, &n[N]), TK_OK);
    assert_false(h.sorted);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    assert_ptr_equal(tk__heap_core_pop(&h), &n[N]);
    for (size_t i = POPS; i < N; i++) {
        assert_ptr_equal(tk__heap_core_pop(&h), &n[i]);
        if (i % 97 == 0)
            assert_int_equal(tk__heap_core_check(&h), TK_OK);
    }
    assert_null(tk__heap_core_pop(&h));
    assert_true(h.sorted); /* empty: a run again */
    assert_int_equal(h.start, 0);
    tk__heap_core_destroy(&h);
    free(idx);
    free(n);
}

/* A long stream through a sorted run, in both resizing modes: pushes in key
 * order, pops, a few removals anywhere and rare pushes below the last slot,
 * against the model, with check() after every step. The run reaches the
 * end of its array again and again: pushes compact it (start back to 0 with
 * nodes in it) or grow it, and the array stays within a bound of the
 * population. */
static void sorted_runs_compact_or_grow_and_match_the_model(void **state) {
    (void)state;
    enum { POOL = 600, STEPS = 30000 };
    for (int owner = 0; owner < 2; owner++) {
        tk_node *pool = calloc(POOL, sizeof(*pool));
        bool *in = calloc(POOL, sizeof(*in));
        assert_non_null(pool);
        assert_non_null(in);
        tk__heap_core h;
        assert_int_equal(tk__heap_core_init(&h, NULL, 16), TK_OK);
        if (owner)
            tk__heap_core_set_auto_resize(&h, false);
        uint64_t rng = 99 + (uint64_t)owner;
        int64_t next_key = 1000;
        size_t compactions = 0, sorted_steps = 0, max_cap = 0, count = 0;
        for (int step = 0; step < STEPS; step++) {
            size_t r = rng_below(&rng, 100);
            /* drift between filling up and draining, to cross the array's end */
            bool fill = (step / 3000) % 2 == 0;
            if (r < (fill ? 60u : 40u)) {
                size_t i = rng_below(&rng, POOL);
                if (in[i])
                    continue;
                bool early = rng_below(&rng, 2000) == 0;
                set_key(&pool[i], early ? next_key - 50 : next_key++, (uint64_t)step);
                size_t start = h.start;
                int rc = tk__heap_core_push(&h, &pool[i]);
                if (rc == TK_EFULL) {
                    assert_true(owner);
                    assert_true(owner_resize(&h));
                    rc = tk__heap_core_push(&h, &pool[i]);
                }
                assert_int_equal(rc, TK_OK);
                compactions += start > 0 && h.start == 0;
                in[i] = true;
                count++;
            } else if (r < 99) {
                tk_node *want = NULL;
                for (size_t i = 0; i < POOL; i++)
                    if (in[i] && (want == NULL || key_less(&pool[i], want)))
                        want = &pool[i];
                tk_node *got = tk__heap_core_pop_due(&h, INT64_MAX);
                assert_ptr_equal(got, want);
                if (got != NULL) {
                    in[got - pool] = false;
                    count--;
                }
            } else {
                size_t i = rng_below(&rng, POOL);
                assert_int_equal(tk__heap_core_remove(&h, &pool[i]), in[i] ? TK_OK : TK_ENOENT);
                count -= in[i];
                in[i] = false;
            }
            if (owner && tk__heap_core_wanted_capacity(&h) != tk__heap_core_capacity(&h))
                assert_true(owner_resize(&h)); /* as the adapter, after each operation */
            assert_int_equal(tk__heap_core_check(&h), TK_OK);
            assert_int_equal(tk__heap_core_size(&h), count);
            sorted_steps += h.sorted && count > 1;
            if (tk__heap_core_capacity(&h) > max_cap)
                max_cap = tk__heap_core_capacity(&h);
        }
        print_message("      %s: %zu compactions, sorted at %zu of %d steps, largest array %zu\n",
                      owner ? "owner-driven" : "automatic", compactions, sorted_steps, STEPS,
                      max_cap);
        assert_true(compactions > 0);
        assert_true(sorted_steps > STEPS / 8);
        assert_true(max_cap <= 4 * POOL);
        tk__heap_core_destroy(&h);
        free(in);
        free(pool);
    }
}

/* ---- check() and remove_if() ------------------------------------------------ */

static void check_detects_a_wrong_index_a_changed_key_and_broken_order(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node n[8];
    memset(n, 0, sizeof(n));
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    for (int i = 0; i < 8; i++) {
        set_key(&n[i], i * 10, (uint64_t)i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    assert_int_equal(tk__heap_core_check(&h), TK_OK);

    size_t saved = tk__heap_priv_of(&n[5])->index;
    tk__heap_priv_of(&n[5])->index = saved + 1;
    assert_int_equal(tk__heap_core_check(&h), TK_ESTATE);
    tk__heap_priv_of(&n[5])->index = saved;

    n[6].deadline_ns = -1; /* an owner changed a queued key */
    assert_int_equal(tk__heap_core_check(&h), TK_ESTATE);
    n[6].deadline_ns = 60;

    tk__heap_entry t = h.entries[0]; /* swap root and a leaf, indices kept right */
    h.entries[0] = h.entries[7];
    h.entries[7] = t;
    tk__heap_priv_of(h.entries[0].node)->index = 0;
    tk__heap_priv_of(h.entries[7].node)->index = 7;
    assert_int_equal(tk__heap_core_check(&h), TK_ESTATE);
    h.entries[7] = h.entries[0];
    h.entries[0] = t;
    tk__heap_priv_of(h.entries[0].node)->index = 0;
    tk__heap_priv_of(h.entries[7].node)->index = 7;
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    tk__heap_core_destroy(&h);
}

typedef struct pred_ctx {
    int calls[300];
} pred_ctx;

/* count_due() against a brute-force count, at every limit around the
 * answer, on heaps of many shapes: random keys, many ties, removals that
 * leave holes in the due subtree, a few due nodes among many later ones. */
static void count_due_matches_a_brute_force_count_up_to_its_limit(void **state) {
    (void)state;
    enum { N = 700 };
    static tk_node n[N];
    uint64_t s = 4242;
    for (int round = 0; round < 40; round++) {
        tk__heap_core h;
        assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
        size_t size = 1 + rng_below(&s, N);
        int64_t span = round % 3 == 0 ? 8 : 1000; /* many ties, or few */
        for (size_t i = 0; i < size; i++) {
            memset(&n[i], 0, sizeof(n[i]));
            set_key(&n[i], (int64_t)rng_below(&s, (size_t)span), i);
            assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
        }
        for (size_t i = 0; i < size; i += 1 + rng_below(&s, 9))
            assert_int_equal(tk__heap_core_remove(&h, &n[i]), TK_OK);
        assert_int_equal(tk__heap_core_check(&h), TK_OK);
        for (int probe = 0; probe < 12; probe++) {
            int64_t now = (int64_t)rng_below(&s, (size_t)span + 2) - 1;
            size_t due = 0;
            for (size_t i = 0; i < size; i++)
                due += tk__heap_core_contains(&h, &n[i]) && n[i].deadline_ns <= now;
            assert_int_equal(tk__heap_core_count_due(&h, now, SIZE_MAX), due);
            assert_int_equal(tk__heap_core_count_due(&h, now, 0), 0);
            for (size_t lim = due > 3 ? due - 3 : 1; lim <= due + 3; lim++)
                assert_int_equal(tk__heap_core_count_due(&h, now, lim), lim < due ? lim : due);
        }
        tk__heap_core_destroy(&h);
    }
    /* A few due nodes among many later ones; none due; all due. */
    tk__heap_core h;
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    for (size_t i = 0; i < N; i++) {
        memset(&n[i], 0, sizeof(n[i]));
        set_key(&n[i], i % 97 == 0 ? (int64_t)i : INT64_C(1) << 40, i);
        assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
    }
    assert_int_equal(tk__heap_core_count_due(&h, INT64_C(1) << 39, SIZE_MAX), (N + 96) / 97);
    assert_int_equal(tk__heap_core_count_due(&h, -1, SIZE_MAX), 0);
    assert_int_equal(tk__heap_core_count_due(&h, INT64_MAX, SIZE_MAX), N);
    assert_int_equal(tk__heap_core_count_due(NULL, INT64_MAX, SIZE_MAX), 0);
    tk__heap_core_destroy(&h);
}

static tk_node g_pred_nodes[300];

static bool pred_multiple_of_three(const tk_node *n, void *ctx) {
    pred_ctx *c = ctx;
    c->calls[n - g_pred_nodes]++;
    return n->seq % 3 == 0;
}

static bool pred_none(const tk_node *n, void *ctx) {
    (void)n;
    (void)ctx;
    return false;
}

static bool pred_all(const tk_node *n, void *ctx) {
    (void)n;
    (void)ctx;
    return true;
}

static void remove_if_removes_exactly_the_matches_asking_once_per_node(void **state) {
    (void)state;
    tk__heap_core h;
    pred_ctx c;
    memset(&c, 0, sizeof(c));
    uint64_t rng = 77;
    assert_int_equal(tk__heap_core_init(&h, NULL, 4), TK_OK);
    for (size_t i = 0; i < 300; i++) {
        set_key(&g_pred_nodes[i], (int64_t)rng_below(&rng, 50), i);
        assert_int_equal(tk__heap_core_push(&h, &g_pred_nodes[i]), TK_OK);
    }
    size_t removed = 0;
    assert_null(tk__heap_core_remove_if(&h, pred_none, NULL, &removed));
    assert_int_equal(removed, 0);

    tk_node *list = tk__heap_core_remove_if(&h, pred_multiple_of_three, &c, &removed);
    assert_int_equal(removed, 100);
    for (int i = 0; i < 300; i++)
        assert_int_equal(c.calls[i], 1);
    size_t listed = 0;
    for (tk_node *n = list; n != NULL; n = tk_node_next_detached(n)) {
        assert_int_equal(n->seq % 3, 0);
        assert_false(tk__heap_core_contains(&h, n));
        listed++;
    }
    assert_int_equal(listed, 100);
    assert_int_equal(tk__heap_core_size(&h), 200);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    /* the survivors still leave in order */
    tk_node *prev = NULL, *n;
    while ((n = tk__heap_core_pop(&h)) != NULL) {
        assert_int_not_equal(n->seq % 3, 0);
        if (prev != NULL)
            assert_true(key_less(prev, n));
        prev = n;
    }

    /* removing everything empties the heap and shrinks it */
    for (size_t i = 0; i < 300; i++)
        assert_int_equal(tk__heap_core_push(&h, &g_pred_nodes[i]), TK_OK);
    list = tk__heap_core_remove_if(&h, pred_all, NULL, &removed);
    assert_non_null(list);
    assert_int_equal(removed, 300);
    assert_int_equal(tk__heap_core_size(&h), 0);
    assert_int_equal(h.capacity, 4);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    tk__heap_core_destroy(&h);
}

/* ---- a model walk with every operation ----------------------------------------- */

/* Pushes (some in bursts, the owner away meanwhile), removals, cancel and
 * reschedule pairs, pops, pop_due(), remove_if(), drains and mass
 * cancellations, against a sorted model, with check() after every step, at
 * several sizes, with few and with many equal deadlines, resizing itself and
 * resized by its owner as the adapter does. */
typedef struct dyn_model {
    tk_node **v;
    size_t n;
} dyn_model;

static void dyn_insert(dyn_model *m, tk_node *x) {
    size_t lo = 0, hi = m->n; /* the first element greater than x */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_less(x, m->v[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    memmove(&m->v[lo + 1], &m->v[lo], (m->n - lo) * sizeof(m->v[0]));
    m->v[lo] = x;
    m->n++;
}

static void dyn_erase(dyn_model *m, const tk_node *x) {
    size_t lo = 0, hi = m->n; /* the first element not less than x */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_less(m->v[mid], x))
            lo = mid + 1;
        else
            hi = mid;
    }
    assert_true(lo < m->n && m->v[lo] == x);
    memmove(&m->v[lo], &m->v[lo + 1], (m->n - lo - 1) * sizeof(m->v[0]));
    m->n--;
}

typedef struct walk {
    uint64_t seed;
    size_t pool;          /* nodes drawn from */
    size_t deadline_span; /* deadlines in [0, span): small spans make ties */
    int steps;
    size_t initial_capacity; /* small, so the walk crosses growth and shrink points */
    bool owner;              /* automatic resizing off; the walk resizes */
} walk;

typedef struct walk_tally {
    size_t reschedules, remove_ifs, drains, mass_cancels, full_pushes;
} walk_tally;

typedef struct walk_state {
    tk__heap_core h;
    tk_node *pool;
    bool *in;
    dyn_model m;
    uint64_t rng, next_seq;
    walk_tally *tally;
    const walk *w;
} walk_state;

static void walk_push(walk_state *s, size_t i) {
    tk__heap_core *h = &s->h;
    if (s->in[i]) {
        assert_int_equal(tk__heap_core_push(h, &s->pool[i]), TK_EINVAL);
        return;
    }
    set_key(&s->pool[i], (int64_t)rng_below(&s->rng, s->w->deadline_span), s->next_seq++);
    int rc = tk__heap_core_push(h, &s->pool[i]);
    if (rc == TK_EFULL) {
        assert_true(s->w->owner);
        assert_int_equal(tk__heap_core_size(h), tk__heap_core_capacity(h));
        s->tally->full_pushes++;
        assert_true(owner_resize(h));
        rc = tk__heap_core_push(h, &s->pool[i]);
    }
    assert_int_equal(rc, TK_OK);
    s->in[i] = true;
    dyn_insert(&s->m, &s->pool[i]);
}

static void walk_remove(walk_state *s, size_t i) {
    int rc = tk__heap_core_remove(&s->h, &s->pool[i]);
    if (!s->in[i]) {
        assert_int_equal(rc, TK_ENOENT);
        return;
    }
    assert_int_equal(rc, TK_OK);
    assert_int_equal(tk__heap_priv_of(&s->pool[i])->index, SIZE_MAX);
    s->in[i] = false;
    dyn_erase(&s->m, &s->pool[i]);
}

static void walk_took(walk_state *s, tk_node *got) {
    assert_non_null(got);
    assert_ptr_equal(got, s->m.v[0]);
    size_t i = (size_t)(got - s->pool);
    assert_true(s->in[i]);
    assert_int_equal(tk__heap_priv_of(got)->index, SIZE_MAX);
    s->in[i] = false;
    dyn_erase(&s->m, got);
}

static size_t g_walk_mod;

static bool pred_seq_mod(const tk_node *n, void *ctx) {
    size_t *r = ctx;
    return n->seq % g_walk_mod == *r;
}

static void walk_step(walk_state *s, int step) {
    tk__heap_core *h = &s->h;
    const walk *w = s->w;
    size_t r = rng_below(&s->rng, 1000);
    int phase = (step / 700) % 3; /* grow, churn, shrink, grow, ... */
    size_t push_w = phase == 0 ? 420 : phase == 1 ? 250 : 140;
    if (r < push_w) {
        walk_push(s, rng_below(&s->rng, w->pool));
    } else if (r < push_w + 230) {
        walk_remove(s, rng_below(&s->rng, w->pool));
    } else if (r < push_w + 380) { /* cancel and reschedule one that is queued */
        if (s->m.n > 0) {
            size_t i = (size_t)(s->m.v[rng_below(&s->rng, s->m.n)] - s->pool);
            walk_remove(s, i);
            walk_push(s, i);
            s->tally->reschedules++;
        }
    } else if (r < push_w + 450) {
        tk_node *got = tk__heap_core_pop(h);
        if (s->m.n == 0)
            assert_null(got);
        else
            walk_took(s, got);
    } else if (r < push_w + 540) {
        int64_t now = (int64_t)rng_below(&s->rng, w->deadline_span);
        tk_node *got = tk__heap_core_pop_due(h, now);
        if (s->m.n > 0 && s->m.v[0]->deadline_ns <= now)
            walk_took(s, got);
        else
            assert_null(got);
    } else if (r < push_w + 546) {
        size_t rest = rng_below(&s->rng, 3), removed = 99;
        g_walk_mod = 3;
        size_t before = s->m.n, listed = 0;
        tk_node *list = tk__heap_core_remove_if(h, pred_seq_mod, &rest, &removed);
        for (tk_node *x = list; x != NULL; x = tk_node_next_detached(x)) {
            assert_int_equal(x->seq % 3, rest);
            size_t i = (size_t)(x - s->pool);
            assert_true(s->in[i]);
            s->in[i] = false;
            dyn_erase(&s->m, x);
            listed++;
        }
        assert_int_equal(listed, removed);
        for (size_t k = 0; k < s->m.n; k++)
            assert_int_not_equal(s->m.v[k]->seq % 3, rest);
        assert_int_equal(before - listed, s->m.n);
        s->tally->remove_ifs++;
    } else if (r < push_w + 548) { /* drain: pop everything, in the model's order */
        for (size_t k = 0; k < s->m.n; k++) {
            tk_node *got = tk__heap_core_pop(h);
            assert_ptr_equal(got, s->m.v[k]);
            s->in[got - s->pool] = false;
        }
        s->m.n = 0;
        assert_null(tk__heap_core_pop(h));
        s->tally->drains++;
    } else if (r < push_w + 555) { /* a burst of pushes, the owner away meanwhile */
        size_t burst = 1 + rng_below(&s->rng, w->pool / 4 + 1);
        for (size_t k = 0; k < burst; k++)
            walk_push(s, rng_below(&s->rng, w->pool));
    } else if (r < push_w + 559) { /* mass cancellation, most of what is queued */
        size_t keep = s->m.n / 8;
        while (s->m.n > keep)
            walk_remove(s, (size_t)(s->m.v[rng_below(&s->rng, s->m.n)] - s->pool));
        s->tally->mass_cancels++;
    } else {
        walk_push(s, rng_below(&s->rng, w->pool));
    }
}

static void run_walk(const walk *w, walk_tally *tally) {
    walk_state s;
    memset(&s, 0, sizeof(s));
    s.w = w;
    s.tally = tally;
    s.rng = w->seed;
    s.pool = calloc(w->pool, sizeof(tk_node));
    s.in = calloc(w->pool, sizeof(bool));
    s.m.v = calloc(w->pool, sizeof(tk_node *));
    assert_true(s.pool != NULL && s.in != NULL && s.m.v != NULL);
    for (size_t i = 0; i < w->pool; i++)
        tk__heap_priv_of(&s.pool[i])->index = SIZE_MAX;
    test_alloc t = {.fail_after = -1};
    tk_allocator a = make_allocator(&t);
    assert_int_equal(tk__heap_core_init(&s.h, &a, w->initial_capacity), TK_OK);
    if (w->owner)
        tk__heap_core_set_auto_resize(&s.h, false);
    for (int step = 0; step < w->steps; step++) {
        walk_step(&s, step);
        if (w->owner)
            (void)owner_resize(&s.h);
        tk__heap_core *h = &s.h;
        assert_int_equal(tk__heap_core_check(h), TK_OK);
        assert_int_equal(tk__heap_core_size(h), s.m.n);
        assert_ptr_equal(tk__heap_core_peek(h), s.m.n > 0 ? s.m.v[0] : NULL);
        assert_true(tk__heap_core_capacity(h) >= tk__heap_core_size(h));
        assert_true(tk__heap_core_capacity(h) >= w->initial_capacity);
        for (int k = 0; k < 4; k++) {
            size_t i = rng_below(&s.rng, w->pool);
            assert_int_equal(tk__heap_core_contains(h, &s.pool[i]), s.in[i]);
        }
    }
    for (size_t k = 0; k < s.m.n; k++)
        assert_ptr_equal(tk__heap_core_pop(&s.h), s.m.v[k]);
    assert_null(tk__heap_core_pop(&s.h));
    tk__heap_core_destroy(&s.h);
    assert_int_equal(t.live_bytes, 0);
    free(s.m.v);
    free(s.in);
    free(s.pool);
}

static void walks_with_every_operation_match_the_model_at_every_size_and_mode(void **state) {
    (void)state;
    static const size_t pools[] = {40, 600, 5000};
    static const size_t spans[] = {1000000, 8};
    static const size_t caps[] = {1, 4, 64};
    walk_tally tally;
    memset(&tally, 0, sizeof(tally));
    uint64_t seed = 0x1a2b3c;
    for (size_t p = 0; p < sizeof(pools) / sizeof(pools[0]); p++)
        for (size_t sp = 0; sp < sizeof(spans) / sizeof(spans[0]); sp++)
            for (int owner = 0; owner < 2; owner++) {
                walk w = {
                    .seed = seed++,
                    .pool = pools[p],
                    .deadline_span = spans[sp],
                    .steps = pools[p] >= 5000 ? 12000 : 5000,
                    .initial_capacity = caps[(p + sp + (size_t)owner) % 3],
                    .owner = owner != 0,
                };
                run_walk(&w, &tally);
            }
    print_message("  arity %d: %zu reschedules, %zu remove_ifs, %zu drains, %zu mass cancels, "
                  "%zu full pushes\n",
                  TK__HEAP_ARITY, tally.reschedules, tally.remove_ifs, tally.drains,
                  tally.mass_cancels, tally.full_pushes);
    /* the walks went down every path */
    assert_true(tally.reschedules > 1000);
    assert_true(tally.remove_ifs > 10);
    assert_true(tally.drains > 3);
    assert_true(tally.mass_cancels > 10);
    assert_true(tally.full_pushes > 0);
}

/* ---- latest (slack) ---------------------------------------------------------- */

static int64_t end_of(const tk_node *n) {
    return n->deadline_ns > INT64_MAX - n->slack_ns ? INT64_MAX : n->deadline_ns + n->slack_ns;
}

static void latest_is_enoent_when_empty_and_einval_for_null(void **state) {
    (void)state;
    tk__heap_core h;
    int64_t t = 7;
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    assert_int_equal(tk__heap_core_latest(&h, &t), TK_ENOENT);
    assert_int_equal(tk__heap_core_latest(NULL, &t), TK_EINVAL);
    assert_int_equal(tk__heap_core_latest(&h, NULL), TK_EINVAL);
    tk__heap_core_destroy(&h);
}

/* A node with a long window before one with none: the answer is the later
 * node's deadline; with equal deadlines, the smallest slack decides; the
 * sum saturates at INT64_MAX. */
static void latest_is_the_smallest_deadline_plus_slack(void **state) {
    (void)state;
    tk__heap_core h;
    tk_node n[6];
    memset(n, 0, sizeof(n));
    int64_t t = 0;
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    set_key(&n[0], 10, 0);
    n[0].slack_ns = 1000;
    assert_int_equal(tk__heap_core_push(&h, &n[0]), TK_OK);
    assert_int_equal(tk__heap_core_latest(&h, &t), TK_OK);
    assert_int_equal(t, 1010);
    set_key(&n[1], 50, 1); /* no slack: its deadline ends the wait */
    assert_int_equal(tk__heap_core_push(&h, &n[1]), TK_OK);
    assert_int_equal(tk__heap_core_latest(&h, &t), TK_OK);
    assert_int_equal(t, 50);
    assert_int_equal(tk__heap_core_remove(&h, &n[1]), TK_OK);
    set_key(&n[2], 10, 2); /* a tie with n[0], less slack */
    n[2].slack_ns = 300;
    set_key(&n[3], 5, 3); /* earlier, with more slack than n[2] leaves */
    n[3].slack_ns = 400;
    assert_int_equal(tk__heap_core_push(&h, &n[2]), TK_OK);
    assert_int_equal(tk__heap_core_push(&h, &n[3]), TK_OK);
    assert_int_equal(tk__heap_core_latest(&h, &t), TK_OK);
    assert_int_equal(t, 310);
    assert_int_equal(tk__heap_core_check(&h), TK_OK);
    tk__heap_core_destroy(&h);

    /* saturation: ends past INT64_MAX are INT64_MAX, and one just below wins */
    assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
    set_key(&n[4], INT64_MAX - 5, 4);
    n[4].slack_ns = 100;
    set_key(&n[5], INT64_MAX, 5);
    n[5].slack_ns = INT64_MAX;
    assert_int_equal(tk__heap_core_push(&h, &n[5]), TK_OK);
    assert_int_equal(tk__heap_core_push(&h, &n[4]), TK_OK);
    assert_int_equal(tk__heap_core_latest(&h, &t), TK_OK);
    assert_int_equal(t, INT64_MAX);
    assert_int_equal(tk__heap_core_remove(&h, &n[4]), TK_OK);
    n[4].slack_ns = 3;
    assert_int_equal(tk__heap_core_push(&h, &n[4]), TK_OK);
    assert_int_equal(tk__heap_core_latest(&h, &t), TK_OK);
    assert_int_equal(t, INT64_MAX - 2);
    tk__heap_core_destroy(&h);
}

/* Random heaps, sorted runs and scrambled ones, up to 6000 nodes, against
 * a brute-force minimum: next() <= latest() <= the smallest end always, and
 * exactly that end when few enough deadlines lie below it for the walk's
 * frontier never to fill (40 slots taken, d - 1 children each, from 128). */
static void latest_matches_a_brute_force_minimum(void **state) {
    (void)state;
    enum { N = 6000 };
    tk_node *n = calloc(N, sizeof(*n));
    assert_non_null(n);
    uint64_t rs = 99;
    static const int64_t slacks[6] = {0, 1, 1000, 1000000, INT64_MAX / 4, INT64_MAX};
    for (int round = 0; round < 60; round++) {
        tk__heap_core h;
        assert_int_equal(tk__heap_core_init(&h, NULL, 0), TK_OK);
        size_t size = 1 + rng_below(&rs, round < 40 ? 300 : N);
        bool sorted = round % 3 == 0;
        int64_t spread = round % 2 ? 1000 : 1000000000;
        for (size_t i = 0; i < size; i++) {
            int64_t d = sorted ? (int64_t)i * 10 : (int64_t)rng_below(&rs, (size_t)spread);
            set_key(&n[i], d, i);
            n[i].slack_ns = slacks[rng_below(&rs, 6)];
            if (round % 5 == 4) /* long windows but one: the walk must reach it, deep */
                n[i].slack_ns = i == size / 2 ? 0 : INT64_MAX / 2 + (int64_t)rng_below(&rs, 1000);
            assert_int_equal(tk__heap_core_push(&h, &n[i]), TK_OK);
        }
        for (int step = 0; step < 20 && tk__heap_core_size(&h) > 0; step++) {
            int64_t min_end = INT64_MAX, t = 0;
            for (size_t i = 0; i < size; i++)
                if (tk__heap_core_contains(&h, &n[i]) && end_of(&n[i]) < min_end)
                    min_end = end_of(&n[i]);
            size_t below = 0;
            for (size_t i = 0; i < size; i++)
                below += tk__heap_core_contains(&h, &n[i]) && n[i].deadline_ns < min_end;
            assert_int_equal(tk__heap_core_latest(&h, &t), TK_OK);
            assert_true(t >= tk__heap_core_peek(&h)->deadline_ns);
            assert_true(t <= min_end);
            if (below <= 40)
                assert_int_equal(t, min_end);
            (void)tk__heap_core_pop(&h); /* and again, one node fewer */
        }
        assert_int_equal(tk__heap_core_check(&h), TK_OK);
        tk__heap_core_destroy(&h);
    }
    free(n);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_with_zero_capacity_gives_default_capacity_and_allocator),
        cmocka_unit_test(init_rejects_null_heap_and_impossible_capacity),
        cmocka_unit_test(init_reports_enomem_when_the_array_cannot_be_allocated),
        cmocka_unit_test(empty_heap_has_nothing_to_peek_pop_or_remove),
        cmocka_unit_test(pop_returns_nodes_by_deadline_then_seq),
        cmocka_unit_test(pop_due_hands_out_the_head_only_once_its_deadline_is_reached),
        cmocka_unit_test(thousands_of_equal_deadlines_leave_in_fifo_order),
        cmocka_unit_test(random_operations_match_a_sorted_reference_model),
        cmocka_unit_test(random_operations_with_many_ties_match_the_model),
        cmocka_unit_test(array_grows_by_half_again_when_full),
        cmocka_unit_test(memory_comes_back_after_mass_cancellation),
        cmocka_unit_test(shrinking_stops_at_the_initial_capacity),
        cmocka_unit_test(push_that_cannot_grow_reports_enomem_and_leaves_the_heap_intact),
        cmocka_unit_test(failed_shrink_keeps_the_larger_array_and_the_heap_working),
        cmocka_unit_test(owner_driven_heap_never_allocates_and_reports_a_full_array),
        cmocka_unit_test(wanted_capacity_asks_to_grow_once_fifteen_sixteenths_are_in_use),
        cmocka_unit_test(wanted_capacity_returns_the_memory_of_a_mass_removal_in_one_move),
        cmocka_unit_test(adopt_refuses_a_move_that_is_not_wanted_and_leaves_the_heap_alone),
        cmocka_unit_test(a_failed_block_allocation_leaves_the_heap_full_but_working),
        cmocka_unit_test(owner_driven_random_operations_match_the_model_and_moves_settle),
        cmocka_unit_test(removed_and_popped_nodes_are_no_longer_contained),
        cmocka_unit_test(a_node_of_another_heap_is_not_contained_and_not_removed),
        cmocka_unit_test(push_rejects_null_and_a_node_already_in_the_heap),
        cmocka_unit_test(a_sorted_run_pops_without_moving_or_reindexing_anything),
        cmocka_unit_test(sorted_runs_compact_or_grow_and_match_the_model),
        cmocka_unit_test(check_detects_a_wrong_index_a_changed_key_and_broken_order),
        cmocka_unit_test(remove_if_removes_exactly_the_matches_asking_once_per_node),
        cmocka_unit_test(count_due_matches_a_brute_force_count_up_to_its_limit),
        cmocka_unit_test(walks_with_every_operation_match_the_model_at_every_size_and_mode),
        cmocka_unit_test(latest_is_enoent_when_empty_and_einval_for_null),
        cmocka_unit_test(latest_is_the_smallest_deadline_plus_slack),
        cmocka_unit_test(latest_matches_a_brute_force_minimum),
    };
    return cmocka_run_group_tests_name("heap_core", tests, NULL, NULL);
}
