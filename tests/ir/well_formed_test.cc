// Well-formedness checking (relax/ir/well_formed.h): one test per rule, each
// naming the exact message, plus modules that pass.
#include "relax/ir/well_formed.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir_fixtures.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

using namespace fixtures;  // NOLINT(google-build-using-namespace)
using ::testing::ElementsAre;
using ::testing::IsEmpty;

IRModule module_with(const std::string& name, Expr func) {
  IRModule mod;
  mod.add(name, std::move(func));
  return mod;
}

// prim_func(A: Buffer[(n,)], C: Buffer[(n,)]) { for i: C[i] = A[i] }
Expr copy_kernel() {
  SymVar n("n"), i("i");
  Buffer a("A", f32(), {n});
  Buffer c("C", f32(), {n});
  return prim_func({buffer_param(a), buffer_param(c)},
                   loop(i, n, store(c, {i}, buffer_load(a, {i}))));
}

TEST(WellFormed, HandBuiltModulePasses) {
  IRModule mod;
  mod.add("kernel", copy_kernel());
  SymVar n("n"), m("m");
  Var x("x", tensor({n, 4}));
  Expr sum = op_call("add", {x, x});
  Var lv0 = dvar("lv0", sum);
  Expr tir = norm(op::call_tir(mod.global_var("kernel"), {lv0}, tensor({n, 4})));
  Var gv = var("gv", tir);
  Var y("y", tensor({m, 4}));
  Expr shape = make_shape_expr({m * 2});
  Var s = var("s", shape);
  Var c("c", prim_sinfo(DataType::boolean()));
  Expr branch = norm(make_if(c, norm(make_seq_expr({}, y)), norm(make_seq_expr({}, y))));
  Var r = var("r", branch);
  Expr body =
      norm(make_seq_expr({dataflow({bind(lv0, sum), bind(gv, tir)}),
                          plain({match(y, gv, tensor({m, 4})), bind(s, shape), bind(r, branch)})},
                         r));
  mod.add("main", make_function({x, c}, body, tensor_sinfo_rank(2, f32()), true, {{n, 1024}}));
  EXPECT_THAT(well_formed_violations(mod), IsEmpty());
  EXPECT_TRUE(well_formed(mod).ok()) << well_formed(mod);
}

TEST(WellFormed, BuilderModulePasses) {
  ModuleBuilder mb;
  SymVar n("n");
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor({n, 4}));
  f.upper_bound(n, 64);
  Var z;
  {
    auto df = f.dataflow();
    Var y = f.emit(op::add(x, x));
    z = f.emit_output(op::multiply(y, x));
  }
  Var w = f.match_cast(z, tensor({SymVar("m"), 4}));
  f.ret(w);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
}

TEST(WellFormed, VariableUsedBeforeItsDefinition) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr later = op_call("add", {x, x});
  Var b = var("b", later);
  Expr early = op_call("add", {b, b});
  Var a = var("a", early);
  IRModule mod = module_with("main", function({x}, {plain({bind(a, early), bind(b, later)})}, a));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding a: variable `b` is used before its definition"));
}

TEST(WellFormed, VariableUsedOutsideItsScope) {
  SymVar n("n");
  Var c("c", prim_sinfo(DataType::boolean()));
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var t = var("t", sum);
  Expr then_branch = norm(make_seq_expr({plain({bind(t, sum)})}, t));
  Expr branch = norm(make_if(c, then_branch, norm(make_seq_expr({}, x))));
  Var r = var("r", branch);
  Expr after = op_call("add", {t, t});
  Var u = var("u", after);
  IRModule mod =
      module_with("main", function({c, x}, {plain({bind(r, branch), bind(u, after)})}, u));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding u: variable `t` is used outside its scope"));
}

TEST(WellFormed, VariableDefinedTwice) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var s = var("s", sum);
  IRModule mod = module_with("main", function({x}, {plain({bind(s, sum), bind(s, sum)})}, s));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding s: variable `s` is defined twice"));
}

TEST(WellFormed, DataflowVarUsedAfterItsBlock) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var lv = dvar("lv", sum);
  Expr again = op_call("add", {lv, lv});
  Var z = var("z", again);
  IRModule mod =
      module_with("main", function({x}, {dataflow({bind(lv, sum)}), plain({bind(z, again)})}, z));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding z: DataflowVar `lv` is used outside its dataflow block"));
}

TEST(WellFormed, DataflowVarInTheFunctionResult) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var lv = dvar("lv", sum);
  IRModule mod = module_with("main", function({x}, {dataflow({bind(lv, sum)})}, lv));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: result: DataflowVar `lv` is used outside its dataflow block"));
}

