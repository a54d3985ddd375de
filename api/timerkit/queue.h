/* SPDX-License-Identifier: MIT */
/** @file
 * timerkit: the queue interface every timer engine implements.
 *
 * The executor never touches an engine directly: it holds a `const
 * tk_queue_ops *` and calls through it. An engine is a blocking delay queue
 * of intrusive nodes (tk_node): offer() inserts a node, take()/poll() hand out
 * nodes whose deadline has passed, in (deadline_ns, seq) order.
 *
 * This header is what a user of engines needs: nodes, the engine's config
 * and parameters, spec strings, the registry. What an engine's author needs
 * besides (the pure core interface, the generic blocking adapter, run-time
 * registration) is in engine.h; docs/engines.md tells how to write one.
 *
 * Ownership. A node belongs to exactly one party at a time. offer() that
 * returns TK_OK moves it into the queue; it comes back to the caller through
 * take()/poll()/take_batch() (expired), remove() returning TK_OK, drain(),
 * remove_if() or remove_first(), or, when remove() returned TK_EINPROGRESS,
 * through the `release` callback given to create(). Until it comes back the
 * caller must not free the node or change its deadline_ns or seq. Engines
 * never allocate per node: everything they need lives in the node's private
 * area.
 *
 * Slack. A node's window is [deadline_ns, deadline_ns + slack_ns] (the sum
 * saturates at INT64_MAX): the owner says the node may leave at any instant
 * in it. An engine that uses slack (TK_QUEUE_CAP_SLACK) guarantees:
 *   - never early: no node leaves before its deadline_ns, whatever its slack;
 *   - never later than its window's end plus the engine's own precision (a
 *     ticked engine rounds the end up to its tick, as it rounds deadlines)
 *     plus the wake-up latency of the thread that hands it out;
 *   - the same order: whatever leaves together leaves in (deadline, seq)
 *     order as without slack (exactly on a TK_QUEUE_CAP_EXACT_ORDER engine;
 *     per tick on a ticked one), so nodes with equal deadlines still leave
 *     in seq order, whatever their slacks;
 *   - fewer wake-ups: its thread sleeps until the earliest window end among
 *     its nodes, not the earliest deadline, and then hands out every node
 *     already due; one wake-up serves every node whose window contains it.
 * A node with slack 0 leaves as it would without slack. A negative slack_ns
 * gets TK_EINVAL from offer(). An engine that ignores slack_ns (written
 * before 0.3, without TK_QUEUE_CAP_SLACK) stays correct: it hands each node
 * out at the start of its window.
 *
 * Threads. Every op except create/destroy may be called from any thread at
 * once. A NULL queue or NULL output pointer gets TK_EINVAL (or 0 / NULL from
 * ops that return no status). No op calls user code; the only callbacks are the `pred` given to
 * remove_if() (called with the engine lock held: it must be pure and quick)
 * and `release` (called from an engine thread, with no engine lock held).
 */
#ifndef TIMERKIT_QUEUE_H
#define TIMERKIT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "export.h"

TK_EXTERN_C_BEGIN

/** Bytes of engine-private storage in every node (tk_node.tk__priv). */
#define TK_NODE_PRIV_SIZE 32

/** The intrusive header a task embeds. Owners set deadline_ns, seq and
 * slack_ns before offer(); engines read them and use only tk__priv. */
typedef struct tk_node {
    int64_t deadline_ns; /**< absolute CLOCK_MONOTONIC deadline: never handed out before it */
    uint64_t seq;        /**< tie-breaker: equal deadlines leave in seq order */
    /** How late the node may leave: any instant in [deadline_ns, deadline_ns
     * + slack_ns] will do (0: as soon as the engine can; >= 0). An engine
     * may hold a node until the end of its window, so that one wake-up
     * hands out every node whose window contains that instant (see "Slack"
     * above). Added in 0.3 (SOVERSION 3). */
    int64_t slack_ns;
    /** Engine-private storage: valid only while the node is in that engine.
     * Not for users. An engine lays out a struct of its own over it and
     * reaches it through tk_node_priv() (engine.h). */
    union tk__node_priv {
        /** Links of the lists handed back by drain()/remove_if()/take_batch():
         * the first word of the area, in every engine. */
        struct tk_node *detached_next;
        uint64_t raw[TK_NODE_PRIV_SIZE / 8]; /**< the whole area */
    } tk__priv; /**< private: the engine's storage (union tk__node_priv) */
} tk_node;

