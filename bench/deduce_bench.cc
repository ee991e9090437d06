// Cost of deduction per binding as a function grows.
//
// Each case builds one graph function through the builder (every emit
// normalises its value and deduces its annotation at once) and then the
// module (build(), with its checks): a chain of `bindings` bindings over
// symbolic batch `b` and sequence `n`, cycling through add, multiply, exp,
// matmul with a weight, reshape, permute_dims, sum with keepdims and a
// broadcasting add, so that every dim stays a small expression of b and n and
// each binding's deduction sees the same kind of input however long the chain
// is. BuildChain times emitting, build() and the module's teardown; EmitChain
// only the emits (each one's normalisation and deduction). The per_binding
// counter is the CPU time per binding: flat across 1,000, 10,000 and 100,000
// bindings means deduction costs work independent of the program's size
// (nothing rescans earlier bindings).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "relax/ir/builder.h"
#include "relax/ir/ops.h"

namespace {

using relax::DataType;
using relax::Expr;
using relax::SymExpr;
using relax::SymVar;
using relax::Var;

constexpr int kBindingsPerCycle = 10;

/// Builds @main with at least `bindings` bindings; aborts the benchmark on a builder error.
/// With `emit_only`, the timer runs only while the bindings are emitted (not for
/// build() and the teardown of the module).
int64_t build_chain(benchmark::State& state, int64_t bindings, bool emit_only) {
  relax::ModuleBuilder mb;
  SymVar b("b"), n("n");
  auto f = mb.function("main");
  Var x = f.param("x", relax::tensor_sinfo({b, n, 64}, DataType::float32()));
  Var w = f.param("w", relax::tensor_sinfo({64, 64}, DataType::float32()));
  f.upper_bound(n, 4096);
  int64_t emitted = 0;
  Var out;
  {
    auto df = f.dataflow();
    Var cur = x;
    while (emitted < bindings) {
      Var a = f.emit(relax::op::add(cur, cur));
      Var m = f.emit(relax::op::multiply(a, cur));
      Var e = f.emit(relax::op::exp(m));
      Var mm = f.emit(relax::op::matmul(e, w));
      Var r = f.emit(relax::op::reshape(mm, std::vector<SymExpr>{b, n * 4, 16}));
      Var p = f.emit(relax::op::permute_dims(r, std::vector<int64_t>{0, 2, 1}));
      Var q = f.emit(relax::op::permute_dims(p, std::vector<int64_t>{0, 2, 1}));
      Var back = f.emit(relax::op::reshape(q, std::vector<SymExpr>{b, n, 64}));
      Var s = f.emit(relax::op::sum(back, std::vector<int64_t>{2}, /*keepdims=*/true));
      emitted += kBindingsPerCycle;
      if (emitted >= bindings) {
        out = f.emit_output(relax::op::add(back, s));
      } else {
        cur = f.emit(relax::op::add(back, s));
      }
    }
  }
  f.ret(out);
  if (emit_only) state.PauseTiming();
  {
    absl::StatusOr<relax::IRModule> mod = mb.build();
    if (!mod.ok()) state.SkipWithError(std::string(mod.status().message()).c_str());
    benchmark::DoNotOptimize(mod);
  }
  return emitted;
}

void report(benchmark::State& state, int64_t bindings) {
  state.SetItemsProcessed(state.iterations() * bindings);
  state.counters["bindings"] = static_cast<double>(bindings);
  // Seconds per binding (the inverse of the binding rate).
  state.counters["per_binding"] = benchmark::Counter(
      static_cast<double>(bindings), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

/// Emitting (deduction included), build() and tearing the module down.
void BM_BuildChain(benchmark::State& state) {
  int64_t bindings = 0;
  for (auto _ : state) bindings = build_chain(state, state.range(0), /*emit_only=*/false);
  report(state, bindings);
}
BENCHMARK(BM_BuildChain)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

/// Emitting alone: normalisation and deduction of each binding as it is emitted.
void BM_EmitChain(benchmark::State& state) {
  int64_t bindings = 0;
  for (auto _ : state) {
    bindings = build_chain(state, state.range(0), /*emit_only=*/true);
    state.ResumeTiming();
  }
  report(state, bindings);
}
BENCHMARK(BM_EmitChain)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
