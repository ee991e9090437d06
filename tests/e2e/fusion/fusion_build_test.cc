// fuse-tir end to end: modules written in the form fuse-ops produces (groups as
// primitive graph functions calling legalized kernels) are compiled twice with
// relax::build -- unfused (the groups run as graph functions calling their
// kernels one by one) and fused (through fuse-tir: one kernel per group) --
// and both are run at three sizes of each symbolic dim from one compilation
// each, against a plain-loop reference and against each other. The modules
// are those of tests/transform/fuse_tir_test.cc (fuse_tir_cases.h), which
// checks the kernels fuse-tir makes of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "../transform/fuse_tir_cases.h"
#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/transform/passes.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;
using testing::elementwise_chain_module;
using testing::exp_sum_group;
using testing::expression_dims_module;
using testing::matmul_add_relu_module;
using testing::module;
using testing::rotary_index_only_variable_module;
using testing::tuple_result_module;

/// The module compiled without and with fuse-tir.
struct Builds {
  runtime::Module unfused;
  runtime::Module fused;
  bool ok = false;
};

/// Builds `text` both ways; `groups` primitive functions must all be merged.
Builds build_both(const std::string& text, int64_t groups) {
  Builds out;
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return out;
  absl::StatusOr<runtime::Module> unfused = build(*mod, testing::build_test_target(), transform::PassManager());
  EXPECT_TRUE(unfused.ok()) << unfused.status();
  transform::PassContext ctx;
  BuildInfo info;
  absl::StatusOr<runtime::Module> fused =
      build(*mod, testing::build_test_target(), transform::PassManager({transform::create_fuse_tir_pass()}), ctx, &info);
  EXPECT_TRUE(fused.ok()) << fused.status();
  if (!unfused.ok() || !fused.ok()) return out;
  EXPECT_EQ(ctx.statistics().at("fuse-tir").at("fused_functions"), groups);
  EXPECT_EQ(ctx.statistics().at("fuse-tir").at("kept_functions"), 0);
  for (const auto& [name, func] : info.lowered.functions()) {
    if (name.rfind("fused_", 0) == 0) {
      EXPECT_NE(func.as<PrimFuncNode>(), nullptr) << name << " was not merged";
    }
  }
  out.unfused = *unfused;
  out.fused = *fused;
  out.ok = true;
  return out;
}

std::vector<float> floats(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

/// Calls main on both builds with `args`; each result (a tensor, or the fields
/// of a tuple) must match `reference` and the two builds must agree.
void expect_same(const Builds& b, const std::vector<Value>& args, const std::vector<std::vector<float>>& reference,
                 const std::string& label) {
  absl::StatusOr<Value> unfused = b.unfused["main"].call(args);
  absl::StatusOr<Value> fused = b.fused["main"].call(args);
  ASSERT_TRUE(unfused.ok()) << label << ": " << unfused.status();
  ASSERT_TRUE(fused.ok()) << label << ": " << fused.status();
  std::vector<Value> u = unfused->is_tuple() ? unfused->fields_or_die() : std::vector<Value>{*unfused};
  std::vector<Value> f = fused->is_tuple() ? fused->fields_or_die() : std::vector<Value>{*fused};
  ASSERT_EQ(u.size(), reference.size()) << label;
  ASSERT_EQ(f.size(), reference.size()) << label;
  for (size_t k = 0; k < reference.size(); ++k) {
    const std::vector<float> got = floats(f[k].tensor_or_die());
    const std::vector<float> plain = floats(u[k].tensor_or_die());
    ASSERT_EQ(got.size(), reference[k].size()) << label << " output " << k;
    ASSERT_EQ(plain.size(), reference[k].size()) << label << " output " << k;
    for (size_t i = 0; i < got.size(); ++i) {
      const float want = reference[k][i];
      const float tol = 1e-5f * (1 + std::fabs(want));
      EXPECT_NEAR(got[i], want, tol) << label << " fused, output " << k << " at " << i;
      EXPECT_NEAR(plain[i], want, tol) << label << " unfused, output " << k << " at " << i;
      EXPECT_NEAR(got[i], plain[i], tol) << label << " fused vs unfused, output " << k << " at " << i;
    }
  }
}

TEST(FusionBuild, ElementwiseChain) {
  Builds b = build_both(elementwise_chain_module(), 1);
  ASSERT_TRUE(b.ok);
  for (int64_t n : {1, 5, 33}) {
    Tensor x = testing::random_tensor({n, 4}, 1), y = testing::random_tensor({n, 4}, 2);
    std::vector<float> want;
    for (int64_t i = 0; i < n * 4; ++i) {
      const float s = x.data_as_or_die<float>()[i] + y.data_as_or_die<float>()[i];
      want.push_back(std::exp(s) * s);
    }
    expect_same(b, {x, y}, {want}, "n = " + std::to_string(n));
  }
}

TEST(FusionBuild, MatmulAddRelu) {
  Builds b = build_both(matmul_add_relu_module(), 1);
  ASSERT_TRUE(b.ok);
  Tensor w = testing::random_tensor({16, 32}, 3), c = testing::random_tensor({32}, 4);
  for (int64_t rows : {1, 7, 64}) {
    Tensor x = testing::random_tensor({rows, 16}, 5);
    const float* xs = x.data_as_or_die<float>();
    const float* ws = w.data_as_or_die<float>();
    const float* cs = c.data_as_or_die<float>();
    std::vector<float> want;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < 32; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 16; ++k) acc += double(xs[i * 16 + k]) * ws[k * 32 + j];
        want.push_back(static_cast<float>(std::max(acc + cs[j], 0.0)));
      }
    }
    expect_same(b, {x, w, c}, {want}, "b = " + std::to_string(rows));
  }
}