/** How many shard keys there are (tk_node_shard_key()). */
#define TK_NODE_SHARD_KEYS 128u

/** A node's shard key: bits 1 to 7 of its seq, 0 to TK_NODE_SHARD_KEYS - 1.
 * An engine that keeps its nodes in several shards, each with a lock of its
 * own (TK_QUEUE_CAP_SHARDED), files a node under the shard its key maps to
 * (key modulo the number of shards), so that a node is found again from the
 * node alone. An owner that offers from several threads gives each thread a
 * key of its own (the executor: the thread's slot), so that those threads
 * meet in no lock. The key changes nothing in the order nodes leave in,
 * which is (deadline, seq) as ever. Bit 0 of seq is the owner's. */
static inline unsigned tk_node_shard_key(const tk_node *n) {
    return (unsigned)(n->seq >> 1) & (TK_NODE_SHARD_KEYS - 1u);
}

/** Returns the next node of a list returned by drain(), remove_if() or
 * take_batch(). */
static inline tk_node *tk_node_next_detached(const tk_node *n) {
    return n->tk__priv.detached_next;
}

typedef struct tk_queue tk_queue;         /**< an engine instance; opaque */
typedef struct tk_queue_ops tk_queue_ops; /**< an engine: its operations and parameters */
typedef struct tk_core_ops tk_core_ops;   /**< an engine's pure core (engine.h) */

/** Room, in bytes, for one engine's own parameters inside a tk_queue_config. */
#define TK_QUEUE_PARAMS_SIZE 128

/** An engine's configuration: a few settings every engine understands, and
 * the engine's own parameters (tick, slots, levels...), which only that
 * engine's parameter table (tk_queue_ops.params) describes.
 *
 * Fill one with tk_queue_config_init_for(cfg, engine) and set parameters by
 * key (tk_queue_config_set(), tk_queue_config_set_value()), or parse a spec
 * string (tk_queue_config_parse()). A config from tk_queue_config_init(), or
 * all zero, holds no engine's parameters: it stands for the defaults of
 * whichever engine it is given to. Copy it by value.
 *
 * Changed in 0.2: the engine fields initial_capacity (heap), tick_ns and
 * ticks_per_wheel (wheel) left this struct for their engines' own
 * parameters; set them by key ("capacity", "tick", "slots"), for example
 * tk_queue_config_set_value(&cfg, "tick", 2 * TK_NS_PER_MS) on a config
 * from tk_queue_config_init_for(&cfg, tk_engine_wheel()). */
typedef struct tk_queue_config {
    const tk_allocator *allocator; /**< NULL: tk_allocator_default() */
    const char *thread_name;       /**< engines with a thread of their own; NULL: its default */
    /** The blocking adapter's settings. An engine honours one if its table has
     * the key (spin, max_pending): the built-in engines all do.
     * spin_ns: the thread waiting for the next due node sleeps until spin_ns
     * before it and busy-waits the rest, so a node leaves within a few
     * microseconds of its deadline instead of after the OS's timer wake-up
     * latency (tens of microseconds, more on a VM). Costs up to spin_ns of
     * one core's time per wait that ends in a due node. 0 (the default)
     * never spins; at most 1 s.
     * max_pending: offers beyond this many queued nodes get TK_EFULL (0, the
     * default: unbounded). */
    int64_t spin_ns;
    size_t max_pending; /**< the pending limit (see spin_ns above); 0: unbounded */
    /** The engine whose parameters `params` holds (set by
     * tk_queue_config_init_for() and tk_queue_config_parse()), or NULL: no
     * engine's, so each engine uses its defaults. */
    const tk_queue_ops *engine;
    /** The engine's own parameter struct, laid out by that engine. Private:
     * read and write it through the functions below. */
    union {
        unsigned char bytes[TK_QUEUE_PARAMS_SIZE];
        int64_t align_int;
        void *align_ptr;
        double align_double;
    } params;
} tk_queue_config;

/** Hands back a node whose remove() returned TK_EINPROGRESS, once the engine
 * holds no reference to it. Called exactly once per such node, from an engine
 * thread or from destroy(), with no engine lock held. */
typedef void (*tk_queue_release_fn)(void *ctx, tk_node *node);

