/* SPDX-License-Identifier: MIT */
/* timerkit: the core-model interpreter (core-model.h): every registered
 * engine's pure core, driven through tk_core_ops only, in lockstep with a
 * model of the contract of api/timerkit/engine.h.
 *
 * The world. TKM_SLOTS slots, each with a key (deadline_ns, seq) that the
 * program sets; one shared `now` that never goes back. Each engine with a
 * core is a lane: its core's state, its own copy of every slot's node (the
 * private areas are the core's), and its model: which slots it holds, the
 * due() it gave each one when inserted, and the last `now` it was given.
 * Lanes share the program and the keys but not membership: a ticked core
 * hands a node out later than an exact one, so each lane's model follows its
 * own due().
 *
 * What is checked, for each lane:
 *   - expire(t, max) hands out exactly the held nodes with due(deadline) <= t,
 *     in (deadline, seq) order, the first `max` of them, with *count their
 *     number; a list that repeats a node, holds a foreign one or does not end
 *     is caught; the due nodes left over stay held and go out next time; a
 *     node inserted with due <= the last `now` is due at the next expire();
 *   - due(d) >= d, the same answer every time it is asked about d, and never
 *     smaller for a larger d (checked against a log of the deadlines and
 *     instants the program used);
 *   - next(): TK_ENOENT iff the lane holds nothing, else an instant no later
 *     than the smallest due() held; and progress: following next() as the
 *     adapter's leader does, expire() at max(next, last now) hands out a node
 *     or next() moves strictly later, within a bounded number of rounds;
 *   - latest(), for a core that has it: TK_ENOENT iff empty, else an instant
 *     R with next() <= R <= the smallest window end held (a window ends at
 *     due(deadline + slack), the sum saturating); and progress when the
 *     leader follows latest() instead (TKM_OP_WALK): expire() at R hands out
 *     a node or latest() moves strictly later. Every node carries a slack
 *     (world_slack()): 0 for most, a few ns, about a tick, seconds, enough
 *     to reach or pass INT64_MAX; expire() must ignore it;
 *   - remove(): TK_OK for a held node, TK_ENOENT for one handed out, removed
 *     or never inserted (zeroed private area); insert() of a held node:
 *     TK_EINVAL, core and node unchanged;
 *   - count(); first() (the smallest (deadline, seq) held, due or not);
 *     remove_if() (pred called once per held node and never for another,
 *     exactly the matching nodes handed back, *count their number);
 *     count_due(t, limit) when present (min(limit, nodes expire(t) would hand
 *     out)); check() == TK_OK every CHECK_EVERY operations, after the
 *     operations that change many nodes, and at the end;
 *   - memory, through a counting allocator: init() and the resize block may
 *     allocate, nothing else (a core with owner-driven resizing left in its
 *     own mode may resize on insert and removal); every free matches an
 *     allocation and its size; nothing is left after destroy(); init() with
 *     an allocation failing returns TK_ENOMEM with nothing left allocated
 *     (TKM_FLAG_ALLOC_SWEEP); an insert() whose allocation fails returns
 *     TK_ENOMEM with core and node unchanged (TKM_OP_INSERT_NOMEM);
 *   - owner-driven resizing (tk_core_ops.resize, TKM_FLAG_OWNER_RESIZE):
 *     after manual() capacity() changes only when the harness adopts a
 *     block, count() <= capacity(), insert() answers TK_EFULL only when
 *     count() == capacity() and wanted() is then larger, adopt() accepts the
 *     capacity wanted() asked for just before, and may refuse a block that
 *     arrives late.
 *
 * Parameters. Each lane's config comes from its engine's parameter table:
 * for every entry that is not an adapter setting, the header picks the
 * default, the minimum, a value a little above the minimum, a value between
 * the minimum and eight times the default, or the maximum; then
 * tk_queue_config_check(). A refused combination is tried again with the
 * maxima brought down, then with every default. init() may allocate at most
 * INIT_BUDGET bytes (so that a large wheel stays small); a config that needs
 * more falls back the same way. */
#include "core-model.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params-internal.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

#define NSLOTS TKM_SLOTS
#define MAX_OPS 4096
#define CHECK_EVERY 8
#define DUE_LOG 256                    /* (deadline, due) pairs each lane remembers */
#define INIT_BUDGET ((size_t)4 << 20)  /* bytes init() may hold allocated */
#define MAX_LIVE_BLOCKS 64             /* allocations a core may hold at once */
#define WALK_BOUND (32 * NSLOTS + 256) /* next()/expire() rounds before "no progress" */
#define SWEEP_MAX 32                   /* allocations of init() the sweep fails in turn */

typedef struct world world;
typedef struct lane lane;

/* ---- the counting allocator ------------------------------------------------------ */

typedef struct live_block {
    void *ptr;
    size_t size;
} live_block;

typedef struct count_alloc {
    lane *l;
    live_block live[MAX_LIVE_BLOCKS];
    size_t nlive;
    size_t live_bytes;
    uint64_t allocs, frees;
    size_t budget; /* 0: none; else an allocation taking live_bytes above it fails */
    long fail_at;  /* >= 0: that many allocations succeed, the next one fails; -1: none */
    bool fail_all; /* every allocation fails */
    bool refused;  /* an allocation was refused since the flag was last cleared */
    bool open;     /* the harness allows the core to allocate now */
} count_alloc;

struct lane {
    world *w;
    size_t index; /* in the registry */
    const tk_queue_ops *engine;
    const tk_core_ops *core;
    tkm_engine_stats *st;
    void *state;
    size_t state_size;
    bool live;     /* init() succeeded, destroy() not yet called */
    bool manual;   /* owner-driven resizing */
    bool fallback; /* the chosen parameters were refused */
    tk_queue_config cfg;
    char spec[192];
    tk_node nodes[NSLOTS];
    bool held[NSLOTS];
    int64_t due[NSLOTS]; /* due(deadline) when inserted */
    int64_t end[NSLOTS]; /* due(deadline + slack, saturated) when inserted: its window's end */
    int64_t now;         /* the last instant given to expire() (the origin before) */
    size_t cap;          /* manual: the capacity last adopted */
    void *pending;       /* manual: a block allocated, to be adopted later */
    size_t pending_cap;
    int pending_ops;
    count_alloc ca;
    tk_allocator alloc; /* ca_alloc/ca_free on `ca`; the core keeps a pointer to it */
    struct {
        int64_t d, due;
    } due_log[DUE_LOG];
    size_t due_logged;
    uint64_t calls, ops, handed, resizes;
};

struct world {
    lane *lanes;
    size_t nlanes;
    int64_t deadline[NSLOTS];
    uint64_t seq[NSLOTS];
    int64_t slack[NSLOTS]; /* the slot's slack_ns, >= 0 */
    uint8_t slack_seed;    /* header byte 3: varies the slacks world_slack() picks */
    bool used[NSLOTS];     /* the slot's key has been set */
    int64_t origin, now;
    uint64_t next_seq;
    size_t op_index;
    int op; /* the opcode being run, or -1 (setup, teardown) */
    uint8_t flags;
    bool trace;
};

