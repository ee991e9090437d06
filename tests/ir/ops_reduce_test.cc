// Deduction of the reductions sum and softmax: symbolic shapes, axes and
// keepdims, rank-only and unknown inputs, and the error texts.
#include <gtest/gtest.h>

#include "relax/ir/normalize.h"
#include "relax/ir/op.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

const DataType kReduceF32 = DataType::float32();

std::string deduce(const Expr& call) {
  Analyzer analyzer;
  DeduceContext ctx{analyzer};
  absl::StatusOr<Expr> e = normalize(call, ctx);
  if (!e.ok()) return "error: " + std::string(e.status().message());
  return e->struct_info().to_string();
}

class ReduceOpsTest : public ::testing::Test {
 protected:
  Var tensor(std::vector<SymExpr> shape, std::optional<DataType> dtype = DataType::float32()) {
    return Var("x", tensor_sinfo(std::move(shape), dtype));
  }
  Var rank_only(int ndim) { return Var("x", tensor_sinfo_rank(ndim, kReduceF32)); }
  SymVar n{"n"};
  SymVar m{"m"};
};

using Axes = std::vector<int64_t>;

// ---------------------------------------------------------------------------
// sum.

TEST_F(ReduceOpsTest, SumWithoutAxesReducesEverything) {
  EXPECT_EQ(deduce(op::sum(tensor({n, m}))), "Tensor[(), float32]");
  EXPECT_EQ(deduce(op::sum(tensor({n, m}), std::nullopt, true)), "Tensor[(1, 1), float32]");
}

TEST_F(ReduceOpsTest, SumOverAxes) {
  EXPECT_EQ(deduce(op::sum(tensor({n, m, 4}), Axes{1})), "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce(op::sum(tensor({n, m, 4}), Axes{-1, 0})), "Tensor[(m,), float32]");
  EXPECT_EQ(deduce(op::sum(tensor({n, m, 4}), Axes{1}, true)), "Tensor[(n, 1, 4), float32]");
  EXPECT_EQ(deduce(op::sum(tensor({n, m}), Axes{})), "Tensor[(n, m), float32]");
  EXPECT_EQ(deduce(op::sum(tensor({n}, DataType::int32()), Axes{0})), "Tensor[(), int32]");
  EXPECT_EQ(deduce(op::sum(tensor({n, 2}, std::nullopt), Axes{0})), "Tensor[(2,), ?]");
}

TEST_F(ReduceOpsTest, SumOfRankOnlyAndUnknownRank) {
  EXPECT_EQ(deduce(op::sum(rank_only(3), Axes{0})), "Tensor[ndim=2, float32]");
  EXPECT_EQ(deduce(op::sum(rank_only(3), Axes{0}, true)), "Tensor[ndim=3, float32]");
  EXPECT_EQ(deduce(op::sum(rank_only(3))), "Tensor[(), float32]");
  EXPECT_EQ(deduce(op::sum(rank_only(kUnknownNDim))), "Tensor[(), float32]");
  EXPECT_EQ(deduce(op::sum(rank_only(kUnknownNDim), Axes{0})), "Tensor[ndim=?, float32]");
  EXPECT_EQ(deduce(op::sum(rank_only(kUnknownNDim), std::nullopt, true)),
            "Tensor[ndim=?, float32]");
}

TEST_F(ReduceOpsTest, SumErrors) {
  EXPECT_EQ(deduce(op::sum(tensor({n, m}), Axes{2})),
            "error: sum: axis 2 in (2,) is out of range for rank 2 (x Tensor[(n, m), float32])");
  EXPECT_EQ(deduce(op::sum(tensor({n, m}), Axes{0, -3})),
            "error: sum: axis -3 in (0, -3) is out of range for rank 2 (x Tensor[(n, m), "
            "float32])");
  EXPECT_EQ(deduce(op::sum(tensor({n, m}), Axes{1, -1})),
            "error: sum: axis 1 appears twice in (1, -1)");
  EXPECT_EQ(deduce(op::sum(tensor({n}, DataType::boolean()))),
            "error: sum: argument 0 (x): expected a numeric tensor, got Tensor[(n,), bool]");
  EXPECT_EQ(deduce(op::sum(make_shape_expr({2}))),
            "error: sum: argument 0 (x): expected a Tensor, got Shape[(2,)]");
  EXPECT_EQ(deduce(make_call(make_op_or_die("sum"), {tensor({n})}, Attrs{{"axis", 1.5}})),
            "error: sum: attribute `axis` must be [int], got 1.5");
  EXPECT_EQ(deduce(make_call(make_op_or_die("sum"), {tensor({n})}, Attrs{{"keepdims", int64_t{1}}})),
            "error: sum: attribute `keepdims` must be bool, got 1");
  // A misspelled key is an error naming the op, the key and the declared ones.
  EXPECT_EQ(deduce(make_call(make_op_or_die("sum"), {tensor({n})}, Attrs{{"axes", int64_t{0}}})),
            "error: sum: unknown attribute `axes` (its attributes are `axis`, `keepdims`)");
  // An int where a list is declared is that one-element list.
  EXPECT_EQ(deduce(make_call(make_op_or_die("sum"), {tensor({n, m})}, Attrs{{"axis", int64_t{0}}})),
            "Tensor[(m,), float32]");
}

TEST_F(ReduceOpsTest, SumAttributesWithoutTheConstructor) {
  // A call written without attributes (as text may be) sums everything.
  EXPECT_EQ(deduce(make_call(make_op_or_die("sum"), {tensor({n, 4})})), "Tensor[(), float32]");
}

// ---------------------------------------------------------------------------
// softmax.

TEST_F(ReduceOpsTest, SoftmaxKeepsTheAnnotation) {
  EXPECT_EQ(deduce(op::softmax(tensor({n, 16}))), "Tensor[(n, 16), float32]");
  EXPECT_EQ(deduce(op::softmax(tensor({n, 16}), 0)), "Tensor[(n, 16), float32]");
  EXPECT_EQ(deduce(op::softmax(tensor({n}, DataType::float64()), -1)), "Tensor[(n,), float64]");
  EXPECT_EQ(deduce(op::softmax(rank_only(2), 1)), "Tensor[ndim=2, float32]");
  EXPECT_EQ(deduce(op::softmax(rank_only(kUnknownNDim), 5)), "Tensor[ndim=?, float32]");
  EXPECT_EQ(deduce(make_call(make_op_or_die("softmax"), {tensor({n, 2})})), "Tensor[(n, 2), float32]");
}

TEST_F(ReduceOpsTest, SoftmaxErrors) {
  EXPECT_EQ(deduce(op::softmax(tensor({n, 4}), 2)),
            "error: softmax: axis 2 is out of range for rank 2 (x Tensor[(n, 4), float32])");
  EXPECT_EQ(deduce(op::softmax(tensor({n, 4}), -3)),
            "error: softmax: axis -3 is out of range for rank 2 (x Tensor[(n, 4), float32])");
  EXPECT_EQ(deduce(op::softmax(tensor({}))),
            "error: softmax: axis -1 is out of range for rank 0 (x Tensor[(), float32])");
  EXPECT_EQ(deduce(op::softmax(tensor({n}, DataType::int32()))),
            "error: softmax: argument 0 (x): expected a float tensor, got Tensor[(n,), int32]");
  EXPECT_EQ(deduce(make_call(make_op_or_die("softmax"), {tensor({n})}, Attrs{{"axis", 0.5}})),
            "error: softmax: attribute `axis` must be int, got 0.5");
}

}  // namespace
}  // namespace relax
