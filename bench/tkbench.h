/* SPDX-License-Identifier: MIT */
/* tkbench: internal declarations shared by the CLI, the workloads and the peers.
 *
 * Three things are declared once here and everything else is derived:
 * - workloads: one const tkb_workload descriptor per workload, each in its own
 *   file under workloads/, listed once in workloads/workloads.h. The CLI, the suites,
 *   `tkbench list`, the headline table, manifest.json (and from it the report
 *   and the figures) all read the descriptors;
 * - peers: an engine of the library or a baseline with its parameters, written
 *   as a spec string (peers/peers.c);
 * - suites: which sizes and repetitions (in each descriptor) and which peers
 *   (suites.c) a named run uses.
 *
 * Two peer interfaces, one per level (docs/workloads.md):
 * - tkb_core_peer_ops: what a peer offers at core level, a single-threaded
 *   data structure driven with virtual time (no locks, no clock reads inside
 *   the loops). Every op takes a whole batch so the loop over timers is
 *   inside the peer file: the harness adds one indirect call per batch, not
 *   per timer. It is not the library's tk_core_ops (an engine's pure core,
 *   one timer per call): the peer of every engine (peers/tk-core.c) drives
 *   that one through this one, one indirect call per operation, the same for
 *   every engine; a baseline calls its own API.
 * - tkb_svc_ops: a running timer service seen from a user thread (the
 *   executor with an engine; libuv, libevent, libev or asio on a loop thread
 *   of ours).
 *   Thread-safe; callbacks run on the service's thread(s). */
#ifndef TKB_TKBENCH_H
#define TKB_TKBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/gbench_shim.h"
#include "harness/hist.h"
#include "timerkit.h"

typedef struct tkb_peer tkb_peer;
typedef struct tkb_workload tkb_workload;

/* ---- core level ---------------------------------------------------------- */
typedef struct tkb_core_peer_ops {
    size_t timer_size; /* bytes of one timer object (the harness allocates N of them) */
    bool can_expire;   /* expire_all() is available (virtual time) */
    /* Builds an empty instance whose virtual time starts at start_ns (0).
     * Returns 0 or -1. */
    int (*create)(const tkb_peer *p, size_t n_hint, void **out);
    void (*destroy)(void *self);
    /* Untimed per-timer initialisation of timers[0..count) (may be NULL). */
    void (*prepare)(void *self, char *timers, size_t count);
    /* Inserts timers[i] with deadlines[i] for i in [i0, i1). */
    void (*add_range)(void *self, char *timers, size_t i0, size_t i1, const int64_t *deadlines);
    /* Cancels timers[idx[k]] for k in [0, count). */
    void (*cancel_list)(void *self, char *timers, const uint32_t *idx, size_t count);
    /* Hold model: for k in [0, count): cancel timers[idx[k]] and insert it
     * again with deadline deadlines[k]. */
    void (*churn)(void *self, char *timers, const uint32_t *idx, const int64_t *deadlines,
                  size_t count);
    /* Advances virtual time to until_ns, expiring everything due; returns the
     * number of timers expired. */
    size_t (*expire_all)(void *self, int64_t until_ns);

    /* Per-event ops, for the core-level replay of a trace (replay/core-level.c),
     * which applies one event at a time. All NULL: the peer has no core
     * replay (libuv, libevent, libev: no faithful partial expiry in virtual
     * time; asio: no way to ask an io_context for its next deadline;
     * docs/replay.md). A modify is stop_one() then start_one(): a new seq. */
    /* Arms `timer` (not armed) with deadline_ns. Returns 0, or -1 (failed). */
    int (*start_one)(void *self, char *timer, int64_t deadline_ns);
    /* Disarms an armed `timer`. Returns 0, or -1 if the peer does not hold it. */
    int (*stop_one)(void *self, char *timer);
    /* The instant from which the peer hands out a timer with deadline_ns
     * (deadline_ns itself for an exact structure, the next tick for a ticked
     * one; time starts at 0). */
    int64_t (*due_one)(void *self, int64_t deadline_ns);
    /* Stores in *when_ns the earliest instant at which expire_at() may hand
     * something out (exact, or a lower bound: a hierarchical wheel's next
     * cascade) and returns true; false if the peer holds nothing. */
    bool (*next_one)(void *self, int64_t *when_ns);
    /* Moves virtual time to now_ns (never decreasing from one call to the
     * next) and hands out every timer with due_one(deadline) <= now_ns,
     * calling fired(ctx, timer) once for each; returns how many. */
    size_t (*expire_at)(void *self, int64_t now_ns, void (*fired)(void *ctx, char *timer),
                        void *ctx);
} tkb_core_peer_ops;

