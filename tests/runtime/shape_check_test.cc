// Matching arguments and match_casts against their patterns: the three
// phases (bind, solve, check) and the message of every kind of mismatch.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "relax/runtime/module.h"
#include "test_programs.h"
#include "vm_test_util.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using testing::bind_dim;
using testing::check_dim;
using testing::f32;
using testing::message;
using testing::op;
using testing::program;
using testing::run;
using testing::solve_dim;
using testing::sym;
using testing::tensor_pattern;

const DataType kF32 = DataType::float32();

// main(params...): matches param i against patterns[i] in one group, then
// returns Shape(slot 0, slot 1, ...) so that the tests see what was bound.
Executable matcher(std::vector<std::string> params, std::vector<std::string> slots,
                   std::vector<SymProgram> exprs, std::vector<ValuePattern> patterns,
                   bool checked = true) {
  VMFunction fn;
  fn.name = "main";
  fn.param_names = params;
  fn.num_registers = static_cast<int32_t>(params.size()) + 1;
  fn.slot_names = slots;
  fn.exprs = std::move(exprs);
  fn.patterns = std::move(patterns);
  MatchGroup g;
  g.checked = checked;
  for (size_t i = 0; i < params.size(); ++i) {
    g.items.push_back({static_cast<int32_t>(i), static_cast<int32_t>(i), "argument " + params[i]});
  }
  fn.matches = {g};
  Instruction make_shape = op(Opcode::kMakeShape, static_cast<int32_t>(params.size()));
  for (size_t s = 0; s < slots.size(); ++s) {
    make_shape.operands.push_back(sym(static_cast<int64_t>(fn.exprs.size())));
    fn.exprs.push_back(testing::slot_program(static_cast<int64_t>(s), slots[s]));
  }
  fn.code = {op(Opcode::kMatch, -1, 0), make_shape,
             op(Opcode::kRet, -1, 0, {testing::reg(static_cast<int64_t>(params.size()))})};
  Executable exec;
  exec.functions.push_back(std::move(fn));
  return exec;
}

const SymInstr kN{SymOp::kSlot, 0};
const SymInstr kM{SymOp::kSlot, 1};
SymInstr c(int64_t v) { return {SymOp::kConst, v}; }

// x: Tensor[(n, 4 * n), float32]
Executable bind_check() {
  return matcher({"x"}, {"n"}, {program("4 * n", {c(4), kN, {SymOp::kMul}})},
                 {tensor_pattern(kF32, {bind_dim(0, "n"), check_dim(0, "4 * n")})});
}

