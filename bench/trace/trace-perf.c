/* SPDX-License-Identifier: MIT */
/* The importer of Linux `perf script` text (docs/traces.md, "The perf importer").
 *
 * Three passes over the data:
 *   1. the text, line by line, into raw records (perf time, CPU, event, timer,
 *      one number) and a table of the timers seen, keyed by address and class;
 *      the other events are counted and skipped;
 *   2. over the records: HZ (jiffies against perf time, unless given), the
 *      offset of the hrtimer clock from the perf clock (the largest
 *      now - perf time of hrtimer_expire_entry: "now" is read just before the
 *      event, so that difference is a lower bound and the largest one is the
 *      tightest), which timers the filters keep; then a stable sort by time;
 *   3. the records in time order into events: deadlines on the perf clock,
 *      made relative to the first kept event; a cancel followed (for that timer,
 *      on the same CPU) by its expire_entry is part of the expiry and dropped;
 *      an hrtimer start whose expires lies years away from the event (a clock
 *      base other than the monotonic one, e.g. CLOCK_REALTIME) is dropped with
 *      that timer's events until its next start. Timers get dense indices in
 *      the order they first appear among the kept events.
 *
 * A line perf printed is found by its structure: "COMM PID [CPU] SECS.FRAC:
 * EVENT: ARGS", where COMM may hold spaces, colons and brackets; the first
 * " [digits] digits.digits:" is the CPU and the time. Lines starting with a
 * tab (call chains) and blank lines are skipped. Anything else is an error. */
#define _POSIX_C_SOURCE 200809L

#include "trace-internal.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CPUS 65536
#define PROGRESS_STEP ((size_t)8 << 20)
/* |expires - now| beyond this (about 3 years) means another clock base. */
#define OTHER_CLOCK_NS INT64_C(100000000000000000)

static const char *const perf_names[] = {
#define TKT_X_NAME(e, name, used) name,
    TKT_PERF_EVENTS(TKT_X_NAME)
#undef TKT_X_NAME
        "other"};
static const bool perf_used[] = {
#define TKT_X_USED(e, name, used) used,
    TKT_PERF_EVENTS(TKT_X_USED)
#undef TKT_X_USED
        false};

const char *tkt_perf_event_name(unsigned e) {
    return e < TKT_PERF_NEVENTS ? perf_names[e] : NULL;
}

typedef struct rec {
    int64_t ts;     /* perf time, ns */
    int64_t a;      /* wheel start: timeout (jiffies); hrtimer start: expires (ns);
                     * expire_entry: now (jiffies or ns); else 0 */
    int64_t jnow;   /* wheel start: jiffies at the start (expires - timeout) */
    uint32_t timer; /* raw timer index */
    uint16_t cpu;
    uint8_t kind; /* tkt_perf_event */
} rec;

typedef struct rawtimer {
    uint64_t addr;
    const char *function; /* in the trace's storage; NULL until seen */
    uint32_t out;         /* index in the trace + 1, 0 if not (yet) given one */
    int32_t pending;      /* pass 3: index of its last emitted cancel, or -1 */
    uint16_t pending_cpu;
    uint8_t cls;
    bool keep;        /* passes the function and class filters */
    bool other_clock; /* pass 3: its last start was on another clock base */
} rawtimer;

typedef struct perf_state {
    const char *name;
    char *err;
    size_t err_len;
    const tkt_perf_opts *opts;
    tkt_import_stats *stats;
    tkt__storage *st;
    rec *recs;
    size_t nrecs, recs_cap;
    rawtimer *timers;
    size_t ntimers, timers_cap;
    uint32_t *map; /* (addr, cls) -> raw index + 1 */
    size_t map_cap;
    unsigned char *cpus; /* bitmap of the CPUs kept, NULL: all */
} perf_state;

