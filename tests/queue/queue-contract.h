/* SPDX-License-Identifier: MIT */
/* timerkit queue-contract suite: shared declarations.
 *
 * The blocking queue contract of api/timerkit/queue.h (tk_queue_ops),
 * written once and run on every registered engine. A case is one behaviour
 * of the contract; its name says which ("offer past max_pending answers
 * TK_EFULL"). The only engine knowledge is read from the engine's table: its
 * capabilities (TK_QUEUE_CAP_*), whether it has take_batch(), and whether
 * its parameter table has the key "spin". Every queue is made from the
 * engine's own defaults (tk_queue_config_init_for()) plus what the case
 * needs (max_pending, spin_ns), so an engine added to the registry is
 * covered without an edit here.
 *
 * The suite includes only public headers and cmocka, so that it can be
 * built against an installed timerkit for an engine written elsewhere:
 * register the engine with tk_engine_register(), then call
 * tk_queue_contract_main().
 *
 * cmocka 1.1.5 longjmps out of a failed assert, so asserts run only on the
 * test's main thread; helper threads record what they saw and the main
 * thread checks. Everything a helper thread or a queue can still touch after
 * a failed assert (nodes, taker records) comes from qc_alloc(), and every
 * queue and thread goes through qc_* tracking, so the teardown can close the
 * queues (which releases every blocked taker), join the threads, drain and
 * destroy the queues and only then free the memory.
 */
#ifndef TK_QUEUE_CONTRACT_H
#define TK_QUEUE_CONTRACT_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "suite-runner.h"
#include "timerkit.h"

/* The suite's entry point, tk_queue_contract_main(), is declared in the test
 * kit's header. */
#include "timerkit/testkit.h"

/* ---- the engine under test ------------------------------------------------------ */

typedef struct qc_engine {
    const tk_queue_ops *ops;
    bool exact;    /* TK_QUEUE_CAP_EXACT_ORDER */
    bool bounded;  /* TK_QUEUE_CAP_BOUNDED: honours max_pending */
    bool deferred; /* TK_QUEUE_CAP_DEFERRED_RELEASE */
    bool batch;    /* take_batch() is not NULL */
    bool spin;     /* "spin" is a key of its parameter table: it honours spin_ns */
    bool slack;    /* TK_QUEUE_CAP_SLACK: wakes at window ends, rejects a negative slack */
    bool ticked;   /* TK_QUEUE_CAP_TICKED */
} qc_engine;

/* What a case needs of the engine; a case whose needs are not met is
 * reported as skipped. */
#define QC_NEEDS_BATCH 0x1u      /* take_batch() */
#define QC_NEEDS_BOUNDED 0x2u    /* TK_QUEUE_CAP_BOUNDED */
#define QC_NEEDS_SPIN 0x4u       /* the "spin" key */
#define QC_NEEDS_DEFERRED 0x8u   /* TK_QUEUE_CAP_DEFERRED_RELEASE */
#define QC_NEEDS_IMMEDIATE 0x10u /* no TK_QUEUE_CAP_DEFERRED_RELEASE */
#define QC_NEEDS_EXACT 0x20u     /* TK_QUEUE_CAP_EXACT_ORDER */
#define QC_NEEDS_SLACK 0x40u     /* TK_QUEUE_CAP_SLACK */

typedef struct qc qc;

/* One behaviour, run for every engine. */
typedef struct qc_case {
    const char *name; /* the behaviour: "poll gives up with TK_ETIMEDOUT after its timeout" */
    void (*fn)(qc *t);
    unsigned needs; /* QC_NEEDS_* */
} qc_case;

/* The suite's groups, in the order they run: one line each. Group G is the
 * file test-G.c, which ends with its table of cases:
 *
 *     QC_TABLE(G, {"a behaviour, said as a sentence", function_that_checks_it, QC_NEEDS_...},
 *                 ...);
 *
 * (needs 0: every engine runs it). A new case is a function in the file of
 * its group (each file's opening comment says what its group covers) and
 * one row in that table. A new group is a new file test-G.c (the kit's
 * CMake list picks up every test-*.c here) and one X(G) line below. */
