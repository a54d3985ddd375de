/* SPDX-License-Identifier: MIT */
/* tkbench workload `slack_frontier` (group `slack`): what a slack buys (issue
 * 28). The executor-level replay of the run's traces (as `replay_exec`,
 * tkb_replay_exec_measure()), on the first `seconds` of each trace (the
 * plan's; 0: all of it), by every peer on the frontier: each engine's
 * reference peer at each slack of tkb_frontier_slacks_ns (suites.c), and the
 * heap with each as its threads' OS timer slack (cli/run-select.c adds
 * them). Rows `slack_frontier:<trace>`; its figures draw each engine's p99
 * lateness against its wake-ups per second and against its CPU, one line
 * through its slacks, and the report's table adds the targets' check
 * (targets.c). docs/workloads.md, "The slack frontier". */
#include <stdio.h>
#include <string.h>

#include "harness/harness.h"
#include "replay/replay.h"

/* After the part replayed, timers due within this much wall time still
 * fire; the rest are cancelled (counted in `unfired`). Shorter than the
 * whole replay's 2 s, which would cost more than the part itself; every
 * peer of the frontier gets the same, so their points compare. */
#define FRONTIER_DRAIN_NS (TKB_NS_PER_S / 2)

static void slack_frontier_case(tk_gb_state *st, tkb_case *c) {
    size_t applied;
    tkt_trace part =
        tkb_replay_exec_part(&tkb_the_run.replay->traces[c->arg].trace, c->plan->seconds, &applied);
    tkb_replay_exec_measure(st, c, &part, FRONTIER_DRAIN_NS);
}

static size_t frontier_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                             tkb_case *cases, size_t cap) {
    if (p->engine == NULL || p->frontier == TKB_FRONTIER_NONE)
        return 0;
    return tkb_replay_exec_add_cases(w, plan, p, cases, cap, slack_frontier_case);
}

static const tkb_figure frontier_figures[] = {
    {.name = "frontier",
     .kind = TKB_FIG_FRONTIER,
     .metrics = "wakeups_per_s,late_p99_us",
     .title = "p99 lateness against wake-ups, by slack",
     .caption = "Each engine's p99 lateness against the wake-ups per second of the service's "
                "threads, one line through its slacks (each point labelled with its slack); "
                "the heap's OS-timer-slack line is the Linux counterpart "
                "(prctl(PR_SET_TIMERSLACK) on its threads). Down and left is better.",
     .xlabel = "wake-ups of the service's threads",
     .ylabel = "p99 lateness",
     .xscale = TKB_SCALE_AUTO, /* log where the points span 30x or more */
     .yscale = TKB_SCALE_LOG,
     .wide = true,
     .table = "wakeups_per_s,process_cpu_pct,late_p50_us,late_p99_us,late_max_us,early_count"},
    {.name = "frontier_cpu",
     .kind = TKB_FIG_FRONTIER,
     .metrics = "process_cpu_pct,late_p99_us",
     .title = "p99 lateness against CPU, by slack",
     .caption = "Each engine's p99 lateness against the process's CPU (of one core), one line "
                "through its slacks, as in the wake-ups figure.",
     .xlabel = "process CPU, share of one core",
     .ylabel = "p99 lateness",
     .xscale = TKB_SCALE_AUTO, /* log where the points span 30x or more */
     .yscale = TKB_SCALE_LOG,
     .wide = true},
};

const tkb_workload tkb_wl_slack_frontier = {
    .name = "slack_frontier",
    .group = "slack",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "the slack frontier: the executor-level replay of a part of a trace by each "
               "engine at each slack of the frontier, and the heap with each as its OS timer "
               "slack: p99 lateness against wake-ups and CPU",
    .x = {"trace events replayed", "events", TKB_SCALE_LOG},
    .metrics = tkb_replay_exec_metrics,
    .nmetrics = TKB_REPLAY_EXEC_NMETRICS,
    .figures = frontier_figures,
    .nfigures = TKB_COUNT(frontier_figures),
    .instance_rows = true,
    .waiting = true,
    .frontier = true,
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1, .seconds = 0.3},
            [TKB_QUICK] = {.reps = 1, .seconds = 1},
            [TKB_FULL] = {.reps = 3, .seconds = 0},
        },
    .cases = frontier_cases,
};
