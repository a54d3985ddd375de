/* SPDX-License-Identifier: MIT */
/* tkbench: what a run writes into its results folder (docs/results-format.md):
 * results.csv and the headline (results.c), metadata (metadata.c) and
 * manifest.json (manifest.c). Called by the CLI (cli/run-exec.c,
 * cli/cmd-manifest.c) on its main thread. */
#ifndef TKB_RUN_H
#define TKB_RUN_H

#include <jansson.h>

#include "tkbench.h"

/* Units a metric may have: results.csv's unit column, and how figures and
 * tables write it (the manifest's `units`). */
typedef struct tkb_unit {
    const char *name;      /* "us" */
    const char *text;      /* "µs" */
    bool si;               /* axes reaching 1e4 get SI prefixes */
    const char *si_suffix; /* after the prefix ("B" for bytes) */
} tkb_unit;
extern const tkb_unit tkb_units[];
extern const size_t tkb_unit_count;
const tkb_unit *tkb_unit_find(const char *name);

/* One measured value: a row of results.csv. */
typedef struct tkb_row {
    const tkb_case *c;
    const tkb_metric *m;
    int rep; /* Google Benchmark's repetition_index */
    double value;
} tkb_row;

typedef struct tkb_rows {
    tkb_row *v;
    size_t n, cap;
} tkb_rows;

/* Reads Google Benchmark's JSON into rows, one per (case, metric,
 * repetition). A failed benchmark, or a counter its workload does not
 * declare, is reported on stderr and counted in *failed. *context gets GB's
 * "context" object (a new reference, or NULL). Returns 0, or -1 if the file
 * cannot be read. */
int tkb_results_collect(const char *json_path, const tkb_case *cases, size_t ncases, tkb_rows *rows,
                        int *failed, json_t **context);
/* Writes results.csv. Returns 0 or -1. */
int tkb_results_write_csv(const char *path, const tkb_rows *rows);
/* Splits a line of results.csv (RFC 4180 quoting, no line break inside a
 * field) in place into at most max fields; returns how many. */
int tkb_csv_split(char *line, char **f, int max);
/* Prints the headline tables (metrics with a tkb_headline) to stdout:
 * medians over repetitions at each peer's largest n. */
void tkb_results_headline(const tkb_rows *rows, const tkb_peer *peers, size_t npeers);
void tkb_rows_free(tkb_rows *rows);

/* The workloads of a run, each with its plan. */
typedef struct tkb_selected {
    const tkb_workload *wl;
    tkb_plan plan;
} tkb_selected;

/* metadata.json and metadata.txt. suite_name: the suite, or "custom" when
 * options changed it. `gb_context` may be NULL (before the run). */
json_t *tkb_metadata_build(const char *suite_name, const tkb_selected *ws, size_t nws,
                           const tkb_peer *peers, size_t npeers, int argc, char **argv,
                           json_t *gb_context);
int tkb_metadata_write(const char *dir, json_t *m);

/* manifest.json for a run: the selected workloads, the peers, the figures
 * derived from the descriptors, and the histogram files written. */
int tkb_manifest_write_run(const char *dir, const tkb_selected *ws, size_t nws,
                           const tkb_peer *peers, size_t npeers, const tkb_case *cases,
                           size_t ncases);
/* `tkbench manifest DIR`: writes a manifest for a folder that has none, from
 * its results.csv and hist/ and the descriptors compiled in. Returns the exit
 * status (0; 1 on I/O failure; 2 on bad input). */
int tkb_manifest_synthesize(const char *dir, bool force);

#endif
