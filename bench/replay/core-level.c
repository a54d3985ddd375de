/* SPDX-License-Identifier: MIT */
/* tkbench: the core-level replay of a trace (replay.h, docs/replay.md): the
 * reference model, the virtual-time driver with its differential check, the
 * timed pass per operation, and synthetic traces. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params-internal.h"
#include "replay/replay.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* ---- the grid --------------------------------------------------------------------- */
static inline int64_t grid_floor(int64_t t, int64_t step) {
    int64_t q = t / step;
    if (t % step != 0 && t < 0)
        q--;
    return q * step;
}

/* The first grid point at or after w; INT64_MAX when it does not fit. */
static inline int64_t grid_ceil(int64_t w, int64_t step) {
    int64_t q = w / step;
    if (w % step != 0 && w > 0)
        q++;
    if (q > INT64_MAX / step)
        return INT64_MAX;
    return q * step;
}

static const char *timer_name(const tkt_trace *t, uint32_t i) {
    if (t->timers != NULL && i < t->ntimers && t->timers[i].id != NULL && t->timers[i].id[0])
        return t->timers[i].id;
    return "unnamed";
}

/* ---- the reference model ---------------------------------------------------------------
 * A binary min-heap of (deadline, timer, generation) with lazy deletion: a
 * modify or cancel bumps the timer's generation, and entries of an older one
 * are dropped when they reach the top. Deliberately nothing like the engines. */
typedef struct ref_entry {
    int64_t d;
    uint32_t timer, gen;
} ref_entry;

typedef struct ref_heap {
    ref_entry *a;
    size_t n, cap;
} ref_heap;

static bool rh_push(ref_heap *h, ref_entry e) {
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 1024;
        ref_entry *na = realloc(h->a, nc * sizeof *na);
        if (na == NULL)
            return false;
        h->a = na;
        h->cap = nc;
    }
    size_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2].d > e.d) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = e;
    return true;
}

static void rh_pop(ref_heap *h) {
    ref_entry e = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1].d < h->a[c].d)
            c++;
        if (h->a[c].d >= e.d)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n > 0)
        h->a[i] = e;
}

typedef struct ref_state {
    tkb_replay_ref *ref;
    ref_heap heap;
    uint32_t *gen;
    uint8_t *armed;
    size_t armed_count;
    size_t cap_batches, cap_timers;
    int64_t floor_g; /* the last grid point passed */
} ref_state;

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static bool grow(void **p, size_t *cap, size_t need, size_t sz) {
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * sz);
    if (np == NULL)
        return false;
    *p = np;
    *cap = nc;
    return true;
}

static inline bool ref_live(const ref_state *s, const ref_entry *e) {
    return s->armed[e->timer] && s->gen[e->timer] == e->gen;
}

/* Expires every grid point up to `limit`. */
static bool ref_pass(ref_state *s, int64_t limit) {
    tkb_replay_ref *r = s->ref;
    ref_heap *h = &s->heap;
    for (;;) {
        while (h->n > 0 && !ref_live(s, &h->a[0]))
            rh_pop(h);
        if (h->n == 0)
            return true;
        int64_t g = grid_ceil(h->a[0].d, r->step_ns);
        if (g < s->floor_g)
            g = s->floor_g;
        if (g > limit)
            return true;
        size_t begin = r->expired;
        while (h->n > 0 && (h->a[0].d <= g || !ref_live(s, &h->a[0]))) {
            ref_entry e = h->a[0];
            rh_pop(h);
            if (!ref_live(s, &e))
                continue;
            if (!grow((void **)&r->timers, &s->cap_timers, r->expired + 1, sizeof *r->timers))
                return false;
            r->timers[r->expired++] = e.timer;
            s->armed[e.timer] = 0;
            s->armed_count--;
        }
        if (!grow((void **)&r->batch_t, &s->cap_batches, r->nbatches + 2, sizeof *r->batch_t))
            return false;
        size_t cap_off = s->cap_batches; /* batch_off grows with batch_t */
        size_t *no = realloc(r->batch_off, cap_off * sizeof *no);
        if (no == NULL)
            return false;
        r->batch_off = no;
        /* a second expiry at the grid point of the last one (a timer armed
         * already due, after it) joins that batch: one set per grid point */
        if (r->nbatches > 0 && r->batch_t[r->nbatches - 1] == g)
            begin = r->batch_off[--r->nbatches];
        size_t k = r->expired - begin;
        qsort(r->timers + begin, k, sizeof *r->timers, cmp_u32);
        r->batch_t[r->nbatches] = g;
        r->batch_off[r->nbatches] = begin;
        r->nbatches++;
        r->batch_off[r->nbatches] = r->expired;
        if (k > r->max_batch)
            r->max_batch = k;
        s->floor_g = g; /* expiry happened at g: the model's time is there now */
    }
}

