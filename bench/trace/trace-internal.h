/* SPDX-License-Identifier: MIT */
/* Private helpers of the trace library (bench/trace/): the storage a loader
 * fills, the growing arrays, file reading through a decompressor, messages.
 * Nothing here is seen by a user of trace.h. */
#ifndef TKB_TRACE_INTERNAL_H
#define TKB_TRACE_INTERNAL_H

#include "trace.h"

#include <stdarg.h>

/* The strings of one trace: a list of blocks, freed together by tkt_free(). */
typedef struct tkt__block {
    struct tkt__block *next;
    size_t used, cap;
    char data[];
} tkt__block;

typedef struct tkt__storage {
    tkt__block *blocks;
} tkt__storage;

/* A copy of s[0..n) with a terminator, in st; NULL when out of memory. */
char *tkt__strndup(tkt__storage *st, const char *s, size_t n);
void tkt__storage_free(tkt__storage *st);

/* Grows *p (elements of size sz, *cap of them) to hold at least need; false
 * when out of memory or the size would overflow (then *p is unchanged). */
bool tkt__grow(void **p, size_t *cap, size_t need, size_t sz);

/* Formats "prefix: message" into err (either may be NULL/0). Returns code. */
int tkt__fail(char *err, size_t err_len, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Reads the whole file (through gzip/xz/zstd -dc when path ends in .gz, .xz
 * or .zst) into a malloc'd buffer *buf of *len bytes, with a '\0' after them.
 * Returns TKT_OK, or TKT_EIO / TKT_ENOMEM with "PATH: ..." in err. */
int tkt__read_file(const char *path, char **buf, size_t *len, char *err, size_t err_len);

/* The file's short name: path without directories and without the .csv,
 * .txt, .perf, .gz, .xz, .zst extensions, at most len-1 bytes. */
void tkt__short_name(const char *path, char *name, size_t len);

/* Parses the decimal digits s[0..n) as a value in 0..TKT_MAX_NS: 0 on
 * success, 1 not a number (empty, sign, other characters), 2 too large. */
int tkt__parse_ns(const char *s, size_t n, int64_t *v);

/* FNV-1a of s[0..n). */
uint64_t tkt__hash(const void *s, size_t n);

#endif
