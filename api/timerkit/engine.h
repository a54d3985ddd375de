/* SPDX-License-Identifier: MIT */
/** @file
 * timerkit: the engine SDK, for writing a timer engine.
 *
 * An engine is a tk_queue_ops table (queue.h). Most engines need to write
 * only a pure core, a tk_core_ops: a single-threaded structure with no
 * locks, no threads and no clock (it is told `now`). The generic blocking
 * adapter below then makes a correct blocking queue of it: the lock, the
 * leader-follower wait on the core's next deadline, spinning, close, drain,
 * remove_if, take_batch and the pending limit. An engine that needs threads
 * of its own (the wheel's tick thread) writes its own tk_queue_ops instead.
 *
 * docs/engines.md, "Writing an engine", walks through a whole engine: the
 * contract, its parameters, the generic adapter, registration, and how the
 * conformance and queue-contract suites, the fuzzer and tkbench take it up.
 *
 * A minimal engine built on the generic adapter:
 *
 *     typedef struct my_params { int64_t grain_ns; } my_params;
 *     static const tk_queue_param my_table[] = {
 *         {.key = "grain", .type = TK_PARAM_DURATION, .offset = offsetof(my_params, grain_ns),
 *          .size = sizeof(int64_t), .min = 1, .max = TK_NS_PER_S, .def = 1, .help = "..."},
 *         TK_BLOCKING_PARAMS,
 *     };
 *     static const tk_core_ops my_core = {.size = sizeof(my_core_state), .init = ..., ...};
 *     const tk_queue_ops my_engine = {
 *         .name = "mine",
 *         .description = "what it is, in one line",
 *         .caps = TK_QUEUE_CAP_EXACT_ORDER | TK_BLOCKING_CAPS,
 *         TK_BLOCKING_ADAPTER,
 *         .params = my_table, .param_count = 3, .params_size = sizeof(my_params),
 *         .core = &my_core,
 *     };
 *     ... tk_engine_register(&my_engine);   (or one line in engines/CMakeLists.txt in-tree)
 */
#ifndef TIMERKIT_ENGINE_H
#define TIMERKIT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "clock.h"
#include "export.h"
#include "queue.h"

TK_EXTERN_C_BEGIN

/** @{ */
/** The TK_NODE_PRIV_SIZE bytes of a node that belong to the engine holding
 * it, aligned for pointers and 64-bit integers. An engine overlays a struct
 * of its own (at most TK_NODE_PRIV_SIZE bytes). The first pointer-sized
 * word is also the link of the detached lists the engine hands back
 * (tk_node_next_detached()): an engine writes it last, once the node has
 * left its structure. */
static inline void *tk_node_priv(tk_node *n) {
    return (void *)&n->tk__priv;
}
static inline const void *tk_node_priv_const(const tk_node *n) {
    return (const void *)&n->tk__priv;
}
/** @} */

