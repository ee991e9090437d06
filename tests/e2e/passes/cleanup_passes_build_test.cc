// End to end through the default pipeline's cleanup group
// (fixed-point(canonicalize-bindings,cse,dce) after legalize-ops): a module
// full of aliases, a repeated call, a tuple item and dead code compiles to
// fewer kernel calls and computes the same values, against a plain loop
// reference and against the same module built without the group.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/transform/passes.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

using runtime::Tensor;

constexpr const char* kModule = R"(module {
  func @main(x: Tensor[(n, 8), float32], y: Tensor[(n, 8), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      a = exp(x)
      b = exp(x)
      t = (a, y)
      c = t[1]
      d = multiply(b, c)
      unused = add(x, x)
      e = add(a, d)
      output gv = e
    }
    out = gv
    return out
  }
})";

int call_tir_bindings(const IRModule& mod) {
  const auto* main = mod.lookup("main").as<FunctionNode>();
  int calls = 0;
  for (const BindingBlock& block : main->body.as<SeqExprNode>()->blocks) {
    for (const Binding& b : block.bindings) {
      const auto* call = b.value.as<CallNode>();
      const auto* op = call != nullptr ? call->callee.as<OpNode>() : nullptr;
      calls += op != nullptr && (op->name == "call_tir" || op->name == "call_tir_dps");
    }
  }
  return calls;
}

TEST(CleanupPassesBuild, FewerKernelCallsSameValues) {
  absl::StatusOr<IRModule> mod = parse_module(kModule);
  ASSERT_TRUE(mod.ok()) << mod.status();

  BuildInfo cleaned_info;
  transform::PassContext unfused;
  unfused.disable_pass("fuse-ops");  // one kernel per operator, to count them (and bit-equal values)
  absl::StatusOr<runtime::Module> cleaned =
      build(*mod, testing::build_test_target(), transform::default_pipeline(testing::build_test_target()), unfused, &cleaned_info);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status();
  // exp, multiply, add: the repeated exp and the unused add are gone.
  EXPECT_EQ(call_tir_bindings(cleaned_info.lowered), 3);

  transform::PassManager legalize_only;
  legalize_only.add(transform::create_legalize_ops_pass());
  BuildInfo plain_info;
  absl::StatusOr<runtime::Module> plain = build(*mod, testing::build_test_target(), legalize_only, &plain_info);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(call_tir_bindings(plain_info.lowered), 5);

  for (int64_t rows : {1, 7, 64}) {
    Tensor x = testing::random_tensor({rows, 8}, 3);
    Tensor y = testing::random_tensor({rows, 8}, 4);
    absl::StatusOr<runtime::Value> got = (*cleaned)["main"](x, y);
    absl::StatusOr<runtime::Value> reference = (*plain)["main"](x, y);
    ASSERT_TRUE(got.ok() && reference.ok()) << got.status() << " " << reference.status();
    const float* xs = x.data_as_or_die<float>();
    const float* ys = y.data_as_or_die<float>();
    const float* g = got->tensor_or_die().data_as_or_die<float>();
    const float* r = reference->tensor_or_die().data_as_or_die<float>();
    for (int64_t i = 0; i < rows * 8; ++i) {
      const float expected = std::exp(xs[i]) + std::exp(xs[i]) * ys[i];
      EXPECT_NEAR(g[i], expected, 1e-5f * (1 + std::fabs(expected))) << "rows " << rows << " at " << i;
      EXPECT_EQ(g[i], r[i]) << "rows " << rows << " at " << i;
    }
  }
}

}  // namespace
}  // namespace relax
