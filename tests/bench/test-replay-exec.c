/* SPDX-License-Identifier: MIT */
/* tkb_replay_exec() (bench/replay/executor-level.c): a synthetic trace, made in memory,
 * replayed at speeds 1 and 4 on every executor-level peer this build has.
 *
 * The trace mixes the cases a real one holds, one kind per timer, with at
 * least 200 ms of trace time (50 ms of wall time at speed 4) between a
 * deadline and any other event on that timer, so which of firing and
 * cancelling comes first does not depend on the machine's load:
 *   plain start; modify to a later and to an earlier deadline; cancel before
 *   the deadline; cancel after the firing; a start already due (its deadline
 *   before its own time, or equal); start again after a firing, then cancel
 *   twice; cancel of a never-started timer, then a start modified four times.
 * Each run must: count every event as the kind says, fire each timer exactly
 * as often as the kind says (cancelled ones never), fire none early (the
 * baselines: no earlier than their clocks' resolution allows), keep
 * the median lateness under 50 ms, and take at least the trace's span of
 * wall time. A second trace churns a few timers (thousands of modifies) to
 * drive the spare-storage paths. Then the failure paths: bad arguments and
 * traces, a time limit, a service that cannot be created, a schedule that
 * fails, timers that never fire, the drain limit; and the progress lines of a
 * replay longer than 5 s. No assertion on speed. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/harness.h"
#include "replay/replay.h"

/* bench/cli/ is not linked: the run's globals as tkbench's CLI leaves them before a run */
tkb_run tkb_the_run = {.timer_slack_ns = -1};
void tkb_progress_enter(tkb_case *c) {
    (void)c;
}

