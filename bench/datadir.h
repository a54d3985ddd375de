/* SPDX-License-Identifier: MIT */
/* Where tkbench finds the files it reads besides its arguments: plots/ (the
 * renderer, plots/render.py, and its style, plots/style.gp) and
 * bench/traces/ (the suites' default trace). */
#ifndef TKB_DATADIR_H
#define TKB_DATADIR_H

/* The folder that holds plots/ and bench/traces/, in this order:
 *   - $TKBENCH_DATA_DIR, when set and not empty;
 *   - the installed tree: <prefix>/share/timerkit when this tkbench runs from
 *     <prefix>/bin and that folder holds plots/render.py (cmake --install);
 *   - the source tree it was built from (a tkbench of a build folder).
 * Never NULL. Decided once, on the first call (the CLI's main thread). */
const char *tkb_data_dir(void);

#endif
