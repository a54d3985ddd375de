/* SPDX-License-Identifier: MIT */
/* timerkit: the hierarchical timing wheel core (tk__hwheel_core_ops).
 *
 * Structure. A hierarchical timing wheel (Varghese & Lauck 1987, scheme 7;
 * the shape of the Linux timer wheel, Kafka's purgatory timer and William
 * Ahern's timeout.c). Time is cut into ticks laid from the origin o given
 * to init(): tick k is the instant o + k * tick. A node with deadline d
 * belongs to tick
 *
 *     T(d) = ceil((d - o) / tick) for d > o, 0 for d <= o,
 *
 * and is due from due(d) = o + T(d) * tick (saturated at INT64_MAX) on.
 * There are L levels of W = 2^b slots each. A slot of level l stands for a
 * period of 2^(l*b) ticks: the ticks whose base-W digit l is the slot's
 * index. A slot has two banks, one for its periods in even revolutions of
 * its level and one for odd ones (the lowest bit of digit l + 1): the bank
 * of tick t at level l is
 *
 *     B_l(t) = (t >> l*b) mod 2W,      the slot's index, plus W if odd.
 *
 * A bank keeps its nodes in K = TK__HWHEEL_CHAINS intrusive doubly linked
 * FIFO lists, its chains, and a count, which also says which chain the next
 * node is appended to (count mod K): a bank filled without removals holds
 * its i-th node in chain i mod K. A node is unlinked in O(1) from what its
 * private area records: its tick T, "where" it is (a level and a bank, the
 * due list, the overflow list, or nowhere: 0, a zeroed private area) and
 * its chain. One occupancy bitmap per level, a bit a bank (two 64-bit words
 * for the default b = 6), finds the next occupied bank with a rotate and a
 * count of trailing zeros.
 *
 * Position and placement. The core keeps a position c, the last tick
 * expire() has reached (0 at init). A node with t = T(d) > c goes to level
 *
 *     l = floor(msb(t - c) / b),     bank B_l(t),
 *
 * or to the overflow list if l >= L. Choosing the level from the distance
 * t - c (rather than from the highest digit where t and c differ) keeps a
 * node out of a level higher than its distance calls for: a timer an hour
 * ahead sits at the level whose slot period is about 4 minutes with the
 * defaults, whatever c is. Since 2^(l*b) <= t - c < 2^((l+1)*b), the
 * period of t's slot starts after c. A bank stands for one period in every
 * two revolutions of its level, so it is the only period of its bank among
 * the next 2^((l+1)*b + 1) ticks: every node of a bank belongs to the same
 * period, and each occupied bank has one instant, the start of its period,
 * its "event". (Placement uses only the first of those two revolutions; the
 * second is room for the early cascades below.) A node with t <= c is
 * late: it goes to the due list.
 *
 * Cascading. expire(now) moves c from event to event up to the last tick at
 * or before now (jumping over empty ticks: the next event of a level is its
 * first occupied bank after c's, in rotated order). At an event E, the bank
 * whose period starts at E is emptied in one walk: each node is placed
 * again relative to c = E, which puts it in a lower level (its distance is
 * now below 2^(l*b)), or, if t == E, straight into E's output batch; a
 * level-0 bank's nodes all have t == E and go to the batch whole. So every
 * node leaves at exactly its tick t. Each tick's batch is sorted by
 * (deadline, seq): not at all when the walk finds the order it met the
 * nodes in already is that order, as it usually is; else by
 * tk__node_sort(), after one pass that spreads a large batch over buckets
 * by the deadline's place within the tick (all of a batch's deadlines lie
 * in one tick), so that a thousand scrambled nodes due in one tick cost two
 * short passes, not ten merge passes. Nodes of a later tick have strictly
 * later deadlines, so batches of successive ticks never interleave and the
 * output stream is in exact (deadline, seq) order.
 *
 * Why chains. A cascade or a take visits every node of a bank, and those
 * nodes were last touched when they were placed, often long ago: each is a
 * cache miss, and on one list each miss waits for the one before it (the
 * next address is in the node). A bank of a busy wheel holds tens of
 * thousands of nodes, and such a chain of misses, run under the owner's
 * lock, is a pause in which nothing is handed out. With K chains a bank is
 * walked round-robin, one node of each chain in turn, and each chain's next
 * node is prefetched as soon as its address is read, K nodes before it is
 * needed: up to K misses are in flight instead of one. The round-robin walk
 * of a bank filled round-robin meets the nodes in the order they were
 * appended, so a batch inserted in deadline order still comes out of a take
 * already in order (a removal in the middle of a chain may shift that
 * order, which then costs a sort, never a wrong order).
 *
 * Early cascades. A cascade is due at its event E, but nothing stops it
 * from being done before, in pieces: once c has passed the level's
 * boundary before E (E - 2^(l*b) <= c < E), every node of the bank whose
 * period starts at E lies less than 2^(l*b + 1) ticks ahead, which level
 * l - 1 has room for in its second revolution, and its period there still
 * starts at or after E. So every expire() that moves c also moves, for each
 * level l >= 1, a share of the bank whose period starts next, its count
 * over the ticks left to its event (rounded up), to the level its distance
 * calls for, but below l. On a busy wheel, where expire() comes every tick,
 * each call moves an even share of what is left and the event finds its
 * bank empty: the work of a cascade is spread over the ticks before it, and
 * no single call walks a whole slot. Without calls in between (the first
 * event after a quiet spell) the event does the rest itself, as a plain
 * cascade. A node moved early still passes through each level at most once,
 * and every event stays where it was or moves later, so next() and the
 * order in which events are visited are unaffected.
 *
 * Why cascade. Linux's wheel since 4.8 does not cascade: a node stays in
 * its coarse level and fires at that level's granularity boundary, which
 * saves the re-placements at the price of precision (up to about an
 * eighth of the delay late). That cannot give the exact order this engine promises
 * (TK_QUEUE_CAP_EXACT_ORDER): a node A rounded up to a coarse boundary B
 * would be held until B, while a node inserted later with a later deadline
 * in a finer level, due before B, would leave before A. Cascading keeps
 * every node's precision at one tick at every level, which is what makes
 * the order exact; its cost is at most one re-placement per level a node
 * passes through (fewer than L), each an O(1) step of a walk over a bank,
 * with no sort per cascade.
 *
 * Overflow. A node whose distance reaches 2^(L*b) ticks (beyond the top
 * level's span: past about 795 days with the defaults, where INT64_MAX
 * "never" deadlines go) waits in the overflow list, which keeps a lower bound
 * m of its ticks. Its event is the start of m's top-level revolution
 * (m rounded down to a multiple of 2^(L*b)); there the list is walked once,
 * the nodes whose tick lies in that revolution are placed (or output), and
 * m becomes exact again. That happens once per top-level revolution that
 * holds an overflow node's tick, and once more where removals had left m
 * low.
 *
 * The due list. expire() may hand out at most `max` nodes; the rest of what
 * is due waits in the due list, a doubly linked list in (deadline, seq)
 * order, as do nodes inserted late (t <= c, sorted in from the tail: late
 * inserts are usually the newest deadlines). Every node there has t <= c,
 * every node elsewhere t > c, so the due list always comes first.
 *
 * next(). The due list's head if any, else the earliest event: exact for a
 * level-0 bank, a lower bound for a cascade or the overflow list (the
 * contract allows it: expire() at a cascade either hands a node out or
 * moves next() strictly later, since every node placed from the bank gets
 * an event after E; a bank emptied early asks for no wake-up at all). So
 * the owner never wakes for an empty tick, and a node causes at most one
 * wake-up per level it passes through, each at the start of its slot's
 * period: a timer an hour ahead with the defaults (level 3, slot periods of
 * 2^18 ticks) first asks for a wake-up less than 2^18 ms, under five
 * minutes, before it is due.
 *
 * latest() (slack, engine.h). A node's window ends at due(deadline +
 * slack), no earlier than the event of its bank (its tick is in the bank's
 * period) or, in the overflow list, than due of the list's lower bound m.
 * latest() keeps best, the smallest window end read, and walks the levels
 * from 0 up, each level's occupied banks in event order from c (the bitmap
 * skips the empty ones, and the walk wraps round past bank 2W - 1 to c's
 * own), reading every node of a bank, until a bank's event is at or after
 * best: no later bank of the level can end a window sooner. A level whose
 * next boundary is at or after best is not looked at, nor any above it
 * (next_event_from() has why), and the overflow list is read only if due(m)
 * comes before best. So the answer is the exact smallest window end, the
 * nodes in higher levels and the overflow list included: an owner wakes
 * once for a node with slack, at the end of its window, not at every
 * cascade on the way (at a fine tick level 0 spans little, and those
 * cascades come often). A bank above level 0 holds nodes due over its
 * whole period, which an owner waking at the answer mostly does not hand
 * out, so the walk reads at most HW_LATEST_BUDGET nodes in all, level 0's
 * included: at a bank that would take it past that, it answers the
 * earliest instant an unread node could be due, that bank's event or the
 * next event of a higher level or of the overflow list if earlier (and
 * due(m) for an overflow list longer than what is left), an early wake-up
 * after which the owner asks again. A core that holds no node with slack
 * (none inserted since it was last empty: slack_held) answers next(), as
 * before slack existed, so that a caller without slack pays for no walk.
 * Every node's window ends at or after
 * its bank's event (or due(m)), and each of those is at or after next()'s
 * event, so every answer, cut short or not, is at or after next(). With
 * nodes in the due list (already due) the answer is next().
 *
 * Invariants (checked by check()), with c the position:
 *   I1  a node at level l in bank s has tick t == T(deadline), s ==
 *       B_l(t), the start of t's level-l period after c, and t - c below
 *       2^((l+1)*b + 1); where records (l, s) and chain the chain it is in;
 *   I2  every node of the overflow list has t == T(deadline) and the start
 *       of its top-level revolution after c; the kept lower bound m is
 *       <= every t and its revolution starts after c;
 *   I3  the due list is in (deadline, seq) order and every node there has
 *       t == T(deadline) <= c;
 *   I4  lists and chains are doubly linked, head and tail right; a bank's
 *       count is the number of nodes in its chains; a level's bitmap bit
 *       is set exactly for its non-empty banks; the counts match.
 * Each occupied bank therefore has its event after c, and the events are
 * visited in order, so no node is ever skipped or handed out early.
 *
 * Complexity. insert O(1) (one multiply-high for the tick, a count of
 * leading zeros, a table look-up for the level), except a late insert:
 * O(late nodes ahead of it in the due list). remove O(1). expire: O(1) per
 * event found (L bitmap words of up to 128 bits, 2W/64 words a level
 * beyond), O(L) per call that moves c (the early shares), O(1) per node and
 * cascade (fewer than L cascades per node, early or not) and the per-tick
 * sort (O(k) for an ordered batch of k, expected O(k) for deadlines spread
 * over the tick, O(k log k) at worst). next O(L); latest O(L * 2W / 64 +
 * the banks visited) plus the nodes read, at most HW_LATEST_BUDGET (4096)
 * in all; first O(L * K + the nodes
 * of each level's first occupied bank); remove_if O(n + L * 2W / 64 + K per
 * non-empty bank); count_due O(L * 2W + nodes looked at in the banks only
 * partly due). The overflow list costs O(its length) per top-level
 * revolution that holds a tick of it. Memory: 2W banks a level of 8 + 16 *
 * K bytes (136 with K = 8: 102 KiB with the defaults), max(8, W/4) bytes of
 * bitmap a level, nothing per node beyond its 32-byte private area.
 *
 * Precision. A node is handed out by expire(now) exactly when due(d) <=
 * now: never early, and at most one tick late in tick time (due(d) - d <
 * tick). The blocking adapter adds its wake-up latency.
 *
 * Arithmetic. Ticks are uint64 counted from the origin: deadlines anywhere
 * in int64 (INT64_MIN/2 before the origin, INT64_MAX) map to 0 .. 2^64 - 1,
 * the division by the tick is a multiply-high with one correction, tick
 * instants saturate at INT64_MAX, and L * b <= 62 keeps every shift within
 * a word (the widest, (l+1)*b + 1 for a level's two revolutions, is at most
 * 63). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common-internal.h"
#include "hwheel-core.h"
#include "node-sort.h"
#include "tick-grid.h"
#include "timerkit/engine.h"
#include "timerkit/status.h"

/* ---- a node's private area -------------------------------------------------- */

