// The VM's builtins (kCallBuiltin): nonzero, unique, masked_select run from a
// hand-built Executable against plain-loop expectations, their argument
// errors, and the executable checks of the opcode and its table.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "relax/runtime/executable.h"
#include "relax/support/float_format.h"
#include "test_programs.h"
#include "vm_test_util.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using testing::elements;
using testing::message;
using testing::op;
using testing::reg;
using testing::run;

// main(params...) = builtin(params...).
Executable builtin_program(const std::string& builtin, std::vector<std::string> params) {
  const auto n = static_cast<int32_t>(params.size());
  VMFunction fn;
  fn.name = "main";
  fn.param_names = std::move(params);
  fn.num_registers = n + 1;
  Instruction call = op(Opcode::kCallBuiltin, n, 0);
  for (int32_t i = 0; i < n; ++i) call.operands.push_back(reg(i));
  fn.code = {call, op(Opcode::kRet, -1, 0, {reg(n)})};
  Executable exec;
  exec.functions.push_back(std::move(fn));
  exec.builtin_functions = {builtin};
  return exec;
}

Tensor bools(std::vector<int64_t> shape, const std::vector<uint8_t>& values) {
  return testing::make_tensor(std::move(shape), values, DataType::boolean());
}

// The multi-indices of the non-zero entries of a row-major (rows, cols) int64
// array, as nonzero lays them out: (2, count), one column per entry.
std::vector<int64_t> nonzero_2d(const std::vector<int64_t>& x, int64_t rows, int64_t cols) {
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (x[static_cast<size_t>(i * cols + j)] != 0) {
        r.push_back(i);
        c.push_back(j);
      }
    }
  }
  r.insert(r.end(), c.begin(), c.end());
  return r;
}

TEST(BuiltinsTest, NonzeroListsMultiIndicesColumnWise) {
  const std::vector<int64_t> x = {0, 5, 0, -1, 0, 0, 7, 0, 0, 0, 0, 2};
  absl::StatusOr<Value> v = run(builtin_program("nonzero", {"x"}), {testing::i64({3, 4}, x)});
  ASSERT_TRUE(v.ok()) << v.status();
  const Tensor& t = v->tensor_or_die();
  EXPECT_EQ(t.dtype(), DataType::int64());
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(elements<int64_t>(t), nonzero_2d(x, 3, 4));
}

