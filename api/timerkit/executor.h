/* SPDX-License-Identifier: MIT */
/** @file
 * timerkit: a ScheduledThreadPoolExecutor for C.
 *
 * A pool of pthreads runs tasks taken from a timer engine (tk_queue_ops):
 * one-shot tasks with or without a result, fixed-rate and fixed-delay
 * periodic tasks, futures, the JDK's shutdown protocol and policies,
 * rejection handlers, a thread factory, hooks and counters.
 *
 * Times: delays and periods are relative nanoseconds; deadlines are absolute
 * CLOCK_MONOTONIC nanoseconds (tk_clock_now_ns()).
 *
 * Guarantees (every engine: heap, hwheel and wheel, and any engine that
 * keeps the contract of queue.h):
 * - Never early: a task never starts before its deadline.
 * - Order: due tasks start in (deadline, seq) order. A seq orders the tasks
 *   and timers that one thread schedules: those of one thread given equal
 *   deadlines run FIFO. Tasks of different threads given equal deadlines
 *   start in an order left unspecified (each thread schedules into a shard
 *   of its own, so that threads that schedule at once meet in no lock).
 *   The heap and hwheel keep this order exactly
 *   (TK_QUEUE_CAP_EXACT_ORDER). The single-level wheel does not claim it:
 *   it may reorder within one tick, and only tasks whose tick had already
 *   passed when its tick thread took them in (scheduled with a deadline
 *   already past, or less than a tick ahead); tasks scheduled more than a
 *   tick ahead of their deadlines start in exact order on every engine.
 *   Slack changes no order: tasks that start together start in this order,
 *   whatever their slacks (queue.h, "Slack"). With more than one pool
 *   thread, tasks that start in order may of course overlap.
 * - Fixed rate: run k is due at first + k * period; a late run is caught up
 *   (runs back to back, never overlapping) unless the task asked to skip
 *   missed periods (TK_TASK_SKIP_MISSED), which counts them instead.
 *   Fixed delay: the next run is due `delay` after the previous run ended.
 *   Runs of one periodic task never overlap and each happens-before the next.
 *   A periodic run that returns non-zero ends the task: no later run, the
 *   future completes with TK_ETASKFAILED, the `periodic_failed` hook fires and
 *   the `failed_periodic` counter grows (Java suppresses it silently).
 * - Nothing is lost: every task accepted either runs, is cancelled (its future
 *   says so), is removed by tk_executor_remove() (its future says so), or is
 *   handed back by tk_executor_shutdown_now().
 *
 * Differences from Java, on purpose:
 * - A task handed back by shutdown_now() has its future completed as
 *   cancelled, so no get() blocks forever on it.
 * - Tasks dropped by the discard policies, or given a pretended acceptance
 *   by a custom handler, also complete their futures as cancelled, and a
 *   task taken out by tk_executor_remove() completes its future with
 *   TK_EREMOVED. No option gives the JDK's futures pending for ever:
 *   docs/java.md says why.
 * - Caller-runs never runs a task early: it waits in the caller for the
 *   task's deadline. Periodic tasks cannot be hosted by a caller; for them
 *   caller-runs behaves as abort.
 * - There is no interrupt: cancel(may_interrupt) sets a flag that a running
 *   callback reads with tk_run_interrupted(); shutdown_now() sets it on every
 *   running task.
 * - A run vetoed by the before_execute hook fails its task with the veto as
 *   status (Java leaves the future of a task whose beforeExecute threw
 *   pending for ever).
 * - On an engine without wake() (tk_queue_ops), an idle worker notices a
 *   smaller core size, a shorter keep-alive or core thread time-out set
 *   while it sleeps within about a second; on every built-in engine it does
 *   at once, as Java's interruptIdleWorkers() makes it.
 * - after_execute gets the callback's return status (0, its failure, or
 *   TK_ECANCELLED): the JDK calls afterExecute with a null Throwable for
 *   every task of a ScheduledThreadPoolExecutor, whose future keeps the
 *   failure, and a Java hook that wants it probes the future. A hook here
 *   is given the task's info, not its future, so it is given the status.
 * - A task cancelled while queued with remove-on-cancel off is still in the
 *   queue, as in the JDK (tk_executor_contains() says so), but
 *   tk_executor_visit_queue() shows only tasks that will run.
 * - tk_executor_set_thread_factory(ex, NULL) restores pthread_create; the
 *   JDK's setThreadFactory(null) throws NullPointerException.
 */
#ifndef TIMERKIT_EXECUTOR_H
#define TIMERKIT_EXECUTOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "export.h"
#include "queue.h"

TK_EXTERN_C_BEGIN

typedef struct tk_executor tk_executor; /**< a pool of threads and its engine; opaque */
typedef struct tk_future tk_future;     /**< a task's handle and its result; opaque */
typedef struct tk_run tk_run;           /**< a task's view of its own run */

/** A task body. Returns 0 on success; any other value is a failure, kept as the
 * future's task status (a one-shot task's future then reports TK_ETASKFAILED;
 * a periodic task stops). A result is set with tk_run_set_result(). */
typedef int (*tk_task_fn)(tk_run *run, void *arg);

/** Frees a task's argument. If given, called exactly once, when the executor
 * is done with the task: after its last run, or when it is cancelled,
 * rejected by the policy (abort, or a custom handler's non-OK return) or
 * discarded. Not called for tasks handed back by shutdown_now() (the caller
 * owns them then), nor when the scheduling call fails before the task exists
 * (TK_EINVAL, TK_ENOMEM, TK_ETHREAD, a decorate hook's refusal: the caller
 * keeps `arg`). Once a decorate hook has accepted (returned 0), the decorated
 * fn/arg/arg_free belong to the executor: a later failure (the engine out of
 * memory or unable to start its thread, an invalid decorated spec) drops
 * them through the decorated arg_free, like a rejection. A one-shot task's arg_free runs before its
 * future shows done; for a task cancelled while running, when that run returns. Runs on whatever
 * thread drops the task, with no executor lock held. */
typedef void (*tk_arg_free_fn)(void *arg);

/** How a task repeats. */
typedef enum tk_task_kind {
    TK_TASK_ONE_SHOT = 0,   /**< runs once */
    TK_TASK_FIXED_RATE = 1, /**< run k is due at first + k * period */
    TK_TASK_FIXED_DELAY = 2 /**< each run is due a period after the previous one ended */
} tk_task_kind;

/* Per-task flags (tk_task_spec.flags). */
/** Fixed rate: after an overrun, skip the periods already missed (counted in
 * the future and the executor's counters) instead of running them back to
 * back; the next run is the first period boundary not yet past. Ignored for
 * other kinds; unknown flag bits are TK_EINVAL. */
#define TK_TASK_SKIP_MISSED 0x1u
/** delay_ns is the first run's deadline, an absolute time on
 * tk_clock_now_ns()'s clock (CLOCK_MONOTONIC; in the past: now), not a delay.
 * As tk_timer_start_at(): no clock read, and tasks given one deadline start
 * in submission order. Periodic kinds count their periods from it. */
#define TK_TASK_AT_DEADLINE 0x2u
/** slack_ns is this task's slack; without the flag the task gets the
 * executor's default_slack_ns. See tk_task_spec.slack_ns. */
#define TK_TASK_SLACK 0x4u

