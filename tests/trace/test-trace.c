/* SPDX-License-Identifier: MIT */
/* The trace library (bench/trace/trace.h): the neutral CSV and the perf
 * script importer on the committed samples (data/), every class of bad
 * input with its exact "FILE:LINE:" message and status, and the round trip
 * perf text -> CSV (plain and compressed) -> the same trace. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

#define DATA TKT_TEST_DATA
#define TINY_CSV DATA "/tiny.csv"
#define TINY_PERF DATA "/tiny.perf.txt"

static char err[512];

/* The trace must hold what every loader promises. */
static void check_ok(const tkt_trace *t) {
    if (!tkt_check(t, err, sizeof err))
        fail_msg("tkt_check: %s", err);
}

/* The index of the timer named id, or fails. */
static uint32_t timer_named(const tkt_trace *t, const char *id) {
    for (size_t k = 0; k < t->ntimers; k++)
        if (strcmp(t->timers[k].id, id) == 0)
            return (uint32_t)k;
    fail_msg("no timer '%s'", id);
    return 0;
}

/* Starts on a timer already armed (a modify for the replay). */
static size_t count_modifies(const tkt_trace *t) {
    bool *armed = calloc(t->ntimers + 1, 1);
    assert_non_null(armed);
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++) {
        const tkt_event *e = &t->ev[i];
        if (e->op == TKT_START)
            n += armed[e->timer];
        armed[e->timer] = e->op == TKT_START;
    }
    free(armed);
    return n;
}

/* ---- the neutral CSV --------------------------------------------------------------------------
 */

static void tiny_csv_is_read_field_by_field(void **state) {
    (void)state;
    tkt_trace t;
    assert_int_equal(tkt_load(TINY_CSV, &t, err, sizeof err), TKT_OK);
    check_ok(&t);
    assert_string_equal(t.name, "tiny");
    assert_string_equal(t.source, "hand-written for tests/trace (docs/traces.md)");
    assert_string_equal(t.meta, "source: hand-written for tests/trace (docs/traces.md)\n"
                                "hz: 250\n"
                                "a modify of a, a start already due, then cancels\n");
    assert_int_equal(t.count, 8);
    assert_int_equal(t.ntimers, 3);
    assert_int_equal(t.duration_ns, 4000);
    static const struct {
        int64_t t_ns, deadline_ns;
        uint32_t timer;
        uint8_t op;
    } want[] = {{0, 1000000, 0, TKT_START},    {0, 500, 1, TKT_START},     {500, 0, 1, TKT_EXPIRE},
                {2000, 3000000, 0, TKT_START}, {2500, 2400, 2, TKT_START}, {3000, 0, 0, TKT_CANCEL},
                {3100, 0, 2, TKT_CANCEL},      {4000, 0, 2, TKT_EXPIRE}};
    for (size_t i = 0; i < t.count; i++) {
        assert_int_equal(t.ev[i].t_ns, want[i].t_ns);
        assert_int_equal(t.ev[i].deadline_ns, want[i].deadline_ns);
        assert_int_equal(t.ev[i].timer, want[i].timer);
        assert_int_equal(t.ev[i].op, want[i].op);
    }
    assert_string_equal(t.timers[0].id, "a");
    assert_string_equal(t.timers[0].function, "tcp_write_timer");
    assert_int_equal(t.timers[0].cls, TKT_CLS_WHEEL);
    assert_string_equal(t.timers[1].id, "b");
    assert_string_equal(t.timers[1].function, "hrtimer_wakeup");
    assert_int_equal(t.timers[1].cls, TKT_CLS_HRTIMER);
    assert_string_equal(t.timers[2].id, "c");
    assert_string_equal(t.timers[2].function, "");
    assert_int_equal(t.timers[2].cls, TKT_CLS_UNKNOWN);
    assert_int_equal(count_modifies(&t), 1);
    tkt_free(&t);
    assert_null(t.ev);
    assert_int_equal(t.count, 0);
    tkt_free(&t); /* twice is harmless */
}

