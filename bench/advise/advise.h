/* SPDX-License-Identifier: MIT */
/* tkbench advise: which engine, with which parameters, for a recorded trace
 * (docs/advisor.md has the rules and the measurements that justify them).
 * The advisor's room:
 *   advise.c       the trace's shape, the candidates derived from it, each
 *                  one measured (core replays, a counting allocator), its
 *                  lateness found or modelled, the needs applied, the ranking;
 *   results-dir.c  what a results folder knows (lateness, the floor's wake-up);
 *   report.c       the table, where each figure comes from, the recommendation.
 * The command, its options and its steps: cli/cmd-advise.c. All of it runs
 * on the main thread. */
#ifndef TKB_ADVISE_H
#define TKB_ADVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/replay.h"

/* The workloads whose rows advise reads from a results folder: their names
 * come from their descriptors (bench/workloads/). */
extern const tkb_workload tkb_wl_w3_latency, tkb_wl_replay_exec, tkb_wl_floor;
#define ADV_LATE_P99 "late_p99_us"           /* W3's and replay_exec's p99 lateness */
#define ADV_WAKE_P99 "nanosleep_late_p99_us" /* the floor's sleep lateness p99 */

/* The grid step of an exact engine's replay: its executor wakes for each
 * deadline, so its expiry batches are those of a fine grid. */
#define ADV_EXACT_STEP_NS INT64_C(1000)
#define ADV_DEFAULT_REPS 5
#define ADV_MAX_TICKS 3
#define ADV_MAX_CANDS (1 + 2 * ADV_MAX_TICKS)
/* By cost, a difference of less than this share is no difference (the
 * repetitions of one candidate spread about that much, docs/advisor.md). */
#define ADV_COST_TIE 0.05

/* Where a figure comes from. */
typedef enum adv_src {
    ADV_SRC_NONE,       /* not known */
    ADV_SRC_HERE,       /* measured by this command on this trace */
    ADV_SRC_DIR_REPLAY, /* the results folder: replay_exec of this trace, same peer */
    ADV_SRC_DIR_W3,     /* the results folder: the W3 latency workload, same peer */
    ADV_SRC_MODEL,      /* modelled from the tick and the folder's floor (nanosleep p99) */
    ADV_SRC_MODEL_TICK, /* modelled from the tick alone: wake-up latency unknown */
} adv_src;
/* Each source's tag in the table ("DIR:W3", "model"). */
extern const char *const tkb_adv_src_tag[];

/* What ranks the candidates; its names for --criterion (tkb_adv_crit_name). */
typedef enum adv_criterion { ADV_CRIT_COST, ADV_CRIT_LATENESS, ADV_CRIT_MEMORY } adv_criterion;
extern const char *const tkb_adv_crit_name[3];

typedef struct adv_needs {
    int64_t lateness_ns; /* 0: none */
    double memory_bytes; /* 0: none */
    double cpu_pct;      /* 0: none */
} adv_needs;

typedef struct adv_cand {
    char spec_in[TKB_SPEC_MAX];
    char why[160]; /* how its parameters were chosen */
    tkb_peer peer;
    bool valid;  /* the spec parsed and replays */
    bool ticked; /* TK_QUEUE_CAP_TICKED */
    int64_t tick_ns;
    int64_t step_ns;
    char excluded[320]; /* "" or why it is out */
    /* cost, measured here (ns): first pass per event, second pass per op */
    double event_ns, event_min, event_max;
    double start_ns, modify_ns, cancel_ns, expire_ns;
    /* lateness p99 (ns) */
    double late_ns;
    adv_src late_src;
    /* memory, measured here: core state + peak allocated + peak armed nodes */
    size_t state_bytes, alloc_peak, peak_armed;
    double mem_bytes;
    double cpu_pct; /* event_ns x events per second of the trace, share of one core */
} adv_cand;

/* The trace's shape. */
typedef struct adv_shape {
    uint64_t starts, cancels, expires;       /* events of each kind in the trace */
    int64_t delay_p50, delay_p99, delay_max; /* deadline - start time, clamped at 0 */
    double rate;                             /* START and CANCEL events per second */
} adv_shape;

/* A row of a results folder that advise uses (results-dir.c). */
typedef struct adv_row {
    char peer[TKB_SPEC_MAX]; /* canonical spec when it parses */
    char workload[96];
    char metric[64];
    double value;
} adv_row;

typedef struct adv_rows {
    adv_row *v;
    size_t n, cap;
} adv_rows;

/* An advice in the making: what it was asked, what it found. */
typedef struct tkb_advice {
    /* asked (cli/cmd-advise.c) */
    const tkt_trace *t;
    const char *trace_path; /* as given (the recommendation's command line) */
    const char *dir;        /* --results, or NULL */
    adv_needs needs;
    adv_criterion crit;
    int reps;
    /* found */
    adv_rows rows;  /* the folder's rows advise uses (dir != NULL) */
    double wake_ns; /* the folder's floor nanosleep p99 (ns), or NAN */
    adv_shape shape;
    tkb_replay_ref refs[ADV_MAX_CANDS]; /* the trace's references, one per grid step */
    size_t nrefs;
    const tkb_replay_ref *exact; /* the one at ADV_EXACT_STEP_NS */
    adv_cand cs[ADV_MAX_CANDS];
    size_t nc;
} tkb_advice;

/* ---- advise.c ----------------------------------------------------------------- */
/* The trace's shape and its reference at the exact step. Returns 0, or the
 * exit status with a message on stderr (1: out of memory; 2: nothing to
 * replay). */
int tkb_adv_start(tkb_advice *a);
/* The trace's shape on stdout: events, rate, delays, re-arms and cancels. */
void tkb_adv_print_trace(const tkb_advice *a);
/* Derives the candidates and measures each one (progress on stderr); a
 * candidate that cannot be measured, or misses a need, is excluded with the
 * reason. Returns 0, or 1 if a replay failed or differs from the reference. */
int tkb_adv_measure(tkb_advice *a);
/* Sorts the candidates by the criterion, excluded ones last; by cost, a tie
 * (ADV_COST_TIE) goes to the lowest lateness, then memory. */
void tkb_adv_rank(tkb_advice *a);
/* c's figure for criterion k (lateness: 0 when nothing is known). */
double tkb_adv_crit_value(const adv_cand *c, adv_criterion k);
/* Frees what the advice holds (the rows, the references). */
void tkb_adv_free(tkb_advice *a);

/* ---- results-dir.c -------------------------------------------------------------- */
/* Reads DIR/results.csv, keeping the rows advise uses. Returns 0, or 2 with
 * a message on stderr (no such folder, no results.csv, a bad header, nothing
 * usable). */
int tkb_adv_rows_read(const char *dir, adv_rows *out);
/* Median of the values of (peer, workload, metric); peer NULL: any. NAN if none. */
double tkb_adv_rows_median(const adv_rows *d, const char *peer, const char *workload,
                           const char *metric);

/* ---- report.c -------------------------------------------------------------------- */
/* c's lateness as the table shows it (">= 1 ms", "wake-up only"). */
void tkb_adv_late_text(char *b, size_t len, const adv_cand *c);
/* A size for people ("40 KiB"; "?" when unknown). */
void tkb_adv_bytes_text(char *b, size_t len, double v);
/* The table of candidates (ranked), where the figures come from, a note when
 * the folder knew none of their lateness, and the recommendation, on stdout.
 * Returns 0, or 1 if no candidate meets the needs. */
int tkb_adv_report(const tkb_advice *a);

#endif
