/* SPDX-License-Identifier: MIT */
/* Queue contract: close() in its two modes, and the takers it releases. */
#define _GNU_SOURCE
#include <string.h>

#include "queue-contract.h"

/* Closed WHEN_EMPTY, take() and poll() go on handing out the nodes the queue
 * holds, each at its deadline, then answer TK_ECLOSED; offer() still works
 * and its node is handed out too. */
static void closed_when_empty_a_queue_hands_out_what_it_holds_then_ecloses(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 4);
    int64_t now = tk_clock_now_ns();
    qc_key(&n[0], now - QC_MS(1), 0);
    qc_key(&n[1], now, 1);
    qc_key(&n[2], now + qc_lead(30), 2);
    for (int i = 0; i < 3; i++)
        qc_offer(t, q, &n[i]);
    t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    for (int i = 0; i < 3; i++) {
        tk_node *got = NULL;
        assert_int_equal(i == 1 ? t->ops->poll(q, QC_WAIT, &got) : t->ops->take(q, &got), TK_OK);
        assert_true(tk_clock_now_ns() >= got->deadline_ns);
        if (t->eng->exact || i == 2) /* n[0] and n[1] were both due when offered */
            assert_ptr_equal(got, &n[i].node);
        assert_int_equal(atomic_fetch_add(&QC_NODE(got)->taken, 1), 0);
    }
    tk_node *x = NULL;
    assert_int_equal(t->ops->take(q, &x), TK_ECLOSED);
    assert_int_equal(t->ops->poll(q, QC_MS(10), &x), TK_ECLOSED);
    assert_int_equal(t->ops->poll(q, 0, &x), TK_ECLOSED);
    /* a periodic task re-queued during shutdown */
    qc_key(&n[3], tk_clock_now_ns() + QC_MS(5), 3);
    qc_offer(t, q, &n[3]);
    assert_int_equal(t->ops->size(q), 1);
    assert_int_equal(t->ops->take(q, &x), TK_OK);
    assert_ptr_equal(x, &n[3].node);
    assert_true(tk_clock_now_ns() >= n[3].node.deadline_ns);
    assert_int_equal(t->ops->poll(q, 0, &x), TK_ECLOSED);
    QC_CHECK(t, q);
}

/* Takers blocked on an empty queue (take, poll with a long timeout, and
 * take_batch where the engine has it) all return TK_ECLOSED when it is
 * closed WHEN_EMPTY. */
static void closing_when_empty_releases_takers_blocked_on_an_empty_queue(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_taker *k[4];
    int w = 0;
    k[w++] = qc_taker_start(t, q, QC_TAKE, 0);
    k[w++] = qc_taker_start(t, q, QC_TAKE, 0);
    k[w++] = qc_taker_start(t, q, QC_POLL, 3 * QC_WAIT);
    if (t->eng->batch)
        k[w++] = qc_taker_start(t, q, QC_BATCH, 8);
    qc_settle();
    qc_close_releases(t, q, TK_QUEUE_CLOSE_WHEN_EMPTY, k, w);
    for (int i = 0; i < w; i++)
        assert_null(k[i]->got);
}

/* Three takers wait for one node on a queue closed WHEN_EMPTY: one gets the
 * node at its deadline, the other two TK_ECLOSED once it is gone. */
static void closing_when_empty_releases_the_others_once_the_last_node_is_taken(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 1);
    qc_offer_due_in(t, q, n, 120);
    qc_taker *k[3];
    for (int i = 0; i < 3; i++)
        k[i] = qc_taker_start(t, q, i == 2 ? QC_POLL : QC_TAKE, 3 * QC_WAIT);
    qc_settle();
    t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    bool all = qc_wait_takers(k, 3, 3, QC_WAIT);
    for (int i = 0; i < 3; i++)
        qc_taker_join(t, k[i]);
    assert_true(all);
    int ok = 0, closed = 0;
    for (int i = 0; i < 3; i++) {
        if (k[i]->rc == TK_OK) {
            ok++;
            assert_ptr_equal(k[i]->got, &n->node);
            assert_true(k[i]->returned_ns >= n->node.deadline_ns);
        } else {
            assert_int_equal(k[i]->rc, TK_ECLOSED);
            closed++;
        }
    }
    assert_int_equal(ok, 1);
    assert_int_equal(closed, 2);
}

static bool pred_all(const tk_node *n, void *ctx) {
    (void)n;
    (void)ctx;
    return true;
}

/* Takers blocked on a queue closed WHEN_EMPTY that still holds a node far
 * ahead keep waiting; when remove(), remove_first(), drain() or remove_if()
 * empties it, they all return TK_ECLOSED. */
