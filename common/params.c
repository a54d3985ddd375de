/* SPDX-License-Identifier: MIT */
/* timerkit: engine parameter tables (tk_queue_param): reading, writing,
 * parsing and checking the parameters they describe.
 *
 * A table entry names its field by offset and size: in the engine's own
 * parameter struct (tk_queue_config.params), or, for TK_PARAM_ADAPTER
 * entries, in tk_queue_config itself. A duration is an int64_t of
 * nanoseconds; a count is an unsigned integer of 1, 2, 4 or 8 bytes. Both
 * are carried here as a uint64_t `raw` (a duration's two's-complement bits).
 * A config that names no engine (cfg->engine NULL) stands for every
 * engine's defaults: its engine fields read as the table's defaults.
 *
 * tk_queue_config_parse(), which needs the engine registry, lives in
 * library/engine-spec.c and calls tk__queue_params_parse() for the part
 * after "ENGINE:". Nothing here allocates or keeps state. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "params-internal.h"
#include "timerkit/status.h"

/* Room for any value's text: "-9223372036854775808ns", any uint64_t. */
#define VALUE_TEXT 32

/* Longest piece of the caller's spec echoed in a message. */
#define ECHO_MAX 120

/* Duration units, largest first; `exp`: the unit is 10^exp ns. */
static const struct duration_unit {
    const char *name;
    int exp;
} units[] = {{"s", 9}, {"ms", 6}, {"us", 3}, {"ns", 0}};

#define UNIT_COUNT (sizeof(units) / sizeof(units[0]))

static const uint64_t pow10_table[10] = {
    1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
};

void tk__err_printf(char *err, size_t err_len, const char *fmt, ...) {
    if (err == NULL || err_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    if (n < 0)
        err[0] = '\0';
}

/* ---- fields ---------------------------------------------------------------- */

/* The end of the tk_queue_config fields an adapter entry may name. */
#define ADAPTER_FIELDS_END offsetof(tk_queue_config, engine)

/* True if p names a field of a supported type and size inside its struct
 * (ops's parameter struct, or tk_queue_config's adapter fields). */
static bool field_ok(const tk_queue_ops *ops, const tk_queue_param *p) {
    size_t room = (p->flags & TK_PARAM_ADAPTER) != 0 ? ADAPTER_FIELDS_END : ops->params_size;
    if (room > TK_QUEUE_PARAMS_SIZE && (p->flags & TK_PARAM_ADAPTER) == 0)
        return false;
    if (p->offset > room || p->size > room - p->offset)
        return false;
    switch (p->type) {
    case TK_PARAM_DURATION:
        return p->size == sizeof(int64_t);
    case TK_PARAM_COUNT:
        return p->size == 1 || p->size == 2 || p->size == 4 || p->size == 8;
    }
    return false;
}

/* True if raw fits in p's field (a parsed count may not). */
static bool fits_field(const tk_queue_param *p, uint64_t raw) {
    return p->size >= sizeof(uint64_t) || raw < (UINT64_C(1) << (8 * p->size));
}

enum { IN_RANGE = 0, BELOW, ABOVE };

static int range_of(const tk_queue_param *p, uint64_t raw) {
    if (p->type == TK_PARAM_DURATION) {
        int64_t v = (int64_t)raw;
        return v < p->min ? BELOW : v > p->max ? ABOVE : IN_RANGE;
    }
    /* param_ok(): 0 <= min <= max for a count */
    if (raw < (uint64_t)p->min)
        return BELOW;
    if (raw > (uint64_t)p->max || !fits_field(p, raw))
        return ABOVE;
    return IN_RANGE;
}

/* True if p is a usable table entry of ops: a key, a field, a sane range
 * with the default inside it. */
static bool param_ok(const tk_queue_ops *ops, const tk_queue_param *p) {
    if (p->key == NULL || p->key[0] == '\0' || !field_ok(ops, p) || p->min > p->max)
        return false;
    if (p->type == TK_PARAM_COUNT && (p->min < 0 || !fits_field(p, (uint64_t)p->max)))
        return false; /* a range its field cannot hold */
    return range_of(p, (uint64_t)p->def) == IN_RANGE;
}

static const unsigned char *field_at_const(const tk_queue_config *cfg, const tk_queue_param *p) {
    if ((p->flags & TK_PARAM_ADAPTER) != 0)
        return (const unsigned char *)cfg + p->offset;
    return cfg->params.bytes + p->offset;
}

static uint64_t load(const unsigned char *at, size_t size) {
    switch (size) {
    case 1: {
        uint8_t v;
        memcpy(&v, at, sizeof(v));
        return v;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, at, sizeof(v));
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, at, sizeof(v));
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, at, sizeof(v));
        return v;
    }
    }
}

