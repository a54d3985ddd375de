/* SPDX-License-Identifier: MIT */
/* Workloads that exist only in the test build of tkbench (tkbench_test):
 * bench/workloads/workloads.c includes this file through TKB_TEST_WORKLOADS and adds
 * each X(id) to the table, after the real ones. */
#define TKB_TEST_WORKLOAD_LIST(X) X(w9_demo)
