// fuse-tir: groups written by hand in the form fuse-ops produces (FUSION.md,
// Interface 2) become one PrimFunc each, compared structurally with the
// expected kernel and call site; statistics; groups that cannot be merged stay.
// The "before" modules are shared (fuse_tir_cases.h) with
// tests/e2e/fusion/fusion_build_test.cc, which checks their numerics.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/str_replace.h"
#include "fuse_tir_cases.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

using testing::elementwise_chain_module;
using testing::exp_sum_group;
using testing::expression_dims_module;
using testing::kLegalizedAdd;
using testing::kLegalizedExp;
using testing::kLegalizedMultiply;
using testing::matmul_add_relu_module;
using testing::module;
using testing::rotary_index_only_variable_module;
using testing::tuple_result_module;

IRModule parse_fuse_tir_module(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

IRModule run_fuse_tir(const IRModule& mod, PassContext& ctx) {
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = PassManager({create_fuse_tir_pass()}).run(mod, ctx);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : mod;
}

// The error of fuse-tir with the option `strict` (a group that cannot be merged is an error).
std::string strict_error(const IRModule& mod) {
  PassContext ctx;
  ctx.set_option("fuse-tir.strict", true);
  absl::StatusOr<IRModule> out = PassManager({create_fuse_tir_pass()}).run(mod, ctx);
  EXPECT_FALSE(out.ok());
  return out.ok() ? "" : std::string(out.status().message());
}

int64_t statistic(const PassContext& ctx, const std::string& name) {
  auto p = ctx.statistics().find("fuse-tir");
  if (p == ctx.statistics().end()) return 0;
  auto s = p->second.find(name);
  return s == p->second.end() ? 0 : s->second;
}

// Runs fuse-tir on `before` and compares each function of `expected` with the
// function of that name in the result (the member kernels stay in the module;
// dce removes them later).
void expect_fused(const std::string& before, const std::string& expected, PassContext& ctx) {
  IRModule after = run_fuse_tir(parse_fuse_tir_module(before), ctx);
  IRModule want = parse_fuse_tir_module(expected);
  for (const auto& [name, func] : want.functions()) {
    SCOPED_TRACE("@" + name);
    RELAX_EXPECT_STRUCTURAL_EQ(func, after.lookup(name));
  }
}

// add -> exp -> multiply(exp, add): both producers are one spatial block, so
// both are inlined (add into both of its loads) and one block is left.
TEST(FuseTirTest, ElementwiseChainBecomesOneBlock) {
  const std::string before = elementwise_chain_module();
  const std::string expected = module(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      output gv: Tensor[(n, 4), float32] = call_tir(@fused_add_exp_multiply, (x, y), sinfo=Tensor[(n, 4), float32])
    }
    return gv
  }
  prim_func @fused_add_exp_multiply(x: Buffer[(n, 4), float32], y: Buffer[(n, 4), float32], gv: Buffer[(n, 4), float32]) attrs {global_symbol = "fused_add_exp_multiply"} {
    for i0 in range(n) parallel {
      for i1 in range(4) {
        block multiply(vi0 = spatial(n, i0), vi1 = spatial(4, i1)) {
          gv[vi0, vi1] = exp(x[vi0, vi1] + y[vi0, vi1]) * (x[vi0, vi1] + y[vi0, vi1])
        }
      }
    }
  }
)");
  PassContext ctx;
  expect_fused(before, expected, ctx);
  EXPECT_EQ(statistic(ctx, "fused_functions"), 1);
  EXPECT_EQ(statistic(ctx, "inlined_intermediates"), 2);
  EXPECT_EQ(statistic(ctx, "allocated_intermediates"), 0);
}