/* What the core keeps in a node: hwheel-core.h lays it out. */
typedef tk__hwheel_priv hw_priv;

_Static_assert(sizeof(hw_priv) <= TK_NODE_PRIV_SIZE, "hw_priv must fit a node's private area");
_Static_assert(offsetof(hw_priv, next) == 0, "the link must be the first word");

enum {
    HW_NONE = 0,
    HW_TAG_MASK = 0xff000000u,
    HW_WHEEL = 0x48000000u, /* 'H': level in bits 16..23, bank in bits 0..15 */
    HW_DUE = 0x44000000u,   /* 'D' */
    HW_OVF = 0x4f000000u    /* 'O' */
};

static inline hw_priv *PV(tk_node *n) {
    return (hw_priv *)tk_node_priv(n);
}

static inline const hw_priv *CPV(const tk_node *n) {
    return (const hw_priv *)tk_node_priv_const(n);
}

#define NEXT(n) (PV(n)->next)
#define PREV(n) (PV(n)->prev)

/* ---- the core's state ----------------------------------------------------------- */

#define HW_CHAINS TK__HWHEEL_CHAINS
_Static_assert(HW_CHAINS >= 1 && (HW_CHAINS & (HW_CHAINS - 1)) == 0,
               "a bank's chains must be a power of two");

typedef struct hw_chain {
    tk_node *head, *tail; /* oldest, newest; both NULL when empty */
} hw_chain;

/* One slot's nodes of one revolution parity (see B_l(t)). */
typedef struct hw_bank {
    size_t count; /* nodes in its chains; the next one goes to chain count % HW_CHAINS */
    hw_chain chain[HW_CHAINS];
} hw_bank;

typedef struct hw_list {
    tk_node *head, *tail;
    size_t count;
} hw_list;

