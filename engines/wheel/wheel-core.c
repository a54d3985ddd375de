/* SPDX-License-Identifier: MIT */
/* timerkit: the hashed timing wheel core.
 *
 * Structure. A hashed timing wheel (Varghese & Lauck 1987, scheme 6; the
 * design of Netty's HashedWheelTimer) of W = 2^b buckets. Time is cut into
 * ticks of tick_ns: tick k is the instant t_k = start_ns + k * tick_ns. Each
 * bucket is a doubly linked list of intrusive tk_nodes, so a node is removed
 * in O(1) without a search. Unlike Netty, a node records its absolute expiry
 * tick e instead of a count of remaining rounds (rounds = (e - c - 1) >> b
 * is derived), which lets the wheel skip a bucket in O(1) when nothing in it
 * is due, instead of walking it once per revolution to count rounds down.
 * Two bitmaps of W bits and one number per bucket make that possible:
 *
 *   occupied[s]  bucket s is not empty;
 *   min_expiry   per bucket, a lower bound of its nodes' expiry ticks, exact
 *                unless stale[s] is set (a removal took the bucket's earliest
 *                node; the next walk of the bucket makes it exact again).
 *
 * Invariants (checked by tk__wheel_core_check()), with c the current tick:
 *   I1  every node n in bucket s has e(n) & (W - 1) == s and e(n) > c;
 *   I2  e(n) == max(ceil((deadline - start) / tick_ns), c + 1): a node is in
 *       the wheel exactly until the first tick whose instant reaches its
 *       deadline, and a node added already due expires on the next advance
 *       (never in a bucket the wheel has passed);
 *   I3  for a non-empty bucket s: c < min_expiry <= min e(n), min_expiry == s
 *       (mod W), and equality when stale[s] is clear;
 *   I4  occupied[s] <=> bucket s non-empty; size == number of nodes;
 *   I5  each bucket is doubly linked from head (newest) to tail (oldest);
 *   I6  a non-empty bucket s whose disordered[s] bit is clear is in key
 *       order from tail to head: every add to it so far came in key order
 *       (an add compares with the head; removals keep the order; the bit is
 *       cleared when an add finds the bucket empty);
 *   I7  slack_seen is clear only if no node has slack_ns > 0 (an add of
 *       such a node sets it; an add to an empty wheel clears it first).
 *
 * Expiry. Advancing to tick t visits bucket t & (W - 1) only if its
 * min_expiry <= t; the walk unlinks the nodes with e == t and recomputes the
 * minimum of the rest. On a large wheel every node is a cache (and TLB) miss
 * and the next link is only known once the node is in, so the walk runs
 * from both ends of the bucket at once (each bucket keeps its tail too):
 * two chains of misses in flight instead of one. The expired batch is then merge-sorted by
 * (deadline, seq) (a natural merge sort: one O(k) pass when the batch is
 * already in order, as it usually is, nodes leaving in offer order; pairwise
 * merging stops at cache-sized pieces, which are merged in one pass, see
 * tk__node_sort_pieces(); tk__wheel_core_expire_to() leaves the sorting to
 * a caller that merges the pieces itself), so the
 * wheel hands nodes out in exactly the heap's order: nodes expiring at tick
 * t have deadline in (t_{t-1}, t_t], except nodes that were already due when
 * added, and those sit in the earliest possible tick; so batches of
 * successive ticks never interleave and sorting each batch sorts the whole
 * stream. advance_to() jumps straight from one candidate tick to the next:
 * the next candidate is the minimum of the
 * buckets' min_expiry, found by scanning the occupied bitmap from c + 1 and
 * stopping as soon as a bucket's first possible tick is not below the best
 * candidate found (usually the first occupied bucket).
 * tk__wheel_core_expire_some() is advance_to() unsorted that stops after the
 * tick that brings it to a given number of nodes, for a caller that is many
 * ticks behind and publishes the earliest ticks first. In a bucket in key
 * order (I6), whose expiry ticks then also rise from tail to head, the due
 * nodes are the oldest ones: expire_some() takes them from the tail, only as
 * many as it still wants, without walking the rest of the bucket, and may
 * split the tick (the current tick stays before it until the rest is
 * taken), so a tick of a million timers is handed out a chunk at a time
 * instead of after one walk of all of them.
 *
 * Slack. A node may leave at any tick from its expiry tick e to the tick
 * of the end of its window, deadline + slack_ns (queue.h, "Slack"). The
 * wheel files nodes by e only; slack changes neither where a node sits nor
 * what an advance hands out, in which order. tk__wheel_core_latest_tick()
 * answers how far an owner may advance in one step and still hand every
 * node out within its window: the smallest end tick. It walks the occupied
 * buckets in tick order, as the next-candidate scan does, but reads the
 * nodes of each bucket due this revolution (a node's end is not indexed;
 * every node it reads leaves by the tick it answers, so the walk is paid
 * for by the advance it plans), stops at the first bucket whose tick is not
 * below the best end found, and counts a bucket whose nodes are all due in
 * later revolutions by its earliest expiry tick alone (an earlier answer
 * there, never a later one). From a bucket's tail: without slack, and with
 * the bucket in key order, its oldest node is due at the bucket's tick and
 * ends the walk at once. A wheel that has held no node with slack since it
 * was last empty (I7) skips the walk: its answer is the next expiry tick.
 *
 * Complexity. add, remove: O(1) (one multiply-high replaces the division).
 * advance: O(1) when the bucket holds nothing due, else O(bucket + k log k)
 * for k expired nodes; a bucket with something due is walked whole, as in
 * Netty, so a node whose delay spans R revolutions is visited up to R times
 * (pick tick_ns * W near the usual delay: the single-level wheel's trade-off;
 * buckets with nothing due are skipped, unlike Netty). next candidate:
 * O(W / 64 + occupied buckets scanned). latest tick: as next candidate, plus
 * the nodes of the buckets it walks (at most its `budget`).
 * Memory: 24 bytes per bucket + 3 bits, nothing per node (the 32-byte
 * private area of tk_node).
 *
 * Accuracy. A node leaves at the first tick t with t_t >= deadline: never
 * early, at most one tick late in tick time. The adapter adds the wake-up
 * noise of its thread.
 *
 * Deadlines anywhere in int64 work: the distance to start_ns is taken in
 * uint64, expiry ticks are uint64, and t_k saturates at INT64_MAX.
 */