/* The value of p in cfg: its field, or the table default for an engine
 * field of a config that names no engine. */
static uint64_t field_get(const tk_queue_config *cfg, const tk_queue_param *p) {
    if ((p->flags & TK_PARAM_ADAPTER) == 0 && cfg->engine == NULL)
        return (uint64_t)p->def;
    return load(field_at_const(cfg, p), p->size);
}

/* Stores raw, which the caller has range-checked to fit p's field. The
 * config must name its engine for an engine field. */
static void field_set(tk_queue_config *cfg, const tk_queue_param *p, uint64_t raw) {
    unsigned char *at = (p->flags & TK_PARAM_ADAPTER) != 0 ? (unsigned char *)cfg + p->offset
                                                           : cfg->params.bytes + p->offset;
    switch (p->size) {
    case 1: {
        uint8_t v = (uint8_t)raw;
        memcpy(at, &v, sizeof(v));
        break;
    }
    case 2: {
        uint16_t v = (uint16_t)raw;
        memcpy(at, &v, sizeof(v));
        break;
    }
    case 4: {
        uint32_t v = (uint32_t)raw;
        memcpy(at, &v, sizeof(v));
        break;
    }
    default:
        memcpy(at, &raw, sizeof(raw));
        break;
    }
}

/* ---- text ------------------------------------------------------------------ */

/* A duration in the largest unit that divides it exactly; 0 is "0ns". */
void tk__duration_text(int64_t ns, char *out, size_t len) {
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    size_t u = UNIT_COUNT - 1;
    if (mag != 0) {
        u = 0;
        while (mag % pow10_table[units[u].exp] != 0)
            u++;
    }
    snprintf(out, len, "%s%" PRIu64 "%s", ns < 0 ? "-" : "", mag / pow10_table[units[u].exp],
             units[u].name);
}

static void value_text(const tk_queue_param *p, uint64_t raw, char out[VALUE_TEXT]) {
    if (p->type == TK_PARAM_DURATION)
        tk__duration_text((int64_t)raw, out, VALUE_TEXT);
    else
        snprintf(out, VALUE_TEXT, "%" PRIu64, raw);
}

/* Output into a caller's buffer that remembers whether anything was cut. */
typedef struct text {
    char *buf;
    size_t len; /* > 0 */
    size_t pos; /* bytes written, buf[pos] == '\0' */
    bool cut;
} text;

static void text_init(text *t, char *buf, size_t len) {
    t->buf = buf;
    t->len = len;
    t->pos = 0;
    t->cut = false;
    buf[0] = '\0';
}

static void text_put(text *t, const char *s) {
    size_t n = strlen(s);
    size_t room = t->len - 1 - t->pos;
    if (n > room) {
        n = room;
        t->cut = true;
    }
    memcpy(t->buf + t->pos, s, n);
    t->pos += n;
    t->buf[t->pos] = '\0';
}

/* "tick, slots, max_pending, spin", or "(none)". */
static void known_keys(const tk_queue_ops *ops, char *buf, size_t len) {
    text t;
    text_init(&t, buf, len);
    for (size_t i = 0; i < ops->param_count; i++) {
        if (i > 0)
            text_put(&t, ", ");
        text_put(&t, ops->params[i].key != NULL ? ops->params[i].key : "?");
    }
    if (ops->param_count == 0)
        text_put(&t, "(none)");
}

static const char *engine_name(const tk_queue_ops *ops) {
    return ops->name != NULL ? ops->name : "(unnamed engine)";
}

