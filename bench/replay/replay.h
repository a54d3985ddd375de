/* SPDX-License-Identifier: MIT */
/* tkbench: replay of a real timer trace (bench/trace/trace.h) on a peer.
 *
 * Two levels, as for the workloads (docs/workloads.md):
 * - core (core-level.c): virtual time, deterministic; every peer with a
 *   core level replays the same events, and every one must expire the same
 *   timers at the same virtual times (a differential check on real data);
 * - executor (executor-level.c): real time; the trace's events are issued at
 *   their timestamps (divided by `speed`) from a thread that is not a timer
 *   thread, on a running service (tkb_svc_ops), and every firing's lateness
 *   is recorded. */
#ifndef TKB_REPLAY_H
#define TKB_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/hist.h"
#include "tkbench.h"
#include "trace/trace.h"

/* ---- core level (core-level.c) -------------------------------------------
 *
 * Virtual time on a grid of step S (docs/replay.md). Before each event at
 * trace time t the driver expires everything due at grid points up to
 * floor_S(t): it asks the peer's next_one() for w, takes g = ceil_S(w)
 * (never below the last grid point it passed, nor below its last expiry),
 * and while g <= floor_S(t) calls expire_at(g), recording each timer handed
 * out with virtual time g. Then it applies the event: a START on an armed
 * timer is stop_one() + start_one() (a modify, with a new seq), a CANCEL of
 * a timer that is not armed is a counted no-op, EXPIRE events of the source
 * are skipped. After the last event everything left is expired. Since every
 * peer is asked to expire at the same grid points, every peer must hand out
 * the same set of timers at each grid point: the replay compares that with
 * a reference model (tkb_replay_ref, computed once per trace and step,
 * untimed) and fails on the first difference. */
#define TKB_REPLAY_STEP_DEFAULT TKB_NS_PER_MS

/* What a trace does at a step, by the reference model: its counts and its
 * expiries. Batch b expires, at virtual time batch_t[b], the timers
 * timers[batch_off[b] .. batch_off[b + 1]), in increasing index order. */
typedef struct tkb_replay_ref {
    int64_t step_ns;
    uint64_t events; /* START and CANCEL events (the ones a replay applies) */
    uint64_t starts, modifies, cancels, cancels_unarmed, expired;
    size_t peak;      /* most timers armed at once */
    size_t max_batch; /* most timers expired at one grid point */
    size_t nbatches;
    int64_t *batch_t;
    size_t *batch_off; /* nbatches + 1 entries */
    uint32_t *timers;  /* `expired` entries */
} tkb_replay_ref;

/* Runs the reference model of trace t at step_ns (> 0). Returns 0, or -1
 * with a message in err (out of memory, a bad event). */
int tkb_replay_ref_build(const tkt_trace *t, int64_t step_ns, tkb_replay_ref *ref, char *err,
                         size_t err_len);
void tkb_replay_ref_free(tkb_replay_ref *ref);

/* Can peer p replay at core level on the grid of step_ns: it has the
 * per-event ops, and due_one(g) == g at grid points (its tick divides the
 * step)? Returns true, or false with the reason in err. */
bool tkb_replay_core_fits(const tkb_peer *p, int64_t step_ns, char *err, size_t err_len);

typedef struct tkb_replay_core_opts {
    bool timed_ops;  /* run the second pass, which times each operation */
    int64_t perturb; /* tests only: >= 0: expiry number `perturb` of the timed pass is
                        recorded one step late, so the check must fail; < 0: off */
} tkb_replay_core_opts;

typedef struct tkb_replay_core_result {
    int64_t total_ns; /* the whole first pass (one clock read at each end) */
    double event_ns;  /* total_ns / events */
    /* second pass, per operation (expire: per timer expired, with the
     * next_one() calls of the expiry passes); NAN when there was none */
    double start_ns, modify_ns, cancel_ns, expire_ns;
} tkb_replay_core_result;

/* Replays trace t (whose reference is ref) on the core of peer p. Returns 0;
 * 1 if the peer's expiries differ from the reference (err says where first:
 * virtual time, timer, peer); -1 on any other failure (message in err). */
