/* SPDX-License-Identifier: MIT */
/**
 * @file
 * @brief A timer on its own, as Netty's HashedWheelTimer: one worker thread,
 * one-shot timeouts, handles that cancel.
 *
 * A tk_wheel_timer runs callbacks after a delay on a thread of its own (or
 * hands them to a tk_executor), in the manner of Netty's HashedWheelTimer,
 * Timer and Timeout. It is built on the passive loop (loop.h), so any engine
 * with a core can back it; the default is the hashed wheel (its tick and
 * slots are Netty's tickDuration and ticksPerWheel):
 *
 * @code
 * tk_wheel_timer_options opt;
 * tk_wheel_timer_options_init(&opt);                   // the wheel, 1 ms tick
 * tk_queue_config_set_value(&opt.queue, "tick", 10 * TK_NS_PER_MS);
 * tk_wheel_timer *timer;
 * tk_wheel_timer_create(&opt, &timer);
 * tk_timeout *t;
 * tk_wheel_timer_new_timeout(timer, on_idle, conn, 30 * TK_NS_PER_S, &t);
 * ...
 * tk_timeout_cancel(t);                                // the peer spoke in time
 * tk_timeout_release(t);                               // our reference
 * ...
 * tk_wheel_timer_destroy(timer);                       // stops the worker
 * @endcode
 *
 * Guarantees:
 * - Never early: a callback starts no sooner than @c delay_ns after
 *   tk_wheel_timer_new_timeout() was called; on a ticked engine it may start
 *   up to about one tick later (more under load), and a timeout with slack
 *   up to its slack later still (tk_wheel_timer_options.slack_ns).
 * - Exact accounting: every timeout ends exactly once, as expired (its
 *   callback was run or handed to the executor), cancelled by
 *   tk_timeout_cancel(), or handed back by tk_wheel_timer_stop().
 * - A callback may create and cancel timeouts on its own timer.
 * - A timeout made with a cancelled hook (tk_timeout_spec.cancelled, Netty's
 *   TimerTask.cancelled()) is told, once, that tk_timeout_cancel()
 *   cancelled it: on the worker thread, with no timer lock held.
 *
 * Lifetime: a tk_timeout is reference counted. The timer holds one reference
 * until the timeout ends (after the callback returns, after its cancelled
 * hook returns, or after stop's visitor has seen it); tk_wheel_timer_new_timeout() gives the caller
 * a second one when it asks for the handle, which the caller drops with tk_timeout_release(),
 * before or after expiry. A timeout keeps its timer's memory alive, so a handle stays usable
 * (cancel answers false, the predicates answer) even after tk_wheel_timer_destroy().
 *
 * docs/wheel-timer.md maps Netty's API onto this one and lists the
 * differences.
 */
#ifndef TIMERKIT_WHEEL_TIMER_H
#define TIMERKIT_WHEEL_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor.h"
#include "export.h"
#include "queue.h"

TK_EXTERN_C_BEGIN

/** A timer with one worker thread, as Netty's HashedWheelTimer; opaque. */
typedef struct tk_wheel_timer tk_wheel_timer;

/** One scheduled callback, as Netty's Timeout; opaque and reference counted. */
typedef struct tk_timeout tk_timeout;

/**
 * A timeout's callback (Netty's TimerTask.run()), and the type of its
 * cancelled hook (TimerTask.cancelled(), tk_timeout_spec.cancelled). Runs on
 * the timer's worker thread, or (the callback only) on the options'
 * task_executor, with no timer lock held. It may call any function of this
 * header on its own timer except tk_wheel_timer_stop() and
 * tk_wheel_timer_destroy() (TK_EDEADLK from the worker thread). @p timeout
 * is valid during the call; keep it longer only through the reference
 * tk_wheel_timer_new_timeout() gave the caller.
 *
 * @param timeout  the timeout that expired (or, for the hook, was cancelled).
 * @param arg      the argument given to tk_wheel_timer_new_timeout().
 */
typedef void (*tk_timer_task_fn)(tk_timeout *timeout, void *arg);

/**
 * Sees one timeout handed back by tk_wheel_timer_stop(): one that had
 * neither expired nor been cancelled. It is cancelled by then
 * (tk_timeout_is_cancelled()); its callback never runs, and neither does
 * its cancelled hook (as Netty's stop(), which returns these timeouts and
 * does not call TimerTask.cancelled() for them). @p timeout is valid during
 * the call; tk_timeout_arg() gives its argument (to free it, say).
 *
 * @param ctx      the context given to tk_wheel_timer_stop().
 * @param timeout  the timeout handed back.
 */
