/* SPDX-License-Identifier: MIT */
/* timerkit: the wheel's pure core as a tk_core_ops (tk__wheel_core_ops).
 *
 * wheel-core.c is driven by ticks: advance to tick k and receive what
 * expires. The core interface of engine.h is driven by time instead, and
 * promises a little more, so this file adds the difference:
 *   - due(d) is the instant of the first tick at or after d, t_k >= d (the
 *     wheel's grid laid from the origin): expire(now) advances to the last
 *     tick at or before `now` and hands out exactly the nodes with
 *     due(d) <= now;
 *   - a node inserted with its tick already passed (t_k <= t_c, c the
 *     current tick) is due at once; wheel-core.c would hold it until tick
 *     c + 1, so it goes to the `ready` list instead;
 *   - expire() hands out at most `max` nodes; the due rest waits in `ready`
 *     for the next call.
 * `ready` is a doubly linked list (through the nodes' wheel.next/prev) in
 * (deadline, seq) order. Its nodes are all due: every one has a deadline at
 * or before t_c, while every node in the wheel has one after t_c, so an
 * expired batch (sorted by wheel-core.c) goes after it in order.
 *
 * A node's wheel.state says where it is, so that remove() answers TK_ENOENT
 * for a node it does not hold in O(1): WC_READY in `ready`; WC_WHEEL in the
 * wheel as long as its expiry tick is after the current tick (an advance
 * hands out exactly the nodes whose tick it passes, so a node the wheel has
 * handed out reads WC_WHEEL with a tick already passed: no pass over the
 * batch is needed to clear it); anything else (0, a zeroed private area)
 * nowhere. Nodes leaving otherwise (remove, remove_if, through `ready`) get
 * WC_NONE.
 *
 * A node is late when its tick has passed, tick_of(d) <= c, that is when d
 * <= t_c: `late_until_ns` caches t_c, updated at every advance, so an insert
 * compares one number.
 *
 * Slack. latest() is the smallest end of a window among the nodes held,
 * end(n) = due(deadline + slack_ns) (engine.h, "Slack"): in the wheel, the
 * instant of wheel-core.c's latest tick (exact: no budget); in `ready`, the
 * nodes are due already and are walked in (deadline, seq) order until one's
 * due() is not below the best end found (no later node ends earlier). Every
 * node it reads is handed out by expire(latest()), so it costs what that
 * expire() will cost again, plus the empty buckets skipped.
 *
 * Costs: insert, remove O(1), except a late insert, O(late nodes ahead of
 * it in ready); expire O(k) for k nodes plus wheel-core.c's advance; next
 * and first as wheel-core.c's next_expiry_tick and first; latest as
 * wheel-core.c's latest tick plus the ready nodes it reads. */
#include <stddef.h>
#include <stdint.h>

#include "common-internal.h"
#include "timerkit/engine.h"
#include "wheel-core.h"
#include "wheel-internal.h"

enum { WC_NONE = 0, WC_WHEEL = 0x57480001u, WC_READY = 0x57480002u };

typedef struct wheel_core_obj {
    tk__wheel_core w;
    tk_node *ready_head, *ready_tail; /* due, not handed out; (deadline, seq) order */
    size_t ready_count;
    int64_t late_until_ns; /* t_c: a deadline at or before it is due already */
} wheel_core_obj;

#define NEXT(n) (tk__wheel_priv_of(n)->next)
#define PREV(n) (tk__wheel_priv_of(n)->prev)
#define STATE(n) (tk__wheel_priv_of(n)->state)

static int wc_init(void *core, const void *params, const tk_allocator *a, int64_t origin_ns) {
    wheel_core_obj *o = core;
    const tk__wheel_params *p = params;
    o->ready_head = o->ready_tail = NULL;
    o->ready_count = 0;
    o->late_until_ns = origin_ns; /* t_0 */
    return tk__wheel_core_init(&o->w, a, p->tick_ns, p->slots, origin_ns);
}

static void wc_destroy(void *core) {
    wheel_core_obj *o = core;
    tk__wheel_core_destroy(&o->w);
}

/* Links n into ready at its place in (deadline, seq) order, searching from
 * the tail (late nodes usually come in order). */
static void ready_insert(wheel_core_obj *o, tk_node *n) {
    tk_node *after = o->ready_tail;
    while (after != NULL && tk_node_before(n, after))
        after = PREV(after);
    PREV(n) = after;
    NEXT(n) = after != NULL ? NEXT(after) : o->ready_head;
    if (NEXT(n) != NULL)
        PREV(NEXT(n)) = n;
    else
        o->ready_tail = n;
    if (after != NULL)
        NEXT(after) = n;
    else
        o->ready_head = n;
    STATE(n) = WC_READY;
    o->ready_count++;
}