// matmul -> add -> relu: the matmul's output (a reduction) stays a buffer; add
// is inlined into relu, which becomes a second loop nest over it.
TEST(FuseTirTest, MatmulAddReluKeepsTheReductionAndInlinesTheEpilogue) {
  const std::string before = matmul_add_relu_module();
  const std::string expected = module(R"(
  func @main(x: Tensor[(b, 16), float32], w: Tensor[(16, 32), float32], c: Tensor[(32,), float32]) -> Tensor[(b, 32), float32] {
    dataflow {
      output gv: Tensor[(b, 32), float32] = call_tir(@fused_matmul_add_relu, (x, w, c), sinfo=Tensor[(b, 32), float32])
    }
    return gv
  }
  prim_func @fused_matmul_add_relu(x: Buffer[(b, 16), float32], w: Buffer[(16, 32), float32], c: Buffer[(32,), float32], gv: Buffer[(b, 32), float32]) attrs {global_symbol = "fused_matmul_add_relu"} {
    alloc lv0: Buffer[(b, 32), float32, workspace] {
      for i in range(b) parallel {
        for j in range(32) {
          for k in range(16) {
            block matmul(vi = spatial(b, i), vj = spatial(32, j), vk = reduce(16, k)) {
              init {
                lv0[vi, vj] = 0f32
              }
              lv0[vi, vj] = lv0[vi, vj] + x[vi, vk] * w[vk, vj]
            }
          }
        }
      }
      for i0 in range(b) parallel {
        for i1 in range(32) {
          block relu(vi0 = spatial(b, i0), vi1 = spatial(32, i1)) {
            gv[vi0, vi1] = max(lv0[vi0, vi1] + c[vi1], 0f32)
          }
        }
      }
    }
  }
)");
  PassContext ctx;
  expect_fused(before, expected, ctx);
  EXPECT_EQ(statistic(ctx, "inlined_intermediates"), 1);
  EXPECT_EQ(statistic(ctx, "allocated_intermediates"), 1);
}

// exp -> sum over the last axis: the elementwise producer is inlined into the
// reduction's body (each element is read once per reduction step).
TEST(FuseTirTest, ElementwiseProducerInlinedIntoAReduction) {
  const std::string before = module(R"(
  func @main(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    dataflow {
      output gv: Tensor[(n,), float32] = @fused_exp_sum(x)
    }
    return gv
  }
)" + exp_sum_group());
  const std::string expected = module(R"(
  func @main(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    dataflow {
      output gv: Tensor[(n,), float32] = call_tir(@fused_exp_sum, (x,), sinfo=Tensor[(n,), float32])
    }
    return gv
  }
  prim_func @fused_exp_sum(x: Buffer[(n, m), float32], gv: Buffer[(n,), float32]) attrs {global_symbol = "fused_exp_sum"} {
    for i0 in range(n) parallel {
      for k in range(m) {
        block sum(v0 = spatial(n, i0), vk = reduce(m, k)) {
          init {
            gv[v0] = 0f32
          }
          gv[v0] = gv[v0] + exp(x[v0, vk])
        }
      }
    }
  }
)");
  PassContext ctx;
  expect_fused(before, expected, ctx);
  EXPECT_EQ(statistic(ctx, "inlined_intermediates"), 1);
}

