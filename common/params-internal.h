/* SPDX-License-Identifier: MIT */
/* timerkit: engine parameter tables (tk_queue_param): checking, parsing and
 * resolving a config. Internal; defined in params.c.
 *
 * Every function here is thread-safe: tables are immutable and nothing is
 * kept between calls. */
#ifndef TIMERKIT_PARAMS_INTERNAL_H
#define TIMERKIT_PARAMS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "timerkit/clock.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"

/* Largest value of a size_t count that a tk_queue_param range can state. */
#define TK__PARAM_SIZE_MAX                                                                         \
    ((uint64_t)SIZE_MAX > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)SIZE_MAX)

#if defined(__GNUC__)
#define TK__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TK__PRINTF(fmt, args)
/* Room for any duration's text from tk__duration_text() ("-9223372036854775808ns"). */
#define TK__DURATION_TEXT 32

/* Writes ns into out (len bytes, always NUL-terminated) as the parameter
 * tables write a duration: a whole number in the largest unit (s, ms, us,
 * ns) that divides it exactly ("1ms", "1500ns", "-2s"; 0 is "0ns"). */
void tk__duration_text(int64_t ns, char *out, size_t len);

/* Parses s, a duration as the parameter tables read one: "DIGITS[.DIGITS]UNIT",
 * the unit s, ms, us or ns, a whole number of ns that fits an int64_t, not
 * negative ("1ms", "0.5ms", "250ns", "0ns"). Returns TK_OK with the value in
 * *ns, or TK_EINVAL (s NULL or anything else). */
int tk__duration_parse(const char *s, int64_t *ns);

#endif

/* Writes a formatted message into err, truncated to err_len bytes and always
 * NUL-terminated. Does nothing if err is NULL or err_len is 0. */
void tk__err_printf(char *err, size_t err_len, const char *fmt, ...) TK__PRINTF(3, 4);

/* Checks ops's parameter table: params non-NULL when param_count > 0,
 * params_size within TK_QUEUE_PARAMS_SIZE, every entry well-formed (key,
 * type, field inside its struct, min <= def <= max), no key twice. Returns
 * TK_OK, or TK_EINVAL with a message in err. ops must not be NULL. */
int tk__queue_params_table_check(const tk_queue_ops *ops, char *err, size_t err_len);

/* Resolves a config for ops's create(): *out (if not NULL) receives cfg
 * (NULL: tk_queue_config_init()) with, when cfg names no engine, engine =
 * ops and every parameter at its default. Then every parameter is checked
 * against its range and the whole against ops->validate(). Returns TK_OK,
 * or TK_EINVAL (ops NULL, a malformed table, a config of another engine, a
 * value out of range, a combination validate() refuses) with a message in
 * err naming the engine and the parameter ("wheel: tick=5us is below the
 * minimum 10us"). */
int tk__queue_config_resolve(const tk_queue_ops *ops, const tk_queue_config *cfg,
                             tk_queue_config *out, char *err, size_t err_len);

/* The engine's parameter struct in a resolved config. */
static inline const void *tk__queue_config_params(const tk_queue_config *cfg) {
    return (const void *)cfg->params.bytes;
}

/* Parses the parameter list of a spec, the part after "ENGINE:" (`list`, not
 * NULL; "" is the error "nothing after ':'"), "KEY=VALUE[,KEY=VALUE]...",
 * against ops's table, and stores each value in *cfg, which must name ops
 * as its engine. Fields not named are left as they are. Returns TK_OK, or
 * TK_EINVAL with a message in err (the error cases are those of
 * tk_queue_config_parse()); *cfg may then hold some of the values already
 * parsed, so pass a scratch copy. */
int tk__queue_params_parse(const tk_queue_ops *ops, const char *list, tk_queue_config *cfg,
                           char *err, size_t err_len);

/* Room for any duration's text from tk__duration_text() ("-9223372036854775808ns"). */
#define TK__DURATION_TEXT 32

/* Writes ns into out (len bytes, always NUL-terminated) as the parameter
 * tables write a duration: a whole number in the largest unit (s, ms, us,
 * ns) that divides it exactly ("1ms", "1500ns", "-2s"; 0 is "0ns"). */
void tk__duration_text(int64_t ns, char *out, size_t len);

/* Parses s, a duration as the parameter tables read one: "DIGITS[.DIGITS]UNIT",
 * the unit s, ms, us or ns, a whole number of ns that fits an int64_t, not
 * negative ("1ms", "0.5ms", "250ns", "0ns"). Returns TK_OK with the value in
 * *ns, or TK_EINVAL (s NULL or anything else). */
int tk__duration_parse(const char *s, int64_t *ns);

#endif
