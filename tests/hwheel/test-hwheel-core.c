/* SPDX-License-Identifier: MIT */
/* timerkit: unit tests of the hierarchical wheel's pure core
 * (tk__hwheel_core_ops, engines/hwheel/hwheel-core.c) and of its
 * parameters.
 *
 * Single-threaded and deterministic. The core is driven through its
 * tk_core_ops against a reference model (the set of nodes held; a node is
 * due at `now` iff o + ceil((d - o) / tick) * tick <= now, computed in
 * 128-bit arithmetic), with fixed seeds and check() after every step:
 * random inserts, removals and expires at random times, deadlines near tick
 * and level boundaries, before the origin, at INT64_MAX and beyond the top
 * level's span, expires cut by `max`, first(), remove_if(), count_due() and
 * next()'s contract (a lower bound of every due instant that expire() at
 * that instant makes progress from), also with most nodes piled into a few
 * slots so that every chain of a slot runs deep. Targeted cases cover every
 * cascade boundary exhaustively on small wheels, crowded slots of every
 * level emptied after removals from their chains' heads, middles and tails,
 * a crowded slot moved down in shares over the ticks before its event,
 * check() noticing a damaged chain or count, the extreme parameters, the
 * idle cost of a far timer, and the parameter table and its validate().
 * latest() is checked after every step of the walks (between next() and
 * the smallest window end), and against a brute-force minimum: exact in
 * every level and the overflow list while the nodes fit its budget, a
 * bound between next() and that minimum past it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hwheel-core.h"
#include "param-store.h"
#include "rng.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

__extension__ typedef __int128 i128;

static int64_t clamp128(i128 v) {
    return v > (i128)INT64_MAX ? INT64_MAX : v < (i128)INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* ---- a counting allocator ----------------------------------------------------------- */

typedef struct test_alloc {
    int fail;          /* nonzero: every allocation fails */
    size_t live_bytes; /* allocated and not freed */
    size_t allocs;
} test_alloc;

static void *ta_alloc(void *ctx, size_t size) {
    test_alloc *t = ctx;
    if (t->fail)
        return NULL;
    void *p = malloc(size);
    if (p != NULL) {
        t->live_bytes += size;
        t->allocs++;
    }
    return p;
}

static void ta_free(void *ctx, void *ptr, size_t size) {
    test_alloc *t = ctx;
    t->live_bytes -= size;
    free(ptr);
}

/* ---- the core under test ------------------------------------------------------------- */

static const tk_core_ops *ops(void) {
    return &tk__hwheel_core_ops;
}

typedef struct core {
    void *state;
    test_alloc ta;
    tk_allocator a;
    tk__hwheel_params p;
    int64_t origin;
} core;

static void core_open(core *c, int64_t tick_ns, unsigned bits, unsigned levels, int64_t origin) {
    memset(c, 0, sizeof(*c));
    c->a.alloc = ta_alloc;
    c->a.free = ta_free;
    c->a.ctx = &c->ta;
    c->p.tick_ns = tick_ns;
    c->p.bits = bits;
    c->p.levels = levels;
    c->origin = origin;
    c->state = calloc(1, ops()->size);
    assert_non_null(c->state);
    assert_int_equal(ops()->init(c->state, &c->p, &c->a, origin), TK_OK);
    assert_int_equal(ops()->check(c->state), TK_OK);
}

static void core_close(core *c) {
    ops()->destroy(c->state);
    assert_int_equal(c->ta.live_bytes, 0); /* init's block came back */
    free(c->state);
}

/* The reference grid: T(d) and due(d). */
static uint64_t ref_tick(const core *c, int64_t d) {
    if (d <= c->origin)
        return 0;
    i128 diff = (i128)d - c->origin;
    return (uint64_t)((diff + c->p.tick_ns - 1) / c->p.tick_ns);
}

static int64_t ref_time(const core *c, uint64_t k) {
    return clamp128((i128)c->origin + (i128)k * c->p.tick_ns);
}

static int64_t ref_due(const core *c, int64_t d) {
    return ref_time(c, ref_tick(c, d));
}

static void set_key(tk_node *n, int64_t d, uint64_t seq) {
    n->deadline_ns = d;
    n->seq = seq;
}

/* The core's record in a node (hwheel-core.h lays it out). */
static tk__hwheel_priv *priv(tk_node *n) {
    return (tk__hwheel_priv *)tk_node_priv(n);
}

/* ---- the model ------------------------------------------------------------------------ */

typedef struct model {
    core c;
    tk_node *nodes; /* pool */
    bool *live;
    size_t pool, nlive;
    uint64_t seq;
    int64_t now; /* the last `now` given to expire() */
    size_t out, expires, cut_expires, cascade_only;
    bool crowd; /* random_deadline() piles many nodes into few slots */
} model;

static void model_open(model *m, int64_t tick_ns, unsigned bits, unsigned levels, int64_t origin,
                       size_t pool) {
    memset(m, 0, sizeof(*m));
    core_open(&m->c, tick_ns, bits, levels, origin);
    m->pool = pool;
    m->nodes = calloc(pool, sizeof(tk_node));
    m->live = calloc(pool, sizeof(bool));
    assert_non_null(m->nodes);
    assert_non_null(m->live);
    m->now = origin;
}

static void model_close(model *m) {
    core_close(&m->c);
    free(m->nodes);
    free(m->live);
}

static int key_cmp(const void *a, const void *b) {
    const tk_node *x = *(tk_node *const *)a, *y = *(tk_node *const *)b;
    if (tk_node_before(x, y))
        return -1;
    return tk_node_before(y, x) ? 1 : 0;
}

/* The live nodes due at `now`, sorted; returns how many. */
static size_t model_due(const model *m, int64_t now, tk_node **out) {
    size_t k = 0;
    for (size_t i = 0; i < m->pool; i++)
        if (m->live[i] && ref_due(&m->c, m->nodes[i].deadline_ns) <= now)
            out[k++] = &m->nodes[i];
    qsort(out, k, sizeof(out[0]), key_cmp);
    return k;
}

static void model_check(model *m) {
    assert_int_equal(ops()->check(m->c.state), TK_OK);
    assert_int_equal(ops()->count(m->c.state), m->nlive);
}

static void model_insert(model *m, size_t i, int64_t d) {
    tk_node *n = &m->nodes[i];
    /* unique seqs in scrambled order (an odd multiplier is a bijection), so
     * that ties are not always broken in insertion order */
    set_key(n, d, (m->seq++) * UINT64_C(0x9e3779b97f4a7c15));
    /* a slack from the seq: none for half, else a fraction of a tick, a few
     * ticks, a level-1 slot or more, or the end of time */
    static const int64_t ticks[8] = {0, 0, 0, 0, -3, 5, 700, INT64_MAX};
    int64_t k = ticks[(n->seq >> 13) % 8];
    n->slack_ns = k == INT64_MAX                   ? INT64_MAX
                  : k < 0                          ? m->c.p.tick_ns / 3
                  : k > INT64_MAX / m->c.p.tick_ns ? INT64_MAX
                                                   : k * m->c.p.tick_ns;
    assert_int_equal(ops()->insert(m->c.state, n), TK_OK);
    m->live[i] = true;
    m->nlive++;
    assert_int_equal(ops()->insert(m->c.state, n), TK_EINVAL); /* already held */
}

static void model_remove(model *m, size_t i) {
    int rc = ops()->remove(m->c.state, &m->nodes[i]);
    if (m->live[i]) {
        assert_int_equal(rc, TK_OK);
        m->live[i] = false;
        m->nlive--;
    } else {
        assert_int_equal(rc, TK_ENOENT);
    }
}

/* A node's window end as the core rounds it: due(deadline + slack), the
 * sum saturating. */
static int64_t ref_end(const core *c, const tk_node *n) {
    int64_t d = n->deadline_ns, s = n->slack_ns;
    return ref_due(c, d > INT64_MAX - s ? INT64_MAX : d + s);
}

/* latest(): between next() and the smallest window end, TK_ENOENT iff
 * empty. Returns the answer (INT64_MIN when empty). */
static int64_t model_latest(model *m) {
    int64_t r = INT64_MIN, nx = INT64_MIN;
    int rc = ops()->latest(m->c.state, &r);
    if (m->nlive == 0) {
        assert_int_equal(rc, TK_ENOENT);
        return INT64_MIN;
    }
    assert_int_equal(rc, TK_OK);
    assert_int_equal(ops()->next(m->c.state, &nx), TK_OK);
    assert_true(nx <= r);
    for (size_t i = 0; i < m->pool; i++)
        if (m->live[i])
            assert_true(r <= ref_end(&m->c, &m->nodes[i]));
    return r;
}

/* next(): a lower bound of every due instant, TK_ENOENT iff empty; and
 * latest() checked beside it. */
static bool model_next(model *m, int64_t *when) {
    int rc = ops()->next(m->c.state, when);
    (void)model_latest(m);
    if (m->nlive == 0) {
        assert_int_equal(rc, TK_ENOENT);
        return false;
    }
    assert_int_equal(rc, TK_OK);
    for (size_t i = 0; i < m->pool; i++)
        if (m->live[i])
            assert_true(*when <= ref_due(&m->c, m->nodes[i].deadline_ns));
    return true;
}

/* expire(now, max) against the model: exactly the due nodes, in order, up
 * to max. */
