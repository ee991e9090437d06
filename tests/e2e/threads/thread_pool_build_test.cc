// Generated kernels on the runtime's one thread pool (relax/runtime/thread_pool.h): a parallel
// loop is an outlined lambda the pool runs in static chunks. 8 threads calling a module at once
// never have more threads running chunks than the budget (counted by the pool), nested parallel
// loops compute right, and a failure inside the pool is reported once, whole.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_test_util.h"
#include "object_code_util.h"
#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/runtime/thread_budget.h"
#include "relax/runtime/thread_pool.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using runtime::Tensor;
using runtime::Value;

const DataType kF32 = DataType::float32();

class ThreadPoolBuildTest : public testing::JitTest {
 protected:
  ThreadPoolBuildTest() {
    target_.parallel_min_work = 0;  // every parallel loop goes to the pool
    runtime::set_kernel_teams(runtime::KernelTeams::kPool);
    runtime::reset_kernel_thread_stats();
    runtime::reset_thread_pool_stats();
  }
  ~ThreadPoolBuildTest() override {
    runtime::set_kernel_thread_budget(0);
    runtime::set_kernel_teams(std::nullopt);
  }
};

TEST_F(ThreadPoolBuildTest, EightCallersNeverRunMoreThreadsThanTheBudget) {
  absl::StatusOr<runtime::Module> m = relax::build(testing::multiply_add_module(), testing::build_test_target());
  ASSERT_TRUE(m.ok()) << m.status();
  runtime::set_kernel_thread_budget(2);
  const int32_t workers_before = runtime::thread_pool_stats().workers;
  const int64_t n = 1 << 17;
  const Tensor x = testing::random_tensor({n}, 5), y = testing::random_tensor({n}, 6);
  const float* xs = x.data_as_or_die<float>();
  const float* ys = y.data_as_or_die<float>();
  const runtime::Function main_fn = m->operator[]("main");
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&] {
      for (int c = 0; c < 20; ++c) {
        absl::StatusOr<Value> out = main_fn(x, y);
        if (!out.ok()) {
          ++wrong;
          continue;
        }
        const float* got = out->tensor_or_die().data_as_or_die<float>();
        for (int64_t i = 0; i < n; ++i) {
          const float e = xs[i] * ys[i] + xs[i];
          if (std::abs(got[i] - e) > 1e-5f * (1.0f + std::abs(e))) {
            ++wrong;
            break;
          }
        }
      }
    });
  }
  for (std::thread& th : callers) th.join();
  EXPECT_EQ(wrong.load(), 0);
  const runtime::ThreadPoolStats pool = runtime::thread_pool_stats();
  EXPECT_LE(pool.peak, 2);  // callers of teams and workers running chunks at once
  EXPECT_GE(pool.teams, 1);
  // Every call's two loops (the module's kernels multiply and add) went through the pool.
  EXPECT_EQ(pool.teams + pool.inline_runs, 8 * 20 * 2);
  EXPECT_EQ(pool.running, 0);
  EXPECT_LE(pool.workers, std::max(workers_before, 1));
  const runtime::KernelThreadStats budget = runtime::kernel_thread_stats();
  EXPECT_LE(budget.peak, 2);
  EXPECT_EQ(budget.running, 0);
}