typedef void (*tk_timeout_visit_fn)(void *ctx, tk_timeout *timeout);

/** The most live timers before the one-time warning on stderr (Netty's
 * INSTANCE_COUNT_LIMIT). */
#define TK_WHEEL_TIMER_WARN_INSTANCES 64

/** How tk_wheel_timer_create() builds a timer; fill it with
 * tk_wheel_timer_options_init() first. */
typedef struct tk_wheel_timer_options {
    /** The engine and its parameters: the wheel by default, whose "tick"
     * (Netty's tickDuration) and "slots" (ticksPerWheel, rounded up to a
     * power of two) are set with tk_queue_config_set_value(). Any engine
     * with a core may be named instead (tk_queue_config_init_for()). Its
     * allocator serves the timer and its timeouts; thread_name, spin_ns and
     * max_pending do not apply (see max_pending_timeouts). */
    tk_queue_config queue;
    /** Netty's maxPendingTimeouts: new timeouts beyond this many pending get
     * TK_EFULL; 0 (the default): no limit. */
    size_t max_pending_timeouts;
    /** Starts the worker thread (Netty's threadFactory); NULL: pthread_create. */
    tk_thread_factory_fn thread_factory;
    void *thread_factory_ctx; /**< passed to thread_factory */
    const char *thread_name;  /**< the worker's name; NULL: "tk-wheel-timer" */
    /** Runs the callbacks (Netty's taskExecutor); NULL (the default): the
     * worker thread runs them. The worker hands each expired callback to it
     * as a task due now; when that call fails (the executor is shut down,
     * say), the worker runs the callback itself. The caller owns it: destroy
     * it only after tk_wheel_timer_stop() (or destroy) of this timer. */
    tk_executor *task_executor;
    /** A hard limit on live timers in the process: create fails with TK_EFULL
     * when this many are alive already; 0 (the default): no limit. */
    size_t max_instances;
    /** The slack of every timeout made by tk_wheel_timer_new_timeout(): its
     * callback runs at some instant in [deadline, deadline + slack_ns],
     * never before, so that the worker wakes once for many timeouts
     * (queue.h, "Slack"). Default 0: at the first tick after the deadline,
     * as Netty. >= 0. Added in 0.3. */
    int64_t slack_ns;
} tk_wheel_timer_options;

/**
 * Fills @p opt with the defaults: the wheel engine (tk_engine_wheel(), or
 * tk_engine_default() in a build without it) at its own defaults, no pending
 * limit, pthread_create, the worker runs the callbacks, no instance limit.
 *
 * @param opt  the options to fill.
 * @return TK_OK; TK_EINVAL (NULL).
 */
TK_API int tk_wheel_timer_options_init(tk_wheel_timer_options *opt);

/**
 * Creates a timer. Its worker thread starts with the first timeout, or with
 * tk_wheel_timer_start(). Past TK_WHEEL_TIMER_WARN_INSTANCES live timers in
 * the process, one line is written to stderr, once per process.
 *
 * @param opt  the options; NULL: the defaults.
 * @param out  receives the timer; NULL on failure.
 * @return TK_OK; TK_EINVAL (out NULL, a bad parameter, slack_ns < 0); TK_ENOTSUP (the
 *         engine has no core); TK_EFULL (max_instances timers are alive);
 *         TK_ENOMEM.
 */
TK_API int tk_wheel_timer_create(const tk_wheel_timer_options *opt, tk_wheel_timer **out);

/**
 * Starts the worker thread now rather than with the first timeout (Netty's
 * start()). Returns once the thread exists.
 *
 * @param timer  the timer.
 * @return TK_OK (also if already started); TK_EINVAL (NULL); TK_ESTATE
 *         (stopped or stopping, as from tk_wheel_timer_new_timeout());
 *         TK_ETHREAD (the thread factory failed; a later call may try
 *         again).
 */
TK_API int tk_wheel_timer_start(tk_wheel_timer *timer);

/* Per-timeout flags (tk_timeout_spec.flags). */
/** slack_ns is this timeout's slack; without the flag the timeout gets the
 * options' slack_ns. Unknown flag bits are TK_EINVAL. */
#define TK_TIMEOUT_SLACK 0x1u

/**
 * A full description of one timeout, for tk_wheel_timer_new_timeout_spec():
 * Netty's TimerTask (its run() and cancelled()) with the argument, the delay
 * and the slack. Zero-initialise it and set what you need. Added in 0.3.
 */