TEST(BuiltinsTest, NonzeroOfAllZerosIsEmpty) {
  absl::StatusOr<Value> v =
      run(builtin_program("nonzero", {"x"}), {testing::f32({2, 3}, {0, -0.0f, 0, 0, 0, 0})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->tensor_or_die().shape(), (std::vector<int64_t>{2, 0}));
}

TEST(BuiltinsTest, NonzeroCountsNaNAndReadsStridedInputs) {
  // A (2, 3) view with row stride 4 of a (2, 4) buffer; column 3 is not in the view.
  std::vector<float> storage = {0, std::nanf(""), 0, 9, 1, 0, 0, 9};
  Tensor view = Tensor::borrow(storage.data(), {2, 3}, DataType::float32(), {4, 1});
  absl::StatusOr<Value> v = run(builtin_program("nonzero", {"x"}), {view});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->tensor_or_die().shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(elements<int64_t>(v->tensor_or_die()), (std::vector<int64_t>{0, 1, 1, 0}));
}

TEST(BuiltinsTest, UniqueSortsIntegersExactly) {
  // Values beyond 2^53 must not be merged through a double.
  const int64_t big = (int64_t{1} << 53) + 1;
  absl::StatusOr<Value> v = run(builtin_program("unique", {"x"}),
                                {testing::i64({6}, {big, 3, -2, big - 1, 3, -2})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(elements<int64_t>(v->tensor_or_die()), (std::vector<int64_t>{-2, 3, big - 1, big}));
}

TEST(BuiltinsTest, UniqueOfFloatsPutsOneNaNLastAndMergesSignedZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  absl::StatusOr<Value> v = run(builtin_program("unique", {"x"}),
                                {testing::f32({7}, {nan, 2.5f, -0.0f, nan, 0.0f, -1, 2.5f})});
  ASSERT_TRUE(v.ok()) << v.status();
  const std::vector<float> got = elements<float>(v->tensor_or_die());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], -1);
  EXPECT_EQ(got[1], 0);
  EXPECT_TRUE(std::signbit(got[1])) << "the first of -0.0 and 0.0 in x is kept";
  EXPECT_EQ(got[2], 2.5f);
  EXPECT_TRUE(std::isnan(got[3]));
}

TEST(BuiltinsTest, UniqueOfFloat16ComparesValuesNotBits) {
  // As bits, -1 (0xbc00) sorts above 2 (0x4000); as values it is below.
  const std::vector<uint16_t> x = {float16_bits(2), float16_bits(-1), float16_bits(2)};
  absl::StatusOr<Value> v = run(builtin_program("unique", {"x"}),
                                {testing::make_tensor({3}, x, DataType::float16())});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(elements<uint16_t>(v->tensor_or_die()),
            (std::vector<uint16_t>{float16_bits(-1), float16_bits(2)}));
}

TEST(BuiltinsTest, UniqueOfEmptyIsEmpty) {
  absl::StatusOr<Value> v = run(builtin_program("unique", {"x"}), {testing::f32({0, 3}, {})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->tensor_or_die().shape(), (std::vector<int64_t>{0}));
  EXPECT_EQ(v->tensor_or_die().dtype(), DataType::float32());
}

TEST(BuiltinsTest, MaskedSelectKeepsRowMajorOrder) {
  absl::StatusOr<Value> v =
      run(builtin_program("masked_select", {"x", "mask"}),
          {testing::f32({2, 3}, {1, 2, 3, 4, 5, 6}), bools({2, 3}, {1, 0, 1, 0, 0, 1})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(elements<float>(v->tensor_or_die()), (std::vector<float>{1, 3, 6}));
}

TEST(BuiltinsTest, MaskedSelectChecksTheMask) {
  absl::StatusOr<Value> v = run(builtin_program("masked_select", {"x", "mask"}),
                                {testing::f32({2, 3}, {1, 2, 3, 4, 5, 6}), bools({3, 2}, {1, 0, 1, 0, 0, 1})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v),
            "main: builtin masked_select: argument 1 (mask) is Tensor[(3, 2), bool], expected the "
            "shape of argument 0 (x), Tensor[(2, 3), float32]");
  v = run(builtin_program("masked_select", {"x", "mask"}),
          {testing::f32({2}, {1, 2}), testing::f32({2}, {1, 0})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v),
            "main: builtin masked_select: argument 1 (mask): expected a bool tensor, got "
            "Tensor[(2,), float32]");
}

TEST(BuiltinsTest, ArgumentErrorsNameTheBuiltin) {
  absl::StatusOr<Value> v = run(builtin_program("nonzero", {"x"}), {Value(int64_t{3})});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(message(v), HasSubstr("main: builtin nonzero: argument 0 (x): expected a tensor, got"));
  v = run(builtin_program("unique", {"x", "y"}), {testing::f32({1}, {1}), testing::f32({1}, {1})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: builtin unique: expected 1 argument (x), got 2");
}

TEST(BuiltinsTest, UnknownBuiltinIsAnErrorAtCreate) {
  Executable exec = builtin_program("no_such_builtin", {"x"});
  absl::StatusOr<Module> m = Module::create(std::move(exec), nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(message(m),
            "Module::create: the executable calls builtin no_such_builtin, which this runtime does "
            "not have (it has: masked_select, nonzero, unique)");
}

TEST(BuiltinsTest, ValidateChecksTheBuiltinIndexAndDestination) {
  Executable exec = builtin_program("unique", {"x"});
  exec.functions[0].code[0].index = 1;
  EXPECT_THAT(message(exec.validate()), HasSubstr("builtin 1 out of range"));
  exec = builtin_program("unique", {"x"});
  exec.functions[0].code[0].dst = -1;
  EXPECT_THAT(message(exec.validate()), HasSubstr("destination"));
}

TEST(BuiltinsTest, SerializeKeepsTheBuiltinTable) {
  Executable exec = builtin_program("unique", {"x"});
  absl::StatusOr<Executable> back = Executable::deserialize(exec.serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->builtin_functions, exec.builtin_functions);
  EXPECT_EQ(back->disassemble(), exec.disassemble());
  EXPECT_THAT(back->disassemble(), HasSubstr("r1 = call_builtin b0 unique"));
  absl::StatusOr<Value> v = run(*std::move(back), {testing::i64({3}, {2, 1, 2})});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(elements<int64_t>(v->tensor_or_die()), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace relax::runtime
