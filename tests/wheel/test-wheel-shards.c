/* SPDX-License-Identifier: MIT */
/* timerkit: tests of the wheel's sharded hand-off: a node goes to the shard
 * its shard key (tk_node_shard_key()) maps to when it is offered and when it
 * is removed, and takers see the same as with one shard. Each test runs
 * with 1, 2, 16 and 128 shards (tk__wheel_create_sharded(), so that a
 * machine with few CPUs reaches them all) and with the default count. They
 * check what is observable: size() exact once the threads are done, every
 * node handed out, removed or released exactly once, key order, the
 * pending limit, floods spread over the shards. They assert behaviour,
 * never speed, with generous bounds for a noisy 2-core machine; cmocka
 * asserts only on the main thread. */
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

#include "rng.h"
#include "timerkit/clock.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"
#include "wheel-internal.h"

#define MS TK_NS_PER_MS
#define HOUR (INT64_C(3600) * TK_NS_PER_S)

/* The shard counts every test runs with; 0: the default (tk__shard_count()). */
static const unsigned shard_counts[] = {1, 2, 16, 128, 0};
#define SHARD_COUNTS (sizeof(shard_counts) / sizeof(shard_counts[0]))

typedef struct tnode {
    tk_node node; /* first member */
    atomic_int taken;
    atomic_int released;
    atomic_int removed; /* remove() answered TK_OK */
    atomic_int drained;
    int offer_rc; /* what offer() answered, where a test keeps it */
} tnode;

typedef struct rel_ctx {
    atomic_int total;
} rel_ctx;

static void on_release(void *ctx, tk_node *n) {
    atomic_fetch_add(&((tnode *)(void *)n)->released, 1);
    atomic_fetch_add(&((rel_ctx *)ctx)->total, 1);
}

static const tk_queue_ops *ops;

/* A queue with `shards` shards (0: the default count). */
static tk_queue *make_queue(unsigned shards, const tk_queue_config *cfg, rel_ctx *rel) {
    tk_queue *q = NULL;
    int rc = shards == 0 ? ops->create(ops, cfg, on_release, rel, &q)
                         : tk__wheel_create_sharded(ops, cfg, on_release, rel, shards, &q);
    assert_int_equal(rc, TK_OK);
    assert_non_null(q);
    return q;
}

/* A seq whose shard key is `key`, unique by `i` (bit 0 is the owner's). */
static uint64_t seq_with_key(uint64_t i, unsigned key) {
    return i << 8 | (uint64_t)(key & (TK_NODE_SHARD_KEYS - 1)) << 1;
}

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Under valgrind (TK_VALGRIND=1) everything runs many times slower. */
static bool slowed(void) {
    const char *vg = getenv("TK_VALGRIND");
    return vg != NULL && vg[0] != '\0' && vg[0] != '0';
}

