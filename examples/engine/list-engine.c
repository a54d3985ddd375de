/* SPDX-License-Identifier: MIT */
/* An example timer engine written outside timerkit: "example_list", a sorted
 * doubly linked list, on timerkit's generic blocking adapter.
 *
 * It shows everything an engine has to provide, and nothing more:
 *   - its own parameters: a struct of its own, described by a table
 *     (key, type, range, default) that timerkit parses, checks and formats
 *     ("example_list:grain=1ms");
 *   - a pure core (tk_core_ops): single-threaded, no locks, no clock, no
 *     allocation per node; the generic adapter (TK_BLOCKING_ADAPTER) turns it
 *     into a blocking queue the executor can use;
 *   - registration (tk_engine_register()), after which specs, the executor
 *     and timerkit's test kit find it by name.
 *
 * Structure. The nodes in one list sorted by (deadline, seq). Insert walks
 * back from the tail, so deadlines that mostly grow (the usual case: a fixed
 * timeout from now) cost O(1); a random deadline costs O(n). Remove is O(1),
 * expire O(1) per node handed out.
 *
 * The grain. Deadlines are rounded up to a grid of `grain` nanoseconds laid
 * from the origin the adapter gives init(): due(d) is the first grid instant
 * at or after d. grain=1ns (the default) makes the engine exact; a coarser
 * grain shows how a ticked core answers due() and next(). Either way a node
 * is never handed out before its deadline, and always in (deadline, seq)
 * order: the list is sorted by deadline and due() never decreases.
 *
 * A node's private area (tk_node_priv()) holds its links and a mark saying
 * it is in the list, so remove() can tell in O(1) a node it does not hold. */
#include "list-engine.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The engine's parameters, inside tk_queue_config (its `params` block). */
typedef struct list_params {
    int64_t grain_ns; /* "grain": deadlines round up to this grid */
} list_params;

/* A node's private area, as this engine sees it. The first member doubles
 * as the link of the detached lists handed back (tk_node_next_detached()). */
typedef struct list_link {
    tk_node *next;
    tk_node *prev;
    uint64_t mark; /* HELD while in the list; 0 (a zeroed area) otherwise */
} list_link;

#define HELD UINT64_C(0x6c697374)

_Static_assert(sizeof(list_link) <= TK_NODE_PRIV_SIZE, "the private area holds the links");

typedef struct list_core {
    tk_node *head, *tail;
    size_t count;
    int64_t origin_ns, grain_ns;
} list_core;

static list_link *L(tk_node *n) {
    return tk_node_priv(n);
}

static const list_link *LC(const tk_node *n) {
    return tk_node_priv_const(n);
}

static int list_init(void *core, const void *params, const tk_allocator *a, int64_t origin_ns) {
    (void)a; /* this core allocates nothing */
    const list_params *p = params;
    list_core *c = core;
    memset(c, 0, sizeof(*c));
    c->origin_ns = origin_ns;
    c->grain_ns = p->grain_ns;
    return TK_OK;
}

static void list_destroy(void *core) {
    (void)core;
}

static int list_insert(void *core, tk_node *n) {
    list_core *c = core;
    if (LC(n)->mark == HELD)
        return TK_EINVAL;
    tk_node *after = c->tail;
    while (after != NULL && tk_node_before(n, after))
        after = L(after)->prev;
    L(n)->prev = after;
    L(n)->next = after != NULL ? L(after)->next : c->head;
    if (L(n)->next != NULL)
        L(L(n)->next)->prev = n;
    else
        c->tail = n;
    if (after != NULL)
        L(after)->next = n;
    else
        c->head = n;
    L(n)->mark = HELD;
    c->count++;
    return TK_OK;
}

static void unlink_node(list_core *c, tk_node *n) {
    if (L(n)->prev != NULL)
        L(L(n)->prev)->next = L(n)->next;
    else
        c->head = L(n)->next;
    if (L(n)->next != NULL)
        L(L(n)->next)->prev = L(n)->prev;
    else
        c->tail = L(n)->prev;
    L(n)->mark = 0;
    c->count--;
}

static int list_remove(void *core, tk_node *n) {
    if (n == NULL || LC(n)->mark != HELD)
        return TK_ENOENT;
    unlink_node(core, n);
    return TK_OK;
}