typedef struct hwheel {
    uint64_t cur;       /* c: the last tick expire() reached */
    tk__grid grid;      /* tick k at o + k * tick (tick-grid.h) */
    hw_bank *banks;     /* levels << sbits banks, level-major */
    uint64_t *occ;      /* levels * words bitmap words, a bit a bank */
    uint64_t mask;      /* 2W - 1: B_l(t) = (t >> l*b) & mask */
    unsigned bits;      /* b */
    unsigned sbits;     /* b + 1: log2 of a level's banks */
    unsigned levels;    /* L */
    unsigned words;     /* bitmap words a level: max(1, 2W / 64) */
    unsigned span_bits; /* L * b, <= 62 */
    size_t count;       /* nodes held, everywhere */
    bool slack_held;    /* a node with slack was inserted since the core was last empty */
    hw_list due;        /* (deadline, seq) order, all with tick <= cur */
    hw_list ovf;        /* beyond the top level, unordered */
    uint64_t ovf_min;   /* <= every overflow node's tick (see I2) */
    const tk_allocator *alloc;
    size_t block_bytes;       /* the one allocation: banks then bitmaps */
    uint8_t level_of_msb[64]; /* msb(distance) -> level; >= L: overflow */
} hwheel;

/* ---- ticks ------------------------------------------------------------------------ */

/* T(d): the first tick whose instant is at or after d (0 if d <= origin). */
static inline uint64_t tick_of(const hwheel *w, int64_t d) {
    return tk__grid_ceil(&w->grid, d);
}

/* The instant of tick k, saturated at INT64_MAX. */
static inline int64_t tick_time(const hwheel *w, uint64_t k) {
    return tk__grid_time(&w->grid, k);
}

/* The last tick whose instant is at or before now (now >= origin). At
 * INT64_MAX every tick qualifies, those whose instant saturates included. */
static inline uint64_t tick_at(const hwheel *w, int64_t now_ns) {
    if (now_ns == INT64_MAX)
        return UINT64_MAX;
    return tk__grid_floor(&w->grid, now_ns);
}

/* Start of the period of 2^shift ticks that holds t. */
static inline uint64_t period_start(uint64_t t, unsigned shift) {
    return t & ~((UINT64_C(1) << shift) - 1);
}

/* ---- banks and bitmaps ---------------------------------------------------------- */

static inline hw_bank *bank_at(hwheel *w, unsigned l, size_t s) {
    return &w->banks[((size_t)l << w->sbits) + s];
}

static inline uint64_t *occ_word(hwheel *w, unsigned l, size_t s) {
    return &w->occ[(size_t)l * w->words + (s >> 6)];
}

/* First occupied bank of level l at index >= from (no wrap), or 2W. */
static size_t level_scan(const hwheel *w, unsigned l, size_t from) {
    size_t n = (size_t)1 << w->sbits;
    if (from >= n)
        return n;
    const uint64_t *o = &w->occ[(size_t)l * w->words];
    size_t i = from >> 6;
    uint64_t word = o[i] & (~UINT64_C(0) << (from & 63));
    for (;;) {
        if (word != 0)
            return (i << 6) + (size_t)__builtin_ctzll(word);
        if (++i >= w->words)
            return n;
        word = o[i];
    }
}

/* The event of bank s of level l: the start of its period, the first
 * instant after c with B_l == s and digits below l all 0. Only meaningful
 * for an occupied bank (I1 keeps it below 2^64). */
static inline uint64_t bank_event(const hwheel *w, unsigned l, size_t s) {
    unsigned sh = l * w->bits;
    unsigned up = sh + w->sbits;
    uint64_t base = period_start(w->cur, up);
    size_t p = (size_t)(w->cur >> sh) & w->mask;
    if (s <= p)
        base += UINT64_C(1) << up;
    return base + ((uint64_t)s << sh);
}

/* The earliest event of level l: its first occupied bank after c's, in
 * rotated order (c's own bank is empty: its period does not start after
 * c, and the next one it stands for is too far). False if the level is
 * empty. */
static inline bool level_event(const hwheel *w, unsigned l, size_t *bank, uint64_t *event) {
    unsigned sh = l * w->bits;
    size_t p = (size_t)(w->cur >> sh) & w->mask;
    size_t s;
    if (w->words <= 2) {
        /* up to 128 banks (b <= 6): one 128-bit word */
        const uint64_t *o = &w->occ[(size_t)l * w->words];
        tk__u128 word = w->words == 2 ? (tk__u128)o[1] << 64 | o[0] : o[0];
        if (word == 0)
            return false;
        /* p + 1 <= 2W <= 128; a shift by 128 is undefined, hence the test */
        tk__u128 above = p + 1 < 128 ? word & (~(tk__u128)0 << (p + 1)) : 0;
        tk__u128 x = above != 0 ? above : word;
        uint64_t lo = (uint64_t)x;
        s = lo != 0 ? (size_t)__builtin_ctzll(lo)
                    : 64 + (size_t)__builtin_ctzll((uint64_t)(x >> 64));
    } else {
        s = level_scan(w, l, p + 1);
        if (s == ((size_t)1 << w->sbits)) {
            s = level_scan(w, l, 0);
            if (s > p)
                return false;
        }
    }
    *bank = s;
    *event = bank_event(w, l, s);
    return true;
}

/* The overflow list's event: the start of the top-level revolution of its
 * lower bound. */
static inline uint64_t ovf_event(const hwheel *w) {
    return period_start(w->ovf_min, w->span_bits);
}

/* The earliest event of the levels from first_level up and of the overflow
 * list (next_event(): of the whole wheel); false if all are empty. A
 * level's events are starts of its periods after c, so none comes before
 * the level's next boundary, and those boundaries do not come earlier as
 * the level rises: once one is no earlier than the best event found, no
 * higher level can offer an earlier one. */
static bool next_event_from(const hwheel *w, unsigned first_level, uint64_t *event) {
    bool any = false;
    uint64_t best = UINT64_MAX;
    for (unsigned l = first_level; l < w->levels; l++) {
        if (any) {
            unsigned sh = l * w->bits;
            uint64_t bound = period_start(w->cur, sh) + (UINT64_C(1) << sh);
            if (bound > w->cur && bound >= best)
                break; /* (bound <= c: no level-l period starts after c) */
        }
        size_t s;
        uint64_t e;
        if (level_event(w, l, &s, &e) && (!any || e < best)) {
            best = e;
            any = true;
        }
    }
    if (w->ovf.head != NULL) {
        uint64_t e = ovf_event(w);
        if (!any || e < best) {
            best = e;
            any = true;
        }
    }
    *event = best;
    return any;
}

static inline bool next_event(const hwheel *w, uint64_t *event) {
    return next_event_from(w, 0, event);
}

/* ---- lists ---------------------------------------------------------------------- */

/* Appends n to bank s of level l, to the chain whose turn it is. */
static inline void bank_append(hwheel *w, unsigned l, size_t s, tk_node *n) {
    hw_bank *bk = bank_at(w, l, s);
    size_t k = bk->count++;
    unsigned j = (unsigned)k & (HW_CHAINS - 1);
    hw_chain *ch = &bk->chain[j];
    hw_priv *p = PV(n);
    p->next = NULL;
    p->prev = ch->tail;
    p->where = HW_WHEEL | (uint32_t)l << 16 | (uint32_t)s;
    p->chain = j;
    if (ch->tail != NULL)
        NEXT(ch->tail) = n;
    else
        ch->head = n;
    ch->tail = n;
    if (k == 0)
        *occ_word(w, l, s) |= UINT64_C(1) << (s & 63);
}