/** How close() ends the queue. */
typedef enum tk_queue_close_mode {
    /** take()/poll() return TK_ECLOSED as soon as the queue holds no node;
     * until then they go on handing out due nodes, and offer() still works
     * (a periodic task re-queued during shutdown). */
    TK_QUEUE_CLOSE_WHEN_EMPTY = 1,
    /** take()/poll() return TK_ECLOSED at once, whatever the queue holds;
     * offer() returns TK_ECLOSED. Nodes stay queued until drain(). */
    TK_QUEUE_CLOSE_NOW = 2
} tk_queue_close_mode;

/* ---- engine parameters -----------------------------------------------------
 *
 * Each engine describes its parameters in a table of tk_queue_param
 * (tk_queue_ops.params): its own, which live in its parameter struct inside
 * tk_queue_config.params, and those of the blocking adapter it honours
 * (TK_PARAM_ADAPTER: fields of tk_queue_config itself). The table holds each
 * parameter's key, range and default. tk_queue_config_parse() and
 * tk_queue_config_format() read and write a config as a spec string,
 *
 *     ENGINE[:KEY=VALUE[,KEY=VALUE]...]      "wheel:tick=1ms,slots=1024"
 *
 * and every engine's create() checks a config against the same table (and
 * the engine's validate(), for combinations), through
 * tk_queue_config_check(). */

/** How a parameter's value is written. */
typedef enum tk_param_type {
    /** An int64_t field of nanoseconds, written as a decimal number and a unit
     * (ns, us, ms, s): "150us", "1.5ms", "2s". */
    TK_PARAM_DURATION = 1,
    /** An unsigned integer field (1, 2, 4 or 8 bytes), written in decimal:
     * "1024". */
    TK_PARAM_COUNT = 2
} tk_param_type;

/** @{ */
/** tk_queue_param.flags. TK_PARAM_ALWAYS: always written in the canonical
 * spec, even at its default. TK_PARAM_ADAPTER: a setting of the blocking
 * adapter, a field of tk_queue_config itself (offset is offsetof
 * (tk_queue_config, field)); the engine's pure core ignores it. */
#define TK_PARAM_ALWAYS 0x1u
#define TK_PARAM_ADAPTER 0x2u
/** @} */

/** One parameter of an engine. Tables are static and immutable. */
typedef struct tk_queue_param {
    const char *key;    /**< spec key: "tick" */
    tk_param_type type; /**< TK_PARAM_DURATION or TK_PARAM_COUNT */
    unsigned flags;     /**< TK_PARAM_* */
    size_t offset;      /**< in the engine's parameter struct (TK_PARAM_ADAPTER:
                           offsetof(tk_queue_config, field)) */
    size_t size;        /**< sizeof that field */
    /** @{ */
    int64_t min, max; /**< accepted range, inclusive (ns for a duration) */
    /** @} */
    int64_t def;      /**< default, within [min, max] */
    const char *help; /**< one line, for listings: "tick duration" */
} tk_queue_param;

/** Capability flags. */
#define TK_QUEUE_CAP_EXACT_ORDER 0x1u /**< hands nodes out in exact (deadline, seq) order */
#define TK_QUEUE_CAP_O1_REMOVE 0x2u   /**< remove() is O(1) */
#define TK_QUEUE_CAP_TICKED 0x4u /**< expiry granularity is a tick (lateness <= 1 tick + noise) */
#define TK_QUEUE_CAP_OWN_THREAD 0x8u /**< the engine runs a thread of its own */
#define TK_QUEUE_CAP_BOUNDED 0x10u   /**< honours max_pending: offer past it gets TK_EFULL */
/** The engine's take_batch() costs less per node than take() calls, so a
 * consumer that can use batches should (the executor's one-thread pool
 * does). Every built-in engine says so: on the generic blocking adapter one
 * hold of its lock hands out many due nodes without a leader hand-off each;
 * the wheel cuts whole stretches of its ready runs under one hold of its
 * ready lock. Measurements: docs/engine-notes.md. */
#define TK_QUEUE_CAP_BATCH_TAKE 0x20u
/** remove() may answer TK_EINPROGRESS: the node comes back later through the
 * `release` callback (the wheel, whose tick thread may hold it). Without
 * this flag remove() always completes at once and `release` is never called. */
