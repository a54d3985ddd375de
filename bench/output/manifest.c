/* SPDX-License-Identifier: MIT */
/* tkbench: manifest.json, everything the renderer and `compare` need to know
 * about a results folder (docs/results-format.md), derived from the workload
 * descriptors and the peers of the run. A folder written before manifests
 * existed gets one from the descriptors compiled into this tkbench
 * (`tkbench manifest DIR`). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/output.h"

static const char *better_name(tkb_better b) {
    return b == TKB_BETTER_LOWER ? "lower" : b == TKB_BETTER_HIGHER ? "higher" : "none";
}

static const char *scale_name(tkb_scale s) {
    return s == TKB_SCALE_LOG ? "log" : s == TKB_SCALE_LIN ? "lin" : "auto";
}

/* "W1_core" -> "w1_core" */
static void lower(char *out, size_t len, const char *s) {
    size_t i = 0;
    for (; s[i] != '\0' && i + 1 < len; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

/* A metric's name without its unit suffix: "schedule_ns" -> "schedule". */
static void stem(char *out, size_t len, const char *metric) {
    snprintf(out, len, "%s", metric);
    for (size_t i = 0; i < tkb_unit_count; i++) {
        size_t l = strlen(out), u = strlen(tkb_units[i].name);
        if (l > u + 1 && out[l - u - 1] == '_' && strcmp(out + l - u, tkb_units[i].name) == 0) {
            out[l - u - 1] = '\0';
            return;
        }
    }
}

/* Does the comma-separated `list` name `item`? */
static bool list_has(const char *list, const char *item) {
    size_t len = strlen(item);
    for (const char *s = list; s != NULL && *s != '\0';) {
        const char *end = strchr(s, ',');
        size_t n = end != NULL ? (size_t)(end - s) : strlen(s);
        if (n == len && strncmp(s, item, n) == 0)
            return true;
        s += n + (end != NULL);
    }
    return false;
}

static json_t *metric_json(const tkb_metric *m) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "unit", json_string(m->unit));
    json_object_set_new(o, "better", json_string(better_name(m->better)));
    json_object_set_new(o, "label", json_string(m->label));
    json_object_set_new(o, "pct", m->pct > 0 ? json_real(m->pct) : json_null());
    json_object_set_new(o, "field", json_integer(m->field));
    if (m->head.block != 0) {
        json_t *h = json_object();
        json_object_set_new(h, "block", json_integer(m->head.block));
        json_object_set_new(h, "head", json_string(m->head.head));
        json_object_set_new(h, "head_unit",
                            json_string(m->head.head_unit ? m->head.head_unit : ""));
        json_object_set_new(h, "scale", json_real(m->head.scale != 0 ? m->head.scale : 1));
        json_object_set_new(h, "prec", json_integer(m->head.prec));
        json_object_set_new(o, "headline", h);
    } else {
        json_object_set_new(o, "headline", json_null());
    }
    return o;
}

/* The row name of an instance: "<name>:<instance>" -> "<instance>". */
static const char *instance_of(const char *row) {
    const char *c = strchr(row, ':');
    return c != NULL ? c + 1 : row;
}

/* extra_metrics (may be NULL): metrics beyond the descriptor's; the reference
 * is stolen. inst: the rows of a workload with instance rows (strings). */
/* A workload's table of differences to another workload's metrics. */
static json_t *diff_json(const tkb_diff *d) {
    json_t *o = json_object(), *cols = json_array();
    json_object_set_new(o, "minus", json_string(d->minus->name));
    json_object_set_new(o, "label", json_string(d->label));
    for (size_t i = 0; i < TKB_COUNT(d->cols) && d->cols[i].metric != NULL; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "metric", json_string(d->cols[i].metric));
        json_object_set_new(c, "minus", json_string(d->cols[i].minus));
        json_object_set_new(c, "aim", d->cols[i].aim > 0 ? json_real(d->cols[i].aim) : json_null());
        json_array_append_new(cols, c);
    }
    json_object_set_new(o, "columns", cols);
    return o;
}

