/* SPDX-License-Identifier: MIT */
/* timerkit: wheel core unit tests, driven tick by tick against a reference
 * model (a plain set of live nodes: a node is due at tick k iff deadline <=
 * t_k). Fixed seeds; tk__wheel_core_check() after every step, and the
 * latest tick (slack) checked against the brute-force earliest window end.
 * The wheel's tk_core_ops (wheel-core-ops.c) is driven directly for its
 * latest(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rng.h"
#include "timerkit/status.h"
#include "wheel-core.h"
#include "wheel-internal.h"

__extension__ typedef __int128 i128;

/* ---- reference model ----------------------------------------------------------- */

typedef struct model {
    tk__wheel_core w;
    int64_t start_ns, tick_ns;
    uint32_t slots;
    tk_node *nodes; /* pool */
    bool *live;
    size_t pool, nlive;
    uint64_t seq;
    bool slack; /* random nodes get random slack (else none) */
} model;

static int64_t ref_tick_time(const model *m, uint64_t k) {
    i128 t = (i128)m->start_ns + (i128)k * m->tick_ns;
    return t > INT64_MAX ? INT64_MAX : (int64_t)t;
}

/* Smallest k with deadline <= t_k (k >= 0). */
static uint64_t ref_raw_tick(const model *m, int64_t d) {
    if (d <= m->start_ns)
        return 0;
    i128 diff = (i128)d - m->start_ns;
    return (uint64_t)((diff + m->tick_ns - 1) / m->tick_ns);
}

static void model_init(model *m, int64_t tick_ns, uint32_t slots, int64_t start_ns, size_t pool) {
    memset(m, 0, sizeof(*m));
    assert_int_equal(tk__wheel_core_init(&m->w, NULL, tick_ns, slots, start_ns), TK_OK);
    m->start_ns = start_ns;
    m->tick_ns = tick_ns;
    m->slots = m->w.ticks_per_wheel;
    m->pool = pool;
    m->nodes = calloc(pool, sizeof(tk_node));
    m->live = calloc(pool, sizeof(bool));
    assert_non_null(m->nodes);
    assert_non_null(m->live);
}

static void model_free(model *m) {
    tk__wheel_core_destroy(&m->w);
    free(m->nodes);
    free(m->live);
}

/* Twin models (same pool, same steps, compared after each): node i gets the
 * same key in both and is added to / removed from both wheels. */
static void twin_add(model *a, model *b, size_t i, int64_t deadline_ns, uint64_t seq) {
    a->nodes[i].deadline_ns = b->nodes[i].deadline_ns = deadline_ns;
    a->nodes[i].seq = b->nodes[i].seq = seq;
    tk__wheel_core_add(&a->w, &a->nodes[i]);
    tk__wheel_core_add(&b->w, &b->nodes[i]);
    a->live[i] = b->live[i] = true;
}

static void twin_remove(model *a, model *b, size_t i) {
    tk__wheel_core_remove(&a->w, &a->nodes[i]);
    tk__wheel_core_remove(&b->w, &b->nodes[i]);
    a->live[i] = b->live[i] = false;
}

