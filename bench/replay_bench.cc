// What execution-plan replay saves (relax/runtime/replay.h): the per-call overhead of a
// 22-layer Llama-style decoder's decode step (n = 1 new token over m cached ones, hidden 256,
// 4 heads of 64, SwiGLU 688, float32), compiled once through the default pipeline with hollow
// kernels (their bodies emptied at the end of the pipeline, so that the time is the runtime's:
// argument checks, dispatch, shape arithmetic, storage requests, marshalling and the calls
// themselves), interpreted (replay off) and replayed (the module's plan for the binding
// recorded before the timed calls), in one run:
//
//   ns_per_kernel_call  CPU time per call / kernel and library calls per call;
//   us_per_call         CPU time per call (the calling thread's: other processes sharing the
//                       machine's cores do not count into it);
//   kernel_calls        kernel and library calls per call;
//   replayed            the share of the timed calls that replayed (1 or 0).
// Every replayed variant's outputs are compared with the interpreted ones first (bit for bit),
// with real kernels at a smaller size (BM_ReplayAgrees runs once and fails loudly otherwise).
#include <benchmark/benchmark.h>

#include <cstdint>
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

// x, positions, then per layer: caches and weights (one set of weights shared by the layers).
std::vector<Value> inputs(int layers, int64_t m) {
  const relax_bench::DecoderLayerShape s = shape(layers);
  absl::StatusOr<Tensor> positions = Tensor::empty({1}, DataType::int64());
  if (!positions.ok()) fail("cannot allocate positions");
  positions->data_as_or_die<int64_t>()[0] = m;
  std::vector<Value> args = {Value(random_tensor({1, s.dim}, 1, 1.0f)), Value(*positions)};
  const float w = 0.05f;
  std::vector<Value> weights = {Value(random_tensor({s.dim}, 5, 1.0f)),          Value(random_tensor({s.dim, s.dim}, 7, w)),
                                Value(random_tensor({s.dim, s.dim}, 8, w)),      Value(random_tensor({s.dim, s.dim}, 9, w)),
                                Value(random_tensor({s.dim, s.dim}, 10, w)),     Value(random_tensor({s.dim}, 6, 1.0f)),
                                Value(random_tensor({s.dim, s.ffn}, 11, w)),     Value(random_tensor({s.dim, s.ffn}, 12, w)),
                                Value(random_tensor({s.ffn, s.dim}, 13, w))};
  for (int l = 0; l < layers; ++l) {
    args.push_back(Value(random_tensor({1, m, s.heads, s.head_dim}, 20 + 2 * static_cast<uint32_t>(l), 1.0f)));
    args.push_back(Value(random_tensor({1, m, s.heads, s.head_dim}, 21 + 2 * static_cast<uint32_t>(l), 1.0f)));
    args.insert(args.end(), weights.begin(), weights.end());
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

// Real kernels, 2 layers, m = 16: the replayed decode step gives the interpreted one's bits.
void BM_ReplayAgrees(benchmark::State& state) {
  relax::runtime::Module& m = compiled(2, false);
  const std::vector<Value> args = inputs(2, 16);
  set_replay(m, false);
  absl::StatusOr<Value> want = m["main"].call(args);
  set_replay(m, true);
  absl::StatusOr<Value> first = m["main"].call(args);   // records
  absl::StatusOr<Value> second = m["main"].call(args);  // replays
  if (!want.ok() || !first.ok() || !second.ok()) fail("decode with real kernels failed");
  if (m.replay_stats().replayed != 1) fail("the second decode call did not replay");
  if (!bit_equal(*want, *first) || !bit_equal(*want, *second)) fail("replayed outputs differ from interpreted ones");
  for (auto _ : state) benchmark::DoNotOptimize(second);
  state.SetLabel("replayed == interpreted, bit for bit");
}
BENCHMARK(BM_ReplayAgrees)->Iterations(1);

void BM_DecodeOverhead(benchmark::State& state, bool replay) {
  const int64_t m = state.range(0);
  relax::runtime::Module& module = compiled(kLayers, true);
  set_replay(module, replay);
  const std::vector<Value> args = inputs(kLayers, m);
  const relax::runtime::Function fn = module["main"];
  relax::runtime::ExecutionContext ctx;
  {
    absl::StatusOr<Value> warm = fn.call(ctx, args);  // records, when replaying
    if (!warm.ok()) fail("decode failed: " + std::string(warm.status().message()));
  }
  int64_t iterations = 0, replayed = 0;
  const double start = thread_seconds();
  for (auto _ : state) {
    absl::StatusOr<Value> r = fn.call(ctx, args);
    benchmark::DoNotOptimize(r);
    replayed += ctx.last_call_stats().replayed;
    ++iterations;
  }
  const double per_call = (thread_seconds() - start) / static_cast<double>(std::max<int64_t>(iterations, 1));
  const int64_t calls = calls_per_call(module);
  state.counters["us_per_call"] = per_call * 1e6;
  state.counters["kernel_calls"] = static_cast<double>(calls);
  state.counters["ns_per_kernel_call"] = per_call * 1e9 / static_cast<double>(calls);
  state.counters["replayed"] = static_cast<double>(replayed) / static_cast<double>(std::max<int64_t>(iterations, 1));
  state.SetLabel(replay ? "replayed" : "interpreted");
}

BENCHMARK_CAPTURE(BM_DecodeOverhead, interpreted, false)->Arg(16)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DecodeOverhead, replayed, true)->Arg(16)->Arg(512)->Unit(benchmark::kMicrosecond);

}  // namespace
