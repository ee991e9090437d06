// The CUDA target against the GPU and its libraries, in one run (tests/cuda/device_check.sh runs
// it on a GPU machine; without a device every benchmark reports the reason and measures nothing):
//   BM_MatmulGenerated/M:m     y[m, 4096] = x[m, 4096] @ W[4096, 4096] float32, compiled for
//                              "cuda -libs=none": the generated tiled kernel (the matvec for
//                              m <= 8: the rows are symbolic, the launcher chooses);
//   BM_MatmulLibrary/M:m       the same product as `linear` through the default cuda target
//                              (dispatch-library: cuBLASLt);
//   BM_MatmulCublas/M:m        cublasSgemm called directly on the same shapes: the yardstick;
//                              all three in TFLOP/s;
//   BM_DecodeMatvec/<w>/K:k    one row (m = 1) through the generated matvec kernel with float32,
//                              bfloat16 or int4 weights (dequantised in the kernel): GB/s of
//                              weights read, and hbm_fraction = GB/s / the device's peak memory
//                              bandwidth (DeviceInfo::peak_memory_bandwidth); /M:4 four rows
//                              (a batched decode step) through the same kernel, whose launcher
//                              takes the matvec for at most 8 rows;
//   BM_LlamaDecode/<w>/b:B/ctx:C  one decode step of the TinyLlama-shape model (relax/models/)
//                              for B sequences holding C tokens: tokens/s;
//   BM_LlamaPrefill/<w>/n:N    one prompt of N tokens: tokens/s;
//   BM_Replay/<graphs|plain>   a chain of 48 small elementwise kernels: replayed plans captured
//                              as CUDA graphs against replayed plans launched one by one.
// Every iteration ends with runtime::cuda::synchronize, so times are device times plus the
// launch path. The model's weights are written to RELAX_LLAMA_DIR (default
// /tmp/relax_llama_bench) on first use, as llama_bench does.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "matmul_modules.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/models/llama.h"
#include "relax/models/llama_model.h"
#include "relax/runtime/cuda.h"
#include "relax/runtime/module.h"
#include "relax/runtime/replay.h"
#include "relax/runtime/tensor.h"
#include "relax/transform/pipeline.h"

namespace {

using relax::DataType;
using relax::Device;
using relax::runtime::Tensor;
using relax::runtime::Value;
using relax_bench::MatmulKind;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "cuda_bench: %s\n", message.c_str());
  std::abort();
}

// False (with the reason given to `state`) when there is no device to measure on.
bool have_device(benchmark::State& state) {
  absl::Status s = relax::runtime::cuda::check_available();
  if (s.ok()) return true;
  state.SkipWithError(absl::StrCat("no CUDA device: ", s.message()).c_str());
  return false;
}

void sync() {
  if (absl::Status s = relax::runtime::cuda::synchronize(0); !s.ok()) fail(std::string(s.message()));
}

// A host tensor of `shape` with small deterministic values, copied to the GPU.
Tensor device_filled(std::vector<int64_t> shape, DataType dtype) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype);
  if (!t.ok()) fail(std::string(t.status().message()));
  auto* bytes = static_cast<uint8_t*>(t->data());
  if (dtype == DataType::float32()) {
    auto* p = static_cast<float*>(t->data());
    for (int64_t i = 0; i < t->numel(); ++i) p[i] = static_cast<float>((i * 7 + 3) % 17) * 0.01f;
  } else {
    for (size_t i = 0; i < t->nbytes(); ++i) bytes[i] = static_cast<uint8_t>((i * 37 + 11) % 251) & 0x3F;
  }
  absl::StatusOr<Tensor> on_device = t->to(Device::cuda());
  if (!on_device.ok()) fail(std::string(on_device.status().message()));
  return *on_device;
}