static int echo_len(size_t n) {
    return n > ECHO_MAX ? ECHO_MAX : (int)n;
}

/* ---- values ---------------------------------------------------------------- */

enum {
    PV_OK = 0,
    PV_NEGATIVE,   /* starts with '-' */
    PV_NOT_NUMBER, /* does not start with a digit, or a '.' without digits after it */
    PV_NO_UNIT,    /* a duration that ends after its number */
    PV_BAD_UNIT,   /* a duration whose number is followed by something not a unit */
    PV_FRACTION,   /* a duration that is not a whole number of ns */
    PV_OVERFLOW    /* too large for int64_t ns / uint64_t */
};

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* Parses s[0..n), "DIGITS[.DIGITS]UNIT", into *ns. On PV_BAD_UNIT,
 * *unit_at is where the text after the number starts. */
static int parse_duration(const char *s, size_t n, int64_t *ns, size_t *unit_at) {
    if (n > 0 && s[0] == '-')
        return PV_NEGATIVE;
    size_t i = 0;
    uint64_t whole = 0;
    bool overflow = false;
    for (; i < n && is_digit(s[i]); i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (whole > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            whole = whole * 10 + d;
    }
    if (i == 0)
        return PV_NOT_NUMBER;
    uint64_t frac = 0;      /* the fraction's significant digits, if at most 9 */
    size_t frac_digits = 0; /* their number, trailing zeros dropped */
    if (i < n && s[i] == '.') {
        size_t from = ++i;
        while (i < n && is_digit(s[i]))
            i++;
        if (i == from)
            return PV_NOT_NUMBER;
        size_t to = i;
        while (to > from && s[to - 1] == '0')
            to--;
        frac_digits = to - from;
        for (size_t k = from; k < to && frac_digits <= 9; k++)
            frac = frac * 10 + (uint64_t)(s[k] - '0');
    }
    *unit_at = i;
    if (i == n)
        return PV_NO_UNIT;
    const struct duration_unit *unit = NULL;
    for (size_t u = 0; u < UNIT_COUNT; u++) {
        if (strlen(units[u].name) == n - i && memcmp(units[u].name, s + i, n - i) == 0)
            unit = &units[u];
    }
    if (unit == NULL)
        return PV_BAD_UNIT;
    if (frac_digits > (size_t)unit->exp)
        return PV_FRACTION;
    uint64_t scale = pow10_table[unit->exp];
    uint64_t frac_ns = frac * pow10_table[(size_t)unit->exp - frac_digits]; /* < scale */
    if (overflow || whole > ((uint64_t)INT64_MAX - frac_ns) / scale)
        return PV_OVERFLOW;
    *ns = (int64_t)(whole * scale + frac_ns);
    return PV_OK;
}

int tk__duration_parse(const char *s, int64_t *ns) {
    size_t unit_at;
    int64_t v;
    if (s == NULL || parse_duration(s, strlen(s), &v, &unit_at) != PV_OK)
        return TK_EINVAL;
    *ns = v;
    return TK_OK;
}

/* Parses s[0..n), "DIGITS", into *v. */
static int parse_count(const char *s, size_t n, uint64_t *v) {
    if (n > 0 && s[0] == '-')
        return PV_NEGATIVE;
    uint64_t x = 0;
    bool overflow = false;
    size_t i = 0;
    for (; i < n && is_digit(s[i]); i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            x = x * 10 + d;
    }
    if (i == 0 || i != n)
        return PV_NOT_NUMBER;
    if (overflow)
        return PV_OVERFLOW;
    *v = x;
    return PV_OK;
}

/* Parses the value text v[0..n) of p into *raw, range-checked. Returns
 * TK_OK or TK_EINVAL with a message. */
static int parse_value(const tk_queue_ops *ops, const tk_queue_param *p, const char *v, size_t n,
                       uint64_t *raw, char *err, size_t err_len) {
    const char *name = engine_name(ops);
    int vn = echo_len(n);
    int rc;
    size_t unit_at = 0;
    if (p->type == TK_PARAM_DURATION) {
        int64_t ns = 0;
        rc = parse_duration(v, n, &ns, &unit_at);
        *raw = (uint64_t)ns;
    } else {
        rc = parse_count(v, n, raw);
    }
    switch (rc) {
    case PV_OK:
        break;
    case PV_NEGATIVE:
        tk__err_printf(err, err_len, "%s: %s=%.*s is negative", name, p->key, vn, v);
        return TK_EINVAL;
    case PV_NOT_NUMBER:
        if (p->type == TK_PARAM_DURATION)
            tk__err_printf(err, err_len,
                           "%s: %s=%.*s is not a duration; write a number and a unit (ns, us, "
                           "ms, s): 150us, 1.5ms, 2s",
                           name, p->key, vn, v);
        else
            tk__err_printf(err, err_len, "%s: %s=%.*s is not an unsigned decimal integer", name,
                           p->key, vn, v);
        return TK_EINVAL;
    case PV_NO_UNIT:
        tk__err_printf(err, err_len, "%s: %s=%.*s has no unit; add ns, us, ms or s (%.*sms)", name,
                       p->key, vn, v, vn, v);
        return TK_EINVAL;
    case PV_BAD_UNIT:
        tk__err_printf(err, err_len, "%s: %s=%.*s has an unknown unit '%.*s'; use ns, us, ms or s",
                       name, p->key, vn, v, echo_len(n - unit_at), v + unit_at);
        return TK_EINVAL;
    case PV_FRACTION:
        tk__err_printf(err, err_len, "%s: %s=%.*s is not a whole number of nanoseconds", name,
                       p->key, vn, v);
        return TK_EINVAL;
    default: /* PV_OVERFLOW */
        tk__err_printf(err, err_len, "%s: %s=%.*s is too large (it overflows %s)", name, p->key, vn,
                       v, p->type == TK_PARAM_DURATION ? "int64 nanoseconds" : "a 64-bit count");
        return TK_EINVAL;
    }
    int where = range_of(p, *raw);
    if (where != IN_RANGE) {
        char bound[VALUE_TEXT];
        value_text(p, (uint64_t)(where == BELOW ? p->min : p->max), bound);
        tk__err_printf(err, err_len, "%s: %s=%.*s is %s %s", name, p->key, vn, v,
                       where == BELOW ? "below the minimum" : "above the maximum", bound);
        return TK_EINVAL;
    }
    return TK_OK;
}

/* ---- tables ---------------------------------------------------------------- */

int tk__queue_params_table_check(const tk_queue_ops *ops, char *err, size_t err_len) {
    const char *name = engine_name(ops);
    if (ops->param_count > 0 && ops->params == NULL) {
        tk__err_printf(err, err_len, "%s: param_count is %zu but params is NULL", name,
                       ops->param_count);
        return TK_EINVAL;
    }
    if (ops->params_size > TK_QUEUE_PARAMS_SIZE) {
        tk__err_printf(err, err_len,
                       "%s: params_size %zu is larger than TK_QUEUE_PARAMS_SIZE (%d bytes)", name,
                       ops->params_size, TK_QUEUE_PARAMS_SIZE);
        return TK_EINVAL;
    }
    for (size_t i = 0; i < ops->param_count; i++) {
        const tk_queue_param *p = &ops->params[i];
        if (!param_ok(ops, p)) {
            tk__err_printf(err, err_len,
                           "%s: entry %zu ('%s') of the parameter table is malformed (a key, a "
                           "type, a field inside %s, min <= def <= max)",
                           name, i, p->key != NULL ? p->key : "(no key)",
                           (p->flags & TK_PARAM_ADAPTER) != 0 ? "tk_queue_config's adapter fields"
                                                              : "params_size");
            return TK_EINVAL;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(ops->params[j].key, p->key) == 0) {
                tk__err_printf(err, err_len, "%s: the parameter table has the key '%s' twice", name,
                               p->key);
                return TK_EINVAL;
            }
        }
    }
    return TK_OK;
}

