/* SPDX-License-Identifier: MIT */
/* Queue contract: remove() and the release callback, remove_first(),
 * peek(), size(), drain() and remove_if(). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "queue-contract.h"

/* Waits until q's release callback has run `want` times. */
static bool wait_released(qc *t, tk_queue *q, long want) {
    int64_t end = tk_clock_now_ns() + QC_WAIT;
    while (qc_released(t, q) < want) {
        if (tk_clock_now_ns() >= end)
            return false;
        qc_sleep_ns(200 * TK_NS_PER_US);
    }
    return true;
}

/* ---- remove ------------------------------------------------------------------------ */

/* remove() takes a queued node out whether it is due or not: size() drops at
 * once, a second remove() answers TK_ENOENT, and the node is never handed
 * out, while the nodes beside it are. */
static void remove_takes_a_queued_node_out_and_it_is_never_handed_out(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 4);
    int64_t now = tk_clock_now_ns();
    qc_key(&n[0], now - QC_MS(1), 0);           /* due */
    qc_key(&n[1], now - QC_MS(1), 1);           /* due, stays */
    qc_key(&n[2], now + qc_lead(30), 2);        /* due soon */
    qc_key(&n[3], now + 3600 * TK_NS_PER_S, 3); /* far, stays */
    for (int i = 0; i < 4; i++)
        qc_offer(t, q, &n[i]);
    int rc0 = qc_remove_queued(t, q, &n[0]);
    int rc2 = qc_remove_queued(t, q, &n[2]);
    assert_int_equal(t->ops->size(q), 2);
    assert_int_equal(t->ops->remove(q, &n[0].node), TK_ENOENT);
    assert_int_equal(t->ops->remove(q, &n[2].node), TK_ENOENT);
    tk_node *x = NULL;
    assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
    assert_ptr_equal(x, &n[1].node);
    /* past n[2]'s deadline: nothing more is handed out */
    assert_int_equal(t->ops->poll(q, qc_lead(60), &x), TK_ETIMEDOUT);
    assert_true(tk_clock_now_ns() > n[2].node.deadline_ns);
    assert_int_equal(t->ops->size(q), 1);
    QC_CHECK(t, q);
    int rc3 = qc_remove_queued(t, q, &n[3]);
    assert_int_equal(t->ops->size(q), 0);
    long released = qc_destroy(t, q);
    /* each node removed with TK_EINPROGRESS came back through release, once */
    int async = (rc0 == TK_EINPROGRESS) + (rc2 == TK_EINPROGRESS) + (rc3 == TK_EINPROGRESS);
    assert_int_equal(released, async);
    assert_int_equal(atomic_load(&n[0].released), rc0 == TK_EINPROGRESS);
    assert_int_equal(atomic_load(&n[2].released), rc2 == TK_EINPROGRESS);
    assert_int_equal(atomic_load(&n[3].released), rc3 == TK_EINPROGRESS);
    assert_int_equal(atomic_load(&n[1].released), 0);
}

static bool pred_all(const tk_node *n, void *ctx) {
    (void)n;
    (void)ctx;
    return true;
}

/* remove() of a node the queue does not hold answers TK_ENOENT: one never
 * offered (zeroed private area), and one handed back by take(), poll(),
 * remove_first(), drain() or remove_if(), also after other nodes took its
 * place. Each such node is the caller's again: offered anew, it comes back. */
