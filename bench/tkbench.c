/* tkbench: the benchmark CLI.
 *
 *   tkbench list
 *   tkbench run [--suite smoke|quick|full] [--workloads W1_core,W3_latency]
 *               [--peers heap,wheel-1ms-1024] [--n 1000,100000] [--reps K]
 *               [--timer-slack NS] [--out DIR]
 *   tkbench plot DIR
 *   tkbench compare [--out OUTDIR] DIR...
 *
 * A run registers one Google Benchmark per (workload, peer, parameter),
 * runs them with --benchmark_out=DIR/raw/gbench.json, then turns that JSON
 * into DIR/results.csv (docs/results-format.md) and writes the metadata.
 * Progress goes to stderr, results to files; a short headline table and the
 * folder path go to stdout at the end. Exit status: 0 ok, 1 run failure,
 * 2 usage error (unknown workload, peer or parameter). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "timerkit.h"
#include "tkbench.h"

#include "heap-core.h"
#if TKB_HAVE_LIBUV
#include <uv.h>
#endif
#if TKB_HAVE_LIBEVENT
#include <event2/event.h>
#endif

#ifndef TK_SOURCE_DIR
#define TK_SOURCE_DIR "."
#endif
#ifndef TKB_COMPILER
#define TKB_COMPILER "unknown"
#endif
#ifndef TKB_CFLAGS
#define TKB_CFLAGS "unknown"
#endif
#ifndef TKB_CXXFLAGS
#define TKB_CXXFLAGS "unknown"
#endif
#ifndef TKB_BUILD_TYPE
#define TKB_BUILD_TYPE "unknown"
#endif
#ifndef TKB_GBENCH_VERSION
#define TKB_GBENCH_VERSION "unknown"
#endif

tkb_config tkb_cfg;

#define MAX_CASES 2048
static tkb_case g_cases[MAX_CASES];
static size_t g_ncases;

/* ---- small utilities ------------------------------------------------------- */
static void die_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tkbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(see `tkbench --help`)\n", stderr);
    va_end(ap);
    exit(2);
}

static int mkdir_p(const char *path) {
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static char *read_cmd(const char *cmd) {
    FILE *p = popen(cmd, "r");
    static char buf[512];
    buf[0] = 0;
    if (p == NULL)
        return NULL;
    if (fgets(buf, sizeof buf, p) == NULL)
        buf[0] = 0;
    int rc = pclose(p);
    buf[strcspn(buf, "\n")] = 0;
    return rc == 0 ? buf : NULL;
}

static void cpu_model(char *out, size_t len) {
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, len, "%s", c);
            }
            break;
        }
    }
    if (f)
        fclose(f);
}

/* The first line of a small (sysfs) file without its newline in buf; "" if
 * unreadable. */
static const char *first_line(const char *path, char *buf, size_t len) {
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        if (fgets(buf, (int)len, f) == NULL)
            buf[0] = 0;
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = 0;
    return buf;
}

/* What shapes the floor besides the CPU, into m: the hypervisor as CPUID
 * names it (leaf 0x40000000; "none" without the hypervisor bit; a guest may
 * be shown another hypervisor's name), the clock source behind clock_gettime,
 * transparent huge pages, and whether DAMON runs (it samples pages and clears
 * their accessed bits, which a guest under shadow paging pays for in exits). */
static void machine_facts(json_t *m) {
    char buf[256];
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    char sig[13] = "none";
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31)) != 0) {
        __cpuid(0x40000000, a, b, c, d);
        unsigned w[3] = {b, c, d};
        size_t k = 0;
        for (size_t i = 0; i < 12; i++) {
            char ch = (char)(w[i / 4] >> (8 * (i % 4)));
            if (ch == 0)
                break;
            sig[k++] = ch >= 0x20 && ch < 0x7f ? ch : '?';
        }
        while (k > 0 && sig[k - 1] == ' ')
            k--;
        sig[k] = 0;
    }
    json_object_set_new(m, "hypervisor", json_string(sig));
#endif
    first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf, sizeof buf);
    json_object_set_new(m, "clocksource", json_string(buf[0] ? buf : "unknown"));
    first_line("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof buf);
    char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
    if (l != NULL && r != NULL) {
        *r = 0;
        json_object_set_new(m, "transparent_hugepages", json_string(l + 1));
    }
    const char *damon = "absent";
    DIR *dir = opendir("/sys/kernel/mm/damon/admin/kdamonds");
    if (dir != NULL) {
        damon = "off";
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            char path[300];
            snprintf(path, sizeof path, "/sys/kernel/mm/damon/admin/kdamonds/%s/state", e->d_name);
            if (strcmp(first_line(path, buf, sizeof buf), "on") == 0)
                damon = "on";
        }
        closedir(dir);
    }
    json_object_set_new(m, "damon", json_string(damon));
}

static const char *unit_of(const char *metric) {
    size_t l = strlen(metric);
#define ENDS(s) (l >= strlen(s) && strcmp(metric + l - strlen(s), s) == 0)
    if (ENDS("_per_s"))
        return "per_s";
    if (strncmp(metric, "ns_per_", 7) == 0)
        return "ns";
    if (strstr(metric, "bytes"))
        return "bytes";
    if (ENDS("_ns"))
        return "ns";
    if (ENDS("_us"))
        return "us";
    if (ENDS("_ms"))
        return "ms";
    if (ENDS("_pct"))
        return "pct";
#undef ENDS
    return "count";
}