static const tk_queue_param *find_param(const tk_queue_ops *ops, const char *key, size_t n) {
    for (size_t i = 0; i < ops->param_count; i++) {
        const char *k = ops->params[i].key;
        if (k != NULL && strlen(k) == n && memcmp(k, key, n) == 0)
            return &ops->params[i];
    }
    return NULL;
}

/* True if an item of list before `item` has the key key[0..n). */
static bool given_before(const char *list, const char *item, const char *key, size_t n) {
    const char *at = list;
    while (at < item) {
        const char *end = strchr(at, ',');
        size_t klen = strcspn(at, "=,");
        if (klen == n && memcmp(at, key, n) == 0)
            return true;
        at = end + 1; /* every item before `item` ends in ',' */
    }
    return false;
}

int tk__queue_params_parse(const tk_queue_ops *ops, const char *list, tk_queue_config *cfg,
                           char *err, size_t err_len) {
    const char *name = engine_name(ops);
    if (tk__queue_params_table_check(ops, err, err_len) != TK_OK)
        return TK_EINVAL;
    char known[256];
    known_keys(ops, known, sizeof(known));
    if (*list == '\0') {
        tk__err_printf(err, err_len, "%s: nothing after ':'; known parameters: %s", name, known);
        return TK_EINVAL;
    }
    const char *item = list;
    for (;;) {
        size_t n = strcspn(item, ",");
        const char *end = item + n;
        if (n == 0) {
            if (*end == '\0')
                tk__err_printf(err, err_len, "%s: nothing after the last ','", name);
            else
                tk__err_printf(err, err_len, "%s: empty parameter before a ','; known: %s", name,
                               known);
            return TK_EINVAL;
        }
        const char *eq = memchr(item, '=', n);
        size_t klen = eq != NULL ? (size_t)(eq - item) : n;
        if (klen == 0) {
            tk__err_printf(err, err_len, "%s: parameter with an empty name in '%.*s'; known: %s",
                           name, echo_len(n), item, known);
            return TK_EINVAL;
        }
        const tk_queue_param *p = find_param(ops, item, klen);
        if (p == NULL) {
            tk__err_printf(err, err_len, "%s: unknown parameter '%.*s'; known: %s", name,
                           echo_len(klen), item, known);
            return TK_EINVAL;
        }
        if (eq == NULL) {
            tk__err_printf(err, err_len, "%s: parameter '%s' has no '='; write %s=VALUE", name,
                           p->key, p->key);
            return TK_EINVAL;
        }
        if (given_before(list, item, item, klen)) {
            tk__err_printf(err, err_len, "%s: parameter '%s' is given twice", name, p->key);
            return TK_EINVAL;
        }
        const char *v = eq + 1;
        size_t vlen = (size_t)(end - v);
        if (vlen == 0) {
            tk__err_printf(err, err_len, "%s: parameter '%s' has no value after '='", name, p->key);
            return TK_EINVAL;
        }
        uint64_t raw = 0;
        int rc = parse_value(ops, p, v, vlen, &raw, err, err_len);
        if (rc != TK_OK)
            return rc;
        field_set(cfg, p, raw);
        if (*end == '\0')
            return TK_OK;
        item = end + 1;
    }
}