#include "wheel-core.h"

#include <assert.h>
#include <string.h>

#include "common-internal.h"

#define SLOT_OF(w, e) ((size_t)((e) & (w)->mask))

static inline void bit_set(uint64_t *bits, size_t i) {
    bits[i >> 6] |= UINT64_C(1) << (i & 63);
}

static inline void bit_clear(uint64_t *bits, size_t i) {
    bits[i >> 6] &= ~(UINT64_C(1) << (i & 63));
}

static inline bool bit_test(const uint64_t *bits, size_t i) {
    return (bits[i >> 6] >> (i & 63)) & 1u;
}

static inline void poison(tk_node *n) {
#ifndef NDEBUG
    tk__wheel_priv_of(n)->prev = (tk_node *)TK__POISON_PTR;
#else
    (void)n;
#endif
}

int tk__wheel_core_init(tk__wheel_core *w, const tk_allocator *a, int64_t tick_ns,
                        uint32_t ticks_per_wheel, int64_t start_ns) {
    if (w == NULL || tick_ns <= 0 || ticks_per_wheel == 0 ||
        ticks_per_wheel > TK__WHEEL_MAX_TICKS_PER_WHEEL)
        return TK_EINVAL;
    memset(w, 0, sizeof(*w));
    uint32_t shift = 0;
    while ((UINT32_C(1) << shift) < ticks_per_wheel)
        shift++;
    uint32_t n = UINT32_C(1) << shift;
    size_t words = (n + 63) / 64;
    size_t bytes = (size_t)n * sizeof(tk__wheel_slot) + 3 * words * sizeof(uint64_t);
    void *block = tk__alloc(a, bytes);
    if (block == NULL)
        return TK_ENOMEM;
    memset(block, 0, bytes);
    w->allocator = a;
    w->slots = block;
    w->occupied = (uint64_t *)(void *)(w->slots + n);
    w->stale = w->occupied + words;
    w->disordered = w->stale + words;
    w->block_size = bytes;
    w->words = words;
    w->mask = n - 1;
    w->current_tick = 0;
    tk__grid_init(&w->grid, start_ns, tick_ns);
    w->size = 0;
    w->ticks_per_wheel = n;
    w->shift = shift;
    return TK_OK;
}

