/* SPDX-License-Identifier: MIT */
/* tkbench: Google Benchmark's JSON into rows, rows into results.csv, and the
 * headline tables printed at the end of a run. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "util.h"

const tkb_unit tkb_units[] = {
    {"ns", "ns", false, ""},    {"us", "µs", false, ""},       {"ms", "ms", false, ""},
    {"per_s", "1/s", true, ""}, {"bytes", "bytes", true, "B"}, {"count", "count", false, ""},
    {"pct", "%", false, ""},
};
const size_t tkb_unit_count = TKB_COUNT(tkb_units);

const tkb_unit *tkb_unit_find(const char *name) {
    for (size_t i = 0; i < tkb_unit_count; i++)
        if (strcmp(tkb_units[i].name, name) == 0)
            return &tkb_units[i];
    return NULL;
}

void tkb_rows_free(tkb_rows *rows) {
    free(rows->v);
    *rows = (tkb_rows){0};
}

static int add_row(tkb_rows *rows, const tkb_case *c, const tkb_metric *m, int rep, double value) {
    if (rows->n == rows->cap) {
        size_t nc = rows->cap ? rows->cap * 2 : 256;
        tkb_row *nr = realloc(rows->v, nc * sizeof *nr);
        if (nr == NULL)
            return -1;
        rows->v = nr;
        rows->cap = nc;
    }
    rows->v[rows->n++] = (tkb_row){c, m, rep, value};
    return 0;
}

/* The case a GB benchmark name belongs to: the longest case name that is a
 * prefix of it up to a '/' (GB appends /repeats:K, /manual_time...). */
static const tkb_case *case_for(const char *name, const tkb_case *cases, size_t ncases) {
    const tkb_case *best = NULL;
    size_t bestlen = 0;
    for (size_t i = 0; i < ncases; i++) {
        size_t l = strlen(cases[i].name);
        if (l > bestlen && strncmp(name, cases[i].name, l) == 0 &&
            (name[l] == '/' || name[l] == 0)) {
            best = &cases[i];
            bestlen = l;
        }
    }
    return best;
}

/* Keys Google Benchmark writes itself; every other number is a counter. */
static bool is_gb_key(const char *k) {
    static const char *const keys[] = {"name",
                                       "family_index",
                                       "per_family_instance_index",
                                       "run_name",
                                       "run_type",
                                       "repetitions",
                                       "repetition_index",
                                       "threads",
                                       "iterations",
                                       "real_time",
                                       "cpu_time",
                                       "time_unit",
                                       "items_per_second",
                                       "bytes_per_second",
                                       "label",
                                       "error_occurred",
                                       "error_message",
                                       "aggregate_name",
                                       "aggregate_unit"};
    for (size_t i = 0; i < TKB_COUNT(keys); i++)
        if (strcmp(k, keys[i]) == 0)
            return true;
    return false;
}

/* Google Benchmark writes NaN and inf as bare tokens (e.g. the coefficient of
 * variation of a counter that is 0 in every repetition), which is not JSON:
 * turn them into null (same length padding) before parsing. The raw file on
 * disk is left as GB wrote it. */
static void json_fix_nonfinite(char *s) {
    static const char *const toks[] = {"-nan", "nan", "NaN", "-inf", "inf", "Infinity"};
    bool in_str = false;
    for (char *p = s; *p; p++) {
        if (*p == '"' && (p == s || p[-1] != '\\')) {
            in_str = !in_str;
            continue;
        }
        if (in_str)
            continue;
        for (size_t t = 0; t < TKB_COUNT(toks); t++) {
            size_t l = strlen(toks[t]);
            if (strncmp(p, toks[t], l) == 0) {
                if (l >= 4) {
                    memcpy(p, "null", 4);
                    memset(p + 4, ' ', l - 4);
                } else { /* "nan", "inf": too short for null; only in aggregates */
                    memcpy(p, "0  ", 3);
                }
                p += l - 1;
                break;
            }
        }
    }
}

