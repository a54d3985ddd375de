/* SPDX-License-Identifier: MIT */
/* tkbench: the benchmark CLI's entry point and its table of subcommands.
 *
 *   tkbench list [--names]
 *   tkbench run [--suite smoke|quick|full] [--workloads NAME|GROUP,...]
 *               [--peers heap,wheel:tick=1ms,slots=1024,...] [--n 1000,100000]
 *               [--reps K] [--timer-slack NS] [--trace FILE,...] [--step DUR] [--out DIR]
 *   tkbench replay TRACE... [--peers SPECS] [--level core|executor|all] [--step DUR]
 *                  [--speed X] [--reps K] [--out DIR]
 *   tkbench advise TRACE [--results DIR] [--need lateness=DUR|memory=SIZE|cpu=PCT]
 *                  [--criterion cost|lateness|memory] [--reps K] [--hz N]
 *   tkbench plot DIR
 *   tkbench compare [--out OUTDIR] DIR_A DIR_B...
 *   tkbench manifest [--force] DIR
 *   tkbench trace convert IN OUT [--hz N] [--functions GLOB,...] [--cpus LIST]
 *                         [--class wheel|hrtimer|all]
 *   tkbench trace stats TRACE [--out DIR] [the options of convert]
 *   tkbench help [COMMAND], tkbench COMMAND --help, tkbench --version
 *
 * Each subcommand is a descriptor (cmdline.h) in a file of its own,
 * cmd-<name>.c, with its option table, from which getopt_long() parses it
 * and its --help is printed; options take a value as --name VALUE or
 * --name=VALUE, before or after the arguments. Exit status: 0 ok, 1 run
 * failure, 2 usage error (unknown option, workload, peer or parameter, a bad
 * value, a missing argument). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "datadir.h"

tkb_run tkb_the_run;

/* Every subcommand, in the order tkbench help lists them. */
static const tkb_cmd *const commands[] = {
    &tkb_cmd_list,     &tkb_cmd_run,           &tkb_cmd_replay,
    &tkb_cmd_advise,   &tkb_cmd_plot,          &tkb_cmd_compare,
    &tkb_cmd_manifest, &tkb_cmd_trace_convert, &tkb_cmd_trace_stats,
};

int main(int argc, char **argv) {
    if (!tkb_workloads_check() || !tkb_targets_check())
        return 1;
    if (argc >= 2 && strcmp(argv[1], "_w5") == 0) { /* W5's fresh process, not a command */
        if (argc != 5 && argc != 6)
            return 2;
        return tkb_w5_child(argv[2], (size_t)strtoull(argv[3], NULL, 10),
                            strtoll(argv[4], NULL, 10), argc == 6 ? atoi(argv[5]) : 0);
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("tkbench %s\ndata: %s\n", tk_version_string(), tkb_data_dir());
        return 0;
    }
    return tkb_cmd_dispatch(commands, TKB_COUNT(commands), argc, argv);
}
