/* SPDX-License-Identifier: MIT */
/* timerkit: engine spec strings, "ENGINE[:KEY=VALUE[,KEY=VALUE]...]".
 *
 * tk_queue_config_parse() finds ENGINE in the registry (registry.c) and
 * hands the rest to the engine's parameter table (common/params.c), which
 * also writes the canonical form back (tk_queue_config_format()). */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "params-internal.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

/* Longer names are no registered engine's (and are not looked up). */
#define ENGINE_NAME_MAX 64

/* "heap, wheel": the registered engines' names. */
static void known_engines(char *buf, size_t len) {
    size_t pos = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < tk_engine_count(); i++) {
        const char *name = tk_engine_at(i)->name;
        const char *sep = i > 0 ? ", " : "";
        size_t need = strlen(sep) + strlen(name);
        if (pos + need >= len)
            break; /* the list is cut short rather than cut mid-name */
        memcpy(buf + pos, sep, strlen(sep));
        memcpy(buf + pos + strlen(sep), name, strlen(name));
        pos += need;
        buf[pos] = '\0';
    }
}

int tk_queue_config_parse(const char *spec, const tk_queue_ops **engine, tk_queue_config *cfg,
                          char *err, size_t err_len) {
    tk__err_printf(err, err_len, "%s", "");
    if (spec == NULL || engine == NULL || cfg == NULL) {
        tk__err_printf(err, err_len, "%s is NULL",
                       spec == NULL     ? "spec"
                       : engine == NULL ? "engine"
                                        : "cfg");
        return TK_EINVAL;
    }
    char known[256];
    known_engines(known, sizeof(known));
    for (size_t i = 0; spec[i] != '\0'; i++) {
        if (isspace((unsigned char)spec[i])) {
            tk__err_printf(err, err_len,
                           "whitespace at offset %zu of the spec; a spec has none: "
                           "ENGINE[:KEY=VALUE[,KEY=VALUE]...]",
                           i);
            return TK_EINVAL;
        }
    }
    if (spec[0] == '\0') {
        tk__err_printf(err, err_len, "empty spec; known engines: %s", known);
        return TK_EINVAL;
    }
    size_t name_len = strcspn(spec, ":");
    if (name_len == 0) {
        tk__err_printf(err, err_len, "no engine name before ':'; known engines: %s", known);
        return TK_EINVAL;
    }
    const tk_queue_ops *ops = NULL;
    if (name_len < ENGINE_NAME_MAX) {
        char name[ENGINE_NAME_MAX];
        memcpy(name, spec, name_len);
        name[name_len] = '\0';
        ops = tk_engine_by_name(name);
    }
    if (ops == NULL) {
        tk__err_printf(err, err_len, "unknown engine '%.*s'; known: %s",
                       name_len > ENGINE_NAME_MAX ? ENGINE_NAME_MAX : (int)name_len, spec, known);
        return TK_ENOENT;
    }
    tk_queue_config parsed;
    if (tk_queue_config_init_for(&parsed, ops) != TK_OK) {
        (void)tk__queue_params_table_check(ops, err, err_len); /* says what is malformed */
        return TK_EINVAL;
    }
    if (spec[name_len] == ':') {
        int rc = tk__queue_params_parse(ops, spec + name_len + 1, &parsed, err, err_len);
        if (rc != TK_OK)
            return rc;
    }
    /* the values together: what the engine's validate() says of them */
    if (tk__queue_config_resolve(ops, &parsed, NULL, err, err_len) != TK_OK)
        return TK_EINVAL;
    *engine = ops;
    *cfg = parsed;
    return TK_OK;
}
