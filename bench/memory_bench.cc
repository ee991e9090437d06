// What memory planning buys: a Llama-style decoder layer (hidden 4096, 32 heads of 128, SwiGLU
// MLP of 11008, float32) with symbolic batch b, new tokens n and cached tokens m, compiled once
// per variant and called at prefill (b = 1, n = 128, 512, 2048, m = 0) and decode (b = 1, n = 1,
// m = 512, 2048) sizes, in one run:
//
//   off      the default pipeline without plan-memory: every intermediate has a storage of
//            its own from the runtime's pool, given back after its last use (the pool keeps
//            it for a later request of the same size class);
//   planned  the default pipeline, no declared bounds: one arena per call, its size and the
//            offsets symbolic expressions evaluated from b, n and m;
//   bounded  the default pipeline with b <= 1, n <= 2048, m <= 2048 declared: one arena of
//            constant size, allocated once by the execution context and reused by every call.
//
// Each case runs on an execution context of its own over a PooledAllocator of its own (the
// inputs and weights come from another), keeping its storages for the planned variants and
// nothing for `off` (every storage from the pool, back to it after its last use). Counters:
//   peak_bytes            the most bytes the case's pool had handed out at once during the
//                         first call: intermediates (or the arena) and outputs, in whole blocks;
//   peak_intermediate     peak_bytes less the output bytes (the part planning can share);
//   intermediate_storage  the bytes of the storages the call did not return (the arena; for
//                         `off`, the sum of every intermediate's own storage);
//   allocator_calls       allocator calls per call after the first;
//   reserved_bytes        what the context keeps between calls;
//   saving                1 - peak_intermediate(variant) / peak_intermediate(off), for the
//                         planned variants (the paper reports 22% at prefill, 40% at decode).
// The memory cases run the compiled graph with hollow kernels (their bodies emptied by a pass
// at the end of the pipeline): what a call allocates is decided by the graph code alone once
// lift-workspace has moved the kernels' scratch buffers into it, and the plain-loop kernels of
// today would take minutes per prefill call at this size. Their time is therefore the VM's and
// the allocations' own cost per call. BM_DecodeStep runs the real kernels at decode (n = 1,
// m = 512) for off and planned, and checks once that both give the same outputs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "decoder_layer.h"
#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/prim_func.h"
#include "relax/runtime/allocator.h"
#include "relax/runtime/execution_context.h"
#include "relax/transform/pass.h"
#include "relax/transform/pipeline.h"
#include "relax/transform/plan_memory.h"

namespace {

using relax_bench::thread_seconds;
using relax::DataType;
using relax::SymExpr;
using relax::SymVar;
using relax::runtime::Tensor;
using relax::runtime::Value;

constexpr int64_t kDim = 4096, kHeads = 32, kHeadDim = 128, kFfn = 11008;
constexpr int64_t kMaxTokens = 2048;

[[noreturn]] void fail(const std::string& message) { relax_bench::fail("memory_bench", message); }

enum class Variant { kOff, kPlanned, kBounded };

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::kOff: return "off";
    case Variant::kPlanned: return "planned";
    case Variant::kBounded: return "bounded";
  }
  return "?";
}

relax::IRModule decoder_layer(bool bounded) {
  relax_bench::DecoderLayerShape shape{kDim, kHeads, kHeadDim, kFfn, /*batched=*/true, {}};
  if (bounded) shape.upper_bounds = {{"b", 1}, {"n", kMaxTokens}, {"m", kMaxTokens}};
  return relax_bench::decoder_layer(shape, "memory_bench");
}

// RELAX_MEMORY_BENCH_SVG=<file>: the plan of the `planned` layer at prefill n = 128 as an SVG
// timeline (relax/transform/memory_planner.h, plan_to_svg), the picture in the README.
void write_plan_svg(const relax::IRModule& lowered, const std::string& path) {
  namespace memory = relax::transform::memory;
  absl::StatusOr<memory::FunctionMemoryPlan> plan = memory::read_memory_plan(lowered, "main");
  absl::StatusOr<relax::SymVarMap<int64_t>> values =
      memory::function_sym_values(lowered, "main", {{"b", 1}, {"n", 128}, {"m", 0}});
  if (!plan.ok() || !values.ok()) fail("plan svg: " + (plan.ok() ? values.status() : plan.status()).ToString());
  absl::StatusOr<std::string> svg =
      memory::plan_to_svg(plan->plan, plan->tensors, *values, "decoder layer (hidden 4096), prefill b = 1, n = 128");
  if (!svg.ok()) fail("plan svg: " + svg.status().ToString());
  std::ofstream(path, std::ios::binary) << *svg;
}

