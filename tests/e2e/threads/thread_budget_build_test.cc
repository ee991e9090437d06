// One budget of kernel threads per process (relax/runtime/thread_budget.h) with compiled
// kernels: four threads call a module whose kernel has a parallel loop; the threads of the
// running parallel teams (the budget's own count, an upper bound of the threads OpenMP starts)
// never exceed the budget or the target's thread count, and every result is right.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/runtime/thread_budget.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;


class ThreadBudgetBuildTest : public ::testing::Test {
 protected:
  void TearDown() override { runtime::set_kernel_thread_budget(0); }

  // Calls `module` from 4 threads, `calls` times each at n elements; the number of wrong or
  // failed results.
  static int call_concurrently(const runtime::Module& module, int64_t n, int calls) {
    const Tensor x = testing::random_tensor({n}, 3), y = testing::random_tensor({n}, 4);
    std::vector<float> expected(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      expected[static_cast<size_t>(i)] = x.data_as_or_die<float>()[i] * y.data_as_or_die<float>()[i] +
                                         x.data_as_or_die<float>()[i];
    }
    const runtime::Function main_fn = module["main"];
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int c = 0; c < calls; ++c) {
          absl::StatusOr<Value> out = main_fn(x, y);
          if (!out.ok()) {
            ++wrong;
            continue;
          }
          const float* got = out->tensor_or_die().data_as_or_die<float>();
          for (int64_t i = 0; i < n; ++i) {
            const float e = expected[static_cast<size_t>(i)];
            if (std::abs(got[i] - e) > 1e-5f * (1.0f + std::abs(e))) {
              ++wrong;
              break;
            }
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
    return wrong.load();
  }
};

TEST_F(ThreadBudgetBuildTest, FourCallersNeverRunMoreKernelThreadsThanTheBudget) {
  absl::StatusOr<runtime::Module> m = build(testing::multiply_add_module(), testing::build_test_target());
  ASSERT_TRUE(m.ok()) << m.status();
  runtime::set_kernel_thread_budget(2);
  runtime::reset_kernel_thread_stats();
  EXPECT_EQ(call_concurrently(*m, 1 << 18, 25), 0);
  const runtime::KernelThreadStats stats = runtime::kernel_thread_stats();
  // Every call's loop went through the budget: as a team, or alone when no team was free.
  EXPECT_GE(stats.claims + stats.serial, 4 * 25);
  EXPECT_GE(stats.claims, 1);
  EXPECT_LE(stats.peak, 2);
  EXPECT_EQ(stats.running, 0);
}

// Target::threads caps the kernel threads of the process while its kernels run, below a larger
// budget.
TEST_F(ThreadBudgetBuildTest, TheTargetsThreadCountCapsTheProcess) {
  Target target = testing::build_test_target();
  target.threads = 3;
  absl::StatusOr<runtime::Module> m = build(testing::multiply_add_module(), target);
  ASSERT_TRUE(m.ok()) << m.status();
  runtime::set_kernel_thread_budget(16);
  runtime::reset_kernel_thread_stats();
  EXPECT_EQ(call_concurrently(*m, 1 << 18, 10), 0);
  const runtime::KernelThreadStats stats = runtime::kernel_thread_stats();
  EXPECT_GE(stats.claims + stats.serial, 4 * 10);
  EXPECT_LE(stats.peak, 3);
  EXPECT_EQ(stats.running, 0);
}

// Below Target::parallel_min_work a loop runs on the calling thread and claims nothing.
TEST_F(ThreadBudgetBuildTest, SmallCallsClaimNothing) {
  absl::StatusOr<runtime::Module> m = build(testing::multiply_add_module(), testing::build_test_target());
  ASSERT_TRUE(m.ok()) << m.status();
  runtime::reset_kernel_thread_stats();
  EXPECT_EQ(call_concurrently(*m, 100, 10), 0);
  EXPECT_EQ(runtime::kernel_thread_stats().claims, 0);
  EXPECT_EQ(runtime::kernel_thread_stats().serial, 0);
}

}  // namespace
}  // namespace relax