/* A walk over the chains of a bank that has been emptied. */
typedef struct hw_walk {
    tk_node *cur[HW_CHAINS]; /* the next node of each chain not yet exhausted */
    unsigned live;           /* chains not yet exhausted */
    unsigned i;              /* the chain whose node comes next */
} hw_walk;

/* Empties bank s of level l, handing its chains to a walk (their first
 * nodes already being fetched). */
static inline void bank_take(hwheel *w, unsigned l, size_t s, hw_walk *wk) {
    hw_bank *bk = bank_at(w, l, s);
    unsigned a = 0;
    for (unsigned j = 0; j < HW_CHAINS; j++) {
        tk_node *h = bk->chain[j].head;
        if (h != NULL) {
            __builtin_prefetch(h, 1);
            wk->cur[a++] = h;
        }
        bk->chain[j].head = bk->chain[j].tail = NULL;
    }
    wk->live = a;
    wk->i = 0;
    bk->count = 0;
    *occ_word(w, l, s) &= ~(UINT64_C(1) << (s & 63));
}

/* The walk's next node, or NULL at the end: the chains in turn, one node
 * each (a chain that runs out leaves the turn without changing the order of
 * the others), so that the nodes of a bank filled in turn come in the order
 * they were appended. Each chain's next node is fetched as soon as its
 * address is known, so up to HW_CHAINS cache misses are in flight. The
 * node's link has been read: the caller may relink it. */
static inline tk_node *walk_next(hw_walk *wk) {
    if (wk->live == 0)
        return NULL;
    unsigned i = wk->i;
    tk_node *n = wk->cur[i];
    tk_node *next = NEXT(n);
    if (next != NULL) {
        __builtin_prefetch(next, 1);
        wk->cur[i++] = next;
    } else {
        wk->live--;
        memmove(&wk->cur[i], &wk->cur[i + 1], (wk->live - i) * sizeof(wk->cur[0]));
    }
    wk->i = i < wk->live ? i : 0;
    return n;
}

static inline void list_append(hw_list *li, tk_node *n, uint32_t where) {
    hw_priv *p = PV(n);
    p->next = NULL;
    p->prev = li->tail;
    p->where = where;
    if (li->tail != NULL)
        NEXT(li->tail) = n;
    else
        li->head = n;
    li->tail = n;
    li->count++;
}

static inline void list_unlink(hw_list *li, tk_node *n) {
    hw_priv *p = PV(n);
    if (p->prev != NULL)
        NEXT(p->prev) = p->next;
    else
        li->head = p->next;
    if (p->next != NULL)
        PREV(p->next) = p->prev;
    else
        li->tail = p->prev;
    li->count--;
}

/* Links n into the due list at its place in (deadline, seq) order, searching
 * from the tail. */
static void due_insert(hwheel *w, tk_node *n) {
    tk_node *after = w->due.tail;
    while (after != NULL && tk_node_before(n, after))
        after = PREV(after);
    hw_priv *p = PV(n);
    p->where = HW_DUE;
    p->prev = after;
    p->next = after != NULL ? NEXT(after) : w->due.head;
    if (p->next != NULL)
        PREV(p->next) = n;
    else
        w->due.tail = n;
    if (after != NULL)
        NEXT(after) = n;
    else
        w->due.head = n;
    w->due.count++;
}

/* Puts n (tick t > c) at its level and bank, or in the overflow list. */
static inline void place(hwheel *w, tk_node *n, uint64_t t) {
    unsigned l = w->level_of_msb[63 - __builtin_clzll(t - w->cur)];
    if (TK__LIKELY(l < w->levels)) {
        bank_append(w, l, (size_t)(t >> (l * w->bits)) & w->mask, n);
        return;
    }
    if (w->ovf.head == NULL || t < w->ovf_min)
        w->ovf_min = t;
    list_append(&w->ovf, n, HW_OVF);
}

/* ---- init, destroy -------------------------------------------------------------- */

static bool params_ok(const tk__hwheel_params *p) {
    return p->tick_ns > 0 && p->bits >= TK__HWHEEL_MIN_BITS && p->bits <= TK__HWHEEL_MAX_BITS &&
           p->levels >= TK__HWHEEL_MIN_LEVELS && p->levels <= TK__HWHEEL_MAX_LEVELS &&
           p->bits * p->levels <= TK__HWHEEL_MAX_SPAN_BITS &&
           p->tick_ns <= (INT64_MAX >> (p->bits * p->levels));
}

static int hw_init(void *core, const void *params, const tk_allocator *a, int64_t origin_ns) {
    hwheel *w = core;
    const tk__hwheel_params *p = params;
    if (w == NULL || p == NULL || a == NULL)
        return TK_EINVAL;
    memset(w, 0, sizeof(*w));
    if (!params_ok(p))
        return TK_EINVAL;
    size_t nbanks = (size_t)2 << p->bits; /* a level's: 2W */
    unsigned words = nbanks >= 64 ? (unsigned)(nbanks / 64) : 1;
    size_t bank_bytes = (size_t)p->levels * nbanks * sizeof(hw_bank);
    size_t bytes = bank_bytes + (size_t)p->levels * words * sizeof(uint64_t);
    void *block = tk__alloc(a, bytes);
    if (block == NULL)
        return TK_ENOMEM;
    memset(block, 0, bytes);
    w->banks = block;
    w->occ = (uint64_t *)(void *)((char *)block + bank_bytes);
    w->block_bytes = bytes;
    w->alloc = a;
    tk__grid_init(&w->grid, origin_ns, p->tick_ns);
    w->bits = p->bits;
    w->sbits = p->bits + 1;
    w->levels = p->levels;
    w->words = words;
    w->mask = nbanks - 1;
    w->span_bits = p->bits * p->levels;
    for (unsigned m = 0; m < 64; m++) {
        unsigned l = m / p->bits;
        w->level_of_msb[m] = (uint8_t)(l < p->levels ? l : p->levels);
    }
    return TK_OK;
}

static void hw_destroy(void *core) {
    hwheel *w = core;
    if (w == NULL || w->banks == NULL)
        return;
    tk__free(w->alloc, w->banks, w->block_bytes);
    w->banks = NULL;
    w->occ = NULL;
}

/* ---- insert, remove, due --------------------------------------------------------- */

static int hw_insert(void *core, tk_node *n) {
    hwheel *w = core;
    if (w == NULL || n == NULL)
        return TK_EINVAL;
    hw_priv *p = PV(n);
    if (p->where != HW_NONE)
        return TK_EINVAL;
    uint64_t t = tick_of(w, n->deadline_ns);
    p->tick = t;
    if (w->count == 0)
        w->slack_held = false; /* nothing held: no slack either */
    if (n->slack_ns > 0)
        w->slack_held = true;
    w->count++;
    if (TK__UNLIKELY(t <= w->cur))
        due_insert(w, n);
    else
        place(w, n, t);
    return TK_OK;
}

