/* SPDX-License-Identifier: MIT */
/** @file
 * timerkit: status codes.
 *
 * Every fallible public function returns TK_OK (0) or one of the negative
 * codes below. The table is the single source of the enum and of the text
 * returned by tk_strerror(); add a code by adding one line. */
#ifndef TIMERKIT_STATUS_H
#define TIMERKIT_STATUS_H

#include "export.h"

TK_EXTERN_C_BEGIN

/** The status table, X(name, value, text): one line per code. It defines
 * the enum tk_status (TK_OK = 0, TK_EINVAL = -1, ...) and the texts of tk_strerror().
 * Expand it with a macro X of your own to list the codes. */
/* clang-format off */
#define TK_STATUS_MAP(X)                                                         \
    X(OK, 0, "success")                                                          \
    X(EINVAL, -1, "invalid argument")                                            \
    X(ENOMEM, -2, "out of memory")                                               \
    X(EREJECTED, -3, "task rejected (executor shut down or queue full)")         \
    X(ECANCELLED, -4, "task was cancelled")                                      \
    X(ETIMEDOUT, -5, "timed out")                                                \
    X(ETASKFAILED, -6, "task callback returned a failure status")                \
    X(ERUNNING, -7, "task was running: marked cancelled, run not stopped")       \
    X(EDONE, -8, "task already completed or cancelled")                          \
    X(ENOENT, -9, "task is not in the queue")                                    \
    X(EFULL, -10, "queue is at its pending limit")                               \
    X(ECLOSED, -11, "queue is closed")                                           \
    X(EINPROGRESS, -12, "removal accepted; the engine releases the task later")  \
    X(EDEADLK, -13, "call would deadlock (made from the executor's own thread)") \
    X(ETHREAD, -14, "thread creation failed")                                    \
    X(ESTATE, -15, "operation not allowed in the current state")                 \
    X(ENOTSUP, -16, "operation not supported")                                   \
    X(EREMOVED, -17, "task was removed from the queue before it ran")           \
    X(EINTR, -18, "wait aborted by tk_future_abort_get()")
/* clang-format on */

/** The status codes: TK_OK (0) and the negative codes of TK_STATUS_MAP,
 * TK_EINVAL (-1) to TK_EINTR (-18). */
typedef enum tk_status {
/** Internal: turns a line of TK_STATUS_MAP into an enumerator. */
#define TK__STATUS_ENUM(name, value, text) TK_##name = (value),
    TK_STATUS_MAP(TK__STATUS_ENUM)
#undef TK__STATUS_ENUM
} tk_status;

/** Returns a static, human-readable description of `status`; never NULL.
 * Unknown values return "unknown status". */
TK_API const char *tk_strerror(int status);

/** Returns the symbolic name ("TK_EINVAL", ...) of `status`; never NULL. */
TK_API const char *tk_status_name(int status);

TK_EXTERN_C_END

#endif
