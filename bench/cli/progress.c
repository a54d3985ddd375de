/* SPDX-License-Identifier: MIT */
/* tkbench: a run's progress on stderr ("[12/183] W1_core heap n=1000000 ...
 * elapsed 41s, ~5m10s left"), and the body every case runs through. */
#define _GNU_SOURCE
#include <malloc.h>
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"

/* Progress state: written only by the main thread, inside case bodies
 * (Google Benchmark runs every body on the thread that called tk_gb_run()). */
static struct {
    tkb_case *cases; /* the run's cases */
    size_t ncases;
    int64_t run_start_ns;
    tkb_case *current;
    double done_est, done_actual;
    int64_t case_start_ns;
} g_progress;

void tkb_fmt_secs(char *buf, size_t len, double s) {
    if (s < 90)
        snprintf(buf, len, "%.0fs", s);
    else
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

void tkb_progress_start(tkb_case *cases, size_t ncases) {
    g_progress.cases = cases;
    g_progress.ncases = ncases;
    g_progress.run_start_ns = tkb_now_ns();
}

double tkb_progress_elapsed(void) {
    return (double)(tkb_now_ns() - g_progress.run_start_ns) / 1e9;
}

void tkb_progress_enter(tkb_case *c) {
    if (c == g_progress.current)
        return;
    int64_t now = tkb_now_ns();
    if (g_progress.current != NULL) {
        g_progress.current->done = true;
        if (!g_progress.current->realtime) { /* only compute-bound cases rescale the estimate */
            g_progress.done_est += g_progress.current->est_seconds;
            g_progress.done_actual += (double)(now - g_progress.case_start_ns) / 1e9;
        }
    }
    g_progress.current = c;
    g_progress.case_start_ns = now;
    c->started = true;
    size_t idx = (size_t)(c - g_progress.cases);
    double ratio = g_progress.done_est > 1.0 ? g_progress.done_actual / g_progress.done_est : 1.0;
    if (ratio < 0.2)
        ratio = 0.2;
    if (ratio > 5)
        ratio = 5;
    double left = 0; /* real-time workloads (sleeps, fixed windows) take what they take */
    for (size_t i = idx; i < g_progress.ncases; i++)
        left += g_progress.cases[i].est_seconds * (g_progress.cases[i].realtime ? 1.0 : ratio);
    char el[32], lf[32], nbuf[32];
    tkb_fmt_secs(el, sizeof el, (double)(now - g_progress.run_start_ns) / 1e9);
    tkb_fmt_secs(lf, sizeof lf, left);
    snprintf(nbuf, sizeof nbuf, "%.10g", c->n);
    fprintf(stderr, "[%zu/%zu] %s %s n=%s%s%s ... elapsed %s, ~%s left\n", idx + 1,
            g_progress.ncases, c->row, c->peer->label, nbuf, c->time_metric ? " " : "",
            c->time_metric ? c->time_metric : "", el, lf);
    fflush(stderr);
}

void tkb_progress_case_body(tk_gb_state *st, void *ctx) {
    tkb_case *c = ctx;
    if (c != g_progress.current) {
        /* A new case starts from a consolidated heap: after a workload freed a
         * million small blocks, the next malloc that consolidates them would
         * stall a timer thread for milliseconds inside a timed window. Repetitions
         * of one case still reuse warm memory. */
        malloc_trim(0);
    }
    tkb_progress_enter(c);
    c->fn(st, c);
}
