// fold-constant in relax::build: a module whose constant subgraph folds at
// compile time gives what the same module compiled with the pass disabled
// computes at run time (the compiled kernels may contract a * b + c into one
// fused operation, so the two agree to float32 rounding, not bit for bit).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/visitor.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

using runtime::Tensor;

int count_call_tirs(const IRModule& mod) {
  struct Counter : ExprVisitor {
    void visit_call(const Expr& e, const CallNode& call) override {
      if (const auto* op = call.callee.as<OpNode>(); op != nullptr &&
          (op->name == "call_tir" || op->name == "call_tir_dps")) {
        ++n;
      }
      ExprVisitor::visit_call(e, call);
    }
    int n = 0;
  } counter;
  counter.visit_module(mod);
  return counter.n;
}

TEST(FoldConstantBuild, FoldedAndRunTimeResultsAgree) {
  // main(x: (n, 4)) = x + softmax(c1 @ permute_dims(c2)) * 3 with c1 (1, 6)
  // and c2 (4, 6): everything right of `x +` is constant.
  SymVar n("n");
  Tensor c1 = testing::random_tensor({1, 6}, 21);
  Tensor c2 = testing::random_tensor({4, 6}, 22);
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 4}, DataType::float32()));
  Var out;
  {
    auto df = f.dataflow();
    Var w = f.emit(op::matmul(make_constant(c1), op::permute_dims(make_constant(c2))));
    Var s = f.emit(op::multiply(op::softmax(w), make_prim_value(SymExpr::float_imm(3.0, DataType::float32()))));
    out = f.emit_output(op::add(x, s), "out");
  }
  f.ret(out);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();

  BuildInfo folded_info;
  absl::StatusOr<runtime::Module> folded = build(*mod, testing::build_test_target(), &folded_info);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(count_call_tirs(folded_info.lowered), 1);  // only x + (the constant)

  transform::PassContext ctx;
  ctx.disable_pass("fold-constant");
  ctx.disable_pass("fuse-ops");  // one kernel per operator, to count them
  BuildInfo unfolded_info;
  absl::StatusOr<runtime::Module> unfolded =
      build(*mod, testing::build_test_target(), transform::default_pipeline(testing::build_test_target()), ctx, &unfolded_info);
  ASSERT_TRUE(unfolded.ok()) << unfolded.status();
  EXPECT_EQ(count_call_tirs(unfolded_info.lowered), 5);

  for (int64_t rows : {1, 5}) {
    Tensor in = testing::random_tensor({rows, 4}, 23);
    absl::StatusOr<runtime::Value> a = (*folded)["main"].call({in});
    absl::StatusOr<runtime::Value> b = (*unfolded)["main"].call({in});
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    const float* pa = a->tensor_or_die().data_as_or_die<float>();
    const float* pb = b->tensor_or_die().data_as_or_die<float>();
    for (int64_t i = 0; i < rows * 4; ++i) {
      EXPECT_NEAR(pa[i], pb[i], 1e-6f * (1.0f + std::fabs(pb[i]))) << "rows " << rows << ", element " << i;
    }
  }
}

}  // namespace
}  // namespace relax
