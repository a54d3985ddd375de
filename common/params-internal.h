/* timerkit: engine parameter tables (tk_queue_param): checking, parsing and
 * the pieces shared by every engine's table. Internal; defined in params.c.
 *
 * Every function here is thread-safe: tables are immutable and nothing is
 * kept between calls. */
#ifndef TIMERKIT_PARAMS_INTERNAL_H
#define TIMERKIT_PARAMS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "timerkit/clock.h"
#include "timerkit/queue.h"

/* Largest tk_queue_config.spin_ns an engine accepts. */
#define TK__SPIN_MAX_NS TK_NS_PER_S

/* Largest value of a size_t count that a tk_queue_param range can state. */
#define TK__PARAM_SIZE_MAX                                                                         \
    ((uint64_t)SIZE_MAX > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)SIZE_MAX)

/* The `spin` entry (tk_queue_config.spin_ns), the same in every engine that
 * spins before a deadline. */
#define TK__PARAM_SPIN                                                                             \
    {                                                                                              \
        .key = "spin", .type = TK_PARAM_DURATION, .flags = TK_PARAM_ADAPTER,                       \
        .offset = offsetof(tk_queue_config, spin_ns), .size = sizeof(int64_t), .min = 0,           \
        .max = TK__SPIN_MAX_NS,                                                                    \
        .help = "busy-wait this long before a deadline instead of sleeping (0: never)"             \
    }

#if defined(__GNUC__)
#define TK__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TK__PRINTF(fmt, args)
#endif

/* Writes a formatted message into err, truncated to err_len bytes and always
 * NUL-terminated. Does nothing if err is NULL or err_len is 0. */
void tk__err_printf(char *err, size_t err_len, const char *fmt, ...) TK__PRINTF(3, 4);

/* Checks the value of every parameter in ops's table against its range, as
 * create() sees it (a zero field stands for its tk_queue_config_init()
 * default). cfg NULL means all defaults. Returns TK_OK, or TK_EINVAL (ops
 * NULL, a malformed table entry, or a value out of range) with a message in
 * err naming the engine and the parameter ("wheel: tick=5us is below the
 * minimum 10us"; see tk__err_printf for err). */
int tk__queue_config_check(const tk_queue_ops *ops, const tk_queue_config *cfg, char *err,
                           size_t err_len);

/* Parses the parameter list of a spec, the part after "ENGINE:" (`list`, not
 * NULL; "" is the error "nothing after ':'"), "KEY=VALUE[,KEY=VALUE]...",
 * against ops's table, and stores each value in *cfg. Fields not named are
 * left as they are. Returns TK_OK, or TK_EINVAL with a message in err (the
 * error cases are those of tk_queue_config_parse()); *cfg may then hold some
 * of the values already parsed, so pass a scratch copy. */
int tk__queue_params_parse(const tk_queue_ops *ops, const char *list, tk_queue_config *cfg,
                           char *err, size_t err_len);

#endif
