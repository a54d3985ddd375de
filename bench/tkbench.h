/* tkbench: internal declarations shared by the CLI, the workloads and the peers.
 *
 * Two peer interfaces, one per level (../shared/WORKLOADS.md):
 * - tkb_core_ops: a single-threaded data structure driven with virtual time
 *   (no locks, no clock reads inside the loops). Every op takes a whole batch
 *   so the loop over timers is inside the peer file and calls the engine
 *   directly: the harness adds one indirect call per batch, not per timer.
 * - tkb_svc_ops: a running timer service seen from a user thread (the
 *   executor with an engine; libuv or libevent on a loop thread of ours).
 *   Thread-safe; callbacks run on the service's thread(s). */
#ifndef TKB_TKBENCH_H
#define TKB_TKBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gbench_shim.h"
#include "hist.h"

typedef struct tkb_peer tkb_peer;

/* ---- core level ---------------------------------------------------------- */
typedef struct tkb_core_ops {
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
} tkb_core_ops;

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
     * NULL: always. A stopped tk_timer that the wheel's tick thread still
     * holds cannot be started until it lets go (at its next pass: about
     * 10 ms when it keeps up, 100 ms and more under sustained churn), so the
     * hold-model loops re-arm a spare timer instead (see spare_churn in
     * workloads.c). Thread-safe, cheap (one atomic load). */
    bool (*reusable)(void *self, void *timer);
    /* Waits until everything submitted so far has been applied (hand-off
     * queues drained). May be NULL. */
    void (*sync)(void *self);
    /* The engine's own wake-up counter, if it has one. May be NULL. */
    bool (*wakeups)(void *self, uint64_t *out);
} tkb_svc_ops;

/* Embedded peers: where the record of a timer laid out with storage and
 * record together starts (the storage's size rounded up to max_align_t),
 * and the distance from one such (storage, record) pair to the next. */
static inline size_t tkb_svc_record_offset(const tkb_svc_ops *ops) {
    const size_t a = _Alignof(max_align_t);
    return (ops->timer_size + a - 1) / a * a;
}
static inline size_t tkb_svc_stride(const tkb_svc_ops *ops, size_t record_size) {
    const size_t a = _Alignof(max_align_t);
    return tkb_svc_record_offset(ops) + (record_size + a - 1) / a * a;
}

struct tkb_peer {
    const char *name;         /* as in results.csv: "heap", "wheel-1ms-1024", ... */
    const char *kind;         /* "engine", "baseline", "strawman", "floor" */
    const char *params;       /* human-readable parameters for the metadata */
    int64_t tick_ns;          /* wheel peers */
    uint32_t ticks;           /* wheel peers */
    const char *engine;       /* timerkit engine name, or NULL */
    const tkb_core_ops *core; /* NULL: no core level */
    const tkb_svc_ops *svc;   /* NULL: no executor level */
    size_t core_max_n;        /* largest population its core runs (0: no limit) */
    int64_t spin_ns;          /* tk_queue_config.spin_ns (heap and wheel peers) */
    const char *only;         /* comma-separated workloads it runs in (NULL: all) */
    const char *missing;      /* why it is not built, or NULL */
};

/* Peers (peers.c). */
extern tkb_peer tkb_peers[];
extern const size_t tkb_peer_count;
const tkb_peer *tkb_peer_find(const char *name);

/* Core and service implementations (defined only when built). */
extern const tkb_core_ops tkb_core_heap, tkb_core_wheel, tkb_core_naive_heap, tkb_core_sorted_list,
    tkb_core_libuv, tkb_core_libevent;
extern const tkb_svc_ops tkb_svc_executor, tkb_svc_executor_timer, tkb_svc_executor_timer_wheel,
    tkb_svc_libuv, tkb_svc_libevent;

/* ---- run configuration --------------------------------------------------- */
typedef struct tkb_config {
    const char *suite; /* smoke, quick, full, custom */
    const char *out_dir;
    int reps;              /* repetitions of the micro benchmarks */
    int reps_long;         /* repetitions of the long real-time workloads (W2-W5, W7) */
    int reps_exec;         /* repetitions of W1_exec */
    size_t strawman_max_n; /* largest population the strawmen run (also bounded by the peer) */
    int64_t timer_slack_ns;
    size_t w1_sizes[8]; /* W1 populations */
    size_t w1_count;
    size_t churn_pairs; /* W1/W6 churn pairs */
    size_t strawman_churn_pairs;
    size_t dist_pairs; /* W6_dist churn pairs (0: as churn_pairs) */
    size_t w2_n;       /* W2 timers */
    size_t w3_n;       /* W3 timers */
    double w3_seconds; /* W3 scheduling window */
    double w4_seconds; /* W4 idle window */
    size_t w5_n;
    size_t w6_n; /* W6 sweep population */
    size_t w6_dist_sizes[8];
    size_t w6_dist_count;
    double w7_seconds;         /* per point */
    size_t floor_samples;      /* nanosleep/condvar samples */
    double floor_spin_seconds; /* floor/spin: how long one thread spins on the clock */
    double min_time;           /* GB min time for timed loops */
    bool sizes_given;          /* --n was given */
} tkb_config;

extern tkb_config tkb_cfg;

/* ---- cases: one registered GB benchmark each -------------------------- */
typedef struct tkb_case tkb_case;
typedef void (*tkb_case_fn)(tk_gb_state *st, tkb_case *c);

struct tkb_case {
    char name[160];       /* GB benchmark name (unique) */
    const char *workload; /* results.csv workload */
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
};

/* Workloads (workloads.c). */
typedef struct tkb_workload_info {
    const char *name;  /* CLI name: W1_core, W1_exec, W2_spread, ... */
    const char *level; /* core / executor / machine */
    const char *summary;
} tkb_workload_info;
extern const tkb_workload_info tkb_workloads[];
extern const size_t tkb_workload_count;

/* Appends the cases of workload `w` for `peer` to `cases`. Returns how many
 * were added (0: the peer does not run this workload). */
size_t tkb_workload_cases(const char *w, const tkb_peer *peer, tkb_case *cases, size_t cap);

/* W5 in a fresh process: `tkbench _w5 PEER N SLACK [MODE]` (mode 0: cancellable
 * timers, then cancel all; 1: no handle). Returns the exit status. */
int tkb_w5_child(const char *peer, size_t n, int64_t slack, int mode);

/* Progress (tkbench.c): announces a case when its body first runs. */
void tkb_progress_enter(tkb_case *c);

/* Writes hist/<workload>.<peer>.hgrm in the output folder. */
void tkb_write_hgrm(const tkb_case *c, const tkb_hist *h);

/* ---- system probes (sysprobe.c) ----------------------------------------- */
int64_t tkb_now_ns(void);
int64_t tkb_rss_bytes(void);     /* /proc/self/statm resident pages * page size */
int64_t tkb_cpu_ns(void);        /* process user + sys (getrusage) */
int64_t tkb_thread_cpu_ns(void); /* calling thread user + sys (RUSAGE_THREAD) */
/* Sum of voluntary + nonvoluntary context switches of every thread of this
 * process except the calling one. */
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

#endif
