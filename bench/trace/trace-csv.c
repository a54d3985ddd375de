/* SPDX-License-Identifier: MIT */
/* The neutral CSV reader (format: docs/traces.md).
 *
 * One pass over the bytes in memory: '#' lines are metadata, the first other
 * line must be the header, every later line is one event with exactly the
 * header's columns. Each timer name gets the next dense index at its first
 * line. Every check fails with "FILE:LINE: message"; nothing is kept of a
 * trace that fails. */
#include "trace-internal.h"

#include <stdlib.h>
#include <string.h>

#define HEADER4 "t_ns,op,timer,deadline_ns"
#define HEADER_HELP "'t_ns,op,timer,deadline_ns' (then optionally ',function' and ',class')"

/* Timer name -> index, open addressing over the trace's own timer table. */
typedef struct strmap {
    uint32_t *slot; /* index + 1, 0 free */
    size_t cap;     /* a power of two */
} strmap;

static uint32_t *strmap_find(strmap *m, const tkt_timer_info *timers, const char *s, size_t n) {
    size_t i = (size_t)tkt__hash(s, n) & (m->cap - 1);
    for (;; i = (i + 1) & (m->cap - 1)) {
        uint32_t v = m->slot[i];
        if (v == 0)
            return &m->slot[i];
        const char *id = timers[v - 1].id;
        if (strncmp(id, s, n) == 0 && id[n] == '\0')
            return &m->slot[i];
    }
}

static bool strmap_rehash(strmap *m, const tkt_timer_info *timers, size_t ntimers) {
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint32_t *s = calloc(cap, sizeof *s);
    if (s == NULL)
        return false;
    free(m->slot);
    m->slot = s;
    m->cap = cap;
    for (size_t k = 0; k < ntimers; k++)
        *strmap_find(m, timers, timers[k].id, strlen(timers[k].id)) = (uint32_t)(k + 1);
    return true;
}

typedef struct csv_state {
    const char *name;
    char *err;
    size_t err_len;
    tkt_trace *t;
    tkt__storage *st;
    size_t ev_cap, timers_cap;
    strmap map;
    char *meta;
    size_t meta_len, meta_cap;
} csv_state;

/* A field of a line. */
typedef struct field {
    const char *s;
    size_t n;
} field;

static int fail_line(csv_state *c, size_t line, int code, const char *fmt, const char *a,
                     const char *b) {
    char msg[200];
    snprintf(msg, sizeof msg, fmt, a, b);
    return tkt__fail(c->err, c->err_len, code, "%s:%zu: %s", c->name, line, msg);
}

/* Quotes at most 40 bytes of a field for a message. */
static const char *show(const field *f, char *buf, size_t len) {
    size_t n = f->n < 40 ? f->n : 40;
    snprintf(buf, len, "%.*s%s", (int)n, f->s, f->n > 40 ? "..." : "");
    return buf;
}

static int number(csv_state *c, size_t line, const field *f, const char *what, int64_t *v) {
    char b[64];
    int r = tkt__parse_ns(f->s, f->n, v);
    if (r == 0)
        return TKT_OK;
    if (r == 2)
        return fail_line(c, line, TKT_EPARSE, "%s %s is too large (at most 10^18 ns)", what,
                         show(f, b, sizeof b));
    if (f->n > 1 && f->s[0] == '-' && tkt__parse_ns(f->s + 1, f->n - 1, v) != 1)
        return fail_line(c, line, TKT_EPARSE, "%s %s is negative", what, show(f, b, sizeof b));
    if (f->n == 0)
        return fail_line(c, line, TKT_EPARSE, "%s is empty%s", what, "");
    return fail_line(c, line, TKT_EPARSE, "%s '%s' is not a number of ns", what,
                     show(f, b, sizeof b));
}

static int add_meta(csv_state *c, const char *s, size_t n) {
    if (!tkt__grow((void **)&c->meta, &c->meta_cap, c->meta_len + n + 2, 1))
        return TKT_ENOMEM;
    memcpy(c->meta + c->meta_len, s, n);
    c->meta_len += n;
    c->meta[c->meta_len++] = '\n';
    c->meta[c->meta_len] = '\0';
    if (c->t->source[0] == '\0' && n >= 7 && memcmp(s, "source:", 7) == 0) {
        size_t k = 7;
        while (k < n && s[k] == ' ')
            k++;
        size_t m = n - k < sizeof c->t->source - 1 ? n - k : sizeof c->t->source - 1;
        memcpy(c->t->source, s + k, m);
        c->t->source[m] = '\0';
    }
    return TKT_OK;
}

