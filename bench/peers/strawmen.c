/* SPDX-License-Identifier: MIT */
/* tkbench: textbook strawmen, written here on purpose so the figures show
 * what the engines' indexing buys.
 * - naive-heap: a binary min-heap of (deadline, seq, node) that does NOT
 *   record each node's index, so cancel finds the node by linear search
 *   (O(n)) before removing it (O(log n)).
 * - sorted-list: a doubly linked list kept sorted by (deadline, seq); insert
 *   walks from the head (O(n)), cancel unlinks (O(1)), expiry pops the head. */
#include <stdlib.h>
#include <string.h>

#include "tkbench.h"

/* ---- naive-heap ------------------------------------------------------------ */
typedef struct naive_timer {
    int64_t deadline_ns;
    uint64_t seq;
} naive_timer;

typedef struct naive_entry {
    int64_t deadline_ns;
    uint64_t seq;
    naive_timer *t;
} naive_entry;

typedef struct naive_heap {
    naive_entry *a;
    size_t size, cap;
    uint64_t seq;
} naive_heap;

static inline int nless(const naive_entry *x, const naive_entry *y) {
    return x->deadline_ns < y->deadline_ns || (x->deadline_ns == y->deadline_ns && x->seq < y->seq);
}

static void nsift_up(naive_heap *h, size_t i) {
    naive_entry e = h->a[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!nless(&e, &h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = e;
}

static void nsift_down(naive_heap *h, size_t i) {
    naive_entry e = h->a[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->size)
            break;
        if (c + 1 < h->size && nless(&h->a[c + 1], &h->a[c]))
            c++;
        if (!nless(&h->a[c], &e))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    h->a[i] = e;
}

static void npush(naive_heap *h, naive_timer *t) {
    if (h->size == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        naive_entry *na = realloc(h->a, nc * sizeof *na);
        if (na == NULL)
            abort(); /* benchmark harness only: out of memory ends the run */
        h->a = na;
        h->cap = nc;
    }
    t->seq = h->seq++;
    h->a[h->size] = (naive_entry){t->deadline_ns, t->seq, t};
    nsift_up(h, h->size++);
}

static void nremove_at(naive_heap *h, size_t i) {
    h->size--;
    if (i == h->size)
        return;
    h->a[i] = h->a[h->size];
    if (i > 0 && nless(&h->a[i], &h->a[(i - 1) / 2]))
        nsift_up(h, i);
    else
        nsift_down(h, i);
}

static void ncancel(naive_heap *h, naive_timer *t) {
    for (size_t i = 0; i < h->size; i++) /* the linear search that indexing avoids */
        if (h->a[i].t == t) {
            nremove_at(h, i);
            return;
        }
}

static int naive_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)p;
    naive_heap *h = calloc(1, sizeof *h);
    if (h == NULL)
        return -1;
    h->cap = n_hint ? n_hint : 64; /* sized for the population, as the heap core */
    h->a = malloc(h->cap * sizeof *h->a);
    if (h->a == NULL) {
        free(h);
        return -1;
    }
    memset(h->a, 0, h->cap * sizeof *h->a);
    *out = h;
    return 0;
}

static void naive_destroy(void *self) {
    naive_heap *h = self;
    free(h->a);
    free(h);
}

static void naive_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    naive_timer *t = (naive_timer *)(void *)timers;
    for (size_t i = i0; i < i1; i++) {
        t[i].deadline_ns = dl[i];
        npush(self, &t[i]);
    }
}

static void naive_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    naive_timer *t = (naive_timer *)(void *)timers;
    for (size_t k = 0; k < count; k++)
        ncancel(self, &t[idx[k]]);
}

static void naive_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl,
                        size_t count) {
    naive_timer *t = (naive_timer *)(void *)timers;
    for (size_t k = 0; k < count; k++) {
        ncancel(self, &t[idx[k]]);
        t[idx[k]].deadline_ns = dl[k];
        npush(self, &t[idx[k]]);
    }
}

static size_t naive_expire_all(void *self, int64_t until_ns) {
    naive_heap *h = self;
    size_t count = 0;
    while (h->size > 0 && h->a[0].deadline_ns <= until_ns) {
        TKB_ESCAPE(h->a[0].t);
        nremove_at(h, 0);
        count++;
    }
    return count;
}

/* Per-event ops (the core-level replay): an exact structure, due(d) = d. */
static int64_t exact_due(void *self, int64_t deadline_ns) {
    (void)self;
    return deadline_ns;
}

static int naive_start_one(void *self, char *timer, int64_t deadline_ns) {
    naive_timer *t = (naive_timer *)(void *)timer;
    t->deadline_ns = deadline_ns;
    npush(self, t);
    return 0;
}

static int naive_stop_one(void *self, char *timer) {
    naive_heap *h = self;
    size_t before = h->size;
    ncancel(h, (naive_timer *)(void *)timer);
    return h->size < before ? 0 : -1;
}