typedef struct tk_timeout_spec {
    /** TimerTask.run(): called once when the timeout expires (see
     * tk_timer_task_fn). Required. */
    tk_timer_task_fn fn;
    /** TimerTask.cancelled(): called once, with the same (timeout, arg),
     * after a tk_timeout_cancel() of this timeout returned true. It runs on
     * the timer's worker thread (never on the task_executor), soon after the
     * cancel and never inside it, with no timer lock held; it may do what fn
     * may (create, cancel, release timeouts; not stop or destroy its timer).
     * When the timer stops before the worker got to it, it runs on the thread
     * of tk_wheel_timer_stop(), before stop returns and before stop's visitor
     * sees the timeouts stop hands back; those get no call here. NULL (the
     * default): none, as Netty's default cancelled(), which does nothing. */
    tk_timer_task_fn cancelled;
    void *arg;        /**< passed to fn and cancelled; the timer does not own it */
    int64_t delay_ns; /**< nanoseconds from now; negative: now; clamped past INT64_MAX */
    unsigned flags;   /**< TK_TIMEOUT_* */
    /** With TK_TIMEOUT_SLACK: fn runs at some instant in [deadline, deadline
     * + slack_ns], never before; >= 0, else TK_EINVAL. Without the flag it is
     * not read, and the options' slack_ns applies. */
    int64_t slack_ns;
} tk_timeout_spec;

/**
 * Schedules one timeout as @p spec describes it (Netty's newTimeout(task,
 * delay, unit), with the task's cancelled() hook). Starts the worker if
 * needed. tk_wheel_timer_new_timeout() and _within() are this call with no
 * cancelled hook.
 *
 * @param timer  the timer.
 * @param spec   the timeout; read during the call only.
 * @param out    receives a handle holding a reference of the caller's, to
 *               drop with tk_timeout_release(); NULL: no handle (the timeout
 *               can then not be cancelled, only stopped).
 * @return TK_OK; TK_EINVAL (timer, spec or spec->fn NULL, an unknown flag, a
 *         negative slack_ns with TK_TIMEOUT_SLACK); TK_ESTATE (the timer is
 *         stopped, or stopping: Netty's IllegalStateException); TK_EFULL
 *         (max_pending_timeouts are pending: Netty's
 *         RejectedExecutionException); TK_ETHREAD (the worker could not
 *         start); TK_ENOMEM. *out is set only on TK_OK.
 */
TK_API int tk_wheel_timer_new_timeout_spec(tk_wheel_timer *timer, const tk_timeout_spec *spec,
                                           tk_timeout **out);

/**
 * Schedules fn(timeout, arg) once, @p delay_ns from now (Netty's
 * newTimeout()), with the options' slack_ns. Starts the worker if needed.
 *
 * @param timer     the timer.
 * @param fn        the callback.
 * @param arg       passed to fn; the timer does not own it.
 * @param delay_ns  nanoseconds from now; negative: now; a deadline past
 *                  INT64_MAX is clamped.
 * @param out       receives a handle holding a reference of the caller's,
 *                  to drop with tk_timeout_release(); NULL: no handle (the
 *                  timeout can then not be cancelled, only stopped).
 * @return TK_OK; TK_EINVAL (timer or fn NULL); TK_ESTATE (the timer is
 *         stopped or stopping, as from tk_wheel_timer_start(): Netty throws
 *         IllegalStateException from both); TK_EFULL (max_pending_timeouts
 *         are pending); TK_ETHREAD (the worker could not start); TK_ENOMEM.
 *         *out is set only on TK_OK.
 */
TK_API int tk_wheel_timer_new_timeout(tk_wheel_timer *timer, tk_timer_task_fn fn, void *arg,
                                      int64_t delay_ns, tk_timeout **out);

/**
 * As tk_wheel_timer_new_timeout(), with this timeout's own slack instead of
 * the options' slack_ns: fn runs at some instant in [deadline, deadline +
 * slack_ns], never before.
 *
 * @return as tk_wheel_timer_new_timeout(); TK_EINVAL also for slack_ns < 0.
 */
TK_API int tk_wheel_timer_new_timeout_within(tk_wheel_timer *timer, tk_timer_task_fn fn, void *arg,
                                             int64_t delay_ns, int64_t slack_ns, tk_timeout **out);

/**
 * The number of timeouts that have neither expired nor been cancelled
 * (Netty's pendingTimeouts()); 0 for NULL.
 */
TK_API size_t tk_wheel_timer_pending(const tk_wheel_timer *timer);