static void csv_with_four_columns_and_crlf_is_read(void **state) {
    (void)state;
    const char *s = "t_ns,op,timer,deadline_ns\r\n5,start,x,10\r\n7,start,y,8\r\n9,cancel,x,\r\n";
    tkt_trace t;
    assert_int_equal(tkt_parse_csv("four.csv", s, strlen(s), &t, err, sizeof err), TKT_OK);
    check_ok(&t);
    assert_int_equal(t.count, 3);
    assert_int_equal(t.ntimers, 2);
    assert_string_equal(t.timers[1].id, "y");
    assert_string_equal(t.timers[1].function, "");
    assert_string_equal(t.source, "");
    assert_string_equal(t.meta, "");
    assert_int_equal(t.duration_ns, 9);
    tkt_free(&t);
    /* a header and no event: an empty trace */
    assert_int_equal(
        tkt_parse_csv("none.csv", "t_ns,op,timer,deadline_ns\n", 26, &t, err, sizeof err), TKT_OK);
    assert_int_equal(t.count, 0);
    check_ok(&t);
    tkt_free(&t);
}

/* Every bad CSV: its exact message and status. */
static void bad_csv_is_refused_with_file_and_line(void **state) {
    (void)state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"", "bad.csv: empty file (expected the header 't_ns,op,timer,deadline_ns' (then "
             "optionally ',function' and ',class'))"},
        {"# only a comment\n", "bad.csv:1: no header line (expected 't_ns,op,timer,deadline_ns' "
                               "(then optionally ',function' and ',class'))"},
        {"0,start,a,5\n", "bad.csv:1: expected the header 't_ns,op,timer,deadline_ns' (then "
                          "optionally ',function' and ',class')"},
        {"t_ns,op,timer,deadline_ns,class\n", "bad.csv:1: expected the header "
                                              "'t_ns,op,timer,deadline_ns' (then optionally "
                                              "',function' and ',class')"},
        {"t_ns,op,timer,deadline_ns\n0,start,a\n",
         "bad.csv:2: 3 fields, expected 4 as the header says"},
        {"t_ns,op,timer,deadline_ns\n0,start,a,5,f\n",
         "bad.csv:2: 5 fields, expected 4 as the header says"},
        {"t_ns,op,timer,deadline_ns\n0,arm,a,5\n",
         "bad.csv:2: unknown operation 'arm' (start, cancel or expire)"},
        {"t_ns,op,timer,deadline_ns\n-1,start,a,5\n", "bad.csv:2: time -1 is negative"},
        {"t_ns,op,timer,deadline_ns\n0,start,a,-5\n", "bad.csv:2: deadline -5 is negative"},
        {"t_ns,op,timer,deadline_ns\n1e3,start,a,5\n",
         "bad.csv:2: time '1e3' is not a number of ns"},
        {"t_ns,op,timer,deadline_ns\n 1,start,a,5\n", "bad.csv:2: time ' 1' is not a number of ns"},
        {"t_ns,op,timer,deadline_ns\n1000000000000000001,start,a,5\n",
         "bad.csv:2: time 1000000000000000001 is too large (at most 10^18 ns)"},
        {"t_ns,op,timer,deadline_ns\n0,start,a,99999999999999999999999\n",
         "bad.csv:2: deadline 99999999999999999999999 is too large (at most 10^18 ns)"},
        {"t_ns,op,timer,deadline_ns\n0,start,a,\n", "bad.csv:2: a start needs a deadline"},
        {"t_ns,op,timer,deadline_ns\n0,cancel,a,5\n",
         "bad.csv:2: a cancel has no deadline: leave the field empty"},
        {"t_ns,op,timer,deadline_ns\n0,start,,5\n", "bad.csv:2: empty timer name"},
        {"t_ns,op,timer,deadline_ns\n,start,a,5\n", "bad.csv:2: time is empty"},
        {"t_ns,op,timer,deadline_ns\n10,start,a,5\n# x\n9,cancel,a,\n",
         "bad.csv:4: time 9 is before the previous event's 10 (times must not decrease)"},
        {"t_ns,op,timer,deadline_ns,function,class\n0,start,a,5,f,cascade\n",
         "bad.csv:2: unknown class 'cascade' (wheel, hrtimer or empty)"},
        {"t_ns,op,timer,deadline_ns,function,class\n0,start,a,5,f,wheel\n1,cancel,a,,,hrtimer\n",
         "bad.csv:3: timer 'a' is a wheel timer on an earlier line"},
        {"t_ns,op,timer,deadline_ns\n0,start,a,5\n1,cancel,a,",
         "bad.csv:3: the last line has no newline (is the file cut short?)"},
        {"t_ns,op,timer,deadline_ns\n0,start,a,5\n1,can",
         "bad.csv:3: the last line has no newline (is the file cut short?)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tkt_trace t;
        memset(err, 0, sizeof err);
        int rc =
            tkt_parse_csv("bad.csv", cases[i].text, strlen(cases[i].text), &t, err, sizeof err);
        if (rc != TKT_EPARSE || strcmp(err, cases[i].msg) != 0)
            fail_msg("case %zu: status %d, message\n  '%s', expected\n  '%s'", i, rc, err,
                     cases[i].msg);
        assert_null(t.ev); /* nothing kept of a failed load */
        assert_int_equal(t.count, 0);
    }
    /* a NUL byte */
    static const char nul[] = "t_ns,op,timer,deadline_ns\n0,start,a\0,5\n";
    tkt_trace t;
    assert_int_equal(tkt_parse_csv("bad.csv", nul, sizeof nul - 1, &t, err, sizeof err),
                     TKT_EPARSE);
    assert_string_equal(err, "bad.csv:2: a NUL byte (not a text file?)");
}