static int failures;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...) {
    if (ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

#define MS TKB_NS_PER_MS
#define KINDS 8
#define NTIMERS 320

/* The counts a replay must report, and each timer's firings. */
typedef struct expect {
    uint64_t starts, modifies, cancels, cancels_idle, cancels_missed, fired;
    uint32_t fires[NTIMERS];
    int64_t last_fire_ns; /* latest deadline that fires, trace time */
    int64_t first_ns;
} expect;

typedef struct builder {
    tkt_event ev[8192];
    size_t n;
} builder;

static void add(builder *b, int64_t t, uint32_t timer, tkt_op op, int64_t deadline) {
    if (b->n == TKB_COUNT(b->ev))
        abort(); /* the test's traces fit */
    b->ev[b->n++] = (tkt_event){.t_ns = t, .deadline_ns = deadline, .timer = timer, .op = op};
}

/* Sorts by time; events of one timer never share a time, and qsort's order
 * among equal times of different timers does not matter. */
static int by_time(const void *a, const void *b) {
    const tkt_event *x = a, *y = b;
    return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
}

static void fire(expect *e, uint32_t i, int64_t deadline) {
    e->fires[i]++;
    e->fired++;
    if (deadline > e->last_fire_ns)
        e->last_fire_ns = deadline;
}

static void build_trace(builder *b, tkt_trace *t, expect *e) {
    memset(e, 0, sizeof *e);
    b->n = 0;
    tkb_rng rng = {TKB_SEED + 77};
    for (uint32_t i = 0; i < NTIMERS; i++) {
        int64_t t0 = tkb_rng_range(&rng, 0, 600) * MS;
        switch (i % KINDS) {
        case 0: { /* plain start; the source saw it expire (EXPIRE is not issued) */
            int64_t d = t0 + tkb_rng_range(&rng, 10, 300) * MS;
            add(b, t0, i, TKT_START, d);
            add(b, d, i, TKT_EXPIRE, 0);
            e->starts++;
            fire(e, i, d);
            break;
        }
        case 1: /* modify to a later deadline */
            add(b, t0, i, TKT_START, t0 + 300 * MS);
            add(b, t0 + 100 * MS, i, TKT_START, t0 + 500 * MS);
            e->starts++;
            e->modifies++;
            fire(e, i, t0 + 500 * MS);
            break;
        case 2: /* modify to an earlier deadline */
            add(b, t0, i, TKT_START, t0 + 600 * MS);
            add(b, t0 + 100 * MS, i, TKT_START, t0 + 300 * MS);
            e->starts++;
            e->modifies++;
            fire(e, i, t0 + 300 * MS);
            break;
        case 3: /* cancelled before its deadline: never fires */
            add(b, t0, i, TKT_START, t0 + 400 * MS);
            add(b, t0 + 150 * MS, i, TKT_CANCEL, 0);
            e->starts++;
            e->cancels++;
            break;
        case 4: /* cancelled after it fired */
            add(b, t0, i, TKT_START, t0 + 50 * MS);
            add(b, t0 + 300 * MS, i, TKT_CANCEL, 0);
            e->starts++;
            e->cancels++;
            e->cancels_missed++;
            fire(e, i, t0 + 50 * MS);
            break;
        case 5: { /* already due when started (deadline before its time, or equal) */
            int64_t d = t0 - (i & 8 ? 30 * MS : 0);
            add(b, t0, i, TKT_START, d);
            e->starts++;
            fire(e, i, d);
            break;
        }
        case 6: /* fires, started again, fires again, cancelled too late, then twice */
            add(b, t0, i, TKT_START, t0 + 50 * MS);
            add(b, t0 + 300 * MS, i, TKT_START, t0 + 350 * MS);
            add(b, t0 + 600 * MS, i, TKT_CANCEL, 0);
            add(b, t0 + 650 * MS, i, TKT_CANCEL, 0);
            e->starts += 2;
            e->cancels++;
            e->cancels_missed++;
            e->cancels_idle++;
            fire(e, i, t0 + 50 * MS);
            fire(e, i, t0 + 350 * MS);
            break;
        default: /* cancel of a timer never started; then a start modified four times */
            add(b, t0, i, TKT_CANCEL, 0);
            add(b, t0 + 1 * MS, i, TKT_START, t0 + 400 * MS);
            for (int k = 1; k <= 4; k++)
                add(b, t0 + 1 * MS + k * 50 * MS, i, TKT_START, t0 + 400 * MS + k * 10 * MS);
            e->cancels_idle++;
            e->starts++;
            e->modifies += 4;
            fire(e, i, t0 + 440 * MS);
            break;
        }
    }
    qsort(b->ev, b->n, sizeof b->ev[0], by_time);
    *t = (tkt_trace){.name = "synthetic", .ev = b->ev, .count = b->n, .ntimers = NTIMERS};
    t->duration_ns = b->ev[b->n - 1].t_ns;
    e->first_ns = b->ev[0].t_ns;
}

/* How early libuv and libevent may fire, by their own clocks: libevent reads
 * CLOCK_MONOTONIC_COARSE unless told to be precise (EVENT_PRECISE_TIMER), so
 * its deadlines are up to a tick of that clock early; libuv's loop time is in
 * whole milliseconds, read when the loop last woke. Their resolution plus 10 ms.
 * libev's peer updates the loop's time before it starts timers and asio takes
 * absolute deadlines: they are held to no early firing, as timerkit's peers. */
static int64_t baseline_early_ns(void) {
    struct timespec res = {0, 0};
    clock_getres(CLOCK_MONOTONIC_COARSE, &res);
    /* plus 10 ms: a baseline's cached time is as old as its loop's last
     * wake-up, which a machine busy with other tests delays (libevent was
     * seen 7.2 ms early with a 4 ms clock); timerkit's peers are checked
     * for no early firing at all, above */
    return (int64_t)res.tv_sec * TKB_NS_PER_S + res.tv_nsec + 10 * MS;
}

/* Churn: CHURN_TIMERS timers, each modified every 10 ms for half a second,
 * its deadline always 300 ms ahead, then left to fire: thousands of
 * cancelled schedules, more than a hand-off peer keeps waiting before a
 * sync() (bench/replay/executor-level.c, RX_QSYNC) and more than the wheel releases
 * between two of its passes. */
#define CHURN_TIMERS 64
static void build_churn(builder *b, tkt_trace *t, expect *e) {
    memset(e, 0, sizeof *e);
    b->n = 0;
    for (uint32_t i = 0; i < CHURN_TIMERS; i++) {
        int64_t t0 = i * MS;
        add(b, t0, i, TKT_START, t0 + 300 * MS);
        e->starts++;
        int64_t last = t0;
        for (int64_t m = t0 + 10 * MS; m <= 500 * MS; m += 10 * MS) {
            add(b, m, i, TKT_START, m + 300 * MS);
            e->modifies++;
            last = m;
        }
        fire(e, i, last + 300 * MS);
    }
    qsort(b->ev, b->n, sizeof b->ev[0], by_time);
    *t = (tkt_trace){.name = "churn", .ev = b->ev, .count = b->n, .ntimers = CHURN_TIMERS};
    t->duration_ns = b->ev[b->n - 1].t_ns;
    e->first_ns = b->ev[0].t_ns;
}

/* A peer that must never fire early (see baseline_early_ns()). */
static bool never_early(const tkb_peer *p) {
    return strcmp(p->kind, "engine") == 0 || strcmp(p->spec, "libev") == 0 ||
           strcmp(p->spec, "asio") == 0;
}

static void replay_peer(const tkb_peer *p, const tkt_trace *t, const expect *e, double speed) {
    tkb_hist h;
    uint32_t fires[NTIMERS] = {0};
    char err[512];
    if (tkb_hist_init(&h) != 0) {
        check(false, "out of memory");
        return;
    }
    tkb_replay_exec_result r = {.late = &h, .fires = fires};
    tkb_replay_exec_opts o = {.speed = speed, .timer_slack_ns = 1, .max_seconds = 60};
    int rc = tkb_replay_exec(t, p, &o, &r, err, sizeof err);
    const char *id = p->spec;
    check(rc == 0, "%s x%g: replay failed: %s", id, speed, err);
    if (rc == 0) {
        check(r.starts == e->starts, "%s x%g: starts %llu, want %llu", id, speed,
              (unsigned long long)r.starts, (unsigned long long)e->starts);
        check(r.modifies == e->modifies, "%s x%g: modifies %llu, want %llu", id, speed,
              (unsigned long long)r.modifies, (unsigned long long)e->modifies);
        check(r.cancels == e->cancels, "%s x%g: cancels %llu, want %llu", id, speed,
              (unsigned long long)r.cancels, (unsigned long long)e->cancels);
        check(r.cancels_idle == e->cancels_idle, "%s x%g: idle cancels %llu, want %llu", id, speed,
              (unsigned long long)r.cancels_idle, (unsigned long long)e->cancels_idle);
        check(r.cancels_missed == e->cancels_missed, "%s x%g: missed cancels %llu, want %llu", id,
              speed, (unsigned long long)r.cancels_missed, (unsigned long long)e->cancels_missed);
        check(r.modifies_late == 0, "%s x%g: %llu modifies lost to a firing", id, speed,
              (unsigned long long)r.modifies_late);
        check(r.fired == e->fired, "%s x%g: fired %llu, want %llu", id, speed,
              (unsigned long long)r.fired, (unsigned long long)e->fired);
        check(r.fired_after_cancel == 0, "%s x%g: %llu cancelled timers fired", id, speed,
              (unsigned long long)r.fired_after_cancel);
        check(r.unfired == 0, "%s x%g: %llu timers left unfired", id, speed,
              (unsigned long long)r.unfired);
        for (uint32_t i = 0; i < NTIMERS; i++)
            check(fires[i] == e->fires[i], "%s x%g: timer %u (kind %u) fired %u times, want %u", id,
                  speed, i, i % KINDS, fires[i], e->fires[i]);
        check(h.count == e->fired, "%s x%g: %llu lateness records, want %llu", id, speed,
              (unsigned long long)h.count, (unsigned long long)e->fired);
        if (never_early(p))
            check(h.early_count == 0, "%s x%g: %llu timers fired early (min %lld ns)", id, speed,
                  (unsigned long long)h.early_count, (long long)h.min);
        else
            check(h.min >= -baseline_early_ns(), "%s x%g: a timer fired %lld ns early", id, speed,
                  (long long)-h.min);
        int64_t p50 = tkb_hist_percentile(&h, 50);
        check(p50 < 50 * MS, "%s x%g: median lateness %lld ns", id, speed, (long long)p50);
        /* the last firing is no sooner than its deadline (less what the peer may
         * fire early), the first event no sooner than its time (it may be late) */
        int64_t span = (int64_t)((double)(e->last_fire_ns - e->first_ns) / speed);
        int64_t slack = 50 * MS + (never_early(p) ? 0 : baseline_early_ns());
        check(r.wall_ns >= span - slack, "%s x%g: wall %lld ns, shorter than the trace's %lld ns",
              id, speed, (long long)r.wall_ns, (long long)span);
        check(r.cpu_ns > 0, "%s x%g: no CPU time", id, speed);
        check(r.rss_peak_delta_bytes >= 0, "%s x%g: negative RSS delta", id, speed);
        printf("%-8s %-36s x%g  fired %4llu  late p50 %8.1f us  p99 %8.1f us  max %8.1f us  early "
               "%llu  issue_late %llu  spare %llu  wall %6.1f ms  cpu %5.1f ms  wakeups %llu\n",
               t->name, id, speed, (unsigned long long)r.fired, (double)p50 / 1e3,
               (double)tkb_hist_percentile(&h, 99) / 1e3, (double)h.max / 1e3,
               (unsigned long long)h.early_count, (unsigned long long)r.issue_late,
               (unsigned long long)r.spare_slots, (double)r.wall_ns / 1e6, (double)r.cpu_ns / 1e6,
               (unsigned long long)r.wakeups);
    }
    tkb_hist_destroy(&h);
}

/* ---- fake services for the failure paths ------------------------------------ */
/* Services alive (created, not destroyed): the failure paths must not leak one. */
static int fake_alive;

static int fake_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    (void)p;
    (void)o;
    *out = &fake_alive;
    fake_alive++;
    return 0;
}
static int fake_create_fails(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    (void)p;
    (void)o;
    (void)out;
    return -1;
}
static void fake_destroy(void *self) {
    (void)self;
    fake_alive--;
}
/* Accepts the warm-up (no storage), refuses every timer with storage. */
static int fake_schedule_fails(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    (void)self;
    (void)f;
    (void)delay_ns;
    return timer == NULL ? 0 : -1;
}
/* Accepts everything and never fires. */
static int fake_schedule_void(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    (void)self;
    (void)timer;
    (void)f;
    (void)delay_ns;
    return 0;
}
static int fake_cancel(void *self, void *timer) {
    (void)self;
    (void)timer;
    return 0;
}

static const tkb_svc_ops fake_no_create = {.timer_size = 8,
                                           .create = fake_create_fails,
                                           .destroy = fake_destroy,
                                           .schedule = fake_schedule_void,
                                           .cancel = fake_cancel};
static const tkb_svc_ops fake_no_schedule = {.timer_size = 8,
                                             .create = fake_create,
                                             .destroy = fake_destroy,
                                             .schedule = fake_schedule_fails,
                                             .cancel = fake_cancel};
static const tkb_svc_ops fake_black_hole = {.timer_size = 8,
                                            .create = fake_create,
                                            .destroy = fake_destroy,
                                            .schedule = fake_schedule_void,
                                            .cancel = fake_cancel};

static int run_one(const tkt_trace *t, const tkb_peer *p, tkb_replay_exec_opts o,
                   tkb_replay_exec_result *r, char *err, size_t len) {
    return tkb_replay_exec(t, p, &o, r, err, len);
}

static void failure_paths(const tkb_peer *heap) {
    tkb_hist h;
    if (tkb_hist_init(&h) != 0) {
        check(false, "out of memory");
        return;
    }
    char err[512];
    tkb_replay_exec_result r = {.late = &h};
    tkb_replay_exec_opts o = {.speed = 1, .timer_slack_ns = -1};
    tkt_event ev[3] = {
        {.t_ns = 0, .deadline_ns = 50 * MS, .timer = 0, .op = TKT_START},
        {.t_ns = 10 * MS, .deadline_ns = 60 * MS, .timer = 1, .op = TKT_START},
        {.t_ns = 20 * MS, .timer = 0, .op = TKT_CANCEL},
    };
    tkt_trace t = {.name = "small", .ev = ev, .count = 3, .ntimers = 2, .duration_ns = 20 * MS};

    check(tkb_replay_exec(NULL, heap, &o, &r, err, sizeof err) == -1 && err[0],
          "NULL trace accepted");
    check(tkb_replay_exec(&t, NULL, &o, &r, err, sizeof err) == -1 && err[0], "NULL peer accepted");
    check(tkb_replay_exec(&t, heap, NULL, &r, err, sizeof err) == -1 && err[0],
          "NULL options accepted");
    check(tkb_replay_exec(&t, heap, &o, NULL, err, sizeof err) == -1 && err[0],
          "NULL result accepted");
    check(tkb_replay_exec(NULL, heap, &o, &r, NULL, 0) == -1,
          "NULL trace accepted without an error buffer");
    tkb_replay_exec_result nohist = {0};
    check(run_one(&t, heap, o, &nohist, err, sizeof err) == -1 && err[0],
          "result without a histogram accepted");
    const double bad_speeds[] = {0, -1, NAN, INFINITY};
    for (size_t k = 0; k < TKB_COUNT(bad_speeds); k++) {
        tkb_replay_exec_opts b = o;
        b.speed = bad_speeds[k];
        check(run_one(&t, heap, b, &r, err, sizeof err) == -1 && strstr(err, "speed"),
              "speed %g accepted", bad_speeds[k]);
    }
    tkb_peer nosvc = *heap;
    nosvc.svc = NULL;
    check(run_one(&t, &nosvc, o, &r, err, sizeof err) == -1 && strstr(err, "executor level"),
          "peer without an executor level accepted (%s)", err);

    /* bad traces */
    tkt_event swapped[3] = {ev[1], ev[0], ev[2]};
    tkt_trace bad = t;
    bad.ev = swapped;
    check(run_one(&bad, heap, o, &r, err, sizeof err) == -1 && strstr(err, "out of order"),
          "events out of order accepted (%s)", err);
    tkt_event range[3] = {ev[0], ev[1], ev[2]};
    range[1].timer = 2;
    bad.ev = range;
    check(run_one(&bad, heap, o, &r, err, sizeof err) == -1 && strstr(err, "out of range"),
          "timer out of range accepted (%s)", err);
    tkt_event badop[3] = {ev[0], ev[1], ev[2]};
    badop[2].op = 7;
    bad.ev = badop;
    check(run_one(&bad, heap, o, &r, err, sizeof err) == -1 && strstr(err, "operation"),
          "unknown operation accepted (%s)", err);
    tkt_trace empty = {.name = "empty"};
    r.starts = 99;
    check(run_one(&empty, heap, o, &r, err, sizeof err) == 0 && r.starts == 0 && r.fired == 0,
          "empty trace: %s", err);

    /* the time limit: refused before anything starts */
    tkt_event longev[2] = {
        {.t_ns = 0, .deadline_ns = 100 * MS, .timer = 0, .op = TKT_START},
        {.t_ns = 10 * TKB_NS_PER_S, .deadline_ns = 0, .timer = 0, .op = TKT_CANCEL},
    };
    tkt_trace longt = {.name = "long", .ev = longev, .count = 2, .ntimers = 1};
    tkb_replay_exec_opts lim = o;
    lim.max_seconds = 2;
    int64_t t0 = tkb_now_ns();
    check(run_one(&longt, heap, lim, &r, err, sizeof err) == -1 && strstr(err, "max_seconds"),
          "a 10 s trace accepted with max_seconds 2 (%s)", err);
    check(tkb_now_ns() - t0 < TKB_NS_PER_S, "the refusal took time");
    lim.speed = 10; /* 1 s at speed 10: within the limit */
    check(run_one(&longt, heap, lim, &r, err, sizeof err) == 0, "10 s at speed 10: %s", err);
    check(r.starts == 1 && r.cancels == 1 && r.cancels_missed == 1 && r.fired == 1,
          "10 s at speed 10: counts");
    /* a far deadline: refused with the limit, drained with drain_max_ns */
    tkt_event farev[1] = {{.t_ns = 0, .deadline_ns = 3600 * TKB_NS_PER_S, .timer = 0}};
    tkt_trace fart = {.name = "far", .ev = farev, .count = 1, .ntimers = 1};
    lim.speed = 1;
    check(run_one(&fart, heap, lim, &r, err, sizeof err) == -1 && strstr(err, "max_seconds"),
          "an hour-long timer accepted with max_seconds 2 (%s)", err);
    lim.drain_max_ns = 100 * MS;
    t0 = tkb_now_ns();
    check(run_one(&fart, heap, lim, &r, err, sizeof err) == 0 && r.unfired == 1 && r.fired == 0,
          "drain limit: %s", err);
    check(tkb_now_ns() - t0 < 5 * TKB_NS_PER_S, "drain limit: waited for the far timer");

    /* services that fail */
    tkb_peer fake = *heap;
    fake.svc = &fake_no_create;
    check(run_one(&t, &fake, o, &r, err, sizeof err) == -1 && strstr(err, "create failed"),
          "service create failure not reported (%s)", err);
    fake.svc = &fake_no_schedule;
    check(run_one(&t, &fake, o, &r, err, sizeof err) == -1 && strstr(err, "schedule failed"),
          "schedule failure not reported (%s)", err);
    check(fake_alive == 0, "a failed replay left its service alive");
    fake.svc = &fake_black_hole;
    lim = o;
    lim.max_seconds = 0.5;
    t0 = tkb_now_ns();
    check(run_one(&t, &fake, lim, &r, err, sizeof err) == -1 && strstr(err, "gave up"),
          "timers that never fire: not reported (%s)", err);
    check(tkb_now_ns() - t0 < 5 * TKB_NS_PER_S, "timers that never fire: waited too long");
    check(fake_alive == 0, "a replay that gave up left its service alive");
    tkb_hist_destroy(&h);
}

/* A replay longer than 5 s says how far it is on stderr. */
static void progress_lines(const tkb_peer *heap) {
    tkt_event ev[3] = {
        {.t_ns = 0, .deadline_ns = 100 * MS, .timer = 0, .op = TKT_START},
        {.t_ns = 3 * TKB_NS_PER_S, .deadline_ns = 5400 * MS, .timer = 1, .op = TKT_START},
        {.t_ns = 5500 * MS, .timer = 0, .op = TKT_CANCEL},
    };
    tkt_trace t = {.name = "slow", .ev = ev, .count = 3, .ntimers = 2, .duration_ns = 5500 * MS};
    tkb_hist h;
    char err[512], text[4096] = "";
    FILE *tmp = tmpfile();
    int saved = dup(2);
    if (tkb_hist_init(&h) != 0 || tmp == NULL || saved < 0) {
        check(false, "progress: setup failed");
        return;
    }
    fflush(stderr);
    dup2(fileno(tmp), 2);
    tkb_replay_exec_result r = {.late = &h};
    tkb_replay_exec_opts o = {.speed = 1, .timer_slack_ns = -1};
    int rc = tkb_replay_exec(&t, heap, &o, &r, err, sizeof err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t len = fread(text, 1, sizeof text - 1, tmp);
    text[len] = '\0';
    fclose(tmp);
    check(rc == 0 && r.fired == 2 && r.cancels_missed == 1, "progress: replay: %s", err);
    check(strstr(text, "tkbench: replay slow on heap: 2/3 events issued") != NULL,
          "progress: no progress line after 5 s; stderr was: %s", text);
    tkb_hist_destroy(&h);
}

int main(void) {
    static const char *const specs[] = {
        "heap",
        "wheel:tick=1ms,slots=1024",
        "hwheel",
        "heap@embedded",
        "wheel:tick=1ms,slots=1024@embedded",
        "hwheel@embedded",
        "libuv",
        "libevent",
        "libev",
        "asio",
    };
    static builder b;
    static expect e;
    tkt_trace t;
    build_trace(&b, &t, &e);
    static builder cb;
    static expect ce;
    tkt_trace churn;
    build_churn(&cb, &churn, &ce);
    printf("trace: %zu events on %d timers over %.2f s; %llu firings expected\n", t.count, NTIMERS,
           (double)t.duration_ns / 1e9, (unsigned long long)e.fired);
    tkb_peer heap;
    char err[512];
    if (tkb_peer_parse("heap", &heap, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: heap: %s\n", err);
        return 1;
    }
    failure_paths(&heap);
    progress_lines(&heap);
    int ran = 0;
    for (size_t k = 0; k < TKB_COUNT(specs); k++) {
        tkb_peer p;
        if (tkb_peer_parse(specs[k], &p, err, sizeof err) != 0) {
            check(false, "%s: %s", specs[k], err);
            continue;
        }
        if (p.missing != NULL || p.svc == NULL) {
            printf("%s: not built, skipped\n", specs[k]);
            continue;
        }
        replay_peer(&p, &t, &e, 1);
        replay_peer(&p, &t, &e, 4);
        replay_peer(&p, &churn, &ce, 2);
        ran++;
    }
    check(ran >= 3, "only %d peers ran", ran);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("all passed\n");
    return 0;
}