TEST(WellFormed, DataflowVarBoundOutsideADataflowBlock) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var lv = dvar("lv", sum);
  Var out = var("out", sum);
  IRModule mod = module_with("main", function({x}, {plain({bind(lv, sum), bind(out, sum)})}, out));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding lv: DataflowVar `lv` is bound outside a dataflow block"));
}

TEST(WellFormed, SymbolicVariableWithoutDefinitionInAParameter) {
  SymVar n("n");
  Var x("x", tensor({n * n}));
  IRModule mod = module_with("main", function({x}, {}, x));
  EXPECT_THAT(
      well_formed_violations(mod),
      ElementsAre("@main: parameter x: symbolic variable `n` is used before any definition",
                  "@main: return annotation: symbolic variable `n` is used before any definition"));
}

TEST(WellFormed, SymbolicVariableUsedBeforeTheMatchCastThatDefinesIt) {
  SymVar n("n"), k("k");
  Var x("x", tensor({n}));
  Expr early = make_shape_expr({k});
  Var s = var("s", early);
  Var y("y", tensor({k}));
  Expr late = make_shape_expr({k + 1});
  Var t = var("t", late);
  IRModule mod = module_with(
      "main", function({x}, {plain({bind(s, early), match(y, x, tensor({k})), bind(t, late)})}, x));
  // `s` is reported once (its value and its annotation say the same); `t`, after the
  // match_cast, is fine.
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding s: symbolic variable `k` is used before any definition"));
}

TEST(WellFormed, ExpressionWithoutStructInfo) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr raw = make_call(make_op_or_die("add"), {x, x});  // never normalised
  Var s("s", tensor({n}));
  Expr body = make_seq_expr({plain({bind(s, raw)})}, s, tensor({n}));
  IRModule mod = module_with("main", make_function({x}, body, tensor({n})));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding s: Call without StructInfo (call of add)"));
}

TEST(WellFormed, CallTirOfAGraphFunction) {
  IRModule mod;
  SymVar n("n");
  Var p("p", tensor({n}));
  mod.add("helper", function({p}, {}, p));
  Var x("x", tensor({n}));
  Expr tir = norm(op::call_tir(mod.global_var("helper"), {x}, tensor({n})));
  Var gv = var("gv", tir);
  mod.add("main", function({x}, {plain({bind(gv, tir)})}, gv));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding gv: call_tir callee `@helper` is a Function, not a "
                          "PrimFunc"));
}

TEST(WellFormed, GlobalVarNamingNoFunction) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr missing = make_global_var("missing", func_sinfo({tensor({n})}, tensor({n})));
  Expr value = norm(make_call(missing, {x}));
  Var r = var("r", value);
  IRModule mod = module_with("main", function({x}, {plain({bind(r, value)})}, r));
  EXPECT_THAT(
      well_formed_violations(mod),
      ElementsAre("@main: binding r: GlobalVar `@missing` names no function of the module"));
}

TEST(WellFormed, ImpureCallInsideADataflowBlock) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr print = make_extern_func("print", opaque_func_sinfo(object_sinfo(), /*pure=*/false));
  Expr value = norm(make_call(print, {x}));
  Var lv = dvar("lv", value);
  Var out = var("out", value);
  IRModule mod = module_with(
      "main", function({x}, {dataflow({bind(lv, value)}), plain({bind(out, value)})}, out));
  // The same call outside the dataflow block is allowed.
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding lv: impure call to `print` inside a dataflow block"));
}

TEST(WellFormed, IfConditionThatIsNotABoolean) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr branch = make_if(x, norm(make_seq_expr({}, x)), norm(make_seq_expr({}, x)), tensor({n}));
  Var r = var("r", branch);
  IRModule mod = module_with("main", function({x}, {plain({bind(r, branch)})}, r));
  EXPECT_THAT(
      well_formed_violations(mod),
      ElementsAre("@main: binding r: If condition is Tensor[(n,), float32], expected Prim[bool] or a one-element bool tensor"));
}

TEST(WellFormed, VariableDefinedNowhere) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Var stray("stray", tensor({n}));
  Expr sum = op_call("add", {x, stray});
  Var s = var("s", sum);
  IRModule mod = module_with("main", function({x}, {plain({bind(s, sum)})}, s));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: binding s: variable `stray` is not defined"));
}

TEST(WellFormed, UpperBoundOnAnUndefinedSymbolicVariable) {
  SymVar n("n"), k("k");
  Var x("x", tensor({n}));
  Expr body = norm(make_seq_expr({}, x));
  IRModule mod = module_with("main", make_function({x}, body, tensor({n}), true, {{k, 8}}));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@main: upper bound on undefined symbolic variable `k`"));
}

