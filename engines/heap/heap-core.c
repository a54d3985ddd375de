/* SPDX-License-Identifier: MIT */
/* timerkit: the heap engine's pure core.
 *
 * Structure. An implicit d-ary min-heap (d = TK__HEAP_ARITY, 2 or 4) stored in
 * one array of tk__heap_entry {deadline_ns, seq, node}. The key is copied into
 * the slot beside the node pointer, so a sift compares entries that sit next
 * to each other in memory and never follows a node pointer to read a key;
 * the only node memory a sift writes is the moved node's index. Children of
 * slot i are d*i+1 .. d*i+d; the parent of i is (i-1)/d. This is the JDK's
 * DelayedWorkQueue (ScheduledThreadPoolExecutor) design, each task knowing
 * its heapIndex so that cancel is O(log n) instead of a linear search, with
 * the key cached in the array as the one departure.
 *
 * Heap slot i lives in array slot entries[start + i] (start is 0 except in a
 * sorted run, below), and its node stores the number first + i.
 *
 * Invariants (all verified by tk__heap_core_check()):
 *   - start + size <= capacity and min_capacity <= capacity;
 *   - slots 0 .. size-1 hold distinct non-NULL nodes;
 *   - slot i has the same (deadline_ns, seq) as its node;
 *   - slot i's node has tk__heap_priv.index == first + i;
 *   - no slot is less than its parent, ordering by (deadline_ns, seq), so
 *     slot 0 is the smallest and equal deadlines leave FIFO by seq;
 *   - if `sorted`, no slot is less than the one before it.
 * A node that leaves gets index SIZE_MAX, so contains() (index - first below
 * size and that slot holds the node) is false for it, in every build; debug
 * builds also poison the vacated array slot (TK__POISON_PTR).
 *
 * Sorted runs. An array in key order is a heap, and nodes pushed in key
 * order (one producer's timers with one delay, a burst) leave it one: each
 * push lands on the last slot and stays there. While the heap knows it is
 * sorted (`sorted`: set when it holds at most one node, cleared by a push
 * below the last slot or a removal that moves the last slot into a hole),
 * taking slot 0 moves `start` and `first` on by one instead of sifting the
 * last slot down from the root: O(1), no entry moved, no node written but
 * the one leaving, where a sift moves and re-indexes a path of log_d n
 * entries, several cache misses each once the array outgrows the cache.
 * Numbering the slots from `first` keeps every other node's index right
 * while slot 0 moves along the array. The array slots before `start` are
 * dead until the next move of the array; a push that finds the end of the
 * array reached compacts (one memmove, indices unchanged) when start is at
 * least size/8, so compaction costs O(1) per pop amortised, and otherwise
 * grows; an owner that resizes ahead sees the same rule in
 * wanted_capacity().
 *
 * Sifts move a "hole": the entry being placed is held aside, the entries it
 * passes are moved one level (one 24-byte copy and one index store each), and
 * it is written once where it lands.
 *
 * Memory. The array grows by half again (capacity + capacity/2) and halves
 * when no more than a quarter is in use, never below the initial capacity, so
 * memory comes back after a mass cancellation; the factors leave room between
 * the two thresholds, so a population hovering at a boundary does not
 * reallocate back and forth. Resizing copies through the injected allocator
 * (it has no realloc). Two ways to drive it:
 *   - automatic (the default): push grows a full array, every removal halves
 *     a quarter-full one. A failed grow leaves the heap unchanged (push
 *     returns TK_ENOMEM); a failed shrink is ignored (the larger array stays).
 *   - by the owner (set_auto_resize(false)): the core never allocates or
 *     frees between init and destroy. wanted_capacity() names the capacity
 *     to move to; besides the shrink above (all halvings due at once) it
 *     asks to grow as soon as the array is 15/16 full, ahead of need, so
 *     that while one thread allocates the block outside the owner's critical
 *     section, others can still fill the last sixteenth; push reports
 *     TK_EFULL only if that did not happen in time. The owner allocates
 *     (alloc_block()), adopt() re-checks that the move is still wanted (the
 *     size may have changed meanwhile), copies, and hands back the old array
 *     for the owner to free. Every capacity wanted_capacity() returns is one
 *     at which, once adopted, it asks for nothing more: size stays below the
 *     new high-water mark and above a quarter (or the capacity is the
 *     initial one).
 *     The margin is small on purpose: a population that ends up inside the
 *     margin of its array makes the heap grow once more than it needs to
 *     (an allocation, a first touch and a copy, and a block half as large
 *     again), and with a growth factor of 1.5 a margin m catches about
 *     log(1/(1-m))/log(1.5) of populations spread evenly on a log scale: a
 *     third at 1/8, a sixth at 1/16.
 * Automatic mode does not grow ahead: its caller pays for the allocation
 * either way, so growing early would only cost memory.
 *
 * Complexity: push O(log_d n), and O(1) expected for random keys (a new key
 * rarely climbs far); pop and remove O(d log_d n), pop O(1) in a sorted
 * run; peek, size, contains O(1); count_due O(d) per node counted (O(1) in
 * a sorted run); remove_if and check O(n). Growth, shrinking and compaction
 * are amortised O(1) per op; wanted_capacity O(1), or O(log n) when a
 * shrink is due; adopt O(n) (one memcpy).
 *
 * Arity. d = 4 halves the depth, and a node's four children (24-byte
 * entries) share one or two cache lines, so a sift touches fewer lines than
 * with d = 2 for a few more comparisons per level. 4 is the default;
 * -DTK_HEAP_ARITY=2 (CMake: -DTIMERKIT_HEAP_ARITY=2) builds the binary heap.
 * docs/engine-notes.md has the measurements behind the choice.
 *
 * Latest (slack). latest() answers the smallest window end, deadline +
 * slack, of the nodes held (engine.h, "Slack"). A node's end is never below
 * its deadline and a slot's subtree holds no deadline below the slot's, so
 * a subtree whose root has a deadline at or after the best end found so far
 * cannot lower it. The walk visits the slots best-first, the smallest
 * deadline first, from a small frontier (a binary min-heap of slot numbers
 * kept on the stack), and stops when the frontier's smallest deadline
 * reaches the best end: every slot it took has a deadline no later than the
 * answer, so those are the nodes an owner that wakes at the answer hands
 * out, and the walk costs O(log of the frontier) per node handed out, plus
 * d key reads per slot taken. A child that finds the frontier full is left
 * unvisited and its deadline kept as a floor: the answer is then min(best
 * end, floor), an earlier instant but still a lower bound of every end and
 * no earlier than the head's deadline, which the contract allows (the owner
 * wakes early and hands out at least the head). A sorted run is walked from
 * slot 0 while the deadlines stay below the best end. The heap keeps no
 * copy of the slack: the walk reads it from each node it takes (the node
 * must not change it while held, like its key).
 *
 * Accuracy is not this file's business: the core has no clock and hands out
 * exactly what it is asked for (pop_due() compares with the `now` it is
 * given). The never-early guarantee is the generic adapter's
 * (adapter/blocking.c, "Accuracy"). */