/* ---- executor level -------------------------------------------------------- */
/* A callback record: the service calls f->fn(f) on its thread. Workloads embed
 * it at the start of their own records. */
typedef struct tkb_fire {
    void (*fn)(struct tkb_fire *self);
} tkb_fire;

typedef struct tkb_svc_opts {
    int64_t timer_slack_ns; /* < 0: leave alone; else prctl(PR_SET_TIMERSLACK) on timer threads */
    unsigned threads;       /* executor pool size (default 1) */
} tkb_svc_opts;

typedef struct tkb_svc_ops {
    size_t timer_size; /* bytes of user storage per cancellable timer */
    /* Embedded timers (tk_timer): the storage is the whole timer, as a user
     * embeds it in a struct of its own, and the peer keeps no pointer to a
     * record. For such a peer:
     * - storage is prepared once (prepare()) before its first schedule();
     * - schedule(timer, f) with both given needs f right after the storage,
     *   at (char *)timer + tkb_svc_record_offset(ops): workloads whose timers
     *   fire lay storage and record out together (tkb_svc_stride() bytes per
     *   timer), and the peer reaches the record from the timer (container_of);
     * - schedule(timer, NULL) starts a timer that calls nothing if it fires:
     *   workloads where nothing fires (W1, W4, W5, W7) pass storage only, so
     *   W5 counts the timer alone, not a record the harness shares anyway;
     * - schedule(NULL, f) still works (the peer allocates a wrapper and frees
     *   it when it fires: the warm-ups), but is not how the API is used, so
     *   every measurement gives storage.
     * False for every other peer: it stores f itself, storage is optional. */
    bool embedded;
    int (*create)(const tkb_peer *p, const tkb_svc_opts *o, void **out);
    /* Stops the service; timers still pending are dropped (never run). */
    void (*destroy)(void *self);
    /* Runs f->fn(f) after delay_ns. `timer` (timer_size bytes, or NULL) is
     * what cancel() needs later; with NULL the timer cannot be cancelled and
     * the peer allocates whatever it needs itself. Returns 0 or -1. */
    int (*schedule)(void *self, void *timer, tkb_fire *f, int64_t delay_ns);
    /* As schedule(), but at an absolute deadline (tkb_now_ns()'s clock):
     * workloads that give many timers one instant (W2) use it when the
     * peer's API has it, so their deadlines are that instant exactly rather
     * than a delay computed before the call and added to the peer's own
     * clock read inside it. Embedded peers need storage here too. NULL when
     * the API takes delays only. */
    int (*schedule_at)(void *self, void *timer, tkb_fire *f, int64_t deadline_ns);
    /* Cancels a timer scheduled with storage `timer` (and frees what the
     * peer attached to it). Returns 0, or 1 if it had already run. */
    int (*cancel)(void *self, void *timer);
    /* The user is done with the storage of a cancelled or fired timer: after
     * the next sync() it may be freed. May be NULL (nothing to do). */
    void (*release)(void *self, void *timer);
    /* Embedded peers: untimed one-time initialisation of `count` timers of
     * fresh (zeroed) storage, `stride` bytes apart; `records`: each is
     * followed by its record (see `embedded`), else it calls nothing. Again
     * after the storage is zeroed. NULL for other peers. */
    void (*prepare)(void *self, char *timers, size_t count, size_t stride, bool records);
    /* May the storage of a cancelled timer take a new schedule() at once?
     * NULL: always. A stopped tk_timer that an engine thread still holds
     * (an engine with TK_QUEUE_CAP_DEFERRED_RELEASE: the wheel's tick thread
     * until its next pass, later while it falls behind sustained churn)
     * cannot be started until it lets go, so the hold-model loops re-arm a
     * spare timer instead (tkb_spare_churn in harness/harness.h). Thread-safe, cheap
     * (one atomic load). */
    bool (*reusable)(void *self, void *timer);
    /* Waits until everything submitted so far has been applied (hand-off
     * queues drained). May be NULL. */
    void (*sync)(void *self);
    /* The engine's own wake-up counter, if it has one. May be NULL. */
    bool (*wakeups)(void *self, uint64_t *out);
} tkb_svc_ops;

/* alignof in C++ (peers/asio.cc includes this header), _Alignof in C. */
#ifdef __cplusplus
#define TKB_ALIGNOF(t) alignof(t)
#else
#define TKB_ALIGNOF(t) _Alignof(t)
#endif

/* Embedded peers: where the record of a timer laid out with storage and
 * record together starts (the storage's size rounded up to max_align_t),
 * and the distance from one such (storage, record) pair to the next. */