void tk__wheel_core_destroy(tk__wheel_core *w) {
    if (w == NULL || w->slots == NULL)
        return;
    tk__free(w->allocator, w->slots, w->block_size);
    w->slots = NULL;
    w->occupied = w->stale = w->disordered = NULL;
}

/* ceil((deadline - start) / tick_ns), 0 if deadline <= start. */
static inline uint64_t raw_expiry(const tk__wheel_core *w, int64_t deadline_ns) {
    return tk__grid_ceil(&w->grid, deadline_ns);
}

uint64_t tk__wheel_core_tick_at(const tk__wheel_core *w, int64_t now_ns) {
    return tk__grid_floor(&w->grid, now_ns);
}

uint64_t tk__wheel_core_tick_of(const tk__wheel_core *w, int64_t deadline_ns) {
    return raw_expiry(w, deadline_ns);
}

void tk__wheel_core_add(tk__wheel_core *w, tk_node *n) {
    if (w->size == 0)
        w->slack_seen = false; /* I7: no node is left to have slack */
    if (n->slack_ns > 0)
        w->slack_seen = true;
    uint64_t e = raw_expiry(w, n->deadline_ns);
    if (e <= w->current_tick)
        e = w->current_tick + 1;
    tk__wheel_priv_of(n)->rounds = (int64_t)e;
    size_t s = SLOT_OF(w, e);
    tk__wheel_slot *slot = &w->slots[s];
    tk_node *head = slot->head;
    tk__wheel_priv_of(n)->prev = NULL;
    tk__wheel_priv_of(n)->next = head;
    if (head == NULL) {
        slot->tail = n;
        slot->min_expiry = e;
        bit_set(w->occupied, s);
        bit_clear(w->stale, s);
        bit_clear(w->disordered, s);
    } else {
        tk__wheel_priv_of(head)->prev = n;
        if (e < slot->min_expiry)
            slot->min_expiry = e;
        if (tk_node_before(n, head))
            bit_set(w->disordered, s);
    }
    slot->head = n;
    w->size++;
}

void tk__wheel_core_prefetch_add(const tk__wheel_core *w, const tk_node *n) {
    uint64_t e = raw_expiry(w, n->deadline_ns);
    if (e <= w->current_tick)
        e = w->current_tick + 1;
    const tk_node *head = w->slots[SLOT_OF(w, e)].head;
    if (head != NULL)
        __builtin_prefetch(head, 1);
}

/* Unlinks `n` from bucket `s`; keeps the bitmaps right. */
static inline void unlink_node(tk__wheel_core *w, size_t s, tk_node *n) {
    tk_node *prev = tk__wheel_priv_of(n)->prev;
    tk_node *next = tk__wheel_priv_of(n)->next;
    if (prev != NULL)
        tk__wheel_priv_of(prev)->next = next;
    else
        w->slots[s].head = next;
    if (next != NULL)
        tk__wheel_priv_of(next)->prev = prev;
    else
        w->slots[s].tail = prev;
    w->size--;
}

void tk__wheel_core_remove(tk__wheel_core *w, tk_node *n) {
    uint64_t e = tk__wheel_core_expiry(n);
    size_t s = SLOT_OF(w, e);
    /* O(1) sanity check that n is linked where its expiry says */
    assert(tk__wheel_priv_of(n)->prev != NULL
               ? tk__wheel_priv_of(tk__wheel_priv_of(n)->prev)->next == n
               : w->slots[s].head == n);
    assert(tk__wheel_priv_of(n)->next == NULL ||
           tk__wheel_priv_of(tk__wheel_priv_of(n)->next)->prev == n);
    unlink_node(w, s, n);
    if (w->slots[s].head == NULL) {
        bit_clear(w->occupied, s);
        bit_clear(w->stale, s);
    } else if (e == w->slots[s].min_expiry) {
        bit_set(w->stale, s);
    }
    poison(n);
}