static const char *const op_names[TKM_OP_COUNT] = {
    "insert",       "insert", "burst",     "remove",       "advance", "advance",
    "walk",         "query",  "remove_if", "remove_first", "cancel",  "reschedule",
    "insert_nomem", "drain",  "check",     "step"};

static void dump_lane(const lane *l) {
    const world *w = l->w;
    fprintf(stderr, "  %s holds (slot: deadline, seq, due, slack, window end):", l->engine->name);
    int shown = 0;
    for (int i = 0; i < NSLOTS; i++) {
        if (!l->held[i])
            continue;
        fprintf(stderr, "%s %d: %" PRId64 ", %" PRIu64 ", %" PRId64 ", %" PRId64 ", %" PRId64,
                shown++ % 2 ? ";" : "\n   ", i, w->deadline[i], w->seq[i], l->due[i], w->slack[i],
                l->end[i]);
    }
    fprintf(stderr, "%s\n", shown ? "" : " nothing");
}

/* Reports a departure from the contract (or a harness error) and aborts. */
static void fail(const lane *l, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
static void fail(const lane *l, const char *fmt, ...) {
    const world *w = l->w;
    fprintf(stderr,
            "core_model: MISMATCH in engine '%s' (%s%s%s), op #%zu (%s), now %" PRId64
            ", engine's last now %" PRId64 ", origin %" PRId64 ":\n  ",
            l->engine->name, l->spec, l->manual ? ", owner-driven resizing" : "",
            w->flags & TKM_FLAG_ALLOC_SWEEP ? ", init allocation sweep" : "", w->op_index,
            w->op >= 0 ? op_names[w->op] : "setup/teardown", w->now, l->now, w->origin);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (l->live)
        dump_lane(l);
    fflush(stderr);
    abort();
}

static void *ca_alloc(void *ctx, size_t size) {
    count_alloc *c = ctx;
    lane *l = c->l;
    bool self_resizing = l->core->resize != NULL && !l->manual;
    if (!c->open && !self_resizing)
        fail(l, "the core allocated %zu bytes outside init() and the resize block", size);
    bool refuse = c->fail_all || c->fail_at == 0 ||
                  (c->budget != 0 && (size > c->budget || c->live_bytes > c->budget - size));
    if (c->fail_at >= 0)
        c->fail_at--;
    if (refuse) {
        c->refused = true;
        return NULL;
    }
    if (c->nlive == MAX_LIVE_BLOCKS)
        fail(l, "the core holds more than %d allocations at once", MAX_LIVE_BLOCKS);
    void *p = malloc(size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "core_model: out of memory (%zu bytes)\n", size);
        abort();
    }
    c->live[c->nlive++] = (live_block){p, size};
    c->live_bytes += size;
    c->allocs++;
    return p;
}

static void ca_free(void *ctx, void *ptr, size_t size) {
    count_alloc *c = ctx;
    lane *l = c->l;
    bool self_resizing = l->core->resize != NULL && !l->manual;
    if (!c->open && !self_resizing)
        fail(l, "the core freed a block outside destroy() and the resize block");
    for (size_t i = 0; i < c->nlive; i++) {
        if (c->live[i].ptr != ptr)
            continue;
        if (c->live[i].size != size)
            fail(l, "free of a %zu-byte block with size %zu", c->live[i].size, size);
        c->live[i] = c->live[--c->nlive];
        c->live_bytes -= size;
        c->frees++;
        free(ptr);
        return;
    }
    fail(l, "free of a block (%zu bytes) the allocator never handed out, or freed twice", size);
}

/* ---- arithmetic ------------------------------------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b) {
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

static int64_t sat_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

static uint64_t mix64(uint64_t x) { /* splitmix64's finaliser */
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static uint64_t hash_str(uint64_t h, const char *s) { /* FNV-1a */
    h ^= UINT64_C(0xcbf29ce484222325);
    for (; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
    return h;
}

/* ---- the model ---------------------------------------------------------------------- */

static bool key_before(const world *w, int a, int b) {
    return w->deadline[a] < w->deadline[b] ||
           (w->deadline[a] == w->deadline[b] && w->seq[a] < w->seq[b]);
}

static size_t model_count(const lane *l) {
    size_t n = 0;
    for (int i = 0; i < NSLOTS; i++)
        n += l->held[i];
    return n;
}

/* The held slot with the smallest key, or -1. */
static int model_first(const lane *l) {
    int best = -1;
    for (int i = 0; i < NSLOTS; i++)
        if (l->held[i] && (best < 0 || key_before(l->w, i, best)))
            best = i;
    return best;
}

static size_t model_due_count(const lane *l, int64_t t) {
    size_t n = 0;
    for (int i = 0; i < NSLOTS; i++)
        n += l->held[i] && l->due[i] <= t;
    return n;
}

/* The slot of a node of lane l, or -1 for a pointer to anything else. */
static int slot_of(const lane *l, const tk_node *n) {
    uintptr_t p = (uintptr_t)n, base = (uintptr_t)l->nodes;
    if (p < base || p >= base + sizeof(l->nodes) || (p - base) % sizeof(tk_node) != 0)
        return -1;
    return (int)((p - base) / sizeof(tk_node));
}

/* ---- calls into a core, with the checks that go with each ------------------------ */

/* due(d), checked: never below d, the same as before for the same d, and
 * in order with the neighbours of d among the deadlines logged so far. */
static int64_t lane_due(lane *l, int64_t d) {
    l->calls++;
    int64_t u = l->core->due(l->state, d);
    if (u < d)
        fail(l, "due(%" PRId64 ") = %" PRId64 " is before the deadline", d, u);
    size_t lo = 0, hi = l->due_logged; /* first entry with .d >= d */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->due_log[mid].d < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < l->due_logged && l->due_log[lo].d == d) {
        if (l->due_log[lo].due != u)
            fail(l, "due(%" PRId64 ") = %" PRId64 ", earlier %" PRId64, d, u, l->due_log[lo].due);
        return u;
    }
    if (lo > 0 && l->due_log[lo - 1].due > u)
        fail(l, "due() decreases: due(%" PRId64 ") = %" PRId64 " but due(%" PRId64 ") = %" PRId64,
             l->due_log[lo - 1].d, l->due_log[lo - 1].due, d, u);
    if (lo < l->due_logged && l->due_log[lo].due < u)
        fail(l, "due() decreases: due(%" PRId64 ") = %" PRId64 " but due(%" PRId64 ") = %" PRId64,
             d, u, l->due_log[lo].d, l->due_log[lo].due);
    if (l->due_logged < DUE_LOG) {
        memmove(&l->due_log[lo + 1], &l->due_log[lo], (l->due_logged - lo) * sizeof(l->due_log[0]));
        l->due_log[lo].d = d;
        l->due_log[lo].due = u;
        l->due_logged++;
    }
    return u;
}

