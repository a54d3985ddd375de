/* SPDX-License-Identifier: MIT */
/* The trace library's common part: storage, reading a file (through the
 * system's decompressor when it is compressed), writing the neutral CSV
 * (through the system's compressor when asked), loading by content, names.
 *
 * Decompressors and compressors are run with posix_spawnp() (an argv, no
 * shell) connected by a pipe; their status is checked, and a file they
 * cannot read is reported as "PATH: gzip -dc failed (exit 1)" with their own
 * message on stderr. */
#define _POSIX_C_SOURCE 200809L

#include "trace-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- names ------------------------------------------------------------------------------------
 */

const char *tkt_cls_name(unsigned cls) {
    static const char *const names[] = {"", "wheel", "hrtimer"};
    return cls < sizeof names / sizeof names[0] ? names[cls] : NULL;
}

const char *tkt_op_name(unsigned op) {
    static const char *const names[] = {"start", "cancel", "expire"};
    return op < sizeof names / sizeof names[0] ? names[op] : NULL;
}

/* ---- storage ----------------------------------------------------------------------------------
 */

char *tkt__strndup(tkt__storage *st, const char *s, size_t n) {
    if (st == NULL || (s == NULL && n > 0) || n > SIZE_MAX / 2)
        return NULL;
    tkt__block *b = st->blocks;
    if (b == NULL || b->cap - b->used < n + 1) {
        size_t cap = n + 1 > 65536 ? n + 1 : 65536;
        b = malloc(sizeof *b + cap);
        if (b == NULL)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = st->blocks;
        st->blocks = b;
    }
    char *p = b->data + b->used;
    if (n > 0)
        memcpy(p, s, n);
    p[n] = '\0';
    b->used += n + 1;
    return p;
}

void tkt__storage_free(tkt__storage *st) {
    if (st == NULL)
        return;
    while (st->blocks != NULL) {
        tkt__block *b = st->blocks;
        st->blocks = b->next;
        free(b);
    }
}

bool tkt__grow(void **p, size_t *cap, size_t need, size_t sz) {
    if (need <= *cap)
        return true;
    size_t n = *cap < 16 ? 16 : *cap;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return false;
        n *= 2;
    }
    if (n > SIZE_MAX / sz)
        return false;
    void *q = realloc(*p, n * sz);
    if (q == NULL)
        return false;
    *p = q;
    *cap = n;
    return true;
}

void tkt_free(tkt_trace *t) {
    if (t == NULL)
        return;
    free(t->ev);
    free(t->timers);
    if (t->storage_ != NULL) {
        tkt__storage_free(t->storage_);
        free(t->storage_);
    }
    memset(t, 0, sizeof *t);
}

bool tkt_check(const tkt_trace *t, char *err, size_t err_len) {
    if (t == NULL)
        return tkt__fail(err, err_len, 1, "no trace") == 0;
    if ((t->count > 0 && t->ev == NULL) || (t->ntimers > 0 && t->timers == NULL))
        return tkt__fail(err, err_len, 1, "%s: events or timers missing", t->name) == 0;
    int64_t prev = 0;
    for (size_t i = 0; i < t->count; i++) {
        const tkt_event *e = &t->ev[i];
        if (e->timer >= t->ntimers || e->op > TKT_EXPIRE)
            return tkt__fail(err, err_len, 1, "%s: event %zu: timer %u of %zu, op %u", t->name, i,
                             (unsigned)e->timer, t->ntimers, (unsigned)e->op) == 0;
        if (e->t_ns < prev || e->t_ns > TKT_MAX_NS)
            return tkt__fail(err, err_len, 1, "%s: event %zu: time %lld after %lld", t->name, i,
                             (long long)e->t_ns, (long long)prev) == 0;
        if (e->op == TKT_START ? e->deadline_ns < 0 || e->deadline_ns > TKT_MAX_NS
                               : e->deadline_ns != 0)
            return tkt__fail(err, err_len, 1, "%s: event %zu: deadline %lld", t->name, i,
                             (long long)e->deadline_ns) == 0;
        prev = e->t_ns;
    }
    if (t->duration_ns != prev)
        return tkt__fail(err, err_len, 1, "%s: duration %lld, last event at %lld", t->name,
                         (long long)t->duration_ns, (long long)prev) == 0;
    for (size_t k = 0; k < t->ntimers; k++) {
        const tkt_timer_info *ti = &t->timers[k];
        if (ti->id == NULL || ti->id[0] == '\0' || ti->function == NULL ||
            tkt_cls_name(ti->cls) == NULL)
            return tkt__fail(err, err_len, 1, "%s: timer %zu: no id, no function or bad class",
                             t->name, k) == 0;
    }
    return true;
}

