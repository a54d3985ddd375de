/* SPDX-License-Identifier: MIT */
/* tkbench: THE list of workloads, in report order. Each X(id) names the
 * descriptor tkb_wl_<id>, defined in workloads/<id>.c; adding a workload is
 * that file plus one line here (bench/README.md, "Adding a workload"). A test
 * build adds its own through TKB_TEST_WORKLOADS (tests/bench/). */
#ifndef TKB_WORKLOADS_H
#define TKB_WORKLOADS_H

#define TKB_WORKLOAD_LIST(X)                                                                       \
    X(w1_core)                                                                                     \
    X(w1_exec)                                                                                     \
    X(w2_burst)                                                                                    \
    X(w2_spread)                                                                                   \
    X(w3_latency)                                                                                  \
    X(w4_idle)                                                                                     \
    X(w5_memory)                                                                                   \
    X(w6_cancel_ratio)                                                                             \
    X(w6_delay_range)                                                                              \
    X(w6_dist)                                                                                     \
    X(w7_contention)                                                                               \
    X(replay_core)                                                                                 \
    X(replay_exec)                                                                                 \
    X(slack_frontier)                                                                              \
    X(floor)

#endif
