/* SPDX-License-Identifier: MIT */
/* timerkit: the wheel adapter's ready set (pure, single-threaded). Internal.
 *
 * The nodes the tick thread has expired and no taker has taken yet, kept as
 * up to TK__WHEEL_READY_RUNS sorted runs, each a doubly linked list, with a
 * winner tree over the runs' heads that says which run holds the smallest
 * key. Publishing a batch never walks the nodes already ready, even when its
 * keys interleave with theirs (a backlog expired over several passes);
 * docs/engine-notes.md says why the set is not one sorted list:
 *
 *   publish  adds one sorted piece (an expired batch, or one of the pieces
 *            tk__node_sort_piece() cuts a large batch into) as a run: it is
 *            appended to the run the previous publish used when it fits
 *            behind that run's tail, else it takes a free slot; O(1) per
 *            node plus O(log RUNS). With every slot taken it is merged into
 *            the shortest run: O(piece + that run's prefix up to the piece's
 *            last key), so at most O(piece + size / RUNS);
 *   pop      takes the head of the tree's winner, then replays the winner's
 *            path: O(log RUNS) comparisons of run heads (which stay in
 *            cache), exact (deadline, seq) order across the runs;
 *   remove   O(1) (plus the replay when the node was a head): while a node
 *            is in the set, tk__wheel_priv.rounds holds its run's slot (the
 *            core does not use it then).
 * Sorting a large batch in cache-sized pieces and letting pop merge them
 * saves two walks of the batch in key order (the last merge pass, and the
 * publish), each a cache and TLB miss per node once the batch outgrows the
 * cache; the taker touches each node anyway.
 *
 * A node in the set uses tk__wheel_priv.next, .prev and .rounds; the state
 * word is left to the adapter. The set takes no lock: the adapter calls every
 * function with its ready_lock held. */
#ifndef TIMERKIT_WHEEL_READY_H
#define TIMERKIT_WHEEL_READY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timerkit/queue.h"

/* Most runs kept at once (a power of two, at most 2^15). */
#define TK__WHEEL_READY_RUNS 256

/* One sorted run: head has the smallest key. */
typedef struct tk__wheel_run {
    tk_node *head; /* NULL: the slot is free */
    tk_node *tail;
    size_t len;
} tk__wheel_run;

/* The set. Initialise with tk__wheel_ready_init(). Fields may be read by
 * tests; only these functions write them. */
typedef struct tk__wheel_ready {
    /* runs[TK__WHEEL_READY_RUNS] holds a piece being published when every
     * slot was taken; it is empty between calls. */
    tk__wheel_run runs[TK__WHEEL_READY_RUNS + 1];
    /* Winner tree: win[RUNS + i] = i; win[p] = the slot with the smaller
     * head of win[2p] and win[2p + 1] (a free slot loses); win[1] overall. */
    uint16_t win[2 * TK__WHEEL_READY_RUNS];
    uint64_t used[TK__WHEEL_READY_RUNS / 64]; /* bit i <=> runs[i].head != NULL */
    size_t nruns;                             /* slots used */
    size_t size;                              /* nodes in all runs */
    size_t hint;                              /* slot the last publish used */
    uint64_t merges; /* pieces merged into a run because no slot was free */
} tk__wheel_ready;

/* Empties `r` (nodes it held are forgotten, not touched). */
void tk__wheel_ready_init(tk__wheel_ready *r);

/* Adds the nodes of `list` (sorted by (deadline, seq), linked through
 * tk__wheel_priv.next, NULL-terminated) for which accept(n, ctx) returns true
 * (accept NULL: all) as one run, appended to an existing run when it fits
 * behind it (see top). accept is called once per node, in list order, before
 * the set touches the node; a refused node is not touched afterwards.
 * Returns the number of nodes added. */
size_t tk__wheel_ready_publish(tk__wheel_ready *r, tk_node *list,
                               bool (*accept)(tk_node *n, void *ctx), void *ctx);

/* Returns the node with the smallest (deadline, seq), or NULL if empty. */
static inline tk_node *tk__wheel_ready_first(const tk__wheel_ready *r) {
    return r->runs[r->win[1]].head;
}

/* Removes and returns the node with the smallest (deadline, seq), or NULL. */
tk_node *tk__wheel_ready_pop(tk__wheel_ready *r);

/* Removes up to `max` nodes with the smallest keys: the nodes that `max`
 * calls of tk__wheel_ready_pop() would return, in that order (fewer if the
 * set holds fewer). Returns them as a NULL-terminated list linked through
 * tk__priv.detached_next; *count receives their number (0 and NULL when the
 * set is empty or max is 0). each(n, ctx), if not NULL, is called once per
 * node taken, in order, while the walk passes it. A run's nodes that lead
 * every other run's head leave as one cut of the run, the winner tree
 * replayed once per cut instead of once per node: O(k + cuts * log RUNS). */
tk_node *tk__wheel_ready_pop_batch(tk__wheel_ready *r, size_t max,
                                   void (*each)(tk_node *n, void *ctx), void *ctx, size_t *count);

/* Removes `n`, which must be in `r`. */
void tk__wheel_ready_remove(tk__wheel_ready *r, tk_node *n);

/* Removes every node for which pred(n, ctx) returns true (called once per
 * node) and returns them linked through tk_node_next_detached(), in no
 * particular order; *count receives their number. `pred` must not touch the
 * set. O(size + RUNS). */
tk_node *tk__wheel_ready_extract_if(tk__wheel_ready *r, bool (*pred)(tk_node *n, void *ctx),
                                    void *ctx, size_t *count);

/* Verifies every invariant (see wheel-ready.c) and that node_ok(n, ctx)
 * holds for every node (node_ok NULL: not asked). Returns TK_OK or
 * TK_ESTATE. O(size + RUNS). */
int tk__wheel_ready_check(const tk__wheel_ready *r, bool (*node_ok)(const tk_node *n, void *ctx),
                          void *ctx);

#endif