/** A full task description, for tk_executor_schedule_spec(). */
typedef struct tk_task_spec {
    tk_task_fn fn;           /**< required */
    void *arg;               /**< passed to fn */
    tk_arg_free_fn arg_free; /**< optional */
    tk_task_kind kind;       /**< one-shot, fixed rate, fixed delay */
    int64_t delay_ns;        /**< first run after this delay; < 0 means now
                                (TK_TASK_AT_DEADLINE: at this deadline) */
    int64_t period_ns;       /**< periodic only: > 0 */
    unsigned flags;          /**< TK_TASK_* */
    /** With TK_TASK_SLACK: how late each run may start. A run due at d
     * starts at some instant in [d, d + slack_ns] (plus the engine's
     * precision and the OS's wake-up), never before d, so that the engine
     * can wake once for many tasks (queue.h, "Slack"). Periodic tasks keep
     * their rate or delay: run k of a fixed-rate task is still due at
     * first + k * period, and each run has its own window. >= 0, else
     * TK_EINVAL; without the flag it is not read. Added in 0.3. */
    int64_t slack_ns;
} tk_task_spec;

/** What hooks and handlers see of a task. */
typedef struct tk_task_info {
    tk_task_fn fn;       /**< the task body */
    void *arg;           /**< its argument */
    tk_task_kind kind;   /**< one-shot, fixed rate, fixed delay */
    int64_t deadline_ns; /**< this run's deadline */
    int64_t period_ns;   /**< 0 for one-shot */
    uint64_t seq;        /**< submission sequence number: grows with each call of the
                            thread that scheduled the task (the Order guarantee) */
    uint64_t run_count;  /**< runs completed before this one */
} tk_task_info;

/** What a scheduling call does with a task the executor cannot take (shut
 * down, or the engine's pending limit reached). Each policy but custom runs
 * one of the stock handlers (tk_reject_abort() and the others). */
typedef enum tk_rejection_policy {
    TK_REJECT_ABORT = 0,          /**< the call returns TK_EREJECTED (default) */
    TK_REJECT_CALLER_RUNS = 1,    /**< one-shot: run in the caller at its deadline,
                                     unless the executor is shut down (then discard) */
    TK_REJECT_DISCARD = 2,        /**< drop the task; the call returns TK_OK and its
                                     future is cancelled */
    TK_REJECT_DISCARD_OLDEST = 3, /**< running: drop the queued task with the earliest
                                     deadline and retry once; shut down: discard */
    TK_REJECT_CUSTOM = 4          /**< call the custom handler (options.reject) */
} tk_rejection_policy;

/** Custom rejection handler. `reason` is TK_EREJECTED (shut down) or TK_EFULL
 * (engine pending limit). Its return value is returned by the scheduling call
 * (return TK_OK to pretend acceptance: the future is then cancelled). It may
 * delegate to a stock handler (tk_reject_abort() and the others) and return
 * its result; if tk_reject_caller_runs() ran the task, the call succeeds
 * whatever the handler returns. Runs in the caller's thread with no executor
 * lock held. */
typedef int (*tk_reject_fn)(tk_executor *ex, const tk_task_info *task, int reason, void *ctx);

/** Thread factory: must start a joinable thread running start(arg), store its
 * handle in *thread, and return 0, or return non-zero on failure (the
 * executor then reports TK_ETHREAD). `name` is a suggested name (e.g.
 * "tk-pool-3"). Called with no executor lock held. */
typedef int (*tk_thread_factory_fn)(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                                    const char *name);

/** Callbacks around the executor's work (Java's beforeExecute, afterExecute,
 * terminated, decorateTask); each may be NULL. */
typedef struct tk_executor_hooks {
    /** Before each run, on the worker thread. Returns 0 to let the run go
     * on; any other value vetoes it (as when Java's beforeExecute throws):
     * fn is not called, after_execute is not called, and the task fails
     * with that status as its task status (tk_future_task_status(); the
     * future reports TK_ETASKFAILED; a periodic task ends, the
     * periodic_failed hook fires). A vetoed run counts as completed (as
     * Java's completedTasks) but not in `runs`, `failed_count` or the
     * future's run count. */
    int (*before_execute)(tk_executor *ex, const tk_task_info *task, void *ctx);
    /** After each run that before_execute let go on, on the worker thread,
     * before the future shows the run's outcome; `status` is fn's return
     * value (a non-zero one is the task status the future then holds), or
     * TK_ECANCELLED if the run was cancelled while running (the future is
     * then already cancelled). The JDK differs on purpose here: every
     * task of a ScheduledThreadPoolExecutor is a FutureTask, which keeps its
     * failure in its future, so afterExecute always gets a null Throwable
     * and a Java hook that wants the failure probes the future (the sample
     * in afterExecute's javadoc). This hook is given the task's info, not
     * its future, so it gets the status itself: a port of such a hook reads
     * `status` where the Java code read the future; a port that took a null
     * Throwable to mean success reads `status == 0`. */
    void (*after_execute)(tk_executor *ex, const tk_task_info *task, int status, void *ctx);
    /** Once, when the executor enters TIDYING, on the thread that takes it there. */
    void (*terminated)(tk_executor *ex, void *ctx);
    /** When a periodic task ends because a run failed. */
    void (*periodic_failed)(tk_executor *ex, const tk_task_info *task, int status, void *ctx);
    /** Java's decorateTask: may rewrite the spec (wrap fn/arg/arg_free) before
     * the task is queued; it runs after the task is allocated and a worker is
     * ensured. Returning non-zero fails the call with that status (the hook
     * must then leave nothing allocated). See tk_arg_free_fn for ownership. */
    int (*decorate)(tk_executor *ex, tk_task_spec *spec, void *ctx);
    void *ctx; /**< passed to every hook */
} tk_executor_hooks;

/** How tk_executor_create() builds an executor; fill it with
 * tk_executor_options_init() first. */
typedef struct tk_executor_options {
    unsigned core_pool_size;    /**< threads; 0 is allowed (one thread is still
                                   started when work arrives, and leaves after
                                   keep_alive_ns idle with nothing queued, as in
                                   Java); at most TK_EXECUTOR_MAX_THREADS; see
                                   tk_executor_set_core_pool_size() */
    const tk_queue_ops *engine; /**< NULL: engine_config's engine, else tk_engine_default() */
    const tk_queue_config *engine_config;  /**< NULL: engine defaults; copied by create */
    const char *thread_name_prefix;        /**< NULL: "tk-pool" */
    tk_thread_factory_fn thread_factory;   /**< NULL: pthread_create */
    void *thread_factory_ctx;              /**< passed to thread_factory */
    tk_rejection_policy rejection;         /**< default TK_REJECT_ABORT */
    tk_reject_fn reject;                   /**< for TK_REJECT_CUSTOM */
    void *reject_ctx;                      /**< passed to reject */
    tk_executor_hooks hooks;               /**< all optional */
    bool remove_on_cancel;                 /**< default false (as Java) */
    bool continue_periodic_after_shutdown; /**< default false (as Java) */
    bool execute_delayed_after_shutdown;   /**< default true (as Java) */
    int64_t timer_slack_ns;                /**< < 0: leave the pool threads' timer slack
                                              alone (default -1); >= 0: set it with
                                              prctl(PR_SET_TIMERSLACK) on every pool
                                              thread (0 restores the process default,
                                              so use 1 for the tightest); at most
                                              TK_EXECUTOR_MAX_TIMER_SLACK_NS; for
                                              lateness below the OS's timer wake-up,
                                              see tk_queue_config.spin_ns (heap) */
    const tk_allocator *allocator;         /**< NULL: tk_allocator_default(). Copied at
                                              create; its ctx must outlive every future.
                                              Tasks (88 bytes each; 120 for periodic
                                              ones and those with arg_free or a
                                              decorate hook) come from slabs of about
                                              2.1 MB allocated through it (32 pages of
                                              64 KiB, aligned to 64 KiB), 23808 (17472)
                                              tasks a slab; an emptied slab goes back
                                              to it (one spare of each size kept until
                                              destroy). */
    int64_t keep_alive_ns;                 /**< how long a worker that may time out
                                              waits idle before it leaves (Java's
                                              keepAliveTime; default
                                              TK_EXECUTOR_DEFAULT_KEEP_ALIVE_NS, as
                                              ScheduledThreadPoolExecutor); >= 0, and
                                              > 0 if allow_core_thread_timeout. See
                                              tk_executor_set_keep_alive() */
    bool allow_core_thread_timeout;        /**< core threads time out too, so an idle
                                              pool shrinks to zero threads (default
                                              false, as Java). See
                                              tk_executor_allow_core_thread_timeout() */
    int64_t default_slack_ns;              /**< the slack of every task scheduled without
                                              TK_TASK_SLACK (tk_task_spec.slack_ns; the
                                              plain schedule calls included): each run
                                              may start up to this long after its
                                              deadline, so that the engine wakes once for
                                              many. Default 0: as soon as the engine can.
                                              >= 0, else create() returns TK_EINVAL.
                                              Embedded timers (tk_timer) keep their own
                                              (tk_timer_set_slack()). Not the OS's
                                              timer_slack_ns above, which delays every
                                              wake-up of the pool threads;
                                              docs/slack.md compares them.
                                              Added in 0.3 */
} tk_executor_options;

