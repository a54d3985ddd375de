/* SPDX-License-Identifier: MIT */
/* tkbench's command lines (bench/cli/cmdline.c): each subcommand is one
 * descriptor, its options one table; the getopt_long() parse, the
 * subcommand's --help and its usage errors are all made from them.
 *
 * A subcommand parses with
 *
 *     tkb_args a;
 *     tkb_args_start(&a, cmd, argc, argv);
 *     const char *v;
 *     for (int k; (k = tkb_args_next(&a, &v)) != TKB_ARGS_END;)
 *         switch (k) {
 *         case TKB_ARGS_HELP: return 0;          (the help is printed)
 *         case TKB_ARGS_BAD: return 2;           (the message is printed)
 *         case TKB_ARGS_POS: ... v is a positional argument
 *         case OPT_X: ... v is the value of opts[OPT_X] (NULL for a flag)
 *         }
 *
 * Options are long only, written `--name VALUE` or `--name=VALUE`, before,
 * between or after the positional arguments; `--` ends them. `-h` and
 * `--help` are every subcommand's. Exit statuses of tkbench: 0 done, 1 a
 * runtime failure, 2 a usage error (tkb_usage()). */
#ifndef TKB_CMDLINE_H
#define TKB_CMDLINE_H

#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One option. A table may serve several subcommands: `in` says which. */
typedef struct tkb_opt {
    const char *name; /* long name without the dashes ("out") */
    const char *arg;  /* what its value is, for the help ("DIR"); NULL: a flag, no value */
    const char *help; /* one line for --help; NULL: a hidden option (for tests) */
    unsigned in;      /* the subcommands that take it (their tkb_cmd.bit); 0: all */
} tkb_opt;

/* Most options one subcommand takes (a table's longer than this is a bug:
 * tkb_args_next() says so and returns TKB_ARGS_BAD). */
#define TKB_OPTS_MAX 24

/* One subcommand. */
typedef struct tkb_cmd {
    const char *name;     /* words after "tkbench": "run", "trace stats" */
    const char *synopsis; /* after the name in a usage line: "[options] TRACE..." */
    const char *summary;  /* what it does, one line (tkbench help) */
    const char *details;  /* paragraphs after the options in --help (newline-ended), or NULL */
    const char *example;  /* command lines for --help (newline-ended) */
    const tkb_opt *opts;  /* its option table (may be shared), or NULL */
    size_t nopts;
    unsigned bit; /* its bit in the table's `in` masks */
    /* Runs it: argv[0] is "tkbench", its options and arguments follow its
     * name's words. Returns the exit status. */
    int (*main)(const struct tkb_cmd *cmd, int argc, char **argv);
} tkb_cmd;

/* What tkb_args_next() returns besides an option's index in cmd->opts. */
enum {
    TKB_ARGS_END = -1,  /* no more arguments */
    TKB_ARGS_POS = -2,  /* a positional argument, in *value */
    TKB_ARGS_HELP = -3, /* -h or --help: the help is on stdout; exit 0 */
    TKB_ARGS_BAD = -4,  /* a usage error, said on stderr; exit 2 */
};

/* A parse in progress. getopt_long() keeps its state in globals (optind,
 * optarg, ...): one parse at a time, on the main thread; tkb_args_start()
 * resets them. The arguments are taken in order, argv is not reordered (its
 * words are recorded in a run's metadata as given). */
typedef struct tkb_args {
    const tkb_cmd *cmd;
    int argc;
    char **argv; /* argv of tkb_args_start() from the subcommand's last name word on */
    bool rest;   /* after `--`: every word is positional */
    bool bad;    /* the table could not be used (tkb_args_next(): TKB_ARGS_BAD) */
    struct option longopts[TKB_OPTS_MAX + 2]; /* the options of cmd, --help, the end */
} tkb_args;

/* Starts parsing cmd's options and arguments in argv (argv[0] "tkbench",
 * then the words of cmd->name, then the rest). */
void tkb_args_start(tkb_args *a, const tkb_cmd *cmd, int argc, char **argv);

/* The next option or argument: an index in cmd->opts (*value its value, NULL
 * for a flag), or a TKB_ARGS_* code (*value the argument for TKB_ARGS_POS). */
int tkb_args_next(tkb_args *a, const char **value);

/* The whole parse of a command whose options each keep one value: values[k]
 * (room for cmd->nopts; NULL for a command without options) gets option
 * k's value (a flag's is "", an option given twice keeps the last; NULL:
 * not given), pos[0..maxpos) the positional arguments in order and *npos
 * how many there were (more than maxpos are counted, not kept). Returns 0,
 * -1 (the help is printed: exit 0) or 2 (a usage error, said). */
int tkb_args_parse(const tkb_cmd *cmd, int argc, char **argv, const char **values, const char **pos,
                   size_t maxpos, size_t *npos);

/* Prints cmd's help (usage line, summary, options, details, example) to f. */
void tkb_cmd_help(const tkb_cmd *cmd, FILE *f);

/* Says a usage error on stderr: "tkbench NAME: <message>", cmd's usage line
 * and a hint to its --help (with cmd NULL: "tkbench: <message>" and a hint
 * to tkbench --help). Returns 2, the exit status of a usage error. */
int tkb_usage(const tkb_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tkb_vusage(const tkb_cmd *cmd, const char *fmt, va_list ap);
/* The same, then exit(2): for checks deep inside a command, where returning
 * the status up would only add noise. */
void tkb_die_usage(const tkb_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Runs `tkbench ...` with the subcommands in cmds: help, --help, help CMD,
 * CMD [options], and subcommands of two words ("trace stats"). Returns the
 * exit status. --version and internal entry points are main()'s. */
int tkb_cmd_dispatch(const tkb_cmd *const *cmds, size_t ncmds, int argc, char **argv);

#endif
