/* SPDX-License-Identifier: MIT */
/* timerkit executor: internal types shared by the executor's files.
 *
 * executor.c  lifecycle, pool states, shutdown, termination, policies, stats
 * worker.c    worker threads and the run loop (one-shot and periodic runs)
 * submit.c    the scheduling calls and the rejection policies
 * future.c    reference counts, the future API (states, get and its abort)
 *             and the tk_run API
 * slab.c      task objects: the slabs of each shard, allocation and frees
 * invoke.c    bulk invocation: invoke_all, invoke_any
 * timer.c     embedded timers (tk_timer): the zero-allocation path
 * control.c   run-time control: core pool size, keep-alive and core thread
 *             time-out, the worker's wait and retirement, the rejection
 *             handler and thread factory after creation
 * queue-access.c  contains/remove/visit_queue, and the workers' pending
 *             batches that are part of the queue
 *
 * The design essay (states, references, locks, lock order, races) opens
 * executor.c. Everything here is private to the library. */
#ifndef TIMERKIT_EXECUTOR_INTERNAL_H
#define TIMERKIT_EXECUTOR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common-internal.h"
#include "timerkit/engine.h"
#include "timerkit/executor.h"
#include "timerkit/queue.h"

/* ---- task states (tk_future.state) --------------------------------------
 * PENDING   queued, or in the hands of a worker that has not started it yet,
 *           or between two periodic runs
 * RUNNING   a worker (or a caller-runs caller) is inside fn
 * COMPLETED one-shot run returned 0                         (terminal)
 * FAILED    a run returned non-zero                          (terminal)
 * CANCELLED cancelled, dropped by a policy or handed back  (terminal)
 * REMOVED   taken out by tk_executor_remove() before it ran (terminal) */
#define TK__CACHELINE 64

/* Most due nodes the worker of a one-thread pool takes from the engine in
 * one round trip (engines whose take_batch pays, TK_QUEUE_CAP_BATCH_TAKE:
 * the heap, the wheel, the hierarchical wheel through the blocking adapter).
 * Only a one-thread pool batches:
 * a batch's later nodes wait for the earlier ones' callbacks, which with more
 * threads could leave a due task waiting behind a long callback while
 * another thread idles (the engines' fair share only helps takers that are
 * already waiting). With one thread they would wait anyway. The nodes of a
 * batch not started yet stay part of the queue (tk__worker.batch). */
#define TK__TAKE_BATCH 32u

enum {
    TK__TASK_PENDING = 0,
    TK__TASK_RUNNING = 1,
    TK__TASK_COMPLETED = 2,
    TK__TASK_FAILED = 3,
    TK__TASK_CANCELLED = 4,
    TK__TASK_REMOVED = 5
};

static inline bool tk__task_state_terminal(uint32_t s) {
    return s >= TK__TASK_COMPLETED;
}

struct tk__slab;

/* The task. It IS the future: the public tk_future is this struct. Two
 * sizes (checked below), from slabs of their own (struct tk__slab):
 * - small (88 bytes): a one-shot task without arg_free and without a
 *   decorate hook, what almost every program schedules;
 * - big (tk__task_big, 120 bytes): the rest (periodic tasks, arg_free, a
 *   decorate hook that may add either), with those rarely used fields
 *   after the common part. TK__TASK_BIG in `bits` says which.
 * The executor is not stored: it is in the header of the page (struct
 * tk__page) the task lives in (tk__task_ex).
 *
 * Field ownership:
 * - node: owned by whoever owns the node (see queue.h): the submitter until
 *   offer(), the engine while queued, the worker between take() and the next
 *   offer(). node.slack_ns is written once, before the first offer(), and
 *   kept by every periodic run. node.deadline_ns is also read by other threads (remaining delay,
 *   task info, the shutdown sweep): its owner writes it with an atomic store
 *   whenever others may look (a periodic re-queue), and they load it
 *   atomically; the engines read it plainly while they own the node, when
 *   nobody writes it.
 * - kind, flags, bits, arg (and a big task's arg_free, period_ns): written
 *   once before the first offer(), read-only afterwards (happens-before
 *   through the engine lock).
 * - u: fn until the (last) run starts. A one-shot run loads fn and clears u
 *   (tk__invoke): from then on u.result is the result tk_run_set_result()
 *   writes, read once COMPLETED is seen with acquire ordering. Whoever ends
 *   a run with a non-zero status (or a veto) writes u.status, then `ran`
 *   (release); tk_future_task_status() reads u.status only after seeing
 *   `ran` say so. Nothing reads fn once a run started: the task is no
 *   longer queued (a periodic task between runs keeps fn: it has no result,
 *   and its status ends it).
 * - ran: TK__RAN_* (release store by the runner; acquire loads).
 * - refs: the count in the low bits, TK__REF_USER_RELEASED once
 *   tk_future_release() was called (one CAS: a second release is refused).
 * - waiters: the get() futex word (future.c), with TK__WAIT_INTERRUPTED.
 * - free: the object is on its slab's free list; its first bytes are the
 *   list link (slab lock) and nothing else is valid. */
