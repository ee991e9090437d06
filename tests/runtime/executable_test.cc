// Executable: validation, disassembly, and the binary form -- round trips,
// every truncation, byte flips with and without a consistent checksum, and
// the messages for each kind of bad entry.
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "relax/runtime/executable.h"
#include "test_programs.h"
#include "vm_test_util.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::cst;
using testing::imm;
using testing::message;
using testing::op;
using testing::program;
using testing::reg;
using testing::sym;

// The header layout documented in executable.h.
constexpr size_t kVersionAt = 8;
constexpr size_t kSizeAt = 12;
constexpr size_t kChecksumAt = 20;
constexpr size_t kHeaderSize = 28;

uint64_t reference_fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

void put_le(std::vector<uint8_t>& blob, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) blob[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}

// Rewrites the payload size and checksum so that the header agrees with the payload.
void fix_header(std::vector<uint8_t>& blob) {
  put_le(blob, kSizeAt, blob.size() - kHeaderSize, 8);
  put_le(blob, kChecksumAt, reference_fnv1a64(blob.data() + kHeaderSize, blob.size() - kHeaderSize), 8);
}

// Every opcode, operand kind, symbolic op, pattern kind, dim rule and value kind.
Executable everything() {
  Executable exec;
  exec.kernel_names = {"add_kernel"};
  exec.library_functions = {"lib.fill"};
  // A strided view of memory that outlives every executable made here.
  static float strided[6] = {1, 9, 2, 9, 3, 9};
  exec.constants = {
      Value(testing::f32({2, 3}, {1, 2, 3, 4, 5, 6})),
      Value(1.25),
      Value(int64_t{-7}),
      Value(std::string("bytes \0 and \xc3\xa9", 14)),
      Value::shape({4, 0, 2}),
      Value(),
      Value::tuple({Value(1), Value::tuple({Value(testing::make_tensor<uint8_t>({2}, {1, 0}, DataType::boolean())),
                                            Value(std::nan(""))})}),
      Value(testing::f32({0, 3}, {})),
      Value(Tensor::borrow(strided, {3}, DataType::float32(), {2})),
  };
  VMFunction fn;
  fn.name = "everything";
  fn.param_names = {"x", "t"};
  fn.num_registers = 8;
  fn.slot_names = {"n", "m"};
  const SymInstr n{SymOp::kSlot, 0};
  const SymInstr m{SymOp::kSlot, 1};
  auto c = [](int64_t v) { return SymInstr{SymOp::kConst, v}; };
  fn.exprs = {
      testing::slot_program(0, "n"),
      program("arith", {n, m, {SymOp::kAdd}, c(2), {SymOp::kMul}, n, {SymOp::kSub}, c(3), {SymOp::kFloorDiv},
                        c(5), {SymOp::kFloorMod}, {SymOp::kNeg}}),
      program("logic", {n, m, {SymOp::kMin}, n, m, {SymOp::kMax}, {SymOp::kEq}, n, m, {SymOp::kNe},
                        {SymOp::kAnd}, n, m, {SymOp::kLt}, n, m, {SymOp::kLe}, {SymOp::kOr}, {SymOp::kOr},
                        {SymOp::kNot}, c(1), c(2), {SymOp::kSelect}}),
      testing::const_program(0),
  };
  ValuePattern func;
  func.kind = PatternKind::kFunc;
  fn.patterns = {
      testing::tensor_pattern(DataType::float32(),
                              {testing::bind_dim(0, "n"), testing::any_dim(), testing::check_dim(0, "n")}),
      testing::tuple_pattern({testing::shape_pattern({testing::solve_dim(1, 2, 3, "2 * m")}),
                              testing::prim_pattern(DataType::int64()), testing::object_pattern(), func,
                              testing::tensor_rank_pattern(std::nullopt, -1)}),
  };
  fn.matches = {testing::group({{0, 0, "argument x"}, {1, 1, "argument t"}}),
                testing::group({{2, 0, "match_cast of lv"}}, false)};
  fn.code = {
      op(Opcode::kMatch, -1, 0),
      op(Opcode::kLoadConst, 2, 0),
      op(Opcode::kMakeShape, 3, 0, {sym(0), imm(3)}),
      op(Opcode::kMakeInt, 4, 0, {sym(1)}),
      op(Opcode::kMakeTuple, 5, 0, {reg(2), cst(1), sym(2), imm(1)}),
      op(Opcode::kTupleGet, 6, 1, {reg(5)}),
      op(Opcode::kAllocTensor, 7, 0, {sym(0), imm(2)}, DataType::float16()),
      op(Opcode::kCallKernel, -1, 0, {reg(0), reg(0), reg(7)}),
      op(Opcode::kCallLibrary, -1, 0, {reg(7), sym(0), imm(4)}),
      op(Opcode::kCallFunc, 2, 1, {reg(3)}),
      op(Opcode::kMove, 2, 0, {reg(4)}),
      op(Opcode::kIf, -1, 13, {reg(4)}),
      op(Opcode::kGoto, -1, 14),
      op(Opcode::kMatch, -1, 1),
      op(Opcode::kKill, -1, 0, {reg(6), reg(3)}),
      op(Opcode::kRet, -1, 0, {reg(5)}),
  };
  fn.matches[0].upper_bounds = {{0, 4096}, {1, 7}};
  exec.functions.push_back(fn);
  VMFunction helper;
  helper.name = "helper";
  helper.param_names = {"s"};
  helper.num_registers = 1;
  helper.code = {op(Opcode::kRet, -1, 0, {reg(0)})};
  exec.functions.push_back(helper);
  return exec;
}

