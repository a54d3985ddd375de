/* SPDX-License-Identifier: MIT */
/* timerkit executor: access to the queue (the JDK's getQueue().contains(),
 * remove(Runnable) and a read-only walk of getQueue()), and the workers'
 * pending batches that make up part of that queue.
 *
 * The queue is the engine plus, for a worker that takes due nodes in
 * batches (executor-internal.h, TK__TAKE_BATCH), the nodes of its current
 * batch that it has not started yet. Those nodes stay published in the
 * worker's record (tk__worker.batch, under ex->batch_lock) and the worker
 * pops them one at a time, so the queue size, contains(), remove(), the
 * visitor and shutdown_now() see them as queued; the only nodes nobody sees
 * are the ones in the hands of a worker between the engine's take and the
 * publish or the start of a run (one round trip of batch_lock).
 *
 * Who holds a batch node: the worker, with the node's queue reference. A
 * thread that steals a node out of a batch (remove(), shutdown_now()) gets
 * that reference with it, under batch_lock, so the worker never sees the
 * node again. Nothing else touches a batch node's links.
 *
 * Counting: a node that leaves the engine or a batch other than through a
 * worker's take or a shutdown_now() hand-back counts in removed_count,
 * exactly once, where it leaves (tk__queue_remove(), the steal functions,
 * and the executor's drop lists); see tk_executor_stats for the identities
 * this keeps.
 *
 * Engines offer no iteration: contains() and the visitor walk the engine
 * with remove_if() and a predicate that records and never removes (called
 * with the engine lock held: it only reads the task and writes the
 * caller's snapshot). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "executor-internal.h"

/* ---- engine removals, counted ------------------------------------------- */

int tk__queue_remove(tk_executor *ex, tk_node *n) {
    int rc = ex->ops->remove(ex->q, n);
    if (rc == TK_OK || rc == TK_EINPROGRESS)
        tk__shard_add(&tk__shard_here(ex)->removed, 1);
    return rc;
}

/* ---- the workers' pending batches ---------------------------------------- */

void tk__batch_publish(tk_executor *ex, tk__worker *w, tk_node *n, size_t count) {
    tk__spin_lock(&ex->batch_lock);
    w->batch = n;
    atomic_store_explicit(&w->batch_left, count, memory_order_relaxed);
    tk__spin_unlock(&ex->batch_lock);
}

tk_node *tk__batch_pop(tk_executor *ex, tk__worker *w) {
    tk__spin_lock(&ex->batch_lock);
    tk_node *n = w->batch;
    if (n != NULL) {
        size_t left = atomic_load_explicit(&w->batch_left, memory_order_relaxed) - 1;
        w->batch = left > 0 ? tk_node_next_detached(n) : NULL;
        atomic_store_explicit(&w->batch_left, left, memory_order_relaxed);
        if (w->batch != NULL) /* the line the next run reads (fn, arg, ...) */
            __builtin_prefetch((const char *)w->batch + TK__CACHELINE);
    }
    tk__spin_unlock(&ex->batch_lock);
    return n;
}

bool tk__batch_steal(tk_executor *ex, tk_node *n) {
    bool found = false;
    pthread_mutex_lock(&ex->pool_lock);
    tk__spin_lock(&ex->batch_lock);
    for (tk__worker *w = ex->workers; w != NULL && !found; w = w->next) {
        size_t left = atomic_load_explicit(&w->batch_left, memory_order_relaxed);
        tk_node **link = &w->batch;
        for (size_t i = 0; i < left; i++) {
            tk_node *cur = *link;
            if (cur == n) {
                /* the batch is counted, not NULL-terminated: the last node's
                 * link is not looked at */
                /* atomic: a remove() of a neighbour racing on another
                 * thread reads this word (the heap reads it as its index) */
                if (i + 1 < left)
                    __atomic_store_n(link, tk_node_next_detached(cur), __ATOMIC_RELAXED);
                else if (link == &w->batch)
                    *link = NULL;
                atomic_store_explicit(&w->batch_left, left - 1, memory_order_relaxed);
                found = true;
                break;
            }
            link = &cur->tk__priv.detached_next;
        }
    }
    tk__spin_unlock(&ex->batch_lock);
    pthread_mutex_unlock(&ex->pool_lock);
    if (found)
        tk__shard_add(&tk__shard_here(ex)->removed, 1);
    return found;
}

