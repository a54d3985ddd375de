/* SPDX-License-Identifier: MIT */
/* timerkit: tests of what is the wheel adapter's own, in real time: its
 * parameters (the tick's floor, the slots, a revolution that must fit in
 * int64_t), its tick thread (idle wake-ups counted, not timed; spinning and
 * destroy; passes that stop short; many ticks per pass), its lock-free
 * hand-off and floods of offers, its ready set (runs, merges, removal of
 * ready nodes), its deferred release paths (pending, bucketed, ready; the
 * stats that tell them apart) and removals racing the tick thread on a short
 * tick. They assert behaviour, never speed, with generous bounds for a noisy
 * 2-core machine. cmocka asserts only on the main thread: helper threads
 * record what they saw.
 *
 * The blocking queue contract itself (never early, order, poll, remove and
 * release, close, take_batch, the pending limit, spinning...) is tested once
 * for every engine by the queue-contract suite, tests/queue/. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "timerkit/clock.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"
#include "wheel-internal.h"

/* The wheel's own parameters inside a config (tk_queue_config.params). */
#define WP(c) ((tk__wheel_params *)(void *)(c).params.bytes)

#define MS TK_NS_PER_MS

typedef struct tnode {
    tk_node node; /* first member */
    atomic_int released;
    atomic_int taken;
    atomic_int removed; /* remove() returned TK_OK */
    int idx;
} tnode;

typedef struct rel_ctx {
    atomic_int total;
} rel_ctx;

static void on_release(void *ctx, tk_node *n) {
    rel_ctx *r = ctx;
    atomic_fetch_add(&((tnode *)(void *)n)->released, 1);
    atomic_fetch_add(&r->total, 1);
}

static const tk_queue_ops *ops;

static tk_queue *make_queue(const tk_queue_config *cfg, rel_ctx *rel) {
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, cfg, on_release, rel, &q), TK_OK);
    assert_non_null(q);
    return q;
}

/* n zeroed nodes; node i has idx i and seq i (tests that need another
 * order set seq themselves). */
static tnode *make_nodes(size_t n) {
    tnode *t = calloc(n, sizeof(*t));
    assert_non_null(t);
    for (size_t i = 0; i < n; i++) {
        t[i].idx = (int)i;
        t[i].node.seq = (uint64_t)i;
    }
    return t;
}

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Waits (polling, up to `limit_ms`) until *v >= want. */
static bool wait_atomic(atomic_int *v, int want, int limit_ms) {
    for (int i = 0; i < limit_ms; i++) {
        if (atomic_load(v) >= want)
            return true;
        sleep_ms(1);
    }
    return atomic_load(v) >= want;
}

static bool wait_expired(tk_queue *q, uint64_t want, int limit_ms) {
    tk__wheel_stats st;
    for (int i = 0; i < limit_ms; i++) {
        tk__wheel_stats_get(q, &st);
        if (st.expired >= want)
            return true;
        sleep_ms(1);
    }
    return false;
}

static bool before(const tk_node *a, const tk_node *b) {
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

/* ---- configuration ------------------------------------------------------------- */

static void rejects_invalid_configs(void **state) {
    (void)state;
    tk_queue *q = NULL;
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = TK__WHEEL_MIN_TICK_NS - 1;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    WP(c)->tick_ns = -TK_NS_PER_MS;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->slots = (UINT32_C(1) << 24) + 1;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    WP(c)->slots = UINT32_MAX;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    /* One revolution, tick_ns times the slots (rounded up to a power of
     * two), must fit in int64_t ns. */
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = INT64_MAX / (1 << 24) + 1;
    WP(c)->slots = 1 << 24;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    WP(c)->slots = 512;
    WP(c)->tick_ns = INT64_MAX / 256; /* times 512 slots: past INT64_MAX */
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    WP(c)->tick_ns = INT64_MAX;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    assert_null(q);

    /* The floor itself is fine, with the smallest wheel. */
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = TK__WHEEL_MIN_TICK_NS;
    WP(c)->slots = 3;
    c.thread_name = "a-rather-long-thread-name";
    c.spin_ns = TK_NS_PER_S;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_OK);
    ops->destroy(q);
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = INT64_MAX / 512; /* the largest revolution of 512 slots */
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_OK);
    ops->destroy(q);

    assert_string_equal(ops->name, "wheel");
    assert_true(ops->caps & TK_QUEUE_CAP_O1_REMOVE);
    assert_true(ops->caps & TK_QUEUE_CAP_TICKED);
    assert_true(ops->caps & TK_QUEUE_CAP_OWN_THREAD);
    assert_true(ops->caps & TK_QUEUE_CAP_BATCH_TAKE); /* see queue.h */
    assert_ptr_equal(tk_engine_wheel(), ops);
}

/* ---- order and accuracy ------------------------------------------------------------ */