static const char *tmpdir(void) {
    static char dir[256];
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "%s", TKT_TEST_TMP);
        mkdir(dir, 0777);
    }
    return dir;
}

static void write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The file layer: missing, empty, compressed, corrupt compressed. */
static void files_missing_empty_or_corrupt_are_refused(void **state) {
    (void)state;
    char p[512];
    tkt_trace t;
    snprintf(p, sizeof p, "%s/no-such-file.csv", tmpdir());
    assert_int_equal(tkt_load(p, &t, err, sizeof err), TKT_EIO);
    char want[1024];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", p);
    assert_string_equal(err, want);

    snprintf(p, sizeof p, "%s/empty.csv", tmpdir());
    write_file(p, "", 0);
    assert_int_equal(tkt_load(p, &t, err, sizeof err), TKT_EPARSE);
    snprintf(want, sizeof want,
             "%s: empty file (expected the header 't_ns,op,timer,deadline_ns' (then optionally "
             "',function' and ',class'))",
             p);
    assert_string_equal(err, want);
    assert_int_equal(tkt_load_any(p, NULL, &t, NULL, NULL, err, sizeof err), TKT_EPARSE);
    snprintf(want, sizeof want, "%s: empty file", p);
    assert_string_equal(err, want);

    snprintf(p, sizeof p, "%s/corrupt.csv.gz", tmpdir());
    write_file(p, "this is not gzip\n", 17);
    assert_int_equal(tkt_load(p, &t, err, sizeof err), TKT_EIO);
    snprintf(want, sizeof want, "%s: gzip -dc failed (exit 1)", p);
    assert_string_equal(err, want);
    assert_null(t.ev);
}

/* ---- the perf importer ------------------------------------------------------------------------
 */

