/* SPDX-License-Identifier: MIT */
/* tkbench workload `W5_memory`: resident memory per outstanding timer, and
 * what stays resident after all are cancelled, each measured in a fresh
 * process (docs/workloads.md). */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness/harness.h"

/* Runs `tkbench _w5 SPEC N SLACK MODE` and reads its `key value` lines into
 * v[0] (bytes per timer) and v[1] (RSS left after cancel). Returns 0 or -1. */
static int w5_run_child(const tkb_case *c, int mode, double v[2]) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/proc/%d/exe _w5 '%s' %lld %lld %d", (int)getpid(), c->peer->spec,
             (long long)c->arg, (long long)tkb_the_run.timer_slack_ns, mode);
    FILE *p = popen(cmd, "r");
    char line[256];
    v[0] = v[1] = -1;
    while (p && fgets(line, sizeof line, p)) {
        sscanf(line, "bytes_per_timer %lf", &v[0]);
        sscanf(line, "rss_after_cancel_bytes %lf", &v[1]);
    }
    int rc = p ? pclose(p) : -1;
    return rc == 0 && v[0] >= 0 ? 0 : -1;
}

/* W5_memory: measured in fresh processes (tkbench _w5) so that earlier
 * workloads' heap does not absorb the growth. Mode 0: cancellable timers (the
 * handle a cancel needs: a future...), then cancel them all; mode 1 (added
 * metric bytes_per_timer_no_handle): timers scheduled without a handle. The
 * embedded peers have no timer without storage (a tk_timer is its own
 * handle), so they run mode 0 only and have no bytes_per_timer_no_handle. */
static void w5_memory(tk_gb_state *st, tkb_case *c) {
    bool no_handle = !c->peer->svc->embedded;
    while (tk_gb_keep_running(st)) {
        int64_t t0 = tkb_now_ns();
        double v[2], w[2];
        if (w5_run_child(c, 0, v) != 0 || (no_handle && w5_run_child(c, 1, w) != 0)) {
            tk_gb_skip(st, "W5 child failed");
            break;
        }
        tk_gb_set_iteration_time(st, (double)(tkb_now_ns() - t0) / 1e9);
        tk_gb_counter(st, "bytes_per_timer", v[0]);
        tk_gb_counter(st, "rss_after_cancel_bytes", v[1]);
        if (no_handle)
            tk_gb_counter(st, "bytes_per_timer_no_handle", w[0]);
    }
}

/* W5's storage for the user's timers: an anonymous mapping, page-aligned and
 * touched, so that RSS grows by exactly ceil(bytes / page) pages for it (no
 * malloc header or arena slack: 1e6 x 64 B is exactly 15625 pages), and
 * gives them back at munmap. */
static char *map_touched(size_t bytes) {
    void *p =
        mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 0, bytes);
    return p;
}

/* What bytes_per_timer counts: the RSS growth from after the warm-up to
 * after N timers are scheduled, over N: the user's storage for the N timers
 * (timer_size bytes each: a future pointer, a uv_timer_t, a struct event, a
 * tk_timer; in a page-aligned mapping, so no allocator header is counted) and
 * everything the peer allocates for them (tasks, futures, heap arrays, loop
 * requests). Not counted: the harness's delays (allocated and touched before
 * the first reading) and the shared no-op record (none at all for the
 * embedded peers, whose storage is the whole timer: nothing fires here). */
