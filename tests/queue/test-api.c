/* SPDX-License-Identifier: MIT */
/* Queue contract: create() and its configs, bad arguments of every
 * operation, and the allocator. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "queue-contract.h"

/* ---- create ------------------------------------------------------------------------ */

/* A NULL config, an all-zero one and one from tk_queue_config_init() all
 * stand for the engine's defaults: each makes a working queue. */
static void create_with_a_null_zero_or_unnamed_config_uses_the_defaults(qc *t) {
    tk_queue_config zero, unnamed;
    memset(&zero, 0, sizeof(zero));
    assert_int_equal(tk_queue_config_init(&unnamed), TK_OK);
    const tk_queue_config *cfgs[3] = {NULL, &zero, &unnamed};
    qc_node *n = qc_nodes(t, 3);
    for (int i = 0; i < 3; i++) {
        tk_queue *q = NULL;
        assert_int_equal(qc_create(t, cfgs[i], true, &q), TK_OK);
        assert_int_equal(t->ops->size(q), 0);
        qc_key(&n[i], tk_clock_now_ns() - 1, (uint64_t)i);
        qc_offer(t, q, &n[i]);
        tk_node *got = NULL;
        assert_int_equal(t->ops->poll(q, QC_WAIT, &got), TK_OK);
        assert_ptr_equal(got, &n[i].node);
        QC_CHECK(t, q);
        assert_int_equal(qc_destroy(t, q), 0);
    }
    /* and through tk_queue_create() */
    tk_queue *q = NULL;
    assert_int_equal(tk_queue_create(t->ops, NULL, NULL, NULL, &q), TK_OK);
    assert_non_null(q);
    assert_int_equal(t->ops->size(q), 0);
    t->ops->destroy(q);
}

/* create() with a NULL out, and with a config that names another engine (a
 * copy of this engine's table under another name: same parameters, so only
 * the name tells them apart). */
static void create_refuses_a_null_out_and_another_engines_config(qc *t) {
    tk_queue_config cfg;
    qc_config(t, &cfg);
    assert_int_equal(t->ops->create(t->ops, &cfg, NULL, NULL, NULL), TK_EINVAL);
    assert_int_equal(tk_queue_create(t->ops, &cfg, NULL, NULL, NULL), TK_EINVAL);
    tk_queue *q = (tk_queue *)&cfg; /* must be overwritten */
    assert_int_equal(tk_queue_create(NULL, &cfg, NULL, NULL, &q), TK_EINVAL);

    tk_queue_ops *other = qc_alloc(t, 1, sizeof(*other));
    *other = *t->ops;
    other->name = "qc-other-engine";
    tk_queue_config foreign;
    assert_int_equal(tk_queue_config_init_for(&foreign, other), TK_OK);
    assert_ptr_equal(foreign.engine, other);
    q = NULL;
    assert_int_equal(qc_create(t, &foreign, true, &q), TK_EINVAL);
    assert_null(q);
}

/* Stores v in parameter p's field of cfg, past the range checks of
 * tk_queue_config_set_value(), as a caller who writes the struct could. */
static void param_store(tk_queue_config *cfg, const tk_queue_param *p, uint64_t v) {
    unsigned char *at = (p->flags & TK_PARAM_ADAPTER) != 0 ? (unsigned char *)cfg + p->offset
                                                           : cfg->params.bytes + p->offset;
    uint64_t v8 = v;
    uint32_t v4 = (uint32_t)v;
    uint16_t v2 = (uint16_t)v;
    uint8_t v1 = (uint8_t)v;
    const void *src = p->size == 8   ? (const void *)&v8
                      : p->size == 4 ? (const void *)&v4
                      : p->size == 2 ? (const void *)&v2
                                     : (const void *)&v1;
    memcpy(at, src, p->size);
}

/* Each parameter of the engine's table, one below its minimum and one above
 * its maximum (where its field can hold such a value), the others at their
 * defaults: create() refuses every one with TK_EINVAL. */
