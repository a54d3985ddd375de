/* SPDX-License-Identifier: MIT */
/* `tkbench trace convert` and `tkbench trace stats` (docs/traces.md).
 *
 * convert reads perf script text or neutral CSV (told apart by content, see
 * tkt_load_any()) and writes neutral CSV, compressed by the output's
 * extension. stats prints a summary of a trace and writes it with its data
 * into a folder (trace/trace-stats.c), where the renderer draws its two
 * figures (plots/render.py trace: armed timers over time, the CDF of
 * start-to-deadline delays). Exit status: 0 done, 1 an output could not be
 * written or drawn, 2 a usage error or a bad input file ("FILE:LINE: ..."). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "trace/trace-stats.h"

static int cmd_convert(const tkb_cmd *cmd, int argc, char **argv);
static int cmd_stats(const tkb_cmd *cmd, int argc, char **argv);

/* The options of convert and stats: one table; --out is stats' only. */
enum { IN_CONVERT = 1u, IN_STATS = 2u };
enum { TO_HZ, TO_FUNCTIONS, TO_CPUS, TO_CLASS, TO_OUT };
static const tkb_opt trace_opts[] = {
    [TO_HZ] = {"hz", "N", "perf text: jiffies per second, if the trace cannot tell (1..100000)", 0},
    [TO_FUNCTIONS] = {"functions", "GLOB,...", "perf text: keep the timers of these functions", 0},
    [TO_CPUS] = {"cpus", "LIST", "perf text: keep the events of these CPUs (0,2-3)", 0},
    [TO_CLASS] = {"class", "CLASS",
                  "perf text: wheel, hrtimer or all: the timers to keep (default all)", 0},
    [TO_OUT] = {"out", "DIR", "the folder of the data and figures (default results/trace-NAME)",
                IN_STATS},
};

#define TRACE_IN                                                                                   \
    "The trace: perf script text of `perf record -e 'timer:*' -a`, or neutral CSV\n"               \
    "(plain or .gz/.xz/.zst). See docs/traces.md.\n"

const tkb_cmd tkb_cmd_trace_convert = {
    .name = "trace convert",
    .synopsis = "IN OUT [options]",
    .summary = "convert a trace, perf script text or CSV, to neutral CSV",
    .details = TRACE_IN "OUT is compressed if it ends in .gz, .xz or .zst.\n",
    .opts = trace_opts,
    .nopts = sizeof trace_opts / sizeof trace_opts[0],
    .bit = IN_CONVERT,
    .example = "tkbench trace convert timers.perf.txt tcp.csv --functions 'tcp_*' --class wheel\n",
    .main = cmd_convert,
};

const tkb_cmd tkb_cmd_trace_stats = {
    .name = "trace stats",
    .synopsis = "TRACE [options]",
    .summary = "a trace's summary, and its data and figures in a folder",
    .details = TRACE_IN "The figures (drawn by plots/render.py trace): armed timers over time, the "
                        "CDF of\nstart-to-deadline delays.\n",
    .opts = trace_opts,
    .nopts = sizeof trace_opts / sizeof trace_opts[0],
    .bit = IN_STATS,
    .example = "tkbench trace stats timers.perf.txt --out /tmp/t --class hrtimer\n",
    .main = cmd_stats,
};

/* ---- options and loading ----------------------------------------------------------------------
 */

typedef struct opts {
    const char *in, *out, *dir;
    tkt_perf_opts perf;
    bool perf_given; /* any perf-only option */
} opts;

/* Parses convert's or stats' command line into o: 0, or the exit status
 * (-1 for the help: exit 0). */
static int parse_opts(const tkb_cmd *cmd, int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    bool stats = cmd->bit == IN_STATS;
    int npos = 0;
    tkb_args a;
    tkb_args_start(&a, cmd, argc, argv);
    const char *v;
    for (int k; (k = tkb_args_next(&a, &v)) != TKB_ARGS_END;) {
        switch (k) {
        case TKB_ARGS_HELP:
            return -1;
        case TKB_ARGS_BAD:
            return 2;
        case TKB_ARGS_POS:
            if (npos == 0)
                o->in = v;
            else if (npos == 1 && !stats)
                o->out = v;
            else
                return tkb_usage(cmd, "unexpected argument '%s'", v);
            npos++;
            break;
        case TO_HZ: {
            char *e;
            errno = 0;
            long long hz = strtoll(v, &e, 10);
            if (errno != 0 || *v == '\0' || *e != '\0' || hz < 1 || hz > 100000)
                return tkb_usage(cmd, "--hz: expected jiffies per second in 1..100000, got '%s'",
                                 v);
            o->perf.hz = hz;
            break;
        }
        case TO_FUNCTIONS:
            o->perf.functions = v;
            break;
        case TO_CPUS:
            o->perf.cpus = v;
            break;
        case TO_CLASS:
            if (strcmp(v, "wheel") == 0)
                o->perf.keep = TKT_KEEP_WHEEL;
            else if (strcmp(v, "hrtimer") == 0)
                o->perf.keep = TKT_KEEP_HRTIMER;
            else if (strcmp(v, "all") == 0)
                o->perf.keep = TKT_KEEP_ALL;
            else
                return tkb_usage(cmd, "--class: expected wheel, hrtimer or all, got '%s'", v);
            break;
        case TO_OUT:
            o->dir = v;
            break;
        default:
            return tkb_usage(cmd, "internal: option %d has no meaning", k);
        }
        o->perf_given |= k >= 0 && k != TO_OUT;
    }
    if (npos == 0)
        return tkb_usage(cmd, "which trace? (%s)", stats ? "TRACE" : "IN and OUT");
    if (npos == 1 && !stats)
        return tkb_usage(cmd, "where to? (OUT, after IN '%s')", o->in);
    return 0;
}

