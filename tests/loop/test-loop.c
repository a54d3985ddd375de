/* SPDX-License-Identifier: MIT */
/* The passive loop (timerkit/loop.h) on every registered engine: timers for
 * the caller's own event loop, with no thread. Behaviour only, in virtual
 * time: never early, (deadline, seq) order, nothing lost, the epoll timeout
 * rounded up (down within a window's slack, never before the first timer),
 * tk_loop_latest() within every window, time that never goes back, and
 * every bad argument.
 *   tk_loop_test [cmocka filter] */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rng.h"
#include "timerkit.h"

#define ORIGIN ((int64_t)1000 * TK_NS_PER_S)
/* every built-in engine's default grid is far finer than this: a timer must
 * be out once the loop's time is this far past its deadline */
#define LATE_BOUND (TK_NS_PER_S)

static tk_loop *make(const tk_queue_ops *engine) {
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, engine), TK_OK);
    tk_loop *loop = NULL;
    int rc = tk_loop_create(&cfg, ORIGIN, &loop);
    if (rc != TK_OK)
        fail_msg("%s: tk_loop_create: %s", engine->name, tk_strerror(rc));
    assert_ptr_equal(tk_loop_engine(loop), engine);
    return loop;
}

/* One engine's run: random adds, removes and expiries with a time that
 * moves forward, against what must hold. */
typedef struct entry {
    tk_node node;
    int held;       /* 1: added and neither removed nor handed out */
    uint64_t order; /* the add's rank, for the seq order check */
} entry;

#define N 600

