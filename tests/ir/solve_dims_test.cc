// Symbolic variables defined by solvable parameter dims (the rule of
// defined_sym_vars in relax/ir/struct_info.h): what a parameter list or a
// match_cast pattern defines, call deduction solving through such dims, and a
// function using such a variable through the builder, the printer and parser,
// JSON, well-formedness, structural equality and the mutator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relax/ir/builder.h"
#include "relax/ir/json.h"
#include "relax/ir/normalize.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/testing.h"
#include "relax/ir/visitor.h"
#include "relax/ir/well_formed.h"
#include "relax/support/check.h"

namespace relax {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const DataType kSolveF32 = DataType::float32();

std::vector<std::string> names(const std::vector<SymVar>& vars) {
  std::vector<std::string> out;
  for (const SymVar& v : vars) out.push_back(v.name());
  return out;
}

// ---------------------------------------------------------------------------
// The definition rule.

TEST(DefinedSymVars, ASolvableDimDefinesItsVariable) {
  SymVar n("n");
  EXPECT_THAT(names(defined_sym_vars(tensor_sinfo({n * 2}, kSolveF32))), ElementsAre("n"));
  EXPECT_THAT(names(defined_sym_vars(shape_sinfo({(n + 1) * 4}))), ElementsAre("n"));
  EXPECT_THAT(names(defined_sym_vars(tensor_sinfo({SymExpr(10) - n}, kSolveF32))), ElementsAre("n"));
}

TEST(DefinedSymVars, AnUnsolvableDimDefinesNothing) {
  SymVar n("n");
  SymVar m("m");
  EXPECT_THAT(defined_sym_vars(tensor_sinfo({n * n}, kSolveF32)), IsEmpty());
  EXPECT_THAT(defined_sym_vars(tensor_sinfo({floordiv(n, 2)}, kSolveF32)), IsEmpty());
  EXPECT_THAT(defined_sym_vars(tensor_sinfo({n + m}, kSolveF32)), IsEmpty());
  // A Prim value that is an expression is only a use.
  EXPECT_THAT(defined_sym_vars(prim_sinfo(DataType::int64(), n * 2)), IsEmpty());
}

TEST(DefinedSymVars, BareDimsComeFirstThenSolvedOnesUntilNothingChanges) {
  SymVar n("n");
  SymVar m("m");
  SymVar k("k");
  // Only m * 3 has one unknown at first; m then completes k * 2 + m, and k
  // completes n + k.
  std::vector<StructInfo> params = {tensor_sinfo({n + k, k * 2 + m}, kSolveF32),
                                    tensor_sinfo({m * 3, 4}, kSolveF32)};
  EXPECT_THAT(names(defined_sym_vars(params)), ElementsAre("m", "k", "n"));
  // A bare dim anywhere in the list wins over solving: here n is bare in y.
  std::vector<StructInfo> with_bare = {tensor_sinfo({n * 2}, kSolveF32), tensor_sinfo({n}, kSolveF32)};
  EXPECT_THAT(names(defined_sym_vars(with_bare)), ElementsAre("n"));
}

TEST(DefinedSymVars, ThroughTuplesButNotFuncAnnotations) {
  SymVar n("n");
  SymVar p("p");
  StructInfo t = tuple_sinfo({tensor_sinfo({4}, kSolveF32), shape_sinfo({n * 8 + 1})});
  EXPECT_THAT(names(defined_sym_vars(t)), ElementsAre("n"));
  StructInfo fn = func_sinfo({tensor_sinfo({p * 2}, kSolveF32)}, tensor_sinfo({p}, kSolveF32));
  EXPECT_THAT(defined_sym_vars(fn), IsEmpty());
  // The Func annotation's own parameters define p, so it uses nothing outside.
  EXPECT_THAT(used_sym_vars(fn), IsEmpty());
  EXPECT_THAT(names(used_sym_vars(func_sinfo({tensor_sinfo({p * p}, kSolveF32)}, object_sinfo()))),
              ElementsAre("p"));
}

TEST(DefinedSymVars, AMatchCastPatternSeesTheEnclosingScope) {
  SymVar m("m");
  SymVar k("k");
  StructInfo pattern = tensor_sinfo({m + k * 4}, kSolveF32);
  EXPECT_THAT(defined_sym_vars(pattern), IsEmpty());
  auto m_known = [&](const SymVar& v) { return v.id() == m.id(); };
  EXPECT_THAT(names(defined_sym_vars({pattern}, m_known)), ElementsAre("k"));
  // Everything it could define in some scope.
  EXPECT_THAT(names(definable_sym_vars(pattern)), ElementsAre("m", "k"));
  // A bare dim of a pattern is listed even when the scope defines it (it is checked).
  EXPECT_THAT(names(defined_sym_vars({tensor_sinfo({m}, kSolveF32)}, m_known)), ElementsAre("m"));
}

TEST(DefinedSymVars, AFuncAnnotationsParametersSolveTogether) {
  // Func[(Tensor[(p * 2 + q,)], Tensor[(q * 3,)]) -> Tensor[(p, q)]]: q's dim gives q,
  // which lets the first dim give p.
  SymVar p("p");
  SymVar q("q");
  StructInfo fn = func_sinfo({tensor_sinfo({p * 2 + q}, kSolveF32), tensor_sinfo({q * 3}, kSolveF32)},
                             tensor_sinfo({p, q}, kSolveF32));
  EXPECT_THAT(used_sym_vars(fn), IsEmpty());
  StructInfo erased = erase_to_scope(fn, [](const SymVar&) { return false; });
  EXPECT_TRUE(erased.same_as(fn)) << erased;
}

// ---------------------------------------------------------------------------
// Call deduction.

class SolveCallTest : public ::testing::Test {
 protected:
  // The annotation of a call of a function annotated `callee` with arguments
  // annotated `args`, or "error: <message>".
  std::string call(const StructInfo& callee, const std::vector<StructInfo>& args) {
    std::vector<Expr> values;
    for (size_t i = 0; i < args.size(); ++i) values.push_back(Var("a" + std::to_string(i), args[i]));
    DeduceContext ctx{analyzer};
    absl::StatusOr<Expr> result = normalize(make_call(Var("f", callee), values), ctx);
    if (!result.ok()) return "error: " + std::string(result.status().message());
    return result->struct_info().to_string();
  }