static json_t *workload_json(const tkb_workload *w, int reps, json_t *extra_metrics,
                             const json_t *inst) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(w->name));
    json_object_set_new(o, "group", json_string(w->group));
    json_object_set_new(o, "level", json_string(tkb_level_name(w->level)));
    json_object_set_new(o, "summary", json_string(w->summary));
    json_t *x = json_object();
    json_object_set_new(x, "label", json_string(w->x.label));
    json_object_set_new(x, "short", json_string(w->x.shortname));
    json_object_set_new(x, "scale", json_string(scale_name(w->x.scale)));
    json_object_set_new(o, "x", x);
    json_object_set_new(o, "reps", json_integer(reps));
    json_t *rows = json_array();
    size_t ii;
    json_t *iv;
    json_array_foreach(inst, ii, iv) {
        json_t *r = json_object();
        json_object_set_new(r, "workload", json_string(json_string_value(iv)));
        json_object_set_new(r, "label", json_string(instance_of(json_string_value(iv))));
        json_array_append_new(rows, r);
    }
    if (w->nvariants == 0 && !w->instance_rows) {
        json_t *r = json_object();
        json_object_set_new(r, "workload", json_string(w->name));
        json_object_set_new(r, "label", json_string(""));
        json_array_append_new(rows, r);
    }
    for (size_t v = 0; v < w->nvariants; v++) {
        char row[64];
        snprintf(row, sizeof row, "%s_%s", w->name, w->variants[v]);
        json_t *r = json_object();
        json_object_set_new(r, "workload", json_string(row));
        json_object_set_new(r, "label", json_string(w->variants[v]));
        json_array_append_new(rows, r);
    }
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "hist", json_boolean(w->hist));
    json_t *ms = json_array();
    for (size_t i = 0; i < w->nmetrics; i++)
        json_array_append_new(ms, metric_json(&w->metrics[i]));
    if (extra_metrics != NULL) { /* stolen */
        json_array_extend(ms, extra_metrics);
        json_decref(extra_metrics);
    }
    json_object_set_new(o, "metrics", ms);
    if (w->diff.minus != NULL)
        json_object_set_new(o, "diff", diff_json(&w->diff));
    return o;
}

static json_t *axis(const char *label, tkb_scale scale, double min_top) {
    json_t *a = json_object();
    json_object_set_new(a, "label", json_string(label));
    json_object_set_new(a, "scale", json_string(scale_name(scale)));
    json_object_set_new(a, "min_top", min_top > 0 ? json_real(min_top) : json_null());
    return a;
}

static json_t *series(const char *row, const char *metric, const char *label) {
    json_t *s = json_object();
    json_object_set_new(s, "workload", json_string(row));
    json_object_set_new(s, "metric", json_string(metric));
    json_object_set_new(s, "label", json_string(label));
    return s;
}

