/* SPDX-License-Identifier: MIT */
/* timerkit: the heap engine's pure core, an indexed d-ary min-heap of tk_node.
 *
 * Single-threaded: no locks, no threads, no clock (pop_due() is told `now`).
 * The engine's core view (heap-engine.c, through which the generic blocking
 * adapter, the fuzzer and the benchmarks drive it) and the unit tests use
 * this API. The structure, its
 * invariants and its cost are described at the top of heap-core.c.
 *
 * Order: (deadline_ns, seq) ascending; equal deadlines leave FIFO by seq.
 * A node in the heap stores its slot's number in tk__heap_priv_of(n)->index (not
 * the array position: see "Sorted runs" in heap-core.c); a node that leaves (pop, pop_due, remove,
 * remove_if) gets index SIZE_MAX, except that remove_if() reuses the same storage for the
 * detached-list link.
 *
 * Ownership: the heap never allocates, frees or otherwise touches a node's
 * memory beyond its private area; while a node is in the heap its owner must not
 * change its deadline_ns or seq (the heap keeps a copy of the key).
 *
 * Resizing. By default the heap resizes its array itself: push grows a full
 * array, removals shrink a mostly empty one. An owner that must not allocate
 * inside its critical section (the adapter, which holds its lock around every
 * call) turns that off with tk__heap_core_set_auto_resize(h, false) and moves
 * the array itself: wanted_capacity() says which capacity the heap wants,
 * alloc_block() gets a block (it touches only the immutable allocator, so it
 * may run outside the owner's lock), adopt() moves the heap into it and hands
 * back the old array for free_block(). */
#ifndef TIMERKIT_HEAP_CORE_H
#define TIMERKIT_HEAP_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timerkit/alloc.h"
#include "timerkit/engine.h"
#include "timerkit/queue.h"

/* Children per parent: 2 (binary) or 4. A compile-time constant; override
 * with -DTK_HEAP_ARITY=2 (CMake: -DTIMERKIT_HEAP_ARITY=2). Why the default
 * is 4: "Arity" in heap-core.c. */
#ifndef TK__HEAP_ARITY
#define TK__HEAP_ARITY 4
#endif

/* A node's private area (tk_node_priv()) as the heap lays it out: the slot
 * number. Only the core writes it. */
typedef struct tk__heap_priv {
    size_t index;
} tk__heap_priv;

static inline tk__heap_priv *tk__heap_priv_of(const tk_node *n) {
    return (tk__heap_priv *)(uintptr_t)tk_node_priv_const(n);
}

/* Default number of slots when tk__heap_core_init() is given 0. */
#define TK__HEAP_DEFAULT_CAPACITY ((size_t)64)

/* One array slot: the node's key, copied beside the pointer so that a sift
 * compares contiguous memory and never dereferences a node. */
typedef struct tk__heap_entry {
    int64_t deadline_ns;
    uint64_t seq;
    tk_node *node;
} tk__heap_entry;

/* Largest number of slots an array can have (its size in bytes must fit in
 * a size_t). */
#define TK__HEAP_MAX_CAPACITY (SIZE_MAX / sizeof(tk__heap_entry))

/* The heap. Caller-allocated; every field is private to heap-core.c (read
 * them in tests if you must, never write them). */
typedef struct tk__heap_core {
    tk__heap_entry *entries;       /* `capacity` array slots */
    size_t start;                  /* heap slot i is entries[start + i], i < size */
    size_t first;                  /* heap slot i's node stores index first + i */
    size_t size;                   /* nodes in the heap */
    size_t capacity;               /* slots allocated */
    size_t min_capacity;           /* shrinking never goes below this */
    const tk_allocator *allocator; /* never NULL after init; never changes until destroy */
    bool auto_resize;              /* true (the default): push and removals resize */
    bool sorted;                   /* slots 0 .. size-1 are in key order ("Sorted runs") */
} tk__heap_core;

