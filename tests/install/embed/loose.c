/* SPDX-License-Identifier: MIT */
/* Compiles under the embedding project's own flags; under timerkit's
 * (-Wall -Wextra -Wshadow -Werror) it would not: an unused parameter and a
 * shadowed local. */
int tk_embed_loose(int unused) {
    int v = 1;
    {
        int v = 2;
        return v;
    }
}
