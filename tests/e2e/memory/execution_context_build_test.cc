// Execution contexts on compiled modules: hand-written lowered, planned IR (one arena per
// function with the intermediates at offsets in it, one storage per output, the arena killed
// after its last use) built by relax::build without passes and run many times.
//   - the soak tests: 10,000 calls at random sizes; under declared upper bounds (a constant
//     arena) the context's reserved bytes never move once the largest output has been seen,
//     without them (a symbolic arena) they never exceed the largest call's need; after warm-up
//     no call makes an allocator call, counted by the context and by the allocator it uses;
//   - many threads calling one module at mixed sizes, every result checked against plain loops
//     (the name holds "Concurrent": ./dev.sh tsan runs it under ThreadSanitizer).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/allocator.h"
#include "relax/runtime/execution_context.h"

namespace relax {
namespace {

using runtime::CallMemoryStats;
using runtime::ExecutionContext;
using runtime::Tensor;
using runtime::Value;

constexpr int64_t kBound = 256;
constexpr int64_t kConstantArena = 2 * kBound * 4;  // a and b, float32[n] each, n <= 256

// y = (a + x) * a with a = x + x, i.e. 6 x^2, in two planned forms:
//   @bounded: n <= 256, the arena a constant 2048 bytes, b at the constant offset 1024;
//   @unbounded: the arena n * 8 bytes, b at offset n * 4.
// Each output has a storage of its own (n * 4 bytes); the arena dies after its last use.
constexpr const char* kPlanned = R"(module {
  func @bounded(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] upper_bounds {n: 256} {
    arena: Object = alloc_storage(prim(2048), alignment=64)
    a: Tensor[(n,), float32] = alloc_tensor(arena, prim(0), shape(n), dtype=float32)
    c0: Tuple[()] = call_tir_dps(@add, (x, x), (a,))
    b: Tensor[(n,), float32] = alloc_tensor(arena, prim(1024), shape(n), dtype=float32)
    c1: Tuple[()] = call_tir_dps(@add, (a, x), (b,))
    out: Object = alloc_storage(prim(n * 4), alignment=64)
    y: Tensor[(n,), float32] = alloc_tensor(out, prim(0), shape(n), dtype=float32)
    c2: Tuple[()] = call_tir_dps(@mul, (b, a), (y,))
    k: Tuple[()] = kill_storage(arena)
    return y
  }
  func @unbounded(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
    arena: Object = alloc_storage(prim(n * 8), alignment=64)
    a: Tensor[(n,), float32] = alloc_tensor(arena, prim(0), shape(n), dtype=float32)
    c0: Tuple[()] = call_tir_dps(@add, (x, x), (a,))
    b: Tensor[(n,), float32] = alloc_tensor(arena, prim(n * 4), shape(n), dtype=float32)
    c1: Tuple[()] = call_tir_dps(@add, (a, x), (b,))
    out: Object = alloc_storage(prim(n * 4), alignment=64)
    y: Tensor[(n,), float32] = alloc_tensor(out, prim(0), shape(n), dtype=float32)
    c2: Tuple[()] = call_tir_dps(@mul, (b, a), (y,))
    k: Tuple[()] = kill_storage(arena)
    return y
  }
  prim_func @add(A: Buffer[(m,), float32], B: Buffer[(m,), float32], C: Buffer[(m,), float32]) attrs {global_symbol = "add"} {
    for i in range(m) {
      C[i] = A[i] + B[i]
    }
  }
  prim_func @mul(A: Buffer[(m,), float32], B: Buffer[(m,), float32], C: Buffer[(m,), float32]) attrs {global_symbol = "mul"} {
    for i in range(m) {
      C[i] = A[i] * B[i]
    }
  }
}
)";

runtime::Module build_planned() {
  absl::StatusOr<IRModule> mod = parse_module(kPlanned);
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return runtime::Module();
  // No passes: the module is lowered and planned already.
  absl::StatusOr<runtime::Module> built = build(*mod, testing::build_test_target(), transform::PassManager());
  EXPECT_TRUE(built.ok()) << built.status();
  return built.ok() ? *built : runtime::Module();
}