  Analyzer analyzer;
  SymVar n{"n"};
  SymVar m{"m"};
  // f(x: Tensor[(n * 2,)]) -> Tensor[(n,)]
  StructInfo halve = func_sinfo({tensor_sinfo({n * 2}, kSolveF32)}, tensor_sinfo({n}, kSolveF32));
};

TEST_F(SolveCallTest, ConstantArgumentDimSolves) {
  EXPECT_EQ(call(halve, {tensor_sinfo({10}, kSolveF32)}), "Tensor[(5,), float32]");
}

TEST_F(SolveCallTest, SymbolicArgumentDimSolvesWhenDivisibilityIsProven) {
  SymVar m0("m0");
  EXPECT_EQ(call(halve, {tensor_sinfo({m0 * 2}, kSolveF32)}), "Tensor[(m0,), float32]");
  EXPECT_EQ(call(halve, {tensor_sinfo({SymExpr(2) * m0 + m0 * 4}, kSolveF32)}),
            "Tensor[(m0 * 3,), float32]");
  // n * 4 against m0 * 8 + 4: n = m0 * 2 + 1.
  StructInfo quarter = func_sinfo({tensor_sinfo({n * 4}, kSolveF32)}, tensor_sinfo({n}, kSolveF32));
  EXPECT_EQ(call(quarter, {tensor_sinfo({m0 * 8 + 4}, kSolveF32)}), "Tensor[(m0 * 2 + 1,), float32]");
}

TEST_F(SolveCallTest, IndivisibleConstantIsAnError) {
  EXPECT_EQ(call(halve, {tensor_sinfo({7}, kSolveF32)}),
            "error: call to `f`: argument 0, dim 0: expected n * 2, got 7 (no integer n solves "
            "n * 2 == 7)");
}

TEST_F(SolveCallTest, UndecidedSymbolicDimErasesTheResult) {
  SymVar k("k");
  EXPECT_EQ(call(halve, {tensor_sinfo({k}, kSolveF32)}), "Tensor[ndim=1, float32]");
  EXPECT_EQ(call(halve, {tensor_sinfo({k * 2 + 1}, kSolveF32)}), "Tensor[ndim=1, float32]");
  EXPECT_EQ(call(halve, {tensor_sinfo_rank(1, kSolveF32)}), "Tensor[ndim=1, float32]");
}

TEST_F(SolveCallTest, ConstantsAndNegativeCoefficients) {
  // f(x: Tensor[(n * 3 + 2, 10 - m)]) -> Tensor[(n, m)]
  StructInfo f = func_sinfo({tensor_sinfo({n * 3 + 2, SymExpr(10) - m}, kSolveF32)},
                            tensor_sinfo({n, m}, kSolveF32));
  EXPECT_EQ(call(f, {tensor_sinfo({14, 4}, kSolveF32)}), "Tensor[(4, 6), float32]");
  EXPECT_EQ(call(f, {tensor_sinfo({15, 4}, kSolveF32)}),
            "error: call to `f`: argument 0, dim 0: expected n * 3 + 2, got 15 (no integer n "
            "solves n * 3 + 2 == 15)");
}

TEST_F(SolveCallTest, OneSolvedVariableCompletesAnotherDim) {
  // f(x: Tensor[(n * 2 + m,)], y: Tensor[(m * 3,)]) -> Tensor[(n, m)]: x's dim has
  // two unknowns until y's gives m.
  StructInfo f = func_sinfo({tensor_sinfo({n * 2 + m}, kSolveF32), tensor_sinfo({m * 3}, kSolveF32)},
                            tensor_sinfo({n, m}, kSolveF32));
  EXPECT_EQ(call(f, {tensor_sinfo({11}, kSolveF32), tensor_sinfo({9}, kSolveF32)}),
            "Tensor[(4, 3), float32]");
  SymVar a("a");
  EXPECT_EQ(call(f, {tensor_sinfo({a * 2 + 5}, kSolveF32), tensor_sinfo({15}, kSolveF32)}),
            "Tensor[(a, 5), float32]");
}

TEST_F(SolveCallTest, BareDimsBindFirstAndSolvedDimsAreThenChecked) {
  // n is bound by y's bare dim; x's n * 2 is then only checked.
  StructInfo f = func_sinfo({tensor_sinfo({n * 2}, kSolveF32), tensor_sinfo({n}, kSolveF32)},
                            tensor_sinfo({n}, kSolveF32));
  EXPECT_EQ(call(f, {tensor_sinfo({12}, kSolveF32), tensor_sinfo({6}, kSolveF32)}), "Tensor[(6,), float32]");
  EXPECT_EQ(call(f, {tensor_sinfo({10}, kSolveF32), tensor_sinfo({6}, kSolveF32)}),
            "error: call to `f`: argument 0: expected Tensor[(12,), float32], got "
            "Tensor[(10,), float32]");
}

TEST_F(SolveCallTest, SolvesThroughTuples) {
  // f(t: Tuple[(Tensor[(4,)], Tensor[(n * 2 + 1,)])]) -> Tensor[(n,)]
  StructInfo f = func_sinfo(
      {tuple_sinfo({tensor_sinfo({4}, kSolveF32), tensor_sinfo({n * 2 + 1}, kSolveF32)})},
      tensor_sinfo({n}, kSolveF32));
  EXPECT_EQ(call(f, {tuple_sinfo({tensor_sinfo({4}, kSolveF32), tensor_sinfo({9}, kSolveF32)})}),
            "Tensor[(4,), float32]");
  EXPECT_EQ(call(f, {tuple_sinfo({tensor_sinfo({4}, kSolveF32), tensor_sinfo({8}, kSolveF32)})}),
            "error: call to `f`: argument 0, field 1, dim 0: expected n * 2 + 1, got 8 (no "
            "integer n solves n * 2 + 1 == 8)");
}

TEST_F(SolveCallTest, SolvesThroughAShapeParameter) {
  // f(s: Shape[(n * 4, m)]) -> Shape[(m, n)]
  StructInfo f = func_sinfo({shape_sinfo({n * 4, m})}, shape_sinfo({m, n}));
  EXPECT_EQ(call(f, {shape_sinfo({16, 3})}), "Shape[(3, 4)]");
  SymVar b("b");
  EXPECT_EQ(call(f, {shape_sinfo({b * 4, b})}), "Shape[(b, b)]");
  EXPECT_THAT(call(f, {shape_sinfo({6, 3})}), HasSubstr("argument 0, dim 0: expected n * 4, got 6"));
}

// ---------------------------------------------------------------------------
// A function using a solved variable, end to end.

// f(x: Tensor[(n * 2,), f32]) -> Tensor[(n, 2), f32] { y = reshape(x, (n, 2)); return y },
// its variable named `var_name`.
absl::StatusOr<IRModule> halving_module(const std::string& var_name = "n") {
  ModuleBuilder mb;
  SymVar n(var_name);
  auto f = mb.function("f");
  Var x = f.param("x", tensor_sinfo({n * 2}, kSolveF32));
  Var y = f.emit(op::reshape(x, std::vector<SymExpr>{n, 2}), "y");
  f.ret(y);
  return mb.build();
}

TEST(SolvedDimFunction, BuildsWithTheVariableInScope) {
  absl::StatusOr<IRModule> mod = halving_module();
  ASSERT_TRUE(mod.ok()) << mod.status();
  const auto* f = mod->lookup("f").as<FunctionNode>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->ret.to_string(), "Tensor[(n, 2), float32]");
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
}

