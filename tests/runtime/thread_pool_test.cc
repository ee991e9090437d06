// The process's pool of kernel threads (relax/runtime/thread_pool.h), directly and through
// the table kernels call (kernel_runtime_api()->parallel_for). The end-to-end tests with
// compiled kernels are in tests/e2e/threads/thread_pool_build_test.cc.
#include "relax/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <stdexcept>
#include <thread>
#include <vector>

#include "relax/runtime/thread_budget.h"

namespace relax::runtime {
namespace {

class ThreadPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_kernel_teams(KernelTeams::kPool);  // the pool's own mechanics (libgomp's: below)
    reset_kernel_thread_stats();
    reset_thread_pool_stats();
  }
  void TearDown() override {
    set_kernel_thread_budget(0);
    set_kernel_thread_wait(std::nullopt);
    set_kernel_teams(std::nullopt);
  }
};

// Teams on libgomp's threads (KernelTeams::kOpenMp; skipped where no libgomp is loaded): every
// index once, a nested loop inline, the first failure and a throw come back, the claim is
// returned, and the pool's workers do nothing.
TEST_F(ThreadPoolTest, OpenMpTeamsRunTheSameLoops) {
  set_kernel_teams(KernelTeams::kOpenMp);
  set_kernel_thread_budget(2);
  std::vector<std::atomic<int32_t>> seen(1000);
  EXPECT_EQ(parallel_for(0, 1000, 0, [&](int64_t lo, int64_t hi) -> int32_t {
              for (int64_t i = lo; i < hi; ++i) ++seen[static_cast<size_t>(i)];
              return 0;
            }),
            0);
  if (thread_pool_stats().openmp_teams == 0) GTEST_SKIP() << "no libgomp in this process";
  for (const auto& s : seen) ASSERT_EQ(s.load(), 1);
  std::atomic<int32_t> inner_chunks{0};
  EXPECT_EQ(parallel_for(0, 2, 0, [&](int64_t, int64_t) -> int32_t {
              return parallel_for(0, 100, 0, [&](int64_t, int64_t) -> int32_t {
                ++inner_chunks;
                return 0;
              });
            }),
            0);
  EXPECT_EQ(inner_chunks.load(), 2);  // one whole inline run per outer chunk
  EXPECT_EQ(parallel_for(0, 2, 0, [](int64_t lo, int64_t) -> int32_t { return lo == 1 ? 9 : 0; }), 9);
  EXPECT_EQ(parallel_for(0, 1000, 0,
                         [](int64_t lo, int64_t) -> int32_t {
                           if (lo == 0) throw std::runtime_error("chunk 0");
                           return 0;
                         }),
            kParallelBodyThrew);
  EXPECT_EQ(kernel_thread_stats().running, 0);
  EXPECT_EQ(thread_pool_stats().teams, 0);
  EXPECT_EQ(thread_pool_stats().worker_chunks, 0);
  EXPECT_GE(thread_pool_stats().openmp_teams, 4);
}