const relax::runtime::Module& matmul_module(MatmulKind kind, int64_t k, bool library) {
  static std::map<std::tuple<int, int64_t, bool>, relax::runtime::Module> modules;
  const auto key = std::make_tuple(static_cast<int>(kind), k, library);
  if (auto it = modules.find(key); it != modules.end()) return it->second;
  absl::StatusOr<relax::IRModule> mod = relax::parse_module(relax_bench::matmul_module_text(kind, k));
  if (!mod.ok()) fail(std::string(mod.status().message()));
  absl::StatusOr<relax::Target> target = relax::Target::parse(library ? "cuda" : "cuda -libs=none");
  if (!target.ok()) fail(std::string(target.status().message()));
  absl::StatusOr<relax::runtime::Module> built = relax::build(*mod, *target);
  if (!built.ok()) fail(std::string(built.status().message()));
  return modules.emplace(key, *built).first->second;
}

std::vector<Value> matmul_weights(MatmulKind kind, int64_t k, double* bytes) {
  const int64_t n = k;
  switch (kind) {
    case MatmulKind::kF32:
    case MatmulKind::kOneDnn:
      *bytes = static_cast<double>(k * n * 4);
      return {device_filled({k, n}, DataType::float32())};
    case MatmulKind::kBf16:
      *bytes = static_cast<double>(k * n * 2);
      return {device_filled({k, n}, DataType::bfloat16())};
    case MatmulKind::kInt4:
      *bytes = static_cast<double>(k / 2 * n + k / 32 * n * 4);
      return {device_filled({k / 2, n}, DataType{DataType::Code::kUInt, 8, 1}),
              device_filled({k / 32, n}, DataType::float32())};
    case MatmulKind::kInt8:
      *bytes = static_cast<double>(k * n + k / 32 * n * 4);
      return {device_filled({k, n}, DataType{DataType::Code::kInt, 8, 1}), device_filled({k / 32, n}, DataType::float32())};
  }
  return {};
}

void run_matmul(benchmark::State& state, MatmulKind kind, int64_t m, int64_t k, bool library) {
  if (!have_device(state)) return;
  const relax::runtime::Module& module = matmul_module(kind, k, library);
  double bytes = 0;
  std::vector<Value> args = {device_filled({m, k}, DataType::float32())};
  for (Value& w : matmul_weights(kind, k, &bytes)) args.push_back(std::move(w));
  auto call = [&] {
    absl::StatusOr<Value> y = module["main"].call(args);
    if (!y.ok()) fail(std::string(y.status().message()));
    sync();
  };
  call();
  for (auto _ : state) call();
  if (m <= 8) {  // the matvec kernel: the weights' bytes bound it
    state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    absl::StatusOr<relax::runtime::cuda::DeviceInfo> info = relax::runtime::cuda::device_info(0);
    if (info.ok() && info->peak_memory_bandwidth > 0) {
      state.counters["hbm_fraction"] =
          benchmark::Counter(bytes / info->peak_memory_bandwidth, benchmark::Counter::kIsIterationInvariantRate);
    }
  } else {
    state.counters["TFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * k * k) * 1e-12,
                                                   benchmark::Counter::kIsIterationInvariantRate);
  }
}

// cublasSgemm on the same row-major shapes: y^T = W^T x^T in column-major terms.
void BM_MatmulCublas(benchmark::State& state, int64_t m, int64_t k) {
  if (!have_device(state)) return;
  const int64_t n = k;
  float* x = nullptr;
  float* w = nullptr;
  float* y = nullptr;
  if (cudaMalloc(&x, sizeof(float) * m * k) != cudaSuccess || cudaMalloc(&w, sizeof(float) * k * n) != cudaSuccess ||
      cudaMalloc(&y, sizeof(float) * m * n) != cudaSuccess) {
    fail("cudaMalloc failed");
  }
  cudaMemset(x, 0, sizeof(float) * m * k);
  cudaMemset(w, 0, sizeof(float) * k * n);
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) fail("cublasCreate failed");
  const float one = 1.f;
  const float zero = 0.f;
  auto call = [&] {
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one,
                w, static_cast<int>(n), x, static_cast<int>(k), &zero, y, static_cast<int>(n));
    cudaDeviceSynchronize();
  };
  call();
  for (auto _ : state) call();
  state.counters["TFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * k * n) * 1e-12,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  cublasDestroy(handle);
  cudaFree(x);
  cudaFree(w);
  cudaFree(y);
}

