/* SPDX-License-Identifier: MIT */
/* tkbench: the core-level peer of every engine that has a pure core
 * (tk_queue_ops.core, engine.h), whatever the engine: heap, wheel, or one
 * added to engines/CMakeLists.txt or registered at run time.
 *
 * The instance is the engine's core state (core->size bytes, aligned for any
 * type) initialised with the spec's parameter struct, the default allocator
 * and origin 0: time is virtual and starts at 0, as every core-level
 * workload assumes. Each batch op of tkb_core_peer_ops loops over its timers and
 * calls the core through its table, core->insert/remove/expire: one indirect
 * call per operation, the same for every engine, on top of the one per batch
 * the harness makes (tkbench.h).
 *
 * Resizing. A core that keeps its nodes in a growing array and offers
 * owner-driven resizing (tk_core_ops.resize: the heap) is run as the generic
 * blocking adapter runs it: resize->manual() right after init, so removals
 * never shrink the array and insert() answers TK_EFULL when it is full; the
 * peer then grows it to resize->wanted() (alloc_block, adopt, free_block)
 * and inserts again. With the untimed insert/cancel cycle of tkb_core_warm()
 * the array reaches the population once, before any timed phase, and stays
 * there: a timed phase neither grows nor shrinks it. (Left to resize itself,
 * the heap would shrink back during the warm-up's cancels and grow again
 * inside the timed inserts.) Every engine runs at the parameters its spec
 * gives; nothing is pre-sized behind the spec's back.
 *
 * expire_all(until) moves virtual time to due(until), the first instant at
 * which the core hands out a node with deadline `until` (until itself for an
 * exact core, the next tick for a ticked one), so every node with a deadline
 * at or before `until` leaves. It calls expire(now, SIZE_MAX) while next()
 * says something may be due by then and expire() hands something out: a core
 * whose next() is only a lower bound (a hierarchical wheel's next cascade)
 * is covered, since expire() with no limit hands out everything due at once.
 *
 * Slack. Every node gets the spec's slack (slack=, tk_node.slack_ns), and
 * next_one() answers the core's latest() where it has one: the instant an
 * owner may wait until (the end of the earliest window), so a driver that
 * waits for it wakes once for every node whose window contains it. Without
 * slack latest() is next(). expire_all() is unchanged: it expires
 * everything due by `until`, whatever the windows.
 *
 * An operation that fails (an insert that cannot grow, a remove of a node the
 * core does not hold) is counted, and destroy() reports the count on stderr:
 * the workloads' own checks (every timer expired) catch the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params-internal.h"
#include "timerkit/engine.h"
#include "timerkit/status.h"
#include "tkbench.h"

typedef struct core_peer {
    const tk_core_ops *core;
    const tkb_peer *peer; /* for messages; outlives the instance */
    uint64_t seq;         /* sequence numbers of inserts, as an owner gives them */
    int64_t now;          /* virtual time of the last expire() */
    size_t failed;        /* operations that did not succeed */
} core_peer;

/* Where the core's state starts in the instance's allocation. */
#define STATE_OFFSET                                                                               \
    ((sizeof(core_peer) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) *                     \
     _Alignof(max_align_t))

static inline void *state_of(core_peer *s) {
    return (char *)s + STATE_OFFSET;
}

static int cp_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)n_hint; /* the spec's parameters decide the core's size */
    const tk_queue_ops *engine = p->engine;
    if (engine == NULL || engine->core == NULL)
        return -1;
    const tk_core_ops *core = engine->core;
    tk_queue_config qc = p->qc;
    char err[256];
    if ((qc.engine == NULL && tk_queue_config_init_for(&qc, engine) != TK_OK) ||
        tk_queue_config_check(engine, &qc, err, sizeof err) != TK_OK) {
        fprintf(stderr, "tkbench: %s: %s\n", p->spec, err);
        return -1;
    }
    if (core->size > SIZE_MAX - STATE_OFFSET)
        return -1;
    core_peer *s = calloc(1, STATE_OFFSET + core->size);
    if (s == NULL)
        return -1;
    s->core = core;
    s->peer = p;
    if (core->init(state_of(s), tk__queue_config_params(&qc), tk_allocator_default(), 0) != TK_OK) {
        free(s);
        return -1;
    }
    if (core->resize != NULL)
        core->resize->manual(state_of(s));
    *out = s;
    return 0;
}

static void cp_destroy(void *self) {
    core_peer *s = self;
    if (s->failed > 0)
        fprintf(stderr, "tkbench: %s: %zu core operations failed\n", s->peer->spec, s->failed);
    s->core->destroy(state_of(s));
    free(s);
}

/* Grows a full array to the capacity the core wants (resize ops only).
 * Returns true if it moved. */
static bool grow(core_peer *s) {
    const tk_core_resize_ops *r = s->core->resize;
    void *st = state_of(s);
    size_t want = r->wanted(st);
    if (want <= r->capacity(st))
        return false;
    void *block = r->alloc_block(st, want), *old = NULL;
    size_t old_capacity = 0;
    if (block == NULL)
        return false;
    if (!r->adopt(st, block, want, &old, &old_capacity)) {
        r->free_block(st, block, want);
        return false;
    }
    r->free_block(st, old, old_capacity);
    return true;
}

