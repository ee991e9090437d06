// Normalisation: cross-function deduction, tuples, If joins, SeqExpr scoping,
// leaves, and with_struct_info.
#include "relax/ir/normalize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "relax/ir/module.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

using ::testing::StartsWith;

const DataType kNormalizeF32 = DataType::float32();
const DataType i64 = DataType::int64();

class NormalizeTest : public ::testing::Test {
 protected:
  // The annotation of normalize(e) as text, or "error: <message>".
  std::string deduce(const Expr& e) {
    DeduceContext ctx{analyzer, module};
    absl::StatusOr<Expr> result = normalize(e, ctx);
    if (!result.ok()) return "error: " + std::string(result.status().message());
    return result->struct_info().to_string();
  }

  // A variable holding a function annotated `sinfo`, called `f`.
  static Var function(StructInfo sinfo) { return Var("f", std::move(sinfo)); }

  Analyzer analyzer;
  const IRModule* module = nullptr;
  SymVar n{"n"};
  SymVar m{"m"};
};

// ---------------------------------------------------------------------------
// Cross-function deduction.

TEST_F(NormalizeTest, CallSolvesCalleeVarsFromConstants) {
  Var f = function(func_sinfo({tensor_sinfo({n, m}, kNormalizeF32)}, tensor_sinfo({m + 1, n}, kNormalizeF32)));
  Var x("x", tensor_sinfo({10, 11}, kNormalizeF32));
  EXPECT_EQ(deduce(make_call(f, {x})), "Tensor[(12, 10), float32]");
}

TEST_F(NormalizeTest, CallSolvesCalleeVarsFromCallerVars) {
  Var f = function(func_sinfo({tensor_sinfo({n, m}, kNormalizeF32)}, tensor_sinfo({m + 1, n}, kNormalizeF32)));
  SymVar n0("n0");
  SymVar m0("m0");
  Var x("x", tensor_sinfo({n0, m0}, kNormalizeF32));
  EXPECT_EQ(deduce(make_call(f, {x})), "Tensor[(m0 + 1, n0), float32]");
}

TEST_F(NormalizeTest, CallWithRankOnlyArgumentErasesToRank) {
  Var f = function(func_sinfo({tensor_sinfo({n, m}, kNormalizeF32)}, tensor_sinfo({m + 1, n}, kNormalizeF32)));
  Var x("x", tensor_sinfo_rank(2, kNormalizeF32));
  EXPECT_EQ(deduce(make_call(f, {x})), "Tensor[ndim=2, float32]");
}

TEST_F(NormalizeTest, CallArgumentThatCanNeverFitIsAnError) {
  Var f = function(func_sinfo({tensor_sinfo({n, n}, kNormalizeF32)}, tensor_sinfo({n}, kNormalizeF32)));
  EXPECT_EQ(deduce(make_call(f, {Var("x", tensor_sinfo({3, 4}, kNormalizeF32))})),
            "error: call to `f`: argument 0: expected Tensor[(3, 3), float32], got "
            "Tensor[(3, 4), float32]");
  EXPECT_EQ(deduce(make_call(f, {Var("x", tensor_sinfo({3, 3}, DataType::int32()))})),
            "error: call to `f`: argument 0: expected Tensor[(3, 3), float32], got "
            "Tensor[(3, 3), int32]");
  EXPECT_EQ(deduce(make_call(f, {})), "error: call to `f`: expected 1 arguments, got 0");
}

TEST_F(NormalizeTest, CallArgumentThatMayFitIsAccepted) {
  // Two parameters share n: the second argument is checked at run time.
  Var f = function(
      func_sinfo({tensor_sinfo({n}, kNormalizeF32), tensor_sinfo({n}, kNormalizeF32)}, tensor_sinfo({n * 2}, kNormalizeF32)));
  SymVar a("a");
  SymVar b("b");
  EXPECT_EQ(
      deduce(make_call(f, {Var("x", tensor_sinfo({a}, kNormalizeF32)), Var("y", tensor_sinfo({b}, kNormalizeF32))})),
      "Tensor[(a * 2,), float32]");
}

