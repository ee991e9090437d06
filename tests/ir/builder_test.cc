// The fluent builder: the example of the docs, scoping, cross-function calls,
// and diagnostics with source locations.
#include "relax/ir/builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "relax/ir/ops.h"
#include "relax/ir/prim_func.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const DataType kBuilderF32 = DataType::float32();

// "<this file>:<line>: " -- the prefix of a diagnostic recorded at `line`.
std::string at(int line) { return std::string(__FILE__) + ":" + std::to_string(line) + ": "; }

std::string build_error(const ModuleBuilder& mb) {
  absl::StatusOr<IRModule> mod = mb.build();
  if (mod.ok()) return "<no error>";
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(mod.status().message());
}

const FunctionNode* function_of(const IRModule& mod, std::string_view name) {
  Expr f = mod.lookup(name);
  return f.defined() ? f.as<FunctionNode>() : nullptr;
}

TEST(BuilderTest, TheDocumentedExampleBuilds) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 4096}, kBuilderF32));
  Var w = f.param("w", tensor_sinfo({4096, 4096}, kBuilderF32));
  f.upper_bound(n, 4096);
  Var y;
  Var z;
  {
    auto df = f.dataflow();
    y = f.emit(op::matmul(x, w));
    EXPECT_EQ(y.struct_info().to_string(), "Tensor[(n, 4096), float32]");  // deduced at once
    EXPECT_TRUE(y.is_dataflow());
    z = f.emit_output(op::add(y, x));
    EXPECT_FALSE(z.is_dataflow());
  }
  Var m = f.match_cast(z, tensor_sinfo({SymVar("m"), 4096}, kBuilderF32), "zm");
  EXPECT_EQ(m.struct_info().to_string(), "Tensor[(m, 4096), float32]");
  Expr gv = f.ret(m);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();

  const FunctionNode* fn = function_of(*mod, "main");
  ASSERT_NE(fn, nullptr);
  ASSERT_EQ(fn->params.size(), 2u);
  // m is defined inside the function: callers only learn the rank.
  EXPECT_EQ(fn->ret.to_string(), "Tensor[ndim=2, float32]");
  ASSERT_EQ(fn->upper_bounds.size(), 1u);
  EXPECT_EQ(fn->upper_bounds[0].var.id(), n.id());
  EXPECT_EQ(fn->upper_bounds[0].upper, 4096);
  const auto* body = fn->body.as<SeqExprNode>();
  ASSERT_NE(body, nullptr);
  ASSERT_EQ(body->blocks.size(), 2u);
  EXPECT_TRUE(body->blocks[0].is_dataflow);
  EXPECT_EQ(body->blocks[0].bindings.size(), 2u);
  EXPECT_FALSE(body->blocks[1].is_dataflow);
  ASSERT_EQ(body->blocks[1].bindings.size(), 1u);
  EXPECT_TRUE(body->blocks[1].bindings[0].is_match_cast);
  EXPECT_EQ(body->blocks[1].bindings[0].var.name_hint(), "zm");
  EXPECT_TRUE(body->body.same_as(m));
  EXPECT_TRUE(gv.same_as(mod->global_var("main")));
  EXPECT_EQ(gv.struct_info().to_string(),
            "Func[(Tensor[(n, 4096), float32], Tensor[(4096, 4096), float32]) -> "
            "Tensor[ndim=2, float32]]");
}

TEST(BuilderTest, DefaultNamesAndANormalForm) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, kBuilderF32));
  Var r;
  {
    auto df = f.dataflow();
    Var t = f.emit(op::add(op::multiply(x, x), x));  // the product gets its own binding
    r = f.emit_output(t, "out");
  }
  f.ret(r);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  const auto& block = function_of(*mod, "main")->body.as<SeqExprNode>()->blocks[0];
  ASSERT_EQ(block.bindings.size(), 3u);
  EXPECT_EQ(block.bindings[0].var.name_hint(), "lv0");
  EXPECT_EQ(block.bindings[1].var.name_hint(), "lv1");
  EXPECT_EQ(block.bindings[2].var.name_hint(), "out");
  const auto* add = block.bindings[1].value.as<CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->args[0].same_as(block.bindings[0].var));
  EXPECT_EQ(block.bindings[0].var.struct_info().to_string(), "Tensor[(n,), float32]");
}

