/* SPDX-License-Identifier: MIT */
/* The passive loop (timerkit/loop.h): an engine's pure core behind four
 * calls, for a caller that drives time itself. No lock, no thread, no clock:
 * what the core's contract asks of its owner (engine.h) is kept here, so
 * that the caller cannot break it:
 *   - seq: every add gets the next number, so equal deadlines leave in the
 *     order they were added;
 *   - time: the `now` given to the core never decreases and never goes
 *     below the origin given to init(), whatever the caller passes;
 *   - expire() is asked for at least one node;
 *   - slack: every add sets the node's slack_ns (0 for tk_loop_add()), so
 *     a node from malloc() never carries a stale one. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "common-internal.h"
#include "params-internal.h"
#include "timerkit/engine.h"
#include "timerkit/loop.h"
#include "timerkit/queue.h"

struct tk_loop {
    const tk_queue_ops *engine;
    const tk_core_ops *core;
    const tk_allocator *allocator;
    size_t bytes;   /* of this block: the header and the core's state */
    uint64_t seq;   /* the next add's sequence number */
    int64_t now_ns; /* the latest time given to the core */
    void *state;    /* the core's state, after the header */
};

/* The core's state starts at the first offset aligned for any type. */
#define STATE_OFFSET TK__MAX_ALIGN_UP(sizeof(struct tk_loop))

static bool core_has_what_a_loop_needs(const tk_core_ops *c) {
    return c != NULL && c->init != NULL && c->destroy != NULL && c->insert != NULL &&
           c->remove != NULL && c->next != NULL && c->expire != NULL && c->count != NULL;
}

int tk_loop_create(const tk_queue_config *cfg, int64_t now_ns, tk_loop **out) {
    if (out == NULL)
        return TK_EINVAL;
    *out = NULL;
    const tk_queue_ops *engine =
        cfg != NULL && cfg->engine != NULL ? cfg->engine : tk_engine_default();
    if (engine == NULL)
        return TK_EINVAL;
    if (!core_has_what_a_loop_needs(engine->core))
        return TK_ENOTSUP;
    tk_queue_config c;
    if (tk__queue_config_resolve(engine, cfg, &c, NULL, 0) != TK_OK)
        return TK_EINVAL;
    const tk_core_ops *core = engine->core;
    if (core->size > SIZE_MAX - STATE_OFFSET)
        return TK_EINVAL;
    const tk_allocator *a = c.allocator != NULL ? c.allocator : tk_allocator_default();
    size_t bytes = STATE_OFFSET + core->size;
    tk_loop *loop = tk__alloc(a, bytes);
    if (loop == NULL)
        return TK_ENOMEM;
    memset(loop, 0, bytes);
    loop->engine = engine;
    loop->core = core;
    loop->allocator = a;
    loop->bytes = bytes;
    loop->seq = 0;
    loop->now_ns = now_ns;
    loop->state = (char *)loop + STATE_OFFSET;
    int rc = core->init(loop->state, tk__queue_config_params(&c), a, now_ns);
    if (rc != TK_OK) {
        tk__free(a, loop, bytes);
        return rc == TK_EINVAL ? TK_EINVAL : TK_ENOMEM;
    }
    *out = loop;
    return TK_OK;
}

void tk_loop_destroy(tk_loop *loop) {
    if (loop == NULL)
        return;
    loop->core->destroy(loop->state);
    tk__free(loop->allocator, loop, loop->bytes);
}