// ---------------------------------------------------------------------------------------------
// The language model.

std::string llama_env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

relax::models::LlamaModel& llama(relax::models::WeightFormat format) {
  static std::map<int, relax::models::LlamaModel> models;
  if (auto it = models.find(static_cast<int>(format)); it != models.end()) return it->second;
  relax::models::LlamaConfig c = relax::models::LlamaConfig::tiny_llama();
  c.weights = format;
  const std::filesystem::path dir = llama_env_or("RELAX_LLAMA_DIR", "/tmp/relax_llama_bench");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / absl::StrCat("llama_h", c.hidden, "_l", c.layers, "_",
                                               relax::models::weight_format_name(format), ".safetensors"))
                               .string();
  if (!std::filesystem::exists(path)) {
    if (absl::Status s = relax::models::write_random_weights(c, 1, path); !s.ok()) fail(std::string(s.message()));
  }
  relax::models::CompileOptions options;
  absl::StatusOr<relax::Target> target = relax::Target::parse("cuda");
  if (!target.ok()) fail(std::string(target.status().message()));
  options.target = *target;
  absl::StatusOr<relax::models::LlamaModel> m = relax::models::LlamaModel::load(path, options);
  if (!m.ok()) fail(std::string(m.status().message()));
  return models.emplace(static_cast<int>(format), *std::move(m)).first->second;
}

