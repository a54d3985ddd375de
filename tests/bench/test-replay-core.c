/* SPDX-License-Identifier: MIT */
/* The core-level replay (bench/replay/core-level.c) on hand-built traces: the
 * reference model gives the expiries worked out by hand below, every engine
 * core and strawman matches it, a peer off the grid is refused, and a wrong
 * peer or a perturbed expiry makes the check fail. Linked with every tkbench
 * source but the CLI (tests/bench/tests.cmake). No timing is asserted. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "util.h"

/* What the command line defines (bench/cli/ is not linked). */
tkb_run tkb_the_run;
void tkb_progress_enter(tkb_case *c) {
    (void)c;
}

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#define MS TKB_NS_PER_MS
#define US INT64_C(1000)

enum { A, B, C, D, E, NTIMERS };

/* One of each case the driver must handle: a deadline on a grid point, a
 * modify, a cancel of a timer that is not armed (never armed, and already
 * expired), a source's EXPIRE event (skipped), a timer armed already due just
 * after a grid point expired (it joins that grid point), a restart of an
 * expired timer, a cancel of an armed timer, and the final drain. */
static const tkt_event tiny_events[] = {
    {100 * US, 2500 * US, A, TKT_START},  {200 * US, 1 * MS, B, TKT_START},
    {300 * US, 5 * MS, C, TKT_START},     {400 * US, 0, D, TKT_CANCEL},
    {1500 * US, 2200 * US, C, TKT_START}, {1600 * US, 0, A, TKT_EXPIRE},
    {3500 * US, 2900 * US, D, TKT_START}, {4300 * US, 4 * MS, B, TKT_START},
    {6 * MS, 0, C, TKT_CANCEL},           {7 * MS, 100 * MS, E, TKT_START},
    {8 * MS, 0, E, TKT_CANCEL},           {9 * MS, 20 * MS, A, TKT_START},
};

static void tiny_trace(tkt_trace *t, tkt_event *ev, tkt_timer_info *ti) {
    static const char *const names[NTIMERS] = {"A", "B", "C", "D", "E"};
    memset(t, 0, sizeof *t);
    memcpy(ev, tiny_events, sizeof tiny_events);
    for (int i = 0; i < NTIMERS; i++)
        ti[i] = (tkt_timer_info){.id = names[i], .function = ""};
    t->ev = ev;
    t->count = TKB_COUNT(tiny_events);
    t->timers = ti;
    t->ntimers = NTIMERS;
    t->duration_ns = 9 * MS;
    snprintf(t->name, sizeof t->name, "tiny");
}

/* Batches as "t:{timers} t:{timers}", e.g. "1:B 3:ACD". */
static void batches_text(const tkb_replay_ref *r, char *out, size_t len) {
    size_t n = 0;
    out[0] = '\0';
    for (size_t b = 0; b < r->nbatches && n < len; b++) {
        n += (size_t)snprintf(out + n, len - n, "%s%" PRId64 ":", b ? " " : "", r->batch_t[b] / MS);
        for (size_t j = r->batch_off[b]; j < r->batch_off[b + 1] && n < len; j++)
            n += (size_t)snprintf(out + n, len - n, "%c", 'A' + (int)r->timers[j]);
    }
}

