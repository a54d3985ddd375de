/* timerkit: the registry of built-in engines.
 *
 * Every engine is always built and linked; TK_DEFAULT_ENGINE_NAME (from the
 * CMake option TIMERKIT_DEFAULT_ENGINE) names the one an executor uses when
 * its options name none. The table is immutable. */
#include <stddef.h>
#include <string.h>

#include "timerkit/queue.h"

#ifndef TK_DEFAULT_ENGINE_NAME
#define TK_DEFAULT_ENGINE_NAME "heap"
#endif

typedef const tk_queue_ops *(*engine_getter)(void);

static const engine_getter engines[] = {tk_engine_heap, tk_engine_wheel};

#define ENGINE_COUNT (sizeof(engines) / sizeof(engines[0]))

size_t tk_engine_count(void) {
    return ENGINE_COUNT;
}

const tk_queue_ops *tk_engine_at(size_t index) {
    return index < ENGINE_COUNT ? engines[index]() : NULL;
}

const tk_queue_ops *tk_engine_by_name(const char *name) {
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < ENGINE_COUNT; i++) {
        const tk_queue_ops *ops = engines[i]();
        if (strcmp(ops->name, name) == 0)
            return ops;
    }
    return NULL;
}

const tk_queue_ops *tk_engine_default(void) {
    const tk_queue_ops *ops = tk_engine_by_name(TK_DEFAULT_ENGINE_NAME);
    return ops != NULL ? ops : tk_engine_heap();
}