static void ready_unlink(wheel_core_obj *o, tk_node *n) {
    if (PREV(n) != NULL)
        NEXT(PREV(n)) = NEXT(n);
    else
        o->ready_head = NEXT(n);
    if (NEXT(n) != NULL)
        PREV(NEXT(n)) = PREV(n);
    else
        o->ready_tail = PREV(n);
    o->ready_count--;
}

/* True if n is in the wheel (not in ready). */
static inline bool in_wheel(const wheel_core_obj *o, const tk_node *n) {
    return STATE(n) == WC_WHEEL && tk__wheel_core_expiry(n) > tk__wheel_core_current_tick(&o->w);
}

static int wc_insert(void *core, tk_node *n) {
    wheel_core_obj *o = core;
    if (STATE(n) == WC_READY || in_wheel(o, n))
        return TK_EINVAL;
    if (n->deadline_ns <= o->late_until_ns) {
        ready_insert(o, n);
    } else {
        tk__wheel_core_add(&o->w, n);
        STATE(n) = WC_WHEEL;
    }
    return TK_OK;
}

static int wc_remove(void *core, tk_node *n) {
    wheel_core_obj *o = core;
    if (n == NULL)
        return TK_ENOENT;
    if (STATE(n) == WC_READY)
        ready_unlink(o, n);
    else if (in_wheel(o, n))
        tk__wheel_core_remove(&o->w, n);
    else
        return TK_ENOENT;
    STATE(n) = WC_NONE;
    return TK_OK;
}

static int64_t wc_due(const void *core, int64_t deadline_ns) {
    const wheel_core_obj *o = core;
    return tk__wheel_core_tick_time(&o->w, tk__wheel_core_tick_of(&o->w, deadline_ns));
}

static int wc_next(const void *core, int64_t *when_ns) {
    const wheel_core_obj *o = core;
    if (o->ready_head != NULL) {
        *when_ns = wc_due(core, o->ready_head->deadline_ns);
        return TK_OK;
    }
    uint64_t tick;
    if (!tk__wheel_core_next_expiry_tick(&o->w, &tick))
        return TK_ENOENT;
    *when_ns = tk__wheel_core_tick_time(&o->w, tick);
    return TK_OK;
}

/* The end of n's window, due(deadline + slack_ns), the sum saturating (a
 * negative slack_ns, which owners refuse, counts as 0). */
static int64_t window_end(const void *core, const tk_node *n) {
    int64_t slack = n->slack_ns > 0 ? n->slack_ns : 0;
    return wc_due(core, tk__sat_add(n->deadline_ns, slack));
}

static int wc_latest(const void *core, int64_t *when_ns) {
    const wheel_core_obj *o = core;
    bool any = false;
    int64_t best = INT64_MAX;
    for (const tk_node *n = o->ready_head; n != NULL; n = NEXT(n)) {
        if (any && wc_due(core, n->deadline_ns) >= best)
            break; /* it and every later node end at or after best */
        int64_t end = window_end(core, n);
        if (!any || end < best)
            best = end;
        any = true;
    }
    uint64_t tick;
    if (tk__wheel_core_latest_tick(&o->w, SIZE_MAX, &tick)) {
        int64_t t = tk__wheel_core_tick_time(&o->w, tick);
        if (!any || t < best)
            best = t;
        any = true;
    }
    if (!any)
        return TK_ENOENT;
    *when_ns = best;
    return TK_OK;
}

/* Moves a sorted detached list of wheel-expired nodes to the ready tail. */
static void ready_append(wheel_core_obj *o, tk_node *list) {
    while (list != NULL) {
        tk_node *n = list;
        list = tk_node_next_detached(n);
        PREV(n) = o->ready_tail;
        NEXT(n) = NULL;
        if (o->ready_tail != NULL)
            NEXT(o->ready_tail) = n;
        else
            o->ready_head = n;
        o->ready_tail = n;
        STATE(n) = WC_READY;
        o->ready_count++;
    }
}

/* The last tick at or before now_ns: where expire(now_ns) advances to. due()
 * saturates at INT64_MAX, so at the end of time every node is due, also one
 * whose grid point lies beyond INT64_MAX: then advance to that tick. */
static uint64_t tick_for(const wheel_core_obj *o, int64_t now_ns) {
    return now_ns == INT64_MAX ? tk__wheel_core_tick_of(&o->w, now_ns)
                               : tk__wheel_core_tick_at(&o->w, now_ns);
}