TEST(SolvedDimFunction, PrintsParsesBackAndRoundTripsThroughJson) {
  absl::StatusOr<IRModule> mod = halving_module();
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string text = to_text(*mod);
  EXPECT_THAT(text, HasSubstr("func @f(x: Tensor[(n * 2,), float32]) -> Tensor[(n, 2), float32]"));
  absl::StatusOr<IRModule> parsed = parse_module(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\nin:\n" << text;
  RELAX_EXPECT_STRUCTURAL_EQ(*mod, *parsed);
  EXPECT_EQ(structural_hash(*mod), structural_hash(*parsed));
  EXPECT_EQ(to_text(*parsed), text);
  EXPECT_TRUE(well_formed(*parsed).ok()) << well_formed(*parsed);

  absl::StatusOr<IRModule> back = from_json(to_json(*mod));
  ASSERT_TRUE(back.ok()) << back.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*mod, *back);
  EXPECT_TRUE(well_formed(*back).ok()) << well_formed(*back);
}

TEST(SolvedDimFunction, FunctionsDifferingInTheSolvedVariableNameAreEqual) {
  absl::StatusOr<IRModule> a = halving_module("n");
  absl::StatusOr<IRModule> b = halving_module("p");
  ASSERT_TRUE(a.ok() && b.ok());
  RELAX_EXPECT_STRUCTURAL_EQ(*a, *b);
  EXPECT_EQ(structural_hash(*a), structural_hash(*b));
  // Another coefficient is another function.
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("f");
  Var x = f.param("x", tensor_sinfo({n * 3}, kSolveF32));
  f.ret(f.emit(op::reshape(x, std::vector<SymExpr>{n, 3}), "y"));
  absl::StatusOr<IRModule> c = mb.build();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(structural_equal(*a, *c));
}