/** The default keep_alive_ns: 10 ms, ScheduledThreadPoolExecutor's. */
#define TK_EXECUTOR_DEFAULT_KEEP_ALIVE_NS INT64_C(10000000)

/** Largest core_pool_size create() and tk_executor_set_core_pool_size() accept. */
#define TK_EXECUTOR_MAX_THREADS 4096u

/** Largest timer_slack_ns create() accepts: a thread may sleep up to its
 * slack past every timed wait, so a larger one would hold any delayed task
 * (and any task of a ticked engine, which waits for its tick) that long. */
#define TK_EXECUTOR_MAX_TIMER_SLACK_NS INT64_C(1000000000) /* 1 s */

/** The executor's life, as Java's runState; it only moves forward. */
typedef enum tk_pool_state {
    TK_POOL_RUNNING = 0,   /**< accepts and runs tasks */
    TK_POOL_SHUTDOWN = 1,  /**< tk_executor_shutdown(): no new tasks, queued ones go on */
    TK_POOL_STOP = 2,      /**< tk_executor_shutdown_now(): no new tasks, queued ones handed back */
    TK_POOL_TIDYING = 3,   /**< no task and no worker left; the terminated hook runs */
    TK_POOL_TERMINATED = 4 /**< done: tk_executor_await_termination() returns */
} tk_pool_state;

/** The executor's counters, from tk_executor_stats_get(), with the JDK's
 * meanings where the JDK has the counter (ThreadPoolExecutor.getTaskCount(),
 * getCompletedTaskCount(), getActiveCount(), getQueue().size()...).
 *
 * The JDK counts queue entries, and so do task_count and completed_count: a
 * task enters the queue when it is accepted, and a periodic task enters it
 * again after each run (requeued_count). Each entry leaves the queue exactly
 * once: a worker takes it (and runs it, or drops it because it was
 * cancelled or may not run after shutdown: completed_count once the worker
 * is done with it), it is taken out without running (removed_count), or
 * shutdown_now() hands it back (handed_back_count). Tasks and embedded
 * timers (tk_timer) count alike. Hence, exactly, whenever no call into the
 * executor is in progress and every worker is idle or inside a callback:
 *
 *     accepted_count + requeued_count
 *         == completed_count + active_count + queue_size
 *            + removed_count + handed_back_count
 *     task_count == completed_count + active_count + queue_size
 *
 * (the second is a definition), so once the executor is terminated
 * task_count == completed_count, and accepted_count + requeued_count ==
 * task_count + removed_count + handed_back_count. While calls are in flight
 * the counters are read one by one and may be off by the entries in
 * transit. Caller-runs runs (TK_REJECT_CALLER_RUNS) are not entries: they
 * count in runs (and failed_count) only. */
typedef struct tk_executor_stats {
    /** The JDK's getTaskCount(): completed_count + active_count + queue_size,
     * read together. Every periodic run counts, as in the JDK. Tasks ever
     * accepted are accepted_count. */
    uint64_t task_count;
    /** The JDK's getCompletedTaskCount(): queue entries a worker took and is
     * done with: runs that finished (one-shot or one periodic run; failed or
     * not; cancelled while running), and tasks a worker found cancelled
     * (remove-on-cancel off) or removed, or not allowed to run after shutdown,
     * and dropped. Excludes entries taken out without a worker (cancelled
     * with remove-on-cancel, purged, swept by shutdown, removed by
     * tk_executor_remove(), dropped by discard-oldest) and tasks handed back by
     * shutdown_now(). */
    uint64_t completed_count;
    uint64_t runs;              /**< callback invocations: periodic runs and
                                   caller-runs runs included */
    unsigned pool_size;         /**< live worker threads (JDK getPoolSize) */
    unsigned active_count;      /**< workers running a task now (JDK getActiveCount) */
    unsigned largest_pool_size; /**< most workers ever alive at once */
    /** Entries queued (JDK getQueue().size()): in the engine, and due tasks a
     * worker has taken in a batch but not started. Counts embedded timers,
     * and cancelled tasks not yet taken out (remove-on-cancel off). */
    size_t queue_size;
    uint64_t rejected_count;        /**< calls handed to the rejection policy */
    uint64_t cancelled_count;       /**< tasks cancelled (by cancel, a policy, shutdown),
                                       timers stopped */
    uint64_t failed_count;          /**< runs that returned non-zero */
    uint64_t failed_periodic_count; /**< periodic tasks ended by a failed run */
    uint64_t skipped_periods;       /**< periods skipped under TK_TASK_SKIP_MISSED */
    /** Tasks and timers ever accepted: scheduling calls and timer starts that
     * queued their task. A task that a rejection policy discarded or ran in
     * the caller is not accepted. */
    uint64_t accepted_count;
    uint64_t requeued_count; /**< periodic runs followed by a re-queue that the engine took */
    /** Queue entries taken out without a worker and not handed back:
     * cancelled with remove-on-cancel, stopped timers, purge(), the shutdown
     * policies' sweep, discard-oldest, tk_executor_remove(), and
     * already-cancelled tasks and timers that shutdown_now() drops. */
    uint64_t removed_count;
    uint64_t handed_back_count; /**< tasks handed back by shutdown_now() (the sum of
                                   its return values, destroy()'s included) */
} tk_executor_stats;

/* ---- lifecycle --------------------------------------------------------- */

/** Fills `opt` with the defaults above. Returns TK_OK or TK_EINVAL. */
TK_API int tk_executor_options_init(tk_executor_options *opt);

/** Creates an executor. `opt` may be NULL (defaults, core_pool_size 1). Core
 * threads start lazily, one per task submitted while fewer are alive.
 * Returns TK_OK, TK_EINVAL (bad option: pool size, engine config, custom
 * policy without handler...), TK_ENOMEM, TK_ETHREAD (engine thread). */
TK_API int tk_executor_create(const tk_executor_options *opt, tk_executor **out);

/** Shuts the executor down if it is not already (as shutdown_now(), dropping
 * the handed-back tasks: their arg_free runs), waits for termination and
 * frees it. Futures stay valid until released. Returns TK_OK, TK_EINVAL,
 * TK_EDEADLK (called from one of the executor's own threads; nothing done). */
TK_API int tk_executor_destroy(tk_executor *ex);

