// legalize_ops: each operator's kernel (structure, and numerically against a
// plain-loop reference through the loop-level evaluator, for several sizes
// from one kernel), deduplication, naming, Prim operands, extra symbolic
// arguments, and the errors for calls it cannot legalize.
#include "relax/transform/legalize_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>

#include "legalize_test_util.h"
#include "relax/ir/op.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/shape/sym_expr_search.h"

namespace relax {
namespace {

using namespace legalize_testing;  // NOLINT(google-build-using-namespace)
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// The operators.

TEST(LegalizeOps, ListsItsOperatorsWhichAreAllRegistered) {
  EXPECT_THAT(transform::legalizable_ops(),
              ::testing::IsSupersetOf({"add", "multiply", "exp", "matmul", "reshape",
                                       "permute_dims", "sum", "softmax"}));
  for (const std::string& name : transform::legalizable_ops()) {
    EXPECT_NE(find_op(name), nullptr) << name;
  }
}

// ---------------------------------------------------------------------------
// add / multiply.

TEST(LegalizeOps, SymbolicBroadcastAddMatchesTheExpectedModule) {
  SymVar n("n");
  SymVar m("m");
  IRModule before =
      one_op({{"x", tensor_sinfo({n, 1}, f32)}, {"y", tensor_sinfo({1, m}, f32)}}, add_of);
  IRModule after = legalize(before);
  absl::StatusOr<IRModule> expected = parse_module(R"(
    module {
      func @main(x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32])
          -> Tensor[(n, m), float32] {
        dataflow {
          output out: Tensor[(n, m), float32] = call_tir(@add, (x, y), sinfo=Tensor[(n, m), float32])
        }
        return out
      }
      prim_func @add(A: Buffer[(n, 1), float32], B: Buffer[(1, m), float32],
                     C: Buffer[(n, m), float32]) attrs {global_symbol = "add"} {
        for i0 in range(n) parallel {
          for i1 in range(m) {
            block add(vi0 = spatial(n, i0), vi1 = spatial(m, i1)) {
              C[vi0, vi1] = A[vi0, 0] + B[0, vi1]
            }
          }
        }
      }
    })");
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  RELAX_EXPECT_STRUCTURAL_EQ(*expected, after);
  // The binding keeps its variable (the annotation did not change).
  EXPECT_TRUE(bindings_of(after)[0].var.same_as(bindings_of(before)[0].var));
  for (int64_t m_size : {1, 5}) {
    check_numerically(after, n,
                      [](const Inputs& in) {
                        return broadcast_binary(in.arrays.at("x"), in.arrays.at("y"), plus);
                      },
                      1e-6, {{m, m_size}});
  }
}

TEST(LegalizeOps, AddAndMultiplyOverEqualShapesAndRankDifferences) {
  SymVar n("n");
  struct Case {
    StructInfo x, y;
    Body body;
    std::function<double(double, double)> f;
  };
  std::vector<Case> cases = {
      {tensor_sinfo({n, 4}, f32), tensor_sinfo({n, 4}, f32), add_of, plus},
      {tensor_sinfo({n, 4}, f32), tensor_sinfo({4}, f32), multiply_of, times},
      {tensor_sinfo({3}, f64), tensor_sinfo({2, n, 1}, f64), add_of, plus},
      {tensor_sinfo({n}, i32), tensor_sinfo({}, i32), multiply_of, times},
  };
  for (const Case& c : cases) {
    IRModule legal = legalize(one_op({{"x", c.x}, {"y", c.y}}, c.body));
    SCOPED_TRACE(to_text(legal));
    KernelCall kc = kernel_call(legal);
    EXPECT_TRUE(struct_info_equal(kc.call->sinfo_args[0], kc.call->struct_info()));
    std::vector<BlockSite> blocks = blocks_of(*kc.kernel);
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(iter_types(*blocks[0].block), std::string(blocks[0].loops.size(), 'S'));
    check_numerically(legal, n, [&](const Inputs& in) {
      return broadcast_binary(in.arrays.at("x"), in.arrays.at("y"), c.f);
    });
  }
}

// power by a constant 2 or 3 (what variances and ONNX graphs' Pow nodes hold) multiplies in its
// kernel instead of calling pow per element; another exponent stays pow. (Its values: the power
// rows of tests/ops.)
TEST(LegalizeOps, PowerByAConstantTwoOrThreeMultiplies) {
  absl::StatusOr<IRModule> mod = parse_module(R"(
    module {
      func @main(x: Tensor[(n,), float32]) -> Tuple[(Tensor[(n,), float32], Tensor[(n,), float32], Tensor[(n,), float32])] {
        dataflow {
          a = power(x, const(float32, (), [2]))
          b = power(x, const(float32, (1,), [3]))
          c = power(x, const(float32, (), [0.5]))
          output t = (a, b, c)
        }
        return t
      }
    })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string text = to_text(legalize(*mod));
  EXPECT_EQ(text.find("pow("), text.rfind("pow(")) << text;  // one pow: the square root's
  EXPECT_NE(text.find("pow("), std::string::npos) << text;
  EXPECT_NE(text.find("A[vi0] * A[vi0] * A[vi0]"), std::string::npos) << text;
  EXPECT_NE(text.find("A[vi0] * A[vi0]\n"), std::string::npos) << text;
}

TEST(LegalizeOps, NestedCallsGetBindingsOfTheirOwn) {
  // The text format and the builders' callers may nest calls; the code generators read
  // A-normal form, so the inner call's kernel call is bound first.
  absl::StatusOr<IRModule> nested = parse_module(R"(
    module {
      func @main(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
        dataflow {
          output y = exp(exp(x))
        }
        return y
      }
    })");
  ASSERT_TRUE(nested.ok()) << nested.status();
  IRModule legal = legalize(*nested);
  SCOPED_TRACE(to_text(legal));
  const std::vector<Binding> bindings = bindings_of(legal);
  ASSERT_EQ(bindings.size(), 2u);
  for (const Binding& b : bindings) {
    const auto* call = b.value.as<CallNode>();
    ASSERT_NE(call, nullptr);
    EXPECT_TRUE(is_op_call(b.value, "call_tir"));
    for (const Expr& arg : call->args) {
      if (const auto* tuple = arg.as<TupleNode>()) {
        for (const Expr& field : tuple->fields) EXPECT_EQ(field.as<CallNode>(), nullptr) << "a call nested in a call";
      }
    }
  }
}

TEST(LegalizeOps, ADimProvablyOneIsBroadcastAtIndexZero) {
  SymVar n("n");
  // (n, n + 1 - n) is (n, 1) in disguise: the kernel reads it at index 0.
  IRModule legal = legalize(
      one_op({{"x", tensor_sinfo({n, n + 1 - n}, f32)}, {"y", tensor_sinfo({n, 6}, f32)}}, add_of));
  KernelCall kc = kernel_call(legal);
  EXPECT_THAT(to_text(kc.kernel_expr), HasSubstr("A[vi0, 0] + B[vi0, vi1]"));
  check_numerically(legal, n, [](const Inputs& in) {
    return broadcast_binary(in.arrays.at("x"), in.arrays.at("y"), plus);
  });
}

TEST(LegalizeOps, APrimOperandBecomesAScalarParameterOfItsDtype) {
  SymVar n("n");
  IRModule legal =
      legalize(one_op({{"x", tensor_sinfo({n, 4}, f32)}, {"s", prim_sinfo(f32)}},
                      [](const std::vector<Var>& v) { return op::multiply(v[1], v[0]); }));
  KernelCall kc = kernel_call(legal);
  EXPECT_THAT(param_texts(*kc.kernel),
              ::testing::ElementsAre("a: float32", "B: (n, 4) float32", "C: (n, 4) float32"));
  const auto* args = kc.call->args[1].as<TupleNode>();
  ASSERT_EQ(args->fields.size(), 2u);
  EXPECT_EQ(Var::from_expr(args->fields[0]).name_hint(), "s");
  EXPECT_THAT(to_text(kc.kernel_expr), HasSubstr("C[vi0, vi1] = a * B[vi0, vi1]"));
  check_numerically(legal, n, [](const Inputs& in) {
    return map_ref(in.arrays.at("x"), [&](double v) { return in.scalars.at("s") * v; });
  });
}

TEST(LegalizeOps, IntegerAndConstantPrimOperands) {
  SymVar n("n");
  // An int32 scalar parameter for an int32 tensor.
  IRModule ints = legalize(one_op({{"x", tensor_sinfo({n}, i32)}, {"k", prim_sinfo(i32)}}, add_of));
  EXPECT_THAT(param_texts(*kernel_call(ints).kernel),
              ::testing::ElementsAre("A: (n,) int32", "b: int32", "C: (n,) int32"));
  check_numerically(ints, n, [](const Inputs& in) {
    return map_ref(in.arrays.at("x"), [&](double v) { return v + in.scalars.at("k"); });
  });
  // An int64 constant added to a float32 tensor: an int64 parameter, converted in the kernel.
  IRModule constant =
      legalize(one_op({{"x", tensor_sinfo({n, 3}, f32)}},
                      [](const std::vector<Var>& v) { return op::add(v[0], make_prim_value(3)); }));
  KernelCall kc = kernel_call(constant);
  EXPECT_THAT(param_texts(*kc.kernel),
              ::testing::ElementsAre("A: (n, 3) float32", "b: int64", "C: (n, 3) float32"));
  EXPECT_THAT(to_text(kc.kernel_expr), HasSubstr("A[vi0, vi1] + cast<float32>(b)"));
  check_numerically(constant, n, [](const Inputs& in) {
    return map_ref(in.arrays.at("x"), [](double v) { return v + 3; });
  });
}

TEST(LegalizeOps, TwoPrimsWithAKnownValueBecomeThatValue) {
  SymVar n("n");
  IRModule legal =
      legalize(one_op({{"p", prim_sinfo(DataType::int64(), n)}},
                      [](const std::vector<Var>& v) { return op::add(v[0], make_prim_value(1)); }));
  std::vector<Binding> b = bindings_of(legal);
  ASSERT_EQ(b.size(), 1u);
  const auto* value = b[0].value.as<PrimValueNode>();
  ASSERT_NE(value, nullptr) << to_text(legal);
  EXPECT_EQ(value->value.to_string(), "n + 1");
  EXPECT_EQ(count_prim_funcs(legal), 0u);

  IRModule unknown = one_op({{"a", prim_sinfo(f32)}, {"b", prim_sinfo(f32)}}, multiply_of);
  EXPECT_EQ(legalize_error(unknown),
            "legalize_ops: @main: binding `out`: multiply: every operand is a Prim and the result "
            "Prim[float32] has no known value (scalar arithmetic has no kernel)");
}

// ---------------------------------------------------------------------------
// Deduplication and names.

TEST(LegalizeOps, IdenticalCallsShareOneKernel) {
  ModuleBuilder mb;
  SymVar n("n");
  SymVar k("k");
  {
    auto f = mb.function("main");
    Var x = f.param("x", tensor_sinfo({n, 4}, f32));
    Var y = f.param("y", tensor_sinfo({n, 4}, f32));
    Var a = f.emit(op::add(x, y));
    Var b = f.emit(op::add(a, x));
    f.ret(b);
  }
  {
    auto f = mb.function("other");  // another function, other variables, the same pattern
    Var x = f.param("x", tensor_sinfo({k, 4}, f32));
    Var a = f.emit(op::add(x, x));
    Var b = f.emit(op::add(a, f.emit(op::expand_dims(x, 1))));  // a different pattern
    f.ret(b);
  }
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  IRModule legal = legalize(*mod);
  EXPECT_EQ(kernel_call(legal, 0).name, "add");
  EXPECT_EQ(kernel_call(legal, 1).name, "add");
  EXPECT_EQ(kernel_call(legal, 0, "other").name, "add");
  EXPECT_EQ(kernel_call(legal, 1, "other").name, "expand_dims");
  EXPECT_EQ(kernel_call(legal, 2, "other").name, "add_1");  // (k, 4) + (k, 1, 4)
  EXPECT_EQ(count_prim_funcs(legal), 3u);
  EXPECT_EQ(op_counts(legal)["add"], 0);
}

TEST(LegalizeOps, KernelNamesAvoidTakenNamesAndExistingKernelsAreReused) {
  ModuleBuilder mb;
  SymVar n("n");
  {
    auto f = mb.function("add");  // a graph function takes the name `add`
    Var x = f.param("x", tensor_sinfo({n}, f32));
    f.ret(f.emit(op::add(x, x)));
  }
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  IRModule legal = legalize(*mod);
  EXPECT_EQ(kernel_call(legal, 0, "add").name, "add_1");
  EXPECT_EQ(std::get<std::string>(kernel_call(legal, 0, "add").kernel->attrs.at("global_symbol")),
            "add_1");
  // Legalizing again changes nothing, and a new call of the same pattern reuses the kernel.
  RELAX_EXPECT_STRUCTURAL_EQ(legal, legalize(legal));
  IRModule more = legal;
  more.add("again", one_op({{"y", tensor_sinfo({n}, f32)}}, [](const std::vector<Var>& v) {
                      return op::add(v[0], v[0]);
                    }).lookup("main"));
  IRModule legal_more = legalize(more);
  EXPECT_EQ(kernel_call(legal_more, 0, "again").name, "add_1");
  EXPECT_EQ(count_prim_funcs(legal_more), 1u);
}

TEST(LegalizeOps, OnlyLegalizableCallsChangeAndBranchesAreRewrittenToo) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 4}, f32));
  Var c = f.param("c", prim_sinfo(DataType::boolean()));
  Var lib = f.emit(op::call_dps_library("my_kernel", {x}, tensor_sinfo({n, 4}, f32)));
  Var r = f.emit_if(
      c, [&]() -> Expr { return f.emit(op::exp(lib)); },
      [&]() -> Expr { return f.emit(op::softmax(f.emit(op::multiply(lib, x)))); });
  f.ret(r);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  IRModule legal = legalize(*mod);
  std::map<std::string, int> counts = op_counts(legal);
  EXPECT_EQ(counts["call_dps_library"], 1);
  EXPECT_EQ(counts["call_tir"], 3);
  EXPECT_EQ(counts["exp"] + counts["multiply"] + counts["softmax"], 0);
  EXPECT_EQ(count_prim_funcs(legal), 3u);
  EXPECT_TRUE(
      struct_info_equal(legal.lookup("main").struct_info(), mod->lookup("main").struct_info()));
}