// A reduction feeding an elementwise op is never inlined (nor duplicated):
// sum -> exp keeps the sum's loops writing a buffer.
TEST(FuseTirTest, ReductionOutputIsNeverInlined) {
  const std::string before = module(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n,), float32] {
    dataflow {
      output gv: Tensor[(n,), float32] = @fused_sum_exp(x)
    }
    return gv
  }
  func @fused_sum_exp(x: Tensor[(n, 4), float32]) -> Tensor[(n,), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n,), float32] = call_tir(@sum, (x,), sinfo=Tensor[(n,), float32])
      output gv: Tensor[(n,), float32] = call_tir(@exp1, (lv0,), sinfo=Tensor[(n,), float32])
    }
    return gv
  }
  prim_func @sum(A: Buffer[(a, 4), float32], B: Buffer[(a,), float32]) attrs {global_symbol = "sum"} {
    for i0 in range(a) parallel {
      for k in range(4) {
        block sum(v0 = spatial(a, i0), vk = reduce(4, k)) {
          init {
            B[v0] = 0f32
          }
          B[v0] = B[v0] + A[v0, vk]
        }
      }
    }
  }
  prim_func @exp1(A: Buffer[(a,), float32], B: Buffer[(a,), float32]) attrs {global_symbol = "exp1"} {
    for i0 in range(a) parallel {
      block exp(v0 = spatial(a, i0)) {
        B[v0] = exp(A[v0])
      }
    }
  }
)");
  const std::string expected = module(R"(
  prim_func @fused_sum_exp(x: Buffer[(n, 4), float32], gv: Buffer[(n,), float32]) attrs {global_symbol = "fused_sum_exp"} {
    alloc lv0: Buffer[(n,), float32, workspace] {
      for i0 in range(n) parallel {
        for k in range(4) {
          block sum(v0 = spatial(n, i0), vk = reduce(4, k)) {
            init {
              lv0[v0] = 0f32
            }
            lv0[v0] = lv0[v0] + x[v0, vk]
          }
        }
      }
      for i0_1 in range(n) parallel {
        block exp(v0_1 = spatial(n, i0_1)) {
          gv[v0_1] = exp(lv0[v0_1])
        }
      }
    }
  }
)");
  PassContext ctx;
  expect_fused(before, expected, ctx);
  EXPECT_EQ(statistic(ctx, "inlined_intermediates"), 0);
  EXPECT_EQ(statistic(ctx, "allocated_intermediates"), 1);
}

// A rotary-style kernel reads positions[m + i]: m is in no buffer shape, so the
// member gets it as an extra_sym_arg, the group as its trailing Shape parameter,
// the fused kernel as a trailing int64 scalar, and the call site passes shape(m).
TEST(FuseTirTest, IndexOnlyVariableBecomesATrailingScalar) {
  const std::string before = rotary_index_only_variable_module();
  const std::string expected = module(R"(
  func @main(x: Tensor[(n, 8), float32], pos: Tensor[(t,), int64], y: Tensor[(n, 8), float32], past: Tensor[(m,), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      output gv: Tensor[(n, 8), float32] = call_tir(@fused_rotary_add, (x, pos, y), shape(m), sinfo=Tensor[(n, 8), float32])
    }
    return gv
  }
  prim_func @fused_rotary_add(x: Buffer[(n, 8), float32], pos: Buffer[(t,), int64], y: Buffer[(n, 8), float32], gv: Buffer[(n, 8), float32], m: int64) attrs {global_symbol = "fused_rotary_add"} {
    for i0 in range(n) parallel {
      for i1 in range(8) {
        block add(vi0 = spatial(n, i0), vi1 = spatial(8, i1)) {
          gv[vi0, vi1] = x[vi0, vi1] * cos(cast<float32>(pos[m + vi0])) + y[vi0, vi1]
        }
      }
    }
  }
)");
  PassContext ctx;
  expect_fused(before, expected, ctx);
}

// Buffers of extent n - 1: diff's output dim `k - 1` is proven equal to the
// argument's `n - 1` once k is bound to n; exp and multiply take k as an
// extra_sym_arg. In the second group n is known only through the trailing
// Shape, and the fused kernel's `d: Buffer[(n - 1,)]` is checked against it.
TEST(FuseTirTest, ExpressionDimsAreProvenAndTheirVariablesPassed) {
  const std::string before = expression_dims_module();
  const std::string expected = module(R"(
  func @main(x: Tensor[(n,), float32]) -> Tensor[(n - 1,), float32] {
    dataflow {
      lv: Tensor[(n - 1,), float32] = call_tir(@fused_diff_exp, (x,), sinfo=Tensor[(n - 1,), float32])
      output gv: Tensor[(n - 1,), float32] = call_tir(@fused_exp_multiply, (lv,), shape(n), sinfo=Tensor[(n - 1,), float32])
    }
    return gv
  }
  prim_func @fused_diff_exp(x: Buffer[(n,), float32], gv: Buffer[(n - 1,), float32]) attrs {global_symbol = "fused_diff_exp"} {
    for i in range(n - 1) parallel {
      block exp(vi = spatial(n - 1, i)) {
        gv[vi] = exp(x[vi + 1] - x[vi])
      }
    }
  }
  prim_func @fused_exp_multiply(d: Buffer[(n - 1,), float32], gv: Buffer[(n - 1,), float32], n: int64) attrs {global_symbol = "fused_exp_multiply"} {
    for i in range(n - 1) parallel {
      block multiply(vi = spatial(n - 1, i)) {
        gv[vi] = exp(d[vi]) * d[vi]
      }
    }
  }
)");
  PassContext ctx;
  expect_fused(before, expected, ctx);
  EXPECT_EQ(statistic(ctx, "fused_functions"), 2);
}

