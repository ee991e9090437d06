// The process's budget of kernel threads (relax/runtime/thread_budget.h), through the table
// kernels call (kernel_runtime_api). The end-to-end test with compiled kernels is
// tests/codegen/thread_budget_build_test.cc.
#include "relax/runtime/thread_budget.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <stdlib.h>

#include <atomic>
#include <optional>
#include <string>
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

// The CPUs this process may run on (what the default is without RELAX_NUM_THREADS).
int32_t cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  return CPU_COUNT(&set);
}

// Sets RELAX_NUM_THREADS for one test (ctest runs the tests with RELAX_NUM_THREADS=1) and puts
// the value it found back.
class NumThreadsVariable {
 public:
  explicit NumThreadsVariable(const char* value) {
    if (const char* old = ::getenv("RELAX_NUM_THREADS")) saved_ = old;
    if (value == nullptr) {
      ::unsetenv("RELAX_NUM_THREADS");
    } else {
      ::setenv("RELAX_NUM_THREADS", value, 1);
    }
    set_kernel_thread_budget(0);  // reads the variable again
  }
  ~NumThreadsVariable() {
    if (saved_.has_value()) {
      ::setenv("RELAX_NUM_THREADS", saved_->c_str(), 1);
    } else {
      ::unsetenv("RELAX_NUM_THREADS");
    }
    set_kernel_thread_budget(0);
  }

 private:
  std::optional<std::string> saved_;
};

TEST_F(ThreadBudgetTest, TheDefaultIsRelaxNumThreadsElseTheCpus) {
  {
    NumThreadsVariable v("3");
    EXPECT_EQ(kernel_thread_budget(), 3);
    set_kernel_thread_budget(5);  // set explicitly: the variable no longer counts
    EXPECT_EQ(kernel_thread_budget(), 5);
  }
  {
    NumThreadsVariable v(nullptr);
    EXPECT_EQ(kernel_thread_budget(), cpus());
  }
}

TEST_F(ThreadBudgetTest, AMalformedRelaxNumThreadsIsReportedAndTheCpusAreUsed) {
  for (const char* bad : {"0", "-2", "two", "3x", " 4"}) {
    ::testing::internal::CaptureStderr();
    NumThreadsVariable v(bad);
    EXPECT_EQ(kernel_thread_budget(), cpus()) << bad;
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(std::string("RELAX_NUM_THREADS=") + bad + " is not a positive integer"), std::string::npos)
        << bad << ": " << err;
  }
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
  EXPECT_EQ(stats.serial, 0);
}

// No team free: the caller gets 1 at once (it runs the loop's serial copy), and nothing is
// counted, so that the threads of all teams stay within the budget.
TEST_F(ThreadBudgetTest, AClaimWithoutAFreeTeamRunsAloneAndCountsNothing) {
  set_kernel_thread_budget(3);
  ASSERT_EQ(api_.claim_threads(2), 2);
  EXPECT_EQ(api_.claim_threads(0), 1);  // one thread free is no team
  EXPECT_EQ(kernel_thread_stats().running, 2);
  api_.release_threads(1);
  EXPECT_EQ(kernel_thread_stats().running, 2);
  api_.release_threads(2);
  const KernelThreadStats stats = kernel_thread_stats();
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.claims, 1);
  EXPECT_EQ(stats.serial, 1);
}

// A claim's cap limits the team threads of the whole process while it runs, not only its own
// team: a module compiled for 3 threads never forks beside 3 running others.
TEST_F(ThreadBudgetTest, ACapBelowTheRunningThreadsGetsNoTeam) {
  set_kernel_thread_budget(8);
  ASSERT_EQ(api_.claim_threads(5), 5);
  EXPECT_EQ(api_.claim_threads(3), 1);
  api_.release_threads(5);
  EXPECT_EQ(api_.claim_threads(3), 3);
  api_.release_threads(3);
}

TEST_F(ThreadBudgetTest, ManyClaimersNeverExceedTheBudget) {
  set_kernel_thread_budget(3);
  std::atomic<int32_t> running{0}, peak{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int32_t wanted = (t + i) % 4;  // 0 (the budget's), 1, 2, 3
        const int32_t g = api_.claim_threads(wanted);
        if (g < 1 || (wanted > 0 && g > wanted)) ++bad;
        const int32_t team = g >= 2 ? g : 0;
        const int32_t now = running += team;
        int32_t seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::yield();
        running -= team;
        api_.release_threads(g);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_LE(peak.load(), 3);
  const KernelThreadStats stats = kernel_thread_stats();
  EXPECT_LE(stats.peak, 3);
  EXPECT_GE(stats.peak, 2);
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.claims + stats.serial, 8 * 200);
}

}  // namespace
}  // namespace relax::runtime