/* ---- small parsers ----------------------------------------------------------------------------
 */

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* A decimal in [s, e) with an optional '-', at most 2^63-1 in magnitude. */
static bool parse_i64(const char *s, const char *e, int64_t *v) {
    bool neg = s < e && *s == '-';
    if (neg)
        s++;
    if (s >= e)
        return false;
    uint64_t x = 0;
    for (; s < e; s++) {
        if (!is_digit(*s) || x > (UINT64_C(9223372036854775807) - (uint64_t)(*s - '0')) / 10)
            return false;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = neg ? -(int64_t)x : (int64_t)x;
    return true;
}

static bool parse_hex(const char *s, const char *e, uint64_t *v) {
    if (e - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return false;
    uint64_t x = 0;
    for (s += 2; s < e; s++) {
        unsigned d;
        if (is_digit(*s))
            d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (*s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return false;
        if (x >> 60)
            return false;
        x = x << 4 | d;
    }
    *v = x;
    return true;
}

/* The value of "key=" in the arguments [s, e): found where key starts the
 * arguments or follows a space or '['; the value ends at a space or ']'. */
static bool find_arg(const char *s, const char *e, const char *key, const char **v,
                     const char **ve) {
    size_t k = strlen(key);
    for (const char *p = s; (size_t)(e - p) >= k;) {
        const char *q = memchr(p, key[0], (size_t)(e - p) - k + 1);
        if (q == NULL)
            return false;
        if ((q == s || q[-1] == ' ' || q[-1] == '[') && memcmp(q, key, k) == 0) {
            const char *r = q + k;
            while (r < e && *r != ' ' && *r != ']')
                r++;
            *v = q + k;
            *ve = r;
            return true;
        }
        p = q + 1;
    }
    return false;
}

/* "SECS.FRAC" (FRAC 1 to 9 digits) in ns; false if malformed or beyond 10^18 ns. */
static bool parse_time(const char *s, const char *e, int64_t *ns) {
    const char *dot = memchr(s, '.', (size_t)(e - s));
    if (dot == NULL || dot == s || e - dot - 1 < 1 || e - dot - 1 > 9 || dot - s > 9)
        return false;
    int64_t sec = 0, frac = 0;
    for (const char *p = s; p < dot; p++) {
        if (!is_digit(*p))
            return false;
        sec = sec * 10 + (*p - '0');
    }
    int digits = 0;
    for (const char *p = dot + 1; p < e; p++, digits++) {
        if (!is_digit(*p))
            return false;
        frac = frac * 10 + (*p - '0');
    }
    for (; digits < 9; digits++)
        frac *= 10;
    *ns = sec * 1000000000 + frac;
    return true;
}

/* ---- the timer table --------------------------------------------------------------------------
 */

static uint32_t *map_find(perf_state *c, uint64_t addr, unsigned cls) {
    uint64_t h = (addr ^ (addr >> 29) ^ ((uint64_t)cls << 61)) * UINT64_C(0x9e3779b97f4a7c15);
    size_t i = (size_t)(h >> 17) & (c->map_cap - 1);
    for (;; i = (i + 1) & (c->map_cap - 1)) {
        uint32_t v = c->map[i];
        if (v == 0 || (c->timers[v - 1].addr == addr && c->timers[v - 1].cls == cls))
            return &c->map[i];
    }
}

static bool map_rehash(perf_state *c) {
    size_t cap = c->map_cap ? c->map_cap * 2 : 4096;
    uint32_t *m = calloc(cap, sizeof *m);
    if (m == NULL)
        return false;
    free(c->map);
    c->map = m;
    c->map_cap = cap;
    for (size_t k = 0; k < c->ntimers; k++)
        *map_find(c, c->timers[k].addr, c->timers[k].cls) = (uint32_t)(k + 1);
    return true;
}

/* The raw index of timer (addr, cls), added if new; -1 when out of memory. */
static int64_t timer_of(perf_state *c, uint64_t addr, unsigned cls) {
    if (c->map_cap == 0 || c->ntimers + 1 > c->map_cap / 2)
        if (c->ntimers >= UINT32_MAX / 4 || !map_rehash(c))
            return -1;
    uint32_t *slot = map_find(c, addr, cls);
    if (*slot == 0) {
        if (!tkt__grow((void **)&c->timers, &c->timers_cap, c->ntimers + 1, sizeof *c->timers))
            return -1;
        c->timers[c->ntimers] = (rawtimer){.addr = addr, .cls = (uint8_t)cls, .pending = -1};
        *slot = (uint32_t)++c->ntimers;
    }
    return *slot - 1;
}

/* ---- pass 1: the text -------------------------------------------------------------------------
 */

static int fail_at(perf_state *c, size_t line, int code, const char *msg) {
    return tkt__fail(c->err, c->err_len, code, "%s:%zu: %s", c->name, line, msg);
}

/* Finds " [CPU] SECS.FRAC:" in the line; *after points past the ':'. */
static bool find_cpu_time(const char *s, const char *e, unsigned *cpu, int64_t *ts,
                          const char **after) {
    for (const char *p = s; p < e;) {
        const char *b = memchr(p, '[', (size_t)(e - p));
        if (b == NULL)
            return false;
        p = b + 1;
        if (b == s || b[-1] != ' ')
            continue;
        const char *q = b + 1;
        unsigned v = 0;
        while (q < e && is_digit(*q) && v < MAX_CPUS)
            v = v * 10 + (unsigned)(*q++ - '0');
        if (q == b + 1 || q >= e || *q != ']' || v >= MAX_CPUS)
            continue;
        q++;
        if (q >= e || *q != ' ')
            continue;
        while (q < e && *q == ' ')
            q++;
        const char *t = q;
        while (q < e && (is_digit(*q) || *q == '.'))
            q++;
        if (q >= e || *q != ':' || !parse_time(t, q, ts))
            continue;
        *cpu = v;
        *after = q + 1;
        return true;
    }
    return false;
}

static int event_kind(const char *s, size_t n) {
    for (int k = 0; k < TKT_PERF_OTHER; k++)
        if (strncmp(perf_names[k], s, n) == 0 && perf_names[k][n] == '\0')
            return k;
    return TKT_PERF_OTHER;
}

/* A function name safe for CSV: characters other than [A-Za-z0-9_.$] become '_'. */
static const char *keep_function(perf_state *c, const char *s, const char *e) {
    char buf[256];
    size_t n = (size_t)(e - s) < sizeof buf - 1 ? (size_t)(e - s) : sizeof buf - 1;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        bool ok = is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  ch == '_' || ch == '.' || ch == '$';
        buf[i] = ok ? ch : '_';
    }
    return tkt__strndup(c->st, buf, n);
}

static int perf_line(perf_state *c, size_t line, const char *s, size_t n) {
    const char *e = s + n, *p;
    unsigned cpu;
    int64_t ts;
    if (!find_cpu_time(s, e, &cpu, &ts, &p))
        return fail_at(c, line, TKT_EPARSE,
                       "not a line of perf script (expected 'COMM PID [CPU] SECONDS: EVENT: ...')");
    while (p < e && *p == ' ')
        p++;
    const char *ev = p, *args;
    const char *colon = NULL;
    for (const char *q = ev; q < e; q++)
        if (*q == ':' && (q + 1 == e || q[1] == ' ')) {
            colon = q;
            break;
        }
    if (colon == NULL || colon == ev)
        return fail_at(c, line, TKT_EPARSE, "no event name after the time");
    args = colon + 1;
    while (args < e && *args == ' ')
        args++;
    int kind = event_kind(ev, (size_t)(colon - ev));
    tkt_import_stats *stt = c->stats;
    stt->events[kind]++;
    if (!perf_used[kind]) {
        stt->skipped[kind]++;
        return TKT_OK;
    }
    bool hr = kind == TKT_PERF_HRTIMER_START || kind == TKT_PERF_HRTIMER_CANCEL ||
              kind == TKT_PERF_HRTIMER_EXPIRE_ENTRY;
    const char *v, *ve;
    uint64_t addr;
    if (!find_arg(args, e, hr ? "hrtimer=" : "timer=", &v, &ve) || !parse_hex(v, ve, &addr))
        return fail_at(c, line, TKT_EPARSE,
                       hr ? "no hrtimer=0x... address" : "no timer=0x... address");
    int64_t ti = timer_of(c, addr, hr ? TKT_CLS_HRTIMER : TKT_CLS_WHEEL);
    if (ti < 0)
        return fail_at(c, line, TKT_ENOMEM, "out of memory");
    rec r = {.ts = ts, .timer = (uint32_t)ti, .cpu = (uint16_t)cpu, .kind = (uint8_t)kind};
    if (kind != TKT_PERF_TIMER_CANCEL && kind != TKT_PERF_HRTIMER_CANCEL) {
        if (c->timers[ti].function == NULL && find_arg(args, e, "function=", &v, &ve) && ve > v) {
            c->timers[ti].function = keep_function(c, v, ve);
            if (c->timers[ti].function == NULL)
                return fail_at(c, line, TKT_ENOMEM, "out of memory");
        }
    }
    switch (kind) {
    case TKT_PERF_TIMER_START: {
        int64_t expires;
        if (!find_arg(args, e, "expires=", &v, &ve) || !parse_i64(v, ve, &expires))
            return fail_at(c, line, TKT_EPARSE, "timer_start without a valid expires=");
        if (!find_arg(args, e, "timeout=", &v, &ve) || !parse_i64(v, ve, &r.a))
            return fail_at(c, line, TKT_EPARSE, "timer_start without a valid [timeout=N]");
        if (r.a < -TKT_MAX_NS || r.a > TKT_MAX_NS || expires < 0 || expires > INT64_MAX / 2)
            return fail_at(c, line, TKT_EPARSE, "timer_start: expires or timeout out of range");
        r.jnow = expires - r.a; /* |expires - a| < 2^62 + 10^18: no overflow */
        break;
    }
    case TKT_PERF_HRTIMER_START:
        if (!find_arg(args, e, "expires=", &v, &ve) || !parse_i64(v, ve, &r.a))
            return fail_at(c, line, TKT_EPARSE, "hrtimer_start without a valid expires=");
        break;
    case TKT_PERF_TIMER_EXPIRE_ENTRY:
    case TKT_PERF_HRTIMER_EXPIRE_ENTRY:
        if (!find_arg(args, e, "now=", &v, &ve) || !parse_i64(v, ve, &r.a) || r.a < 0 ||
            r.a > INT64_MAX / 2)
            return fail_at(c, line, TKT_EPARSE, "expire_entry without a valid now=");
        break;
    default:
        break;
    }
    if (!tkt__grow((void **)&c->recs, &c->recs_cap, c->nrecs + 1, sizeof *c->recs))
        return fail_at(c, line, TKT_ENOMEM, "out of memory");
    c->recs[c->nrecs++] = r;
    return TKT_OK;
}

static int pass_text(perf_state *c, const char *buf, size_t len) {
    const char *p = buf, *end = buf + len;
    size_t line = 0, next_progress = PROGRESS_STEP;
    const tkt_perf_opts *o = c->opts;
    if (len == 0)
        return tkt__fail(c->err, c->err_len, TKT_EPARSE, "%s: empty file", c->name);
    while (p < end) {
        line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            return fail_at(c, line, TKT_EPARSE,
                           "the last line has no newline (is the file cut short?)");
        const char *s = p;
        size_t n = (size_t)(nl - p);
        p = nl + 1;
        if (o->progress != NULL && (size_t)(p - buf) >= next_progress) {
            o->progress(o->progress_arg, (size_t)(p - buf), len);
            next_progress += PROGRESS_STEP;
        }
        if (n > 0 && s[n - 1] == '\r')
            n--;
        if (memchr(s, '\0', n) != NULL)
            return fail_at(c, line, TKT_EPARSE, "a NUL byte (not a text file?)");
        size_t k = 0;
        while (k < n && s[k] == ' ')
            k++;
        if (k == n || s[0] == '\t')
            continue; /* blank, or a call chain */
        int rc = perf_line(c, line, s, n);
        if (rc != TKT_OK)
            return rc;
    }
    c->stats->lines = line;
    return TKT_OK;
}

/* ---- pass 2: clocks, filters, order -----------------------------------------------------------
 */

static int parse_cpus(perf_state *c, const char *list) {
    c->cpus = calloc(MAX_CPUS / 8, 1);
    if (c->cpus == NULL)
        return tkt__fail(c->err, c->err_len, TKT_ENOMEM, "%s: out of memory", c->name);
    const char *p = list;
    for (;;) {
        char *e;
        if (!is_digit(*p))
            goto bad;
        unsigned long a = strtoul(p, &e, 10), b = a;
        p = e;
        if (*p == '-') {
            p++;
            if (!is_digit(*p))
                goto bad;
            b = strtoul(p, &e, 10);
            p = e;
        }
        if (a > b || b >= MAX_CPUS)
            goto bad;
        for (unsigned long k = a; k <= b; k++)
            c->cpus[k / 8] |= (unsigned char)(1u << (k % 8));
        if (*p == '\0')
            return TKT_OK;
        if (*p++ != ',')
            goto bad;
    }
bad:
    return tkt__fail(c->err, c->err_len, TKT_EPARSE,
                     "--cpus '%s': expected a list of CPUs and ranges, e.g. 0,2-3 (below %d)", list,
                     MAX_CPUS);
}

static bool function_kept(const char *globs, const char *fn) {
    if (globs == NULL || globs[0] == '\0')
        return true;
    if (fn == NULL)
        return false;
    char pat[256];
    for (const char *p = globs; *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (n > 0 && n < sizeof pat) {
            memcpy(pat, p, n);
            pat[n] = '\0';
            if (fnmatch(pat, fn, 0) == 0)
                return true;
        }
        p += n + (comma != NULL);
    }
    return false;
}

/* Stable merge sort of the records by time; counts those out of order. */
static int sort_recs(perf_state *c) {
    size_t n = c->nrecs;
    int64_t max = INT64_MIN;
    size_t late = 0;
    for (size_t i = 0; i < n; i++) {
        if (c->recs[i].ts < max)
            late++;
        else
            max = c->recs[i].ts;
    }
    c->stats->out_of_order = late;
    if (late == 0)
        return TKT_OK;
    rec *tmp = malloc(n * sizeof *tmp);
    if (tmp == NULL)
        return tkt__fail(c->err, c->err_len, TKT_ENOMEM, "%s: out of memory", c->name);
    rec *a = c->recs, *b = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                b[k++] = a[j].ts < a[i].ts ? a[j++] : a[i++];
            while (i < mid)
                b[k++] = a[i++];
            while (j < hi)
                b[k++] = a[j++];
        }
        rec *s = a;
        a = b;
        b = s;
        if (w > SIZE_MAX / 4)
            break;
    }
    if (a != c->recs) {
        memcpy(c->recs, a, n * sizeof *a);
        free(a);
    } else {
        free(b);
    }
    return TKT_OK;
}