void tkb_replay_ref_free(tkb_replay_ref *ref) {
    if (ref == NULL)
        return;
    free(ref->batch_t);
    free(ref->batch_off);
    free(ref->timers);
    memset(ref, 0, sizeof *ref);
}

int tkb_replay_ref_build(const tkt_trace *t, int64_t step_ns, tkb_replay_ref *ref, char *err,
                         size_t err_len) {
    if (ref == NULL)
        return -1;
    memset(ref, 0, sizeof *ref);
    if (t == NULL || (t->count > 0 && t->ev == NULL) || step_ns <= 0) {
        snprintf(err, err_len, "replay: no trace, or a step <= 0");
        return -1;
    }
    ref->step_ns = step_ns;
    ref_state s = {.ref = ref};
    s.gen = calloc(t->ntimers ? t->ntimers : 1, sizeof *s.gen);
    s.armed = calloc(t->ntimers ? t->ntimers : 1, 1);
    ref->batch_off = calloc(1, sizeof *ref->batch_off);
    bool ok = s.gen != NULL && s.armed != NULL && ref->batch_off != NULL;
    int64_t last_t = 0;
    for (size_t i = 0; ok && i < t->count; i++) {
        const tkt_event *e = &t->ev[i];
        bool bad = e->op > TKT_EXPIRE || e->t_ns < last_t ||
                   (e->op != TKT_EXPIRE && e->timer >= t->ntimers);
        last_t = e->t_ns > last_t ? e->t_ns : last_t;
        if (!bad && e->op == TKT_EXPIRE)
            continue;
        if (bad) {
            snprintf(err, err_len,
                     "trace %s: event %zu: bad timer index or operation, or a time before the "
                     "event before it",
                     t->name, i);
            tkb_replay_ref_free(ref);
            free(s.gen);
            free(s.armed);
            free(s.heap.a);
            return -1;
        }
        int64_t limit = grid_floor(e->t_ns, step_ns);
        if (!ref_pass(&s, limit)) {
            ok = false;
            break;
        }
        if (limit > s.floor_g)
            s.floor_g = limit;
        ref->events++;
        uint32_t k = e->timer;
        if (e->op == TKT_START) {
            if (s.armed[k]) {
                ref->modifies++;
            } else {
                ref->starts++;
                s.armed[k] = 1;
                s.armed_count++;
            }
            s.gen[k]++;
            ok = rh_push(&s.heap, (ref_entry){e->deadline_ns, k, s.gen[k]});
            if (s.armed_count > ref->peak)
                ref->peak = s.armed_count;
        } else if (s.armed[k]) {
            ref->cancels++;
            s.armed[k] = 0;
            s.armed_count--;
            s.gen[k]++;
        } else {
            ref->cancels_unarmed++;
        }
    }
    ok = ok && ref_pass(&s, INT64_MAX);
    free(s.gen);
    free(s.armed);
    free(s.heap.a);
    if (!ok) {
        tkb_replay_ref_free(ref);
        snprintf(err, err_len, "trace %s: out of memory for the reference model", t->name);
        return -1;
    }
    return 0;
}

/* ---- the per-operation clock ---------------------------------------------------------- */
static inline uint64_t op_ticks(void) {
#if defined(__x86_64__)
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    return (uint64_t)tkb_now_ns();
#endif
}

void tkb_opclock_calibrate(tkb_opclock *c) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 2000; i++) {
        uint64_t a = op_ticks(), b = op_ticks();
        if (b - a < best)
            best = b - a;
    }
    c->overhead_ticks = best;
#if defined(__x86_64__)
    int64_t n0 = tkb_now_ns();
    uint64_t t0 = op_ticks();
    while (tkb_now_ns() - n0 < 5 * TKB_NS_PER_MS)
        ;
    int64_t n1 = tkb_now_ns();
    uint64_t t1 = op_ticks();
    c->ns_per_tick = t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 1.0;