static size_t model_expire(model *m, int64_t now, size_t max) {
    assert_true(now >= m->now);
    tk_node **want = malloc((m->nlive + 1) * sizeof(tk_node *));
    assert_non_null(want);
    size_t k = model_due(m, now, want);
    size_t expect = k < max ? k : max;
    size_t count = 12345;
    tk_node *list = ops()->expire(m->c.state, now, max, &count);
    m->now = now;
    assert_int_equal(count, expect);
    size_t j = 0;
    for (tk_node *n = list; n != NULL; n = tk_node_next_detached(n), j++) {
        assert_true(j < expect);
        assert_ptr_equal(n, want[j]);
    }
    assert_int_equal(j, expect);
    for (j = 0; j < expect; j++) {
        size_t i = (size_t)(want[j] - m->nodes);
        m->live[i] = false;
        m->nlive--;
        /* handed out: not held any more */
        assert_int_equal(ops()->remove(m->c.state, want[j]), TK_ENOENT);
    }
    m->expires++;
    if (expect < k)
        m->cut_expires++;
    m->out += expect;
    free(want);
    return expect;
}

/* ---- random deadlines and times ------------------------------------------------------- */

/* Ticks of one level's slot period times the slots: 2^((l + 1) * bits). */
static uint64_t level_span(const core *c, unsigned l) {
    unsigned sh = (l + 1) * c->p.bits;
    return sh >= 63 ? UINT64_C(1) << 62 : UINT64_C(1) << sh;
}

static int64_t random_deadline(model *m, uint64_t *rs) {
    const core *c = &m->c;
    int64_t tick = c->p.tick_ns;
    int64_t now = m->now;
    uint64_t cur = now == INT64_MAX ? UINT64_MAX : ref_tick(c, now); /* roughly c */
    unsigned top = c->p.bits * c->p.levels;
    if (m->crowd && rng_below(rs, 2) == 0 && c->p.levels > 1) {
        /* anywhere in the period of a level-l slot (l >= 1) starting one or
         * two periods ahead: the nodes of a walk share a handful of slots,
         * many chains deep */
        unsigned l = 1 + (unsigned)rng_below(rs, c->p.levels - 1);
        unsigned sh = l * c->p.bits;
        if (sh > 60)
            sh = 60;
        i128 k = ((((i128)cur >> sh) + 1 + (i128)rng_below(rs, 2)) << sh) +
                 (i128)rng_below(rs, UINT64_C(1) << sh);
        return clamp128((i128)c->origin + k * tick - (i128)rng_below(rs, (uint64_t)tick));
    }
    switch (rng_below(rs, 12)) {
    case 0: /* late: at or before now */
        return clamp128((i128)now - (i128)rng_below(rs, 5 * (uint64_t)tick + 1));
    case 1: { /* on or next to a tick boundary near now */
        i128 at = (i128)c->origin + ((i128)cur + (i128)rng_below(rs, 70)) * tick;
        return clamp128(at + (i128)rng_below(rs, 3) - 1);
    }
    case 2: { /* within some level's span */
        unsigned l = (unsigned)rng_below(rs, c->p.levels);
        return clamp128((i128)now + (i128)rng_below(rs, level_span(c, l)) * tick +
                        (i128)rng_below(rs, (uint64_t)tick));
    }
    case 3: { /* on (or a nanosecond off) a level's period boundary ahead */
        unsigned l = 1 + (unsigned)rng_below(rs, c->p.levels);
        unsigned sh = l * c->p.bits;
        if (sh > 62)
            sh = 62;
        i128 k = (((i128)cur >> sh) + 1 + (i128)rng_below(rs, 3)) << sh;
        return clamp128((i128)c->origin + k * tick + (i128)rng_below(rs, 3) - 1);
    }
    case 4: /* beyond the top level's span */
        return clamp128((i128)now +
                        ((i128)1 << (top < 62 ? top : 62)) * tick * (i128)(1 + rng_below(rs, 3)) +
                        (i128)rng_below(rs, 1000));
    case 5: /* "never" */
        return INT64_MAX - (int64_t)rng_below(rs, 2) * (int64_t)rng_below(rs, 1000);
    case 6: /* long before the origin */
        return rng_below(rs, 2) ? INT64_MIN / 2
                                : clamp128((i128)c->origin - 1 - (i128)rng_below(rs, 1000000));
    case 7: { /* the deadline of another node: a tie, broken by seq */
        size_t i = (size_t)rng_below(rs, m->pool);
        if (m->live[i])
            return m->nodes[i].deadline_ns;
        return now;
    }
    default: /* near: a few hundred ticks */
        return clamp128((i128)now + (i128)rng_below(rs, 300 * (uint64_t)tick));
    }
}

static int64_t random_time_after(model *m, uint64_t *rs) {
    const core *c = &m->c;
    int64_t tick = c->p.tick_ns;
    int64_t now = m->now;
    uint64_t cur = ref_tick(c, now);
    switch (rng_below(rs, 10)) {
    case 0:
        return now;
    case 1: /* the next tick instant exactly, or one before it */
        return clamp128((i128)c->origin + ((i128)cur + 1) * tick - (i128)rng_below(rs, 2));
    case 2: { /* a level's period boundary, exactly */
        unsigned l = 1 + (unsigned)rng_below(rs, c->p.levels);
        unsigned sh = l * c->p.bits;
        if (sh > 62)
            sh = 62;
        i128 k = (((i128)cur >> sh) + 1) << sh;
        return clamp128((i128)c->origin + k * tick);
    }
    case 3: { /* where next() says */
        int64_t when;
        if (ops()->next(c->state, &when) == TK_OK && when > now)
            return when;
        return now;
    }
    case 4: { /* far: up to a few top-level spans */
        unsigned top = c->p.bits * c->p.levels;
        uint64_t span = UINT64_C(1) << (top < 62 ? top : 62);
        return clamp128((i128)now + (i128)rng_below(rs, 3 * span) * tick);
    }
    default: /* a few ticks */
        return clamp128((i128)now + (i128)rng_below(rs, 4 * (uint64_t)tick + 1));
    }
}

/* ---- predicates -------------------------------------------------------------------------- */

typedef struct pred_ctx {
    uint64_t mod, rem;
    size_t calls;
} pred_ctx;

static bool seq_pred(const tk_node *n, void *ctx) {
    pred_ctx *p = ctx;
    p->calls++;
    return n->seq % p->mod == p->rem;
}

/* ---- the random walk ------------------------------------------------------------------ */

typedef struct walk_cfg {
    int64_t tick_ns;
    unsigned bits, levels;
    int64_t origin;
    uint64_t seed;
    size_t pool, steps;
} walk_cfg;

static void random_walk_ex(const walk_cfg *w, bool crowd) {
    model m;
    model_open(&m, w->tick_ns, w->bits, w->levels, w->origin, w->pool);
    m.crowd = crowd;
    uint64_t rs = w->seed;
    tk_node **buf = malloc((w->pool + 1) * sizeof(tk_node *));
    assert_non_null(buf);
    size_t firsts = 0, removes = 0, remove_ifs = 0, counts = 0, progress = 0;
    for (size_t step = 0; step < w->steps; step++) {
        uint64_t op = rng_below(&rs, 100);
        size_t i = (size_t)rng_below(&rs, m.pool);
        if (op < 40) { /* insert (or remove if held) */
            if (m.live[i])
                model_remove(&m, i);
            else
                model_insert(&m, i, random_deadline(&m, &rs));
        } else if (op < 55) {
            model_remove(&m, i);
            removes++;
        } else if (op < 80) { /* expire at a later time, maybe cut by max */
            int64_t now = random_time_after(&m, &rs);
            if (step + 20 > w->steps && rng_below(&rs, 4) == 0)
                now = INT64_MAX; /* the end of time, near the end of the walk */
            uint64_t r = rng_below(&rs, 4);
            size_t max = r == 0 ? 1 : r == 1 ? 1 + (size_t)rng_below(&rs, 8) : SIZE_MAX;
            model_expire(&m, now, max);
        } else if (op < 87) { /* first(): the smallest node, due or not */
            tk_node *f = ops()->first(m.c.state);
            size_t k = 0;
            for (size_t j = 0; j < m.pool; j++)
                if (m.live[j])
                    buf[k++] = &m.nodes[j];
            if (k == 0) {
                assert_null(f);
            } else {
                qsort(buf, k, sizeof(buf[0]), key_cmp);
                assert_ptr_equal(f, buf[0]);
            }
            firsts++;
        } else if (op < 92) { /* count_due() at a later time, limited */
            int64_t t = random_time_after(&m, &rs);
            size_t k = model_due(&m, t, buf);
            size_t limit = 1 + (size_t)rng_below(&rs, m.pool + 2);
            size_t want = k < limit ? k : limit;
            assert_int_equal(ops()->count_due(m.c.state, t, limit), want);
            counts++;
        } else if (op < 94) { /* remove_if(): one pred call per node */
            pred_ctx pc = {2 + rng_below(&rs, 4), rng_below(&rs, 2), 0};
            size_t held = m.nlive, k = 99;
            tk_node *list = ops()->remove_if(m.c.state, seq_pred, &pc, &k);
            assert_int_equal(pc.calls, held);
            size_t j = 0;
            for (tk_node *n = list; n != NULL; n = tk_node_next_detached(n), j++) {
                size_t x = (size_t)(n - m.nodes);
                assert_true(x < m.pool && m.live[x] && n->seq % pc.mod == pc.rem);
                m.live[x] = false;
                m.nlive--;
            }
            assert_int_equal(j, k);
            for (size_t x = 0; x < m.pool; x++)
                if (m.live[x])
                    assert_true(m.nodes[x].seq % pc.mod != pc.rem);
            remove_ifs++;
        } else { /* next(): a lower bound, and expire() there makes progress */
            int64_t when;
            if (model_next(&m, &when)) {
                int64_t at = when > m.now ? when : m.now;
                size_t k = model_expire(&m, at, SIZE_MAX);
                if (k == 0) {
                    int64_t later;
                    if (model_next(&m, &later))
                        assert_true(later > when);
                    m.cascade_only++;
                }
                progress++;
            }
        }
        model_check(&m);
    }
    /* everything comes out at the end of time, in order */
    model_expire(&m, INT64_MAX, SIZE_MAX);
    assert_int_equal(m.nlive, 0);
    model_check(&m);
    /* the walk went down every path */
    assert_true(m.out > w->steps / 10);
    assert_true(m.cut_expires > 0);
    assert_true(firsts > 0 && removes > 0 && remove_ifs > 0 && counts > 0 && progress > 0);
    free(buf);
    model_close(&m);
}

