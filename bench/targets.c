/* SPDX-License-Identifier: MIT */
/* tkbench: the targets a run is held to (tkbench.h, "targets"). This table
 * is the only place they are written down. The run writes them, one per
 * peer, into manifest.json (`targets`, docs/results-format.md) and plans the
 * repetitions they need; the renderer gives each its verdict in report.md
 * and on its standard output, "not run" when a peer, a workload or an n is
 * not in the run or the machine has too few cores.
 *
 * Which peers: "every engine" is every engine of the registry, its exact or
 * ticked ones by their capabilities (TK_QUEUE_CAP_TICKED), each at its
 * reference spec (tkb_peer_engine_reference(): the engine's first parameter
 * set among the suites' peers, e.g. the wheel with a 1 ms tick and 1024
 * slots), so an engine added to the registry is held to them with no line
 * here. Exact engines are held to the JDK's ScheduledThreadPoolExecutor,
 * ticked ones to Netty's HashedWheelTimer at the same 1 ms tick. Only the
 * burst-rate floors name specs, because each has a bound of its own. */
#include <stdio.h>
#include <string.h>

#include "tkbench.h"

extern const tkb_workload tkb_wl_w1_exec, tkb_wl_w2_burst, tkb_wl_w4_idle, tkb_wl_w5_memory,
    tkb_wl_w7_contention, tkb_wl_slack_frontier, tkb_wl_floor;

#define ISSUE26 "issue 26"
#define ISSUE28 "issue 28 (timer slack)"
/* The frontier's: each engine at a 1 ms slack on the shipped tcp trace. */
#define SLACK(m, b, text, ...)                                                                     \
    {                                                                                              \
        .workload = &tkb_wl_slack_frontier, .instance = "tcp", .metric = m,                        \
        .peers = TKB_TP_ENGINES, .slack_ns = TKB_NS_PER_MS, .bound = b, .what = text,              \
        .source = ISSUE28, __VA_ARGS__                                                             \
    }
#define FLOOR18 "issue 18 (no-regression floor)"
/* W1_exec's: at N = 1e6, medians of at least 3 repetitions. */
#define W1(m, who, emb, r, b, text)                                                                \
    {                                                                                              \
        .workload = &tkb_wl_w1_exec, .metric = m, .peers = who, .embedded = emb, .ref = r,         \
        .n = 1e6, .bound = b, .min_reps = 3, .what = text, .source = ISSUE26                       \
    }
/* W7's: the throughput of n producers over that of one, tasks or embedded timers. */
#define W7(np, b, emb, cores)                                                                      \
    {                                                                                              \
        .workload = &tkb_wl_w7_contention, .metric = "ops_per_s", .peers = TKB_TP_ENGINES,         \
        .embedded = emb, .n = np, .ref_n = 1, .at_least = true, .bound = b, .min_cores = cores,    \
        .what = "%s: " #np " producers against one", .source = ISSUE26                             \
    }
/* W4's: no wake-up of any thread in the window, for each variant of the queue. */
#define W4(v, queue)                                                                               \
    {                                                                                              \
        .workload = &tkb_wl_w4_idle, .variant = v, .metric = "idle_wakeups",                       \
        .peers = TKB_TP_ENGINES, .bound = 0, .what = "%s tasks: wake-ups while idle, " queue,      \
        .source = ISSUE26                                                                          \
    }