static void perf_sample_is_imported(void **state) {
    (void)state;
    tkt_trace t;
    tkt_import_stats st;
    assert_int_equal(tkt_import_perf(TINY_PERF, NULL, &t, &st, err, sizeof err), TKT_OK);
    check_ok(&t);
    assert_string_equal(t.name, "tiny");
    assert_string_equal(t.source, "perf script tiny, HZ=250 (found)");
    assert_int_equal(st.lines, 41);
    assert_int_equal(st.hz, 250);
    assert_true(st.hz_found);
    /* the largest now - perf time of the three hrtimer_expire_entry lines */
    assert_int_equal(st.hr_offset_ns, 13514485338583 - 13514482571000);
    assert_int_equal(st.t0_ns, 13514382359000);
    assert_int_equal(t.count, 25);
    assert_int_equal(t.ntimers, 8);
    /* every event read and skipped, by kind */
    assert_int_equal(st.events[TKT_PERF_TIMER_START], 8);
    assert_int_equal(st.events[TKT_PERF_TIMER_CANCEL], 5);
    assert_int_equal(st.skipped[TKT_PERF_TIMER_CANCEL], 3);
    assert_int_equal(st.events[TKT_PERF_TIMER_EXPIRE_ENTRY], 3);
    assert_int_equal(st.events[TKT_PERF_HRTIMER_START], 8);
    assert_int_equal(st.events[TKT_PERF_HRTIMER_CANCEL], 1);
    assert_int_equal(st.skipped[TKT_PERF_HRTIMER_CANCEL], 0);
    assert_int_equal(st.events[TKT_PERF_HRTIMER_EXPIRE_ENTRY], 3);
    assert_int_equal(st.events[TKT_PERF_HRTIMER_SETUP], 4);
    assert_int_equal(st.skipped[TKT_PERF_HRTIMER_SETUP], 4);
    assert_int_equal(st.skipped[TKT_PERF_HRTIMER_EXPIRE_EXIT], 3);
    assert_int_equal(st.skipped[TKT_PERF_TIMER_EXPIRE_EXIT], 3);
    assert_int_equal(st.skipped[TKT_PERF_TICK_STOP], 1);
    assert_int_equal(st.skipped[TKT_PERF_TIMER_BASE_IDLE], 1);
    assert_int_equal(st.skipped[TKT_PERF_TIMER_INIT], 1);
    assert_int_equal(st.events[TKT_PERF_OTHER], 0);
    /* the kernel's cancel before each wheel expiry is folded into the expiry */
    assert_int_equal(st.expiry_cancels, 3);
    assert_int_equal(st.other_clock + st.filtered + st.clamped + st.out_of_order, 0);

    /* the first event: the tick's hrtimer, expires moved onto the perf clock */
    uint32_t tick = timer_named(&t, "0xffff888627c1c6f8");
    assert_int_equal(tick, 0);
    assert_string_equal(t.timers[tick].function, "tick_nohz_handler");
    assert_int_equal(t.timers[tick].cls, TKT_CLS_HRTIMER);
    assert_int_equal(t.ev[0].op, TKT_START);
    assert_int_equal(t.ev[0].t_ns, 0);
    assert_int_equal(t.ev[0].deadline_ns, 13514596000000 - st.hr_offset_ns - st.t0_ns);

    /* the RCU wheel timer: [timeout=1] at HZ 250 is 4 ms after its start */
    uint32_t rcu = timer_named(&t, "0xffffc9000007fdf8");
    assert_int_equal(t.timers[rcu].cls, TKT_CLS_WHEEL);
    assert_string_equal(t.timers[rcu].function, "process_timeout");
    size_t starts = 0, cancels = 0, expiries = 0;
    for (size_t i = 0; i < t.count; i++) {
        const tkt_event *e = &t.ev[i];
        if (e->timer != rcu)
            continue;
        if (e->op == TKT_START) {
            assert_int_equal(e->deadline_ns - e->t_ns, 4000000);
            starts++;
        }
        cancels += e->op == TKT_CANCEL;
        expiries += e->op == TKT_EXPIRE;
        if (e->t_ns == 13514385313000 - st.t0_ns)
            assert_int_equal(e->op, TKT_START);
    }
    /* one real cancel (followed by a start), three expiries without their cancels */
    assert_int_equal(starts, 6);
    assert_int_equal(cancels, 1);
    assert_int_equal(expiries, 3);
    /* 15000 jiffies: 60 s */
    uint32_t long_one = timer_named(&t, "0xffffc900030ff9c0");
    for (size_t i = 0; i < t.count; i++)
        if (t.ev[i].timer == long_one && t.ev[i].op == TKT_START)
            assert_int_equal(t.ev[i].deadline_ns - t.ev[i].t_ns, 60000000000);
    /* the process named "my job: x [1]" (spaces, a colon, brackets) was read */
    uint32_t job = timer_named(&t, "0xffffc90005117ae8");
    assert_string_equal(t.timers[job].function, "hrtimer_wakeup");
    /* starts on armed timers: the tick restarted while armed, the RCU timer across the cut */
    assert_int_equal(count_modifies(&t), 2);
    tkt_free(&t);
}