int tkb_replay_core(const tkt_trace *t, const tkb_replay_ref *ref, const tkb_peer *p,
                    const tkb_replay_core_opts *o, tkb_replay_core_result *r, char *err,
                    size_t err_len);

/* The per-operation clock of the second pass: rdtsc on x86-64 (fenced),
 * clock_gettime elsewhere, with the cost of a back-to-back pair of reads
 * measured (its minimum) so that it can be subtracted. */
typedef struct tkb_opclock {
    double ns_per_tick;
    uint64_t overhead_ticks;
} tkb_opclock;
void tkb_opclock_calibrate(tkb_opclock *c);

/* A synthetic trace for tests and measurements ("synth:EVENTS[:TIMERS]"):
 * `events` START and CANCEL events on `timers` timers, 1 us to 1 ms apart,
 * deadlines 1 ms to 2 s ahead, about one modify in four starts, one cancel in
 * four events, from a fixed seed. Returns 0 or -1 (out of memory). Free it
 * with tkb_replay_synth_free(). */
int tkb_replay_synth(size_t events, size_t timers, uint64_t seed, tkt_trace *out);
void tkb_replay_synth_free(tkt_trace *t);

/* The traces of a run and the replay's settings: set once by the CLI before
 * any case runs (tkb_the_run.replay), then only read. */
typedef struct tkb_replay_trace {
    tkt_trace trace;
    bool synthetic; /* made by tkb_replay_synth(), not a loader */
    tkb_replay_ref ref;
} tkb_replay_trace;

typedef struct tkb_replay_set {
    tkb_replay_trace *traces;
    size_t count;
    int64_t step_ns;
    double speed;    /* executor level: trace time / speed = wall time */
    int64_t perturb; /* tkb_replay_core_opts.perturb */
} tkb_replay_set;

/* ---- the run's traces (trace-set.c) ---------------------------------------- */
/* Loads each of paths[0..count) (a trace file, or synth:EVENTS[:TIMERS]) and
 * builds its reference at step_ns, reporting each on stderr. Returns 0; 2
 * for a trace that cannot be read (the loader's FILE:LINE message printed)
 * or two traces of one short name; 1 for anything else. rs holds what was
 * loaded either way: tkb_replay_set_close() frees it. */
int tkb_replay_set_open(tkb_replay_set *rs, const char *const *paths, size_t count,
                        int64_t step_ns);
void tkb_replay_set_close(tkb_replay_set *rs);

/* ---- executor level (executor-level.c) ---------------------------------------- */
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

/* The first `seconds` of trace t (all of it when seconds <= 0) as a view of
 * it: the same events, fewer of them; *applied gets how many of them a
 * replay applies (starts and cancels). workloads/replay_exec.c. */
tkt_trace tkb_replay_exec_part(const tkt_trace *t, double seconds, size_t *applied);

/* The body of a case of an executor-level replay (workloads/replay_exec.c):
 * replays `trace` on the case's peer once per repetition, at the run's
 * speed and timer slack, waiting drain_ns after the last event for the
 * timers still armed (tkb_replay_exec_opts.drain_max_ns), and reports the
 * metrics of tkb_replay_exec_metrics. Also the frontier's
 * (workloads/slack_frontier.c), on a part of the trace. */
void tkb_replay_exec_measure(tk_gb_state *st, tkb_case *c, const tkt_trace *trace,
                             int64_t drain_ns);
/* The cases of an executor-level replay workload for peer p: one per trace
 * of the run, on the first plan->seconds of it (tkb_replay_exec_part()),
 * rows `<workload>:<trace>`, each run by `body`; none for a peer without a
 * service. workloads/replay_exec.c; the frontier's too. */
size_t tkb_replay_exec_add_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                                 tkb_case *cases, size_t cap,
                                 void (*body)(tk_gb_state *, tkb_case *));
#define TKB_REPLAY_EXEC_NMETRICS 14
extern const tkb_metric tkb_replay_exec_metrics[TKB_REPLAY_EXEC_NMETRICS];

#endif
