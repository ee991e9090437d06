// Many threads calling one Module at once (docs/architecture.md: a Module is safe to call from many
// threads; each call gets its own frame and memory plan instance). One module built by
// relax::build with three symbolic dims is called from 12 threads, 60 calls each, every call at
// its own sizes, some of them with a wrong shape; each result is checked against plain loops
// in double precision. Besides the layer's run, CTest runs this file's tests with the other
// concurrency tests under the label `concurrency`, which ./dev.sh tsan runs under
// ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;

constexpr int kThreads = 12;
constexpr int kCallsPerThread = 60;

using relax::testing::random_tensor;

// main(x: (n, k), w: (k, m), b: (m,)) = sum((x @ w + b) * (x @ w + b), axis -1): (n,)
IRModule squared_row_sums() {
  SymVar n("n"), k("k"), m("m");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, k}, DataType::float32()));
  Var w = f.param("w", tensor_sinfo({k, m}, DataType::float32()));
  Var b = f.param("b", tensor_sinfo({m}, DataType::float32()));
  Var out;
  {
    auto df = f.dataflow();
    Var h = f.emit(op::matmul(x, w));
    Var a = f.emit(op::add(h, b));
    Var sq = f.emit(op::multiply(a, a));
    out = f.emit_output(op::sum(sq, std::vector<int64_t>{-1}, false), "out");
  }
  f.ret(out);
  absl::StatusOr<IRModule> mod = mb.build();
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

// The same function as plain loops in double.
std::vector<double> reference(const Tensor& x, const Tensor& w, const Tensor& b, int64_t n, int64_t k,
                              int64_t m) {
  std::vector<double> out(static_cast<size_t>(n), 0.0);
  const float* xs = x.data_as_or_die<float>();
  const float* ws = w.data_as_or_die<float>();
  const float* bs = b.data_as_or_die<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double a = bs[j];
      for (int64_t l = 0; l < k; ++l) a += double{xs[i * k + l]} * ws[l * m + j];
      out[static_cast<size_t>(i)] += a * a;
    }
  }
  return out;
}

TEST(ConcurrencyTest, ConcurrentCallsOfOneModuleAtMixedSizes) {
  Target target;
  target.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_concurrency_test_cache").string();
  absl::StatusOr<runtime::Module> built = build(squared_row_sums(), target);
  ASSERT_TRUE(built.ok()) << built.status();
  const runtime::Module& module = *built;
  const runtime::Function main_fn = module["main"];

  std::atomic<int> wrong_results{0}, missed_errors{0}, failed_calls{0};
  std::vector<std::string> first_failure(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        const int call = t * kCallsPerThread + i;
        const int64_t n = 1 + call % 29, k = 1 + (call * 7) % 23, m = 1 + (call * 5) % 17;
        const uint32_t seed = static_cast<uint32_t>(call);
        Tensor x = random_tensor({n, k}, seed), b = random_tensor({m}, seed + 2);
        if (call % 9 == 4) {
          // A w whose first dim contradicts x's: every such call must fail, with its own message.
          Tensor bad_w = random_tensor({k + 1, m}, seed + 1);
          absl::StatusOr<Value> y = main_fn(x, bad_w, b);
          if (y.ok()) ++missed_errors;
          continue;
        }
        Tensor w = random_tensor({k, m}, seed + 1);
        absl::StatusOr<Value> y = main_fn(x, w, b);
        if (!y.ok() || !y->is_tensor() || y->tensor_or_die().shape() != std::vector<int64_t>{n}) {
          if (failed_calls++ == 0) first_failure[t] = y.ok() ? "wrong result kind" : y.status().ToString();
          continue;
        }
        const std::vector<double> expected = reference(x, w, b, n, k, m);
        const float* got = y->tensor_or_die().data_as_or_die<float>();
        for (int64_t r = 0; r < n; ++r) {
          const double e = expected[static_cast<size_t>(r)];
          if (std::abs(got[r] - e) > 1e-4 * (1.0 + std::abs(e))) {
            ++wrong_results;
            break;
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failed_calls.load(), 0);
  for (const std::string& failure : first_failure) {
    if (!failure.empty()) ADD_FAILURE() << "first failed call: " << failure;
  }
  EXPECT_EQ(wrong_results.load(), 0);
  EXPECT_EQ(missed_errors.load(), 0);
}

}  // namespace
}  // namespace relax