static inline size_t tkb_svc_record_offset(const tkb_svc_ops *ops) {
    const size_t a = TKB_ALIGNOF(max_align_t);
    return (ops->timer_size + a - 1) / a * a;
}
static inline size_t tkb_svc_stride(const tkb_svc_ops *ops, size_t record_size) {
    const size_t a = TKB_ALIGNOF(max_align_t);
    return tkb_svc_record_offset(ops) + (record_size + a - 1) / a * a;
}

/* ---- peers (peers/peers.c) ---------------------------------------------------------
 * A spec names a peer: NAME[:key=value,...][@MODE]. NAME is an engine of the
 * library (its parameters parsed by tk_queue_config_parse()) or a baseline;
 * MODE `embedded` drives an engine through the executor's embedded timers. */
#define TKB_SPEC_MAX 160

struct tkb_peer {
    char id[TKB_SPEC_MAX];          /* its name in results.csv and hist/: the spec (older
                                       folders: whatever name they used) */
    char spec[TKB_SPEC_MAX];        /* canonical spec: the peer's name in every result */
    char label[TKB_SPEC_MAX];       /* short name for figures and tables ("wheel-1ms-1024") */
    char file[TKB_SPEC_MAX];        /* the label as a file-name part (hist/) */
    const char *kind;               /* "engine", "baseline", "strawman", "floor" */
    char description[TKB_SPEC_MAX]; /* one line */
    const tk_queue_ops *engine;     /* timerkit engine, or NULL */
    tk_queue_config qc;             /* its parameters (engines) */
    bool embedded;                  /* @embedded: the executor's embedded timers */
    int64_t slack_ns;               /* `slack=` (engines only): every timer's window, >= 0
                                       (tk_node.slack_ns; executor level: the executor's
                                       default_slack_ns); 0: none */
    int64_t os_slack_ns;            /* `os_slack=` (engines only): the Linux timer slack of
                                       the executor's threads (prctl(PR_SET_TIMERSLACK)),
                                       instead of the run's --timer-slack; 0: the run's */
    char base[TKB_SPEC_MAX];        /* the canonical spec without slack= and os_slack=: the
                                       peers of one base are one line of the frontier */
    int frontier;                   /* TKB_FRONTIER_*: does it run the workloads that
                                       sweep slack (tkb_workload.frontier)? */
    const tkb_core_peer_ops *core;  /* NULL: no core level */
    const tkb_svc_ops *svc;         /* NULL: no executor level */
    size_t core_max_n;              /* largest population its core runs (0: no limit) */
    const char *missing;            /* why it is not built, or NULL */
    bool waiting_only;              /* runs only in workloads that measure waiting (suites.c) */
    const char *child;              /* the harness that runs it in a child process
                                       (peers/child.c: "jvm", "go", ...), in the workloads
                                       that have `child` set; no core or svc then; or NULL */
    const char *design;             /* its timer design, for the field's table and figure:
                                       "heap", "hashed wheel", "hierarchical wheel", "list",
                                       or "" (the floor) */
    int slot;                       /* style slot, 1-TKB_SLOTS (plots/style.gp) */
};

/* The spec parameters tkbench takes off an engine's spec before the engine's
 * own parameters are parsed (no engine's table has them): what a workload
 * gives each timer, not how the engine is built. */
#define TKB_SLACK_KEY "slack"       /* tkb_peer.slack_ns */
#define TKB_OS_SLACK_KEY "os_slack" /* tkb_peer.os_slack_ns */

/* tkb_peer.frontier: a peer runs the workloads that sweep slack only if the
 * run puts it on the frontier (cli/run-select.c), and a peer the run adds
 * for the frontier runs nothing else. */
enum { TKB_FRONTIER_NONE, TKB_FRONTIER_TOO, TKB_FRONTIER_ONLY };

/* Style slots in plots/style.gp (NSLOTS there). */
#define TKB_SLOTS 24

/* tkb_peer_parse()'s status when NAME is neither an engine of the registry
 * nor a baseline. */
#define TKB_PEER_UNKNOWN (-2)

/* The peer p with its `key` (TKB_SLACK_KEY or TKB_OS_SLACK_KEY) set to ns
 * (0: without it), parsed into *out. Returns 0, or -1. */
int tkb_peer_with_slack(const tkb_peer *p, const char *key, int64_t ns, tkb_peer *out);
/* The engine's own precision at the peer's parameters: its tick for a ticked
 * engine (TK_QUEUE_CAP_TICKED, the parameter `tick`), else 0; -1 for a peer
 * that is not an engine or a tick it cannot read. */
int64_t tkb_peer_precision_ns(const tkb_peer *p);
/* Parses `spec` into *p. Returns 0, or TKB_PEER_UNKNOWN or -1 (anything
 * else wrong), with a message in err that names what is wrong and lists what
 * is known (the CLI exits with status 2). */