static int cmp_key(const void *a, const void *b) {
    const tk_node *x = *(tk_node *const *)a, *y = *(tk_node *const *)b;
    if (x->deadline_ns != y->deadline_ns)
        return x->deadline_ns < y->deadline_ns ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Checks that `got` (count `k`) is exactly the live nodes due at tick
 * `tick`, sorted; marks them dead. */
static void expect_expired(model *m, uint64_t tick, tk_node *got, size_t k) {
    int64_t t = ref_tick_time(m, tick);
    tk_node **want = malloc((m->nlive + 1) * sizeof(*want));
    assert_non_null(want);
    size_t nw = 0;
    for (size_t i = 0; i < m->pool; i++)
        if (m->live[i] && m->nodes[i].deadline_ns <= t)
            want[nw++] = &m->nodes[i];
    qsort(want, nw, sizeof(*want), cmp_key);
    if (k != nw) {
        fprintf(stderr, "tick %llu t %lld cur %llu k %zu nw %zu\n", (unsigned long long)tick,
                (long long)t, (unsigned long long)tk__wheel_core_current_tick(&m->w), k, nw);
        for (size_t j = 0; j < nw; j++)
            fprintf(stderr, " want d=%lld e=%llu\n", (long long)want[j]->deadline_ns,
                    (unsigned long long)tk__wheel_priv_of(want[j])->rounds);
    }
    assert_int_equal(k, nw);
    size_t i = 0;
    for (tk_node *n = got; n != NULL; n = tk_node_next_detached(n), i++) {
        assert_true(i < nw);
        assert_ptr_equal(n, want[i]);
        assert_true(n->deadline_ns <= t); /* never early */
        m->live[n - m->nodes] = false;
    }
    assert_int_equal(i, nw);
    m->nlive -= nw;
    free(want);
}

/* The last tick node n (in the wheel) may leave at: the tick of deadline +
 * slack (saturated; a negative slack counts as 0), or its expiry tick if
 * later. */
static uint64_t ref_end_tick(const model *m, const tk_node *n) {
    i128 end = (i128)n->deadline_ns + (n->slack_ns > 0 ? n->slack_ns : 0);
    uint64_t t = ref_raw_tick(m, end > INT64_MAX ? INT64_MAX : (int64_t)end);
    uint64_t e = tk__wheel_core_expiry(n);
    return t > e ? t : e;
}

/* The latest tick lies between the next expiry tick and the earliest end
 * of a window; exact when that end is within this revolution (unlimited
 * budget). With a budget of a few nodes: after the current tick and no
 * later than that end. */
static void check_latest(model *m, bool any, uint64_t next) {
    uint64_t lt = 0, lb = 0;
    assert_int_equal(tk__wheel_core_latest_tick(&m->w, SIZE_MAX, &lt), any);
    assert_int_equal(tk__wheel_core_latest_tick(&m->w, 3, &lb), any);
    if (!any)
        return;
    uint64_t end = UINT64_MAX;
    for (size_t i = 0; i < m->pool; i++)
        if (m->live[i]) {
            uint64_t t = ref_end_tick(m, &m->nodes[i]);
            if (t < end)
                end = t;
        }
    assert_true(next <= lt && lt <= end);
    assert_true(tk__wheel_core_current_tick(&m->w) < lb && lb <= end);
    if (end <= tk__wheel_core_current_tick(&m->w) + m->slots)
        assert_int_equal(lt, end);
}

static void check_model(model *m) {
    assert_int_equal(tk__wheel_core_check(&m->w), TK_OK);
    assert_int_equal(tk__wheel_core_size(&m->w), m->nlive);
    uint64_t next = 0;
    bool any = tk__wheel_core_next_expiry_tick(&m->w, &next);
    assert_int_equal(any, m->nlive != 0);
    if (any) {
        uint64_t c = tk__wheel_core_current_tick(&m->w);
        uint64_t best = UINT64_MAX;
        for (size_t i = 0; i < m->pool; i++)
            if (m->live[i]) {
                uint64_t r = ref_raw_tick(m, m->nodes[i].deadline_ns);
                if (r < best)
                    best = r;
            }
        if (best <= c)
            best = c + 1;
        assert_int_equal(next, best);
    }
    check_latest(m, any, next);
}

/* A random slack: none half of the time, else within a few ticks, a few
 * revolutions, the end of time, or negative (counts as none). */
static int64_t random_slack(model *m, uint64_t *rs) {
    uint64_t span = (uint64_t)m->tick_ns * m->slots;
    switch (rng_below(rs, 12)) {
    case 0:
    case 1:
        return (int64_t)rng_below(rs, 3 * (uint64_t)m->tick_ns + 1);
    case 2:
    case 3:
        return (int64_t)rng_below(rs, span < UINT64_MAX / 3 ? 3 * span : span);
    case 4:
        return INT64_MAX;
    case 5:
        return -(int64_t)rng_below(rs, 1000);
    default:
        return 0;
    }
}

static int64_t random_deadline(model *m, uint64_t *rs) {
    uint64_t c = tk__wheel_core_current_tick(&m->w);
    int64_t now = ref_tick_time(m, c);
    i128 span = (i128)m->tick_ns * m->slots;
    i128 d;
    switch (rng_below(rs, 10)) {
    case 0: /* in the past */
        d = (i128)now - (i128)rng_below(rs, (uint64_t)(5 * m->tick_ns + 1));
        break;
    case 1: /* exactly on a tick */
        d = (i128)ref_tick_time(m, c + rng_below(rs, 2 * m->slots + 2));
        break;
    case 2: /* many revolutions ahead */
        d = (i128)now + (i128)rng_below(rs, (uint64_t)(span * 40));
        break;
    case 3: /* equal to a live node's deadline */
        for (int tries = 0; tries < 8; tries++) {
            size_t i = (size_t)rng_below(rs, m->pool);
            if (m->live[i])
                return m->nodes[i].deadline_ns;
        }
        d = now;
        break;
    case 4:
        if (rng_below(rs, 16) == 0)
            return rng_below(rs, 2) ? INT64_MAX : INT64_MIN;
        /* fall through */
    case 5:
        d = (i128)now + (i128)rng_below(rs, (uint64_t)(2 * m->tick_ns + 1));
        break;
    default: /* within a few revolutions */
        d = (i128)now + (i128)rng_below(rs, (uint64_t)(span * 3));
        break;
    }
    if (d > INT64_MAX)
        d = INT64_MAX;
    if (d < INT64_MIN)
        d = INT64_MIN;
    return (int64_t)d;
}

static void op_add(model *m, uint64_t *rs) {
    for (int tries = 0; tries < 4; tries++) {
        size_t i = (size_t)rng_below(rs, m->pool);
        if (m->live[i])
            continue;
        tk_node *n = &m->nodes[i];
        n->deadline_ns = random_deadline(m, rs);
        n->slack_ns = m->slack ? random_slack(m, rs) : 0;
        n->seq = m->seq++;
        assert_false(tk__wheel_core_contains(&m->w, n));
        tk__wheel_core_add(&m->w, n);
        assert_true(tk__wheel_core_contains(&m->w, n));
        m->live[i] = true;
        m->nlive++;
        return;
    }
}

static void op_remove(model *m, uint64_t *rs) {
    for (int tries = 0; tries < 8; tries++) {
        size_t i = (size_t)rng_below(rs, m->pool);
        if (!m->live[i])
            continue;
        tk__wheel_core_remove(&m->w, &m->nodes[i]);
        assert_false(tk__wheel_core_contains(&m->w, &m->nodes[i]));
        m->live[i] = false;
        m->nlive--;
        return;
    }
}

static void run_random(int64_t tick_ns, uint32_t slots, int64_t start_ns, uint64_t seed,
                       int steps) {
    model m;
    model_init(&m, tick_ns, slots, start_ns, 400);
    m.slack = seed % 2 != 0; /* odd seeds: with slack */
    uint64_t rs = seed;
    size_t max_live = 0;
    for (int step = 0; step < steps; step++) {
        uint64_t r = rng_below(&rs, 100);
        bool drain = step >= steps - steps / 10; /* last tenth: only jumps, to empty */
        if (drain) {
            r = 99;
        }
        if (r < 55) {
            op_add(&m, &rs);
        } else if (r < 63) {
            op_remove(&m, &rs);
        } else if (r < 93) {
            size_t k = 99;
            uint64_t c = tk__wheel_core_current_tick(&m.w);
            tk_node *got = tk__wheel_core_advance(&m.w, &k);
            assert_int_equal(tk__wheel_core_current_tick(&m.w), c + 1);
            expect_expired(&m, c + 1, got, k);
        } else if (r < 98) {
            uint64_t c = tk__wheel_core_current_tick(&m.w);
            uint64_t span = rng_below(&rs, 4) == 0 ? 3 * (uint64_t)m.slots + 2 : 8;
            uint64_t to = c + rng_below(&rs, span);
            size_t k = 99;
            tk_node *got = tk__wheel_core_advance_to(&m.w, to, &k);
            if (to <= c) { /* no-op: nodes due at t_c leave on the next tick */
                assert_null(got);
                assert_int_equal(k, 0);
                assert_int_equal(tk__wheel_core_current_tick(&m.w), c);
            } else {
                assert_int_equal(tk__wheel_core_current_tick(&m.w), to);
                expect_expired(&m, to, got, k);
            }
        } else {
            /* Jump straight to the next expiry (far and INT64_MAX deadlines
             * during the final drain): exactly something expires there. */
            uint64_t next, c = tk__wheel_core_current_tick(&m.w);
            if (tk__wheel_core_next_expiry_tick(&m.w, &next) &&
                (drain || next - c <= 100 * (uint64_t)m.slots)) {
                size_t k = 0;
                tk_node *got = tk__wheel_core_advance_to(&m.w, next, &k);
                assert_true(k > 0);
                expect_expired(&m, next, got, k);
            }
        }
        if (m.nlive > max_live)
            max_live = m.nlive;
        check_model(&m);
        /* contains() agrees with the model for a random node */
        size_t i = (size_t)rng_below(&rs, m.pool);
        assert_int_equal(tk__wheel_core_contains(&m.w, &m.nodes[i]), m.live[i]);
    }
    assert_int_equal(m.nlive, 0);
    assert_true(max_live > 20);
    model_free(&m);
}

static void random_vs_model_small_wheel(void **state) {
    (void)state;
    run_random(1000, 8, 0, 1, 20000);
    run_random(1000, 8, 0, 2, 20000);
}

static void random_vs_model_one_slot(void **state) {
    (void)state;
    run_random(7, 1, -123, 3, 20000);
}

static void random_vs_model_odd_sizes(void **state) {
    (void)state;
    run_random(3, 100, INT64_MIN + 5, 4, 15000);               /* rounded to 128 */
    run_random(1000000, 64, INT64_MAX - 1000000000, 5, 15000); /* near the end of time */
    run_random(1, 16, 42, 6, 15000);                           /* 1 ns ticks */
}

/* The slack flag (I7): set by a node with slack, cleared once the wheel
 * empties and takes a node again; while clear the latest tick is the next
 * expiry tick, also when a removal left a bucket minimum stale. */
static void a_wheel_without_slack_answers_its_next_expiry_tick(void **state) {
    (void)state;
    tk__wheel_core w;
    assert_int_equal(tk__wheel_core_init(&w, NULL, 10, 4, 0), TK_OK);
    tk_node a = {.deadline_ns = 10, .seq = 1}; /* tick 1, slot 1 */
    tk_node b = {.deadline_ns = 50, .seq = 2}; /* tick 5, slot 1 */
    tk__wheel_core_add(&w, &a);
    tk__wheel_core_add(&w, &b);
    assert_false(tk__wheel_core_has_slack(&w));
    uint64_t t;
    tk__wheel_core_remove(&w, &a); /* slot 1's minimum is stale */
    assert_true(tk__wheel_core_latest_tick(&w, SIZE_MAX, &t));
    assert_int_equal(t, 5);
    tk_node c = {.deadline_ns = 20, .seq = 3, .slack_ns = 25}; /* ticks 2 .. 5 */
    tk__wheel_core_add(&w, &c);
    assert_true(tk__wheel_core_has_slack(&w));
    assert_true(tk__wheel_core_latest_tick(&w, SIZE_MAX, &t));
    assert_int_equal(t, 5);
    size_t k;
    tk_node *l = tk__wheel_core_advance_to(&w, 5, &k);
    assert_int_equal(k, 2);
    assert_ptr_equal(l, &c);
    assert_true(tk__wheel_core_has_slack(&w)); /* sticky while empty */
    assert_int_equal(tk__wheel_core_check(&w), TK_OK);
    tk__wheel_core_add(&w, &a);
    assert_false(tk__wheel_core_has_slack(&w)); /* cleared by an add to an empty wheel */
    assert_int_equal(tk__wheel_core_check(&w), TK_OK);
    tk__wheel_core_destroy(&w);
}

static void random_vs_model_large_wheel(void **state) {
    (void)state;
    run_random(250000, 1024, 1000, 7, 10000);
}

/* advance_to(k) returns what repeated advance() would, tick for tick. */
static void advance_to_equals_repeated_advance(void **state) {
    (void)state;
    for (uint64_t seed = 10; seed < 14; seed++) {
        model a, b;
        model_init(&a, 1000, 16, 5, 300);
        model_init(&b, 1000, 16, 5, 300);
        uint64_t rs = seed;
        for (int step = 0; step < 8000; step++) {
            uint64_t r = rng_below(&rs, 10);
            if (r < 5) {
                size_t i = (size_t)rng_below(&rs, a.pool);
                if (a.live[i])
                    continue;
                int64_t d = random_deadline(&a, &rs);
                twin_add(&a, &b, i, d, a.seq++);
            } else if (r < 7) {
                size_t i = (size_t)rng_below(&rs, a.pool);
                if (!a.live[i])
                    continue;
                twin_remove(&a, &b, i);
            } else {
                uint64_t to = tk__wheel_core_current_tick(&a.w) + rng_below(&rs, 70);
                size_t ka = 0;
                tk_node *la = tk__wheel_core_advance_to(&a.w, to, &ka);
                size_t kb = 0;
                tk_node *x = la;
                while (tk__wheel_core_current_tick(&b.w) < to) {
                    size_t k1;
                    for (tk_node *y = tk__wheel_core_advance(&b.w, &k1); y != NULL;
                         y = tk_node_next_detached(y), x = tk_node_next_detached(x)) {
                        assert_non_null(x);
                        assert_int_equal(x - a.nodes, y - b.nodes);
                        a.live[x - a.nodes] = b.live[y - b.nodes] = false;
                    }
                    kb += k1;
                }
                assert_null(x);
                assert_int_equal(ka, kb);
            }
            assert_int_equal(tk__wheel_core_check(&a.w), TK_OK);
            assert_int_equal(tk__wheel_core_check(&b.w), TK_OK);
            assert_int_equal(tk__wheel_core_current_tick(&a.w), tk__wheel_core_current_tick(&b.w));
        }
        model_free(&a);
        model_free(&b);
    }
}

/* expire_to(k) expires the nodes advance_to(k) does, unsorted: sorting its
 * list gives advance_to()'s list exactly. */
static void expire_to_is_advance_to_unsorted(void **state) {
    (void)state;
    for (uint64_t seed = 20; seed < 23; seed++) {
        model a, b;
        model_init(&a, 1000, 16, 5, 400);
        model_init(&b, 1000, 16, 5, 400);
        uint64_t rs = seed;
        size_t unsorted = 0;
        for (int step = 0; step < 6000; step++) {
            uint64_t r = rng_below(&rs, 10);
            if (r < 6) {
                size_t i = (size_t)rng_below(&rs, a.pool);
                if (a.live[i])
                    continue;
                int64_t d = random_deadline(&a, &rs);
                /* seq not in add order, so batches come out of buckets unsorted */
                twin_add(&a, &b, i, d, rng_below(&rs, 1000) * 1000 + i);
            } else if (r < 7) {
                size_t i = (size_t)rng_below(&rs, a.pool);
                if (!a.live[i])
                    continue;
                twin_remove(&a, &b, i);
            } else {
                uint64_t to = tk__wheel_core_current_tick(&a.w) + rng_below(&rs, 70);
                size_t ka = 0, kb = 0;
                tk_node *la = tk__wheel_core_expire_to(&a.w, to, &ka);
                tk_node *lb = tk__wheel_core_advance_to(&b.w, to, &kb);
                assert_int_equal(ka, kb);
                size_t n = 0;
                for (tk_node *x = la; x != NULL; x = tk_node_next_detached(x), n++)
                    if (n > 0 && tk_node_next_detached(x) != NULL &&
                        tk_node_before(tk_node_next_detached(x), x))
                        unsorted++;
                assert_int_equal(n, ka);
                tk_node *tail = NULL;
                tk_node *x = tk__node_sort(la, &tail);
                tk_node *last = NULL;
                for (tk_node *y = lb; y != NULL;
                     last = x, y = tk_node_next_detached(y), x = tk_node_next_detached(x)) {
                    assert_non_null(x);
                    assert_int_equal(x - a.nodes, y - b.nodes);
                    a.live[x - a.nodes] = b.live[y - b.nodes] = false;
                }
                assert_null(x);
                assert_ptr_equal(tail, last);
            }
            assert_int_equal(tk__wheel_core_check(&a.w), TK_OK);
            assert_int_equal(tk__wheel_core_current_tick(&a.w), tk__wheel_core_current_tick(&b.w));
        }
        assert_true(unsorted > 0); /* the unsorted path was exercised */
        model_free(&a);
        model_free(&b);
    }
}

/* expire_some(k, enough) hands out, call after call, exactly what expire_to(k)
 * does at once (same nodes, same order), in chunks: each chunk stops after
 * the first tick that brings it to `enough` nodes, or within that tick after
 * exactly `enough` nodes when the tick's bucket is in key order (the current
 * tick then stays before that tick), and only the last chunk (the one that
 * reaches k) may hold fewer; in_order says whether each chunk is sorted. */
static void expire_some_cuts_expire_to_at_tick_boundaries(void **state) {
    (void)state;
    for (uint64_t seed = 30; seed < 33; seed++) {
        model a, b;
        model_init(&a, 1000, 16, 5, 400);
        model_init(&b, 1000, 16, 5, 400);
        uint64_t rs = seed;
        size_t early_stops = 0, splits = 0, ordered_lists = 0, unordered_lists = 0;
        for (int step = 0; step < 6000; step++) {
            uint64_t r = rng_below(&rs, 10);
            if (r < 6) {
                size_t i = (size_t)rng_below(&rs, a.pool);
                if (a.live[i])
                    continue;
                int64_t d = random_deadline(&a, &rs);
                twin_add(&a, &b, i, d, a.seq++);
            } else if (r < 7) {
                size_t i = (size_t)rng_below(&rs, a.pool);
                if (!a.live[i])
                    continue;
                twin_remove(&a, &b, i);
            } else {
                uint64_t to = tk__wheel_core_current_tick(&a.w) + rng_below(&rs, 70);
                size_t enough = (size_t)rng_below(&rs, 40);
                size_t kb = 0;
                tk_node *y = tk__wheel_core_expire_to(&b.w, to, &kb);
                size_t ka = 0;
                do {
                    uint64_t from = tk__wheel_core_current_tick(&a.w);
                    size_t k = 0;
                    bool in_order = false;
                    tk_node *x = tk__wheel_core_expire_some(&a.w, to, enough, &k, &in_order);
                    bool sorted = true; /* what in_order must say */
                    for (tk_node *p = x; p != NULL && tk_node_next_detached(p) != NULL;
                         p = tk_node_next_detached(p))
                        sorted = sorted && !tk_node_before(tk_node_next_detached(p), p);
                    assert_int_equal(in_order, sorted);
                    if (x != NULL && tk_node_next_detached(x) != NULL)
                        *(sorted ? &ordered_lists : &unordered_lists) += 1;
                    uint64_t now = tk__wheel_core_current_tick(&a.w);
                    size_t want = enough == 0 ? 1 : enough;
                    bool split = false; /* a node of tick now + 1 came out */
                    assert_true(now <= to);
                    size_t n = 0, before_last_tick = 0;
                    for (; x != NULL; x = tk_node_next_detached(x), y = tk_node_next_detached(y)) {
                        uint64_t e = tk__wheel_core_expiry(x);
                        assert_true(e > from && e <= now + 1);
                        split = split || e == now + 1;
                        before_last_tick += e < now;
                        assert_non_null(y);
                        assert_int_equal(x - a.nodes, y - b.nodes);
                        a.live[x - a.nodes] = b.live[y - b.nodes] = false;
                        n++;
                    }
                    assert_int_equal(n, k);
                    assert_true(now > from || split || (from == to && k == 0));
                    if (split) { /* within a tick: exactly enough, all of it sorted */
                        assert_int_equal(k, want);
                        assert_true(now < to);
                        splits++;
                    } else if (now < to) { /* at the tick that made it enough */
                        assert_true(k >= want);
                        assert_true(before_last_tick < want);
                        early_stops++;
                    }
                    ka += k;
                    assert_int_equal(tk__wheel_core_check(&a.w), TK_OK);
                } while (tk__wheel_core_current_tick(&a.w) < to);
                assert_null(y);
                assert_int_equal(ka, kb);
            }
            assert_int_equal(tk__wheel_core_check(&a.w), TK_OK);
            assert_int_equal(tk__wheel_core_current_tick(&a.w), tk__wheel_core_current_tick(&b.w));
        }
        print_message("      seed %llu: %zu cuts at a tick's end, %zu within a tick\n",
                      (unsigned long long)seed, early_stops, splits);
        assert_true(early_stops > 0 && splits > 0); /* chunks were cut both ways */
        /* in_order was checked both ways */
        assert_true(ordered_lists > 0 && unordered_lists > 0);
        model_free(&a);
        model_free(&b);
    }
}

/* ---- directed cases ------------------------------------------------------------- */

/* A tick of 1000 nodes added in key order (one deadline, rising seq) leaves
 * through expire_some() in chunks of exactly `enough`, in key order, the
 * current tick staying before it until its last node is out; a node added in
 * the middle with a smaller key (already due) marks the bucket out of order,
 * and the rest of the tick then leaves whole, by the walk; check() holds
 * throughout, and it catches a bucket that claims an order it lost. */
static void an_ordered_tick_leaves_in_chunks_of_exactly_enough(void **state) {
    (void)state;
    enum { N = 1000, ENOUGH = 100 };
    model m;
    model_init(&m, 1000, 64, 0, N + 1);
    for (size_t i = 0; i < N; i++) {
        m.nodes[i].deadline_ns = 5500; /* tick 6 */
        m.nodes[i].seq = 10 + i;
        tk__wheel_core_add(&m.w, &m.nodes[i]);
    }
    assert_int_equal(tk__wheel_core_check(&m.w), TK_OK);
    size_t out = 0;
    for (int chunk = 0; chunk < 4; chunk++) {
        size_t k = 0;
        bool in_order = false;
        tk_node *x = tk__wheel_core_expire_some(&m.w, 10, ENOUGH, &k, &in_order);
        assert_int_equal(k, ENOUGH);
        assert_true(in_order);
        for (; x != NULL; x = tk_node_next_detached(x))
            assert_ptr_equal(x, &m.nodes[out++]);
        assert_int_equal(out, (size_t)(chunk + 1) * ENOUGH);
        assert_int_equal(tk__wheel_core_current_tick(&m.w), 5);
        assert_int_equal(tk__wheel_core_size(&m.w), N - out);
        uint64_t next = 0;
        assert_true(tk__wheel_core_next_expiry_tick(&m.w, &next));
        assert_int_equal(next, 6);
        assert_int_equal(tk__wheel_core_check(&m.w), TK_OK);
    }
    /* already due with a key before the bucket's newest: joins tick 6, out of order */
    m.nodes[N].deadline_ns = 100;
    m.nodes[N].seq = 1;
    tk__wheel_core_add(&m.w, &m.nodes[N]);
    assert_int_equal(tk__wheel_core_expiry(&m.nodes[N]), 6);
    assert_int_equal(tk__wheel_core_check(&m.w), TK_OK);
    size_t k = 0;
    bool in_order = true;
    tk_node *x = tk__wheel_core_expire_some(&m.w, 10, ENOUGH, &k, &in_order);
    assert_int_equal(k, N - out + 1); /* the whole rest of the tick */
    assert_false(in_order);
    assert_int_equal(tk__wheel_core_current_tick(&m.w), 6); /* enough: stops after tick 6 */
    size_t seen = 0;
    for (; x != NULL; x = tk_node_next_detached(x))
        seen++;
    assert_int_equal(seen, k);
    assert_int_equal(tk__wheel_core_size(&m.w), 0);
    assert_int_equal(tk__wheel_core_check(&m.w), TK_OK);

    /* check() verifies the order a bucket claims: swap two keys behind its back */
    for (size_t i = 0; i < 3; i++) {
        m.nodes[i].deadline_ns = 20500; /* tick 21 */
        m.nodes[i].seq = 100 + i;
        tk__wheel_core_add(&m.w, &m.nodes[i]);
    }
    assert_int_equal(tk__wheel_core_check(&m.w), TK_OK);
    m.nodes[0].seq = 102;
    m.nodes[2].seq = 100;
    assert_int_equal(tk__wheel_core_check(&m.w), TK_ESTATE);
    m.nodes[0].seq = 100;
    m.nodes[2].seq = 102;
    assert_int_equal(tk__wheel_core_check(&m.w), TK_OK);
    model_free(&m);
}

static size_t big_allocs;
static void *limited_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (size > ((size_t)1 << 20)) {
        big_allocs++;
        return NULL;
    }
    return malloc(size);
}
static void limited_free(void *ctx, void *p, size_t size) {
    (void)ctx;
    (void)size;
    free(p);
}

