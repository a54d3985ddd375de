/* SPDX-License-Identifier: MIT */
/* timerkit: the hashed timing wheel core (pure, single-threaded). Internal.
 *
 * A wheel of 2^b buckets of intrusive, doubly linked tk_nodes. Time is cut
 * into ticks: tick k is the instant t_k = start_ns + k * tick_ns, and the
 * wheel starts at current tick 0. A node stores its absolute expiry tick
 *
 *     e = max(ceil((deadline_ns - start_ns) / tick_ns), c + 1)
 *
 * (c = the current tick when it was added) in tk__wheel_priv.rounds and sits
 * in bucket e & mask; its remaining rounds are derived, (e - c - 1) >> b.
 * Advancing from tick c to c + 1 hands back exactly the nodes with
 * deadline_ns <= t_{c+1}, sorted by (deadline_ns, seq). The core has no
 * threads, locks or clock: it is told the tick. See wheel-core.c for the
 * design essay (structure, invariants, complexity).
 *
 * The core uses only tk__wheel_priv.next, .prev and .rounds of a node; the
 * adapter keeps its own state in the rest of the private area. */
#ifndef TIMERKIT_WHEEL_CORE_H
#define TIMERKIT_WHEEL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node-sort.h"
#include "tick-grid.h"
#include "timerkit/alloc.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"

/* A node's private area (tk_node_priv()) as the wheel lays it out. The core
 * uses next, prev and rounds; `state` is the adapter's node state word
 * (wheel-adapter-internal.h), accessed only atomically. `next` is the first
 * word: also the detached link once the node has left. */
typedef struct tk__wheel_priv {
    tk_node *next;  /* bucket or hand-off queue link */
    tk_node *prev;  /* bucket link */
    int64_t rounds; /* expiry tick, or a slot in the ready set */
    uint64_t state; /* the adapter's */
} tk__wheel_priv;

_Static_assert(sizeof(tk__wheel_priv) <= TK_NODE_PRIV_SIZE, "the view fits the private area");

static inline tk__wheel_priv *tk__wheel_priv_of(const tk_node *n) {
    return (tk__wheel_priv *)(uintptr_t)tk_node_priv_const(n);
}

/* Largest ticks_per_wheel accepted (after rounding up to a power of two). */
#define TK__WHEEL_MAX_TICKS_PER_WHEEL (UINT32_C(1) << 24)

/* One bucket. */
typedef struct tk__wheel_slot {
    tk_node *head;       /* newest node of the bucket (NULL: empty) */
    tk_node *tail;       /* oldest node (NULL: empty) */
    uint64_t min_expiry; /* lower bound of the bucket's expiry ticks; exact
                            unless the slot's `stale` bit is set */
} tk__wheel_slot;

/* A wheel. Caller-allocated. Fields are private, except that grid (its
 * origin_ns is t_0, its tick_ns the tick) and ticks_per_wheel may be read
 * (never written) after init. */
typedef struct tk__wheel_core {
    const tk_allocator *allocator; /* NULL: default */
    tk__wheel_slot *slots;         /* ticks_per_wheel buckets */
    uint64_t *occupied;            /* bit s set <=> slots[s].head != NULL */
    uint64_t *stale;               /* bit s set: slots[s].min_expiry may be low */
    uint64_t *disordered;          /* bit s clear: slots[s] is in key order from
                                      tail to head (meaningless while empty) */
    size_t block_size;             /* bytes of the one allocation above */
    size_t words;                  /* 64-bit words per bitmap */
    uint64_t mask;                 /* ticks_per_wheel - 1 */
    uint64_t current_tick;         /* c: ticks 0..c have been advanced over */
    tk__grid grid;                 /* t_k = start_ns + k * tick_ns (tick-grid.h) */
    size_t size;                   /* nodes in the wheel */
    bool slack_seen;               /* a node added since the wheel was last
                                      empty had slack_ns > 0; while false no
                                      node has, and the latest tick is the
                                      next expiry tick */
    uint32_t ticks_per_wheel;      /* power of two */
    uint32_t shift;                /* log2(ticks_per_wheel) */
} tk__wheel_core;

/* Initialises `w`. `a` NULL selects the default allocator. tick_ns must be
 * > 0; ticks_per_wheel in 1 .. 2^24 is rounded up to a power of two.
 * Returns TK_OK, TK_EINVAL (bad parameter) or TK_ENOMEM. */
