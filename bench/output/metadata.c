/* SPDX-License-Identifier: MIT */
/* tkbench: metadata.json and metadata.txt: the machine, the build and its
 * provenance, the run's parameters (docs/results-format.md). */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "heap-core.h"
#include "output/output.h"
#include "params-internal.h"
#include "replay/replay.h"
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

/* Stamped at build time (bench/stamp.cmake writes tkb-build.c). */
extern const char tkb_build_commit[], tkb_build_dirty[], tkb_build_diff[];

/* The first line a shell command prints, without its newline, in buf.
 * Returns buf, or NULL if the command failed. */
static char *read_cmd(const char *cmd, char *buf, size_t len) {
    FILE *p = popen(cmd, "r");
    buf[0] = 0;
    if (p == NULL)
        return NULL;
    if (fgets(buf, (int)len, p) == NULL)
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

int tkb_metadata_write(const char *dir, json_t *m) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/metadata.json", dir);
    if (json_dump_file(m, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/metadata.txt", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    put_txt(f, "", m);
    return fclose(f);
}

/* The source tree's state now, as bench/stamp.cmake records it at build time:
 * commit, dirty flag, and a hash of the uncommitted changes. */
static void source_state(json_t *m) {
    char cmd[PATH_MAX + 200], commit[128], dirty[512], diff[128];
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", TK_SOURCE_DIR);
    if (read_cmd(cmd, commit, sizeof commit) == NULL || commit[0] == 0)
        snprintf(commit, sizeof commit, "unknown");
    snprintf(cmd, sizeof cmd,
             "git -C '%s' --no-optional-locks status --porcelain --untracked-files=no "
             "2>/dev/null | head -1",
             TK_SOURCE_DIR);
    bool is_dirty = read_cmd(cmd, dirty, sizeof dirty) != NULL && dirty[0] != 0;
    diff[0] = 0;
    if (is_dirty) {
        snprintf(cmd, sizeof cmd, "git -C '%s' diff HEAD 2>/dev/null | sha1sum | cut -c1-12",
                 TK_SOURCE_DIR);
        read_cmd(cmd, diff, sizeof diff);
    }
    json_object_set_new(m, "commit", json_string(tkb_build_commit));
    json_object_set_new(m, "commit_dirty", json_string(tkb_build_dirty));
    if (tkb_build_diff[0] != 0)
        json_object_set_new(m, "build_diff", json_string(tkb_build_diff));
    json_object_set_new(m, "source_commit", json_string(commit));
    json_object_set_new(m, "source_dirty", json_string(is_dirty ? "yes" : "no"));
    if (is_dirty)
        json_object_set_new(m, "source_diff", json_string(diff));
    bool same = strcmp(commit, tkb_build_commit) == 0 &&
                strcmp(is_dirty ? "yes" : "no", tkb_build_dirty) == 0 &&
                strcmp(diff, tkb_build_diff) == 0;
    if (!same) {
        char note[512];
        snprintf(note, sizeof note,
                 "tkbench was built from %s%s%s, but the source tree is now at %s%s%s: the "
                 "figures are of the build; rebuild tkbench to measure the tree",
                 tkb_build_commit, tkb_build_diff[0] ? " with uncommitted changes " : "",
                 tkb_build_diff, commit, is_dirty ? " with uncommitted changes " : "", diff);
        json_object_set_new(m, "commit_note", json_string(note));
        fprintf(stderr, "tkbench: note: %s\n", note);
    }
}

static json_t *json_sizes(const size_t *sizes, size_t cap) {
    json_t *a = json_array();
    for (size_t i = 0; i < cap && sizes[i] != 0; i++)
        json_array_append_new(a, json_integer((json_int_t)sizes[i]));
    return a;
}

/* The machine: CPU, cores, its facts (machine_facts), kernel. */
static void machine_json(json_t *m) {
    char buf[1024];
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
}

/* How tkbench was built: compiler, flags, build type, Google Benchmark's
 * version and the build type it reports (from its context, once it ran). */
static void build_json(json_t *m, json_t *gb_context) {
    json_object_set_new(m, "compiler", json_string(TKB_COMPILER));
    json_object_set_new(m, "cflags", json_string(TKB_CFLAGS));
    json_object_set_new(m, "cxxflags", json_string(TKB_CXXFLAGS));
    json_object_set_new(m, "build_type", json_string(TKB_BUILD_TYPE));
    json_object_set_new(m, "gbench_version", json_string(TKB_GBENCH_VERSION));
    const char *gbt = "unknown (run did not finish)";
    if (gb_context && json_string_value(json_object_get(gb_context, "library_build_type")))
        gbt = json_string_value(json_object_get(gb_context, "library_build_type"));
    json_object_set_new(m, "gbench_build_type", json_string(gbt));
}

/* The peers' specs in one line ("peers"), and each one's label, kind,
 * description, parameters and levels ("peer_params"). */
static void peers_json(json_t *m, const tkb_peer *peers, size_t npeers) {
    char buf[4096]; /* the suites' 36 peers' specs take about 900 */
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < npeers && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", peers[i].spec);
    json_object_set_new(m, "peers", json_string(buf));
    json_t *pp = json_object();
    for (size_t i = 0; i < npeers; i++) {
        const tkb_peer *p = &peers[i];
        json_t *o = json_object();
        json_object_set_new(o, "label", json_string(p->label));
        json_object_set_new(o, "kind", json_string(p->kind));
        json_object_set_new(o, "description", json_string(p->description));
        for (size_t k = 0; p->engine != NULL && k < p->engine->param_count; k++) {
            char v[64];
            if (tk_queue_param_format(&p->engine->params[k], &p->qc, v, sizeof v) == TK_OK)
                json_object_set_new(o, p->engine->params[k].key, json_string(v));
        }
        const struct {
            const char *key;
            int64_t ns;
        } slacks[] = {{TKB_SLACK_KEY, p->slack_ns}, {TKB_OS_SLACK_KEY, p->os_slack_ns}};
        for (size_t k = 0; k < TKB_COUNT(slacks); k++) /* tkbench's own, where set */
            if (slacks[k].ns != 0) {
                char v[TK__DURATION_TEXT];
                tk__duration_text(slacks[k].ns, v, sizeof v);
                json_object_set_new(o, slacks[k].key, json_string(v));
            }
        if (p->core_max_n)
            json_object_set_new(o, "core_max_n", json_integer((json_int_t)p->core_max_n));
        json_object_set_new(o, "levels",
                            json_string(p->core && p->svc ? "core executor"
                                        : p->core         ? "core"
                                        : p->svc          ? "executor"
                                                          : "machine"));
        json_object_set_new(pp, p->spec, o);
    }
    json_object_set_new(m, "peer_params", pp);
}

/* The workloads in one line ("workloads") and each one's plan ("plans"). */
static void plans_json(json_t *m, const tkb_selected *ws, size_t nws) {
    char buf[1024];
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < nws && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", ws[i].wl->name);
    json_object_set_new(m, "workloads", json_string(buf));
    json_t *plans = json_object();
    for (size_t i = 0; i < nws; i++) {
        const tkb_plan *pl = &ws[i].plan;
        json_t *o = json_object();
        json_object_set_new(o, "sizes", json_sizes(pl->sizes, TKB_COUNT(pl->sizes)));
        json_object_set_new(o, "reps", json_integer(pl->reps));
        if (pl->reps_long)
            json_object_set_new(o, "reps_long", json_integer(pl->reps_long));
        if (pl->count)
            json_object_set_new(o, "count", json_integer((json_int_t)pl->count));
        if (pl->seconds > 0)
            json_object_set_new(o, "seconds", json_real(pl->seconds));
        json_object_set_new(plans, ws[i].wl->name, o);
    }
    json_object_set_new(m, "plans", plans);
}

/* The traces a replay ran, and its settings ("replay"), if it did. */
static void replay_json(json_t *m) {
    const tkb_replay_set *rs = tkb_the_run.replay;
    if (rs == NULL)
        return;
    json_t *r = json_object(), *tr = json_object();
    json_object_set_new(r, "step_ns", json_integer(rs->step_ns));
    json_object_set_new(r, "speed", json_real(rs->speed));
    for (size_t i = 0; i < rs->count; i++) {
        const tkt_trace *tt = &rs->traces[i].trace;
        json_t *o = json_object();
        json_object_set_new(o, "events", json_integer((json_int_t)tt->count));
        json_object_set_new(o, "timers", json_integer((json_int_t)tt->ntimers));
        json_object_set_new(o, "duration_ns", json_integer(tt->duration_ns));
        json_object_set_new(o, "source", json_string(tt->source));
        json_object_set_new(tr, tt->name, o);
    }
    json_object_set_new(r, "traces", tr);
    json_object_set_new(m, "replay", r);
}

/* A foreign peers' harness that ran: its program and its runtime line. */
static void harness_entry(const char *name, const char *program, const char *runtime, void *ctx) {
    json_t *o = json_object();
    json_object_set_new(o, "program", json_string(program));
    json_object_set_new(o, "runtime", json_string(runtime));
    json_object_set_new(ctx, name, o);
}

/* The harness's settings and the peers' versions: the suite's strawman
 * limits and minimum time, the executor's pool and policy, the heap's
 * arity, the in-process baselines' versions, the foreign peers' harnesses. */
static void harness_json(json_t *m) {
    const tkb_suite *suite = tkb_the_run.suite;
    json_object_set_new(m, "strawman_max_n", json_integer((json_int_t)suite->strawman_max_n));
    json_object_set_new(m, "strawman_pairs", json_integer((json_int_t)suite->strawman_pairs));
    json_object_set_new(m, "gbench_min_time_s", json_real(suite->min_time));
    json_object_set_new(m, "executor_pool_threads", json_integer(1));
    json_object_set_new(m, "remove_on_cancel", json_true());
    json_object_set_new(m, "heap_arity", json_integer(TK__HEAP_ARITY));
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
#if TKB_HAVE_LIBEV /* the version from peers/libev.c: ev.h and libevent's headers clash */
    json_object_set_new(m, "libev_version", json_string(tkb_libev_version()));
    json_object_set_new(m, "libev_config",
                        json_string("ev_loop_new(EVFLAG_AUTO); at executor level start/stop "
                                    "handed to the loop thread through a locked queue and "
                                    "ev_async_send()"));
#endif
#if TKB_HAVE_ASIO
    json_object_set_new(m, "asio_version", json_string(tkb_asio_version()));
    json_object_set_new(m, "asio_config",
                        json_string("standalone asio, header-only; executor level: "
                                    "asio::steady_timer on an io_context (concurrency hint 1) run "
                                    "by one thread, operations handed over with asio::post(); "
                                    "core level: basic_waitable_timer over a virtual clock on an "
                                    "io_context with ASIO_CONCURRENCY_HINT_UNSAFE"));
#endif
    json_t *hs = json_object();
    tkb_child_each(harness_entry, hs);
    json_object_set_new(m, "harnesses", hs);
}

json_t *tkb_metadata_build(const char *suite_name, const tkb_selected *ws, size_t nws,
                           const tkb_peer *peers, size_t npeers, int argc, char **argv,
                           json_t *gb_context) {
    json_t *m = json_object();
    char buf[1024];
    time_t t = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    json_object_set_new(m, "date", json_string(buf));
    source_state(m);
    json_object_set_new(m, "suite", json_string(suite_name));
    json_object_set_new(m, "base_suite", json_string(tkb_the_run.suite->name));
    machine_json(m);
    build_json(m, gb_context);
    json_object_set_new(m, "timer_slack_ns", json_integer(tkb_the_run.timer_slack_ns));
    peers_json(m, peers, npeers);
    json_object_set_new(m, "default_engine", json_string(tk_engine_default()->name));
    if (gethostname(buf, sizeof buf) == 0)
        json_object_set_new(m, "hostname", json_string(buf));
    plans_json(m, ws, nws);
    replay_json(m);
    harness_json(m);
    /* the library this tkbench runs with (timerkit/version.h: one version for the
     * library, tkbench --version and every results folder) */
    json_object_set_new(m, "tkbench_version", json_string(tk_version_string()));
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < argc && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", argv[i]);
    json_object_set_new(m, "command", json_string(buf));
    if (gb_context)
        json_object_set(m, "gbench_context", gb_context);
    return m;
}