/* Nodes offered already due leave at once, in key order, INT64_MIN first.
 * They are offered in key order: the contract promises an engine without
 * TK_QUEUE_CAP_EXACT_ORDER no order among nodes due when offered, and the
 * wheel keeps it only among those one pass of its tick thread takes in,
 * which nothing here can make sure of (a pass between the two offers, as
 * under TSan, would hand the first one out alone). */
static void past_deadlines_offered_together_leave_in_key_order(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(2);
    t[0].node.deadline_ns = INT64_MIN;
    t[0].node.seq = 3;
    t[1].node.deadline_ns = tk_clock_now_ns() - TK_NS_PER_S;
    t[1].node.seq = 2;
    for (int i = 0; i < 2; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    tk_node *x;
    assert_int_equal(ops->poll(q, 2 * TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &t[0].node);
    assert_int_equal(ops->poll(q, 2 * TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &t[1].node);
    ops->destroy(q);
    free(t);
}

/* ---- remove ------------------------------------------------------------------------ */

static void remove_of_ready_node_is_immediate(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(2);
    t[0].node.deadline_ns = tk_clock_now_ns() - 1;
    t[1].node.deadline_ns = tk_clock_now_ns() - 1;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    assert_int_equal(ops->offer(q, &t[1].node), TK_OK);
    assert_true(wait_expired(q, 2, 3000));
    assert_int_equal(ops->remove(q, &t[0].node), TK_OK);
    assert_int_equal(ops->size(q), 1);
    assert_int_equal(ops->remove(q, &t[0].node), TK_ENOENT);
    tk_node *x;
    assert_int_equal(ops->take(q, &x), TK_OK);
    assert_ptr_equal(x, &t[1].node);
    assert_int_equal(ops->remove(q, &t[1].node), TK_ENOENT); /* handed out */
    tnode never = {0};
    assert_int_equal(ops->remove(q, &never.node), TK_ENOENT); /* never offered */
    assert_int_equal(ops->size(q), 0);
    tk__wheel_stats st;
    tk__wheel_stats_get(q, &st);
    assert_int_equal(st.removed_ready, 1);
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 0);
    free(t);
}

static void remove_of_queued_nodes_releases_each_exactly_once(void **state) {
    (void)state;
    enum { N = 3000 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < N; i++) {
        t[i].node.deadline_ns = now + 10 * TK_NS_PER_S + i * TK_NS_PER_US;
    }
    /* Offer all, then remove all at once: some are still pending, others
     * already in buckets; both paths answer TK_EINPROGRESS. */
    for (int i = 0; i < N; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    for (int i = 0; i < N; i++) {
        assert_int_equal(ops->remove(q, &t[i].node), TK_EINPROGRESS);
        assert_int_equal(ops->size(q), (size_t)(N - 1 - i)); /* drops at once */
    }
    for (int i = 0; i < N; i += 97)
        assert_int_equal(ops->remove(q, &t[i].node), TK_ENOENT); /* already removed */
    assert_true(wait_atomic(&rel.total, N, 5000));
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&t[i].released), 1);
    tk__wheel_stats st;
    tk__wheel_stats_get(q, &st);
    assert_int_equal(st.cancelled_pending + st.cancelled_bucket, N);
    assert_int_equal(st.released, N);
    print_message("      %llu caught pending, %llu caught in a bucket\n",
                  (unsigned long long)st.cancelled_pending,
                  (unsigned long long)st.cancelled_bucket);

    /* A node surely in a bucket (the tick thread moved it): released
     * promptly although the thread sleeps for 10 s. */
    atomic_store(&t[0].released, 0);
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    for (int i = 0; i < 3000; i++) {
        tk__wheel_stats_get(q, &st);
        if (st.moved > 0 && ops->check(q) == TK_OK)
            break;
        sleep_ms(1);
    }
    uint64_t before_bucket = st.cancelled_bucket;
    sleep_ms(20);
    assert_int_equal(ops->remove(q, &t[0].node), TK_EINPROGRESS);
    assert_true(wait_atomic(&t[0].released, 1, 3000));
    tk__wheel_stats_get(q, &st);
    assert_int_equal(st.cancelled_bucket, before_bucket + 1);
    assert_int_equal(ops->check(q), TK_OK);
    assert_null(ops->drain(q));
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), N + 1);
    free(t);
}

/* ---- bulk operations ------------------------------------------------------------------- */