TEST_F(NormalizeTest, CompoundParamDimsAreCheckedOnceABareDimBindsTheirVariable) {
  Var g = function(
      func_sinfo({tensor_sinfo({n * 2}, kNormalizeF32), tensor_sinfo({n}, kNormalizeF32)}, tensor_sinfo({n + 1}, kNormalizeF32)));
  auto t = [](SymExpr d) { return Var("t", tensor_sinfo({d}, DataType::float32())); };
  EXPECT_EQ(deduce(make_call(g, {t(10), t(5)})), "Tensor[(6,), float32]");
  EXPECT_EQ(deduce(make_call(g, {t(10), t(4)})),
            "error: call to `f`: argument 0: expected Tensor[(8,), float32], got "
            "Tensor[(10,), float32]");
  // Alone, n * 2 == 10 binds n = 5 (more in solve_dims_test.cc); n * n == 9 binds nothing.
  Var h = function(func_sinfo({tensor_sinfo({n * 2}, kNormalizeF32)}, tensor_sinfo({n}, kNormalizeF32)));
  EXPECT_EQ(deduce(make_call(h, {t(10)})), "Tensor[(5,), float32]");
  Var sq = function(func_sinfo({tensor_sinfo({n * n}, kNormalizeF32)}, tensor_sinfo({n}, kNormalizeF32)));
  EXPECT_EQ(deduce(make_call(sq, {t(9)})), "Tensor[ndim=1, float32]");
}

TEST_F(NormalizeTest, CallThroughTuples) {
  StructInfo param = tuple_sinfo({tensor_sinfo({n}, kNormalizeF32), tensor_sinfo({m, 2}, kNormalizeF32)});
  Var f = function(func_sinfo({param}, tuple_sinfo({tensor_sinfo({m, n}, kNormalizeF32)})));
  Expr arg = make_tuple({Var("a", tensor_sinfo({3}, kNormalizeF32)), Var("b", tensor_sinfo({7, 2}, kNormalizeF32))});
  EXPECT_EQ(deduce(make_call(f, {arg})), "Tuple[(Tensor[(7, 3), float32],)]");
}

TEST_F(NormalizeTest, CallWithShapeAndPrimArguments) {
  SymVar k("k");
  Var f = function(
      func_sinfo({shape_sinfo({n, m}), prim_sinfo(i64, k)}, tensor_sinfo({n * m, k}, kNormalizeF32)));
  EXPECT_EQ(deduce(make_call(f, {make_shape_expr({3, 4}), make_prim_value(7)})),
            "Tensor[(12, 7), float32]");
  SymVar q("q");
  EXPECT_EQ(deduce(make_call(f, {make_shape_expr({q, 4}), Var("p", prim_sinfo(i64))})),
            "Tensor[ndim=2, float32]");
  EXPECT_EQ(deduce(make_call(f, {make_shape_expr({q, 4}), make_prim_value(q)})),
            "Tensor[(q * 4, q), float32]");
}

TEST_F(NormalizeTest, CallOfGlobalVarLooksUpTheModule) {
  IRModule mod;
  Var p("x", tensor_sinfo({n}, kNormalizeF32));
  Expr body = make_seq_expr({}, p, p.struct_info());
  mod.add("double_len", make_function({p}, body, tensor_sinfo({n * 2}, kNormalizeF32)));
  module = &mod;
  EXPECT_EQ(deduce(make_call(make_global_var("double_len"), {Var("a", tensor_sinfo({8}, kNormalizeF32))})),
            "Tensor[(16,), float32]");
  EXPECT_EQ(deduce(make_call(make_global_var("missing"), {})),
            "error: no function named `missing` in the module");
}

