/* SPDX-License-Identifier: MIT */
/* tkbench's command lines: getopt_long() over a subcommand's option table,
 * its --help and its usage errors, made from its descriptor (cmdline.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmdline.h"

/* getopt_long() returns an option of the table as TKB_OPT_VAL + its index:
 * above every character, so never taken for a short option. */
#define TKB_OPT_VAL 0x100

/* The number of words of a subcommand's name ("trace stats": 2). */
static int name_words(const char *name) {
    int n = 1;
    for (const char *p = name; *p; p++)
        n += *p == ' ';
    return n;
}

static bool takes(const tkb_cmd *cmd, size_t i) {
    return cmd->opts[i].in == 0 || (cmd->opts[i].in & cmd->bit) != 0;
}

/* The usage error of a subcommand or group `name` ("tkbench" alone if NULL),
 * with the usage line `synopsis` if not NULL. */
static int vusage(const char *name, const char *synopsis, const char *fmt, va_list ap) {
    fprintf(stderr, "tkbench%s%s: ", name ? " " : "", name ? name : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    if (synopsis != NULL)
        fprintf(stderr, "usage: tkbench %s %s\n", name, synopsis);
    fprintf(stderr, "(try 'tkbench%s%s --help')\n", name ? " " : "", name ? name : "");
    return 2;
}

int tkb_vusage(const tkb_cmd *cmd, const char *fmt, va_list ap) {
    return vusage(cmd ? cmd->name : NULL, cmd ? cmd->synopsis : NULL, fmt, ap);
}

int tkb_usage(const tkb_cmd *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = tkb_vusage(cmd, fmt, ap);
    va_end(ap);
    return rc;
}

void tkb_die_usage(const tkb_cmd *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tkb_vusage(cmd, fmt, ap);
    va_end(ap);
    exit(2);
}

static int group_usage(const char *group, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int group_usage(const char *group, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = vusage(group, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

void tkb_args_start(tkb_args *a, const tkb_cmd *cmd, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    int words = name_words(cmd->name);
    if (argc <= words) { /* not reached by the dispatcher: nothing to parse */
        a->bad = true;
        return;
    }
    a->argc = argc - words;
    a->argv = argv + words;
    size_t n = 0;
    for (size_t i = 0; i < cmd->nopts; i++) {
        if (!takes(cmd, i))
            continue;
        if (n == TKB_OPTS_MAX) {
            a->bad = true;
            return;
        }
        a->longopts[n++] =
            (struct option){cmd->opts[i].name, cmd->opts[i].arg ? required_argument : no_argument,
                            NULL, TKB_OPT_VAL + (int)i};
    }
    a->longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    a->longopts[n] = (struct option){NULL, 0, NULL, 0};
    /* getopt_long()'s state is global: start it afresh (0: reinitialise) */
    optind = 0;
    opterr = 0;
}

/* The options of a->cmd whose name starts with the n bytes of `word`. */
static size_t prefixed(const tkb_args *a, const char *word, size_t n, char *list, size_t len) {
    size_t count = 0, k = 0;
    list[0] = '\0';
    for (const struct option *o = a->longopts; o->name != NULL; o++)
        if (strncmp(o->name, word, n) == 0) {
            k += (size_t)snprintf(list + k, k < len ? len - k : 0, "%s--%s", count ? ", " : "",
                                  o->name);
            count++;
        }
    return count;
}

int tkb_args_next(tkb_args *a, const char **value) {
    const tkb_cmd *cmd = a->cmd;
    *value = NULL;
    if (a->bad) {
        tkb_usage(cmd, "internal: more than %d options, or no arguments", TKB_OPTS_MAX);
        return TKB_ARGS_BAD;
    }
    if (a->rest) {
        if (optind >= a->argc)
            return TKB_ARGS_END;
        *value = a->argv[optind++];
        return TKB_ARGS_POS;
    }
    /* "-": positional arguments come back in order (as 1), argv is not
     * permuted; ":": a missing value is ':', not '?' */
    int c = getopt_long(a->argc, a->argv, "-:h", a->longopts, NULL);
    if (c == -1) {
        if (optind >= a->argc)
            return TKB_ARGS_END;
        a->rest = true; /* after "--" */
        return tkb_args_next(a, value);
    }
    if (c == 1) {
        *value = optarg;
        return TKB_ARGS_POS;
    }
    if (c == 'h') {
        tkb_cmd_help(cmd, stdout);
        return TKB_ARGS_HELP;
    }
    if (c >= TKB_OPT_VAL) {
        *value = optarg;
        return c - TKB_OPT_VAL;
    }
    const tkb_opt *o = optopt >= TKB_OPT_VAL ? &cmd->opts[optopt - TKB_OPT_VAL] : NULL;
    if (c == ':' && o != NULL)
        tkb_usage(cmd, "--%s needs a value (%s)", o->name, o->arg);
    else if (c == ':')
        tkb_usage(cmd, "an option needs a value");
    else if (o != NULL)
        tkb_usage(cmd, "--%s takes no value", o->name);
    else if (optopt != 0)
        tkb_usage(cmd, "unknown option '-%c'", optopt);
    else {
        /* an unknown long option, or the start of more than one */
        const char *word = optind > 0 && optind <= a->argc ? a->argv[optind - 1] : "?";
        const char *name = strncmp(word, "--", 2) == 0 ? word + 2 : word;
        size_t n = strcspn(name, "=");
        char list[256];
        if (n > 0 && prefixed(a, name, n, list, sizeof list) > 1)
            tkb_usage(cmd, "ambiguous option '--%.*s' (%s)", (int)n, name, list);
        else
            tkb_usage(cmd, "unknown option '--%.*s'", (int)n, name);
    }
    return TKB_ARGS_BAD;
}

int tkb_args_parse(const tkb_cmd *cmd, int argc, char **argv, const char **values, const char **pos,
                   size_t maxpos, size_t *npos) {
    tkb_args a;
    tkb_args_start(&a, cmd, argc, argv);
    *npos = 0;
    const char *v;
    for (int k; (k = tkb_args_next(&a, &v)) != TKB_ARGS_END;) {
        if (k == TKB_ARGS_HELP)
            return -1;
        if (k == TKB_ARGS_BAD)
            return 2;
        if (k == TKB_ARGS_POS && *npos < maxpos)
            pos[*npos] = v;
        if (k == TKB_ARGS_POS)
            ++*npos;
        else
            values[k] = v != NULL ? v : "";
    }
    return 0;
}

void tkb_cmd_help(const tkb_cmd *cmd, FILE *f) {
    fprintf(f, "usage: tkbench %s %s\n%s\n", cmd->name, cmd->synopsis, cmd->summary);
    /* the options, their help in a column after the widest (up to 24) */
    int width = 10; /* "-h, --help" */
    for (size_t i = 0; i < cmd->nopts; i++)
        if (takes(cmd, i) && cmd->opts[i].help != NULL) {
            const tkb_opt *o = &cmd->opts[i];
            int w = 2 + (int)strlen(o->name) + (o->arg ? 1 + (int)strlen(o->arg) : 0);
            if (w > width && w <= 24)
                width = w;
        }
    fprintf(f, "\noptions (a value as --name VALUE or --name=VALUE):\n");
    for (size_t i = 0; i < cmd->nopts; i++) {
        const tkb_opt *o = &cmd->opts[i];
        if (!takes(cmd, i) || o->help == NULL)
            continue;
        char head[128];
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        if ((int)strlen(head) > width)
            fprintf(f, "  %s\n  %-*s  %s\n", head, width, "", o->help);
        else
            fprintf(f, "  %-*s  %s\n", width, head, o->help);
    }
    fprintf(f, "  %-*s  %s\n", width, "-h, --help", "print this help and exit");
    if (cmd->details != NULL)
        fprintf(f, "\n%s", cmd->details);
    if (cmd->example != NULL) {
        fprintf(f, "\nexample:\n");
        for (const char *p = cmd->example; *p;) {
            size_t l = strcspn(p, "\n");
            fprintf(f, "  %.*s\n", (int)l, p);
            p += l + (p[l] == '\n');
        }
    }
}

/* ---- the subcommands ----------------------------------------------------------------------- */

/* Does cmd's name start with the words argv[0..]? Returns how many it has
 * (all its words matched), or 0. */
static int matches(const tkb_cmd *cmd, int argc, char **argv) {
    int words = name_words(cmd->name);
    const char *p = cmd->name;
    for (int w = 0; w < words; w++) {
        size_t l = strcspn(p, " ");
        if (w >= argc || strlen(argv[w]) != l || strncmp(argv[w], p, l) != 0)
            return 0;
        p += l + (p[l] == ' ');
    }
    return words;
}

/* Is `word` the first word of a subcommand of more than one word ("trace")? */
static bool is_group(const tkb_cmd *const *cmds, size_t n, const char *word) {
    size_t l = strlen(word);
    for (size_t i = 0; i < n; i++)
        if (strncmp(cmds[i]->name, word, l) == 0 && cmds[i]->name[l] == ' ')
            return true;
    return false;
}

/* The subcommands of a group, "convert or stats", into buf. */
static const char *group_members(const tkb_cmd *const *cmds, size_t n, const char *group, char *buf,
                                 size_t len) {
    size_t l = strlen(group), k = 0, count = 0, total = 0;
    for (size_t i = 0; i < n; i++)
        total += strncmp(cmds[i]->name, group, l) == 0 && cmds[i]->name[l] == ' ';
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (strncmp(cmds[i]->name, group, l) == 0 && cmds[i]->name[l] == ' ') {
            count++;
            const char *sep = count == 1 ? "" : count == total ? " or " : ", ";
            k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%s", sep,
                                  cmds[i]->name + l + 1);
        }
    return buf;
}

static void general_help(const tkb_cmd *const *cmds, size_t n, FILE *f) {
    int width = 0;
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(cmds[i]->name) > width)
            width = (int)strlen(cmds[i]->name);
    fprintf(f, "usage: tkbench COMMAND [options] [arguments]\n"
               "       tkbench help [COMMAND]     the help of a command, as tkbench COMMAND "
               "--help\n"
               "       tkbench --version\n"
               "\ncommands:\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-*s  %s\n", width, cmds[i]->name, cmds[i]->summary);
    fprintf(f, "\nOptions take their value as --name VALUE or --name=VALUE, before or after the\n"
               "arguments. Exit status: 0 done, 1 a run or an output failed, 2 a usage error.\n");
}

/* Prints the help of every subcommand of `group`. */
static void group_help(const tkb_cmd *const *cmds, size_t n, const char *group, FILE *f) {
    size_t l = strlen(group);
    bool first = true;
    for (size_t i = 0; i < n; i++)
        if (strncmp(cmds[i]->name, group, l) == 0 && cmds[i]->name[l] == ' ') {
            if (!first)
                fputc('\n', f);
            tkb_cmd_help(cmds[i], f);
            first = false;
        }
}

int tkb_cmd_dispatch(const tkb_cmd *const *cmds, size_t n, int argc, char **argv) {
    if (cmds == NULL || argv == NULL)
        return 2;
    char names[512];
    if (argc < 2) {
        size_t k = 0;
        names[0] = '\0';
        for (size_t i = 0; i < n; i++)
            k += (size_t)snprintf(names + k, k < sizeof names ? sizeof names - k : 0, "%s%s",
                                  i ? ", " : "", cmds[i]->name);
        return tkb_usage(NULL, "no command given (commands: %s)", names);
    }
    bool help = strcmp(argv[1], "help") == 0;
    if (argc == 2 && (help || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        general_help(cmds, n, stdout);
        return 0;
    }
    int first = help ? 2 : 1; /* the command's first word */
    for (size_t i = 0; i < n; i++) {
        int words = matches(cmds[i], argc - first, argv + first);
        if (words == 0)
            continue;
        if (!help)
            return cmds[i]->main(cmds[i], argc, argv);
        if (first + words != argc)
            return tkb_usage(NULL, "help: one command at a time, got '%s'", argv[first + words]);
        tkb_cmd_help(cmds[i], stdout);
        return 0;
    }
    const char *w = argv[first];
    if (is_group(cmds, n, w)) {
        const char *sub = first + 1 < argc ? argv[first + 1] : NULL;
        if (help && sub == NULL) {
            group_help(cmds, n, w, stdout);
            return 0;
        }
        if (!help && sub != NULL && (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) &&
            first + 2 == argc) {
            group_help(cmds, n, w, stdout);
            return 0;
        }
        group_members(cmds, n, w, names, sizeof names);
        if (sub == NULL)
            return group_usage(w, "which subcommand? (%s)", names);
        return group_usage(w, "unknown subcommand '%s' (%s)", sub, names);
    }
    return tkb_usage(NULL, "%sunknown command '%s'", help ? "help: " : "", w);
}