void expect_same(const Executable& a, const Executable& b) {
  EXPECT_EQ(a.disassemble(), b.disassemble());
  ASSERT_EQ(a.constants.size(), b.constants.size());
  for (size_t i = 0; i < a.constants.size(); ++i) {
    EXPECT_TRUE(testing::values_equal(a.constants[i], b.constants[i]))
        << "constant " << i << ": " << a.constants[i].describe() << " vs " << b.constants[i].describe();
  }
}

TEST(ExecutableTest, EverythingIsValid) {
  EXPECT_TRUE(everything().validate().ok()) << everything().validate();
  EXPECT_TRUE(testing::add_program().validate().ok());
  EXPECT_TRUE(testing::aot_program().validate().ok());
}

TEST(ExecutableTest, FindFunction) {
  Executable exec = everything();
  EXPECT_EQ(exec.find_function("everything"), 0);
  EXPECT_EQ(exec.find_function("helper"), 1);
  EXPECT_EQ(exec.find_function("nope"), -1);
}

TEST(ExecutableTest, DisassemblyIsReadable) {
  const std::string text = everything().disassemble();
  for (const char* line : {
           "constants:\n  c0: Tensor[(2, 3), float32]\n  c1: 1.25\n  c2: -7\n",
           "  c4: Shape(4, 0, 2)\n  c5: None\n",
           "kernels:\n  k0: add_kernel\n",
           "library functions:\n  l0: lib.fill\n",
           "function f0 everything(x, t): 8 registers\n  slots: s0=n s1=m\n",
           "  e0: n = [s0]\n",
           "  e1: arith = [s0 s1 add 2 mul s0 sub 3 floordiv 5 floormod neg]\n",
           "  p0: tensor float32 ndim 3 [n: bind s0, _: any, n: check e0]\n",
           "  p1: tuple (shape ndim 1 [2 * m: solve s1 = (dim - e3) / 2]; prim int64 []; object; func; "
           "tensor ? ndim -1 [])\n",
           "  g0 checked: r0 ~ p0 (argument x), r1 ~ p1 (argument t); bounds s0 <= 4096, s1 <= 7\n",
           "  g1 unchecked: r2 ~ p0 (match_cast of lv)\n",
           "  0: match g0\n  1: r2 = load_const c0\n  2: r3 = make_shape(e0, #3)\n  3: r4 = make_int(e1)\n",
           "  4: r5 = make_tuple(r2, c1, e2, #1)\n  5: r6 = tuple_get(r5) field 1\n",
           "  6: r7 = alloc_tensor(e0, #2) float16\n  7: call_kernel k0 add_kernel(r0, r0, r7)\n",
           "  8: call_library l0 lib.fill(r7, e0, #4)\n  9: r2 = call_func f1 helper(r3)\n",
           "  10: r2 = move(r4)\n  11: if(r4) else goto 13\n  12: goto 14\n  13: match g1\n  14: kill(r6, r3)\n  15: ret(r5)\n",
           "function f1 helper(s): 1 registers\n  0: ret(r0)\n",
       }) {
    EXPECT_THAT(text, HasSubstr(line));
  }
}