int tkb_results_collect(const char *json_path, const tkb_case *cases, size_t ncases, tkb_rows *rows,
                        int *failed, json_t **context) {
    json_error_t err;
    *context = NULL;
    char *text = tkb_slurp(json_path);
    if (text == NULL) {
        fprintf(stderr, "tkbench: cannot read %s: %s\n", json_path, strerror(errno));
        return -1;
    }
    json_fix_nonfinite(text);
    json_t *root = json_loads(text, 0, &err);
    free(text);
    if (root == NULL) {
        fprintf(stderr, "tkbench: cannot read %s: line %d: %s\n", json_path, err.line, err.text);
        return -1;
    }
    *context = json_incref(json_object_get(root, "context"));
    json_t *arr = json_object_get(root, "benchmarks");
    size_t i;
    json_t *b;
    json_array_foreach(arr, i, b) {
        const char *name = json_string_value(json_object_get(b, "name"));
        const char *type = json_string_value(json_object_get(b, "run_type"));
        if (name == NULL || (type != NULL && strcmp(type, "iteration") != 0))
            continue;
        if (json_is_true(json_object_get(b, "error_occurred"))) {
            (*failed)++;
            continue;
        }
        const tkb_case *c = case_for(name, cases, ncases);
        if (c == NULL)
            continue;
        int rep = (int)json_integer_value(json_object_get(b, "repetition_index"));
        if (c->time_metric) {
            const tkb_metric *m = tkb_metric_find(c->wl, c->time_metric);
            if (m == NULL ||
                add_row(rows, c, m, rep, json_number_value(json_object_get(b, "real_time"))) != 0) {
                fprintf(stderr, "tkbench: %s: no row for %s\n", c->name, c->time_metric);
                (*failed)++;
            }
            continue;
        }
        const char *k;
        json_t *v;
        json_object_foreach(b, k, v) {
            if (is_gb_key(k) || !json_is_number(v))
                continue;
            const tkb_metric *m = tkb_metric_find(c->wl, k);
            if (m == NULL) {
                fprintf(stderr,
                        "tkbench: %s reported the counter '%s', which workload %s does not "
                        "declare (add it to the descriptor's metrics)\n",
                        c->name, k, c->wl->name);
                (*failed)++;
                continue;
            }
            if (add_row(rows, c, m, rep, json_number_value(v)) != 0) {
                (*failed)++;
                break;
            }
        }
    }
    json_decref(root);
    return 0;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void put_field(FILE *f, const char *s) {
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int tkb_results_write_csv(const char *path, const tkb_rows *rows) {
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "peer,workload,n,metric,value,unit,rep\n");
    for (size_t i = 0; i < rows->n; i++) {
        const tkb_row *r = &rows->v[i];
        put_field(f, r->c->peer->spec);
        fprintf(f, ",%s,%.10g,%s,%.9g,%s,%d\n", r->c->row, r->c->n, r->m->name, r->value,
                r->m->unit, r->rep);
    }
    return fclose(f);
}

/* ---- headline ---------------------------------------------------------------- */
/* Median over repetitions of (peer, row, metric) at the peer's largest n;
 * NAN if absent. *n_used gets that n. */
static double headline_value(const tkb_rows *rows, const tkb_peer *p, const char *row,
                             const tkb_metric *m, double *n_used) {
    double best_n = -1;
    size_t count = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const tkb_row *r = &rows->v[i];
        if (r->c->peer == p && r->m == m && strcmp(r->c->row, row) == 0 && r->c->n > best_n)
            best_n = r->c->n;
    }
    if (best_n < 0)
        return NAN;
    double *v = malloc(rows->n * sizeof *v);
    if (v == NULL)
        return NAN;
    for (size_t i = 0; i < rows->n; i++) {
        const tkb_row *r = &rows->v[i];
        if (r->c->peer == p && r->m == m && r->c->n == best_n && strcmp(r->c->row, row) == 0)
            v[count++] = r->value;
    }
    double med = tkb_median(v, count);
    free(v);
    *n_used = best_n;
    return med;
}