static bool before(const tk_node *a, const tk_node *b) {
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

/* ---- every key, one thread ----------------------------------------------------------- */

/* Nodes whose keys cover every shard key (so every shard of any count) are
 * counted exactly by size() as they are offered and removed, and those left
 * leave in exact (deadline, seq) order: near ones through poll(), never
 * early, the rest through drain(). */
static void nodes_of_every_key_are_counted_and_leave_in_key_order(void **state) {
    (void)state;
    enum { PER_KEY = 8, N = TK_NODE_SHARD_KEYS * PER_KEY };
    for (size_t c = 0; c < SHARD_COUNTS; c++) {
        rel_ctx rel = {0};
        tk_queue *q = make_queue(shard_counts[c], NULL, &rel);
        tnode *t = calloc(N, sizeof(*t));
        assert_non_null(t);
        int64_t now = tk_clock_now_ns();
        uint64_t rs = 42 + c;
        for (size_t i = 0; i < N; i++) {
            /* the first half due over 10 ms in 300 ms (in buckets by then, so
             * they leave in exact order), the rest an hour ahead */
            int64_t d = i < N / 2 ? now + 300 * MS + (int64_t)rng_below(&rs, 10) * MS
                                  : now + HOUR + (int64_t)rng_below(&rs, 1000) * MS;
            t[i].node.deadline_ns = d;
            t[i].node.seq = seq_with_key(i, (unsigned)(i % TK_NODE_SHARD_KEYS));
            assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
            assert_int_equal(ops->size(q), i + 1);
        }
        /* every ninth node removed (every key has some): pending or bucketed */
        size_t removed = 0, near_left = N / 2;
        for (size_t i = 0; i < N; i += 9) {
            int rc = ops->remove(q, &t[i].node);
            if (rc == TK_OK)
                atomic_fetch_add(&t[i].removed, 1);
            else
                assert_int_equal(rc, TK_EINPROGRESS);
            removed++;
            near_left -= i < N / 2;
            assert_int_equal(ops->size(q), N - removed);
        }
        /* offers and removals ended long before the first deadline */
        assert_true(tk_clock_now_ns() < now + 250 * MS);
        tk_node *prev = NULL;
        for (size_t k = 0; k < near_left; k++) {
            tk_node *x = NULL;
            assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &x), TK_OK);
            assert_true(x->deadline_ns <= tk_clock_now_ns());
            if (prev != NULL)
                assert_true(before(prev, x));
            prev = x;
            atomic_fetch_add(&((tnode *)(void *)x)->taken, 1);
        }
        assert_int_equal(ops->size(q), N - removed - near_left);
        assert_int_equal(ops->check(q), TK_OK);
        for (tk_node *l = ops->drain(q); l != NULL; l = tk_node_next_detached(l)) {
            if (prev != NULL)
                assert_true(before(prev, l));
            prev = l;
            atomic_fetch_add(&((tnode *)(void *)l)->drained, 1);
        }
        assert_int_equal(ops->size(q), 0);
        ops->destroy(q);
        for (size_t i = 0; i < N; i++)
            assert_int_equal(atomic_load(&t[i].taken) + atomic_load(&t[i].released) +
                                 atomic_load(&t[i].removed) + atomic_load(&t[i].drained),
                             1);
        free(t);
    }
}

/* ---- several producers ------------------------------------------------------------------ */

typedef struct producer {
    tk_queue *q;
    tnode *nodes;
    size_t n;
    unsigned key;
    uint64_t seed;
    /* results, read by the main thread after the join */
    size_t offered_near, offered_far;
    size_t near_gone, far_gone; /* remove() answered TK_OK or TK_EINPROGRESS */
    int bad;                    /* an answer the contract does not allow */
    pthread_t th;
} producer;

/* Offers its nodes under its own key, half of them due within ~3 ms, half an
 * hour ahead, and removes about a third of them, some at once (pending),
 * some later (bucketed, ready or handed out meanwhile). */
static void *producer_main(void *arg) {
    producer *p = arg;
    uint64_t rs = p->seed;
    for (size_t i = 0; i < p->n; i++) {
        tnode *t = &p->nodes[i];
        bool near = (i & 1) == 0;
        t->node.deadline_ns =
            tk_clock_now_ns() + (near ? (int64_t)rng_below(&rs, 3000) * 1000 : HOUR + (int64_t)i);
        t->node.seq = seq_with_key(p->seed << 24 | i, p->key);
        if (ops->offer(p->q, &t->node) != TK_OK) {
            p->bad++;
            continue;
        }
        *(near ? &p->offered_near : &p->offered_far) += 1;
        /* Nodes 6j + 2 (near) and 6j + 3 (far) are removed at once, most
         * still pending; nodes 6j + 4 (near) and 6j + 5 (far) 42 offers
         * later: bucketed, ready or (near ones) handed out meanwhile. */
        size_t victim = i % 6 == 2 || i % 6 == 3 ? i : i % 6 >= 4 && i >= 42 ? i - 42 : SIZE_MAX;
        if (victim == SIZE_MAX)
            continue;
        tnode *v = &p->nodes[victim];
        int rc = ops->remove(p->q, &v->node);
        if (rc == TK_OK)
            atomic_fetch_add(&v->removed, 1);
        if (rc == TK_OK || rc == TK_EINPROGRESS)
            *((victim & 1) == 0 ? &p->near_gone : &p->far_gone) += 1;
        else if (rc != TK_ENOENT || (victim & 1) != 0) /* only a due node may be gone already */
            p->bad++;
        if (i % 64 == 0)
            sleep_ms(0);
    }
    return NULL;
}

