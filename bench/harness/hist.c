/* SPDX-License-Identifier: MIT */
/* tkbench: log-linear histogram; see hist.h. */
#include "hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline unsigned slot_of(uint64_t v) {
    if (v < 2u * TKB_HIST_HALF)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned e = msb - (TKB_HIST_SUB_BITS - 1); /* >= 1: v >> e in [HALF, 2*HALF) */
    if (e > TKB_HIST_MAX_EXP)
        return TKB_HIST_SLOTS - 1;
    return 2u * TKB_HIST_HALF + (e - 1u) * TKB_HIST_HALF + (unsigned)((v >> e) - TKB_HIST_HALF);
}

/* Highest value that maps to `slot`. */
static inline uint64_t slot_high(unsigned slot) {
    if (slot < 2u * TKB_HIST_HALF)
        return slot;
    unsigned e = (slot - 2u * TKB_HIST_HALF) / TKB_HIST_HALF + 1u;
    uint64_t m = (slot - 2u * TKB_HIST_HALF) % TKB_HIST_HALF + TKB_HIST_HALF;
    return ((m + 1u) << e) - 1u;
}

int tkb_hist_init(tkb_hist *h) {
    memset(h, 0, sizeof *h);
    h->late = calloc(TKB_HIST_SLOTS, sizeof(uint64_t));
    h->early = calloc(TKB_HIST_SLOTS, sizeof(uint64_t));
    if (h->late == NULL || h->early == NULL) {
        tkb_hist_destroy(h);
        return -1;
    }
    tkb_hist_reset(h);
    return 0;
}

void tkb_hist_destroy(tkb_hist *h) {
    free(h->late);
    free(h->early);
    h->late = h->early = NULL;
}

void tkb_hist_reset(tkb_hist *h) {
    memset(h->late, 0, TKB_HIST_SLOTS * sizeof(uint64_t));
    memset(h->early, 0, TKB_HIST_SLOTS * sizeof(uint64_t));
    h->count = h->early_count = 0;
    h->min = INT64_MAX;
    h->max = INT64_MIN;
    h->sum = h->sumsq = 0;
}

void tkb_hist_record(tkb_hist *h, int64_t v) {
    if (v >= 0) {
        h->late[slot_of((uint64_t)v)]++;
    } else {
        h->early[slot_of(v == INT64_MIN ? (uint64_t)INT64_MAX : (uint64_t)-v)]++;
        h->early_count++;
    }
    h->count++;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->sum += (double)v;
    h->sumsq += (double)v * (double)v;
}

void tkb_hist_merge(tkb_hist *dst, const tkb_hist *src) {
    for (unsigned i = 0; i < TKB_HIST_SLOTS; i++) {
        dst->late[i] += src->late[i];
        dst->early[i] += src->early[i];
    }
    dst->count += src->count;
    dst->early_count += src->early_count;
    if (src->count) {
        if (src->min < dst->min)
            dst->min = src->min;
        if (src->max > dst->max)
            dst->max = src->max;
    }
    dst->sum += src->sum;
    dst->sumsq += src->sumsq;
}

/* Value of the element of 1-based rank `rank` in signed order. */
static int64_t value_at_rank(const tkb_hist *h, uint64_t rank) {
    if (rank <= h->early_count) {
        /* early values, most negative first: walk magnitudes from the top */
        uint64_t seen = 0;
        for (int i = TKB_HIST_SLOTS - 1; i >= 0; i--) {
            seen += h->early[i];
            if (seen >= rank)
                return -(int64_t)slot_high((unsigned)i);
        }
        return h->min;
    }
    uint64_t seen = h->early_count;
    for (unsigned i = 0; i < TKB_HIST_SLOTS; i++) {
        seen += h->late[i];
        if (seen >= rank) {
            int64_t v = (int64_t)slot_high(i);
            return v > h->max ? h->max : v;
        }
    }
    return h->max;
}

int64_t tkb_hist_percentile(const tkb_hist *h, double p) {
    if (h->count == 0)
        return 0;
    if (p <= 0)
        return h->min;
    if (p >= 100)
        return h->max;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
    if (rank < 1)
        rank = 1;
    if (rank > h->count)
        rank = h->count;
    return value_at_rank(h, rank);
}

double tkb_hist_mean(const tkb_hist *h) {
    return h->count ? h->sum / (double)h->count : 0.0;
}

int tkb_hist_write_hgrm(const tkb_hist *h, FILE *f) {
    const double us = 1000.0;
    fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    if (h->count > 0) {
        const int ticks_per_half = 5;
        double p = 0.0; /* percentile as a fraction */
        for (;;) {
            uint64_t rank = (uint64_t)ceil(p * (double)h->count);
            if (rank < 1)
                rank = 1;
            int64_t v = p == 0.0 ? h->min : value_at_rank(h, rank);
            fprintf(f, "%12.3f %2.12f %10llu %14.2f\n", (double)v / us, p, (unsigned long long)rank,
                    1.0 / (1.0 - p));
            /* HdrHistogram's reporting levels: ticks halve the remaining distance */
            double half = floor(log2(1.0 / (1.0 - p))) + 1.0;
            double step = 1.0 / (ticks_per_half * pow(2.0, half));
            p += step;
            if (p >= 1.0 || 1.0 / (1.0 - p) > (double)h->count * 2.0 || rank >= h->count)
                break;
        }
        fprintf(f, "%12.3f %2.12f %10llu\n", (double)h->max / us, 1.0,
                (unsigned long long)h->count);
    }
    double mean = tkb_hist_mean(h);
    double var = h->count ? h->sumsq / (double)h->count - mean * mean : 0.0;
    fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", mean / us,
            var > 0 ? sqrt(var) / us : 0.0);
    fprintf(f, "#[Max     = %12.3f, Total count    = %12llu]\n",
            h->count ? (double)h->max / us : 0.0, (unsigned long long)h->count);
    fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", TKB_HIST_MAX_EXP + 1,
            2 * TKB_HIST_HALF);
    return ferror(f) ? -1 : 0;
}
