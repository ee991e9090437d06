// Structural equality, hashing and first_difference (relax/ir/structural_equal.h),
// and the GoogleTest helper of relax/ir/testing.h.
#include "relax/ir/structural_equal.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "ir_fixtures.h"
#include "relax/ir/testing.h"

namespace relax {
namespace {

using namespace fixtures;  // NOLINT(google-build-using-namespace)

// fn(x: Tensor[(n, 4), f32], y: Tensor[(n, 4), f32]) {
//   dataflow { lv0 = add(x, y); gv = multiply(lv0, x) }  return gv }
// Every call builds fresh Vars and SymVars, named as asked.
Expr add_mul(const std::string& x_name = "x", const std::string& n_name = "n",
             bool swap_add = false) {
  SymVar n(n_name);
  Var x(x_name, tensor({n, 4}));
  Var y("y", tensor({n, 4}));
  Expr sum = swap_add ? op_call("add", {y, x}) : op_call("add", {x, y});
  Var lv0 = dvar("lv0", sum);
  Expr prod = op_call("multiply", {lv0, x});
  Var gv = var("gv", prod);
  return function({x, y}, {dataflow({bind(lv0, sum), bind(gv, prod)})}, gv);
}

runtime::Tensor host_tensor(std::vector<float> values) {
  absl::StatusOr<runtime::Tensor> t =
      runtime::Tensor::empty({static_cast<int64_t>(values.size())}, f32());
  RELAX_CHECK(t.ok());
  std::memcpy(t->data(), values.data(), values.size() * sizeof(float));
  return *t;
}

IRModule module_of(std::vector<std::pair<std::string, Expr>> functions) {
  IRModule mod;
  for (auto& [name, f] : functions) mod.add(name, f);
  return mod;
}

TEST(StructuralEqual, AlphaEquivalentFunctionsAreEqualAndHashEqual) {
  Expr a = add_mul("x", "n");
  Expr b = add_mul("input", "batch");
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_EQ(first_difference(a, b), std::nullopt);
}

TEST(StructuralEqual, SwappingTwoUsesIsNotEqual) {
  Expr a = add_mul("x", "n", false);
  Expr b = add_mul("x", "n", true);
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_NE(structural_hash(a), structural_hash(b));
  EXPECT_EQ(first_difference(a, b), "body.blocks[0].bindings[0].value.args[0]: Var x vs Var y");
}

TEST(StructuralEqual, AFunctionEqualsItself) {
  Expr a = add_mul();
  EXPECT_TRUE(structural_equal(a, a));
  EXPECT_EQ(structural_hash(a), structural_hash(a));
}

TEST(StructuralEqual, ReturningAnotherVariableIsNotEqual) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var s = var("s", sum);
  Expr returns_sum = function({x}, {plain({bind(s, sum)})}, s);
  Var x2("x", tensor({n}));
  Expr sum2 = op_call("add", {x2, x2});
  Var s2 = var("s", sum2);
  Expr returns_param = function({x2}, {plain({bind(s2, sum2)})}, x2);
  EXPECT_FALSE(structural_equal(returns_sum, returns_param));
  EXPECT_EQ(first_difference(returns_sum, returns_param), "body.body: Var s vs Var x");
}

TEST(StructuralEqual, FreeVariablesCompareByIdentity) {
  Var a("v", tensor({4}));
  Var b("v", tensor({4}));
  EXPECT_TRUE(structural_equal(Expr(a), Expr(a)));
  EXPECT_FALSE(structural_equal(Expr(a), Expr(b)));
  EXPECT_EQ(first_difference(Expr(a), Expr(b)), "<root>: Var v vs Var v (different variables)");
}

TEST(StructuralEqual, FreeSymbolicVariablesCompareByIdentity) {
  SymVar n("n");
  SymVar m("m");
  EXPECT_TRUE(structural_equal(tensor({n, 4}), tensor({n, 4})));
  EXPECT_FALSE(structural_equal(tensor({n, 4}), tensor({m, 4})));
  EXPECT_EQ(structural_hash(tensor({n, 4})), structural_hash(tensor({n, 4})));
}

TEST(StructuralEqual, FuncAnnotationParametersBindTheirVariables) {
  SymVar n("n");
  SymVar m("m");
  StructInfo a = func_sinfo({tensor({n})}, tensor({n * 2}));
  StructInfo b = func_sinfo({tensor({m})}, tensor({m * 2}));
  StructInfo c = func_sinfo({tensor({m})}, tensor({m * 3}));
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_FALSE(structural_equal(a, c));
  EXPECT_EQ(first_difference(a, c), "ret: Tensor[(n * 2,), float32] vs Tensor[(m * 3,), float32]");
}

TEST(StructuralEqual, SymbolicVariablesMapOneToOne) {
  // fn(x: Tensor[(n, m)]) vs fn(x: Tensor[(k, k)]): n and m cannot both be k.
  SymVar n("n"), m("m"), k("k");
  Var x("x", tensor({n, m}));
  Var y("x", tensor({k, k}));
  Expr a = function({x}, {}, x);
  Expr b = function({y}, {}, y);
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_FALSE(structural_equal(b, a));
  EXPECT_EQ(first_difference(a, b),
            "params[0].struct_info: Tensor[(n, m), float32] vs Tensor[(k, k), float32]");
}

TEST(StructuralEqual, MatchCastPatternsBindSymbolicVariables) {
  auto make = [](const std::string& k_name) {
    SymVar n("n");
    SymVar k(k_name);
    Var x("x", tensor({n}));
    Var y("y", tensor({k}));
    Expr sum = op_call("add", {y, y});
    Var z = var("z", sum);
    Expr shape = make_shape_expr({k * 2});
    Var s = var("s", shape);
    return function({x}, {plain({match(y, x, tensor({k})), bind(z, sum), bind(s, shape)})}, s);
  };
  Expr a = make("k");
  Expr b = make("q");
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, ParametersMayUseVariablesThatLaterParametersBind) {
  // fn(x: Tensor[(n * 2,)], y: Tensor[(n,)]): n is bound by y, used first by x.
  auto make = [](const std::string& name) {
    SymVar n(name);
    Var x("x", tensor({n * 2}));
    Var y("y", tensor({n}));
    return function({x, y}, {}, x);
  };
  EXPECT_TRUE(structural_equal(make("n"), make("m")));
  EXPECT_EQ(structural_hash(make("n")), structural_hash(make("m")));
  // The same for a match_cast pattern and for PrimFunc parameters.
  auto pattern = [](const std::string& name) {
    SymVar k(name);
    return func_sinfo({tensor({k * 2, k})}, tensor({k}));
  };
  EXPECT_TRUE(structural_equal(pattern("k"), pattern("q")));
  EXPECT_EQ(structural_hash(pattern("k")), structural_hash(pattern("q")));
  auto kernel = [](const std::string& name) {
    SymVar n(name);
    Buffer a("A", f32(), {n * 2});
    return prim_func({buffer_param(a), scalar_param(n)}, store(a, {SymExpr(0)}, SymExpr(0)));
  };
  EXPECT_TRUE(structural_equal(kernel("n"), kernel("m")));
  EXPECT_EQ(structural_hash(kernel("n")), structural_hash(kernel("m")));
}

TEST(StructuralEqual, MatchCastVersusPlainBindingDiffers) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Var y1("y", tensor({n}));
  Var y2("y", tensor({n}));
  Expr a = make_function({x}, norm(make_seq_expr({plain({match(y1, x, tensor({n}))})}, y1)),
                         tensor({n}));
  Expr b = make_function({x}, norm(make_seq_expr({plain({bind(y2, x)})}, y2)), tensor({n}));
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_EQ(first_difference(a, b), "body.blocks[0].bindings[0]: match_cast of y vs binding of y");
}

