/* SPDX-License-Identifier: MIT */
/* timerkit: engine configs and spec strings: tk_queue_config_init_for/_set/
 * _set_value/_get_value/_check, tk_queue_config_parse/_format,
 * tk_queue_param_format, tk_queue_create, and the SDK's tk_engine_check and
 * tk_engine_register, with the engines' parameter tables behind them.
 *
 * Table-driven: every accepted form with the config it must give, every
 * error with its status and message, the canonical forms, round trips,
 * short buffers, create() against every engine's table, an executor built
 * from a parsed spec, README's parameter table against the engines' tables,
 * malformed stand-in tables, and an engine of this file's own (a sorted list
 * core on the generic blocking adapter) registered at run time.
 *
 * Rows whose spec holds "%E" run on every registered engine whose table has
 * the keys the row uses; in a row's expected message "%E" is that engine's
 * name, "%K" its keys and "%L" the registered engines' names. Rows that name
 * heap or wheel test those engines' own parameters. Behaviour only; nothing
 * here measures speed.
 *
 * The registry is process-global, so the test that registers engines runs
 * last: the others see only the built-in engines.
 *
 * Usage: tk_spec_test [README.md]. With a path, also checks README's
 * parameter table (CTest passes the source tree's README). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "list-engine.h"
#include "param-store.h"
#include "timerkit.h"
#include "timerkit/engine.h"

#define MS TK_NS_PER_MS
#define US TK_NS_PER_US
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static size_t builtin_count; /* tk_engine_count() before any registration */

/* ---- the test's own writers ---------------------------------------------------- */

/* A value as the canonical spec writes it, written here independently of
 * the library: a duration in the largest of s, ms, us, ns dividing it, a
 * count in decimal. */
static void own_text(const tk_queue_param *p, uint64_t raw, char *out, size_t len) {
    if (p->type == TK_PARAM_COUNT) {
        snprintf(out, len, "%" PRIu64, raw);
        return;
    }
    int64_t v = (int64_t)raw;
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

/* "capacity, max_pending, spin": the engine's keys in table order. */
static void keys_of(const tk_queue_ops *ops, char *out, size_t len) {
    out[0] = '\0';
    for (size_t i = 0; i < ops->param_count; i++) {
        if (i > 0)
            strncat(out, ", ", len - strlen(out) - 1);
        strncat(out, ops->params[i].key, len - strlen(out) - 1);
    }
    if (ops->param_count == 0)
        strncat(out, "(none)", len - strlen(out) - 1);
}

/* "heap, wheel": the registered engines' names, in registry order. */
static void engine_names(char *out, size_t len) {
    out[0] = '\0';
    for (size_t e = 0; e < tk_engine_count(); e++) {
        if (e > 0)
            strncat(out, ", ", len - strlen(out) - 1);
        strncat(out, tk_engine_at(e)->name, len - strlen(out) - 1);
    }
}

/* Copies tmpl into out with %E, %K and %L replaced (see the top). */
static void expand(const char *tmpl, const tk_queue_ops *ops, char *out, size_t len) {
    char keys[256] = "", names[512] = "";
    if (ops != NULL)
        keys_of(ops, keys, sizeof(keys));
    engine_names(names, sizeof(names));
    size_t pos = 0;
    out[0] = '\0';
    for (const char *s = tmpl; *s != '\0' && pos + 1 < len; s++) {
        const char *put = NULL;
        if (s[0] == '%' && (s[1] == 'E' || s[1] == 'K' || s[1] == 'L')) {
            put = s[1] == 'E' ? (ops != NULL ? ops->name : "?") : s[1] == 'K' ? keys : names;
            s++;
        }
        if (put == NULL) {
            out[pos++] = *s;
            out[pos] = '\0';
        } else {
            int w = snprintf(out + pos, len - pos, "%s", put);
            pos = w < 0 ? pos : (size_t)w >= len - pos ? len - 1 : pos + (size_t)w;
        }
    }
}

static const tk_queue_param *find_key(const tk_queue_ops *ops, const char *key) {
    for (size_t i = 0; i < ops->param_count; i++)
        if (strcmp(ops->params[i].key, key) == 0)
            return &ops->params[i];
    return NULL;
}

static const tk_queue_param *param_of(const tk_queue_ops *ops, const char *key) {
    const tk_queue_param *p = find_key(ops, key);
    if (p == NULL)
        fail_msg("%s has no parameter '%s'", ops->name, key);
    return p;
}

/* The largest value p's field can hold. */
static uint64_t field_max(const tk_queue_param *p) {
    if (p->type == TK_PARAM_DURATION)
        return (uint64_t)INT64_MAX;
    return p->size >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * p->size)) - 1;
}

/* A value of p other than its default (its minimum if it can), or the
 * default if p has no other. */
static int64_t away_from_default(const tk_queue_param *p) {
    if (p->def != p->min)
        return p->min;
    return p->def < p->max ? p->def + 1 : p->def;
}

/* ---- comparing configs ------------------------------------------------------------ */

/* An expected value: key and value (ns for a duration). */
typedef struct kv {
    const char *key;
    int64_t value;
} kv;

#define KV_MAX 5

/* engine's defaults with the given values set. */
static tk_queue_config config_with(const tk_queue_ops *ops, const kv *want, size_t n) {
    tk_queue_config c;
    assert_int_equal(tk_queue_config_init_for(&c, ops), TK_OK);
    for (size_t i = 0; i < n && want[i].key != NULL; i++) {
        int rc = tk_queue_config_set_value(&c, want[i].key, want[i].value);
        if (rc != TK_OK)
            fail_msg("%s: set_value(%s, %" PRId64 "): %s", ops->name, want[i].key, want[i].value,
                     tk_status_name(rc));
    }
    return c;
}

/* True if got and want hold the same engine, shared fields and parameters;
 * prints the first difference. */
static bool same_config(const tk_queue_config *got, const tk_queue_config *want, const char *what) {
    if (got->engine != want->engine || got->allocator != want->allocator ||
        got->thread_name != want->thread_name) {
        print_error("'%s': engine, allocator or thread_name differ\n", what);
        return false;
    }
    const tk_queue_ops *ops = want->engine;
    for (size_t i = 0; ops != NULL && i < ops->param_count; i++) {
        int64_t g = 0, w = 0;
        int rg = tk_queue_config_get_value(got, ops->params[i].key, &g);
        int rw = tk_queue_config_get_value(want, ops->params[i].key, &w);
        if (rg != rw || g != w) {
            print_error("'%s': %s is %" PRId64 " (%s), want %" PRId64 " (%s)\n", what,
                        ops->params[i].key, g, tk_status_name(rg), w, tk_status_name(rw));
            return false;
        }
    }
    if (got->spin_ns != want->spin_ns || got->max_pending != want->max_pending ||
        memcmp(got->params.bytes, want->params.bytes, sizeof(got->params.bytes)) != 0) {
        print_error("'%s': the stored fields differ\n", what);
        return false;
    }
    return true;
}

/* ---- the tables ---------------------------------------------------------------- */

/* The tk_queue_config field at `offset` an adapter entry names. */
static const char *config_field(size_t offset) {
    static const struct {
        size_t offset;
        const char *name;
    } fields[] = {
        {offsetof(tk_queue_config, allocator), "allocator"},
        {offsetof(tk_queue_config, thread_name), "thread_name"},
        {offsetof(tk_queue_config, spin_ns), "spin_ns"},
        {offsetof(tk_queue_config, max_pending), "max_pending"},
    };
    for (size_t i = 0; i < COUNT_OF(fields); i++)
        if (fields[i].offset == offset)
            return fields[i].name;
    return NULL;
}

static void every_engine_has_a_well_formed_parameter_table(void **state) {
    (void)state;
    assert_true(tk_engine_count() >= 1);
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        char err[256] = "junk";
        int rc = tk_engine_check(ops, err, sizeof(err));
        if (rc != TK_OK)
            fail_msg("%s: tk_engine_check: %s", ops->name, err);
        assert_string_equal(err, "");
        assert_true(ops->param_count == 0 || ops->params != NULL);
        assert_true(ops->params_size <= TK_QUEUE_PARAMS_SIZE);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            assert_non_null(p->key);
            assert_true(strlen(p->key) > 0);
            assert_null(strpbrk(p->key, ":,= \t"));
            assert_non_null(p->help);
            assert_true(p->min <= p->def && p->def <= p->max);
            if ((p->flags & TK_PARAM_ADAPTER) != 0) {
                assert_non_null(config_field(p->offset));
                assert_true(p->offset + p->size <= offsetof(tk_queue_config, engine));
            } else {
                assert_true(p->offset + p->size <= ops->params_size);
            }
            if (p->type == TK_PARAM_DURATION) {
                assert_int_equal(p->size, sizeof(int64_t));
            } else {
                assert_int_equal(p->type, TK_PARAM_COUNT);
                assert_true(p->size == 1 || p->size == 2 || p->size == 4 || p->size == 8);
                assert_true(p->min >= 0);
                assert_true((uint64_t)p->max <= field_max(p));
            }
            assert_int_equal(p->flags & ~(TK_PARAM_ALWAYS | TK_PARAM_ADAPTER), 0);
            for (size_t j = 0; j < i; j++) {
                const tk_queue_param *q = &ops->params[j];
                assert_string_not_equal(p->key, q->key);
                /* two fields of one struct never overlap */
                if ((p->flags & TK_PARAM_ADAPTER) == (q->flags & TK_PARAM_ADAPTER))
                    assert_true(p->offset + p->size <= q->offset ||
                                q->offset + q->size <= p->offset);
            }
        }
        /* The defaults themselves pass the engine's check and format. */
        tk_queue_config defaults;
        tk_queue_config_init(&defaults);
        assert_int_equal(tk_queue_config_check(ops, &defaults, NULL, 0), TK_OK);
        char buf[128];
        assert_int_equal(tk_queue_config_format(ops, &defaults, buf, sizeof(buf)), TK_OK);
        assert_ptr_equal(tk_engine_by_name(ops->name), ops);
    }
    assert_null(tk_engine_at(tk_engine_count()));
}

/* ---- init_for -------------------------------------------------------------------- */

static void init_for_sets_the_engines_defaults_from_its_table(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        tk_queue_config cfg;
        memset(&cfg, 0xa5, sizeof(cfg));
        assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
        assert_ptr_equal(cfg.engine, ops);
        assert_null(cfg.allocator);
        assert_null(cfg.thread_name);
        assert_int_equal(cfg.spin_ns, 0);
        assert_int_equal(cfg.max_pending, 0);
        for (size_t i = 0; i < ops->param_count; i++) {
            int64_t v = -12345;
            assert_int_equal(tk_queue_config_get_value(&cfg, ops->params[i].key, &v), TK_OK);
            if (v != ops->params[i].def)
                fail_msg("%s: %s starts at %" PRId64 ", its default is %" PRId64, ops->name,
                         ops->params[i].key, v, ops->params[i].def);
        }
        assert_int_equal(tk_queue_config_check(ops, &cfg, NULL, 0), TK_OK);
        /* The same spec as a config that names no engine, or none at all. */
        tk_queue_config none;
        tk_queue_config_init(&none);
        char a[128], b[128], c[128];
        assert_int_equal(tk_queue_config_format(ops, &cfg, a, sizeof(a)), TK_OK);
        assert_int_equal(tk_queue_config_format(ops, &none, b, sizeof(b)), TK_OK);
        assert_string_equal(a, b);
        tk_queue_config zero;
        memset(&zero, 0, sizeof(zero));
        assert_int_equal(tk_queue_config_format(ops, &zero, c, sizeof(c)), TK_OK);
        assert_string_equal(a, c);
    }
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(NULL, tk_engine_at(0)), TK_EINVAL);
    assert_int_equal(tk_queue_config_init_for(&cfg, NULL), TK_EINVAL);
    assert_int_equal(tk_queue_config_init_for(NULL, NULL), TK_EINVAL);
}

/* ---- a stand-in engine ------------------------------------------------------------
 *
 * The example engine of examples/engine/ (a sorted list core with one
 * parameter of its own, `grain`, on the generic adapter), under a name of
 * this test's own: main() copies its table, so that the tests can register
 * it and break copies of it without touching the example. */

#define LIST_NAME "tkt-list"

static tk_queue_ops list_engine;  /* example_list_engine, renamed (main()) */
static tk_core_ops list_core_ops; /* its core, to break copies of */

/* ---- malformed tables --------------------------------------------------------------- */

/* A stand-in table with one thing wrong, and a word its message must hold. */
typedef struct bad_table {
    const char *what;
    tk_queue_param params[4];
    size_t count;
    size_t params_size;
    bool params_null;
    const char *says;
} bad_table;

/* A parameter-table entry, every field given. */
#define PARAM(key_, type_, flags_, offset_, size_, min_, max_, def_)                               \
    {                                                                                              \
        .key = (key_), .type = (type_), .flags = (flags_), .offset = (offset_), .size = (size_),   \
        .min = (min_), .max = (max_), .def = (def_), .help = "stand-in"                            \
    }