#include "heap-core.h"

#include <assert.h>
#include <string.h>

#include "common-internal.h"

#if TK__HEAP_ARITY != 2 && TK__HEAP_ARITY != 4
#error "TK__HEAP_ARITY must be 2 or 4"
#endif

#define HEAP_D ((size_t)TK__HEAP_ARITY)
#define HEAP_NO_INDEX SIZE_MAX

/* (deadline, seq) order of two entries. */
static inline bool entry_less(const tk__heap_entry *a, const tk__heap_entry *b) {
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

/* Puts `e` in slot i of the heap whose slot 0 is a[0] and is numbered
 * `first`. */
static inline void entry_place(tk__heap_entry *a, size_t first, size_t i, tk__heap_entry e) {
    a[i] = e;
    tk__heap_priv_of(e.node)->index = first + i;
}

/* Slot 0 of the heap. */
static inline tk__heap_entry *heap_base(const tk__heap_core *h) {
    return h->entries + h->start;
}

/* Moves `e` up from the hole at `i` until its parent is not greater. */
static void sift_up(tk__heap_entry *a, size_t first, size_t i, tk__heap_entry e) {
    while (i > 0) {
        size_t p = (i - 1) / HEAP_D;
        if (!entry_less(&e, &a[p]))
            break;
        entry_place(a, first, i, a[p]);
        i = p;
    }
    entry_place(a, first, i, e);
}

/* Moves `e` down from the hole at `i` (of a heap of `n` slots) until no child
 * is less than it. */
static void sift_down(tk__heap_entry *a, size_t first, size_t n, size_t i, tk__heap_entry e) {
    for (;;) {
        size_t c = i * HEAP_D + 1;
        if (c >= n)
            break;
        size_t best = c;
        if (TK__LIKELY(c + HEAP_D <= n)) {
            /* all d children exist: a fixed-count loop the compiler unrolls */
            for (size_t k = 1; k < HEAP_D; k++)
                if (entry_less(&a[c + k], &a[best]))
                    best = c + k;
        } else {
            for (size_t k = c + 1; k < n; k++)
                if (entry_less(&a[k], &a[best]))
                    best = k;
        }
        if (!entry_less(&a[best], &e))
            break;
        entry_place(a, first, i, a[best]);
        i = best;
    }
    entry_place(a, first, i, e);
}

/* The size at which an array of `cap` slots asks to grow (owner-driven
 * mode): 15/16 full, rounded up, so never above `cap` (and `cap` itself below
 * 16 slots). */
static inline size_t high_water(size_t cap) {
    return cap - cap / 16;
}

/* The capacity after `cap` grows by half again (at least one more slot);
 * `cap` itself when no larger capacity can be represented. */
static size_t grown_capacity(size_t cap) {
    size_t more = cap / 2 > 0 ? cap / 2 : 1;
    return cap > TK__HEAP_MAX_CAPACITY - more ? TK__HEAP_MAX_CAPACITY : cap + more;
}

/* Copies the slots into the start of `block` (`cap` array slots, cap >=
 * size) and makes it the array. Indices do not change. Returns the previous
 * array. */
static tk__heap_entry *heap_move(tk__heap_core *h, tk__heap_entry *block, size_t cap) {
    assert(cap >= h->size && cap > 0 && cap <= TK__HEAP_MAX_CAPACITY);
    if (h->size > 0)
        memcpy(block, heap_base(h), h->size * sizeof(tk__heap_entry));
    tk__heap_entry *old = h->entries;
    h->entries = block;
    h->start = 0;
    h->capacity = cap;
    return old;
}

/* Whether a push that finds the end of the array reached should compact it
 * (move the slots to its start) rather than grow: the dead slots before
 * `start` are at least an eighth of the live ones, so the O(size) move was
 * paid for by as many O(1) pops. */
static inline bool compact_pays(const tk__heap_core *h) {
    return h->start > 0 && h->start >= h->size / 8;
}

/* Moves the slots to the start of the array. Indices do not change. */
static void heap_compact(tk__heap_core *h) {
    if (h->size > 0)
        memmove(h->entries, heap_base(h), h->size * sizeof(tk__heap_entry));
    h->start = 0;
}

/* Moves the array to a fresh block of `cap` slots (automatic mode, and
 * init). Returns TK_OK or TK_ENOMEM (heap unchanged). */
static int heap_resize(tk__heap_core *h, size_t cap) {
    size_t old_cap = h->capacity;
    tk__heap_entry *fresh = tk__heap_core_alloc_block(h, cap);
    if (fresh == NULL)
        return TK_ENOMEM;
    tk__free(h->allocator, heap_move(h, fresh, cap), old_cap * sizeof(tk__heap_entry));
    return TK_OK;
}

static int heap_grow(tk__heap_core *h) {
    size_t cap = grown_capacity(h->capacity);
    if (cap == h->capacity)
        return TK_ENOMEM;
    return heap_resize(h, cap);
}

/* Halves the array when at most a quarter of it is in use and the heap
 * resizes itself. Best effort. */
static inline void heap_maybe_shrink(tk__heap_core *h) {
    if (TK__LIKELY(h->size > h->capacity / 4 || h->capacity <= h->min_capacity || !h->auto_resize))
        return;
    size_t cap = h->capacity / 2;
    if (cap < h->min_capacity)
        cap = h->min_capacity;
    (void)heap_resize(h, cap);
}

/* Takes slot `i` out of the heap: in a sorted run, slot 0 by moving the
 * heap's start on; else by filling it from the last slot. */
static void heap_remove_at(tk__heap_core *h, size_t i) {
    tk__heap_entry *a = heap_base(h);
    tk_node *gone = a[i].node;
    size_t last = --h->size;
    if (i == 0 && h->sorted) {
#ifndef NDEBUG
        a[0].node = TK__POISON_PTR; /* the vacated slot must never be read as a node */
#endif
        h->start++;
        h->first++;
    } else {
        if (i != last) {
            tk__heap_entry e = a[last];
            if (i > 0 && entry_less(&e, &a[(i - 1) / HEAP_D]))
                sift_up(a, h->first, i, e);
            else
                sift_down(a, h->first, last, i, e);
            h->sorted = false;
        }
#ifndef NDEBUG
        a[last].node = TK__POISON_PTR;
#endif
    }
    if (h->size <= 1) {
        h->sorted = true;
        if (h->size == 0)
            h->start = 0; /* nothing to move: rewind */
    }
    tk__heap_priv_of(gone)->index = HEAP_NO_INDEX;
    heap_maybe_shrink(h);
}

int tk__heap_core_init(tk__heap_core *h, const tk_allocator *a, size_t initial_capacity) {
    if (h == NULL)
        return TK_EINVAL;
    memset(h, 0, sizeof(*h));
    h->allocator = a != NULL ? a : tk_allocator_default();
    if (initial_capacity == 0)
        initial_capacity = TK__HEAP_DEFAULT_CAPACITY;
    if (initial_capacity > TK__HEAP_MAX_CAPACITY)
        return TK_EINVAL;
    h->min_capacity = initial_capacity;
    h->auto_resize = true;
    h->sorted = true;
    return heap_resize(h, initial_capacity);
}

void tk__heap_core_destroy(tk__heap_core *h) {
    if (h == NULL)
        return;
    tk__free(h->allocator, h->entries, h->capacity * sizeof(tk__heap_entry));
    h->entries = NULL;
    h->size = 0;
    h->start = 0;
    h->sorted = true;
    h->capacity = 0;
}

int tk__heap_core_push(tk__heap_core *h, tk_node *n) {
    if (TK__UNLIKELY(h == NULL || n == NULL || tk__heap_core_contains(h, n)))
        return TK_EINVAL;
    if (TK__UNLIKELY(h->start + h->size == h->capacity)) {
        if (h->start > 0) {
            /* dead slots before the start: reuse them, unless growing (which
             * moves the slots to the start too) is due and possible */
            if (compact_pays(h) || !h->auto_resize || heap_grow(h) != TK_OK)
                heap_compact(h);
        } else if (!h->auto_resize) {
            return TK_EFULL;
        } else {
            int rc = heap_grow(h);
            if (rc != TK_OK)
                return rc;
        }
    }
    tk__heap_entry e = {n->deadline_ns, n->seq, n};
    tk__heap_entry *a = heap_base(h);
    if (h->sorted && h->size > 0 && entry_less(&e, &a[h->size - 1]))
        h->sorted = false;
    sift_up(a, h->first, h->size++, e);
    return TK_OK;
}

/* The heap slot holding n, or h->size if n is not in the heap: its index
 * numbered from `first` (an index below first, or SIZE_MAX, wraps past
 * size), checked against the node the slot holds. A node that left holds
 * its detached link in the index word, which the thread that took it may
 * write with no lock of this heap held (a sharded adapter links nodes of
 * several heaps): the word is read atomically, and whatever it holds then
 * fails the check. */
static inline size_t slot_of(const tk__heap_core *h, const tk_node *n) {
    size_t i = __atomic_load_n(&tk__heap_priv_of(n)->index, __ATOMIC_RELAXED) - h->first;
    return i < h->size && heap_base(h)[i].node == n ? i : h->size;
}

int tk__heap_core_remove(tk__heap_core *h, tk_node *n) {
    if (TK__UNLIKELY(h == NULL))
        return TK_EINVAL;
    if (n == NULL)
        return TK_ENOENT;
    size_t i = slot_of(h, n);
    if (i == h->size)
        return TK_ENOENT;
    heap_remove_at(h, i);
    return TK_OK;
}

tk_node *tk__heap_core_peek(const tk__heap_core *h) {
    return h != NULL && h->size > 0 ? heap_base(h)[0].node : NULL;
}

tk_node *tk__heap_core_pop(tk__heap_core *h) {
    if (h == NULL || h->size == 0)
        return NULL;
    tk_node *top = heap_base(h)[0].node;
    heap_remove_at(h, 0);
    return top;
}

tk_node *tk__heap_core_pop_due(tk__heap_core *h, int64_t now_ns) {
    if (h == NULL || h->size == 0 || heap_base(h)[0].deadline_ns > now_ns)
        return NULL;
    tk_node *top = heap_base(h)[0].node;
    heap_remove_at(h, 0);
    return top;
}

/* The first due slot among a[from .. end-1] (end clipped to n); n if none. */
static inline size_t first_due(const tk__heap_entry *a, size_t n, size_t from, size_t end,
                               int64_t now_ns) {
    if (end > n)
        end = n;
    for (size_t j = from; j < end; j++)
        if (a[j].deadline_ns <= now_ns)
            return j;
    return n;
}

size_t tk__heap_core_count_due(const tk__heap_core *h, int64_t now_ns, size_t limit) {
    if (h == NULL || limit == 0 || h->size == 0 || heap_base(h)[0].deadline_ns > now_ns)
        return 0;
    /* Depth-first over the due subtree without a stack: from a due slot go to
     * its first due child, else to its next due sibling, else up to the
     * parent and on to the parent's next due sibling. Each due slot is
     * entered once and left once; each look reads at most d keys. */
    const tk__heap_entry *a = heap_base(h);
    size_t n = h->size;
    if (h->sorted) { /* a sorted run: the due slots are a prefix */
        size_t k = 1;
        while (k < n && k < limit && a[k].deadline_ns <= now_ns)
            k++;
        return k;
    }
    size_t i = 0, count = 1;
    while (count < limit) {
        size_t c = i * HEAP_D + 1;
        size_t j = c < n ? first_due(a, n, c, c + HEAP_D, now_ns) : n;
        while (j == n && i != 0) { /* no due child: a later sibling, or climb */
            size_t p = (i - 1) / HEAP_D;
            j = first_due(a, n, i + 1, p * HEAP_D + 1 + HEAP_D, now_ns);
            i = p;
        }
        if (j == n)
            break; /* back at the root: every due slot counted */
        i = j;
        count++;
    }
    return count;
}

/* A node's window end, deadline + slack, saturating at INT64_MAX; a
 * negative slack (which the owner must not give) counts as 0. */
static inline int64_t window_end(int64_t deadline_ns, int64_t slack_ns) {
    if (slack_ns <= 0)
        return deadline_ns;
    return deadline_ns > INT64_MAX - slack_ns ? INT64_MAX : deadline_ns + slack_ns;
}

/* Slots latest()'s frontier holds at most (16 bytes each, on the stack). */
#define LATEST_FRONTIER 128

/* latest()'s frontier: slots still to visit, a binary min-heap by deadline. */
typedef struct latest_frontier {
    size_t n;
    struct {
        int64_t deadline_ns;
        size_t slot;
    } e[LATEST_FRONTIER];
} latest_frontier;

/* Adds a slot; the caller checked that there is room. */
static void frontier_push(latest_frontier *f, int64_t deadline_ns, size_t slot) {
    size_t i = f->n++;
    while (i > 0 && deadline_ns < f->e[(i - 1) / 2].deadline_ns) {
        f->e[i] = f->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    f->e[i].deadline_ns = deadline_ns;
    f->e[i].slot = slot;
}

/* Takes out the slot with the smallest deadline (the frontier is not
 * empty). */
static size_t frontier_pop(latest_frontier *f) {
    size_t top = f->e[0].slot;
    size_t n = --f->n, i = 0;
    if (n == 0)
        return top;
    int64_t d = f->e[n].deadline_ns;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && f->e[c + 1].deadline_ns < f->e[c].deadline_ns)
            c++;
        if (f->e[c].deadline_ns >= d)
            break;
        f->e[i] = f->e[c];
        i = c;
    }
    f->e[i] = f->e[n];
    return top;
}