static const int64_t usual_hz[] = {100, 250, 300, 1000};

/* HZ from jiffies against perf time, over the whole trace. */
static int find_hz(perf_state *c, int64_t *hz) {
    int64_t t_lo = INT64_MAX, t_hi = INT64_MIN, j_lo = 0, j_hi = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        const rec *r = &c->recs[i];
        int64_t j;
        if (r->kind == TKT_PERF_TIMER_START)
            j = r->jnow;
        else if (r->kind == TKT_PERF_TIMER_EXPIRE_ENTRY)
            j = r->a;
        else
            continue;
        if (r->ts < t_lo)
            t_lo = r->ts, j_lo = j;
        if (r->ts > t_hi)
            t_hi = r->ts, j_hi = j;
    }
    /* jiffies are within +-(2^62 + 10^18) (pass 1 checks), so j_hi - j_lo cannot overflow */
    if (t_hi <= t_lo || j_hi - j_lo < 50 || j_hi - j_lo > TKT_MAX_NS / 1000000000)
        return tkt__fail(c->err, c->err_len, TKT_EPARSE,
                         "%s: cannot find HZ: the wheel events span too few jiffies (%lld): "
                         "give --hz",
                         c->name, t_hi > t_lo ? (long long)(j_hi - j_lo) : 0LL);
    double est = (double)(j_hi - j_lo) * 1e9 / (double)(t_hi - t_lo);
    for (size_t k = 0; k < sizeof usual_hz / sizeof usual_hz[0]; k++)
        if (est > (double)usual_hz[k] * 0.95 && est < (double)usual_hz[k] * 1.05) {
            *hz = usual_hz[k];
            return TKT_OK;
        }
    return tkt__fail(c->err, c->err_len, TKT_EPARSE,
                     "%s: cannot find HZ: jiffies advance %.1f times a second, none of 100, 250, "
                     "300, 1000: give --hz",
                     c->name, est);
}

