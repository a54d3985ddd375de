/* SPDX-License-Identifier: MIT */
/* timerkit traces: real timer activity, in memory, for replay (docs/traces.md).
 *
 * A trace is a time-ordered list of events on timers. Each timer is known by
 * a dense index (0 .. ntimers-1) that the loader gives it; the trace keeps
 * what the source called it (an address, a name) and the function it runs,
 * when the source says. Times are nanoseconds from the trace's start (the
 * first event is at or after 0); a start's deadline is on the same clock,
 * and may lie before the start's own time (a timer armed already due).
 *
 * The operations:
 *   START   arm the timer, or re-arm it if it is armed (a modify): after it
 *           the timer is armed with this deadline;
 *   CANCEL  disarm it (a cancel of a timer that is not armed is kept: the
 *           replay counts it and does nothing);
 *   EXPIRE  the source saw the timer fire at this time (optional, for
 *           checking and statistics; a replay does not issue it, it expires
 *           timers by their deadlines).
 *
 * This library has no dependency beyond libc: tkbench, its tests and the
 * parser fuzz target all link it. Every loader reports a bad input as a
 * message "FILE:LINE: what is wrong" and a status, never by crashing. */
#ifndef TKB_TRACE_H
#define TKB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum tkt_op { TKT_START = 0, TKT_CANCEL = 1, TKT_EXPIRE = 2 } tkt_op;

typedef struct tkt_event {
    int64_t t_ns;        /* when, ns from the trace's start; non-decreasing along the trace */
    int64_t deadline_ns; /* START: the deadline (same clock); otherwise 0 */
    uint32_t timer;      /* dense index < tkt_trace.ntimers */
    uint8_t op;          /* tkt_op */
} tkt_event;

typedef struct tkt_timer_info {
    const char *id;       /* the source's name for it ("0xffff8880...", or a CSV token) */
    const char *function; /* what it runs ("tcp_write_timer"), or "" if unknown */
    uint8_t cls;          /* the source's timer class: 0 unknown, 1 kernel wheel, 2 hrtimer */
} tkt_timer_info;

typedef struct tkt_trace {
    char name[64]; /* short name: the file name without directories and extensions */
    tkt_event *ev;
    size_t count;
    tkt_timer_info *timers; /* ntimers entries; strings live in the trace's own storage */
    size_t ntimers;
    int64_t duration_ns; /* time of the last event */
    char source[128];    /* where it came from ("perf script, HZ=250"), from the CSV's header */
    void *storage_;      /* private: the strings */
    const char *meta;    /* the '#' metadata lines of the CSV (or what an importer would write
                          * there), each without its "# " and ending in '\n'; "" if none.
                          * NULL only in an empty (zeroed or freed) trace */
} tkt_trace;

/* Status of the loaders and writers. */
enum { TKT_OK = 0, TKT_EIO = 1, TKT_EPARSE = 2, TKT_ENOMEM = 3 };

/* The largest time or deadline a trace holds (about 31.7 years): sums and
 * differences of two of them never overflow int64_t. */
#define TKT_MAX_NS INT64_C(1000000000000000000)

/* The timer classes of tkt_timer_info.cls, with their CSV names. */
enum { TKT_CLS_UNKNOWN = 0, TKT_CLS_WHEEL = 1, TKT_CLS_HRTIMER = 2 };
/* "", "wheel", "hrtimer"; NULL for any other value. */
const char *tkt_cls_name(unsigned cls);
/* "start", "cancel", "expire"; NULL for any other value. */
const char *tkt_op_name(unsigned op);

/* Loads a trace in the neutral CSV format (docs/traces.md), plain or
 * compressed (.gz, .xz, .zst: read through the system's decompressor).
 * On error returns non-zero, leaves *out empty and writes "FILE:LINE: ..."
 * (or "FILE: ...") into err. */
int tkt_load(const char *path, tkt_trace *out, char *err, size_t err_len);
/* Frees what a loader gave *t (and empties it); safe on an empty trace. */
void tkt_free(tkt_trace *t);
/* Writes *t as neutral CSV to f: its source and metadata as "#" lines, the
 * header, one line per event. Messages name t->name. Returns TKT_OK,
 * TKT_EPARSE (a timer name or function a CSV field cannot hold: a comma,
 * quote or line break) or TKT_EIO (a write failed). */
int tkt_write_csv(const tkt_trace *t, FILE *f, char *err, size_t err_len);

/* Checks what every loader promises of *t: every event's timer below
 * ntimers and op a tkt_op, times non-decreasing within 0..TKT_MAX_NS,
 * deadlines of starts within 0..TKT_MAX_NS (others 0), duration_ns the last
 * time, every timer with an id, a function and a class of TKT_CLS_*. Returns
 * true, or false with the first violation in err. */
bool tkt_check(const tkt_trace *t, char *err, size_t err_len);

/* Parses neutral CSV held in memory (buf[0..len), no terminator needed);
 * name stands for the file in messages and gives the trace its name.
 * tkt_load() is this on the file's (decompressed) bytes. Same results. */
int tkt_parse_csv(const char *name, const char *buf, size_t len, tkt_trace *out, char *err,
                  size_t err_len);

/* Writes *t as neutral CSV to path, compressed when path ends in .gz, .xz or
 * .zst (through the system's gzip, xz or zstd; SIGPIPE is blocked in the
 * calling thread meanwhile). Returns TKT_OK, TKT_EIO with "PATH: ..." in err,
 * or TKT_EPARSE as tkt_write_csv(). */
int tkt_save(const tkt_trace *t, const char *path, char *err, size_t err_len);

