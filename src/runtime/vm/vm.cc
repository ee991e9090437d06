// The VirtualMachine: runs the register code of an Executable (see vm.h).
//
// One call is a loop over an explicit stack of frames. Instructions read
// registers, constants and symbolic expressions through operands; kernels
// get their arguments marshalled into RelaxKernelArg; library functions and
// builtins get Values (a builtin returns a fresh one, builtins.h). kMatch runs a MatchGroup in its three phases (structure and kBind,
// kSolve, kCheck); messages are built only on the failing path, so a call
// whose arguments fit costs a few comparisons per dim.
//
// On a device (Executable::device, vm_device.h) the loop is the same and runs on the host:
// storages come from the context (device memory), fresh tensors are allocated there, constants
// are the Module's uploaded copies, zeroing is queued on the device, and the few places that
// read a tensor's values on the host -- builtins, a branch on a one-element tensor -- copy them
// to the host first (never a host load of device memory).
//
// invoke() runs a function's entry match first and, with replay on (replay_plan.h), replays a
// plan whose class of bindings holds the one it produced (the plan's ints computed from it), or
// interprets the call -- with a Recorder watching when this call records a plan.
//
// Invariants relied on: the executable passed Executable::validate (every
// index in range, every SymProgram balanced, code ends in ret/goto), so the
// interpreter indexes without checks; everything that depends on the values
// of a call (kinds, ranks, dims, tuple sizes, overflow) is checked here and
// reported as a Status.
#include "vm/vm.h"

#include <cstring>
#include <span>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/support/check.h"
#include "vm/sym_code_eval.h"
#include "tensor_compact.h"
#include "vm/vm_device.h"

namespace relax::runtime {

#define RELAX_VM_TRY(expr)                                                        \
  do {                                                                            \
    if (absl::Status vm_status_ = (expr); !vm_status_.ok()) return vm_status_;    \
  } while (false)

struct VirtualMachine::Frame {
  int32_t function = 0;
  const VMFunction* fn = nullptr;
  std::vector<Value> regs;
  std::vector<int64_t> slots;
  std::vector<uint8_t> bound;
  size_t pc = 0;
  int32_t return_dst = -1;  // the caller's register that receives the result
};

// A field of a tuple being matched, as a chain back to the item's value.
struct VirtualMachine::MatchPath {
  const MatchPath* parent;
  size_t field;
};

struct VirtualMachine::MatchContext {
  const MatchItem* item;
  const MatchPath* path;
  bool checked;
};

namespace {

// ---------------------------------------------------------------------------
// SymProgram evaluation.

// Runs a validated program (balanced stack, slots in range).
EvalOutcome evaluate(const SymProgram& program, const int64_t* slots, const uint8_t* bound) {
  return run_sym_code(program.code, [&](int64_t slot, int64_t* value) {
    if (!bound[slot]) return false;
    *value = slots[slot];
    return true;
  });
}

// "n = 3, m = 4": the bound slots `program` reads, each once, in order.
std::string bindings(const SymProgram& program, const VMFunction& fn, const int64_t* slots,
                     const uint8_t* bound) {
  std::vector<int64_t> seen;
  std::vector<std::string> parts;
  for (const SymInstr& instr : program.code) {
    if (instr.op != SymOp::kSlot || !bound[instr.operand]) continue;
    bool dup = false;
    for (int64_t s : seen) dup = dup || s == instr.operand;
    if (dup) continue;
    seen.push_back(instr.operand);
    parts.push_back(absl::StrCat(fn.slot_names[static_cast<size_t>(instr.operand)], " = ",
                                 slots[instr.operand]));
  }
  return absl::StrJoin(parts, ", ");
}

std::string in_parens(const std::string& s) { return s.empty() ? "" : " (" + s + ")"; }

bool is_single(const SymProgram& program, SymOp op) {
  return program.code.size() == 1 && program.code[0].op == op;
}

// "an int32", "a float32".
std::string with_article(const std::string& s) { return (s[0] == 'i' ? "an " : "a ") + s; }

std::string plural(size_t n, const char* noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

}  // namespace

// ---------------------------------------------------------------------------
// Construction and calls.

VirtualMachine::VirtualMachine(const Executable* exec, std::vector<RelaxKernelFn> kernels,
                               std::vector<LibraryFunction> library,
                               std::vector<BuiltinFunction> builtins, std::vector<Value> constants)
    : exec_(exec),
      on_host_(exec->device.type == Device::Type::kCPU),
      constants_(std::move(constants)),
      kernels_(std::move(kernels)),
      library_(std::move(library)),
      builtins_(std::move(builtins)) {
  RELAX_CHECK(kernels_.size() == exec_->kernel_names.size());
  RELAX_CHECK(library_.size() == exec_->library_functions.size());
  RELAX_CHECK(builtins_.size() == exec_->builtin_functions.size());
  RELAX_CHECK(constants_.size() == exec_->constants.size());
  groups_.resize(exec_->functions.size());
  storage_site_.resize(exec_->functions.size());
  for (size_t f = 0; f < exec_->functions.size(); ++f) {
    const VMFunction& fn = exec_->functions[f];
    storage_site_[f].assign(fn.code.size(), -1);
    for (size_t pc = 0; pc < fn.code.size(); ++pc) {
      if (fn.code[pc].op == Opcode::kAllocStorage) {
        storage_site_[f][pc] = static_cast<int32_t>(num_storage_sites_++);
      }
    }
    for (const MatchGroup& g : fn.matches) {
      GroupInfo info;
      // Every pattern of the function that the group's items reach.
      std::vector<const ValuePattern*> todo;
      for (const MatchItem& item : g.items) todo.push_back(&fn.patterns[static_cast<size_t>(item.pattern)]);
      while (!todo.empty()) {
        const ValuePattern* p = todo.back();
        todo.pop_back();
        for (const DimPattern& d : p->dims) {
          info.has_solve = info.has_solve || d.rule == DimRule::kSolve;
          info.has_check = info.has_check || d.rule == DimRule::kCheck;
        }
        for (const ValuePattern& field : p->fields) todo.push_back(&field);
      }
      groups_[f].push_back(info);
    }
    int32_t entry = -1;
    if (!fn.code.empty() && fn.code[0].op == Opcode::kMatch) {
      entry = static_cast<int32_t>(fn.code[0].index);
      for (const MatchItem& item : fn.matches[static_cast<size_t>(entry)].items) {
        if (static_cast<size_t>(item.reg) >= fn.param_names.size()) entry = -1;
      }
    }
    entry_group_.push_back(entry);
  }
  tables_ = replay::Tables{exec_, &kernels_, &library_, &storage_site_, &constants_, exec_->device};
  plans_ = std::make_unique<replay::PlanCache>(exec_->functions.size());
}

absl::Status VirtualMachine::check_arity(const VMFunction& fn, size_t num_args) const {
  if (num_args == fn.param_names.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(fn.name, ": expected ",
                                                 plural(fn.param_names.size(), "argument"), " (",
                                                 absl::StrJoin(fn.param_names, ", "), "), got ",
                                                 num_args));
}

absl::StatusOr<int64_t> VirtualMachine::eval(const Frame& frame, int32_t expr,
                                             const std::string& context) const {
  const SymProgram& program = frame.fn->exprs[static_cast<size_t>(expr)];
  const EvalOutcome out = evaluate(program, frame.slots.data(), frame.bound.data());
  if (out.failure == EvalFailure::kNone) return out.value;
  const std::string prefix = absl::StrCat(frame.fn->name, ": ", context);
  const std::string vars = bindings(program, *frame.fn, frame.slots.data(), frame.bound.data());
  switch (out.failure) {
    case EvalFailure::kUnbound:
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, "symbolic variable ", frame.fn->slot_names[static_cast<size_t>(out.slot)],
          " is used before it is bound (in ", program.text, ")"));
    case EvalFailure::kOverflow:
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, program.text, " overflows int64", in_parens(vars)));
    case EvalFailure::kDivByZero:
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "division by zero in ", program.text, in_parens(vars)));
    case EvalFailure::kNone: break;
  }
  return out.value;
}