static void random_run(const tk_queue_ops *engine, uint64_t seed) {
    tk_loop *loop = make(engine);
    entry *e = calloc(N, sizeof *e);
    assert_non_null(e);
    uint64_t rng = seed;
    int64_t now = ORIGIN;
    size_t held = 0;
    uint64_t adds = 0;
    for (int step = 0; step < 6000; step++) {
        int op = (int)rng_below(&rng, 10);
        entry *x = &e[rng_below(&rng, N)];
        if (op < 5) { /* add, or remove when held */
            if (!x->held) {
                /* deadlines before now, around now, far ahead; many ties */
                int64_t d = now + ((int64_t)rng_below(&rng, 4000) - 500) * TK_NS_PER_MS / 4;
                if (rng_below(&rng, 4) == 0)
                    d = now + (int64_t)rng_below(&rng, 4) * TK_NS_PER_MS;
                /* a third of the timers have slack, up to 2 s */
                int64_t slack = 0;
                if (rng_below(&rng, 3) == 0)
                    slack = (int64_t)rng_below(&rng, 2000) * TK_NS_PER_MS;
                if (slack == 0 && rng_below(&rng, 2) == 0)
                    assert_int_equal(tk_loop_add(loop, &x->node, d), TK_OK);
                else
                    assert_int_equal(tk_loop_add_within(loop, &x->node, d, slack), TK_OK);
                assert_int_equal(x->node.slack_ns, slack);
                x->held = 1;
                x->order = adds++;
                held++;
                /* a second add of a held timer is refused, and changes nothing */
                int64_t keep = x->node.deadline_ns;
                assert_int_equal(tk_loop_add(loop, &x->node, d + 1), TK_EINVAL);
                assert_int_equal(x->node.deadline_ns, keep);
            } else {
                assert_int_equal(tk_loop_remove(loop, &x->node), TK_OK);
                assert_int_equal(tk_loop_remove(loop, &x->node), TK_ENOENT);
                x->held = 0;
                held--;
            }
        } else if (op < 8) { /* time passes, then expire */
            now += (int64_t)rng_below(&rng, 40) * TK_NS_PER_MS / 8;
            size_t max = rng_below(&rng, 3) == 0 ? 1 + rng_below(&rng, 5) : SIZE_MAX;
            tk_node *list = NULL;
            size_t got = tk_loop_expire(loop, now, max, &list);
            assert_true(got <= max);
            const tk_node *prev = NULL;
            size_t walked = 0;
            for (tk_node *n = list; n != NULL; n = tk_node_next_detached(n)) {
                entry *y = (entry *)((char *)n - offsetof(entry, node));
                if (!y->held)
                    fail_msg("%s: a timer that is not held was handed out", engine->name);
                if (n->deadline_ns > now)
                    fail_msg("%s: early: deadline %lld handed out at %lld", engine->name,
                             (long long)n->deadline_ns, (long long)now);
                if (prev != NULL && (prev->deadline_ns > n->deadline_ns ||
                                     (prev->deadline_ns == n->deadline_ns && prev->seq >= n->seq)))
                    fail_msg("%s: out of (deadline, seq) order", engine->name);
                prev = n;
                walked++;
            }
            assert_int_equal(walked, got);
            for (tk_node *n = list, *next; n != NULL; n = next) {
                next = tk_node_next_detached(n);
                entry *y = (entry *)((char *)n - offsetof(entry, node));
                y->held = 0;
                held--;
                /* handed out: no longer in the loop */
                assert_int_equal(tk_loop_remove(loop, n), TK_ENOENT);
            }
            if (max == SIZE_MAX) /* nothing lost: whatever is long overdue is out */
                for (int i = 0; i < N; i++)
                    if (e[i].held && e[i].node.deadline_ns + LATE_BOUND <= now)
                        fail_msg("%s: a timer %lld ns overdue was not handed out", engine->name,
                                 (long long)(now - e[i].node.deadline_ns));
        } else if (op == 8) { /* the loop's time never goes back */
            tk_node *list = NULL;
            size_t got = tk_loop_expire(loop, now - 50 * TK_NS_PER_MS, SIZE_MAX, &list);
            for (tk_node *n = list, *next; n != NULL; n = next) {
                next = tk_node_next_detached(n);
                entry *y = (entry *)((char *)n - offsetof(entry, node));
                assert_true(n->deadline_ns <= now);
                y->held = 0;
                held--;
                got--;
            }
            assert_int_equal(got, 0);
        } else { /* what the loop says about itself */
            assert_int_equal(tk_loop_count(loop), held);
            int64_t when = 0, latest = 0;
            int rc = tk_loop_next(loop, &when);
            int rc_latest = tk_loop_latest(loop, &latest);
            int ms = tk_loop_timeout_ms(loop, now);
            if (held == 0) {
                assert_int_equal(rc, TK_ENOENT);
                assert_int_equal(rc_latest, TK_ENOENT);
                assert_int_equal(ms, -1);
            } else {
                assert_int_equal(rc_latest, TK_OK);
                /* latest: not before next(), not after any window's end
                 * (give or take the engine's grid) */
                assert_true(latest >= when);
                for (int i = 0; i < N; i++)
                    if (e[i].held) {
                        int64_t end = e[i].node.deadline_ns + e[i].node.slack_ns;
                        if (latest > end + LATE_BOUND)
                            fail_msg("%s: latest %lld past a window's end %lld", engine->name,
                                     (long long)latest, (long long)end);
                    }
                assert_int_equal(rc, TK_OK);
                /* next() is never after the first timer's deadline's due time,
                 * which is at most LATE_BOUND after the deadline */
                int64_t first = INT64_MAX;
                for (int i = 0; i < N; i++)
                    if (e[i].held && e[i].node.deadline_ns < first)
                        first = e[i].node.deadline_ns;
                assert_true(when <= first + LATE_BOUND);
                if (latest <= now) {
                    assert_int_equal(ms, 0);
                } else {
                    /* never early: a wait that long reaches `when`; and no
                     * whole millisecond past latest (nor past `when` when
                     * latest is `when`: rounded up, as without slack) */
                    assert_true((int64_t)ms * TK_NS_PER_MS >= when - now);
                    int64_t bound = latest > when ? latest : when;
                    assert_true((int64_t)(ms - 1) * TK_NS_PER_MS < bound - now);
                }
            }
        }
    }
    /* the end: everything still held leaves once its time has come */
    now += 1000 * TK_NS_PER_S;
    tk_node *list = NULL;
    size_t got = tk_loop_expire(loop, now, SIZE_MAX, &list);
    assert_int_equal(got, held);
    assert_int_equal(tk_loop_count(loop), 0);
    assert_int_equal(tk_loop_timeout_ms(loop, now), -1);
    tk_loop_destroy(loop);
    free(e);
}

