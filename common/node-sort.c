/* SPDX-License-Identifier: MIT */
/* timerkit: sorting a detached list of nodes by (deadline, seq)
 * (node-sort.h). */
#include "node-sort.h"

#include <assert.h>
#include <stdint.h>

#define DNEXT(n) ((n)->tk__priv.detached_next)

/* Merges two non-empty sorted pieces; on equal keys a's nodes go first. */
static tk__node_piece merge2(tk__node_piece a, tk__node_piece b) {
    tk_node head;
    tk_node *t = &head;
    tk_node *x = a.head, *y = b.head;
    while (x != NULL && y != NULL) {
        if (tk_node_before(y, x)) {
            DNEXT(t) = y;
            t = y;
            y = DNEXT(y);
        } else {
            DNEXT(t) = x;
            t = x;
            x = DNEXT(x);
        }
    }
    DNEXT(t) = x != NULL ? x : y;
    tk__node_piece out = {DNEXT(&head), x != NULL ? a.tail : y != NULL ? b.tail : t};
    return out;
}

tk__node_piece tk__node_sort_piece(tk_node **list, size_t max) {
    /* Natural bottom-up merging: the nodes are cut into maximal
     * non-descending runs and runs[i] holds a merge of about 2^i of them. */
    tk__node_piece runs[64];
    size_t top = 0, taken = 0;
    assert(max >= 1 && *list != NULL);
    while (*list != NULL && taken < max) {
        tk__node_piece cur = {*list, *list};
        taken++;
        while (taken < max && DNEXT(cur.tail) != NULL &&
               !tk_node_before(DNEXT(cur.tail), cur.tail)) {
            cur.tail = DNEXT(cur.tail);
            taken++;
        }
        *list = DNEXT(cur.tail);
        DNEXT(cur.tail) = NULL;
        size_t i = 0;
        for (; i < top && runs[i].head != NULL; i++) {
            cur = merge2(runs[i], cur);
            runs[i].head = NULL;
        }
        if (i == top)
            top++;
        runs[i] = cur;
    }
    tk__node_piece out = {NULL, NULL};
    for (size_t i = 0; i < top; i++)
        if (runs[i].head != NULL)
            out = out.head == NULL ? runs[i] : merge2(runs[i], out);
    return out;
}

/* Heap order of the pieces being merged: by head key, then by piece index
 * (list order), which keeps the merge stable. */
static inline bool piece_before(const tk__node_piece *p, uint16_t i, uint16_t j) {
    const tk_node *a = p[i].head, *b = p[j].head;
    if (tk_node_before(a, b))
        return true;
    return !tk_node_before(b, a) && i < j;
}

static void sift_down(const tk__node_piece *p, uint16_t *heap, size_t n, size_t at) {
    uint16_t v = heap[at];
    for (;;) {
        size_t c = 2 * at + 1;
        if (c >= n)
            break;
        if (c + 1 < n && piece_before(p, heap[c + 1], heap[c]))
            c++;
        if (!piece_before(p, heap[c], v))
            break;
        heap[at] = heap[c];
        at = c;
    }
    heap[at] = v;
}

/* Merges n >= 2 sorted pieces in one pass, taking the smallest head off a
 * binary heap of the pieces each step. */
static tk__node_piece merge_many(tk__node_piece *p, size_t n) {
    uint16_t heap[TK__NODE_SORT_MAX_WAYS];
    for (size_t i = 0; i < n; i++)
        heap[i] = (uint16_t)i;
    for (size_t i = n / 2; i-- > 0;)
        sift_down(p, heap, n, i);
    tk_node head;
    tk_node *t = &head;
    while (n > 1) {
        uint16_t i = heap[0];
        tk_node *x = p[i].head;
        DNEXT(t) = x;
        t = x;
        p[i].head = DNEXT(x);
        if (p[i].head == NULL) {
            heap[0] = heap[--n];
        } else if (DNEXT(p[i].head) != NULL) {
            /* the node after the new head is this piece's next miss */
            __builtin_prefetch(DNEXT(p[i].head));
        }
        sift_down(p, heap, n, 0);
    }
    DNEXT(t) = p[heap[0]].head; /* the last piece, whole */
    tk__node_piece out = {DNEXT(&head), p[heap[0]].tail};
    return out;
}

/* Cuts `list` into sorted pieces of about `piece` (>= 1) consecutive nodes,
 * joining a piece to the previous one when it continues it in order, and
 * stores at most `cap` (>= 2) of them in out[]: when more would be needed,
 * adjacent pieces are merged pairwise first. Returns their number. */
static size_t sort_split(tk_node *list, size_t piece, tk__node_piece *out, size_t cap) {
    size_t n = 0;
    while (list != NULL) {
        tk__node_piece s = tk__node_sort_piece(&list, piece);
        if (n > 0 && !tk_node_before(s.head, out[n - 1].tail)) {
            DNEXT(out[n - 1].tail) = s.head;
            out[n - 1].tail = s.tail;
            continue;
        }
        while (n == cap) {
            /* no room: merge adjacent pairs (list order, so still stable) */
            size_t m = 0;
            for (size_t i = 0; i + 1 < n; i += 2)
                out[m++] = merge2(out[i], out[i + 1]);
            if (n % 2 != 0)
                out[m++] = out[n - 1];
            n = m;
        }
        out[n++] = s;
    }
    return n;
}

tk_node *tk__node_sort_pieces(tk_node *list, tk_node **tail, size_t piece, size_t ways) {
    /* Merging pairs of runs pass after pass (a textbook list merge sort)
     * costs a cache miss per node per pass once the runs outgrow the cache:
     * 20 passes for a million nodes. So pairwise merging stops at pieces of
     * `piece` consecutive nodes, whose lines stay in cache while they are
     * sorted, and the pieces are then merged in a single pass through a heap
     * of their heads. A piece that continues the previous one in order is
     * appended to it, so a list already sorted (the usual batch, nodes
     * leaving their bucket in offer order) costs one O(k) pass. */
    tk__node_piece p[TK__NODE_SORT_MAX_WAYS];
    if (piece == 0)
        piece = 1;
    if (ways < 2)
        ways = 2;
    if (ways > TK__NODE_SORT_MAX_WAYS)
        ways = TK__NODE_SORT_MAX_WAYS;
    size_t n = sort_split(list, piece, p, ways);
    tk__node_piece out = {NULL, NULL};
    if (n == 1)
        out = p[0];
    else if (n > 1)
        out = merge_many(p, n);
    if (tail != NULL)
        *tail = out.tail;
    return out.head;
}

tk_node *tk__node_sort(tk_node *list, tk_node **tail) {
    return tk__node_sort_pieces(list, tail, TK__NODE_SORT_PIECE, TK__NODE_SORT_MAX_WAYS);
}
