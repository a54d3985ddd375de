/* SPDX-License-Identifier: MIT */
/* timerkit queue-contract suite: tk_queue_contract_main(), the per-engine
 * fixture and the helpers every case uses.
 *
 * The suite runs through the kit's shared runner (tests/kit/suite-runner.h,
 * which describes the command line): one cmocka test per (engine, case),
 * named "ENGINE: behaviour"; its groups are QC_GROUPS of queue-contract.h.
 * main() lives in another file, so that a program for an engine written
 * outside this repository can register its engine (tk_engine_register())
 * and then call tk_queue_contract_main().
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue-contract.h"

/* ---- the fixture ------------------------------------------------------------------- */

/* Everything the suite knows of an engine, read from its table. */
static void fixture_for(const tk_queue_ops *ops, void *engine) {
    qc_engine *e = engine;
    memset(e, 0, sizeof(*e));
    e->ops = ops;
    e->exact = (ops->caps & TK_QUEUE_CAP_EXACT_ORDER) != 0;
    e->bounded = (ops->caps & TK_QUEUE_CAP_BOUNDED) != 0;
    e->deferred = (ops->caps & TK_QUEUE_CAP_DEFERRED_RELEASE) != 0;
    e->batch = ops->take_batch != NULL;
    e->slack = (ops->caps & TK_QUEUE_CAP_SLACK) != 0;
    e->ticked = (ops->caps & TK_QUEUE_CAP_TICKED) != 0;
    for (size_t i = 0; i < ops->param_count; i++)
        if (ops->params[i].key != NULL && strcmp(ops->params[i].key, "spin") == 0)
            e->spin = true;
}

static bool needs_met(const qc_engine *e, unsigned needs) {
    return !((needs & QC_NEEDS_BATCH) && !e->batch) &&
           !((needs & QC_NEEDS_BOUNDED) && !e->bounded) && !((needs & QC_NEEDS_SPIN) && !e->spin) &&
           !((needs & QC_NEEDS_DEFERRED) && !e->deferred) &&
           !((needs & QC_NEEDS_IMMEDIATE) && e->deferred) &&
           !((needs & QC_NEEDS_EXACT) && !e->exact) && !((needs & QC_NEEDS_SLACK) && !e->slack);
}

/* ---- memory -------------------------------------------------------------------------- */

void *qc_alloc(qc *t, size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    assert_non_null(p);
    if (t->nmemory == t->capmemory) {
        size_t cap = t->capmemory ? t->capmemory * 2 : 16;
        void **m = realloc(t->memory, cap * sizeof(*m));
        if (m == NULL)
            free(p);
        assert_non_null(m);
        t->memory = m;
        t->capmemory = cap;
    }
    t->memory[t->nmemory++] = p;
    return p;
}

/* ---- nodes ----------------------------------------------------------------------------- */

qc_node *qc_nodes(qc *t, size_t n) {
    qc_node *v = qc_alloc(t, n, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        v[i].idx = i;
        v[i].node.seq = (uint64_t)i;
    }
    return v;
}

void qc_key(qc_node *n, int64_t deadline_ns, uint64_t seq) {
    n->node.deadline_ns = deadline_ns;
    n->node.seq = seq;
}

void qc_offer(qc *t, tk_queue *q, qc_node *n) {
    assert_int_equal(t->ops->offer(q, &n->node), TK_OK);
}

void qc_offer_due_in(qc *t, tk_queue *q, qc_node *n, int64_t ms) {
    qc_key(n, tk_clock_now_ns() + qc_lead(ms), 0);
    qc_offer(t, q, n);
}

