// Concurrent callers and the process's one budget of kernel threads
// (relax/runtime/thread_budget.h), side by side in one run:
//   - budget:    kernels claim their threads from the runtime's budget (the default);
//   - per-call:  the library is handed no runtime table, so each parallel loop forks a team
//                of the machine's size whatever else runs, as every call did before the budget
//                (4 callers on 2 cores: 8 kernel threads on 2 cores).
// One relax::build of an elementwise kernel with a parallel loop, at 256K and 1M elements: a
// memory-bound one (x * y + x) and a compute-bound one (silu(x) * y). Run with 1 and 4 calling
// threads; items/s is the total throughput of all callers (real time), and items/cpu_s the
// items per second of CPU time the whole process used (OpenMP workers, spinning included), which
// the other processes of a shared machine disturb less. Results are checked once before timing.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/runtime/thread_budget.h"

namespace {

using relax::DataType;
using relax::runtime::Tensor;

enum Kernel : int { kMultiplyAdd = 0, kSiluMul = 1 };
enum Mode : int { kBudget = 0, kPerCall = 1 };

relax::runtime::Module compile(int kernel) {
  relax::SymVar n("n");
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n}, DataType::float32()));
  relax::Var y = f.param("y", relax::tensor_sinfo({n}, DataType::float32()));
  if (kernel == kMultiplyAdd) {
    f.ret(f.emit(relax::op::add(f.emit(relax::op::multiply(x, y)), x)));
  } else {
    f.ret(f.emit(relax::op::multiply(f.emit(relax::op::silu(x)), y)));
  }
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  absl::StatusOr<relax::runtime::Module> m = relax::build(*mb.build(), target);
  if (!m.ok()) {
    std::fprintf(stderr, "build failed: %s\n", std::string(m.status().message()).c_str());
    std::abort();
  }
  return *m;
}

const relax::runtime::Module& module(int kernel) {
  static const relax::runtime::Module modules[] = {compile(kMultiplyAdd), compile(kSiluMul)};
  return modules[kernel];
}

// Hands the module's library the runtime's table, or none (its loops then fork as they please).
void set_mode(const relax::runtime::Module& m, int mode) {
  void* handle = ::dlopen(m.kernels()->path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) std::abort();
  auto set_api = reinterpret_cast<RelaxSetRuntimeApiFn>(::dlsym(handle, "relax_set_runtime_api"));
  if (set_api == nullptr) std::abort();
  set_api(mode == kBudget ? relax::runtime::kernel_runtime_api() : nullptr);
  ::dlclose(handle);
}

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

Tensor filled(int64_t n, float v) {
  Tensor t = *Tensor::empty({n}, DataType::float32());
  for (int64_t i = 0; i < n; ++i) t.data_as_or_die<float>()[i] = v + static_cast<float>(i % 7) * 0.125f;
  return t;
}

float expected(int kernel, float x, float y) {
  return kernel == kMultiplyAdd ? x * y + x : x / (1.0f + std::exp(-x)) * y;
}

// Args: kernel, mode, n.
void BM_Concurrent(benchmark::State& state) {
  const int kernel = static_cast<int>(state.range(0));
  const int mode = static_cast<int>(state.range(1));
  const int64_t n = state.range(2);
  const relax::runtime::Module& m = module(kernel);
  const relax::runtime::Function main = m["main"];
  if (state.thread_index() == 0) set_mode(m, mode);
  const Tensor x = filled(n, 0.5f), y = filled(n, 2.0f);
  absl::StatusOr<relax::runtime::Value> check = main(x, y);
  const float want = expected(kernel, x.data_as_or_die<float>()[n - 1], y.data_as_or_die<float>()[n - 1]);
  if (!check.ok() || std::abs(check->tensor_or_die().data_as_or_die<float>()[n - 1] - want) > 1e-5f * (1 + want)) {
    state.SkipWithError("wrong result");
    return;
  }
  double cpu_start = 0;
  for (auto _ : state) {
    if (state.thread_index() == 0 && cpu_start == 0) cpu_start = process_cpu_seconds();
    benchmark::DoNotOptimize(main(x, y));
  }
  if (state.thread_index() == 0) {
    // Thread 0's loop spans the others' (they start together); its share of the items is 1/threads.
    const double cpu = process_cpu_seconds() - cpu_start;
    state.counters["items/cpu_s"] = benchmark::Counter(
        cpu > 0 ? static_cast<double>(state.iterations()) * static_cast<double>(n) * state.threads() / cpu : 0.0);
  }
  state.SetLabel(std::string(kernel == kMultiplyAdd ? "x*y+x" : "silu(x)*y") +
                 (mode == kBudget ? " budget" : " per-call teams"));
  state.SetItemsProcessed(state.iterations() * n);
}

BENCHMARK(BM_Concurrent)
    ->ArgsProduct({{kMultiplyAdd, kSiluMul}, {kBudget, kPerCall}, {1 << 18, 1 << 20}})
    ->Threads(1)
    ->Threads(4)
    ->UseRealTime();

}  // namespace