// out[i, j] = A[i, j] * 2 + i over a parallel outer loop and a parallel inner loop (which runs
// as a plain loop inside the outer one's chunks), at several sizes from one compilation.
TEST_F(ThreadPoolBuildTest, NestedParallelLoops) {
  SymVar n("n"), m("m");
  PrimFuncBuilder b("nested");
  Buffer A = b.buffer_param("A", {n, m}, kF32);
  Buffer B = b.buffer_param("B", {n, m}, kF32);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, m, ForKind::kParallel,
           [&](SymVar j) { b.store(B, {i, j}, buffer_load(A, {i, j}) * 2.0 + cast(kF32, i)); });
  });
  runtime::set_kernel_thread_budget(3);
  RelaxKernelFn fn = jit_one(b, "nested");
  ASSERT_NE(fn, nullptr);
  // One outlined loop: the inner one is plain inside it.
  const size_t call = last_source_.find("if (relax_parallel_for(");
  ASSERT_NE(call, std::string::npos) << last_source_;
  EXPECT_EQ(last_source_.find("if (relax_parallel_for(", call + 1), std::string::npos) << last_source_;
  for (auto [N, M] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {7, 5}, {300, 17}}) {
    std::vector<float> a(static_cast<size_t>(N * M)), out(a.size(), -1.0f);
    for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k % 13) - 6.0f;
    ASSERT_EQ(testing::KernelArgs().buffer(a, {N, M}).buffer(out, {N, M}).call(fn), "");
    for (int64_t i = 0; i < N; ++i) {
      for (int64_t j = 0; j < M; ++j) {
        const size_t k = static_cast<size_t>(i * M + j);
        ASSERT_EQ(out[k], a[k] * 2.0f + static_cast<float>(i)) << N << "x" << M << " at " << i << "," << j;
      }
    }
  }
  EXPECT_GE(runtime::thread_pool_stats().teams, 1);
}

// Every iteration of a parallel loop asks for a heap block of s + i elements, which cannot be
// had: the first failing iteration writes the message (of its own size) and the others only
// set the flag, so the message is one whole message, whichever chunk came first, in every one
// of 8 concurrent calls.
TEST_F(ThreadPoolBuildTest, AFailureInsideThePoolIsReportedOnce) {
  SymVar n("n");
  PrimFuncBuilder b("fails");
  Buffer A = b.buffer_param("A", {n}, kF32);
  SymVar s = b.scalar_param("s");
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    Buffer tmp = b.allocate("tmp", {SymExpr(s) + i}, kF32);
    b.store(tmp, {0}, SymExpr::float_imm(1.0, kF32));
    b.store(A, {i}, buffer_load(tmp, {0}));
  });
  runtime::set_kernel_thread_budget(4);
  RelaxKernelFn fn = jit_one(b, "fails");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, HasSubstr("return __atomic_load_n(&relax_failed, __ATOMIC_RELAXED);"));
  const int64_t huge = int64_t{1} << 61;  // times 4 bytes: more than any allocator gives
  const std::regex whole("cannot allocate ([0-9]+) elements of float32 for tmp");
  std::atomic<int> bad{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&] {
      for (int c = 0; c < 10; ++c) {
        std::vector<float> a(4096, 0.0f);
        const std::string message = testing::KernelArgs().buffer(a, {4096}).integer(huge).call(fn);
        std::smatch match;
        if (!std::regex_match(message, match, whole)) {
          ++bad;
          ADD_FAILURE() << message;
          continue;
        }
        const int64_t count = std::stoll(match[1].str());
        if (count < huge || count >= huge + 4096) ++bad;
      }
    });
  }
  for (std::thread& th : callers) th.join();
  EXPECT_EQ(bad.load(), 0);
  // A size that can be had: the same kernel computes.
  std::vector<float> a(100, 0.0f);
  EXPECT_EQ(testing::KernelArgs().buffer(a, {100}).integer(8).call(fn), "");
  EXPECT_EQ(a, std::vector<float>(100, 1.0f));
  EXPECT_EQ(runtime::thread_pool_stats().running, 0);
  EXPECT_EQ(runtime::kernel_thread_stats().running, 0);
}

// Kernels need no OpenMP runtime any more: the library is compiled with -fopenmp-simd only.
TEST_F(ThreadPoolBuildTest, KernelsAreCompiledWithoutTheOpenMpRuntime) {
  SymVar n("n");
  PrimFuncBuilder b("scale");
  Buffer A = b.buffer_param("A", {n}, kF32);
  Buffer B = b.buffer_param("B", {n}, kF32);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) { b.store(B, {i}, buffer_load(A, {i}) * 3.0); });
  RelaxKernelFn fn = jit_one(b, "scale");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, Not(HasSubstr("omp_get")));
  EXPECT_THAT(last_source_, Not(HasSubstr("omp parallel")));
  // The shared object names no OpenMP runtime among the libraries it needs.
  std::ifstream file(libraries_.back()->path(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.find("libgomp"), std::string::npos);
  EXPECT_EQ(bytes.find("libomp"), std::string::npos);
  std::vector<float> a(1000), out(1000);
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k);
  ASSERT_EQ(testing::KernelArgs().buffer(a, {1000}).buffer(out, {1000}).call(fn), "");
  for (size_t k = 0; k < a.size(); ++k) ASSERT_EQ(out[k], a[k] * 3.0f);
}