// Every index is visited exactly once, in static chunks: one per member of the team.
TEST_F(ThreadPoolTest, EveryIndexOnceInStaticChunks) {
  set_kernel_thread_budget(4);
  for (int64_t n : {2, 3, 7, 1000, 100003}) {
    std::vector<std::atomic<int32_t>> seen(static_cast<size_t>(n));
    std::atomic<int32_t> chunks{0};
    std::atomic<int64_t> longest{0};
    const int32_t status = parallel_for(5, 5 + n, 0, [&](int64_t lo, int64_t hi) -> int32_t {
      ++chunks;
      int64_t len = hi - lo, seen_len = longest.load();
      while (len > seen_len && !longest.compare_exchange_weak(seen_len, len)) {
      }
      for (int64_t i = lo; i < hi; ++i) ++seen[static_cast<size_t>(i - 5)];
      return 0;
    });
    EXPECT_EQ(status, 0);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
    EXPECT_LE(chunks.load(), 4) << n;
    EXPECT_EQ(longest.load(), (n + chunks.load() - 1) / chunks.load()) << n;
  }
  // An empty range runs nothing; a range of one runs inline.
  int calls = 0;
  EXPECT_EQ(parallel_for(3, 3, 0, [&](int64_t, int64_t) -> int32_t { return ++calls, 0; }), 0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(parallel_for(3, 4, 0, [&](int64_t lo, int64_t hi) -> int32_t { return calls += static_cast<int>(hi - lo), 0; }), 0);
  EXPECT_EQ(calls, 1);
}

TEST_F(ThreadPoolTest, WorkersAreTheBudgetMinusTheCallerAndDoWork) {
  set_kernel_thread_budget(3);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int32_t> on_workers{0};
  // Chunks slow enough that the workers wake up for them.
  for (int rep = 0; rep < 20 && on_workers.load() == 0; ++rep) {
    parallel_for(0, 3, 0, [&](int64_t, int64_t) -> int32_t {
      if (std::this_thread::get_id() != caller) ++on_workers;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return 0;
    });
  }
  EXPECT_GT(on_workers.load(), 0);
  const ThreadPoolStats stats = thread_pool_stats();
  EXPECT_GE(stats.workers, 2);
  EXPECT_GE(stats.teams, 1);
  EXPECT_GT(stats.worker_chunks, 0);
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(kernel_thread_stats().running, 0);
}

// `wanted` caps the team; 1 runs inline on the caller.
TEST_F(ThreadPoolTest, WantedCapsTheTeam) {
  set_kernel_thread_budget(4);
  std::atomic<int32_t> chunks{0};
  parallel_for(0, 1000, 2, [&](int64_t, int64_t) -> int32_t { return ++chunks, 0; });
  EXPECT_EQ(chunks.load(), 2);
  chunks = 0;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> elsewhere{false};
  parallel_for(0, 1000, 1, [&](int64_t lo, int64_t hi) -> int32_t {
    ++chunks;
    if (std::this_thread::get_id() != caller || lo != 0 || hi != 1000) elsewhere = true;
    return 0;
  });
  EXPECT_EQ(chunks.load(), 1);
  EXPECT_FALSE(elsewhere.load());
}

// A parallel_for inside a chunk runs its whole range inline on that thread, and claims nothing.
TEST_F(ThreadPoolTest, NestedLoopsRunInline) {
  set_kernel_thread_budget(4);
  std::atomic<int64_t> sum{0};
  std::atomic<int32_t> foreign{0};
  const int32_t status = parallel_for(0, 8, 0, [&](int64_t lo, int64_t hi) -> int32_t {
    for (int64_t i = lo; i < hi; ++i) {
      const std::thread::id outer = std::this_thread::get_id();
      int32_t inner_chunks = 0;
      parallel_for(0, 100, 0, [&](int64_t a, int64_t b) -> int32_t {
        ++inner_chunks;
        if (std::this_thread::get_id() != outer) ++foreign;
        for (int64_t j = a; j < b; ++j) sum += i * 100 + j;
        return 0;
      });
      if (inner_chunks != 1) ++foreign;
    }
    return 0;
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(foreign.load(), 0);
  int64_t expected = 0;
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 100; ++j) expected += i * 100 + j;
  }
  EXPECT_EQ(sum.load(), expected);
  EXPECT_LE(thread_pool_stats().peak, 4);
}

// A failing chunk: the first non-zero status comes back, and chunks not yet started are
// skipped. A chunk that throws counts as failed; the exception stays in the pool.
TEST_F(ThreadPoolTest, AFailureComesBackOnceAndAThrowDoesNotCross) {
  set_kernel_thread_budget(2);
  std::atomic<int32_t> failures{0};
  const int32_t status = parallel_for(0, 2, 0, [&](int64_t lo, int64_t) -> int32_t {
    if (lo == 0) {
      ++failures;
      return 7;
    }
    return 0;
  });
  EXPECT_EQ(status, 7);
  EXPECT_EQ(failures.load(), 1);
  // Serial (a team of one): the failure also comes back.
  EXPECT_EQ(parallel_for(0, 10, 1, [](int64_t, int64_t) -> int32_t { return 3; }), 3);
  const int32_t threw = parallel_for(0, 1000, 0, [](int64_t lo, int64_t) -> int32_t {
    if (lo == 0) throw std::runtime_error("chunk 0");
    return 0;
  });
  EXPECT_EQ(threw, kParallelBodyThrew);
  EXPECT_EQ(kernel_thread_stats().running, 0);
  EXPECT_EQ(thread_pool_stats().running, 0);
}

// 8 callers at once on a budget of 3: the threads running chunks (callers of teams and
// workers, counted by the chunks themselves) never exceed the budget, the callers start no
// workers beyond the budget minus one (earlier tests' larger budgets may have started more),
// and every loop is complete.
TEST_F(ThreadPoolTest, EightConcurrentCallersStayWithinTheBudget) {
  set_kernel_thread_budget(3);
  const int32_t workers_before = thread_pool_stats().workers;
  std::atomic<int32_t> in_team_chunks{0}, peak{0}, wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 100; ++rep) {
        const int64_t n = 64 + (t * 7 + rep) % 50;
        std::vector<int32_t> hits(static_cast<size_t>(n), 0);
        parallel_for(0, n, 0, [&](int64_t lo, int64_t hi) -> int32_t {
          const bool team = hi - lo < n;  // the whole range: run alone, outside the pool's teams
          int32_t now = 0;
          if (team) {
            now = ++in_team_chunks;
            int32_t seen = peak.load();
            while (now > seen && !peak.compare_exchange_weak(seen, now)) {
            }
          }
          for (int64_t i = lo; i < hi; ++i) ++hits[static_cast<size_t>(i)];
          if (rep % 10 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
          if (team) --in_team_chunks;
          return 0;
        });
        for (int32_t h : hits) {
          if (h != 1) ++wrong;
        }
      }
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(peak.load(), 3);
  const ThreadPoolStats stats = thread_pool_stats();
  EXPECT_LE(stats.peak, 3);
  EXPECT_LE(stats.workers, std::max(workers_before, 2));
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.teams + stats.inline_runs, 8 * 100);
  EXPECT_GE(stats.teams, 1);
  const KernelThreadStats budget = kernel_thread_stats();
  EXPECT_LE(budget.peak, 3);
  EXPECT_EQ(budget.running, 0);
}