/* The hrtimer clock minus the perf clock. */
static void find_offset(perf_state *c, int64_t *off) {
    bool have = false;
    int64_t best = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        const rec *r = &c->recs[i];
        if (r->kind != TKT_PERF_HRTIMER_EXPIRE_ENTRY || r->a < 0 || r->a > TKT_MAX_NS)
            continue;
        int64_t d = r->a - r->ts;
        if (!have || d > best)
            best = d, have = true;
    }
    if (!have) /* no expiry seen: starts are mostly in the future, so take the smallest lead */
        for (size_t i = 0; i < c->nrecs; i++) {
            const rec *r = &c->recs[i];
            if (r->kind != TKT_PERF_HRTIMER_START || r->a < 0 || r->a > TKT_MAX_NS)
                continue;
            int64_t d = r->a - r->ts;
            if (!have || d < best)
                best = d, have = true;
        }
    *off = best;
}

/* ---- pass 3: events ---------------------------------------------------------------------------
 */

static int64_t clamp_dl(perf_state *c, int64_t dl) {
    if (dl < 0 || dl > TKT_MAX_NS) {
        c->stats->clamped++;
        return dl < 0 ? 0 : TKT_MAX_NS;
    }
    return dl;
}

/* Record r as an event, into *e (t_ns, op, deadline; the timer is set by
 * the caller). Returns false when the record is left out: a start on
 * another clock, or any record of a timer whose last start was (counted). */
