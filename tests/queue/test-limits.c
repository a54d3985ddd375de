/* SPDX-License-Identifier: MIT */
/* Queue contract: the pending limit (TK_QUEUE_CAP_BOUNDED) and spinning
 * (spin_ns, for engines whose table has the key "spin"). */
#define _GNU_SOURCE
#include <string.h>

#include "queue-contract.h"

/* ---- max_pending ------------------------------------------------------------------- */

static tk_queue *bounded_queue(qc *t, size_t max_pending) {
    tk_queue_config cfg;
    qc_config(t, &cfg);
    cfg.max_pending = max_pending;
    return qc_queue(t, &cfg);
}

/* With max_pending = 3, a fourth offer answers TK_EFULL and the caller keeps
 * the node (the queue never took it in); a node that leaves by any way
 * (remove, take, remove_first, drain) makes room for one more. */
static void offer_past_max_pending_answers_efull_until_a_node_leaves(qc *t) {
    tk_queue *q = bounded_queue(t, 3);
    qc_node *n = qc_nodes(t, 8);
    int64_t now = tk_clock_now_ns();
    int64_t far = now + 3600 * TK_NS_PER_S;
    qc_key(&n[0], now - 1, 0); /* due */
    for (int i = 1; i < 8; i++)
        qc_key(&n[i], far + i, (uint64_t)i);
    for (int i = 0; i < 3; i++)
        qc_offer(t, q, &n[i]);
    assert_int_equal(t->ops->offer(q, &n[3].node), TK_EFULL);
    assert_int_equal(t->ops->size(q), 3);
    assert_int_equal(t->ops->remove(q, &n[3].node), TK_ENOENT); /* the caller kept it */

    qc_remove_queued(t, q, &n[1]); /* removal, in progress or not, makes room */
    qc_offer(t, q, &n[3]);
    assert_int_equal(t->ops->offer(q, &n[4].node), TK_EFULL);

    tk_node *x = NULL;
    assert_int_equal(t->ops->take(q, &x), TK_OK); /* the due one */
    assert_ptr_equal(x, &n[0].node);
    qc_offer(t, q, &n[4]);
    assert_int_equal(t->ops->offer(q, &n[5].node), TK_EFULL);

    assert_int_equal(t->ops->remove_first(q, &x), TK_OK);
    qc_offer(t, q, &n[5]);
    assert_int_equal(t->ops->offer(q, &n[6].node), TK_EFULL);
    assert_int_equal(t->ops->size(q), 3);
    QC_CHECK(t, q);

    assert_int_equal(qc_list_len(t->ops->drain(q), NULL), 3);
    for (int i = 6; i < 8; i++)
        qc_offer(t, q, &n[i]);
    assert_int_equal(t->ops->size(q), 2);
}

typedef struct bound_arg {
    const tk_queue_ops *ops;
    tk_queue *q;
    qc_node *nodes;
    size_t n;
    long ok, full, other; /* written by the thread, read after the join */
} bound_arg;

static void *bound_offerer(void *arg) {
    bound_arg *b = arg;
    for (size_t i = 0; i < b->n; i++) {
        int rc = b->ops->offer(b->q, &b->nodes[i].node);
        b->ok += rc == TK_OK;
        b->full += rc == TK_EFULL;
        b->other += rc != TK_OK && rc != TK_EFULL;
    }
    return NULL;
}

/* Four threads offer 4 x LIMIT nodes far ahead at once into a queue with
 * max_pending = LIMIT: exactly LIMIT offers succeed, never more. */
static void concurrent_offers_never_exceed_max_pending(qc *t) {
    enum { W = 4 };
    size_t limit = (size_t)qc_scaled(400);
    tk_queue *q = bounded_queue(t, limit);
    bound_arg *b = qc_alloc(t, W, sizeof(*b));
    size_t h[W];
    int64_t far = tk_clock_now_ns() + 3600 * TK_NS_PER_S;
    for (int w = 0; w < W; w++) {
        b[w] = (bound_arg){.ops = t->ops, .q = q, .nodes = qc_nodes(t, limit), .n = limit};
        for (size_t i = 0; i < limit; i++)
            qc_key(&b[w].nodes[i], far + (int64_t)i, (uint64_t)w * limit + i);
    }
    for (int w = 0; w < W; w++)
        h[w] = qc_thread(t, bound_offerer, &b[w]);
    for (int w = 0; w < W; w++)
        qc_join(t, h[w]);
    long ok = 0, full = 0;
    for (int w = 0; w < W; w++) {
        assert_int_equal(b[w].other, 0);
        ok += b[w].ok;
        full += b[w].full;
    }
    assert_int_equal(ok, (long)limit);
    assert_int_equal(full, (long)((W - 1) * limit));
    assert_int_equal(t->ops->size(q), limit);
    QC_CHECK(t, q);
    assert_int_equal(qc_list_len(t->ops->drain(q), NULL), limit);
}

/* ---- spin_ns ---------------------------------------------------------------------------- */