static bool naive_next_one(void *self, int64_t *when_ns) {
    naive_heap *h = self;
    if (h->size == 0)
        return false;
    *when_ns = h->a[0].deadline_ns;
    return true;
}

static size_t naive_expire_at(void *self, int64_t now_ns, void (*fired)(void *ctx, char *timer),
                              void *ctx) {
    naive_heap *h = self;
    size_t count = 0;
    while (h->size > 0 && h->a[0].deadline_ns <= now_ns) {
        naive_timer *t = h->a[0].t;
        nremove_at(h, 0);
        fired(ctx, (char *)t);
        count++;
    }
    return count;
}

const tkb_core_peer_ops tkb_core_naive_heap = {
    .timer_size = sizeof(naive_timer),
    .can_expire = true,
    .create = naive_create,
    .destroy = naive_destroy,
    .add_range = naive_add_range,
    .cancel_list = naive_cancel_list,
    .churn = naive_churn,
    .expire_all = naive_expire_all,
    .start_one = naive_start_one,
    .stop_one = naive_stop_one,
    .due_one = exact_due,
    .next_one = naive_next_one,
    .expire_at = naive_expire_at,
};

/* ---- sorted-list ----------------------------------------------------------- */
typedef struct slist_timer {
    struct slist_timer *next, *prev;
    int64_t deadline_ns;
    uint64_t seq;
} slist_timer;

typedef struct slist {
    slist_timer head; /* sentinel */
    uint64_t seq;
} slist;

static int slist_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)p;
    (void)n_hint;
    slist *l = calloc(1, sizeof *l);
    if (l == NULL)
        return -1;
    l->head.next = l->head.prev = &l->head;
    *out = l;
    return 0;
}

static void slist_destroy(void *self) {
    free(self);
}

static void slist_insert(slist *l, slist_timer *t) {
    t->seq = l->seq++;
    slist_timer *p = l->head.next;
    while (p != &l->head && (p->deadline_ns < t->deadline_ns ||
                             (p->deadline_ns == t->deadline_ns && p->seq < t->seq)))
        p = p->next;
    t->next = p;
    t->prev = p->prev;
    p->prev->next = t;
    p->prev = t;
}

static inline void slist_unlink(slist_timer *t) {
    t->prev->next = t->next;
    t->next->prev = t->prev;
}

static void slist_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    slist_timer *t = (slist_timer *)(void *)timers;
    for (size_t i = i0; i < i1; i++) {
        t[i].deadline_ns = dl[i];
        slist_insert(self, &t[i]);
    }
}

static void slist_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    (void)self;
    slist_timer *t = (slist_timer *)(void *)timers;
    for (size_t k = 0; k < count; k++)
        slist_unlink(&t[idx[k]]);
}

static void slist_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl,
                        size_t count) {
    slist_timer *t = (slist_timer *)(void *)timers;
    for (size_t k = 0; k < count; k++) {
        slist_unlink(&t[idx[k]]);
        t[idx[k]].deadline_ns = dl[k];
        slist_insert(self, &t[idx[k]]);
    }
}

static size_t slist_expire_all(void *self, int64_t until_ns) {
    slist *l = self;
    size_t count = 0;
    while (l->head.next != &l->head && l->head.next->deadline_ns <= until_ns) {
        slist_timer *t = l->head.next;
        slist_unlink(t);
        TKB_ESCAPE(t);
        count++;
    }
    return count;
}

static int slist_start_one(void *self, char *timer, int64_t deadline_ns) {
    slist_timer *t = (slist_timer *)(void *)timer;
    t->deadline_ns = deadline_ns;
    slist_insert(self, t);
    return 0;
}

static int slist_stop_one(void *self, char *timer) {
    (void)self;
    slist_unlink((slist_timer *)(void *)timer);
    return 0;
}

static bool slist_next_one(void *self, int64_t *when_ns) {
    slist *l = self;
    if (l->head.next == &l->head)
        return false;
    *when_ns = l->head.next->deadline_ns;
    return true;
}

static size_t slist_expire_at(void *self, int64_t now_ns, void (*fired)(void *ctx, char *timer),
                              void *ctx) {
    slist *l = self;
    size_t count = 0;
    while (l->head.next != &l->head && l->head.next->deadline_ns <= now_ns) {
        slist_timer *t = l->head.next;
        slist_unlink(t);
        fired(ctx, (char *)t);
        count++;
    }
    return count;
}

const tkb_core_peer_ops tkb_core_sorted_list = {
    .timer_size = sizeof(slist_timer),
    .can_expire = true,
    .create = slist_create,
    .destroy = slist_destroy,
    .add_range = slist_add_range,
    .cancel_list = slist_cancel_list,
    .churn = slist_churn,
    .expire_all = slist_expire_all,
    .start_one = slist_start_one,
    .stop_one = slist_stop_one,
    .due_one = exact_due,
    .next_one = slist_next_one,
    .expire_at = slist_expire_at,
};