static void test_random_every_engine(void **state) {
    (void)state;
    assert_true(tk_engine_count() >= 1);
    for (size_t i = 0; i < tk_engine_count(); i++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            random_run(tk_engine_at(i), seed * 0x9e3779b97f4a7c15ull);
}

/* Equal deadlines leave in the order they were added, on every engine. */
static void test_ties_in_add_order(void **state) {
    (void)state;
    for (size_t i = 0; i < tk_engine_count(); i++) {
        tk_loop *loop = make(tk_engine_at(i));
        tk_node n[8];
        memset(n, 0, sizeof n);
        int64_t d = ORIGIN + 5 * TK_NS_PER_MS;
        for (int k = 0; k < 8; k++)
            assert_int_equal(tk_loop_add(loop, &n[(k * 5) % 8], d), TK_OK);
        tk_node *list = NULL;
        assert_int_equal(tk_loop_expire(loop, d - 1, SIZE_MAX, &list), 0);
        assert_null(list);
        assert_int_equal(tk_loop_expire(loop, d + LATE_BOUND, SIZE_MAX, &list), 8);
        int k = 0;
        for (tk_node *x = list; x != NULL; x = tk_node_next_detached(x), k++)
            assert_ptr_equal(x, &n[(k * 5) % 8]);
        tk_loop_destroy(loop);
    }
}

/* A timer whose deadline has passed is due at the next expire, and a timer
 * handed out may be added again at once (a periodic timer). */
static void test_past_deadline_and_readd(void **state) {
    (void)state;
    for (size_t i = 0; i < tk_engine_count(); i++) {
        tk_loop *loop = make(tk_engine_at(i));
        tk_node a;
        memset(&a, 0, sizeof a);
        int64_t now = ORIGIN + 10 * TK_NS_PER_MS;
        tk_node *list = NULL;
        assert_int_equal(tk_loop_expire(loop, now, SIZE_MAX, &list), 0);
        assert_int_equal(tk_loop_add(loop, &a, ORIGIN), TK_OK);
        assert_int_equal(tk_loop_timeout_ms(loop, now), 0);
        assert_int_equal(tk_loop_expire(loop, now, SIZE_MAX, &list), 1);
        assert_ptr_equal(list, &a);
        for (int round = 0; round < 5; round++) {
            now += 3 * TK_NS_PER_MS;
            assert_int_equal(tk_loop_add(loop, &a, now), TK_OK);
            assert_int_equal(tk_loop_expire(loop, now + LATE_BOUND, SIZE_MAX, &list), 1);
            now += LATE_BOUND;
        }
        assert_int_equal(tk_loop_count(loop), 0);
        tk_loop_destroy(loop);
    }
}

/* max bounds a batch; 0 hands out nothing and leaves everything due. */
static void test_expire_max(void **state) {
    (void)state;
    for (size_t i = 0; i < tk_engine_count(); i++) {
        tk_loop *loop = make(tk_engine_at(i));
        tk_node n[5];
        memset(n, 0, sizeof n);
        for (int k = 0; k < 5; k++)
            assert_int_equal(tk_loop_add(loop, &n[k], ORIGIN + k), TK_OK);
        tk_node *list = (tk_node *)1;
        int64_t now = ORIGIN + LATE_BOUND;
        assert_int_equal(tk_loop_expire(loop, now, 0, &list), 0);
        assert_null(list);
        assert_int_equal(tk_loop_expire(loop, now, 2, &list), 2);
        assert_ptr_equal(list, &n[0]);
        assert_int_equal(tk_loop_expire(loop, now, 2, &list), 2);
        assert_ptr_equal(list, &n[2]);
        assert_int_equal(tk_loop_expire(loop, now, 2, &list), 1);
        assert_ptr_equal(list, &n[4]);
        tk_loop_destroy(loop);
    }
}

/* The epoll timeout: -1 empty, rounded up, capped at INT32_MAX. */
static void test_timeout_ms(void **state) {
    (void)state;
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, tk_engine_by_name("heap")), TK_OK);
    tk_loop *loop = NULL;
    assert_int_equal(tk_loop_create(&cfg, 0, &loop), TK_OK);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), -1);
    tk_node a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    assert_int_equal(tk_loop_add(loop, &a, 2 * TK_NS_PER_MS + 1), TK_OK);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), 3);
    assert_int_equal(tk_loop_timeout_ms(loop, 1), 2); /* exactly 2 ms left */
    assert_int_equal(tk_loop_timeout_ms(loop, 2), 2);
    assert_int_equal(tk_loop_timeout_ms(loop, 2 * TK_NS_PER_MS + 1), 0);
    assert_int_equal(tk_loop_timeout_ms(loop, INT64_MAX), 0);
    assert_int_equal(tk_loop_remove(loop, &a), TK_OK);
    assert_int_equal(tk_loop_add(loop, &b, INT64_MAX), TK_OK);
    assert_int_equal(tk_loop_timeout_ms(loop, INT64_MIN), INT32_MAX);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), INT32_MAX);
    tk_loop_destroy(loop);
}