// The table generated kernels call reaches the same pool.
TEST_F(ThreadPoolTest, TheKernelTableRunsLoopsOnThePool) {
  set_kernel_thread_budget(2);
  const RelaxRuntimeApi& api = *kernel_runtime_api();
  ASSERT_NE(api.parallel_for, nullptr);
  std::vector<int32_t> out(1000, 0);
  auto body = [](void* ctx, int64_t lo, int64_t hi) -> int32_t {
    auto* v = static_cast<std::vector<int32_t>*>(ctx);
    for (int64_t i = lo; i < hi; ++i) (*v)[static_cast<size_t>(i)] = static_cast<int32_t>(i * 3);
    return 0;
  };
  EXPECT_EQ(api.parallel_for(0, 1000, 0, body, &out), 0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], i * 3);
  EXPECT_EQ(thread_pool_stats().teams, 1);
}

// An idle pool sleeps: once the spin is over, its workers use no CPU.
TEST_F(ThreadPoolTest, AnIdlePoolBurnsNoCpu) {
  set_kernel_thread_budget(2);
  parallel_for(0, 1000, 0, [](int64_t, int64_t) -> int32_t { return 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin
  const std::clock_t before = std::clock();  // CPU time of the whole process
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double cpu_s = static_cast<double>(std::clock() - before) / CLOCKS_PER_SEC;
  EXPECT_LT(cpu_s, 0.05);
}

// Runs 2-chunk loops with chunks slow enough (5 ms) that the worker takes one, until it has.
bool run_a_loop_with_the_worker() {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> on_worker{false};
  for (int rep = 0; rep < 50 && !on_worker.load(); ++rep) {
    parallel_for(0, 2, 0, [&](int64_t, int64_t) -> int32_t {
      if (std::this_thread::get_id() != caller) on_worker = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return 0;
    });
  }
  return on_worker.load();
}

// Polls the pool's counters until `done` holds (a bounded wait for the workers to get there,
// not a measurement).
template <typename Done>
ThreadPoolStats wait_for_stats(Done done) {
  ThreadPoolStats stats = thread_pool_stats();
  for (int i = 0; i < 2000 && !done(stats); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stats = thread_pool_stats();
  }
  return stats;
}

// Under `spin` a worker that finished its chunk spins, then blocks after its spin budget; under
// `passive` (as under `auto` when the CPUs are contended) it blocks at once, and so does a caller
// waiting for it.
TEST_F(ThreadPoolTest, WaitingThreadsSpinOnlyWhenTheCpusAreNotContended) {
  set_kernel_thread_budget(2);
  set_kernel_thread_wait(ThreadWait::kSpin);
  reset_thread_pool_stats();
  ASSERT_TRUE(run_a_loop_with_the_worker());
  ThreadPoolStats stats = wait_for_stats([](const ThreadPoolStats& s) { return s.spins >= 1 && s.blocks >= 1; });
  EXPECT_GE(stats.spins, 1);
  EXPECT_GE(stats.blocks, 1);  // the spin is bounded

  set_kernel_thread_wait(ThreadWait::kPassive);
  // Let a worker still in its spin finish it (it began before the policy changed).
  wait_for_stats([](const ThreadPoolStats&) { return false; });
  reset_thread_pool_stats();
  ASSERT_TRUE(run_a_loop_with_the_worker());
  stats = wait_for_stats([](const ThreadPoolStats& s) { return s.blocks >= 1; });
  EXPECT_EQ(stats.spins, 0);
  EXPECT_GE(stats.blocks, 1);
  EXPECT_GT(stats.worker_chunks, 0);
}

}  // namespace
}  // namespace relax::runtime