// ---------------------------------------------------------------------------
// matmul.

TEST(LegalizeOps, MatmulIsOneBlockWithAReductionAndInit) {
  SymVar n("n");
  SymVar m("m");
  IRModule legal = legalize(
      one_op({{"x", tensor_sinfo({n, 8}, f32)}, {"w", tensor_sinfo({8, m}, f32)}}, matmul_of));
  KernelCall kc = kernel_call(legal);
  std::vector<BlockSite> blocks = blocks_of(*kc.kernel);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].block->name, "matmul");
  EXPECT_EQ(iter_types(*blocks[0].block), "SSR");
  EXPECT_EQ(loop_kinds(blocks[0]), "Pss");
  EXPECT_EQ(loop_extents(blocks[0]), "n, m, 8");
  ASSERT_TRUE(blocks[0].block->init.defined());
  EXPECT_THAT(to_text(kc.kernel_expr),
              HasSubstr("C[vi0, vi1] = C[vi0, vi1] + A[vi0, vk0] * B[vk0, vi1]"));
  check_numerically(
      legal, n, [](const Inputs& in) { return matmul_ref(in.arrays.at("x"), in.arrays.at("w")); },
      1e-5, {{m, 5}});
}

// The kernel's buffers share the dims its loops rely on: B's reduction dim and
// C's row and column dims are written as A's and B's, so that the kernel's
// entry check rejects arguments that lack them even when the call's
// annotations claim otherwise (here w is annotated (2, 2) against an x of
// (n, 8), which deduction refuses but a JSON document can write).
TEST(LegalizeOps, MatmulBuffersShareTheDimsTheLoopsRelyOn) {
  SymVar n("n");
  Var x("x", tensor_sinfo({n, 8}, f32));
  Var w("w", tensor_sinfo({2, 2}, f32));
  const StructInfo lie = tensor_sinfo({n, 2}, f32);
  Expr call = make_call(make_op_or_die("matmul"), {x, w}, {}, {}, lie);
  Var out("out", lie);
  Expr body =
      make_seq_expr({BindingBlock{{Binding{out, call, false, StructInfo()}}, false}}, out, lie);
  IRModule mod;
  mod.add("main", make_function({x, w}, body, lie));
  absl::StatusOr<IRModule> legal = transform::legalize_ops(mod);
  ASSERT_TRUE(legal.ok()) << legal.status();
  KernelCall kc = kernel_call(*legal);
  EXPECT_THAT(
      param_texts(*kc.kernel),
      ::testing::ElementsAre("A: (n, 8) float32", "B: (8, 2) float32", "C: (n, 2) float32"));
}