#else
    c->ns_per_tick = 1.0;
#endif
}

/* ---- the driver ------------------------------------------------------------------------ */
typedef struct drv {
    const tkb_core_peer_ops *ops;
    void *self;
    char *timers; /* ntimers x timer_size */
    size_t tsize;
    uint8_t *armed;
    /* what the peer handed out, in order: (virtual time, timer) */
    int64_t *rec_t;
    uint32_t *rec_timer;
    size_t nrec, cap;
    bool overflow;
    int64_t cur_g;
    int64_t floor_g, last_g;
    int64_t passed;   /* the limit of the last expiry pass (INT64_MIN: none yet) */
    bool due_pending; /* a start since that pass is due at or before it */
    int64_t step;
    /* timed pass */
    bool timed;
    tkb_opclock clk;
    uint64_t t_start, t_modify, t_cancel, t_expire; /* ticks */
    uint64_t n_start, n_modify, n_cancel, n_expired;
    int failed; /* an op failed: -1 */
    const char *stuck;
} drv;

static void on_fired(void *ctx, char *timer) {
    drv *d = ctx;
    size_t i = (size_t)(timer - d->timers) / d->tsize;
    d->armed[i] = 0;
    if (d->nrec == d->cap) {
        d->overflow = true;
        return;
    }
    d->rec_t[d->nrec] = d->cur_g;
    d->rec_timer[d->nrec++] = (uint32_t)i;
}

static inline uint64_t lap(drv *d, uint64_t t0) {
    uint64_t dt = op_ticks() - t0;
    return dt > d->clk.overhead_ticks ? dt - d->clk.overhead_ticks : 0;
}

/* Expires every grid point up to `limit`, in the peer. Returns false if the
 * peer's next_one() does not progress. */
static bool drv_pass(drv *d, int64_t limit) {
    const tkb_core_peer_ops *ops = d->ops;
    int64_t w;
    uint64_t t0 = d->timed ? op_ticks() : 0;
    bool have = ops->next_one(d->self, &w);
    while (have) {
        int64_t g = grid_ceil(w, d->step);
        if (g < d->floor_g)
            g = d->floor_g;
        if (g < d->last_g)
            g = d->last_g;
        if (g > limit)
            break;
        d->cur_g = g;
        size_t k = ops->expire_at(d->self, g, on_fired, d);
        d->last_g = g;
        int64_t w2;
        have = ops->next_one(d->self, &w2);
        if (k == 0 && have && w2 <= w) {
            d->stuck = "next_one() does not move past an expiry that handed out nothing";
            return false;
        }
        w = w2;
    }
    if (d->timed)
        d->t_expire += lap(d, t0);
    return true;
}

/* One pass over the trace. */
static int drv_run(drv *d, const tkt_trace *t) {
    const tkb_core_peer_ops *ops = d->ops;
    for (size_t i = 0; i < t->count; i++) {
        const tkt_event *e = &t->ev[i];
        if (e->op == TKT_EXPIRE)
            continue;
        int64_t limit = grid_floor(e->t_ns, d->step);
        /* an expiry pass only when something can be due that was not at the last one:
           time reached a later grid point, or a start since then was due at once (its
           grid point is at or before the last limit). Otherwise the pass would find
           nothing, and asking "anything due?" before every event is not what a timer
           thread does: it wakes at a tick or at the next deadline. */
        if (limit > d->passed || d->due_pending) {
            if (!drv_pass(d, limit))
                return -1;
            if (limit > d->passed)
                d->passed = limit;
            d->due_pending = false;
        }
        if (limit > d->floor_g)
            d->floor_g = limit;
        uint32_t k = e->timer;
        char *tm = d->timers + (size_t)k * d->tsize;
        if (e->op == TKT_START) {
            if (grid_ceil(e->deadline_ns, d->step) <= d->passed)
                d->due_pending = true;
            if (d->armed[k]) {
                uint64_t t0 = d->timed ? op_ticks() : 0;
                d->failed |= ops->stop_one(d->self, tm);
                d->failed |= ops->start_one(d->self, tm, e->deadline_ns);
                if (d->timed) {
                    d->t_modify += lap(d, t0);
                    d->n_modify++;
                }
            } else {
                uint64_t t0 = d->timed ? op_ticks() : 0;
                d->failed |= ops->start_one(d->self, tm, e->deadline_ns);
                if (d->timed) {
                    d->t_start += lap(d, t0);
                    d->n_start++;
                }
                d->armed[k] = 1;
            }
        } else if (d->armed[k]) {
            uint64_t t0 = d->timed ? op_ticks() : 0;
            d->failed |= ops->stop_one(d->self, tm);
            if (d->timed) {
                d->t_cancel += lap(d, t0);
                d->n_cancel++;
            }
            d->armed[k] = 0;
        }
    }
    return drv_pass(d, INT64_MAX) ? 0 : -1;
}