/* ---- progress ---------------------------------------------------------------- */
static int64_t g_run_start_ns;
static tkb_case *g_current;
static double g_done_est, g_done_actual;
static int64_t g_case_start_ns;

static void fmt_secs(char *buf, size_t len, double s) {
    if (s < 90)
        snprintf(buf, len, "%.0fs", s);
    else
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

void tkb_progress_enter(tkb_case *c) {
    if (c == g_current)
        return;
    int64_t now = tkb_now_ns();
    if (g_current != NULL) {
        g_current->done = true;
        if (!g_current->realtime) { /* only compute-bound cases rescale the estimate */
            g_done_est += g_current->est_seconds;
            g_done_actual += (double)(now - g_case_start_ns) / 1e9;
        }
    }
    g_current = c;
    g_case_start_ns = now;
    c->started = true;
    size_t idx = (size_t)(c - g_cases);
    double ratio = g_done_est > 1.0 ? g_done_actual / g_done_est : 1.0;
    if (ratio < 0.2)
        ratio = 0.2;
    if (ratio > 5)
        ratio = 5;
    double left = 0; /* real-time workloads (sleeps, fixed windows) take what they take */
    for (size_t i = idx; i < g_ncases; i++)
        left += g_cases[i].est_seconds * (g_cases[i].realtime ? 1.0 : ratio);
    char el[32], lf[32], nbuf[32];
    fmt_secs(el, sizeof el, (double)(now - g_run_start_ns) / 1e9);
    fmt_secs(lf, sizeof lf, left);
    snprintf(nbuf, sizeof nbuf, "%.10g", c->n);
    fprintf(stderr, "[%zu/%zu] %s %s n=%s%s%s ... elapsed %s, ~%s left\n", idx + 1, g_ncases,
            c->workload, c->peer->name, nbuf, c->time_metric ? " " : "",
            c->time_metric ? c->time_metric : "", el, lf);
    fflush(stderr);
}

static void case_body(tk_gb_state *st, void *ctx) {
    tkb_case *c = ctx;
    if (c != g_current) {
        /* A new case starts from a consolidated heap: after a workload freed a
         * million small blocks, the next malloc that consolidates them would
         * stall a timer thread for milliseconds inside a timed window (seen in
         * W3 after W2). Repetitions of one case still reuse warm memory. */
        malloc_trim(0);
    }
    tkb_progress_enter(c);
    c->fn(st, c);
}

void tkb_write_hgrm(const tkb_case *c, const tkb_hist *h) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/hist/%s.%s.hgrm", tkb_cfg.out_dir, c->workload, c->peer->name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "tkbench: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    tkb_hist_write_hgrm(h, f);
    fclose(f);
}

/* ---- suites ------------------------------------------------------------------- */
static const char *const all_workloads_order[] = {
    "floor",         "W1_core",  "W1_exec",   "W6_cancel_ratio", "W6_delay_range", "W6_dist",
    "W7_contention", "W2_burst", "W2_spread", "W3_latency",      "W4_idle",        "W5_memory"};
#define NWORK (sizeof all_workloads_order / sizeof all_workloads_order[0])

static int set_suite(const char *s) {
    tkb_config *g = &tkb_cfg;
    g->timer_slack_ns = 1;
    if (strcmp(s, "smoke") == 0) {
        size_t w1[] = {1000};
        memcpy(g->w1_sizes, w1, sizeof w1);
        g->w1_count = 1;
        g->churn_pairs = 10000;
        g->strawman_churn_pairs = 1000;
        g->w2_n = 10000;
        g->w3_n = 500;
        g->w3_seconds = 0.5;
        g->w4_seconds = 0.5;
        g->w5_n = 10000;
        g->w6_n = 2000;
        g->w6_dist_sizes[0] = 1000;
        g->w6_dist_count = 1;
        g->w7_seconds = 0.1;
        g->floor_samples = 100;
        g->floor_spin_seconds = 0.05;
        g->min_time = 0.01;
        g->reps = 1;
        g->reps_long = 1;
        g->reps_exec = 1;
        g->strawman_max_n = 10000;
    } else if (strcmp(s, "quick") == 0) {
        size_t w1[] = {1000, 10000, 100000, 1000000};
        memcpy(g->w1_sizes, w1, sizeof w1);
        g->w1_count = 4;
        g->churn_pairs = 1000000;
        g->strawman_churn_pairs = 20000;
        g->dist_pairs = 200000;
        g->w2_n = 1000000;
        g->w3_n = 10000;
        g->w3_seconds = 5;
        g->w4_seconds = 5;
        g->w5_n = 1000000;
        g->w6_n = 100000;
        g->w6_dist_sizes[0] = 100000;
        g->w6_dist_count = 1;
        g->w7_seconds = 0.5;
        g->floor_samples = 1000;
        g->floor_spin_seconds = 1;
        g->min_time = 0.2;
        g->reps = 3;
        g->reps_long = 1;
        g->reps_exec = 1;
        g->strawman_max_n = 10000;
    } else if (strcmp(s, "full") == 0) {
        size_t w1[] = {1000, 10000, 100000, 1000000, 10000000};
        memcpy(g->w1_sizes, w1, sizeof w1);
        g->w1_count = 5;
        g->churn_pairs = 1000000;
        g->strawman_churn_pairs = 50000;
        g->w2_n = 1000000;
        g->w3_n = 10000;
        g->w3_seconds = 5;
        g->w4_seconds = 5;
        g->w5_n = 1000000;
        g->w6_n = 1000000;
        size_t d[] = {1000, 100000, 1000000};
        memcpy(g->w6_dist_sizes, d, sizeof d);
        g->w6_dist_count = 3;
        g->w7_seconds = 2;
        g->floor_samples = 5000;
        g->floor_spin_seconds = 2;
        g->min_time = 0.5;
        g->reps = 5;
        g->reps_long = 3;
        g->reps_exec = 3;
        g->strawman_max_n = 100000;
    } else {
        return -1;
    }
    return 0;
}

