/* timerkit: engine spec strings (tk_queue_config_parse, tk_queue_config_format,
 * tk_queue_param_format) and the engines' parameter tables behind them.
 *
 * Table-driven: every accepted form with the config it must give, every
 * error with its status and the words its message must hold, the canonical
 * forms, round trips, short buffers, create() against every engine's table,
 * an executor built from a parsed spec, and README's parameter table against
 * the engines' tables. Behaviour only; nothing here measures speed.
 *
 * Usage: tk_spec_test [README.md]. With a path, also checks README's
 * parameter table (CTest passes the source tree's README). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "timerkit.h"

#define MS TK_NS_PER_MS
#define US TK_NS_PER_US

static const char *readme_path; /* argv[1], or NULL */

/* ---- expected configs -------------------------------------------------------- */

/* A config as the defaults plus the fields a spec sets; -1: the default. */
typedef struct want_cfg {
    int64_t capacity, tick_ns, slots, max_pending, spin_ns;
} want_cfg;

#define DEF (-1)
#define W(cap, tick, slots, maxp, spin)                                                            \
    { (cap), (tick), (slots), (maxp), (spin) }

static tk_queue_config expected(want_cfg w) {
    tk_queue_config c;
    tk_queue_config_init(&c);
    if (w.capacity != DEF)
        c.initial_capacity = (size_t)w.capacity;
    if (w.tick_ns != DEF)
        c.tick_ns = w.tick_ns;
    if (w.slots != DEF)
        c.ticks_per_wheel = (uint32_t)w.slots;
    if (w.max_pending != DEF)
        c.max_pending = (size_t)w.max_pending;
    if (w.spin_ns != DEF)
        c.spin_ns = w.spin_ns;
    return c;
}

static void assert_same_config(const tk_queue_config *got, const tk_queue_config *want,
                               const char *spec) {
    if (got->allocator != want->allocator || got->initial_capacity != want->initial_capacity ||
        got->tick_ns != want->tick_ns || got->ticks_per_wheel != want->ticks_per_wheel ||
        got->max_pending != want->max_pending || got->thread_name != want->thread_name ||
        got->spin_ns != want->spin_ns) {
        print_error("'%s': got capacity %zu tick %" PRId64 " slots %" PRIu32
                    " max_pending %zu spin %" PRId64 "; want %zu %" PRId64 " %" PRIu32
                    " %zu %" PRId64 "\n",
                    spec, got->initial_capacity, got->tick_ns, got->ticks_per_wheel,
                    got->max_pending, got->spin_ns, want->initial_capacity, want->tick_ns,
                    want->ticks_per_wheel, want->max_pending, want->spin_ns);
        fail();
    }
}

/* ---- the tables ----------------------------------------------------------------- */

static void every_engine_has_a_well_formed_parameter_table(void **state) {
    (void)state;
    tk_queue_config defaults;
    tk_queue_config_init(&defaults);
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        assert_true(ops->param_count == 0 || ops->params != NULL);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            assert_non_null(p->key);
            assert_true(strlen(p->key) > 0);
            assert_null(strpbrk(p->key, ":,= \t"));
            assert_non_null(p->help);
            assert_true(p->offset + p->size <= sizeof(tk_queue_config));
            assert_true(p->min <= p->max);
            if (p->type == TK_PARAM_DURATION) {
                assert_int_equal(p->size, sizeof(int64_t));
            } else {
                assert_int_equal(p->type, TK_PARAM_COUNT);
                assert_true(p->size == 1 || p->size == 2 || p->size == 4 || p->size == 8);
                assert_true(p->min >= 0);
                if (p->size < 8)
                    assert_true((uint64_t)p->max < (UINT64_C(1) << (8 * p->size)));
            }
            assert_int_equal(p->flags & ~(TK_PARAM_ALWAYS | TK_PARAM_ADAPTER), 0);
            for (size_t j = 0; j < i; j++) {
                assert_string_not_equal(p->key, ops->params[j].key);
                assert_true(p->offset != ops->params[j].offset);
            }
        }
        /* The defaults themselves pass every engine's check. */
        char buf[128];
        assert_int_equal(tk_queue_config_format(ops, &defaults, buf, sizeof(buf)), TK_OK);
    }
    assert_int_equal(tk_engine_heap()->param_count, 2);
    assert_int_equal(tk_engine_wheel()->param_count, 4);
}

/* ---- accepted forms ------------------------------------------------------------- */

typedef struct accepted {
    const char *spec;
    const char *engine;
    want_cfg want;
} accepted;

