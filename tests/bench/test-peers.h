/* SPDX-License-Identifier: MIT */
/* Peers that exist only in the test build of tkbench (tkbench_test):
 * bench/peers/peers.c includes this file through TKB_TEST_PEERS and adds
 * each row of TKB_TEST_PEER_ROWS to its table of baselines. */
extern const tkb_svc_ops tkb_svc_test_wakeup; /* peers/wakeup.c */

#define TKB_TEST_PEER_ROWS                                                                         \
    {"test-wakeup-1s",                                                                             \
     "baseline",                                                                                   \
     "the heap's executor and a thread of its own that wakes once a second (tests only)",          \
     NULL,                                                                                         \
     &tkb_svc_test_wakeup,                                                                         \
     0,                                                                                            \
     NULL,                                                                                         \
     0,                                                                                            \
     false},