int tk__heap_core_latest(const tk__heap_core *h, int64_t *when_ns) {
    if (h == NULL || when_ns == NULL)
        return TK_EINVAL;
    if (h->size == 0)
        return TK_ENOENT;
    const tk__heap_entry *a = heap_base(h);
    size_t n = h->size;
    int64_t best = INT64_MAX; /* the smallest window end seen */
    if (h->sorted) {          /* in key order: the slots below the answer are a prefix */
        for (size_t i = 0; i < n && a[i].deadline_ns < best; i++) {
            int64_t end = window_end(a[i].deadline_ns, a[i].node->slack_ns);
            if (end < best)
                best = end;
        }
        *when_ns = best;
        return TK_OK;
    }
    /* Best-first from the root ("Latest" above). `bound` is min(best, the
     * deadlines of the subtrees left out for want of room): nothing at or
     * after it can lower the answer. */
    int64_t bound = INT64_MAX;
    latest_frontier f;
    f.n = 0;
    frontier_push(&f, a[0].deadline_ns, 0);
    while (f.n > 0 && f.e[0].deadline_ns < bound) {
        size_t i = frontier_pop(&f);
        int64_t end = window_end(a[i].deadline_ns, a[i].node->slack_ns);
        if (end < bound)
            bound = end;
        size_t c = i * HEAP_D + 1;
        for (size_t k = c; k < c + HEAP_D && k < n; k++) {
            int64_t d = a[k].deadline_ns;
            if (d >= bound)
                continue;
            if (f.n < LATEST_FRONTIER)
                frontier_push(&f, d, k);
            else
                bound = d; /* left out: its subtree's ends are all at or after d */
        }
    }
    *when_ns = bound;
    return TK_OK;
}

