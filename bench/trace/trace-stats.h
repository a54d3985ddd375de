/* SPDX-License-Identifier: MIT */
/* tkbench: a timer trace's summary and its data files (trace-stats.c,
 * docs/traces.md): what `tkbench trace stats` prints and writes
 * (cli/cmd-trace.c), and what a replay writes beside its results in
 * traces/<name>/. The figures are drawn from those files by the renderer
 * (plots/render.py trace). Part of tkbench, not of the tkb_trace library. */
#ifndef TKB_TRACE_STATS_H
#define TKB_TRACE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

/* The population over time is kept at this many instants. */
#define TKB_TRACE_NBUCKETS 1000

/* What became of one start. */
enum {
    TKB_END_EXPIRED,
    TKB_END_CANCELLED,
    TKB_END_REARMED,
    TKB_END_UNSEEN,
    TKB_END_ARMED,
    TKB_NEND
};

typedef struct tkb_trace_summary {
    size_t by_op[3], by_cls[3];
    size_t ends[TKB_NEND]; /* starts by TKB_END_* */
    size_t cancel_unarmed, expire_unarmed;
    size_t max_armed, armed_at_end;
    int64_t max_armed_t;
    double mean_armed;
    bool has_expire;
    int64_t *delays; /* deadline - start time of each start, ascending (owned) */
    size_t ndelays;
    /* armed timers at the end of each 1/TKB_TRACE_NBUCKETS of the trace, and the most within it */
    double pop_t[TKB_TRACE_NBUCKETS];
    size_t pop_end[TKB_TRACE_NBUCKETS], pop_max[TKB_TRACE_NBUCKETS];
} tkb_trace_summary;

/* Summarises t into *s. Returns 0, or 1 when out of memory. */
int tkb_trace_summarise(const tkt_trace *t, tkb_trace_summary *s);
void tkb_trace_summary_free(tkb_trace_summary *s);
/* Prints the summary to f; st: what the perf import found (NULL for a
 * neutral CSV, whose metadata lines are printed instead). */
void tkb_trace_summary_print(FILE *f, const tkt_trace *t, const tkb_trace_summary *s,
                             const tkt_import_stats *st);
/* Prints what the perf import found (lines, HZ, what was dropped, by event). */
void tkb_trace_import_print(FILE *f, const tkt_import_stats *st);
/* Writes summary.txt, population.dat and delays.dat into dir (made if
 * missing). Returns 0, or 1 with a message on stderr. */
int tkb_trace_summary_write(const char *dir, const tkt_trace *t, const tkb_trace_summary *s,
                            const tkt_import_stats *st);
/* Summarises t and writes its files into dir, printing nothing else: a
 * replay's traces/<name>/. Returns 0, or 1 with a message on stderr. */
int tkb_trace_stats_write(const tkt_trace *t, const char *dir);

#endif
