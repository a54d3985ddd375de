/* timerkit: the heap engine's blocking adapter (tk_engine_heap()).
 *
 * Structure. The pure core (heap-core.c) behind one mutex, plus one condition
 * variable, `available`, created on CLOCK_MONOTONIC. This is the JDK's
 * DelayedWorkQueue (ScheduledThreadPoolExecutor) in C, leader-follower wait
 * included: of the threads blocked in take()/poll() on a head that is not yet
 * due, only one, the leader, sleeps until the head's deadline; the others,
 * the followers, wait without a deadline (or until their own poll timeout),
 * so one due task wakes one thread instead of a herd. The rules that keep a
 * thread always responsible for the head:
 *   - offer() of a node that becomes the new head clears the leader (its
 *     deadline is stale) and signals `available` once;
 *   - a taker that leaves (with a node, a timeout or TK_ECLOSED) while there
 *     is no leader and a head remains signals one waiter to take over;
 *   - a take_batch() that leaves due nodes behind while others wait signals
 *     one of them (leader or not), so that it takes its share at once;
 *   - close() and any removal that empties a closed queue broadcast, so every
 *     taker re-checks the closed state.
 * Removing the head (remove, remove_first, remove_if) needs no signal: the new
 * head is no earlier than the old one, so the leader wakes no later than
 * needed and simply sleeps again.
 *
 * Invariants: those of the core (checked by check()), plus: `leader` is NULL
 * or the token of a thread blocked in take()/poll()/take_batch() on
 * `available`; `waiters` counts the threads inside such a wait or spin;
 * `resizing` is set only while one thread, having claimed a resize, is
 * between dropping the lock to build the block and retaking it to adopt.
 *
 * Complexity: offer, take, poll, remove, remove_first O(log n) under the
 * lock; take_batch O(k log n) for k nodes, plus O(d) per due node counted
 * to size the fair share when others wait; peek, size O(1); drain
 * O(n log n); remove_if O(n); check O(n).
 * No operation allocates per node; offer may grow the array, and offer, the
 * removals and a taker about to wait on an empty queue may shrink it
 * (amortised O(1)), always through the configured allocator.
 *
 * Resizing without the lock. The core runs with automatic resizing off, so
 * nothing is allocated, first-touched or freed while the lock is held; the
 * one resize step under it is a memcpy into pages already faulted in. (A
 * first touch of a page is a fault: moving a large array into fresh pages
 * under the lock would stall every taker for as long as those faults take;
 * docs/engine-notes.md has figures.) The steps:
 *   1. under the lock, an operation sees tk_heap_core_wanted_capacity()
 *      differ from the capacity and claims the resize (`resizing`: one at a
 *      time, so concurrent producers do not each build a block);
 *   2. it drops the lock, allocates the block and touches one byte per 4 KiB
 *      of the part that will be written soon (the entries to copy plus a
 *      sixteenth for the pushes that follow), then retakes the lock;
 *   3. tk_heap_core_adopt() copies into the block if the move is still
 *      wanted; the array it leaves, or the block it refused, is freed after
 *      the lock is dropped again. The claim is released and `resized`
 *      broadcast.
 * The core asks to grow at 15/16 full, so with several producers one grows
 * the array while the others fill the last sixteenth. An offer that finds
 * the array full waits on `resized` for a resize under way, or claims one and
 * grows the array itself, then pushes again; only a failed allocation makes
 * it return TK_ENOMEM (heap unchanged). Who pays: offer (growth, and a shrink
 * that takes left due) and the removal calls (shrink) do the work on their
 * own time, after their operation is complete. take(), poll() and
 * take_batch() never resize on the way out with nodes, since a worker's
 * delay there delays its tasks (pops never shrink the array: the core's
 * automatic resizing is off); they return an idle queue's memory only when
 * about to wait on an empty queue. So an array emptied by takes alone
 * shrinks at the next offer, removal, or wait on the empty queue. A failed
 * allocation for a resize nobody waits for is simply dropped; the next
 * operation that sees the need tries again.
 *
 * Accuracy. Never early: a node leaves through take()/poll()/take_batch()
 * only after tk_clock_now_ns() (CLOCK_MONOTONIC), read under the lock after
 * waking, is at or past its deadline (a batch pops heads while they are due
 * at that one reading); a wake-up that comes early (spurious, a signal, a
 * clock rounding) just loops. Lateness is bounded by the wake-up latency of
 * pthread_cond_timedwait (scheduler latency plus the thread's timer slack,
 * 50 us by default on Linux) and by lock contention; with every worker busy
 * a due node waits for the next free taker, which no queue can help.
 *
 * Spinning (tk_queue_config.spin_ns, default 0: off). A timed sleep wakes
 * after the OS's timer wake-up latency, which remains even with 1 ns of
 * timer slack and can be more than a latency-sensitive user accepts
 * (docs/engine-notes.md has figures). With spin_ns > 0 the leader
 * sleeps only until spin_ns before the head's deadline and then busy-waits,
 * with the lock dropped so offers and removals go on, until the deadline, a
 * new head (offer() bumps `head_gen`) or a close (close() bumps it too);
 * then it re-checks under the lock as after any wake-up, so the never-early
 * rule is the same. The cost is CPU: up to spin_ns of one core per wait that
 * ends in a due head, nothing while the head is further away (an idle queue
 * with a far head still sleeps). Followers never spin.
 *
 * Batches. take_batch() waits exactly as take() does (leader, follower,
 * spin), then pops due heads under the same hold of the lock, up to its
 * `max`. While other takers wait (`waiters`), it first counts the due nodes
 * (tk_heap_core_count_due(), a walk of the due subtree's keys that stops at
 * max * (waiters + 1)) and takes only a fair share, max(1, due / (waiters +
 * 1)); if due nodes are left it signals one waiter, which takes its share
 * the same way. Alone, it counts nothing and takes min(max, due).
 *
 * remove() always completes at once (TK_OK or TK_ENOENT): the heap never
 * returns TK_EINPROGRESS and never calls the `release` callback, so create()
 * accepts a NULL one. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common-internal.h"
#include "heap-core.h"
#include "params-internal.h"
#include "timerkit/queue.h"

/* tk_queue.closed holds HEAP_OPEN or the strongest tk_queue_close_mode
 * received so far (TK_QUEUE_CLOSE_NOW > TK_QUEUE_CLOSE_WHEN_EMPTY > open). */
