// call_extern in the transform layer: the loop-level evaluator calls a
// micro-kernel's host function on pointers into its tensors (checked against
// plain loops written here, at several sizes of one kernel), with errors for a
// region outside its buffer, a written input and an unregistered kernel; and
// annotate-op-pattern treats a kernel with an extern call as opaque unless the
// kernel says otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "relax/ir/parser.h"
#include "relax/ir/prim_func.h"
#include "relax/support/check.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/prim_eval.h"

namespace relax::transform {
namespace {

using ::testing::HasSubstr;

runtime::Tensor f32_tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(std::move(shape), DataType::float32());
  RELAX_CHECK(t.ok()) << t.status().message();
  RELAX_CHECK(t->nbytes() == values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(t->data(), values.data(), t->nbytes());
  return *t;
}

std::vector<float> values_of(const runtime::Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.data(), t.nbytes());
  return out;
}

Expr prim_func_of(const std::string& text, const std::string& name) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  RELAX_CHECK(mod.ok()) << mod.status().message();
  return mod->lookup(name);
}

std::vector<float> ramp(int64_t n, float scale, float offset) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(static_cast<float>(i) * scale) + offset;
  return v;
}

// C = A @ B^T row by row with the built-in dot, then C[i, :] += 2 * A[i, 0:m]
// with the built-in axpy (where m <= k).
constexpr const char* kKernels = R"(module {
  prim_func @dot_rows(A: Buffer[(n, k), float32], B: Buffer[(m, k), float32], C: Buffer[(n, m), float32]) {
    for i in range(n) {
      for j in range(m) {
        call_extern relax_dot_f32(&A[i, 0], &B[j, 0], k, &C[i, j])
      }
    }
  }
  prim_func @axpy_rows(A: Buffer[(n, k), float32], C: Buffer[(n, m), float32]) {
    for i in range(n) {
      call_extern relax_axpy_f32(2f32, &A[i, 0], m, &C[i, 0])
    }
  }
  prim_func @past_end(A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(1,), float32], len: int64) {
    call_extern relax_dot_f32(&A[0], &B[0], len, &C[0])
  }
  prim_func @unknown(A: Buffer[(n,), float32]) {
    call_extern not_registered_anywhere(&A[0])
  }
})";

TEST(ExternCallEval, DotAndAxpyMatchPlainLoopsAtSeveralSizes) {
  const Expr dot = prim_func_of(kKernels, "dot_rows");
  const Expr axpy = prim_func_of(kKernels, "axpy_rows");
  for (auto [n, m, k] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {3, 5, 17}, {4, 2, 40}, {2, 7, 33}}) {
    SCOPED_TRACE(testing::Message() << "n=" << n << " m=" << m << " k=" << k);
    const std::vector<float> a = ramp(n * k, 0.37f, 0.1f), b = ramp(m * k, 0.91f, -0.2f);
    runtime::Tensor c = f32_tensor({n, m}, std::vector<float>(static_cast<size_t>(n * m), -7.0f));
    absl::Status s = run_prim_func(dot, {f32_tensor({n, k}, a), f32_tensor({m, k}, b), c},
                                   {.name = "", .access = {BufferAccess::kInput, BufferAccess::kInput, BufferAccess::kOutput}});
    ASSERT_TRUE(s.ok()) << s;
    std::vector<float> got = values_of(c);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double ref = 0;
        for (int64_t r = 0; r < k; ++r) ref += double{a[static_cast<size_t>(i * k + r)]} * b[static_cast<size_t>(j * k + r)];
        EXPECT_NEAR(got[static_cast<size_t>(i * m + j)], ref, 1e-5 * (1 + k)) << i << ", " << j;
      }
    }
    if (m > k) continue;
    s = run_prim_func(axpy, {f32_tensor({n, k}, a), c});
    ASSERT_TRUE(s.ok()) << s;
    std::vector<float> after = values_of(c);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        const size_t at = static_cast<size_t>(i * m + j);
        EXPECT_FLOAT_EQ(after[at], got[at] + 2.0f * a[static_cast<size_t>(i * k + j)]);
      }
    }
  }
}

TEST(ExternCallEval, ARegionPastTheEndOfItsBufferIsAnErrorBeforeTheKernelRuns) {
  const Expr f = prim_func_of(kKernels, "past_end");
  runtime::Tensor c = f32_tensor({1}, {5.0f});
  absl::Status s = run_prim_func(f, {f32_tensor({4}, {1, 2, 3, 4}), f32_tensor({4}, {1, 1, 1, 1}), c,
                                     PrimScalar::from_int(5)});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("in `call_extern relax_dot_f32`: argument 0 (`x`): the region of 5 "
                                     "elements from `A[0]` ends past the buffer's 4 elements"));
  EXPECT_EQ(values_of(c), std::vector<float>{5.0f});
  s = run_prim_func(f, {f32_tensor({4}, {1, 2, 3, 4}), f32_tensor({4}, {1, 1, 1, 1}), c, PrimScalar::from_int(4)});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(values_of(c), std::vector<float>{10.0f});
}

TEST(ExternCallEval, WritingAnInputAndCallingAnUnregisteredKernelAreErrors) {
  const Expr f = prim_func_of(kKernels, "past_end");
  absl::Status s = run_prim_func(f, {f32_tensor({2}, {1, 2}), f32_tensor({2}, {1, 1}), f32_tensor({1}, {0}),
                                     PrimScalar::from_int(2)},
                                 {.name = "", .access = {BufferAccess::kInput, BufferAccess::kInput, BufferAccess::kInput}});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("argument 3 (`out`): `C` is an input and is not written"));
  s = run_prim_func(prim_func_of(kKernels, "unknown"), {f32_tensor({2}, {1, 2})});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("extern call of `not_registered_anywhere`: no micro-kernel of that name"));
}

TEST(ExternCallEval, AnOutputTheKernelWritesThroughARegionCountsAsWritten) {
  // C (an output: undefined at entry) is written only by the micro-kernel.
  const Expr dot = prim_func_of(kKernels, "dot_rows");
  runtime::Tensor c = f32_tensor({1, 1}, {0.0f});
  absl::Status s = run_prim_func(dot, {f32_tensor({1, 2}, {1, 2}), f32_tensor({1, 2}, {3, 4}), c},
                                 {.name = "", .access = {BufferAccess::kInput, BufferAccess::kInput, BufferAccess::kOutput}});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(values_of(c), std::vector<float>{11.0f});
}

TEST(ExternCallPattern, AKernelWithAnExternCallIsOpaqueUnlessItSaysOtherwise) {
  const Expr dot = prim_func_of(kKernels, "dot_rows");
  EXPECT_EQ(analyze_op_pattern(*dot.as<PrimFuncNode>()), OpPattern::kOpaque);
  // The same kernel with its author's word for it.
  const auto* node = dot.as<PrimFuncNode>();
  Attrs attrs = node->attrs;
  attrs[std::string(kOpPatternAttr)] = std::string("output-elementwise-fusible");
  const Expr told = make_prim_func(node->params, node->body, attrs);
  EXPECT_EQ(analyze_op_pattern(*told.as<PrimFuncNode>()), OpPattern::kOutputElementwiseFusible);
}

}  // namespace
}  // namespace relax::transform