#define DUR TK_PARAM_DURATION
#define CNT TK_PARAM_COUNT
#define GRAIN PARAM("grain", DUR, 0, 0, 8, 1, TK_NS_PER_S, US)

static const bad_table bad_tables[] = {
    {"def above max",
     {PARAM("grain", DUR, 0, 0, 8, 1, TK_NS_PER_S, TK_NS_PER_S + 1)},
     1,
     8,
     false,
     "entry 0 ('grain') of the parameter table is malformed"},
    {"def below min",
     {PARAM("grain", DUR, 0, 0, 8, 1, TK_NS_PER_S, 0)},
     1,
     8,
     false,
     "min <= def <= max"},
    {"min above max", {PARAM("grain", DUR, 0, 0, 8, 5, 4, 4)}, 1, 8, false, "'grain'"},
    {"field past params_size",
     {PARAM("grain", DUR, 0, 4, 8, 1, 9, 1)},
     1,
     8,
     false,
     "a field inside params_size"},
    {"field in an empty struct", {GRAIN}, 1, 0, false, "a field inside params_size"},
    {"params_size too large",
     {GRAIN},
     1,
     TK_QUEUE_PARAMS_SIZE + 1,
     false,
     "params_size 129 is larger than TK_QUEUE_PARAMS_SIZE (128 bytes)"},
    {"one key twice",
     {GRAIN, PARAM("grain", DUR, 0, 8, 8, 1, 9, 1)},
     2,
     16,
     false,
     "the parameter table has the key 'grain' twice"},
    {"no key", {PARAM(NULL, DUR, 0, 0, 8, 1, 9, 1)}, 1, 8, false, "entry 0 ('(no key)')"},
    {"empty key", {PARAM("", DUR, 0, 0, 8, 1, 9, 1)}, 1, 8, false, "malformed"},
    {"unknown type",
     {PARAM("grain", (tk_param_type)9, 0, 0, 8, 1, 9, 1)},
     1,
     8,
     false,
     "malformed"},
    {"duration of 4 bytes", {PARAM("grain", DUR, 0, 0, 4, 1, 9, 1)}, 1, 8, false, "malformed"},
    {"count of 3 bytes", {PARAM("grain", CNT, 0, 0, 3, 1, 100, 1)}, 1, 8, false, "malformed"},
    {"count whose max its field cannot hold",
     {PARAM("grain", CNT, 0, 0, 1, 1, 256, 1)},
     1,
     8,
     false,
     "malformed"},
    {"count with a negative min",
     {PARAM("grain", CNT, 0, 0, 8, -1, 100, 0)},
     1,
     8,
     false,
     "malformed"},
    {"adapter field past the adapter's fields",
     {PARAM("grain", DUR, TK_PARAM_ADAPTER, offsetof(tk_queue_config, engine), 8, 1, 9, 1)},
     1,
     0,
     false,
     "a field inside tk_queue_config's adapter fields"},
    {"params NULL", {GRAIN}, 1, 8, true, "param_count is 1 but params is NULL"},
};

/* `base` with the bad table's parameters. */
static tk_queue_ops with_table(const tk_queue_ops *base, const bad_table *b) {
    tk_queue_ops o = *base;
    o.params = b->params_null ? NULL : b->params;
    o.param_count = b->count;
    o.params_size = b->params_size;
    return o;
}

static void a_malformed_table_is_refused_everywhere(void **state) {
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < COUNT_OF(bad_tables); i++) {
        const bad_table *b = &bad_tables[i];
        tk_queue_ops o = with_table(&list_engine, b);
        tk_queue_config cfg, before;
        tk_queue_config_init(&cfg);
        before = cfg;
        char err[256] = "junk";
        int rc = tk_engine_check(&o, err, sizeof(err));
        bool ok = rc == TK_EINVAL && strstr(err, b->says) != NULL &&
                  strncmp(err, LIST_NAME ": ", strlen(LIST_NAME) + 2) == 0;
        if (!ok)
            print_error("  %s: tk_engine_check gave %s \"%s\"\n", b->what, tk_status_name(rc), err);
        int init_rc = tk_queue_config_init_for(&cfg, &o);
        if (init_rc != TK_EINVAL || memcmp(&cfg, &before, sizeof(cfg)) != 0) {
            print_error("  %s: init_for gave %s\n", b->what, tk_status_name(init_rc));
            ok = false;
        }
        char err2[256] = "junk";
        rc = tk_queue_config_check(&o, NULL, err2, sizeof(err2));
        if (rc != TK_EINVAL || strcmp(err, err2) != 0) {
            print_error("  %s: check gave %s \"%s\"\n", b->what, tk_status_name(rc), err2);
            ok = false;
        }
        tk_queue *q = (tk_queue *)(uintptr_t)1;
        rc = tk_queue_create(&o, NULL, NULL, NULL, &q);
        if (rc != TK_EINVAL || q != NULL) {
            print_error("  %s: tk_queue_create gave %s\n", b->what, tk_status_name(rc));
            ok = false;
            if (rc == TK_OK)
                o.destroy(q);
        }
        char buf[64] = "junk";
        rc = tk_queue_config_format(&o, NULL, buf, sizeof(buf));
        rc = rc == TK_EINVAL ? tk_queue_config_format(&o, &cfg, buf, sizeof(buf)) : rc;
        if (rc != TK_EINVAL || buf[0] != '\0') {
            print_error("  %s: format gave %s \"%s\"\n", b->what, tk_status_name(rc), buf);
            ok = false;
        }
        /* A config that claims the engine gets nothing past the table check. */
        cfg.engine = &o;
        before = cfg;
        int64_t v = 0;
        if (tk_queue_config_set(&cfg, "grain", "1us", NULL, 0) != TK_EINVAL ||
            tk_queue_config_set_value(&cfg, "grain", US) != TK_EINVAL ||
            tk_queue_config_get_value(&cfg, "grain", &v) != TK_EINVAL ||
            memcmp(&cfg, &before, sizeof(cfg)) != 0) {
            print_error("  %s: set/set_value/get_value accepted the table\n", b->what);
            ok = false;
        }
        rc = tk_engine_register(&o, NULL, 0);
        if (rc != TK_EINVAL) {
            print_error("  %s: tk_engine_register gave %s\n", b->what, tk_status_name(rc));
            ok = false;
        }
        if (!ok)
            bad++;
    }
    assert_null(tk_engine_by_name(LIST_NAME));
    print_message("  %zu malformed tables, %d mismatches\n", COUNT_OF(bad_tables), bad);
    assert_int_equal(bad, 0);
}

/* ---- accepted forms ------------------------------------------------------------- */

typedef struct accepted {
    const char *spec; /* "%E": every engine whose table has want's keys */
    kv want[KV_MAX];  /* the values set; every other parameter at its default */
} accepted;

static const accepted accepted_forms[] = {
    {"%E", {{NULL, 0}}},
    {"%E:spin=150us", {{"spin", 150 * US}}},
    {"%E:spin=0ns", {{"spin", 0}}},
    {"%E:spin=0s", {{"spin", 0}}},
    {"%E:spin=0.5ms", {{"spin", 500 * US}}},
    {"%E:spin=1000000000ns", {{"spin", TK_NS_PER_S}}},
    {"%E:spin=1s", {{"spin", TK_NS_PER_S}}},
    {"%E:spin=0.000000001s", {{"spin", 1}}},
    {"%E:max_pending=0", {{"max_pending", 0}}},
    {"%E:max_pending=100000", {{"max_pending", 100000}}},
    {"%E:max_pending=00012", {{"max_pending", 12}}},
    {"%E:max_pending=100000,spin=150us", {{"max_pending", 100000}, {"spin", 150 * US}}},
    {"%E:spin=150us,max_pending=100000", {{"max_pending", 100000}, {"spin", 150 * US}}},
    /* the heap's own parameter */
    {"heap:capacity=4096", {{"capacity", 4096}}},
    {"heap:capacity=1,spin=1s", {{"capacity", 1}, {"spin", TK_NS_PER_S}}},
    {"heap:spin=1s,capacity=1", {{"capacity", 1}, {"spin", TK_NS_PER_S}}},
    {"heap:capacity=64", {{"capacity", 64}}},
    {"heap:capacity=0007", {{"capacity", 7}}},
    {"heap:max_pending=3,capacity=2,spin=1us", {{"capacity", 2}, {"max_pending", 3}, {"spin", US}}},
    /* the wheel's */
    {"wheel:tick=1ms,slots=1024", {{"tick", MS}, {"slots", 1024}}},
    {"wheel:tick=1ms,slots=1024,spin=150us", {{"tick", MS}, {"slots", 1024}, {"spin", 150 * US}}},
    {"wheel:slots=1024,tick=1ms", {{"tick", MS}, {"slots", 1024}}},
    {"wheel:tick=100ms,slots=512", {{"tick", 100 * MS}, {"slots", 512}}},
    {"wheel:tick=1.5ms", {{"tick", 1500 * US}}},
    {"wheel:tick=2s", {{"tick", 2 * TK_NS_PER_S}}},
    {"wheel:tick=600s", {{"tick", 600 * TK_NS_PER_S}}},
    {"wheel:tick=0.01ms", {{"tick", 10 * US}}},
    {"wheel:tick=10000ns", {{"tick", 10 * US}}},
    {"wheel:tick=10us", {{"tick", 10 * US}}},
    {"wheel:tick=1.000000000000s", {{"tick", TK_NS_PER_S}}},
    {"wheel:tick=0.000123456s", {{"tick", 123456}}},
    {"wheel:tick=549755813887ns", {{"tick", INT64_C(549755813887)}}},
    {"wheel:tick=549755813888ns", {{"tick", INT64_C(549755813888)}}},
    {"wheel:slots=1", {{"slots", 1}}},
    {"wheel:slots=16777216", {{"slots", INT64_C(1) << 24}}},
    {"wheel:tick=549755813887ns,slots=16777216",
     {{"tick", INT64_C(549755813887)}, {"slots", INT64_C(1) << 24}}},
    /* the largest revolutions: tick x slots (rounded up to a power of two)
     * up to INT64_MAX ns */
    {"wheel:tick=18014398509481983ns", {{"tick", INT64_MAX / 512}}},
    {"wheel:tick=9007199254740991ns,slots=1024", {{"tick", INT64_MAX / 1024}, {"slots", 1024}}},
    {"wheel:tick=9007199254740991ns,slots=513", {{"tick", INT64_MAX / 1024}, {"slots", 513}}},
    {"wheel:tick=9223372036854775807ns,slots=1", {{"tick", INT64_MAX}, {"slots", 1}}},
    {"wheel:tick=4611686018427387903ns,slots=2", {{"tick", INT64_MAX / 2}, {"slots", 2}}},
    {"wheel:tick=1ms,slots=1024,max_pending=100000,spin=150us",
     {{"tick", MS}, {"slots", 1024}, {"max_pending", 100000}, {"spin", 150 * US}}},
};

/* True if ops's table has every key of want. */
static bool has_keys(const tk_queue_ops *ops, const kv *want) {
    for (size_t i = 0; i < KV_MAX && want[i].key != NULL; i++)
        if (find_key(ops, want[i].key) == NULL)
            return false;
    return true;
}

/* Calls fn(spec, engine, row) for each engine a spec row runs on: the
 * engine its spec names, or with "%E" every registered engine that has
 * `keys` (NULL: every engine). Returns how many. */
typedef void (*row_fn)(const char *spec, const tk_queue_ops *ops, const void *row);

static size_t for_each_engine_of(const char *tmpl, const kv *keys, row_fn fn, const void *row) {
    char spec[256];
    if (strstr(tmpl, "%E") == NULL) {
        char name[64];
        size_t n = strcspn(tmpl, ":");
        snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), tmpl);
        fn(tmpl, tk_engine_by_name(name), row);
        return 1;
    }
    size_t runs = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        if (keys != NULL && !has_keys(ops, keys))
            continue;
        expand(tmpl, ops, spec, sizeof(spec));
        fn(spec, ops, row);
        runs++;
    }
    return runs;
}

static int accepted_bad;

static void check_accepted(const char *spec, const tk_queue_ops *ops, const void *row) {
    const accepted *a = row;
    assert_non_null(ops);
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    memset(&cfg, 0xa5, sizeof(cfg));
    char err[160] = "junk";
    int rc = tk_queue_config_parse(spec, &engine, &cfg, err, sizeof(err));
    if (rc != TK_OK || strcmp(err, "") != 0 || engine != ops) {
        print_error("  '%s': %s \"%s\"\n", spec, tk_status_name(rc), err);
        accepted_bad++;
        return;
    }
    tk_queue_config want = config_with(ops, a->want, KV_MAX);
    if (!same_config(&cfg, &want, spec))
        accepted_bad++;
}