static tk_node *wc_expire(void *core, int64_t now_ns, size_t max, size_t *count) {
    wheel_core_obj *o = core;
    uint64_t tick = tick_for(o, now_ns);
    tk_node *batch = NULL;
    size_t k = 0;
    if (tick > tk__wheel_core_current_tick(&o->w)) {
        batch = tk__wheel_core_advance_to(&o->w, tick, &k);
        o->late_until_ns = tk__wheel_core_tick_time(&o->w, tk__wheel_core_current_tick(&o->w));
    }
    if (o->ready_head == NULL && k <= max) {
        /* the usual case: hand the sorted batch out as it is (its nodes read
         * WC_WHEEL with a passed tick: not held) */
        *count = k;
        return batch;
    }
    ready_append(o, batch);
    tk_node *head = NULL, **tail = &head;
    size_t out = 0;
    while (out < max && o->ready_head != NULL) {
        tk_node *n = o->ready_head;
        ready_unlink(o, n);
        STATE(n) = WC_NONE;
        *tail = n;
        tail = &n->tk__priv.detached_next;
        out++;
    }
    *tail = NULL;
    *count = out;
    return head;
}

static size_t wc_count_due(const void *core, int64_t now_ns, size_t limit) {
    const wheel_core_obj *o = core;
    if (o->ready_count >= limit)
        return limit;
    return o->ready_count +
           tk__wheel_core_count_through(&o->w, tick_for(o, now_ns), limit - o->ready_count);
}

static size_t wc_count(const void *core) {
    const wheel_core_obj *o = core;
    return tk__wheel_core_size(&o->w) + o->ready_count;
}

static tk_node *wc_first(const void *core) {
    const wheel_core_obj *o = core;
    tk_node *w = tk__wheel_core_first(&o->w, NULL, NULL);
    tk_node *r = o->ready_head;
    if (w == NULL)
        return r;
    if (r == NULL)
        return w;
    return tk_node_before(w, r) ? w : r;
}

typedef struct pred_ctx {
    bool (*pred)(const tk_node *n, void *ctx);
    void *ctx;
} pred_ctx;

static bool call_pred(tk_node *n, void *ctx) {
    const pred_ctx *p = ctx;
    return p->pred(n, p->ctx);
}

static tk_node *wc_remove_if(void *core, bool (*pred)(const tk_node *n, void *ctx), void *ctx,
                             size_t *count) {
    wheel_core_obj *o = core;
    pred_ctx pc = {pred, ctx};
    size_t k = 0;
    tk_node *out = tk__wheel_core_extract_if(&o->w, call_pred, &pc, &k);
    for (tk_node *n = out; n != NULL; n = tk_node_next_detached(n))
        STATE(n) = WC_NONE;
    for (tk_node *n = o->ready_head; n != NULL;) {
        tk_node *next = NEXT(n);
        if (pred(n, ctx)) {
            ready_unlink(o, n);
            STATE(n) = WC_NONE;
            n->tk__priv.detached_next = out;
            out = n;
            k++;
        }
        n = next;
    }
    *count = k;
    return out;
}

static int wc_check(const void *core) {
    const wheel_core_obj *o = core;
    if (tk__wheel_core_check(&o->w) != TK_OK)
        return TK_ESTATE;
    int64_t now_tick_time = tk__wheel_core_tick_time(&o->w, tk__wheel_core_current_tick(&o->w));
    size_t k = 0;
    const tk_node *prev = NULL;
    for (const tk_node *n = o->ready_head; n != NULL; n = NEXT(n)) {
        if (STATE(n) != WC_READY || PREV(n) != prev || (prev != NULL && tk_node_before(n, prev)) ||
            wc_due(core, n->deadline_ns) > now_tick_time)
            return TK_ESTATE;
        prev = n;
        if (++k > o->ready_count)
            return TK_ESTATE;
    }
    if (k != o->ready_count || o->ready_tail != prev)
        return TK_ESTATE;
    return TK_OK;
}

const tk_core_ops tk__wheel_core_ops = {
    .size = sizeof(wheel_core_obj),
    .init = wc_init,
    .destroy = wc_destroy,
    .insert = wc_insert,
    .remove = wc_remove,
    .due = wc_due,
    .next = wc_next,
    .expire = wc_expire,
    .count = wc_count,
    .first = wc_first,
    .remove_if = wc_remove_if,
    .check = wc_check,
    .count_due = wc_count_due,
    .latest = wc_latest,
};
