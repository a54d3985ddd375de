/* SPDX-License-Identifier: MIT */
/* timerkit reliability: every public function with every class of bad input.
 *
 * Table-driven: each row names a call made with one bad argument (or in one
 * bad state) and the status api/ documents for it. A row's function returns
 * what the call returned; side conditions the contract adds (an out pointer
 * left untouched on failure, a task that must still run, a future that must
 * be cancelled) are checked inside the row and reported as SIDE_EFFECT.
 * Every row runs on every engine; all mismatches of a table are printed
 * before the test fails, so one run shows them all. A row made with
 * ROW_FAR gets a task queued an hour ahead on the live executor, which the
 * table machinery cancels and releases after the row. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "param-store.h"
#include "rel-common.h"

/* Returned by a row whose call gave the right status but broke a side
 * condition of the contract. */
#define SIDE_EFFECT 100001
#define NO_ALT 100002
#define WAIT_NS (5 * TK_NS_PER_S)
#define HOUR_NS (3600 * TK_NS_PER_S)

/* ---- fixtures ----------------------------------------------------------------- */

typedef struct fixture {
    const tk_queue_ops *engine;
    tk_queue_config cfg;
    tk_executor_options opt;
    tk_executor *live; /* RUNNING, one core thread */
    tk_executor *shut; /* shut down and terminated */
    atomic_long runs;  /* t_count runs */
    atomic_long frees; /* arg_free calls */
    char side[160];    /* what a SIDE_EFFECT row saw */
} fixture;

static fixture *cur; /* the fixture the rows run against (main thread only) */

static void side(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cur->side, sizeof(cur->side), fmt, ap);
    va_end(ap);
}

static int t_noop(tk_run *run, void *arg) {
    (void)run;
    (void)arg;
    return 0;
}

static int t_count(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add((atomic_long *)arg, 1);
    return 0;
}

static int t_result(tk_run *run, void *arg) {
    tk_run_set_result(run, arg);
    return 0;
}

static void count_free(void *arg) {
    (void)arg;
    atomic_fetch_add(&cur->frees, 1);
}

static void fixture_open(fixture *f, const tk_queue_ops *engine) {
    memset(f, 0, sizeof(*f));
    f->engine = engine;
    rel_options(&f->opt, &f->cfg, engine, 1, NULL);
    assert_int_equal(tk_executor_create(&f->opt, &f->live), TK_OK);
    assert_int_equal(tk_executor_create(&f->opt, &f->shut), TK_OK);
    assert_int_equal(tk_executor_shutdown(f->shut), TK_OK);
    assert_int_equal(tk_executor_await_termination(f->shut, WAIT_NS), TK_OK);
    cur = f;
}

static void fixture_close(fixture *f) {
    assert_int_equal(tk_executor_destroy(f->live), TK_OK);
    assert_int_equal(tk_executor_destroy(f->shut), TK_OK);
    cur = NULL;
}

/* ---- the table machinery -------------------------------------------------------- */

typedef int (*row_fn)(fixture *f);
/* A row that needs a queued task: `far` is due in an hour on f->live. */
typedef int (*far_row_fn)(fixture *f, tk_future *far);

typedef struct row {
    const char *name;
    row_fn run;         /* the row, or NULL for a far_row */
    far_row_fn run_far; /* the row, or NULL for a plain one */
    int want;
    int alt; /* a second acceptable status, NO_ALT if none */
} row;

#define ROW(fn, want)                                                                              \
    { #fn, fn, NULL, want, NO_ALT }
#define ROW2(fn, want, alt)                                                                        \
    { #fn, fn, NULL, want, alt }
#define ROW_FAR(fn, want)                                                                          \
    { #fn, NULL, fn, want, NO_ALT }

/* One table of rows, run by test_rows(). */
typedef struct table {
    const row *rows;
    size_t n;
} table;

/* The cmocka test `name` that runs the table `rows` on every engine. */
#define TABLE_TEST(name, rows)                                                                     \
    {                                                                                              \
        name, test_rows, NULL, NULL, &(table) {                                                    \
            rows, sizeof(rows) / sizeof(rows[0])                                                   \
        }                                                                                          \
    }

/* Runs one row; a far row gets its task first, which is cancelled and
 * released after it. */
static int run_row(fixture *f, const row *r) {
    if (r->run != NULL)
        return r->run(f);
    tk_future *far = NULL;
    int rc = tk_executor_schedule(f->live, t_noop, NULL, HOUR_NS, &far);
    if (rc != TK_OK) {
        side("the far task: %s", tk_status_name(rc));
        return SIDE_EFFECT;
    }
    rc = r->run_far(f, far);
    tk_future_cancel(far, false);
    tk_future_release(far);
    return rc;
}

/* Runs every row of the table on every engine, reports each mismatch and
 * asserts that there was none. */
static void test_rows(void **state) {
    const table *t = *state;
    int bad = 0, total = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        fixture f;
        fixture_open(&f, tk_engine_at(e));
        for (size_t i = 0; i < t->n; i++) {
            const row *r = &t->rows[i];
            f.side[0] = '\0';
            int got = run_row(&f, r);
            total++;
            if (got != r->want && got != r->alt) {
                bad++;
                char alt[48] = "";
                if (r->alt != NO_ALT)
                    snprintf(alt, sizeof(alt), " or %s", tk_status_name(r->alt));
                print_error("  [%s] %-44s want %s%s, got %s %s\n", f.engine->name, r->name,
                            tk_status_name(r->want), alt,
                            got == SIDE_EFFECT ? "SIDE_EFFECT:" : tk_status_name(got), f.side);
            }
        }
        fixture_close(&f);
    }
    print_message("  %d rows run, %d mismatches\n", total, bad);
    assert_int_equal(bad, 0);
}

static bool future_untouched(tk_future *out, tk_future *sentinel) {
    if (out != sentinel) {
        side("*out was written on failure");
        return false;
    }
    return true;
}

#define SENTINEL ((tk_future *)(uintptr_t)0x5e17e1)

/* Runs a scheduling call that must fail and checks *out is untouched. */
#define FAILS_UNTOUCHED(call)                                                                      \
    do {                                                                                           \
        tk_future *out = SENTINEL;                                                                 \
        int rc_ = (call);                                                                          \
        if (rc_ != TK_OK && !future_untouched(out, SENTINEL))                                      \
            return SIDE_EFFECT;                                                                    \
        if (rc_ == TK_OK && out != SENTINEL && out != NULL)                                        \
            tk_future_release(out);                                                                \
        return rc_;                                                                                \
    } while (0)

/* ---- status, clock, allocator, registry (no executor needed) ----------------------------- */

static void test_status_clock_registry(void **state) {
    (void)state;
    /* Every code has its own text and name; unknown codes get a fallback. */
    int codes[] = {
#define X(name, value, text) TK_##name,
        TK_STATUS_MAP(X)
#undef X
    };
    size_t ncodes = sizeof(codes) / sizeof(codes[0]);
    for (size_t i = 0; i < ncodes; i++) {
        assert_non_null(tk_strerror(codes[i]));
        assert_non_null(tk_status_name(codes[i]));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(tk_status_name(codes[i]), tk_status_name(codes[j]));
    }
    int unknown[] = {1, -19, 12345, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        assert_string_equal(tk_strerror(unknown[i]), "unknown status");
        assert_non_null(tk_status_name(unknown[i]));
    }

    /* Deadlines never overflow; negative delays are due now. */
    int64_t now = tk_clock_now_ns();
    assert_true(now > 0);
    assert_int_equal(tk_deadline_after_ns(now, -1), now);
    assert_int_equal(tk_deadline_after_ns(now, INT64_MIN), now);
    assert_int_equal(tk_deadline_after_ns(now, 0), now);
    assert_int_equal(tk_deadline_after_ns(now, INT64_MAX), INT64_MAX);
    assert_int_equal(tk_deadline_after_ns(INT64_MAX - 5, 10), INT64_MAX);
    assert_int_equal(tk_deadline_after_ns(INT64_MAX, INT64_MAX), INT64_MAX);

    assert_non_null(tk_allocator_default());
    assert_non_null(tk_allocator_default()->alloc);

    /* The engine registry. */
    assert_int_equal(tk_queue_config_init(NULL), TK_EINVAL);
    assert_null(tk_engine_by_name(NULL));
    assert_null(tk_engine_by_name(""));
    assert_null(tk_engine_by_name("no-such-engine"));
    assert_true(tk_engine_count() >= 2);
    assert_null(tk_engine_at(tk_engine_count()));
    assert_null(tk_engine_at(SIZE_MAX));
    assert_non_null(tk_engine_default());
    assert_ptr_equal(tk_engine_by_name("heap"), tk_engine_heap());
    assert_ptr_equal(tk_engine_by_name("wheel"), tk_engine_wheel());

    /* Pool state names. */
    for (int s = TK_POOL_RUNNING; s <= TK_POOL_TERMINATED; s++) {
        assert_non_null(tk_pool_state_name((tk_pool_state)s));
        for (int t = TK_POOL_RUNNING; t < s; t++)
            assert_string_not_equal(tk_pool_state_name((tk_pool_state)s),
                                    tk_pool_state_name((tk_pool_state)t));
    }
    assert_int_equal(tk_executor_state(NULL), TK_POOL_TERMINATED);
}

/* ---- queue ops: every engine's ops table with bad input --------------------------------- */

static atomic_long released;

static void on_release(void *ctx, tk_node *n) {
    (void)ctx;
    (void)n;
    atomic_fetch_add(&released, 1);
}

/* Mismatches found by QCHECK (main thread only). */
static int queue_bad;

/* Checks that `expr` gives `want`; a mismatch is printed and counted. */
#define QCHECK(expr, want)                                                                         \
    do {                                                                                           \
        int got_ = (expr);                                                                         \
        if (got_ != (want)) {                                                                      \
            queue_bad++;                                                                           \
            print_error("  [%s] %s: want %s, got %s\n", ops->name, #expr, tk_status_name(want),    \
                        tk_status_name(got_));                                                     \
        }                                                                                          \
    } while (0)

/* create() refuses NULL outputs and engines, every parameter of the
 * engine's table outside its range (straight in the config), and a config
 * of another engine. */
static void queue_create_refuses(const tk_queue_ops *ops) {
    tk_queue_config cfg;
    tk_queue *q = NULL;
    QCHECK(ops->create(ops, NULL, on_release, NULL, NULL), TK_EINVAL);
    QCHECK(tk_queue_create(ops, NULL, on_release, NULL, NULL), TK_EINVAL);
    QCHECK(tk_queue_create(NULL, NULL, on_release, NULL, &q), TK_EINVAL);
    for (size_t i = 0; i < ops->param_count; i++) {
        uint64_t badv[3];
        int nbad = tkt_param_bad_values(&ops->params[i], badv);
        for (int k = 0; k < nbad; k++) {
            tk_queue_config_init_for(&cfg, ops);
            tkt_param_store(&cfg, &ops->params[i], badv[k]);
            int rc = tk_queue_create(ops, &cfg, on_release, NULL, &q);
            if (rc != TK_EINVAL)
                print_error("  [%s] %s=%llu\n", ops->name, ops->params[i].key,
                            (unsigned long long)badv[k]);
            QCHECK(rc, TK_EINVAL);
            if (rc == TK_OK)
                ops->destroy(q);
        }
    }
    for (size_t o = 0; o < tk_engine_count(); o++) {
        if (tk_engine_at(o) == ops)
            continue;
        tk_queue_config_init_for(&cfg, tk_engine_at(o));
        int rc = tk_queue_create(ops, &cfg, on_release, NULL, &q);
        QCHECK(rc, TK_EINVAL);
        if (rc == TK_OK)
            ops->destroy(q);
    }
}

/* An empty live queue with hostile nodes: NULL, never offered, due at the
 * end of time, long overdue. It is empty again at the end. */
static void queue_hostile_nodes(const tk_queue_ops *ops, tk_queue *q) {
    tk_node never, far, past;
    memset(&never, 0, sizeof(never));
    memset(&far, 0, sizeof(far));
    memset(&past, 0, sizeof(past));
    tk_node *out = NULL;
    int64_t dl = 0;
    uint64_t seq = 0;
    QCHECK(ops->offer(q, NULL), TK_EINVAL);
    QCHECK(ops->offer(NULL, &far), TK_EINVAL);
    QCHECK(ops->remove(q, &never), TK_ENOENT);
    QCHECK(ops->peek(q, &dl, &seq), TK_ENOENT);
    QCHECK(ops->remove_first(q, &out), TK_ENOENT);
    QCHECK(ops->poll(q, 0, &out), TK_ETIMEDOUT);
    assert_null(ops->drain(q));
    assert_int_equal(ops->size(q), 0);

    far.deadline_ns = INT64_MAX; /* the end of time: must not overflow */
    far.seq = 1;
    QCHECK(ops->offer(q, &far), TK_OK);
    QCHECK(ops->poll(q, 2 * TK_NS_PER_MS, &out), TK_ETIMEDOUT);
    QCHECK(ops->peek(q, &dl, &seq), TK_OK);
    assert_int_equal(dl, INT64_MAX);
    QCHECK(ops->check(q), TK_OK);
    int rc = ops->remove(q, &far);
    if (rc != TK_EINPROGRESS)
        QCHECK(rc, TK_OK);
    QCHECK(ops->remove(q, &far), TK_ENOENT);

    past.deadline_ns = INT64_MIN / 2; /* long overdue: due at once */
    past.seq = 2;
    QCHECK(ops->offer(q, &past), TK_OK);
    out = NULL;
    QCHECK(ops->poll(q, WAIT_NS, &out), TK_OK);
    if (out != &past) {
        queue_bad++;
        print_error("  [%s] a long-overdue node was not handed out\n", ops->name);
    }
    QCHECK(ops->remove(q, &past), TK_ENOENT); /* already handed out */
    assert_int_equal(ops->size(q), 0);
}

/* Closed NOW: offers fail, take/poll report closed, drain empties; then q
 * is destroyed. Uses (and leaves drained) the caller's nodes a and b. */
static void queue_closed_now(const tk_queue_ops *ops, tk_queue *q, tk_node *a, tk_node *b) {
    tk_node *out = NULL;
    a->deadline_ns = tk_clock_now_ns() + TK_NS_PER_S;
    a->seq = 3;
    QCHECK(ops->offer(q, a), TK_OK);
    ops->close(q, TK_QUEUE_CLOSE_NOW);
    b->deadline_ns = tk_clock_now_ns();
    b->seq = 4;
    QCHECK(ops->offer(q, b), TK_ECLOSED);
    QCHECK(ops->take(q, &out), TK_ECLOSED);
    QCHECK(ops->poll(q, TK_NS_PER_MS, &out), TK_ECLOSED);
    ops->close(q, TK_QUEUE_CLOSE_WHEN_EMPTY); /* the reverse is ignored */
    QCHECK(ops->offer(q, b), TK_ECLOSED);
    tk_node *list = ops->drain(q);
    if (list != a || tk_node_next_detached(list) != NULL) {
        queue_bad++;
        print_error("  [%s] drain after close did not return exactly the queued node\n", ops->name);
    }
    QCHECK(ops->check(q), TK_OK);
    ops->destroy(q);
    if (atomic_load(&released) > 1) {
        queue_bad++;
        print_error("  [%s] release called %ld times for one EINPROGRESS node\n", ops->name,
                    atomic_load(&released));
    }
}

/* A pending limit of one: the second offer is refused where the engine is
 * bounded, and the caller keeps the node. */
static void queue_pending_limit(const tk_queue_ops *ops, tk_node *a, tk_node *b) {
    bool bounded = (ops->caps & TK_QUEUE_CAP_BOUNDED) != 0;
    tk_queue_config cfg;
    tk_queue *q = NULL;
    tk_queue_config_init_for(&cfg, ops);
    cfg.max_pending = 1;
    QCHECK(tk_queue_create(ops, &cfg, on_release, NULL, &q), TK_OK);
    a->deadline_ns = b->deadline_ns = INT64_MAX;
    a->seq = 5;
    b->seq = 6;
    QCHECK(ops->offer(q, a), TK_OK);
    QCHECK(ops->offer(q, b), bounded ? TK_EFULL : TK_OK);
    tk_node *list = ops->drain(q);
    size_t n = 0;
    for (; list != NULL; list = tk_node_next_detached(list))
        n++;
    assert_int_equal(n, bounded ? 1 : 2);
    ops->destroy(q);
}

static void test_queue_ops_bad_input(void **state) {
    (void)state;
    queue_bad = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *ops = tk_engine_at(e);
        assert_non_null(ops->name);
        assert_non_null(ops->create);
        queue_create_refuses(ops);
        /* A live queue; a NULL config means the defaults. */
        atomic_store(&released, 0);
        tk_queue *q = NULL;
        QCHECK(tk_queue_create(ops, NULL, on_release, NULL, &q), TK_OK);
        if (q == NULL)
            continue;
        tk_node a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        queue_hostile_nodes(ops, q);
        queue_closed_now(ops, q, &a, &b);
        queue_pending_limit(ops, &a, &b);
    }
    assert_int_equal(queue_bad, 0);
}
#undef QCHECK

/* ---- executor rows ----------------------------------------------------------------------- */

static int r_options_init_null(fixture *f) {
    (void)f;
    return tk_executor_options_init(NULL);
}

static int r_create_null_out(fixture *f) {
    return tk_executor_create(&f->opt, NULL);
}

static int r_create_null_all(fixture *f) {
    (void)f;
    return tk_executor_create(NULL, NULL);
}

static int create_with(fixture *f, tk_executor_options *o) {
    tk_executor *ex = (tk_executor *)SENTINEL;
    int rc = tk_executor_create(o, &ex);
    if (rc == TK_OK) {
        tk_executor_destroy(ex);
    } else if (ex != (tk_executor *)SENTINEL) {
        side("*out written on failure");
        return SIDE_EFFECT;
    }
    (void)f;
    return rc;
}

static int r_create_pool_max_plus_1(fixture *f) {
    tk_executor_options o = f->opt;
    o.core_pool_size = TK_EXECUTOR_MAX_THREADS + 1;
    return create_with(f, &o);
}

static int r_create_pool_uint_max(fixture *f) {
    tk_executor_options o = f->opt;
    o.core_pool_size = UINT_MAX;
    return create_with(f, &o);
}

static int r_create_custom_without_handler(fixture *f) {
    tk_executor_options o = f->opt;
    o.rejection = TK_REJECT_CUSTOM;
    o.reject = NULL;
    return create_with(f, &o);
}

static int r_create_bad_policy(fixture *f) {
    tk_executor_options o = f->opt;
    o.rejection = (tk_rejection_policy)42;
    return create_with(f, &o);
}

static int r_create_default_slack_negative(fixture *f) {
    tk_executor_options o = f->opt;
    o.default_slack_ns = -1;
    return create_with(f, &o);
}

static int r_create_default_slack_int64_min(fixture *f) {
    tk_executor_options o = f->opt;
    o.default_slack_ns = INT64_MIN;
    return create_with(f, &o);
}

/* Creates an executor with each value of each parameter of the engine's
 * table that lies outside the parameter's range, written straight into the
 * config. Returns TK_EINVAL if every one is refused, else the first other
 * status (side effect: names the parameter). */
static int r_create_param_out_of_range(fixture *f) {
    const tk_queue_ops *ops = f->engine;
    int tried = 0;
    for (size_t i = 0; i < ops->param_count; i++) {
        uint64_t badv[3];
        int nbad = tkt_param_bad_values(&ops->params[i], badv);
        for (int k = 0; k < nbad; k++) {
            tk_executor_options o = f->opt;
            tk_queue_config c = f->cfg;
            tkt_param_store(&c, &ops->params[i], badv[k]);
            o.engine_config = &c;
            int rc = create_with(f, &o);
            tried++;
            if (rc != TK_EINVAL) {
                side("%s=%llu: %s", ops->params[i].key, (unsigned long long)badv[k],
                     tk_status_name(rc));
                return rc == TK_OK ? SIDE_EFFECT : rc;
            }
        }
    }
    return tried > 0 ? TK_EINVAL : TK_OK;
}

/* A config that holds another engine's parameters. */
static int r_create_other_engines_config(fixture *f) {
    for (size_t e = 0; e < tk_engine_count(); e++) {
        if (tk_engine_at(e) == f->engine)
            continue;
        tk_executor_options o = f->opt;
        tk_queue_config c;
        tk_queue_config_init_for(&c, tk_engine_at(e));
        o.engine = f->engine;
        o.engine_config = &c;
        int rc = create_with(f, &o);
        if (rc != TK_EINVAL)
            return rc == TK_OK ? SIDE_EFFECT : rc;
    }
    return TK_EINVAL;
}

static int r_create_pool_zero_still_runs(fixture *f) {
    tk_executor_options o = f->opt;
    o.core_pool_size = 0;
    tk_executor *ex = NULL;
    int rc = tk_executor_create(&o, &ex);
    if (rc != TK_OK)
        return rc;
    tk_future *fu = NULL;
    void *res = NULL;
    rc = tk_executor_submit(ex, t_result, (void *)f, &fu);
    if (rc == TK_OK) {
        rc = tk_future_get_timeout(fu, WAIT_NS, &res);
        tk_future_release(fu);
        if (rc == TK_OK && res != (void *)f) {
            side("result %p, want %p", res, (void *)f);
            rc = SIDE_EFFECT;
        }
    }
    tk_executor_destroy(ex);
    return rc;
}

static int r_destroy_null(fixture *f) {
    (void)f;
    return tk_executor_destroy(NULL);
}

static int r_execute_null_ex(fixture *f) {
    (void)f;
    return tk_executor_execute(NULL, t_noop, NULL);
}

static int r_execute_null_fn(fixture *f) {
    return tk_executor_execute(f->live, NULL, NULL);
}

static int r_submit_null_out(fixture *f) {
    return tk_executor_submit(f->live, t_noop, NULL, NULL);
}

static int r_submit_null_fn(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_submit(f->live, NULL, NULL, &out));
}