static void init_rejects_bad_parameters(void **state) {
    (void)state;
    tk__wheel_core w;
    assert_int_equal(tk__wheel_core_init(&w, NULL, 0, 8, 0), TK_EINVAL);
    assert_int_equal(tk__wheel_core_init(&w, NULL, -5, 8, 0), TK_EINVAL);
    assert_int_equal(tk__wheel_core_init(&w, NULL, 1000, 0, 0), TK_EINVAL);
    assert_int_equal(tk__wheel_core_init(&w, NULL, 1000, (UINT32_C(1) << 24) + 1, 0), TK_EINVAL);
    assert_int_equal(tk__wheel_core_init(NULL, NULL, 1000, 8, 0), TK_EINVAL);
    /* 2^24 is accepted; a failing allocator turns it into TK_ENOMEM. */
    tk_allocator lim = {limited_alloc, limited_free, NULL};
    assert_int_equal(tk__wheel_core_init(&w, &lim, 1000, UINT32_C(1) << 24, 0), TK_ENOMEM);
    assert_int_equal(big_allocs, 1);
    assert_int_equal(tk__wheel_core_init(&w, &lim, 1000, 1000, 0), TK_OK);
    assert_int_equal(w.ticks_per_wheel, 1024); /* rounded up to a power of two */
    tk__wheel_core_destroy(&w);
}

