/* SPDX-License-Identifier: MIT */
/* tkbench advise: the advice itself (advise.h). docs/advisor.md has the
 * rules and the measurements that justify them.
 *
 * 1. The trace (any file tkt_load_any() reads, or synth:EVENTS[:TIMERS]) is
 *    summarised: events, rate, peak armed, delay percentiles, re-arms and
 *    cancels.
 * 2. Candidates are derived from it: the heap; for each tick of a small set
 *    (from the lateness need, else around 1 ms) the hashed wheel with slots
 *    covering the p99 delay and the hierarchical wheel with levels covering
 *    the longest delay.
 * 3. Each candidate is measured here: its cost by the core-level replay of
 *    this trace (tkb_replay_core, median of K repetitions) on a grid whose
 *    step is its tick (an exact engine: 1 us); its memory by an untimed pass
 *    of the trace through its core with a counting allocator. Its lateness
 *    comes from the results folder when that has a measurement of the same
 *    peer (replay_exec of this trace first, then the W3 latency workload), else from a
 *    model (one tick plus the machine's wake-up latency). Each figure says
 *    where it comes from.
 * 4. Candidates that miss a need are excluded (with the reason), the others
 *    ranked by the criterion; report.c says what to choose and what the
 *    alternatives trade. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advise.h"
#include "params-internal.h"
#include "timerkit/engine.h"
#include "timerkit/status.h"
#include "util.h"

/* The tick around which candidates are made when no lateness is needed. */
#define BASE_TICK_NS TKB_NS_PER_MS
/* Slots of the hashed wheel: a power of two between these. */
#define WHEEL_MIN_SLOTS 64u
#define WHEEL_MAX_SLOTS 65536u
/* Bits per level of the hierarchical wheel (its default). */
#define HWHEEL_BITS 6u

const char *const tkb_adv_src_tag[] = {
    [ADV_SRC_NONE] = "model>=",  [ADV_SRC_HERE] = "here",   [ADV_SRC_DIR_REPLAY] = "DIR:replay",
    [ADV_SRC_DIR_W3] = "DIR:W3", [ADV_SRC_MODEL] = "model", [ADV_SRC_MODEL_TICK] = "model>=",
};
const char *const tkb_adv_crit_name[3] = {"cost", "lateness", "memory"};

/* The largest 1, 2 or 5 times a power of ten that is <= ns (at least 1). */
static int64_t nice_floor(int64_t ns) {
    int64_t p = 1, best = 1;
    while (p <= ns) {
        static const int64_t m[] = {1, 2, 5};
        for (size_t i = 0; i < 3; i++)
            if (m[i] * p <= ns)
                best = m[i] * p;
        if (p > INT64_MAX / 10)
            break;
        p *= 10;
    }
    return best;
}

static size_t pow2_at_least(double x, size_t lo, size_t hi) {
    size_t s = lo;
    while (s < hi && (double)s < x)
        s *= 2;
    return s;
}

/* ---- the trace ---------------------------------------------------------------- */

static int shape_of(const tkt_trace *t, adv_shape *s) {
    memset(s, 0, sizeof *s);
    int64_t *d = malloc((t->count ? t->count : 1) * sizeof *d);
    if (d == NULL)
        return -1;
    size_t nd = 0;
    for (size_t i = 0; i < t->count; i++) {
        const tkt_event *e = &t->ev[i];
        if (e->op == TKT_START) {
            s->starts++;
            int64_t x = e->deadline_ns - e->t_ns;
            d[nd++] = x > 0 ? x : 0;
        } else if (e->op == TKT_CANCEL) {
            s->cancels++;
        } else {
            s->expires++;
        }
    }
    qsort(d, nd, sizeof *d, tkb_cmp_i64);
    if (nd > 0) {
        s->delay_p50 = d[(nd - 1) / 2];
        s->delay_p99 = d[(size_t)((double)(nd - 1) * 0.99)];
        s->delay_max = d[nd - 1];
    }
    free(d);
    double secs = (double)t->duration_ns / 1e9;
    s->rate = secs > 0 ? (double)(s->starts + s->cancels) / secs : NAN;
    return 0;
}