relax::runtime::Module compile(Variant variant, bool hollow) {
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  target.threads = 1;
  relax::transform::PassManager pm = relax::transform::default_pipeline(target);
  if (variant == Variant::kOff) {
    absl::Status removed = pm.remove("plan-memory");
    if (!removed.ok()) fail("the default pipeline has no plan-memory: " + std::string(removed.message()));
  }
  if (hollow) pm.add(std::make_shared<relax_bench::HollowKernels>());
  relax::transform::PassContext ctx;
  relax::BuildInfo info;
  absl::StatusOr<relax::runtime::Module> m =
      relax::build(decoder_layer(variant == Variant::kBounded), target, pm, ctx, &info);
  if (!m.ok()) fail(std::string(variant_name(variant)) + ": build failed: " + std::string(m.status().message()));
  if (const char* path = std::getenv("RELAX_MEMORY_BENCH_SVG"); path != nullptr && variant == Variant::kPlanned && hollow) {
    write_plan_svg(info.lowered, path);
  }
  return *m;
}

const relax::runtime::Module& compiled(Variant variant, bool hollow) {
  static std::map<std::pair<Variant, bool>, relax::runtime::Module> modules;
  auto it = modules.find({variant, hollow});
  if (it == modules.end()) it = modules.emplace(std::make_pair(variant, hollow), compile(variant, hollow)).first;
  return it->second;
}

// ---------------------------------------------------------------------------
// Inputs. The weights (809 MB) are made once; random only when real kernels read them.

Tensor make_tensor(std::vector<int64_t> shape, DataType dtype, bool fill, float scale, uint32_t seed) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype);
  if (!t.ok()) fail("cannot allocate an input: " + std::string(t.status().message()));
  if (fill && dtype == DataType::float32()) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-scale, scale);
    float* p = t->data_as_or_die<float>();
    for (int64_t i = 0; i < t->numel(); ++i) p[i] = d(rng);
  }
  return *t;
}

const std::vector<Value>& weights(bool random) {
  static std::map<bool, std::vector<Value>> made;
  auto it = made.find(random);
  if (it != made.end()) return it->second;
  const float w = 1.0f / std::sqrt(static_cast<float>(kDim));
  const DataType f32 = DataType::float32();
  auto norm = [&](uint32_t seed) {
    Tensor t = make_tensor({kDim}, f32, true, 0.1f, seed);
    for (int64_t i = 0; i < kDim; ++i) t.data_as_or_die<float>()[i] += 1.0f;
    return Value(t);
  };
  std::vector<Value> v = {norm(5),
                          Value(make_tensor({kDim, kDim}, f32, random, w, 7)),
                          Value(make_tensor({kDim, kDim}, f32, random, w, 8)),
                          Value(make_tensor({kDim, kDim}, f32, random, w, 9)),
                          Value(make_tensor({kDim, kDim}, f32, random, w, 10)),
                          norm(6),
                          Value(make_tensor({kDim, kFfn}, f32, random, w, 11)),
                          Value(make_tensor({kDim, kFfn}, f32, random, w, 12)),
                          Value(make_tensor({kFfn, kDim}, f32, random, 1.0f / std::sqrt(static_cast<float>(kFfn)), 13))};
  return made.emplace(random, std::move(v)).first->second;
}

std::vector<Value> inputs(int64_t n, int64_t m, bool random) {
  const DataType f32 = DataType::float32();
  Tensor positions = make_tensor({n}, DataType::int64(), false, 0, 0);
  for (int64_t i = 0; i < n; ++i) positions.data_as_or_die<int64_t>()[i] = m + i;
  std::vector<Value> args = {Value(make_tensor({1, n, kDim}, f32, true, 1.0f, 1)), Value(positions),
                             Value(make_tensor({1, m, kHeads, kHeadDim}, f32, true, 1.0f, 2)),
                             Value(make_tensor({1, m, kHeads, kHeadDim}, f32, true, 1.0f, 3))};
  const std::vector<Value>& w = weights(random);
  args.insert(args.end(), w.begin(), w.end());
  return args;
}

int64_t value_bytes(const Value& v) {
  if (v.is_tensor()) return v.tensor_or_die().nbytes();
  int64_t total = 0;
  if (v.is_tuple()) {
    for (const Value& f : v.fields_or_die()) total += value_bytes(f);
  }
  return total;
}

// ---------------------------------------------------------------------------
// Memory per call, hollow kernels.

std::map<std::string, double>& off_intermediate() {
  static std::map<std::string, double> peaks;
  return peaks;
}