TEST(ExecutableTest, RoundTripIsIdentity) {
  const Executable exec = everything();
  const std::vector<uint8_t> blob = exec.serialize();
  absl::StatusOr<Executable> back = Executable::deserialize(blob);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->disassemble(), exec.disassemble());
  ASSERT_EQ(back->constants.size(), exec.constants.size());
  for (size_t i = 0; i + 1 < exec.constants.size(); ++i) {
    EXPECT_TRUE(testing::values_equal(exec.constants[i], back->constants[i]))
        << "constant " << i << ": " << exec.constants[i].describe();
  }
  // The strided constant comes back compact, with its elements in order.
  const Tensor& strided = back->constants.back().tensor_or_die();
  EXPECT_TRUE(strided.strides().empty());
  EXPECT_EQ(testing::elements<float>(strided), (std::vector<float>{1, 2, 3}));
  // Serialising again gives the same bytes.
  EXPECT_EQ(back->serialize(), blob);
  // A NaN keeps its bits, a string its NUL.
  EXPECT_TRUE(std::isnan(back->constants[6].fields_or_die()[1].fields_or_die()[1].float_value_or_die()));
  EXPECT_EQ(back->constants[3].string_value_or_die().size(), 14u);
}

TEST(ExecutableTest, RoundTripOfEmptyExecutable) {
  absl::StatusOr<Executable> back = Executable::deserialize(Executable().serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->functions.empty());
  // Five empty tables (constants, kernels, library functions, builtins, functions), a u32 count
  // each, then the device (u8 type, i32 index).
  EXPECT_EQ(Executable().serialize().size(), kHeaderSize + 20 + 5);
  EXPECT_EQ(back->device, Device::cpu());
}

TEST(ExecutableTest, WrongMagic) {
  std::vector<uint8_t> blob = testing::add_program().serialize();
  blob[2] = 'Y';
  absl::StatusOr<Executable> e = Executable::deserialize(blob);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(e), "Executable::deserialize: not a relax executable: byte 2 differs from the magic \"RLXEXEC\"");
  const std::string text = "#!/bin/sh\necho hello\n";
  e = Executable::deserialize(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(message(e), HasSubstr("not a relax executable"));
}

TEST(ExecutableTest, WrongVersion) {
  std::vector<uint8_t> blob = testing::add_program().serialize();
  put_le(blob, kVersionAt, 6, 4);
  absl::StatusOr<Executable> e = Executable::deserialize(blob);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(e),
            "Executable::deserialize: at byte 8: format version 6 is not supported (this runtime reads "
            "versions 4 to 5; rebuild the executable with this relax)");
}

TEST(ExecutableTest, BlobOfTheFormatBeforeExplicitAllocationIsRejected) {
  // Version 3 had no alloc_storage, alloc_tensor_at or view instructions.
  std::vector<uint8_t> blob = testing::add_program().serialize();
  put_le(blob, kVersionAt, 3, 4);
  absl::StatusOr<Executable> e = Executable::deserialize(blob);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(message(e),
            "Executable::deserialize: at byte 8: format version 3 is not supported (this runtime reads "
            "versions 4 to 5; rebuild the executable with this relax)");
}

TEST(ExecutableTest, BlobOfTheFirstFormatIsAClearError) {
  // Version 1 had no kill instruction and no upper bounds in match groups.
  std::vector<uint8_t> blob = testing::add_program().serialize();
  put_le(blob, kVersionAt, 1, 4);
  absl::StatusOr<Executable> e = Executable::deserialize(blob);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(message(e),
            "Executable::deserialize: at byte 8: format version 1 is not supported (this runtime reads "
            "versions 4 to 5; rebuild the executable with this relax)");
}