/* ---- scheduling -------------------------------------------------------- */
/** @name Scheduling a task
 * Each returns TK_OK, TK_EINVAL (NULL ex or fn, non-positive period, bad
 * kind or flags), TK_ENOMEM (the executor stays usable), TK_ETHREAD (no
 * thread could be started and none is alive; the task is not kept), or what
 * the rejection policy returns (TK_EREJECTED for abort). Where a future is
 * asked for (`out` non-NULL), *out is set only on TK_OK and must be released
 * with tk_future_release(). A call that races with shutdown and loses after
 * the task was queued returns TK_OK with the future already cancelled (as
 * Java's delayedExecute). A periodic re-queue refused by the engine's
 * pending limit cancels the task and counts it in rejected_count. Hooks do
 * not run for caller-runs runs, nor for cancelled tasks that a worker drops. */

/** @{ */

/** Runs fn(arg) as soon as possible. No future. */
TK_API int tk_executor_execute(tk_executor *ex, tk_task_fn fn, void *arg);

/** Runs fn(arg) as soon as possible; *out gets its future (required). */
TK_API int tk_executor_submit(tk_executor *ex, tk_task_fn fn, void *arg, tk_future **out);

/** Runs fn(arg) once after delay_ns (< 0: now; huge: clamped). `out` may be NULL. */
TK_API int tk_executor_schedule(tk_executor *ex, tk_task_fn fn, void *arg, int64_t delay_ns,
                                tk_future **out);

/** Runs fn(arg) at initial_delay_ns, then every period_ns (> 0) after that. */
TK_API int tk_executor_schedule_at_fixed_rate(tk_executor *ex, tk_task_fn fn, void *arg,
                                              int64_t initial_delay_ns, int64_t period_ns,
                                              tk_future **out);

/** Runs fn(arg) at initial_delay_ns, then delay_ns (> 0) after each run ends. */
TK_API int tk_executor_schedule_with_fixed_delay(tk_executor *ex, tk_task_fn fn, void *arg,
                                                 int64_t initial_delay_ns, int64_t delay_ns,
                                                 tk_future **out);

/** The general form. `spec` is copied. */
TK_API int tk_executor_schedule_spec(tk_executor *ex, const tk_task_spec *spec, tk_future **out);

/** @} */

/* ---- pool control ------------------------------------------------------ */

/** Orderly shutdown: no new tasks; queued tasks run or are dropped by the
 * shutdown policies. Idempotent. Returns TK_OK or TK_EINVAL. */
TK_API int tk_executor_shutdown(tk_executor *ex);

/** Called once per task handed back by shutdown_now(), in deadline order, on
 * the calling thread. The caller owns fn/arg from then on. */
typedef void (*tk_drop_fn)(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free);

/** Stops: no new tasks, queued tasks are handed to `drop` (may be NULL: their
 * arg_free then runs), running tasks get their interrupt flag set. Tasks
 * already cancelled but still queued are not handed back (their arg_free has
 * run). Queued includes the due tasks that a worker has taken from the
 * engine in a batch (a one-thread pool on an engine with cheap batches takes
 * up to 32 in one round trip) but not started: they are handed back too. A
 * task that a worker is taking at that very instant, and has not yet
 * published as its batch, is not: the worker drops it as cancelled. Returns
 * the number of tasks handed back, or TK_EINVAL. */
TK_API long tk_executor_shutdown_now(tk_executor *ex, tk_drop_fn drop, void *ctx);

/** Waits until TERMINATED or for timeout_ns (< 0: forever). Returns TK_OK,
 * TK_ETIMEDOUT, TK_EINVAL, TK_EDEADLK (from one of the pool's own threads). */
TK_API int tk_executor_await_termination(tk_executor *ex, int64_t timeout_ns);

/** Predicates on the pool state. A NULL executor reads as TERMINATED
 * (is_shutdown and is_terminated true, is_terminating false). */
TK_API bool tk_executor_is_shutdown(const tk_executor *ex);    /**< state >= SHUTDOWN */
TK_API bool tk_executor_is_terminating(const tk_executor *ex); /**< shut down, not terminated */
TK_API bool tk_executor_is_terminated(const tk_executor *ex);  /**< state TERMINATED */
TK_API tk_pool_state tk_executor_state(const tk_executor *ex); /**< TERMINATED if NULL */
/** The name of a state: "RUNNING", "SHUTDOWN", "STOP", "TIDYING",
 * "TERMINATED" ("UNKNOWN" for any other value); a static string. */
TK_API const char *tk_pool_state_name(tk_pool_state state);

/** Removes cancelled tasks still in the queue (Java purge()). Returns the
 * number removed, or TK_EINVAL. */
TK_API long tk_executor_purge(tk_executor *ex);

/** @{ */
/** Starts one / all missing core threads. Return the number started, or a
 * negative status (TK_EINVAL, TK_ETHREAD, TK_ESTATE when shut down). */
TK_API int tk_executor_prestart_core_thread(tk_executor *ex);
TK_API int tk_executor_prestart_all_core_threads(tk_executor *ex);
/** @} */

/** @{ */
/** The shutdown and cancel policies, set and read at run time (Java's
 * setRemoveOnCancelPolicy and its two siblings). Setting a
 * shutdown policy after shutdown applies it to the queue at once. */
TK_API int tk_executor_set_remove_on_cancel(tk_executor *ex, bool on);
TK_API int tk_executor_set_continue_periodic_after_shutdown(tk_executor *ex, bool on);
TK_API int tk_executor_set_execute_delayed_after_shutdown(tk_executor *ex, bool on);
TK_API bool tk_executor_get_remove_on_cancel(const tk_executor *ex);
TK_API bool tk_executor_get_continue_periodic_after_shutdown(const tk_executor *ex);
TK_API bool tk_executor_get_execute_delayed_after_shutdown(const tk_executor *ex);
/** @} */

/** Copies the counters. Returns TK_OK or TK_EINVAL. */
TK_API int tk_executor_stats_get(const tk_executor *ex, tk_executor_stats *out);

/** The engine this executor runs on. NULL if ex is NULL. */
TK_API const tk_queue_ops *tk_executor_engine(const tk_executor *ex);

/* ---- run-time control (Java's setCorePoolSize and the like) ------------ */
/** @name Run-time control
 * Settings that can be read and changed while the executor runs, as in
 * Java's ThreadPoolExecutor. Each setter is thread-safe against concurrent
 * submissions, thread starts and other setters; it may also be called after
 * shutdown (as in Java; the value is stored, and a larger core size may
 * start threads only while queued tasks are left to run).
 *
 * Threads and idleness. A worker "may time out" while core thread time-out
 * is allowed or more workers are alive than the core size. Such a worker
 * that finds no task to run for keep_alive_ns leaves the pool, unless it is
 * the last one and tasks are still queued (delayed ones included): then it
 * stays, so a queued task is never stranded nor run late (Java's
 * processWorkerExit keeps one thread while the queue is not empty). A
 * worker that may not time out waits for work without a time limit. A
 * change of these settings reaches idle workers at once, as Java's
 * interruptIdleWorkers() makes it (through the engine's wake(); on an
 * engine without it, within about a second). New workers start as work
 * arrives, up to the core size (at least one). */
/** @{ */

/** Sets the core pool size (Java setCorePoolSize): 0 to
 * TK_EXECUTOR_MAX_THREADS. Larger: threads start as work needs them, at once
 * up to one per queued task. Smaller: the excess workers leave when they next
 * find themselves idle for keep_alive_ns; a running task is never cut short
 * and no task is dropped. A one-thread pool on an engine that takes batches
 * (TK_QUEUE_CAP_BATCH_TAKE) batches only while the core size is at most 1.
 * Returns TK_OK or TK_EINVAL (NULL, or n out of range). */
