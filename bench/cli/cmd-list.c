/* SPDX-License-Identifier: MIT */
/* `tkbench list [--names]`: every workload with its plans, every peer a spec
 * can name with its parameters, the suites; all from their tables. */
#include <stdio.h>

#include "cli/cli.h"

enum { LO_NAMES };
static const tkb_opt list_opts[] = {
    [LO_NAMES] = {"names", NULL, "only the workloads' names, one a line", 0},
};

static int cmd_list(const tkb_cmd *cmd, int argc, char **argv) {
    const char *opt[TKB_COUNT(list_opts)] = {NULL}, *arg;
    size_t n;
    int rc = tkb_args_parse(cmd, argc, argv, opt, &arg, 1, &n);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (n > 0)
        return tkb_usage(cmd, "unexpected argument '%s'", arg);
    bool names = opt[LO_NAMES] != NULL;
    if (names) { /* one workload name a line */
        for (size_t i = 0; i < tkb_workload_count; i++)
            printf("%s\n", tkb_workloads[i]->name);
        return 0;
    }
    printf("workloads (--workloads takes names or groups):\n");
    for (size_t i = 0; i < tkb_workload_count; i++) {
        const tkb_workload *w = tkb_workloads[i];
        printf("  %-16s %-6s %-9s %s\n", w->name, w->group, tkb_level_name(w->level), w->summary);
        printf("  %-16s metrics:", "");
        for (size_t k = 0; k < w->nmetrics; k++)
            printf("%s %s", k ? "," : "", w->metrics[k].name);
        printf("\n");
        for (int su = 0; su < TKB_NSUITES; su++) {
            const tkb_plan plan = tkb_plan_of(w, su), *pl = &plan;
            printf("  %-16s %-5s:", "", tkb_suites[su].name);
            for (size_t k = 0; k < TKB_COUNT(pl->sizes) && pl->sizes[k] != 0; k++)
                printf("%s%zu", k ? "," : " n ", pl->sizes[k]);
            printf("%s%d rep%s", pl->sizes[0] != 0 ? "; " : " ", pl->reps,
                   pl->reps == 1 ? "" : "s");
            if (pl->reps_long != 0 && pl->reps_long != pl->reps)
                printf(" (%d of its real-time cases)", pl->reps_long);
            if (pl->count != 0)
                printf("; count %zu", pl->count);
            if (pl->seconds > 0)
                printf("; %g s", pl->seconds);
            printf("\n");
        }
        if (w->nvariants > 0) {
            printf("  %-16s variants (rows %s_<variant>):", "", w->name);
            for (size_t v = 0; v < w->nvariants; v++)
                printf("%s %s", v ? "," : "", w->variants[v]);
            printf("\n");
        }
    }
    tkb_peer_list(stdout);
    printf("suites:\n");
    for (int s = 0; s < TKB_NSUITES; s++)
        printf("  %-6s %s\n", tkb_suites[s].name, tkb_suites[s].summary);
    return 0;
}

const tkb_cmd tkb_cmd_list = {
    .name = "list",
    .synopsis = "[--names]",
    .summary = "list the workloads, the peers and their parameters, the suites",
    .opts = list_opts,
    .nopts = TKB_COUNT(list_opts),
    .example = "tkbench list\n",
    .main = cmd_list,
};