// f(x: Tensor[(n * 2 + m,)], y: Tensor[(m * 3,)]) { s = shape(n, m); return s }, n
// named `n_name`: y's dim solves for m, which then lets x's solve for n.
absl::StatusOr<IRModule> two_param_module(const std::string& n_name = "n") {
  ModuleBuilder mb;
  SymVar n(n_name);
  SymVar m("m");
  auto f = mb.function("f");
  f.param("x", tensor_sinfo({n * 2 + m}, kSolveF32));
  f.param("y", tensor_sinfo({m * 3}, kSolveF32));
  f.ret(f.emit(make_shape_expr({n, m}), "s"));
  return mb.build();
}

TEST(SolvedDimFunction, ParametersSolveTogether) {
  absl::StatusOr<IRModule> mod = two_param_module();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(mod->lookup("f").as<FunctionNode>()->ret.to_string(), "Shape[(n, m)]");
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  const std::string text = to_text(*mod);
  absl::StatusOr<IRModule> parsed = parse_module(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\nin:\n" << text;
  RELAX_EXPECT_STRUCTURAL_EQ(*mod, *parsed);
  EXPECT_EQ(structural_hash(*mod), structural_hash(*parsed));
  EXPECT_TRUE(well_formed(*parsed).ok()) << well_formed(*parsed);
  absl::StatusOr<IRModule> back = from_json(to_json(*mod));
  ASSERT_TRUE(back.ok()) << back.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*mod, *back);
  absl::StatusOr<IRModule> renamed = two_param_module("q");
  ASSERT_TRUE(renamed.ok()) << renamed.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*mod, *renamed);
  EXPECT_EQ(structural_hash(*mod), structural_hash(*renamed));
}

