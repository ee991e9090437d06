// The process's budget of kernel threads (relax/runtime/thread_budget.h), through the table
// kernels call (kernel_runtime_api). The end-to-end test with compiled kernels is
// tests/e2e/threads/thread_budget_build_test.cc.
#include "relax/runtime/thread_budget.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace relax::runtime {
namespace {

// Restores the machine's budget after a test that set one.
class ThreadBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override { reset_kernel_thread_stats(); }
  void TearDown() override {
    set_kernel_thread_budget(0);
    set_kernel_thread_wait(std::nullopt);
    set_kernel_load_file("");
  }
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

// A stand-in for /proc/loadavg that says `runnable` threads are runnable on the machine.
class LoadFile {
 public:
  explicit LoadFile(int32_t runnable)
      : path_((std::filesystem::temp_directory_path() /
               ("relax_loadavg_" + std::to_string(::getpid()) + "_" + std::to_string(runnable)))
                  .string()) {
    FILE* f = std::fopen(path_.c_str(), "w");
    EXPECT_NE(f, nullptr);
    std::fprintf(f, "1.50 1.20 0.90 %d/812 4242\n", static_cast<int>(runnable));
    std::fclose(f);
    set_kernel_load_file(path_);
  }
  ~LoadFile() {
    set_kernel_load_file("");
    std::filesystem::remove(path_);
  }

 private:
  std::string path_;
};

// The default budget under `auto` follows the CPUs free now: every CPU when this thread is the
// only runnable one, one (no team) when other processes keep every CPU busy; the sample also
// tells the pool that the CPUs are contended.
TEST_F(ThreadBudgetTest, ThreadScratchIsAlignedKeptPerThreadAndGrows) {
  auto* small = static_cast<char*>(api_.thread_scratch(100));
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  small[99] = 7;
  EXPECT_EQ(api_.thread_scratch(64), small) << "a smaller request keeps the thread's block";
  auto* large = static_cast<char*>(api_.thread_scratch(1 << 20));
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 64, 0u);
  large[(1 << 20) - 1] = 1;  // all of it is writable (ASan checks the bounds)
  void* other = nullptr;
  std::thread([&] { other = api_.thread_scratch(100); }).join();
  EXPECT_NE(other, nullptr);
  EXPECT_NE(other, static_cast<void*>(large)) << "each thread has a block of its own";
}

TEST_F(ThreadBudgetTest, AutoCapsTheDefaultBudgetAtTheFreeCpus) {
  if (cpus() < 2) GTEST_SKIP() << "one CPU: no team to cap";
  NumThreadsVariable v(nullptr);
  set_kernel_thread_wait(ThreadWait::kAuto);
  {
    LoadFile idle(1);
    const int32_t team = api_.claim_threads(0);
    EXPECT_EQ(team, cpus());
    api_.release_threads(team);
    EXPECT_FALSE(kernel_threads_contended());
    EXPECT_EQ(kernel_thread_stats().free_cpus, cpus());
    EXPECT_EQ(kernel_thread_stats().load_capped, 0);
  }
  {
    LoadFile busy(1 + cpus() + 3);  // this thread, and more than a CPU each for the others
    EXPECT_EQ(api_.claim_threads(0), 1);
    EXPECT_TRUE(kernel_threads_contended());
    const KernelThreadStats stats = kernel_thread_stats();
    EXPECT_EQ(stats.free_cpus, 1);
    EXPECT_EQ(stats.load_capped, 1);
    EXPECT_EQ(stats.serial, 1);
    EXPECT_EQ(stats.running, 0);
  }
}

// `spin` is the old behaviour: the budget alone sizes the team, whatever the load, and the pool
// always spins before it blocks.
TEST_F(ThreadBudgetTest, SpinIgnoresTheLoad) {
  if (cpus() < 2) GTEST_SKIP() << "one CPU: no team to cap";
  NumThreadsVariable v(nullptr);
  set_kernel_thread_wait(ThreadWait::kSpin);
  LoadFile busy(1 + cpus() + 3);
  const int32_t team = api_.claim_threads(0);
  EXPECT_EQ(team, cpus());
  api_.release_threads(team);
  EXPECT_FALSE(kernel_threads_contended());
  EXPECT_EQ(kernel_thread_stats().load_capped, 0);
}