static json_t *refs_json(const tkb_figure *f) {
    json_t *a = json_array();
    for (size_t i = 0; f != NULL && i < TKB_COUNT(f->refs); i++) {
        const tkb_ref *r = &f->refs[i];
        if (r->workload == NULL)
            continue;
        const tkb_metric *m = tkb_metric_find(r->workload, r->metric);
        json_t *o = json_object();
        json_object_set_new(o, "workload", json_string(r->workload->name));
        json_object_set_new(o, "metric", json_string(r->metric));
        json_object_set_new(o, "label", json_string(r->label));
        json_object_set_new(o, "pct", m != NULL && m->pct > 0 ? json_real(m->pct) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *figure(const char *name, const char *kind, const tkb_workload *w, bool wide,
                      const char *title, const char *caption) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "workload", json_string(w->name));
    json_object_set_new(o, "size", json_string(wide ? "double" : "single"));
    json_object_set_new(o, "title", json_string(title));
    json_object_set_new(o, "caption", json_string(caption));
    return o;
}

/* A file-name part: anything but [A-Za-z0-9_.-] becomes '_'. */
static void file_part(char *out, size_t len, const char *s) {
    size_t i = 0;
    for (; s[i] != '\0' && i + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (char)(isalnum(c) || c == '_' || c == '.' || c == '-' ? c : '_');
    }
    out[i] = '\0';
}

/* A figure of one instance row: its name gets _<instance>, its title the row. */
static void instance_names(char *name, size_t nlen, char *title, size_t tlen, const char *row) {
    if (row == NULL)
        return;
    char part[96], t[160];
    file_part(part, sizeof part, instance_of(row));
    size_t l = strlen(name);
    snprintf(name + l, nlen - l, "_%s", part);
    const char *colon = strchr(title, ':');
    snprintf(t, sizeof t, "%s%s", row, colon != NULL ? colon : title);
    snprintf(title, tlen, "%s", t);
}

/* The two figures drawn from a workload's histograms (row: an instance row,
 * or NULL: the workload's). */
static void lateness_figures(json_t *out, const tkb_workload *w, const tkb_figure *f,
                             const char *row) {
    char prefix[64], name[160], title[192];
    if (f->name != NULL)
        snprintf(prefix, sizeof prefix, "%s", f->name);
    else
        lower(prefix, sizeof prefix, w->name);
    static const struct {
        const char *suffix, *kind, *title, *caption, *xlabel, *ylabel;
        tkb_scale xs, ys;
    } parts[] = {
        {"percentiles", "percentiles", "lateness by percentile",
         "HdrHistogram-style percentile plot: x is 1/(1-p) on a log scale. Lateness = callback "
         "start minus deadline.",
         "percentile (%)", "lateness", TKB_SCALE_LOG, TKB_SCALE_LOG},
        {"cdf", "cdf", "lateness CDF",
         "Cumulative distribution of lateness. Lateness = callback start minus deadline.",
         "lateness", "timers fired (%)", TKB_SCALE_LOG, TKB_SCALE_LIN},
    };
    for (size_t i = 0; i < TKB_COUNT(parts); i++) {
        snprintf(name, sizeof name, "%s_%s", prefix, parts[i].suffix);
        snprintf(title, sizeof title, "%s: %s", w->name, parts[i].title);
        instance_names(name, sizeof name, title, sizeof title, row);
        json_t *o = figure(name, parts[i].kind, w, f->wide, title,
                           f->caption != NULL ? f->caption : parts[i].caption);
        json_object_set_new(o, "x", axis(parts[i].xlabel, parts[i].xs, 0));
        json_object_set_new(o, "y", axis(parts[i].ylabel, parts[i].ys, 0));
        json_t *s = json_array();
        for (size_t k = 0; k < w->nmetrics; k++)
            if (w->metrics[k].pct > 0)
                json_array_append_new(s, series(row != NULL ? row : w->name, w->metrics[k].name,
                                                w->metrics[k].label));
        json_object_set_new(o, "series", s);
        json_object_set_new(o, "refs", refs_json(f));
        json_array_append_new(out, o);
    }
}

static const char *fig_kind_name(tkb_fig_kind k) {
    return k == TKB_FIG_LINES ? "lines" : k == TKB_FIG_BARS ? "bars" : "panels";
}

/* A figure of metrics (lines, bars, panels). Bars of a workload with variants
 * get a group per variant. */
static void metric_figure(json_t *out, const tkb_workload *w, const tkb_figure *f,
                          const char *metrics, const char *row) {
    const tkb_metric *first = NULL;
    json_t *s = json_array();
    for (size_t k = 0; k < w->nmetrics; k++) {
        const tkb_metric *m = &w->metrics[k];
        if (!list_has(metrics, m->name))
            continue;
        first = first != NULL ? first : m;
        if (row != NULL) {
            json_array_append_new(s, series(row, m->name, m->label));
        } else if (w->nvariants > 0 && f->kind == TKB_FIG_BARS) {
            for (size_t v = 0; v < w->nvariants; v++) {
                char vrow[64];
                snprintf(vrow, sizeof vrow, "%s_%s", w->name, w->variants[v]);
                json_array_append_new(s, series(vrow, m->name, w->variants[v]));
            }
        } else if (w->nvariants > 0) {
            for (size_t v = 0; v < w->nvariants; v++) {
                char vrow[64];
                snprintf(vrow, sizeof vrow, "%s_%s", w->name, w->variants[v]);
                json_array_append_new(s, series(vrow, m->name, m->label));
            }
        } else {
            json_array_append_new(s, series(w->name, m->name, m->label));
        }
    }
    if (first == NULL) {
        json_decref(s);
        return;
    }
    char name[160], title[192], st[64];
    if (f->name != NULL) {
        snprintf(name, sizeof name, "%s", f->name);
    } else {
        lower(name, sizeof name, w->name);
        stem(st, sizeof st, first->name);
        snprintf(name + strlen(name), sizeof name - strlen(name), "_%s", st);
    }
    snprintf(title, sizeof title, "%s", f->title ? f->title : "");
    if (f->title == NULL)
        snprintf(title, sizeof title, "%s: %s", w->name, first->label);
    instance_names(name, sizeof name, title, sizeof title, row);
    json_t *o = figure(name, fig_kind_name(f->kind), w, f->wide, title,
                       f->caption ? f->caption : w->summary);
    json_object_set_new(o, "x",
                        axis(f->xlabel ? f->xlabel : w->x.label,
                             f->xscale != TKB_SCALE_AUTO ? f->xscale : w->x.scale, 0));
    json_object_set_new(o, "y", axis(f->ylabel ? f->ylabel : first->label, f->yscale, f->ymin_top));
    json_object_set_new(o, "series", s);
    json_object_set_new(o, "refs", refs_json(f));
    json_array_append_new(out, o);
}

/* A frontier: its two metrics (x, then y) as its two series, in that order. */
static void frontier_figure(json_t *out, const tkb_workload *w, const tkb_figure *f,
                            const char *row) {
    const char *comma = strchr(f->metrics, ',');
    char xname[64];
    snprintf(xname, sizeof xname, "%.*s", (int)(comma - f->metrics), f->metrics);
    const tkb_metric *mx = tkb_metric_find(w, xname), *my = tkb_metric_find(w, comma + 1);
    char name[160], title[192];
    snprintf(name, sizeof name, "%s", f->name);
    snprintf(title, sizeof title, "%s: %s", w->name, f->title ? f->title : f->name);
    instance_names(name, sizeof name, title, sizeof title, row);
    json_t *o = figure(name, "frontier", w, f->wide, title, f->caption ? f->caption : w->summary);
    json_object_set_new(o, "x", axis(f->xlabel ? f->xlabel : mx->label, f->xscale, 0));
    json_object_set_new(o, "y", axis(f->ylabel ? f->ylabel : my->label, f->yscale, 0));
    json_t *s = json_array();
    const char *r = row != NULL ? row : w->name;
    json_array_append_new(s, series(r, mx->name, mx->label));
    json_array_append_new(s, series(r, my->name, my->label));
    json_object_set_new(o, "series", s);
    json_object_set_new(o, "refs", refs_json(f));
    json_t *table = json_array();
    for (const char *t = f->table; t != NULL && *t;) {
        size_t l = strcspn(t, ",");
        json_array_append_new(table, json_stringn(t, l));
        t += l + (t[l] == ',');
    }
    json_object_set_new(o, "table", table);
    json_array_append_new(out, o);
}

/* Each metric with a figure kind that no figure lists gets a figure of its own. */
static void metric_own_figures(json_t *out, const tkb_workload *w, const char *row) {
    for (size_t k = 0; k < w->nmetrics; k++) {
        const tkb_metric *m = &w->metrics[k];
        bool listed = false;
        for (size_t i = 0; i < w->nfigures && !listed; i++)
            listed = list_has(w->figures[i].metrics, m->name);
        if (m->figure == TKB_FIG_NONE || listed)
            continue;
        tkb_figure f = {.kind = m->figure, .yscale = TKB_SCALE_AUTO};
        metric_figure(out, w, &f, m->name, row);
    }
}

/* The figures of workload w; one set per instance row (inst: their names)
 * for a workload with instance rows. */
static void workload_figures(json_t *out, const tkb_workload *w, const json_t *inst) {
    size_t nrows = w->instance_rows ? json_array_size(inst) : 1;
    for (size_t r = 0; r < nrows; r++) {
        const char *row = w->instance_rows ? json_string_value(json_array_get(inst, r)) : NULL;
        for (size_t i = 0; i < w->nfigures; i++) {
            const tkb_figure *f = &w->figures[i];
            if (f->kind == TKB_FIG_LATENESS)
                lateness_figures(out, w, f, row);
            else if (f->kind == TKB_FIG_FRONTIER)
                frontier_figure(out, w, f, row);
            else if (f->kind != TKB_FIG_NONE)
                metric_figure(out, w, f, f->metrics, row);
        }
        metric_own_figures(out, w, row);
    }
}

static json_t *units_json(void) {
    json_t *a = json_array();
    for (size_t i = 0; i < tkb_unit_count; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(tkb_units[i].name));
        json_object_set_new(o, "text", json_string(tkb_units[i].text));
        json_object_set_new(o, "si", json_boolean(tkb_units[i].si));
        json_object_set_new(o, "si_suffix", json_string(tkb_units[i].si_suffix));
        json_array_append_new(a, o);
    }
    return a;
}

