/* SPDX-License-Identifier: MIT */
/* tkbench: timerkit's executor, with any engine of the registry and the
 * parameters of the peer's spec, as an executor-level peer: what a user of
 * the library sees. remove_on_cancel is on; the pool threads' timer slack is
 * set through tk_executor_options (the run's, or the spec's os_slack=), and
 * so is every task's slack (the spec's slack=: default_slack_ns). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "timerkit.h"
#include "tkbench.h"

bool tkb_engine_wakeups(tk_executor *ex, uint64_t *out); /* tk-engine-stats.c */
int tkb_executor_open(const tkb_peer *p, const tkb_svc_opts *o, tk_queue_config *qc,
                      tk_executor **out);

typedef struct exsvc {
    tk_executor *ex;
    tk_queue_config qc;
} exsvc;

static int tramp(tk_run *run, void *arg) {
    (void)run;
    tkb_fire *f = arg;
    f->fn(f);
    return 0;
}

int tkb_executor_open(const tkb_peer *p, const tkb_svc_opts *o, tk_queue_config *qc,
                      tk_executor **out) {
    tk_executor_options opt;
    tk_executor_options_init(&opt);
    opt.core_pool_size = o->threads ? o->threads : 1;
    opt.engine = p->engine;
    *qc = p->qc; /* the spec's parameters (tk_queue_config_parse) */
    opt.engine_config = qc;
    opt.remove_on_cancel = true;
    /* the peer's own OS timer slack (os_slack=) in place of the run's */
    opt.timer_slack_ns = p->os_slack_ns > 0 ? p->os_slack_ns : o->timer_slack_ns;
    opt.default_slack_ns = p->slack_ns; /* slack=: every task's window */
    opt.thread_name_prefix = "tkb-pool";
    if (opt.engine == NULL || tk_executor_create(&opt, out) != TK_OK)
        return -1;
    return 0;
}

static int ex_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    exsvc *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    if (tkb_executor_open(p, o, &s->qc, &s->ex) != 0) {
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void ex_destroy(void *self) {
    exsvc *s = self;
    tk_executor_destroy(s->ex);
    free(s);
}

static int ex_schedule(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    exsvc *s = self;
    return tk_executor_schedule(s->ex, tramp, f, delay_ns, (tk_future **)timer) == TK_OK ? 0 : -1;
}

/* An absolute deadline through the general form (TK_TASK_AT_DEADLINE). */
static int ex_schedule_at(void *self, void *timer, tkb_fire *f, int64_t deadline_ns) {
    exsvc *s = self;
    tk_task_spec spec = {.fn = tramp,
                         .arg = f,
                         .kind = TK_TASK_ONE_SHOT,
                         .delay_ns = deadline_ns,
                         .flags = TK_TASK_AT_DEADLINE};
    return tk_executor_schedule_spec(s->ex, &spec, (tk_future **)timer) == TK_OK ? 0 : -1;
}

static int ex_cancel(void *self, void *timer) {
    (void)self;
    tk_future **fp = timer;
    if (*fp == NULL)
        return 1;
    int rc = tk_future_cancel(*fp, false);
    tk_future_release(*fp);
    *fp = NULL;
    return rc == TK_OK ? 0 : 1;
}

static bool ex_wakeups(void *self, uint64_t *out) {
    return tkb_engine_wakeups(((exsvc *)self)->ex, out);
}

const tkb_svc_ops tkb_svc_executor = {
    .timer_size = sizeof(tk_future *),
    .create = ex_create,
    .destroy = ex_destroy,
    .schedule = ex_schedule,
    .schedule_at = ex_schedule_at,
    .cancel = ex_cancel,
    .wakeups = ex_wakeups,
};
