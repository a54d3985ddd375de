/* tkbench: reads the wheel adapter's wake-up counter through an executor.
 * Reaches into executor-internal.h for the executor's queue: benchmark-only
 * coupling, built only when both internal headers provide what it needs. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "executor-internal.h"
#include "wheel-internal.h"

bool tkb_wheel_wakeups(tk_executor *ex, uint64_t *out);

bool tkb_wheel_wakeups(tk_executor *ex, uint64_t *out) {
    if (ex == NULL || ex->ops == NULL || strcmp(ex->ops->name, "wheel") != 0)
        return false;
    tk__wheel_stats st;
    tk__wheel_stats_get(ex->q, &st);
    *out = st.wakeups;
    return true;
}
