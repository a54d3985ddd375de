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
} tkt_trace;

/* Status of the loaders and writers. */
enum { TKT_OK = 0, TKT_EIO = 1, TKT_EPARSE = 2, TKT_ENOMEM = 3 };

/* Loads a trace in the neutral CSV format (docs/traces.md), plain or
 * compressed (.gz, .xz, .zst: read through the system's decompressor).
 * On error returns non-zero, leaves *out empty and writes "FILE:LINE: ..."
 * (or "FILE: ...") into err. */
int tkt_load(const char *path, tkt_trace *out, char *err, size_t err_len);
/* Frees what a loader gave *t (and empties it); safe on an empty trace. */
void tkt_free(tkt_trace *t);
/* Writes *t as neutral CSV to f (path only for messages). */
int tkt_write_csv(const tkt_trace *t, FILE *f, char *err, size_t err_len);

#endif
