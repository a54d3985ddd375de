/* SPDX-License-Identifier: MIT */
/* timerkit: tests of the heap engine (tk_engine_heap()) that only the heap
 * needs: its table, its core's own checks seen through the generic blocking
 * adapter (adapter/blocking.c), its `capacity` parameter, and above all the
 * resizing of its array outside the adapter's lock (tk_core_resize_ops):
 * growth ahead of need, TK_ENOMEM when a full array cannot grow, memory
 * returned after a mass removal, no lock held around the allocator, and no
 * node lost or duplicated while resizes race with offers, takes, batch takes
 * and removals; the last two cancel hundreds of thousands of nodes, alone
 * and racing with takers, and watch the memory follow.
 *
 * The blocking queue contract itself (never early, order, poll, remove,
 * close, take_batch, the pending limit, spinning...) is tested once for
 * every engine by the queue-contract suite, tests/queue/.
 *
 * Real time on a noisy 2-core box: every bound is generous and only behaviour
 * is asserted, never speed. cmocka asserts longjmp, so helper threads only
 * record what they saw; the test's main thread joins them and then asserts. */
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
#include "timerkit/engine.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

#define MS TK_NS_PER_MS

static const tk_queue_ops *ops;

static tk_queue *make_queue(void) {
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, NULL, NULL, NULL, &q), TK_OK);
    assert_non_null(q);
    return q;
}

/* Every node of these tests has shard key 0 (seq shifted past the key's
 * bits), so that one shard's array does all the work whose growth and
 * shrinking they follow; the order of the seqs is kept. */
static void node_at(tk_node *n, int64_t deadline_ns, uint64_t seq) {
    memset(n, 0, sizeof(*n));
    n->deadline_ns = deadline_ns;
    n->seq = seq << 8;
}

/* ---- the table, the capacity, the core's own checks -------------------------------- */

static void ops_table_is_named_heap_has_exact_order_and_every_op(void **state) {
    (void)state;
    assert_non_null(ops);
    assert_string_equal(ops->name, "heap");
    assert_int_equal(ops->caps, TK_QUEUE_CAP_EXACT_ORDER | TK_QUEUE_CAP_BATCH_TAKE |
                                    TK_QUEUE_CAP_BOUNDED | TK_QUEUE_CAP_SHARDED |
                                    TK_QUEUE_CAP_WAKE | TK_QUEUE_CAP_SLACK);
    assert_non_null(ops->core);
    assert_non_null(ops->core->latest);
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
    assert_non_null(ops->wake);
}

/* An allocator that counts the bytes it has out. */
typedef struct count_alloc {
    size_t live_bytes;
} count_alloc;

static void *count_alloc_fn(void *ctx, size_t size) {
    count_alloc *c = ctx;
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

/* The `capacity` parameter sizes the first array, taken from the configured
 * allocator; destroy() gives it all back. */
static void the_capacity_parameter_sizes_the_first_array(void **state) {
    (void)state;
    count_alloc c = {0};
    tk_allocator a = {count_alloc_fn, count_free_fn, &c};
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
    cfg.allocator = &a;
    assert_int_equal(tk_queue_config_set_value(&cfg, "capacity", 1000), TK_OK);
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_OK);
    assert_true(c.live_bytes >= 1000 * 2 * sizeof(int64_t));
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    assert_int_equal(c.live_bytes, 0);
}

/* The heap's core knows its nodes' slots: offering a node it holds already
 * is refused (TK_EINVAL) and leaves the queue as it was. */
static void offer_refuses_a_node_already_queued(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node n;
    node_at(&n, tk_clock_now_ns(), 1);
    assert_int_equal(ops->offer(q, &n), TK_OK);
    assert_int_equal(ops->offer(q, &n), TK_EINVAL);
    assert_int_equal(ops->size(q), 1);
    assert_int_equal(ops->check(q), TK_OK);
    assert_int_equal(ops->remove(q, &n), TK_OK);
    ops->destroy(q);
}

/* The generic adapter hands a node already due to poll() with no timeout:
 * it reads the clock under its lock, no wait is needed. (The contract does
 * not promise it: an engine may take a due node in later, as the wheel's
 * tick thread does.) */
static void poll_without_a_timeout_hands_out_a_node_already_due(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tk_node due;
    node_at(&due, tk_clock_now_ns() - 1, 2);
    assert_int_equal(ops->offer(q, &due), TK_OK);
    tk_node *got = NULL;
    assert_int_equal(ops->poll(q, 0, &got), TK_OK);
    assert_ptr_equal(got, &due);
    ops->destroy(q);
}

/* ---- lists (for the resize race's batch takers) ----------------------------------- */

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
        cmocka_unit_test(the_capacity_parameter_sizes_the_first_array),
        cmocka_unit_test(offer_refuses_a_node_already_queued),
        cmocka_unit_test(poll_without_a_timeout_hands_out_a_node_already_due),
        cmocka_unit_test(the_array_grows_before_it_is_full_and_shrinks_after_a_mass_removal),
        cmocka_unit_test(an_offer_that_cannot_grow_a_full_array_reports_enomem_and_changes_nothing),
        cmocka_unit_test(resizes_allocate_and_free_while_other_threads_can_use_the_queue),
        cmocka_unit_test(hundreds_of_thousands_of_cancels_leave_exactly_the_rest_to_take_in_order),
        cmocka_unit_test(cancels_racing_with_takes_never_hand_out_a_cancelled_node),
        cmocka_unit_test(offers_takes_and_removals_racing_with_resizes_lose_and_duplicate_nothing),
        cmocka_unit_test(
            batch_takes_racing_with_offers_removals_and_resizes_lose_and_duplicate_nothing),
    };
    return cmocka_run_group_tests_name("heap_engine", tests, setup_ops, NULL);
}