/* A heap whose core reports latest() as the first node's window end: the
 * loop's own arithmetic, checked against exact numbers, whatever the
 * built-in engines do with slack. Exact while the first node (by deadline)
 * also has the earliest window end, as in every use below. */
static const tk_core_ops *heap_core;

static int first_end_latest(const void *core, int64_t *when_ns) {
    const tk_node *n = heap_core->first(core);
    if (n == NULL)
        return TK_ENOENT;
    *when_ns = n->slack_ns > INT64_MAX - n->deadline_ns ? INT64_MAX : n->deadline_ns + n->slack_ns;
    return TK_OK;
}

static tk_loop *make_with_latest(tk_queue_ops *ops, tk_core_ops *core) {
    const tk_queue_ops *heap = tk_engine_by_name("heap");
    assert_non_null(heap);
    heap_core = heap->core;
    *ops = *heap;
    *core = *heap->core;
    core->latest = first_end_latest;
    ops->core = core;
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, heap), TK_OK);
    cfg.engine = ops;
    tk_loop *loop = NULL;
    assert_int_equal(tk_loop_create(&cfg, 0, &loop), TK_OK);
    return loop;
}

/* loop.h, tk_loop_timeout_ms(): "the time left until tk_loop_latest()
 * rounded down if that wait still reaches tk_loop_next(), else the time left
 * until tk_loop_next() rounded up". */