bool tk__wheel_core_contains(const tk__wheel_core *w, const tk_node *n) {
    if (w == NULL || n == NULL || w->size == 0)
        return false;
    size_t s = SLOT_OF(w, (uint64_t)tk__wheel_priv_of(n)->rounds);
    for (const tk_node *p = w->slots[s].head; p != NULL; p = tk__wheel_priv_of(p)->next)
        if (p == n)
            return true;
    return false;
}

/* ---- advancing ---------------------------------------------------------- */

/* Moves the current tick to t (> current) and expires bucket t & mask, which
 * holds no node with e < t. Returns the batch, sorted if `sort`, else in
 * the order the nodes were added; *tail, *count set. *in_order tells whether
 * the batch is in key order: always when sorted, else as found from the keys
 * the walk reads anyway, so that a caller can hand out a large batch in order
 * without sorting it or walking it again. */
static tk_node *expire_at(tk__wheel_core *w, uint64_t t, bool sort, tk_node **tail, size_t *count,
                          bool *in_order) {
    w->current_tick = t;
    size_t s = SLOT_OF(w, t);
    tk__wheel_slot *slot = &w->slots[s];
    *tail = NULL;
    *count = 0;
    *in_order = true;
    if (slot->head == NULL || slot->min_expiry > t)
        return NULL;
    /* The walk is a chain of dependent misses on a large wheel, so it runs
     * from both ends at once (two chains in flight): `a` from the newest
     * node towards older ones, `b` from the oldest towards newer ones, until
     * they meet. The batch keeps the add order: b's nodes (oldest first,
     * appended), then a's (pushed on the front of their own list). */
    tk_node *old_head = NULL, *old_tail = NULL; /* b's nodes, in visit order */
    tk_node *new_head = NULL, *new_tail = NULL; /* a's nodes, oldest first */
    size_t k = 0;
    uint64_t min = UINT64_MAX;
    bool ordered = true;
    tk_node *a = slot->head, *b = slot->tail;
    for (;;) {
        bool meet = a == b;
        tk_node *a_next = tk__wheel_priv_of(a)->next;
        tk_node *b_prev = tk__wheel_priv_of(b)->prev;
        uint64_t ea = tk__wheel_core_expiry(a);
        if (ea <= t) {
            unlink_node(w, s, a);
            ordered = ordered && (new_head == NULL || !tk_node_before(new_head, a));
            a->tk__priv.detached_next = new_head;
            if (new_head == NULL)
                new_tail = a;
            new_head = a;
            k++;
        } else if (ea < min) {
            min = ea;
        }
        if (meet)
            break;
        uint64_t eb = tk__wheel_core_expiry(b);
        if (eb <= t) {
            unlink_node(w, s, b);
            ordered = ordered && (old_tail == NULL || !tk_node_before(b, old_tail));
            b->tk__priv.detached_next = NULL;
            if (old_tail != NULL)
                old_tail->tk__priv.detached_next = b;
            else
                old_head = b;
            old_tail = b;
            k++;
        } else if (eb < min) {
            min = eb;
        }
        if (a_next == b) /* adjacent: both done */
            break;
        a = a_next;
        b = b_prev;
    }
    tk_node *out, *last;
    if (old_head == NULL) {
        out = new_head;
        last = new_tail;
    } else {
        ordered = ordered && (new_head == NULL || !tk_node_before(new_head, old_tail));
        old_tail->tk__priv.detached_next = new_head;
        out = old_head;
        last = new_head != NULL ? new_tail : old_tail;
    }
    bit_clear(w->stale, s);
    if (slot->head == NULL)
        bit_clear(w->occupied, s);
    else
        slot->min_expiry = min;
    *count = k;
    if (k <= 1 || !sort) {
        *tail = last;
        *in_order = ordered;
        return out;
    }
    return tk__node_sort(out, tail);
}