// A kernel the PrimFuncBuilder refuses (a dtype no kernel has, which a module
// built in C++ can carry) is reported without the builder's "file:line" of
// relax's own source.
TEST(LegalizeOps, KernelErrorsNameNoSourceFileOfRelax) {
  const DataType float33{DataType::Code::kFloat, 33, 1};
  const std::string error = legalize_error(
      one_op({{"x", tensor_sinfo({4}, float33)}, {"y", tensor_sinfo({4}, float33)}}, add_of));
  EXPECT_THAT(error, HasSubstr("float33"));
  EXPECT_THAT(error, ::testing::Not(HasSubstr(".cc:")));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("src/")));
}

TEST(LegalizeOps, MatmulBatchedBroadcastAndVectorCases) {
  SymVar n("n");
  struct Case {
    StructInfo x, w;
    std::string iters;
  };
  std::vector<Case> cases = {
      {tensor_sinfo({2, n, 8}, f32), tensor_sinfo({8, 3}, f32), "SSSR"},
      {tensor_sinfo({1, n, 4}, f32), tensor_sinfo({3, 4, 2}, f32), "SSSR"},
      {tensor_sinfo({3, 1, n, 2}, f64), tensor_sinfo({4, 2, 5}, f64), "SSSSR"},
      {tensor_sinfo({8}, f32), tensor_sinfo({8, n}, f32), "SR"},
      {tensor_sinfo({n, 6}, f32), tensor_sinfo({6}, f32), "SR"},
      {tensor_sinfo({n}, f32), tensor_sinfo({n}, f32), "R"},
      {tensor_sinfo({n, 3}, i32), tensor_sinfo({3, 4}, i32), "SSR"},
  };
  for (const Case& c : cases) {
    IRModule legal = legalize(one_op({{"x", c.x}, {"w", c.w}}, matmul_of));
    SCOPED_TRACE(to_text(legal));
    std::vector<BlockSite> blocks = blocks_of(*kernel_call(legal).kernel);
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(iter_types(*blocks[0].block), c.iters);
    // The outermost loop is parallel when it is spatial; a lone reduction stays serial.
    EXPECT_EQ(loop_kinds(blocks[0])[0], c.iters.size() > 1 ? 'P' : 's');
    check_numerically(legal, n, [](const Inputs& in) {
      return matmul_ref(in.arrays.at("x"), in.arrays.at("w"));
    });
  }
}

