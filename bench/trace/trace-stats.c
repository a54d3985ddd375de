/* SPDX-License-Identifier: MIT */
/* tkbench: a timer trace's summary and its data files (trace-stats.h). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace-stats.h"
#include "util.h"

/* At most this many points of the delays' CDF are written. */
#define NCDF 1000

/* A change of the number of armed timers. */
typedef struct change {
    int64_t t_ns;
    int delta;
} change;

static int cmp_change(const void *a, const void *b) {
    const change *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
    return x->delta - y->delta; /* at one instant, leaving before arriving */
}

/* The summary's scratch: per timer, its next (then previous) event; per
 * event, its start's end and whether a start ended at it; the changes. */
typedef struct walk {
    size_t *next;
    uint8_t *end, *matched;
    change *ch;
    size_t nch;
} walk;

/* Walks the trace backwards: each start ends at the next event of its timer
 *   CANCEL / EXPIRE           cancelled / expired, then;
 *   START, deadline not past  re-armed (a modify: the timer stays armed);
 *   START, deadline past      in a trace with EXPIRE events, an expiry the
 *                             trace did not see: it ends at its deadline;
 *   none                      still armed at the end, or if its deadline
 *                             passed before the end, an expiry not seen.
 * In a trace without EXPIRE events, a start whose deadline comes before the
 * next event of its timer (or the end) expires at its deadline. Counts the
 * events, the starts by their end and their delays, and adds a departure
 * (-1) at the end of every start that leaves the armed set. */
static void start_ends(const tkt_trace *t, tkb_trace_summary *s, walk *w) {
    int64_t dur = t->duration_ns;
    for (size_t k = 0; k < t->ntimers; k++)
        w->next[k] = SIZE_MAX;
    for (size_t i = t->count; i-- > 0;) {
        const tkt_event *e = &t->ev[i];
        s->by_op[e->op < 3 ? e->op : 0]++;
        size_t j = w->next[e->timer];
        w->next[e->timer] = i;
        if (e->op != TKT_START)
            continue;
        s->delays[s->ndelays++] = e->deadline_ns - e->t_ns;
        const tkt_event *f = j != SIZE_MAX ? &t->ev[j] : NULL;
        int64_t t_end;
        uint8_t *end = &w->end[i];
        if (!s->has_expire && e->deadline_ns <= (f != NULL ? f->t_ns : dur)) {
            *end = TKB_END_EXPIRED, t_end = e->deadline_ns;
        } else if (f == NULL) {
            *end = e->deadline_ns < dur ? TKB_END_UNSEEN : TKB_END_ARMED;
            t_end = e->deadline_ns < dur ? e->deadline_ns : dur;
        } else if (f->op != TKT_START) {
            *end = f->op == TKT_CANCEL ? TKB_END_CANCELLED : TKB_END_EXPIRED, t_end = f->t_ns;
            w->matched[j] = 1;
        } else if (e->deadline_ns < f->t_ns) {
            *end = TKB_END_UNSEEN, t_end = e->deadline_ns;
        } else {
            *end = TKB_END_REARMED, t_end = f->t_ns;
        }
        s->ends[*end]++;
        /* armed from the start (unless it continues a re-armed one) to its end */
        if (*end != TKB_END_REARMED && *end != TKB_END_ARMED)
            w->ch[w->nch++] = (change){t_end > e->t_ns ? t_end : e->t_ns, -1};
    }
}

/* Walks the trace forwards: an arrival (+1) at every start that does not
 * continue a re-armed one; the cancels and expiries that ended no start
 * (their timer was not armed) are counted. */
