/* SPDX-License-Identifier: MIT */
/* Runs timerkit's test kit on the example engine, from outside the tree:
 *
 *   example_engine conformance [--filter GLOB] [--list]
 *   example_engine contract [--filter GLOB] [--list]
 *   example_engine demo
 *
 * The engine is registered first. `conformance` runs the executor
 * conformance suite on it (and on it only), `contract` the queue-contract
 * suite; `demo` builds an executor on the engine from a spec string and runs
 * a few tasks. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <timerkit.h>
#include <timerkit/testkit.h>

#include "list-engine.h"

static int say(tk_run *run, void *arg) {
    (void)run;
    puts((const char *)arg);
    return 0;
}

static int demo(void) {
    const tk_queue_ops *engine = NULL;
    tk_queue_config cfg;
    char err[160];
    int rc = tk_queue_config_parse("example_list:grain=1ms", &engine, &cfg, err, sizeof(err));
    if (rc != TK_OK) {
        fprintf(stderr, "spec: %s\n", err);
        return 1;
    }
    char canonical[128];
    tk_queue_config_format(engine, &cfg, canonical, sizeof(canonical));
    printf("engine %s\n", canonical);
    tk_executor_options opt;
    tk_executor_options_init(&opt);
    opt.engine = engine;
    opt.engine_config = &cfg;
    tk_executor *ex = NULL;
    if ((rc = tk_executor_create(&opt, &ex)) != TK_OK) {
        fprintf(stderr, "create: %s\n", tk_strerror(rc));
        return 1;
    }
    tk_executor_schedule(ex, say, "third, at 30 ms", 30 * TK_NS_PER_MS, NULL);
    tk_executor_schedule(ex, say, "first, at 10 ms", 10 * TK_NS_PER_MS, NULL);
    tk_executor_schedule(ex, say, "second, at 20 ms", 20 * TK_NS_PER_MS, NULL);
    tk_executor_shutdown(ex); /* delayed tasks still run */
    tk_executor_await_termination(ex, -1);
    tk_executor_destroy(ex);
    return 0;
}

int main(int argc, char **argv) {
    char err[200];
    if (tk_engine_register(&example_list_engine, err, sizeof(err)) != TK_OK) {
        fprintf(stderr, "register: %s\n", err);
        return 2;
    }
    if (argc >= 2 && strcmp(argv[1], "demo") == 0)
        return demo();
    bool conformance = argc >= 2 && strcmp(argv[1], "conformance") == 0;
    if (conformance || (argc >= 2 && strcmp(argv[1], "contract") == 0)) {
        /* the suite sees: PROG --engine example_list [the rest] */
        char *args[64];
        int n = 0;
        args[n++] = argv[0];
        args[n++] = "--engine";
        args[n++] = (char *)example_list_engine.name;
        for (int i = 2; i < argc && n < 63; i++)
            args[n++] = argv[i];
        args[n] = NULL;
        return conformance ? tk_conformance_main(n, args) : tk_queue_contract_main(n, args);
    }
    fprintf(stderr, "usage: %s conformance|contract [--filter GLOB] [--list] | demo\n", argv[0]);
    return 2;
}