static bool rec_event(perf_state *c, const rec *r, rawtimer *rt, int64_t hz, int64_t off,
                      tkt_event *e) {
    tkt_import_stats *stt = c->stats;
    switch (r->kind) {
    case TKT_PERF_TIMER_START: {
        e->op = TKT_START;
        int64_t rel;
        if (r->a / hz > TKT_MAX_NS / 1000000000 || r->a / hz < -TKT_MAX_NS / 1000000000)
            rel = r->a < 0 ? -TKT_MAX_NS : TKT_MAX_NS;
        else
            rel = r->a / hz * 1000000000 + r->a % hz * 1000000000 / hz;
        e->deadline_ns = clamp_dl(c, e->t_ns + rel);
        rt->other_clock = false;
        break;
    }
    case TKT_PERF_HRTIMER_START: {
        e->op = TKT_START;
        /* expires - off - ts, in steps that cannot overflow */
        int64_t mono_now = r->ts + off;
        bool far = (r->a > 0 && mono_now < 0 && r->a > INT64_MAX + mono_now) ||
                   (r->a < 0 && mono_now > 0 && r->a < INT64_MIN + mono_now);
        int64_t rel = far ? 0 : r->a - mono_now;
        rt->other_clock = far || rel > OTHER_CLOCK_NS || rel < -OTHER_CLOCK_NS;
        if (!rt->other_clock)
            e->deadline_ns = clamp_dl(c, e->t_ns + rel);
        break;
    }
    case TKT_PERF_TIMER_CANCEL:
    case TKT_PERF_HRTIMER_CANCEL:
        e->op = TKT_CANCEL;
        break;
    default:
        e->op = TKT_EXPIRE;
        break;
    }
    if (rt->other_clock) {
        stt->other_clock++;
        stt->skipped[r->kind]++;
        return false;
    }
    return true;
}