static void test_timeout_ms_with_slack(void **state) {
    (void)state;
    tk_queue_ops ops;
    tk_core_ops core;
    tk_loop *loop = make_with_latest(&ops, &core);
    const int64_t MS = TK_NS_PER_MS;
    tk_node a;
    memset(&a, 0, sizeof a);
    int64_t when = 0;
    assert_int_equal(tk_loop_latest(loop, &when), TK_ENOENT);

    /* no slack: rounded up, as ever */
    assert_int_equal(tk_loop_add_within(loop, &a, 2 * MS + 1, 0), TK_OK);
    assert_int_equal(tk_loop_latest(loop, &when), TK_OK);
    assert_int_equal(when, 2 * MS + 1);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), 3);
    assert_int_equal(tk_loop_remove(loop, &a), TK_OK);

    /* slack to spare: latest rounded down (7.000001 ms -> 7) */
    assert_int_equal(tk_loop_add_within(loop, &a, 2 * MS + 1, 5 * MS), TK_OK);
    assert_int_equal(tk_loop_next(loop, &when), TK_OK);
    assert_int_equal(when, 2 * MS + 1); /* next() is unchanged by slack */
    assert_int_equal(tk_loop_latest(loop, &when), TK_OK);
    assert_int_equal(when, 7 * MS + 1);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), 7);
    assert_int_equal(tk_loop_timeout_ms(loop, 2), 6); /* 6.999999 ms: down, still past next */
    /* the first timer due already, its window open: wait into the window */
    assert_int_equal(tk_loop_timeout_ms(loop, 3 * MS), 4);
    assert_int_equal(tk_loop_timeout_ms(loop, 7 * MS), 0); /* under 1 ms left: down to 0 */
    assert_int_equal(tk_loop_timeout_ms(loop, 7 * MS + 1), 0);
    assert_int_equal(tk_loop_remove(loop, &a), TK_OK);

    /* no whole millisecond in [next, latest]: next rounded up (3), which
     * passes latest (2.5 ms) by under a millisecond */
    assert_int_equal(tk_loop_add_within(loop, &a, 2 * MS + 1, MS / 2), TK_OK);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), 3);
    assert_int_equal(tk_loop_remove(loop, &a), TK_OK);

    /* a whole millisecond in the window: exactly it */
    assert_int_equal(tk_loop_add_within(loop, &a, 2 * MS, 9 * MS / 10), TK_OK);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), 2);
    assert_int_equal(tk_loop_remove(loop, &a), TK_OK);

    /* a window to the end of time: capped */
    assert_int_equal(tk_loop_add_within(loop, &a, 2 * MS, INT64_MAX), TK_OK);
    assert_int_equal(tk_loop_latest(loop, &when), TK_OK);
    assert_int_equal(when, INT64_MAX);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), INT32_MAX);
    assert_int_equal(tk_loop_remove(loop, &a), TK_OK);

    /* tk_loop_add() is slack 0, whatever the node held before */
    a.slack_ns = 123;
    assert_int_equal(tk_loop_add(loop, &a, 2 * MS + 1), TK_OK);
    assert_int_equal(a.slack_ns, 0);
    assert_int_equal(tk_loop_timeout_ms(loop, 0), 3);
    tk_loop_destroy(loop);
}

/* loop.h, tk_loop_add_within(): "the timer may expire at any time in
 * [deadline_ns, deadline_ns + slack_ns], never before deadline_ns, so that
 * one wake-up of the caller's loop serves many timers". A caller that
 * sleeps tk_loop_timeout_ms() each round and then expires: on every engine
 * no timer leaves early and none after its window (give or take the
 * engine's grid and the millisecond of rounding); on an engine with
 * TK_QUEUE_CAP_SLACK, 100 timers due over 100 ms with 1 s of slack take a
 * few wake-ups, not one each. */
static void drive_slack(const tk_queue_ops *engine, tk_loop *loop, int count, int *wakes) {
    int64_t now = ORIGIN;
    int left = count;
    *wakes = 0;
    while (left > 0) {
        int ms = tk_loop_timeout_ms(loop, now);
        assert_true(ms >= 0);
        int64_t next = 0;
        assert_int_equal(tk_loop_next(loop, &next), TK_OK);
        now += (int64_t)ms * TK_NS_PER_MS;
        tk_node *list = NULL;
        size_t got = tk_loop_expire(loop, now, SIZE_MAX, &list);
        (*wakes)++;
        if (got == 0)
            assert_true(now >= next); /* an empty wake-up still reached next() */
        for (tk_node *x = list; x != NULL; x = tk_node_next_detached(x)) {
            if (x->deadline_ns > now)
                fail_msg("%s: early by %lld ns", engine->name, (long long)(x->deadline_ns - now));
            if (now > x->deadline_ns + x->slack_ns + TK_NS_PER_MS + LATE_BOUND / 10)
                fail_msg("%s: %lld ns past its window", engine->name,
                         (long long)(now - x->deadline_ns - x->slack_ns));
            left--;
        }
        assert_true(*wakes <= 10 * count);
    }
}

