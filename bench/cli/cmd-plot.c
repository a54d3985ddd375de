/* SPDX-License-Identifier: MIT */
/* `tkbench plot DIR`: the figures and report.md of a results folder, drawn by
 * the renderer (plots/render.py render DIR). */
#include "cli/cli.h"

static int cmd_plot(const tkb_cmd *cmd, int argc, char **argv) {
    const char *dir[2];
    size_t n;
    int rc = tkb_args_parse(cmd, argc, argv, NULL, dir, 2, &n);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (n == 0)
        return tkb_usage(cmd, "which results folder?");
    if (n > 1)
        return tkb_usage(cmd, "one folder at a time ('%s' and '%s')", dir[0], dir[1]);
    if (!tkb_is_dir(dir[0]))
        return tkb_usage(cmd, "'%s' is not a results folder", dir[0]);
    rc = tkb_ensure_manifest(dir[0]);
    if (rc != 0)
        return rc;
    char *args[] = {"render", (char *)dir[0], NULL};
    return tkb_renderer_exec(args);
}

const tkb_cmd tkb_cmd_plot = {
    .name = "plot",
    .synopsis = "DIR",
    .summary = "draw the figures and report.md of a results folder (plots/render.py)",
    .example = "tkbench plot results/20260101-120000-quick\n",
    .main = cmd_plot,
};