static bool node_before(const tk_node *a, const tk_node *b) {
    int64_t da = __atomic_load_n(&a->deadline_ns, __ATOMIC_RELAXED);
    int64_t db = __atomic_load_n(&b->deadline_ns, __ATOMIC_RELAXED);
    return da < db || (da == db && a->seq < b->seq);
}

tk_node *tk__merge_sorted(tk_node *a, tk_node *b) {
    tk_node *head = NULL;
    tk_node **tail = &head;
    while (a != NULL && b != NULL) {
        tk_node **take = node_before(b, a) ? &b : &a;
        tk_node *n = *take;
        *take = tk_node_next_detached(n);
        *tail = n;
        tail = &n->tk__priv.detached_next;
    }
    *tail = a != NULL ? a : b;
    return head;
}

tk_node *tk__batch_steal_all(tk_executor *ex) {
    tk_node *all = NULL;
    pthread_mutex_lock(&ex->pool_lock);
    tk__spin_lock(&ex->batch_lock);
    for (tk__worker *w = ex->workers; w != NULL; w = w->next) {
        size_t left = atomic_load_explicit(&w->batch_left, memory_order_relaxed);
        if (left == 0)
            continue;
        /* NULL-terminate the stolen part (the worker's list is counted) */
        tk_node *last = w->batch;
        for (size_t i = 1; i < left; i++)
            last = tk_node_next_detached(last);
        __atomic_store_n(&last->tk__priv.detached_next, NULL, __ATOMIC_RELAXED); /* as above */
        all = tk__merge_sorted(all, w->batch);
        w->batch = NULL;
        atomic_store_explicit(&w->batch_left, 0, memory_order_relaxed);
    }
    tk__spin_unlock(&ex->batch_lock);
    pthread_mutex_unlock(&ex->pool_lock);
    return all;
}

/* ---- snapshot of the queued tasks ---------------------------------------- */

/* A queued task that will still run: a task node (not a timer) still
 * PENDING. */
static bool will_run(const tk_node *n) {
    return !tk__node_is_timer(n) &&
           atomic_load(&tk__task_of((tk_node *)n)->state) == TK__TASK_PENDING;
}

typedef struct snapshot {
    const tk_node *want; /* contains(): the node looked for, else NULL */
    bool found;
    tk_task_info *items; /* visit: room for cap infos */
    size_t len, cap;
    bool overflow;
} snapshot;

static void snapshot_add(snapshot *s, const tk_node *n) {
    if (s->want != NULL) {
        if (n == s->want)
            s->found = true;
        return;
    }
    if (!will_run(n))
        return;
    if (s->len == s->cap) {
        s->overflow = true;
        return;
    }
    tk__task_info(tk__task_of((tk_node *)n), &s->items[s->len++]);
}

/* remove_if() predicate: records, never removes (engine lock held). */
static bool snapshot_pred(const tk_node *n, void *ctx) {
    snapshot_add(ctx, n);
    return false;
}

static void snapshot_batches(tk_executor *ex, snapshot *s) {
    pthread_mutex_lock(&ex->pool_lock);
    tk__spin_lock(&ex->batch_lock);
    for (tk__worker *w = ex->workers; w != NULL; w = w->next) {
        size_t left = atomic_load_explicit(&w->batch_left, memory_order_relaxed);
        const tk_node *n = w->batch;
        for (size_t i = 0; i < left; i++) {
            snapshot_add(s, n);
            if (i + 1 < left)
                n = tk_node_next_detached(n);
        }
    }
    tk__spin_unlock(&ex->batch_lock);
    pthread_mutex_unlock(&ex->pool_lock);
}

/* The engine first, then the batches: a node that moves from the engine into
 * a batch meanwhile is seen in the batch. */