enum { HEAP_OPEN = 0 };

/* Bytes between two first touches: no page size in use is smaller, so every
 * page of a range gets at least one write. */
#define HEAP_TOUCH_STRIDE ((size_t)4096)

struct tk_queue {
    pthread_mutex_t lock;      /* guards every field below marked "lock" */
    pthread_cond_t available;  /* CLOCK_MONOTONIC; signalled as described above */
    pthread_cond_t resized;    /* broadcast when a claimed resize ends (with the lock) */
    tk_heap_core heap;         /* lock, except its allocator: immutable, read without it */
    const void *leader;        /* lock: token of the thread waiting for the head, or NULL */
    size_t waiters;            /* lock: takers inside wait_locked() or a spin */
    int closed;                /* lock: HEAP_OPEN or a tk_queue_close_mode */
    bool resizing;             /* lock: a thread has claimed a resize and is building the block */
    int64_t spin_ns;           /* immutable after create(): see "Spinning" */
    _Atomic uint64_t head_gen; /* bumped (under the lock) on a new head and on close() */
    const tk_allocator *allocator; /* immutable after create(); frees the queue itself */
};

/* A block to hand back to the allocator once the lock is dropped. */
typedef struct heap_spare {
    tk_heap_entry *block; /* NULL: nothing to free */
    size_t capacity;
} heap_spare;

/* Frees `spare` (if it holds a block) and empties it. Caller does NOT hold
 * the lock. */
static void spare_free(tk_queue *q, heap_spare *spare) {
    if (spare->block != NULL)
        tk_heap_core_free_block(&q->heap, spare->block, spare->capacity);
    spare->block = NULL;
    spare->capacity = 0;
}

/* Allocates a block of `capacity` slots and writes one byte in every page of
 * its first `touch` slots, so that the copy and the pushes that follow find
 * those pages already mapped. Caller does NOT hold the lock. Returns NULL if
 * the allocation failed. */
static tk_heap_entry *block_alloc_touched(tk_queue *q, size_t capacity, size_t touch) {
    tk_heap_entry *block = tk_heap_core_alloc_block(&q->heap, capacity);
    if (block == NULL)
        return NULL;
    if (touch > capacity)
        touch = capacity;
    volatile unsigned char *bytes = (volatile unsigned char *)block;
    size_t len = touch * sizeof(tk_heap_entry);
    for (size_t off = 0; off < len; off += HEAP_TOUCH_STRIDE)
        bytes[off] = 0;
    if (len > 0)
        bytes[len - 1] = 0; /* the last page, when len is not a multiple of the stride */
    return block;
}