/* The index of the timer a line names (f[2]), a new one at its first line,
 * with its function (f[4]) and class (cls) kept or checked. Returns TKT_OK
 * with it in *idx, or the error of the line. */
static int timer_of(csv_state *c, size_t line, const field *f, size_t ncols, unsigned cls,
                    uint32_t *idx) {
    tkt_trace *t = c->t;
    char b[64];
    if (c->map.cap == 0 || t->ntimers + 1 > c->map.cap / 2)
        if (!strmap_rehash(&c->map, t->timers, t->ntimers))
            return fail_line(c, line, TKT_ENOMEM, "out of memory%s%s", "", "");
    uint32_t *slot = strmap_find(&c->map, t->timers, f[2].s, f[2].n);
    if (*slot == 0) {
        if (t->ntimers >= UINT32_MAX - 1)
            return fail_line(c, line, TKT_EPARSE, "too many timers%s%s", "", "");
        if (!tkt__grow((void **)&t->timers, &c->timers_cap, t->ntimers + 1, sizeof *t->timers))
            return fail_line(c, line, TKT_ENOMEM, "out of memory%s%s", "", "");
        tkt_timer_info *ti = &t->timers[t->ntimers];
        ti->id = tkt__strndup(c->st, f[2].s, f[2].n);
        ti->function = tkt__strndup(c->st, ncols >= 5 ? f[4].s : "", ncols >= 5 ? f[4].n : 0);
        ti->cls = (uint8_t)cls;
        if (ti->id == NULL || ti->function == NULL)
            return fail_line(c, line, TKT_ENOMEM, "out of memory%s%s", "", "");
        *slot = (uint32_t)++t->ntimers;
    } else {
        tkt_timer_info *ti = &t->timers[*slot - 1];
        if (ti->function[0] == '\0' && ncols >= 5 && f[4].n > 0) {
            ti->function = tkt__strndup(c->st, f[4].s, f[4].n);
            if (ti->function == NULL)
                return fail_line(c, line, TKT_ENOMEM, "out of memory%s%s", "", "");
        }
        if (cls != TKT_CLS_UNKNOWN && ti->cls != TKT_CLS_UNKNOWN && cls != ti->cls)
            return fail_line(c, line, TKT_EPARSE, "timer '%s' is a %s timer on an earlier line",
                             show(&f[2], b, sizeof b), tkt_cls_name(ti->cls));
        if (ti->cls == TKT_CLS_UNKNOWN)
            ti->cls = (uint8_t)cls;
    }
    *idx = *slot - 1;
    return TKT_OK;
}

static int event_line(csv_state *c, size_t line, const char *s, size_t n, size_t ncols) {
    field f[6];
    size_t nf = 0;
    const char *p = s, *end = s + n;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *fe = comma != NULL ? comma : end;
        if (nf < 6)
            f[nf] = (field){p, (size_t)(fe - p)};
        nf++;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    if (nf != ncols) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%zu", nf);
        snprintf(b, sizeof b, "%zu", ncols);
        return fail_line(c, line, TKT_EPARSE, "%s fields, expected %s as the header says", a, b);
    }
    tkt_trace *t = c->t;
    tkt_event e = {0};
    int rc = number(c, line, &f[0], "time", &e.t_ns);
    if (rc != TKT_OK)
        return rc;
    if (t->count > 0 && e.t_ns < t->ev[t->count - 1].t_ns) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%lld", (long long)e.t_ns);
        snprintf(b, sizeof b, "%lld", (long long)t->ev[t->count - 1].t_ns);
        return fail_line(c, line, TKT_EPARSE,
                         "time %s is before the previous event's %s (times must not decrease)", a,
                         b);
    }
    char b[64];
    if (f[1].n == 5 && memcmp(f[1].s, "start", 5) == 0)
        e.op = TKT_START;
    else if (f[1].n == 6 && memcmp(f[1].s, "cancel", 6) == 0)
        e.op = TKT_CANCEL;
    else if (f[1].n == 6 && memcmp(f[1].s, "expire", 6) == 0)
        e.op = TKT_EXPIRE;
    else
        return fail_line(c, line, TKT_EPARSE, "unknown operation '%s' (start, cancel or expire)",
                         show(&f[1], b, sizeof b), "");
    if (f[2].n == 0)
        return fail_line(c, line, TKT_EPARSE, "empty timer name%s%s", "", "");
    if (e.op == TKT_START) {
        if (f[3].n == 0)
            return fail_line(c, line, TKT_EPARSE, "a start needs a deadline%s%s", "", "");
        rc = number(c, line, &f[3], "deadline", &e.deadline_ns);
        if (rc != TKT_OK)
            return rc;
    } else if (f[3].n != 0) {
        return fail_line(c, line, TKT_EPARSE, "a %s has no deadline: leave the field empty%s",
                         tkt_op_name(e.op), "");
    }
    unsigned cls = TKT_CLS_UNKNOWN;
    if (ncols >= 6 && f[5].n > 0) {
        if (f[5].n == 5 && memcmp(f[5].s, "wheel", 5) == 0)
            cls = TKT_CLS_WHEEL;
        else if (f[5].n == 7 && memcmp(f[5].s, "hrtimer", 7) == 0)
            cls = TKT_CLS_HRTIMER;
        else
            return fail_line(c, line, TKT_EPARSE, "unknown class '%s' (wheel, hrtimer or empty)",
                             show(&f[5], b, sizeof b), "");
    }
    rc = timer_of(c, line, f, ncols, cls, &e.timer);
    if (rc != TKT_OK)
        return rc;
    if (!tkt__grow((void **)&t->ev, &c->ev_cap, t->count + 1, sizeof *t->ev))
        return fail_line(c, line, TKT_ENOMEM, "out of memory%s%s", "", "");
    t->ev[t->count++] = e;
    return TKT_OK;
}