#define TK_QUEUE_CAP_DEFERRED_RELEASE 0x40u
/** Offers and removals of nodes whose shard keys (tk_node_shard_key()) map
 * to different shards take no common lock and write no common cache line:
 * threads that each offer under a key of their own do not slow each other
 * down. The engine has a shard per CPU (at most TK_NODE_SHARD_KEYS); what
 * the takers see is the same as with one shard, exact order included. */
#define TK_QUEUE_CAP_SHARDED 0x80u
/** The engine has wake() (below). */
#define TK_QUEUE_CAP_WAKE 0x100u
/** The engine uses tk_node.slack_ns (see "Slack" above): it wakes at the
 * earliest end of a node's window rather than at the earliest deadline, and
 * hands out together every node due by then. */
#define TK_QUEUE_CAP_SLACK 0x200u

struct tk_queue_ops {
    const char *name;        /**< short engine name: "heap", "wheel"; letters, digits, '_', '-' */
    const char *description; /**< one line for listings ("hashed timing wheel"), or NULL */
    unsigned caps;           /**< TK_QUEUE_CAP_* */

    /** Builds a queue of engine `self` (this table). `cfg` may be NULL (all
     * defaults); the engine checks it with tk_queue_config_check(). `release`
     * may be NULL only if the engine never returns TK_EINPROGRESS from
     * remove(). Returns TK_OK, TK_EINVAL (bad parameter, or a config of
     * another engine), TK_ENOMEM, TK_ETHREAD. Call it through
     * tk_queue_create(). */
    int (*create)(const tk_queue_ops *self, const tk_queue_config *cfg, tk_queue_release_fn release,
                  void *release_ctx, tk_queue **out);

    /** Frees the queue. No thread may be inside another op, and none may call
     * one later. Nodes still queued are not touched (drain first); nodes
     * awaiting release are released before it returns. */
    void (*destroy)(tk_queue *q);

    /** Inserts `n` (deadline_ns and seq already set; tk__priv zeroed before
     * the node's first offer). A deadline in the past is due at once.
     * Returns TK_OK (the queue owns `n`), TK_EFULL (pending limit reached),
     * TK_ENOMEM (the engine could not grow), TK_ETHREAD (an engine thread
     * started lazily could not be created), TK_ECLOSED (closed NOW) or
     * TK_EINVAL; on any failure the caller keeps `n`. */
    int (*offer)(tk_queue *q, tk_node *n);

    /** Blocks until a node is due, then removes it and stores it in *out.
     * Returns TK_OK, TK_ECLOSED (see close()) or TK_EINTR (see wake()).
     * Never returns a node early. */
    int (*take)(tk_queue *q, tk_node **out);

    /** As take(), but gives up once `timeout_ns` have passed (0 or negative:
     * do not wait): TK_ETIMEDOUT comes no earlier than that, and a node due
     * within the timeout is handed out. Returns TK_OK, TK_ETIMEDOUT, TK_EINTR or
     * TK_ECLOSED. */
    int (*poll)(tk_queue *q, int64_t timeout_ns, tk_node **out);

    /** Removes `n`, due or not. Returns TK_OK (removed; the caller owns it
     * again), TK_EINPROGRESS (it will never be handed out again, but the
     * engine still references it: it comes back through `release`; only
     * engines with TK_QUEUE_CAP_DEFERRED_RELEASE), TK_ENOENT (not in this
     * queue: already handed out or never offered) or TK_EINVAL (q or n
     * NULL). `n` must have been
     * offered to this queue at some point (or have a zeroed tk__priv):
     * engines cannot tell nodes of another queue apart. */
    int (*remove)(tk_queue *q, tk_node *n);

    /** Removes the node with the smallest (deadline, seq), due or not, into
     * *out. Returns TK_OK or TK_ENOENT (empty). Used by discard-oldest. */
    int (*remove_first)(tk_queue *q, tk_node **out);

    /** Reads the key of the node that would be handed out first, due or not,
     * without removing it; either output may be NULL. Returns TK_OK or
     * TK_ENOENT (empty). */
    int (*peek)(tk_queue *q, int64_t *deadline_ns, uint64_t *seq);

    /** Returns the number of nodes queued: offered and not yet handed out or
     * removed. Removed-but-unreleased nodes do not count. */
    size_t (*size)(tk_queue *q);