/* next(), checked against the model: TK_ENOENT iff empty, else an instant no
 * later than the smallest due() held. */
static int lane_next(lane *l, int64_t *when) {
    l->calls++;
    int64_t t = INT64_MIN;
    int rc = l->core->next(l->state, &t);
    size_t held = model_count(l);
    if (held == 0) {
        if (rc != TK_ENOENT)
            fail(l, "next() on an empty core: %s (%" PRId64 "), want TK_ENOENT", tk_status_name(rc),
                 t);
        return rc;
    }
    if (rc != TK_OK)
        fail(l, "next() with %zu nodes held: %s, want TK_OK", held, tk_status_name(rc));
    int64_t min_due = INT64_MAX;
    for (int i = 0; i < NSLOTS; i++)
        if (l->held[i] && l->due[i] < min_due)
            min_due = l->due[i];
    if (t > min_due)
        fail(l, "next() = %" PRId64 " is after the smallest due() held, %" PRId64, t, min_due);
    *when = t;
    return rc;
}

/* latest(), checked against the model: TK_ENOENT iff empty, else an instant
 * from next() (given as `next`, the core's answer just before) to the
 * smallest window end held. */
static int lane_latest(lane *l, int64_t next, int64_t *when) {
    l->calls++;
    int64_t t = INT64_MIN;
    int rc = l->core->latest(l->state, &t);
    size_t held = model_count(l);
    if (held == 0) {
        if (rc != TK_ENOENT)
            fail(l, "latest() on an empty core: %s (%" PRId64 "), want TK_ENOENT",
                 tk_status_name(rc), t);
        return rc;
    }
    if (rc != TK_OK)
        fail(l, "latest() with %zu nodes held: %s, want TK_OK", held, tk_status_name(rc));
    int64_t min_end = INT64_MAX;
    for (int i = 0; i < NSLOTS; i++)
        if (l->held[i] && l->end[i] < min_end)
            min_end = l->end[i];
    if (t > min_end)
        fail(l, "latest() = %" PRId64 " is after the smallest window end held, %" PRId64, t,
             min_end);
    if (t < next)
        fail(l, "latest() = %" PRId64 " is before next() = %" PRId64, t, next);
    *when = t;
    return rc;
}

/* Checks count(), first(), next(), latest() and, in manual resizing,
 * capacity(). */
static void lane_observe(lane *l) {
    l->calls += 2;
    size_t n = l->core->count(l->state);
    size_t want = model_count(l);
    if (n != want)
        fail(l, "count() = %zu, the model holds %zu", n, want);
    tk_node *f = l->core->first(l->state);
    int fi = model_first(l);
    if (fi < 0 ? f != NULL : f != &l->nodes[fi])
        fail(l, "first() is slot %d (%p), the smallest key held is slot %d", slot_of(l, f),
             (void *)f, fi);
    int64_t t = INT64_MIN, r;
    (void)lane_next(l, &t);
    if (l->core->latest != NULL)
        (void)lane_latest(l, t, &r);
    if (l->manual) {
        l->calls++;
        size_t cap = l->core->resize->capacity(l->state);
        if (cap != l->cap)
            fail(l, "capacity() = %zu changed from %zu without a block adopted", cap, l->cap);
        if (n > cap)
            fail(l, "count() = %zu is above capacity() = %zu", n, cap);
    }
}

static void lane_check(lane *l) {
    l->calls++;
    int rc = l->core->check(l->state);
    if (rc != TK_OK)
        fail(l, "check() = %s", tk_status_name(rc));
}

/* expire(t, max), checked against the model. Returns the number handed out. */
static size_t lane_expire(lane *l, int64_t t, size_t max) {
    world *w = l->w;
    if (t < l->now)
        fail(l, "harness error: expire(%" PRId64 ") before the last now", t);
    int want[NSLOTS], nwant = 0;
    for (int i = 0; i < NSLOTS; i++) {
        if (!l->held[i])
            continue;
        int64_t u = lane_due(l, w->deadline[i]);
        if (u != l->due[i])
            fail(l, "due(%" PRId64 ") = %" PRId64 ", %" PRId64 " when slot %d was inserted",
                 w->deadline[i], u, l->due[i], i);
        if (u > t)
            continue;
        int j = nwant++;
        while (j > 0 && key_before(w, i, want[j - 1])) {
            want[j] = want[j - 1];
            j--;
        }
        want[j] = i;
    }
    size_t expect = (size_t)nwant < max ? (size_t)nwant : max;
    size_t count = SIZE_MAX;
    l->calls++;
    tk_node *list = l->core->expire(l->state, t, max, &count);
    l->now = t;
    int got[NSLOTS + 1];
    bool seen[NSLOTS] = {false};
    size_t k = 0;
    for (tk_node *n = list; n != NULL; n = tk_node_next_detached(n)) {
        int i = slot_of(l, n);
        if (i < 0)
            fail(l, "expire(%" PRId64 ", %zu) handed out a foreign node %p", t, max, (void *)n);
        if (seen[i] || !l->held[i])
            fail(l, "expire(%" PRId64 ", %zu) handed out slot %d %s", t, max, i,
                 seen[i] ? "twice (a cycle?)" : "which it does not hold");
        seen[i] = true;
        got[k++] = i;
    }
    bool same = k == expect;
    for (size_t j = 0; same && j < k; j++)
        same = got[j] == want[j];
    if (!same || count != k) {
        fprintf(stderr, "expire(%" PRId64 ", max %zu): the model wants", t, max);
        for (size_t j = 0; j < expect; j++)
            fprintf(stderr, " %d", want[j]);
        fprintf(stderr, "\n  the core handed out (*count %zu):", count);
        for (size_t j = 0; j < k; j++)
            fprintf(stderr, " %d", got[j]);
        fputc('\n', stderr);
        fail(l,
             "expire(%" PRId64
             ", %zu) handed out %zu nodes (*count %zu), the model %zu of %d due%s",
             t, max, k, count, expect, nwant,
             k != expect ? ""
             : same      ? ": *count is wrong"
                         : ": another order");
    }
    for (size_t j = 0; j < k; j++)
        l->held[got[j]] = false;
    l->handed += k;
    return k;
}

/* remove(slot i): TK_OK if held, else TK_ENOENT. */
static void lane_remove(lane *l, int i) {
    l->calls++;
    int rc = l->core->remove(l->state, &l->nodes[i]);
    int want = l->held[i] ? TK_OK : TK_ENOENT;
    if (rc != want)
        fail(l, "remove(slot %d), %s: %s, want %s", i, l->held[i] ? "held" : "not held",
             tk_status_name(rc), tk_status_name(want));
    l->held[i] = false;
}

/* ---- owner-driven resizing ------------------------------------------------------------ */

static void *resize_alloc(lane *l, size_t cap) {
    l->calls++;
    l->ca.open = true;
    void *b = l->core->resize->alloc_block(l->state, cap);
    l->ca.open = false;
    return b;
}