// f(x: Tensor[(m,)], y: Tensor[ndim=1]) { z = match_cast(y, Tensor[(m + k * 4,)]);
//   s = shape(k); return s }, k named `k_name`.
absl::StatusOr<IRModule> pattern_module(const std::string& k_name) {
  ModuleBuilder mb;
  SymVar m("m");
  SymVar k(k_name);
  auto f = mb.function("f");
  f.param("x", tensor_sinfo({m}, kSolveF32));
  Var y = f.param("y", tensor_sinfo_rank(1, kSolveF32));
  f.match_cast(y, tensor_sinfo({m + k * 4}, kSolveF32), "z");
  f.ret(f.emit(make_shape_expr({k}), "s"));
  return mb.build();
}

TEST(SolvedDimFunction, AMatchCastPatternDefinesWhatItSolvesForInScope) {
  absl::StatusOr<IRModule> mod = pattern_module("k");
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  // k is defined inside the body only: the function's result erases it.
  EXPECT_EQ(mod->lookup("f").as<FunctionNode>()->ret.to_string(), "Shape[ndim=1]");
  const std::string text = to_text(*mod);
  absl::StatusOr<IRModule> parsed = parse_module(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\nin:\n" << text;
  RELAX_EXPECT_STRUCTURAL_EQ(*mod, *parsed);
  EXPECT_EQ(structural_hash(*mod), structural_hash(*parsed));
  absl::StatusOr<IRModule> back = from_json(to_json(*mod));
  ASSERT_TRUE(back.ok()) << back.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*mod, *back);
  // Alpha-equivalence over the solved variable of a pattern.
  absl::StatusOr<IRModule> renamed = pattern_module("q");
  ASSERT_TRUE(renamed.ok());
  RELAX_EXPECT_STRUCTURAL_EQ(*mod, *renamed);
  EXPECT_EQ(structural_hash(*mod), structural_hash(*renamed));
}

TEST(SolvedDimFunction, AnUnsolvableParameterDimLeavesItsVariableUndefined) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("f");
  Var x = f.param("x", tensor_sinfo({n * n}, kSolveF32));
  f.ret(f.emit(make_shape_expr({n}), "s"));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_FALSE(mod.ok());
  EXPECT_THAT(mod.status().message(),
              HasSubstr("parameter `x`: symbolic variable `n` in Tensor[(n * n,), float32] is "
                        "not defined"));
}

TEST(SolvedDimFunction, WellFormedAcceptsSolvedAndRejectsUnsolvableDims) {
  // main(x: Tensor[(first,)], y: Tensor[(m * 3,)]) { return x }, returning Tensor[(first,)].
  SymVar n("n");
  SymVar m("m");
  auto module_with_param = [&](const SymExpr& first) {
    Var x("x", tensor_sinfo({first}, kSolveF32));
    Var y("y", tensor_sinfo({m * 3}, kSolveF32));
    Analyzer analyzer;
    DeduceContext ctx{analyzer};
    absl::StatusOr<Expr> body = normalize(make_seq_expr({}, x), ctx);
    RELAX_CHECK(body.ok()) << body.status();
    IRModule mod;
    mod.add("main", make_function({x, y}, *body, body->struct_info()));
    return mod;
  };
  EXPECT_THAT(well_formed_violations(module_with_param(n * 2 + m)), IsEmpty());
  EXPECT_THAT(well_formed_violations(module_with_param(n * n + m)),
              ElementsAre("@main: parameter x: symbolic variable `n` is used before any definition",
                          "@main: return annotation: symbolic variable `n` is used before any "
                          "definition"));
}

TEST(SolvedDimFunction, TheParserSolvesAfterReadingEveryParameter) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  func @f(x: Tensor[(n * 2 + m,), float32], y: Tensor[(m * 3,), float32]) -> Shape[(n, m)] {
    s = shape(n, m)
    return s
  }
  func @main(a: Tensor[(11,), float32], b: Tensor[(9,), float32]) -> Shape[(4, 3)] {
    r = @f(a, b)
    return r
  }
  extern_func @g : Func[(Tensor[(p * 2,), float32]) -> Tensor[(p,), float32]]
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  const auto* main = mod->lookup("main").as<FunctionNode>();
  EXPECT_EQ(main->body.struct_info().to_string(), "Shape[(4, 3)]");
}