    /** Removes every queued node and returns them as a list linked through
     * tk_node_next_detached(), sorted by (deadline, seq). NULL if empty. */
    tk_node *(*drain)(tk_queue *q);

    /** Removes every queued node for which pred(node, ctx) returns true and
     * returns them as a detached list (order unspecified). `pred` is called
     * exactly once per queued node, with the engine lock held: it must not
     * call into the queue or block. */
    tk_node *(*remove_if)(tk_queue *q, bool (*pred)(const tk_node *n, void *ctx), void *ctx);

    /** Closes the queue (see tk_queue_close_mode) and wakes every blocked
     * take()/poll() so it re-checks. Closing NOW after WHEN_EMPTY is allowed;
     * the reverse is ignored. */
    void (*close)(tk_queue *q, tk_queue_close_mode mode);

    /** Verifies the engine's invariants (heap order and indices; wheel slots
     * and rounds). Returns TK_OK or TK_ESTATE. Takes the engine lock; slow. */
    int (*check)(tk_queue *q);

    /** Optional: NULL if the engine lacks it (then call take()). Hands out
     * due nodes as take() does, but up to `max` of them for one round trip
     * of the engine lock instead of one per node.
     * Blocks exactly as take() does until at least one node is due, and
     * returns TK_ECLOSED exactly when take() would (closed NOW, whatever the
     * queue holds; closed WHEN_EMPTY once it holds no node). Then removes
     * from 1 to `max` nodes, each of them due (never one whose deadline has
     * not passed, nor one take() could not have handed out yet), and returns
     * them in *out as a NULL-terminated list linked through
     * tk_node_next_detached(), in the order successive take() calls would
     * have handed them out ((deadline, seq) order among what the engine holds
     * in order; see TK_QUEUE_CAP_EXACT_ORDER), with their number in *count.
     * Each node is the caller's exactly as after take(): remove() on it
     * answers TK_ENOENT, and it may be offered again (read its successor
     * first: offer() reuses the link). The links live in the nodes' private
     * area: read them, never write them (a remove() racing on another
     * thread reads that area).
     * Fairness. Let `due` be the number of nodes that take() could hand out
     * at this instant and `waiters` the number of other threads blocked in
     * take()/poll()/take_batch() on this queue. With nobody waiting a batch
     * holds min(max, due) nodes; otherwise it is cut to a fair share,
     * max(1, min(max, due / (waiters + 1))), and if due nodes remain, one
     * waiter is woken to take its own share, which it cuts the same way. A
     * taker that comes back later (from running its own nodes) finds only
     * what earlier batches left, so a batch taker may hold up to `max` nodes
     * that another thread could have run meanwhile: `max` bounds that delay
     * (choose it with the callbacks' run time in mind).
     * Returns TK_OK (*out and *count set, *count >= 1), TK_ECLOSED, TK_EINTR, or
     * TK_EINVAL (q, out or count NULL, or max 0). On any status but TK_OK
     * nothing is removed and *out, *count (where not NULL) are set to NULL
     * and 0. */
    int (*take_batch)(tk_queue *q, size_t max, tk_node **out, size_t *count);

    /** Optional (NULL if the engine does not count them): the number of times
     * a thread of the engine woke from a sleep with a deadline since
     * create() (the wheel's tick thread; the generic adapter's leader), for
     * measuring what an idle queue costs. Thread-safe, cheap (a relaxed
     * atomic load). */
    uint64_t (*wakeups)(tk_queue *q);

    /** The engine's parameters, in the order the canonical spec writes them:
     * param_count entries (params may be NULL when param_count is 0). Static
     * and immutable. */
    const tk_queue_param *params;
    size_t param_count; /**< entries in params */
    /** Bytes of the engine's parameter struct in tk_queue_config.params (at
     * most TK_QUEUE_PARAMS_SIZE; 0 if it has only adapter parameters). */
    size_t params_size;
    /** Optional: checks what the table's ranges cannot, the parameters
     * together (a span tick x slots that overflows). `params` is the
     * engine's parameter struct, every field already within its range.
     * Returns TK_OK, or TK_EINVAL with a one-line message in err (err_len
     * bytes, always NUL-terminated when err_len > 0) naming the engine and
     * the parameters. */
    int (*validate)(const void *params, char *err, size_t err_len);