struct tk_future {
    tk_node node;
    _Atomic uint32_t state;   /* TK__TASK_* */
    _Atomic uint32_t refs;    /* user + executor + queue/holder (+ a re-queuing
                                 worker's guard); TK__REF_USER_RELEASED */
    _Atomic uint32_t waiters; /* get()'s futex word: blocked gets, DONE, abort
                                 generation, interrupted (future.c) */
    uint8_t kind;             /* tk_task_kind */
    uint8_t flags;            /* TK_TASK_* flags */
    uint8_t bits;             /* TK__TASK_BIG, _USER_REF, _DECORATED */
    _Atomic uint8_t ran;      /* TK__RAN_*: the one-shot run count and whether
                                 u.status is valid */
    union {
        tk_task_fn fn; /* until the run starts */
        void *result;  /* one-shot: tk_run_set_result() */
        int status;    /* a run's non-zero status, or a veto */
    } u;
    void *arg;
};

/* tk_future.bits */
#define TK__TASK_BIG 0x1u      /* a tk__task_big */
#define TK__TASK_USER_REF 0x2u /* a future was handed to the user */
/* fn/arg/arg_free came from the decorate hook: a call that fails after that
 * drops them through arg_free */
#define TK__TASK_DECORATED 0x4u

/* tk_future.ran */
enum {
    TK__RAN_NOT = 0,    /* no run has returned (or been vetoed) */
    TK__RAN_OK = 1,     /* a run returned 0 */
    TK__RAN_FAILED = 2, /* a run returned non-zero: u.status */
    TK__RAN_VETOED = 3  /* before_execute vetoed the run: u.status */
};

/* tk_future.refs: the user's release, kept beside the count. */
#define TK__REF_USER_RELEASED 0x80000000u
#define TK__REF_COUNT_MASK 0x7FFFFFFFu

#define TK__TASK_SIZE 88u
_Static_assert(sizeof(struct tk_future) == TK__TASK_SIZE, "a small task is 88 bytes");

typedef struct tk_future tk__task;

/* A big task: the common part, then what few tasks need. */
typedef struct tk__task_big {
    struct tk_future t;
    tk_arg_free_fn arg_free;
    int64_t period_ns;
    _Atomic uint64_t run_count; /* periodic runs; one writer (the running worker) */
    _Atomic uint64_t skipped;   /* periodic: due times skipped */
} tk__task_big;

#define TK__TASK_BIG_SIZE 120u
_Static_assert(sizeof(tk__task_big) == TK__TASK_BIG_SIZE, "a big task is 120 bytes");

static inline bool tk__task_is_big(const tk__task *t) {
    return (t->bits & TK__TASK_BIG) != 0;
}

static inline tk__task_big *tk__task_big_of(const tk__task *t) {
    return (tk__task_big *)(void *)t;
}

/* The task's arg_free (NULL for a small task). */
static inline tk_arg_free_fn tk__task_arg_free(const tk__task *t) {
    return tk__task_is_big(t) ? tk__task_big_of(t)->arg_free : NULL;
}

/* Runs the task's arg_free on its arg, if it has one. */
static inline void tk__task_drop_arg(const tk__task *t) {
    tk_arg_free_fn arg_free = tk__task_arg_free(t);
    if (arg_free != NULL)
        arg_free(t->arg);
}

/* The period (0 for a one-shot task). */
static inline int64_t tk__task_period(const tk__task *t) {
    return t->kind != TK_TASK_ONE_SHOT ? tk__task_big_of(t)->period_ns : 0;
}

