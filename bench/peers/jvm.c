/* SPDX-License-Identifier: MIT */
/* tkbench: the JVM peers (the JDK's ScheduledThreadPoolExecutor, Netty's
 * HashedWheelTimer), run by the harness of bench/peers/jvm/ in a JVM of its own.
 *
 * The peers themselves are rows of the baseline table (peers.c) with `jvm`
 * set; their name is what the harness dispatches on. A workload the harness
 * implements names, in its descriptor (tkb_workload.jvm), the harness's
 * measurement that runs it, so no workload is named on the Java side. For such a
 * workload and peer, tkb_jvm_cases() makes the same cases (rows, n values,
 * repetitions) as the workload's own builder would, and they share one child:
 *
 *   java JVM_FLAGS -cp JAR:NETTY timerkit.bench.JvmHarness PEER MEASUREMENT REPS
 *        WARMUPS COUNT SECONDS N[,N...]
 *
 * started when the first of them runs. The child runs every n in turn, each
 * with TKB_JVM_WARMUPS unreported iterations and then the measured
 * repetitions, and prints `N REP KEY VALUE` lines, then `done`. Each
 * repetition of a case (one call of its body) reports the lines of its n
 * and repetition as Google Benchmark counters, so the rows land in
 * results.csv, the manifest and the headline table like any peer's. A line
 * that is not of that form, a KEY the workload does not declare, a value that
 * is not finite, a missing `done` or a status other than 0 makes every case
 * of that child a failed benchmark, with the reason.
 *
 * Where things are found (tkb_jvm_missing()):
 *   - the harness jar: $TKBENCH_JVM_JAR, else jvm/tkbench-jvm.jar in the data
 *     folder (an installed tkbench), else the one this build made;
 *   - java: $TKBENCH_JAVA, else the one found at configure time;
 *   - Netty's jar: the one found at configure time. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "datadir.h"
#include "harness/harness.h"

extern char **environ;

#ifndef TKB_JAVA
#define TKB_JAVA ""
#endif
#ifndef TKB_JVM_JAR
#define TKB_JVM_JAR ""
#endif
#ifndef TKB_NETTY_JAR
#define TKB_NETTY_JAR ""
#endif

/* The installed harness, relative to the data folder (bench/CMakeLists.txt). */
#define JVM_JAR_IN_DATA "jvm/tkbench-jvm.jar"
#define JVM_MAIN "timerkit.bench.JvmHarness"
/* How long a child may print nothing before it counts as hung (seconds;
 * $TKBENCH_JVM_SILENCE_S overrides it, for the tests). */
#define JVM_SILENCE_S 300

/* Iterations the child runs, unreported, before the measured ones at each n. */
#define TKB_JVM_WARMUPS 2

/* The JVM's flags, the same for every peer and workload (docs/workloads.md):
 * a fixed heap, so it neither grows nor shrinks during a run, and the
 * throughput collector, whose System.gc() is a full, compacting collection
 * (W5 reads the live heap after it). */
static const char *const jvm_flags[] = {"-Xms2g", "-Xmx2g", "-XX:+UseParallelGC"};

/* The largest n the JVM peers run (their heap is fixed at 2 GiB). */
#define TKB_JVM_MAX_N ((size_t)2000000)

/* One child: what it printed, or why it failed. Shared by the cases of one
 * (peer, workload); owned by the first of them (tkb_jvm_cases_free()). */
typedef struct tkb_jvm_run {
    char sizes[256]; /* the n values of its cases, comma-separated */
    bool ran;
    char err[320]; /* empty: the output is good */
    char *out;     /* its standard output, NUL-terminated */
    size_t len;
} tkb_jvm_run;

/* Found paths, decided on the first call (the CLI's main thread; the case
 * bodies run on it too). */
static struct {
    bool done;
    char java[PATH_MAX];
    char jar[PATH_MAX + 32];
    char why[2 * PATH_MAX];
} found;

