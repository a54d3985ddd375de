/* timerkit: tests of the heap engine's blocking adapter (tk_engine_heap()).
 *
 * Real time on a noisy 2-core box: every bound is generous and only behaviour
 * is asserted (who gets which node, never early, who is released by what),
 * never speed. cmocka asserts longjmp, so helper threads only record what
 * they saw; the test's main thread joins them and then asserts. The last
 * group covers the array's resizing, which runs outside the engine lock:
 * growth ahead of need, TK_ENOMEM when a full array cannot grow, memory
 * returned after a mass removal, no lock held around the allocator, and no
 * node lost or duplicated while resizes race with offers, takes and
 * removals. The last two cancel hundreds of thousands of nodes, alone and
 * racing with takers. The take_batch() group checks batches against take():
 * same order, never early, at most `max`, the leader-follower hand-off, the
 * fair share between waiting takers, and the resize race with batch takers. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "timerkit/clock.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

#define MS TK_NS_PER_MS

static const tk_queue_ops *ops;

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static tk_queue *make_queue(void) {
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, NULL, NULL, NULL, &q), TK_OK);
    assert_non_null(q);
    return q;
}

static void node_at(tk_node *n, int64_t deadline_ns, uint64_t seq) {
    memset(n, 0, sizeof(*n));
    n->deadline_ns = deadline_ns;
    n->seq = seq;
}

/* A thread blocked in take() or poll(); it records, the test asserts. */
typedef struct taker {
    pthread_t thread;
    tk_queue *q;
    int64_t poll_timeout_ns; /* < 0: take(); else poll() with it */
    int rc;
    tk_node *got;
    int64_t returned_ns;
} taker;

static void *taker_main(void *arg) {
    taker *t = arg;
    t->got = NULL;
    if (t->poll_timeout_ns < 0)
        t->rc = ops->take(t->q, &t->got);
    else
        t->rc = ops->poll(t->q, t->poll_timeout_ns, &t->got);
    t->returned_ns = tk_clock_now_ns();
    return NULL;
}

static void taker_start(taker *t, tk_queue *q, int64_t poll_timeout_ns) {
    memset(t, 0, sizeof(*t));
    t->q = q;
    t->poll_timeout_ns = poll_timeout_ns;
    assert_int_equal(pthread_create(&t->thread, NULL, taker_main, t), 0);
}

static void taker_join(taker *t) {
    assert_int_equal(pthread_join(t->thread, NULL), 0);
}

/* ---- the ops table and lifecycle --------------------------------------------- */

static void ops_table_is_named_heap_has_exact_order_and_every_op(void **state) {
    (void)state;
    assert_non_null(ops);
    assert_string_equal(ops->name, "heap");
    assert_int_equal(ops->caps,
                     TK_QUEUE_CAP_EXACT_ORDER | TK_QUEUE_CAP_BATCH_TAKE | TK_QUEUE_CAP_BOUNDED);
    assert_non_null(ops->create);
    assert_non_null(ops->destroy);
    assert_non_null(ops->offer);
    assert_non_null(ops->take);
    assert_non_null(ops->poll);
    assert_non_null(ops->remove);
    assert_non_null(ops->remove_first);
    assert_non_null(ops->peek);
    assert_non_null(ops->size);
    assert_non_null(ops->drain);
    assert_non_null(ops->remove_if);
    assert_non_null(ops->close);
    assert_non_null(ops->check);
    assert_non_null(ops->take_batch);
}

typedef struct count_alloc {
    long fail_after; /* < 0: never fail */
    size_t live_bytes;
} count_alloc;

static void *count_alloc_fn(void *ctx, size_t size) {
    count_alloc *c = ctx;
    if (c->fail_after == 0)
        return NULL;
    if (c->fail_after > 0)
        c->fail_after--;
    void *p = malloc(size);
    if (p != NULL)
        c->live_bytes += size;
    return p;
}

static void count_free_fn(void *ctx, void *ptr, size_t size) {
    count_alloc *c = ctx;
    c->live_bytes -= size;
    free(ptr);
}

static void create_uses_the_configured_allocator_and_reports_enomem(void **state) {
    (void)state;
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, NULL, NULL, NULL, NULL), TK_EINVAL);

    for (long fail_after = 0; fail_after < 2; fail_after++) {
        count_alloc c = {.fail_after = fail_after};
        tk_allocator a = {count_alloc_fn, count_free_fn, &c};
        tk_queue_config cfg;
        assert_int_equal(tk_queue_config_init(&cfg), TK_OK);
        cfg.allocator = &a;
        assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_ENOMEM);
        assert_null(q);
        assert_int_equal(c.live_bytes, 0);
    }

    count_alloc c = {.fail_after = -1};
    tk_allocator a = {count_alloc_fn, count_free_fn, &c};
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
    cfg.allocator = &a;
    assert_int_equal(tk_queue_config_set_value(&cfg, "capacity", 1000), TK_OK);
    assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_OK);
    assert_true(c.live_bytes >= 1000 * 2 * sizeof(int64_t));
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    assert_int_equal(c.live_bytes, 0);
}

static void offer_rejects_null_and_a_node_already_queued(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node n;
    node_at(&n, tk_clock_now_ns(), 1);
    assert_int_equal(ops->offer(q, NULL), TK_EINVAL);
    assert_int_equal(ops->offer(NULL, &n), TK_EINVAL);
    assert_int_equal(ops->offer(q, &n), TK_OK);
    assert_int_equal(ops->offer(q, &n), TK_EINVAL);
    assert_int_equal(ops->size(q), 1);
    assert_int_equal(ops->remove(q, &n), TK_OK);
    ops->destroy(q);
}

/* ---- take() and poll() ------------------------------------------------------- */