absl::StatusOr<Value> VirtualMachine::operand_value(const Frame& frame, const Operand& op) const {
  switch (op.kind) {
    case Operand::Kind::kReg: return frame.regs[static_cast<size_t>(op.value)];
    case Operand::Kind::kConst: return constants_[static_cast<size_t>(op.value)];
    case Operand::Kind::kSym: {
      absl::StatusOr<int64_t> v = operand_int(frame, op);
      if (!v.ok()) return v.status();
      return Value(*v);
    }
    case Operand::Kind::kImm: break;
  }
  return Value(op.value);
}

absl::StatusOr<int64_t> VirtualMachine::operand_int(const Frame& frame, const Operand& op) const {
  if (op.kind == Operand::Kind::kImm) return op.value;
  const EvalOutcome out = evaluate(frame.fn->exprs[static_cast<size_t>(op.value)], frame.slots.data(),
                                   frame.bound.data());
  if (out.failure == EvalFailure::kNone) return out.value;
  return eval(frame, static_cast<int32_t>(op.value), "");  // the slow path, for the message
}

namespace {

// Whether the value a call leaves in register `reg` is what the function returns next: from `pc`
// on, only moves of it, jumps and kills of other registers come before a kRet of it.
bool returns_at_once(const VMFunction& fn, size_t pc, int32_t reg) {
  for (int steps = 0; steps < 16 && pc < fn.code.size(); ++steps) {
    const Instruction& next = fn.code[pc];
    switch (next.op) {
      case Opcode::kRet:
        return next.operands.size() == 1 && next.operands[0].kind == Operand::Kind::kReg && next.operands[0].value == reg;
      case Opcode::kMove:
        if (next.operands.size() != 1 || next.operands[0].kind != Operand::Kind::kReg || next.operands[0].value != reg) {
          return false;
        }
        reg = next.dst;
        ++pc;
        break;
      case Opcode::kGoto:
        pc = static_cast<size_t>(next.index);
        break;
      case Opcode::kKill:
        for (const Operand& op : next.operands) {
          if (op.value == reg) return false;
        }
        ++pc;
        break;
      default:
        return false;
    }
  }
  return false;
}

}  // namespace

void VirtualMachine::push_frame(std::vector<Frame>& stack, const Executable& exec, int32_t f,
                                std::vector<Value>&& call_args, int32_t return_dst) {
  const VMFunction& fn = exec.functions[static_cast<size_t>(f)];
  Frame& frame = stack.emplace_back();
  frame.function = f;
  frame.fn = &fn;
  frame.regs.resize(static_cast<size_t>(fn.num_registers));
  for (size_t i = 0; i < call_args.size(); ++i) frame.regs[i] = std::move(call_args[i]);
  frame.slots.assign(fn.slot_names.size(), 0);
  frame.bound.assign(fn.slot_names.size(), 0);
  frame.return_dst = return_dst;
}

