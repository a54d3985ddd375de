/* SPDX-License-Identifier: MIT */
/* tkbench's command line: what the files of cli/ share. Each subcommand is
 * one file, cmd-<name>.c, holding its descriptor (cmdline.h) and its main;
 * main.c holds only the table of them. A run (`tkbench run`, and `tkbench
 * replay`, which is a run of the replay workloads) goes through three files:
 * cmd-run.c reads its options into a tkb_run_req, run-select.c makes the
 * plan (suite, workloads, peers, traces, cases) and run-exec.c runs it and
 * writes the results folder. Everything here runs on the main thread. */
#ifndef TKB_CLI_H
#define TKB_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cmdline.h"
#include "output/output.h"
#include "replay/replay.h"

/* The subcommands, in the order `tkbench help` lists them (main.c). */
extern const tkb_cmd tkb_cmd_list, tkb_cmd_run, tkb_cmd_replay, tkb_cmd_advise, tkb_cmd_plot,
    tkb_cmd_compare, tkb_cmd_manifest, tkb_cmd_trace_convert, tkb_cmd_trace_stats;

/* ---- run and replay (cmd-run.c, cmd-replay.c) ------------------------------------ */
/* The options of run and replay are one table (tkb_run_opts, cmd-run.c),
 * each option in the commands its `in` names (TKB_IN_*; 0: both). */
enum { TKB_IN_RUN = 1u, TKB_IN_REPLAY = 2u };
enum {
    TKB_RO_SUITE,
    TKB_RO_WORKLOADS,
    TKB_RO_PEERS,
    TKB_RO_N,
    TKB_RO_REPS,
    TKB_RO_TIMER_SLACK,
    TKB_RO_TRACE,
    TKB_RO_LEVEL,
    TKB_RO_STEP,
    TKB_RO_SPEED,
    TKB_RO_OUT,
    TKB_RO_PERTURB,
    TKB_RO_COUNT
};
extern const tkb_opt tkb_run_opts[TKB_RO_COUNT];

/* The end of run's and replay's --help. */
#define TKB_RUN_DETAILS                                                                            \
    "A peer SPEC is NAME[:key=value,...][@embedded]: heap, heap:spin=150us,\n"                     \
    "wheel:tick=1ms,slots=1024, heap@embedded, libuv (tkbench list shows them all).\n"             \
    "A TRACE is a trace file (docs/traces.md) or synth:EVENTS[:TIMERS], a synthetic one.\n"        \
    "Durations take a unit: 1ms, 100us, 250ns.\n"

/* What a run was asked for: `tkbench run`'s options, or what `tkbench
 * replay` makes of its own. */
typedef struct tkb_run_req {
    const tkb_cmd *cmd; /* run or replay */
    const char *suite, *out, *wl, *pl, *nl;
    int reps;
    long long slack;  /* --timer-slack; -2: not given */
    char *traces[64]; /* replay: trace files (or synth:EVENTS[:TIMERS]), owned */
    size_t ntraces;
    int64_t step_ns;       /* replay: 0 = the default */
    double speed;          /* replay, executor level: 0 = 1 */
    int64_t perturb;       /* replay: hidden test option (-1: off) */
    const char *run_label; /* the suite name metadata records; NULL: suite or custom */
    const char *level;     /* replay: keep the replays at this level ("core", "executor");
                              NULL: all */
} tkb_run_req;

/* Parses run's or replay's command line into r: 0, or the exit status (-1
 * for the help: exit 0). Positional arguments are traces (replay). */
int tkb_run_req_parse(tkb_run_req *r, int argc, char **argv);
/* Calls fn(item, ctx) for each item of a comma-separated list; with specs,
 * a piece holding '=' but no ':' continues the peer spec before it. */
void tkb_for_each_item(const char *list, bool specs, void (*fn)(const char *, void *), void *ctx);
/* Adds a trace to r (a copy). */
void tkb_run_req_trace(tkb_run_req *r, const char *path);
/* Frees what tkb_run_req_parse() kept. */
void tkb_run_req_free(tkb_run_req *r);
/* Runs what r asks for (run-exec.c), then frees r's traces. argc, argv: the
 * command line, recorded in the metadata. Returns the exit status. */
int tkb_run_req_exec(tkb_run_req *r, int argc, char **argv);

/* ---- the plan of a run (run-select.c) -------------------------------------------- */
#define TKB_MAX_CASES 4096
#define TKB_MAX_PEERS 64
#define TKB_MAX_WORKS 64

/* What a run runs, made from a tkb_run_req. Too large for the stack: the
 * run allocates it (run-exec.c). */
typedef struct tkb_run_plan {
    const tkb_cmd *cmd;     /* run or replay: the usage errors name it */
    const char *suite_name; /* what the metadata records: the suite, "custom" or the label */
    tkb_selected works[TKB_MAX_WORKS];
    size_t nworks;
    bool want[TKB_MAX_WORKS]; /* workloads asked for, by table index */
    tkb_peer peers[TKB_MAX_PEERS];
    size_t npeers;
    tkb_replay_set rs; /* the traces a replay runs (tkb_the_run.replay points here), or empty */
    tkb_case *cases;   /* TKB_MAX_CASES of them */
    size_t ncases;
} tkb_run_plan;

/* Makes the plan of r into pl (zeroed, with pl->cases allocated): the suite
 * and timer slack into tkb_the_run, the workloads with their plans, the
 * traces, the peers, the cases. Returns 0, or the exit status (a usage error
 * is said on stderr). What it opened, tkb_run_plan_close() frees. */
int tkb_run_plan_make(tkb_run_plan *pl, tkb_run_req *r);
void tkb_run_plan_close(tkb_run_plan *pl);

/* ---- progress (progress.c) --------------------------------------------------------- */
/* Starts the progress of a run of cases[0..ncases): its clock and the cases
 * whose time tkb_progress_enter() estimates. */
void tkb_progress_start(tkb_case *cases, size_t ncases);
/* Seconds since tkb_progress_start(). */
double tkb_progress_elapsed(void);
/* The Google Benchmark body of every case (ctx: its tkb_case): a consolidated
 * heap for a new case, the progress line, then the case's own body. */
void tkb_progress_case_body(tk_gb_state *st, void *ctx);
/* "41s", "5m10s". */
void tkb_fmt_secs(char *buf, size_t len, double s);

/* ---- the renderer (renderer.c) --------------------------------------------------- */
/* Is path a folder? */
bool tkb_is_dir(const char *path);
/* Writes a manifest into a folder an older tkbench wrote without one (said
 * on stderr). Returns 0, or the exit status. */
int tkb_ensure_manifest(const char *dir);
/* Runs plots/render.py with args (NULL-terminated) in place of this process
 * (`plot`, `compare`); returns 1 only if it could not be started. */
int tkb_renderer_exec(char **args);
/* Runs plots/render.py with args (NULL-terminated) and waits for it: 0 if it
 * exited with status 0, else 1 (said on stderr). */
int tkb_renderer_run(char **args);

#endif
