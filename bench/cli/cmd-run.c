/* SPDX-License-Identifier: MIT */
/* tkbench: the benchmark CLI.
 *
 *   tkbench list [--names]
 *   tkbench run [--suite smoke|quick|full] [--workloads NAME|GROUP,...]
 *               [--peers heap,wheel:tick=1ms,slots=1024,...] [--n 1000,100000]
 *               [--reps K] [--timer-slack NS] [--trace FILE,...] [--step DUR] [--out DIR]
 *   tkbench replay TRACE... [--peers SPECS] [--level core|executor|all] [--step DUR]
 *                  [--speed X] [--reps K] [--out DIR]
 *   tkbench advise TRACE [--results DIR] [--need lateness=DUR|memory=SIZE|cpu=PCT]
 *                  [--criterion cost|lateness|memory] [--reps K] [--hz N]
 *   tkbench plot DIR
 *   tkbench compare [--out OUTDIR] DIR_A DIR_B...
 *   tkbench manifest [--force] DIR
 *   tkbench trace convert IN OUT [--hz N] [--functions GLOB,...] [--cpus LIST]
 *                         [--class wheel|hrtimer|all]
 *   tkbench trace stats TRACE [--out DIR] [the options of convert]
 *   tkbench help [COMMAND], tkbench COMMAND --help, tkbench --version
 *
 * Each subcommand is a descriptor (cmdline.h) with its option table, from
 * which getopt_long() parses it and its --help is printed; options take a
 * value as --name VALUE or --name=VALUE, before or after the arguments.
 * A run registers one Google Benchmark per (workload, peer, parameter),
 * runs them with --benchmark_out=DIR/raw/gbench.json, then turns that JSON
 * into DIR/results.csv and writes DIR/manifest.json and the metadata
 * (docs/results-format.md). Progress goes to stderr, results to files; the
 * headline tables and the folder path go to stdout at the end. `plot` and
 * `compare` run the renderer, plots/render.py. Exit status: 0 ok, 1 run
 * failure, 2 usage error (unknown option, workload, peer or parameter, a bad
 * value, a missing argument). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "advise/advise.h"
#include "cli/cmdline.h"
#include "datadir.h"
#include "output/output.h"
#include "replay/replay.h"
#include "trace/trace-stats.h"
#include "util.h"

#ifndef TK_SOURCE_DIR
#define TK_SOURCE_DIR "."
#endif

tkb_run tkb_the_run;

#define MAX_CASES 4096
#define MAX_PEERS 64

/* A usage error of subcommand cmd: says it (tkb_usage()) and exits with
 * status 2. For checks deep in a run, where returning the status up would
 * only add noise. */
