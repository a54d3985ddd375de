/* SPDX-License-Identifier: MIT */
/* timerkit: the wheel engine's slack (queue.h, "Slack"), in real time: the
 * tick thread sleeps until the earliest end of a window and hands out every
 * node due by then in one pass, so nodes spread over 20 ms with 200 ms of
 * slack cost a few wake-ups of the tick thread (its wakeups() counter)
 * instead of one per tick; an offer whose window ends earlier than the
 * planned wake-up wakes the thread; a removal that leaves the plan early
 * costs a wake-up, not a busy loop; equal deadlines leave in seq order
 * whatever their slacks; a negative slack is TK_EINVAL with the node
 * untouched. Never early, and no later than the end of the window plus a
 * tick plus ALLOWANCE_NS (a noisy 2-core machine). Wake-ups are counted,
 * never timed. The queue contract with slack, on every engine, is in
 * tests/queue/. cmocka asserts only on the main thread, which takes. */
#define _GNU_SOURCE
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
#include "timerkit/queue.h"
#include "timerkit/status.h"
#include "wheel-internal.h"

#define MS TK_NS_PER_MS
#define TICK_NS MS
#define ALLOWANCE_NS (100 * MS)

static const tk_queue_ops *ops;

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Counts released nodes in the atomic_int at ctx. */
static void on_release(void *ctx, tk_node *n) {
    (void)n;
    atomic_fetch_add((atomic_int *)ctx, 1);
}

/* A wheel of 1 ms x 512 whose tick thread has run and sleeps with nothing
 * to do (a due node went through it). With `released`, removals go through
 * the tick thread, which counts them there as it releases them; without,
 * they are synchronous. */
static tk_queue *idle_wheel(atomic_int *released) {
    ops = tk_engine_wheel();
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "tick", TICK_NS), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "slots", 512), TK_OK);
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, &cfg, released != NULL ? on_release : NULL, released, &q),
                     TK_OK);
    tk_node through = {0};
    through.deadline_ns = tk_clock_now_ns() - 1;
    assert_int_equal(ops->offer(q, &through), TK_OK); /* starts the tick thread */
    tk_node *x = NULL;
    assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &through);
    sleep_ms(50); /* its last pass is over: it sleeps without a plan */
    return q;
}

/* A zeroed node with this key and slack. */
static void node_set(tk_node *n, int64_t deadline_ns, int64_t slack_ns, uint64_t seq) {
    memset(n, 0, sizeof(*n));
    n->deadline_ns = deadline_ns;
    n->slack_ns = slack_ns;
    n->seq = seq;
}

/* Takes one node (at most 5 s) and checks its window against the clock:
 * never before its deadline, no later than its end + a tick + ALLOWANCE_NS.
 * Returns it; *taken_ns receives when it was taken. */
static tk_node *take_in_window(tk_queue *q, int64_t *taken_ns) {
    tk_node *x = NULL;
    assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &x), TK_OK);
    int64_t t = tk_clock_now_ns();
    assert_non_null(x);
    assert_true(t >= x->deadline_ns);
    int64_t end = x->deadline_ns + x->slack_ns;
    if (t > end + TICK_NS + ALLOWANCE_NS)
        print_message("      late: %lld ns past its window\n", (long long)(t - end));
    assert_true(t <= end + TICK_NS + ALLOWANCE_NS);
    if (taken_ns != NULL)
        *taken_ns = t;
    return x;
}

/* Offers N nodes due 1 ms apart over 20 ms, in deadline order, each with
 * `slack_ns`, to an idle wheel, takes them all (in deadline order, each in
 * its window), and returns the tick thread's wake-ups meanwhile. *first_ns
 * receives when the first was taken, *last_deadline_ns the last deadline. */
