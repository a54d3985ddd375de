/* SPDX-License-Identifier: MIT */
/**
 * @file
 * @brief Timers for your own event loop: any engine's core, with no thread.
 *
 * A tk_loop holds timers for a program that already has a loop (epoll,
 * poll, libuv-style), in the manner of timeout.c and libuv's timer heap:
 * nothing runs behind the caller's back. The loop asks when the next timer
 * is due, sleeps in its own wait for at most that long, then takes what has
 * expired:
 *
 * @code
 * tk_loop *timers;
 * tk_loop_create(NULL, tk_clock_now_ns(), &timers);    // the default engine
 * tk_loop_add(timers, &conn->idle, tk_clock_now_ns() + 30 * TK_NS_PER_S);
 * for (;;) {
 *     int n = epoll_wait(ep, events, 64, tk_loop_timeout_ms(timers, tk_clock_now_ns()));
 *     ...                                              // the ready descriptors
 *     tk_node *due;
 *     tk_loop_expire(timers, tk_clock_now_ns(), SIZE_MAX, &due);
 *     for (tk_node *n = due, *next; n != NULL; n = next) {
 *         next = tk_node_next_detached(n);             // read it before reusing n
 *         on_timeout(n);
 *     }
 * }
 * @endcode
 *
 * A timer is a tk_node (queue.h) that the caller embeds in its own struct
 * and owns: adding one allocates nothing. Every engine whose table has a core
 * (tk_queue_ops.core: heap, wheel, hwheel, and engines registered with one)
 * can back a loop, with its own parameters. Timers leave as the engine's core
 * hands them out: never before their deadline, in (deadline, seq) order for
 * an exact engine, and at most one tick late on a ticked one at the
 * instants the loop asks (see engine.h, "Due").
 *
 * Not thread-safe: one thread, or the caller's own lock, serialises every
 * call on a loop. Different loops are independent.
 */
#ifndef TIMERKIT_LOOP_H
#define TIMERKIT_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "queue.h"

TK_EXTERN_C_BEGIN

/** A set of timers driven by the caller's own loop; opaque. */
typedef struct tk_loop tk_loop;

/**
 * Creates an empty loop.
 *
 * @param cfg     the engine and its parameters (tk_queue_config_init_for(),
 *                tk_queue_config_parse()); NULL, or a config that names no
 *                engine, selects tk_engine_default() with its defaults. The
 *                config's allocator serves the loop and the engine's core;
 *                thread_name, spin_ns and max_pending do not apply.
 * @param now_ns  the current time on the clock the caller will pass to the
 *                other calls (tk_clock_now_ns(), or any non-decreasing
 *                count of nanoseconds); a ticked engine lays its grid from it.
 * @param out     receives the loop; NULL on failure.
 * @return TK_OK; TK_EINVAL (out NULL, a parameter out of range, the config of
 *         an engine other than its own); TK_ENOTSUP (the engine has no core:
 *         it runs only as a blocking queue); TK_ENOMEM.
 */
TK_API int tk_loop_create(const tk_queue_config *cfg, int64_t now_ns, tk_loop **out);

/**
 * Frees the loop. The timers it still holds are not touched: they belong to
 * the caller, who may free or reuse them afterwards. NULL is a no-op.
 */
TK_API void tk_loop_destroy(tk_loop *loop);

/**
 * Adds a timer that expires at @p deadline_ns (on the clock of
 * tk_loop_create()). A deadline at or before the last tk_loop_expire()'s
 * time is due at the next tk_loop_expire(). Timers with equal deadlines
 * leave in the order they were added.
 *
 * @param loop         the loop.
 * @param node         the caller's timer: not held by this loop or any
 *                     other engine; its fields are set here.
 * @param deadline_ns  when it expires.
 * @return TK_OK; TK_EINVAL (loop or node NULL, node already in this loop);
 *         TK_ENOMEM (the engine could not grow; the loop is unchanged).
 */
TK_API int tk_loop_add(tk_loop *loop, tk_node *node, int64_t deadline_ns);