static int hw_remove(void *core, tk_node *n) {
    hwheel *w = core;
    if (w == NULL || n == NULL)
        return TK_ENOENT;
    hw_priv *p = PV(n);
    uint32_t where = p->where;
    if ((where & HW_TAG_MASK) == HW_WHEEL) {
        unsigned l = (where >> 16) & 0xffu;
        size_t s = where & 0xffffu;
        if (l >= w->levels || s > w->mask || p->chain >= HW_CHAINS)
            return TK_ENOENT;
        hw_bank *bk = bank_at(w, l, s);
        hw_chain *ch = &bk->chain[p->chain];
        if (p->prev != NULL)
            NEXT(p->prev) = p->next;
        else
            ch->head = p->next;
        if (p->next != NULL)
            PREV(p->next) = p->prev;
        else
            ch->tail = p->prev;
        if (--bk->count == 0)
            *occ_word(w, l, s) &= ~(UINT64_C(1) << (s & 63));
    } else if (where == HW_DUE) {
        list_unlink(&w->due, n);
    } else if (where == HW_OVF) {
        list_unlink(&w->ovf, n); /* ovf_min stays a lower bound */
    } else {
        return TK_ENOENT;
    }
    p->where = HW_NONE;
    w->count--;
    return TK_OK;
}

static int64_t hw_due(const void *core, int64_t deadline_ns) {
    const hwheel *w = core;
    return tick_time(w, tick_of(w, deadline_ns));
}

/* ---- expiry --------------------------------------------------------------------- */

/* Nodes handed out by one expire() (or one tick of it): a list linked
 * through the detached link, each node marked HW_NONE. */
typedef struct hw_batch {
    tk_node *head, *tail;
    size_t count;
    bool ordered; /* known to be in (deadline, seq) order */
} hw_batch;

static inline void batch_push(hw_batch *b, tk_node *n) {
    hw_priv *p = PV(n);
    p->where = HW_NONE;
    p->next = NULL;
    if (b->tail != NULL) {
        if (tk_node_before(n, b->tail))
            b->ordered = false;
        NEXT(b->tail) = n;
    } else {
        b->head = n;
    }
    b->tail = n;
    b->count++;
}

/* Empties bank s of level l >= 1 at its event c: each node goes one level
 * down or more, or into `out` if its tick has come. */
static void cascade(hwheel *w, unsigned l, size_t s, hw_batch *out) {
    hw_walk wk;
    bank_take(w, l, s, &wk);
    uint64_t c = w->cur;
    tk_node *n;
    while ((n = walk_next(&wk)) != NULL) {
        uint64_t t = PV(n)->tick;
        if (t == c)
            batch_push(out, n);
        else
            place(w, n, t);
    }
}

/* Moves the overflow nodes whose tick lies in the top-level revolution that
 * starts at c into the wheel (or `out`), and makes ovf_min exact. */
static void ovf_redistribute(hwheel *w, hw_batch *out) {
    uint64_t c = w->cur;
    uint64_t rev = c >> w->span_bits;
    uint64_t min = UINT64_MAX;
    tk_node *n = w->ovf.head;
    while (n != NULL) {
        tk_node *next = NEXT(n);
        uint64_t t = PV(n)->tick;
        if ((t >> w->span_bits) == rev) {
            list_unlink(&w->ovf, n);
            if (t == c)
                batch_push(out, n);
            else
                place(w, n, t);
        } else if (t < min) {
            min = t;
        }
        n = next;
    }
    w->ovf_min = min;
}

/* Takes level-0 bank s (every node of it has tick c) into `out` whole. */
static void take_bank0(hwheel *w, size_t s, hw_batch *out) {
    hw_walk wk;
    bank_take(w, 0, s, &wk);
    tk_node *last = out->tail;
    size_t k = 0;
    bool ordered = out->ordered;
    tk_node *n;
    while ((n = walk_next(&wk)) != NULL) {
        PV(n)->where = HW_NONE;
        if (last != NULL) {
            if (tk_node_before(n, last))
                ordered = false;
            NEXT(last) = n;
        } else {
            out->head = n;
        }
        last = n;
        k++;
    }
    if (last != NULL)
        NEXT(last) = NULL;
    out->tail = last;
    out->count += k;
    out->ordered = ordered;
}

/* Sorts the batch of tick e (count nodes from head, not in order), all of
 * whose deadlines lie in (t_{e-1}, t_e]. A large batch is first spread over
 * up to 256 buckets by the deadline's place within that tick (one pass, in
 * list order: stable), which leaves each bucket small, or already in order,
 * for tk__node_sort(); a batch of equal deadlines lands in one bucket and
 * costs the pass more than sorting it alone. Returns the head; *tail gets
 * the last node. */
static tk_node *sort_batch(const hwheel *w, uint64_t e, tk_node *head, size_t count,
                           tk_node **tail) {
    if (count < 64 || w->grid.recip == 0 || e == 0)
        return tk__node_sort(head, tail);
    unsigned lg = 63u - (unsigned)__builtin_clzll((uint64_t)count) - 2u; /* ~count/4 buckets */
    lg = lg < 4 ? 4 : lg > 8 ? 8 : lg;
    size_t nb = (size_t)1 << lg;
    tk_node *bh[256], *bt[256];
    memset(bh, 0, nb * sizeof(bh[0]));
    /* lo = t_{e-1}, exact (it may lie past INT64_MAX only if the batch is
     * empty); off = d - lo - 1 < tick, so off * grid.recip, the deadline's
     * place in the tick as a 64-bit fraction, does not overflow */
    tk__i128 lo = (tk__i128)w->grid.origin_ns + (tk__i128)(e - 1) * (tk__i128)w->grid.tick_ns;
    uint64_t last = (uint64_t)w->grid.tick_ns - 1;
    for (tk_node *n = head; n != NULL;) {
        tk_node *next = NEXT(n);
        uint64_t off = (uint64_t)((tk__i128)n->deadline_ns - lo - 1);
        size_t i = (size_t)(((off < last ? off : last) * w->grid.recip) >> (64 - lg));
        NEXT(n) = NULL;
        if (bh[i] != NULL)
            NEXT(bt[i]) = n;
        else
            bh[i] = n;
        bt[i] = n;
        n = next;
    }
    tk_node *out = NULL, *end = NULL;
    for (size_t i = 0; i < nb; i++) {
        if (bh[i] == NULL)
            continue;
        tk_node *bend;
        tk_node *b = bh[i] == bt[i] ? bh[i] : tk__node_sort(bh[i], &bend);
        if (bh[i] == bt[i])
            bend = b;
        if (end != NULL)
            NEXT(end) = b;
        else
            out = b;
        end = bend;
    }
    *tail = end;
    return out;
}

/* Moves `share` nodes (at most its count) of bank s of level l >= 1, whose
 * period starts at the level's next boundary after c, ahead of that event:
 * each to the level its distance calls for, but below l (level l - 1 has
 * room for distances below 2^(l*b + 1), see "Early cascades"). The chains
 * in turn, as a walk does, each chain's next node prefetched. */