void BM_LlamaDecode(benchmark::State& state, relax::models::WeightFormat format, int64_t batch, int64_t context) {
  if (!have_device(state)) return;
  relax::models::LlamaModel& model = llama(format);
  absl::StatusOr<relax::runtime::KVCache> cache = model.new_cache();
  if (!cache.ok()) fail(std::string(cache.status().message()));
  std::vector<int64_t> ids;
  std::vector<std::vector<int64_t>> tokens;
  for (int64_t s = 0; s < batch; ++s) {
    ids.push_back(s);
    tokens.push_back({1 + s});
  }
  for (auto _ : state) {
    state.PauseTiming();
    cache->reset_all();
    if (absl::Status s = cache->advance(ids, context); !s.ok()) fail(std::string(s.message()));
    state.ResumeTiming();
    absl::StatusOr<Tensor> logits = model.forward(tokens, ids, *cache);
    if (!logits.ok()) fail(std::string(logits.status().message()));
  }
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_LlamaPrefill(benchmark::State& state, relax::models::WeightFormat format, int64_t n) {
  if (!have_device(state)) return;
  relax::models::LlamaModel& model = llama(format);
  absl::StatusOr<relax::runtime::KVCache> cache = model.new_cache();
  if (!cache.ok()) fail(std::string(cache.status().message()));
  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < n; ++i) prompt.push_back(1 + i % 500);
  for (auto _ : state) {
    state.PauseTiming();
    cache->reset_all();
    state.ResumeTiming();
    absl::StatusOr<Tensor> logits = model.forward({prompt}, {0}, *cache);
    if (!logits.ok()) fail(std::string(logits.status().message()));
  }
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

// ---------------------------------------------------------------------------------------------
// Graph replay: many small kernels, where launches dominate.

std::string chain_module_text(int kernels) {
  std::string body;
  std::string prev = "x";
  for (int i = 0; i < kernels; ++i) {
    const std::string next = absl::StrCat("t", i);
    absl::StrAppend(&body, "      ", i + 1 == kernels ? "output " : "", next, " = ", i % 2 == 0 ? "tanh" : "sigmoid",
                    "(", prev, ")\n");
    prev = next;
  }
  return absl::StrCat("module {\n  func @main(x: Tensor[(n, 1024), float32]) -> Tensor[(n, 1024), float32] {\n",
                      "    dataflow {\n", body, "    }\n    return ", prev, "\n  }\n}\n");
}

void BM_Replay(benchmark::State& state, bool graphs) {
  if (!have_device(state)) return;
  absl::StatusOr<relax::IRModule> mod = relax::parse_module(chain_module_text(48));
  if (!mod.ok()) fail(std::string(mod.status().message()));
  // Fusion would make the chain one kernel: build it unfused, so that the launches remain.
  relax::transform::PassManager passes = relax::transform::default_pipeline(*relax::Target::parse("cuda"));
  if (absl::Status s = passes.remove("fuse-ops"); !s.ok()) fail(std::string(s.message()));
  absl::StatusOr<relax::runtime::Module> module = relax::build(*mod, *relax::Target::parse("cuda"), passes);
  if (!module.ok()) fail(std::string(module.status().message()));
  relax::runtime::ReplayOptions options;
  options.max_cuda_graphs = graphs ? 8 : 0;
  module->set_replay_options(options);
  std::vector<Value> args = {device_filled({64, 1024}, DataType::float32())};
  auto call = [&] {
    absl::StatusOr<Value> y = (*module)["main"].call(args);
    if (!y.ok()) fail(std::string(y.status().message()));
    sync();
  };
  for (int i = 0; i < 4; ++i) call();  // record the plan, capture the graph
  for (auto _ : state) call();
  state.counters["kernels"] = 48;
}

[[maybe_unused]] const bool registered = [] {
  auto add = [](const std::string& name, auto fn) {
    return benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMicrosecond)->UseRealTime();
  };
  for (int64_t m : {1, 128, 2048}) {
    add(absl::StrFormat("BM_MatmulGenerated/M:%d", m), [m](benchmark::State& s) { run_matmul(s, MatmulKind::kF32, m, 4096, false); });
    add(absl::StrFormat("BM_MatmulLibrary/M:%d", m), [m](benchmark::State& s) { run_matmul(s, MatmulKind::kOneDnn, m, 4096, true); });
    add(absl::StrFormat("BM_MatmulCublas/M:%d", m), [m](benchmark::State& s) { BM_MatmulCublas(s, m, 4096); });
  }
  const std::pair<const char*, MatmulKind> rows[] = {{"f32", MatmulKind::kF32}, {"bf16", MatmulKind::kBf16}, {"int4", MatmulKind::kInt4}};
  for (int64_t k : {4096, 8192}) {
    for (const auto& [name, kind] : rows) {
      add(absl::StrFormat("BM_DecodeMatvec/%s/K:%d", name, k), [kind = kind, k](benchmark::State& s) { run_matmul(s, kind, 1, k, false); });
    }
  }
  // A batched decode step: 4 rows through the same kernel, the matvec chosen at launch.
  for (const auto& [name, kind] : rows) {
    add(absl::StrFormat("BM_DecodeMatvec/%s/K:4096/M:4", name), [kind = kind](benchmark::State& s) { run_matmul(s, kind, 4, 4096, false); });
  }
  using relax::models::WeightFormat;
  const std::pair<const char*, WeightFormat> formats[] = {{"f32", WeightFormat::kFloat32}, {"int4", WeightFormat::kInt4}};
  for (const auto& [name, format] : formats) {
    for (int64_t b : {1, 4}) {
      for (int64_t ctx : {128, 1024}) {
        add(absl::StrFormat("BM_LlamaDecode/%s/b:%d/ctx:%d", name, b, ctx),
            [format = format, b, ctx](benchmark::State& s) { BM_LlamaDecode(s, format, b, ctx); });
      }
    }
    add(absl::StrFormat("BM_LlamaPrefill/%s/n:512", name), [format = format](benchmark::State& s) { BM_LlamaPrefill(s, format, 512); });
  }
  add("BM_Replay/graphs", [](benchmark::State& s) { BM_Replay(s, true); });
  add("BM_Replay/plain", [](benchmark::State& s) { BM_Replay(s, false); });
  return true;
}();

}  // namespace