/* ---- list ---------------------------------------------------------------------- */
static int cmd_list(void) {
    printf("workloads:\n");
    for (size_t i = 0; i < tkb_workload_count; i++)
        printf("  %-16s %-9s %s\n", tkb_workloads[i].name, tkb_workloads[i].level,
               tkb_workloads[i].summary);
    printf("  (groups: W1 = W1_core,W1_exec; W2 = W2_burst,W2_spread; W6 = the three W6)\n");
    printf("peers:\n");
    for (size_t i = 0; i < tkb_peer_count; i++) {
        const tkb_peer *p = &tkb_peers[i];
        char levels[64] = "";
        if (p->core)
            strcat(levels, "core");
        if (p->svc)
            strcat(levels, levels[0] ? "+executor" : "executor");
        if (strcmp(p->kind, "floor") == 0)
            strcat(levels, "machine");
        printf("  %-24s %-9s %-18s %s%s%s\n", p->name, p->kind, levels[0] ? levels : "(none built)",
               p->params, p->missing ? "  [" : "", p->missing ? p->missing : "");
        if (p->missing)
            printf("%*s]\n", 0, "");
    }
    printf("suites: smoke (<30 s, CI), quick (~5-8 min), full (N up to 1e7, more repetitions)\n");
    return 0;
}

/* ---- results ------------------------------------------------------------------ */
typedef struct row {
    const tkb_case *c;
    char metric[48];
    double value;
} row;
static row *g_rows;
static size_t g_nrows, g_caprows;

static void add_row(const tkb_case *c, const char *metric, double value) {
    if (g_nrows == g_caprows) {
        size_t nc = g_caprows ? g_caprows * 2 : 256;
        row *nr = realloc(g_rows, nc * sizeof *nr);
        if (nr == NULL)
            return;
        g_rows = nr;
        g_caprows = nc;
    }
    row *r = &g_rows[g_nrows++];
    r->c = c;
    snprintf(r->metric, sizeof r->metric, "%s", metric);
    r->value = value;
}

static const tkb_case *case_for(const char *name) {
    const tkb_case *best = NULL;
    size_t bestlen = 0;
    for (size_t i = 0; i < g_ncases; i++) {
        size_t l = strlen(g_cases[i].name);
        if (l > bestlen && strncmp(name, g_cases[i].name, l) == 0 &&
            (name[l] == '/' || name[l] == 0)) {
            best = &g_cases[i];
            bestlen = l;
        }
    }
    return best;
}

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
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(k, keys[i]) == 0)
            return true;
    return false;
}

static json_t *g_gb_context;

/* Reads a whole file into a NUL-terminated buffer (caller frees), or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = 0;
    return buf;
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
        for (size_t t = 0; t < sizeof toks / sizeof toks[0]; t++) {
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

static int collect_results(const char *json_path, int *errors) {
    json_error_t err;
    char *text = slurp(json_path);
    if (text == NULL) {
        fprintf(stderr, "tkbench: cannot read %s: %s\n", json_path, strerror(errno));
        return -1;
    }
    json_fix_nonfinite(text);
    json_t *root = json_loads(text, 0, &err);
    free(text);
    if (root == NULL) {
        fprintf(stderr, "tkbench: cannot read %s: %s\n", json_path, err.text);
        return -1;
    }
    g_gb_context = json_incref(json_object_get(root, "context"));
    json_t *arr = json_object_get(root, "benchmarks");
    size_t i;
    json_t *b;
    json_array_foreach(arr, i, b) {
        const char *name = json_string_value(json_object_get(b, "name"));
        const char *type = json_string_value(json_object_get(b, "run_type"));
        if (name == NULL || (type != NULL && strcmp(type, "iteration") != 0))
            continue;
        if (json_is_true(json_object_get(b, "error_occurred"))) {
            (*errors)++;
            continue;
        }
        const tkb_case *c = case_for(name);
        if (c == NULL)
            continue;
        if (c->time_metric) {
            add_row(c, c->time_metric, json_number_value(json_object_get(b, "real_time")));
            continue;
        }
        const char *k;
        json_t *v;
        json_object_foreach(b, k, v) {
            if (!is_gb_key(k) && json_is_number(v))
                add_row(c, k, json_number_value(v));
        }
    }
    json_decref(root);
    return 0;
}

static int write_csv(const char *path) {
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "peer,workload,n,metric,value,unit\n");
    for (size_t i = 0; i < g_nrows; i++) {
        const row *r = &g_rows[i];
        fprintf(f, "%s,%s,%.10g,%s,%.9g,%s\n", r->c->peer->name, r->c->workload, r->c->n, r->metric,
                r->value, unit_of(r->metric));
    }
    return fclose(f);
}

/* Mean of a metric over repetitions; NAN if absent. n < 0: the largest n. */
static double lookup(const char *peer, const char *workload, double n, const char *metric,
                     double *n_used) {
    double best_n = -1;
    if (n < 0) {
        for (size_t i = 0; i < g_nrows; i++) {
            const row *r = &g_rows[i];
            if (strcmp(r->c->peer->name, peer) == 0 && strcmp(r->c->workload, workload) == 0 &&
                strcmp(r->metric, metric) == 0 && r->c->n > best_n)
                best_n = r->c->n;
        }
        if (best_n < 0)
            return NAN;
        n = best_n;
    }
    double sum = 0;
    int k = 0;
    for (size_t i = 0; i < g_nrows; i++) {
        const row *r = &g_rows[i];
        if (r->c->n == n && strcmp(r->c->peer->name, peer) == 0 &&
            strcmp(r->c->workload, workload) == 0 && strcmp(r->metric, metric) == 0) {
            sum += r->value;
            k++;
        }
    }
    if (n_used)
        *n_used = n;
    return k ? sum / k : NAN;
}

