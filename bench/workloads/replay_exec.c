/* SPDX-License-Identifier: MIT */
/* tkbench workload `replay_exec` (group `replay`): the executor-level replay
 * of the run's traces (tkb_replay_exec(), replay/executor-level.c; docs/replay.md):
 * each event issued at its trace time / speed from a thread of the harness
 * into a running service, every firing's lateness recorded. The sibling of
 * `replay_core`: rows `replay_exec:<trace>`, n the trace's events replayed
 * (starts and cancels), lateness histograms in hist/ and their figures drawn
 * once per trace. A plan with `seconds` replays the trace's first seconds
 * only (the quick suite's: bench/README.md, "Time"). */
#include <stdio.h>
#include <string.h>

#include "harness/harness.h"
#include "replay/replay.h"

/* A replay longer than this (wall time) is refused before it starts. */
#define REPLAY_EXEC_MAX_S 900.0
/* After the last event, timers due within this much wall time still fire;
 * the rest (a trace often ends with long timeouts armed) are cancelled. */
#define REPLAY_EXEC_DRAIN_NS (2 * TKB_NS_PER_S)

tkt_trace tkb_replay_exec_part(const tkt_trace *t, double seconds, size_t *applied) {
    tkt_trace v = *t;
    size_t k = t->count;
    if (seconds > 0 && t->count > 0) {
        int64_t end = t->ev[0].t_ns + (int64_t)(seconds * 1e9);
        for (k = 0; k < t->count && t->ev[k].t_ns < end;)
            k++;
        v.count = k;
        v.duration_ns = k > 0 ? t->ev[k - 1].t_ns : 0;
    }
    *applied = 0;
    for (size_t i = 0; i < k; i++)
        *applied += t->ev[i].op != TKT_EXPIRE;
    return v;
}

void tkb_replay_exec_measure(tk_gb_state *st, tkb_case *c, const tkt_trace *trace,
                             int64_t drain_ns) {
    const tkb_replay_set *rs = tkb_the_run.replay;
    tkb_hist h;
    if (tkb_hist_init(&h) != 0) {
        tk_gb_skip(st, "out of memory");
        return;
    }
    while (tk_gb_keep_running(st)) {
        tkb_hist_reset(&h);
        tkb_replay_exec_result r = {.late = &h};
        tkb_replay_exec_opts o = {.speed = rs->speed,
                                  .timer_slack_ns = tkb_the_run.timer_slack_ns,
                                  .max_seconds = REPLAY_EXEC_MAX_S,
                                  .drain_max_ns = drain_ns};
        char err[512];
        if (tkb_replay_exec(trace, c->peer, &o, &r, err, sizeof err) != 0) {
            if (c->arg2 == 0) /* once per case, not once per repetition */
                fprintf(stderr, "tkbench: replay failed: %s: %s\n", c->peer->spec, err);
            c->arg2 = 1;
            tk_gb_skip(st, err);
            break;
        }
        double wall = r.wall_ns > 0 ? (double)r.wall_ns : 1;
        tk_gb_set_iteration_time(st, wall / 1e9);
        tkb_hist_counters(st, &h, "late", true);
        tk_gb_counter(st, "late_max_us", (double)h.max / 1000.0);
        tk_gb_counter(st, "early_count", (double)h.early_count);
        tk_gb_counter(st, "process_cpu_pct", 100.0 * (double)r.cpu_ns / wall);
        tk_gb_counter(st, "wakeups_per_s", (double)r.wakeups * 1e9 / wall);
        tk_gb_counter(st, "rss_peak_delta_bytes", (double)r.rss_peak_delta_bytes);
        tk_gb_counter(st, "fired", (double)r.fired);
        tk_gb_counter(st, "fired_after_cancel", (double)r.fired_after_cancel);
        tk_gb_counter(st, "cancels_missed", (double)r.cancels_missed);
        tk_gb_counter(st, "unfired", (double)r.unfired);
        tk_gb_counter(st, "issue_late", (double)r.issue_late);
        if (c->hist)
            tkb_hist_merge(c->hist, &h);
    }
    tkb_hist_destroy(&h);
}

static void replay_exec_case(tk_gb_state *st, tkb_case *c) {
    size_t applied;
    tkt_trace part =
        tkb_replay_exec_part(&tkb_the_run.replay->traces[c->arg].trace, c->plan->seconds, &applied);
    tkb_replay_exec_measure(st, c, &part, REPLAY_EXEC_DRAIN_NS);
}