TEST(StructuralEqual, DataflowAndPlainBlocksDiffer) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var s = var("s", sum);
  Expr a = function({x}, {dataflow({bind(s, sum)})}, s);
  Expr b = function({x}, {plain({bind(s, sum)})}, s);
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_EQ(first_difference(a, b), "body.blocks[0]: dataflow block vs binding block");
}

TEST(StructuralEqual, GlobalVarsCompareByName) {
  Expr f1 = make_global_var("f");
  Expr f2 = make_global_var("f", opaque_func_sinfo(object_sinfo()));
  Expr g = make_global_var("g");
  EXPECT_TRUE(structural_equal(f1, f2));
  EXPECT_EQ(structural_hash(f1), structural_hash(f2));
  EXPECT_FALSE(structural_equal(f1, g));
  EXPECT_EQ(first_difference(f1, g), "<root>: GlobalVar @f vs GlobalVar @g");
}

TEST(StructuralEqual, ConstantsCompareByDtypeShapeAndBytes) {
  Expr a = make_constant(host_tensor({1, 2, 3}));
  Expr b = make_constant(host_tensor({1, 2, 3}));
  Expr c = make_constant(host_tensor({1, 2, 4}));
  Expr d = make_constant(host_tensor({1, 2}));
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_FALSE(structural_equal(a, c));
  EXPECT_FALSE(structural_equal(a, d));
  EXPECT_EQ(first_difference(a, c),
            "<root>: Constant Tensor[(3,), float32] vs Constant Tensor[(3,), float32] "
            "(different values)");
}