static int parse(csv_state *c, const char *buf, size_t len) {
    const char *p = buf, *end = buf + len;
    size_t line = 0, ncols = 0;
    if (len == 0)
        return tkt__fail(c->err, c->err_len, TKT_EPARSE, "%s: empty file (expected the header %s)",
                         c->name, HEADER_HELP);
    while (p < end) {
        line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            return fail_line(c, line, TKT_EPARSE,
                             "the last line has no newline (is the file cut short?)%s%s", "", "");
        size_t n = (size_t)(nl - p);
        const char *s = p;
        p = nl + 1;
        if (n > 0 && s[n - 1] == '\r')
            n--;
        if (memchr(s, '\0', n) != NULL)
            return fail_line(c, line, TKT_EPARSE, "a NUL byte (not a text file?)%s%s", "", "");
        if (n == 0)
            continue;
        int rc;
        if (s[0] == '#') {
            size_t k = 1 + (n > 1 && s[1] == ' ');
            rc = add_meta(c, s + k, n - k);
            if (rc != TKT_OK)
                return fail_line(c, line, rc, "out of memory%s%s", "", "");
            continue;
        }
        if (ncols == 0) {
            size_t h = sizeof HEADER4 - 1;
            if (n >= h && memcmp(s, HEADER4, h) == 0) {
                if (n == h)
                    ncols = 4;
                else if (n - h == 9 && memcmp(s + h, ",function", 9) == 0)
                    ncols = 5;
                else if (n - h == 15 && memcmp(s + h, ",function,class", 15) == 0)
                    ncols = 6;
            }
            if (ncols == 0)
                return fail_line(c, line, TKT_EPARSE, "expected the header %s%s", HEADER_HELP, "");
            continue;
        }
        rc = event_line(c, line, s, n, ncols);
        if (rc != TKT_OK)
            return rc;
    }
    if (ncols == 0)
        return tkt__fail(c->err, c->err_len, TKT_EPARSE, "%s:%zu: no header line (expected %s)",
                         c->name, line, HEADER_HELP);
    return TKT_OK;
}

int tkt_parse_csv(const char *name, const char *buf, size_t len, tkt_trace *out, char *err,
                  size_t err_len) {
    if (name == NULL)
        name = "(memory)";
    if (out == NULL || (buf == NULL && len > 0))
        return tkt__fail(err, err_len, TKT_EIO, "%s: no input or no trace to fill", name);
    memset(out, 0, sizeof *out);
    csv_state c = {.name = name, .err = err, .err_len = err_len, .t = out};
    c.st = calloc(1, sizeof *c.st);
    if (c.st == NULL)
        return tkt__fail(err, err_len, TKT_ENOMEM, "%s: out of memory", name);
    out->storage_ = c.st;
    int rc = parse(&c, buf, len);
    if (rc == TKT_OK) {
        out->meta = tkt__strndup(c.st, c.meta != NULL ? c.meta : "", c.meta_len);
        if (out->meta == NULL)
            rc = tkt__fail(err, err_len, TKT_ENOMEM, "%s: out of memory", name);
    }
    free(c.map.slot);
    free(c.meta);
    if (rc != TKT_OK) {
        tkt_free(out);
        return rc;
    }
    tkt__short_name(name, out->name, sizeof out->name);
    out->duration_ns = out->count > 0 ? out->ev[out->count - 1].t_ns : 0;
    return TKT_OK;
}