TK_API int tk_executor_set_core_pool_size(tk_executor *ex, unsigned n);

/** The core pool size (Java getCorePoolSize); 0 if ex is NULL. */
TK_API unsigned tk_executor_get_core_pool_size(const tk_executor *ex);

/** Sets the keep-alive time (Java setKeepAliveTime): how long a worker that
 * may time out waits idle before it leaves. A worker already waiting keeps
 * the time it started its wait with. Returns TK_OK or TK_EINVAL (NULL, ns <
 * 0, or ns == 0 while core thread time-out is allowed). */
TK_API int tk_executor_set_keep_alive(tk_executor *ex, int64_t ns);

/** The keep-alive time in ns (Java getKeepAliveTime), or TK_EINVAL if ex is
 * NULL. */
TK_API int64_t tk_executor_get_keep_alive(const tk_executor *ex);

/** Lets core threads time out as the excess ones do (Java
 * allowCoreThreadTimeOut), so an idle pool shrinks to zero threads and
 * starts them again when work arrives. Returns TK_OK or TK_EINVAL (NULL, or
 * `on` while the keep-alive time is 0). */
TK_API int tk_executor_allow_core_thread_timeout(tk_executor *ex, bool on);

/** Whether core threads may time out (Java allowsCoreThreadTimeOut); false if
 * ex is NULL. */
TK_API bool tk_executor_allows_core_thread_timeout(const tk_executor *ex);

/** Replaces the rejection policy and custom handler (Java
 * setRejectedExecutionHandler). `fn` and `ctx` are stored whatever the
 * policy; TK_REJECT_CUSTOM needs a non-NULL fn. A scheduling call being
 * rejected uses the policy, fn and ctx it read together when it was
 * rejected: the old ones or the new ones, never a mix. Returns TK_OK or
 * TK_EINVAL (NULL ex, policy out of range, custom without fn). */
TK_API int tk_executor_set_rejection(tk_executor *ex, tk_rejection_policy policy, tk_reject_fn fn,
                                     void *ctx);

/** Reads the rejection policy, handler and its ctx; each output may be NULL.
 * Returns TK_OK or TK_EINVAL (NULL ex). */
TK_API int tk_executor_get_rejection(const tk_executor *ex, tk_rejection_policy *policy,
                                     tk_reject_fn *fn, void **ctx);

/** Replaces the thread factory (Java setThreadFactory). NULL restores the
 * default, pthread_create, where the JDK's setThreadFactory(null) throws
 * NullPointerException: C has no default factory object to pass back in, so
 * NULL is how a caller says "the default", as in tk_executor_options. A
 * thread start uses the factory and ctx it read together just before it
 * called the factory: threads already started, or being started, are not
 * affected. Returns TK_OK or TK_EINVAL (NULL ex). */
TK_API int tk_executor_set_thread_factory(tk_executor *ex, tk_thread_factory_fn fn, void *ctx);

/** Reads the thread factory (NULL: pthread_create) and its ctx; each output
 * may be NULL. Returns TK_OK or TK_EINVAL (NULL ex). */
TK_API int tk_executor_get_thread_factory(const tk_executor *ex, tk_thread_factory_fn *fn,
                                          void **ctx);

/** @} */

/* ---- stock rejection handlers ------------------------------------------ */
/** @name Stock rejection handlers
 * The policies of tk_rejection_policy as tk_reject_fn handlers (Java's
 * ThreadPoolExecutor.AbortPolicy, CallerRunsPolicy, DiscardPolicy,
 * DiscardOldestPolicy), so a custom handler can delegate to one: the enum
 * policies run exactly these functions.
 *
 * Inside a rejection (called from a rejection handler, on the thread the
 * handler runs on, with the very `ex` and `task` pointers the handler was
 * given, returning its result), each acts on the task being rejected, as
 * described below. Call at most one of them per rejection: a second returns
 * TK_ESTATE.
 *
 * Outside a rejection (any other call: a program may call a handler itself,
 * as a Java program calls handler.rejectedExecution(r, executor)), each acts
 * as the JDK's does on the task `task` describes, taken as a task of its
 * own: its fn and arg, its kind, deadline_ns and period_ns (the other fields
 * are not read; fill a tk_task_info yourself, or pass one the executor gave
 * you). The caller keeps `arg` (no arg_free runs) and no future is made:
 * - tk_reject_abort(): returns TK_EREJECTED (the JDK throws
 *   RejectedExecutionException);
 * - tk_reject_discard(): does nothing and returns TK_OK;
 * - tk_reject_caller_runs(): while the executor runs, calls fn(run, arg) on
 *   the calling thread at deadline_ns (never early), without hooks, and
 *   returns TK_OK, or TK_ETASKFAILED if fn returned non-zero; shut down
 *   (before or during the wait): does nothing and returns TK_OK; a periodic
 *   kind: TK_EREJECTED; TK_ENOMEM if the run's task object (from the
 *   executor's slabs) could not be had;
 * - tk_reject_discard_oldest(): while the executor runs, drops the queued
 *   task with the earliest deadline, then schedules `task` as
 *   tk_executor_schedule_spec() would (TK_TASK_AT_DEADLINE at deadline_ns,
 *   period_ns for a periodic kind, no future, no arg_free) and returns that
 *   call's status (a rejection goes to the policy again, as the JDK's
 *   e.execute(r) does); shut down: does nothing and returns TK_OK.
 * Outside a rejection, each returns TK_EINVAL and does nothing if ex or
 * task is NULL, task->fn is NULL, task->kind is not a tk_task_kind, or a
 * periodic kind has period_ns <= 0. `reason` and `ctx` are ignored. */
/** @{ */

/** Inside a rejection: refuses the task; returns TK_EREJECTED (the call then
 * returns it and the task's arg_free runs). Outside one: see above. */
TK_API int tk_reject_abort(tk_executor *ex, const tk_task_info *task, int reason, void *ctx);

/** Inside a rejection: runs a one-shot task on the calling thread, at its
 * deadline (never early), without hooks; returns TK_OK and the call hands
 * out its future. If the executor is shut down (before or while waiting for
 * the deadline), the task is discarded instead (as tk_reject_discard()). A
 * periodic task cannot be hosted by a caller: returns TK_EREJECTED, as
 * tk_reject_abort(). Outside one: see above. */
TK_API int tk_reject_caller_runs(tk_executor *ex, const tk_task_info *task, int reason, void *ctx);

/** Inside a rejection: discards the task; returns TK_OK; the call succeeds
 * and the task's future is cancelled (its arg_free runs). Outside one: see
 * above. */
TK_API int tk_reject_discard(tk_executor *ex, const tk_task_info *task, int reason, void *ctx);

/** Inside a rejection, while the executor runs: drops the queued task with
 * the earliest deadline (cancelled; a timer is stopped) and has the call
 * retry once (a second rejection of the retry goes to the policy again,
 * with the handler told nothing new; this function then discards); returns
 * TK_OK. Shut down, or on the retry: discards, as tk_reject_discard().
 * Outside one: see above. */
TK_API int tk_reject_discard_oldest(tk_executor *ex, const tk_task_info *task, int reason,
                                    void *ctx);

/** @} */

/* ---- futures ----------------------------------------------------------- */

/** Cancels the task. Returns TK_OK (it had not started: it never will; for a
 * periodic task between runs, no further run), TK_ERUNNING (a run was in
 * progress: the future is cancelled, no later run happens, the interrupt
 * flag is set if may_interrupt; the run itself goes on), TK_EDONE (already
 * completed, failed or cancelled: nothing changed), TK_EINVAL. With
 * remove-on-cancel the task leaves the queue at once. */
