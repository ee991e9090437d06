// ModuleBuilder::declare_function: calling functions built later, and
// recursion, with the declaration checked against the body at ret().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

using ::testing::HasSubstr;

const DataType kDeclareF32 = DataType::float32();
const DataType i64 = DataType::int64();

std::string declare_at(int line) { return std::string(__FILE__) + ":" + std::to_string(line) + ": "; }

std::string declare_build_error(const ModuleBuilder& mb) {
  absl::StatusOr<IRModule> mod = mb.build();
  if (mod.ok()) return "<no error>";
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(mod.status().message());
}

// main(x: Tensor[(n,)], k: Prim[int64, k]) = k > 0 ? main(x + x, k - 1) : x
TEST(BuilderDeclareTest, SelfRecursiveCountdown) {
  SymVar n("n"), k("k");
  StructInfo xs = tensor_sinfo({n}, kDeclareF32);
  StructInfo ks = prim_sinfo(i64, k);
  ModuleBuilder mb;
  Expr gv = mb.declare_function("main", func_sinfo({xs, ks}, xs));
  ASSERT_TRUE(gv.defined());
  EXPECT_EQ(gv.struct_info().kind(), StructInfoKind::kFunc);
  FunctionBuilder f = mb.function("main");
  EXPECT_TRUE(f.global_var().same_as(gv));
  EXPECT_TRUE(mb.global_var("main").same_as(gv));
  Var x = f.param("x", xs);
  f.param("k", ks);
  Var call_result;
  Var r = f.emit_if(
      make_prim_value(SymExpr(k) > 0),
      [&] {
        Var y = f.emit(op::add(x, x), "y");
        call_result = f.emit(make_call(f.global_var(), {y, make_prim_value(SymExpr(k) - 1)}), "z");
        return Expr(call_result);
      },
      [&] { return Expr(x); }, "r");
  EXPECT_EQ(call_result.struct_info().to_string(), "Tensor[(n,), float32]");
  EXPECT_EQ(r.struct_info().to_string(), "Tensor[(n,), float32]");
  Expr done = f.ret(r);
  EXPECT_TRUE(done.same_as(gv));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_TRUE(mod->global_var("main").same_as(gv));
  ASSERT_NE(mod->lookup("main").as<FunctionNode>(), nullptr);
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  std::string text = to_text(*mod);
  absl::StatusOr<IRModule> reparsed = parse_module(text);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << text;
  EXPECT_TRUE(structural_equal(*mod, *reparsed)) << text << "\n" << to_text(*reparsed);
}

TEST(BuilderDeclareTest, MutualRecursionAndCallingALaterFunction) {
  SymVar n("n"), k("k");
  StructInfo xs = tensor_sinfo({n}, kDeclareF32);
  StructInfo ks = prim_sinfo(i64, k);
  ModuleBuilder mb;
  Expr even = mb.declare_function("even", func_sinfo({xs, ks}, xs));
  Expr odd = mb.declare_function("odd", func_sinfo({xs, ks}, xs));
  // main is built first and calls `even`, whose body comes later.
  {
    SymVar m("m");
    FunctionBuilder f = mb.function("main");
    Var x = f.param("x", tensor_sinfo({m}, kDeclareF32));
    Var y = f.emit(make_call(even, {x, make_prim_value(SymExpr(3))}), "y");
    EXPECT_EQ(y.struct_info().to_string(), "Tensor[(m,), float32]");
    f.ret(y);
  }
  auto body = [&](const std::string& name, const Expr& other) {
    // Fresh variables: the body matches the declaration up to renaming.
    SymVar n2("n2"), k2("k2");
    FunctionBuilder f = mb.function(name);
    Var x = f.param("x", tensor_sinfo({n2}, kDeclareF32));
    f.param("k", prim_sinfo(i64, k2));
    Var r = f.emit_if(
        make_prim_value(SymExpr(k2) > 0),
        [&] {
          return make_call(other, {op::add(x, x), make_prim_value(SymExpr(k2) - 1)});
        },
        [&] { return Expr(x); }, "r");
    return f.ret(r);
  };
  EXPECT_TRUE(body("even", odd).same_as(even));
  EXPECT_TRUE(body("odd", even).same_as(odd));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_TRUE(mod->global_var("even").same_as(even));
  EXPECT_TRUE(mod->global_var("odd").same_as(odd));
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  absl::StatusOr<IRModule> reparsed = parse_module(to_text(*mod));
  ASSERT_TRUE(reparsed.ok()) << reparsed.status();
  EXPECT_TRUE(structural_equal(*mod, *reparsed));
}