typedef struct head_col {
    const tkb_workload *wl;
    const tkb_metric *m;
    double max_n; /* over peers */
} head_col;

#define HEAD_W 9

/* Prints headline table `block`, under the title if *titled is still false;
 * prints nothing when no metric of the block has rows. */
static void print_block(const tkb_rows *rows, const tkb_peer *peers, size_t npeers, int block,
                        bool *titled) {
    head_col cols[32];
    size_t ncols = 0;
    for (size_t w = 0; w < tkb_workload_count; w++) {
        const tkb_workload *wl = tkb_workloads[w];
        if (wl->level == TKB_LEVEL_MACHINE || wl->instance_rows)
            continue;
        for (size_t k = 0; k < wl->nmetrics && ncols < TKB_COUNT(cols); k++) {
            const tkb_metric *m = &wl->metrics[k];
            if (m->head.block != block)
                continue;
            head_col col = {wl, m, -1};
            for (size_t p = 0; p < npeers; p++) {
                double n = -1;
                if (!isnan(headline_value(rows, &peers[p], wl->name, m, &n)) && n > col.max_n)
                    col.max_n = n;
            }
            if (col.max_n >= 0)
                cols[ncols++] = col;
        }
    }
    if (ncols == 0)
        return;
    if (!*titled)
        printf("\nHeadline: medians over repetitions, at each peer's largest n "
               "(* = a smaller n than other peers')");
    *titled = true;
    int pw = 16;
    for (size_t p = 0; p < npeers; p++)
        if ((int)strlen(peers[p].label) > pw)
            pw = (int)strlen(peers[p].label);
    for (int line = 0; line < 2; line++) {
        printf("\n%-*s", pw, line == 0 ? "peer" : "");
        for (size_t j = 0; j < ncols; j++) {
            const tkb_metric *m = cols[j].m;
            char unit[32];
            const tkb_unit *u = tkb_unit_find(m->unit);
            if (m->head.head_unit != NULL)
                snprintf(unit, sizeof unit, "%s", m->head.head_unit);
            else
                snprintf(unit, sizeof unit, "(%s)", u != NULL ? u->name : m->unit);
            if (j > 0 && cols[j].wl->level != cols[j - 1].wl->level)
                printf(" |");
            printf(" %*s", HEAD_W, line == 0 ? m->head.head : unit);
        }
    }
    printf("\n");
    for (size_t p = 0; p < npeers; p++) {
        char line[1024];
        size_t len = (size_t)snprintf(line, sizeof line, "%-*s", pw, peers[p].label);
        bool any = false;
        for (size_t j = 0; j < ncols && len < sizeof line; j++) {
            const tkb_metric *m = cols[j].m;
            double n = -1, v = headline_value(rows, &peers[p], cols[j].wl->name, m, &n);
            char cell[32] = "-";
            if (!isnan(v)) {
                any = true;
                snprintf(cell, sizeof cell, "%.*f%s", m->head.prec,
                         v / (m->head.scale != 0 ? m->head.scale : 1),
                         n < cols[j].max_n ? "*" : "");
            }
            if (j > 0 && cols[j].wl->level != cols[j - 1].wl->level)
                len += (size_t)snprintf(line + len, sizeof line - len, " |");
            if (len < sizeof line)
                len += (size_t)snprintf(line + len, sizeof line - len, " %*s", HEAD_W, cell);
        }
        if (any)
            printf("%s\n", line);
    }
}

/* The machine-level metrics with a headline entry, as "<workload>: item,
 * item, ..." wrapped at 100 columns. */
