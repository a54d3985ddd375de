/* SPDX-License-Identifier: MIT */
/* tkbench: a loop thread fed through a hand-off queue, for the in-process
 * peers whose event loop is not thread-safe (libuv, libev).
 *
 * User threads never call the library: they append a request (start, stop,
 * close, quit, nothing) to a locked queue and wake the loop through the
 * library's own async handle (uv_async_send, ev_async_send). The loop thread
 * swaps the queue for an empty one and applies the whole batch, in order,
 * then counts it processed, which is what sync() waits for.
 *
 * What is here: the queue, its lock, the swap, the counts, the thread (with
 * its timer slack) and sync() in rounds. What each peer keeps: its glue
 * struct, how it applies a request to its timers, how it wakes its loop and
 * how it runs it (three hooks), and what it does with its fire-and-forget
 * timers. asio (peers/asio.cc) posts closures to its io_context instead, and
 * libevent is thread-safe (evthread_use_pthreads): neither uses this. */
#ifndef TKB_PEERS_HANDOFF_H
#define TKB_PEERS_HANDOFF_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* A request's kind. */
enum {
    TKB_HO_START, /* (re)start `timer` at deadline_ns (tkb_now_ns()'s clock) */
    TKB_HO_STOP,  /* stop `timer` if started */
    TKB_HO_CLOSE, /* the user is done with `timer`'s storage (release()) */
    TKB_HO_QUIT,  /* drop what is pending and end the loop (destroy()) */
    TKB_HO_NOP,   /* nothing: one more loop iteration (sync() rounds) */
};

typedef struct tkb_handoff_op {
    int kind;
    void *timer; /* the peer's glue struct; NULL for QUIT and NOP */
    int64_t deadline_ns;
} tkb_handoff_op;

typedef struct tkb_handoff tkb_handoff;

/* What a peer tells the queue about its library. The peer embeds the
 * tkb_handoff in its own struct and reaches that from `h`. */
typedef struct tkb_handoff_hooks {
    /* Any thread, after each append, without the lock: wakes the loop (the
     * library's async send; the loop then calls tkb_handoff_drain()). */
    void (*wake)(tkb_handoff *h);
    /* The loop thread's body: runs the loop until a QUIT has ended it. */
    void (*run)(tkb_handoff *h);
    /* Loop thread, inside tkb_handoff_drain(), without the lock: applies
     * ops[0..n) in order. */
    void (*apply)(tkb_handoff *h, const tkb_handoff_op *ops, size_t n);
} tkb_handoff_hooks;

struct tkb_handoff {
    const tkb_handoff_hooks *hooks;
    pthread_t thread;
    int64_t slack; /* the loop thread's timer slack (tkb_svc_opts) */
    /* Owned by the peer's service, which embeds this struct, inits it in
     * create() and destroys it in destroy() after the join. Taken by the
     * user threads (push, sync) and by the loop thread (drain: the swap,
     * then the count), each for a few stores, never across a library call
     * or a timer's callback. Guards ops, nops, capops, submitted and
     * processed. */
    pthread_mutex_t mu;
    pthread_cond_t cv;   /* with mu: processed moved (sync() waits on it) */
    tkb_handoff_op *ops; /* the requests not yet taken, in order */
    size_t nops, capops;
    uint64_t submitted, processed;
    tkb_handoff_op *work; /* loop thread only: the batch it applies */
    size_t capwork;
};

/* Initialises the queue (no thread yet). Returns 0 or -1. */
int tkb_handoff_init(tkb_handoff *h, const tkb_handoff_hooks *hooks, int64_t timer_slack_ns);
/* Starts the loop thread (hooks->run). Returns 0 or -1. */
int tkb_handoff_start(tkb_handoff *h);
/* Any thread: appends a request, then wakes the loop. Out of memory aborts
 * the run (a benchmark harness). */
void tkb_handoff_push(tkb_handoff *h, int kind, void *timer, int64_t deadline_ns);
/* Loop thread, from the library's async callback: takes every request
 * pushed so far, applies them (hooks->apply) and counts them processed. */
void tkb_handoff_drain(tkb_handoff *h);
/* Waits until everything submitted so far has been processed; each round
 * after the first pushes a NOP and waits for it too, so it is applied in a
 * later loop iteration than what came before (libuv's close callbacks). */
void tkb_handoff_sync(tkb_handoff *h, unsigned rounds);
/* Pushes a QUIT and joins the loop thread. */
void tkb_handoff_stop(tkb_handoff *h);
/* Frees the queue (after tkb_handoff_stop(), or when the thread never
 * started). */
void tkb_handoff_fini(tkb_handoff *h);

#endif