TEST(ExecutableTest, ChecksumAndSizeMismatches) {
  std::vector<uint8_t> blob = testing::add_program().serialize();
  std::vector<uint8_t> flipped = blob;
  flipped[kHeaderSize + 5] ^= 1;
  absl::StatusOr<Executable> e = Executable::deserialize(flipped);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(message(e), StartsWith("Executable::deserialize: at byte 20: checksum mismatch (stored "));
  EXPECT_THAT(message(e), HasSubstr("the data is corrupt"));

  std::vector<uint8_t> longer = blob;
  longer.push_back(0);
  e = Executable::deserialize(longer);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(message(e), absl::StrCat("Executable::deserialize: at byte 12: the header gives a payload of ",
                                     blob.size() - kHeaderSize, " bytes but ", blob.size() - kHeaderSize + 1,
                                     " follow it (trailing bytes)"));
  // Bytes after the device, with a header that agrees.
  fix_header(longer);
  e = Executable::deserialize(longer);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(message(e), absl::StrCat("Executable::deserialize: at byte ", blob.size(),
                                     ": 1 bytes follow the end of the executable"));
}

// Version 4 had no device field: its blobs are still read, as CPU executables.
TEST(ExecutableTest, BlobOfVersionFourIsReadAsACpuExecutable) {
  Executable exec = testing::add_program();
  exec.device = Device::cuda(0);
  std::vector<uint8_t> blob = exec.serialize();
  blob.resize(blob.size() - 5);  // the device: u8 type, i32 index
  put_le(blob, kVersionAt, 4, 4);
  fix_header(blob);
  absl::StatusOr<Executable> e = Executable::deserialize(blob);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->device, Device::cpu());
  EXPECT_EQ(e->functions.size(), exec.functions.size());
}

TEST(ExecutableTest, EveryTruncationIsAnError) {
  const std::vector<uint8_t> blob = everything().serialize();
  for (size_t n = 0; n < blob.size(); ++n) {
    absl::StatusOr<Executable> e = Executable::deserialize(std::span<const uint8_t>(blob.data(), n));
    ASSERT_FALSE(e.ok()) << "length " << n;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kDataLoss) << "length " << n << ": " << e.status();
  }
}

// Truncations behind a header that agrees with them: the reader itself must notice.
TEST(ExecutableTest, EveryTruncationOfThePayloadIsAnError) {
  const std::vector<uint8_t> blob = everything().serialize();
  std::set<std::string> kinds;
  for (size_t n = kHeaderSize; n < blob.size(); ++n) {
    std::vector<uint8_t> cut(blob.begin(), blob.begin() + static_cast<std::ptrdiff_t>(n));
    fix_header(cut);
    absl::StatusOr<Executable> e = Executable::deserialize(cut);
    ASSERT_FALSE(e.ok()) << "length " << n;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kDataLoss) << "length " << n << ": " << e.status();
    EXPECT_THAT(message(e), StartsWith("Executable::deserialize: "));
    kinds.insert(message(e).find("truncated at byte") != std::string::npos ? "truncated" : "count");
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"count", "truncated"}));
}

TEST(ExecutableTest, ByteFlipsFailTheChecksumOrHeader) {
  const std::vector<uint8_t> blob = everything().serialize();
  std::mt19937 rng(7);
  for (size_t i = 0; i < blob.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}, static_cast<uint8_t>(rng() | 1)}) {
      std::vector<uint8_t> flipped = blob;
      flipped[i] ^= mask;
      EXPECT_FALSE(Executable::deserialize(flipped).ok()) << "byte " << i << " ^ " << int{mask};
    }
  }
}