/* References of the trace, one per grid step, built when first needed. */
/* The trace's reference at grid step `step`, built when first needed. */
static const tkb_replay_ref *ref_at(tkb_advice *a, int64_t step, char *err, size_t err_len) {
    for (size_t i = 0; i < a->nrefs; i++)
        if (a->refs[i].step_ns == step)
            return &a->refs[i];
    if (a->nrefs == TKB_COUNT(a->refs)) {
        snprintf(err, err_len, "too many grid steps");
        return NULL;
    }
    if (tkb_replay_ref_build(a->t, step, &a->refs[a->nrefs], err, err_len) != 0)
        return NULL;
    return &a->refs[a->nrefs++];
}

/* ---- measuring one candidate ---------------------------------------------------- */

typedef struct counting {
    size_t cur, peak;
} counting;

static void *count_alloc(void *ctx, size_t size) {
    counting *c = ctx;
    void *p = malloc(size);
    if (p != NULL) {
        c->cur += size;
        if (c->cur > c->peak)
            c->peak = c->cur;
    }
    return p;
}

static void count_free(void *ctx, void *ptr, size_t size) {
    counting *c = ctx;
    c->cur -= size;
    free(ptr);
}

/* The core's tick: due(1) of a fresh core with origin 0 (1 for an exact
 * core). Returns it, or -1 (message in err). */
static int64_t core_tick(const tkb_peer *p, char *err, size_t err_len) {
    const tk_core_ops *core = p->engine->core;
    tk_queue_config qc = p->qc;
    if ((qc.engine == NULL && tk_queue_config_init_for(&qc, p->engine) != TK_OK) ||
        tk_queue_config_check(p->engine, &qc, err, err_len) != TK_OK)
        return -1;
    void *st = calloc(1, core->size ? core->size : 1);
    if (st == NULL ||
        core->init(st, tk__queue_config_params(&qc), tk_allocator_default(), 0) != TK_OK) {
        free(st);
        snprintf(err, err_len, "%s: cannot create its core", p->spec);
        return -1;
    }
    int64_t tick = core->due(st, 1);
    core->destroy(st);
    free(st);
    return tick;
}

/* Runs the trace through c's engine core, untimed, with a counting allocator:
 * the core's state size, the peak of what it allocates and the peak of nodes
 * armed. Expiry happens on the
 * grid of c->step_ns before each event, as in the replay. Returns 0 or -1
 * (message in err). */
static int measure_memory(const tkt_trace *t, adv_cand *c, char *err, size_t err_len) {
    const tk_queue_ops *engine = c->peer.engine;
    if (engine == NULL || engine->core == NULL) {
        snprintf(err, err_len, "%s has no engine core", c->peer.spec);
        return -1;
    }
    const tk_core_ops *core = engine->core;
    tk_queue_config qc = c->peer.qc;
    if ((qc.engine == NULL && tk_queue_config_init_for(&qc, engine) != TK_OK) ||
        tk_queue_config_check(engine, &qc, err, err_len) != TK_OK)
        return -1;
    counting cnt = {0, 0};
    tk_allocator a = {.alloc = count_alloc, .free = count_free, .ctx = &cnt};
    void *st = calloc(1, core->size ? core->size : 1);
    tk_node *nodes = calloc(t->ntimers ? t->ntimers : 1, sizeof *nodes);
    if (st == NULL || nodes == NULL ||
        core->init(st, tk__queue_config_params(&qc), &a, 0) != TK_OK) {
        free(st);
        free(nodes);
        snprintf(err, err_len, "%s: cannot create its core", c->peer.spec);
        return -1;
    }
    uint64_t seq = 0;
    int64_t now = 0;
    size_t peak = 0;
    int rc = 0;
    for (size_t i = 0; i < t->count && rc == 0; i++) {
        const tkt_event *e = &t->ev[i];
        if (e->op == TKT_EXPIRE)
            continue;
        int64_t g = e->t_ns / c->step_ns * c->step_ns;
        if (g > now)
            now = g;
        int64_t when;
        size_t count;
        while (core->next(st, &when) == TK_OK && when <= now) {
            (void)core->expire(st, now, SIZE_MAX, &count);
            if (count == 0)
                break;
        }
        tk_node *n = &nodes[e->timer];
        (void)core->remove(st, n); /* a modify or a cancel; TK_ENOENT if not armed */
        if (e->op == TKT_START) {
            n->deadline_ns = e->deadline_ns;
            n->seq = seq++;
            if (core->insert(st, n) != TK_OK) {
                snprintf(err, err_len, "%s: an insert failed", c->peer.spec);
                rc = -1;
            }
        }
        size_t armed = core->count(st);
        if (armed > peak)
            peak = armed;
    }
    core->destroy(st);
    free(st);
    free(nodes);
    c->state_bytes = core->size;
    c->alloc_peak = cnt.peak;
    c->peak_armed = peak;
    c->mem_bytes = (double)(core->size + cnt.peak + peak * sizeof(tk_node));
    return rc;
}