int tkb_peer_parse(const char *spec, tkb_peer *p, char *err, size_t err_len);
/* The peer table's rows (peers/peers.c: baselines, foreign peers, strawmen,
 * the floor): how many, and the name of row i if every suite runs it, else
 * NULL (a row only --peers runs). */
size_t tkb_baseline_count(void);
const char *tkb_baseline_in_suites(size_t i);
/* Prints the peers a spec may name, with their parameters, to f. */
void tkb_peer_list(FILE *f);
/* The reference peer of engine e: its first parameter set among the suites'
 * default peers (suites.c; a task peer that measures more than waiting and
 * sets nothing of the blocking adapter), else the engine at its defaults;
 * with `embedded`, that peer's @embedded variant. Returns 0, or -1. */
int tkb_peer_engine_reference(const tk_queue_ops *e, bool embedded, tkb_peer *out);
/* The frontier's lines, without slack: the suites' peers marked `frontier`
 * (suites.c) whose engine this build has, then the reference peer of every
 * registered engine none of them names. Writes up to `cap` into out and
 * returns how many there are. */
size_t tkb_frontier_bases(tkb_peer *out, size_t cap);
/* Gives each of the `count` peers its style slot and sorts them into display
 * order (engines in registry order, an engine's embedded variant right after
 * it; peers/peers.c tells the rule). */
void tkb_peer_arrange(tkb_peer *peers, size_t count);

/* Core and service implementations (defined only when built).
 * tkb_core_engine: any engine's pure core (peers/tk-core.c). The embedded-timer
 * services differ in one op: tkb_svc_executor_timer_deferred, for engines
 * with TK_QUEUE_CAP_DEFERRED_RELEASE, adds reusable(). */
extern const tkb_core_peer_ops tkb_core_engine, tkb_core_naive_heap, tkb_core_sorted_list,
    tkb_core_libuv, tkb_core_libevent, tkb_core_libev, tkb_core_asio;
extern const tkb_svc_ops tkb_svc_executor, tkb_svc_executor_timer, tkb_svc_executor_timer_deferred,
    tkb_svc_libuv, tkb_svc_libevent, tkb_svc_libev, tkb_svc_asio;
/* The versions of libev ("4.33", peers/libev.c) and asio ("1.22.1",
 * peers/asio.cc) this tkbench runs, for the metadata. */
const char *tkb_libev_version(void);
const char *tkb_asio_version(void);

/* ---- suites (suites.c) ---------------------------------------------------------- */
typedef enum tkb_suite_id { TKB_SMOKE, TKB_QUICK, TKB_FULL, TKB_NSUITES } tkb_suite_id;

typedef struct tkb_suite_peer {
    const char *spec;
    bool waiting_only; /* only in workloads that measure waiting (tkb_workload.waiting) */
    bool frontier;     /* one of the frontier's lines (tkb_frontier_bases()) */
} tkb_suite_peer;

typedef struct tkb_suite {
    const char *name;
    const char *summary;
    size_t strawman_max_n;    /* largest population a strawman runs */
    size_t strawman_pairs;    /* a strawman's hold-model pairs */
    double min_time;          /* Google Benchmark's minimum time of timed loops */
    const char *replay_trace; /* the trace the suite replays (workload `replay`), a path
                                 under the source tree; NULL: none. Absent: skipped */
} tkb_suite;

extern const tkb_suite tkb_suites[TKB_NSUITES];
/* The slacks the frontier sweeps (the workloads with tkb_workload.frontier):
 * each of its lines (tkb_frontier_bases()) with each as slack=, and the
 * engine tkb_frontier_os_engine with each (but 0) as os_slack=, the OS's
 * counterpart. 0 first: the engine as it is. */
extern const int64_t tkb_frontier_slacks_ns[];
extern const size_t tkb_frontier_slack_count;
extern const char *const tkb_frontier_os_engine;
/* The peers every suite runs unless --peers names others. */
extern const tkb_suite_peer tkb_suite_peers[];
extern const size_t tkb_suite_peer_count;
/* The suite called `name`, or -1. */
int tkb_suite_find(const char *name);

/* ---- the run (set by the CLI before any case runs, read-only afterwards) ---- */
typedef struct tkb_run {
    const tkb_suite *suite;
    const char *out_dir;
    int64_t timer_slack_ns;              /* < 0: leave alone */
    bool reps_given;                     /* --reps: every case has that many, whatever the
                                            targets need (tkb_targets_min_reps()) */
    const struct tkb_replay_set *replay; /* the traces a replay runs (replay/replay.h), or NULL */
} tkb_run;

/* The one run-wide global of tkbench: written once by the run (cli/run-select.c, cli/run-exec.c) or
 * the W5 child before the first case, then only read. */