const tkb_target tkb_targets[] = {
    W1("schedule_ns", TKB_TP_EXACT_ENGINES, false, "jdk-stpe", 0.8,
       "%s tasks: schedule vs the JDK's STPE"),
    W1("cancel_ns", TKB_TP_EXACT_ENGINES, false, "jdk-stpe-roc", 0.5,
       "%s tasks: cancel vs STPE with remove-on-cancel"),
    W1("churn_ns", TKB_TP_EXACT_ENGINES, false, "jdk-stpe-roc", 0.8,
       "%s tasks: churn vs STPE with remove-on-cancel"),
    W1("schedule_ns", TKB_TP_TICKED_ENGINES, false, "netty-1ms", 1.0,
       "%s tasks: schedule vs Netty 1 ms"),
    W1("cancel_ns", TKB_TP_TICKED_ENGINES, false, "netty-1ms", 1.0,
       "%s tasks: cancel vs Netty 1 ms"),
    W1("churn_ns", TKB_TP_TICKED_ENGINES, false, "netty-1ms", 0.8, "%s tasks: churn vs Netty 1 ms"),
    W1("schedule_ns", TKB_TP_ENGINES, true, "netty-1ms", 0.8, "%s: schedule vs Netty 1 ms"),
    W1("cancel_ns", TKB_TP_ENGINES, true, "netty-1ms", 0.8, "%s: cancel vs Netty 1 ms"),
    {.workload = &tkb_wl_w5_memory,
     .metric = "bytes_per_timer",
     .peers = TKB_TP_ENGINES,
     .bound = 96,
     .what = "%s tasks: bytes per timer",
     .source = ISSUE26},
    {.workload = &tkb_wl_w5_memory,
     .metric = "bytes_per_timer",
     .peers = TKB_TP_TICKED_ENGINES,
     .ref = "netty-1ms",
     .bound = 1.0,
     .what = "%s tasks: bytes per timer vs Netty 1 ms",
     .source = ISSUE26},
    {.workload = &tkb_wl_w5_memory,
     .metric = "bytes_per_timer",
     .peers = TKB_TP_EXACT_ENGINES,
     .ref = "jdk-stpe",
     .info = true,
     .what = "%s tasks: bytes per timer vs the JDK's STPE",
     .source = ISSUE26 " (for reference)"},
    W4("empty", "queue empty"),
    W4("hour", "one timer 1 h ahead"),
    W7(2, 1.0, false, 0),
    W7(4, 1.0, false, 0),
    W7(2, 1.0, true, 0),
    W7(4, 1.0, true, 0),
    W7(16, 4.0, false, 16),
    W7(16, 4.0, true, 16),
    SLACK("wakeups_per_s", 0.5, "%s: wake-ups against slack 0", .ref_unslacked = true),
    SLACK("late_p99_us", 0, "%s: p99 lateness within slack + precision + the floor's wake-up p99",
          .bound_window = true, .plus = &tkb_wl_floor, .plus_metric = "nanosleep_late_p99_us",
          .plus_peer = "floor"),
    SLACK("early_count", 0, "%s: nothing early"),
    /* the floors name their specs: each has a bound of its own */
    {.workload = &tkb_wl_w2_burst,
     .metric = "burst_fire_rate_per_s",
     .spec = "heap",
     .at_least = true,
     .bound = 8e6,
     .what = "%s tasks: burst firing rate",
     .source = FLOOR18},
    {.workload = &tkb_wl_w2_burst,
     .metric = "burst_fire_rate_per_s",
     .spec = "wheel:tick=1ms,slots=1024",
     .at_least = true,
     .bound = 15e6,
     .what = "%s tasks: burst firing rate",
     .source = FLOOR18},
};
const size_t tkb_target_count = TKB_COUNT(tkb_targets);

bool tkb_targets_check(void) {
    bool ok = true;
    for (size_t i = 0; i < tkb_target_count; i++) {
        const tkb_target *t = &tkb_targets[i];
        bool variant = t->variant == NULL;
        for (size_t v = 0; !variant && v < t->workload->nvariants; v++)
            variant = strcmp(t->variant, t->workload->variants[v]) == 0;
        const tkb_metric *m = tkb_metric_find(t->workload, t->metric);
        const char *bad = m == NULL  ? "names a metric its workload does not declare"
                          : !variant ? "names a variant its workload does not have"
                          : (t->instance != NULL) != t->workload->instance_rows
                              ? "names an instance of a workload without instance rows, or none "
                                "of one with them"
                          : t->bound_window && strcmp(m->unit, "us") != 0
                              ? "adds a window (us) to the bound of a metric not in us"
                          : t->plus != NULL && (t->plus_peer == NULL || t->plus_metric == NULL ||
                                                tkb_metric_find(t->plus, t->plus_metric) == NULL)
                              ? "adds to its bound a metric its workload does not declare, or "
                                "names no peer of it"
                          : (t->slack_ns > 0 || t->ref_unslacked) && t->peers == TKB_TP_SPEC
                              ? "sets a slack on a spec (write it in the spec)"
                          : (t->peers == TKB_TP_SPEC) != (t->spec != NULL)
                              ? "names a spec and engines, or neither"
                              : NULL;
        if (bad != NULL) {
            fprintf(stderr, "tkbench: target %zu (%s %s) %s\n", i + 1, t->workload->name, t->metric,
                    bad);
            ok = false;
        }
    }
    return ok;
}