typedef struct taker {
    tk_queue *q;
    atomic_int stop;
    atomic_int taken;
    atomic_int early;
    atomic_int far; /* a node an hour ahead handed out */
    pthread_t th;
} taker;

static void *taker_main(void *arg) {
    taker *k = arg;
    for (;;) {
        tk_node *x = NULL;
        if (ops->poll(k->q, 5 * MS, &x) == TK_OK) {
            int64_t now = tk_clock_now_ns();
            if (now < x->deadline_ns)
                atomic_fetch_add(&k->early, 1);
            if (x->deadline_ns > now + HOUR / 2)
                atomic_fetch_add(&k->far, 1);
            atomic_fetch_add(&((tnode *)(void *)x)->taken, 1);
            atomic_fetch_add(&k->taken, 1);
        } else if (atomic_load(&k->stop)) {
            return NULL;
        }
    }
}

/* Producers on several threads, each under a key of its own (distinct shards
 * where there are enough of them), offer and remove while a taker takes: once
 * they are done, size() is exactly the far nodes not removed, and every node
 * was handed out, removed, drained or released exactly once. */
static void producers_with_their_own_keys_account_for_every_node(void **state) {
    (void)state;
    enum { THREADS = 4, PER = 6000 };
    for (size_t c = 0; c < SHARD_COUNTS; c++) {
        rel_ctx rel = {0};
        tk_queue *q = make_queue(shard_counts[c], NULL, &rel);
        taker k = {.q = q};
        assert_int_equal(pthread_create(&k.th, NULL, taker_main, &k), 0);
        producer p[THREADS];
        for (int i = 0; i < THREADS; i++) {
            p[i] = (producer){.q = q, .n = PER, .key = (unsigned)i * 37u, .seed = (uint64_t)i + 1};
            p[i].nodes = calloc(PER, sizeof(tnode));
            assert_non_null(p[i].nodes);
        }
        for (int i = 0; i < THREADS; i++)
            assert_int_equal(pthread_create(&p[i].th, NULL, producer_main, &p[i]), 0);
        for (int i = 0; i < THREADS; i++)
            pthread_join(p[i].th, NULL);
        size_t near_left = 0, far_left = 0;
        for (int i = 0; i < THREADS; i++) {
            assert_int_equal(p[i].bad, 0);
            near_left += p[i].offered_near - p[i].near_gone;
            far_left += p[i].offered_far - p[i].far_gone;
        }
        /* the near nodes not removed all leave through the taker */
        for (int i = 0; i < 10000 && (size_t)atomic_load(&k.taken) < near_left; i++)
            sleep_ms(1);
        assert_int_equal(atomic_load(&k.taken), near_left);
        assert_int_equal(ops->size(q), far_left);
        atomic_store(&k.stop, 1);
        pthread_join(k.th, NULL);
        assert_int_equal(atomic_load(&k.early), 0);
        assert_int_equal(atomic_load(&k.far), 0);
        assert_int_equal(ops->check(q), TK_OK);
        size_t drained = 0;
        for (tk_node *l = ops->drain(q); l != NULL; l = tk_node_next_detached(l)) {
            atomic_fetch_add(&((tnode *)(void *)l)->drained, 1);
            drained++;
        }
        assert_int_equal(drained, far_left);
        assert_int_equal(ops->size(q), 0);
        ops->destroy(q);
        for (int i = 0; i < THREADS; i++) {
            for (size_t j = 0; j < PER; j++) {
                tnode *t = &p[i].nodes[j];
                assert_int_equal(atomic_load(&t->taken) + atomic_load(&t->released) +
                                     atomic_load(&t->removed) + atomic_load(&t->drained),
                                 1);
            }
            free(p[i].nodes);
        }
    }
}

/* ---- the pending limit --------------------------------------------------------------------- */

typedef struct bounded {
    tk_queue *q;
    tnode *nodes;
    size_t n;
    unsigned key;
    size_t ok, full, other;
    pthread_t th;
} bounded;

static void *bounded_main(void *arg) {
    bounded *b = arg;
    for (size_t i = 0; i < b->n; i++) {
        int rc = ops->offer(b->q, &b->nodes[i].node);
        b->nodes[i].offer_rc = rc;
        *(rc == TK_OK ? &b->ok : rc == TK_EFULL ? &b->full : &b->other) += 1;
    }
    return NULL;
}

