/* timerkit: differential fuzzing of the two engine cores against a model.
 *
 * The input bytes are decoded into a short program of operations on
 * simulated time: add a timer, remove one, advance the clock by whole wheel
 * ticks (one at a time or in a jump), and query. Every operation is applied
 * to three implementations at once:
 *
 *   - the heap core   (engines/heap/heap-core.h),
 *   - the wheel core  (engines/wheel/wheel-core.h),
 *   - a model: a sorted array of live timers, trivially correct.
 *
 * Time only moves in whole wheel ticks. Tick k is the instant
 * t_k = start + k * tick_ns. Advancing from tick c to c+1 must expire exactly
 * the timers whose deadline is <= t_{c+1}, in (deadline, seq) order, from all
 * three: the heap by pop_due(t_{c+1}) until it returns NULL, the wheel by
 * advance(), the model by cutting its sorted prefix. A jump to tick T
 * (advance_to) must expire everything with deadline <= t_T, in order. Any
 * difference, any wrong status from add/remove, a disagreement of size() or
 * contains(), a failed _check() (run every few operations, after every
 * heap-only operation and at the end), or a leak through the counting
 * allocator aborts the process: libFuzzer saves the input, the standalone
 * replayer reports it.
 *
 * The program also has operations that only the heap has, or that stress
 * its removal and resizing paths: pop the head (remove_first), remove_if(),
 * drain, a mass cancellation, bursts of cancel-and-reschedule and bursts of
 * adds; the wheel and the model follow each of them by removing or adding
 * the same timers.
 *
 * Input format (every missing byte reads as 0):
 *   byte 0: bits 0-2 tick_ns choice, bits 3-5 ticks_per_wheel choice
 *   byte 1: bits 0-1 start_ns choice, bits 2-4 heap initial capacity - 1,
 *           bit 5 set: the harness resizes the heap array as the adapter
 *           does (automatic resizing off; a resize is sometimes delivered
 *           a few operations late)
 *   then operations, one opcode byte each (taken mod 16) plus operands:
 *     0,1,2  add      slot, delay class/value (see decode_delay)
 *     3      remove   slot (the wheel's remove() needs membership, so
 *                      it is asked contains() first, as its adapter does)
 *     4,5    advance  1 + (byte % 4) single ticks
 *     6      jump     advance_to(current + n), n from one byte
 *     7,12,15  query  size, contains, peek, next_expiry_tick, _check()
 *     8      pop      the heap's head, due or not (remove_first)
 *     9      reschedule  byte: 1 + b % 8 pairs, each one byte: a live slot
 *                      is removed, then added again (k + 1) thirds of a
 *                      tick ahead for the k-th pair
 *     10     remove_if  byte b: slots i with (i + b) % (1 + b / 64 % 4) == 0
 *     11     drain    pop every heap node; they must come out in order
 *     13     mass cancel  byte b: keep every (2 + b % 8)-th live slot
 *     14     add burst  byte: 1 + b % 16 adds, each slot + delay bytes
 *
 * Build: fuzz/run.sh (clang + libFuzzer) or, without libFuzzer, compile with
 * -DTK_FUZZ_STANDALONE to get a replayer that runs every file or directory
 * named on its command line (CTest: fuzz_replay; fuzz/regress.sh). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap-core.h"
#include "timerkit/alloc.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"
#include "wheel-core.h"

#define NSLOTS 48
#define MAX_OPS 4096
#define MAX_TOTAL_TICKS (INT64_C(1) << 20)
#define CHECK_EVERY 16

/* ---- input reader --------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t n, off;
} reader;

static uint8_t rd_u8(reader *r) {
    return r->off < r->n ? r->p[r->off++] : 0;
}

static uint16_t rd_u16(reader *r) {
    uint16_t lo = rd_u8(r);
    return (uint16_t)(lo | (uint16_t)rd_u8(r) << 8);
}

/* ---- counting allocator: the cores must free what they allocate ------------ */

typedef struct count_alloc {
    size_t allocs, frees;
    size_t bytes_alloc, bytes_freed;
} count_alloc;

static void *ca_alloc(void *ctx, size_t size) {
    count_alloc *c = ctx;
    void *p = malloc(size ? size : 1);
    if (p != NULL) {
        c->allocs++;
        c->bytes_alloc += size;
    }
    return p;
}