absl::StatusOr<Value> VirtualMachine::invoke(int32_t function, std::vector<Value> args,
                                             ExecutionContext& ctx) const {
  const VMFunction& fn = exec_->functions[static_cast<size_t>(function)];
  RELAX_VM_TRY(check_arity(fn, args.size()));
  if (!on_host_) {
    if (absl::Status s = vm_device::activate(exec_->device); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(fn.name, ": ", s.message()));
    }
  }
  std::vector<Frame> stack;
  if (!plans_->enabled()) {
    RELAX_VM_TRY(check_devices(fn, args));
    RELAX_VM_TRY(compact_arguments(fn, args));
    push_frame(stack, *exec_, function, std::move(args), -1);
    return interpret(stack, ctx, nullptr);
  }

  // The plan this thread ran last for the function, with its ints, when the arguments are the
  // ones they were computed for in every dim and int (PlanCache::hint): no match, no lookup.
  // (Their devices are the plan's, which are the executable's: a plan records a call that
  // passed check_devices.)
  absl::InlinedVector<const Value*, 32> nodes;
  std::shared_ptr<const replay::Evaluated> values;
  if (std::shared_ptr<const replay::Plan> hint = plans_->hint(function, args, &nodes, &values)) {
    plans_->count_replayed();
    ctx.count_replay();
    return replay::run(*hint, *values, tables_, nodes, ctx, plans_.get());
  }
  RELAX_VM_TRY(check_devices(fn, args));
  RELAX_VM_TRY(compact_arguments(fn, args));

  // The argument checks run on every other call, replayed or not: they bind the slots, from
  // which a plan computes the call's ints. Until the call is interpreted, the frame's
  // registers are the arguments alone (a replay needs no others).
  Frame& frame = stack.emplace_back();
  frame.function = function;
  frame.fn = &fn;
  frame.regs = std::move(args);
  frame.slots.assign(fn.slot_names.size(), 0);
  frame.bound.assign(fn.slot_names.size(), 0);
  const int32_t entry = entry_group_[static_cast<size_t>(function)];
  if (entry >= 0) {
    RELAX_VM_TRY(run_match(frame, entry));
    frame.pc = 1;
  }
  const replay::PlanCache::Lookup found = plans_->lookup(function, frame.regs, frame.slots, &nodes);
  if (found.plan) {
    plans_->count_replayed();
    ctx.count_replay();
    plans_->set_hint(function, found.plan, nodes, found.values);
    return replay::run(*found.plan, *found.values, tables_, nodes, ctx, plans_.get());
  }
  plans_->count_interpreted();
  frame.regs.resize(static_cast<size_t>(fn.num_registers));
  if (!found.record) return interpret(stack, ctx, nullptr);
  replay::Recorder rec(tables_, function, std::span<const Value>(frame.regs.data(), fn.param_names.size()),
                       frame.slots, frame.bound);
  absl::StatusOr<Value> result = interpret(stack, ctx, &rec);
  // A failed call records nothing, nor does one with a strided argument: a later call may.
  const bool abandoned = !result.ok() || rec.strided_argument();
  plans_->store(function, found.generation, abandoned ? nullptr : rec.finish(), abandoned);
  return result;
}

