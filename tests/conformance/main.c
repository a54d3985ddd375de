/* SPDX-License-Identifier: MIT */
/* tk_conformance: the conformance suite on the engines of this library
 * (tk_conformance_main() in conformance.c). */
#include "timerkit/testkit.h"

int main(int argc, char **argv) {
    return tk_conformance_main(argc, argv);
}