/* Medians of K repetitions, with the range of the per-event cost. A
 * repetition is one replay that also times each operation (its second pass
 * gives the per-op figures), then replays timed whole until REP_MIN_NS have
 * passed: the per-event cost of the repetition is their total over their
 * events, so that a short trace (a few thousand events: tens of
 * microseconds) is not measured from one clock interval. Returns 0, or
 * non-zero with a message in err. */
#define REP_MIN_NS (20 * INT64_C(1000000))
static int measure_cost(const tkt_trace *t, const tkb_replay_ref *ref, adv_cand *c, int reps,
                        char *err, size_t err_len) {
    double ev[1000], op[4][1000];
    size_t nop[4] = {0, 0, 0, 0};
    const tkb_replay_core_opts timed = {.timed_ops = true, .perturb = -1};
    const tkb_replay_core_opts whole = {.timed_ops = false, .perturb = -1};
    for (int k = 0; k < reps; k++) {
        tkb_replay_core_result r;
        int rc = tkb_replay_core(t, ref, &c->peer, &timed, &r, err, err_len);
        if (rc != 0)
            return rc;
        int64_t total = 0;
        double events = 0;
        do {
            tkb_replay_core_result w;
            rc = tkb_replay_core(t, ref, &c->peer, &whole, &w, err, err_len);
            if (rc != 0)
                return rc;
            total += w.total_ns;
            events += (double)ref->events;
        } while (total < REP_MIN_NS);
        ev[k] = (double)total / events;
        const double v[4] = {r.start_ns, r.modify_ns, r.cancel_ns, r.expire_ns};
        for (size_t j = 0; j < 4; j++)
            if (!isnan(v[j]))
                op[j][nop[j]++] = v[j];
    }
    qsort(ev, (size_t)reps, sizeof ev[0], tkb_cmp_double);
    c->event_min = ev[0];
    c->event_max = ev[reps - 1];
    c->event_ns = tkb_median(ev, (size_t)reps);
    c->start_ns = tkb_median(op[0], nop[0]);
    c->modify_ns = tkb_median(op[1], nop[1]);
    c->cancel_ns = tkb_median(op[2], nop[2]);
    c->expire_ns = tkb_median(op[3], nop[3]);
    return 0;
}

/* ---- candidates ------------------------------------------------------------------ */

static void cand_add(adv_cand *cs, size_t *n, const char *spec, const char *why) {
    if (*n >= ADV_MAX_CANDS)
        return;
    adv_cand *c = &cs[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->spec_in, sizeof c->spec_in, "%s", spec);
    snprintf(c->why, sizeof c->why, "%s", why);
    c->event_ns = c->event_min = c->event_max = NAN;
    c->start_ns = c->modify_ns = c->cancel_ns = c->expire_ns = NAN;
    c->late_ns = c->mem_bytes = c->cpu_pct = NAN;
}

/* The ticks considered: the base tick (the largest 1-2-5 value at or under
 * half the lateness need; 1 ms without one), a tenth of it, and 1 ms (so
 * that a need shows what it rules out), ascending, without repeats. */
static size_t ticks_for(const adv_needs *nd, int64_t *ticks) {
    int64_t base = nd->lateness_ns > 0
                       ? nice_floor(nd->lateness_ns / 2 > 0 ? nd->lateness_ns / 2 : 1)
                       : BASE_TICK_NS;
    int64_t want[ADV_MAX_TICKS] = {base / 10, base, BASE_TICK_NS};
    size_t n = 0;
    for (size_t i = 0; i < ADV_MAX_TICKS; i++) {
        bool dup = want[i] <= 0;
        for (size_t j = 0; j < n; j++)
            dup |= ticks[j] == want[i];
        if (!dup)
            ticks[n++] = want[i];
    }
    qsort(ticks, n, sizeof *ticks, tkb_cmp_i64);
    return n;
}

