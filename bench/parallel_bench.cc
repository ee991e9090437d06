// What running parallel loops on the runtime's thread pool costs a compiled elementwise add,
// side by side in one run:
//   - serial:    Target::threads = 1 (plain loops, no pool);
//   - threshold: the default target (all threads, parallel only when the
//                loop's work reaches Target::parallel_min_work);
//   - always:    all threads, parallel_min_work = 0 (every call forks and
//                joins, as before the threshold).
// Each is one relax::build of main(x: (n,), y: (n,)) = x + y, called at sizes
// from 16 elements to 4M, so the fixed fork/join cost shows against the work
// and the crossover where threads start to pay shows too (that is how the
// default threshold was chosen). Results are checked once before timing.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"

namespace {

using relax::DataType;
using relax::runtime::Tensor;

enum Variant : int { kSerial = 0, kThreshold = 1, kAlways = 2 };

relax::runtime::Module compile(int variant) {
  relax::SymVar n("n");
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n}, DataType::float32()));
  relax::Var y = f.param("y", relax::tensor_sinfo({n}, DataType::float32()));
  f.ret(f.emit(relax::op::add(x, y)));
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  if (variant == kSerial) target.threads = 1;
  if (variant == kAlways) target.parallel_min_work = 0;
  absl::StatusOr<relax::runtime::Module> m = relax::build(*mb.build(), target);
  if (!m.ok()) {
    std::fprintf(stderr, "build failed: %s\n", std::string(m.status().message()).c_str());
    std::abort();
  }
  return *m;
}

const relax::runtime::Module& module(int variant) {
  static const relax::runtime::Module modules[] = {compile(kSerial), compile(kThreshold), compile(kAlways)};
  return modules[variant];
}

Tensor filled(int64_t n, float v) {
  Tensor t = *Tensor::empty({n}, DataType::float32());
  for (int64_t i = 0; i < n; ++i) t.data_as_or_die<float>()[i] = v;
  return t;
}

// Args: variant, n.
void BM_Add(benchmark::State& state) {
  const int variant = static_cast<int>(state.range(0));
  const int64_t n = state.range(1);
  const relax::runtime::Function main = module(variant)["main"];
  const Tensor x = filled(n, 1.0f), y = filled(n, 2.0f);
  absl::StatusOr<relax::runtime::Value> check = main(x, y);
  if (!check.ok() || check->tensor_or_die().data_as_or_die<float>()[n - 1] != 3.0f) {
    state.SkipWithError("wrong result");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(main(x, y));
  state.SetLabel(variant == kSerial ? "1 thread" : variant == kThreshold ? "threshold" : "always parallel");
  state.SetItemsProcessed(state.iterations() * n);
}

BENCHMARK(BM_Add)->ArgsProduct({{kSerial, kThreshold, kAlways},
                                {16, 1024, 8192, 32768, 131072, 1 << 20, 1 << 22}});

}  // namespace