/* Sets every engine field of cfg (whose engine is ops) to its default. */
static void set_defaults(tk_queue_config *cfg, const tk_queue_ops *ops) {
    memset(cfg->params.bytes, 0, sizeof(cfg->params.bytes));
    cfg->engine = ops;
    for (size_t i = 0; i < ops->param_count; i++)
        if ((ops->params[i].flags & TK_PARAM_ADAPTER) == 0)
            field_set(cfg, &ops->params[i], (uint64_t)ops->params[i].def);
}

int tk__queue_config_resolve(const tk_queue_ops *ops, const tk_queue_config *cfg,
                             tk_queue_config *out, char *err, size_t err_len) {
    tk__err_printf(err, err_len, "%s", "");
    if (ops == NULL) {
        tk__err_printf(err, err_len, "no engine");
        return TK_EINVAL;
    }
    const char *name = engine_name(ops);
    if (tk__queue_params_table_check(ops, err, err_len) != TK_OK)
        return TK_EINVAL;
    tk_queue_config c;
    if (cfg == NULL)
        tk_queue_config_init(&c);
    else
        c = *cfg;
    if (c.engine == NULL) {
        set_defaults(&c, ops);
    } else if (c.engine != ops) {
        tk__err_printf(err, err_len, "%s: the config holds the parameters of engine '%s'", name,
                       engine_name(c.engine));
        return TK_EINVAL;
    }
    for (size_t i = 0; i < ops->param_count; i++) {
        const tk_queue_param *p = &ops->params[i];
        uint64_t raw = field_get(&c, p);
        int where = range_of(p, raw);
        if (where != IN_RANGE) {
            char value[VALUE_TEXT], bound[VALUE_TEXT];
            value_text(p, raw, value);
            value_text(p, (uint64_t)(where == BELOW ? p->min : p->max), bound);
            tk__err_printf(err, err_len, "%s: %s=%s is %s %s", name, p->key, value,
                           where == BELOW ? "below the minimum" : "above the maximum", bound);
            return TK_EINVAL;
        }
    }
    if (ops->validate != NULL && ops->validate(c.params.bytes, err, err_len) != TK_OK) {
        if (err != NULL && err_len > 0 && err[0] == '\0')
            tk__err_printf(err, err_len, "%s: the parameters do not work together", name);
        return TK_EINVAL;
    }
    if (out != NULL)
        *out = c;
    return TK_OK;
}