static void arrivals(const tkt_trace *t, tkb_trace_summary *s, walk *w) {
    for (size_t k = 0; k < t->ntimers; k++)
        w->next[k] = SIZE_MAX; /* now: the previous event of each timer */
    for (size_t i = 0; i < t->count; i++) {
        const tkt_event *e = &t->ev[i];
        size_t p = w->next[e->timer];
        w->next[e->timer] = i;
        if (e->op == TKT_START &&
            !(p != SIZE_MAX && t->ev[p].op == TKT_START && w->end[p] == TKB_END_REARMED))
            w->ch[w->nch++] = (change){e->t_ns, +1};
        else if (e->op == TKT_CANCEL && !w->matched[i])
            s->cancel_unarmed++;
        else if (e->op == TKT_EXPIRE && !w->matched[i])
            s->expire_unarmed++;
    }
}

/* Closes bucket b with `armed` timers at its end; the next starts there. */
static void close_bucket(tkb_trace_summary *s, size_t b, int64_t span, size_t armed) {
    s->pop_t[b] = (double)span * (double)(b + 1) / TKB_TRACE_NBUCKETS / 1e9;
    s->pop_end[b] = armed;
    if (armed > s->pop_max[b])
        s->pop_max[b] = armed;
    if (b + 1 < TKB_TRACE_NBUCKETS)
        s->pop_max[b + 1] = armed;
}

/* The armed timers over time, from the changes in time order: at the end of
 * each bucket, the most within it, the most ever and its instant, the mean. */
static void population(const tkt_trace *t, tkb_trace_summary *s, walk *w) {
    qsort(w->ch, w->nch, sizeof *w->ch, cmp_change);
    int64_t span = t->duration_ns > 0 ? t->duration_ns : 1, last_t = 0;
    size_t armed = 0, b = 0;
    double area = 0;
    for (size_t c = 0; c < w->nch; c++) {
        int64_t now = w->ch[c].t_ns;
        /* close the intervals that end before now */
        while (b < TKB_TRACE_NBUCKETS &&
               (double)now > (double)span * (double)(b + 1) / TKB_TRACE_NBUCKETS)
            close_bucket(s, b++, span, armed);
        area += (double)armed * (double)(now - last_t);
        last_t = now;
        armed = (size_t)((int64_t)armed + w->ch[c].delta);
        if (b < TKB_TRACE_NBUCKETS && armed > s->pop_max[b])
            s->pop_max[b] = armed;
        if (armed > s->max_armed)
            s->max_armed = armed, s->max_armed_t = now;
    }
    area += (double)armed * (double)(span - last_t);
    for (; b < TKB_TRACE_NBUCKETS; b++)
        close_bucket(s, b, span, armed);
    s->armed_at_end = armed;
    s->mean_armed = area / (double)span;
}

int tkb_trace_summarise(const tkt_trace *t, tkb_trace_summary *s) {
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < t->count; i++)
        s->has_expire |= t->ev[i].op == TKT_EXPIRE;
    for (size_t k = 0; k < t->ntimers; k++)
        s->by_cls[t->timers[k].cls < 3 ? t->timers[k].cls : 0]++;
    size_t n = t->count > 0 ? t->count : 1;
    walk w = {.next = malloc((t->ntimers > 0 ? t->ntimers : 1) * sizeof *w.next),
              .end = malloc(n),
              .matched = calloc(n, 1),
              .ch = malloc(2 * n * sizeof *w.ch)};
    s->delays = malloc(n * sizeof *s->delays);
    int rc = 1;
    if (w.next != NULL && w.end != NULL && w.matched != NULL && w.ch != NULL && s->delays != NULL) {
        start_ends(t, s, &w);
        arrivals(t, s, &w);
        population(t, s, &w);
        qsort(s->delays, s->ndelays, sizeof *s->delays, tkb_cmp_i64);
        rc = 0;
    }
    free(w.next), free(w.end), free(w.matched), free(w.ch);
    if (rc != 0)
        tkb_trace_summary_free(s);
    return rc;
}

void tkb_trace_summary_free(tkb_trace_summary *s) {
    free(s->delays);
    s->delays = NULL;
    s->ndelays = 0;
}