TK_API int tk_future_cancel(tk_future *f, bool may_interrupt);

TK_API bool tk_future_is_done(const tk_future *f);      /**< completed, failed or cancelled */
TK_API bool tk_future_is_cancelled(const tk_future *f); /**< the task was cancelled */
TK_API bool tk_future_is_periodic(const tk_future *f);  /**< a fixed-rate or fixed-delay task */

/** Waits for the task to finish and stores its result in *result (may be
 * NULL; written only on TK_OK). Linux: waits on a futex in the future itself,
 * so futures outlive their executor. Returns TK_OK, TK_ECANCELLED, TK_ETASKFAILED (see
 * tk_future_task_status), TK_EDEADLK (called from the task's own run),
 * TK_EINVAL. A periodic task finishes only by cancellation or failure. */
TK_API int tk_future_get(tk_future *f, void **result);

/** As tk_future_get(), waiting at most timeout_ns (< 0: forever). Adds
 * TK_ETIMEDOUT. Both return TK_EINTR if tk_future_abort_get() aborted the
 * wait. */
TK_API int tk_future_get_timeout(tk_future *f, int64_t timeout_ns, void **result);

/** The callback's non-zero return value if the task failed; 0 otherwise. */
TK_API int tk_future_task_status(const tk_future *f);

/** Nanoseconds until the next run is due (Java getDelay): negative when
 * overdue; 0 if f is NULL. After the task ends, relative to its last deadline. */
TK_API int64_t tk_future_remaining_ns(const tk_future *f);

/** @{ */
/** Runs completed so far, and periods skipped under TK_TASK_SKIP_MISSED
 * (always 0 for a one-shot task). */
TK_API uint64_t tk_future_run_count(const tk_future *f);
TK_API uint64_t tk_future_skipped_count(const tk_future *f);
/** @} */

/** Drops the caller's reference. The future stays valid for the executor as
 * long as it needs it; the task is not cancelled. Returns TK_OK, TK_EINVAL
 * (NULL, or a second release detected while the task is still alive). */
TK_API int tk_future_release(tk_future *f);

/* ---- inside a task ----------------------------------------------------- */

/** Sets the result that tk_future_get() returns. Only a one-shot task
 * completes with a result; for a periodic task the call does nothing. */
TK_API void tk_run_set_result(tk_run *run, void *result);

/** True once the run was cancelled with may_interrupt or the executor was
 * shut down with shutdown_now(). Safe to poll often. */
TK_API bool tk_run_interrupted(const tk_run *run);

/** @{ */
/** The executor running this task, and this run's task info. */
TK_API tk_executor *tk_run_executor(const tk_run *run);
TK_API const tk_task_info *tk_run_info(const tk_run *run);
/** @} */

/** The future of the running task (every task has one internally, even when
 * the caller asked for none), so a task can cancel itself. Borrowed: valid
 * for the duration of the run; do not release it. */
TK_API tk_future *tk_run_future(const tk_run *run);

/* ---- embedded timers: the zero-allocation path -------------------------- */
/** A tk_timer lives in the caller's memory: embed it in your own struct and
 * reach that struct from the callback (container_of). Starting one allocates
 * nothing and takes no lock but the engine's, so it is the path for programs
 * that hold very many timers and stop most of them (network timeouts). A
 * timer is 72 bytes; with the wheel engine that is all the memory a pending
 * timer costs.
 *
 * What a timer gives up against a task: it has no future (no get(), no
 * result, no waiting), no periodic kinds (start it again from its callback),
 * no hooks, no decorate, no arg_free and no rejection policy: start() after
 * shutdown returns TK_EREJECTED, past the wheel's pending limit TK_EFULL.
 * What it keeps: never early; one (deadline, seq) order with the tasks; the
 * shutdown policy for delayed one-shot tasks (execute_delayed_after_shutdown);
 * the counters (task_count, runs, completed, cancelled, rejected). stop()
 * always removes the timer from the engine at once, whatever the
 * remove-on-cancel policy. shutdown_now() and destroy() stop the timers still
 * queued: they are not handed to the drop callback, nor counted in its
 * return value; cancelled_count counts them.
 *
 * States. IDLE: the caller's (it may be started, re-initialised or freed).
 * PENDING: started; the executor owns it until its callback begins or a stop
 * succeeds. A stopped timer that an engine thread (the wheel's tick thread)
 * or a worker still holds is neither: it will never fire, and turns IDLE once
 * they let go; start() refuses it until then. A worker holds one only between
 * taking it and its callback's start: a due timer waiting in a worker's batch
 * behind other callbacks is still queued, and stop() takes it out of there.
 * A timer's memory may be freed or reused only while it is IDLE and no
 * callback of it is still to run: from its callback, after a stop that
 * returned TK_OK once tk_timer_is_idle() says so, or after the executor is
 * destroyed. The callback runs on a pool
 * thread after the timer turned IDLE (the executor does not touch it again),
 * so it may start the timer again or free it; but a thread other than the
 * callback's that sees the timer IDLE (or gets TK_ENOENT from stop()) cannot
 * tell whether the callback is about to run, is running or is done: such a
 * program must learn it from the callback itself (free in the callback, or
 * have it signal). Calls on one timer may come from any thread.
 * With the wheel engine a stopped timer stays with the tick thread until its
 * next pass (about 10 ms when idle, longer while it works through a flood of
 * offers), so a program that stops and re-arms timeouts at a high rate needs
 * spare timers for the meantime (Netty allocates a new timeout instead).
 *
 * The fields are private; the struct is public only so it can be embedded. */
typedef struct tk_timer tk_timer;

/** A timer's callback, on a pool thread. */
typedef void (*tk_timer_fn)(tk_timer *timer);

struct tk_timer {
    tk_node tk__node;   /**< private: the engine's node */
    tk_timer_fn tk__fn; /**< private: the callback */
    uint32_t tk__state; /**< private: accessed atomically */
    uint32_t tk__owner; /**< private: a tag of the executor it was last started on */
};

/** Prepares an IDLE timer that will call fn. Call it once on fresh memory,
 * or again on an IDLE timer to change fn. Returns TK_OK or TK_EINVAL (NULL
 * timer or fn). */
TK_API int tk_timer_init(tk_timer *timer, tk_timer_fn fn);

/** Starts an IDLE timer: fn(timer) runs once, delay_ns from now (< 0: now;
 * huge: clamped). Returns TK_OK, TK_EINVAL (NULL ex or timer, or a timer
 * never initialised), TK_ESTATE (the timer is not IDLE), TK_EREJECTED (the
 * executor is shut down, or shut down while the call ran and the timer could
 * not stay), TK_EFULL (the wheel's pending limit), TK_ENOMEM (the heap could
 * not grow), TK_ETHREAD (no pool thread could be started and none is alive).
 * On any failure the timer is not pending. */
TK_API int tk_timer_start(tk_executor *ex, tk_timer *timer, int64_t delay_ns);

/** As tk_timer_start(), but fn(timer) runs at deadline_ns, an absolute time
 * on tk_clock_now_ns()'s clock (CLOCK_MONOTONIC); a deadline already past
 * is due at once. Timers given one deadline are taken in the order they
 * were started. It saves start()'s clock read, gives many timers exactly the
 * same instant (a delay measured against one clock read and added to
 * another drifts by the time between them), and lets a timer re-armed from
 * its callback keep a fixed rate: start_at(ex, t, tk_timer_deadline_ns(t) +
 * period) does not accumulate the callback's lateness. Same results as
 * tk_timer_start(). */
