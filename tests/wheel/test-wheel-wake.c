/* SPDX-License-Identifier: MIT */
/* timerkit: tests of the wheel's wake(): every thread blocked in take(),
 * poll() or take_batch() returns TK_EINTR having taken nothing, a call that
 * starts after wake() returned is not affected, and wake() racing with
 * offers and takers loses no node. They assert behaviour, never speed, with
 * generous bounds for a noisy 2-core machine; cmocka asserts only on the
 * main thread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "timerkit/clock.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

#define MS TK_NS_PER_MS
#define HOUR (INT64_C(3600) * TK_NS_PER_S)

typedef struct tnode {
    tk_node node; /* first member */
    atomic_int taken;
} tnode;

static atomic_int released;

static void on_release(void *ctx, tk_node *n) {
    (void)ctx;
    (void)n;
    atomic_fetch_add(&released, 1);
}

static const tk_queue_ops *ops;

static tk_queue *make_queue(void) {
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, NULL, on_release, NULL, &q), TK_OK);
    return q;
}

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Whether thread `tid` of this process is asleep (state S in its stat). */
static bool thread_sleeps(pid_t tid) {
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    return p != NULL && p[1] == ' ' && p[2] == 'S';
}

/* ---- blocked takers -------------------------------------------------------------------- */

enum how { TAKE, POLL, BATCH };

typedef struct blocked {
    tk_queue *q;
    enum how how;
    atomic_int tid;     /* set before the call */
    atomic_int done;    /* set after it */
    int rc;             /* what it answered */
    tk_node *out;       /* what it took (NULL: nothing) */
    size_t count;       /* take_batch's count */
    int64_t elapsed_ns; /* how long it was inside */
    pthread_t th;
} blocked;

static void *blocked_main(void *arg) {
    blocked *b = arg;
    atomic_store(&b->tid, (int)syscall(SYS_gettid));
    int64_t t0 = tk_clock_now_ns();
    b->out = (tk_node *)(uintptr_t)1; /* the call must write it */
    b->count = 99;
    switch (b->how) {
    case TAKE:
        b->rc = ops->take(b->q, &b->out);
        break;
    case POLL:
        b->rc = ops->poll(b->q, 30 * TK_NS_PER_S, &b->out);
        break;
    case BATCH:
        b->rc = ops->take_batch(b->q, 8, &b->out, &b->count);
        break;
    }
    b->elapsed_ns = tk_clock_now_ns() - t0;
    atomic_store(&b->done, 1);
    return NULL;
}

/* Three takers blocked on a queue that holds one node an hour ahead, one in
 * each of take(), poll() (30 s) and take_batch(), all return TK_EINTR after
 * one wake(), having taken nothing; wake() returns without waiting for them;
 * the node stays queued. */
static void wake_releases_every_blocked_taker_with_eintr(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    tnode far = {0};
    far.node.deadline_ns = tk_clock_now_ns() + HOUR;
    assert_int_equal(ops->offer(q, &far.node), TK_OK);
    blocked b[3] = {{.q = q, .how = TAKE}, {.q = q, .how = POLL}, {.q = q, .how = BATCH}};
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&b[i].th, NULL, blocked_main, &b[i]), 0);
    /* until each is asleep (in the wait: it has nothing else to sleep in) */
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 10000; k++) {
            int tid = atomic_load(&b[i].tid);
            if (tid != 0 && thread_sleeps((pid_t)tid))
                break;
            sleep_ms(1);
        }
    }
    sleep_ms(50);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atomic_load(&b[i].done), 0);
    int64_t t0 = tk_clock_now_ns();
    ops->wake(q);
    int64_t wake_ns = tk_clock_now_ns() - t0;
    bool all = false;
    for (int k = 0; k < 10000 && !all; k++) {
        all = true;
        for (int i = 0; i < 3; i++)
            all = all && atomic_load(&b[i].done) != 0;
        if (!all)
            sleep_ms(1);
    }
    if (!all) {
        ops->close(q, TK_QUEUE_CLOSE_NOW); /* let them go before failing */
        for (int i = 0; i < 3; i++)
            pthread_join(b[i].th, NULL);
        fail_msg("a taker stayed blocked after wake()");
    }
    for (int i = 0; i < 3; i++)
        pthread_join(b[i].th, NULL);
    assert_true(wake_ns < TK_NS_PER_S);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(b[i].rc, TK_EINTR);
        assert_true(b[i].elapsed_ns < 20 * TK_NS_PER_S); /* not poll's 30 s time-out */
    }
    assert_null(b[BATCH].out);
    assert_int_equal(b[BATCH].count, 0);
    assert_int_equal(ops->size(q), 1);
    assert_int_equal(ops->check(q), TK_OK);
    tk_node *l = ops->drain(q);
    assert_ptr_equal(l, &far.node);
    assert_null(tk_node_next_detached(l));
    ops->destroy(q);
}

/* wake() affects only calls already inside: after it returned, poll() waits
 * its time-out (TK_ETIMEDOUT), and take() and take_batch() hand out due
 * nodes. wake(NULL) does nothing. */