static void every_accepted_form_gives_its_engine_and_config(void **state) {
    (void)state;
    accepted_bad = 0;
    for (size_t i = 0; i < COUNT_OF(accepted_forms); i++) {
        const accepted *a = &accepted_forms[i];
        size_t runs = for_each_engine_of(a->spec, a->want, check_accepted, a);
        if (runs == 0)
            fail_msg("'%s' runs on no registered engine", a->spec);
    }
    assert_int_equal(accepted_bad, 0);
    /* err may be NULL, or have no room at all. */
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_parse("wheel:tick=2ms", &engine, &cfg, NULL, 0), TK_OK);
    int64_t tick = 0;
    assert_int_equal(tk_queue_config_get_value(&cfg, "tick", &tick), TK_OK);
    assert_int_equal(tick, 2 * MS);
    char untouched[4] = "xyz";
    assert_int_equal(tk_queue_config_parse("heap", &engine, &cfg, untouched, 0), TK_OK);
    assert_string_equal(untouched, "xyz");
}

/* Every parameter of every engine at its minimum, its default and its
 * maximum, written as the canonical spec writes it: parse agrees with
 * init_for + set_value + check, value and message alike. */
static void every_parameter_parses_at_its_bounds_as_set_value_and_check_say(void **state) {
    (void)state;
    int bad = 0, tried = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            int64_t values[3] = {p->min, p->def, p->max};
            for (size_t k = 0; k < 3; k++) {
                char text[32], spec[128], err1[256], err2[256];
                own_text(p, (uint64_t)values[k], text, sizeof(text));
                snprintf(spec, sizeof(spec), "%s:%s=%s", ops->name, p->key, text);
                tk_queue_config want;
                assert_int_equal(tk_queue_config_init_for(&want, ops), TK_OK);
                assert_int_equal(tk_queue_config_set_value(&want, p->key, values[k]), TK_OK);
                int want_rc = tk_queue_config_check(ops, &want, err1, sizeof(err1));
                const tk_queue_ops *engine = NULL;
                tk_queue_config got;
                int rc = tk_queue_config_parse(spec, &engine, &got, err2, sizeof(err2));
                tried++;
                if (rc != want_rc || strcmp(err1, err2) != 0) {
                    print_error("  '%s': parse %s \"%s\", check %s \"%s\"\n", spec,
                                tk_status_name(rc), err2, tk_status_name(want_rc), err1);
                    bad++;
                } else if (rc == TK_OK && (engine != ops || !same_config(&got, &want, spec))) {
                    bad++;
                }
            }
        }
    }
    print_message("  %d specs, %d mismatches\n", tried, bad);
    assert_true(tried > 0);
    assert_int_equal(bad, 0);
}

static void max_pending_takes_counts_up_to_int64_max(void **state) {
    (void)state;
    if (SIZE_MAX < (uint64_t)INT64_MAX)
        skip();
    size_t runs = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        if (find_key(ops, "max_pending") == NULL)
            continue;
        char spec[128];
        snprintf(spec, sizeof(spec), "%s:max_pending=9223372036854775807", ops->name);
        const tk_queue_ops *engine = NULL;
        tk_queue_config cfg;
        assert_int_equal(tk_queue_config_parse(spec, &engine, &cfg, NULL, 0), TK_OK);
        assert_int_equal(cfg.max_pending, (size_t)INT64_MAX);
        int64_t v = 0;
        assert_int_equal(tk_queue_config_get_value(&cfg, "max_pending", &v), TK_OK);
        assert_int_equal(v, INT64_MAX);
        runs++;
    }
    assert_true(runs > 0);
}

/* ---- errors -------------------------------------------------------------------- */

typedef struct rejected {
    const char *spec;
    const char *needs[2]; /* with "%E": keys the engine must have */
    int status;
    const char *says[3]; /* each must appear in the message */
} rejected;

#define REVOLUTION(tick, slots)                                                                    \
    "wheel: one revolution, tick=" tick "ns x slots=" slots                                        \
    ", overflows int64 nanoseconds; make the tick or the wheel smaller"

static const rejected rejected_forms[] = {
    /* engines */
    {"foo", {NULL}, TK_ENOENT, {"unknown engine 'foo'; known: %L"}},
    {"Heap", {NULL}, TK_ENOENT, {"unknown engine 'Heap'; known: %L"}},
    {"foo:tick=1ms", {NULL}, TK_ENOENT, {"unknown engine 'foo'; known: %L"}},
    {"", {NULL}, TK_EINVAL, {"empty spec; known engines: %L"}},
    {":tick=1ms", {NULL}, TK_EINVAL, {"no engine name before ':'; known engines: %L"}},
    {":", {NULL}, TK_EINVAL, {"no engine name before ':'; known engines: %L"}},
    /* shape */
    {"%E:", {NULL}, TK_EINVAL, {"%E: nothing after ':'; known parameters: %K"}},
    {"wheel:", {NULL}, TK_EINVAL, {"wheel: nothing after ':'", "tick, slots, max_pending, spin"}},
    {"heap:", {NULL}, TK_EINVAL, {"heap: nothing after ':'", "capacity, max_pending, spin"}},
    {"%E:spin=1ms,", {"spin"}, TK_EINVAL, {"%E: nothing after the last ','"}},
    {"wheel:tick=1ms,", {NULL}, TK_EINVAL, {"wheel: nothing after the last ','"}},
    {"%E:,spin=1ms", {"spin"}, TK_EINVAL, {"%E: empty parameter before a ','; known: %K"}},
    {"wheel:,tick=1ms", {NULL}, TK_EINVAL, {"wheel:", "empty parameter", "tick, slots"}},
    {"%E:spin=1ms,,max_pending=8", {"spin"}, TK_EINVAL, {"%E: empty parameter before a ','"}},
    {"wheel:tick=1ms,,slots=8", {NULL}, TK_EINVAL, {"wheel:", "empty parameter"}},
    {"%E:=1ms", {NULL}, TK_EINVAL, {"%E: parameter with an empty name in '=1ms'; known: %K"}},
    {"wheel:=1ms",
     {NULL},
     TK_EINVAL,
     {"wheel:", "empty name", "known: tick, slots, max_pending, spin"}},
    {"wheel: tick=1ms",
     {NULL},
     TK_EINVAL,
     {"whitespace at offset 6 of the spec; a spec has none: ENGINE[:KEY=VALUE[,KEY=VALUE]...]"}},
    {" heap", {NULL}, TK_EINVAL, {"whitespace", "offset 0"}},
    {"heap\t", {NULL}, TK_EINVAL, {"whitespace", "offset 4"}},
    {"heap:spin=1ms\n", {NULL}, TK_EINVAL, {"whitespace"}},
    {"wheel:tick=1ms ,slots=8", {NULL}, TK_EINVAL, {"whitespace"}},
    {"nosuchengine :", {NULL}, TK_EINVAL, {"whitespace"}}, /* whitespace comes before the lookup */
    /* keys */
    {"%E:foo", {NULL}, TK_EINVAL, {"%E: unknown parameter 'foo'; known: %K"}},
    {"%E:foo=1", {NULL}, TK_EINVAL, {"%E: unknown parameter 'foo'; known: %K"}},
    {"wheel:foo",
     {NULL},
     TK_EINVAL,
     {"wheel: unknown parameter 'foo'; known: tick, slots, max_pending, spin"}},
    {"heap:tick=1ms",
     {NULL},
     TK_EINVAL,
     {"heap: unknown parameter 'tick'; known: capacity, max_pending, spin"}},
    {"%E:Spin=1ms", {NULL}, TK_EINVAL, {"%E: unknown parameter 'Spin'"}},
    {"wheel:Tick=1ms", {NULL}, TK_EINVAL, {"unknown parameter 'Tick'"}},
    {"%E:spin", {"spin"}, TK_EINVAL, {"%E: parameter 'spin' has no '='; write spin=VALUE"}},
    {"%E:max_pending=8,spin",
     {"spin", "max_pending"},
     TK_EINVAL,
     {"%E: parameter 'spin' has no '='"}},
    {"wheel:tick", {NULL}, TK_EINVAL, {"wheel: parameter 'tick' has no '='; write tick=VALUE"}},
    {"wheel:slots=8,tick", {NULL}, TK_EINVAL, {"'tick'", "no '='"}},
    {"%E:spin=", {"spin"}, TK_EINVAL, {"%E: parameter 'spin' has no value after '='"}},
    {"%E:spin=,max_pending=8", {"spin"}, TK_EINVAL, {"%E: parameter 'spin' has no value"}},
    {"wheel:tick=", {NULL}, TK_EINVAL, {"wheel: parameter 'tick' has no value after '='"}},
    {"wheel:tick=,slots=8", {NULL}, TK_EINVAL, {"'tick'", "no value"}},
    {"%E:spin=1ms,spin=2ms", {"spin"}, TK_EINVAL, {"%E: parameter 'spin' is given twice"}},
    {"%E:spin=1ms,max_pending=8,spin=1ms",
     {"spin", "max_pending"},
     TK_EINVAL,
     {"%E: parameter 'spin' is given"}},
    {"wheel:tick=1ms,tick=2ms", {NULL}, TK_EINVAL, {"wheel: parameter 'tick' is given twice"}},
    {"wheel:tick=1ms,slots=8,tick=1ms", {NULL}, TK_EINVAL, {"'tick'", "twice"}},
    {"heap:spin=1ms,capacity=8,spin=1ms", {NULL}, TK_EINVAL, {"heap: parameter 'spin' is given"}},
    /* ranges */
    {"wheel:tick=5us", {NULL}, TK_EINVAL, {"wheel: tick=5us is below the minimum 10us"}},
    {"wheel:tick=9999ns", {NULL}, TK_EINVAL, {"wheel: tick=9999ns is below the minimum 10us"}},
    {"wheel:tick=0ns", {NULL}, TK_EINVAL, {"wheel: tick=0ns is below the minimum 10us"}},
    {"wheel:slots=0", {NULL}, TK_EINVAL, {"wheel: slots=0 is below the minimum 1"}},
    {"wheel:slots=16777217",
     {NULL},
     TK_EINVAL,
     {"wheel: slots=16777217 is above the maximum 16777216"}},
    {"wheel:slots=4294967296",
     {NULL},
     TK_EINVAL,
     {"slots=4294967296 is above the maximum 16777216"}},
    {"heap:capacity=0", {NULL}, TK_EINVAL, {"heap: capacity=0 is below the minimum 1"}},
    {"heap:capacity=18446744073709551615",
     {NULL},
     TK_EINVAL,
     {"heap: capacity=18446744073709551615 is above the maximum"}},
    {"%E:spin=1001ms", {"spin"}, TK_EINVAL, {"%E: spin=1001ms is above the maximum 1s"}},
    {"%E:spin=1000000001ns",
     {"spin"},
     TK_EINVAL,
     {"%E: spin=1000000001ns is above the maximum 1s"}},
    {"%E:max_pending=18446744073709551615",
     {"max_pending"},
     TK_EINVAL,
     {"%E: max_pending=18446744073709551615 is above the maximum"}},
    /* the wheel's parameters together (its validate()) */
    {"wheel:tick=18014398509481984ns", {NULL}, TK_EINVAL, {REVOLUTION("18014398509481984", "512")}},
    {"wheel:tick=9223372036854775807ns",
     {NULL},
     TK_EINVAL,
     {REVOLUTION("9223372036854775807", "512")}},
    {"wheel:tick=9007199254740992ns,slots=513",
     {NULL},
     TK_EINVAL,
     {REVOLUTION("9007199254740992", "1024")}},
    {"wheel:slots=16777216,tick=549755813888ns",
     {NULL},
     TK_EINVAL,
     {REVOLUTION("549755813888", "16777216")}},
    {"wheel:tick=600s,slots=16777216", {NULL}, TK_EINVAL, {REVOLUTION("600000000000", "16777216")}},
    {"wheel:tick=4611686018427387904ns,slots=2",
     {NULL},
     TK_EINVAL,
     {REVOLUTION("4611686018427387904", "2")}},
    /* values */
    {"%E:spin=1", {"spin"}, TK_EINVAL, {"%E: spin=1 has no unit; add ns, us, ms or s (1ms)"}},
    {"wheel:tick=1", {NULL}, TK_EINVAL, {"wheel: tick=1 has no unit; add ns, us, ms or s (1ms)"}},
    {"wheel:tick=1.5", {NULL}, TK_EINVAL, {"tick=1.5 has no unit"}},
    {"wheel:tick=-1ms", {NULL}, TK_EINVAL, {"wheel: tick=-1ms is negative"}},
    {"%E:spin=-0ns", {"spin"}, TK_EINVAL, {"%E: spin=-0ns is negative"}},
    {"wheel:slots=-1", {NULL}, TK_EINVAL, {"wheel: slots=-1 is negative"}},
    {"%E:max_pending=-5", {"max_pending"}, TK_EINVAL, {"%E: max_pending=-5 is negative"}},
    {"%E:spin=1msx", {"spin"}, TK_EINVAL, {"%E: spin=1msx has an unknown unit 'msx'; use ns, us"}},
    {"wheel:tick=1msx", {NULL}, TK_EINVAL, {"wheel: tick=1msx has an unknown unit 'msx'"}},
    {"wheel:tick=1MS", {NULL}, TK_EINVAL, {"tick=1MS has an unknown unit 'MS'"}},
    {"wheel:tick=1m", {NULL}, TK_EINVAL, {"tick=1m has an unknown unit 'm'"}},
    {"wheel:tick=1e3us", {NULL}, TK_EINVAL, {"tick=1e3us has an unknown unit 'e3us'"}},
    {"wheel:tick=1ms=2", {NULL}, TK_EINVAL, {"tick=1ms=2 has an unknown unit 'ms=2'"}},
    {"wheel:slots=12x", {NULL}, TK_EINVAL, {"wheel: slots=12x is not an unsigned decimal integer"}},
    {"%E:max_pending=12x",
     {"max_pending"},
     TK_EINVAL,
     {"%E: max_pending=12x is not an unsigned decimal integer"}},
    {"wheel:slots=1.5", {NULL}, TK_EINVAL, {"slots=1.5 is not an unsigned decimal integer"}},
    {"wheel:slots=0x10", {NULL}, TK_EINVAL, {"slots=0x10 is not an unsigned decimal integer"}},
    {"wheel:slots=+8", {NULL}, TK_EINVAL, {"slots=+8 is not an unsigned decimal integer"}},
    {"wheel:slots=1024:tick=1ms", {NULL}, TK_EINVAL, {"slots=1024:tick=1ms is not an unsigned"}},
    {"wheel:tick=+1ms",
     {NULL},
     TK_EINVAL,
     {"wheel: tick=+1ms is not a duration; write a number and a unit (ns, us, ms, s): 150us, "
      "1.5ms, 2s"}},
    {"%E:spin=+1ms", {"spin"}, TK_EINVAL, {"%E: spin=+1ms is not a duration"}},
    {"wheel:tick=.5ms", {NULL}, TK_EINVAL, {"tick=.5ms is not a duration"}},
    {"wheel:tick=1.ms", {NULL}, TK_EINVAL, {"tick=1.ms is not a duration"}},
    {"wheel:tick=ms", {NULL}, TK_EINVAL, {"tick=ms is not a duration"}},
    {"wheel:tick=1.5ns",
     {NULL},
     TK_EINVAL,
     {"wheel: tick=1.5ns is not a whole number of nanoseconds"}},
    {"%E:spin=0.5ns", {"spin"}, TK_EINVAL, {"%E: spin=0.5ns is not a whole number of nanoseconds"}},
    {"wheel:tick=0.0000000001s", {NULL}, TK_EINVAL, {"tick=0.0000000001s", "whole number"}},
    {"wheel:tick=10.0001us", {NULL}, TK_EINVAL, {"tick=10.0001us", "whole number"}},
    {"wheel:tick=9223372036854775808ns",
     {NULL},
     TK_EINVAL,
     {"wheel: tick=9223372036854775808ns is too large (it overflows int64 nanoseconds)"}},
    {"wheel:tick=9223372037s", {NULL}, TK_EINVAL, {"tick=9223372037s is too large"}},
    {"wheel:tick=99999999999999999999999ms", {NULL}, TK_EINVAL, {"tick=", "too large"}},
    {"wheel:slots=18446744073709551616",
     {NULL},
     TK_EINVAL,
     {"wheel: slots=18446744073709551616 is too large (it overflows a 64-bit count)"}},
    {"%E:max_pending=99999999999999999999",
     {"max_pending"},
     TK_EINVAL,
     {"%E: max_pending=99999999999999999999 is too large"}},
};

