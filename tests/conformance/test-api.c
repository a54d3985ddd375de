/* SPDX-License-Identifier: MIT */
/* Conformance: status codes, the engine registry, options and every bad-input status. */
#define _GNU_SOURCE
#include <string.h>

#include "conformance.h"
#include "param-store.h"

static void status_strings_cover_every_code(void **state) {
    (void)state;
    static const struct {
        int code;
        const char *name;
        const char *text;
    } table[] = {
#define ROW(name, value, text) {TK_##name, "TK_" #name, text},
        TK_STATUS_MAP(ROW)
#undef ROW
    };
    size_t n = sizeof(table) / sizeof(table[0]);
    assert_int_equal(n, 19);
    for (size_t i = 0; i < n; i++) {
        assert_true(table[i].code <= 0);
        assert_string_equal(tk_status_name(table[i].code), table[i].name);
        assert_string_equal(tk_strerror(table[i].code), table[i].text);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(table[i].code, table[j].code);
            assert_string_not_equal(tk_strerror(table[i].code), tk_strerror(table[j].code));
        }
    }
    const int unknown[] = {1, 42, -19, -1000, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        assert_string_equal(tk_strerror(unknown[i]), "unknown status");
        assert_non_null(tk_status_name(unknown[i]));
        for (size_t j = 0; j < n; j++)
            assert_string_not_equal(tk_status_name(unknown[i]), table[j].name);
    }
}

static void registry_lists_every_engine(void **state) {
    ct *t = CT(state);
    size_t n = tk_engine_count();
    assert_true(n >= 2);
    bool found_self = false, found_heap = false, found_wheel = false;
    for (size_t i = 0; i < n; i++) {
        const tk_queue_ops *ops = tk_engine_at(i);
        assert_non_null(ops);
        assert_non_null(ops->name);
        assert_ptr_equal(tk_engine_by_name(ops->name), ops);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(tk_engine_at(j)->name, ops->name);
        found_self |= ops == t->eng->ops;
        found_heap |= ops == tk_engine_heap();
        found_wheel |= ops == tk_engine_wheel();
    }
    assert_true(found_self && found_heap && found_wheel);
    assert_null(tk_engine_at(n));
    assert_null(tk_engine_at(n + 100));
    assert_null(tk_engine_by_name(NULL));
    assert_null(tk_engine_by_name("no-such-engine"));
    assert_null(tk_engine_by_name(""));
    assert_string_equal(tk_engine_heap()->name, "heap");
    assert_string_equal(tk_engine_wheel()->name, "wheel");
    /* Every op an executor calls is there. */
    const tk_queue_ops *o = t->eng->ops;
    assert_true(o->create && o->destroy && o->offer && o->take && o->poll && o->remove &&
                o->remove_first && o->peek && o->size && o->drain && o->remove_if && o->close &&
                o->check);
}

static void default_engine_is_the_build_choice(void **state) {
    ct *t = CT(state);
    const tk_queue_ops *def = tk_engine_default();
    assert_non_null(def);
    assert_string_equal(def->name, conf_default_engine_name());
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.engine = NULL;
    opt.engine_config = NULL;
    tk_executor *ex = ct_create(t, &opt);
    assert_ptr_equal(tk_executor_engine(ex), def);
    tk_executor *ex2 = ct_executor(t, 1);
    assert_ptr_equal(tk_executor_engine(ex2), t->eng->ops);
    assert_null(tk_executor_engine(NULL));
}

static void names_pool_states_distinctly(void **state) {
    (void)state;
    const tk_pool_state st[] = {TK_POOL_RUNNING, TK_POOL_SHUTDOWN, TK_POOL_STOP, TK_POOL_TIDYING,
                                TK_POOL_TERMINATED};
    for (size_t i = 0; i < 5; i++) {
        const char *name = tk_pool_state_name(st[i]);
        assert_non_null(name);
        assert_true(name[0] != '\0');
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(tk_pool_state_name(st[j]), name);
    }
    assert_non_null(tk_pool_state_name((tk_pool_state)99));
    assert_int_equal(tk_executor_state(NULL), TK_POOL_TERMINATED);
}

