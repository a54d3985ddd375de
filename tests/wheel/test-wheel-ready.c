/* SPDX-License-Identifier: MIT */
/* timerkit: the wheel adapter's ready set (wheel-ready.h), tested directly:
 * batches published in and out of order, runs beyond the slot count, removal
 * at run heads, tails and middles, and pops in exact (deadline, seq) order,
 * against a brute-force model, with tk__wheel_ready_check() after every
 * step. Single-threaded and deterministic (fixed seeds). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "timerkit/queue.h"
#include "timerkit/status.h"
#include "wheel-core.h"
#include "wheel-ready.h"

#define NEXT(n) (tk__wheel_priv_of(n)->next)
#define RUNS TK__WHEEL_READY_RUNS

static uint64_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* The model: which nodes are in the set. */
typedef struct model {
    tk_node *nodes;
    bool *in;
    size_t n;
} model;

static void model_init(model *m, size_t n) {
    m->nodes = calloc(n, sizeof(*m->nodes));
    m->in = calloc(n, sizeof(*m->in));
    assert_non_null(m->nodes);
    assert_non_null(m->in);
    m->n = n;
}

static void model_free(model *m) {
    free(m->nodes);
    free(m->in);
}

static tk_node *model_min(const model *m) {
    tk_node *best = NULL;
    for (size_t i = 0; i < m->n; i++)
        if (m->in[i] && (best == NULL || tk_node_before(&m->nodes[i], best)))
            best = &m->nodes[i];
    return best;
}

static size_t model_size(const model *m) {
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        k += m->in[i];
    return k;
}

static size_t index_of(const model *m, const tk_node *x) {
    return (size_t)(x - m->nodes);
}

static int cmp_by_key(const void *a, const void *b) {
    const tk_node *x = *(tk_node *const *)a, *y = *(tk_node *const *)b;
    return tk_node_before(x, y) ? -1 : tk_node_before(y, x) ? 1 : 0;
}

/* Links the given nodes sorted by key through next; returns the head. */
static tk_node *sorted_list(tk_node **v, size_t k) {
    qsort(v, k, sizeof(*v), cmp_by_key);
    for (size_t i = 0; i < k; i++)
        NEXT(v[i]) = i + 1 < k ? v[i + 1] : NULL;
    return k > 0 ? v[0] : NULL;
}

static void check_against(const tk__wheel_ready *r, const model *m) {
    assert_int_equal(tk__wheel_ready_check(r, NULL, NULL), TK_OK);
    assert_int_equal(r->size, model_size(m));
    assert_ptr_equal(tk__wheel_ready_first(r), model_min(m));
}

/* Publishes nodes [from, from + k) of the model as one batch. */
static size_t publish_range(tk__wheel_ready *r, model *m, size_t from, size_t k) {
    tk_node **v = malloc(k * sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < k; i++) {
        v[i] = &m->nodes[from + i];
        m->in[from + i] = true;
    }
    size_t added = tk__wheel_ready_publish(r, sorted_list(v, k), NULL, NULL);
    free(v);
    return added;
}

/* Pops everything, asserting exact order against the model. */
static void pop_all_in_order(tk__wheel_ready *r, model *m) {
    tk_node *prev = NULL;
    for (;;) {
        tk_node *want = model_min(m);
        tk_node *x = tk__wheel_ready_pop(r);
        assert_ptr_equal(x, want);
        if (x == NULL)
            break;
        if (prev != NULL)
            assert_true(tk_node_before(prev, x));
        m->in[index_of(m, x)] = false;
        prev = x;
        assert_int_equal(tk__wheel_ready_check(r, NULL, NULL), TK_OK);
    }
    assert_int_equal(r->size, 0);
    assert_int_equal(r->nruns, 0);
}

/* ---- shapes ------------------------------------------------------------- */

static bool take_all(tk_node *n, void *ctx) {
    (void)n;
    (void)ctx;
    return true;
}

static void empty_set_pops_nothing(void **state) {
    (void)state;
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    assert_null(tk__wheel_ready_first(&r));
    assert_null(tk__wheel_ready_pop(&r));
    assert_int_equal(tk__wheel_ready_publish(&r, NULL, NULL, NULL), 0);
    assert_int_equal(tk__wheel_ready_check(&r, NULL, NULL), TK_OK);
    size_t k = 7;
    assert_null(tk__wheel_ready_extract_if(&r, take_all, NULL, &k));
    assert_int_equal(k, 0);
}