static void print_machine(const tkb_rows *rows, const tkb_peer *peers, size_t npeers) {
    for (size_t w = 0; w < tkb_workload_count; w++) {
        const tkb_workload *wl = tkb_workloads[w];
        if (wl->level != TKB_LEVEL_MACHINE)
            continue;
        for (size_t p = 0; p < npeers; p++) {
            size_t col = 0;
            for (size_t k = 0; k < wl->nmetrics; k++) {
                const tkb_metric *m = &wl->metrics[k];
                double n = -1, v;
                if (m->head.block == 0 ||
                    isnan(v = headline_value(rows, &peers[p], wl->name, m, &n)))
                    continue;
                char item[128];
                int il = snprintf(item, sizeof item, "%s %.*f %s", m->head.head, m->head.prec,
                                  v / (m->head.scale != 0 ? m->head.scale : 1),
                                  m->head.head_unit ? m->head.head_unit : m->unit);
                if (col == 0)
                    col = (size_t)printf("\n%s:", wl->name) - 1;
                else if (col + (size_t)il + 2 > 100)
                    col = (size_t)printf(",\n     ") - 2;
                else
                    col += (size_t)printf(",");
                col += (size_t)printf(" %s", item);
            }
            if (col > 0)
                printf("\n");
        }
    }
}

/* A table per row of a workload with instance rows (a trace of the replay):
 * its metrics with a headline entry, a line per peer. */
static void print_instances(const tkb_rows *rows, const tkb_peer *peers, size_t npeers) {
    int pw = 16;
    for (size_t p = 0; p < npeers; p++)
        if ((int)strlen(peers[p].label) > pw)
            pw = (int)strlen(peers[p].label);
    for (size_t i = 0; i < rows->n; i++) {
        const tkb_case *c = rows->v[i].c;
        bool first = c->wl->instance_rows;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(rows->v[j].c->row, c->row) != 0;
        if (!first)
            continue;
        const tkb_workload *wl = c->wl;
        printf("\n%s, %.10g events: medians over repetitions\n%-*s", c->row, c->n, pw, "peer");
        for (size_t k = 0; k < wl->nmetrics; k++)
            if (wl->metrics[k].head.block != 0)
                printf(" %*s", HEAD_W, wl->metrics[k].head.head);
        printf("\n%-*s", pw, "");
        for (size_t k = 0; k < wl->nmetrics; k++) {
            const tkb_metric *m = &wl->metrics[k];
            char unit[32];
            if (m->head.head_unit != NULL)
                snprintf(unit, sizeof unit, "%s", m->head.head_unit);
            else
                snprintf(unit, sizeof unit, "(%s)", m->unit);
            if (m->head.block != 0)
                printf(" %*s", HEAD_W, unit);
        }
        printf("\n");
        for (size_t p = 0; p < npeers; p++) {
            char line[1024];
            size_t len = (size_t)snprintf(line, sizeof line, "%-*s", pw, peers[p].label);
            bool any = false;
            for (size_t k = 0; k < wl->nmetrics && len < sizeof line; k++) {
                const tkb_metric *m = &wl->metrics[k];
                if (m->head.block == 0)
                    continue;
                double n = -1, v = headline_value(rows, &peers[p], c->row, m, &n);
                char cell[32] = "-";
                if (!isnan(v)) {
                    any = true;
                    snprintf(cell, sizeof cell, "%.*f", m->head.prec,
                             v / (m->head.scale != 0 ? m->head.scale : 1));
                }
                len += (size_t)snprintf(line + len, sizeof line - len, " %*s", HEAD_W, cell);
            }
            if (any)
                printf("%s\n", line);
        }
    }
}

void tkb_results_headline(const tkb_rows *rows, const tkb_peer *peers, size_t npeers) {
    bool titled = false;
    for (int block = 1; block <= 2; block++)
        print_block(rows, peers, npeers, block, &titled);
    print_machine(rows, peers, npeers);
    print_instances(rows, peers, npeers);
}

/* results.csv's reader side (manifests for older folders, the advisor). */
int tkb_csv_split(char *line, char **f, int max) {
    int n = 0;
    char *p = line;
    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        if (*p == '"') {
            char *w = ++p;
            f[n++] = w;
            while (*p != '\0') {
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            *w = '\0';
            p += strcspn(p, ",");
        } else {
            f[n++] = p;
            p += strcspn(p, ",");
        }
        if (*p != ',')
            break;
        *p++ = '\0';
    }
    return n;
}