/* ---- small helpers ----------------------------------------------------------------------------
 */

int tkt__fail(char *err, size_t err_len, int code, const char *fmt, ...) {
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return code;
}

int tkt__parse_ns(const char *s, size_t n, int64_t *v) {
    if (n == 0)
        return 1;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 1;
        if (x > (TKT_MAX_NS - (s[i] - '0')) / 10) {
            /* too large: still say "not a number" if a later character is no digit */
            for (size_t j = i + 1; j < n; j++)
                if (s[j] < '0' || s[j] > '9')
                    return 1;
            return 2;
        }
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

uint64_t tkt__hash(const void *s, size_t n) {
    const unsigned char *p = s;
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

void tkt__short_name(const char *path, char *name, size_t len) {
    if (name == NULL || len == 0)
        return;
    const char *base = path != NULL ? strrchr(path, '/') : NULL;
    base = base != NULL ? base + 1 : (path != NULL ? path : "");
    snprintf(name, len, "%s", base);
    static const char *const ext[] = {".gz", ".xz", ".zst", ".csv", ".txt", ".perf"};
    for (bool again = true; again;) {
        again = false;
        for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
            size_t n = strlen(name), m = strlen(ext[i]);
            if (n > m && strcmp(name + n - m, ext[i]) == 0) {
                name[n - m] = '\0';
                again = true;
            }
        }
    }
}

/* The compressor of path by its extension ("gzip", "xz", "zstd"), or NULL. */
static const char *compressor_of(const char *path) {
    if (ends_with(path, ".gz"))
        return "gzip";
    if (ends_with(path, ".xz"))
        return "xz";
    if (ends_with(path, ".zst"))
        return "zstd";
    return NULL;
}

/* Runs argv with fd_in as its stdin and fd_out as its stdout; *pid on success. */
static int spawn(char *const argv[], int fd_in, int fd_out, pid_t *pid) {
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0)
        return rc;
    rc = posix_spawn_file_actions_adddup2(&fa, fd_in, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, fd_out, 1);
    if (rc == 0)
        rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* Waits for pid: 0 if it exited with status 0, else fills why. */
static int reap(pid_t pid, char *why, size_t len) {
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, len, "waitpid: %s", strerror(errno));
            return -1;
        }
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFEXITED(st))
        snprintf(why, len, "exit %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(why, len, "signal %d", WTERMSIG(st));
    else
        snprintf(why, len, "status %d", st);
    return -1;
}

