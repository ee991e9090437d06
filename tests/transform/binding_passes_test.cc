// C++-only checks of dce, canonicalize-bindings, cse and to-non-dataflow
// (their before/after cases are text files under tests/transform/passes/):
// unchanged functions stay pointer-identical, statistics count what changed,
// a long dead chain dies in one run, and the default pipeline holds the group.
#include <gtest/gtest.h>

#include <string>

#include "relax/ir/parser.h"
#include "relax/ir/testing.h"
#include "relax/transform/instrument.h"
#include "relax/transform/passes.h"
#include "relax/transform/pipeline.h"

namespace relax::transform {
namespace {

IRModule parse_binding_module(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

// Runs `pass` alone, with the verifier on; aborts the test on an error.
IRModule run(const PassPtr& pass, const IRModule& mod, PassContext& ctx) {
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = PassManager({pass}).run(mod, ctx);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : mod;
}

int64_t statistic(const PassContext& ctx, const std::string& pass, const std::string& name) {
  auto p = ctx.statistics().find(pass);
  if (p == ctx.statistics().end()) return 0;
  auto s = p->second.find(name);
  return s == p->second.end() ? 0 : s->second;
}

// @untouched needs nothing from any of the four passes; @work needs each.
constexpr const char* kTwoFunctions = R"(module {
  func @untouched(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    y = add(x, x)
    return y
  }
  func @work(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    dataflow {
      a = exp(x)
      b = exp(x)
      c = a
      d = add(b, c)
      dead = multiply(x, x)
      output gv = add(d, d)
    }
    return gv
  }
})";

TEST(BindingPassesTest, UnchangedFunctionsStayPointerIdentical) {
  IRModule mod = parse_binding_module(kTwoFunctions);
  for (const PassPtr& pass : {create_canonicalize_bindings_pass(), create_cse_pass(), create_dce_pass(),
                              create_to_non_dataflow_pass()}) {
    PassContext ctx;
    IRModule out = run(pass, mod, ctx);
    EXPECT_TRUE(out.lookup("untouched").same_as(mod.lookup("untouched"))) << pass->name();
    EXPECT_FALSE(out.lookup("work").same_as(mod.lookup("work"))) << pass->name();
    // A second run finds nothing more to do and hands back the same nodes.
    PassContext again;
    IRModule twice = run(pass, out, again);
    EXPECT_TRUE(twice.lookup("work").same_as(out.lookup("work"))) << pass->name();
  }
}

TEST(BindingPassesTest, StatisticsCountWhatChanged) {
  IRModule mod = parse_binding_module(kTwoFunctions);
  PassContext ctx;
  run(create_canonicalize_bindings_pass(), mod, ctx);
  EXPECT_EQ(statistic(ctx, "canonicalize-bindings", "removed_aliases"), 1);
  run(create_cse_pass(), mod, ctx);
  EXPECT_EQ(statistic(ctx, "cse", "eliminated_calls"), 1);
  run(create_dce_pass(), mod, ctx);
  EXPECT_EQ(statistic(ctx, "dce", "removed_bindings"), 1);
  run(create_to_non_dataflow_pass(), mod, ctx);
  EXPECT_EQ(statistic(ctx, "to-non-dataflow", "converted_blocks"), 1);
}

TEST(BindingPassesTest, DceRemovesUnusedKernelsAndCountsThem) {
  IRModule mod = parse_binding_module(R"(module {
  prim_func @k(A: Buffer[(4,), float32]) {
    for i in range(4) {
      A[i] = 0f32
    }
  }
  func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    a = call_tir(@k, (), sinfo=Tensor[(4,), float32])
    return x
  }
})");
  PassContext ctx;
  IRModule out = run(create_dce_pass(), mod, ctx);
  EXPECT_FALSE(out.contains("k"));
  EXPECT_EQ(statistic(ctx, "dce", "removed_bindings"), 1);
  EXPECT_EQ(statistic(ctx, "dce", "removed_functions"), 1);
}