// Whether y is 6 x^2, element by element (in double, as a plain loop).
bool matches_reference(const Tensor& x, const Tensor& y) {
  if (y.shape() != x.shape()) return false;
  const float* xs = x.data_as_or_die<float>();
  const float* ys = y.data_as_or_die<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double e = 6.0 * double{xs[i]} * xs[i];
    if (std::abs(ys[i] - e) > 1e-5 * (1.0 + std::abs(e))) return false;
  }
  return true;
}

std::vector<float> elements(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

// One random input per size, made once: the soak measures the calls, not the inputs.
std::vector<Tensor> inputs_by_size() {
  std::vector<Tensor> xs;
  for (int64_t n = 0; n <= kBound; ++n) xs.push_back(testing::random_tensor({n}, static_cast<int>(n)));
  return xs;
}

TEST(ExecutionContextBuildTest, SoakUnderUpperBoundsReservesOneConstantArena) {
  const runtime::Module m = build_planned();
  ASSERT_TRUE(m.defined());
  const runtime::Function fn = m["bounded"];
  const std::vector<Tensor> xs = inputs_by_size();
  // The context allocates from an allocator of its own, so that its figures are the context's.
  runtime::PooledAllocator allocator;
  ExecutionContext ctx(&allocator);
  // The first call at the bound: its output storage is the largest any later call needs.
  absl::StatusOr<Value> y = fn.call(ctx, {Value(xs[kBound])});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_TRUE(matches_reference(xs[kBound], y->tensor_or_die()));
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 2);
  const int64_t reserved = ctx.reserved_bytes();
  EXPECT_EQ(reserved, kConstantArena + kBound * 4);
  const runtime::AllocatorStats after_first = allocator.stats();

  std::mt19937 rng(13);
  std::uniform_int_distribution<int64_t> size(1, kBound);
  int wrong = 0, moved = 0, allocating = 0;
  y = Value();  // each result dies before the next call (see the pool test for held ones)
  for (int call = 1; call < 10000; ++call) {
    const int64_t n = size(rng);
    absl::StatusOr<Value> r = fn.call(ctx, {Value(xs[static_cast<size_t>(n)])});
    ASSERT_TRUE(r.ok()) << r.status();
    wrong += !matches_reference(xs[static_cast<size_t>(n)], r->tensor_or_die());
    const CallMemoryStats& s = ctx.last_call_stats();
    moved += s.reserved_bytes != reserved;
    allocating += s.allocator_calls != 0;
    if (call == 1) {
      EXPECT_EQ(s.arena_bytes, kConstantArena);
      EXPECT_EQ(s.output_bytes, n * 4);
      EXPECT_EQ(s.reused, 2);
    }
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(moved, 0);
  EXPECT_EQ(allocating, 0);
  EXPECT_EQ(ctx.total_allocator_calls(), 2);
  // The allocator agrees: nothing allocated after the first call, nothing more reserved.
  const runtime::AllocatorStats end = allocator.stats();
  EXPECT_EQ(end.num_allocations, after_first.num_allocations);
  EXPECT_EQ(end.bytes_reserved, after_first.bytes_reserved);
  // Over the bound: the declared upper bound is checked, nothing is allocated.
  const Tensor too_big = testing::random_tensor({kBound + 1}, 1);
  y = fn.call(ctx, {Value(too_big)});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().message(), "bounded: n = 257 exceeds its declared upper bound 256");
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 0);
}

