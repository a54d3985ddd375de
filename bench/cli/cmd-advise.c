/* SPDX-License-Identifier: MIT */
/* `tkbench advise TRACE [options]`: which engine, with which parameters, for
 * a recorded trace (the advisor: advise/; docs/advisor.md). Its steps: the
 * options, the results folder (a bad one is a usage error, before anything
 * is measured), the trace, its shape, the candidates measured, ranked and
 * reported. Prints the trace's shape, a table of the candidates with their
 * figures and a recommendation on stdout, progress on stderr. Exit status: 0
 * advice given, 1 no candidate meets the needs or a measurement failed, 2 a
 * usage error, an unreadable trace or an unusable results folder. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advise.h"
#include "cli/cli.h"
#include "util.h"

/* "64MiB", "1.5GB", "4096": bytes. K, M, G and KiB, MiB, GiB are binary; KB,
 * MB, GB decimal; B or nothing: bytes. Returns 0 or -1. */
static int parse_size(const char *s, double *out) {
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"", 1},        {"B", 1},         {"K", 1024}, {"KiB", 1024},     {"KB", 1e3},
        {"M", 1048576}, {"MiB", 1048576}, {"MB", 1e6}, {"G", 1073741824}, {"GiB", 1073741824},
        {"GB", 1e9}};
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || !(v > 0) || !isfinite(v))
        return -1;
    for (size_t i = 0; i < TKB_COUNT(units); i++)
        if (strcmp(end, units[i].suffix) == 0) {
            *out = v * units[i].mult;
            return *out >= 1 && *out <= 1e15 ? 0 : -1;
        }
    return -1;
}

/* "5", "5%", "0.5": percent of one core, in (0, 10000]. */
static int parse_pct(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || (*end != '\0' && strcmp(end, "%") != 0) || !(v > 0) || v > 1e4)
        return -1;
    *out = v;
    return 0;
}

enum { AO_RESULTS, AO_NEED, AO_CRITERION, AO_REPS, AO_HZ };
static const tkb_opt advise_opts[] = {
    [AO_RESULTS] = {"results", "DIR",
                    "a results folder of this machine: measured lateness and wake-up", 0},
    [AO_NEED] = {"need", "KEY=VALUE",
                 "a need, repeatable: lateness=DUR, memory=SIZE or cpu=PCT (of one core)", 0},
    [AO_CRITERION] = {"criterion", "NAME", "cost, lateness or memory: what ranks (default cost)",
                      0},
    [AO_REPS] = {"reps", "K", "repetitions of each candidate's replay, 1..1000 (default 5)", 0},
    [AO_HZ] = {"hz", "N", "perf text: jiffies per second, if the trace cannot tell", 0},
};

static void parse_need(const char *v, adv_needs *nd) {
    const char *eq = strchr(v, '=');
    if (eq == NULL)
        tkb_die_usage(
            &tkb_cmd_advise,
            "--need: expected KEY=VALUE (lateness=500us, memory=64MiB, cpu=5%%), got '%s'", v);
    size_t kl = (size_t)(eq - v);
    const char *val = eq + 1;
    if (kl == 8 && strncmp(v, "lateness", kl) == 0) {
        if (tkb_parse_duration(val, &nd->lateness_ns) != 0)
            tkb_die_usage(
                &tkb_cmd_advise,
                "--need lateness: expected a duration with its unit (500us, 2ms), got '%s'", val);
    } else if (kl == 6 && strncmp(v, "memory", kl) == 0) {
        if (parse_size(val, &nd->memory_bytes) != 0)
            tkb_die_usage(&tkb_cmd_advise,
                          "--need memory: expected a size (65536, 64KiB, 16MiB, 1GB), got '%s'",
                          val);
    } else if (kl == 3 && strncmp(v, "cpu", kl) == 0) {
        if (parse_pct(val, &nd->cpu_pct) != 0)
            tkb_die_usage(
                &tkb_cmd_advise,
                "--need cpu: expected a share of one core in percent (5, 0.5%%), got '%s'", val);
    } else {
        tkb_die_usage(&tkb_cmd_advise, "--need: unknown need '%.*s' (known: lateness, memory, cpu)",
                      (int)kl, v);
    }
}

/* Reads the options and the trace's path into a, the perf options into
 * popts. Returns 0, or the exit status (-1: the help, exit 0). */