static void find_paths(void) {
    if (found.done)
        return;
    found.done = true;
    const char *java = getenv("TKBENCH_JAVA");
    const char *jar = getenv("TKBENCH_JVM_JAR");
    snprintf(found.java, sizeof found.java, "%s", java != NULL && java[0] ? java : TKB_JAVA);
    if (jar != NULL && jar[0]) {
        snprintf(found.jar, sizeof found.jar, "%s", jar);
    } else {
        char inst[PATH_MAX + 32];
        snprintf(inst, sizeof inst, "%s/%s", tkb_data_dir(), JVM_JAR_IN_DATA);
        snprintf(found.jar, sizeof found.jar, "%s", access(inst, R_OK) == 0 ? inst : TKB_JVM_JAR);
    }
    if (found.java[0] == '\0' || access(found.java, X_OK) != 0)
        snprintf(found.why, sizeof found.why, "no java to run (%s; set TKBENCH_JAVA)",
                 found.java[0] ? found.java : "none found at configure time");
    else if (found.jar[0] == '\0' || access(found.jar, R_OK) != 0)
        snprintf(found.why, sizeof found.why,
                 "the JVM harness jar %s is not there (build it, install it, or set "
                 "TKBENCH_JVM_JAR)",
                 found.jar[0] ? found.jar : "(none built)");
    else if (access(TKB_NETTY_JAR, R_OK) != 0)
        snprintf(found.why, sizeof found.why, "Netty's jar %s is not there (Debian libnetty-java)",
                 TKB_NETTY_JAR);
}

const char *tkb_jvm_missing(void) {
    find_paths();
    return found.why[0] ? found.why : NULL;
}

const char *tkb_jvm_describe(void) {
    static char text[3 * PATH_MAX + 256];
    find_paths();
    size_t k = (size_t)snprintf(text, sizeof text, "%s", found.java);
    for (size_t i = 0; i < TKB_COUNT(jvm_flags) && k < sizeof text; i++)
        k += (size_t)snprintf(text + k, sizeof text - k, " %s", jvm_flags[i]);
    if (k < sizeof text)
        snprintf(text + k, sizeof text - k, " -cp %s:%s %s (%d warm-ups per n)", found.jar,
                 TKB_NETTY_JAR, JVM_MAIN, TKB_JVM_WARMUPS);
    return text;
}

__attribute__((format(printf, 2, 3))) static void run_fail(tkb_jvm_run *r, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, sizeof r->err, "JVM harness: %s", msg);
}

/* Is `key` a line the harness may print for workload w? */
static bool known_key(const tkb_workload *w, const char *key) {
    return strcmp(key, "iteration_s") == 0 || (w->hist && strcmp(key, "late_ns") == 0) ||
           tkb_metric_find(w, key) != NULL;
}

/* One line `N REP KEY VALUE`: its parts, or false. */
static bool parse_line(const char *line, size_t *n, int *rep, char *key, size_t key_len,
                       double *v) {
    char k[64], tail;
    unsigned long long nn;
    int r;
    double d;
    if (sscanf(line, "%llu %d %63s %lf %c", &nn, &r, k, &d, &tail) != 4 || !isfinite(d) || r < 0)
        return false;
    *n = (size_t)nn;
    *rep = r;
    snprintf(key, key_len, "%s", k);
    *v = d;
    return true;
}

/* Checks the whole output of a child that exited with status 0. */
static void check_output(tkb_jvm_run *r, const tkb_case *c) {
    bool done = false;
    long lineno = 0;
    for (char *p = r->out; *p != '\0' && r->err[0] == '\0';) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), p);
        lineno++;
        size_t n;
        int rep;
        char key[64];
        double v;
        if (done)
            run_fail(r, "output after `done` at line %ld: '%.80s'", lineno, line);
        else if (strcmp(line, "done") == 0)
            done = true;
        else if (!parse_line(line, &n, &rep, key, sizeof key, &v))
            run_fail(r, "unreadable line %ld: '%.80s'", lineno, line);
        else if (!known_key(c->wl, key))
            run_fail(r, "line %ld: '%.80s': not a metric of %s", lineno, line, c->wl->name);
        p = nl ? nl + 1 : p + len;
    }
    if (r->err[0] == '\0' && !done)
        run_fail(r, "its output ends before `done` (%ld lines)", lineno);
}

