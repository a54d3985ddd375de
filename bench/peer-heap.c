/* tkbench: the heap engine's pure core as a core-level peer. */
#include <stdlib.h>

#include "heap-core.h"
#include "timerkit/status.h"
#include "tkbench.h"

typedef struct heap_peer {
    tk_heap_core h;
    uint64_t seq;
} heap_peer;

static int heap_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)p;
    heap_peer *s = calloc(1, sizeof *s);
    /* sized for the population, as a user who knows N would: the figures are
     * the data structure's, not the first touch of a growing array */
    if (s == NULL || tk_heap_core_init(&s->h, NULL, n_hint) != TK_OK) {
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void heap_destroy(void *self) {
    heap_peer *s = self;
    tk_heap_core_destroy(&s->h);
    free(s);
}

static void heap_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    heap_peer *s = self;
    tk_node *nodes = (tk_node *)(void *)timers;
    for (size_t i = i0; i < i1; i++) {
        nodes[i].deadline_ns = dl[i];
        nodes[i].seq = s->seq++;
        tk_heap_core_push(&s->h, &nodes[i]);
    }
}

static void heap_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    heap_peer *s = self;
    tk_node *nodes = (tk_node *)(void *)timers;
    for (size_t k = 0; k < count; k++)
        tk_heap_core_remove(&s->h, &nodes[idx[k]]);
}

static void heap_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl,
                       size_t count) {
    heap_peer *s = self;
    tk_node *nodes = (tk_node *)(void *)timers;
    for (size_t k = 0; k < count; k++) {
        tk_node *n = &nodes[idx[k]];
        tk_heap_core_remove(&s->h, n);
        n->deadline_ns = dl[k];
        n->seq = s->seq++;
        tk_heap_core_push(&s->h, n);
    }
}

static size_t heap_expire_all(void *self, int64_t until_ns) {
    heap_peer *s = self;
    size_t count = 0;
    tk_node *n;
    while ((n = tk_heap_core_pop_due(&s->h, until_ns)) != NULL) {
        TKB_ESCAPE(n);
        count++;
    }
    return count;
}

const tkb_core_ops tkb_core_heap = {
    .timer_size = sizeof(tk_node),
    .can_expire = true,
    .create = heap_create,
    .destroy = heap_destroy,
    .add_range = heap_add_range,
    .cancel_list = heap_cancel_list,
    .churn = heap_churn,
    .expire_all = heap_expire_all,
};