static void random_walk(const walk_cfg *w) {
    random_walk_ex(w, false);
}

static void random_walks_match_the_model_with_the_defaults(void **state) {
    (void)state;
    const int64_t origins[] = {0, INT64_C(1000000000000123), INT64_MIN / 2 + 7};
    for (size_t o = 0; o < 3; o++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            walk_cfg w = {TK__HWHEEL_DEFAULT_TICK_NS,
                          TK__HWHEEL_DEFAULT_BITS,
                          TK__HWHEEL_DEFAULT_LEVELS,
                          origins[o],
                          seed * 7919 + o,
                          150,
                          3000};
            random_walk(&w);
        }
}

static void random_walks_match_the_model_on_small_wheels_that_wrap_and_overflow(void **state) {
    (void)state;
    /* spans of 2, 8, 64 and 4096 ticks: the top level wraps and the
     * overflow list fills all the time */
    const walk_cfg cfgs[] = {
        {1, 1, 1, 0, 11, 60, 4000},
        {3, 1, 3, -5, 12, 80, 4000},
        {7, 2, 3, 1001, 13, 120, 4000},
        {10, 3, 4, INT64_MIN / 2, 14, 120, 4000},
        {1000, 2, 6, 123456789, 15, 150, 4000},
    };
    for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++)
        random_walk(&cfgs[k]);
}

static void random_walks_match_the_model_at_the_extreme_parameters(void **state) {
    (void)state;
    const walk_cfg cfgs[] = {
        /* 1024 slots a level (16 bitmap words), 2 levels */
        {1, TK__HWHEEL_MAX_BITS, 2, 0, 21, 150, 3000},
        /* 128 slots (2 words) */
        {1000, 7, 3, 77, 22, 150, 3000},
        /* 1 ns ticks, the widest span int64 holds: 2^62 ticks */
        {1, 2, 31, 0, 23, 150, 3000},
        /* a 1 s tick and 32 levels of 2 slots */
        {1000000000, 1, TK__HWHEEL_MAX_LEVELS, INT64_C(5000000000), 24, 150, 3000},
        /* the largest tick the defaults' span allows */
        {INT64_MAX >> 36, 6, 6, 0, 25, 100, 2000},
        /* an origin close to the end of time */
        {1000, 6, 6, INT64_MAX - INT64_C(1000000000), 26, 100, 2000},
    };
    for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++)
        random_walk(&cfgs[k]);
}

/* Half the deadlines fall in the periods of a few level >= 1 slots, so
 * that slots hold many nodes in every chain: removals from the middle and
 * the ends of chains, cascades of crowded slots at every level, expires cut
 * by max in the middle of a crowded tick. */
static void random_walks_match_the_model_with_crowded_slots(void **state) {
    (void)state;
    const walk_cfg cfgs[] = {
        {TK_NS_PER_MS, 6, 6, 0, 31, 400, 4000},
        {1, 2, 5, 0, 32, 300, 4000},
        {7, 3, 4, -1000, 33, 300, 4000},
        {1000, 1, 8, 5, 34, 200, 4000},
    };
    for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++)
        random_walk_ex(&cfgs[k], true);
}

/* ---- exhaustive boundaries on small wheels ------------------------------------------------ */

/* From every position c0 in a range, nodes due at every tick c0 + 1 ..
 * c0 + far (past the span), two a tick (one on the grid, one just after
 * the tick before), come out exactly at their tick as the time moves one
 * tick at a time, and next() never passes a node's tick. */
static void sweep(int64_t tick, unsigned bits, unsigned levels, int64_t origin, uint64_t positions,
                  uint64_t far) {
    for (uint64_t c0 = 0; c0 < positions; c0++) {
        model m;
        model_open(&m, tick, bits, levels, origin, (size_t)(2 * far));
        /* move to c0 (anywhere inside its tick) */
        int64_t at = ref_time(&m.c, c0) + (c0 % 3 == 1 ? tick - 1 : 0);
        if (c0 > 0)
            model_expire(&m, at, SIZE_MAX);
        for (uint64_t off = 1; off <= far; off++) {
            int64_t t_ns = ref_time(&m.c, c0 + off);
            model_insert(&m, (size_t)(2 * (off - 1)), t_ns);
            model_insert(&m, (size_t)(2 * (off - 1) + 1), t_ns - tick + 1);
        }
        model_check(&m);
        for (uint64_t k = c0 + 1; k <= c0 + far; k++) {
            int64_t when;
            assert_true(model_next(&m, &when));
            assert_true(when <= ref_time(&m.c, k));
            /* a nanosecond before the tick: nothing */
            model_expire(&m, ref_time(&m.c, k) - 1, SIZE_MAX);
            assert_int_equal(model_expire(&m, ref_time(&m.c, k), SIZE_MAX), 2);
            model_check(&m);
        }
        assert_int_equal(m.nlive, 0);
        model_close(&m);
    }
}

static void every_cascade_boundary_hands_out_at_the_exact_tick(void **state) {
    (void)state;
    /* 4 slots, 3 levels: span 64 ticks; positions cover two revolutions */
    sweep(3, 2, 3, -5, 140, 150);
    /* 2 slots, 4 levels: span 16 */
    sweep(5, 1, 4, 1000, 40, 40);
    /* one level of 2 slots: everything past 2 ticks overflows */
    sweep(1, 1, 1, 0, 10, 12);
    /* 8 slots, 2 levels, a tick of 1 ns */
    sweep(1, 3, 2, INT64_MIN / 4, 70, 140);
}

/* One slot of each level in turn filled with many nodes (several per
 * chain), from positions inside and at the start of a period: nodes removed
 * from the heads, the middles and the tails of chains, a few inserted again
 * into the gaps, then the time moved a tick at a time with expires cut by a
 * small max: every node leaves at its tick, in order, through one cascade
 * per level it passes. */
static void crowded_slots_cascade_at_every_level_in_exact_order(void **state) {
    (void)state;
    const struct {
        int64_t tick;
        unsigned bits, levels;
        int64_t origin;
    } cfgs[] = {
        {1, 2, 5, 0},      /* 4 slots a level: periods of 1, 4, 16, 64, 256 ticks */
        {3, 3, 3, -7},     /* 8 slots a level */
        {1000, 1, 6, 100}, /* 2 slots a level */
    };
    uint64_t rs = 777;
    const size_t n = 9 * TK__HWHEEL_CHAINS + 5;
    for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
        unsigned b = cfgs[k].bits;
        for (unsigned l = 0; l < cfgs[k].levels; l++) {
            for (uint64_t c0 = 0; c0 < 3; c0++) {
                model m;
                model_open(&m, cfgs[k].tick, b, cfgs[k].levels, cfgs[k].origin, n + 8);
                /* position c0 * 2^(l*b) + c0: at a period start, or inside */
                uint64_t per = UINT64_C(1) << (l * b);
                uint64_t pos = c0 * per + c0;
                if (pos > 0)
                    model_expire(&m, ref_time(&m.c, pos), SIZE_MAX);
                /* the level-l period starting at the first multiple of per
                 * at least per ticks ahead: its nodes share one slot of
                 * level l (with 2 slots a level, of level l + 1 from
                 * inside a period) */
                uint64_t start = (pos + per + per - 1) / per * per;
                for (size_t i = 0; i < n; i++) {
                    uint64_t t = start + rng_below(&rs, per);
                    int64_t d = ref_time(&m.c, t) - (int64_t)rng_below(&rs, 2);
                    model_insert(&m, i, d);
                }
                model_check(&m);
                /* heads, middles and tails of the chains */
                for (size_t i = 0; i < n; i += 3)
                    model_remove(&m, i);
                model_remove(&m, n - 1);
                model_remove(&m, n - 2);
                model_check(&m);
                for (size_t i = 0; i < n; i += 9) /* some come back, into the gaps */
                    model_insert(&m, i, ref_time(&m.c, start + rng_below(&rs, per)));
                model_check(&m);
                for (uint64_t t = pos + 1; m.nlive > 0; t++) {
                    int64_t at = ref_time(&m.c, t);
                    model_expire(&m, at, 1 + (size_t)rng_below(&rs, 3));
                    model_check(&m);
                    model_expire(&m, at, SIZE_MAX);
                    model_check(&m);
                    assert_true(t <= start + per);
                }
                assert_true(m.cut_expires > 0);
                model_close(&m);
            }
        }
    }
}

static void a_node_due_exactly_on_a_level_boundary_leaves_at_that_tick(void **state) {
    (void)state;
    /* defaults: the boundaries of levels 1..5 are multiples of 64^l ticks */
    core c;
    core_open(&c, TK_NS_PER_MS, 6, 6, 0);
    tk_node n[5];
    memset(n, 0, sizeof(n));
    for (unsigned l = 1; l <= 5; l++) {
        uint64_t k = UINT64_C(1) << (6 * l);
        set_key(&n[l - 1], (int64_t)k * TK_NS_PER_MS, l);
        assert_int_equal(ops()->insert(c.state, &n[l - 1]), TK_OK);
    }
    for (unsigned l = 1; l <= 5; l++) {
        int64_t due = n[l - 1].deadline_ns;
        size_t cnt = 9;
        assert_int_equal(ops()->due(c.state, due), due);
        /* a tick before: not out (though cascades may happen) */
        assert_null(ops()->expire(c.state, due - 1, SIZE_MAX, &cnt));
        assert_int_equal(cnt, 0);
        assert_int_equal(ops()->check(c.state), TK_OK);
        tk_node *out = ops()->expire(c.state, due, SIZE_MAX, &cnt);
        assert_ptr_equal(out, &n[l - 1]);
        assert_int_equal(cnt, 1);
        assert_int_equal(ops()->check(c.state), TK_OK);
    }
    assert_int_equal(ops()->count(c.state), 0);
    core_close(&c);
}