static const accepted accepted_forms[] = {
    {"heap", "heap", W(DEF, DEF, DEF, DEF, DEF)},
    {"heap:spin=150us", "heap", W(DEF, DEF, DEF, DEF, 150 * US)},
    {"heap:capacity=4096", "heap", W(4096, DEF, DEF, DEF, DEF)},
    {"heap:capacity=1,spin=1s", "heap", W(1, DEF, DEF, DEF, TK_NS_PER_S)},
    {"heap:spin=1s,capacity=1", "heap", W(1, DEF, DEF, DEF, TK_NS_PER_S)},
    {"heap:capacity=64", "heap", W(64, DEF, DEF, DEF, DEF)},
    {"heap:capacity=0007", "heap", W(7, DEF, DEF, DEF, DEF)},
    {"heap:spin=0ns", "heap", W(DEF, DEF, DEF, DEF, 0)},
    {"heap:spin=0s", "heap", W(DEF, DEF, DEF, DEF, 0)},
    {"heap:spin=0.5ms", "heap", W(DEF, DEF, DEF, DEF, 500 * US)},
    {"heap:spin=1000000000ns", "heap", W(DEF, DEF, DEF, DEF, TK_NS_PER_S)},
    {"wheel", "wheel", W(DEF, DEF, DEF, DEF, DEF)},
    {"wheel:tick=1ms,slots=1024", "wheel", W(DEF, MS, 1024, DEF, DEF)},
    {"wheel:tick=1ms,slots=1024,spin=150us", "wheel", W(DEF, MS, 1024, DEF, 150 * US)},
    {"wheel:max_pending=100000", "wheel", W(DEF, DEF, DEF, 100000, DEF)},
    {"wheel:slots=1024,tick=1ms", "wheel", W(DEF, MS, 1024, DEF, DEF)},
    {"wheel:tick=100ms,slots=512", "wheel", W(DEF, 100 * MS, 512, DEF, DEF)},
    {"wheel:tick=1.5ms", "wheel", W(DEF, 1500 * US, DEF, DEF, DEF)},
    {"wheel:tick=2s", "wheel", W(DEF, 2 * TK_NS_PER_S, DEF, DEF, DEF)},
    {"wheel:tick=0.01ms", "wheel", W(DEF, 10 * US, DEF, DEF, DEF)},
    {"wheel:tick=10000ns", "wheel", W(DEF, 10 * US, DEF, DEF, DEF)},
    {"wheel:tick=10us", "wheel", W(DEF, 10 * US, DEF, DEF, DEF)},
    {"wheel:tick=1.000000000000s", "wheel", W(DEF, TK_NS_PER_S, DEF, DEF, DEF)},
    {"wheel:tick=0.000123456s", "wheel", W(DEF, 123456, DEF, DEF, DEF)},
    {"wheel:tick=549755813887ns", "wheel", W(DEF, INT64_MAX / (INT64_C(1) << 24), DEF, DEF, DEF)},
    {"wheel:slots=1", "wheel", W(DEF, DEF, 1, DEF, DEF)},
    {"wheel:slots=16777216", "wheel", W(DEF, DEF, INT64_C(1) << 24, DEF, DEF)},
    {"wheel:max_pending=0", "wheel", W(DEF, DEF, DEF, 0, DEF)},
    {"wheel:tick=1ms,slots=1024,max_pending=100000,spin=150us", "wheel",
     W(DEF, MS, 1024, 100000, 150 * US)},
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static void every_accepted_form_gives_its_engine_and_config(void **state) {
    (void)state;
    for (size_t i = 0; i < COUNT_OF(accepted_forms); i++) {
        const accepted *a = &accepted_forms[i];
        const tk_queue_ops *engine = NULL;
        tk_queue_config cfg;
        memset(&cfg, 0xa5, sizeof(cfg));
        char err[160] = "junk";
        int rc = tk_queue_config_parse(a->spec, &engine, &cfg, err, sizeof(err));
        if (rc != TK_OK)
            print_error("'%s': %s (%s)\n", a->spec, tk_status_name(rc), err);
        assert_int_equal(rc, TK_OK);
        assert_string_equal(err, "");
        assert_ptr_equal(engine, tk_engine_by_name(a->engine));
        tk_queue_config want = expected(a->want);
        assert_same_config(&cfg, &want, a->spec);
    }
    /* err may be NULL, or have no room at all. */
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_parse("wheel:tick=2ms", &engine, &cfg, NULL, 0), TK_OK);
    assert_int_equal(cfg.tick_ns, 2 * MS);
    char untouched[4] = "xyz";
    assert_int_equal(tk_queue_config_parse("heap", &engine, &cfg, untouched, 0), TK_OK);
    assert_string_equal(untouched, "xyz");
}

static void max_pending_takes_counts_up_to_int64_max(void **state) {
    (void)state;
    if (SIZE_MAX < (uint64_t)INT64_MAX)
        skip();
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    assert_int_equal(
        tk_queue_config_parse("wheel:max_pending=9223372036854775807", &engine, &cfg, NULL, 0),
        TK_OK);
    assert_int_equal(cfg.max_pending, (size_t)INT64_MAX);
}

/* ---- errors -------------------------------------------------------------------- */

typedef struct rejected {
    const char *spec;
    int status;
    const char *says[3]; /* each must appear in the message */
} rejected;