/* ---- public ---------------------------------------------------------------- */

const char *tk_queue_cap_name(unsigned cap) {
    switch (cap) {
    case TK_QUEUE_CAP_EXACT_ORDER:
        return "exact order";
    case TK_QUEUE_CAP_O1_REMOVE:
        return "O(1) remove";
    case TK_QUEUE_CAP_TICKED:
        return "ticked";
    case TK_QUEUE_CAP_OWN_THREAD:
        return "own thread";
    case TK_QUEUE_CAP_BOUNDED:
        return "bounded";
    case TK_QUEUE_CAP_BATCH_TAKE:
        return "batch take";
    case TK_QUEUE_CAP_DEFERRED_RELEASE:
        return "deferred release";
    case TK_QUEUE_CAP_SHARDED:
        return "sharded";
    case TK_QUEUE_CAP_WAKE:
        return "wake";
    case TK_QUEUE_CAP_SLACK:
        return "slack";
    default:
        return NULL;
    }
}

int tk_queue_config_check(const tk_queue_ops *engine, const tk_queue_config *cfg, char *err,
                          size_t err_len) {
    return tk__queue_config_resolve(engine, cfg, NULL, err, err_len);
}

int tk_queue_config_init_for(tk_queue_config *cfg, const tk_queue_ops *engine) {
    if (cfg == NULL || engine == NULL || tk__queue_params_table_check(engine, NULL, 0) != TK_OK)
        return TK_EINVAL;
    tk_queue_config_init(cfg);
    set_defaults(cfg, engine);
    return TK_OK;
}

int tk_queue_config_set(tk_queue_config *cfg, const char *key, const char *value, char *err,
                        size_t err_len) {
    tk__err_printf(err, err_len, "%s", "");
    if (cfg == NULL || key == NULL || value == NULL) {
        tk__err_printf(err, err_len, "%s is NULL",
                       cfg == NULL   ? "cfg"
                       : key == NULL ? "key"
                                     : "value");
        return TK_EINVAL;
    }
    const tk_queue_ops *ops = cfg->engine;
    if (ops == NULL) {
        tk__err_printf(err, err_len,
                       "the config names no engine; start from tk_queue_config_init_for()");
        return TK_EINVAL;
    }
    if (tk__queue_params_table_check(ops, err, err_len) != TK_OK)
        return TK_EINVAL;
    const tk_queue_param *p = find_param(ops, key, strlen(key));
    if (p == NULL) {
        char known[256];
        known_keys(ops, known, sizeof(known));
        tk__err_printf(err, err_len, "%s: unknown parameter '%.*s'; known: %s", engine_name(ops),
                       echo_len(strlen(key)), key, known);
        return TK_EINVAL;
    }
    uint64_t raw = 0;
    int rc = parse_value(ops, p, value, strlen(value), &raw, err, err_len);
    if (rc != TK_OK)
        return rc;
    field_set(cfg, p, raw);
    return TK_OK;
}