#define QC_GROUPS(X)                                                                               \
    X(api)                                                                                         \
    X(order)                                                                                       \
    X(remove)                                                                                      \
    X(close)                                                                                       \
    X(batch)                                                                                       \
    X(race)                                                                                        \
    X(limits)                                                                                      \
    X(slack)

#define QC_DECLARE_GROUP(group) KIT_TABLE_DECLARE(qc_case, qc_cases_##group)
QC_GROUPS(QC_DECLARE_GROUP)
#define QC_TABLE(group, ...) KIT_TABLE_DEFINE(qc_case, qc_cases_##group, __VA_ARGS__)

/* ---- nodes ------------------------------------------------------------------------- */

/* Every node the suite offers is one of these: the tk_node first, then what
 * the engine and the helper threads did with it. */
typedef struct qc_node {
    tk_node node;
    atomic_int taken;    /* handed out (take, poll, take_batch, remove_first, drain, remove_if) */
    atomic_int removed;  /* remove() answered TK_OK */
    atomic_int released; /* came back through the release callback */
    size_t idx;          /* its index in the array qc_nodes() made */
} qc_node;

#define QC_NODE(n) ((qc_node *)(void *)(n))

/* n zeroed nodes (private areas zeroed, as before a first offer); node i
 * has idx i and seq i. Freed by the teardown. */
qc_node *qc_nodes(qc *t, size_t n);
/* Sets a node's key (its private area and its slack are left alone: the
 * node may be one the engine handed back). */
void qc_key(qc_node *n, int64_t deadline_ns, uint64_t seq);
/* Offers, asserting TK_OK. */
void qc_offer(qc *t, tk_queue *q, qc_node *n);
/* Keys n (seq 0) to fall due qc_lead(ms) from now and offers it. */
void qc_offer_due_in(qc *t, tk_queue *q, qc_node *n, int64_t ms);
/* (deadline, seq) order: true if a goes strictly before b. */
bool qc_before(const tk_node *a, const tk_node *b);
/* Length of a detached list; *sorted (may be NULL) is cleared if the list
 * is not in (deadline, seq) order. */
size_t qc_list_len(const tk_node *l, bool *sorted);
/* Marks every node of a detached list taken; returns their number. */
size_t qc_list_take(tk_node *l);

/* ---- queues ------------------------------------------------------------------------ */

/* The engine's default config (tk_queue_config_init_for()). */
void qc_config(qc *t, tk_queue_config *cfg);
/* A tracked queue from `cfg` (NULL: the engine's defaults from
 * qc_config()), with the suite's release callback, which counts per queue
 * and per node. Asserts TK_OK. */
tk_queue *qc_queue(qc *t, const tk_queue_config *cfg);
/* A tracked queue from `cfg` exactly as given (NULL stays NULL: the
 * engine's defaults), with the suite's release callback if `release`, else
 * none. Returns the status of create(); *out is the queue on TK_OK, else
 * NULL (asserted). */
int qc_create(qc *t, const tk_queue_config *cfg, bool release, tk_queue **out);
/* How many nodes of q came back through the release callback so far (also
 * after qc_destroy()). */
long qc_released(qc *t, tk_queue *q);
/* Destroys a tracked queue now; returns qc_released() after it. */
long qc_destroy(qc *t, tk_queue *q);
/* remove() of a queued node: asserts TK_OK, or TK_EINPROGRESS where the
 * engine has TK_QUEUE_CAP_DEFERRED_RELEASE; marks the node removed on
 * TK_OK. Returns the status. */
int qc_remove_queued(qc *t, tk_queue *q, qc_node *n);
/* check() answers TK_OK. */
#define QC_CHECK(t, q) assert_int_equal((t)->ops->check(q), TK_OK)

/* ---- threads ----------------------------------------------------------------------- */