/* Carries out a resize towards `capacity` that the caller has claimed (it
 * set q->resizing). Caller holds the lock; it is dropped around the
 * allocation (which first frees what `spare` holds) and held again on
 * return, with the claim released and `resized` broadcast. The array the
 * heap left, or the block it no longer wanted, is left in `spare` for the
 * caller to free after unlocking. Returns false if the allocation failed
 * (heap unchanged). */
static bool resize_claimed_locked(tk_queue *q, size_t capacity, heap_spare *spare) {
    size_t size = tk_heap_core_size(&q->heap);
    size_t touch = size + size / 16 + 1;
    pthread_mutex_unlock(&q->lock);
    spare_free(q, spare);
    tk_heap_entry *block = block_alloc_touched(q, capacity, touch);
    pthread_mutex_lock(&q->lock);
    q->resizing = false;
    pthread_cond_broadcast(&q->resized);
    if (block == NULL)
        return false;
    if (!tk_heap_core_adopt(&q->heap, block, capacity, &spare->block, &spare->capacity)) {
        spare->block = block; /* no longer wanted: the size moved meanwhile */
        spare->capacity = capacity;
    }
    return true;
}

/* The capacity to resize to if a resize is due and nobody has claimed one;
 * 0 otherwise. Caller holds the lock. */
static size_t resize_due_locked(tk_queue *q) {
    if (q->resizing)
        return 0;
    size_t want = tk_heap_core_wanted_capacity(&q->heap);
    return want != tk_heap_core_capacity(&q->heap) ? want : 0;
}

/* Ends an operation: does any resize that is due (a few steps at most, the
 * lock dropped around each allocation), unlocks, and frees what the heap
 * left. Caller holds the lock; `spare` holds what it has to free, if any. */
static void unlock_after_op(tk_queue *q, heap_spare *spare) {
    size_t capacity;
    for (int step = 0; step < 4 && (capacity = resize_due_locked(q)) != 0; step++) {
        q->resizing = true;
        if (!resize_claimed_locked(q, capacity, spare))
            break; /* out of memory: a later operation tries again */
    }
    pthread_mutex_unlock(&q->lock);
    spare_free(q, spare);
}

/* After a node left the heap (caller holds the lock): a closed queue that
 * just became empty must release every blocked taker with TK_ECLOSED. */
static void wake_if_closed_and_empty_locked(tk_queue *q) {
    if (q->closed != HEAP_OPEN && tk_heap_core_size(&q->heap) == 0)
        pthread_cond_broadcast(&q->available);
}

/* Waits on `available` until woken or until `deadline_ns` (INT64_MAX: no
 * deadline). Caller holds the lock. Spurious wake-ups are the caller's loop's
 * problem. */
static void wait_locked(tk_queue *q, int64_t deadline_ns) {
    if (deadline_ns == INT64_MAX) {
        pthread_cond_wait(&q->available, &q->lock);
    } else {
        struct timespec ts = tk__ns_to_timespec(deadline_ns);
        (void)pthread_cond_timedwait(&q->available, &q->lock, &ts);
    }
}

/* The leader's busy-wait for the last spin_ns before `deadline_ns`. Caller
 * holds the lock; it is dropped while spinning and held again on return.
 * Ends at the deadline, on a new head or on close(). */
static void spin_until_locked(tk_queue *q, int64_t deadline_ns) {
    uint64_t gen = atomic_load_explicit(&q->head_gen, memory_order_relaxed);
    pthread_mutex_unlock(&q->lock);
    while (tk_clock_now_ns() < deadline_ns &&
           atomic_load_explicit(&q->head_gen, memory_order_relaxed) == gen)
        tk__cpu_relax();
    pthread_mutex_lock(&q->lock);
}

/* Pops up to `max` due heads (due at `now`) into a list linked through
 * detached_next, cut to a fair share while others wait (see "Batches").
 * The head must be due. Caller holds the lock. */