/* The two object classes of the slabs. */
enum { TK__CLASS_SMALL = 0, TK__CLASS_BIG = 1, TK__CLASSES = 2 };

/* Slabs. A slab is one allocation from the executor's allocator: this
 * header, then TK__SLAB_PAGES pages of TK__PAGE_BYTES (64 KiB), aligned to
 * their size, each holding a tk__page header and objects of one class. A
 * task finds its page by rounding its address down, and the page names the
 * executor and the slab, the slab its pool: a task stores none of them.
 * The page headers of a million tasks fit in a few hundred cache lines, so
 * a cancel finds its executor without a miss. The allocation's slack before
 * the first page boundary and after the last page is never touched, so it
 * costs address space, not memory. A slab belongs to the pool of one shard
 * (tk__pool), whose lock guards all its mutable fields.
 * - Objects never used since the slab was (re)started are handed out in
 *   address order (`fresh`), so a burst of scheduling walks memory
 *   sequentially; freed objects go on the slab's LIFO free list, so the
 *   next allocation from the slab reuses the object freed last. A slab is
 *   on its class's partial list while it has room; a free into a full slab
 *   puts it back at the head, and no other free moves it (a free touches
 *   only its own slab's header).
 * - A slab whose last object is freed is kept as its class's one spare in
 *   its pool (restarted: from its first object again, empty free list) or
 *   given back to the allocator, so memory returns after a mass
 *   cancellation. */
typedef struct tk__pool tk__pool;

typedef struct tk__slab {
    tk__pool *pool;        /* immutable */
    void *mem;             /* the allocation (immutable) */
    char *pages;           /* the first page (immutable) */
    struct tk__slab *prev; /* partial list links */
    struct tk__slab *next;
    void *free;         /* free objects, linked through their first bytes */
    char *fresh;        /* the next object never handed out, or NULL: all were */
    uint32_t used;      /* objects handed out and not yet freed */
    uint32_t page_left; /* objects never handed out left in fresh's page */
    uint8_t cls;        /* TK__CLASS_* (immutable) */
    bool on_partial;    /* on its pool's partial[cls] */
} tk__slab;

/* The header of each page of a slab. */
typedef struct tk__page {
    tk__slab *slab;
    tk_executor *ex;
} tk__page;

#define TK__PAGE_BYTES ((size_t)65536)
#define TK__SLAB_PAGES ((size_t)32)
/* the header, the gap to the first page boundary, the pages */
#define TK__SLAB_BYTES (sizeof(tk__slab) + TK__PAGE_BYTES + TK__SLAB_PAGES * TK__PAGE_BYTES)

static inline tk__page *tk__page_of(const void *obj) {
    return (tk__page *)((uintptr_t)obj & ~(uintptr_t)(TK__PAGE_BYTES - 1));
}

/* One shard's task objects (slab.c). `lock` guards the lists and every
 * mutable field of the pool's slabs: a leaf lock, nothing is called while it
 * is held (allocating or freeing a slab happens outside it). */
struct tk__pool {
    tk__spinlock lock;
    tk__slab *partial[TK__CLASSES]; /* slabs with free room, per class */
    tk__slab *spare[TK__CLASSES];   /* one empty slab per class kept for reuse */
    /* Frees that found `lock` taken go here instead of waiting for it: a
     * lock-free stack linked through the objects' first bytes, pushed by
     * anyone, emptied whole (exchange) by the next holder of `lock`. */
    _Atomic(struct tk_future *) remote;
    tk_executor *ex; /* immutable */
};

/* A shard of the executor: what the threads whose slot (tk__thread_slot())
 * maps to it write on their way (STYLE: shared state is a cost on every
 * core). Each shard sits on cache lines of its own. Its counters are
 * changed with atomic read-modify-writes, since threads whose slots map to
 * one shard may race, but threads of different shards never write one line;
 * tk_executor_stats_get() adds the shards up. */
typedef struct tk__shard {
    /* Scheduling calls that took a seq here (the count in the seq's high
     * bits, tk__next_seq()), and those of them that were not accepted
     * (accepted = seq - unaccepted: a call accepted costs no second atomic). */
    _Atomic uint64_t seq;
    _Atomic uint64_t unaccepted;
    _Atomic uint64_t rejected;
    _Atomic uint64_t cancelled;
    _Atomic uint64_t removed;
    _Alignas(TK__CACHELINE) tk__pool pool; /* on a line of its own (a worker's frees) */
} tk__shard;