static const rejected rejected_forms[] = {
    /* engines */
    {"foo", TK_ENOENT, {"unknown engine 'foo'; known: heap, wheel"}},
    {"Heap", TK_ENOENT, {"unknown engine 'Heap'", "known: heap, wheel"}},
    {"foo:tick=1ms", TK_ENOENT, {"unknown engine 'foo'", "known: heap, wheel"}},
    {"", TK_EINVAL, {"empty spec", "heap, wheel"}},
    {":tick=1ms", TK_EINVAL, {"no engine name", "heap, wheel"}},
    {":", TK_EINVAL, {"no engine name"}},
    /* shape */
    {"wheel:", TK_EINVAL, {"wheel:", "nothing after ':'", "tick, slots, max_pending, spin"}},
    {"heap:", TK_EINVAL, {"heap:", "nothing after ':'", "capacity, spin"}},
    {"wheel:tick=1ms,", TK_EINVAL, {"wheel:", "nothing after the last ','"}},
    {"wheel:,tick=1ms", TK_EINVAL, {"wheel:", "empty parameter", "tick, slots"}},
    {"wheel:tick=1ms,,slots=8", TK_EINVAL, {"wheel:", "empty parameter"}},
    {"wheel:=1ms", TK_EINVAL, {"wheel:", "empty name", "known: tick, slots, max_pending, spin"}},
    {"wheel: tick=1ms", TK_EINVAL, {"whitespace", "offset 6"}},
    {" heap", TK_EINVAL, {"whitespace", "offset 0"}},
    {"heap\t", TK_EINVAL, {"whitespace"}},
    {"heap:spin=1ms\n", TK_EINVAL, {"whitespace"}},
    {"wheel:tick=1ms ,slots=8", TK_EINVAL, {"whitespace"}},
    /* keys */
    {"wheel:foo",
     TK_EINVAL,
     {"wheel: unknown parameter 'foo'; known: tick, slots, max_pending, spin"}},
    {"wheel:foo=1",
     TK_EINVAL,
     {"wheel: unknown parameter 'foo'; known: tick, slots, max_pending, spin"}},
    {"heap:tick=1ms", TK_EINVAL, {"heap: unknown parameter 'tick'; known: capacity, spin"}},
    {"wheel:Tick=1ms", TK_EINVAL, {"unknown parameter 'Tick'"}},
    {"wheel:tick", TK_EINVAL, {"wheel:", "'tick'", "no '='"}},
    {"wheel:slots=8,tick", TK_EINVAL, {"'tick'", "no '='"}},
    {"wheel:tick=", TK_EINVAL, {"wheel:", "'tick'", "no value"}},
    {"wheel:tick=,slots=8", TK_EINVAL, {"'tick'", "no value"}},
    {"wheel:tick=1ms,tick=2ms", TK_EINVAL, {"wheel:", "'tick'", "twice"}},
    {"wheel:tick=1ms,slots=8,tick=1ms", TK_EINVAL, {"'tick'", "twice"}},
    {"heap:spin=1ms,capacity=8,spin=1ms", TK_EINVAL, {"heap:", "'spin'", "twice"}},
    /* ranges */
    {"wheel:tick=5us", TK_EINVAL, {"wheel: tick=5us is below the minimum 10us"}},
    {"wheel:tick=9999ns", TK_EINVAL, {"tick=9999ns", "below the minimum 10us"}},
    {"wheel:tick=0ns", TK_EINVAL, {"tick=0ns", "below the minimum 10us"}},
    {"wheel:tick=549755813888ns",
     TK_EINVAL,
     {"tick=549755813888ns", "above the maximum 549755813887ns"}},
    {"wheel:tick=600s", TK_EINVAL, {"tick=600s", "above the maximum"}},
    {"wheel:slots=0", TK_EINVAL, {"slots=0", "below the minimum 1"}},
    {"wheel:slots=16777217", TK_EINVAL, {"wheel: slots=16777217 is above the maximum 16777216"}},
    {"wheel:slots=4294967296", TK_EINVAL, {"slots=4294967296", "above the maximum 16777216"}},
    {"heap:capacity=0", TK_EINVAL, {"heap: capacity=0 is below the minimum 1"}},
    {"heap:capacity=18446744073709551615", TK_EINVAL, {"capacity=", "above the maximum"}},
    {"heap:spin=1001ms", TK_EINVAL, {"heap: spin=1001ms is above the maximum 1s"}},
    {"wheel:spin=1000000001ns", TK_EINVAL, {"wheel: spin=1000000001ns", "above the maximum 1s"}},
    {"wheel:max_pending=18446744073709551615", TK_EINVAL, {"max_pending=", "above the maximum"}},
    /* values */
    {"wheel:tick=1", TK_EINVAL, {"wheel: tick=1 has no unit", "ns, us, ms or s"}},
    {"wheel:tick=1.5", TK_EINVAL, {"tick=1.5", "no unit"}},
    {"wheel:tick=-1ms", TK_EINVAL, {"wheel: tick=-1ms is negative"}},
    {"heap:spin=-0ns", TK_EINVAL, {"spin=-0ns", "negative"}},
    {"wheel:slots=-1", TK_EINVAL, {"wheel: slots=-1 is negative"}},
    {"wheel:max_pending=-5", TK_EINVAL, {"max_pending=-5", "negative"}},
    {"wheel:tick=1msx", TK_EINVAL, {"wheel: tick=1msx", "unknown unit 'msx'"}},
    {"wheel:tick=1MS", TK_EINVAL, {"tick=1MS", "unknown unit 'MS'"}},
    {"wheel:tick=1m", TK_EINVAL, {"tick=1m", "unknown unit 'm'"}},
    {"wheel:tick=1e3us", TK_EINVAL, {"tick=1e3us", "unknown unit 'e3us'"}},
    {"wheel:tick=1ms=2", TK_EINVAL, {"tick=1ms=2", "unknown unit"}},
    {"wheel:slots=12x", TK_EINVAL, {"wheel: slots=12x is not an unsigned decimal integer"}},
    {"wheel:slots=1.5", TK_EINVAL, {"slots=1.5", "not an unsigned decimal integer"}},
    {"wheel:slots=0x10", TK_EINVAL, {"slots=0x10", "not an unsigned decimal integer"}},
    {"wheel:slots=+8", TK_EINVAL, {"slots=+8", "not an unsigned decimal integer"}},
    {"wheel:slots=1024:tick=1ms", TK_EINVAL, {"slots=1024:tick=1ms", "not an unsigned"}},
    {"wheel:tick=+1ms", TK_EINVAL, {"tick=+1ms", "not a duration"}},
    {"wheel:tick=.5ms", TK_EINVAL, {"tick=.5ms", "not a duration"}},
    {"wheel:tick=1.ms", TK_EINVAL, {"tick=1.ms", "not a duration"}},
    {"wheel:tick=ms", TK_EINVAL, {"tick=ms", "not a duration"}},
    {"wheel:tick=1.5ns", TK_EINVAL, {"wheel: tick=1.5ns", "not a whole number of nanoseconds"}},
    {"wheel:tick=0.0000000001s", TK_EINVAL, {"tick=0.0000000001s", "whole number"}},
    {"wheel:tick=10.0001us", TK_EINVAL, {"tick=10.0001us", "whole number"}},
    {"wheel:tick=9223372036854775808ns", TK_EINVAL, {"tick=9223372036854775808ns", "too large"}},
    {"wheel:tick=9223372037s", TK_EINVAL, {"tick=9223372037s", "too large"}},
    {"wheel:tick=99999999999999999999999ms", TK_EINVAL, {"tick=", "too large"}},
    {"wheel:slots=18446744073709551616", TK_EINVAL, {"slots=18446744073709551616", "too large"}},
    {"wheel:max_pending=99999999999999999999", TK_EINVAL, {"max_pending=", "too large"}},
};

