/* SPDX-License-Identifier: MIT */
/* tkbench: reads an engine's wake-up counter (tk_queue_ops.wakeups) through
 * an executor. Reaches into executor-internal.h for the executor's queue:
 * benchmark-only coupling. */
#include <stdbool.h>
#include <stdint.h>

#include "executor-internal.h"

bool tkb_engine_wakeups(tk_executor *ex, uint64_t *out);

bool tkb_engine_wakeups(tk_executor *ex, uint64_t *out) {
    if (ex == NULL || ex->ops == NULL || ex->ops->wakeups == NULL)
        return false;
    *out = ex->ops->wakeups(ex->q);
    return true;
}