/* A task's view of its own run (lives on the running thread's stack). */
struct tk_run {
    tk__task *task;
    tk_executor *ex;
    tk_task_fn fn;   /* the task's fn (its storage may hold the result now) */
    bool info_ready; /* info filled: at the start when a hook needs it, else
                        on the first tk_run_info() */
    tk_task_info info;
};

/* Fills run->info, once. Only during the run, from its thread. */
void tk__run_info_fill(struct tk_run *run);

/* One worker thread. Allocated before the thread starts, linked into
 * ex->workers for its whole life, freed by destroy() after the join. */
typedef struct tk__worker {
    tk_executor *ex;
    pthread_t thread;        /* written by pthread_create/the factory */
    bool started;            /* thread created (pool_lock) */
    struct tk__worker *next; /* ex->workers list (pool_lock) */
    char name[32];
    bool factory; /* started by a thread factory: it names the thread */
    bool exited;  /* the thread left the pool (wc decremented); joinable (pool_lock) */
    bool reaping; /* a reaper is joining it (pool_lock) */
    /* This worker's share of the executor's runs, completed_count and
     * active_count, written only by the worker with plain (relaxed) stores,
     * no read-modify-write: a run costs no update of a shared line.
     * tk_executor_stats_get() adds them up under pool_lock. Runs on other
     * threads (caller-runs) count in the executor's shared counters. */
    _Atomic uint64_t runs;
    _Atomic uint64_t completed;
    _Atomic unsigned active; /* 1 while inside a callback */
    /* Tasks of this executor that this worker freed during its current batch
     * of runs (linked through their free link; worker only). They go back to
     * their slabs together after the batch (tk__worker_flush_frees): one hold
     * of slab_lock per batch rather than a lock and an unlock per task. */
    struct tk_future *freed; /* tk__task */
    /* The due nodes of this worker's current batch (take_batch) that it has
     * not started yet, linked through tk_node_next_detached(): still queued
     * for the queue size, contains(), remove(), the queue visitor and
     * shutdown_now(), which may take nodes out of it (queue-access.c). The
     * worker pops one at a time. Both guarded by ex->batch_lock;
     * batch_left is also read without it (counters). */
    tk_node *batch;
    _Atomic size_t batch_left;
    /* The settings generation the worker read before its current wait, and
     * whether it is between that read and the end of the wait (control.c:
     * how setters reach idle workers). Written by the worker, read by
     * setters under pool_lock. */
    _Atomic uint64_t seen_gen;
    _Atomic bool waiting;
} tk__worker;

/* The executor. */
struct tk_executor {
    /* ---- immutable after create ---- */
    tk_allocator alloc; /* copy of options.allocator */
    const tk_queue_ops *ops;
    tk_queue *q;
    tk_executor_hooks hooks;
    int64_t timer_slack_ns;   /* the OS's, for the pool threads (prctl) */
    int64_t default_slack_ns; /* tk_node.slack_ns of tasks without TK_TASK_SLACK */
    bool batch;               /* the engine says take_batch pays (TK_QUEUE_CAP_BATCH_TAKE):
                                 the worker of a one-thread pool takes batches */
    char name_prefix[24];

    /* ---- run-time settings (control.c): written under pool_lock, the
     * atomics read anywhere, the others read under pool_lock ---- */
    _Atomic unsigned core;   /* core_pool_size */
    _Atomic unsigned target; /* max(core, 1): threads started on demand */
    _Atomic int64_t keep_alive_ns;
    _Atomic bool allow_core_timeout;
    _Atomic uint64_t settings_gen;       /* bumped after a change idle workers must see */
    tk_rejection_policy rejection;       /* pool_lock */
    tk_reject_fn reject;                 /* pool_lock */
    void *reject_ctx;                    /* pool_lock */
    tk_thread_factory_fn thread_factory; /* pool_lock */
    void *thread_factory_ctx;            /* pool_lock */

    /* ---- lock-free state, read on the submit path ---- */
    /* (padding, not _Alignas: the allocator only promises max_align_t) */
    char pad1_[TK__CACHELINE];
    _Atomic int state;   /* tk_pool_state; written under pool_lock, read anywhere */
    _Atomic unsigned wc; /* worker count, reserved or alive; written under
                            pool_lock, read anywhere */
    _Atomic bool remove_on_cancel;
    _Atomic bool continue_periodic;
    _Atomic bool execute_delayed;