/* Thousands of nodes in a few ticks, inserted in scrambled order with
 * scrambled seqs, many on a tick's first or last nanosecond and many
 * sharing a deadline: large unordered batches, sorted by spreading them over
 * buckets within the tick, leave in exact order, also when the tick is
 * shorter than the buckets are many, and at the end of time. */
static void large_scrambled_batches_of_one_tick_leave_in_exact_order(void **state) {
    (void)state;
    const struct {
        int64_t tick;
        unsigned bits, levels;
        int64_t origin;
        size_t n;
        uint64_t ticks;
    } cfgs[] = {
        {TK_NS_PER_MS, 6, 6, 0, 4000, 3},
        {1000, 2, 3, -77, 3000, 5},
        {7, 6, 6, 5, 3000, 2},
        {2, 1, 1, 0, 500, 2},
        {TK_NS_PER_S, 6, 4, INT64_MAX - INT64_C(3) * TK_NS_PER_S - 5, 2000, 1},
        {INT64_MAX >> 36, 6, 6, INT64_MIN, 2000, 3},
    };
    uint64_t rs = 4242;
    for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
        model m;
        model_open(&m, cfgs[k].tick, cfgs[k].bits, cfgs[k].levels, cfgs[k].origin, cfgs[k].n);
        /* past tick 0, so that each batch is a whole tick of the grid */
        uint64_t first = 3;
        bool end_of_time = ref_time(&m.c, first + cfgs[k].ticks) == INT64_MAX;
        for (size_t i = 0; i < cfgs[k].n; i++) {
            uint64_t t = first + 1 + rng_below(&rs, cfgs[k].ticks);
            i128 lo = (i128)cfgs[k].origin + (i128)(t - 1) * cfgs[k].tick; /* t_{t-1} */
            i128 d;
            switch (rng_below(&rs, 4)) {
            case 0:
                d = lo + 1;
                break;
            case 1:
                d = lo + cfgs[k].tick;
                break;
            case 2:
                d = lo + 1 + (cfgs[k].tick / 2);
                break;
            default:
                d = lo + 1 + (i128)rng_below(&rs, (uint64_t)cfgs[k].tick);
                break;
            }
            model_insert(&m, i, clamp128(d));
        }
        model_check(&m);
        for (uint64_t t = first + 1; t <= first + cfgs[k].ticks; t++) {
            int64_t at = end_of_time ? INT64_MAX : ref_time(&m.c, t);
            if (rng_below(&rs, 2) == 0)
                model_expire(&m, at, 1 + (size_t)rng_below(&rs, 100));
            model_expire(&m, at, SIZE_MAX);
            model_check(&m);
        }
        assert_int_equal(m.nlive, 0);
        model_close(&m);
    }
}

/* ---- cascades spread over the ticks before them ---------------------------------------------- */

/* A level-1 slot of 1000 nodes (ticks 128..191, 1 ns ticks, 64 slots a
 * level), and an expire() at every tick before its event: each moves the
 * slot's share for the ticks left, ceil(left in the slot / ticks to go),
 * one level down, so that no expire() moves more than a few over 1000 / 64
 * and the slot is empty by its event; every node still leaves at its tick,
 * in order. A node records where it is, so a move shows as a change of
 * `where`. */
static void a_crowded_slot_moves_down_in_shares_before_its_event(void **state) {
    (void)state;
    enum { N = 1000 };
    model m;
    model_open(&m, 1, 6, 3, 0, N);
    uint64_t rs = 31337;
    for (size_t i = 0; i < N; i++)
        model_insert(&m, i, 128 + (int64_t)rng_below(&rs, 64));
    const uint32_t where = priv(&m.nodes[0])->where;
    for (size_t i = 0; i < N; i++)
        assert_int_equal(priv(&m.nodes[i])->where, where); /* one slot */
    /* an expire at tick 63 is still in the period before the slot's: its
     * level-1 event is 64 ticks away, nothing moves */
    model_expire(&m, 63, SIZE_MAX);
    size_t in_slot = N;
    for (int64_t c = 64; c < 128; c++) {
        model_expire(&m, c, SIZE_MAX);
        model_check(&m);
        size_t left = 0;
        for (size_t i = 0; i < N; i++)
            left += priv(&m.nodes[i])->where == where;
        uint64_t ticks = (uint64_t)(128 - c);
        size_t share = (size_t)((in_slot + ticks - 1) / ticks);
        assert_int_equal(in_slot - left, share);
        assert_true(share <= N / 64 + 2);
        in_slot = left;
    }
    assert_int_equal(in_slot, 0);
    for (int64_t c = 128; c < 192; c++) {
        model_expire(&m, c, SIZE_MAX);
        model_check(&m);
    }
    assert_int_equal(m.nlive, 0);
    model_close(&m);
}

/* ---- next(): the idle cost ------------------------------------------------------------------- */

/* A timer an hour ahead (tick 1 ms) asks for no wake-up in its first five
 * seconds (nor its first 50 minutes), wherever the position is, and for at
 * most one wake-up per level before it fires. */
static void a_timer_an_hour_ahead_wakes_nobody_for_the_first_minutes(void **state) {
    (void)state;
    uint64_t rs = 99;
    for (int round = 0; round < 200; round++) {
        core c;
        int64_t origin = INT64_C(1000000000000) + (int64_t)rng_below(&rs, 1000000);
        core_open(&c, TK_NS_PER_MS, 6, 6, origin);
        /* a position anywhere, also right before a high level boundary */
        int64_t now = origin + (int64_t)rng_below(&rs, INT64_C(1) << 40);
        if (round % 4 == 0)
            now = origin + ((INT64_C(1) << 30) - 1 - (int64_t)rng_below(&rs, 5)) * TK_NS_PER_MS;
        size_t cnt;
        assert_null(ops()->expire(c.state, now, SIZE_MAX, &cnt));
        tk_node n;
        memset(&n, 0, sizeof(n));
        set_key(&n, now + 3600 * TK_NS_PER_S, 1);
        assert_int_equal(ops()->insert(c.state, &n), TK_OK);
        int64_t when;
        assert_int_equal(ops()->next(c.state, &when), TK_OK);
        assert_true(when >= now + 50 * 60 * TK_NS_PER_S);
        /* follow next() as the adapter does: each wake-up is a cascade
         * until the one that hands the node out */
        int wakeups = 0;
        tk_node *out = NULL;
        while (out == NULL) {
            assert_int_equal(ops()->next(c.state, &when), TK_OK);
            assert_true(when <= ops()->due(c.state, n.deadline_ns));
            out = ops()->expire(c.state, when, SIZE_MAX, &cnt);
            wakeups++;
            assert_true(wakeups <= 6);
        }
        assert_ptr_equal(out, &n);
        assert_int_equal(ops()->count(c.state), 0);
        core_close(&c);
    }
}

static void next_is_exact_for_a_near_node_and_never_an_empty_tick(void **state) {
    (void)state;
    core c;
    core_open(&c, TK_NS_PER_MS, 6, 6, 0);
    tk_node n;
    memset(&n, 0, sizeof(n));
    int64_t when;
    assert_int_equal(ops()->next(c.state, &when), TK_ENOENT);
    set_key(&n, 50 * TK_NS_PER_MS - 3, 0);
    assert_int_equal(ops()->insert(c.state, &n), TK_OK);
    assert_int_equal(ops()->next(c.state, &when), TK_OK);
    assert_int_equal(when, 50 * TK_NS_PER_MS); /* level 0: exact */
    size_t cnt;
    assert_null(ops()->expire(c.state, when - 1, SIZE_MAX, &cnt));
    assert_int_equal(ops()->next(c.state, &when), TK_OK);
    assert_int_equal(when, 50 * TK_NS_PER_MS); /* nothing moved it */
    assert_ptr_equal(ops()->expire(c.state, when, SIZE_MAX, &cnt), &n);
    assert_int_equal(ops()->next(c.state, &when), TK_ENOENT);
    core_close(&c);
}

/* ---- edges ------------------------------------------------------------------------------------
 */

static void never_deadlines_wait_in_the_overflow_list_and_leave_at_the_end_of_time(void **state) {
    (void)state;
    core c;
    int64_t origin = INT64_C(1000000000000000);
    core_open(&c, TK_NS_PER_MS, 6, 6, origin);
    tk_node n[4];
    memset(n, 0, sizeof(n));
    set_key(&n[0], INT64_MAX, 3);
    set_key(&n[1], INT64_MAX, 1);
    set_key(&n[2], INT64_MAX - 1, 7);
    set_key(&n[3], origin + 10 * TK_NS_PER_MS, 9);
    for (int i = 0; i < 4; i++)
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
    assert_int_equal(ops()->check(c.state), TK_OK);
    assert_int_equal(ops()->due(c.state, INT64_MAX), INT64_MAX); /* saturated */
    assert_ptr_equal(ops()->first(c.state), &n[3]);
    size_t cnt;
    assert_ptr_equal(ops()->expire(c.state, origin + 10 * TK_NS_PER_MS, SIZE_MAX, &cnt), &n[3]);
    /* next(): finite, years ahead */
    int64_t when;
    assert_int_equal(ops()->next(c.state, &when), TK_OK);
    assert_true(when > origin + INT64_C(365) * 86400 * TK_NS_PER_S);
    assert_ptr_equal(ops()->first(c.state), &n[2]);
    assert_null(ops()->expire(c.state, INT64_MAX - 1000 * TK_NS_PER_S, SIZE_MAX, &cnt));
    assert_int_equal(ops()->check(c.state), TK_OK);
    tk_node *out = ops()->expire(c.state, INT64_MAX, SIZE_MAX, &cnt);
    assert_int_equal(cnt, 3);
    assert_ptr_equal(out, &n[2]);
    assert_ptr_equal(tk_node_next_detached(out), &n[1]);
    assert_ptr_equal(tk_node_next_detached(tk_node_next_detached(out)), &n[0]);
    /* after the end of time everything is due at once */
    set_key(&n[3], INT64_MAX, 10);
    assert_int_equal(ops()->insert(c.state, &n[3]), TK_OK);
    assert_ptr_equal(ops()->expire(c.state, INT64_MAX, SIZE_MAX, &cnt), &n[3]);
    assert_int_equal(ops()->check(c.state), TK_OK);
    core_close(&c);
}

