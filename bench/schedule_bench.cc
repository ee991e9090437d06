// What the default CPU schedule (schedule-cpu) buys on memory-bound kernels,
// against the same pipeline without it, in the same run:
//   add       x + z              over (n, 4096) float32 (2 reads, 1 write)
//   silu_mul  silu(x) * z        over (n, 4096) float32 (2 reads, 1 write; exp inside)
//   softmax   softmax(x, -1)     over (n, 4096) float32 (1 read, 1 write, as its roofline;
//                                 the legalized kernel reads x three times)
// at n = 1, 64, 512, compiled for one thread (the gain of vectorization and of
// the local accumulators; times are the benchmark thread's CPU time, so other
// processes on the machine do not count) and, for the scheduled build, for two
// threads (wall time; the parallel rows). The roofline is a plain memory read
// measured here (BM_Read: Eigen's vectorized sum over as many bytes as the
// kernel moves); counters: GB/s = the kernel's bytes (inputs + output) / time, and
// of_read = that over the read bandwidth.
// For add and silu_mul the scheduled build is also measured with its vectorized
// loops lowered to vector lanes (schedule-cpu's option vector-statements=1:
// ramp/broadcast statements with GCC vector types and a peeled tail) against
// the default `#pragma omp simd` loops, one thread each, in the same run.
// RELAX_SCHEDULE_BENCH_DUMP=<dir> keeps the generated C++ there. The row
// reductions and rotary embedding against their bandwidth roofline follow at
// the end of this file.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "decoder_layer.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/transform/pipeline.h"

namespace {

using relax::DataType;
using relax::runtime::Tensor;
using relax::runtime::Value;

constexpr int64_t kCols = 4096;

[[noreturn]] void fail(const std::string& message) { relax_bench::fail("schedule_bench", message); }

constexpr const char* kModule = R"(module {
  func @add(x: Tensor[(n, 4096), float32], z: Tensor[(n, 4096), float32]) -> Tensor[(n, 4096), float32] {
    r = add(x, z)
    return r
  }
  func @silu_mul(x: Tensor[(n, 4096), float32], z: Tensor[(n, 4096), float32]) -> Tensor[(n, 4096), float32] {
    a = silu(x)
    r = multiply(a, z)
    return r
  }
  func @softmax(x: Tensor[(n, 4096), float32]) -> Tensor[(n, 4096), float32] {
    r = softmax(x)
    return r
  }
})";

enum class Variant { kPlain, kScheduled, kScheduled2, kLanes };

relax::runtime::Module compile(Variant variant) {
  absl::StatusOr<relax::IRModule> mod = relax::parse_module(kModule);
  if (!mod.ok()) fail(std::string(mod.status().message()));
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  target.threads = variant == Variant::kScheduled2 ? 2 : 1;
  if (const char* dir = std::getenv("RELAX_SCHEDULE_BENCH_DUMP")) {
    target.cache_dir = (std::filesystem::path(dir) / "cache").string();
    target.keep_source = true;
  }
  relax::transform::PassContext ctx;
  if (variant == Variant::kPlain) ctx.disable_pass("schedule-cpu");
  if (variant == Variant::kLanes) ctx.set_option("schedule-cpu.vector-statements", int64_t{1});
  absl::StatusOr<relax::runtime::Module> m =
      relax::build(*mod, target, relax::transform::default_pipeline(target), ctx);
  if (!m.ok()) fail("build failed: " + std::string(m.status().message()));
  return *m;
}

const relax::runtime::Module& module(Variant variant) {
  static const relax::runtime::Module plain = compile(Variant::kPlain);
  static const relax::runtime::Module scheduled = compile(Variant::kScheduled);
  static const relax::runtime::Module scheduled2 = compile(Variant::kScheduled2);
  static const relax::runtime::Module lanes = compile(Variant::kLanes);
  switch (variant) {
    case Variant::kPlain: return plain;
    case Variant::kScheduled: return scheduled;
    case Variant::kLanes: return lanes;
    case Variant::kScheduled2: break;
  }
  return scheduled2;
}

