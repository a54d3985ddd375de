/* SPDX-License-Identifier: MIT */
/* tkbench trace: converting and summarising timer traces (bench/trace-cli.c,
 * docs/traces.md). */
#ifndef TKB_TRACE_CLI_H
#define TKB_TRACE_CLI_H

#include "cli/cmdline.h"
#include "trace/trace.h"

/* `tkbench trace convert` and `tkbench trace stats`: their descriptors
 * (cmdline.h). Their main returns the process's exit status: 0 done, 1 an
 * output could not be written or drawn, 2 a usage error or a bad input file
 * ("FILE:LINE: ..." on stderr). */
extern const tkb_cmd tkb_cmd_trace_convert, tkb_cmd_trace_stats;

/* Writes what `tkbench trace stats --out dir` writes for trace t (summary.txt,
 * the population over time and the delay distribution, their data and
 * figures) into dir, printing nothing else; a replay puts it beside its
 * results. Returns 0, or 1 with a message on stderr. */
int tkb_trace_stats_write(const tkt_trace *t, const char *dir);

#endif