static void queue_config_init_sets_documented_defaults(void **state) {
    tk_queue_config cfg;
    memset(&cfg, 0x5a, sizeof(cfg));
    assert_int_equal(tk_queue_config_init(&cfg), TK_OK);
    assert_null(cfg.allocator);
    assert_null(cfg.thread_name);
    assert_int_equal(cfg.spin_ns, 0);
    assert_int_equal(cfg.max_pending, 0);
    assert_null(cfg.engine); /* every engine's defaults */
    assert_int_equal(tk_queue_config_init(NULL), TK_EINVAL);
    /* tk_queue_config_init_for(): this engine's table defaults, key by key */
    const tk_queue_ops *ops = CT(state)->eng->ops;
    memset(&cfg, 0x5a, sizeof(cfg));
    assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
    assert_ptr_equal(cfg.engine, ops);
    for (size_t i = 0; i < ops->param_count; i++) {
        int64_t v = -1;
        assert_int_equal(tk_queue_config_get_value(&cfg, ops->params[i].key, &v), TK_OK);
        assert_int_equal(v, ops->params[i].def);
    }
    assert_int_equal(tk_queue_config_init_for(NULL, ops), TK_EINVAL);
    assert_int_equal(tk_queue_config_init_for(&cfg, NULL), TK_EINVAL);
}

static void deadlines_saturate_instead_of_overflowing(void **state) {
    (void)state;
    int64_t now = tk_clock_now_ns();
    assert_true(now > 0);
    assert_true(tk_clock_now_ns() >= now);
    assert_int_equal(tk_deadline_after_ns(now, INT64_MAX), INT64_MAX);
    assert_int_equal(tk_deadline_after_ns(now, INT64_MAX - now + 1), INT64_MAX);
    assert_int_equal(tk_deadline_after_ns(now, 5), now + 5);
    assert_int_equal(tk_deadline_after_ns(now, 0), now);
    assert_int_equal(tk_deadline_after_ns(now, -1), now);
    assert_int_equal(tk_deadline_after_ns(now, INT64_MIN), now);
}

static void options_init_sets_documented_defaults(void **state) {
    (void)state;
    tk_executor_options opt;
    memset(&opt, 0x5a, sizeof(opt));
    assert_int_equal(tk_executor_options_init(&opt), TK_OK);
    assert_int_equal(opt.core_pool_size, 1); /* as tk_executor_create(NULL) */
    assert_null(opt.engine);
    assert_null(opt.engine_config);
    assert_null(opt.thread_name_prefix);
    assert_null(opt.thread_factory);
    assert_null(opt.thread_factory_ctx);
    assert_int_equal(opt.rejection, TK_REJECT_ABORT);
    assert_null(opt.reject);
    assert_null(opt.reject_ctx);
    assert_null(opt.hooks.before_execute);
    assert_null(opt.hooks.after_execute);
    assert_null(opt.hooks.terminated);
    assert_null(opt.hooks.periodic_failed);
    assert_null(opt.hooks.decorate);
    assert_null(opt.hooks.ctx);
    assert_false(opt.remove_on_cancel);
    assert_false(opt.continue_periodic_after_shutdown);
    assert_true(opt.execute_delayed_after_shutdown);
    assert_int_equal(opt.timer_slack_ns, -1);
    assert_null(opt.allocator);
    assert_int_equal(tk_executor_options_init(NULL), TK_EINVAL);
}

static void create_with_null_options_uses_defaults(void **state) {
    ct *t = CT(state);
    tk_executor *ex = NULL;
    assert_int_equal(tk_executor_create(NULL, &ex), TK_OK);
    assert_non_null(ex);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
    ex = NULL;
    assert_int_equal(tk_executor_create(NULL, &ex), TK_OK);
    ct_adopt(t, ex);
    assert_ptr_equal(tk_executor_engine(ex), tk_engine_default());
    assert_int_equal(tk_executor_state(ex), TK_POOL_RUNNING);
    assert_false(tk_executor_get_remove_on_cancel(ex));
    assert_false(tk_executor_get_continue_periodic_after_shutdown(ex));
    assert_true(tk_executor_get_execute_delayed_after_shutdown(ex));
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.pool_size, 0); /* threads start lazily */
    counter *c = counter_new(t);
    for (int i = 0; i < 4; i++)
        assert_int_equal(tk_executor_execute(ex, counter_fn, c), TK_OK);
    assert_true(wait_ge(&c->runs, 4, CONF_WAIT));
    s = stats_of(ex);
    assert_int_equal(s.largest_pool_size, 1); /* core_pool_size 1 */
    ct_destroy(t, ex);
}

/* Asserts that create fails with `want`, leaves *out alone, and leaks nothing
 * if it wrongly succeeds. */
