/* SPDX-License-Identifier: MIT */
/* timerkit: the wheel adapter's ready set. See wheel-ready.h for the design.
 *
 * Invariants (checked by tk__wheel_ready_check()):
 *   R1  bit i of `used` is set <=> runs[i].head != NULL, for i < RUNS; nruns
 *       counts them; the spare runs[RUNS] is empty between calls;
 *   R2  each used run is a doubly linked list from head (prev NULL) to tail
 *       (next NULL) of len nodes, sorted by (deadline, seq), equal keys in
 *       the order they were published;
 *   R3  every node of runs[i] has tk__wheel_priv.rounds == i;
 *   R4  size is the sum of the lengths;
 *   R5  the winner tree is up to date: win[RUNS + i] == i and each win[p]
 *       is the better of its children (a free slot loses; equal heads: the
 *       left child).
 * An emptied slot is free again and the other runs keep their slots, so R3
 * needs rewriting only for the nodes of a piece merged into a run. */
#include "wheel-ready.h"

#include <assert.h>
#include <string.h>

#include "common-internal.h"
#include "wheel-core.h" /* tk_node_before */

#define NEXT(n) (tk__wheel_priv_of(n)->next)
#define PREV(n) (tk__wheel_priv_of(n)->prev)
#define SLOT(n) (tk__wheel_priv_of(n)->rounds)

#define RUNS TK__WHEEL_READY_RUNS
#define SPARE RUNS
#define WORDS (RUNS / 64)

_Static_assert(offsetof(tk__wheel_priv, next) == 0,
               "a cut of a run is a detached list as it stands");
_Static_assert(RUNS >= 64 && RUNS <= 32768 && (RUNS & (RUNS - 1)) == 0,
               "a power of two, whole bitmap words, uint16_t slots");

static inline void poison(tk_node *n) {
#ifndef NDEBUG
    NEXT(n) = TK__POISON_PTR;
    PREV(n) = TK__POISON_PTR;
#else
    (void)n;
#endif
}

/* The slot with the smaller head of a and b; a free slot loses; a on ties. */
static inline uint16_t better(const tk__wheel_ready *r, uint16_t a, uint16_t b) {
    const tk_node *ha = r->runs[a].head, *hb = r->runs[b].head;
    if (hb == NULL)
        return a;
    if (ha == NULL || tk_node_before(hb, ha))
        return b;
    return a;
}

/* Replays the tree from slot i's leaf to the root after its head changed. */
static void replay(tk__wheel_ready *r, size_t i) {
    for (size_t p = (RUNS + i) >> 1; p >= 1; p >>= 1)
        r->win[p] = better(r, r->win[2 * p], r->win[2 * p + 1]);
}

void tk__wheel_ready_init(tk__wheel_ready *r) {
    memset(r, 0, sizeof(*r));
    for (size_t i = 0; i < RUNS; i++)
        r->win[RUNS + i] = (uint16_t)i;
    for (size_t p = RUNS; p-- > 1;)
        r->win[p] = r->win[2 * p]; /* all free: the left child */
}

static inline bool is_used(const tk__wheel_ready *r, size_t i) {
    return (r->used[i / 64] >> (i % 64) & 1u) != 0;
}

static inline void mark(tk__wheel_ready *r, size_t i, bool used) {
    if (used) {
        r->used[i / 64] |= UINT64_C(1) << (i % 64);
        r->nruns++;
    } else {
        r->used[i / 64] &= ~(UINT64_C(1) << (i % 64));
        r->nruns--;
    }
}

/* The slot a run starting at `first` goes to: the last publish's run if
 * `first` fits behind its tail, else the lowest free slot, else the spare. */
static size_t pick_slot(const tk__wheel_ready *r, const tk_node *first) {
    size_t h = r->hint;
    if (is_used(r, h) && !tk_node_before(first, r->runs[h].tail))
        return h;
    for (size_t w = 0; w < WORDS; w++)
        if (~r->used[w] != 0)
            return w * 64 + (size_t)__builtin_ctzll(~r->used[w]);
    return SPARE;
}

/* Merges the spare run into runs[dst] (both sorted); on equal keys the
 * nodes of runs[dst], published earlier, go first. Walks the spare and the
 * part of runs[dst] before the spare's last key. */