/* Expires up to `limit` (>= 1) of the nodes due at tick t (> current) from
 * bucket t & mask, which holds no node with e < t and is in key order (I6),
 * so its nodes due at t are its oldest: they are unlinked from the tail, in
 * key order, and the walk stops at the first node not due or at `limit`.
 * Returns them linked through detached_next; *tail, *count set. *done tells
 * whether tick t is over: the current tick is then t, else t - 1 (the bucket
 * still holds nodes of tick t, and its min_expiry is t). */
static tk_node *expire_ordered(tk__wheel_core *w, uint64_t t, size_t limit, tk_node **tail,
                               size_t *count, bool *done) {
    size_t s = SLOT_OF(w, t);
    tk__wheel_slot *slot = &w->slots[s];
    tk_node *first = slot->tail, *last = NULL, *n = first;
    size_t k = 0;
    while (n != NULL && k < limit && tk__wheel_core_expiry(n) <= t) {
        tk_node *newer = tk__wheel_priv_of(n)->prev;
        if (newer != NULL)
            __builtin_prefetch(tk__wheel_priv_of(newer)->prev);
        n->tk__priv.detached_next = newer; /* key order: towards the newer */
        last = n;
        n = newer;
        k++;
    }
    if (k == 0)
        first = NULL;
    else
        last->tk__priv.detached_next = NULL;
    slot->tail = n;
    w->size -= k;
    bool over = n == NULL || tk__wheel_core_expiry(n) > t;
    if (n == NULL) {
        slot->head = NULL;
        bit_clear(w->occupied, s);
        bit_clear(w->stale, s);
    } else {
        tk__wheel_priv_of(n)->next = NULL;
        slot->min_expiry = over ? tk__wheel_core_expiry(n) : t; /* the tail's: the least */
        bit_clear(w->stale, s);
    }
    w->current_tick = over ? t : t - 1;
    *tail = last;
    *count = k;
    *done = over;
    return first;
}

tk_node *tk__wheel_core_advance(tk__wheel_core *w, size_t *count) {
    tk_node *tail;
    size_t k;
    bool in_order;
    tk_node *out = expire_at(w, w->current_tick + 1, true, &tail, &k, &in_order);
    if (count != NULL)
        *count = k;
    return out;
}

/* First occupied bucket index >= from (no wrap); W if none. */
static size_t next_occupied(const tk__wheel_core *w, size_t from) {
    size_t n = w->ticks_per_wheel;
    if (from >= n)
        return n;
    size_t i = from >> 6;
    uint64_t word = w->occupied[i] & (~UINT64_C(0) << (from & 63));
    for (;;) {
        if (word != 0) {
            size_t s = (i << 6) + (size_t)__builtin_ctzll(word);
            return s < n ? s : n;
        }
        if (++i >= w->words)
            return n;
        word = w->occupied[i];
    }
}

/* Counts the nodes of bucket s whose expiry tick is at or before `tick`,
 * adding to *k and stopping at `limit`. */
static void count_bucket_through(const tk__wheel_core *w, size_t s, uint64_t tick, size_t limit,
                                 size_t *k) {
    if (w->slots[s].min_expiry > tick)
        return; /* min_expiry is a lower bound: nothing here is that early */
    for (const tk_node *p = w->slots[s].head; p != NULL && *k < limit;
         p = tk__wheel_priv_of(p)->next)
        if (tk__wheel_core_expiry(p) <= tick)
            (*k)++;
}

size_t tk__wheel_core_count_through(const tk__wheel_core *w, uint64_t tick, size_t limit) {
    uint64_t c = w->current_tick;
    if (tick <= c || w->size == 0 || limit == 0)
        return 0;
    /* The nodes due by `tick` sit in the buckets of ticks c + 1 .. tick, every
     * bucket once that is a whole revolution or more. */
    size_t n = w->ticks_per_wheel;
    uint64_t span = tick - c;
    size_t first = SLOT_OF(w, c + 1);
    size_t buckets = span >= n ? n : (size_t)span;
    size_t end = first + buckets; /* exclusive, may pass n: then wrap to 0 */
    size_t k = 0;
    for (size_t s = next_occupied(w, first); s < n && s < end && k < limit;
         s = next_occupied(w, s + 1))
        count_bucket_through(w, s, tick, limit, &k);
    if (end > n)
        for (size_t s = next_occupied(w, 0); s < end - n && k < limit; s = next_occupied(w, s + 1))
            count_bucket_through(w, s, tick, limit, &k);
    return k;
}

