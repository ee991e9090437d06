// The matmul schedules of generated code (schedule-cpu's matmul branch) against the machine
// and against oneDNN, in one run:
//   BM_DramRead            a streaming float sum over 256 MiB: the DRAM read bandwidth
//                          (GB/s), the roofline of a one-row matmul;
//   BM_Row<dtype>/K        y[1, N] = x[1, K] @ W[K, N], K = N, compiled with -libs=none (the
//                          generated weight-streaming kernel), GB/s = weight bytes read per
//                          call / time: F32 (W float32), Bf16 (W bfloat16, converted in the
//                          kernel: astype fused into the matmul), Int4 (W as group-wise int4:
//                          two 4-bit weights per byte q[K/2, N], low nibble first, a float
//                          scale per 32 rows s[K/32, N], dequantised in the graph and fused --
//                          the layout of examples/models/dequant_matmul.relax; bytes = q + s),
//                          Int8 (W as group-wise int8: signed bytes q[K, N], the same scales,
//                          through the dequantize operator);
//   BM_RowOneDnn/K         the same f32 one-row product through the default target
//                          (linear(x, w[N, K]) with w marked as weights: oneDNN, prepacked);
//   BM_TileGenerated/M     the generated register-tiled matmul, M rows, K = N = 2048,
//   BM_TileOneDnn/M        against linear through the default target (oneDNN, prepacked
//                          weights): GFLOP/s.
// One module per kind and K with a symbolic M, compiled once; each variant registered next to
// its reference so that ratios come from neighbouring runs on a shared machine. Threads: the
// OMP_NUM_THREADS (Target::threads of the generated code, oneDNN's OpenMP threads, and the
// reader threads of BM_DramRead): run with OMP_NUM_THREADS=1 and =2.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/module.h"
#include "relax/runtime/tensor.h"
#include "bandwidth.h"
#include "matmul_modules.h"

namespace {

using relax::DataType;
using relax::runtime::Tensor;
using relax::runtime::Value;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "matvec_bench: %s\n", message.c_str());
  std::abort();
}

int threads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  const int n = env != nullptr ? std::atoi(env) : 0;
  return n > 0 ? n : static_cast<int>(std::thread::hardware_concurrency());
}

Tensor filled(std::vector<int64_t> shape, DataType dtype) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype);
  if (!t.ok()) fail(std::string(t.status().message()));
  auto* bytes = static_cast<uint8_t*>(t->data());
  if (dtype == DataType::float32()) {
    float* p = t->data_as_or_die<float>();
    for (int64_t i = 0; i < t->numel(); ++i) p[i] = static_cast<float>((i * 7 + 3) % 17) * 0.01f;
  } else {
    for (size_t i = 0; i < t->nbytes(); ++i) bytes[i] = static_cast<uint8_t>((i * 37 + 11) % 251) & 0x3F;
  }
  return *t;
}

void BM_DramRead(benchmark::State& state) { relax_bench::dram_read(state, threads()); }

// ---------------------------------------------------------------------------------------------
// Modules.

using Kind = relax_bench::MatmulKind;
using relax_bench::matmul_module_text;

const relax::runtime::Module& module_for(Kind kind, int64_t k) {
  static std::map<std::pair<int, int64_t>, relax::runtime::Module> modules;  // (one thread count a run)
  const auto key = std::make_pair(static_cast<int>(kind), k);
  auto it = modules.find(key);
  if (it != modules.end()) return it->second;
  absl::StatusOr<relax::IRModule> mod = relax::parse_module(matmul_module_text(kind, k));
  if (!mod.ok()) fail(std::string(mod.status().message()));
  relax::Target target;
  if (kind != Kind::kOneDnn) target.libraries.clear();  // -libs=none: generated code
  target.threads = threads();  // (the thread budget's default is the machine's cores)
  absl::StatusOr<relax::runtime::Module> built = relax::build(*mod, target);
  if (!built.ok()) fail(std::string(built.status().message()));
  if (kind == Kind::kOneDnn && !built->executable().kernel_names.empty()) fail("the linear was not sent to oneDNN");
  return modules.emplace(key, *built).first->second;
}

/// The weight arguments of `kind` at K = N = k, and their bytes.
std::vector<Value> weights(Kind kind, int64_t k, double* bytes) {
  const int64_t n = k;
  switch (kind) {
    case Kind::kF32:
    case Kind::kOneDnn:
      *bytes = static_cast<double>(k * n * 4);
      return {filled({k, n}, DataType::float32())};
    case Kind::kBf16:
      *bytes = static_cast<double>(k * n * 2);
      return {filled({k, n}, DataType::bfloat16())};
    case Kind::kInt4:
      *bytes = static_cast<double>(k / 2 * n + k / 32 * n * 4);
      return {filled({k / 2, n}, DataType{DataType::Code::kUInt, 8, 1}), filled({k / 32, n}, DataType::float32())};
    case Kind::kInt8:
      *bytes = static_cast<double>(k * n + k / 32 * n * 4);
      return {filled({k, n}, DataType{DataType::Code::kInt, 8, 1}), filled({k / 32, n}, DataType::float32())};
  }
  return {};
}

void run(benchmark::State& state, Kind kind, int64_t m, int64_t k) {
  const relax::runtime::Module& module = module_for(kind, k);
  double bytes = 0;
  std::vector<Value> args = {filled({m, k}, DataType::float32())};
  for (Value& w : weights(kind, k, &bytes)) args.push_back(std::move(w));
  auto call = [&] {
    absl::StatusOr<Value> y = module["main"].call(args);
    if (!y.ok()) fail(std::string(y.status().message()));
    benchmark::DoNotOptimize(y);
  };
  call();  // warm: the plan, oneDNN's primitive and packed weights
  for (auto _ : state) call();
  if (m == 1) {
    state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * static_cast<double>(m * k * k) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  }
}

[[maybe_unused]] const bool registered = [] {
  auto add = [](const std::string& name, auto fn) {
    return benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMicrosecond)->UseRealTime();
  };
  for (int64_t k : {2048, 4096}) {
    add("BM_DramRead", BM_DramRead);
    const std::pair<const char*, Kind> rows[] = {
        {"BM_RowF32", Kind::kF32}, {"BM_RowBf16", Kind::kBf16}, {"BM_RowInt4", Kind::kInt4}, {"BM_RowInt8", Kind::kInt8},
        {"BM_RowOneDnn", Kind::kOneDnn}};
    for (const auto& [name, kind] : rows) {
      if (kind == Kind::kOneDnn && relax::Target::default_libraries().empty()) continue;
      add(absl::StrFormat("%s/K:%d", name, k), [kind = kind, k](benchmark::State& s) { run(s, kind, 1, k); });
    }
  }
  add("BM_DramRead", BM_DramRead);
  for (int64_t m : {128, 512}) {
    add(absl::StrFormat("BM_TileGenerated/M:%d", m), [m](benchmark::State& s) { run(s, Kind::kF32, m, 2048); });
    if (!relax::Target::default_libraries().empty()) {
      add(absl::StrFormat("BM_TileOneDnn/M:%d", m), [m](benchmark::State& s) { run(s, Kind::kOneDnn, m, 2048); });
    }
  }
  return true;
}();

}  // namespace