static void merge_spare_into(tk__wheel_ready *r, size_t dst) {
    tk__wheel_run *d = &r->runs[dst];
    tk__wheel_run *s = &r->runs[SPARE];
    tk_node *a = d->head, *b = s->head;
    tk_node *head = NULL, *t = NULL;
    while (b != NULL) {
        tk_node *x;
        if (a != NULL && !tk_node_before(b, a)) {
            x = a;
            a = NEXT(a);
        } else {
            x = b;
            b = NEXT(b);
            SLOT(x) = (int64_t)dst;
        }
        PREV(x) = t;
        if (t != NULL)
            NEXT(t) = x;
        else
            head = x;
        t = x;
    }
    /* the spare is exhausted: the rest of runs[dst] (if any) follows as is */
    NEXT(t) = a;
    if (a != NULL)
        PREV(a) = t;
    else
        d->tail = t;
    d->head = head;
    d->len += s->len;
    memset(s, 0, sizeof(*s));
    r->merges++;
}

size_t tk__wheel_ready_publish(tk__wheel_ready *r, tk_node *list,
                               bool (*accept)(tk_node *n, void *ctx), void *ctx) {
    size_t k = 0;
    size_t slot = SPARE;
    tk__wheel_run *run = NULL;
    while (list != NULL) {
        tk_node *n = list;
        list = NEXT(n);
        if (accept != NULL && !accept(n, ctx))
            continue;
        if (run == NULL) {
            slot = pick_slot(r, n);
            run = &r->runs[slot];
        }
        assert(run->tail == NULL || !tk_node_before(n, run->tail));
        PREV(n) = run->tail;
        NEXT(n) = NULL;
        if (run->tail != NULL)
            NEXT(run->tail) = n;
        else
            run->head = n;
        run->tail = n;
        run->len++;
        SLOT(n) = (int64_t)slot;
        k++;
    }
    if (run == NULL)
        return 0;
    if (slot == SPARE) {
        /* every slot taken and the piece fits behind no tail we tried: into
         * the shortest run */
        size_t dst = 0;
        for (size_t i = 1; i < RUNS; i++)
            if (r->runs[i].len < r->runs[dst].len)
                dst = i;
        merge_spare_into(r, dst);
        slot = dst;
    } else if (!is_used(r, slot)) {
        mark(r, slot, true);
    }
    r->hint = slot;
    r->size += k;
    replay(r, slot); /* its head may have changed */
    return k;
}

/* Unlinks n from runs[i]; replays the tree if n was the head. */
static void unlink_from(tk__wheel_ready *r, size_t i, tk_node *n) {
    tk__wheel_run *run = &r->runs[i];
    tk_node *p = PREV(n), *x = NEXT(n);
    if (p != NULL)
        NEXT(p) = x;
    else
        run->head = x;
    if (x != NULL)
        PREV(x) = p;
    else
        run->tail = p;
    run->len--;
    r->size--;
    if (run->head == NULL)
        mark(r, i, false);
    poison(n);
    if (p == NULL) {
        if (x != NULL && NEXT(x) != NULL)
            __builtin_prefetch(NEXT(x)); /* this run's next head, later */
        replay(r, i);
    }
}

tk_node *tk__wheel_ready_pop(tk__wheel_ready *r) {
    size_t i = r->win[1];
    tk_node *n = r->runs[i].head;
    if (n != NULL)
        unlink_from(r, i, n);
    return n;
}

/* Whether slot a's head leaves before slot b's (both used): the smaller key,
 * or on equal keys the lower slot, as the winner tree breaks ties. */
static inline bool head_first(const tk__wheel_ready *r, size_t a, size_t b) {
    const tk_node *ha = r->runs[a].head, *hb = r->runs[b].head;
    return tk_node_before(ha, hb) || (!tk_node_before(hb, ha) && a < b);
}

/* The slot whose head would win if run i were empty: the best of the
 * winners of the siblings along i's path. SPARE if no other run is used. */
static size_t runner_up(const tk__wheel_ready *r, size_t i) {
    size_t best = SPARE;
    for (size_t p = RUNS + i; p > 1; p >>= 1) {
        size_t s = r->win[p ^ 1];
        if (r->runs[s].head != NULL && (best == SPARE || head_first(r, s, best)))
            best = s;
    }
    return best;
}