static size_t count_cls(const tkt_trace *t, unsigned cls) {
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        n += t->timers[t->ev[i].timer].cls == cls;
    return n;
}

static void perf_filters_keep_what_they_name(void **state) {
    (void)state;
    tkt_trace t;
    tkt_import_stats st;
    tkt_perf_opts o = {.functions = "process_*,nothing"};
    assert_int_equal(tkt_import_perf(TINY_PERF, &o, &t, &st, err, sizeof err), TKT_OK);
    check_ok(&t);
    assert_int_equal(t.ntimers, 2);
    for (size_t k = 0; k < t.ntimers; k++)
        assert_string_equal(t.timers[k].function, "process_timeout");
    assert_int_equal(t.count, 12);
    assert_int_equal(st.filtered, 28 - 12 - 3);
    assert_int_equal(t.ev[0].t_ns, 0); /* time 0 is the first kept event */
    tkt_free(&t);

    o = (tkt_perf_opts){.keep = TKT_KEEP_HRTIMER};
    assert_int_equal(tkt_import_perf(TINY_PERF, &o, &t, &st, err, sizeof err), TKT_OK);
    check_ok(&t);
    assert_int_equal(count_cls(&t, TKT_CLS_WHEEL), 0);
    assert_int_equal(t.count, 12);
    assert_int_equal(st.hz, 0); /* no wheel timer kept: HZ not needed */
    tkt_free(&t);

    o = (tkt_perf_opts){.keep = TKT_KEEP_WHEEL};
    assert_int_equal(tkt_import_perf(TINY_PERF, &o, &t, &st, err, sizeof err), TKT_OK);
    assert_int_equal(count_cls(&t, TKT_CLS_HRTIMER), 0);
    assert_int_equal(t.count, 13);
    tkt_free(&t);

    o = (tkt_perf_opts){.cpus = "1"};
    assert_int_equal(tkt_import_perf(TINY_PERF, &o, &t, &st, err, sizeof err), TKT_OK);
    check_ok(&t);
    assert_int_equal(t.count, 6); /* 7 events of CPU 1, one a cancel folded into its expiry */
    tkt_free(&t);

    o = (tkt_perf_opts){.cpus = "0-1,7"};
    assert_int_equal(tkt_import_perf(TINY_PERF, &o, &t, &st, err, sizeof err), TKT_OK);
    assert_int_equal(t.count, 25);
    tkt_free(&t);

    o = (tkt_perf_opts){.cpus = "1-0"};
    assert_int_equal(tkt_import_perf(TINY_PERF, &o, &t, &st, err, sizeof err), TKT_EPARSE);
    assert_string_equal(
        err, "--cpus '1-0': expected a list of CPUs and ranges, e.g. 0,2-3 (below 65536)");

    /* HZ given: [timeout=1] becomes 10 ms */
    o = (tkt_perf_opts){.hz = 100};
    assert_int_equal(tkt_import_perf(TINY_PERF, &o, &t, &st, err, sizeof err), TKT_OK);
    assert_false(st.hz_found);
    uint32_t rcu = timer_named(&t, "0xffffc9000007fdf8");
    for (size_t i = 0; i < t.count; i++)
        if (t.ev[i].timer == rcu && t.ev[i].op == TKT_START)
            assert_int_equal(t.ev[i].deadline_ns - t.ev[i].t_ns, 10000000);
    tkt_free(&t);
}