static tk_node *pop_batch_locked(tk_queue *q, int64_t now, size_t max, size_t *count) {
    size_t limit = max;
    if (q->waiters != 0) {
        size_t ways = q->waiters + 1;
        size_t enough = max > SIZE_MAX / ways ? SIZE_MAX : max * ways;
        size_t share = tk_heap_core_count_due(&q->heap, now, enough) / ways;
        limit = share < 1 ? 1 : share < max ? share : max;
    }
    tk_node *head = NULL, **tail = &head;
    size_t k = 0;
    tk_node *n;
    while (k < limit && (n = tk_heap_core_pop_due(&q->heap, now)) != NULL) {
        *tail = n; /* overwrites the index: the node is out of the heap */
        tail = &n->tk__priv.detached_next;
        k++;
    }
    *tail = NULL;
    *count = k;
    return head;
}

/* The body of take(), poll() and take_batch(): waits until a node is due,
 * until `give_up_ns` (INT64_MAX: never) or until the queue is closed, then
 * hands out one node (count NULL: *out is the node, its private area left
 * alone) or up to `max` due ones (*out is a list linked through
 * detached_next, written here under the lock, since a concurrent remove()
 * reads the index that the link overlays; *count their number). Caller
 * holds the lock (dropped while waiting, and around a shrink of the empty
 * queue's array, whose old block is left in `spare` for the caller to free
 * after unlocking). Returns TK_OK, TK_ETIMEDOUT or TK_ECLOSED. */
static int take_locked(tk_queue *q, int64_t give_up_ns, size_t max, tk_node **out, size_t *count,
                       heap_spare *spare) {
    char me = 0; /* this thread's leader token: its address is unique while we wait */
    bool shrink_tried = false;
    bool due_left = false; /* a batch left due nodes behind */
    int rc;
    for (;;) {
        if (q->closed == TK_QUEUE_CLOSE_NOW) {
            rc = TK_ECLOSED;
            break;
        }
        tk_node *head = tk_heap_core_peek(&q->heap);
        if (head == NULL && q->closed == TK_QUEUE_CLOSE_WHEN_EMPTY) {
            rc = TK_ECLOSED;
            break;
        }
        int64_t now = tk_clock_now_ns();
        if (head != NULL && head->deadline_ns <= now) {
            if (count == NULL) {
                *out = tk_heap_core_pop(&q->heap);
            } else {
                *out = pop_batch_locked(q, now, max, count);
                head = tk_heap_core_peek(&q->heap);
                due_left = head != NULL && head->deadline_ns <= now;
            }
            wake_if_closed_and_empty_locked(q);
            rc = TK_OK;
            break;
        }
        if (now >= give_up_ns) {
            rc = TK_ETIMEDOUT;
            break;
        }
        if (head == NULL && !shrink_tried) {
            /* about to idle on an empty queue: return its memory first */
            size_t capacity = resize_due_locked(q);
            if (capacity != 0) {
                shrink_tried = true;
                q->resizing = true;
                (void)resize_claimed_locked(q, capacity, spare);
                continue; /* the lock was dropped: look again */
            }
        }
        q->waiters++;
        if (head == NULL || q->leader != NULL || give_up_ns < head->deadline_ns) {
            /* follower (or nothing queued, or we give up before the head is due) */
            wait_locked(q, give_up_ns);
        } else {
            q->leader = &me;
            int64_t due = head->deadline_ns;
            if (q->spin_ns == 0)
                wait_locked(q, due);
            else if (due - now > q->spin_ns)
                wait_locked(q, due - q->spin_ns); /* then spin the rest */
            else
                spin_until_locked(q, due);
            if (q->leader == &me)
                q->leader = NULL;
        }
        q->waiters--;
    }
    /* Leaving: hand the head over to a waiter if nobody leads, and the due
     * nodes a batch left to a waiter at once. */
    if (q->closed != TK_QUEUE_CLOSE_NOW && tk_heap_core_size(&q->heap) > 0 &&
        (q->leader == NULL || (due_left && q->waiters != 0)))
        pthread_cond_signal(&q->available);
    return rc;
}

/* The heap's parameters (tk_queue_ops.params): what create() accepts, and
 * the keys of the heap's spec ("heap:capacity=4096,spin=150us"). */
static const tk_queue_param heap_params[] = {
    {.key = "capacity",
     .type = TK_PARAM_COUNT,
     .flags = 0,
     .offset = offsetof(tk_queue_config, initial_capacity),
     .size = sizeof(size_t),
     .min = 1,
     .max = (int64_t)TK_HEAP_MAX_CAPACITY,
     .help = "initial array slots; the array never shrinks below them"},
    TK__PARAM_SPIN,
};

