/* SPDX-License-Identifier: MIT */
/* Queue contract: take_batch(), where the engine has it: statuses, never
 * early, the order of successive takes, the count, closing, ownership of
 * the nodes handed out, and the fair share between waiting takers. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "queue-contract.h"

static int cmp_node_ptr(const void *a, const void *b) {
    const tk_node *x = *(tk_node *const *)a, *y = *(tk_node *const *)b;
    return qc_before(x, y) ? -1 : qc_before(y, x) ? 1 : 0;
}

/* take_batch(q, max) with a list and a count already set (to `list` and
 * `count`) must return `want`, clear the list and set the count to 0. */
static void expect_batch_refused(qc *t, tk_queue *q, size_t max, tk_node *list, size_t count,
                                 int want) {
    tk_node *l = list;
    size_t k = count;
    assert_int_equal(t->ops->take_batch(q, max, &l, &k), want);
    assert_null(l);
    assert_int_equal(k, 0);
}

/* A NULL queue, output or count, or max 0: TK_EINVAL, *out and *count
 * cleared where given, nothing removed. */
static void take_batch_refuses_bad_arguments_clears_its_outputs_and_removes_nothing(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 2);
    qc_key(&n[0], tk_clock_now_ns() - QC_MS(1), 0);
    qc_offer(t, q, &n[0]);
    expect_batch_refused(t, NULL, 4, &n[1].node, 99, TK_EINVAL);
    expect_batch_refused(t, q, 0, &n[1].node, 99, TK_EINVAL);
    size_t k = 99;
    assert_int_equal(t->ops->take_batch(q, 4, NULL, &k), TK_EINVAL);
    assert_int_equal(k, 0);
    tk_node *l = &n[1].node;
    assert_int_equal(t->ops->take_batch(q, 4, &l, NULL), TK_EINVAL);
    assert_null(l);
    assert_int_equal(t->ops->take_batch(q, 4, NULL, NULL), TK_EINVAL);
    assert_int_equal(t->ops->size(q), 1);
    QC_CHECK(t, q);
    assert_int_equal(t->ops->take_batch(q, 4, &l, &k), TK_OK);
    assert_ptr_equal(l, &n[0].node);
    assert_int_equal(k, 1);
    assert_null(tk_node_next_detached(l));
    assert_int_equal(t->ops->size(q), 0);
}

/* Hundreds of nodes offered ahead of their deadlines (many equal) come out
 * of take_batch() each exactly once, none early, in batches of 1 to `max`
 * whose NULL-terminated lists hold `count` nodes, and together in the order
 * successive take() calls give: (deadline, seq). */
static void take_batch_hands_out_every_node_once_never_early_in_take_order(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { MAX = 5 };
    size_t N = qc_scaled_at_least(300, 50);
    qc_node *n = qc_nodes(t, N);
    tk_node **ref = qc_alloc(t, N, sizeof(*ref));
    int64_t base = tk_clock_now_ns() + qc_lead(40);
    uint64_t s = 5;
    for (size_t i = 0; i < N; i++) {
        qc_lcg_next(&s);
        /* over 40 ms, a quarter of a ms apart: many equal deadlines */
        qc_key(&n[i], base + (int64_t)((s >> 33) % 160) * 250 * TK_NS_PER_US,
               (uint64_t)((i * 7919) % N));
        ref[i] = &n[i].node;
    }
    for (size_t i = 0; i < N; i++)
        qc_offer(t, q, &n[i]);
    bool strict = t->eng->exact || tk_clock_now_ns() < base - qc_lead(20);
    qsort(ref, N, sizeof(*ref), cmp_node_ptr);
    size_t got = 0, batches = 0, early = 0, unsorted = 0, wrong = 0;
    while (got < N) {
        tk_node *l = NULL;
        size_t k = 0;
        assert_int_equal(t->ops->take_batch(q, MAX, &l, &k), TK_OK);
        int64_t at = tk_clock_now_ns();
        bool sorted = true;
        assert_true(k >= 1 && k <= MAX);
        assert_int_equal(qc_list_len(l, &sorted), k);
        unsorted += !sorted;
        for (; l != NULL; l = tk_node_next_detached(l)) {
            early += at < l->deadline_ns;
            assert_true(got < N);
            wrong += l != ref[got];
            assert_int_equal(atomic_fetch_add(&QC_NODE(l)->taken, 1), 0);
            got++;
        }
        if (++batches % 16 == 0)
            QC_CHECK(t, q);
    }
    assert_int_equal(early, 0);
    if (strict) {
        assert_int_equal(unsorted, 0);
        assert_int_equal(wrong, 0);
    } else {
        print_message("  the offers overran the first deadline: order not checked\n");
    }
    tk_node *x = NULL;
    assert_int_equal(t->ops->poll(q, 0, &x), TK_ETIMEDOUT);
    assert_int_equal(t->ops->size(q), 0);
    QC_CHECK(t, q);
}