static void a_call_after_wake_returned_is_unaffected(void **state) {
    (void)state;
    tk_queue *q = make_queue();
    ops->wake(NULL);
    ops->wake(q);
    ops->wake(q);
    tk_node *x = NULL;
    int64_t t0 = tk_clock_now_ns();
    assert_int_equal(ops->poll(q, 50 * MS, &x), TK_ETIMEDOUT);
    assert_true(tk_clock_now_ns() - t0 >= 50 * MS);
    tnode n[2];
    memset(n, 0, sizeof(n));
    for (int i = 0; i < 2; i++) {
        n[i].node.deadline_ns = tk_clock_now_ns() - 1;
        n[i].node.seq = (uint64_t)i << 1;
    }
    assert_int_equal(ops->offer(q, &n[0].node), TK_OK);
    ops->wake(q);
    assert_int_equal(ops->take(q, &x), TK_OK);
    assert_ptr_equal(x, &n[0].node);
    assert_int_equal(ops->offer(q, &n[1].node), TK_OK);
    ops->wake(q);
    size_t count = 0;
    assert_int_equal(ops->take_batch(q, 4, &x, &count), TK_OK);
    assert_int_equal(count, 1);
    assert_ptr_equal(x, &n[1].node);
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
}

/* ---- wake() racing --------------------------------------------------------------------- */

typedef struct racer {
    tk_queue *q;
    atomic_int taken, eintr, early, other;
    pthread_t th;
} racer;

/* Takes until the queue is closed and empty; a TK_EINTR is counted and the
 * taker takes again. */
static void *racer_taker(void *arg) {
    racer *r = arg;
    for (;;) {
        tk_node *x = NULL;
        size_t count = 0;
        int rc = atomic_load(&r->taken) % 3 == 0 ? ops->take_batch(r->q, 4, &x, &count)
                                                 : (count = 1, ops->take(r->q, &x));
        if (rc == TK_ECLOSED)
            return NULL;
        if (rc == TK_EINTR) {
            atomic_fetch_add(&r->eintr, 1);
            continue;
        }
        if (rc != TK_OK) {
            atomic_fetch_add(&r->other, 1);
            return NULL;
        }
        int64_t now = tk_clock_now_ns();
        for (; x != NULL; x = tk_node_next_detached(x)) {
            if (now < x->deadline_ns)
                atomic_fetch_add(&r->early, 1);
            atomic_fetch_add(&((tnode *)(void *)x)->taken, 1);
            atomic_fetch_add(&r->taken, 1);
        }
    }
}

typedef struct waker {
    tk_queue *q;
    atomic_int stop;
    int wakes;
    pthread_t th;
} waker;

static void *waker_main(void *arg) {
    waker *w = arg;
    while (!atomic_load(&w->stop)) {
        ops->wake(w->q);
        w->wakes++;
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Two takers take while a producer offers nodes due within 2 ms and another
 * thread calls wake() every 50 us: every node is handed out exactly once,
 * none early; the takers, taking again after each TK_EINTR, end with
 * TK_ECLOSED once the queue, closed WHEN_EMPTY, is empty. */
static void wake_racing_with_offers_and_takers_loses_no_node(void **state) {
    (void)state;
    enum { N = 20000, TAKERS = 2 };
    tk_queue *q = make_queue();
    tnode *t = calloc(N, sizeof(*t));
    assert_non_null(t);
    racer r = {.q = q};
    pthread_t th[TAKERS];
    for (int i = 0; i < TAKERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, racer_taker, &r), 0);
    waker w = {.q = q};
    assert_int_equal(pthread_create(&w.th, NULL, waker_main, &w), 0);
    for (int i = 0; i < N; i++) {
        t[i].node.deadline_ns = tk_clock_now_ns() + (i % 2000) * TK_NS_PER_US;
        t[i].node.seq = (uint64_t)i << 1;
        assert_int_equal(ops->offer(q, &t[i].node), TK_OK);
        if (i % 500 == 0)
            sleep_ms(1);
    }
    for (int k = 0; k < 10000 && atomic_load(&r.taken) < N; k++)
        sleep_ms(1);
    atomic_store(&w.stop, 1);
    pthread_join(w.th, NULL);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    for (int i = 0; i < TAKERS; i++)
        pthread_join(th[i], NULL);
    print_message("      %d wake() calls, %d TK_EINTR answers\n", w.wakes, atomic_load(&r.eintr));
    assert_int_equal(atomic_load(&r.other), 0);
    assert_int_equal(atomic_load(&r.early), 0);
    assert_int_equal(atomic_load(&r.taken), N);
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&t[i].taken), 1);
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);
    free(t);
}

/* The engine says it has wake(). */
static void the_engine_has_wake(void **state) {
    (void)state;
    assert_true((ops->caps & TK_QUEUE_CAP_WAKE) != 0);
    assert_non_null(ops->wake);
}

int main(void) {
    ops = tk_engine_wheel();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_engine_has_wake),
        cmocka_unit_test(wake_releases_every_blocked_taker_with_eintr),
        cmocka_unit_test(a_call_after_wake_returned_is_unaffected),
        cmocka_unit_test(wake_racing_with_offers_and_takers_loses_no_node),
    };
    return cmocka_run_group_tests_name("wheel_wake", tests, NULL, NULL);
}