/* Builds a heap queue: cfg->allocator, cfg->initial_capacity and
 * cfg->spin_ns are used, other fields ignored. `release` is never called and
 * may be NULL. Returns TK_OK, TK_EINVAL (out NULL, or a field outside its
 * range in heap_params: capacity above TK_HEAP_MAX_CAPACITY, spin_ns outside
 * [0, 1 s]), TK_ENOMEM (memory, or the mutex/condition could not be
 * initialised). */
static int heap_create(const tk_queue_config *cfg, tk_queue_release_fn release, void *release_ctx,
                       tk_queue **out) {
    TK__UNUSED(release);
    TK__UNUSED(release_ctx);
    if (out == NULL)
        return TK_EINVAL;
    *out = NULL;
    const tk_allocator *a =
        cfg != NULL && cfg->allocator != NULL ? cfg->allocator : tk_allocator_default();
    if (tk__queue_config_check(tk_engine_heap(), cfg, NULL, 0) != TK_OK)
        return TK_EINVAL;
    size_t cap = cfg != NULL ? cfg->initial_capacity : 0;
    int64_t spin = cfg != NULL ? cfg->spin_ns : 0;
    tk_queue *q = tk__alloc(a, sizeof(*q));
    if (q == NULL)
        return TK_ENOMEM;
    memset(q, 0, sizeof(*q));
    q->allocator = a;
    q->closed = HEAP_OPEN;
    q->leader = NULL;
    q->resizing = false;
    q->spin_ns = spin;
    atomic_init(&q->head_gen, 0);
    int rc = tk_heap_core_init(&q->heap, a, cap);
    if (rc != TK_OK)
        goto fail_heap;
    tk_heap_core_set_auto_resize(&q->heap, false); /* we resize, outside the lock */
    if (pthread_mutex_init(&q->lock, NULL) != 0) {
        rc = TK_ENOMEM;
        goto fail_mutex;
    }
    if (tk__cond_init_monotonic(&q->available) != 0) {
        rc = TK_ENOMEM;
        goto fail_cond;
    }
    if (pthread_cond_init(&q->resized, NULL) != 0) {
        rc = TK_ENOMEM;
        goto fail_resized;
    }
    *out = q;
    return TK_OK;

fail_resized:
    pthread_cond_destroy(&q->available);
fail_cond:
    pthread_mutex_destroy(&q->lock);
fail_mutex:
fail_heap:
    tk_heap_core_destroy(&q->heap);
    tk__free(a, q, sizeof(*q));
    return rc;
}

/* Frees the queue. No thread may be inside another op. Queued nodes are not
 * touched. NULL is a no-op. */
static void heap_destroy(tk_queue *q) {
    if (q == NULL)
        return;
    tk_heap_core_destroy(&q->heap);
    pthread_cond_destroy(&q->resized);
    pthread_cond_destroy(&q->available);
    pthread_mutex_destroy(&q->lock);
    tk__free(q->allocator, q, sizeof(*q));
}

/* Inserts `n`, first growing a full array (outside the lock, see the top of
 * the file). Returns TK_OK (queued), TK_ECLOSED (closed NOW; the caller
 * keeps n), TK_ENOMEM (the array was full and could not grow; the caller
 * keeps n) or TK_EINVAL (NULL, or n already queued here). Never TK_EFULL. */
static int heap_offer(tk_queue *q, tk_node *n) {
    if (q == NULL || n == NULL)
        return TK_EINVAL;
    heap_spare spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    int rc;
    for (;;) {
        if (q->closed == TK_QUEUE_CLOSE_NOW) {
            rc = TK_ECLOSED;
            break;
        }
        rc = tk_heap_core_push(&q->heap, n);
        if (rc != TK_EFULL)
            break;
        if (q->resizing) { /* someone is building a block: use theirs */
            pthread_cond_wait(&q->resized, &q->lock);
            continue;
        }
        size_t capacity = tk_heap_core_wanted_capacity(&q->heap);
        if (capacity <= tk_heap_core_capacity(&q->heap)) {
            rc = TK_ENOMEM; /* no larger array can be represented */
            break;
        }
        q->resizing = true;
        if (!resize_claimed_locked(q, capacity, &spare)) {
            rc = TK_ENOMEM;
            break;
        }
    }
    if (rc == TK_OK && tk_heap_core_peek(&q->heap) == n) {
        /* new head: whoever leads sleeps (or spins) for a later deadline */
        q->leader = NULL;
        atomic_fetch_add_explicit(&q->head_gen, 1, memory_order_relaxed);
        pthread_cond_signal(&q->available);
    }
    if (rc == TK_OK) {
        unlock_after_op(q, &spare); /* grows ahead of need when 15/16 full */
    } else {
        pthread_mutex_unlock(&q->lock);
        spare_free(q, &spare);
    }
    return rc;
}

