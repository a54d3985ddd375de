/* SPDX-License-Identifier: MIT */
/* timerkit: the hierarchical timing wheel engine (tk_engine_hwheel()):
 * its parameters and its pure core. Internal to the tree: the engine's
 * tests and benchmarks drive the core through tk__hwheel_core_ops.
 *
 * hwheel-core.c holds the design essay (levels, slots, cascading, the
 * overflow list, invariants, complexity, precision). */
#ifndef TIMERKIT_HWHEEL_CORE_H
#define TIMERKIT_HWHEEL_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "timerkit/engine.h"
#include "timerkit/queue.h"

/* Ranges of the parameters (the table in hwheel-engine.c states them). */
#define TK__HWHEEL_MIN_BITS 1u
#define TK__HWHEEL_MAX_BITS 10u /* 1024 slots a level */
#define TK__HWHEEL_MIN_LEVELS 1u
#define TK__HWHEEL_MAX_LEVELS 32u
/* Most bits of tick count the levels may cover together (bits x levels):
 * a span of 2^62 ticks of 1 ns is the largest that int64 nanoseconds hold. */
#define TK__HWHEEL_MAX_SPAN_BITS 62u

/* Defaults: 1 ms ticks, 64 slots a level (128 banks, two 64-bit occupancy
 * words), 6 levels: 2^36 ticks, about 795 days, before the overflow list. */
#define TK__HWHEEL_DEFAULT_TICK_NS ((int64_t)1000000)
#define TK__HWHEEL_DEFAULT_BITS 6u
#define TK__HWHEEL_DEFAULT_LEVELS 6u

/* Chains a bank (a slot's nodes of one revolution parity) keeps its nodes
 * in, filled in turn (a power of two): hwheel-core.c says why. */
#define TK__HWHEEL_CHAINS 8u

/* Nodes one latest() reads at most before it answers a lower bound instead
 * (hwheel-core.c, HW_LATEST_BUDGET, says why); the tests fill past it. */
#define TK__HWHEEL_LATEST_BUDGET 4096u

/* A node's private area (tk_node_priv()) as the core lays it out. Only the
 * core writes it; the engine's tests read it, and damage it on purpose to
 * see check() object. `next` is the first word: the chain and list link,
 * and the detached link once the node has left. */
typedef struct tk__hwheel_priv {
    tk_node *next;
    tk_node *prev;
    uint64_t tick;  /* T(deadline) */
    uint32_t where; /* 0 (not held), due list, overflow list, or level and bank */
    uint32_t chain; /* in a bank: which of its chains holds the node */
} tk__hwheel_priv;

/* The engine's own parameters (tk_queue_config.params). */
typedef struct tk__hwheel_params {
    int64_t tick_ns; /* tick: granularity of the grid, > 0 */
    uint32_t bits;   /* log2 of the slots of one level */
    uint32_t levels; /* number of levels */
} tk__hwheel_params;

/* Checks the parameters together (each already within its range): the span
 * tick x 2^(bits x levels) must fit int64 nanoseconds. Returns TK_OK, or
 * TK_EINVAL with a one-line "hwheel: ..." message in err. */
int tk__hwheel_params_validate(const void *params, char *err, size_t err_len);

/* The core (engine.h's tk_core_ops contract); its params are a
 * tk__hwheel_params. */
extern const tk_core_ops tk__hwheel_core_ops;

#endif