static void tick_time_saturates(void **state) {
    (void)state;
    tk__wheel_core w;
    assert_int_equal(tk__wheel_core_init(&w, NULL, 5, 4, INT64_MAX - 10), TK_OK);
    assert_int_equal(tk__wheel_core_tick_time(&w, 0), INT64_MAX - 10);
    assert_int_equal(tk__wheel_core_tick_time(&w, 1), INT64_MAX - 5);
    assert_int_equal(tk__wheel_core_tick_time(&w, 3), INT64_MAX);
    assert_int_equal(tk__wheel_core_tick_time(&w, UINT64_MAX), INT64_MAX);
    tk__wheel_core_destroy(&w);
    assert_int_equal(tk__wheel_core_init(&w, NULL, 1000, 4, INT64_MIN), TK_OK);
    assert_int_equal(tk__wheel_core_tick_time(&w, UINT64_MAX / 2), INT64_MAX);
    assert_int_equal(tk__wheel_core_tick_time(&w, 2), INT64_MIN + 2000);
    tk__wheel_core_destroy(&w);
}

static void empty_wheel_advances_quietly(void **state) {
    (void)state;
    tk__wheel_core w;
    assert_int_equal(tk__wheel_core_init(&w, NULL, 1000, 8, 0), TK_OK);
    size_t k = 7;
    assert_null(tk__wheel_core_advance(&w, &k));
    assert_int_equal(k, 0);
    uint64_t t;
    assert_false(tk__wheel_core_next_expiry_tick(&w, &t));
    assert_null(tk__wheel_core_advance_to(&w, UINT64_C(1) << 40, &k));
    assert_int_equal(tk__wheel_core_current_tick(&w), UINT64_C(1) << 40);
    assert_null(tk__wheel_core_advance_to(&w, 5, &k)); /* backwards: no-op */
    assert_int_equal(tk__wheel_core_current_tick(&w), UINT64_C(1) << 40);
    assert_int_equal(tk__wheel_core_check(&w), TK_OK);
    tk__wheel_core_destroy(&w);
}

