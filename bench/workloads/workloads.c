/* SPDX-License-Identifier: MIT */
/* tkbench: the table of workload descriptors, built from workloads.h. */
#include <string.h>

#include "tkbench.h"
#include "workloads/workloads.h"

#ifdef TKB_TEST_WORKLOADS
#include TKB_TEST_WORKLOADS /* defines TKB_TEST_WORKLOAD_LIST(X) */
#else
#define TKB_TEST_WORKLOAD_LIST(X)
#endif

#define TKB_DECLARE(id) extern const tkb_workload tkb_wl_##id;
TKB_WORKLOAD_LIST(TKB_DECLARE)
TKB_TEST_WORKLOAD_LIST(TKB_DECLARE)
#undef TKB_DECLARE

#define TKB_ENTRY(id) &tkb_wl_##id,
const tkb_workload *const tkb_workloads[] = {TKB_WORKLOAD_LIST(TKB_ENTRY)
                                                 TKB_TEST_WORKLOAD_LIST(TKB_ENTRY)};
#undef TKB_ENTRY
const size_t tkb_workload_count = TKB_COUNT(tkb_workloads);

const tkb_workload *tkb_workload_find(const char *name) {
    for (size_t i = 0; i < tkb_workload_count; i++)
        if (strcmp(tkb_workloads[i]->name, name) == 0)
            return tkb_workloads[i];
    return NULL;
}

const tkb_metric *tkb_metric_find(const tkb_workload *w, const char *name) {
    for (size_t i = 0; i < w->nmetrics; i++)
        if (strcmp(w->metrics[i].name, name) == 0)
            return &w->metrics[i];
    return NULL;
}

const tkb_workload *tkb_workload_of_row(const char *row, int *variant) {
    *variant = -1;
    for (size_t i = 0; i < tkb_workload_count; i++) {
        const tkb_workload *w = tkb_workloads[i];
        size_t l = strlen(w->name);
        if (w->instance_rows && strncmp(row, w->name, l) == 0 && row[l] == ':' && row[l + 1])
            return w;
        if (w->nvariants == 0) {
            if (strcmp(row, w->name) == 0)
                return w;
            continue;
        }
        if (strncmp(row, w->name, l) != 0 || row[l] != '_')
            continue;
        for (size_t v = 0; v < w->nvariants; v++)
            if (strcmp(row + l + 1, w->variants[v]) == 0) {
                *variant = (int)v;
                return w;
            }
    }
    return NULL;
}
