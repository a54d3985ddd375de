/* SPDX-License-Identifier: MIT */
/* tkbench: what a run runs (tkb_run_plan, cli.h), from what it was asked
 * (tkb_run_req): the suite, the workloads with their plans, the traces a
 * replay runs, the peers, and the cases, one per (workload, peer, n). Every
 * list comes from its table: the workload descriptors, the suites' peers
 * (suites.c) and the engine registry. */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "datadir.h"

/* ---- workloads ----------------------------------------------------------------- */
static void want_workload(const char *name, void *ctx) {
    tkb_run_plan *pl = ctx;
    bool found = false;
    for (size_t i = 0; i < tkb_workload_count; i++)
        if (strcmp(tkb_workloads[i]->name, name) == 0 ||
            strcmp(tkb_workloads[i]->group, name) == 0) {
            pl->want[i] = true;
            found = true;
        }
    if (found)
        return;
    char known[2048], groups[512];
    size_t k = 0, g = 0;
    known[0] = groups[0] = '\0';
    for (size_t i = 0; i < tkb_workload_count; i++) {
        k += (size_t)snprintf(known + k, k < sizeof known ? sizeof known - k : 0, " %s",
                              tkb_workloads[i]->name);
        bool first = true;
        for (size_t j = 0; j < i; j++)
            first &= strcmp(tkb_workloads[j]->group, tkb_workloads[i]->group) != 0;
        if (first)
            g += (size_t)snprintf(groups + g, g < sizeof groups ? sizeof groups - g : 0, " %s",
                                  tkb_workloads[i]->group);
    }
    tkb_die_usage(pl->cmd, "unknown workload '%s'; known:%s; groups:%s", name, known, groups);
}

typedef struct sizes {
    const tkb_cmd *cmd;
    size_t v[8];
    size_t n;
} sizes;

static void want_size(const char *s, void *ctx) {
    sizes *z = ctx;
    char *e;
    double d = strtod(s, &e);
    if (*e || d < 1 || d > 1e8 || d != floor(d))
        tkb_die_usage(z->cmd, "--n: '%s' is not a population in 1..1e8", s);
    if (z->n == TKB_COUNT(z->v) - 1)
        tkb_die_usage(z->cmd, "--n: at most %zu populations", TKB_COUNT(z->v) - 1);
    z->v[z->n++] = (size_t)d;
}

/* Run order: the machine first, then the core level, then the executor
 * level (whose real-time workloads take longest); report order is the table's. */
static int by_level(const void *a, const void *b) {
    const tkb_selected *x = a, *y = b;
    if (x->wl->level != y->wl->level)
        return (int)x->wl->level - (int)y->wl->level;
    size_t i = 0, j = 0;
    while (tkb_workloads[i] != x->wl)
        i++;
    while (tkb_workloads[j] != y->wl)
        j++;
    return i < j ? -1 : i > j;
}

/* Does the plan replay (a selected workload with a row per trace)? */
static bool replays(const tkb_run_plan *pl) {
    for (size_t k = 0; k < pl->nworks; k++)
        if (pl->works[k].wl->instance_rows)
            return true;
    return false;
}

/* Takes the replay out of the plan (a suite run whose trace is absent). */
static void drop_replay(tkb_run_plan *pl) {
    size_t j = 0;
    for (size_t k = 0; k < pl->nworks; k++)
        if (!pl->works[k].wl->instance_rows)
            pl->works[j++] = pl->works[k];
    pl->nworks = j;
}

/* The suite (an unknown one is a usage error), the timer slack, and what the
 * metadata calls the run. Returns 0 or 2. */
static int select_suite(tkb_run_plan *pl, const tkb_run_req *r, int *sid) {
    *sid = tkb_suite_find(r->suite);
    if (*sid < 0) {
        char known[256];
        size_t k = 0;
        known[0] = '\0';
        for (int s = 0; s < TKB_NSUITES; s++)
            k += (size_t)snprintf(known + k, k < sizeof known ? sizeof known - k : 0, " %s",
                                  tkb_suites[s].name);
        return tkb_usage(r->cmd, "unknown suite '%s'; known:%s", r->suite, known);
    }
    tkb_the_run.suite = &tkb_suites[*sid];
    tkb_the_run.timer_slack_ns = r->slack >= -1 ? r->slack : 1;
    tkb_the_run.reps_given = r->reps != 0;
    bool custom =
        r->wl || r->pl || r->nl || r->reps || r->slack >= -1 || r->ntraces > 0 || r->step_ns > 0;
    pl->suite_name = r->run_label ? r->run_label : custom ? "custom" : r->suite;
    return 0;
}

