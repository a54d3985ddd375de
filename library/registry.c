/* SPDX-License-Identifier: MIT */
/* timerkit: the engine registry.
 *
 * Two parts. The built-in engines: one entry per line of engines/
 * CMakeLists.txt (TIMERKIT_ENGINES), generated into tk-engine-list.h as
 * TK_ENGINE(name), in that order; immutable. Then the engines a program adds
 * at run time with tk_engine_register(), in the order it added them.
 *
 * The run-time part is one of the library's two pieces of mutable global
 * state (the other: the wheel timer's count of live instances, documented in
 * standalone/wheel-timer.c), and this is its documented place:
 *   - `registered` holds up to TK_ENGINE_REGISTER_MAX table pointers and
 *     `registered_count` how many are published. An entry is written once,
 *     before the count that covers it is stored (release); it never changes
 *     or goes away afterwards (engines are process-lifetime tables).
 *   - `register_lock` serialises writers (tk_engine_register()), so that two
 *     can neither take one entry nor register one name twice. Readers
 *     (tk_engine_count(), tk_engine_at(), tk_engine_by_name()) take no lock:
 *     they load the count (acquire) and read only the entries below it.
 * TK_DEFAULT_ENGINE_NAME (from the CMake option TIMERKIT_DEFAULT_ENGINE) names
 * the engine an executor uses when its options name none. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "params-internal.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

#ifndef TK_DEFAULT_ENGINE_NAME
#define TK_DEFAULT_ENGINE_NAME "heap"
#endif

/* Longest engine name, without its NUL. */
#define ENGINE_NAME_MAX 31

/* Every built-in engine's getter, declared from the generated list. */
#define TK_ENGINE(name) const tk_queue_ops *tk_engine_##name(void);
#include "tk-engine-list.h"
#undef TK_ENGINE

typedef const tk_queue_ops *(*engine_getter)(void);

static const engine_getter builtin[] = {
#define TK_ENGINE(name) tk_engine_##name,
#include "tk-engine-list.h"
#undef TK_ENGINE
};

#define BUILTIN_COUNT (sizeof(builtin) / sizeof(builtin[0]))

static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER; /* writers only */
static const tk_queue_ops *registered[TK_ENGINE_REGISTER_MAX];    /* see the top */
static _Atomic size_t registered_count;                           /* published entries */

size_t tk_engine_count(void) {
    return BUILTIN_COUNT + atomic_load_explicit(&registered_count, memory_order_acquire);
}

const tk_queue_ops *tk_engine_at(size_t index) {
    if (index < BUILTIN_COUNT)
        return builtin[index]();
    index -= BUILTIN_COUNT;
    if (index < atomic_load_explicit(&registered_count, memory_order_acquire))
        return registered[index];
    return NULL;
}

const tk_queue_ops *tk_engine_by_name(const char *name) {
    if (name == NULL)
        return NULL;
    size_t count = tk_engine_count();
    for (size_t i = 0; i < count; i++) {
        const tk_queue_ops *ops = tk_engine_at(i);
        if (ops != NULL && strcmp(ops->name, name) == 0)
            return ops;
    }
    return NULL;
}

const tk_queue_ops *tk_engine_default(void) {
    const tk_queue_ops *ops = tk_engine_by_name(TK_DEFAULT_ENGINE_NAME);
    return ops != NULL ? ops : builtin[0]();
}

/* ---- checking a table ----------------------------------------------------- */