static void expect_create(ct *t, const tk_executor_options *opt, int want) {
    tk_executor *const sentinel = (tk_executor *)&sentinel;
    tk_executor *ex = sentinel;
    int rc = tk_executor_create(opt, &ex);
    if (rc == TK_OK && ex != sentinel && ex != NULL)
        ct_adopt(t, ex);
    assert_string_equal(tk_status_name(rc), tk_status_name(want));
    if (rc != TK_OK)
        assert_ptr_equal(ex, sentinel);
}

static void create_rejects_bad_options(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;

    ct_options(t, &opt, 1);
    assert_int_equal(tk_executor_create(&opt, NULL), TK_EINVAL);

    ct_options(t, &opt, TK_EXECUTOR_MAX_THREADS + 1);
    expect_create(t, &opt, TK_EINVAL);
    ct_options(t, &opt, UINT32_MAX);
    expect_create(t, &opt, TK_EINVAL);

    ct_options(t, &opt, 1);
    opt.rejection = TK_REJECT_CUSTOM;
    opt.reject = NULL;
    expect_create(t, &opt, TK_EINVAL);

    ct_options(t, &opt, 1);
    opt.rejection = (tk_rejection_policy)99;
    expect_create(t, &opt, TK_EINVAL);
    ct_options(t, &opt, 1);
    opt.rejection = (tk_rejection_policy)-1;
    expect_create(t, &opt, TK_EINVAL);

    /* An allocator without functions is not an allocator. */
    tk_allocator broken = {NULL, NULL, NULL};
    ct_options(t, &opt, 1);
    opt.allocator = &broken;
    expect_create(t, &opt, TK_EINVAL);

    /* The limits themselves are fine; threads start lazily. */
    ct_options(t, &opt, TK_EXECUTOR_MAX_THREADS);
    expect_create(t, &opt, TK_OK);
    ct_options(t, &opt, 0);
    expect_create(t, &opt, TK_OK);
}

static void null_option_fields_mean_defaults(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;
    ct_options(t, &opt, 2);
    opt.engine_config = NULL;
    opt.thread_name_prefix = NULL;
    opt.thread_factory = NULL;
    opt.thread_factory_ctx = (void *)&opt; /* ignored without a factory */
    opt.allocator = NULL;
    opt.hooks.ctx = (void *)&opt; /* no hooks: ctx unused */
    opt.rejection = TK_REJECT_DISCARD;
    opt.reject = NULL; /* only CUSTOM needs it */
    tk_executor *ex = ct_create(t, &opt);
    assert_ptr_equal(tk_executor_engine(ex), t->eng->ops);
    counter *c = counter_new(t);
    tk_future *f = ct_schedule(t, ex, counter_fn, c, MS(2));
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(&c->runs), 1);
}

static void engine_config_is_validated_at_create(void **state) {
    ct *t = CT(state);
    tk_executor_options opt;
    tk_queue_config cfg;
    tk_executor *ex;
    /* Every parameter of the engine's table, set below its minimum or above
     * its maximum straight in the config (as a caller writing the struct
     * could), makes create fail. */
    const tk_queue_ops *ops = t->eng->ops;
    size_t refused = 0;
    for (size_t i = 0; i < ops->param_count; i++) {
        uint64_t bad[3];
        int nbad = tkt_param_bad_values(&ops->params[i], bad);
        for (int k = 0; k < nbad; k++) {
            cfg = t->eng->config;
            tkt_param_store(&cfg, &ops->params[i], bad[k]);
            ct_options(t, &opt, 1);
            opt.engine_config = &cfg;
            expect_create(t, &opt, TK_EINVAL);
            refused++;
        }
    }
    /* every engine has a bounded parameter: spin is at most 1 s */
    assert_true(refused >= 1);
    /* a config that holds another engine's parameters is refused too */
    for (size_t e = 0; e < tk_engine_count(); e++) {
        if (tk_engine_at(e) == ops)
            continue;
        assert_int_equal(tk_queue_config_init_for(&cfg, tk_engine_at(e)), TK_OK);
        ct_options(t, &opt, 1);
        opt.engine_config = &cfg; /* opt.engine stays this engine */
        expect_create(t, &opt, TK_EINVAL);
    }
    /* Zero fields mean "the engine's default" (queue.h), for every engine. */
    memset(&cfg, 0, sizeof(cfg));
    ct_options(t, &opt, 1);
    opt.engine_config = &cfg;
    ex = ct_create(t, &opt);
    counter *c = counter_new(t);
    assert_int_equal(tk_executor_schedule(ex, counter_fn, c, MS(1), NULL), TK_OK);
    assert_true(wait_ge(&c->runs, 1, CONF_WAIT));
}