extern tkb_run tkb_the_run;

/* ---- workload descriptors ------------------------------------------------------ */
typedef enum tkb_level { TKB_LEVEL_MACHINE, TKB_LEVEL_CORE, TKB_LEVEL_EXECUTOR } tkb_level;
typedef enum tkb_better { TKB_BETTER_NONE, TKB_BETTER_LOWER, TKB_BETTER_HIGHER } tkb_better;
typedef enum tkb_scale { TKB_SCALE_AUTO, TKB_SCALE_LOG, TKB_SCALE_LIN } tkb_scale;
typedef enum tkb_fig_kind {
    TKB_FIG_NONE,     /* in the report's tables only */
    TKB_FIG_LINES,    /* value against n, a line per peer */
    TKB_FIG_BARS,     /* a bar per peer at its largest n; one group per metric (or variant) */
    TKB_FIG_PANELS,   /* several LINES side by side, one key */
    TKB_FIG_LATENESS, /* from hist/: a percentile plot and a CDF (<name>_percentiles, _cdf) */
    TKB_FIG_FRONTIER, /* a metric against another (`metrics`: x then y), a line per peer
                         base (tkb_peer.base) through its slacks, each point labelled */
} tkb_fig_kind;

/* The metric's column in the headline table `tkbench run` prints. */
typedef struct tkb_headline {
    int block; /* 0: not in the headline; 1, 2: which table (machine level: the floor line) */
    const char *head;      /* column header ("core.ins") */
    const char *head_unit; /* second header line ("(M)"), or NULL */
    double scale;          /* printed value = value / scale (0: 1) */
    int prec;              /* digits after the point */
} tkb_headline;

typedef struct tkb_metric {
    const char *name;    /* results.csv's metric: "schedule_ns" */
    const char *unit;    /* one of tkb_units (output/results.c) */
    tkb_better better;   /* which direction is an improvement */
    const char *label;   /* short human name: "insert", "p99" */
    tkb_fig_kind figure; /* LINES or BARS: drawn in a figure of its own, unless a
                            figure of the workload's `figures` lists it */
    double pct;          /* a lateness percentile: which (50, 99.9); 0: not one */
    tkb_headline head;
    int field; /* its place among the field's headline values (report.md's "The field",
                  the figure `field`), from 1; 0: not one of them */
} tkb_metric;

/* Another workload's metric drawn as a reference (the floor's). */
typedef struct tkb_ref {
    const tkb_workload *workload;
    const char *metric;
    const char *label;
} tkb_ref;

/* A figure of a workload: several metrics in one figure, panels, lateness
 * from histograms, or a metric's figure with its own texts. */
typedef struct tkb_figure {
    const char *name; /* file name (LATENESS: prefix); NULL: derived */
    tkb_fig_kind kind;
    const char *metrics; /* comma-separated names of this workload's metrics */
    const char *title;   /* NULL: derived */
    const char *caption; /* NULL: the workload's summary */
    const char *xlabel;  /* NULL: the workload's */
    const char *ylabel;  /* without the unit; NULL: the metric's label */
    tkb_scale xscale;    /* AUTO: the workload's */
    tkb_scale yscale;
    double ymin_top;   /* the y axis reaches at least this far (0: no minimum) */
    bool wide;         /* double column */
    const char *table; /* FRONTIER: the metrics of report.md's table of it, comma-separated,
                          in column order; NULL: no table */
    tkb_ref refs[2];
} tkb_figure;

/* Sizes and repetitions of a workload in one suite. */
typedef struct tkb_plan {
    size_t sizes[8]; /* n values (populations, timers); 0 ends the list */
    int reps;        /* repetitions */
    int reps_long;   /* repetitions of its real-time cases where it has both kinds (0: reps) */
    size_t count;    /* the workload's own count (hold-model pairs, samples) */
    double seconds;  /* the workload's own window */
} tkb_plan;

/* A table of differences the report shows in a workload's section: a metric
 * of this workload minus one of another workload, per peer at the same n,
 * the peer's own core standing for its core level (W1_exec - W1_core: what
 * the executor adds to the engine's core per operation). */
typedef struct tkb_diff_col {
    const char *metric; /* this workload's */
    const char *minus;  /* the other workload's */
    double aim;         /* > 0: the aim (at most), shown with the column */
} tkb_diff_col;

typedef struct tkb_diff {
    const tkb_workload *minus; /* the other workload; NULL: no table */
    const char *label;         /* "executor overhead" */
    tkb_diff_col cols[4];      /* metric NULL ends them */
} tkb_diff;

typedef struct tkb_case tkb_case;