/* The workloads --workloads names (default: all), each with the suite's plan
 * as --n and --reps change it, in run order; replay --level keeps the
 * replays of one level. */
static void select_workloads(tkb_run_plan *pl, const tkb_run_req *r, int sid) {
    if (r->wl != NULL)
        tkb_for_each_item(r->wl, false, want_workload, pl);
    sizes z = {.cmd = r->cmd};
    if (r->nl != NULL) {
        tkb_for_each_item(r->nl, false, want_size, &z);
        if (z.n == 0)
            tkb_die_usage(r->cmd, "--n: expected a comma-separated list of populations");
    }
    for (size_t i = 0; i < tkb_workload_count; i++) {
        if (r->wl != NULL && !pl->want[i])
            continue;
        tkb_selected *s = &pl->works[pl->nworks++];
        s->wl = tkb_workloads[i];
        s->plan = tkb_plan_of(s->wl, sid);
        if (s->plan.reps_long == 0)
            s->plan.reps_long = s->plan.reps;
        if (r->reps)
            s->plan.reps = s->plan.reps_long = r->reps;
        if (z.n > 0 && s->wl->sizes_from_n)
            memcpy(s->plan.sizes, z.v, sizeof s->plan.sizes);
    }
    qsort(pl->works, pl->nworks, sizeof pl->works[0], by_level);
    if (r->level != NULL) { /* tkbench replay --level: the replays of that level */
        size_t j = 0;
        for (size_t k = 0; k < pl->nworks; k++)
            if (!pl->works[k].wl->instance_rows ||
                strcmp(tkb_level_name(pl->works[k].wl->level), r->level) == 0)
                pl->works[j++] = pl->works[k];
        pl->nworks = j;
        if (!replays(pl))
            tkb_die_usage(r->cmd, "--level %s: this tkbench has no replay at that level", r->level);
    }
}

/* The traces a replay runs: --trace, or the suite's own (a suite run without
 * it skips the replay). Returns 0, or the status of a trace that cannot be
 * opened. */
static int select_traces(tkb_run_plan *pl, tkb_run_req *r) {
    if (r->ntraces > 0 && !replays(pl))
        tkb_die_usage(r->cmd, "--trace: none of the selected workloads replays a trace (add "
                              "--workloads replay)");
    if (!replays(pl))
        return 0;
    char def[PATH_MAX] = "";
    if (r->ntraces == 0 && tkb_the_run.suite->replay_trace != NULL) {
        snprintf(def, sizeof def, "%s/%s", tkb_data_dir(), tkb_the_run.suite->replay_trace);
        if (access(def, R_OK) == 0)
            tkb_run_req_trace(r, def);
        else if (r->wl == NULL)
            fprintf(stderr, "tkbench: note: no trace %s: the replay is skipped\n", def);
    }
    if (r->ntraces == 0 && r->wl != NULL)
        tkb_die_usage(r->cmd,
                      "the replay needs a trace: --trace FILE (or synth:EVENTS[:TIMERS])%s%s%s",
                      def[0] ? "; the suite's trace " : "", def, def[0] ? " is not there" : "");
    if (r->ntraces == 0) {
        drop_replay(pl);
        return 0;
    }
    int rc = tkb_replay_set_open(&pl->rs, (const char *const *)r->traces, r->ntraces,
                                 r->step_ns > 0 ? r->step_ns : TKB_REPLAY_STEP_DEFAULT);
    if (rc != 0)
        return rc;
    pl->rs.speed = r->speed > 0 ? r->speed : 1;
    pl->rs.perturb = r->perturb;
    tkb_the_run.replay = &pl->rs;
    return 0;
}

/* ---- peers ----------------------------------------------------------------------- */
/* Adds the peer `spec` names. A bad spec ends the run (status 2), except
 * that a suite's spec naming an engine this build lacks (suite: true) is
 * left out and listed in `skipped` (its length skipped_len). */
