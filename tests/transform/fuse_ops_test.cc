// fuse-ops, before/after: each case parses a module whose kernels carry a
// hand-written `op_pattern` (what annotate-op-pattern writes), runs the pass
// with the well-formedness and annotation check after it, and compares with
// the expected module.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fusion_test_kernels.h"
#include "relax/ir/parser.h"
#include "relax/ir/testing.h"
#include "relax/ir/well_formed.h"
#include "relax/support/check.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

namespace st = schedule_test;

using testing::kFusionTestKernels;

// A module of the kernels above and `functions`.
std::string with_kernels(const std::string& functions) { return "module {" + std::string(kFusionTestKernels) + functions + "}\n"; }


// The bindings of the first block of graph function `name` of `mod`.
const std::vector<Binding>& first_block(const IRModule& mod, const std::string& name) {
  const auto* func = mod.lookup(name).as<FunctionNode>();
  RELAX_CHECK(func != nullptr) << "no graph function " << name;
  return func->body.as<SeqExprNode>()->blocks[0].bindings;
}

// Runs fuse-ops alone; with `verify`, checks well-formedness and annotations after it.
IRModule run_fuse_ops(const IRModule& mod, bool verify = true) {
  PassContext ctx;
  if (verify) ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = PassManager({create_fuse_ops_pass()}).run(mod, ctx);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : mod;
}

// Runs the pass on `before` and compares with `expected`; then a second run
// must change nothing (a fused module has no fusible pair left).
void expect_fused(const std::string& before, const std::string& expected) {
  IRModule out = run_fuse_ops(st::parse_or_fail(with_kernels(before)));
  RELAX_EXPECT_STRUCTURAL_EQ(st::parse_or_fail(with_kernels(expected)), out);
  EXPECT_TRUE(well_formed(out).ok()) << well_formed(out);
  IRModule twice = run_fuse_ops(out);
  for (const auto& [name, func] : out.functions()) {
    EXPECT_TRUE(twice.lookup(name).same_as(func)) << "a second run changed @" << name;
  }
}

// The pass hands back the very nodes of a module with nothing to fuse.
void expect_unchanged(const std::string& functions, bool verify = true) {
  IRModule mod = st::parse_or_fail(with_kernels(functions));
  IRModule out = run_fuse_ops(mod, verify);
  ASSERT_EQ(out.functions().size(), mod.functions().size());
  for (const auto& [name, func] : mod.functions()) {
    EXPECT_TRUE(out.lookup(name).same_as(func)) << "@" << name << " changed:\n" << to_text(out);
  }
}

TEST(FuseOpsTest, ElementwiseChainBecomesOneFunction) {
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@add, (a, y), sinfo=Tensor[(n, 4), float32])
      output c = call_tir(@relu, (b,), sinfo=Tensor[(n, 4), float32])
    }
    return c
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      output c = @fused_exp_add_relu(x, y)
    }
    return c
  }
  func @fused_exp_add_relu(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32]
      attrs {primitive = true, private = true} {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@add, (a, y), sinfo=Tensor[(n, 4), float32])
      output c = call_tir(@relu, (b,), sinfo=Tensor[(n, 4), float32])
    }
    return c
  }
)");
}

TEST(FuseOpsTest, MatmulTakesItsBiasAndReluEpilogue) {
  expect_fused(R"(
  func @main(x: Tensor[(b, 4), float32], w: Tensor[(4, 4), float32], bias: Tensor[(4,), float32]) -> Tensor[(b, 4), float32] {
    dataflow {
      h0 = call_tir(@matmul, (x, w), sinfo=Tensor[(b, 4), float32])
      h1 = call_tir(@bias_add, (h0, bias), sinfo=Tensor[(b, 4), float32])
      output h2 = call_tir(@relu, (h1,), sinfo=Tensor[(b, 4), float32])
    }
    return h2
  }
)",
               R"(
  func @main(x: Tensor[(b, 4), float32], w: Tensor[(4, 4), float32], bias: Tensor[(4,), float32]) -> Tensor[(b, 4), float32] {
    dataflow {
      output h2 = @fused_matmul_bias_add_relu(x, w, bias)
    }
    return h2
  }
  func @fused_matmul_bias_add_relu(x: Tensor[(b, 4), float32], w: Tensor[(4, 4), float32], bias: Tensor[(4,), float32])
      -> Tensor[(b, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      h0 = call_tir(@matmul, (x, w), sinfo=Tensor[(b, 4), float32])
      h1 = call_tir(@bias_add, (h0, bias), sinfo=Tensor[(b, 4), float32])
      output h2 = call_tir(@relu, (h1,), sinfo=Tensor[(b, 4), float32])
    }
    return h2
  }
)");
}

