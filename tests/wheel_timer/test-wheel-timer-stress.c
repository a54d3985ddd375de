/* SPDX-License-Identifier: MIT */
/* tk_wheel_timer under load, on every registered engine, with exact
 * accounting: producer threads create timeouts (some from callbacks, which
 * re-arm), cancel some and release their handles at random points, while
 * the main thread stops the timer under them. Then
 *     created == expired + cancelled + handed back by stop
 * must hold exactly, every callback must have run at most once and never
 * early, and the allocator must hold nothing once the last handle is gone.
 * Half the timeouts have a cancelled hook (Netty's TimerTask.cancelled()):
 * once stop has returned, it has run exactly once for each of them that a
 * cancel ended, and for no other, whether the worker or stop ran it.
 * Once with the callbacks on the worker, once on a task executor.
 *   tk_wheel_timer_stress [cmocka filter]
 * Sizes scale with TK_STRESS_SCALE and shrink under sanitizers and
 * TK_VALGRIND=1 (rel-common.h). */
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

#include <cmocka.h>

#include "rel-common.h"
#include "timerkit.h"

#define PRODUCERS 4
#define KEEP 64 /* handles a producer holds at once */

typedef struct stress {
    tk_wheel_timer *timer;
    atomic_long created, expired, cancelled, returned;
    atomic_long early;    /* callbacks that ran before their deadline */
    atomic_long rearms;   /* re-arms left for callbacks */
    atomic_long rejected; /* new_timeout refused after the stop */
    atomic_long hooked;   /* cancels that ended a timeout with a hook */
    atomic_long hooks;    /* cancelled hooks run */
    long per_producer;
} stress;

/* A timeout's argument: the run and when it may start. Owned by the
 * timeout's creator; freed by whoever ends the timeout. */
typedef struct job {
    stress *s;
    int64_t not_before;
} job;

static job *job_new(stress *s, int64_t delay_ns) {
    job *j = malloc(sizeof(*j));
    if (j != NULL) {
        j->s = s;
        j->not_before = tk_clock_now_ns() + (delay_ns > 0 ? delay_ns : 0);
    }
    return j;
}

static void fire(tk_timeout *timeout, void *arg) {
    job *j = arg;
    stress *s = j->s;
    if (tk_clock_now_ns() < j->not_before)
        atomic_fetch_add(&s->early, 1);
    atomic_fetch_add(&s->expired, 1);
    if (atomic_fetch_sub(&s->rearms, 1) > 0) { /* re-arm from the callback */
        job *k = job_new(s, 1 * TK_NS_PER_MS);
        if (k != NULL) {
            int rc = tk_wheel_timer_new_timeout(tk_timeout_timer(timeout), fire, k,
                                                1 * TK_NS_PER_MS, NULL);
            if (rc == TK_OK)
                atomic_fetch_add(&s->created, 1);
            else
                free(k);
        }
    }
    free(j);
}

/* The cancelled hook: the timeout's job is ours to free. */
static void on_cancelled(tk_timeout *timeout, void *arg) {
    job *j = arg;
    if (!tk_timeout_is_cancelled(timeout))
        atomic_fetch_add(&j->s->early, 1); /* counted as a failure */
    atomic_fetch_add(&j->s->hooks, 1);
    free(j);
}

static void *producer(void *arg) {
    stress *s = arg;
    uint64_t rng = (uint64_t)(uintptr_t)&rng | 1;
    tk_timeout *held[KEEP] = {0};
    void *held_arg[KEEP] = {0};
    bool held_hook[KEEP] = {0};
    for (long i = 0; i < s->per_producer; i++) {
        if (i % 32 == 31)
            rel_sleep_ns(100 * TK_NS_PER_US); /* pace: the load overlaps expiries and the stop */
        uint64_t x = rel_rand(&rng);
        int64_t delay = (int64_t)(x % 20000) * TK_NS_PER_US; /* 0 to 20 ms */
        if (x % 16 == 0)
            delay = 3600 * TK_NS_PER_S; /* left for stop */
        job *j = job_new(s, delay);
        if (j == NULL)
            break;
        size_t k = (size_t)(x >> 32) % KEEP;
        if (held[k] != NULL) { /* an older one: cancel it, or let it be */
            if ((x >> 8) % 3 == 0 && tk_timeout_cancel(held[k])) {
                atomic_fetch_add(&s->cancelled, 1);
                if (held_hook[k])
                    atomic_fetch_add(&s->hooked, 1); /* the hook frees the job */
                else
                    free(held_arg[k]); /* ended by this cancel: its job is ours */
            }
            tk_timeout_release(held[k]);
            held[k] = NULL;
        }
        tk_timeout *h = NULL;
        bool keep = (x >> 16) % 2 == 0, hook = (x >> 17) % 2 == 0;
        tk_timeout_spec spec = {
            .fn = fire, .cancelled = hook ? on_cancelled : NULL, .arg = j, .delay_ns = delay};
        int rc = tk_wheel_timer_new_timeout_spec(s->timer, &spec, keep ? &h : NULL);
        if (rc != TK_OK) {
            free(j);
            if (rc == TK_ESTATE) {
                atomic_fetch_add(&s->rejected, 1);
                break;
            }
            continue;
        }
        atomic_fetch_add(&s->created, 1);
        if (keep) {
            held[k] = h;
            held_arg[k] = j;
            held_hook[k] = hook;
        }
    }
    for (size_t k = 0; k < KEEP; k++) {
        if (held[k] == NULL)
            continue;
        if (tk_timeout_cancel(held[k])) {
            atomic_fetch_add(&s->cancelled, 1);
            if (held_hook[k])
                atomic_fetch_add(&s->hooked, 1);
            else
                free(held_arg[k]);
        }
        tk_timeout_release(held[k]);
    }
    return NULL;
}

