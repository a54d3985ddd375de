/* SPDX-License-Identifier: MIT */
/* timerkit: the run-time version (timerkit/version.h, generated from the
 * project's version in CMakeLists.txt). */
#include "timerkit/version.h"

unsigned tk_version(void) {
    return TIMERKIT_VERSION_HEX;
}

const char *tk_version_string(void) {
    return TIMERKIT_VERSION_STRING;
}