static void create_refuses_a_parameter_outside_its_tables_range(qc *t) {
    size_t tried = 0;
    for (size_t i = 0; i < t->ops->param_count; i++) {
        const tk_queue_param *p = &t->ops->params[i];
        assert_true(p->size == 1 || p->size == 2 || p->size == 4 || p->size == 8);
        uint64_t bad[2];
        int nbad = 0;
        if (p->type == TK_PARAM_DURATION) {
            if (p->min > INT64_MIN)
                bad[nbad++] = (uint64_t)(p->min - 1);
            if (p->max < INT64_MAX)
                bad[nbad++] = (uint64_t)(p->max + 1);
        } else {
            uint64_t field_max = p->size == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * p->size)) - 1;
            if (p->min > 0)
                bad[nbad++] = (uint64_t)(p->min - 1);
            if ((uint64_t)p->max < field_max && (uint64_t)p->max < (uint64_t)INT64_MAX)
                bad[nbad++] = (uint64_t)p->max + 1;
        }
        for (int k = 0; k < nbad; k++) {
            tk_queue_config cfg;
            qc_config(t, &cfg);
            param_store(&cfg, p, bad[k]);
            tk_queue *q = NULL;
            int rc = qc_create(t, &cfg, true, &q);
            if (rc != TK_EINVAL)
                fail_msg("%s=%llu: create answered %s, not TK_EINVAL", p->key,
                         (unsigned long long)bad[k], tk_status_name(rc));
            tried++;
        }
    }
    print_message("  %zu out-of-range values refused\n", tried);
}

/* ---- bad arguments ------------------------------------------------------------------- */

static bool count_pred(const tk_node *n, void *ctx) {
    (void)n;
    atomic_fetch_add((atomic_int *)ctx, 1);
    return true;
}

/* Every operation given a NULL queue: TK_EINVAL, or 0 / NULL from those that
 * return no status; close() and destroy() return; nothing is called back. */
static void every_operation_refuses_a_null_queue(qc *t) {
    const tk_queue_ops *ops = t->ops;
    qc_node *n = qc_nodes(t, 1);
    qc_key(n, tk_clock_now_ns() - 1, 0);
    tk_node *x = NULL;
    int64_t d = 0;
    uint64_t s = 0;
    atomic_int calls = 0;
    assert_int_equal(ops->offer(NULL, &n->node), TK_EINVAL);
    assert_int_equal(ops->take(NULL, &x), TK_EINVAL);
    assert_int_equal(ops->poll(NULL, 0, &x), TK_EINVAL);
    assert_int_equal(ops->poll(NULL, QC_WAIT, &x), TK_EINVAL);
    assert_int_equal(ops->remove(NULL, &n->node), TK_EINVAL);
    assert_int_equal(ops->remove_first(NULL, &x), TK_EINVAL);
    assert_int_equal(ops->peek(NULL, &d, &s), TK_EINVAL);
    assert_int_equal(ops->size(NULL), 0);
    assert_null(ops->drain(NULL));
    assert_null(ops->remove_if(NULL, count_pred, &calls));
    assert_int_equal(atomic_load(&calls), 0);
    assert_int_equal(ops->check(NULL), TK_EINVAL);
    ops->close(NULL, TK_QUEUE_CLOSE_NOW);
    ops->close(NULL, TK_QUEUE_CLOSE_WHEN_EMPTY);
    ops->destroy(NULL);
    /* the node was never taken in: a queue still accepts it */
    tk_queue *q = qc_queue(t, NULL);
    qc_offer(t, q, n);
    assert_int_equal(ops->poll(q, QC_WAIT, &x), TK_OK);
    assert_ptr_equal(x, &n->node);
}

/* A NULL output pointer gets TK_EINVAL (it does not block, even from a
 * waiting call) and changes nothing; so does a NULL node to offer() and a
 * NULL predicate to remove_if(). remove() of NULL is refused with TK_EINVAL
 * or TK_ENOENT (queue.h does not say which; both leave the queue alone).
 * peek() takes NULL for either output. */