/* Initialises an empty heap with room for `initial_capacity` nodes (0: 64)
 * allocated from `a` (NULL: tk_allocator_default()), resizing itself. The
 * array grows as needed and never shrinks below `initial_capacity`.
 * Returns TK_OK, TK_EINVAL (h NULL or capacity too large to represent) or
 * TK_ENOMEM (h is then left safe to destroy). */
int tk__heap_core_init(tk__heap_core *h, const tk_allocator *a, size_t initial_capacity);

/* Frees the array. Nodes still in the heap are not touched (their index is
 * left stale). `h` may be re-initialised afterwards. NULL is a no-op. */
void tk__heap_core_destroy(tk__heap_core *h);

/* Inserts `n` (deadline_ns and seq already set). O(log n); amortised O(1)
 * expected for random keys. A full array grows first if the heap resizes
 * itself; otherwise push never allocates.
 * Returns TK_OK, TK_ENOMEM (the array could not grow: heap and node
 * unchanged), TK_EFULL (the array is full and automatic resizing is off: heap
 * and node unchanged; adopt a larger block and push again) or TK_EINVAL (h or
 * n NULL, or n is already in this heap). */
int tk__heap_core_push(tk__heap_core *h, tk_node *n);

/* Removes `n` wherever it sits, found through its stored index. O(log n).
 * With automatic resizing off, no removal (remove, pop, pop_due, remove_if)
 * frees or allocates anything.
 * Returns TK_OK, TK_ENOENT (n is not in this heap, or NULL) or TK_EINVAL
 * (h NULL). */
int tk__heap_core_remove(tk__heap_core *h, tk_node *n);

/* Returns the node with the smallest (deadline_ns, seq) without removing it;
 * NULL if the heap is empty (or h is NULL). O(1). */
tk_node *tk__heap_core_peek(const tk__heap_core *h);

/* Removes and returns the node with the smallest key; NULL if empty.
 * O(log n). */
tk_node *tk__heap_core_pop(tk__heap_core *h);

/* Removes and returns the head if head->deadline_ns <= now_ns; otherwise (or
 * if empty) returns NULL and leaves the heap unchanged. O(log n); O(1) while
 * the heap is a sorted run (heap-core.c). */
tk_node *tk__heap_core_pop_due(tk__heap_core *h, int64_t now_ns);

/* Returns the number of nodes with deadline_ns <= now_ns, counting no
 * further than `limit` (the answer is then `limit`); 0 for NULL. The due
 * nodes are a subtree at the root (a parent is never later than its
 * children), walked in place, reading only the array's keys:
 * O(min(due, limit) * d). The adapter's take_batch() sizes a fair share with
 * it. */
size_t tk__heap_core_count_due(const tk__heap_core *h, int64_t now_ns, size_t limit);

/* Stores in *when_ns the smallest window end, deadline_ns + slack_ns
 * (saturating at INT64_MAX; a negative slack counts as 0), of the nodes in
 * the heap: the latest instant an owner may wait until and still hand every
 * node out within its window (engine.h, "Slack"). Exact, except that a walk
 * that runs out of its fixed room answers an earlier instant, never below
 * the head's deadline (heap-core.c, "Latest (slack)"). Reads only the slots
 * with a deadline at or before the answer (keys and their nodes' slack_ns)
 * and their children's keys: O(k d) reads and as many steps of a frontier
 * of at most 128 slots, for k such slots, the nodes an owner waking then
 * hands out. Returns TK_OK, TK_ENOENT (empty) or TK_EINVAL (h or when_ns
 * NULL). */
int tk__heap_core_latest(const tk__heap_core *h, int64_t *when_ns);

/* Returns the number of nodes in the heap (0 for NULL). O(1). */
size_t tk__heap_core_size(const tk__heap_core *h);

/* Returns true iff `n` is in this heap: its stored index is below the size
 * and that slot holds `n`. Safe on any node, including one never pushed,
 * one removed, or one in another heap. O(1). */
