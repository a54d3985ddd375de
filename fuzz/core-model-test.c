/* SPDX-License-Identifier: MIT */
/* timerkit: the deterministic core-model test (CTest core_model).
 *
 * Generates programs for the core-model interpreter (core-model.h) from a
 * fixed seed and runs each on the pure core of every registered engine that
 * has one, checked against the model of the core contract: the core-level
 * model test every engine gets by being registered. The same interpreter
 * and checks run under the fuzzer (fuzz_engines.c); here the programs are
 * random but shaped: each program has a profile (insert-heavy, time-heavy,
 * removal-heavy, or even) that weights its opcodes, and a header with random
 * flags, origin and parameter choices, so every engine runs under many
 * parameter sets, both resizing modes and the init allocation sweep.
 *
 *   tk_core_model [PROGRAMS [SEED]]     (default 3000 programs, seed 20261126;
 *                                        TK_VALGRIND=1 divides PROGRAMS by 10)
 *
 * Prints, per engine, the programs, operations and core calls run. Fails
 * (abort) on a departure from the contract, and exits 1 if no engine has a
 * core or an engine ran no operation. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core-model.h"

static uint64_t rng_state;

static uint64_t rng(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static uint8_t rng8(void) {
    return (uint8_t)(rng() >> 56);
}

/* Opcode weights of each profile, indexed by enum tkm_op. */
static const unsigned profiles[4][TKM_OP_COUNT] = {
    /* even */
    {6, 0, 2, 3, 4, 0, 3, 2, 1, 1, 1, 1, 1, 1, 1, 3},
    /* insert-heavy: many nodes, ties, bursts */
    {12, 0, 4, 2, 3, 0, 2, 1, 1, 1, 1, 2, 2, 0, 1, 2},
    /* time-heavy: small steps, grid points, walks */
    {5, 0, 1, 1, 6, 0, 5, 1, 0, 1, 0, 1, 0, 0, 1, 8},
    /* removal-heavy: remove, remove_if, cancel, drain, reschedule */
    {8, 0, 3, 6, 2, 0, 1, 2, 3, 3, 2, 3, 1, 1, 1, 1},
};

static uint8_t pick_op(const unsigned *weights) {
    unsigned total = 0;
    for (int i = 0; i < TKM_OP_COUNT; i++)
        total += weights[i];
    unsigned r = (unsigned)(rng() % total);
    for (int i = 0; i < TKM_OP_COUNT; i++) {
        if (r < weights[i])
            return (uint8_t)i;
        r -= weights[i];
    }
    return 0;
}

int main(int argc, char **argv) {
    long programs = argc > 1 ? strtol(argv[1], NULL, 10) : 3000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : UINT64_C(20261126);
    const char *vg = getenv("TK_VALGRIND");
    if (argc <= 1 && vg != NULL && *vg != '\0' && *vg != '0')
        programs /= 10;
    if (programs <= 0) {
        fprintf(stderr, "usage: tk_core_model [PROGRAMS [SEED]]\n");
        return 2;
    }
    rng_state = seed * UINT64_C(0x9e3779b97f4a7c15) | 1;

    static tkm_stats stats;
    static uint8_t buf[TKM_HEADER_SIZE + 400 * TKM_OP_SIZE];
    uint64_t ops = 0;
    clock_t start = clock();
    for (long p = 0; p < programs; p++) {
        size_t len = 0;
        for (int i = 0; i < TKM_HEADER_SIZE; i++)
            buf[len++] = rng8();
        /* mostly the flags off, the sweep and owner resizing each a quarter */
        buf[0] = (uint8_t)((rng() % 4 == 0 ? TKM_FLAG_OWNER_RESIZE : 0) |
                           (rng() % 4 == 0 ? TKM_FLAG_ALLOC_SWEEP : 0));
        const unsigned *weights = profiles[p % 4];
        size_t n = 10 + (size_t)(rng() % 390);
        for (size_t k = 0; k < n; k++) {
            buf[len++] = pick_op(weights);
            for (int i = 1; i < TKM_OP_SIZE; i++)
                buf[len++] = rng8();
        }
        ops += tkm_run(buf, len, &stats);
    }
    double secs = (double)(clock() - start) / CLOCKS_PER_SEC;

    int rc = 0;
    if (stats.engines == 0) {
        fprintf(stderr, "core_model: no registered engine has a core\n");
        rc = 1;
    }
    for (size_t e = 0; e < stats.engines; e++) {
        const tkm_engine_stats *st = &stats.engine[e];
        printf("core_model: %-8s %6" PRIu64 " programs %9" PRIu64 " ops %11" PRIu64
               " core calls %9" PRIu64 " handed out %5" PRIu64 " resizes %4" PRIu64
               " parameter fallbacks\n",
               st->name, st->programs, st->ops, st->calls, st->handed_out, st->resizes,
               st->fallbacks);
        if (st->programs != (uint64_t)programs || st->ops == 0) {
            fprintf(stderr, "core_model: engine %s ran %" PRIu64 " of %ld programs\n", st->name,
                    st->programs, programs);
            rc = 1;
        }
    }
    printf("core_model: %ld programs, %" PRIu64 " operations, seed %" PRIu64
           ", %.1f s of CPU: %s\n",
           programs, ops, seed, secs, rc == 0 ? "no mismatch" : "FAILED");
    return rc;
}