/** (deadline, seq) order: true if a goes strictly before b. */
static inline bool tk_node_before(const tk_node *a, const tk_node *b) {
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

/* ---- the pure core ------------------------------------------------------------
 *
 * A core holds nodes and hands them out once due. It is single-threaded (its
 * owner serialises every call), never blocks, never reads a clock and never
 * allocates per node: what it needs of a node lives in the node's private
 * area (tk_node_priv()).
 *
 * Due. Every core has a function due(deadline): the instant from which it
 * hands out a node with that deadline. An exact core (a heap) has
 * due(d) = d. A ticked core rounds up to its grid (a wheel with tick g laid
 * from origin o: the first o + k*g at or after d). due() never goes below d
 * (never early) and never decreases as d grows.
 *
 * Contract, for every sequence of calls (the fuzzer and the core-contract
 * suite check it against a model):
 *   - expire(now, max) hands out exactly the nodes with due(deadline) <= now,
 *     the smallest (deadline, seq) first, up to `max` of them; the rest stay
 *     due for the next call;
 *   - the `now` passed to expire() never decreases from one call to the
 *     next, and is never below the origin given to init();
 *   - a node inserted with due(deadline) <= the last `now` is handed out by
 *     the next expire();
 *   - next() gives an instant no later than the smallest due() of the nodes
 *     held; an exact answer is best, but a lower bound is allowed (a
 *     hierarchical wheel's next cascade), provided that expire() at that
 *     instant either hands out a node or moves next() strictly later;
 *   - a node handed out (expire, remove_if) or removed is no longer in the
 *     core: remove() of it answers TK_ENOENT, as it does for a node never
 *     inserted (zeroed private area).
 *
 * Slack. A node's window ends at end(n) = due(deadline + slack_ns), the sum
 * saturating at INT64_MAX (queue.h, "Slack"). A core that uses slack has
 * latest(), which answers an instant R with
 *       next() <= R <= the smallest end(n) of the nodes held:
 * exact is best, an earlier answer is allowed (it costs an early wake-up),
 * and next() itself is always a correct answer. An owner that sleeps until
 * R and then calls expire(R) hands out every node within its window, and in
 * the same call every other node already due, in (deadline, seq) order:
 * one wake-up for all of them. Slack never changes what expire() hands out
 * or in which order; it only tells the owner how long it may wait.
 * Ownership. The core never frees or allocates a node, and touches only its
 * private area, from insert() until the node leaves. Lists it hands back are
 * linked through the first word of the area (tk_node_next_detached()).
 *
 * Memory. Only init() (and the optional resize block below) may allocate,
 * through the allocator it is given. */

/** Optional: a core that keeps its nodes in one array that grows and shrinks
 * may let its owner move the array, so that the generic adapter allocates
 * and first-touches a new block with its lock dropped (a fault per 4 KiB
 * page, which under the lock would hold up every thread waiting for a
 * node). With `manual` called, insert() answers TK_EFULL instead of growing
 * and removals never shrink; the owner follows `wanted`. */
typedef struct tk_core_resize_ops {
    /** From now on the owner resizes: insert() returns TK_EFULL when full,
     * removals do not shrink. Called once, right after init(). */
    void (*manual)(void *core);
    /** Entries the array has room for. */
    size_t (*capacity)(const void *core);
    /** The capacity the core wants to move to now, or capacity() if none. */
    size_t (*wanted)(const void *core);
    /** Bytes of one entry (the owner touches the first entries' pages). */
    size_t entry_size;
    /** Allocates a block of `capacity` entries, contents undefined. Reads only
     * what does not change after init(), so the owner may call it with its
     * lock dropped while other calls run. NULL on failure. */
    void *(*alloc_block)(const void *core, size_t capacity);
    /** Moves the core into `block` if that is still a move it wants (its size
     * may have changed since wanted()); returns true and hands back the old
     * array in *old_block / *old_capacity, or false (block still the
     * caller's). */
    bool (*adopt)(void *core, void *block, size_t capacity, void **old_block, size_t *old_capacity);
    /** Frees a block from alloc_block() or adopt(); like alloc_block(), may
     * run concurrently with other calls. NULL block: no-op. */
    void (*free_block)(const void *core, void *block, size_t capacity);
} tk_core_resize_ops;

struct tk_core_ops {
    /** Bytes of one core's state. Its owner allocates them, aligned for any
     * type, and passes them to every call as `core`. */
    size_t size;

    /** Initialises an empty core in `core`. `params` is the engine's
     * parameter struct, already checked (tk_queue_config_check()); `a` the
     * allocator for anything the core allocates (never NULL); `origin_ns`
     * the instant time starts at (a ticked core lays its grid from there).
     * Returns TK_OK, TK_ENOMEM or TK_EINVAL; on failure nothing is left to
     * destroy. */
    int (*init)(void *core, const void *params, const tk_allocator *a, int64_t origin_ns);

    /** Frees what init() allocated. Nodes still held are not touched. */
    void (*destroy)(void *core);

    /** Adds `n` (deadline_ns and seq set). Returns TK_OK, TK_ENOMEM (could
     * not grow), TK_EFULL (manual resizing and full: resize and insert
     * again) or TK_EINVAL (n is already in this core); on failure the core
     * and n are unchanged. */
    int (*insert)(void *core, tk_node *n);

    /** Removes `n`, due or not. Returns TK_OK, or TK_ENOENT if n is not in
     * this core (handed out, removed, never inserted). Must tell from n's
     * private area alone, in O(1) or close. */
    int (*remove)(void *core, tk_node *n);

    /** The instant from which expire() hands out a node with `deadline_ns`
     * (see "Due"); >= deadline_ns, non-decreasing. */
    int64_t (*due)(const void *core, int64_t deadline_ns);

    /** Stores in *when_ns the earliest instant at which expire() may hand out
     * a node (see the contract: exact or a lower bound) and returns TK_OK,
     * or returns TK_ENOENT if the core is empty. */
    int (*next)(const void *core, int64_t *when_ns);

    /** Hands out up to `max` (>= 1) nodes with due(deadline) <= now_ns, in
     * (deadline, seq) order, as a list linked through
     * tk_node_next_detached(); NULL if none. *count (never NULL) receives
     * their number. */
    tk_node *(*expire)(void *core, int64_t now_ns, size_t max, size_t *count);

    /** Number of nodes held. */
    size_t (*count)(const void *core);

    /** The node with the smallest (deadline, seq), due or not, left in place;
     * NULL if empty. */
    tk_node *(*first)(const void *core);

    /** Removes every node for which pred(n, ctx) is true, calling pred once
     * per node, and hands them back as a detached list in any order; NULL if
     * none. *count (never NULL) receives their number. pred must not call
     * into the core. */
    tk_node *(*remove_if)(void *core, bool (*pred)(const tk_node *n, void *ctx), void *ctx,
                          size_t *count);

    /** Verifies every invariant of the structure. Returns TK_OK or TK_ESTATE.
     * Tests call it after every step; it may be slow. */
    int (*check)(const void *core);

    /** The number of nodes expire(now_ns) could hand out, counting no further
     * than `limit` (the answer is then `limit`). The adapter cuts a fair
     * share of a batch with it when several takers wait; O(min(due, limit))
     * or close is enough. */
    size_t (*count_due)(const void *core, int64_t now_ns, size_t limit);

    /** Optional: owner-driven resizing (see tk_core_resize_ops), or NULL. */
    const tk_core_resize_ops *resize;

    /** Optional (NULL: the core ignores slack, and its owner plans its waits
     * with next()): stores in *when_ns the latest instant the owner may wait
     * until before calling expire() and still hand every node out within its
     * window (see "Slack" below), and returns TK_OK; TK_ENOENT if the core
     * is empty. Added in 0.3. */
    int (*latest)(const void *core, int64_t *when_ns);
};

/* ---- the generic blocking adapter ----------------------------------------------- */

/** @{ */
/** Queue operations that work for any engine whose tk_queue_ops.core is set:
 * a copy of the core per shard (one per CPU, each under a lock of its own,
 * nodes filed by their shard key), a room where takers wait on a
 * CLOCK_MONOTONIC condition variable, the
 * JDK's DelayedWorkQueue wait (only the leader sleeps until the next
 * deadline; followers wait untimed, so one due node wakes one thread), the
 * spin_ns and max_pending settings, fair take_batch(), and array resizing
 * outside the lock for cores that offer it. It never wakes for an empty
 * tick: it sleeps until core->latest() (the earliest end of a node's
 * window, see "Slack"), or core->next() for a core without latest(), and
 * then hands out every node already due. remove() always completes at once
 * (never TK_EINPROGRESS) and `release` is never called.
 *
 * Fill a table with TK_BLOCKING_ADAPTER, declare TK_BLOCKING_CAPS among the
 * caps and list TK_BLOCKING_PARAMS in the parameter table. */
TK_API int tk_blocking_create(const tk_queue_ops *self, const tk_queue_config *cfg,
                              tk_queue_release_fn release, void *release_ctx, tk_queue **out);
TK_API void tk_blocking_destroy(tk_queue *q);
TK_API int tk_blocking_offer(tk_queue *q, tk_node *n);
TK_API int tk_blocking_take(tk_queue *q, tk_node **out);
TK_API int tk_blocking_poll(tk_queue *q, int64_t timeout_ns, tk_node **out);
TK_API int tk_blocking_remove(tk_queue *q, tk_node *n);
TK_API int tk_blocking_remove_first(tk_queue *q, tk_node **out);
TK_API int tk_blocking_peek(tk_queue *q, int64_t *deadline_ns, uint64_t *seq);
TK_API size_t tk_blocking_size(tk_queue *q);
TK_API tk_node *tk_blocking_drain(tk_queue *q);
TK_API tk_node *tk_blocking_remove_if(tk_queue *q, bool (*pred)(const tk_node *n, void *ctx),
                                      void *ctx);
TK_API void tk_blocking_close(tk_queue *q, tk_queue_close_mode mode);
TK_API int tk_blocking_check(tk_queue *q);
TK_API int tk_blocking_take_batch(tk_queue *q, size_t max, tk_node **out, size_t *count);
TK_API uint64_t tk_blocking_wakeups(tk_queue *q);
TK_API void tk_blocking_wake(tk_queue *q);
/** @} */

/** Designated initialisers of every operation of a tk_queue_ops table that
 * runs on the generic adapter. */
#define TK_BLOCKING_ADAPTER                                                                        \
    .create = tk_blocking_create, .destroy = tk_blocking_destroy, .offer = tk_blocking_offer,      \
    .take = tk_blocking_take, .poll = tk_blocking_poll, .remove = tk_blocking_remove,              \
    .remove_first = tk_blocking_remove_first, .peek = tk_blocking_peek, .size = tk_blocking_size,  \
    .drain = tk_blocking_drain, .remove_if = tk_blocking_remove_if, .close = tk_blocking_close,    \
    .check = tk_blocking_check, .take_batch = tk_blocking_take_batch,                              \
    .wakeups = tk_blocking_wakeups, .wake = tk_blocking_wake

/** What the generic adapter provides: the pending limit, cheap batches, a
 * shard per CPU and wake(). */
#define TK_BLOCKING_CAPS                                                                           \
    (TK_QUEUE_CAP_BOUNDED | TK_QUEUE_CAP_BATCH_TAKE | TK_QUEUE_CAP_SHARDED | TK_QUEUE_CAP_WAKE)

/** Largest spin_ns an engine accepts. */
#define TK_SPIN_MAX_NS TK_NS_PER_S

/** @{ */
/** The parameter-table entries of the blocking adapter's settings
 * (tk_queue_config.spin_ns and max_pending), for any engine whose adapter
 * honours them. */
#define TK_QUEUE_PARAM_SPIN                                                                        \
    {                                                                                              \
        .key = "spin", .type = TK_PARAM_DURATION, .flags = TK_PARAM_ADAPTER,                       \
        .offset = offsetof(tk_queue_config, spin_ns), .size = sizeof(int64_t), .min = 0,           \
        .max = TK_SPIN_MAX_NS, .def = 0,                                                           \
        .help = "busy-wait this long before a deadline instead of sleeping (0: never)"             \
    }
#define TK_QUEUE_PARAM_MAX_PENDING                                                                 \
    {                                                                                              \
        .key = "max_pending", .type = TK_PARAM_COUNT, .flags = TK_PARAM_ADAPTER,                   \
        .offset = offsetof(tk_queue_config, max_pending), .size = sizeof(size_t), .min = 0,        \
        .max = (int64_t)(SIZE_MAX > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : SIZE_MAX),         \
        .def = 0, .help = "offers beyond this many queued nodes get TK_EFULL (0: unbounded)"       \
    }
/** @} */
/** Both entries, for an engine's parameter table. */
#define TK_BLOCKING_PARAMS TK_QUEUE_PARAM_MAX_PENDING, TK_QUEUE_PARAM_SPIN

/* ---- checking and registering an engine --------------------------------------- */

/** Checks that `engine` is a usable table: a name of letters, digits, '_'
 * and '-' (at most 31 bytes), every operation the executor needs (create,
 * destroy, offer, take, remove, remove_first, size, drain, remove_if,
 * close), a well-formed parameter table (keys, types, field sizes, ranges,
 * defaults within them, offsets inside params_size or tk_queue_config),
 * params_size <= TK_QUEUE_PARAMS_SIZE, and a complete core if it has one.
 * Returns TK_OK, or TK_EINVAL with a one-line message in err (may be NULL)
 * naming what is wrong. */
TK_API int tk_engine_check(const tk_queue_ops *engine, char *err, size_t err_len);

/** @fn int tk_engine_register(const tk_queue_ops *engine, char *err, size_t err_len)
 * Adds `engine` to the registry, so that tk_engine_by_name(),
 * tk_engine_count()/tk_engine_at() and spec strings find it: an engine that
 * lives outside this library. The table must stay valid and unchanged for
 * the rest of the process (a static const). Registering the same table
 * again is a no-op.
 * Returns TK_OK; TK_EINVAL (NULL, or tk_engine_check() fails: err gets
 * why); TK_ESTATE (another engine has that name); TK_EFULL (the registry
 * holds TK_ENGINE_REGISTER_MAX run-time engines already). Thread-safe. */
#define TK_ENGINE_REGISTER_MAX 16 /**< run-time engines the registry holds at most */
TK_API int tk_engine_register(const tk_queue_ops *engine, char *err, size_t err_len);

TK_EXTERN_C_END

#endif
