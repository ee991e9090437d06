// Operator deduction: symbolic shapes, rank-only inputs, unknown dtypes and
// the error texts, per operator; and the registry itself.
#include "relax/ir/ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "relax/ir/module.h"
#include "relax/ir/normalize.h"
#include "relax/ir/op.h"
#include "relax/ir/prim_func.h"

namespace relax {
namespace ops_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const DataType f32 = DataType::float32();

// The deduced annotation as text, or "error: <message>".
std::string deduce(const Expr& call, const IRModule* module = nullptr) {
  Analyzer analyzer;
  DeduceContext ctx{analyzer, module};
  absl::StatusOr<Expr> e = normalize(call, ctx);
  if (!e.ok()) return "error: " + std::string(e.status().message());
  return e->struct_info().to_string();
}

Var tensor(const std::string& name, std::vector<SymExpr> shape,
           std::optional<DataType> dtype = DataType::float32()) {
  return Var(name, tensor_sinfo(std::move(shape), dtype));
}

Var rank_only(const std::string& name, int ndim) {
  return Var(name, tensor_sinfo_rank(ndim, DataType::float32()));
}

class OpsTest : public ::testing::Test {
 protected:
  SymVar n{"n"};
  SymVar m{"m"};
  SymVar k{"k"};
};

// ---------------------------------------------------------------------------
// Registry.

TEST(OpRegistry, FindsEveryOperatorOnce) {
  for (const char* name : {"add", "multiply", "exp", "matmul", "reshape", "permute_dims", "sum",
                           "softmax", "call_tir", "call_tir_inplace", "call_dps_library"}) {
    const OpInfo* info = find_op(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->name, name);
    EXPECT_FALSE(info->summary.empty());
    EXPECT_TRUE(info->deduce);
    EXPECT_TRUE(make_op_or_die(name).same_as(info->op)) << "one Op node per operator";
  }
  EXPECT_EQ(find_op("no_such_op"), nullptr);
  EXPECT_GE(all_ops().size(), 11u);
  std::set<std::string> names;
  for (const OpInfo* info : all_ops()) {
    EXPECT_TRUE(names.insert(info->name).second) << info->name << " listed twice";
    // Every operator declares its arguments (their roles name them in errors).
    if (info->num_args >= 0) {
      EXPECT_EQ(info->args.size(), static_cast<size_t>(info->num_args)) << info->name;
      EXPECT_LE(info->min_args, info->num_args) << info->name;
    }
  }
}

TEST(OpRegistry, AttributesAreDeclaredCheckedAndCanonical) {
  const OpInfo* sum = find_op("sum");
  ASSERT_NE(sum, nullptr);
  ASSERT_EQ(sum->attrs.size(), 2u);
  EXPECT_EQ(sum->attrs[0].name, "axis");
  EXPECT_EQ(sum->attrs[0].default_value, "none");
  EXPECT_EQ(sum->attrs[1].name, "keepdims");
  EXPECT_EQ(sum->attrs[1].type, "bool");
  EXPECT_EQ(sum->attrs[1].default_value, "false");
  // Defaults are left out and an int given for a list becomes the list.
  absl::StatusOr<Attrs> canonical =
      sum->canonical_attrs(Attrs{{"axis", int64_t{1}}, {"keepdims", false}});
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  EXPECT_EQ(canonical->size(), 1u);
  EXPECT_EQ(std::get<std::vector<int64_t>>(canonical->at("axis")), std::vector<int64_t>{1});
  EXPECT_EQ(sum->canonical_attrs(Attrs{{"keepdim", true}}).status().message(),
            "sum: unknown attribute `keepdim` (its attributes are `axis`, `keepdims`)");
  EXPECT_EQ(find_op("exp")->canonical_attrs(Attrs{{"axis", int64_t{1}}}).status().message(),
            "exp: takes no attributes, got `axis`");
}

TEST(OpRegistry, SignaturesShowArgumentsAndAttributeDefaults) {
  EXPECT_EQ(op_signature(*find_op("sum")), "sum(x, axis=none, keepdims=false)");
  EXPECT_EQ(op_signature(*find_op("add")), "add(lhs, rhs)");
  EXPECT_EQ(find_op("sum")->family, "reduce");
}

TEST(OpRegistry, ArityIsChecked) {
  Var x = Var("x", tensor_sinfo({2}, f32));
  Expr call = make_call(make_op_or_die("add"), {x});
  EXPECT_EQ(deduce(call), "error: add: expected 2 arguments, got 1");
}

// ---------------------------------------------------------------------------
// add / multiply.

TEST_F(OpsTest, AddSameSymbolicShape) {
  EXPECT_EQ(deduce(op::add(tensor("a", {n, 4}), tensor("b", {n, 4}))), "Tensor[(n, 4), float32]");
}

TEST_F(OpsTest, AddBroadcastsOnesAndMissingDims) {
  EXPECT_EQ(deduce(op::add(tensor("a", {n, 1}), tensor("b", {4}))), "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce(op::add(tensor("a", {1, m}), tensor("b", {n, 1}))), "Tensor[(n, m), float32]");
  EXPECT_EQ(deduce(op::multiply(tensor("a", {k, n, m}), tensor("b", {}))),
            "Tensor[(k, n, m), float32]");
}

TEST_F(OpsTest, BroadcastUsesProofsNotSpelling) {
  EXPECT_EQ(deduce(op::multiply(tensor("a", {n * 2}), tensor("b", {2 * n}))),
            "Tensor[(n * 2,), float32]");
}

TEST_F(OpsTest, AddCannotBroadcastUnrelatedDims) {
  EXPECT_THAT(deduce(op::add(tensor("a", {2, n}), tensor("b", {2, m}))),
              StartsWith("error: add: cannot broadcast dim 1: `n` vs `m`"));
  EXPECT_THAT(deduce(op::multiply(tensor("a", {3, 2}), tensor("b", {4, 2}))),
              AllOf(StartsWith("error: multiply: cannot broadcast dim 0: `3` vs `4`"),
                    HasSubstr("lhs Tensor[(3, 2), float32], rhs Tensor[(4, 2), float32]")));
}

TEST_F(OpsTest, AddRankOnlyGivesRankOnlyWithMaxRank) {
  EXPECT_EQ(deduce(op::add(tensor("a", {n, 4}), rank_only("b", 3))), "Tensor[ndim=3, float32]");
  EXPECT_EQ(deduce(op::add(rank_only("a", 1), tensor("b", {n, 4}))), "Tensor[ndim=2, float32]");
  EXPECT_EQ(deduce(op::add(rank_only("a", kUnknownNDim), tensor("b", {n}))),
            "Tensor[ndim=?, float32]");
}

TEST_F(OpsTest, AddDtypes) {
  // The tensor of unknown dtype must have the other's (its kernel checks it).
  EXPECT_EQ(deduce(op::add(tensor("a", {n}, std::nullopt), tensor("b", {n}))),
            "Tensor[(n,), float32]");
  EXPECT_EQ(deduce(op::add(tensor("a", {n}), tensor("b", {n}, DataType::int32()))),
            "error: add: dtypes differ: lhs is float32, rhs is int32");
}

TEST_F(OpsTest, AddRejectsNonTensorsAndMixedDevices) {
  EXPECT_EQ(deduce(op::multiply(tensor("a", {2}), make_shape_expr({2}))),
            "error: multiply: argument 1 (rhs): expected a Tensor or a Prim, got "
            "Shape[(2,)]");
  Var gpu("g", tensor_sinfo({2}, f32, Device::cuda(0)));
  Var cpu("c", tensor_sinfo({2}, f32, Device::cpu()));
  EXPECT_EQ(deduce(op::add(gpu, cpu)), "error: add: devices differ: lhs is on cuda:0, rhs on cpu");
  EXPECT_EQ(deduce(op::add(gpu, tensor("h", {2}))), "Tensor[(2,), float32, cuda:0]");
}

// ---------------------------------------------------------------------------
// add / multiply with scalar (Prim) operands.

Var prim(const std::string& name, DataType dtype, SymExpr value = SymExpr()) {
  return Var(name, prim_sinfo(dtype, std::move(value)));
}

TEST_F(OpsTest, APrimOperandBroadcastsAsAScalarOnEitherSide) {
  EXPECT_EQ(deduce(op::add(tensor("x", {n, 4}), prim("s", f32))), "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce(op::multiply(prim("s", f32), tensor("x", {n, 4}))), "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce(op::add(tensor("x", {}), prim("s", f32))), "Tensor[(), float32]");
  EXPECT_EQ(deduce(op::add(rank_only("x", 2), prim("s", f32))), "Tensor[ndim=2, float32]");
  Var gpu("g", tensor_sinfo({n}, f32, Device::cuda(0)));
  EXPECT_EQ(deduce(op::add(gpu, prim("s", f32))), "Tensor[(n,), float32, cuda:0]");
}

TEST_F(OpsTest, ConstantPrimsAdaptToTheTensorDtype) {
  EXPECT_EQ(deduce(op::add(tensor("x", {n}), make_prim_value(2))), "Tensor[(n,), float32]");
  EXPECT_EQ(deduce(op::add(tensor("x", {n}, DataType::int32()), make_prim_value(2))),
            "Tensor[(n,), int32]");
  EXPECT_EQ(deduce(op::multiply(make_prim_value(SymExpr::float_imm(0.5, DataType::float64())),
                                tensor("x", {n}, DataType::float16()))),
            "Tensor[(n,), float16]");
  // Unknown tensor dtype: a constant leaves it unknown, a typed Prim decides it.
  EXPECT_EQ(deduce(op::add(tensor("x", {n}, std::nullopt), make_prim_value(2))), "Tensor[(n,), ?]");
  EXPECT_EQ(deduce(op::add(tensor("x", {n}, std::nullopt), prim("s", DataType::int32()))),
            "Tensor[(n,), int32]");
}

TEST_F(OpsTest, PrimOperandDtypeMismatchesAreErrors) {
  EXPECT_EQ(deduce(op::add(tensor("x", {n}), prim("s", DataType::int32()))),
            "error: add: dtypes differ: lhs is float32, rhs is Prim[int32]");
  EXPECT_EQ(deduce(op::multiply(prim("s", DataType::float64()), tensor("x", {n}))),
            "error: multiply: dtypes differ: lhs is Prim[float64], rhs is float32");
  // A float constant does not adapt to an integer tensor, nor one that does not fit.
  EXPECT_EQ(deduce(op::add(tensor("x", {n}, DataType::int32()),
                           make_prim_value(SymExpr::float_imm(0.5, DataType::float64())))),
            "error: add: dtypes differ: lhs is int32, rhs is Prim[float64, 0.5f64]");
  DataType u8{DataType::Code::kUInt, 8, 1};
  EXPECT_EQ(deduce(op::add(tensor("x", {n}, u8), make_prim_value(300))),
            "error: add: dtypes differ: lhs is uint8, rhs is Prim[int64, 300]");
  EXPECT_EQ(deduce(op::add(tensor("x", {n}, u8), make_prim_value(255))), "Tensor[(n,), uint8]");
  EXPECT_EQ(deduce(op::add(tensor("x", {n}), prim("c", DataType::boolean()))),
            "error: add: argument 1 (rhs): expected a numeric Prim, got Prim[bool]");
}

TEST_F(OpsTest, TwoPrimsGiveAPrim) {
  EXPECT_EQ(deduce(op::add(prim("a", DataType::int64(), n), make_prim_value(1))),
            "Prim[int64, n + 1]");
  EXPECT_EQ(deduce(op::multiply(make_prim_value(2), prim("a", DataType::int64(), n + 1))),
            "Prim[int64, n * 2 + 2]");
  EXPECT_EQ(deduce(op::add(prim("a", f32), prim("b", f32))), "Prim[float32]");
  EXPECT_EQ(deduce(op::add(prim("a", f32, SymExpr::float_imm(1.5, f32)),
                           make_prim_value(SymExpr::float_imm(2.0, DataType::float64())))),
            "Prim[float32, 3.5f32]");
  EXPECT_EQ(deduce(op::multiply(make_prim_value(3), prim("a", DataType::int32()))), "Prim[int32]");
  EXPECT_EQ(deduce(op::add(prim("a", DataType::int32()), prim("b", f32))),
            "error: add: dtypes differ: lhs is Prim[int32], rhs is Prim[float32]");
}

// ---------------------------------------------------------------------------
// exp.

TEST_F(OpsTest, ExpKeepsTheAnnotation) {
  EXPECT_EQ(deduce(op::exp(tensor("x", {n, 4}))), "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce(op::exp(tensor("x", {n}, DataType::float64()))), "Tensor[(n,), float64]");
  EXPECT_EQ(deduce(op::exp(rank_only("x", 3))), "Tensor[ndim=3, float32]");
  EXPECT_EQ(deduce(op::exp(tensor("x", {n}, std::nullopt))), "Tensor[(n,), ?]");
}

TEST_F(OpsTest, ExpTakesFloatTensorsOnly) {
  EXPECT_EQ(deduce(op::exp(tensor("x", {n}, DataType::int32()))),
            "error: exp: argument 0 (x): expected a float tensor, got Tensor[(n,), int32]");
  EXPECT_EQ(deduce(op::exp(prim("s", f32))),
            "error: exp: argument 0 (x): expected a Tensor, got Prim[float32]");
}

// ---------------------------------------------------------------------------
// matmul.

TEST_F(OpsTest, MatmulSymbolic) {
  EXPECT_EQ(deduce(op::matmul(tensor("a", {n, k}), tensor("b", {k, m}))),
            "Tensor[(n, m), float32]");
}

TEST_F(OpsTest, MatmulBatchedBroadcastsBatchDims) {
  SymVar b("b");
  SymVar h("h");
  EXPECT_EQ(deduce(op::matmul(tensor("a", {b, 1, n, k}), tensor("w", {h, k, m}))),
            "Tensor[(b, h, n, m), float32]");
  EXPECT_EQ(deduce(op::matmul(tensor("a", {b, n, k}), tensor("w", {k, m}))),
            "Tensor[(b, n, m), float32]");
}

TEST_F(OpsTest, MatmulVectors) {
  EXPECT_EQ(deduce(op::matmul(tensor("v", {k}), tensor("w", {k, m}))), "Tensor[(m,), float32]");
  EXPECT_EQ(deduce(op::matmul(tensor("a", {n, k}), tensor("v", {k}))), "Tensor[(n,), float32]");
  EXPECT_EQ(deduce(op::matmul(tensor("u", {k}), tensor("v", {k}))), "Tensor[(), float32]");
}

TEST_F(OpsTest, MatmulInnerDimsMustBeProvablyEqual) {
  EXPECT_THAT(deduce(op::matmul(tensor("a", {n, k}), tensor("b", {m, 4}))),
              StartsWith("error: matmul: inner dims differ: lhs dim 1 is `k`, rhs dim 0 is `m`"));
  EXPECT_THAT(deduce(op::matmul(tensor("a", {2, n, 8}), tensor("b", {2, 7, 4}))),
              StartsWith("error: matmul: inner dims differ: lhs dim 2 is `8`, rhs dim 1 is `7`"));
  EXPECT_EQ(deduce(op::matmul(tensor("a", {n, k * 2}), tensor("b", {2 * k, 4}))),
            "Tensor[(n, 4), float32]");
}

TEST_F(OpsTest, MatmulBatchMismatchNamesTheBatchDim) {
  EXPECT_THAT(deduce(op::matmul(tensor("a", {3, n, k}), tensor("b", {5, k, m}))),
              StartsWith("error: matmul: cannot broadcast batch dim 0: `3` vs `5`"));
}

TEST_F(OpsTest, MatmulRankOnlyAndRankZero) {
  EXPECT_EQ(deduce(op::matmul(rank_only("a", 3), tensor("b", {k, m}))), "Tensor[ndim=3, float32]");
  EXPECT_EQ(deduce(op::matmul(rank_only("a", 1), rank_only("b", 2))), "Tensor[ndim=1, float32]");
  EXPECT_EQ(deduce(op::matmul(rank_only("a", kUnknownNDim), tensor("b", {k, m}))),
            "Tensor[ndim=?, float32]");
  EXPECT_EQ(deduce(op::matmul(tensor("s", {}), tensor("b", {k, m}))),
            "error: matmul: argument 0 (lhs): expected a tensor of rank >= 1, got "
            "Tensor[(), float32]");
}

// ---------------------------------------------------------------------------
// reshape.

TEST_F(OpsTest, ReshapeKeepsElementCount) {
  EXPECT_EQ(deduce(op::reshape(tensor("x", {n, 4096}), std::vector<SymExpr>{n, 64, 64})),
            "Tensor[(n, 64, 64), float32]");
  EXPECT_EQ(deduce(op::reshape(tensor("x", {n, m}), std::vector<SymExpr>{m * n})),
            "Tensor[(m * n,), float32]");
}

TEST_F(OpsTest, ReshapeInfersMinusOne) {
  EXPECT_EQ(deduce(op::reshape(tensor("x", {n, 4096}), std::vector<SymExpr>{-1, 64})),
            "Tensor[(n * 64, 64), float32]");
  EXPECT_EQ(deduce(op::reshape(tensor("x", {6, 4}), std::vector<SymExpr>{3, -1})),
            "Tensor[(3, 8), float32]");
}

TEST_F(OpsTest, ReshapeErrorsNameBothCounts) {
  EXPECT_EQ(deduce(op::reshape(tensor("x", {n, 4}), std::vector<SymExpr>{n, 3})),
            "error: reshape: element counts differ: x Tensor[(n, 4), float32] has n * 4 "
            "elements, new shape (n, 3) has n * 3");
  EXPECT_EQ(deduce(op::reshape(tensor("x", {6}), std::vector<SymExpr>{-1, 4})),
            "error: reshape: cannot infer dim 0 of (-1, 4): x Tensor[(6,), float32] has 6 "
            "elements, not a multiple of 4");
  EXPECT_EQ(deduce(op::reshape(tensor("x", {6}), std::vector<SymExpr>{-1, -1})),
            "error: reshape: new shape (-1, -1) has more than one -1 (dims 0 and 1)");
  EXPECT_EQ(deduce(op::reshape(tensor("x", {6}), std::vector<SymExpr>{-2, -3})),
            "error: reshape: new shape (-2, -3): dim 0 is -2, expected a size >= 0 or -1");
}

TEST_F(OpsTest, ReshapeOfRankOnlyTrustsTheNewShape) {
  EXPECT_EQ(deduce(op::reshape(rank_only("x", 2), std::vector<SymExpr>{n, 4})),
            "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce(op::reshape(rank_only("x", 2), std::vector<SymExpr>{-1, 4})),
            "Tensor[ndim=2, float32]");
  Var s("s", shape_sinfo_rank(3));
  EXPECT_EQ(deduce(op::reshape(tensor("x", {n}), s)), "Tensor[ndim=3, float32]");
  EXPECT_EQ(deduce(op::reshape(tensor("x", {n}), tensor("y", {n}))),
            "error: reshape: argument 1 (shape): expected a Shape, got Tensor[(n,), float32]");
}

// ---------------------------------------------------------------------------
// permute_dims.

TEST_F(OpsTest, PermuteDimsDefaultReverses) {
  EXPECT_EQ(deduce(op::permute_dims(tensor("x", {n, m, 4}))), "Tensor[(4, m, n), float32]");
}

TEST_F(OpsTest, PermuteDimsWithAxes) {
  EXPECT_EQ(deduce(op::permute_dims(tensor("x", {n, m, 4}), std::vector<int64_t>{0, 2, 1})),
            "Tensor[(n, 4, m), float32]");
  EXPECT_EQ(deduce(op::permute_dims(tensor("x", {n, m, 4}), std::vector<int64_t>{-1, 0, 1})),
            "Tensor[(4, n, m), float32]");
}

TEST_F(OpsTest, PermuteDimsErrors) {
  EXPECT_EQ(deduce(op::permute_dims(tensor("x", {n, m, 4}), std::vector<int64_t>{0, 1})),
            "error: permute_dims: axes (0, 1) have 2 entries, expected 3 (the rank of x "
            "Tensor[(n, m, 4), float32])");
  EXPECT_EQ(deduce(op::permute_dims(tensor("x", {n, m}), std::vector<int64_t>{0, 2})),
            "error: permute_dims: axis 2 in (0, 2) is out of range for rank 2");
  EXPECT_EQ(deduce(op::permute_dims(tensor("x", {n, m}), std::vector<int64_t>{1, -1})),
            "error: permute_dims: axis 1 appears twice in (1, -1)");
}

TEST_F(OpsTest, PermuteDimsRankOnly) {
  EXPECT_EQ(deduce(op::permute_dims(rank_only("x", 3))), "Tensor[ndim=3, float32]");
  EXPECT_EQ(deduce(op::permute_dims(rank_only("x", kUnknownNDim))), "Tensor[ndim=?, float32]");
  EXPECT_EQ(deduce(op::permute_dims(rank_only("x", kUnknownNDim), std::vector<int64_t>{1, 0})),
            "Tensor[ndim=2, float32]");
}

// ---------------------------------------------------------------------------
// Cross-level calls.

// A PrimFunc with `buffers` buffer parameters and `scalars` scalar ones.
Expr prim_func(int buffers, int scalars) {
  std::vector<PrimParam> params;
  for (int i = 0; i < buffers; ++i) {
    params.push_back(
        PrimParam{Buffer("B" + std::to_string(i), DataType::float32(), {4}), std::nullopt});
  }
  for (int i = 0; i < scalars; ++i) {
    params.push_back(PrimParam{std::nullopt, SymVar("s" + std::to_string(i))});
  }
  return Expr(std::make_shared<const PrimFuncNode>(std::move(params), Stmt(), Attrs{},
                                                   opaque_func_sinfo(object_sinfo(), false)));
}

TEST_F(OpsTest, CallTirTakesItsOutSinfo) {
  Expr gv = make_global_var("add_kernel");
  StructInfo out = tensor_sinfo({n, 4}, f32);
  EXPECT_EQ(deduce(op::call_tir(gv, {tensor("a", {n, 4}), tensor("b", {n, 4})}, out)),
            "Tensor[(n, 4), float32]");
  StructInfo two = tuple_sinfo({out, tensor_sinfo({n}, DataType::int32())});
  EXPECT_EQ(deduce(op::call_tir(gv, {tensor("a", {n, 4})}, two, {n})),
            "Tuple[(Tensor[(n, 4), float32], Tensor[(n,), int32])]");
}

TEST_F(OpsTest, CallTirChecksTheModulePrimFunc) {
  IRModule mod;
  mod.add("k", prim_func(3, 1));
  Expr gv = mod.global_var("k");
  StructInfo out = tensor_sinfo({4}, f32);
  EXPECT_EQ(deduce(op::call_tir(gv, {tensor("a", {4}), tensor("b", {4})}, out, {n}), &mod),
            "Tensor[(4,), float32]");
  EXPECT_EQ(deduce(op::call_tir(gv, {tensor("a", {4})}, out, {n}), &mod),
            "error: call_tir: `k` has 4 parameters, but the call passes 1 arguments, 1 outputs "
            "and 1 symbolic arguments");
}

TEST_F(OpsTest, CallTirErrors) {
  Expr gv = make_global_var("k");
  EXPECT_EQ(deduce(op::call_tir(gv, {tensor("a", {4})}, tensor_sinfo_rank(1, f32))),
            "error: call_tir: out_sinfo: expected a Tensor (or a Tuple of Tensors) with known "
            "shape and dtype, got Tensor[ndim=1, float32]");
  EXPECT_EQ(deduce(op::call_tir(tensor("f", {1}), {tensor("a", {4})}, tensor_sinfo({4}, f32))),
            "error: call_tir: argument 0 (callee): expected a GlobalVar naming a PrimFunc, got a "
            "Var");
  EXPECT_EQ(deduce(op::call_tir(gv, {make_shape_expr({4})}, tensor_sinfo({4}, f32))),
            "error: call_tir: argument 1 (args): field 0: expected a Tensor or a Prim (int, float "
            "or bool), got Shape[(4,)]");
}

TEST_F(OpsTest, CallTirTakesPrimArgumentsAsScalars) {
  IRModule mod;
  mod.add("k", prim_func(2, 1));
  Expr gv = mod.global_var("k");
  StructInfo out = tensor_sinfo({4}, f32);
  EXPECT_EQ(deduce(op::call_tir(gv, {tensor("a", {4}), prim("s", f32)}, out), &mod),
            "Tensor[(4,), float32]");
  EXPECT_EQ(deduce(op::call_tir(gv, {tensor("a", {4}), make_prim_value(3)}, out), &mod),
            "Tensor[(4,), float32]");
  // A bool travels as an integer scalar (0 or 1).
  EXPECT_EQ(deduce(op::call_tir(gv, {tensor("a", {4}), prim("c", DataType::boolean())}, out), &mod),
            "Tensor[(4,), float32]");
  EXPECT_EQ(deduce(op::call_dps_library("lib", {tensor("a", {4}), prim("s", f32)}, out)),
            "error: call_dps_library: argument 1 (args): field 1: expected a Tensor, got "
            "Prim[float32]");
}

TEST_F(OpsTest, CallTirInplace) {
  IRModule mod;
  mod.add("k", prim_func(2, 0));
  Expr gv = mod.global_var("k");
  StructInfo out = tensor_sinfo({n, 4}, f32);
  EXPECT_EQ(
      deduce(op::call_tir_inplace(gv, {tensor("a", {n, 4}), tensor("b", {n, 4})}, {0}, out), &mod),
      "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce(op::call_tir_inplace(gv, {tensor("a", {n, 5})}, {0}, out), &mod),
            "error: call_tir_inplace: output 0 Tensor[(n, 4), float32] is written into argument "
            "0, which is Tensor[(n, 5), float32]");
  EXPECT_EQ(deduce(op::call_tir_inplace(gv, {tensor("a", {n, 4})}, {3}, out), &mod),
            "error: call_tir_inplace: inplace_indices[0] is 3, expected -1 or an argument index "
            "below 1");
  EXPECT_EQ(deduce(op::call_tir_inplace(gv, {tensor("a", {n, 4})}, {0, -1}, out), &mod),
            "error: call_tir_inplace: inplace_indices has 2 entries, expected one per output (1)");
}

TEST_F(OpsTest, CallDpsLibrary) {
  StructInfo out = tensor_sinfo({n, m}, f32);
  Expr call = op::call_dps_library("relax_gemm", {tensor("a", {n, k}), tensor("b", {k, m})}, out);
  EXPECT_EQ(deduce(call), "Tensor[(n, m), float32]");
  const auto* node = call.as<CallNode>();
  ASSERT_NE(node, nullptr);
  ASSERT_NE(node->args[0].as<ExternFuncNode>(), nullptr);
  EXPECT_EQ(node->args[0].as<ExternFuncNode>()->symbol, "relax_gemm");
  EXPECT_EQ(deduce(op::call_dps_library("g", {tensor("a", {n})}, object_sinfo())),
            "error: call_dps_library: out_sinfo: expected a Tensor (or a Tuple of Tensors) with "
            "known shape and dtype, got Object");
}

}  // namespace
}  // namespace ops_test
}  // namespace relax
