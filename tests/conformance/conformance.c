/* SPDX-License-Identifier: MIT */
/* timerkit conformance suite: tk_conformance_main() (declared in the test
 * kit's timerkit/testkit.h), the per-engine fixtures and helpers.
 *
 * The suite runs through the kit's shared runner (tests/kit/suite-runner.h,
 * which describes the command line); its groups are CONF_GROUPS of
 * conformance.h. Test names start with the engine: "heap: never starts a
 * task before its deadline".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance.h"
#include "timerkit/testkit.h"

#ifndef TK_CONF_DEFAULT_ENGINE
#define TK_CONF_DEFAULT_ENGINE "heap"
#endif

const char *conf_default_engine_name(void) {
    return TK_CONF_DEFAULT_ENGINE;
}

/* ---- fixtures ------------------------------------------------------------------ */

/* The only engine-specific knowledge in the suite.
 * - Config: the engine's own defaults (tk_queue_config_init_for()), as a
 *   user who names only the engine gets them.
 * - uses_tick: from the TK_QUEUE_CAP_TICKED capability.
 * - pending_limit: from the TK_QUEUE_CAP_BOUNDED capability (max_pending). */
static void fixture_for(const tk_queue_ops *ops, void *engine) {
    conf_engine *e = engine;
    memset(e, 0, sizeof(*e));
    e->ops = ops;
    tk_queue_config_init_for(&e->config, ops);
    e->uses_tick = (ops->caps & TK_QUEUE_CAP_TICKED) != 0;
    e->pending_limit = (ops->caps & TK_QUEUE_CAP_BOUNDED) != 0;
}

/* ---- growable pointer vectors ------------------------------------------------- */

static void vec_push(ct_vec *v, void *p) {
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void **items = realloc(v->items, cap * sizeof(*items));
        assert_non_null(items);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = p;
}

static bool vec_remove(ct_vec *v, void *p) {
    for (size_t i = v->len; i-- > 0;) {
        if (v->items[i] == p) {
            v->items[i] = v->items[--v->len];
            return true;
        }
    }
    return false;
}

static int ct_setup(void **state) {
    const kit_test *ref = *state;
    ct *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -1;
    t->eng = ref->engine;
    t->c = ref->c;
    *state = t;
    return 0;
}

static void ct_run(void **state) {
    CT(state)->c->fn(state);
}

static int ct_teardown(void **state) {
    ct *t = *state;
    int rc = 0;
    for (size_t i = 0; i < t->gates.len; i++)
        gate_open(t->gates.items[i]);
    for (size_t i = 0; i < t->executors.len; i++) {
        int s = tk_executor_destroy(t->executors.items[i]);
        if (s != TK_OK) {
            fprintf(stderr, "teardown: tk_executor_destroy: %s\n", tk_status_name(s));
            rc = -1;
        }
    }
    for (size_t i = 0; i < t->futures.len; i++) {
        int s = tk_future_release(t->futures.items[i]);
        if (s != TK_OK) {
            fprintf(stderr, "teardown: tk_future_release: %s\n", tk_status_name(s));
            rc = -1;
        }
    }
    for (size_t i = 0; i < t->memory.len; i++)
        free(t->memory.items[i]);
    free(t->executors.items);
    free(t->futures.items);
    free(t->memory.items);
    free(t->gates.items);
    free(t);
    return rc;
}

/* ---- tracking --------------------------------------------------------------------- */

void ct_options(ct *t, tk_executor_options *opt, unsigned threads) {
    assert_int_equal(tk_executor_options_init(opt), TK_OK);
    opt->core_pool_size = threads;
    opt->engine = t->eng->ops;
    opt->engine_config = &t->eng->config;
}

tk_executor *ct_create(ct *t, const tk_executor_options *opt) {
    tk_executor *ex = NULL;
    int rc = tk_executor_create(opt, &ex);
    assert_int_equal(rc, TK_OK);
    assert_non_null(ex);
    vec_push(&t->executors, ex);
    return ex;
}

void ct_adopt(ct *t, tk_executor *ex) {
    assert_non_null(ex);
    vec_push(&t->executors, ex);
}

tk_executor *ct_executor(ct *t, unsigned threads) {
    tk_executor_options opt;
    ct_options(t, &opt, threads);
    return ct_create(t, &opt);
}

tk_executor *ct_executor_with_policy(ct *t, tk_rejection_policy policy, tk_reject_fn fn, void *ctx,
                                     size_t max_pending) {
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.rejection = policy;
    opt.reject = fn;
    opt.reject_ctx = ctx;
    ct_limit_pending(t, &opt, max_pending);
    return ct_create(t, &opt);
}