static void ca_free(void *ctx, void *ptr, size_t size) {
    count_alloc *c = ctx;
    c->frees++;
    c->bytes_freed += size;
    free(ptr);
}

/* ---- the world --------------------------------------------------------------- */

typedef struct slot {
    tk_node hn; /* the heap's copy */
    tk_node wn; /* the wheel's copy */
    bool live;  /* in the model */
} slot;

typedef struct world {
    tk_heap_core heap;
    bool owner;             /* the harness resizes the heap's array */
    tk_heap_entry *pending; /* owner: a block allocated, not yet adopted */
    size_t pending_cap;
    int pending_ops; /* operations left before it is offered */
    tk_wheel_core wheel;
    slot slots[NSLOTS];
    int model[NSLOTS]; /* live slot indices sorted by (deadline, seq) */
    int nmodel;
    int64_t tick_ns;
    uint32_t wheel_size;
    int64_t start_ns;
    uint64_t tick; /* model's current tick */
    uint64_t seq;
    int64_t ticks_done;
    size_t op_index;
    count_alloc ca;
    tk_allocator alloc;
} world;

static void fail(const world *w, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr,
            "fuzz_engines: MISMATCH at op %zu (tick %" PRIu64 ", tick_ns %" PRId64
            ", wheel %" PRIu32 ", start %" PRId64 "): ",
            w->op_index, w->tick, w->tick_ns, w->wheel_size, w->start_ns);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

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

/* t_tick = start + tick * tick_ns, saturated to INT64_MAX (as the wheel's
 * tick_time() documents). */
static int64_t tick_time(const world *w, uint64_t tick) {
    if (tick > (uint64_t)INT64_MAX)
        return INT64_MAX;
    return sat_add(w->start_ns, sat_mul((int64_t)tick, w->tick_ns));
}

