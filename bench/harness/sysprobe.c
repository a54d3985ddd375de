/* SPDX-License-Identifier: MIT */
/* tkbench: clocks, resource usage and thread probes (Linux). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
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

uint64_t tkb_other_threads_ctxt(void) {
    long self = (long)syscall(SYS_gettid);
    DIR *d = opendir("/proc/self/task");
    uint64_t total = 0;
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atol(e->d_name) == self)
            continue;
        char path[300], line[128];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        while (fgets(line, sizeof line, f)) {
            unsigned long long v;
            if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
                sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
                total += v;
        }
        fclose(f);
    }
    closedir(d);
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