static int rejected_bad;
static tk_queue_config sentinel_cfg;
#define SENTINEL_ENGINE ((const tk_queue_ops *)(uintptr_t)0x5e17e1)

static void check_rejected(const char *spec, const tk_queue_ops *ops, const void *row) {
    const rejected *r = row;
    const tk_queue_ops *engine = SENTINEL_ENGINE;
    tk_queue_config cfg = sentinel_cfg;
    char err[512];
    memset(err, 'x', sizeof(err));
    int rc = tk_queue_config_parse(spec, &engine, &cfg, err, sizeof(err));
    bool ok = rc == r->status && memchr(err, '\0', sizeof(err)) != NULL;
    const char *missing = NULL;
    for (size_t k = 0; ok && k < COUNT_OF(r->says) && r->says[k] != NULL; k++) {
        char want[512];
        expand(r->says[k], ops, want, sizeof(want));
        if (strstr(err, want) == NULL) {
            ok = false;
            missing = r->says[k];
        }
    }
    if (ok && (engine != SENTINEL_ENGINE || memcmp(&cfg, &sentinel_cfg, sizeof(cfg)) != 0)) {
        print_error("  '%s': *engine or *cfg written on failure\n", spec);
        ok = false;
    }
    if (!ok) {
        rejected_bad++;
        print_error("  '%s': want %s with \"%s\"; got %s \"%.*s\"\n", spec,
                    tk_status_name(r->status), missing != NULL ? missing : r->says[0],
                    tk_status_name(rc), (int)strnlen(err, sizeof(err)), err);
    }
}

static void every_malformed_spec_fails_with_a_message_that_names_the_problem(void **state) {
    (void)state;
    memset(&sentinel_cfg, 0x5a, sizeof(sentinel_cfg));
    rejected_bad = 0;
    size_t runs = 0;
    for (size_t i = 0; i < COUNT_OF(rejected_forms); i++) {
        const rejected *r = &rejected_forms[i];
        kv needs[KV_MAX] = {{r->needs[0], 0}, {r->needs[1], 0}};
        size_t n;
        if (strstr(r->spec, "%E") == NULL) {
            check_rejected(r->spec, NULL, r);
            n = 1;
        } else {
            n = for_each_engine_of(r->spec, needs, check_rejected, r);
        }
        if (n == 0)
            fail_msg("'%s' runs on no registered engine", r->spec);
        runs += n;
    }
    print_message("  %zu malformed specs, %d mismatches\n", runs, rejected_bad);
    assert_int_equal(rejected_bad, 0);
}