void BM_Memory(benchmark::State& state, Variant variant) {
  const int64_t n = state.range(0), m = state.range(1);
  const std::string key = std::to_string(n) + "/" + std::to_string(m);
  const std::vector<Value> args = inputs(n, m, false);
  const relax::runtime::Function fn = compiled(variant, true)["main"];
  // A pool and a context of the case's own: the pool counts only what the calls allocate (the
  // inputs come from the default one). Unplanned code runs on a context that keeps nothing:
  // every storage comes from the pool and goes back after its last use, as before planning.
  relax::runtime::PooledAllocator pool;
  relax::runtime::ExecutionContext ctx(&pool, /*keep_storages=*/variant != Variant::kOff);
  int64_t outputs = 0;
  {
    absl::StatusOr<Value> first = fn.call(ctx, args);
    if (!first.ok()) fail(key + ": " + std::string(first.status().message()));
    outputs = value_bytes(*first);
  }
  const int64_t peak = pool.stats().peak_bytes_in_use;  // the first call's, outputs included
  const int64_t storage_bytes = ctx.last_call_stats().arena_bytes;
  int64_t calls = 0, iterations = 0;
  const double start = thread_seconds();
  for (auto _ : state) {
    absl::StatusOr<Value> r = fn.call(ctx, args);
    if (!r.ok()) fail(key + ": " + std::string(r.status().message()));
    calls += ctx.last_call_stats().allocator_calls;
    ++iterations;
  }
  const double per_call = 1.0 / static_cast<double>(std::max<int64_t>(iterations, 1));
  const double intermediate = static_cast<double>(peak - outputs);
  state.counters["peak_bytes"] = static_cast<double>(peak);
  state.counters["peak_intermediate"] = intermediate;
  state.counters["intermediate_storage"] = static_cast<double>(storage_bytes);
  state.counters["allocator_calls"] = static_cast<double>(calls) * per_call;
  state.counters["reserved_bytes"] = static_cast<double>(ctx.reserved_bytes());
  state.counters["cpu_seconds"] = (thread_seconds() - start) * per_call;
  if (variant == Variant::kOff) {
    off_intermediate()[key] = intermediate;
  } else if (auto it = off_intermediate().find(key); it != off_intermediate().end() && it->second > 0) {
    state.counters["saving"] = 1.0 - intermediate / it->second;
  }
  state.SetLabel(variant_name(variant));
}

void memory_cases(benchmark::internal::Benchmark* b) {
  for (int64_t n : {128, 512, 2048}) b->Args({n, 0});
  for (int64_t m : {512, 2048}) b->Args({1, m});
  b->Iterations(50)->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Memory, off, Variant::kOff)->Apply(memory_cases);
BENCHMARK_CAPTURE(BM_Memory, planned, Variant::kPlanned)->Apply(memory_cases);
BENCHMARK_CAPTURE(BM_Memory, bounded, Variant::kBounded)->Apply(memory_cases);

// ---------------------------------------------------------------------------
// One decode step with the real kernels.

void check_agree(const Value& a, const Value& b) {
  if (a.is_tuple()) {
    for (size_t i = 0; i < a.fields_or_die().size(); ++i) check_agree(a.fields_or_die()[i], b.fields_or_die()[i]);
    return;
  }
  const Tensor& x = a.tensor_or_die();
  const Tensor& y = b.tensor_or_die();
  if (x.shape() != y.shape()) fail("decode: off and planned outputs differ in shape");
  const float* px = x.data_as_or_die<float>();
  const float* py = y.data_as_or_die<float>();
  double scale = 0, worst = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    scale = std::max(scale, std::fabs(static_cast<double>(py[i])));
    worst = std::max(worst, std::fabs(static_cast<double>(px[i]) - py[i]));
  }
  if (!(worst <= 1e-4 * scale)) fail("decode: off and planned outputs disagree");
}

void BM_DecodeStep(benchmark::State& state, Variant variant) {
  const int64_t m = state.range(0);
  const std::vector<Value> args = inputs(1, m, true);
  static bool checked = false;
  if (!checked) {
    absl::StatusOr<Value> a = compiled(Variant::kOff, false)["main"].call(args);
    absl::StatusOr<Value> b = compiled(Variant::kPlanned, false)["main"].call(args);
    if (!a.ok() || !b.ok()) fail("decode: a call failed: " + a.status().ToString() + " / " + b.status().ToString());
    check_agree(*a, *b);
    checked = true;
  }
  const relax::runtime::Function fn = compiled(variant, false)["main"];
  relax::runtime::ExecutionContext ctx(nullptr, /*keep_storages=*/variant != Variant::kOff);
  const double start = thread_seconds();
  int64_t iterations = 0;
  for (auto _ : state) {
    absl::StatusOr<Value> r = fn.call(ctx, args);
    benchmark::DoNotOptimize(r);
    ++iterations;
  }
  state.counters["cpu_seconds"] = (thread_seconds() - start) / static_cast<double>(std::max<int64_t>(iterations, 1));
  state.SetLabel(variant_name(variant));
}

BENCHMARK_CAPTURE(BM_DecodeStep, off, Variant::kOff)->Arg(512)->Iterations(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodeStep, planned, Variant::kPlanned)->Arg(512)->Iterations(2)->Unit(benchmark::kMillisecond);

}  // namespace