static void test_reference(const tkt_trace *t) {
    tkb_replay_ref r;
    char err[256], got[256];
    CHECK(tkb_replay_ref_build(t, 1 * MS, &r, err, sizeof err) == 0, "%s", err);
    batches_text(&r, got, sizeof got);
    CHECK(strcmp(got, "1:B 3:ACD 4:B 20:A") == 0, "step 1ms: %s", got);
    CHECK(r.events == 11, "%" PRIu64, r.events);
    CHECK(r.starts == 7 && r.modifies == 1 && r.cancels == 1 && r.cancels_unarmed == 2,
          "starts %" PRIu64 " modifies %" PRIu64 " cancels %" PRIu64 " unarmed %" PRIu64, r.starts,
          r.modifies, r.cancels, r.cancels_unarmed);
    CHECK(r.expired == 6 && r.peak == 3 && r.max_batch == 3, "expired %" PRIu64 " peak %zu max %zu",
          r.expired, r.peak, r.max_batch);
    tkb_replay_ref_free(&r);
    /* step 2 ms: B's restart at 4.3 ms joins the grid point 4 ms expired before it */
    CHECK(tkb_replay_ref_build(t, 2 * MS, &r, err, sizeof err) == 0, "%s", err);
    batches_text(&r, got, sizeof got);
    CHECK(strcmp(got, "2:B 4:ABCD 20:A") == 0, "step 2ms: %s", got);
    tkb_replay_ref_free(&r);
    /* bad input: a step of 0, an event out of time order, a timer out of range */
    CHECK(tkb_replay_ref_build(t, 0, &r, err, sizeof err) != 0, "step 0");
    tkt_trace bad = *t;
    tkt_event ev[TKB_COUNT(tiny_events)];
    memcpy(ev, tiny_events, sizeof ev);
    bad.ev = ev;
    ev[3].t_ns = 50 * US;
    CHECK(tkb_replay_ref_build(&bad, 1 * MS, &r, err, sizeof err) != 0 && strstr(err, "event 3"),
          "out of order: %s", err);
    memcpy(ev, tiny_events, sizeof ev);
    ev[2].timer = NTIMERS;
    CHECK(tkb_replay_ref_build(&bad, 1 * MS, &r, err, sizeof err) != 0 && strstr(err, "event 2"),
          "timer out of range: %s", err);
}

static tkb_peer peer_of(const char *spec) {
    tkb_peer p;
    char err[1024];
    memset(&p, 0, sizeof p);
    CHECK(tkb_peer_parse(spec, &p, err, sizeof err) == 0, "%s: %s", spec, err);
    return p;
}

/* A wrong peer: the heap's core, but its expire_at forgets the second timer
 * of every batch. */
typedef struct forget_ctx {
    void (*fired)(void *ctx, char *timer);
    void *ctx;
    size_t seen;
} forget_ctx;
static void forget_second(void *ctx, char *timer) {
    forget_ctx *f = ctx;
    if (f->seen++ != 1)
        f->fired(f->ctx, timer);
}
static size_t forgetful_expire_at(void *self, int64_t now, void (*fired)(void *, char *),
                                  void *ctx) {
    forget_ctx f = {fired, ctx, 0};
    return tkb_core_engine.expire_at(self, now, forget_second, &f);
}

static void test_peers(const tkt_trace *t) {
    /* every engine core of the registry at its defaults, a 1 ms wheel, the strawmen */
    const char *specs[32];
    size_t n = 0;
    for (size_t e = 0; e < tk_engine_count() && n < 24; e++)
        if (tk_engine_at(e)->core != NULL)
            specs[n++] = tk_engine_at(e)->name;
    specs[n++] = "wheel:tick=1ms,slots=16";
    specs[n++] = "wheel:tick=500us,slots=1024";
    specs[n++] = "naive-heap";
    specs[n++] = "sorted-list";
    CHECK(n >= 5, "only %zu peers", n);
    for (int step = 1; step <= 2; step++) {
        tkb_replay_ref r;
        char err[512];
        CHECK(tkb_replay_ref_build(t, step * MS, &r, err, sizeof err) == 0, "%s", err);
        for (size_t i = 0; i < n; i++) {
            tkb_peer p = peer_of(specs[i]);
            if (!tkb_replay_core_fits(&p, step * MS, err, sizeof err)) {
                printf("note: %s: %s\n", specs[i], err);
                CHECK(strstr(specs[i], "wheel:") == NULL, "%s refused", specs[i]);
                continue;
            }
            for (int timed = 0; timed <= 1; timed++) {
                tkb_replay_core_opts o = {.timed_ops = timed, .perturb = -1};
                tkb_replay_core_result res;
                int rc = tkb_replay_core(t, &r, &p, &o, &res, err, sizeof err);
                CHECK(rc == 0, "%s step %dms: %s", specs[i], step, err);
                CHECK(res.total_ns >= 0 && res.event_ns >= 0, "%s", specs[i]);
                if (timed)
                    CHECK(res.start_ns >= 0 && res.modify_ns >= 0 && res.cancel_ns >= 0 &&
                              res.expire_ns >= 0,
                          "%s: an operation kind has no time", specs[i]);
            }
            printf("ok: %s at step %d ms matches the reference\n", p.spec, step);
        }
        tkb_replay_ref_free(&r);
    }
}