static int drv_open(drv *d, const tkt_trace *t, const tkb_replay_ref *ref, const tkb_peer *p) {
    memset(d, 0, sizeof *d);
    d->ops = p->core;
    d->tsize = d->ops->timer_size;
    d->step = ref->step_ns;
    d->passed = INT64_MIN;
    size_t nt = t->ntimers ? t->ntimers : 1;
    d->timers = calloc(nt, d->tsize); /* calloc: a zeroed node is one never inserted */
    d->armed = calloc(nt, 1);
    d->cap = (size_t)ref->expired + 1;
    d->rec_t = malloc(d->cap * sizeof *d->rec_t);
    d->rec_timer = malloc(d->cap * sizeof *d->rec_timer);
    if (d->timers == NULL || d->armed == NULL || d->rec_t == NULL || d->rec_timer == NULL ||
        d->ops->create(p, ref->peak, &d->self) != 0) {
        d->self = NULL;
        return -1;
    }
    /* touch what the timed loop writes, so no first-touch fault lands in it */
    memset(d->rec_t, 0, d->cap * sizeof *d->rec_t);
    memset(d->rec_timer, 0, d->cap * sizeof *d->rec_timer);
    return 0;
}

static void drv_close(drv *d) {
    if (d->self != NULL)
        d->ops->destroy(d->self);
    free(d->timers);
    free(d->armed);
    free(d->rec_t);
    free(d->rec_timer);
    memset(d, 0, sizeof *d);
}

/* Compares what the peer handed out with the reference, as a set per grid
 * point (sorts each of the peer's batches in place). Returns 0 or 1 (err
 * names the first difference). */
static int drv_check(drv *d, const tkt_trace *t, const tkb_replay_ref *ref, const tkb_peer *p,
                     char *err, size_t err_len) {
    size_t i = 0; /* position in the peer's records */
    for (size_t b = 0; b <= ref->nbatches; b++) {
        size_t j = i;
        while (j < d->nrec && d->rec_t[j] == d->rec_t[i])
            j++;
        bool ref_has = b < ref->nbatches, peer_has = i < d->nrec;
        if (!ref_has && !peer_has)
            return 0;
        int64_t gr = ref_has ? ref->batch_t[b] : INT64_MAX;
        int64_t gp = peer_has ? d->rec_t[i] : INT64_MAX;
        if (gp < gr) {
            snprintf(err, err_len,
                     "trace %s: peer %s differs from the reference at virtual time %" PRId64
                     " ns: it expired timer %" PRIu32 " (%s), the reference expires nothing "
                     "then",
                     t->name, p->spec, gp, d->rec_timer[i], timer_name(t, d->rec_timer[i]));
            return 1;
        }
        const uint32_t *want = ref_has ? ref->timers + ref->batch_off[b] : NULL;
        size_t nwant = ref_has ? ref->batch_off[b + 1] - ref->batch_off[b] : 0;
        if (gr < gp) {
            snprintf(err, err_len,
                     "trace %s: peer %s differs from the reference at virtual time %" PRId64
                     " ns: it did not expire timer %" PRIu32 " (%s) then (nor anything else)",
                     t->name, p->spec, gr, want[0], timer_name(t, want[0]));
            return 1;
        }
        qsort(d->rec_timer + i, j - i, sizeof *d->rec_timer, cmp_u32);
        const uint32_t *got = d->rec_timer + i;
        size_t ngot = j - i, a = 0, c = 0;
        while (a < nwant || c < ngot) {
            if (a < nwant && c < ngot && want[a] == got[c]) {
                a++;
                c++;
                continue;
            }
            bool missing = c >= ngot || (a < nwant && want[a] < got[c]);
            uint32_t tm = missing ? want[a] : got[c];
            snprintf(err, err_len,
                     "trace %s: peer %s differs from the reference at virtual time %" PRId64
                     " ns: timer %" PRIu32 " (%s) %s",
                     t->name, p->spec, gr, tm, timer_name(t, tm),
                     missing ? "should expire then and did not"
                             : "expired then and should not (or not twice)");
            return 1;
        }
        i = j;
    }
    return 0;
}