int tk__wheel_core_init(tk__wheel_core *w, const tk_allocator *a, int64_t tick_ns,
                        uint32_t ticks_per_wheel, int64_t start_ns);

/* Frees the buckets. Nodes still in the wheel are not touched. */
void tk__wheel_core_destroy(tk__wheel_core *w);

/* Adds `n` (deadline_ns and seq set; not in any wheel). O(1). A deadline at
 * or before t_c (the current tick) expires on the next advance. */
void tk__wheel_core_add(tk__wheel_core *w, tk_node *n);

/* Removes `n`, which must be in `w`. O(1). */
void tk__wheel_core_remove(tk__wheel_core *w, tk_node *n);

/* Returns true if `n` is in `w`. O(bucket length): for tests and asserts.
 * Reads only tk__wheel_priv_of(n)->rounds of `n` (any value is safe). */
bool tk__wheel_core_contains(const tk__wheel_core *w, const tk_node *n);

/* Advances one tick, c -> c + 1, and returns the nodes with deadline_ns <=
 * t_{c+1}, sorted by (deadline_ns, seq) and linked through
 * tk_node_next_detached(); NULL if none. *count (if not NULL) receives their
 * number. O(1) if nothing expires, else O(bucket + k log k). */
tk_node *tk__wheel_core_advance(tk__wheel_core *w, size_t *count);

/* Advances up to and including `tick` (no-op if tick <= current tick), as
 * repeated tk__wheel_core_advance() would, but jumps over ticks that expire
 * nothing using the occupancy bitmap. Returns one sorted list. */
tk_node *tk__wheel_core_advance_to(tk__wheel_core *w, uint64_t tick, size_t *count);

/* Returns the current tick c. */
uint64_t tk__wheel_core_current_tick(const tk__wheel_core *w);

/* Returns t_tick = start_ns + tick * tick_ns, saturated to INT64_MAX. */
int64_t tk__wheel_core_tick_time(const tk__wheel_core *w, uint64_t tick);

/* Stores in *tick the earliest tick whose advance expires something and
 * returns true; returns false if the wheel is empty. Exact. */
bool tk__wheel_core_next_expiry_tick(const tk__wheel_core *w, uint64_t *tick);

/* Slack (queue.h, "Slack"): a node may leave at any tick from its expiry
 * tick e to its end tick, max(ceil((deadline + slack_ns - start) / tick),
 * e), the sum saturating at INT64_MAX (a negative slack_ns counts as 0).
 * Stores in *tick a tick L with
 *     next expiry tick <= L <= the smallest end tick of the nodes held,
 * so that advancing to L hands out, at once, every node whose window
 * contains t_L, and returns true; false if the wheel is empty. Exact as
 * long as the walk reads at most `budget` nodes and the earliest end lies in
 * a bucket due this revolution; otherwise a lower bound (an earlier wake-up
 * for the owner, never a late one). When the budget runs out the answer is
 * the tick of the bucket where the walk stopped: after the current tick,
 * but it may precede the next expiry tick if a removal took that bucket's
 * earliest node (advancing there then expires nothing). The walk visits
 * occupied buckets in
 * tick order from c + 1 and stops at the first whose tick is not below the
 * best end found: O(occupied buckets up to L + the nodes of the buckets due
 * by L, at most `budget` of them). A bucket whose nodes all belong to later
 * revolutions is not walked: it counts with its earliest expiry tick. */
bool tk__wheel_core_latest_tick(const tk__wheel_core *w, size_t budget, uint64_t *tick);

/* Whether a node in the wheel may have slack (a node added since the wheel
 * was last empty had slack_ns > 0). While false, tk__wheel_core_latest_tick()
 * is tk__wheel_core_next_expiry_tick(), and an owner may plan with
 * tk__wheel_core_next_candidate() as without slack. O(1). */
static inline bool tk__wheel_core_has_slack(const tk__wheel_core *w) {
    return w->slack_seen;
}

/* Returns the number of nodes in the wheel. */
size_t tk__wheel_core_size(const tk__wheel_core *w);

/* Verifies every invariant: each node in slot e & mask with e == max(ceil((
 * deadline - start) / tick), c + 1), links, bitmap, slot minima and the
 * count. Returns TK_OK or TK_ESTATE. O(n + ticks_per_wheel). */