TEST(FuseOpsTest, ReductionTakesItsProducerButNotItsConsumer) {
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n,), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      s = call_tir(@rowsum, (a,), sinfo=Tensor[(n,), float32])
      output r = call_tir(@negate, (s,), sinfo=Tensor[(n,), float32])
    }
    return r
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n,), float32] {
    dataflow {
      s = @fused_exp_rowsum(x)
      output r = call_tir(@negate, (s,), sinfo=Tensor[(n,), float32])
    }
    return r
  }
  func @fused_exp_rowsum(x: Tensor[(n, 4), float32]) -> Tensor[(n,), float32] attrs {primitive = true, private = true} {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output s = call_tir(@rowsum, (a,), sinfo=Tensor[(n,), float32])
    }
    return s
  }
)");
}

TEST(FuseOpsTest, TwoOutputFusibleOpsNeverShareAGroup) {
  // matmul -> relu -> matmul -> relu: each matmul takes the relu after it;
  // the second matmul does not take the first group as its prologue.
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32], w: Tensor[(4, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      h0 = call_tir(@matmul, (x, w), sinfo=Tensor[(n, 4), float32])
      h1 = call_tir(@relu, (h0,), sinfo=Tensor[(n, 4), float32])
      h2 = call_tir(@matmul, (h1, w), sinfo=Tensor[(n, 4), float32])
      h3 = call_tir(@matmul, (h2, w), sinfo=Tensor[(n, 4), float32])
      output h4 = call_tir(@relu, (h3,), sinfo=Tensor[(n, 4), float32])
    }
    return h4
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32], w: Tensor[(4, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      h1 = @fused_matmul_relu(x, w)
      h2 = call_tir(@matmul, (h1, w), sinfo=Tensor[(n, 4), float32])
      output h4 = @fused_matmul_relu_1(h2, w)
    }
    return h4
  }
  func @fused_matmul_relu(x: Tensor[(n, 4), float32], w: Tensor[(4, 4), float32]) -> Tensor[(n, 4), float32]
      attrs {primitive = true, private = true} {
    dataflow {
      h0 = call_tir(@matmul, (x, w), sinfo=Tensor[(n, 4), float32])
      output h1 = call_tir(@relu, (h0,), sinfo=Tensor[(n, 4), float32])
    }
    return h1
  }
  func @fused_matmul_relu_1(h2: Tensor[(n, 4), float32], w: Tensor[(4, 4), float32]) -> Tensor[(n, 4), float32]
      attrs {primitive = true, private = true} {
    dataflow {
      h3 = call_tir(@matmul, (h2, w), sinfo=Tensor[(n, 4), float32])
      output h4 = call_tir(@relu, (h3,), sinfo=Tensor[(n, 4), float32])
    }
    return h4
  }
)");
}

TEST(FuseOpsTest, MatmulTakesItsDequantizedWeightAsPrologue) {
  // An injective dequantisation feeding a matmul joins the matmul's group
  // (after the matmul took its epilogue); its constant scale becomes a parameter.
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32], wq: Tensor[(4, 4), int8]) -> Tensor[(n, 4), float32] {
    dataflow {
      w = call_tir(@dequant, (wq, const(float32, (4,), [0.5, 1, 2, 4])), sinfo=Tensor[(4, 4), float32])
      h = call_tir(@matmul, (x, w), sinfo=Tensor[(n, 4), float32])
      output o = call_tir(@relu, (h,), sinfo=Tensor[(n, 4), float32])
    }
    return o
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32], wq: Tensor[(4, 4), int8]) -> Tensor[(n, 4), float32] {
    dataflow {
      output o = @fused_dequant_matmul_relu(wq, const(float32, (4,), [0.5, 1, 2, 4]), x)
    }
    return o
  }
  func @fused_dequant_matmul_relu(wq: Tensor[(4, 4), int8], scale: Tensor[(4,), float32, cpu], x: Tensor[(n, 4), float32])
      -> Tensor[(n, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      w = call_tir(@dequant, (wq, scale), sinfo=Tensor[(4, 4), float32])
      h = call_tir(@matmul, (x, w), sinfo=Tensor[(n, 4), float32])
      output o = call_tir(@relu, (h,), sinfo=Tensor[(n, 4), float32])
    }
    return o
  }
)");
}