TEST(StructuralEqual, StridedConstantsCompareByElementValues) {
  std::vector<float> storage = {1, 9, 2, 9, 3, 9};
  runtime::Tensor strided = runtime::Tensor::borrow(storage.data(), {3}, f32(), {2});
  Expr a = make_constant(strided);
  Expr b = make_constant(host_tensor({1, 2, 3}));
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, CallAttributesAreCompared) {
  Var x("x", tensor({2, 3}));
  Expr a = make_call(make_op_or_die("permute_dims"), {x}, {{"axes", std::vector<int64_t>{1, 0}}});
  Expr b = make_call(make_op_or_die("permute_dims"), {x}, {{"axes", std::vector<int64_t>{0, 1}}});
  Expr c = make_call(make_op_or_die("permute_dims"), {x}, {{"axes", std::vector<int64_t>{1, 0}}});
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_TRUE(structural_equal(a, c));
  EXPECT_EQ(structural_hash(a), structural_hash(c));
  EXPECT_EQ(first_difference(a, b), "attrs[\"axes\"]: [1, 0] vs [0, 1]");
}

TEST(StructuralEqual, NaNAttributesEqualThemselves) {
  Var x("x", tensor({2}));
  double nan = std::numeric_limits<double>::quiet_NaN();
  Expr a = make_call(make_op_or_die("add"), {x, x}, {{"scale", nan}});
  Expr b = make_call(make_op_or_die("add"), {x, x}, {{"scale", nan}});
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, TupleGetItemIndexIsCompared) {
  Var x("x", tuple_sinfo({tensor({2}), tensor({3})}));
  Expr a = make_tuple_get_item(x, 0);
  Expr b = make_tuple_get_item(x, 1);
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_EQ(first_difference(a, b), "index: 0 vs 1");
}

TEST(StructuralEqual, IfBranchesAreCompared) {
  auto make = [](bool swap) {
    SymVar n("n");
    Var c("c", prim_sinfo(DataType::boolean()));
    Var x("x", tensor({n}));
    Expr one = norm(make_seq_expr({}, x));
    Expr sum = op_call("add", {x, x});
    Var s = var("s", sum);
    Expr two = norm(make_seq_expr({plain({bind(s, sum)})}, s));
    Expr branch = norm(swap ? make_if(c, two, one) : make_if(c, one, two));
    Var r = var("r", branch);
    return function({c, x}, {plain({bind(r, branch)})}, r);
  };
  EXPECT_TRUE(structural_equal(make(false), make(false)));
  EXPECT_EQ(structural_hash(make(false)), structural_hash(make(false)));
  EXPECT_FALSE(structural_equal(make(false), make(true)));
  EXPECT_EQ(first_difference(make(false), make(true)),
            "body.blocks[0].bindings[0].value.then_branch.blocks: 0 blocks vs 1 blocks");
}

TEST(StructuralEqual, ParameterAnnotationsAreCompared) {
  SymVar n("n");
  Var x("x", tensor({n, 4}));
  Var y("x", tensor({n, 8}));
  EXPECT_EQ(first_difference(function({x}, {}, x), function({y}, {}, y)),
            "params[0].struct_info: Tensor[(n, 4), float32] vs Tensor[(n, 8), float32]");
}