TEST(ShapeCheckTest, BindThenCheck) {
  absl::StatusOr<Value> v = run(bind_check(), {f32({3, 12}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(3)");
  v = run(bind_check(), {f32({3, 13}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(v), "main: argument x: dimension 1 is 13, expected 4 * n = 12 (n = 3)");
}

TEST(ShapeCheckTest, DtypeRankAndKind) {
  absl::StatusOr<Value> v =
      run(bind_check(), {testing::make_tensor<int32_t>({3, 12}, {}, DataType::int32())});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: expected a float32 tensor, got int32");
  v = run(bind_check(), {f32({2, 3, 4}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: expected rank 2, got rank 3 (Tensor[(2, 3, 4), float32])");
  v = run(bind_check(), {Value::shape({2, 3})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: expected a float32 tensor, got Shape(2, 3)");

  // An int tensor pattern without dims: "an", and any-dtype wording.
  Executable any = matcher({"x", "y"}, {}, {},
                           {testing::tensor_rank_pattern(DataType::int32(), 1),
                            testing::tensor_rank_pattern(std::nullopt, -1)});
  v = run(any, {f32({2}, {}), f32({2}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: expected an int32 tensor, got float32");
  v = run(any, {testing::make_tensor<int32_t>({2}, {}, DataType::int32()), Value(1)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument y: expected a tensor, got 1");
  v = run(any, {testing::make_tensor<int32_t>({2}, {}, DataType::int32()), f32({1, 2, 3}, {})});
  EXPECT_TRUE(v.ok()) << v.status();
}

TEST(ShapeCheckTest, ArgumentCount) {
  Executable exec = matcher({"x", "w"}, {}, {}, {testing::object_pattern(), testing::object_pattern()});
  absl::StatusOr<Value> v = run(exec, {Value(1), Value(2), Value(3)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: expected 2 arguments (x, w), got 3");
}

// x: Tensor[(m,)], y: Tensor[(2 * n,)]: n is solved from y.
Executable solve_program(int64_t rest) {
  return matcher({"x", "y"}, {"m", "n"}, {testing::const_program(rest)},
                 {tensor_pattern(kF32, {bind_dim(0, "m")}),
                  tensor_pattern(kF32, {solve_dim(1, 2, 0, rest == 0 ? "2 * n" : "2 * n + 3")})});
}

TEST(ShapeCheckTest, SolveExactly) {
  absl::StatusOr<Value> v = run(solve_program(0), {f32({5}, {}), f32({8}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(5, 4)");
  v = run(solve_program(0), {f32({5}, {}), f32({7}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument y: dimension 0 is 7, which is not 2 * n (n would be 3.5)");
  v = run(solve_program(3), {f32({5}, {}), f32({1}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument y: dimension 0 is 1, which is not 2 * n + 3 (n would be -1)");
  v = run(solve_program(3), {f32({5}, {}), f32({9}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(5, 3)");

  // A negative coefficient: dim = 10 - n.
  Executable negative = matcher({"s"}, {"n"}, {testing::const_program(10)},
                                {testing::shape_pattern({solve_dim(0, -1, 0, "10 - n")})});
  v = run(negative, {Value::shape({4})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(6)");
  v = run(negative, {Value::shape({11})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument s: dimension 0 is 11, which is not 10 - n (n would be -1)");
}

TEST(ShapeCheckTest, SolveOverflowIsAnError) {
  Executable exec = matcher({"s"}, {"n"}, {testing::const_program(INT64_MIN)},
                            {testing::shape_pattern({solve_dim(0, 1, 0, "n + small")})});
  absl::StatusOr<Value> v = run(exec, {Value::shape({5})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument s: dimension 0 is 5, solving n + small for n overflows int64");
}

// x: Tensor[(2 * n + m,)], y: Tensor[(m,)]: the solve of x needs m, which y binds.
TEST(ShapeCheckTest, SolveUsesVariablesBoundByLaterArguments) {
  Executable exec = matcher({"x", "y"}, {"m", "n"}, {testing::slot_program(0, "m")},
                            {tensor_pattern(kF32, {solve_dim(1, 2, 0, "2 * n + m")}),
                             tensor_pattern(kF32, {bind_dim(0, "m")})});
  absl::StatusOr<Value> v = run(exec, {f32({11}, {}), f32({3}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(3, 4)");
  v = run(exec, {f32({10}, {}), f32({3}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v),
            "main: argument x: dimension 0 is 10, which is not 2 * n + m (n would be 3.5, m = 3)");
}

TEST(ShapeCheckTest, SolveOfAnUnboundRestNamesTheVariable) {
  Executable exec = matcher({"x"}, {"n", "k"}, {testing::slot_program(1, "k")},
                            {tensor_pattern(kF32, {solve_dim(0, 2, 0, "2 * n + k")})});
  absl::StatusOr<Value> v = run(exec, {f32({4}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v),
            "main: argument x: dimension 0 (2 * n + k): symbolic variable k is used before it is "
            "bound (in k)");
}

TEST(ShapeCheckTest, ASolvedVariableThatIsBoundAlreadyIsChecked) {
  // x: (n,), y: (2 * n,) where y's pattern solves n again.
  Executable exec = matcher({"x", "y"}, {"n"}, {testing::const_program(0)},
                            {tensor_pattern(kF32, {bind_dim(0, "n")}),
                             tensor_pattern(kF32, {solve_dim(0, 2, 0, "2 * n")})});
  absl::StatusOr<Value> v = run(exec, {f32({3}, {}), f32({6}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  v = run(exec, {f32({3}, {}), f32({8}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument y: dimension 0 is 8, which is not 2 * n (n = 3)");
}

// x: Tensor[(n + m,)], y: Tensor[(n, m)]: x's check runs after y binds.
TEST(ShapeCheckTest, ChecksRunAfterEveryBind) {
  Executable exec = matcher({"x", "y"}, {"n", "m"}, {program("n + m", {kN, kM, {SymOp::kAdd}})},
                            {tensor_pattern(kF32, {check_dim(0, "n + m")}),
                             tensor_pattern(kF32, {bind_dim(0, "n"), bind_dim(1, "m")})});
  absl::StatusOr<Value> v = run(exec, {f32({5}, {}), f32({2, 3}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(2, 3)");
  v = run(exec, {f32({6}, {}), f32({2, 3}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: dimension 0 is 6, expected n + m = 5 (n = 2, m = 3)");
}

TEST(ShapeCheckTest, ConstantAndRepeatedDims) {
  Executable exec = matcher({"x"}, {"n"}, {testing::const_program(4), testing::slot_program(0, "n")},
                            {tensor_pattern(kF32, {check_dim(0, "4"), bind_dim(0, "n"), check_dim(1, "n")})});
  absl::StatusOr<Value> v = run(exec, {f32({4, 3, 3}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  v = run(exec, {f32({5, 3, 3}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: dimension 0 is 5, expected 4");
  v = run(exec, {f32({4, 3, 2}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: dimension 2 is 2, expected n = 3");
}

TEST(ShapeCheckTest, CheckOverflowNamesTheExpression) {
  const int64_t big = int64_t{1} << 62;
  Executable exec = matcher({"s"}, {"n"}, {program("big * n", {c(big), kN, {SymOp::kMul}})},
                            {testing::shape_pattern({bind_dim(0, "n"), check_dim(0, "big * n")})});
  absl::StatusOr<Value> v = run(exec, {Value::shape({4, 1})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument s: dimension 1 (big * n): big * n overflows int64 (n = 4)");
}

// t: Tuple[Tensor[(n,), float32], Tensor[(n, 2), float32]]
Executable tuple_program() {
  return matcher({"t"}, {"n"}, {testing::slot_program(0, "n"), testing::const_program(2)},
                 {testing::tuple_pattern({tensor_pattern(kF32, {bind_dim(0, "n")}),
                                          tensor_pattern(kF32, {check_dim(0, "n"), check_dim(1, "2")})})});
}

TEST(ShapeCheckTest, TuplesAreMatchedFieldByField) {
  absl::StatusOr<Value> v = run(tuple_program(), {Value::tuple({f32({3}, {}), f32({3, 2}, {})})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(3)");
  v = run(tuple_program(), {Value::tuple({f32({3}, {}), f32({3}, {})})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument t, field 1: expected rank 2, got rank 1 (Tensor[(3,), float32])");
  v = run(tuple_program(), {Value::tuple({f32({3}, {}), f32({4, 2}, {})})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument t, field 1: dimension 0 is 4, expected n = 3");
  v = run(tuple_program(), {Value::tuple({f32({3}, {})})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument t: expected a tuple of 2 fields, got (Tensor[(3,), float32],)");
  v = run(tuple_program(), {Value(3)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument t: expected a tuple of 2 fields, got 3");

  // Nested tuples name the whole path.
  Executable nested = matcher({"t"}, {}, {},
                              {testing::tuple_pattern({testing::object_pattern(),
                                                       testing::tuple_pattern({testing::tensor_rank_pattern(kF32, 1)})})});
  v = run(nested, {Value::tuple({Value(), Value::tuple({Value(2)})})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument t, field 1, field 0: expected a float32 tensor, got 2");
}

// s: Shape([n, 2 * n])
TEST(ShapeCheckTest, ShapeValues) {
  Executable exec = matcher({"s"}, {"n"}, {program("2 * n", {c(2), kN, {SymOp::kMul}})},
                            {testing::shape_pattern({bind_dim(0, "n"), check_dim(0, "2 * n")})});
  absl::StatusOr<Value> v = run(exec, {Value::shape({3, 6})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(3)");
  v = run(exec, {Value::shape({3, 7})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument s: dimension 1 is 7, expected 2 * n = 6 (n = 3)");
  v = run(exec, {Value(3)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument s: expected a shape, got 3");
  v = run(exec, {Value::shape({1, 2, 3})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument s: expected rank 2, got rank 3 (Shape(1, 2, 3))");
}

// x: Tensor[(n,)], k: Prim(int64, value = n + 1), f: Prim(float32)
TEST(ShapeCheckTest, PrimValues) {
  Executable exec = matcher({"x", "k", "f"}, {"n"}, {program("n + 1", {kN, c(1), {SymOp::kAdd}})},
                            {tensor_pattern(kF32, {bind_dim(0, "n")}),
                             testing::prim_pattern(DataType::int64(), {check_dim(0, "n + 1")}),
                             testing::prim_pattern(kF32)});
  absl::StatusOr<Value> v = run(exec, {f32({3}, {}), Value(4), Value(0.5)});
  ASSERT_TRUE(v.ok()) << v.status();
  v = run(exec, {f32({3}, {}), Value(5), Value(0.5)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument k: value is 5, expected n + 1 = 4 (n = 3)");
  v = run(exec, {f32({3}, {}), Value(0.5), Value(0.5)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument k: expected an int64 value, got a float (0.5)");
  v = run(exec, {f32({3}, {}), Value(4), Value(1)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument f: expected a float32 value, got an int (1)");

  Executable untyped = matcher({"p"}, {}, {}, {testing::prim_pattern(std::nullopt)});
  EXPECT_TRUE(run(untyped, {Value(1)}).ok());
  EXPECT_TRUE(run(untyped, {Value(1.5)}).ok());
  v = run(untyped, {Value(std::string("s"))});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument p: expected a number, got a string (\"s\")");
}

TEST(ShapeCheckTest, ObjectAcceptsAnythingFunctionNothing) {
  Executable object = matcher({"o"}, {}, {}, {testing::object_pattern()});
  for (const Value& v : {Value(), Value(1), Value::shape({1}), Value(f32({2}, {})), Value::tuple({})}) {
    EXPECT_TRUE(run(object, {v}).ok()) << v.describe();
  }
  ValuePattern func;
  func.kind = PatternKind::kFunc;
  absl::StatusOr<Value> v = run(matcher({"f"}, {}, {}, {func}), {Value(1)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument f: expected a function, got 1");
}

TEST(ShapeCheckTest, MatchCastRebindingChecksTheBoundValue) {
  // main(x: Tensor[(n,)], y) { lv = match_cast(y, Tensor[(n,)]); ... }
  Executable exec = matcher({"x", "y"}, {"n"}, {},
                            {tensor_pattern(kF32, {bind_dim(0, "n")}), testing::object_pattern(),
                             tensor_pattern(kF32, {bind_dim(0, "n")})});
  VMFunction& fn = exec.functions[0];
  fn.matches.push_back(testing::group({{1, 2, "match_cast of lv"}}));
  fn.code.insert(fn.code.begin() + 1, op(Opcode::kMatch, -1, 1));
  absl::StatusOr<Value> v = run(exec, {f32({3}, {}), f32({3}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  v = run(exec, {f32({3}, {}), f32({5}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: match_cast of lv: dimension 0 is 5, expected n = 3");
}

TEST(ShapeCheckTest, UncheckedGroupsOnlyBindAndSolve) {
  // x: Tensor[(n, 4 * n), float32], y: Tensor[(2 * m,), float32], unchecked.
  Executable exec = matcher({"x", "y"}, {"n", "m"},
                            {program("4 * n", {c(4), kN, {SymOp::kMul}}), testing::const_program(0)},
                            {tensor_pattern(kF32, {bind_dim(0, "n"), check_dim(0, "4 * n")}),
                             tensor_pattern(kF32, {solve_dim(1, 2, 1, "2 * m")})},
                            /*checked=*/false);
  // A wrong dtype, a wrong checked dim and an inexact solve all pass.
  absl::StatusOr<Value> v =
      run(exec, {testing::make_tensor<int32_t>({3, 13}, {}, DataType::int32()), f32({7}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(3, 3)");
  // Dims can only be read from a tensor of the right rank.
  v = run(exec, {f32({3}, {}), f32({8}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: expected rank 2, got rank 1 (Tensor[(3,), float32])");
  v = run(exec, {Value(1), f32({8}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument x: expected a float32 tensor, got 1");
  // A second bind of a bound variable is not compared.
  Executable twice = matcher({"x", "y"}, {"n"}, {},
                             {tensor_pattern(kF32, {bind_dim(0, "n")}), tensor_pattern(kF32, {bind_dim(0, "n")})},
                             false);
  v = run(twice, {f32({3}, {}), f32({4}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "Shape(3)");
  // Patterns without dims are not looked at.
  Executable loose = matcher({"x"}, {}, {}, {testing::tensor_rank_pattern(kF32, 2)}, false);
  EXPECT_TRUE(run(loose, {Value(std::string("not a tensor"))}).ok());
}

}  // namespace
}  // namespace relax::runtime
