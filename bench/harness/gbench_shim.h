/* SPDX-License-Identifier: MIT */
/* tkbench: a small C API over Google Benchmark (1.7.1), so benchmark bodies are C.
 *
 * The C/C++ boundary is crossed once per batch of iterations, never once per
 * operation: a body asks tk_gb_next_batch() how many iterations to run, runs
 * them in a plain C loop, and asks again. Phase benchmarks (insert N, cancel
 * N...) run one iteration each (tk_gb_iterations(b, 1)) with manual time.
 *
 * Threads: registration and tk_gb_run() on the main thread only; the state
 * functions only from the body that received the state. */
#ifndef TKB_GBENCH_SHIM_H
#define TKB_GBENCH_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_gb_state tk_gb_state; /* a benchmark::State */
typedef struct tk_gb_bench tk_gb_bench; /* a registered benchmark family */

/* A benchmark body: called once per run (GB calls it several times while it
 * estimates the iteration count, and once per repetition). */
typedef void (*tk_gb_fn)(tk_gb_state *st, void *ctx);

/* Registers `fn(state, ctx)` under `name` (copied). Returns NULL on failure. */
tk_gb_bench *tk_gb_register(const char *name, tk_gb_fn fn, void *ctx);

/* Family settings (each returns nothing; call before tk_gb_run()). */
void tk_gb_args(tk_gb_bench *b, const int64_t *args, size_t count);       /* one argument tuple */
void tk_gb_range(tk_gb_bench *b, int64_t lo, int64_t hi, int multiplier); /* arg 0 sweep */
void tk_gb_iterations(tk_gb_bench *b, int64_t n);    /* exact count; excludes min_time */
void tk_gb_min_time(tk_gb_bench *b, double seconds); /* in code (1.7.1 has no "Xs" syntax) */
void tk_gb_repetitions(tk_gb_bench *b, int reps);
void tk_gb_manual_time(tk_gb_bench *b); /* the body reports time with tk_gb_set_iteration_time */

/* Argument `i` of the current instance. */
int64_t tk_gb_arg(const tk_gb_state *st, int i);

/* The batched keep-running loop. Stores in *n how many iterations to run now
 * (1..cap) and returns true, or returns false when the run is over (the GB
 * timer stops then). The timer runs from the first call to the last. */
bool tk_gb_next_batch(tk_gb_state *st, int64_t cap, int64_t *n);

/* The plain keep-running loop, for one-iteration phase benchmarks. */
bool tk_gb_keep_running(tk_gb_state *st);

/* Iterations the current run was asked to do (GB's max_iterations). */
int64_t tk_gb_max_iterations(const tk_gb_state *st);

void tk_gb_set_items_processed(tk_gb_state *st, int64_t items);
void tk_gb_set_iteration_time(tk_gb_state *st, double seconds); /* manual time */

/* Sets user counter `name` to `value` (reported as is, per run). */
void tk_gb_counter(tk_gb_state *st, const char *name, double value);

/* Marks the run failed; GB reports `msg` and skips the rest of it. */
void tk_gb_skip(tk_gb_state *st, const char *msg);
bool tk_gb_error_occurred(const tk_gb_state *st);

/* Runs every registered benchmark with the given GB flags (argv[0] is a
 * program name; e.g. --benchmark_out=FILE --benchmark_out_format=json).
 * Nothing is printed to stdout; failures go to stderr. Returns the number of
 * benchmarks run, or -1 if a flag was not understood. */
int tk_gb_run(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