/* Blocks until the head is due and hands it out. Returns TK_OK (*out set),
 * TK_ECLOSED (closed NOW, or closed WHEN_EMPTY and empty) or TK_EINVAL. */
static int heap_take(tk_queue *q, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    heap_spare spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, INT64_MAX, 1, out, NULL, &spare);
    pthread_mutex_unlock(&q->lock);
    spare_free(q, &spare);
    return rc;
}

/* As take(), waiting at most timeout_ns (<= 0: not at all). Returns TK_OK,
 * TK_ETIMEDOUT, TK_ECLOSED or TK_EINVAL. A closed state wins over a timeout,
 * a due node over both when open or closed WHEN_EMPTY. */
static int heap_poll(tk_queue *q, int64_t timeout_ns, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    int64_t give_up = tk_deadline_after_ns(tk_clock_now_ns(), timeout_ns);
    if (give_up == INT64_MAX)
        give_up = INT64_MAX - 1; /* INT64_MAX means "never" to take_locked */
    heap_spare spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, give_up, 1, out, NULL, &spare);
    pthread_mutex_unlock(&q->lock);
    spare_free(q, &spare);
    return rc;
}

/* Blocks as take() does, then hands out up to `max` due nodes as a list
 * linked through tk_node_next_detached(), sorted by (deadline, seq), their
 * number in *count; a fair share of the due nodes while others wait (see
 * "Batches"). Returns TK_OK, TK_ECLOSED (as take()) or TK_EINVAL (q, out or
 * count NULL, or max 0); on failure *out = NULL and *count = 0. */
static int heap_take_batch(tk_queue *q, size_t max, tk_node **out, size_t *count) {
    if (out != NULL)
        *out = NULL;
    if (count != NULL)
        *count = 0;
    if (q == NULL || out == NULL || count == NULL || max == 0)
        return TK_EINVAL;
    heap_spare spare = {NULL, 0};
    tk_node *list = NULL;
    size_t k = 0;
    pthread_mutex_lock(&q->lock);
    int rc = take_locked(q, INT64_MAX, max, &list, &k, &spare);
    pthread_mutex_unlock(&q->lock);
    spare_free(q, &spare);
    if (rc == TK_OK) {
        *out = list;
        *count = k;
    }
    return rc;
}

/* Removes `n`, due or not. Returns TK_OK (the caller owns n again) or
 * TK_ENOENT (not queued here); TK_EINVAL for a NULL queue. Never
 * TK_EINPROGRESS. */
static int heap_remove(tk_queue *q, tk_node *n) {
    if (q == NULL)
        return TK_EINVAL;
    heap_spare spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    int rc = tk_heap_core_remove(&q->heap, n);
    if (rc == TK_OK)
        wake_if_closed_and_empty_locked(q);
    unlock_after_op(q, &spare); /* shrinks after a mass cancellation */
    return rc;
}

/* Removes the smallest node, due or not. Returns TK_OK (*out set),
 * TK_ENOENT (empty) or TK_EINVAL. */
static int heap_remove_first(tk_queue *q, tk_node **out) {
    if (q == NULL || out == NULL)
        return TK_EINVAL;
    heap_spare spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    tk_node *n = tk_heap_core_pop(&q->heap);
    if (n != NULL)
        wake_if_closed_and_empty_locked(q);
    unlock_after_op(q, &spare);
    if (n == NULL)
        return TK_ENOENT;
    *out = n;
    return TK_OK;
}

/* Reads the head's key. Either pointer may be NULL. Returns TK_OK, TK_ENOENT
 * (empty) or TK_EINVAL. */