struct tkb_workload {
    const char *name;  /* "W1_core" */
    const char *group; /* "W1": `--workloads W1` selects the group */
    tkb_level level;
    const char *summary; /* one line */
    struct {
        const char *label;     /* what n is: "timers outstanding, N" */
        const char *shortname; /* in table headers: "N" */
        tkb_scale scale;
    } x;
    const tkb_metric *metrics;
    size_t nmetrics;
    const tkb_figure *figures;
    size_t nfigures;
    const char *const *variants; /* rows are <name>_<variant> (NULL: rows are <name>) */
    size_t nvariants;
    bool instance_rows; /* rows are <name>:<instance>, the instances of the run (the
                           replay: one per trace), named by its cases (tkb_case.row);
                           each figure is drawn once per row */
    bool hist;          /* writes hist/<row>.<peer>.hgrm */
    bool waiting;       /* measures how the peer waits (the waiting-only peers run it) */
    bool frontier;      /* sweeps slack: runs only the peers on the frontier
                           (tkb_peer.frontier; suites.c, tkb_frontier_slacks_ns) */
    bool sizes_from_n;  /* --n sets its sizes */
    /* If set, the sizes of every suite's plan come from the machine (W7: 1,
     * 2, 4, ... up to twice the cores) unless --n gives them: writes at most
     * cap sizes, returns how many. */
    size_t (*machine_sizes)(size_t *sizes, size_t cap);
    tkb_diff diff;     /* optional: a table of differences to another workload */
    const char *child; /* the foreign peers' measurement of this workload
                          (docs/child-protocol.md: "ops", "burst", "latency", "memory",
                          "idle"; with variants, "<child>-<variant>"), or NULL: the
                          foreign peers do not run it */
    tkb_plan plan[TKB_NSUITES];
    /* Appends the cases of this workload for `peer` under `plan`; returns how
     * many (0: the peer does not run it). */
    size_t (*cases)(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *peer,
                    tkb_case *out, size_t cap);
};

#define TKB_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The table of workloads (workloads/workloads.c), in run order. */
extern const tkb_workload *const tkb_workloads[];
extern const size_t tkb_workload_count;
/* Checks every descriptor of the table (names, metrics with known units,
 * figures naming declared metrics, plans with repetitions): a descriptor that
 * cannot work is a bug in its file. Says what is wrong on stderr; true if
 * nothing is. */
bool tkb_workloads_check(void);
/* w's plan in suite s, its sizes from the machine where w takes them so
 * (tkb_workload.machine_sizes). */
tkb_plan tkb_plan_of(const tkb_workload *w, int s);
/* "machine", "core" or "executor". */
const char *tkb_level_name(tkb_level l);
const tkb_workload *tkb_workload_find(const char *name);
const tkb_metric *tkb_metric_find(const tkb_workload *w, const char *name);
/* The workload whose row (its name, or <name>_<variant>) is `row`; *variant
 * gets the variant's index (-1: none). NULL if none. */
const tkb_workload *tkb_workload_of_row(const char *row, int *variant);

/* ---- targets (targets.c) --------------------------------------------------------
 * What a run is held to. A target is a metric of a workload's row for a peer
 * at one n, and its value is the median there, or a ratio of medians: to
 * another peer's same metric at the same n (`ref`), or to the same peer's at
 * another n (`ref_n`: how it scales). The value is held to `bound` (at most,
 * or at least). A target may name one peer by its spec, or every engine of
 * the registry (or its exact or ticked ones) at the engine's reference spec
 * (tkb_peer_engine_reference()), with tasks or embedded timers: one target
 * each. Written, expanded, into manifest.json; the renderer judges them,
 * with one code path for every kind. */
typedef enum tkb_target_peers {
    TKB_TP_SPEC,           /* the peer `spec` names */
    TKB_TP_ENGINES,        /* every engine of the registry */
    TKB_TP_EXACT_ENGINES,  /* the engines without TK_QUEUE_CAP_TICKED */
    TKB_TP_TICKED_ENGINES, /* the engines with it */
} tkb_target_peers;