static void snapshot_take(tk_executor *ex, snapshot *s) {
    (void)ex->ops->remove_if(ex->q, snapshot_pred, s);
    snapshot_batches(ex, s);
}

static int info_cmp(const void *pa, const void *pb) {
    const tk_task_info *a = pa, *b = pb;
    if (a->deadline_ns != b->deadline_ns)
        return a->deadline_ns < b->deadline_ns ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* ---- public API ------------------------------------------------------------ */

/* A task contains() may find queued: still PENDING, or cancelled and not
 * yet taken out (remove-on-cancel off; a cancel with it on takes the node
 * out at once, and the engine's walk no longer sees it). A removed task is
 * out of the queue by definition (tk_executor_remove()). */
static bool may_be_queued(const tk_future *f) {
    uint32_t s = atomic_load(&((tk_future *)f)->state);
    return s == TK__TASK_PENDING || s == TK__TASK_CANCELLED;
}

bool tk_executor_contains(const tk_executor *cex, const tk_future *f) {
    if (cex == NULL || f == NULL || tk__task_ex(f) != cex)
        return false;
    if (!may_be_queued(f))
        return false; /* running, done or removed */
    tk_executor *ex = (tk_executor *)cex;
    snapshot s = {.want = &f->node};
    snapshot_take(ex, &s);
    /* A periodic task is PENDING between two runs, out of the queue; the
     * walk says whether it is in. Re-read the state: removed meanwhile. */
    return s.found && may_be_queued(f);
}

int tk_executor_remove(tk_executor *ex, tk_future *f) {
    if (ex == NULL || f == NULL || tk__task_ex(f) != ex)
        return TK_EINVAL;
    /* Claim it: from here no worker starts it (its PENDING -> RUNNING CAS
     * fails and it drops the node), and no cancel wins. */
    if (!tk__task_complete(f, TK__TASK_PENDING, TK__TASK_REMOVED))
        return TK_ENOENT;
    tk__task_finish(f, 0); /* arg_free, the executor's reference */
    int rc = tk__queue_remove(ex, &f->node);
    if (rc == TK_OK || (rc == TK_ENOENT && tk__batch_steal(ex, &f->node))) {
        tk__task_unref(f, 1); /* the queue's reference came back */
        tk__rewake_if_shutdown(ex);
    }
    /* TK_EINPROGRESS: the engine's release callback drops the queue's
     * reference. TK_ENOENT and in no batch: a worker holds the node (it
     * drops it on seeing REMOVED), or a periodic task is between its run
     * and its re-queue (tk__requeue_periodic takes it out again). */
    return TK_OK;
}

long tk_executor_visit_queue(tk_executor *ex, tk_queue_visit_fn visit, void *ctx) {
    if (ex == NULL || visit == NULL)
        return TK_EINVAL;
    snapshot s = {0};
    size_t bytes = 0;
    for (;;) {
        size_t queued = ex->ops->size(ex->q) + TK__TAKE_BATCH;
        pthread_mutex_lock(&ex->pool_lock);
        for (const tk__worker *w = ex->workers; w != NULL; w = w->next)
            queued += atomic_load_explicit(&w->batch_left, memory_order_relaxed);
        pthread_mutex_unlock(&ex->pool_lock);
        s.cap = queued + queued / 4;
        bytes = s.cap * sizeof(tk_task_info);
        s.items = tk__alloc(&ex->alloc, bytes);
        if (s.items == NULL)
            return TK_ENOMEM;
        s.len = 0;
        s.overflow = false;
        snapshot_take(ex, &s);
        if (!s.overflow)
            break;
        tk__free(&ex->alloc, s.items, bytes); /* it grew meanwhile: again */
    }
    qsort(s.items, s.len, sizeof(tk_task_info), info_cmp);
    long calls = 0;
    for (size_t i = 0; i < s.len; i++) {
        calls++;
        if (!visit(&s.items[i], ctx))
            break;
    }
    tk__free(&ex->alloc, s.items, bytes);
    return calls;
}
