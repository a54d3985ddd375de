/* SPDX-License-Identifier: MIT */
/* tkbench: the named suites. What a suite runs of each workload (sizes,
 * repetitions) is in that workload's descriptor (tkb_workload.plan); this
 * file holds what is common to a suite: the strawmen's limits, Google
 * Benchmark's minimum time, and the peers every suite runs by default. */
#include <string.h>

#include "tkbench.h"

/* The shipped trace the quick and full suites replay at core level (the
 * smoke suite replays none); a run without it skips the replay with a note. */
#define TKB_SUITE_TRACE "bench/traces/tcp.csv.xz"

const tkb_suite tkb_suites[TKB_NSUITES] = {
    [TKB_SMOKE] = {.name = "smoke",
                   .summary = "tiny sizes, 1 repetition, under 30 s (CI runs it)",
                   .strawman_max_n = 10000,
                   .strawman_pairs = 1000,
                   .min_time = 0.01},
    [TKB_QUICK] = {.name = "quick",
                   .summary = "N up to 1e6, 5 repetitions of the core-level micro benchmarks, "
                              "~11.5 min on 2 cores (make bench)",
                   .strawman_max_n = 10000,
                   .strawman_pairs = 20000,
                   .min_time = 0.2,
                   .replay_trace = TKB_SUITE_TRACE},
    [TKB_FULL] = {.name = "full",
                  .summary = "N up to 1e7, 5 repetitions (3 of the long real-time workloads)",
                  .strawman_max_n = 100000,
                  .strawman_pairs = 50000,
                  .min_time = 0.5,
                  .replay_trace = TKB_SUITE_TRACE},
};

/* The engines with their parameters of interest, through tasks and through
 * embedded timers. Every row of the peer table (peers/peers.c: the baselines,
 * the foreign peers, which run only the workloads their harness implements,
 * the strawmen and the floor) runs in every suite too. The spinning
 * variants change only how a thread waits for a deadline, and a hierarchical
 * wheel with a 1 us tick is there for its lateness, so they run only in the
 * workloads that measure waiting. A spec whose engine this build lacks is
 * left out of the run with a note. Any registered engine this list does not
 * name runs too, at its defaults, with tasks and with embedded timers
 * (cli/run-select.c), so a new engine is in every suite without a line here. */
const tkb_suite_peer tkb_suite_peers[] = {
    {"heap", false, true},
    {"heap:spin=150us", true, false},
    {"wheel:tick=1ms,slots=1024,spin=150us", true, false},
    {"wheel:tick=1ms,slots=1024", false, true},
    {"wheel:tick=100ms,slots=512", false, false},
    {"hwheel", false, true},
    {"hwheel:tick=1us", true, true},
    {"heap@embedded", false, false},
    {"wheel:tick=1ms,slots=1024@embedded", false, false},
    {"wheel:tick=100ms,slots=512@embedded", false, false},
    {"hwheel@embedded", false, false},
};
const size_t tkb_suite_peer_count = TKB_COUNT(tkb_suite_peers);

/* The frontier of issue 28 (timer slack): each of its lines (the peers
 * marked `frontier` above: an engine at its reference parameters, and the
 * hierarchical wheel at a 1 us tick as well, to set a fine tick against a
 * coarse one) at each of these slacks, and the heap with each as the OS's
 * timer slack of its threads, in the workloads that sweep slack
 * (cli/run-select.c adds the peers; docs/workloads.md, "The slack
 * frontier"). */
const int64_t tkb_frontier_slacks_ns[] = {0, 100 * 1000, TKB_NS_PER_MS, 10 * TKB_NS_PER_MS};
const size_t tkb_frontier_slack_count = TKB_COUNT(tkb_frontier_slacks_ns);
const char *const tkb_frontier_os_engine = "heap";

int tkb_suite_find(const char *name) {
    for (int i = 0; i < TKB_NSUITES; i++)
        if (strcmp(tkb_suites[i].name, name) == 0)
            return i;
    return -1;
}