TEST(BuilderTest, ErrorsCarryTheCallersLocation) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({2, 3}, kBuilderF32));
  Var y = f.param("y", tensor_sinfo({2, 4}, kBuilderF32));
  int line = __LINE__ + 1;
  Var bad = f.emit(op::add(x, y));
  EXPECT_EQ(bad.struct_info().to_string(), "Object");
  f.ret(x);
  std::string message = build_error(mb);
  EXPECT_THAT(message, testing::StartsWith(at(line) + "add: cannot broadcast dim 1: `3` vs `4`"));
}

TEST(BuilderTest, AllErrorsAreReportedOnceEach) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({2, 3}, kBuilderF32));
  Var v = f.param("v", tensor_sinfo({5}, kBuilderF32));
  int line1 = __LINE__ + 1;
  Var a = f.emit(op::matmul(x, x));  // inner dims 3 vs 2
  Var b = f.emit(op::add(a, x));     // uses the failed value: not reported again
  EXPECT_EQ(b.struct_info().to_string(), "Object");
  int line2 = __LINE__ + 1;
  Var c = f.emit(op::reshape(v, std::vector<SymExpr>{2, 3}));
  f.ret(x);
  std::vector<std::string> errors = mb.errors();
  ASSERT_EQ(errors.size(), 2u) << build_error(mb);
  EXPECT_THAT(errors[0], testing::StartsWith(at(line1) + "matmul: inner dims differ"));
  EXPECT_THAT(errors[1], testing::StartsWith(at(line2) + "reshape: element counts differ"));
  EXPECT_EQ(build_error(mb), errors[0] + "\n" + errors[1]);
}

TEST(BuilderTest, DataflowVarCannotLeaveItsBlock) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  Var y;
  {
    auto df = f.dataflow();
    y = f.emit(op::add(x, x));
  }
  int line = __LINE__ + 1;
  f.ret(y);
  EXPECT_EQ(build_error(mb),
            at(line) +
                "variable `lv0` is a DataflowVar used outside its dataflow block (bind "
                "it with emit_output to use it after the block)");
}

TEST(BuilderTest, DataflowScopeEndsAtEnd) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  auto df = f.dataflow();
  Var y = f.emit(op::add(x, x));
  Var out = f.emit_output(y);
  df.end();
  Var z = f.emit(op::add(out, x));
  EXPECT_FALSE(z.is_dataflow());
  f.ret(z);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  const auto* body = function_of(*mod, "main")->body.as<SeqExprNode>();
  ASSERT_EQ(body->blocks.size(), 2u);
  EXPECT_TRUE(body->blocks[0].is_dataflow);
  EXPECT_FALSE(body->blocks[1].is_dataflow);
}

TEST(BuilderTest, VariablesOfAnotherFunctionAreNotInScope) {
  ModuleBuilder mb;
  auto g = mb.function("g");
  Var gx = g.param("gx", tensor_sinfo({4}, kBuilderF32));
  g.ret(gx);
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  int line = __LINE__ + 1;
  f.emit(op::add(x, gx));
  f.ret(x);
  EXPECT_EQ(build_error(mb), at(line) + "variable `gx` is not defined in this scope");
}

TEST(BuilderTest, MissingRetIsReportedAtTheFunction) {
  ModuleBuilder mb;
  int line = __LINE__ + 1;
  auto f = mb.function("main");
  f.param("x", tensor_sinfo({4}, kBuilderF32));
  EXPECT_EQ(build_error(mb), at(line) + "function `main` was never finished with ret");
}