static size_t make_candidates(const adv_shape *s, const adv_needs *nd, adv_cand *cs) {
    size_t n = 0;
    char spec[TKB_SPEC_MAX], why[160], tk[32], d99[32], dmax[32];
    cand_add(cs, &n, "heap", "exact: fires each timer at its deadline");
    int64_t ticks[ADV_MAX_TICKS];
    size_t nt = ticks_for(nd, ticks);
    tkb_duration_text((double)s->delay_p99, d99, sizeof d99);
    tkb_duration_text((double)s->delay_max, dmax, sizeof dmax);
    for (size_t i = 0; i < nt; i++) {
        int64_t tick = ticks[i];
        tk__duration_text(tick, tk, sizeof tk);
        /* hashed wheel: one revolution covers the p99 delay */
        double span = (double)s->delay_p99 / (double)tick;
        size_t slots = pow2_at_least(span, WHEEL_MIN_SLOTS, WHEEL_MAX_SLOTS);
        snprintf(spec, sizeof spec, "wheel:tick=%s,slots=%zu", tk, slots);
        snprintf(why, sizeof why, "%zu slots x %s %s the p99 delay %s%s", slots, tk,
                 (double)slots >= span ? "cover" : "fall short of", d99,
                 (double)slots >= span ? "" : " (slots capped)");
        cand_add(cs, &n, spec, why);
        /* hierarchical wheel: tick x 2^(bits x levels) covers the longest delay */
        unsigned need_bits = 0;
        while (need_bits < 62 && ldexp(1.0, (int)need_bits) * (double)tick < (double)s->delay_max)
            need_bits++;
        unsigned levels = (need_bits + HWHEEL_BITS - 1) / HWHEEL_BITS;
        if (levels < 1)
            levels = 1;
        snprintf(spec, sizeof spec, "hwheel:tick=%s,bits=%u,levels=%u", tk, HWHEEL_BITS, levels);
        snprintf(why, sizeof why, "%s x 2^(%u x %u) covers the longest delay %s", tk, HWHEEL_BITS,
                 levels, dmax);
        cand_add(cs, &n, spec, why);
    }
    return n;
}

/* The lateness figure of c: the folder's measurement of the same peer, else
 * the model. wake_ns: the folder's floor nanosleep p99, or NAN. */
static void lateness_of(adv_cand *c, const adv_rows *d, const char *trace_name, double wake_ns) {
    if (d != NULL) {
        char w[96];
        snprintf(w, sizeof w, "%s:%s", tkb_wl_replay_exec.name, trace_name);
        double v = tkb_adv_rows_median(d, c->peer.spec, w, ADV_LATE_P99);
        if (isfinite(v)) {
            c->late_ns = v * 1e3;
            c->late_src = ADV_SRC_DIR_REPLAY;
            return;
        }
        v = tkb_adv_rows_median(d, c->peer.spec, tkb_wl_w3_latency.name, ADV_LATE_P99);
        if (isfinite(v)) {
            c->late_ns = v * 1e3;
            c->late_src = ADV_SRC_DIR_W3;
            return;
        }
    }
    double tick = c->ticked ? (double)c->tick_ns : 0;
    if (isfinite(wake_ns)) {
        c->late_ns = tick + wake_ns;
        c->late_src = ADV_SRC_MODEL;
    } else {
        c->late_ns = tick;
        c->late_src = c->ticked ? ADV_SRC_MODEL_TICK : ADV_SRC_NONE;
    }
}

double tkb_adv_crit_value(const adv_cand *c, adv_criterion k) {
    switch (k) {
    case ADV_CRIT_LATENESS:
        return c->late_src == ADV_SRC_NONE ? 0 : c->late_ns;
    case ADV_CRIT_MEMORY:
        return c->mem_bytes;
    case ADV_CRIT_COST:
    default:
        return c->event_ns;
    }
}

static int cmp_cand(const void *a, const void *b, void *ctx) {
    const adv_cand *x = a, *y = b;
    adv_criterion k = *(const adv_criterion *)ctx;
    bool ox = x->excluded[0] == '\0', oy = y->excluded[0] == '\0';
    if (ox != oy)
        return ox ? -1 : 1;
    double vx = tkb_adv_crit_value(x, k), vy = tkb_adv_crit_value(y, k);
    if (!isfinite(vx) || !isfinite(vy))
        return isfinite(vx) ? -1 : isfinite(vy) ? 1 : 0;
    if (vx != vy)
        return vx < vy ? -1 : 1;
    return tkb_cmp_double(&x->event_ns, &y->event_ns);
}

