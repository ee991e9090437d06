// The process's budget of kernel threads (relax/runtime/thread_budget.h), through the table
// kernels call (kernel_runtime_api). The end-to-end test with compiled kernels is
// tests/codegen/thread_budget_build_test.cc.
#include "relax/runtime/thread_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace relax::runtime {
namespace {

// Restores the machine's budget after a test that set one.
class ThreadBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override { reset_kernel_thread_stats(); }
  void TearDown() override { set_kernel_thread_budget(0); }
  const RelaxRuntimeApi& api_ = *kernel_runtime_api();
};

TEST_F(ThreadBudgetTest, TheMachineBudgetIsAtLeastOne) {
  set_kernel_thread_budget(0);
  EXPECT_GE(kernel_thread_budget(), 1);
  set_kernel_thread_budget(5);
  EXPECT_EQ(kernel_thread_budget(), 5);
}

TEST_F(ThreadBudgetTest, AClaimGetsWhatIsFreeUpToItsCap) {
  set_kernel_thread_budget(4);
  EXPECT_EQ(api_.claim_threads(0), 4);  // 0: as many as the budget allows
  api_.release_threads(4);
  const int32_t two = api_.claim_threads(2);  // its own cap
  EXPECT_EQ(two, 2);
  EXPECT_EQ(api_.claim_threads(0), 2);  // what is left
  EXPECT_EQ(kernel_thread_stats().running, 4);
  api_.release_threads(2);
  api_.release_threads(two);
  const KernelThreadStats stats = kernel_thread_stats();
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.peak, 4);
  EXPECT_EQ(stats.claims, 3);
  EXPECT_EQ(stats.waits, 0);
}

TEST_F(ThreadBudgetTest, AClaimWaitsWhileTheBudgetIsSpent) {
  set_kernel_thread_budget(2);
  ASSERT_EQ(api_.claim_threads(0), 2);
  std::atomic<int32_t> granted{-1};
  std::thread waiter([&] { granted = api_.claim_threads(0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(granted.load(), -1) << "a claim was granted threads beyond the budget";
  api_.release_threads(1);
  // The waiter takes the one thread given back; the other stays with the first claim.
  waiter.join();
  EXPECT_EQ(granted.load(), 1);
  EXPECT_EQ(kernel_thread_stats().running, 2);
  EXPECT_EQ(kernel_thread_stats().waits, 1);
  api_.release_threads(1);
  api_.release_threads(1);
  EXPECT_EQ(kernel_thread_stats().running, 0);
}

// A claim's cap limits what runs in the whole process while it runs, not only its own team: a
// module compiled for 3 threads never runs beside 3 others.
TEST_F(ThreadBudgetTest, ACapBelowTheRunningThreadsWaits) {
  set_kernel_thread_budget(8);
  ASSERT_EQ(api_.claim_threads(0), 8);
  api_.release_threads(5);  // 3 running
  std::atomic<int32_t> granted{-1};
  std::thread waiter([&] { granted = api_.claim_threads(3); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(granted.load(), -1);
  api_.release_threads(2);  // 1 running: the waiter may take 2
  waiter.join();
  EXPECT_EQ(granted.load(), 2);
  api_.release_threads(1);
  api_.release_threads(2);
}

TEST_F(ThreadBudgetTest, ManyClaimersNeverExceedTheBudget) {
  set_kernel_thread_budget(3);
  std::atomic<int32_t> running{0}, peak{0}, over{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int32_t g = api_.claim_threads((t + i) % 4);  // 0 (the budget's), 1, 2, 3
        if (g < 1) ++over;
        const int32_t now = running += g;
        int32_t seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::yield();
        running -= g;
        api_.release_threads(g);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(over.load(), 0);
  EXPECT_LE(peak.load(), 3);
  EXPECT_LE(kernel_thread_stats().peak, 3);
  EXPECT_EQ(kernel_thread_stats().running, 0);
  EXPECT_EQ(kernel_thread_stats().claims, 8 * 200);
}

}  // namespace
}  // namespace relax::runtime