/* Exact minimum expiry tick of bucket s (walks it if stale). */
static uint64_t slot_min(const tk__wheel_core *w, size_t s, bool exact) {
    const tk__wheel_slot *slot = &w->slots[s];
    if (!exact || !bit_test(w->stale, s))
        return slot->min_expiry;
    uint64_t min = UINT64_MAX;
    for (const tk_node *n = slot->head; n != NULL; n = tk__wheel_priv_of(n)->next)
        if (tk__wheel_core_expiry(n) < min)
            min = tk__wheel_core_expiry(n);
    return min;
}

/* Minimum over non-empty buckets of their (exact or lower-bound) minimum,
 * scanning buckets in tick order from c + 1 and stopping at the first bucket
 * whose first possible tick is not below the best found. */
static bool scan_min(const tk__wheel_core *w, bool exact, uint64_t *tick) {
    if (w->size == 0)
        return false;
    uint64_t c = w->current_tick;
    size_t n = w->ticks_per_wheel;
    size_t p = SLOT_OF(w, c + 1);
    uint64_t best = UINT64_MAX;
    for (int pass = 0; pass < 2; pass++) {
        size_t from = pass == 0 ? p : 0;
        size_t end = pass == 0 ? n : p;
        for (size_t s = next_occupied(w, from); s < end; s = next_occupied(w, s + 1)) {
            uint64_t first = c + 1 + ((s - p) & w->mask); /* first tick > c in bucket s */
            if (first >= best)
                goto done;
            uint64_t m = slot_min(w, s, exact);
            if (m < best)
                best = m;
        }
    }
done:
    *tick = best;
    return true;
}

/* The last tick node n (in the wheel) may leave at: the tick of the end of
 * its window, or its expiry tick if that is later (a node added late). */
static inline uint64_t end_tick(const tk__wheel_core *w, const tk_node *n) {
    int64_t slack = n->slack_ns > 0 ? n->slack_ns : 0;
    uint64_t end = raw_expiry(w, tk__sat_add(n->deadline_ns, slack));
    uint64_t e = tk__wheel_core_expiry(n);
    return end > e ? end : e;
}

bool tk__wheel_core_latest_tick(const tk__wheel_core *w, size_t budget, uint64_t *tick) {
    if (w->size == 0)
        return false;
    if (!w->slack_seen)
        return scan_min(w, true, tick); /* every end tick is the expiry tick */
    uint64_t c = w->current_tick;
    size_t n = w->ticks_per_wheel;
    size_t p = SLOT_OF(w, c + 1);
    uint64_t best = UINT64_MAX;
    size_t read = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t from = pass == 0 ? p : 0;
        size_t end = pass == 0 ? n : p;
        for (size_t s = next_occupied(w, from); s < end; s = next_occupied(w, s + 1)) {
            uint64_t first = c + 1 + ((s - p) & w->mask); /* its tick this revolution */
            if (first >= best)
                goto done; /* every node from here on has e >= first */
            const tk__wheel_slot *slot = &w->slots[s];
            if (slot->min_expiry > first) {
                /* Nothing here is due this revolution: its nodes end no
                 * earlier than its earliest expiry tick (exact, so that the
                 * answer stays at or after the next expiry). */
                uint64_t m = slot_min(w, s, true);
                if (m < best)
                    best = m;
                continue;
            }
            /* From the oldest node: in a bucket in key order (I6) the tail
             * has the earliest expiry tick, and a node without slack due at
             * `first` ends the search at once. */
            for (const tk_node *x = slot->tail; x != NULL; x = tk__wheel_priv_of(x)->prev) {
                if (read++ >= budget) {
                    best = first; /* nothing unread ends before it */
                    goto done;
                }
                uint64_t t = end_tick(w, x);
                if (t < best) {
                    best = t;
                    if (t == first)
                        goto done; /* no node ends before its bucket's tick */
                }
            }
        }
    }