static bool name_ok(const char *name) {
    size_t n = 0;
    for (; name[n] != '\0'; n++) {
        char c = name[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return n >= 1 && n <= ENGINE_NAME_MAX;
}

/* The first operation the executor needs that `o` lacks, or NULL. */
static const char *missing_op(const tk_queue_ops *o) {
    if (o->create == NULL)
        return "create";
    if (o->destroy == NULL)
        return "destroy";
    if (o->offer == NULL)
        return "offer";
    if (o->take == NULL)
        return "take";
    if (o->remove == NULL)
        return "remove";
    if (o->remove_first == NULL)
        return "remove_first";
    if (o->size == NULL)
        return "size";
    if (o->drain == NULL)
        return "drain";
    if (o->remove_if == NULL)
        return "remove_if";
    if (o->close == NULL)
        return "close";
    return NULL;
}

/* The first mandatory operation the core `c` lacks, or NULL. */
static const char *missing_core_op(const tk_core_ops *c) {
    if (c->size == 0)
        return "size (bytes of state)";
    if (c->init == NULL)
        return "init";
    if (c->destroy == NULL)
        return "destroy";
    if (c->insert == NULL)
        return "insert";
    if (c->remove == NULL)
        return "remove";
    if (c->due == NULL)
        return "due";
    if (c->next == NULL)
        return "next";
    if (c->expire == NULL)
        return "expire";
    if (c->count == NULL)
        return "count";
    if (c->first == NULL)
        return "first";
    if (c->remove_if == NULL)
        return "remove_if";
    if (c->check == NULL)
        return "check";
    if (c->count_due == NULL)
        return "count_due";
    const tk_core_resize_ops *r = c->resize;
    if (r != NULL &&
        (r->manual == NULL || r->capacity == NULL || r->wanted == NULL || r->entry_size == 0 ||
         r->alloc_block == NULL || r->adopt == NULL || r->free_block == NULL))
        return "complete resize block (set every member of resize, or leave resize NULL)";
    return NULL;
}

int tk_engine_check(const tk_queue_ops *engine, char *err, size_t err_len) {
    tk__err_printf(err, err_len, "%s", "");
    if (engine == NULL) {
        tk__err_printf(err, err_len, "engine is NULL");
        return TK_EINVAL;
    }
    if (engine->name == NULL || !name_ok(engine->name)) {
        tk__err_printf(
            err, err_len, "engine name %s%.40s%s is not 1 to %d letters, digits, '_' or '-'",
            engine->name != NULL ? "'" : "", engine->name != NULL ? engine->name : "NULL",
            engine->name != NULL ? "'" : "", ENGINE_NAME_MAX);
        return TK_EINVAL;
    }
    const char *op = missing_op(engine);
    if (op != NULL) {
        tk__err_printf(err, err_len, "%s: the table has no %s operation", engine->name, op);
        return TK_EINVAL;
    }
    if (tk__queue_params_table_check(engine, err, err_len) != TK_OK)
        return TK_EINVAL;
    if (engine->core != NULL && (op = missing_core_op(engine->core)) != NULL) {
        tk__err_printf(err, err_len, "%s: its core has no %s", engine->name, op);
        return TK_EINVAL;
    }
    if (engine->create == tk_blocking_create && engine->core == NULL) {
        tk__err_printf(err, err_len, "%s: the generic blocking adapter needs a core", engine->name);
        return TK_EINVAL;
    }
    return TK_OK;
}

int tk_engine_register(const tk_queue_ops *engine, char *err, size_t err_len) {
    if (tk_engine_check(engine, err, err_len) != TK_OK)
        return TK_EINVAL;
    int rc = TK_OK;
    pthread_mutex_lock(&register_lock);
    const tk_queue_ops *same = tk_engine_by_name(engine->name);
    size_t count = atomic_load_explicit(&registered_count, memory_order_relaxed);
    if (same == engine) {
        rc = TK_OK; /* already there */
    } else if (same != NULL) {
        tk__err_printf(err, err_len, "%s: another engine of that name is registered", engine->name);
        rc = TK_ESTATE;
    } else if (count == TK_ENGINE_REGISTER_MAX) {
        tk__err_printf(err, err_len, "%s: the registry is full (%d engines registered at run time)",
                       engine->name, TK_ENGINE_REGISTER_MAX);
        rc = TK_EFULL;
    } else {
        registered[count] = engine;
        atomic_store_explicit(&registered_count, count + 1, memory_order_release);
    }
    pthread_mutex_unlock(&register_lock);
    return rc;
}

int tk_queue_create(const tk_queue_ops *engine, const tk_queue_config *cfg,
                    tk_queue_release_fn release, void *release_ctx, tk_queue **out) {
    if (out != NULL)
        *out = NULL;
    if (out == NULL || engine == NULL || tk_engine_check(engine, NULL, 0) != TK_OK)
        return TK_EINVAL;
    return engine->create(engine, cfg, release, release_ctx, out);
}
