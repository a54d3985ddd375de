/* SPDX-License-Identifier: MIT */
/* tkbench: small helpers shared by every room (util.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "params-internal.h"
#include "timerkit/status.h"
#include "util.h"

int tkb_mkdir_p(const char *path) {
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p != '\0'; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

char *tkb_slurp(const char *path) {
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

int tkb_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int tkb_cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double tkb_median(double *v, size_t n) {
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, tkb_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *tkb_duration_text(double ns, char *buf, size_t len) {
    double a = fabs(ns);
    if (!isfinite(ns))
        snprintf(buf, len, "?");
    else if (a >= 1e12)
        snprintf(buf, len, "%.0f s", ns / 1e9);
    else if (a >= 1e9)
        snprintf(buf, len, "%.3g s", ns / 1e9);
    else if (a >= 1e6)
        snprintf(buf, len, "%.3g ms", ns / 1e6);
    else if (a >= 1e3)
        snprintf(buf, len, "%.3g us", ns / 1e3);
    else
        snprintf(buf, len, "%.3g ns", ns);
    return buf;
}

int tkb_parse_duration(const char *s, int64_t *ns) {
    int64_t v;
    if (s == NULL || tk__duration_parse(s, &v) != TK_OK || v <= 0)
        return -1;
    *ns = v;
    return 0;
}