done:
    *tick = best;
    return true;
}

bool tk__wheel_core_next_candidate(const tk__wheel_core *w, uint64_t *tick) {
    return scan_min(w, false, tick);
}

bool tk__wheel_core_next_expiry_tick(const tk__wheel_core *w, uint64_t *tick) {
    return scan_min(w, true, tick);
}

/* Advances towards `tick`, expiring whole ticks, and stops after the first
 * tick that brings the number of expired nodes to `enough` or more (or at
 * `tick`). With `enough` finite and unsorted, a tick whose bucket is in key
 * order is expired from its tail only as far as `enough` (expire_ordered()),
 * which may split it. */
static tk_node *advance_to(tk__wheel_core *w, uint64_t tick, bool sort, size_t enough,
                           size_t *count, bool *in_order) {
    tk_node *head = NULL, *tail = NULL;
    size_t total = 0;
    bool ordered = true; /* ticks never interleave: in order if each tick is */
    while (w->current_tick < tick && total < enough) {
        uint64_t next;
        if (!tk__wheel_core_next_candidate(w, &next) || next > tick) {
            w->current_tick = tick;
            break;
        }
        tk_node *btail;
        size_t k;
        bool tick_ordered = true, done = true;
        tk_node *batch;
        size_t s = SLOT_OF(w, next);
        if (!sort && enough != SIZE_MAX && w->slots[s].head != NULL &&
            !bit_test(w->disordered, s) && w->slots[s].min_expiry >= next)
            batch = expire_ordered(w, next, enough - total, &btail, &k, &done);
        else
            batch = expire_at(w, next, sort, &btail, &k, &tick_ordered);
        ordered = ordered && tick_ordered;
        if (batch != NULL) {
            if (tail == NULL)
                head = batch;
            else
                tail->tk__priv.detached_next = batch;
            tail = btail;
            total += k;
        }
        if (!done)
            break; /* split: `enough` reached within the tick */
    }
    if (count != NULL)
        *count = total;
    if (in_order != NULL)
        *in_order = ordered;
    return head;
}

tk_node *tk__wheel_core_advance_to(tk__wheel_core *w, uint64_t tick, size_t *count) {
    return advance_to(w, tick, true, SIZE_MAX, count, NULL);
}

tk_node *tk__wheel_core_expire_to(tk__wheel_core *w, uint64_t tick, size_t *count) {
    return advance_to(w, tick, false, SIZE_MAX, count, NULL);
}

tk_node *tk__wheel_core_expire_some(tk__wheel_core *w, uint64_t tick, size_t enough, size_t *count,
                                    bool *in_order) {
    return advance_to(w, tick, false, enough == 0 ? 1 : enough, count, in_order);
}

uint64_t tk__wheel_core_current_tick(const tk__wheel_core *w) {
    return w->current_tick;
}

int64_t tk__wheel_core_tick_time(const tk__wheel_core *w, uint64_t tick) {
    return tk__grid_time(&w->grid, tick);
}

size_t tk__wheel_core_size(const tk__wheel_core *w) {
    return w->size;
}

/* ---- adapter helpers ---------------------------------------------------- */

tk_node *tk__wheel_core_first(const tk__wheel_core *w, bool (*accept)(const tk_node *n, void *ctx),
                              void *ctx) {
    /* The smallest key lies among the accepted nodes of smallest expiry tick:
     * a node of a later tick has a strictly later deadline (see the essay). */
    if (w->size == 0)
        return NULL;
    uint64_t c = w->current_tick;
    size_t n = w->ticks_per_wheel;
    size_t p = SLOT_OF(w, c + 1);
    tk_node *best = NULL;
    uint64_t best_e = UINT64_MAX;
    for (int pass = 0; pass < 2; pass++) {
        size_t from = pass == 0 ? p : 0;
        size_t end = pass == 0 ? n : p;
        for (size_t s = next_occupied(w, from); s < end; s = next_occupied(w, s + 1)) {
            uint64_t first = c + 1 + ((s - p) & w->mask);
            if (first > best_e)
                return best;
            for (tk_node *x = w->slots[s].head; x != NULL; x = tk__wheel_priv_of(x)->next) {
                uint64_t e = tk__wheel_core_expiry(x);
                if (e > best_e || (accept != NULL && !accept(x, ctx)))
                    continue;
                if (best == NULL || e < best_e || tk_node_before(x, best)) {
                    best = x;
                    best_e = e;
                }
            }
        }
    }
    return best;
}

