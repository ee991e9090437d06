// End to end with plan-memory in the default pipeline: a small MLP-like model whose
// intermediates share one arena, compiled once per planning mode (n bounded: a constant arena;
// n unbounded: a symbolic one), run at several sizes and compared with a plain-loop reference.
// The compiled module's plan is also checked from its IR at each size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/runtime/execution_context.h"
#include "relax/transform/pipeline.h"
#include "relax/transform/plan_memory.h"

namespace relax {
namespace {

using runtime::Tensor;

constexpr int64_t kWidth = 16;

// h1 = relu(x w1); h2 = relu(h1 w2); h3 = h2 w1 + h1; h4 = relu(h3 w2); out = h4 w1 * x.
std::string model(const std::string& bounds) {
  return R"(module {
  func @main(x: Tensor[(n, 16), float32], w1: Tensor[(16, 16), float32], w2: Tensor[(16, 16), float32]) -> Tensor[(n, 16), float32])" +
         bounds + R"( {
    dataflow {
      a = matmul(x, w1)
      h1 = relu(a)
      b = matmul(h1, w2)
      h2 = relu(b)
      c = matmul(h2, w1)
      h3 = add(c, h1)
      d = matmul(h3, w2)
      h4 = relu(d)
      e = matmul(h4, w1)
      output out = multiply(e, x)
    }
    return out
  }
})";
}

// out as above, with plain loops.
std::vector<float> reference(const Tensor& x, const Tensor& w1, const Tensor& w2, int64_t n) {
  const float* xs = x.data_as_or_die<float>();
  auto matmul = [&](const std::vector<float>& in, const Tensor& w) {
    const float* ws = w.data_as_or_die<float>();
    std::vector<float> out(static_cast<size_t>(n * kWidth), 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < kWidth; ++j) {
        float acc = 0;
        for (int64_t k = 0; k < kWidth; ++k) acc += in[static_cast<size_t>(i * kWidth + k)] * ws[k * kWidth + j];
        out[static_cast<size_t>(i * kWidth + j)] = acc;
      }
    }
    return out;
  };
  auto relu = [](std::vector<float> v) {
    for (float& f : v) f = std::max(f, 0.0f);
    return v;
  };
  std::vector<float> xv(xs, xs + n * kWidth);
  std::vector<float> h1 = relu(matmul(xv, w1));
  std::vector<float> h2 = relu(matmul(h1, w2));
  std::vector<float> h3 = matmul(h2, w1);
  for (size_t i = 0; i < h3.size(); ++i) h3[i] += h1[i];
  std::vector<float> h4 = relu(matmul(h3, w2));
  std::vector<float> out = matmul(h4, w1);
  for (size_t i = 0; i < out.size(); ++i) out[i] *= xv[i];
  return out;
}

void build_and_compare(const std::string& bounds, const std::string& expected_arena) {
  absl::StatusOr<IRModule> mod = parse_module(model(bounds));
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Target target = testing::build_test_target();
  BuildInfo info;
  absl::StatusOr<runtime::Module> built = build(*mod, target, transform::default_pipeline(target), &info);
  ASSERT_TRUE(built.ok()) << built.status();
  const std::string text = to_text(info.lowered);
  EXPECT_THAT(text, ::testing::HasSubstr(expected_arena)) << text;
  EXPECT_THAT(text, ::testing::HasSubstr("kill_storage(arena)")) << text;

  Tensor w1 = testing::random_tensor({kWidth, kWidth}, 11);
  Tensor w2 = testing::random_tensor({kWidth, kWidth}, 12);
  for (int64_t n : {1, 5, 33, 64, 2, 64}) {
    absl::StatusOr<SymVarMap<int64_t>> values =
        transform::memory::function_sym_values(info.lowered, "main", {{"n", n}});
    ASSERT_TRUE(values.ok()) << values.status();
    absl::Status checked = transform::memory::check_memory_plan(info.lowered.lookup("main"), *values);
    EXPECT_TRUE(checked.ok()) << checked;

    Tensor x = testing::random_tensor({n, kWidth}, static_cast<int>(n));
    absl::StatusOr<runtime::Value> got = (*built)["main"](x, w1, w2);
    ASSERT_TRUE(got.ok()) << got.status();
    const std::vector<float> want = reference(x, w1, w2, n);
    const Tensor& out = got->tensor_or_die();
    ASSERT_EQ(out.shape(), (std::vector<int64_t>{n, kWidth}));
    const float* g = out.data_as_or_die<float>();
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(g[i], want[i], 1e-3f * (1.0f + std::fabs(want[i]))) << "n = " << n << ", element " << i;
    }
  }
}