static void every_malformed_spec_fails_with_a_message_that_names_the_problem(void **state) {
    (void)state;
    tk_queue_config sentinel_cfg;
    memset(&sentinel_cfg, 0x5a, sizeof(sentinel_cfg));
    const tk_queue_ops *sentinel_engine = (const tk_queue_ops *)(uintptr_t)0x5e17e1;
    int bad = 0;
    for (size_t i = 0; i < COUNT_OF(rejected_forms); i++) {
        const rejected *r = &rejected_forms[i];
        const tk_queue_ops *engine = sentinel_engine;
        tk_queue_config cfg = sentinel_cfg;
        char err[256];
        memset(err, 'x', sizeof(err));
        int rc = tk_queue_config_parse(r->spec, &engine, &cfg, err, sizeof(err));
        bool ok = rc == r->status && memchr(err, '\0', sizeof(err)) != NULL;
        for (size_t k = 0; ok && k < COUNT_OF(r->says) && r->says[k] != NULL; k++)
            ok = strstr(err, r->says[k]) != NULL;
        if (ok && (engine != sentinel_engine || memcmp(&cfg, &sentinel_cfg, sizeof(cfg)) != 0)) {
            print_error("  '%s': *engine or *cfg written on failure\n", r->spec);
            ok = false;
        }
        if (!ok) {
            bad++;
            print_error("  '%s': want %s with \"%s\"; got %s \"%.*s\"\n", r->spec,
                        tk_status_name(r->status), r->says[0], tk_status_name(rc),
                        (int)strnlen(err, sizeof(err)), err);
        }
    }
    print_message("  %zu malformed specs, %d mismatches\n", COUNT_OF(rejected_forms), bad);
    assert_int_equal(bad, 0);
}

static void null_arguments_and_short_error_buffers(void **state) {
    (void)state;
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    char err[64];
    assert_int_equal(tk_queue_config_parse(NULL, &engine, &cfg, err, sizeof(err)), TK_EINVAL);
    assert_non_null(strstr(err, "spec"));
    assert_int_equal(tk_queue_config_parse("heap", NULL, &cfg, err, sizeof(err)), TK_EINVAL);
    assert_non_null(strstr(err, "engine"));
    assert_int_equal(tk_queue_config_parse("heap", &engine, NULL, err, sizeof(err)), TK_EINVAL);
    assert_non_null(strstr(err, "cfg"));
    assert_null(engine);
    assert_int_equal(tk_queue_config_parse(NULL, NULL, NULL, NULL, 0), TK_EINVAL);
    assert_int_equal(tk_queue_config_parse("wheel:tick=5us", &engine, &cfg, NULL, 0), TK_EINVAL);
    assert_int_equal(tk_queue_config_parse("nope", &engine, &cfg, NULL, 123), TK_ENOENT);

    /* A short buffer holds the start of the message, NUL-terminated. */
    const char *full = "wheel: tick=5us is below the minimum 10us";
    for (size_t len = 1; len <= strlen(full) + 1; len++) {
        char small[64];
        memset(small, '#', sizeof(small));
        assert_int_equal(tk_queue_config_parse("wheel:tick=5us", &engine, &cfg, small, len),
                         TK_EINVAL);
        assert_int_equal(strlen(small), len - 1);
        assert_memory_equal(small, full, len - 1);
        assert_int_equal(small[len], '#'); /* nothing written past len */
    }
    /* A very long unknown key or engine still gives a bounded message. */
    char spec[2048];
    memset(spec, 'k', sizeof(spec) - 1);
    spec[sizeof(spec) - 1] = '\0';
    assert_int_equal(tk_queue_config_parse(spec, &engine, &cfg, err, sizeof(err)), TK_ENOENT);
    assert_true(strlen(err) < sizeof(err));
    memcpy(spec, "wheel:", 6);
    assert_int_equal(tk_queue_config_parse(spec, &engine, &cfg, err, sizeof(err)), TK_EINVAL);
    assert_non_null(strstr(err, "unknown parameter"));
}

