/* SPDX-License-Identifier: MIT */
/* tkbench: running a run's plan (run-select.c) and writing its results
 * folder (docs/results-format.md): the folder and its first metadata, the
 * cases registered with Google Benchmark and run (raw/gbench.json, hist/),
 * then results.csv, manifest.json, each replayed trace's shape, the final
 * metadata, and the headline tables on stdout. One run per process, on the
 * main thread; every phase returns an exit status and one cleanup path
 * (tkb_run_req_exec()) frees what the run holds, whichever phase stopped it. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "trace/trace-stats.h"
#include "util.h"

/* A run in progress: its plan and what running it gives. */
typedef struct run {
    tkb_run_plan *plan;
    char out[PATH_MAX]; /* the results folder (tkb_the_run.out_dir points here) */
    double wall;        /* seconds the cases took */
    tkb_rows rows;
    int errors;      /* failed benchmarks, and trace shapes that could not be written */
    json_t *context; /* Google Benchmark's "context", or NULL */
} run;

/* The results folder (--out, else results/<date>-<suite name>) with raw/ and
 * hist/, and the metadata known before the run. Returns 0, 1 or 2. */
static int open_folder(run *u, const tkb_run_req *r, int argc, char **argv) {
    const tkb_run_plan *pl = u->plan;
    if (r->out != NULL && strlen(r->out) > PATH_MAX - 64)
        return tkb_usage(r->cmd, "--out: path too long");
    if (r->out != NULL) {
        snprintf(u->out, sizeof u->out, "%s", r->out);
    } else {
        char stamp[64];
        time_t t = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&t));
        snprintf(u->out, sizeof u->out, "results/%s-%s", stamp, pl->suite_name);
    }
    tkb_the_run.out_dir = u->out;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/raw", u->out);
    if (tkb_mkdir_p(path) != 0) {
        fprintf(stderr, "tkbench: cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/hist", u->out);
    tkb_mkdir_p(path);
    json_t *meta = tkb_metadata_build(pl->suite_name, pl->works, pl->nworks, pl->peers, pl->npeers,
                                      argc, argv, NULL);
    tkb_metadata_write(u->out, meta);
    json_decref(meta);
    return 0;
}

/* Registers every case with Google Benchmark, timed as its kind says.
 * Returns 0, or 1 if one cannot be. */
static int register_cases(const tkb_run_plan *pl) {
    double est = 0;
    for (size_t i = 0; i < pl->ncases; i++) {
        tkb_case *c = &pl->cases[i];
        est += c->est_seconds;
        tk_gb_bench *b = tk_gb_register(c->name, tkb_progress_case_body, c);
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
    tkb_fmt_secs(est_s, sizeof est_s, est);
    fprintf(stderr,
            "tkbench: suite %s: %zu benchmarks, %zu workloads x %zu peers, estimated %s; "
            "writing %s\n",
            pl->suite_name, pl->ncases, pl->nworks, pl->npeers, est_s, tkb_the_run.out_dir);
    return 0;
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

/* Registers and runs the cases into raw/gbench.json, then writes the
 * histograms of those that ran. Returns 0 or 1. */
static int run_cases(run *u, char *argv0) {
    const tkb_run_plan *pl = u->plan;
    if (register_cases(pl) != 0)
        return 1;
    /* Keep freed memory in the process (blocks under 32 MB from the heap, no
     * trimming): a later repetition reuses warm pages, as a long-running
     * program does, instead of paying first-touch faults inside timed loops. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    char gbout[PATH_MAX + 32];
    snprintf(gbout, sizeof gbout, "--benchmark_out=%s/raw/gbench.json", u->out);
    char *gargv[] = {argv0, gbout, "--benchmark_out_format=json", NULL};
    tkb_progress_start(pl->cases, pl->ncases);
    int ran = tk_gb_run(3, gargv);
    u->wall = tkb_progress_elapsed();
    if (ran < 0) {
        fprintf(stderr, "tkbench: Google Benchmark rejected its arguments\n");
        return 1;
    }
    for (size_t i = 0; i < pl->ncases; i++)
        if (pl->cases[i].hist != NULL && pl->cases[i].started)
            write_hgrm(&pl->cases[i], pl->cases[i].hist);
    return 0;
}

/* results.csv and manifest.json from raw/gbench.json, and each replayed
 * trace's shape (population over time, delays) beside them in
 * traces/<name>/, which the report shows next to the replay's figures.
 * Returns 0 or 1. */
static int write_results(run *u) {
    const tkb_run_plan *pl = u->plan;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/raw/gbench.json", u->out);
    if (tkb_results_collect(path, pl->cases, pl->ncases, &u->rows, &u->errors, &u->context) != 0)
        return 1;
    snprintf(path, sizeof path, "%s/results.csv", u->out);
    if (tkb_results_write_csv(path, &u->rows) != 0) {
        fprintf(stderr, "tkbench: cannot write %s\n", path);
        return 1;
    }
    if (tkb_manifest_write_run(u->out, pl->works, pl->nworks, pl->peers, pl->npeers, pl->cases,
                               pl->ncases) != 0)
        return 1;
    for (size_t i = 0; tkb_the_run.replay != NULL && i < tkb_the_run.replay->count; i++) {
        const tkt_trace *t = &tkb_the_run.replay->traces[i].trace;
        snprintf(path, sizeof path, "%s/traces/%s", u->out, t->name);
        if (tkb_trace_stats_write(t, path) != 0)
            u->errors++;
    }
    return 0;
}

/* The metadata with what the run gave (Google Benchmark's context, the wall
 * time, the failures), then the headline tables and the folder on stdout. */
static void finish(run *u, int argc, char **argv) {
    const tkb_run_plan *pl = u->plan;
    json_t *meta = tkb_metadata_build(pl->suite_name, pl->works, pl->nworks, pl->peers, pl->npeers,
                                      argc, argv, u->context);
    json_object_set_new(meta, "wall_seconds", json_real(round(u->wall * 10) / 10));
    json_object_set_new(meta, "failed_benchmarks", json_integer(u->errors));
    tkb_metadata_write(u->out, meta);
    json_decref(meta);
    tkb_results_headline(&u->rows, pl->peers, pl->npeers);
    char w[32];
    tkb_fmt_secs(w, sizeof w, u->wall);
    printf("\n%zu benchmarks, %zu rows, %d failed, wall %s\nresults: %s\n", pl->ncases, u->rows.n,
           u->errors, w, u->out);
}

int tkb_run_req_exec(tkb_run_req *r, int argc, char **argv) {
    run u = {.plan = calloc(1, sizeof *u.plan)};
    int rc = 1;
    if (u.plan != NULL)
        u.plan->cases = calloc(TKB_MAX_CASES, sizeof *u.plan->cases);
    if (u.plan == NULL || u.plan->cases == NULL)
        fprintf(stderr, "tkbench: out of memory\n");
    else if ((rc = tkb_run_plan_make(u.plan, r)) == 0 &&
             (rc = open_folder(&u, r, argc, argv)) == 0 && (rc = run_cases(&u, argv[0])) == 0 &&
             (rc = write_results(&u)) == 0) {
        finish(&u, argc, argv);
        rc = u.errors ? 1 : 0;
    }
    tkb_rows_free(&u.rows);
    json_decref(u.context);
    if (u.plan != NULL) {
        tkb_run_plan_close(u.plan);
        free(u.plan->cases);
    }
    free(u.plan);
    tkb_run_req_free(r);
    return rc;
}