TEST_F(NormalizeTest, OpaqueAndNonFunctionCallees) {
  Expr ext = make_extern_func("lib_fn", opaque_func_sinfo(tensor_sinfo({4}, kNormalizeF32)));
  EXPECT_EQ(deduce(make_call(ext, {Var("a", object_sinfo())})), "Tensor[(4,), float32]");
  EXPECT_EQ(deduce(make_call(make_extern_func("untyped"), {})), "Object");
  Var x("x", tensor_sinfo({4}, kNormalizeF32));
  EXPECT_EQ(deduce(make_call(x, {})),
            "error: call to `x`: the callee is not a function, it is Tensor[(4,), float32]");
}

// ---------------------------------------------------------------------------
// Tuples, leaves, nesting.

TEST_F(NormalizeTest, TuplesAndTupleGetItem) {
  Var a("a", tensor_sinfo({n}, kNormalizeF32));
  Var b("b", prim_sinfo(i64));
  Expr t = make_tuple({a, b});
  EXPECT_EQ(deduce(t), "Tuple[(Tensor[(n,), float32], Prim[int64])]");
  EXPECT_EQ(deduce(make_tuple_get_item(t, 1)), "Prim[int64]");
  EXPECT_EQ(deduce(make_tuple_get_item(t, 2)),
            "error: TupleGetItem: index 2 is out of range for Tuple[(Tensor[(n,), float32], "
            "Prim[int64])] (2 fields)");
  EXPECT_EQ(deduce(make_tuple_get_item(a, 0)),
            "error: TupleGetItem: expected a Tuple, got Tensor[(n,), float32]");
  EXPECT_EQ(deduce(make_tuple_get_item(Var("o", object_sinfo()), 3)), "Object");
}

TEST_F(NormalizeTest, NestedExpressionsAreNormalisedBottomUp) {
  Var x("x", tensor_sinfo({n, 4}, kNormalizeF32));
  DeduceContext ctx{analyzer, nullptr};
  absl::StatusOr<Expr> e = normalize(make_tuple({op::add(x, x), make_shape_expr({n})}), ctx);
  ASSERT_TRUE(e.ok()) << e.status();
  const auto* tuple = e->as<TupleNode>();
  ASSERT_NE(tuple, nullptr);
  EXPECT_EQ(tuple->fields[0].struct_info().to_string(), "Tensor[(n, 4), float32]");
  EXPECT_EQ(e->struct_info().to_string(), "Tuple[(Tensor[(n, 4), float32], Shape[(n,)])]");
  // An annotated expression is returned as it is: nothing is deduced twice.
  absl::StatusOr<Expr> again = normalize(*e, ctx);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->same_as(*e));
}

TEST_F(NormalizeTest, NestedErrorsPropagate) {
  Var x("x", tensor_sinfo({n, 4}, kNormalizeF32));
  Var y("y", tensor_sinfo({n, 5}, kNormalizeF32));
  EXPECT_THAT(deduce(op::multiply(op::add(x, y), x)),
              StartsWith("error: add: cannot broadcast dim 1: `4` vs `5`"));
}

TEST_F(NormalizeTest, Leaves) {
  EXPECT_EQ(deduce(make_shape_expr({n, 4})), "Shape[(n, 4)]");
  EXPECT_EQ(deduce(make_prim_value(n + 1)), "Prim[int64, n + 1]");
  EXPECT_EQ(deduce(make_string_imm("hi")), "Object");
  EXPECT_EQ(deduce(make_op_or_die("add")), "Func[opaque -> Object]");
}

// ---------------------------------------------------------------------------
// If and SeqExpr.

Expr seq_of(Expr body) { return make_seq_expr({}, std::move(body)); }

