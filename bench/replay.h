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
#include "tkbench.h"
#include "trace/trace.h"

/* ---- executor level (replay-exec.c) ---------------------------------------- */
typedef struct tkb_replay_exec_opts {
    double speed;           /* > 0: trace time / speed = wall time (1: as recorded) */
    int64_t timer_slack_ns; /* as tkb_svc_opts */
    double max_seconds;     /* > 0: give up (status -1, a message) past this wall time; a
                               trace that needs more (its last event or a deadline that
                               must fire, over speed) is refused before anything starts */
    int64_t drain_max_ns;   /* 0: after the last event, wait for every armed timer; > 0:
                               wait only for those due within this (wall) time after the
                               last event; the others are cancelled and counted in
                               `unfired` (a trace often ends with hour-long timeouts armed) */
} tkb_replay_exec_opts;

typedef struct tkb_replay_exec_result {
    /* Each event of the trace is counted once, by what the replay found:
     *   START  -> modifies if the timer's previous schedule was still armed (cancelled
     *             first, then scheduled again), else starts;
     *   CANCEL -> cancels if the timer had a schedule since its last cancel (armed or
     *             already fired), else cancels_idle (never started, or cancelled twice);
     *   EXPIRE -> not issued, not counted. */
    uint64_t starts, modifies, cancels; /* issued (a modify: a start on an armed timer) */
    uint64_t cancels_idle;              /* cancels of timers with nothing to cancel */
    uint64_t cancels_missed;            /* cancels of timers that had already fired */
    uint64_t modifies_late;             /* modifies whose previous schedule fired during
                                           the cancel (a race the replay lost) */
    uint64_t fired;                     /* firings of schedules still in force */
    uint64_t fired_after_cancel;        /* firings of schedules cancelled before: a peer
                                           whose cancel is applied later (libuv's hand-off)
                                           ran the timer meanwhile; not in `late` */
    uint64_t unfired;                   /* armed at the end beyond drain_max_ns: cancelled */
    uint64_t issue_late;                /* events issued more than 1 ms after their time */
    uint64_t spare_slots;               /* timer storage beyond one per trace timer: taken
                                           while a cancelled timer's could not take a new
                                           schedule yet (tkb_svc_ops.reusable, hand-offs) */
    tkb_hist *late;                     /* caller-owned, initialised: lateness of every firing (ns,
                                           negative = early), against trace deadline / speed */
    uint32_t *fires;  /* caller-owned, ntimers entries, or NULL: `fired` per trace timer */
    int64_t wall_ns;  /* from the first event to the last firing */
    int64_t cpu_ns;   /* whole process CPU over that span */
    uint64_t wakeups; /* context switches of the service's threads (tkb_other_threads_ctxt) */
    int64_t rss_peak_delta_bytes; /* peak RSS during the replay minus RSS before it (the
                                     service and the timers' storage are made after it) */
} tkb_replay_exec_result;

/* Replays trace `t` on the executor level of peer `p` (p->svc != NULL), on a
 * service of one pool thread (every callback on one thread: `late` is written
 * there). Each trace timer has storage of its own for the peer (tk_timer for
 * the embedded peers, record right after it); a timer re-armed while its old
 * storage cannot take a schedule yet gets spare storage. Fills *r (its `late`
 * and `fires` are only added to). Returns 0, or -1 with a message in err (bad
 * arguments or trace, service failed, a schedule failed, timers still pending
 * 30 s after their deadline, time limit). Progress lines go to stderr when
 * the replay takes more than 5 s. */
int tkb_replay_exec(const tkt_trace *t, const tkb_peer *p, const tkb_replay_exec_opts *o,
                    tkb_replay_exec_result *r, char *err, size_t err_len);

#endif