/* The lines of the sample up to (not including) the one starting at `until`. */
static char *sample_head(size_t nlines, size_t *len) {
    FILE *f = fopen(TINY_PERF, "r");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    size_t n = 0;
    char line[1024];
    for (size_t k = 0; k < nlines && fgets(line, sizeof line, f) != NULL; k++) {
        size_t m = strlen(line);
        memcpy(buf + n, line, m);
        n += m;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void perf_hz_must_be_found_or_given(void **state) {
    (void)state;
    size_t len;
    char *head = sample_head(22, &len); /* wheel events over 6 jiffies only */
    tkt_trace t;
    assert_int_equal(tkt_parse_perf("head.txt", head, len, NULL, &t, NULL, err, sizeof err),
                     TKT_EPARSE);
    assert_string_equal(err, "head.txt: cannot find HZ: the wheel events span too few jiffies "
                             "(6): give --hz");
    tkt_perf_opts o = {.hz = 250};
    assert_int_equal(tkt_parse_perf("head.txt", head, len, &o, &t, NULL, err, sizeof err), TKT_OK);
    check_ok(&t);
    tkt_free(&t);
    free(head);
}

static void perf_other_clock_and_disorder_are_handled(void **state) {
    (void)state;
    /* an hrtimer on CLOCK_REALTIME (expires ~1.7e18) with its cancel; lines out of order */
    const char *s =
        " a 1 [000] 100.000010: timer:hrtimer_start: hrtimer=0xa function=f expires=100000500000 "
        "softexpires=100000500000 mode=0x0 was_armed=0\n"
        " a 1 [001] 100.000005: timer:hrtimer_start: hrtimer=0xb function=g expires=100000600000 "
        "softexpires=100000600000 mode=0x0 was_armed=0\n"
        " a 1 [001] 100.000005: timer:hrtimer_cancel: hrtimer=0xb\n"
        " a 1 [000] 100.000020: timer:hrtimer_start: hrtimer=0xc function=posix_timer_fn "
        "expires=1763000000000000000 softexpires=1763000000000000000 mode=0x0 was_armed=0\n"
        " a 1 [000] 100.000030: timer:hrtimer_cancel: hrtimer=0xc\n"
        " a 1 [000] 100.000040: timer:hrtimer_start: hrtimer=0xd function=h expires=99999990000 "
        "softexpires=99999990000 mode=0x0 was_armed=0\n"
        " a 1 [000] 100.000500: timer:hrtimer_expire_entry: hrtimer=0xa function=f "
        "now=100000500000\n"
        " a 1 [000] 100.000600: sched:sched_switch: prev_comm=a\n"
        "\t ffffffff81000000 some_call_chain ([kernel.kallsyms])\n"
        "\n";
    tkt_trace t;
    tkt_import_stats st;
    assert_int_equal(tkt_parse_perf("mix.txt", s, strlen(s), NULL, &t, &st, err, sizeof err),
                     TKT_OK);
    check_ok(&t);
    assert_int_equal(st.out_of_order, 2);
    assert_int_equal(st.other_clock, 2);
    assert_int_equal(st.events[TKT_PERF_OTHER], 1);
    assert_int_equal(st.skipped[TKT_PERF_OTHER], 1);
    assert_int_equal(st.hr_offset_ns, 0);
    assert_int_equal(t.count, 5);
    /* sorted stably: b's start before its cancel, both before a's start */
    assert_string_equal(t.timers[t.ev[0].timer].id, "0xb");
    assert_int_equal(t.ev[0].op, TKT_START);
    assert_int_equal(t.ev[0].deadline_ns, 595000);
    assert_int_equal(t.ev[1].op, TKT_CANCEL);
    assert_string_equal(t.timers[t.ev[2].timer].id, "0xa");
    assert_int_equal(t.ev[2].t_ns, 5000);
    /* 0xd was due 50 us before it was armed, before the trace's start: clamped to 0 */
    assert_string_equal(t.timers[t.ev[3].timer].id, "0xd");
    assert_int_equal(t.ev[3].t_ns, 35000);
    assert_int_equal(t.ev[3].deadline_ns, 0);
    assert_int_equal(st.clamped, 1);
    assert_int_equal(t.ev[4].op, TKT_EXPIRE);
    assert_int_equal(t.ntimers, 3); /* 0xc never appears */
    tkt_free(&t);
    /* a wheel timer and an hrtimer at one address are two timers */
    const char *twin =
        " a 1 [000] 1.000000: timer:hrtimer_start: hrtimer=0xa function=f expires=1000 "
        "softexpires=1000 mode=0x0 was_armed=0\n"
        " a 1 [000] 1.000001: timer:timer_start: timer=0xa function=g expires=10 [timeout=2] "
        "cpu=0 idx=1 flags=\n";
    tkt_perf_opts o = {.hz = 1000};
    assert_int_equal(tkt_parse_perf("twin.txt", twin, strlen(twin), &o, &t, &st, err, sizeof err),
                     TKT_OK);
    check_ok(&t);
    assert_int_equal(t.ntimers, 2);
    assert_string_equal(t.timers[0].id, "0xa/hrtimer");
    assert_string_equal(t.timers[1].id, "0xa");
    assert_int_equal(t.ev[1].deadline_ns, 1000 + 2000000);
    /* no hrtimer expiry to align the clocks: the smallest lead of a start is taken as 0 */
    assert_int_equal(st.hr_offset_ns, 1000 - 1000000000);
    assert_int_equal(t.ev[0].deadline_ns, 0);
    tkt_free(&t);
}

static void bad_perf_text_is_refused_with_file_and_line(void **state) {
    (void)state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"", "bad.txt: empty file"},
        {"hello world\n", "bad.txt:1: not a line of perf script (expected 'COMM PID [CPU] "
                          "SECONDS: EVENT: ...')"},
        {" a 1 [000] 1.000: \n", "bad.txt:1: no event name after the time"},
        {" a 1 [000] 1.0000000000: timer:tick_stop: x\n",
         "bad.txt:1: not a line of perf script (expected 'COMM PID [CPU] SECONDS: EVENT: ...')"},
        {" a 1 [000] 1.000: timer:timer_start: function=f expires=5 [timeout=1]\n",
         "bad.txt:1: no timer=0x... address"},
        {" a 1 [000] 1.000: timer:hrtimer_cancel: hrtimer=0xzz\n",
         "bad.txt:1: no hrtimer=0x... address"},
        {" a 1 [000] 1.000: timer:timer_start: timer=0x1 function=f expires=5\n",
         "bad.txt:1: timer_start without a valid [timeout=N]"},
        {" a 1 [000] 1.000: timer:timer_start: timer=0x1 function=f expires=x [timeout=1]\n",
         "bad.txt:1: timer_start without a valid expires="},
        {" a 1 [000] 1.000: timer:hrtimer_start: hrtimer=0x1 function=f "
         "expires=99999999999999999999\n",
         "bad.txt:1: hrtimer_start without a valid expires="},
        {" a 1 [000] 1.000: timer:hrtimer_expire_entry: hrtimer=0x1 function=f now=-5\n",
         "bad.txt:1: expire_entry without a valid now="},
        {" a 1 [000] 1.000: timer:tick_stop: success=1\n a 1 [000] 1.000: timer:tick_st",
         "bad.txt:2: the last line has no newline (is the file cut short?)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tkt_trace t;
        tkt_perf_opts o = {.hz = 250};
        memset(err, 0, sizeof err);
        int rc = tkt_parse_perf("bad.txt", cases[i].text, strlen(cases[i].text), &o, &t, NULL, err,
                                sizeof err);
        if (rc != TKT_EPARSE || strcmp(err, cases[i].msg) != 0)
            fail_msg("case %zu: status %d, message\n  '%s', expected\n  '%s'", i, rc, err,
                     cases[i].msg);
        assert_null(t.ev);
    }
}

/* ---- round trip -------------------------------------------------------------------------------
 */

static void same_trace(const tkt_trace *a, const tkt_trace *b) {
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->ntimers, b->ntimers);
    assert_int_equal(a->duration_ns, b->duration_ns);
    assert_string_equal(a->source, b->source);
    assert_string_equal(a->meta, b->meta);
    for (size_t i = 0; i < a->count; i++) {
        assert_int_equal(a->ev[i].t_ns, b->ev[i].t_ns);
        assert_int_equal(a->ev[i].deadline_ns, b->ev[i].deadline_ns);
        assert_int_equal(a->ev[i].timer, b->ev[i].timer);
        assert_int_equal(a->ev[i].op, b->ev[i].op);
    }
    for (size_t k = 0; k < a->ntimers; k++) {
        assert_string_equal(a->timers[k].id, b->timers[k].id);
        assert_string_equal(a->timers[k].function, b->timers[k].function);
        assert_int_equal(a->timers[k].cls, b->timers[k].cls);
    }
}

