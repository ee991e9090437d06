// relax::runtime::Executable: a compiled program for the VirtualMachine.
//
// Graph-level functions become register-machine code over Values; symbolic
// dims become slots of int64 per call frame, filled when argument shapes and
// match_casts are matched and read by small postfix programs (SymProgram)
// wherever a shape value is needed at run time. Kernels are referred to by
// name and resolved against a KernelLibrary when a Module is created; library
// functions (call_dps_library) by name against the runtime's registry;
// builtins (call_builtin: operations that allocate their own result, such as
// nonzero) by name against the runtime's fixed table of builtins.
//
// An Executable records the device its functions run on (`device`: the CPU, or a CUDA GPU for
// the cuda target). The VM runs on the host either way; on a device, every tensor a call
// allocates lives in that device's memory, constants are uploaded to it when a Module is
// created, and arguments must be on it (relax/runtime/module.h).
//
// The Executable is plain data: the code generator fills it, serialize()
// turns it into bytes (versioned, little-endian, with a checksum) and
// deserialize() checks everything it reads -- magic, version, lengths,
// indices in range, the checksum -- so that a corrupt or truncated blob is an
// error naming what was wrong and where, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/runtime/value.h"
#include "relax/support/data_type.h"
#include "relax/support/device.h"

namespace relax::runtime {

// ---------------------------------------------------------------------------
// Symbolic integer programs.

enum class SymOp : uint8_t {
  kConst,     ///< push operand
  kSlot,      ///< push slot[operand] (bound before use, else an error)
  kAdd, kSub, kMul,
  kFloorDiv,  ///< floor division; a zero divisor is an error
  kFloorMod,  ///< floor modulo; a zero divisor is an error
  kMin, kMax,
  kNeg,
  kEq, kNe, kLt, kLe,  ///< push 1 or 0
  kAnd, kOr, kNot,
  kSelect,    ///< cond, a, b -> cond ? a : b
};

struct SymInstr {
  SymOp op;
  int64_t operand = 0;  ///< kConst: the value; kSlot: the slot index
};

/// An int64 expression over a frame's slots, in postfix order.
struct SymProgram {
  std::vector<SymInstr> code;
  /// The expression as written in the IR ("4 * n"), for messages.
  std::string text;
};

// ---------------------------------------------------------------------------
// Patterns: what a value must look like (a compiled StructInfo).

enum class DimRule : uint8_t {
  kAny,    ///< not checked
  kBind,   ///< slot := dim
  kSolve,  ///< dim == coeff * slot + rest: slot := (dim - rest) / coeff, exactly
  kCheck,  ///< dim == exprs[expr]
};

struct DimPattern {
  DimRule rule = DimRule::kAny;
  int32_t slot = -1;   ///< kBind, kSolve
  int64_t coeff = 1;   ///< kSolve
  int32_t expr = -1;   ///< kCheck: the expected value; kSolve: `rest`
  std::string text;    ///< the dim as written, for messages
};

enum class PatternKind : uint8_t { kObject, kPrim, kShape, kTensor, kTuple, kFunc };

struct ValuePattern {
  PatternKind kind = PatternKind::kObject;
  /// kTensor, kPrim: the required dtype (nullopt: any).
  std::optional<DataType> dtype;
  /// kTensor, kShape: the required rank (-1: any).
  int32_t ndim = -1;
  /// kTensor, kShape: one per dim when the dims are known (else empty);
  /// kPrim: one entry for its value when it has one.
  std::vector<DimPattern> dims;
  /// kTuple: the fields.
  std::vector<ValuePattern> fields;
};

/// One value to match: register `reg` against patterns[pattern].
struct MatchItem {
  int32_t reg = -1;
  int32_t pattern = -1;
  /// Names the value in messages: "argument x", "match_cast of lv1".
  std::string what;
};

/// A declared upper bound of a symbolic variable: slots[slot] <= upper.
struct SlotBound {
  int32_t slot = -1;
  int64_t upper = 0;
};

/// Matched together in three phases over all items: (1) kinds, dtypes, ranks
/// and kBind dims; (2) kSolve dims, in order; (3) kCheck dims; then the
/// declared upper bounds of the slots the group binds. A failure is an
/// InvalidArgument such as
///   main: argument x: dimension 1 is 13, expected 4 * n = 12 (n = 3)
///   main: n = 513 exceeds its declared upper bound 512
/// A kBind or kSolve of a slot that is bound already (a match run twice)
/// checks the dim against the slot's value instead.
struct MatchGroup {
  std::vector<MatchItem> items;
  /// When false (checks turned off), only kBind/kSolve run, unchecked: no
  /// dtype, kCheck, exactness or rebinding checks. The kind, rank and tuple
  /// arity of a value are still checked where dims or fields are read from it.
  bool checked = true;
  /// Checked after the match whether or not `checked` is set: memory is
  /// planned against these bounds, so exceeding one is never silent.
  std::vector<SlotBound> upper_bounds;
};

// ---------------------------------------------------------------------------
// Instructions.

enum class Opcode : uint8_t {
  kMatch,        ///< match matches[index]
  kLoadConst,    ///< dst = constants[index]
  kMakeShape,    ///< dst = Shape(operands: kSym/kImm...)
  kMakeInt,      ///< dst = Int(operands[0]: kSym/kImm)
  kMakeTuple,    ///< dst = Tuple(operands: kReg/kConst...)
  kTupleGet,     ///< dst = operands[0].fields[index]
  kAllocTensor,  ///< dst = new zero-filled Tensor(shape = operands: kSym/kImm..., dtype)
                 ///< (hand-written programs; compiled code uses kAllocStorage + kAllocTensorAt)
  kCallKernel,   ///< kernels[index](operands...); outputs are among the operands
  kCallLibrary,  ///< library_functions[index](operands...) in destination-passing style
  kCallFunc,     ///< dst = functions[index](operands: kReg/kConst...)
  kMove,         ///< dst = operands[0]
  kIf,           ///< if operands[0] (kReg: int or one-element tensor, or kSym) == 0: jump to index
  kGoto,         ///< jump to index
  kRet,          ///< return operands[0]
  kKill,         ///< release the registers operands[...] (kReg): each becomes None
  kCallBuiltin,  ///< dst = builtin_functions[index](operands: kReg/kConst...), a fresh value
  /// dst = a storage of operands[0] (kSym/kImm) bytes aligned to `index` (a power of two),
  /// uninitialised: a host uint8 Tensor of shape (bytes,).
  kAllocStorage,
  /// dst = a Tensor(shape = operands[3...]: kSym/kImm, dtype) viewing the storage in
  /// operands[0] (kReg) from byte operands[2] (kSym/kImm) on; operands[1] is a kConst string
  /// naming the tensor in messages; `index` 1: its bytes are zeroed, 0: left as they are.
  /// offset + bytes beyond the storage is an error naming the function, tensor and numbers.
  kAllocTensorAt,
  /// dst = operands[0] (kReg/kConst, a Tensor) with the dims operands[1...] (kSym/kImm),
  /// the same element count, sharing its memory (a compact copy when it is strided).
  kView,
};

struct Operand {
  enum class Kind : uint8_t {
    kReg,    ///< a register
    kConst,  ///< constants[value]
    kSym,    ///< the int64 of exprs[value] (a scalar kernel argument)
    kImm,    ///< the int64 `value` itself
  };
  Kind kind = Kind::kReg;
  int64_t value = 0;
};

struct Instruction {
  Opcode op;
  /// The destination register of the instructions that write one ("dst = "
  /// above); -1 for the others.
  int32_t dst = -1;
  int64_t index = 0;
  DataType dtype;  ///< kAllocTensor, kAllocTensorAt
  std::vector<Operand> operands;
};

struct VMFunction {
  std::string name;
  /// Parameter i arrives in register i.
  std::vector<std::string> param_names;
  /// At least param_names.size(), at most kMaxRegisters. The code generator
  /// reuses a register once its value is dead, so this is the most values
  /// live at once, not the number of bindings.
  int32_t num_registers = 0;
  /// The symbolic variable of each slot, for messages.
  std::vector<std::string> slot_names;
  std::vector<SymProgram> exprs;
  std::vector<ValuePattern> patterns;
  std::vector<MatchGroup> matches;
  std::vector<Instruction> code;
};

struct Executable {
  /// Limits that validate() enforces, so that a corrupt blob cannot make a
  /// call allocate without bound or recurse deeply while being read.
  static constexpr int32_t kMaxRegisters = 1 << 20;
  static constexpr int kMaxNesting = 64;  ///< tuple constants and tuple patterns