static void null_arguments_and_short_error_buffers(void **state) {
    (void)state;
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    char err[64];
    assert_int_equal(tk_queue_config_parse(NULL, &engine, &cfg, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "spec is NULL");
    assert_int_equal(tk_queue_config_parse("heap", NULL, &cfg, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "engine is NULL");
    assert_int_equal(tk_queue_config_parse("heap", &engine, NULL, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "cfg is NULL");
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
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const char *name = tk_engine_at(e)->name;
        memset(spec, 'k', sizeof(spec) - 1);
        memcpy(spec, name, strlen(name));
        spec[strlen(name)] = ':';
        assert_int_equal(tk_queue_config_parse(spec, &engine, &cfg, err, sizeof(err)), TK_EINVAL);
        assert_non_null(strstr(err, "unknown parameter"));
    }
}

/* ---- set, set_value, get_value ---------------------------------------------------- */

static void set_takes_values_as_a_spec_writes_them(void **state) {
    (void)state;
    int bad = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            /* In range: the value set is the value read. */
            int64_t values[3] = {p->min, p->max, p->def};
            for (size_t k = 0; k < 3; k++) {
                tk_queue_config cfg;
                assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
                char text[32], err[256] = "junk";
                own_text(p, (uint64_t)values[k], text, sizeof(text));
                assert_int_equal(tk_queue_config_set(&cfg, p->key, text, err, sizeof(err)), TK_OK);
                assert_string_equal(err, "");
                int64_t v = 0;
                assert_int_equal(tk_queue_config_get_value(&cfg, p->key, &v), TK_OK);
                if (v != values[k]) {
                    print_error("  %s: set %s=%s read back %" PRId64 "\n", ops->name, p->key, text,
                                v);
                    bad++;
                }
            }
            /* Refused, with parse's message, the config unchanged. */
            char below[40] = "", above[40] = "";
            if (p->type == TK_PARAM_DURATION) {
                own_text(p, (uint64_t)(p->min - 1), below, sizeof(below));
                if (p->max < INT64_MAX)
                    own_text(p, (uint64_t)(p->max + 1), above, sizeof(above));
                else
                    strcpy(above, "9223372036854775808ns");
            } else {
                if (p->min > 0)
                    own_text(p, (uint64_t)(p->min - 1), below, sizeof(below));
                else
                    strcpy(below, "-1");
                own_text(p, (uint64_t)p->max + 1, above, sizeof(above));
            }
            const char *refused[] = {below, above, "abc", "1x", "", "+1", "1.5"};
            for (size_t k = 0; k < COUNT_OF(refused); k++) {
                tk_queue_config cfg, before;
                assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
                before = cfg;
                char err[256] = "junk", perr[256] = "junk", spec[128];
                int rc = tk_queue_config_set(&cfg, p->key, refused[k], err, sizeof(err));
                snprintf(spec, sizeof(spec), "%s:%s=%s", ops->name, p->key, refused[k]);
                const tk_queue_ops *engine = NULL;
                tk_queue_config parsed;
                int prc = tk_queue_config_parse(spec, &engine, &parsed, perr, sizeof(perr));
                /* an empty value is parse's "no value after '='"; set calls
                 * it not a number */
                bool same_msg =
                    refused[k][0] == '\0' ? strstr(err, p->key) != NULL : strcmp(err, perr) == 0;
                if (rc != TK_EINVAL || prc != TK_EINVAL || !same_msg ||
                    memcmp(&cfg, &before, sizeof(cfg)) != 0) {
                    print_error("  %s: set %s='%s': %s \"%s\"; parse: %s \"%s\"\n", ops->name,
                                p->key, refused[k], tk_status_name(rc), err, tk_status_name(prc),
                                perr);
                    bad++;
                }
            }
        }
        /* Unknown key: the message lists the known ones. */
        tk_queue_config cfg, before;
        assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
        before = cfg;
        char err[256], want[256];
        assert_int_equal(tk_queue_config_set(&cfg, "no_such_key", "1", err, sizeof(err)),
                         TK_EINVAL);
        expand("%E: unknown parameter 'no_such_key'; known: %K", ops, want, sizeof(want));
        assert_string_equal(err, want);
        assert_memory_equal(&cfg, &before, sizeof(cfg));
        /* err may be NULL. */
        assert_int_equal(tk_queue_config_set(&cfg, "no_such_key", "1", NULL, 0), TK_EINVAL);
        assert_int_equal(tk_queue_config_set(&cfg, ops->params[0].key, "x", NULL, 7), TK_EINVAL);
        assert_memory_equal(&cfg, &before, sizeof(cfg));
    }
    assert_int_equal(bad, 0);

    /* A config naming no engine, NULL arguments. */
    tk_queue_config cfg, before;
    tk_queue_config_init(&cfg);
    before = cfg;
    char err[128];
    assert_int_equal(tk_queue_config_set(&cfg, "spin", "1ms", err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "the config names no engine; start from tk_queue_config_init_for()");
    assert_memory_equal(&cfg, &before, sizeof(cfg));
    assert_int_equal(tk_queue_config_set(NULL, "spin", "1ms", err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "cfg is NULL");
    assert_int_equal(tk_queue_config_init_for(&cfg, tk_engine_at(0)), TK_OK);
    const char *key = tk_engine_at(0)->params[0].key;
    assert_int_equal(tk_queue_config_set(&cfg, NULL, "1", err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "key is NULL");
    assert_int_equal(tk_queue_config_set(&cfg, key, NULL, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "value is NULL");
    assert_int_equal(tk_queue_config_set(NULL, NULL, NULL, NULL, 0), TK_EINVAL);
}

static void set_value_and_get_value_round_trip_every_parameter(void **state) {
    (void)state;
    int bad = 0;
    size_t wide_counts = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            int64_t mid = (int64_t)((uint64_t)p->min + ((uint64_t)p->max - (uint64_t)p->min) / 3);
            int64_t values[] = {p->min, p->max, p->def, mid};
            for (size_t k = 0; k < COUNT_OF(values); k++) {
                tk_queue_config cfg;
                assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
                assert_int_equal(tk_queue_config_set_value(&cfg, p->key, values[k]), TK_OK);
                int64_t v = 0;
                assert_int_equal(tk_queue_config_get_value(&cfg, p->key, &v), TK_OK);
                /* the other parameters keep their defaults */
                for (size_t j = 0; j < ops->param_count; j++) {
                    int64_t o = 0;
                    assert_int_equal(tk_queue_config_get_value(&cfg, ops->params[j].key, &o),
                                     TK_OK);
                    if (j != i && o != ops->params[j].def)
                        bad++;
                }
                /* written as text and set again, the same value */
                char text[32];
                assert_int_equal(tk_queue_param_format(p, &cfg, text, sizeof(text)), TK_OK);
                tk_queue_config again;
                assert_int_equal(tk_queue_config_init_for(&again, ops), TK_OK);
                assert_int_equal(tk_queue_config_set(&again, p->key, text, NULL, 0), TK_OK);
                int64_t w = 0;
                assert_int_equal(tk_queue_config_get_value(&again, p->key, &w), TK_OK);
                if (v != values[k] || w != values[k]) {
                    print_error("  %s: %s set %" PRId64 ", read %" PRId64 ", via '%s' %" PRId64
                                "\n",
                                ops->name, p->key, values[k], v, text, w);
                    bad++;
                }
            }
            /* Outside the range, or negative for a count: refused, unchanged. */
            int64_t outside[3];
            size_t n = 0;
            if (p->min > INT64_MIN)
                outside[n++] = p->min - 1;
            if (p->max < INT64_MAX)
                outside[n++] = p->max + 1;
            if (p->min > INT64_MIN)
                outside[n++] = INT64_MIN;
            for (size_t k = 0; k < n; k++) {
                tk_queue_config cfg, before;
                assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
                before = cfg;
                int rc = tk_queue_config_set_value(&cfg, p->key, outside[k]);
                if (rc != TK_EINVAL || memcmp(&cfg, &before, sizeof(cfg)) != 0) {
                    print_error("  %s: set_value %s=%" PRId64 " gave %s\n", ops->name, p->key,
                                outside[k], tk_status_name(rc));
                    bad++;
                }
            }
            /* A count above INT64_MAX (stored past set_value) is not read. */
            if (p->type == TK_PARAM_COUNT && p->size == 8) {
                tk_queue_config cfg;
                assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
                int64_t v = 77;
                tkt_param_store(&cfg, p, (uint64_t)INT64_MAX + 1);
                assert_int_equal(tk_queue_config_get_value(&cfg, p->key, &v), TK_EINVAL);
                tkt_param_store(&cfg, p, UINT64_MAX);
                assert_int_equal(tk_queue_config_get_value(&cfg, p->key, &v), TK_EINVAL);
                tkt_param_store(&cfg, p, (uint64_t)INT64_MAX);
                assert_int_equal(tk_queue_config_get_value(&cfg, p->key, &v), TK_OK);
                assert_int_equal(v, INT64_MAX);
                wide_counts++;
            }
        }
        /* Unknown keys, NULL arguments. */
        tk_queue_config cfg, before;
        assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
        before = cfg;
        int64_t v = 5;
        const char *key = ops->params[0].key;
        assert_int_equal(tk_queue_config_set_value(&cfg, "no_such_key", 1), TK_EINVAL);
        assert_int_equal(tk_queue_config_set_value(&cfg, NULL, 1), TK_EINVAL);
        assert_int_equal(tk_queue_config_set_value(NULL, key, 1), TK_EINVAL);
        assert_int_equal(tk_queue_config_get_value(&cfg, "no_such_key", &v), TK_EINVAL);
        assert_int_equal(tk_queue_config_get_value(&cfg, NULL, &v), TK_EINVAL);
        assert_int_equal(tk_queue_config_get_value(NULL, key, &v), TK_EINVAL);
        assert_int_equal(tk_queue_config_get_value(&cfg, key, NULL), TK_EINVAL);
        assert_int_equal(v, 5);
        assert_memory_equal(&cfg, &before, sizeof(cfg));
    }
    assert_int_equal(bad, 0);
    if (SIZE_MAX >= UINT64_MAX)
        assert_true(wide_counts > 0); /* max_pending at least is a size_t */

    /* A config naming no engine has no parameters to set or read. */
    tk_queue_config none, before;
    tk_queue_config_init(&none);
    before = none;
    int64_t v = 5;
    assert_int_equal(tk_queue_config_set_value(&none, "spin", 0), TK_EINVAL);
    assert_int_equal(tk_queue_config_get_value(&none, "spin", &v), TK_EINVAL);
    assert_int_equal(v, 5);
    assert_memory_equal(&none, &before, sizeof(none));
}

/* ---- check ------------------------------------------------------------------------- */

static void check_names_the_engine_and_the_parameter(void **state) {
    (void)state;
    int bad = 0;
    char err[256], want[256];
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        /* NULL and engine-less configs are the defaults. */
        strcpy(err, "junk");
        assert_int_equal(tk_queue_config_check(ops, NULL, err, sizeof(err)), TK_OK);
        assert_string_equal(err, "");
        tk_queue_config cfg;
        tk_queue_config_init(&cfg);
        assert_int_equal(tk_queue_config_check(ops, &cfg, err, sizeof(err)), TK_OK);
        /* A config of another engine. */
        for (size_t o = 0; o < tk_engine_count(); o++) {
            const tk_queue_ops *other = tk_engine_at(o);
            assert_int_equal(tk_queue_config_init_for(&cfg, other), TK_OK);
            int rc = tk_queue_config_check(ops, &cfg, err, sizeof(err));
            if (other == ops) {
                assert_int_equal(rc, TK_OK);
                continue;
            }
            snprintf(want, sizeof(want), "%s: the config holds the parameters of engine '%s'",
                     ops->name, other->name);
            if (rc != TK_EINVAL || strcmp(err, want) != 0) {
                print_error("  want \"%s\", got %s \"%s\"\n", want, tk_status_name(rc), err);
                bad++;
            }
        }
        /* Each value outside its range, stored past set_value's checks. */
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            uint64_t badv[3];
            int nbad = tkt_param_bad_values(p, badv);
            for (int k = 0; k < nbad; k++) {
                assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
                tkt_param_store(&cfg, p, badv[k]);
                char value[32], bound[32];
                own_text(p, badv[k], value, sizeof(value));
                bool below = p->type == TK_PARAM_DURATION ? (int64_t)badv[k] < p->min
                                                          : badv[k] < (uint64_t)p->min;
                own_text(p, (uint64_t)(below ? p->min : p->max), bound, sizeof(bound));
                snprintf(want, sizeof(want), "%s: %s=%s is %s %s", ops->name, p->key, value,
                         below ? "below the minimum" : "above the maximum", bound);
                int rc = tk_queue_config_check(ops, &cfg, err, sizeof(err));
                if (rc != TK_EINVAL || strcmp(err, want) != 0) {
                    print_error("  want \"%s\", got %s \"%s\"\n", want, tk_status_name(rc), err);
                    bad++;
                }
                assert_int_equal(tk_queue_config_check(ops, &cfg, NULL, 0), TK_EINVAL);
            }
        }
    }
    assert_int_equal(bad, 0);
    assert_int_equal(tk_queue_config_check(NULL, NULL, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "no engine");
    assert_int_equal(tk_queue_config_check(NULL, NULL, NULL, 0), TK_EINVAL);
}

/* The wheel's validate(): a revolution, tick x slots rounded up to a power
 * of two, must fit in int64 nanoseconds. check, parse, format and create
 * agree. */
static void the_wheel_refuses_a_revolution_past_int64(void **state) {
    (void)state;
    const tk_queue_ops *wheel = tk_engine_wheel();
    static const struct {
        int64_t tick, slots;
        bool ok;
        const char *says;
    } cases[] = {
        {INT64_MAX / 512, 512, true, NULL},
        {INT64_MAX / 512 + 1, 512, false, REVOLUTION("18014398509481984", "512")},
        {INT64_MAX / 512 + 1, 257, false, REVOLUTION("18014398509481984", "512")},
        {INT64_MAX / 512 + 1, 256, true, NULL},
        {INT64_MAX / 1024, 513, true, NULL},
        {INT64_MAX / 1024 + 1, 513, false, REVOLUTION("9007199254740992", "1024")},
        {INT64_MAX, 1, true, NULL},
        {INT64_MAX, 2, false, REVOLUTION("9223372036854775807", "2")},
        {INT64_C(549755813887), INT64_C(1) << 24, true, NULL},
        {INT64_C(549755813888), INT64_C(1) << 24, false, REVOLUTION("549755813888", "16777216")},
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        tk_queue_config cfg;
        assert_int_equal(tk_queue_config_init_for(&cfg, wheel), TK_OK);
        assert_int_equal(tk_queue_config_set_value(&cfg, "tick", cases[i].tick), TK_OK);
        assert_int_equal(tk_queue_config_set_value(&cfg, "slots", cases[i].slots), TK_OK);
        char err[256] = "junk", perr[256] = "junk", spec[128], buf[128];
        int rc = tk_queue_config_check(wheel, &cfg, err, sizeof(err));
        snprintf(spec, sizeof(spec), "wheel:tick=%" PRId64 "ns,slots=%" PRId64, cases[i].tick,
                 cases[i].slots);
        const tk_queue_ops *engine = NULL;
        tk_queue_config parsed;
        int prc = tk_queue_config_parse(spec, &engine, &parsed, perr, sizeof(perr));
        int frc = tk_queue_config_format(wheel, &cfg, buf, sizeof(buf));
        if (cases[i].ok) {
            assert_int_equal(rc, TK_OK);
            assert_int_equal(prc, TK_OK);
            assert_int_equal(frc, TK_OK);
            assert_true(same_config(&parsed, &cfg, spec));
        } else {
            print_message("  %s: %s\n", spec, err);
            assert_int_equal(rc, TK_EINVAL);
            assert_string_equal(err, cases[i].says);
            assert_int_equal(prc, TK_EINVAL);
            assert_string_equal(perr, cases[i].says);
            assert_int_equal(frc, TK_EINVAL);
            assert_string_equal(buf, "");
            tk_queue *q = NULL;
            assert_int_equal(tk_queue_create(wheel, &cfg, NULL, NULL, &q), TK_EINVAL);
            assert_null(q);
        }
    }
}

/* ---- canonical forms and round trips ---------------------------------------------- */

static const struct canonical {
    const char *in, *out;
} canonical_forms[] = {
    {"wheel", "wheel:tick=1ms,slots=512"},
    {"heap", "heap"},
    {"heap:spin=150us", "heap:spin=150us"},
    {"heap:max_pending=5", "heap:max_pending=5"},
    {"heap:spin=150us,max_pending=5,capacity=2", "heap:capacity=2,max_pending=5,spin=150us"},
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
    {"wheel:tick=600000ms", "wheel:tick=600s,slots=512"},
    {"wheel:max_pending=0,spin=0s", "wheel:tick=1ms,slots=512"},
    {"wheel:tick=549755813887ns,slots=16777216", "wheel:tick=549755813887ns,slots=16777216"},
    {"wheel:tick=9223372036854775807ns,slots=1", "wheel:tick=9223372036854775807ns,slots=1"},
};

/* The canonical spec of ops's defaults, by the test's own writer: the name,
 * then the TK_PARAM_ALWAYS parameters at their defaults. */
static void own_default_spec(const tk_queue_ops *ops, char *out, size_t len) {
    snprintf(out, len, "%s", ops->name);
    const char *sep = ":";
    for (size_t i = 0; i < ops->param_count; i++) {
        const tk_queue_param *p = &ops->params[i];
        if ((p->flags & TK_PARAM_ALWAYS) == 0)
            continue;
        char v[32];
        own_text(p, (uint64_t)p->def, v, sizeof(v));
        size_t at = strlen(out);
        snprintf(out + at, len - at, "%s%s=%s", sep, p->key, v);
        sep = ",";
    }
}

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
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        char want[128], buf[128];
        own_default_spec(ops, want, sizeof(want));
        /* Zero fields, a config naming no engine and NULL: the defaults. */
        tk_queue_config zero;
        memset(&zero, 0, sizeof(zero));
        assert_int_equal(tk_queue_config_format(ops, &zero, buf, sizeof(buf)), TK_OK);
        assert_string_equal(buf, want);
        tk_queue_config cfg;
        assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
        assert_int_equal(tk_queue_config_format(ops, &cfg, buf, sizeof(buf)), TK_OK);
        assert_string_equal(buf, want);
        /* Each parameter away from its default is written, in table order. */
        char all[128];
        strcpy(all, ops->name);
        const char *sep = ":";
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            int64_t v = away_from_default(p);
            assert_int_equal(tk_queue_config_set_value(&cfg, p->key, v), TK_OK);
            char text[32];
            own_text(p, (uint64_t)v, text, sizeof(text));
            size_t at = strlen(all);
            snprintf(all + at, sizeof(all) - at, "%s%s=%s", sep, p->key, text);
            sep = ",";
        }
        if (tk_queue_config_check(ops, &cfg, NULL, 0) == TK_OK) {
            assert_int_equal(tk_queue_config_format(ops, &cfg, buf, sizeof(buf)), TK_OK);
            assert_string_equal(buf, all);
        }
        /* A config of another engine has no canonical spec. */
        for (size_t o = 0; o < tk_engine_count(); o++) {
            if (tk_engine_at(o) == ops)
                continue;
            assert_int_equal(tk_queue_config_init_for(&cfg, tk_engine_at(o)), TK_OK);
            strcpy(buf, "junk");
            assert_int_equal(tk_queue_config_format(ops, &cfg, buf, sizeof(buf)), TK_EINVAL);
            assert_string_equal(buf, "");
        }
    }
}

static int round_trip_bad;

static void check_round_trip(const char *spec, const tk_queue_ops *ops, const void *row) {
    (void)row;
    const tk_queue_ops *e1 = NULL, *e2 = NULL;
    tk_queue_config c1, c2;
    char s1[128], s2[128];
    assert_int_equal(tk_queue_config_parse(spec, &e1, &c1, NULL, 0), TK_OK);
    assert_ptr_equal(e1, ops);
    assert_int_equal(tk_queue_config_format(e1, &c1, s1, sizeof(s1)), TK_OK);
    assert_int_equal(tk_queue_config_parse(s1, &e2, &c2, NULL, 0), TK_OK);
    assert_ptr_equal(e1, e2);
    assert_int_equal(tk_queue_config_format(e2, &c2, s2, sizeof(s2)), TK_OK);
    if (strcmp(s1, s2) != 0 || !same_config(&c2, &c1, spec)) {
        print_error("  '%s' -> '%s' -> '%s'\n", spec, s1, s2);
        round_trip_bad++;
    }
    for (size_t k = 0; k < e1->param_count; k++) {
        char v1[32], v2[32];
        assert_int_equal(tk_queue_param_format(&e1->params[k], &c1, v1, sizeof(v1)), TK_OK);
        assert_int_equal(tk_queue_param_format(&e1->params[k], &c2, v2, sizeof(v2)), TK_OK);
        assert_string_equal(v1, v2);
    }
}

