/* SPDX-License-Identifier: MIT */
/* timerkit: a grid of ticks laid from an origin, the arithmetic the ticked
 * cores share (the wheel, the hierarchical wheel). Internal.
 *
 * Tick k is the instant origin + k * tick_ns. Ticks are uint64 counted from
 * the origin, so deadlines anywhere in int64 map onto them (the distance to
 * the origin is taken in uint64); an instant saturates at INT64_MAX. The
 * division by the tick is a multiply-high by a reciprocal and at most a
 * couple of corrections. */
#ifndef TIMERKIT_TICK_GRID_H
#define TIMERKIT_TICK_GRID_H

#include <stdint.h>

__extension__ typedef unsigned __int128 tk__u128;
__extension__ typedef __int128 tk__i128;

typedef struct tk__grid {
    int64_t origin_ns; /* the instant of tick 0 */
    int64_t tick_ns;   /* > 0 */
    uint64_t recip;    /* floor(2^64 / tick_ns); 0 when tick_ns is 1 */
} tk__grid;

/* A grid from origin_ns with ticks of tick_ns (> 0). */
static inline void tk__grid_init(tk__grid *g, int64_t origin_ns, int64_t tick_ns) {
    g->origin_ns = origin_ns;
    g->tick_ns = tick_ns;
    g->recip = tick_ns == 1 ? 0 : (uint64_t)(((tk__u128)1 << 64) / (uint64_t)tick_ns);
}

/* floor(x / tick_ns). */
static inline uint64_t tk__grid_div(const tk__grid *g, uint64_t x) {
    if (g->recip == 0)
        return x;
    uint64_t q = (uint64_t)(((tk__u128)x * g->recip) >> 64);
    uint64_t r = x - q * (uint64_t)g->tick_ns;
    while (r >= (uint64_t)g->tick_ns) {
        q++;
        r -= (uint64_t)g->tick_ns;
    }
    return q;
}

/* The first tick whose instant is at or after d: ceil((d - origin) / tick),
 * 0 if d <= origin. */
static inline uint64_t tk__grid_ceil(const tk__grid *g, int64_t d) {
    if (d <= g->origin_ns)
        return 0;
    uint64_t diff = (uint64_t)d - (uint64_t)g->origin_ns;
    uint64_t q = tk__grid_div(g, diff);
    return q + (q * (uint64_t)g->tick_ns != diff);
}

/* The last tick whose instant is at or before t: floor((t - origin) / tick),
 * 0 if t <= origin. */
static inline uint64_t tk__grid_floor(const tk__grid *g, int64_t t) {
    if (t <= g->origin_ns)
        return 0;
    return tk__grid_div(g, (uint64_t)t - (uint64_t)g->origin_ns);
}

/* The instant of tick k, saturated at INT64_MAX. */
static inline int64_t tk__grid_time(const tk__grid *g, uint64_t k) {
    tk__i128 t = (tk__i128)g->origin_ns + (tk__i128)k * (tk__i128)g->tick_ns;
    return t > (tk__i128)INT64_MAX ? INT64_MAX : (int64_t)t;
}

#endif
