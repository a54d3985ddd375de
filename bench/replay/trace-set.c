/* SPDX-License-Identifier: MIT */
/* tkbench: the traces of a run that replays (replay.h): loading (or making)
 * each trace, and its reference model. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

/* "synth:EVENTS[:TIMERS]" */
static bool synth_spec(const char *path, size_t *events, size_t *timers) {
    if (strncmp(path, "synth:", 6) != 0)
        return false;
    char *end;
    double e = strtod(path + 6, &end), t = 0;
    if (*end == ':')
        t = strtod(end + 1, &end);
    if (*end != '\0' || !(e >= 1) || e > 1e9 || !(t >= 0) || t > 1e9)
        return false;
    *events = (size_t)e;
    *timers = (size_t)t;
    return true;
}

static void trace_free(tkb_replay_trace *rt) {
    tkb_replay_ref_free(&rt->ref);
    if (rt->synthetic)
        tkb_replay_synth_free(&rt->trace);
    else
        tkt_free(&rt->trace);
}

int tkb_replay_set_open(tkb_replay_set *rs, const char *const *paths, size_t count,
                        int64_t step_ns) {
    rs->traces = calloc(count ? count : 1, sizeof *rs->traces);
    rs->count = 0;
    rs->step_ns = step_ns;
    if (rs->traces == NULL) {
        fprintf(stderr, "tkbench: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; i++) {
        tkb_replay_trace *rt = &rs->traces[i];
        char err[1024] = "";
        size_t events, timers;
        int64_t t0 = tkb_now_ns();
        if (synth_spec(paths[i], &events, &timers)) {
            rt->synthetic = true;
            if (tkb_replay_synth(events, timers, TKB_SEED + events, &rt->trace) != 0) {
                fprintf(stderr, "tkbench: %s: out of memory\n", paths[i]);
                return 1;
            }
            if (timers > 0) /* synth:E and synth:E:T are different traces: name both */
                snprintf(rt->trace.name, sizeof rt->trace.name, "synth-%zu-%zu", events, timers);
        } else {
            /* a neutral CSV or perf script text as recorded: whichever the file holds */
            if (tkt_load_any(paths[i], NULL, &rt->trace, NULL, NULL, err, sizeof err) != 0) {
                fprintf(stderr, "tkbench: cannot read trace %s\n", err);
                return 2;
            }
        }
        rs->count++;
        for (size_t j = 0; j < i; j++)
            if (strcmp(rs->traces[j].trace.name, rt->trace.name) == 0) {
                fprintf(stderr,
                        "tkbench: traces %s and %s have the same short name '%s': rename one "
                        "(a results row is replay:<short name>)\n",
                        paths[j], paths[i], rt->trace.name);
                return 2;
            }
        if (tkb_replay_ref_build(&rt->trace, step_ns, &rt->ref, err, sizeof err) != 0) {
            fprintf(stderr, "tkbench: %s\n", err);
            return 1;
        }
        fprintf(stderr,
                "tkbench: trace %s: %zu events (%" PRIu64 " starts, %" PRIu64 " modifies, %" PRIu64
                " cancels, %" PRIu64 " cancels of timers not armed), %zu timers, up to %zu armed, "
                "%" PRIu64 " expire in %zu grid points; read in %.1f s\n",
                rt->trace.name, rt->trace.count, rt->ref.starts, rt->ref.modifies, rt->ref.cancels,
                rt->ref.cancels_unarmed, rt->trace.ntimers, rt->ref.peak, rt->ref.expired,
                rt->ref.nbatches, (double)(tkb_now_ns() - t0) / 1e9);
    }
    return 0;
}

void tkb_replay_set_close(tkb_replay_set *rs) {
    for (size_t i = 0; rs->traces != NULL && i < rs->count; i++)
        trace_free(&rs->traces[i]);
    free(rs->traces);
    memset(rs, 0, sizeof *rs);
}
