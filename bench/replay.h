/* tkbench: replay of a real timer trace (bench/trace/trace.h) on a peer.
 *
 * Two levels, as for the workloads (docs/workloads.md):
 * - core (replay-core.c): virtual time, deterministic; every peer with a
 *   core level replays the same events, and every one must expire the same
 *   timers at the same virtual times (a differential check on real data);
 * - executor (replay-exec.c): real time; the trace's events are issued at
 *   their timestamps (divided by `speed`) from a thread that is not a timer
 *   thread, on a running service (tkb_svc_ops), and every firing's lateness
 *   is recorded. */
#ifndef TKB_REPLAY_H
#define TKB_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "trace/trace.h"
#include "tkbench.h"

/* ---- executor level (replay-exec.c) ---------------------------------------- */
typedef struct tkb_replay_exec_opts {
    double speed;           /* > 0: trace time / speed = wall time (1: as recorded) */
    int64_t timer_slack_ns; /* as tkb_svc_opts */
    double max_seconds;     /* > 0: give up (status -1, a message) past this wall time */
} tkb_replay_exec_opts;

typedef struct tkb_replay_exec_result {
    uint64_t starts, modifies, cancels; /* issued (a modify: a start on an armed timer) */
    uint64_t cancels_missed;            /* cancels of timers that had already fired */
    uint64_t fired;                     /* firings seen */
    uint64_t issue_late;                /* events issued more than 1 ms after their time */
    tkb_hist *late;       /* caller-owned, initialised: lateness of every firing (ns,
                             negative = early), against trace deadline / speed */
    int64_t wall_ns;      /* from the first event to the last firing */
    int64_t cpu_ns;       /* whole process CPU over that span */
    uint64_t wakeups;     /* context switches of the service's threads (tkb_other_threads_ctxt) */
    int64_t rss_peak_delta_bytes; /* peak RSS during the replay minus RSS before it */
} tkb_replay_exec_result;

/* Replays trace `t` on the executor level of peer `p` (p->svc != NULL).
 * Returns 0, or -1 with a message in err (service failed, a schedule
 * failed, timers still pending 30 s after the last event, time limit). */
int tkb_replay_exec(const tkt_trace *t, const tkb_peer *p, const tkb_replay_exec_opts *o,
                    tkb_replay_exec_result *r, char *err, size_t err_len);

#endif
