// fold-constant beyond its pass files (tests/transform/passes/fold-constant/):
// its statistics, the max-steps option, its place in the default pipeline,
// and a folded kernel against a plain-loop reference at a size the text files
// would not hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/visitor.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"
#include "relax/transform/pipeline.h"

namespace relax::transform {
namespace {

IRModule parse_or_die(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  RELAX_CHECK(mod.ok()) << mod.status().message();
  return *mod;
}

// The calls left in the graph functions, by callee name.
std::map<std::string, int> calls_of(const IRModule& mod) {
  struct Counter : ExprVisitor {
    void visit_call(const Expr& e, const CallNode& call) override {
      if (const auto* op = call.callee.as<OpNode>()) ++counts[op->name];
      ExprVisitor::visit_call(e, call);
    }
    std::map<std::string, int> counts;
  } counter;
  counter.visit_module(mod);
  return counter.counts;
}

const char* kChain = R"(
module {
  func @main(x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
    dataflow {
      c: Tensor[(2, 3), float32] = const(float32, (2, 3), [1, 2, 3, 4, 5, 6])
      d: Tensor[(2, 3), float32] = multiply(c, c)
      t: Tuple[(Tensor[(2, 3), float32], Tensor[(2, 3), float32])] = (c, d)
      e: Tensor[(2, 3), float32] = t[1]
      output gv: Tensor[(2, 3), float32] = add(x, e)
    }
    return gv
  }
}
)";

TEST(FoldConstant, CountsWhatItFolds) {
  PassManager pm({create_fold_constant_pass()});
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = pm.run(parse_or_die(kChain), ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& stats = ctx.statistics().at("fold-constant");
  EXPECT_EQ(stats.at("folded_calls"), 1);
  EXPECT_EQ(stats.at("folded_tuple_items"), 1);
  EXPECT_EQ(stats.at("folded_elements"), 6);
  EXPECT_EQ(stats.at("too_large"), 0);
  EXPECT_EQ(calls_of(*out), (std::map<std::string, int>{{"add", 1}}));

  PassContext small;
  small.set_option("fold-constant.max-elements", int64_t{5});
  out = pm.run(parse_or_die(kChain), small);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(small.statistics().at("fold-constant").at("too_large"), 1);
  EXPECT_EQ(calls_of(*out), (std::map<std::string, int>{{"add", 1}, {"multiply", 1}}));
}

// A (32, 256) x (256, 32) matmul on constants: the folded constant against a
// plain float32 loop that rounds each step as the evaluator does.
std::string matmul_module(int64_t m, int64_t k, int64_t n) {
  auto constant = [](int64_t rows, int64_t cols, int salt) {
    std::string values;
    for (int64_t i = 0; i < rows * cols; ++i) {
      values += (i == 0 ? "" : ", ") + std::to_string(static_cast<int>((i * 7 + salt) % 13) - 6);
    }
    return "const(float32, (" + std::to_string(rows) + ", " + std::to_string(cols) + "), [" +
           values + "])";
  };
  return "module {\n  func @main() -> Tensor[(" + std::to_string(m) + ", " + std::to_string(n) +
         "), float32] {\n    y: Tensor[(" + std::to_string(m) + ", " + std::to_string(n) +
         "), float32] = matmul(" + constant(m, k, 1) + ", " + constant(k, n, 5) +
         ")\n    return y\n  }\n}\n";
}

TEST(FoldConstant, FoldsAMatmulAsPlainLoopsComputeIt) {
  const int64_t m = 32, k = 256, n = 32;
  PassManager pm({create_fold_constant_pass()});
  absl::StatusOr<IRModule> out = pm.run(parse_or_die(matmul_module(m, k, n)));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(calls_of(*out).empty()) << to_text(*out, {.max_constant_elements = 4});
  const auto* body = out->lookup("main").as<FunctionNode>()->body.as<SeqExprNode>();
  const auto* c = body->blocks[0].bindings[0].value.as<ConstantNode>();
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->data.shape(), (std::vector<int64_t>{m, n}));
  const float* got = c->data.data_as_or_die<float>();
  auto a = [](int64_t i) { return static_cast<float>(static_cast<int>((i * 7 + 1) % 13) - 6); };
  auto b = [](int64_t i) { return static_cast<float>(static_cast<int>((i * 7 + 5) % 13) - 6); };
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        volatile float product = a(i * k + p) * b(p * n + j);
        acc = acc + product;
      }
      ASSERT_EQ(got[i * n + j], acc) << "at (" << i << ", " << j << ")";
    }
  }
}

TEST(FoldConstant, MaxStepsLeavesALongEvaluationUnfolded) {
  PassManager pm({create_fold_constant_pass()});
  PassContext ctx;
  ctx.set_option("fold-constant.max-steps", int64_t{10000});  // the matmul takes ~2 * 32 * 32 * 256
  absl::StatusOr<IRModule> out = pm.run(parse_or_die(matmul_module(32, 256, 32)), ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(calls_of(*out), (std::map<std::string, int>{{"matmul", 1}}));
  EXPECT_EQ(ctx.statistics().at("fold-constant").at("folded_calls"), 0);
}

TEST(FoldConstant, RunsInTheDefaultPipelineAfterLegalizeOps) {
  PassManager pm = default_pipeline(Target());
  EXPECT_THAT(pm.to_string(), ::testing::HasSubstr("legalize-ops,fixed-point(canonicalize-bindings,fold-constant,"));
  absl::StatusOr<IRModule> out = pm.run(parse_or_die(kChain));
  ASSERT_TRUE(out.ok()) << out.status();
  // multiply(c, c) became a call_tir, which folded; add(x, e) stays a kernel call (made
  // explicit by lower-alloc: its output's storage and tensor, then call_tir_dps).
  EXPECT_EQ(calls_of(*out), (std::map<std::string, int>{
                                {"alloc_storage", 1}, {"alloc_tensor", 1}, {"call_tir_dps", 1}}));
}

}  // namespace
}  // namespace relax::transform