bool tk__heap_core_contains(const tk__heap_core *h, const tk_node *n);

/* Removes every node for which pred(node, ctx) returns true, calling pred
 * exactly once per node, and returns them as a list linked through
 * tk__priv.detached_next (read with tk_node_next_detached()), in no
 * particular order; NULL if none matched. *removed (if not NULL) receives
 * their number. O(n): the survivors are re-heapified in place. `pred` must
 * not call into this heap. Not one of the core operations the benchmarks
 * use: it exists for the adapter's remove_if(). */
tk_node *tk__heap_core_remove_if(tk__heap_core *h, bool (*pred)(const tk_node *n, void *ctx),
                                 void *ctx, size_t *removed);

/* Turns automatic resizing on (the state after init) or off. Off, push
 * reports TK_EFULL instead of growing and removals never shrink: the owner
 * resizes through the four functions below. NULL is a no-op. */
void tk__heap_core_set_auto_resize(tk__heap_core *h, bool on);

/* Returns the number of slots allocated (0 for NULL). O(1). */
size_t tk__heap_core_capacity(const tk__heap_core *h);

/* Returns the capacity the heap should move to now, or its current capacity
 * if no move is due. Larger (capacity + capacity/2, at least one more) once
 * the array slots in use, with the dead ones a sorted run left before them,
 * reach the high-water mark, capacity - capacity/16, unless the dead ones
 * are enough for push to compact the array instead ("Sorted runs" in
 * heap-core.c); so always when the array is full: an owner that grows as
 * soon as this asks rarely sees TK_EFULL. Smaller when at most a quarter is in use: the capacity
 * halved as many times as it takes for more than a quarter to be in use, never below the initial
 * capacity, so one move returns the memory after a mass removal. Adopting the answer leaves a heap
 * that wants no further move (until its size changes). Automatic resizing follows the shrinking
 * rule one halving at a time and grows only when full. O(log n); 0 for NULL. */
size_t tk__heap_core_wanted_capacity(const tk__heap_core *h);

/* Allocates a block of `capacity` slots from the heap's allocator, contents
 * undefined. Reads only the allocator, which does not change between init
 * and destroy, so it may run concurrently with other calls on `h`.
 * Returns the block, or NULL (allocation failed, capacity 0 or too large to
 * represent, or h NULL). */
tk__heap_entry *tk__heap_core_alloc_block(const tk__heap_core *h, size_t capacity);

/* Returns a block from alloc_block() or adopt() to the heap's allocator.
 * `capacity` is the one it was allocated with. Like alloc_block(), may run
 * concurrently with other calls on `h`. A NULL block is a no-op. */
void tk__heap_core_free_block(const tk__heap_core *h, tk__heap_entry *block, size_t capacity);

/* Moves the heap into `block` (`capacity` slots, from alloc_block() on this
 * heap) if that is still a move the heap wants: wanted_capacity() is larger
 * than the current capacity and `capacity` is at least that and not so large
 * that the heap would at once want to shrink, or wanted_capacity() is smaller
 * and `capacity` lies between it (inclusive) and the current capacity. The
 * entries are copied (O(n), one memcpy); indices do not change.
 * Returns true when moved: the previous array, and its capacity, are stored
 * in *old_block and *old_capacity for the caller to free with free_block().
 * Returns false (heap unchanged, `block` still the caller's, the outputs not
 * written) when the move is no longer wanted or an argument is NULL. */
bool tk__heap_core_adopt(tk__heap_core *h, tk__heap_entry *block, size_t capacity,
                         tk__heap_entry **old_block, size_t *old_capacity);

/* Verifies every invariant: size <= capacity, heap order against each
 * parent, each slot's key equal to its node's key, and each node's stored
 * index. O(n). Returns TK_OK or TK_ESTATE (TK_EINVAL if h is NULL). */
int tk__heap_core_check(const tk__heap_core *h);

#endif
