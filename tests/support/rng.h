/* SPDX-License-Identifier: MIT */
/* timerkit tests: a deterministic random number generator (splitmix64), so
 * that randomised tests replay the same sequence from the same seed. */
#ifndef TK_RNG_H
#define TK_RNG_H

#include <stdint.h>

/* The next number of the sequence whose state is *s. */
static inline uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A number in [0, n) (0 when n is 0). */
static inline uint64_t rng_below(uint64_t *s, uint64_t n) {
    return n == 0 ? 0 : rng_next(s) % n;
}

#endif
