/* SPDX-License-Identifier: MIT */
/* timerkit: the differential fuzzer of the engine cores.
 *
 * libFuzzer's entry point runs each input through the core-model
 * interpreter (core-model.h): the input is a program (its format is written
 * there) run on the pure core of every registered engine that has one, in
 * lockstep, each checked against the model of the core contract of
 * api/timerkit/engine.h. A departure prints the engine, its parameters, the
 * operation and its index, and aborts; libFuzzer saves the input.
 *
 * Build: fuzz/run.sh (clang + libFuzzer, CMake option TIMERKIT_FUZZER). With
 * -DTK_FUZZ_STANDALONE this file is instead a replayer that runs every file
 * or directory named on its command line (CTest fuzz_replay; fuzz/regress.sh). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core-model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)tkm_run(data, size, NULL);
    return 0;
}

#ifdef TK_FUZZ_STANDALONE
/* Replays files through the interpreter: each argument is a file or a
 * directory (every regular file in it, in name order). Prints, per engine,
 * the operations and core calls run. Exits non-zero if an argument cannot be
 * read, if nothing was replayed or no engine has a core; a mismatch aborts
 * (the message names the engine and the operation; TK_FUZZ_VERBOSE=1 names
 * each file as it starts, TK_FUZZ_TRACE=1 each operation). */
#include <dirent.h>
#include <sys/stat.h>

static tkm_stats stats; /* summed over every input replayed */

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (buf == NULL)
        return -1;
    if (getenv("TK_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
    (void)tkm_run(buf, len, &stats);
    free(buf);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, size_t *count) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof(*names));
            if (nn == NULL)
                abort();
            names = nn;
        }
        size_t l = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        if (names[n] == NULL)
            abort();
        snprintf(names[n], l, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) != 0)
                rc = -1;
            else
                (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    size_t count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            if (replay_dir(argv[i], &count) != 0)
                rc = 1;
        } else if (replay_file(argv[i]) != 0) {
            rc = 1;
        } else {
            count++;
        }
    }
    for (size_t e = 0; e < stats.engines; e++) {
        const tkm_engine_stats *st = &stats.engine[e];
        printf("fuzz_replay: %-8s %8llu programs %10llu ops %12llu core calls %10llu handed out\n",
               st->name, (unsigned long long)st->programs, (unsigned long long)st->ops,
               (unsigned long long)st->calls, (unsigned long long)st->handed_out);
    }
    printf("fuzz_replay: %zu inputs replayed on %zu engine cores, no mismatch\n", count,
           stats.engines);
    if (count == 0 || stats.engines == 0) {
        fprintf(stderr, "fuzz_replay: nothing was checked\n");
        rc = 1;
    }
    return rc;
}
#endif