/* Batches that continue each other (the steady state: each tick's batch
 * after the last) make one run, appended in O(1). */
static void batches_in_order_append_to_one_run(void **state) {
    (void)state;
    enum { BATCHES = 50, PER = 20 };
    model m;
    model_init(&m, BATCHES * PER);
    for (size_t i = 0; i < m.n; i++) {
        m.nodes[i].deadline_ns = (int64_t)(i / 3); /* equal deadlines, seq orders */
        m.nodes[i].seq = i;
    }
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    for (size_t b = 0; b < BATCHES; b++) {
        assert_int_equal(publish_range(&r, &m, b * PER, PER), PER);
        check_against(&r, &m);
        assert_int_equal(r.nruns, 1);
    }
    assert_int_equal(r.merges, 0);
    pop_all_in_order(&r, &m);
    model_free(&m);
}

/* Each batch interleaves every earlier one (a backlog expired over several
 * passes): each becomes a run of its own, and pops merge them exactly. */
static void interleaved_batches_become_runs_and_pop_in_exact_order(void **state) {
    (void)state;
    enum { BATCHES = 40, PER = 25 };
    model m;
    model_init(&m, BATCHES * PER);
    for (size_t b = 0; b < BATCHES; b++)
        for (size_t i = 0; i < PER; i++) {
            tk_node *x = &m.nodes[b * PER + i];
            x->deadline_ns = (int64_t)(i * 1000 + b); /* batch b: b, 1000 + b, ... */
            x->seq = b * PER + i;
        }
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    for (size_t b = 0; b < BATCHES; b++) {
        publish_range(&r, &m, b * PER, PER);
        check_against(&r, &m);
        assert_int_equal(r.nruns, b + 1);
        /* a pop between batches: the smallest of all so far */
        if (b % 7 == 3) {
            tk_node *x = tk__wheel_ready_pop(&r);
            assert_ptr_equal(x, model_min(&m));
            m.in[index_of(&m, x)] = false;
            check_against(&r, &m);
        }
    }
    pop_all_in_order(&r, &m);
    model_free(&m);
}

/* A batch that fits behind the run published last is appended to it, even
 * while other runs exist; one that does not opens a new run. */
static void batch_fitting_behind_the_last_run_is_appended(void **state) {
    (void)state;
    model m;
    model_init(&m, 30);
    for (size_t i = 0; i < m.n; i++)
        m.nodes[i].seq = i;
    for (size_t i = 0; i < 10; i++)
        m.nodes[i].deadline_ns = 100 + (int64_t)i; /* A: 100..109 */
    for (size_t i = 10; i < 20; i++)
        m.nodes[i].deadline_ns = 50 + (int64_t)i; /* B: 60..69, before A's tail */
    for (size_t i = 20; i < 30; i++)
        m.nodes[i].deadline_ns = 70 + (int64_t)i; /* C: 90..99, fits behind B */
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    publish_range(&r, &m, 0, 10);
    publish_range(&r, &m, 10, 10);
    assert_int_equal(r.nruns, 2);
    publish_range(&r, &m, 20, 10);
    assert_int_equal(r.nruns, 2); /* appended to B */
    check_against(&r, &m);
    pop_all_in_order(&r, &m);
    model_free(&m);
}

/* More interleaving batches than slots: the extra ones are merged into the
 * shortest run; nothing is lost and the order stays exact. */
static void more_runs_than_slots_merge_into_the_shortest(void **state) {
    (void)state;
    enum { BATCHES = RUNS + 60 };
    uint64_t rs = 99;
    size_t per[BATCHES], total = 0;
    for (size_t b = 0; b < BATCHES; b++) {
        per[b] = 1 + rng(&rs) % 9;
        total += per[b];
    }
    model m;
    model_init(&m, total);
    size_t at = 0;
    for (size_t b = 0; b < BATCHES; b++)
        for (size_t i = 0; i < per[b]; i++, at++) {
            m.nodes[at].deadline_ns = (int64_t)(rng(&rs) % 5000);
            m.nodes[at].seq = at;
        }
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    at = 0;
    for (size_t b = 0; b < BATCHES; b++) {
        publish_range(&r, &m, at, per[b]);
        at += per[b];
        assert_true(r.nruns <= RUNS);
        check_against(&r, &m);
    }
    assert_int_equal(r.nruns, RUNS);
    assert_true(r.merges > 0);
    print_message("      %zu batches: %zu runs, %llu merged into a run\n", (size_t)BATCHES, r.nruns,
                  (unsigned long long)r.merges);
    pop_all_in_order(&r, &m);
    model_free(&m);
}