absl::StatusOr<Value> VirtualMachine::interpret(std::vector<Frame>& stack, ExecutionContext& ctx,
                                                replay::Recorder* rec) const {
  while (true) {
    Frame& frame = stack.back();
    const VMFunction& fn = *frame.fn;
    RELAX_CHECK(frame.pc < fn.code.size()) << fn.name << ": ran past the end of the code";
    const Instruction& ins = fn.code[frame.pc++];
    auto dst = [&]() -> Value& { return frame.regs[static_cast<size_t>(ins.dst)]; };
    auto fail = [&](const std::string& what) {
      return absl::InvalidArgumentError(
          absl::StrCat(fn.name, ": ", program_check::opcode_name(ins.op), ": ", what));
    };
    // What the recorder learns from the registers once the instruction ran; the others
    // report themselves (their frame may be gone after them, or they know more).
    const bool report = rec != nullptr && ins.op != Opcode::kCallKernel && ins.op != Opcode::kCallLibrary &&
                        ins.op != Opcode::kCallFunc && ins.op != Opcode::kRet &&
                        ins.op != Opcode::kAllocStorage;
    switch (ins.op) {
      case Opcode::kMatch:
        RELAX_VM_TRY(run_match(frame, static_cast<int32_t>(ins.index)));
        break;
      case Opcode::kLoadConst:
        dst() = constants_[static_cast<size_t>(ins.index)];
        break;
      case Opcode::kMakeShape: {
        std::vector<int64_t> dims(ins.operands.size());
        for (size_t i = 0; i < dims.size(); ++i) {
          absl::StatusOr<int64_t> d = operand_int(frame, ins.operands[i]);
          if (!d.ok()) return d.status();
          dims[i] = *d;
        }
        dst() = Value::shape(std::move(dims));
        break;
      }
      case Opcode::kMakeInt: {
        absl::StatusOr<int64_t> v = operand_int(frame, ins.operands[0]);
        if (!v.ok()) return v.status();
        dst() = Value(*v);
        break;
      }
      case Opcode::kMakeTuple: {
        std::vector<Value> fields(ins.operands.size());
        for (size_t i = 0; i < fields.size(); ++i) {
          absl::StatusOr<Value> v = operand_value(frame, ins.operands[i]);
          if (!v.ok()) return v.status();
          fields[i] = *std::move(v);
        }
        dst() = Value::tuple(std::move(fields));
        break;
      }
      case Opcode::kTupleGet: {
        absl::StatusOr<Value> v = operand_value(frame, ins.operands[0]);
        if (!v.ok()) return v.status();
        if (!v->is_tuple()) return fail("expected a tuple, got " + v->describe());
        if (static_cast<uint64_t>(ins.index) >= v->fields_or_die().size()) {
          return fail(absl::StrCat("field ", ins.index, " of a tuple of ",
                                   plural(v->fields_or_die().size(), "field"), " ", v->describe()));
        }
        Value field = v->fields_or_die()[static_cast<size_t>(ins.index)];
        dst() = std::move(field);
        break;
      }
      case Opcode::kAllocTensor: {
        std::vector<int64_t> shape(ins.operands.size());
        for (size_t i = 0; i < shape.size(); ++i) {
          absl::StatusOr<int64_t> d = operand_int(frame, ins.operands[i]);
          if (!d.ok()) return d.status();
          shape[i] = *d;
        }
        ctx.count_allocator_call();
        absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), ins.dtype, exec_->device);
        if (!t.ok()) {
          return absl::Status(t.status().code(),
                              absl::StrCat(fn.name, ": alloc_tensor: ", t.status().message()));
        }
        dst() = Value(*std::move(t));
        break;
      }
      case Opcode::kAllocStorage:
      case Opcode::kAllocTensorAt:
      case Opcode::kView: {
        absl::StatusOr<Value> v = ins.op == Opcode::kAllocStorage   ? alloc_storage(frame, ins, ctx)
                                  : ins.op == Opcode::kAllocTensorAt ? alloc_tensor_at(frame, ins)
                                                                     : view(frame, ins);
        if (!v.ok()) return v.status();
        dst() = *std::move(v);
        if (rec != nullptr && ins.op == Opcode::kAllocStorage) {
          rec->storage(frame.function, ins, storage_site_[static_cast<size_t>(frame.function)][frame.pc - 1], dst());
        }
        break;
      }
      case Opcode::kCallKernel:
        RELAX_VM_TRY(call_kernel(frame, ins, rec));
        break;
      case Opcode::kCallLibrary:
        RELAX_VM_TRY(call_library(frame, ins, rec));
        break;
      case Opcode::kCallBuiltin: {
        absl::StatusOr<Value> v = call_builtin(frame, ins);
        if (!v.ok()) return v.status();
        dst() = *std::move(v);
        break;
      }
      case Opcode::kCallFunc: {
        std::vector<Value> call_args(ins.operands.size());
        for (size_t i = 0; i < call_args.size(); ++i) {
          absl::StatusOr<Value> v = operand_value(frame, ins.operands[i]);
          if (!v.ok()) return v.status();
          call_args[i] = *std::move(v);
        }
        const int32_t callee = static_cast<int32_t>(ins.index);
        RELAX_VM_TRY(check_arity(exec_->functions[static_cast<size_t>(callee)], call_args.size()));
        if ((rec == nullptr || rec->aborted()) && returns_at_once(fn, frame.pc, ins.dst)) {
          // A tail call (a loop's recursion): the callee takes the caller's frame and returns
          // where the caller would have, so the stack does not grow.
          const int32_t return_dst = frame.return_dst;
          stack.pop_back();  // invalidates `frame`
          push_frame(stack, *exec_, callee, std::move(call_args), return_dst);
          break;
        }
        if (stack.size() >= kMaxCallDepth) {
          return absl::ResourceExhaustedError(absl::StrCat(
              fn.name, ": call of ", exec_->functions[static_cast<size_t>(callee)].name,
              ": calls nested deeper than ", kMaxCallDepth, " (unbounded recursion?)"));
        }
        if (rec != nullptr) rec->call(ins, exec_->functions[static_cast<size_t>(callee)]);
        push_frame(stack, *exec_, callee, std::move(call_args), ins.dst);  // invalidates `frame`
        break;
      }
      case Opcode::kMove: {
        absl::StatusOr<Value> v = operand_value(frame, ins.operands[0]);
        if (!v.ok()) return v.status();
        dst() = *std::move(v);
        break;
      }
      case Opcode::kIf: {
        absl::StatusOr<bool> c = condition(frame, ins.operands[0]);
        if (!c.ok()) return c.status();
        if (!*c) frame.pc = static_cast<size_t>(ins.index);
        break;
      }
      case Opcode::kGoto:
        frame.pc = static_cast<size_t>(ins.index);
        break;
      case Opcode::kKill:
        // Dropping the register's reference returns a dead tensor to its pool now.
        for (const Operand& op : ins.operands) frame.regs[static_cast<size_t>(op.value)] = Value();
        break;
      case Opcode::kRet: {
        absl::StatusOr<Value> v = operand_value(frame, ins.operands[0]);
        if (!v.ok()) return v.status();
        const int32_t return_dst = frame.return_dst;
        if (rec != nullptr) rec->ret(ins, *v);
        stack.pop_back();  // invalidates `frame`
        if (stack.empty()) return *std::move(v);
        stack.back().regs[static_cast<size_t>(return_dst)] = *std::move(v);
        break;
      }
    }
    if (report) rec->after(frame.function, ins, frame.regs, frame.slots);
  }
}

// ---------------------------------------------------------------------------
// Calls out of the VM.

