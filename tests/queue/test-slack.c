/* SPDX-License-Identifier: MIT */
/* Queue contract: slack (queue.h, "Slack"). Every engine: never early
 * whatever the slack, no later than the window's end plus the engine's
 * precision and a scheduling allowance, and equal deadlines in seq order
 * whatever the slacks; an engine that ignores slack passes these by handing
 * each node out at the start of its window. Engines with TK_QUEUE_CAP_SLACK:
 * one wake-up for many windows (counted by wakeups(), not timed), and
 * TK_EINVAL for a negative slack. */
#define _GNU_SOURCE
#include <string.h>

#include "queue-contract.h"

/* How late a node may leave past its window's end on this machine: the
 * scheduler of a loaded test host, with room to spare (ten times that under
 * a sanitizer). */
#define ALLOWANCE qc_lead(100)

/* The engine's precision: its tick where it has one ("tick"), else 0. */
static int64_t precision_ns(qc *t) {
    if (!t->eng->ticked)
        return 0;
    tk_queue_config cfg;
    qc_config(t, &cfg);
    int64_t tick = 0;
    if (tk_queue_config_get_value(&cfg, "tick", &tick) != TK_OK || tick < 0)
        tick = QC_MS(10); /* a ticked engine that names its tick otherwise */
    return tick;
}

static void set_slack(qc_node *n, int64_t slack_ns) {
    n->node.slack_ns = slack_ns;
}

/* Takes one node (asserting TK_OK), marks it taken once, and returns it
 * with the instant it came back. */
static tk_node *take_one(qc *t, tk_queue *q, int64_t *at) {
    tk_node *got = NULL;
    assert_int_equal(t->ops->poll(q, QC_WAIT, &got), TK_OK);
    *at = tk_clock_now_ns();
    assert_non_null(got);
    assert_int_equal(atomic_fetch_add(&QC_NODE(got)->taken, 1), 0);
    return got;
}

/* ---- never early, never past the window -------------------------------------------- */

/* Nodes due from 5 ms ago to 30 ms ahead, with slacks from 0 to INT64_MAX
 * (the sum saturating), leave through take() and poll() each at or after
 * its deadline, and each once. */