// With the checksum recomputed, every flip reaches the reader and the
// checks: each blob is an error or a program that passes validate() and
// round-trips. Also checks that each range check fires somewhere.
TEST(ExecutableTest, ByteFlipsBehindAValidChecksumNeverCrash) {
  const std::vector<uint8_t> blob = everything().serialize();
  std::mt19937 rng(11);
  size_t errors = 0;
  size_t valid = 0;
  std::string all_messages;
  auto attempt = [&](std::vector<uint8_t> bytes) {
    fix_header(bytes);
    absl::StatusOr<Executable> e = Executable::deserialize(bytes);
    if (!e.ok()) {
      ++errors;
      EXPECT_THAT(message(e), StartsWith("Executable::deserialize: ")) << e.status();
      all_messages += message(e) + "\n";
      return;
    }
    ++valid;
    EXPECT_TRUE(e->validate().ok()) << e->validate();
    absl::StatusOr<Executable> again = Executable::deserialize(e->serialize());
    ASSERT_TRUE(again.ok()) << again.status();
    expect_same(*e, *again);
  };
  for (size_t i = kHeaderSize; i < blob.size(); ++i) {
    for (uint8_t value : {uint8_t{0xee}, static_cast<uint8_t>(blob[i] ^ 0x01), static_cast<uint8_t>(blob[i] ^ 0x40),
                          static_cast<uint8_t>(rng())}) {
      std::vector<uint8_t> flipped = blob;
      flipped[i] = value;
      attempt(flipped);
    }
    if (i + 4 <= blob.size()) {
      std::vector<uint8_t> huge = blob;
      for (size_t k = 0; k < 4; ++k) huge[i + k] = 0xff;
      attempt(huge);
    }
  }
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes = blob;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      bytes[kHeaderSize + rng() % (bytes.size() - kHeaderSize)] = static_cast<uint8_t>(rng());
    }
    attempt(bytes);
  }
  EXPECT_GT(errors, valid);
  for (const char* check : {"opcode 238 is out of range", "symbolic op 238 is out of range",
                            "dim rule 238 is out of range", "pattern kind 238 is out of range",
                            "operand kind 238 is out of range", "value kind 238 is out of range",
                            "checked flag is 238, not 0 or 1", "dtype code 238 is not a DLPack type code",
                            "cannot fit in the", "out of range (8 registers)", "jump target",
                            "out of range (2 slots)", "values from a stack of", "tensor byte count"}) {
    EXPECT_THAT(all_messages, HasSubstr(check));
  }
}

// ---------------------------------------------------------------------------
// Invalid programs: validate() and deserialize() name the entry; deserialize
// also gives the byte offset where it starts.

struct BadCase {
  const char* name;
  std::function<void(Executable&)> mutate;
  std::string expected;
};

ValuePattern nested_pattern(int depth) {
  ValuePattern p = testing::object_pattern();
  for (int i = 0; i < depth; ++i) p = testing::tuple_pattern({p});
  return p;
}

Value nested_value(int depth) {
  Value v(1);
  for (int i = 0; i < depth; ++i) v = Value::tuple({v});
  return v;
}