static void die_usage(const tkb_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void die_usage(const tkb_cmd *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tkb_vusage(cmd, fmt, ap);
    va_end(ap);
    exit(2);
}

static bool is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

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

static void fmt_secs(char *buf, size_t len, double s) {
    if (s < 90)
        snprintf(buf, len, "%.0fs", s);
    else
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
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
    fmt_secs(el, sizeof el, (double)(now - g_progress.run_start_ns) / 1e9);
    fmt_secs(lf, sizeof lf, left);
    snprintf(nbuf, sizeof nbuf, "%.10g", c->n);
    fprintf(stderr, "[%zu/%zu] %s %s n=%s%s%s ... elapsed %s, ~%s left\n", idx + 1,
            g_progress.ncases, c->row, c->peer->label, nbuf, c->time_metric ? " " : "",
            c->time_metric ? c->time_metric : "", el, lf);
    fflush(stderr);
}

static void case_body(tk_gb_state *st, void *ctx) {
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

/* Writes hist/<row>.<peer file>.hgrm from the histogram a case accumulated
 * over its repetitions. */
static void write_hgrm(const tkb_case *c, const tkb_hist *h) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/hist/%s.%s.hgrm", tkb_the_run.out_dir, c->row, c->peer->file);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "tkbench: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    tkb_hist_write_hgrm(h, f);
    fclose(f);
}

/* ---- descriptors ------------------------------------------------------------- */
/* A descriptor that cannot work is a bug in its file: say what, at start. */
static bool workloads_valid(void) {
    bool ok = true;
    for (size_t i = 0; i < tkb_workload_count; i++) {
        const tkb_workload *w = tkb_workloads[i];
        const char *bad = NULL;
        char what[160] = "";
        if (w->name == NULL || w->group == NULL || w->summary == NULL || w->cases == NULL ||
            w->x.label == NULL || w->x.shortname == NULL || w->nmetrics == 0)
            bad =
                "needs a name, group, summary, x label and short name, metrics and a case builder";
        for (size_t j = 0; bad == NULL && j < i; j++)
            if (strcmp(tkb_workloads[j]->name, w->name) == 0)
                bad = "has the name of another workload";
        for (size_t k = 0; bad == NULL && k < w->nmetrics; k++) {
            const tkb_metric *m = &w->metrics[k];
            snprintf(what, sizeof what, "%s", m->name ? m->name : "(null)");
            if (m->name == NULL || m->label == NULL || m->unit == NULL)
                bad = "metric needs a name, a unit and a label";
            else if (tkb_unit_find(m->unit) == NULL)
                bad = "metric has an unknown unit (see tkb_units in results.c)";
            else if (m->head.block != 0 && m->head.head == NULL)
                bad = "metric is in the headline without a column header";
        }
        for (size_t f = 0; bad == NULL && f < w->nfigures; f++) {
            const tkb_figure *fig = &w->figures[f];
            for (const char *s = fig->metrics; bad == NULL && s != NULL && *s;) {
                size_t l = strcspn(s, ",");
                snprintf(what, sizeof what, "%.*s", (int)l, s);
                if (tkb_metric_find(w, what) == NULL)
                    bad = "figure names a metric the workload does not declare";
                s += l + (s[l] == ',');
            }
            for (size_t r = 0; bad == NULL && r < TKB_COUNT(fig->refs); r++)
                if (fig->refs[r].workload != NULL &&
                    tkb_metric_find(fig->refs[r].workload, fig->refs[r].metric) == NULL) {
                    snprintf(what, sizeof what, "%s", fig->refs[r].metric);
                    bad = "figure refers to a metric its reference workload does not declare";
                }
        }
        for (int s = 0; bad == NULL && s < TKB_NSUITES; s++)
            if (w->plan[s].reps < 1)
                bad = "plan of a suite has no repetitions";
        if (bad != NULL) {
            fprintf(stderr, "tkbench: workload descriptor %s%s%s: %s\n",
                    w->name ? w->name : "(unnamed)", what[0] ? " " : "", what, bad);
            ok = false;
        }
    }
    return ok;
}

/* ---- list ---------------------------------------------------------------------- */
static const char *level_name(tkb_level l) {
    return l == TKB_LEVEL_MACHINE ? "machine" : l == TKB_LEVEL_CORE ? "core" : "executor";
}

static const tkb_opt list_opts[] = {
    {"names", NULL, "only the workloads' names, one a line", 0},
};

static int cmd_list(const tkb_cmd *cmd, int argc, char **argv) {
    bool names = false;
    tkb_args a;
    tkb_args_start(&a, cmd, argc, argv);
    const char *arg;
    for (int k; (k = tkb_args_next(&a, &arg)) != TKB_ARGS_END;)
        switch (k) {
        case TKB_ARGS_HELP:
            return 0;
        case TKB_ARGS_BAD:
            return 2;
        case TKB_ARGS_POS:
            return tkb_usage(cmd, "unexpected argument '%s'", arg);
        default: /* --names */
            names = true;
        }
    if (names) { /* one workload name a line */
        for (size_t i = 0; i < tkb_workload_count; i++)
            printf("%s\n", tkb_workloads[i]->name);
        return 0;
    }
    printf("workloads (--workloads takes names or groups):\n");
    for (size_t i = 0; i < tkb_workload_count; i++) {
        const tkb_workload *w = tkb_workloads[i];
        printf("  %-16s %-6s %-9s %s\n", w->name, w->group, level_name(w->level), w->summary);
        printf("  %-16s metrics:", "");
        for (size_t k = 0; k < w->nmetrics; k++)
            printf("%s %s", k ? "," : "", w->metrics[k].name);
        printf("\n");
        for (int su = 0; su < TKB_NSUITES; su++) {
            const tkb_plan *pl = &w->plan[su];
            printf("  %-16s %-5s:", "", tkb_suites[su].name);
            for (size_t k = 0; k < TKB_COUNT(pl->sizes) && pl->sizes[k] != 0; k++)
                printf("%s%zu", k ? "," : " n ", pl->sizes[k]);
            printf("%s%d rep%s", pl->sizes[0] != 0 ? "; " : " ", pl->reps,
                   pl->reps == 1 ? "" : "s");
            if (pl->reps_long != 0 && pl->reps_long != pl->reps)
                printf(" (%d of its real-time cases)", pl->reps_long);
            if (pl->count != 0)
                printf("; count %zu", pl->count);
            if (pl->seconds > 0)
                printf("; %g s", pl->seconds);
            printf("\n");
        }
        if (w->nvariants > 0) {
            printf("  %-16s variants (rows %s_<variant>):", "", w->name);
            for (size_t v = 0; v < w->nvariants; v++)
                printf("%s %s", v ? "," : "", w->variants[v]);
            printf("\n");
        }
    }
    tkb_peer_list(stdout);
    printf("suites:\n");
    for (int s = 0; s < TKB_NSUITES; s++)
        printf("  %-6s %s\n", tkb_suites[s].name, tkb_suites[s].summary);
    return 0;
}

/* ---- run -------------------------------------------------------------------------- */
/* Calls fn(item, ctx) for each item of a comma-separated list, splitting at
 * commas that start a new item: a peer spec has commas of its own
 * (wheel:tick=1ms,slots=1024), so a piece holding '=' but no ':' continues
 * the spec before it. */
static void for_each_item(const char *list, bool specs, void (*fn)(const char *, void *),
                          void *ctx) {
    char *buf = strdup(list);
    if (buf == NULL) {
        fprintf(stderr, "tkbench: out of memory\n");
        exit(1);
    }
    char item[TKB_SPEC_MAX * 2] = "";
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        bool continues = specs && item[0] != '\0' && strchr(tok, '=') != NULL &&
                         strchr(tok, ':') == NULL && strchr(item, ':') != NULL;
        if (continues) {
            size_t l = strlen(item);
            snprintf(item + l, sizeof item - l, ",%s", tok);
            continue;
        }
        if (item[0] != '\0')
            fn(item, ctx);
        snprintf(item, sizeof item, "%s", tok);
    }
    if (item[0] != '\0')
        fn(item, ctx);
    free(buf);
}

typedef struct run_opts {
    const tkb_cmd *cmd; /* run or replay: the usage errors name it */
    tkb_selected works[64];
    size_t nworks;
    bool want[64]; /* workloads asked for, by table index */
    tkb_peer peers[MAX_PEERS];
    size_t npeers;
} run_opts;