/* Starts a tracked thread; returns its handle for qc_join(). */
size_t qc_thread(qc *t, void *(*fn)(void *), void *arg);
void qc_join(qc *t, size_t handle);

typedef enum qc_how { QC_TAKE = 1, QC_POLL, QC_BATCH } qc_how;

/* A thread blocked in take(), poll() or take_batch(). */
typedef struct qc_taker {
    const tk_queue_ops *ops;
    tk_queue *q;
    qc_how how;
    int64_t timeout_ns; /* poll() */
    size_t max;         /* take_batch() */
    atomic_int started, done;
    int rc;
    tk_node *got; /* the node, or the batch's list */
    size_t count; /* take_batch(): its count; else 1 on TK_OK */
    int64_t returned_ns;
    size_t handle;
} qc_taker;

/* Starts a taker (memory from qc_alloc()): `arg` is poll()'s timeout or
 * take_batch()'s max, unused for take(). Returns once the thread runs. */
qc_taker *qc_taker_start(qc *t, tk_queue *q, qc_how how, int64_t arg);
/* Waits up to QC_WAIT for the taker to return (fails the case if it does
 * not), then joins it. */
void qc_taker_join(qc *t, qc_taker *k);
/* How many of the takers are done. */
int qc_takers_done(qc_taker *const *k, int n);
/* Polls until `n` of the takers are done or `timeout_ns` passes. */
bool qc_wait_takers(qc_taker *const *k, int n, int want, int64_t timeout_ns);
/* Closes q in `mode` while the n takers are blocked (asserted), waits for them
 * all and joins them, asserting that every one came back after the close with
 * TK_ECLOSED. Returns the instant of the close. */
int64_t qc_close_releases(qc *t, tk_queue *q, tk_queue_close_mode mode, qc_taker *const *k, int n);

/* ---- per-test state ------------------------------------------------------------------ */

#define QC_MAX_QUEUES 16
#define QC_MAX_THREADS 32

typedef struct qc_slot {
    qc *t;
    tk_queue *q;          /* NULL once destroyed */
    tk_queue *id;         /* the queue it was created as, kept after destroy */
    atomic_long released; /* release callbacks received */
} qc_slot;

struct qc {
    const qc_engine *eng;
    const tk_queue_ops *ops; /* eng->ops */
    const qc_case *c;        /* the case being run */
    qc_slot queues[QC_MAX_QUEUES];
    size_t nqueues;
    pthread_t threads[QC_MAX_THREADS];
    bool joined[QC_MAX_THREADS];
    size_t nthreads;
    void **memory;
    size_t nmemory, capmemory;
};

/* Zeroed memory that lives until the teardown, after every thread and
 * queue is gone. */
void *qc_alloc(qc *t, size_t n, size_t size);

/* ---- time and sizes ------------------------------------------------------------------ */

#define QC_MS(x) ((int64_t)(x)*TK_NS_PER_MS)
/* How long the main thread waits for what must happen: only a failure
 * waits this long. */
#define QC_WAIT QC_MS(10000)

/* True under a sanitizer or valgrind (TK_VALGRIND set), where everything is
 * several times slower. */
bool qc_slow(void);
/* n scaled for the build: TK_STRESS_SCALE (default 1) times n, divided by 8
 * when qc_slow(); at least 1. */
long qc_scaled(long n);
/* qc_scaled(n), but never fewer than `least`. */
size_t qc_scaled_at_least(long n, size_t least);
/* Steps *state, a 64-bit linear congruential generator (Knuth's MMIX
 * constants), and returns the new state; its high bits are the random ones. */
uint64_t qc_lcg_next(uint64_t *state);
/* ms milliseconds of lead time, ten times more when qc_slow(): how far
 * ahead a case puts deadlines it must offer before they fall due. */
int64_t qc_lead(int64_t ms);
/* Sleeps long enough for started threads to block in the queue. */
void qc_settle(void);
void qc_sleep_ns(int64_t ns);

#endif
