/* SPDX-License-Identifier: MIT */
/* timerkit executor: task objects, from slabs kept per shard.
 *
 * Each shard of the executor (tk__shard) has a pool of slabs (tk__pool)
 * under a spin lock of its own: a thread allocates from the pool of its own
 * shard, so threads of different shards meet in no lock. A task goes back
 * to the pool it came from, which its page names (tk__page_of()): the slab,
 * and through it the pool. Who frees where:
 * - a pool thread of the executor keeps what it frees during a batch of
 *   runs on its own list (tk__worker.freed) and returns it after the batch,
 *   one hold of each pool's lock per run of tasks from that pool
 *   (tk__worker_flush_frees);
 * - any other thread takes the pool's lock if it is free, and otherwise
 *   pushes the object onto the pool's remote stack, a lock-free stack that
 *   the next holder of the lock empties whole;
 * - once the executor is destroyed nobody else will come to empty a remote
 *   stack, so a thread that pushed onto one then takes the lock and empties
 *   it itself. The four operations on a remote stack and slab_closed are
 *   sequentially consistent, so a push that lands after destroy's final
 *   drain of that pool sees slab_closed.
 * Slabs, pages and the lifetime of the executor struct are described
 * beside struct tk__slab (executor-internal.h). */
#define _GNU_SOURCE
#include <string.h>

#include "executor-internal.h"

/* Each class's object size, and how many fit in a page after its header. */
static const size_t class_size[TK__CLASSES] = {TK__TASK_SIZE, TK__TASK_BIG_SIZE};
#define PAGE_OBJS(size) ((uint32_t)((TK__PAGE_BYTES - sizeof(tk__page)) / (size)))
static const uint32_t class_page_objs[TK__CLASSES] = {PAGE_OBJS(TK__TASK_SIZE),
                                                      PAGE_OBJS(TK__TASK_BIG_SIZE)};
_Static_assert(sizeof(tk__page) % 16 == 0, "objects after a page header stay 16-byte aligned");

static inline void *free_link(const void *obj) {
    void *next;
    memcpy(&next, obj, sizeof(next));
    return next;
}

static inline void set_free_link(void *obj, void *next) {
    memcpy(obj, &next, sizeof(next));
}

/* ---- slabs --------------------------------------------------------------- */

static void slab_release(tk_executor *ex, tk__slab *s) {
    tk__free(&ex->alloc, s->mem, TK__SLAB_BYTES);
    tk__executor_live_release(ex);
}

/* Releases the slabs of a `gone` list. No lock held. */
static void release_gone(tk_executor *ex, tk__slab *gone) {
    while (gone != NULL) {
        tk__slab *next = gone->next;
        slab_release(ex, gone);
        gone = next;
    }
}

/* Partial list operations (pool lock). */
static void partial_unlink(tk__pool *p, tk__slab *s) {
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        p->partial[s->cls] = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->on_partial = false;
}

static void partial_push_front(tk__pool *p, tk__slab *s) {
    s->prev = NULL;
    s->next = p->partial[s->cls];
    if (s->next != NULL)
        s->next->prev = s;
    p->partial[s->cls] = s;
    s->on_partial = true;
}

/* Starts s over: every object never handed out, from the first. */
static void slab_restart(tk__slab *s) {
    s->free = NULL;
    s->fresh = s->pages + sizeof(tk__page);
    s->page_left = class_page_objs[s->cls];
}

/* A fresh slab of class cls for pool p, not yet on any list. No lock held.
 * Only the slab's header and the page headers are written: the pages'
 * objects are touched when handed out, and the allocation's slack before
 * the first page boundary and after the last page never is. */
