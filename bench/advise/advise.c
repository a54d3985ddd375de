/* SPDX-License-Identifier: MIT */
/* tkbench advise: recommends an engine and its parameters for a recorded
 * trace, and shows the figures behind the advice (docs/advisor.md has the
 * rules and the measurements that justify them).
 *
 *   tkbench advise TRACE [--results DIR] [--need lateness=DUR] [--need memory=SIZE]
 *                  [--need cpu=PCT] [--criterion cost|lateness|memory] [--reps K] [--hz N]
 *
 * (its options: advise_opts below, parsed by cmdline.c; options and the
 * trace may come in any order)
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
 *    ranked by the criterion, and a paragraph says what to choose and what
 *    the alternatives trade. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "advise/advise.h"
#include "cli/cmdline.h"
#include "output/output.h"
#include "params-internal.h"
#include "replay/replay.h"
#include "timerkit/engine.h"
#include "timerkit/status.h"
#include "util.h"

/* The workloads whose rows advise reads from a results folder: their names
 * come from their descriptors (bench/workloads/). */
extern const tkb_workload tkb_wl_w3_latency, tkb_wl_replay_exec, tkb_wl_floor;
#define LATE_P99 "late_p99_us"           /* the W3 latency workload's and replay_exec's p99 */
#define WAKE_P99 "nanosleep_late_p99_us" /* the floor's sleep lateness p99 */

/* The grid step of an exact engine's replay: its executor wakes for each
 * deadline, so its expiry batches are those of a fine grid. */
#define EXACT_STEP_NS INT64_C(1000)
/* The tick around which candidates are made when no lateness is needed. */
#define BASE_TICK_NS TKB_NS_PER_MS
/* Slots of the hashed wheel: a power of two between these. */
#define WHEEL_MIN_SLOTS 64u
#define WHEEL_MAX_SLOTS 65536u
/* Bits per level of the hierarchical wheel (its default). */
#define HWHEEL_BITS 6u
#define DEFAULT_REPS 5
#define MAX_TICKS 3
#define MAX_CANDS (1 + 2 * MAX_TICKS)

/* Where a figure comes from. */
typedef enum src {
    SRC_NONE,       /* not known */
    SRC_HERE,       /* measured by this command on this trace */
    SRC_DIR_REPLAY, /* the results folder: replay_exec of this trace, same peer */
    SRC_DIR_W3,     /* the results folder: the W3 latency workload, same peer */
    SRC_MODEL,      /* modelled from the tick and the folder's floor (nanosleep p99) */
    SRC_MODEL_TICK, /* modelled from the tick alone: wake-up latency unknown */
} src;

static const char *const src_tag[] = {
    [SRC_NONE] = "model>=",  [SRC_HERE] = "here",   [SRC_DIR_REPLAY] = "DIR:replay",
    [SRC_DIR_W3] = "DIR:W3", [SRC_MODEL] = "model", [SRC_MODEL_TICK] = "model>=",
};

typedef enum criterion { CRIT_COST, CRIT_LATENESS, CRIT_MEMORY } criterion;
static const char *const crit_name[] = {"cost", "lateness", "memory"};

typedef struct needs {
    int64_t lateness_ns; /* 0: none */
    double memory_bytes; /* 0: none */
    double cpu_pct;      /* 0: none */
} needs;

typedef struct cand {
    char spec_in[TKB_SPEC_MAX];
    char why[160]; /* how its parameters were chosen */
    tkb_peer peer;
    bool valid;  /* the spec parsed and replays */
    bool ticked; /* TK_QUEUE_CAP_TICKED */
    int64_t tick_ns;
    int64_t step_ns;
    char excluded[320]; /* "" or why it is out */
    /* cost, measured here (ns): first pass per event, second pass per op */
    double event_ns, event_min, event_max;
    double start_ns, modify_ns, cancel_ns, expire_ns;
    /* lateness p99 (ns) */
    double late_ns;
    src late_src;
    /* memory, measured here: core state + peak allocated + peak armed nodes */
    size_t state_bytes, alloc_peak, peak_armed;
    double mem_bytes;
    double cpu_pct; /* event_ns x events per second of the trace, share of one core */
} cand;

/* ---- small helpers ------------------------------------------------------------ */

static void fmt_bytes(char *b, size_t len, double v) {
    if (!isfinite(v) || v <= 0)
        snprintf(b, len, "?");
    else if (v >= 1024.0 * 1024 * 1024)
        snprintf(b, len, "%.3g GiB", v / (1024.0 * 1024 * 1024));
    else if (v >= 1024.0 * 1024)
        snprintf(b, len, "%.3g MiB", v / (1024.0 * 1024));
    else if (v >= 1024.0)
        snprintf(b, len, "%.3g KiB", v / 1024.0);
    else
        snprintf(b, len, "%.0f B", v);
}