static void cascade_share(hwheel *w, unsigned l, size_t s, size_t share) {
    hw_bank *bk = bank_at(w, l, s);
    tk_node *cur[HW_CHAINS];
    for (unsigned j = 0; j < HW_CHAINS; j++) {
        cur[j] = bk->chain[j].head;
        if (cur[j] != NULL)
            __builtin_prefetch(cur[j], 1);
    }
    uint64_t c = w->cur;
    size_t moved = 0;
    while (moved < share) { /* ends: share <= count, the nodes in the chains (I4) */
        for (unsigned j = 0; j < HW_CHAINS && moved < share; j++) {
            tk_node *n = cur[j];
            if (n == NULL)
                continue;
            tk_node *next = NEXT(n);
            if (next != NULL)
                __builtin_prefetch(next, 1);
            cur[j] = next;
            uint64_t t = PV(n)->tick;
            unsigned to = w->level_of_msb[63 - __builtin_clzll(t - c)];
            if (to >= l)
                to = l - 1;
            bank_append(w, to, (size_t)(t >> (to * w->bits)) & w->mask, n);
            moved++;
        }
    }
    for (unsigned j = 0; j < HW_CHAINS; j++) {
        bk->chain[j].head = cur[j];
        if (cur[j] != NULL)
            PREV(cur[j]) = NULL;
        else
            bk->chain[j].tail = NULL;
    }
    bk->count -= moved;
    if (bk->count == 0)
        *occ_word(w, l, s) &= ~(UINT64_C(1) << (s & 63));
}

/* The early cascades (see "Early cascades"), after expire() has moved c:
 * of each level l >= 1, the bank whose period starts at the level's next
 * boundary after c moves its share for the ticks left, ceil(count / (event
 * - c)), to the levels below. Bottom up, so that no node moves twice in one
 * call. */
static void cascade_ahead(hwheel *w) {
    uint64_t c = w->cur;
    for (unsigned l = 1; l < w->levels; l++) {
        unsigned sh = l * w->bits;
        uint64_t e = period_start(c, sh) + (UINT64_C(1) << sh);
        if (e <= c)
            return; /* no level-l period starts after c, nor any higher */
        size_t s = (size_t)(e >> sh) & w->mask;
        size_t k = bank_at(w, l, s)->count;
        if (k == 0)
            continue;
        uint64_t left = e - c;
        cascade_share(w, l, s, (size_t)(((uint64_t)k + left - 1) / left));
    }
}

/* At event e (c == e): the overflow list if its revolution starts here, the
 * cascades of every level whose slot period starts here (top down), then
 * level 0's bank. The tick's batch goes to `out` sorted. */
static void run_event(hwheel *w, hw_batch *out) {
    uint64_t e = w->cur;
    hw_batch b = {NULL, NULL, 0, true};
    if (w->ovf.head != NULL && ovf_event(w) == e)
        ovf_redistribute(w, &b);
    /* Only levels whose period boundary e is: its low l*b bits are 0. */
    unsigned zeros = e == 0 ? 64 : (unsigned)__builtin_ctzll(e);
    unsigned top = zeros / w->bits; /* highest level with a boundary at e */
    if (top > w->levels - 1)
        top = w->levels - 1;
    for (unsigned l = top; l >= 1; l--) {
        size_t s = (size_t)(e >> (l * w->bits)) & w->mask;
        if (bank_at(w, l, s)->count != 0)
            cascade(w, l, s, &b);
    }
    size_t s0 = (size_t)e & w->mask;
    if (bank_at(w, 0, s0)->count != 0)
        take_bank0(w, s0, &b);
    if (b.count == 0)
        return;
    tk_node *head = b.head, *tail = b.tail;
    if (!b.ordered)
        head = sort_batch(w, e, head, b.count, &tail);
    if (out->tail != NULL)
        NEXT(out->tail) = head;
    else
        out->head = head;
    out->tail = tail;
    out->count += b.count;
}

/* Moves c to `target`, event by event, collecting what leaves in order. */
static void advance(hwheel *w, uint64_t target, hw_batch *out) {
    uint64_t e;
    while (next_event(w, &e) && e <= target) {
        w->cur = e;
        run_event(w, out);
    }
    w->cur = target;
}

static tk_node *hw_expire(void *core, int64_t now_ns, size_t max, size_t *count) {
    hwheel *w = core;
    *count = 0;
    if (w == NULL || max == 0 || now_ns < w->grid.origin_ns)
        return NULL;
    uint64_t target = tick_at(w, now_ns);
    hw_batch b = {NULL, NULL, 0, true};
    if (target > w->cur) {
        advance(w, target, &b);
        cascade_ahead(w);
    }
    if (b.count != 0 && w->due.head == NULL && b.count <= max) {
        /* the usual case: hand the batch out as it is */
        w->count -= b.count;
        *count = b.count;
        return b.head;
    }
    /* Queue the batch behind the due list (it comes after every node
     * there), then hand out the first `max`. */
    for (tk_node *n = b.head; n != NULL;) {
        tk_node *next = NEXT(n);
        list_append(&w->due, n, HW_DUE);
        n = next;
    }
    tk_node *head = w->due.head;
    size_t k = 0;
    tk_node *last = NULL;
    for (tk_node *n = head; n != NULL && k < max; n = NEXT(n)) {
        PV(n)->where = HW_NONE;
        last = n;
        k++;
    }
    if (last == NULL)
        return NULL;
    w->due.head = NEXT(last);
    if (w->due.head != NULL)
        PREV(w->due.head) = NULL;
    else
        w->due.tail = NULL;
    NEXT(last) = NULL;
    w->due.count -= k;
    w->count -= k;
    *count = k;
    return head;
}

static int hw_next(const void *core, int64_t *when_ns) {
    const hwheel *w = core;
    if (w == NULL || when_ns == NULL)
        return TK_EINVAL;
    if (w->due.head != NULL) {
        *when_ns = tick_time(w, CPV(w->due.head)->tick);
        return TK_OK;
    }
    uint64_t e;
    if (!next_event(w, &e))
        return TK_ENOENT;
    *when_ns = tick_time(w, e);
    return TK_OK;
}

/* A window's end, deadline + slack, saturating at INT64_MAX (a negative
 * slack, which the owner must not give, counts as 0), as due() rounds it. */
static inline int64_t window_due(const hwheel *w, const tk_node *n) {
    int64_t d = n->deadline_ns, slack = n->slack_ns;
    int64_t end = slack <= 0 ? d : d > INT64_MAX - slack ? INT64_MAX : d + slack;
    return tick_time(w, tick_of(w, end));
}

/* Nodes latest() reads at most in one call. It runs under the owner's lock
 * each time the owner looks at the core again (adapter/blocking.c, after
 * every offer and take), and a bank above level 0 holds nodes due over its
 * whole period, most of them after the answer: an owner waking at the
 * answer does not hand them out, so without a bound a busy wheel would
 * read the same crowded bank, tens of thousands of cache misses, at every
 * call. Past the budget the answer is the start of the first bank not read,
 * or an earlier event above it (an early wake-up, never a late one).
 * engines/wheel/wheel-tick.c bounds its plan's walk by the same figure. */
#define HW_LATEST_BUDGET ((size_t)TK__HWHEEL_LATEST_BUDGET)

