/* SPDX-License-Identifier: MIT */
/* Queue contract: many threads at once. Producers offer, takers take (with
 * take()/poll(), or take_batch()), a remover removes recently offered
 * nodes, and the main thread takes the first node now and then and checks
 * the invariants; then every node is accounted for exactly once: handed
 * out, removed (TK_OK) or released (after TK_EINPROGRESS). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "queue-contract.h"

enum { RP = 3, RT = 2 };

typedef struct race {
    const tk_queue_ops *ops;
    tk_queue *q;
    bool deferred;  /* the engine may answer TK_EINPROGRESS */
    qc_node *nodes; /* RP * per */
    size_t per;
    size_t batch_max[RT];      /* 0: take() (taker 0) or poll() (taker 1); else take_batch() */
    atomic_size_t offered[RP]; /* nodes offered so far, per producer */
    atomic_int producers_done, takers_done;
    /* written by one thread each, read after it is joined */
    long offer_failures[RP];
    long early[RT], bad[RT], batches[RT], taken[RT], odd_status[RT];
    int final_rc[RT];
    long removed_ok, removed_async, not_found, remove_odd;
} race;

typedef struct race_arg {
    race *r;
    int id;
} race_arg;

static void *producer_main(void *arg) {
    race_arg *a = arg;
    race *r = a->r;
    uint64_t s = (uint64_t)a->id * 104729 + 7;
    for (size_t i = 0; i < r->per; i++) {
        size_t k = (size_t)a->id * r->per + i;
        qc_lcg_next(&s);
        /* from 1 ms ago to 20 ms ahead: the queue fills, then drains */
        int64_t delay = (int64_t)((s >> 33) % (21 * TK_NS_PER_MS)) - TK_NS_PER_MS;
        qc_key(&r->nodes[k], tk_clock_now_ns() + delay, (uint64_t)k);
        if (r->ops->offer(r->q, &r->nodes[k].node) != TK_OK)
            r->offer_failures[a->id]++;
        atomic_store_explicit(&r->offered[a->id], i + 1, memory_order_release);
        if (i % 200 == 199)
            qc_sleep_ns(TK_NS_PER_MS); /* paced: the race lasts, the remover gets its turns */
    }
    atomic_fetch_add(&r->producers_done, 1);
    return NULL;
}

static void *taker_main(void *arg) {
    race_arg *a = arg;
    race *r = a->r;
    size_t max = r->batch_max[a->id];
    for (;;) {
        tk_node *n = NULL;
        size_t k = 1;
        int rc;
        if (max != 0)
            rc = r->ops->take_batch(r->q, max, &n, &k);
        else if (a->id == 0)
            rc = r->ops->take(r->q, &n);
        else
            rc = r->ops->poll(r->q, TK_NS_PER_MS, &n);
        if (rc == TK_ETIMEDOUT && max == 0 && a->id != 0)
            continue;
        if (rc != TK_OK) {
            r->final_rc[a->id] = rc;
            atomic_fetch_add(&r->takers_done, 1);
            return NULL;
        }
        int64_t at = tk_clock_now_ns();
        if (max != 0) {
            if (k < 1 || k > max || qc_list_len(n, NULL) != k)
                r->bad[a->id]++;
            r->batches[a->id]++;
        }
        /* a node from take() has no list link to read: the remover may be
         * reading its private area this very moment */
        for (size_t i = 0; i < k; i++) {
            tk_node *next = i + 1 < k ? tk_node_next_detached(n) : NULL;
            if (at < n->deadline_ns)
                r->early[a->id]++;
            atomic_fetch_add(&QC_NODE(n)->taken, 1);
            r->taken[a->id]++;
            n = next;
        }
    }
}

static void *remover_main(void *arg) {
    race *r = arg;
    uint64_t s = 99;
    for (long round = 1; atomic_load(&r->producers_done) < RP; round++) {
        if (round % 32 == 0)
            qc_sleep_ns(50 * TK_NS_PER_US); /* leaves the producers their turns */
        qc_lcg_next(&s);
        int id = (int)((s >> 33) % RP);
        size_t offered = atomic_load_explicit(&r->offered[id], memory_order_acquire);
        if (offered == 0)
            continue;
        /* one of the latest offers: the likeliest to be still queued */
        size_t back = (size_t)((s >> 13) % 64);
        size_t i = offered - 1 - (back < offered ? back : 0);
        qc_node *n = &r->nodes[(size_t)id * r->per + i];
        int rc = r->ops->remove(r->q, &n->node);
        if (rc == TK_OK) {
            atomic_fetch_add(&n->removed, 1);
            r->removed_ok++;
        } else if (rc == TK_EINPROGRESS && r->deferred) {
            r->removed_async++;
        } else if (rc == TK_ENOENT) {
            r->not_found++;
        } else {
            r->remove_odd++;
        }
    }
    return NULL;
}

