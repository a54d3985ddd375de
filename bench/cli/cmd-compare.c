/* SPDX-License-Identifier: MIT */
/* `tkbench compare [--out OUTDIR] DIR_A DIR_B...`: ratios between results
 * folders with their intervals, significant differences marked, by the
 * renderer (plots/render.py compare). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "cli/cli.h"

#define MAX_DIRS 64

enum { CO_OUT };
static const tkb_opt compare_opts[] = {
    [CO_OUT] = {"out", "OUTDIR", "the comparison's folder (default results/compare-<date>)", 0},
};

static int cmd_compare(const tkb_cmd *cmd, int argc, char **argv) {
    const char *opt[TKB_COUNT(compare_opts)] = {NULL}, *dirs[MAX_DIRS];
    size_t n;
    int rc = tkb_args_parse(cmd, argc, argv, opt, dirs, MAX_DIRS, &n);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (n > MAX_DIRS)
        return tkb_usage(cmd, "at most %d folders", MAX_DIRS);
    if (n < 2)
        return tkb_usage(cmd, "expected two results folders or more, got %zu", n);
    for (size_t i = 0; i < n; i++)
        if (!tkb_is_dir(dirs[i]))
            return tkb_usage(cmd, "'%s' is not a results folder", dirs[i]);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = tkb_ensure_manifest(dirs[i]);
    if (rc != 0)
        return rc;
    char buf[PATH_MAX];
    const char *out = opt[CO_OUT];
    if (out == NULL) {
        char stamp[64];
        time_t t = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&t));
        snprintf(buf, sizeof buf, "results/compare-%s", stamp);
        out = buf;
    }
    char *args[MAX_DIRS + 3] = {"compare", (char *)out};
    for (size_t i = 0; i < n; i++)
        args[2 + i] = (char *)dirs[i];
    args[2 + n] = NULL;
    return tkb_renderer_exec(args);
}

const tkb_cmd tkb_cmd_compare = {
    .name = "compare",
    .synopsis = "[--out OUTDIR] DIR_A DIR_B [DIR...]",
    .summary = "compare results folders: ratios with intervals, significant ones marked",
    .opts = compare_opts,
    .nopts = TKB_COUNT(compare_opts),
    .example = "tkbench compare --out results/cmp results/before results/after\n",
    .main = cmd_compare,
};