size_t tkb_replay_exec_add_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                                 tkb_case *cases, size_t cap,
                                 void (*body)(tk_gb_state *, tkb_case *)) {
    const tkb_replay_set *rs = tkb_the_run.replay;
    if (rs == NULL || rs->count == 0 || p->svc == NULL)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < rs->count && k < cap; i++) {
        size_t applied;
        tkt_trace part = tkb_replay_exec_part(&rs->traces[i].trace, plan->seconds, &applied);
        double est = (double)part.duration_ns / 1e9 / rs->speed + 1.0;
        size_t added = tkb_case_add_realtime(cases + k, cap - k, w, plan, p, (double)applied,
                                             (int64_t)i, body, est);
        if (added == 0)
            break;
        tkb_case *c = &cases[k];
        snprintf(c->row, sizeof c->row, "%s:%.*s", w->name,
                 (int)(sizeof c->row - strlen(w->name) - 2), part.name);
        snprintf(c->name, sizeof c->name, "%s/%s/%.10g", c->row, p->spec, c->n);
        k += added;
    }
    return k;
}

static size_t replay_exec_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                                tkb_case *cases, size_t cap) {
    return tkb_replay_exec_add_cases(w, plan, p, cases, cap, replay_exec_case);
}

#define PCT(nm, lab, p, h)                                                                         \
    {                                                                                              \
        .name = nm, .unit = "us", .better = TKB_BETTER_LOWER, .label = lab, .pct = p, .head = {    \
            h,                                                                                     \
            lab,                                                                                   \
            "(us)",                                                                                \
            1,                                                                                     \
            1                                                                                      \
        }                                                                                          \
    }
#define COUNT(nm, lab)                                                                             \
    { .name = nm, .unit = "count", .better = TKB_BETTER_NONE, .label = lab }
const tkb_metric tkb_replay_exec_metrics[TKB_REPLAY_EXEC_NMETRICS] = {
    PCT("late_p50_us", "p50", 50, 1),
    PCT("late_p90_us", "p90", 90, 0),
    PCT("late_p99_us", "p99", 99, 1),
    PCT("late_p999_us", "p99.9", 99.9, 0),
    {.name = "late_max_us", .unit = "us", .better = TKB_BETTER_LOWER, .label = "max"},
    {.name = "early_count",
     .unit = "count",
     .better = TKB_BETTER_LOWER,
     .label = "early",
     .head = {1, "early", NULL, 1, 0}},
    {.name = "process_cpu_pct",
     .unit = "pct",
     .better = TKB_BETTER_LOWER,
     .label = "CPU (of a core)",
     .head = {1, "cpu", NULL, 1, 1}},
    {.name = "wakeups_per_s",
     .unit = "per_s",
     .better = TKB_BETTER_LOWER,
     .label = "service thread wake-ups"},
    {.name = "rss_peak_delta_bytes",
     .unit = "bytes",
     .better = TKB_BETTER_LOWER,
     .label = "peak RSS growth"},
    COUNT("fired", "timers fired"),
    COUNT("fired_after_cancel", "fired after their cancel"),
    COUNT("cancels_missed", "cancels after the firing"),
    COUNT("unfired", "left armed at the end (cancelled)"),
    COUNT("issue_late", "events issued over 1 ms late"),
};
#undef PCT
#undef COUNT

static const tkb_figure replay_exec_figures[] = {
    TKB_LATENESS_FIGURE,
};

const tkb_workload tkb_wl_replay_exec = {
    .name = "replay_exec",
    .group = "replay",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "executor-level replay of a recorded trace in real time: lateness of every "
               "firing, CPU, wake-ups, memory",
    .x = {"trace events", "events", TKB_SCALE_LOG},
    .metrics = tkb_replay_exec_metrics,
    .nmetrics = TKB_COUNT(tkb_replay_exec_metrics),
    .figures = replay_exec_figures,
    .nfigures = TKB_COUNT(replay_exec_figures),
    .instance_rows = true,
    .hist = true,
    .waiting = true,
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1},
            [TKB_QUICK] = {.reps = 1, .seconds = 6},
            [TKB_FULL] = {.reps = 3},
        },
    .cases = replay_exec_cases,
};
