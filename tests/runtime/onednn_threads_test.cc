// oneDNN's threads in the process's kernel thread budget (relax/runtime/thread_budget.h):
// every call of a oneDNN library function claims its OpenMP team from the budget (so
// concurrent calls, and the kernel pool beside them, stay within it), and its primitive is
// created for the team it got.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "relax/runtime/module.h"
#include "relax/runtime/onednn.h"
#include "relax/runtime/thread_budget.h"

namespace relax::runtime {
namespace {

#define SKIP_WITHOUT_ONEDNN() \
  if (!onednn_available()) GTEST_SKIP() << "built without oneDNN (RELAX_WITH_ONEDNN=OFF)"

constexpr int64_t kM = 64, kK = 96, kN = 48;

Tensor filled(std::vector<int64_t> shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 1u;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return *Tensor::from_vector(std::move(shape), v, DataType::float32());
}

// out = x @ w^T (linear: w is (N, K)), checked against a plain loop; false when wrong.
bool linear_is_right(const LibraryFunction& fn, const Tensor& x, const Tensor& w) {
  Tensor out = *Tensor::empty({kM, kN}, DataType::float32());
  if (!fn({x, w, out}).ok()) return false;
  const float* xs = x.data_as_or_die<float>();
  const float* ws = w.data_as_or_die<float>();
  const float* got = out.data_as_or_die<float>();
  for (int64_t i = 0; i < kM; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      double want = 0;
      for (int64_t k = 0; k < kK; ++k) want += double{xs[i * kK + k]} * ws[j * kK + k];
      if (std::abs(got[i * kN + j] - want) > 1e-4 * (1 + std::abs(want))) return false;
    }
  }
  return true;
}

class OnednnThreadsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    set_kernel_thread_budget(0);
    set_kernel_thread_wait(std::nullopt);
    set_kernel_load_file("");
  }
};

TEST_F(OnednnThreadsTest, ConcurrentCallsClaimTheirTeamsFromTheBudget) {
  SKIP_WITHOUT_ONEDNN();
  absl::StatusOr<LibraryFunction> fn = resolve_library_function("onednn.linear");
  ASSERT_TRUE(fn.ok()) << fn.status();
  const Tensor x = filled({kM, kK}, 1), w = filled({kN, kK}, 2);
  set_kernel_thread_budget(2);
  reset_kernel_thread_stats();
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int c = 0; c < 10; ++c) {
        if (!linear_is_right(*fn, x, w)) ++wrong;
      }
    });
  }
  for (std::thread& th : callers) th.join();
  EXPECT_EQ(wrong.load(), 0);
  const KernelThreadStats stats = kernel_thread_stats();
  EXPECT_EQ(stats.claims + stats.serial, 4 * 10);  // every call went through the budget
  EXPECT_GE(stats.claims, 1);
  EXPECT_LE(stats.peak, 2);
  EXPECT_EQ(stats.running, 0);
}

// A primitive's thread decomposition is fixed when it is created, so a call that gets another
// team size gets a primitive of its own; the same team size finds the cached one.
TEST_F(OnednnThreadsTest, APrimitiveIsCreatedForTheTeamItRunsOn) {
  SKIP_WITHOUT_ONEDNN();
  absl::StatusOr<LibraryFunction> fn = resolve_library_function("onednn.linear");
  ASSERT_TRUE(fn.ok()) << fn.status();
  const Tensor x = filled({kM, kK}, 3), w = filled({kN, kK}, 4);
  reset_onednn_stats();
  set_kernel_thread_budget(1);
  EXPECT_TRUE(linear_is_right(*fn, x, w));
  EXPECT_EQ(onednn_stats().primitives_created, 1);
  set_kernel_thread_budget(2);
  EXPECT_TRUE(linear_is_right(*fn, x, w));
  EXPECT_EQ(onednn_stats().primitives_created, 2);
  EXPECT_TRUE(linear_is_right(*fn, x, w));
  EXPECT_EQ(onednn_stats().primitives_created, 2);
  EXPECT_EQ(onednn_stats().primitive_cache_hits, 1);
  EXPECT_EQ(kernel_thread_stats().running, 0);
}