static void add_peer(tkb_run_plan *pl, const char *spec, bool waiting_only, bool suite,
                     char *skipped, size_t skipped_len) {
    tkb_peer p;
    char err[1024];
    int rc = tkb_peer_parse(spec, &p, err, sizeof err);
    if (rc == TKB_PEER_UNKNOWN && suite) {
        size_t k = strlen(skipped);
        snprintf(skipped + k, skipped_len - k, "%s%s", k ? ", " : "", spec);
        return;
    }
    if (rc != 0)
        tkb_die_usage(pl->cmd, "%s", err);
    p.waiting_only = waiting_only;
    for (size_t i = 0; i < pl->npeers; i++)
        if (strcmp(pl->peers[i].spec, p.spec) == 0) {
            fprintf(stderr, "tkbench: note: '%s' is %s again; it runs once\n", spec, p.spec);
            return;
        }
    if (pl->npeers == TKB_MAX_PEERS)
        tkb_die_usage(pl->cmd, "--peers: at most %d peers", TKB_MAX_PEERS);
    pl->peers[pl->npeers++] = p;
}

static void want_peer(const char *spec, void *ctx) {
    add_peer(ctx, spec, false, false, NULL, 0);
}

/* The suites' engine peers (suites.c), every other registered engine at its
 * defaults, with tasks and with embedded timers, and every baseline, strawman
 * and foreign peer of the peer table (peers/peers.c). */
static void suite_peers(tkb_run_plan *pl) {
    char skipped[512] = "";
    for (size_t i = 0; i < tkb_suite_peer_count; i++)
        add_peer(pl, tkb_suite_peers[i].spec, tkb_suite_peers[i].waiting_only, true, skipped,
                 sizeof skipped);
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        bool named = false;
        for (size_t i = 0; i < pl->npeers && !named; i++)
            named = pl->peers[i].engine == ops;
        if (named)
            continue;
        char spec[TKB_SPEC_MAX];
        add_peer(pl, ops->name, false, true, skipped, sizeof skipped);
        snprintf(spec, sizeof spec, "%s@embedded", ops->name);
        add_peer(pl, spec, false, true, skipped, sizeof skipped);
    }
    for (size_t i = 0; i < tkb_baseline_count(); i++)
        if (tkb_baseline_in_suites(i) != NULL)
            add_peer(pl, tkb_baseline_in_suites(i), false, true, skipped, sizeof skipped);
    if (skipped[0] != '\0')
        fprintf(stderr, "tkbench: note: no such engine in this build, skipped: %s\n", skipped);
}

/* The frontier (tkb_workload.frontier): its lines (tkb_frontier_bases()),
 * which run the other workloads they are in the suite for too, and the same
 * with each slack of tkb_frontier_slacks_ns, and tkb_frontier_os_engine's
 * with each as its threads' OS timer slack, which run only the frontier. */
static void frontier_peers(tkb_run_plan *pl) {
    bool sweeps = false;
    for (size_t k = 0; k < pl->nworks; k++)
        sweeps |= pl->works[k].wl->frontier;
    tkb_peer bases[TKB_MAX_PEERS];
    size_t nbases = sweeps ? tkb_frontier_bases(bases, TKB_COUNT(bases)) : 0;
    for (size_t e = 0; e < nbases && e < TKB_COUNT(bases); e++) {
        const tkb_peer ref = bases[e];
        for (size_t i = 0; i < pl->npeers; i++)
            if (strcmp(pl->peers[i].spec, ref.spec) == 0)
                pl->peers[i].frontier = TKB_FRONTIER_TOO;
        bool os = strcmp(ref.engine->name, tkb_frontier_os_engine) == 0;
        for (size_t k = 0; k < tkb_frontier_slack_count; k++) {
            int64_t v = tkb_frontier_slacks_ns[k];
            tkb_peer q;
            for (int pass = 0; pass < (os ? 2 : 1) && v > 0; pass++) {
                const char *key = pass == 0 ? TKB_SLACK_KEY : TKB_OS_SLACK_KEY;
                if (pl->npeers == TKB_MAX_PEERS || tkb_peer_with_slack(&ref, key, v, &q) != 0)
                    continue;
                q.frontier = TKB_FRONTIER_ONLY;
                pl->peers[pl->npeers++] = q;
            }
        }
    }
}