absl::Status VirtualMachine::call_kernel(const Frame& frame, const Instruction& ins,
                                         replay::Recorder* rec) const {
  const std::string& name = exec_->kernel_names[static_cast<size_t>(ins.index)];
  const size_t n = ins.operands.size();
  constexpr size_t kInline = 16;
  RelaxKernelArg inline_args[kInline];
  std::vector<RelaxKernelArg> heap_args;
  RelaxKernelArg* args = inline_args;
  if (n > kInline) {
    heap_args.resize(n);
    args = heap_args.data();
  }
  for (size_t i = 0; i < n; ++i) {
    const Operand& op = ins.operands[i];
    RelaxKernelArg& arg = args[i];
    arg = RelaxKernelArg{};
    if (op.kind == Operand::Kind::kSym || op.kind == Operand::Kind::kImm) {
      absl::StatusOr<int64_t> v = operand_int(frame, op);
      if (!v.ok()) return v.status();
      arg.kind = RELAX_ARG_INT;
      arg.int_value = *v;
      continue;
    }
    // Registers and constants outlive the call, so pointers into them stay valid.
    const Value& v = op.kind == Operand::Kind::kReg ? frame.regs[static_cast<size_t>(op.value)]
                                                    : constants_[static_cast<size_t>(op.value)];
    switch (v.kind()) {
      case ValueKind::kTensor: {
        const Tensor& t = v.tensor_or_die();
        arg.kind = RELAX_ARG_BUFFER;
        arg.ndim = t.ndim();
        arg.dtype_code = static_cast<uint8_t>(t.dtype().code);
        arg.dtype_bits = t.dtype().bits;
        arg.dtype_lanes = t.dtype().lanes;
        arg.data = t.data();
        arg.shape = t.shape().data();
        arg.strides = t.strides().empty() ? nullptr : t.strides().data();
        break;
      }
      case ValueKind::kInt:
        arg.kind = RELAX_ARG_INT;
        arg.int_value = v.int_value_or_die();
        break;
      case ValueKind::kFloat:
        arg.kind = RELAX_ARG_FLOAT;
        arg.float_value = v.float_value_or_die();
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            frame.fn->name, ": kernel ", name, ": argument ", i, " is ",
            with_article(value_kind_name(v.kind())), " (", v.describe(),
            "), which a kernel cannot take"));
    }
  }
  constexpr int32_t kErrorCapacity = 512;
  char error[kErrorCapacity];
  error[0] = '\0';
  const int32_t rc = kernels_[static_cast<size_t>(ins.index)](args, static_cast<int32_t>(n), error,
                                                               kErrorCapacity);
  if (rc == 0) {
    if (rec != nullptr) rec->kernel(frame.function, ins, args, n);
    return absl::OkStatus();
  }
  error[kErrorCapacity - 1] = '\0';
  const std::string message = error[0] != '\0'
                                  ? std::string(error)
                                  : absl::StrCat("failed with code ", rc, " and no message");
  return absl::InvalidArgumentError(absl::StrCat(frame.fn->name, ": kernel ", name, ": ", message));
}

absl::Status VirtualMachine::call_library(const Frame& frame, const Instruction& ins,
                                          replay::Recorder* rec) const {
  std::vector<Value> args(ins.operands.size());
  for (size_t i = 0; i < args.size(); ++i) {
    absl::StatusOr<Value> v = operand_value(frame, ins.operands[i]);
    if (!v.ok()) return v.status();
    args[i] = *std::move(v);
  }
  absl::Status s = library_[static_cast<size_t>(ins.index)](args);
  if (s.ok()) {
    if (rec != nullptr) rec->library(frame.function, ins, args);
    return s;
  }
  return absl::Status(s.code(), absl::StrCat(frame.fn->name, ": library function ",
                                             exec_->library_functions[static_cast<size_t>(ins.index)],
                                             ": ", s.message()));
}

absl::StatusOr<Value> VirtualMachine::call_builtin(const Frame& frame, const Instruction& ins) const {
  auto fail = [&](const absl::Status& s, const std::string& what) {
    return absl::Status(s.code(), absl::StrCat(frame.fn->name, ": builtin ",
                                               exec_->builtin_functions[static_cast<size_t>(ins.index)],
                                               ": ", what, s.message()));
  };
  std::vector<Value> args(ins.operands.size());
  for (size_t i = 0; i < args.size(); ++i) {
    absl::StatusOr<Value> v = operand_value(frame, ins.operands[i]);
    if (!v.ok()) return v.status();
    args[i] = *std::move(v);
    // Builtins compute on the host: a device module's tensors go there and back (their
    // results' sizes depend on the values, which only a read of them tells).
    if (!on_host_) {
      absl::StatusOr<Value> host = vm_device::copy_to(args[i], Device::cpu());
      if (!host.ok()) {
        return fail(host.status(), absl::StrCat("copying argument ", i, " from ",
                                                exec_->device.to_string(), " to the host: "));
      }
      args[i] = *std::move(host);
    }
  }
  absl::StatusOr<Value> out = builtins_[static_cast<size_t>(ins.index)](args);
  if (!out.ok()) return fail(out.status(), "");
  if (on_host_) return out;
  absl::StatusOr<Value> back = vm_device::copy_to(*out, exec_->device);
  if (!back.ok()) {
    return fail(back.status(), absl::StrCat("copying the result to ", exec_->device.to_string(), ": "));
  }
  return back;
}

absl::StatusOr<Value> VirtualMachine::alloc_storage(const Frame& frame, const Instruction& ins,
                                                    ExecutionContext& ctx) const {
  absl::StatusOr<int64_t> bytes = operand_int(frame, ins.operands[0]);
  if (!bytes.ok()) return bytes.status();
  // frame.pc is past the instruction already.
  const int32_t site = storage_site_[static_cast<size_t>(frame.function)][frame.pc - 1];
  absl::StatusOr<Tensor> t = ctx.storage(static_cast<size_t>(site), *bytes, static_cast<size_t>(ins.index));
  if (!t.ok()) {
    return absl::Status(t.status().code(),
                        absl::StrCat(frame.fn->name, ": alloc_storage: ", t.status().message()));
  }
  return Value(*std::move(t));
}