tk_executor *ct_executor_with_hooks(ct *t, unsigned threads, const tk_executor_hooks *hooks) {
    tk_executor_options opt;
    ct_options(t, &opt, threads);
    opt.hooks = *hooks;
    return ct_create(t, &opt);
}

void ct_destroy(ct *t, tk_executor *ex) {
    assert_true(vec_remove(&t->executors, ex));
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
}

tk_future *ct_track(ct *t, tk_future *f) {
    assert_non_null(f);
    vec_push(&t->futures, f);
    return f;
}

void ct_release(ct *t, tk_future *f) {
    assert_true(vec_remove(&t->futures, f));
    assert_int_equal(tk_future_release(f), TK_OK);
}

void ct_untrack(ct *t, tk_future *f) {
    assert_true(vec_remove(&t->futures, f));
}

void *ct_calloc(ct *t, size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    assert_non_null(p);
    vec_push(&t->memory, p);
    return p;
}

void ct_limit_pending(ct *t, tk_executor_options *opt, size_t max_pending) {
    if (max_pending == 0)
        return;
    tk_queue_config *cfg = ct_calloc(t, 1, sizeof(*cfg));
    *cfg = t->eng->config;
    cfg->max_pending = max_pending;
    opt->engine_config = cfg;
}

tk_future *ct_submit(ct *t, tk_executor *ex, tk_task_fn fn, void *arg) {
    tk_future *f = NULL;
    assert_int_equal(tk_executor_submit(ex, fn, arg, &f), TK_OK);
    return ct_track(t, f);
}

tk_future *ct_schedule(ct *t, tk_executor *ex, tk_task_fn fn, void *arg, int64_t delay_ns) {
    tk_future *f = NULL;
    assert_int_equal(tk_executor_schedule(ex, fn, arg, delay_ns, &f), TK_OK);
    return ct_track(t, f);
}

tk_future *ct_schedule_spec(ct *t, tk_executor *ex, const tk_task_spec *spec) {
    tk_future *f = NULL;
    assert_int_equal(tk_executor_schedule_spec(ex, spec, &f), TK_OK);
    return ct_track(t, f);
}

tk_future *ct_schedule_periodic(ct *t, tk_executor *ex, tk_task_kind kind, tk_task_fn fn, void *arg,
                                int64_t initial_delay_ns, int64_t period_ns) {
    tk_future *f = NULL;
    int rc =
        kind == TK_TASK_FIXED_RATE
            ? tk_executor_schedule_at_fixed_rate(ex, fn, arg, initial_delay_ns, period_ns, &f)
            : tk_executor_schedule_with_fixed_delay(ex, fn, arg, initial_delay_ns, period_ns, &f);
    assert_int_equal(rc, TK_OK);
    return ct_track(t, f);
}

/* ---- time ----------------------------------------------------------------------- */

int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * TK_NS_PER_S + ts.tv_nsec;
}