/* A table cell of ns: one decimal, "-" when not measured. */
static void cell_ns(char *b, size_t len, double v) {
    if (isfinite(v))
        snprintf(b, len, "%.1f", v);
    else
        snprintf(b, len, "-");
}

/* "64MiB", "1.5GB", "4096": bytes. K, M, G and KiB, MiB, GiB are binary; KB,
 * MB, GB decimal; B or nothing: bytes. Returns 0 or -1. */
static int parse_size(const char *s, double *out) {
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"", 1},        {"B", 1},         {"K", 1024}, {"KiB", 1024},     {"KB", 1e3},
        {"M", 1048576}, {"MiB", 1048576}, {"MB", 1e6}, {"G", 1073741824}, {"GiB", 1073741824},
        {"GB", 1e9}};
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || !(v > 0) || !isfinite(v))
        return -1;
    for (size_t i = 0; i < TKB_COUNT(units); i++)
        if (strcmp(end, units[i].suffix) == 0) {
            *out = v * units[i].mult;
            return *out >= 1 && *out <= 1e15 ? 0 : -1;
        }
    return -1;
}

/* "5", "5%", "0.5": percent of one core, in (0, 10000]. */
static int parse_pct(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || (*end != '\0' && strcmp(end, "%") != 0) || !(v > 0) || v > 1e4)
        return -1;
    *out = v;
    return 0;
}

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

typedef struct shape {
    uint64_t starts, cancels, expires;       /* events of each kind in the trace */
    int64_t delay_p50, delay_p99, delay_max; /* deadline - start time, clamped at 0 */
    double rate;                             /* START and CANCEL events per second */
} shape;

static int shape_of(const tkt_trace *t, shape *s) {
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
typedef struct refs {
    tkb_replay_ref r[MAX_CANDS];
    size_t n;
} refs;

static const tkb_replay_ref *ref_at(refs *rf, const tkt_trace *t, int64_t step, char *err,
                                    size_t err_len) {
    for (size_t i = 0; i < rf->n; i++)
        if (rf->r[i].step_ns == step)
            return &rf->r[i];
    if (rf->n == TKB_COUNT(rf->r)) {
        snprintf(err, err_len, "too many grid steps");
        return NULL;
    }
    if (tkb_replay_ref_build(t, step, &rf->r[rf->n], err, err_len) != 0)
        return NULL;
    return &rf->r[rf->n++];
}

static void refs_free(refs *rf) {
    for (size_t i = 0; i < rf->n; i++)
        tkb_replay_ref_free(&rf->r[i]);
    rf->n = 0;
}

/* ---- the results folder -------------------------------------------------------- */

typedef struct drow {
    char peer[TKB_SPEC_MAX]; /* canonical spec when it parses */
    char workload[96];
    char metric[64];
    double value;
} drow;

typedef struct dir_rows {
    drow *v;
    size_t n, cap;
} dir_rows;

/* Is this a row advise reads? */
static bool row_usable(const drow *r) {
    size_t nr = strlen(tkb_wl_replay_exec.name);
    return (strcmp(r->metric, LATE_P99) == 0 &&
            (strcmp(r->workload, tkb_wl_w3_latency.name) == 0 ||
             (strncmp(r->workload, tkb_wl_replay_exec.name, nr) == 0 && r->workload[nr] == ':'))) ||
           (strcmp(r->workload, tkb_wl_floor.name) == 0 && strcmp(r->metric, WAKE_P99) == 0);
}

/* Reads DIR/results.csv, keeping the rows advise uses. Returns 0, or 2 with
 * a message on stderr (no such folder, no results.csv, a bad header, nothing
 * usable). */
static int dir_read(const char *dir, dir_rows *out) {
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "tkbench: advise: --results %s: not a folder\n", dir);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "tkbench: advise: cannot read %s: %s: not a results folder\n", path,
                strerror(errno));
        return 2;
    }
    char *line = NULL;
    size_t lcap = 0, lineno = 0, rows = 0;
    int status = 0;
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        char *fld[8];
        int nf = tkb_csv_split(line, fld, 8);
        if (lineno == 1) {
            if (nf < 6 || strcmp(fld[0], "peer") != 0 || strcmp(fld[1], "workload") != 0 ||
                strcmp(fld[3], "metric") != 0 || strcmp(fld[4], "value") != 0) {
                fprintf(stderr,
                        "tkbench: advise: %s:1: not the header peer,workload,n,metric,value,...\n",
                        path);
                status = 2;
                break;
            }
            continue;
        }
        if (nf == 1 && fld[0][0] == '\0')
            continue;
        char *end;
        double v = nf >= 6 ? strtod(fld[4], &end) : NAN;
        if (nf < 6 || end == fld[4] || *end != '\0') {
            fprintf(stderr, "tkbench: advise: %s:%zu: expected peer,workload,n,metric,value,unit\n",
                    path, lineno);
            status = 2;
            break;
        }
        rows++;
        drow r = {.value = v};
        snprintf(r.workload, sizeof r.workload, "%s", fld[1]);
        snprintf(r.metric, sizeof r.metric, "%s", fld[3]);
        if (!row_usable(&r) || !isfinite(v))
            continue;
        tkb_peer p;
        char err[256];
        snprintf(r.peer, sizeof r.peer, "%s",
                 tkb_peer_parse(fld[0], &p, err, sizeof err) == 0 ? p.spec : fld[0]);
        if (out->n == out->cap) {
            size_t nc = out->cap ? 2 * out->cap : 64;
            drow *nv = realloc(out->v, nc * sizeof *nv);
            if (nv == NULL) {
                fprintf(stderr, "tkbench: advise: out of memory\n");
                status = 2;
                break;
            }
            out->v = nv;
            out->cap = nc;
        }
        out->v[out->n++] = r;
    }
    free(line);
    fclose(f);
    if (status == 0 && out->n == 0) {
        fprintf(stderr,
                "tkbench: advise: %s has %zu rows but none advise can use (%s of %s:<trace> or "
                "%s, or %s of %s)\n",
                path, rows, LATE_P99, tkb_wl_replay_exec.name, tkb_wl_w3_latency.name, WAKE_P99,
                tkb_wl_floor.name);
        status = 2;
    }
    return status;
}