static tk__slab *slab_new(tk__pool *p, unsigned cls) {
    tk_executor *ex = p->ex;
    char *mem = tk__alloc(&ex->alloc, TK__SLAB_BYTES);
    if (mem == NULL)
        return NULL;
    uintptr_t pages =
        ((uintptr_t)mem + sizeof(tk__slab) + TK__PAGE_BYTES - 1) & ~(uintptr_t)(TK__PAGE_BYTES - 1);
    tk__slab *s = (tk__slab *)mem;
    memset(s, 0, sizeof(*s));
    s->pool = p;
    s->mem = mem;
    s->pages = (char *)pages;
    s->cls = (uint8_t)cls;
    slab_restart(s);
    for (size_t i = 0; i < TK__SLAB_PAGES; i++) {
        tk__page *pg = (tk__page *)(void *)(s->pages + i * TK__PAGE_BYTES);
        pg->slab = s;
        pg->ex = ex;
    }
    atomic_fetch_add_explicit(&ex->live, 1, memory_order_relaxed);
    return s;
}

/* Takes one object from s (which has room). Pool lock held. */
static void *slab_take_locked(tk__pool *p, tk__slab *s) {
    void *obj = s->free;
    if (obj != NULL) {
        s->free = free_link(obj);
        if (s->free != NULL)
            __builtin_prefetch(s->free, 1);
    } else {
        obj = s->fresh;
        s->fresh += class_size[s->cls];
        if (--s->page_left == 0) { /* on to the next page, if any */
            size_t page = (size_t)((char *)obj - s->pages) / TK__PAGE_BYTES + 1;
            s->fresh =
                page < TK__SLAB_PAGES ? s->pages + page * TK__PAGE_BYTES + sizeof(tk__page) : NULL;
            s->page_left = class_page_objs[s->cls];
        }
    }
    s->used++;
    if (s->free == NULL && s->fresh == NULL)
        partial_unlink(p, s); /* full */
    return obj;
}

/* Returns t to its slab; an emptied slab becomes its class's spare or is
 * added to *gone (linked through next) for the caller to release after
 * unlocking. Lock of t's pool held. */
static void free_to_slab_locked(tk__pool *p, tk__task *t, tk__slab **gone) {
    tk__slab *s = tk__page_of(t)->slab;
    set_free_link(t, s->free);
    s->free = t;
    if (--s->used == 0) {
        /* Empty: keep it as the spare (restarted, so it is handed out in
         * address order again) or give it back. */
        if (s->on_partial)
            partial_unlink(p, s);
        if (!atomic_load_explicit(&p->ex->slab_closed, memory_order_relaxed) &&
            p->spare[s->cls] == NULL) {
            slab_restart(s);
            p->spare[s->cls] = s;
        } else {
            s->next = *gone;
            *gone = s;
        }
    } else if (!s->on_partial) {
        partial_push_front(p, s); /* it was full: it has room again */
    }
}

/* Empties p's remote-free stack into its slabs. Pool lock held. Unless
 * `always`, a plain load first: the stack is almost always empty, and an
 * exchange would cost a locked instruction on every allocation and free.
 * destroy() passes `always`: its exchange must be ordered after its store
 * of slab_closed (see the opening comment). */
static void remote_drain_locked(tk__pool *p, tk__slab **gone, bool always) {
    if (!always && atomic_load_explicit(&p->remote, memory_order_relaxed) == NULL)
        return;
    tk__task *t = atomic_exchange(&p->remote, NULL);
    while (t != NULL) {
        tk__task *next = free_link(t);
        free_to_slab_locked(p, t, gone);
        t = next;
    }
}

/* ---- allocation ------------------------------------------------------------- */

tk__task *tk__task_alloc(tk_executor *ex, bool big) {
    unsigned cls = big ? TK__CLASS_BIG : TK__CLASS_SMALL;
    tk__pool *p = &tk__shard_here(ex)->pool;
    tk__slab *fresh = NULL;
    tk__slab *s;
    tk__spin_lock(&p->lock);
    for (;;) {
        s = p->partial[cls];
        if (s == NULL && p->spare[cls] != NULL) {
            s = p->spare[cls];
            p->spare[cls] = NULL;
            partial_push_front(p, s);
        }
        if (s == NULL && fresh != NULL) {
            s = fresh;
            fresh = NULL;
            partial_push_front(p, s);
        }
        if (s != NULL)
            break;
        /* No room anywhere: get a slab without holding the lock. */
        tk__spin_unlock(&p->lock);
        fresh = slab_new(p, cls);
        if (fresh == NULL)
            return NULL;
        tk__spin_lock(&p->lock);
    }
    void *obj = slab_take_locked(p, s);
    tk__slab *gone = NULL;
    remote_drain_locked(p, &gone, false); /* after the take: s stays in use */
    tk__spin_unlock(&p->lock);
    release_gone(ex, gone);
    if (fresh != NULL) /* another thread made room meanwhile */
        slab_release(ex, fresh);
    tk__task *t = obj;
    /* all atomics start at 0 / PENDING / false (constant sizes: inlined) */
    if (big) {
        memset(t, 0, TK__TASK_BIG_SIZE);
        t->bits = TK__TASK_BIG;
    } else {
        memset(t, 0, TK__TASK_SIZE);
    }
    return t;
}