static void drain_returns_every_node_sorted_including_pending(void **state) {
    (void)state;
    enum { N = 600 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < N; i++) {
        t[i].node.deadline_ns = i < 200   ? now - (i % 7) * MS            /* ready */
                                : i < 400 ? now + (i % 11) * TK_NS_PER_S  /* buckets */
                                          : now + (i % 13) * TK_NS_PER_S; /* maybe pending */
    }
    for (int i = 0; i < 400; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    assert_true(wait_expired(q, 200, 3000));
    for (int i = 400; i < N; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    assert_int_equal(ops->remove(q, &t[450].node), TK_EINPROGRESS);
    assert_int_equal(ops->remove(q, &t[5].node), TK_OK);
    assert_int_equal(ops->size(q), N - 2);
    tk_node *l = ops->drain(q);
    assert_int_equal(ops->size(q), 0);
    int n = 0;
    char *seen = calloc(N, 1);
    for (tk_node *p = l, *prev = NULL; p != NULL; prev = p, p = tk_node_next_detached(p)) {
        if (prev != NULL)
            assert_true(before(prev, p));
        seen[((tnode *)(void *)p)->idx]++;
        n++;
    }
    assert_int_equal(n, N - 2);
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], i == 450 || i == 5 ? 0 : 1);
    assert_int_equal(ops->check(q), TK_OK);
    assert_null(ops->drain(q));
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 1);
    free(seen);
    free(t);
}

static bool odd_seq(const tk_node *n, void *ctx) {
    (void)ctx;
    return n->seq % 2 == 1;
}

static void peek_remove_first_and_remove_if(void **state) {
    (void)state;
    enum { N = 40 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    tk_node *x;
    int64_t d;
    uint64_t s;
    assert_int_equal(ops->peek(q, &d, &s), TK_ENOENT);
    assert_int_equal(ops->remove_first(q, &x), TK_ENOENT);
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < N; i++) {
        t[i].node.deadline_ns = now + (int64_t)((i * 13) % N) * TK_NS_PER_S;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    /* t[0] (deadline now) becomes ready; the others sit in buckets. */
    assert_int_equal(ops->peek(q, &d, &s), TK_OK);
    assert_true(d == now && s == 0);
    assert_true(wait_expired(q, 1, 3000));
    assert_int_equal(ops->remove_first(q, &x), TK_OK);
    assert_ptr_equal(x, &t[0].node);
    /* next smallest: (i*13)%40 == 1 -> i = 37 */
    assert_int_equal(ops->peek(q, &d, &s), TK_OK);
    assert_int_equal(s, 37);
    assert_int_equal(ops->remove_first(q, &x), TK_OK);
    assert_ptr_equal(x, &t[37].node);
    tk_node *l = ops->remove_if(q, odd_seq, NULL);
    int n = 0;
    for (; l != NULL; l = tk_node_next_detached(l)) {
        assert_true(l->seq % 2 == 1 && l->seq != 37);
        n++;
    }
    assert_int_equal(n, N / 2 - 1);
    assert_int_equal(ops->size(q), N / 2 - 1);
    assert_int_equal(ops->check(q), TK_OK);
    l = ops->drain(q);
    for (n = 0; l != NULL; l = tk_node_next_detached(l), n++)
        assert_true(l->seq % 2 == 0);
    assert_int_equal(n, N / 2 - 1);
    ops->destroy(q);
    free(t);
}

/* ---- idle behaviour ---------------------------------------------------------------------- */

static void idle_tick_thread_sleeps_until_something_can_expire(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = TK_NS_PER_MS;
    WP(c)->slots = 1024;
    tk_queue *q = make_queue(&c, &rel);
    tnode *t = make_nodes(2);
    t[0].node.deadline_ns = tk_clock_now_ns() + INT64_C(3600) * TK_NS_PER_S;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    sleep_ms(100); /* let the thread start and settle */
    tk__wheel_stats a, b;
    tk__wheel_stats_get(q, &a);
    sleep_ms(1500);
    tk__wheel_stats_get(q, &b);
    print_message("      idle 1.5 s with one timer 1 h ahead: %llu wake-ups, %llu passes "
                  "(Netty: ~1500)\n",
                  (unsigned long long)(b.wakeups - a.wakeups),
                  (unsigned long long)(b.loops - a.loops));
    assert_true(b.wakeups - a.wakeups <= 3);
    assert_true(b.loops - a.loops <= 3);

    /* A nearer timer wakes it once and then it sleeps again. */
    t[1].node.deadline_ns = tk_clock_now_ns() + 300 * MS;
    assert_int_equal(ops->offer(q, &t[1].node), TK_OK);
    tk_node *x;
    assert_int_equal(ops->poll(q, 3 * TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &t[1].node);
    assert_true(tk_clock_now_ns() >= t[1].node.deadline_ns);
    sleep_ms(200);
    tk__wheel_stats_get(q, &b);
    print_message("      ... plus a timer 300 ms ahead: %llu wake-ups in total\n",
                  (unsigned long long)(b.wakeups - a.wakeups));
    assert_true(b.wakeups - a.wakeups <= 8);
    assert_int_equal(ops->remove(q, &t[0].node), TK_EINPROGRESS);
    ops->destroy(q);
    assert_int_equal(atomic_load(&t[0].released), 1);
    free(t);
}

/* ---- spin_ns ------------------------------------------------------------------------------ */

static tk_queue *make_spinning_queue(int64_t spin_ns, rel_ctx *rel) {
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    c.spin_ns = spin_ns;
    return make_queue(&c, rel);
}

static int64_t process_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * TK_NS_PER_S + ts.tv_nsec;
}

/* A tick thread that spins the last 5 ms before each tick it plans, idle
 * (one node an hour ahead), neither spins nor wakes. (That a spinning queue
 * is never early is the contract's: tests/queue/.) */
static void a_spinning_tick_thread_idles_without_spinning(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_spinning_queue(5 * MS, &rel);
    tnode *t = make_nodes(1);
    t[0].node.deadline_ns = tk_clock_now_ns() + INT64_C(3600) * TK_NS_PER_S;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    sleep_ms(100);
    tk__wheel_stats a, b;
    tk__wheel_stats_get(q, &a);
    int64_t cpu0 = process_cpu_ns();
    sleep_ms(1000);
    int64_t cpu = process_cpu_ns() - cpu0;
    tk__wheel_stats_get(q, &b);
    print_message("      idle 1 s with spin_ns = 5 ms: %.1f ms of CPU, %llu wake-ups\n",
                  (double)cpu / MS, (unsigned long long)(b.wakeups - a.wakeups));
    assert_true(b.wakeups - a.wakeups <= 3);
    assert_true(cpu < 200 * MS); /* a spinning thread would burn about 1000 ms */
    assert_int_equal(ops->remove(q, &t[0].node), TK_EINPROGRESS);
    ops->destroy(q);
    free(t);
}

/* destroy() ends a spin at once (spin_ns = 1 s, the tick 900 ms ahead). */
static void destroy_ends_the_tick_threads_spin(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_spinning_queue(TK_NS_PER_S, &rel);
    tnode *t = make_nodes(1);
    t[0].node.deadline_ns = tk_clock_now_ns() + 900 * MS;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    sleep_ms(50); /* the tick thread is spinning towards the tick now */
    int64_t t0 = tk_clock_now_ns();
    ops->destroy(q);
    assert_true(tk_clock_now_ns() - t0 < 600 * MS);
    assert_int_equal(atomic_load(&rel.total), 0); /* a queued node is not touched */
    free(t);
}

/* A tick batch already in (deadline, seq) order, more nodes than one
 * hold of ready_lock links, is handed out whole and in order while a taker
 * takes from its first pieces. */
static void an_in_order_tick_batch_leaves_in_order(void **state) {
    (void)state;
    enum { N = 6000 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    int64_t d = tk_clock_now_ns() + 100 * MS;
    for (int i = 0; i < N; i++) {
        t[i].node.deadline_ns = d + (i >= N / 2); /* one tick, two deadlines */
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    bool strict = tk_clock_now_ns() < d - 2 * MS;
    for (int i = 0; i < N; i++) {
        tk_node *got = NULL;
        assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &got), TK_OK);
        assert_true(tk_clock_now_ns() >= got->deadline_ns);
        if (strict)
            assert_ptr_equal(got, &t[i].node);
    }
    if (!strict)
        print_message("      offering overran the deadline: order not checked\n");
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 0);
    free(t);
}