TEST(StructuralEqual, ModulesCompareFunctionsByName) {
  IRModule a = module_of({{"main", add_mul()}, {"kernel", fill_kernel()}});
  IRModule b = module_of({{"kernel", fill_kernel("m", "j")}, {"main", add_mul("p", "q")}});
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  IRModule c = module_of({{"main", add_mul()}, {"other", fill_kernel()}});
  EXPECT_FALSE(structural_equal(a, c));
  EXPECT_EQ(first_difference(a, c), "@kernel: only in the first module");
}

TEST(StructuralEqual, ModuleAttributesAreCompared) {
  IRModule a = module_of({{"main", add_mul()}});
  IRModule b = a;
  b.attrs()["target"] = std::string("llvm");
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_NE(structural_hash(a), structural_hash(b));
  EXPECT_EQ(first_difference(b, a), "attrs: attribute `target` only in the first");
}

TEST(StructuralEqual, FirstDifferenceNamesTheFunctionAndPath) {
  auto make = [](bool use_lv0_twice) {
    SymVar n("n");
    Var x("x", tensor({n, 4}));
    Expr sum = op_call("add", {x, x});
    Var lv0 = dvar("lv0", sum);
    Expr again = use_lv0_twice ? op_call("add", {lv0, lv0}) : op_call("add", {lv0, x});
    Var lv1 = dvar("lv1", again);
    Expr prod = op_call("multiply", {lv1, x});
    Var gv = var("gv", prod);
    return module_of(
        {{"main",
          function({x}, {dataflow({bind(lv0, sum), bind(lv1, again), bind(gv, prod)})}, gv)}});
  };
  EXPECT_EQ(first_difference(make(false), make(false)), std::nullopt);
  EXPECT_EQ(first_difference(make(false), make(true)),
            "@main.body.blocks[0].bindings[1].value.args[1]: Var x vs DataflowVar lv0");
}

TEST(StructuralEqual, PrimFuncsAreAlphaEquivalent) {
  Expr a = fill_kernel("n", "i");
  Expr b = fill_kernel("m", "j");
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, PrimFuncStoresToDifferentParametersDiffer) {
  auto make = [](bool to_first) {
    SymVar n("n");
    SymVar i("i");
    Buffer a("A", f32(), {n});
    Buffer c("C", f32(), {n});
    return prim_func({buffer_param(a), buffer_param(c)},
                     loop(i, n, store(to_first ? a : c, {i}, SymExpr(0))));
  };
  EXPECT_FALSE(structural_equal(make(true), make(false)));
  EXPECT_EQ(first_difference(make(true), make(false)), "body.body.buffer: Buffer A vs Buffer C");
}

TEST(StructuralEqual, LoopVariablesBindByPosition) {
  SymVar n("n");
  Buffer c("C", f32(), {n});
  SymVar i("i");
  SymVar j("j");
  Stmt a = loop(i, n, store(c, {i}, SymExpr(1)));
  Stmt b = loop(j, n, store(c, {j}, SymExpr(1)));
  Stmt uses_free = loop(j, n, store(c, {n - 1}, SymExpr(1)));
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_FALSE(structural_equal(a, uses_free));
  EXPECT_EQ(first_difference(a, uses_free), "body.indices[0]: i vs n - 1");
}

TEST(StructuralEqual, LetAndBlockVariablesBindByPosition) {
  auto make = [](const std::string& prefix) {
    SymVar n(prefix + "n");
    SymVar i(prefix + "i");
    SymVar t(prefix + "t");
    SymVar vi(prefix + "vi");
    Buffer c("C", f32(), {n});
    Stmt body = block("fill", {{vi, n, IterType::kSpatial, i}}, let(t, vi * 2, store(c, {vi}, t)));
    return prim_func({buffer_param(c)}, loop(i, n, body));
  };
  EXPECT_TRUE(structural_equal(make("a"), make("b")));
  EXPECT_EQ(structural_hash(make("a")), structural_hash(make("b")));
}

TEST(StructuralEqual, BlockNamesMatter) {
  SymVar n("n"), i("i"), vi("vi");
  Buffer c("C", f32(), {n});
  Stmt a = block("fill", {{vi, n, IterType::kSpatial, i}}, store(c, {vi}, SymExpr(0)));
  Stmt b = block("zero", {{vi, n, IterType::kSpatial, i}}, store(c, {vi}, SymExpr(0)));
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_EQ(first_difference(a, b), "name: fill vs zero");
}