tk_node *tk__wheel_ready_pop_batch(tk__wheel_ready *r, size_t max,
                                   void (*each)(tk_node *n, void *ctx), void *ctx, size_t *count) {
    tk_node *head = NULL, **tail = &head;
    size_t k = 0;
    while (k < max && r->size != 0) {
        size_t i = r->win[1];
        tk__wheel_run *run = &r->runs[i];
        size_t b = runner_up(r, i);
        const tk_node *bound = b == SPARE ? NULL : r->runs[b].head;
        /* run i's nodes leave while they come before the runner-up's head */
        tk_node *first = run->head, *last = first;
        size_t m = 1;
        if (each != NULL)
            each(first, ctx);
        tk_node *n = NEXT(first);
        while (
            k + m < max && n != NULL &&
            (bound == NULL || tk_node_before(n, bound) || (i < b && !tk_node_before(bound, n)))) {
            if (each != NULL)
                each(n, ctx);
            last = n;
            n = NEXT(n);
            m++;
        }
        run->head = n;
        if (n != NULL)
            PREV(n) = NULL;
        else
            run->tail = NULL;
        run->len -= m;
        r->size -= m;
        if (n == NULL)
            mark(r, i, false);
        replay(r, i);
        /* the cut is linked through next, which detached_next overlays */
        *tail = first;
        tail = &last->tk__priv.detached_next;
        k += m;
    }
    *tail = NULL;
#ifndef NDEBUG
    for (tk_node *x = head; x != NULL; x = x->tk__priv.detached_next)
        PREV(x) = TK__POISON_PTR;
#endif
    *count = k;
    return head;
}

void tk__wheel_ready_remove(tk__wheel_ready *r, tk_node *n) {
    size_t i = (size_t)SLOT(n);
    assert(i < RUNS && is_used(r, i));
    assert(PREV(n) != NULL ? NEXT(PREV(n)) == n : r->runs[i].head == n);
    assert(NEXT(n) != NULL ? PREV(NEXT(n)) == n : r->runs[i].tail == n);
    unlink_from(r, i, n);
}

tk_node *tk__wheel_ready_extract_if(tk__wheel_ready *r, bool (*pred)(tk_node *n, void *ctx),
                                    void *ctx, size_t *count) {
    tk_node *out = NULL;
    size_t k = 0;
    for (size_t w = 0; w < WORDS; w++) {
        for (uint64_t m = r->used[w]; m != 0; m &= m - 1) {
            size_t i = w * 64 + (size_t)__builtin_ctzll(m);
            for (tk_node *n = r->runs[i].head; n != NULL;) {
                tk_node *next = NEXT(n);
                if (pred(n, ctx)) {
                    unlink_from(r, i, n);
                    n->tk__priv.detached_next = out;
                    out = n;
                    k++;
                }
                n = next;
            }
        }
    }
    *count = k;
    return out;
}

int tk__wheel_ready_check(const tk__wheel_ready *r, bool (*node_ok)(const tk_node *n, void *ctx),
                          void *ctx) {
    const tk__wheel_run *spare = &r->runs[SPARE];
    if (spare->head != NULL || spare->tail != NULL || spare->len != 0 || r->hint >= RUNS)
        return TK_ESTATE;
    size_t total = 0, nruns = 0;
    for (size_t i = 0; i < RUNS; i++) {
        const tk__wheel_run *run = &r->runs[i];
        if (!is_used(r, i)) {
            if (run->head != NULL || run->tail != NULL || run->len != 0)
                return TK_ESTATE;
            continue;
        }
        nruns++;
        if (run->head == NULL || PREV(run->head) != NULL)
            return TK_ESTATE;
        size_t len = 0;
        const tk_node *prev = NULL;
        for (const tk_node *n = run->head; n != NULL; prev = n, n = NEXT(n)) {
            if (++len > r->size || PREV(n) != prev || SLOT(n) != (int64_t)i ||
                (prev != NULL && tk_node_before(n, prev)) || (node_ok != NULL && !node_ok(n, ctx)))
                return TK_ESTATE;
        }
        if (run->tail != prev || run->len != len)
            return TK_ESTATE;
        total += len;
    }
    if (total != r->size || nruns != r->nruns)
        return TK_ESTATE;
    for (size_t i = 0; i < RUNS; i++)
        if (r->win[RUNS + i] != i)
            return TK_ESTATE;
    for (size_t p = RUNS; p-- > 1;)
        if (r->win[p] != better(r, r->win[2 * p], r->win[2 * p + 1]))
            return TK_ESTATE;
    return TK_OK;
}