static tk_queue *spinning_queue(qc *t, int64_t spin_ns) {
    tk_queue_config cfg;
    qc_config(t, &cfg);
    assert_int_equal(tk_queue_config_set_value(&cfg, "spin", spin_ns), TK_OK);
    assert_int_equal(cfg.spin_ns, spin_ns);
    return qc_queue(t, &cfg);
}

/* A queue that spins the last 5 ms before each deadline hands out nodes 2 ms
 * apart (each inside the spin window of the one before) through take(),
 * poll() and take_batch(): none early, in order. */
static void a_spinning_queue_never_hands_out_a_node_before_its_deadline(qc *t) {
    tk_queue *q = spinning_queue(t, QC_MS(5));
    enum { K = 20 };
    qc_node *n = qc_nodes(t, 2 * K);
    for (int round = 0; round < 2; round++) {
        if (round == 1 && !t->eng->batch)
            break;
        qc_node *m = &n[round * K];
        int64_t base = tk_clock_now_ns() + qc_lead(10);
        for (int i = 0; i < K; i++) {
            qc_key(&m[i], base + (int64_t)i * QC_MS(2), (uint64_t)i);
            qc_offer(t, q, &m[i]);
        }
        bool strict = t->eng->exact || tk_clock_now_ns() < base - qc_lead(5);
        int got = 0, early = 0, wrong = 0;
        while (got < K) {
            tk_node *l = NULL;
            size_t k = 1;
            if (round == 1)
                assert_int_equal(t->ops->take_batch(q, 3, &l, &k), TK_OK);
            else if (got % 2)
                assert_int_equal(t->ops->poll(q, QC_WAIT, &l), TK_OK);
            else
                assert_int_equal(t->ops->take(q, &l), TK_OK);
            int64_t at = tk_clock_now_ns();
            assert_true(k >= 1 && k <= 3);
            for (size_t i = 0; i < k; i++, l = i < k ? tk_node_next_detached(l) : NULL) {
                early += at < l->deadline_ns;
                wrong += got >= K || l != &m[got].node;
                got++;
            }
        }
        assert_int_equal(got, K);
        assert_int_equal(early, 0);
        if (strict)
            assert_int_equal(wrong, 0);
        assert_int_equal(t->ops->size(q), 0);
    }
    QC_CHECK(t, q);
}

/* While the queue spins towards a node 800 ms ahead (spin_ns = 1 s), a node
 * offered to fall due in 30 ms is handed out at its own deadline, before the
 * far one's. */
static void a_node_offered_during_a_spin_for_a_later_one_leaves_first(qc *t) {
    tk_queue *q = spinning_queue(t, TK_NS_PER_S);
    qc_node *n = qc_nodes(t, 2);
    qc_key(&n[0], tk_clock_now_ns() + QC_MS(800), 0);
    qc_offer(t, q, &n[0]);
    qc_taker *k = qc_taker_start(t, q, QC_POLL, QC_WAIT);
    qc_sleep_ns(QC_MS(30)); /* spinning for n[0] by now (inside the 1 s window) */
    qc_key(&n[1], tk_clock_now_ns() + QC_MS(30), 1);
    qc_offer(t, q, &n[1]);
    qc_taker_join(t, k);
    assert_int_equal(k->rc, TK_OK);
    assert_ptr_equal(k->got, &n[1].node);
    assert_true(k->returned_ns >= n[1].node.deadline_ns);
    assert_true(k->returned_ns < n[0].node.deadline_ns);
    qc_remove_queued(t, q, &n[0]);
}

/* close(NOW) releases a taker of a queue spinning towards a node 900 ms
 * ahead (spin_ns = 1 s) before that node falls due. */
static void closing_now_releases_a_taker_of_a_spinning_queue(qc *t) {
    tk_queue *q = spinning_queue(t, TK_NS_PER_S);
    qc_node *n = qc_nodes(t, 1);
    qc_key(n, tk_clock_now_ns() + QC_MS(900), 0);
    qc_offer(t, q, n);
    qc_taker *k = qc_taker_start(t, q, QC_TAKE, 0);
    qc_sleep_ns(QC_MS(30));
    t->ops->close(q, TK_QUEUE_CLOSE_NOW);
    qc_taker_join(t, k);
    assert_int_equal(k->rc, TK_ECLOSED);
    assert_true(k->returned_ns < n->node.deadline_ns);
    assert_int_equal(t->ops->size(q), 1);
    assert_ptr_equal(t->ops->drain(q), &n->node);
}

QC_TABLE(limits,
         {"offer past max_pending answers TK_EFULL until a node leaves",
          offer_past_max_pending_answers_efull_until_a_node_leaves, QC_NEEDS_BOUNDED},
         {"concurrent offers never exceed max_pending", concurrent_offers_never_exceed_max_pending,
          QC_NEEDS_BOUNDED},
         {"a spinning queue never hands out a node before its deadline",
          a_spinning_queue_never_hands_out_a_node_before_its_deadline, QC_NEEDS_SPIN},
         {"a node offered while the queue spins for a later one leaves first",
          a_node_offered_during_a_spin_for_a_later_one_leaves_first, QC_NEEDS_SPIN},
         {"closing NOW releases a taker of a spinning queue at once",
          closing_now_releases_a_taker_of_a_spinning_queue, QC_NEEDS_SPIN}, );