// The model compiled with the default pipeline.
runtime::Module build_model(const std::string& bounds) {
  absl::StatusOr<IRModule> mod = parse_module(model(bounds));
  EXPECT_TRUE(mod.ok()) << mod.status();
  const Target target = testing::build_test_target();
  absl::StatusOr<runtime::Module> built = build(*mod, target, transform::default_pipeline(target));
  EXPECT_TRUE(built.ok()) << built.status();
  return *built;
}

void expect_matches_reference(const Tensor& out, const Tensor& x, const Tensor& w1, const Tensor& w2, int64_t n) {
  const std::vector<float> want = reference(x, w1, w2, n);
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{n, kWidth}));
  const float* g = out.data_as_or_die<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(g[i], want[i], 1e-3f * (1.0f + std::fabs(want[i]))) << "n = " << n << ", element " << i;
  }
}

// The soak of the memory issue: 10,000 calls of the planned model at random sizes under its
// bound on one context. The first call (at the bound, so that the output's storage is already
// as large as it gets) allocates the constant arena and the output; after it the context's
// reserved bytes never move and no call reaches the allocator, whatever the size.
TEST(PlanMemoryBuild, SoakUnderTheBoundReservesTheSameBytesAfterTheFirstCall) {
  const runtime::Module m = build_model(" upper_bounds {n: 64}");
  const Tensor w1 = testing::random_tensor({kWidth, kWidth}, 11);
  const Tensor w2 = testing::random_tensor({kWidth, kWidth}, 12);
  runtime::PooledAllocator pool;
  runtime::ExecutionContext ctx(&pool);
  const Tensor x64 = testing::random_tensor({64, kWidth}, 64);
  ASSERT_TRUE(m["main"].call(ctx, {runtime::Value(x64), runtime::Value(w1), runtime::Value(w2)}).ok());
  const int64_t reserved = ctx.reserved_bytes();
  const int64_t system_bytes = pool.stats().bytes_reserved;
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 2);  // the arena and the output
  EXPECT_EQ(reserved, ctx.last_call_stats().arena_bytes + 64 * kWidth * 4);
  std::mt19937 rng(20261202);
  std::vector<Tensor> inputs;
  for (int64_t n = 1; n <= 64; ++n) inputs.push_back(testing::random_tensor({n, kWidth}, static_cast<int>(n)));
  for (int call = 0; call < 10000; ++call) {
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 64)(rng);
    const Tensor& x = inputs[static_cast<size_t>(n - 1)];
    absl::StatusOr<runtime::Value> y = m["main"].call(ctx, {runtime::Value(x), runtime::Value(w1), runtime::Value(w2)});
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ(ctx.reserved_bytes(), reserved) << "call " << call << ", n = " << n;
    ASSERT_EQ(ctx.last_call_stats().allocator_calls, 0) << "call " << call << ", n = " << n;
    if (call % 1000 == 0) expect_matches_reference(y->tensor_or_die(), x, w1, w2, n);
  }
  EXPECT_EQ(pool.stats().bytes_reserved, system_bytes);
}

// Without a bound the arena is sized per call: the context keeps the largest one seen, so its
// reserved bytes never exceed what the largest call so far needs (arena and output at that n).
TEST(PlanMemoryBuild, SoakWithoutBoundsNeverReservesMoreThanTheLargestCallNeeds) {
  const runtime::Module m = build_model("");
  const Tensor w1 = testing::random_tensor({kWidth, kWidth}, 11);
  const Tensor w2 = testing::random_tensor({kWidth, kWidth}, 12);
  runtime::ExecutionContext ctx;
  std::mt19937 rng(20261203);
  int64_t largest_need = 0, allocations = 0;
  for (int call = 0; call < 2000; ++call) {
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 300)(rng);
    const Tensor x = testing::random_tensor({n, kWidth}, static_cast<int>(n));
    absl::StatusOr<runtime::Value> y = m["main"].call(ctx, {runtime::Value(x), runtime::Value(w1), runtime::Value(w2)});
    ASSERT_TRUE(y.ok()) << y.status();
    const runtime::CallMemoryStats& s = ctx.last_call_stats();
    largest_need = std::max(largest_need, s.arena_bytes + s.output_bytes);
    allocations += s.allocator_calls;
    ASSERT_LE(ctx.reserved_bytes(), largest_need) << "call " << call << ", n = " << n;
    if (call % 500 == 0) expect_matches_reference(y->tensor_or_die(), x, w1, w2, n);
  }
  EXPECT_LT(allocations, 100);  // only when a call is larger than every earlier one
}

TEST(PlanMemoryBuild, BoundedModelRunsInAConstantArena) {
  // Four n x 16 float intermediates at n <= 64 (4096 bytes each), two blocks reused.
  build_and_compare(" upper_bounds {n: 64}", "arena: Object = alloc_storage(prim(");
}

TEST(PlanMemoryBuild, UnboundedModelRunsInASymbolicArena) {
  build_and_compare("", "arena: Object = alloc_storage(prim(n * ");
}

}  // namespace
}  // namespace relax