static void cell(char *buf, size_t len, double v, int prec) {
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", prec, v);
}

static void print_headline(const char **peers, size_t npeers) {
    int pw = 16; /* peer column: the longest name (wheel-100ms-512-embedded) */
    for (size_t p = 0; p < npeers; p++)
        if ((int)strlen(peers[p]) > pw)
            pw = (int)strlen(peers[p]);
    double maxn = -1;
    for (size_t i = 0; i < g_nrows; i++)
        if (strncmp(g_rows[i].c->workload, "W1_", 3) == 0 && g_rows[i].c->n > maxn)
            maxn = g_rows[i].c->n;
    printf("\nHeadline (mean over repetitions; W1 in ns per op at the largest N run");
    if (maxn > 0)
        printf(", N=%.10g; * = smaller N", maxn);
    printf(")\n");
    printf("%-*s %9s %9s %9s %9s | %9s %9s %9s\n", pw, "peer", "core.ins", "core.can", "core.chu",
           "core.exp", "exec.sch", "exec.can", "exec.chu");
    static const char *const m1[] = {"schedule_ns", "cancel_ns", "churn_ns", "expire_ns"};
    for (size_t p = 0; p < npeers; p++) {
        if (strcmp(peers[p], "floor") == 0)
            continue;
        char cells[7][32];
        bool any = false;
        for (int j = 0; j < 7; j++) {
            const char *w = j < 4 ? "W1_core" : "W1_exec";
            double nu = -1;
            double v = lookup(peers[p], w, -1, m1[j < 4 ? j : j - 4], &nu);
            cell(cells[j], sizeof cells[j], v, 1);
            if (!isnan(v)) {
                any = true;
                if (nu < maxn)
                    strcat(cells[j], "*");
            }
        }
        if (any)
            printf("%-*s %9s %9s %9s %9s | %9s %9s %9s\n", pw, peers[p], cells[0], cells[1],
                   cells[2], cells[3], cells[4], cells[5], cells[6]);
    }
    printf("\n%-*s %9s %9s %9s %9s %7s %8s %8s %9s\n", pw, "peer", "burst/s", "spread99", "W3 p50",
           "W3 p99", "early", "idle.cpu", "wakeups", "B/timer");
    printf("%-*s %9s %9s %9s %9s %7s %8s %8s %9s\n", pw, "", "(M)", "(ms)", "(us)", "(us)", "",
           "(ms)", "", "");
    for (size_t p = 0; p < npeers; p++) {
        double v[8] = {
            lookup(peers[p], "W2_burst", -1, "burst_fire_rate_per_s", NULL) / 1e6,
            lookup(peers[p], "W2_spread", -1, "late_p99_us", NULL) / 1e3,
            lookup(peers[p], "W3_latency", -1, "late_p50_us", NULL),
            lookup(peers[p], "W3_latency", -1, "late_p99_us", NULL),
            lookup(peers[p], "W3_latency", -1, "early_count", NULL),
            lookup(peers[p], "W4_idle", -1, "idle_cpu_ms", NULL),
            lookup(peers[p], "W4_idle", -1, "idle_wakeups", NULL),
            lookup(peers[p], "W5_memory", -1, "bytes_per_timer", NULL),
        };
        static const int prec[8] = {2, 2, 1, 1, 0, 2, 0, 1};
        char c[8][32];
        bool any = false;
        for (int j = 0; j < 8; j++) {
            cell(c[j], sizeof c[j], v[j], prec[j]);
            any |= !isnan(v[j]);
        }
        if (any)
            printf("%-*s %9s %9s %9s %9s %7s %8s %8s %9s\n", pw, peers[p], c[0], c[1], c[2], c[3],
                   c[4], c[5], c[6], c[7]);
    }
    static const char *const fm[11] = {"clock_ns",
                                       "nanosleep_late_p50_us",
                                       "nanosleep_late_p99_us",
                                       "condvar_handoff_p50_us",
                                       "condvar_handoff_p99_us",
                                       "array_append_ns",
                                       "locked_rmw_ns",
                                       "cold_miss_ns",
                                       "spin_stalls_per_s",
                                       "spin_stall_p50_us",
                                       "spin_stall_p99_us"};
    double f[11];
    bool anyf = false;
    for (int j = 0; j < 11; j++) {
        f[j] = lookup("floor", "floor", 1, fm[j], NULL);
        anyf |= !isnan(f[j]);
    }
    if (anyf)
        printf(
            "\nfloor: clock %.1f ns, nanosleep late p50/p99 %.1f/%.1f us, condvar hand-off "
            "p50/p99 %.1f/%.1f us, array append %.2f ns,\n"
            "       locked RMW %.1f ns, cold miss %.0f ns, spin stalls %.0f/s (p50/p99 %.1f/%.1f "
            "us)\n",
            f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10]);
}