// ---------------------------------------------------------------------------
// reshape and permute_dims.

// legalize_ops with reshape's copy kernel (what a module that writes in place gets) instead of
// the view its rule gives.
IRModule legalize_copying_reshape(const IRModule& mod) {
  transform::LegalizeRules rules;
  rules.emplace("reshape", [](const CallNode& call, Analyzer&) { return op::reshape_copy_kernel(call); });
  absl::StatusOr<IRModule> out = transform::legalize_ops(mod, rules);
  RELAX_CHECK(out.ok()) << out.status().message();
  return *out;
}

TEST(LegalizeOps, ReshapeIsAViewOfItsInputAndOfAConstantAConstant) {
  SymVar n("n");
  IRModule legal =
      legalize(one_op({{"x", tensor_sinfo({n, 4}, f32)}},
                      [&](const std::vector<Var>& v) { return op::reshape(v[0], {n * 2, -1}); }));
  EXPECT_EQ(count_prim_funcs(legal), 0u);
  EXPECT_THAT(to_text(legal), HasSubstr("out: Tensor[(n * 2, 2), float32] = view(x, shape(n * 2, 2))"));
  // A constant's reshape is the constant with the new shape (the same elements).
  runtime::Tensor data = *runtime::Tensor::empty({2, 3}, DataType::int32());
  for (int i = 0; i < 6; ++i) data.data_as_or_die<int32_t>()[i] = i * 10;
  IRModule folded = legalize(one_op({}, [&](const std::vector<Var>&) {
    return op::reshape(make_constant(data), {3, 2});
  }));
  EXPECT_THAT(to_text(folded), HasSubstr("const(int32, (3, 2), [0, 10, 20, 30, 40, 50])"));
}