static void resize_free(lane *l, void *block, size_t cap) {
    l->calls++;
    l->ca.open = true;
    l->core->resize->free_block(l->state, block, cap);
    l->ca.open = false;
}

/* Offers `block` (cap entries) to adopt(); frees whichever block is left.
 * `must` : the move was asked for just now, so it must be accepted. */
static bool resize_adopt(lane *l, void *block, size_t cap, bool must) {
    void *old = NULL;
    size_t old_cap = 0;
    l->calls++;
    bool moved = l->core->resize->adopt(l->state, block, cap, &old, &old_cap);
    if (!moved) {
        if (must)
            fail(l, "adopt() refused %zu entries, what wanted() asked for just before", cap);
        resize_free(l, block, cap);
        return false;
    }
    if (old_cap != l->cap)
        fail(l, "adopt() handed back an array of %zu entries, capacity() was %zu", old_cap, l->cap);
    l->cap = cap;
    l->calls++;
    size_t now_cap = l->core->resize->capacity(l->state);
    if (now_cap != cap)
        fail(l, "capacity() = %zu right after adopting %zu entries", now_cap, cap);
    resize_free(l, old, old_cap);
    l->resizes++;
    return true;
}

/* Moves the core to the capacity it wants, as the adapter does after an
 * operation (at most 4 steps). Returns false if an allocation was refused. */
static bool resize_now(lane *l) {
    for (int step = 0; step < 4; step++) {
        l->calls += 2;
        size_t want = l->core->resize->wanted(l->state);
        if (want == l->core->resize->capacity(l->state))
            return true;
        void *block = resize_alloc(l, want);
        if (block == NULL) {
            if (!l->ca.refused)
                fail(l, "alloc_block(%zu) returned NULL with the allocator working", want);
            return false;
        }
        resize_adopt(l, block, want, true);
    }
    return true;
}

/* Hands the late block to adopt(), which may refuse it now. */
static void deliver_pending(lane *l) {
    void *b = l->pending;
    l->pending = NULL;
    if (b != NULL)
        resize_adopt(l, b, l->pending_cap, false);
}

/* After each operation: deliver a block claimed earlier, or claim one now
 * for a later operation, or resize at once. */
static void owner_step(lane *l) {
    if (!l->manual)
        return;
    if (l->pending != NULL && --l->pending_ops <= 0)
        deliver_pending(l);
    if (l->pending != NULL)
        return;
    l->calls += 2;
    size_t want = l->core->resize->wanted(l->state);
    if (want == l->core->resize->capacity(l->state))
        return;
    size_t op = l->w->op_index + l->index;
    if (op % 3 == 0) {
        l->pending = resize_alloc(l, want);
        if (l->pending == NULL)
            fail(l, "alloc_block(%zu) returned NULL with the allocator working", want);
        l->pending_cap = want;
        l->pending_ops = 1 + (int)(op % 4);
    } else {
        (void)resize_now(l);
    }
}

/* ---- insert --------------------------------------------------------------------------- */

/* One insert() call; a failure must leave the core's count and the node's
 * private area as they were. */
static int insert_call(lane *l, int i) {
    tk_node *n = &l->nodes[i];
    unsigned char before[sizeof(n->tk__priv)];
    memcpy(before, &n->tk__priv, sizeof(before));
    size_t count_before = model_count(l);
    l->calls++;
    int rc = l->core->insert(l->state, n);
    if (rc == TK_OK)
        return rc;
    if (memcmp(before, &n->tk__priv, sizeof(before)) != 0)
        fail(l, "insert(slot %d) failed with %s but changed the node's private area", i,
             tk_status_name(rc));
    l->calls++;
    size_t c = l->core->count(l->state);
    if (c != count_before)
        fail(l, "insert(slot %d) failed with %s but count() went from %zu to %zu", i,
             tk_status_name(rc), count_before, c);
    return rc;
}

/* Inserts slot i (not held) as the adapter's offer() does: on TK_EFULL
 * (manual resizing) resizes and inserts again. Returns TK_OK, or TK_ENOMEM
 * when the allocator refused (insert_call() checked the core unchanged). */
static int lane_insert(lane *l, int i) {
    for (int tries = 0;; tries++) {
        int rc = insert_call(l, i);
        if (rc == TK_OK) {
            l->held[i] = true;
            return rc;
        }
        if (rc == TK_ENOMEM) {
            if (!l->ca.refused)
                fail(l, "insert(slot %d): TK_ENOMEM with no allocation refused", i);
            return rc;
        }
        if (rc != TK_EFULL)
            fail(l, "insert(slot %d), not held: %s", i, tk_status_name(rc));
        if (!l->manual)
            fail(l, "insert(slot %d): TK_EFULL without owner-driven resizing", i);
        l->calls++;
        size_t n = l->core->count(l->state);
        if (n != l->cap)
            fail(l, "insert(slot %d): TK_EFULL with %zu held and room for %zu", i, n, l->cap);
        if (tries == 3)
            fail(l, "insert(slot %d): still TK_EFULL after %d resizes", i, tries);
        if (l->pending != NULL) { /* a resize under way: the adapter waits for it */
            deliver_pending(l);
            continue;
        }
        l->calls++;
        size_t want = l->core->resize->wanted(l->state);
        if (want <= l->cap)
            fail(l, "insert(slot %d): TK_EFULL, but wanted() = %zu with capacity %zu", i, want,
                 l->cap);
        void *block = resize_alloc(l, want);
        if (block == NULL) {
            if (!l->ca.refused)
                fail(l, "alloc_block(%zu) returned NULL with the allocator working", want);
            return TK_ENOMEM;
        }
        resize_adopt(l, block, want, true);
    }
}

/* insert() of slot i, held: TK_EINVAL, core and node unchanged. */
static void lane_insert_held(lane *l, int i) {
    int rc = insert_call(l, i);
    if (rc != TK_EINVAL)
        fail(l, "insert(slot %d), already held: %s, want TK_EINVAL", i, tk_status_name(rc));
}

/* The slack of slot i, just given its key: picked by a hash of the key and
 * the header's slack seed, so that every program, the corpus's included,
 * mixes slacks without an operand for them. Most are 0 (as most timers'),
 * the rest a few ns, up to a few ms (about a tick), up to a minute, up to
 * 2^62 ns, exactly what reaches INT64_MAX from the deadline (or a little
 * less), or INT64_MAX itself (the sum saturates). */