static int parse_args(const tkb_cmd *cmd, int argc, char **argv, tkb_advice *a,
                      tkt_perf_opts *popts) {
    tkb_args args;
    tkb_args_start(&args, cmd, argc, argv);
    const char *v;
    for (int o; (o = tkb_args_next(&args, &v)) != TKB_ARGS_END;) {
        char *end;
        switch (o) {
        case TKB_ARGS_HELP:
            return -1;
        case TKB_ARGS_BAD:
            return 2;
        case TKB_ARGS_POS:
            if (a->trace_path != NULL)
                tkb_die_usage(cmd, "one trace at a time ('%s' and '%s')", a->trace_path, v);
            a->trace_path = v;
            break;
        case AO_RESULTS:
            a->dir = v;
            break;
        case AO_NEED:
            parse_need(v, &a->needs);
            break;
        case AO_CRITERION: {
            size_t k = 0;
            while (k < TKB_COUNT(tkb_adv_crit_name) && strcmp(v, tkb_adv_crit_name[k]) != 0)
                k++;
            if (k == TKB_COUNT(tkb_adv_crit_name))
                tkb_die_usage(cmd, "--criterion: expected cost, lateness or memory, got '%s'", v);
            a->crit = (adv_criterion)k;
            break;
        }
        case AO_HZ: {
            long hz = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || hz < 1 || hz > 100000)
                tkb_die_usage(cmd, "--hz: expected jiffies per second in 1..100000, got '%s'", v);
            popts->hz = hz;
            break;
        }
        case AO_REPS: {
            long r = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || r < 1 || r > 1000)
                tkb_die_usage(cmd, "--reps: expected an integer in 1..1000, got '%s'", v);
            a->reps = (int)r;
            break;
        }
        default:
            tkb_die_usage(cmd, "internal: option %d has no meaning", o);
        }
    }
    if (a->trace_path == NULL)
        tkb_die_usage(cmd, "which trace? (a trace file, or synth:EVENTS[:TIMERS])");
    return 0;
}

/* The trace: synth:EVENTS[:TIMERS] made into *synth, else a file loaded into
 * *loaded. Returns it, or NULL with *status set (the message on stderr). */
static const tkt_trace *load_trace(const tkb_advice *a, const tkt_perf_opts *popts,
                                   tkb_replay_set *synth, tkt_trace *loaded, int *status) {
    char err[1024] = "";
    if (strncmp(a->trace_path, "synth:", 6) == 0) {
        const char *paths[1] = {a->trace_path};
        int rc = tkb_replay_set_open(synth, paths, 1, ADV_EXACT_STEP_NS);
        if (rc == 0 && synth->count == 1)
            return &synth->traces[0].trace;
        *status = rc == 2 ? 2 : 1; /* the message is on stderr */
        return NULL;
    }
    if (tkt_load_any(a->trace_path, popts, loaded, NULL, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "tkbench: advise: cannot read trace %s\n", err);
        *status = 2;
        return NULL;
    }
    return loaded;
}

static int cmd_advise(const tkb_cmd *cmd, int argc, char **argv) {
    tkb_advice a = {.crit = ADV_CRIT_COST, .reps = ADV_DEFAULT_REPS, .wake_ns = NAN};
    tkt_perf_opts popts = {0};
    tkb_replay_set synth = {0};
    tkt_trace loaded = {0};
    int status = parse_args(cmd, argc, argv, &a, &popts);
    if (status != 0)
        return status < 0 ? 0 : status;
    if (a.dir != NULL) {
        status = tkb_adv_rows_read(a.dir, &a.rows);
        double w = tkb_adv_rows_median(&a.rows, NULL, tkb_wl_floor.name, ADV_WAKE_P99);
        if (isfinite(w))
            a.wake_ns = w * 1e3;
    }
    if (status == 0 && (a.t = load_trace(&a, &popts, &synth, &loaded, &status)) != NULL &&
        (status = tkb_adv_start(&a)) == 0) {
        tkb_adv_print_trace(&a);
        status = tkb_adv_measure(&a);
        tkb_adv_rank(&a);
        status |= tkb_adv_report(&a);
    }
    tkb_adv_free(&a);
    if (a.t == &loaded)
        tkt_free(&loaded);
    tkb_replay_set_close(&synth);
    return status;
}

const tkb_cmd tkb_cmd_advise = {
    .name = "advise",
    .synopsis = "TRACE [options]",
    .summary = "which engine, with which parameters, for a trace, and the figures why",
    .details = "The advice, its rules and their measurements: docs/advisor.md.\nTRACE is a trace "
               "file (perf script text or neutral CSV, docs/traces.md) or\n"
               "synth:EVENTS[:TIMERS]. Durations take a unit (500us, 2ms), sizes may (64KiB,\n"
               "16MiB).\n",
    .opts = advise_opts,
    .nopts = TKB_COUNT(advise_opts),
    .example = "tkbench advise t.perf.txt --need lateness=2ms\n"
               "tkbench advise bench/traces/tcp.csv.xz --results DIR --criterion memory\n",
    .main = cmd_advise,
};
