// The cost of going through the runtime's oneDNN library functions: linear(x[M, K], w[N, K])
// called as the library function "onednn.linear" (resolved once, as Module::create does; the
// arguments as Values; its primitive cache lookup and argument checks on every call) against
// the same oneDNN matmul primitive created once and executed directly (memory objects bound
// once). M in {1, 8, 32, 128, 512}, K = N in {2048, 4096}, f32; plain row-major weights used
// in place, and prepacked (":packed" against a primitive with oneDNN's weights layout and the
// weights reordered once). The ratio of the GFLOP/s counters is the overhead of our layer.
// M = 1, K = N = 64 shows the fixed cost per call in microseconds. BM_LinearModule is the same
// linear as a user writes it: a graph function `linear(x, w)` with a symbolic M, compiled once
// by relax::build (dispatch-library sends it to "onednn.linear", ":packed" when the function
// marks w as a weight) and called through the VM at each M, output allocated per call.
// Threads: oneDNN's OpenMP threads (set OMP_NUM_THREADS).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_format.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/module.h"
#include "relax/runtime/onednn.h"
#include "relax/runtime/tensor.h"

namespace {

using relax::DataType;
using relax::runtime::LibraryFunction;
using relax::runtime::Tensor;
using relax::runtime::Value;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "onednn_bench: %s\n", message.c_str());
  std::abort();
}

Tensor filled(std::vector<int64_t> shape, float seed) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), DataType::float32());
  if (!t.ok()) fail(std::string(t.status().message()));
  float* p = t->data_as_or_die<float>();
  for (int64_t i = 0; i < t->numel(); ++i)
    p[i] = static_cast<float>((i * 7 + 3) % 17) * 0.01f * seed;
  return *t;
}

void set_counters(benchmark::State& state, int64_t m, int64_t k, int64_t n) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * k * n) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// The runtime's function, as the VM calls it (with a workspace as large as it asks for).
void run_library(benchmark::State& state, bool packed) {
  const int64_t m = state.range(0), k = state.range(1), n = k;
  const std::string name = packed ? "onednn.linear:packed" : "onednn.linear";
  absl::StatusOr<LibraryFunction> fn = relax::runtime::resolve_library_function(name);
  if (!fn.ok()) fail(std::string(fn.status().message()));
  absl::StatusOr<int64_t> bytes = relax::runtime::onednn_workspace_bytes(
      name, {{m, k}, {n, k}, {m, n}},
      {DataType::float32(), DataType::float32(), DataType::float32()});
  if (!bytes.ok()) fail(std::string(bytes.status().message()));
  std::vector<Value> args = {filled({m, k}, 1), filled({n, k}, 2), filled({m, n}, 0)};
  if (*bytes > 0) args.push_back(*Tensor::storage(*bytes));
  if (absl::Status s = (*fn)(args); !s.ok()) fail(std::string(s.message()));  // warm: create, pack
  for (auto _ : state) {
    absl::Status s = (*fn)(args);
    if (!s.ok()) fail(std::string(s.message()));
  }
  set_counters(state, m, k, n);
}

// The linear compiled as a module with a symbolic M (one build per K and packing).
const relax::runtime::Module& linear_module(int64_t k, bool packed) {
  static std::unordered_map<int64_t, relax::runtime::Module> modules;
  const int64_t key = k * 2 + (packed ? 1 : 0);
  auto it = modules.find(key);
  if (it != modules.end()) return it->second;
  const std::string text = absl::StrFormat(R"(module {
  func @main(x: Tensor[(m, %d), float32], w: Tensor[(%d, %d), float32]) -> Tensor[(m, %d), float32] %s {
    dataflow {
      output y = linear(x, w)
    }
    return y
  }
})",
                                           k, k, k, k, packed ? "attrs {weights = \"w\"}" : "");
  absl::StatusOr<relax::IRModule> mod = relax::parse_module(text);
  if (!mod.ok()) fail(std::string(mod.status().message()));
  absl::StatusOr<relax::runtime::Module> built = relax::build(*mod, relax::Target());
  if (!built.ok()) fail(std::string(built.status().message()));
  if (!built->executable().kernel_names.empty()) fail("the linear was not dispatched to oneDNN");
  return modules.emplace(key, *built).first->second;
}

void run_module(benchmark::State& state, bool packed) {
  const int64_t m = state.range(0), k = state.range(1), n = k;
  const relax::runtime::Module& module = linear_module(k, packed);
  Tensor x = filled({m, k}, 1), w = filled({n, k}, 2);
  if (absl::StatusOr<Value> y = module["main"](x, w); !y.ok()) fail(std::string(y.status().message()));
  for (auto _ : state) {
    absl::StatusOr<Value> y = module["main"](x, w);
    if (!y.ok()) fail(std::string(y.status().message()));
    benchmark::DoNotOptimize(y);
  }
  set_counters(state, m, k, n);
}

// oneDNN directly: one primitive, memory objects bound once.
void run_direct(benchmark::State& state, bool packed) {
  const int64_t m = state.range(0), k = state.range(1), n = k;
  using dt = dnnl::memory::data_type;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc src({m, k}, dt::f32, dnnl::memory::format_tag::ab);
  const dnnl::memory::desc user_weights({k, n}, dt::f32, dnnl::memory::format_tag::ba);  // w (N, K)
  const dnnl::memory::desc dst({m, n}, dt::f32, dnnl::memory::format_tag::ab);
  const dnnl::memory::desc weights =
      packed ? dnnl::memory::desc({k, n}, dt::f32, dnnl::memory::format_tag::any) : user_weights;
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), engine);
  dnnl::matmul matmul(pd);
  Tensor x = filled({m, k}, 1), w = filled({n, k}, 2), y = filled({m, n}, 0);
  dnnl::memory x_mem(src, engine, x.data()), y_mem(dst, engine, y.data());
  dnnl::memory w_mem(user_weights, engine, w.data());
  if (packed && !(pd.weights_desc() == user_weights)) {
    dnnl::memory reordered(pd.weights_desc(), engine);
    dnnl::reorder(w_mem, reordered).execute(stream, w_mem, reordered);
    stream.wait();
    w_mem = reordered;
  }
  const std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, x_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, y_mem}};
  matmul.execute(stream, args);
  stream.wait();
  for (auto _ : state) {
    matmul.execute(stream, args);
    stream.wait();
  }
  set_counters(state, m, k, n);
}

// Registered size by size, each variant next to its direct counterpart, so that the two
// figures of a ratio are measured close together on a shared machine.
[[maybe_unused]] const bool registered = [] {
  for (bool packed : {false, true}) {
    // K = N = 64 at M = 1 is almost no work: its time is the fixed cost of a call.
    for (int64_t k : {64, 2048, 4096}) {
      for (int64_t m : {1, 8, 32, 128, 512}) {
        if (k == 64 && m != 1) continue;
        const std::string suffix = packed ? "Packed" : "";
        for (int variant : {0, 1, 2}) {
          const char* names[] = {"BM_LinearModule", "BM_LinearLibrary", "BM_LinearDirect"};
          const std::string name = std::string(names[variant]) + suffix;
          benchmark::RegisterBenchmark(name.c_str(),
                                       [variant, packed](benchmark::State& state) {
                                         if (variant == 0) run_module(state, packed);
                                         if (variant == 1) run_library(state, packed);
                                         if (variant == 2) run_direct(state, packed);
                                       })
              ->Args({m, k})
              ->ArgNames({"M", "K"})
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
        }
      }
    }
  }
  return true;
}();

}  // namespace
