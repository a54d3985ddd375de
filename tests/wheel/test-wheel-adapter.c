/* timerkit: wheel adapter tests, in real time. They assert behaviour (never
 * early, order, ownership, close modes, idle wake-ups counted, not timed;
 * take_batch() against take(): order, max, fair share, close, ownership),
 * never speed, with generous bounds for a noisy 2-core machine. cmocka
 * asserts only on the main thread: helper threads record what they saw. */
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
    WP(c)->tick_ns = TK_WHEEL_MIN_TICK_NS - 1;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    WP(c)->tick_ns = -TK_NS_PER_MS;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->slots = (UINT32_C(1) << 24) + 1;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    WP(c)->slots = UINT32_MAX;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    tk_queue_config_init_for(&c, tk_engine_wheel());
    c.spin_ns = -1;
    assert_int_equal(ops->create(ops, &c, on_release, NULL, &q), TK_EINVAL);
    c.spin_ns = TK_NS_PER_S + 1;
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
    assert_int_equal(ops->create(ops, NULL, on_release, NULL, NULL), TK_EINVAL);
    assert_null(q);

    /* Defaults (NULL config, zero fields) and the floor itself are fine. */
    assert_int_equal(ops->create(ops, NULL, on_release, NULL, &q), TK_OK);
    ops->destroy(q);
    tk_queue_config z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(ops->create(ops, &z, on_release, NULL, &q), TK_OK);
    ops->destroy(q);
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = TK_WHEEL_MIN_TICK_NS;
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
    assert_false(ops->caps & TK_QUEUE_CAP_BATCH_TAKE); /* see queue.h */
    assert_ptr_equal(tk_engine_wheel(), ops);
}

/* ---- order and accuracy ------------------------------------------------------------ */

static void never_early_and_in_deadline_seq_order(void **state) {
    (void)state;
    enum { N = 300 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    uint64_t rs = 12345;
    int64_t base = tk_clock_now_ns() + 60 * MS;
    for (int i = 0; i < N; i++) {
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = rs >> 33;
        /* many equal deadlines, many within one tick of each other */
        t[i].node.deadline_ns = base + (int64_t)(r % 25) * 2 * MS + ((r >> 8) % 3) * 333333;
        t[i].node.seq = (uint64_t)((i * 7919) % N); /* seq order != offer order */
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    /* The order is exact among the nodes the tick thread has taken in; an
     * offer is taken in within a tick. If this thread was descheduled so long
     * that the first deadlines passed while it was still offering, the last
     * offers may legitimately trail earlier-keyed ready nodes: then check
     * only "never early". */
    bool strict = tk_clock_now_ns() < base - 2 * MS;
    assert_int_equal(ops->size(q), N);
    assert_int_equal(ops->check(q), TK_OK);

    tk_node *got[N];
    int64_t at[N];
    for (int i = 0; i < N; i++) {
        assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &got[i]), TK_OK);
        at[i] = tk_clock_now_ns();
    }
    assert_int_equal(ops->size(q), 0);
    int64_t worst = 0;
    for (int i = 0; i < N; i++) {
        assert_true(at[i] >= got[i]->deadline_ns); /* never early */
        if (at[i] - got[i]->deadline_ns > worst)
            worst = at[i] - got[i]->deadline_ns;
        if (i > 0 && strict)
            assert_true(before(got[i - 1], got[i]));
    }
    print_message("      worst lateness %.3f ms (1 ms tick)%s\n", (double)worst / MS,
                  strict ? "" : " [offering overran the deadlines: order not checked]");
    tk_node *x;
    assert_int_equal(ops->poll(q, 0, &x), TK_ETIMEDOUT);
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 0);
    free(t);
}