static void test_check_fails(const tkt_trace *t) {
    tkb_replay_ref r;
    char err[512];
    CHECK(tkb_replay_ref_build(t, 1 * MS, &r, err, sizeof err) == 0, "%s", err);
    tkb_peer p = peer_of("heap");
    tkb_replay_core_result res;
    /* a perturbed expiry: the first one (B, at 1 ms) recorded at 2 ms */
    tkb_replay_core_opts o = {.perturb = 0};
    int rc = tkb_replay_core(t, &r, &p, &o, &res, err, sizeof err);
    CHECK(rc == 1, "perturbed: rc %d", rc);
    CHECK(strstr(err, "peer heap") && strstr(err, "virtual time 1000000 ns") &&
              strstr(err, "timer 1 (B)"),
          "perturbed: %s", err);
    printf("perturbed: %s\n", err);
    /* a wrong peer */
    tkb_core_peer_ops wrong = tkb_core_engine;
    wrong.expire_at = forgetful_expire_at;
    p.core = &wrong;
    o.perturb = -1;
    rc = tkb_replay_core(t, &r, &p, &o, &res, err, sizeof err);
    CHECK(rc == 1, "wrong peer: rc %d", rc);
    CHECK(strstr(err, "virtual time 3000000 ns") && strstr(err, "timer 0 (A) should expire then"),
          "wrong peer: %s", err);
    printf("wrong peer: %s\n", err);
    /* a peer off the grid: a 2 ms wheel at step 1 ms */
    tkb_peer w = peer_of("wheel:tick=2ms,slots=64");
    CHECK(!tkb_replay_core_fits(&w, 1 * MS, err, sizeof err), "a 2 ms wheel on a 1 ms grid");
    CHECK(strstr(err, "wheel:") && strstr(err, "step 1ms"), "%s", err);
    rc = tkb_replay_core(t, &r, &w, &o, &res, err, sizeof err);
    CHECK(rc == -1, "off-grid replay: rc %d", rc);
    tkb_replay_ref_free(&r);
}

static void test_synth_and_durations(void) {
    tkt_trace t;
    CHECK(tkb_replay_synth(20000, 0, 7, &t) == 0, "synth");
    tkb_replay_ref r;
    char err[512];
    CHECK(tkb_replay_ref_build(&t, 1 * MS, &r, err, sizeof err) == 0, "%s", err);
    CHECK(r.events == 20000 && r.expired > 0 && r.modifies > 0 && r.cancels > 0, "synth counts");
    const char *specs[] = {"heap", "wheel:tick=1ms,slots=1024", "naive-heap"};
    for (size_t i = 0; i < TKB_COUNT(specs); i++) {
        tkb_peer p = peer_of(specs[i]);
        tkb_replay_core_opts o = {.timed_ops = true, .perturb = -1};
        tkb_replay_core_result res;
        CHECK(tkb_replay_core(&t, &r, &p, &o, &res, err, sizeof err) == 0, "%s: %s", specs[i], err);
    }
    tkb_replay_ref_free(&r);
    tkb_replay_synth_free(&t);
    int64_t ns = 0;
    CHECK(tkb_parse_duration("1ms", &ns) == 0 && ns == 1 * MS, "1ms");
    CHECK(tkb_parse_duration("100us", &ns) == 0 && ns == 100 * US, "100us");
    CHECK(tkb_parse_duration("0.5ms", &ns) == 0 && ns == 500 * US, "0.5ms");
    CHECK(tkb_parse_duration("2s", &ns) == 0 && ns == 2 * TKB_NS_PER_S, "2s");
    CHECK(tkb_parse_duration("250", &ns) != 0, "no unit");
    CHECK(tkb_parse_duration("0ms", &ns) != 0, "zero");
    CHECK(tkb_parse_duration("-1ms", &ns) != 0, "negative");
    CHECK(tkb_parse_duration("1.5ns", &ns) != 0, "a fraction of a ns");
    CHECK(tkb_parse_duration("1xs", &ns) != 0, "unknown unit");
}

int main(void) {
    tkb_the_run.suite = &tkb_suites[TKB_SMOKE];
    tkt_trace t;
    tkt_event ev[TKB_COUNT(tiny_events)];
    tkt_timer_info ti[NTIMERS];
    tiny_trace(&t, ev, ti);
    test_reference(&t);
    test_peers(&t);
    test_check_fails(&t);
    test_synth_and_durations();
    if (failures > 0) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