// The outlined body keeps the loop's vectorisation: with no serial copy (parallel_min_work 0),
// the pool's entry for the lambda (relax_parallel_body<...>) holds packed float arithmetic.
TEST_F(ThreadPoolBuildTest, TheOutlinedBodyIsVectorised) {
  const auto run = [](const std::string& command) {
    return testing::run_command(command).value_or("");
  };
  const std::string version = run("'" + resolve_compiler(target_) + "' --version 2>&1");
  if (version.find("Free Software Foundation") == std::string::npos) GTEST_SKIP() << "the host compiler is not g++";
  if (run("objdump --version 2>/dev/null").empty()) GTEST_SKIP() << "objdump is not installed";
  SymVar n("n");
  PrimFuncBuilder b("fma");
  Buffer A = b.buffer_param("A", {n, 64}, kF32);
  Buffer B = b.buffer_param("B", {n, 64}, kF32);
  Buffer C = b.buffer_param("C", {n, 64}, kF32);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, 64, ForKind::kVectorized, [&](SymVar j) {
      b.store(C, {i, j}, buffer_load(A, {i, j}) * buffer_load(B, {i, j}) + buffer_load(A, {i, j}));
    });
  });
  RelaxKernelFn fn = jit_one(b, "fma");
  ASSERT_NE(fn, nullptr);
  const std::string text = run("objdump -d --no-show-raw-insn '" + libraries_.back()->path() + "' 2>/dev/null");
  // The functions whose (mangled) name holds relax_parallel_body.
  std::string bodies;
  bool in_body = false;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == ':' && line.find(" <") != std::string::npos) {
      in_body = line.find("relax_parallel_body") != std::string::npos;
    }
    if (in_body) bodies += line + "\n";
    start = end + 1;
  }
  ASSERT_FALSE(bodies.empty()) << text.substr(0, 2000);
  EXPECT_TRUE(std::regex_search(bodies, std::regex(R"(\sv(fmadd|mul|add)\w*ps\s.*%[yz]mm)"))) << bodies;
  std::vector<float> a(3 * 64), bb(a.size()), c(a.size());
  for (size_t k = 0; k < a.size(); ++k) {
    a[k] = static_cast<float>(k % 11) - 5.0f;
    bb[k] = static_cast<float>(k % 3) + 0.5f;
  }
  ASSERT_EQ(testing::KernelArgs().buffer(a, {3, 64}).buffer(bb, {3, 64}).buffer(c, {3, 64}).call(fn), "");
  for (size_t k = 0; k < a.size(); ++k) ASSERT_FLOAT_EQ(c[k], a[k] * bb[k] + a[k]) << k;
}

// A library of kernel ABI 2 (whose parallel loops forked OpenMP teams of their own and whose
// runtime table had no parallel_for) is refused with a message that says to rebuild it.
TEST_F(ThreadPoolBuildTest, ALibraryOfKernelAbi2IsRefused) {
  const std::string source = R"cpp(
#include <cstdint>
struct Entry { const char* name; void* fn; };
struct OldApi { int32_t (*claim_threads)(int32_t); void (*release_threads)(int32_t); };
static const Entry table[] = {{"none", nullptr}};
extern "C" int32_t relax_abi_version(void) { return 2; }
extern "C" const Entry* relax_kernels(int32_t* count) { *count = 0; return table; }
extern "C" void relax_set_runtime_api(const OldApi*) {}
)cpp";
  absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(source, target_);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::StatusOr<std::shared_ptr<const runtime::KernelLibrary>> lib =
      runtime::KernelLibrary::open(compiled->library_path);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(lib.status().message()),
              HasSubstr(absl::StrCat("has kernel ABI version 2, but this runtime implements version ",
                                       RELAX_KERNEL_ABI_VERSION, "; rebuild it")));
}

}  // namespace
}  // namespace relax