int tk_loop_add_within(tk_loop *loop, tk_node *node, int64_t deadline_ns, int64_t slack_ns) {
    if (loop == NULL || node == NULL || slack_ns < 0)
        return TK_EINVAL;
    /* The core tells a node it holds from its private area; keep the area
     * as it is so that a second add of a held node is refused, and give a
     * refused node its old key back (it may be held, by this loop or
     * another). */
    int64_t old_deadline = node->deadline_ns;
    uint64_t old_seq = node->seq;
    int64_t old_slack = node->slack_ns;
    node->deadline_ns = deadline_ns;
    node->seq = loop->seq;
    node->slack_ns = slack_ns;
    int rc = loop->core->insert(loop->state, node);
    if (rc != TK_OK) {
        node->deadline_ns = old_deadline;
        node->seq = old_seq;
        node->slack_ns = old_slack;
        return rc == TK_ENOMEM || rc == TK_EFULL ? TK_ENOMEM : TK_EINVAL;
    }
    loop->seq++;
    return TK_OK;
}

int tk_loop_add(tk_loop *loop, tk_node *node, int64_t deadline_ns) {
    return tk_loop_add_within(loop, node, deadline_ns, 0);
}

int tk_loop_remove(tk_loop *loop, tk_node *node) {
    if (loop == NULL || node == NULL)
        return TK_EINVAL;
    return loop->core->remove(loop->state, node) == TK_OK ? TK_OK : TK_ENOENT;
}

int tk_loop_next(const tk_loop *loop, int64_t *when_ns) {
    if (loop == NULL || when_ns == NULL)
        return TK_EINVAL;
    return loop->core->next(loop->state, when_ns) == TK_OK ? TK_OK : TK_ENOENT;
}

int tk_loop_latest(const tk_loop *loop, int64_t *when_ns) {
    if (loop == NULL || when_ns == NULL)
        return TK_EINVAL;
    /* A core without latest() ignores slack: its next() is a correct answer
     * (engine.h, "Slack"). */
    int rc = loop->core->latest != NULL ? loop->core->latest(loop->state, when_ns)
                                        : loop->core->next(loop->state, when_ns);
    return rc == TK_OK ? TK_OK : TK_ENOENT;
}

/* Whole milliseconds from now_ns to when_ns (> now_ns), rounded down or up. */
static uint64_t ms_until(int64_t now_ns, int64_t when_ns, bool up) {
    uint64_t left = (uint64_t)when_ns - (uint64_t)now_ns;
    return left / (uint64_t)TK_NS_PER_MS + (up && left % (uint64_t)TK_NS_PER_MS != 0);
}

/* The wait is a whole number of milliseconds that must end at or after
 * next() (never early: a wait that ends before it expires nothing) and
 * should end at or before latest() (within every window). The longest such
 * wait is latest() rounded down, when that still reaches next(); otherwise
 * no whole millisecond falls in [next(), latest()] and the wait is next()
 * rounded up, which passes latest() by less than a millisecond. Without
 * slack latest() == next() and this is next() rounded up. */
int tk_loop_timeout_ms(const tk_loop *loop, int64_t now_ns) {
    int64_t next, latest;
    if (tk_loop_next(loop, &next) != TK_OK || tk_loop_latest(loop, &latest) != TK_OK)
        return -1;
    if (latest <= now_ns)
        return 0;
    /* the shortest wait that is not early (none: a timer is due already,
     * and its window still open) */
    uint64_t reach = next > now_ns ? ms_until(now_ns, next, true) : 0;
    uint64_t ms = latest > next ? ms_until(now_ns, latest, false) : reach;
    if (ms < reach)
        ms = reach;
    return ms > (uint64_t)INT32_MAX ? INT32_MAX : (int)ms;
}

size_t tk_loop_expire(tk_loop *loop, int64_t now_ns, size_t max, tk_node **out) {
    if (out != NULL)
        *out = NULL;
    if (loop == NULL || out == NULL || max == 0)
        return 0;
    if (now_ns > loop->now_ns)
        loop->now_ns = now_ns;
    size_t count = 0;
    *out = loop->core->expire(loop->state, loop->now_ns, max, &count);
    return count;
}

size_t tk_loop_count(const tk_loop *loop) {
    return loop == NULL ? 0 : loop->core->count(loop->state);
}

const tk_queue_ops *tk_loop_engine(const tk_loop *loop) {
    return loop == NULL ? NULL : loop->engine;
}