enum { SPREAD_N = 20 };
static uint64_t spread_wakeups(int64_t slack_ns, int64_t *first_ns, int64_t *last_deadline_ns) {
    tk_queue *q = idle_wheel(NULL);
    tk_node n[SPREAD_N];
    uint64_t w0 = ops->wakeups(q);
    int64_t t0 = tk_clock_now_ns() + 20 * MS;
    for (int i = 0; i < SPREAD_N; i++) {
        node_set(&n[i], t0 + i * MS, slack_ns, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    for (int i = 0; i < SPREAD_N; i++) {
        int64_t t;
        assert_ptr_equal(take_in_window(q, &t), &n[i]);
        if (i == 0)
            *first_ns = t;
    }
    uint64_t w = ops->wakeups(q) - w0;
    *last_deadline_ns = n[SPREAD_N - 1].deadline_ns;
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
    return w;
}

static void slack_coalesces_a_spread_of_deadlines_into_few_wake_ups(void **state) {
    (void)state;
    int64_t first, last_deadline;
    uint64_t plain = spread_wakeups(0, &first, &last_deadline);
    uint64_t slack = spread_wakeups(200 * MS, &first, &last_deadline);
    print_message("      %d nodes over 20 ms: %llu tick-thread wake-ups without slack, %llu "
                  "with 200 ms\n",
                  SPREAD_N, (unsigned long long)plain, (unsigned long long)slack);
    /* with slack: the offer that woke the idle thread, perhaps one more to
     * take in the other offers, and the one at the first window's end */
    assert_true(slack <= 5);
    assert_true(plain >= slack + 5);
    /* together: the first left only once the last was due */
    assert_true(first >= last_deadline);
}

/* A node whose window ends before the thread's planned wake-up wakes it. */
static void an_earlier_window_end_wakes_the_thread(void **state) {
    (void)state;
    tk_queue *q = idle_wheel(NULL);
    tk_node a, b;
    int64_t now = tk_clock_now_ns();
    node_set(&a, now + 10 * MS, 2 * TK_NS_PER_S, 1); /* the plan: about 2 s ahead */
    assert_int_equal(ops->offer(q, &a), TK_OK);
    sleep_ms(5);
    node_set(&b, now + 30 * MS, 0, 2);
    assert_int_equal(ops->offer(q, &b), TK_OK);
    int64_t ta, tb;
    assert_ptr_equal(take_in_window(q, &ta), &a); /* due, so it leaves with b, first */
    assert_ptr_equal(take_in_window(q, &tb), &b);
    assert_true(ta <= b.deadline_ns + TICK_NS + ALLOWANCE_NS);
    ops->destroy(q);
}

/* The node whose window set the plan is removed: the thread wakes once for
 * nothing and plans again, to the other node's window end. */
static void removal_of_the_planning_node_costs_a_wake_up_not_a_loop(void **state) {
    (void)state;
    atomic_int released = 0;
    for (int deferred = 0; deferred < 2; deferred++) {
        tk_queue *q = idle_wheel(deferred ? &released : NULL);
        tk_node a, b;
        int64_t now = tk_clock_now_ns();
        node_set(&b, now + 60 * MS, 300 * MS, 1);
        assert_int_equal(ops->offer(q, &b), TK_OK);
        node_set(&a, now + 30 * MS, 0, 2);
        assert_int_equal(ops->offer(q, &a), TK_OK);
        sleep_ms(10); /* the thread plans to wake for a at 30 ms */
        tk__wheel_stats st0, st1;
        tk__wheel_stats_get(q, &st0);
        int rc = ops->remove(q, &a);
        assert_true(rc == (deferred ? TK_EINPROGRESS : TK_OK));
        int64_t tb;
        assert_ptr_equal(take_in_window(q, &tb), &b);
        tk__wheel_stats_get(q, &st1);
        print_message("      %s removal: %llu wake-ups, %llu passes until b left\n",
                      deferred ? "deferred" : "synchronous",
                      (unsigned long long)(st1.wakeups - st0.wakeups),
                      (unsigned long long)(st1.loops - st0.loops));
        /* the stale plan (or the release), perhaps one in between, b's */
        assert_true(st1.wakeups - st0.wakeups <= 5);
        assert_true(st1.loops - st0.loops <= 6);
        assert_int_equal(ops->size(q), 0);
        ops->destroy(q);
    }
    assert_int_equal(atomic_load(&released), 1);
}

/* Equal deadlines leave in seq order, whatever their slacks and the order
 * of the offers; the smallest slack (0) sets when they leave. */
static void equal_deadlines_leave_in_seq_order_whatever_their_slacks(void **state) {
    (void)state;
    enum { N = 16 };
    tk_queue *q = idle_wheel(NULL);
    tk_node n[N];
    int64_t d = tk_clock_now_ns() + 30 * MS;
    for (int j = 0; j < N; j++) {
        int i = (j * 7) % N; /* scrambled */
        node_set(&n[i], d, (int64_t)(N - 1 - i) * 10 * MS, (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    for (int i = 0; i < N; i++) {
        int64_t t;
        assert_ptr_equal(take_in_window(q, &t), &n[i]);
        assert_true(t <= d + TICK_NS + ALLOWANCE_NS);
    }
    ops->destroy(q);
}

/* Random deadlines over 50 ms, random slacks, offered in random order:
 * every node leaves within its window, nothing is lost. */
static void random_windows_are_all_met(void **state) {
    (void)state;
    enum { N = 300 };
    static const int64_t slacks[] = {0, 3 * MS, 40 * MS, 150 * MS};
    atomic_int released = 0;
    tk_queue *q = idle_wheel(&released);
    tk_node *n = calloc(N, sizeof(*n));
    assert_non_null(n);
    uint64_t rs = 42;
    int64_t t0 = tk_clock_now_ns() + 10 * MS;
    for (int i = 0; i < N; i++) {
        node_set(&n[i], t0 + (int64_t)rng_below(&rs, 50 * (uint64_t)MS), slacks[rng_below(&rs, 4)],
                 (uint64_t)i);
        assert_int_equal(ops->offer(q, &n[i]), TK_OK);
    }
    char *seen = calloc(N, 1);
    assert_non_null(seen);
    for (int i = 0; i < N; i++) {
        tk_node *x = take_in_window(q, NULL);
        assert_true(x >= n && x < n + N);
        assert_int_equal(seen[x - n], 0);
        seen[x - n] = 1;
    }
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->check(q), TK_OK);
    ops->destroy(q);
    free(seen);
    free(n);
}

/* slack_ns < 0: TK_EINVAL, the node untouched (still the caller's). */
static void negative_slack_is_einval_and_the_node_stays_the_callers(void **state) {
    (void)state;
    atomic_int released = 0;
    tk_queue *q = idle_wheel(&released);
    tk_node n, zero;
    node_set(&n, tk_clock_now_ns() + 5 * MS, -1, 1);
    memcpy(&zero, &n, sizeof(n));
    assert_int_equal(ops->offer(q, &n), TK_EINVAL);
    assert_memory_equal(&n, &zero, sizeof(n));
    assert_int_equal(ops->size(q), 0);
    assert_int_equal(ops->remove(q, &n), TK_ENOENT);
    n.slack_ns = INT64_MIN;
    assert_int_equal(ops->offer(q, &n), TK_EINVAL);
    n.slack_ns = 0;
    assert_int_equal(ops->offer(q, &n), TK_OK);
    assert_ptr_equal(take_in_window(q, NULL), &n);
    ops->destroy(q);
}

static void the_wheel_says_it_uses_slack(void **state) {
    (void)state;
    ops = tk_engine_wheel();
    assert_true((ops->caps & TK_QUEUE_CAP_SLACK) != 0);
    assert_non_null(ops->core);
    assert_non_null(ops->core->latest);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_wheel_says_it_uses_slack),
        cmocka_unit_test(negative_slack_is_einval_and_the_node_stays_the_callers),
        cmocka_unit_test(slack_coalesces_a_spread_of_deadlines_into_few_wake_ups),
        cmocka_unit_test(an_earlier_window_end_wakes_the_thread),
        cmocka_unit_test(removal_of_the_planning_node_costs_a_wake_up_not_a_loop),
        cmocka_unit_test(equal_deadlines_leave_in_seq_order_whatever_their_slacks),
        cmocka_unit_test(random_windows_are_all_met),
    };
    return cmocka_run_group_tests_name("wheel_slack", tests, NULL, NULL);
}