Tensor random_tensor(int64_t n, uint32_t seed) {
  Tensor t = *Tensor::empty({n, kCols}, DataType::float32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  float* p = t.data_as_or_die<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

/// Bytes a kernel moves: its inputs and its output, once each.
double bytes_of(const std::string& kernel, int64_t n) {
  const double tensor = static_cast<double>(n * kCols) * sizeof(float);
  return kernel == "softmax" ? 2 * tensor : 3 * tensor;
}

/// Read bandwidth (bytes per second) measured by BM_Read, by byte count.
std::map<double, double>& read_bandwidth() {
  static std::map<double, double> measured;
  return measured;
}

void BM_Read(benchmark::State& state, const std::string& kernel) {
  const int64_t n = state.range(0);
  const double bytes = bytes_of(kernel, n);
  std::vector<float> data(static_cast<size_t>(bytes / sizeof(float)), 1.0f);
  const double start = relax_bench::thread_seconds();
  const Eigen::Map<const Eigen::VectorXf> view(data.data(), static_cast<Eigen::Index>(data.size()));
  for (auto _ : state) {
    float sum = view.sum();  // Eigen's vectorized reduction: a read at the SIMD width it is built for
    benchmark::DoNotOptimize(sum);
  }
  const double seconds = (relax_bench::thread_seconds() - start) / static_cast<double>(state.iterations());
  read_bandwidth()[bytes] = bytes / seconds;
  state.counters["GB/s"] = bytes / seconds / 1e9;
  state.SetLabel("plain read of " + kernel + "'s bytes");
}

void BM_Kernel(benchmark::State& state, const std::string& kernel, Variant variant) {
  const int64_t n = state.range(0);
  Tensor x = random_tensor(n, 1), z = random_tensor(n, 2);
  std::vector<Value> args{Value(x)};
  if (kernel != "softmax") args.emplace_back(z);
  const relax::runtime::Function fn = module(variant)[kernel];
  // The scheduled result must match the plain one before anything is timed.
  absl::StatusOr<Value> want = module(Variant::kPlain)[kernel].call(args);
  absl::StatusOr<Value> got = fn.call(args);
  if (!want.ok() || !got.ok()) fail(kernel + ": a call failed");
  const float* a = want->tensor_or_die().data_as_or_die<float>();
  const float* b = got->tensor_or_die().data_as_or_die<float>();
  for (int64_t i = 0; i < n * kCols; ++i) {
    if (std::fabs(a[i] - b[i]) > 1e-5f * std::fabs(a[i]) + 1e-6f) fail(kernel + ": scheduled and plain differ");
  }
  const bool wall = variant == Variant::kScheduled2;
  const double start = relax_bench::thread_seconds();
  const auto wall_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    absl::StatusOr<Value> r = fn.call(args);
    if (!r.ok()) fail(kernel + ": " + std::string(r.status().message()));
    benchmark::DoNotOptimize(r);
  }
  const double seconds =
      (wall ? std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count()
            : relax_bench::thread_seconds() - start) /
      static_cast<double>(state.iterations());
  const double bytes = bytes_of(kernel, n);
  state.counters["GB/s"] = bytes / seconds / 1e9;
  if (auto it = read_bandwidth().find(bytes); it != read_bandwidth().end()) {
    state.counters["of_read"] = bytes / seconds / it->second;
  }
  state.counters["us"] = seconds * 1e6;
  state.SetLabel(variant == Variant::kPlain   ? "plain, 1 thread"
                 : variant == Variant::kLanes ? "scheduled, vector lanes, 1 thread"
                 : wall                       ? "scheduled, 2 threads (wall)"
                                              : "scheduled, omp simd, 1 thread");
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("n")->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
}

#define RELAX_SCHEDULE_CASES(kernel)                                                   \
  BENCHMARK_CAPTURE(BM_Read, kernel, std::string(#kernel))->Apply(sizes);              \
  BENCHMARK_CAPTURE(BM_Kernel, kernel##_plain, std::string(#kernel), Variant::kPlain)  \
      ->Apply(sizes);                                                                  \
  BENCHMARK_CAPTURE(BM_Kernel, kernel##_scheduled, std::string(#kernel),               \
                    Variant::kScheduled)                                               \
      ->Apply(sizes);                                                                  \
  BENCHMARK_CAPTURE(BM_Kernel, kernel##_scheduled_2threads, std::string(#kernel),      \
                    Variant::kScheduled2)                                              \
      ->Apply(sizes)                                                                   \
      ->UseRealTime();

#define RELAX_LANES_CASE(kernel)                                                                        \
  BENCHMARK_CAPTURE(BM_Kernel, kernel##_lanes, std::string(#kernel), Variant::kLanes)->Apply(sizes);

RELAX_SCHEDULE_CASES(add)
RELAX_LANES_CASE(add)
RELAX_SCHEDULE_CASES(silu_mul)
RELAX_LANES_CASE(silu_mul)
RELAX_SCHEDULE_CASES(softmax)

}  // namespace

// ---------------------------------------------------------------------------
// Row reductions and rotary embedding against their bandwidth roofline.
//
//   copy      abs(x)                       (n, 4096) float32: 1 read, 1 write -- the roofline
//   softmax   softmax(x, -1)               (n, 4096) float32
//   rms_norm  rms_norm(x, w)               (n, 4096) float32 (w: 16 KiB, cached)
//   layer_norm layer_norm(x, g, b)         (n, 4096) float32
//   rotary    rotary_embedding(x, pos)     (1, n, 32, 128) float32 (pos: n int64)
// each moving one tensor in and one out (the small operands are not counted),
// compiled with the default pipeline for 1 and for 2 threads, at n = 2048 and
// 8192 (32 and 128 MiB a tensor, beyond the last-level cache). The roofline is
// the compiled `copy` (a vectorised, parallel elementwise kernel over the same
// bytes) measured in the same run at the same n and thread count; counters:
// GB/s = 2 tensors' bytes / time, of_roofline = copy time / kernel time.
// Times: 1 thread, the benchmark thread's CPU time; 2 threads, wall time.

namespace {

constexpr const char* kRowModule = R"(module {
  func @copy(x: Tensor[(n, 4096), float32]) -> Tensor[(n, 4096), float32] {
    r = abs(x)
    return r
  }
  func @softmax(x: Tensor[(n, 4096), float32]) -> Tensor[(n, 4096), float32] {
    r = softmax(x)
    return r
  }
  func @rms_norm(x: Tensor[(n, 4096), float32], w: Tensor[(4096,), float32]) -> Tensor[(n, 4096), float32] {
    r = rms_norm(x, w)
    return r
  }
  func @layer_norm(x: Tensor[(n, 4096), float32], g: Tensor[(4096,), float32], b: Tensor[(4096,), float32]) -> Tensor[(n, 4096), float32] {
    r = layer_norm(x, g, b)
    return r
  }
  func @rotary(x: Tensor[(1, n, 32, 128), float32], pos: Tensor[(n,), int64]) -> Tensor[(1, n, 32, 128), float32] {
    r = rotary_embedding(x, pos)
    return r
  }
})";

const relax::runtime::Module& row_module(int threads) {
  auto compile_rows = [](int t) {
    absl::StatusOr<relax::IRModule> mod = relax::parse_module(kRowModule);
    if (!mod.ok()) fail(std::string(mod.status().message()));
    relax::Target target;
    target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
    target.threads = t;
    if (const char* dir = std::getenv("RELAX_SCHEDULE_BENCH_DUMP")) {
      target.cache_dir = (std::filesystem::path(dir) / "cache").string();
      target.keep_source = true;
    }
    absl::StatusOr<relax::runtime::Module> m = relax::build(*mod, target);
    if (!m.ok()) fail("build failed: " + std::string(m.status().message()));
    return *m;
  };
  static const relax::runtime::Module one = compile_rows(1);
  static const relax::runtime::Module two = compile_rows(2);
  return threads == 1 ? one : two;
}

/// Seconds per call of the copy, by (n, threads), measured by BM_RowKernel("copy").
std::map<std::pair<int64_t, int>, double>& copy_seconds() {
  static std::map<std::pair<int64_t, int>, double> measured;
  return measured;
}

std::vector<Value> row_args(const std::string& kernel, int64_t n) {
  Tensor x = random_tensor(n, 1);
  if (kernel == "rotary") {
    Tensor x4 = *Tensor::empty({1, n, 32, 128}, DataType::float32());
    std::memcpy(x4.data(), x.data(), x.nbytes());
    x = x4;
    Tensor pos = *Tensor::empty({n}, DataType::int64());
    for (int64_t i = 0; i < n; ++i) pos.data_as_or_die<int64_t>()[i] = i;
    return {Value(x), Value(pos)};
  }
  std::vector<Value> args{Value(x)};
  Tensor small = *Tensor::empty({kCols}, DataType::float32());
  for (int64_t i = 0; i < kCols; ++i) small.data_as_or_die<float>()[i] = 0.5f + static_cast<float>(i % 7) * 0.1f;
  if (kernel == "rms_norm") args.emplace_back(small);
  if (kernel == "layer_norm") {
    args.emplace_back(small);
    args.emplace_back(small);
  }
  return args;
}

void BM_RowKernel(benchmark::State& state, const std::string& kernel, int threads) {
  const int64_t n = state.range(0);
  const std::vector<Value> args = row_args(kernel, n);
  const relax::runtime::Function fn = row_module(threads)[kernel];
  if (!fn.call(args).ok()) fail(kernel + ": the first call failed");
  const bool wall = threads > 1;
  const double start = relax_bench::thread_seconds();
  const auto wall_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    absl::StatusOr<Value> r = fn.call(args);
    if (!r.ok()) fail(kernel + ": " + std::string(r.status().message()));
    benchmark::DoNotOptimize(r);
  }
  const double seconds =
      (wall ? std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count()
            : relax_bench::thread_seconds() - start) /
      static_cast<double>(state.iterations());
  const double bytes = 2.0 * static_cast<double>(n * kCols) * sizeof(float);
  state.counters["GB/s"] = bytes / seconds / 1e9;
  state.counters["ms"] = seconds * 1e3;
  if (kernel == "copy") {
    copy_seconds()[{n, threads}] = seconds;
  } else if (auto it = copy_seconds().find({n, threads}); it != copy_seconds().end()) {
    state.counters["of_roofline"] = it->second / seconds;
  }
  state.SetLabel(std::to_string(threads) + (threads == 1 ? " thread" : " threads (wall)"));
}

void row_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("n")->Arg(2048)->Arg(8192)->Unit(benchmark::kMillisecond)->MinTime(0.5);
}

#define RELAX_ROW_CASES(kernel, threads)                                                      \
  BENCHMARK_CAPTURE(BM_RowKernel, kernel##_##threads##t, std::string(#kernel), threads)       \
      ->Apply(row_sizes)                                                                      \
      ->UseRealTime();

RELAX_ROW_CASES(copy, 1)
RELAX_ROW_CASES(softmax, 1)
RELAX_ROW_CASES(rms_norm, 1)
RELAX_ROW_CASES(layer_norm, 1)
RELAX_ROW_CASES(rotary, 1)
RELAX_ROW_CASES(copy, 2)
RELAX_ROW_CASES(softmax, 2)
RELAX_ROW_CASES(rms_norm, 2)
RELAX_ROW_CASES(layer_norm, 2)
RELAX_ROW_CASES(rotary, 2)

}  // namespace