TEST(BuilderDeclareTest, ParameterMismatchNamesBothAnnotations) {
  SymVar n("n");
  ModuleBuilder mb;
  mb.declare_function("f", func_sinfo({tensor_sinfo({n}, kDeclareF32)}, tensor_sinfo({n}, kDeclareF32)));
  const int decl_line = __LINE__ - 1;
  FunctionBuilder f = mb.function("f");
  Var x = f.param("x", tensor_sinfo({n, 2}, kDeclareF32));
  f.ret(x);
  const int ret_line = __LINE__ - 1;
  std::string error = declare_build_error(mb);
  EXPECT_THAT(error, HasSubstr(declare_at(ret_line) + "function `f` does not match its declaration at " +
                               std::string(__FILE__) + ":" + std::to_string(decl_line)));
  EXPECT_THAT(error, HasSubstr("declared Func[(Tensor[(n,), float32]) -> Tensor[(n,), float32]"));
  EXPECT_THAT(error, HasSubstr("actual Func[(Tensor[(n, 2), float32])"));
}

TEST(BuilderDeclareTest, ReturnMismatchIsAnError) {
  SymVar n("n");
  ModuleBuilder mb;
  mb.declare_function("f", func_sinfo({tensor_sinfo({n}, kDeclareF32)}, tensor_sinfo({n}, kDeclareF32)));
  FunctionBuilder f = mb.function("f");
  Var x = f.param("x", tensor_sinfo({n}, kDeclareF32));
  Var y = f.emit(op::reshape(x, std::vector<SymExpr>{1, n}), "y");
  f.ret(y);
  const int ret_line = __LINE__ - 1;
  std::string error = declare_build_error(mb);
  EXPECT_THAT(error, HasSubstr(declare_at(ret_line) + "function `f` does not match its declaration"));
  EXPECT_THAT(error, HasSubstr("the result does not fit the declared return annotation"));
  EXPECT_THAT(error, HasSubstr("-> Tensor[(1, n), float32]"));
}

TEST(BuilderDeclareTest, ParameterCountMismatchIsAnError) {
  ModuleBuilder mb;
  mb.declare_function("f", func_sinfo({tensor_sinfo({4}, kDeclareF32)}, tensor_sinfo({4}, kDeclareF32)));
  FunctionBuilder f = mb.function("f");
  Var x = f.param("x", tensor_sinfo({4}, kDeclareF32));
  f.param("y", tensor_sinfo({4}, kDeclareF32));
  f.ret(x);
  EXPECT_THAT(declare_build_error(mb), HasSubstr("declared with 1 parameters, defined with 2"));
}

TEST(BuilderDeclareTest, ReturnMayBeMoreSpecificThanDeclared) {
  SymVar n("n");
  ModuleBuilder mb;
  Expr gv =
      mb.declare_function("f", func_sinfo({tensor_sinfo({n}, kDeclareF32)}, tensor_sinfo_rank(1, kDeclareF32)));
  FunctionBuilder f = mb.function("f");
  Var x = f.param("x", tensor_sinfo({n}, kDeclareF32));
  EXPECT_TRUE(f.ret(x).same_as(gv));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_TRUE(mod->global_var("f").same_as(gv));
  EXPECT_EQ(mod->lookup("f").struct_info().to_string(), gv.struct_info().to_string());
}

TEST(BuilderDeclareTest, NeverDefinedIsAnError) {
  ModuleBuilder mb;
  Expr g = mb.declare_function("g", func_sinfo({tensor_sinfo({4}, kDeclareF32)}, tensor_sinfo({4}, kDeclareF32)));
  const int decl_line = __LINE__ - 1;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, kDeclareF32));
  Var y = f.emit(make_call(g, {x}), "y");
  EXPECT_EQ(y.struct_info().to_string(), "Tensor[(4,), float32]");
  f.ret(y);
  EXPECT_EQ(declare_build_error(mb), declare_at(decl_line) +
                                 "function `g` is declared but never defined (start its body "
                                 "with function(\"g\"))");
}

TEST(BuilderDeclareTest, DeclaringTwiceOrANonFunctionIsAnError) {
  ModuleBuilder mb;
  StructInfo sig = func_sinfo({tensor_sinfo({4}, kDeclareF32)}, tensor_sinfo({4}, kDeclareF32));
  mb.declare_function("g", sig);
  mb.declare_function("g", sig);
  const int twice_line = __LINE__ - 1;
  mb.declare_function("h", tensor_sinfo({4}, kDeclareF32));
  const int bad_line = __LINE__ - 1;
  FunctionBuilder g = mb.function("g");
  g.ret(g.param("x", tensor_sinfo({4}, kDeclareF32)));
  FunctionBuilder again = mb.function("g");
  const int again_line = __LINE__ - 1;
  again.ret(again.param("x", tensor_sinfo({4}, kDeclareF32)));
  std::string error = declare_build_error(mb);
  EXPECT_THAT(error, HasSubstr(declare_at(twice_line) + "function `g` is declared or defined twice"));
  EXPECT_THAT(error, HasSubstr(declare_at(bad_line) + "declare_function(`h`): expected a Func annotation"));
  EXPECT_THAT(error, HasSubstr(declare_at(again_line) + "function `g` is defined twice"));
}

}  // namespace
}  // namespace relax