static void want_workload(const char *name, void *ctx) {
    run_opts *o = ctx;
    bool found = false;
    for (size_t i = 0; i < tkb_workload_count; i++)
        if (strcmp(tkb_workloads[i]->name, name) == 0 ||
            strcmp(tkb_workloads[i]->group, name) == 0) {
            o->want[i] = true;
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
    die_usage(o->cmd, "unknown workload '%s'; known:%s; groups:%s", name, known, groups);
}

/* Adds the peer `spec` names. A bad spec ends the run (status 2), except
 * that a suite's spec naming an engine this build lacks (suite: true) is
 * left out and listed in `skipped` (its length skipped_len). */
static void add_peer(run_opts *o, const char *spec, bool waiting_only, bool suite, char *skipped,
                     size_t skipped_len) {
    tkb_peer p;
    char err[1024];
    int rc = tkb_peer_parse(spec, &p, err, sizeof err);
    if (rc == TKB_PEER_UNKNOWN && suite) {
        size_t k = strlen(skipped);
        snprintf(skipped + k, skipped_len - k, "%s%s", k ? ", " : "", spec);
        return;
    }
    if (rc != 0)
        die_usage(o->cmd, "%s", err);
    p.waiting_only = waiting_only;
    for (size_t i = 0; i < o->npeers; i++)
        if (strcmp(o->peers[i].spec, p.spec) == 0) {
            fprintf(stderr, "tkbench: note: '%s' is %s again; it runs once\n", spec, p.spec);
            return;
        }
    if (o->npeers == MAX_PEERS)
        die_usage(o->cmd, "--peers: at most %d peers", MAX_PEERS);
    o->peers[o->npeers++] = p;
}

static void want_peer(const char *spec, void *ctx) {
    add_peer(ctx, spec, false, false, NULL, 0);
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
        die_usage(z->cmd, "--n: '%s' is not a population in 1..1e8", s);
    if (z->n == TKB_COUNT(z->v) - 1)
        die_usage(z->cmd, "--n: at most %zu populations", TKB_COUNT(z->v) - 1);
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

/* What a run was asked for: `tkbench run`'s options, or what `tkbench
 * replay` makes of its own. */
typedef struct run_req {
    const tkb_cmd *cmd; /* run or replay */
    const char *suite, *out, *wl, *pl, *nl;
    int reps;
    long long slack;
    char *traces[64]; /* replay: trace files (or synth:EVENTS[:TIMERS]), owned */
    size_t ntraces;
    int64_t step_ns;       /* replay: 0 = the default */
    double speed;          /* replay, executor level: 0 = 1 */
    int64_t perturb;       /* replay: hidden test option (-1: off) */
    const char *run_label; /* the suite name metadata records; NULL: suite or custom */
    const char *level;     /* replay: keep the replays at this level ("core", "executor");
                              NULL: all */
} run_req;

/* Adds a trace (a copy: for_each_item() reuses its buffer). */
static void want_trace(const char *path, void *ctx) {
    run_req *r = ctx;
    if (r->ntraces == TKB_COUNT(r->traces))
        die_usage(r->cmd, "at most %zu traces", TKB_COUNT(r->traces));
    char *copy = strdup(path);
    if (copy == NULL) {
        fprintf(stderr, "tkbench: out of memory\n");
        exit(1);
    }
    r->traces[r->ntraces++] = copy;
}

/* The options of run and replay: one table, each option in the commands
 * its `in` names (IN_RUN, IN_REPLAY; 0: both). */
enum { IN_RUN = 1u, IN_REPLAY = 2u };
enum {
    RO_SUITE,
    RO_WORKLOADS,
    RO_PEERS,
    RO_N,
    RO_REPS,
    RO_TIMER_SLACK,
    RO_TRACE,
    RO_LEVEL,
    RO_STEP,
    RO_SPEED,
    RO_OUT,
    RO_PERTURB,
};
static const tkb_opt run_opts_table[] = {
    [RO_SUITE] = {"suite", "NAME", "smoke, quick or full: sizes and repetitions (default quick)",
                  0},
    [RO_WORKLOADS] = {"workloads", "NAME,...",
                      "the workloads to run, by name or group (default: all of the suite)", IN_RUN},
    [RO_PEERS] = {"peers", "SPEC,...",
                  "the peers to run (default: the suites' peers and every engine)", 0},
    [RO_N] = {"n", "N,...", "populations of the workloads measured at several N (1..1e8)", IN_RUN},
    [RO_REPS] = {"reps", "K", "repetitions of every benchmark, 1..1000 (default: the suite's)", 0},
    [RO_TIMER_SLACK] = {"timer-slack", "NS",
                        "timer slack of the timer threads, ns (default 1; -1: leave it)", 0},
    [RO_TRACE] = {"trace", "TRACE,...", "the traces the replay workloads replay", IN_RUN},
    [RO_LEVEL] = {"level", "LEVEL", "core, executor or all: the replays to run (default core)",
                  IN_REPLAY},
    [RO_STEP] = {"step", "DUR",
                 "a replay's expiry grid, a multiple of every ticked peer's tick (default 1ms)", 0},
    [RO_SPEED] = {"speed", "X", "play the trace X times as fast at executor level (default 1)",
                  IN_REPLAY},
    [RO_OUT] = {"out", "DIR", "the results folder (default: a new one in results/)", 0},
    /* tests: records expiry number K one step late, to prove the replay's check can fail */
    [RO_PERTURB] = {"_perturb", "K", NULL, IN_REPLAY},
};

#define RUN_DETAILS                                                                                \
    "A peer SPEC is NAME[:key=value,...][@embedded]: heap, heap:spin=150us,\n"                     \
    "wheel:tick=1ms,slots=1024, heap@embedded, libuv (tkbench list shows them all).\n"             \
    "A TRACE is a trace file (docs/traces.md) or synth:EVENTS[:TIMERS], a synthetic one.\n"        \
    "Durations take a unit: 1ms, 100us, 250ns.\n"

/* Takes option k of run or replay, with value v, into r. Returns 0, or 2
 * after a usage error. */
static int run_req_option(run_req *r, int k, const char *v) {
    char *e;
    switch (k) {
    case RO_SUITE:
        r->suite = v;
        break;
    case RO_WORKLOADS:
        r->wl = v;
        break;
    case RO_PEERS:
        r->pl = v;
        break;
    case RO_N:
        r->nl = v;
        break;
    case RO_REPS: {
        long reps = strtol(v, &e, 10);
        if (*v == '\0' || *e || reps < 1 || reps > 1000)
            return tkb_usage(r->cmd, "--reps: expected an integer in 1..1000, got '%s'", v);
        r->reps = (int)reps;
        break;
    }
    case RO_TIMER_SLACK:
        r->slack = strtoll(v, &e, 10);
        if (*v == '\0' || *e || r->slack < -1)
            return tkb_usage(r->cmd,
                             "--timer-slack: expected nanoseconds >= 0 (or -1: leave alone), "
                             "got '%s'",
                             v);
        break;
    case RO_TRACE:
        for_each_item(v, false, want_trace, r);
        break;
    case RO_LEVEL:
        if (strcmp(v, "core") != 0 && strcmp(v, "executor") != 0 && strcmp(v, "all") != 0)
            return tkb_usage(r->cmd, "--level: expected core, executor or all, got '%s'", v);
        r->level = strcmp(v, "all") == 0 ? NULL : v;
        break;
    case RO_STEP:
        if (tkb_parse_duration(v, &r->step_ns) != 0)
            return tkb_usage(
                r->cmd, "--step: expected a duration with its unit (1ms, 100us, 250ns), got '%s'",
                v);
        break;
    case RO_SPEED:
        r->speed = strtod(v, &e);
        if (*v == '\0' || *e || !(r->speed > 0) || r->speed > 1e6)
            return tkb_usage(r->cmd, "--speed: expected a factor > 0 (2: twice as fast), got '%s'",
                             v);
        break;
    case RO_OUT:
        r->out = v;
        break;
    case RO_PERTURB:
        r->perturb = strtoll(v, &e, 10);
        if (*v == '\0' || *e || r->perturb < 0)
            return tkb_usage(r->cmd, "--_perturb: expected an expiry number >= 0, got '%s'", v);
        break;
    default:
        return tkb_usage(r->cmd, "internal: option %d has no meaning", k);
    }
    return 0;
}

/* Parses run's or replay's command line into r: 0, or the exit status
 * (-1 for the help: exit 0). Positional arguments are traces (replay). */
static int run_req_parse(run_req *r, int argc, char **argv) {
    tkb_args a;
    tkb_args_start(&a, r->cmd, argc, argv);
    const char *v;
    for (int k; (k = tkb_args_next(&a, &v)) != TKB_ARGS_END;) {
        if (k == TKB_ARGS_HELP)
            return -1;
        if (k == TKB_ARGS_BAD)
            return 2;
        if (k == TKB_ARGS_POS && r->cmd->bit == IN_RUN)
            return tkb_usage(r->cmd, "unexpected argument '%s' (traces go in --trace)", v);
        if (k == TKB_ARGS_POS)
            want_trace(v, r);
        else if (run_req_option(r, k, v) != 0)
            return 2;
    }
    return 0;
}

static int run_req_exec(run_req *r, int argc, char **argv);

/* Frees what run_req_parse() kept. */
static void run_req_free(run_req *r) {
    for (size_t i = 0; i < r->ntraces; i++)
        free(r->traces[i]);
    r->ntraces = 0;
}

static int cmd_run(const tkb_cmd *cmd, int argc, char **argv) {
    run_req r = {.cmd = cmd, .suite = "quick", .slack = -2, .perturb = -1};
    int rc = run_req_parse(&r, argc, argv);
    if (rc != 0) {
        run_req_free(&r);
        return rc < 0 ? 0 : rc;
    }
    return run_req_exec(&r, argc, argv);
}

static int cmd_replay(const tkb_cmd *cmd, int argc, char **argv) {
    run_req r = {.cmd = cmd,
                 .suite = "quick",
                 .slack = -2,
                 .perturb = -1,
                 .run_label = "replay",
                 .level = "core"};
    int rc = run_req_parse(&r, argc, argv);
    if (rc == 0 && r.ntraces == 0)
        rc = tkb_usage(cmd, "which trace? (a trace file, or synth:EVENTS[:TIMERS])");
    if (rc != 0) {
        run_req_free(&r);
        return rc < 0 ? 0 : rc;
    }
    r.wl = "replay"; /* the group of every replay workload */
    return run_req_exec(&r, argc, argv);
}

/* Does the run replay (a selected workload with a row per trace)? */
static bool replays(const run_opts *o) {
    for (size_t k = 0; k < o->nworks; k++)
        if (o->works[k].wl->instance_rows)
            return true;
    return false;
}

/* Takes the replay out of the run (a suite run whose trace is absent). */
static void drop_replay(run_opts *o) {
    size_t j = 0;
    for (size_t k = 0; k < o->nworks; k++)
        if (!o->works[k].wl->instance_rows)
            o->works[j++] = o->works[k];
    o->nworks = j;
}

static int run_req_run(run_req *r, int argc, char **argv) {
    const char *suite = r->suite, *out = r->out, *wl = r->wl, *pl = r->pl, *nl = r->nl;
    int reps = r->reps;
    long long slack = r->slack;
    int sid = tkb_suite_find(suite);
    if (sid < 0) {
        char known[256];
        size_t k = 0;
        known[0] = '\0';
        for (int s = 0; s < TKB_NSUITES; s++)
            k += (size_t)snprintf(known + k, k < sizeof known ? sizeof known - k : 0, " %s",
                                  tkb_suites[s].name);
        return tkb_usage(r->cmd, "unknown suite '%s'; known:%s", suite, known);
    }
    tkb_the_run.suite = &tkb_suites[sid];
    tkb_the_run.timer_slack_ns = slack >= -1 ? slack : 1;
    bool custom = wl || pl || nl || reps || slack >= -1 || r->ntraces > 0 || r->step_ns > 0;

    /* The run's selection and its cases: too large for the stack, and there is
     * one run per process (main() calls cmd_run() once), so they live here. */
    static run_opts o;
    o.cmd = r->cmd;
    if (wl != NULL)
        for_each_item(wl, false, want_workload, &o);
    sizes z = {.cmd = r->cmd};
    if (nl != NULL) {
        for_each_item(nl, false, want_size, &z);
        if (z.n == 0)
            die_usage(r->cmd, "--n: expected a comma-separated list of populations");
    }
    for (size_t i = 0; i < tkb_workload_count; i++) {
        if (wl != NULL && !o.want[i])
            continue;
        tkb_selected *s = &o.works[o.nworks++];
        s->wl = tkb_workloads[i];
        s->plan = s->wl->plan[sid];
        if (s->plan.reps_long == 0)
            s->plan.reps_long = s->plan.reps;
        if (reps)
            s->plan.reps = s->plan.reps_long = reps;
        if (z.n > 0 && s->wl->sizes_from_n)
            memcpy(s->plan.sizes, z.v, sizeof s->plan.sizes);
    }
    qsort(o.works, o.nworks, sizeof o.works[0], by_level);
    if (r->level != NULL) { /* tkbench replay --level: the replays of that level */
        size_t j = 0;
        for (size_t k = 0; k < o.nworks; k++)
            if (!o.works[k].wl->instance_rows ||
                strcmp(level_name(o.works[k].wl->level), r->level) == 0)
                o.works[j++] = o.works[k];
        o.nworks = j;
        if (!replays(&o))
            die_usage(r->cmd, "--level %s: this tkbench has no replay at that level", r->level);
    }

    /* the traces a replay runs: --trace, or the suite's own */
    static tkb_replay_set rs;
    if (r->ntraces > 0 && !replays(&o))
        die_usage(r->cmd,
                  "--trace: none of the selected workloads replays a trace (add --workloads "
                  "replay)");
    if (replays(&o)) {
        char def[PATH_MAX] = "";
        if (r->ntraces == 0 && tkb_the_run.suite->replay_trace != NULL) {
            snprintf(def, sizeof def, "%s/%s", tkb_data_dir(), tkb_the_run.suite->replay_trace);
            if (access(def, R_OK) == 0)
                want_trace(def, r);
            else if (wl == NULL)
                fprintf(stderr, "tkbench: note: no trace %s: the replay is skipped\n", def);
        }
        if (r->ntraces == 0 && wl != NULL)
            die_usage(r->cmd,
                      "the replay needs a trace: --trace FILE (or synth:EVENTS[:TIMERS])%s%s%s",
                      def[0] ? "; the suite's trace " : "", def, def[0] ? " is not there" : "");
        if (r->ntraces == 0) {
            drop_replay(&o);
        } else {
            int rc = tkb_replay_set_open(&rs, (const char *const *)r->traces, r->ntraces,
                                         r->step_ns > 0 ? r->step_ns : TKB_REPLAY_STEP_DEFAULT);
            if (rc != 0) {
                tkb_replay_set_close(&rs);
                return rc;
            }
            rs.speed = r->speed > 0 ? r->speed : 1;
            rs.perturb = r->perturb;
            tkb_the_run.replay = &rs;
        }
    }

    if (pl != NULL)
        for_each_item(pl, true, want_peer, &o);
    else {
        char skipped[512] = "";
        for (size_t i = 0; i < tkb_suite_peer_count; i++)
            add_peer(&o, tkb_suite_peers[i].spec, tkb_suite_peers[i].waiting_only, true, skipped,
                     sizeof skipped);
        /* every other registered engine, at its defaults, with tasks and embedded timers */
        for (size_t e = 0; e < tk_engine_count(); e++) {
            const tk_queue_ops *ops = tk_engine_at(e);
            bool named = false;
            for (size_t i = 0; i < o.npeers && !named; i++)
                named = o.peers[i].engine == ops;
            if (named)
                continue;
            char spec[TKB_SPEC_MAX];
            add_peer(&o, ops->name, false, true, skipped, sizeof skipped);
            snprintf(spec, sizeof spec, "%s@embedded", ops->name);
            add_peer(&o, spec, false, true, skipped, sizeof skipped);
        }
        if (skipped[0] != '\0')
            fprintf(stderr, "tkbench: note: no such engine in this build, skipped: %s\n", skipped);
    }
    tkb_peer_arrange(o.peers, o.npeers);
    /* A peer named for a replay must be on its grid: say why not, and stop. */
    for (size_t j = 0; tkb_the_run.replay != NULL && pl != NULL && j < o.npeers; j++) {
        char err[512];
        const tkb_peer *p = &o.peers[j];
        if (p->core != NULL && p->core->expire_at != NULL &&
            !tkb_replay_core_fits(p, tkb_the_run.replay->step_ns, err, sizeof err)) {
            tkb_replay_set_close(&rs);
            tkb_the_run.replay = NULL;
            return tkb_usage(r->cmd, "%s", err);
        }
        if (p->core == NULL || p->core->expire_at == NULL)
            fprintf(stderr, "tkbench: note: %s has no core-level replay%s\n", p->spec,
                    p->core != NULL ? " (no faithful partial expiry in virtual time, "
                                      "docs/replay.md)"
                                    : "");
    }

    /* cases (static: see run_opts above) */
    static tkb_case cases[MAX_CASES];
    size_t ncases = 0;
    for (size_t k = 0; k < o.nworks; k++)
        for (size_t j = 0; j < o.npeers; j++) {
            const tkb_peer *p = &o.peers[j];
            if (p->waiting_only && !o.works[k].wl->waiting)
                continue;
            ncases += p->jvm ? tkb_jvm_cases(o.works[k].wl, &o.works[k].plan, p, cases + ncases,
                                             MAX_CASES - ncases)
                             : o.works[k].wl->cases(o.works[k].wl, &o.works[k].plan, p,
                                                    cases + ncases, MAX_CASES - ncases);
        }
    for (size_t j = 0; j < o.npeers; j++)
        if (o.peers[j].missing)
            fprintf(stderr, "tkbench: note: %s: %s\n", o.peers[j].spec, o.peers[j].missing);
    if (ncases == 0)
        die_usage(r->cmd, "nothing to run: no selected peer runs the selected workloads");
    if (ncases == MAX_CASES)
        die_usage(r->cmd,
                  "too many benchmarks (more than %d): select fewer workloads, peers or sizes",
                  MAX_CASES);

    /* output folder */
    char outbuf[256];
    if (out == NULL) {
        char stamp[64];
        time_t t = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&t));
        snprintf(outbuf, sizeof outbuf, "results/%s-%s", stamp,
                 r->run_label ? r->run_label
                 : custom     ? "custom"
                              : suite);
        out = outbuf;
    }
    if (strlen(out) > PATH_MAX - 64)
        die_usage(r->cmd, "--out: path too long");
    tkb_the_run.out_dir = out;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/raw", out);
    if (tkb_mkdir_p(path) != 0) {
        fprintf(stderr, "tkbench: cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/hist", out);
    tkb_mkdir_p(path);
    const char *suite_name = r->run_label ? r->run_label : custom ? "custom" : suite;
    json_t *meta =
        tkb_metadata_build(suite_name, o.works, o.nworks, o.peers, o.npeers, argc, argv, NULL);
    tkb_metadata_write(out, meta);
    json_decref(meta);

    /* Keep freed memory in the process (blocks under 32 MB from the heap, no
     * trimming): a later repetition reuses warm pages, as a long-running
     * program does, instead of paying first-touch faults inside timed loops. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);

    /* register and run */
    double est = 0;
    for (size_t i = 0; i < ncases; i++) {
        tkb_case *c = &cases[i];
        est += c->est_seconds;
        tk_gb_bench *b = tk_gb_register(c->name, case_body, c);
        if (b == NULL) {
            fprintf(stderr, "tkbench: cannot register %s\n", c->name);
            return 1;
        }
        if (c->time_metric) {
            if (c->iterations > 0)
                tk_gb_iterations(b, c->iterations);
            else
                tk_gb_min_time(b, tkb_the_run.suite->min_time);
        } else {
            tk_gb_iterations(b, 1);
            tk_gb_manual_time(b);
        }
        if (c->reps > 1)
            tk_gb_repetitions(b, c->reps);
    }
    char est_s[32];
    fmt_secs(est_s, sizeof est_s, est);
    fprintf(stderr,
            "tkbench: suite %s: %zu benchmarks, %zu workloads x %zu peers, estimated %s; "
            "writing %s\n",
            suite_name, ncases, o.nworks, o.npeers, est_s, out);
    char gbout[PATH_MAX + 32];
    snprintf(gbout, sizeof gbout, "--benchmark_out=%s/raw/gbench.json", out);
    char *gargv[] = {argv[0], gbout, "--benchmark_out_format=json", NULL};
    g_progress.cases = cases;
    g_progress.ncases = ncases;
    g_progress.run_start_ns = tkb_now_ns();
    int ran = tk_gb_run(3, gargv);
    double wall = (double)(tkb_now_ns() - g_progress.run_start_ns) / 1e9;
    if (ran < 0) {
        fprintf(stderr, "tkbench: Google Benchmark rejected its arguments\n");
        return 1;
    }
    for (size_t i = 0; i < ncases; i++)
        if (cases[i].hist != NULL && cases[i].started)
            write_hgrm(&cases[i], cases[i].hist);

    /* results */
    int errors = 0;
    tkb_rows rows = {0};
    json_t *context = NULL;
    snprintf(path, sizeof path, "%s/raw/gbench.json", out);
    if (tkb_results_collect(path, cases, ncases, &rows, &errors, &context) != 0)
        return 1;
    snprintf(path, sizeof path, "%s/results.csv", out);
    if (tkb_results_write_csv(path, &rows) != 0) {
        fprintf(stderr, "tkbench: cannot write %s\n", path);
        return 1;
    }
    if (tkb_manifest_write_run(out, o.works, o.nworks, o.peers, o.npeers, cases, ncases) != 0)
        return 1;
    /* each replayed trace's shape (population over time, delays) beside its results, in
       traces/<name>/: the report shows it next to the replay's figures */
    for (size_t i = 0; tkb_the_run.replay != NULL && i < tkb_the_run.replay->count; i++) {
        const tkt_trace *t = &tkb_the_run.replay->traces[i].trace;
        snprintf(path, sizeof path, "%s/traces/%s", out, t->name);
        if (tkb_trace_stats_write(t, path) != 0)
            errors++;
    }
    meta =
        tkb_metadata_build(suite_name, o.works, o.nworks, o.peers, o.npeers, argc, argv, context);
    json_object_set_new(meta, "wall_seconds", json_real(round(wall * 10) / 10));
    json_object_set_new(meta, "failed_benchmarks", json_integer(errors));
    tkb_metadata_write(out, meta);
    json_decref(meta);
    json_decref(context);

    tkb_results_headline(&rows, o.peers, o.npeers);
    char w[32];
    fmt_secs(w, sizeof w, wall);
    printf("\n%zu benchmarks, %zu rows, %d failed, wall %s\nresults: %s\n", ncases, rows.n, errors,
           w, out);
    tkb_rows_free(&rows);
    for (size_t i = 0; i < ncases; i++)
        if (cases[i].hist != NULL) {
            tkb_hist_destroy(cases[i].hist);
            free(cases[i].hist);
        }
    tkb_jvm_cases_free(cases, ncases);
    tkb_the_run.replay = NULL;
    tkb_replay_set_close(&rs);
    return errors ? 1 : 0;
}

/* Runs what r asks for, then frees its traces' names. */
static int run_req_exec(run_req *r, int argc, char **argv) {
    int rc = run_req_run(r, argc, argv);
    run_req_free(r);
    return rc;
}

/* ---- plot / compare / manifest ----------------------------------------------------- */
/* Writes a manifest into a folder an older tkbench wrote without one. */
static int ensure_manifest(const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (access(path, F_OK) == 0)
        return 0;
    fprintf(stderr, "tkbench: %s has no manifest.json (an older tkbench wrote it): writing one\n",
            dir);
    return tkb_manifest_synthesize(dir, false);
}

/* Runs plots/render.py of the data folder (datadir.h: the installed tree, or
 * the source tree this tkbench was built from), with Debian's python3 where
 * it is (/usr/bin/python3), else python3 from PATH. */
static int run_renderer(char **args) {
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/plots/render.py", tkb_data_dir());
    if (access(script, R_OK) != 0) {
        fprintf(stderr,
                "tkbench: %s not found (%s). The renderer lives in plots/ of the source tree "
                "or of the installed share/timerkit (TKBENCH_DATA_DIR names another).\n",
                script, strerror(errno));
        return 1;
    }
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char *argv2[72];
    int k = 0;
    argv2[k++] = (char *)py;
    argv2[k++] = script;
    for (int i = 0; args[i] && k < 71; i++)
        argv2[k++] = args[i];
    argv2[k] = NULL;
    fflush(NULL);
    execvp(py, argv2);
    fprintf(stderr, "tkbench: cannot run %s: %s (Debian: apt-get install python3)\n", py,
            strerror(errno));
    return 1;
}

static int cmd_plot(const tkb_cmd *cmd, int argc, char **argv) {
    const char *dir = NULL;
    tkb_args a;
    tkb_args_start(&a, cmd, argc, argv);
    const char *v;
    for (int k; (k = tkb_args_next(&a, &v)) != TKB_ARGS_END;) {
        if (k == TKB_ARGS_HELP)
            return 0;
        if (k == TKB_ARGS_BAD)
            return 2;
        if (dir != NULL) /* TKB_ARGS_POS: plot has no options of its own */
            return tkb_usage(cmd, "one folder at a time ('%s' and '%s')", dir, v);
        dir = v;
    }
    if (dir == NULL)
        return tkb_usage(cmd, "which results folder?");
    if (!is_dir(dir))
        return tkb_usage(cmd, "'%s' is not a results folder", dir);
    int rc = ensure_manifest(dir);
    if (rc != 0)
        return rc;
    char *args[] = {"render", (char *)dir, NULL};
    return run_renderer(args);
}

static const tkb_opt compare_opts[] = {
    {"out", "OUTDIR", "the comparison's folder (default results/compare-<date>)", 0},
};

static int cmd_compare(const tkb_cmd *cmd, int argc, char **argv) {
    const char *outdir = NULL;
    char *args[68];
    int k = 2;
    tkb_args a;
    tkb_args_start(&a, cmd, argc, argv);
    const char *v;
    for (int o; (o = tkb_args_next(&a, &v)) != TKB_ARGS_END;) {
        if (o == TKB_ARGS_HELP)
            return 0;
        if (o == TKB_ARGS_BAD)
            return 2;
        if (o != TKB_ARGS_POS) { /* --out */
            outdir = v;
            continue;
        }
        if (k == 66)
            return tkb_usage(cmd, "at most %d folders", 64);
        args[k++] = (char *)v;
    }
    if (k < 4)
        return tkb_usage(cmd, "expected two results folders or more, got %d", k - 2);
    for (int i = 2; i < k; i++)
        if (!is_dir(args[i]))
            return tkb_usage(cmd, "'%s' is not a results folder", args[i]);
    for (int i = 2; i < k; i++) {
        int rc = ensure_manifest(args[i]);
        if (rc != 0)
            return rc;
    }
    char buf[PATH_MAX];
    if (outdir == NULL) {
        char stamp[64];
        time_t t = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&t));
        snprintf(buf, sizeof buf, "results/compare-%s", stamp);
        outdir = buf;
    }
    args[0] = "compare";
    args[1] = (char *)outdir;
    args[k] = NULL;
    return run_renderer(args);
}