// A budget someone chose (set_kernel_thread_budget, RELAX_NUM_THREADS) is kept as given: the
// load only decides whether waiting threads spin.
TEST_F(ThreadBudgetTest, AnExplicitBudgetIsNotCappedByTheLoad) {
  set_kernel_thread_wait(ThreadWait::kAuto);
  LoadFile busy(1 + cpus() + 3);
  set_kernel_thread_budget(3);
  EXPECT_EQ(api_.claim_threads(0), 3);
  api_.release_threads(3);
  EXPECT_TRUE(kernel_threads_contended());
  {
    NumThreadsVariable v("3");
    EXPECT_EQ(api_.claim_threads(0), 3);
    api_.release_threads(3);
  }
  EXPECT_EQ(kernel_thread_stats().load_capped, 0);
}

// The claim reads the CPUs the calling thread may run on at every sample: a thread pinned to
// one CPU gets no team.
TEST_F(ThreadBudgetTest, AutoFollowsTheCallersAffinity) {
  if (cpus() < 2) GTEST_SKIP() << "one CPU: no team to cap";
  NumThreadsVariable v(nullptr);
  set_kernel_thread_wait(ThreadWait::kAuto);
  LoadFile idle(1);
  ASSERT_EQ(kernel_thread_budget(), cpus());  // read before pinning: the default budget stays
  cpu_set_t all, one;
  CPU_ZERO(&all);
  ASSERT_EQ(::sched_getaffinity(0, sizeof all, &all), 0);
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &all)) {
      CPU_SET(c, &one);
      break;
    }
  }
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  const int32_t pinned = api_.claim_threads(0);
  ASSERT_EQ(::sched_setaffinity(0, sizeof all, &all), 0);
  EXPECT_EQ(pinned, 1);
  const int32_t unpinned = api_.claim_threads(0);
  EXPECT_EQ(unpinned, cpus());
  api_.release_threads(unpinned);
}

// `passive`: waiting threads never spin, whatever the load.
TEST_F(ThreadBudgetTest, PassiveIsAlwaysContended) {
  LoadFile idle(1);
  set_kernel_thread_wait(ThreadWait::kPassive);
  EXPECT_TRUE(kernel_threads_contended());
  set_kernel_thread_wait(ThreadWait::kAuto);
  api_.release_threads(api_.claim_threads(0));  // a claim samples the load
  EXPECT_FALSE(kernel_threads_contended());
}

TEST_F(ThreadBudgetTest, TheWaitPolicyIsRelaxThreadWait) {
  std::optional<std::string> saved;
  if (const char* old = ::getenv("RELAX_THREAD_WAIT")) saved = old;
  const std::pair<const char*, ThreadWait> cases[] = {
      {"spin", ThreadWait::kSpin}, {"passive", ThreadWait::kPassive}, {"auto", ThreadWait::kAuto}, {"", ThreadWait::kAuto}};
  for (const auto& [text, wait] : cases) {
    ::setenv("RELAX_THREAD_WAIT", text, 1);
    set_kernel_thread_wait(std::nullopt);
    EXPECT_EQ(kernel_thread_wait(), wait) << text;
  }
  ::testing::internal::CaptureStderr();
  ::setenv("RELAX_THREAD_WAIT", "busy", 1);
  set_kernel_thread_wait(std::nullopt);
  EXPECT_EQ(kernel_thread_wait(), ThreadWait::kAuto);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("RELAX_THREAD_WAIT=busy is not auto, spin or passive"),
            std::string::npos);
  set_kernel_thread_wait(ThreadWait::kSpin);  // set: the variable no longer counts
  EXPECT_EQ(kernel_thread_wait(), ThreadWait::kSpin);
  if (saved.has_value()) {
    ::setenv("RELAX_THREAD_WAIT", saved->c_str(), 1);
  } else {
    ::unsetenv("RELAX_THREAD_WAIT");
  }
}

}  // namespace
}  // namespace relax::runtime