typedef struct tkb_target {
    const tkb_workload *workload;
    const char *variant;  /* the row <workload>_<variant>; NULL: the workload's own row */
    const char *instance; /* the row <workload>:<instance> of a workload with instance rows
                             (a trace's short name); NULL: none */
    const char *metric;
    tkb_target_peers peers;
    const char *spec;         /* TKB_TP_SPEC: the peer's spec */
    bool embedded;            /* the engines' @embedded peers (not TKB_TP_SPEC) */
    int64_t slack_ns;         /* > 0: the engines' peers with this slack= (not TKB_TP_SPEC) */
    bool ref_unslacked;       /* a ratio to the same peer without its slack (its base) */
    bool bound_window;        /* the bound (in us, the metric's unit) adds the peer's slack and
                                 its engine's precision (tkb_peer_precision_ns()) */
    const tkb_workload *plus; /* the bound adds this workload's `plus_metric` of the peer
                                 `plus_peer`, its median at its largest n (the floor's
                                 wake-up p99), when the run has it; NULL: nothing */
    const char *plus_metric;
    const char *plus_peer;
    const char *ref;    /* a ratio to this peer's metric at the same n; NULL: none */
    double n;           /* the n it is judged at; 0: the largest n the peers both ran */
    double ref_n;       /* > 0: a ratio to the same peer's metric at this n */
    bool at_least;      /* met when >= bound (else <= bound) */
    double bound;       /* the bound */
    bool info;          /* shown for reference only: no verdict */
    int min_reps;       /* repetitions a verdict needs: the run plans at least these */
    int min_cores;      /* cores the machine needs for it (fewer: "not run"); 0: any */
    const char *what;   /* one line; "%s" stands for the peer's label */
    const char *source; /* where it comes from: "issue 26" */
} tkb_target;

extern const tkb_target tkb_targets[];
extern const size_t tkb_target_count;

/* Checks each target against its workload's descriptor (its metric, its
 * variant) and its peers (a spec, or engines): a target that cannot work is
 * a bug in targets.c. Says what is wrong on stderr; true if nothing is. */
bool tkb_targets_check(void);

/* One target for one peer: a target of the table, expanded. */
typedef struct tkb_target_row {
    const tkb_target *t;
    char row[64];            /* the row workload */
    char peer[TKB_SPEC_MAX]; /* canonical spec */
    char ref[TKB_SPEC_MAX];  /* the reference peer's spec (t->ref, or the peer's base); "" */
    double bound;            /* t->bound, plus the window where t->bound_window */
    char what[TKB_SPEC_MAX + 160];
} tkb_target_row;

/* Every target for every peer it names, in table order, into out (at most
 * cap). Returns how many there are (more than cap: the rest not written). */
size_t tkb_targets_expand(tkb_target_row *out, size_t cap);
/* The repetitions the targets need of the cases of workload w for peer p at
 * n, at most: 0 when no target names them. largest_n: the plan's largest n
 * (what a target without its own n is judged at). */
int tkb_targets_min_reps(const tkb_workload *w, const tkb_peer *p, double n, double largest_n);

/* ---- cases: one registered GB benchmark each ---------------------------- */
typedef void (*tkb_case_fn)(tk_gb_state *st, tkb_case *c);

struct tkb_case {
    char name[256]; /* GB benchmark name (unique) */
    const tkb_workload *wl;
    char row[64];         /* results.csv's workload: wl->name or <name>_<variant> */
    const tkb_plan *plan; /* the run's plan of wl */
    const tkb_peer *peer;
    double n;    /* results.csv n */
    int64_t arg; /* workload parameter (population, threads, percent...) */
    int64_t arg2;
    tkb_case_fn fn;
    const char *time_metric; /* if set: GB's real time per iteration is this metric (ns) */
    int64_t iterations;      /* time_metric cases: exact count (0: GB picks, min_time) */
    double est_seconds;      /* expected wall time of all its repetitions */
    int reps;
    /* progress */
    bool started, done;
    bool realtime;  /* wall time fixed by the workload (sleeps, windows): not rescaled */
    tkb_hist *hist; /* lateness accumulated over repetitions (or NULL) */
    /* foreign peers: the child the cases of one (peer, row) share (peers/child.c),
     * and the repetition the body reports next; NULL for every other peer */
    struct tkb_child_run *child;
    int rep_next;
};

/* Appends a case (harness/cases.c): name <row>/<peer>/<n>, est_seconds = est x reps,
 * reps raised to what the targets need of it unless --reps fixed them
 * (tkb_targets_min_reps()). Returns it, or NULL when `cap` is reached. */
tkb_case *tkb_case_add(tkb_case *cases, size_t cap, size_t *k, const tkb_workload *w,
                       const tkb_plan *plan, const tkb_peer *p, double n, int64_t arg,
                       tkb_case_fn fn, int reps, double est);
/* Gives the case a histogram its body merges each repetition's lateness into;
 * the run writes it to hist/ when every case has run. */
void tkb_case_attach_hist(tkb_case *c);
/* The one case of an executor-level workload whose wall time it fixes itself
 * (sleeps, windows, timers firing): `fn` at x value n and argument arg, with a
 * histogram if the workload writes them. Returns the number of cases added
 * (0: p has no executor level, or cap is reached). */
