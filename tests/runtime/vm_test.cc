// The VirtualMachine, opcode by opcode, on hand-built Executables: values and
// tuples, symbolic arithmetic and its errors, allocation, kernel and library
// calls, function calls with recursion, branches.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "relax/runtime/module.h"
#include "test_programs.h"
#include "vm_test_util.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using testing::cst;
using testing::imm;
using testing::message;
using testing::op;
using testing::program;
using testing::reg;
using testing::run;
using testing::sym;

// A function `name` with `params`, `regs` registers and `code`; other tables empty.
VMFunction function(std::string name, std::vector<std::string> params, int32_t regs,
                    std::vector<Instruction> code) {
  VMFunction fn;
  fn.name = std::move(name);
  fn.param_names = std::move(params);
  fn.num_registers = regs;
  fn.code = std::move(code);
  return fn;
}

Executable single(VMFunction fn) {
  Executable exec;
  exec.functions.push_back(std::move(fn));
  return exec;
}

// n: an int64 prim argument bound to slot 0.
VMFunction with_int_param(VMFunction fn) {
  fn.param_names = {"n"};
  fn.slot_names.insert(fn.slot_names.begin(), "n");
  fn.patterns.push_back(testing::prim_pattern(DataType::int64(), {testing::bind_dim(0, "n")}));
  fn.matches.push_back(testing::group({{0, static_cast<int32_t>(fn.patterns.size()) - 1, "argument n"}}));
  fn.code.insert(fn.code.begin(), op(Opcode::kMatch, -1, static_cast<int64_t>(fn.matches.size()) - 1));
  return fn;
}