static void a_late_insert_leaves_on_the_next_expire_in_order(void **state) {
    (void)state;
    core c;
    core_open(&c, 10, 6, 6, 0);
    tk_node n[3];
    memset(n, 0, sizeof(n));
    size_t cnt;
    assert_null(ops()->expire(c.state, 1005, SIZE_MAX, &cnt)); /* c = tick 100 */
    set_key(&n[0], 1001, 2);                                   /* tick 101 at 1010: not due */
    set_key(&n[1], 995, 5);                                    /* tick 100: due, late */
    set_key(&n[2], -7, 1);                                     /* before the origin: due, late */
    for (int i = 0; i < 3; i++)
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
    int64_t when;
    assert_int_equal(ops()->next(c.state, &when), TK_OK);
    assert_true(when <= 1005);
    assert_int_equal(ops()->count_due(c.state, 1005, 10), 2);
    tk_node *out = ops()->expire(c.state, 1005, SIZE_MAX, &cnt);
    assert_int_equal(cnt, 2);
    assert_ptr_equal(out, &n[2]);
    assert_ptr_equal(tk_node_next_detached(out), &n[1]);
    assert_ptr_equal(ops()->expire(c.state, 1010, SIZE_MAX, &cnt), &n[0]);
    core_close(&c);
}

static void an_expire_cut_by_max_leaves_the_rest_due_in_order(void **state) {
    (void)state;
    core c;
    core_open(&c, TK_NS_PER_MS, 6, 6, 0);
    enum { N = 500 };
    tk_node *n = calloc(N, sizeof(tk_node));
    assert_non_null(n);
    uint64_t rs = 5;
    for (size_t i = 0; i < N; i++) {
        /* ticks 1..300 (levels 0..2), scrambled */
        set_key(&n[i], (int64_t)rng_below(&rs, 300 * TK_NS_PER_MS) + 1, i);
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
    }
    const tk_node *prev = NULL;
    size_t total = 0, cnt;
    int64_t now = 150 * TK_NS_PER_MS;
    while (total < N) {
        if (ops()->count_due(c.state, now, SIZE_MAX) == 0)
            now = 300 * TK_NS_PER_MS;
        tk_node *out = ops()->expire(c.state, now, 7, &cnt);
        assert_true(cnt >= 1 && cnt <= 7);
        for (; out != NULL; out = tk_node_next_detached(out)) {
            assert_true(ops()->due(c.state, out->deadline_ns) <= now);
            if (prev != NULL)
                assert_true(tk_node_before(prev, out));
            prev = out;
            total++;
        }
        assert_int_equal(ops()->check(c.state), TK_OK);
    }
    assert_int_equal(ops()->count(c.state), 0);
    free(n);
    core_close(&c);
}

static void equal_deadlines_leave_in_seq_order_across_cascades(void **state) {
    (void)state;
    core c;
    core_open(&c, 1, 2, 4, 0); /* 4 slots, span 256 ticks */
    enum { N = 300 };
    tk_node *n = calloc(N, sizeof(tk_node));
    assert_non_null(n);
    size_t cnt;
    /* the same deadline inserted from many positions: different levels */
    for (size_t i = 0; i < N; i++) {
        set_key(&n[i], 200, (uint64_t)(N - i) * 3); /* seqs decrease */
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
        if (i % 2 == 0)
            (void)ops()->expire(c.state, (int64_t)(i / 2), SIZE_MAX, &cnt);
    }
    tk_node *out = ops()->expire(c.state, 200, SIZE_MAX, &cnt);
    assert_int_equal(cnt, N);
    for (size_t i = N; i-- > 0; out = tk_node_next_detached(out))
        assert_ptr_equal(out, &n[i]);
    free(n);
    core_close(&c);
}

static void remove_answers_enoent_for_nodes_it_does_not_hold(void **state) {
    (void)state;
    core c;
    core_open(&c, TK_NS_PER_MS, 6, 6, 0);
    tk_node a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    assert_int_equal(ops()->remove(c.state, &a), TK_ENOENT); /* never inserted */
    assert_int_equal(ops()->remove(c.state, NULL), TK_ENOENT);
    assert_int_equal(ops()->insert(c.state, NULL), TK_EINVAL);
    set_key(&a, 5 * TK_NS_PER_S, 1);
    set_key(&b, INT64_MAX, 2);
    assert_int_equal(ops()->insert(c.state, &a), TK_OK);
    assert_int_equal(ops()->insert(c.state, &b), TK_OK);
    assert_int_equal(ops()->insert(c.state, &a), TK_EINVAL);
    assert_int_equal(ops()->remove(c.state, &a), TK_OK);
    assert_int_equal(ops()->remove(c.state, &a), TK_ENOENT);
    assert_int_equal(ops()->remove(c.state, &b), TK_OK); /* from the overflow list */
    assert_int_equal(ops()->remove(c.state, &b), TK_ENOENT);
    /* handed out: not held */
    assert_int_equal(ops()->insert(c.state, &a), TK_OK);
    size_t cnt;
    assert_ptr_equal(ops()->expire(c.state, 5 * TK_NS_PER_S, SIZE_MAX, &cnt), &a);
    assert_int_equal(ops()->remove(c.state, &a), TK_ENOENT);
    /* and may come back */
    assert_int_equal(ops()->insert(c.state, &a), TK_OK);
    assert_int_equal(ops()->remove(c.state, &a), TK_OK);
    assert_int_equal(ops()->count(c.state), 0);
    assert_null(ops()->first(c.state));
    core_close(&c);
}

static void check_detects_a_changed_key_and_a_broken_due_order(void **state) {
    (void)state;
    core c;
    core_open(&c, 10, 6, 6, 0);
    tk_node n[3];
    memset(n, 0, sizeof(n));
    set_key(&n[0], 5000, 1); /* level 1 */
    assert_int_equal(ops()->insert(c.state, &n[0]), TK_OK);
    assert_int_equal(ops()->check(c.state), TK_OK);
    n[0].deadline_ns = 90000; /* its slot no longer matches its key */
    assert_int_equal(ops()->check(c.state), TK_ESTATE);
    n[0].deadline_ns = 5000;
    assert_int_equal(ops()->check(c.state), TK_OK);
    /* two late nodes in the due list, then their order broken */
    size_t cnt;
    assert_null(ops()->expire(c.state, 100, SIZE_MAX, &cnt));
    set_key(&n[1], 21, 2); /* both in tick 3 */
    set_key(&n[2], 29, 3);
    assert_int_equal(ops()->insert(c.state, &n[1]), TK_OK);
    assert_int_equal(ops()->insert(c.state, &n[2]), TK_OK);
    assert_int_equal(ops()->check(c.state), TK_OK);
    set_key(&n[2], 21, 1); /* same tick, now before node 1 which it follows */
    assert_int_equal(ops()->check(c.state), TK_ESTATE);
    set_key(&n[2], 29, 3);
    assert_int_equal(ops()->check(c.state), TK_OK);
    n[0].deadline_ns = 50; /* due by now, yet in the wheel */
    assert_int_equal(ops()->check(c.state), TK_ESTATE);
    n[0].deadline_ns = 5000;
    assert_int_equal(ops()->check(c.state), TK_OK);
    assert_int_equal(ops()->check(NULL), TK_ESTATE);
    core_close(&c);
}

/* A crowded slot's chains: check() notices a node recorded in the wrong
 * chain, a broken back link, and a node unlinked behind the core's back
 * (its bank's count no longer matches its chains). */
static void check_detects_a_broken_chain_and_a_wrong_count(void **state) {
    (void)state;
    core c;
    core_open(&c, 10, 6, 6, 0);
    enum { N = 3 * TK__HWHEEL_CHAINS };
    tk_node n[N];
    memset(n, 0, sizeof(n));
    for (size_t i = 0; i < N; i++) { /* ticks 100..120: one slot of level 1 */
        set_key(&n[i], 1000 + (int64_t)(i % 7) * 30, i);
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
    }
    assert_int_equal(ops()->check(c.state), TK_OK);
    /* filled in turn: node i in chain i % chains */
    for (size_t i = 0; i < N; i++)
        assert_int_equal(priv(&n[i])->chain, i % TK__HWHEEL_CHAINS);
    /* a node that says it is in another chain */
    tk_node *mid = &n[TK__HWHEEL_CHAINS + 1]; /* the middle of chain 1 */
    priv(mid)->chain = 2;
    assert_int_equal(ops()->check(c.state), TK_ESTATE);
    priv(mid)->chain = 1;
    assert_int_equal(ops()->check(c.state), TK_OK);
    /* a back link that points elsewhere */
    tk_node *prev = priv(mid)->prev;
    assert_ptr_equal(prev, &n[1]);
    priv(mid)->prev = &n[2];
    assert_int_equal(ops()->check(c.state), TK_ESTATE);
    priv(mid)->prev = prev;
    assert_int_equal(ops()->check(c.state), TK_OK);
    /* unlinked by hand: the chain is sound, the bank's count is not */
    tk_node *next = priv(mid)->next;
    priv(prev)->next = next;
    priv(next)->prev = prev;
    assert_int_equal(ops()->check(c.state), TK_ESTATE);
    priv(prev)->next = mid;
    priv(next)->prev = mid;
    assert_int_equal(ops()->check(c.state), TK_OK);
    /* a chain index out of range is not held */
    priv(mid)->chain = TK__HWHEEL_CHAINS;
    assert_int_equal(ops()->remove(c.state, mid), TK_ENOENT);
    priv(mid)->chain = 1;
    /* removed from the middle, then everything leaves in order */
    assert_int_equal(ops()->remove(c.state, mid), TK_OK);
    assert_int_equal(ops()->check(c.state), TK_OK);
    size_t cnt;
    const tk_node *last = NULL, *out = ops()->expire(c.state, 1200, SIZE_MAX, &cnt);
    assert_int_equal(cnt, N - 1);
    for (; out != NULL; out = tk_node_next_detached(out)) {
        if (last != NULL)
            assert_true(tk_node_before(last, out));
        last = out;
    }
    assert_int_equal(ops()->count(c.state), 0);
    core_close(&c);
}