size_t tkb_case_add_realtime(tkb_case *cases, size_t cap, const tkb_workload *w,
                             const tkb_plan *plan, const tkb_peer *p, double n, int64_t arg,
                             tkb_case_fn fn, double est);
/* Does the core of `p` run a population of n (core level, size caps)? */
bool tkb_core_fits(const tkb_peer *p, size_t n);
bool tkb_is_strawman(const tkb_peer *p);
/* Rough wall-time models for the progress estimate (seconds per repetition). */
double tkb_est_phases(const tkb_peer *p, double n, double cancel_frac);
double tkb_est_churn(const tkb_peer *p, double n, double pairs);
double tkb_peer_factor(const tkb_peer *p);

/* Progress (cli/progress.c): announces a case when its body first runs. */
void tkb_progress_enter(tkb_case *c);

/* ---- foreign peers, run by a harness in a child process (peers/child.c) ----------------
 * Cases of workload w for the foreign peer p, when w->child names a measurement
 * p's harness implements (else 0): one per n of the plan (per variant), the cases
 * of one row sharing one child, started when the first of them runs. */
size_t tkb_child_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                       tkb_case *cases, size_t cap);
/* Frees what the foreign peers' cases among cases[0..count) hold. */
void tkb_child_cases_free(tkb_case *cases, size_t count);
/* Why the harness `name` cannot run (none declared, none built, not there, or
 * its `--describe` failed), or NULL. Asks the harness on the first call
 * (main thread). */
const char *tkb_child_missing(const char *name);
/* Calls fn for every harness asked so far that can run: its name, its
 * program and its `runtime` line (metadata). */
void tkb_child_each(void (*fn)(const char *name, const char *program, const char *runtime,
                               void *ctx),
                    void *ctx);

/* W5 in a fresh process: `tkbench _w5 SPEC N SLACK MODE` (mode 0: cancellable
 * timers, then cancel all; 1: no handle). Returns the exit status. */
int tkb_w5_child(const char *spec, size_t n, int64_t slack, int mode);

/* ---- system probes (harness/sysprobe.c) ----------------------------------------- */
int64_t tkb_now_ns(void);
int64_t tkb_rss_bytes(void);     /* /proc/self/statm resident pages * page size */
int64_t tkb_cpu_ns(void);        /* process user + sys (getrusage) */
int64_t tkb_thread_cpu_ns(void); /* calling thread user + sys (RUSAGE_THREAD) */
/* Every thread of this process but the calling one, each with its context
 * switches (voluntary + nonvoluntary: each time it slept, or was preempted)
 * and its time on a CPU. */
#define TKB_THREADS_MAX 512
typedef struct tkb_thread_use {
    long tid;
    uint64_t ctxt;
    int64_t cpu_ns;
} tkb_thread_use;
typedef struct tkb_threads {
    size_t n;
    bool truncated; /* more than TKB_THREADS_MAX: the rest left out */
    tkb_thread_use t[TKB_THREADS_MAX];
} tkb_threads;
void tkb_threads_read(tkb_threads *s);
/* What the threads of snapshot b did since snapshot a (both taken by one
 * thread): the sums of their context switches and CPU time, a thread that
 * started between the two counted whole; a thread that ended between the two
 * is counted in `ended` only (what it did is lost with it). */
typedef struct tkb_threads_delta {
    size_t threads; /* in b */
    size_t started, ended;
    uint64_t ctxt;
    int64_t cpu_ns;
} tkb_threads_delta;
void tkb_threads_since(const tkb_threads *a, const tkb_threads *b, tkb_threads_delta *d);
/* Sum of the context switches of every thread of this process except the
 * calling one (main thread only). */
uint64_t tkb_other_threads_ctxt(void);
void tkb_set_timer_slack(int64_t ns);
void tkb_sleep_ns(int64_t ns);
void tkb_sleep_until_ns(int64_t deadline_ns);

/* Fixed-seed random numbers. */
typedef struct tkb_rng {
    uint64_t s;
} tkb_rng;
static inline uint64_t tkb_rng_next(tkb_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline int64_t tkb_rng_range(tkb_rng *r, int64_t lo, int64_t hi) { /* [lo, hi] */
    return lo + (int64_t)(tkb_rng_next(r) % (uint64_t)(hi - lo + 1));
}
static inline double tkb_rng_unit(tkb_rng *r) { /* [0, 1) */
    return (double)(tkb_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}
#define TKB_SEED 0x74696d65726b6974ull /* "timerkit" */

/* Compiler barrier: keeps a value (or memory) alive without emitting code. */
#define TKB_ESCAPE(p) __asm__ volatile("" : : "g"(p) : "memory")

#define TKB_NS_PER_S INT64_C(1000000000)
#define TKB_NS_PER_MS INT64_C(1000000)

#endif