static int64_t world_slack(const world *w, int i) {
    uint64_t h = mix64(w->seq[i] * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)w->deadline[i] ^
                       (uint64_t)w->slack_seed << 56);
    uint64_t x = h >> 8;
    int64_t d = w->deadline[i];
    switch (h % 12) {
    case 0:
        return (int64_t)(x % 16);
    case 1:
        return (int64_t)(x % 5000000);
    case 2:
        return (int64_t)(x % (INT64_C(60) * 1000000000));
    case 3:
        return (int64_t)(x >> 2) & (INT64_MAX >> 1);
    case 4: { /* the window ends at INT64_MAX, or 1-3 ns before (where there is room) */
        int64_t to_max = d >= 0 ? INT64_MAX - d : INT64_MAX;
        int64_t less = (int64_t)(x % 4);
        return to_max > less ? to_max - less : to_max;
    }
    case 5:
        return INT64_MAX;
    default:
        return 0;
    }
}

/* Gives slot i a new key and inserts it into every lane (removing it first
 * where held). nomem: every allocation fails for the first attempt. */
static void world_insert(world *w, int i, int64_t deadline, bool nomem) {
    for (size_t e = 0; e < w->nlanes; e++) {
        lane *l = &w->lanes[e];
        if (l->held[i]) {
            lane_insert_held(l, i);
            lane_remove(l, i);
        }
    }
    w->deadline[i] = deadline;
    w->seq[i] = ++w->next_seq;
    w->slack[i] = world_slack(w, i);
    w->used[i] = true;
    for (size_t e = 0; e < w->nlanes; e++) {
        lane *l = &w->lanes[e];
        l->nodes[i].deadline_ns = deadline;
        l->nodes[i].seq = w->seq[i];
        l->nodes[i].slack_ns = w->slack[i];
        l->due[i] = lane_due(l, deadline);
        l->end[i] = lane_due(l, sat_add(deadline, w->slack[i]));
        l->ca.fail_all = nomem;
        l->ca.refused = false;
        int rc = lane_insert(l, i);
        l->ca.fail_all = false;
        if (rc == TK_ENOMEM) {
            if (!nomem)
                fail(l, "insert(slot %d): TK_ENOMEM with the allocator working", i);
            l->ca.refused = false;
            rc = lane_insert(l, i);
            if (rc != TK_OK)
                fail(l, "insert(slot %d) after TK_ENOMEM, allocator working: %s", i,
                     tk_status_name(rc));
        }
    }
}

/* ---- decoding ------------------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t n, off;
} reader;

static uint8_t rd(reader *r) {
    return r->off < r->n ? r->p[r->off++] : 0;
}

static int64_t pow2(unsigned k) {
    return k >= 63 ? INT64_MAX : INT64_C(1) << k;
}

/* The smallest deadline any lane holds, or `now` if none. */
static int64_t smallest_held(const world *w) {
    int64_t best = INT64_MAX;
    bool any = false;
    for (size_t e = 0; e < w->nlanes; e++)
        for (int i = 0; i < NSLOTS; i++)
            if (w->lanes[e].held[i] && w->deadline[i] <= best) {
                best = w->deadline[i];
                any = true;
            }
    return any ? best : w->now;
}

/* An instant at or after now (see core-model.h). */
static int64_t decode_instant(world *w, uint8_t k, uint8_t x, uint8_t y) {
    int64_t now = w->now, t = now;
    int64_t off = (int64_t)(y % 3) - 1;
    lane *l = &w->lanes[x % w->nlanes];
    int s = x % NSLOTS;
    switch (k % 12) {
    case 0: /* the same instant */
        break;
    case 1: /* a few ns */
        t = sat_add(now, x & 15);
        break;
    case 2: /* microseconds */
        t = sat_add(now, (int64_t)x * 1000 + y);
        break;
    case 3: /* up to 6.5 s in steps of 100 us */
        t = sat_add(now, (int64_t)((x << 8) | y) * 100000);
        break;
    case 4: /* far ahead */
        t = sat_add(now, pow2(x % 63u));
        break;
    case 5: /* on a deadline, or just before or after it */
        t = sat_add(w->used[s] ? w->deadline[s] : now, off);
        break;
    case 6: /* on an engine's due() of a deadline, or around it */
        t = sat_add(lane_due(&w->lanes[y / 3 % w->nlanes], w->used[s] ? w->deadline[s] : now), off);
        break;
    case 7: /* an engine's next grid point after now (several ahead), or around it */
        t = sat_add(lane_due(l, sat_add(now, 1 + (int64_t)(y / 3) * (y / 3))), off);
        break;
    case 8: /* an engine's next() */
        if (model_count(l) > 0 && lane_next(l, &t) == TK_OK)
            t = sat_add(t, off);
        break;
    case 9: /* the end of time, or nearly */
        t = x % 4 == 0 ? INT64_MAX : sat_add(now, pow2(40 + x % 23u));
        break;
    case 10: /* around the smallest deadline held */
        t = sat_add(smallest_held(w), (int64_t)(x % 5) - 2);
        break;
    default: /* milliseconds */
        t = sat_add(now, (int64_t)x * 1000000 + (int64_t)y * 1000);
        break;
    }
    return t < now ? now : t;
}

/* A deadline (see core-model.h). */
static int64_t decode_deadline(world *w, uint8_t k, uint8_t x, uint8_t y) {
    int64_t now = w->now;
    int s = x % NSLOTS;
    switch (k % 14) {
    case 0:
        return sat_add(now, x);
    case 1:
        return sat_add(now, (int64_t)x * 1000 + y);
    case 2: /* up to 0.65 s in steps of 10 us */
        return sat_add(now, (int64_t)((x << 8) | y) * 10000);
    case 3: /* up to 65 s in steps of 1 ms */
        return sat_add(now, (int64_t)((x << 8) | y) * 1000000);
    case 4: /* far ahead: beyond any wheel's span */
        return sat_add(now, pow2(x % 63u));
    case 5: /* near the origin, before or after */
        return sat_add(w->origin, (int64_t)x - 128);
    case 6: /* well before the origin */
        return sat_add(w->origin, -pow2(x % 63u));
    case 7:
        return INT64_MAX - x % 4;
    case 8: {
        static const int64_t low[4] = {INT64_MIN / 2, INT64_MIN, INT64_MIN / 2 + 1, -1};
        return x % 4 == 2 ? sat_add(low[2], y) : low[x % 4];
    }
    case 9: /* a tie with another slot's deadline */
        return w->used[s] ? w->deadline[s] : now;
    case 10: /* next to another slot's deadline */
        return sat_add(w->used[s] ? w->deadline[s] : now, (int64_t)(y % 5) - 2);
    case 11: { /* on or next to a grid point of an engine */
        lane *l = &w->lanes[x % w->nlanes];
        int64_t base = sat_add(now, 1 + sat_mul(y, pow2(x / 8 % 32u)));
        return sat_add(lane_due(l, base), (int64_t)(k / 14 % 3) - 1);
    }
    case 12: /* already due */
        return sat_add(now, -(int64_t)x);
    default:
        return sat_add(now, sat_mul(x, pow2(20)));
    }
}

static size_t decode_max(uint8_t b) {
    static const size_t m[8] = {SIZE_MAX, 1, 2, 3, 5, 16, NSLOTS, SIZE_MAX};
    return m[b % 8];
}