/* The spec of the peer whose core level is p's engine core: p itself, or
 * for an @embedded peer the same engine and parameters with tasks; false
 * when there is none (a baseline, a spinning peer). */
static bool core_peer(const tkb_peer *p, char *spec, size_t len) {
    if (p->engine == NULL)
        return false;
    snprintf(spec, len, "%s", p->spec);
    char *at = strrchr(spec, '@');
    if (at != NULL)
        *at = '\0';
    tkb_peer base;
    if (tkb_peer_parse(spec, &base, NULL, 0) != 0 || base.core == NULL)
        return false;
    snprintf(spec, len, "%s", base.spec);
    return true;
}

static json_t *peer_json(const tkb_peer *p) {
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(p->id));
    json_object_set_new(o, "spec", json_string(p->spec));
    json_object_set_new(o, "label", json_string(p->label));
    json_object_set_new(o, "kind", json_string(p->kind));
    json_object_set_new(o, "design", json_string(p->design != NULL ? p->design : ""));
    json_object_set_new(o, "harness", p->child ? json_string(p->child) : json_null());
    json_object_set_new(o, "engine", p->engine ? json_string(p->engine->name) : json_null());
    json_object_set_new(o, "mode",
                        p->engine ? json_string(p->embedded ? "embedded" : "task") : json_null());
    json_t *params = json_object();
    for (size_t k = 0; p->engine != NULL && k < p->engine->param_count; k++) {
        char v[64];
        if (tk_queue_param_format(&p->engine->params[k], &p->qc, v, sizeof v) == TK_OK)
            json_object_set_new(params, p->engine->params[k].key, json_string(v));
    }
    json_object_set_new(o, "params", params);
    json_t *levels = json_array();
    if (p->core)
        json_array_append_new(levels, json_string("core"));
    if (p->svc || p->child)
        json_array_append_new(levels, json_string("executor"));
    if (strcmp(p->kind, "floor") == 0)
        json_array_append_new(levels, json_string("machine"));
    json_object_set_new(o, "levels", levels);
    char core[TKB_SPEC_MAX];
    json_object_set_new(o, "core_peer",
                        core_peer(p, core, sizeof core) ? json_string(core) : json_null());
    json_object_set_new(o, "slot", json_integer(p->slot));
    /* the slack frontier's: a line per base, a point per slack */
    json_object_set_new(o, "base", json_string(p->base));
    json_object_set_new(o, "slack_ns", json_integer(p->slack_ns));
    json_object_set_new(o, "os_slack_ns", json_integer(p->os_slack_ns));
    int64_t prec = tkb_peer_precision_ns(p);
    json_object_set_new(o, "precision_ns", prec >= 0 ? json_integer(prec) : json_null());
    json_object_set_new(o, "file", json_string(p->file));
    json_object_set_new(o, "description", json_string(p->description));
    return o;
}