static int r_submit_null_ex(fixture *f) {
    (void)f;
    FAILS_UNTOUCHED(tk_executor_submit(NULL, t_noop, NULL, &out));
}

static int r_schedule_null_ex(fixture *f) {
    (void)f;
    FAILS_UNTOUCHED(tk_executor_schedule(NULL, t_noop, NULL, 0, &out));
}

static int r_schedule_null_fn(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule(f->live, NULL, NULL, 0, &out));
}

/* A delay that must run at once (negative, as in Java). */
static int run_now_with_delay_on(tk_executor *ex, fixture *f, int64_t delay) {
    tk_future *fu = NULL;
    int64_t t0 = tk_clock_now_ns();
    int rc = tk_executor_schedule(ex, t_result, (void *)f, delay, &fu);
    if (rc != TK_OK)
        return rc;
    void *res = NULL;
    rc = tk_future_get_timeout(fu, WAIT_NS, &res);
    tk_future_release(fu);
    if (rc == TK_OK && (res != (void *)f || tk_clock_now_ns() - t0 > 2 * TK_NS_PER_S)) {
        side("ran late or with the wrong result");
        return SIDE_EFFECT;
    }
    return rc;
}

static int run_now_with_delay(fixture *f, int64_t delay) {
    return run_now_with_delay_on(f->live, f, delay);
}

static int r_schedule_delay_minus_1_runs_now(fixture *f) {
    return run_now_with_delay(f, -1);
}

static int r_schedule_delay_int64_min_runs_now(fixture *f) {
    return run_now_with_delay(f, INT64_MIN);
}

/* A delay that overflows now + delay: clamped, pending, cancellable. */
static int far_then_cancel(fixture *f, int which) {
    tk_future *fu = NULL;
    int rc;
    if (which == 0)
        rc = tk_executor_schedule(f->live, t_noop, NULL, INT64_MAX, &fu);
    else if (which == 1)
        rc = tk_executor_schedule_at_fixed_rate(f->live, t_noop, NULL, INT64_MAX, INT64_MAX, &fu);
    else
        rc = tk_executor_schedule_with_fixed_delay(f->live, t_noop, NULL, INT64_MAX - 1, INT64_MAX,
                                                   &fu);
    if (rc != TK_OK)
        return rc;
    int64_t rem = tk_future_remaining_ns(fu);
    bool done = tk_future_is_done(fu);
    rc = tk_future_cancel(fu, false);
    bool cancelled = tk_future_is_cancelled(fu);
    tk_future_release(fu);
    if (done || rem < INT64_MAX / 4 || !cancelled) {
        side("done=%d remaining=%lld cancelled=%d", done, (long long)rem, cancelled);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_schedule_delay_int64_max_clamped(fixture *f) {
    return far_then_cancel(f, 0);
}

static int r_fixed_rate_int64_max_clamped(fixture *f) {
    return far_then_cancel(f, 1);
}

static int r_fixed_delay_int64_max_clamped(fixture *f) {
    return far_then_cancel(f, 2);
}

static int r_fixed_rate_period_0(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_at_fixed_rate(f->live, t_noop, NULL, 0, 0, &out));
}

static int r_fixed_rate_period_minus_1(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_at_fixed_rate(f->live, t_noop, NULL, 0, -1, &out));
}

static int r_fixed_rate_period_int64_min(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_at_fixed_rate(f->live, t_noop, NULL, 0, INT64_MIN, &out));
}

static int r_fixed_rate_null_fn(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_at_fixed_rate(f->live, NULL, NULL, 0, 1000, &out));
}

static int r_fixed_rate_null_ex(fixture *f) {
    (void)f;
    FAILS_UNTOUCHED(tk_executor_schedule_at_fixed_rate(NULL, t_noop, NULL, 0, 1000, &out));
}

static int r_fixed_delay_period_0(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_with_fixed_delay(f->live, t_noop, NULL, 0, 0, &out));
}

static int r_fixed_delay_period_minus_1(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_with_fixed_delay(f->live, t_noop, NULL, 0, -1, &out));
}

static int r_fixed_delay_null_fn(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_with_fixed_delay(f->live, NULL, NULL, 0, 1000, &out));
}

/* A 1 ns fixed-rate period with a negative initial delay: legal, runs back
 * to back (catching up), and cancels cleanly. */
static atomic_long rate_runs;

static int r_fixed_rate_1ns_period_negative_delay(fixture *f) {
    atomic_long *runsp = &rate_runs;
    atomic_store(runsp, 0);
    tk_future *fu = NULL;
    int rc = tk_executor_schedule_at_fixed_rate(f->live, t_count, runsp, -TK_NS_PER_S, 1, &fu);
    if (rc != TK_OK)
        return rc;
    bool ran = rel_wait_at_least(runsp, 3, WAIT_NS);
    rc = tk_future_cancel(fu, false);
    void *res;
    int grc = tk_future_get_timeout(fu, WAIT_NS, &res);
    tk_future_release(fu);
    if (!ran || grc != TK_ECANCELLED) {
        side("ran=%d get=%s", ran, tk_status_name(grc));
        return SIDE_EFFECT;
    }
    return rc == TK_ERUNNING ? TK_OK : rc;
}

static tk_task_spec spec_ok(void) {
    tk_task_spec s;
    memset(&s, 0, sizeof(s));
    s.fn = t_noop;
    s.kind = TK_TASK_ONE_SHOT;
    return s;
}

static int r_spec_null(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_spec(f->live, NULL, &out));
}

static int r_spec_null_fn(fixture *f) {
    tk_task_spec s = spec_ok();
    s.fn = NULL;
    FAILS_UNTOUCHED(tk_executor_schedule_spec(f->live, &s, &out));
}

static int r_spec_bad_kind(fixture *f) {
    tk_task_spec s = spec_ok();
    s.kind = (tk_task_kind)3;
    FAILS_UNTOUCHED(tk_executor_schedule_spec(f->live, &s, &out));
}

static int r_spec_negative_kind(fixture *f) {
    tk_task_spec s = spec_ok();
    s.kind = (tk_task_kind)-1;
    FAILS_UNTOUCHED(tk_executor_schedule_spec(f->live, &s, &out));
}

static int r_spec_unknown_flags(fixture *f) {
    tk_task_spec s = spec_ok();
    s.flags = 0x100u;
    FAILS_UNTOUCHED(tk_executor_schedule_spec(f->live, &s, &out));
}

static int r_spec_slack_negative(fixture *f) {
    tk_task_spec s = spec_ok();
    s.flags = TK_TASK_SLACK;
    s.slack_ns = -1;
    FAILS_UNTOUCHED(tk_executor_schedule_spec(f->live, &s, &out));
}

static int r_spec_periodic_slack_int64_min(fixture *f) {
    tk_task_spec s = spec_ok();
    s.kind = TK_TASK_FIXED_RATE;
    s.period_ns = TK_NS_PER_S;
    s.flags = TK_TASK_SLACK | TK_TASK_SKIP_MISSED;
    s.slack_ns = INT64_MIN;
    FAILS_UNTOUCHED(tk_executor_schedule_spec(f->live, &s, &out));
}

/* Without TK_TASK_SLACK the spec's slack_ns is not read: a negative one is
 * no error, and the task runs. */
static int r_spec_slack_without_flag_ignored(fixture *f) {
    tk_task_spec s = spec_ok();
    s.slack_ns = -1;
    tk_future *fu = NULL;
    int rc = tk_executor_schedule_spec(f->live, &s, &fu);
    if (rc != TK_OK)
        return rc;
    rc = tk_future_get_timeout(fu, WAIT_NS, NULL);
    tk_future_release(fu);
    if (rc != TK_OK) {
        side("the task did not run: %s", tk_status_name(rc));
        return SIDE_EFFECT;
    }
    return TK_OK;
}

/* A huge slack is a valid one: the window's end saturates, and the task
 * is still never early and runs (here: due an hour ahead, cancelled). */
static int r_spec_slack_int64_max_ok(fixture *f) {
    tk_task_spec s = spec_ok();
    s.delay_ns = HOUR_NS;
    s.flags = TK_TASK_SLACK;
    s.slack_ns = INT64_MAX;
    tk_future *fu = NULL;
    int rc = tk_executor_schedule_spec(f->live, &s, &fu);
    if (rc != TK_OK)
        return rc;
    rc = tk_future_cancel(fu, false);
    tk_future_release(fu);
    return rc;
}

/* ---- embedded timers' slack ---- */

static void tm_noop(tk_timer *timer) {
    (void)timer;
}

static int r_timer_set_slack_null(fixture *f) {
    (void)f;
    return tk_timer_set_slack(NULL, 0);
}

static int r_timer_set_slack_never_initialised(fixture *f) {
    (void)f;
    tk_timer tm;
    memset(&tm, 0, sizeof(tm));
    return tk_timer_set_slack(&tm, TK_NS_PER_MS);
}

/* A negative slack is refused and the timer's slack stays as it was. */
static int r_timer_set_slack_negative(fixture *f) {
    (void)f;
    tk_timer tm;
    tk_timer_init(&tm, tm_noop);
    tk_timer_set_slack(&tm, 5);
    int rc = tk_timer_set_slack(&tm, -1);
    if (rc != TK_OK && tk_timer_slack_ns(&tm) != 5) {
        side("the slack changed to %lld", (long long)tk_timer_slack_ns(&tm));
        return SIDE_EFFECT;
    }
    return rc;
}