/* ---- metadata ------------------------------------------------------------------- */
static void put_txt(FILE *f, const char *prefix, json_t *v) {
    const char *k;
    json_t *x;
    if (json_is_object(v)) {
        json_object_foreach(v, k, x) {
            char key[256];
            snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", k);
            put_txt(f, key, x);
        }
        return;
    }
    if (json_is_array(v)) {
        fprintf(f, "%s:", prefix);
        size_t i;
        json_array_foreach(v, i, x) {
            if (json_is_string(x))
                fprintf(f, " %s", json_string_value(x));
            else {
                char *s = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
                fprintf(f, " %s", s ? s : "?");
                free(s);
            }
        }
        fputc('\n', f);
        return;
    }
    if (json_is_string(v))
        fprintf(f, "%s: %s\n", prefix, json_string_value(v));
    else {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        fprintf(f, "%s: %s\n", prefix, s ? s : "?");
        free(s);
    }
}

static int write_metadata(json_t *m) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/metadata.json", tkb_cfg.out_dir);
    if (json_dump_file(m, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/metadata.txt", tkb_cfg.out_dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    put_txt(f, "", m);
    return fclose(f);
}

static json_t *build_metadata(const char *suite, const char *base_suite, const char **peers,
                              size_t npeers, const char **works, size_t nworks, int argc,
                              char **argv) {
    json_t *m = json_object();
    char buf[512];
    time_t t = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    json_object_set_new(m, "date", json_string(buf));
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", TK_SOURCE_DIR);
    const char *commit = read_cmd(cmd);
    json_object_set_new(m, "commit", json_string(commit && commit[0] ? commit : "unknown"));
    if (commit && commit[0]) {
        snprintf(cmd, sizeof cmd,
                 "git -C '%s' --no-optional-locks status --porcelain --untracked-files=no "
                 "2>/dev/null | head -1",
                 TK_SOURCE_DIR);
        const char *d = read_cmd(cmd);
        json_object_set_new(m, "commit_dirty", json_string(d && d[0] ? "yes" : "no"));
    }
    json_object_set_new(m, "suite", json_string(suite));
    json_object_set_new(m, "base_suite", json_string(base_suite));
    cpu_model(buf, sizeof buf);
    json_object_set_new(m, "cpu_model", json_string(buf));
    json_object_set_new(m, "cores", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    machine_facts(m);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_set_new(m, "kernel", json_string(buf));
        json_object_set_new(m, "kernel_version", json_string(u.version));
    }
    json_object_set_new(m, "compiler", json_string(TKB_COMPILER));
    json_object_set_new(m, "cflags", json_string(TKB_CFLAGS));
    json_object_set_new(m, "cxxflags", json_string(TKB_CXXFLAGS));
    json_object_set_new(m, "build_type", json_string(TKB_BUILD_TYPE));
    json_object_set_new(m, "gbench_version", json_string(TKB_GBENCH_VERSION));
    const char *gbt = "unknown (run did not finish)";
    if (g_gb_context && json_string_value(json_object_get(g_gb_context, "library_build_type")))
        gbt = json_string_value(json_object_get(g_gb_context, "library_build_type"));
    json_object_set_new(m, "gbench_build_type", json_string(gbt));
    json_object_set_new(m, "timer_slack_ns", json_integer(tkb_cfg.timer_slack_ns));
    json_object_set_new(m, "repetitions", json_integer(tkb_cfg.reps));
    json_object_set_new(m, "repetitions_long", json_integer(tkb_cfg.reps_long));
    json_object_set_new(m, "repetitions_w1_exec", json_integer(tkb_cfg.reps_exec));
    json_object_set_new(m, "strawman_max_n", json_integer((json_int_t)tkb_cfg.strawman_max_n));
    buf[0] = 0;
    for (size_t i = 0; i < npeers; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", peers[i]);
    json_object_set_new(m, "peers", json_string(buf));
    json_t *pp = json_object();
    for (size_t i = 0; i < npeers; i++) {
        const tkb_peer *p = tkb_peer_find(peers[i]);
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(p->kind));
        json_object_set_new(o, "params", json_string(p->params));
        if (p->tick_ns) {
            json_object_set_new(o, "tick_ns", json_integer(p->tick_ns));
            json_object_set_new(o, "ticks_per_wheel", json_integer(p->ticks));
        }
        if (p->core_max_n)
            json_object_set_new(o, "core_max_n", json_integer((json_int_t)p->core_max_n));
        json_object_set_new(o, "levels",
                            json_string(p->core && p->svc ? "core executor"
                                        : p->core         ? "core"
                                        : p->svc          ? "executor"
                                                          : "machine"));
        json_object_set_new(pp, p->name, o);
    }
    json_object_set_new(m, "peer_params", pp);
    json_object_set_new(m, "default_engine", json_string(tk_engine_default()->name));
    if (gethostname(buf, sizeof buf) == 0)
        json_object_set_new(m, "hostname", json_string(buf));
    buf[0] = 0;
    for (size_t i = 0; i < nworks; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", works[i]);
    json_object_set_new(m, "workloads", json_string(buf));
    buf[0] = 0;
    for (size_t i = 0; i < tkb_cfg.w1_count; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%zu", i ? " " : "",
                 tkb_cfg.w1_sizes[i]);
    json_object_set_new(m, "w1_sizes", json_string(buf));
    json_object_set_new(m, "churn_pairs", json_integer((json_int_t)tkb_cfg.churn_pairs));
    json_object_set_new(m, "strawman_churn_pairs",
                        json_integer((json_int_t)tkb_cfg.strawman_churn_pairs));
    json_object_set_new(
        m, "w6_dist_pairs",
        json_integer((json_int_t)(tkb_cfg.dist_pairs ? tkb_cfg.dist_pairs : tkb_cfg.churn_pairs)));
    json_object_set_new(m, "w2_n", json_integer((json_int_t)tkb_cfg.w2_n));
    json_object_set_new(m, "w3_n", json_integer((json_int_t)tkb_cfg.w3_n));
    json_object_set_new(m, "w3_seconds", json_real(tkb_cfg.w3_seconds));
    json_object_set_new(m, "w4_seconds", json_real(tkb_cfg.w4_seconds));
    json_object_set_new(m, "w5_n", json_integer((json_int_t)tkb_cfg.w5_n));
    json_object_set_new(m, "w6_n", json_integer((json_int_t)tkb_cfg.w6_n));
    json_object_set_new(m, "w7_seconds", json_real(tkb_cfg.w7_seconds));
    json_object_set_new(m, "floor_samples", json_integer((json_int_t)tkb_cfg.floor_samples));
    json_object_set_new(m, "floor_spin_ms",
                        json_integer((json_int_t)(tkb_cfg.floor_spin_seconds * 1000 + 0.5)));
    json_object_set_new(m, "gbench_min_time_s", json_real(tkb_cfg.min_time));
    json_object_set_new(m, "executor_pool_threads", json_integer(1));
    json_object_set_new(m, "remove_on_cancel", json_true());
    json_object_set_new(m, "w4_wakeup_source",
                        json_string("engine counter where the engine has one (wheel: "
                                    "tk__wheel_stats.wakeups), else voluntary+nonvoluntary "
                                    "context switches of every thread but the benchmark's"));
    json_object_set_new(m, "heap_arity", json_integer(TK_HEAP_ARITY));
#if TKB_HAVE_LIBUV
    json_object_set_new(m, "libuv_version", json_string(uv_version_string()));
#endif
#if TKB_HAVE_LIBEVENT
    json_object_set_new(m, "libevent_version", json_string(event_get_version()));
    json_object_set_new(m, "libevent_config",
                        json_string("default event_base (no EVENT_BASE_FLAG_PRECISE_TIMER: "
                                    "CLOCK_MONOTONIC_COARSE); evthread_use_pthreads at "
                                    "executor level"));
#endif
    json_object_set_new(m, "tkbench_version", json_string("0.1.0"));
    buf[0] = 0;
    for (int i = 0; i < argc; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", argv[i]);
    json_object_set_new(m, "command", json_string(buf));
    if (g_gb_context)
        json_object_set(m, "gbench_context", g_gb_context);
    return m;
}

/* ---- run -------------------------------------------------------------------------- */
static size_t split_list(char *s, const char **out, size_t cap) {
    size_t n = 0;
    for (char *tok = strtok(s, ","); tok && n < cap; tok = strtok(NULL, ","))
        if (*tok)
            out[n++] = tok;
    return n;
}

static bool workload_known(const char *w) {
    for (size_t i = 0; i < NWORK; i++)
        if (strcmp(w, all_workloads_order[i]) == 0)
            return true;
    return false;
}

static int cmd_run(int argc, char **argv) {
    const char *suite = "quick", *out = NULL, *wl = NULL, *pl = NULL, *nl = NULL;
    int reps = 0;
    long long slack = -2;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(s) (strcmp(a, s) == 0 && (v != NULL || (die_usage("%s needs a value", s), 0)) && ++i)
        if (OPT("--suite"))
            suite = v;
        else if (OPT("--out"))
            out = v;
        else if (OPT("--workloads"))
            wl = v;
        else if (OPT("--peers"))
            pl = v;
        else if (OPT("--n"))
            nl = v;
        else if (OPT("--reps")) {
            char *e;
            long r = strtol(v, &e, 10);
            if (*e || r < 1 || r > 1000)
                die_usage("--reps: expected an integer in 1..1000, got '%s'", v);
            reps = (int)r;
        } else if (OPT("--timer-slack")) {
            char *e;
            slack = strtoll(v, &e, 10);
            if (*e || slack < -1)
                die_usage("--timer-slack: expected nanoseconds >= 0 (or -1: leave alone), got '%s'",
                          v);
        } else
            die_usage("run: unknown argument '%s'", a);
#undef OPT
    }
    if (set_suite(suite) != 0)
        die_usage("unknown suite '%s' (smoke, quick, full)", suite);
    if (reps) {
        tkb_cfg.reps = reps;
        tkb_cfg.reps_long = reps;
        tkb_cfg.reps_exec = reps;
    }
    if (slack >= -1)
        tkb_cfg.timer_slack_ns = slack;
    bool custom = wl || pl || nl || reps || slack >= -1;

    /* workloads */
    const char *works[64];
    size_t nworks = 0;
    char *wbuf = wl ? strdup(wl) : NULL;
    if (wbuf) {
        const char *req[64];
        size_t nreq = split_list(wbuf, req, 64);
        for (size_t k = 0; k < NWORK; k++) {
            const char *w = all_workloads_order[k];
            for (size_t j = 0; j < nreq; j++) {
                size_t l = strlen(req[j]);
                bool group = (strcmp(req[j], "W1") == 0 || strcmp(req[j], "W2") == 0 ||
                              strcmp(req[j], "W6") == 0) &&
                             strncmp(w, req[j], l) == 0 && w[l] == '_';
                if (strcmp(req[j], w) == 0 || group) {
                    works[nworks++] = w;
                    break;
                }
            }
        }
        for (size_t j = 0; j < nreq; j++) {
            bool ok = workload_known(req[j]) || strcmp(req[j], "W1") == 0 ||
                      strcmp(req[j], "W2") == 0 || strcmp(req[j], "W6") == 0;
            if (!ok) {
                fprintf(stderr, "tkbench: unknown workload '%s'; known:", req[j]);
                for (size_t k = 0; k < NWORK; k++)
                    fprintf(stderr, " %s", all_workloads_order[k]);
                fputc('\n', stderr);
                exit(2);
            }
        }
    } else {
        for (size_t k = 0; k < NWORK; k++)
            works[nworks++] = all_workloads_order[k];
    }

    /* peers */
    const char *peers[64];
    size_t npeers = 0;
    char *pbuf = pl ? strdup(pl) : NULL;
    if (pbuf) {
        const char *req[64];
        size_t nreq = split_list(pbuf, req, 64);
        for (size_t j = 0; j < nreq; j++) {
            if (tkb_peer_find(req[j]) == NULL) {
                fprintf(stderr, "tkbench: unknown peer '%s'; known:", req[j]);
                for (size_t k = 0; k < tkb_peer_count; k++)
                    fprintf(stderr, " %s", tkb_peers[k].name);
                fputc('\n', stderr);
                exit(2);
            }
            peers[npeers++] = req[j];
        }
    } else {
        for (size_t k = 0; k < tkb_peer_count; k++)
            peers[npeers++] = tkb_peers[k].name;
    }

    /* sizes */
    if (nl) {
        char *nbuf = strdup(nl);
        const char *req[8];
        size_t nreq = split_list(nbuf, req, 8);
        if (nreq == 0)
            die_usage("--n: expected a comma-separated list of populations");
        for (size_t j = 0; j < nreq; j++) {
            char *e;
            double d = strtod(req[j], &e);
            if (*e || d < 1 || d > 1e8 || d != floor(d))
                die_usage("--n: '%s' is not a population in 1..1e8", req[j]);
            tkb_cfg.w1_sizes[j] = (size_t)d;
            tkb_cfg.w6_dist_sizes[j] = (size_t)d;
        }
        tkb_cfg.w1_count = tkb_cfg.w6_dist_count = nreq;
        tkb_cfg.sizes_given = true;
        free(nbuf);
    }

    /* cases */
    for (size_t k = 0; k < nworks; k++)
        for (size_t j = 0; j < npeers; j++) {
            const tkb_peer *p = tkb_peer_find(peers[j]);
            size_t added =
                tkb_workload_cases(works[k], p, g_cases + g_ncases, MAX_CASES - g_ncases);
            g_ncases += added;
        }
    for (size_t j = 0; j < npeers; j++) {
        const tkb_peer *p = tkb_peer_find(peers[j]);
        if (p->missing)
            fprintf(stderr, "tkbench: note: %s: %s\n", p->name, p->missing);
    }
    if (g_ncases == 0)
        die_usage("nothing to run: no selected peer runs the selected workloads");

    /* output folder */
    char outbuf[256];
    if (out == NULL) {
        char stamp[64];
        time_t t = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&t));
        snprintf(outbuf, sizeof outbuf, "results/%s-%s", stamp, custom ? "custom" : suite);
        out = outbuf;
    }
    if (strlen(out) > PATH_MAX - 64)
        die_usage("--out: path too long");
    tkb_cfg.out_dir = out;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/raw", out);
    if (mkdir_p(path) != 0) {
        fprintf(stderr, "tkbench: cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/hist", out);
    mkdir_p(path);
    const char *suite_name = custom ? "custom" : suite;
    tkb_cfg.suite = suite_name;
    json_t *meta = build_metadata(suite_name, suite, peers, npeers, works, nworks, argc, argv);
    write_metadata(meta);
    json_decref(meta);

    /* Keep freed memory in the process (blocks under 32 MB from the heap, no
     * trimming): a later repetition reuses warm pages, as a long-running
     * program does, instead of paying first-touch faults inside timed loops. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);

    /* register and run */
    double est = 0;
    for (size_t i = 0; i < g_ncases; i++) {
        tkb_case *c = &g_cases[i];
        est += c->est_seconds;
        tk_gb_bench *b = tk_gb_register(c->name, case_body, c);
        if (b == NULL) {
            fprintf(stderr, "tkbench: cannot register %s\n", c->name);
            return 1;
        }
        if (c->time_metric) {
            if (c->iterations > 0)
                tk_gb_iterations(b, c->iterations);
            else
                tk_gb_min_time(b, tkb_cfg.min_time);
        } else {
            tk_gb_iterations(b, 1);
            tk_gb_manual_time(b);
        }
        if (c->reps > 1)
            tk_gb_repetitions(b, c->reps);
    }
    char est_s[32];
    fmt_secs(est_s, sizeof est_s, est);
    fprintf(stderr,
            "tkbench: suite %s: %zu benchmarks, %zu workloads x %zu peers, estimated %s; "
            "writing %s\n",
            suite_name, g_ncases, nworks, npeers, est_s, out);
    char gbout[PATH_MAX + 32];
    snprintf(gbout, sizeof gbout, "--benchmark_out=%s/raw/gbench.json", out);
    char *gargv[] = {argv[0], gbout, "--benchmark_out_format=json", NULL};
    g_run_start_ns = tkb_now_ns();
    int ran = tk_gb_run(3, gargv);
    double wall = (double)(tkb_now_ns() - g_run_start_ns) / 1e9;
    if (ran < 0) {
        fprintf(stderr, "tkbench: Google Benchmark rejected its arguments\n");
        return 1;
    }

    /* results */
    int errors = 0;
    snprintf(path, sizeof path, "%s/raw/gbench.json", out);
    if (collect_results(path, &errors) != 0)
        return 1;
    snprintf(path, sizeof path, "%s/results.csv", out);
    if (write_csv(path) != 0) {
        fprintf(stderr, "tkbench: cannot write %s\n", path);
        return 1;
    }
    meta = build_metadata(suite_name, suite, peers, npeers, works, nworks, argc, argv);
    json_object_set_new(meta, "wall_seconds", json_real(round(wall * 10) / 10));
    json_object_set_new(meta, "failed_benchmarks", json_integer(errors));
    write_metadata(meta);
    json_decref(meta);

    print_headline(peers, npeers);
    char w[32];
    fmt_secs(w, sizeof w, wall);
    printf("\n%zu benchmarks, %zu rows, %d failed, wall %s\nresults: %s\n", g_ncases, g_nrows,
           errors, w, out);
    free(wbuf);
    free(pbuf);
    return errors ? 1 : 0;
}

/* ---- plot / compare ---------------------------------------------------------------- */
static int run_script(const char *script, char **args) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/plots/%s", TK_SOURCE_DIR, script);
    if (access(path, R_OK) != 0) {
        fprintf(stderr,
                "tkbench: %s not found (%s). The figure scripts live in plots/ of the source "
                "tree this tkbench was built from.\n",
                path, strerror(errno));
        return 1;
    }
    /* the scripts are bash (#!/usr/bin/env bash): run them through their own
     * shebang when executable, else through bash */
    char *argv2[64];
    int k = 0;
    bool direct = access(path, X_OK) == 0;
    argv2[k++] = direct ? path : "bash";
    if (!direct)
        argv2[k++] = path;
    for (int i = 0; args[i] && k < 63; i++)
        argv2[k++] = args[i];
    argv2[k] = NULL;
    fflush(NULL);
    if (direct)
        execv(path, argv2);
    else
        execvp("bash", argv2);
    fprintf(stderr, "tkbench: cannot run %s: %s\n", path, strerror(errno));
    return 1;
}