static json_t *manifest_new(bool synthesized) {
    json_t *m = json_object();
    json_object_set_new(m, "format", json_integer(1));
    json_object_set_new(m, "generator", json_pack("s++", "tkbench ", tk_version_string()));
    json_object_set_new(m, "synthesized", json_boolean(synthesized));
    json_object_set_new(m, "units", units_json());
    return m;
}

static int manifest_save(const char *dir, json_t *m) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    int rc = json_dump_file(m, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    if (rc != 0)
        fprintf(stderr, "tkbench: cannot write %s: %s\n", path, strerror(errno));
    json_decref(m);
    return rc == 0 ? 0 : -1;
}

static bool file_exists(const char *dir, const char *rel) {
    char path[PATH_MAX];
    struct stat sb;
    if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
        return false;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* A number, or null for 0 (not given). */
static json_t *number_or_null(double v) {
    return v != 0 ? json_real(v) : json_null();
}

/* The targets (targets.c), one per peer, those of workloads and peers
 * outside the run included: the renderer says "not run" for them. */
static json_t *targets_json(void) {
    static tkb_target_row rows[256];
    size_t n = tkb_targets_expand(rows, TKB_COUNT(rows));
    if (n > TKB_COUNT(rows)) {
        fprintf(stderr, "tkbench: %zu targets, more than %zu: the rest are left out\n", n,
                TKB_COUNT(rows));
        n = TKB_COUNT(rows);
    }
    json_t *ta = json_array();
    for (size_t i = 0; i < n; i++) {
        const tkb_target *t = rows[i].t;
        json_t *o = json_object();
        json_object_set_new(o, "workload", json_string(rows[i].row));
        json_object_set_new(o, "metric", json_string(t->metric));
        json_object_set_new(o, "peer", json_string(rows[i].peer));
        json_object_set_new(o, "ref", rows[i].ref[0] ? json_string(rows[i].ref) : json_null());
        json_object_set_new(o, "n", number_or_null(t->n));
        json_object_set_new(o, "ref_n", number_or_null(t->ref_n));
        json_object_set_new(o, "op", json_string(t->at_least ? ">=" : "<="));
        json_object_set_new(o, "bound", t->info ? json_null() : json_real(rows[i].bound));
        if (t->plus != NULL) { /* the bound adds this median (issue 28's floor term) */
            json_t *plus = json_object();
            json_object_set_new(plus, "workload", json_string(t->plus->name));
            json_object_set_new(plus, "metric", json_string(t->plus_metric));
            json_object_set_new(plus, "peer", json_string(t->plus_peer));
            json_object_set_new(o, "plus", plus);
        }
        json_object_set_new(o, "min_reps", json_integer(t->min_reps > 1 ? t->min_reps : 1));
        json_object_set_new(o, "min_cores", json_integer(t->min_cores));
        json_object_set_new(o, "what", json_string(rows[i].what));
        json_object_set_new(o, "source", json_string(t->source));
        json_array_append_new(ta, o);
    }
    return ta;
}

int tkb_manifest_write_run(const char *dir, const tkb_selected *ws, size_t nws,
                           const tkb_peer *peers, size_t npeers, const tkb_case *cases,
                           size_t ncases) {
    json_t *m = manifest_new(false);
    json_t *pa = json_array();
    for (size_t i = 0; i < npeers; i++)
        json_array_append_new(pa, peer_json(&peers[i]));
    json_object_set_new(m, "peers", pa);
    json_t *wa = json_array(), *fa = json_array();
    for (size_t t = 0; t < tkb_workload_count; t++) /* report order: the table's */
        for (size_t i = 0; i < nws; i++) {
            if (ws[i].wl != tkb_workloads[t])
                continue;
            json_t *inst = json_array(); /* the instance rows its cases named */
            for (size_t c = 0; ws[i].wl->instance_rows && c < ncases; c++) {
                bool dup = false;
                for (size_t j = 0; j < c && !dup; j++)
                    dup = cases[j].wl == ws[i].wl && strcmp(cases[j].row, cases[c].row) == 0;
                if (cases[c].wl == ws[i].wl && !dup)
                    json_array_append_new(inst, json_string(cases[c].row));
            }
            if (ws[i].wl->instance_rows && json_array_size(inst) == 0) {
                json_decref(inst); /* nothing ran: no rows to declare */
                continue;
            }
            json_array_append_new(wa, workload_json(ws[i].wl, ws[i].plan.reps, NULL, inst));
            workload_figures(fa, ws[i].wl, inst);
            json_decref(inst);
        }
    json_object_set_new(m, "workloads", wa);
    json_object_set_new(m, "figures", fa);
    json_t *ha = json_array();
    for (size_t i = 0; i < ncases; i++) {
        const tkb_case *c = &cases[i];
        char rel[PATH_MAX];
        snprintf(rel, sizeof rel, "hist/%s.%s.hgrm", c->row, c->peer->file);
        if (c->hist == NULL || !file_exists(dir, rel))
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "workload", json_string(c->row));
        json_object_set_new(o, "peer", json_string(c->peer->id));
        json_object_set_new(o, "path", json_string(rel));
        json_array_append_new(ha, o);
    }
    json_object_set_new(m, "hist", ha);
    json_object_set_new(m, "targets", targets_json());
    return manifest_save(dir, m);
}