TK_API int tk_timer_start_at(tk_executor *ex, tk_timer *timer, int64_t deadline_ns);

/** Sets how late the timer may fire on its later starts: fn(timer) then
 * runs at some instant in [deadline, deadline + slack_ns] (plus the engine's
 * precision and the OS's wake-up), never before the deadline, so that the
 * engine can wake once for many timers (queue.h, "Slack"). A timer's slack
 * is its own: 0 after tk_timer_init() (fire as soon as the engine can), kept
 * across starts; the executor's default_slack_ns applies to tasks only.
 * Returns TK_OK, TK_EINVAL (NULL timer, a timer never initialised, or
 * slack_ns < 0) or TK_ESTATE (the timer is not IDLE; a start() of the timer
 * on another thread at the same moment may get TK_ESTATE too, as against a
 * second start()). Added in 0.3. */
TK_API int tk_timer_set_slack(tk_timer *timer, int64_t slack_ns);

/** The timer's slack (tk_timer_set_slack()); 0 if NULL. */
TK_API int64_t tk_timer_slack_ns(const tk_timer *timer);

/** Stops a PENDING timer. `ex` must be the executor it was started on.
 * Returns TK_OK (it will never fire; it is IDLE at once unless an engine
 * thread or worker still holds it, see above), TK_ENOENT (it was not
 * pending: never started, already stopped, or its callback is about to run,
 * running or done), or TK_EINVAL (NULL, or a timer started on another
 * executor: a best-effort check of a tag of the executor's address, which
 * catches the mistake but cannot promise to). */
TK_API int tk_timer_stop(tk_executor *ex, tk_timer *timer);

/** True while the timer is started and has neither fired nor been stopped. */
TK_API bool tk_timer_is_pending(const tk_timer *timer);

/** True when the caller may start, re-initialise or free the timer. */
TK_API bool tk_timer_is_idle(const tk_timer *timer);

/** The deadline (CLOCK_MONOTONIC ns) it was last started for; 0 if NULL. In
 * its callback that is the deadline of the run, unless another thread has
 * already started the timer again. */
TK_API int64_t tk_timer_deadline_ns(const tk_timer *timer);

/* ---- access to the queue ---------------------------------------------- */
/** @name Access to the queue
 * The JDK's getQueue().contains(), remove(Runnable) and a read-only walk of
 * getQueue(). "Queued" means: in the engine, or one of the due tasks that a
 * worker has taken in a batch and not started yet; a task running, between
 * two periodic runs, or finished is not queued. These calls see tasks only:
 * embedded timers (tk_timer) have no future, so contains() and remove()
 * cannot name them, and the visitor skips them (they still count in
 * tk_executor_stats.queue_size). They are O(queued tasks) on every engine:
 * tools for tests, monitoring and rare clean-ups, not for a hot path. */
/** @{ */

/** Whether `f`'s task is queued: the JDK's getQueue().contains(f). As in the
 * JDK, a task cancelled while remove-on-cancel is off stays in the queue, and
 * reads true, until a worker takes it at its deadline and drops it or
 * tk_executor_purge() takes it out (it counts in queue_size meanwhile); with
 * remove-on-cancel on, a cancel takes it out at once. A task taken out by
 * tk_executor_remove() or handed back by shutdown_now() reads false. Whether
 * the task will still run is `tk_executor_contains(ex, f) &&
 * !tk_future_is_done(f)`. A snapshot: a task may start or be cancelled as
 * the call returns. False if either argument is NULL or `f` belongs to
 * another executor. No callback runs. */
TK_API bool tk_executor_contains(const tk_executor *ex, const tk_future *f);

/** Takes `f`'s task out so that it never runs, without calling it a cancel
 * (the JDK's remove(Runnable)). Returns TK_OK (it had not started, and now
 * never will: it left the queue, or a worker that already holds it drops it;
 * a periodic task between two runs ends too), TK_ENOENT (it was not
 * pending: running, done, cancelled or removed already; nothing changed), or
 * TK_EINVAL (NULL, or `f` belongs to another executor).
 *
 * The future completes so that nobody waits for ever (the JDK's would never
 * complete): tk_future_get() returns TK_EREMOVED, tk_future_is_done() and
 * tk_future_is_cancelled() are true, tk_future_cancel() says TK_EDONE. The
 * task's arg_free runs, on the calling thread, before the call returns. The
 * task counts in removed_count (or, if a worker had already taken it, in
 * completed_count, like a cancelled task that worker drops), never in
 * cancelled_count. The caller's reference on `f` is untouched: release it as
 * usual. */
TK_API int tk_executor_remove(tk_executor *ex, tk_future *f);

/** A queue visitor: called once per queued task with a copy of its info
 * (valid during the call only). Return true to go on, false to stop. */
typedef bool (*tk_queue_visit_fn)(const tk_task_info *task, void *ctx);

/** Calls visit(info, ctx) for each queued task that will still run, in
 * (deadline, seq) order: the order they would start in. Unlike the JDK's
 * iterator over getQueue(), it skips the cancelled tasks still queued that
 * tk_executor_contains() finds: the visitor is given a copy of each task's
 * info, not its future, so it could not tell such a task from a live one.
 * They count in queue_size; tk_executor_purge() takes them out. The set is a snapshot taken under
 * the engine's and the batches' locks; visit runs afterwards, on the calling thread, with no
 * executor lock held, so it may call into the executor (cancel, remove, schedule...); a task it
 * sees may have started, or left, meanwhile. Returns the number of calls made, TK_EINVAL (NULL ex
 * or visit) or TK_ENOMEM (the snapshot, one tk_task_info per queued task, is allocated through the
 * executor's allocator). */
TK_API long tk_executor_visit_queue(tk_executor *ex, tk_queue_visit_fn visit, void *ctx);

/** @} */

/* ---- bulk invocation and future states --------------------------------- */
/** @name Bulk invocation (the JDK's invokeAll / invokeAny)
 * Each task is a one-shot tk_task_spec (fn required, kind TK_TASK_ONE_SHOT,
 * any valid flags; a delay is allowed), scheduled as tk_executor_schedule_spec()
 * would, so the rejection policy, hooks and decorate see each task as usual.
 * Every spec is checked before anything is scheduled: one bad spec fails the
 * call with TK_EINVAL and nothing runs.
 *
 * Ownership of the tasks' arguments: a task the executor accepted belongs to
 * it (its arg_free runs once, when it completes or is cancelled, as for any
 * task). If scheduling task i fails (rejection, TK_ENOMEM, TK_ETHREAD), the
 * call cancels tasks 0..i-1 (with may_interrupt, as the JDK's cancelAll) and
 * returns that status; task i is handled as tk_executor_schedule_spec()
 * handles a failure (arg_free runs if it was rejected, not on TK_ENOMEM or
 * TK_ETHREAD) and tasks i+1..n-1 were never given to the executor: their
 * args stay the caller's. So that the caller can tell which is which, give
 * every spec an arg_free, or use args that need none.
 *
 * Cancelling does not stop a callback that is already running (see
 * tk_future_cancel()): after a failed or timed-out call nothing is queued
 * and no task of the call will start, but a run already in progress goes on
 * until its callback returns (it sees tk_run_interrupted()).
 *
 * These calls block. Made from a task of the same executor, they wait for
 * tasks that need another free pool thread: with a one-thread pool that is a
 * deadlock (as in the JDK); they do not detect it. */
/** @{ */

