// Executable: lookup, the disassembler, and the checks that make a program
// safe to run (Executable::validate and the per-entry checks that
// deserialize shares, see vm.h).
#include "relax/runtime/executable.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "vm/vm.h"

namespace relax::runtime {

int Executable::find_function(const std::string& name) const {
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// ---------------------------------------------------------------------------
// Per-entry checks.

namespace program_check {
namespace {

std::string out_of_range(const char* what, int64_t index, size_t size, const char* unit) {
  return absl::StrCat(what, " ", index, " out of range (", size, " ", unit, ")");
}

bool in_range(int64_t index, size_t size) {
  return index >= 0 && static_cast<uint64_t>(index) < size;
}

// How many values an op pops and pushes; pops < 0 for an op out of range.
struct StackEffect {
  int pops;
  int pushes;
};

StackEffect stack_effect(SymOp op) {
  switch (op) {
    case SymOp::kConst:
    case SymOp::kSlot: return {0, 1};
    case SymOp::kNeg:
    case SymOp::kNot: return {1, 1};
    case SymOp::kAdd:
    case SymOp::kSub:
    case SymOp::kMul:
    case SymOp::kFloorDiv:
    case SymOp::kFloorMod:
    case SymOp::kMin:
    case SymOp::kMax:
    case SymOp::kEq:
    case SymOp::kNe:
    case SymOp::kLt:
    case SymOp::kLe:
    case SymOp::kAnd:
    case SymOp::kOr: return {2, 1};
    case SymOp::kSelect: return {3, 1};
  }
  return {-1, 0};
}

// Which operands an opcode takes.
enum class OperandUse : uint8_t {
  kNone,    // no operands
  kOne,     // exactly one value
  kInts,    // any number of ints (kSym, kImm)
  kOneInt,  // exactly one int (kSym, kImm)
  kValues,  // any number of values
  kRegs,    // any number of registers
  kOwn,     // checked by the opcode's own case in check_instruction
};

struct OpcodeSpec {
  bool has_dst;
  OperandUse operands;
};

OpcodeSpec opcode_spec(Opcode op) {
  switch (op) {
    case Opcode::kMatch: return {false, OperandUse::kNone};
    case Opcode::kLoadConst: return {true, OperandUse::kNone};
    case Opcode::kMakeShape: return {true, OperandUse::kInts};
    case Opcode::kMakeInt: return {true, OperandUse::kOneInt};
    case Opcode::kMakeTuple: return {true, OperandUse::kValues};
    case Opcode::kTupleGet: return {true, OperandUse::kOne};
    case Opcode::kAllocTensor: return {true, OperandUse::kInts};
    case Opcode::kCallKernel: return {false, OperandUse::kValues};
    case Opcode::kCallLibrary: return {false, OperandUse::kValues};
    case Opcode::kCallFunc: return {true, OperandUse::kValues};
    case Opcode::kMove: return {true, OperandUse::kOne};
    case Opcode::kIf: return {false, OperandUse::kOne};
    case Opcode::kGoto: return {false, OperandUse::kNone};
    case Opcode::kRet: return {false, OperandUse::kOne};
    case Opcode::kKill: return {false, OperandUse::kRegs};
    case Opcode::kCallBuiltin: return {true, OperandUse::kValues};
    case Opcode::kAllocStorage: return {true, OperandUse::kOneInt};
    case Opcode::kAllocTensorAt: return {true, OperandUse::kOwn};
    case Opcode::kView: return {true, OperandUse::kOwn};
  }
  return {false, OperandUse::kNone};
}

std::string check_operand(const Operand& op, const VMFunction& fn, const TableSizes& tables) {
  switch (op.kind) {
    case Operand::Kind::kReg:
      if (!in_range(op.value, static_cast<size_t>(fn.num_registers))) {
        return out_of_range("register", op.value, static_cast<size_t>(fn.num_registers), "registers");
      }
      return "";
    case Operand::Kind::kConst:
      if (!in_range(op.value, tables.constants)) {
        return out_of_range("constant", op.value, tables.constants, "constants");
      }
      return "";
    case Operand::Kind::kSym:
      if (!in_range(op.value, fn.exprs.size())) {
        return out_of_range("expr", op.value, fn.exprs.size(), "exprs");
      }
      return "";
    case Operand::Kind::kImm: return "";
  }
  return absl::StrCat("operand kind ", static_cast<int>(op.kind), " is not one of reg, const, sym, imm");
}

}  // namespace

std::string opcode_name(Opcode op) {
  switch (op) {
    case Opcode::kMatch: return "match";
    case Opcode::kLoadConst: return "load_const";
    case Opcode::kMakeShape: return "make_shape";
    case Opcode::kMakeInt: return "make_int";
    case Opcode::kMakeTuple: return "make_tuple";
    case Opcode::kTupleGet: return "tuple_get";
    case Opcode::kAllocTensor: return "alloc_tensor";
    case Opcode::kCallKernel: return "call_kernel";
    case Opcode::kCallLibrary: return "call_library";
    case Opcode::kCallFunc: return "call_func";
    case Opcode::kMove: return "move";
    case Opcode::kIf: return "if";
    case Opcode::kGoto: return "goto";
    case Opcode::kRet: return "ret";
    case Opcode::kKill: return "kill";
    case Opcode::kCallBuiltin: return "call_builtin";
    case Opcode::kAllocStorage: return "alloc_storage";
    case Opcode::kAllocTensorAt: return "alloc_tensor_at";
    case Opcode::kView: return "view";
  }
  return absl::StrCat("opcode ", static_cast<int>(op));
}

std::string sym_op_name(SymOp op) {
  switch (op) {
    case SymOp::kConst: return "const";
    case SymOp::kSlot: return "slot";
    case SymOp::kAdd: return "add";
    case SymOp::kSub: return "sub";
    case SymOp::kMul: return "mul";
    case SymOp::kFloorDiv: return "floordiv";
    case SymOp::kFloorMod: return "floormod";
    case SymOp::kMin: return "min";
    case SymOp::kMax: return "max";
    case SymOp::kNeg: return "neg";
    case SymOp::kEq: return "eq";
    case SymOp::kNe: return "ne";
    case SymOp::kLt: return "lt";
    case SymOp::kLe: return "le";
    case SymOp::kAnd: return "and";
    case SymOp::kOr: return "or";
    case SymOp::kNot: return "not";
    case SymOp::kSelect: return "select";
  }
  return absl::StrCat("op ", static_cast<int>(op));
}

std::string check_data_type(const DataType& dtype) {
  switch (dtype.code) {
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
    case DataType::Code::kFloat:
    case DataType::Code::kHandle:
    case DataType::Code::kBFloat:
    case DataType::Code::kBool:
      break;
    default:
      return absl::StrCat("dtype code ", static_cast<int>(dtype.code), " is not a DLPack type code");
  }
  if (dtype.bits == 0 || dtype.lanes == 0) {
    return absl::StrCat("dtype with ", static_cast<int>(dtype.bits), " bits and ", dtype.lanes,
                        " lanes is empty");
  }
  return "";
}

std::string check_device(const Device& device) {
  if (device.type != Device::Type::kCPU && device.type != Device::Type::kCUDA) {
    return absl::StrCat("device type ", static_cast<int>(device.type), " is neither the CPU (",
                        static_cast<int>(Device::Type::kCPU), ") nor CUDA (",
                        static_cast<int>(Device::Type::kCUDA), ")");
  }
  if (device.index < 0) return absl::StrCat("device index ", device.index, " is negative");
  return "";
}

std::string check_constant(const Value& value, int depth) {
  if (depth >= Executable::kMaxNesting) {
    return absl::StrCat("tuples nested deeper than ", Executable::kMaxNesting);
  }
  switch (value.kind()) {
    case ValueKind::kTensor: {
      const Tensor& t = value.tensor_or_die();
      if (t.device().type != Device::Type::kCPU) {
        return "tensor on " + t.device().to_string() + ", constants live on the host";
      }
      if (std::string e = check_data_type(t.dtype()); !e.empty()) return e;
      if (!t.strides().empty() && t.strides().size() != t.shape().size()) {
        return "tensor strides do not match its rank";
      }
      for (int64_t d : t.shape()) {
        if (d < 0) return absl::StrCat("tensor has a negative dim ", d);
      }
      return "";
    }
    case ValueKind::kTuple: {
      const std::vector<Value>& fields = value.fields_or_die();
      for (size_t i = 0; i < fields.size(); ++i) {
        if (std::string e = check_constant(fields[i], depth + 1); !e.empty()) {
          return absl::StrCat("field ", i, ": ", e);
        }
      }
      return "";
    }
    default: return "";
  }
}

std::string check_function_header(const VMFunction& fn) {
  if (fn.name.empty()) return "the function has no name";
  if (fn.num_registers < 0 || fn.num_registers > Executable::kMaxRegisters) {
    return absl::StrCat("register count ", fn.num_registers, " is outside [0, ",
                        Executable::kMaxRegisters, "]");
  }
  if (static_cast<size_t>(fn.num_registers) < fn.param_names.size()) {
    return absl::StrCat(fn.num_registers, " registers cannot hold ", fn.param_names.size(),
                        " parameters");
  }
  return "";
}

std::string check_sym_program(const SymProgram& program, size_t num_slots) {
  int64_t depth = 0;
  for (size_t i = 0; i < program.code.size(); ++i) {
    const SymInstr& instr = program.code[i];
    StackEffect effect = stack_effect(instr.op);
    if (effect.pops < 0) {
      return absl::StrCat("instruction ", i, ": ", sym_op_name(instr.op), " is not a symbolic op");
    }
    if (instr.op == SymOp::kSlot && !in_range(instr.operand, num_slots)) {
      return absl::StrCat("instruction ", i, ": ", out_of_range("slot", instr.operand, num_slots, "slots"));
    }
    if (depth < effect.pops) {
      return absl::StrCat("instruction ", i, ": ", sym_op_name(instr.op), " pops ", effect.pops,
                          " values from a stack of ", depth);
    }
    depth += effect.pushes - effect.pops;
  }
  if (depth != 1) return absl::StrCat("the program leaves ", depth, " values, not 1");
  return "";
}

std::string check_pattern(const ValuePattern& p, const VMFunction& fn, int depth) {
  if (depth >= Executable::kMaxNesting) {
    return absl::StrCat("tuple patterns nested deeper than ", Executable::kMaxNesting);
  }
  bool has_dims = false;
  switch (p.kind) {
    case PatternKind::kObject:
    case PatternKind::kFunc:
    case PatternKind::kTuple: break;
    case PatternKind::kPrim:
      if (p.dims.size() > 1) return absl::StrCat("a prim pattern with ", p.dims.size(), " values");
      if (!p.dims.empty() && p.dtype && p.dtype->is_float()) {
        return "a float prim pattern with a symbolic value (slots hold integers)";
      }
      has_dims = true;
      break;
    case PatternKind::kShape:
    case PatternKind::kTensor:
      if (p.ndim < -1) return absl::StrCat("rank ", p.ndim, " is negative");
      if (!p.dims.empty() && static_cast<int64_t>(p.dims.size()) != p.ndim) {
        return absl::StrCat(p.dims.size(), " dims for rank ", p.ndim);
      }
      has_dims = true;
      break;
    default: return absl::StrCat("pattern kind ", static_cast<int>(p.kind), " is out of range");
  }
  if (!has_dims && !p.dims.empty()) return "dims on a pattern that has none";
  if (p.kind != PatternKind::kTuple && !p.fields.empty()) return "fields on a pattern that is not a tuple";
  if (p.dtype) {
    if (std::string e = check_data_type(*p.dtype); !e.empty()) return e;
  }
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const DimPattern& d = p.dims[i];
    std::string e;
    const bool needs_slot = d.rule == DimRule::kBind || d.rule == DimRule::kSolve;
    const bool needs_expr = d.rule == DimRule::kSolve || d.rule == DimRule::kCheck;
    if (d.rule != DimRule::kAny && !needs_slot && !needs_expr) {
      e = absl::StrCat("rule ", static_cast<int>(d.rule), " is out of range");
    } else if (needs_slot && !in_range(d.slot, fn.slot_names.size())) {
      e = out_of_range("slot", d.slot, fn.slot_names.size(), "slots");
    } else if (needs_expr && !in_range(d.expr, fn.exprs.size())) {
      e = out_of_range("expr", d.expr, fn.exprs.size(), "exprs");
    } else if (d.rule == DimRule::kSolve && d.coeff == 0) {
      e = "solving with coefficient 0";
    }
    if (!e.empty()) return absl::StrCat("dim ", i, " (", d.text, "): ", e);
  }
  for (size_t i = 0; i < p.fields.size(); ++i) {
    if (std::string e = check_pattern(p.fields[i], fn, depth + 1); !e.empty()) {
      return absl::StrCat("field ", i, ": ", e);
    }
  }
  return "";
}

std::string check_match_group(const MatchGroup& group, const VMFunction& fn) {
  for (size_t i = 0; i < group.items.size(); ++i) {
    const MatchItem& item = group.items[i];
    std::string e;
    if (!in_range(item.reg, static_cast<size_t>(fn.num_registers))) {
      e = out_of_range("register", item.reg, static_cast<size_t>(fn.num_registers), "registers");
    } else if (!in_range(item.pattern, fn.patterns.size())) {
      e = out_of_range("pattern", item.pattern, fn.patterns.size(), "patterns");
    }
    if (!e.empty()) return absl::StrCat("item ", i, " (", item.what, "): ", e);
  }
  for (size_t i = 0; i < group.upper_bounds.size(); ++i) {
    const SlotBound& b = group.upper_bounds[i];
    if (!in_range(b.slot, fn.slot_names.size())) {
      return absl::StrCat("upper bound ", i, ": ", out_of_range("slot", b.slot, fn.slot_names.size(), "slots"));
    }
  }
  return "";
}

std::string check_instruction(const Instruction& ins, const VMFunction& fn, size_t code_size,
                              const TableSizes& tables) {
  switch (ins.op) {
    case Opcode::kMatch:
    case Opcode::kLoadConst:
    case Opcode::kMakeShape:
    case Opcode::kMakeInt:
    case Opcode::kMakeTuple:
    case Opcode::kTupleGet:
    case Opcode::kAllocTensor:
    case Opcode::kCallKernel:
    case Opcode::kCallLibrary:
    case Opcode::kCallFunc:
    case Opcode::kMove:
    case Opcode::kIf:
    case Opcode::kGoto:
    case Opcode::kRet:
    case Opcode::kKill:
    case Opcode::kCallBuiltin:
    case Opcode::kAllocStorage:
    case Opcode::kAllocTensorAt:
    case Opcode::kView: break;
    default: return absl::StrCat("opcode ", static_cast<int>(ins.op), " is out of range");
  }
  // Only kAllocTensor reads the dtype, but a stored one must be a dtype all the same.
  if (std::string e = check_data_type(ins.dtype); !e.empty()) return e;
  const OpcodeSpec spec = opcode_spec(ins.op);
  if (spec.has_dst && !in_range(ins.dst, static_cast<size_t>(fn.num_registers))) {
    return "destination " +
           out_of_range("register", ins.dst, static_cast<size_t>(fn.num_registers), "registers");
  }
  if (!spec.has_dst && ins.dst != -1) {
    return absl::StrCat("destination register ", ins.dst, " on an instruction without one (must be -1)");
  }
  const size_t n = ins.operands.size();
  switch (spec.operands) {
    case OperandUse::kNone:
      if (n != 0) return absl::StrCat(n, " operands, expected none");
      break;
    case OperandUse::kOne:
    case OperandUse::kOneInt:
      if (n != 1) return absl::StrCat(n, " operands, expected 1");
      break;
    case OperandUse::kInts:
    case OperandUse::kValues:
    case OperandUse::kRegs: break;
    case OperandUse::kOwn: {
      // kAllocTensorAt: storage register, name constant, offset, dims; kView: tensor, dims.
      const bool at = ins.op == Opcode::kAllocTensorAt;
      const size_t fixed = at ? 3 : 1;
      if (n < fixed) return absl::StrCat(n, " operands, expected at least ", fixed);
      for (size_t i = 0; i < n; ++i) {
        const Operand& op = ins.operands[i];
        const Operand::Kind k = op.kind;
        std::string e;
        if (at && i == 0) {
          if (k != Operand::Kind::kReg) e = "must be a register (the storage)";
        } else if (at && i == 1) {
          if (k != Operand::Kind::kConst) e = "must be a constant (the tensor's name)";
        } else if (!at && i == 0) {
          if (k != Operand::Kind::kReg && k != Operand::Kind::kConst) {
            e = "must be a register or a constant (the tensor)";
          }
        } else if (k != Operand::Kind::kSym && k != Operand::Kind::kImm) {
          e = "must be an integer (sym or imm)";
        }
        if (e.empty()) e = check_operand(op, fn, tables);
        if (e.empty() && at && i == 1 && tables.constant_values != nullptr &&
            !(*tables.constant_values)[static_cast<size_t>(op.value)].is_string()) {
          e = "must name a string constant";
        }
        if (!e.empty()) return absl::StrCat("operand ", i, ": ", e);
      }
      if (at && ins.index != 0 && ins.index != 1) {
        return absl::StrCat("zero-fill flag ", ins.index, " is not 0 or 1");
      }
      return "";
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const Operand& op = ins.operands[i];
    std::string e = check_operand(op, fn, tables);
    if (e.empty() && (spec.operands == OperandUse::kInts || spec.operands == OperandUse::kOneInt) &&
        op.kind != Operand::Kind::kSym && op.kind != Operand::Kind::kImm) {
      e = "must be an integer (sym or imm)";
    }
    if (e.empty() && spec.operands == OperandUse::kRegs && op.kind != Operand::Kind::kReg) {
      e = "must be a register";
    }
    if (!e.empty()) return absl::StrCat("operand ", i, ": ", e);
  }
  switch (ins.op) {
    case Opcode::kMatch:
      if (!in_range(ins.index, fn.matches.size())) {
        return out_of_range("match group", ins.index, fn.matches.size(), "match groups");
      }
      break;
    case Opcode::kLoadConst:
      if (!in_range(ins.index, tables.constants)) {
        return out_of_range("constant", ins.index, tables.constants, "constants");
      }
      break;
    case Opcode::kTupleGet:
      if (ins.index < 0) return absl::StrCat("tuple field ", ins.index, " is negative");
      break;
    case Opcode::kCallKernel:
      if (!in_range(ins.index, tables.kernels)) {
        return out_of_range("kernel", ins.index, tables.kernels, "kernels");
      }
      break;
    case Opcode::kCallLibrary:
      if (!in_range(ins.index, tables.library_functions)) {
        return out_of_range("library function", ins.index, tables.library_functions,
                            "library functions");
      }
      break;
    case Opcode::kCallBuiltin:
      if (!in_range(ins.index, tables.builtin_functions)) {
        return out_of_range("builtin", ins.index, tables.builtin_functions, "builtins");
      }
      break;
    case Opcode::kAllocStorage:
      if (ins.index <= 0 || (ins.index & (ins.index - 1)) != 0 || ins.index > (int64_t{1} << 30)) {
        return absl::StrCat("alignment ", ins.index, " is not a power of two up to 2^30");
      }
      break;
    case Opcode::kCallFunc:
      if (!in_range(ins.index, tables.functions)) {
        return out_of_range("function", ins.index, tables.functions, "functions");
      }
      break;
    case Opcode::kIf:
    case Opcode::kGoto:
      if (!in_range(ins.index, code_size)) {
        return out_of_range("jump target", ins.index, code_size, "instructions");
      }
      break;
    default: break;
  }
  return "";
}

std::string check_code_end(const VMFunction& fn) {
  if (fn.code.empty()) return "the function has no code";
  Opcode last = fn.code.back().op;
  if (last != Opcode::kRet && last != Opcode::kGoto) {
    return "the code ends in " + opcode_name(last) + ", not in ret or goto";
  }
  return "";
}

}  // namespace program_check

// ---------------------------------------------------------------------------
// validate()

absl::Status Executable::validate() const {
  using namespace program_check;  // NOLINT(google-build-using-namespace)
  auto fail = [](const std::string& where, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("invalid executable: ", where, ": ", what));
  };
  if (std::string e = check_device(device); !e.empty()) return fail("device", e);
  for (size_t i = 0; i < constants.size(); ++i) {
    if (std::string e = check_constant(constants[i]); !e.empty()) {
      return fail(absl::StrCat("constant ", i), e);
    }
  }
  const TableSizes tables{functions.size(), kernel_names.size(), library_functions.size(),
                          builtin_functions.size(), constants.size(), &constants};
  std::set<std::string> names;
  for (size_t f = 0; f < functions.size(); ++f) {
    const VMFunction& fn = functions[f];
    const std::string where = absl::StrCat("function ", f, " (", fn.name, ")");
    if (std::string e = check_function_header(fn); !e.empty()) return fail(where, e);
    if (!names.insert(fn.name).second) return fail(where, "a second function of this name");
    for (size_t i = 0; i < fn.exprs.size(); ++i) {
      if (std::string e = check_sym_program(fn.exprs[i], fn.slot_names.size()); !e.empty()) {
        return fail(absl::StrCat(where, ": expr ", i, " (", fn.exprs[i].text, ")"), e);
      }
    }
    for (size_t i = 0; i < fn.patterns.size(); ++i) {
      if (std::string e = check_pattern(fn.patterns[i], fn); !e.empty()) {
        return fail(absl::StrCat(where, ": pattern ", i), e);
      }
    }
    for (size_t i = 0; i < fn.matches.size(); ++i) {
      if (std::string e = check_match_group(fn.matches[i], fn); !e.empty()) {
        return fail(absl::StrCat(where, ": match group ", i), e);
      }
    }
    for (size_t i = 0; i < fn.code.size(); ++i) {
      if (std::string e = check_instruction(fn.code[i], fn, fn.code.size(), tables); !e.empty()) {
        return fail(absl::StrCat(where, ": instruction ", i, " (", opcode_name(fn.code[i].op), ")"), e);
      }
    }
    if (std::string e = check_code_end(fn); !e.empty()) return fail(where, e);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// disassemble()

namespace {

std::string operand_text(const Operand& op) {
  switch (op.kind) {
    case Operand::Kind::kReg: return absl::StrCat("r", op.value);
    case Operand::Kind::kConst: return absl::StrCat("c", op.value);
    case Operand::Kind::kSym: return absl::StrCat("e", op.value);
    case Operand::Kind::kImm: return absl::StrCat("#", op.value);
  }
  return absl::StrCat("?", static_cast<int>(op.kind), ":", op.value);
}

std::string operands_text(const std::vector<Operand>& ops) {
  std::vector<std::string> parts;
  parts.reserve(ops.size());
  for (const Operand& op : ops) parts.push_back(operand_text(op));
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

std::string name_at(const std::vector<std::string>& names, int64_t index) {
  return index >= 0 && static_cast<size_t>(index) < names.size() ? names[static_cast<size_t>(index)]
                                                                 : "?";
}

std::string dim_text(const DimPattern& d) {
  switch (d.rule) {
    case DimRule::kAny: return absl::StrCat(d.text, ": any");
    case DimRule::kBind: return absl::StrCat(d.text, ": bind s", d.slot);
    case DimRule::kSolve:
      return absl::StrCat(d.text, ": solve s", d.slot, " = (dim - e", d.expr, ") / ", d.coeff);
    case DimRule::kCheck: return absl::StrCat(d.text, ": check e", d.expr);
  }
  return absl::StrCat(d.text, ": rule ", static_cast<int>(d.rule));
}

std::string pattern_text(const ValuePattern& p) {
  std::string dtype = p.dtype ? p.dtype->to_string() : "?";
  std::vector<std::string> dims;
  dims.reserve(p.dims.size());
  for (const DimPattern& d : p.dims) dims.push_back(dim_text(d));
  const std::string dims_text = absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
  switch (p.kind) {
    case PatternKind::kObject: return "object";
    case PatternKind::kFunc: return "func";
    case PatternKind::kPrim: return absl::StrCat("prim ", dtype, " ", dims_text);
    case PatternKind::kShape: return absl::StrCat("shape ndim ", p.ndim, " ", dims_text);
    case PatternKind::kTensor:
      return absl::StrCat("tensor ", dtype, " ndim ", p.ndim, " ", dims_text);
    case PatternKind::kTuple: {
      std::vector<std::string> fields;
      fields.reserve(p.fields.size());
      for (const ValuePattern& f : p.fields) fields.push_back(pattern_text(f));
      return absl::StrCat("tuple (", absl::StrJoin(fields, "; "), ")");
    }
  }
  return absl::StrCat("kind ", static_cast<int>(p.kind));
}

std::string instruction_text(const Executable& exec, const Instruction& ins) {
  const std::string dst = absl::StrCat("r", ins.dst, " = ");
  const std::string ops = operands_text(ins.operands);
  switch (ins.op) {
    case Opcode::kMatch: return absl::StrCat("match g", ins.index);
    case Opcode::kLoadConst: return absl::StrCat(dst, "load_const c", ins.index);
    case Opcode::kMakeShape: return absl::StrCat(dst, "make_shape", ops);
    case Opcode::kMakeInt: return absl::StrCat(dst, "make_int", ops);
    case Opcode::kMakeTuple: return absl::StrCat(dst, "make_tuple", ops);
    case Opcode::kTupleGet: return absl::StrCat(dst, "tuple_get", ops, " field ", ins.index);
    case Opcode::kAllocTensor:
      return absl::StrCat(dst, "alloc_tensor", ops, " ", ins.dtype.to_string());
    case Opcode::kCallKernel:
      return absl::StrCat("call_kernel k", ins.index, " ", name_at(exec.kernel_names, ins.index), ops);
    case Opcode::kCallLibrary:
      return absl::StrCat("call_library l", ins.index, " ",
                          name_at(exec.library_functions, ins.index), ops);
    case Opcode::kCallFunc: {
      std::string callee = ins.index >= 0 && static_cast<size_t>(ins.index) < exec.functions.size()
                               ? exec.functions[static_cast<size_t>(ins.index)].name
                               : "?";
      return absl::StrCat(dst, "call_func f", ins.index, " ", callee, ops);
    }
    case Opcode::kMove: return absl::StrCat(dst, "move", ops);
    case Opcode::kIf: return absl::StrCat("if", ops, " else goto ", ins.index);
    case Opcode::kGoto: return absl::StrCat("goto ", ins.index);
    case Opcode::kRet: return absl::StrCat("ret", ops);
    case Opcode::kKill: return absl::StrCat("kill", ops);
    case Opcode::kCallBuiltin:
      return absl::StrCat(dst, "call_builtin b", ins.index, " ",
                          name_at(exec.builtin_functions, ins.index), ops);
    case Opcode::kAllocStorage:
      return absl::StrCat(dst, "alloc_storage", ops, " align ", ins.index);
    case Opcode::kAllocTensorAt:
      return absl::StrCat(dst, "alloc_tensor_at", ops, " ", ins.dtype.to_string(),
                          ins.index == 1 ? " zeroed" : "");
    case Opcode::kView: return absl::StrCat(dst, "view", ops);
  }
  return absl::StrCat("opcode ", static_cast<int>(ins.op));
}

}  // namespace

std::string Executable::disassemble() const {
  std::string out;
  if (device != Device::cpu()) absl::StrAppend(&out, "device: ", device.to_string(), "\n");
  if (!constants.empty()) {
    out += "constants:\n";
    for (size_t i = 0; i < constants.size(); ++i) {
      absl::StrAppend(&out, "  c", i, ": ", constants[i].describe(), "\n");
    }
  }
  if (!kernel_names.empty()) {
    out += "kernels:\n";
    for (size_t i = 0; i < kernel_names.size(); ++i) absl::StrAppend(&out, "  k", i, ": ", kernel_names[i], "\n");
  }
  if (!library_functions.empty()) {
    out += "library functions:\n";
    for (size_t i = 0; i < library_functions.size(); ++i) {
      absl::StrAppend(&out, "  l", i, ": ", library_functions[i], "\n");
    }
  }
  if (!builtin_functions.empty()) {
    out += "builtins:\n";
    for (size_t i = 0; i < builtin_functions.size(); ++i) {
      absl::StrAppend(&out, "  b", i, ": ", builtin_functions[i], "\n");
    }
  }
  for (size_t f = 0; f < functions.size(); ++f) {
    const VMFunction& fn = functions[f];
    absl::StrAppend(&out, "function f", f, " ", fn.name, "(", absl::StrJoin(fn.param_names, ", "),
                    "): ", fn.num_registers, " registers\n");
    if (!fn.slot_names.empty()) {
      out += "  slots:";
      for (size_t i = 0; i < fn.slot_names.size(); ++i) absl::StrAppend(&out, " s", i, "=", fn.slot_names[i]);
      out += "\n";
    }
    for (size_t i = 0; i < fn.exprs.size(); ++i) {
      std::vector<std::string> code;
      code.reserve(fn.exprs[i].code.size());
      for (const SymInstr& instr : fn.exprs[i].code) {
        std::string name = program_check::sym_op_name(instr.op);
        if (instr.op == SymOp::kConst) name = absl::StrCat(instr.operand);
        if (instr.op == SymOp::kSlot) name = absl::StrCat("s", instr.operand);
        code.push_back(std::move(name));
      }
      absl::StrAppend(&out, "  e", i, ": ", fn.exprs[i].text, " = [", absl::StrJoin(code, " "), "]\n");
    }
    for (size_t i = 0; i < fn.patterns.size(); ++i) {
      absl::StrAppend(&out, "  p", i, ": ", pattern_text(fn.patterns[i]), "\n");
    }
    for (size_t i = 0; i < fn.matches.size(); ++i) {
      std::vector<std::string> items;
      for (const MatchItem& item : fn.matches[i].items) {
        items.push_back(absl::StrCat("r", item.reg, " ~ p", item.pattern, " (", item.what, ")"));
      }
      std::vector<std::string> bounds;
      for (const SlotBound& b : fn.matches[i].upper_bounds) {
        bounds.push_back(absl::StrCat("s", b.slot, " <= ", b.upper));
      }
      absl::StrAppend(&out, "  g", i, fn.matches[i].checked ? " checked" : " unchecked", ": ",
                      absl::StrJoin(items, ", "), bounds.empty() ? "" : "; bounds ",
                      absl::StrJoin(bounds, ", "), "\n");
    }
    for (size_t i = 0; i < fn.code.size(); ++i) {
      absl::StrAppend(&out, "  ", i, ": ", instruction_text(*this, fn.code[i]), "\n");
    }
  }
  return out;
}

}  // namespace relax::runtime