/* Drops the cancels that were the first half of an expiry (marked 0xff) and
 * gives the timers dense indices in order of first appearance. Returns
 * TKT_OK or TKT_ENOMEM. */
static int dense_timers(perf_state *c, tkt_trace *t) {
    size_t w = 0, tcap = 0;
    for (size_t i = 0; i < t->count; i++) {
        tkt_event e = t->ev[i];
        if (e.op == 0xff)
            continue;
        rawtimer *rt = &c->timers[e.timer];
        if (rt->out == 0) {
            if (!tkt__grow((void **)&t->timers, &tcap, t->ntimers + 1, sizeof *t->timers))
                return tkt__fail(c->err, c->err_len, TKT_ENOMEM, "%s: out of memory", c->name);
            char id[40];
            bool twin = false;
            if (rt->cls == TKT_CLS_HRTIMER) {
                uint32_t *s = map_find(c, rt->addr, TKT_CLS_WHEEL);
                twin = *s != 0 && c->timers[*s - 1].keep;
            }
            snprintf(id, sizeof id, "0x%llx%s", (unsigned long long)rt->addr,
                     twin ? "/hrtimer" : "");
            tkt_timer_info *ti = &t->timers[t->ntimers];
            ti->id = tkt__strndup(c->st, id, strlen(id));
            ti->function = rt->function != NULL ? rt->function : "";
            ti->cls = rt->cls;
            if (ti->id == NULL)
                return tkt__fail(c->err, c->err_len, TKT_ENOMEM, "%s: out of memory", c->name);
            rt->out = (uint32_t)++t->ntimers;
        }
        e.timer = rt->out - 1;
        t->ev[w++] = e;
    }
    t->count = w;
    t->duration_ns = w > 0 ? t->ev[w - 1].t_ns : 0;
    return TKT_OK;
}