bool qc_before(const tk_node *a, const tk_node *b) {
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

size_t qc_list_len(const tk_node *l, bool *sorted) {
    size_t k = 0;
    for (const tk_node *prev = NULL; l != NULL; prev = l, l = tk_node_next_detached(l)) {
        if (sorted != NULL && prev != NULL && !qc_before(prev, l))
            *sorted = false;
        k++;
    }
    return k;
}

size_t qc_list_take(tk_node *l) {
    size_t k = 0;
    while (l != NULL) {
        tk_node *next = tk_node_next_detached(l); /* read before anything may reuse it */
        atomic_fetch_add(&QC_NODE(l)->taken, 1);
        l = next;
        k++;
    }
    return k;
}

/* ---- queues ------------------------------------------------------------------------------ */

static void on_release(void *ctx, tk_node *n) {
    qc_slot *s = ctx;
    atomic_fetch_add(&QC_NODE(n)->released, 1);
    atomic_fetch_add(&s->released, 1);
}

void qc_config(qc *t, tk_queue_config *cfg) {
    assert_int_equal(tk_queue_config_init_for(cfg, t->ops), TK_OK);
}

static qc_slot *new_slot(qc *t) {
    assert_true(t->nqueues < QC_MAX_QUEUES);
    qc_slot *s = &t->queues[t->nqueues++];
    s->t = t;
    s->q = NULL;
    s->id = NULL;
    atomic_init(&s->released, 0);
    return s;
}

/* The latest slot created as q (an address may be reused after a destroy). */
static qc_slot *slot_of(qc *t, tk_queue *q) {
    for (size_t i = t->nqueues; q != NULL && i-- > 0;)
        if (t->queues[i].id == q)
            return &t->queues[i];
    fail_msg("not a queue of this test");
    return NULL;
}

tk_queue *qc_queue(qc *t, const tk_queue_config *cfg) {
    tk_queue_config def;
    if (cfg == NULL) {
        qc_config(t, &def);
        cfg = &def;
    }
    tk_queue *q = NULL;
    assert_int_equal(qc_create(t, cfg, true, &q), TK_OK);
    return q;
}

int qc_create(qc *t, const tk_queue_config *cfg, bool release, tk_queue **out) {
    qc_slot *s = new_slot(t);
    tk_queue *q = NULL;
    int rc = t->ops->create(t->ops, cfg, release ? on_release : NULL, release ? s : NULL, &q);
    if (rc == TK_OK) {
        assert_non_null(q);
        s->q = s->id = q;
    } else {
        assert_null(q);
    }
    *out = q;
    return rc;
}

long qc_released(qc *t, tk_queue *q) {
    return atomic_load(&slot_of(t, q)->released);
}

long qc_destroy(qc *t, tk_queue *q) {
    qc_slot *s = slot_of(t, q);
    assert_ptr_equal(s->q, q); /* not destroyed yet */
    t->ops->destroy(q);
    s->q = NULL;
    return atomic_load(&s->released);
}

int qc_remove_queued(qc *t, tk_queue *q, qc_node *n) {
    int rc = t->ops->remove(q, &n->node);
    if (t->eng->deferred && rc == TK_EINPROGRESS)
        return rc;
    assert_int_equal(rc, TK_OK);
    atomic_fetch_add(&n->removed, 1);
    return rc;
}

/* ---- threads ----------------------------------------------------------------------------------
 */

size_t qc_thread(qc *t, void *(*fn)(void *), void *arg) {
    assert_true(t->nthreads < QC_MAX_THREADS);
    size_t h = t->nthreads;
    assert_int_equal(pthread_create(&t->threads[h], NULL, fn, arg), 0);
    t->joined[h] = false;
    t->nthreads++;
    return h;
}

void qc_join(qc *t, size_t handle) {
    assert_true(handle < t->nthreads && !t->joined[handle]);
    t->joined[handle] = true;
    assert_int_equal(pthread_join(t->threads[handle], NULL), 0);
}

static void *taker_main(void *arg) {
    qc_taker *k = arg;
    atomic_store(&k->started, 1);
    tk_node *got = NULL;
    size_t count = 0;
    int rc;
    if (k->how == QC_TAKE) {
        rc = k->ops->take(k->q, &got);
        count = rc == TK_OK;
    } else if (k->how == QC_POLL) {
        rc = k->ops->poll(k->q, k->timeout_ns, &got);
        count = rc == TK_OK;
    } else {
        rc = k->ops->take_batch(k->q, k->max, &got, &count);
    }
    k->returned_ns = tk_clock_now_ns();
    k->rc = rc;
    k->got = got;
    k->count = count;
    atomic_store(&k->done, 1); /* publishes the fields above */
    return NULL;
}

qc_taker *qc_taker_start(qc *t, tk_queue *q, qc_how how, int64_t arg) {
    qc_taker *k = qc_alloc(t, 1, sizeof(*k));
    k->ops = t->ops;
    k->q = q;
    k->how = how;
    k->timeout_ns = arg;
    k->max = arg > 0 ? (size_t)arg : 1;
    k->handle = qc_thread(t, taker_main, k);
    int64_t end = tk_clock_now_ns() + QC_WAIT;
    while (!atomic_load(&k->started) && tk_clock_now_ns() < end)
        qc_sleep_ns(100 * TK_NS_PER_US);
    assert_true(atomic_load(&k->started));
    return k;
}

void qc_taker_join(qc *t, qc_taker *k) {
    qc_taker *one[1] = {k};
    if (!qc_wait_takers(one, 1, 1, QC_WAIT)) /* the teardown's close(NOW) releases it */
        fail_msg("a taker is still blocked after %lld ms", (long long)(QC_WAIT / TK_NS_PER_MS));
    qc_join(t, k->handle);
}

int qc_takers_done(qc_taker *const *k, int n) {
    int d = 0;
    for (int i = 0; i < n; i++)
        d += atomic_load(&k[i]->done);
    return d;
}

bool qc_wait_takers(qc_taker *const *k, int n, int want, int64_t timeout_ns) {
    int64_t end = tk_clock_now_ns() + timeout_ns;
    while (qc_takers_done(k, n) < want) {
        if (tk_clock_now_ns() >= end)
            return false;
        qc_sleep_ns(200 * TK_NS_PER_US);
    }
    return true;
}

int64_t qc_close_releases(qc *t, tk_queue *q, tk_queue_close_mode mode, qc_taker *const *k, int n) {
    assert_int_equal(qc_takers_done(k, n), 0);
    int64_t closed = tk_clock_now_ns();
    t->ops->close(q, mode);
    bool all = qc_wait_takers(k, n, n, QC_WAIT);
    for (int i = 0; i < n; i++)
        qc_taker_join(t, k[i]);
    assert_true(all);
    for (int i = 0; i < n; i++) {
        assert_int_equal(k[i]->rc, TK_ECLOSED);
        assert_true(k[i]->returned_ns >= closed);
    }
    return closed;
}

/* ---- time and sizes ------------------------------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QC_SANITIZED 1
#endif
#endif
#ifndef QC_SANITIZED
#define QC_SANITIZED 0
#endif

bool qc_slow(void) {
    const char *vg = getenv("TK_VALGRIND");
    return QC_SANITIZED || (vg != NULL && vg[0] != '\0' && vg[0] != '0');
}

long qc_scaled(long n) {
    const char *s = getenv("TK_STRESS_SCALE");
    double v = s != NULL ? strtod(s, NULL) : 1.0;
    if (!(v > 0))
        v = 1.0;
    v *= (double)n;
    if (qc_slow())
        v /= 8.0;
    return v < 1 ? 1 : (long)v;
}

size_t qc_scaled_at_least(long n, size_t least) {
    size_t scaled = (size_t)qc_scaled(n);
    return scaled < least ? least : scaled;
}

uint64_t qc_lcg_next(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state;
}

int64_t qc_lead(int64_t ms) {
    return QC_MS(ms) * (qc_slow() ? 10 : 1);
}

void qc_sleep_ns(int64_t ns) {
    if (ns <= 0)
        return;
    struct timespec ts = {(time_t)(ns / TK_NS_PER_S), (long)(ns % TK_NS_PER_S)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

void qc_settle(void) {
    qc_sleep_ns(qc_lead(40));
}

/* ---- setup and teardown
 * --------------------------------------------------------------------------- */

static int qc_setup(void **state) {
    const kit_test *ref = *state;
    qc *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -1;
    t->eng = ref->engine;
    t->ops = t->eng->ops;
    t->c = ref->c;
    *state = t;
    return 0;
}

/* Closes every queue still alive (a blocked taker returns TK_ECLOSED), joins
 * every thread, drains and destroys the queues, then frees the memory. */
static int qc_teardown(void **state) {
    qc *t = *state;
    for (size_t i = 0; i < t->nqueues; i++)
        if (t->queues[i].q != NULL)
            t->ops->close(t->queues[i].q, TK_QUEUE_CLOSE_NOW);
    for (size_t i = 0; i < t->nthreads; i++)
        if (!t->joined[i])
            pthread_join(t->threads[i], NULL);
    for (size_t i = 0; i < t->nqueues; i++) {
        if (t->queues[i].q != NULL) {
            (void)t->ops->drain(t->queues[i].q);
            t->ops->destroy(t->queues[i].q);
        }
    }
    for (size_t i = 0; i < t->nmemory; i++)
        free(t->memory[i]);
    free(t->memory);
    free(t);
    return 0;
}

static void qc_run(void **state) {
    qc *t = *state;
    if (!needs_met(t->eng, t->c->needs))
        skip(); /* the engine lacks what this behaviour needs */
    t->c->fn(t);
}

/* ---- the suite ---------------------------------------------------------------------------- */

_Static_assert(offsetof(qc_case, name) == 0, "the runner reads a case's name first");

static const kit_group groups[] = {
#define QC_GROUP(group) KIT_GROUP(qc_cases_##group)
    QC_GROUPS(QC_GROUP)
#undef QC_GROUP
};

static const kit_suite queue_contract = {
    .name = "queue_contract",
    .groups = groups,
    .ngroups = sizeof(groups) / sizeof(groups[0]),
    .case_size = sizeof(qc_case),
    .engine_size = sizeof(qc_engine),
    .engine_init = fixture_for,
    .setup = qc_setup,
    .run = qc_run,
    .teardown = qc_teardown,
};

int tk_queue_contract_main(int argc, char **argv) {
    return kit_suite_main(&queue_contract, argc, argv);
}