static void take_never_returns_a_node_before_its_deadline(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    int64_t now = tk_clock_now_ns();
    const int64_t offsets_ms[6] = {30, 5, 20, 10, 0, -5};
    tk_node n[6];
    for (int i = 0; i < 6; i++) {
        node_at(&n[i], now + offsets_ms[i] * MS, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    const int expect[6] = {5, 4, 1, 3, 2, 0};
    for (int i = 0; i < 6; i++) {
        tk_node *got = NULL;
        assert_int_equal(ops->take(q, &got), TK_OK);
        int64_t after = tk_clock_now_ns();
        assert_ptr_equal(got, &n[expect[i]]);
        assert_true(after >= got->deadline_ns);
        assert_int_equal(ops->check(q), TK_OK);
    }
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
}

static void equal_deadlines_are_taken_in_seq_order(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    int64_t when = tk_clock_now_ns() + 5 * MS;
    tk_node n[64];
    for (int i = 63; i >= 0; i--) { /* offered in reverse seq order */
        node_at(&n[i], when, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    for (int i = 0; i < 64; i++) {
        tk_node *got = NULL;
        assert_int_equal(ops->take(q, &got), TK_OK);
        assert_ptr_equal(got, &n[i]);
    }
    ops->destroy(q);
}

static void blocked_takers_each_get_one_node_none_early(void **state) {
    (void)state;
    enum { T = 4 };
    tk_queue *q = make_queue();
    taker t[T];
    for (int i = 0; i < T; i++)
        taker_start(&t[i], q, -1);
    sleep_ms(20); /* let them block: one leader, the rest followers */
    int64_t now = tk_clock_now_ns();
    const int64_t offsets_ms[T] = {40, 30, 20, 50};
    tk_node n[T];
    for (int i = 0; i < T; i++) {
        node_at(&n[i], now + offsets_ms[i] * MS, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    for (int i = 0; i < T; i++)
        taker_join(&t[i]);
    int seen[T] = {0};
    for (int i = 0; i < T; i++) {
        assert_int_equal(t[i].rc, TK_OK);
        assert_non_null(t[i].got);
        assert_true(t[i].returned_ns >= t[i].got->deadline_ns);
        seen[t[i].got - n]++;
    }
    for (int i = 0; i < T; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
}

static void an_earlier_offer_wakes_the_sleeping_leader(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node far, near;
    node_at(&far, tk_clock_now_ns() + 10 * TK_NS_PER_S, 1);
    assert_int_equal(ops->offer(q, &far), TK_OK);
    taker t[2];
    taker_start(&t[0], q, -1);
    sleep_ms(30); /* t[0] leads, sleeping until far's deadline */
    taker_start(&t[1], q, -1);
    sleep_ms(10); /* t[1] follows */
    int64_t offered = tk_clock_now_ns();
    node_at(&near, offered + 30 * MS, 2);
    assert_int_equal(ops->offer(q, &near), TK_OK);
    /* one of them takes `near`; the other goes on waiting for `far` */
    sleep_ms(100);
    assert_int_equal(ops->remove(q, &far), TK_OK);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    taker_join(&t[0]);
    taker_join(&t[1]);
    taker *winner = t[0].rc == TK_OK ? &t[0] : &t[1];
    taker *other = winner == &t[0] ? &t[1] : &t[0];
    assert_int_equal(winner->rc, TK_OK);
    assert_ptr_equal(winner->got, &near);
    assert_true(winner->returned_ns >= near.deadline_ns);
    assert_true(winner->returned_ns - offered < 5 * TK_NS_PER_S); /* not far's 10 s */
    assert_int_equal(other->rc, TK_ECLOSED);
    ops->destroy(q);
}

/* ---- spin_ns --------------------------------------------------------------- */

static tk_queue *make_spinning_queue(int64_t spin_ns) {
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init(&cfg), TK_OK);
    cfg.spin_ns = spin_ns;
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_OK);
    return q;
}

static void spin_ns_outside_zero_to_one_second_is_einval(void **state) {
    (void)state;
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init(&cfg), TK_OK);
    assert_int_equal(cfg.spin_ns, 0);
    tk_queue *q = NULL;
    cfg.spin_ns = -1;
    assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_EINVAL);
    assert_null(q);
    cfg.spin_ns = TK_NS_PER_S + 1;
    assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_EINVAL);
    assert_null(q);
    cfg.spin_ns = TK_NS_PER_S;
    assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_OK);
    ops->destroy(q);
}

/* A spinning leader hands out nodes in order and never early, whether the
 * head was far (sleep, then spin) or near (spin only). */
static void a_spinning_leader_never_returns_a_node_early(void **state) {
    (void)state;
    tk_queue *q = make_spinning_queue(5 * MS);
    enum { K = 20 };
    tk_node n[K];
    int64_t base = tk_clock_now_ns();
    for (int i = 0; i < K; i++) {
        /* 2 ms apart: some inside the spin window of the one before */
        node_at(&n[i], base + (int64_t)(i + 1) * 2 * MS, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    for (int i = 0; i < K; i++) {
        tk_node *got = NULL;
        assert_int_equal(ops->take(q, &got), TK_OK);
        int64_t now = tk_clock_now_ns();
        assert_ptr_equal(got, &n[i]);
        assert_true(now >= got->deadline_ns);
    }
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
}

/* A new, earlier head ends the leader's spin: it is taken at its own
 * deadline, not after the spin for the old head. */
static void an_earlier_offer_ends_the_leaders_spin(void **state) {
    (void)state;
    tk_queue *q = make_spinning_queue(TK_NS_PER_S);
    tk_node late, early;
    int64_t t0 = tk_clock_now_ns();
    node_at(&late, t0 + 800 * MS, 1);
    assert_int_equal(ops->offer(q, &late), TK_OK);
    taker t;
    taker_start(&t, q, -1);
    sleep_ms(30); /* t spins for `late` (inside the 1 s window) */
    node_at(&early, tk_clock_now_ns() + 30 * MS, 2);
    assert_int_equal(ops->offer(q, &early), TK_OK);
    taker_join(&t);
    assert_int_equal(t.rc, TK_OK);
    assert_ptr_equal(t.got, &early);
    assert_true(t.returned_ns >= early.deadline_ns);
    assert_true(t.returned_ns < late.deadline_ns); /* not after late's spin */
    assert_int_equal(ops->remove(q, &late), TK_OK);
    ops->destroy(q);
}

/* close() ends a spin at once. */
static void close_now_ends_the_leaders_spin(void **state) {
    (void)state;
    tk_queue *q = make_spinning_queue(TK_NS_PER_S);
    tk_node n;
    node_at(&n, tk_clock_now_ns() + 900 * MS, 1);
    assert_int_equal(ops->offer(q, &n), TK_OK);
    taker t;
    taker_start(&t, q, -1);
    sleep_ms(30);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    taker_join(&t);
    assert_int_equal(t.rc, TK_ECLOSED);
    assert_true(t.returned_ns < n.deadline_ns);
    assert_int_equal(ops->size(q), 1);
    assert_non_null(ops->drain(q));
    ops->destroy(q);
}

static void a_leader_waiting_for_the_end_of_time_is_still_released_by_close(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node n;
    node_at(&n, INT64_MAX, 0);
    assert_int_equal(ops->offer(q, &n), TK_OK);
    taker t[2];
    taker_start(&t[0], q, -1);
    taker_start(&t[1], q, INT64_MAX); /* poll() that never gives up */
    sleep_ms(30);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    taker_join(&t[0]);
    taker_join(&t[1]);
    assert_int_equal(t[0].rc, TK_ECLOSED);
    assert_int_equal(t[1].rc, TK_ECLOSED);
    assert_int_equal(ops->size(q), 1);
    assert_ptr_equal(ops->drain(q), &n);
    ops->destroy(q);
}

static void poll_gives_up_after_its_timeout(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node *got = NULL;
    assert_int_equal(ops->poll(q, 0, &got), TK_ETIMEDOUT);
    assert_int_equal(ops->poll(q, -5 * MS, &got), TK_ETIMEDOUT);
    int64_t start = tk_clock_now_ns();
    assert_int_equal(ops->poll(q, 30 * MS, &got), TK_ETIMEDOUT);
    assert_true(tk_clock_now_ns() - start >= 30 * MS);

    tk_node later;
    node_at(&later, tk_clock_now_ns() + 10 * TK_NS_PER_S, 0);
    assert_int_equal(ops->offer(q, &later), TK_OK);
    start = tk_clock_now_ns();
    assert_int_equal(ops->poll(q, 20 * MS, &got), TK_ETIMEDOUT);
    assert_true(tk_clock_now_ns() - start >= 20 * MS);
    assert_int_equal(ops->poll(q, 0, &got), TK_ETIMEDOUT);
    assert_int_equal(ops->size(q), 1);
    assert_int_equal(ops->remove(q, &later), TK_OK);
    ops->destroy(q);
}

static void poll_returns_a_node_that_falls_due_within_the_timeout(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node soon, due;
    node_at(&soon, tk_clock_now_ns() + 20 * MS, 1);
    assert_int_equal(ops->offer(q, &soon), TK_OK);
    tk_node *got = NULL;
    assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &got), TK_OK);
    assert_ptr_equal(got, &soon);
    assert_true(tk_clock_now_ns() >= soon.deadline_ns);

    node_at(&due, tk_clock_now_ns() - 1, 2);
    assert_int_equal(ops->offer(q, &due), TK_OK);
    got = NULL;
    assert_int_equal(ops->poll(q, 0, &got), TK_OK); /* due: no wait needed */
    assert_ptr_equal(got, &due);
    ops->destroy(q);
}

/* ---- close() ------------------------------------------------------------------ */

static void close_when_empty_hands_out_what_is_left_then_reports_closed(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    int64_t now = tk_clock_now_ns();
    tk_node n[4];
    node_at(&n[0], now - MS, 0);
    node_at(&n[1], now, 1);
    node_at(&n[2], now + 30 * MS, 2);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    tk_node *got = NULL;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ops->take(q, &got), TK_OK);
        assert_ptr_equal(got, &n[i]);
        assert_true(tk_clock_now_ns() >= got->deadline_ns);
    }
    assert_int_equal(ops->take(q, &got), TK_ECLOSED);
    assert_int_equal(ops->poll(q, 10 * MS, &got), TK_ECLOSED);
    /* offer still works (a periodic task re-queued during shutdown) */
    node_at(&n[3], tk_clock_now_ns() + 5 * MS, 3);
    assert_int_equal(ops->offer(q, &n[3]), TK_OK);
    assert_int_equal(ops->take(q, &got), TK_OK);
    assert_ptr_equal(got, &n[3]);
    assert_int_equal(ops->poll(q, 0, &got), TK_ECLOSED);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
}

static void close_when_empty_releases_takers_blocked_on_an_empty_queue(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    taker t[3];
    taker_start(&t[0], q, -1);
    taker_start(&t[1], q, -1);
    taker_start(&t[2], q, 10 * TK_NS_PER_S);
    sleep_ms(30);
    int64_t closed = tk_clock_now_ns();
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    for (int i = 0; i < 3; i++)
        taker_join(&t[i]);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(t[i].rc, TK_ECLOSED);
        assert_true(t[i].returned_ns - closed < 5 * TK_NS_PER_S);
    }
    ops->destroy(q);
}

static void close_when_empty_releases_the_other_takers_once_the_last_node_is_taken(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node n;
    node_at(&n, tk_clock_now_ns() + 40 * MS, 0);
    assert_int_equal(ops->offer(q, &n), TK_OK);
    taker t[3];
    for (int i = 0; i < 3; i++)
        taker_start(&t[i], q, -1);
    sleep_ms(10);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    for (int i = 0; i < 3; i++)
        taker_join(&t[i]);
    int ok = 0, closed = 0;
    for (int i = 0; i < 3; i++) {
        if (t[i].rc == TK_OK) {
            ok++;
            assert_ptr_equal(t[i].got, &n);
            assert_true(t[i].returned_ns >= n.deadline_ns);
        } else {
            assert_int_equal(t[i].rc, TK_ECLOSED);
            closed++;
        }
    }
    assert_int_equal(ok, 1);
    assert_int_equal(closed, 2);
    ops->destroy(q);
}

static bool pred_true(const tk_node *n, void *ctx) {
    (void)n;
    (void)ctx;
    return true;
}