/* ---- manifests for older folders ----------------------------------------------- */
typedef struct seen {
    char peer[TKB_SPEC_MAX];
    char row[64];
    char metric[64];
    char unit[16];
    size_t count;
} seen;

static int seen_add(seen **v, size_t *n, size_t *cap, const char *peer, const char *row,
                    const char *metric, const char *unit) {
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].peer, peer) == 0 && strcmp((*v)[i].row, row) == 0 &&
            strcmp((*v)[i].metric, metric) == 0) {
            (*v)[i].count++;
            return 0;
        }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        seen *nv = realloc(*v, nc * sizeof *nv);
        if (nv == NULL)
            return -1;
        *v = nv;
        *cap = nc;
    }
    seen *s = &(*v)[(*n)++];
    snprintf(s->peer, sizeof s->peer, "%s", peer);
    snprintf(s->row, sizeof s->row, "%s", row);
    snprintf(s->metric, sizeof s->metric, "%s", metric);
    snprintf(s->unit, sizeof s->unit, "%s", unit);
    s->count = 1;
    return 0;
}

/* Metrics the folder has for workload w (its rows) that w does not declare. */
static json_t *undeclared(const tkb_workload *w, const seen *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        int var;
        if (tkb_workload_of_row(v[i].row, &var) != w || tkb_metric_find(w, v[i].metric) != NULL)
            continue;
        bool dup = false;
        size_t k;
        json_t *o;
        json_array_foreach(a, k, o) {
            dup |= strcmp(json_string_value(json_object_get(o, "name")), v[i].metric) == 0;
        }
        if (dup)
            continue;
        tkb_metric m = {.name = v[i].metric, .unit = v[i].unit, .label = v[i].metric};
        json_array_append_new(a, metric_json(&m));
    }
    return a;
}