bool tkb_replay_core_fits(const tkb_peer *p, int64_t step_ns, char *err, size_t err_len) {
    if (p == NULL || step_ns <= 0) {
        snprintf(err, err_len, "replay: no peer, or a step <= 0");
        return false;
    }
    const tkb_core_peer_ops *ops = p->core;
    if (ops == NULL || ops->start_one == NULL || ops->expire_at == NULL) {
        snprintf(err, err_len, "%s has no core-level replay%s", p->spec,
                 ops != NULL ? " (no faithful partial expiry in virtual time, docs/replay.md)"
                             : " (no core level)");
        return false;
    }
    if (p->slack_ns > 0) { /* the reference model hands each timer out at its deadline */
        snprintf(err, err_len,
                 "%s has no core-level replay (a slack lets the core hand a timer out later "
                 "than the reference model does)",
                 p->spec);
        return false;
    }
    void *self = NULL;
    if (ops->create(p, 16, &self) != 0) {
        snprintf(err, err_len, "%s: cannot create its core", p->spec);
        return false;
    }
    static const int64_t mult[] = {1, 2, 3, 7, 64, 1000, 4096, 1000003};
    bool ok = true;
    int64_t bad = 0, due = 0;
    for (size_t i = 0; ok && i < TKB_COUNT(mult); i++) {
        if (mult[i] > INT64_MAX / step_ns)
            break;
        bad = mult[i] * step_ns;
        due = ops->due_one(self, bad);
        ok = due == bad;
    }
    ops->destroy(self);
    if (!ok) {
        char st[32], a[32], b[32];
        tk__duration_text(step_ns, st, sizeof st);
        tk__duration_text(bad, a, sizeof a);
        tk__duration_text(due, b, sizeof b);
        snprintf(err, err_len,
                 "peer %s is not on the replay's grid of step %s: it hands out a timer due at "
                 "%s only at %s (its tick must divide the step: choose --step as a multiple of "
                 "its tick, or leave the peer out)",
                 p->spec, st, a, b);
    }
    return ok;
}

