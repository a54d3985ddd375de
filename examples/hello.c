/* SPDX-License-Identifier: MIT */
/* A tour of the timerkit executor: one-shot tasks with and without a result,
 * a fixed-rate task, a cancel, embedded timers (one that re-arms itself, one
 * stopped before it fires), and an orderly shutdown.
 *
 *   hello [ENGINE]      (heap, wheel, hwheel, ...: any registered engine;
 *                        none: the build-time default)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timerkit.h"

static int64_t t0;

static double ms_since_start(void) {
    return (double)(tk_clock_now_ns() - t0) / 1e6;
}

static int say(tk_run *run, void *arg) {
    (void)run;
    printf("%8.2f ms  %s\n", ms_since_start(), (const char *)arg);
    return 0;
}

static int answer(tk_run *run, void *arg) {
    (void)arg;
    static int value = 42;
    tk_run_set_result(run, &value);
    return 0;
}

static int tick(tk_run *run, void *arg) {
    atomic_int *ticks = arg;
    int n = atomic_fetch_add(ticks, 1) + 1;
    printf("%8.2f ms  tick %d (run %llu)\n", ms_since_start(), n,
           (unsigned long long)tk_run_info(run)->run_count);
    return 0;
}

/* An embedded timer lives in the caller's own struct; the callback finds
 * the struct from the timer. */
typedef struct heartbeat {
    tk_executor *ex;
    atomic_int beats;
    tk_timer timer;
} heartbeat;

static void beat(tk_timer *t) {
    heartbeat *h = (heartbeat *)(void *)((char *)t - offsetof(heartbeat, timer));
    int n = atomic_fetch_add(&h->beats, 1) + 1;
    printf("%8.2f ms  heartbeat %d (embedded timer)\n", ms_since_start(), n);
    if (n < 3) /* the timer is idle in its own callback: start it again */
        tk_timer_start(h->ex, t, 15 * TK_NS_PER_MS);
}

static void never_beat(tk_timer *t) {
    (void)t;
    printf("this never prints either\n");
}

static int check(int rc, const char *what) {
    if (rc != TK_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, tk_strerror(rc), tk_status_name(rc));
        exit(1);
    }
    return rc;
}

int main(int argc, char **argv) {
    tk_executor_options opt;
    tk_executor *ex;
    tk_future *result_future, *ticker, *never;
    atomic_int ticks = 0;
    heartbeat hb = {.beats = 0};
    tk_timer stopped;
    void *result = NULL;

    check(tk_executor_options_init(&opt), "options");
    opt.core_pool_size = 2;
    if (argc > 1) {
        opt.engine = tk_engine_by_name(argv[1]);
        if (opt.engine == NULL) {
            fprintf(stderr, "unknown engine '%s'; known:", argv[1]);
            for (size_t i = 0; i < tk_engine_count(); i++)
                fprintf(stderr, " %s", tk_engine_at(i)->name);
            fputc('\n', stderr);
            return 2;
        }
    }
    check(tk_executor_create(&opt, &ex), "create");
    printf("engine: %s\n", tk_executor_engine(ex)->name);
    t0 = tk_clock_now_ns();

    check(tk_executor_schedule(ex, say, "one-shot after 30 ms", 30 * TK_NS_PER_MS, NULL),
          "schedule");
    check(tk_executor_schedule(ex, say, "one-shot after 10 ms", 10 * TK_NS_PER_MS, NULL),
          "schedule");
    check(tk_executor_schedule(ex, answer, NULL, 5 * TK_NS_PER_MS, &result_future), "schedule");
    check(tk_executor_schedule_at_fixed_rate(ex, tick, &ticks, 0, 20 * TK_NS_PER_MS, &ticker),
          "fixed rate");
    check(tk_executor_schedule(ex, say, "this never prints", 500 * TK_NS_PER_MS, &never),
          "schedule");
    hb.ex = ex;
    check(tk_timer_init(&hb.timer, beat), "timer init");
    check(tk_timer_start(ex, &hb.timer, 15 * TK_NS_PER_MS), "timer start");
    check(tk_timer_init(&stopped, never_beat), "timer init");
    check(tk_timer_start(ex, &stopped, 400 * TK_NS_PER_MS), "timer start");

    check(tk_future_get(result_future, &result), "get");
    printf("%8.2f ms  result: %d\n", ms_since_start(), *(int *)result);

    printf("%8.2f ms  cancel the 500 ms task: %s\n", ms_since_start(),
           tk_status_name(tk_future_cancel(never, false)));

    printf("%8.2f ms  stop the 400 ms timer: %s\n", ms_since_start(),
           tk_status_name(tk_timer_stop(ex, &stopped)));

    while (atomic_load(&ticks) < 5 || atomic_load(&hb.beats) < 3)
        nanosleep(&(struct timespec){0, 5 * TK_NS_PER_MS}, NULL);
    printf("%8.2f ms  cancel the ticker: %s\n", ms_since_start(),
           tk_status_name(tk_future_cancel(ticker, false)));

    check(tk_executor_shutdown(ex), "shutdown");
    check(tk_executor_await_termination(ex, 5 * TK_NS_PER_S), "await");
    tk_executor_stats st;
    check(tk_executor_stats_get(ex, &st), "stats");
    printf("%8.2f ms  terminated: %llu runs, %llu completed, %llu cancelled\n", ms_since_start(),
           (unsigned long long)st.runs, (unsigned long long)st.completed_count,
           (unsigned long long)st.cancelled_count);

    tk_future_release(result_future);
    tk_future_release(ticker);
    tk_future_release(never);
    /* destroy() leaves every timer idle: `stopped` and `hb` may go now */
    return tk_executor_destroy(ex) == TK_OK ? 0 : 1;
}