absl::StatusOr<Value> VirtualMachine::alloc_tensor_at(const Frame& frame, const Instruction& ins) const {
  const std::string& name =
      constants_[static_cast<size_t>(ins.operands[1].value)].string_value_or_die();
  const std::string where = absl::StrCat(frame.fn->name, ": alloc_tensor ", name, ": ");
  const Value& storage = frame.regs[static_cast<size_t>(ins.operands[0].value)];
  if (!storage.is_tensor()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "expected a storage, got ", storage.describe()));
  }
  absl::StatusOr<int64_t> offset = operand_int(frame, ins.operands[2]);
  if (!offset.ok()) return offset.status();
  std::vector<int64_t> shape(ins.operands.size() - 3);
  for (size_t i = 0; i < shape.size(); ++i) {
    absl::StatusOr<int64_t> d = operand_int(frame, ins.operands[i + 3]);
    if (!d.ok()) return d.status();
    shape[i] = *d;
  }
  absl::StatusOr<Tensor> t = storage.tensor_or_die().view(*offset, std::move(shape), ins.dtype);
  if (!t.ok()) {
    return absl::Status(t.status().code(),
                        absl::StrCat(where, t.status().message(), " of its storage"));
  }
  if (ins.index == 1 && t->nbytes() != 0) {
    if (on_host_) {
      std::memset(t->data(), 0, t->nbytes());
    } else if (absl::Status s = vm_device::zero(t->data(), static_cast<int64_t>(t->nbytes()), exec_->device);
               !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(where, "zeroing: ", s.message()));
    }
  }
  return Value(*std::move(t));
}

absl::StatusOr<Value> VirtualMachine::view(const Frame& frame, const Instruction& ins) const {
  absl::StatusOr<Value> v = operand_value(frame, ins.operands[0]);
  if (!v.ok()) return v.status();
  const std::string where = absl::StrCat(frame.fn->name, ": view: ");
  if (!v->is_tensor()) {
    return absl::InvalidArgumentError(absl::StrCat(where, "expected a tensor, got ", v->describe()));
  }
  std::vector<int64_t> shape(ins.operands.size() - 1);
  for (size_t i = 0; i < shape.size(); ++i) {
    absl::StatusOr<int64_t> d = operand_int(frame, ins.operands[i + 1]);
    if (!d.ok()) return d.status();
    shape[i] = *d;
  }
  Tensor x = v->tensor_or_die();
  if (!x.is_contiguous()) {
    // A strided argument (imported through DLPack): the value is what matters at the
    // graph level, so view a compact copy of it.
    absl::StatusOr<Tensor> copy = compact(x);
    if (!copy.ok()) return absl::Status(copy.status().code(), where + std::string(copy.status().message()));
    x = *std::move(copy);
  }
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel)) numel = -1;
    if (numel < 0) break;
  }
  if (numel != x.numel()) {
    return absl::InvalidArgumentError(absl::StrCat(where, x.describe(), " has ", x.numel(),
                                                   " elements, the new shape (",
                                                   absl::StrJoin(shape, ", "), ") ",
                                                   numel < 0 ? std::string("is invalid")
                                                             : absl::StrCat("has ", numel)));
  }
  absl::StatusOr<Tensor> t = x.view(0, std::move(shape), x.dtype());
  if (!t.ok()) return absl::Status(t.status().code(), where + std::string(t.status().message()));
  return Value(*std::move(t));
}

absl::StatusOr<bool> VirtualMachine::condition(const Frame& frame, const Operand& op) const {
  if (op.kind == Operand::Kind::kSym || op.kind == Operand::Kind::kImm) {
    absl::StatusOr<int64_t> v = operand_int(frame, op);
    if (!v.ok()) return v.status();
    return *v != 0;
  }
  const Value& operand = op.kind == Operand::Kind::kReg ? frame.regs[static_cast<size_t>(op.value)]
                                                        : constants_[static_cast<size_t>(op.value)];
  // A one-element device tensor is read through a host copy of it (a synchronous copy: the
  // branch waits for the kernels that computed it).
  Value host_copy;
  if (operand.is_tensor() && operand.tensor_or_die().numel() == 1 &&
      operand.tensor_or_die().device().type != Device::Type::kCPU) {
    absl::StatusOr<Tensor> h = vm_device::to_host(operand.tensor_or_die());
    if (!h.ok()) {
      return absl::Status(h.status().code(), absl::StrCat(frame.fn->name, ": if: reading the condition ",
                                                          operand.describe(), " on ",
                                                          operand.tensor_or_die().device().to_string(),
                                                          ": ", h.status().message()));
    }
    host_copy = Value(*std::move(h));
  }
  const Value& v = host_copy.is_none() ? operand : host_copy;
  if (v.is_int()) return v.int_value_or_die() != 0;
  if (v.is_tensor() && v.tensor_or_die().numel() == 1 && v.tensor_or_die().device().type == Device::Type::kCPU &&
      v.tensor_or_die().dtype().lanes == 1) {
    const Tensor& t = v.tensor_or_die();
    const DataType d = t.dtype();
    const void* p = t.data();
    auto load = [p](auto zero) {
      decltype(zero) x;
      std::memcpy(&x, p, sizeof x);
      return x != zero;
    };
    if (d.is_int() || d.is_bool()) {
      switch (d.bits) {
        case 8: return load(uint8_t{0});
        case 16: return load(uint16_t{0});
        case 32: return load(uint32_t{0});
        case 64: return load(uint64_t{0});
        default: break;
      }
    }
    if (d.code == DataType::Code::kFloat && d.bits == 32) return load(0.0f);
    if (d.code == DataType::Code::kFloat && d.bits == 64) return load(0.0);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      frame.fn->name, ": if: the condition must be an int or a one-element host tensor of an integer, "
      "bool or float dtype, got ", v.describe()));
}

