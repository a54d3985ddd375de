/* SPDX-License-Identifier: MIT */
/* tkbench: a log-linear latency histogram (HdrHistogram-like buckets).
 *
 * Values are signed nanoseconds. Non-negative values go into log-linear
 * buckets with 2048 sub-buckets per power of two (3 significant digits:
 * relative error below 1/1024; exact below 2048 ns); negative values (early
 * timers) go into a mirror histogram of their magnitude and are counted in
 * `early`. Percentiles order the early values (most negative first) before the
 * late ones, so a peer that fires early shows negative low percentiles.
 * Google Benchmark's statistics are across repetitions; this is across
 * operations. Not thread-safe: one recording thread at a time. */
#ifndef TKB_HIST_H
#define TKB_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TKB_HIST_SUB_BITS 11
#define TKB_HIST_HALF (1 << (TKB_HIST_SUB_BITS - 1)) /* 1024 */
#define TKB_HIST_MAX_EXP 42                          /* values up to ~2^52 ns */
#define TKB_HIST_SLOTS (2 * TKB_HIST_HALF + TKB_HIST_MAX_EXP * TKB_HIST_HALF)

typedef struct tkb_hist {
    uint64_t *late;  /* TKB_HIST_SLOTS counters, values >= 0 */
    uint64_t *early; /* TKB_HIST_SLOTS counters, magnitudes of values < 0 */
    uint64_t count;
    uint64_t early_count;
    int64_t min, max;
    double sum, sumsq;
} tkb_hist;

/* Returns 0 or -1 (out of memory). */
int tkb_hist_init(tkb_hist *h);
void tkb_hist_destroy(tkb_hist *h);
void tkb_hist_reset(tkb_hist *h);
void tkb_hist_record(tkb_hist *h, int64_t value_ns);
/* Adds every count of `src` into `dst`. */
void tkb_hist_merge(tkb_hist *dst, const tkb_hist *src);
/* The value at percentile p (0..100), as the highest value equivalent to its
 * bucket (exact for |v| < 2048 ns); min at 0, max at 100. 0 if empty. */
int64_t tkb_hist_percentile(const tkb_hist *h, double p);
double tkb_hist_mean(const tkb_hist *h);
/* Writes HdrHistogram's outputPercentileDistribution text (values in
 * microseconds, 5 ticks per half distance). Returns 0 or -1. */
int tkb_hist_write_hgrm(const tkb_hist *h, FILE *f);

#endif