static void run_race(qc *t, bool batch) {
    race *r = qc_alloc(t, 1, sizeof(*r));
    r->ops = t->ops;
    r->deferred = t->eng->deferred;
    r->per = (size_t)qc_scaled(10000);
    size_t total = RP * r->per;
    r->nodes = qc_nodes(t, total);
    r->q = qc_queue(t, NULL);
    if (batch) {
        r->batch_max[0] = 8;
        r->batch_max[1] = 3;
    }
    race_arg *ta = qc_alloc(t, RT, sizeof(*ta));
    race_arg *pa = qc_alloc(t, RP, sizeof(*pa));
    size_t tak[RT], prod[RP];
    for (int i = 0; i < RT; i++) {
        ta[i] = (race_arg){r, i};
        tak[i] = qc_thread(t, taker_main, &ta[i]);
    }
    size_t rem = qc_thread(t, remover_main, r);
    for (int i = 0; i < RP; i++) {
        pa[i] = (race_arg){r, i};
        prod[i] = qc_thread(t, producer_main, &pa[i]);
    }
    /* meanwhile: the first node now and then, peek, size and check */
    long by_main = 0, check_failures = 0, peek_odd = 0, size_odd = 0;
    while (atomic_load(&r->producers_done) < RP) {
        tk_node *x = NULL;
        int rc = t->ops->remove_first(r->q, &x);
        if (rc == TK_OK) {
            atomic_fetch_add(&QC_NODE(x)->taken, 1);
            by_main++;
        }
        int64_t d;
        uint64_t s;
        rc = t->ops->peek(r->q, &d, &s);
        peek_odd += rc != TK_OK && rc != TK_ENOENT;
        size_odd += t->ops->size(r->q) > total;
        check_failures += t->ops->check(r->q) != TK_OK;
        qc_sleep_ns(TK_NS_PER_MS);
    }
    for (int i = 0; i < RP; i++)
        qc_join(t, prod[i]);
    qc_join(t, rem);
    t->ops->close(r->q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    int64_t end = tk_clock_now_ns() + QC_WAIT;
    while (atomic_load(&r->takers_done) < RT && tk_clock_now_ns() < end)
        qc_sleep_ns(TK_NS_PER_MS);
    if (atomic_load(&r->takers_done) < RT) /* the teardown's close(NOW) releases them */
        fail_msg("closed WHEN_EMPTY and emptied, %d taker(s) still blocked",
                 RT - atomic_load(&r->takers_done));
    for (int i = 0; i < RT; i++)
        qc_join(t, tak[i]);
    assert_int_equal(t->ops->size(r->q), 0);
    QC_CHECK(t, r->q);
    long released = qc_destroy(t, r->q);

    for (int i = 0; i < RP; i++)
        assert_int_equal(r->offer_failures[i], 0);
    for (int i = 0; i < RT; i++) {
        assert_int_equal(r->early[i], 0);
        assert_int_equal(r->bad[i], 0);
        assert_int_equal(r->final_rc[i], TK_ECLOSED);
    }
    assert_int_equal(r->remove_odd, 0);
    assert_int_equal(check_failures, 0);
    assert_int_equal(peek_odd, 0);
    assert_int_equal(size_odd, 0);
    assert_int_equal(released, r->removed_async);
    for (size_t k = 0; k < total; k++) {
        qc_node *n = &r->nodes[k];
        int taken = atomic_load(&n->taken), removed = atomic_load(&n->removed),
            rel = atomic_load(&n->released);
        if (taken + removed + rel != 1)
            fail_msg("node %zu left the queue %d times (taken %d, removed %d, released %d)", k,
                     taken + removed + rel, taken, removed, rel);
    }
    print_message("  %zu nodes: taken %ld + %ld (%ld + %ld batches) + %ld by remove_first, "
                  "removed %ld, released later %ld\n",
                  total, r->taken[0], r->taken[1], r->batches[0], r->batches[1], by_main,
                  r->removed_ok, r->removed_async);
}

static void offers_takes_and_removals_racing_lose_and_duplicate_nothing(qc *t) {
    run_race(t, false);
}

static void batch_takes_racing_with_offers_and_removals_lose_and_duplicate_nothing(qc *t) {
    run_race(t, true);
}

QC_TABLE(race,
         {"offers, takes and removals racing lose and duplicate nothing",
          offers_takes_and_removals_racing_lose_and_duplicate_nothing, 0},
         {"batch takes racing with offers and removals lose and duplicate nothing",
          batch_takes_racing_with_offers_and_removals_lose_and_duplicate_nothing,
          QC_NEEDS_BATCH}, );