    /** The engine's pure core (engine.h): the single-threaded structure
     * behind the queue, which the differential fuzzer, the core-level
     * benchmarks and the core tests drive directly, and a caller may run
     * from its own event loop. NULL if the engine has none. */
    const tk_core_ops *core;

    /** Optional (NULL if the engine lacks it; TK_QUEUE_CAP_WAKE says it has
     * it): wakes every thread blocked in take(), poll() or take_batch() on
     * this queue. Each of them returns TK_EINTR, having taken nothing; a call
     * that starts after wake() returned is not affected. An owner uses it to
     * make its takers look again at what they wait for (the executor: its
     * settings, which decide whether a worker waits with a time-out) without
     * closing the queue. Thread-safe; never waits for a taker. */
    void (*wake)(tk_queue *q);
};

/** A short name of one capability flag, for listings: "exact order",
 * "O(1) remove", "ticked", "own thread", "bounded", "batch take", "deferred
 * release", "sharded", "wake"; NULL if `cap` is not exactly one known
 * TK_QUEUE_CAP_* flag. */
TK_API const char *tk_queue_cap_name(unsigned cap);

/** Sets every field of `cfg` to its default and names no engine: the config
 * then stands for the defaults of the engine it is given to. Returns
 * TK_EINVAL if NULL. */
TK_API int tk_queue_config_init(tk_queue_config *cfg);

/** Sets `cfg` to `engine`'s defaults: the shared fields as
 * tk_queue_config_init() sets them, cfg->engine = engine, and each
 * parameter to its table default. Returns TK_OK, or TK_EINVAL (a NULL
 * argument, or a malformed table: see tk_engine_check()). */
TK_API int tk_queue_config_init_for(tk_queue_config *cfg, const tk_queue_ops *engine);

/** Sets parameter `key` of cfg's engine to `value`, written as in a spec
 * ("1ms", "1024"). cfg must name its engine (tk_queue_config_init_for() or
 * tk_queue_config_parse()). Returns TK_OK, or TK_EINVAL with a one-line
 * message in err (as tk_queue_config_parse() writes it; err may be NULL): a
 * NULL argument, a config without an engine, an unknown key, a malformed
 * value or one outside the parameter's range. cfg is unchanged on failure.
 * Combinations are checked by tk_queue_config_check() and create(). */
TK_API int tk_queue_config_set(tk_queue_config *cfg, const char *key, const char *value, char *err,
                               size_t err_len);

/** Sets parameter `key` of cfg's engine to `value`: nanoseconds for a
 * duration, the count for a count. Returns TK_OK, or TK_EINVAL (NULL, no
 * engine, unknown key, or value outside the parameter's range); cfg is
 * unchanged on failure. */
TK_API int tk_queue_config_set_value(tk_queue_config *cfg, const char *key, int64_t value);

/** Reads parameter `key` of cfg's engine into *value (nanoseconds for a
 * duration, the count for a count). cfg must name its engine. Returns TK_OK,
 * or TK_EINVAL (a NULL argument, a config without an engine, an unknown key,
 * or a count above INT64_MAX). */
TK_API int tk_queue_config_get_value(const tk_queue_config *cfg, const char *key, int64_t *value);

/** Checks `cfg` (NULL: all defaults) as `engine`'s create() will: a config
 * that names another engine, a parameter outside its range (a zero where a
 * value is required, a negative duration) or a combination the engine's
 * validate() refuses. Returns TK_OK, or TK_EINVAL with a one-line message
 * in err naming the engine and the parameter ("wheel: tick=5us is below the
 * minimum 10us"; err may be NULL); TK_EINVAL with "no engine" if engine is
 * NULL. Thread-safe. */
TK_API int tk_queue_config_check(const tk_queue_ops *engine, const tk_queue_config *cfg, char *err,
                                 size_t err_len);

/** Builds a queue of `engine`: checks the table (tk_engine_check()), then
 * calls engine->create(engine, cfg, ...). Returns what create() returns, or
 * TK_EINVAL for a NULL engine or out, or an incomplete table. */
TK_API int tk_queue_create(const tk_queue_ops *engine, const tk_queue_config *cfg,
                           tk_queue_release_fn release, void *release_ctx, tk_queue **out);

/** The engine selected at build time (CMake TIMERKIT_DEFAULT_ENGINE). */
TK_API const tk_queue_ops *tk_engine_default(void);