static void hand_back(void *ctx, tk_timeout *timeout) {
    stress *s = ctx;
    atomic_fetch_add(&s->returned, 1);
    free(tk_timeout_arg(timeout));
}

static void run_stress(const tk_queue_ops *engine, bool on_executor) {
    rel_alloc alloc;
    rel_alloc_init(&alloc);
    tk_executor *ex = NULL;
    if (on_executor) {
        tk_executor_options eo;
        assert_int_equal(tk_executor_options_init(&eo), TK_OK);
        eo.core_pool_size = 2;
        assert_int_equal(tk_executor_create(&eo, &ex), TK_OK);
    }
    tk_wheel_timer_options opt;
    assert_int_equal(tk_wheel_timer_options_init(&opt), TK_OK);
    assert_int_equal(tk_queue_config_init_for(&opt.queue, engine), TK_OK);
    opt.queue.allocator = &alloc.iface;
    opt.task_executor = ex;
    stress s = {.per_producer = rel_scaled(20000)};
    atomic_init(&s.rearms, rel_scaled(2000));
    assert_int_equal(tk_wheel_timer_create(&opt, &s.timer), TK_OK);

    pthread_t th[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, producer, &s), 0);
    /* stop under the producers once some work is done */
    rel_wait_at_least(&s.created, s.per_producer * PRODUCERS / 2, 60 * TK_NS_PER_S);
    long back = tk_wheel_timer_stop(s.timer, hand_back, &s);
    assert_true(back >= 0);
    for (int i = 0; i < PRODUCERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    /* every cancel that ended a timeout came before stop ended it, so its
     * hook has run by now (on the worker, or in stop) */
    assert_int_equal(atomic_load(&s.hooks), atomic_load(&s.hooked));
    if (ex != NULL) { /* callbacks handed over run before it terminates */
        assert_int_equal(tk_executor_shutdown(ex), TK_OK);
        assert_int_equal(tk_executor_await_termination(ex, 60 * TK_NS_PER_S), TK_OK);
    }
    assert_int_equal(tk_wheel_timer_pending(s.timer), 0);
    assert_int_equal(tk_wheel_timer_destroy(s.timer), TK_OK);
    if (ex != NULL)
        assert_int_equal(tk_executor_destroy(ex), TK_OK);

    long created = atomic_load(&s.created), expired = atomic_load(&s.expired);
    long cancelled = atomic_load(&s.cancelled), returned = atomic_load(&s.returned);
    print_message("  %s%s: created %ld = expired %ld + cancelled %ld (%ld hooks) + handed back "
                  "%ld (%ld refused after stop)\n",
                  engine->name, on_executor ? " (executor)" : "", created, expired, cancelled,
                  atomic_load(&s.hooks), returned, atomic_load(&s.rejected));
    assert_int_equal(back, returned);
    assert_int_equal(created, expired + cancelled + returned);
    assert_int_equal(atomic_load(&s.early), 0);
    assert_int_equal(rel_alloc_live_blocks(&alloc), 0);
    assert_int_equal(atomic_load(&alloc.bad_frees), 0);
}

static void test_stress_on_worker(void **state) {
    (void)state;
    for (size_t i = 0; i < tk_engine_count(); i++)
        run_stress(tk_engine_at(i), false);
}

static void test_stress_on_executor(void **state) {
    (void)state;
    for (size_t i = 0; i < tk_engine_count(); i++)
        run_stress(tk_engine_at(i), true);
}

int main(int argc, char **argv) {
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    print_message("wheel timer stress: scale %.3f\n", rel_scale());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stress_on_worker),
        cmocka_unit_test(test_stress_on_executor),
    };
    return cmocka_run_group_tests_name("wheel_timer_stress", tests, NULL, NULL);
}