/* By cost, a difference of less than ADV_COST_TIE is no difference: of the
 * candidates that close to the cheapest, the one with the lowest lateness
 * (then memory) goes first. */
void tkb_adv_rank(tkb_advice *a) {
    adv_cand *cs = a->cs;
    size_t n = a->nc;
    adv_criterion k = a->crit;
    qsort_r(cs, n, sizeof *cs, cmp_cand, &k);
    if (k != ADV_CRIT_COST || n < 2 || cs[0].excluded[0] != '\0')
        return;
    size_t pick = 0;
    for (size_t i = 1; i < n && cs[i].excluded[0] == '\0'; i++) {
        if (!(cs[i].event_ns <= cs[0].event_ns * (1 + ADV_COST_TIE)))
            break;
        double li = tkb_adv_crit_value(&cs[i], ADV_CRIT_LATENESS),
               lp = tkb_adv_crit_value(&cs[pick], ADV_CRIT_LATENESS);
        if (li < lp || (li == lp && cs[i].mem_bytes < cs[pick].mem_bytes))
            pick = i;
    }
    if (pick != 0) { /* move it to the front, the others keep their order */
        adv_cand c = cs[pick];
        memmove(&cs[1], &cs[0], pick * sizeof *cs);
        cs[0] = c;
    }
}

/* ---- the advice ---------------------------------------------------------------------- */
int tkb_adv_start(tkb_advice *a) {
    char err[1024];
    if (shape_of(a->t, &a->shape) != 0) {
        fprintf(stderr, "tkbench: advise: out of memory\n");
        return 1;
    }
    a->exact = ref_at(a, ADV_EXACT_STEP_NS, err, sizeof err);
    if (a->exact == NULL) {
        fprintf(stderr, "tkbench: advise: %s\n", err);
        return 1;
    }
    if (a->exact->events == 0) {
        fprintf(stderr, "tkbench: advise: trace %s has no start or cancel to replay\n", a->t->name);
        return 2;
    }
    return 0;
}

void tkb_adv_print_trace(const tkb_advice *a) {
    const tkt_trace *t = a->t;
    const tkb_replay_ref *exact = a->exact;
    char dur[32], p50[32], p99[32], mx[32];
    tkb_duration_text((double)t->duration_ns, dur, sizeof dur);
    tkb_duration_text((double)a->shape.delay_p50, p50, sizeof p50);
    tkb_duration_text((double)a->shape.delay_p99, p99, sizeof p99);
    tkb_duration_text((double)a->shape.delay_max, mx, sizeof mx);
    uint64_t arms = exact->starts + exact->modifies;
    printf("trace %s: %" PRIu64 " events (starts and cancels) over %s, %.4g per second; %zu "
           "timers, at most %zu armed at once\n",
           t->name, exact->events, dur, a->shape.rate, t->ntimers, exact->peak);
    printf("  delay (deadline - start): p50 %s, p99 %s, max %s\n", p50, p99, mx);
    printf("  of %" PRIu64 " arms: %.1f%% re-arm an armed timer (modify), %.1f%% are "
           "cancelled, %.1f%% expire; %" PRIu64 " cancels of timers not armed\n",
           arms, arms ? 100.0 * (double)exact->modifies / (double)arms : 0.0,
           arms ? 100.0 * (double)exact->cancels / (double)arms : 0.0,
           arms ? 100.0 * (double)exact->expired / (double)arms : 0.0, exact->cancels_unarmed);
}