tk_node *tk__wheel_core_extract_if(tk__wheel_core *w, bool (*pred)(tk_node *n, void *ctx),
                                   void *ctx, size_t *count) {
    tk_node *out = NULL;
    size_t k = 0;
    for (size_t s = next_occupied(w, 0); s < w->ticks_per_wheel; s = next_occupied(w, s + 1)) {
        bool took_min = false;
        tk_node *x = w->slots[s].head;
        while (x != NULL) {
            tk_node *next = tk__wheel_priv_of(x)->next;
            if (pred(x, ctx)) {
                took_min |= tk__wheel_core_expiry(x) == w->slots[s].min_expiry;
                unlink_node(w, s, x);
                x->tk__priv.detached_next = out;
                out = x;
                k++;
            }
            x = next;
        }
        if (w->slots[s].head == NULL) {
            bit_clear(w->occupied, s);
            bit_clear(w->stale, s);
        } else if (took_min) {
            bit_set(w->stale, s);
        }
    }
    if (count != NULL)
        *count = k;
    return out;
}

bool tk__wheel_core_foreach(const tk__wheel_core *w, bool (*fn)(const tk_node *n, void *ctx),
                            void *ctx) {
    for (size_t s = next_occupied(w, 0); s < w->ticks_per_wheel; s = next_occupied(w, s + 1))
        for (const tk_node *x = w->slots[s].head; x != NULL; x = tk__wheel_priv_of(x)->next)
            if (!fn(x, ctx))
                return false;
    return true;
}

/* ---- check -------------------------------------------------------------- */

int tk__wheel_core_check(const tk__wheel_core *w) {
    if (w == NULL || w->slots == NULL)
        return TK_ESTATE;
    uint64_t c = w->current_tick;
    size_t total = 0;
    for (size_t s = 0; s < w->ticks_per_wheel; s++) {
        const tk__wheel_slot *slot = &w->slots[s];
        if (bit_test(w->occupied, s) != (slot->head != NULL))
            return TK_ESTATE;
        if (slot->head == NULL) {
            if (slot->tail != NULL)
                return TK_ESTATE;
            continue;
        }
        if (tk__wheel_priv_of(slot->head)->prev != NULL)
            return TK_ESTATE;
        uint64_t min = UINT64_MAX;
        const tk_node *prev = NULL;
        for (const tk_node *n = slot->head; n != NULL; n = tk__wheel_priv_of(n)->next) {
            if (tk__wheel_priv_of(n)->prev != prev)
                return TK_ESTATE;
            uint64_t e = tk__wheel_core_expiry(n);
            uint64_t want = raw_expiry(w, n->deadline_ns);
            if (want <= c)
                want = c + 1;
            if (e != want || SLOT_OF(w, e) != s || e <= c)
                return TK_ESTATE;
            if (e < min)
                min = e;
            if (n->slack_ns > 0 && !w->slack_seen)
                return TK_ESTATE; /* I7 */
            prev = n;
            if (++total > w->size)
                return TK_ESTATE;
        }
        if (slot->tail != prev) /* the last node reached from head */
            return TK_ESTATE;
        if (slot->min_expiry <= c || slot->min_expiry > min || SLOT_OF(w, slot->min_expiry) != s)
            return TK_ESTATE;
        if (!bit_test(w->stale, s) && slot->min_expiry != min)
            return TK_ESTATE;
        if (!bit_test(w->disordered, s))
            for (const tk_node *n = slot->head; tk__wheel_priv_of(n)->next != NULL;
                 n = tk__wheel_priv_of(n)->next)
                if (tk_node_before(n, tk__wheel_priv_of(n)->next))
                    return TK_ESTATE; /* I6: newer before older */
    }
    return total == w->size ? TK_OK : TK_ESTATE;
}