/* Removal at a run's head (the winner tree replays), tail and middle, and of
 * a run's only node (the slot is freed). */
static void remove_at_heads_tails_and_middles(void **state) {
    (void)state;
    enum { BATCHES = 12, PER = 9 };
    model m;
    model_init(&m, BATCHES * PER + 1);
    for (size_t b = 0; b < BATCHES; b++)
        for (size_t i = 0; i < PER; i++) {
            tk_node *x = &m.nodes[b * PER + i];
            x->deadline_ns = (int64_t)(i * 100 + b * 3);
            x->seq = b * PER + i;
        }
    tk_node *alone = &m.nodes[BATCHES * PER];
    alone->deadline_ns = 50; /* fits behind no tail: a run of its own */
    alone->seq = 0;
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    for (size_t b = 0; b < BATCHES; b++)
        publish_range(&r, &m, b * PER, PER);
    publish_range(&r, &m, BATCHES * PER, 1);
    assert_int_equal(r.nruns, BATCHES + 1);
    check_against(&r, &m);

    /* batch b's run: head i = 0, tail i = PER - 1 */
    for (size_t b = 0; b < BATCHES; b++) {
        size_t pick = b % 3 == 0 ? 0 : b % 3 == 1 ? PER - 1 : PER / 2;
        tk_node *x = &m.nodes[b * PER + pick];
        tk__wheel_ready_remove(&r, x);
        m.in[index_of(&m, x)] = false;
        check_against(&r, &m);
    }
    /* the overall smallest, a head, several times over */
    for (int k = 0; k < 5; k++) {
        tk_node *x = model_min(&m);
        tk__wheel_ready_remove(&r, x);
        m.in[index_of(&m, x)] = false;
        check_against(&r, &m);
    }
    /* a run of one node: its slot is freed */
    size_t before = r.nruns;
    tk__wheel_ready_remove(&r, alone);
    m.in[index_of(&m, alone)] = false;
    check_against(&r, &m);
    assert_int_equal(r.nruns, before - 1);
    /* empty one run completely from its tail */
    for (size_t i = PER; i-- > 0;) {
        tk_node *x = &m.nodes[5 * PER + i];
        if (!m.in[index_of(&m, x)])
            continue;
        tk__wheel_ready_remove(&r, x);
        m.in[index_of(&m, x)] = false;
        check_against(&r, &m);
    }
    assert_int_equal(r.nruns, before - 2);
    pop_all_in_order(&r, &m);
    model_free(&m);
}

static bool refuse_odd_seq(tk_node *n, void *ctx) {
    (*(int *)ctx)++;
    return n->seq % 2 == 0;
}

/* A refused node is not linked, not counted and not touched afterwards. */
static void refused_nodes_are_left_alone(void **state) {
    (void)state;
    enum { N = 40 };
    model m;
    model_init(&m, N);
    tk_node *v[N];
    for (size_t i = 0; i < N; i++) {
        m.nodes[i].deadline_ns = (int64_t)(N - i);
        m.nodes[i].seq = i;
        tk__wheel_priv_of(&m.nodes[i])->rounds = -77;
        tk__wheel_priv_of(&m.nodes[i])->prev = &m.nodes[0];
        v[i] = &m.nodes[i];
    }
    tk_node *list = sorted_list(v, N);
    tk_node *next_of[N];
    for (size_t i = 0; i < N; i++)
        next_of[i] = NEXT(&m.nodes[i]);
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    int calls = 0;
    assert_int_equal(tk__wheel_ready_publish(&r, list, refuse_odd_seq, &calls), N / 2);
    assert_int_equal(calls, N);
    for (size_t i = 0; i < N; i++) {
        m.in[i] = i % 2 == 0;
        if (i % 2 != 0) {
            assert_ptr_equal(NEXT(&m.nodes[i]), next_of[i]);
            assert_ptr_equal(tk__wheel_priv_of(&m.nodes[i])->prev, &m.nodes[0]);
            assert_int_equal(tk__wheel_priv_of(&m.nodes[i])->rounds, -77);
        }
    }
    check_against(&r, &m);
    pop_all_in_order(&r, &m);
    model_free(&m);
}