TEST(FuseOpsTest, DiamondFusesWhole) {
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      c = call_tir(@exp, (a,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@add, (b, c), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      output d = @fused_exp_relu_exp_add(x)
    }
    return d
  }
  func @fused_exp_relu_exp_add(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      c = call_tir(@exp, (a,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@add, (b, c), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)");
}

TEST(FuseOpsTest, DiamondWithAnOpaqueBranchDuplicatesNothing) {
  // a feeds the opaque reverse and relu: its post-dominator d is reached
  // through an opaque op, so a stays alone (computed once, read by both);
  // relu still fuses into d.
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@reverse, (a,), sinfo=Tensor[(n, 4), float32])
      c = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@add, (b, c), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@reverse, (a,), sinfo=Tensor[(n, 4), float32])
      output d = @fused_relu_add(a, b)
    }
    return d
  }
  func @fused_relu_add(a: Tensor[(n, 4), float32], b: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32]
      attrs {primitive = true, private = true} {
    dataflow {
      c = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@add, (b, c), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)");
}

TEST(FuseOpsTest, OpaqueKernelInTheMiddleSplitsAndNothingChanges) {
  // exp -> reverse (no op_pattern: opaque) -> relu; and the reverse's twin
  // marked opaque explicitly. No pair to fuse: the module comes back as it was.
  expect_unchanged(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@reverse, (a,), sinfo=Tensor[(n, 4), float32])
      c = call_tir(@relu, (b,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@reverse, (c,), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)");
}

TEST(FuseOpsTest, NothingFusesAcrossAnInplaceWrite) {
  // exp -> relu would fuse, but a call_tir_inplace (it writes y) stands
  // between them: both stay, and the write, whose result nobody uses, stays
  // in its place.
  expect_unchanged(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      e = call_tir_inplace(@scale_inplace, (y,), inplace_indices=[0], sinfo=Tensor[(n, 4), float32])
      output c = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
    }
    return c
  }
)");
  // Groups still form on each side; the write keeps its place between them.
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      e = call_tir_inplace(@scale_inplace, (y,), inplace_indices=[0], sinfo=Tensor[(n, 4), float32])
      c = call_tir(@exp, (b,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@add, (c, a), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      t = @fused_exp_relu(x)
      a = t[0]
      b = t[1]
      e = call_tir_inplace(@scale_inplace, (y,), inplace_indices=[0], sinfo=Tensor[(n, 4), float32])
      output d = @fused_exp_add(b, a)
    }
    return d
  }
  func @fused_exp_relu(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])]
      attrs {primitive = true, private = true} {
    dataflow {
      output a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
    }
    return (a, b)
  }
  func @fused_exp_add(b: Tensor[(n, 4), float32], a: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32]
      attrs {primitive = true, private = true} {
    dataflow {
      c = call_tir(@exp, (b,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@add, (c, a), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)");
}

TEST(FuseOpsTest, NothingFusesAcrossAnImpureCall) {
  // The effect between two dataflow blocks: each block fuses on its own.
  const std::string log = R"(
  func @log(v: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] impure {
    return v
  }
)";
  expect_unchanged(log + R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] impure {
    dataflow {
      output a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
    }
    l = @log(a)
    dataflow {
      output c = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
    }
    return c
  }
)");
  // The impure call inside a dataflow block (not well formed, but the pass
  // must not rely on that): it splits the block like a write.
  IRModule ill = st::parse_or_fail(with_kernels(log + R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] impure {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      l = @log(a)
      output c = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
    }
    return c
  }
)"));
  ASSERT_FALSE(well_formed(ill).ok());
  IRModule out = run_fuse_ops(ill, /*verify=*/false);
  EXPECT_TRUE(out.lookup("main").same_as(ill.lookup("main"))) << to_text(out);
}

TEST(FuseOpsTest, VariableOnlyInExtraSymArgsTravelsInAShapeParameter) {
  // m is a dim of `cache`, which the group does not read: the rotary kernel
  // needs it only through its extra_sym_args.
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32], pos: Tensor[(k,), float32], cache: Tensor[(m, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output r = call_tir(@rotary, (a, pos), shape(m), sinfo=Tensor[(n, 4), float32])
    }
    return r
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32], pos: Tensor[(k,), float32], cache: Tensor[(m, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      output r = @fused_exp_rotary(x, pos, shape(m))
    }
    return r
  }
  func @fused_exp_rotary(x: Tensor[(n, 4), float32], pos: Tensor[(k,), float32], s: Shape[(m,)]) -> Tensor[(n, 4), float32]
      attrs {primitive = true, private = true} {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output r = call_tir(@rotary, (a, pos), shape(m), sinfo=Tensor[(n, 4), float32])
    }
    return r
  }
)");
}

