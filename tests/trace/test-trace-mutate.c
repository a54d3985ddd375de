/* SPDX-License-Identifier: MIT */
/* The trace parsers on mutated copies of the samples: a deterministic fuzz
 * loop (fixed seed) that runs in every test pass, ASan included. Each input
 * goes through tkt_fuzz_one() (trace-fuzz-one.h): no crash, a known status, a
 * refusal that names FILE:LINE, an accepted trace that holds its promises.
 *   tk_trace_mutate SAMPLE... (TKT_MUTATE_ITERS: iterations per sample, default 20000) */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "trace-fuzz-one.h"

#define MAX_INPUT (1 << 16)

static size_t read_sample(const char *path, char *buf) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    size_t n = fread(buf, 1, MAX_INPUT / 2, f);
    fclose(f);
    return n;
}

/* Bytes that matter to the parsers. */
static const char alphabet[] = ",\n\r#-:[]= .0123456789x\t\0startcancelexpire";

/* One mutation of buf[0..*n) (room for MAX_INPUT). */
static void mutate(uint64_t *rng, char *buf, size_t *n) {
    size_t len = *n, at = (size_t)rng_below(rng, len + 1);
    switch (rng_below(rng, 8)) {
    case 0: /* replace a byte */
        if (len > 0)
            buf[at % len] = alphabet[rng_below(rng, sizeof alphabet - 1)];
        break;
    case 1: /* insert a byte */
        if (len + 1 < MAX_INPUT) {
            memmove(buf + at + 1, buf + at, len - at);
            buf[at] = alphabet[rng_below(rng, sizeof alphabet - 1)];
            *n = len + 1;
        }
        break;
    case 2: { /* delete a run */
        size_t k = (size_t)rng_below(rng, 16) + 1;
        if (at + k > len)
            k = len - at;
        memmove(buf + at, buf + at + k, len - at - k);
        *n = len - k;
        break;
    }
    case 3: /* cut the file short */
        *n = at;
        break;
    case 4: { /* duplicate a run elsewhere */
        size_t k = (size_t)rng_below(rng, 200) + 1, to = (size_t)rng_below(rng, len + 1);
        if (at + k > len)
            k = len - at;
        if (len + k < MAX_INPUT) {
            char tmp[256];
            memcpy(tmp, buf + at, k);
            memmove(buf + to + k, buf + to, len - to);
            memcpy(buf + to, tmp, k);
            *n = len + k;
        }
        break;
    }
    case 5: /* a digit run: huge or negative numbers */
        for (size_t k = 0; k < 24 && at + k < len; k++)
            buf[at + k] = k == 0 && rng_below(rng, 2) ? '-' : (char)('0' + rng_below(rng, 10));
        break;
    case 6: /* flip a bit */
        if (len > 0)
            buf[at % len] ^= (char)(1u << rng_below(rng, 8));
        break;
    default: /* swap two bytes */
        if (len > 1) {
            size_t b = (size_t)rng_below(rng, len);
            char c = buf[at % len];
            buf[at % len] = buf[b];
            buf[b] = c;
        }
        break;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tk_trace_mutate SAMPLE...\n");
        return 2;
    }
    const char *it = getenv("TKT_MUTATE_ITERS");
    long iters = it != NULL ? atol(it) : 20000;
    static char sample[MAX_INPUT], buf[MAX_INPUT];
    uint64_t rng = 20261126;
    long done = 0;
    size_t accepted = 0;
    for (int s = 1; s < argc; s++) {
        size_t n0 = read_sample(argv[s], sample);
        if (!tkt_fuzz_one(sample, n0, NULL)) {
            fprintf(stderr, "%s itself fails\n", argv[s]);
            return 1;
        }
        for (long i = 0; i < iters; i++) {
            size_t n = n0;
            memcpy(buf, sample, n0);
            int k = 1 + (int)rng_below(&rng, 6);
            for (int j = 0; j < k; j++)
                mutate(&rng, buf, &n);
            if (!tkt_fuzz_one(buf, n, &accepted)) {
                char path[64];
                snprintf(path, sizeof path, "trace-mutate-failure-%d-%ld", s, i);
                FILE *f = fopen(path, "wb");
                if (f != NULL) {
                    fwrite(buf, 1, n, f);
                    fclose(f);
                }
                fprintf(stderr, "input %ld of %s breaks a promise: written to %s\n", i, argv[s],
                        path);
                return 1;
            }
            done++;
        }
    }
    /* 4 parses per input (CSV, perf text with 3 sets of options) */
    printf("trace mutate: %ld mutated inputs, %zu of their %ld parses accepted, every promise "
           "held\n",
           done, accepted, 4 * done);
    return 0;
}
