/* SPDX-License-Identifier: MIT */
/* tkb_data_dir(): see datadir.h. */
#define _GNU_SOURCE
#include "datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TK_SOURCE_DIR
#define TK_SOURCE_DIR "."
#endif
/* The installed data folder relative to the installed binary's folder
 * (bench/CMakeLists.txt: from CMAKE_INSTALL_BINDIR to DATADIR/timerkit). */
#ifndef TKB_DATA_FROM_BIN
#define TKB_DATA_FROM_BIN "../share/timerkit"
#endif

/* The answer, decided on the first call. tkbench's one thread reads it (the
 * CLI runs on its main thread; benchmark threads never ask). */
static char data_dir[PATH_MAX];

static int has_renderer(const char *dir) {
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/plots/render.py", dir);
    return access(p, R_OK) == 0;
}

const char *tkb_data_dir(void) {
    if (data_dir[0] != '\0')
        return data_dir;
    const char *env = getenv("TKBENCH_DATA_DIR");
    if (env != NULL && env[0] != '\0' && strlen(env) < sizeof data_dir) {
        snprintf(data_dir, sizeof data_dir, "%s", env);
        return data_dir;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            char cand[PATH_MAX + sizeof TKB_DATA_FROM_BIN + 2];
            snprintf(cand, sizeof cand, "%s/%s", exe, TKB_DATA_FROM_BIN);
            char real[PATH_MAX];
            if (realpath(cand, real) != NULL && has_renderer(real)) {
                snprintf(data_dir, sizeof data_dir, "%s", real);
                return data_dir;
            }
        }
    }
    snprintf(data_dir, sizeof data_dir, "%s", TK_SOURCE_DIR);
    return data_dir;
}