TEST(BuilderTest, ParamAnnotationsDefineOrUseSymbolicVars) {
  SymVar n("n");
  {
    ModuleBuilder mb;
    auto f = mb.function("main");
    int line = __LINE__ + 1;
    Var x = f.param("x", tensor_sinfo({n * n}, kBuilderF32));
    f.ret(x);
    EXPECT_THAT(build_error(mb),
                testing::StartsWith(at(line) + "parameter `x`: symbolic variable `n` in "
                                               "Tensor[(n * n,), float32] is not defined"));
  }
  {
    // A dim that can be solved for n defines it: n * 2 + m once y's m * 3 gives m.
    SymVar m("m");
    ModuleBuilder mb;
    auto f = mb.function("main");
    Var x = f.param("x", tensor_sinfo({n * 2 + m}, kBuilderF32));
    f.param("y", tensor_sinfo({m * 3}, kBuilderF32));
    Var s = f.emit(make_shape_expr({n, m}));
    EXPECT_EQ(s.struct_info().to_string(), "Shape[(n, m)]");
    f.ret(x);
    EXPECT_TRUE(mb.build().ok()) << build_error(mb);
  }
  {
    // A later parameter defines n: the first one is then a check.
    ModuleBuilder mb;
    auto f = mb.function("main");
    Var x = f.param("x", tensor_sinfo({n * 2}, kBuilderF32));
    Var y = f.param("y", tensor_sinfo({n}, kBuilderF32));
    Var r = f.emit(op::add(op::reshape(y, std::vector<SymExpr>{n, 1}), y));
    EXPECT_EQ(r.struct_info().to_string(), "Tensor[(n, n), float32]");
    f.ret(x);
    EXPECT_TRUE(mb.build().ok()) << build_error(mb);
  }
}

TEST(BuilderTest, UndefinedSymbolicVarInAnAnnotation) {
  ModuleBuilder mb;
  Expr kernel = mb.add_prim_func(
      "k", Expr(std::make_shared<const PrimFuncNode>(std::vector<PrimParam>(2), Stmt(), Attrs{},
                                                     opaque_func_sinfo(object_sinfo(), false))));
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  SymVar k("k");
  int line = __LINE__ + 1;
  Var y = f.emit(op::call_tir(kernel, {x}, tensor_sinfo({k}, kBuilderF32)), "y");
  f.ret(x);
  EXPECT_THAT(build_error(mb), testing::StartsWith(at(line) + "`y`: symbolic variable `k` in "
                                                              "Tensor[(k,), float32] is not "
                                                              "defined"));
}

TEST(BuilderTest, CallTirOfAnAddedPrimFunc) {
  ModuleBuilder mb;
  std::vector<PrimParam> params(3);
  Expr kernel = mb.add_prim_func(
      "add_kernel", Expr(std::make_shared<const PrimFuncNode>(
                        params, Stmt(), Attrs{}, opaque_func_sinfo(object_sinfo(), false))));
  ASSERT_NE(kernel.as<GlobalVarNode>(), nullptr);
  SymVar n("n");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, kBuilderF32));
  Var y = f.emit(op::call_tir(kernel, {x, x}, tensor_sinfo({n}, kBuilderF32)));
  EXPECT_EQ(y.struct_info().to_string(), "Tensor[(n,), float32]");
  int line = __LINE__ + 1;
  f.emit(op::call_tir(kernel, {x}, tensor_sinfo({n}, kBuilderF32)));
  f.ret(y);
  EXPECT_EQ(build_error(mb), at(line) +
                                 "call_tir: `add_kernel` has 3 parameters, but the call "
                                 "passes 1 arguments, 1 outputs and 0 symbolic arguments");
}