/* The entry `key` of cfg's engine's table, or NULL (no engine, unknown key,
 * malformed table). */
static const tk_queue_param *config_param(const tk_queue_config *cfg, const char *key) {
    if (cfg == NULL || key == NULL || cfg->engine == NULL ||
        tk__queue_params_table_check(cfg->engine, NULL, 0) != TK_OK)
        return NULL;
    return find_param(cfg->engine, key, strlen(key));
}

int tk_queue_config_set_value(tk_queue_config *cfg, const char *key, int64_t value) {
    const tk_queue_param *p = config_param(cfg, key);
    if (p == NULL)
        return TK_EINVAL;
    if (p->type == TK_PARAM_COUNT && value < 0)
        return TK_EINVAL;
    if (range_of(p, (uint64_t)value) != IN_RANGE)
        return TK_EINVAL;
    field_set(cfg, p, (uint64_t)value);
    return TK_OK;
}

int tk_queue_config_get_value(const tk_queue_config *cfg, const char *key, int64_t *value) {
    const tk_queue_param *p = config_param(cfg, key);
    if (p == NULL || value == NULL)
        return TK_EINVAL;
    uint64_t raw = field_get(cfg, p);
    if (p->type == TK_PARAM_COUNT && raw > (uint64_t)INT64_MAX)
        return TK_EINVAL;
    *value = (int64_t)raw;
    return TK_OK;
}

/* True if p is an entry of ops's table. */
static bool entry_of(const tk_queue_ops *ops, const tk_queue_param *p) {
    for (size_t i = 0; i < ops->param_count; i++)
        if (&ops->params[i] == p)
            return true;
    return false;
}

int tk_queue_param_format(const tk_queue_param *p, const tk_queue_config *cfg, char *buf,
                          size_t len) {
    if (p == NULL || cfg == NULL || buf == NULL)
        return TK_EINVAL;
    if (len > 0)
        buf[0] = '\0';
    if (p->type != TK_PARAM_DURATION && p->type != TK_PARAM_COUNT)
        return TK_EINVAL;
    if (p->size != 1 && p->size != 2 && p->size != 4 && p->size != 8)
        return TK_EINVAL;
    if (p->type == TK_PARAM_DURATION && p->size != sizeof(int64_t))
        return TK_EINVAL;
    if (cfg->engine != NULL && !entry_of(cfg->engine, p))
        return TK_EINVAL;
    if (cfg->engine != NULL && !field_ok(cfg->engine, p))
        return TK_EINVAL;
    if ((p->flags & TK_PARAM_ADAPTER) != 0 && p->offset + p->size > ADAPTER_FIELDS_END)
        return TK_EINVAL;
    if (len == 0)
        return TK_EFULL;
    char value[VALUE_TEXT];
    value_text(p, field_get(cfg, p), value);
    text t;
    text_init(&t, buf, len);
    text_put(&t, value);
    return t.cut ? TK_EFULL : TK_OK;
}

int tk_queue_config_format(const tk_queue_ops *engine, const tk_queue_config *cfg, char *buf,
                           size_t len) {
    if (engine == NULL || cfg == NULL || buf == NULL)
        return TK_EINVAL;
    if (len > 0)
        buf[0] = '\0';
    tk_queue_config c;
    if (engine->name == NULL || tk__queue_config_resolve(engine, cfg, &c, NULL, 0) != TK_OK)
        return TK_EINVAL;
    if (len == 0)
        return TK_EFULL;
    text t;
    text_init(&t, buf, len);
    text_put(&t, engine->name);
    const char *sep = ":";
    for (size_t i = 0; i < engine->param_count; i++) {
        const tk_queue_param *p = &engine->params[i];
        uint64_t raw = field_get(&c, p);
        if ((p->flags & TK_PARAM_ALWAYS) == 0 && raw == (uint64_t)p->def)
            continue;
        char value[VALUE_TEXT];
        value_text(p, raw, value);
        text_put(&t, sep);
        text_put(&t, p->key);
        text_put(&t, "=");
        text_put(&t, value);
        sep = ",";
    }
    return t.cut ? TK_EFULL : TK_OK;
}
