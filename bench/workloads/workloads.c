/* SPDX-License-Identifier: MIT */
/* tkbench: the table of workload descriptors, built from workloads.h, the
 * check of each, and finding a workload, a metric or a row. */
#include <stdio.h>
#include <string.h>

#include "output/output.h"
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

bool tkb_workloads_check(void) {
    bool ok = true;
    for (size_t i = 0; i < tkb_workload_count; i++) {
        const tkb_workload *w = tkb_workloads[i];
        const char *bad = NULL;
        char what[160] = "";
        if (w->name == NULL || w->group == NULL || w->summary == NULL || w->cases == NULL ||
            w->x.label == NULL || w->x.shortname == NULL || w->nmetrics == 0)
            bad =
                "needs a name, group, summary, x label and short name, metrics and a case builder";
        for (size_t j = 0; bad == NULL && j < i; j++)
            if (strcmp(tkb_workloads[j]->name, w->name) == 0)
                bad = "has the name of another workload";
        for (size_t k = 0; bad == NULL && k < w->nmetrics; k++) {
            const tkb_metric *m = &w->metrics[k];
            snprintf(what, sizeof what, "%s", m->name ? m->name : "(null)");
            if (m->name == NULL || m->label == NULL || m->unit == NULL)
                bad = "metric needs a name, a unit and a label";
            else if (tkb_unit_find(m->unit) == NULL)
                bad = "metric has an unknown unit (see tkb_units in output/results.c)";
            else if (m->head.block != 0 && m->head.head == NULL)
                bad = "metric is in the headline without a column header";
        }
        for (size_t f = 0; bad == NULL && f < w->nfigures; f++) {
            const tkb_figure *fig = &w->figures[f];
            for (int list = 0; list < 2; list++)
                for (const char *s = list ? fig->table : fig->metrics;
                     bad == NULL && s != NULL && *s;) {
                    size_t l = strcspn(s, ",");
                    snprintf(what, sizeof what, "%.*s", (int)l, s);
                    if (tkb_metric_find(w, what) == NULL)
                        bad = "figure names a metric the workload does not declare";
                    s += l + (s[l] == ',');
                }
            if (bad == NULL && fig->kind == TKB_FIG_FRONTIER &&
                (fig->metrics == NULL || strchr(fig->metrics, ',') == NULL ||
                 strchr(strchr(fig->metrics, ',') + 1, ',') != NULL)) {
                snprintf(what, sizeof what, "%s", fig->name ? fig->name : "(unnamed)");
                bad = "frontier figure needs two metrics, x then y";
            }
            for (size_t r = 0; bad == NULL && r < TKB_COUNT(fig->refs); r++)
                if (fig->refs[r].workload != NULL &&
                    tkb_metric_find(fig->refs[r].workload, fig->refs[r].metric) == NULL) {
                    snprintf(what, sizeof what, "%s", fig->refs[r].metric);
                    bad = "figure refers to a metric its reference workload does not declare";
                }
        }
        for (int s = 0; bad == NULL && s < TKB_NSUITES; s++)
            if (w->plan[s].reps < 1)
                bad = "plan of a suite has no repetitions";
        if (bad != NULL) {
            fprintf(stderr, "tkbench: workload descriptor %s%s%s: %s\n",
                    w->name ? w->name : "(unnamed)", what[0] ? " " : "", what, bad);
            ok = false;
        }
    }
    return ok;
}

tkb_plan tkb_plan_of(const tkb_workload *w, int s) {
    tkb_plan p = w->plan[s];
    if (w->machine_sizes != NULL) {
        memset(p.sizes, 0, sizeof p.sizes);
        w->machine_sizes(p.sizes, TKB_COUNT(p.sizes));
    }
    return p;
}

const char *tkb_level_name(tkb_level l) {
    return l == TKB_LEVEL_MACHINE ? "machine" : l == TKB_LEVEL_CORE ? "core" : "executor";
}

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
