/* SPDX-License-Identifier: MIT */
/* The version has one source, project(VERSION) in CMakeLists.txt: the
 * generated macros, the run-time calls and the project's version (passed in as
 * TK_PROJECT_VERSION) must all say the same. */
#include <stdio.h>
#include <string.h>

#include "timerkit.h"

#ifndef TK_PROJECT_VERSION
#error "TK_PROJECT_VERSION: the project's version, from CMake"
#endif

int main(void) {
    int failed = 0;
    char text[32];
    snprintf(text, sizeof text, "%d.%d.%d", TIMERKIT_VERSION_MAJOR, TIMERKIT_VERSION_MINOR,
             TIMERKIT_VERSION_PATCH);
    if (strcmp(text, TK_PROJECT_VERSION) != 0 ||
        strcmp(TIMERKIT_VERSION_STRING, TK_PROJECT_VERSION) != 0) {
        fprintf(stderr, "macros say %s / %s, the project %s\n", text, TIMERKIT_VERSION_STRING,
                TK_PROJECT_VERSION);
        failed++;
    }
    if (tk_version() != TIMERKIT_VERSION_HEX ||
        tk_version() !=
            ((unsigned)TIMERKIT_VERSION_MAJOR << 16 | (unsigned)TIMERKIT_VERSION_MINOR << 8 |
             (unsigned)TIMERKIT_VERSION_PATCH)) {
        fprintf(stderr, "tk_version() = %#x, the macros %#x\n", tk_version(),
                (unsigned)TIMERKIT_VERSION_HEX);
        failed++;
    }
    if (tk_version_string() == NULL || strcmp(tk_version_string(), TK_PROJECT_VERSION) != 0) {
        fprintf(stderr, "tk_version_string() = %s, the project %s\n",
                tk_version_string() ? tk_version_string() : "(null)", TK_PROJECT_VERSION);
        failed++;
    }
    printf("timerkit %s (%#x): %s\n", tk_version_string(), tk_version(),
           failed ? "MISMATCH" : "one version everywhere");
    return failed != 0;
}