/* The rare path of an insert: a full array to grow, or a failure. */
static void insert_again(core_peer *s, tk_node *n, int rc) {
    if (rc == TK_EFULL && s->core->resize != NULL && grow(s))
        rc = s->core->insert(state_of(s), n);
    if (rc != TK_OK)
        s->failed++;
}

static inline void insert(core_peer *s, const tk_core_ops *core, void *st, tk_node *n,
                          int64_t deadline) {
    n->deadline_ns = deadline;
    n->seq = s->seq++;
    n->slack_ns = s->peer->slack_ns;
    int rc = core->insert(st, n);
    if (rc != TK_OK)
        insert_again(s, n, rc);
}

static void cp_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    core_peer *s = self;
    const tk_core_ops *core = s->core;
    void *st = state_of(s);
    tk_node *nodes = (tk_node *)(void *)timers;
    for (size_t i = i0; i < i1; i++)
        insert(s, core, st, &nodes[i], dl[i]);
}

static void cp_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    core_peer *s = self;
    const tk_core_ops *core = s->core;
    void *st = state_of(s);
    tk_node *nodes = (tk_node *)(void *)timers;
    size_t failed = 0;
    for (size_t k = 0; k < count; k++)
        failed += core->remove(st, &nodes[idx[k]]) != TK_OK;
    s->failed += failed;
}

static void cp_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl,
                     size_t count) {
    core_peer *s = self;
    const tk_core_ops *core = s->core;
    void *st = state_of(s);
    tk_node *nodes = (tk_node *)(void *)timers;
    size_t failed = 0;
    for (size_t k = 0; k < count; k++) {
        tk_node *n = &nodes[idx[k]];
        failed += core->remove(st, n) != TK_OK;
        insert(s, core, st, n, dl[k]);
    }
    s->failed += failed;
}

/* Expires everything due at `now` (never before the core's last `now`),
 * handing each node to fired(ctx, node) if fired is given. Returns how many. */
static size_t expire_loop(core_peer *s, int64_t now, void (*fired)(void *ctx, char *timer),
                          void *ctx) {
    const tk_core_ops *core = s->core;
    void *st = state_of(s);
    if (now < s->now)
        now = s->now; /* the core's time never goes back */
    s->now = now;
    size_t total = 0, count;
    int64_t when;
    while (core->next(st, &when) == TK_OK && when <= now) {
        tk_node *n = core->expire(st, now, SIZE_MAX, &count);
        TKB_ESCAPE(n);
        if (count == 0)
            break; /* next() was a lower bound: nothing is due at `now` */
        total += count;
        for (; fired != NULL && n != NULL;) {
            tk_node *after = tk_node_next_detached(n);
            fired(ctx, (char *)n);
            n = after;
        }
    }
    return total;
}

static size_t cp_expire_all(void *self, int64_t until_ns) {
    core_peer *s = self;
    return expire_loop(s, s->core->due(state_of(s), until_ns), NULL, NULL);
}

/* ---- per-event ops (the core-level replay, replay/core-level.c) ---- */
static int cp_start_one(void *self, char *timer, int64_t deadline_ns) {
    core_peer *s = self;
    size_t before = s->failed;
    insert(s, s->core, state_of(s), (tk_node *)(void *)timer, deadline_ns);
    return s->failed == before ? 0 : -1;
}

static int cp_stop_one(void *self, char *timer) {
    core_peer *s = self;
    return s->core->remove(state_of(s), (tk_node *)(void *)timer) == TK_OK ? 0 : -1;
}

static int64_t cp_due_one(void *self, int64_t deadline_ns) {
    core_peer *s = self;
    return s->core->due(state_of(s), deadline_ns);
}

/* When the owner may wait until: the core's latest() where it has one (the
 * end of the earliest window; next() without slack), else next(). */
static bool cp_next_one(void *self, int64_t *when_ns) {
    core_peer *s = self;
    if (s->core->latest != NULL)
        return s->core->latest(state_of(s), when_ns) == TK_OK;
    return s->core->next(state_of(s), when_ns) == TK_OK;
}

/* As cp_expire_all, at `now` itself, naming each node handed out. */
static size_t cp_expire_at(void *self, int64_t now, void (*fired)(void *ctx, char *timer),
                           void *ctx) {
    return expire_loop(self, now, fired, ctx);
}

const tkb_core_peer_ops tkb_core_engine = {
    .timer_size = sizeof(tk_node),
    .can_expire = true,
    .create = cp_create,
    .destroy = cp_destroy,
    .add_range = cp_add_range,
    .cancel_list = cp_cancel_list,
    .churn = cp_churn,
    .expire_all = cp_expire_all,
    .start_one = cp_start_one,
    .stop_one = cp_stop_one,
    .due_one = cp_due_one,
    .next_one = cp_next_one,
    .expire_at = cp_expire_at,
};