// Two outputs used outside the group: a tuple result gives two output buffers
// (neither is inlined, since both must be written); the two calls of one kernel
// get their own loop variables (the printer tells them apart as i0 and i0_1)
// and block names.
TEST(FuseTirTest, TupleResultGivesSeveralOutputs) {
  const std::string before = tuple_result_module(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      t: Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] = @fused_add_add(x, y)
      a: Tensor[(n, 4), float32] = t[0]
      b: Tensor[(n, 4), float32] = t[1]
      output gv: Tensor[(n, 4), float32] = call_tir(@multiply, (a, b), sinfo=Tensor[(n, 4), float32])
    }
    return gv
  }
)");
  const std::string expected = module(std::string(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      t: Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] = call_tir(@fused_add_add, (x, y), sinfo=Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])])
      a: Tensor[(n, 4), float32] = t[0]
      b: Tensor[(n, 4), float32] = t[1]
      output gv: Tensor[(n, 4), float32] = call_tir(@multiply, (a, b), sinfo=Tensor[(n, 4), float32])
    }
    return gv
  }
  prim_func @fused_add_add(x: Buffer[(n, 4), float32], y: Buffer[(n, 4), float32], lv0: Buffer[(n, 4), float32], gv: Buffer[(n, 4), float32]) attrs {global_symbol = "fused_add_add"} {
    for i0 in range(n) parallel {
      for i1 in range(4) {
        block add(vi0 = spatial(n, i0), vi1 = spatial(4, i1)) {
          lv0[vi0, vi1] = x[vi0, vi1] + y[vi0, vi1]
        }
      }
    }
    for i0_1 in range(n) parallel {
      for i1_1 in range(4) {
        block add_1(vi0_1 = spatial(n, i0_1), vi1_1 = spatial(4, i1_1)) {
          gv[vi0_1, vi1_1] = lv0[vi0_1, vi1_1] + y[vi0_1, vi1_1]
        }
      }
    }
  }
)") + kLegalizedMultiply);
  PassContext ctx;
  expect_fused(before, expected, ctx);
  EXPECT_EQ(statistic(ctx, "inlined_intermediates"), 0);
}

// A group whose parameters define n only through `n * 2` (fuse-ops would pass n
// in a trailing Shape) cannot become a kernel, which defines a variable only by
// a whole dim or a scalar: the group stays, and strict mode says why.
TEST(FuseTirTest, VariableOnlyInAnExpressionDimNeedsTheShape) {
  const std::string text = module(std::string(R"(
  func @main(x: Tensor[(n * 2, 4), float32]) -> Tensor[(n * 2, 4), float32] {
    dataflow {
      output gv: Tensor[(n * 2, 4), float32] = @fused_exp_exp(x)
    }
    return gv
  }
  func @fused_exp_exp(x: Tensor[(n * 2, 4), float32]) -> Tensor[(n * 2, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n * 2, 4), float32] = call_tir(@exp, (x,), sinfo=Tensor[(n * 2, 4), float32])
      output gv: Tensor[(n * 2, 4), float32] = call_tir(@exp, (lv0,), sinfo=Tensor[(n * 2, 4), float32])
    }
    return gv
  }
)") + kLegalizedExp);
  IRModule before = parse_fuse_tir_module(text);
  PassContext ctx;
  IRModule after = run_fuse_tir(before, ctx);
  RELAX_EXPECT_STRUCTURAL_EQ(before, after);
  EXPECT_EQ(statistic(ctx, "kept_functions"), 1);
  EXPECT_EQ(strict_error(before),
            "pass fuse-tir: @fused_exp_exp: `n` is defined only through an expression dim of a parameter (a fused "
            "kernel needs it as a whole dim or in a trailing Shape)");
}

