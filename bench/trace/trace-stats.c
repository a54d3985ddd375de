/* SPDX-License-Identifier: MIT */
/* tkbench trace convert / stats (docs/traces.md).
 *
 * convert reads perf script text or neutral CSV (told apart by content, see
 * tkt_load_any()) and writes neutral CSV, compressed by the output's
 * extension. stats prints a summary of a trace and writes its data and two
 * figures (armed timers over time, the CDF of start-to-deadline delays) into
 * a folder, drawn by gnuplot with the renderer's style (plots/style.gp). */
#define _POSIX_C_SOURCE 200809L

#include "trace/trace-stats.h"
#include "cli/cmdline.h"
#include "datadir.h"
#include "trace/trace.h"
#include "util.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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
    .details =
        TRACE_IN "The figures: armed timers over time, the CDF of start-to-deadline delays.\n",
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

/* Loads o->in into *t; 0 or the exit status. */
static int load(const tkb_cmd *cmd, opts *o, tkt_trace *t, tkt_import_stats *st, bool *is_csv) {
    progress pr = {.path = o->in, .last = -10, .tty = isatty(2)};
    o->perf.progress = show_progress;
    o->perf.progress_arg = &pr;
    char err[512];
    int rc = tkt_load_any(o->in, &o->perf, t, st, is_csv, err, sizeof err);
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

static void print_import(FILE *f, const tkt_import_stats *s) {
    fprintf(f, "  perf text     %zu lines; HZ %lld%s; hrtimer clock - perf clock %.6f s\n",
            s->lines, (long long)s->hz,
            s->hz == 0    ? " (no wheel timer kept)"
            : s->hz_found ? " (found from the jiffies)"
                          : " (given)",
            (double)s->hr_offset_ns / 1e9);
    fprintf(f,
            "  dropped       %zu cancels that were part of an expiry, %zu events of timers on "
            "another clock, %zu filtered out, %zu deadlines clamped; %zu events were out of "
            "time order (sorted)\n",
            s->expiry_cancels, s->other_clock, s->filtered, s->clamped, s->out_of_order);
    fprintf(f, "  by event      %-28s %10s %10s\n", "", "read", "skipped");
    for (unsigned k = 0; k < TKT_PERF_NEVENTS; k++)
        if (s->events[k] > 0)
            fprintf(f, "                %-28s %10zu %10zu\n", tkt_perf_event_name(k), s->events[k],
                    s->skipped[k]);
}

/* ---- convert ----------------------------------------------------------------------------------
 */

static int cmd_convert(const tkb_cmd *cmd, int argc, char **argv) {
    opts o;
    int rc = parse_opts(cmd, argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    tkt_trace t;
    tkt_import_stats st;
    bool is_csv;
    rc = load(cmd, &o, &t, &st, &is_csv);
    if (rc != 0)
        return rc;
    char err[512];
    int sr = tkt_save(&t, o.out, err, sizeof err);
    if (sr != TKT_OK) {
        fprintf(stderr, "tkbench: trace convert: %s\n", err);
        tkt_free(&t);
        return 1;
    }
    printf("%s (%s) -> %s: %zu events, %zu timers, %.3f s\n", o.in,
           is_csv ? "neutral CSV" : "perf script text", o.out, t.count, t.ntimers,
           (double)t.duration_ns / 1e9);
    if (!is_csv)
        print_import(stdout, &st);
    tkt_free(&t);
    return 0;
}

/* ---- stats ------------------------------------------------------------------------------------
 */

#define NBUCKETS 1000
#define NCDF 1000

/* What became of one start. */
enum { END_EXPIRED, END_CANCELLED, END_REARMED, END_UNSEEN, END_ARMED, NEND };

typedef struct summary {
    size_t by_op[3], by_cls[3];
    size_t ends[NEND]; /* starts by END_* */
    size_t cancel_unarmed, expire_unarmed;
    size_t max_armed, armed_at_end;
    int64_t max_armed_t;
    double mean_armed;
    bool has_expire;
    int64_t *delays;
    size_t ndelays;
    double pop_t[NBUCKETS];
    size_t pop_end[NBUCKETS], pop_max[NBUCKETS];
} summary;

/* A change of the number of armed timers. */
typedef struct change {
    int64_t t_ns;
    int delta;
} change;

static int cmp_change(const void *a, const void *b) {
    const change *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
    return x->delta - y->delta; /* at one instant, leaving before arriving */
}

/* Walks the trace backwards: each start ends at the next event of its timer
 *   CANCEL / EXPIRE           cancelled / expired, then;
 *   START, deadline not past  re-armed (a modify: the timer stays armed);
 *   START, deadline past      in a trace with EXPIRE events, an expiry the
 *                             trace did not see: it ends at its deadline;
 *   none                      still armed at the end, or if its deadline
 *                             passed before the end, an expiry not seen.
 * In a trace without EXPIRE events, a start whose deadline comes before the
 * next event of its timer (or the end) expires at its deadline. Then the
 * armed timers over time, from the starts' intervals. */
static int summarise(const tkt_trace *t, summary *s) {
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < t->count; i++)
        s->has_expire |= t->ev[i].op == TKT_EXPIRE;
    for (size_t k = 0; k < t->ntimers; k++)
        s->by_cls[t->timers[k].cls < 3 ? t->timers[k].cls : 0]++;
    size_t n = t->count > 0 ? t->count : 1;
    size_t *next = malloc((t->ntimers > 0 ? t->ntimers : 1) * sizeof *next);
    uint8_t *end = malloc(n), *matched = calloc(n, 1);
    change *ch = malloc(2 * n * sizeof *ch);
    s->delays = malloc(n * sizeof *s->delays);
    if (next == NULL || end == NULL || matched == NULL || ch == NULL || s->delays == NULL) {
        free(next), free(end), free(matched), free(ch), free(s->delays);
        s->delays = NULL;
        return 1;
    }
    for (size_t k = 0; k < t->ntimers; k++)
        next[k] = SIZE_MAX;
    int64_t dur = t->duration_ns;
    size_t nch = 0;
    for (size_t i = t->count; i-- > 0;) {
        const tkt_event *e = &t->ev[i];
        s->by_op[e->op < 3 ? e->op : 0]++;
        size_t j = next[e->timer];
        next[e->timer] = i;
        if (e->op != TKT_START)
            continue;
        s->delays[s->ndelays++] = e->deadline_ns - e->t_ns;
        const tkt_event *f = j != SIZE_MAX ? &t->ev[j] : NULL;
        int64_t t_end;
        if (!s->has_expire && e->deadline_ns <= (f != NULL ? f->t_ns : dur)) {
            end[i] = END_EXPIRED, t_end = e->deadline_ns;
        } else if (f == NULL) {
            end[i] = e->deadline_ns < dur ? END_UNSEEN : END_ARMED;
            t_end = e->deadline_ns < dur ? e->deadline_ns : dur;
        } else if (f->op != TKT_START) {
            end[i] = f->op == TKT_CANCEL ? END_CANCELLED : END_EXPIRED, t_end = f->t_ns;
            matched[j] = 1;
        } else if (e->deadline_ns < f->t_ns) {
            end[i] = END_UNSEEN, t_end = e->deadline_ns;
        } else {
            end[i] = END_REARMED, t_end = f->t_ns;
        }
        s->ends[end[i]]++;
        /* armed from the start (unless it continues a re-armed one) to its end */
        if (end[i] != END_REARMED && !(end[i] == END_ARMED))
            ch[nch++] = (change){t_end > e->t_ns ? t_end : e->t_ns, -1};
    }
    for (size_t k = 0; k < t->ntimers; k++)
        next[k] = SIZE_MAX; /* now: the previous event of each timer */
    for (size_t i = 0; i < t->count; i++) {
        const tkt_event *e = &t->ev[i];
        size_t p = next[e->timer];
        next[e->timer] = i;
        if (e->op == TKT_START &&
            !(p != SIZE_MAX && t->ev[p].op == TKT_START && end[p] == END_REARMED))
            ch[nch++] = (change){e->t_ns, +1};
        else if (e->op == TKT_CANCEL && !matched[i])
            s->cancel_unarmed++;
        else if (e->op == TKT_EXPIRE && !matched[i])
            s->expire_unarmed++;
    }
    qsort(ch, nch, sizeof *ch, cmp_change);
    int64_t span = dur > 0 ? dur : 1, last_t = 0;
    size_t armed = 0, b = 0;
    double area = 0;
    for (size_t c = 0; c <= nch; c++) {
        int64_t now = c < nch ? ch[c].t_ns : span;
        /* close the intervals that end before now */
        while (b < NBUCKETS && (double)now > (double)span * (double)(b + 1) / NBUCKETS) {
            s->pop_t[b] = (double)span * (double)(b + 1) / NBUCKETS / 1e9;
            s->pop_end[b] = armed;
            if (armed > s->pop_max[b])
                s->pop_max[b] = armed;
            if (++b < NBUCKETS)
                s->pop_max[b] = armed;
        }
        if (c == nch)
            break;
        area += (double)armed * (double)(now - last_t);
        last_t = now;
        armed = (size_t)((int64_t)armed + ch[c].delta);
        if (b < NBUCKETS && armed > s->pop_max[b])
            s->pop_max[b] = armed;
        if (armed > s->max_armed)
            s->max_armed = armed, s->max_armed_t = now;
    }
    area += (double)armed * (double)(span - last_t);
    for (; b < NBUCKETS; b++) {
        s->pop_t[b] = (double)span * (double)(b + 1) / NBUCKETS / 1e9;
        s->pop_end[b] = armed;
        if (armed > s->pop_max[b])
            s->pop_max[b] = armed;
    }
    s->armed_at_end = armed;
    s->mean_armed = area / (double)span;
    qsort(s->delays, s->ndelays, sizeof *s->delays, tkb_cmp_i64);
    free(next), free(end), free(matched), free(ch);
    return 0;
}

static int64_t pct(const summary *s, double q) {
    if (s->ndelays == 0)
        return 0;
    size_t i = (size_t)(q * (double)(s->ndelays - 1) + 0.5);
    return s->delays[i < s->ndelays ? i : s->ndelays - 1];
}

static double share(size_t a, size_t b) {
    return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_summary(FILE *f, const tkt_trace *t, const summary *s, bool is_csv,
                          const tkt_import_stats *st) {
    char b1[32], b2[32];
    double secs = (double)t->duration_ns / 1e9;
    fprintf(f, "trace %s (%s)\n", t->name, t->source[0] ? t->source : "no source given");
    fprintf(f, "  events        %zu: %zu start, %zu cancel, %zu expire, over %s", t->count,
            s->by_op[TKT_START], s->by_op[TKT_CANCEL], s->by_op[TKT_EXPIRE],
            tkb_duration_text((double)t->duration_ns, b1, sizeof b1));
    if (secs > 0)
        fprintf(f, " (%.0f events/s, %.0f starts/s)", (double)t->count / secs,
                (double)s->by_op[TKT_START] / secs);
    fprintf(f, "\n  timers        %zu distinct: %zu wheel, %zu hrtimer, %zu of no class\n",
            t->ntimers, s->by_cls[TKT_CLS_WHEEL], s->by_cls[TKT_CLS_HRTIMER],
            s->by_cls[TKT_CLS_UNKNOWN]);
    fprintf(f, "  armed timers  mean %.1f, max %zu (at %s), %zu at the end%s\n", s->mean_armed,
            s->max_armed, tkb_duration_text((double)s->max_armed_t, b1, sizeof b1), s->armed_at_end,
            s->has_expire ? "" : " (no expire events: a timer expires at its deadline)");
    if (s->ndelays > 0) {
        static const struct {
            const char *name;
            double q;
        } qs[] = {{"min", 0},   {"p1", 0.01},  {"p10", 0.1},     {"p50", 0.5},
                  {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}, {"max", 1}};
        fprintf(f, "  delays        deadline - start time, over %zu starts:\n               ",
                s->ndelays);
        for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++)
            fprintf(f, " %s %s%s", qs[k].name,
                    tkb_duration_text((double)pct(s, qs[k].q), b2, sizeof b2),
                    k + 1 < sizeof qs / sizeof qs[0] ? "," : "\n");
    }
    size_t n = s->by_op[TKT_START];
    fprintf(f,
            "  starts        %zu: %zu expired (%.1f%%), %zu cancelled (%.1f%%), %zu re-armed "
            "before their deadline (%.1f%%), %zu still armed at the end (%.1f%%)\n",
            n, s->ends[END_EXPIRED], share(s->ends[END_EXPIRED], n), s->ends[END_CANCELLED],
            share(s->ends[END_CANCELLED], n), s->ends[END_REARMED], share(s->ends[END_REARMED], n),
            s->ends[END_ARMED], share(s->ends[END_ARMED], n));
    if (s->ends[END_UNSEEN] > 0)
        fprintf(f,
                "                and %zu (%.1f%%) whose deadline passed with no expiry in the "
                "trace (taken as expired at their deadline)\n",
                s->ends[END_UNSEEN], share(s->ends[END_UNSEEN], n));
    fprintf(f,
            "  unmatched     %zu cancels and %zu expiries of timers not armed (armed before "
            "the trace began, or events lost)\n",
            s->cancel_unarmed, s->expire_unarmed);
    if (!is_csv)
        print_import(f, st);
    else if (t->meta != NULL && t->meta[0] != '\0') {
        fprintf(f, "  metadata\n");
        for (const char *m = t->meta; *m != '\0';) {
            const char *nl = strchr(m, '\n');
            size_t k = nl != NULL ? (size_t)(nl - m) : strlen(m);
            fprintf(f, "                %.*s\n", (int)k, m);
            m += k + (nl != NULL);
        }
    }
}

static FILE *open_in(const char *dir, const char *name) {
    char p[4096];
    int n = snprintf(p, sizeof p, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof p) {
        fprintf(stderr, "tkbench: trace stats: %s: path too long\n", dir);
        return NULL;
    }
    FILE *f = fopen(p, "w");
    if (f == NULL)
        fprintf(stderr, "tkbench: trace stats: cannot write %s: %s\n", p, strerror(errno));
    return f;
}

static bool close_ok(FILE *f) {
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

/* The two figures' script: the renderer's style (plots/style.gp of the data
 * folder, datadir.h, written between the two parts), FMT pdf or png. */
static const char gp_script_head[] =
    "# Armed timers over time and the CDF of start-to-deadline delays, written by\n"
    "# `tkbench trace stats` with population.dat and delays.dat beside it (columns: "
    "docs/traces.md).\n"
    "# Redraw: gnuplot -e \"FMT='png'\" trace.gp (STYLE names plots/style.gp).\n"
    "if (!exists(\"FMT\")) FMT = \"pdf\"\n";
static const char gp_script[] =
    "load STYLE\n"
    "eval value(\"TERM_\".FMT.\"_single\")\n"
    "set output 'population.'.FMT\n"
    "set title TITLE\n"
    "set xlabel 'time from the trace start (s)'\n"
    "set ylabel 'armed timers'\n"
    "set yrange [0:*]\n"
    "plot 'population.dat' using 1:3 with steps lw LW lc rgb PC[2] title 'max in interval', \\\n"
    "     '' using 1:2 with steps lw LW lc rgb PC[1] dt PD[1] title 'at interval end'\n"
    "unset output\n"
    "set output 'delay-cdf.'.FMT\n"
    "set logscale x\n"
    "set format x LOGFMT\n"
    "set xlabel 'deadline - start time (ns)'\n"
    "set ylabel 'share of starts'\n"
    "set yrange [0:1]\n"
    "plot 'delays.dat' using ($1 > 1 ? $1 : 1):2 with steps lw LW lc rgb PC[1] title 'all starts'\n"
    "unset output\n";

static int run_gnuplot(const char *dir, const char *fmt, const char *title) {
    char fmt_arg[64], title_arg[256];
    snprintf(fmt_arg, sizeof fmt_arg, "FMT='%s'", fmt);
    /* the title: a gnuplot single-quoted string ('' is a quote) */
    size_t k = 0;
    k += (size_t)snprintf(title_arg, sizeof title_arg, "TITLE='");
    for (const char *p = title; *p != '\0' && k + 4 < sizeof title_arg; p++) {
        if (*p == '\'')
            title_arg[k++] = '\'';
        title_arg[k++] = *p;
    }
    title_arg[k++] = '\'';
    title_arg[k] = '\0';
    char *argv[] = {(char *)"gnuplot", (char *)"-e",       fmt_arg, (char *)"-e",
                    title_arg,         (char *)"trace.gp", NULL};
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    /* gnuplot runs in dir: posix_spawn has no chdir before glibc 2.29's extension, so go there */
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == NULL || chdir(dir) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (chdir(cwd) != 0)
        rc = rc != 0 ? rc : -1;
    if (rc != 0) {
        fprintf(stderr, "tkbench: trace stats: cannot run gnuplot: %s\n",
                strerror(rc > 0 ? rc : errno));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int write_out(const char *dir, const tkt_trace *t, const summary *s, bool is_csv,
                     const tkt_import_stats *st) {
    if (tkb_mkdir_p(dir) != 0) {
        fprintf(stderr, "tkbench: trace stats: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    FILE *f = open_in(dir, "summary.txt");
    if (f == NULL)
        return 1;
    print_summary(f, t, s, is_csv, st);
    bool ok = close_ok(f);
    if (ok && (f = open_in(dir, "population.dat")) != NULL) {
        fprintf(f, "# t_s armed_at_end armed_max (over each 1/%d of the trace)\n", NBUCKETS);
        for (size_t b = 0; b < NBUCKETS; b++)
            fprintf(f, "%.9f %zu %zu\n", s->pop_t[b], s->pop_end[b], s->pop_max[b]);
        ok = close_ok(f);
    } else {
        ok = false;
    }
    if (ok && (f = open_in(dir, "delays.dat")) != NULL) {
        fprintf(f, "# delay_ns share_of_starts_at_or_below\n");
        size_t n = s->ndelays, step = n > NCDF ? n / NCDF : 1;
        for (size_t i = 0; i < n; i += step)
            fprintf(f, "%lld %.6f\n", (long long)s->delays[i], (double)(i + 1) / (double)n);
        if (n > 0)
            fprintf(f, "%lld 1\n", (long long)s->delays[n - 1]);
        ok = close_ok(f);
    } else {
        ok = false;
    }
    if (ok && (f = open_in(dir, "trace.gp")) != NULL) {
        fprintf(f, "%s", gp_script_head);
        fprintf(f, "if (!exists(\"STYLE\")) STYLE = '%s/plots/style.gp'\n", tkb_data_dir());
        fputs(gp_script, f);
        ok = close_ok(f);
    } else {
        ok = false;
    }
    if (!ok)
        return 1;
    if (s->ndelays == 0) {
        fprintf(stderr, "tkbench: trace stats: no start in the trace: no figures\n");
        return 0;
    }
    char title[160];
    snprintf(title, sizeof title, "%s", t->name);
    if (run_gnuplot(dir, "pdf", title) != 0 || run_gnuplot(dir, "png", title) != 0) {
        fprintf(stderr,
                "tkbench: trace stats: gnuplot could not draw the figures in %s "
                "(data and trace.gp are there)\n",
                dir);
        return 1;
    }
    return 0;
}

static int cmd_stats(const tkb_cmd *cmd, int argc, char **argv) {
    opts o;
    int rc = parse_opts(cmd, argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    tkt_trace t;
    tkt_import_stats st;
    bool is_csv;
    rc = load(cmd, &o, &t, &st, &is_csv);
    if (rc != 0)
        return rc;
    summary s;
    if (summarise(&t, &s) != 0) {
        tkt_free(&t);
        fprintf(stderr, "tkbench: trace stats: out of memory\n");
        return 1;
    }
    print_summary(stdout, &t, &s, is_csv, &st);
    char dir[4096];
    if (o.dir != NULL)
        snprintf(dir, sizeof dir, "%s", o.dir);
    else
        snprintf(dir, sizeof dir, "results/trace-%s", t.name[0] ? t.name : "trace");
    rc = write_out(dir, &t, &s, is_csv, &st);
    if (rc == 0)
        printf("data and figures: %s/ (summary.txt, population.dat, delays.dat, trace.gp, "
               "population.pdf/png, delay-cdf.pdf/png)\n",
               dir);
    free(s.delays);
    tkt_free(&t);
    return rc;
}

int tkb_trace_stats_write(const tkt_trace *t, const char *dir) {
    if (t == NULL || dir == NULL)
        return 1;
    summary s;
    if (summarise(t, &s) != 0) {
        fprintf(stderr, "tkbench: trace stats: out of memory\n");
        return 1;
    }
    int rc = write_out(dir, t, &s, true, NULL);
    free(s.delays);
    return rc;
}