/* Reads DIR/results.csv into the (peer, row, metric) triples it holds, with
 * their counts. Returns 0, or 2 with a message on stderr (no such file, a
 * bad header or line, no rows). */
static int read_seen(const char *dir, seen **v, size_t *n) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "tkbench: cannot read %s: %s: not a results folder\n", path,
                strerror(errno));
        return 2;
    }
    char line[1024];
    char *fld[8];
    size_t cap = 0, lineno = 0;
    int status = 0;
    while (status == 0 && fgets(line, sizeof line, f) != NULL) {
        lineno++;
        int nf = tkb_csv_split(line, fld, 8);
        if (lineno == 1) {
            if (nf < 6 || strcmp(fld[0], "peer") != 0 || strcmp(fld[3], "metric") != 0) {
                fprintf(stderr,
                        "tkbench: %s: line 1 is not the header peer,workload,n,metric,...\n", path);
                status = 2;
            }
            continue;
        }
        if (nf == 1 && fld[0][0] == '\0')
            continue;
        if (nf < 6 || seen_add(v, n, &cap, fld[0], fld[1], fld[3], fld[5]) != 0) {
            fprintf(stderr, "tkbench: %s: line %zu: expected at least 6 fields\n", path, lineno);
            status = 2;
        }
    }
    fclose(f);
    if (status == 0 && *n == 0) {
        fprintf(stderr, "tkbench: %s has no rows\n", path);
        status = 2;
    }
    return status;
}

/* The peers of the rows, in first-seen order, then arranged; one this
 * tkbench cannot parse is kept under its name, as a peer of kind "unknown".
 * Returns them (caller frees; *np of them), or NULL when out of memory. */
static tkb_peer *peers_of(const seen *v, size_t n, size_t *np) {
    tkb_peer *peers = calloc(n ? n : 1, sizeof *peers);
    *np = 0;
    for (size_t i = 0; peers != NULL && i < n; i++) {
        bool have = false;
        for (size_t k = 0; k < *np; k++)
            have |= strcmp(peers[k].id, v[i].peer) == 0;
        if (have)
            continue;
        tkb_peer *p = &peers[(*np)++];
        if (tkb_peer_parse(v[i].peer, p, NULL, 0) != 0) {
            memset(p, 0, sizeof *p);
            snprintf(p->spec, sizeof p->spec, "%s", v[i].peer);
            snprintf(p->label, sizeof p->label, "%s", v[i].peer);
            snprintf(p->file, sizeof p->file, "%s", v[i].peer);
            p->kind = "unknown";
            snprintf(p->description, sizeof p->description, "a peer this tkbench does not know");
        }
        snprintf(p->id, sizeof p->id, "%s", v[i].peer);
    }
    if (peers != NULL)
        tkb_peer_arrange(peers, *np);
    return peers;
}

/* Each workload of the table that has rows, with its figures, into wa and
 * fa: its repetitions the most any of its triples has, its instances the
 * rows that name one, the metrics it does not declare kept. */
static void described_workloads(json_t *wa, json_t *fa, const seen *v, size_t n) {
    for (size_t t = 0; t < tkb_workload_count; t++) {
        const tkb_workload *w = tkb_workloads[t];
        size_t reps = 0;
        for (size_t i = 0; i < n; i++) {
            int var;
            if (tkb_workload_of_row(v[i].row, &var) == w && v[i].count > reps)
                reps = v[i].count;
        }
        if (reps == 0)
            continue;
        json_t *inst = json_array();
        for (size_t i = 0; w->instance_rows && i < n; i++) {
            int var;
            bool dup = false;
            for (size_t k = 0; k < i && !dup; k++)
                dup = strcmp(v[k].row, v[i].row) == 0;
            if (!dup && tkb_workload_of_row(v[i].row, &var) == w)
                json_array_append_new(inst, json_string(v[i].row));
        }
        json_array_append_new(wa, workload_json(w, (int)reps, undeclared(w, v, n), inst));
        workload_figures(fa, w, inst);
        json_decref(inst);
    }
}