static void every_operation_refuses_a_null_output_and_changes_nothing(qc *t) {
    const tk_queue_ops *ops = t->ops;
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 2);
    int64_t now = tk_clock_now_ns();
    qc_key(&n[0], now - QC_MS(1), 0);           /* due */
    qc_key(&n[1], now + 3600 * TK_NS_PER_S, 1); /* not due */
    qc_offer(t, q, &n[0]);
    qc_offer(t, q, &n[1]);
    assert_int_equal(ops->offer(q, NULL), TK_EINVAL);
    assert_int_equal(ops->take(q, NULL), TK_EINVAL);
    assert_int_equal(ops->poll(q, 0, NULL), TK_EINVAL);
    int64_t t0 = tk_clock_now_ns();
    assert_int_equal(ops->poll(q, 3600 * TK_NS_PER_S, NULL), TK_EINVAL);
    assert_true(tk_clock_now_ns() - t0 < QC_WAIT); /* did not wait for the hour */
    assert_int_equal(ops->remove_first(q, NULL), TK_EINVAL);
    assert_int_equal(ops->remove(q, NULL), TK_EINVAL);
    assert_null(ops->remove_if(q, NULL, NULL));
    assert_int_equal(ops->size(q), 2);
    QC_CHECK(t, q);

    int64_t d = 0;
    uint64_t s = 99;
    assert_int_equal(ops->peek(q, NULL, NULL), TK_OK);
    assert_int_equal(ops->peek(q, &d, NULL), TK_OK);
    assert_int_equal(d, n[0].node.deadline_ns);
    assert_int_equal(ops->peek(q, NULL, &s), TK_OK);
    assert_int_equal(s, 0);

    /* both nodes are still there, the due one first */
    tk_node *x = NULL;
    assert_int_equal(ops->poll(q, QC_WAIT, &x), TK_OK);
    assert_ptr_equal(x, &n[0].node);
    assert_int_equal(ops->size(q), 1);
    tk_node *l = ops->drain(q);
    assert_ptr_equal(l, &n[1].node);
    assert_null(tk_node_next_detached(l));
    assert_int_equal(ops->peek(q, NULL, NULL), TK_ENOENT);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* ---- the allocator ------------------------------------------------------------------------- */

/* A thread-safe allocator that counts, checks that each free names the size
 * its block was allocated with, and can fail its n-th call. */
typedef struct counting {
    tk_allocator iface;
    atomic_long calls, allocs, frees, bad_frees;
    atomic_llong live;
    long fail_at; /* 1-based call number to fail; 0: never. Set before use. */
} counting;

#define HEADER _Alignof(max_align_t)

static void *counting_alloc(void *ctx, size_t size) {
    counting *c = ctx;
    long call = atomic_fetch_add(&c->calls, 1) + 1;
    if (c->fail_at != 0 && call == c->fail_at)
        return NULL;
    unsigned char *p = malloc(size + HEADER);
    if (p == NULL)
        return NULL;
    memcpy(p, &size, sizeof(size));
    atomic_fetch_add(&c->allocs, 1);
    atomic_fetch_add(&c->live, (long long)size);
    return p + HEADER;
}

static void counting_free(void *ctx, void *ptr, size_t size) {
    counting *c = ctx;
    unsigned char *p = (unsigned char *)ptr - HEADER;
    size_t was;
    memcpy(&was, p, sizeof(was));
    if (was != size)
        atomic_fetch_add(&c->bad_frees, 1);
    atomic_fetch_add(&c->frees, 1);
    atomic_fetch_sub(&c->live, (long long)was);
    free(p);
}

static counting *counting_new(qc *t, long fail_at) {
    counting *c = qc_alloc(t, 1, sizeof(*c));
    c->iface = (tk_allocator){counting_alloc, counting_free, c};
    c->fail_at = fail_at;
    return c;
}

/* create() fails its first, second, ... allocation in turn: each time it
 * answers TK_ENOMEM and leaves nothing allocated, until it needs no more
 * allocations than the one failed. */