static bool deadline_multiple_of_3(tk_node *n, void *ctx) {
    (void)ctx;
    return n->deadline_ns % 3 == 0;
}

static void extract_if_takes_matching_nodes_from_every_run(void **state) {
    (void)state;
    enum { BATCHES = 20, PER = 15 };
    model m;
    model_init(&m, BATCHES * PER);
    for (size_t b = 0; b < BATCHES; b++)
        for (size_t i = 0; i < PER; i++) {
            tk_node *x = &m.nodes[b * PER + i];
            x->deadline_ns = (int64_t)(i * 50 + b);
            x->seq = b * PER + i;
        }
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    for (size_t b = 0; b < BATCHES; b++)
        publish_range(&r, &m, b * PER, PER);
    size_t k = 0, want = 0;
    for (size_t i = 0; i < m.n; i++)
        want += m.nodes[i].deadline_ns % 3 == 0;
    tk_node *l = tk__wheel_ready_extract_if(&r, deadline_multiple_of_3, NULL, &k);
    assert_int_equal(k, want);
    size_t seen = 0;
    for (; l != NULL; l = tk_node_next_detached(l)) {
        assert_true(l->deadline_ns % 3 == 0);
        assert_true(m.in[index_of(&m, l)]);
        m.in[index_of(&m, l)] = false;
        seen++;
    }
    assert_int_equal(seen, want);
    check_against(&r, &m);
    pop_all_in_order(&r, &m);

    /* everything, then the set is empty and reusable */
    publish_range(&r, &m, 0, PER);
    l = tk__wheel_ready_extract_if(&r, take_all, NULL, &k);
    assert_int_equal(k, PER);
    for (size_t i = 0; i < PER; i++)
        m.in[i] = false;
    check_against(&r, &m);
    assert_int_equal(r.nruns, 0);
    model_free(&m);
}

/* check() notices a broken order, a wrong slot and a stale tree. */
static void check_detects_corruption(void **state) {
    (void)state;
    model m;
    model_init(&m, 20);
    for (size_t i = 0; i < m.n; i++) {
        m.nodes[i].deadline_ns = (int64_t)(i % 10) * 10 + (int64_t)(i / 10);
        m.nodes[i].seq = i;
    }
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    publish_range(&r, &m, 0, 10);
    publish_range(&r, &m, 10, 10);
    assert_int_equal(tk__wheel_ready_check(&r, NULL, NULL), TK_OK);

    tk_node *x = r.runs[r.win[1]].head;
    int64_t d = x->deadline_ns;
    x->deadline_ns = INT64_MAX; /* out of order in its run (and the tree) */
    assert_int_equal(tk__wheel_ready_check(&r, NULL, NULL), TK_ESTATE);
    x->deadline_ns = d;

    int64_t slot = tk__wheel_priv_of(x)->rounds;
    tk__wheel_priv_of(x)->rounds = slot + 1;
    assert_int_equal(tk__wheel_ready_check(&r, NULL, NULL), TK_ESTATE);
    tk__wheel_priv_of(x)->rounds = slot;

    uint16_t w = r.win[1];
    r.win[1] = (uint16_t)(w + 1);
    assert_int_equal(tk__wheel_ready_check(&r, NULL, NULL), TK_ESTATE);
    r.win[1] = w;

    size_t len = r.runs[w].len;
    r.runs[w].len = len + 1;
    assert_int_equal(tk__wheel_ready_check(&r, NULL, NULL), TK_ESTATE);
    r.runs[w].len = len;

    assert_int_equal(tk__wheel_ready_check(&r, NULL, NULL), TK_OK);
    pop_all_in_order(&r, &m);
    model_free(&m);
}

/* ---- randomised against the model -------------------------------------------- */

