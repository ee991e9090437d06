// The runtime's one thread pool per process (relax/runtime/thread_pool.h) against an OpenMP
// team forked per call, side by side in one run, for an elementwise kernel out = x * y + x:
//   - omp:     the loop under `#pragma omp parallel for num_threads(budget)`, compiled here
//              with the host compiler and -fopenmp (what generated kernels did before the
//              pool, without the budget's claims): every caller forks its own team, so 4
//              callers on 2 cores run 8 threads;
//   - pool:    the same loop body, compiled the same way, run by relax::runtime::parallel_for
//              (chunks on the pool's workers, teams claimed from the budget);
//   - module:  relax::build of main(x, y) = x * y + x: the generated kernel on the pool, plus
//              the VM's call and the output's allocation.
// At 32K elements (the default Target::parallel_min_work: the smallest call that gets a team)
// and 4M (memory-bound), with 1 and 4 calling threads. items/s is the total throughput of all
// callers (real time); items/cpu_s the items per second of CPU time the whole process used
// (workers and OpenMP's spinning included). Results are checked once before timing.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/runtime/thread_budget.h"
#include "relax/runtime/thread_pool.h"

namespace {

using relax::DataType;
using relax::runtime::Tensor;

enum Mode : int { kOmp = 0, kPool = 1, kModule = 2 };

relax::Target bench_target() {
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  return target;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

// The hand-written loops, compiled by the same compiler and flags as generated kernels.
constexpr char kLoops[] = R"cpp(
#include <cstdint>
struct Args { const float* x; const float* y; float* out; };
extern "C" void omp_multiply_add(const Args* a, int64_t n, int threads) {
  const float* __restrict__ x = a->x;
  const float* __restrict__ y = a->y;
  float* __restrict__ out = a->out;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * y[i] + x[i];
}
extern "C" int32_t pool_multiply_add(void* ctx, int64_t lo, int64_t hi) {
  const Args* a = static_cast<const Args*>(ctx);
  const float* __restrict__ x = a->x;
  const float* __restrict__ y = a->y;
  float* __restrict__ out = a->out;
  for (int64_t i = lo; i < hi; ++i) out[i] = x[i] * y[i] + x[i];
  return 0;
}
)cpp";

struct Args {
  const float* x;
  const float* y;
  float* out;
};
using OmpFn = void (*)(const Args*, int64_t, int);

struct Loops {
  OmpFn omp = nullptr;
  RelaxParallelBodyFn pool = nullptr;
};

const Loops& loops() {
  static const Loops l = [] {
    absl::StatusOr<relax::CompiledLibrary> lib = relax::compile_shared_object(kLoops, bench_target(), {"-fopenmp"});
    if (!lib.ok()) die("compiling the loops failed: " + std::string(lib.status().message()));
    void* handle = ::dlopen(lib->library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) die(::dlerror());
    Loops out;
    out.omp = reinterpret_cast<OmpFn>(::dlsym(handle, "omp_multiply_add"));
    out.pool = reinterpret_cast<RelaxParallelBodyFn>(::dlsym(handle, "pool_multiply_add"));
    if (out.omp == nullptr || out.pool == nullptr) die("the loops' symbols are missing");
    return out;
  }();
  return l;
}

const relax::runtime::Module& module() {
  static const relax::runtime::Module m = [] {
    relax::SymVar n("n");
    relax::ModuleBuilder mb;
    relax::FunctionBuilder f = mb.function("main");
    relax::Var x = f.param("x", relax::tensor_sinfo({n}, DataType::float32()));
    relax::Var y = f.param("y", relax::tensor_sinfo({n}, DataType::float32()));
    f.ret(f.emit(relax::op::add(f.emit(relax::op::multiply(x, y)), x)));
    absl::StatusOr<relax::runtime::Module> built = relax::build(*mb.build(), bench_target());
    if (!built.ok()) die("build failed: " + std::string(built.status().message()));
    return *built;
  }();
  return m;
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

// One call in `mode`; the output's last element.
float call(int mode, const Tensor& x, const Tensor& y, Tensor& out) {
  const int64_t n = x.numel();
  Args args{x.data_as_or_die<float>(), y.data_as_or_die<float>(), out.data_as_or_die<float>()};
  switch (mode) {
    case kOmp:
      loops().omp(&args, n, relax::runtime::kernel_thread_budget());
      return args.out[n - 1];
    case kPool:
      relax::runtime::parallel_for(0, n, 0, loops().pool, &args);
      return args.out[n - 1];
    default: {
      absl::StatusOr<relax::runtime::Value> v = module()["main"](x, y);
      return v.ok() ? v->tensor_or_die().data_as_or_die<float>()[n - 1] : NAN;
    }
  }
}

// Args: mode, n.
void BM_Concurrent(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  const int64_t n = state.range(1);
  const Tensor x = filled(n, 0.5f), y = filled(n, 2.0f);
  Tensor out = filled(n, 0.0f);
  const float xl = x.data_as_or_die<float>()[n - 1], yl = y.data_as_or_die<float>()[n - 1];
  const float want = xl * yl + xl;
  if (std::abs(call(mode, x, y, out) - want) > 1e-5f * (1 + want)) {
    state.SkipWithError("wrong result");
    return;
  }
  relax::runtime::reset_thread_pool_stats();
  double cpu_start = 0;
  for (auto _ : state) {
    if (state.thread_index() == 0 && cpu_start == 0) cpu_start = process_cpu_seconds();
    benchmark::DoNotOptimize(call(mode, x, y, out));
  }
  if (state.thread_index() == 0) {
    // Thread 0's loop spans the others' (they start together); its share of the items is 1/threads.
    const double cpu = process_cpu_seconds() - cpu_start;
    state.counters["items/cpu_s"] = benchmark::Counter(
        cpu > 0 ? static_cast<double>(state.iterations()) * static_cast<double>(n) * state.threads() / cpu : 0.0);
    const relax::runtime::ThreadPoolStats pool = relax::runtime::thread_pool_stats();
    state.counters["pool_peak"] = pool.peak;
  }
  static const char* const kNames[] = {"omp fork per call", "pool", "module (pool)"};
  state.SetLabel(kNames[mode]);
  state.SetItemsProcessed(state.iterations() * n);
}

BENCHMARK(BM_Concurrent)
    ->ArgsProduct({{kOmp, kPool, kModule}, {1 << 15, 1 << 22}})
    ->Threads(1)
    ->Threads(4)
    ->UseRealTime();

}  // namespace
