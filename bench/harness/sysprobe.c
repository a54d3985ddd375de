/* SPDX-License-Identifier: MIT */
/* tkbench: clocks, resource usage and thread probes (Linux). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tkbench.h"

int64_t tkb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tkb_rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f == NULL)
        return -1;
    int ok = fscanf(f, "%ld %ld", &size, &resident) == 2;
    fclose(f);
    return ok ? (int64_t)resident * sysconf(_SC_PAGESIZE) : -1;
}

int64_t tkb_cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

int64_t tkb_thread_cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/* The CPU time of thread tid of this process, from its CPU clock: the
 * clock id of a thread of the same process, as pthread_getcpuclockid()
 * makes it from the thread's id (the kernel's MAKE_THREAD_CPUCLOCK: ~tid << 3,
 * per-thread 4, scheduler clock 2); -1 if the thread is gone. Exact to the
 * ns, where /proc/self/task/TID/schedstat is not always there (a kernel
 * without CONFIG_SCHED_INFO). */
static int64_t thread_cpu_ns(long tid) {
    clockid_t id = (clockid_t)((~(unsigned long)tid) << 3 | 4 | 2);
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Thread tid's voluntary + nonvoluntary context switches; false if gone. */
static bool thread_ctxt(const char *tid, uint64_t *out) {
    char path[300], line[128];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    uint64_t total = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v;
        if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
            sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
            total += v;
    }
    fclose(f);
    *out = total;
    return true;
}

void tkb_threads_read(tkb_threads *s) {
    long self = (long)syscall(SYS_gettid);
    s->n = 0;
    s->truncated = false;
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long tid = atol(e->d_name);
        if (e->d_name[0] == '.' || tid == self)
            continue;
        if (s->n == TKB_THREADS_MAX) {
            s->truncated = true;
            break;
        }
        uint64_t ctxt;
        int64_t cpu = thread_cpu_ns(tid);
        if (cpu < 0 || !thread_ctxt(e->d_name, &ctxt))
            continue; /* ended meanwhile */
        s->t[s->n++] = (tkb_thread_use){.tid = tid, .ctxt = ctxt, .cpu_ns = cpu};
    }
    closedir(d);
}

void tkb_threads_since(const tkb_threads *a, const tkb_threads *b, tkb_threads_delta *d) {
    *d = (tkb_threads_delta){.threads = b->n};
    for (size_t i = 0; i < b->n; i++) {
        const tkb_thread_use *was = NULL;
        for (size_t k = 0; k < a->n && was == NULL; k++)
            if (a->t[k].tid == b->t[i].tid)
                was = &a->t[k];
        d->ctxt += b->t[i].ctxt - (was != NULL ? was->ctxt : 0);
        d->cpu_ns += b->t[i].cpu_ns - (was != NULL ? was->cpu_ns : 0);
        d->started += was == NULL;
    }
    for (size_t k = 0; k < a->n; k++) {
        bool still = false;
        for (size_t i = 0; i < b->n && !still; i++)
            still = b->t[i].tid == a->t[k].tid;
        d->ended += !still;
    }
}

uint64_t tkb_other_threads_ctxt(void) {
    static tkb_threads s; /* main thread only (replay, W4): too large for a stack frame */
    tkb_threads_read(&s);
    uint64_t total = 0;
    for (size_t i = 0; i < s.n; i++)
        total += s.t[i].ctxt;
    return total;
}

void tkb_set_timer_slack(int64_t ns) {
    if (ns >= 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0);
}

void tkb_sleep_until_ns(int64_t deadline_ns) {
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

void tkb_sleep_ns(int64_t ns) {
    tkb_sleep_until_ns(tkb_now_ns() + ns);
}
