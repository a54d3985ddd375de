/* SPDX-License-Identifier: MIT */
/* timerkit conformance suite: the runner (tk_conformance_main(), declared in
 * the test kit's timerkit/testkit.h), the per-engine fixtures and helpers.
 *
 * Usage: tk_conformance [--engine NAME]... [--filter GLOB] [--list]
 *        tk_conformance --list-engines       (the registered engines' names)
 * With no --engine, every registered engine runs every case; an engine
 * registered with tk_engine_register() before the call is found by name like
 * a built-in one. Test names start with the engine: "heap: never starts a task
 * before its deadline".
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
static void fixture_for(const tk_queue_ops *ops, conf_engine *e) {
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
    ct *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -1;
    t->eng = *state;
    *state = t;
    return 0;
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
    *state = (void *)t->eng;
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

int stubborn_fn(tk_run *run, void *arg) {
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

/* ---- runner --------------------------------------------------------------------------- */

typedef struct group_ref {
    const conf_case *cases;
    const size_t *count;
} group_ref;

static const group_ref groups[] = {
    {conf_cases_api, &conf_cases_api_count},
    {conf_cases_order, &conf_cases_order_count},
    {conf_cases_periodic, &conf_cases_periodic_count},
    {conf_cases_cancel, &conf_cases_cancel_count},
    {conf_cases_shutdown, &conf_cases_shutdown_count},
    {conf_cases_reject, &conf_cases_reject_count},
    {conf_cases_hooks, &conf_cases_hooks_count},
    {conf_cases_future, &conf_cases_future_count},
    {conf_cases_alloc, &conf_cases_alloc_count},
    {conf_cases_robust, &conf_cases_robust_count},
    {conf_cases_timer, &conf_cases_timer_count},
    {conf_cases_control, &conf_cases_control_count},
    {conf_cases_queue, &conf_cases_queue_count},
    {conf_cases_invoke, &conf_cases_invoke_count},
};

static int usage(const char *argv0) {
    fprintf(stderr, "usage: %s [--engine NAME]... [--filter GLOB] [--list] | --list-engines\n",
            argv0);
    return 2;
}

int tk_conformance_main(int argc, char **argv) {
    const char *names[16];
    size_t nnames = 0;
    const char *filter = NULL;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--engine") == 0 && i + 1 < argc && nnames < 16)
            names[nnames++] = argv[++i];
        else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
            filter = argv[++i];
        else if (strcmp(argv[i], "--list") == 0)
            list = true;
        else if (strcmp(argv[i], "--list-engines") == 0 && argc == 2) {
            for (size_t e = 0; e < tk_engine_count(); e++)
                printf("%s\n", tk_engine_at(e)->name);
            return 0;
        } else
            return usage(argv[0]);
    }
    if (nnames == 0) {
        for (size_t i = 0; i < tk_engine_count() && nnames < 16; i++)
            names[nnames++] = tk_engine_at(i)->name;
    }

    size_t ncases = 0;
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
        ncases += *groups[g].count;

    conf_engine *engines = calloc(nnames, sizeof(*engines));
    struct CMUnitTest *tests = calloc(nnames * ncases, sizeof(*tests));
    char **test_names = calloc(nnames * ncases, sizeof(char *));
    if (engines == NULL || tests == NULL || test_names == NULL)
        return 1;
    size_t n = 0;
    for (size_t e = 0; e < nnames; e++) {
        const tk_queue_ops *ops = tk_engine_by_name(names[e]);
        if (ops == NULL) {
            fprintf(stderr, "%s: no engine named '%s'\n", argv[0], names[e]);
            return 2;
        }
        fixture_for(ops, &engines[e]);
        for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
            for (size_t c = 0; c < *groups[g].count; c++) {
                const conf_case *cc = &groups[g].cases[c];
                size_t len = strlen(ops->name) + strlen(cc->name) + 3;
                test_names[n] = malloc(len);
                if (test_names[n] == NULL)
                    return 1;
                snprintf(test_names[n], len, "%s: %s", ops->name, cc->name);
                tests[n].name = test_names[n];
                tests[n].test_func = cc->fn;
                tests[n].setup_func = ct_setup;
                tests[n].teardown_func = ct_teardown;
                tests[n].initial_state = &engines[e];
                n++;
            }
        }
    }

    int rc = 0;
    if (list) {
        for (size_t i = 0; i < n; i++)
            printf("%s\n", tests[i].name);
    } else {
        if (filter != NULL)
            cmocka_set_test_filter(filter);
        rc = _cmocka_run_group_tests("conformance", tests, n, NULL, NULL);
    }
    for (size_t i = 0; i < n; i++)
        free(test_names[i]);
    free(test_names);
    free(tests);
    free(engines);
    return rc;
}