static void test_slack_every_engine(void **state) {
    (void)state;
    enum { COUNT = 100 };
    for (size_t i = 0; i < tk_engine_count(); i++) {
        const tk_queue_ops *engine = tk_engine_at(i);
        tk_loop *loop = make(engine);
        tk_node n[COUNT];
        memset(n, 0, sizeof n);
        /* deadlines every ms from 50 ms on, 1 s of slack each */
        for (int k = 0; k < COUNT; k++)
            assert_int_equal(
                tk_loop_add_within(loop, &n[k], ORIGIN + (50 + k) * TK_NS_PER_MS, TK_NS_PER_S),
                TK_OK);
        int wakes = 0;
        drive_slack(engine, loop, COUNT, &wakes);
        /* a core's latest() may be a lower bound (a hierarchical wheel's
         * next cascade): a few wake-ups more, not one per deadline */
        if ((engine->caps & TK_QUEUE_CAP_SLACK) != 0 && wakes > COUNT / 10)
            fail_msg("%s: %d wake-ups for %d windows that all overlap", engine->name, wakes, COUNT);
        /* without slack, latest() is no later than the first deadline (on
         * the engine's grid) */
        for (int k = 0; k < COUNT; k++)
            assert_int_equal(tk_loop_add(loop, &n[k], ORIGIN + (2000 + k) * TK_NS_PER_MS), TK_OK);
        int64_t next = 0, latest = 0;
        assert_int_equal(tk_loop_next(loop, &next), TK_OK);
        assert_int_equal(tk_loop_latest(loop, &latest), TK_OK);
        assert_true(latest >= next);
        assert_true(latest <= ORIGIN + 2000 * TK_NS_PER_MS + LATE_BOUND / 10);
        tk_node *list = NULL;
        assert_int_equal(tk_loop_expire(loop, ORIGIN + 10 * TK_NS_PER_S, SIZE_MAX, &list), COUNT);
        tk_loop_destroy(loop);
    }
}

/* Every bad argument gets a status, not a crash. */
static void test_bad_input(void **state) {
    (void)state;
    tk_loop *loop = NULL;
    tk_node n;
    memset(&n, 0, sizeof n);
    int64_t when = 0;
    tk_node *list = (tk_node *)1;
    assert_int_equal(tk_loop_create(NULL, 0, NULL), TK_EINVAL);
    assert_int_equal(tk_loop_add(NULL, &n, 0), TK_EINVAL);
    assert_int_equal(tk_loop_remove(NULL, &n), TK_EINVAL);
    assert_int_equal(tk_loop_next(NULL, &when), TK_EINVAL);
    assert_int_equal(tk_loop_latest(NULL, &when), TK_EINVAL);
    assert_int_equal(tk_loop_add_within(NULL, &n, 0, 0), TK_EINVAL);
    assert_int_equal(tk_loop_timeout_ms(NULL, 0), -1);
    assert_int_equal(tk_loop_expire(NULL, 0, 1, &list), 0);
    assert_null(list);
    assert_int_equal(tk_loop_count(NULL), 0);
    assert_null(tk_loop_engine(NULL));
    tk_loop_destroy(NULL);

    /* NULL config: the default engine */
    assert_int_equal(tk_loop_create(NULL, 0, &loop), TK_OK);
    assert_ptr_equal(tk_loop_engine(loop), tk_engine_default());
    assert_int_equal(tk_loop_add(loop, NULL, 0), TK_EINVAL);
    assert_int_equal(tk_loop_remove(loop, NULL), TK_EINVAL);
    assert_int_equal(tk_loop_remove(loop, &n), TK_ENOENT); /* never added */
    assert_int_equal(tk_loop_next(loop, NULL), TK_EINVAL);
    assert_int_equal(tk_loop_next(loop, &when), TK_ENOENT);
    assert_int_equal(tk_loop_latest(loop, NULL), TK_EINVAL);
    assert_int_equal(tk_loop_latest(loop, &when), TK_ENOENT);
    assert_int_equal(tk_loop_add_within(loop, NULL, 0, 0), TK_EINVAL);
    assert_int_equal(tk_loop_add_within(loop, &n, 0, -1), TK_EINVAL);
    assert_int_equal(tk_loop_count(loop), 0);
    assert_int_equal(tk_loop_expire(loop, 0, 1, NULL), 0);
    tk_loop_destroy(loop);

    /* a parameter out of range */
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, tk_engine_by_name("wheel")), TK_OK);
    tk_queue_config bad = cfg;
    memset(bad.params.bytes, 0xff, sizeof bad.params.bytes);
    loop = (tk_loop *)1;
    assert_int_equal(tk_loop_create(&bad, 0, &loop), TK_EINVAL);
    assert_null(loop);

    /* an engine with no core runs only as a blocking queue */
    tk_queue_ops coreless = *tk_engine_by_name("heap");
    coreless.core = NULL;
    tk_queue_config none;
    assert_int_equal(tk_queue_config_init(&none), TK_OK);
    none.engine = &coreless;
    assert_int_equal(tk_loop_create(&none, 0, &loop), TK_ENOTSUP);
    assert_null(loop);
}