TEST(BindingPassesTest, DceKillsALongChainInOneRun) {
  // Each binding is used only by the next, the last by nothing: a pass that
  // removed only what is unused at the start would need 2,000 runs.
  std::string text = "module {\n  func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {\n";
  text += "    v0 = add(x, x)\n";
  for (int i = 1; i < 2000; ++i) {
    text += "    v" + std::to_string(i) + " = add(v" + std::to_string(i - 1) + ", x)\n";
  }
  text += "    return x\n  }\n}\n";
  PassContext ctx;
  IRModule out = run(create_dce_pass(), parse_binding_module(text), ctx);
  EXPECT_EQ(statistic(ctx, "dce", "removed_bindings"), 2000);
  RELAX_EXPECT_STRUCTURAL_EQ(parse_binding_module(R"(module {
  func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    return x
  }
})"),
                             out);
}

// call_tir_inplace writes its in-place argument (here the caller's tensor): dce keeps it
// when its result is unused, and cse does not merge two equal ones (each doubles buf).
TEST(BindingPassesTest, InplaceCallsAreEffectsThatStay) {
  const std::string text = R"(module {
  prim_func @double_inplace(A: Buffer[(k, 8), float32]) {
    for i in range(k) parallel {
      for j in range(8) {
        block double(vi = spatial(k, i), vj = spatial(8, j)) {
          A[vi, vj] = A[vi, vj] * 2f32
        }
      }
    }
  }
  func @main(x: Tensor[(n, 8), float32], buf: Tensor[(n, 8), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      w = call_tir_inplace(@double_inplace, (buf,), inplace_indices=[0], sinfo=Tensor[(n, 8), float32])
      w2 = call_tir_inplace(@double_inplace, (buf,), inplace_indices=[0], sinfo=Tensor[(n, 8), float32])
      output c = exp(x)
    }
    return c
  }
})";
  for (const PassPtr& pass : {create_dce_pass(), create_cse_pass()}) {
    PassContext ctx;
    const IRModule mod = parse_binding_module(text);
    IRModule out = run(pass, mod, ctx);
    RELAX_EXPECT_STRUCTURAL_EQ(mod, out);
  }
}

TEST(BindingPassesTest, DefaultPipelineCleansUpAfterLegalization) {
  Target without_libraries;
  without_libraries.libraries = {};
  EXPECT_EQ(default_pipeline(without_libraries).to_string(),
            "combine-parallel-matmul,lift-weight-transforms,legalize-ops,fixed-point(canonicalize-bindings,fold-constant,"
            "cse,dce),annotate-op-pattern,fuse-ops,fuse-tir,dce,simplify-loops,lower-alloc,schedule-cpu,lift-workspace,"
            "plan-memory");
  // With a library, dispatch-library runs first, so what it leaves is legalized as before.
  Target with_onednn;
  with_onednn.libraries = {"onednn"};
  EXPECT_EQ(default_pipeline(with_onednn).to_string(),
            "combine-parallel-matmul,lift-weight-transforms,dispatch-library,legalize-ops,"
            "fixed-point(canonicalize-bindings,fold-constant,cse,dce),annotate-op-pattern,fuse-ops,fuse-tir,dce,"
            "simplify-loops,lower-alloc,schedule-cpu,lift-workspace,plan-memory");
  PassManager pm = default_pipeline(without_libraries);
  // Legalized twice over the same operands: one kernel call remains.
  IRModule mod = parse_binding_module(R"(module {
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = exp(x)
      b = exp(x)
      unused = add(x, x)
      output gv = add(a, b)
    }
    return gv
  }
})");
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  ctx.disable_pass("fuse-ops");  // the kernels are counted one per operator here
  absl::StatusOr<IRModule> out = pm.run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(statistic(ctx, "cse", "eliminated_calls"), 1);
  EXPECT_EQ(statistic(ctx, "dce", "removed_bindings"), 1);
  // The kernels of exp and add stay; the add kernel serves the remaining call.
  int prim_funcs = 0;
  for (const auto& [name, func] : out->functions()) prim_funcs += func.as<PrimFuncNode>() != nullptr;
  EXPECT_EQ(prim_funcs, 2);
}

}  // namespace
}  // namespace relax::transform
