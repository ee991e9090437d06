// The explicit-allocation operators (relax/ir/op/memory.h): deduction and its
// errors, the explicit destination-passing calls, and the round trips of the
// lowered form through the text format and JSON.
#include "relax/ir/op/memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "relax/ir/json.h"
#include "relax/ir/module.h"
#include "relax/ir/normalize.h"
#include "relax/ir/op.h"
#include "relax/ir/parser.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

const DataType kMemoryF32 = DataType::float32();

// Named apart from ops_reduce_test.cc's deduce: the files may share a unity batch.
std::string deduce_memory(const Expr& call, const IRModule* module = nullptr) {
  Analyzer analyzer;
  DeduceContext ctx{analyzer, module};
  absl::StatusOr<Expr> e = normalize(call, ctx);
  if (!e.ok()) return "error: " + std::string(e.status().message());
  return e->struct_info().to_string();
}

Var tensor(const std::string& name, std::vector<SymExpr> shape, DataType dtype = kMemoryF32) {
  return Var(name, tensor_sinfo(std::move(shape), dtype));
}

class MemoryOpsTest : public ::testing::Test {
 protected:
  SymVar n{"n"};
  SymVar m{"m"};
  Var storage{"s", object_sinfo()};
};

TEST_F(MemoryOpsTest, AllocStorageIsAnObjectOfAnyKnownOrSymbolicSize) {
  EXPECT_EQ(deduce_memory(op::alloc_storage(make_prim_value(1024))), "Object");
  EXPECT_EQ(deduce_memory(op::alloc_storage(make_prim_value(n * 16), 128)), "Object");
  EXPECT_EQ(deduce_memory(op::alloc_storage(make_shape_expr({n * 4}))), "Object");
  EXPECT_EQ(deduce_memory(op::alloc_storage(Var("b", prim_sinfo(DataType::int64())))), "Object");
}

TEST_F(MemoryOpsTest, AllocStorageErrors) {
  EXPECT_EQ(deduce_memory(op::alloc_storage(make_prim_value(-4))),
            "error: alloc_storage: argument 0 (size): `-4` bytes is negative, expected a size >= 0");
  EXPECT_EQ(deduce_memory(op::alloc_storage(make_prim_value(SymExpr::float_imm(4, DataType::float32())))),
            "error: alloc_storage: argument 0 (size): expected an integer Prim or a Shape of one "
            "dim, got Prim[float32, 4f32]");
  EXPECT_EQ(deduce_memory(op::alloc_storage(make_shape_expr({n, 4}))),
            "error: alloc_storage: argument 0 (size): expected an integer Prim or a Shape of one "
            "dim, got Shape[(n, 4)]");
  EXPECT_EQ(deduce_memory(op::alloc_storage(make_prim_value(64), 48)),
            "error: alloc_storage: alignment 48 is not a power of two");
  EXPECT_EQ(deduce_memory(op::alloc_storage(make_prim_value(64), 0)),
            "error: alloc_storage: alignment 0 is not a power of two");
}

TEST_F(MemoryOpsTest, AllocTensorIsATensorOfItsShapeAndDtype) {
  EXPECT_EQ(deduce_memory(op::alloc_tensor(storage, make_prim_value(0), make_shape_expr({n, 4}), kMemoryF32)),
            "Tensor[(n, 4), float32]");
  EXPECT_EQ(deduce_memory(op::alloc_tensor(storage, make_prim_value(n * 64), make_shape_expr({m}),
                                    DataType::int64(), /*zero_init=*/true)),
            "Tensor[(m,), int64]");
  EXPECT_EQ(deduce_memory(op::alloc_tensor(storage, make_prim_value(0),
                                    Var("sh", shape_sinfo_rank(3)), kMemoryF32)),
            "Tensor[ndim=3, float32]");
}

