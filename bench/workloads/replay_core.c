/* SPDX-License-Identifier: MIT */
/* tkbench workload `replay_core` (group `replay`): the core-level replay of
 * the run's traces (replay/core-level.c, docs/replay.md). Rows are
 * `replay_core:<trace>`, one per trace
 * of the run (tkb_the_run.replay, set by the CLI); n is the trace's events.
 * A case runs one repetition per call: the replay timed whole (the case's
 * manual time) and checked against the reference model, then a second pass
 * timing each operation. A difference from the reference fails the case
 * (the run exits with status 1), with the first difference on stderr
 * (once: the case's arg2 records that it was said). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "replay/replay.h"

static void replay_core_case(tk_gb_state *st, tkb_case *c) {
    const tkb_replay_set *rs = tkb_the_run.replay;
    const tkb_replay_trace *rt = &rs->traces[c->arg];
    tkb_replay_core_opts o = {.timed_ops = true, .perturb = rs->perturb};
    while (tk_gb_keep_running(st)) {
        tkb_replay_core_result r;
        char err[512];
        int rc = tkb_replay_core(&rt->trace, &rt->ref, c->peer, &o, &r, err, sizeof err);
        if (rc != 0) {
            if (c->arg2 == 0) /* once per case, not once per repetition */
                fprintf(stderr, "tkbench: replay %s: %s\n", rc > 0 ? "MISMATCH" : "failed", err);
            c->arg2 = 1;
            tk_gb_skip(st, err);
            return;
        }
        tk_gb_set_iteration_time(st, (double)r.total_ns / 1e9);
        tk_gb_counter(st, "event_ns", r.event_ns);
        const struct {
            const char *name;
            double v;
        } ops[] = {{"start_ns", r.start_ns},
                   {"modify_ns", r.modify_ns},
                   {"cancel_ns", r.cancel_ns},
                   {"expire_ns", r.expire_ns}};
        for (size_t i = 0; i < TKB_COUNT(ops); i++)
            if (!isnan(ops[i].v))
                tk_gb_counter(st, ops[i].name, ops[i].v);
    }
    const tkb_replay_ref *f = &rt->ref;
    tk_gb_counter(st, "peak_timers", (double)f->peak);
    tk_gb_counter(st, "max_batch", (double)f->max_batch);
    tk_gb_counter(st, "starts", (double)f->starts);
    tk_gb_counter(st, "modifies", (double)f->modifies);
    tk_gb_counter(st, "cancels", (double)f->cancels);
    tk_gb_counter(st, "cancels_unarmed", (double)f->cancels_unarmed);
    tk_gb_counter(st, "expired", (double)f->expired);
}

static size_t replay_core_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                                tkb_case *cases, size_t cap) {
    const tkb_replay_set *rs = tkb_the_run.replay;
    char err[512];
    if (rs == NULL || rs->count == 0 || p->core == NULL || p->core->expire_at == NULL)
        return 0;
    if (!tkb_replay_core_fits(p, rs->step_ns, err, sizeof err)) {
        fprintf(stderr, "tkbench: note: replay: %s; skipped\n", err);
        return 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < rs->count; i++) {
        const tkb_replay_trace *rt = &rs->traces[i];
        if (!tkb_core_fits(p, rt->ref.peak)) {
            fprintf(stderr,
                    "tkbench: note: replay:%s has up to %zu timers armed, more than %s runs; "
                    "skipped\n",
                    rt->trace.name, rt->ref.peak, p->label);
            continue;
        }
        double ev = (double)rt->ref.events;
        double est = 0.01 + ev * 0.5e-6 * tkb_peer_factor(p) *
                                (tkb_is_strawman(p) ? 1 + (double)rt->ref.peak / 100 : 1);
        tkb_case *c = tkb_case_add(cases, cap, &k, w, plan, p, ev, (int64_t)i, replay_core_case,
                                   plan->reps, est);
        if (c == NULL)
            break;
        snprintf(c->row, sizeof c->row, "%s:%.*s", w->name,
                 (int)(sizeof c->row - strlen(w->name) - 2), rt->trace.name);
        snprintf(c->name, sizeof c->name, "%s/%s/%.10g", c->row, p->spec, ev);
    }
    return k;
}

#define OP(nm, lab, h)                                                                             \
    {                                                                                              \
        .name = nm, .unit = "ns", .better = TKB_BETTER_LOWER, .label = lab, .head = {              \
            1,                                                                                     \
            h,                                                                                     \
            NULL,                                                                                  \
            1,                                                                                     \
            1                                                                                      \
        }                                                                                          \
    }
#define COUNT(nm, lab)                                                                             \
    { .name = nm, .unit = "count", .better = TKB_BETTER_NONE, .label = lab }
static const tkb_metric replay_metrics[] = {
    {.name = "event_ns",
     .unit = "ns",
     .better = TKB_BETTER_LOWER,
     .label = "time per event (whole replay)",
     .figure = TKB_FIG_BARS,
     .head = {1, "ev", NULL, 1, 1}},
    OP("start_ns", "start", "start"),
    OP("modify_ns", "modify", "modify"),
    OP("cancel_ns", "cancel", "cancel"),
    OP("expire_ns", "expire", "expire"),
    COUNT("peak_timers", "peak timers armed"),
    COUNT("max_batch", "largest expiry batch"),
    COUNT("starts", "starts"),
    COUNT("modifies", "modifies (start of an armed timer)"),
    COUNT("cancels", "cancels"),
    COUNT("cancels_unarmed", "cancels of timers not armed"),
    COUNT("expired", "timers expired"),
};
#undef OP
#undef COUNT

static const tkb_figure replay_figures[] = {
    {"replay_core_ops", TKB_FIG_BARS, "start_ns,modify_ns,cancel_ns,expire_ns",
     "replay_core: cost per operation",
     "Core-level replay of a trace (virtual time on a grid, one thread): the cost of each kind of "
     "operation, timed one by one in the second pass (expiry: per timer expired).",
     "operation", "time per operation", .yscale = TKB_SCALE_LOG},
};

const tkb_workload tkb_wl_replay_core = {
    .name = "replay_core",
    .group = "replay",
    .level = TKB_LEVEL_CORE,
    .summary = "core-level replay of a recorded trace (virtual time; every peer checked against "
               "a reference model)",
    .x = {"trace events", "events", TKB_SCALE_LOG},
    .metrics = replay_metrics,
    .nmetrics = TKB_COUNT(replay_metrics),
    .figures = replay_figures,
    .nfigures = TKB_COUNT(replay_figures),
    .instance_rows = true,
    .plan =
        {
            [TKB_SMOKE] = {.reps = 1},
            [TKB_QUICK] = {.reps = 5},
            [TKB_FULL] = {.reps = 5},
        },
    .cases = replay_core_cases,
};
