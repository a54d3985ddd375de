/* SPDX-License-Identifier: MIT */
/* timerkit conformance suite: shared declarations.
 *
 * Every case is written once against the public executor API and run for each
 * engine. The only engine-specific knowledge lives in the per-engine fixture
 * (conf_engine): the queue config the suite uses for it (a 1 ms tick for the
 * wheel) and which tk_queue_config fields it documents as honoured.
 *
 * cmocka 1.1.5 longjmps out of a failed assert, so asserts run only on the
 * test's main thread. Task callbacks, hooks and handlers only record what they
 * saw (atomics, or plain fields published through an atomic counter); the main
 * thread checks. Everything a callback can touch is allocated with ct_calloc()
 * and every executor and future goes through ct_* tracking, so the per-test
 * teardown can destroy executors (which also stops blocked gate tasks through
 * the interrupt flag), release futures and only then free the memory, even
 * when an assert failed half-way.
 */
#ifndef TK_CONFORMANCE_H
#define TK_CONFORMANCE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "suite-runner.h"
#include "timerkit.h"

/* ---- per-engine fixture ---------------------------------------------------- */

typedef struct conf_engine {
    const tk_queue_ops *ops;
    tk_queue_config config; /* what the suite passes as engine_config */
    bool pending_limit;     /* honours tk_queue_config.max_pending */
    bool uses_tick;         /* expires on a tick (TK_QUEUE_CAP_TICKED) */
} conf_engine;

/* One behaviour, run for every engine. */
typedef struct conf_case {
    const char *name; /* a behaviour: "never starts a task before its deadline" */
    CMUnitTestFunction fn;
} conf_case;

/* The suite's groups, in the order they run: one line each. Group G is the
 * file test-G.c, which ends with its table of cases:
 *
 *     CONF_TABLE(G, {"a behaviour, said as a sentence", function_that_checks_it},
 *                   ...);
 *
 * A new case is a function in the file of its group (each file's opening
 * comment says what its group covers) and one row in that table. A new
 * group is a new file test-G.c (the kit's CMake list picks up every
 * test-*.c here) and one X(G) line below. */
#define CONF_GROUPS(X)                                                                             \
    X(api)                                                                                         \
    X(order)                                                                                       \
    X(periodic)                                                                                    \
    X(cancel)                                                                                      \
    X(shutdown)                                                                                    \
    X(reject)                                                                                      \
    X(hooks)                                                                                       \
    X(future)                                                                                      \
    X(alloc)                                                                                       \
    X(robust)                                                                                      \
    X(timer)                                                                                       \
    X(control)                                                                                     \
    X(queue)                                                                                       \
    X(invoke)                                                                                      \
    X(slack)

#define CONF_DECLARE_GROUP(group) KIT_TABLE_DECLARE(conf_case, conf_cases_##group)
CONF_GROUPS(CONF_DECLARE_GROUP)
#define CONF_TABLE(group, ...) KIT_TABLE_DEFINE(conf_case, conf_cases_##group, __VA_ARGS__)

/* ---- per-test state ---------------------------------------------------------- */

typedef struct ct_vec {
    void **items;
    size_t len, cap;
} ct_vec;

struct gate;
typedef struct ct {
    const conf_engine *eng;
    const conf_case *c; /* the case being run */
    ct_vec executors;   /* destroyed by the teardown */
    ct_vec futures;     /* released by the teardown, after the executors */
    ct_vec memory;      /* freed last */
    ct_vec gates;       /* opened by the teardown first, so no run stays blocked */
} ct;

#define CT(state) ((ct *)*(state))

/* Default options for this engine: tk_executor_options_init() + engine + config. */
void ct_options(ct *t, tk_executor_options *opt, unsigned threads);
/* Creates (asserting TK_OK) and tracks an executor. */
tk_executor *ct_create(ct *t, const tk_executor_options *opt);
/* Tracks an executor created by the test itself. */
void ct_adopt(ct *t, tk_executor *ex);
/* ct_options() + ct_create(). */
tk_executor *ct_executor(ct *t, unsigned threads);
/* A one-thread executor with this rejection policy (fn and ctx: its
 * custom handler) and, when max_pending > 0, that pending limit. */
tk_executor *ct_executor_with_policy(ct *t, tk_rejection_policy policy, tk_reject_fn fn, void *ctx,
                                     size_t max_pending);
/* ct_executor() with these hooks in its options. */
tk_executor *ct_executor_with_hooks(ct *t, unsigned threads, const tk_executor_hooks *hooks);
/* Destroys a tracked executor now, asserting TK_OK. */
void ct_destroy(ct *t, tk_executor *ex);
/* Tracks a future for the teardown; returns it. */
tk_future *ct_track(ct *t, tk_future *f);
/* Releases a tracked future now, asserting TK_OK. */
void ct_release(ct *t, tk_future *f);
/* Forgets a tracked future (the test released it itself). */
void ct_untrack(ct *t, tk_future *f);
/* Zeroed memory that lives until the teardown, after every executor is gone. */
void *ct_calloc(ct *t, size_t n, size_t size);
/* Executor options whose engine config is this engine's with max_pending set
 * (0 keeps the engine's config as it is). */