/* ---- freeing ------------------------------------------------------------------ */

void tk__task_free(tk__task *t) {
    tk__slab *s = tk__page_of(t)->slab;
    tk__pool *p = s->pool;
    tk_executor *ex = p->ex;
    tk__worker *w = tk__own_worker(ex);
    if (w != NULL) {
        /* a worker of t's executor: returned with the rest of its batch */
        set_free_link(t, w->freed);
        w->freed = t;
        return;
    }
    if (!tk__spin_trylock(&p->lock)) {
        tk__task *top = atomic_load(&p->remote);
        do
            set_free_link(t, top);
        while (!atomic_compare_exchange_weak(&p->remote, &top, t));
        if (!atomic_load(&ex->slab_closed))
            return;
        tk__spin_lock(&p->lock);
        t = NULL; /* it is on the stack now */
    }
    tk__slab *gone = NULL;
    remote_drain_locked(p, &gone, t == NULL); /* t NULL: closed, see above */
    if (t != NULL)
        free_to_slab_locked(p, t, &gone);
    tk__spin_unlock(&p->lock);
    release_gone(ex, gone);
}

void tk__worker_flush_frees(tk__worker *w) {
    tk__task *t = w->freed;
    if (t == NULL)
        return;
    w->freed = NULL;
    tk_executor *ex = w->ex;
    tk__slab *gone = NULL;
    tk__pool *held = NULL;
    while (t != NULL) {
        tk__task *next = free_link(t);
        tk__pool *p = tk__page_of(t)->slab->pool;
        if (p != held) { /* a run of tasks from another pool */
            if (held != NULL)
                tk__spin_unlock(&held->lock);
            held = p;
            tk__spin_lock(&p->lock);
            remote_drain_locked(p, &gone, false);
        }
        free_to_slab_locked(p, t, &gone);
        t = next;
    }
    tk__spin_unlock(&held->lock);
    release_gone(ex, gone);
}

/* ---- the executor's end ----------------------------------------------------------- */

void tk__slabs_drain(tk_executor *ex) {
    /* Marks the executor destroyed, so an emptied slab is freed from now on
     * instead of kept; slabs still holding objects are freed with their last
     * object. */
    atomic_store(&ex->slab_closed, true); /* before the drains: see tk__task_free */
    for (unsigned i = 0; i <= ex->shard_mask; i++) {
        tk__pool *p = &ex->shards[i].pool;
        tk__slab *gone = NULL;
        tk__spin_lock(&p->lock);
        remote_drain_locked(p, &gone, true);
        for (unsigned c = 0; c < TK__CLASSES; c++) {
            tk__slab *spare = p->spare[c];
            p->spare[c] = NULL;
            if (spare != NULL) {
                spare->next = gone;
                gone = spare;
            }
        }
        tk__spin_unlock(&p->lock);
        release_gone(ex, gone);
    }
}

void tk__executor_live_release(tk_executor *ex) {
    if (atomic_fetch_sub_explicit(&ex->live, 1, memory_order_acq_rel) != 1)
        return;
    /* destroy() has run and every slab is gone: free the struct. */
    pthread_mutex_destroy(&ex->pool_lock);
    pthread_cond_destroy(&ex->term_cond);
    tk_allocator a = ex->alloc;
    tk__free(&a, ex->mem, ex->mem_bytes);
}