TEST(FuseOpsTest, VariableOnlyInsideAnExpressionDimTravelsInAShapeParameter) {
  // y is (n - 1, 4): n is no bare dim of the group's one input.
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n - 1, 4), float32]) -> Tensor[(n - 1, 4), float32] {
    dataflow {
      a = call_tir(@exp, (y,), sinfo=Tensor[(n - 1, 4), float32])
      output b = call_tir(@relu, (a,), sinfo=Tensor[(n - 1, 4), float32])
    }
    return b
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n - 1, 4), float32]) -> Tensor[(n - 1, 4), float32] {
    dataflow {
      output b = @fused_exp_relu(y, shape(n))
    }
    return b
  }
  func @fused_exp_relu(y: Tensor[(n - 1, 4), float32], s: Shape[(n,)]) -> Tensor[(n - 1, 4), float32]
      attrs {primitive = true, private = true} {
    dataflow {
      a = call_tir(@exp, (y,), sinfo=Tensor[(n - 1, 4), float32])
      output b = call_tir(@relu, (a,), sinfo=Tensor[(n - 1, 4), float32])
    }
    return b
  }
)");
}

TEST(FuseOpsTest, SeveralOutputsComeBackAsATuple) {
  expect_fused(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      output c = call_tir(@add, (a, b), sinfo=Tensor[(n, 4), float32])
    }
    t = (b, c)
    return t
  }
)",
               R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] {
    dataflow {
      f = @fused_exp_relu_add(x)
      output b = f[0]
      output c = f[1]
    }
    t = (b, c)
    return t
  }
  func @fused_exp_relu_add(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])]
      attrs {primitive = true, private = true} {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      output c = call_tir(@add, (a, b), sinfo=Tensor[(n, 4), float32])
    }
    return (b, c)
  }
)");
}

TEST(FuseOpsTest, MaxFuseSizeBoundsAGroup) {
  IRModule mod = st::parse_or_fail(with_kernels(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      c = call_tir(@exp, (b,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@relu, (c,), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)"));
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  ctx.set_option("fuse-ops.max-fuse-size", int64_t{2});
  absl::StatusOr<IRModule> out = PassManager({create_fuse_ops_pass()}).run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  RELAX_EXPECT_STRUCTURAL_EQ(st::parse_or_fail(with_kernels(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      b = @fused_exp_relu(x)
      output d = @fused_exp_relu_1(b)
    }
    return d
  }
  func @fused_exp_relu(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
    }
    return b
  }
  func @fused_exp_relu_1(b: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      c = call_tir(@exp, (b,), sinfo=Tensor[(n, 4), float32])
      output d = call_tir(@relu, (c,), sinfo=Tensor[(n, 4), float32])
    }
    return d
  }
)")),
                             *out);
}

TEST(FuseOpsTest, LongChainSplitsIntoGroupsOfMaxFuseSize) {
  // 1,000 elementwise calls, v0 also read by the last one: v0's post-dominator
  // is the end of the chain (a walk over the whole block), too far for one
  // group, so v0 stays alone and the chain after it splits into groups of 256.
  std::string text = R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      v0 = call_tir(@relu, (x,), sinfo=Tensor[(n, 4), float32])
)";
  for (int i = 1; i < 999; ++i) {
    text += "      v" + std::to_string(i) + " = call_tir(@exp, (v" + std::to_string(i - 1) +
            ",), sinfo=Tensor[(n, 4), float32])\n";
  }
  text += R"(      output v999 = call_tir(@add, (v998, v0), sinfo=Tensor[(n, 4), float32])
    }
    return v999
  }
)";
  IRModule mod = st::parse_or_fail(with_kernels(text));
  IRModule out = run_fuse_ops(mod);
  std::vector<int64_t> sizes;
  for (const auto& [name, func] : out.functions()) {
    const auto* f = func.as<FunctionNode>();
    if (f == nullptr || name == "main") continue;
    EXPECT_EQ(name.rfind("fused_exp_exp_exp_exp_", 0), 0u) << name;
    EXPECT_LE(name.size(), 100u) << name;
    sizes.push_back(static_cast<int64_t>(first_block(out, name).size()));
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{256, 256, 256, 231}));
  EXPECT_EQ(first_block(out, "main").size(), 5u) << to_text(out.lookup("main"));
}