size_t tk__heap_core_size(const tk__heap_core *h) {
    return h != NULL ? h->size : 0;
}

bool tk__heap_core_contains(const tk__heap_core *h, const tk_node *n) {
    if (h == NULL || n == NULL)
        return false;
    return slot_of(h, n) < h->size;
}

tk_node *tk__heap_core_remove_if(tk__heap_core *h, bool (*pred)(const tk_node *n, void *ctx),
                                 void *ctx, size_t *removed) {
    tk_node *head = NULL;
    tk_node **tail = &head;
    size_t count = 0;
    if (h != NULL && pred != NULL) {
        tk__heap_entry *a = heap_base(h);
        size_t kept = 0;
        for (size_t r = 0; r < h->size; r++) {
            tk__heap_entry e = a[r];
            if (pred(e.node, ctx)) {
                *tail = e.node; /* overwrites the index: it is out of the heap */
                tail = &e.node->tk__priv.detached_next;
                count++;
            } else {
                a[kept++] = e;
            }
        }
        *tail = NULL;
        if (count > 0) {
            h->size = kept;
            /* Floyd's bottom-up heap construction, then every index afresh
             * (compaction moved entries that the sifts may not touch). The
             * survivors keep their order, so a sorted run stays one. */
            if (kept > 1)
                for (size_t i = (kept - 2) / HEAP_D + 1; i-- > 0;)
                    sift_down(a, h->first, kept, i, a[i]);
            for (size_t i = 0; i < kept; i++)
                tk__heap_priv_of(a[i].node)->index = h->first + i;
            if (kept <= 1)
                h->sorted = true;
            if (kept == 0)
                h->start = 0;
            while (h->auto_resize && h->size <= h->capacity / 4 && h->capacity > h->min_capacity) {
                size_t cap = h->capacity;
                heap_maybe_shrink(h);
                if (h->capacity == cap)
                    break;
            }
        }
    }
    if (removed != NULL)
        *removed = count;
    return head;
}