TEST_F(MemoryOpsTest, AllocTensorErrors) {
  EXPECT_EQ(deduce_memory(op::alloc_tensor(tensor("t", {4}), make_prim_value(0), make_shape_expr({4}), kMemoryF32)),
            "error: alloc_tensor: argument 0 (storage): expected a storage (Object, from "
            "alloc_storage), got Tensor[(4,), float32]");
  EXPECT_EQ(deduce_memory(op::alloc_tensor(storage, make_prim_value(-64), make_shape_expr({4}), kMemoryF32)),
            "error: alloc_tensor: argument 1 (offset): `-64` is out of range: a byte offset is >= 0");
  EXPECT_EQ(deduce_memory(op::alloc_tensor(storage, make_prim_value(n * 4 + 2), make_shape_expr({4}), kMemoryF32)),
            "error: alloc_tensor: argument 1 (offset): `n * 4 + 2` is not a multiple of 4, the "
            "byte size of float32");
  EXPECT_EQ(deduce_memory(op::alloc_tensor(storage, make_prim_value(SymExpr::float_imm(0, kMemoryF32)),
                                    make_shape_expr({4}), kMemoryF32)),
            "error: alloc_tensor: argument 1 (offset): expected an integer Prim, got "
            "Prim[float32, 0f32]");
  EXPECT_EQ(deduce_memory(op::alloc_tensor(storage, make_prim_value(0), make_shape_expr({n, -2}), kMemoryF32)),
            "error: alloc_tensor: shape (n, -2): dim 1 is `-2`, expected a size >= 0");
  Attrs no_dtype;
  EXPECT_EQ(deduce_memory(make_call(make_op_or_die("alloc_tensor"),
                             {storage, make_prim_value(0), make_shape_expr({4})}, no_dtype)),
            "error: alloc_tensor: attribute `dtype` (dtype) is required");
}

TEST_F(MemoryOpsTest, KillsReturnTheEmptyTuple) {
  EXPECT_EQ(deduce_memory(op::kill_storage(storage)), "Tuple[()]");
  EXPECT_EQ(deduce_memory(op::kill_tensor(tensor("t", {n}))), "Tuple[()]");
  EXPECT_EQ(deduce_memory(op::kill_storage(tensor("t", {n}))),
            "error: kill_storage: argument 0 (storage): expected a storage (Object, from "
            "alloc_storage), got Tensor[(n,), float32]");
  EXPECT_THAT(deduce_memory(op::kill_tensor(storage)), ::testing::StartsWith("error: kill_tensor: argument 0 (tensor)"));
  EXPECT_FALSE(find_op("kill_storage")->pure);
  EXPECT_FALSE(find_op("kill_tensor")->pure);
  EXPECT_TRUE(find_op("alloc_storage")->pure);
  EXPECT_TRUE(find_op("alloc_tensor")->pure);
  EXPECT_TRUE(find_op("view")->pure);
}

TEST_F(MemoryOpsTest, ViewKeepsTheElementCount) {
  EXPECT_EQ(deduce_memory(op::view(tensor("x", {n, 4}), make_shape_expr({n * 4}))), "Tensor[(n * 4,), float32]");
  EXPECT_EQ(deduce_memory(op::view(tensor("x", {n, 4, 8}), make_shape_expr({n, 32}))), "Tensor[(n, 32), float32]");
  EXPECT_EQ(deduce_memory(op::view(tensor("x", {n, 4}), Var("sh", shape_sinfo_rank(1)))), "Tensor[ndim=1, float32]");
  EXPECT_EQ(deduce_memory(op::view(tensor("x", {n, 4}), make_shape_expr({n * 2}))),
            "error: view: element counts are not provably equal: argument 0 (x) Tensor[(n, 4), "
            "float32] has `n * 4`, shape (n * 2,) has `n * 2`");
  EXPECT_EQ(deduce_memory(op::view(Var("x", tensor_sinfo_rank(2, kMemoryF32)), make_shape_expr({8}))),
            "error: view: argument 0 (x) Tensor[ndim=2, float32]: the element count must be known "
            "to view it without a copy");
}