/* One attempt of the case below: `due` nodes due at once and `later` far
 * ones, batches of `max` taken `settle_ns` after the offers. Fills sizes[]
 * with the batch sizes until the due nodes are out; false if a batch held a
 * node not yet due or one twice. */
static bool batches_of_due_nodes(qc *t, tk_queue *q, qc_node *n, size_t due, size_t later,
                                 size_t max, int64_t settle_ns, size_t *sizes, size_t *nbatches) {
    int64_t now = tk_clock_now_ns();
    for (size_t i = 0; i < due + later; i++) {
        memset(&n[i], 0, sizeof(n[i]));
        n[i].idx = i;
        qc_key(&n[i],
               i < due ? now - QC_MS(1) - (int64_t)((i * 37) % 11) : now + 3600 * TK_NS_PER_S,
               (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    qc_sleep_ns(settle_ns);
    size_t got = 0, b = 0;
    bool fine = true;
    tk_node *prev = NULL;
    while (got < due) {
        tk_node *l = NULL;
        size_t k = 0;
        assert_int_equal(t->ops->take_batch(q, max, &l, &k), TK_OK);
        int64_t at = tk_clock_now_ns();
        bool sorted = true;
        assert_int_equal(qc_list_len(l, &sorted), k);
        assert_true(k >= 1 && k <= max);
        if (t->eng->exact)
            assert_true(sorted);
        for (; l != NULL; l = tk_node_next_detached(l)) {
            fine &= l->deadline_ns <= at && QC_NODE(l)->idx < due;
            fine &= atomic_fetch_add(&QC_NODE(l)->taken, 1) == 0;
            if (t->eng->exact && prev != NULL)
                assert_true(qc_before(prev, l)); /* batches follow one another in order */
            prev = l;
        }
        sizes[b++] = k;
        got += k;
    }
    *nbatches = b;
    return fine;
}

/* With nobody else waiting, a batch holds min(max, due) nodes: `max` while
 * more are due, then the rest; never a node that is not due; SIZE_MAX is a
 * valid max. (The engine must have taken the due nodes in: the batches are
 * taken a settling time after the offers, retried with a longer one before
 * the case fails.) */
static void alone_take_batch_takes_min_of_max_and_the_due_nodes(qc *t) {
    enum { DUE = 50, LATER = 10, MAX = 20 };
    const size_t want[3] = {20, 20, 10};
    qc_node *n = qc_nodes(t, DUE + LATER);
    bool ok = false;
    for (int attempt = 0; attempt < 3 && !ok; attempt++) {
        tk_queue *q = qc_queue(t, NULL);
        size_t sizes[DUE], nb = 0;
        int64_t settle = qc_lead(20) << (2 * attempt);
        assert_true(batches_of_due_nodes(t, q, n, DUE, LATER, MAX, settle, sizes, &nb));
        ok = nb == 3 && sizes[0] == want[0] && sizes[1] == want[1] && sizes[2] == want[2];
        if (!ok)
            print_message("  attempt %d: %zu batches, the first of %zu\n", attempt, nb, sizes[0]);
        assert_int_equal(t->ops->size(q), LATER);
        tk_node *x = NULL;
        assert_int_equal(t->ops->poll(q, 0, &x), TK_ETIMEDOUT);
        QC_CHECK(t, q);
        assert_int_equal(qc_list_len(t->ops->drain(q), NULL), LATER);
        qc_destroy(t, q);
    }
    assert_true(ok);

    ok = false;
    for (int attempt = 0; attempt < 3 && !ok; attempt++) {
        tk_queue *q = qc_queue(t, NULL);
        size_t sizes[5], nb = 0;
        int64_t settle = qc_lead(20) << (2 * attempt);
        assert_true(batches_of_due_nodes(t, q, n, 5, 0, SIZE_MAX, settle, sizes, &nb));
        ok = nb == 1 && sizes[0] == 5;
        assert_int_equal(t->ops->size(q), 0);
        qc_destroy(t, q);
    }
    assert_true(ok);
}

/* take_batch() waits as take() does: for the first node's deadline, and on
 * an empty queue until nodes are offered and fall due. */
static void take_batch_blocks_until_a_node_is_due(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 5);
    qc_offer_due_in(t, q, &n[0], 40);
    tk_node *l = NULL;
    size_t k = 0;
    assert_int_equal(t->ops->take_batch(q, 16, &l, &k), TK_OK);
    assert_true(tk_clock_now_ns() >= n[0].node.deadline_ns);
    assert_ptr_equal(l, &n[0].node);
    assert_int_equal(k, 1);

    qc_taker *b = qc_taker_start(t, q, QC_BATCH, 16);
    qc_settle();
    assert_int_equal(atomic_load(&b->done), 0);
    qc_key(&n[1], tk_clock_now_ns() + qc_lead(20), 1);
    qc_offer(t, q, &n[1]);
    qc_taker_join(t, b);
    assert_int_equal(b->rc, TK_OK);
    assert_ptr_equal(b->got, &n[1].node);
    assert_int_equal(b->count, 1);
    assert_true(b->returned_ns >= n[1].node.deadline_ns);

    /* several nodes due at once for a blocked batch: one batch or more */
    b = qc_taker_start(t, q, QC_BATCH, 16);
    qc_settle();
    assert_int_equal(atomic_load(&b->done), 0);
    int64_t now = tk_clock_now_ns();
    for (int i = 2; i < 5; i++) {
        qc_key(&n[i], now - 1, (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    qc_taker_join(t, b);
    assert_int_equal(b->rc, TK_OK);
    assert_true(b->count >= 1 && b->count <= 3);
    assert_int_equal(qc_list_len(b->got, NULL), b->count);
    qc_list_take(b->got);
    for (size_t i = b->count; i < 3; i++) {
        tk_node *x = NULL;
        assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
        atomic_fetch_add(&QC_NODE(x)->taken, 1);
    }
    for (int i = 2; i < 5; i++)
        assert_int_equal(atomic_load(&n[i].taken), 1);
    assert_int_equal(t->ops->size(q), 0);
}

/* take_batch() answers TK_ECLOSED exactly when take() would: closed
 * WHEN_EMPTY once the queue holds nothing (also for batch takers blocked
 * when a removal empties it), closed NOW at once, whatever it holds; its
 * outputs are cleared and nothing is removed. */
static void take_batch_answers_eclosed_exactly_when_take_would(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 6);
    int64_t d = tk_clock_now_ns() + qc_lead(20);
    for (int i = 0; i < 3; i++) {
        qc_key(&n[i], d, (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    tk_node *l = NULL;
    size_t k = 0, total = 0;
    while (total < 3) { /* still handed out after the close, never early */
        assert_int_equal(t->ops->take_batch(q, 8, &l, &k), TK_OK);
        assert_true(tk_clock_now_ns() >= d);
        total += qc_list_take(l);
    }
    assert_int_equal(total, 3);
    expect_batch_refused(t, q, 8, &n[5].node, 9, TK_ECLOSED);

    /* blocked batch takers are released when a removal empties the queue */
    qc_key(&n[3], tk_clock_now_ns() + 60 * TK_NS_PER_S, 3);
    qc_offer(t, q, &n[3]);
    qc_taker *b[2];
    b[0] = qc_taker_start(t, q, QC_BATCH, 8);
    b[1] = qc_taker_start(t, q, QC_BATCH, 8);
    qc_settle();
    assert_int_equal(qc_takers_done(b, 2), 0);
    qc_remove_queued(t, q, &n[3]);
    for (int i = 0; i < 2; i++) {
        qc_taker_join(t, b[i]);
        assert_int_equal(b[i]->rc, TK_ECLOSED);
        assert_null(b[i]->got);
        assert_int_equal(b[i]->count, 0);
    }
    qc_destroy(t, q);

    /* NOW: at once, blocked or not, a due node queued or not */
    q = qc_queue(t, NULL);
    qc_key(&n[4], tk_clock_now_ns() + 60 * TK_NS_PER_S, 4);
    qc_offer(t, q, &n[4]);
    b[0] = qc_taker_start(t, q, QC_BATCH, 8);
    qc_settle();
    assert_int_equal(atomic_load(&b[0]->done), 0);
    t->ops->close(q, TK_QUEUE_CLOSE_NOW);
    qc_taker_join(t, b[0]);
    assert_int_equal(b[0]->rc, TK_ECLOSED);
    assert_int_equal(t->ops->size(q), 1);
    assert_int_equal(qc_list_len(t->ops->drain(q), NULL), 1);
    qc_destroy(t, q);

    q = qc_queue(t, NULL);
    int64_t now = tk_clock_now_ns();
    qc_key(&n[0], now - QC_MS(2), 10);
    qc_key(&n[1], now - QC_MS(1), 11);
    qc_offer(t, q, &n[0]);
    qc_offer(t, q, &n[1]);
    assert_int_equal(t->ops->take_batch(q, 1, &l, &k), TK_OK); /* the engine has them */
    assert_int_equal(k, 1);
    tk_node *left = l == &n[0].node ? &n[1].node : &n[0].node;
    qc_settle();
    t->ops->close(q, TK_QUEUE_CLOSE_NOW);
    expect_batch_refused(t, q, 8, &n[5].node, 9, TK_ECLOSED);
    assert_int_equal(t->ops->size(q), 1);
    assert_ptr_equal(t->ops->drain(q), left);
}

/* The nodes of a batch are the caller's, as after take(): remove() answers
 * TK_ENOENT for each (also once other nodes are queued in their places), and
 * each may be offered again (read its successor first). With and without a
 * release callback. */
static void nodes_of_a_batch_are_the_callers_remove_enoent_offer_again(qc *t) {
    enum { N = 10 };
    for (int plain = 0; plain < 2; plain++) {
        tk_queue *q = NULL;
        if (plain) {
            int rc = qc_create(t, NULL, false, &q);
            if (rc == TK_EINVAL && t->eng->deferred)
                break; /* the engine needs a release callback */
            assert_int_equal(rc, TK_OK);
        } else {
            q = qc_queue(t, NULL);
        }
        qc_node *n = qc_nodes(t, N + 1);
        int64_t past = tk_clock_now_ns() - QC_MS(1);
        for (int i = 0; i < N; i++) {
            qc_key(&n[i], past, (uint64_t)i);
            qc_offer(t, q, &n[i]);
        }
        size_t got = 0;
        tk_node *first = NULL;
        while (got < N) {
            tk_node *l = NULL;
            size_t k = 0;
            assert_int_equal(t->ops->take_batch(q, N, &l, &k), TK_OK);
            if (first == NULL)
                first = l;
            for (tk_node *x = l; x != NULL; x = tk_node_next_detached(x)) {
                if (t->eng->exact)
                    assert_ptr_equal(x, &n[got].node);
                assert_int_equal(t->ops->remove(q, x), TK_ENOENT);
                atomic_fetch_add(&QC_NODE(x)->taken, 1);
                got++;
            }
        }
        assert_int_equal(got, N);
        assert_int_equal(t->ops->size(q), 0);
        QC_CHECK(t, q);
        /* other nodes in their places: still not queued */
        qc_key(&n[N], tk_clock_now_ns() + TK_NS_PER_S, 100);
        qc_offer(t, q, &n[N]);
        for (int i = 0; i < N; i++)
            assert_int_equal(t->ops->remove(q, &n[i].node), TK_ENOENT);
        assert_int_equal(t->ops->size(q), 1);
        /* offered again, a node of a batch comes back */
        qc_key(QC_NODE(first), tk_clock_now_ns() - 1, 101);
        assert_int_equal(t->ops->offer(q, first), TK_OK);
        tk_node *x = NULL;
        assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
        assert_ptr_equal(x, first);
        qc_remove_queued(t, q, &n[N]);
        QC_CHECK(t, q);
        long released = qc_destroy(t, q);
        assert_int_equal(released, plain ? 0 : 1 - atomic_load(&n[N].removed));
    }
}

/* Three takers wait in take_batch() (max 100) when 60 nodes fall due at
 * once: the first cuts its batch to a fair share, 60 / 3, and wakes another,
 * which cuts its own the same way, so each gets 20 (queue.h, take_batch(),
 * "Fairness"). */
static void waiting_batch_takers_share_the_due_nodes_fairly(qc *t) {
    enum { W = 3, N = 60, MAX = 100 };
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, N);
    qc_taker *b[W];
    for (int i = 0; i < W; i++)
        b[i] = qc_taker_start(t, q, QC_BATCH, MAX);
    qc_sleep_ns(qc_lead(200)); /* all three inside the wait: each counts as a waiter */
    int64_t d = tk_clock_now_ns() + qc_lead(30);
    for (int i = 0; i < N; i++) {
        qc_key(&n[i], d, (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    bool in_time = tk_clock_now_ns() < d;
    bool done = qc_wait_takers(b, W, W, QC_WAIT); /* each woken without a close */
    t->ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);  /* frees a taker left without nodes */
    size_t total = 0;
    for (int i = 0; i < W; i++) {
        qc_taker_join(t, b[i]);
        if (b[i]->rc != TK_OK)
            continue;
        bool sorted = true;
        assert_int_equal(qc_list_len(b[i]->got, &sorted), b[i]->count);
        if (t->eng->exact)
            assert_true(sorted);
        assert_true(b[i]->returned_ns >= d);
        total += qc_list_take(b[i]->got);
    }
    print_message("  %d nodes due together: %zu, %zu and %zu%s\n", N, b[0]->count, b[1]->count,
                  b[2]->count,
                  in_time ? "" : " [the offers overran the deadline: shares not checked]");
    for (tk_node *x; total < N; total++) {
        assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
        atomic_fetch_add(&QC_NODE(x)->taken, 1);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&n[i].taken), 1);
    if (in_time) {
        assert_true(done);
        for (int i = 0; i < W; i++) {
            assert_int_equal(b[i]->rc, TK_OK);
            assert_int_equal(b[i]->count, N / W);
        }
    }
}

/* Two takers wait in take_batch(); two nodes fall due one after the other:
 * each taker gets one, at its deadline (the first does not keep the second
 * taker from waiting for the second node). */
static void blocked_batch_takers_each_get_a_node_as_nodes_fall_due(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_taker *b[2];
    b[0] = qc_taker_start(t, q, QC_BATCH, 16);
    b[1] = qc_taker_start(t, q, QC_BATCH, 16);
    qc_settle();
    qc_node *n = qc_nodes(t, 2);
    int64_t now = tk_clock_now_ns();
    qc_key(&n[0], now + qc_lead(30), 0);
    qc_key(&n[1], now + qc_lead(330), 1); /* far enough apart never to be due together */
    qc_offer(t, q, &n[0]);
    qc_offer(t, q, &n[1]);
    bool done = qc_wait_takers(b, 2, 2, QC_WAIT);
    if (!done)
        t->ops->close(q, TK_QUEUE_CLOSE_NOW); /* releases a taker left waiting */
    qc_taker_join(t, b[0]);
    qc_taker_join(t, b[1]);
    assert_true(done);
    qc_taker *a = b[0]->got == &n[0].node ? b[0] : b[1];
    qc_taker *c = a == b[0] ? b[1] : b[0];
    assert_int_equal(a->rc, TK_OK);
    assert_int_equal(c->rc, TK_OK);
    assert_ptr_equal(a->got, &n[0].node);
    assert_int_equal(a->count, 1);
    assert_ptr_equal(c->got, &n[1].node);
    assert_int_equal(c->count, 1);
    assert_true(a->returned_ns >= n[0].node.deadline_ns);
    assert_true(c->returned_ns >= n[1].node.deadline_ns);
    assert_int_equal(t->ops->size(q), 0);
}

QC_TABLE(batch,
         {"take_batch refuses bad arguments, clears its outputs and removes nothing",
          take_batch_refuses_bad_arguments_clears_its_outputs_and_removes_nothing, QC_NEEDS_BATCH},
         {"take_batch hands out every node once, never early, in take order",
          take_batch_hands_out_every_node_once_never_early_in_take_order, QC_NEEDS_BATCH},
         {"alone, take_batch takes min(max, due) nodes and never one not due",
          alone_take_batch_takes_min_of_max_and_the_due_nodes, QC_NEEDS_BATCH},
         {"take_batch blocks until a node is due", take_batch_blocks_until_a_node_is_due,
          QC_NEEDS_BATCH},
         {"take_batch answers TK_ECLOSED exactly when take would",
          take_batch_answers_eclosed_exactly_when_take_would, QC_NEEDS_BATCH},
         {"the nodes of a batch are the caller's: remove answers TK_ENOENT, offer takes them",
          nodes_of_a_batch_are_the_callers_remove_enoent_offer_again, QC_NEEDS_BATCH},
         {"takers waiting in take_batch share the due nodes fairly",
          waiting_batch_takers_share_the_due_nodes_fairly, QC_NEEDS_BATCH},
         {"blocked batch takers each get a node as nodes fall due one after another",
          blocked_batch_takers_each_get_a_node_as_nodes_fall_due, QC_NEEDS_BATCH}, );
