/* SPDX-License-Identifier: MIT */
// tkbench: the one C++ translation unit, a thin C API over Google Benchmark.
// See gbench_shim.h for the contract. Nothing here allocates or branches per
// operation: a batch is one call.
#include "gbench_shim.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

inline benchmark::State *S(tk_gb_state *st) {
    return reinterpret_cast<benchmark::State *>(st);
}
inline const benchmark::State *S(const tk_gb_state *st) {
    return reinterpret_cast<const benchmark::State *>(st);
}
inline benchmark::internal::Benchmark *B(tk_gb_bench *b) {
    return reinterpret_cast<benchmark::internal::Benchmark *>(b);
}

// Display reporter: silent on stdout (results go to files); errors to stderr.
class QuietReporter : public benchmark::BenchmarkReporter {
  public:
    bool ReportContext(const Context &) override {
        return true;
    }
    void ReportRuns(const std::vector<Run> &runs) override {
        for (const Run &r : runs)
            if (r.error_occurred)
                std::fprintf(stderr, "tkbench: %s: %s\n", r.benchmark_name().c_str(),
                             r.error_message.c_str());
    }
};

} // namespace

extern "C" {

tk_gb_bench *tk_gb_register(const char *name, tk_gb_fn fn, void *ctx) {
    if (name == nullptr || fn == nullptr)
        return nullptr;
    benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(
        name, [fn, ctx](benchmark::State &st) { fn(reinterpret_cast<tk_gb_state *>(&st), ctx); });
    if (b != nullptr)
        b->Unit(benchmark::kNanosecond);
    return reinterpret_cast<tk_gb_bench *>(b);
}

void tk_gb_args(tk_gb_bench *b, const int64_t *args, size_t count) {
    std::vector<int64_t> v(args, args + count);
    B(b)->Args(v);
}

void tk_gb_range(tk_gb_bench *b, int64_t lo, int64_t hi, int multiplier) {
    B(b)->RangeMultiplier(multiplier)->Range(lo, hi);
}

void tk_gb_iterations(tk_gb_bench *b, int64_t n) {
    B(b)->Iterations(n);
}

void tk_gb_min_time(tk_gb_bench *b, double seconds) {
    B(b)->MinTime(seconds);
}

void tk_gb_repetitions(tk_gb_bench *b, int reps) {
    B(b)->Repetitions(reps);
}

void tk_gb_manual_time(tk_gb_bench *b) {
    B(b)->UseManualTime();
}

int64_t tk_gb_arg(const tk_gb_state *st, int i) {
    return S(st)->range(static_cast<std::size_t>(i));
}

bool tk_gb_next_batch(tk_gb_state *st, int64_t cap, int64_t *n) {
    benchmark::State &s = *S(st);
    // iterations() counts what was handed out so far (0 before the start).
    int64_t remaining =
        static_cast<int64_t>(s.max_iterations) - static_cast<int64_t>(s.iterations());
    if (remaining <= 0 || cap <= 0) {
        // total_iterations_ is 0 now: this call stops the timer and ends the run.
        while (s.KeepRunningBatch(1)) {
        }
        *n = 0;
        return false;
    }
    int64_t k = std::min(remaining, cap);
    if (!s.KeepRunningBatch(k)) {
        *n = 0;
        return false;
    }
    *n = k;
    return true;
}

bool tk_gb_keep_running(tk_gb_state *st) {
    return S(st)->KeepRunning();
}

int64_t tk_gb_max_iterations(const tk_gb_state *st) {
    return static_cast<int64_t>(S(st)->max_iterations);
}

void tk_gb_set_items_processed(tk_gb_state *st, int64_t items) {
    S(st)->SetItemsProcessed(items);
}

void tk_gb_set_iteration_time(tk_gb_state *st, double seconds) {
    S(st)->SetIterationTime(seconds);
}

void tk_gb_counter(tk_gb_state *st, const char *name, double value) {
    S(st)->counters[name] = benchmark::Counter(value);
}

void tk_gb_skip(tk_gb_state *st, const char *msg) {
    S(st)->SkipWithError(msg);
}

bool tk_gb_error_occurred(const tk_gb_state *st) {
    return S(st)->error_occurred();
}

int tk_gb_run(int argc, char **argv) {
    std::vector<char *> args(argv, argv + argc);
    int n = argc;
    benchmark::Initialize(&n, args.data());
    if (benchmark::ReportUnrecognizedArguments(n, args.data()))
        return -1;
    QuietReporter quiet;
    std::size_t ran = benchmark::RunSpecifiedBenchmarks(&quiet);
    benchmark::Shutdown();
    return static_cast<int>(ran);
}

} // extern "C"