/* A pending timer's slack cannot change (it is the engine's to read). */
static int r_timer_set_slack_pending(fixture *f) {
    tk_timer tm;
    tk_timer_init(&tm, tm_noop);
    int rc = tk_timer_start(f->live, &tm, HOUR_NS);
    if (rc != TK_OK) {
        side("start: %s", tk_status_name(rc));
        return SIDE_EFFECT;
    }
    rc = tk_timer_set_slack(&tm, TK_NS_PER_MS);
    int64_t kept = tk_timer_slack_ns(&tm);
    int stop = tk_timer_stop(f->live, &tm);
    while (!tk_timer_is_idle(&tm)) /* a worker may still hold it: tk_timer */
        rel_sleep_ns(TK_NS_PER_MS);
    if (stop != TK_OK || (rc != TK_OK && kept != 0)) {
        side("stop %s, slack %lld", tk_status_name(stop), (long long)kept);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_timer_slack_null_is_0(fixture *f) {
    (void)f;
    return tk_timer_slack_ns(NULL) == 0 ? TK_OK : SIDE_EFFECT;
}

static int r_spec_periodic_zero_period(fixture *f) {
    tk_task_spec s = spec_ok();
    s.kind = TK_TASK_FIXED_DELAY;
    s.period_ns = 0;
    FAILS_UNTOUCHED(tk_executor_schedule_spec(f->live, &s, &out));
}

static int r_spec_null_ex(fixture *f) {
    (void)f;
    tk_task_spec s = spec_ok();
    FAILS_UNTOUCHED(tk_executor_schedule_spec(NULL, &s, &out));
}

/* A failed call does not take ownership of the argument: arg_free is not run
 * for a task that was never accepted because the call itself was invalid. */
static int r_spec_invalid_keeps_arg(fixture *f) {
    tk_task_spec s = spec_ok();
    s.kind = TK_TASK_FIXED_RATE;
    s.period_ns = -5;
    s.arg_free = count_free;
    long before = atomic_load(&f->frees);
    tk_future *out = SENTINEL;
    int rc = tk_executor_schedule_spec(f->live, &s, &out);
    if (atomic_load(&f->frees) != before) {
        side("arg_free ran for a call that failed with %s", tk_status_name(rc));
        return SIDE_EFFECT;
    }
    if (rc != TK_OK && !future_untouched(out, SENTINEL))
        return SIDE_EFFECT;
    return rc;
}

/* ---- futures ---- */

static int r_future_cancel_null(fixture *f) {
    (void)f;
    return tk_future_cancel(NULL, true);
}

static int r_future_get_null(fixture *f) {
    (void)f;
    return tk_future_get(NULL, NULL);
}

static int r_future_get_timeout_null(fixture *f) {
    (void)f;
    return tk_future_get_timeout(NULL, 0, NULL);
}

static int r_future_release_null(fixture *f) {
    (void)f;
    return tk_future_release(NULL);
}

static int r_future_remaining_null_is_0(fixture *f) {
    (void)f;
    return tk_future_remaining_ns(NULL) == 0 ? TK_OK : SIDE_EFFECT;
}

static int r_future_get_timeout_zero_pending(fixture *f, tk_future *fu) {
    (void)f;
    int rc = tk_future_get_timeout(fu, 0, NULL);
    int rc2 = tk_future_get_timeout(fu, TK_NS_PER_MS, NULL);
    if (rc2 != rc) {
        side("1 ms timeout gave %s", tk_status_name(rc2));
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_future_double_release_live_task(fixture *f) {
    tk_future *fu = NULL;
    int rc = tk_executor_schedule(f->live, t_noop, NULL, HOUR_NS, &fu);
    if (rc != TK_OK)
        return rc;
    rc = tk_future_release(fu);
    if (rc != TK_OK) {
        side("first release gave %s", tk_status_name(rc));
        return SIDE_EFFECT;
    }
    return tk_future_release(fu); /* the task is still queued for an hour */
}

static int r_future_cancel_twice(fixture *f, tk_future *fu) {
    (void)f;
    int rc = tk_future_cancel(fu, true);
    int rc2 = tk_future_cancel(fu, true);
    int grc = tk_future_get(fu, NULL);
    if (rc != TK_OK || grc != TK_ECANCELLED) {
        side("first cancel %s, get %s", tk_status_name(rc), tk_status_name(grc));
        return SIDE_EFFECT;
    }
    return rc2;
}

static int r_future_cancel_after_completion(fixture *f) {
    tk_future *fu = NULL;
    int rc = tk_executor_submit(f->live, t_noop, NULL, &fu);
    if (rc != TK_OK)
        return rc;
    rc = tk_future_get_timeout(fu, WAIT_NS, NULL);
    int crc = tk_future_cancel(fu, true);
    bool cancelled = tk_future_is_cancelled(fu);
    tk_future_release(fu);
    if (rc != TK_OK || cancelled) {
        side("get %s, cancelled=%d", tk_status_name(rc), cancelled);
        return SIDE_EFFECT;
    }
    return crc;
}

/* ---- pool control with NULL ---- */

static int r_shutdown_null(fixture *f) {
    (void)f;
    return tk_executor_shutdown(NULL);
}

static int r_shutdown_now_null(fixture *f) {
    (void)f;
    return (int)tk_executor_shutdown_now(NULL, NULL, NULL);
}

static int r_await_null(fixture *f) {
    (void)f;
    return tk_executor_await_termination(NULL, 0);
}

static int r_purge_null(fixture *f) {
    (void)f;
    return (int)tk_executor_purge(NULL);
}

static int r_prestart_null(fixture *f) {
    (void)f;
    return tk_executor_prestart_core_thread(NULL);
}

static int r_prestart_all_null(fixture *f) {
    (void)f;
    return tk_executor_prestart_all_core_threads(NULL);
}

static int r_set_remove_on_cancel_null(fixture *f) {
    (void)f;
    return tk_executor_set_remove_on_cancel(NULL, true);
}

static int r_set_continue_periodic_null(fixture *f) {
    (void)f;
    return tk_executor_set_continue_periodic_after_shutdown(NULL, true);
}

static int r_set_execute_delayed_null(fixture *f) {
    (void)f;
    return tk_executor_set_execute_delayed_after_shutdown(NULL, true);
}

/* ---- run-time control --------------------------------------------------------- */

static int r_create_keep_alive_negative(fixture *f) {
    tk_executor_options o = f->opt;
    o.keep_alive_ns = -1;
    return create_with(f, &o);
}

static int r_create_core_timeout_zero_keep_alive(fixture *f) {
    tk_executor_options o = f->opt;
    o.keep_alive_ns = 0;
    o.allow_core_thread_timeout = true;
    return create_with(f, &o);
}

static int r_set_core_null(fixture *f) {
    (void)f;
    return tk_executor_set_core_pool_size(NULL, 1);
}

/* Refused, and the size unchanged. */
static int expect_core_refused(fixture *f, unsigned n) {
    unsigned before = tk_executor_get_core_pool_size(f->live);
    int rc = tk_executor_set_core_pool_size(f->live, n);
    if (tk_executor_get_core_pool_size(f->live) != before) {
        side("core size changed to %u", tk_executor_get_core_pool_size(f->live));
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_set_core_max_plus_1(fixture *f) {
    return expect_core_refused(f, TK_EXECUTOR_MAX_THREADS + 1);
}

static int r_set_core_uint_max(fixture *f) {
    return expect_core_refused(f, UINT_MAX);
}

static int r_get_core_null_is_0(fixture *f) {
    (void)f;
    return (int)tk_executor_get_core_pool_size(NULL);
}

/* Allowed after shutdown (as Java), and it starts nothing. */
static int r_shut_set_core(fixture *f) {
    int rc = tk_executor_set_core_pool_size(f->shut, 3);
    tk_executor_stats s;
    tk_executor_stats_get(f->shut, &s);
    if (rc == TK_OK && (s.pool_size != 0 || tk_executor_get_core_pool_size(f->shut) != 3)) {
        side("pool %u, core %u", s.pool_size, tk_executor_get_core_pool_size(f->shut));
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_set_keep_alive_null(fixture *f) {
    (void)f;
    return tk_executor_set_keep_alive(NULL, 1);
}

static int r_set_keep_alive_negative(fixture *f) {
    int rc = tk_executor_set_keep_alive(f->live, -1);
    if (tk_executor_get_keep_alive(f->live) != f->opt.keep_alive_ns) {
        side("keep-alive changed");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_set_keep_alive_int64_min(fixture *f) {
    return tk_executor_set_keep_alive(f->live, INT64_MIN);
}

static int r_get_keep_alive_null(fixture *f) {
    (void)f;
    return (int)tk_executor_get_keep_alive(NULL);
}

static int r_allow_timeout_null(fixture *f) {
    (void)f;
    return tk_executor_allow_core_thread_timeout(NULL, true);
}

/* On with a zero keep-alive is refused; zero keep-alive while on, too. */
static int r_allow_timeout_zero_keep_alive(fixture *f) {
    tk_executor *ex = NULL;
    tk_executor_options o = f->opt;
    int rc = tk_executor_create(&o, &ex);
    if (rc != TK_OK)
        return rc;
    rc = tk_executor_set_keep_alive(ex, 0);
    if (rc == TK_OK)
        rc = tk_executor_allow_core_thread_timeout(ex, true);
    if (rc == TK_EINVAL && tk_executor_allows_core_thread_timeout(ex))
        rc = SIDE_EFFECT;
    tk_executor_destroy(ex);
    return rc;
}

static int r_keep_alive_zero_while_timeout_on(fixture *f) {
    tk_executor *ex = NULL;
    tk_executor_options o = f->opt;
    o.allow_core_thread_timeout = true;
    int rc = tk_executor_create(&o, &ex);
    if (rc != TK_OK)
        return rc;
    rc = tk_executor_set_keep_alive(ex, 0);
    if (rc == TK_EINVAL && tk_executor_get_keep_alive(ex) != o.keep_alive_ns)
        rc = SIDE_EFFECT;
    tk_executor_destroy(ex);
    return rc;
}

static int r_allows_timeout_null_is_false(fixture *f) {
    (void)f;
    return tk_executor_allows_core_thread_timeout(NULL) ? 1 : 0;
}

static int r_set_rejection_null(fixture *f) {
    (void)f;
    return tk_executor_set_rejection(NULL, TK_REJECT_ABORT, NULL, NULL);
}

static int r_set_rejection_bad_policy(fixture *f) {
    return tk_executor_set_rejection(f->live, (tk_rejection_policy)42, NULL, NULL);
}

static int r_set_rejection_negative_policy(fixture *f) {
    return tk_executor_set_rejection(f->live, (tk_rejection_policy)-1, NULL, NULL);
}

static int r_set_rejection_custom_without_handler(fixture *f) {
    int rc = tk_executor_set_rejection(f->live, TK_REJECT_CUSTOM, NULL, NULL);
    tk_rejection_policy p = TK_REJECT_CUSTOM;
    tk_executor_get_rejection(f->live, &p, NULL, NULL);
    if (p != f->opt.rejection) {
        side("policy changed to %d", (int)p);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_get_rejection_null(fixture *f) {
    (void)f;
    tk_rejection_policy p;
    return tk_executor_get_rejection(NULL, &p, NULL, NULL);
}

static int r_get_rejection_null_outs_ok(fixture *f) {
    return tk_executor_get_rejection(f->live, NULL, NULL, NULL);
}

static int r_set_factory_null(fixture *f) {
    (void)f;
    return tk_executor_set_thread_factory(NULL, NULL, NULL);
}

/* A factory never called: a value to tell "not written" from NULL. */
static int t_factory_sentinel(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                              const char *name) {
    (void)ctx;
    (void)thread;
    (void)start;
    (void)arg;
    (void)name;
    return -1;
}

/* A NULL factory is not bad input: it restores pthread_create (the JDK's
 * setThreadFactory(null) throws NullPointerException; executor.h says why
 * timerkit differs). What was set before is put back. */
static int r_set_factory_null_fn_restores_default(fixture *f) {
    tk_thread_factory_fn was = NULL, now = t_factory_sentinel;
    void *was_ctx = NULL;
    (void)tk_executor_get_thread_factory(f->live, &was, &was_ctx);
    int rc = tk_executor_set_thread_factory(f->live, NULL, NULL);
    (void)tk_executor_get_thread_factory(f->live, &now, NULL);
    (void)tk_executor_set_thread_factory(f->live, was, was_ctx);
    if (now != NULL) {
        side("the factory read back is not NULL");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_get_factory_null(fixture *f) {
    (void)f;
    tk_thread_factory_fn fn;
    return tk_executor_get_thread_factory(NULL, &fn, NULL);
}

static int r_get_factory_null_outs_ok(fixture *f) {
    return tk_executor_get_thread_factory(f->live, NULL, NULL);
}

/* Outside a rejection, each stock handler acts on the task it is given (as
 * a Java program's handler.rejectedExecution(r, e)); a NULL executor or task
 * or a task that could not be scheduled is refused with TK_EINVAL, and
 * nothing runs. */
static int r_stock_handlers_outside_a_rejection(fixture *f) {
    static const tk_reject_fn stock[] = {tk_reject_abort, tk_reject_caller_runs, tk_reject_discard,
                                         tk_reject_discard_oldest};
    tk_task_info good, bad[4];
    memset(&good, 0, sizeof(good));
    good.fn = t_count;
    good.arg = &f->runs;
    good.kind = TK_TASK_ONE_SHOT;
    for (int k = 0; k < 4; k++)
        bad[k] = good;
    bad[0].fn = NULL;
    bad[1].kind = (tk_task_kind)7;
    bad[2].kind = TK_TASK_FIXED_RATE; /* period 0 */
    bad[3].kind = TK_TASK_FIXED_DELAY;
    bad[3].period_ns = -1;
    for (size_t i = 0; i < sizeof(stock) / sizeof(stock[0]); i++) {
        int rcs[6] = {stock[i](NULL, NULL, TK_EREJECTED, NULL),
                      stock[i](f->live, NULL, TK_EREJECTED, NULL),
                      stock[i](NULL, &good, TK_EREJECTED, NULL),
                      stock[i](f->live, &bad[0], TK_EFULL, NULL),
                      stock[i](f->live, &bad[1], TK_EFULL, NULL),
                      stock[i](f->live, &bad[2 + i % 2], TK_EFULL, NULL)};
        for (int k = 0; k < 6; k++) {
            if (rcs[k] != TK_EINVAL) {
                side("stock handler %zu, call %d: %s", i, k, tk_status_name(rcs[k]));
                return SIDE_EFFECT;
            }
        }
    }
    return TK_EINVAL;
}

/* On a shut-down executor, outside a rejection: abort refuses, the others
 * discard (TK_OK); the task given never runs. */
static int r_stock_handlers_outside_on_shut(fixture *f) {
    tk_task_info info;
    memset(&info, 0, sizeof(info));
    info.fn = t_count;
    info.arg = &f->runs;
    info.kind = TK_TASK_ONE_SHOT;
    int a = tk_reject_abort(f->shut, &info, TK_EREJECTED, NULL);
    int c = tk_reject_caller_runs(f->shut, &info, TK_EREJECTED, NULL);
    int d = tk_reject_discard(f->shut, &info, TK_EREJECTED, NULL);
    int o = tk_reject_discard_oldest(f->shut, &info, TK_EREJECTED, NULL);
    if (c != TK_OK || d != TK_OK || o != TK_OK) {
        side("caller-runs %s, discard %s, discard-oldest %s", tk_status_name(c), tk_status_name(d),
             tk_status_name(o));
        return SIDE_EFFECT;
    }
    return a;
}

static int r_stats_null_ex(fixture *f) {
    (void)f;
    tk_executor_stats s;
    return tk_executor_stats_get(NULL, &s);
}

static int r_stats_null_out(fixture *f) {
    return tk_executor_stats_get(f->live, NULL);
}

/* ---- access to the queue ---- */

static bool visit_count(const tk_task_info *task, void *ctx) {
    (void)task;
    ++*(int *)ctx;
    return true;
}

static int r_contains_null_ex_is_false(fixture *f, tk_future *fu) {
    bool in = tk_executor_contains(NULL, fu) || tk_executor_contains(f->live, NULL) ||
              tk_executor_contains(NULL, NULL);
    bool live = tk_executor_contains(f->live, fu);
    if (in || !live) {
        side("contains: NULL gave %d, the queued task %d", in, live);
        return SIDE_EFFECT;
    }
    return TK_OK;
}

static int r_contains_other_executors_future_is_false(fixture *f, tk_future *fu) {
    return tk_executor_contains(f->shut, fu) ? SIDE_EFFECT : TK_OK;
}

/* A cancelled task still queued (remove-on-cancel off, the default) is
 * contained, as in the JDK; NULL and another executor still read false. */
static int r_contains_cancelled_queued_is_true(fixture *f, tk_future *fu) {
    int rc = tk_future_cancel(fu, false);
    bool live = tk_executor_contains(f->live, fu);
    bool other = tk_executor_contains(f->shut, fu) || tk_executor_contains(NULL, fu);
    if (!live || other) {
        side("contains after cancel: %d, elsewhere %d", live, other);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_remove_null_ex(fixture *f, tk_future *fu) {
    int rc = tk_executor_remove(NULL, fu);
    bool still = tk_executor_contains(f->live, fu);
    if (!still) {
        side("the task left the queue");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_remove_null_future(fixture *f) {
    return tk_executor_remove(f->live, NULL);
}

static int r_remove_other_executors_future(fixture *f, tk_future *fu) {
    int rc = tk_executor_remove(f->shut, fu);
    bool still = tk_executor_contains(f->live, fu) && !tk_future_is_done(fu);
    if (!still) {
        side("the task left the queue");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_remove_cancelled_future(fixture *f, tk_future *fu) {
    tk_future_cancel(fu, false);
    int rc = tk_executor_remove(f->live, fu);
    int got = tk_future_get(fu, NULL);
    if (got != TK_ECANCELLED) {
        side("get() after: %s", tk_status_name(got));
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_remove_completed_future(fixture *f) {
    tk_future *fu = NULL;
    int rc = tk_executor_submit(f->live, t_noop, NULL, &fu);
    if (rc != TK_OK)
        return rc;
    if (tk_future_get_timeout(fu, WAIT_NS, NULL) != TK_OK) {
        tk_future_release(fu);
        side("the task did not complete");
        return SIDE_EFFECT;
    }
    rc = tk_executor_remove(f->live, fu);
    int got = tk_future_get(fu, NULL);
    tk_future_release(fu);
    if (got != TK_OK) {
        side("get() after: %s", tk_status_name(got));
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_remove_twice(fixture *f) {
    tk_future *fu = NULL;
    int rc = tk_executor_schedule_spec(
        f->live, &(tk_task_spec){.fn = t_noop, .arg_free = count_free, .delay_ns = HOUR_NS}, &fu);
    if (rc != TK_OK)
        return rc;
    long frees = atomic_load(&f->frees);
    int first = tk_executor_remove(f->live, fu);
    rc = tk_executor_remove(f->live, fu);
    int got = tk_future_get(fu, NULL);
    tk_future_release(fu);
    if (first != TK_OK || got != TK_EREMOVED || atomic_load(&f->frees) != frees + 1) {
        side("first remove %s, get %s, %ld arg_free calls", tk_status_name(first),
             tk_status_name(got), atomic_load(&f->frees) - frees);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_visit_null_ex(fixture *f) {
    (void)f;
    int n = 0;
    return (int)tk_executor_visit_queue(NULL, visit_count, &n);
}

static int r_visit_null_visitor(fixture *f) {
    return (int)tk_executor_visit_queue(f->live, NULL, NULL);
}

static int r_shut_visit_returns_0(fixture *f) {
    int n = 0;
    long rc = tk_executor_visit_queue(f->shut, visit_count, &n);
    if (n != 0) {
        side("%d visits", n);
        return SIDE_EFFECT;
    }
    return (int)rc;
}

static int r_engine_null_is_null(fixture *f) {
    (void)f;
    return tk_executor_engine(NULL) == NULL ? TK_OK : SIDE_EFFECT;
}

static int r_engine_is_the_one_asked_for(fixture *f) {
    return tk_executor_engine(f->live) == f->engine ? TK_OK : SIDE_EFFECT;
}

/* ---- a shut-down executor ---- */

static int r_shut_schedule(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule(f->shut, t_noop, NULL, 0, &out));
}

static int r_shut_submit(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_submit(f->shut, t_noop, NULL, &out));
}

static int r_shut_execute(fixture *f) {
    return tk_executor_execute(f->shut, t_noop, NULL);
}

static int r_shut_fixed_rate(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_at_fixed_rate(f->shut, t_noop, NULL, 0, 1000, &out));
}

static int r_shut_fixed_delay(fixture *f) {
    FAILS_UNTOUCHED(tk_executor_schedule_with_fixed_delay(f->shut, t_noop, NULL, 0, 1000, &out));
}

/* A task rejected by the abort policy had its arg_free run exactly once. */
static int r_shut_rejected_arg_freed_once(fixture *f) {
    tk_task_spec s = spec_ok();
    s.arg_free = count_free;
    long before = atomic_load(&f->frees);
    int rc = tk_executor_schedule_spec(f->shut, &s, NULL);
    long n = atomic_load(&f->frees) - before;
    if (n != 1) {
        side("arg_free ran %ld times", n);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_shut_prestart(fixture *f) {
    return tk_executor_prestart_core_thread(f->shut);
}

static int r_shut_prestart_all(fixture *f) {
    return tk_executor_prestart_all_core_threads(f->shut);
}

static int r_shut_shutdown_again(fixture *f) {
    return tk_executor_shutdown(f->shut);
}

static int r_shut_shutdown_now_returns_0(fixture *f) {
    return (int)tk_executor_shutdown_now(f->shut, NULL, NULL);
}

static int r_shut_await(fixture *f) {
    return tk_executor_await_termination(f->shut, 0);
}

static int r_shut_purge_returns_0(fixture *f) {
    return (int)tk_executor_purge(f->shut);
}

static int r_shut_predicates(fixture *f) {
    if (!tk_executor_is_shutdown(f->shut) || !tk_executor_is_terminated(f->shut) ||
        tk_executor_is_terminating(f->shut) || tk_executor_state(f->shut) != TK_POOL_TERMINATED) {
        side("state %s", tk_pool_state_name(tk_executor_state(f->shut)));
        return SIDE_EFFECT;
    }
    if (tk_executor_is_shutdown(f->live) || tk_executor_state(f->live) != TK_POOL_RUNNING) {
        side("live executor reports %s", tk_pool_state_name(tk_executor_state(f->live)));
        return SIDE_EFFECT;
    }
    tk_executor_stats st;
    return tk_executor_stats_get(f->shut, &st);
}

/* Rejection policies after shutdown: the discard family (and caller-runs,
 * which discards once shut down) return TK_OK and cancel the future. */
static int rejected_with(fixture *f, tk_rejection_policy pol, tk_reject_fn fn) {
    tk_executor_options o = f->opt;
    o.rejection = pol;
    o.reject = fn;
    tk_executor *ex = NULL;
    int rc = tk_executor_create(&o, &ex);
    if (rc != TK_OK)
        return rc;
    tk_executor_shutdown(ex);
    atomic_long runs = 0;
    tk_task_spec s = spec_ok();
    s.fn = t_count;
    s.arg = &runs;
    s.arg_free = count_free;
    long before = atomic_load(&f->frees);
    tk_future *fu = NULL;
    rc = tk_executor_schedule_spec(ex, &s, &fu);
    long freed = atomic_load(&f->frees) - before;
    if (rc == TK_OK) {
        bool cancelled = tk_future_is_cancelled(fu);
        int grc = tk_future_get_timeout(fu, WAIT_NS, NULL);
        tk_future_release(fu);
        if (!cancelled || grc != TK_ECANCELLED || atomic_load(&runs) != 0 || freed != 1) {
            side("cancelled=%d get=%s runs=%ld arg_free=%ld", cancelled, tk_status_name(grc),
                 atomic_load(&runs), freed);
            rc = SIDE_EFFECT;
        }
    } else if (freed != 1) {
        side("rejected with arg_free run %ld times", freed);
        rc = SIDE_EFFECT;
    }
    tk_executor_destroy(ex);
    return rc;
}

static int reject_custom_ok(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    (void)ex;
    (void)task;
    (void)ctx;
    return reason == TK_EREJECTED ? TK_OK : TK_EINVAL;
}

static int reject_custom_status(tk_executor *ex, const tk_task_info *task, int reason, void *ctx) {
    (void)ex;
    (void)task;
    (void)reason;
    (void)ctx;
    return TK_ENOTSUP;
}

static int r_shut_policy_discard(fixture *f) {
    return rejected_with(f, TK_REJECT_DISCARD, NULL);
}

static int r_shut_policy_discard_oldest(fixture *f) {
    return rejected_with(f, TK_REJECT_DISCARD_OLDEST, NULL);
}

static int r_shut_policy_caller_runs(fixture *f) {
    return rejected_with(f, TK_REJECT_CALLER_RUNS, NULL);
}

static int r_shut_policy_custom_pretends_ok(fixture *f) {
    return rejected_with(f, TK_REJECT_CUSTOM, reject_custom_ok);
}

static int r_shut_policy_custom_status(fixture *f) {
    return rejected_with(f, TK_REJECT_CUSTOM, reject_custom_status);
}

/* decorate() returning non-zero rejects the call with that status. */
static int decorate_refuse(tk_executor *ex, tk_task_spec *spec, void *ctx) {
    (void)ex;
    (void)spec;
    (void)ctx;
    return TK_ENOTSUP;
}

static int r_decorate_refuses(fixture *f) {
    tk_executor_options o = f->opt;
    o.hooks.decorate = decorate_refuse;
    tk_executor *ex = NULL;
    int rc = tk_executor_create(&o, &ex);
    if (rc != TK_OK)
        return rc;
    tk_future *out = SENTINEL;
    rc = tk_executor_schedule(ex, t_noop, NULL, 0, &out);
    if (rc != TK_OK && out != SENTINEL) {
        side("*out written on failure");
        rc = SIDE_EFFECT;
    }
    tk_executor_destroy(ex);
    return rc;
}

/* ---- calls made from the executor's own threads ---- */

typedef struct self_calls {
    atomic_int get_rc, await_rc, destroy_rc, done;
} self_calls;

static int t_self_calls(tk_run *run, void *arg) {
    self_calls *sc = arg;
    tk_executor *ex = tk_run_executor(run);
    atomic_store(&sc->get_rc, tk_future_get(tk_run_future(run), NULL));
    atomic_store(&sc->await_rc, tk_executor_await_termination(ex, 0));
    atomic_store(&sc->destroy_rc, tk_executor_destroy(ex));
    atomic_store(&sc->done, 1);
    return 0;
}

static int self_call(fixture *f, int which) {
    self_calls sc;
    atomic_init(&sc.get_rc, 1);
    atomic_init(&sc.await_rc, 1);
    atomic_init(&sc.destroy_rc, 1);
    atomic_init(&sc.done, 0);
    tk_future *fu = NULL;
    int rc = tk_executor_submit(f->live, t_self_calls, &sc, &fu);
    if (rc != TK_OK)
        return rc;
    rc = tk_future_get_timeout(fu, WAIT_NS, NULL);
    tk_future_release(fu);
    if (rc != TK_OK || !atomic_load(&sc.done)) {
        side("the task did not complete: %s", tk_status_name(rc));
        return SIDE_EFFECT;
    }
    return which == 0   ? atomic_load(&sc.get_rc)
           : which == 1 ? atomic_load(&sc.await_rc)
                        : atomic_load(&sc.destroy_rc);
}

static int r_own_thread_future_get(fixture *f) {
    return self_call(f, 0);
}

static int r_own_thread_await_termination(fixture *f) {
    return self_call(f, 1);
}

static int r_own_thread_destroy(fixture *f) {
    int rc = self_call(f, 2);
    /* Nothing done: the executor still works. */
    if (rc == TK_EDEADLK && r_schedule_delay_minus_1_runs_now(f) != TK_OK) {
        side("executor unusable after destroy from its own thread");
        return SIDE_EFFECT;
    }
    return rc;
}

/* A periodic task whose next deadline overflows: the first run happens now,
 * the next is clamped to the end of time (no wrap to the past), and a
 * cancel between runs succeeds. */
static atomic_long huge_period_runs;

static int huge_period(fixture *f, bool fixed_rate) {
    atomic_store(&huge_period_runs, 0);
    tk_future *fu = NULL;
    int rc = fixed_rate ? tk_executor_schedule_at_fixed_rate(f->live, t_count, &huge_period_runs,
                                                             -1, INT64_MAX, &fu)
                        : tk_executor_schedule_with_fixed_delay(f->live, t_count, &huge_period_runs,
                                                                -1, INT64_MAX, &fu);
    if (rc != TK_OK)
        return rc;
    bool ran = rel_wait_at_least(&huge_period_runs, 1, WAIT_NS);
    rel_sleep_ns(20 * TK_NS_PER_MS);
    long runs = atomic_load(&huge_period_runs);
    int64_t rem = tk_future_remaining_ns(fu);
    rc = tk_future_cancel(fu, false);
    tk_future_release(fu);
    if (!ran || runs != 1 || rem < INT64_MAX / 4) {
        side("runs %ld, remaining %lld ns", runs, (long long)rem);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_fixed_rate_period_int64_max_runs_once(fixture *f) {
    return huge_period(f, true);
}

static int r_fixed_delay_int64_max_runs_once(fixture *f) {
    return huge_period(f, false);
}

/* ---- options that are odd but legal, or plainly broken ---- */

/* Creates an executor from `o`; if that works, prestarts its threads (if
 * `prestart`: a failure is a SIDE_EFFECT) and runs a task at once on it
 * before destroying it. Returns the first status that is not TK_OK. */
static int create_then_run(fixture *f, const tk_executor_options *o, bool prestart) {
    tk_executor *ex = NULL;
    int rc = tk_executor_create(o, &ex);
    if (rc != TK_OK)
        return rc;
    if (prestart && tk_executor_prestart_all_core_threads(ex) < 0)
        rc = SIDE_EFFECT;
    if (rc == TK_OK)
        rc = run_now_with_delay_on(ex, f, -1);
    tk_executor_destroy(ex);
    return rc;
}

static int r_create_huge_timer_slack(fixture *f) {
    tk_executor_options o = f->opt;
    o.timer_slack_ns = INT64_MAX;
    return create_then_run(f, &o, true);
}

static int r_create_long_thread_prefix(fixture *f) {
    static char prefix[1001];
    memset(prefix, 'x', sizeof(prefix) - 1);
    tk_executor_options o = f->opt;
    o.thread_name_prefix = prefix;
    return create_then_run(f, &o, false);
}

static int r_create_incomplete_engine(fixture *f) {
    static const tk_queue_ops bogus = {.name = "bogus"};
    tk_executor_options o = f->opt;
    o.engine = &bogus;
    o.engine_config = NULL;
    return create_with(f, &o);
}

static int r_create_zero_config_means_defaults(fixture *f) {
    tk_executor_options o = f->opt;
    tk_queue_config c;
    memset(&c, 0, sizeof(c)); /* every zero field: the engine's default */
    o.engine_config = &c;
    return create_then_run(f, &o, false);
}

/* Futures outlive their executor until released. */
static int r_future_after_destroy(fixture *f) {
    tk_executor *ex = NULL;
    int rc = tk_executor_create(&f->opt, &ex);
    if (rc != TK_OK)
        return rc;
    tk_future *far = NULL, *done = NULL;
    if (tk_executor_schedule(ex, t_noop, NULL, HOUR_NS, &far) != TK_OK ||
        tk_executor_submit(ex, t_noop, NULL, &done) != TK_OK ||
        tk_future_get_timeout(done, WAIT_NS, NULL) != TK_OK) {
        side("setup failed");
        tk_executor_destroy(ex);
        return SIDE_EFFECT;
    }
    tk_executor_destroy(ex);
    int grc = tk_future_get_timeout(far, WAIT_NS, NULL);
    int crc = tk_future_cancel(far, true);
    bool ok = tk_future_is_done(far) && tk_future_is_cancelled(far) &&
              tk_future_get(done, NULL) == TK_OK && tk_future_run_count(done) == 1 &&
              tk_future_cancel(done, false) == TK_EDONE;
    (void)tk_future_remaining_ns(far);
    int r1 = tk_future_release(far), r2 = tk_future_release(done);
    if (!ok || crc != TK_EDONE || r1 != TK_OK || r2 != TK_OK) {
        side("done/cancelled/get/release inconsistent after destroy (cancel %s)",
             tk_status_name(crc));
        return SIDE_EFFECT;
    }
    return grc;
}

/* ---- engine specs: tk_queue_config_parse/format, tk_queue_param_format ---- */

#define SPEC_ENGINE_SENTINEL ((const tk_queue_ops *)(uintptr_t)0x5e17e1)

/* Parses `spec` and checks that a failure leaves *engine and *cfg alone. */
static int parse_untouched(const char *spec, char *err, size_t err_len) {
    const tk_queue_ops *engine = SPEC_ENGINE_SENTINEL;
    tk_queue_config cfg, before;
    memset(&cfg, 0x5a, sizeof(cfg));
    before = cfg;
    int rc = tk_queue_config_parse(spec, &engine, &cfg, err, err_len);
    if (rc != TK_OK &&
        (engine != SPEC_ENGINE_SENTINEL || memcmp(&cfg, &before, sizeof(cfg)) != 0)) {
        side("*engine or *cfg written on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_spec_parse_null_spec(fixture *f) {
    (void)f;
    tk_queue_config cfg;
    const tk_queue_ops *engine = SPEC_ENGINE_SENTINEL;
    int rc = tk_queue_config_parse(NULL, &engine, &cfg, NULL, 0);
    if (engine != SPEC_ENGINE_SENTINEL) {
        side("*engine written on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_spec_parse_null_engine(fixture *f) {
    tk_queue_config cfg;
    return tk_queue_config_parse(f->engine->name, NULL, &cfg, NULL, 0);
}

static int r_spec_parse_null_cfg(fixture *f) {
    const tk_queue_ops *engine = SPEC_ENGINE_SENTINEL;
    int rc = tk_queue_config_parse(f->engine->name, &engine, NULL, NULL, 0);
    if (engine != SPEC_ENGINE_SENTINEL) {
        side("*engine written on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_spec_parse_all_null(fixture *f) {
    (void)f;
    return tk_queue_config_parse(NULL, NULL, NULL, NULL, 0);
}

static int r_spec_parse_empty(fixture *f) {
    (void)f;
    return parse_untouched("", NULL, 0);
}

static int r_spec_parse_unknown_engine(fixture *f) {
    char err[128];
    int rc = parse_untouched("no-such-engine", err, sizeof(err));
    if (rc == TK_ENOENT && strstr(err, f->engine->name) == NULL) {
        side("the message does not list '%s': %s", f->engine->name, err);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_spec_parse_unknown_key(fixture *f) {
    char spec[64], err[128];
    snprintf(spec, sizeof(spec), "%s:no_such_key=1", f->engine->name);
    int rc = parse_untouched(spec, err, sizeof(err));
    if (rc == TK_EINVAL && strstr(err, "no_such_key") == NULL) {
        side("the message does not name the key: %s", err);
        return SIDE_EFFECT;
    }
    return rc;
}

/* The engine's first parameter one past its maximum (or below its minimum). */
static int r_spec_parse_out_of_range(fixture *f) {
    const tk_queue_param *p = &f->engine->params[0];
    char spec[96], err[128];
    if (p->type == TK_PARAM_COUNT)
        snprintf(spec, sizeof(spec), "%s:%s=99999999999999999999999", f->engine->name, p->key);
    else
        snprintf(spec, sizeof(spec), "%s:%s=-1ns", f->engine->name, p->key);
    int rc = parse_untouched(spec, err, sizeof(err));
    if (rc == TK_EINVAL && strstr(err, p->key) == NULL) {
        side("the message does not name '%s': %s", p->key, err);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_spec_parse_whitespace(fixture *f) {
    char spec[64];
    snprintf(spec, sizeof(spec), " %s", f->engine->name);
    return parse_untouched(spec, NULL, 0);
}

static int r_spec_parse_trailing_colon(fixture *f) {
    char spec[64];
    snprintf(spec, sizeof(spec), "%s:", f->engine->name);
    return parse_untouched(spec, NULL, 0);
}

/* What a call returned (rc) that was given `len` bytes (0 or 1) of a
 * buffer that held "xyz": with 0 it may write nothing, with 1 only the
 * terminator (else SIDE_EFFECT). */
static int cut_to(const char *buf, size_t len, int rc) {
    if (len == 0 ? strcmp(buf, "xyz") != 0 : buf[0] != '\0' || buf[1] != 'y') {
        side(len == 0 ? "buffer written with length 0" : "buffer not cut to its terminator");
        return SIDE_EFFECT;
    }
    return rc;
}

/* err_len 0: no message, nothing written to err. */
static int r_spec_parse_err_len_0(fixture *f) {
    (void)f;
    char err[4] = "xyz";
    return cut_to(err, 0, parse_untouched("no-such-engine", err, 0));
}

/* A one-byte err gets just the terminator. */
static int r_spec_parse_err_len_1(fixture *f) {
    (void)f;
    char err[4] = "xyz";
    return cut_to(err, 1, parse_untouched("no-such-engine", err, 1));
}

static int r_spec_parse_own_name_ok(fixture *f) {
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    int rc = tk_queue_config_parse(f->engine->name, &engine, &cfg, NULL, 0);
    if (rc == TK_OK && engine != f->engine) {
        side("parsed '%s' into another engine", f->engine->name);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_spec_format_null_engine(fixture *f) {
    char buf[64];
    return tk_queue_config_format(NULL, &f->cfg, buf, sizeof(buf));
}

static int r_spec_format_null_cfg(fixture *f) {
    char buf[64];
    return tk_queue_config_format(f->engine, NULL, buf, sizeof(buf));
}

static int r_spec_format_null_buf(fixture *f) {
    return tk_queue_config_format(f->engine, &f->cfg, NULL, 64);
}

static int r_spec_format_len_0(fixture *f) {
    char buf[4] = "xyz";
    return cut_to(buf, 0, tk_queue_config_format(f->engine, &f->cfg, buf, 0));
}

/* Room for all but the last byte: the start of the spec, NUL-terminated. */
static int r_spec_format_short_buf(fixture *f) {
    char full[128], cut[128];
    if (tk_queue_config_format(f->engine, &f->cfg, full, sizeof(full)) != TK_OK) {
        side("the fixture's config does not format");
        return SIDE_EFFECT;
    }
    size_t len = strlen(full); /* one byte short of the terminator */
    memset(cut, '#', sizeof(cut));
    int rc = tk_queue_config_format(f->engine, &f->cfg, cut, len);
    if (cut[len - 1] != '\0' || strncmp(cut, full, len - 1) != 0 || cut[len] != '#') {
        side("short buffer holds '%.*s'", (int)len, cut);
        return SIDE_EFFECT;
    }
    return rc;
}

/* A config create() refuses has no canonical spec. */
static int r_spec_format_out_of_range(fixture *f) {
    /* the first parameter of the table that can be out of range, set so */
    tk_queue_config cfg = f->cfg;
    for (size_t i = 0; i < f->engine->param_count; i++) {
        uint64_t badv[3];
        if (tkt_param_bad_values(&f->engine->params[i], badv) > 0) {
            tkt_param_store(&cfg, &f->engine->params[i], badv[0]);
            break;
        }
    }
    char buf[64] = "junk";
    int rc = tk_queue_config_format(f->engine, &cfg, buf, sizeof(buf));
    if (rc != TK_OK && buf[0] != '\0') {
        side("buf holds '%s' on failure", buf);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_param_format_null_param(fixture *f) {
    char buf[32];
    return tk_queue_param_format(NULL, &f->cfg, buf, sizeof(buf));
}

static int r_param_format_null_cfg(fixture *f) {
    char buf[32];
    return tk_queue_param_format(&f->engine->params[0], NULL, buf, sizeof(buf));
}

static int r_param_format_null_buf(fixture *f) {
    return tk_queue_param_format(&f->engine->params[0], &f->cfg, NULL, 32);
}

static int r_param_format_len_0(fixture *f) {
    char buf[4] = "xyz";
    return cut_to(buf, 0, tk_queue_param_format(&f->engine->params[0], &f->cfg, buf, 0));
}

static int r_param_format_len_1(fixture *f) {
    char buf[4] = "xyz";
    return cut_to(buf, 1, tk_queue_param_format(&f->engine->params[0], &f->cfg, buf, 1));
}

static int r_param_format_bad_type(fixture *f) {
    tk_queue_param p = f->engine->params[0];
    p.type = (tk_param_type)0;
    char buf[32];
    return tk_queue_param_format(&p, &f->cfg, buf, sizeof(buf));
}

static int r_param_format_field_past_config(fixture *f) {
    tk_queue_param p = f->engine->params[0];
    p.offset = SIZE_MAX - 2;
    char buf[32];
    return tk_queue_param_format(&p, &f->cfg, buf, sizeof(buf));
}

/* ---- configs by key, check, tk_queue_create, tk_engine_check/_register ---- */

/* Returns what `call` returned, or SIDE_EFFECT if it failed and changed
 * `cfg` (set and set_value leave the config unchanged on failure). */
#define CONFIG_UNTOUCHED(cfg, call)                                                                \
    do {                                                                                           \
        tk_queue_config before_ = (cfg);                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != TK_OK && memcmp(&(cfg), &before_, sizeof(before_)) != 0) {                      \
            side("the config changed on failure");                                                 \
            return SIDE_EFFECT;                                                                    \
        }                                                                                          \
        return rc_;                                                                                \
    } while (0)

static int r_init_for_null_cfg(fixture *f) {
    return tk_queue_config_init_for(NULL, f->engine);
}

static int r_init_for_null_engine(fixture *f) {
    (void)f;
    tk_queue_config c;
    return tk_queue_config_init_for(&c, NULL);
}

/* A copy of the engine whose table is one entry with its default outside
 * its range: [1, 1], default 2. */
static int r_init_for_malformed_table(fixture *f) {
    static const tk_queue_param bad[] = {{.key = "x",
                                          .type = TK_PARAM_DURATION,
                                          .offset = 0,
                                          .size = sizeof(int64_t),
                                          .min = 1,
                                          .max = 1,
                                          .def = 2,
                                          .help = "default outside the range"}};
    tk_queue_ops o = *f->engine;
    o.params = bad;
    o.param_count = 1;
    o.params_size = sizeof(int64_t);
    tk_queue_config c;
    return tk_queue_config_init_for(&c, &o);
}

static int r_set_null_cfg(fixture *f) {
    char err[64] = "";
    int rc = tk_queue_config_set(NULL, f->engine->params[0].key, "1", err, sizeof(err));
    if (rc == TK_EINVAL && strcmp(err, "cfg is NULL") != 0) {
        side("message: %s", err);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_set_null_key(fixture *f) {
    tk_queue_config c = f->cfg;
    CONFIG_UNTOUCHED(c, tk_queue_config_set(&c, NULL, "1", NULL, 0));
}

static int r_set_null_value(fixture *f) {
    tk_queue_config c = f->cfg;
    CONFIG_UNTOUCHED(c, tk_queue_config_set(&c, f->engine->params[0].key, NULL, NULL, 0));
}

static int r_set_no_engine(fixture *f) {
    tk_queue_config c;
    tk_queue_config_init(&c);
    CONFIG_UNTOUCHED(c, tk_queue_config_set(&c, f->engine->params[0].key, "1", NULL, 0));
}

static int r_set_unknown_key(fixture *f) {
    tk_queue_config c = f->cfg;
    char err[256] = "";
    tk_queue_config before = c;
    int rc = tk_queue_config_set(&c, "no_such_key", "1", err, sizeof(err));
    if (rc == TK_EINVAL && strstr(err, "no_such_key") == NULL) {
        side("the message does not name the key: %s", err);
        return SIDE_EFFECT;
    }
    if (rc != TK_OK && memcmp(&c, &before, sizeof(c)) != 0) {
        side("the config changed on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_set_malformed_value(fixture *f) {
    tk_queue_config c = f->cfg;
    CONFIG_UNTOUCHED(c, tk_queue_config_set(&c, f->engine->params[0].key, "x1", NULL, 0));
}

static int r_set_value_null_cfg(fixture *f) {
    return tk_queue_config_set_value(NULL, f->engine->params[0].key, f->engine->params[0].def);
}

static int r_set_value_null_key(fixture *f) {
    tk_queue_config c = f->cfg;
    CONFIG_UNTOUCHED(c, tk_queue_config_set_value(&c, NULL, 0));
}

static int r_set_value_no_engine(fixture *f) {
    tk_queue_config c;
    tk_queue_config_init(&c);
    const tk_queue_param *p = &f->engine->params[0];
    CONFIG_UNTOUCHED(c, tk_queue_config_set_value(&c, p->key, p->def));
}

static int r_set_value_unknown_key(fixture *f) {
    tk_queue_config c = f->cfg;
    CONFIG_UNTOUCHED(c, tk_queue_config_set_value(&c, "no_such_key", 0));
}

/* Each parameter one past its range (where an int64_t can say so). */
static int r_set_value_out_of_range(fixture *f) {
    for (size_t i = 0; i < f->engine->param_count; i++) {
        const tk_queue_param *p = &f->engine->params[i];
        int64_t outside[2];
        size_t n = 0;
        if (p->min > INT64_MIN)
            outside[n++] = p->min - 1;
        if (p->max < INT64_MAX)
            outside[n++] = p->max + 1;
        for (size_t k = 0; k < n; k++) {
            tk_queue_config c = f->cfg, before = c;
            int rc = tk_queue_config_set_value(&c, p->key, outside[k]);
            if (rc != TK_EINVAL || memcmp(&c, &before, sizeof(c)) != 0) {
                side("%s=%lld: %s", p->key, (long long)outside[k], tk_status_name(rc));
                return rc == TK_EINVAL ? SIDE_EFFECT : rc;
            }
        }
    }
    return TK_EINVAL;
}

static int r_get_value_null_cfg(fixture *f) {
    int64_t v = 0;
    return tk_queue_config_get_value(NULL, f->engine->params[0].key, &v);
}

static int r_get_value_null_key(fixture *f) {
    int64_t v = 0;
    return tk_queue_config_get_value(&f->cfg, NULL, &v);
}

static int r_get_value_null_value(fixture *f) {
    return tk_queue_config_get_value(&f->cfg, f->engine->params[0].key, NULL);
}

static int r_get_value_no_engine(fixture *f) {
    tk_queue_config c;
    tk_queue_config_init(&c);
    int64_t v = 0;
    return tk_queue_config_get_value(&c, f->engine->params[0].key, &v);
}

static int r_get_value_unknown_key(fixture *f) {
    int64_t v = 0;
    return tk_queue_config_get_value(&f->cfg, "no_such_key", &v);
}

/* The fixture's config reads back every parameter's default. */
static int r_get_value_defaults(fixture *f) {
    for (size_t i = 0; i < f->engine->param_count; i++) {
        int64_t v = 0;
        int rc = tk_queue_config_get_value(&f->cfg, f->engine->params[i].key, &v);
        if (rc != TK_OK)
            return rc;
        if (v != f->engine->params[i].def) {
            side("%s reads %lld", f->engine->params[i].key, (long long)v);
            return SIDE_EFFECT;
        }
    }
    return TK_OK;
}

static int r_check_null_engine(fixture *f) {
    char err[64] = "";
    int rc = tk_queue_config_check(NULL, &f->cfg, err, sizeof(err));
    if (rc == TK_EINVAL && strcmp(err, "no engine") != 0) {
        side("message: %s", err);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_check_null_cfg_is_defaults(fixture *f) {
    return tk_queue_config_check(f->engine, NULL, NULL, 0);
}

static int r_check_own_config(fixture *f) {
    return tk_queue_config_check(f->engine, &f->cfg, NULL, 0);
}

/* A config of each other engine, named in the message. */
static int r_check_other_engines_config(fixture *f) {
    int tried = 0;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        const tk_queue_ops *other = tk_engine_at(e);
        if (other == f->engine)
            continue;
        tk_queue_config c;
        tk_queue_config_init_for(&c, other);
        char err[256] = "";
        int rc = tk_queue_config_check(f->engine, &c, err, sizeof(err));
        tried++;
        if (rc != TK_EINVAL)
            return rc == TK_OK ? SIDE_EFFECT : rc;
        if (strstr(err, other->name) == NULL) {
            side("the message does not name '%s': %s", other->name, err);
            return SIDE_EFFECT;
        }
    }
    return tried > 0 ? TK_EINVAL : TK_OK;
}

static int r_check_param_out_of_range(fixture *f) {
    int tried = 0;
    for (size_t i = 0; i < f->engine->param_count; i++) {
        uint64_t badv[3];
        int nbad = tkt_param_bad_values(&f->engine->params[i], badv);
        for (int k = 0; k < nbad; k++) {
            tk_queue_config c = f->cfg;
            tkt_param_store(&c, &f->engine->params[i], badv[k]);
            char err[256] = "";
            int rc = tk_queue_config_check(f->engine, &c, err, sizeof(err));
            tried++;
            if (rc != TK_EINVAL)
                return rc == TK_OK ? SIDE_EFFECT : rc;
            if (strstr(err, f->engine->params[i].key) == NULL) {
                side("the message does not name '%s': %s", f->engine->params[i].key, err);
                return SIDE_EFFECT;
            }
        }
    }
    return tried > 0 ? TK_EINVAL : TK_OK;
}

static int r_queue_create_null_engine(fixture *f) {
    (void)f;
    tk_queue *q = (tk_queue *)(uintptr_t)1;
    int rc = tk_queue_create(NULL, NULL, NULL, NULL, &q);
    if (q != NULL) {
        side("*out not cleared on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_queue_create_null_out(fixture *f) {
    return tk_queue_create(f->engine, &f->cfg, NULL, NULL, NULL);
}

static int r_queue_create_incomplete_engine(fixture *f) {
    (void)f;
    static const tk_queue_ops bogus = {.name = "bogus"};
    tk_queue *q = (tk_queue *)(uintptr_t)1;
    int rc = tk_queue_create(&bogus, NULL, NULL, NULL, &q);
    if (q != NULL) {
        side("*out not cleared on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_queue_create_own_config(fixture *f) {
    tk_queue *q = NULL;
    int rc = tk_queue_create(f->engine, &f->cfg, NULL, NULL, &q);
    if (rc == TK_OK)
        f->engine->destroy(q);
    return rc;
}

static int r_engine_check_null(fixture *f) {
    (void)f;
    char err[64] = "";
    int rc = tk_engine_check(NULL, err, sizeof(err));
    if (rc == TK_EINVAL && strcmp(err, "engine is NULL") != 0) {
        side("message: %s", err);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_engine_check_own(fixture *f) {
    return tk_engine_check(f->engine, NULL, 0);
}

static int r_engine_check_no_ops(fixture *f) {
    (void)f;
    static const tk_queue_ops bogus = {.name = "bogus"};
    char err[128] = "";
    int rc = tk_engine_check(&bogus, err, sizeof(err));
    if (rc == TK_EINVAL && strstr(err, "create") == NULL) {
        side("the message does not name the operation: %s", err);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_engine_register_null(fixture *f) {
    (void)f;
    size_t before = tk_engine_count();
    int rc = tk_engine_register(NULL, NULL, 0);
    if (tk_engine_count() != before) {
        side("the registry grew");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_engine_register_incomplete(fixture *f) {
    (void)f;
    static const tk_queue_ops bogus = {.name = "bogus"};
    size_t before = tk_engine_count();
    int rc = tk_engine_register(&bogus, NULL, 0);
    if (tk_engine_count() != before || tk_engine_by_name("bogus") != NULL) {
        side("the registry took an incomplete table");
        return SIDE_EFFECT;
    }
    return rc;
}

/* A registered table again: a no-op. */
static int r_engine_register_registered(fixture *f) {
    size_t before = tk_engine_count();
    int rc = tk_engine_register(f->engine, NULL, 0);
    if (tk_engine_count() != before) {
        side("the registry grew");
        return SIDE_EFFECT;
    }
    return rc;
}

/* Another table under a registered engine's name. */
static int r_engine_register_name_taken(fixture *f) {
    static tk_queue_ops twin; /* a registry entry would have to outlive the call */
    twin = *f->engine;
    size_t before = tk_engine_count();
    char err[128] = "";
    int rc = tk_engine_register(&twin, err, sizeof(err));
    if (tk_engine_count() != before || tk_engine_by_name(f->engine->name) != f->engine) {
        side("the registry took a second '%s'", f->engine->name);
        return SIDE_EFFECT;
    }
    if (rc == TK_ESTATE && strstr(err, f->engine->name) == NULL) {
        side("message: %s", err);
        return SIDE_EFFECT;
    }
    return rc;
}

static const row spec_rows[] = {
    ROW(r_spec_parse_null_spec, TK_EINVAL),
    ROW(r_spec_parse_null_engine, TK_EINVAL),
    ROW(r_spec_parse_null_cfg, TK_EINVAL),
    ROW(r_spec_parse_all_null, TK_EINVAL),
    ROW(r_spec_parse_empty, TK_EINVAL),
    ROW(r_spec_parse_unknown_engine, TK_ENOENT),
    ROW(r_spec_parse_unknown_key, TK_EINVAL),
    ROW(r_spec_parse_out_of_range, TK_EINVAL),
    ROW(r_spec_parse_whitespace, TK_EINVAL),
    ROW(r_spec_parse_trailing_colon, TK_EINVAL),
    ROW(r_spec_parse_err_len_0, TK_ENOENT),
    ROW(r_spec_parse_err_len_1, TK_ENOENT),
    ROW(r_spec_parse_own_name_ok, TK_OK),
    ROW(r_spec_format_null_engine, TK_EINVAL),
    ROW(r_spec_format_null_cfg, TK_EINVAL),
    ROW(r_spec_format_null_buf, TK_EINVAL),
    ROW(r_spec_format_len_0, TK_EFULL),
    ROW(r_spec_format_short_buf, TK_EFULL),
    ROW(r_spec_format_out_of_range, TK_EINVAL),
    ROW(r_param_format_null_param, TK_EINVAL),
    ROW(r_param_format_null_cfg, TK_EINVAL),
    ROW(r_param_format_null_buf, TK_EINVAL),
    ROW(r_param_format_len_0, TK_EFULL),
    ROW(r_param_format_len_1, TK_EFULL),
    ROW(r_param_format_bad_type, TK_EINVAL),
    ROW(r_param_format_field_past_config, TK_EINVAL),
    ROW(r_init_for_null_cfg, TK_EINVAL),
    ROW(r_init_for_null_engine, TK_EINVAL),
    ROW(r_init_for_malformed_table, TK_EINVAL),
    ROW(r_set_null_cfg, TK_EINVAL),
    ROW(r_set_null_key, TK_EINVAL),
    ROW(r_set_null_value, TK_EINVAL),
    ROW(r_set_no_engine, TK_EINVAL),
    ROW(r_set_unknown_key, TK_EINVAL),
    ROW(r_set_malformed_value, TK_EINVAL),
    ROW(r_set_value_null_cfg, TK_EINVAL),
    ROW(r_set_value_null_key, TK_EINVAL),
    ROW(r_set_value_no_engine, TK_EINVAL),
    ROW(r_set_value_unknown_key, TK_EINVAL),
    ROW(r_set_value_out_of_range, TK_EINVAL),
    ROW(r_get_value_null_cfg, TK_EINVAL),
    ROW(r_get_value_null_key, TK_EINVAL),
    ROW(r_get_value_null_value, TK_EINVAL),
    ROW(r_get_value_no_engine, TK_EINVAL),
    ROW(r_get_value_unknown_key, TK_EINVAL),
    ROW(r_get_value_defaults, TK_OK),
    ROW(r_check_null_engine, TK_EINVAL),
    ROW(r_check_null_cfg_is_defaults, TK_OK),
    ROW(r_check_own_config, TK_OK),
    ROW(r_check_other_engines_config, TK_EINVAL),
    ROW(r_check_param_out_of_range, TK_EINVAL),
    ROW(r_queue_create_null_engine, TK_EINVAL),
    ROW(r_queue_create_null_out, TK_EINVAL),
    ROW(r_queue_create_incomplete_engine, TK_EINVAL),
    ROW(r_queue_create_own_config, TK_OK),
    ROW(r_engine_check_null, TK_EINVAL),
    ROW(r_engine_check_own, TK_OK),
    ROW(r_engine_check_no_ops, TK_EINVAL),
    ROW(r_engine_register_null, TK_EINVAL),
    ROW(r_engine_register_incomplete, TK_EINVAL),
    ROW(r_engine_register_registered, TK_OK),
    ROW(r_engine_register_name_taken, TK_ESTATE),
};

static const row executor_rows[] = {
    ROW(r_options_init_null, TK_EINVAL),
    ROW(r_create_null_out, TK_EINVAL),
    ROW(r_create_null_all, TK_EINVAL),
    ROW(r_create_pool_max_plus_1, TK_EINVAL),
    ROW(r_create_pool_uint_max, TK_EINVAL),
    ROW(r_create_custom_without_handler, TK_EINVAL),
    ROW(r_create_bad_policy, TK_EINVAL),
    ROW(r_create_default_slack_negative, TK_EINVAL),
    ROW(r_create_default_slack_int64_min, TK_EINVAL),
    ROW(r_create_param_out_of_range, TK_EINVAL),
    ROW(r_create_other_engines_config, TK_EINVAL),
    ROW(r_create_pool_zero_still_runs, TK_OK),
    ROW2(r_create_huge_timer_slack, TK_OK, TK_EINVAL),
    ROW(r_create_long_thread_prefix, TK_OK),
    ROW(r_create_incomplete_engine, TK_EINVAL),
    ROW(r_create_zero_config_means_defaults, TK_OK),
    ROW(r_future_after_destroy, TK_ECANCELLED),
    ROW(r_destroy_null, TK_EINVAL),
    ROW(r_execute_null_ex, TK_EINVAL),
    ROW(r_execute_null_fn, TK_EINVAL),
    ROW(r_submit_null_out, TK_EINVAL),
    ROW(r_submit_null_fn, TK_EINVAL),
    ROW(r_submit_null_ex, TK_EINVAL),
    ROW(r_schedule_null_ex, TK_EINVAL),
    ROW(r_schedule_null_fn, TK_EINVAL),
    ROW(r_schedule_delay_minus_1_runs_now, TK_OK),
    ROW(r_schedule_delay_int64_min_runs_now, TK_OK),
    ROW(r_schedule_delay_int64_max_clamped, TK_OK),
    ROW(r_fixed_rate_int64_max_clamped, TK_OK),
    ROW(r_fixed_delay_int64_max_clamped, TK_OK),
    ROW(r_fixed_rate_period_0, TK_EINVAL),
    ROW(r_fixed_rate_period_minus_1, TK_EINVAL),
    ROW(r_fixed_rate_period_int64_min, TK_EINVAL),
    ROW(r_fixed_rate_null_fn, TK_EINVAL),
    ROW(r_fixed_rate_null_ex, TK_EINVAL),
    ROW(r_fixed_delay_period_0, TK_EINVAL),
    ROW(r_fixed_delay_period_minus_1, TK_EINVAL),
    ROW(r_fixed_delay_null_fn, TK_EINVAL),
    ROW(r_fixed_rate_1ns_period_negative_delay, TK_OK),
    ROW(r_fixed_rate_period_int64_max_runs_once, TK_OK),
    ROW(r_fixed_delay_int64_max_runs_once, TK_OK),
    ROW(r_spec_null, TK_EINVAL),
    ROW(r_spec_null_fn, TK_EINVAL),
    ROW(r_spec_bad_kind, TK_EINVAL),
    ROW(r_spec_negative_kind, TK_EINVAL),
    ROW(r_spec_unknown_flags, TK_EINVAL),
    ROW(r_spec_slack_negative, TK_EINVAL),
    ROW(r_spec_periodic_slack_int64_min, TK_EINVAL),
    ROW(r_spec_slack_without_flag_ignored, TK_OK),
    ROW(r_spec_slack_int64_max_ok, TK_OK),
    ROW(r_timer_set_slack_null, TK_EINVAL),
    ROW(r_timer_set_slack_never_initialised, TK_EINVAL),
    ROW(r_timer_set_slack_negative, TK_EINVAL),
    ROW(r_timer_set_slack_pending, TK_ESTATE),
    ROW(r_timer_slack_null_is_0, TK_OK),
    ROW(r_spec_periodic_zero_period, TK_EINVAL),
    ROW(r_spec_null_ex, TK_EINVAL),
    ROW(r_spec_invalid_keeps_arg, TK_EINVAL),
    ROW(r_future_cancel_null, TK_EINVAL),
    ROW(r_future_get_null, TK_EINVAL),
    ROW(r_future_get_timeout_null, TK_EINVAL),
    ROW(r_future_release_null, TK_EINVAL),
    ROW(r_future_remaining_null_is_0, TK_OK),
    ROW_FAR(r_future_get_timeout_zero_pending, TK_ETIMEDOUT),
    ROW(r_future_double_release_live_task, TK_EINVAL),
    ROW_FAR(r_future_cancel_twice, TK_EDONE),
    ROW(r_future_cancel_after_completion, TK_EDONE),
    ROW(r_shutdown_null, TK_EINVAL),
    ROW(r_shutdown_now_null, TK_EINVAL),
    ROW(r_await_null, TK_EINVAL),
    ROW(r_purge_null, TK_EINVAL),
    ROW(r_prestart_null, TK_EINVAL),
    ROW(r_prestart_all_null, TK_EINVAL),
    ROW(r_set_remove_on_cancel_null, TK_EINVAL),
    ROW(r_create_keep_alive_negative, TK_EINVAL),
    ROW(r_create_core_timeout_zero_keep_alive, TK_EINVAL),
    ROW(r_set_core_null, TK_EINVAL),
    ROW(r_set_core_max_plus_1, TK_EINVAL),
    ROW(r_set_core_uint_max, TK_EINVAL),
    ROW(r_get_core_null_is_0, 0),
    ROW(r_shut_set_core, TK_OK),
    ROW(r_set_keep_alive_null, TK_EINVAL),
    ROW(r_set_keep_alive_negative, TK_EINVAL),
    ROW(r_set_keep_alive_int64_min, TK_EINVAL),
    ROW(r_get_keep_alive_null, TK_EINVAL),
    ROW(r_allow_timeout_null, TK_EINVAL),
    ROW(r_allow_timeout_zero_keep_alive, TK_EINVAL),
    ROW(r_keep_alive_zero_while_timeout_on, TK_EINVAL),
    ROW(r_allows_timeout_null_is_false, 0),
    ROW(r_set_rejection_null, TK_EINVAL),
    ROW(r_set_rejection_bad_policy, TK_EINVAL),
    ROW(r_set_rejection_negative_policy, TK_EINVAL),
    ROW(r_set_rejection_custom_without_handler, TK_EINVAL),
    ROW(r_get_rejection_null, TK_EINVAL),
    ROW(r_get_rejection_null_outs_ok, TK_OK),
    ROW(r_set_factory_null, TK_EINVAL),
    ROW(r_set_factory_null_fn_restores_default, TK_OK),
    ROW(r_get_factory_null, TK_EINVAL),
    ROW(r_get_factory_null_outs_ok, TK_OK),
    ROW(r_stock_handlers_outside_a_rejection, TK_EINVAL),
    ROW(r_stock_handlers_outside_on_shut, TK_EREJECTED),
    ROW(r_set_continue_periodic_null, TK_EINVAL),
    ROW(r_set_execute_delayed_null, TK_EINVAL),
    ROW(r_stats_null_ex, TK_EINVAL),
    ROW(r_stats_null_out, TK_EINVAL),
    ROW(r_engine_null_is_null, TK_OK),
    ROW(r_engine_is_the_one_asked_for, TK_OK),
    ROW_FAR(r_contains_null_ex_is_false, TK_OK),
    ROW_FAR(r_contains_other_executors_future_is_false, TK_OK),
    ROW_FAR(r_contains_cancelled_queued_is_true, TK_OK),
    ROW_FAR(r_remove_null_ex, TK_EINVAL),
    ROW(r_remove_null_future, TK_EINVAL),
    ROW_FAR(r_remove_other_executors_future, TK_EINVAL),
    ROW_FAR(r_remove_cancelled_future, TK_ENOENT),
    ROW(r_remove_completed_future, TK_ENOENT),
    ROW(r_remove_twice, TK_ENOENT),
    ROW(r_visit_null_ex, TK_EINVAL),
    ROW(r_visit_null_visitor, TK_EINVAL),
    ROW(r_shut_visit_returns_0, 0),
    ROW(r_shut_schedule, TK_EREJECTED),
    ROW(r_shut_submit, TK_EREJECTED),
    ROW(r_shut_execute, TK_EREJECTED),
    ROW(r_shut_fixed_rate, TK_EREJECTED),
    ROW(r_shut_fixed_delay, TK_EREJECTED),
    ROW(r_shut_rejected_arg_freed_once, TK_EREJECTED),
    ROW(r_shut_prestart, TK_ESTATE),
    ROW(r_shut_prestart_all, TK_ESTATE),
    ROW(r_shut_shutdown_again, TK_OK),
    ROW(r_shut_shutdown_now_returns_0, 0),
    ROW(r_shut_await, TK_OK),
    ROW(r_shut_purge_returns_0, 0),
    ROW(r_shut_predicates, TK_OK),
    ROW(r_shut_policy_discard, TK_OK),
    ROW(r_shut_policy_discard_oldest, TK_OK),
    ROW(r_shut_policy_caller_runs, TK_OK),
    ROW(r_shut_policy_custom_pretends_ok, TK_OK),
    ROW(r_shut_policy_custom_status, TK_ENOTSUP),
    ROW(r_decorate_refuses, TK_ENOTSUP),
    ROW(r_own_thread_future_get, TK_EDEADLK),
    ROW(r_own_thread_await_termination, TK_EDEADLK),
    ROW(r_own_thread_destroy, TK_EDEADLK),
};

/* ---- the wheel timer (wheel_timer.h) ----------------------------------------------------------
 */

static void wt_noop(tk_timeout *timeout, void *arg) {
    (void)timeout;
    (void)arg;
}

static void wt_options(fixture *f, tk_wheel_timer_options *o) {
    tk_wheel_timer_options_init(o);
    tk_queue_config_init_for(&o->queue, f->engine);
}

/* Creates a timer on the fixture's engine, or returns NULL. */
static tk_wheel_timer *wt_make(fixture *f) {
    tk_wheel_timer_options o;
    wt_options(f, &o);
    tk_wheel_timer *t = NULL;
    return tk_wheel_timer_create(&o, &t) == TK_OK ? t : NULL;
}

#define WT_SENTINEL ((tk_timeout *)(uintptr_t)0x5e17e1)

/* A new_timeout call that must fail, with *out untouched. */
static int wt_fails_untouched(tk_wheel_timer *t, tk_timer_task_fn fn, int64_t delay) {
    tk_timeout *out = WT_SENTINEL;
    int rc = tk_wheel_timer_new_timeout(t, fn, NULL, delay, &out);
    if (rc == TK_OK) {
        tk_timeout_release(out);
        return TK_OK;
    }
    if (out != WT_SENTINEL) {
        side("*out was written on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_wt_options_init_null(fixture *f) {
    (void)f;
    return tk_wheel_timer_options_init(NULL);
}

static int r_wt_create_null_out(fixture *f) {
    tk_wheel_timer_options o;
    wt_options(f, &o);
    return tk_wheel_timer_create(&o, NULL);
}

static int r_wt_create_null_options_is_defaults(fixture *f) {
    (void)f;
    tk_wheel_timer *t = NULL;
    int rc = tk_wheel_timer_create(NULL, &t);
    if (rc == TK_OK)
        tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_create_param_out_of_range(fixture *f) {
    const tk_queue_ops *ops = f->engine;
    for (size_t i = 0; i < ops->param_count; i++) {
        if (ops->params[i].flags & TK_PARAM_ADAPTER)
            continue; /* the blocking adapter's: a timer ignores them */
        uint64_t badv[3];
        int nbad = tkt_param_bad_values(&ops->params[i], badv);
        for (int k = 0; k < nbad; k++) {
            tk_wheel_timer_options o;
            wt_options(f, &o);
            tkt_param_store(&o.queue, &ops->params[i], badv[k]);
            tk_wheel_timer *t = NULL;
            int rc = tk_wheel_timer_create(&o, &t);
            if (rc != TK_EINVAL) {
                side("%s=%llu: %s", ops->params[i].key, (unsigned long long)badv[k],
                     tk_status_name(rc));
                if (rc == TK_OK)
                    tk_wheel_timer_destroy(t);
                return rc == TK_OK ? SIDE_EFFECT : rc;
            }
            if (t != NULL) {
                side("*out set on failure");
                return SIDE_EFFECT;
            }
        }
    }
    return TK_EINVAL;
}

static int r_wt_create_coreless_engine(fixture *f) {
    tk_queue_ops coreless = *f->engine;
    coreless.core = NULL;
    tk_wheel_timer_options o;
    wt_options(f, &o);
    o.queue.engine = &coreless;
    tk_wheel_timer *t = NULL;
    int rc = tk_wheel_timer_create(&o, &t);
    if (rc == TK_OK)
        tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_create_past_max_instances(fixture *f) {
    tk_wheel_timer *a = wt_make(f);
    if (a == NULL)
        return TK_ENOMEM;
    tk_wheel_timer_options o;
    wt_options(f, &o);
    o.max_instances = tk_wheel_timer_instances();
    tk_wheel_timer *b = NULL;
    int rc = tk_wheel_timer_create(&o, &b);
    if (rc == TK_OK)
        tk_wheel_timer_destroy(b);
    tk_wheel_timer_destroy(a);
    return rc;
}

static int r_wt_start_null(fixture *f) {
    (void)f;
    return tk_wheel_timer_start(NULL);
}

static int r_wt_new_timeout_null_timer(fixture *f) {
    (void)f;
    return wt_fails_untouched(NULL, wt_noop, 0);
}

static int r_wt_new_timeout_null_fn(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    int rc = wt_fails_untouched(t, NULL, 0);
    tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_create_slack_negative(fixture *f) {
    tk_wheel_timer_options o;
    wt_options(f, &o);
    o.slack_ns = -1;
    tk_wheel_timer *t = (tk_wheel_timer *)(uintptr_t)0x5e17e1;
    int rc = tk_wheel_timer_create(&o, &t);
    if (rc == TK_OK) {
        tk_wheel_timer_destroy(t);
    } else if (t != NULL) {
        side("*out not NULL on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

/* A negative slack of one timeout: refused, *out untouched, nothing pending. */
static int r_wt_new_timeout_within_negative(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    if (t == NULL)
        return TK_ENOMEM;
    tk_timeout *out = WT_SENTINEL;
    int rc = tk_wheel_timer_new_timeout_within(t, wt_noop, NULL, 0, -1, &out);
    if (rc == TK_OK)
        tk_timeout_release(out);
    else if (out != WT_SENTINEL || tk_wheel_timer_pending(t) != 0)
        rc = SIDE_EFFECT;
    if (rc == SIDE_EFFECT)
        side("*out written or a timeout pending after a failure");
    tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_new_timeout_within_null_timer(fixture *f) {
    (void)f;
    tk_timeout *out = WT_SENTINEL;
    int rc = tk_wheel_timer_new_timeout_within(NULL, wt_noop, NULL, 0, 0, &out);
    return out == WT_SENTINEL ? rc : SIDE_EFFECT;
}

static void wt_count(tk_timeout *timeout, void *arg) {
    (void)timeout;
    atomic_fetch_add((atomic_long *)arg, 1);
}

static int r_wt_delay_int64_min_runs_now(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    atomic_long runs = 0;
    int rc = tk_wheel_timer_new_timeout(t, wt_count, &runs, INT64_MIN, NULL);
    if (rc == TK_OK && !rel_wait_at_least(&runs, 1, WAIT_NS)) {
        side("did not run");
        rc = SIDE_EFFECT;
    }
    tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_delay_int64_max_clamped(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    int rc = tk_wheel_timer_new_timeout(t, wt_noop, NULL, INT64_MAX, NULL);
    long back = tk_wheel_timer_stop(t, NULL, NULL);
    if (rc == TK_OK && back != 1) {
        side("stop handed back %ld", back);
        rc = SIDE_EFFECT;
    }
    tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_pending_null_is_0(fixture *f) {
    (void)f;
    return tk_wheel_timer_pending(NULL) == 0 ? TK_OK : SIDE_EFFECT;
}

static int r_wt_stop_null(fixture *f) {
    (void)f;
    return (int)tk_wheel_timer_stop(NULL, NULL, NULL);
}

static int r_wt_destroy_null(fixture *f) {
    (void)f;
    return tk_wheel_timer_destroy(NULL);
}

static int r_wt_handle_null(fixture *f) {
    (void)f;
    if (tk_timeout_cancel(NULL) || tk_timeout_is_cancelled(NULL) || tk_timeout_is_expired(NULL) ||
        tk_timeout_timer(NULL) != NULL || tk_timeout_arg(NULL) != NULL)
        return SIDE_EFFECT;
    return tk_timeout_release(NULL);
}

static int r_wt_stopped_new_timeout(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    tk_wheel_timer_stop(t, NULL, NULL);
    int rc = wt_fails_untouched(t, wt_noop, 0);
    tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_stopped_start(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    tk_wheel_timer_stop(t, NULL, NULL);
    int rc = tk_wheel_timer_start(t);
    tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_stopped_stop_again(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    tk_wheel_timer_new_timeout(t, wt_noop, NULL, INT64_MAX, NULL);
    tk_wheel_timer_stop(t, NULL, NULL);
    long rc = tk_wheel_timer_stop(t, NULL, NULL); /* hands back nothing more */
    tk_wheel_timer_destroy(t);
    return (int)rc;
}

typedef struct wt_self {
    atomic_int rc;
    atomic_long runs;
} wt_self;

static void wt_stop_self(tk_timeout *timeout, void *arg) {
    wt_self *s = arg;
    atomic_store(&s->rc, (int)tk_wheel_timer_stop(tk_timeout_timer(timeout), NULL, NULL));
    atomic_fetch_add(&s->runs, 1);
}

static int r_wt_own_thread_stop(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    wt_self s = {0};
    int rc = tk_wheel_timer_new_timeout(t, wt_stop_self, &s, 0, NULL);
    if (rc == TK_OK)
        rc = rel_wait_at_least(&s.runs, 1, WAIT_NS) ? atomic_load(&s.rc) : TK_ETIMEDOUT;
    tk_wheel_timer_destroy(t);
    return rc;
}

static int wt_failing_factory(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                              const char *name) {
    (void)ctx, (void)thread, (void)start, (void)arg, (void)name;
    return -1;
}

static int r_wt_thread_factory_fails(fixture *f) {
    tk_wheel_timer_options o;
    wt_options(f, &o);
    o.thread_factory = wt_failing_factory;
    tk_wheel_timer *t = NULL;
    if (tk_wheel_timer_create(&o, &t) != TK_OK)
        return TK_ENOMEM;
    int rc = wt_fails_untouched(t, wt_noop, 0);
    if (rc == TK_ETHREAD && tk_wheel_timer_pending(t) != 0) {
        side("pending after a failed start");
        rc = SIDE_EFFECT;
    }
    tk_wheel_timer_destroy(t);
    return rc;
}

/* ---- the wheel timer: new_timeout_spec, the geometry getters, cancelled hooks ---- */

/* A new_timeout_spec call that must fail: *out untouched, nothing pending. */
static int wt_spec_fails_untouched(fixture *f, const tk_timeout_spec *spec, bool null_timer) {
    tk_wheel_timer *t = null_timer ? NULL : wt_make(f);
    if (t == NULL && !null_timer)
        return TK_ENOMEM;
    tk_timeout *out = WT_SENTINEL;
    int rc = tk_wheel_timer_new_timeout_spec(t, spec, &out);
    if (rc == TK_OK)
        tk_timeout_release(out);
    else if (out != WT_SENTINEL || tk_wheel_timer_pending(t) != 0) {
        side("*out written or a timeout pending after a failure");
        rc = SIDE_EFFECT;
    }
    if (t != NULL)
        tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_spec_null_timer(fixture *f) {
    tk_timeout_spec spec = {.fn = wt_noop};
    return wt_spec_fails_untouched(f, &spec, true);
}

static int r_wt_spec_null_spec(fixture *f) {
    return wt_spec_fails_untouched(f, NULL, false);
}

static int r_wt_spec_null_fn(fixture *f) {
    tk_timeout_spec spec = {.cancelled = wt_noop};
    return wt_spec_fails_untouched(f, &spec, false);
}

static int r_wt_spec_unknown_flag(fixture *f) {
    tk_timeout_spec spec = {.fn = wt_noop, .flags = 0x80u};
    return wt_spec_fails_untouched(f, &spec, false);
}

static int r_wt_spec_negative_slack(fixture *f) {
    tk_timeout_spec spec = {.fn = wt_noop, .flags = TK_TIMEOUT_SLACK, .slack_ns = -1};
    return wt_spec_fails_untouched(f, &spec, false);
}

/* Without TK_TIMEOUT_SLACK, slack_ns is not read. */
static int r_wt_spec_slack_unread_without_flag(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    if (t == NULL)
        return TK_ENOMEM;
    tk_timeout_spec spec = {.fn = wt_noop, .delay_ns = HOUR_NS, .slack_ns = -1};
    int rc = tk_wheel_timer_new_timeout_spec(t, &spec, NULL);
    tk_wheel_timer_destroy(t);
    return rc;
}

static int r_wt_stopped_new_timeout_spec(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    if (t == NULL)
        return TK_ENOMEM;
    tk_wheel_timer_stop(t, NULL, NULL);
    tk_timeout_spec spec = {.fn = wt_noop, .cancelled = wt_noop};
    tk_timeout *out = WT_SENTINEL;
    int rc = tk_wheel_timer_new_timeout_spec(t, &spec, &out);
    if (rc == TK_OK)
        tk_timeout_release(out);
    else if (out != WT_SENTINEL)
        rc = SIDE_EFFECT;
    tk_wheel_timer_destroy(t);
    return rc;
}

/* NULL arguments: TK_EINVAL, and *out (when there is one) reads 0. */
static int r_wt_tick_ns_null(fixture *f) {
    int64_t tick = 7;
    int rc = tk_wheel_timer_tick_ns(NULL, &tick);
    if (tick != 0)
        return SIDE_EFFECT;
    tk_wheel_timer *t = wt_make(f);
    if (t == NULL)
        return TK_ENOMEM;
    int rc2 = tk_wheel_timer_tick_ns(t, NULL);
    tk_wheel_timer_destroy(t);
    return rc == rc2 ? rc : SIDE_EFFECT;
}

static int r_wt_slots_null(fixture *f) {
    size_t slots = 7;
    int rc = tk_wheel_timer_slots(NULL, &slots);
    if (slots != 0)
        return SIDE_EFFECT;
    tk_wheel_timer *t = wt_make(f);
    if (t == NULL)
        return TK_ENOMEM;
    int rc2 = tk_wheel_timer_slots(t, NULL);
    tk_wheel_timer_destroy(t);
    return rc == rc2 ? rc : SIDE_EFFECT;
}

/* On every engine: TK_OK with the engine's own value where it has the
 * parameter, TK_ENOTSUP and 0 where it has none; the same after stop. */
static int r_wt_geometry_per_engine(fixture *f) {
    tk_wheel_timer_options o;
    wt_options(f, &o);
    int64_t want_tick = 0, v = 0;
    size_t want_slots = 0;
    if (tk_queue_config_get_value(&o.queue, "tick", &v) == TK_OK)
        want_tick = v;
    if (tk_queue_config_get_value(&o.queue, "slots", &v) == TK_OK) {
        want_slots = 1;
        while (want_slots < (size_t)v)
            want_slots <<= 1;
    } else if (tk_queue_config_get_value(&o.queue, "bits", &v) == TK_OK) {
        want_slots = (size_t)1 << v;
    }
    tk_wheel_timer *t = wt_make(f);
    if (t == NULL)
        return TK_ENOMEM;
    int rc = TK_OK;
    for (int pass = 0; pass < 2 && rc == TK_OK; pass++) {
        int64_t tick = -1;
        size_t slots = 99;
        int rt = tk_wheel_timer_tick_ns(t, &tick), rs = tk_wheel_timer_slots(t, &slots);
        if (rt != (want_tick > 0 ? TK_OK : TK_ENOTSUP) || tick != want_tick ||
            rs != (want_slots > 0 ? TK_OK : TK_ENOTSUP) || slots != want_slots) {
            side("tick %s %lld, slots %s %zu", tk_status_name(rt), (long long)tick,
                 tk_status_name(rs), slots);
            rc = SIDE_EFFECT;
        }
        tk_wheel_timer_stop(t, NULL, NULL);
    }
    tk_wheel_timer_destroy(t);
    return rc;
}

static void wt_count_hook(tk_timeout *timeout, void *arg) {
    (void)timeout;
    atomic_fetch_add((atomic_long *)arg, 1);
}

/* A cancel of a timeout stop ended is false and calls no hook; nor does
 * stop's hand-back. */
static int r_wt_hook_not_for_stopped(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    if (t == NULL)
        return TK_ENOMEM;
    atomic_long hooks = 0;
    tk_timeout_spec spec = {
        .fn = wt_noop, .cancelled = wt_count_hook, .arg = &hooks, .delay_ns = HOUR_NS};
    tk_timeout *h = NULL;
    int rc = tk_wheel_timer_new_timeout_spec(t, &spec, &h);
    if (rc == TK_OK) {
        long back = tk_wheel_timer_stop(t, NULL, NULL);
        bool again = tk_timeout_cancel(h);
        if (back != 1 || again || atomic_load(&hooks) != 0) {
            side("stop %ld, cancel %d, hooks %ld", back, again, atomic_load(&hooks));
            rc = SIDE_EFFECT;
        }
        tk_timeout_release(h);
    }
    tk_wheel_timer_destroy(t);
    return rc;
}

/* A cancelled hook owns the timer's reference until it returns: the handle
 * released first, then the timer destroyed, the hook still runs once and
 * nothing leaks (ASan). */
static int r_wt_hook_outlives_handle_and_timer(fixture *f) {
    tk_wheel_timer *t = wt_make(f);
    if (t == NULL)
        return TK_ENOMEM;
    atomic_long hooks = 0;
    tk_timeout_spec spec = {
        .fn = wt_noop, .cancelled = wt_count_hook, .arg = &hooks, .delay_ns = HOUR_NS};
    tk_timeout *h = NULL;
    int rc = tk_wheel_timer_new_timeout_spec(t, &spec, &h);
    if (rc == TK_OK) {
        bool cancelled = tk_timeout_cancel(h);
        tk_timeout_release(h);
        tk_wheel_timer_destroy(t); /* the hook has run when destroy's stop returns */
        if (!cancelled || atomic_load(&hooks) != 1) {
            side("cancel %d, hooks %ld", cancelled, atomic_load(&hooks));
            rc = SIDE_EFFECT;
        }
    } else {
        tk_wheel_timer_destroy(t);
    }
    return rc;
}

static const row wheel_timer_rows[] = {
    ROW(r_wt_options_init_null, TK_EINVAL),
    ROW(r_wt_create_null_out, TK_EINVAL),
    ROW(r_wt_create_null_options_is_defaults, TK_OK),
    ROW(r_wt_create_param_out_of_range, TK_EINVAL),
    ROW(r_wt_create_coreless_engine, TK_ENOTSUP),
    ROW(r_wt_create_past_max_instances, TK_EFULL),
    ROW(r_wt_start_null, TK_EINVAL),
    ROW(r_wt_new_timeout_null_timer, TK_EINVAL),
    ROW(r_wt_new_timeout_null_fn, TK_EINVAL),
    ROW(r_wt_create_slack_negative, TK_EINVAL),
    ROW(r_wt_new_timeout_within_negative, TK_EINVAL),
    ROW(r_wt_new_timeout_within_null_timer, TK_EINVAL),
    ROW(r_wt_delay_int64_min_runs_now, TK_OK),
    ROW(r_wt_delay_int64_max_clamped, TK_OK),
    ROW(r_wt_pending_null_is_0, TK_OK),
    ROW(r_wt_stop_null, TK_EINVAL),
    ROW(r_wt_destroy_null, TK_EINVAL),
    ROW(r_wt_handle_null, TK_EINVAL),
    ROW(r_wt_stopped_new_timeout, TK_ESTATE),
    ROW(r_wt_stopped_new_timeout_spec, TK_ESTATE),
    ROW(r_wt_stopped_start, TK_ESTATE),
    ROW(r_wt_stopped_stop_again, 0),
    ROW(r_wt_own_thread_stop, TK_EDEADLK),
    ROW(r_wt_thread_factory_fails, TK_ETHREAD),
    ROW(r_wt_spec_null_timer, TK_EINVAL),
    ROW(r_wt_spec_null_spec, TK_EINVAL),
    ROW(r_wt_spec_null_fn, TK_EINVAL),
    ROW(r_wt_spec_unknown_flag, TK_EINVAL),
    ROW(r_wt_spec_negative_slack, TK_EINVAL),
    ROW(r_wt_spec_slack_unread_without_flag, TK_OK),
    ROW(r_wt_tick_ns_null, TK_EINVAL),
    ROW(r_wt_slots_null, TK_EINVAL),
    ROW(r_wt_geometry_per_engine, TK_OK),
    ROW(r_wt_hook_not_for_stopped, TK_OK),
    ROW(r_wt_hook_outlives_handle_and_timer, TK_OK),
};

/* ---- tk_loop: slack ---- */

/* A loop on the fixture's engine, or NULL. */
static tk_loop *loop_make(fixture *f) {
    tk_queue_config cfg;
    tk_queue_config_init_for(&cfg, f->engine);
    tk_loop *l = NULL;
    return tk_loop_create(&cfg, tk_clock_now_ns(), &l) == TK_OK ? l : NULL;
}

/* A negative slack is refused and the node is left as it was: not held,
 * its key unchanged. */
static int r_loop_add_within_negative(fixture *f) {
    tk_loop *l = loop_make(f);
    if (l == NULL)
        return TK_ENOMEM;
    tk_node n;
    memset(&n, 0, sizeof(n));
    n.deadline_ns = 7;
    n.seq = 9;
    n.slack_ns = 11;
    int rc = tk_loop_add_within(l, &n, 100, -1);
    if (rc != TK_OK &&
        (tk_loop_count(l) != 0 || n.deadline_ns != 7 || n.seq != 9 || n.slack_ns != 11)) {
        side("the node or the loop changed");
        rc = SIDE_EFFECT;
    }
    tk_loop_destroy(l);
    return rc;
}

static int r_loop_add_within_int64_min(fixture *f) {
    tk_loop *l = loop_make(f);
    if (l == NULL)
        return TK_ENOMEM;
    tk_node n;
    memset(&n, 0, sizeof(n));
    int rc = tk_loop_add_within(l, &n, 100, INT64_MIN);
    tk_loop_destroy(l);
    return rc;
}

static int r_loop_add_within_null_loop(fixture *f) {
    (void)f;
    tk_node n;
    memset(&n, 0, sizeof(n));
    return tk_loop_add_within(NULL, &n, 0, 0);
}

static int r_loop_add_within_null_node(fixture *f) {
    tk_loop *l = loop_make(f);
    if (l == NULL)
        return TK_ENOMEM;
    int rc = tk_loop_add_within(l, NULL, 0, 0);
    tk_loop_destroy(l);
    return rc;
}

/* A huge slack is valid: the window's end saturates; latest stays >= next
 * (which may lie before the deadline: a lower bound, engine.h). */
static int r_loop_add_within_int64_max_ok(fixture *f) {
    tk_loop *l = loop_make(f);
    if (l == NULL)
        return TK_ENOMEM;
    tk_node n;
    memset(&n, 0, sizeof(n));
    int64_t d = tk_clock_now_ns() + HOUR_NS;
    int rc = tk_loop_add_within(l, &n, d, INT64_MAX);
    int64_t next = 0, latest = 0;
    if (rc == TK_OK &&
        (tk_loop_next(l, &next) != TK_OK || tk_loop_latest(l, &latest) != TK_OK || latest < next)) {
        side("next %lld, latest %lld", (long long)next, (long long)latest);
        rc = SIDE_EFFECT;
    }
    tk_loop_destroy(l);
    return rc;
}

static int r_loop_latest_null_loop(fixture *f) {
    (void)f;
    int64_t when = 0;
    return tk_loop_latest(NULL, &when);
}

static int r_loop_latest_null_out(fixture *f) {
    tk_loop *l = loop_make(f);
    if (l == NULL)
        return TK_ENOMEM;
    int rc = tk_loop_latest(l, NULL);
    tk_loop_destroy(l);
    return rc;
}

static int r_loop_latest_empty(fixture *f) {
    tk_loop *l = loop_make(f);
    if (l == NULL)
        return TK_ENOMEM;
    int64_t when = 0;
    int rc = tk_loop_latest(l, &when);
    tk_loop_destroy(l);
    return rc;
}

static const row loop_rows[] = {
    ROW(r_loop_add_within_negative, TK_EINVAL),  ROW(r_loop_add_within_int64_min, TK_EINVAL),
    ROW(r_loop_add_within_null_loop, TK_EINVAL), ROW(r_loop_add_within_null_node, TK_EINVAL),
    ROW(r_loop_add_within_int64_max_ok, TK_OK),  ROW(r_loop_latest_null_loop, TK_EINVAL),
    ROW(r_loop_latest_null_out, TK_EINVAL),      ROW(r_loop_latest_empty, TK_ENOENT),
};

/* ---- future states, abort_get, invoke_all / invoke_any ---- */

static tk_task_spec spec_of(tk_task_fn fn, void *arg, int64_t delay_ns) {
    tk_task_spec s;
    memset(&s, 0, sizeof(s));
    s.fn = fn;
    s.arg = arg;
    s.arg_free = count_free;
    s.kind = TK_TASK_ONE_SHOT;
    s.delay_ns = delay_ns;
    return s;
}

static int r_future_state_null(fixture *f) {
    (void)f;
    return tk_future_state(NULL) == TK_TASK_STATE_INVALID ? TK_OK : SIDE_EFFECT;
}

static int r_task_state_name_unknown(fixture *f) {
    (void)f;
    const char *a = tk_task_state_name((tk_task_state)99);
    const char *b = tk_task_state_name(TK_TASK_STATE_INVALID);
    if (a == NULL || b == NULL || strcmp(a, "UNKNOWN") != 0 || strcmp(b, "UNKNOWN") != 0)
        return SIDE_EFFECT;
    return TK_OK;
}

static int r_result_now_null(fixture *f) {
    (void)f;
    void *r = NULL;
    return tk_future_result_now(NULL, &r);
}

static int r_exception_now_null(fixture *f) {
    (void)f;
    int st = 0;
    return tk_future_exception_now(NULL, &st);
}

static int r_abort_get_null(fixture *f) {
    (void)f;
    return tk_future_abort_get(NULL);
}

/* result_now / exception_now on a queued task: TK_ESTATE, outputs untouched. */
static int r_result_now_pending(fixture *f, tk_future *fu) {
    (void)f;
    void *r = (void *)&r;
    int st = 42;
    int rc = tk_future_result_now(fu, &r);
    int erc = tk_future_exception_now(fu, &st);
    int nrc = tk_future_exception_now(fu, NULL);
    tk_task_state s = tk_future_state(fu);
    if (r != (void *)&r || st != 42 || erc != TK_ESTATE || nrc != TK_EINVAL ||
        s != TK_TASK_RUNNING) {
        side("outputs written, exception_now %s / NULL %s, state %s", tk_status_name(erc),
             tk_status_name(nrc), tk_task_state_name(s));
        return SIDE_EFFECT;
    }
    return rc;
}

/* exception_now on a task that succeeded: TK_ESTATE; abort_get with nobody
 * waiting: TK_OK, and the next get still returns the result. */
static int r_exception_now_success(fixture *f) {
    tk_future *fu = NULL;
    int rc = tk_executor_submit(f->live, t_result, (void *)f, &fu);
    if (rc != TK_OK)
        return rc;
    int grc = tk_future_get_timeout(fu, WAIT_NS, NULL);
    int st = 42;
    rc = tk_future_exception_now(fu, &st);
    int arc = tk_future_abort_get(fu);
    void *r = NULL;
    int grc2 = tk_future_get(fu, &r);
    tk_future_release(fu);
    if (grc != TK_OK || st != 42 || arc != TK_OK || grc2 != TK_OK || r != (void *)f) {
        side("get %s, abort %s, get after abort %s", tk_status_name(grc), tk_status_name(arc),
             tk_status_name(grc2));
        return SIDE_EFFECT;
    }
    return rc;
}

/* invoke_all that must fail before scheduling anything: nothing ran, no
 * arg_free, every futures[i] NULL. */
static int invoke_all_fails_clean(fixture *f, tk_executor *ex, const tk_task_spec *specs, size_t n,
                                  int64_t timeout_ns) {
    tk_future *fs[2] = {SENTINEL, SENTINEL};
    long frees = atomic_load(&f->frees), runs = atomic_load(&f->runs);
    int rc = tk_executor_invoke_all_timeout(ex, specs, n, timeout_ns, fs);
    rel_sleep_ns(2 * TK_NS_PER_MS);
    for (size_t i = 0; i < n && i < 2; i++) {
        if (rc == TK_OK) {
            tk_future_release(fs[i]);
        } else if (fs[i] != NULL) {
            side("futures[%zu] not NULL on failure", i);
            return SIDE_EFFECT;
        }
    }
    if (rc != TK_OK && (atomic_load(&f->frees) != frees || atomic_load(&f->runs) != runs)) {
        side("a task of a failed call ran or was freed");
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_invoke_all_null_ex(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    return invoke_all_fails_clean(f, NULL, s, 1, -1);
}

static int r_invoke_all_null_specs(fixture *f) {
    return invoke_all_fails_clean(f, f->live, NULL, 1, -1);
}

static int r_invoke_all_null_futures(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    return tk_executor_invoke_all(f->live, s, 1, NULL);
}

static int r_invoke_all_null_fn_second(fixture *f) {
    tk_task_spec s[2] = {spec_of(t_count, &f->runs, 0), spec_of(NULL, NULL, 0)};
    return invoke_all_fails_clean(f, f->live, s, 2, -1);
}

static int r_invoke_all_periodic_spec(fixture *f) {
    tk_task_spec s[2] = {spec_of(t_count, &f->runs, 0), spec_of(t_count, &f->runs, 0)};
    s[1].kind = TK_TASK_FIXED_DELAY;
    s[1].period_ns = TK_NS_PER_MS;
    return invoke_all_fails_clean(f, f->live, s, 2, -1);
}

static int r_invoke_all_bad_flags(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    s[0].flags = 0x80u;
    return invoke_all_fails_clean(f, f->live, s, 1, -1);
}

static int r_invoke_all_zero_tasks(fixture *f) {
    return tk_executor_invoke_all(f->live, NULL, 0, NULL);
}

/* Shut down: the first task is rejected (its arg_free runs, as for any
 * rejected task), the second is never given to the executor. */
static int r_invoke_all_shut(fixture *f) {
    tk_task_spec s[2] = {spec_of(t_count, &f->runs, 0), spec_of(t_count, &f->runs, 0)};
    tk_future *fs[2] = {SENTINEL, SENTINEL};
    long frees = atomic_load(&f->frees);
    int rc = tk_executor_invoke_all(f->shut, s, 2, fs);
    if (fs[0] != NULL || fs[1] != NULL || atomic_load(&f->frees) != frees + 1) {
        side("futures not NULL, or arg_free ran %ld times (want 1)",
             atomic_load(&f->frees) - frees);
        return SIDE_EFFECT;
    }
    return rc;
}

/* Timeouts at the edges: 0 (cancel whatever is not done at once), INT64_MAX
 * and INT64_MIN; every future comes back done. */
static int r_invoke_all_timeout_edges(fixture *f) {
    int64_t timeouts[3] = {0, INT64_MAX, INT64_MIN};
    for (int k = 0; k < 3; k++) {
        tk_task_spec s[2] = {spec_of(t_count, &f->runs, 0), spec_of(t_noop, NULL, HOUR_NS)};
        if (k != 0)
            s[1].delay_ns = 0; /* INT64_MAX, or < 0 (no timeout): both must end */
        tk_future *fs[2] = {NULL, NULL};
        int rc = tk_executor_invoke_all_timeout(f->live, s, 2, timeouts[k], fs);
        if (rc != TK_OK)
            return rc;
        bool done = tk_future_is_done(fs[0]) && tk_future_is_done(fs[1]);
        tk_future_release(fs[0]);
        tk_future_release(fs[1]);
        if (!done) {
            side("timeout %lld: a future not done on return", (long long)timeouts[k]);
            return SIDE_EFFECT;
        }
    }
    return TK_OK;
}

static int r_invoke_any_null_ex(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    return tk_executor_invoke_any(NULL, s, 1, NULL);
}

static int r_invoke_any_null_specs(fixture *f) {
    return tk_executor_invoke_any(f->live, NULL, 1, NULL);
}

static int r_invoke_any_zero_tasks(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    return tk_executor_invoke_any(f->live, s, 0, NULL);
}

static int r_invoke_any_null_fn(fixture *f) {
    tk_task_spec s[2] = {spec_of(t_noop, NULL, HOUR_NS), spec_of(NULL, NULL, 0)};
    return tk_executor_invoke_any(f->live, s, 2, NULL);
}

static int r_invoke_any_periodic_spec(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    s[0].kind = TK_TASK_FIXED_RATE;
    s[0].period_ns = TK_NS_PER_MS;
    return tk_executor_invoke_any(f->live, s, 1, NULL);
}

static int r_invoke_any_huge_n(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    return tk_executor_invoke_any(f->live, s, SIZE_MAX, NULL);
}

static int r_invoke_any_shut(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    void *r = (void *)&r;
    int rc = tk_executor_invoke_any(f->shut, s, 1, &r);
    if (r != (void *)&r) {
        side("*result written on failure");
        return SIDE_EFFECT;
    }
    return rc;
}

/* Timeouts at the edges: 0 on a task an hour away times out at once; a
 * negative one waits for ever (here: for a quick task). */
static int r_invoke_any_timeout_zero(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_noop, NULL, HOUR_NS)};
    void *r = (void *)&r;
    int rc = tk_executor_invoke_any_timeout(f->live, s, 1, 0, &r);
    tk_task_spec q[1] = {spec_of(t_result, (void *)f, 0)};
    void *r2 = NULL;
    int rc2 = tk_executor_invoke_any_timeout(f->live, q, 1, INT64_MIN, &r2);
    if (r != (void *)&r || rc2 != TK_OK || r2 != (void *)f) {
        side("*result written on failure, or the untimed call gave %s", tk_status_name(rc2));
        return SIDE_EFFECT;
    }
    return rc;
}

/* invoke_any_cause with bad input: the status of invoke_any, *index and
 * *task_status written on every return (n, or the bad spec; 0), *result
 * untouched, nothing ran. */
static int cause_check(int rc, size_t index, size_t want_index, int status, void *r, void *orig) {
    if (index != want_index || status != 0 || r != orig) {
        side("index %zu (want %zu), task status %d, *result written", index, want_index, status);
        return SIDE_EFFECT;
    }
    return rc;
}

static int r_invoke_any_cause_null_ex(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    size_t index = 99;
    int st = 99;
    void *r = (void *)&r;
    int rc = tk_executor_invoke_any_cause(NULL, s, 1, -1, &r, &index, &st);
    return cause_check(rc, index, 1, st, r, (void *)&r);
}

static int r_invoke_any_cause_null_specs(fixture *f) {
    size_t index = 99;
    int st = 99;
    void *r = (void *)&r;
    int rc = tk_executor_invoke_any_cause(f->live, NULL, 3, -1, &r, &index, &st);
    return cause_check(rc, index, 3, st, r, (void *)&r);
}

static int r_invoke_any_cause_zero_tasks(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    size_t index = 99;
    int st = 99;
    int rc = tk_executor_invoke_any_cause(f->live, s, 0, -1, NULL, &index, &st);
    return cause_check(rc, index, 0, st, NULL, NULL);
}

/* The first bad spec is named (the second here; the third is bad too). */
static int r_invoke_any_cause_names_bad_spec(fixture *f) {
    tk_task_spec s[3] = {spec_of(t_noop, NULL, HOUR_NS), spec_of(NULL, NULL, 0),
                         spec_of(t_noop, NULL, 0)};
    s[2].kind = TK_TASK_FIXED_DELAY;
    size_t index = 99;
    int st = 99;
    int rc = tk_executor_invoke_any_cause(f->live, s, 3, -1, NULL, &index, &st);
    return cause_check(rc, index, 1, st, NULL, NULL);
}

static int r_invoke_any_cause_huge_n(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_count, &f->runs, 0)};
    size_t index = 99;
    int st = 99;
    int rc = tk_executor_invoke_any_cause(f->live, s, SIZE_MAX, -1, NULL, &index, &st);
    return cause_check(rc, index, SIZE_MAX, st, NULL, NULL);
}

/* Rejected (shut down): the task that could not be scheduled is named. */
static int r_invoke_any_cause_shut(fixture *f) {
    tk_task_spec s[2] = {spec_of(t_count, &f->runs, 0), spec_of(t_count, &f->runs, 0)};
    size_t index = 99;
    int st = 99;
    void *r = (void *)&r;
    int rc = tk_executor_invoke_any_cause(f->shut, s, 2, -1, &r, &index, &st);
    return cause_check(rc, index, 0, st, r, (void *)&r);
}

/* NULL outputs are allowed. */
static int r_invoke_any_cause_null_outputs(fixture *f) {
    tk_task_spec s[1] = {spec_of(t_noop, NULL, HOUR_NS)};
    return tk_executor_invoke_any_cause(f->live, s, 1, 0, NULL, NULL, NULL);
}

static const row invoke_rows[] = {
    ROW(r_future_state_null, TK_OK),
    ROW(r_task_state_name_unknown, TK_OK),
    ROW(r_result_now_null, TK_EINVAL),
    ROW(r_exception_now_null, TK_EINVAL),
    ROW(r_abort_get_null, TK_EINVAL),
    ROW_FAR(r_result_now_pending, TK_ESTATE),
    ROW(r_exception_now_success, TK_ESTATE),
    ROW(r_invoke_all_null_ex, TK_EINVAL),
    ROW(r_invoke_all_null_specs, TK_EINVAL),
    ROW(r_invoke_all_null_futures, TK_EINVAL),
    ROW(r_invoke_all_null_fn_second, TK_EINVAL),
    ROW(r_invoke_all_periodic_spec, TK_EINVAL),
    ROW(r_invoke_all_bad_flags, TK_EINVAL),
    ROW(r_invoke_all_zero_tasks, TK_OK),
    ROW(r_invoke_all_shut, TK_EREJECTED),
    ROW(r_invoke_all_timeout_edges, TK_OK),
    ROW(r_invoke_any_null_ex, TK_EINVAL),
    ROW(r_invoke_any_null_specs, TK_EINVAL),
    ROW(r_invoke_any_zero_tasks, TK_EINVAL),
    ROW(r_invoke_any_null_fn, TK_EINVAL),
    ROW(r_invoke_any_periodic_spec, TK_EINVAL),
    ROW(r_invoke_any_huge_n, TK_ENOMEM),
    ROW(r_invoke_any_shut, TK_EREJECTED),
    ROW(r_invoke_any_timeout_zero, TK_ETIMEDOUT),
    ROW(r_invoke_any_cause_null_ex, TK_EINVAL),
    ROW(r_invoke_any_cause_null_specs, TK_EINVAL),
    ROW(r_invoke_any_cause_zero_tasks, TK_EINVAL),
    ROW(r_invoke_any_cause_names_bad_spec, TK_EINVAL),
    ROW(r_invoke_any_cause_huge_n, TK_ENOMEM),
    ROW(r_invoke_any_cause_shut, TK_EREJECTED),
    ROW(r_invoke_any_cause_null_outputs, TK_ETIMEDOUT),
};

int main(int argc, char **argv) {
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_clock_registry),
        cmocka_unit_test(test_queue_ops_bad_input),
        TABLE_TEST("test_executor_bad_input", executor_rows),
        TABLE_TEST("test_spec_bad_input", spec_rows),
        TABLE_TEST("test_wheel_timer_bad_input", wheel_timer_rows),
        TABLE_TEST("test_invoke_bad_input", invoke_rows),
        TABLE_TEST("test_loop_bad_input", loop_rows),
    };
    return cmocka_run_group_tests_name("reliability_bad_input", tests, NULL, NULL);
}