TEST(VMTest, LoadConstMoveAndRet) {
  Executable exec = single(function("main", {}, 2,
                                    {op(Opcode::kLoadConst, 0, 0), op(Opcode::kMove, 1, 0, {reg(0)}),
                                     op(Opcode::kRet, -1, 0, {reg(1)})}));
  exec.constants = {Value(std::string("hello"))};
  absl::StatusOr<Value> v = run(exec, {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->is_string());
  EXPECT_EQ(v->string_value_or_die(), "hello");
}

TEST(VMTest, RetOfImmediateAndConstant) {
  Executable exec = single(function("main", {}, 0, {op(Opcode::kRet, -1, 0, {cst(0)})}));
  exec.constants = {Value(2.5)};
  absl::StatusOr<Value> v = run(exec, {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->float_value_or_die(), 2.5);
  exec.functions[0].code = {op(Opcode::kRet, -1, 0, {imm(-4)})};
  v = run(exec, {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->int_value_or_die(), -4);
}

TEST(VMTest, MakeShapeAndMakeInt) {
  VMFunction fn = function("main", {}, 2,
                           {op(Opcode::kMakeShape, 0, 0, {sym(0), imm(7), sym(1)}),
                            op(Opcode::kMakeInt, 1, 0, {sym(1)}), op(Opcode::kMakeTuple, 0, 0, {reg(0), reg(1)}),
                            op(Opcode::kRet, -1, 0, {reg(0)})});
  fn.exprs = {testing::const_program(3),
              program("2 * 3", {{SymOp::kConst, 2}, {SymOp::kConst, 3}, {SymOp::kMul}})};
  absl::StatusOr<Value> v = run(single(fn), {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "(Shape(3, 7, 6), 6)");
}

// Every symbolic op, on n = 7, through one make_shape.
TEST(VMTest, SymbolicOpsFollowFloorSemantics) {
  using I = SymInstr;
  const I n{SymOp::kSlot, 0};
  auto c = [](int64_t v) { return I{SymOp::kConst, v}; };
  std::vector<std::pair<SymProgram, int64_t>> cases = {
      {program("n + 2", {n, c(2), {SymOp::kAdd}}), 9},
      {program("n - 10", {n, c(10), {SymOp::kSub}}), -3},
      {program("n * 3", {n, c(3), {SymOp::kMul}}), 21},
      {program("-n // 2", {n, {SymOp::kNeg}, c(2), {SymOp::kFloorDiv}}), -4},
      {program("-n % 2", {n, {SymOp::kNeg}, c(2), {SymOp::kFloorMod}}), 1},
      {program("n // -2", {n, c(-2), {SymOp::kFloorDiv}}), -4},
      {program("n % -2", {n, c(-2), {SymOp::kFloorMod}}), -1},
      {program("n // 2", {n, c(2), {SymOp::kFloorDiv}}), 3},
      {program("n % 3", {n, c(3), {SymOp::kFloorMod}}), 1},
      {program("min(n, 3)", {n, c(3), {SymOp::kMin}}), 3},
      {program("max(n, 3)", {n, c(3), {SymOp::kMax}}), 7},
      {program("n == 7", {n, c(7), {SymOp::kEq}}), 1},
      {program("n != 7", {n, c(7), {SymOp::kNe}}), 0},
      {program("3 < n", {c(3), n, {SymOp::kLt}}), 1},
      {program("n < 3", {n, c(3), {SymOp::kLt}}), 0},
      {program("n <= 7", {n, c(7), {SymOp::kLe}}), 1},
      {program("n && 0", {n, c(0), {SymOp::kAnd}}), 0},
      {program("n && 2", {n, c(2), {SymOp::kAnd}}), 1},
      {program("0 || n", {c(0), n, {SymOp::kOr}}), 1},
      {program("0 || 0", {c(0), c(0), {SymOp::kOr}}), 0},
      {program("!n", {n, {SymOp::kNot}}), 0},
      {program("!0", {c(0), {SymOp::kNot}}), 1},
      {program("n < 3 ? 100 : 200", {n, c(3), {SymOp::kLt}, c(100), c(200), {SymOp::kSelect}}), 200},
      {program("n > 3 ? 100 : 200", {c(3), n, {SymOp::kLt}, c(100), c(200), {SymOp::kSelect}}), 100},
  };
  VMFunction fn = function("main", {}, 2, {});
  Instruction make_shape = op(Opcode::kMakeShape, 1);
  std::vector<int64_t> expected;
  for (size_t i = 0; i < cases.size(); ++i) {
    fn.exprs.push_back(cases[i].first);
    make_shape.operands.push_back(sym(static_cast<int64_t>(i)));
    expected.push_back(cases[i].second);
  }
  fn.code = {make_shape, op(Opcode::kRet, -1, 0, {reg(1)})};
  absl::StatusOr<Value> v = run(single(with_int_param(fn)), {Value(7)});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->shape_dims_or_die(), expected);
}

TEST(VMTest, SymbolicOverflowNamesTheExpression) {
  VMFunction fn = function("main", {}, 2, {op(Opcode::kMakeInt, 1, 0, {sym(0)}), op(Opcode::kRet, -1, 0, {reg(1)})});
  fn.exprs = {program("4 * n", {{SymOp::kConst, 4}, {SymOp::kSlot, 0}, {SymOp::kMul}})};
  Executable exec = single(with_int_param(fn));
  absl::StatusOr<Value> v = run(exec, {Value(int64_t{1} << 61)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(v), "main: 4 * n overflows int64 (n = 2305843009213693952)");

  for (auto [ops, text] : std::vector<std::pair<std::vector<SymInstr>, std::string>>{
           {{{SymOp::kSlot, 0}, {SymOp::kConst, INT64_MAX}, {SymOp::kAdd}}, "n + big"},
           {{{SymOp::kConst, INT64_MIN}, {SymOp::kSlot, 0}, {SymOp::kSub}}, "small - n"},
           {{{SymOp::kConst, INT64_MIN}, {SymOp::kNeg}}, "-small"},
           {{{SymOp::kConst, INT64_MIN}, {SymOp::kConst, -1}, {SymOp::kFloorDiv}}, "small // -1"}}) {
    exec.functions[0].exprs[0] = program(text, ops);
    v = run(exec, {Value(1)});
    ASSERT_FALSE(v.ok()) << text;
    EXPECT_THAT(message(v), HasSubstr(text + " overflows int64")) << text;
  }
  // floormod by -1 is 0, not an overflow.
  exec.functions[0].exprs[0] =
      program("small % -1", {{SymOp::kConst, INT64_MIN}, {SymOp::kConst, -1}, {SymOp::kFloorMod}});
  v = run(exec, {Value(1)});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->int_value_or_die(), 0);
}

TEST(VMTest, DivisionByZeroIsAnError) {
  VMFunction fn = function("main", {}, 2, {op(Opcode::kMakeInt, 1, 0, {sym(0)}), op(Opcode::kRet, -1, 0, {reg(1)})});
  fn.exprs = {program("8 // n", {{SymOp::kConst, 8}, {SymOp::kSlot, 0}, {SymOp::kFloorDiv}})};
  Executable exec = single(with_int_param(fn));
  absl::StatusOr<Value> v = run(exec, {Value(0)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: division by zero in 8 // n (n = 0)");
  exec.functions[0].exprs[0] = program("8 % n", {{SymOp::kConst, 8}, {SymOp::kSlot, 0}, {SymOp::kFloorMod}});
  v = run(exec, {Value(0)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: division by zero in 8 % n (n = 0)");
  v = run(exec, {Value(3)});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->int_value_or_die(), 2);
}

TEST(VMTest, UnboundSlotNamesTheVariable) {
  VMFunction fn = function("main", {}, 2, {op(Opcode::kMakeInt, 1, 0, {sym(0)}), op(Opcode::kRet, -1, 0, {reg(1)})});
  fn.slot_names = {"k"};
  fn.exprs = {program("n + k", {{SymOp::kSlot, 0}, {SymOp::kSlot, 1}, {SymOp::kAdd}})};
  absl::StatusOr<Value> v = run(single(with_int_param(fn)), {Value(2)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: symbolic variable k is used before it is bound (in n + k)");
}

TEST(VMTest, MakeTupleAndTupleGet) {
  VMFunction fn = function("main", {"x"}, 4,
                           {op(Opcode::kMakeTuple, 1, 0, {reg(0), cst(0), sym(0), imm(9)}),
                            op(Opcode::kTupleGet, 2, 1, {reg(1)}), op(Opcode::kTupleGet, 3, 3, {reg(1)}),
                            op(Opcode::kMakeTuple, 1, 0, {reg(1), reg(2), reg(3)}), op(Opcode::kRet, -1, 0, {reg(1)})});
  fn.exprs = {testing::const_program(5)};
  Executable exec = single(fn);
  exec.constants = {Value(1.5)};
  absl::StatusOr<Value> v = run(exec, {Value(std::string("s"))});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "((\"s\", 1.5, 5, 9), 1.5, 9)");
}

TEST(VMTest, TupleGetChecksTheValue) {
  Executable exec = single(function(
      "main", {"t"}, 2, {op(Opcode::kTupleGet, 1, 2, {reg(0)}), op(Opcode::kRet, -1, 0, {reg(1)})}));
  absl::StatusOr<Value> v = run(exec, {Value::tuple({Value(1), Value(2)})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: tuple_get: field 2 of a tuple of 2 fields (1, 2)");
  v = run(exec, {Value(3)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: tuple_get: expected a tuple, got 3");
  v = run(exec, {Value::tuple({Value(1), Value(2), Value(std::string("z"))})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->string_value_or_die(), "z");
}

TEST(VMTest, AllocTensorIsZeroFilled) {
  VMFunction fn = function("main", {}, 1,
                           {op(Opcode::kAllocTensor, 0, 0, {imm(2), sym(0)}, DataType::int32()),
                            op(Opcode::kRet, -1, 0, {reg(0)})});
  fn.exprs = {testing::const_program(3)};
  absl::StatusOr<Value> v = run(single(fn), {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->is_tensor());
  EXPECT_EQ(v->describe(), "Tensor[(2, 3), int32]");
  EXPECT_EQ(testing::elements<int32_t>(v->tensor_or_die()), std::vector<int32_t>(6, 0));

  fn.exprs = {testing::const_program(-3)};
  v = run(single(fn), {});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(message(v), HasSubstr("main: alloc_tensor: "));
  EXPECT_THAT(message(v), HasSubstr("negative"));
}

// ---------------------------------------------------------------------------
// Library functions.

void register_test_library() {
  static const bool registered = [] {
    register_library_function("vm_test.add_f32", [](const std::vector<Value>& args) {
      if (args.size() != 3) return absl::InvalidArgumentError("expected 3 arguments");
      const Tensor& a = args[0].tensor_or_die();
      const Tensor& b = args[1].tensor_or_die();
      const Tensor& out = args[2].tensor_or_die();
      for (int64_t i = 0; i < out.numel(); ++i) {
        out.data_as_or_die<float>()[i] = a.data_as_or_die<float>()[i] + b.data_as_or_die<float>()[i];
      }
      return absl::OkStatus();
    });
    register_library_function("vm_test.fill", [](const std::vector<Value>& args) {
      if (args.size() != 2 || !args[0].is_tensor() || !args[1].is_int()) {
        return absl::InvalidArgumentError("fill(out, int)");
      }
      for (int64_t i = 0; i < args[0].tensor_or_die().numel(); ++i) {
        args[0].tensor_or_die().data_as_or_die<int64_t>()[i] = args[1].int_value_or_die();
      }
      return absl::OkStatus();
    });
    register_library_function("vm_test.fail", [](const std::vector<Value>&) {
      return absl::UnavailableError("boom");
    });
    return true;
  }();
  (void)registered;
}

TEST(VMTest, CallLibraryWritesTheDestination) {
  register_test_library();
  Executable exec = testing::add_program();
  exec.kernel_names.clear();
  exec.library_functions = {"vm_test.add_f32"};
  exec.functions[0].code[2] = op(Opcode::kCallLibrary, -1, 0, {reg(0), reg(1), reg(2)});
  absl::StatusOr<Value> v =
      run(exec, {testing::f32({3}, {1, 2, 3}), testing::f32({3}, {10, 20, 30})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<float>(v->tensor_or_die()), (std::vector<float>{11, 22, 33}));
}

TEST(VMTest, CallLibraryPassesSymbolicIntegers) {
  register_test_library();
  VMFunction fn = function("main", {}, 1,
                           {op(Opcode::kAllocTensor, 0, 0, {imm(4)}, DataType::int64()),
                            op(Opcode::kCallLibrary, -1, 0, {reg(0), sym(0)}), op(Opcode::kRet, -1, 0, {reg(0)})});
  fn.exprs = {program("6 * 7", {{SymOp::kConst, 6}, {SymOp::kConst, 7}, {SymOp::kMul}})};
  Executable exec = single(fn);
  exec.library_functions = {"vm_test.fill"};
  absl::StatusOr<Value> v = run(exec, {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<int64_t>(v->tensor_or_die()), std::vector<int64_t>(4, 42));
}

TEST(VMTest, LibraryErrorsKeepTheirCodeAndNameTheFunction) {
  register_test_library();
  Executable exec = single(function("main", {}, 0,
                                    {op(Opcode::kCallLibrary, -1, 0, {imm(1)}), op(Opcode::kRet, -1, 0, {imm(0)})}));
  exec.library_functions = {"vm_test.fail"};
  absl::StatusOr<Value> v = run(exec, {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(message(v), "main: library function vm_test.fail: boom");
}

// ---------------------------------------------------------------------------
// Kernels.

TEST(VMTest, CallKernelMarshalsBuffers) {
  absl::StatusOr<Value> v =
      run(testing::add_program(), {testing::f32({4}, {1, 2, 3, 4}), testing::f32({4}, {0.5, 0.5, 0.5, 0.5})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<float>(v->tensor_or_die()), (std::vector<float>{1.5, 2.5, 3.5, 4.5}));
}

TEST(VMTest, CallKernelMarshalsFloatsAndInts) {
  Executable exec = testing::aot_program();
  absl::StatusOr<Value> v = run(exec, {testing::f32({2}, {1, 2}), testing::f32({2}, {3, 4})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<float>(v->tensor_or_die()), (std::vector<float>{2, 3}));  // (x + y) * 0.5

  v = run(exec, {testing::i64({3}, {10, 20, 30})}, "offset");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->is_tuple());
  EXPECT_EQ(testing::elements<int64_t>(v->fields_or_die()[0].tensor_or_die()), (std::vector<int64_t>{13, 23, 33}));
  EXPECT_EQ(v->fields_or_die()[1].describe(), "Shape(3, 6)");
}

TEST(VMTest, AStridedArgumentReachesTheKernelsAsACompactCopy) {
  // add_kernel wants compact buffers ("argument 0 is not compact" otherwise); the call
  // copies the strided view first, even through the unchecked match.
  std::vector<float> data = {1, 0, 2, 0, 3, 0};
  Tensor strided = Tensor::borrow(data.data(), {3}, DataType::float32(), {2});
  absl::StatusOr<Value> v = run(testing::add_program(false), {strided, testing::f32({3}, {1, 1, 1})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<float>(v->tensor_or_die()), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(data, (std::vector<float>{1, 0, 2, 0, 3, 0}));  // the argument is not written
}

TEST(VMTest, KernelErrorsAreReportedWithTheKernelsMessage) {
  absl::StatusOr<Value> v =
      run(testing::add_program(false), {testing::f32({3}, {1, 2, 3}), testing::f32({2}, {1, 2})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v),
            "main: kernel add_kernel: dim 0 of arguments 0 and 1 differ: 3 vs 2");

  Executable exec = single(function("main", {}, 0,
                                    {op(Opcode::kCallKernel, -1, 0, {imm(1), imm(2)}), op(Opcode::kRet, -1, 0, {imm(0)})}));
  exec.kernel_names = {"fail_kernel"};
  v = run(exec, {});
  ASSERT_FALSE(v.ok());
  // The message is cut at the 512-byte buffer (511 characters and the NUL).
  const std::string prefix = "main: kernel fail_kernel: ";
  EXPECT_EQ(message(v).size(), prefix.size() + 511);
  EXPECT_THAT(message(v), ::testing::StartsWith(prefix + "deliberate failure with 1023 bytes: xxx"));

  exec.kernel_names = {"silent_fail_kernel"};
  v = run(exec, {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: kernel silent_fail_kernel: failed with code 3 and no message");
}

TEST(VMTest, KernelArgumentsMustBeTensorsOrNumbers) {
  Executable exec = single(function("main", {"x"}, 1,
                                    {op(Opcode::kCallKernel, -1, 0, {imm(1), reg(0)}), op(Opcode::kRet, -1, 0, {imm(0)})}));
  exec.kernel_names = {"add_kernel"};
  absl::StatusOr<Value> v = run(exec, {Value::shape({2})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: kernel add_kernel: argument 1 is a shape (Shape(2)), which a kernel cannot take");
  v = run(exec, {Value()});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: kernel add_kernel: argument 1 is a none (None), which a kernel cannot take");
}

// ---------------------------------------------------------------------------
// Calls and control flow.

// sum(n) = n == 0 ? 0 : n + sum(n - 1), by kCallFunc recursion and kIf.
Executable sum_program() {
  VMFunction fn = function("sum", {"n"}, 4, {});
  fn.slot_names = {"n", "acc"};
  const SymInstr n{SymOp::kSlot, 0};
  fn.exprs = {program("n == 0", {n, {SymOp::kConst, 0}, {SymOp::kEq}}),
              program("n - 1", {n, {SymOp::kConst, 1}, {SymOp::kSub}}),
              program("n + acc", {n, {SymOp::kSlot, 1}, {SymOp::kAdd}})};
  fn.patterns = {testing::prim_pattern(DataType::int64(), {testing::bind_dim(0, "n")}),
                 testing::prim_pattern(DataType::int64(), {testing::bind_dim(1, "acc")})};
  fn.matches = {testing::group({{0, 0, "argument n"}}), testing::group({{2, 1, "the result of sum"}})};
  fn.code = {op(Opcode::kMatch, -1, 0),
             op(Opcode::kIf, -1, 3, {sym(0)}),
             op(Opcode::kRet, -1, 0, {imm(0)}),
             op(Opcode::kMakeInt, 1, 0, {sym(1)}),
             op(Opcode::kCallFunc, 2, 0, {reg(1)}),
             op(Opcode::kMatch, -1, 1),
             op(Opcode::kMakeInt, 3, 0, {sym(2)}),
             op(Opcode::kRet, -1, 0, {reg(3)})};
  return single(fn);
}

TEST(VMTest, RecursionThroughCallFuncAndIf) {
  for (int64_t n : {0, 1, 10, 100, 5000}) {
    absl::StatusOr<Value> v = run(sum_program(), {Value(n)}, "sum");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->int_value_or_die(), n * (n + 1) / 2);
  }
}

TEST(VMTest, DeepRecursionIsAnErrorNotACrash) {
  absl::StatusOr<Value> v = run(sum_program(), {Value(int64_t{1} << 40)}, "sum");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(message(v), "sum: call of sum: calls nested deeper than 10000 (unbounded recursion?)");
}

// count(n, acc) = n == 0 ? acc : count(n - 1, acc + n): the call's value is moved and returned
// after a jump, a tail call, which takes the caller's frame -- far deeper than kMaxCallDepth.
TEST(VMTest, TailCallsDoNotGrowTheStack) {
  VMFunction fn = function("count", {"n", "acc"}, 6, {});
  fn.slot_names = {"n", "acc"};
  const SymInstr n{SymOp::kSlot, 0};
  fn.exprs = {program("n == 0", {n, {SymOp::kConst, 0}, {SymOp::kEq}}),
              program("n - 1", {n, {SymOp::kConst, 1}, {SymOp::kSub}}),
              program("acc + n", {{SymOp::kSlot, 1}, n, {SymOp::kAdd}})};
  fn.patterns = {testing::prim_pattern(DataType::int64(), {testing::bind_dim(0, "n")}),
                 testing::prim_pattern(DataType::int64(), {testing::bind_dim(1, "acc")})};
  fn.matches = {testing::group({{0, 0, "argument n"}, {1, 1, "argument acc"}})};
  fn.code = {op(Opcode::kMatch, -1, 0),
             op(Opcode::kIf, -1, 3, {sym(0)}),
             op(Opcode::kRet, -1, 0, {reg(1)}),
             op(Opcode::kMakeInt, 2, 0, {sym(1)}),
             op(Opcode::kMakeInt, 3, 0, {sym(2)}),
             op(Opcode::kCallFunc, 4, 0, {reg(2), reg(3)}),
             op(Opcode::kMove, 5, 0, {reg(4)}),
             op(Opcode::kGoto, -1, 8),
             op(Opcode::kRet, -1, 0, {reg(5)})};
  for (int64_t k : {int64_t{0}, int64_t{7}, int64_t{100000}}) {
    absl::StatusOr<Value> v = run(single(fn), {Value(k), Value(int64_t{0})}, "count");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->int_value_or_die(), k * (k + 1) / 2);
  }
}

TEST(VMTest, CallFuncChecksTheArgumentCount) {
  Executable exec = sum_program();
  exec.functions.push_back(function("main", {}, 1,
                                    {op(Opcode::kCallFunc, 0, 0, {imm(1), imm(2)}), op(Opcode::kRet, -1, 0, {reg(0)})}));
  absl::StatusOr<Value> v = run(exec, {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "sum: expected 1 argument (n), got 2");
  exec.functions[1].code[0].operands = {imm(4)};
  v = run(exec, {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->int_value_or_die(), 10);
}

TEST(VMTest, ArgumentCountMismatch) {
  absl::StatusOr<Value> v = run(testing::add_program(), {Value(1), Value(2), Value(3)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(v), "main: expected 2 arguments (x, y), got 3");
  v = run(sum_program(), {}, "sum");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "sum: expected 1 argument (n), got 0");
}

// cond(c) = c ? 1 : 0, with c in a register.
Executable cond_program() {
  return single(function("main", {"c"}, 1,
                         {op(Opcode::kIf, -1, 2, {reg(0)}), op(Opcode::kRet, -1, 0, {imm(1)}),
                          op(Opcode::kRet, -1, 0, {imm(0)})}));
}

TEST(VMTest, IfTestsIntsAndOneElementTensors) {
  auto cond = [](Value c) -> int64_t {
    absl::StatusOr<Value> v = run(cond_program(), {std::move(c)});
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? v->int_value_or_die() : -1;
  };
  EXPECT_EQ(cond(Value(5)), 1);
  EXPECT_EQ(cond(Value(0)), 0);
  EXPECT_EQ(cond(testing::make_tensor<uint8_t>({}, {1}, DataType::boolean())), 1);
  EXPECT_EQ(cond(testing::make_tensor<uint8_t>({}, {0}, DataType::boolean())), 0);
  EXPECT_EQ(cond(testing::make_tensor<int32_t>({1}, {-3}, DataType::int32())), 1);
  EXPECT_EQ(cond(testing::make_tensor<int64_t>({1, 1}, {0}, DataType::int64())), 0);
  EXPECT_EQ(cond(testing::f32({}, {0.25f})), 1);
  EXPECT_EQ(cond(testing::f32({}, {0.0f})), 0);
  EXPECT_EQ(cond(testing::make_tensor<double>({}, {1.0}, DataType::float64())), 1);

  absl::StatusOr<Value> v = run(cond_program(), {testing::f32({2}, {1, 1})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v),
            "main: if: the condition must be an int or a one-element host tensor of an integer, bool "
            "or float dtype, got Tensor[(2,), float32]");
  v = run(cond_program(), {Value(std::string("yes"))});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(message(v), HasSubstr("got \"yes\""));
}

TEST(VMTest, GotoJumps) {
  Executable exec = single(function("main", {}, 0,
                                    {op(Opcode::kGoto, -1, 2), op(Opcode::kRet, -1, 0, {imm(1)}),
                                     op(Opcode::kRet, -1, 0, {imm(2)})}));
  absl::StatusOr<Value> v = run(exec, {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->int_value_or_die(), 2);
}

TEST(VMTest, ArgumentsConvertImplicitly) {
  Executable exec = single(function("main", {"a", "b", "c", "d"}, 5,
                                    {op(Opcode::kMakeTuple, 4, 0, {reg(0), reg(1), reg(2), reg(3)}),
                                     op(Opcode::kRet, -1, 0, {reg(4)})}));
  absl::StatusOr<Module> m = Module::create(exec, nullptr);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Value> v = (*m)["main"](1, 2.5, std::string("s"), Value::shape({1, 2}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->describe(), "(1, 2.5, \"s\", Shape(1, 2))");
}

TEST(ValueTest, KindsAccessorsAndDescriptions) {
  EXPECT_TRUE(Value().is_none());
  EXPECT_TRUE(Value(Tensor()).is_none());  // an undefined tensor carries nothing
  EXPECT_EQ(Value(3).int_value_or_die(), 3);
  EXPECT_EQ(Value(int64_t{1} << 40).kind(), ValueKind::kInt);
  EXPECT_EQ(Value(2.0).describe(), "2.0");
  EXPECT_EQ(Value(0.5).describe(), "0.5");
  EXPECT_EQ(Value(std::string("a\"b")).describe(), "\"a\\\"b\"");
  EXPECT_EQ(Value::shape({}).describe(), "Shape()");
  EXPECT_EQ(Value::tuple({Value(1)}).describe(), "(1,)");
  EXPECT_EQ(Value::tuple({}).describe(), "()");
  EXPECT_EQ(Value(testing::f32({2, 3}, {})).describe(), "Tensor[(2, 3), float32]");
  EXPECT_STREQ(value_kind_name(ValueKind::kTuple), "tuple");
  EXPECT_STREQ(value_kind_name(ValueKind::kShape), "shape");
  Value t = Value::tuple({Value(1), Value(std::string("x"))});
  Value copy = t;
  EXPECT_EQ(&copy.fields_or_die(), &t.fields_or_die());  // copies share their contents
}

TEST(ValueDeathTest, WrongAccessorAborts) {
  EXPECT_DEATH((void)Value(1).tensor_or_die(), "Value::tensor_or_die\\(\\) on a int");
}

}  // namespace
}  // namespace relax::runtime
