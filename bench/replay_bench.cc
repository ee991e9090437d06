// What execution-plan replay saves (relax/runtime/replay.h): the per-call overhead of a
// 22-layer Llama-style decoder's decode step (n = 1 new token over m cached ones, hidden 256,
// 4 heads of 64, SwiGLU 688, float32), compiled once through the default pipeline with hollow
// kernels (their bodies emptied at the end of the pipeline, so that the time is the runtime's:
// argument checks, dispatch, shape arithmetic, storage requests, marshalling and the calls
// themselves; library dispatch off, so that every call is to a hollow kernel), in one run:
//
//   interpreted/growing   replay off, each call's context one longer than the last (m + 1);
//   replayed/growing      replay on, the same calls: one plan, recorded on the first call,
//                         replayed by every later one with its ints computed from the binding;
//   interpreted/same      replay off, the same binding (m = 17) every call;
//   replayed/same         replay on, the same binding every call: the thread's last plan and
//                         its ints are reused without the entry match (PlanCache::hint);
//   replayed/two          replay on, m = 17 and 18 alternating: no growth of memory, and the
//                         hint never applies, so every call runs the entry match and computes
//                         the plan's ints -- against replayed/same, at most what a plan per
//                         exact binding would save.
//
//   ns_per_kernel_call  CPU time per call / kernel and library calls per call;
//   us_per_step         CPU time per call (the calling thread's: other processes sharing the
//                       machine's cores do not count into it);
//   kernel_calls        kernel and library calls per call;
//   replayed            the share of the timed calls that replayed (1 or 0).
// Every variant runs exactly kSteps calls (200; RELAX_REPLAY_BENCH_STEPS), the growing ones
// m = 17 ... 16 + kSteps, after a first call at m = 16 (which records, when replaying). Replayed outputs
// are compared with interpreted ones first, bit for bit, with real kernels at a smaller size
// over growing contexts (BM_ReplayAgrees runs once and fails loudly otherwise).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "decoder_layer.h"
#include "relax/codegen/build.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/module.h"
#include "relax/transform/pass.h"
#include "relax/transform/pipeline.h"

namespace {

using relax::DataType;
using relax::runtime::Tensor;
using relax::runtime::Value;
using relax_bench::thread_seconds;

constexpr int kLayers = 22;

[[noreturn]] void fail(const std::string& message) { relax_bench::fail("replay_bench", message); }

relax_bench::DecoderLayerShape shape(int layers) {
  relax_bench::DecoderLayerShape s;
  s.layers = layers;
  s.upper_bounds = {{"n", 2048}, {"m", 2048}};
  return s;
}

relax::runtime::Module compile(int layers, bool hollow) {
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  target.threads = 1;
  // Hollow: no library calls either (a oneDNN matmul would do its work, and fork its threads,
  // inside the time that is meant to be the runtime's own).
  if (hollow) target.libraries.clear();
  relax::transform::PassManager pm = relax::transform::default_pipeline(target);
  if (hollow) pm.add(std::make_shared<relax_bench::HollowKernels>());
  relax::transform::PassContext ctx;
  absl::StatusOr<relax::runtime::Module> m =
      relax::build(relax_bench::decoder_layer(shape(layers), "replay_bench"), target, pm, ctx);
  if (!m.ok()) fail("build failed: " + std::string(m.status().message()));
  return *m;
}

// One module per (layers, hollow): replay is set per case on it.
relax::runtime::Module& compiled(int layers, bool hollow) {
  static std::map<std::pair<int, bool>, relax::runtime::Module> modules;
  auto it = modules.find({layers, hollow});
  if (it == modules.end()) it = modules.emplace(std::make_pair(layers, hollow), compile(layers, hollow)).first;
  return it->second;
}

// The kernel and library calls of one call of main: its code is straight-line.
int64_t calls_per_call(const relax::runtime::Module& m) {
  const relax::runtime::Executable& exec = m.executable();
  int64_t calls = 0;
  for (const relax::runtime::Instruction& ins : exec.functions[static_cast<size_t>(exec.find_function("main"))].code) {
    calls += ins.op == relax::runtime::Opcode::kCallKernel || ins.op == relax::runtime::Opcode::kCallLibrary;
  }
  return calls;
}

Tensor random_tensor(std::vector<int64_t> dims, uint32_t seed, float scale) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(dims), DataType::float32());
  if (!t.ok()) fail("cannot allocate an input");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  float* p = t->data_as_or_die<float>();
  for (int64_t i = 0; i < t->numel(); ++i) p[i] = d(rng);
  return *t;
}