static const tkb_opt manifest_opts[] = {
    {"force", NULL, "replace a manifest.json that is there", 0},
};

static int cmd_manifest(const tkb_cmd *cmd, int argc, char **argv) {
    bool force = false;
    const char *dir = NULL;
    tkb_args a;
    tkb_args_start(&a, cmd, argc, argv);
    const char *v;
    for (int k; (k = tkb_args_next(&a, &v)) != TKB_ARGS_END;) {
        if (k == TKB_ARGS_HELP)
            return 0;
        if (k == TKB_ARGS_BAD)
            return 2;
        if (k != TKB_ARGS_POS)
            force = true; /* --force */
        else if (dir != NULL)
            return tkb_usage(cmd, "one folder at a time ('%s' and '%s')", dir, v);
        else
            dir = v;
    }
    if (dir == NULL)
        return tkb_usage(cmd, "which folder?");
    if (!is_dir(dir))
        return tkb_usage(cmd, "'%s' is not a folder", dir);
    return tkb_manifest_synthesize(dir, force);
}

/* ---- the subcommands ------------------------------------------------------------------- */

static const tkb_cmd cmd_list_desc = {
    .name = "list",
    .synopsis = "[--names]",
    .summary = "list the workloads, the peers and their parameters, the suites",
    .opts = list_opts,
    .nopts = TKB_COUNT(list_opts),
    .example = "tkbench list\n",
    .main = cmd_list,
};
static const tkb_cmd cmd_run_desc = {
    .name = "run",
    .synopsis = "[options]",
    .summary = "run benchmarks into a results folder, with its figures and report",
    .opts = run_opts_table,
    .nopts = TKB_COUNT(run_opts_table),
    .bit = IN_RUN,
    .details = "A suite runs every workload at its sizes; --workloads, --peers and --n choose.\n"
               "The folder holds results.csv, manifest.json, the metadata, figures/ and\n"
               "report.md (docs/results-format.md). The replay workloads replay --trace on a\n"
               "grid of --step (docs/replay.md).\n" RUN_DETAILS,
    .example = "tkbench run --suite smoke --out results/smoke\n"
               "tkbench run --workloads W3 --peers heap,wheel:tick=2ms,slots=256 --reps 5 "
               "--out DIR\n",
    .main = cmd_run,
};
static const tkb_cmd cmd_replay_desc = {
    .name = "replay",
    .synopsis = "TRACE... [options]",
    .summary = "replay recorded timer traces on the engines and baselines",
    .opts = run_opts_table,
    .nopts = TKB_COUNT(run_opts_table),
    .bit = IN_REPLAY,
    .details = "At core level a replay runs in virtual time and checks every peer against a\n"
               "reference; at executor level it runs in real time (docs/replay.md).\n" RUN_DETAILS,
    .example = "tkbench replay bench/traces/tcp.csv.xz --level all --out DIR\n"
               "tkbench replay synth:3000 --peers heap,wheel:tick=1ms,slots=1024 --reps 2\n",
    .main = cmd_replay,
};
static const tkb_cmd cmd_plot_desc = {
    .name = "plot",
    .synopsis = "DIR",
    .summary = "draw the figures and report.md of a results folder (plots/render.py)",
    .example = "tkbench plot results/20260101-120000-quick\n",
    .main = cmd_plot,
};
static const tkb_cmd cmd_compare_desc = {
    .name = "compare",
    .synopsis = "[--out OUTDIR] DIR_A DIR_B [DIR...]",
    .summary = "compare results folders: ratios with intervals, significant ones marked",
    .opts = compare_opts,
    .nopts = TKB_COUNT(compare_opts),
    .example = "tkbench compare --out results/cmp results/before results/after\n",
    .main = cmd_compare,
};
static const tkb_cmd cmd_manifest_desc = {
    .name = "manifest",
    .synopsis = "[--force] DIR",
    .summary = "write manifest.json into a folder an older tkbench wrote without one",
    .opts = manifest_opts,
    .nopts = TKB_COUNT(manifest_opts),
    .example = "tkbench manifest results/old-run\n",
    .main = cmd_manifest,
};

/* Every subcommand, in the order tkbench help lists them. */
static const tkb_cmd *const commands[] = {
    &cmd_list_desc,     &cmd_run_desc,          &cmd_replay_desc,
    &tkb_cmd_advise,    &cmd_plot_desc,         &cmd_compare_desc,
    &cmd_manifest_desc, &tkb_cmd_trace_convert, &tkb_cmd_trace_stats,
};

int main(int argc, char **argv) {
    if (!workloads_valid())
        return 1;
    if (argc >= 2 && strcmp(argv[1], "_w5") == 0) { /* W5's fresh process, not a command */
        if (argc != 5 && argc != 6)
            return 2;
        return tkb_w5_child(argv[2], (size_t)strtoull(argv[3], NULL, 10),
                            strtoll(argv[4], NULL, 10), argc == 6 ? atoi(argv[5]) : 0);
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("tkbench %s\ndata: %s\n", tk_version_string(), tkb_data_dir());
        return 0;
    }
    return tkb_cmd_dispatch(commands, TKB_COUNT(commands), argc, argv);
}