void tk__heap_core_set_auto_resize(tk__heap_core *h, bool on) {
    if (h != NULL)
        h->auto_resize = on;
}

size_t tk__heap_core_capacity(const tk__heap_core *h) {
    return h != NULL ? h->capacity : 0;
}

size_t tk__heap_core_wanted_capacity(const tk__heap_core *h) {
    if (h == NULL)
        return 0;
    size_t cap = h->capacity;
    if (h->start + h->size >= high_water(cap) && !compact_pays(h))
        return grown_capacity(cap);
    while (cap > h->min_capacity && h->size <= cap / 4) {
        cap /= 2;
        if (cap < h->min_capacity)
            cap = h->min_capacity;
    }
    return cap;
}

tk__heap_entry *tk__heap_core_alloc_block(const tk__heap_core *h, size_t capacity) {
    if (h == NULL || capacity == 0 || capacity > TK__HEAP_MAX_CAPACITY)
        return NULL;
    return tk__alloc(h->allocator, capacity * sizeof(tk__heap_entry));
}

void tk__heap_core_free_block(const tk__heap_core *h, tk__heap_entry *block, size_t capacity) {
    if (h != NULL && block != NULL)
        tk__free(h->allocator, block, capacity * sizeof(tk__heap_entry));
}

bool tk__heap_core_adopt(tk__heap_core *h, tk__heap_entry *block, size_t capacity,
                         tk__heap_entry **old_block, size_t *old_capacity) {
    if (h == NULL || block == NULL || old_block == NULL || old_capacity == NULL)
        return false;
    size_t want = tk__heap_core_wanted_capacity(h);
    size_t cap = h->capacity;
    bool still_wanted;
    if (want > cap) /* growing; a block big enough to want shrinking at once is refused */
        still_wanted = capacity >= want && capacity / 4 < h->size;
    else if (want < cap) /* shrinking: any step of the way down */
        still_wanted = capacity >= want && capacity < cap;
    else
        still_wanted = false;
    if (!still_wanted)
        return false;
    *old_capacity = cap;
    *old_block = heap_move(h, block, capacity);
    return true;
}

int tk__heap_core_check(const tk__heap_core *h) {
    if (h == NULL)
        return TK_EINVAL;
    if (h->start > h->capacity || h->size > h->capacity - h->start ||
        h->capacity < h->min_capacity || h->allocator == NULL ||
        (h->capacity > 0 && h->entries == NULL))
        return TK_ESTATE;
    const tk__heap_entry *a = heap_base(h);
    for (size_t i = 0; i < h->size; i++) {
        const tk__heap_entry *e = &a[i];
        if (e->node == NULL || tk__heap_priv_of(e->node)->index != h->first + i)
            return TK_ESTATE;
        if (e->deadline_ns != e->node->deadline_ns || e->seq != e->node->seq)
            return TK_ESTATE;
        if (i > 0 && entry_less(e, &a[(i - 1) / HEAP_D]))
            return TK_ESTATE;
        if (h->sorted && i > 0 && entry_less(e, &a[i - 1]))
            return TK_ESTATE;
    }
    return TK_OK;
}