std::vector<BadCase> bad_cases() {
  auto code = [](Executable& e) -> std::vector<Instruction>& { return e.functions[0].code; };
  auto fn = [](Executable& e) -> VMFunction& { return e.functions[0]; };
  return {
      {"operand register", [=](Executable& e) { code(e)[2].operands[2] = reg(9); },
       "function 0 (main): instruction 2 (call_kernel): operand 2: register 9 out of range (3 registers)"},
      {"missing dst", [=](Executable& e) { code(e)[1].dst = -1; },
       "instruction 1 (alloc_tensor): destination register -1 out of range (3 registers)"},
      {"dst on call_kernel", [=](Executable& e) { code(e)[2].dst = 1; },
       "instruction 2 (call_kernel): destination register 1 on an instruction without one (must be -1)"},
      {"jump target", [=](Executable& e) { code(e).insert(code(e).begin(), op(Opcode::kGoto, -1, 9)); },
       "instruction 0 (goto): jump target 9 out of range (5 instructions)"},
      {"kernel index", [=](Executable& e) { code(e)[2].index = 3; }, "kernel 3 out of range (1 kernels)"},
      {"device type", [=](Executable& e) { e.device = Device{}; },
       "device type 0 is neither the CPU (1) nor CUDA (2)"},
      {"device index", [=](Executable& e) { e.device = Device::cuda(-1); }, "device index -1 is negative"},
      {"constant index", [=](Executable& e) { code(e)[1] = op(Opcode::kLoadConst, 2, 0); },
       "instruction 1 (load_const): constant 0 out of range (0 constants)"},
      {"match index", [=](Executable& e) { code(e)[0].index = 5; },
       "instruction 0 (match): match group 5 out of range (1 match groups)"},
      {"function index", [=](Executable& e) { code(e)[1] = op(Opcode::kCallFunc, 2, 2); },
       "instruction 1 (call_func): function 2 out of range (1 functions)"},
      {"library index", [=](Executable& e) { code(e)[2].op = Opcode::kCallLibrary; },
       "instruction 2 (call_library): library function 0 out of range (0 library functions)"},
      {"expr index", [=](Executable& e) { code(e)[1].operands[0] = sym(4); },
       "instruction 1 (alloc_tensor): operand 0: expr 4 out of range (1 exprs)"},
      {"int operand", [=](Executable& e) { code(e)[1].operands[0] = reg(0); },
       "instruction 1 (alloc_tensor): operand 0: must be an integer (sym or imm)"},
      {"operand count", [=](Executable& e) { code(e)[3].operands.push_back(reg(0)); },
       "instruction 3 (ret): 2 operands, expected 1"},
      {"alloc dtype", [=](Executable& e) { code(e)[1].dtype.bits = 0; },
       "instruction 1 (alloc_tensor): dtype with 0 bits and 1 lanes is empty"},
      {"code end", [=](Executable& e) { code(e).pop_back(); },
       "function 0 (main): the code ends in call_kernel, not in ret or goto"},
      {"no code", [=](Executable& e) { code(e).clear(); }, "function 0 (main): the function has no code"},
      {"duplicate name", [=](Executable& e) { e.functions.push_back(e.functions[0]); },
       "function 1 (main): a second function of this name"},
      {"registers for params", [=](Executable& e) { fn(e).num_registers = 1; },
       "function 0 (main): 1 registers cannot hold 2 parameters"},
      {"too many registers", [=](Executable& e) { fn(e).num_registers = 2000000; },
       "register count 2000000 is outside [0, 1048576]"},
      {"sym slot", [=](Executable& e) { fn(e).exprs[0].code[0].operand = 3; },
       "expr 0 (n): instruction 0: slot 3 out of range (1 slots)"},
      {"sym underflow", [=](Executable& e) { fn(e).exprs[0].code.insert(fn(e).exprs[0].code.begin(), {SymOp::kAdd}); },
       "expr 0 (n): instruction 0: add pops 2 values from a stack of 0"},
      {"sym leaves two", [=](Executable& e) { fn(e).exprs[0].code.push_back({SymOp::kConst, 1}); },
       "expr 0 (n): the program leaves 2 values, not 1"},
      {"sym empty", [=](Executable& e) { fn(e).exprs[0].code.clear(); }, "the program leaves 0 values, not 1"},
      {"bind slot", [=](Executable& e) { fn(e).patterns[0].dims[0].slot = 4; },
       "pattern 0: dim 0 (n): slot 4 out of range (1 slots)"},
      {"solve coefficient", [=](Executable& e) { fn(e).patterns[0].dims[0] = testing::solve_dim(0, 0, 0, "0 * n"); },
       "pattern 0: dim 0 (0 * n): solving with coefficient 0"},
      {"check expr", [=](Executable& e) { fn(e).patterns[1].dims[0].expr = 2; },
       "pattern 1: dim 0 (n): expr 2 out of range (1 exprs)"},
      {"dims for rank", [=](Executable& e) { fn(e).patterns[0].ndim = 2; }, "pattern 0: 1 dims for rank 2"},
      {"fields of a tensor", [=](Executable& e) { fn(e).patterns[0].fields.push_back(testing::object_pattern()); },
       "pattern 0: fields on a pattern that is not a tuple"},
      {"float prim with a value", [=](Executable& e) {
         fn(e).patterns[0] = testing::prim_pattern(DataType::float32(), {testing::bind_dim(0, "n")});
       }, "pattern 0: a float prim pattern with a symbolic value"},
      {"deep pattern", [=](Executable& e) { fn(e).patterns.push_back(nested_pattern(70)); },
       "tuple patterns nested deeper than 64"},
      {"match register", [=](Executable& e) { fn(e).matches[0].items[1].reg = 7; },
       "match group 0: item 1 (argument y): register 7 out of range (3 registers)"},
      {"match pattern", [=](Executable& e) { fn(e).matches[0].items[0].pattern = 2; },
       "match group 0: item 0 (argument x): pattern 2 out of range (2 patterns)"},
      {"bound slot", [=](Executable& e) { fn(e).matches[0].upper_bounds = {{5, 10}}; },
       "match group 0: upper bound 0: slot 5 out of range (1 slots)"},
      {"kill operand", [=](Executable& e) { code(e).insert(code(e).begin() + 3, op(Opcode::kKill, -1, 0, {imm(1)})); },
       "instruction 3 (kill): operand 0: must be a register"},
      {"deep constant", [=](Executable& e) { e.constants.push_back(nested_value(70)); },
       "tuples nested deeper than 64"},
      {"no name", [=](Executable& e) { fn(e).name.clear(); }, "the function has no name"},
  };
}