int tkb_w5_child(const char *spec, size_t n, int64_t slack, int mode) {
    static tkb_peer peer; /* the child's one peer, for its whole life */
    char err[256];
    if (tkb_peer_parse(spec, &peer, err, sizeof err) != 0) {
        fprintf(stderr, "tkbench _w5: %s\n", err);
        return 2;
    }
    const tkb_peer *p = &peer;
    if (p->svc == NULL || n == 0)
        return 2;
    tkb_the_run.timer_slack_ns = slack;
    const tkb_svc_ops *ops = p->svc;
    const size_t ts = ops->timer_size;
    tkb_fire *rec = tkb_idle_record(ops);
    if (mode == 1 && ops->embedded)
        return 2; /* no timer without storage */
    int64_t *delays =
        tkb_uniform_deadlines(n, TKB_W1_LO, TKB_W1_HI, TKB_SEED + n); /* harness, not counted */
    void *self;
    if (delays == NULL || tkb_svc_open(p, 1, &self))
        return 1;
    /* warm-up: threads started, one timer through the whole path */
    char *warm = tkb_xmalloc_touched(ts);
    tkb_prepare_storage(ops, self, warm, 1, ts, false);
    ops->schedule(self, warm, rec, 3600 * TKB_NS_PER_S);
    ops->cancel(self, warm);
    if (ops->release)
        ops->release(self, warm);
    if (ops->sync)
        ops->sync(self);
    tkb_sleep_ns(50 * TKB_NS_PER_MS);
    malloc_trim(0);
    /* The first reading after malloc_trim() re-grows the heap its stdio
     * buffer comes from (glibc's top pad) after it read statm, so the next
     * reading would be that much higher for every peer
     * (docs/bench-notes.md). Read once and drop it. */
    (void)tkb_rss_bytes();
    int64_t rss0 = tkb_rss_bytes();
    if (mode == 1) { /* no handle: the peer allocates whatever it needs */
        for (size_t i = 0; i < n; i++)
            if (ops->schedule(self, NULL, &tkb_noop, delays[i]) != 0)
                return 1;
        if (ops->sync)
            ops->sync(self);
        tkb_sleep_ns(50 * TKB_NS_PER_MS);
        int64_t rss1 = tkb_rss_bytes();
        printf("bytes_per_timer %.3f\n", (double)(rss1 - rss0) / (double)n);
        fflush(stdout);
        ops->destroy(self);
        free(warm);
        free(delays);
        return 0;
    }
    /* everything a user allocates: its handles/timer objects, and the peer's */
    char *timers = map_touched(n * ts);
    if (timers == NULL)
        return 1;
    tkb_prepare_storage(ops, self, timers, n, ts, false); /* tk_timer_init: no allocation */
    for (size_t i = 0; i < n; i++)
        if (ops->schedule(self, timers + i * ts, rec, delays[i]) != 0)
            return 1;
    if (ops->sync)
        ops->sync(self);
    tkb_sleep_ns(50 * TKB_NS_PER_MS); /* hand-off queues drained into the engine */
    int64_t rss1 = tkb_rss_bytes();
    /* tkb_cancel_all ends with release() + sync(): an embedded peer returns only
     * once every stopped timer is idle (the wheel's tick thread let go), so
     * the storage is unmapped only when the library is done with it */
    tkb_cancel_all(ops, self, timers, n);
    munmap(timers, n * ts);
    /* A service may release cancelled timers on a thread of its own (the
     * wheel's tick thread does, within its reclaim period, which takes
     * longer for a million nodes): wait until RSS stops falling (two
     * readings 50 ms apart within 64 KiB), at most 3 s. */
    int64_t rss2 = tkb_rss_bytes();
    for (int i = 0; i < 60; i++) {
        tkb_sleep_ns(50 * TKB_NS_PER_MS);
        int64_t r = tkb_rss_bytes();
        bool settled = r > rss2 - 65536;
        rss2 = r < rss2 ? r : rss2;
        if (settled)
            break;
    }
    printf("bytes_per_timer %.3f\n", (double)(rss1 - rss0) / (double)n);
    printf("rss_after_cancel_bytes %lld\n", (long long)(rss2 - rss0));
    fflush(stdout);
    ops->destroy(self);
    free(warm);
    free(delays);
    return 0;
}

static size_t w5_memory_cases(const tkb_workload *w, const tkb_plan *plan, const tkb_peer *p,
                              tkb_case *cases, size_t cap) {
    size_t n = plan->sizes[0];
    return tkb_case_add_realtime(cases, cap, w, plan, p, (double)n, (int64_t)n, w5_memory,
                                 0.6 + (double)n * 4e-6);
}

static const tkb_metric w5_memory_metrics[] = {
    {.name = "bytes_per_timer",
     .unit = "bytes",
     .better = TKB_BETTER_LOWER,
     .label = "bytes per timer",
     .head = {2, "B/timer", NULL, 1, 1},
     .field = 8},
    {.name = "rss_after_cancel_bytes",
     .unit = "bytes",
     .better = TKB_BETTER_LOWER,
     .label = "RSS after cancel"},
    {.name = "bytes_per_timer_no_handle",
     .unit = "bytes",
     .better = TKB_BETTER_LOWER,
     .label = "bytes per timer, no handle"},
};

static const tkb_figure w5_memory_figures[] = {
    {"w5_bytes_per_timer", TKB_FIG_BARS, "bytes_per_timer", "W5 memory per timer",
     "W5: resident memory growth per outstanding timer, all user allocations included", NULL,
     "memory per timer", .yscale = TKB_SCALE_LIN},
    {"w5_rss_after_cancel", TKB_FIG_BARS, "rss_after_cancel_bytes",
     "W5 memory left after cancelling all",
     "W5: resident memory still held after every timer was cancelled", NULL, "resident memory",
     .yscale = TKB_SCALE_AUTO},
};

const tkb_workload tkb_wl_w5_memory = {
    .name = "W5_memory",
    .group = "W5",
    .level = TKB_LEVEL_EXECUTOR,
    .summary = "RSS per outstanding timer; RSS left after cancelling all",
    .x = {"timers", "timers", TKB_SCALE_LOG},
    .metrics = w5_memory_metrics,
    .nmetrics = TKB_COUNT(w5_memory_metrics),
    .figures = w5_memory_figures,
    .nfigures = TKB_COUNT(w5_memory_figures),
    .child = "memory",
    .plan =
        {
            [TKB_SMOKE] = {.sizes = {10000}, .reps = 1},
            [TKB_QUICK] = {.sizes = {1000000}, .reps = 1},
            [TKB_FULL] = {.sizes = {1000000}, .reps = 3},
        },
    .cases = w5_memory_cases,
};