/* Rows no descriptor knows, into wa: kept, as workloads of their own without
 * figures, each with the metrics its rows have. */
static void unknown_workloads(json_t *wa, const seen *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int var;
        bool first = true;
        for (size_t k = 0; k < i; k++)
            first &= strcmp(v[k].row, v[i].row) != 0;
        if (!first || tkb_workload_of_row(v[i].row, &var) != NULL)
            continue;
        tkb_workload w = {.name = v[i].row,
                          .group = v[i].row,
                          .level = TKB_LEVEL_EXECUTOR,
                          .summary = "not described by this tkbench",
                          .x = {"n", "n", TKB_SCALE_LIN}};
        json_t *ms = json_array();
        for (size_t k = 0; k < n; k++) {
            bool dup = false;
            for (size_t j = 0; j < k; j++)
                dup |= strcmp(v[j].row, v[k].row) == 0 && strcmp(v[j].metric, v[k].metric) == 0;
            if (dup || strcmp(v[k].row, v[i].row) != 0)
                continue;
            tkb_metric mm = {.name = v[k].metric, .unit = v[k].unit, .label = v[k].metric};
            json_array_append_new(ms, metric_json(&mm));
        }
        json_array_append_new(wa, workload_json(&w, (int)v[i].count, ms, NULL));
    }
}

/* The histograms of DIR/hist/, <row>.<peer id>.hgrm, of the peers known. */
static json_t *hist_files(const char *dir, const tkb_peer *peers, size_t np) {
    json_t *ha = json_array();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/hist", dir);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        char *dot = strchr(e->d_name, '.');
        if (l < 6 || strcmp(e->d_name + l - 5, ".hgrm") != 0 || dot == NULL)
            continue;
        char row[64], peer[TKB_SPEC_MAX];
        snprintf(row, sizeof row, "%.*s", (int)(dot - e->d_name), e->d_name);
        snprintf(peer, sizeof peer, "%.*s", (int)(l - 5 - (size_t)(dot - e->d_name) - 1), dot + 1);
        for (size_t k = 0; k < np; k++) {
            if (strcmp(peers[k].id, peer) != 0)
                continue;
            char rel[PATH_MAX];
            snprintf(rel, sizeof rel, "hist/%s", e->d_name);
            json_t *o = json_object();
            json_object_set_new(o, "workload", json_string(row));
            json_object_set_new(o, "peer", json_string(peers[k].id));
            json_object_set_new(o, "path", json_string(rel));
            json_array_append_new(ha, o);
        }
    }
    if (d != NULL)
        closedir(d);
    return ha;
}

int tkb_manifest_synthesize(const char *dir, bool force) {
    char path[PATH_MAX];
    struct stat sb;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (!force && stat(path, &sb) == 0) {
        fprintf(stderr, "tkbench: %s exists already (--force replaces it)\n", path);
        return 2;
    }
    seen *v = NULL;
    size_t n = 0, np = 0;
    int status = read_seen(dir, &v, &n);
    tkb_peer *peers = status == 0 ? peers_of(v, n, &np) : NULL;
    if (status == 0 && peers == NULL)
        status = 1;
    if (status == 0) {
        json_t *m = manifest_new(true);
        json_t *pa = json_array(), *wa = json_array(), *fa = json_array();
        for (size_t i = 0; i < np; i++)
            json_array_append_new(pa, peer_json(&peers[i]));
        json_object_set_new(m, "peers", pa);
        described_workloads(wa, fa, v, n);
        unknown_workloads(wa, v, n);
        json_object_set_new(m, "workloads", wa);
        json_object_set_new(m, "figures", fa);
        json_object_set_new(m, "hist", hist_files(dir, peers, np));
        status = manifest_save(dir, m) != 0 ? 1 : 0;
    }
    free(v);
    free(peers);
    if (status == 0)
        fprintf(stderr,
                "tkbench: wrote %s/manifest.json from this tkbench's workload descriptors\n", dir);
    return status;
}