/* Nodes the tick thread takes in at the pass that expires their tick, more
 * than that pass can move into buckets (its transfer stops after about a tick
 * of work, checking the clock every 1024 nodes), offered in descending key
 * order so that the ones left in the backlog have the smallest keys. The
 * pass must not expire their tick before they are in it, or they would join
 * the next tick and leave after every node with a later key
 * (docs/engine-notes.md). Here: 10 us ticks; fewer nodes than FLOOD_OFFERS,
 * one per page and out of the cache by the deadline, so that moving 1024 of
 * them takes longer than a tick; the first sets the thread's plan (the tick
 * of `d`) and the others are due within that tick, after its wake
 * threshold, so they wait for that pass. */
static void a_backlog_left_by_a_short_pass_keeps_its_tick(void **state) {
    (void)state;
    enum { N = 4000, STRIDE = 4096, ROUNDS = 12 };
    const size_t evict_bytes = (size_t)64 << 20;
    rel_ctx rel = {0};
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = TK__WHEEL_MIN_TICK_NS;
    tk_queue *q = make_queue(&c, &rel);
    char *mem = calloc(N, STRIDE);
    unsigned char *evict = malloc(evict_bytes);
    assert_non_null(mem);
    assert_non_null(evict);
    for (int round = 0; round < ROUNDS; round++) {
        int64_t d = tk_clock_now_ns() + 100 * MS;
        for (int i = 0; i < N; i++) {
            tk_node *n = (tk_node *)(void *)(mem + (size_t)i * STRIDE);
            memset(n, 0, sizeof(*n));
            n->deadline_ns = d - i; /* the latest first, one ns apart */
            n->seq = (uint64_t)i;
            assert_int_equal(ops->offer(q, n), TK_OK);
            if (i == 0)
                sleep_ms(5); /* the thread takes it and plans its sleep */
        }
        bool strict = tk_clock_now_ns() < d - 20 * MS;
        memset(evict, round, evict_bytes); /* the nodes leave the cache */
        tk_node *prev = NULL;
        for (int i = 0; i < N; i++) {
            tk_node *got = NULL;
            assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &got), TK_OK);
            assert_true(tk_clock_now_ns() >= got->deadline_ns);
            if (strict && prev != NULL)
                assert_false(before(got, prev));
            prev = got;
        }
        if (!strict)
            print_message("      offering overran the deadline: order not checked\n");
        assert_int_equal(ops->size(q), 0);
    }
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 0);
    free(evict);
    free(mem);
}