TEST(SolvedDimFunction, TheParserNamesAVariableNoRuleDefines) {
  auto error_of = [](std::string_view text) {
    absl::StatusOr<IRModule> mod = parse_module(text);
    return mod.ok() ? std::string("<parsed>") : std::string(mod.status().message());
  };
  const std::string no_rule =
      " (no whole dim defines it and no dim can be solved for it)";
  EXPECT_EQ(error_of("module {\n  func @f(x: Tensor[(n * n,), float32]) -> Object {\n"
                     "    return x\n  }\n}"),
            "2:22: unknown symbolic variable `n`" + no_rule);
  // Two unknowns in one dim solve for neither.
  EXPECT_EQ(error_of("module {\n  func @f(x: Tensor[(n + k,), float32]) -> Object {\n"
                     "    return x\n  }\n}"),
            "2:22: unknown symbolic variable `n`" + no_rule);
  // A Func annotation's parameters solve for their own variables, not for the list around them.
  EXPECT_EQ(error_of("module {\n  func @f(g: Func[(Tensor[(q + k * 2,), float32]) -> Object],\n"
                     "          x: Tensor[(q,), float32]) -> Object {\n    return x\n  }\n}"),
            "2:32: unknown symbolic variable `k`" + no_rule);
  // A match_cast pattern solves with what is in scope: m is, k is solved.
  EXPECT_EQ(error_of("module {\n  func @f(x: Tensor[(m,), float32]) -> Object {\n"
                     "    z = match_cast(x, Tensor[(m + k * 4,), float32])\n"
                     "    s = shape(k)\n    return s\n  }\n}"),
            "<parsed>");
  EXPECT_EQ(error_of("module {\n  func @f(x: Tensor[(m,), float32]) -> Object {\n"
                     "    z = match_cast(x, Tensor[(j + k * 4,), float32])\n"
                     "    return z\n  }\n}"),
            "3:31: unknown symbolic variable `j`" + no_rule);
}

// ---------------------------------------------------------------------------
// The mutator keeps a solved parameter variable in scope.

class MultiplyToAdd : public ExprMutator {
 public:
  Expr visit_call(const Expr& e, const CallNode& node) override {
    Expr rewritten = ExprMutator::visit_call(e, node);
    const auto* c = rewritten.as<CallNode>();
    const auto* op = c->callee.as<OpNode>();
    if (op == nullptr || op->name != "multiply") return rewritten;
    return annotate(make_call(make_op_or_die("add"), c->args));
  }
};

TEST(SolvedDimFunction, TheMutatorKeepsSolvedParameterVariablesInScope) {
  // f(x: Tensor[(n * 2 + m,)], y: Tensor[(m * 3,)], w: Tensor[ndim=1]) {
  //   z = match_cast(w, Tensor[(n,)]); v = multiply(z, z); return v }:
  // the parameters define n, so the match_cast checks n rather than defining
  // it, and the body's annotation keeps n.
  ModuleBuilder mb;
  SymVar n("n");
  SymVar m("m");
  auto f = mb.function("f");
  f.param("x", tensor_sinfo({n * 2 + m}, kSolveF32));
  f.param("y", tensor_sinfo({m * 3}, kSolveF32));
  Var w = f.param("w", tensor_sinfo_rank(1, kSolveF32));
  Var z = f.match_cast(w, tensor_sinfo({n}, kSolveF32), "z");
  f.ret(f.emit(op::multiply(z, z), "v"));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(mod->lookup("f").as<FunctionNode>()->body.struct_info().to_string(),
            "Tensor[(n,), float32]");
  MultiplyToAdd mutator;
  IRModule out = mutator.visit_module(*mod);
  ASSERT_TRUE(mutator.status().ok()) << mutator.status();
  EXPECT_THAT(to_text(out), HasSubstr("add(z, z)"));
  EXPECT_EQ(out.lookup("f").as<FunctionNode>()->body.struct_info().to_string(),
            "Tensor[(n,), float32]");
  EXPECT_TRUE(well_formed(out).ok()) << well_formed(out);
}

