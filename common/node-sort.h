/* SPDX-License-Identifier: MIT */
/* timerkit: sorting a detached list of nodes by (deadline, seq). Defined in
 * node-sort.c; the wheel's expiry, the generic adapter's drain() and any
 * core that sorts a tick's batch use it. Internal. */
#ifndef TIMERKIT_NODE_SORT_H
#define TIMERKIT_NODE_SORT_H

#include <stddef.h>

#include "timerkit/engine.h"
#include "timerkit/queue.h"

/* Sorts a detached list (linked through tk_node_next_detached()) by
 * (deadline, seq), stable; O(n) if already in order (natural merge sort),
 * else O(n log n): pieces of TK__NODE_SORT_PIECE consecutive nodes are
 * sorted by pairwise merges and then merged together in one pass (see
 * node-sort.c). Returns the new head; *tail (if not NULL) receives the last
 * node. */
tk_node *tk__node_sort(tk_node *list, tk_node **tail);

/* Nodes sorted together by pairwise merges, and most pieces merged in one
 * pass (indices must fit uint16_t). */
#define TK__NODE_SORT_PIECE ((size_t)4096)
#define TK__NODE_SORT_MAX_WAYS ((size_t)256)

/* tk__node_sort() with its piece size (>= 1) and ways (2 ..
 * TK__NODE_SORT_MAX_WAYS) chosen, so that tests reach every path with
 * small lists. */
tk_node *tk__node_sort_pieces(tk_node *list, tk_node **tail, size_t piece, size_t ways);

/* A sorted piece of a detached list: head .. tail, linked through
 * tk_node_next_detached(), the tail's link NULL. */
typedef struct tk__node_piece {
    tk_node *head, *tail;
} tk__node_piece;

/* The first phase of tk__node_sort(), for a caller that merges the pieces
 * itself: sorts the first `max` (>= 1) nodes of the non-empty list *list
 * (stable), returns them as a piece and advances *list past them. Call it
 * with max = TK__NODE_SORT_PIECE until the list is empty; merging the
 * pieces, earlier ones first on equal keys, gives tk__node_sort()'s order.
 * O(max) if those nodes are in order, else O(max log max). */
tk__node_piece tk__node_sort_piece(tk_node **list, size_t max);

#endif