/* ---- operations --------------------------------------------------------------------- */

static void world_expire(world *w, int64_t t, size_t max) {
    for (size_t e = 0; e < w->nlanes; e++)
        lane_expire(&w->lanes[e], t, max);
    w->now = t;
}

/* Follows next() up to T as the adapter's leader does: expire() at
 * max(next, last now); if it hands out nothing, next() must move later.
 * by_latest (a core with latest()): follows latest() instead, as the
 * adapter's leader does with slack; nothing handed out, latest() must move
 * later. */
static void lane_walk(lane *l, int64_t T, size_t max, bool by_latest) {
    for (int round = 0;; round++) {
        if (round > WALK_BOUND)
            fail(l,
                 "no progress: after %d rounds of next() and expire(), the last at %" PRId64
                 ", still short of %" PRId64 " (a lower bound must reach the nodes in a bounded "
                 "number of steps, a few per node)",
                 round, l->now, T);
        int64_t t;
        if (model_count(l) == 0) {
            (void)lane_next(l, &t); /* TK_ENOENT, checked */
            return;
        }
        (void)lane_next(l, &t);
        if (by_latest) {
            int64_t r;
            (void)lane_latest(l, t, &r);
            t = r;
        }
        if (t > T)
            return;
        int64_t at = t > l->now ? t : l->now;
        if (lane_expire(l, at, max) > 0)
            continue;
        int64_t t2 = INT64_MAX;
        if (by_latest && model_count(l) > 0) {
            int64_t n2 = INT64_MIN;
            (void)lane_next(l, &n2);
            if (lane_latest(l, n2, &t2) == TK_OK && t2 <= t)
                fail(l,
                     "no progress: latest() = %" PRId64 ", expire(%" PRId64
                     ") handed out nothing and latest() is still %" PRId64,
                     t, at, t2);
            continue;
        }
        if (model_count(l) > 0 && lane_next(l, &t2) == TK_OK && t2 <= t)
            fail(l,
                 "no progress: next() = %" PRId64 ", expire(%" PRId64 ") handed out nothing and "
                 "next() is still %" PRId64,
                 t, at, t2);
    }
}

typedef struct pred_ctx {
    lane *l;
    int calls[NSLOTS];
    int foreign;
    int mode; /* 0: slot pattern, 1: deadline <= now, 2: every node */
    int add, mod;
} pred_ctx;

static bool pred_match(const pred_ctx *c, int i) {
    switch (c->mode) {
    case 0:
        return (i + c->add) % c->mod == 0;
    case 1:
        return c->l->w->deadline[i] <= c->l->w->now;
    default:
        return true;
    }
}

static bool pred_fn(const tk_node *n, void *ctx) {
    pred_ctx *c = ctx;
    int i = slot_of(c->l, n);
    if (i < 0) {
        c->foreign++;
        return false;
    }
    c->calls[i]++;
    return pred_match(c, i);
}

static void lane_remove_if(lane *l, int mode, int add, int mod) {
    pred_ctx c;
    memset(&c, 0, sizeof(c));
    c.l = l;
    c.mode = mode;
    c.add = add;
    c.mod = mod;
    size_t count = SIZE_MAX;
    l->calls++;
    tk_node *list = l->core->remove_if(l->state, pred_fn, &c, &count);
    if (c.foreign != 0)
        fail(l, "remove_if() called pred on %d foreign nodes", c.foreign);
    for (int i = 0; i < NSLOTS; i++)
        if (c.calls[i] != (l->held[i] ? 1 : 0))
            fail(l, "remove_if() called pred on slot %d %d times; it is %sheld", i, c.calls[i],
                 l->held[i] ? "" : "not ");
    bool taken[NSLOTS] = {false};
    size_t k = 0;
    for (tk_node *n = list; n != NULL; n = tk_node_next_detached(n)) {
        int i = slot_of(l, n);
        if (i < 0 || taken[i] || !l->held[i])
            fail(l, "remove_if() handed back %s (slot %d)",
                 i < 0      ? "a foreign node"
                 : taken[i] ? "a node twice"
                            : "a node it did not hold",
                 i);
        taken[i] = true;
        k++;
    }
    if (count != k)
        fail(l, "remove_if() handed back %zu nodes, *count = %zu", k, count);
    for (int i = 0; i < NSLOTS; i++) {
        bool want = l->held[i] && pred_match(&c, i);
        if (taken[i] != want)
            fail(l, "remove_if() %s slot %d, which pred %s", taken[i] ? "took" : "left", i,
                 want ? "matched" : "did not match");
        if (taken[i])
            l->held[i] = false;
    }
    l->handed += k;
}

static void lane_remove_first(lane *l) {
    l->calls++;
    tk_node *f = l->core->first(l->state);
    int i = model_first(l);
    if (i < 0 ? f != NULL : f != &l->nodes[i])
        fail(l, "first() is slot %d, the model's smallest key is slot %d", slot_of(l, f), i);
    if (i >= 0)
        lane_remove(l, i);
}

static void lane_query(lane *l, uint8_t a, int64_t t) {
    world *w = l->w;
    if (l->core->count_due != NULL) {
        static const size_t limits[7] = {0, 1, 2, 3, 7, NSLOTS, SIZE_MAX};
        size_t limit = limits[a % 7];
        int64_t at[2] = {l->now, t};
        for (int j = 0; j < 2; j++) {
            size_t due = model_due_count(l, at[j]);
            size_t want = due < limit ? due : limit;
            l->calls++;
            size_t got = l->core->count_due(l->state, at[j], limit);
            if (got != want)
                fail(l, "count_due(%" PRId64 ", %zu) = %zu, want %zu (%zu due)", at[j], limit, got,
                     want, due);
        }
    }
    /* a node never inserted: zeroed private area */
    tk_node fresh;
    memset(&fresh, 0, sizeof(fresh));
    fresh.deadline_ns = w->now;
    fresh.seq = w->next_seq + 1;
    l->calls++;
    int rc = l->core->remove(l->state, &fresh);
    if (rc != TK_ENOENT)
        fail(l, "remove() of a node never inserted: %s, want TK_ENOENT", tk_status_name(rc));
}

/* ---- parameters ------------------------------------------------------------------------ */

enum { PC_DEF, PC_MIN, PC_LOW, PC_MID, PC_MAX, PC_COUNT };

/* The top of the range the "between" choices draw from: eight times the
 * default, within [min, max]. */
static int64_t param_hi(const tk_queue_param *p) {
    int64_t hi = p->def > 0 ? sat_mul(p->def, 8) : sat_add(p->min, 64);
    if (hi < p->min)
        hi = p->min;
    return hi > p->max ? p->max : hi;
}

