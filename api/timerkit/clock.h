/* SPDX-License-Identifier: MIT */
/** @file
 * timerkit: the clock every deadline is measured on.
 *
 * All deadlines are absolute CLOCK_MONOTONIC times in nanoseconds; all delays
 * are relative nanoseconds. Never CLOCK_MONOTONIC_COARSE: it advances once
 * per scheduler tick, so deadlines read from it fire early (docs/design.md,
 * "Platform pitfalls"). */
#ifndef TIMERKIT_CLOCK_H
#define TIMERKIT_CLOCK_H

#include <stdint.h>

#include "export.h"

TK_EXTERN_C_BEGIN

#define TK_NS_PER_US INT64_C(1000)      /**< nanoseconds in a microsecond */
#define TK_NS_PER_MS INT64_C(1000000)   /**< nanoseconds in a millisecond */
#define TK_NS_PER_S INT64_C(1000000000) /**< nanoseconds in a second */

/** Returns the current CLOCK_MONOTONIC time in nanoseconds. */
TK_API int64_t tk_clock_now_ns(void);

/** Returns now + delay_ns without overflow: a sum past INT64_MAX is clamped to
 * INT64_MAX, and a negative delay yields `now` (it is due at once). */
TK_API int64_t tk_deadline_after_ns(int64_t now_ns, int64_t delay_ns);

TK_EXTERN_C_END

#endif