static int cmd_plot(int argc, char **argv) {
    if (argc != 3)
        die_usage("usage: tkbench plot DIR");
    struct stat sb;
    if (stat(argv[2], &sb) != 0 || !S_ISDIR(sb.st_mode))
        die_usage("plot: '%s' is not a results folder", argv[2]);
    char *args[] = {argv[2], NULL};
    return run_script("render.sh", args);
}

static int cmd_compare(int argc, char **argv) {
    const char *outdir = NULL;
    char *args[64];
    int k = 1;
    for (int i = 2; i < argc && k < 62; i++) {
        if (strcmp(argv[i], "--out") == 0) {
            if (i + 1 >= argc)
                die_usage("--out needs a value");
            outdir = argv[++i];
            continue;
        }
        struct stat sb;
        if (stat(argv[i], &sb) != 0 || !S_ISDIR(sb.st_mode))
            die_usage("compare: '%s' is not a results folder", argv[i]);
        args[k++] = argv[i];
    }
    if (k < 2)
        die_usage("usage: tkbench compare [--out OUTDIR] DIR...");
    char buf[PATH_MAX];
    if (outdir == NULL) {
        char stamp[64];
        time_t t = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&t));
        snprintf(buf, sizeof buf, "results/compare-%s", stamp);
        outdir = buf;
    }
    args[0] = (char *)outdir;
    args[k] = NULL;
    return run_script("compare.sh", args);
}