/* Median of the values of (peer, workload, metric); peer NULL: any. NAN if none. */
static double dir_median(const dir_rows *d, const char *peer, const char *workload,
                         const char *metric) {
    double *v = malloc((d->n ? d->n : 1) * sizeof *v);
    if (v == NULL)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        if ((peer == NULL || strcmp(d->v[i].peer, peer) == 0) &&
            strcmp(d->v[i].workload, workload) == 0 && strcmp(d->v[i].metric, metric) == 0)
            v[k++] = d->v[i].value;
    double m = tkb_median(v, k);
    free(v);
    return m;
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
static int measure_memory(const tkt_trace *t, cand *c, char *err, size_t err_len) {
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
static int measure_cost(const tkt_trace *t, const tkb_replay_ref *ref, cand *c, int reps, char *err,
                        size_t err_len) {
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

static void cand_add(cand *cs, size_t *n, const char *spec, const char *why) {
    if (*n >= MAX_CANDS)
        return;
    cand *c = &cs[(*n)++];
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
static size_t ticks_for(const needs *nd, int64_t *ticks) {
    int64_t base = nd->lateness_ns > 0
                       ? nice_floor(nd->lateness_ns / 2 > 0 ? nd->lateness_ns / 2 : 1)
                       : BASE_TICK_NS;
    int64_t want[MAX_TICKS] = {base / 10, base, BASE_TICK_NS};
    size_t n = 0;
    for (size_t i = 0; i < MAX_TICKS; i++) {
        bool dup = want[i] <= 0;
        for (size_t j = 0; j < n; j++)
            dup |= ticks[j] == want[i];
        if (!dup)
            ticks[n++] = want[i];
    }
    qsort(ticks, n, sizeof *ticks, tkb_cmp_i64);
    return n;
}

static size_t make_candidates(const shape *s, const needs *nd, cand *cs) {
    size_t n = 0;
    char spec[TKB_SPEC_MAX], why[160], tk[32], d99[32], dmax[32];
    cand_add(cs, &n, "heap", "exact: fires each timer at its deadline");
    int64_t ticks[MAX_TICKS];
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
static void lateness_of(cand *c, const dir_rows *d, const char *trace_name, double wake_ns) {
    if (d != NULL) {
        char w[96];
        snprintf(w, sizeof w, "%s:%s", tkb_wl_replay_exec.name, trace_name);
        double v = dir_median(d, c->peer.spec, w, LATE_P99);
        if (isfinite(v)) {
            c->late_ns = v * 1e3;
            c->late_src = SRC_DIR_REPLAY;
            return;
        }
        v = dir_median(d, c->peer.spec, tkb_wl_w3_latency.name, LATE_P99);
        if (isfinite(v)) {
            c->late_ns = v * 1e3;
            c->late_src = SRC_DIR_W3;
            return;
        }
    }
    double tick = c->ticked ? (double)c->tick_ns : 0;
    if (isfinite(wake_ns)) {
        c->late_ns = tick + wake_ns;
        c->late_src = SRC_MODEL;
    } else {
        c->late_ns = tick;
        c->late_src = c->ticked ? SRC_MODEL_TICK : SRC_NONE;
    }
}

static double crit_value(const cand *c, criterion k) {
    switch (k) {
    case CRIT_LATENESS:
        return c->late_src == SRC_NONE ? 0 : c->late_ns;
    case CRIT_MEMORY:
        return c->mem_bytes;
    case CRIT_COST:
    default:
        return c->event_ns;
    }
}

static int cmp_cand(const void *a, const void *b, void *ctx) {
    const cand *x = a, *y = b;
    criterion k = *(const criterion *)ctx;
    bool ox = x->excluded[0] == '\0', oy = y->excluded[0] == '\0';
    if (ox != oy)
        return ox ? -1 : 1;
    double vx = crit_value(x, k), vy = crit_value(y, k);
    if (!isfinite(vx) || !isfinite(vy))
        return isfinite(vx) ? -1 : isfinite(vy) ? 1 : 0;
    if (vx != vy)
        return vx < vy ? -1 : 1;
    return tkb_cmp_double(&x->event_ns, &y->event_ns);
}

/* Sorts by the criterion, candidates out of the running last. By cost, a
 * difference of less than COST_TIE is no difference (the repetitions of one
 * candidate spread about that much on this machine, docs/advisor.md): of the
 * candidates that close to the cheapest, the one with the lowest lateness
 * (then memory) goes first. */
#define COST_TIE 0.05
static void rank(cand *cs, size_t n, criterion k) {
    qsort_r(cs, n, sizeof *cs, cmp_cand, &k);
    if (k != CRIT_COST || n < 2 || cs[0].excluded[0] != '\0')
        return;
    size_t pick = 0;
    for (size_t i = 1; i < n && cs[i].excluded[0] == '\0'; i++) {
        if (!(cs[i].event_ns <= cs[0].event_ns * (1 + COST_TIE)))
            break;
        double li = crit_value(&cs[i], CRIT_LATENESS), lp = crit_value(&cs[pick], CRIT_LATENESS);
        if (li < lp || (li == lp && cs[i].mem_bytes < cs[pick].mem_bytes))
            pick = i;
    }
    if (pick != 0) { /* move it to the front, the others keep their order */
        cand c = cs[pick];
        memmove(&cs[1], &cs[0], pick * sizeof *cs);
        cs[0] = c;
    }
}

/* ---- output ------------------------------------------------------------------------ */

static void late_text(char *b, size_t len, const cand *c) {
    char d[32];
    if (c->late_src == SRC_NONE) {
        snprintf(b, len, "wake-up only");
        return;
    }
    tkb_duration_text(c->late_ns, d, sizeof d);
    snprintf(b, len, "%s%s", c->late_src == SRC_MODEL_TICK ? ">= " : "", d);
}

static void print_table(const cand *cs, size_t n) {
    printf("\n%-3s %-36s %-6s %-21s %7s %7s %7s %7s  %-22s %-10s %s\n", "#", "candidate", "step",
           "ns/event (range)", "start", "modify", "cancel", "expire", "p99 lateness (source)",
           "memory", "cpu");
    size_t rankno = 0;
    for (size_t i = 0; i < n; i++) {
        const cand *c = &cs[i];
        char no[24] = "-", st[32], ev[48], o[4][16], lt[40], lts[64], mem[24], cpu[24];
        bool ok = c->excluded[0] == '\0';
        if (ok)
            snprintf(no, sizeof no, "%zu", ++rankno);
        if (!c->valid) {
            printf("%-3s %-36s\n    excluded: %s\n", no, c->spec_in, c->excluded);
            continue;
        }
        tk__duration_text(c->step_ns, st, sizeof st);
        if (isfinite(c->event_ns))
            snprintf(ev, sizeof ev, "%.1f (%.1f-%.1f)", c->event_ns, c->event_min, c->event_max);
        else
            snprintf(ev, sizeof ev, "-");
        cell_ns(o[0], sizeof o[0], c->start_ns);
        cell_ns(o[1], sizeof o[1], c->modify_ns);
        cell_ns(o[2], sizeof o[2], c->cancel_ns);
        cell_ns(o[3], sizeof o[3], c->expire_ns);
        late_text(lt, sizeof lt, c);
        snprintf(lts, sizeof lts, "%s (%s)", lt, src_tag[c->late_src]);
        fmt_bytes(mem, sizeof mem, c->mem_bytes);
        if (isfinite(c->cpu_pct))
            snprintf(cpu, sizeof cpu, "%.3g%%", c->cpu_pct);
        else
            snprintf(cpu, sizeof cpu, "-");
        printf("%-3s %-36s %-6s %-21s %7s %7s %7s %7s  %-22s %-10s %s\n", no, c->peer.spec, st, ev,
               o[0], o[1], o[2], o[3], lts, mem, cpu);
        if (!ok)
            printf("    excluded: %s\n", c->excluded);
    }
}

static void print_sources(double wake_ns, const char *dir, int reps) {
    char w[32];
    tkb_duration_text(wake_ns, w, sizeof w);
    printf("\nwhere the figures come from:\n"
           "  cost (ns per event; start/modify/cancel/expire: ns per operation): measured here,\n"
           "    the core-level replay of this trace, median of %d (range min-max), on a grid of\n"
           "    `step`: the engine's tick, 1us for an exact engine (docs/advisor.md)\n"
           "  memory: measured here: the core's state, the peak of what it allocates, and one\n"
           "    node (%zu B) per timer at the peak armed\n"
           "  cpu: modelled: cost per event x the trace's event rate, share of one core (no\n"
           "    wake-ups counted)\n"
           "  p99 lateness: DIR:replay = %s of this trace in %s;\n"
           "    DIR:W3 = %s there (same peer spec); model = one tick (ticked engines)\n"
           "    + the machine's wake-up p99 (%s%s);\n"
           "    model>= = one tick, the wake-up latency not known (a lower bound)\n",
           reps, sizeof(tk_node), tkb_wl_replay_exec.name, dir != NULL ? dir : "DIR (no --results)",
           tkb_wl_w3_latency.name, isfinite(wake_ns) ? w : "unknown",
           isfinite(wake_ns) ? ": the floor's nanosleep p99 in DIR" : ": no floor row in DIR");
}

/* One candidate in words: "hwheel:...: 31.0 ns per event, p99 lateness about 1.1 ms
 * (modelled: one tick + the wake-up), 40 KiB" */
static void say(const cand *c, char *b, size_t len) {
    char lt[40], mem[24];
    tkb_duration_text(c->late_ns, lt, sizeof lt);
    fmt_bytes(mem, sizeof mem, c->mem_bytes);
    char late[128];
    switch (c->late_src) {
    case SRC_DIR_REPLAY:
        snprintf(late, sizeof late, "%s (measured on this trace, from DIR)", lt);
        break;
    case SRC_DIR_W3:
        snprintf(late, sizeof late, "%s (measured by %s, from DIR)", lt, tkb_wl_w3_latency.name);
        break;
    case SRC_MODEL:
        snprintf(late, sizeof late, "about %s (modelled: %s the wake-up)", lt,
                 c->ticked ? "one tick +" : "");
        break;
    case SRC_MODEL_TICK:
        snprintf(late, sizeof late, "at least %s (modelled: one tick; wake-up not known)", lt);
        break;
    case SRC_NONE:
    case SRC_HERE:
    default:
        snprintf(late, sizeof late, "the machine's wake-up latency (not known here)");
        break;
    }
    snprintf(b, len, "%s: %.1f ns per event, p99 lateness %s, %s", c->peer.spec, c->event_ns, late,
             mem);
}

static void recommend(const cand *cs, size_t n, criterion k, const needs *nd, const char *trace,
                      const char *trace_path) {
    size_t nok = 0;
    for (size_t i = 0; i < n; i++)
        nok += cs[i].excluded[0] == '\0';
    printf("\nrecommendation for %s (criterion: %s", trace, crit_name[k]);
    char d[32];
    if (nd->lateness_ns > 0) {
        tkb_duration_text((double)nd->lateness_ns, d, sizeof d);
        printf("; need p99 lateness <= %s", d);
    }
    if (nd->memory_bytes > 0) {
        fmt_bytes(d, sizeof d, nd->memory_bytes);
        printf("; need memory <= %s", d);
    }
    if (nd->cpu_pct > 0)
        printf("; need cpu <= %.3g%%", nd->cpu_pct);
    printf("):\n");
    if (nok == 0) {
        printf("  No candidate meets the needs (see the reasons above). Loosen a need, or measure "
               "lateness with --results DIR if it was only modelled.\n");
        return;
    }
    const cand *best = &cs[0];
    char line[512];
    say(best, line, sizeof line);
    printf("  Use %s.\n", line);
    if (nok > 1) {
        const cand *next = &cs[1];
        say(next, line, sizeof line);
        double more = next->event_ns / best->event_ns - 1;
        bool tie = k == CRIT_COST && fabs(more) < COST_TIE;
        printf("  Next by %s: %s (%+.1f%% cost%s).\n", crit_name[k], line, 100 * more,
               tie ? ": within the noise of these measurements, so the lateness and memory decided"
                   : "");
    }
    /* the trade-offs: the best eligible candidate on each other figure */
    const cand *late = NULL, *cheap = NULL, *small = NULL;
    for (size_t i = 0; i < n; i++) {
        const cand *c = &cs[i];
        if (c->excluded[0] != '\0')
            continue;
        if (late == NULL || crit_value(c, CRIT_LATENESS) < crit_value(late, CRIT_LATENESS))
            late = c;
        if (cheap == NULL || c->event_ns < cheap->event_ns)
            cheap = c;
        if (small == NULL || c->mem_bytes < small->mem_bytes)
            small = c;
    }
    double bl = crit_value(best, CRIT_LATENESS);
    if (late != best && crit_value(late, CRIT_LATENESS) < bl * 0.8) {
        char lt[40];
        tkb_duration_text(bl, lt, sizeof lt);
        say(late, line, sizeof line);
        printf("  Choose %s if you need lateness under %s (%s; %+.0f%% cost).\n", late->peer.spec,
               lt, line, 100.0 * (late->event_ns / best->event_ns - 1));
    }
    if (cheap != best && cheap->event_ns < best->event_ns * 0.9) {
        say(cheap, line, sizeof line);
        printf("  Choose %s if CPU matters more (%s).\n", cheap->peer.spec, line);
    }
    if (small != best && small->mem_bytes < best->mem_bytes * 0.8) {
        char m[24];
        fmt_bytes(m, sizeof m, small->mem_bytes);
        printf("  Choose %s if memory matters more: %s instead of ", small->peer.spec, m);
        fmt_bytes(m, sizeof m, best->mem_bytes);
        printf("%s.\n", m);
    }
    if (best->late_src == SRC_MODEL_TICK || best->late_src == SRC_NONE)
        printf("  Its lateness is modelled without the machine's wake-up latency: run `tkbench run "
               "--suite quick` (the floor) or `tkbench replay %s --level executor --peers %s` and "
               "pass the folder with --results.\n",
               trace_path, best->peer.spec);
}

/* ---- the command ------------------------------------------------------------------ */

static int cmd_advise(const tkb_cmd *cmd, int argc, char **argv);

enum { AO_RESULTS, AO_NEED, AO_CRITERION, AO_REPS, AO_HZ };
static const tkb_opt advise_opts[] = {
    [AO_RESULTS] = {"results", "DIR",
                    "a results folder of this machine: measured lateness and wake-up", 0},
    [AO_NEED] = {"need", "KEY=VALUE",
                 "a need, repeatable: lateness=DUR, memory=SIZE or cpu=PCT (of one core)", 0},
    [AO_CRITERION] = {"criterion", "NAME", "cost, lateness or memory: what ranks (default cost)",
                      0},
    [AO_REPS] = {"reps", "K", "repetitions of each candidate's replay, 1..1000 (default 5)", 0},
    [AO_HZ] = {"hz", "N", "perf text: jiffies per second, if the trace cannot tell", 0},
};

const tkb_cmd tkb_cmd_advise = {
    .name = "advise",
    .synopsis = "TRACE [options]",
    .summary = "which engine, with which parameters, for a trace, and the figures why",
    .details = "The advice, its rules and their measurements: docs/advisor.md.\nTRACE is a trace "
               "file (perf script text or neutral CSV, docs/traces.md) or\n"
               "synth:EVENTS[:TIMERS]. Durations take a unit (500us, 2ms), sizes may (64KiB,\n"
               "16MiB).\n",
    .opts = advise_opts,
    .nopts = TKB_COUNT(advise_opts),
    .example = "tkbench advise t.perf.txt --need lateness=2ms\n"
               "tkbench advise bench/traces/tcp.csv.xz --results DIR --criterion memory\n",
    .main = cmd_advise,
};

static void usage_exit(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_exit(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tkb_vusage(&tkb_cmd_advise, fmt, ap);
    va_end(ap);
    exit(2);
}

static void parse_need(const char *v, needs *nd) {
    const char *eq = strchr(v, '=');
    if (eq == NULL)
        usage_exit("--need: expected KEY=VALUE (lateness=500us, memory=64MiB, cpu=5%%), got '%s'",
                   v);
    size_t kl = (size_t)(eq - v);
    const char *val = eq + 1;
    if (kl == 8 && strncmp(v, "lateness", kl) == 0) {
        if (tkb_parse_duration(val, &nd->lateness_ns) != 0)
            usage_exit("--need lateness: expected a duration with its unit (500us, 2ms), got '%s'",
                       val);
    } else if (kl == 6 && strncmp(v, "memory", kl) == 0) {
        if (parse_size(val, &nd->memory_bytes) != 0)
            usage_exit("--need memory: expected a size (65536, 64KiB, 16MiB, 1GB), got '%s'", val);
    } else if (kl == 3 && strncmp(v, "cpu", kl) == 0) {
        if (parse_pct(val, &nd->cpu_pct) != 0)
            usage_exit("--need cpu: expected a share of one core in percent (5, 0.5%%), got '%s'",
                       val);
    } else {
        usage_exit("--need: unknown need '%.*s' (known: lateness, memory, cpu)", (int)kl, v);
    }
}

static int cmd_advise(const tkb_cmd *cmd, int argc, char **argv) {
    const char *trace_path = NULL, *dir = NULL;
    needs nd = {0, 0, 0};
    criterion crit = CRIT_COST;
    int reps = DEFAULT_REPS;
    tkt_perf_opts popts = {0};
    tkb_args args;
    tkb_args_start(&args, cmd, argc, argv);
    const char *v;
    for (int o; (o = tkb_args_next(&args, &v)) != TKB_ARGS_END;) {
        char *end;
        switch (o) {
        case TKB_ARGS_HELP:
            return 0;
        case TKB_ARGS_BAD:
            return 2;
        case TKB_ARGS_POS:
            if (trace_path != NULL)
                usage_exit("one trace at a time ('%s' and '%s')", trace_path, v);
            trace_path = v;
            break;
        case AO_RESULTS:
            dir = v;
            break;
        case AO_NEED:
            parse_need(v, &nd);
            break;
        case AO_CRITERION: {
            size_t k = 0;
            while (k < TKB_COUNT(crit_name) && strcmp(v, crit_name[k]) != 0)
                k++;
            if (k == TKB_COUNT(crit_name))
                usage_exit("--criterion: expected cost, lateness or memory, got '%s'", v);
            crit = (criterion)k;
            break;
        }
        case AO_HZ: {
            long hz = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || hz < 1 || hz > 100000)
                usage_exit("--hz: expected jiffies per second in 1..100000, got '%s'", v);
            popts.hz = hz;
            break;
        }
        case AO_REPS: {
            long r = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || r < 1 || r > 1000)
                usage_exit("--reps: expected an integer in 1..1000, got '%s'", v);
            reps = (int)r;
            break;
        }
        default:
            usage_exit("internal: option %d has no meaning", o);
        }
    }
    if (trace_path == NULL)
        usage_exit("which trace? (a trace file, or synth:EVENTS[:TIMERS])");

    /* the results folder first: a bad one is a usage error, before any measuring */
    dir_rows drows = {NULL, 0, 0};
    if (dir != NULL) {
        int rc = dir_read(dir, &drows);
        if (rc != 0) {
            free(drows.v);
            return rc;
        }
    }
    double wake_ns = NAN;
    if (dir != NULL) {
        double w = dir_median(&drows, NULL, tkb_wl_floor.name, WAKE_P99);
        if (isfinite(w))
            wake_ns = w * 1e3;
    }

    /* the trace */
    tkb_replay_set synth = {0};
    tkt_trace loaded = {0};
    const tkt_trace *t = NULL;
    char err[1024] = "";
    if (strncmp(trace_path, "synth:", 6) == 0) {
        const char *paths[1] = {trace_path};
        int rc = tkb_replay_set_open(&synth, paths, 1, EXACT_STEP_NS);
        if (rc != 0 || synth.count != 1) { /* the message is on stderr */
            tkb_replay_set_close(&synth);
            free(drows.v);
            return rc == 2 ? 2 : 1;
        }
        t = &synth.traces[0].trace;
    } else {
        if (tkt_load_any(trace_path, &popts, &loaded, NULL, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "tkbench: advise: cannot read trace %s\n", err);
            free(drows.v);
            return 2;
        }
        t = &loaded;
    }
    int status = 0;
    refs rf = {.n = 0};
    shape s;
    if (shape_of(t, &s) != 0) {
        fprintf(stderr, "tkbench: advise: out of memory\n");
        status = 1;
        goto out;
    }
    const tkb_replay_ref *exact = ref_at(&rf, t, EXACT_STEP_NS, err, sizeof err);
    if (exact == NULL) {
        fprintf(stderr, "tkbench: advise: %s\n", err);
        status = 1;
        goto out;
    }
    if (exact->events == 0) {
        fprintf(stderr, "tkbench: advise: trace %s has no start or cancel to replay\n", t->name);
        status = 2;
        goto out;
    }
    {
        char dur[32], p50[32], p99[32], mx[32];
        tkb_duration_text((double)t->duration_ns, dur, sizeof dur);
        tkb_duration_text((double)s.delay_p50, p50, sizeof p50);
        tkb_duration_text((double)s.delay_p99, p99, sizeof p99);
        tkb_duration_text((double)s.delay_max, mx, sizeof mx);
        uint64_t arms = exact->starts + exact->modifies;
        printf("trace %s: %" PRIu64 " events (starts and cancels) over %s, %.4g per second; %zu "
               "timers, at most %zu armed at once\n",
               t->name, exact->events, dur, s.rate, t->ntimers, exact->peak);
        printf("  delay (deadline - start): p50 %s, p99 %s, max %s\n", p50, p99, mx);
        printf("  of %" PRIu64 " arms: %.1f%% re-arm an armed timer (modify), %.1f%% are "
               "cancelled, %.1f%% expire; %" PRIu64 " cancels of timers not armed\n",
               arms, arms ? 100.0 * (double)exact->modifies / (double)arms : 0.0,
               arms ? 100.0 * (double)exact->cancels / (double)arms : 0.0,
               arms ? 100.0 * (double)exact->expired / (double)arms : 0.0, exact->cancels_unarmed);
    }

    cand cs[MAX_CANDS];
    size_t nc = make_candidates(&s, &nd, cs);
    for (size_t i = 0; i < nc; i++) {
        cand *c = &cs[i];
        if (tkb_peer_parse(c->spec_in, &c->peer, err, sizeof err) != 0) {
            snprintf(c->excluded, sizeof c->excluded, "not a valid peer here: %s", err);
            continue;
        }
        if (c->peer.engine == NULL || c->peer.engine->core == NULL) {
            snprintf(c->excluded, sizeof c->excluded, "%s has no engine core to replay",
                     c->peer.spec);
            continue;
        }
        c->ticked = (c->peer.engine->caps & TK_QUEUE_CAP_TICKED) != 0;
        /* the step: the core's own tick, or EXACT_STEP_NS for an exact core */
        c->tick_ns = core_tick(&c->peer, err, sizeof err);
        if (c->tick_ns < 1) {
            snprintf(c->excluded, sizeof c->excluded, "%s", err);
            continue;
        }
        c->step_ns = c->ticked && c->tick_ns > 1 ? c->tick_ns : EXACT_STEP_NS;
        if (measure_memory(t, c, err, sizeof err) != 0) {
            snprintf(c->excluded, sizeof c->excluded, "%s", err);
            continue;
        }
        if (!tkb_replay_core_fits(&c->peer, c->step_ns, err, sizeof err)) {
            snprintf(c->excluded, sizeof c->excluded, "%s", err);
            continue;
        }
        const tkb_replay_ref *ref = ref_at(&rf, t, c->step_ns, err, sizeof err);
        if (ref == NULL) {
            snprintf(c->excluded, sizeof c->excluded, "%s", err);
            continue;
        }
        char st[32];
        tk__duration_text(c->step_ns, st, sizeof st);
        fprintf(stderr, "tkbench: advise: [%zu/%zu] %s (%s), step %s: %d core replays ...\n", i + 1,
                nc, c->peer.spec, c->why, st, reps);
        int rc = measure_cost(t, ref, c, reps, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "tkbench: advise: %s: replay %s: %s\n", c->peer.spec,
                    rc > 0 ? "MISMATCH" : "failed", err);
            snprintf(c->excluded, sizeof c->excluded, "its replay %s (see stderr)",
                     rc > 0 ? "differs from the reference" : "failed");
            status = 1;
            continue;
        }
        c->valid = true;
        lateness_of(c, dir != NULL ? &drows : NULL, t->name, wake_ns);
        if (isfinite(s.rate))
            c->cpu_pct = c->event_ns * s.rate / 1e9 * 100.0;
        /* the needs */
        char a[32], b[32], lt[40];
        if (nd.lateness_ns > 0 && c->late_src != SRC_NONE && c->late_ns > (double)nd.lateness_ns) {
            late_text(lt, sizeof lt, c);
            tkb_duration_text((double)nd.lateness_ns, b, sizeof b);
            snprintf(c->excluded, sizeof c->excluded, "p99 lateness %s (%s) > need lateness=%s", lt,
                     src_tag[c->late_src], b);
        } else if (nd.memory_bytes > 0 && c->mem_bytes > nd.memory_bytes) {
            fmt_bytes(a, sizeof a, c->mem_bytes);
            fmt_bytes(b, sizeof b, nd.memory_bytes);
            snprintf(c->excluded, sizeof c->excluded, "memory %s > need memory=%s", a, b);
        } else if (nd.cpu_pct > 0 && isfinite(c->cpu_pct) && c->cpu_pct > nd.cpu_pct) {
            snprintf(c->excluded, sizeof c->excluded, "cpu %.3g%% of a core > need cpu=%.3g%%",
                     c->cpu_pct, nd.cpu_pct);
        }
    }
    for (size_t i = 0; i < nc; i++) /* candidates that could not be measured at all */
        if (!cs[i].valid && cs[i].excluded[0] == '\0')
            snprintf(cs[i].excluded, sizeof cs[i].excluded, "not measured");
    rank(cs, nc, crit);
    print_table(cs, nc);
    print_sources(wake_ns, dir, reps);
    if (dir != NULL) {
        size_t from_dir = 0;
        for (size_t i = 0; i < nc; i++)
            from_dir += cs[i].late_src == SRC_DIR_REPLAY || cs[i].late_src == SRC_DIR_W3;
        if (from_dir == 0)
            fprintf(stderr,
                    "tkbench: advise: note: %s has no lateness of these candidates (%s:%s or %s "
                    "of the same specs): their lateness is modelled\n",
                    dir, tkb_wl_replay_exec.name, t->name, tkb_wl_w3_latency.name);
    }
    recommend(cs, nc, crit, &nd, t->name, trace_path);
    if (cs[0].excluded[0] != '\0' && status == 0)
        status = 1;
out:
    refs_free(&rf);
    if (t == &loaded)
        tkt_free(&loaded);
    tkb_replay_set_close(&synth);
    free(drows.v);
    return status;
}
