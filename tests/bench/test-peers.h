/* SPDX-License-Identifier: MIT */
/* Peers that exist only in the test build of tkbench (tkbench_test):
 * bench/peers/peers.c includes this file through TKB_TEST_PEERS and adds
 * each row of TKB_TEST_PEER_ROWS to its table of baselines. */
extern const tkb_svc_ops tkb_svc_test_wakeup; /* peers/wakeup.c */

#define TKB_TEST_PEER_ROWS                                                                         \
    {.name = "test-wakeup-1s",                                                                     \
     .kind = "baseline",                                                                           \
     .description =                                                                                \
         "the heap's executor and a thread of its own that wakes once a second (tests only)",      \
     .svc = &tkb_svc_test_wakeup,                                                                  \
     .design = "heap",                                                                             \
     .named_only = true},