static void close_when_empty_releases_takers_when_a_removal_empties_the_queue(void **state) {
    (void)state;
    /* the four ways to empty a queue without taking: remove, remove_first,
     * drain, remove_if */
    for (int way = 0; way < 4; way++) {
        tk_queue *q = make_queue();
        tk_node far;
        node_at(&far, tk_clock_now_ns() + 10 * TK_NS_PER_S, 0);
        assert_int_equal(ops->offer(q, &far), TK_OK);
        taker t[2];
        taker_start(&t[0], q, -1);
        taker_start(&t[1], q, -1);
        sleep_ms(20);
        ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* not empty yet: they wait on */
        sleep_ms(20);
        int64_t emptied = tk_clock_now_ns();
        tk_node *got = NULL;
        int rc = TK_OK;
        switch (way) {
        case 0:
            rc = ops->remove(q, &far);
            got = &far;
            break;
        case 1:
            rc = ops->remove_first(q, &got);
            break;
        case 2:
            got = ops->drain(q);
            break;
        default:
            got = ops->remove_if(q, pred_true, NULL);
            break;
        }
        taker_join(&t[0]);
        taker_join(&t[1]);
        assert_int_equal(rc, TK_OK);
        assert_ptr_equal(got, &far);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(t[i].rc, TK_ECLOSED);
            assert_true(t[i].returned_ns >= emptied);
            assert_true(t[i].returned_ns - emptied < 5 * TK_NS_PER_S);
        }
        assert_int_equal(ops->size(q), 0);
        ops->destroy(q);
    }
}

static void close_now_fails_takers_and_offers_at_once_and_keeps_the_nodes(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    int64_t now = tk_clock_now_ns();
    tk_node far, late;
    node_at(&far, now + 10 * TK_NS_PER_S, 1);
    assert_int_equal(ops->offer(q, &far), TK_OK);
    taker t[2];
    taker_start(&t[0], q, -1);
    taker_start(&t[1], q, 10 * TK_NS_PER_S);
    sleep_ms(30);
    int64_t closed = tk_clock_now_ns();
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    taker_join(&t[0]);
    taker_join(&t[1]);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(t[i].rc, TK_ECLOSED);
        assert_true(t[i].returned_ns - closed < 5 * TK_NS_PER_S);
    }
    node_at(&late, now, 2);
    assert_int_equal(ops->offer(q, &late), TK_ECLOSED);
    assert_int_equal(ops->size(q), 1);
    tk_node *got = NULL;
    assert_int_equal(ops->take(q, &got), TK_ECLOSED);
    assert_int_equal(ops->poll(q, 0, &got), TK_ECLOSED);
    assert_int_equal(ops->check(q), TK_OK);
    tk_node *list = ops->drain(q);
    assert_ptr_equal(list, &far);
    assert_null(tk_node_next_detached(list));
    ops->destroy(q);
}

static void close_now_fails_take_even_with_a_due_node_queued(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node due;
    node_at(&due, tk_clock_now_ns() - MS, 0);
    assert_int_equal(ops->offer(q, &due), TK_OK);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    tk_node *got = NULL;
    assert_int_equal(ops->take(q, &got), TK_ECLOSED);
    assert_int_equal(ops->remove(q, &due), TK_OK);
    ops->destroy(q);
}

static void close_now_may_follow_when_empty_but_not_the_reverse(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node n;
    node_at(&n, tk_clock_now_ns(), 0);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    assert_int_equal(ops->offer(q, &n), TK_OK);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    assert_int_equal(ops->remove(q, &n), TK_OK);
    assert_int_equal(ops->offer(q, &n), TK_ECLOSED);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* ignored: still NOW */
    assert_int_equal(ops->offer(q, &n), TK_ECLOSED);
    ops->close(q, (tk_queue_close_mode)42); /* unknown: ignored */
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);

    q = make_queue();
    ops->close(q, (tk_queue_close_mode)42);
    assert_int_equal(ops->offer(q, &n), TK_OK); /* still open */
    assert_int_equal(ops->remove(q, &n), TK_OK);
    ops->destroy(q);
}

/* ---- remove, remove_first, peek, size, drain, remove_if ------------------------- */

static void remove_takes_a_node_out_once_then_reports_enoent(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    int64_t now = tk_clock_now_ns();
    tk_node a, b, never;
    node_at(&a, now - MS, 0);               /* due */
    node_at(&b, now + 10 * TK_NS_PER_S, 1); /* not due */
    node_at(&never, now, 2);
    assert_int_equal(ops->offer(q, &a), TK_OK);
    assert_int_equal(ops->offer(q, &b), TK_OK);
    assert_int_equal(ops->remove(q, &b), TK_OK);
    assert_int_equal(ops->remove(q, &b), TK_ENOENT);
    assert_int_equal(ops->remove(q, &never), TK_ENOENT);
    assert_int_equal(ops->remove(q, NULL), TK_ENOENT);
    tk_node *got = NULL;
    assert_int_equal(ops->take(q, &got), TK_OK);
    assert_ptr_equal(got, &a);
    assert_int_equal(ops->remove(q, &a), TK_ENOENT); /* already handed out */
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
}

static void remove_first_returns_the_earliest_node_even_before_it_is_due(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    int64_t now = tk_clock_now_ns();
    tk_node a, b;
    node_at(&a, now + 20 * TK_NS_PER_S, 0);
    node_at(&b, now + 10 * TK_NS_PER_S, 1);
    tk_node *got = NULL;
    assert_int_equal(ops->remove_first(q, &got), TK_ENOENT);
    assert_int_equal(ops->offer(q, &a), TK_OK);
    assert_int_equal(ops->offer(q, &b), TK_OK);
    assert_int_equal(ops->remove_first(q, &got), TK_OK);
    assert_ptr_equal(got, &b);
    assert_int_equal(ops->remove_first(q, &got), TK_OK);
    assert_ptr_equal(got, &a);
    assert_int_equal(ops->remove_first(q, &got), TK_ENOENT);
    ops->destroy(q);
}

static void peek_and_size_report_the_head_without_removing_it(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    int64_t d = 0;
    uint64_t s = 0;
    assert_int_equal(ops->peek(q, &d, &s), TK_ENOENT);
    assert_int_equal(ops->size(q), 0);
    int64_t now = tk_clock_now_ns();
    tk_node n[3];
    node_at(&n[0], now + 30 * TK_NS_PER_S, 7);
    node_at(&n[1], now + 10 * TK_NS_PER_S, 9);
    node_at(&n[2], now + 10 * TK_NS_PER_S, 8);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
        assert_int_equal(ops->size(q), (size_t)i + 1);
    }
    assert_int_equal(ops->peek(q, &d, &s), TK_OK);
    assert_int_equal(d, now + 10 * TK_NS_PER_S);
    assert_int_equal(s, 8);
    assert_int_equal(ops->peek(q, NULL, NULL), TK_OK);
    assert_int_equal(ops->size(q), 3);
    assert_int_equal(ops->remove(q, &n[2]), TK_OK);
    assert_int_equal(ops->size(q), 2);
    assert_int_equal(ops->peek(q, &d, &s), TK_OK);
    assert_int_equal(s, 9);
    assert_non_null(ops->drain(q));
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
}

static void drain_returns_every_node_sorted_and_empties_the_queue(void **state) {
    (void)state;
    enum { N = 500 };
    tk_queue *q = make_queue();
    assert_null(ops->drain(q));
    tk_node *n = calloc(N, sizeof(*n));
    assert_non_null(n);
    int64_t now = tk_clock_now_ns();
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        node_at(&n[i], now + TK_NS_PER_S + (int64_t)(x >> 54), (uint64_t)i); /* ties likely */
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    size_t count = 0;
    const tk_node *prev = NULL;
    for (tk_node *it = ops->drain(q); it != NULL; it = tk_node_next_detached(it)) {
        if (prev != NULL)
            assert_true(prev->deadline_ns < it->deadline_ns ||
                        (prev->deadline_ns == it->deadline_ns && prev->seq < it->seq));
        prev = it;
        count++;
    }
    assert_int_equal(count, N);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    assert_int_equal(ops->remove(q, &n[0]), TK_ENOENT);
    ops->destroy(q);
    free(n);
}

static bool pred_odd_seq(const tk_node *n, void *ctx) {
    int *calls = ctx;
    (*calls)++;
    return n->seq % 2 == 1;
}