static void closing_when_empty_releases_takers_when_a_removal_empties_the_queue(qc *t) {
    static const char *const ways[4] = {"remove", "remove_first", "drain", "remove_if"};
    for (int way = 0; way < 4; way++) {
        tk_queue *q = qc_queue(t, NULL);
        qc_node *far = qc_nodes(t, 1);
        qc_key(far, tk_clock_now_ns() + 10 * TK_NS_PER_S, 0);
        qc_offer(t, q, far);
        qc_taker *k[2];
        k[0] = qc_taker_start(t, q, QC_TAKE, 0);
        k[1] = t->eng->batch ? qc_taker_start(t, q, QC_BATCH, 4)
                             : qc_taker_start(t, q, QC_POLL, 3 * QC_WAIT);
        qc_settle();
        t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* not empty yet: they wait on */
        qc_settle();
        int early_done = qc_takers_done(k, 2);
        int64_t emptied = tk_clock_now_ns();
        tk_node *got = NULL;
        int rc = TK_OK;
        switch (way) {
        case 0:
            rc = qc_remove_queued(t, q, far);
            got = &far->node;
            break;
        case 1:
            rc = t->ops->remove_first(q, &got);
            break;
        case 2:
            got = t->ops->drain(q);
            break;
        default:
            got = t->ops->remove_if(q, pred_all, NULL);
            break;
        }
        bool all = qc_wait_takers(k, 2, 2, QC_WAIT);
        for (int i = 0; i < 2; i++)
            qc_taker_join(t, k[i]);
        if (early_done != 0)
            fail_msg("%s: a taker returned before the queue was empty", ways[way]);
        if (!all)
            fail_msg("%s: the takers were not released", ways[way]);
        assert_true(rc == TK_OK || rc == TK_EINPROGRESS);
        assert_ptr_equal(got, &far->node);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(k[i]->rc, TK_ECLOSED);
            assert_true(k[i]->returned_ns >= emptied);
        }
        assert_int_equal(t->ops->size(q), 0);
        qc_destroy(t, q);
    }
}

/* Closed NOW: blocked takers return TK_ECLOSED at once, and so do take(),
 * poll() and take_batch() called later, even with a due node queued;
 * offer() answers TK_ECLOSED (the caller keeps the node); the nodes stay
 * queued, counted by size(), until drain() hands them back in order. */
static void closed_now_the_queue_answers_eclosed_at_once_and_keeps_its_nodes(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 5);
    int64_t now = tk_clock_now_ns();
    qc_key(&n[0], now + 10 * TK_NS_PER_S, 0); /* far */
    qc_key(&n[1], now - QC_MS(2), 1);         /* due */
    qc_key(&n[2], now - QC_MS(1), 2);         /* due */
    qc_offer(t, q, &n[0]);
    qc_taker *k[3];
    int w = 0;
    k[w++] = qc_taker_start(t, q, QC_TAKE, 0);
    k[w++] = qc_taker_start(t, q, QC_POLL, 3 * QC_WAIT);
    if (t->eng->batch)
        k[w++] = qc_taker_start(t, q, QC_BATCH, 8);
    qc_settle();
    qc_close_releases(t, q, TK_QUEUE_CLOSE_NOW, k, w);
    for (int i = 0; i < w; i++)
        assert_true(k[i]->returned_ns < n[0].node.deadline_ns);
    assert_int_equal(t->ops->offer(q, &n[3].node), TK_ECLOSED);
    assert_int_equal(t->ops->remove(q, &n[3].node), TK_ENOENT); /* never taken in */
    assert_int_equal(t->ops->size(q), 1);
    QC_CHECK(t, q);
    tk_node *l = t->ops->drain(q);
    assert_ptr_equal(l, &n[0].node);
    assert_null(tk_node_next_detached(l));

    /* a second queue, with due nodes: the first is handed out (so the engine
     * has them), the other stays once the queue is closed NOW */
    q = qc_queue(t, NULL);
    qc_offer(t, q, &n[1]);
    qc_offer(t, q, &n[2]);
    tk_node *x = NULL;
    assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
    tk_node *left = x == &n[1].node ? &n[2].node : &n[1].node;
    qc_settle();
    t->ops->close(q, TK_QUEUE_CLOSE_NOW);
    assert_int_equal(t->ops->take(q, &x), TK_ECLOSED);
    assert_int_equal(t->ops->poll(q, 0, &x), TK_ECLOSED);
    assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_ECLOSED);
    if (t->eng->batch) {
        size_t cnt = 9;
        x = &n[4].node;
        assert_int_equal(t->ops->take_batch(q, 8, &x, &cnt), TK_ECLOSED);
        assert_null(x);
        assert_int_equal(cnt, 0);
    }
    assert_int_equal(t->ops->offer(q, &n[4].node), TK_ECLOSED);
    assert_int_equal(t->ops->size(q), 1);
    QC_CHECK(t, q);
    l = t->ops->drain(q);
    assert_ptr_equal(l, left);
    assert_null(tk_node_next_detached(l));
    assert_int_equal(t->ops->size(q), 0);
}