static int emit(perf_state *c, tkt_trace *t, int64_t hz, int64_t off) {
    tkt_import_stats *stt = c->stats;
    size_t cap = 0;
    int64_t t0 = 0;
    bool first = true;
    for (size_t i = 0; i < c->nrecs; i++) {
        const rec *r = &c->recs[i];
        rawtimer *rt = &c->timers[r->timer];
        bool kept = rt->keep && (c->cpus == NULL || (c->cpus[r->cpu / 8] >> (r->cpu % 8)) & 1);
        if (!kept) {
            stt->filtered++;
            stt->skipped[r->kind]++;
            continue;
        }
        if (first)
            t0 = r->ts, first = false;
        tkt_event e = {.t_ns = r->ts - t0};
        if (!rec_event(c, r, rt, hz, off, &e))
            continue;
        if (e.op == TKT_EXPIRE && rt->pending >= 0 && rt->pending_cpu == r->cpu) {
            t->ev[rt->pending].op = 0xff; /* the cancel was this expiry's first half */
            stt->expiry_cancels++;
            stt->skipped[r->kind == TKT_PERF_TIMER_EXPIRE_ENTRY ? TKT_PERF_TIMER_CANCEL
                                                                : TKT_PERF_HRTIMER_CANCEL]++;
        }
        rt->pending = -1;
        if (e.op == TKT_CANCEL && t->count < INT32_MAX) {
            rt->pending = (int32_t)t->count;
            rt->pending_cpu = r->cpu;
        }
        e.timer = r->timer; /* raw for now */
        if (!tkt__grow((void **)&t->ev, &cap, t->count + 1, sizeof *t->ev))
            return tkt__fail(c->err, c->err_len, TKT_ENOMEM, "%s: out of memory", c->name);
        t->ev[t->count++] = e;
    }
    stt->t0_ns = t0;
    return dense_timers(c, t);
}

static int describe(perf_state *c, tkt_trace *t, int64_t hz) {
    const tkt_perf_opts *o = c->opts;
    tkt_import_stats *s = c->stats;
    char *m = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&m, &len);
    if (f == NULL)
        return tkt__fail(c->err, c->err_len, TKT_ENOMEM, "%s: out of memory", c->name);
    char name[64];
    tkt__short_name(c->name, name, sizeof name);
    if (hz > 0)
        snprintf(t->source, sizeof t->source, "perf script %s, HZ=%lld%s", name, (long long)hz,
                 s->hz_found ? " (found)" : " (given)");
    else
        snprintf(t->source, sizeof t->source, "perf script %s", name);
    fprintf(f, "source: %s\n", t->source);
    fprintf(f, "hz: %lld\n", (long long)hz);
    fprintf(f, "hrtimer-clock-offset-ns: %lld\n", (long long)s->hr_offset_ns);
    fprintf(f, "perf-t0-ns: %lld\n", (long long)s->t0_ns);
    fprintf(f, "filters: functions=%s cpus=%s class=%s\n",
            o->functions && o->functions[0] ? o->functions : "*",
            o->cpus && o->cpus[0] ? o->cpus : "all",
            o->keep == TKT_KEEP_WHEEL     ? "wheel"
            : o->keep == TKT_KEEP_HRTIMER ? "hrtimer"
                                          : "all");
    fprintf(f, "dropped: expiry-cancels=%zu other-clock=%zu filtered=%zu clamped=%zu\n",
            s->expiry_cancels, s->other_clock, s->filtered, s->clamped);
    for (unsigned k = 0; k < TKT_PERF_NEVENTS; k++)
        if (s->events[k] > 0)
            fprintf(f, "event: %s read=%zu skipped=%zu\n", perf_names[k], s->events[k],
                    s->skipped[k]);
    if (fclose(f) != 0 || m == NULL) {
        free(m);
        return tkt__fail(c->err, c->err_len, TKT_ENOMEM, "%s: out of memory", c->name);
    }
    t->meta = tkt__strndup(c->st, m, len);
    free(m);
    if (t->meta == NULL)
        return tkt__fail(c->err, c->err_len, TKT_ENOMEM, "%s: out of memory", c->name);
    return TKT_OK;
}