static void due_node_expires_on_next_advance_never_in_a_passed_slot(void **state) {
    (void)state;
    tk__wheel_core w;
    assert_int_equal(tk__wheel_core_init(&w, NULL, 1000, 8, 0), TK_OK);
    size_t k;
    tk__wheel_core_advance_to(&w, 13, &k);
    tk_node n[3] = {{.deadline_ns = 0, .seq = 2},
                    {.deadline_ns = 13000, .seq = 1},
                    {.deadline_ns = INT64_MIN, .seq = 3}};
    for (int i = 0; i < 3; i++)
        tk__wheel_core_add(&w, &n[i]);
    assert_int_equal(tk__wheel_core_check(&w), TK_OK);
    uint64_t t;
    assert_true(tk__wheel_core_next_expiry_tick(&w, &t));
    assert_int_equal(t, 14);
    tk_node *l = tk__wheel_core_advance(&w, &k);
    assert_int_equal(k, 3);
    assert_ptr_equal(l, &n[2]);
    assert_ptr_equal(tk_node_next_detached(l), &n[0]);
    assert_ptr_equal(tk_node_next_detached(tk_node_next_detached(l)), &n[1]);
    tk__wheel_core_destroy(&w);
}

static void equal_deadlines_leave_in_seq_order(void **state) {
    (void)state;
    tk__wheel_core w;
    assert_int_equal(tk__wheel_core_init(&w, NULL, 1000, 4, 0), TK_OK);
    tk_node n[50];
    memset(n, 0, sizeof(n));
    for (int i = 0; i < 50; i++) { /* added in a scrambled seq order */
        n[i].deadline_ns = 20500;
        n[i].seq = (uint64_t)((i * 17) % 50);
        tk__wheel_core_add(&w, &n[i]);
    }
    size_t k;
    tk_node *l = tk__wheel_core_advance_to(&w, 20, &k);
    assert_null(l);
    l = tk__wheel_core_advance(&w, &k);
    assert_int_equal(k, 50);
    uint64_t want = 0;
    for (; l != NULL; l = tk_node_next_detached(l))
        assert_int_equal(l->seq, want++);
    tk__wheel_core_destroy(&w);
}