/* Records the nodes pop_batch()'s each() is called on. */
typedef struct seen_log {
    tk_node **v;
    size_t count;
} seen_log;

static void log_node(tk_node *n, void *ctx) {
    seen_log *log = ctx;
    log->v[log->count++] = n;
}

/* Random publishes (in order, interleaving, or far behind), pops, removals
 * anywhere, with check() and the model's minimum after every step. */
static void run_random(uint64_t seed, size_t pool, int steps, unsigned key_range) {
    model m;
    model_init(&m, pool);
    uint64_t rs = seed;
    for (size_t i = 0; i < pool; i++) {
        m.nodes[i].deadline_ns = (int64_t)(rng(&rs) % key_range);
        /* distinct keys (the order of equal ones is unspecified), seq order
         * unrelated to the node's index */
        m.nodes[i].seq = (rng(&rs) % pool) * pool + i;
    }
    tk_node **v = malloc(pool * sizeof(*v));
    assert_non_null(v);
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    size_t max_runs = 0;
    for (int step = 0; step < steps; step++) {
        uint64_t op = rng(&rs) % 10;
        if (op < 4) {
            /* publish up to 12 nodes not in the set */
            size_t want = 1 + rng(&rs) % 12, k = 0;
            for (size_t tries = 0; tries < 4 * want && k < want; tries++) {
                size_t i = rng(&rs) % pool;
                bool dup = m.in[i];
                for (size_t j = 0; j < k && !dup; j++)
                    dup = v[j] == &m.nodes[i];
                if (!dup)
                    v[k++] = &m.nodes[i];
            }
            for (size_t j = 0; j < k; j++)
                m.in[index_of(&m, v[j])] = true;
            assert_int_equal(tk__wheel_ready_publish(&r, sorted_list(v, k), NULL, NULL), k);
        } else if (op < 6) {
            tk_node *want = model_min(&m);
            tk_node *x = tk__wheel_ready_pop(&r);
            assert_ptr_equal(x, want);
            if (x != NULL)
                m.in[index_of(&m, x)] = false;
        } else if (op < 7) {
            /* a batch: what as many pops would give, in their order */
            size_t max = 1 + rng(&rs) % 40, k = 99;
            seen_log log = {v, 0};
            tk_node *x = tk__wheel_ready_pop_batch(&r, max, log_node, &log, &k);
            assert_true(k <= max);
            size_t got = 0;
            for (; x != NULL; x = tk_node_next_detached(x)) {
                assert_ptr_equal(x, model_min(&m));
                assert_ptr_equal(x, v[got]); /* each() saw it, in order */
                m.in[index_of(&m, x)] = false;
                got++;
            }
            assert_int_equal(got, k);
            assert_int_equal(log.count, k);
            assert_true(k == max || model_min(&m) == NULL); /* short only when empty */
        } else {
            /* remove a random member */
            size_t i = rng(&rs) % pool;
            for (size_t j = 0; j < pool && !m.in[i]; j++)
                i = (i + 1) % pool;
            if (m.in[i]) {
                tk__wheel_ready_remove(&r, &m.nodes[i]);
                m.in[i] = false;
            }
        }
        if (r.nruns > max_runs)
            max_runs = r.nruns;
        check_against(&r, &m);
    }
    print_message("      seed %llu: %d steps, up to %zu runs, %llu merges\n",
                  (unsigned long long)seed, steps, max_runs, (unsigned long long)r.merges);
    pop_all_in_order(&r, &m);
    free(v);
    model_free(&m);
}

static void random_operations_match_the_model(void **state) {
    (void)state;
    run_random(1, 200, 3000, 1000);
    run_random(2, 50, 3000, 5); /* many equal deadlines */
    run_random(3, 1500, 4000, 100000);
}