static int run(perf_state *c, const char *buf, size_t len, tkt_trace *t) {
    const tkt_perf_opts *o = c->opts;
    if (o->hz < 0 || o->hz > 100000)
        return tkt__fail(c->err, c->err_len, TKT_EPARSE, "--hz %lld: expected 1..100000",
                         (long long)o->hz);
    if (o->keep < TKT_KEEP_ALL || o->keep > TKT_KEEP_HRTIMER)
        return tkt__fail(c->err, c->err_len, TKT_EPARSE, "bad class filter %d", o->keep);
    int rc = TKT_OK;
    if (o->cpus != NULL && o->cpus[0] != '\0')
        rc = parse_cpus(c, o->cpus);
    if (rc == TKT_OK)
        rc = pass_text(c, buf, len);
    if (rc != TKT_OK)
        return rc;
    bool need_hz = false;
    for (size_t k = 0; k < c->ntimers; k++) {
        rawtimer *rt = &c->timers[k];
        rt->keep = (o->keep == TKT_KEEP_ALL ||
                    (o->keep == TKT_KEEP_WHEEL) == (rt->cls == TKT_CLS_WHEEL)) &&
                   function_kept(o->functions, rt->function);
    }
    for (size_t i = 0; i < c->nrecs && !need_hz; i++)
        need_hz = c->recs[i].kind == TKT_PERF_TIMER_START && c->timers[c->recs[i].timer].keep;
    int64_t hz = o->hz;
    c->stats->hz_found = false;
    if (need_hz && hz == 0) {
        rc = find_hz(c, &hz);
        if (rc != TKT_OK)
            return rc;
        c->stats->hz_found = true;
    }
    if (hz == 0)
        hz = 1; /* no wheel start is kept: unused */
    c->stats->hz = need_hz ? hz : 0;
    find_offset(c, &c->stats->hr_offset_ns);
    rc = sort_recs(c);
    if (rc == TKT_OK)
        rc = emit(c, t, hz, c->stats->hr_offset_ns);
    if (rc == TKT_OK)
        rc = describe(c, t, need_hz ? hz : 0);
    if (rc == TKT_OK && o->progress != NULL)
        o->progress(o->progress_arg, len, len);
    return rc;
}

int tkt_parse_perf(const char *name, const char *buf, size_t len, const tkt_perf_opts *opts,
                   tkt_trace *out, tkt_import_stats *stats, char *err, size_t err_len) {
    if (name == NULL)
        name = "(memory)";
    if (out == NULL || (buf == NULL && len > 0))
        return tkt__fail(err, err_len, TKT_EIO, "%s: no input or no trace to fill", name);
    memset(out, 0, sizeof *out);
    static const tkt_perf_opts none = {0};
    tkt_import_stats local;
    perf_state c = {.name = name,
                    .err = err,
                    .err_len = err_len,
                    .opts = opts != NULL ? opts : &none,
                    .stats = stats != NULL ? stats : &local};
    memset(c.stats, 0, sizeof *c.stats);
    c.st = calloc(1, sizeof *c.st);
    if (c.st == NULL)
        return tkt__fail(err, err_len, TKT_ENOMEM, "%s: out of memory", name);
    out->storage_ = c.st;
    int rc = run(&c, buf, len, out);
    free(c.recs);
    free(c.timers);
    free(c.map);
    free(c.cpus);
    if (rc != TKT_OK) {
        tkt_free(out);
        return rc;
    }
    tkt__short_name(name, out->name, sizeof out->name);
    return TKT_OK;
}