TEST(ExecutableTest, ValidateNamesTheBadEntry) {
  for (const BadCase& c : bad_cases()) {
    Executable exec = testing::add_program();
    c.mutate(exec);
    absl::Status s = exec.validate();
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(message(s), StartsWith("invalid executable: ")) << c.name;
    EXPECT_THAT(message(s), HasSubstr(c.expected)) << c.name;
    // Module::create refuses it too.
    absl::StatusOr<Module> m = Module::create(exec, testing::test_kernels());
    ASSERT_FALSE(m.ok()) << c.name;
    EXPECT_THAT(message(m), HasSubstr(c.expected)) << c.name;
  }
}

TEST(ExecutableTest, DeserializeNamesTheBadEntryAndItsOffset) {
  for (const BadCase& c : bad_cases()) {
    Executable exec = testing::add_program();
    c.mutate(exec);
    const std::vector<uint8_t> blob = exec.serialize();
    absl::StatusOr<Executable> e = Executable::deserialize(blob);
    ASSERT_FALSE(e.ok()) << c.name;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << c.name << ": " << e.status();
    EXPECT_THAT(message(e), StartsWith("Executable::deserialize: at byte ")) << c.name;
    EXPECT_THAT(message(e), HasSubstr(c.expected)) << c.name;
  }
}

TEST(ExecutableTest, TheOffsetIsWhereTheEntryStarts) {
  Executable exec = testing::add_program();
  exec.functions[0].code[2].operands[2] = reg(9);
  const std::vector<uint8_t> blob = exec.serialize();
  absl::StatusOr<Executable> e = Executable::deserialize(blob);
  ASSERT_FALSE(e.ok());
  const std::string prefix = "Executable::deserialize: at byte ";
  ASSERT_THAT(message(e), StartsWith(prefix));
  const size_t at = std::stoul(message(e).substr(prefix.size()));
  ASSERT_LT(at + 5, blob.size());
  EXPECT_EQ(blob[at], static_cast<uint8_t>(Opcode::kCallKernel));
  for (size_t k = 1; k <= 4; ++k) EXPECT_EQ(blob[at + k], 0xff);  // dst = -1
}

TEST(ExecutableTest, ConstantsLiveOnTheHost) {
  Executable exec = testing::add_program();
  static float data[2] = {0, 0};
  exec.constants.push_back(Value(Tensor::borrow(data, {2}, DataType::float32(), {}, Device::cuda())));
  absl::Status s = exec.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(message(s), "invalid executable: constant 0: tensor on cuda:0, constants live on the host");
}

}  // namespace
}  // namespace relax::runtime