TEST(StructuralEqual, ScalarParametersAndBufferShapesShareVariables) {
  // prim_func(A: Buffer[(n,)], n) binds n at the buffer, then checks the scalar.
  auto make = [](bool same_var) {
    SymVar n("n");
    SymVar other("n");
    Buffer a("A", f32(), {n});
    return prim_func({buffer_param(a), scalar_param(same_var ? n : other)}, seq({}));
  };
  EXPECT_TRUE(structural_equal(make(true), make(true)));
  EXPECT_FALSE(structural_equal(make(true), make(false)));
  EXPECT_EQ(first_difference(make(true), make(false)),
            "params[1]: n vs n (bound at different places)");
}

TEST(StructuralEqual, SymExprUnderAVariableMapping) {
  SymVar n("n"), m("m"), k("k");
  SymVarMap<SymVar> map;
  map.emplace(n, m);
  EXPECT_TRUE(structural_equal(n * 2 + k, m * 2 + k, map));
  EXPECT_FALSE(structural_equal(n * 2 + k, n * 2 + k, map));
  EXPECT_FALSE(structural_equal(n * 2, m * 2, SymVarMap<SymVar>()));
}

TEST(StructuralEqual, HashFunctorsDeduplicateAlphaEquivalentFunctions) {
  absl::flat_hash_map<Expr, int, StructuralHash, StructuralEqual> seen;
  seen[add_mul("x", "n")] = 1;
  seen[add_mul("a", "b")] = 2;
  seen[add_mul("x", "n", true)] = 3;
  EXPECT_EQ(seen.size(), 2u);
}

TEST(StructuralEqual, HashSeparatesDifferentStructures) {
  SymVar n("n");
  EXPECT_NE(structural_hash(tensor({n, 4})), structural_hash(tensor({4, n})));
  EXPECT_NE(structural_hash(tensor({n})), structural_hash(shape_sinfo({n})));
  EXPECT_NE(structural_hash(tuple_sinfo({tensor({1}), tensor({2})})),
            structural_hash(tuple_sinfo({tensor({2}), tensor({1})})));
  EXPECT_NE(structural_hash(fill_kernel()), structural_hash(add_mul()));
}

TEST(StructuralTesting, HelperPassesOnEqualModules) {
  IRModule a = module_of({{"main", add_mul("x", "n")}});
  IRModule b = module_of({{"main", add_mul("y", "m")}});
  RELAX_EXPECT_STRUCTURAL_EQ(a, b);
  RELAX_EXPECT_STRUCTURAL_EQ(a.lookup("main"), b.lookup("main"));
}

TEST(StructuralTesting, HelperFailureNamesTheDifferenceAndBothSides) {
  IRModule a = module_of({{"main", add_mul("x", "n")}});
  IRModule b = module_of({{"main", add_mul("x", "n", true)}});
  ::testing::AssertionResult result = structurally_equal(a, b);
  ASSERT_FALSE(result);
  std::string message = result.message();
  EXPECT_NE(message.find("First difference: @main.body.blocks[0].bindings[0].value.args[0]: "
                         "Var x vs Var y"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Expected:\n  module {"), std::string::npos) << message;
  EXPECT_NE(message.find("add(x, y)"), std::string::npos) << message;
  EXPECT_NE(message.find("Actual:\n"), std::string::npos) << message;
}

TEST(StructuralTesting, MacroNamesBothArgumentsOnFailure) {
  IRModule before = module_of({{"main", add_mul("x", "n")}});
  IRModule after = module_of({{"main", add_mul("x", "n", true)}});
  EXPECT_NONFATAL_FAILURE(RELAX_EXPECT_STRUCTURAL_EQ(before, after),
                          "after is not structurally equal to before.\nFirst difference: "
                          "@main.body.blocks[0].bindings[0].value.args[0]: Var x vs Var y");
}

TEST(StructuralTesting, HelperPrintsExpressionsInTheTextForm) {
  ::testing::AssertionResult result = structurally_equal(add_mul("x"), add_mul("x", "n", true));
  ASSERT_FALSE(result);
  std::string message = result.message();
  EXPECT_NE(message.find("First difference: body.blocks[0].bindings[0].value.args[0]: "
                         "Var x vs Var y"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("add(y, x)"), std::string::npos) << message;
}

}  // namespace
}  // namespace relax