// A random dataflow block over the kernels above: each binding calls a random
// kernel on random earlier values (an opaque one, the matmul, the rotary with
// its extra_sym_args, an in-place write now and then), some become outputs.
// Bindings are named v<i>, so the check can find them again.
std::string random_block(uint32_t seed, int bindings) {
  uint32_t state = seed * 2654435761u + 1;
  auto next = [&](uint32_t bound) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % bound;
  };
  std::vector<std::string> values = {"x", "y"};
  std::vector<std::string> outputs;
  const std::string t = "sinfo=Tensor[(n, 4), float32])";
  std::string text = R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32], w: Tensor[(4, 4), float32],
             bias: Tensor[(4,), float32], pos: Tensor[(k,), float32], cache: Tensor[(m, 4), float32]) -> Object {
    dataflow {
)";
  for (int i = 0; i < bindings; ++i) {
    auto pick = [&] { return values[values.size() - 1 - next(std::min<uint32_t>(6, values.size()))]; };
    const std::string v = "v" + std::to_string(i);
    const bool output = next(5) == 0 || i == bindings - 1;
    std::string call;
    switch (next(9)) {
      case 0: call = "call_tir(@exp, (" + pick() + ",), " + t; break;
      case 1: call = "call_tir(@relu, (" + pick() + ",), " + t; break;
      case 2: call = "call_tir(@add, (" + pick() + ", " + pick() + "), " + t; break;
      case 3: call = "call_tir(@bias_add, (" + pick() + ", bias), " + t; break;
      case 4: call = "call_tir(@matmul, (" + pick() + ", w), " + t; break;
      case 5: call = "call_tir(@reverse, (" + pick() + ",), " + t; break;
      case 6: call = "call_tir(@rotary, (" + pick() + ", pos), shape(m), " + t; break;
      case 7: call = "call_tir_inplace(@scale_inplace, (" + pick() + ",), inplace_indices=[0], " + t; break;
      default: call = "call_tir(@exp, (" + pick() + ",), " + t; break;
    }
    text += "      " + std::string(output ? "output " : "") + v + " = " + call + "\n";
    values.push_back(v);
    if (output) outputs.push_back(v);
  }
  text += "    }\n    t = (";
  for (size_t i = 0; i < outputs.size(); ++i) text += (i > 0 ? ", " : "") + outputs[i];
  text += ")\n    return t\n  }\n";
  return text;
}

// The callee of a call_tir or call_tir_inplace binding, or "".
std::string kernel_of(const Binding& b) {
  const auto* call = b.value.as<CallNode>();
  const auto* op = call != nullptr ? call->callee.as<OpNode>() : nullptr;
  if (op == nullptr || (op->name != "call_tir" && op->name != "call_tir_inplace")) return "";
  return call->args[0].as<GlobalVarNode>()->name;
}

TEST(FuseOpsTest, RandomBlocksKeepEveryCallOnceAndEveryEffectInPlace) {
  int fused_groups = 0;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    IRModule mod = st::parse_or_fail(with_kernels(random_block(seed, 24)));
    IRModule out = run_fuse_ops(mod);  // verified: well formed, annotations current
    // The segment of each binding (in-place writes before it) and its kernel.
    std::map<std::string, int> segment;
    std::map<std::string, int> calls_before, calls_after;
    int writes = 0;
    for (const Binding& b : first_block(mod, "main")) {
      if (kernel_of(b) == "scale_inplace") ++writes;
      segment[b.var.name_hint()] = writes;
      ++calls_before[kernel_of(b)];
    }
    writes = 0;
    for (const Binding& b : first_block(out, "main")) {
      const std::string kernel = kernel_of(b);
      if (kernel == "scale_inplace") ++writes;
      if (!kernel.empty()) ++calls_after[kernel];
      if (segment.contains(b.var.name_hint())) {
        EXPECT_EQ(segment[b.var.name_hint()], writes) << b.var.name_hint() << " moved across a write";
      }
      const auto* call = b.value.as<CallNode>();
      const auto* callee = call != nullptr ? call->callee.as<GlobalVarNode>() : nullptr;
      if (callee == nullptr) continue;
      // A call of a grouped function: its members all come from this segment,
      // hold at most one matmul and nothing opaque.
      ++fused_groups;
      int anchors = 0;
      for (const Binding& m : first_block(out, callee->name)) {
        const std::string kernel_m = kernel_of(m);
        ++calls_after[kernel_m];
        anchors += kernel_m == "matmul";
        EXPECT_NE(kernel_m, "reverse");
        EXPECT_NE(kernel_m, "scale_inplace");
        EXPECT_EQ(segment[m.var.name_hint()], writes) << m.var.name_hint() << " in @" << callee->name;
      }
      EXPECT_LE(anchors, 1) << callee->name;
    }
    calls_before.erase("");
    EXPECT_EQ(calls_before, calls_after) << "calls duplicated or lost:\n" << to_text(out);
  }
  EXPECT_GT(fused_groups, 300);
}

}  // namespace
}  // namespace relax::transform