static void create_reports_enomem_for_each_failed_allocation_and_leaks_nothing(qc *t) {
    long k;
    for (k = 1; k <= 64; k++) {
        counting *c = counting_new(t, k);
        tk_queue_config cfg;
        qc_config(t, &cfg);
        cfg.allocator = &c->iface;
        tk_queue *q = NULL;
        int rc = qc_create(t, &cfg, true, &q);
        if (rc == TK_OK) {
            assert_true(atomic_load(&c->calls) < k); /* it never reached the failing call */
            assert_true(atomic_load(&c->allocs) >= 1);
            qc_destroy(t, q);
            assert_int_equal(atomic_load(&c->live), 0);
            break;
        }
        if (rc != TK_ENOMEM)
            fail_msg("allocation %ld failed: create answered %s, not TK_ENOMEM", k,
                     tk_status_name(rc));
        assert_int_equal(atomic_load(&c->live), 0);
        assert_int_equal(atomic_load(&c->allocs), atomic_load(&c->frees));
        assert_int_equal(atomic_load(&c->bad_frees), 0);
    }
    assert_true(k > 1); /* a queue needs memory: the first failure was felt */
    assert_true(k <= 64);
    print_message("  create makes %ld allocation(s)\n", k - 1);
}

/* A queue takes every byte from the configured allocator, frees each block
 * with the size it was allocated with, and gives everything back by
 * destroy(), after offers, takes, removals and a drain. */
static void a_queue_uses_only_the_configured_allocator_and_frees_it_all(qc *t) {
    counting *c = counting_new(t, 0);
    tk_queue_config cfg;
    qc_config(t, &cfg);
    cfg.allocator = &c->iface;
    tk_queue *q = qc_queue(t, &cfg);
    assert_true(atomic_load(&c->allocs) >= 1);
    size_t N = (size_t)qc_scaled(4000);
    qc_node *n = qc_nodes(t, N);
    int64_t now = tk_clock_now_ns();
    for (size_t i = 0; i < N; i++) {
        qc_key(&n[i], i % 4 == 0 ? now - 1 : now + 3600 * TK_NS_PER_S + (int64_t)i, i);
        qc_offer(t, q, &n[i]);
    }
    size_t due = 0, removed = 0;
    for (size_t i = 0; i < N; i++) {
        due += i % 4 == 0;
        if (i % 4 == 1) {
            qc_remove_queued(t, q, &n[i]);
            removed++;
        }
    }
    for (size_t i = 0; i < due; i++) {
        tk_node *x = NULL;
        assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
        assert_true(QC_NODE(x)->idx % 4 == 0);
    }
    assert_int_equal(qc_list_take(t->ops->drain(q)), N - due - removed);
    QC_CHECK(t, q);
    qc_destroy(t, q);
    assert_int_equal(atomic_load(&c->live), 0);
    assert_int_equal(atomic_load(&c->allocs), atomic_load(&c->frees));
    assert_int_equal(atomic_load(&c->bad_frees), 0);
    print_message("  %ld allocations for %zu nodes\n", atomic_load(&c->allocs), N);
}

QC_TABLE(api,
         {"create with a NULL, zeroed or unnamed config uses the engine's defaults",
          create_with_a_null_zero_or_unnamed_config_uses_the_defaults, 0},
         {"create refuses a NULL out pointer and a config of another engine",
          create_refuses_a_null_out_and_another_engines_config, 0},
         {"create refuses each parameter outside its table's range",
          create_refuses_a_parameter_outside_its_tables_range, 0},
         {"every operation refuses a NULL queue", every_operation_refuses_a_null_queue, 0},
         {"every operation refuses a NULL output and changes nothing",
          every_operation_refuses_a_null_output_and_changes_nothing, 0},
         {"create answers TK_ENOMEM for each failed allocation and leaks nothing",
          create_reports_enomem_for_each_failed_allocation_and_leaks_nothing, 0},
         {"a queue allocates only through the configured allocator and frees it all",
          a_queue_uses_only_the_configured_allocator_and_frees_it_all, 0}, );