TEST(LegalizeOps, ReshapeStaysACopyInAModuleThatWritesInPlace) {
  // y = reshape(x) taken before a call_tir_inplace writes x: a view would see the write.
  absl::StatusOr<IRModule> mod = parse_module(R"(
module {
  func @main(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n * 4,), float32], Tensor[(n, 4), float32])] {
    y: Tensor[(n * 4,), float32] = reshape(x, shape(n * 4))
    z: Tensor[(n, 4), float32] = call_tir_inplace(@twice, (x,), inplace_indices=[0], sinfo=Tensor[(n, 4), float32])
    r: Tuple[(Tensor[(n * 4,), float32], Tensor[(n, 4), float32])] = (y, z)
    return r
  }
  func @other(a: Tensor[(8,), float32]) -> Tensor[(2, 4), float32] {
    b: Tensor[(2, 4), float32] = reshape(a, shape(2, 4))
    return b
  }
  prim_func @twice(X: Buffer[(m, 4), float32]) attrs {global_symbol = "twice"} {
    for i in range(m) {
      for j in range(4) {
        X[i, j] = X[i, j] * 2f32
      }
    }
  }
}
)");
  ASSERT_TRUE(mod.ok()) << mod.status();
  IRModule legal = legalize(*mod);
  EXPECT_EQ(kernel_call(legal).name, "reshape");
  // Every function of the module: a view may be returned to a caller that writes in place.
  EXPECT_EQ(kernel_call(legal, 0, "other").name, "reshape_1");
  EXPECT_THAT(to_text(legal), ::testing::Not(HasSubstr("view(")));
}

TEST(LegalizeOps, ReshapeCopyKernelCopiesThroughTheFlatIndex) {
  SymVar n("n");
  IRModule legal =
      legalize_copying_reshape(one_op({{"x", tensor_sinfo({n, 4}, f32)}},
                      [&](const std::vector<Var>& v) { return op::reshape(v[0], {n * 4}); }));
  KernelCall kc = kernel_call(legal);
  EXPECT_THAT(param_texts(*kc.kernel),
              ::testing::ElementsAre("A: (n, 4) float32", "B: (n * 4,) float32"));
  EXPECT_EQ(kc.call->args.size(), 2u) << "no extra symbolic arguments";
  EXPECT_THAT(to_text(kc.kernel_expr), HasSubstr("B[vi0] = A[floordiv(vi0, 4), floormod(vi0, 4)]"));
  check_numerically(legal, n, [&](const Inputs& in) {
    Array out = in.arrays.at("x");
    out.shape = {out.shape[0] * 4};
    return out;
  });
  // Other ranks and an integer dtype: the data keeps its row-major order.
  IRModule three =
      legalize_copying_reshape(one_op({{"x", tensor_sinfo({2, n, 3}, i32)}}, [&](const std::vector<Var>& v) {
        return op::reshape(v[0], {3, n, 2});
      }));
  check_numerically(three, n, [&](const Inputs& in) {
    Array out = in.arrays.at("x");
    out.shape = {3, out.shape[1], 2};
    return out;
  });
}