static void remove_if_removes_only_the_matching_nodes(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    int64_t now = tk_clock_now_ns();
    tk_node n[40];
    for (int i = 0; i < 40; i++) {
        node_at(&n[i], now + (40 - i) * TK_NS_PER_S, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    int calls = 0;
    size_t removed = 0;
    for (tk_node *it = ops->remove_if(q, pred_odd_seq, &calls); it != NULL;
         it = tk_node_next_detached(it)) {
        assert_int_equal(it->seq % 2, 1);
        removed++;
    }
    assert_int_equal(calls, 40);
    assert_int_equal(removed, 20);
    assert_int_equal(ops->size(q), 20);
    assert_int_equal(ops->check(q), TK_OK);
    assert_null(ops->remove_if(q, pred_odd_seq, &calls));
    tk_node *got = NULL;
    assert_int_equal(ops->remove_first(q, &got), TK_OK);
    assert_ptr_equal(got, &n[38]);
    assert_int_equal(ops->remove(q, &n[1]), TK_ENOENT);
    assert_int_equal(ops->remove(q, &n[0]), TK_OK);
    assert_non_null(ops->drain(q));
    ops->destroy(q);
}

/* ---- concurrency ----------------------------------------------------------------- */

enum { PRODUCERS = 2, CONSUMERS = 2, PER_PRODUCER = 1500 };

typedef struct exchange {
    tk_queue *q;
    tk_node *nodes; /* PRODUCERS * PER_PRODUCER */
} exchange;

typedef struct producer {
    pthread_t thread;
    exchange *x;
    int id;
    int failures;
} producer;

typedef struct consumer {
    pthread_t thread;
    exchange *x;
    unsigned char *got; /* per node: how many times this consumer took it */
    int early;
    int final_rc;
} consumer;

static void *producer_main(void *arg) {
    producer *p = arg;
    uint64_t s = (uint64_t)p->id * 7919 + 1;
    for (int i = 0; i < PER_PRODUCER; i++) {
        tk_node *n = &p->x->nodes[p->id * PER_PRODUCER + i];
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int64_t delay = (int64_t)((s >> 33) % (3 * MS)) - MS; /* some already due */
        node_at(n, tk_clock_now_ns() + delay, (uint64_t)(p->id * PER_PRODUCER + i));
        if (ops->offer(p->x->q, n) != TK_OK)
            p->failures++;
    }
    return NULL;
}

static void *consumer_main(void *arg) {
    consumer *c = arg;
    for (;;) {
        tk_node *n = NULL;
        int rc = ops->take(c->x->q, &n);
        if (rc != TK_OK) {
            c->final_rc = rc;
            return NULL;
        }
        if (tk_clock_now_ns() < n->deadline_ns)
            c->early++;
        c->got[n - c->x->nodes]++;
    }
}

static void producers_and_consumers_exchange_every_node_once_never_early(void **state) {
    (void)state;
    enum { TOTAL = PRODUCERS * PER_PRODUCER };
    exchange x = {make_queue(), calloc(TOTAL, sizeof(tk_node))};
    assert_non_null(x.nodes);
    producer p[PRODUCERS];
    consumer c[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++) {
        c[i] = (consumer){.x = &x, .got = calloc(TOTAL, 1)};
        assert_non_null(c[i].got);
        assert_int_equal(pthread_create(&c[i].thread, NULL, consumer_main, &c[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++) {
        p[i] = (producer){.x = &x, .id = i};
        assert_int_equal(pthread_create(&p[i].thread, NULL, producer_main, &p[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++)
        assert_int_equal(pthread_join(p[i].thread, NULL), 0);
    ops->close(x.q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    for (int i = 0; i < CONSUMERS; i++)
        assert_int_equal(pthread_join(c[i].thread, NULL), 0);
    for (int i = 0; i < PRODUCERS; i++)
        assert_int_equal(p[i].failures, 0);
    for (int i = 0; i < CONSUMERS; i++) {
        assert_int_equal(c[i].early, 0);
        assert_int_equal(c[i].final_rc, TK_ECLOSED);
    }
    for (int k = 0; k < TOTAL; k++) {
        int times = 0;
        for (int i = 0; i < CONSUMERS; i++)
            times += c[i].got[k];
        assert_int_equal(times, 1);
    }
    assert_int_equal(ops->size(x.q), 0);
    assert_int_equal(ops->check(x.q), TK_OK);
    for (int i = 0; i < CONSUMERS; i++)
        free(c[i].got);
    ops->destroy(x.q);
    free(x.nodes);
}

/* ---- take_batch() ---------------------------------------------------------------- */

static bool key_before(const tk_node *a, const tk_node *b) {
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

/* Length of a take_batch() list; *sorted is cleared if it is not in
 * (deadline, seq) order. */
static size_t batch_len(tk_node *l, bool *sorted) {
    size_t k = 0;
    for (tk_node *prev = NULL; l != NULL; prev = l, l = tk_node_next_detached(l)) {
        if (prev != NULL && !key_before(prev, l))
            *sorted = false;
        k++;
    }
    return k;
}

/* A thread blocked in take_batch(); it records, the test asserts. */
typedef struct batcher {
    pthread_t thread;
    tk_queue *q;
    size_t max;
    atomic_int done;
    int rc;
    tk_node *list;
    size_t count;
    int64_t returned_ns;
} batcher;

static void *batcher_main(void *arg) {
    batcher *b = arg;
    b->rc = ops->take_batch(b->q, b->max, &b->list, &b->count);
    b->returned_ns = tk_clock_now_ns();
    atomic_store(&b->done, 1);
    return NULL;
}

static void batcher_start(batcher *b, tk_queue *q, size_t max) {
    memset(b, 0, sizeof(*b));
    b->q = q;
    b->max = max;
    assert_int_equal(pthread_create(&b->thread, NULL, batcher_main, b), 0);
}

/* Waits (up to 5 s) until every batcher is done. */
static bool batchers_done(batcher *b, int n) {
    for (int ms = 0; ms < 5000; ms++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            k += atomic_load(&b[i].done);
        if (k == n)
            return true;
        sleep_ms(1);
    }
    return false;
}

static void take_batch_rejects_bad_input_and_removes_nothing(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node n, other;
    node_at(&n, tk_clock_now_ns() - MS, 0);
    assert_int_equal(ops->offer(q, &n), TK_OK);
    tk_node *l = &other;
    size_t k = 99;
    assert_int_equal(ops->take_batch(NULL, 4, &l, &k), TK_EINVAL);
    assert_null(l);
    assert_int_equal(k, 0);
    l = &other;
    k = 99;
    assert_int_equal(ops->take_batch(q, 0, &l, &k), TK_EINVAL);
    assert_null(l);
    assert_int_equal(k, 0);
    k = 99;
    assert_int_equal(ops->take_batch(q, 4, NULL, &k), TK_EINVAL);
    assert_int_equal(k, 0);
    l = &other;
    assert_int_equal(ops->take_batch(q, 4, &l, NULL), TK_EINVAL);
    assert_null(l);
    assert_int_equal(ops->size(q), 1);
    assert_int_equal(ops->check(q), TK_OK);
    assert_int_equal(ops->take_batch(q, 4, &l, &k), TK_OK);
    assert_ptr_equal(l, &n);
    assert_int_equal(k, 1);
    assert_null(tk_node_next_detached(l));
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
}

static int cmp_node_ptr(const void *a, const void *b) {
    const tk_node *x = *(tk_node *const *)a, *y = *(tk_node *const *)b;
    return key_before(x, y) ? -1 : key_before(y, x) ? 1 : 0;
}

/* Batches of at most `max`, never early, and together exactly take()'s
 * order, (deadline, seq), equal deadlines included. */
static void take_batch_hands_out_every_node_once_in_take_order_never_early(void **state) {
    (void)state;
    enum { N = 300, MAX = 5 };
    tk_queue *q = make_queue();
    tk_node *n = calloc(N, sizeof(*n));
    tk_node **ref = calloc(N, sizeof(*ref));
    unsigned char *seen = calloc(N, 1);
    assert_true(n != NULL && ref != NULL && seen != NULL);
    int64_t base = tk_clock_now_ns() + 10 * MS;
    uint64_t s = 5;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        /* over 40 ms, a quarter of a ms apart: many equal deadlines */
        node_at(&n[i], base + (int64_t)((s >> 33) % 160) * 250 * TK_NS_PER_US,
                (uint64_t)((i * 7919) % N));
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
        ref[i] = &n[i];
    }
    qsort(ref, N, sizeof(*ref), cmp_node_ptr);
    int got = 0, batches = 0, early = 0, unsorted = 0, wrong = 0;
    while (got < N) {
        tk_node *l = NULL;
        size_t k = 0;
        assert_int_equal(ops->take_batch(q, MAX, &l, &k), TK_OK);
        int64_t at = tk_clock_now_ns();
        bool sorted = true;
        assert_true(k >= 1 && k <= MAX);
        assert_int_equal(batch_len(l, &sorted), k);
        unsorted += !sorted;
        for (; l != NULL; l = tk_node_next_detached(l)) {
            early += at < l->deadline_ns;
            assert_true(got < N);
            wrong += l != ref[got];
            seen[l - n]++;
            got++;
        }
        batches++;
        if (batches % 16 == 0)
            assert_int_equal(ops->check(q), TK_OK);
    }
    assert_int_equal(early, 0);
    assert_int_equal(unsorted, 0);
    assert_int_equal(wrong, 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
    print_message("  %d nodes in %d batches of at most %d\n", N, batches, MAX);
    tk_node *x;
    assert_int_equal(ops->poll(q, 0, &x), TK_ETIMEDOUT);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    free(seen);
    free(ref);
    free(n);
}

/* Alone, a batch holds min(max, due): exactly `max` while more are due,
 * then the rest, and never a node that is not due. */
static void take_batch_alone_takes_min_of_max_and_the_due_nodes_only(void **state) {
    (void)state;
    enum { DUE = 50, LATER = 10 };
    tk_queue *q = make_queue();
    tk_node n[DUE + LATER + 5];
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < DUE; i++)
        node_at(&n[i], now - MS - (i * 37) % 11, (uint64_t)i);
    for (int i = DUE; i < DUE + LATER; i++)
        node_at(&n[i], now + 3600 * TK_NS_PER_S + i, (uint64_t)i);
    for (int i = DUE + LATER; i < DUE + LATER + 5; i++)
        node_at(&n[i], now - 2 * MS, (uint64_t)i);
    for (int i = 0; i < DUE + LATER; i++)
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    const size_t want[3] = {20, 20, 10};
    tk_node *prev = NULL;
    for (int b = 0; b < 3; b++) {
        tk_node *l;
        size_t k;
        assert_int_equal(ops->take_batch(q, 20, &l, &k), TK_OK);
        bool sorted = true;
        assert_int_equal(k, want[b]);
        assert_int_equal(batch_len(l, &sorted), k);
        assert_true(sorted);
        if (prev != NULL)
            assert_true(key_before(prev, l));
        for (; l != NULL; l = tk_node_next_detached(l)) {
            assert_true(l - n < DUE);
            prev = l;
        }
    }
    assert_int_equal(ops->size(q), LATER);
    tk_node *x;
    assert_int_equal(ops->poll(q, 0, &x), TK_ETIMEDOUT);
    for (int i = DUE + LATER; i < DUE + LATER + 5; i++)
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    tk_node *l;
    size_t k;
    assert_int_equal(ops->take_batch(q, SIZE_MAX, &l, &k), TK_OK);
    assert_int_equal(k, 5);
    assert_int_equal(ops->size(q), LATER);
    assert_int_equal(ops->check(q), TK_OK);
    int left = 0;
    for (l = ops->drain(q); l != NULL; l = tk_node_next_detached(l))
        left++;
    assert_int_equal(left, LATER);
    ops->destroy(q);
}

/* take_batch() waits as take() does: for the head's deadline (also when
 * spinning), or on an empty queue until an offer. */
static void take_batch_blocks_until_a_node_is_due_spinning_or_not(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node n[2];
    node_at(&n[0], tk_clock_now_ns() + 40 * MS, 0);
    assert_int_equal(ops->offer(q, &n[0]), TK_OK);
    tk_node *l;
    size_t k;
    assert_int_equal(ops->take_batch(q, 16, &l, &k), TK_OK);
    assert_true(tk_clock_now_ns() >= n[0].deadline_ns);
    assert_ptr_equal(l, &n[0]);
    assert_int_equal(k, 1);

    batcher b;
    batcher_start(&b, q, 16);
    sleep_ms(50);
    assert_int_equal(atomic_load(&b.done), 0);
    node_at(&n[1], tk_clock_now_ns() + 20 * MS, 1);
    assert_int_equal(ops->offer(q, &n[1]), TK_OK);
    assert_int_equal(pthread_join(b.thread, NULL), 0);
    assert_int_equal(b.rc, TK_OK);
    assert_ptr_equal(b.list, &n[1]);
    assert_int_equal(b.count, 1);
    assert_true(b.returned_ns >= n[1].deadline_ns);
    ops->destroy(q);

    /* spinning: in order, never early, whether the head was far or near */
    q = make_spinning_queue(5 * MS);
    enum { K = 20 };
    tk_node m[K];
    int64_t base = tk_clock_now_ns();
    for (int i = 0; i < K; i++) {
        node_at(&m[i], base + (int64_t)(i + 1) * 2 * MS, (uint64_t)i);
        assert_int_equal(ops->offer(q, &m[i]), TK_OK);
    }
    int got = 0, early = 0, wrong = 0;
    while (got < K) {
        assert_int_equal(ops->take_batch(q, 3, &l, &k), TK_OK);
        int64_t at = tk_clock_now_ns();
        assert_true(k >= 1 && k <= 3);
        for (; l != NULL; l = tk_node_next_detached(l)) {
            early += at < l->deadline_ns;
            wrong += got >= K || l != &m[got];
            got++;
        }
    }
    assert_int_equal(got, K);
    assert_int_equal(early, 0);
    assert_int_equal(wrong, 0);
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
}

static void take_batch_close_when_empty_and_close_now(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node n[5];
    int64_t d = tk_clock_now_ns() + 20 * MS;
    for (int i = 0; i < 3; i++) {
        node_at(&n[i], d, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    tk_node *l;
    size_t k;
    assert_int_equal(ops->take_batch(q, 8, &l, &k), TK_OK); /* still handed out */
    assert_true(tk_clock_now_ns() >= d);
    assert_int_equal(k, 3);
    assert_ptr_equal(l, &n[0]);
    l = &n[4];
    k = 9;
    assert_int_equal(ops->take_batch(q, 8, &l, &k), TK_ECLOSED);
    assert_null(l);
    assert_int_equal(k, 0);

    /* blocked batch takers are released when a removal empties the queue */
    node_at(&n[3], tk_clock_now_ns() + 60 * TK_NS_PER_S, 3);
    assert_int_equal(ops->offer(q, &n[3]), TK_OK);
    batcher b[2];
    batcher_start(&b[0], q, 8);
    batcher_start(&b[1], q, 8);
    sleep_ms(50);
    assert_int_equal(atomic_load(&b[0].done) + atomic_load(&b[1].done), 0);
    assert_int_equal(ops->remove(q, &n[3]), TK_OK);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(b[i].thread, NULL), 0);
        assert_int_equal(b[i].rc, TK_ECLOSED);
        assert_null(b[i].list);
        assert_int_equal(b[i].count, 0);
    }
    ops->destroy(q);

    /* NOW: TK_ECLOSED at once, blocked or not, due nodes or not */
    q = make_queue();
    node_at(&n[0], tk_clock_now_ns() + 60 * TK_NS_PER_S, 0);
    assert_int_equal(ops->offer(q, &n[0]), TK_OK);
    batcher_start(&b[0], q, 8);
    sleep_ms(30);
    assert_int_equal(atomic_load(&b[0].done), 0);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    assert_int_equal(pthread_join(b[0].thread, NULL), 0);
    assert_int_equal(b[0].rc, TK_ECLOSED);
    assert_int_equal(ops->remove(q, &n[0]), TK_OK);
    ops->destroy(q);

    q = make_queue();
    node_at(&n[1], tk_clock_now_ns() - MS, 1);
    assert_int_equal(ops->offer(q, &n[1]), TK_OK);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    assert_int_equal(ops->take_batch(q, 8, &l, &k), TK_ECLOSED);
    assert_int_equal(ops->size(q), 1);
    assert_ptr_equal(ops->drain(q), &n[1]);
    ops->destroy(q);
}

/* Nodes handed out by a batch are the caller's: remove() answers TK_ENOENT
 * and they can be offered again. */
static void nodes_handed_out_by_take_batch_answer_enoent_to_remove(void **state) {
    (void)state;
    enum { N = 10 };
    tk_queue *q = make_queue();
    tk_node n[N];
    int64_t past = tk_clock_now_ns() - MS;
    for (int i = 0; i < N; i++) {
        node_at(&n[i], past, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    tk_node *l;
    size_t k;
    assert_int_equal(ops->take_batch(q, N, &l, &k), TK_OK);
    assert_int_equal(k, N);
    int i = 0;
    for (tk_node *x = l; x != NULL; x = tk_node_next_detached(x), i++) {
        assert_ptr_equal(x, &n[i]);
        assert_int_equal(ops->remove(q, x), TK_ENOENT);
    }
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    /* the last node's link reads as slot 0 of the array: still not queued */
    node_at(&n[0], tk_clock_now_ns() + TK_NS_PER_S, 100);
    assert_int_equal(ops->offer(q, &n[0]), TK_OK);
    assert_int_equal(ops->remove(q, &n[N - 1]), TK_ENOENT);
    assert_int_equal(ops->size(q), 1);
    /* offered again, a handed-out node comes back */
    node_at(&n[N - 1], tk_clock_now_ns() - 1, 101);
    assert_int_equal(ops->offer(q, &n[N - 1]), TK_OK);
    tk_node *x;
    assert_int_equal(ops->poll(q, TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &n[N - 1]);
    assert_int_equal(ops->remove(q, &n[0]), TK_OK);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
}

/* A batch taker that led and leaves nodes behind that are not due hands the
 * leadership on: the other taker takes the next head when it is due. */
static void a_batch_leader_hands_leadership_on_when_nodes_remain(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    batcher b[2];
    batcher_start(&b[0], q, 16);
    batcher_start(&b[1], q, 16);
    sleep_ms(30);
    int64_t now = tk_clock_now_ns();
    tk_node first, second;
    node_at(&first, now + 30 * MS, 0);
    node_at(&second, now + 90 * MS, 1);
    assert_int_equal(ops->offer(q, &first), TK_OK);
    assert_int_equal(ops->offer(q, &second), TK_OK);
    bool done = batchers_done(b, 2);
    if (!done)
        ops->close(q, TK_QUEUE_CLOSE_NOW); /* release a taker left waiting */
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(b[i].thread, NULL), 0);
    assert_true(done);
    batcher *a = b[0].list == &first ? &b[0] : &b[1];
    batcher *c = a == &b[0] ? &b[1] : &b[0];
    assert_int_equal(a->rc, TK_OK);
    assert_int_equal(c->rc, TK_OK);
    assert_ptr_equal(a->list, &first);
    assert_int_equal(a->count, 1);
    assert_ptr_equal(c->list, &second);
    assert_int_equal(c->count, 1);
    assert_true(a->returned_ns >= first.deadline_ns);
    assert_true(c->returned_ns >= second.deadline_ns);
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
}

/* Two takers waiting in take_batch() when 40 nodes fall due at once share
 * them: the leader takes half (the other waits) and wakes the other for the
 * rest, instead of taking all while the other sleeps on. */
static void waiting_batch_takers_share_the_due_nodes(void **state) {
    (void)state;
    enum { N = 40 };
    tk_queue *q = make_queue();
    tk_node n[N];
    batcher b[2];
    batcher_start(&b[0], q, 100);
    batcher_start(&b[1], q, 100);
    sleep_ms(100); /* both blocked */
    int64_t d = tk_clock_now_ns() + 30 * MS;
    for (int i = 0; i < N; i++) {
        node_at(&n[i], d, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    bool in_time = tk_clock_now_ns() < d;
    bool done = batchers_done(b, 2);          /* before any close: the leader woke the other */
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* frees a taker left without nodes */
    unsigned char seen[N] = {0};
    size_t total = 0;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(b[i].thread, NULL), 0);
        if (b[i].rc != TK_OK)
            continue;
        bool sorted = true;
        assert_int_equal(batch_len(b[i].list, &sorted), b[i].count);
        assert_true(sorted);
        assert_true(b[i].returned_ns >= d);
        for (tk_node *x = b[i].list; x != NULL; x = tk_node_next_detached(x))
            seen[x - n]++;
        total += b[i].count;
    }
    print_message("  %d nodes due together: %zu and %zu%s\n", N, b[0].count, b[1].count,
                  in_time ? "" : " [offering overran the deadline: shares not checked]");
    for (tk_node *x; total < N; total++) {
        assert_int_equal(ops->poll(q, 0, &x), TK_OK);
        seen[x - n]++;
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
    if (in_time) {
        assert_true(done);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(b[i].rc, TK_OK);
            assert_int_equal(b[i].count, N / 2);
        }
    }
    ops->destroy(q);
}

/* ---- resizing the array outside the lock ------------------------------------------ */

/* A thread-safe allocator that counts, can fail, and can check, from inside
 * each allocation and free, that another thread can still use the queue (so
 * the engine's lock is not held around it). */
typedef struct probe_alloc {
    pthread_mutex_t mu;
    long fail_after; /* mu; < 0: never fail */
    size_t live_bytes, allocs, frees;
    tk_queue *probe_q;     /* mu; NULL: no probing */
    int probes, stuck;     /* mu; stuck: probes not answered within 5 s */
    pthread_t stuck_th[4]; /* mu; helpers to join once the test is over */
} probe_alloc;

typedef struct probe_call {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tk_queue *q;
    bool done;
} probe_call;

static void *probe_main(void *arg) {
    probe_call *c = arg;
    (void)ops->size(c->q); /* takes the engine lock */
    pthread_mutex_lock(&c->mu);
    c->done = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Asks another thread to use the queue and waits for it (5 s at most). */
static void probe_queue(probe_alloc *p) {
    pthread_mutex_lock(&p->mu);
    tk_queue *q = p->probe_q;
    bool room = p->stuck < 4; /* after four, the verdict is in */
    pthread_mutex_unlock(&p->mu);
    if (q == NULL || !room)
        return;
    probe_call *c = calloc(1, sizeof(*c)); /* outlives us if the helper gets stuck */
    if (c == NULL)
        return;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->q = q;
    pthread_t th;
    if (pthread_create(&th, NULL, probe_main, c) != 0) {
        free(c);
        return;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&c->mu);
    while (!c->done && pthread_cond_timedwait(&c->cv, &c->mu, &until) == 0) {
    }
    bool done = c->done;
    pthread_mutex_unlock(&c->mu);
    pthread_mutex_lock(&p->mu);
    p->probes++;
    if (!done)
        p->stuck_th[p->stuck++] = th; /* c leaks with it: the test fails anyway */
    pthread_mutex_unlock(&p->mu);
    if (done) {
        pthread_join(th, NULL);
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        free(c);
    }
}

static void *probe_alloc_fn(void *ctx, size_t size) {
    probe_alloc *p = ctx;
    probe_queue(p);
    pthread_mutex_lock(&p->mu);
    bool fail = p->fail_after == 0;
    if (p->fail_after > 0)
        p->fail_after--;
    pthread_mutex_unlock(&p->mu);
    void *ptr = fail ? NULL : malloc(size);
    if (ptr != NULL) {
        pthread_mutex_lock(&p->mu);
        p->live_bytes += size;
        p->allocs++;
        pthread_mutex_unlock(&p->mu);
    }
    return ptr;
}

static void probe_free_fn(void *ctx, void *ptr, size_t size) {
    probe_alloc *p = ctx;
    probe_queue(p);
    pthread_mutex_lock(&p->mu);
    p->live_bytes -= size;
    p->frees++;
    pthread_mutex_unlock(&p->mu);
    free(ptr);
}

static void probe_alloc_init(probe_alloc *p, tk_allocator *a) {
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    p->fail_after = -1;
    *a = (tk_allocator){probe_alloc_fn, probe_free_fn, p};
}

static size_t probe_live(probe_alloc *p) {
    pthread_mutex_lock(&p->mu);
    size_t v = p->live_bytes;
    pthread_mutex_unlock(&p->mu);
    return v;
}

static size_t probe_allocs(probe_alloc *p) {
    pthread_mutex_lock(&p->mu);
    size_t v = p->allocs;
    pthread_mutex_unlock(&p->mu);
    return v;
}

static void probe_set(probe_alloc *p, tk_queue *q, long fail_after) {
    pthread_mutex_lock(&p->mu);
    p->probe_q = q;
    p->fail_after = fail_after;
    pthread_mutex_unlock(&p->mu);
}

static void probe_alloc_finish(probe_alloc *p) {
    for (int i = 0; i < p->stuck; i++)
        pthread_join(p->stuck_th[i], NULL);
    pthread_mutex_destroy(&p->mu);
}

static tk_queue *make_queue_with(const tk_allocator *a, size_t initial_capacity) {
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
    cfg.allocator = a;
    if (initial_capacity != 0) /* 0: the default */
        assert_int_equal(tk_queue_config_set_value(&cfg, "capacity", (int64_t)initial_capacity),
                         TK_OK);
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_OK);
    return q;
}

static void the_array_grows_before_it_is_full_and_shrinks_after_a_mass_removal(void **state) {
    (void)state;
    enum { N = 5000 };
    probe_alloc p;
    tk_allocator a;
    probe_alloc_init(&p, &a);
    tk_queue *q = make_queue_with(&a, 32);
    size_t live0 = probe_live(&p), allocs0 = probe_allocs(&p);
    tk_node *n = calloc(N, sizeof(*n));
    assert_non_null(n);
    int64_t far = tk_clock_now_ns() + 3600 * TK_NS_PER_S;
    for (int i = 0; i < 29; i++) {
        node_at(&n[i], far + i, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    assert_int_equal(probe_allocs(&p), allocs0);
    node_at(&n[29], far + 29, 29);
    assert_int_equal(ops->offer(q, &n[29]), TK_OK); /* 30 of 32 slots: grows now */
    assert_int_equal(probe_allocs(&p), allocs0 + 1);
    assert_true(probe_live(&p) > live0);
    for (int i = 30; i < N; i++) {
        node_at(&n[i], far + (i * 7919) % N, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    assert_int_equal(ops->check(q), TK_OK);
    assert_true(probe_live(&p) >= live0 + (N - 32) * 2 * sizeof(int64_t));
    for (int i = 0; i < N; i++)
        assert_int_equal(ops->remove(q, &n[(i * 31) % N]), TK_OK);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    assert_int_equal(probe_live(&p), live0); /* back to the initial array */
    ops->destroy(q);
    assert_int_equal(probe_live(&p), 0);
    probe_alloc_finish(&p);
    free(n);
}

static void
an_offer_that_cannot_grow_a_full_array_reports_enomem_and_changes_nothing(void **state) {
    (void)state;
    probe_alloc p;
    tk_allocator a;
    probe_alloc_init(&p, &a);
    tk_queue *q = make_queue_with(&a, 8);
    probe_set(&p, NULL, 0); /* every allocation fails from now on */
    tk_node n[9];
    int64_t far = tk_clock_now_ns() + 3600 * TK_NS_PER_S;
    for (int i = 0; i < 8; i++) { /* the grow due after the 8th fails quietly */
        node_at(&n[i], far - i, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    node_at(&n[8], far - 100, 8); /* would be the new head */
    assert_int_equal(ops->offer(q, &n[8]), TK_ENOMEM);
    assert_int_equal(ops->size(q), 8);
    assert_int_equal(ops->check(q), TK_OK);
    int64_t head = 0;
    assert_int_equal(ops->peek(q, &head, NULL), TK_OK);
    assert_int_equal(head, far - 7);
    assert_int_equal(ops->remove(q, &n[8]), TK_ENOENT);
    probe_set(&p, NULL, -1); /* memory is back */
    assert_int_equal(ops->offer(q, &n[8]), TK_OK);
    assert_int_equal(ops->size(q), 9);
    tk_node *list = ops->drain(q);
    assert_ptr_equal(list, &n[8]);
    int count = 0;
    for (tk_node *x = list; x != NULL; x = tk_node_next_detached(x))
        count++;
    assert_int_equal(count, 9);
    ops->destroy(q);
    assert_int_equal(probe_live(&p), 0);
    probe_alloc_finish(&p);
}

static void resizes_allocate_and_free_while_other_threads_can_use_the_queue(void **state) {
    (void)state;
    enum { N = 2000 };
    probe_alloc p;
    tk_allocator a;
    probe_alloc_init(&p, &a);
    tk_queue *q = make_queue_with(&a, 4);
    probe_set(&p, q, -1);
    tk_node *n = calloc(N, sizeof(*n));
    assert_non_null(n);
    int64_t far = tk_clock_now_ns() + 3600 * TK_NS_PER_S;
    for (int i = 0; i < N; i++) { /* grows, ahead of need and when full */
        node_at(&n[i], far + i % 97, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    for (int i = 0; i < N / 2; i++) /* shrinks */
        assert_int_equal(ops->remove(q, &n[i]), TK_OK);
    tk_node *first = NULL;
    for (int i = 0; i < N / 4; i++)
        assert_int_equal(ops->remove_first(q, &first), TK_OK);
    assert_non_null(ops->drain(q));
    probe_set(&p, NULL, -1);
    pthread_mutex_lock(&p.mu);
    int probes = p.probes, stuck = p.stuck;
    pthread_mutex_unlock(&p.mu);
    assert_true(probes >= 10); /* several grows and shrinks, each an alloc and a free */
    assert_int_equal(stuck, 0);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    assert_int_equal(probe_live(&p), 0);
    probe_alloc_finish(&p);
    free(n);
}

/* Producers, takers and a remover on one queue that starts with four slots:
 * the array grows and shrinks many times under them. */
enum { R_PRODUCERS = 3, R_TAKERS = 2, R_PER_PRODUCER = 20000 };

typedef struct race {
    tk_queue *q;
    tk_node *nodes;                  /* R_PRODUCERS * R_PER_PRODUCER */
    atomic_int offered[R_PRODUCERS]; /* nodes offered so far, per producer */
    atomic_int producers_done;
    unsigned char got[R_TAKERS + 1][R_PRODUCERS * R_PER_PRODUCER]; /* last row: remover */
    int early[R_TAKERS], final_rc[R_TAKERS], offer_failures;
    size_t batch_max;  /* 0: the takers call take(); else take_batch() with it */
    int bad[R_TAKERS]; /* batches empty, too long, miscounted or out of order */
    int batches[R_TAKERS];
} race;

typedef struct race_arg {
    race *r;
    int id;
} race_arg;

static void *race_producer(void *arg) {
    race_arg *ra = arg;
    race *r = ra->r;
    uint64_t s = (uint64_t)ra->id * 104729 + 7;
    for (int i = 0; i < R_PER_PRODUCER; i++) {
        int k = ra->id * R_PER_PRODUCER + i;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        /* from 1 ms ago to 20 ms ahead, so the queue fills up, then drains */
        int64_t delay = (int64_t)((s >> 33) % (21 * MS)) - MS;
        node_at(&r->nodes[k], tk_clock_now_ns() + delay, (uint64_t)k);
        if (ops->offer(r->q, &r->nodes[k]) != TK_OK)
            r->offer_failures++; /* only this thread writes it */
        atomic_store_explicit(&r->offered[ra->id], i + 1, memory_order_release);
    }
    atomic_fetch_add(&r->producers_done, 1);
    return NULL;
}

static void *race_taker(void *arg) {
    race_arg *ra = arg;
    race *r = ra->r;
    for (;;) {
        tk_node *n = NULL;
        size_t k = 1;
        int rc =
            r->batch_max == 0 ? ops->take(r->q, &n) : ops->take_batch(r->q, r->batch_max, &n, &k);
        if (rc != TK_OK) {
            r->final_rc[ra->id] = rc;
            return NULL;
        }
        int64_t at = tk_clock_now_ns();
        if (r->batch_max != 0) {
            bool sorted = true;
            if (k < 1 || k > r->batch_max || batch_len(n, &sorted) != k || !sorted)
                r->bad[ra->id]++;
            r->batches[ra->id]++;
        }
        /* (a node from take() has no list link: the remover may be reading
         * its private area, under the engine lock, this very moment) */
        for (size_t i = 0; i < k; i++, n = i < k ? tk_node_next_detached(n) : NULL) {
            if (at < n->deadline_ns)
                r->early[ra->id]++;
            r->got[ra->id][n - r->nodes]++;
        }
    }
}

static void *race_remover(void *arg) {
    race *r = arg;
    uint64_t s = 99;
    while (atomic_load(&r->producers_done) < R_PRODUCERS) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int id = (int)((s >> 33) % R_PRODUCERS);
        int offered = atomic_load_explicit(&r->offered[id], memory_order_acquire);
        if (offered == 0)
            continue;
        /* one of the latest offers: the likeliest to be still queued */
        int back = (int)((s >> 13) % 64);
        int i = offered - 1 - (back < offered ? back : 0);
        int k = id * R_PER_PRODUCER + i;
        if (ops->remove(r->q, &r->nodes[k]) == TK_OK)
            r->got[R_TAKERS][k]++;
    }
    return NULL;
}

/* Producers, two takers (take(), or take_batch() with batch_max) and a
 * remover race while the array grows and shrinks under them. */
static void run_resize_race(size_t batch_max) {
    enum { TOTAL = R_PRODUCERS * R_PER_PRODUCER };
    probe_alloc p;
    tk_allocator a;
    probe_alloc_init(&p, &a);
    race *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    r->nodes = calloc(TOTAL, sizeof(tk_node));
    assert_non_null(r->nodes);
    r->q = make_queue_with(&a, 4);
    r->batch_max = batch_max;
    size_t live0 = probe_live(&p), allocs0 = probe_allocs(&p);
    pthread_t prod[R_PRODUCERS], tak[R_TAKERS], rem;
    race_arg pa[R_PRODUCERS], ta[R_TAKERS];
    for (int i = 0; i < R_TAKERS; i++) {
        ta[i] = (race_arg){r, i};
        assert_int_equal(pthread_create(&tak[i], NULL, race_taker, &ta[i]), 0);
    }
    assert_int_equal(pthread_create(&rem, NULL, race_remover, r), 0);
    for (int i = 0; i < R_PRODUCERS; i++) {
        pa[i] = (race_arg){r, i};
        assert_int_equal(pthread_create(&prod[i], NULL, race_producer, &pa[i]), 0);
    }
    for (int i = 0; i < R_PRODUCERS; i++)
        assert_int_equal(pthread_join(prod[i], NULL), 0);
    assert_int_equal(pthread_join(rem, NULL), 0);
    ops->close(r->q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    for (int i = 0; i < R_TAKERS; i++)
        assert_int_equal(pthread_join(tak[i], NULL), 0);

    assert_int_equal(r->offer_failures, 0);
    for (int i = 0; i < R_TAKERS; i++) {
        assert_int_equal(r->early[i], 0);
        assert_int_equal(r->final_rc[i], TK_ECLOSED);
        assert_int_equal(r->bad[i], 0);
    }
    size_t removed = 0;
    for (int k = 0; k < TOTAL; k++) {
        int times = 0;
        for (int i = 0; i <= R_TAKERS; i++)
            times += r->got[i][k];
        if (times != 1)
            fail_msg("node %d left the queue %d times", k, times);
        removed += r->got[R_TAKERS][k];
    }
    assert_int_equal(ops->size(r->q), 0);
    assert_int_equal(ops->check(r->q), TK_OK);
    assert_true(probe_allocs(&p) > allocs0 + 4); /* it did resize, more than once */
    /* any shrink still due is done by the next operation: memory comes back */
    tk_node outsider;
    node_at(&outsider, 0, 0);
    assert_int_equal(ops->remove(r->q, &outsider), TK_ENOENT);
    assert_int_equal(probe_live(&p), live0);
    print_message("  %zu of %d nodes removed, the rest taken; %zu allocations\n", removed, TOTAL,
                  probe_allocs(&p) - allocs0);
    if (batch_max != 0)
        print_message("  batches of at most %zu: %d and %d\n", batch_max, r->batches[0],
                      r->batches[1]);
    ops->destroy(r->q);
    assert_int_equal(probe_live(&p), 0);
    probe_alloc_finish(&p);
    free(r->nodes);
    free(r);
}

static void offers_takes_and_removals_racing_with_resizes_lose_and_duplicate_nothing(void **state) {
    (void)state;
    run_resize_race(0);
}

/* The same race with two batch takers: nothing lost or duplicated, no batch
 * longer than its max or out of order, none early, and the memory comes
 * back once the queue is empty (pops never resize under the lock). */
static void
batch_takes_racing_with_offers_removals_and_resizes_lose_and_duplicate_nothing(void **state) {
    (void)state;
    run_resize_race(8);
}

/* ---- mass cancellation ----------------------------------------------------------- */

/* Many cancellations through the queue, alone and racing with takers: what is
 * left comes out exactly, in order, never early, and the memory follows. */
static void hundreds_of_thousands_of_cancels_leave_exactly_the_rest_to_take_in_order(void **state) {
    (void)state;
    enum { N = 300000, KEEP_EVERY = 10, KEPT = N / KEEP_EVERY };
    probe_alloc p;
    tk_allocator a;
    probe_alloc_init(&p, &a);
    tk_queue *q = make_queue_with(&a, 0);
    size_t live0 = probe_live(&p);
    tk_node *n = calloc(N, sizeof(*n));
    unsigned char *seen = calloc(N, 1);
    assert_true(n != NULL && seen != NULL);
    /* 40 ms from now on, spread over 60 ms, four nodes per deadline */
    int64_t base = tk_clock_now_ns() + 40 * MS;
    for (size_t i = 0; i < N; i++) {
        node_at(&n[i], base + (int64_t)((i * 7919) % (N / 4)) * 800, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    assert_int_equal(ops->size(q), N);
    size_t peak = probe_live(&p);
    /* cancel nine in ten, scattered, some of them twice */
    for (size_t k = 0; k < N; k++) {
        size_t i = (k * 104729) % N;
        if (i % KEEP_EVERY == 0)
            continue;
        assert_int_equal(ops->remove(q, &n[i]), TK_OK);
        if (k % 1000 == 0)
            assert_int_equal(ops->remove(q, &n[i]), TK_ENOENT);
    }
    assert_int_equal(ops->size(q), KEPT);
    assert_int_equal(ops->check(q), TK_OK);
    /* the array shrank with the population */
    assert_true(probe_live(&p) <= live0 + 8 * KEPT * 3 * sizeof(int64_t));
    assert_true(probe_live(&p) - live0 <= (peak - live0) / 4);
    /* what is left comes out, each once, in (deadline, seq) order, none early */
    int64_t prev_deadline = INT64_MIN;
    uint64_t prev_seq = 0;
    for (size_t j = 0; j < KEPT; j++) {
        tk_node *x = NULL;
        assert_int_equal(ops->take(q, &x), TK_OK);
        assert_true(tk_clock_now_ns() >= x->deadline_ns);
        size_t i = (size_t)(x - n);
        assert_true(i < N && i % KEEP_EVERY == 0 && !seen[i]);
        seen[i] = 1;
        assert_true(x->deadline_ns > prev_deadline ||
                    (x->deadline_ns == prev_deadline && x->seq > prev_seq));
        prev_deadline = x->deadline_ns;
        prev_seq = x->seq;
    }
    tk_node *x = NULL;
    assert_int_equal(ops->poll(q, 0, &x), TK_ETIMEDOUT);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    tk_node outsider;
    node_at(&outsider, 0, 0);
    assert_int_equal(ops->remove(q, &outsider), TK_ENOENT); /* an op: the last shrink */
    assert_int_equal(probe_live(&p), live0);
    ops->destroy(q);
    assert_int_equal(probe_live(&p), 0);
    probe_alloc_finish(&p);
    free(seen);
    free(n);
}

enum { C_NODES = 200000, C_TAKERS = 2 };

typedef struct cancel_race {
    tk_queue *q;
    tk_node *nodes;
    unsigned char taken[C_TAKERS][C_NODES];
    unsigned char removed[C_NODES];
    int early[C_TAKERS], final_rc[C_TAKERS];
} cancel_race;

typedef struct cancel_race_arg {
    cancel_race *r;
    int id;
} cancel_race_arg;

static void *cancel_race_taker(void *arg) {
    cancel_race_arg *ca = arg;
    cancel_race *r = ca->r;
    for (;;) {
        tk_node *x = NULL;
        int rc = ops->take(r->q, &x);
        if (rc != TK_OK) {
            r->final_rc[ca->id] = rc;
            return NULL;
        }
        if (tk_clock_now_ns() < x->deadline_ns)
            r->early[ca->id]++;
        r->taken[ca->id][x - r->nodes]++;
    }
}

static void *cancel_race_canceller(void *arg) {
    cancel_race *r = arg;
    for (size_t k = 0; k < C_NODES; k++) {
        size_t i = (k * 7919) % C_NODES;
        if (i % 5 != 0 && ops->remove(r->q, &r->nodes[i]) == TK_OK)
            r->removed[i]++;
    }
    return NULL;
}

static void cancels_racing_with_takes_never_hand_out_a_cancelled_node(void **state) {
    (void)state;
    probe_alloc p;
    tk_allocator a;
    probe_alloc_init(&p, &a);
    cancel_race *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    r->nodes = calloc(C_NODES, sizeof(tk_node));
    assert_non_null(r->nodes);
    r->q = make_queue_with(&a, 0);
    size_t live0 = probe_live(&p);
    /* due from 5 ms on, over 100 ms: takes and cancels overlap */
    int64_t base = tk_clock_now_ns() + 5 * MS;
    for (size_t i = 0; i < C_NODES; i++) {
        node_at(&r->nodes[i], base + (int64_t)((i * 104729) % C_NODES) * 500, (uint64_t)i);
        assert_int_equal(ops->offer(r->q, &r->nodes[i]), TK_OK);
    }
    pthread_t tak[C_TAKERS], can;
    cancel_race_arg ta[C_TAKERS];
    for (int i = 0; i < C_TAKERS; i++) {
        ta[i] = (cancel_race_arg){r, i};
        assert_int_equal(pthread_create(&tak[i], NULL, cancel_race_taker, &ta[i]), 0);
    }
    assert_int_equal(pthread_create(&can, NULL, cancel_race_canceller, r), 0);
    assert_int_equal(pthread_join(can, NULL), 0);
    ops->close(r->q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    for (int i = 0; i < C_TAKERS; i++)
        assert_int_equal(pthread_join(tak[i], NULL), 0);

    size_t removed = 0;
    for (int i = 0; i < C_TAKERS; i++) {
        assert_int_equal(r->early[i], 0);
        assert_int_equal(r->final_rc[i], TK_ECLOSED);
    }
    for (size_t k = 0; k < C_NODES; k++) {
        int times = r->removed[k];
        for (int i = 0; i < C_TAKERS; i++)
            times += r->taken[i][k];
        if (times != 1)
            fail_msg("node %zu left the queue %d times", k, times);
        if (k % 5 == 0 && r->removed[k] != 0)
            fail_msg("node %zu was never cancelled but was removed", k);
        removed += r->removed[k];
    }
    assert_true(removed > 0);
    assert_int_equal(ops->size(r->q), 0);
    assert_int_equal(ops->check(r->q), TK_OK);
    tk_node outsider;
    node_at(&outsider, 0, 0);
    assert_int_equal(ops->remove(r->q, &outsider), TK_ENOENT);
    assert_int_equal(probe_live(&p), live0);
    print_message("  %zu of %d nodes cancelled, the rest taken\n", removed, C_NODES);
    ops->destroy(r->q);
    probe_alloc_finish(&p);
    free(r->nodes);
    free(r);
}

static int setup_ops(void **state) {
    (void)state;
    ops = tk_engine_heap();
    return ops != NULL ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ops_table_is_named_heap_has_exact_order_and_every_op),
        cmocka_unit_test(create_uses_the_configured_allocator_and_reports_enomem),
        cmocka_unit_test(offer_rejects_null_and_a_node_already_queued),
        cmocka_unit_test(take_never_returns_a_node_before_its_deadline),
        cmocka_unit_test(equal_deadlines_are_taken_in_seq_order),
        cmocka_unit_test(blocked_takers_each_get_one_node_none_early),
        cmocka_unit_test(an_earlier_offer_wakes_the_sleeping_leader),
        cmocka_unit_test(a_leader_waiting_for_the_end_of_time_is_still_released_by_close),
        cmocka_unit_test(spin_ns_outside_zero_to_one_second_is_einval),
        cmocka_unit_test(a_spinning_leader_never_returns_a_node_early),
        cmocka_unit_test(an_earlier_offer_ends_the_leaders_spin),
        cmocka_unit_test(close_now_ends_the_leaders_spin),
        cmocka_unit_test(poll_gives_up_after_its_timeout),
        cmocka_unit_test(poll_returns_a_node_that_falls_due_within_the_timeout),
        cmocka_unit_test(close_when_empty_hands_out_what_is_left_then_reports_closed),
        cmocka_unit_test(close_when_empty_releases_takers_blocked_on_an_empty_queue),
        cmocka_unit_test(close_when_empty_releases_the_other_takers_once_the_last_node_is_taken),
        cmocka_unit_test(close_when_empty_releases_takers_when_a_removal_empties_the_queue),
        cmocka_unit_test(close_now_fails_takers_and_offers_at_once_and_keeps_the_nodes),
        cmocka_unit_test(close_now_fails_take_even_with_a_due_node_queued),
        cmocka_unit_test(close_now_may_follow_when_empty_but_not_the_reverse),
        cmocka_unit_test(remove_takes_a_node_out_once_then_reports_enoent),
        cmocka_unit_test(remove_first_returns_the_earliest_node_even_before_it_is_due),
        cmocka_unit_test(peek_and_size_report_the_head_without_removing_it),
        cmocka_unit_test(drain_returns_every_node_sorted_and_empties_the_queue),
        cmocka_unit_test(remove_if_removes_only_the_matching_nodes),
        cmocka_unit_test(producers_and_consumers_exchange_every_node_once_never_early),
        cmocka_unit_test(the_array_grows_before_it_is_full_and_shrinks_after_a_mass_removal),
        cmocka_unit_test(an_offer_that_cannot_grow_a_full_array_reports_enomem_and_changes_nothing),
        cmocka_unit_test(resizes_allocate_and_free_while_other_threads_can_use_the_queue),
        cmocka_unit_test(hundreds_of_thousands_of_cancels_leave_exactly_the_rest_to_take_in_order),
        cmocka_unit_test(cancels_racing_with_takes_never_hand_out_a_cancelled_node),
        cmocka_unit_test(offers_takes_and_removals_racing_with_resizes_lose_and_duplicate_nothing),
        cmocka_unit_test(take_batch_rejects_bad_input_and_removes_nothing),
        cmocka_unit_test(take_batch_hands_out_every_node_once_in_take_order_never_early),
        cmocka_unit_test(take_batch_alone_takes_min_of_max_and_the_due_nodes_only),
        cmocka_unit_test(take_batch_blocks_until_a_node_is_due_spinning_or_not),
        cmocka_unit_test(take_batch_close_when_empty_and_close_now),
        cmocka_unit_test(nodes_handed_out_by_take_batch_answer_enoent_to_remove),
        cmocka_unit_test(a_batch_leader_hands_leadership_on_when_nodes_remain),
        cmocka_unit_test(waiting_batch_takers_share_the_due_nodes),
        cmocka_unit_test(
            batch_takes_racing_with_offers_removals_and_resizes_lose_and_duplicate_nothing),
    };
    return cmocka_run_group_tests_name("heap_adapter", tests, setup_ops, NULL);
}