/* Allocation failure: create fails cleanly at every allocation, on every
 * engine, and leaves nothing allocated. */
typedef struct counting {
    int fail_at; /* the allocation that fails (0: none) */
    int calls;
    long live;
} counting;

static void *c_alloc(void *ctx, size_t size) {
    counting *c = ctx;
    if (++c->calls == c->fail_at)
        return NULL;
    void *p = malloc(size);
    if (p != NULL)
        c->live++;
    return p;
}
static void c_free(void *ctx, void *p, size_t size) {
    (void)size;
    counting *c = ctx;
    c->live--;
    free(p);
}

static void test_allocation_failure(void **state) {
    (void)state;
    for (size_t i = 0; i < tk_engine_count(); i++) {
        const tk_queue_ops *engine = tk_engine_at(i);
        for (int at = 1;; at++) {
            counting c = {.fail_at = at};
            tk_allocator a = {.alloc = c_alloc, .free = c_free, .ctx = &c};
            tk_queue_config cfg;
            assert_int_equal(tk_queue_config_init_for(&cfg, engine), TK_OK);
            cfg.allocator = &a;
            tk_loop *loop = NULL;
            int rc = tk_loop_create(&cfg, ORIGIN, &loop);
            if (rc == TK_OK) {
                /* past every allocation create makes: it works */
                tk_node n;
                memset(&n, 0, sizeof n);
                assert_int_equal(tk_loop_add(loop, &n, ORIGIN + 1), TK_OK);
                tk_node *list = NULL;
                assert_int_equal(tk_loop_expire(loop, ORIGIN + LATE_BOUND, SIZE_MAX, &list), 1);
                tk_loop_destroy(loop);
                assert_int_equal(c.live, 0);
                break;
            }
            if (rc != TK_ENOMEM)
                fail_msg("%s: allocation %d failing gave %s", engine->name, at, tk_strerror(rc));
            assert_null(loop);
            assert_int_equal(c.live, 0);
            assert_true(at < 64);
        }
    }
}

int main(int argc, char **argv) {
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_every_engine),
        cmocka_unit_test(test_ties_in_add_order),
        cmocka_unit_test(test_past_deadline_and_readd),
        cmocka_unit_test(test_expire_max),
        cmocka_unit_test(test_timeout_ms),
        cmocka_unit_test(test_timeout_ms_with_slack),
        cmocka_unit_test(test_slack_every_engine),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_allocation_failure),
    };
    return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
