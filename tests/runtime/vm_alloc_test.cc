// Explicit allocation in the VM: kAllocStorage, kAllocTensorAt (tensors as views into a
// storage at a byte offset, checked against its size), kView (reshape without a copy) and
// kKill of both; their validation and serialization; Tensor::storage and Tensor::view.
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
using testing::cst;
using testing::imm;
using testing::message;
using testing::op;
using testing::reg;
using testing::run;
using testing::sym;

// main(n): a storage of 64 bytes; a = int64[4] at 0, zeroed; b = int64[n] at 8 * (4 - n) + 16,
// filled with 7 (a library call); returns (a, b, view(b, (n, 1))) after killing the storage.
Executable placement_program() {
  Executable exec;
  exec.constants = {Value(std::string("a")), Value(std::string("b"))};
  exec.library_functions = {testing::kFillInt64};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"n"};
  fn.num_registers = 6;
  fn.slot_names = {"n"};
  fn.patterns = {testing::prim_pattern(DataType::int64(), {testing::bind_dim(0, "n")})};
  fn.matches = {testing::group({{0, 0, "argument n"}})};
  fn.exprs = {testing::slot_program(0, "n"),
              testing::program("8 * (4 - n) + 16", {{SymOp::kConst, 8}, {SymOp::kConst, 4},
                                                   {SymOp::kSlot, 0}, {SymOp::kSub}, {SymOp::kMul},
                                                   {SymOp::kConst, 16}, {SymOp::kAdd}})};
  fn.code = {
      op(Opcode::kMatch, -1, 0),
      op(Opcode::kAllocStorage, 1, 64, {imm(64)}),
      op(Opcode::kAllocTensorAt, 2, 1, {reg(1), cst(0), imm(0), imm(4)}, DataType::int64()),
      op(Opcode::kAllocTensorAt, 3, 0, {reg(1), cst(1), sym(1), sym(0)}, DataType::int64()),
      op(Opcode::kCallLibrary, -1, 0, {reg(3), imm(7)}),
      op(Opcode::kView, 4, 0, {reg(3), sym(0), imm(1)}),
      op(Opcode::kKill, -1, 0, {reg(1)}),
      op(Opcode::kMakeTuple, 5, 0, {reg(2), reg(3), reg(4)}),
      op(Opcode::kRet, -1, 0, {reg(5)}),
  };
  exec.functions.push_back(fn);
  return exec;
}

TEST(VMAllocTest, TensorsAreViewsIntoTheirStorage) {
  testing::register_fill_int64();
  // n = 2: b sits at byte 32, i.e. over a[4..5] -- beyond a; the storage outlives its kill.
  absl::StatusOr<Value> v = run(placement_program(), {Value(2)});
  ASSERT_TRUE(v.ok()) << v.status();
  const std::vector<Value>& out = v->fields_or_die();
  const Tensor& a = out[0].tensor_or_die();
  const Tensor& b = out[1].tensor_or_die();
  EXPECT_EQ(testing::elements<int64_t>(a), std::vector<int64_t>(4, 0));
  EXPECT_EQ(testing::elements<int64_t>(b), std::vector<int64_t>(2, 7));
  EXPECT_EQ(static_cast<char*>(b.data()) - static_cast<char*>(a.data()), 32);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  // The view shares b's memory.
  EXPECT_EQ(out[2].describe(), "Tensor[(2, 1), int64]");
  EXPECT_EQ(out[2].tensor_or_die().data(), b.data());
}

TEST(VMAllocTest, TensorsAtOverlappingOffsetsShareBytes) {
  testing::register_fill_int64();
  // n = 4: b sits at byte 16, over a[2..3]; b is filled after a was zeroed.
  absl::StatusOr<Value> v = run(placement_program(), {Value(4)});
  ASSERT_TRUE(v.ok()) << v.status();
  const Tensor& a = v->fields_or_die()[0].tensor_or_die();
  EXPECT_EQ(testing::elements<int64_t>(a), (std::vector<int64_t>{0, 0, 7, 7}));
}

TEST(VMAllocTest, ATensorBeyondItsStorageNamesFunctionTensorAndNumbers) {
  testing::register_fill_int64();
  // b = int64[n] at 8 * (4 - n) + 16: n = 5 puts it at byte 8 (ends at 48, fits), n = 7 at -8.
  absl::StatusOr<Value> v = run(placement_program(), {Value(5)});
  ASSERT_TRUE(v.ok()) << v.status();
  v = run(placement_program(), {Value(7)});  // at byte -8
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v),
            "main: alloc_tensor b: offset -8 + (7,) int64 (7 * 8 bytes) does not fit in 64 bytes "
            "of its storage");
  v = run(placement_program(), {Value(3)});  // at byte 24, 24 bytes: fits
  ASSERT_TRUE(v.ok()) << v.status();
  Executable exec = placement_program();
  exec.functions[0].code[1].operands[0] = imm(40);  // a storage of 40 bytes: b (n=3) ends at 48
  v = run(exec, {Value(3)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v),
            "main: alloc_tensor b: offset 24 + (3,) int64 (3 * 8 bytes) does not fit in 40 bytes "
            "of its storage");
}