/* The peers --peers names, else the suites'; in display order with their
 * style slots. A peer named for a replay must be on its grid: a usage error
 * says why not. Returns 0 or 2. */
static int select_peers(tkb_run_plan *pl, const tkb_run_req *r) {
    if (r->pl != NULL) {
        tkb_for_each_item(r->pl, true, want_peer, pl);
        for (size_t i = 0; i < pl->npeers; i++) /* every engine named runs the frontier */
            if (pl->peers[i].engine != NULL)
                pl->peers[i].frontier = TKB_FRONTIER_TOO;
    } else {
        suite_peers(pl);
        frontier_peers(pl);
    }
    tkb_peer_arrange(pl->peers, pl->npeers);
    for (size_t j = 0; tkb_the_run.replay != NULL && r->pl != NULL && j < pl->npeers; j++) {
        char err[512];
        const tkb_peer *p = &pl->peers[j];
        if (p->slack_ns > 0) { /* tkb_replay_core_fits() says why */
            tkb_replay_core_fits(p, tkb_the_run.replay->step_ns, err, sizeof err);
            fprintf(stderr, "tkbench: note: %s\n", err);
            continue;
        }
        if (p->core != NULL && p->core->expire_at != NULL &&
            !tkb_replay_core_fits(p, tkb_the_run.replay->step_ns, err, sizeof err))
            return tkb_usage(r->cmd, "%s", err);
        if (p->core == NULL || p->core->expire_at == NULL)
            fprintf(stderr, "tkbench: note: %s has no core-level replay%s\n", p->spec,
                    p->core != NULL ? " (no faithful partial expiry in virtual time, "
                                      "docs/replay.md)"
                                    : "");
    }
    return 0;
}

/* ---- cases ----------------------------------------------------------------------- */
/* Every (workload, peer) pair's cases, from the workload's builder (the
 * harness's for a foreign peer). Nothing to run, or more than TKB_MAX_CASES, is
 * a usage error. */
static void select_cases(tkb_run_plan *pl) {
    for (size_t k = 0; k < pl->nworks; k++)
        for (size_t j = 0; j < pl->npeers; j++) {
            const tkb_peer *p = &pl->peers[j];
            const tkb_selected *s = &pl->works[k];
            tkb_case *at = pl->cases + pl->ncases;
            size_t cap = TKB_MAX_CASES - pl->ncases;
            if (p->waiting_only && !s->wl->waiting)
                continue;
            if (s->wl->frontier ? p->frontier == TKB_FRONTIER_NONE
                                : p->frontier == TKB_FRONTIER_ONLY)
                continue;
            pl->ncases += p->child ? tkb_child_cases(s->wl, &s->plan, p, at, cap)
                                   : s->wl->cases(s->wl, &s->plan, p, at, cap);
        }
    for (size_t j = 0; j < pl->npeers; j++)
        if (pl->peers[j].missing)
            fprintf(stderr, "tkbench: note: %s: %s\n", pl->peers[j].spec, pl->peers[j].missing);
    if (pl->ncases == 0)
        tkb_die_usage(pl->cmd, "nothing to run: no selected peer runs the selected workloads");
    if (pl->ncases == TKB_MAX_CASES)
        tkb_die_usage(pl->cmd,
                      "too many benchmarks (more than %d): select fewer workloads, peers or sizes",
                      TKB_MAX_CASES);
}

int tkb_run_plan_make(tkb_run_plan *pl, tkb_run_req *r) {
    int sid;
    pl->cmd = r->cmd;
    int rc = select_suite(pl, r, &sid);
    if (rc != 0)
        return rc;
    select_workloads(pl, r, sid);
    rc = select_traces(pl, r);
    if (rc == 0)
        rc = select_peers(pl, r);
    if (rc == 0)
        select_cases(pl);
    return rc;
}

void tkb_run_plan_close(tkb_run_plan *pl) {
    for (size_t i = 0; i < pl->ncases; i++)
        if (pl->cases[i].hist != NULL) {
            tkb_hist_destroy(pl->cases[i].hist);
            free(pl->cases[i].hist);
        }
    tkb_child_cases_free(pl->cases, pl->ncases);
    if (tkb_the_run.replay == &pl->rs)
        tkb_the_run.replay = NULL;
    tkb_replay_set_close(&pl->rs);
}