static int64_t list_due(const void *core, int64_t deadline_ns) {
    const list_core *c = core;
    if (deadline_ns <= c->origin_ns)
        return c->origin_ns;
    /* the first grid instant at or after the deadline, without overflow */
    uint64_t since = (uint64_t)deadline_ns - (uint64_t)c->origin_ns;
    uint64_t g = (uint64_t)c->grain_ns;
    uint64_t steps = since / g + (since % g != 0);
    uint64_t room = (uint64_t)INT64_MAX - (uint64_t)c->origin_ns;
    if (steps > room / g)
        return INT64_MAX;
    return (int64_t)((uint64_t)c->origin_ns + steps * g);
}

static int list_next(const void *core, int64_t *when_ns) {
    const list_core *c = core;
    if (c->head == NULL)
        return TK_ENOENT;
    *when_ns = list_due(core, c->head->deadline_ns);
    return TK_OK;
}

static tk_node *list_expire(void *core, int64_t now_ns, size_t max, size_t *count) {
    list_core *c = core;
    tk_node *out = NULL, **tail = &out;
    size_t k = 0;
    while (k < max && c->head != NULL && list_due(core, c->head->deadline_ns) <= now_ns) {
        tk_node *n = c->head;
        unlink_node(c, n);
        *tail = n; /* the detached link: the first word of the private area */
        tail = &L(n)->next;
        k++;
    }
    *tail = NULL;
    *count = k;
    return out;
}

static size_t list_count(const void *core) {
    return ((const list_core *)core)->count;
}

static tk_node *list_first(const void *core) {
    return ((const list_core *)core)->head;
}

static tk_node *list_remove_if(void *core, bool (*pred)(const tk_node *n, void *ctx), void *ctx,
                               size_t *count) {
    list_core *c = core;
    tk_node *out = NULL;
    size_t k = 0;
    for (tk_node *n = c->head; n != NULL;) {
        tk_node *next = L(n)->next;
        if (pred(n, ctx)) {
            unlink_node(c, n);
            L(n)->next = out;
            out = n;
            k++;
        }
        n = next;
    }
    *count = k;
    return out;
}

static int list_check(const void *core) {
    const list_core *c = core;
    size_t k = 0;
    const tk_node *prev = NULL;
    for (const tk_node *n = c->head; n != NULL; n = LC(n)->next) {
        if (LC(n)->mark != HELD || LC(n)->prev != prev || (prev != NULL && tk_node_before(n, prev)))
            return TK_ESTATE;
        prev = n;
        if (++k > c->count)
            return TK_ESTATE;
    }
    return k == c->count && c->tail == prev ? TK_OK : TK_ESTATE;
}

static size_t list_count_due(const void *core, int64_t now_ns, size_t limit) {
    const list_core *c = core;
    size_t k = 0;
    for (const tk_node *n = c->head;
         n != NULL && k < limit && list_due(core, n->deadline_ns) <= now_ns; n = LC(n)->next)
        k++;
    return k;
}

static const tk_core_ops list_core_ops = {
    .size = sizeof(list_core),
    .init = list_init,
    .destroy = list_destroy,
    .insert = list_insert,
    .remove = list_remove,
    .due = list_due,
    .next = list_next,
    .expire = list_expire,
    .count = list_count,
    .first = list_first,
    .remove_if = list_remove_if,
    .check = list_check,
    .count_due = list_count_due,
};

static const tk_queue_param list_table[] = {
    {.key = "grain",
     .type = TK_PARAM_DURATION,
     .flags = 0,
     .offset = offsetof(list_params, grain_ns),
     .size = sizeof(int64_t),
     .min = 1,
     .max = TK_NS_PER_S,
     .def = 1,
     .help = "deadlines round up to this grid (1ns: exact)"},
    TK_BLOCKING_PARAMS,
};

const tk_queue_ops example_list_engine = {
    .name = "example_list",
    .description = "sorted doubly linked list (an example built outside timerkit)",
    .caps = TK_QUEUE_CAP_EXACT_ORDER | TK_QUEUE_CAP_O1_REMOVE | TK_BLOCKING_CAPS,
    TK_BLOCKING_ADAPTER,
    .params = list_table,
    .param_count = sizeof(list_table) / sizeof(list_table[0]),
    .params_size = sizeof(list_params),
    .core = &list_core_ops,
};