TEST(BuilderTest, AddPrimFuncRejectsOtherExpressions) {
  ModuleBuilder mb;
  int line = __LINE__ + 1;
  Expr gv = mb.add_prim_func("k", make_shape_expr({1}));
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  f.emit(op::call_tir(gv, {x}, tensor_sinfo({4}, kBuilderF32)));  // poisoned callee: silent
  f.ret(x);
  EXPECT_EQ(build_error(mb), at(line) + "add_prim_func(`k`): expected a PrimFunc, got ShapeExpr");
}

TEST(BuilderTest, CrossFunctionCallsDeduceThroughTheCallee) {
  ModuleBuilder mb;
  SymVar n("n");
  SymVar m("m");
  auto g = mb.function("transpose_pad");
  Var gx = g.param("x", tensor_sinfo({n, m}, kBuilderF32));
  Var t = g.emit(op::permute_dims(gx));
  Var padded = g.match_cast(t, tensor_sinfo({m, n}, kBuilderF32));  // a check: m, n are defined
  Expr g_var = g.ret(padded);
  EXPECT_EQ(g_var.struct_info().to_string(),
            "Func[(Tensor[(n, m), float32]) -> Tensor[(m, n), float32]]");

  auto f = mb.function("main");
  SymVar b("b");
  Var x = f.param("x", tensor_sinfo({b, 16}, kBuilderF32));
  Var y = f.emit(make_call(mb.global_var("transpose_pad"), {x}));
  EXPECT_EQ(y.struct_info().to_string(), "Tensor[(16, b), float32]");
  Var z = f.emit(make_call(g.global_var(), {y}));
  EXPECT_EQ(z.struct_info().to_string(), "Tensor[(b, 16), float32]");
  f.ret(z);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(mod->functions().size(), 2u);
  EXPECT_EQ(mod->functions()[0].first, "transpose_pad");
}

TEST(BuilderTest, CallsToUnknownFunctionsAreReportedOnce) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  int line = __LINE__ + 1;
  Var y = f.emit(make_call(mb.global_var("later"), {x}));
  f.emit(op::add(y, x));
  f.ret(x);
  EXPECT_EQ(build_error(mb), at(line) + "no function named `later` in the module");
}

TEST(BuilderTest, CallWithAnArgumentThatNeverFits) {
  ModuleBuilder mb;
  auto g = mb.function("g");
  Var gx = g.param("x", tensor_sinfo({8}, kBuilderF32));
  g.ret(gx);
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  int line = __LINE__ + 1;
  f.emit(make_call(g.global_var(), {x}));
  f.ret(x);
  EXPECT_EQ(build_error(mb), at(line) +
                                 "call to `g`: argument 0: expected Tensor[(8,), float32], "
                                 "got Tensor[(4,), float32]");
}

TEST(BuilderTest, ExternFunctions) {
  ModuleBuilder mb;
  Expr pure_fn =
      mb.add_extern_func("norm", "lib_norm", opaque_func_sinfo(tensor_sinfo_rank(1, kBuilderF32), true));
  Expr impure_fn = mb.add_extern_func("print", "lib_print");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  {
    auto df = f.dataflow();
    Var y = f.emit(make_call(pure_fn, {x}));
    EXPECT_EQ(y.struct_info().to_string(), "Tensor[ndim=1, float32]");
    int line = __LINE__ + 1;
    f.emit(make_call(impure_fn, {x}));
    EXPECT_EQ(mb.errors().size(), 1u);
    EXPECT_EQ(mb.errors().back(), at(line) + "an impure call cannot be bound in a dataflow block");
  }
  Var p = f.emit(make_call(impure_fn, {x}));  // fine outside dataflow blocks
  EXPECT_EQ(p.struct_info().to_string(), "Object");
  f.ret(x);
  EXPECT_EQ(mb.errors().size(), 1u);
  Expr norm = mb.global_var("norm");
  EXPECT_TRUE(norm.same_as(pure_fn)) << "one GlobalVar per module function";
}