static void usage(FILE *f) {
    fprintf(f, "usage:\n"
               "  tkbench list\n"
               "  tkbench run [--suite smoke|quick|full] [--workloads W1_core,W3_latency,...]\n"
               "              [--peers heap,wheel-1ms-1024,...] [--n 1000,100000] [--reps K]\n"
               "              [--timer-slack NS] [--out DIR]\n"
               "  tkbench plot DIR                  render figures (plots/render.sh)\n"
               "  tkbench compare [--out OUT] DIR... compare runs (plots/compare.sh)\n"
               "Default suite: quick. Default folder: results/<date>-<suite>.\n"
               "--n sets the populations of W1 and W6_dist; --reps every repetition count;\n"
               "--timer-slack the slack (ns) of the timer threads (default 1; -1 leaves it).\n");
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "_w5") == 0) { /* W5's fresh process */
        if (argc != 5 && argc != 6)
            return 2;
        return tkb_w5_child(argv[2], (size_t)strtoull(argv[3], NULL, 10),
                            strtoll(argv[4], NULL, 10), argc == 6 ? atoi(argv[5]) : 0);
    }
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "list") == 0)
        return cmd_list();
    if (strcmp(argv[1], "run") == 0)
        return cmd_run(argc, argv);
    if (strcmp(argv[1], "plot") == 0)
        return cmd_plot(argc, argv);
    if (strcmp(argv[1], "compare") == 0)
        return cmd_compare(argc, argv);
    die_usage("unknown command '%s'", argv[1]);
    return 2;
}