    /* ---- the shards (immutable after create): counters and task objects
     * of the threads whose slot maps to each (tk__shard_here()) ---- */
    tk__shard *shards;   /* shard_mask + 1 of them, each on lines of its own */
    unsigned shard_mask; /* a power of two, minus one */
    void *mem;           /* this struct's allocation (it holds the shards too) */
    size_t mem_bytes;

    /* ---- worker-side counters (workers count their own runs, completions
     * and activity in their tk__worker; these take the rest) ---- */
    char pad3_[TK__CACHELINE];
    _Atomic uint64_t completed_count;
    _Atomic uint64_t runs;
    _Atomic uint64_t failed_count;
    _Atomic uint64_t failed_periodic_count;
    _Atomic uint64_t skipped_periods;
    /* Queue entries (see tk_executor_stats): periodic re-offers accepted;
     * nodes that left the engine (or a worker's batch) other than by a
     * worker's take or a hand-back; tasks handed back by shutdown_now(). */
    _Atomic uint64_t requeued_count;
    _Atomic uint64_t handed_back_count;

    /* ---- pool lock: guards workers, thread_seq, largest, the state
     * transitions, termination; term_cond signals TERMINATED. ---- */
    char pad4_[TK__CACHELINE];
    pthread_mutex_t pool_lock;
    pthread_cond_t term_cond;
    tk__worker *workers;      /* every worker ever started (pool_lock) */
    unsigned thread_seq;      /* names "<prefix>-<n>" (pool_lock) */
    int alive;                /* threads created, not yet exited (pool_lock) */
    _Atomic unsigned largest; /* largest_pool_size (written under pool_lock) */
    /* Guards every worker's batch/batch_left. Lock order: pool_lock ->
     * batch_lock; nothing else is taken or called while it is held. */
    tk__spinlock batch_lock;

    /* ---- task objects (slab.c; the slabs themselves are the shards') ---- */
    char pad5_[TK__CACHELINE];
    /* Set once by destroy(): emptied slabs are freed instead of kept, and
     * frees must not leave objects on a pool's remote stack. */
    _Atomic bool slab_closed;
    /* Lifetime of this struct: 1 for the owner (dropped by destroy) + 1 per
     * slab allocated and not yet returned to the allocator. The struct is
     * freed at zero, so a future released after destroy() can still reach
     * alloc and slab_lock. */
    _Atomic size_t live;

    /* ---- tk_executor_invoke_any() (invoke.c): a caller waiting for any
     * of its tasks to end sleeps on any_seq (futex). While any_waiters > 0,
     * every terminal transition of a task of this executor adds one to
     * any_seq and wakes them (tk__invoke_any_notify); otherwise it costs one
     * load. ---- */
    _Atomic uint32_t any_seq;
    _Atomic uint32_t any_waiters;
};

/* The one place of per-thread state: which executor this thread works for
 * (set once by a pool thread) and which task it is running now (pool
 * threads and caller-runs callers). Used for TK_EDEADLK checks only. */
typedef struct tk__tls {
    tk_executor *ex;
    tk__task *task;
    tk__worker *worker;              /* a pool thread's own worker record */
    struct tk__rejection *rejection; /* the rejection this thread is handling
                                        (submit.c), for the tk_reject_* functions */
} tk__tls;
extern _Thread_local tk__tls tk__current;

/* ---- slab.c ---- (no lock needed by any of these; a pool's lock is
 * taken inside, as a leaf) */
/* A zeroed task from a slab of the calling thread's shard (a new slab from
 * the allocator if needed): a tk__task_big if `big`, its TK__TASK_BIG bit
 * set; NULL on failure. */
tk__task *tk__task_alloc(tk_executor *ex, bool big);
/* Returns a task object to its slab (see slab.c for who frees where). */
void tk__task_free(tk__task *t);
/* Returns what a worker freed during its batch to the slabs. */
void tk__worker_flush_frees(tk__worker *w);
/* Drops one reference on the executor struct (ex->live); the last frees it. */
void tk__executor_live_release(tk_executor *ex);
/* Marks the executor destroyed (empty slabs are freed from now on) and frees
 * the spare slabs. */
