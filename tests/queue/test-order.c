/* SPDX-License-Identifier: MIT */
/* Queue contract: never early, (deadline, seq) order, the ends of time,
 * blocked takers, and poll()'s timeouts. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "queue-contract.h"

static int cmp_node_ptr(const void *a, const void *b) {
    const tk_node *x = *(tk_node *const *)a, *y = *(tk_node *const *)b;
    return qc_before(x, y) ? -1 : qc_before(y, x) ? 1 : 0;
}

/* Whether a case that offered every node before `first_deadline` may check
 * the order of an engine without TK_QUEUE_CAP_EXACT_ORDER: only nodes that
 * were not yet due when offered are promised their order there, so the
 * offers must have ended before the first deadline, with a margin for the
 * engine to take them in (docs/design.md, "Order"). */
static bool order_promised(qc *t, int64_t offers_done, int64_t first_deadline) {
    return t->eng->exact || offers_done < first_deadline - qc_lead(20);
}

/* ---- never early ------------------------------------------------------------------- */

/* Nodes due from 5 ms ago to 30 ms ahead leave through take() and poll(),
 * each no earlier than its deadline on tk_clock_now_ns(), each once; an
 * exact engine hands them out in (deadline, seq) order. A node handed out
 * may be offered again and comes back. */
static void take_and_poll_never_hand_out_a_node_before_its_deadline(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { K = 12 };
    const int64_t offsets_ms[K] = {30, 5, 20, 10, 0, -5, 25, 15, 1, 2, 12, 7};
    qc_node *n = qc_nodes(t, K);
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < K; i++) {
        qc_key(&n[i], now + QC_MS(offsets_ms[i]), (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    tk_node *prev = NULL;
    for (int i = 0; i < K; i++) {
        tk_node *got = NULL;
        if (i % 2 == 0)
            assert_int_equal(t->ops->take(q, &got), TK_OK);
        else
            assert_int_equal(t->ops->poll(q, QC_WAIT, &got), TK_OK);
        int64_t at = tk_clock_now_ns();
        assert_non_null(got);
        if (at < got->deadline_ns)
            fail_msg("node %zu handed out %lld ns before its deadline", QC_NODE(got)->idx,
                     (long long)(got->deadline_ns - at));
        assert_int_equal(atomic_fetch_add(&QC_NODE(got)->taken, 1), 0);
        if (t->eng->exact && prev != NULL)
            assert_true(qc_before(prev, got));
        prev = got;
        QC_CHECK(t, q);
    }
    assert_int_equal(t->ops->size(q), 0);
    /* handed back, a node may be offered again */
    qc_key(&n[3], tk_clock_now_ns() + QC_MS(5), 100);
    qc_offer(t, q, &n[3]);
    tk_node *got = NULL;
    assert_int_equal(t->ops->poll(q, QC_WAIT, &got), TK_OK);
    assert_ptr_equal(got, &n[3].node);
    assert_true(tk_clock_now_ns() >= n[3].node.deadline_ns);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* ---- order --------------------------------------------------------------------------- */

/* Hundreds of nodes offered ahead of their deadlines, keys scrambled, many
 * deadlines equal and seq unrelated to the offer order, leave one by one in
 * exact (deadline, seq) order on every engine, none early. */
static void nodes_offered_ahead_leave_in_deadline_seq_order(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    size_t N = qc_scaled_at_least(400, 50);
    qc_node *n = qc_nodes(t, N);
    tk_node **ref = qc_alloc(t, N, sizeof(*ref));
    int64_t base = tk_clock_now_ns() + qc_lead(60);
    uint64_t rs = 12345;
    for (size_t i = 0; i < N; i++) {
        qc_lcg_next(&rs);
        uint64_t r = rs >> 33;
        /* over 50 ms, many equal deadlines and many a fraction of a ms apart */
        int64_t off = (int64_t)(r % 25) * QC_MS(2) + (int64_t)((r >> 8) % 3) * 333333;
        qc_key(&n[i], base + off, (uint64_t)((i * 7919) % N));
        ref[i] = &n[i].node;
    }
    for (size_t i = 0; i < N; i++)
        qc_offer(t, q, &n[i]);
    bool strict = order_promised(t, tk_clock_now_ns(), base);
    assert_int_equal(t->ops->size(q), N);
    QC_CHECK(t, q);
    qsort(ref, N, sizeof(*ref), cmp_node_ptr);
    size_t early = 0, wrong = 0;
    for (size_t i = 0; i < N; i++) {
        tk_node *got = NULL;
        assert_int_equal(t->ops->take(q, &got), TK_OK);
        early += tk_clock_now_ns() < got->deadline_ns;
        wrong += got != ref[i];
        assert_int_equal(atomic_fetch_add(&QC_NODE(got)->taken, 1), 0);
    }
    assert_int_equal(early, 0);
    if (strict)
        assert_int_equal(wrong, 0);
    else
        print_message("  the offers overran the first deadline: order not checked\n");
    tk_node *x = NULL;
    assert_int_equal(t->ops->poll(q, 0, &x), TK_ETIMEDOUT);
    QC_CHECK(t, q);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* Nodes with one deadline, offered in reverse seq order, leave in seq order
 * (first in, first out by seq). */
static void equal_deadlines_leave_in_seq_order(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { N = 64 };
    qc_node *n = qc_nodes(t, N);
    int64_t when = tk_clock_now_ns() + qc_lead(30);
    for (int i = N - 1; i >= 0; i--) {
        qc_key(&n[i], when, (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    bool strict = order_promised(t, tk_clock_now_ns(), when);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        tk_node *got = NULL;
        assert_int_equal(t->ops->take(q, &got), TK_OK);
        assert_true(tk_clock_now_ns() >= when);
        wrong += got != &n[i].node;
    }
    if (strict)
        assert_int_equal(wrong, 0);
    else
        print_message("  the offers overran the deadline: order not checked\n");
    assert_int_equal(t->ops->size(q), 0);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* An exact engine keeps (deadline, seq) order also among nodes that were
 * due before they were offered: scrambled past deadlines, ties among them,
 * seq unrelated to the offer order. */
static void nodes_already_due_leave_in_exact_order(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { N = 200 };
    qc_node *n = qc_nodes(t, N);
    tk_node *ref[N];
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < N; i++) {
        qc_key(&n[i], now - QC_MS(1) - (int64_t)((i * 37) % 23) * 1000, (uint64_t)((i * 7919) % N));
        ref[i] = &n[i].node;
        qc_offer(t, q, &n[i]);
    }
    qsort(ref, N, sizeof(ref[0]), cmp_node_ptr);
    for (int i = 0; i < N; i++) {
        tk_node *got = NULL;
        assert_int_equal(i % 2 ? t->ops->poll(q, QC_WAIT, &got) : t->ops->take(q, &got), TK_OK);
        assert_ptr_equal(got, ref[i]);
    }
    assert_int_equal(qc_destroy(t, q), 0);
}

/* ---- the ends of time ------------------------------------------------------------------ */

/* A deadline of INT64_MIN or a second ago is due at once; INT64_MAX never
 * falls due, yet peek(), remove_first() and remove() reach it. */
static void a_deadline_far_in_the_past_is_due_and_int64_max_never_is(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 4);
    qc_key(&n[0], INT64_MIN, 3);
    qc_key(&n[1], tk_clock_now_ns() - TK_NS_PER_S, 2);
    qc_key(&n[2], INT64_MAX, 1);
    qc_key(&n[3], INT64_MAX, 0);
    for (int i = 0; i < 4; i++)
        qc_offer(t, q, &n[i]);
    tk_node *a = NULL, *b = NULL;
    assert_int_equal(t->ops->poll(q, QC_WAIT, &a), TK_OK);
    assert_int_equal(t->ops->poll(q, QC_WAIT, &b), TK_OK);
    if (t->eng->exact) {
        assert_ptr_equal(a, &n[0].node);
        assert_ptr_equal(b, &n[1].node);
    } else { /* both were due when offered: either may go first */
        assert_true((a == &n[0].node && b == &n[1].node) || (a == &n[1].node && b == &n[0].node));
    }
    tk_node *x = NULL;
    assert_int_equal(t->ops->poll(q, qc_lead(20), &x), TK_ETIMEDOUT);
    assert_int_equal(t->ops->size(q), 2);
    int64_t d = 0;
    uint64_t s = 99;
    assert_int_equal(t->ops->peek(q, &d, &s), TK_OK);
    assert_true(d == INT64_MAX && s == 0);
    QC_CHECK(t, q);
    assert_int_equal(t->ops->remove_first(q, &x), TK_OK);
    assert_ptr_equal(x, &n[3].node);
    qc_remove_queued(t, q, &n[2]);
    assert_int_equal(t->ops->remove(q, &n[2].node), TK_ENOENT);
    assert_int_equal(t->ops->size(q), 0);
    assert_int_equal(t->ops->peek(q, &d, &s), TK_ENOENT);
    QC_CHECK(t, q);
    long released = qc_destroy(t, q);
    assert_int_equal(released, atomic_load(&n[2].released));
    assert_true(released == 1 - atomic_load(&n[2].removed));
}

/* ---- blocked takers ---------------------------------------------------------------------- */

/* Four takers (take and poll) blocked on an empty queue: a node due at once
 * wakes exactly one of them, the others keep waiting; three more nodes, due
 * a little later, go one to each; none leaves early, none twice. */
static void blocked_takers_each_get_exactly_one_node_none_early(qc *t) {
    enum { W = 4 };
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, W);
    qc_taker *k[W];
    for (int i = 0; i < W; i++)
        k[i] = qc_taker_start(t, q, i % 2 ? QC_POLL : QC_TAKE, 3 * QC_WAIT);
    qc_settle();
    assert_int_equal(qc_takers_done(k, W), 0);

    qc_key(&n[0], tk_clock_now_ns() - 1, 0);
    qc_offer(t, q, &n[0]);
    assert_true(qc_wait_takers(k, W, 1, QC_WAIT));
    qc_settle();
    assert_int_equal(qc_takers_done(k, W), 1); /* one node, one taker */

    int64_t now = tk_clock_now_ns();
    const int64_t after_ms[W - 1] = {30, 10, 20};
    for (int i = 1; i < W; i++) {
        qc_key(&n[i], now + qc_lead(after_ms[i - 1]), (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    for (int i = 0; i < W; i++)
        qc_taker_join(t, k[i]);
    int seen[W] = {0};
    for (int i = 0; i < W; i++) {
        assert_int_equal(k[i]->rc, TK_OK);
        assert_non_null(k[i]->got);
        assert_true(k[i]->returned_ns >= k[i]->got->deadline_ns);
        seen[QC_NODE(k[i]->got)->idx]++;
    }
    for (int i = 0; i < W; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(t->ops->size(q), 0);
    QC_CHECK(t, q);
}

/* Two takers wait for a node ten seconds ahead; a node offered to fall due
 * sooner is handed out at its own deadline, not after the far one's. */
static void an_earlier_offer_wakes_a_taker_waiting_for_a_later_node(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 2);
    qc_key(&n[0], tk_clock_now_ns() + 10 * TK_NS_PER_S, 0);
    qc_offer(t, q, &n[0]);
    qc_taker *k[2];
    k[0] = qc_taker_start(t, q, QC_TAKE, 0);
    qc_settle();
    k[1] = qc_taker_start(t, q, QC_TAKE, 0);
    qc_settle();
    qc_key(&n[1], tk_clock_now_ns() + qc_lead(30), 1);
    qc_offer(t, q, &n[1]);
    bool one = qc_wait_takers(k, 2, 1, QC_WAIT / 2); /* well before the far node */
    qc_remove_queued(t, q, &n[0]);
    t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* releases the other taker */
    qc_taker_join(t, k[0]);
    qc_taker_join(t, k[1]);
    assert_true(one);
    qc_taker *winner = k[0]->rc == TK_OK ? k[0] : k[1];
    qc_taker *other = winner == k[0] ? k[1] : k[0];
    assert_int_equal(winner->rc, TK_OK);
    assert_ptr_equal(winner->got, &n[1].node);
    assert_true(winner->returned_ns >= n[1].node.deadline_ns);
    assert_true(winner->returned_ns < n[0].node.deadline_ns);
    assert_int_equal(other->rc, TK_ECLOSED);
}

/* ---- poll() timeouts --------------------------------------------------------------------- */

/* poll() with a zero or negative timeout answers at once: TK_ETIMEDOUT on an
 * empty queue and on one whose node is not due. */
static void poll_with_a_zero_or_negative_timeout_does_not_wait(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    const int64_t timeouts[4] = {0, -1, -QC_MS(5), INT64_MIN};
    qc_node *n = qc_nodes(t, 1);
    int64_t t0 = tk_clock_now_ns();
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 4; i++) {
            tk_node *x = NULL;
            assert_int_equal(t->ops->poll(q, timeouts[i], &x), TK_ETIMEDOUT);
        }
        if (round == 0) {
            qc_key(n, tk_clock_now_ns() + 3600 * TK_NS_PER_S, 0);
            qc_offer(t, q, n);
        }
    }
    assert_true(tk_clock_now_ns() - t0 < QC_WAIT); /* nobody waited for the hour */
    assert_int_equal(t->ops->size(q), 1);
    tk_node *x = NULL;
    assert_int_equal(t->ops->remove_first(q, &x), TK_OK);
    assert_ptr_equal(x, &n->node);
}

/* poll() answers TK_ETIMEDOUT once its timeout has passed, not before: on an
 * empty queue, and on one whose node falls due after the timeout (the node
 * stays queued). */
static void poll_gives_up_with_etimedout_once_its_timeout_has_passed(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    tk_node *x = NULL;
    int64_t start = tk_clock_now_ns();
    assert_int_equal(t->ops->poll(q, QC_MS(30), &x), TK_ETIMEDOUT);
    assert_true(tk_clock_now_ns() - start >= QC_MS(30));

    qc_node *n = qc_nodes(t, 1);
    qc_key(n, tk_clock_now_ns() + 10 * TK_NS_PER_S, 0);
    qc_offer(t, q, n);
    start = tk_clock_now_ns();
    assert_int_equal(t->ops->poll(q, QC_MS(20), &x), TK_ETIMEDOUT);
    assert_true(tk_clock_now_ns() - start >= QC_MS(20));
    assert_int_equal(t->ops->size(q), 1);
    QC_CHECK(t, q);
    qc_remove_queued(t, q, n);
}

/* A node that falls due within poll()'s timeout is handed out, at its
 * deadline: to a poll() already waiting, and to one that starts later. */
static void poll_returns_a_node_that_falls_due_within_its_timeout(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 2);
    qc_offer_due_in(t, q, &n[0], 20);
    tk_node *got = NULL;
    assert_int_equal(t->ops->poll(q, QC_WAIT, &got), TK_OK);
    assert_ptr_equal(got, &n[0].node);
    assert_true(tk_clock_now_ns() >= n[0].node.deadline_ns);

    qc_taker *k = qc_taker_start(t, q, QC_POLL, QC_WAIT);
    qc_settle();
    qc_key(&n[1], tk_clock_now_ns() + qc_lead(20), 1);
    qc_offer(t, q, &n[1]);
    qc_taker_join(t, k);
    assert_int_equal(k->rc, TK_OK);
    assert_ptr_equal(k->got, &n[1].node);
    assert_true(k->returned_ns >= n[1].node.deadline_ns);
    assert_int_equal(t->ops->size(q), 0);
}

QC_TABLE(order,
         {"take and poll never hand out a node before its deadline",
          take_and_poll_never_hand_out_a_node_before_its_deadline, 0},
         {"nodes offered ahead of their deadlines leave in (deadline, seq) order",
          nodes_offered_ahead_leave_in_deadline_seq_order, 0},
         {"equal deadlines leave in seq order", equal_deadlines_leave_in_seq_order, 0},
         {"nodes already due when offered leave in exact (deadline, seq) order",
          nodes_already_due_leave_in_exact_order, QC_NEEDS_EXACT},
         {"a deadline far in the past is due at once and INT64_MAX never falls due",
          a_deadline_far_in_the_past_is_due_and_int64_max_never_is, 0},
         {"blocked takers each get exactly one node, none early",
          blocked_takers_each_get_exactly_one_node_none_early, 0},
         {"an earlier offer wakes a taker waiting for a later node",
          an_earlier_offer_wakes_a_taker_waiting_for_a_later_node, 0},
         {"poll with a zero or negative timeout does not wait",
          poll_with_a_zero_or_negative_timeout_does_not_wait, 0},
         {"poll gives up with TK_ETIMEDOUT once its timeout has passed",
          poll_gives_up_with_etimedout_once_its_timeout_has_passed, 0},
         {"poll returns a node that falls due within its timeout",
          poll_returns_a_node_that_falls_due_within_its_timeout, 0}, );