/* Starts the JVM for c's (peer, workload), its stdout into *out_fd.
 * Returns its pid, or -1 (run_fail() said why). */
static pid_t spawn_child(const tkb_case *c, int *out_fd) {
    tkb_jvm_run *r = c->jvm;
    char cp[3 * PATH_MAX], reps[32], warm[32], cnt[32], secs[64];
    snprintf(cp, sizeof cp, "%s:%s", found.jar, TKB_NETTY_JAR);
    snprintf(reps, sizeof reps, "%d", c->reps);
    snprintf(warm, sizeof warm, "%d", TKB_JVM_WARMUPS);
    snprintf(cnt, sizeof cnt, "%zu", c->plan->count > 0 ? c->plan->count : 1);
    snprintf(secs, sizeof secs, "%.17g", c->plan->seconds);
    const char *argv[TKB_COUNT(jvm_flags) + 16];
    size_t a = 0;
    argv[a++] = found.java;
    for (size_t i = 0; i < TKB_COUNT(jvm_flags); i++)
        argv[a++] = jvm_flags[i];
    argv[a++] = "-cp";
    argv[a++] = cp;
    argv[a++] = JVM_MAIN;
    argv[a++] = c->peer->spec;
    argv[a++] = c->wl->jvm;
    argv[a++] = reps;
    argv[a++] = warm;
    argv[a++] = cnt;
    argv[a++] = secs;
    argv[a++] = r->sizes;
    argv[a] = NULL;
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) {
        run_fail(r, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    int rc = posix_spawn(&pid, found.java, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        run_fail(r, "cannot start %s: %s", found.java, strerror(rc));
        return -1;
    }
    *out_fd = fd[0];
    return pid;
}

/* Reads the child's output into r->out until it closes it, or kills the
 * child when it stays silent for silence_s (a hung child: every repetition
 * of every workload prints well within it). *hung, *oom: what went wrong. */
static void read_child(tkb_jvm_run *r, int fd, pid_t pid, long silence_s, bool *hung, bool *oom) {
    size_t cap = 1 << 16;
    r->out = malloc(cap);
    *oom = r->out == NULL;
    *hung = false;
    int64_t last = tkb_now_ns();
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, 1000);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0) {
            if (tkb_now_ns() - last > (int64_t)silence_s * 1000000000) {
                *hung = true;
                kill(pid, SIGKILL);
                break;
            }
            continue;
        }
        char buf[1 << 14];
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        last = tkb_now_ns();
        if (!*oom && r->len + (size_t)got + 1 > cap) {
            char *bigger = realloc(r->out, cap * 2 + (size_t)got);
            if (bigger == NULL)
                *oom = true;
            else {
                r->out = bigger;
                cap = cap * 2 + (size_t)got;
            }
        }
        if (!*oom) {
            memcpy(r->out + r->len, buf, (size_t)got);
            r->len += (size_t)got;
        }
    }
}

/* Runs the child that c shares with the other cases of its (peer, workload)
 * and keeps its output, or why it failed, in c->jvm. */