static void remove_of_a_node_handed_out_or_never_offered_answers_enoent(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { K = 6 };
    qc_node *n = qc_nodes(t, K + 1);
    assert_int_equal(t->ops->remove(q, &n[K].node), TK_ENOENT); /* never offered */
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < K; i++) {
        qc_key(&n[i], now - QC_MS(1) - (K - i), (uint64_t)i); /* all due */
        qc_offer(t, q, &n[i]);
    }
    tk_node *x = NULL;
    assert_int_equal(t->ops->take(q, &x), TK_OK);
    assert_int_equal(t->ops->remove(q, x), TK_ENOENT);
    assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
    assert_int_equal(t->ops->remove(q, x), TK_ENOENT);
    assert_int_equal(t->ops->remove_first(q, &x), TK_OK);
    assert_int_equal(t->ops->remove(q, x), TK_ENOENT);
    assert_int_equal(t->ops->size(q), K - 3);
    tk_node *l = t->ops->remove_if(q, pred_all, NULL);
    assert_non_null(l);
    tk_node *rest = tk_node_next_detached(l); /* keep the first; offer the rest back */
    int back = 0;
    for (tk_node *m = rest; m != NULL;) {
        tk_node *next = tk_node_next_detached(m);
        qc_key(QC_NODE(m), tk_clock_now_ns() + 3600 * TK_NS_PER_S, 100 + (uint64_t)back++);
        assert_int_equal(t->ops->offer(q, m), TK_OK);
        m = next;
    }
    assert_int_equal(t->ops->remove(q, l), TK_ENOENT); /* others hold the places it had */
    tk_node *d = t->ops->drain(q);
    assert_int_equal(qc_list_len(d, NULL), (size_t)back);
    for (tk_node *m = d; m != NULL; m = tk_node_next_detached(m))
        assert_int_equal(t->ops->remove(q, m), TK_ENOENT);
    assert_int_equal(t->ops->size(q), 0);
    QC_CHECK(t, q);
    /* handed back, each may be offered again */
    for (int i = 0; i < K; i++) {
        qc_key(&n[i], tk_clock_now_ns() - 1, 200 + (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    assert_int_equal(t->ops->size(q), K);
    for (int i = 0; i < K; i++) {
        assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
        atomic_fetch_add(&QC_NODE(x)->taken, 1);
    }
    for (int i = 0; i < K; i++)
        assert_int_equal(atomic_load(&n[i].taken), 1);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* Without TK_QUEUE_CAP_DEFERRED_RELEASE, remove() of a queued node always
 * answers TK_OK at once, and the release callback is never called, not even
 * by destroy(). */
static void remove_always_completes_and_release_is_never_called(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    size_t N = (size_t)qc_scaled(2000);
    qc_node *n = qc_nodes(t, N);
    int64_t now = tk_clock_now_ns();
    for (size_t i = 0; i < N; i++) {
        qc_key(&n[i], i % 3 == 0 ? now - 1 : now + (int64_t)(i % 50) * TK_NS_PER_S, i);
        qc_offer(t, q, &n[i]);
    }
    qc_settle(); /* let the due ones become due */
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(t->ops->remove(q, &n[(i * 7919) % N].node), TK_OK);
        assert_int_equal(t->ops->size(q), N - 1 - i);
    }
    assert_null(t->ops->drain(q));
    QC_CHECK(t, q);
    assert_int_equal(qc_released(t, q), 0);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* With TK_QUEUE_CAP_DEFERRED_RELEASE, remove() answers TK_OK or
 * TK_EINPROGRESS; size() drops at once either way; a node removed with
 * TK_EINPROGRESS is never handed out and comes back through `release`
 * exactly once, from an engine thread or at the latest from destroy(). */
static void a_node_removed_in_progress_comes_back_through_release_once(qc *t) {
    size_t N = (size_t)qc_scaled(3000);
    qc_node *n = qc_nodes(t, N);
    for (int round = 0; round < 2; round++) {
        tk_queue *q = qc_queue(t, NULL);
        int64_t now = tk_clock_now_ns();
        for (size_t i = 0; i < N; i++) {
            memset(&n[i], 0, sizeof(n[i]));
            n[i].idx = i;
            qc_key(&n[i], i % 5 == 0 ? now - 1 : now + 10 * TK_NS_PER_S + (int64_t)i, i);
            qc_offer(t, q, &n[i]);
        }
        if (round == 0)
            qc_settle(); /* some taken in by the engine, some due */
        long async = 0;
        for (size_t i = 0; i < N; i++) {
            async += qc_remove_queued(t, q, &n[i]) == TK_EINPROGRESS;
            assert_int_equal(t->ops->size(q), N - 1 - i);
        }
        for (size_t i = 0; i < N; i += 97)
            assert_int_equal(t->ops->remove(q, &n[i].node), TK_ENOENT);
        tk_node *x = NULL;
        assert_int_equal(t->ops->poll(q, 0, &x), TK_ETIMEDOUT);
        if (round == 0) {
            /* the engine releases them on its own */
            assert_true(wait_released(t, q, async));
            QC_CHECK(t, q);
        }
        /* round 1: destroy() releases what the engine has not yet */
        long released = qc_destroy(t, q);
        assert_int_equal(released, async);
        for (size_t i = 0; i < N; i++) {
            int removed = atomic_load(&n[i].removed), rel = atomic_load(&n[i].released);
            if (removed + rel != 1)
                fail_msg("node %zu: removed %d, released %d", i, removed, rel);
            assert_int_equal(atomic_load(&n[i].taken), 0);
        }
        print_message("  round %d: %ld of %zu removals in progress, released once each\n", round,
                      async, N);
    }
}

/* A queue created without a release callback must never need one: remove()
 * of a queued node answers TK_OK. (An engine whose removals can be deferred
 * may refuse such a queue with TK_EINVAL instead.) */
static void a_queue_without_a_release_callback_never_answers_einprogress(qc *t) {
    tk_queue *q = NULL;
    int rc = qc_create(t, NULL, false, &q);
    if (rc == TK_EINVAL && t->eng->deferred) {
        print_message("  refused: the engine needs a release callback\n");
        return;
    }
    assert_int_equal(rc, TK_OK);
    size_t N = (size_t)qc_scaled(400);
    qc_node *n = qc_nodes(t, N);
    int64_t now = tk_clock_now_ns();
    for (size_t i = 0; i < N; i++) {
        qc_key(&n[i], i % 2 ? now - 1 : now + TK_NS_PER_S + (int64_t)i, i);
        qc_offer(t, q, &n[i]);
    }
    qc_settle();
    for (size_t i = 0; i < N; i++)
        assert_int_equal(t->ops->remove(q, &n[i].node), TK_OK);
    assert_int_equal(t->ops->size(q), 0);
    assert_null(t->ops->drain(q));
    QC_CHECK(t, q);
    qc_destroy(t, q);
}

/* ---- remove_first, peek, size ---------------------------------------------------------- */

/* On an empty queue remove_first() and peek() answer TK_ENOENT; otherwise
 * remove_first() takes the node with the smallest (deadline, seq), due or
 * not, and peek() reads that key without removing the node. */
static void remove_first_and_peek_reach_the_smallest_key_due_or_not(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    tk_node *x = NULL;
    int64_t d = 0;
    uint64_t s = 0;
    assert_int_equal(t->ops->remove_first(q, &x), TK_ENOENT);
    assert_int_equal(t->ops->peek(q, &d, &s), TK_ENOENT);
    assert_int_equal(t->ops->peek(q, NULL, NULL), TK_ENOENT);

    qc_node *n = qc_nodes(t, 4);
    int64_t now = tk_clock_now_ns();
    qc_key(&n[0], now + 30 * TK_NS_PER_S, 7);
    qc_key(&n[1], now + 10 * TK_NS_PER_S, 9);
    qc_key(&n[2], now + 10 * TK_NS_PER_S, 8);
    qc_key(&n[3], now - QC_MS(1), 10); /* due */
    const int order[4] = {3, 2, 1, 0};
    for (int i = 0; i < 4; i++)
        qc_offer(t, q, &n[i]);
    for (int i = 0; i < 4; i++) {
        const tk_node *want = &n[order[i]].node;
        for (int j = 0; j < 2; j++) { /* peek does not remove */
            assert_int_equal(t->ops->peek(q, &d, &s), TK_OK);
            assert_int_equal(d, want->deadline_ns);
            assert_int_equal(s, want->seq);
        }
        assert_int_equal(t->ops->size(q), (size_t)(4 - i));
        assert_int_equal(t->ops->remove_first(q, &x), TK_OK);
        assert_ptr_equal(x, want);
        assert_int_equal(t->ops->remove(q, x), TK_ENOENT);
        QC_CHECK(t, q);
    }
    assert_int_equal(t->ops->remove_first(q, &x), TK_ENOENT);
    assert_int_equal(t->ops->peek(q, &d, &s), TK_ENOENT);
    assert_int_equal(qc_destroy(t, q), 0);
}

static bool pred_seq_below(const tk_node *n, void *ctx) {
    return n->seq < *(const uint64_t *)ctx;
}

/* size() counts the nodes offered and not yet handed out or removed, through
 * every way a node can leave. */
static void size_counts_nodes_offered_and_not_yet_handed_out_or_removed(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { N = 10 };
    qc_node *n = qc_nodes(t, N);
    assert_int_equal(t->ops->size(q), 0);
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < N; i++) {
        qc_key(&n[i], i < 2 ? now - 1 : now + 3600 * TK_NS_PER_S + i, (uint64_t)i);
        qc_offer(t, q, &n[i]);
        assert_int_equal(t->ops->size(q), (size_t)i + 1);
    }
    tk_node *x = NULL;
    assert_int_equal(t->ops->take(q, &x), TK_OK); /* a due one */
    assert_int_equal(t->ops->size(q), N - 1);
    assert_int_equal(t->ops->poll(q, QC_WAIT, &x), TK_OK);
    assert_int_equal(t->ops->size(q), N - 2);
    qc_remove_queued(t, q, &n[9]); /* counts at once, also when in progress */
    assert_int_equal(t->ops->size(q), N - 3);
    assert_int_equal(t->ops->remove_first(q, &x), TK_OK);
    assert_int_equal(t->ops->size(q), N - 4);
    uint64_t below = 5; /* n[3] and n[4] of n[3..8] */
    assert_int_equal(qc_list_len(t->ops->remove_if(q, pred_seq_below, &below), NULL), 2);
    assert_int_equal(t->ops->size(q), N - 6);
    assert_int_equal(qc_list_len(t->ops->drain(q), NULL), N - 6);
    assert_int_equal(t->ops->size(q), 0);
    QC_CHECK(t, q);
}

/* ---- drain, remove_if ---------------------------------------------------------------------- */

/* drain() hands back every queued node, due or not, in (deadline, seq)
 * order, and leaves the queue empty: not a removed node, not one handed
 * out; each drained node then answers TK_ENOENT to remove(). */
static void drain_hands_back_every_queued_node_sorted_and_empties_the_queue(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    assert_null(t->ops->drain(q));
    size_t N = qc_scaled_at_least(600, 60);
    qc_node *n = qc_nodes(t, N);
    int64_t now = tk_clock_now_ns();
    uint64_t x = 12345;
    size_t third = N / 3;
    for (size_t i = 0; i < N; i++) {
        qc_lcg_next(&x);
        int64_t r = (int64_t)(x >> 54); /* 0..1023: ties likely */
        qc_key(&n[i], i < third ? now - QC_MS(1) - r : now + TK_NS_PER_S + r * TK_NS_PER_MS,
               (uint64_t)((i * 7919) % N));
        if (i == third)
            qc_settle(); /* the due ones are taken in by the engine before the rest */
        qc_offer(t, q, &n[i]);
    }
    tk_node *got = NULL;
    assert_int_equal(t->ops->take(q, &got), TK_OK); /* one due node handed out */
    atomic_fetch_add(&QC_NODE(got)->taken, 1);
    size_t removed = 0;
    for (size_t i = 1; i < N; i += 7) {
        if (&n[i].node == got)
            continue;
        qc_remove_queued(t, q, &n[i]);
        removed++;
    }
    assert_int_equal(t->ops->size(q), N - 1 - removed);
    tk_node *l = t->ops->drain(q);
    assert_int_equal(t->ops->size(q), 0);
    bool sorted = true;
    assert_int_equal(qc_list_len(l, &sorted), N - 1 - removed);
    assert_true(sorted);
    assert_int_equal(qc_list_take(l), N - 1 - removed);
    for (size_t i = 0; i < N; i++) {
        int want = (i % 7 == 1 && &n[i].node != got) ? 0 : 1;
        assert_int_equal(atomic_load(&n[i].taken), want);
        assert_int_equal(t->ops->remove(q, &n[i].node), TK_ENOENT);
    }
    assert_null(t->ops->drain(q));
    QC_CHECK(t, q);
    long released = qc_destroy(t, q);
    long async = 0;
    for (size_t i = 0; i < N; i++)
        async += i % 7 == 1 && atomic_load(&n[i].removed) == 0 && &n[i].node != got;
    assert_int_equal(released, async);
}

typedef struct pred_log {
    atomic_int calls;
    atomic_int *seen; /* per node index */
} pred_log;

static bool pred_odd_seq_logged(const tk_node *n, void *ctx) {
    pred_log *p = ctx;
    atomic_fetch_add(&p->calls, 1);
    atomic_fetch_add(&p->seen[QC_NODE(n)->idx], 1);
    return n->seq % 2 == 1;
}

/* remove_if() calls its predicate exactly once per queued node (never for
 * one removed or handed out) and removes exactly the nodes it accepts, due
 * or not; the rest stay queued. */
static void remove_if_calls_its_predicate_once_per_node_and_takes_the_matches(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { N = 40 };
    qc_node *n = qc_nodes(t, N);
    pred_log *p = qc_alloc(t, 1, sizeof(*p));
    p->seen = qc_alloc(t, N, sizeof(atomic_int));
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < N; i++) {
        qc_key(&n[i], i % 4 == 0 ? now - 1 : now + (40 - i) * TK_NS_PER_S, (uint64_t)i);
        qc_offer(t, q, &n[i]);
    }
    qc_settle();
    qc_remove_queued(t, q, &n[2]);
    tk_node *x = NULL;
    assert_int_equal(t->ops->take(q, &x), TK_OK); /* a due node, seq a multiple of 4 */
    size_t queued = t->ops->size(q);
    assert_int_equal(queued, N - 2);
    tk_node *l = t->ops->remove_if(q, pred_odd_seq_logged, p);
    assert_int_equal(atomic_load(&p->calls), (int)queued);
    for (int i = 0; i < N; i++) {
        int want = (i == 2 || &n[i].node == x) ? 0 : 1;
        if (atomic_load(&p->seen[i]) != want)
            fail_msg("node %d seen %d times by the predicate", i, atomic_load(&p->seen[i]));
    }
    size_t matched = 0;
    for (tk_node *m = l; m != NULL; m = tk_node_next_detached(m)) {
        assert_int_equal(m->seq % 2, 1);
        assert_int_equal(atomic_fetch_add(&QC_NODE(m)->taken, 1), 0);
        matched++;
    }
    assert_int_equal(matched, N / 2);
    assert_int_equal(t->ops->size(q), queued - matched);
    QC_CHECK(t, q);
    for (int i = 1; i < N; i += 2)
        assert_int_equal(t->ops->remove(q, &n[i].node), TK_ENOENT);
    /* nothing matches now: nothing is removed */
    atomic_store(&p->calls, 0);
    assert_null(t->ops->remove_if(q, pred_odd_seq_logged, p));
    assert_int_equal(atomic_load(&p->calls), (int)(queued - matched));
    assert_int_equal(t->ops->size(q), queued - matched);
    /* the even ones are still queued */
    for (int i = 0; i < N; i += 4)
        if (&n[i].node != x)
            qc_remove_queued(t, q, &n[i]);
    assert_int_equal(qc_list_len(t->ops->drain(q), NULL), N / 4 - 1);
    assert_int_equal(t->ops->size(q), 0);
}

QC_TABLE(remove,
         {"remove takes a queued node out, due or not, and it is never handed out",
          remove_takes_a_queued_node_out_and_it_is_never_handed_out, 0},
         {"remove of a node handed out or never offered answers TK_ENOENT",
          remove_of_a_node_handed_out_or_never_offered_answers_enoent, 0},
         {"remove always completes at once and release is never called",
          remove_always_completes_and_release_is_never_called, QC_NEEDS_IMMEDIATE},
         {"a node removed with TK_EINPROGRESS comes back through release exactly once",
          a_node_removed_in_progress_comes_back_through_release_once, QC_NEEDS_DEFERRED},
         {"a queue without a release callback never answers TK_EINPROGRESS",
          a_queue_without_a_release_callback_never_answers_einprogress, 0},
         {"remove_first and peek reach the smallest key, due or not",
          remove_first_and_peek_reach_the_smallest_key_due_or_not, 0},
         {"size counts the nodes offered and not yet handed out or removed",
          size_counts_nodes_offered_and_not_yet_handed_out_or_removed, 0},
         {"drain hands back every queued node sorted and empties the queue",
          drain_hands_back_every_queued_node_sorted_and_empties_the_queue, 0},
         {"remove_if calls its predicate once per queued node and takes the matches",
          remove_if_calls_its_predicate_once_per_node_and_takes_the_matches, 0}, );
