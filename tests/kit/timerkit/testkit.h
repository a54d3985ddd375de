/* SPDX-License-Identifier: MIT */
/* timerkit test kit: the suites every engine passes, for an engine written
 * outside the library (in this tree: tests/conformance/ and tests/queue/).
 *
 * Installed with the library when it is built with its tests (CMake target
 * timerkit::testkit, which needs cmocka). Register the engine with
 * tk_engine_register() (timerkit/engine.h), then hand the command line to a
 * suite; docs/engines.md, "Testing an engine", shows a whole program:
 *
 *     int main(int argc, char **argv) {
 *         if (tk_engine_register(&my_engine, NULL, 0) != TK_OK)
 *             return 2;
 *         return tk_conformance_main(argc, argv);   // --engine mine
 *     }
 *
 * Both suites take [--engine NAME]... [--filter GLOB] [--list]; with no
 * --engine they run every registered engine. --list-engines, alone, prints
 * the registered engines' names and returns 0. They return 0 when every case
 * passed, the number of failed cases otherwise, and 2 for bad usage or an
 * unknown engine. */
#ifndef TIMERKIT_TESTKIT_H
#define TIMERKIT_TESTKIT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The executor conformance suite: every case of the executor's contract
 * (order, never early, periodic tasks, cancel, shutdown, rejection, hooks,
 * futures, allocation failure, embedded timers), run through tk_executor_*
 * on each engine. */
int tk_conformance_main(int argc, char **argv);

/* The queue-contract suite: the blocking queue contract of timerkit/queue.h
 * (offer, take, poll, remove, drain, close, take_batch, the pending limit,
 * spinning, concurrent use), run through the engine's tk_queue_ops. Cases
 * that a capability decides (exact order, deferred release, the pending
 * limit) follow the engine's caps. */
int tk_queue_contract_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