TEST(WellFormed, StatusListsEveryViolation) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var lv = dvar("lv", sum);
  IRModule mod = module_with("main", function({x}, {plain({bind(lv, sum)})}, lv));
  absl::Status status = well_formed(mod);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "@main: binding lv: DataflowVar `lv` is bound outside a dataflow block\n"
            "@main: result: DataflowVar `lv` is used outside its dataflow block");
  EXPECT_TRUE(well_formed(IRModule()).ok());
}

// ---------------------------------------------------------------------------
// PrimFuncs.

TEST(WellFormedPrimFunc, KernelsPass) {
  IRModule mod;
  mod.add("copy", copy_kernel());
  mod.add("fill", fill_kernel());
  EXPECT_THAT(well_formed_violations(mod), IsEmpty());
}

TEST(WellFormedPrimFunc, StoreToAnUndefinedBuffer) {
  SymVar n("n"), i("i");
  Buffer c("C", f32(), {n});
  Buffer d("D", f32(), {n});
  IRModule mod =
      module_with("k", prim_func({buffer_param(c)}, loop(i, n, store(d, {i}, SymExpr(0)))));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@k: for i: BufferStore to undefined buffer `D`"));
}

TEST(WellFormedPrimFunc, LoadFromAnUndefinedBuffer) {
  SymVar n("n"), i("i");
  Buffer c("C", f32(), {n});
  Buffer d("D", f32(), {n});
  IRModule mod = module_with(
      "k", prim_func({buffer_param(c)}, loop(i, n, store(c, {i}, buffer_load(d, {i})))));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@k: for i: load from undefined buffer `D`"));
}

TEST(WellFormedPrimFunc, AllocatedBufferEndsWithItsAllocate) {
  SymVar n("n"), i("i"), j("j");
  Buffer c("C", f32(), {n});
  Buffer tmp("tmp", f32(), {n}, {}, BufferScope::kLocal);
  Stmt body = seq({allocate(tmp, loop(i, n, store(tmp, {i}, SymExpr(0)))),
                   loop(j, n, store(tmp, {j}, SymExpr(1)))});
  IRModule mod = module_with("k", prim_func({buffer_param(c)}, body));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@k: for j: BufferStore to undefined buffer `tmp`"));
}

TEST(WellFormedPrimFunc, LoopVariableUsedOutsideItsLoop) {
  SymVar n("n"), i("i");
  Buffer c("C", f32(), {n});
  Stmt body = seq({loop(i, n, store(c, {i}, SymExpr(0))), store(c, {i}, SymExpr(1))});
  IRModule mod = module_with("k", prim_func({buffer_param(c)}, body));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@k: loop variable `i` is used outside its loop"));
}

TEST(WellFormedPrimFunc, UndefinedSymbolicVariable) {
  SymVar n("n"), i("i"), q("q");
  Buffer c("C", f32(), {n});
  IRModule mod =
      module_with("k", prim_func({buffer_param(c)}, loop(i, q, store(c, {i}, SymExpr(0)))));
  EXPECT_THAT(well_formed_violations(mod), ElementsAre("@k: symbolic variable `q` is not defined"));
}

TEST(WellFormedPrimFunc, IndexCountDifferentFromTheRank) {
  SymVar n("n"), i("i");
  Buffer c("C", f32(), {n, 4});
  IRModule mod =
      module_with("k", prim_func({buffer_param(c)}, loop(i, n, store(c, {i}, SymExpr(0)))));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@k: for i: BufferStore to `C` has 1 index, but the buffer has rank 2"));
}

TEST(WellFormedPrimFunc, IfThenElseConditionThatIsNotBoolean) {
  SymVar n("n");
  Buffer c("C", f32(), {n});
  IRModule mod = module_with("k", prim_func({buffer_param(c), scalar_param(SymVar("flag"))},
                                            if_then(n, store(c, {SymExpr(0)}, SymExpr(0)))));
  EXPECT_THAT(well_formed_violations(mod),
              ElementsAre("@k: IfThenElse condition has dtype int64, expected bool"));
}

TEST(WellFormedPrimFunc, ScalarParametersLetAndBlockVariablesAreDefined) {
  SymVar n("n"), i("i"), vi("vi"), t("t"), scale("scale");
  Buffer c("C", f32(), {n});
  Stmt body = loop(i, n,
                   block("b", {{vi, n, IterType::kSpatial, i}},
                         let(t, vi * scale, if_then(t < n, store(c, {vi}, SymExpr(0))))));
  IRModule mod = module_with("k", prim_func({buffer_param(c), scalar_param(scale)}, body));
  EXPECT_THAT(well_formed_violations(mod), IsEmpty());
}

}  // namespace
}  // namespace relax