/* ---- the ready set ------------------------------------------------------------------------- */

/* Batches whose keys interleave every earlier batch (a backlog expiring over
 * many passes) pile up as ready runs, more than the set has slots; removal
 * of ready nodes at run heads, tails and middles; then every ready node is
 * handed out in exact (deadline, seq) order. check() after the steps. */
static void out_of_order_batches_leave_in_exact_order(void **state) {
    (void)state;
    enum { GROUPS = 300, PER = 12, N = GROUPS * PER };
    rel_ctx rel = {0};
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = TK__WHEEL_MIN_TICK_NS; /* many passes, quickly */
    WP(c)->slots = 64;
    tk_queue *q = make_queue(&c, &rel);
    tnode *t = make_nodes(N);
    int64_t base = tk_clock_now_ns() - TK_NS_PER_S; /* all due at once */
    for (int g = 0; g < GROUPS; g++)
        for (int i = 0; i < PER; i++) {
            /* group g: base + g, base + 10 us + g, ...: below every earlier
             * group's tail, so it fits behind no run */
            t[g * PER + i].node.deadline_ns = base + i * 10 * TK_NS_PER_US + g;
        }
    uint64_t expired = 0;
    for (int g = 0; g < GROUPS; g++) {
        for (int i = 0; i < PER; i++)
            assert_int_equal(ops->offer(q, &t[g * PER + i].node), TK_OK);
        expired += PER;
        assert_true(wait_expired(q, expired, 5000)); /* published before the next group */
        if (g % 30 == 0)
            assert_int_equal(ops->check(q), TK_OK);
    }
    assert_int_equal(ops->check(q), TK_OK);
    tk__wheel_stats st;
    tk__wheel_stats_get(q, &st);
    print_message("      %d interleaved batches: up to %llu ready runs, %llu merged into one\n",
                  GROUPS, (unsigned long long)st.ready_runs_max,
                  (unsigned long long)st.ready_merges);
    assert_true(st.ready_runs_max > 16);
    assert_true(st.ready_merges > 0);

    /* remove a group's smallest (its run's head), largest (tail) or middle */
    char *gone = calloc(N, 1);
    assert_non_null(gone);
    int removed = 0;
    for (int g = 0; g < GROUPS; g += 7) {
        int i = g % 3 == 0 ? 0 : g % 3 == 1 ? PER - 1 : PER / 2;
        assert_int_equal(ops->remove(q, &t[g * PER + i].node), TK_OK);
        gone[g * PER + i] = 1;
        removed++;
        if (g % 21 == 0)
            assert_int_equal(ops->check(q), TK_OK);
    }
    /* and the overall first, twice (group 0's was removed above; groups 1
     * and 2 lead next): the head of the winning run */
    for (int g = 1; g <= 2; g++) {
        int64_t d;
        uint64_t seq;
        assert_int_equal(ops->peek(q, &d, &seq), TK_OK);
        assert_int_equal(seq, (uint64_t)(g * PER));
        assert_int_equal(ops->remove(q, &t[g * PER].node), TK_OK);
        gone[g * PER] = 1;
        removed++;
        assert_int_equal(ops->check(q), TK_OK);
    }
    assert_int_equal(ops->check(q), TK_OK);
    assert_int_equal(ops->size(q), (size_t)(N - removed));

    tk_node *prev = NULL;
    int taken = 0;
    for (;;) {
        tk_node *x;
        int rc = ops->poll(q, 0, &x);
        if (rc == TK_ETIMEDOUT)
            break;
        assert_int_equal(rc, TK_OK);
        int idx = ((tnode *)(void *)x)->idx;
        assert_int_equal(gone[idx], 0);
        gone[idx] = 2;
        if (prev != NULL)
            assert_true(before(prev, x));
        prev = x;
        if (++taken % 600 == 0)
            assert_int_equal(ops->check(q), TK_OK);
    }
    assert_int_equal(taken, N - removed);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 0);
    free(gone);
    free(t);
}