/* The smaller of best and the smallest window end in bank bk, whose nodes
 * all end at or after `floor` (its event's instant). Its chains are read in
 * turn, each chain's next node fetched as soon as its address is read (as
 * in walk_next()), so that up to HW_CHAINS misses are in flight. */
static int64_t bank_min_end(const hwheel *w, const hw_bank *bk, int64_t best, int64_t floor) {
    const tk_node *cur[HW_CHAINS];
    unsigned live = 0;
    for (unsigned j = 0; j < HW_CHAINS; j++)
        if (bk->chain[j].head != NULL) {
            __builtin_prefetch(bk->chain[j].head);
            cur[live++] = bk->chain[j].head;
        }
    while (live != 0 && best > floor) /* no node here ends before floor */
        for (unsigned i = 0; i < live;) {
            const tk_node *n = cur[i];
            const tk_node *next = CPV(n)->next;
            if (next != NULL) {
                __builtin_prefetch(next);
                cur[i++] = next;
            } else {
                cur[i] = cur[--live]; /* the order does not matter for a minimum */
            }
            int64_t u = window_due(w, n);
            if (u < best)
                best = u;
        }
    return best;
}

/* Walks level l's occupied banks in event order from c (after c's bank,
 * wrapping round to it), lowering *best to the window ends read, until a bank's
 * event is at or after *best. False if the budget *left runs out first:
 * then *cut is the instant of the event of the first bank not read. */
static bool latest_level(const hwheel *w, unsigned l, int64_t *best, size_t *left, int64_t *cut) {
    size_t p = (size_t)(w->cur >> (l * w->bits)) & w->mask, nbanks = (size_t)w->mask + 1;
    for (int pass = 0; pass < 2; pass++) {
        size_t end = pass == 0 ? nbanks : p + 1;
        for (size_t s = level_scan(w, l, pass == 0 ? p + 1 : 0); s < end;
             s = level_scan(w, l, s + 1)) {
            int64_t at = tick_time(w, bank_event(w, l, s));
            if (at >= *best)
                return true; /* neither this bank nor a later one ends a window sooner */
            const hw_bank *bk = &w->banks[((size_t)l << w->sbits) + s];
            if (bk->count > *left) {
                *cut = at;
                return false;
            }
            *left -= bk->count;
            *best = bank_min_end(w, bk, *best, at);
        }
    }
    return true;
}

/* See "latest()" above: the smallest window end, read level by level in
 * event order up to the first bank that cannot hold a smaller one, or the
 * start of the first bank not read once the budget runs out. */
static int hw_latest(const void *core, int64_t *when_ns) {
    const hwheel *w = core;
    if (w == NULL || when_ns == NULL)
        return TK_EINVAL;
    if (w->count == 0)
        return TK_ENOENT;
    if (!w->slack_held) /* no window ends past its deadline: plan as without slack */
        return hw_next(core, when_ns);
    if (w->due.head != NULL) { /* due already: the owner expires at once */
        *when_ns = tick_time(w, CPV(w->due.head)->tick);
        return TK_OK;
    }
    int64_t best = INT64_MAX;
    size_t left = HW_LATEST_BUDGET;
    for (unsigned l = 0; l < w->levels; l++) {
        /* No period of level l starts before its next boundary, nor one of
         * a higher level or the overflow list's (next_event_from()). */
        unsigned sh = l * w->bits;
        uint64_t bound = period_start(w->cur, sh) + (UINT64_C(1) << sh);
        if (bound <= w->cur || tick_time(w, bound) >= best)
            break;
        int64_t cut;
        if (!latest_level(w, l, &best, &left, &cut)) {
            /* Nothing unread ends before the bank where the walk stopped, or
             * before the next event of a higher level or the overflow list;
             * cut < best, and every term is an event, so the answer is at
             * or after next(). */
            uint64_t e;
            if (next_event_from(w, l + 1, &e) && tick_time(w, e) < cut)
                cut = tick_time(w, e);
            *when_ns = cut;
            return TK_OK;
        }
    }
    if (w->ovf.head != NULL) {
        int64_t at = tick_time(w, w->ovf_min); /* no overflow node is due before */
        if (at < best) {
            if (w->ovf.count > left)
                best = at;
            else
                for (const tk_node *n = w->ovf.head; n != NULL; n = CPV(n)->next) {
                    int64_t u = window_due(w, n);
                    if (u < best)
                        best = u;
                }
        }
    }
    *when_ns = best;
    return TK_OK;
}

/* ---- queries -------------------------------------------------------------------- */

static size_t hw_count(const void *core) {
    const hwheel *w = core;
    return w == NULL ? 0 : w->count;
}

/* The smaller of best and the smallest node of the list from n. */
static const tk_node *list_min(const tk_node *n, const tk_node *best) {
    for (; n != NULL; n = CPV(n)->next)
        if (best == NULL || tk_node_before(n, best))
            best = n;
    return best;
}

static tk_node *hw_first(const void *core) {
    const hwheel *w = core;
    if (w == NULL || w->count == 0)
        return NULL;
    if (w->due.head != NULL)
        return w->due.head;
    /* The smallest node has the smallest tick (T grows with the deadline).
     * In each level only the first occupied bank after c can hold it (a
     * later bank's ticks all lie beyond the first's period), and a bank or
     * list whose ticks all come after the best tick so far cannot either. */
    const tk_node *best = NULL;
    uint64_t best_t = UINT64_MAX;
    for (unsigned l = 0; l < w->levels; l++) {
        size_t s;
        uint64_t e;
        if (!level_event(w, l, &s, &e) || e > best_t)
            continue;
        const hw_bank *bk = &w->banks[((size_t)l << w->sbits) + s];
        const tk_node *m = best;
        for (unsigned j = 0; j < HW_CHAINS; j++)
            m = list_min(bk->chain[j].head, m);
        if (m != best) {
            best = m;
            best_t = CPV(m)->tick;
        }
    }
    if (w->ovf.head != NULL && w->ovf_min <= best_t)
        best = list_min(w->ovf.head, best);
    return (tk_node *)(uintptr_t)best;
}

static size_t hw_count_due(const void *core, int64_t now_ns, size_t limit) {
    const hwheel *w = core;
    if (w == NULL || now_ns < w->grid.origin_ns)
        return 0;
    size_t k = w->due.count;
    uint64_t target = tick_at(w, now_ns);
    if (k >= limit || target <= w->cur)
        return k < limit ? k : limit;
    for (unsigned l = 0; l < w->levels && k < limit; l++) {
        unsigned sh = l * w->bits;
        for (size_t s = level_scan(w, l, 0); s <= w->mask && k < limit;
             s = level_scan(w, l, s + 1)) {
            uint64_t e = bank_event(w, l, s);
            if (e > target)
                continue;
            const hw_bank *bk = &w->banks[((size_t)l << w->sbits) + s];
            /* whole period due: count without looking at ticks */
            if ((target - e) >> sh != 0 || l == 0) {
                k += bk->count;
                continue;
            }
            for (unsigned j = 0; j < HW_CHAINS && k < limit; j++)
                for (const tk_node *n = bk->chain[j].head; n != NULL && k < limit; n = CPV(n)->next)
                    if (CPV(n)->tick <= target)
                        k++;
        }
    }
    if (w->ovf.head != NULL && w->ovf_min <= target)
        for (const tk_node *n = w->ovf.head; n != NULL && k < limit; n = CPV(n)->next)
            if (CPV(n)->tick <= target)
                k++;
    return k < limit ? k : limit;
}