static void perf_to_csv_and_back_is_the_same_trace(void **state) {
    (void)state;
    tkt_trace a;
    assert_int_equal(tkt_import_perf(TINY_PERF, NULL, &a, NULL, err, sizeof err), TKT_OK);
    static const char *const names[] = {"rt.csv", "rt.csv.gz", "rt.csv.xz", "rt.csv.zst"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", tmpdir(), names[i]);
        if (tkt_save(&a, p, err, sizeof err) != TKT_OK)
            fail_msg("tkt_save %s: %s", p, err);
        tkt_trace b;
        bool is_csv = false;
        if (tkt_load_any(p, NULL, &b, NULL, &is_csv, err, sizeof err) != TKT_OK)
            fail_msg("tkt_load_any %s: %s", p, err);
        assert_true(is_csv);
        check_ok(&b);
        assert_string_equal(b.name, "rt");
        same_trace(&a, &b);
        tkt_free(&b);
    }
    /* the hand-written CSV, written and read again */
    tkt_trace c, d;
    assert_int_equal(tkt_load(TINY_CSV, &c, err, sizeof err), TKT_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(tkt_write_csv(&c, f, err, sizeof err), TKT_OK);
    fclose(f);
    assert_int_equal(tkt_parse_csv("again.csv", buf, len, &d, err, sizeof err), TKT_OK);
    same_trace(&c, &d);
    free(buf);
    tkt_free(&c);
    tkt_free(&d);
    tkt_free(&a);
}

/* A full disk: the write fails with a message, and a compressor that dies
 * early does not take the process with it (SIGPIPE). */
static void saving_to_a_full_disk_fails_cleanly(void **state) {
    (void)state;
    size_t cap = 200000 * 40, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "t_ns,op,timer,deadline_ns\n");
    for (int i = 0; i < 200000; i++)
        len += (size_t)snprintf(text + len, cap - len, "%d,start,timer%d,%d\n", i, i % 977,
                                i + 1000000);
    tkt_trace t;
    assert_int_equal(tkt_parse_csv("big.csv", text, len, &t, err, sizeof err), TKT_OK);
    free(text);
    static const struct {
        const char *name, *msg;
    } cases[] = {{"full.csv", "write error: No space left on device"},
                 {"full.csv.gz", "gzip -c failed (exit 1)"},
                 {"full.csv.xz", "xz -c failed (exit 1)"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char p[512], want[1024];
        snprintf(p, sizeof p, "%s/%s", tmpdir(), cases[i].name);
        unlink(p);
        if (symlink("/dev/full", p) != 0)
            skip();
        assert_int_equal(tkt_save(&t, p, err, sizeof err), TKT_EIO);
        snprintf(want, sizeof want, "%s: %s", p, cases[i].msg);
        assert_string_equal(err, want);
        unlink(p);
    }
    tkt_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_csv_is_read_field_by_field),
        cmocka_unit_test(csv_with_four_columns_and_crlf_is_read),
        cmocka_unit_test(bad_csv_is_refused_with_file_and_line),
        cmocka_unit_test(files_missing_empty_or_corrupt_are_refused),
        cmocka_unit_test(perf_sample_is_imported),
        cmocka_unit_test(perf_filters_keep_what_they_name),
        cmocka_unit_test(perf_hz_must_be_found_or_given),
        cmocka_unit_test(perf_other_clock_and_disorder_are_handled),
        cmocka_unit_test(bad_perf_text_is_refused_with_file_and_line),
        cmocka_unit_test(perf_to_csv_and_back_is_the_same_trace),
        cmocka_unit_test(saving_to_a_full_disk_fails_cleanly),
    };
    return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
