/* SPDX-License-Identifier: MIT */
/* `tkbench run`: its options (one table with `tkbench replay`'s), read into a
 * tkb_run_req that run-select.c makes a plan of and run-exec.c runs. A run
 * registers one Google Benchmark per (workload, peer, parameter), runs them
 * with --benchmark_out=DIR/raw/gbench.json, then turns that JSON into
 * DIR/results.csv and writes DIR/manifest.json and the metadata
 * (docs/results-format.md). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util.h"

/* Calls fn(item, ctx) for each item of a comma-separated list, splitting at
 * commas that start a new item: a peer spec has commas of its own
 * (wheel:tick=1ms,slots=1024), so a piece holding '=' but no ':' continues
 * the spec before it. */
void tkb_for_each_item(const char *list, bool specs, void (*fn)(const char *, void *), void *ctx) {
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

void tkb_run_req_trace(tkb_run_req *r, const char *path) {
    if (r->ntraces == TKB_COUNT(r->traces))
        tkb_die_usage(r->cmd, "at most %zu traces", TKB_COUNT(r->traces));
    char *copy = strdup(path);
    if (copy == NULL) {
        fprintf(stderr, "tkbench: out of memory\n");
        exit(1);
    }
    r->traces[r->ntraces++] = copy;
}

/* tkb_for_each_item()'s function for --trace. */
static void want_trace(const char *path, void *ctx) {
    tkb_run_req_trace(ctx, path);
}

/* The options of run and replay (cli.h: tkb_run_opts, indexed by TKB_RO_*;
 * TKB_IN_RUN, TKB_IN_REPLAY, 0: both). */
const tkb_opt tkb_run_opts[TKB_RO_COUNT] = {
    [TKB_RO_SUITE] = {"suite", "NAME",
                      "smoke, quick or full: sizes and repetitions (default quick)", 0},
    [TKB_RO_WORKLOADS] = {"workloads", "NAME,...",
                          "the workloads to run, by name or group (default: all of the suite)",
                          TKB_IN_RUN},
    [TKB_RO_PEERS] = {"peers", "SPEC,...",
                      "the peers to run (default: the suites' peers and every engine)", 0},
    [TKB_RO_N] = {"n", "N,...", "populations of the workloads measured at several N (1..1e8)",
                  TKB_IN_RUN},
    [TKB_RO_REPS] = {"reps", "K", "repetitions of every benchmark, 1..1000 (default: the suite's)",
                     0},
    [TKB_RO_TIMER_SLACK] = {"timer-slack", "NS",
                            "timer slack of the timer threads, ns (default 1; -1: leave it)", 0},
    [TKB_RO_TRACE] = {"trace", "TRACE,...", "the traces the replay workloads replay", TKB_IN_RUN},
    [TKB_RO_LEVEL] = {"level", "LEVEL", "core, executor or all: the replays to run (default core)",
                      TKB_IN_REPLAY},
    [TKB_RO_STEP] = {"step", "DUR",
                     "a replay's expiry grid, a multiple of every ticked peer's tick (default 1ms)",
                     0},
    [TKB_RO_SPEED] = {"speed", "X", "play the trace X times as fast at executor level (default 1)",
                      TKB_IN_REPLAY},
    [TKB_RO_OUT] = {"out", "DIR", "the results folder (default: a new one in results/)", 0},
    /* tests: records expiry number K one step late, to prove the replay's check can fail */
    [TKB_RO_PERTURB] = {"_perturb", "K", NULL, TKB_IN_REPLAY},
};

/* Takes option k of run or replay, with value v, into r. Returns 0, or 2
 * after a usage error. */
static int run_req_option(tkb_run_req *r, int k, const char *v) {
    char *e;
    switch (k) {
    case TKB_RO_SUITE:
        r->suite = v;
        break;
    case TKB_RO_WORKLOADS:
        r->wl = v;
        break;
    case TKB_RO_PEERS:
        r->pl = v;
        break;
    case TKB_RO_N:
        r->nl = v;
        break;
    case TKB_RO_REPS: {
        long reps = strtol(v, &e, 10);
        if (*v == '\0' || *e || reps < 1 || reps > 1000)
            return tkb_usage(r->cmd, "--reps: expected an integer in 1..1000, got '%s'", v);
        r->reps = (int)reps;
        break;
    }
    case TKB_RO_TIMER_SLACK:
        r->slack = strtoll(v, &e, 10);
        if (*v == '\0' || *e || r->slack < -1)
            return tkb_usage(r->cmd,
                             "--timer-slack: expected nanoseconds >= 0 (or -1: leave alone), "
                             "got '%s'",
                             v);
        break;
    case TKB_RO_TRACE:
        tkb_for_each_item(v, false, want_trace, r);
        break;
    case TKB_RO_LEVEL:
        if (strcmp(v, "core") != 0 && strcmp(v, "executor") != 0 && strcmp(v, "all") != 0)
            return tkb_usage(r->cmd, "--level: expected core, executor or all, got '%s'", v);
        r->level = strcmp(v, "all") == 0 ? NULL : v;
        break;
    case TKB_RO_STEP:
        if (tkb_parse_duration(v, &r->step_ns) != 0)
            return tkb_usage(
                r->cmd, "--step: expected a duration with its unit (1ms, 100us, 250ns), got '%s'",
                v);
        break;
    case TKB_RO_SPEED:
        r->speed = strtod(v, &e);
        if (*v == '\0' || *e || !(r->speed > 0) || r->speed > 1e6)
            return tkb_usage(r->cmd, "--speed: expected a factor > 0 (2: twice as fast), got '%s'",
                             v);
        break;
    case TKB_RO_OUT:
        r->out = v;
        break;
    case TKB_RO_PERTURB:
        r->perturb = strtoll(v, &e, 10);
        if (*v == '\0' || *e || r->perturb < 0)
            return tkb_usage(r->cmd, "--_perturb: expected an expiry number >= 0, got '%s'", v);
        break;
    default:
        return tkb_usage(r->cmd, "internal: option %d has no meaning", k);
    }
    return 0;
}

int tkb_run_req_parse(tkb_run_req *r, int argc, char **argv) {
    tkb_args a;
    tkb_args_start(&a, r->cmd, argc, argv);
    const char *v;
    for (int k; (k = tkb_args_next(&a, &v)) != TKB_ARGS_END;) {
        if (k == TKB_ARGS_HELP)
            return -1;
        if (k == TKB_ARGS_BAD)
            return 2;
        if (k == TKB_ARGS_POS && r->cmd->bit == TKB_IN_RUN)
            return tkb_usage(r->cmd, "unexpected argument '%s' (traces go in --trace)", v);
        if (k == TKB_ARGS_POS)
            tkb_run_req_trace(r, v);
        else if (run_req_option(r, k, v) != 0)
            return 2;
    }
    return 0;
}

void tkb_run_req_free(tkb_run_req *r) {
    for (size_t i = 0; i < r->ntraces; i++)
        free(r->traces[i]);
    r->ntraces = 0;
}

static int cmd_run(const tkb_cmd *cmd, int argc, char **argv) {
    tkb_run_req r = {.cmd = cmd, .suite = "quick", .slack = -2, .perturb = -1};
    int rc = tkb_run_req_parse(&r, argc, argv);
    if (rc != 0) {
        tkb_run_req_free(&r);
        return rc < 0 ? 0 : rc;
    }
    return tkb_run_req_exec(&r, argc, argv);
}

const tkb_cmd tkb_cmd_run = {
    .name = "run",
    .synopsis = "[options]",
    .summary = "run benchmarks into a results folder, with its figures and report",
    .opts = tkb_run_opts,
    .nopts = TKB_RO_COUNT,
    .bit = TKB_IN_RUN,
    .details = "A suite runs every workload at its sizes; --workloads, --peers and --n choose.\n"
               "The folder holds results.csv, manifest.json, the metadata, figures/ and\n"
               "report.md (docs/results-format.md). The replay workloads replay --trace on a\n"
               "grid of --step (docs/replay.md).\n" TKB_RUN_DETAILS,
    .example = "tkbench run --suite smoke --out results/smoke\n"
               "tkbench run --workloads W3 --peers heap,wheel:tick=2ms,slots=256 --reps 5 "
               "--out DIR\n",
    .main = cmd_run,
};