void tkb_trace_import_print(FILE *f, const tkt_import_stats *s) {
    fprintf(f, "  perf text     %zu lines; HZ %lld%s; hrtimer clock - perf clock %.6f s\n",
            s->lines, (long long)s->hz,
            s->hz == 0    ? " (no wheel timer kept)"
            : s->hz_found ? " (found from the jiffies)"
                          : " (given)",
            (double)s->hr_offset_ns / 1e9);
    fprintf(f,
            "  dropped       %zu cancels that were part of an expiry, %zu events of timers on "
            "another clock, %zu filtered out, %zu deadlines clamped; %zu events were out of "
            "time order (sorted)\n",
            s->expiry_cancels, s->other_clock, s->filtered, s->clamped, s->out_of_order);
    fprintf(f, "  by event      %-28s %10s %10s\n", "", "read", "skipped");
    for (unsigned k = 0; k < TKT_PERF_NEVENTS; k++)
        if (s->events[k] > 0)
            fprintf(f, "                %-28s %10zu %10zu\n", tkt_perf_event_name(k), s->events[k],
                    s->skipped[k]);
}

static int64_t pct(const tkb_trace_summary *s, double q) {
    if (s->ndelays == 0)
        return 0;
    size_t i = (size_t)(q * (double)(s->ndelays - 1) + 0.5);
    return s->delays[i < s->ndelays ? i : s->ndelays - 1];
}

static double share(size_t a, size_t b) {
    return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

void tkb_trace_summary_print(FILE *f, const tkt_trace *t, const tkb_trace_summary *s,
                             const tkt_import_stats *st) {
    char b1[32], b2[32];
    double secs = (double)t->duration_ns / 1e9;
    fprintf(f, "trace %s (%s)\n", t->name, t->source[0] ? t->source : "no source given");
    fprintf(f, "  events        %zu: %zu start, %zu cancel, %zu expire, over %s", t->count,
            s->by_op[TKT_START], s->by_op[TKT_CANCEL], s->by_op[TKT_EXPIRE],
            tkb_duration_text((double)t->duration_ns, b1, sizeof b1));
    if (secs > 0)
        fprintf(f, " (%.0f events/s, %.0f starts/s)", (double)t->count / secs,
                (double)s->by_op[TKT_START] / secs);
    fprintf(f, "\n  timers        %zu distinct: %zu wheel, %zu hrtimer, %zu of no class\n",
            t->ntimers, s->by_cls[TKT_CLS_WHEEL], s->by_cls[TKT_CLS_HRTIMER],
            s->by_cls[TKT_CLS_UNKNOWN]);
    fprintf(f, "  armed timers  mean %.1f, max %zu (at %s), %zu at the end%s\n", s->mean_armed,
            s->max_armed, tkb_duration_text((double)s->max_armed_t, b1, sizeof b1), s->armed_at_end,
            s->has_expire ? "" : " (no expire events: a timer expires at its deadline)");
    if (s->ndelays > 0) {
        static const struct {
            const char *name;
            double q;
        } qs[] = {{"min", 0},   {"p1", 0.01},  {"p10", 0.1},     {"p50", 0.5},
                  {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}, {"max", 1}};
        fprintf(f, "  delays        deadline - start time, over %zu starts:\n               ",
                s->ndelays);
        for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++)
            fprintf(f, " %s %s%s", qs[k].name,
                    tkb_duration_text((double)pct(s, qs[k].q), b2, sizeof b2),
                    k + 1 < sizeof qs / sizeof qs[0] ? "," : "\n");
    }
    size_t n = s->by_op[TKT_START];
    fprintf(f,
            "  starts        %zu: %zu expired (%.1f%%), %zu cancelled (%.1f%%), %zu re-armed "
            "before their deadline (%.1f%%), %zu still armed at the end (%.1f%%)\n",
            n, s->ends[TKB_END_EXPIRED], share(s->ends[TKB_END_EXPIRED], n),
            s->ends[TKB_END_CANCELLED], share(s->ends[TKB_END_CANCELLED], n),
            s->ends[TKB_END_REARMED], share(s->ends[TKB_END_REARMED], n), s->ends[TKB_END_ARMED],
            share(s->ends[TKB_END_ARMED], n));
    if (s->ends[TKB_END_UNSEEN] > 0)
        fprintf(f,
                "                and %zu (%.1f%%) whose deadline passed with no expiry in the "
                "trace (taken as expired at their deadline)\n",
                s->ends[TKB_END_UNSEEN], share(s->ends[TKB_END_UNSEEN], n));
    fprintf(f,
            "  unmatched     %zu cancels and %zu expiries of timers not armed (armed before "
            "the trace began, or events lost)\n",
            s->cancel_unarmed, s->expire_unarmed);
    if (st != NULL)
        tkb_trace_import_print(f, st);
    else if (t->meta != NULL && t->meta[0] != '\0') {
        fprintf(f, "  metadata\n");
        for (const char *m = t->meta; *m != '\0';) {
            const char *nl = strchr(m, '\n');
            size_t k = nl != NULL ? (size_t)(nl - m) : strlen(m);
            fprintf(f, "                %.*s\n", (int)k, m);
            m += k + (nl != NULL);
        }
    }
}

