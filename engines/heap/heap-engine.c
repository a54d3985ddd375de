/* SPDX-License-Identifier: MIT */
/* timerkit: the heap engine (tk_engine_heap()): the indexed d-ary heap of
 * heap-core.c as a pure core (tk_core_ops) on the generic blocking adapter
 * (adapter/blocking.c).
 *
 * This is the JDK's DelayedWorkQueue: the adapter's leader-follower wait is
 * its, and the heap, each node knowing its slot, is its heap with the key
 * copied beside the pointer. The core is exact: due(d) = d, so a node leaves
 * as soon as the clock reads its deadline (plus the adapter's wake-up
 * latency; spin_ns trims that). The core offers owner-driven resizing
 * (tk_core_resize_ops), so the adapter grows and shrinks the array with its
 * lock dropped (heap-core.h, "Resizing"). Costs: insert O(log n), expected
 * O(1) for random keys; remove and expire O(d log_d n) per node; next and
 * first O(1); count_due O(d) per node counted; latest (the smallest
 * deadline + slack, so that the adapter wakes once for every node whose
 * window holds that instant) about O(d) per node it will hand out. */
#include <stddef.h>
#include <stdint.h>

#include "common-internal.h"
#include "heap-core.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"

/* The heap's own parameters (tk_queue_config.params). */
typedef struct heap_params {
    size_t initial_capacity; /* array slots to start with; it never shrinks below them */
} heap_params;

static const tk_queue_param heap_table[] = {
    {.key = "capacity",
     .type = TK_PARAM_COUNT,
     .flags = 0,
     .offset = offsetof(heap_params, initial_capacity),
     .size = sizeof(size_t),
     .min = 1,
     .max = (int64_t)(TK__HEAP_MAX_CAPACITY > (size_t)INT64_MAX ? (size_t)INT64_MAX
                                                                : TK__HEAP_MAX_CAPACITY),
     .def = (int64_t)TK__HEAP_DEFAULT_CAPACITY,
     .help = "initial array slots; the array never shrinks below them"},
    TK_BLOCKING_PARAMS,
};

/* ---- the core --------------------------------------------------------------- */

static int core_init(void *core, const void *params, const tk_allocator *a, int64_t origin_ns) {
    TK__UNUSED(origin_ns); /* exact: no grid */
    const heap_params *p = params;
    int rc = tk__heap_core_init(core, a, p->initial_capacity);
    if (rc != TK_OK)
        tk__heap_core_destroy(core);
    return rc;
}

static void core_destroy(void *core) {
    tk__heap_core_destroy(core);
}

static int core_insert(void *core, tk_node *n) {
    return tk__heap_core_push(core, n);
}

static int core_remove(void *core, tk_node *n) {
    return tk__heap_core_remove(core, n) == TK_OK ? TK_OK : TK_ENOENT;
}

static int64_t core_due(const void *core, int64_t deadline_ns) {
    TK__UNUSED(core);
    return deadline_ns;
}

static int core_next(const void *core, int64_t *when_ns) {
    const tk_node *n = tk__heap_core_peek(core);
    if (n == NULL)
        return TK_ENOENT;
    *when_ns = n->deadline_ns;
    return TK_OK;
}

static int core_latest(const void *core, int64_t *when_ns) {
    return tk__heap_core_latest(core, when_ns);
}

static tk_node *core_expire(void *core, int64_t now_ns, size_t max, size_t *count) {
    tk_node *head = NULL, **tail = &head;
    size_t k = 0;
    tk_node *n;
    while (k < max && (n = tk__heap_core_pop_due(core, now_ns)) != NULL) {
        *tail = n; /* overwrites the index: the node is out of the heap */
        tail = &n->tk__priv.detached_next;
        k++;
    }
    *tail = NULL;
    *count = k;
    return head;
}

static size_t core_count(const void *core) {
    return tk__heap_core_size(core);
}

static tk_node *core_first(const void *core) {
    return tk__heap_core_peek(core);
}

static tk_node *core_remove_if(void *core, bool (*pred)(const tk_node *n, void *ctx), void *ctx,
                               size_t *count) {
    return tk__heap_core_remove_if(core, pred, ctx, count);
}

static int core_check(const void *core) {
    return tk__heap_core_check(core);
}

static size_t core_count_due(const void *core, int64_t now_ns, size_t limit) {
    return tk__heap_core_count_due(core, now_ns, limit);
}

/* ---- owner-driven resizing -------------------------------------------------- */

static void resize_manual(void *core) {
    tk__heap_core_set_auto_resize(core, false);
}

static size_t resize_capacity(const void *core) {
    return tk__heap_core_capacity(core);
}

static size_t resize_wanted(const void *core) {
    return tk__heap_core_wanted_capacity(core);
}

static void *resize_alloc(const void *core, size_t capacity) {
    return tk__heap_core_alloc_block(core, capacity);
}

static bool resize_adopt(void *core, void *block, size_t capacity, void **old_block,
                         size_t *old_capacity) {
    tk__heap_entry *old = NULL;
    bool moved = tk__heap_core_adopt(core, block, capacity, &old, old_capacity);
    if (moved)
        *old_block = old;
    return moved;
}

static void resize_free(const void *core, void *block, size_t capacity) {
    tk__heap_core_free_block(core, block, capacity);
}

static const tk_core_resize_ops heap_resize = {
    .manual = resize_manual,
    .capacity = resize_capacity,
    .wanted = resize_wanted,
    .entry_size = sizeof(tk__heap_entry),
    .alloc_block = resize_alloc,
    .adopt = resize_adopt,
    .free_block = resize_free,
};

static const tk_core_ops heap_core = {
    .size = sizeof(tk__heap_core),
    .init = core_init,
    .destroy = core_destroy,
    .insert = core_insert,
    .remove = core_remove,
    .due = core_due,
    .next = core_next,
    .expire = core_expire,
    .count = core_count,
    .first = core_first,
    .remove_if = core_remove_if,
    .check = core_check,
    .count_due = core_count_due,
    .resize = &heap_resize,
    .latest = core_latest,
};

static const tk_queue_ops heap_ops = {
    .name = "heap",
    .description = "indexed 4-ary heap (the JDK's DelayedWorkQueue)",
    .caps = TK_QUEUE_CAP_EXACT_ORDER | TK_QUEUE_CAP_SLACK | TK_BLOCKING_CAPS,
    TK_BLOCKING_ADAPTER,
    .params = heap_table,
    .param_count = sizeof(heap_table) / sizeof(heap_table[0]),
    .params_size = sizeof(heap_params),
    .core = &heap_core,
};

/* Returns the heap engine's ops table (static, immutable). Never NULL. */
const tk_queue_ops *tk_engine_heap(void) {
    return &heap_ops;
}