static bool key_less(const tk_node *a, const tk_node *b) {
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

static void model_insert(world *w, int idx) {
    int i = w->nmodel++;
    while (i > 0 && key_less(&w->slots[idx].hn, &w->slots[w->model[i - 1]].hn)) {
        w->model[i] = w->model[i - 1];
        i--;
    }
    w->model[i] = idx;
    w->slots[idx].live = true;
}

static void model_remove(world *w, int idx) {
    for (int i = 0; i < w->nmodel; i++) {
        if (w->model[i] == idx) {
            memmove(&w->model[i], &w->model[i + 1], (size_t)(w->nmodel - i - 1) * sizeof(int));
            w->nmodel--;
            w->slots[idx].live = false;
            return;
        }
    }
}

static int slot_of_heap_node(const world *w, const tk_node *n) {
    for (int i = 0; i < NSLOTS; i++)
        if (&w->slots[i].hn == n)
            return i;
    return -1;
}

static int slot_of_wheel_node(const world *w, const tk_node *n) {
    for (int i = 0; i < NSLOTS; i++)
        if (&w->slots[i].wn == n)
            return i;
    return -1;
}

/* Tick at which the model expires a live timer: the first tick k > current
 * with t_k >= deadline. */
static uint64_t model_expiry_tick(const world *w, int64_t deadline) {
    uint64_t next = w->tick + 1;
    if (deadline <= tick_time(w, next))
        return next;
    /* deadline > t_next >= start, so the difference is positive. */
    uint64_t diff = (uint64_t)deadline - (uint64_t)w->start_ns;
    uint64_t k = diff / (uint64_t)w->tick_ns + (diff % (uint64_t)w->tick_ns != 0);
    return k;
}

/* ---- operations ---------------------------------------------------------------- */

static int64_t decode_delay(world *w, reader *r) {
    uint8_t d = rd_u8(r);
    int64_t v = d & 63;
    int64_t tick = w->tick_ns;
    int64_t span = sat_mul((int64_t)w->wheel_size, tick);
    switch (d >> 6) {
    case 0: /* within ~16 ticks, off the tick grid */
        return sat_add(sat_mul(v, tick / 4 + (tick < 4)), v & 1);
    case 1: /* on the tick grid, a few ticks back to ~55 ahead */
        return sat_mul(v - 8, tick);
    case 2: /* many rounds ahead */
        return sat_add(sat_mul((int64_t)rd_u16(r), tick / 2 + (tick < 2)), v & 3);
    default: /* edges */
        switch (v & 15) {
        case 0:
            return INT64_MAX; /* clamps to the end of time */
        case 1:
            return -(INT64_C(1) << 62); /* far in the past */
        case 2:
            return 0;
        case 3:
            return -1;
        case 4:
            return tick; /* exactly t_{c+1} */
        case 5:
            return sat_add(tick, 1);
        case 6:
            return span; /* exactly one revolution */
        case 7:
            return sat_add(span, 1);
        case 8:
            return span - 1;
        case 9:
            return sat_mul(2, span);
        case 10:
            return sat_add(sat_mul(v >> 4, span), tick);
        case 11:
            return INT64_MAX / 2;
        case 12:
            return tick - 1;
        default:
            return sat_mul((int64_t)rd_u16(r), span / 7 + (span < 7));
        }
    }
}

/* ---- the owner side of the heap's resizing (header bit, as the adapter) ---- */

/* Moves the heap to the capacity it wants, at once. */
static void owner_resize_now(world *w) {
    size_t want = tk_heap_core_wanted_capacity(&w->heap);
    if (want == tk_heap_core_capacity(&w->heap))
        return;
    tk_heap_entry *block = tk_heap_core_alloc_block(&w->heap, want);
    if (block == NULL)
        fail(w, "heap alloc_block(%zu) failed", want);
    tk_heap_entry *old = NULL;
    size_t old_cap = 0;
    if (!tk_heap_core_adopt(&w->heap, block, want, &old, &old_cap))
        fail(w, "heap adopt refused the capacity it asked for (%zu)", want);
    tk_heap_core_free_block(&w->heap, old, old_cap);
    if (tk_heap_core_wanted_capacity(&w->heap) != want)
        fail(w, "heap wants another move right after adopting %zu", want);
}

/* After each operation: deliver a block claimed earlier (adopt may refuse it
 * now), or claim one for a later operation, or move at once. */
static void owner_step(world *w) {
    if (!w->owner)
        return;
    if (w->pending != NULL && --w->pending_ops <= 0) {
        tk_heap_entry *old = NULL;
        size_t old_cap = 0;
        if (tk_heap_core_adopt(&w->heap, w->pending, w->pending_cap, &old, &old_cap))
            tk_heap_core_free_block(&w->heap, old, old_cap);
        else
            tk_heap_core_free_block(&w->heap, w->pending, w->pending_cap);
        w->pending = NULL;
    }
    size_t want = tk_heap_core_wanted_capacity(&w->heap);
    if (w->pending != NULL || want == tk_heap_core_capacity(&w->heap))
        return;
    if (w->op_index % 3 == 0) {
        w->pending = tk_heap_core_alloc_block(&w->heap, want);
        if (w->pending == NULL)
            fail(w, "heap alloc_block(%zu) failed", want);
        w->pending_cap = want;
        w->pending_ops = 1 + (int)(w->op_index % 4);
    } else {
        owner_resize_now(w);
    }
}

static int heap_push(world *w, slot *s) {
    int rc = tk_heap_core_push(&w->heap, &s->hn);
    if (rc == TK_EFULL && w->owner) { /* the owner grows a full array, then retries */
        owner_resize_now(w);
        rc = tk_heap_core_push(&w->heap, &s->hn);
    }
    return rc;
}

static void op_add(world *w, reader *r) {
    int idx = rd_u8(r) % NSLOTS;
    int64_t delay = decode_delay(w, r);
    slot *s = &w->slots[idx];
    if (s->live) { /* reuse right after removal */
        if (tk_heap_core_remove(&w->heap, &s->hn) != TK_OK)
            fail(w, "heap remove of live slot %d failed", idx);
        if (!tk_wheel_core_contains(&w->wheel, &s->wn))
            fail(w, "wheel lost live slot %d", idx);
        tk_wheel_core_remove(&w->wheel, &s->wn);
        model_remove(w, idx);
    }
    int64_t deadline = sat_add(tick_time(w, w->tick), delay);
    uint64_t seq = ++w->seq;
    s->hn.deadline_ns = s->wn.deadline_ns = deadline;
    s->hn.seq = s->wn.seq = seq;
    int rc = heap_push(w, s);
    if (rc != TK_OK)
        fail(w, "heap push slot %d -> %s", idx, tk_status_name(rc));
    tk_wheel_core_add(&w->wheel, &s->wn);
    model_insert(w, idx);
}

static void op_remove(world *w, reader *r) {
    int idx = rd_u8(r) % NSLOTS;
    slot *s = &w->slots[idx];
    int want = s->live ? TK_OK : TK_ENOENT;
    int rc = tk_heap_core_remove(&w->heap, &s->hn);
    if (rc != want)
        fail(w, "heap remove slot %d: want %s, got %s", idx, tk_status_name(want),
             tk_status_name(rc));
    /* The wheel's remove() requires membership: ask contains() first, as
     * its adapter does. */
    bool in_wheel = tk_wheel_core_contains(&w->wheel, &s->wn);
    if (in_wheel != s->live)
        fail(w, "wheel contains(slot %d) = %d, model says %d", idx, in_wheel, s->live);
    if (s->live) {
        tk_wheel_core_remove(&w->wheel, &s->wn);
        model_remove(w, idx);
    }
}

/* Expires everything due at tick `target` from all three and compares. */
static void expire_to(world *w, uint64_t target, bool single) {
    int64_t t = tick_time(w, target);
    int want[NSLOTS], nwant = 0;
    while (w->nmodel > 0 && w->slots[w->model[0]].hn.deadline_ns <= t) {
        want[nwant++] = w->model[0];
        model_remove(w, w->model[0]);
    }

    int got_heap[NSLOTS], nheap = 0;
    tk_node *n;
    while ((n = tk_heap_core_pop_due(&w->heap, t)) != NULL) {
        if (nheap == NSLOTS)
            fail(w, "heap pop_due returned more nodes than exist");
        int idx = slot_of_heap_node(w, n);
        if (idx < 0)
            fail(w, "heap pop_due returned a foreign node %p", (void *)n);
        got_heap[nheap++] = idx;
    }

    size_t count = (size_t)-1;
    tk_node *list = single ? tk_wheel_core_advance(&w->wheel, &count)
                           : tk_wheel_core_advance_to(&w->wheel, target, &count);
    int got_wheel[NSLOTS], nwheel = 0;
    for (n = list; n != NULL; n = tk_node_next_detached(n)) {
        if (nwheel == NSLOTS)
            fail(w, "wheel list longer than the number of nodes (cycle?)");
        int idx = slot_of_wheel_node(w, n);
        if (idx < 0)
            fail(w, "wheel returned a foreign node %p", (void *)n);
        got_wheel[nwheel++] = idx;
    }
    w->tick = target;

    if (count != (size_t)nwheel)
        fail(w, "wheel count %zu but list has %d nodes", count, nwheel);
    if (nheap != nwant || memcmp(got_heap, want, (size_t)nwant * sizeof(int)) != 0) {
        fprintf(stderr, "t=%" PRId64 " model:", t);
        for (int i = 0; i < nwant; i++)
            fprintf(stderr, " %d(%" PRId64 ",%" PRIu64 ")", want[i],
                    w->slots[want[i]].hn.deadline_ns, w->slots[want[i]].hn.seq);
        fprintf(stderr, "\nheap:");
        for (int i = 0; i < nheap; i++)
            fprintf(stderr, " %d", got_heap[i]);
        fputc('\n', stderr);
        fail(w, "heap expired %d nodes, model %d (or a different order)", nheap, nwant);
    }
    if (nwheel != nwant || memcmp(got_wheel, want, (size_t)nwant * sizeof(int)) != 0) {
        fprintf(stderr, "t=%" PRId64 " model:", t);
        for (int i = 0; i < nwant; i++)
            fprintf(stderr, " %d(%" PRId64 ",%" PRIu64 ")", want[i],
                    w->slots[want[i]].wn.deadline_ns, w->slots[want[i]].wn.seq);
        fprintf(stderr, "\nwheel:");
        for (int i = 0; i < nwheel; i++)
            fprintf(stderr, " %d(%" PRId64 ",%" PRIu64 ")", got_wheel[i],
                    w->slots[got_wheel[i]].wn.deadline_ns, w->slots[got_wheel[i]].wn.seq);
        fputc('\n', stderr);
        fail(w, "wheel expired %d nodes, model %d (or a different order)", nwheel, nwant);
    }
    uint64_t cur = (uint64_t)tk_wheel_core_current_tick(&w->wheel);
    if (cur != target)
        fail(w, "wheel current tick %" PRIu64 ", want %" PRIu64, cur, target);
    if (tk_wheel_core_tick_time(&w->wheel, target) != t)
        fail(w, "wheel tick_time(%" PRIu64 ") = %" PRId64 ", want %" PRId64, target,
             (int64_t)tk_wheel_core_tick_time(&w->wheel, target), t);
}

static void op_advance(world *w, reader *r) {
    int steps = 1 + rd_u8(r) % 4;
    for (int i = 0; i < steps && w->ticks_done < MAX_TOTAL_TICKS; i++) {
        expire_to(w, w->tick + 1, true);
        w->ticks_done++;
    }
}

static void op_jump(world *w, reader *r) {
    uint8_t b = rd_u8(r);
    int64_t n = (b & 0x80) ? (int64_t)(b & 0x7f) * 64 + 1 : (int64_t)b + 1;
    if (w->ticks_done + n > MAX_TOTAL_TICKS)
        return;
    w->ticks_done += n;
    expire_to(w, w->tick + (uint64_t)n, false);
}

static void op_query(world *w) {
    size_t hs = tk_heap_core_size(&w->heap), ws = tk_wheel_core_size(&w->wheel);
    if (hs != (size_t)w->nmodel || ws != (size_t)w->nmodel)
        fail(w, "size: heap %zu, wheel %zu, model %d", hs, ws, w->nmodel);
    for (int i = 0; i < NSLOTS; i++) {
        bool live = w->slots[i].live;
        if (tk_heap_core_contains(&w->heap, &w->slots[i].hn) != live)
            fail(w, "heap contains(slot %d) != %d", i, live);
        if (tk_wheel_core_contains(&w->wheel, &w->slots[i].wn) != live)
            fail(w, "wheel contains(slot %d) != %d", i, live);
    }
    tk_node *head = tk_heap_core_peek(&w->heap);
    if (w->nmodel == 0) {
        if (head != NULL)
            fail(w, "heap peek non-NULL on an empty heap");
    } else {
        if (head != &w->slots[w->model[0]].hn)
            fail(w, "heap peek is slot %d, model head is slot %d", slot_of_heap_node(w, head),
                 w->model[0]);
        /* Exact: the first tick whose advance expires something. */
        uint64_t want = model_expiry_tick(w, w->slots[w->model[0]].wn.deadline_ns);
        uint64_t got = 0;
        if (!tk_wheel_core_next_expiry_tick(&w->wheel, &got) || got != want)
            fail(w, "wheel next_expiry_tick %" PRIu64 ", first expiry is at tick %" PRIu64, got,
                 want);
    }
    uint64_t t;
    if (w->nmodel == 0 && tk_wheel_core_next_expiry_tick(&w->wheel, &t))
        fail(w, "wheel next_expiry_tick true on an empty wheel");
}

/* Takes slot idx out of the wheel and the model, after the heap handed it
 * out or removed it on its own (pop, remove_if, drain). */
static void follow_heap_removal(world *w, int idx, const char *what) {
    slot *s = &w->slots[idx];
    if (!s->live)
        fail(w, "heap %s handed out slot %d, which the model does not hold", what, idx);
    if (!tk_wheel_core_contains(&w->wheel, &s->wn))
        fail(w, "wheel lost live slot %d", idx);
    tk_wheel_core_remove(&w->wheel, &s->wn);
    model_remove(w, idx);
}

static void op_pop(world *w) {
    tk_node *n = tk_heap_core_pop(&w->heap);
    if (w->nmodel == 0) {
        if (n != NULL)
            fail(w, "heap pop returned a node from an empty heap");
        return;
    }
    int idx = slot_of_heap_node(w, n);
    if (idx != w->model[0])
        fail(w, "heap pop returned slot %d, model head is slot %d", idx, w->model[0]);
    if (tk_heap_core_contains(&w->heap, n))
        fail(w, "heap still contains popped slot %d", idx);
    follow_heap_removal(w, idx, "pop");
}

static void op_reschedule(world *w, reader *r) {
    int pairs = 1 + rd_u8(r) % 8;
    for (int k = 0; k < pairs; k++) {
        int idx = rd_u8(r) % NSLOTS;
        slot *s = &w->slots[idx];
        if (!s->live)
            continue;
        if (tk_heap_core_remove(&w->heap, &s->hn) != TK_OK)
            fail(w, "heap remove of live slot %d failed", idx);
        follow_heap_removal(w, idx, "remove");
        int64_t delay = sat_mul((int64_t)(k + 1), w->tick_ns / 3 + 1);
        int64_t deadline = sat_add(tick_time(w, w->tick), delay);
        uint64_t seq = ++w->seq;
        s->hn.deadline_ns = s->wn.deadline_ns = deadline;
        s->hn.seq = s->wn.seq = seq;
        int rc = heap_push(w, s);
        if (rc != TK_OK)
            fail(w, "heap push slot %d -> %s", idx, tk_status_name(rc));
        tk_wheel_core_add(&w->wheel, &s->wn);
        model_insert(w, idx);
    }
}

typedef struct if_ctx {
    const world *w;
    int add, mod;
    int calls[NSLOTS];
} if_ctx;

static bool pred_slot(const tk_node *n, void *ctx) {
    if_ctx *c = ctx;
    int idx = slot_of_heap_node(c->w, n);
    if (idx < 0)
        return false; /* reported below: every call is counted per slot */
    c->calls[idx]++;
    return (idx + c->add) % c->mod == 0;
}

static void op_remove_if(world *w, reader *r) {
    uint8_t b = rd_u8(r);
    if_ctx c;
    memset(&c, 0, sizeof(c));
    c.w = w;
    c.add = b;
    c.mod = 1 + (b / 64) % 4;
    size_t removed = (size_t)-1;
    tk_node *list = tk_heap_core_remove_if(&w->heap, pred_slot, &c, &removed);
    for (int i = 0; i < NSLOTS; i++)
        if (c.calls[i] != (w->slots[i].live ? 1 : 0))
            fail(w, "remove_if asked about slot %d %d times (live %d)", i, c.calls[i],
                 w->slots[i].live);
    bool taken[NSLOTS] = {false};
    size_t listed = 0;
    for (tk_node *n = list; n != NULL; n = tk_node_next_detached(n)) {
        int idx = slot_of_heap_node(w, n);
        if (idx < 0 || listed == NSLOTS || taken[idx])
            fail(w, "remove_if listed a foreign or repeated node");
        taken[idx] = true;
        listed++;
    }
    if (listed != removed)
        fail(w, "remove_if counted %zu, listed %zu", removed, listed);
    for (int i = 0; i < NSLOTS; i++) {
        bool want = w->slots[i].live && (i + c.add) % c.mod == 0;
        if (taken[i] != want)
            fail(w, "remove_if took slot %d: %d, want %d", i, taken[i], want);
        if (taken[i])
            follow_heap_removal(w, i, "remove_if");
    }
}

static void op_drain(world *w) {
    int got[NSLOTS], n = 0;
    tk_node *x;
    while ((x = tk_heap_core_pop(&w->heap)) != NULL) {
        if (n == NSLOTS)
            fail(w, "heap drain returned more nodes than exist");
        got[n++] = slot_of_heap_node(w, x);
    }
    if (n != w->nmodel || memcmp(got, w->model, (size_t)n * sizeof(int)) != 0)
        fail(w, "heap drain returned %d nodes, model %d (or a different order)", n, w->nmodel);
    for (int i = 0; i < n; i++)
        follow_heap_removal(w, got[i], "drain");
    if (tk_heap_core_size(&w->heap) != 0)
        fail(w, "drained heap still holds %zu nodes", tk_heap_core_size(&w->heap));
}

static void op_mass_cancel(world *w, reader *r) {
    int keep_every = 2 + rd_u8(r) % 8, k = 0;
    for (int i = 0; i < NSLOTS; i++) {
        slot *s = &w->slots[i];
        if (!s->live || k++ % keep_every == 0)
            continue;
        if (tk_heap_core_remove(&w->heap, &s->hn) != TK_OK)
            fail(w, "heap remove of live slot %d failed", i);
        follow_heap_removal(w, i, "remove");
    }
}

static void op_add_burst(world *w, reader *r) {
    int adds = 1 + rd_u8(r) % 16;
    for (int k = 0; k < adds; k++)
        op_add(w, r);
}

static void check_cores(world *w) {
    int rc = tk_heap_core_check(&w->heap);
    if (rc != TK_OK)
        fail(w, "heap _check -> %s", tk_status_name(rc));
    rc = tk_wheel_core_check(&w->wheel);
    if (rc != TK_OK)
        fail(w, "wheel _check -> %s", tk_status_name(rc));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const int64_t tick_choices[8] = {1, 2, 7, 1000, 1000000, INT64_MAX / 4, 64, 999};
    /* Raw ticks_per_wheel values; the core rounds them up to a power of two. */
    static const uint32_t wheel_choices[8] = {1, 2, 3, 8, 5, 64, 100, 512};
    static const int64_t start_choices[4] = {0, 1000000007, INT64_C(1) << 40, 123};
    reader r = {data, size, 0};
    world *w = calloc(1, sizeof(*w));
    if (w == NULL)
        abort();
    uint8_t b0 = rd_u8(&r), b1 = rd_u8(&r);
    w->owner = (b1 & 0x20) != 0;
    w->tick_ns = tick_choices[b0 & 7];
    uint32_t raw_size = wheel_choices[(b0 >> 3) & 7];
    w->wheel_size = 1;
    while (w->wheel_size < raw_size)
        w->wheel_size <<= 1;
    w->start_ns = start_choices[b1 & 3];
    w->alloc = (tk_allocator){ca_alloc, ca_free, &w->ca};
    for (int i = 0; i < NSLOTS; i++) {
        w->slots[i].hn.tk__priv.heap.index = SIZE_MAX;
    }

    int rc = tk_heap_core_init(&w->heap, &w->alloc, 1 + (b1 >> 2) % 8);
    if (rc != TK_OK)
        fail(w, "heap init -> %s", tk_status_name(rc));
    tk_heap_core_set_auto_resize(&w->heap, !w->owner);
    rc = tk_wheel_core_init(&w->wheel, &w->alloc, w->tick_ns, raw_size, w->start_ns);
    if (rc != TK_OK)
        fail(w, "wheel init -> %s", tk_status_name(rc));

    for (w->op_index = 0; r.off < r.n && w->op_index < MAX_OPS; w->op_index++) {
        uint8_t op = rd_u8(&r);
        switch (op % 16) {
        case 0:
        case 1:
        case 2:
            op_add(w, &r);
            break;
        case 3:
            op_remove(w, &r);
            break;
        case 4:
        case 5:
            op_advance(w, &r);
            break;
        case 6:
            op_jump(w, &r);
            break;
        case 8:
            op_pop(w);
            check_cores(w);
            break;
        case 9:
            op_reschedule(w, &r);
            check_cores(w);
            break;
        case 10:
            op_remove_if(w, &r);
            check_cores(w);
            break;
        case 11:
            op_drain(w);
            check_cores(w);
            break;
        case 13:
            op_mass_cancel(w, &r);
            check_cores(w);
            break;
        case 14:
            op_add_burst(w, &r);
            check_cores(w);
            break;
        default:
            op_query(w);
            check_cores(w);
            break;
        }
        owner_step(w);
        if (w->op_index % CHECK_EVERY == 0)
            check_cores(w);
    }
    op_query(w);
    check_cores(w);

    if (w->pending != NULL)
        tk_heap_core_free_block(&w->heap, w->pending, w->pending_cap);
    tk_heap_core_destroy(&w->heap);
    tk_wheel_core_destroy(&w->wheel);
    if (w->ca.allocs != w->ca.frees || w->ca.bytes_alloc != w->ca.bytes_freed)
        fail(w, "leak: %zu allocations (%zu bytes), %zu frees (%zu bytes)", w->ca.allocs,
             w->ca.bytes_alloc, w->ca.frees, w->ca.bytes_freed);
    free(w);
    return 0;
}

#ifdef TK_FUZZ_STANDALONE
/* Replays files through the target: each argument is a file or a directory
 * (every regular file in it, in name order). Exits non-zero if an argument
 * cannot be read; a mismatch aborts. */
#include <dirent.h>
#include <sys/stat.h>

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (buf == NULL)
        return -1;
    fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, size_t *count) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof(*names));
            if (nn == NULL)
                abort();
            names = nn;
        }
        size_t l = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        if (names[n] == NULL)
            abort();
        snprintf(names[n], l, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) != 0)
                rc = -1;
            else
                (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    size_t count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            if (replay_dir(argv[i], &count) != 0)
                rc = 1;
        } else if (replay_file(argv[i]) != 0) {
            rc = 1;
        } else {
            count++;
        }
    }
    printf("fuzz_replay: %zu inputs replayed, no mismatch\n", count);
    return rc;
}
#endif