static int never_fn(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static void scheduling_rejects_bad_input(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    atomic_int *ran = ct_calloc(t, 1, sizeof(atomic_int));
    tk_future *const sentinel = (tk_future *)ran;
    tk_future *f = sentinel;

    assert_int_equal(tk_executor_execute(NULL, never_fn, ran), TK_EINVAL);
    assert_int_equal(tk_executor_execute(ex, NULL, ran), TK_EINVAL);
    assert_int_equal(tk_executor_submit(NULL, never_fn, ran, &f), TK_EINVAL);
    assert_int_equal(tk_executor_submit(ex, NULL, ran, &f), TK_EINVAL);
    assert_int_equal(tk_executor_submit(ex, never_fn, ran, NULL), TK_EINVAL);
    assert_int_equal(tk_executor_schedule(NULL, never_fn, ran, 0, &f), TK_EINVAL);
    assert_int_equal(tk_executor_schedule(ex, NULL, ran, 0, &f), TK_EINVAL);
    assert_int_equal(tk_executor_schedule_at_fixed_rate(NULL, never_fn, ran, 0, MS(1), &f),
                     TK_EINVAL);
    assert_int_equal(tk_executor_schedule_at_fixed_rate(ex, NULL, ran, 0, MS(1), &f), TK_EINVAL);
    assert_int_equal(tk_executor_schedule_at_fixed_rate(ex, never_fn, ran, 0, 0, &f), TK_EINVAL);
    assert_int_equal(tk_executor_schedule_at_fixed_rate(ex, never_fn, ran, 0, -1, &f), TK_EINVAL);
    assert_int_equal(tk_executor_schedule_at_fixed_rate(ex, never_fn, ran, 0, INT64_MIN, NULL),
                     TK_EINVAL);
    assert_int_equal(tk_executor_schedule_with_fixed_delay(NULL, never_fn, ran, 0, MS(1), &f),
                     TK_EINVAL);
    assert_int_equal(tk_executor_schedule_with_fixed_delay(ex, NULL, ran, 0, MS(1), &f), TK_EINVAL);
    assert_int_equal(tk_executor_schedule_with_fixed_delay(ex, never_fn, ran, 0, 0, &f), TK_EINVAL);
    assert_int_equal(tk_executor_schedule_with_fixed_delay(ex, never_fn, ran, 0, -5, NULL),
                     TK_EINVAL);

    tk_task_spec spec = {.fn = never_fn, .arg = ran, .kind = TK_TASK_ONE_SHOT};
    assert_int_equal(tk_executor_schedule_spec(ex, NULL, &f), TK_EINVAL);
    assert_int_equal(tk_executor_schedule_spec(NULL, &spec, &f), TK_EINVAL);
    spec.fn = NULL;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.fn = never_fn;
    spec.kind = (tk_task_kind)3;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.kind = (tk_task_kind)-1;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.kind = TK_TASK_ONE_SHOT;
    spec.flags = 0x80u;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.flags = TK_TASK_AT_DEADLINE | 0x8u;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.flags = TK_TASK_SLACK; /* a negative slack */
    spec.slack_ns = -1;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.slack_ns = INT64_MIN;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.flags = TK_TASK_SKIP_MISSED | 0x100u;
    spec.kind = TK_TASK_FIXED_RATE;
    spec.period_ns = MS(1);
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.flags = 0;
    spec.period_ns = 0;
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);
    spec.kind = TK_TASK_FIXED_DELAY;
    spec.period_ns = -MS(1);
    assert_int_equal(tk_executor_schedule_spec(ex, &spec, &f), TK_EINVAL);

    /* *out is set only on TK_OK; nothing ran, nothing was accepted. */
    assert_ptr_equal(f, sentinel);
    sleep_ns(MS(20));
    assert_int_equal(atomic_load(ran), 0);
    tk_executor_stats s = stats_of(ex);
    assert_int_equal(s.task_count, 0);
    assert_int_equal(s.queue_size, 0);

    /* The executor is unharmed. */
    f = ct_submit(t, ex, never_fn, ran);
    assert_int_equal(tk_future_get_timeout(f, CONF_WAIT, NULL), TK_OK);
    assert_int_equal(atomic_load(ran), 1);
}