  std::vector<VMFunction> functions;
  std::vector<std::string> kernel_names;
  std::vector<std::string> library_functions;
  /// The runtime builtins that kCallBuiltin calls, by name.
  std::vector<std::string> builtin_functions;
  std::vector<Value> constants;  ///< host tensors, shapes, scalars, strings
  /// Where the functions' tensors live: Device::cpu() (the default) or a CUDA device. The
  /// constants stay host tensors here; a Module uploads them to the device.
  Device device = Device::cpu();

  /// The index of the function called `name`, or -1.
  int find_function(const std::string& name) const;
  /// A readable listing of every function's code, for debugging and tests.
  std::string disassemble() const;

  /// Checks what the VM relies on: function names unique; every index
  /// (register, slot, expr, pattern, match, function, kernel, library
  /// function, builtin, constant, jump target) in range; operand kinds as the opcode
  /// requires; dst set exactly for the opcodes that write one; every
  /// SymProgram leaves exactly one value and never pops an empty stack; every
  /// function ends in kRet or kGoto; constant tensors defined, on the host;
  /// nesting within kMaxNesting; the device a CPU or CUDA device of index
  /// >= 0. InvalidArgument naming the function and the entry (or the device).
  /// Module::create and deserialize run it.
  absl::Status validate() const;

  /// The blob: "RLXEXEC\0", format version (u32), payload size (u64),
  /// FNV-1a 64 checksum of the payload (u64), then the payload; all
  /// little-endian, every string and list prefixed by its length; the device
  /// (u8 type, i32 index) ends the payload. Requires a valid executable
  /// (validate()).
  std::vector<uint8_t> serialize() const;
  /// Reads a blob written by serialize(). A wrong magic or version is
  /// InvalidArgument; a truncated blob, a size or checksum mismatch DataLoss;
  /// a value out of range InvalidArgument -- each naming what and the byte
  /// offset. Blobs of version kFormatVersion and of version 4 (before the device
  /// field: their device is the CPU) are read.
  static absl::StatusOr<Executable> deserialize(std::span<const uint8_t> bytes);
  /// 2: kKill and MatchGroup::upper_bounds. 3: kCallBuiltin and builtin_functions.
  /// 4: kAllocStorage, kAllocTensorAt, kView (explicit allocation). 5: the device.
  static constexpr uint32_t kFormatVersion = 5;
  /// The oldest version deserialize() still reads.
  static constexpr uint32_t kOldestFormatVersion = 4;
};

}  // namespace relax::runtime
