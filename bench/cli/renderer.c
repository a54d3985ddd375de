/* SPDX-License-Identifier: MIT */
/* tkbench: running the renderer, plots/render.py, for `plot`, `compare` and
 * `trace stats`; and what they check of a folder first. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "datadir.h"

extern char **environ;

bool tkb_is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int tkb_ensure_manifest(const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (access(path, F_OK) == 0)
        return 0;
    fprintf(stderr, "tkbench: %s has no manifest.json (an older tkbench wrote it): writing one\n",
            dir);
    return tkb_manifest_synthesize(dir, false);
}

/* The renderer's command line in argv (room for 72): plots/render.py of the
 * data folder (datadir.h: the installed tree, or the source tree this
 * tkbench was built from), run by Debian's python3 where it is
 * (/usr/bin/python3), else python3 from PATH, then args. script: room for
 * PATH_MAX. Returns 0, or 1 if the script is not there (said on stderr). */
static int renderer_argv(char **args, char *script, char **argv) {
    snprintf(script, PATH_MAX, "%s/plots/render.py", tkb_data_dir());
    if (access(script, R_OK) != 0) {
        fprintf(stderr,
                "tkbench: %s not found (%s). The renderer lives in plots/ of the source tree "
                "or of the installed share/timerkit (TKBENCH_DATA_DIR names another).\n",
                script, strerror(errno));
        return 1;
    }
    int k = 0;
    argv[k++] = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    argv[k++] = script;
    for (int i = 0; args[i] && k < 71; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    fflush(NULL);
    return 0;
}

static void say_no_python(const char *py, int err) {
    fprintf(stderr, "tkbench: cannot run %s: %s (Debian: apt-get install python3)\n", py,
            strerror(err));
}

int tkb_renderer_exec(char **args) {
    char script[PATH_MAX], *argv[72];
    if (renderer_argv(args, script, argv) != 0)
        return 1;
    execvp(argv[0], argv);
    say_no_python(argv[0], errno);
    return 1;
}

int tkb_renderer_run(char **args) {
    char script[PATH_MAX], *argv[72];
    if (renderer_argv(args, script, argv) != 0)
        return 1;
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        say_no_python(argv[0], rc);
        return 1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    fprintf(stderr, "tkbench: the renderer (%s %s) failed\n", script, args[0]);
    return 1;
}