static void no_node_leaves_before_its_deadline_whatever_its_slack(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { K = 12 };
    const int64_t offsets_ms[K] = {30, 5, 20, 10, 0, -5, 25, 15, 1, 2, 12, 7};
    const int64_t slacks[K] = {0,         QC_MS(1), QC_MS(20), 1,         QC_MS(5), INT64_MAX,
                               QC_MS(40), 0,        QC_MS(3),  QC_MS(60), 17,       QC_MS(2)};
    qc_node *n = qc_nodes(t, K);
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < K; i++) {
        qc_key(&n[i], now + QC_MS(offsets_ms[i]), (uint64_t)i);
        set_slack(&n[i], slacks[i]);
        qc_offer(t, q, &n[i]);
    }
    QC_CHECK(t, q);
    for (int i = 0; i < K; i++) {
        tk_node *got = NULL;
        if (i % 2 == 0)
            assert_int_equal(t->ops->take(q, &got), TK_OK);
        else
            assert_int_equal(t->ops->poll(q, QC_WAIT, &got), TK_OK);
        int64_t at = tk_clock_now_ns();
        assert_non_null(got);
        if (at < got->deadline_ns)
            fail_msg("node %zu (slack %lld ns) handed out %lld ns before its deadline",
                     QC_NODE(got)->idx, (long long)got->slack_ns,
                     (long long)(got->deadline_ns - at));
        assert_int_equal(atomic_fetch_add(&QC_NODE(got)->taken, 1), 0);
        QC_CHECK(t, q);
    }
    assert_int_equal(t->ops->size(q), 0);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* A node with a long window offered first, then one with none due a little
 * later: the second still leaves by its deadline plus the allowance (the
 * first's window must not hold it up), and the first by its own window's
 * end; a lone node with slack leaves within its window. */
static void a_node_leaves_no_later_than_its_window_end(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    int64_t late_ok = precision_ns(t) + ALLOWANCE;
    qc_node *n = qc_nodes(t, 3);
    int64_t base = tk_clock_now_ns() + qc_lead(20);
    qc_key(&n[0], base, 0);
    set_slack(&n[0], QC_MS(2000));
    qc_offer(t, q, &n[0]);
    qc_key(&n[1], base + QC_MS(30), 1);
    set_slack(&n[1], 0);
    qc_offer(t, q, &n[1]);
    int64_t at[2];
    tk_node *got[2];
    for (int i = 0; i < 2; i++) {
        got[i] = take_one(t, q, &at[i]);
        assert_true(at[i] >= got[i]->deadline_ns);
    }
    /* both leave by n[1]'s deadline: n[1]'s window ends there */
    for (int i = 0; i < 2; i++)
        if (at[i] > n[1].node.deadline_ns + late_ok)
            fail_msg("node %zu left %lld ms after the slack-0 node's deadline",
                     QC_NODE(got[i])->idx,
                     (long long)((at[i] - n[1].node.deadline_ns) / TK_NS_PER_MS));
    /* alone, with 60 ms of slack: within [deadline, deadline + 60 ms] + allowance */
    qc_key(&n[2], tk_clock_now_ns() + qc_lead(10), 2);
    set_slack(&n[2], QC_MS(60));
    qc_offer(t, q, &n[2]);
    int64_t at2;
    tk_node *g = take_one(t, q, &at2);
    assert_ptr_equal(g, &n[2].node);
    assert_true(at2 >= g->deadline_ns);
    if (at2 > g->deadline_ns + g->slack_ns + late_ok)
        fail_msg("a node with 60 ms of slack left %lld ms after its deadline",
                 (long long)((at2 - g->deadline_ns) / TK_NS_PER_MS));
    QC_CHECK(t, q);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* ---- order --------------------------------------------------------------------------- */

/* Nodes with one deadline and slacks from 0 to a second, offered in reverse
 * seq order, leave in seq order; so do nodes with one deadline that all
 * have slack (no window ends at the deadline itself). */
static void equal_deadlines_leave_in_seq_order_whatever_their_slacks(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    enum { N = 48 };
    const int64_t slacks[6] = {0, QC_MS(1), QC_MS(10), 3, QC_MS(1000), QC_MS(25)};
    qc_node *n = qc_nodes(t, N);
    for (int round = 0; round < 2; round++) {
        int64_t when = tk_clock_now_ns() + qc_lead(30);
        for (int i = N - 1; i >= 0; i--) {
            qc_key(&n[i], when, (uint64_t)(round * N + i));
            /* round 1: every node has slack, the smallest 3 ns */
            set_slack(&n[i], slacks[(i * 7 + round) % 6] + round * 3);
            qc_offer(t, q, &n[i]);
        }
        QC_CHECK(t, q);
        for (int i = 0; i < N; i++) {
            int64_t at;
            tk_node *got = take_one(t, q, &at);
            assert_true(at >= when);
            if (got != &n[i].node)
                fail_msg("round %d: node %zu left in place %d, seq order wants node %d", round,
                         QC_NODE(got)->idx, i, i);
            atomic_store(&QC_NODE(got)->taken, 0); /* offered again next round */
        }
    }
    assert_int_equal(qc_destroy(t, q), 0);
}

/* ---- racing offers ------------------------------------------------------------------- */

enum { RACE_PRODUCERS = 3, RACE_TAKERS = 2 };

typedef struct slack_race {
    qc *t;
    tk_queue *q;
    qc_node *n;
    size_t per; /* nodes per producer */
    size_t total;
    int64_t *left_at; /* per node: when it came back, 0 if never */
    atomic_size_t taken;
    atomic_int bad_offers;
    atomic_int taker_errors;
    int64_t give_up; /* the main thread stops waiting for the takers then */
} slack_race;

typedef struct race_arg {
    slack_race *r;
    size_t id;
} race_arg;

static void *race_produce(void *p) {
    race_arg *a = p;
    slack_race *r = a->r;
    uint64_t rs = 77 + a->id;
    for (size_t k = 0; k < r->per; k++) {
        qc_node *n = &r->n[a->id * r->per + k];
        qc_lcg_next(&rs);
        uint64_t x = rs >> 20;
        /* due within 40 ms (some already due), slack 0 for a third, else up to 30 ms */
        qc_key(n, tk_clock_now_ns() + (int64_t)(x % 45) * QC_MS(1) - QC_MS(5),
               (uint64_t)(a->id * r->per + k));
        n->node.slack_ns = (x >> 8) % 3 == 0 ? 0 : (int64_t)((x >> 12) % 30000) * 1000;
        if (r->t->ops->offer(r->q, &n->node) != TK_OK)
            atomic_fetch_add(&r->bad_offers, 1);
        if (k % 16 == 15)
            qc_sleep_ns(QC_MS(1)); /* spread the offers over the run */
    }
    return NULL;
}

/* Takes with take(), which waits with no time-out of its own (a lost
 * wake-up shows as lateness), until the queue is closed. */
static void *race_take(void *p) {
    race_arg *a = p;
    slack_race *r = a->r;
    for (;;) {
        tk_node *got = NULL;
        int rc = r->t->ops->take(r->q, &got);
        if (rc == TK_ECLOSED)
            break;
        if (rc != TK_OK || got == NULL) {
            atomic_fetch_add(&r->taker_errors, 1);
            break;
        }
        int64_t at = tk_clock_now_ns();
        qc_node *n = QC_NODE(got);
        if (atomic_fetch_add(&n->taken, 1) != 0)
            atomic_fetch_add(&r->taker_errors, 1);
        r->left_at[n->idx] = at;
        atomic_fetch_add(&r->taken, 1);
    }
    return NULL;
}

/* Producers offer nodes with mixed slacks while two takers poll: every node
 * leaves once, never before its deadline, and no later than its window's
 * end (with the allowance), so no offer's wake-up was lost whatever the
 * interleaving. */
static void racing_offers_with_slack_each_leave_within_their_window(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    slack_race *r = qc_alloc(t, 1, sizeof(*r));
    r->t = t;
    r->q = q;
    r->per = qc_scaled_at_least(300, 40);
    r->total = r->per * RACE_PRODUCERS;
    r->n = qc_nodes(t, r->total);
    r->left_at = qc_alloc(t, r->total, sizeof(int64_t));
    r->give_up = tk_clock_now_ns() + QC_WAIT;
    race_arg *args = qc_alloc(t, RACE_PRODUCERS + RACE_TAKERS, sizeof(*args));
    size_t h[RACE_PRODUCERS + RACE_TAKERS];
    for (size_t i = 0; i < RACE_TAKERS; i++) {
        args[i] = (race_arg){r, i};
        h[i] = qc_thread(t, race_take, &args[i]);
    }
    for (size_t i = 0; i < RACE_PRODUCERS; i++) {
        args[RACE_TAKERS + i] = (race_arg){r, i};
        h[RACE_TAKERS + i] = qc_thread(t, race_produce, &args[RACE_TAKERS + i]);
    }
    for (size_t i = 0; i < RACE_PRODUCERS; i++)
        qc_join(t, h[RACE_TAKERS + i]);
    while (atomic_load(&r->taken) < r->total && tk_clock_now_ns() < r->give_up)
        qc_sleep_ns(QC_MS(5));
    t->ops->close(q, TK_QUEUE_CLOSE_NOW); /* releases the takers */
    for (size_t i = 0; i < RACE_TAKERS; i++)
        qc_join(t, h[i]);
    assert_int_equal(atomic_load(&r->bad_offers), 0);
    assert_int_equal(atomic_load(&r->taker_errors), 0);
    assert_int_equal(atomic_load(&r->taken), r->total);
    int64_t late_ok = precision_ns(t) + ALLOWANCE;
    size_t late = 0;
    for (size_t i = 0; i < r->total; i++) {
        const tk_node *n = &r->n[i].node;
        assert_true(r->left_at[i] >= n->deadline_ns);
        if (r->left_at[i] > n->deadline_ns + n->slack_ns + late_ok && late++ == 0)
            print_message(
                "  node %zu left %lld ms after its window's end\n", i,
                (long long)((r->left_at[i] - n->deadline_ns - n->slack_ns) / TK_NS_PER_MS));
    }
    assert_int_equal(late, 0);
    assert_int_equal(t->ops->size(q), 0);
    QC_CHECK(t, q);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* ---- engines that use slack ------------------------------------------------------------ */

/* Offers k nodes due over 20 ms from `lead` ahead, each with `slack`, then
 * takes them all on this thread; returns the wake-ups counted meanwhile.
 * Checks never early and the window's end (with the allowance). */
static uint64_t wakeups_for(qc *t, tk_queue *q, qc_node *n, size_t k, int64_t slack) {
    int64_t late_ok = precision_ns(t) + ALLOWANCE;
    uint64_t before = t->ops->wakeups(q);
    int64_t base = tk_clock_now_ns() + qc_lead(30);
    for (size_t i = 0; i < k; i++) {
        qc_key(&n[i], base + (int64_t)i * QC_MS(20) / (int64_t)k, (uint64_t)i);
        set_slack(&n[i], slack);
        atomic_store(&n[i].taken, 0);
        qc_offer(t, q, &n[i]);
    }
    for (size_t i = 0; i < k; i++) {
        int64_t at;
        tk_node *got = take_one(t, q, &at);
        assert_true(at >= got->deadline_ns);
        if (at > got->deadline_ns + got->slack_ns + late_ok)
            fail_msg("node %zu left %lld ms after its deadline, with %lld ms of slack",
                     QC_NODE(got)->idx, (long long)((at - got->deadline_ns) / TK_NS_PER_MS),
                     (long long)(got->slack_ns / TK_NS_PER_MS));
    }
    return t->ops->wakeups(q) - before;
}

/* 50 nodes due over 20 ms, with 200 ms of slack each, on an idle queue with
 * one taker: the engine wakes a handful of times at most, for every window
 * holds the first window's end; without slack it wakes for each deadline
 * (reported, not asserted: a loaded machine merges those too). */
static void one_wake_up_serves_every_window_that_holds_it(qc *t) {
    if (t->ops->wakeups == NULL)
        skip(); /* nothing to count with */
    tk_queue *q = qc_queue(t, NULL);
    enum { K = 50 };
    qc_node *n = qc_nodes(t, K);
    uint64_t with = wakeups_for(t, q, n, K, QC_MS(200));
    uint64_t without = wakeups_for(t, q, n, K, 0);
    print_message("  wake-ups for %d nodes over 20 ms: %llu with 200 ms of slack, %llu without\n",
                  K, (unsigned long long)with, (unsigned long long)without);
    if (with > 5)
        fail_msg("%llu wake-ups for %d windows that all hold one instant (at most 5 expected)",
                 (unsigned long long)with, K);
    QC_CHECK(t, q);
    assert_int_equal(qc_destroy(t, q), 0);
}

/* offer() with a negative slack answers TK_EINVAL and keeps nothing: the
 * caller still owns the node, which goes in once its slack is fixed. */
static void a_negative_slack_gets_einval_and_the_caller_keeps_the_node(qc *t) {
    tk_queue *q = qc_queue(t, NULL);
    qc_node *n = qc_nodes(t, 1);
    qc_key(&n[0], tk_clock_now_ns(), 0);
    const int64_t bad[3] = {-1, -QC_MS(5), INT64_MIN};
    for (int i = 0; i < 3; i++) {
        set_slack(&n[0], bad[i]);
        assert_int_equal(t->ops->offer(q, &n[0].node), TK_EINVAL);
        assert_int_equal(t->ops->size(q), 0);
        tk_node *x = NULL;
        assert_int_equal(t->ops->poll(q, 0, &x), TK_ETIMEDOUT);
        QC_CHECK(t, q);
    }
    set_slack(&n[0], 0);
    qc_offer(t, q, &n[0]);
    int64_t at;
    assert_ptr_equal(take_one(t, q, &at), &n[0].node);
    assert_int_equal(qc_destroy(t, q), 0);
}

QC_TABLE(slack,
         {"no node leaves before its deadline, whatever its slack",
          no_node_leaves_before_its_deadline_whatever_its_slack, 0},
         {"a node leaves no later than its window's end",
          a_node_leaves_no_later_than_its_window_end, 0},
         {"equal deadlines leave in seq order whatever their slacks",
          equal_deadlines_leave_in_seq_order_whatever_their_slacks, 0},
         {"racing offers with slack each leave within their window",
          racing_offers_with_slack_each_leave_within_their_window, 0},
         {"one wake-up serves every window that holds it",
          one_wake_up_serves_every_window_that_holds_it, QC_NEEDS_SLACK},
         {"a negative slack gets TK_EINVAL and the caller keeps the node",
          a_negative_slack_gets_einval_and_the_caller_keeps_the_node, QC_NEEDS_SLACK}, );