TEST_F(NormalizeTest, IfJoinsItsBranches) {
  Var c("c", prim_sinfo(DataType::boolean()));
  Var a("a", tensor_sinfo({n, 4}, kNormalizeF32));
  Var b("b", tensor_sinfo({m, 4}, kNormalizeF32));
  EXPECT_EQ(deduce(make_if(c, seq_of(a), seq_of(a))), "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce(make_if(c, seq_of(a), seq_of(b))), "Tensor[ndim=2, float32]");
  Var s("s", shape_sinfo({n}));
  EXPECT_EQ(deduce(make_if(c, seq_of(a), seq_of(s))), "Object");
  Expr t1 = make_tuple({a, a});
  Expr t2 = make_tuple({a, b});
  EXPECT_EQ(deduce(make_if(c, seq_of(t1), seq_of(t2))),
            "Tuple[(Tensor[(n, 4), float32], Tensor[ndim=2, float32])]");
}

TEST_F(NormalizeTest, IfConditionMustBeABoolean) {
  Var a("a", tensor_sinfo({n}, kNormalizeF32));
  EXPECT_EQ(deduce(make_if(a, seq_of(a), seq_of(a))),
            "error: If: condition: expected Prim[bool] or a one-element bool tensor, got Tensor[(n,), float32]");
}

TEST_F(NormalizeTest, SeqExprErasesVariablesItsMatchCastsDefine) {
  Var x("x", tensor_sinfo_rank(1, kNormalizeF32));
  StructInfo pattern = tensor_sinfo({m}, kNormalizeF32);
  Var y("y", pattern);
  BindingBlock block{{Binding{y, x, true, pattern}}, false};
  Expr seq = make_seq_expr({block}, y);
  EXPECT_EQ(deduce(seq), "Tensor[ndim=1, float32]");
  // A match_cast that re-checks a variable in scope keeps it.
  DeduceContext ctx{analyzer, nullptr, [&](const SymVar& v) { return v.id() == m.id(); }};
  absl::StatusOr<Expr> kept = normalize(seq, ctx);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->struct_info().to_string(), "Tensor[(m,), float32]");
}

TEST_F(NormalizeTest, NestedSeqKeepsWhatTheEnclosingSeqDefines) {
  Var c("c", prim_sinfo(DataType::boolean()));
  Var x("x", tensor_sinfo_rank(1, kNormalizeF32));
  StructInfo pattern = tensor_sinfo({m}, kNormalizeF32);
  Var y("y", pattern);
  // if c { y } else { y } inside a SeqExpr whose match_cast defines m.
  Expr inner_if = make_if(c, seq_of(y), seq_of(y));
  BindingBlock block{{Binding{y, x, true, pattern}}, false};
  Expr seq = make_seq_expr({block}, inner_if);
  DeduceContext ctx{analyzer, nullptr};
  absl::StatusOr<Expr> e = normalize(seq, ctx);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->as<SeqExprNode>()->body.struct_info().to_string(), "Tensor[(m,), float32]");
  EXPECT_EQ(e->struct_info().to_string(), "Tensor[ndim=1, float32]");
}

TEST_F(NormalizeTest, FunctionAnnotation) {
  Var p("x", tensor_sinfo({n}, kNormalizeF32));
  Expr fn = make_function({p}, seq_of(p), tensor_sinfo({n}, kNormalizeF32), false);
  EXPECT_EQ(fn.struct_info().to_string(),
            "Func[(Tensor[(n,), float32]) -> Tensor[(n,), float32], "
            "impure]");
  DeduceContext ctx{analyzer, nullptr};
  absl::StatusOr<StructInfo> s = deduce_struct_info(fn, ctx);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(struct_info_equal(*s, fn.struct_info()));
}

TEST_F(NormalizeTest, WithStructInfoCopiesTheNode) {
  Var x("x", tensor_sinfo({n}, kNormalizeF32));
  Expr call = op::add(x, x);
  Expr annotated = with_struct_info(call, tensor_sinfo({n}, kNormalizeF32));
  ASSERT_NE(annotated.as<CallNode>(), nullptr);
  EXPECT_TRUE(annotated.as<CallNode>()->args[0].same_as(x));
  EXPECT_EQ(annotated.struct_info().to_string(), "Tensor[(n,), float32]");
  EXPECT_FALSE(call.struct_info().defined()) << "the original is immutable";
  Expr renamed = with_struct_info(x, tensor_sinfo_rank(1, kNormalizeF32));
  EXPECT_FALSE(renamed.same_as(x)) << "a Var with another annotation is another variable";
  EXPECT_EQ(renamed.as<VarNode>()->name_hint, "x");
}

}  // namespace
}  // namespace relax