void tk__slabs_drain(tk_executor *ex);

/* ---- future.c ---- (no lock needed by any of these) */
/* Records a run's non-zero status, or a veto, in u (fn is no longer needed)
 * and publishes it through `ran`. The running thread only. */
void tk__task_set_status(tk__task *t, int status, bool vetoed);
/* Frees a task that was never shared (no offer() succeeded); its references
 * are not looked at and arg_free is not called. */
void tk__task_discard_unused(tk__task *t);
/* Drops n references; the last one recycles or frees the task. */
void tk__task_unref(tk__task *t, uint32_t n);
/* Moves PENDING/RUNNING -> terminal `to` by CAS from `from`; wakes waiters.
 * Returns true if this call made the transition. */
bool tk__task_complete(tk__task *t, uint32_t from, uint32_t to);
/* Fills a tk_task_info from t (hooks, handlers, drop callbacks). */
void tk__task_info(const tk__task *t, tk_task_info *info);
/* Cancels a PENDING task (CAS PENDING -> CANCELLED). If it wins: counts it,
 * wakes waiters, runs arg_free (unless hand_back) and drops the executor
 * reference. Returns true if it won. No lock needed. */
bool tk__task_cancel_pending(tk__task *t, bool hand_back);
/* Cancels (if still pending) and pulls the task out of the queue, handling
 * all three remove() results. Caller holds a reference on t. */
void tk__task_cancel_and_remove(tk__task *t);
/* Executor bookkeeping when its interest in t ends after a run: arg_free,
 * drop the executor reference (and `extra` more). */
void tk__task_finish(tk__task *t, uint32_t extra);
/* Wakes every thread in tk__futex_wait_until() on word. */
void tk__futex_wake_all(_Atomic uint32_t *word);
/* Sleeps while *word == expected, until woken or the absolute
 * CLOCK_MONOTONIC deadline (< 0: none). Spurious returns are fine. */
void tk__futex_wait_until(_Atomic uint32_t *word, uint32_t expected, int64_t deadline_ns);
/* After t's terminal transition: wakes its blocked get()s (only if any)
 * and the executor's invoke_any() callers (only if any). */
void tk__task_wake(tk__task *t);

/* ---- invoke.c ---- */
/* Wakes the invoke_any() callers of ex, if any (see any_seq). No lock. */
void tk__invoke_any_wake(tk_executor *ex);
static inline void tk__invoke_any_notify(tk_executor *ex) {
    if (TK__UNLIKELY(atomic_load(&ex->any_waiters) != 0))
        tk__invoke_any_wake(ex);
}

/* ---- worker.c ---- */
void tk__run_task(tk_executor *ex, tk__task *t); /* a node taken from the queue */
/* Starts one worker if the pool is in a state that admits it and fewer than
 * `limit` are counted. Returns 1 (started), 0 (not needed), or
 * TK_ENOMEM/TK_ETHREAD. Takes pool_lock; call with no lock held. */
int tk__add_worker(tk_executor *ex, unsigned limit, bool shutdown_ok);
/* Runs fn once on the calling thread (state already RUNNING): the hooks if
 * `hooks`, the counters, the thread-local current task. Returns fn's status
 * and, if given, the run's task info and the time fn returned. No lock. */
int tk__invoke(tk_executor *ex, tk__task *t, bool hooks, tk_task_info *info_out, int64_t *end_ns);
/* Ends a one-shot run: arg_free, then COMPLETED or FAILED unless cancelled
 * meanwhile (so a future seen done has had its arg_free run), then drops the
 * executor reference and `extra` more. No lock held. */
void tk__finish_one_shot(tk_executor *ex, tk__task *t, int status, uint32_t extra);

/* ---- executor.c ---- */
/* JDK canRunInCurrentRunState of a task's or timer's node for pool state
 * `state`. Lock-free. */
bool tk__can_run_in_state(const tk_executor *ex, const tk_node *n, int state);
/* The same from what it depends on: a periodic task or not, its deadline. */
bool tk__can_run(const tk_executor *ex, bool periodic, int64_t deadline_ns, int state);
/* Takes the pool towards TERMINATED if it may go. Call with pool_lock held;
 * it may drop and retake it to run the terminated hook. */