/* Threads offering under keys of different shards into a queue with
 * max_pending = LIMIT: exactly LIMIT offers succeed (never more, and two
 * offers racing for the last place do not both fail); a removal makes room
 * for exactly one more. */
static void offers_from_every_shard_never_pass_max_pending(void **state) {
    (void)state;
    enum { THREADS = 4, LIMIT = 500 };
    for (size_t c = 0; c < SHARD_COUNTS; c++) {
        rel_ctx rel = {0};
        tk_queue_config cfg;
        tk_queue_config_init_for(&cfg, ops);
        cfg.max_pending = LIMIT;
        tk_queue *q = make_queue(shard_counts[c], &cfg, &rel);
        bounded b[THREADS];
        int64_t far = tk_clock_now_ns() + HOUR;
        for (int w = 0; w < THREADS; w++) {
            b[w] = (bounded){.q = q, .n = LIMIT, .key = (unsigned)w * 33u + 1u};
            b[w].nodes = calloc(LIMIT, sizeof(tnode));
            assert_non_null(b[w].nodes);
            for (size_t i = 0; i < LIMIT; i++) {
                b[w].nodes[i].node.deadline_ns = far + (int64_t)i;
                b[w].nodes[i].node.seq = seq_with_key((uint64_t)w << 16 | i, b[w].key);
            }
        }
        for (int w = 0; w < THREADS; w++)
            assert_int_equal(pthread_create(&b[w].th, NULL, bounded_main, &b[w]), 0);
        for (int w = 0; w < THREADS; w++)
            pthread_join(b[w].th, NULL);
        size_t ok = 0, full = 0;
        tnode *some = NULL, *kept = NULL; /* a node queued, a node refused */
        for (int w = 0; w < THREADS; w++) {
            assert_int_equal(b[w].other, 0);
            ok += b[w].ok;
            full += b[w].full;
            for (size_t i = 0; i < LIMIT; i++) {
                if (b[w].nodes[i].offer_rc == TK_OK)
                    some = &b[w].nodes[i];
                else
                    kept = &b[w].nodes[i];
            }
        }
        assert_int_equal(ok, LIMIT);
        assert_int_equal(full, (THREADS - 1) * LIMIT);
        assert_int_equal(ops->size(q), LIMIT);
        assert_non_null(some);
        assert_non_null(kept);
        int rc = ops->remove(q, &some->node);
        assert_true(rc == TK_OK || rc == TK_EINPROGRESS);
        if (rc == TK_OK)
            atomic_fetch_add(&some->removed, 1);
        assert_int_equal(ops->offer(q, &kept->node), TK_OK);
        tnode extra = {0};
        extra.node.deadline_ns = far;
        extra.node.seq = seq_with_key(1u << 30, 5);
        assert_int_equal(ops->offer(q, &extra.node), TK_EFULL);
        assert_int_equal(ops->size(q), LIMIT);
        size_t drained = 0;
        for (tk_node *l = ops->drain(q); l != NULL; l = tk_node_next_detached(l))
            drained++;
        assert_int_equal(drained, LIMIT);
        ops->destroy(q);
        for (int w = 0; w < THREADS; w++)
            free(b[w].nodes);
    }
}

/* ---- floods over the shards -------------------------------------------------------------------
 */

/* A flood of offers far ahead whose keys spread over every shard (the
 * executor's keys today: one producer, consecutive keys) wakes the sleeping
 * tick thread while it arrives, which moves the offers into buckets long
 * before the first expiry (a minute away), however many shards. */
