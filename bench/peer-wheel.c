/* tkbench: the wheel engine's pure core as a core-level peer, with the tick
 * and wheel size of the peer's spec. */
#include <stdlib.h>

#include "timerkit/status.h"
#include "tkbench.h"
#include "wheel-core.h"

typedef struct wheel_peer {
    tk_wheel_core w;
    uint64_t seq;
} wheel_peer;

static int wheel_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)n_hint;
    wheel_peer *s = calloc(1, sizeof *s);
    int64_t tick = 0, slots = 0;
    if (s == NULL || tk_queue_config_get_value(&p->qc, "tick", &tick) != TK_OK ||
        tk_queue_config_get_value(&p->qc, "slots", &slots) != TK_OK ||
        tk_wheel_core_init(&s->w, NULL, tick, (uint32_t)slots, 0) != TK_OK) {
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void wheel_destroy(void *self) {
    wheel_peer *s = self;
    tk_wheel_core_destroy(&s->w);
    free(s);
}

static void wheel_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    wheel_peer *s = self;
    tk_node *nodes = (tk_node *)(void *)timers;
    for (size_t i = i0; i < i1; i++) {
        nodes[i].deadline_ns = dl[i];
        nodes[i].seq = s->seq++;
        tk_wheel_core_add(&s->w, &nodes[i]);
    }
}

static void wheel_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    wheel_peer *s = self;
    tk_node *nodes = (tk_node *)(void *)timers;
    for (size_t k = 0; k < count; k++)
        tk_wheel_core_remove(&s->w, &nodes[idx[k]]);
}

static void wheel_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl,
                        size_t count) {
    wheel_peer *s = self;
    tk_node *nodes = (tk_node *)(void *)timers;
    for (size_t k = 0; k < count; k++) {
        tk_node *n = &nodes[idx[k]];
        tk_wheel_core_remove(&s->w, n);
        n->deadline_ns = dl[k];
        n->seq = s->seq++;
        tk_wheel_core_add(&s->w, n);
    }
}

static size_t wheel_expire_all(void *self, int64_t until_ns) {
    wheel_peer *s = self;
    /* the first tick whose time is >= until_ns: everything due by then expires */
    uint64_t tick = (uint64_t)((until_ns + s->w.tick_ns - 1) / s->w.tick_ns);
    size_t count = 0;
    tk_node *list = tk_wheel_core_advance_to(&s->w, tick, &count);
    TKB_ESCAPE(list);
    return count;
}

const tkb_core_ops tkb_core_wheel = {
    .timer_size = sizeof(tk_node),
    .can_expire = true,
    .create = wheel_create,
    .destroy = wheel_destroy,
    .add_range = wheel_add_range,
    .cancel_list = wheel_cancel_list,
    .churn = wheel_churn,
    .expire_all = wheel_expire_all,
};