/* ---- the importer of Linux `perf script` text (docs/traces.md) ----------
 * Reads the text perf script prints for `perf record -e 'timer:*' -a`: the
 * kernel wheel's timer_start / timer_cancel / timer_expire_entry and the
 * hrtimer_start / hrtimer_cancel / hrtimer_expire_entry events. A timer is
 * its address and class. Wheel deadlines come from [timeout=N] jiffies and
 * HZ; hrtimer deadlines from expires= on the hrtimer clock, moved onto the
 * perf clock by an offset estimated from hrtimer_expire_entry's now=. A
 * cancel directly followed by the expiry of the same timer (how some kernels
 * trace an expiry) is dropped. Events are sorted by time, stably. */

/* The perf events the importer knows: X(ENUM, "name in perf", used). Events
 * not used, and events not listed, are counted and skipped. */
#define TKT_PERF_EVENTS(X)                                                                         \
    X(TIMER_START, "timer:timer_start", 1)                                                         \
    X(TIMER_CANCEL, "timer:timer_cancel", 1)                                                       \
    X(TIMER_EXPIRE_ENTRY, "timer:timer_expire_entry", 1)                                           \
    X(HRTIMER_START, "timer:hrtimer_start", 1)                                                     \
    X(HRTIMER_CANCEL, "timer:hrtimer_cancel", 1)                                                   \
    X(HRTIMER_EXPIRE_ENTRY, "timer:hrtimer_expire_entry", 1)                                       \
    X(TIMER_INIT, "timer:timer_init", 0)                                                           \
    X(TIMER_SETUP, "timer:timer_setup", 0)                                                         \
    X(TIMER_EXPIRE_EXIT, "timer:timer_expire_exit", 0)                                             \
    X(TIMER_BASE_IDLE, "timer:timer_base_idle", 0)                                                 \
    X(HRTIMER_INIT, "timer:hrtimer_init", 0)                                                       \
    X(HRTIMER_SETUP, "timer:hrtimer_setup", 0)                                                     \
    X(HRTIMER_EXPIRE_EXIT, "timer:hrtimer_expire_exit", 0)                                         \
    X(ITIMER_STATE, "timer:itimer_state", 0)                                                       \
    X(ITIMER_EXPIRE, "timer:itimer_expire", 0)                                                     \
    X(TICK_STOP, "timer:tick_stop", 0)

typedef enum tkt_perf_event {
#define TKT_X_ENUM(e, name, used) TKT_PERF_##e,
    TKT_PERF_EVENTS(TKT_X_ENUM)
#undef TKT_X_ENUM
        TKT_PERF_OTHER, /* any event not listed */
    TKT_PERF_NEVENTS
} tkt_perf_event;
/* The perf name of e ("timer:timer_start"; "other" for TKT_PERF_OTHER); NULL
 * if e is out of range. */
const char *tkt_perf_event_name(unsigned e);

/* Which classes of timers to keep. */
enum { TKT_KEEP_ALL = 0, TKT_KEEP_WHEEL = 1, TKT_KEEP_HRTIMER = 2 };

typedef struct tkt_perf_opts {
    int64_t hz;            /* jiffies per second; 0: find it from the trace */
    const char *functions; /* keep timers whose function matches one of these comma-separated
                            * fnmatch() globs ("tcp_*,process_timeout"); NULL or "": all */
    const char *cpus;      /* keep events of these CPUs ("0,2-3"); NULL or "": all */
    int keep;              /* TKT_KEEP_* */
    /* Called now and then with the bytes parsed so far and the total, and
     * once at the end (done == total); NULL: never. */
    void (*progress)(void *arg, size_t done, size_t total);
    void *progress_arg;
} tkt_perf_opts;

typedef struct tkt_import_stats {
    size_t lines;                     /* lines read */
    size_t events[TKT_PERF_NEVENTS];  /* events read, by tkt_perf_event */
    size_t skipped[TKT_PERF_NEVENTS]; /* of those, skipped: not used by the importer, or
                                       * dropped as counted below */
    size_t filtered;                  /* dropped by the function, CPU or class filters */
    size_t expiry_cancels;            /* cancels dropped as part of an expiry (the quirk) */
    size_t other_clock;               /* hrtimer starts on another clock base, dropped */
    size_t clamped;                   /* deadlines before the trace's start, set to 0 */
    size_t out_of_order;              /* events earlier than an event before them in the text */
    int64_t hz;                       /* HZ used (0 if no wheel event was kept) */
    bool hz_found;                    /* hz was found from the trace (not given) */
    int64_t hr_offset_ns;             /* hrtimer clock minus perf clock, as estimated */
    int64_t t0_ns;                    /* perf time of the trace's time 0 */
} tkt_import_stats;

/* Imports perf script text from path (plain or compressed, as tkt_load).
 * opts NULL: no filter, HZ found from the trace. stats may be NULL. On
 * error returns TKT_EIO, TKT_EPARSE or TKT_ENOMEM, leaves *out empty and
 * writes "FILE:LINE: ..." or "FILE: ..." into err. */
int tkt_import_perf(const char *path, const tkt_perf_opts *opts, tkt_trace *out,
                    tkt_import_stats *stats, char *err, size_t err_len);
/* The same on text held in memory. */
int tkt_parse_perf(const char *name, const char *buf, size_t len, const tkt_perf_opts *opts,
                   tkt_trace *out, tkt_import_stats *stats, char *err, size_t err_len);

/* Loads path whichever it holds: neutral CSV (its first line that is not
 * blank starts with '#' or "t_ns,") or perf script text (anything else);
 * opts and stats are used for perf text only (stats zeroed for CSV). *is_csv,
 * if not NULL, says which it was. Errors as tkt_load. */
int tkt_load_any(const char *path, const tkt_perf_opts *opts, tkt_trace *out,
                 tkt_import_stats *stats, bool *is_csv, char *err, size_t err_len);

#endif