void tk__try_terminate_locked(tk_executor *ex);
/* For a timer start() whose offer may have landed after shutdown() swept the
 * queue (the pool state left RUNNING while it ran): sweeps again, makes sure
 * a worker serves the queue and checks for termination (SHUTDOWN); where
 * nothing will run `own` (stopped, terminated, no worker to be had), pulls
 * it out of the queue if it is there and returns true. Touches queued nodes
 * only through the engine, never `own` itself. Call with no lock held. */
bool tk__shutdown_catch_up(tk_executor *ex, const tk_node *own);
/* After a removal while shut down: wake blocked takers so they re-check, and
 * try to terminate. Call with no lock held. */
void tk__rewake_if_shutdown(tk_executor *ex);

/* ---- queue-access.c ---- */
/* ops->remove() that counts a node that left the queue (TK_OK or
 * TK_EINPROGRESS) in removed_count. Returns remove()'s status. No lock. */
int tk__queue_remove(tk_executor *ex, tk_node *n);
/* Takes `n` out of whichever worker's pending batch holds it. Returns true
 * (the caller now holds the node and its queue reference; counted removed)
 * or false (in no batch). Takes pool_lock and batch_lock. */
bool tk__batch_steal(tk_executor *ex, tk_node *n);
/* Takes every worker's pending batch whole and returns the nodes as one
 * detached list sorted by (deadline, seq); the caller holds them. */
tk_node *tk__batch_steal_all(tk_executor *ex);
/* Merges two detached lists sorted by (deadline, seq). */
tk_node *tk__merge_sorted(tk_node *a, tk_node *b);
/* The next node of the worker's pending batch, popped; NULL when empty. */
tk_node *tk__batch_pop(tk_executor *ex, tk__worker *w);
/* Publishes a batch of `count` nodes the worker just took. */
void tk__batch_publish(tk_executor *ex, tk__worker *w, tk_node *n, size_t count);

/* ---- submit.c ---- */
/* Re-queues a periodic task after a run (state PENDING, the caller holds the
 * holder reference and gives it to the queue, or drops it). No lock held. */
void tk__requeue_periodic(tk_executor *ex, tk__task *t);

/* ---- control.c ---- */
/* On an engine without wake(): how long an idle worker with no time-out
 * waits before it re-reads the pool's settings (core size, core thread
 * time-out), so a change made while it sleeps reaches it. */
#define TK__IDLE_RECHECK_NS ((int64_t)1000000000) /* 1 s */
/* After a change of the settings the workers wait by (core size, keep-alive,
 * core thread time-out): makes every idle worker read them again at once
 * (the engine's wake()), or, on an engine without it, within
 * TK__IDLE_RECHECK_NS. Takes pool_lock; call with no lock held. */
void tk__wake_idle_workers(tk_executor *ex);
/* A worker's wait for work (JDK getTask()): one node, or a batch (*count).
 * Waits at most the keep-alive time if the worker may time out (the core
 * thread time-out is allowed, or more workers than the core size are
 * alive). Returns TK_OK, TK_ECLOSED, or TK_ETIMEDOUT (a worker that may time
 * out found no work in its keep-alive time). No lock held. */
int tk__worker_take(tk_executor *ex, tk_node **out, size_t *count);
/* After TK_ETIMEDOUT: decides under pool_lock whether the worker leaves (it
 * may still time out, and another worker is alive or the queue is empty:
 * JDK getTask()); if so counts it out (wc, alive) and tries to terminate,
 * then stays after all if work arrived meanwhile and no worker is left (JDK
 * processWorkerExit()). Returns true if it leaves (w->exited is then set).
 * Call with no lock held. */
bool tk__worker_retire(tk_executor *ex, tk__worker *w);
/* After an offer while RUNNING (JDK ensurePrestart): makes sure a worker is
 * alive, since idle workers may time out. Returns false if none is alive and
 * none could be started. Call with no lock held. */
bool tk__ensure_worker(tk_executor *ex);
/* Pulls `n` out of the queue if it is still there (compares addresses only:
 * a node that left the queue is never touched). Returns true if pulled. */
bool tk__pull_if_queued(tk_executor *ex, const tk_node *n);
/* Joins and frees the workers that left the pool, folding their counters
 * into the executor's; not from a worker that has itself left. Takes
 * pool_lock; call with no lock held. */
void tk__reap_workers(tk_executor *ex);