static void first_finds_the_minimum_across_levels_and_the_overflow_list(void **state) {
    (void)state;
    core c;
    core_open(&c, 1, 2, 3, 0); /* 4 slots, span 64 */
    tk_node n[4];
    memset(n, 0, sizeof(n));
    size_t cnt;
    set_key(&n[0], 100, 1); /* overflow at position 0 */
    assert_int_equal(ops()->insert(c.state, &n[0]), TK_OK);
    assert_ptr_equal(ops()->first(c.state), &n[0]);
    assert_null(ops()->expire(c.state, 50, SIZE_MAX, &cnt));
    /* node 1 goes to level 2 (99 - 50 = 49 ticks away), while node 0, with
     * a later deadline, still waits in the overflow list */
    set_key(&n[1], 99, 2);
    assert_int_equal(ops()->insert(c.state, &n[1]), TK_OK);
    set_key(&n[2], 60, 3); /* level 1 */
    assert_int_equal(ops()->insert(c.state, &n[2]), TK_OK);
    assert_ptr_equal(ops()->first(c.state), &n[2]);
    assert_int_equal(ops()->remove(c.state, &n[2]), TK_OK);
    assert_ptr_equal(ops()->first(c.state), &n[1]);
    set_key(&n[3], 99, 0); /* same deadline, smaller seq */
    assert_int_equal(ops()->insert(c.state, &n[3]), TK_OK);
    assert_ptr_equal(ops()->first(c.state), &n[3]);
    assert_int_equal(ops()->check(c.state), TK_OK);
    tk_node *out = ops()->expire(c.state, 100, SIZE_MAX, &cnt);
    assert_int_equal(cnt, 3);
    assert_ptr_equal(out, &n[3]);
    core_close(&c);
}

/* Two nodes of one tick in different levels: B, inserted first, waits at
 * level 2 for the cascade at tick 16; A, inserted from closer, sits in
 * level 0's slot of tick 16. B's deadline is the smaller. */
static void first_compares_nodes_of_one_tick_in_different_levels(void **state) {
    (void)state;
    core c;
    core_open(&c, 10, 2, 3, 0); /* 4 slots a level, span 64 ticks */
    tk_node a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    size_t cnt;
    set_key(&b, 151, 2); /* tick 16, 16 ticks away: level 2 */
    assert_int_equal(ops()->insert(c.state, &b), TK_OK);
    assert_null(ops()->expire(c.state, 130, SIZE_MAX, &cnt)); /* position 13 */
    set_key(&a, 160, 1);                                      /* tick 16, 3 ticks away: level 0 */
    assert_int_equal(ops()->insert(c.state, &a), TK_OK);
    assert_int_equal(ops()->check(c.state), TK_OK);
    assert_ptr_equal(ops()->first(c.state), &b);
    tk_node *out = ops()->expire(c.state, 160, SIZE_MAX, &cnt);
    assert_int_equal(cnt, 2);
    assert_ptr_equal(out, &b);
    assert_ptr_equal(tk_node_next_detached(out), &a);
    core_close(&c);
}

static void init_refuses_bad_parameters_and_reports_enomem(void **state) {
    (void)state;
    void *st = calloc(1, ops()->size);
    assert_non_null(st);
    test_alloc ta = {0, 0, 0};
    tk_allocator a = {ta_alloc, ta_free, &ta};
    const tk__hwheel_params bad[] = {
        {0, 6, 6},
        {-1, 6, 6},
        {1, 0, 6},
        {1, TK__HWHEEL_MAX_BITS + 1, 1},
        {1, 6, 0},
        {1, 1, TK__HWHEEL_MAX_LEVELS + 1},
        {1, 10, 7},               /* 70 bits of span */
        {INT64_C(1) << 40, 6, 4}, /* 2^40 ns x 2^24 overflows */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(ops()->init(st, &bad[i], &a, 0), TK_EINVAL);
    assert_int_equal(ta.allocs, 0);
    ta.fail = 1;
    const tk__hwheel_params good = {TK_NS_PER_MS, 6, 6};
    assert_int_equal(ops()->init(st, &good, &a, 0), TK_ENOMEM);
    assert_int_equal(ta.live_bytes, 0);
    ta.fail = 0;
    assert_int_equal(ops()->init(st, &good, &a, 0), TK_OK);
    assert_int_equal(ta.allocs, 1); /* one block: the slots and the bitmaps */
    ops()->destroy(st);
    assert_int_equal(ta.live_bytes, 0);
    free(st);
}

/* ---- the parameters ---------------------------------------------------------------------- */

static void the_defaults_cover_two_to_the_32_ticks_and_format_canonically(void **state) {
    (void)state;
    const tk_queue_ops *e = tk_engine_hwheel();
    assert_ptr_equal(tk_engine_by_name("hwheel"), e);
    assert_int_equal(tk_engine_check(e, NULL, 0), TK_OK);
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, e), TK_OK);
    int64_t tick, bits, levels;
    assert_int_equal(tk_queue_config_get_value(&cfg, "tick", &tick), TK_OK);
    assert_int_equal(tk_queue_config_get_value(&cfg, "bits", &bits), TK_OK);
    assert_int_equal(tk_queue_config_get_value(&cfg, "levels", &levels), TK_OK);
    assert_int_equal(tick, TK_NS_PER_MS);
    assert_int_equal(bits, 6);
    assert_int_equal(levels, 6);
    assert_true(bits * levels >= 32);
    char buf[128], err[256];
    assert_int_equal(tk_queue_config_format(e, &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "hwheel:tick=1ms,bits=6,levels=6");
    const tk_queue_ops *got = NULL;
    assert_int_equal(
        tk_queue_config_parse("hwheel:levels=3,tick=250us,bits=8", &got, &cfg, err, sizeof(err)),
        TK_OK);
    assert_ptr_equal(got, e);
    assert_int_equal(tk_queue_config_format(e, &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "hwheel:tick=250us,bits=8,levels=3");
    assert_int_equal(tk_queue_config_check(e, NULL, err, sizeof(err)), TK_OK);
    assert_int_equal(e->caps & (TK_QUEUE_CAP_EXACT_ORDER | TK_QUEUE_CAP_O1_REMOVE |
                                TK_QUEUE_CAP_TICKED | TK_QUEUE_CAP_BOUNDED),
                     TK_QUEUE_CAP_EXACT_ORDER | TK_QUEUE_CAP_O1_REMOVE | TK_QUEUE_CAP_TICKED |
                         TK_QUEUE_CAP_BOUNDED);
}

static void every_parameter_out_of_range_is_refused_with_its_name(void **state) {
    (void)state;
    const tk_queue_ops *e = tk_engine_hwheel();
    size_t refused = 0;
    for (size_t i = 0; i < e->param_count; i++) {
        uint64_t bad[3];
        int nbad = tkt_param_bad_values(&e->params[i], bad);
        for (int k = 0; k < nbad; k++) {
            tk_queue_config cfg;
            char err[256] = "";
            assert_int_equal(tk_queue_config_init_for(&cfg, e), TK_OK);
            tkt_param_store(&cfg, &e->params[i], bad[k]);
            assert_int_equal(tk_queue_config_check(e, &cfg, err, sizeof(err)), TK_EINVAL);
            assert_true(strncmp(err, "hwheel: ", 8) == 0);
            assert_non_null(strstr(err, e->params[i].key));
            refused++;
        }
    }
    /* tick (0), bits (0, 11, max), levels (0, 33, max), spin (above 1 s) */
    assert_true(refused >= 8);
    /* the spec parser says the same */
    const tk_queue_ops *got = NULL;
    tk_queue_config cfg;
    char err[256];
    assert_int_equal(tk_queue_config_parse("hwheel:bits=11", &got, &cfg, err, sizeof(err)),
                     TK_EINVAL);
    assert_non_null(strstr(err, "bits=11"));
    assert_int_equal(tk_queue_config_parse("hwheel:tick=0ns", &got, &cfg, err, sizeof(err)),
                     TK_EINVAL);
    assert_int_equal(tk_queue_config_parse("hwheel:levels=0", &got, &cfg, err, sizeof(err)),
                     TK_EINVAL);
}

static void validate_refuses_a_span_that_overflows_and_names_the_parameters(void **state) {
    (void)state;
    const tk_queue_ops *e = tk_engine_hwheel();
    char err[256];
    tk_queue_config cfg;
    /* bits x levels past 62 */
    assert_int_equal(tk_queue_config_init_for(&cfg, e), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "tick", 1), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "bits", 10), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "levels", 7), TK_OK);
    assert_int_equal(tk_queue_config_check(e, &cfg, err, sizeof(err)), TK_EINVAL);
    assert_true(strncmp(err, "hwheel: ", 8) == 0);
    assert_non_null(strstr(err, "bits=10"));
    assert_non_null(strstr(err, "levels=7"));
    assert_null(strchr(err, '\n'));
    /* 62 bits fit with a 1 ns tick, not with 2 ns */
    assert_int_equal(tk_queue_config_set_value(&cfg, "bits", 2), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "levels", 31), TK_OK);
    assert_int_equal(tk_queue_config_check(e, &cfg, err, sizeof(err)), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "tick", 2), TK_OK);
    assert_int_equal(tk_queue_config_check(e, &cfg, err, sizeof(err)), TK_EINVAL);
    assert_true(strncmp(err, "hwheel: ", 8) == 0);
    assert_non_null(strstr(err, "tick=2ns"));
    assert_non_null(strstr(err, "overflows int64"));
    /* the defaults' span with the largest tick that fits, and one more */
    assert_int_equal(tk_queue_config_init_for(&cfg, e), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "tick", INT64_MAX >> 36), TK_OK);
    assert_int_equal(tk_queue_config_check(e, &cfg, err, sizeof(err)), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "tick", (INT64_MAX >> 36) + 1), TK_OK);
    assert_int_equal(tk_queue_config_check(e, &cfg, err, sizeof(err)), TK_EINVAL);
    assert_non_null(strstr(err, "bits=6"));
    assert_non_null(strstr(err, "levels=6"));
    /* and create() refuses what check() refuses */
    tk_queue *q = NULL;
    assert_int_equal(tk_queue_create(e, &cfg, NULL, NULL, &q), TK_EINVAL);
    assert_null(q);
}