/* tk__wheel_sort, a natural merge sort: sorted, reversed, few-key (equal
 * keys must keep their list order: stable) and random inputs of many sizes
 * come out sorted by (deadline, seq), with every node and the right tail. */
static void sort_is_stable_on_runs_and_random_input(void **state) {
    (void)state;
    enum { MAXN = 300 };
    tk_node n[MAXN];
    uint64_t rs = 7;
    for (int shape = 0; shape < 4; shape++) {
        for (size_t len = 0; len <= MAXN; len += len < 20 ? 1 : 37) {
            memset(n, 0, sizeof(n));
            tk_node *list = NULL;
            for (size_t i = len; i-- > 0;) { /* list order: n[0], n[1], ... */
                int64_t d;
                switch (shape) {
                case 0:
                    d = (int64_t)i;
                    break; /* sorted */
                case 1:
                    d = (int64_t)(len - i);
                    break; /* reversed */
                case 2:
                    d = (int64_t)rng_below(&rs, 3);
                    break; /* few keys */
                default:
                    d = (int64_t)rng_below(&rs, 1000);
                    break; /* random */
                }
                n[i].deadline_ns = d;
                n[i].seq = 0;             /* equal keys: only stability orders them */
                n[i].tk__priv.raw[2] = i; /* list position (not the link, raw[0]) */
                n[i].tk__priv.detached_next = list;
                list = &n[i];
            }
            tk_node *tail = &n[0];
            tk_node *out = tk__node_sort(list, &tail);
            size_t count = 0;
            const tk_node *prev = NULL;
            for (const tk_node *x = out; x != NULL; x = tk_node_next_detached(x)) {
                if (prev != NULL) {
                    assert_false(tk_node_before(x, prev));
                    if (x->deadline_ns == prev->deadline_ns)
                        assert_true(x->tk__priv.raw[2] > prev->tk__priv.raw[2]);
                }
                prev = x;
                count++;
            }
            assert_int_equal(count, len);
            assert_ptr_equal(tail, prev);
        }
    }
}

/* Builds a list of `len` nodes of the given shape (list order n[0], n[1],
 * ...), recording each node's list position in raw[2]. */
static tk_node *shaped_list(tk_node *n, size_t len, int shape, uint64_t *rs) {
    memset(n, 0, len * sizeof(*n));
    tk_node *list = NULL;
    for (size_t i = len; i-- > 0;) {
        int64_t d;
        switch (shape) {
        case 0:
            d = (int64_t)i; /* sorted */
            break;
        case 1:
            d = (int64_t)(len - i); /* reversed */
            break;
        case 2:
            d = (int64_t)rng_below(rs, 3); /* few keys */
            break;
        case 3:
            d = (int64_t)(i / 50) * 1000 + (int64_t)rng_below(rs, 1000); /* sorted blocks */
            break;
        default:
            d = (int64_t)rng_below(rs, 1000); /* random */
            break;
        }
        n[i].deadline_ns = d;
        n[i].seq = 0;             /* equal keys: only stability orders them */
        n[i].tk__priv.raw[2] = i; /* list position (not the link, raw[0]) */
        n[i].tk__priv.detached_next = list;
        list = &n[i];
    }
    return list;
}

/* Asserts `out` holds len nodes, sorted and stable, ending at `tail`. */
static void assert_sorted_stable(const tk_node *out, const tk_node *tail, size_t len) {
    size_t count = 0;
    const tk_node *prev = NULL;
    for (const tk_node *x = out; x != NULL; x = tk_node_next_detached(x)) {
        if (prev != NULL) {
            assert_false(tk_node_before(x, prev));
            if (x->deadline_ns == prev->deadline_ns)
                assert_true(x->tk__priv.raw[2] > prev->tk__priv.raw[2]);
        }
        prev = x;
        count++;
    }
    assert_int_equal(count, len);
    assert_ptr_equal(tail, prev);
}

/* The piecewise sort (pairwise merges up to a piece, then one merge of up
 * to `ways` pieces, pairs merged first when there are more) is stable and
 * complete for every piece size and way count, including pieces that
 * continue each other and more pieces than ways. */
static void sort_in_pieces_is_stable_for_every_piece_size_and_way_count(void **state) {
    (void)state;
    enum { MAXN = 700 };
    static tk_node n[MAXN];
    static const size_t pieces[] = {1, 2, 3, 5, 16, 64, 4096};
    static const size_t ways[] = {2, 3, 4, 7, 256};
    uint64_t rs = 11;
    for (size_t pi = 0; pi < sizeof(pieces) / sizeof(pieces[0]); pi++)
        for (size_t wi = 0; wi < sizeof(ways) / sizeof(ways[0]); wi++)
            for (int shape = 0; shape < 5; shape++)
                for (size_t len = 0; len <= MAXN; len += len < 12 ? 1 : 97) {
                    tk_node *list = shaped_list(n, len, shape, &rs);
                    tk_node *tail = &n[0];
                    tk_node *out = tk__node_sort_pieces(list, &tail, pieces[pi], ways[wi]);
                    assert_sorted_stable(out, len > 0 ? tail : NULL, len);
                }
}

/* sort_piece sorts exactly the first `max` nodes and leaves the rest. */
static void sort_piece_sorts_the_first_max_nodes(void **state) {
    (void)state;
    enum { N = 50 };
    tk_node n[N];
    uint64_t rs = 5;
    for (size_t max = 1; max <= N + 3; max += 4) {
        tk_node *list = shaped_list(n, N, 4, &rs);
        size_t start = 0;
        while (list != NULL) {
            tk__node_piece p = tk__node_sort_piece(&list, max);
            size_t want = N - start < max ? N - start : max;
            /* the piece holds list positions start .. start + want - 1 */
            size_t count = 0;
            for (const tk_node *x = p.head; x != NULL; x = tk_node_next_detached(x)) {
                assert_true(x->tk__priv.raw[2] >= start && x->tk__priv.raw[2] < start + want);
                count++;
            }
            assert_int_equal(count, want);
            assert_sorted_stable(p.head, p.tail, want);
            assert_ptr_equal(list, start + want < N ? &n[start + want] : NULL);
            start += want;
        }
        assert_int_equal(start, N);
    }
}