/* Why c misses one of the needs, into c->excluded (left "" when it meets them). */
static void apply_needs(adv_cand *c, const adv_needs *nd) {
    char a[32], b[32], lt[40];
    if (nd->lateness_ns > 0 && c->late_src != ADV_SRC_NONE &&
        c->late_ns > (double)nd->lateness_ns) {
        tkb_adv_late_text(lt, sizeof lt, c);
        tkb_duration_text((double)nd->lateness_ns, b, sizeof b);
        snprintf(c->excluded, sizeof c->excluded, "p99 lateness %s (%s) > need lateness=%s", lt,
                 tkb_adv_src_tag[c->late_src], b);
    } else if (nd->memory_bytes > 0 && c->mem_bytes > nd->memory_bytes) {
        tkb_adv_bytes_text(a, sizeof a, c->mem_bytes);
        tkb_adv_bytes_text(b, sizeof b, nd->memory_bytes);
        snprintf(c->excluded, sizeof c->excluded, "memory %s > need memory=%s", a, b);
    } else if (nd->cpu_pct > 0 && isfinite(c->cpu_pct) && c->cpu_pct > nd->cpu_pct) {
        snprintf(c->excluded, sizeof c->excluded, "cpu %.3g%% of a core > need cpu=%.3g%%",
                 c->cpu_pct, nd->cpu_pct);
    }
}

/* Sets why c is out of the running. */
static void exclude(adv_cand *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void exclude(adv_cand *c, const char *fmt, ...) {
    char why[sizeof c->excluded];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    memcpy(c->excluded, why, sizeof why);
}

/* Candidate i: its peer, tick and step, its memory, then its cost by core
 * replays, its lateness and the needs. What stops it is its `excluded`.
 * Returns 0, or 1 if its replay failed or differs from the reference. */
static int measure_one(tkb_advice *a, size_t i) {
    adv_cand *c = &a->cs[i];
    char err[1024];
    const tkb_replay_ref *ref = NULL;
    if (tkb_peer_parse(c->spec_in, &c->peer, err, sizeof err) != 0) {
        exclude(c, "not a valid peer here: %s", err);
        return 0;
    }
    if (c->peer.engine == NULL || c->peer.engine->core == NULL) {
        exclude(c, "%s has no engine core to replay", c->peer.spec);
        return 0;
    }
    c->ticked = (c->peer.engine->caps & TK_QUEUE_CAP_TICKED) != 0;
    /* the step: the core's own tick, or ADV_EXACT_STEP_NS for an exact core */
    c->tick_ns = core_tick(&c->peer, err, sizeof err);
    if (c->tick_ns >= 1)
        c->step_ns = c->ticked && c->tick_ns > 1 ? c->tick_ns : ADV_EXACT_STEP_NS;
    if (c->tick_ns < 1 || measure_memory(a->t, c, err, sizeof err) != 0 ||
        !tkb_replay_core_fits(&c->peer, c->step_ns, err, sizeof err) ||
        (ref = ref_at(a, c->step_ns, err, sizeof err)) == NULL) {
        exclude(c, "%s", err);
        return 0;
    }
    char st[32];
    tk__duration_text(c->step_ns, st, sizeof st);
    fprintf(stderr, "tkbench: advise: [%zu/%zu] %s (%s), step %s: %d core replays ...\n", i + 1,
            a->nc, c->peer.spec, c->why, st, a->reps);
    int rc = measure_cost(a->t, ref, c, a->reps, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "tkbench: advise: %s: replay %s: %s\n", c->peer.spec,
                rc > 0 ? "MISMATCH" : "failed", err);
        exclude(c, "its replay %s (see stderr)", rc > 0 ? "differs from the reference" : "failed");
        return 1;
    }
    c->valid = true;
    lateness_of(c, a->dir != NULL ? &a->rows : NULL, a->t->name, a->wake_ns);
    if (isfinite(a->shape.rate))
        c->cpu_pct = c->event_ns * a->shape.rate / 1e9 * 100.0;
    apply_needs(c, &a->needs);
    return 0;
}

int tkb_adv_measure(tkb_advice *a) {
    int status = 0;
    a->nc = make_candidates(&a->shape, &a->needs, a->cs);
    for (size_t i = 0; i < a->nc; i++)
        status |= measure_one(a, i);
    for (size_t i = 0; i < a->nc; i++) /* candidates that could not be measured at all */
        if (!a->cs[i].valid && a->cs[i].excluded[0] == '\0')
            snprintf(a->cs[i].excluded, sizeof a->cs[i].excluded, "not measured");
    return status;
}

void tkb_adv_free(tkb_advice *a) {
    for (size_t i = 0; i < a->nrefs; i++)
        tkb_replay_ref_free(&a->refs[i]);
    a->nrefs = 0;
    free(a->rows.v);
    a->rows = (adv_rows){NULL, 0, 0};
}