/* ---- latest (slack) ---------------------------------------------------------------------- */

/* latest() on an empty core, on ties, on a long window before a short one,
 * saturated at INT64_MAX, and exact while every node sits in level 0. */
static void latest_answers_the_earliest_window_end_where_it_can(void **state) {
    (void)state;
    core c;
    const int64_t tick = TK_NS_PER_MS;
    core_open(&c, tick, 6, 4, 0);
    int64_t r = 0;
    assert_int_equal(ops()->latest(c.state, &r), TK_ENOENT);
    assert_int_equal(ops()->latest(c.state, NULL), TK_EINVAL);
    tk_node n[5];
    memset(n, 0, sizeof(n));
    set_key(&n[0], 10 * tick, 0); /* a long window first... */
    n[0].slack_ns = 40 * tick;
    set_key(&n[1], 30 * tick - 5, 1); /* ...then none: due at tick 30 */
    assert_int_equal(ops()->insert(c.state, &n[0]), TK_OK);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 50 * tick);
    assert_int_equal(ops()->insert(c.state, &n[1]), TK_OK);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 30 * tick);
    set_key(&n[2], 10 * tick, 2); /* a tie with n[0], a shorter window: ends mid-tick 13 */
    n[2].slack_ns = 3 * tick - 7;
    assert_int_equal(ops()->insert(c.state, &n[2]), TK_OK);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 13 * tick);
    /* expire at the answer: both tick-10 nodes leave in seq order, n[1] stays */
    size_t k = 0;
    tk_node *l = ops()->expire(c.state, r, 8, &k);
    assert_int_equal(k, 2);
    assert_ptr_equal(l, &n[0]);
    assert_ptr_equal(tk_node_next_detached(l), &n[2]);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 30 * tick);
    /* saturation: a window past INT64_MAX ends there */
    set_key(&n[3], INT64_MAX - 3, 3);
    n[3].slack_ns = INT64_MAX;
    assert_int_equal(ops()->remove(c.state, &n[1]), TK_OK);
    assert_int_equal(ops()->insert(c.state, &n[3]), TK_OK);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    int64_t nx = 0;
    assert_int_equal(ops()->next(c.state, &nx), TK_OK);
    assert_true(r >= nx); /* a cascade on the way, or the end of time */
    assert_true(r <= INT64_MAX);
    /* a node beyond level 0 bounds the answer by its cascade */
    set_key(&n[4], 200 * tick, 4); /* level 1 (64 <= 200 - 13 < 4096 ticks) */
    assert_int_equal(ops()->insert(c.state, &n[4]), TK_OK);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(ops()->next(c.state, &nx), TK_OK);
    assert_true(r >= nx && r <= 200 * tick);
    assert_int_equal(ops()->check(c.state), TK_OK);
    core_close(&c);
}

/* The smallest window end among the nodes n[0..k) marked live, by brute
 * force (INT64_MAX if none). */
static int64_t brute_latest(const core *c, const tk_node *n, const bool *live, size_t k) {
    int64_t best = INT64_MAX;
    for (size_t i = 0; i < k; i++)
        if (live[i] && ref_end(c, &n[i]) < best)
            best = ref_end(c, &n[i]);
    return best;
}

/* A node in level 0 with a long window and a node in level 1, then 2, then
 * in the overflow list, without slack, due before that window ends:
 * latest() answers the higher node's due exactly, not the cascade on the
 * way to it, and expire() there hands out both. */
static void latest_is_exact_when_a_higher_level_node_ends_first(void **state) {
    (void)state;
    core c;
    const int64_t tick = TK_NS_PER_MS;
    core_open(&c, tick, 6, 4, 0);
    tk_node n[4];
    memset(n, 0, sizeof(n));
    set_key(&n[0], 10 * tick, 0); /* level 0, its window ends at tick 100010 */
    n[0].slack_ns = 100000 * tick;
    set_key(&n[1], 200 * tick - 3, 1); /* level 1: 64 <= 200 < 4096; its cascade is at 192 */
    set_key(&n[2], 5000 * tick, 2);    /* level 2: 4096 <= 5000 < 2^18 */
    n[2].slack_ns = 7 * tick;
    assert_int_equal(ops()->insert(c.state, &n[0]), TK_OK);
    assert_int_equal(ops()->insert(c.state, &n[1]), TK_OK);
    assert_int_equal(ops()->insert(c.state, &n[2]), TK_OK);
    int64_t r = 0, nx = 0;
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 200 * tick);
    assert_int_equal(ops()->next(c.state, &nx), TK_OK);
    assert_int_equal(nx, 10 * tick);
    assert_int_equal(ops()->remove(c.state, &n[1]), TK_OK);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 5007 * tick); /* level 2, its own slack counted */
    /* expire at the answer: n[0] and n[2] leave together, in order */
    size_t k = 0;
    tk_node *l = ops()->expire(c.state, r, 8, &k);
    assert_int_equal(k, 2);
    assert_ptr_equal(l, &n[0]);
    assert_ptr_equal(tk_node_next_detached(l), &n[2]);
    assert_int_equal(ops()->check(c.state), TK_OK);
    core_close(&c);
    /* the overflow list: a wheel of 16 ticks, a node 100 ticks ahead */
    core_open(&c, tick, 2, 2, 0);
    memset(n, 0, sizeof(n));
    set_key(&n[0], tick, 0);
    n[0].slack_ns = 1000 * tick;
    set_key(&n[1], 100 * tick, 1);
    assert_int_equal(ops()->insert(c.state, &n[0]), TK_OK);
    assert_int_equal(ops()->insert(c.state, &n[1]), TK_OK);
    assert_int_equal(priv(&n[1])->where & 0xff000000u, 0x4f000000u); /* 'O' */
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 100 * tick);
    l = ops()->expire(c.state, r, 8, &k);
    assert_int_equal(k, 2);
    assert_ptr_equal(l, &n[0]);
    assert_int_equal(ops()->check(c.state), TK_OK);
    core_close(&c);
}

/* At a 1 ns tick level 0 spans 128 ns: nodes spread over every level and
 * the overflow list, slacks from none to seconds, inserts, removals and
 * expires (at random instants and at latest()'s answers). With fewer nodes
 * than the budget, latest() is the brute-force smallest window end after
 * every step, once a node with slack has gone in since the core was last
 * empty; before that it is next(), as without slack. */
static void latest_is_the_brute_force_minimum_at_a_fine_tick(void **state) {
    (void)state;
    enum { POOL = 400, STEPS = 6000 };
    core c;
    core_open(&c, 1, 6, 5, 1000); /* 2^30 ns, about a second, before the overflow list */
    tk_node *n = calloc(POOL, sizeof(tk_node));
    bool *live = calloc(POOL, sizeof(bool));
    assert_non_null(n);
    assert_non_null(live);
    uint64_t rs = 0x5eed1a7e;
    int64_t now = 1000;
    size_t nlive = 0, exact = 0, higher = 0;
    bool held = false; /* a node with slack went in since the core was last empty */
    for (int step = 0; step < STEPS; step++) {
        uint64_t op = rng_below(&rs, 10);
        size_t i = (size_t)rng_below(&rs, POOL);
        if (op < 6 && !live[i]) {
            uint64_t d = UINT64_C(1) << rng_below(&rs, rng_below(&rs, 20) == 0 ? 34 : 31);
            set_key(&n[i], now + 1 + (int64_t)(d + rng_below(&rs, d)), (uint64_t)step);
            n[i].slack_ns = rng_below(&rs, 4) == 0
                                ? 0
                                : (int64_t)rng_below(&rs, UINT64_C(1) << rng_below(&rs, 32));
            held = (held && nlive != 0) || n[i].slack_ns > 0;
            assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
            live[i] = true;
            nlive++;
        } else if (op < 8 && live[i]) {
            assert_int_equal(ops()->remove(c.state, &n[i]), TK_OK);
            live[i] = false;
            nlive--;
        } else if (op >= 8 && nlive != 0) {
            int64_t to = now + (int64_t)rng_below(&rs, UINT64_C(1) << rng_below(&rs, 30));
            if (op == 9)
                assert_int_equal(ops()->latest(c.state, &to), TK_OK); /* as an owner would */
            size_t k = 0;
            for (tk_node *x = ops()->expire(c.state, to, SIZE_MAX, &k); x != NULL;) {
                tk_node *next = tk_node_next_detached(x);
                size_t j = (size_t)(x - n);
                assert_true(j < POOL && live[j]);
                assert_true(ref_due(&c, x->deadline_ns) <= to);
                live[j] = false;
                nlive--;
                x = next;
            }
            now = to;
        }
        assert_int_equal(ops()->check(c.state), TK_OK);
        int64_t r = 0, nx = 0;
        if (nlive == 0) {
            assert_int_equal(ops()->latest(c.state, &r), TK_ENOENT);
            continue;
        }
        assert_int_equal(ops()->latest(c.state, &r), TK_OK);
        assert_int_equal(ops()->next(c.state, &nx), TK_OK);
        if (!held) { /* no slack held: next(), as before slack */
            assert_int_equal(r, nx);
            continue;
        }
        int64_t want = brute_latest(&c, n, live, POOL);
        assert_int_equal(r, want);
        exact++;
        /* the answer lies past level 0's span: beyond the old bound */
        if (r - now > 128)
            higher++;
    }
    assert_true(exact > STEPS / 2);
    assert_true(higher > STEPS / 4);
    free(live);
    free(n);
    core_close(&c);
}