static FILE *open_in(const char *dir, const char *name) {
    char p[4096];
    int n = snprintf(p, sizeof p, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof p) {
        fprintf(stderr, "tkbench: trace stats: %s: path too long\n", dir);
        return NULL;
    }
    FILE *f = fopen(p, "w");
    if (f == NULL)
        fprintf(stderr, "tkbench: trace stats: cannot write %s: %s\n", p, strerror(errno));
    return f;
}

static bool close_ok(FILE *f) {
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

int tkb_trace_summary_write(const char *dir, const tkt_trace *t, const tkb_trace_summary *s,
                            const tkt_import_stats *st) {
    if (tkb_mkdir_p(dir) != 0) {
        fprintf(stderr, "tkbench: trace stats: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    FILE *f = open_in(dir, "summary.txt");
    if (f == NULL)
        return 1;
    tkb_trace_summary_print(f, t, s, st);
    bool ok = close_ok(f);
    if (ok && (f = open_in(dir, "population.dat")) != NULL) {
        fprintf(f, "# t_s armed_at_end armed_max (over each 1/%d of the trace)\n",
                TKB_TRACE_NBUCKETS);
        for (size_t b = 0; b < TKB_TRACE_NBUCKETS; b++)
            fprintf(f, "%.9f %zu %zu\n", s->pop_t[b], s->pop_end[b], s->pop_max[b]);
        ok = close_ok(f);
    } else {
        ok = false;
    }
    if (ok && (f = open_in(dir, "delays.dat")) != NULL) {
        fprintf(f, "# delay_ns share_of_starts_at_or_below\n");
        size_t n = s->ndelays, step = n > NCDF ? n / NCDF : 1;
        for (size_t i = 0; i < n; i += step)
            fprintf(f, "%lld %.6f\n", (long long)s->delays[i], (double)(i + 1) / (double)n);
        if (n > 0)
            fprintf(f, "%lld 1\n", (long long)s->delays[n - 1]);
        ok = close_ok(f);
    } else {
        ok = false;
    }
    return ok ? 0 : 1;
}

int tkb_trace_stats_write(const tkt_trace *t, const char *dir) {
    if (t == NULL || dir == NULL)
        return 1;
    tkb_trace_summary s;
    if (tkb_trace_summarise(t, &s) != 0) {
        fprintf(stderr, "tkbench: trace stats: out of memory\n");
        return 1;
    }
    int rc = tkb_trace_summary_write(dir, t, &s, NULL);
    tkb_trace_summary_free(&s);
    return rc;
}