static void far_and_int64_max_deadlines(void **state) {
    (void)state;
    tk__wheel_core w;
    assert_int_equal(tk__wheel_core_init(&w, NULL, 1000000, 1024, 123), TK_OK);
    tk_node far = {.deadline_ns = 123 + INT64_C(3600) * 1000000000, .seq = 1};
    tk_node end = {.deadline_ns = INT64_MAX, .seq = 2};
    tk__wheel_core_add(&w, &far);
    tk__wheel_core_add(&w, &end);
    uint64_t t;
    assert_true(tk__wheel_core_next_expiry_tick(&w, &t));
    assert_int_equal(t, 3600000);
    size_t k;
    assert_null(tk__wheel_core_advance_to(&w, 3599999, &k));
    assert_ptr_equal(tk__wheel_core_advance(&w, &k), &far);
    assert_true(tk__wheel_core_next_expiry_tick(&w, &t));
    assert_true(tk__wheel_core_tick_time(&w, t) == INT64_MAX);
    assert_true(tk__wheel_core_tick_time(&w, t - 1) < INT64_MAX);
    assert_ptr_equal(tk__wheel_core_advance_to(&w, t, &k), &end);
    assert_int_equal(tk__wheel_core_size(&w), 0);
    assert_int_equal(tk__wheel_core_check(&w), TK_OK);
    tk__wheel_core_destroy(&w);
}

static void removing_a_bucket_minimum_keeps_next_expiry_exact(void **state) {
    (void)state;
    tk__wheel_core w;
    assert_int_equal(tk__wheel_core_init(&w, NULL, 10, 4, 0), TK_OK);
    tk_node a = {.deadline_ns = 10, .seq = 1};  /* tick 1, slot 1 */
    tk_node b = {.deadline_ns = 50, .seq = 2};  /* tick 5, slot 1 */
    tk_node c = {.deadline_ns = 130, .seq = 3}; /* tick 13, slot 1 */
    tk__wheel_core_add(&w, &a);
    tk__wheel_core_add(&w, &b);
    tk__wheel_core_add(&w, &c);
    uint64_t t;
    tk__wheel_core_remove(&w, &a);
    assert_int_equal(tk__wheel_core_check(&w), TK_OK);
    assert_true(tk__wheel_core_next_expiry_tick(&w, &t));
    assert_int_equal(t, 5);
    tk__wheel_core_remove(&w, &b);
    assert_true(tk__wheel_core_next_expiry_tick(&w, &t));
    assert_int_equal(t, 13);
    size_t k;
    assert_null(tk__wheel_core_advance_to(&w, 12, &k));
    assert_ptr_equal(tk__wheel_core_advance(&w, &k), &c);
    tk__wheel_core_destroy(&w);
}

/* ---- latest() of the wheel's tk_core_ops --------------------------------- */

#define MS INT64_C(1000000)

/* A core of the wheel's tk_core_ops: `slots` buckets of tick_ns from
 * origin 0. */
static void *ops_core_new(int64_t tick_ns, uint32_t slots) {
    tk__wheel_params p = {.tick_ns = tick_ns, .slots = slots};
    void *core = calloc(1, tk__wheel_core_ops.size);
    assert_non_null(core);
    assert_int_equal(tk__wheel_core_ops.init(core, &p, tk_allocator_default(), 0), TK_OK);
    return core;
}

static void ops_core_free(void *core) {
    tk__wheel_core_ops.destroy(core);
    free(core);
}

static void ops_insert(void *core, tk_node *n, int64_t deadline_ns, int64_t slack_ns,
                       uint64_t seq) {
    memset(n, 0, sizeof(*n));
    n->deadline_ns = deadline_ns;
    n->slack_ns = slack_ns;
    n->seq = seq;
    assert_int_equal(tk__wheel_core_ops.insert(core, n), TK_OK);
}

/* latest() of `core`, which must hold a node; also checks next() <= it. */
static int64_t ops_latest(void *core) {
    int64_t r = 0, nx = 0;
    assert_int_equal(tk__wheel_core_ops.latest(core, &r), TK_OK);
    assert_int_equal(tk__wheel_core_ops.next(core, &nx), TK_OK);
    assert_true(nx <= r);
    return r;
}

static void latest_of_an_empty_core_is_enoent(void **state) {
    (void)state;
    void *core = ops_core_new(MS, 8);
    assert_non_null(tk__wheel_core_ops.latest);
    int64_t r = 12345;
    assert_int_equal(tk__wheel_core_ops.latest(core, &r), TK_ENOENT);
    assert_int_equal(r, 12345);
    tk_node n;
    ops_insert(core, &n, 3 * MS, 0, 1);
    assert_int_equal(tk__wheel_core_ops.remove(core, &n), TK_OK);
    assert_int_equal(tk__wheel_core_ops.latest(core, &r), TK_ENOENT);
    ops_core_free(core);
}

/* Equal deadlines: the smallest slack decides; the end rounds up to the
 * tick; without slack latest() is next(). */
static void latest_is_the_earliest_window_end_rounded_up_to_the_tick(void **state) {
    (void)state;
    void *core = ops_core_new(MS, 64);
    tk_node n[3];
    ops_insert(core, &n[0], 5 * MS, 30 * MS, 1);
    assert_int_equal(ops_latest(core), 35 * MS);
    ops_insert(core, &n[1], 5 * MS, 7 * MS + 1, 2); /* ends at 12 ms + 1 ns: tick 13 */
    assert_int_equal(ops_latest(core), 13 * MS);
    ops_insert(core, &n[2], 5 * MS, 0, 3);
    assert_int_equal(ops_latest(core), 5 * MS);
    assert_int_equal(tk__wheel_core_ops.remove(core, &n[2]), TK_OK);
    assert_int_equal(ops_latest(core), 13 * MS);
    /* at 13 ms both leave, in seq order */
    size_t k = 0;
    tk_node *l = tk__wheel_core_ops.expire(core, 13 * MS, 10, &k);
    assert_int_equal(k, 2);
    assert_ptr_equal(l, &n[0]);
    assert_ptr_equal(tk_node_next_detached(l), &n[1]);
    assert_int_equal(tk__wheel_core_ops.check(core), TK_OK);
    ops_core_free(core);
}