static void format_then_parse_gives_back_the_same_engine_and_config(void **state) {
    (void)state;
    round_trip_bad = 0;
    for (size_t i = 0; i < COUNT_OF(accepted_forms); i++)
        for_each_engine_of(accepted_forms[i].spec, accepted_forms[i].want, check_round_trip, NULL);
    /* Every parameter of every engine at its minimum and its maximum. */
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            int64_t values[2] = {p->min, p->max};
            for (size_t k = 0; k < 2; k++) {
                tk_queue_config cfg;
                assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
                assert_int_equal(tk_queue_config_set_value(&cfg, p->key, values[k]), TK_OK);
                if (tk_queue_config_check(ops, &cfg, NULL, 0) != TK_OK)
                    continue; /* the engine's validate() refuses it alone (the wheel's
                                 largest tick with its default slots) */
                char spec[128];
                assert_int_equal(tk_queue_config_format(ops, &cfg, spec, sizeof(spec)), TK_OK);
                check_round_trip(spec, ops, NULL);
            }
        }
    }
    assert_int_equal(round_trip_bad, 0);
}

/* ---- format: values, bad input, short buffers ------------------------------------- */

static void param_values_are_written_as_the_canonical_spec_writes_them(void **state) {
    (void)state;
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
        {0, "0ns"},
        {-5, "-5ns"},
        {-2 * MS, "-2ms"},
        {INT64_MAX, "9223372036854775807ns"},
        {INT64_MIN, "-9223372036854775808ns"},
    };
    size_t n_dur = 0, n_count = 0;
    char buf[32], want[32];
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            tk_queue_config cfg;
            assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
            if (p->type == TK_PARAM_DURATION) {
                /* any value, in range or not: format does not check it */
                for (size_t k = 0; k < COUNT_OF(durations); k++) {
                    tkt_param_store(&cfg, p, (uint64_t)durations[k].ns);
                    assert_int_equal(tk_queue_param_format(p, &cfg, buf, sizeof(buf)), TK_OK);
                    assert_string_equal(buf, durations[k].text);
                }
                n_dur++;
            } else {
                uint64_t counts[] = {0, 1, 1024, field_max(p)};
                for (size_t k = 0; k < COUNT_OF(counts); k++) {
                    if (counts[k] > field_max(p))
                        continue; /* 1024 in a one-byte field */
                    tkt_param_store(&cfg, p, counts[k]);
                    assert_int_equal(tk_queue_param_format(p, &cfg, buf, sizeof(buf)), TK_OK);
                    snprintf(want, sizeof(want), "%" PRIu64, counts[k]);
                    assert_string_equal(buf, want);
                }
                n_count++;
            }
            /* A config naming no engine: an engine parameter reads as its
             * default, an adapter one as the config's field. */
            tk_queue_config none;
            tk_queue_config_init(&none);
            none.spin_ns = 3 * US;
            none.max_pending = 17;
            assert_int_equal(tk_queue_param_format(p, &none, buf, sizeof(buf)), TK_OK);
            if ((p->flags & TK_PARAM_ADAPTER) == 0)
                own_text(p, (uint64_t)p->def, want, sizeof(want));
            else if (p->offset == offsetof(tk_queue_config, spin_ns))
                strcpy(want, "3us");
            else if (p->offset == offsetof(tk_queue_config, max_pending))
                strcpy(want, "17");
            else
                continue; /* another adapter field: nothing set above */
            assert_string_equal(buf, want);
        }
    }
    assert_true(n_dur > 0);
    assert_true(n_count > 0);
    /* The heap's capacity up to SIZE_MAX, the wheel's slots. */
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, tk_engine_heap()), TK_OK);
    tkt_param_store(&cfg, param_of(tk_engine_heap(), "capacity"), SIZE_MAX);
    assert_int_equal(
        tk_queue_param_format(param_of(tk_engine_heap(), "capacity"), &cfg, buf, sizeof(buf)),
        TK_OK);
    snprintf(want, sizeof(want), "%zu", (size_t)SIZE_MAX);
    assert_string_equal(buf, want);
    assert_int_equal(
        tk_queue_config_parse("wheel:slots=1024", &(const tk_queue_ops *){NULL}, &cfg, NULL, 0),
        TK_OK);
    assert_int_equal(
        tk_queue_param_format(param_of(tk_engine_wheel(), "slots"), &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, "1024");
}

static void format_reports_bad_input_and_out_of_range_configs(void **state) {
    (void)state;
    tk_queue_config cfg, none;
    tk_queue_config_init(&none);
    char buf[64] = "junk";
    const tk_queue_ops *first = tk_engine_at(0);
    const tk_queue_param *p0 = &first->params[0];
    assert_int_equal(tk_queue_config_init_for(&cfg, first), TK_OK);
    assert_int_equal(tk_queue_config_format(NULL, &cfg, buf, sizeof(buf)), TK_EINVAL);
    assert_int_equal(tk_queue_config_format(first, NULL, buf, sizeof(buf)), TK_EINVAL);
    assert_int_equal(tk_queue_config_format(first, &cfg, NULL, 64), TK_EINVAL);
    assert_int_equal(tk_queue_param_format(NULL, &cfg, buf, sizeof(buf)), TK_EINVAL);
    assert_int_equal(tk_queue_param_format(p0, NULL, buf, sizeof(buf)), TK_EINVAL);
    assert_int_equal(tk_queue_param_format(p0, &cfg, NULL, 32), TK_EINVAL);

    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            /* A parameter of a type or size no field can have. */
            tk_queue_param odd = *p;
            odd.type = (tk_param_type)7;
            assert_int_equal(tk_queue_param_format(&odd, &none, buf, sizeof(buf)), TK_EINVAL);
            odd = *p;
            odd.size = 3;
            assert_int_equal(tk_queue_param_format(&odd, &none, buf, sizeof(buf)), TK_EINVAL);
            /* An entry that is not one of the config's engine's. */
            odd = *p;
            assert_int_equal(tk_queue_param_format(&odd, &cfg, buf, sizeof(buf)), TK_EINVAL);
            for (size_t o = 0; o < tk_engine_count(); o++) {
                const tk_queue_ops *other = tk_engine_at(o);
                if (other == ops)
                    continue;
                tk_queue_config oc;
                assert_int_equal(tk_queue_config_init_for(&oc, other), TK_OK);
                assert_int_equal(tk_queue_param_format(p, &oc, buf, sizeof(buf)), TK_EINVAL);
            }
            /* An adapter field past tk_queue_config's adapter fields. */
            odd = *p;
            odd.flags |= TK_PARAM_ADAPTER;
            odd.offset = sizeof(tk_queue_config);
            assert_int_equal(tk_queue_param_format(&odd, &none, buf, sizeof(buf)), TK_EINVAL);

            /* A config create() would refuse has no canonical spec. */
            uint64_t badv[3];
            int nbad = tkt_param_bad_values(p, badv);
            for (int k = 0; k < nbad; k++) {
                tk_queue_config bad;
                assert_int_equal(tk_queue_config_init_for(&bad, ops), TK_OK);
                tkt_param_store(&bad, p, badv[k]);
                strcpy(buf, "junk");
                assert_int_equal(tk_queue_config_format(ops, &bad, buf, sizeof(buf)), TK_EINVAL);
                assert_string_equal(buf, "");
            }
        }
    }
}

static void a_buffer_too_small_gets_efull_and_the_start_of_the_text(void **state) {
    (void)state;
    const char *specs[8] = {"wheel:tick=1ms,slots=1024,max_pending=100000,spin=150us"};
    char built[8][128];
    size_t n = 1;
    /* Each engine with every parameter away from its default. */
    for (size_t e = 0; e < tk_engine_count() && n < COUNT_OF(specs); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        tk_queue_config cfg;
        assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            assert_int_equal(tk_queue_config_set_value(&cfg, p->key, away_from_default(p)), TK_OK);
        }
        if (tk_queue_config_format(ops, &cfg, built[n], sizeof(built[n])) == TK_OK) {
            specs[n] = built[n];
            n++;
        }
    }
    for (size_t s = 0; s < n; s++) {
        const char *full = specs[s];
        const tk_queue_ops *engine = NULL;
        tk_queue_config cfg;
        assert_int_equal(tk_queue_config_parse(full, &engine, &cfg, NULL, 0), TK_OK);
        char buf[140];
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
    }
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_parse("wheel:tick=150us", &engine, &cfg, NULL, 0), TK_OK);
    const tk_queue_param *tick = param_of(engine, "tick");
    for (size_t len = 0; len <= 6; len++) {
        char buf[16];
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

static void create_refuses_every_value_outside_the_table_and_takes_each_minimum(void **state) {
    (void)state;
    int bad = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            uint64_t badv[3];
            int nbad = tkt_param_bad_values(p, badv);
            for (int k = 0; k < nbad; k++) {
                tk_queue_config cfg;
                assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
                tkt_param_store(&cfg, p, badv[k]);
                tk_queue *q = (tk_queue *)(uintptr_t)1;
                int rc = tk_queue_create(ops, &cfg, NULL, NULL, &q);
                if (rc != TK_EINVAL || q != NULL) {
                    print_error("  %s: %s = %" PRIu64 " gave %s\n", ops->name, p->key, badv[k],
                                tk_status_name(rc));
                    bad++;
                    if (rc == TK_OK)
                        ops->destroy(q);
                }
                /* the engine's own create() too, without tk_queue_create() */
                q = NULL;
                rc = ops->create(ops, &cfg, NULL, NULL, &q);
                if (rc != TK_EINVAL) {
                    bad++;
                    if (rc == TK_OK)
                        ops->destroy(q);
                }
            }
            /* The minimum itself. */
            tk_queue_config cfg;
            assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
            assert_int_equal(tk_queue_config_set_value(&cfg, p->key, p->min), TK_OK);
            tk_queue *q = NULL;
            int rc = tk_queue_create(ops, &cfg, NULL, NULL, &q);
            if (rc != TK_OK) {
                print_error("  %s: %s at its minimum gave %s\n", ops->name, p->key,
                            tk_status_name(rc));
                bad++;
            } else {
                assert_int_equal(ops->check(q), TK_OK);
                ops->destroy(q);
            }
        }
        /* NULL config, one naming no engine: the defaults. */
        tk_queue *q = NULL;
        assert_int_equal(tk_queue_create(ops, NULL, NULL, NULL, &q), TK_OK);
        ops->destroy(q);
        tk_queue_config none;
        tk_queue_config_init(&none);
        assert_int_equal(tk_queue_create(ops, &none, NULL, NULL, &q), TK_OK);
        ops->destroy(q);
    }
    assert_int_equal(bad, 0);
}

static void create_refuses_null_arguments_and_incomplete_tables(void **state) {
    (void)state;
    tk_queue *q = (tk_queue *)(uintptr_t)1;
    assert_int_equal(tk_queue_create(NULL, NULL, NULL, NULL, &q), TK_EINVAL);
    assert_null(q);
    assert_int_equal(tk_queue_create(tk_engine_at(0), NULL, NULL, NULL, NULL), TK_EINVAL);
    static const tk_queue_ops no_ops = {.name = "no-ops"};
    q = (tk_queue *)(uintptr_t)1;
    assert_int_equal(tk_queue_create(&no_ops, NULL, NULL, NULL, &q), TK_EINVAL);
    assert_null(q);
    tk_queue_ops bad_name = list_engine;
    bad_name.name = "bad name";
    q = (tk_queue *)(uintptr_t)1;
    assert_int_equal(tk_queue_create(&bad_name, NULL, NULL, NULL, &q), TK_EINVAL);
    assert_null(q);
    tk_queue_ops no_core = list_engine;
    no_core.core = NULL;
    assert_int_equal(tk_queue_create(&no_core, NULL, NULL, NULL, &q), TK_EINVAL);
    assert_null(q);
}

/* ---- an executor from a spec ------------------------------------------------------ */