TEST_F(MemoryOpsTest, ExplicitCallsCheckTheirCalleeAndReturnTheEmptyTuple) {
  IRModule mod;
  // @k(A, C, s): one buffer input, one output, one symbolic scalar.
  std::vector<PrimParam> params = {{std::nullopt, SymVar("a")}, {std::nullopt, SymVar("c")},
                                   {std::nullopt, SymVar("s")}};
  mod.add("k", Expr(std::make_shared<const PrimFuncNode>(std::move(params), Stmt(), Attrs{},
                                                         opaque_func_sinfo(object_sinfo(), false))));
  Expr gv = mod.global_var("k");
  Var t = tensor("t", {4});
  EXPECT_EQ(deduce_memory(op::call_tir_dps(gv, {tensor("a", {4})}, {t}, {n}), &mod), "Tuple[()]");
  EXPECT_EQ(deduce_memory(op::call_tir_dps(gv, {tensor("a", {4})}, {t}), &mod),
            "error: call_tir_dps: `k` has 3 parameters, but the call passes 1 arguments, 1 outputs "
            "and 0 symbolic arguments");
  EXPECT_EQ(deduce_memory(op::call_tir_dps(gv, {tensor("a", {4})}, {storage}, {n}), &mod),
            "error: call_tir_dps: argument 2 (outs): field 0: expected a Tensor, got Object");
  EXPECT_EQ(deduce_memory(op::call_library_dps("lib.add", {tensor("a", {4})}, {t})), "Tuple[()]");
  EXPECT_EQ(deduce_memory(op::call_library_dps("lib.add", {make_prim_value(1)}, {t})),
            "error: call_library_dps: argument 1 (args): field 0: expected a Tensor, got "
            "Prim[int64, 1]");
  EXPECT_FALSE(find_op("call_tir_dps")->pure);
  EXPECT_FALSE(find_op("call_library_dps")->pure);
}

// The lowered form of `y = call_tir(@add, (x, x))` as a module reads it.
constexpr const char* kLowered = R"(module {
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    s: Object = alloc_storage(prim(n * 16), alignment=128)
    y: Tensor[(n, 4), float32] = alloc_tensor(s, prim(0), shape(n, 4), dtype=float32, zero_init=true)
    c: Tuple[()] = call_tir_dps(@add, (x, x), (y,))
    v: Tensor[(n * 4,), float32] = view(y, shape(n * 4))
    k: Tuple[()] = kill_storage(s)
    return y
  }
  prim_func @add(A: Buffer[(a, 4), float32], B: Buffer[(a, 4), float32], C: Buffer[(a, 4), float32]) attrs {global_symbol = "add"} {
    for i in range(a) {
      for j in range(4) {
        C[i, j] = A[i, j] + B[i, j]
      }
    }
  }
}
)";

TEST(MemoryOpsRoundTrip, TheLoweredFormSurvivesTextAndJson) {
  absl::StatusOr<IRModule> mod = parse_module(kLowered);
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  const std::string text = to_text(*mod);
  EXPECT_THAT(text, ::testing::HasSubstr("alloc_storage(prim(n * 16), alignment=128)"));
  EXPECT_THAT(text, ::testing::HasSubstr("zero_init=true"));
  absl::StatusOr<IRModule> again = parse_module(text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(structural_equal(*mod, *again));
  absl::StatusOr<IRModule> from = from_json(to_json(*mod));
  ASSERT_TRUE(from.ok()) << from.status();
  EXPECT_FALSE(first_difference(*mod, *from).has_value());
}

TEST(MemoryOpsRoundTrip, DefaultAttributesAreLeftOut) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    s = alloc_storage(prim(16), alignment=64, dtype=uint8)
    y = alloc_tensor(s, prim(0), shape(4), dtype=float32, zero_init=false)
    return y
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string text = to_text(*mod);
  EXPECT_THAT(text, ::testing::HasSubstr("alloc_storage(prim(16))"));
  EXPECT_THAT(text, ::testing::HasSubstr("alloc_tensor(s, prim(0), shape(4), dtype=float32)"));
}

TEST(MemoryOpsWellFormed, KillsAndExplicitCallsMayNotStandInADataflowBlock) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    dataflow {
      s = alloc_storage(prim(16))
      output k = kill_storage(s)
    }
    return x
  }
})");
  if (mod.ok()) {
    absl::Status s = well_formed(*mod);
    EXPECT_THAT(s.message(), ::testing::HasSubstr("impure call to `kill_storage` inside a dataflow block"));
  } else {
    EXPECT_THAT(mod.status().message(), ::testing::HasSubstr("impure"));
  }
}

}  // namespace
}  // namespace relax