// A group holding something other than call_tir (here an operator call that
// legalization did not lower) is left as a graph function, and its call too.
TEST(FuseTirTest, GroupThatCannotBeMergedStays) {
  const std::string text = module(std::string(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      output gv: Tensor[(n, 4), float32] = @fused_exp_multiply(x, y)
    }
    return gv
  }
  func @fused_exp_multiply(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n, 4), float32] = exp(x)
      output gv: Tensor[(n, 4), float32] = call_tir(@multiply, (lv0, y), sinfo=Tensor[(n, 4), float32])
    }
    return gv
  }
)") + kLegalizedMultiply);
  IRModule before = parse_fuse_tir_module(text);
  PassContext ctx;
  IRModule after = run_fuse_tir(before, ctx);
  RELAX_EXPECT_STRUCTURAL_EQ(before, after);
  EXPECT_EQ(statistic(ctx, "kept_functions"), 1);
  EXPECT_EQ(statistic(ctx, "fused_functions"), 0);
  EXPECT_EQ(strict_error(before), "pass fuse-tir: @fused_exp_multiply: binding `lv0` is not a call_tir");
}

// A callee whose dim cannot be proven equal to the bound argument's: the group
// stays, and the reason names the parameter and both dims.
TEST(FuseTirTest, UnprovableDimKeepsTheGroup) {
  const std::string text = module(std::string(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(m, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      output gv: Tensor[(n, 4), float32] = @fused_exp_multiply(x, y)
    }
    return gv
  }
  func @fused_exp_multiply(x: Tensor[(n, 4), float32], y: Tensor[(m, 4), float32]) -> Tensor[(n, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n, 4), float32] = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output gv: Tensor[(n, 4), float32] = call_tir(@multiply, (lv0, y), sinfo=Tensor[(n, 4), float32])
    }
    return gv
  }
)") + kLegalizedExp + kLegalizedMultiply);
  IRModule before = parse_fuse_tir_module(text);
  PassContext ctx;
  IRModule after = run_fuse_tir(before, ctx);
  RELAX_EXPECT_STRUCTURAL_EQ(before, after);
  EXPECT_EQ(statistic(ctx, "kept_functions"), 1);
  EXPECT_EQ(strict_error(before),
            "pass fuse-tir: @fused_exp_multiply: binding `gv`: parameter `B` of `multiply` dim 0 is `n`, not provably equal to "
            "the argument's `m`");
}