int tkb_replay_core(const tkt_trace *t, const tkb_replay_ref *ref, const tkb_peer *p,
                    const tkb_replay_core_opts *o, tkb_replay_core_result *r, char *err,
                    size_t err_len) {
    if (r == NULL)
        return -1;
    memset(r, 0, sizeof *r);
    r->start_ns = r->modify_ns = r->cancel_ns = r->expire_ns = NAN;
    if (t == NULL || ref == NULL || p == NULL || ref->step_ns <= 0 ||
        (t->count > 0 && t->ev == NULL)) {
        snprintf(err, err_len, "replay: no trace, reference or peer");
        return -1;
    }
    if (!tkb_replay_core_fits(p, ref->step_ns, err, err_len))
        return -1;
    drv d;
    /* first pass: the whole replay timed once, then the check */
    if (drv_open(&d, t, ref, p) != 0) {
        drv_close(&d);
        snprintf(err, err_len, "trace %s: peer %s: out of memory, or its core failed", t->name,
                 p->spec);
        return -1;
    }
    int64_t t0 = tkb_now_ns();
    int rc = drv_run(&d, t);
    int64_t t1 = tkb_now_ns();
    r->total_ns = t1 - t0;
    r->event_ns = ref->events ? (double)r->total_ns / (double)ref->events : 0;
    if (rc == 0 && o != NULL && o->perturb >= 0 && (size_t)o->perturb < d.nrec) {
        /* tests: move one expiry a step later, keeping the records in time order */
        size_t k = (size_t)o->perturb;
        int64_t g = d.rec_t[k] + d.step;
        uint32_t tm = d.rec_timer[k];
        while (k + 1 < d.nrec && d.rec_t[k + 1] <= g) {
            d.rec_t[k] = d.rec_t[k + 1];
            d.rec_timer[k] = d.rec_timer[k + 1];
            k++;
        }
        d.rec_t[k] = g;
        d.rec_timer[k] = tm;
    }
    /* a difference says more than a failed stop (of a timer the peer lost),
     * so the check comes first */
    if (rc != 0) {
        snprintf(err, err_len, "trace %s: peer %s: %s", t->name, p->spec,
                 d.stuck ? d.stuck : "the driver failed");
    } else if (d.overflow) {
        snprintf(err, err_len,
                 "trace %s: peer %s differs from the reference: it expired more timers than the "
                 "reference's %" PRIu64,
                 t->name, p->spec, ref->expired);
        rc = 1;
    } else {
        rc = drv_check(&d, t, ref, p, err, err_len);
        if (rc == 0 && d.failed != 0) {
            snprintf(err, err_len, "trace %s: peer %s: a start or stop failed", t->name, p->spec);
            rc = -1;
        }
    }
    drv_close(&d);
    if (rc != 0 || o == NULL || !o->timed_ops)
        return rc;

    /* second pass: each operation timed */
    if (drv_open(&d, t, ref, p) != 0) {
        drv_close(&d);
        snprintf(err, err_len, "trace %s: peer %s: out of memory, or its core failed", t->name,
                 p->spec);
        return -1;
    }
    d.timed = true;
    tkb_opclock_calibrate(&d.clk);
    rc = drv_run(&d, t);
    if (rc == 0 && (d.failed != 0 || d.overflow || d.nrec != ref->expired)) {
        snprintf(err, err_len, "trace %s: peer %s: its timed pass differs from its first one",
                 t->name, p->spec);
        rc = -1;
    }
    if (rc == 0) {
        double k = d.clk.ns_per_tick;
        if (d.n_start)
            r->start_ns = (double)d.t_start * k / (double)d.n_start;
        if (d.n_modify)
            r->modify_ns = (double)d.t_modify * k / (double)d.n_modify;
        if (d.n_cancel)
            r->cancel_ns = (double)d.t_cancel * k / (double)d.n_cancel;
        if (d.nrec)
            r->expire_ns = (double)d.t_expire * k / (double)d.nrec;
    }
    drv_close(&d);
    return rc;
}

/* ---- synthetic traces -------------------------------------------------------------------- */
int tkb_replay_synth(size_t events, size_t timers, uint64_t seed, tkt_trace *out) {
    memset(out, 0, sizeof *out);
    if (timers == 0)
        timers = events / 8 + 1;
    if (timers > UINT32_MAX)
        return -1;
    out->ev = malloc((events ? events : 1) * sizeof *out->ev);
    out->timers = calloc(timers, sizeof *out->timers);
    if (out->ev == NULL || out->timers == NULL) {
        tkb_replay_synth_free(out);
        return -1;
    }
    for (size_t i = 0; i < timers; i++)
        out->timers[i] = (tkt_timer_info){.id = "", .function = "", .cls = 0};
    out->ntimers = timers;
    tkb_rng r = {seed};
    int64_t t = 0;
    for (size_t i = 0; i < events; i++) {
        t += tkb_rng_range(&r, 1000, 1000000);
        uint32_t k = (uint32_t)(tkb_rng_next(&r) % timers);
        bool cancel = tkb_rng_next(&r) % 4 == 0;
        int64_t d = t + tkb_rng_range(&r, TKB_NS_PER_MS, 2 * TKB_NS_PER_S);
        if (tkb_rng_next(&r) % 64 == 0)
            d = t - tkb_rng_range(&r, 0, 3 * TKB_NS_PER_MS); /* already due */
        out->ev[i] = (tkt_event){.t_ns = t,
                                 .deadline_ns = cancel ? 0 : d,
                                 .timer = k,
                                 .op = (uint8_t)(cancel ? TKT_CANCEL : TKT_START)};
    }
    out->count = events;
    out->duration_ns = t;
    snprintf(out->name, sizeof out->name, "synth-%zu", events);
    snprintf(out->source, sizeof out->source, "tkbench synthetic trace, seed %" PRIu64, seed);
    return 0;
}

void tkb_replay_synth_free(tkt_trace *t) {
    if (t == NULL)
        return;
    free(t->ev);
    free(t->timers);
    memset(t, 0, sizeof *t);
}