/* A node with a large slack due first does not hide a later node without
 * slack, in a later bucket nor in the same one. */
static void a_big_slack_node_first_does_not_hide_a_later_one_without(void **state) {
    (void)state;
    void *core = ops_core_new(MS, 64);
    tk_node a, b, c;
    ops_insert(core, &a, 2 * MS, 40 * MS, 1);
    ops_insert(core, &b, 9 * MS, 0, 2);
    assert_int_equal(ops_latest(core), 9 * MS);
    ops_insert(core, &c, 9 * MS - 1, 3 * MS, 3); /* b's bucket, ends at tick 12 */
    assert_int_equal(ops_latest(core), 9 * MS);
    assert_int_equal(tk__wheel_core_ops.remove(core, &b), TK_OK);
    assert_int_equal(ops_latest(core), 12 * MS);
    /* expire at the answer: a and c, in deadline order */
    size_t k = 0;
    tk_node *l = tk__wheel_core_ops.expire(core, 12 * MS, 10, &k);
    assert_int_equal(k, 2);
    assert_ptr_equal(l, &a);
    assert_ptr_equal(tk_node_next_detached(l), &c);
    ops_core_free(core);
}

/* deadline + slack saturates at INT64_MAX, whose due() is INT64_MAX. */
static void a_window_end_saturates_at_int64_max(void **state) {
    (void)state;
    void *core = ops_core_new(MS, 16);
    tk_node a, b;
    ops_insert(core, &a, 3 * MS, INT64_MAX, 1);
    assert_int_equal(ops_latest(core), INT64_MAX);
    ops_insert(core, &b, INT64_MAX - 5, 100, 2);
    assert_int_equal(ops_latest(core), INT64_MAX);
    size_t k = 0;
    tk_node *l = tk__wheel_core_ops.expire(core, INT64_MAX, 10, &k);
    assert_int_equal(k, 2);
    assert_ptr_equal(l, &a);
    assert_ptr_equal(tk_node_next_detached(l), &b);
    assert_int_equal(tk__wheel_core_ops.latest(core, &(int64_t){0}), TK_ENOENT);
    ops_core_free(core);
}

/* A wheel of 8 x 1 ms: nodes of later revolutions count at least by their
 * expiry; latest() never passes a window end and never precedes next(). */
static void nodes_in_later_revolutions_bound_the_answer(void **state) {
    (void)state;
    void *core = ops_core_new(MS, 8);
    tk_node a, b, c;
    ops_insert(core, &a, 2 * MS, 100 * MS, 1); /* this revolution, ends at 102 */
    ops_insert(core, &b, 11 * MS, 0, 2);       /* next revolution, a's neighbour slot */
    assert_int_equal(ops_latest(core), 11 * MS);
    assert_int_equal(tk__wheel_core_ops.remove(core, &b), TK_OK);
    ops_insert(core, &c, 21 * MS, 5 * MS, 3); /* two revolutions on, ends at 26 */
    int64_t r = ops_latest(core);
    assert_true(r >= 21 * MS && r <= 26 * MS); /* a lower bound is allowed */
    assert_int_equal(tk__wheel_core_ops.remove(core, &a), TK_OK);
    r = ops_latest(core);
    assert_true(r >= 21 * MS && r <= 26 * MS);
    /* once c's revolution comes, the answer is exact */
    size_t k = 9;
    assert_null(tk__wheel_core_ops.expire(core, 20 * MS, 10, &k));
    assert_int_equal(k, 0);
    assert_int_equal(ops_latest(core), 26 * MS);
    assert_ptr_equal(tk__wheel_core_ops.expire(core, 26 * MS, 10, &k), &c);
    ops_core_free(core);
}

/* Nodes inserted late wait in the core's ready list: their windows count
 * too (the answer may lie in the past: expire() at once). */
static void late_nodes_count_with_their_windows(void **state) {
    (void)state;
    void *core = ops_core_new(MS, 16);
    size_t k = 0;
    assert_null(tk__wheel_core_ops.expire(core, 10 * MS, 10, &k));
    tk_node a, b, c;
    ops_insert(core, &c, 12 * MS, 0, 3);
    ops_insert(core, &a, 4 * MS, 50 * MS, 1); /* late, ends at 54 */
    assert_int_equal(ops_latest(core), 12 * MS);
    ops_insert(core, &b, 5 * MS, 1 * MS, 2); /* late, ends at 6 */
    assert_int_equal(ops_latest(core), 6 * MS);
    tk_node *l = tk__wheel_core_ops.expire(core, 10 * MS, 10, &k);
    assert_int_equal(k, 2);
    assert_ptr_equal(l, &a);
    assert_ptr_equal(tk_node_next_detached(l), &b);
    assert_int_equal(ops_latest(core), 12 * MS);
    ops_core_free(core);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_rejects_bad_parameters),
        cmocka_unit_test(latest_of_an_empty_core_is_enoent),
        cmocka_unit_test(latest_is_the_earliest_window_end_rounded_up_to_the_tick),
        cmocka_unit_test(a_big_slack_node_first_does_not_hide_a_later_one_without),
        cmocka_unit_test(a_window_end_saturates_at_int64_max),
        cmocka_unit_test(nodes_in_later_revolutions_bound_the_answer),
        cmocka_unit_test(late_nodes_count_with_their_windows),
        cmocka_unit_test(tick_time_saturates),
        cmocka_unit_test(empty_wheel_advances_quietly),
        cmocka_unit_test(due_node_expires_on_next_advance_never_in_a_passed_slot),
        cmocka_unit_test(equal_deadlines_leave_in_seq_order),
        cmocka_unit_test(sort_is_stable_on_runs_and_random_input),
        cmocka_unit_test(sort_in_pieces_is_stable_for_every_piece_size_and_way_count),
        cmocka_unit_test(sort_piece_sorts_the_first_max_nodes),
        cmocka_unit_test(far_and_int64_max_deadlines),
        cmocka_unit_test(removing_a_bucket_minimum_keeps_next_expiry_exact),
        cmocka_unit_test(random_vs_model_small_wheel),
        cmocka_unit_test(random_vs_model_one_slot),
        cmocka_unit_test(random_vs_model_odd_sizes),
        cmocka_unit_test(random_vs_model_large_wheel),
        cmocka_unit_test(a_wheel_without_slack_answers_its_next_expiry_tick),
        cmocka_unit_test(advance_to_equals_repeated_advance),
        cmocka_unit_test(expire_to_is_advance_to_unsorted),
        cmocka_unit_test(expire_some_cuts_expire_to_at_tick_boundaries),
        cmocka_unit_test(an_ordered_tick_leaves_in_chunks_of_exactly_enough),
    };
    return cmocka_run_group_tests_name("wheel_core", tests, NULL, NULL);
}
