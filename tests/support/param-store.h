/* SPDX-License-Identifier: MIT */
/* timerkit tests: writing a parameter straight into a config, past the
 * range checks of tk_queue_config_set_value(), as a caller who writes the
 * struct could, so that tests can show create() refusing it. */
#ifndef TK_TEST_PARAM_STORE_H
#define TK_TEST_PARAM_STORE_H

#include <stdint.h>
#include <string.h>

#include "timerkit/queue.h"

/* Stores the low p->size bytes of v in p's field of cfg: a field of
 * tk_queue_config itself for a TK_PARAM_ADAPTER entry, else of the engine's
 * parameter struct (cfg must then name the engine p belongs to). */
static inline void tkt_param_store(tk_queue_config *cfg, const tk_queue_param *p, uint64_t v) {
    unsigned char *at = (p->flags & TK_PARAM_ADAPTER) != 0 ? (unsigned char *)cfg + p->offset
                                                           : cfg->params.bytes + p->offset;
    if (p->size == 8) {
        memcpy(at, &v, 8);
    } else if (p->size == 4) {
        uint32_t r = (uint32_t)v;
        memcpy(at, &r, 4);
    } else if (p->size == 2) {
        uint16_t r = (uint16_t)v;
        memcpy(at, &r, 2);
    } else {
        uint8_t r = (uint8_t)v;
        memcpy(at, &r, 1);
    }
}

/* The values of p a create() must refuse, into out[] (at most 3): one below
 * its minimum (when the field can hold it), one above its maximum, and the
 * largest value its field holds (when above the maximum). Returns how many. */
static inline int tkt_param_bad_values(const tk_queue_param *p, uint64_t out[3]) {
    int n = 0;
    uint64_t field_max = p->size >= 8
                             ? (p->type == TK_PARAM_DURATION ? (uint64_t)INT64_MAX : UINT64_MAX)
                             : (UINT64_C(1) << (8 * p->size)) - 1;
    if (p->type == TK_PARAM_DURATION) {
        if (p->min > INT64_MIN)
            out[n++] = (uint64_t)(p->min - 1);
        if (p->max < INT64_MAX)
            out[n++] = (uint64_t)(p->max + 1);
    } else {
        if (p->min > 0)
            out[n++] = (uint64_t)(p->min - 1);
        if ((uint64_t)p->max < field_max) {
            out[n++] = (uint64_t)p->max + 1;
            out[n++] = field_max;
        }
    }
    return n;
}

#endif