// ---------------------------------------------------------------------------
// Matching.

namespace {

std::string dim_name(const ValuePattern& p, size_t i) {
  return p.kind == PatternKind::kPrim ? "value" : absl::StrCat("dimension ", i);
}

// The dims that `p.dims` describe in `v`, which the structure phase has checked.
std::span<const int64_t> dims_of(const ValuePattern& p, const Value& v, int64_t* scratch) {
  switch (p.kind) {
    case PatternKind::kTensor: return v.tensor_or_die().shape();
    case PatternKind::kShape: return v.shape_dims_or_die();
    case PatternKind::kPrim:
      *scratch = v.int_value_or_die();
      return {scratch, 1};
    default: return {};
  }
}

}  // namespace

absl::Status VirtualMachine::run_match(Frame& frame, int32_t group) const {
  const MatchGroup& g = frame.fn->matches[static_cast<size_t>(group)];
  const GroupInfo& info = groups_[static_cast<size_t>(frame.function)][static_cast<size_t>(group)];
  for (const MatchItem& item : g.items) {
    const MatchContext ctx{&item, nullptr, g.checked};
    RELAX_VM_TRY(match_structure(frame, frame.fn->patterns[static_cast<size_t>(item.pattern)],
                                 frame.regs[static_cast<size_t>(item.reg)], ctx));
  }
  const DimsPhase phases[] = {info.has_solve ? &VirtualMachine::solve_dims : nullptr,
                             g.checked && info.has_check ? &VirtualMachine::check_dims : nullptr};
  for (DimsPhase phase : phases) {
    if (phase == nullptr) continue;
    for (const MatchItem& item : g.items) {
      const MatchContext ctx{&item, nullptr, g.checked};
      RELAX_VM_TRY(match_dims(frame, frame.fn->patterns[static_cast<size_t>(item.pattern)],
                              frame.regs[static_cast<size_t>(item.reg)], ctx, phase));
    }
  }
  for (const SlotBound& b : g.upper_bounds) {
    const size_t slot = static_cast<size_t>(b.slot);
    if (!frame.bound[slot] || frame.slots[slot] <= b.upper) continue;
    return absl::InvalidArgumentError(absl::StrCat(frame.fn->name, ": ", frame.fn->slot_names[slot], " = ",
                                                   frame.slots[slot], " exceeds its declared upper bound ",
                                                   b.upper));
  }
  return absl::OkStatus();
}

// The matched value in messages: "argument t, field 1".
std::string VirtualMachine::subject(const MatchContext& ctx) {
  std::vector<size_t> fields;
  for (const MatchPath* q = ctx.path; q != nullptr; q = q->parent) fields.push_back(q->field);
  std::string s = ctx.item->what;
  for (size_t i = fields.size(); i-- > 0;) absl::StrAppend(&s, ", field ", fields[i]);
  return s;
}

absl::Status VirtualMachine::match_structure(Frame& frame, const ValuePattern& p, const Value& v,
                                             const MatchContext& ctx) const {
  auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(frame.fn->name, ": ", subject(ctx), ": ", what));
  };
  const bool checked = ctx.checked;
  auto dtype_text = [&p] { return p.dtype ? p.dtype->to_string() : std::string(); };
  switch (p.kind) {
    case PatternKind::kObject: return absl::OkStatus();
    case PatternKind::kFunc: return fail("expected a function, got " + v.describe());
    case PatternKind::kTuple: {
      if (!checked && p.fields.empty()) return absl::OkStatus();
      if (!v.is_tuple() || v.fields_or_die().size() != p.fields.size()) {
        return fail(absl::StrCat("expected a tuple of ", plural(p.fields.size(), "field"), ", got ",
                                 v.describe()));
      }
      for (size_t i = 0; i < p.fields.size(); ++i) {
        const MatchPath child{ctx.path, i};
        const MatchContext c{ctx.item, &child, checked};
        RELAX_VM_TRY(match_structure(frame, p.fields[i], v.fields_or_die()[i], c));
      }
      return absl::OkStatus();
    }
    case PatternKind::kTensor: {
      if (!checked && p.dims.empty()) return absl::OkStatus();
      if (!v.is_tensor()) {
        return fail(absl::StrCat("expected ", with_article(p.dtype ? dtype_text() + " tensor" : "tensor"),
                                 ", got ", v.describe()));
      }
      const Tensor& t = v.tensor_or_die();
      if (checked && p.dtype && t.dtype() != *p.dtype) {
        return fail(absl::StrCat("expected ", with_article(dtype_text() + " tensor"), ", got ",
                                 t.dtype().to_string()));
      }
      if (p.ndim >= 0 && t.ndim() != p.ndim) {
        return fail(absl::StrCat("expected rank ", p.ndim, ", got rank ", t.ndim(), " (", t.describe(), ")"));
      }
      break;
    }
    case PatternKind::kShape: {
      if (!checked && p.dims.empty()) return absl::OkStatus();
      if (!v.is_shape()) return fail("expected a shape, got " + v.describe());
      const int64_t ndim = static_cast<int64_t>(v.shape_dims_or_die().size());
      if (p.ndim >= 0 && ndim != p.ndim) {
        return fail(absl::StrCat("expected rank ", p.ndim, ", got rank ", ndim, " (", v.describe(), ")"));
      }
      break;
    }
    case PatternKind::kPrim: {
      if (!checked && p.dims.empty()) return absl::OkStatus();
      const bool want_float = p.dtype && p.dtype->is_float();
      const bool want_int = (p.dtype && (p.dtype->is_int() || p.dtype->is_bool())) || !p.dims.empty();
      const bool ok = want_float ? v.is_float() : want_int ? v.is_int() : (v.is_int() || v.is_float());
      if (!ok) {
        const std::string expected = p.dtype ? with_article(dtype_text() + " value")
                                             : (want_int ? "an integer value" : "a number");
        return fail(absl::StrCat("expected ", expected, ", got ",
                                 with_article(value_kind_name(v.kind())), " (", v.describe(), ")"));
      }
      break;
    }
  }
  if (p.dims.empty()) return absl::OkStatus();
  // Bind the bare-variable dims.
  int64_t scratch = 0;
  const std::span<const int64_t> dims = dims_of(p, v, &scratch);
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const DimPattern& d = p.dims[i];
    if (d.rule != DimRule::kBind) continue;
    const size_t slot = static_cast<size_t>(d.slot);
    if (!frame.bound[slot]) {
      frame.slots[slot] = dims[i];
      frame.bound[slot] = 1;
    } else if (checked && frame.slots[slot] != dims[i]) {
      return fail(absl::StrCat(dim_name(p, i), " is ", dims[i], ", expected ", d.text, " = ",
                               frame.slots[slot]));
    }
  }
  return absl::OkStatus();
}