static int record_run(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

/* Parses spec, builds a one-thread executor on it and runs a task 2 ms out. */
static void run_a_task_on(const char *spec) {
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    char err[160];
    int rc = tk_queue_config_parse(spec, &engine, &cfg, err, sizeof(err));
    if (rc != TK_OK)
        fail_msg("'%s': %s", spec, err);
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

static void an_executor_created_from_a_parsed_spec_runs_a_task(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        run_a_task_on(ops->name);
        /* every engine parameter at its minimum, the adapter's settings set */
        char spec[160];
        strcpy(spec, ops->name);
        const char *sep = ":";
        for (size_t i = 0; i < ops->param_count; i++) {
            const tk_queue_param *p = &ops->params[i];
            char v[32];
            if ((p->flags & TK_PARAM_ADAPTER) == 0)
                own_text(p, (uint64_t)p->min, v, sizeof(v));
            else if (strcmp(p->key, "spin") == 0)
                strcpy(v, "150us");
            else if (strcmp(p->key, "max_pending") == 0)
                strcpy(v, "1000");
            else
                continue;
            size_t at = strlen(spec);
            snprintf(spec + at, sizeof(spec) - at, "%s%s=%s", sep, p->key, v);
            sep = ",";
        }
        run_a_task_on(spec);
    }
    run_a_task_on("heap:capacity=16,spin=150us");
    run_a_task_on("wheel:tick=1ms,slots=1024,max_pending=1000,spin=150us");
    run_a_task_on("wheel:tick=10us,slots=1");
}

/* ---- docs/parameters.md ---------------------------------------------------------- */

/* docs/parameters.md is generated from the built-in engines' tables by this
 * program (--write-parameters FILE); the test checks the file against them. */
#define PARAMS_DOC_COMMAND "tk_spec_test --write-parameters docs/parameters.md"

static const char *params_doc_path; /* the file to check, or NULL */

/* The row of parameter p. */
static void params_row(const tk_queue_param *p, char *row, size_t len) {
    char lo[32], hi[32], def[32], field[48];
    own_text(p, (uint64_t)p->min, lo, sizeof(lo));
    own_text(p, (uint64_t)p->max, hi, sizeof(hi));
    own_text(p, (uint64_t)p->def, def, sizeof(def));
    if ((p->flags & TK_PARAM_ADAPTER) != 0) {
        const char *name = config_field(p->offset);
        snprintf(field, sizeof(field), "`%s`", name != NULL ? name : "?");
    } else {
        strcpy(field, "-");
    }
    const char *flags = (p->flags & TK_PARAM_ALWAYS) && (p->flags & TK_PARAM_ADAPTER)
                            ? "always, adapter"
                        : (p->flags & TK_PARAM_ALWAYS)  ? "always"
                        : (p->flags & TK_PARAM_ADAPTER) ? "adapter"
                                                        : "-";
    snprintf(row, len, "| `%s` | %s | %s | %s to %s | %s | %s | %s |\n", p->key, field,
             p->type == TK_PARAM_DURATION ? "duration" : "count", lo, hi, def, flags, p->help);
}

/* Appends to a growing text. */
static void doc_put(char *doc, size_t cap, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(doc + *len, cap - *len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < cap - *len);
    *len += (size_t)n;
}

/* The whole of docs/parameters.md, from the built-in engines' tables. */
static size_t params_doc(char *doc, size_t cap) {
    size_t len = 0;
    doc_put(
        doc, cap, &len,
        "# Engine parameters\n\n"
        "Generated from the engines' parameter tables, from the top of the tree, by\n"
        "`build/<any build>/tests/spec/" PARAMS_DOC_COMMAND "`. The `spec` test fails\n"
        "when this file and the tables differ: do not edit it by hand, change the engine's\n"
        "table and run the command.\n\n"
        "Each engine's parameters, in the order its canonical spec writes them. `field` is `-`\n"
        "for a parameter of the engine's own parameter struct (set and read it by key), or the\n"
        "`tk_queue_config` field of a blocking-adapter setting. Flags: `always`, written in\n"
        "the canonical spec even at its default; `adapter`, a setting of the blocking adapter,\n"
        "which the engine's pure core ignores. `README.md` (\"Configuring an engine from a\n"
        "string\") tells how to set them; `docs/engines.md` how an engine declares them.\n");
    for (size_t e = 0; e < builtin_count; e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        doc_put(doc, cap, &len, "\n## `%s`", ops->name);
        if (ops->description != NULL)
            doc_put(doc, cap, &len, ": %s", ops->description);
        doc_put(doc, cap, &len, "\n\nCapabilities:");
        const char *sep = " ";
        for (unsigned bit = 1; bit != 0; bit <<= 1) {
            if ((ops->caps & bit) != 0 && tk_queue_cap_name(bit) != NULL) {
                doc_put(doc, cap, &len, "%s%s", sep, tk_queue_cap_name(bit));
                sep = ", ";
            }
        }
        tk_queue_config cfg;
        char spec[160];
        assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
        assert_int_equal(tk_queue_config_format(ops, &cfg, spec, sizeof(spec)), TK_OK);
        doc_put(doc, cap, &len, ". At its defaults: `%s`.\n\n", spec);
        doc_put(doc, cap, &len,
                "| key | field | type | range | default | flags | meaning |\n"
                "| --- | --- | --- | --- | --- | --- | --- |\n");
        for (size_t i = 0; i < ops->param_count; i++) {
            char row[512];
            params_row(&ops->params[i], row, sizeof(row));
            doc_put(doc, cap, &len, "%s", row);
        }
    }
    return len;
}

static void parameters_doc_is_the_tables_as_generated(void **state) {
    (void)state;
    if (params_doc_path == NULL)
        skip();
    static char want[1 << 16], have[1 << 16];
    size_t want_len = params_doc(want, sizeof(want));
    FILE *f = fopen(params_doc_path, "r");
    if (f == NULL)
        fail_msg("%s: cannot open it; generate it with " PARAMS_DOC_COMMAND, params_doc_path);
    size_t have_len = fread(have, 1, sizeof(have) - 1, f);
    fclose(f);
    have[have_len] = '\0';
    if (have_len == want_len && memcmp(have, want, want_len) == 0)
        return;
    /* the first line that differs */
    size_t at = 0, line = 1;
    while (at < have_len && at < want_len && have[at] == want[at]) {
        if (have[at] == '\n')
            line++;
        at++;
    }
    const char *h = have + at, *w = want + at;
    while (h > have && h[-1] != '\n')
        h--, w--;
    /* an empty line says little: show the next line that has text, or the end */
    while (*h == '\n' && *w == '\n')
        h++, w++, line++;
    print_error("%s differs from the engines' tables from line %zu:\n  has:  %.*s%s\n"
                "  want: %.*s%s\nregenerate it: " PARAMS_DOC_COMMAND "\n",
                params_doc_path, line, (int)strcspn(h, "\n"), h, *h == '\0' ? "(end of file)" : "",
                (int)strcspn(w, "\n"), w, *w == '\0' ? "(end of file)" : "");
    fail();
}

/* --write-parameters FILE: writes docs/parameters.md. Returns the exit status. */
static int write_params_doc(const char *path) {
    static char doc[1 << 16];
    size_t len = params_doc(doc, sizeof(doc));
    FILE *f = fopen(path, "w");
    if (f == NULL || fwrite(doc, 1, len, f) != len) {
        fprintf(stderr, "tk_spec_test: cannot write %s\n", path);
        if (f != NULL)
            fclose(f);
        return 1;
    }
    if (fclose(f) != 0)
        return 1;
    printf("tk_spec_test: wrote %s (%zu engines)\n", path, builtin_count);
    return 0;
}

/* ---- registering engines (last: the registry is process-global) ---------------------- */

/* Copies of list_engine under other names, to fill the registry. Static:
 * a registered table must live as long as the process. */
static tk_queue_ops fill_engines[TK_ENGINE_REGISTER_MAX + 1];
static char fill_names[TK_ENGINE_REGISTER_MAX + 1][24];
static tk_queue_ops twin_engine;  /* list_engine's name, another table */
static tk_queue_ops clash_engine; /* a built-in engine's name, another table */

/* The tk_queue_ops members the executor needs, which tk_engine_check requires. */
static const char *const needed_ops[] = {"create",       "destroy", "offer", "take",      "remove",
                                         "remove_first", "size",    "drain", "remove_if", "close"};

/* o without the operation named `op`. */
static void clear_op(tk_queue_ops *o, const char *op) {
    if (strcmp(op, "create") == 0)
        o->create = NULL;
    else if (strcmp(op, "destroy") == 0)
        o->destroy = NULL;
    else if (strcmp(op, "offer") == 0)
        o->offer = NULL;
    else if (strcmp(op, "take") == 0)
        o->take = NULL;
    else if (strcmp(op, "remove") == 0)
        o->remove = NULL;
    else if (strcmp(op, "remove_first") == 0)
        o->remove_first = NULL;
    else if (strcmp(op, "size") == 0)
        o->size = NULL;
    else if (strcmp(op, "drain") == 0)
        o->drain = NULL;
    else if (strcmp(op, "remove_if") == 0)
        o->remove_if = NULL;
    else if (strcmp(op, "close") == 0)
        o->close = NULL;
    else
        fail_msg("no operation '%s'", op);
}

/* c without the member named `m` (size: 0). */
static void clear_core_member(tk_core_ops *c, const char *m) {
    if (strcmp(m, "size") == 0)
        c->size = 0;
    else if (strcmp(m, "init") == 0)
        c->init = NULL;
    else if (strcmp(m, "destroy") == 0)
        c->destroy = NULL;
    else if (strcmp(m, "insert") == 0)
        c->insert = NULL;
    else if (strcmp(m, "remove") == 0)
        c->remove = NULL;
    else if (strcmp(m, "due") == 0)
        c->due = NULL;
    else if (strcmp(m, "next") == 0)
        c->next = NULL;
    else if (strcmp(m, "expire") == 0)
        c->expire = NULL;
    else if (strcmp(m, "count") == 0)
        c->count = NULL;
    else if (strcmp(m, "first") == 0)
        c->first = NULL;
    else if (strcmp(m, "remove_if") == 0)
        c->remove_if = NULL;
    else if (strcmp(m, "check") == 0)
        c->check = NULL;
    else if (strcmp(m, "count_due") == 0)
        c->count_due = NULL;
    else
        fail_msg("no core member '%s'", m);
}

static const char *const core_members[] = {"size",      "init",  "destroy",  "insert", "remove",
                                           "due",       "next",  "expire",   "count",  "first",
                                           "remove_if", "check", "count_due"};

static void engine_check_names_what_is_wrong(void **state) {
    (void)state;
    char err[256] = "junk";
    assert_int_equal(tk_engine_check(&list_engine, err, sizeof(err)), TK_OK);
    assert_string_equal(err, "");
    assert_int_equal(tk_engine_check(NULL, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "engine is NULL");
    assert_int_equal(tk_engine_check(NULL, NULL, 0), TK_EINVAL);

    /* Names: 1 to 31 letters, digits, '_' or '-'. */
    static const char *const bad_names[] = {
        NULL,  "",      "has space", "a:b",     "a,b",
        "a=b", "tab\t", "\xc3\xa9",  "dot.ted", "abcdefghijklmnopqrstuvwxyz012345", /* 32 */
    };
    for (size_t i = 0; i < COUNT_OF(bad_names); i++) {
        tk_queue_ops o = list_engine;
        o.name = bad_names[i];
        strcpy(err, "junk");
        assert_int_equal(tk_engine_check(&o, err, sizeof(err)), TK_EINVAL);
        if (strstr(err, "is not 1 to 31 letters, digits, '_' or '-'") == NULL)
            fail_msg("name '%s': \"%s\"", bad_names[i] != NULL ? bad_names[i] : "NULL", err);
        assert_int_equal(tk_engine_register(&o, NULL, 0), TK_EINVAL);
    }
    static const char *const good_names[] = {"a", "Z9", "a_b-c",
                                             "abcdefghijklmnopqrstuvwxyz01234"}; /* 31 */
    for (size_t i = 0; i < COUNT_OF(good_names); i++) {
        tk_queue_ops o = list_engine;
        o.name = good_names[i];
        assert_int_equal(tk_engine_check(&o, err, sizeof(err)), TK_OK);
    }

    /* Each operation the executor needs. */
    for (size_t i = 0; i < COUNT_OF(needed_ops); i++) {
        tk_queue_ops o = list_engine;
        clear_op(&o, needed_ops[i]);
        char want[128];
        snprintf(want, sizeof(want), LIST_NAME ": the table has no %s operation", needed_ops[i]);
        assert_int_equal(tk_engine_check(&o, err, sizeof(err)), TK_EINVAL);
        assert_string_equal(err, want);
        assert_int_equal(tk_engine_register(&o, NULL, 0), TK_EINVAL);
        tk_queue *q = (tk_queue *)(uintptr_t)1;
        assert_int_equal(tk_queue_create(&o, NULL, NULL, NULL, &q), TK_EINVAL);
        assert_null(q);
    }
    /* The optional ones may be missing. */
    tk_queue_ops lean = list_engine;
    lean.poll = NULL;
    lean.peek = NULL;
    lean.check = NULL;
    lean.take_batch = NULL;
    assert_int_equal(tk_engine_check(&lean, err, sizeof(err)), TK_OK);

    /* Each mandatory member of the core. */
    for (size_t i = 0; i < COUNT_OF(core_members); i++) {
        tk_core_ops core = list_core_ops;
        clear_core_member(&core, core_members[i]);
        tk_queue_ops o = list_engine;
        o.core = &core;
        assert_int_equal(tk_engine_check(&o, err, sizeof(err)), TK_EINVAL);
        char want[128];
        snprintf(want, sizeof(want), LIST_NAME ": its core has no %s", core_members[i]);
        if (strncmp(err, want, strlen(want)) != 0)
            fail_msg("core without %s: \"%s\"", core_members[i], err);
        assert_int_equal(tk_engine_register(&o, NULL, 0), TK_EINVAL);
    }
    /* A resize block is all there or absent. */
    static const tk_core_resize_ops half_resize = {.entry_size = 8};
    tk_core_ops resized = list_core_ops;
    resized.resize = &half_resize;
    tk_queue_ops o = list_engine;
    o.core = &resized;
    assert_int_equal(tk_engine_check(&o, err, sizeof(err)), TK_EINVAL);
    assert_memory_equal(err, LIST_NAME ": its core has no ",
                        strlen(LIST_NAME ": its core has no "));
    assert_non_null(strstr(err, "resize"));

    /* The generic adapter runs a core: without one it has nothing to run. */
    o = list_engine;
    o.core = NULL;
    assert_int_equal(tk_engine_check(&o, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, LIST_NAME ": the generic blocking adapter needs a core");
    assert_int_equal(tk_engine_register(&o, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, LIST_NAME ": the generic blocking adapter needs a core");

    /* err is cut to fit, always terminated. */
    char small[8];
    memset(small, '#', sizeof(small));
    assert_int_equal(tk_engine_check(&o, small, 5), TK_EINVAL);
    assert_string_equal(small, "tkt-");
    assert_int_equal(small[5], '#');

    /* None of this registered anything. */
    assert_int_equal(tk_engine_count(), builtin_count);
    assert_null(tk_engine_by_name(LIST_NAME));
}

static bool at_least(const tk_node *n, void *ctx) {
    return n->deadline_ns >= *(const int64_t *)ctx;
}

/* A queue of the stand-in engine works through the generic adapter. */
static void use_list_queue(const tk_queue_ops *engine, const tk_queue_config *cfg) {
    tk_queue *q = NULL;
    assert_int_equal(tk_queue_create(engine, cfg, NULL, NULL, &q), TK_OK);
    assert_non_null(q);
    tk_node a, b, c, *out = NULL;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&c, 0, sizeof(c));
    int64_t now = tk_clock_now_ns();
    a.deadline_ns = now + 3 * MS;
    a.seq = 1;
    b.deadline_ns = now + TK_NS_PER_S * 3600;
    b.seq = 2;
    c.deadline_ns = now + TK_NS_PER_S * 7200;
    c.seq = 3;
    assert_int_equal(engine->offer(q, &c), TK_OK);
    assert_int_equal(engine->offer(q, &a), TK_OK);
    assert_int_equal(engine->offer(q, &b), TK_OK);
    assert_int_equal(engine->size(q), 3);
    assert_int_equal(engine->check(q), TK_OK);
    int64_t dl = 0;
    uint64_t seq = 0;
    assert_int_equal(engine->peek(q, &dl, &seq), TK_OK);
    assert_int_equal(dl, a.deadline_ns);
    assert_int_equal(seq, 1);
    assert_int_equal(engine->poll(q, 10 * TK_NS_PER_S, &out), TK_OK);
    assert_ptr_equal(out, &a);
    assert_true(tk_clock_now_ns() >= a.deadline_ns); /* never early */
    assert_int_equal(engine->remove(q, &a), TK_ENOENT);
    assert_int_equal(engine->poll(q, 0, &out), TK_ETIMEDOUT);
    assert_int_equal(engine->remove(q, &b), TK_OK);
    assert_int_equal(engine->remove(q, &b), TK_ENOENT);
    assert_int_equal(engine->offer(q, &b), TK_OK);
    int64_t from = c.deadline_ns;
    tk_node *list = engine->remove_if(q, at_least, &from);
    assert_ptr_equal(list, &c);
    assert_null(tk_node_next_detached(list));
    list = engine->drain(q);
    assert_ptr_equal(list, &b);
    assert_null(tk_node_next_detached(list));
    assert_int_equal(engine->size(q), 0);
    assert_int_equal(engine->check(q), TK_OK);
    engine->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY);
    assert_int_equal(engine->take(q, &out), TK_ECLOSED);
    engine->destroy(q);
}

static void an_engine_registered_at_run_time_is_found_parsed_and_run(void **state) {
    (void)state;
    char err[256] = "junk";
    size_t before = tk_engine_count();
    assert_int_equal(before, builtin_count);
    assert_null(tk_engine_by_name(LIST_NAME));

    /* Before registering: a queue works, a spec does not know the name. */
    use_list_queue(&list_engine, NULL);
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_parse(LIST_NAME, &engine, &cfg, NULL, 0), TK_ENOENT);

    assert_int_equal(tk_engine_register(&list_engine, err, sizeof(err)), TK_OK);
    assert_ptr_equal(tk_engine_by_name(LIST_NAME), &list_engine);
    assert_int_equal(tk_engine_count(), before + 1);
    assert_ptr_equal(tk_engine_at(before), &list_engine);
    assert_null(tk_engine_at(before + 1));
    for (size_t e = 0; e < before; e++) /* the others are where they were */
        assert_ptr_not_equal(tk_engine_at(e), &list_engine);
    /* Again: a no-op. */
    assert_int_equal(tk_engine_register(&list_engine, err, sizeof(err)), TK_OK);
    assert_int_equal(tk_engine_count(), before + 1);

    /* A spec with its own parameter, written back canonically. */
    assert_int_equal(
        tk_queue_config_parse(LIST_NAME ":grain=2us,spin=5us", &engine, &cfg, err, sizeof(err)),
        TK_OK);
    assert_ptr_equal(engine, &list_engine);
    int64_t grain = 0;
    assert_int_equal(tk_queue_config_get_value(&cfg, "grain", &grain), TK_OK);
    assert_int_equal(grain, 2 * US);
    assert_int_equal(cfg.spin_ns, 5 * US);
    char buf[128];
    assert_int_equal(tk_queue_config_format(engine, &cfg, buf, sizeof(buf)), TK_OK);
    assert_string_equal(buf, LIST_NAME ":grain=2us,spin=5us");
    assert_int_equal(tk_queue_config_parse(LIST_NAME ":grain=0ns", &engine, &cfg, err, sizeof(err)),
                     TK_EINVAL);
    assert_string_equal(err, LIST_NAME ": grain=0ns is below the minimum 1ns");
    assert_int_equal(tk_queue_config_parse(LIST_NAME ":tick=1ms", &engine, &cfg, err, sizeof(err)),
                     TK_EINVAL);
    assert_string_equal(err,
                        LIST_NAME ": unknown parameter 'tick'; known: grain, max_pending, spin");
    assert_int_equal(tk_queue_config_parse("nope", &engine, &cfg, err, sizeof(err)), TK_ENOENT);
    assert_non_null(strstr(err, ", " LIST_NAME)); /* listed among the known engines */
    assert_int_equal(tk_queue_config_parse(LIST_NAME ":grain=2us", &engine, &cfg, err, sizeof(err)),
                     TK_OK);
    use_list_queue(engine, &cfg);
    run_a_task_on(LIST_NAME ":grain=2us");

    /* Another table with that name, or with a built-in's name. */
    twin_engine = list_engine;
    assert_int_equal(tk_engine_register(&twin_engine, err, sizeof(err)), TK_ESTATE);
    assert_string_equal(err, LIST_NAME ": another engine of that name is registered");
    const tk_queue_ops *builtin = tk_engine_at(0);
    clash_engine = list_engine;
    clash_engine.name = builtin->name;
    assert_int_equal(tk_engine_register(&clash_engine, err, sizeof(err)), TK_ESTATE);
    assert_ptr_equal(tk_engine_by_name(builtin->name), builtin);
    /* A built-in table itself: already there, a no-op. */
    assert_int_equal(tk_engine_register(builtin, err, sizeof(err)), TK_OK);
    assert_int_equal(tk_engine_count(), before + 1);
    /* NULL, and a table that fails tk_engine_check(). */
    assert_int_equal(tk_engine_register(NULL, err, sizeof(err)), TK_EINVAL);
    assert_string_equal(err, "engine is NULL");
    assert_int_equal(tk_engine_register(NULL, NULL, 0), TK_EINVAL);

    /* Fill the registry: TK_ENGINE_REGISTER_MAX run-time engines in all. */
    size_t filled = 0;
    while (tk_engine_count() - builtin_count < TK_ENGINE_REGISTER_MAX) {
        assert_true(filled < TK_ENGINE_REGISTER_MAX);
        snprintf(fill_names[filled], sizeof(fill_names[filled]), "tkt-fill-%zu", filled);
        fill_engines[filled] = list_engine;
        fill_engines[filled].name = fill_names[filled];
        assert_int_equal(tk_engine_register(&fill_engines[filled], err, sizeof(err)), TK_OK);
        filled++;
    }
    assert_int_equal(filled, TK_ENGINE_REGISTER_MAX - 1);
    snprintf(fill_names[filled], sizeof(fill_names[filled]), "tkt-fill-%zu", filled);
    fill_engines[filled] = list_engine;
    fill_engines[filled].name = fill_names[filled];
    assert_int_equal(tk_engine_register(&fill_engines[filled], err, sizeof(err)), TK_EFULL);
    snprintf(buf, sizeof(buf), "%s: the registry is full (%d engines registered at run time)",
             fill_names[filled], TK_ENGINE_REGISTER_MAX);
    assert_string_equal(err, buf);
    assert_null(tk_engine_by_name(fill_names[filled]));
    assert_int_equal(tk_engine_count(), builtin_count + TK_ENGINE_REGISTER_MAX);
    /* Full, the registered ones are still a no-op and a clash still a clash. */
    assert_int_equal(tk_engine_register(&list_engine, NULL, 0), TK_OK);
    assert_int_equal(tk_engine_register(&twin_engine, NULL, 0), TK_ESTATE);
    for (size_t i = 0; i < filled; i++) {
        assert_ptr_equal(tk_engine_by_name(fill_names[i]), &fill_engines[i]);
        assert_ptr_equal(tk_engine_at(builtin_count + 1 + i), &fill_engines[i]);
    }
    assert_null(tk_engine_at(tk_engine_count()));
    /* The last one registered is as usable as the first. */
    char spec[64];
    snprintf(spec, sizeof(spec), "%s:grain=1ms", fill_names[filled - 1]);
    assert_int_equal(tk_queue_config_parse(spec, &engine, &cfg, err, sizeof(err)), TK_OK);
    assert_ptr_equal(engine, &fill_engines[filled - 1]);
    use_list_queue(engine, &cfg);
}

int main(int argc, char **argv) {
    builtin_count = tk_engine_count();
    list_engine = example_list_engine;
    list_engine.name = LIST_NAME;
    list_core_ops = *example_list_engine.core;
    list_engine.core = &list_core_ops;
    if (argc == 3 && strcmp(argv[1], "--write-parameters") == 0)
        return write_params_doc(argv[2]);
    if (argc == 2 && argv[1][0] != '-')
        params_doc_path = argv[1];
    else if (argc != 1) {
        fprintf(stderr, "usage: tk_spec_test [docs/parameters.md] | --write-parameters FILE\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_engine_has_a_well_formed_parameter_table),
        cmocka_unit_test(init_for_sets_the_engines_defaults_from_its_table),
        cmocka_unit_test(a_malformed_table_is_refused_everywhere),
        cmocka_unit_test(every_accepted_form_gives_its_engine_and_config),
        cmocka_unit_test(every_parameter_parses_at_its_bounds_as_set_value_and_check_say),
        cmocka_unit_test(max_pending_takes_counts_up_to_int64_max),
        cmocka_unit_test(every_malformed_spec_fails_with_a_message_that_names_the_problem),
        cmocka_unit_test(null_arguments_and_short_error_buffers),
        cmocka_unit_test(set_takes_values_as_a_spec_writes_them),
        cmocka_unit_test(set_value_and_get_value_round_trip_every_parameter),
        cmocka_unit_test(check_names_the_engine_and_the_parameter),
        cmocka_unit_test(the_wheel_refuses_a_revolution_past_int64),
        cmocka_unit_test(canonical_specs_are_written_in_table_order_without_defaults),
        cmocka_unit_test(format_then_parse_gives_back_the_same_engine_and_config),
        cmocka_unit_test(param_values_are_written_as_the_canonical_spec_writes_them),
        cmocka_unit_test(format_reports_bad_input_and_out_of_range_configs),
        cmocka_unit_test(a_buffer_too_small_gets_efull_and_the_start_of_the_text),
        cmocka_unit_test(create_refuses_every_value_outside_the_table_and_takes_each_minimum),
        cmocka_unit_test(create_refuses_null_arguments_and_incomplete_tables),
        cmocka_unit_test(an_executor_created_from_a_parsed_spec_runs_a_task),
        cmocka_unit_test(parameters_doc_is_the_tables_as_generated),
        cmocka_unit_test(engine_check_names_what_is_wrong),
        /* last: it registers engines for the rest of the process */
        cmocka_unit_test(an_engine_registered_at_run_time_is_found_parsed_and_run),
    };
    return cmocka_run_group_tests_name("spec", tests, NULL, NULL);
}