/* ---- canonical forms and round trips ---------------------------------------------- */

static const struct canonical {
    const char *in, *out;
} canonical_forms[] = {
    {"wheel", "wheel:tick=1ms,slots=512"},
    {"heap", "heap"},
    {"heap:spin=150us", "heap:spin=150us"},
    {"wheel:slots=1024,tick=1ms", "wheel:tick=1ms,slots=1024"},
    {"wheel:tick=1ms,slots=1024,spin=150us", "wheel:tick=1ms,slots=1024,spin=150us"},
    {"wheel:max_pending=100000", "wheel:tick=1ms,slots=512,max_pending=100000"},
    {"wheel:spin=150us,max_pending=100000",
     "wheel:tick=1ms,slots=512,max_pending=100000,spin=150us"},
    {"heap:capacity=64", "heap"},
    {"heap:spin=0ns", "heap"},
    {"heap:spin=1000000ns", "heap:spin=1ms"},
    {"heap:spin=1s,capacity=4096", "heap:capacity=4096,spin=1s"},
    {"wheel:tick=1.5ms", "wheel:tick=1500us,slots=512"},
    {"wheel:tick=1000ms,slots=512", "wheel:tick=1s,slots=512"},
    {"wheel:tick=0.01ms", "wheel:tick=10us,slots=512"},
    {"wheel:tick=123456ns", "wheel:tick=123456ns,slots=512"},
    {"wheel:max_pending=0,spin=0s", "wheel:tick=1ms,slots=512"},
    {"wheel:tick=549755813887ns,slots=16777216", "wheel:tick=549755813887ns,slots=16777216"},
};

