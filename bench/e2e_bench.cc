// End-to-end cost of compiled models against Eigen, in the same run.
//
// One relax::build per model (symbolic batch n), then calls at several n:
//   - matmul (n, 256) x (256, 256): the legalized loop nest (no tiling or
//     library dispatch yet) vs Eigen's GEMM;
//   - softmax over (n, 1024): the legalized three-pass kernel vs an Eigen
//     expression;
// Each result's error against Eigen is checked once before timing.
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <filesystem>

#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"

namespace {

using relax::DataType;
using relax::runtime::Tensor;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;

constexpr int64_t kK = 256, kCols = 256, kSoftmaxCols = 1024;

Tensor filled(std::vector<int64_t> shape) {
  Tensor t = *Tensor::empty(std::move(shape), DataType::float32());
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as_or_die<float>()[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
  return t;
}

relax::runtime::Module compile(const relax::IRModule& mod) {
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  absl::StatusOr<relax::runtime::Module> m = relax::build(mod, target);
  if (!m.ok()) {
    std::fprintf(stderr, "build failed: %s\n", std::string(m.status().message()).c_str());
    std::abort();
  }
  return *m;
}

const relax::runtime::Module& matmul_module() {
  static const relax::runtime::Module m = [] {
    relax::SymVar n("n");
    relax::ModuleBuilder mb;
    relax::FunctionBuilder f = mb.function("main");
    relax::Var x = f.param("x", relax::tensor_sinfo({n, kK}, DataType::float32()));
    relax::Var w = f.param("w", relax::tensor_sinfo({kK, kCols}, DataType::float32()));
    f.ret(f.emit(relax::op::matmul(x, w)));
    return compile(*mb.build());
  }();
  return m;
}

const relax::runtime::Module& softmax_module() {
  static const relax::runtime::Module m = [] {
    relax::SymVar n("n");
    relax::ModuleBuilder mb;
    relax::FunctionBuilder f = mb.function("main");
    relax::Var x = f.param("x", relax::tensor_sinfo({n, kSoftmaxCols}, DataType::float32()));
    f.ret(f.emit(relax::op::softmax(x, -1)));
    return compile(*mb.build());
  }();
  return m;
}

void BM_RelaxMatmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor x = filled({n, kK}), w = filled({kK, kCols});
  const relax::runtime::Module& m = matmul_module();
  absl::StatusOr<relax::runtime::Value> check = m["main"](x, w);
  RowMatrix expected = MatrixMap(x.data_as_or_die<float>(), n, kK) * MatrixMap(w.data_as_or_die<float>(), kK, kCols);
  if (!check.ok() ||
      (MatrixMap(check->tensor_or_die().data_as_or_die<float>(), n, kCols) - expected).cwiseAbs().maxCoeff() > 1e-3f) {
    state.SkipWithError("wrong result");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(m["main"](x, w));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(n * kK * kCols),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

void BM_EigenMatmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor x = filled({n, kK}), w = filled({kK, kCols});
  RowMatrix y(n, kCols);
  for (auto _ : state) {
    y.noalias() = MatrixMap(x.data_as_or_die<float>(), n, kK) * MatrixMap(w.data_as_or_die<float>(), kK, kCols);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(n * kK * kCols),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

void BM_RelaxSoftmax(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor x = filled({n, kSoftmaxCols});
  const relax::runtime::Module& m = softmax_module();
  for (auto _ : state) benchmark::DoNotOptimize(m["main"](x));
  state.SetBytesProcessed(state.iterations() * n * kSoftmaxCols * 8);
}

void BM_EigenSoftmax(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor x = filled({n, kSoftmaxCols});
  RowMatrix y(n, kSoftmaxCols);
  for (auto _ : state) {
    MatrixMap in(x.data_as_or_die<float>(), n, kSoftmaxCols);
    y = (in.colwise() - in.rowwise().maxCoeff()).array().exp();
    y.array().colwise() /= y.rowwise().sum().array();
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * n * kSoftmaxCols * 8);
}

BENCHMARK(BM_RelaxMatmul)->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EigenMatmul)->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RelaxSoftmax)->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EigenSoftmax)->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

}  // namespace
