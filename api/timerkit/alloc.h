/* SPDX-License-Identifier: MIT */
/** @file
 * timerkit: the injectable allocator.
 *
 * Every allocation timerkit makes goes through a tk_allocator, so tests can
 * fail the Nth allocation and benchmarks can count bytes. Passing NULL where
 * an allocator is accepted selects tk_allocator_default() (malloc/free). */
#ifndef TIMERKIT_ALLOC_H
#define TIMERKIT_ALLOC_H

#include <stddef.h>

#include "export.h"

TK_EXTERN_C_BEGIN

/** An allocator: two functions and the context they are given. */
typedef struct tk_allocator {
    /** Returns `size` bytes aligned for any type, or NULL on failure. Must be
     * callable from any thread at once. */
    void *(*alloc)(void *ctx, size_t size);
    /** Frees a block from alloc(); `size` is the size it was allocated with.
     * `ptr` is never NULL. */
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx; /**< passed to alloc() and free() */
} tk_allocator;

/** The malloc/free allocator. Never NULL. */
TK_API const tk_allocator *tk_allocator_default(void);

TK_EXTERN_C_END

#endif