TEST(LegalizeOps, AVariableNoBufferDimDefinesIsAnExtraScalarArgument) {
  SymVar n("n");
  // n appears only inside `n * 4` and `n * 2`: the kernel takes it as an int64 scalar.
  IRModule legal =
      legalize_copying_reshape(one_op({{"x", tensor_sinfo({n * 4}, f32)}, {"y", tensor_sinfo({n}, f32)}},
                      [&](const std::vector<Var>& v) {
                        return op::reshape(v[0], {n * 2, 2});
                      }));
  KernelCall kc = kernel_call(legal);
  EXPECT_THAT(param_texts(*kc.kernel),
              ::testing::ElementsAre("A: (n * 4,) float32", "B: (n * 2, 2) float32", "n: int64"));
  ASSERT_EQ(kc.call->args.size(), 3u);
  const auto* extra = kc.call->args[2].as<ShapeExprNode>();
  ASSERT_NE(extra, nullptr);
  ASSERT_EQ(extra->values.size(), 1u);
  EXPECT_TRUE(structural_equal(extra->values[0], n));
  check_numerically(legal, n, [&](const Inputs& in) {
    Array out = in.arrays.at("x");
    out.shape = {out.shape[0] / 2, 2};
    return out;
  });
}

TEST(LegalizeOps, PermuteDims) {
  SymVar n("n");
  SymVar m("m");
  IRModule legal =
      legalize(one_op({{"x", tensor_sinfo({n, m, 4}, f32)}}, [](const std::vector<Var>& v) {
        return op::permute_dims(v[0], std::vector<int64_t>{2, 0, -2});
      }));
  EXPECT_THAT(to_text(kernel_call(legal).kernel_expr),
              HasSubstr("B[vi0, vi1, vi2] = A[vi1, vi2, vi0]"));
  check_numerically(legal, n,
                    [](const Inputs& in) {
                      return permute_ref(in.arrays.at("x"), {2, 0, 1});
                    },
                    0, {{m, 3}});
  IRModule reversed =
      legalize(one_op({{"x", tensor_sinfo({n, 3}, i32)}},
                      [](const std::vector<Var>& v) { return op::permute_dims(v[0]); }));
  check_numerically(
      reversed, n,
      [](const Inputs& in) {
        return permute_ref(in.arrays.at("x"), {1, 0});
      },
      0);
}

// ---------------------------------------------------------------------------
// exp, sum, softmax.

TEST(LegalizeOps, Exp) {
  SymVar n("n");
  for (DataType dtype : {f32, f64}) {
    IRModule legal = legalize(one_op({{"x", tensor_sinfo({n, 3}, dtype)}},
                                     [](const std::vector<Var>& v) { return op::exp(v[0]); }));
    EXPECT_THAT(to_text(kernel_call(legal).kernel_expr),
                HasSubstr("B[vi0, vi1] = exp(A[vi0, vi1])"));
    check_numerically(legal, n, [](const Inputs& in) {
      return map_ref(in.arrays.at("x"), [](double v) { return std::exp(v); });
    });
  }
}

TEST(LegalizeOps, SumIsAReductionBlockWithInit) {
  SymVar n("n");
  SymVar m("m");
  IRModule legal =
      legalize(one_op({{"x", tensor_sinfo({n, m, 4}, f32)}}, [](const std::vector<Var>& v) {
        return op::sum(v[0], std::vector<int64_t>{1});
      }));
  std::vector<BlockSite> blocks = blocks_of(*kernel_call(legal).kernel);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(iter_types(*blocks[0].block), "SSR");
  EXPECT_EQ(loop_kinds(blocks[0]), "Pss");
  EXPECT_EQ(loop_extents(blocks[0]), "n, 4, m");
  EXPECT_TRUE(blocks[0].block->init.defined());
  check_numerically(legal, n,
                    [](const Inputs& in) { return sum_ref(in.arrays.at("x"), {1}, false); }, 1e-5,
                    {{m, 3}});
}