static void canonical_specs_are_written_in_table_order_without_defaults(void **state) {
    (void)state;
    for (size_t i = 0; i < COUNT_OF(canonical_forms); i++) {
        const tk_queue_ops *engine = NULL;
        tk_queue_config cfg;
        assert_int_equal(tk_queue_config_parse(canonical_forms[i].in, &engine, &cfg, NULL, 0),
                         TK_OK);
        char buf[128];
        assert_int_equal(tk_queue_config_format(engine, &cfg, buf, sizeof(buf)), TK_OK);
        assert_string_equal(buf, canonical_forms[i].out);
    }
    /* Zero fields stand for the defaults, as create() reads them. */
    tk_queue_config zero;
    memset(&zero, 0, sizeof(zero));
    char buf[128];
    assert_int_equal(tk_queue_config_format(tk_engine_wheel(), &zero, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "wheel:tick=1ms,slots=512");
    assert_int_equal(tk_queue_config_format(tk_engine_heap(), &zero, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "heap");
    /* Fields an engine does not use do not appear, whatever they hold. */
    tk_queue_config other;
    tk_queue_config_init(&other);
    other.tick_ns = -5;
    other.ticks_per_wheel = UINT32_MAX;
    other.max_pending = 3;
    assert_int_equal(tk_queue_config_format(tk_engine_heap(), &other, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "heap");
}

static void format_then_parse_gives_back_the_same_engine_and_config(void **state) {
    (void)state;
    for (size_t i = 0; i < COUNT_OF(accepted_forms); i++) {
        const char *spec = accepted_forms[i].spec;
        const tk_queue_ops *e1 = NULL, *e2 = NULL;
        tk_queue_config c1, c2;
        char s1[128], s2[128];
        assert_int_equal(tk_queue_config_parse(spec, &e1, &c1, NULL, 0), TK_OK);
        assert_int_equal(tk_queue_config_format(e1, &c1, s1, sizeof(s1)), TK_OK);
        assert_int_equal(tk_queue_config_parse(s1, &e2, &c2, NULL, 0), TK_OK);
        assert_ptr_equal(e1, e2);
        /* A field given at its default and one left out are the same config
         * for create(); compare what format writes, then the fields. */
        assert_int_equal(tk_queue_config_format(e2, &c2, s2, sizeof(s2)), TK_OK);
        assert_string_equal(s1, s2);
        for (size_t k = 0; k < e1->param_count; k++) {
            char v1[32], v2[32];
            assert_int_equal(tk_queue_param_format(&e1->params[k], &c1, v1, sizeof(v1)), TK_OK);
            assert_int_equal(tk_queue_param_format(&e1->params[k], &c2, v2, sizeof(v2)), TK_OK);
            assert_string_equal(v1, v2);
        }
        assert_same_config(&c2, &c1, spec);
    }
}

/* ---- format: values, bad input, short buffers ------------------------------------- */

static const tk_queue_param *param_of(const tk_queue_ops *ops, const char *key) {
    for (size_t i = 0; i < ops->param_count; i++)
        if (strcmp(ops->params[i].key, key) == 0)
            return &ops->params[i];
    fail_msg("%s has no parameter '%s'", ops->name, key);
    return NULL;
}

static void param_values_are_written_as_the_canonical_spec_writes_them(void **state) {
    (void)state;
    const tk_queue_param *tick = param_of(tk_engine_wheel(), "tick");
    const tk_queue_param *slots = param_of(tk_engine_wheel(), "slots");
    const tk_queue_param *spin = param_of(tk_engine_heap(), "spin");
    const tk_queue_param *cap = param_of(tk_engine_heap(), "capacity");
    static const struct {
        int64_t ns;
        const char *text;
    } durations[] = {
        {MS, "1ms"},
        {150 * US, "150us"},
        {1500 * US, "1500us"},
        {1500000001, "1500000001ns"},
        {2 * TK_NS_PER_S, "2s"},
        {123456, "123456ns"},
        {-5, "-5ns"},
        {-2 * MS, "-2ms"},
        {INT64_MAX, "9223372036854775807ns"},
        {INT64_MIN, "-9223372036854775808ns"},
    };
    tk_queue_config cfg;
    char buf[32];
    for (size_t i = 0; i < COUNT_OF(durations); i++) {
        tk_queue_config_init(&cfg);
        cfg.tick_ns = durations[i].ns;
        assert_int_equal(tk_queue_param_format(tick, &cfg, buf, sizeof(buf)), TK_OK);
        assert_string_equal(buf, durations[i].text);
    }
    tk_queue_config_init(&cfg);
    cfg.ticks_per_wheel = 1024;
    cfg.initial_capacity = SIZE_MAX;
    assert_int_equal(tk_queue_param_format(slots, &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "1024");
    assert_int_equal(tk_queue_param_format(cap, &cfg, buf, sizeof(buf)), TK_OK);
    char want[32];
    snprintf(want, sizeof(want), "%zu", (size_t)SIZE_MAX);
    assert_string_equal(buf, want);
    assert_int_equal(tk_queue_param_format(spin, &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "0ns");
    /* A zero field is written as its default. */
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(tk_queue_param_format(tick, &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "1ms");
    assert_int_equal(tk_queue_param_format(slots, &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "512");
    assert_int_equal(tk_queue_param_format(cap, &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "64");
}

static void format_reports_bad_input_and_out_of_range_configs(void **state) {
    (void)state;
    tk_queue_config cfg;
    tk_queue_config_init(&cfg);
    char buf[64] = "junk";
    const tk_queue_param *tick = param_of(tk_engine_wheel(), "tick");
    assert_int_equal(tk_queue_config_format(NULL, &cfg, buf, sizeof(buf)), TK_EINVAL);
    assert_int_equal(tk_queue_config_format(tk_engine_wheel(), NULL, buf, sizeof(buf)), TK_EINVAL);
    assert_int_equal(tk_queue_config_format(tk_engine_wheel(), &cfg, NULL, 64), TK_EINVAL);
    assert_int_equal(tk_queue_param_format(NULL, &cfg, buf, sizeof(buf)), TK_EINVAL);
    assert_int_equal(tk_queue_param_format(tick, NULL, buf, sizeof(buf)), TK_EINVAL);
    assert_int_equal(tk_queue_param_format(tick, &cfg, NULL, 32), TK_EINVAL);

    /* A parameter of a type or size that no field can have. */
    tk_queue_param odd = *tick;
    odd.type = (tk_param_type)7;
    assert_int_equal(tk_queue_param_format(&odd, &cfg, buf, sizeof(buf)), TK_EINVAL);
    odd = *tick;
    odd.size = 3;
    assert_int_equal(tk_queue_param_format(&odd, &cfg, buf, sizeof(buf)), TK_EINVAL);
    odd = *tick;
    odd.offset = sizeof(tk_queue_config);
    assert_int_equal(tk_queue_param_format(&odd, &cfg, buf, sizeof(buf)), TK_EINVAL);

    /* A config create() would refuse has no canonical spec. */
    static const struct {
        int64_t tick_ns;
        uint32_t slots;
        int64_t spin_ns;
    } refused[] = {
        {5 * US, 512, 0},
        {-MS, 512, 0},
        {INT64_MAX / 256, 512, 0}, /* a revolution past INT64_MAX ns */
        {MS, (UINT32_C(1) << 24) + 1, 0},
        {MS, 512, -1},
        {MS, 512, TK_NS_PER_S + 1},
    };
    for (size_t i = 0; i < COUNT_OF(refused); i++) {
        tk_queue_config_init(&cfg);
        cfg.tick_ns = refused[i].tick_ns;
        cfg.ticks_per_wheel = refused[i].slots;
        cfg.spin_ns = refused[i].spin_ns;
        strcpy(buf, "junk");
        assert_int_equal(tk_queue_config_format(tk_engine_wheel(), &cfg, buf, sizeof(buf)),
                         TK_EINVAL);
        assert_string_equal(buf, "");
    }
    tk_queue_config_init(&cfg);
    cfg.initial_capacity = SIZE_MAX;
    assert_int_equal(tk_queue_config_format(tk_engine_heap(), &cfg, buf, sizeof(buf)), TK_EINVAL);
}

static void a_buffer_too_small_gets_efull_and_the_start_of_the_text(void **state) {
    (void)state;
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    const char *full = "wheel:tick=1ms,slots=1024,max_pending=100000,spin=150us";
    assert_int_equal(tk_queue_config_parse(full, &engine, &cfg, NULL, 0), TK_OK);
    char buf[80];
    for (size_t len = 0; len <= strlen(full) + 1; len++) {
        memset(buf, '#', sizeof(buf));
        int rc = tk_queue_config_format(engine, &cfg, buf, len);
        if (len == 0) {
            assert_int_equal(rc, TK_EFULL);
            assert_int_equal(buf[0], '#'); /* nothing written */
            continue;
        }
        assert_int_equal(rc, len > strlen(full) ? TK_OK : TK_EFULL);
        assert_int_equal(strlen(buf), len - 1);
        assert_memory_equal(buf, full, len - 1);
        assert_int_equal(buf[len], '#');
    }
    const tk_queue_param *tick = param_of(engine, "tick");
    cfg.tick_ns = 150 * US;
    for (size_t len = 0; len <= 6; len++) {
        memset(buf, '#', sizeof(buf));
        int rc = tk_queue_param_format(tick, &cfg, buf, len);
        assert_int_equal(rc, len > 5 ? TK_OK : TK_EFULL);
        if (len > 0) {
            assert_int_equal(strlen(buf), len - 1);
            assert_memory_equal(buf, "150us", len - 1);
        }
        assert_int_equal(buf[len], '#');
    }
}

/* ---- create() and the tables ------------------------------------------------------- */

static void store(tk_queue_config *cfg, const tk_queue_param *p, int64_t v) {
    unsigned char *at = (unsigned char *)cfg + p->offset;
    if (p->type == TK_PARAM_DURATION) {
        memcpy(at, &v, sizeof(v));
        return;
    }
    uint64_t u = (uint64_t)v;
    uint8_t u8 = (uint8_t)u;
    uint16_t u16 = (uint16_t)u;
    uint32_t u32 = (uint32_t)u;
    switch (p->size) {
    case 1:
        memcpy(at, &u8, 1);
        break;
    case 2:
        memcpy(at, &u16, 2);
        break;
    case 4:
        memcpy(at, &u32, 4);
        break;
    default:
        memcpy(at, &u, 8);
        break;
    }
}

/* True if v, stored in p's field, is a value create() sees as such: not 0
 * (which stands for the default) and within the field's width. */
static bool testable(const tk_queue_param *p, int64_t v) {
    if (v == 0)
        return false;
    if (p->type == TK_PARAM_DURATION)
        return true;
    return v > 0 && (p->size == 8 || (uint64_t)v < (UINT64_C(1) << (8 * p->size)));
}

static void create_refuses_every_value_outside_the_table_and_takes_each_minimum(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            int64_t outside[2] = {0, 0}; /* min - 1, max + 1 */
            if (p->min > INT64_MIN)
                outside[0] = p->min - 1;
            if (p->max < INT64_MAX)
                outside[1] = p->max + 1;
            for (size_t k = 0; k < 2; k++) {
                if (!testable(p, outside[k]))
                    continue;
                tk_queue_config cfg;
                tk_queue_config_init(&cfg);
                store(&cfg, p, outside[k]);
                tk_queue *q = NULL;
                int rc = ops->create(&cfg, NULL, NULL, &q);
                if (rc != TK_EINVAL)
                    print_error("%s: %s = %" PRId64 " gave %s\n", ops->name, p->key, outside[k],
                                tk_status_name(rc));
                assert_int_equal(rc, TK_EINVAL);
                assert_null(q);
            }
            /* The minimum itself. */
            tk_queue_config cfg;
            tk_queue_config_init(&cfg);
            store(&cfg, p, p->min);
            tk_queue *q = NULL;
            assert_int_equal(ops->create(&cfg, NULL, NULL, &q), TK_OK);
            ops->destroy(q);
        }
    }
}

/* ---- an executor from a spec ------------------------------------------------------ */

static int record_run(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static void an_executor_created_from_a_parsed_spec_runs_a_task(void **state) {
    (void)state;
    static const char *specs[] = {
        "heap",
        "heap:capacity=16,spin=150us",
        "wheel",
        "wheel:tick=1ms,slots=1024",
        "wheel:tick=1ms,slots=1024,max_pending=1000,spin=150us",
        "wheel:tick=10us,slots=1",
    };
    for (size_t i = 0; i < COUNT_OF(specs); i++) {
        const tk_queue_ops *engine = NULL;
        tk_queue_config cfg;
        char err[128];
        assert_int_equal(tk_queue_config_parse(specs[i], &engine, &cfg, err, sizeof(err)), TK_OK);
        tk_executor_options opt;
        assert_int_equal(tk_executor_options_init(&opt), TK_OK);
        opt.core_pool_size = 1;
        opt.engine = engine;
        opt.engine_config = &cfg;
        tk_executor *ex = NULL;
        assert_int_equal(tk_executor_create(&opt, &ex), TK_OK);
        assert_ptr_equal(tk_executor_engine(ex), engine);
        atomic_int runs;
        atomic_init(&runs, 0);
        tk_future *fu = NULL;
        int64_t t0 = tk_clock_now_ns();
        assert_int_equal(tk_executor_schedule(ex, record_run, &runs, 2 * MS, &fu), TK_OK);
        assert_int_equal(tk_future_get_timeout(fu, 10 * TK_NS_PER_S, NULL), TK_OK);
        assert_true(tk_clock_now_ns() - t0 >= 2 * MS); /* never early */
        assert_int_equal(atomic_load(&runs), 1);
        assert_int_equal(tk_future_release(fu), TK_OK);
        assert_int_equal(tk_executor_shutdown(ex), TK_OK);
        assert_int_equal(tk_executor_await_termination(ex, 10 * TK_NS_PER_S), TK_OK);
        assert_int_equal(tk_executor_destroy(ex), TK_OK);
    }
}

/* ---- README ---------------------------------------------------------------------- */

/* The tk_queue_config field at `offset`, for README's "field" column. */
static const char *field_name(size_t offset) {
    static const struct {
        size_t offset;
        const char *name;
    } fields[] = {
        {offsetof(tk_queue_config, allocator), "allocator"},
        {offsetof(tk_queue_config, initial_capacity), "initial_capacity"},
        {offsetof(tk_queue_config, tick_ns), "tick_ns"},
        {offsetof(tk_queue_config, ticks_per_wheel), "ticks_per_wheel"},
        {offsetof(tk_queue_config, max_pending), "max_pending"},
        {offsetof(tk_queue_config, thread_name), "thread_name"},
        {offsetof(tk_queue_config, spin_ns), "spin_ns"},
    };
    for (size_t i = 0; i < COUNT_OF(fields); i++)
        if (fields[i].offset == offset)
            return fields[i].name;
    return "?";
}

/* A bound as README writes it (the test's own writer, not the library's). */
static void bound_text(const tk_queue_param *p, int64_t v, char *out, size_t len) {
    if (p->type == TK_PARAM_COUNT) {
        snprintf(out, len, "%" PRId64, v);
        return;
    }
    static const struct {
        int64_t ns;
        const char *unit;
    } units[] = {{TK_NS_PER_S, "s"}, {MS, "ms"}, {US, "us"}, {1, "ns"}};
    size_t u = 3;
    for (size_t k = 0; v != 0 && k < 4; k++) {
        if (v % units[k].ns == 0) {
            u = k;
            break;
        }
    }
    snprintf(out, len, "%" PRId64 "%s", v / units[u].ns, units[u].unit);
}

static void readme_lists_every_engine_parameter_as_the_tables_define_it(void **state) {
    (void)state;
    if (readme_path == NULL)
        skip();
    FILE *f = fopen(readme_path, "r");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    tk_queue_config defaults;
    tk_queue_config_init(&defaults);
    int missing = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            char lo[32], hi[32], def[32], row[512];
            bound_text(p, p->min, lo, sizeof(lo));
            bound_text(p, p->max, hi, sizeof(hi));
            assert_int_equal(tk_queue_param_format(p, &defaults, def, sizeof(def)), TK_OK);
            const char *flags = (p->flags & TK_PARAM_ALWAYS) && (p->flags & TK_PARAM_ADAPTER)
                                    ? "always, adapter"
                                : (p->flags & TK_PARAM_ALWAYS)  ? "always"
                                : (p->flags & TK_PARAM_ADAPTER) ? "adapter"
                                                                : "-";
            snprintf(row, sizeof(row), "| `%s` | `%s` | `%s` | %s | %s to %s | %s | %s | %s |",
                     ops->name, p->key, field_name(p->offset),
                     p->type == TK_PARAM_DURATION ? "duration" : "count", lo, hi, def, flags,
                     p->help);
            if (strstr(text, row) == NULL) {
                missing++;
                print_error("README.md lacks: %s\n", row);
            }
        }
    }
    assert_int_equal(missing, 0);
}

int main(int argc, char **argv) {
    if (argc > 1)
        readme_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_engine_has_a_well_formed_parameter_table),
        cmocka_unit_test(every_accepted_form_gives_its_engine_and_config),
        cmocka_unit_test(max_pending_takes_counts_up_to_int64_max),
        cmocka_unit_test(every_malformed_spec_fails_with_a_message_that_names_the_problem),
        cmocka_unit_test(null_arguments_and_short_error_buffers),
        cmocka_unit_test(canonical_specs_are_written_in_table_order_without_defaults),
        cmocka_unit_test(format_then_parse_gives_back_the_same_engine_and_config),
        cmocka_unit_test(param_values_are_written_as_the_canonical_spec_writes_them),
        cmocka_unit_test(format_reports_bad_input_and_out_of_range_configs),
        cmocka_unit_test(a_buffer_too_small_gets_efull_and_the_start_of_the_text),
        cmocka_unit_test(create_refuses_every_value_outside_the_table_and_takes_each_minimum),
        cmocka_unit_test(an_executor_created_from_a_parsed_spec_runs_a_task),
        cmocka_unit_test(readme_lists_every_engine_parameter_as_the_tables_define_it),
    };
    return cmocka_run_group_tests_name("spec", tests, NULL, NULL);
}
