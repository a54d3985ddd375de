/* SPDX-License-Identifier: MIT */
/* tkbench: the targets a run is held to. Each is a metric of a workload for
 * one peer (its spec): its value against a bound, or its ratio to a reference
 * peer measured in the same run, at the largest n both ran. The run writes
 * them into manifest.json (`targets`, docs/results-format.md); the renderer
 * gives each its verdict in report.md and on its standard output, or "not
 * run" when a peer or the workload is not in the run. This table is the only
 * place they are written down. */
#include "tkbench.h"

extern const tkb_workload tkb_wl_w1_exec, tkb_wl_w2_burst, tkb_wl_w5_memory;

#define HEAP "heap"
#define WHEEL "wheel:tick=1ms,slots=1024"
#define ISSUE18 "issue 18"

const tkb_target tkb_targets[] = {
    {&tkb_wl_w1_exec, "schedule_ns", HEAP, "jdk-stpe", false, 0.8,
     "heap tasks schedule vs the JDK's STPE", ISSUE18},
    {&tkb_wl_w1_exec, "cancel_ns", HEAP, "jdk-stpe-roc", false, 0.5,
     "heap tasks cancel vs STPE with remove-on-cancel", ISSUE18},
    {&tkb_wl_w1_exec, "schedule_ns", WHEEL, "netty-1ms", false, 1.0,
     "wheel-1ms tasks schedule vs Netty 1 ms", ISSUE18},
    {&tkb_wl_w1_exec, "cancel_ns", WHEEL, "netty-1ms", false, 1.0,
     "wheel-1ms tasks cancel vs Netty 1 ms", ISSUE18},
    {&tkb_wl_w1_exec, "churn_ns", WHEEL, "netty-1ms", false, 0.8,
     "wheel-1ms tasks churn vs Netty 1 ms", ISSUE18},
    {&tkb_wl_w5_memory, "bytes_per_timer", HEAP, NULL, false, 96, "heap tasks bytes per timer",
     ISSUE18},
    {&tkb_wl_w5_memory, "bytes_per_timer", HEAP, "jdk-stpe", false, 0,
     "heap tasks bytes per timer vs the JDK's STPE", ISSUE18 " (for reference)"},
    {&tkb_wl_w5_memory, "bytes_per_timer", WHEEL, NULL, false, 96,
     "wheel-1ms tasks bytes per timer", ISSUE18},
    {&tkb_wl_w5_memory, "bytes_per_timer", WHEEL, "netty-1ms", false, 1.0,
     "wheel-1ms tasks bytes per timer vs Netty 1 ms", ISSUE18 " (stretch goal)"},
    {&tkb_wl_w2_burst, "burst_fire_rate_per_s", HEAP, NULL, true, 8e6,
     "heap tasks burst firing rate", ISSUE18},
    {&tkb_wl_w2_burst, "burst_fire_rate_per_s", WHEEL, NULL, true, 15e6,
     "wheel-1ms tasks burst firing rate", ISSUE18},
};
const size_t tkb_target_count = TKB_COUNT(tkb_targets);