TEST(LegalizeOps, SumAxesKeepdimsAndDtypes) {
  SymVar n("n");
  struct Case {
    StructInfo x;
    std::optional<std::vector<int64_t>> axes;
    bool keepdims;
    std::string iters;
  };
  std::vector<Case> cases = {
      {tensor_sinfo({n, 4}, f32), std::nullopt, false, "RR"},
      {tensor_sinfo({n, 4}, f32), std::nullopt, true, "RR"},
      {tensor_sinfo({3, n, 4}, f64), std::vector<int64_t>{-1, 0}, true, "SRR"},
      {tensor_sinfo({n, 5}, i32), std::vector<int64_t>{0}, false, "SR"},
      {tensor_sinfo({n, 2}, f32), std::vector<int64_t>{}, false, "SS"},  // nothing reduced: a copy
  };
  for (const Case& c : cases) {
    IRModule legal = legalize(one_op({{"x", c.x}}, [&](const std::vector<Var>& v) {
      return op::sum(v[0], c.axes, c.keepdims);
    }));
    SCOPED_TRACE(to_text(legal));
    std::vector<BlockSite> blocks = blocks_of(*kernel_call(legal).kernel);
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(iter_types(*blocks[0].block), c.iters);
    EXPECT_EQ(blocks[0].block->init.defined(), c.iters.find('R') != std::string::npos);
    check_numerically(legal, n, [&](const Inputs& in) {
      const Array& x = in.arrays.at("x");
      if (c.axes && c.axes->empty()) return x;
      return sum_ref(x, c.axes.value_or(std::vector<int64_t>{}), c.keepdims);
    });
  }
}

/// How many exp calls the statements of `kernel` make (each written once per element).
int exp_calls(const PrimFuncNode& kernel) {
  struct Counter : StmtVisitor {
    void visit_value(const SymExpr& value) override {
      if (!value.defined()) return;
      any_subexpr(value, [&](const SymExpr& e) {
        count += e.kind() == SymKind::kCall && e->intrinsic() == Intrinsic::kExp ? 1 : 0;
        return false;
      });
    }
    int count = 0;
  } counter;
  counter.visit_stmt(kernel.body);
  return counter.count;
}

TEST(LegalizeOps, SoftmaxComputesEachExponentialOnceIntoTheOutput) {
  SymVar n("n");
  IRModule legal = legalize(one_op({{"x", tensor_sinfo({n, 16}, f32)}},
                                   [](const std::vector<Var>& v) { return op::softmax(v[0]); }));
  KernelCall kc = kernel_call(legal);
  std::vector<BlockSite> blocks = blocks_of(*kc.kernel);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].block->name, "max");
  EXPECT_EQ(blocks[1].block->name, "exp");
  EXPECT_EQ(blocks[2].block->name, "sum");
  EXPECT_EQ(blocks[3].block->name, "softmax");
  EXPECT_EQ(iter_types(*blocks[0].block), "SR");
  EXPECT_EQ(iter_types(*blocks[1].block), "SS");
  EXPECT_EQ(iter_types(*blocks[2].block), "SR");
  EXPECT_EQ(iter_types(*blocks[3].block), "SS");
  for (const BlockSite& site : blocks) EXPECT_EQ(loop_kinds(site), "Ps");
  const auto* alloc = kc.kernel->body.as<AllocateNode>();
  ASSERT_NE(alloc, nullptr);
  EXPECT_EQ(alloc->buffer.name(), "max_elem");
  EXPECT_EQ(alloc->buffer->scope, BufferScope::kWorkspace);
  const std::string text = to_text(kc.kernel_expr);
  EXPECT_THAT(text, HasSubstr("max_elem[vi0] = -inf_f32"));
  // One exponential per element, summed from the output; the output scaled
  // by the reciprocal of the row's sum (no division per element).
  EXPECT_EQ(exp_calls(*kc.kernel), 1) << text;
  EXPECT_THAT(text, HasSubstr("exp_sum[vi0_2] = exp_sum[vi0_2] + B[vi0_2, vk0_1]"));
  EXPECT_THAT(text, HasSubstr("B[vi0_3, vi1_1] = B[vi0_3, vi1_1] * (1f32 / exp_sum[vi0_3])"));
  check_numerically(legal, n, [](const Inputs& in) { return softmax_ref(in.arrays.at("x"), -1); });
}

TEST(LegalizeOps, HalfPrecisionSoftmaxSumsInFloat32AndRoundsOnce) {
  // The output cannot hold unrounded exponentials: they are computed twice,
  // in float32, the sum in a float32 workspace.
  SymVar n("n");
  for (DataType dtype : {DataType::float16(), DataType::bfloat16()}) {
    IRModule legal = legalize(one_op({{"x", tensor_sinfo({n, 16}, dtype)}},
                                     [](const std::vector<Var>& v) { return op::softmax(v[0]); }));
    KernelCall kc = kernel_call(legal);
    const std::string text = to_text(kc.kernel_expr);
    std::vector<BlockSite> blocks = blocks_of(*kc.kernel);
    ASSERT_EQ(blocks.size(), 3u) << text;
    EXPECT_EQ(blocks[1].block->name, "sum");
    EXPECT_EQ(exp_calls(*kc.kernel), 2) << text;
    EXPECT_THAT(text, HasSubstr("exp_sum: Buffer[(n,), float32, workspace]"));
  }
}