TEST(VMAllocTest, StorageAndViewErrors) {
  testing::register_fill_int64();  // each test may run alone (ctest runs one per process)
  Executable exec = placement_program();
  exec.functions[0].code[1].operands[0] = imm(-1);
  absl::StatusOr<Value> v = run(exec, {Value(2)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: alloc_storage: size -1 bytes is negative");

  exec = placement_program();
  exec.functions[0].code[5] = op(Opcode::kView, 4, 0, {reg(3), imm(3)});
  v = run(exec, {Value(2)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: view: Tensor[(2,), int64] has 2 elements, the new shape (3) has 3");
}

TEST(VMAllocTest, ViewOfAStridedTensorIsACompactCopy) {
  static float strided[6] = {1, 9, 2, 9, 3, 9};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x"};
  fn.num_registers = 2;
  fn.code = {op(Opcode::kView, 1, 0, {reg(0), imm(3), imm(1)}), op(Opcode::kRet, -1, 0, {reg(1)})};
  Executable exec;
  exec.functions.push_back(fn);
  absl::StatusOr<Value> v = run(exec, {Value(Tensor::borrow(strided, {3}, DataType::float32(), {2}))});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<float>(v->tensor_or_die()), (std::vector<float>{1, 2, 3}));
}

TEST(VMAllocTest, ValidationChecksTheOperands) {
  auto invalid = [](int pc, Instruction ins) {
    Executable exec = placement_program();
    exec.functions[0].code[static_cast<size_t>(pc)] = std::move(ins);
    absl::Status s = exec.validate();
    return s.ok() ? std::string("ok") : message(s);
  };
  EXPECT_EQ(invalid(1, op(Opcode::kAllocStorage, 1, 48, {imm(64)})),
            "invalid executable: function 0 (main): instruction 1 (alloc_storage): alignment 48 is "
            "not a power of two up to 2^30");
  EXPECT_EQ(invalid(2, op(Opcode::kAllocTensorAt, 2, 1, {imm(0), cst(0), imm(0)}, DataType::int64())),
            "invalid executable: function 0 (main): instruction 2 (alloc_tensor_at): operand 0: must "
            "be a register (the storage)");
  EXPECT_EQ(invalid(2, op(Opcode::kAllocTensorAt, 2, 1, {reg(1), imm(0), imm(0)}, DataType::int64())),
            "invalid executable: function 0 (main): instruction 2 (alloc_tensor_at): operand 1: must "
            "be a constant (the tensor's name)");
  EXPECT_EQ(invalid(2, op(Opcode::kAllocTensorAt, 2, 2, {reg(1), cst(0), imm(0)}, DataType::int64())),
            "invalid executable: function 0 (main): instruction 2 (alloc_tensor_at): zero-fill flag 2 "
            "is not 0 or 1");
  EXPECT_EQ(invalid(2, op(Opcode::kAllocTensorAt, 2, 0, {reg(1), cst(0)}, DataType::int64())),
            "invalid executable: function 0 (main): instruction 2 (alloc_tensor_at): 2 operands, "
            "expected at least 3");
  EXPECT_EQ(invalid(5, op(Opcode::kView, 4, 0, {reg(3), reg(1)})),
            "invalid executable: function 0 (main): instruction 5 (view): operand 1: must be an "
            "integer (sym or imm)");
  Executable exec = placement_program();
  exec.constants[0] = Value(3);
  EXPECT_EQ(message(exec.validate()),
            "invalid executable: function 0 (main): instruction 2 (alloc_tensor_at): operand 1: must "
            "name a string constant");
}

TEST(VMAllocTest, SerializationRoundTripsAndDisassembles) {
  const Executable exec = placement_program();
  const std::string text = exec.disassemble();
  EXPECT_THAT(text, HasSubstr("1: r1 = alloc_storage(#64) align 64\n"));
  EXPECT_THAT(text, HasSubstr("2: r2 = alloc_tensor_at(r1, c0, #0, #4) int64 zeroed\n"));
  EXPECT_THAT(text, HasSubstr("3: r3 = alloc_tensor_at(r1, c1, e1, e0) int64\n"));
  EXPECT_THAT(text, HasSubstr("5: r4 = view(r3, e0, #1)\n"));
  absl::StatusOr<Executable> back = Executable::deserialize(exec.serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->disassemble(), text);
}

TEST(TensorStorageTest, StorageIsAlignedAndViewsAreChecked) {
  absl::StatusOr<Tensor> s = Tensor::storage(100, 256);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->describe(), "Tensor[(100,), uint8]");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % 256, 0u);
  absl::StatusOr<Tensor> t = s->view(36, {4, 4}, DataType::float32());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(static_cast<char*>(t->data()) - static_cast<char*>(s->data()), 36);
  EXPECT_TRUE(t->owns_storage());
  EXPECT_EQ(s->view(40, {4, 4}, DataType::float32()).status().message(),
            "offset 40 + (4, 4) float32 (16 * 4 bytes) does not fit in 100 bytes");
  EXPECT_EQ(s->view(-4, {1}, DataType::float32()).status().message(),
            "offset -4 + (1,) float32 (1 * 4 bytes) does not fit in 100 bytes");
  EXPECT_EQ(Tensor::storage(8, 3).status().message(), "Tensor::storage: alignment 3 is not a power of two");
  // The view keeps the storage alive after the storage handle is gone.
  Tensor kept = *t;
  s = absl::StatusOr<Tensor>(absl::UnknownError("dropped"));
  t = absl::StatusOr<Tensor>(absl::UnknownError("dropped"));
  static_cast<float*>(kept.data())[15] = 1.5f;
  EXPECT_EQ(static_cast<float*>(kept.data())[15], 1.5f);
}

}  // namespace
}  // namespace relax::runtime
