/* SPDX-License-Identifier: MIT */
/* Timers in your own event loop (timerkit/loop.h): a poll() loop over a pipe,
 * with connection idle timeouts that are pushed back on activity, and a
 * periodic "heartbeat" timer that re-arms itself. No thread is started.
 * The idle timeouts have slack (tk_loop_add_within()): closing an idle
 * connection a few milliseconds late does no harm, so on an engine that
 * uses slack one wake-up of the loop can serve several of them; the
 * heartbeat has none and keeps its rate.
 *
 *   loop [ENGINE]      (heap, wheel, hwheel, ...; none: the default engine)
 *
 * It ends after the last connection times out, and fails (exit 1) if a
 * timer ever fires before its deadline. */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "timerkit.h"

typedef enum { HEARTBEAT, IDLE } kind;

/* The caller's own struct, with the timer inside: adding it allocates nothing. */
typedef struct conn {
    kind what;
    int id;
    int64_t idle_ns; /* idle timeout (IDLE) or period (HEARTBEAT) */
    tk_node timer;
} conn;

/* How late an idle timeout may close its connection. */
#define IDLE_SLACK_NS (10 * TK_NS_PER_MS)

static conn *of(tk_node *n) {
    return (conn *)((char *)n - offsetof(conn, timer));
}

int main(int argc, char **argv) {
    const tk_queue_ops *engine = argc > 1 ? tk_engine_by_name(argv[1]) : tk_engine_default();
    if (engine == NULL) {
        fprintf(stderr, "loop: no engine '%s'\n", argv[1]);
        return 2;
    }
    tk_queue_config cfg; /* the engine with its default parameters */
    tk_queue_config_init_for(&cfg, engine);
    int fds[2];
    if (pipe(fds) != 0) {
        perror("loop: pipe");
        return 1;
    }
    int64_t t0 = tk_clock_now_ns();
    tk_loop *timers;
    int rc = tk_loop_create(&cfg, t0, &timers);
    if (rc != TK_OK) {
        fprintf(stderr, "loop: %s\n", tk_strerror(rc));
        return 1;
    }
    printf("engine %s\n", tk_loop_engine(timers)->name);

    conn beat = {.what = HEARTBEAT, .id = 0, .idle_ns = 20 * TK_NS_PER_MS};
    conn c[3] = {{IDLE, 1, 30 * TK_NS_PER_MS, {0}},
                 {IDLE, 2, 60 * TK_NS_PER_MS, {0}},
                 {IDLE, 3, 90 * TK_NS_PER_MS, {0}}};
    memset(&beat.timer, 0, sizeof beat.timer);
    tk_loop_add(timers, &beat.timer, t0 + beat.idle_ns);
    for (int i = 0; i < 3; i++)
        tk_loop_add_within(timers, &c[i].timer, t0 + c[i].idle_ns, IDLE_SLACK_NS);
    int open = 3, early = 0, writes = 0;

    while (open > 0) {
        /* the wait ends on input, or by the latest instant that still meets
         * every timer's window, never before the first one is due */
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int ready = poll(&p, 1, tk_loop_timeout_ms(timers, tk_clock_now_ns()));
        int64_t now = tk_clock_now_ns();
        if (ready > 0) { /* activity on connection 3: push its idle timeout back */
            char b;
            if (read(fds[0], &b, 1) == 1 && tk_loop_remove(timers, &c[2].timer) == TK_OK) {
                tk_loop_add_within(timers, &c[2].timer, now + c[2].idle_ns, IDLE_SLACK_NS);
                printf("%6.1f ms  connection 3 active: idle timeout moved to +%lld ms\n",
                       (double)(now - t0) / 1e6, (long long)(c[2].idle_ns / TK_NS_PER_MS));
            }
        }
        tk_node *due;
        tk_loop_expire(timers, now, SIZE_MAX, &due);
        for (tk_node *n = due, *next; n != NULL; n = next) {
            next = tk_node_next_detached(n); /* read it before n is added again */
            conn *x = of(n);
            if (now < n->deadline_ns)
                early++;
            if (x->what == HEARTBEAT) {
                /* two pokes of connection 3 from the loop itself, on beats 2 and 3 */
                if (++writes == 2 || writes == 3)
                    if (write(fds[1], "x", 1) != 1)
                        perror("loop: write");
                tk_loop_add(timers, n, n->deadline_ns + x->idle_ns); /* fixed rate */
            } else {
                printf("%6.1f ms  connection %d idle: closed (%.1f ms after its deadline, "
                       "slack %lld ms)\n",
                       (double)(now - t0) / 1e6, x->id, (double)(now - n->deadline_ns) / 1e6,
                       (long long)(n->slack_ns / TK_NS_PER_MS));
                open--;
            }
        }
    }
    tk_loop_remove(timers, &beat.timer);
    printf("%d timers left; %s\n", (int)tk_loop_count(timers),
           early ? "a timer fired EARLY" : "no timer fired early");
    tk_loop_destroy(timers);
    close(fds[0]);
    close(fds[1]);
    return early ? 1 : 0;
}
