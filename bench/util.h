/* SPDX-License-Identifier: MIT */
/* tkbench: the small helpers every room of bench/ uses, each written once
 * (util.c): folders and files, sorting and medians, durations as text.
 * Exact durations ("1ms", "150us"), as a spec or an option writes them, are
 * the library's own (tk__duration_text(), tk__duration_parse() in
 * common/params-internal.h); tkb_parse_duration() is that grammar with the
 * options' rule on top. Every function is thread-safe. */
#ifndef TKB_UTIL_H
#define TKB_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Creates `path` and every missing folder above it (mkdir -p). Returns 0, or
 * -1 with errno set. */
int tkb_mkdir_p(const char *path);

/* Reads a whole file into a NUL-terminated buffer (caller frees), or NULL. */
char *tkb_slurp(const char *path);

/* qsort() comparisons of doubles and of int64_t, ascending. */
int tkb_cmp_double(const void *a, const void *b);
int tkb_cmp_i64(const void *a, const void *b);

/* Median of v[0..n) (sorts v; the mean of the two middle values for an even
 * n). NAN if n == 0. */
double tkb_median(double *v, size_t n);

/* A duration for people: 3 significant digits in the largest unit below it
 * ("850 ns", "12.5 us", "4 ms", "1.25 s", "7200 s"); "?" if ns is not
 * finite. Writes at most len bytes (32 hold any); returns buf. */
const char *tkb_duration_text(double ns, char *buf, size_t len);

/* Parses an option's duration, a positive whole number of ns with its unit
 * ("1ms", "100us", "0.5ms", "2s"; the library's grammar: tk__duration_parse()).
 * Returns 0, or -1 (no unit, zero, negative, a fraction of a ns, overflow). */
int tkb_parse_duration(const char *s, int64_t *ns);

#endif