static int64_t param_value(const tk_queue_param *p, int choice, uint64_t h) {
    int64_t hi = param_hi(p);
    uint64_t span = (uint64_t)hi - (uint64_t)p->min;
    switch (choice) {
    case PC_MIN:
        return p->min;
    case PC_LOW: /* just above the minimum: odd values */
        return p->min + (int64_t)((h >> 8) % (span < 8 ? span + 1 : 9));
    case PC_MID:
        return span == UINT64_MAX ? (int64_t)(h >> 1)
                                  : (int64_t)((uint64_t)p->min + (h >> 8) % (span + 1));
    case PC_MAX:
        return p->max;
    default:
        return p->def;
    }
}

/* Fills l->cfg: attempt 0 the header's choice, 1 the same with maxima
 * brought down, 2 every default. Returns false if the engine refuses it. */
static bool choose_params(lane *l, const uint8_t *hdr, int attempt) {
    const tk_queue_ops *eng = l->engine;
    if (tk_queue_config_init_for(&l->cfg, eng) != TK_OK)
        fail(l, "tk_queue_config_init_for() refused the engine");
    if (attempt == 2)
        return true;
    uint64_t seed = 0;
    for (int i = 0; i < 8; i++)
        seed |= (uint64_t)hdr[4 + i] << (8 * i);
    int mode = hdr[2] % 4;
    for (size_t j = 0; j < eng->param_count; j++) {
        const tk_queue_param *p = &eng->params[j];
        if (p->flags & TK_PARAM_ADAPTER)
            continue;
        uint64_t h = mix64(hash_str(seed, eng->name) ^ mix64(hash_str(0, p->key)));
        int choice = mode == 0 ? PC_DEF : mode == 1 ? PC_MIN : (int)(h % PC_COUNT);
        if (choice == PC_MAX && attempt == 1)
            choice = PC_MID;
        int64_t v = param_value(p, choice, h);
        if (tk_queue_config_set_value(&l->cfg, p->key, v) != TK_OK)
            fail(l,
                 "tk_queue_config_set_value(%s, %" PRId64 ") refused a value in [%" PRId64
                 ", %" PRId64 "]",
                 p->key, v, p->min, p->max);
    }
    return tk_queue_config_check(eng, &l->cfg, NULL, 0) == TK_OK;
}

/* ---- lanes ------------------------------------------------------------------------------- */

static int lane_init_call(lane *l) {
    memset(l->state, 0xa5, l->state_size); /* the owner's block: contents undefined */
    l->calls++;
    l->ca.open = true;
    int rc = l->core->init(l->state, tk__queue_config_params(&l->cfg), &l->alloc, l->w->origin);
    l->ca.open = false;
    return rc;
}

static void lane_destroy_call(lane *l) {
    l->calls++;
    l->ca.open = true;
    l->core->destroy(l->state);
    l->ca.open = false;
    if (l->ca.nlive != 0)
        fail(l, "destroy() left %zu blocks (%zu bytes) allocated", l->ca.nlive, l->ca.live_bytes);
}

/* init() with its allocations failing in turn (TKM_FLAG_ALLOC_SWEEP). */
static void lane_sweep(lane *l) {
    for (long k = 0; k < SWEEP_MAX; k++) {
        l->ca.fail_at = k;
        l->ca.refused = false;
        int rc = lane_init_call(l);
        l->ca.fail_at = -1;
        bool refused = l->ca.refused;
        if (rc == TK_OK) {
            l->live = true;
            lane_destroy_call(l);
            l->live = false;
            if (!refused)
                return; /* init() made k allocations or fewer: all have been failed */
        } else if (rc == TK_ENOMEM) {
            if (!refused)
                fail(l, "init() returned TK_ENOMEM with no allocation refused");
            if (l->ca.nlive != 0)
                fail(l, "init() returned TK_ENOMEM (allocation %ld refused) leaving %zu blocks", k,
                     l->ca.nlive);
        } else {
            fail(l, "init() with allocation %ld refused: %s, want TK_OK or TK_ENOMEM", k,
                 tk_status_name(rc));
        }
    }
}

static void lane_open(world *w, lane *l, const uint8_t *hdr) {
    l->state_size = l->core->size > 0 ? l->core->size : 1;
    l->state = malloc(l->state_size);
    if (l->state == NULL) {
        fprintf(stderr, "core_model: out of memory\n");
        abort();
    }
    l->now = w->origin;
    l->ca.fail_at = -1;
    for (int attempt = 0;; attempt++) {
        if (!choose_params(l, hdr, attempt)) {
            if (attempt == 2)
                fail(l, "the engine refuses its own defaults");
            continue;
        }
        if (tk_queue_config_format(l->engine, &l->cfg, l->spec, sizeof(l->spec)) != TK_OK)
            snprintf(l->spec, sizeof(l->spec), "%s:?", l->engine->name);
        l->ca.budget = attempt < 2 ? INIT_BUDGET : 0;
        if (w->flags & TKM_FLAG_ALLOC_SWEEP)
            lane_sweep(l);
        l->ca.refused = false;
        int rc = lane_init_call(l);
        l->ca.budget = 0;
        if (rc == TK_OK) {
            l->fallback = attempt > 0 && hdr[2] % 4 != 0;
            break;
        }
        if (rc == TK_ENOMEM && l->ca.refused && attempt < 2) {
            if (l->ca.nlive != 0)
                fail(l, "init() returned TK_ENOMEM leaving %zu blocks", l->ca.nlive);
            continue; /* over the memory budget */
        }
        fail(l, "init() of a config tk_queue_config_check() accepts: %s", tk_status_name(rc));
    }
    l->live = true;
    if ((w->flags & TKM_FLAG_OWNER_RESIZE) && l->core->resize != NULL) {
        l->calls += 2;
        l->core->resize->manual(l->state);
        l->manual = true;
        l->cap = l->core->resize->capacity(l->state);
    }
}

static void lane_close(lane *l) {
    if (l->pending != NULL) {
        resize_free(l, l->pending, l->pending_cap);
        l->pending = NULL;
    }
    if (l->live) {
        lane_destroy_call(l);
        l->live = false;
    }
    if (l->ca.allocs != l->ca.frees)
        fail(l, "%" PRIu64 " allocations, %" PRIu64 " frees", l->ca.allocs, l->ca.frees);
    free(l->state);
    l->state = NULL;
}

/* ---- the program ------------------------------------------------------------------------- */