static void past_deadline_is_due_at_once(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(3);
    t[0].node.deadline_ns = INT64_MIN;
    t[0].node.seq = 3;
    t[1].node.deadline_ns = tk_clock_now_ns() - TK_NS_PER_S;
    t[1].node.seq = 2;
    t[2].node.deadline_ns = INT64_MAX;
    t[2].node.seq = 1;
    for (int i = 0; i < 3; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    tk_node *x;
    assert_int_equal(ops->poll(q, 2 * TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &t[0].node);
    assert_int_equal(ops->poll(q, 2 * TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &t[1].node);
    assert_int_equal(ops->poll(q, 20 * MS, &x), TK_ETIMEDOUT);
    int64_t d;
    uint64_t s;
    assert_int_equal(ops->peek(q, &d, &s), TK_OK);
    assert_true(d == INT64_MAX && s == 1);
    assert_ptr_equal(ops->drain(q), &t[2].node);
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

static void removed_node_is_never_handed_out(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(2);
    int64_t d = tk_clock_now_ns() + 30 * MS;
    t[0].node.deadline_ns = d;
    t[1].node.deadline_ns = d;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    assert_int_equal(ops->offer(q, &t[1].node), TK_OK);
    int rc = ops->remove(q, &t[0].node);
    assert_true(rc == TK_EINPROGRESS || rc == TK_OK);
    tk_node *x;
    assert_int_equal(ops->poll(q, 3 * TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &t[1].node);
    assert_int_equal(ops->poll(q, 100 * MS, &x), TK_ETIMEDOUT);
    ops->destroy(q);
    assert_int_equal(atomic_load(&t[0].released), rc == TK_EINPROGRESS ? 1 : 0);
    free(t);
}

/* Without a release callback, remove() works synchronously: TK_OK. */
static void remove_without_release_callback_is_synchronous(void **state) {
    (void)state;
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, NULL, NULL, NULL, &q), TK_OK);
    tnode *t = make_nodes(50);
    int64_t now = tk_clock_now_ns();
    for (int i = 0; i < 50; i++) {
        t[i].node.deadline_ns = now + (i % 2 ? -MS : TK_NS_PER_S);
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    for (int i = 0; i < 50; i++)
        assert_int_equal(ops->remove(q, &t[i].node), TK_OK);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    assert_null(ops->drain(q));
    ops->destroy(q);
    free(t);
}

/* ---- limits and closing ---------------------------------------------------------------- */

static void max_pending_gives_efull(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    c.max_pending = 3;
    tk_queue *q = make_queue(&c, &rel);
    tnode *t = make_nodes(5);
    int64_t far = tk_clock_now_ns() + 60 * TK_NS_PER_S;
    for (int i = 0; i < 5; i++) {
        t[i].node.deadline_ns = far + i;
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    assert_int_equal(ops->offer(q, &t[3].node), TK_EFULL);
    assert_int_equal(ops->size(q), 3);
    assert_int_equal(ops->remove(q, &t[1].node), TK_EINPROGRESS);
    assert_int_equal(ops->offer(q, &t[3].node), TK_OK);
    assert_int_equal(ops->offer(q, &t[4].node), TK_EFULL);
    tk_node *l = ops->drain(q);
    int n = 0;
    for (; l != NULL; l = tk_node_next_detached(l))
        n++;
    assert_int_equal(n, 3);
    assert_int_equal(ops->offer(q, &t[4].node), TK_OK);
    assert_non_null(ops->drain(q));
    ops->destroy(q);
    assert_int_equal(atomic_load(&t[1].released), 1);
    free(t);
}

typedef struct taker {
    tk_queue *q;
    pthread_t th;
    atomic_int done;
    int rc;
    tk_node *got;
} taker;

static void *taker_main(void *arg) {
    taker *tk = arg;
    tk->rc = ops->take(tk->q, &tk->got);
    atomic_store(&tk->done, 1);
    return NULL;
}

static void start_taker(taker *tk, tk_queue *q) {
    memset(tk, 0, sizeof(*tk));
    tk->q = q;
    assert_int_equal(pthread_create(&tk->th, NULL, taker_main, tk), 0);
}

static void close_when_empty_ends_takers_once_empty(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(3);
    t[0].node.deadline_ns = tk_clock_now_ns() + 20 * MS;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    tk_node *x;
    assert_int_equal(ops->take(q, &x), TK_OK); /* still handed out */
    assert_ptr_equal(x, &t[0].node);
    assert_int_equal(ops->take(q, &x), TK_ECLOSED);
    assert_int_equal(ops->poll(q, TK_NS_PER_S, &x), TK_ECLOSED);

    /* A blocked taker is released when the queue empties through remove. */
    t[1].node.deadline_ns = tk_clock_now_ns() + 60 * TK_NS_PER_S;
    assert_int_equal(ops->offer(q, &t[1].node), TK_OK); /* offer still works */
    taker tk;
    start_taker(&tk, q);
    sleep_ms(50);
    assert_int_equal(atomic_load(&tk.done), 0);
    assert_int_equal(ops->remove(q, &t[1].node), TK_EINPROGRESS);
    pthread_join(tk.th, NULL);
    assert_int_equal(tk.rc, TK_ECLOSED);

    /* ... and through drain. */
    t[2].node.deadline_ns = tk_clock_now_ns() + 60 * TK_NS_PER_S;
    assert_int_equal(ops->offer(q, &t[2].node), TK_OK);
    start_taker(&tk, q);
    sleep_ms(30);
    assert_int_equal(atomic_load(&tk.done), 0);
    assert_ptr_equal(ops->drain(q), &t[2].node);
    pthread_join(tk.th, NULL);
    assert_int_equal(tk.rc, TK_ECLOSED);
    ops->close(q, TK_QUEUE_CLOSE_NOW); /* NOW after WHEN_EMPTY is allowed */
    assert_int_equal(ops->offer(q, &t[2].node), TK_ECLOSED);
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 1);
    free(t);
}

static void close_now_ends_takers_at_once(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(2);
    t[0].node.deadline_ns = tk_clock_now_ns() - 1;
    t[1].node.deadline_ns = tk_clock_now_ns() + 60 * TK_NS_PER_S;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    assert_true(wait_expired(q, 1, 3000));
    taker tk;
    start_taker(&tk, q);
    pthread_join(tk.th, NULL); /* the due node */
    assert_int_equal(tk.rc, TK_OK);
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    assert_int_equal(ops->offer(q, &t[1].node), TK_OK);
    assert_true(wait_expired(q, 2, 3000));
    start_taker(&tk, q); /* takes t[0] again; then a blocked one */
    pthread_join(tk.th, NULL);
    assert_int_equal(tk.rc, TK_OK);
    start_taker(&tk, q);
    sleep_ms(30);
    assert_int_equal(atomic_load(&tk.done), 0);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    pthread_join(tk.th, NULL);
    assert_int_equal(tk.rc, TK_ECLOSED);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* ignored */
    assert_int_equal(ops->offer(q, &t[0].node), TK_ECLOSED);
    tk_node *x;
    assert_int_equal(ops->poll(q, 0, &x), TK_ECLOSED);
    assert_int_equal(ops->size(q), 1);
    assert_ptr_equal(ops->drain(q), &t[1].node); /* nodes stay until drain */
    ops->destroy(q);
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

/* A tick thread that spins the last 5 ms before each tick it plans hands
 * out nodes in order and never early; idle (one node an hour ahead) it
 * neither spins nor wakes. */
static void a_spinning_tick_thread_is_never_early_and_idles(void **state) {
    (void)state;
    enum { K = 20 };
    rel_ctx rel = {0};
    tk_queue *q = make_spinning_queue(5 * MS, &rel);
    tnode *t = make_nodes(K + 1);
    int64_t base = tk_clock_now_ns();
    for (int i = 0; i < K; i++) {
        /* 2 ms apart: some inside the spin window of the one before */
        t[i].node.deadline_ns = base + (int64_t)(i + 1) * 2 * MS;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    for (int i = 0; i < K; i++) {
        tk_node *got = NULL;
        assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &got), TK_OK);
        assert_ptr_equal(got, &t[i].node);
        assert_true(tk_clock_now_ns() >= got->deadline_ns);
    }
    t[K].node.deadline_ns = tk_clock_now_ns() + INT64_C(3600) * TK_NS_PER_S;
    assert_int_equal(ops->offer(q, &t[K].node), TK_OK);
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
    assert_int_equal(ops->remove(q, &t[K].node), TK_EINPROGRESS);
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

/* An offer due before the tick the thread spins towards ends the spin: it
 * is handed out at its own tick, not after the spin (spin_ns = 1 s). */
static void an_earlier_offer_ends_the_tick_threads_spin(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_spinning_queue(TK_NS_PER_S, &rel);
    tnode *t = make_nodes(2);
    t[0].node.deadline_ns = tk_clock_now_ns() + 800 * MS;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    sleep_ms(30); /* spinning towards t[0]'s tick */
    t[1].node.deadline_ns = tk_clock_now_ns() + 30 * MS;
    assert_int_equal(ops->offer(q, &t[1].node), TK_OK);
    tk_node *got = NULL;
    assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &got), TK_OK);
    int64_t at = tk_clock_now_ns();
    assert_ptr_equal(got, &t[1].node);
    assert_true(at >= t[1].node.deadline_ns);
    assert_true(at < t[0].node.deadline_ns); /* not after the spin for t[0] */
    assert_int_equal(ops->remove(q, &t[0].node), TK_EINPROGRESS);
    ops->destroy(q);
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
    WP(c)->tick_ns = TK_WHEEL_MIN_TICK_NS;
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
    WP(c)->tick_ns = TK_WHEEL_MIN_TICK_NS; /* many passes, quickly */
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

typedef struct waiter {
    tk_queue *q;
    bool timed;
    pthread_t th;
    atomic_int done;
    int rc;
    tk_node *got;
} waiter;

static void *waiter_main(void *arg) {
    waiter *w = arg;
    w->rc = w->timed ? ops->poll(w->q, 30 * TK_NS_PER_S, &w->got) : ops->take(w->q, &w->got);
    atomic_store(&w->done, 1);
    return NULL;
}

static int waiters_done(waiter *w, int n) {
    int k = 0;
    for (int i = 0; i < n; i++)
        k += atomic_load(&w[i].done);
    return k;
}

/* Blocked takers (take and poll) are woken for new nodes, one per node: a
 * lone node wakes one taker to take it, and a batch wakes all of them. */
static void blocked_takers_are_woken_one_per_new_node(void **state) {
    (void)state;
    enum { W = 4 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(W);
    waiter w[W];
    for (int i = 0; i < W; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].q = q;
        w[i].timed = i % 2 == 1;
        assert_int_equal(pthread_create(&w[i].th, NULL, waiter_main, &w[i]), 0);
    }
    sleep_ms(50);
    assert_int_equal(waiters_done(w, W), 0);

    t[0].node.deadline_ns = tk_clock_now_ns() - 1;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    for (int i = 0; i < 3000 && waiters_done(w, W) < 1; i++)
        sleep_ms(1);
    sleep_ms(50);
    assert_int_equal(waiters_done(w, W), 1); /* the others keep waiting */

    int64_t now = tk_clock_now_ns();
    for (int i = 1; i < W; i++) {
        t[i].node.deadline_ns = now - 1;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    for (int i = 0; i < W; i++)
        pthread_join(w[i].th, NULL);
    int seen[W] = {0};
    for (int i = 0; i < W; i++) {
        assert_int_equal(w[i].rc, TK_OK);
        seen[((tnode *)(void *)w[i].got)->idx]++;
    }
    for (int i = 0; i < W; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
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
    WP(c)->tick_ns = TK_WHEEL_MIN_TICK_NS;
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

typedef struct churn {
    tk_queue *q;
    tnode *nodes;
    int n;
    uint64_t seed;
    int removed_ok, removed_async, not_found;
    pthread_t th;
} churn;

static void *churn_main(void *arg) {
    churn *c = arg;
    uint64_t rs = c->seed;
    for (int i = 0; i < c->n; i++) {
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        tk_node *n = &c->nodes[i].node;
        n->deadline_ns = tk_clock_now_ns() + (int64_t)((rs >> 33) % 20) * MS - 5 * MS;
        n->seq = c->seed * 1000000 + (uint64_t)i;
        if (ops->offer(c->q, n) != TK_OK)
            continue;
        if ((rs >> 20) % 3 == 0) {
            if ((rs >> 24) % 2 == 0)
                sleep_ms(0);
            tnode *victim = &c->nodes[(rs >> 40) % (uint64_t)(i + 1)];
            int rc = ops->remove(c->q, &victim->node);
            if (rc == TK_OK)
                atomic_fetch_add(&victim->removed, 1);
            c->removed_ok += rc == TK_OK;
            c->removed_async += rc == TK_EINPROGRESS;
            c->not_found += rc == TK_ENOENT;
        }
    }
    return NULL;
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

static void concurrent_offer_remove_take_accounts_for_every_node(void **state) {
    (void)state;
    enum { PER = 4000, THREADS = 3 };
    rel_ctx rel = {0};
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = 100 * TK_NS_PER_US;
    WP(c)->slots = 64;
    tk_queue *q = make_queue(&c, &rel);
    consumer con = {.q = q};
    assert_int_equal(pthread_create(&con.th, NULL, consumer_main, &con), 0);
    churn ch[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ch[i] = (churn){.q = q, .nodes = make_nodes(PER), .n = PER, .seed = (uint64_t)i + 1};
        assert_int_equal(pthread_create(&ch[i].th, NULL, churn_main, &ch[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(ch[i].th, NULL);
    int ok = 0, async = 0;
    for (int i = 0; i < THREADS; i++) {
        ok += ch[i].removed_ok;
        async += ch[i].removed_async;
    }
    int total = THREADS * PER;
    for (int i = 0; i < 5000 && atomic_load(&con.taken) + ok + atomic_load(&rel.total) < total; i++)
        sleep_ms(1);
    atomic_store(&con.stop, 1);
    pthread_join(con.th, NULL);
    assert_int_equal(ops->check(q), TK_OK);
    assert_null(ops->drain(q));
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
    assert_int_equal(atomic_load(&con.early), 0);
    assert_int_equal(atomic_load(&rel.total), async);
    assert_int_equal(atomic_load(&con.taken) + ok + async, total);
    for (int i = 0; i < THREADS; i++)
        for (int j = 0; j < PER; j++) {
            tnode *n = &ch[i].nodes[j];
            assert_int_equal(
                atomic_load(&n->taken) + atomic_load(&n->released) + atomic_load(&n->removed), 1);
        }
    print_message("      taken %d, removed at once %d, released later %d\n",
                  atomic_load(&con.taken), ok, async);
    for (int i = 0; i < THREADS; i++)
        free(ch[i].nodes);
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

/* ---- take_batch ------------------------------------------------------------------------ */

/* Length of a take_batch() list; *sorted is cleared if it is not in
 * (deadline, seq) order. */
static size_t batch_len(tk_node *l, bool *sorted) {
    size_t k = 0;
    for (tk_node *prev = NULL; l != NULL; prev = l, l = tk_node_next_detached(l)) {
        if (prev != NULL && !before(prev, l))
            *sorted = false;
        k++;
    }
    return k;
}

/* A thread blocked in take_batch(); it records, the test asserts. */
typedef struct batcher {
    tk_queue *q;
    size_t max;
    pthread_t th;
    atomic_int done;
    int rc;
    tk_node *list;
    size_t count;
} batcher;

static void *batcher_main(void *arg) {
    batcher *b = arg;
    b->rc = ops->take_batch(b->q, b->max, &b->list, &b->count);
    atomic_store(&b->done, 1);
    return NULL;
}

static void start_batcher(batcher *b, tk_queue *q, size_t max) {
    memset(b, 0, sizeof(*b));
    b->q = q;
    b->max = max;
    assert_int_equal(pthread_create(&b->th, NULL, batcher_main, b), 0);
}

static void take_batch_rejects_bad_input_and_removes_nothing(void **state) {
    (void)state;
    assert_non_null(ops->take_batch);
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(2);
    t[0].node.deadline_ns = tk_clock_now_ns() - 1;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    assert_true(wait_expired(q, 1, 3000));
    tk_node *l = &t[1].node;
    size_t k = 99;
    assert_int_equal(ops->take_batch(NULL, 4, &l, &k), TK_EINVAL);
    assert_null(l);
    assert_int_equal(k, 0);
    l = &t[1].node;
    k = 99;
    assert_int_equal(ops->take_batch(q, 0, &l, &k), TK_EINVAL);
    assert_null(l);
    assert_int_equal(k, 0);
    k = 99;
    assert_int_equal(ops->take_batch(q, 4, NULL, &k), TK_EINVAL);
    assert_int_equal(k, 0);
    l = &t[1].node;
    assert_int_equal(ops->take_batch(q, 4, &l, NULL), TK_EINVAL);
    assert_null(l);
    assert_int_equal(ops->size(q), 1);
    assert_int_equal(ops->take_batch(q, 4, &l, &k), TK_OK);
    assert_ptr_equal(l, &t[0].node);
    assert_int_equal(k, 1);
    assert_null(tk_node_next_detached(l));
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
    free(t);
}

static int cmp_node_ptr(const void *a, const void *b) {
    const tk_node *x = *(tk_node *const *)a, *y = *(tk_node *const *)b;
    return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

/* Every node offered comes out exactly once, never early, in batches of at
 * most `max`, each in (deadline, seq) order; offered before the first is
 * due, the concatenation is exactly take()'s order: (deadline, seq). */
static void take_batch_hands_out_every_node_once_in_take_order_never_early(void **state) {
    (void)state;
    enum { N = 400, MAX = 7 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    uint64_t rs = 777;
    int64_t base = tk_clock_now_ns() + 60 * MS;
    for (int i = 0; i < N; i++) {
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = rs >> 33;
        t[i].node.deadline_ns = base + (int64_t)(r % 25) * 2 * MS + ((r >> 8) % 3) * 333333;
        t[i].node.seq = (uint64_t)((i * 7919) % N);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    bool strict = tk_clock_now_ns() < base - 2 * MS;
    tk_node *ref[N];
    for (int i = 0; i < N; i++)
        ref[i] = &t[i].node;
    qsort(ref, N, sizeof(ref[0]), cmp_node_ptr);

    tk_node *got[N];
    int ngot = 0, batches = 0, early = 0, unsorted = 0;
    while (ngot < N) {
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
            assert_true(ngot < N);
            got[ngot++] = l;
            atomic_fetch_add(&((tnode *)(void *)l)->taken, 1);
        }
        batches++;
    }
    assert_int_equal(early, 0);
    assert_int_equal(unsorted, 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&t[i].taken), 1);
    if (strict)
        for (int i = 0; i < N; i++)
            assert_ptr_equal(got[i], ref[i]);
    print_message("      %d nodes in %d batches of at most %d%s\n", N, batches, MAX,
                  strict ? "" : " [offering overran the deadlines: order not checked]");
    assert_int_equal(ops->size(q), 0);
    tk_node *x;
    assert_int_equal(ops->poll(q, 0, &x), TK_ETIMEDOUT);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    free(t);
}

/* Alone, a batch holds min(max, ready) nodes: exactly `max` while more are
 * ready, then the rest; SIZE_MAX is a valid max. */
static void take_batch_alone_takes_min_of_max_and_the_ready_nodes(void **state) {
    (void)state;
    enum { N = 100 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N + 5);
    int64_t past = tk_clock_now_ns() - TK_NS_PER_S;
    for (int i = 0; i < N + 5; i++) {
        t[i].node.deadline_ns = past + i % 3;
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    assert_true(wait_expired(q, N, 3000));
    const size_t want[4] = {30, 30, 30, 10};
    tk_node *prev = NULL;
    for (int b = 0; b < 4; b++) {
        tk_node *l;
        size_t k;
        assert_int_equal(ops->take_batch(q, 30, &l, &k), TK_OK);
        bool sorted = true;
        assert_int_equal(k, want[b]);
        assert_int_equal(batch_len(l, &sorted), k);
        assert_true(sorted);
        if (prev != NULL)
            assert_true(before(prev, l)); /* batches follow each other in order */
        for (; l != NULL; l = tk_node_next_detached(l))
            prev = l;
        assert_int_equal(ops->size(q), (size_t)(N - 30 * b) - want[b]);
    }
    tk_node *x;
    assert_int_equal(ops->poll(q, 0, &x), TK_ETIMEDOUT);
    for (int i = N; i < N + 5; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    assert_true(wait_expired(q, N + 5, 3000));
    tk_node *l;
    size_t k;
    assert_int_equal(ops->take_batch(q, SIZE_MAX, &l, &k), TK_OK);
    assert_int_equal(k, 5);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    free(t);
}

static void take_batch_blocks_until_a_node_is_due(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(4);
    t[0].node.deadline_ns = tk_clock_now_ns() + 40 * MS;
    assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
    tk_node *l;
    size_t k;
    assert_int_equal(ops->take_batch(q, 16, &l, &k), TK_OK);
    assert_true(tk_clock_now_ns() >= t[0].node.deadline_ns);
    assert_ptr_equal(l, &t[0].node);
    assert_int_equal(k, 1);

    /* blocked on an empty queue until nodes are offered and expire */
    batcher b;
    start_batcher(&b, q, 16);
    sleep_ms(50);
    assert_int_equal(atomic_load(&b.done), 0);
    int64_t now = tk_clock_now_ns();
    for (int i = 1; i < 4; i++) {
        t[i].node.deadline_ns = now - 1;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    pthread_join(b.th, NULL);
    assert_int_equal(b.rc, TK_OK);
    bool sorted = true;
    assert_true(b.count >= 1 && b.count <= 3);
    assert_int_equal(batch_len(b.list, &sorted), b.count);
    assert_true(sorted);
    int seen[4] = {0};
    for (tk_node *x = b.list; x != NULL; x = tk_node_next_detached(x))
        seen[((tnode *)(void *)x)->idx]++;
    for (size_t i = b.count; i < 3; i++) { /* published in more than one pass */
        tk_node *x;
        assert_int_equal(ops->poll(q, 3 * TK_NS_PER_S, &x), TK_OK);
        seen[((tnode *)(void *)x)->idx]++;
    }
    for (int i = 1; i < 4; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
    free(t);
}

static void take_batch_close_when_empty_and_close_now(void **state) {
    (void)state;
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(6);
    int64_t d = tk_clock_now_ns() + 20 * MS;
    for (int i = 0; i < 3; i++) {
        t[i].node.deadline_ns = d;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    tk_node *l;
    size_t k, total = 0;
    while (total < 3) { /* still handed out after the close, never early */
        assert_int_equal(ops->take_batch(q, 8, &l, &k), TK_OK);
        assert_true(tk_clock_now_ns() >= d);
        total += k;
    }
    assert_int_equal(total, 3);
    l = &t[0].node;
    k = 9;
    assert_int_equal(ops->take_batch(q, 8, &l, &k), TK_ECLOSED);
    assert_null(l);
    assert_int_equal(k, 0);

    /* a blocked batch taker is released when a removal empties the queue */
    t[3].node.deadline_ns = tk_clock_now_ns() + 60 * TK_NS_PER_S;
    assert_int_equal(ops->offer(q, &t[3].node), TK_OK);
    batcher b;
    start_batcher(&b, q, 8);
    sleep_ms(50);
    assert_int_equal(atomic_load(&b.done), 0);
    assert_int_equal(ops->remove(q, &t[3].node), TK_EINPROGRESS);
    pthread_join(b.th, NULL);
    assert_int_equal(b.rc, TK_ECLOSED);
    assert_null(b.list);
    assert_int_equal(b.count, 0);
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 1);

    /* NOW: TK_ECLOSED at once, due nodes or not; they stay until drain */
    q = make_queue(NULL, &rel);
    for (int i = 4; i < 6; i++) {
        t[i].node.deadline_ns = tk_clock_now_ns() - 1;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    assert_true(wait_expired(q, 2, 3000));
    start_batcher(&b, q, 8);
    pthread_join(b.th, NULL); /* due nodes: not blocked */
    assert_int_equal(b.rc, TK_OK);
    assert_int_equal(b.count, 2);
    start_batcher(&b, q, 8);
    sleep_ms(30);
    assert_int_equal(atomic_load(&b.done), 0);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    pthread_join(b.th, NULL);
    assert_int_equal(b.rc, TK_ECLOSED);
    assert_int_equal(ops->offer(q, &t[4].node), TK_ECLOSED);
    ops->destroy(q);

    q = make_queue(NULL, &rel);
    for (int i = 4; i < 6; i++)
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    assert_true(wait_expired(q, 2, 3000));
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    assert_int_equal(ops->take_batch(q, 8, &l, &k), TK_ECLOSED);
    assert_int_equal(ops->size(q), 2);
    l = ops->drain(q);
    bool sorted = true;
    assert_int_equal(batch_len(l, &sorted), 2);
    ops->destroy(q);
    free(t);
}

/* Nodes handed out by a batch are the caller's: remove() answers TK_ENOENT
 * (with and without a release callback) and they can be offered again. */
static void nodes_handed_out_by_take_batch_answer_enoent_to_remove(void **state) {
    (void)state;
    enum { N = 10 };
    for (int sync = 0; sync < 2; sync++) {
        rel_ctx rel = {0};
        tk_queue *q = NULL;
        assert_int_equal(ops->create(ops, NULL, sync ? NULL : on_release, &rel, &q), TK_OK);
        tnode *t = make_nodes(N);
        int64_t past = tk_clock_now_ns() - MS;
        for (int i = 0; i < N; i++) {
            t[i].node.deadline_ns = past;
            assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
        }
        assert_true(wait_expired(q, N, 3000));
        tk_node *l;
        size_t k;
        assert_int_equal(ops->take_batch(q, N, &l, &k), TK_OK);
        assert_int_equal(k, N);
        assert_int_equal(ops->size(q), 0);
        int i = 0;
        for (tk_node *x = l; x != NULL; x = tk_node_next_detached(x), i++) {
            assert_ptr_equal(x, &t[i].node);
            assert_int_equal(ops->remove(q, x), TK_ENOENT);
        }
        assert_int_equal(ops->size(q), 0);
        /* offered again, it comes back */
        tk_node *second = tk_node_next_detached(l);
        l->deadline_ns = tk_clock_now_ns() - 1;
        assert_int_equal(ops->offer(q, l), TK_OK);
        tk_node *x;
        assert_int_equal(ops->poll(q, 3 * TK_NS_PER_S, &x), TK_OK);
        assert_ptr_equal(x, &t[0].node);
        assert_ptr_equal(second, &t[1].node);
        assert_int_equal(ops->check(q), TK_OK);
        ops->destroy(q);
        assert_int_equal(atomic_load(&rel.total), 0);
        free(t);
    }
}

/* Two takers blocked in take_batch() when one tick's nodes are published
 * share them: the first takes half (the other is waiting), the second the
 * rest, instead of one taking all and the other going back to sleep. */
static void waiting_batch_takers_share_the_ready_nodes(void **state) {
    (void)state;
    enum { N = 40 };
    rel_ctx rel = {0};
    tk_queue *q = make_queue(NULL, &rel);
    tnode *t = make_nodes(N);
    batcher b[2];
    for (int i = 0; i < 2; i++)
        start_batcher(&b[i], q, 100);
    sleep_ms(100); /* both blocked */
    int64_t d = tk_clock_now_ns() + 30 * MS;
    for (int i = 0; i < N; i++) { /* one tick: expired and published at once */
        t[i].node.deadline_ns = d;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
    }
    bool in_time = tk_clock_now_ns() < d;
    for (int i = 0; i < 5000 && !(atomic_load(&b[0].done) && atomic_load(&b[1].done)); i++)
        sleep_ms(1);
    bool done = atomic_load(&b[0].done) && atomic_load(&b[1].done); /* before any close */
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* frees a taker left without nodes */
    int seen[N] = {0};
    size_t total = 0;
    for (int i = 0; i < 2; i++) {
        pthread_join(b[i].th, NULL);
        if (b[i].rc != TK_OK)
            continue;
        bool sorted = true;
        assert_int_equal(batch_len(b[i].list, &sorted), b[i].count);
        assert_true(sorted);
        for (tk_node *x = b[i].list; x != NULL; x = tk_node_next_detached(x))
            seen[((tnode *)(void *)x)->idx]++;
        total += b[i].count;
    }
    print_message("      %d nodes of one tick: %zu and %zu%s\n", N, b[0].count, b[1].count,
                  in_time ? "" : " [offering overran the deadline: shares not checked]");
    for (tk_node *x; total < N; total++) {
        assert_int_equal(ops->poll(q, 3 * TK_NS_PER_S, &x), TK_OK);
        seen[((tnode *)(void *)x)->idx]++;
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
    free(t);
}

typedef struct batch_taker {
    tk_queue *q;
    size_t max;
    pthread_t th;
    int rc, early, bad, batches;
    size_t taken;
} batch_taker;

/* Takes batches until TK_ECLOSED; counts each node it gets in the node. */
static void *batch_taker_main(void *arg) {
    batch_taker *b = arg;
    for (;;) {
        tk_node *l;
        size_t k;
        int rc = ops->take_batch(b->q, b->max, &l, &k);
        if (rc != TK_OK) {
            b->rc = rc;
            return NULL;
        }
        int64_t at = tk_clock_now_ns();
        bool sorted = true;
        if (k < 1 || k > b->max || batch_len(l, &sorted) != k || !sorted)
            b->bad++;
        for (; l != NULL; l = tk_node_next_detached(l)) {
            b->early += at < l->deadline_ns;
            atomic_fetch_add(&((tnode *)(void *)l)->taken, 1);
        }
        b->taken += k;
        b->batches++;
    }
}

typedef struct producer {
    tk_queue *q;
    tnode *nodes;
    int n;
    int failures;
    pthread_t th;
} producer;

static void *producer_main(void *arg) {
    producer *p = arg;
    uint64_t rs = 31337;
    for (int i = 0; i < p->n; i++) {
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        tk_node *n = &p->nodes[i].node;
        /* from 1 ms ago to 3 ms ahead: some due at once */
        n->deadline_ns = tk_clock_now_ns() + (int64_t)((rs >> 33) % (4 * MS)) - MS;
        n->seq = (uint64_t)i;
        p->failures += ops->offer(p->q, n) != TK_OK;
        if (i % 64 == 0)
            sleep_ms(0);
    }
    return NULL;
}

/* Two batch takers and a producer on one queue with a short tick (many
 * passes): every node is taken exactly once, never early, in batches of at
 * most `max`, each sorted; both takers end with TK_ECLOSED. */
static void two_batch_takers_and_a_producer_lose_and_duplicate_nothing(void **state) {
    (void)state;
    enum { N = 30000, T = 2 };
    rel_ctx rel = {0};
    tk_queue_config c;
    tk_queue_config_init_for(&c, tk_engine_wheel());
    WP(c)->tick_ns = 100 * TK_NS_PER_US;
    WP(c)->slots = 64;
    tk_queue *q = make_queue(&c, &rel);
    batch_taker b[T];
    for (int i = 0; i < T; i++) {
        b[i] = (batch_taker){.q = q, .max = i == 0 ? 8 : 3};
        assert_int_equal(pthread_create(&b[i].th, NULL, batch_taker_main, &b[i]), 0);
    }
    producer p = {.q = q, .nodes = make_nodes(N), .n = N};
    assert_int_equal(pthread_create(&p.th, NULL, producer_main, &p), 0);
    pthread_join(p.th, NULL);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    for (int i = 0; i < T; i++)
        pthread_join(b[i].th, NULL);
    assert_int_equal(p.failures, 0);
    for (int i = 0; i < T; i++) {
        assert_int_equal(b[i].rc, TK_ECLOSED);
        assert_int_equal(b[i].early, 0);
        assert_int_equal(b[i].bad, 0);
    }
    assert_int_equal(b[0].taken + b[1].taken, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&p.nodes[i].taken), 1);
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    print_message("      taker 1: %zu nodes in %d batches (max 8); taker 2: %zu in %d (max 3)\n",
                  b[0].taken, b[0].batches, b[1].taken, b[1].batches);
    ops->destroy(q);
    assert_int_equal(atomic_load(&rel.total), 0);
    free(p.nodes);
}

int main(void) {
    ops = tk_engine_wheel();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejects_invalid_configs),
        cmocka_unit_test(never_early_and_in_deadline_seq_order),
        cmocka_unit_test(past_deadline_is_due_at_once),
        cmocka_unit_test(a_spinning_tick_thread_is_never_early_and_idles),
        cmocka_unit_test(destroy_ends_the_tick_threads_spin),
        cmocka_unit_test(an_earlier_offer_ends_the_tick_threads_spin),
        cmocka_unit_test(an_in_order_tick_batch_leaves_in_order),
        cmocka_unit_test(a_backlog_left_by_a_short_pass_keeps_its_tick),
        cmocka_unit_test(remove_of_ready_node_is_immediate),
        cmocka_unit_test(remove_of_queued_nodes_releases_each_exactly_once),
        cmocka_unit_test(removed_node_is_never_handed_out),
        cmocka_unit_test(remove_without_release_callback_is_synchronous),
        cmocka_unit_test(max_pending_gives_efull),
        cmocka_unit_test(close_when_empty_ends_takers_once_empty),
        cmocka_unit_test(close_now_ends_takers_at_once),
        cmocka_unit_test(drain_returns_every_node_sorted_including_pending),
        cmocka_unit_test(peek_remove_first_and_remove_if),
        cmocka_unit_test(idle_tick_thread_sleeps_until_something_can_expire),
        cmocka_unit_test(out_of_order_batches_leave_in_exact_order),
        cmocka_unit_test(blocked_takers_are_woken_one_per_new_node),
        cmocka_unit_test(flood_of_far_offers_is_taken_in_before_the_first_expiry),
        cmocka_unit_test(flood_tail_is_taken_in_soon_after_the_flood_ends),
        cmocka_unit_test(many_ticks_expired_in_one_pass_leave_in_order_never_early),
        cmocka_unit_test(flood_of_offers_does_not_starve_expiry),
        cmocka_unit_test(concurrent_offer_remove_take_accounts_for_every_node),
        cmocka_unit_test(removal_racing_expiry_and_drain_accounts_for_every_node),
        cmocka_unit_test(take_batch_rejects_bad_input_and_removes_nothing),
        cmocka_unit_test(take_batch_hands_out_every_node_once_in_take_order_never_early),
        cmocka_unit_test(take_batch_alone_takes_min_of_max_and_the_ready_nodes),
        cmocka_unit_test(take_batch_blocks_until_a_node_is_due),
        cmocka_unit_test(take_batch_close_when_empty_and_close_now),
        cmocka_unit_test(nodes_handed_out_by_take_batch_answer_enoent_to_remove),
        cmocka_unit_test(waiting_batch_takers_share_the_ready_nodes),
        cmocka_unit_test(two_batch_takers_and_a_producer_lose_and_duplicate_nothing),
    };
    return cmocka_run_group_tests_name("wheel_adapter", tests, NULL, NULL);
}
