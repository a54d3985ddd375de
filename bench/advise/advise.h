/* SPDX-License-Identifier: MIT */
/* tkbench advise: which engine, with which parameters, for a recorded trace
 * (bench/advise.c, docs/advisor.md). */
#ifndef TKB_ADVISE_H
#define TKB_ADVISE_H

#include "cli/cmdline.h"

/* `tkbench advise [options] TRACE`: its descriptor (cmdline.h), whose main
 * takes argv[0] "tkbench", argv[1] "advise". Prints the trace's shape, a
 * table of the candidates with their figures and a recommendation on stdout, progress on stderr.
 * Returns the process's exit status: 0 advice given, 1 no candidate meets the needs or a
 * measurement failed, 2 a usage error, an unreadable trace or an unusable results folder (the
 * message on stderr). */
extern const tkb_cmd tkb_cmd_advise;

#endif
