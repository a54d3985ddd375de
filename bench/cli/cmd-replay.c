/* SPDX-License-Identifier: MIT */
/* `tkbench replay TRACE...`: a run of the replay workloads on the traces
 * given (docs/replay.md), with run's options that apply to it (cmd-run.c). */
#include "cli/cli.h"

static int cmd_replay(const tkb_cmd *cmd, int argc, char **argv) {
    tkb_run_req r = {.cmd = cmd,
                     .suite = "quick",
                     .slack = -2,
                     .perturb = -1,
                     .run_label = "replay",
                     .level = "core"};
    int rc = tkb_run_req_parse(&r, argc, argv);
    if (rc == 0 && r.ntraces == 0)
        rc = tkb_usage(cmd, "which trace? (a trace file, or synth:EVENTS[:TIMERS])");
    if (rc != 0) {
        tkb_run_req_free(&r);
        return rc < 0 ? 0 : rc;
    }
    r.wl = "replay"; /* the group of every replay workload */
    return tkb_run_req_exec(&r, argc, argv);
}

const tkb_cmd tkb_cmd_replay = {
    .name = "replay",
    .synopsis = "TRACE... [options]",
    .summary = "replay recorded timer traces on the engines and baselines",
    .opts = tkb_run_opts,
    .nopts = TKB_RO_COUNT,
    .bit = TKB_IN_REPLAY,
    .details =
        "At core level a replay runs in virtual time and checks every peer against a\n"
        "reference; at executor level it runs in real time (docs/replay.md).\n" TKB_RUN_DETAILS,
    .example = "tkbench replay bench/traces/tcp.csv.xz --level all --out DIR\n"
               "tkbench replay synth:3000 --peers heap,wheel:tick=1ms,slots=1024 --reps 2\n",
    .main = cmd_replay,
};