void sleep_ns(int64_t ns) {
    if (ns <= 0)
        return;
    struct timespec ts = {(time_t)(ns / TK_NS_PER_S), (long)(ns % TK_NS_PER_S)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

bool wait_ge(const atomic_int *v, int target, int64_t timeout_ns) {
    int64_t end = now_ns() + timeout_ns;
    while (atomic_load(v) < target) {
        if (now_ns() >= end)
            return false;
        sleep_ns(200 * TK_NS_PER_US);
    }
    return true;
}

bool wait_for(bool (*pred)(void *ctx), void *ctx, int64_t timeout_ns) {
    int64_t end = now_ns() + timeout_ns;
    while (!pred(ctx)) {
        if (now_ns() >= end)
            return false;
        sleep_ns(200 * TK_NS_PER_US);
    }
    return true;
}

tk_executor_stats stats_of(tk_executor *ex) {
    tk_executor_stats s;
    memset(&s, 0xa5, sizeof(s));
    assert_int_equal(tk_executor_stats_get(ex, &s), TK_OK);
    return s;
}

uint64_t wait_stat(tk_executor *ex, uint64_t (*field)(const tk_executor_stats *), uint64_t want,
                   int64_t timeout_ns) {
    int64_t end = now_ns() + timeout_ns;
    for (;;) {
        tk_executor_stats s = stats_of(ex);
        uint64_t v = field(&s);
        if (v == want || now_ns() >= end)
            return v;
        sleep_ns(200 * TK_NS_PER_US);
    }
}

uint64_t st_queue(const tk_executor_stats *s) {
    return s->queue_size;
}
uint64_t st_active(const tk_executor_stats *s) {
    return s->active_count;
}
uint64_t st_pool(const tk_executor_stats *s) {
    return s->pool_size;
}
uint64_t st_completed(const tk_executor_stats *s) {
    return s->completed_count;
}
uint64_t st_task_count(const tk_executor_stats *s) {
    return s->task_count;
}

/* ---- common tasks ------------------------------------------------------------------ */

int gate_fn(tk_run *run, void *arg) {
    gate *g = arg;
    atomic_fetch_add(&g->entered, 1);
    int64_t end = now_ns() + 10 * TK_NS_PER_S;
    while (!atomic_load(&g->open)) {
        if (tk_run_interrupted(run)) {
            atomic_fetch_add(&g->interrupted, 1);
            break;
        }
        if (now_ns() >= end)
            break;
        sleep_ns(100 * TK_NS_PER_US);
    }
    atomic_fetch_add(&g->left, 1);
    return 0;
}

int gate_ignore_interrupt_fn(tk_run *run, void *arg) {
    gate *g = arg;
    atomic_fetch_add(&g->entered, 1);
    int64_t end = now_ns() + 10 * TK_NS_PER_S;
    bool seen = false;
    while (!atomic_load(&g->open) && now_ns() < end) {
        if (!seen && tk_run_interrupted(run)) {
            seen = true;
            atomic_fetch_add(&g->saw_interrupt, 1);
        }
        sleep_ns(100 * TK_NS_PER_US);
    }
    if (!seen && tk_run_interrupted(run))
        atomic_fetch_add(&g->saw_interrupt, 1);
    atomic_fetch_add(&g->left, 1);
    return 0;
}

void gate_free(void *arg) {
    atomic_fetch_add(&((gate *)arg)->freed, 1);
}

gate *gate_new(ct *t) {
    gate *g = ct_calloc(t, 1, sizeof(gate));
    vec_push(&t->gates, g);
    return g;
}

tk_task_spec gate_spec(gate *g) {
    tk_task_spec spec = {.fn = gate_fn, .arg = g, .arg_free = gate_free, .kind = TK_TASK_ONE_SHOT};
    return spec;
}

void gate_wait_entered(gate *g, int n) {
    assert_true(wait_ge(&g->entered, n, CONF_WAIT));
}

void gate_open(gate *g) {
    atomic_store(&g->open, 1);
}

counter *counter_new(ct *t) {
    counter *c = ct_calloc(t, 1, sizeof(counter));
    c->main_thread = pthread_self();
    return c;
}

int counter_fn(tk_run *run, void *arg) {
    (void)run;
    counter *c = arg;
    int64_t now = now_ns();
    long long zero = 0;
    atomic_compare_exchange_strong(&c->first_start, &zero, (long long)now);
    atomic_store(&c->last_start, (long long)now);
    if (pthread_equal(pthread_self(), c->main_thread))
        atomic_fetch_add(&c->main_thread_runs, 1);
    atomic_fetch_add(&c->runs, 1);
    return atomic_load(&c->ret);
}

void counter_free(void *arg) {
    counter *c = arg;
    atomic_fetch_add(&c->freed, 1);
}

tk_task_spec counter_spec(counter *c, tk_task_kind kind, int64_t delay_ns, int64_t period_ns) {
    tk_task_spec spec = {.fn = counter_fn,
                         .arg = c,
                         .arg_free = counter_free,
                         .kind = kind,
                         .delay_ns = delay_ns,
                         .period_ns = period_ns};
    return spec;
}

/* ---- the suite ---------------------------------------------------------------------------- */

_Static_assert(offsetof(conf_case, name) == 0, "the runner reads a case's name first");

static const kit_group groups[] = {
#define CONF_GROUP(group) KIT_GROUP(conf_cases_##group)
    CONF_GROUPS(CONF_GROUP)
#undef CONF_GROUP
};

static const kit_suite conformance = {
    .name = "conformance",
    .groups = groups,
    .ngroups = sizeof(groups) / sizeof(groups[0]),
    .case_size = sizeof(conf_case),
    .engine_size = sizeof(conf_engine),
    .engine_init = fixture_for,
    .setup = ct_setup,
    .run = ct_run,
    .teardown = ct_teardown,
};

int tk_conformance_main(int argc, char **argv) {
    return kit_suite_main(&conformance, argc, argv);
}