// The caches of every layer at their longest: a call's caches are views of their first m rows.
struct Inputs {
  std::vector<Value> weights;            // norm1, wq, wk, wv, wo, norm2, wgate, wup, wdown
  std::vector<Tensor> k_caches, v_caches;
  Tensor x;
};

Inputs make_inputs(int layers, int64_t max_m) {
  const relax_bench::DecoderLayerShape s = shape(layers);
  Inputs in;
  const float w = 0.05f;
  in.weights = {Value(random_tensor({s.dim}, 5, 1.0f)),      Value(random_tensor({s.dim, s.dim}, 7, w)),
                Value(random_tensor({s.dim, s.dim}, 8, w)),  Value(random_tensor({s.dim, s.dim}, 9, w)),
                Value(random_tensor({s.dim, s.dim}, 10, w)), Value(random_tensor({s.dim}, 6, 1.0f)),
                Value(random_tensor({s.dim, s.ffn}, 11, w)), Value(random_tensor({s.dim, s.ffn}, 12, w)),
                Value(random_tensor({s.ffn, s.dim}, 13, w))};
  for (int l = 0; l < layers; ++l) {
    in.k_caches.push_back(random_tensor({1, max_m, s.heads, s.head_dim}, 20 + 2 * static_cast<uint32_t>(l), 1.0f));
    in.v_caches.push_back(random_tensor({1, max_m, s.heads, s.head_dim}, 21 + 2 * static_cast<uint32_t>(l), 1.0f));
  }
  in.x = random_tensor({1, s.dim}, 1, 1.0f);
  return in;
}

// x, positions, then per layer: caches (m rows of `in`'s) and weights (one set shared by the
// layers).
std::vector<Value> step_args(const Inputs& in, int layers, int64_t m) {
  const relax_bench::DecoderLayerShape s = shape(layers);
  absl::StatusOr<Tensor> positions = Tensor::empty({1}, DataType::int64());
  if (!positions.ok()) fail("cannot allocate positions");
  positions->data_as_or_die<int64_t>()[0] = m;
  std::vector<Value> args = {Value(in.x), Value(*positions)};
  for (int l = 0; l < layers; ++l) {
    for (const Tensor& cache : {in.k_caches[static_cast<size_t>(l)], in.v_caches[static_cast<size_t>(l)]}) {
      absl::StatusOr<Tensor> view = cache.view(0, {1, m, s.heads, s.head_dim}, DataType::float32());
      if (!view.ok()) fail("cannot view a cache");
      args.push_back(Value(*view));
    }
    args.insert(args.end(), in.weights.begin(), in.weights.end());
  }
  return args;
}

bool bit_equal(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  if (a.is_tuple()) {
    if (a.fields_or_die().size() != b.fields_or_die().size()) return false;
    for (size_t i = 0; i < a.fields_or_die().size(); ++i) {
      if (!bit_equal(a.fields_or_die()[i], b.fields_or_die()[i])) return false;
    }
    return true;
  }
  const Tensor& x = a.tensor_or_die();
  const Tensor& y = b.tensor_or_die();
  return x.shape() == y.shape() && x.dtype() == y.dtype() && std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
}

void set_replay(relax::runtime::Module& m, bool on) {
  relax::runtime::ReplayOptions o;
  o.enabled = on;
  o.record_on_call = 1;
  m.set_replay_options(o);
}