TEST(BuilderTest, EmitIfJoinsBranches) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  Var c = f.param("c", prim_sinfo(DataType::boolean()));
  Var x = f.param("x", tensor_sinfo({n, 4}, kBuilderF32));
  Var then_var;
  Var r = f.emit_if(
      c,
      [&] {
        then_var = f.emit(op::add(x, x));
        return Expr(then_var);
      },
      [&] {
        return op::reshape(x, std::vector<SymExpr>{4, n});
      });
  EXPECT_EQ(r.struct_info().to_string(), "Tensor[ndim=2, float32]");
  Var same = f.emit_if(
      c, [&] { return Expr(x); }, [&] { return op::multiply(x, x); });
  EXPECT_EQ(same.struct_info().to_string(), "Tensor[(n, 4), float32]");
  f.ret(r);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  const auto& bindings = function_of(*mod, "main")->body.as<SeqExprNode>()->blocks[0].bindings;
  ASSERT_EQ(bindings.size(), 2u);
  const auto* if_node = bindings[0].value.as<IfNode>();
  ASSERT_NE(if_node, nullptr);
  const auto* then_seq = if_node->then_branch.as<SeqExprNode>();
  ASSERT_NE(then_seq, nullptr);
  ASSERT_EQ(then_seq->blocks.size(), 1u);
  EXPECT_TRUE(then_seq->blocks[0].bindings[0].var.same_as(then_var));
  // The else branch's reshape was bound inside the branch.
  const auto* else_seq = if_node->else_branch.as<SeqExprNode>();
  ASSERT_EQ(else_seq->blocks.size(), 1u);
  EXPECT_EQ(else_seq->body.struct_info().to_string(), "Tensor[(4, n), float32]");
}

TEST(BuilderTest, BranchVariablesStayInTheirBranch) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var c = f.param("c", prim_sinfo(DataType::boolean()));
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  Var inner;
  f.emit_if(
      c,
      [&] {
        inner = f.emit(op::add(x, x), "inner");
        return Expr(inner);
      },
      [&] { return Expr(x); });
  int line = __LINE__ + 1;
  f.emit(op::add(inner, x));
  f.ret(x);
  EXPECT_EQ(build_error(mb), at(line) + "variable `inner` is not defined in this scope");
}

TEST(BuilderTest, MatchCastInABranchIsErasedFromTheIf) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var c = f.param("c", prim_sinfo(DataType::boolean()));
  Var x = f.param("x", tensor_sinfo_rank(1, kBuilderF32));
  SymVar k("k");
  Var r = f.emit_if(
      c, [&] { return Expr(f.match_cast(x, tensor_sinfo({k}, kBuilderF32))); },
      [&] { return Expr(f.match_cast(x, tensor_sinfo({k}, kBuilderF32))); });
  EXPECT_EQ(r.struct_info().to_string(), "Tensor[ndim=1, float32]");
  int line = __LINE__ + 1;
  f.emit(op::reshape(x, std::vector<SymExpr>{k}));
  f.ret(r);
  EXPECT_EQ(build_error(mb),
            at(line) + "reshape: new shape (k,): symbolic variable `k` is not defined here");
}

TEST(BuilderTest, ReshapeNamesAnUndefinedVariableOfItsNewShape) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  SymVar n("n"), m("m");
  Var x = f.param("x", tensor_sinfo({n, 64}, kBuilderF32));
  int line = __LINE__ + 1;
  f.emit(op::reshape(x, std::vector<SymExpr>{m, 64}));
  f.ret(x);
  EXPECT_EQ(build_error(mb),
            at(line) + "reshape: new shape (m, 64): symbolic variable `m` is not defined here");
}