/**
 * As tk_loop_add(), with a slack: the timer may expire at any time in
 * [deadline_ns, deadline_ns + slack_ns], never before deadline_ns, so that
 * one wake-up of the caller's loop serves many timers (queue.h, "Slack").
 * tk_loop_timeout_ms() and tk_loop_latest() then answer the latest wait
 * that still meets every timer's window. tk_loop_add() is slack 0.
 *
 * @return as tk_loop_add(); TK_EINVAL also for slack_ns < 0.
 */
TK_API int tk_loop_add_within(tk_loop *loop, tk_node *node, int64_t deadline_ns, int64_t slack_ns);

/**
 * Removes a timer before it expires.
 *
 * @return TK_OK; TK_ENOENT (not in the loop: expired, removed, or never
 *         added, given a node whose fields were zeroed); TK_EINVAL (NULL).
 */
TK_API int tk_loop_remove(tk_loop *loop, tk_node *node);

/**
 * The earliest time at which tk_loop_expire() may hand out a timer.
 *
 * It is never later than the first timer's due time; on a hierarchical
 * wheel it may be earlier (a cascade), and tk_loop_expire() at that time
 * then hands out nothing and moves this answer later.
 *
 * @param loop     the loop.
 * @param when_ns  receives the time.
 * @return TK_OK; TK_ENOENT (no timer); TK_EINVAL (NULL argument).
 */
TK_API int tk_loop_next(const tk_loop *loop, int64_t *when_ns);

/**
 * The latest time the caller may sleep until and still expire every timer
 * within its window: the earliest end of a window (deadline + slack, on a
 * ticked engine rounded up to its tick) among the timers held, or earlier
 * (tk_loop_next() on an engine whose core ignores slack). With no slack
 * anywhere it is tk_loop_next(). tk_loop_expire() at that time hands out
 * every timer already due, not only those whose windows end then.
 *
 * @param loop     the loop.
 * @param when_ns  receives the time.
 * @return TK_OK; TK_ENOENT (no timer); TK_EINVAL (NULL argument).
 */
TK_API int tk_loop_latest(const tk_loop *loop, int64_t *when_ns);

/**
 * The timeout to give epoll_wait() or poll(), in milliseconds: -1 when the
 * loop holds no timer, 0 when tk_loop_latest() is at or before @p now_ns,
 * otherwise the time left until tk_loop_latest(), rounded down when the
 * timers have slack to spare and up when they have none: the time left
 * until tk_loop_latest() rounded down if that wait still reaches
 * tk_loop_next(), else the time left until tk_loop_next() rounded up (so
 * the wait never ends before the first timer is due, nor after a window
 * closes by more than the rounding, under 1 ms), at most INT32_MAX.
 * Without slack, tk_loop_latest() is tk_loop_next() and this is what it
 * always was. -1 also for a NULL loop.
 */
TK_API int tk_loop_timeout_ms(const tk_loop *loop, int64_t now_ns);

/**
 * Hands out the timers due at @p now_ns, in (deadline, seq) order, up to
 * @p max of them; the rest stay due for the next call.
 *
 * @param loop    the loop.
 * @param now_ns  the current time. A time earlier than an earlier call's, or
 *                than tk_loop_create()'s, counts as that earlier time: the
 *                loop's time never goes back.
 * @param max     the most timers to hand out (SIZE_MAX: all); 0 hands out
 *                none.
 * @param out     receives the list, linked through tk_node_next_detached()
 *                (NULL if none). The timers are no longer in the loop; the
 *                caller may add them again at once.
 * @return the number of timers handed out; 0 also when loop or out is NULL
 *         (then *out, if out is not NULL, is NULL).
 */
TK_API size_t tk_loop_expire(tk_loop *loop, int64_t now_ns, size_t max, tk_node **out);

/** The number of timers the loop holds; 0 for NULL. */
TK_API size_t tk_loop_count(const tk_loop *loop);

/** The engine behind the loop; NULL for NULL. */
TK_API const tk_queue_ops *tk_loop_engine(const tk_loop *loop);

TK_EXTERN_C_END

#endif