// Real kernels, 2 layers, m = 16 ... 39: every replayed decode step gives the interpreted one's
// bits, from one plan.
void BM_ReplayAgrees(benchmark::State& state) {
  relax::runtime::Module& m = compiled(2, false);
  const Inputs in = make_inputs(2, 64);
  std::vector<Value> want;
  set_replay(m, false);
  for (int64_t ctx_len = 16; ctx_len < 40; ++ctx_len) {
    absl::StatusOr<Value> r = m["main"].call(step_args(in, 2, ctx_len));
    if (!r.ok()) fail("decode with real kernels failed: " + std::string(r.status().message()));
    want.push_back(*r);
  }
  set_replay(m, true);  // records on the first call
  for (int64_t ctx_len = 16; ctx_len < 40; ++ctx_len) {
    absl::StatusOr<Value> got = m["main"].call(step_args(in, 2, ctx_len));
    if (!got.ok()) fail("decode with real kernels failed: " + std::string(got.status().message()));
    if (!bit_equal(*got, want[static_cast<size_t>(ctx_len - 16)])) fail("replayed outputs differ from interpreted ones");
  }
  const relax::runtime::ReplayStats s = m.replay_stats();
  if (s.recorded != 1 || s.replayed != 23) fail("the growing decode steps did not replay one plan");
  for (auto _ : state) benchmark::DoNotOptimize(want);
  state.SetLabel("replayed == interpreted, bit for bit, m = 16..39, one plan");
}
BENCHMARK(BM_ReplayAgrees)->Iterations(1);

constexpr int64_t kFirstM = 16;
// RELAX_REPLAY_BENCH_STEPS overrides (a quick run).
const int64_t kSteps = [] {
  const char* env = std::getenv("RELAX_REPLAY_BENCH_STEPS");
  return env != nullptr && std::atoll(env) > 0 ? std::atoll(env) : int64_t{200};
}();

enum class Mode { kInterpretedGrowing, kReplayedGrowing, kInterpretedSame, kReplayedSame, kReplayedAlternating };

void BM_DecodeOverhead(benchmark::State& state, Mode mode) {
  relax::runtime::Module& module = compiled(kLayers, true);
  set_replay(module, mode != Mode::kInterpretedGrowing && mode != Mode::kInterpretedSame);
  static const Inputs in = make_inputs(kLayers, kFirstM + kSteps + 1);
  const int64_t bindings = mode == Mode::kInterpretedSame || mode == Mode::kReplayedSame ? 1
                           : mode == Mode::kReplayedAlternating                     ? 2
                                                                                    : kSteps;
  std::vector<std::vector<Value>> steps;
  for (int64_t i = 0; i <= bindings; ++i) steps.push_back(step_args(in, kLayers, kFirstM + i));
  const relax::runtime::Function fn = module["main"];
  relax::runtime::ExecutionContext ctx;
  {
    absl::StatusOr<Value> warm = fn.call(ctx, steps[0]);  // records, when replaying
    if (!warm.ok()) fail("decode failed: " + std::string(warm.status().message()));
  }
  int64_t iterations = 0, replayed = 0;
  const double start = thread_seconds();
  for (auto _ : state) {
    const std::vector<Value>& args = steps[static_cast<size_t>(1 + iterations % bindings)];
    absl::StatusOr<Value> r = fn.call(ctx, args);
    benchmark::DoNotOptimize(r);
    replayed += ctx.last_call_stats().replayed;
    ++iterations;
  }
  const double per_call = (thread_seconds() - start) / static_cast<double>(std::max<int64_t>(iterations, 1));
  const int64_t calls = calls_per_call(module);
  state.counters["us_per_step"] = per_call * 1e6;
  state.counters["kernel_calls"] = static_cast<double>(calls);
  state.counters["ns_per_kernel_call"] = per_call * 1e9 / static_cast<double>(calls);
  state.counters["replayed"] = static_cast<double>(replayed) / static_cast<double>(std::max<int64_t>(iterations, 1));
  state.counters["plans_recorded"] = static_cast<double>(module.replay_stats().recorded);
}

BENCHMARK_CAPTURE(BM_DecodeOverhead, interpreted_growing, Mode::kInterpretedGrowing)
    ->Iterations(kSteps)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DecodeOverhead, replayed_growing, Mode::kReplayedGrowing)
    ->Iterations(kSteps)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DecodeOverhead, interpreted_same_binding, Mode::kInterpretedSame)
    ->Iterations(kSteps)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DecodeOverhead, replayed_same_binding, Mode::kReplayedSame)
    ->Iterations(kSteps)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DecodeOverhead, replayed_two_bindings, Mode::kReplayedAlternating)
    ->Iterations(kSteps)->Unit(benchmark::kMicrosecond);

}  // namespace
