/* SPDX-License-Identifier: MIT */
/* One input through both trace parsers, with every promise checked: the
 * status is TKT_OK or TKT_EPARSE, a refusal names the input ("NAME:LINE: ..."
 * or "NAME: ..."), an accepted trace passes tkt_check() and reads back the
 * same from the CSV tkt_write_csv() makes of it. Shared by tk_trace_mutate
 * (tests/trace/) and the libFuzzer target tk_fuzz_trace (fuzz/). */
#ifndef TKT_FUZZ_ONE_H
#define TKT_FUZZ_ONE_H

#include "trace.h"

#include <stdlib.h>
#include <string.h>

/* Prints why and returns false. */
static bool tkt_fuzz_fail(const char *what, const char *detail) {
    fprintf(stderr, "trace fuzz: %s: %s\n", what, detail);
    return false;
}

static bool tkt_fuzz_refusal_ok(const char *name, int rc, const char *err) {
    size_t n = strlen(name);
    if (rc != TKT_EPARSE)
        return tkt_fuzz_fail("unexpected status", err);
    if (strncmp(err, name, n) != 0 || err[n] != ':')
        return tkt_fuzz_fail("message does not start with the file name", err);
    const char *p = err + n + 1;
    if (*p == ' ')
        return true; /* "NAME: ..." */
    if (*p < '1' || *p > '9')
        return tkt_fuzz_fail("no line number", err);
    while (*p >= '0' && *p <= '9')
        p++;
    return p[0] == ':' && p[1] == ' ' ? true : tkt_fuzz_fail("malformed NAME:LINE:", err);
}

/* A trace accepted: it holds its promises and survives CSV and back. */
static bool tkt_fuzz_accepted_ok(const tkt_trace *t) {
    char err[512];
    if (!tkt_check(t, err, sizeof err))
        return tkt_fuzz_fail("tkt_check", err);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return tkt_fuzz_fail("open_memstream", "failed");
    int rc = tkt_write_csv(t, f, err, sizeof err);
    fclose(f);
    bool ok = true;
    tkt_trace u;
    if (rc == TKT_EPARSE) {
        ok = true; /* a hand-written timer name the CSV cannot hold (a comma) */
    } else if (rc != TKT_OK) {
        ok = tkt_fuzz_fail("tkt_write_csv", err);
    } else if (tkt_parse_csv("again.csv", buf, len, &u, err, sizeof err) != TKT_OK) {
        ok = tkt_fuzz_fail("written CSV not read back", err);
    } else {
        ok = u.count == t->count && u.ntimers == t->ntimers;
        for (size_t i = 0; ok && i < t->count; i++) /* field by field: no padding compared */
            ok = u.ev[i].t_ns == t->ev[i].t_ns && u.ev[i].deadline_ns == t->ev[i].deadline_ns &&
                 u.ev[i].timer == t->ev[i].timer && u.ev[i].op == t->ev[i].op;
        for (size_t k = 0; ok && k < t->ntimers; k++)
            ok = strcmp(u.timers[k].id, t->timers[k].id) == 0 &&
                 strcmp(u.timers[k].function, t->timers[k].function) == 0 &&
                 u.timers[k].cls == t->timers[k].cls;
        if (!ok)
            tkt_fuzz_fail("written CSV read back differs", t->name);
        tkt_free(&u);
    }
    free(buf);
    return ok;
}

/* Both parsers on data[0..len); false (after a message) on a broken promise.
 * accepted (may be NULL) counts the parses that gave a trace. */
static bool tkt_fuzz_one(const char *data, size_t len, size_t *accepted) {
    size_t dummy = 0;
    if (accepted == NULL)
        accepted = &dummy;
    char err[512];
    tkt_trace t;
    bool ok = true;
    int rc = tkt_parse_csv("fuzz.csv", data, len, &t, err, sizeof err);
    if (rc == TKT_OK) {
        ++*accepted;
        ok = tkt_fuzz_accepted_ok(&t);
        tkt_free(&t);
    } else {
        ok = tkt_fuzz_refusal_ok("fuzz.csv", rc, err) && t.ev == NULL;
    }
    static const tkt_perf_opts opts[] = {{.hz = 0},
                                         {.hz = 250, .functions = "*_timeout,tick*"},
                                         {.cpus = "1", .keep = TKT_KEEP_WHEEL}};
    for (size_t i = 0; ok && i < sizeof opts / sizeof opts[0]; i++) {
        tkt_import_stats st;
        rc = tkt_parse_perf("fuzz.txt", data, len, &opts[i], &t, &st, err, sizeof err);
        if (rc == TKT_OK) {
            ++*accepted;
            ok = tkt_fuzz_accepted_ok(&t);
            tkt_free(&t);
        } else {
            ok = tkt_fuzz_refusal_ok("fuzz.txt", rc, err) && t.ev == NULL;
        }
    }
    return ok;
}

#endif