int tk__wheel_core_check(const tk__wheel_core *w);

/* ---- helpers for the adapter (not part of the fuzzed API) ---------------- */

/* As tk__wheel_core_advance_to(), but the expired nodes are left unsorted:
 * each tick's nodes in the order they were added, ticks in order (nodes of
 * successive ticks never interleave, so sorting the list, or merging the
 * pieces tk__node_sort_piece() cuts it into, gives advance_to()'s order).
 * Saves the sort for a caller that merges pieces itself. */
tk_node *tk__wheel_core_expire_to(tk__wheel_core *w, uint64_t tick, size_t *count);

/* As tk__wheel_core_expire_to(), but stops early, once the nodes expired in
 * this call number `enough` (0 counts as 1) or more: after the tick that
 * brings them there, or, when that tick's bucket is in key order (nodes
 * added in key order: one producer's timers, the usual case), after exactly
 * `enough` nodes, within the tick. The rest of a tick split that way has no
 * smaller key than its first part, and the current tick stays before it
 * until it is expired whole. Calling again with the same `tick` continues
 * where it stopped. Lets a caller hand out the earliest nodes while they are
 * in cache instead of after expiring all of them: the earliest ticks when it
 * is many ticks behind, the first part of a tick of a million timers.
 * *in_order (if not NULL) tells whether the list happens to be in key order
 * already (the usual case: one producer, nodes leaving in offer order), as
 * found from the keys the walk reads anyway. */
tk_node *tk__wheel_core_expire_some(tk__wheel_core *w, uint64_t tick, size_t enough, size_t *count,
                                    bool *in_order);

/* Expiry tick of a node in the wheel (its tk__wheel_priv.rounds). */
static inline uint64_t tk__wheel_core_expiry(const tk_node *n) {
    return (uint64_t)tk__wheel_priv_of(n)->rounds;
}

/* The number of nodes an advance to `tick` would expire, counting no further
 * than `limit`. O(occupied buckets among the next min(tick - c, W)) plus the
 * nodes of those that may expire. */
size_t tk__wheel_core_count_through(const tk__wheel_core *w, uint64_t tick, size_t limit);

/* Tick containing `now_ns`: the largest k with t_k <= now_ns (0 if now_ns <
 * start). */
uint64_t tk__wheel_core_tick_at(const tk__wheel_core *w, int64_t now_ns);

/* Tick a node due at `deadline_ns` belongs to: the smallest k with t_k >=
 * deadline_ns (tk__wheel_core_add() puts it in the next tick instead if that
 * one has expired already). */
uint64_t tk__wheel_core_tick_of(const tk__wheel_core *w, int64_t deadline_ns);

/* A lower bound of tk__wheel_core_next_expiry_tick(), exact unless a removal
 * took a bucket's earliest node; O(occupied buckets) worst case, O(1) when
 * the first occupied bucket expires on its next visit. False if empty. */
bool tk__wheel_core_next_candidate(const tk__wheel_core *w, uint64_t *tick);

/* Hints the cache about what tk__wheel_core_add(w, n) will write (the head
 * node of n's bucket), so that adds of many nodes overlap their misses.
 * Reads only n->deadline_ns and the wheel; changes nothing. */
void tk__wheel_core_prefetch_add(const tk__wheel_core *w, const tk_node *n);

/* Returns the node with the smallest (deadline, seq) among those for which
 * accept(n, ctx) is true (accept NULL: all), or NULL. */
tk_node *tk__wheel_core_first(const tk__wheel_core *w, bool (*accept)(const tk_node *n, void *ctx),
                              void *ctx);

/* Removes every node for which pred(n, ctx) is true and returns them linked
 * through tk_node_next_detached() (unsorted); *count receives their number.
 * `pred` must not touch the wheel. O(n + ticks_per_wheel / 64). */
tk_node *tk__wheel_core_extract_if(tk__wheel_core *w, bool (*pred)(tk_node *n, void *ctx),
                                   void *ctx, size_t *count);

/* Calls fn(n, ctx) on every node; stops and returns false when fn does. */
bool tk__wheel_core_foreach(const tk__wheel_core *w, bool (*fn)(const tk_node *n, void *ctx),
                            void *ctx);

#endif
