// lift-workspace beyond the before/after files (tests/transform/passes/lift-workspace/):
// the pass after lower-alloc on a legalized softmax (its max/sum workspaces become call-site
// tensors), a second run changing nothing, statistics, the error for a library workspace of
// unknown size, and the declared workspace of call_dps_library / call_library_dps through
// deduction, the text format and JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "relax/ir/json.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/ir/visitor.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

using ::testing::HasSubstr;

IRModule parse_lift_module(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return *mod;
}

class AllocateCounter : public StmtVisitor {
 public:
  int count = 0;
  void visit_allocate(const Stmt& s, const AllocateNode& node) override {
    ++count;
    StmtVisitor::visit_allocate(s, node);
  }
};

int count_allocates(const IRModule& mod) {
  AllocateCounter counter;
  for (const auto& [name, func] : mod.functions()) {
    if (const auto* prim = func.as<PrimFuncNode>()) counter.visit_prim_func(*prim);
  }
  return counter.count;
}

TEST(LiftWorkspace, LegalizedSoftmaxWorkspacesBecomeCallSiteTensorsOnce) {
  IRModule mod = parse_lift_module(R"(module {
  func @main(x: Tensor[(n, 16), float32]) -> Tensor[(n, 16), float32] {
    dataflow {
      output y: Tensor[(n, 16), float32] = softmax(x)
    }
    return y
  }
})");
  PassContext ctx;
  absl::StatusOr<IRModule> lowered =
      PassManager({create_legalize_ops_pass(), create_lower_alloc_pass()}).run(mod, ctx);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_GT(count_allocates(*lowered), 0) << to_text(*lowered);

  PassContext lift_ctx;
  absl::StatusOr<IRModule> lifted = PassManager({create_lift_workspace_pass()}).run(*lowered, lift_ctx);
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_EQ(count_allocates(*lifted), 0) << to_text(*lifted);
  const std::string text = to_text(*lifted);
  // Each workspace is a tensor of the caller's dims made from its own storage.
  EXPECT_THAT(text, HasSubstr("y_max_elem: Tensor[(n,), float32] = alloc_tensor(y_max_elem_storage, prim(0), shape(n)"));
  EXPECT_THAT(text, HasSubstr("y_exp_sum: Tensor[(n,), float32] = alloc_tensor(y_exp_sum_storage"));
  EXPECT_THAT(text, HasSubstr("call_tir_dps(@softmax, (x,), (y, y_max_elem, y_exp_sum))"));
  EXPECT_EQ(lift_ctx.statistics().at("lift-workspace").at("lifted_buffers"), 2);
  EXPECT_EQ(lift_ctx.statistics().at("lift-workspace").at("kernels_copied"), 0);

  PassContext again_ctx;
  absl::StatusOr<IRModule> again = PassManager({create_lift_workspace_pass()}).run(*lifted, again_ctx);
  ASSERT_TRUE(again.ok()) << again.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*lifted, *again);
}

TEST(LiftWorkspace, ALibraryWorkspaceOfUnknownSizeIsAnErrorNamingTheBinding) {
  IRModule mod = parse_lift_module(R"(module {
  func @main(x: Tensor[(n,), float32], s: Prim[int64]) -> Tensor[(n,), float32] {
    y_storage: Object = alloc_storage(prim(n * 4))
    y: Tensor[(n,), float32] = alloc_tensor(y_storage, prim(0), shape(n), dtype=float32)
    _y: Tuple[()] = call_library_dps(extern_func("lib.f"), (x,), (y,), s)
    return y
  }
})");
  PassContext ctx;
  absl::StatusOr<IRModule> out = PassManager({create_lift_workspace_pass()}).run(mod, ctx);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("lift-workspace: function `main`, binding `_y`: the workspace of library function "
                        "`lib.f` has no known byte count (Prim[int64])"));
}

TEST(LiftWorkspace, DeclaredLibraryWorkspaceIsDeducedPrintedAndSerialized) {
  const std::string text = R"(module {
  func @main(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
    y: Tensor[(n,), float32] = call_dps_library(extern_func("lib.f"), (x,), prim(n * 8), sinfo=Tensor[(n,), float32])
    return y
  }
})";
  IRModule mod = parse_lift_module(text);
  EXPECT_THAT(to_text(mod), HasSubstr("call_dps_library(extern_func(\"lib.f\"), (x,), prim(n * 8), sinfo="));
  RELAX_EXPECT_STRUCTURAL_EQ(mod, parse_lift_module(to_text(mod)));
  absl::StatusOr<IRModule> from = from_json(to_json(mod));
  ASSERT_TRUE(from.ok()) << from.status();
  RELAX_EXPECT_STRUCTURAL_EQ(mod, *from);

  // lower-alloc keeps the declaration on the explicit call.
  absl::StatusOr<IRModule> lowered = lower_alloc(mod);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(to_text(*lowered), HasSubstr("call_library_dps(extern_func(\"lib.f\"), (x,), (y,), prim(n * 8))"));

  // Deduction errors: a negative size, a value that is not an integer Prim.
  absl::StatusOr<IRModule> negative = parse_module(R"(module {
  func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    y: Tensor[(4,), float32] = call_dps_library(extern_func("lib.f"), (x,), prim(-8), sinfo=Tensor[(4,), float32])
    return y
  }
})");
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(),
              HasSubstr("call_dps_library: argument 2 (workspace): `-8` bytes is negative, expected a size >= 0"));
  absl::StatusOr<IRModule> not_int = parse_module(R"(module {
  func @main(x: Tensor[(4,), float32], out: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    _y: Tuple[()] = call_library_dps(extern_func("lib.f"), (x,), (out,), x)
    return out
  }
})");
  ASSERT_FALSE(not_int.ok());
  EXPECT_THAT(not_int.status().message(),
              HasSubstr("call_library_dps: argument 3 (workspace): expected an integer Prim (bytes), got "
                        "Tensor[(4,), float32]"));
  // The C++ constructors spell the same calls.
  RELAX_EXPECT_STRUCTURAL_EQ(
      op::call_dps_library("lib.f", {Var("x", tensor_sinfo({4}, DataType::float32()))},
                           tensor_sinfo({4}, DataType::float32()), SymExpr(32))
          .as<CallNode>()
          ->args[2],
      make_prim_value(32));
}

}  // namespace
}  // namespace relax::transform