typedef struct progress {
    const char *path;
    int last;
    bool tty;
} progress;

static void show_progress(void *arg, size_t done, size_t total) {
    progress *p = arg;
    if (total < ((size_t)16 << 20))
        return; /* small files: no noise */
    int pct = (int)(done * 100.0 / (double)total);
    if (pct / 10 == p->last / 10 && pct < 100)
        return;
    p->last = pct;
    fprintf(stderr, "%stkbench: trace: importing %s: %3d%% of %.0f MB%s", p->tty ? "\r" : "",
            p->path, pct, (double)total / 1e6, p->tty && pct < 100 ? "" : "\n");
    fflush(stderr);
}

/* A command's options and the trace they name, loaded. */
typedef struct loaded {
    opts o;
    tkt_trace t;
    tkt_import_stats st;
    bool is_csv;
} loaded;

/* Parses convert's or stats' command line into l->o and loads the trace it
 * names into l: 0, or the exit status (-1 for the help: exit 0). */
static int load(const tkb_cmd *cmd, int argc, char **argv, loaded *l) {
    opts *o = &l->o;
    tkt_trace *t = &l->t;
    tkt_import_stats *st = &l->st;
    bool *is_csv = &l->is_csv;
    int rc = parse_opts(cmd, argc, argv, o);
    if (rc != 0)
        return rc;
    progress pr = {.path = o->in, .last = -10, .tty = isatty(2)};
    o->perf.progress = show_progress;
    o->perf.progress_arg = &pr;
    char err[512];
    rc = tkt_load_any(o->in, &o->perf, t, st, is_csv, err, sizeof err);
    if (rc != TKT_OK) {
        fprintf(stderr, "tkbench: %s\n", err);
        return rc == TKT_ENOMEM ? 1 : 2;
    }
    if (*is_csv && o->perf_given) {
        tkt_free(t);
        return tkb_usage(cmd,
                         "%s is neutral CSV: --hz, --functions, --cpus and --class apply to "
                         "perf script text only",
                         o->in);
    }
    return 0;
}

static int cmd_convert(const tkb_cmd *cmd, int argc, char **argv) {
    loaded l;
    int rc = load(cmd, argc, argv, &l);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    char err[512];
    int sr = tkt_save(&l.t, l.o.out, err, sizeof err);
    if (sr != TKT_OK) {
        fprintf(stderr, "tkbench: trace convert: %s\n", err);
        tkt_free(&l.t);
        return 1;
    }
    printf("%s (%s) -> %s: %zu events, %zu timers, %.3f s\n", l.o.in,
           l.is_csv ? "neutral CSV" : "perf script text", l.o.out, l.t.count, l.t.ntimers,
           (double)l.t.duration_ns / 1e9);
    if (!l.is_csv)
        tkb_trace_import_print(stdout, &l.st);
    tkt_free(&l.t);
    return 0;
}

/* ---- stats ------------------------------------------------------------------------------------
 */

/* Draws DIR's figures from the data beside them: plots/render.py trace DIR
 * --title NAME. Returns 0 or 1. */
static int draw(const char *dir, const char *name) {
    char *args[] = {"trace", (char *)dir, "--title", (char *)name, NULL};
    if (tkb_renderer_run(args) == 0)
        return 0;
    fprintf(stderr,
            "tkbench: trace stats: the figures in %s could not be drawn (the data is there)\n",
            dir);
    return 1;
}

static int cmd_stats(const tkb_cmd *cmd, int argc, char **argv) {
    loaded l;
    int rc = load(cmd, argc, argv, &l);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    tkb_trace_summary s;
    if (tkb_trace_summarise(&l.t, &s) != 0) {
        tkt_free(&l.t);
        fprintf(stderr, "tkbench: trace stats: out of memory\n");
        return 1;
    }
    tkb_trace_summary_print(stdout, &l.t, &s, l.is_csv ? NULL : &l.st);
    char dir[4096];
    if (l.o.dir != NULL)
        snprintf(dir, sizeof dir, "%s", l.o.dir);
    else
        snprintf(dir, sizeof dir, "results/trace-%s", l.t.name[0] ? l.t.name : "trace");
    rc = tkb_trace_summary_write(dir, &l.t, &s, l.is_csv ? NULL : &l.st);
    if (rc == 0 && s.ndelays == 0)
        fprintf(stderr, "tkbench: trace stats: no start in the trace: no figures\n");
    else if (rc == 0)
        rc = draw(dir, l.t.name);
    if (rc == 0)
        printf("data and figures: %s/ (summary.txt, population.dat, delays.dat, trace.gp, "
               "population.pdf/png, delay-cdf.pdf/png)\n",
               dir);
    tkb_trace_summary_free(&s);
    tkt_free(&l.t);
    return rc;
}
