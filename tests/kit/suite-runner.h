/* SPDX-License-Identifier: MIT */
/* timerkit test kit: the runner that both suites share, behind
 * tk_conformance_main() and tk_queue_contract_main() (timerkit/testkit.h).
 *
 * A suite is a list of groups, each a table of cases defined in its own
 * file; the suite's header lists its groups once, as an X-macro
 * (CONF_GROUPS in tests/conformance/conformance.h, QC_GROUPS in
 * tests/queue/queue-contract.h). The runner makes one cmocka test per
 * (engine, case), named "ENGINE: case name", and runs them as one cmocka
 * group. The command line, the same for both suites:
 *
 *   PROG [--engine NAME]... [--filter GLOB] [--list] | --list-engines
 *
 * With no --engine, every registered engine runs every case; an engine
 * registered with tk_engine_register() before the call is found by name
 * like a built-in one. --filter is cmocka's test filter on the full test
 * name; --list prints the test names instead of running them;
 * --list-engines, alone, prints the registered engines' names. Returns 0
 * when every case passed (or after a listing), the number of failed cases
 * otherwise, 2 for bad usage or an unknown engine, 1 when out of memory.
 */
#ifndef TK_SUITE_RUNNER_H
#define TK_SUITE_RUNNER_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "timerkit.h"

/* A group's table of cases, of the suite's case type: defined in the
 * group's file (through the suite's own macro, CONF_TABLE or QC_TABLE),
 * declared in the suite's header and referred to by the suite's runner. */
#define KIT_TABLE_DECLARE(type, table)                                                             \
    extern const type table[];                                                                     \
    extern const size_t table##_count;
#define KIT_TABLE_DEFINE(type, table, ...)                                                         \
    const type table[] = {__VA_ARGS__};                                                            \
    const size_t table##_count = sizeof(table) / sizeof(table[0])
/* One element of a suite's kit_group array. */
#define KIT_GROUP(table) {table, &table##_count},

/* One group of a suite. */
typedef struct kit_group {
    const void *cases;   /* the table's first case */
    const size_t *count; /* the table's length */
} kit_group;

/* What a cmocka test's initial state points at when its setup runs. */
typedef struct kit_test {
    const void *engine; /* the suite's fixture for the engine the case runs on */
    const void *c;      /* the case: an element of a group's table */
} kit_test;

/* A suite, as the runner sees it. */
typedef struct kit_suite {
    const char *name; /* the cmocka group: "conformance", "queue_contract" */
    const kit_group *groups;
    size_t ngroups;
    size_t case_size;   /* sizeof the suite's case type, whose first member is
                           its name (const char *): a behaviour */
    size_t engine_size; /* sizeof the suite's per-engine fixture */
    /* Fills the fixture (engine_size bytes, zeroed) for one engine. */
    void (*engine_init)(const tk_queue_ops *ops, void *engine);
    CMFixtureFunction setup; /* finds its kit_test in *state and replaces it */
    CMUnitTestFunction run;  /* runs the case that setup recorded */
    CMFixtureFunction teardown;
} kit_suite;

/* Runs the suite as the command line says (the usage above). */
int kit_suite_main(const kit_suite *s, int argc, char **argv);

#endif