/* Publishes outpacing pops: the set fills every slot and merges. */
static void random_with_full_slots_matches_the_model(void **state) {
    (void)state;
    model m;
    enum { POOL = 6000 };
    model_init(&m, POOL);
    uint64_t rs = 4242;
    for (size_t i = 0; i < POOL; i++) {
        m.nodes[i].deadline_ns = (int64_t)(rng(&rs) % 20000);
        m.nodes[i].seq = i;
    }
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    size_t at = 0;
    while (at < POOL) {
        size_t k = 1 + rng(&rs) % 15;
        if (at + k > POOL)
            k = POOL - at;
        publish_range(&r, &m, at, k);
        at += k;
        if (rng(&rs) % 4 == 0) {
            tk_node *want = model_min(&m);
            tk_node *x = tk__wheel_ready_pop(&r);
            assert_ptr_equal(x, want);
            m.in[index_of(&m, x)] = false;
        }
        if (rng(&rs) % 3 == 0) {
            size_t i = rng(&rs) % at;
            if (m.in[i]) {
                tk__wheel_ready_remove(&r, &m.nodes[i]);
                m.in[i] = false;
            }
        }
        assert_int_equal(tk__wheel_ready_check(&r, NULL, NULL), TK_OK);
    }
    check_against(&r, &m);
    assert_true(r.merges > 0);
    pop_all_in_order(&r, &m);
    model_free(&m);
}

/* pop_batch() across interleaving runs and along one long run: the nodes
 * that as many pops would give, in their order, the set intact after each;
 * max 0 or an empty set gives nothing. */
static void a_batch_takes_what_as_many_pops_would(void **state) {
    (void)state;
    enum { PER = 100, RUNS_USED = 3, N = PER * RUNS_USED };
    model m;
    model_init(&m, N + PER);
    for (size_t i = 0; i < N; i++) { /* run j holds keys j, j + 3, j + 6, ... */
        m.nodes[i].deadline_ns = (int64_t)((i % PER) * RUNS_USED + i / PER);
        m.nodes[i].seq = i;
    }
    for (size_t i = N; i < N + PER; i++) { /* after all of those: a long run */
        m.nodes[i].deadline_ns = (int64_t)(1000 + i);
        m.nodes[i].seq = i;
    }
    tk__wheel_ready r;
    tk__wheel_ready_init(&r);
    size_t k = 99;
    assert_null(tk__wheel_ready_pop_batch(&r, 8, NULL, NULL, &k));
    assert_int_equal(k, 0);
    for (size_t j = 0; j < RUNS_USED; j++)
        assert_int_equal(publish_range(&r, &m, j * PER, PER), PER);
    assert_int_equal(publish_range(&r, &m, N, PER), PER);
    assert_int_equal(r.nruns, RUNS_USED); /* the last one continues run 2 */
    assert_null(tk__wheel_ready_pop_batch(&r, 0, NULL, NULL, &k));
    assert_int_equal(k, 0);
    size_t taken = 0;
    const size_t sizes[] = {1, 7, 50, 242, 60, 1000};
    for (size_t b = 0; b < sizeof(sizes) / sizeof(sizes[0]); b++) {
        tk_node *x = tk__wheel_ready_pop_batch(&r, sizes[b], NULL, NULL, &k);
        size_t want = N + PER - taken < sizes[b] ? N + PER - taken : sizes[b];
        assert_int_equal(k, want);
        for (; x != NULL; x = tk_node_next_detached(x)) {
            assert_ptr_equal(x, model_min(&m));
            m.in[index_of(&m, x)] = false;
            taken++;
        }
        check_against(&r, &m);
    }
    assert_int_equal(taken, N + PER);
    assert_int_equal(r.size, 0);
    assert_int_equal(r.nruns, 0);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_set_pops_nothing),
        cmocka_unit_test(batches_in_order_append_to_one_run),
        cmocka_unit_test(interleaved_batches_become_runs_and_pop_in_exact_order),
        cmocka_unit_test(batch_fitting_behind_the_last_run_is_appended),
        cmocka_unit_test(more_runs_than_slots_merge_into_the_shortest),
        cmocka_unit_test(remove_at_heads_tails_and_middles),
        cmocka_unit_test(refused_nodes_are_left_alone),
        cmocka_unit_test(extract_if_takes_matching_nodes_from_every_run),
        cmocka_unit_test(check_detects_corruption),
        cmocka_unit_test(a_batch_takes_what_as_many_pops_would),
        cmocka_unit_test(random_operations_match_the_model),
        cmocka_unit_test(random_with_full_slots_matches_the_model),
    };
    return cmocka_run_group_tests_name("wheel_ready", tests, NULL, NULL);
}