/* close(NOW) may follow close(WHEN_EMPTY); WHEN_EMPTY after NOW is ignored,
 * and so is a mode that is neither. */
static void close_now_may_follow_when_empty_and_the_rest_is_ignored(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 2);
    qc_key(&n[0], tk_clock_now_ns() + 3600 * TK_NS_PER_S, 0);
    t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    qc_offer(t, q, &n[0]); /* still accepted */
    t->ops->close(q, TK_QUEUE_CLOSE_NOW);
    assert_int_equal(t->ops->offer(q, &n[1].node), TK_ECLOSED);
    t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* ignored: still NOW */
    assert_int_equal(t->ops->offer(q, &n[1].node), TK_ECLOSED);
    tk_node *x = NULL;
    assert_int_equal(t->ops->poll(q, 0, &x), TK_ECLOSED);
    t->ops->close(q, (tk_queue_close_mode)42); /* unknown: ignored */
    assert_int_equal(t->ops->offer(q, &n[1].node), TK_ECLOSED);
    QC_CHECK(t, q);
    assert_int_equal(qc_list_len(t->ops->drain(q), NULL), 1);

    /* an unknown mode on an open queue leaves it open */
    q = qc_queue(t, NULL);
    t->ops->close(q, (tk_queue_close_mode)42);
    t->ops->close(q, (tk_queue_close_mode)0);
    qc_key(&n[1], tk_clock_now_ns() - 1, 1);
    qc_offer(t, q, &n[1]);
    assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
    assert_ptr_equal(x, &n[1].node);
    assert_int_equal(t->ops->poll(q, 0, &x), TK_ETIMEDOUT); /* not closed */
    QC_CHECK(t, q);
}

/* Takers waiting for a node at the end of time (take, and poll with an
 * INT64_MAX timeout) keep waiting through close(WHEN_EMPTY), since the queue
 * is not empty, and return TK_ECLOSED at close(NOW). */
static void takers_waiting_for_the_end_of_time_are_released_by_close(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 1);
    qc_key(n, INT64_MAX, 0);
    qc_offer(t, q, n);
    qc_taker *k[3];
    int w = 0;
    k[w++] = qc_taker_start(t, q, QC_TAKE, 0);
    k[w++] = qc_taker_start(t, q, QC_POLL, INT64_MAX);
    if (t->eng->batch)
        k[w++] = qc_taker_start(t, q, QC_BATCH, 4);
    qc_settle();
    t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    qc_settle();
    int early_done = qc_takers_done(k, w);
    t->ops->close(q, TK_QUEUE_CLOSE_NOW);
    bool all = qc_wait_takers(k, w, w, QC_WAIT);
    for (int i = 0; i < w; i++)
        qc_taker_join(t, k[i]);
    assert_int_equal(early_done, 0);
    assert_true(all);
    for (int i = 0; i < w; i++)
        assert_int_equal(k[i]->rc, TK_ECLOSED);
    assert_int_equal(t->ops->size(q), 1);
    assert_ptr_equal(t->ops->drain(q), &n->node);
}

QC_TABLE(close,
         {"closed WHEN_EMPTY, a queue hands out what it holds, then answers TK_ECLOSED",
          closed_when_empty_a_queue_hands_out_what_it_holds_then_ecloses, 0},
         {"closing WHEN_EMPTY releases takers blocked on an empty queue",
          closing_when_empty_releases_takers_blocked_on_an_empty_queue, 0},
         {"closing WHEN_EMPTY releases the other takers once the last node is taken",
          closing_when_empty_releases_the_others_once_the_last_node_is_taken, 0},
         {"closing WHEN_EMPTY releases takers when a removal empties the queue",
          closing_when_empty_releases_takers_when_a_removal_empties_the_queue, 0},
         {"closed NOW, a queue answers TK_ECLOSED at once and keeps its nodes",
          closed_now_the_queue_answers_eclosed_at_once_and_keeps_its_nodes, 0},
         {"close NOW may follow WHEN_EMPTY; the reverse and unknown modes are ignored",
          close_now_may_follow_when_empty_and_the_rest_is_ignored, 0},
         {"takers waiting for the end of time are released by close NOW",
          takers_waiting_for_the_end_of_time_are_released_by_close, 0}, );
