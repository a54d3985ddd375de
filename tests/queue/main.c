/* SPDX-License-Identifier: MIT */
/* timerkit queue-contract suite: the program. Every built-in engine is
 * already registered; a program for an engine written elsewhere would call
 * tk_engine_register() first. */
#include "timerkit/testkit.h"

int main(int argc, char **argv) {
    return tk_queue_contract_main(argc, argv);
}