// exp inlined into a row sum (the group of exp_sum_group()), and a row sum
// feeding exp (kept as a buffer; its @sum is the kernel exp_sum_group() brings).
TEST(FusionBuild, ReductionWithElementwiseProducerAndConsumer) {
  Builds b = build_both(module(R"(
  func @main(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    dataflow {
      lv: Tensor[(n,), float32] = @fused_exp_sum(x)
      gv: Tensor[(n,), float32] = @fused_sum_exp(x)
      output r: Tensor[(n,), float32] = call_tir(@add1, (lv, gv), sinfo=Tensor[(n,), float32])
    }
    return r
  }
)" + exp_sum_group() + R"(
  func @fused_sum_exp(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n,), float32] = call_tir(@sum, (x,), sinfo=Tensor[(n,), float32])
      output gv: Tensor[(n,), float32] = call_tir(@exp1, (lv0,), sinfo=Tensor[(n,), float32])
    }
    return gv
  }
  prim_func @exp1(A: Buffer[(a,), float32], B: Buffer[(a,), float32]) attrs {global_symbol = "exp1"} {
    for i0 in range(a) parallel {
      block exp(v0 = spatial(a, i0)) {
        B[v0] = exp(A[v0])
      }
    }
  }
  prim_func @add1(A: Buffer[(a,), float32], B: Buffer[(a,), float32], C: Buffer[(a,), float32]) attrs {global_symbol = "add1"} {
    for i0 in range(a) parallel {
      block add(v0 = spatial(a, i0)) {
        C[v0] = A[v0] + B[v0]
      }
    }
  }
)"), 2);
  ASSERT_TRUE(b.ok);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 17}, {16, 5}}) {
    Tensor x = testing::random_tensor({n, m}, 6);
    const float* xs = x.data_as_or_die<float>();
    std::vector<float> want;
    for (int64_t i = 0; i < n; ++i) {
      double exp_sum = 0, sum = 0;
      for (int64_t j = 0; j < m; ++j) {
        exp_sum += std::exp(double(xs[i * m + j]));
        sum += xs[i * m + j];
      }
      want.push_back(static_cast<float>(exp_sum + std::exp(sum)));
    }
    expect_same(b, {x}, {want}, "n = " + std::to_string(n) + ", m = " + std::to_string(m));
  }
}

// positions[m + i] with m only in an index: the fused kernel takes m as a
// trailing scalar that the call passes as shape(m).
TEST(FusionBuild, RotaryWithIndexOnlyVariable) {
  Builds b = build_both(rotary_index_only_variable_module(), 1);
  ASSERT_TRUE(b.ok);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {4, 3}, {9, 12}}) {
    Tensor x = testing::random_tensor({n, 8}, 7), y = testing::random_tensor({n, 8}, 8);
    Tensor past = testing::random_tensor({m}, 9);
    Tensor pos = *Tensor::empty({n + m}, DataType::int64());
    for (int64_t k = 0; k < n + m; ++k) pos.data_as_or_die<int64_t>()[k] = 3 * k + 1;
    std::vector<float> want;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 8; ++j) {
        const float angle = static_cast<float>(3 * (m + i) + 1);
        want.push_back(x.data_as_or_die<float>()[i * 8 + j] * std::cos(angle) + y.data_as_or_die<float>()[i * 8 + j]);
      }
    }
    expect_same(b, {x, pos, y, past}, {want}, "n = " + std::to_string(n) + ", m = " + std::to_string(m));
  }
}

// Buffers of extent n - 1, the second group knowing n only through its
// trailing Shape.
TEST(FusionBuild, ExpressionDims) {
  Builds b = build_both(expression_dims_module(), 2);
  ASSERT_TRUE(b.ok);
  for (int64_t n : {2, 5, 40}) {
    Tensor x = testing::random_tensor({n}, 10);
    const float* xs = x.data_as_or_die<float>();
    std::vector<float> want;
    for (int64_t i = 0; i + 1 < n; ++i) {
      const double e = std::exp(double(xs[i + 1]) - xs[i]);
      want.push_back(static_cast<float>(std::exp(e) * e));
    }
    expect_same(b, {x}, {want}, "n = " + std::to_string(n));
  }
}

// A group returning two outputs (a tuple), both used outside.
TEST(FusionBuild, TupleResult) {
  Builds b = build_both(tuple_result_module(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] {
    dataflow {
      t: Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] = @fused_add_add(x, y)
      a: Tensor[(n, 4), float32] = t[0]
      b: Tensor[(n, 4), float32] = t[1]
      gv: Tensor[(n, 4), float32] = call_tir(@multiply, (a, b), sinfo=Tensor[(n, 4), float32])
      output r: Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] = (a, gv)
    }
    return r
  }
)"), 1);
  ASSERT_TRUE(b.ok);
  for (int64_t n : {1, 6, 21}) {
    Tensor x = testing::random_tensor({n, 4}, 11), y = testing::random_tensor({n, 4}, 12);
    std::vector<float> first, second;
    for (int64_t i = 0; i < n * 4; ++i) {
      const float xv = x.data_as_or_die<float>()[i], yv = y.data_as_or_die<float>()[i];
      first.push_back(xv + yv);
      second.push_back((xv + yv) * ((xv + yv) + yv));
    }
    expect_same(b, {x, y}, {first, second}, "n = " + std::to_string(n));
  }
}

}  // namespace
}  // namespace relax