// ---------------------------------------------------------------------------
// Dims at the int64 extremes (issue 30, item 4): solving max(n, INT64_MIN) for n once divided
// INT64_MIN by -1 inside the simplifier's rule matcher (SIGFPE), through parse_module and
// through well_formed on the JSON form, which from_json accepts.

constexpr const char* kMaxInt64MinModule =
    "module{func @main(x:Tensor[(max(n,-9223372036854775808),),float32])->Object{return x}}";

// The same module in the JSON form, written by hand so that it reads without the parser.
constexpr const char* kMaxInt64MinJson = R"({"format":"relax.ir","version":1,
  "functions":[{"name":"main","func":8}],"attrs":{},"nodes":[
  {"kind":"sym.var","dtype":"int64","name":"n"},
  {"kind":"sym.int","dtype":"int64","value":-9223372036854775808},
  {"kind":"sym.max","operands":[0,1]},
  {"kind":"sinfo.tensor","ndim":1,"shape":[2],"dtype":"float32"},
  {"kind":"expr.var","name":"x","sinfo":3},
  {"kind":"expr.seq","blocks":[],"body":4,"sinfo":3},
  {"kind":"sinfo.object"},
  {"kind":"sinfo.func","params":[3],"ret":6,"pure":true},
  {"kind":"expr.function","params":[4],"body":5,"ret":6,"pure":true,"upper_bounds":[],"attrs":{},"sinfo":7}]})";

TEST(SolveDimsExtremes, ParseModuleWithMaxOfInt64MinDim) {
  absl::StatusOr<IRModule> mod = parse_module(kMaxInt64MinModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  ASSERT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  // n is defined by the dim (max(n, INT64_MIN) is n), and the module round-trips.
  absl::StatusOr<IRModule> back = parse_module(to_text(*mod));
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << to_text(*mod);
  EXPECT_TRUE(structural_equal(*mod, *back)) << to_text(*mod) << "\n" << to_text(*back);
  absl::StatusOr<IRModule> from = from_json(to_json(*mod));
  ASSERT_TRUE(from.ok()) << from.status();
  EXPECT_TRUE(structural_equal(*mod, *from));
}

TEST(SolveDimsExtremes, WellFormedOnJsonWithMaxOfInt64MinDim) {
  absl::StatusOr<IRModule> mod = from_json(kMaxInt64MinJson);
  ASSERT_TRUE(mod.ok()) << mod.status();
  // A clear answer either way; this one is ok: the dim defines n as parse_module's does.
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  absl::StatusOr<IRModule> reparsed = parse_module(to_text(*mod));
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << to_text(*mod);
  EXPECT_TRUE(structural_equal(*mod, *reparsed)) << to_text(*mod) << "\n" << to_text(*reparsed);
}

TEST(SolveDimsExtremes, CallDeductionThroughMinAndMaxAtTheExtremes) {
  // Each callee dim holds an extreme; a call with a concrete shape either binds the variable
  // or is refused with a Status, never a crash; what is accepted round-trips.
  for (const char* dim : {"max(n,-9223372036854775808)", "min(n,9223372036854775807)",
                          "n*-1", "floordiv(n,-1)", "n-9223372036854775807-1"}) {
    const std::string text = std::string("module{func @f(x:Tensor[(") + dim +
                             ",),float32])->Tensor[(" + dim +
                             ",),float32]{return x}\nfunc @main(y:Tensor[(8,),float32])->Object{"
                             "z=@f(y)\nreturn z}}";
    SCOPED_TRACE(text);
    absl::StatusOr<IRModule> mod = parse_module(text);
    if (!mod.ok()) {
      EXPECT_FALSE(mod.status().message().empty());
      continue;
    }
    absl::Status wf = well_formed(*mod);
    if (!wf.ok()) {
      EXPECT_FALSE(wf.message().empty());
      continue;
    }
    absl::StatusOr<IRModule> back = parse_module(to_text(*mod));
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << to_text(*mod);
    EXPECT_TRUE(structural_equal(*mod, *back)) << to_text(*mod) << "\n" << to_text(*back);
  }
}

}  // namespace
}  // namespace relax