static void run_op(world *w, int op, const uint8_t *o) {
    uint8_t a = o[0], b = o[1], c = o[2], d = o[3];
    switch (op) {
    case TKM_OP_INSERT:
    case TKM_OP_INSERT_B:
    case TKM_OP_INSERT_NOMEM:
        world_insert(w, a % NSLOTS, decode_deadline(w, b, c, d), op == TKM_OP_INSERT_NOMEM);
        break;
    case TKM_OP_BURST: {
        int n = 1 + a % 16, stride = 1 + 2 * (c % 8);
        for (int i = 0; i < n; i++)
            world_insert(w, (b + i * stride) % NSLOTS,
                         decode_deadline(w, d, (uint8_t)(c + 17 * i), (uint8_t)(13 * i)), false);
        break;
    }
    case TKM_OP_REMOVE:
        for (size_t e = 0; e < w->nlanes; e++)
            lane_remove(&w->lanes[e], a % NSLOTS);
        break;
    case TKM_OP_ADVANCE:
    case TKM_OP_ADVANCE_B:
        world_expire(w, decode_instant(w, a, b, c), decode_max(d));
        break;
    case TKM_OP_WALK: {
        int64_t t = decode_instant(w, a, b, c);
        size_t max = decode_max(d);
        for (size_t e = 0; e < w->nlanes; e++) {
            lane *l = &w->lanes[e];
            lane_walk(l, t, max, (d & 8) != 0 && l->core->latest != NULL);
        }
        world_expire(w, t, max);
        break;
    }
    case TKM_OP_QUERY: {
        int64_t t = decode_instant(w, b, c, d);
        int s = b % NSLOTS;
        for (size_t e = 0; e < w->nlanes; e++) {
            lane *l = &w->lanes[e];
            lane_query(l, a, t);
            if (l->held[s])
                lane_insert_held(l, s);
            lane_check(l);
        }
        break;
    }
    case TKM_OP_REMOVE_IF:
        for (size_t e = 0; e < w->nlanes; e++)
            lane_remove_if(&w->lanes[e], b % 4 == 3 ? 1 : 0, a, 1 + (b >> 2) % 8);
        break;
    case TKM_OP_REMOVE_FIRST:
        for (size_t e = 0; e < w->nlanes; e++)
            lane_remove_first(&w->lanes[e]);
        break;
    case TKM_OP_CANCEL:
        for (size_t e = 0; e < w->nlanes; e++) {
            lane *l = &w->lanes[e];
            int keep = 2 + a % 8, k = 0;
            for (int i = 0; i < NSLOTS; i++)
                if (l->held[i] && k++ % keep != 0)
                    lane_remove(l, i);
        }
        break;
    case TKM_OP_RESCHEDULE: {
        int n = 1 + a % 8;
        for (int k = 0; k < n; k++) {
            int s = (b + 7 * k) % NSLOTS;
            bool held = false;
            for (size_t e = 0; e < w->nlanes; e++)
                held |= w->lanes[e].held[s];
            if (held)
                world_insert(w, s, decode_deadline(w, c, (uint8_t)(d + 31 * k), (uint8_t)k), false);
        }
        break;
    }
    case TKM_OP_DRAIN:
        for (size_t e = 0; e < w->nlanes; e++)
            lane_remove_if(&w->lanes[e], 2, 0, 1);
        break;
    case TKM_OP_CHECK:
        for (size_t e = 0; e < w->nlanes; e++)
            lane_check(&w->lanes[e]);
        break;
    default: { /* TKM_OP_STEP */
        lane *l = &w->lanes[a % w->nlanes];
        int64_t t = sat_add(lane_due(l, sat_add(w->now, 1)), (int64_t)(b % 3) - 1);
        world_expire(w, t < w->now ? w->now : t, decode_max(c));
        break;
    }
    }
}

static const int64_t origins[8] = {0,
                                   123,
                                   1000000007,
                                   INT64_C(1) << 40,
                                   -(INT64_C(1) << 40),
                                   INT64_MAX - (INT64_C(1) << 30),
                                   INT64_MIN / 2,
                                   -1};

size_t tkm_run(const uint8_t *data, size_t size, tkm_stats *stats) {
    static int trace = -1;
    if (trace < 0) {
        const char *e = getenv("TK_FUZZ_TRACE");
        trace = e != NULL && *e != '\0' && *e != '0';
    }
    reader r = {data, size, 0};
    uint8_t hdr[TKM_HEADER_SIZE];
    for (int i = 0; i < TKM_HEADER_SIZE; i++)
        hdr[i] = rd(&r);

    world *w = calloc(1, sizeof(*w));
    size_t count = tk_engine_count();
    w->lanes = calloc(count > 0 ? count : 1, sizeof(lane));
    if (w == NULL || w->lanes == NULL) {
        fprintf(stderr, "core_model: out of memory\n");
        abort();
    }
    w->flags = hdr[0];
    w->slack_seed = hdr[3];
    w->origin = w->now = origins[hdr[1] % 8];
    w->op = -1;
    w->trace = trace > 0;
    for (size_t i = 0; i < count && w->nlanes < TKM_MAX_ENGINES; i++) {
        const tk_queue_ops *eng = tk_engine_at(i);
        if (eng == NULL || eng->core == NULL)
            continue;
        lane *l = &w->lanes[w->nlanes++];
        l->w = w;
        l->index = i;
        l->engine = eng;
        l->core = eng->core;
        l->ca.l = l;
        l->alloc = (tk_allocator){ca_alloc, ca_free, &l->ca};
        if (stats != NULL) {
            size_t k = 0;
            while (k < stats->engines && stats->engine[k].name != eng->name &&
                   strcmp(stats->engine[k].name, eng->name) != 0)
                k++;
            if (k == stats->engines) {
                stats->engines++;
                stats->engine[k].name = eng->name;
            }
            l->st = &stats->engine[k];
        }
    }
    size_t ops = 0;
    if (w->nlanes > 0) {
        for (size_t e = 0; e < w->nlanes; e++) {
            lane *l = &w->lanes[e];
            lane_open(w, l, hdr);
            if (w->trace)
                fprintf(stderr, "engine %s: %s%s%s, origin %" PRId64 "\n", l->engine->name, l->spec,
                        l->manual ? ", owner-driven resizing" : "",
                        l->fallback ? " (chosen parameters refused)" : "", w->origin);
        }
        for (w->op_index = 0; r.off < r.n && w->op_index < MAX_OPS; w->op_index++) {
            uint8_t o[TKM_OP_SIZE];
            for (int i = 0; i < TKM_OP_SIZE; i++)
                o[i] = rd(&r);
            w->op = o[0] % TKM_OP_COUNT;
            if (w->trace)
                fprintf(stderr, "op #%zu %s %u %u %u %u (now %" PRId64 ")\n", w->op_index,
                        op_names[w->op], o[1], o[2], o[3], o[4], w->now);
            run_op(w, w->op, o + 1);
            for (size_t e = 0; e < w->nlanes; e++) {
                lane *l = &w->lanes[e];
                owner_step(l);
                lane_observe(l);
                if (w->op_index % CHECK_EVERY == 0)
                    lane_check(l);
                l->ops++;
            }
            ops++;
        }
        w->op = -1;
        for (size_t e = 0; e < w->nlanes; e++) {
            lane *l = &w->lanes[e];
            lane_observe(l);
            lane_check(l);
            lane_close(l);
            if (l->st != NULL) {
                l->st->programs++;
                l->st->ops += l->ops;
                l->st->calls += l->calls;
                l->st->handed_out += l->handed;
                l->st->resizes += l->resizes;
                l->st->fallbacks += l->fallback;
            }
        }
    }
    free(w->lanes);
    free(w);
    return ops;
}
