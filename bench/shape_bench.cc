// Cost of the shape algebra on the expressions a decoder-only LLM produces.
//
// Each Simplify/* case runs Analyzer::simplify on one expression over batch
// `b`, sequence `n` and KV-cache length `m` (declared ranges as in
// examples/shape_demo.cc); the target is well under 10 us per call. Then
// prove_equal, prove, upper_bound, evaluate and parse on typical inputs. The
// Baseline_* cases compute the same arithmetic on plain int64 values, so a
// report can give the ratio of symbolic to concrete work from the same run.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace {

using relax::Analyzer;
using relax::SymExpr;
using relax::SymVar;

/// The LLM's symbolic sizes with their declared ranges: batch, new and cached tokens,
/// head, lane within a head, layer.
struct Llm {
  SymVar b{"b"}, n{"n"}, m{"m"}, h{"h"}, d{"d"}, l{"l"};
  Analyzer analyzer;
  Llm() {
    analyzer.bind(b, 1, 64);
    analyzer.bind(n, 1, 4096);
    analyzer.bind(m, 0, 4096);
    analyzer.bind(h, 0, 31);
    analyzer.bind(d, 0, 127);
    analyzer.bind(l, 0, 31);
  }
};

/// Registers Simplify/<name>, simplifying the expression `make` builds from the LLM's
/// sizes; the label shows the expression and its simplified form.
template <typename Make>
void simplify_case(const std::string& name, Make make) {
  benchmark::RegisterBenchmark(("Simplify/" + name).c_str(), [make](benchmark::State& state) {
    Llm llm;
    const SymExpr e = make(llm);
    for (auto _ : state) benchmark::DoNotOptimize(llm.analyzer.simplify(e));
    state.SetLabel(e.to_string() + " -> " + llm.analyzer.simplify(e).to_string());
  });
}

[[maybe_unused]] const bool registered = [] {
  simplify_case("reshape_flat", [](Llm& x) { return x.b * x.n * 32 * 128; });
  simplify_case("reshape_nested", [](Llm& x) { return x.b * (x.n * 4096); });
  simplify_case("kv_bytes", [](Llm& x) { return (x.n + x.m) * x.b * 32 * 128 * 2; });
  simplify_case("padded_length", [](Llm& x) { return floordiv(x.n + 15, 16) * 16; });
  simplify_case("reshape_difference",
                [](Llm& x) { return x.b * x.n * 4096 - x.b * (x.n * 32) * 128; });
  simplify_case("attention_scores", [](Llm& x) { return x.b * 32 * x.n * (x.n + x.m); });
  simplify_case("head_index", [](Llm& x) { return floordiv(x.h * 128 + x.d, 64); });
  simplify_case("six_vars", [](Llm& x) { return (x.n + x.m) * x.b * x.l * x.h * x.d * 2; });
  // What schedules make (the rewrite rules at work): a vectorised lane's offset absorbed, a
  // tiled index split by a bounded remainder, a floordiv/floormod pair merged back.
  simplify_case("tile_offset", [](Llm& x) { return floordiv(x.h * 8 + 7, 16); });
  simplify_case("tile_remainder", [](Llm& x) { return floormod(x.h * 128 + x.d, 256); });
  simplify_case("divmod_merge", [](Llm& x) { return x.n - floordiv(x.n, 64) * 64 + x.m; });
  simplify_case("minmax_pair", [](Llm& x) { return min(x.n, x.m) + max(x.m, x.n); });
  return true;
}();

void ProveEqual_reshape(benchmark::State& state) {
  Llm x;
  const SymExpr a = x.b * x.n * 32 * 128, b = x.b * (x.n * 4096);
  for (auto _ : state) benchmark::DoNotOptimize(x.analyzer.prove_equal(a, b));
}
BENCHMARK(ProveEqual_reshape);

void Prove_padding(benchmark::State& state) {
  Llm x;
  const SymExpr claim = floordiv(x.n + 15, 16) * 16 >= x.n;
  for (auto _ : state) benchmark::DoNotOptimize(x.analyzer.prove(claim));
}
BENCHMARK(Prove_padding);

// A tail check of a tiled loop: the rules divide the common factor out.
void Prove_tile_in_bounds(benchmark::State& state) {
  Llm x;
  const SymExpr claim = x.h * 128 + x.d < (x.h + 1) * 128;
  for (auto _ : state) benchmark::DoNotOptimize(x.analyzer.prove(claim));
}
BENCHMARK(Prove_tile_in_bounds);

// A quotient against a constant, decided through its numerator's range.
void Prove_quotient_bound(benchmark::State& state) {
  Llm x;
  const SymExpr claim = floordiv(x.h * 128 + x.d, 64) < 64;
  for (auto _ : state) benchmark::DoNotOptimize(x.analyzer.prove(claim));
}
BENCHMARK(Prove_quotient_bound);

void UpperBound_kv_bytes(benchmark::State& state) {
  Llm x;
  const SymExpr bytes = x.b * 32 * (x.n + x.m) * 128 * 2;
  for (auto _ : state) benchmark::DoNotOptimize(x.analyzer.upper_bound(bytes));
}
BENCHMARK(UpperBound_kv_bytes);

/// (n + m) * b * l * h * d * 2 evaluated through relax::evaluate (Baseline_six_vars: native).
void Evaluate_six_vars(benchmark::State& state) {
  Llm x;
  const SymExpr e = (x.n + x.m) * x.b * x.l * x.h * x.d * 2;
  const relax::SymVarMap<int64_t> at = {{x.b, 8},  {x.n, 512}, {x.m, 1024},
                                        {x.l, 32}, {x.h, 32},  {x.d, 128}};
  for (auto _ : state) benchmark::DoNotOptimize(relax::evaluate(e, at));
}
BENCHMARK(Evaluate_six_vars);

void Parse_kv_bytes(benchmark::State& state) {
  const std::string text = "b * 32 * (n + m) * 128 * 2";
  for (auto _ : state) benchmark::DoNotOptimize(SymExpr::parse(text));
}
BENCHMARK(Parse_kv_bytes);

// Baselines: the same arithmetic on int64 values read from memory each time, so
// that the compiler cannot fold it away.

/// (n + m) * b * l * h * d * 2, the six-variable expression of Evaluate_six_vars.
void Baseline_six_vars(benchmark::State& state) {
  int64_t b = 8, n = 512, m = 1024, l = 32, h = 32, d = 128;
  for (auto _ : state) {
    benchmark::DoNotOptimize(b);
    benchmark::DoNotOptimize(n);
    benchmark::DoNotOptimize(m);
    benchmark::DoNotOptimize(l);
    benchmark::DoNotOptimize(h);
    benchmark::DoNotOptimize(d);
    benchmark::DoNotOptimize((n + m) * b * l * h * d * 2);
  }
}
BENCHMARK(Baseline_six_vars);

/// b * 32 * (n + m) * 128 * 2, the KV-cache size of Simplify/kv_bytes and UpperBound_kv_bytes.
void Baseline_kv_bytes(benchmark::State& state) {
  int64_t b = 8, n = 512, m = 1024;
  for (auto _ : state) {
    benchmark::DoNotOptimize(b);
    benchmark::DoNotOptimize(n);
    benchmark::DoNotOptimize(m);
    benchmark::DoNotOptimize(b * 32 * (n + m) * 128 * 2);
  }
}
BENCHMARK(Baseline_kv_bytes);

}  // namespace