/* More nodes in one bank of level 1 than latest() reads: it answers the
 * bank's start, between next() and the smallest window end, and once the
 * bank has moved down (the owner woke there) the answer is exact again.
 * Cut short in level 0, it still answers a higher level's earlier event;
 * an overflow list too long to read gives its lower bound. A crowd spread
 * over every level: each answer between next() and the brute-force
 * minimum, and following the answers empties the core. */
static void latest_past_its_budget_answers_a_lower_bound(void **state) {
    (void)state;
    enum { CROWD = TK__HWHEEL_LATEST_BUDGET + 1000 };
    core c;
    const int64_t tick = TK_NS_PER_MS;
    core_open(&c, tick, 6, 4, 0);
    tk_node *n = calloc(CROWD + 1, sizeof(tk_node));
    bool *live = calloc(CROWD + 1, sizeof(bool));
    assert_non_null(n);
    assert_non_null(live);
    set_key(&n[CROWD], 5 * tick, CROWD); /* level 0, a window to tick 100005 */
    n[CROWD].slack_ns = 100000 * tick;
    for (size_t i = 0; i <= CROWD; i++) {
        if (i < CROWD) /* level 1's bank of ticks 128..191, none due before 150 */
            set_key(&n[i], (int64_t)(150 + i % 40) * tick, i);
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
        live[i] = true;
    }
    int64_t r = 0, nx = 0;
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(ops()->next(c.state, &nx), TK_OK);
    assert_int_equal(brute_latest(&c, n, live, CROWD + 1), 150 * tick);
    assert_true(nx <= r && r <= 150 * tick);
    assert_int_equal(r, 128 * tick); /* the bank's start */
    size_t k = 0;
    tk_node *l = ops()->expire(c.state, r, SIZE_MAX, &k);
    assert_int_equal(k, 1);
    assert_ptr_equal(l, &n[CROWD]);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 150 * tick); /* in level 0 now, a bank at a time */
    core_close(&c);
    free(live);
    free(n);

    /* Cut short in level 0 while a node of level 1 ends first: level 1's
     * bank of ticks 128..191 half moved down early (c = 126), its last node
     * x at tick 128 still there, and a crowd in level 0 at tick 129. The
     * answer is level 1's event, not the crowd's tick. */
    core_open(&c, tick, 6, 4, 0);
    n = calloc(CROWD + 10, sizeof(tk_node));
    live = calloc(CROWD + 10, sizeof(bool));
    assert_non_null(n);
    assert_non_null(live);
    for (size_t i = 0; i < 10; i++) {
        set_key(&n[i], (i < 9 ? 191 : 128) * tick, i);
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
        live[i] = true;
    }
    assert_null(ops()->expire(c.state, 126 * tick, SIZE_MAX, &k));
    assert_int_equal((priv(&n[9])->where >> 16) & 0xffu, 1); /* x: still in level 1 */
    assert_int_equal((priv(&n[0])->where >> 16) & 0xffu, 0); /* moved down */
    for (size_t i = 10; i < CROWD + 10; i++) {
        set_key(&n[i], 129 * tick, i);
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
        live[i] = true;
    }
    assert_int_equal(brute_latest(&c, n, live, CROWD + 10), 128 * tick);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(r, 128 * tick);
    assert_int_equal(ops()->check(c.state), TK_OK);
    core_close(&c);
    free(live);
    free(n);

    /* An overflow list longer than the budget: its lower bound m (tick
     * 100, left low by a removal), not its smallest window end (102: each
     * node has half a tick of slack). */
    core_open(&c, tick, 2, 2, 0);
    n = calloc(CROWD + 1, sizeof(tk_node));
    live = calloc(CROWD + 1, sizeof(bool));
    assert_non_null(n);
    assert_non_null(live);
    for (size_t i = 0; i <= CROWD; i++) {
        set_key(&n[i], (int64_t)(i == 0 ? 100 : 101 + i % 40) * tick, i);
        n[i].slack_ns = tick / 2;
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
        live[i] = true;
    }
    assert_int_equal(ops()->remove(c.state, &n[0]), TK_OK);
    live[0] = false;
    assert_int_equal(brute_latest(&c, n, live, CROWD + 1), 102 * tick);
    assert_int_equal(ops()->latest(c.state, &r), TK_OK);
    assert_int_equal(ops()->next(c.state, &nx), TK_OK);
    assert_true(nx <= r);
    assert_int_equal(r, 100 * tick);
    core_close(&c);
    free(live);
    free(n);

    /* a crowd over every level at a 1 us tick, slacks up to a second */
    enum { MANY = 3 * TK__HWHEEL_LATEST_BUDGET };
    core_open(&c, TK_NS_PER_US, 6, 6, 0);
    n = calloc(MANY, sizeof(tk_node));
    live = calloc(MANY, sizeof(bool));
    assert_non_null(n);
    assert_non_null(live);
    uint64_t rs = 0xb0d6e7;
    for (size_t i = 0; i < MANY; i++) {
        uint64_t d = UINT64_C(1) << rng_below(&rs, 32);
        set_key(&n[i], 1 + (int64_t)(d + rng_below(&rs, d)), i);
        n[i].slack_ns = (int64_t)rng_below(&rs, TK_NS_PER_S);
        assert_int_equal(ops()->insert(c.state, &n[i]), TK_OK);
        live[i] = true;
    }
    size_t left = MANY, wakes = 0, cut = 0;
    while (left != 0) {
        assert_int_equal(ops()->latest(c.state, &r), TK_OK);
        assert_int_equal(ops()->next(c.state, &nx), TK_OK);
        int64_t want = brute_latest(&c, n, live, MANY);
        assert_true(nx <= r && r <= want);
        if (r < want)
            cut++;
        l = ops()->expire(c.state, r, SIZE_MAX, &k);
        for (tk_node *x = l; x != NULL; x = tk_node_next_detached(x))
            live[x - n] = false;
        left -= k;
        wakes++;
        assert_true(wakes <= MANY * 6); /* each wake-up hands out or moves the wheel on */
    }
    assert_true(cut > 0); /* the budget was hit on the way */
    assert_int_equal(ops()->check(c.state), TK_OK);
    core_close(&c);
    free(live);
    free(n);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(latest_answers_the_earliest_window_end_where_it_can),
        cmocka_unit_test(latest_is_exact_when_a_higher_level_node_ends_first),
        cmocka_unit_test(latest_is_the_brute_force_minimum_at_a_fine_tick),
        cmocka_unit_test(latest_past_its_budget_answers_a_lower_bound),
        cmocka_unit_test(random_walks_match_the_model_with_the_defaults),
        cmocka_unit_test(random_walks_match_the_model_on_small_wheels_that_wrap_and_overflow),
        cmocka_unit_test(random_walks_match_the_model_at_the_extreme_parameters),
        cmocka_unit_test(random_walks_match_the_model_with_crowded_slots),
        cmocka_unit_test(every_cascade_boundary_hands_out_at_the_exact_tick),
        cmocka_unit_test(crowded_slots_cascade_at_every_level_in_exact_order),
        cmocka_unit_test(a_node_due_exactly_on_a_level_boundary_leaves_at_that_tick),
        cmocka_unit_test(large_scrambled_batches_of_one_tick_leave_in_exact_order),
        cmocka_unit_test(a_crowded_slot_moves_down_in_shares_before_its_event),
        cmocka_unit_test(a_timer_an_hour_ahead_wakes_nobody_for_the_first_minutes),
        cmocka_unit_test(next_is_exact_for_a_near_node_and_never_an_empty_tick),
        cmocka_unit_test(never_deadlines_wait_in_the_overflow_list_and_leave_at_the_end_of_time),
        cmocka_unit_test(a_late_insert_leaves_on_the_next_expire_in_order),
        cmocka_unit_test(an_expire_cut_by_max_leaves_the_rest_due_in_order),
        cmocka_unit_test(equal_deadlines_leave_in_seq_order_across_cascades),
        cmocka_unit_test(remove_answers_enoent_for_nodes_it_does_not_hold),
        cmocka_unit_test(check_detects_a_changed_key_and_a_broken_due_order),
        cmocka_unit_test(check_detects_a_broken_chain_and_a_wrong_count),
        cmocka_unit_test(first_finds_the_minimum_across_levels_and_the_overflow_list),
        cmocka_unit_test(first_compares_nodes_of_one_tick_in_different_levels),
        cmocka_unit_test(init_refuses_bad_parameters_and_reports_enomem),
        cmocka_unit_test(the_defaults_cover_two_to_the_32_ticks_and_format_canonically),
        cmocka_unit_test(every_parameter_out_of_range_is_refused_with_its_name),
        cmocka_unit_test(validate_refuses_a_span_that_overflows_and_names_the_parameters),
    };
    return cmocka_run_group_tests_name("hwheel_core", tests, NULL, NULL);
}
