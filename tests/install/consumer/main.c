/* SPDX-License-Identifier: MIT */
/* Runs one task on every engine through an installed timerkit. */
#include <stdio.h>

#include <timerkit.h>

static int set_flag(tk_run *run, void *arg) {
    (void)run;
    *(int *)arg = 1;
    return 0;
}

int main(void) {
    for (size_t i = 0; i < tk_engine_count(); i++) {
        tk_executor_options opt;
        tk_executor *ex;
        tk_future *f;
        int flag = 0;
        tk_executor_options_init(&opt);
        opt.engine = tk_engine_at(i);
        if (tk_executor_create(&opt, &ex) != TK_OK)
            return 1;
        if (tk_executor_schedule(ex, set_flag, &flag, TK_NS_PER_MS, &f) != TK_OK)
            return 1;
        int rc = tk_future_get_timeout(f, 10 * TK_NS_PER_S, NULL);
        tk_future_release(f);
        tk_executor_destroy(ex);
        if (rc != TK_OK || flag != 1) {
            fprintf(stderr, "engine %s: %s\n", tk_engine_at(i)->name, tk_strerror(rc));
            return 1;
        }
        printf("engine %s: ok\n", tk_engine_at(i)->name);
    }
    return 0;
}
