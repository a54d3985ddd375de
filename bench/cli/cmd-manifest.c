/* SPDX-License-Identifier: MIT */
/* `tkbench manifest [--force] DIR`: manifest.json for a folder an older
 * tkbench wrote without one, from the workload descriptors compiled in
 * (output/manifest.c). */
#include "cli/cli.h"

enum { MO_FORCE };
static const tkb_opt manifest_opts[] = {
    [MO_FORCE] = {"force", NULL, "replace a manifest.json that is there", 0},
};

static int cmd_manifest(const tkb_cmd *cmd, int argc, char **argv) {
    const char *opt[TKB_COUNT(manifest_opts)] = {NULL}, *dir[2];
    size_t n;
    int rc = tkb_args_parse(cmd, argc, argv, opt, dir, 2, &n);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (n == 0)
        return tkb_usage(cmd, "which folder?");
    if (n > 1)
        return tkb_usage(cmd, "one folder at a time ('%s' and '%s')", dir[0], dir[1]);
    if (!tkb_is_dir(dir[0]))
        return tkb_usage(cmd, "'%s' is not a folder", dir[0]);
    return tkb_manifest_synthesize(dir[0], opt[MO_FORCE] != NULL);
}

const tkb_cmd tkb_cmd_manifest = {
    .name = "manifest",
    .synopsis = "[--force] DIR",
    .summary = "write manifest.json into a folder an older tkbench wrote without one",
    .opts = manifest_opts,
    .nopts = TKB_COUNT(manifest_opts),
    .example = "tkbench manifest results/old-run\n",
    .main = cmd_manifest,
};
