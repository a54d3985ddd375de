/* SPDX-License-Identifier: MIT */
/* timerkit test kit: the runner both suites share (suite-runner.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite-runner.h"

/* ---- the command line ------------------------------------------------------------ */

typedef struct kit_args {
    const char *prog;
    const char **engines; /* the --engine names; every registered engine if none */
    size_t nengines;
    const char *filter; /* --filter, or NULL */
    bool list;          /* --list */
    bool list_engines;  /* --list-engines */
} kit_args;

static int usage(const char *prog) {
    fprintf(stderr, "usage: %s [--engine NAME]... [--filter GLOB] [--list] | --list-engines\n",
            prog);
    return 2;
}

/* Returns 0, 1 when out of memory, or 2 (after the usage) for bad usage. */
static int parse_args(int argc, char **argv, kit_args *a) {
    memset(a, 0, sizeof(*a));
    a->prog = argc > 0 ? argv[0] : "tk_suite";
    a->engines = calloc((size_t)argc + tk_engine_count() + 1, sizeof(*a->engines));
    if (a->engines == NULL)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--engine") == 0 && i + 1 < argc)
            a->engines[a->nengines++] = argv[++i];
        else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
            a->filter = argv[++i];
        else if (strcmp(argv[i], "--list") == 0)
            a->list = true;
        else if (strcmp(argv[i], "--list-engines") == 0 && argc == 2)
            a->list_engines = true;
        else
            return usage(a->prog);
    }
    if (a->nengines == 0)
        for (size_t e = 0; e < tk_engine_count(); e++)
            a->engines[a->nengines++] = tk_engine_at(e)->name;
    return 0;
}

/* ---- the tests: one per (engine, case) --------------------------------------------- */

typedef struct kit_plan {
    char *engines; /* nengines fixtures of engine_size bytes */
    kit_test *refs;
    struct CMUnitTest *tests;
    char **names; /* "ENGINE: case name" */
    size_t n;
} kit_plan;

static const void *case_at(const kit_suite *s, const kit_group *g, size_t i) {
    return (const char *)g->cases + i * s->case_size;
}

static const char *case_name(const void *c) {
    return *(const char *const *)c;
}

static size_t case_count(const kit_suite *s) {
    size_t n = 0;
    for (size_t g = 0; g < s->ngroups; g++)
        n += *s->groups[g].count;
    return n;
}

/* Adds every case of the suite on one engine. Returns 0, or 1 when out of
 * memory. */
static int plan_engine(const kit_suite *s, const tk_queue_ops *ops, void *engine, kit_plan *p) {
    s->engine_init(ops, engine);
    for (size_t g = 0; g < s->ngroups; g++) {
        for (size_t i = 0; i < *s->groups[g].count; i++) {
            const void *c = case_at(s, &s->groups[g], i);
            size_t len = strlen(ops->name) + strlen(case_name(c)) + 3;
            char *name = malloc(len);
            if (name == NULL)
                return 1;
            snprintf(name, len, "%s: %s", ops->name, case_name(c));
            p->names[p->n] = name;
            p->refs[p->n] = (kit_test){engine, c};
            p->tests[p->n] = (struct CMUnitTest){.name = name,
                                                 .test_func = s->run,
                                                 .setup_func = s->setup,
                                                 .teardown_func = s->teardown,
                                                 .initial_state = &p->refs[p->n]};
            p->n++;
        }
    }
    return 0;
}

/* Returns 0, 1 when out of memory, or 2 for an unknown engine. */
static int plan_tests(const kit_suite *s, const kit_args *a, kit_plan *p) {
    size_t max = a->nengines * case_count(s) + 1;
    memset(p, 0, sizeof(*p));
    p->engines = calloc(a->nengines + 1, s->engine_size);
    p->refs = calloc(max, sizeof(*p->refs));
    p->tests = calloc(max, sizeof(*p->tests));
    p->names = calloc(max, sizeof(*p->names));
    if (p->engines == NULL || p->refs == NULL || p->tests == NULL || p->names == NULL)
        return 1;
    for (size_t e = 0; e < a->nengines; e++) {
        const tk_queue_ops *ops = tk_engine_by_name(a->engines[e]);
        if (ops == NULL) {
            fprintf(stderr, "%s: no engine named '%s'\n", a->prog, a->engines[e]);
            return 2;
        }
        if (plan_engine(s, ops, p->engines + e * s->engine_size, p) != 0)
            return 1;
    }
    return 0;
}

static void plan_free(kit_plan *p) {
    for (size_t i = 0; i < p->n; i++)
        free(p->names[i]);
    free(p->names);
    free(p->tests);
    free(p->refs);
    free(p->engines);
}

/* ---- the runner ---------------------------------------------------------------------- */

int kit_suite_main(const kit_suite *s, int argc, char **argv) {
    kit_args a;
    kit_plan p;
    memset(&p, 0, sizeof(p));
    int rc = parse_args(argc, argv, &a);
    if (rc == 0 && a.list_engines) {
        for (size_t e = 0; e < tk_engine_count(); e++)
            printf("%s\n", tk_engine_at(e)->name);
    } else if (rc == 0 && (rc = plan_tests(s, &a, &p)) == 0) {
        if (a.list) {
            for (size_t i = 0; i < p.n; i++)
                printf("%s\n", p.tests[i].name);
        } else {
            if (a.filter != NULL)
                cmocka_set_test_filter(a.filter);
            rc = _cmocka_run_group_tests(s->name, p.tests, p.n, NULL, NULL);
        }
    }
    plan_free(&p);
    free(a.engines);
    return rc;
}