// A call of fewer multiply-adds than a team's fork and join cost runs on the calling thread
// without claiming a team; a larger one gets the budget's threads.
TEST_F(OnednnThreadsTest, ASmallCallRunsOnTheCallingThread) {
  SKIP_WITHOUT_ONEDNN();
  absl::StatusOr<LibraryFunction> fn = resolve_library_function("onednn.linear");
  ASSERT_TRUE(fn.ok()) << fn.status();
  set_kernel_thread_budget(2);
  // 8 x 32 outputs of 32 multiply-adds each: 8,192.
  const Tensor x = filled({8, 32}, 5), w = filled({32, 32}, 6);
  Tensor out = *Tensor::empty({8, 32}, DataType::float32());
  reset_kernel_thread_stats();
  ASSERT_TRUE((*fn)({x, w, out}).ok());
  const float* xs = x.data_as_or_die<float>();
  const float* ws = w.data_as_or_die<float>();
  const float* got = out.data_as_or_die<float>();
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 32; ++j) {
      double want = 0;
      for (int64_t k = 0; k < 32; ++k) want += double{xs[i * 32 + k]} * ws[j * 32 + k];
      ASSERT_NEAR(got[i * 32 + j], want, 1e-4 * (1 + std::abs(want))) << i << ", " << j;
    }
  }
  KernelThreadStats stats = kernel_thread_stats();
  EXPECT_EQ(stats.claims, 0);
  EXPECT_EQ(stats.serial, 1);
  // 64 x 48 outputs of 96: 294,912 multiply-adds, a team of 2.
  reset_kernel_thread_stats();
  EXPECT_TRUE(linear_is_right(*fn, filled({kM, kK}, 7), filled({kN, kK}, 8)));
  stats = kernel_thread_stats();
  EXPECT_EQ(stats.claims, 1);
  EXPECT_EQ(stats.peak, 2);
}

// On CPUs that other processes keep busy, a oneDNN call under the default budget gets no
// OpenMP team (whose members would wait for CPUs and spin against the others): it runs on the
// calling thread; on idle CPUs it gets its team.
TEST_F(OnednnThreadsTest, ACallOnBusyCpusRunsOnTheCallingThread) {
  SKIP_WITHOUT_ONEDNN();
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  const int cpus = CPU_COUNT(&set);
  if (cpus < 2) GTEST_SKIP() << "one CPU: no team to cap";
  absl::StatusOr<LibraryFunction> fn = resolve_library_function("onednn.linear");
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::optional<std::string> saved;
  if (const char* old = ::getenv("RELAX_NUM_THREADS")) saved = old;
  ::unsetenv("RELAX_NUM_THREADS");
  set_kernel_thread_budget(0);
  set_kernel_thread_wait(ThreadWait::kAuto);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("relax_onednn_loadavg_" + std::to_string(::getpid()))).string();
  auto say_runnable = [&](int runnable) {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "2.00 2.00 2.00 %d/500 777\n", runnable);
    std::fclose(f);
    set_kernel_load_file(path);
  };
  say_runnable(1 + cpus + 4);
  reset_kernel_thread_stats();
  EXPECT_TRUE(linear_is_right(*fn, filled({kM, kK}, 9), filled({kN, kK}, 10)));
  KernelThreadStats stats = kernel_thread_stats();
  EXPECT_EQ(stats.claims, 0);
  EXPECT_EQ(stats.serial, 1);
  EXPECT_EQ(stats.load_capped, 1);
  say_runnable(1);
  reset_kernel_thread_stats();
  EXPECT_TRUE(linear_is_right(*fn, filled({kM, kK}, 9), filled({kN, kK}, 10)));
  stats = kernel_thread_stats();
  EXPECT_EQ(stats.claims, 1);
  EXPECT_EQ(stats.peak, cpus);
  std::filesystem::remove(path);
  if (saved.has_value()) ::setenv("RELAX_NUM_THREADS", saved->c_str(), 1);
}

}  // namespace
}  // namespace relax::runtime