TEST(ExecutionContextBuildTest, SoakWithoutBoundsNeverReservesMoreThanTheLargestCall) {
  const runtime::Module m = build_planned();
  ASSERT_TRUE(m.defined());
  const runtime::Function fn = m["unbounded"];
  const std::vector<Tensor> xs = inputs_by_size();
  ExecutionContext ctx;
  std::mt19937 rng(29);
  std::uniform_int_distribution<int64_t> size(1, kBound);
  int64_t largest = 0;
  int wrong = 0, over = 0, needless_allocations = 0, growths = 0;
  for (int call = 0; call < 10000; ++call) {
    const int64_t n = size(rng);
    absl::StatusOr<Value> y = fn.call(ctx, {Value(xs[static_cast<size_t>(n)])});
    ASSERT_TRUE(y.ok()) << y.status();
    wrong += !matches_reference(xs[static_cast<size_t>(n)], y->tensor_or_die());
    const CallMemoryStats& s = ctx.last_call_stats();
    const bool grows = n > largest;
    growths += grows;
    largest = std::max(largest, n);
    // The arena (8 n) and the output (4 n), each at the largest size seen so far.
    over += s.reserved_bytes != 12 * largest;
    needless_allocations += !grows && s.allocator_calls != 0;
    if (grows) {
      EXPECT_EQ(s.allocator_calls, 2) << "call " << call << ", n = " << n;
    }
    EXPECT_EQ(s.arena_bytes, 8 * n);
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(over, 0);
  EXPECT_EQ(needless_allocations, 0);
  EXPECT_EQ(ctx.total_allocator_calls(), 2 * growths);
  EXPECT_LT(growths, 20);  // random sizes reach the largest ones quickly
}

TEST(ExecutionContextBuildTest, AnOutputTheCallerKeepsIsNeverOverwritten) {
  const runtime::Module m = build_planned();
  ASSERT_TRUE(m.defined());
  for (const char* name : {"bounded", "unbounded"}) {
    const runtime::Function fn = m[name];
    ExecutionContext ctx;
    const Tensor x1 = testing::random_tensor({100}, 1), x2 = testing::random_tensor({100}, 2);
    absl::StatusOr<Value> y1 = fn.call(ctx, {Value(x1)});
    ASSERT_TRUE(y1.ok()) << y1.status();
    const std::vector<float> before = elements(y1->tensor_or_die());
    absl::StatusOr<Value> y2 = fn.call(ctx, {Value(x2)});
    ASSERT_TRUE(y2.ok()) << y2.status();
    EXPECT_EQ(elements(y1->tensor_or_die()), before) << name;
    EXPECT_TRUE(matches_reference(x1, y1->tensor_or_die())) << name;
    EXPECT_TRUE(matches_reference(x2, y2->tensor_or_die())) << name;
    EXPECT_NE(y1->tensor_or_die().data(), y2->tensor_or_die().data()) << name;
    // Only the output needed a new storage; the arena was free again.
    EXPECT_EQ(ctx.last_call_stats().allocator_calls, 1) << name;
    EXPECT_EQ(ctx.last_call_stats().reused, 1) << name;
  }
}

TEST(ExecutionContextBuildTest, ConcurrentCallsOfAPlannedModuleAtMixedSizes) {
  const runtime::Module m = build_planned();
  ASSERT_TRUE(m.defined());
  const runtime::Function bounded = m["bounded"], unbounded = m["unbounded"];
  constexpr int kThreads = 8, kCalls = 200;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      std::uniform_int_distribution<int64_t> size(1, kBound);
      // Half the threads bring contexts of their own, half use the module's pool; the
      // results of the last few calls are kept while the next ones run.
      ExecutionContext own;
      std::vector<std::pair<Tensor, Value>> kept;
      for (int i = 0; i < kCalls; ++i) {
        const int64_t n = size(rng);
        const Tensor x = testing::random_tensor({n}, t * kCalls + i);
        const runtime::Function& fn = (i + t) % 2 == 0 ? bounded : unbounded;
        absl::StatusOr<Value> y = t % 2 == 0 ? fn.call(own, {Value(x)}) : fn.call({Value(x)});
        if (!y.ok()) {
          ++failed;
          continue;
        }
        kept.emplace_back(x, *y);
        if (kept.size() > 3) {
          // Checked when dropped: no later call may have written into a kept output.
          wrong += !matches_reference(kept.front().first, kept.front().second.tensor_or_die());
          kept.erase(kept.begin());
        }
      }
      for (const auto& [x, y] : kept) wrong += !matches_reference(x, y.tensor_or_die());
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace relax