static void run_child(const tkb_case *c) {
    tkb_jvm_run *r = c->jvm;
    r->ran = true;
    const char *why = tkb_jvm_missing();
    if (why != NULL) {
        run_fail(r, "%s", why);
        return;
    }
    int fd;
    pid_t pid = spawn_child(c, &fd);
    if (pid < 0)
        return;
    const char *env = getenv("TKBENCH_JVM_SILENCE_S");
    long silence_s = env != NULL ? strtol(env, NULL, 10) : 0;
    if (silence_s <= 0)
        silence_s = JVM_SILENCE_S;
    bool hung, oom;
    read_child(r, fd, pid, silence_s, &hung, &oom);
    close(fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (hung) {
        run_fail(r, "printed nothing for %ld s: killed", silence_s);
        return;
    }
    if (oom) {
        run_fail(r, "out of memory reading its output");
        return;
    }
    r->out[r->len] = '\0';
    if (WIFSIGNALED(status))
        run_fail(r, "killed by signal %d", WTERMSIG(status));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        run_fail(r, "exited with status %d (its own message, if any, is above)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    else
        check_output(r, c);
}

/* Reports, as counters of this repetition, the child's lines of (n, rep). */
static void report(tk_gb_state *st, tkb_case *c, int rep) {
    const tkb_jvm_run *r = c->jvm;
    tkb_hist h;
    bool have_hist = false, any = false, timed = false;
    for (const char *p = r->out; p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        char line[256];
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), p);
        p = nl ? nl + 1 : NULL;
        size_t n;
        int lrep;
        char key[64];
        double v;
        if (!parse_line(line, &n, &lrep, key, sizeof key, &v) || n != (size_t)c->arg || lrep != rep)
            continue;
        any = true;
        if (strcmp(key, "iteration_s") == 0) {
            tk_gb_set_iteration_time(st, v > 0 ? v : 1e-9);
            timed = true;
        } else if (strcmp(key, "late_ns") == 0) {
            if (!have_hist) {
                if (tkb_hist_init(&h) != 0) {
                    tk_gb_skip(st, "out of memory");
                    return;
                }
                have_hist = true;
            }
            tkb_hist_record(&h, (int64_t)v);
        } else {
            tk_gb_counter(st, key, v);
        }
    }
    if (have_hist) { /* as the C workloads derive them (w3_latency.c) */
        tkb_hist_counters(st, &h, "late", true);
        tk_gb_counter(st, "late_max_us", (double)h.max / 1000.0);
        tk_gb_counter(st, "early_count", (double)h.early_count);
        if (c->hist)
            tkb_hist_merge(c->hist, &h);
        tkb_hist_destroy(&h);
    }
    if (!any || !timed) {
        char msg[160];
        snprintf(msg, sizeof msg, "JVM harness: %s for n=%lld, repetition %d",
                 any ? "no iteration_s" : "no values", (long long)c->arg, rep);
        tk_gb_skip(st, msg);
    }
}

static void jvm_body(tk_gb_state *st, tkb_case *c) {
    int rep = c->rep_next++;
    if (!c->jvm->ran)
        run_child(c);
    while (tk_gb_keep_running(st)) {
        if (c->jvm->err[0] != '\0') {
            tk_gb_skip(st, c->jvm->err);
            break;
        }
        report(st, c, rep);
    }
}

size_t tkb_jvm_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                     tkb_case *cases, size_t cap) {
    if (!p->jvm || !w->jvm || p->missing != NULL)
        return 0;
    tkb_jvm_run *r = calloc(1, sizeof *r);
    if (r == NULL)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < TKB_COUNT(plan->sizes) && plan->sizes[i] != 0; i++) {
        size_t n = plan->sizes[i];
        if (n > TKB_JVM_MAX_N)
            continue;
        /* per repetition: the workload's window, about 2 us per timer and
         * 1 us per pair; the warm-ups (some at a tenth of n) about one more */
        double est = (plan->seconds + (double)n * 2e-6 + (double)plan->count * 1e-6 + 0.1) *
                     (1.0 + 1.0 / (plan->reps > 0 ? plan->reps : 1));
        tkb_case *c = tkb_case_add(cases, cap, &k, w, plan, p, (double)n, (int64_t)n, jvm_body,
                                   plan->reps, est + (k == 0 ? 0.5 : 0));
        if (c == NULL)
            break;
        c->realtime = true;
        c->jvm = r;
        size_t len = strlen(r->sizes);
        snprintf(r->sizes + len, sizeof r->sizes - len, "%s%zu", len ? "," : "", n);
        if (w->hist)
            tkb_case_attach_hist(c);
    }
    if (k == 0)
        free(r);
    /* one child runs every n with one count of repetitions: the most any case needs */
    int reps = 0;
    for (size_t i = 0; i < k; i++)
        reps = cases[i].reps > reps ? cases[i].reps : reps;
    for (size_t i = 0; i < k; i++) {
        cases[i].est_seconds = cases[i].est_seconds / cases[i].reps * reps;
        cases[i].reps = reps;
    }
    return k;
}

void tkb_jvm_cases_free(tkb_case *cases, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (cases[i].jvm != NULL && (i == 0 || cases[i - 1].jvm != cases[i].jvm)) {
            free(cases[i].jvm->out);
            free(cases[i].jvm);
        }
}