/* ---- remove_if ------------------------------------------------------------------ */

static tk_node *hw_remove_if(void *core, bool (*pred)(const tk_node *n, void *ctx), void *ctx,
                             size_t *count) {
    hwheel *w = core;
    *count = 0;
    if (w == NULL || pred == NULL)
        return NULL;
    tk_node *out = NULL;
    size_t k = 0;
    for (unsigned l = 0; l < w->levels; l++) {
        for (size_t s = level_scan(w, l, 0); s <= w->mask; s = level_scan(w, l, s + 1)) {
            hw_bank *bk = bank_at(w, l, s);
            for (unsigned j = 0; j < HW_CHAINS; j++) {
                hw_chain *ch = &bk->chain[j];
                tk_node *n = ch->head;
                while (n != NULL) {
                    tk_node *next = NEXT(n);
                    if (pred(n, ctx)) {
                        hw_priv *p = PV(n);
                        if (p->prev != NULL)
                            NEXT(p->prev) = next;
                        else
                            ch->head = next;
                        if (next != NULL)
                            PREV(next) = p->prev;
                        else
                            ch->tail = p->prev;
                        p->where = HW_NONE;
                        p->next = out;
                        out = n;
                        bk->count--;
                        k++;
                    }
                    n = next;
                }
            }
            if (bk->count == 0)
                *occ_word(w, l, s) &= ~(UINT64_C(1) << (s & 63));
        }
    }
    hw_list *lists[2] = {&w->due, &w->ovf};
    for (int i = 0; i < 2; i++) {
        tk_node *n = lists[i]->head;
        while (n != NULL) {
            tk_node *next = NEXT(n);
            if (pred(n, ctx)) {
                list_unlink(lists[i], n); /* ovf_min stays a lower bound */
                PV(n)->where = HW_NONE;
                NEXT(n) = out;
                out = n;
                k++;
            }
            n = next;
        }
    }
    w->count -= k;
    *count = k;
    return out;
}

/* ---- check ---------------------------------------------------------------------- */

/* Walks a list: links, head and tail, `where` of every node, and at most
 * `limit` nodes. Returns the number of nodes, or SIZE_MAX if broken. */
static size_t list_check(const tk_node *head, const tk_node *tail, uint32_t where, size_t limit) {
    size_t k = 0;
    const tk_node *prev = NULL;
    for (const tk_node *n = head; n != NULL; n = CPV(n)->next) {
        if (CPV(n)->prev != prev || CPV(n)->where != where || ++k > limit)
            return SIZE_MAX;
        prev = n;
    }
    return prev == tail ? k : SIZE_MAX;
}

static int hw_check(const void *core) {
    const hwheel *w = core;
    if (w == NULL || w->banks == NULL || w->bits < TK__HWHEEL_MIN_BITS ||
        w->bits > TK__HWHEEL_MAX_BITS || w->levels < TK__HWHEEL_MIN_LEVELS ||
        w->levels > TK__HWHEEL_MAX_LEVELS || w->span_bits != w->bits * w->levels ||
        w->sbits != w->bits + 1 || w->mask != ((uint64_t)1 << w->sbits) - 1 ||
        w->span_bits > TK__HWHEEL_MAX_SPAN_BITS)
        return TK_ESTATE;
    uint64_t c = w->cur;
    size_t total = 0;
    for (unsigned l = 0; l < w->levels; l++) {
        unsigned sh = l * w->bits, up = sh + w->sbits;
        /* bits past the last bank (a level of fewer than 64 banks) stay 0 */
        if (w->mask < 63 && (w->occ[(size_t)l * w->words] >> (w->mask + 1)) != 0)
            return TK_ESTATE;
        for (size_t s = 0; s <= w->mask; s++) {
            const hw_bank *bk = &w->banks[((size_t)l << w->sbits) + s];
            bool bit = (w->occ[(size_t)l * w->words + (s >> 6)] >> (s & 63)) & 1u;
            if (bit != (bk->count != 0) || bk->count > w->count - total)
                return TK_ESTATE;
            uint32_t where = HW_WHEEL | (uint32_t)l << 16 | (uint32_t)s;
            size_t in_bank = 0;
            for (unsigned j = 0; j < HW_CHAINS; j++) {
                const hw_chain *ch = &bk->chain[j];
                size_t k = list_check(ch->head, ch->tail, where, bk->count - in_bank);
                if (k == SIZE_MAX)
                    return TK_ESTATE;
                in_bank += k;
                for (const tk_node *n = ch->head; n != NULL; n = CPV(n)->next) {
                    uint64_t t = CPV(n)->tick;
                    if (n->slack_ns > 0 && !w->slack_held)
                        return TK_ESTATE;
                    if (CPV(n)->chain != j || t != tick_of(w, n->deadline_ns) || t <= c ||
                        ((t >> sh) & w->mask) != s || period_start(t, sh) <= c ||
                        ((t - c) >> up) != 0)
                        return TK_ESTATE;
                }
            }
            if (in_bank != bk->count)
                return TK_ESTATE;
            total += in_bank;
        }
    }
    size_t k = list_check(w->ovf.head, w->ovf.tail, HW_OVF, w->count - total);
    if (k == SIZE_MAX || k != w->ovf.count)
        return TK_ESTATE;
    total += k;
    for (const tk_node *n = w->ovf.head; n != NULL; n = CPV(n)->next) {
        uint64_t t = CPV(n)->tick;
        if (n->slack_ns > 0 && !w->slack_held)
            return TK_ESTATE;
        if (t != tick_of(w, n->deadline_ns) || period_start(t, w->span_bits) <= c || t < w->ovf_min)
            return TK_ESTATE;
    }
    if (w->ovf.head != NULL && ovf_event(w) <= c)
        return TK_ESTATE;
    k = list_check(w->due.head, w->due.tail, HW_DUE, w->count - total);
    if (k == SIZE_MAX || k != w->due.count)
        return TK_ESTATE;
    total += k;
    const tk_node *prev = NULL;
    for (const tk_node *n = w->due.head; n != NULL; n = CPV(n)->next) {
        uint64_t t = CPV(n)->tick;
        if (n->slack_ns > 0 && !w->slack_held)
            return TK_ESTATE;
        if (t != tick_of(w, n->deadline_ns) || t > c || (prev != NULL && tk_node_before(n, prev)))
            return TK_ESTATE;
        prev = n;
    }
    return total == w->count ? TK_OK : TK_ESTATE;
}

const tk_core_ops tk__hwheel_core_ops = {
    .size = sizeof(hwheel),
    .init = hw_init,
    .destroy = hw_destroy,
    .insert = hw_insert,
    .remove = hw_remove,
    .due = hw_due,
    .next = hw_next,
    .expire = hw_expire,
    .count = hw_count,
    .first = hw_first,
    .remove_if = hw_remove_if,
    .check = hw_check,
    .count_due = hw_count_due,
    .latest = hw_latest,
};