static int heap_peek(tk_queue *q, int64_t *deadline_ns, uint64_t *seq) {
    if (q == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&q->lock);
    const tk_node *n = tk_heap_core_peek(&q->heap);
    if (n != NULL) {
        if (deadline_ns != NULL)
            *deadline_ns = n->deadline_ns;
        if (seq != NULL)
            *seq = n->seq;
    }
    pthread_mutex_unlock(&q->lock);
    return n != NULL ? TK_OK : TK_ENOENT;
}

/* Returns the number of queued nodes (0 for NULL). */
static size_t heap_size(tk_queue *q) {
    if (q == NULL)
        return 0;
    pthread_mutex_lock(&q->lock);
    size_t n = tk_heap_core_size(&q->heap);
    pthread_mutex_unlock(&q->lock);
    return n;
}

/* Empties the queue into a list sorted by (deadline, seq), linked through
 * tk__priv.detached_next. Returns the list, NULL if empty. */
static tk_node *heap_drain(tk_queue *q) {
    if (q == NULL)
        return NULL;
    tk_node *head = NULL;
    tk_node **tail = &head;
    heap_spare spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    tk_node *n;
    while ((n = tk_heap_core_pop(&q->heap)) != NULL) {
        *tail = n;
        tail = &n->tk__priv.detached_next;
    }
    *tail = NULL;
    if (head != NULL)
        wake_if_closed_and_empty_locked(q);
    unlock_after_op(q, &spare);
    return head;
}

/* Removes every node that `pred` accepts (pred called once per node, with
 * the lock held) and returns them as a detached list in no particular order;
 * NULL if none (or q/pred NULL). */
static tk_node *heap_remove_if(tk_queue *q, bool (*pred)(const tk_node *n, void *ctx), void *ctx) {
    if (q == NULL || pred == NULL)
        return NULL;
    heap_spare spare = {NULL, 0};
    pthread_mutex_lock(&q->lock);
    size_t removed = 0;
    tk_node *list = tk_heap_core_remove_if(&q->heap, pred, ctx, &removed);
    if (removed > 0)
        wake_if_closed_and_empty_locked(q);
    unlock_after_op(q, &spare);
    return list;
}

/* Closes the queue (WHEN_EMPTY, then optionally NOW; never back) and wakes
 * every blocked taker. An unknown mode is ignored. */
static void heap_close(tk_queue *q, tk_queue_close_mode mode) {
    if (q == NULL || (mode != TK_QUEUE_CLOSE_WHEN_EMPTY && mode != TK_QUEUE_CLOSE_NOW))
        return;
    pthread_mutex_lock(&q->lock);
    if ((int)mode > q->closed)
        q->closed = (int)mode;
    atomic_fetch_add_explicit(&q->head_gen, 1, memory_order_relaxed); /* ends a spin */
    pthread_cond_broadcast(&q->available);
    pthread_mutex_unlock(&q->lock);
}

/* Verifies the core's invariants under the lock. Returns TK_OK or TK_ESTATE
 * (TK_EINVAL for NULL). */
static int heap_check(tk_queue *q) {
    if (q == NULL)
        return TK_EINVAL;
    pthread_mutex_lock(&q->lock);
    int rc = tk_heap_core_check(&q->heap);
    if (rc == TK_OK && q->closed != HEAP_OPEN && q->closed != TK_QUEUE_CLOSE_WHEN_EMPTY &&
        q->closed != TK_QUEUE_CLOSE_NOW)
        rc = TK_ESTATE;
    pthread_mutex_unlock(&q->lock);
    return rc;
}

static const tk_queue_ops heap_ops = {
    .name = "heap",
    .caps = TK_QUEUE_CAP_EXACT_ORDER | TK_QUEUE_CAP_BATCH_TAKE,
    .create = heap_create,
    .destroy = heap_destroy,
    .offer = heap_offer,
    .take = heap_take,
    .poll = heap_poll,
    .remove = heap_remove,
    .remove_first = heap_remove_first,
    .peek = heap_peek,
    .size = heap_size,
    .drain = heap_drain,
    .remove_if = heap_remove_if,
    .close = heap_close,
    .check = heap_check,
    .take_batch = heap_take_batch,
    .params = heap_params,
    .param_count = sizeof(heap_params) / sizeof(heap_params[0]),
};

/* Returns the heap engine's ops table (static, immutable). Never NULL. */
const tk_queue_ops *tk_engine_heap(void) {
    return &heap_ops;
}