/** Runs every task and waits until all are done (the JDK's invokeAll:
 * "Executes the given tasks, returning a list of Futures holding their
 * status and results when all complete."). On TK_OK, futures[i] is task i's
 * future, done (completed, failed or cancelled), and the caller releases
 * each with tk_future_release(). On any other status every futures[i] is
 * NULL (if futures is not NULL) and no task of the call will start. n == 0 returns TK_OK at once.
 * Returns TK_OK, TK_EINVAL (NULL ex, or NULL specs or futures with n > 0, a
 * bad or periodic spec), or the status of the first task that could not be
 * scheduled (TK_EREJECTED, TK_ENOMEM, TK_ETHREAD, a custom policy's status). */
TK_API int tk_executor_invoke_all(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                  tk_future **futures);

/** As tk_executor_invoke_all(), waiting at most timeout_ns (< 0: forever) for
 * the tasks to finish; at the timeout, the tasks not yet done are cancelled
 * (may_interrupt), so every future is done on return. As in the JDK, a
 * timeout is not a failure: the call returns TK_OK with all the futures, and
 * the caller finds the cancelled ones with tk_future_state(). */
TK_API int tk_executor_invoke_all_timeout(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                          int64_t timeout_ns, tk_future **futures);

/** Runs the tasks until one succeeds and returns its result (the JDK's
 * invokeAny: "Executes the given tasks, returning the result of one that has
 * completed successfully (i.e., without throwing an exception), if any do.
 * Upon normal or exceptional return, tasks that have not completed are
 * cancelled."). As in the JDK, tasks are scheduled one by one and the
 * scheduling stops early once a task has succeeded. Success is a callback
 * that returned 0 and was not cancelled; `*result` (may be NULL; written only
 * on TK_OK) gets what it set with tk_run_set_result(). On return every other
 * task of the call is cancelled (may_interrupt); no future is handed out.
 * Returns TK_OK; TK_EINVAL (NULL ex or specs, n == 0 (the JDK's
 * IllegalArgumentException), a bad or periodic spec); when every task failed,
 * the status of the last failure the call saw, as tk_future_get() reports it
 * (TK_ETASKFAILED, or TK_ECANCELLED for a task cancelled from elsewhere, e.g.
 * by shutdown_now(), or dropped by a discard policy): which task that was
 * and its status, the JDK's ExecutionException.getCause(), come from
 * tk_executor_invoke_any_cause(); TK_ENOMEM (including the call's own
 * bookkeeping, two words per task); or the status of a task that could not
 * be scheduled, as invoke_all. */
TK_API int tk_executor_invoke_any(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                  void **result);

/** As tk_executor_invoke_any(), waiting at most timeout_ns (< 0: forever);
 * returns TK_ETIMEDOUT if no task succeeded by then (all are cancelled). */
TK_API int tk_executor_invoke_any_timeout(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                          int64_t timeout_ns, void **result);

/** As tk_executor_invoke_any_timeout() (timeout_ns < 0: forever), and says
 * which task its status is about, and that task's own status: what the
 * JDK's invokeAny carries in the ExecutionException it throws when every
 * task failed ("This exception can be inspected using the
 * Throwable.getCause() method").
 *
 * `*index` (may be NULL) is written on every return: the index in `specs`
 * of the task the returned status is about, or n when it is about none:
 * - TK_OK: the task whose result is in *result;
 * - TK_ETASKFAILED or TK_ECANCELLED (every task failed): the last failure
 *   the call saw, as the JDK throws "the last exception we got". Among
 *   tasks found ended at one look, the one scheduled later counts as the
 *   later failure, so tasks that end one after the other in scheduling
 *   order (a one-thread pool) name the last task, as in the JDK;
 * - TK_EINVAL for a bad or periodic spec: the first such spec (n for a NULL
 *   argument or n == 0);
 * - a status of the scheduling call (rejection, TK_ENOMEM, TK_ETHREAD): the
 *   task that could not be scheduled (the tasks after it were never given
 *   to the executor, see the ownership rule above);
 * - TK_ETIMEDOUT, or TK_ENOMEM for the call's own bookkeeping: n.
 *
 * `*task_status` (may be NULL) is written on every return: with
 * TK_ETASKFAILED, the named task's non-zero status (its callback's return
 * value, or a before_execute veto: tk_future_task_status()), the JDK's
 * cause; otherwise 0 (a cancelled task has no status, the JDK's cause is
 * then a CancellationException). A task that must report more than an int
 * can write it into its own arg, which the caller still owns if the spec
 * has no arg_free: the index says which. Returns what
 * tk_executor_invoke_any_timeout() returns. Added in 0.3. */
TK_API int tk_executor_invoke_any_cause(tk_executor *ex, const tk_task_spec *specs, size_t n,
                                        int64_t timeout_ns, void **result, size_t *index,
                                        int *task_status);

/** @} */

/** A future's state, as the JDK's Future.State (JDK 19 and later). */
typedef enum tk_task_state {
    TK_TASK_STATE_INVALID = -1, /**< only for a NULL future */
    TK_TASK_RUNNING = 0,        /**< "The task has not completed": queued, running,
                                   or a periodic task between runs */
    TK_TASK_SUCCESS = 1,        /**< "The task completed with a result": a one-shot
                                   callback returned 0 */
    TK_TASK_FAILED = 2,         /**< "The task completed with an exception": a
                                   callback returned non-zero */
    TK_TASK_CANCELLED = 3       /**< "The task was cancelled", dropped by a policy or
                                   handed back by shutdown_now() */
} tk_task_state;

/** The state of f's task, without waiting (the JDK's Future.state()). A task
 * cancelled while its callback runs is CANCELLED at once, as in the JDK.
 * Seeing SUCCESS, FAILED or CANCELLED means the task's arg_free has run,
 * except for a task cancelled during its run (it runs when the run returns).
 * Returns TK_TASK_STATE_INVALID if f is NULL. */
TK_API tk_task_state tk_future_state(const tk_future *f);

/** The name of a state: "RUNNING", "SUCCESS", "FAILED", "CANCELLED"
 * ("UNKNOWN" for any other value); a static string. */
TK_API const char *tk_task_state_name(tk_task_state state);

/** The task's result, without waiting (the JDK's resultNow()). Writes
 * *result (may be NULL) and returns TK_OK only if the state is SUCCESS;
 * otherwise returns TK_ESTATE (the JDK's IllegalStateException: "if the task
 * has not completed or the task did not complete with a result") and leaves
 * *result alone. TK_EINVAL if f is NULL. */
TK_API int tk_future_result_now(const tk_future *f, void **result);

/** The failed task's status, without waiting (the JDK's exceptionNow()):
 * writes the callback's non-zero return value to *status and returns TK_OK
 * only if the state is FAILED; otherwise returns TK_ESTATE (the JDK: "if the
 * task has not completed, the task completed normally, or the task was
 * cancelled") and leaves *status alone. TK_EINVAL if f or status is NULL. */
TK_API int tk_future_exception_now(const tk_future *f, int *status);

/** Makes every tk_future_get() / tk_future_get_timeout() blocked on f at the
 * time of the call return TK_EINTR, at once; the task itself is not affected
 * (use tk_future_cancel() for that). This is what interrupting the waiting
 * thread does in Java (get throws InterruptedException), with one
 * difference: Java interrupts a thread, and a flag left set makes its next
 * wait fail; here the abort targets the waits on one future that have
 * already begun, and a get that begins after the call is not affected.
 * A wait that sees the task done returns its outcome even if an abort came
 * too (completion wins). Usable from any thread, including a task's own
 * callback and after the executor is destroyed (while f is not released).
 * Returns TK_OK (also when nobody is waiting), or TK_EINVAL if f is NULL. */
TK_API int tk_future_abort_get(tk_future *f);

TK_EXTERN_C_END

#endif