static void a_flood_spread_over_the_shards_is_taken_in_before_the_first_expiry(void **state) {
    (void)state;
    enum { N = 70000 };
    for (size_t c = 0; c < SHARD_COUNTS; c++) {
        rel_ctx rel = {0};
        tk_queue *q = make_queue(shard_counts[c], NULL, &rel);
        tnode *t = calloc(N, sizeof(*t));
        assert_non_null(t);
        int64_t far = tk_clock_now_ns() + 60 * TK_NS_PER_S;
        for (size_t i = 0; i < N; i++) {
            t[i].node.deadline_ns = far + (int64_t)i;
            t[i].node.seq = (uint64_t)i << 1; /* key i % 128, as consecutive seqs give */
        }
        assert_int_equal(ops->offer(q, &t[0].node), TK_OK);
        sleep_ms(50); /* the thread took it in and sleeps until the minute is up */
        for (size_t i = 1; i < N; i++)
            assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
        tk__wheel_stats st;
        for (int i = 0; i < 5000; i++) {
            tk__wheel_stats_get(q, &st);
            if (st.moved >= N)
                break;
            sleep_ms(1);
        }
        print_message("      %u shards (0: the default): %llu of %d far offers moved into "
                      "buckets, %llu wake-ups\n",
                      shard_counts[c], (unsigned long long)st.moved, N,
                      (unsigned long long)st.wakeups);
        assert_int_equal(st.moved, N);
        assert_int_equal(st.expired, 0);
        assert_int_equal(ops->size(q), N);
        assert_int_equal(ops->check(q), TK_OK);
        size_t n = 0;
        for (tk_node *l = ops->drain(q); l != NULL; l = tk_node_next_detached(l))
            n++;
        assert_int_equal(n, N);
        ops->destroy(q);
        free(t);
    }
}

/* One producer's nodes due at one instant, offered in key order and spread
 * over the shards by consecutive keys (the tick thread merges the shards'
 * lists, so they reach their bucket in key order), leave in exact order,
 * never early. */
static void one_producers_nodes_spread_over_shards_leave_their_tick_in_order(void **state) {
    (void)state;
    size_t n = slowed() ? 2000 : 20000;
    for (size_t c = 0; c < SHARD_COUNTS; c++) {
        rel_ctx rel = {0};
        tk_queue *q = make_queue(shard_counts[c], NULL, &rel);
        tnode *t = calloc(n, sizeof(*t));
        assert_non_null(t);
        int64_t due = tk_clock_now_ns() + 300 * MS;
        for (size_t i = 0; i < n; i++) {
            t[i].node.deadline_ns = due;
            t[i].node.seq = (uint64_t)i << 1;
            assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
        }
        /* offers made after the deadline may leave behind others of the tick
         * (the reordering the engine documents): then order is not asked */
        bool in_time = tk_clock_now_ns() < due - 2 * MS;
        if (!in_time)
            print_message("      %u shards: the offers outlasted the deadline; order not checked\n",
                          shard_counts[c]);
        tk_node *prev = NULL;
        for (size_t k = 0; k < n; k++) {
            tk_node *x = NULL;
            assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &x), TK_OK);
            assert_true(tk_clock_now_ns() >= x->deadline_ns);
            if (prev != NULL && in_time)
                assert_true(before(prev, x));
            prev = x;
        }
        assert_int_equal(ops->size(q), 0);
        ops->destroy(q);
        free(t);
    }
}

/* ---- shard counts -------------------------------------------------------------------------- */

/* The engine says it is sharded; a shard count that is not a power of two
 * from 1 to TK_NODE_SHARD_KEYS is refused. */
static void the_engine_is_sharded_and_refuses_bad_shard_counts(void **state) {
    (void)state;
    assert_true((ops->caps & TK_QUEUE_CAP_SHARDED) != 0);
    static const unsigned bad[] = {0, 3, 6, 100, 256, 1024};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tk_queue *q = (tk_queue *)(uintptr_t)1;
        assert_int_equal(tk__wheel_create_sharded(ops, NULL, on_release, NULL, bad[i], &q),
                         TK_EINVAL);
        assert_null(q);
    }
}

int main(void) {
    ops = tk_engine_wheel();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_engine_is_sharded_and_refuses_bad_shard_counts),
        cmocka_unit_test(nodes_of_every_key_are_counted_and_leave_in_key_order),
        cmocka_unit_test(producers_with_their_own_keys_account_for_every_node),
        cmocka_unit_test(offers_from_every_shard_never_pass_max_pending),
        cmocka_unit_test(a_flood_spread_over_the_shards_is_taken_in_before_the_first_expiry),
        cmocka_unit_test(one_producers_nodes_spread_over_shards_leave_their_tick_in_order),
    };
    return cmocka_run_group_tests_name("wheel_shards", tests, NULL, NULL);
}