static void null_handles_get_einval(void **state) {
    ct *t = CT(state);
    tk_executor_stats s;
    assert_int_equal(tk_executor_destroy(NULL), TK_EINVAL);
    assert_int_equal(tk_executor_shutdown(NULL), TK_EINVAL);
    assert_int_equal(tk_executor_shutdown_now(NULL, NULL, NULL), TK_EINVAL);
    assert_int_equal(tk_executor_await_termination(NULL, 0), TK_EINVAL);
    assert_int_equal(tk_executor_await_termination(NULL, -1), TK_EINVAL);
    assert_int_equal(tk_executor_purge(NULL), TK_EINVAL);
    assert_int_equal(tk_executor_prestart_core_thread(NULL), TK_EINVAL);
    assert_int_equal(tk_executor_prestart_all_core_threads(NULL), TK_EINVAL);
    assert_int_equal(tk_executor_set_remove_on_cancel(NULL, true), TK_EINVAL);
    assert_int_equal(tk_executor_set_continue_periodic_after_shutdown(NULL, true), TK_EINVAL);
    assert_int_equal(tk_executor_set_execute_delayed_after_shutdown(NULL, false), TK_EINVAL);
    assert_int_equal(tk_executor_stats_get(NULL, &s), TK_EINVAL);
    assert_null(tk_executor_engine(NULL));
    assert_int_equal(tk_executor_state(NULL), TK_POOL_TERMINATED);
    tk_executor *ex = ct_executor(t, 1);
    assert_int_equal(tk_executor_stats_get(ex, NULL), TK_EINVAL);

    assert_int_equal(tk_future_cancel(NULL, false), TK_EINVAL);
    assert_int_equal(tk_future_cancel(NULL, true), TK_EINVAL);
    assert_int_equal(tk_future_get(NULL, NULL), TK_EINVAL);
    assert_int_equal(tk_future_get_timeout(NULL, MS(1), NULL), TK_EINVAL);
    assert_int_equal(tk_future_release(NULL), TK_EINVAL);
    assert_int_equal(tk_future_remaining_ns(NULL), 0);
}

static void runtime_policy_setters_round_trip(void **state) {
    ct *t = CT(state);
    tk_executor *ex = ct_executor(t, 1);
    for (int i = 0; i < 2; i++) {
        bool on = i == 0;
        assert_int_equal(tk_executor_set_remove_on_cancel(ex, on), TK_OK);
        assert_int_equal(tk_executor_get_remove_on_cancel(ex), on);
        assert_int_equal(tk_executor_set_continue_periodic_after_shutdown(ex, on), TK_OK);
        assert_int_equal(tk_executor_get_continue_periodic_after_shutdown(ex), on);
        assert_int_equal(tk_executor_set_execute_delayed_after_shutdown(ex, !on), TK_OK);
        assert_int_equal(tk_executor_get_execute_delayed_after_shutdown(ex), !on);
    }
    tk_executor_options opt;
    ct_options(t, &opt, 1);
    opt.remove_on_cancel = true;
    opt.continue_periodic_after_shutdown = true;
    opt.execute_delayed_after_shutdown = false;
    ex = ct_create(t, &opt);
    assert_true(tk_executor_get_remove_on_cancel(ex));
    assert_true(tk_executor_get_continue_periodic_after_shutdown(ex));
    assert_false(tk_executor_get_execute_delayed_after_shutdown(ex));
}

CONF_TABLE(api,
           {"tk_strerror and tk_status_name describe every status code",
            status_strings_cover_every_code},
           {"the registry lists every engine by name, count and index",
            registry_lists_every_engine},
           {"the default engine is the build-time choice", default_engine_is_the_build_choice},
           {"pool states have distinct names", names_pool_states_distinctly},
           {"tk_queue_config_init sets the documented defaults",
            queue_config_init_sets_documented_defaults},
           {"deadlines saturate instead of overflowing", deadlines_saturate_instead_of_overflowing},
           {"tk_executor_options_init sets the documented defaults",
            options_init_sets_documented_defaults},
           {"create with NULL options gives a working default executor",
            create_with_null_options_uses_defaults},
           {"create rejects bad options with TK_EINVAL", create_rejects_bad_options},
           {"NULL option fields select the defaults", null_option_fields_mean_defaults},
           {"engine config is validated at create", engine_config_is_validated_at_create},
           {"scheduling calls reject bad input with TK_EINVAL", scheduling_rejects_bad_input},
           {"NULL executor and future handles get TK_EINVAL", null_handles_get_einval},
           {"runtime policy setters and getters round-trip", runtime_policy_setters_round_trip}, );