static int cloexec_pipe(int fd[2]) {
    if (pipe(fd) != 0)
        return -1;
    (void)fcntl(fd[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fd[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

/* Reads fd to its end into a growing buffer. */
static int read_fd(int fd, char **buf, size_t *len) {
    size_t cap = 0, n = 0;
    char *b = NULL;
    for (;;) {
        if (!tkt__grow((void **)&b, &cap, n + 65536 + 1, 1)) {
            free(b);
            return TKT_ENOMEM;
        }
        ssize_t r = read(fd, b + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            errno = e;
            return TKT_EIO;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return TKT_OK;
}

int tkt__read_file(const char *path, char **buf, size_t *len, char *err, size_t err_len) {
    if (path == NULL || buf == NULL || len == NULL)
        return tkt__fail(err, err_len, TKT_EIO, "(null): no file given");
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tkt__fail(err, err_len, TKT_EIO, "%s: cannot open: %s", path, strerror(errno));
    const char *z = compressor_of(path);
    if (z == NULL) {
        int rc = read_fd(fd, buf, len);
        int e = errno;
        close(fd);
        if (rc == TKT_ENOMEM)
            return tkt__fail(err, err_len, rc, "%s: out of memory reading it", path);
        if (rc != TKT_OK)
            return tkt__fail(err, err_len, rc, "%s: cannot read: %s", path, strerror(e));
        return TKT_OK;
    }
    int p[2];
    if (cloexec_pipe(p) != 0) {
        int e = errno;
        close(fd);
        return tkt__fail(err, err_len, TKT_EIO, "%s: pipe: %s", path, strerror(e));
    }
    char *argv[] = {(char *)z, (char *)"-dc", NULL};
    pid_t pid;
    int rc = spawn(argv, fd, p[1], &pid);
    close(fd);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        return tkt__fail(err, err_len, TKT_EIO, "%s: cannot run %s: %s", path, z, strerror(rc));
    }
    rc = read_fd(p[0], buf, len);
    int e = errno;
    close(p[0]);
    char why[64];
    int st = reap(pid, why, sizeof why);
    if (rc == TKT_OK && st != 0) {
        free(*buf);
        *buf = NULL;
        *len = 0;
        return tkt__fail(err, err_len, TKT_EIO, "%s: %s -dc failed (%s)", path, z, why);
    }
    if (rc == TKT_ENOMEM)
        return tkt__fail(err, err_len, rc, "%s: out of memory reading it", path);
    if (rc != TKT_OK)
        return tkt__fail(err, err_len, rc, "%s: reading from %s: %s", path, z, strerror(e));
    return TKT_OK;
}

/* ---- writing ----------------------------------------------------------------------------------
 */

/* A string the CSV can hold as a field: no comma, quote, newline or NUL. */
static bool csv_safe(const char *s) {
    return s != NULL && strpbrk(s, ",\"\r\n") == NULL;
}

int tkt_write_csv(const tkt_trace *t, FILE *f, char *err, size_t err_len) {
    if (t == NULL || f == NULL)
        return tkt__fail(err, err_len, TKT_EIO, "tkt_write_csv: no trace or no file");
    if (t->count > 0 && (t->ev == NULL || t->timers == NULL))
        return tkt__fail(err, err_len, TKT_EPARSE, "%s: events without timers", t->name);
    for (size_t i = 0; i < t->ntimers; i++) {
        const tkt_timer_info *ti = &t->timers[i];
        if (!csv_safe(ti->id) || ti->id[0] == '\0' || ti->id[0] == '#' ||
            (ti->function != NULL && !csv_safe(ti->function)) || tkt_cls_name(ti->cls) == NULL)
            return tkt__fail(err, err_len, TKT_EPARSE,
                             "%s: timer %zu: its name or function cannot be written in CSV "
                             "(empty, or holds a comma, quote or newline)",
                             t->name, i);
    }
    bool source_in_meta = false;
    if (t->meta != NULL)
        for (const char *m = t->meta; *m != '\0';) {
            const char *nl = strchr(m, '\n');
            size_t n = nl != NULL ? (size_t)(nl - m) : strlen(m);
            if (n >= 7 && strncmp(m, "source:", 7) == 0)
                source_in_meta = true;
            m += n + (nl != NULL);
        }
    if (t->source[0] != '\0' && !source_in_meta)
        fprintf(f, "# source: %s\n", t->source);
    if (t->meta != NULL)
        for (const char *m = t->meta; *m != '\0';) {
            const char *nl = strchr(m, '\n');
            size_t n = nl != NULL ? (size_t)(nl - m) : strlen(m);
            fprintf(f, "#%s%.*s\n", n > 0 ? " " : "", (int)n, m);
            m += n + (nl != NULL);
        }
    fputs("t_ns,op,timer,deadline_ns,function,class\n", f);
    for (size_t i = 0; i < t->count; i++) {
        const tkt_event *e = &t->ev[i];
        if (e->timer >= t->ntimers || tkt_op_name(e->op) == NULL)
            return tkt__fail(err, err_len, TKT_EPARSE, "%s: event %zu: bad timer or operation",
                             t->name, i);
        const tkt_timer_info *ti = &t->timers[e->timer];
        if (e->op == TKT_START)
            fprintf(f, "%lld,start,%s,%lld,%s,%s\n", (long long)e->t_ns, ti->id,
                    (long long)e->deadline_ns, ti->function != NULL ? ti->function : "",
                    tkt_cls_name(ti->cls));
        else
            fprintf(f, "%lld,%s,%s,,%s,%s\n", (long long)e->t_ns, tkt_op_name(e->op), ti->id,
                    ti->function != NULL ? ti->function : "", tkt_cls_name(ti->cls));
    }
    if (fflush(f) != 0 || ferror(f))
        return tkt__fail(err, err_len, TKT_EIO, "%s: write error: %s", t->name, strerror(errno));
    return TKT_OK;
}

/* tkt_write_csv() into f, with a write error named by path. */
static int write_to(const tkt_trace *t, FILE *f, const char *path, char *err, size_t err_len) {
    int rc = tkt_write_csv(t, f, err, err_len);
    int e = errno;
    if (rc == TKT_EIO)
        tkt__fail(err, err_len, rc, "%s: write error: %s", path, strerror(e));
    return rc;
}

int tkt_save(const tkt_trace *t, const char *path, char *err, size_t err_len) {
    if (t == NULL || path == NULL)
        return tkt__fail(err, err_len, TKT_EIO, "tkt_save: no trace or no path");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return tkt__fail(err, err_len, TKT_EIO, "%s: cannot create: %s", path, strerror(errno));
    const char *z = compressor_of(path);
    if (z == NULL) {
        FILE *f = fdopen(fd, "w");
        if (f == NULL) {
            close(fd);
            return tkt__fail(err, err_len, TKT_EIO, "%s: %s", path, strerror(errno));
        }
        int rc = write_to(t, f, path, err, err_len);
        if (fclose(f) != 0 && rc == TKT_OK)
            rc = tkt__fail(err, err_len, TKT_EIO, "%s: write error: %s", path, strerror(errno));
        return rc;
    }
    int p[2];
    if (cloexec_pipe(p) != 0) {
        int e = errno;
        close(fd);
        return tkt__fail(err, err_len, TKT_EIO, "%s: pipe: %s", path, strerror(e));
    }
    char *argv[] = {(char *)z, (char *)"-c", (char *)"-q", NULL};
    pid_t pid;
    int rc = spawn(argv, p[0], fd, &pid);
    close(fd);
    close(p[0]);
    if (rc != 0) {
        close(p[1]);
        return tkt__fail(err, err_len, TKT_EIO, "%s: cannot run %s: %s", path, z, strerror(rc));
    }
    /* A compressor that dies early (a full disk) must not kill the caller with
     * SIGPIPE: block it in this thread while writing, and take back a SIGPIPE
     * the writes raised (they then fail with EPIPE, reported below). */
    sigset_t pipe_set, old_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    bool blocked =
        pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set) == 0 && !sigismember(&old_set, SIGPIPE);
    FILE *f = fdopen(p[1], "w");
    if (f == NULL) {
        rc = tkt__fail(err, err_len, TKT_EIO, "%s: %s", path, strerror(errno));
        close(p[1]);
    } else {
        rc = write_to(t, f, path, err, err_len);
        if (fclose(f) != 0 && rc == TKT_OK)
            rc = tkt__fail(err, err_len, TKT_EIO, "%s: write error: %s", path, strerror(errno));
    }
    if (blocked) {
        sigset_t pending;
        if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
            struct timespec zero = {0, 0};
            (void)sigtimedwait(&pipe_set, NULL, &zero);
        }
        pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    }
    char why[64];
    if (reap(pid, why, sizeof why) != 0)
        rc = tkt__fail(err, err_len, TKT_EIO, "%s: %s -c failed (%s)", path, z, why);
    return rc;
}

/* ---- loading ----------------------------------------------------------------------------------
 */

/* Neutral CSV: the first line that is not blank starts with '#' or "t_ns,". */
static bool looks_like_csv(const char *buf, size_t len) {
    size_t i = 0;
    while (i < len && (buf[i] == '\n' || buf[i] == '\r' || buf[i] == ' ' || buf[i] == '\t'))
        i++;
    if (i < len && buf[i] == '#')
        return true;
    return len - i >= 5 && memcmp(buf + i, "t_ns,", 5) == 0;
}

/* The one loader of a file: reads it whole, then parses it as `kind` says
 * (LOAD_ANY: whichever its content is). */
typedef enum { LOAD_CSV, LOAD_PERF, LOAD_ANY } load_kind;

static int load_file(const char *path, load_kind kind, const tkt_perf_opts *opts, tkt_trace *out,
                     tkt_import_stats *stats, bool *is_csv, char *err, size_t err_len) {
    if (out == NULL)
        return tkt__fail(err, err_len, TKT_EIO, "%s: no trace to fill", path ? path : "(null)");
    memset(out, 0, sizeof *out);
    if (stats != NULL && kind == LOAD_ANY)
        memset(stats, 0, sizeof *stats);
    char *buf;
    size_t len;
    int rc = tkt__read_file(path, &buf, &len, err, err_len);
    if (rc != TKT_OK)
        return rc;
    bool csv = kind == LOAD_CSV || (kind == LOAD_ANY && looks_like_csv(buf, len));
    if (is_csv != NULL)
        *is_csv = csv;
    if (csv)
        rc = tkt_parse_csv(path, buf, len, out, err, err_len);
    else
        rc = tkt_parse_perf(path, buf, len, opts, out, stats, err, err_len);
    free(buf);
    return rc;
}

int tkt_load(const char *path, tkt_trace *out, char *err, size_t err_len) {
    return load_file(path, LOAD_CSV, NULL, out, NULL, NULL, err, err_len);
}

int tkt_import_perf(const char *path, const tkt_perf_opts *opts, tkt_trace *out,
                    tkt_import_stats *stats, char *err, size_t err_len) {
    return load_file(path, LOAD_PERF, opts, out, stats, NULL, err, err_len);
}

int tkt_load_any(const char *path, const tkt_perf_opts *opts, tkt_trace *out,
                 tkt_import_stats *stats, bool *is_csv, char *err, size_t err_len) {
    return load_file(path, LOAD_ANY, opts, out, stats, is_csv, err, err_len);
}