TEST(BuilderTest, EmitIfIsNotAllowedInDataflowBlocks) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var c = f.param("c", prim_sinfo(DataType::boolean()));
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  {
    auto df = f.dataflow();
    int line = __LINE__ + 1;
    f.emit_if(
        c, [&] { return Expr(x); }, [&] { return Expr(x); });
    EXPECT_EQ(mb.errors().at(0), at(line) + "emit_if inside a dataflow block; end the block first");
  }
  f.ret(x);
  EXPECT_EQ(mb.errors().size(), 1u);
}

TEST(BuilderTest, MatchCastDefinesNewVarsAndRejectsImpossiblePatterns) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo_rank(2, kBuilderF32));
  SymVar m("m");
  Var y = f.match_cast(x, tensor_sinfo({m, 4}, kBuilderF32));
  Var flat = f.emit(op::reshape(y, std::vector<SymExpr>{m * 4}));
  EXPECT_EQ(flat.struct_info().to_string(), "Tensor[(m * 4,), float32]");
  int line = __LINE__ + 1;
  f.match_cast(y, tensor_sinfo({m, 5}, kBuilderF32));
  f.ret(flat);
  EXPECT_EQ(build_error(mb), at(line) +
                                 "match_cast: `gv0` is Tensor[(m, 4), float32], which can "
                                 "never match Tensor[(m, 5), float32]");
}

TEST(BuilderTest, UpperBoundsAreUsedInProofsAndChecked) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  f.param("x", tensor_sinfo({n}, kBuilderF32));
  f.upper_bound(n, 16);
  EXPECT_TRUE(f.analyzer().prove(n <= 16));
  EXPECT_TRUE(f.analyzer().prove(n >= 0));
  SymVar stray("stray");
  int line = __LINE__ + 1;
  f.upper_bound(stray, 8);
  f.ret(make_shape_expr({n}));
  EXPECT_EQ(build_error(mb),
            at(line) + "upper_bound: `stray` is not a symbolic variable of function `main`");
}

TEST(BuilderTest, MisuseOfScopesIsReported) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kBuilderF32));
  int line1 = __LINE__ + 1;
  f.emit_output(op::add(x, x));
  auto df = f.dataflow();
  int line2 = __LINE__ + 1;
  f.ret(x);
  int line3 = __LINE__ + 1;
  f.emit(x);
  int line4 = __LINE__ + 1;
  f.param("late", object_sinfo());
  std::vector<std::string> errors = mb.errors();
  ASSERT_EQ(errors.size(), 4u) << build_error(mb);
  EXPECT_EQ(errors[0], at(line1) + "emit_output outside a dataflow block (use emit)");
  EXPECT_EQ(errors[1], at(line2) + "ret inside a dataflow block; end the block first");
  EXPECT_EQ(errors[2], at(line3) +
                           "function `main` is finished (ret was called); nothing more "
                           "can be added");
  EXPECT_THAT(errors[3], testing::StartsWith(at(line4) + "parameter `late` is added after"));
}

TEST(BuilderTest, DuplicateFunctionNames) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  f.ret(f.param("x", object_sinfo()));
  int line = __LINE__ + 1;
  auto g = mb.function("main");
  g.ret(g.param("y", object_sinfo()));
  EXPECT_EQ(build_error(mb), at(line) + "function `main` is defined twice");
}

TEST(BuilderTest, TuplesAndTupleGetItem) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, kBuilderF32));
  Var t = f.emit(make_tuple({x, op::add(x, x)}));
  EXPECT_EQ(t.struct_info().to_string(), "Tuple[(Tensor[(n,), float32], Tensor[(n,), float32])]");
  Var second = f.emit(make_tuple_get_item(t, 1));
  EXPECT_EQ(second.struct_info().to_string(), "Tensor[(n,), float32]");
  int line = __LINE__ + 1;
  f.emit(make_tuple_get_item(t, 5));
  f.ret(second);
  EXPECT_THAT(build_error(mb),
              testing::StartsWith(at(line) + "TupleGetItem: index 5 is out of range"));
}

}  // namespace
}  // namespace relax