/* tk_executor_schedule_spec()'s check of a spec: TK_OK or TK_EINVAL. */
int tk__spec_check(const tk_task_spec *spec);

/* ---- timer.c ---- */
/* tk_timer.tk__state values. STARTING: a start() claimed the timer and is
 * writing its node (only that start() acts on it). STOPPING: stop() won, but
 * the engine (remove() said TK_EINPROGRESS) or a worker (TK_ENOENT) still
 * holds the node; whoever holds it turns it IDLE when it lets go. */
enum { TK__TIMER_IDLE = 0, TK__TIMER_PENDING = 1, TK__TIMER_STOPPING = 2, TK__TIMER_STARTING = 3 };

_Static_assert(sizeof(tk_timer) == 72, "a timer is a node and 24 bytes");

/* Nodes of embedded timers carry an odd seq, tasks an even one. */
static inline bool tk__node_is_timer(const tk_node *n) {
    return (n->seq & 1u) != 0;
}

static inline tk_timer *tk__timer_of(tk_node *n) {
    return tk__container_of(n, tk_timer, tk__node);
}

static inline uint32_t tk__timer_state(const tk_timer *tm) {
    return __atomic_load_n(&tm->tk__state, __ATOMIC_ACQUIRE);
}

/* Runs a timer node a worker took from the queue. No lock held. */
void tk__run_timer(tk_executor *ex, tk_timer *tm);
/* The executor got a timer's node back without running it (a sweep, a
 * drain, a release, discard-oldest): the timer turns IDLE, and counts as
 * cancelled if it was still PENDING. The timer is not touched afterwards. */
void tk__timer_drop(tk_executor *ex, tk_timer *tm);
/* Drops a node the executor got back without running it: a task's queue
 * reference (cancelling it first if `cancel`), or a timer (tk__timer_drop). */
void tk__node_drop(tk_executor *ex, tk_node *n, bool cancel);

/* The calling thread's worker record if it is a pool thread of `ex`. */
static inline tk__worker *tk__own_worker(const tk_executor *ex) {
    tk__worker *w = tk__current.worker;
    return w != NULL && w->ex == ex ? w : NULL;
}

/* Adds one to a counter only its owner thread writes. */
static inline void tk__bump(_Atomic uint64_t *c) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Counts a run (or a completion): in the calling worker's record if it is
 * one of ex's pool threads, else in the executor's shared counter. Workers
 * count their completions themselves, once per node taken (worker.c). */
static inline void tk__count(tk_executor *ex, bool run) {
    tk__worker *w = tk__own_worker(ex);
    if (w != NULL)
        tk__bump(run ? &w->runs : &w->completed);
    else
        atomic_fetch_add_explicit(run ? &ex->runs : &ex->completed_count, 1, memory_order_relaxed);
}

/* The calling thread's shard of ex. */
static inline tk__shard *tk__shard_here(tk_executor *ex) {
    return &ex->shards[tk__thread_slot() & ex->shard_mask];
}

/* Adds n to a shard counter (threads of one shard may race). */
static inline void tk__shard_add(_Atomic uint64_t *c, uint64_t n) {
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* The seq of a scheduling call from this thread: the count of its shard's
 * calls in the high bits, then the thread's slot as the node's shard key
 * (tk_node_shard_key(), bits 1..7), then bit 0: 1 for a timer, 0 for a task.
 * Calls of one thread get growing seqs (FIFO among equal deadlines); calls
 * of different threads are ordered by their deadlines only. */
static inline uint64_t tk__next_seq(tk_executor *ex, bool timer) {
    unsigned slot = tk__thread_slot();
    tk__shard *sh = &ex->shards[slot & ex->shard_mask];
    uint64_t c = atomic_fetch_add_explicit(&sh->seq, 1, memory_order_relaxed);
    return (c << 8) | ((uint64_t)slot << 1) | (timer ? 1u : 0u);
}

static inline tk__task *tk__task_of(tk_node *n) {
    return tk__container_of(n, tk__task, node);
}

/* The executor a task belongs to: from its page's header. */
static inline tk_executor *tk__task_ex(const tk__task *t) {
    return tk__page_of(t)->ex;
}

/* The task's deadline, for threads that do not own its node. */
static inline int64_t tk__task_deadline(const tk__task *t) {
    return __atomic_load_n(&t->node.deadline_ns, __ATOMIC_RELAXED);
}

#endif