// A matmul reads each element of A once per column: a producer of A that calls float
// functions (here sin, as a rotary embedding does) is computed once into a buffer, not
// inlined into the matmul's loads; a producer of cheap arithmetic is inlined.
std::string producer_into_matmul(const std::string& producer_value) {
  return module(R"(
  func @main(x: Tensor[(n, 16), float32], w: Tensor[(16, 8), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      output gv: Tensor[(n, 8), float32] = @fused_f_matmul(x, w)
    }
    return gv
  }
  func @fused_f_matmul(x: Tensor[(n, 16), float32], w: Tensor[(16, 8), float32]) -> Tensor[(n, 8), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n, 16), float32] = call_tir(@f, (x,), sinfo=Tensor[(n, 16), float32])
      output gv: Tensor[(n, 8), float32] = call_tir(@matmul, (lv0, w), sinfo=Tensor[(n, 8), float32])
    }
    return gv
  }
  prim_func @f(A: Buffer[(a, 16), float32], B: Buffer[(a, 16), float32]) attrs {global_symbol = "f"} {
    for i0 in range(a) parallel {
      for i1 in range(16) {
        block f(vi0 = spatial(a, i0), vi1 = spatial(16, i1)) {
          B[vi0, vi1] = )" + producer_value + R"(
        }
      }
    }
  }
  prim_func @matmul(A: Buffer[(m, 16), float32], B: Buffer[(16, 8), float32], C: Buffer[(m, 8), float32]) attrs {global_symbol = "matmul"} {
    for i in range(m) parallel {
      for j in range(8) {
        for k in range(16) {
          block matmul(vi = spatial(m, i), vj = spatial(8, j), vk = reduce(16, k)) {
            init {
              C[vi, vj] = 0f32
            }
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
          }
        }
      }
    }
  }
)");
}

TEST(FuseTirTest, ReusedProducerCallingFloatFunctionsIsComputedOnce) {
  PassContext ctx;
  IRModule out = run_fuse_tir(parse_fuse_tir_module(producer_into_matmul("sin(A[vi0, vi1]) * 2f32")), ctx);
  EXPECT_EQ(statistic(ctx, "inlined_intermediates"), 0);
  EXPECT_EQ(statistic(ctx, "allocated_intermediates"), 1);
  const std::string text = to_text(out.lookup("fused_f_matmul"));
  EXPECT_NE(text.find("alloc lv0"), std::string::npos) << text;
  EXPECT_EQ(text.find("sin(x[vi, vk])"), std::string::npos) << text;
}

TEST(FuseTirTest, ReusedProducerOfCheapArithmeticIsInlined) {
  PassContext ctx;
  IRModule out = run_fuse_tir(parse_fuse_tir_module(producer_into_matmul("A[vi0, vi1] * 2f32 - 1f32")), ctx);
  EXPECT_EQ(statistic(ctx, "inlined_intermediates"), 1);
  EXPECT_EQ(statistic(ctx, "allocated_intermediates"), 0);
}

// Two groups that merge into equal kernels (a model's repeated layers) share one kernel.
TEST(FuseTirTest, EqualKernelsAreMadeOnce) {
  const std::string group = R"(
    dataflow {
      lv0: Tensor[(n, 4), float32] = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output gv: Tensor[(n, 4), float32] = call_tir(@multiply, (lv0, x), sinfo=Tensor[(n, 4), float32])
    }
    return gv
  }
)";
  const std::string before = module(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a: Tensor[(n, 4), float32] = @fused_layer0(x)
      output b: Tensor[(n, 4), float32] = @fused_layer1(a)
    }
    return b
  }
  func @fused_layer0(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] attrs {primitive = true, private = true} {)" +
                                    group + R"(
  func @fused_layer1(x: Tensor[(k, 4), float32]) -> Tensor[(k, 4), float32] attrs {primitive = true, private = true} {)" +
                                    absl::StrReplaceAll(group, {{"(n, 4)", "(k, 4)"}}) + kLegalizedExp +
                                    kLegalizedMultiply);
  PassContext ctx;
  IRModule out = run_fuse_tir(parse_fuse_tir_module(before), ctx);
  EXPECT_EQ(statistic(ctx, "fused_functions"), 2);
  EXPECT_EQ(statistic(ctx, "shared_kernels"), 1);
  EXPECT_TRUE(out.lookup("fused_layer0").defined());
  EXPECT_FALSE(out.lookup("fused_layer1").defined());
  const std::string main = to_text(out.lookup("main"));
  EXPECT_NE(main.find("call_tir(@fused_layer0, (x,)"), std::string::npos) << main;
  EXPECT_NE(main.find("call_tir(@fused_layer0, (a,)"), std::string::npos) << main;
}

}  // namespace
}  // namespace relax::transform