absl::Status VirtualMachine::match_dims(Frame& frame, const ValuePattern& p, const Value& v,
                                        const MatchContext& ctx, DimsPhase phase) const {
  if (p.kind == PatternKind::kTuple) {
    for (size_t i = 0; i < p.fields.size(); ++i) {
      const MatchPath child{ctx.path, i};
      const MatchContext c{ctx.item, &child, ctx.checked};
      RELAX_VM_TRY(match_dims(frame, p.fields[i], v.fields_or_die()[i], c, phase));
    }
    return absl::OkStatus();
  }
  if (p.dims.empty()) return absl::OkStatus();
  int64_t scratch = 0;
  return (this->*phase)(frame, p, dims_of(p, v, &scratch), ctx);
}

absl::Status VirtualMachine::solve_dims(Frame& frame, const ValuePattern& p,
                                         std::span<const int64_t> dims, const MatchContext& ctx) const {
  const VMFunction& fn = *frame.fn;
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const DimPattern& d = p.dims[i];
    if (d.rule != DimRule::kSolve) continue;
    const SymProgram& rest_program = fn.exprs[static_cast<size_t>(d.expr)];
    const size_t slot = static_cast<size_t>(d.slot);
    const std::string& var = fn.slot_names[slot];
    absl::StatusOr<int64_t> rest =
        eval(frame, d.expr, absl::StrCat(subject(ctx), ": ", dim_name(p, i), " (", d.text, "): "));
    if (!rest.ok()) return rest.status();
    auto fail = [&](const std::string& what) {
      return absl::InvalidArgumentError(
          absl::StrCat(fn.name, ": ", subject(ctx), ": ", dim_name(p, i), " is ", dims[i], ", ", what));
    };
    const std::string rest_vars = bindings(rest_program, fn, frame.slots.data(), frame.bound.data());
    int64_t diff = 0;
    if (__builtin_sub_overflow(dims[i], *rest, &diff) || (diff == INT64_MIN && d.coeff == -1)) {
      return fail(absl::StrCat("solving ", d.text, " for ", var, " overflows int64", in_parens(rest_vars)));
    }
    const int64_t value = diff / d.coeff;
    if (ctx.checked && (diff % d.coeff != 0 || value < 0)) {
      const double would_be = static_cast<double>(diff) / static_cast<double>(d.coeff);
      return fail(absl::StrCat("which is not ", d.text, " (", var, " would be ", would_be,
                               rest_vars.empty() ? "" : ", " + rest_vars, ")"));
    }
    if (!frame.bound[slot]) {
      frame.slots[slot] = value;
      frame.bound[slot] = 1;
    } else if (ctx.checked && frame.slots[slot] != value) {
      return fail(absl::StrCat("which is not ", d.text, " (", var, " = ", frame.slots[slot],
                               rest_vars.empty() ? "" : ", " + rest_vars, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status VirtualMachine::check_dims(Frame& frame, const ValuePattern& p,
                                         std::span<const int64_t> dims, const MatchContext& ctx) const {
  const VMFunction& fn = *frame.fn;
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const DimPattern& d = p.dims[i];
    if (d.rule != DimRule::kCheck) continue;
    const SymProgram& program = fn.exprs[static_cast<size_t>(d.expr)];
    const EvalOutcome out = evaluate(program, frame.slots.data(), frame.bound.data());
    if (out.failure == EvalFailure::kNone && out.value == dims[i]) continue;
    if (out.failure != EvalFailure::kNone) {
      // The slow path again, for the message.
      return eval(frame, d.expr, absl::StrCat(subject(ctx), ": ", dim_name(p, i), " (", d.text, "): "))
          .status();
    }
    const std::string& text = d.text.empty() ? program.text : d.text;
    std::string message =
        absl::StrCat(fn.name, ": ", subject(ctx), ": ", dim_name(p, i), " is ", dims[i], ", expected ", text);
    if (!is_single(program, SymOp::kConst)) absl::StrAppend(&message, " = ", out.value);
    if (!is_single(program, SymOp::kSlot)) {
      absl::StrAppend(&message, in_parens(bindings(program, fn, frame.slots.data(), frame.bound.data())));
    }
    return absl::InvalidArgumentError(message);
  }
  return absl::OkStatus();
}

}  // namespace relax::runtime