/* A flood of offers due far ahead wakes the sleeping tick thread, which moves
 * them into buckets while they arrive instead of at the first expiry (here
 * a minute away). */
static void flood_of_far_offers_is_taken_in_before_the_first_expiry(void **state) {
    (void)state;
    enum { N = 70000 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    int64_t far = tk_clock_now_ns() + 60 * TK_NS_PER_S;
    t[0].node.deadline_ns = far;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    sleep_ms(50); /* the thread took it in and sleeps until the minute is up */
    tk__wheel_stats st;
    tk__wheel_stats_get(q, &st);
    assert_int_equal(st.moved, 1);
    for (int i = 1; i < N; i++) {
        t[i].node.deadline_ns = far + i; /* none of them needs an early wake-up */
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    for (int i = 0; i < 5000; i++) {
        tk__wheel_stats_get(q, &st);
        if (st.moved >= 65536)
            break;
        sleep_ms(1);
    }
    print_message("      %llu of %d far offers moved into buckets before any expiry\n",
                  (unsigned long long)st.moved, N);
    assert_true(st.moved >= 65536);
    assert_int_equal(st.expired, 0);
    assert_int_equal(ops->check(q), TK_OK);
    size_t n = 0;
    for (tk_node *l = ops->drain(q); l != NULL; l = tk_node_next_detached(l))
        n++;
    assert_int_equal(n, N);
    ops->destroy(q);
    free(t);
}

/* The tail of a flood (the offers after the last flood wake-up, fewer than
 * would wake the thread) is taken in soon after the flood ends, not at the
 * first expiry (a minute away); then the thread goes back to sleeping. The
 * offers are paced (about 2 us apart, as a producer that does some work per
 * timer), so the flood lasts well beyond the moving of its first part. */
static void flood_tail_is_taken_in_soon_after_the_flood_ends(void **state) {
    (void)state;
    enum { N = 65536 + 30000 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    int64_t far = tk_clock_now_ns() + 60 * TK_NS_PER_S;
    int64_t next = tk_clock_now_ns();
    for (int i = 0; i < N; i++) {
        t[i].node.deadline_ns = far + i;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
        next += 2 * TK_NS_PER_US;
        while (tk_clock_now_ns() < next) {
        }
    }
    tk__wheel_stats st;
    for (int i = 0; i < 5000; i++) {
        tk__wheel_stats_get(q, &st);
        if (st.moved >= N)
            break;
        sleep_ms(1);
    }
    print_message("      %llu of %d far offers moved into buckets after the flood\n",
                  (unsigned long long)st.moved, N);
    assert_int_equal(st.moved, N);
    assert_int_equal(st.expired, 0);
    sleep_ms(100); /* a last look finds the stack empty */
    tk__wheel_stats a, b;
    tk__wheel_stats_get(q, &a);
    sleep_ms(500);
    tk__wheel_stats_get(q, &b);
    print_message("      then %llu wake-ups in 500 ms\n",
                  (unsigned long long)(b.wakeups - a.wakeups));
    assert_true(b.wakeups - a.wakeups <= 3);
    assert_int_equal(ops->check(q), TK_OK);
    size_t n = 0;
    for (tk_node *l = ops->drain(q); l != NULL; l = tk_node_next_detached(l))
        n++;
    assert_int_equal(n, N);
    ops->destroy(q);
    free(t);
}

/* A tick far shorter than a pass: each pass expires many ticks, published in
 * chunks while a taker takes. Every node still leaves in exact (deadline,
 * seq) order, never before its deadline. */
static void many_ticks_expired_in_one_pass_leave_in_order_never_early(void **state) {
    (void)state;
    enum { N = 100000 };
    rel_ctx rel = {0};
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = TK__WHEEL_MIN_TICK_NS;
    WP(c)->slots = 256;
    tk_queue *q = make_queue(&c, &rel);
    tnode *t = make_nodes(N);
    uint64_t rs = 99;
    /* all offered before the first is due (a node offered late may leave
     * after a later one: the hand-off reordering the essay allows) */
    int64_t base = tk_clock_now_ns() + TK_NS_PER_S;
    for (int i = 0; i < N; i++) {
        rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
        /* over 60 ms (6000 ticks); a few equal deadlines for the seq order */
        t[i].node.deadline_ns = base + (int64_t)((rs >> 33) % (60 * MS)) / 8 * 8;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    bool in_time = tk_clock_now_ns() < base;
    tk_node *prev = NULL;
    int early = 0, disorder = 0;
    for (int i = 0; i < N; i++) {
        tk_node *x;
        assert_int_equal(ops->poll(q, 10 * TK_NS_PER_S, &x), TK_OK);
        early += tk_clock_now_ns() < x->deadline_ns;
        if (prev != NULL)
            disorder += !before(prev, x);
        prev = x;
        if (i % 20000 == 0)
            assert_int_equal(ops->check(q), TK_OK);
    }
    assert_true(wait_expired(q, N, 5000)); /* counted just after the publish */
    tk__wheel_stats st;
    tk__wheel_stats_get(q, &st);
    print_message("      %d nodes over 6000 ticks of 10 us: %llu passes%s\n", N,
                  (unsigned long long)st.loops,
                  in_time ? "" : " (offers overran the first deadline: order not checked)");
    assert_int_equal(early, 0);
    if (in_time)
        assert_int_equal(disorder, 0);
    assert_int_equal(st.expired, N);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    free(t);
}

/* ---- floods and concurrency --------------------------------------------------------------- */

typedef struct flooder {
    tk_queue *q;
    tnode *nodes;
    int n;
    atomic_int *stop;
    int offered;
    pthread_t th;
} flooder;

static void *flood_main(void *arg) {
    flooder *f = arg;
    int64_t far = tk_clock_now_ns() + 600 * TK_NS_PER_S;
    for (int i = 0; i < f->n && !atomic_load(f->stop); i++) {
        f->nodes[i].node.deadline_ns = far + i;
        f->nodes[i].node.seq = (uint64_t)i + 1000;
        if (ops->offer(f->q, &f->nodes[i].node) == TK_OK)
            f->offered++;
    }
    return NULL;
}

static void flood_of_offers_does_not_starve_expiry(void **state) {
    (void)state;
    enum { PER = 200000 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    atomic_int stop = 0;
    flooder f[2];
    for (int i = 0; i < 2; i++) {
        f[i] = (flooder){.q = q, .nodes = make_nodes(PER), .n = PER, .stop = &stop};
        assert_int_equal(pthread_create(&f[i].th, NULL, flood_main, &f[i]), 0);
    }
    sleep_ms(5);
    tnode early = {0};
    early.node.deadline_ns = tk_clock_now_ns() + 20 * MS;
    assert_int_equal(ops->offer(q, &early.node), TK_OK);
    tk_node *x = NULL;
    int rc = ops->poll(q, 10 * TK_NS_PER_S, &x);
    int64_t late = tk_clock_now_ns() - early.node.deadline_ns;
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(f[i].th, NULL);
    assert_int_equal(rc, TK_OK);
    assert_ptr_equal(x, &early.node);
    print_message("      early timer %.3f ms late amid %d + %d offers\n", (double)late / MS,
                  f[0].offered, f[1].offered);
    assert_true(late < 2 * TK_NS_PER_S);
    size_t want = (size_t)(f[0].offered + f[1].offered);
    assert_int_equal(ops->size(q), want);
    size_t n = 0;
    for (tk_node *l = ops->drain(q); l != NULL; l = tk_node_next_detached(l))
        n++;
    assert_int_equal(n, want);
    ops->destroy(q);
    free(f[0].nodes);
    free(f[1].nodes);
}

typedef struct consumer {
    tk_queue *q;
    atomic_int stop;
    atomic_int early;
    atomic_int taken;
    pthread_t th;
} consumer;

static void *consumer_main(void *arg) {
    consumer *c = arg;
    for (;;) {
        tk_node *x;
        int rc = ops->poll(c->q, 10 * MS, &x);
        if (rc == TK_OK) {
            if (tk_clock_now_ns() < x->deadline_ns)
                atomic_fetch_add(&c->early, 1);
            atomic_fetch_add(&((tnode *)(void *)x)->taken, 1);
            atomic_fetch_add(&c->taken, 1);
        } else if (atomic_load(&c->stop)) {
            return NULL;
        }
    }
}

typedef struct racer {
    tk_queue *q;
    tnode *nodes;
    int rounds, batch;
    uint64_t seed;
    int ok, async;
    pthread_t th;
} racer;

/* Offers a batch due within ~2 ms, then removes it in a scrambled order while
 * the tick thread expires it, a consumer takes it and the main thread calls
 * peek/remove_first/drain. */
static void *racer_main(void *arg) {
    racer *r = arg;
    uint64_t rs = r->seed;
    for (int round = 0; round < r->rounds; round++) {
        tnode *b = &r->nodes[round * r->batch];
        int64_t now = tk_clock_now_ns();
        for (int i = 0; i < r->batch; i++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            b[i].node.deadline_ns = now + (int64_t)((rs >> 33) % 2000) * TK_NS_PER_US;
            b[i].node.seq = r->seed << 32 | (uint64_t)(round * r->batch + i);
            if (ops->offer(r->q, &b[i].node) != TK_OK)
                atomic_fetch_add(&b[i].taken, 100); /* reported below as a failure */
        }
        for (int i = 0; i < r->batch; i++) {
            tnode *v = &b[(i * 37 + round) % r->batch];
            int rc = ops->remove(r->q, &v->node);
            if (rc == TK_OK) {
                atomic_fetch_add(&v->removed, 1);
                r->ok++;
            } else if (rc == TK_EINPROGRESS) {
                r->async++;
            }
            if (i % 16 == 0)
                sleep_ms(0);
        }
    }
    return NULL;
}

static void removal_racing_expiry_and_drain_accounts_for_every_node(void **state) {
    (void)state;
    enum { THREADS = 2, ROUNDS = 25, BATCH = 160, PER = ROUNDS * BATCH };
    rel_ctx rel = {0};
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = 50 * TK_NS_PER_US;
    WP(c)->slots = 16;
    tk_queue *q = make_queue(&c, &rel);
    consumer con = {.q = q};
    assert_int_equal(pthread_create(&con.th, NULL, consumer_main, &con), 0);
    racer r[THREADS];
    for (int i = 0; i < THREADS; i++) {
        r[i] = (racer){.q = q,
                       .nodes = make_nodes(PER),
                       .rounds = ROUNDS,
                       .batch = BATCH,
                       .seed = (uint64_t)i + 7};
        assert_int_equal(pthread_create(&r[i].th, NULL, racer_main, &r[i]), 0);
    }
    int by_main = 0, checks_failed = 0;
    for (int it = 0; it < 400; it++) {
        tk_node *x;
        int64_t d;
        uint64_t s;
        (void)ops->peek(q, &d, &s);
        if (ops->remove_first(q, &x) == TK_OK) {
            atomic_fetch_add(&((tnode *)(void *)x)->taken, 1);
            by_main++;
        }
        if (it % 25 == 0) {
            for (tk_node *l = ops->drain(q); l != NULL;) {
                tk_node *next = tk_node_next_detached(l);
                atomic_fetch_add(&((tnode *)(void *)l)->taken, 1);
                by_main++;
                l = next;
            }
            checks_failed += ops->check(q) != TK_OK;
        }
        sleep_ms(1);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(r[i].th, NULL);
    int ok = 0, async = 0;
    for (int i = 0; i < THREADS; i++) {
        ok += r[i].ok;
        async += r[i].async;
    }
    int total = THREADS * PER;
    for (int i = 0; i < 5000; i++) {
        if (atomic_load(&con.taken) + by_main + ok + atomic_load(&rel.total) >= total)
            break;
        sleep_ms(1);
    }
    atomic_store(&con.stop, 1);
    pthread_join(con.th, NULL);
    assert_int_equal(checks_failed, 0);
    assert_null(ops->drain(q));
    ops->destroy(q);
    assert_int_equal(atomic_load(&con.early), 0);
    assert_int_equal(atomic_load(&rel.total), async);
    for (int i = 0; i < THREADS; i++)
        for (int j = 0; j < PER; j++) {
            tnode *n = &r[i].nodes[j];
            assert_int_equal(
                atomic_load(&n->taken) + atomic_load(&n->released) + atomic_load(&n->removed), 1);
        }
    print_message("      consumer %d, main (remove_first/drain) %d, removed at once %d, "
                  "released later %d\n",
                  atomic_load(&con.taken), by_main, ok, async);
    for (int i = 0; i < THREADS; i++)
        free(r[i].nodes);
}

int main(void) {
    ops = tk_engine_wheel();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejects_invalid_configs),
        cmocka_unit_test(past_deadlines_offered_together_leave_in_key_order),
        cmocka_unit_test(a_spinning_tick_thread_idles_without_spinning),
        cmocka_unit_test(destroy_ends_the_tick_threads_spin),
        cmocka_unit_test(an_in_order_tick_batch_leaves_in_order),
        cmocka_unit_test(a_backlog_left_by_a_short_pass_keeps_its_tick),
        cmocka_unit_test(remove_of_ready_node_is_immediate),
        cmocka_unit_test(remove_of_queued_nodes_releases_each_exactly_once),
        cmocka_unit_test(drain_returns_every_node_sorted_including_pending),
        cmocka_unit_test(peek_remove_first_and_remove_if),
        cmocka_unit_test(idle_tick_thread_sleeps_until_something_can_expire),
        cmocka_unit_test(out_of_order_batches_leave_in_exact_order),
        cmocka_unit_test(flood_of_far_offers_is_taken_in_before_the_first_expiry),
        cmocka_unit_test(flood_tail_is_taken_in_soon_after_the_flood_ends),
        cmocka_unit_test(many_ticks_expired_in_one_pass_leave_in_order_never_early),
        cmocka_unit_test(flood_of_offers_does_not_starve_expiry),
        cmocka_unit_test(removal_racing_expiry_and_drain_accounts_for_every_node),
    };
    return cmocka_run_group_tests_name("wheel_adapter", tests, NULL, NULL);
}