/**
 * The timer's tick as its engine uses it: Netty's tickDuration after the
 * constructor normalised it, for a program to log. Read from the engine's
 * "tick" parameter (tk_queue_config_get_value()): the wheel and hwheel use
 * it as given (the wheel refuses a tick below its minimum where Netty raises
 * it to 1 ms). The heap has no tick: TK_ENOTSUP, *tick_ns 0.
 *
 * @param timer    the timer.
 * @param tick_ns  receives the tick in nanoseconds; 0 on failure.
 * @return TK_OK; TK_EINVAL (NULL argument); TK_ENOTSUP (the engine has no
 *         tick).
 */
TK_API int tk_wheel_timer_tick_ns(const tk_wheel_timer *timer, int64_t *tick_ns);

/**
 * The slots of one revolution of the timer's wheel: Netty's ticksPerWheel
 * after the constructor rounded it up to a power of two (its wheel.length).
 * The wheel: its "slots" parameter rounded up to a power of two, as its core
 * does. The hwheel: the slots of one level, 2^"bits". The heap has no
 * slots: TK_ENOTSUP, *slots 0.
 *
 * @param timer  the timer.
 * @param slots  receives the count; 0 on failure.
 * @return TK_OK; TK_EINVAL (NULL argument); TK_ENOTSUP (the engine has no
 *         wheel).
 */
TK_API int tk_wheel_timer_slots(const tk_wheel_timer *timer, size_t *slots);

/**
 * Stops the worker and hands back, once each, the timeouts that never ran
 * (Netty's stop()). When it returns, the worker thread has ended: no
 * callback runs on it any more (callbacks already given to a task_executor
 * still run there). Cancelled hooks (tk_timeout_spec.cancelled) that the
 * worker had not run yet run on the calling thread before the visitor.
 * Later new timeouts and tk_wheel_timer_start() get TK_ESTATE. A second
 * stop hands back nothing.
 *
 * @param timer    the timer.
 * @param visitor  called once per timeout handed back, on the calling
 *                 thread, with no timer lock held; NULL: none is seen.
 * @param ctx      passed to visitor.
 * @return the number of timeouts handed back (>= 0); TK_EINVAL (NULL);
 *         TK_EDEADLK (called from the worker thread, i.e. from a callback
 *         the worker runs; nothing is done).
 */
TK_API long tk_wheel_timer_stop(tk_wheel_timer *timer, tk_timeout_visit_fn visitor, void *ctx);

/**
 * Stops the timer (as tk_wheel_timer_stop() with no visitor) and drops the
 * caller's reference to it. Its memory goes when the last handle of its
 * timeouts is released. No other call on @p timer may be made after it,
 * except through tk_timeout_timer() of a handle still held.
 *
 * @param timer  the timer; NULL is TK_EINVAL.
 * @return TK_OK; TK_EINVAL; TK_EDEADLK (from the worker thread; nothing is
 *         done).
 */
TK_API int tk_wheel_timer_destroy(tk_wheel_timer *timer);

/**
 * The number of live timers in the process: created and not yet stopped.
 */
TK_API size_t tk_wheel_timer_instances(void);

/**
 * Cancels a pending timeout (Netty's Timeout.cancel()): it is removed from
 * the timer and its callback never runs. If it has expired or was
 * cancelled (or handed back by stop) already, nothing happens. A timeout
 * with a cancelled hook (tk_timeout_spec.cancelled) has it called once,
 * later, on the worker thread (as Netty's worker calls
 * TimerTask.cancelled()); this call does not wait for it.
 *
 * @param timeout  the handle.
 * @return true if this call cancelled it; false otherwise and for NULL.
 */
TK_API bool tk_timeout_cancel(tk_timeout *timeout);

/** True if the timeout was cancelled, by tk_timeout_cancel() or by
 * tk_wheel_timer_stop() (Netty's isCancelled()); false for NULL. */
TK_API bool tk_timeout_is_cancelled(const tk_timeout *timeout);

/** True if the timeout has expired: its callback has run, is running, or
 * was given to the task executor (Netty's isExpired()); false for NULL. */
TK_API bool tk_timeout_is_expired(const tk_timeout *timeout);

/** The timer that created the timeout (Netty's timer()); NULL for NULL. */
TK_API tk_wheel_timer *tk_timeout_timer(const tk_timeout *timeout);

/** The argument given to tk_wheel_timer_new_timeout() (in the place of
 * Netty's task()); NULL for NULL. */
TK_API void *tk_timeout_arg(const tk_timeout *timeout);

/**
 * Drops the caller's reference given by tk_wheel_timer_new_timeout(). Does
 * not cancel: a pending timeout still runs. Once per handle.
 *
 * @param timeout  the handle.
 * @return TK_OK; TK_EINVAL (NULL).
 */
TK_API int tk_timeout_release(tk_timeout *timeout);

TK_EXTERN_C_END

#endif