/** Looks an engine up by name among the registered engines: those built into
 * the library and those added with tk_engine_register() (engine.h); NULL if
 * there is none. */
TK_API const tk_queue_ops *tk_engine_by_name(const char *name);

/** @{ */
/** Registered engines, for tests and benchmarks that run every engine:
 * index 0 .. tk_engine_count()-1, the built-in ones first, in their build
 * order, then those registered at run time, in the order they were; NULL
 * past the end. Thread-safe. */
TK_API size_t tk_engine_count(void);
TK_API const tk_queue_ops *tk_engine_at(size_t index);
/** @} */

/** Configures an engine from a spec string, "ENGINE[:KEY=VALUE[,KEY=VALUE]...]"
 * ("heap", "heap:spin=150us", "wheel:tick=1ms,slots=1024"), for example a
 * line of a config file. ENGINE is looked up with tk_engine_by_name(); each
 * KEY is a key of that engine's parameter table, given at most once, in any
 * order. A duration VALUE is a decimal number and a unit, ns, us, ms or s
 * ("150us", "1.5ms", "2s"), that comes to a whole number of nanoseconds; a
 * count VALUE is an unsigned decimal integer. The spec holds no whitespace.
 * On success sets *engine, and *cfg to tk_queue_config_init_for(engine)
 * with the given keys' values.
 * Returns TK_OK; TK_ENOENT if ENGINE is not a registered engine; TK_EINVAL
 * if spec, engine or cfg is NULL, spec is empty, has whitespace, no engine
 * name before ':', nothing after ':' or ',', an unknown or repeated key, a
 * key without '=' or without a value, an empty key, a value that is
 * malformed (a sign, no unit on a duration, trailing characters, not a whole
 * number of ns), overflows, or lies outside the parameter's range, or
 * parameters that do not work together (the engine's validate()).
 * On failure *engine and *cfg are left unchanged, and if err is not NULL and
 * err_len > 0, err receives a one-line message naming the engine and the
 * parameter, with the known engines or keys where that helps ("wheel: tick=5us
 * is below the minimum 10us"); on success err receives "". err is always
 * NUL-terminated, the message truncated to fit. Thread-safe. */
TK_API int tk_queue_config_parse(const char *spec, const tk_queue_ops **engine,
                                 tk_queue_config *cfg, char *err, size_t err_len);

/** Writes the canonical spec of (engine, cfg) into buf: the engine's name,
 * then ':' and KEY=VALUE for each parameter of its table, in table order,
 * joined by ',', each one only if it has TK_PARAM_ALWAYS or differs from its
 * default. Values are written as tk_queue_param_format() writes them.
 * "heap", "heap:spin=150us", "wheel:tick=1ms,slots=512". cfg may name no
 * engine (all defaults). tk_queue_config_parse() of the result gives back
 * engine and the same parameter values. 128 bytes hold any spec of the
 * built-in engines.
 * Returns TK_OK; TK_EINVAL if engine, cfg or buf is NULL or cfg does not
 * pass tk_queue_config_check() (create() would refuse it; buf then holds
 * ""); TK_EFULL if the spec does not fit in len bytes (buf then holds as
 * much of it as fits, NUL-terminated, when len > 0). */
TK_API int tk_queue_config_format(const tk_queue_ops *engine, const tk_queue_config *cfg, char *buf,
                                  size_t len);

/** Writes the value of parameter p (an entry of cfg's engine's table, or of
 * any engine's when cfg names none: its default is written) as the canonical
 * spec writes it (no key): a duration in the largest of s, ms, us, ns that
 * divides it exactly ("1ms", "150us", "1500us", "0ns"; negative values with
 * '-'), a count in decimal ("1024"). The value is not range-checked.
 * Returns TK_OK; TK_EINVAL if p, cfg or buf is NULL, p is not an entry of
 * cfg's engine's table, or p has an unknown type or a field size it cannot
 * hold; TK_EFULL if the value does not fit in len bytes (buf then holds as
 * much as fits, NUL-terminated, when len > 0). */
TK_API int tk_queue_param_format(const tk_queue_param *p, const tk_queue_config *cfg, char *buf,
                                 size_t len);

TK_EXTERN_C_END

/* The built-in engines' getters (tk_engine_heap(), ...): generated from the
 * list of engines, in the generated include folder. */
#include "timerkit/engines.h"

#endif