TEST(LegalizeOps, SoftmaxOverOtherAxesAndRanks) {
  SymVar n("n");
  struct Case {
    StructInfo x;
    int64_t axis;
  };
  std::vector<Case> cases = {
      {tensor_sinfo({n, 5}, f32), 0},
      {tensor_sinfo({n}, f64), -1},
      {tensor_sinfo({2, n, 3}, f32), 1},
  };
  for (const Case& c : cases) {
    IRModule legal = legalize(
        one_op({{"x", c.x}}, [&](const std::vector<Var>& v) { return op::softmax(v[0], c.axis); }));
    SCOPED_TRACE(to_text(legal));
    check_numerically(legal, n,
                      [&](const Inputs& in) { return softmax_ref(in.arrays.at("x"), c.axis); });
  }
}

TEST(LegalizeOps, SoftmaxIsStableForLargeInputs) {
  SymVar n("n");
  IRModule legal = legalize(one_op({{"x", tensor_sinfo({n}, f32)}},
                                   [](const std::vector<Var>& v) { return op::softmax(v[0]); }));
  SymVarMap<int64_t> sizes{{n, 3}};
  Inputs in;
  in.arrays.emplace("x", Array({3}));
  in.arrays.at("x").data = {1000.0, 1001.0, 999.0};  // exp(1000) overflows float32
  Array out = run_kernel(legal, in, sizes);
  expect_close(out, softmax_ref(in.arrays.at("x"), 0));
}

// ---------------------------------------------------------------------------
// Text form and errors.

TEST(LegalizeOps, LegalizedModulesPrintAndParseBack) {
  SymVar n("n");
  SymVar m("m");
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 8}, f32));
  Var w = f.param("w", tensor_sinfo({8, m}, f32));
  Var y = f.param("y", tensor_sinfo({n * 8}, f32));
  Var h = f.emit(op::matmul(x, w));
  Var s = f.emit(op::softmax(op::add(h, make_prim_value(1))));
  Var t = f.emit(op::sum(op::permute_dims(s), std::vector<int64_t>{0}, true));
  Var r = f.emit(op::reshape(y, {n * 2, 4}));
  f.ret(make_tuple({t, r}));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  IRModule legal = legalize(*mod);
  absl::StatusOr<IRModule> parsed = parse_module(to_text(legal));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << to_text(legal);
  RELAX_EXPECT_STRUCTURAL_EQ(legal, *parsed);
}

TEST(LegalizeOps, RankOnlyAndUnknownOperandsAreErrorsNamingTheBinding) {
  SymVar n("n");
  IRModule rank_only = one_op({{"x", tensor_sinfo_rank(2, f32)}},
                              [](const std::vector<Var>& v) { return op::add(v[0], v[0]); });
  EXPECT_EQ(legalize_error(rank_only),
            "legalize_ops: @main: binding `out`: add: argument 0 (lhs): expected a Tensor of "
            "known shape, got Tensor[ndim=2, float32] (rank-only and unknown shapes are not "
            "legalized yet)");
  IRModule unknown_dtype = one_op({{"x", tensor_sinfo({n}, std::nullopt)}},
                                  [](const std::vector<Var>& v) { return op::exp(v[0]); });
  EXPECT_EQ(legalize_error(unknown_dtype),
            "legalize_ops: @main: binding `out`: exp: argument 0 (x): expected a Tensor of "
            "known dtype, got Tensor[(n,), ?]");
}

TEST(LegalizeOps, EveryFailingCallIsReported) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo_rank(kUnknownNDim, f32));
  Var b = f.param("b", tensor_sinfo({n}, std::nullopt));
  Var y = f.param("y", tensor_sinfo({n}, f32));
  Var a = f.emit(op::matmul(x, x), "a");
  Var c = f.emit(op::exp(b), "c");
  Var d = f.emit(op::multiply(y, y), "d");  // fine
  f.ret(make_tuple({a, c, d}));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  EXPECT_EQ(legalize_error(*mod),
            "legalize_ops: @main: binding `a`: matmul: argument 0 (lhs): expected a Tensor of "
            "known shape, got Tensor[ndim=?, float32] (rank-only and unknown shapes are not "
            "legalized yet)\n"
            "legalize_ops: @main: binding `c`: exp: argument 0 (x): expected a Tensor of known "
            "dtype, got Tensor[(n,), ?]");
}

}  // namespace
}  // namespace relax