void ct_limit_pending(ct *t, tk_executor_options *opt, size_t max_pending);

/* Each of these makes its tk_executor_* call, asserts TK_OK and tracks the
 * future for the teardown (ct_track); it returns the future. */
tk_future *ct_submit(ct *t, tk_executor *ex, tk_task_fn fn, void *arg);
tk_future *ct_schedule(ct *t, tk_executor *ex, tk_task_fn fn, void *arg, int64_t delay_ns);
tk_future *ct_schedule_spec(ct *t, tk_executor *ex, const tk_task_spec *spec);
/* kind TK_TASK_FIXED_RATE: tk_executor_schedule_at_fixed_rate(); otherwise
 * tk_executor_schedule_with_fixed_delay(). */
tk_future *ct_schedule_periodic(ct *t, tk_executor *ex, tk_task_kind kind, tk_task_fn fn, void *arg,
                                int64_t initial_delay_ns, int64_t period_ns);

/* ---- time -------------------------------------------------------------------- */

#define MS(x) ((int64_t)(x)*TK_NS_PER_MS)
/* How long the main thread waits for something that must happen soon. Generous:
 * the suite runs under valgrind and TSan on a loaded two-core machine. */
#define CONF_WAIT MS(3000)
/* Bound on lateness where a test needs one ("runs now"): a behaviour bound, not
 * a speed measurement. */
#define CONF_LATE MS(300)

int64_t now_ns(void);
void sleep_ns(int64_t ns);
/* Polls (about every 200 us) until *v >= target or the timeout; true if reached. */
bool wait_ge(const atomic_int *v, int target, int64_t timeout_ns);
/* Polls until pred(ctx) or the timeout. */
bool wait_for(bool (*pred)(void *ctx), void *ctx, int64_t timeout_ns);
/* Polls stats until field(stats) == want or the timeout; returns the last value. */
uint64_t wait_stat(tk_executor *ex, uint64_t (*field)(const tk_executor_stats *), uint64_t want,
                   int64_t timeout_ns);
uint64_t st_queue(const tk_executor_stats *s);
uint64_t st_active(const tk_executor_stats *s);
uint64_t st_pool(const tk_executor_stats *s);
/* A worker counts a task or timer completed just after its callback
 * returned: wait for these counts (wait_stat) rather than read them. */
uint64_t st_completed(const tk_executor_stats *s);
uint64_t st_task_count(const tk_executor_stats *s);
tk_executor_stats stats_of(tk_executor *ex); /* asserts TK_OK */

/* ---- common tasks -------------------------------------------------------------- */

/* A gate blocks the worker that runs it until opened, the run is interrupted,
 * or 10 s pass (so a failed test never hangs its teardown). */
typedef struct gate {
    atomic_int entered;       /* runs that reached the gate */
    atomic_int open;          /* set by the test */
    atomic_int interrupted;   /* runs that left because tk_run_interrupted() */
    atomic_int left;          /* runs that left the gate */
    atomic_int saw_interrupt; /* runs of gate_ignore_interrupt_fn that saw tk_run_interrupted() */
    atomic_int freed;         /* gate_free calls */
} gate;
int gate_fn(tk_run *run, void *arg);
/* Like gate_fn, but ignores the interrupt flag (only records it). */
int gate_ignore_interrupt_fn(tk_run *run, void *arg);
void gate_free(void *arg);
gate *gate_new(ct *t);
/* A one-shot spec that runs gate_fn on g, now, and frees it with gate_free. */
tk_task_spec gate_spec(gate *g);
/* Waits until `n` runs entered the gate; asserts. */
void gate_wait_entered(gate *g, int n);
void gate_open(gate *g);

/* A counting task: records each run. */
typedef struct counter {
    atomic_int runs;
    atomic_int freed; /* arg_free calls */
    atomic_int ret;   /* value each run returns */
    atomic_llong first_start, last_start;
    atomic_int main_thread_runs; /* runs on the thread in `main_thread` */
    pthread_t main_thread;
} counter;
counter *counter_new(ct *t);
int counter_fn(tk_run *run, void *arg);
void counter_free(void *arg); /* tk_arg_free_fn for a counter */
/* A spec that runs counter_fn on c and frees it with counter_free. */
tk_task_spec counter_spec(counter *c, tk_task_kind kind, int64_t delay_ns, int64_t period_ns);

/* The build-time default engine (CMake TIMERKIT_DEFAULT_ENGINE). */
const char *conf_default_engine_name(void);

#endif