/* Does target t name engine e? */
static bool names_engine(const tkb_target *t, const tk_queue_ops *e) {
    bool ticked = (e->caps & TK_QUEUE_CAP_TICKED) != 0;
    return t->peers == TKB_TP_ENGINES || (t->peers == TKB_TP_TICKED_ENGINES && ticked) ||
           (t->peers == TKB_TP_EXACT_ENGINES && !ticked);
}

/* Adds target t for peer p to out[*k] (when there is room). */
static void add_row(tkb_target_row *out, size_t cap, size_t *k, const tkb_target *t,
                    const tkb_peer *p) {
    if (*k < cap) {
        tkb_target_row *r = &out[*k];
        r->t = t;
        if (t->variant != NULL)
            snprintf(r->row, sizeof r->row, "%s_%s", t->workload->name, t->variant);
        else if (t->instance != NULL)
            snprintf(r->row, sizeof r->row, "%s:%s", t->workload->name, t->instance);
        else
            snprintf(r->row, sizeof r->row, "%s", t->workload->name);
        snprintf(r->peer, sizeof r->peer, "%s", p->spec);
        snprintf(r->ref, sizeof r->ref, "%s",
                 t->ref != NULL     ? t->ref
                 : t->ref_unslacked ? p->base
                                    : "");
        r->bound = t->bound;
        int64_t precision = tkb_peer_precision_ns(p);
        if (t->bound_window) /* ns to us; a precision it cannot read counts as 0 */
            r->bound += (double)(p->slack_ns + (precision > 0 ? precision : 0)) / 1000.0;
        const char *at = strstr(t->what, "%s"); /* the peer's label in place of "%s" */
        if (at == NULL)
            snprintf(r->what, sizeof r->what, "%s", t->what);
        else
            snprintf(r->what, sizeof r->what, "%.*s%s%.80s", (int)(at - t->what), t->what, p->label,
                     at + 2);
    }
    (*k)++;
}

size_t tkb_targets_expand(tkb_target_row *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < tkb_target_count; i++) {
        const tkb_target *t = &tkb_targets[i];
        tkb_peer p;
        if (t->peers == TKB_TP_SPEC) {
            if (tkb_peer_parse(t->spec, &p, NULL, 0) != 0) { /* not built: named as written */
                memset(&p, 0, sizeof p);
                snprintf(p.spec, sizeof p.spec, "%s", t->spec);
                snprintf(p.label, sizeof p.label, "%s", t->spec);
            }
            add_row(out, cap, &k, t, &p);
            continue;
        }
        if (t->workload->frontier) { /* the frontier's lines, each at the target's slack */
            tkb_peer bases[64], q;
            size_t nb = tkb_frontier_bases(bases, TKB_COUNT(bases));
            for (size_t j = 0; j < nb && j < TKB_COUNT(bases); j++)
                if (names_engine(t, bases[j].engine) && !t->embedded &&
                    (t->slack_ns == 0 ||
                     tkb_peer_with_slack(&bases[j], TKB_SLACK_KEY, t->slack_ns, &q) == 0))
                    add_row(out, cap, &k, t, t->slack_ns > 0 ? &q : &bases[j]);
            continue;
        }
        for (size_t e = 0; e < tk_engine_count(); e++) {
            tkb_peer q;
            if (!names_engine(t, tk_engine_at(e)) ||
                tkb_peer_engine_reference(tk_engine_at(e), t->embedded, &p) != 0 ||
                (t->slack_ns > 0 && tkb_peer_with_slack(&p, TKB_SLACK_KEY, t->slack_ns, &q) != 0))
                continue;
            add_row(out, cap, &k, t, t->slack_ns > 0 ? &q : &p);
        }
    }
    return k;
}

int tkb_targets_min_reps(const tkb_workload *w, const tkb_peer *p, double n, double largest_n) {
    static tkb_target_row rows[256]; /* main thread only (the run's plan) */
    static size_t nrows;
    static bool made;
    if (!made) {
        nrows = tkb_targets_expand(rows, TKB_COUNT(rows));
        nrows = nrows < TKB_COUNT(rows) ? nrows : TKB_COUNT(rows);
        made = true;
    }
    int reps = 0;
    for (size_t i = 0; i < nrows; i++) {
        const tkb_target *t = rows[i].t;
        bool at = t->n > 0 ? n == t->n || (t->ref_n > 0 && n == t->ref_n) : n == largest_n;
        bool peer = strcmp(rows[i].peer, p->spec) == 0 || strcmp(rows[i].ref, p->spec) == 0;
        if (t->workload == w && at && peer && t->min_reps > reps)
            reps = t->min_reps;
    }
    return reps;
}
