// Recording an execution plan while the VM interprets a call (see replay_plan.h).
//
// The recorder mirrors the VM's frames with a Ref per register and, per frame, the int of each
// bound slot, and follows every instruction. Every number the VM computes from the binding is
// recorded as how it computes it: an expression evaluated in a frame becomes an int whose slot
// operands are replaced by the ints of those slots; the slots the entry match bound are roots
// (read from the call's own match), those an inner match binds (a callee's parameters, a
// match_cast) get the ints of the dims they were bound from -- a Ref's dims, or an argument's
// dims and int values, which are roots too. Equal ints are made once, so a 22-layer model has
// a handful. Each int's value on the recorded call is kept and compared with the VM's wherever
// the VM shows it (kernel arguments, shapes, offsets, sizes, slots after a match): a
// difference aborts the recording, so a plan never holds an int that is not the VM's.
//
// Per-call decisions become guards: a branch on an int (taken or not), each check of an inner
// match (kBind of a bound slot, kSolve's exactness and sign, kCheck) and its upper bounds, and
// the fit of every tensor placed in a storage and of every view. A loop whose trip count
// depends on the binding branches once per iteration, so another count fails a guard.
//
// It gives up (aborted) on what a later call might do differently whatever its binding:
//   - kIf on a value read from data (a tensor that is not a constant, a float argument);
//   - kCallBuiltin (results with data-dependent shapes, made by the builtin);
//   - a strided argument tensor, or a view that had to copy;
//   - an int it cannot follow (a view of a constant whose shape depends on the binding);
//   - a plan longer than kMaxSteps.
// kCallFunc is recorded through: the callee's frame is mirrored like the caller's.
#include <cstring>
#include <string>
#include <utility>

#include "relax/runtime/module.h"
#include "relax/support/check.h"
#include "replay/replay_plan.h"

namespace relax::runtime::replay {

namespace {

Ref fixed(Value v) {
  Ref r;
  r.kind = Ref::Kind::kFixed;
  r.fixed = std::move(v);
  return r;
}

Ref int_ref(int32_t value) {
  Ref r;
  r.kind = Ref::Kind::kInt;
  r.value = value;
  return r;
}

Ref arg_ref(int32_t node) {
  Ref r;
  r.kind = Ref::Kind::kArg;
  r.node = node;
  return r;
}

int64_t byte_distance(const Tensor& from, const Tensor& to) {
  return static_cast<const char*>(to.data()) - static_cast<const char*>(from.data());
}

int64_t element_bytes(DataType dtype) { return (int64_t{dtype.bits} * dtype.lanes + 7) / 8; }

template <typename T>
void append_bytes(std::string* key, const T& v) {
  key->append(reinterpret_cast<const char*>(&v), sizeof v);
}

}  // namespace

Recorder::Recorder(const Tables& tables, int32_t function, std::span<const Value> params,
                   std::span<const int64_t> slots, std::span<const uint8_t> bound)
    : tables_(tables), plan_(std::make_shared<Plan>()) {
  const VMFunction& fn = tables_.exec->functions[static_cast<size_t>(function)];
  Frame& frame = frames_.emplace_back();
  frame.fn = &fn;
  frame.regs.resize(static_cast<size_t>(fn.num_registers));
  frame.slots.assign(fn.slot_names.size(), -1);
  frame.expr_ints.assign(fn.exprs.size(), -1);
  plan_->num_params = static_cast<int32_t>(params.size());
  for (size_t i = 0; i < params.size(); ++i) frame.regs[i] = arg_ref(add_node(params[i]));
  plan_->num_bases = static_cast<int32_t>(plan_->nodes.size());
  for (size_t s = 0; s < frame.slots.size(); ++s) {
    if (bound[s]) {
      IntExpr e;
      e.kind = IntExpr::Kind::kSlot;
      e.value = static_cast<int64_t>(s);
      frames_.back().slots[s] = add_root(e, slots[s]);
    }
  }
}

int32_t Recorder::add_node(const Value& v) {
  const auto index = static_cast<int32_t>(plan_->nodes.size());
  plan_->nodes.emplace_back();
  node_values_.push_back(v);
  ArgNode node;
  node.kind = v.kind();
  switch (v.kind()) {
    case ValueKind::kTensor: {
      const Tensor& t = v.tensor_or_die();
      // Kernels would get its strides, which the plan does not patch.
      if (!t.strides().empty()) {
        strided_argument_ = true;
        abort();
      }
      node.dtype = t.dtype();
      node.device = t.device();
      node.ndim = static_cast<int32_t>(t.ndim());
      break;
    }
    case ValueKind::kShape: node.ndim = static_cast<int32_t>(v.shape_dims_or_die().size()); break;
    case ValueKind::kTuple:
      for (const Value& field : v.fields_or_die()) node.children.push_back(add_node(field));
      break;
    default: break;
  }
  plan_->nodes[static_cast<size_t>(index)] = std::move(node);
  return index;
}

// ---------------------------------------------------------------------------
// Ints.

int32_t Recorder::add_root(const IntExpr& e, int64_t value) {
  std::string key;
  append_bytes(&key, e.kind);
  append_bytes(&key, e.node);
  append_bytes(&key, e.value);
  auto [it, inserted] = int_index_.try_emplace(std::move(key), static_cast<int32_t>(plan_->ints.size()));
  if (inserted) {
    plan_->ints.push_back(e);
    values_.push_back(value);
  }
  return it->second;
}

int32_t Recorder::constant(int64_t v) {
  IntExpr e;
  e.kind = IntExpr::Kind::kConst;
  e.value = v;
  return add_root(e, v);
}

int32_t Recorder::program(std::span<const SymInstr> code) {
  if (code.size() == 1 && code[0].op == SymOp::kSlot) return static_cast<int32_t>(code[0].operand);
  int64_t value = 0;
  if (!eval_program(code, values_.data(), &value)) {
    abort();  // the VM computed it, so this is not how it did
    return constant(0);
  }
  bool reads_ints = false;
  for (const SymInstr& instr : code) {
    if (instr.op == SymOp::kSlot && plan_->ints[static_cast<size_t>(instr.operand)].kind != IntExpr::Kind::kConst) {
      reads_ints = true;
    }
  }
  if (!reads_ints) return constant(value);
  std::string key;
  append_bytes(&key, IntExpr::Kind::kProgram);
  for (const SymInstr& instr : code) {
    append_bytes(&key, instr.op);
    append_bytes(&key, instr.operand);
  }
  auto [it, inserted] = int_index_.try_emplace(std::move(key), static_cast<int32_t>(plan_->ints.size()));
  if (inserted) {
    IntExpr e;
    e.kind = IntExpr::Kind::kProgram;
    e.first = static_cast<int32_t>(plan_->int_code.size());
    e.count = static_cast<int32_t>(code.size());
    plan_->int_code.insert(plan_->int_code.end(), code.begin(), code.end());
    plan_->ints.push_back(e);
    values_.push_back(value);
  }
  return it->second;
}

int32_t Recorder::binary(SymOp op, int32_t a, int32_t b) {
  const SymInstr code[] = {{SymOp::kSlot, a}, {SymOp::kSlot, b}, {op, 0}};
  return program(code);
}

int32_t Recorder::expr_int(int32_t expr) {
  Frame& frame = frames_.back();
  int32_t& memo = frame.expr_ints[static_cast<size_t>(expr)];
  if (memo >= 0) return memo;
  std::vector<SymInstr> code = frame.fn->exprs[static_cast<size_t>(expr)].code;
  for (SymInstr& instr : code) {
    if (instr.op != SymOp::kSlot) continue;
    const int32_t slot = frame.slots[static_cast<size_t>(instr.operand)];
    if (slot < 0) {
      abort();  // read before it is bound: the VM failed on it
      return constant(0);
    }
    instr.operand = slot;
  }
  memo = program(code);
  return memo;
}

int32_t Recorder::operand_int(const Operand& op) {
  if (op.kind == Operand::Kind::kImm) return constant(op.value);
  if (op.kind == Operand::Kind::kSym) return expr_int(static_cast<int32_t>(op.value));
  abort();
  return constant(0);
}

int32_t Recorder::numel(std::span<const int32_t> dims) {
  int32_t n = constant(1);
  for (int32_t d : dims) n = binary(SymOp::kMul, n, d);
  return n;
}

int32_t Recorder::nbytes(std::span<const int32_t> dims, DataType dtype) {
  return binary(SymOp::kMul, numel(dims), constant(element_bytes(dtype)));
}

int32_t Recorder::checked(int32_t i, int64_t expected) {
  if (values_[static_cast<size_t>(i)] != expected) abort();
  return i;
}

void Recorder::guard(int32_t i) {
  if (aborted_) return;
  const bool holds = values_[static_cast<size_t>(i)] != 0;
  if (plan_->ints[static_cast<size_t>(i)].kind == IntExpr::Kind::kConst) return;  // always so
  auto [it, inserted] = guarded_.try_emplace(i, holds);
  if (inserted) plan_->guards.push_back({i, holds});
}

int32_t Recorder::arg_dim(int32_t node, int64_t dim) {
  const Value& v = node_values_[static_cast<size_t>(node)];
  IntExpr e;
  e.kind = IntExpr::Kind::kArgDim;
  e.node = node;
  e.value = dim;
  const auto d = static_cast<size_t>(dim);
  return add_root(e, v.is_tensor() ? v.tensor_or_die().shape()[d] : v.shape_dims_or_die()[d]);
}

int32_t Recorder::arg_int(int32_t node) {
  IntExpr e;
  e.kind = IntExpr::Kind::kArgInt;
  e.node = node;
  return add_root(e, node_values_[static_cast<size_t>(node)].int_value_or_die());
}

bool Recorder::same_dims(std::span<const int32_t> dims, std::span<const int64_t> shape) {
  if (dims.size() != shape.size()) {
    abort();
    return false;
  }
  for (size_t i = 0; i < dims.size(); ++i) checked(dims[i], shape[i]);
  return !aborted_;
}

bool Recorder::tensor_dims(const Ref& r, std::vector<int32_t>* dims) {
  dims->clear();
  switch (r.kind) {
    case Ref::Kind::kTensor: *dims = r.dims; return true;
    case Ref::Kind::kArg: {
      const ArgNode& node = plan_->nodes[static_cast<size_t>(r.node)];
      if (node.kind != ValueKind::kTensor) return false;
      for (int32_t j = 0; j < node.ndim; ++j) dims->push_back(arg_dim(r.node, j));
      return true;
    }
    case Ref::Kind::kFixed:
      if (!r.fixed.is_tensor()) return false;
      for (int64_t d : r.fixed.tensor_or_die().shape()) dims->push_back(constant(d));
      return true;
    default: return false;
  }
}

// offset >= 0, every dim >= 0 and offset + the bytes of (dims, dtype) <= size, as
// Tensor::view requires.
void Recorder::require_fits(int32_t offset, std::span<const int32_t> dims, DataType dtype, int32_t size) {
  const int32_t zero = constant(0);
  for (int32_t d : dims) guard(binary(SymOp::kLe, zero, d));
  guard(binary(SymOp::kLe, zero, offset));
  guard(binary(SymOp::kLe, binary(SymOp::kAdd, offset, nbytes(dims, dtype)), size));
}

int32_t Recorder::shape_run(std::span<const int32_t> dims) {
  std::string key;
  for (int32_t d : dims) append_bytes(&key, d);
  auto [it, inserted] = shape_runs_.try_emplace(std::move(key), static_cast<int32_t>(plan_->shape_pool.size()));
  if (inserted) plan_->shape_pool.insert(plan_->shape_pool.end(), dims.begin(), dims.end());
  return it->second;
}

// ---------------------------------------------------------------------------
// Matches.

bool Recorder::dims_of(const ValuePattern& p, const Ref& r, std::vector<int32_t>* dims) {
  dims->clear();
  switch (p.kind) {
    case PatternKind::kTensor: return tensor_dims(r, dims);
    case PatternKind::kShape:
      if (r.kind == Ref::Kind::kShape) {
        *dims = r.dims;
        return true;
      }
      if (r.kind == Ref::Kind::kArg && plan_->nodes[static_cast<size_t>(r.node)].kind == ValueKind::kShape) {
        for (int32_t j = 0; j < plan_->nodes[static_cast<size_t>(r.node)].ndim; ++j) dims->push_back(arg_dim(r.node, j));
        return true;
      }
      if (r.kind == Ref::Kind::kFixed && r.fixed.is_shape()) {
        for (int64_t d : r.fixed.shape_dims_or_die()) dims->push_back(constant(d));
        return true;
      }
      return false;
    case PatternKind::kPrim:
      if (r.kind == Ref::Kind::kInt) {
        dims->push_back(r.value);
        return true;
      }
      if (r.kind == Ref::Kind::kArg && plan_->nodes[static_cast<size_t>(r.node)].kind == ValueKind::kInt) {
        dims->push_back(arg_int(r.node));
        return true;
      }
      if (r.kind == Ref::Kind::kFixed && r.fixed.is_int()) {
        dims->push_back(constant(r.fixed.int_value_or_die()));
        return true;
      }
      return false;
    default: return false;
  }
}

// The values with dims that `p` matches in `r`, as the VM's structure phase walks them.
void Recorder::collect(const ValuePattern& p, const Ref& r, bool checked_group, std::vector<MatchedDims>* out) {
  switch (p.kind) {
    case PatternKind::kObject: return;
    case PatternKind::kFunc: abort(); return;
    case PatternKind::kTuple: {
      if (!checked_group && p.fields.empty()) return;
      std::vector<Ref> fields;
      if (r.kind == Ref::Kind::kTuple) {
        fields = r.fields;
      } else if (r.kind == Ref::Kind::kArg && plan_->nodes[static_cast<size_t>(r.node)].kind == ValueKind::kTuple) {
        for (int32_t child : plan_->nodes[static_cast<size_t>(r.node)].children) fields.push_back(arg_ref(child));
      } else if (r.kind == Ref::Kind::kFixed && r.fixed.is_tuple()) {
        for (const Value& f : r.fixed.fields_or_die()) fields.push_back(fixed(f));
      }
      if (fields.size() != p.fields.size()) {
        abort();
        return;
      }
      for (size_t i = 0; i < fields.size(); ++i) collect(p.fields[i], fields[i], checked_group, out);
      return;
    }
    default: break;
  }
  if (p.dims.empty()) return;
  MatchedDims m{&p, {}};
  if (!dims_of(p, r, &m.dims) || m.dims.size() != p.dims.size()) {
    abort();
    return;
  }
  out->push_back(std::move(m));
}

// An inner match (the entry match of the called function ran before the recording), in the
// VM's phases: the ints of the slots it binds, and guards for what it checks.
void Recorder::match_group(const VMFunction& fn, const MatchGroup& g) {
  std::vector<MatchedDims> matched;
  for (const MatchItem& item : g.items) {
    collect(fn.patterns[static_cast<size_t>(item.pattern)], reg(item.reg), g.checked, &matched);
  }
  if (aborted_) return;
  std::vector<int32_t>& slots = frames_.back().slots;
  auto bind = [&](int32_t slot, int32_t value) {
    int32_t& s = slots[static_cast<size_t>(slot)];
    if (s < 0) {
      s = value;
    } else if (g.checked) {
      guard(binary(SymOp::kEq, s, value));
    }
  };
  for (const MatchedDims& m : matched) {
    for (size_t i = 0; i < m.dims.size(); ++i) {
      const DimPattern& d = m.pattern->dims[i];
      if (d.rule == DimRule::kBind) bind(d.slot, m.dims[i]);
    }
  }
  for (const MatchedDims& m : matched) {
    for (size_t i = 0; i < m.dims.size(); ++i) {
      const DimPattern& d = m.pattern->dims[i];
      if (d.rule != DimRule::kSolve) continue;
      const int32_t diff = binary(SymOp::kSub, m.dims[i], expr_int(d.expr));
      const int32_t coeff = constant(d.coeff);
      // Exact (checked groups require it; unchecked ones truncate, which floor division
      // matches only when exact, so the plan requires it there too).
      guard(binary(SymOp::kEq, binary(SymOp::kFloorMod, diff, coeff), constant(0)));
      const int32_t value = binary(SymOp::kFloorDiv, diff, coeff);
      if (g.checked) guard(binary(SymOp::kLe, constant(0), value));
      bind(d.slot, value);
    }
  }
  if (g.checked) {
    for (const MatchedDims& m : matched) {
      for (size_t i = 0; i < m.dims.size(); ++i) {
        const DimPattern& d = m.pattern->dims[i];
        if (d.rule == DimRule::kCheck) guard(binary(SymOp::kEq, m.dims[i], expr_int(d.expr)));
      }
    }
  }
  for (const SlotBound& b : g.upper_bounds) {
    const int32_t s = slots[static_cast<size_t>(b.slot)];
    if (s >= 0) guard(binary(SymOp::kLe, s, constant(b.upper)));
  }
}

// ---------------------------------------------------------------------------
// Instructions.

Ref Recorder::operand(const Operand& op, const Value& value) {
  switch (op.kind) {
    case Operand::Kind::kReg: return frames_.back().regs[static_cast<size_t>(op.value)];
    case Operand::Kind::kConst: return fixed((*tables_.constants)[static_cast<size_t>(op.value)]);
    case Operand::Kind::kSym:
    case Operand::Kind::kImm: {
      const int32_t i = operand_int(op);
      if (value.is_int()) checked(i, value.int_value_or_die());
      return int_ref(i);
    }
  }
  return {};
}

bool Recorder::location(const Ref& r, int32_t* base, int32_t* offset) const {
  if (r.kind == Ref::Kind::kTensor) {
    *base = r.base;
    *offset = r.offset;
    return true;
  }
  if (r.kind == Ref::Kind::kArg && plan_->nodes[static_cast<size_t>(r.node)].kind == ValueKind::kTensor) {
    *base = r.node;
    *offset = -1;  // 0: the caller makes the int
    return true;
  }
  return false;
}

Step& Recorder::add_step(StepKind kind, int32_t function) {
  if (plan_->steps.size() >= kMaxSteps) abort();
  Step& s = plan_->steps.emplace_back();
  s.kind = kind;
  s.function = function;
  return s;
}

void Recorder::after(int32_t function, const Instruction& ins, const std::vector<Value>& regs,
                     std::span<const int64_t> slots) {
  if (aborted_) return;
  const VMFunction& fn = tables_.exec->functions[static_cast<size_t>(function)];
  auto dst_value = [&]() -> const Value& { return regs[static_cast<size_t>(ins.dst)]; };
  auto value_of = [&](const Operand& op) -> Value {
    if (op.kind == Operand::Kind::kReg) return regs[static_cast<size_t>(op.value)];
    if (op.kind == Operand::Kind::kConst) return (*tables_.constants)[static_cast<size_t>(op.value)];
    return Value();  // ints: compared where the result shows them
  };
  switch (ins.op) {
    case Opcode::kLoadConst: reg(ins.dst) = fixed(dst_value()); break;
    case Opcode::kMakeShape: {
      Ref r;
      r.kind = Ref::Kind::kShape;
      for (const Operand& op : ins.operands) r.dims.push_back(operand_int(op));
      same_dims(r.dims, dst_value().shape_dims_or_die());
      reg(ins.dst) = std::move(r);
      break;
    }
    case Opcode::kMakeInt:
      reg(ins.dst) = int_ref(checked(operand_int(ins.operands[0]), dst_value().int_value_or_die()));
      break;
    case Opcode::kMakeTuple: {
      Ref r;
      r.kind = Ref::Kind::kTuple;
      for (const Operand& op : ins.operands) r.fields.push_back(operand(op, value_of(op)));
      reg(ins.dst) = std::move(r);
      break;
    }
    case Opcode::kTupleGet: {
      const Ref source = operand(ins.operands[0], value_of(ins.operands[0]));
      const auto field = static_cast<size_t>(ins.index);
      if (source.kind == Ref::Kind::kTuple) {
        reg(ins.dst) = source.fields[field];
      } else if (source.kind == Ref::Kind::kFixed) {
        reg(ins.dst) = fixed(dst_value());
      } else if (source.kind == Ref::Kind::kArg) {
        reg(ins.dst) = arg_ref(plan_->nodes[static_cast<size_t>(source.node)].children[field]);
      } else {
        abort();
      }
      break;
    }
    case Opcode::kMove: reg(ins.dst) = operand(ins.operands[0], dst_value()); break;
    case Opcode::kKill:
      for (const Operand& op : ins.operands) reg(op.value) = Ref();
      break;
    case Opcode::kIf: {
      const Operand& op = ins.operands[0];
      if (op.kind == Operand::Kind::kSym) {
        guard(expr_int(static_cast<int32_t>(op.value)));
      } else if (op.kind == Operand::Kind::kReg) {
        const Ref& r = reg(op.value);
        if (r.kind == Ref::Kind::kInt) {
          guard(r.value);
        } else if (r.kind == Ref::Kind::kArg && plan_->nodes[static_cast<size_t>(r.node)].kind == ValueKind::kInt) {
          guard(arg_int(r.node));
        } else if (r.kind != Ref::Kind::kFixed) {
          abort();  // a branch on data
        }
      }
      break;
    }
    case Opcode::kGoto: break;
    case Opcode::kMatch:
      match_group(fn, fn.matches[static_cast<size_t>(ins.index)]);
      for (size_t s = 0; s < frames_.back().slots.size() && !aborted_; ++s) {
        if (frames_.back().slots[s] >= 0) checked(frames_.back().slots[s], slots[s]);
      }
      break;
    case Opcode::kView: {
      const Value source_value = value_of(ins.operands[0]);
      const Ref source = operand(ins.operands[0], source_value);
      std::vector<int32_t> dims;
      for (size_t i = 1; i < ins.operands.size(); ++i) dims.push_back(operand_int(ins.operands[i]));
      if (!same_dims(dims, dst_value().tensor_or_die().shape())) break;
      if (source.kind == Ref::Kind::kFixed) {
        for (int32_t d : dims) {
          if (plan_->ints[static_cast<size_t>(d)].kind != IntExpr::Kind::kConst) abort();
        }
        reg(ins.dst) = fixed(dst_value());
        break;
      }
      int32_t base = 0, offset = 0;
      std::vector<int32_t> source_dims;
      // A strided source was copied: the view is not in the source's memory.
      if (!location(source, &base, &offset) || !tensor_dims(source, &source_dims) ||
          source_value.tensor_or_die().data() != dst_value().tensor_or_die().data()) {
        abort();
        break;
      }
      const int32_t zero = constant(0);
      for (int32_t d : dims) guard(binary(SymOp::kLe, zero, d));
      guard(binary(SymOp::kEq, numel(dims), numel(source_dims)));
      Ref r;
      r.kind = Ref::Kind::kTensor;
      r.base = base;
      r.offset = offset < 0 ? zero : offset;
      r.dims = std::move(dims);
      r.dtype = dst_value().tensor_or_die().dtype();
      reg(ins.dst) = std::move(r);
      break;
    }
    case Opcode::kAllocTensorAt: {
      const Value& storage = regs[static_cast<size_t>(ins.operands[0].value)];
      const Ref source = reg(ins.operands[0].value);
      int32_t base = 0, source_offset = 0;
      std::vector<int32_t> source_dims;
      if (!location(source, &base, &source_offset) || !tensor_dims(source, &source_dims)) {
        abort();
        break;
      }
      const Tensor& t = dst_value().tensor_or_die();
      const int32_t offset = checked(operand_int(ins.operands[2]), byte_distance(storage.tensor_or_die(), t));
      std::vector<int32_t> dims;
      for (size_t i = 3; i < ins.operands.size(); ++i) dims.push_back(operand_int(ins.operands[i]));
      if (!same_dims(dims, t.shape())) break;
      const auto source_dtype = storage.tensor_or_die().dtype();
      require_fits(offset, dims, ins.dtype, nbytes(source_dims, source_dtype));
      Ref r;
      r.kind = Ref::Kind::kTensor;
      r.base = base;
      r.offset = source_offset < 0 ? offset : binary(SymOp::kAdd, source_offset, offset);
      r.dims = std::move(dims);
      r.dtype = ins.dtype;
      if (ins.index == 1) {
        Step& s = add_step(StepKind::kZero, function);
        s.base = r.base;
        s.offset = r.offset;
        s.bytes = nbytes(r.dims, r.dtype);
      }
      reg(ins.dst) = std::move(r);
      break;
    }
    case Opcode::kAllocTensor: {
      const Tensor& t = dst_value().tensor_or_die();
      Ref r;
      r.kind = Ref::Kind::kTensor;
      for (const Operand& op : ins.operands) r.dims.push_back(operand_int(op));
      if (!same_dims(r.dims, t.shape())) break;
      Step& s = add_step(StepKind::kFresh, function);
      s.base = new_base();
      s.first = shape_run(r.dims);
      s.count = static_cast<int32_t>(r.dims.size());
      s.dtype = t.dtype();
      r.base = s.base;
      r.offset = constant(0);
      r.whole = true;
      r.dtype = t.dtype();
      reg(ins.dst) = std::move(r);
      break;
    }
    case Opcode::kCallBuiltin: abort(); break;
    default:
      RELAX_CHECK(false) << "Recorder::after: " << static_cast<int>(ins.op) << " is reported apart";
  }
}

void Recorder::storage(int32_t function, const Instruction& ins, int32_t site, const Value& storage) {
  if (aborted_) return;
  const Tensor& t = storage.tensor_or_die();
  const int32_t bytes = checked(operand_int(ins.operands[0]), t.shape()[0]);
  Step& s = add_step(StepKind::kStorage, function);
  s.index = site;
  s.base = new_base();
  s.bytes = bytes;
  s.alignment = ins.index;
  Ref r;
  r.kind = Ref::Kind::kTensor;
  r.base = s.base;
  r.offset = constant(0);
  r.whole = true;
  r.dims = {bytes};
  r.dtype = t.dtype();
  reg(ins.dst) = std::move(r);
}

void Recorder::kernel(int32_t function, const Instruction& ins, const RelaxKernelArg* args, size_t n) {
  if (aborted_) return;
  Step& s = add_step(StepKind::kKernel, function);
  s.index = static_cast<int32_t>(ins.index);
  s.first = static_cast<int32_t>(plan_->kernel_args.size());
  s.count = static_cast<int32_t>(n);
  s.patch_first = static_cast<int32_t>(plan_->patches.size());
  ++plan_->kernel_calls;
  for (size_t i = 0; i < n && !aborted_; ++i) {
    RelaxKernelArg arg = args[i];
    const auto index = static_cast<int32_t>(plan_->kernel_args.size());
    const Operand& op = ins.operands[i];
    auto patch = [&](Patch::Kind kind, int32_t source, int32_t value) {
      plan_->patches.push_back({kind, index, source, value});
    };
    auto int_arg = [&](int32_t value) {
      checked(value, arg.int_value);
      if (plan_->ints[static_cast<size_t>(value)].kind != IntExpr::Kind::kConst) patch(Patch::Kind::kInt, 0, value);
    };
    if (op.kind == Operand::Kind::kSym || op.kind == Operand::Kind::kImm) {
      int_arg(operand_int(op));
      plan_->kernel_args.push_back(arg);
      continue;
    }
    const Ref r = op.kind == Operand::Kind::kReg ? reg(op.value)
                                                 : fixed((*tables_.constants)[static_cast<size_t>(op.value)]);
    if (r.kind == Ref::Kind::kFixed) {
      // A constant's memory, shape and strides: the same on every call.
      if (arg.kind == RELAX_ARG_BUFFER) plan_->keep_alive.push_back(r.fixed);
    } else if (arg.kind == RELAX_ARG_BUFFER) {
      int32_t base = 0, offset = 0;
      if (!location(r, &base, &offset) || arg.strides != nullptr) {
        abort();
        break;
      }
      patch(Patch::Kind::kData, base, offset < 0 ? constant(0) : offset);
      if (r.kind == Ref::Kind::kArg) {
        patch(Patch::Kind::kArgShape, r.node, 0);
      } else {
        if (!same_dims(r.dims, std::span<const int64_t>(arg.shape, static_cast<size_t>(arg.ndim)))) break;
        patch(Patch::Kind::kShape, 0, shape_run(r.dims));
      }
      arg.data = nullptr;
      arg.shape = nullptr;
    } else if (arg.kind == RELAX_ARG_INT && r.kind == Ref::Kind::kInt) {
      int_arg(r.value);
    } else if (arg.kind == RELAX_ARG_INT && r.kind == Ref::Kind::kArg) {
      int_arg(arg_int(r.node));
    } else if (arg.kind == RELAX_ARG_FLOAT && r.kind == Ref::Kind::kArg) {
      patch(Patch::Kind::kFloat, r.node, 0);
    } else {
      abort();
      break;
    }
    plan_->kernel_args.push_back(arg);
  }
  s.patch_count = static_cast<int32_t>(plan_->patches.size()) - s.patch_first;
}

void Recorder::library(int32_t function, const Instruction& ins, const std::vector<Value>& args) {
  if (aborted_) return;
  Step& s = add_step(StepKind::kLibrary, function);
  s.index = static_cast<int32_t>(ins.index);
  s.first = static_cast<int32_t>(plan_->library_args.size());
  s.count = static_cast<int32_t>(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    Ref r = operand(ins.operands[i], args[i]);
    if (r.kind == Ref::Kind::kNone) {
      abort();
      return;
    }
    plan_->library_args.push_back(std::move(r));
  }
}

void Recorder::call(const Instruction& ins, const VMFunction& callee) {
  if (aborted_) return;
  Frame frame;
  frame.fn = &callee;
  frame.regs.resize(static_cast<size_t>(callee.num_registers));
  frame.slots.assign(callee.slot_names.size(), -1);
  frame.expr_ints.assign(callee.exprs.size(), -1);
  frame.return_dst = ins.dst;
  for (size_t i = 0; i < ins.operands.size(); ++i) frame.regs[i] = operand(ins.operands[i], Value());
  frames_.push_back(std::move(frame));
}

void Recorder::ret(const Instruction& ins, const Value& value) {
  if (aborted_) return;
  Ref r = operand(ins.operands[0], value);
  const int32_t return_dst = frames_.back().return_dst;
  frames_.pop_back();
  if (frames_.empty()) {
    plan_->result = std::move(r);
    returned_ = true;
  } else {
    reg(return_dst) = std::move(r);
  }
}

// Releases each storage after its last use, as the interpreter's kills do: a later site of the
// call (a callee's arena, unplanned code's next tensor) may then take it over.
void Recorder::add_releases() {
  Plan& p = *plan_;
  const auto first_handle = static_cast<int32_t>(p.nodes.size());
  std::vector<int64_t> last(static_cast<size_t>(p.num_bases), -1);
  std::vector<uint8_t> escapes(static_cast<size_t>(p.num_bases), 0);
  std::vector<uint8_t> storage(static_cast<size_t>(p.num_bases), 0);
  auto mark = [&](const Ref& r, int64_t step, auto&& self) -> void {
    if (r.kind == Ref::Kind::kTensor) {
      if (step < 0) escapes[static_cast<size_t>(r.base)] = 1;
      else last[static_cast<size_t>(r.base)] = step;
    }
    for (const Ref& f : r.fields) self(f, step, self);
  };
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    const auto at = static_cast<int64_t>(i);
    switch (s.kind) {
      case StepKind::kStorage:
        storage[static_cast<size_t>(s.base)] = 1;
        last[static_cast<size_t>(s.base)] = at;
        break;
      case StepKind::kFresh:
      case StepKind::kZero: last[static_cast<size_t>(s.base)] = at; break;
      case StepKind::kKernel:
        for (int32_t k = 0; k < s.patch_count; ++k) {
          const Patch& patch = p.patches[static_cast<size_t>(s.patch_first + k)];
          if (patch.kind == Patch::Kind::kData) last[static_cast<size_t>(patch.source)] = at;
        }
        break;
      case StepKind::kLibrary:
        for (int32_t k = 0; k < s.count; ++k) mark(p.library_args[static_cast<size_t>(s.first + k)], at, mark);
        break;
      case StepKind::kRelease: break;
    }
  }
  mark(p.result, -1, mark);
  std::vector<std::vector<int32_t>> release_after(p.steps.size());
  for (int32_t b = first_handle; b < p.num_bases; ++b) {
    const auto u = static_cast<size_t>(b);
    if (storage[u] && !escapes[u] && last[u] >= 0) release_after[static_cast<size_t>(last[u])].push_back(b);
  }
  std::vector<Step> steps;
  steps.reserve(p.steps.size() + static_cast<size_t>(p.num_bases - first_handle));
  for (size_t i = 0; i < p.steps.size(); ++i) {
    steps.push_back(p.steps[i]);
    for (int32_t b : release_after[i]) {
      Step release;
      release.kind = StepKind::kRelease;
      release.function = p.steps[i].function;
      release.base = b;
      steps.push_back(release);
    }
  }
  p.steps = std::move(steps);
}

std::shared_ptr<const Plan> Recorder::finish() {
  if (aborted_ || !returned_) return nullptr;
  add_releases();
  if (tables_.device.type == Device::Type::kCUDA) {
    plan_->graphs = std::make_shared<GraphCache>();
    for (size_t i = 0; i < plan_->steps.size(); ++i) {
      const Step& s = plan_->steps[i];
      if (s.kind != StepKind::kLibrary) continue;
      const std::string& name = tables_.exec->library_functions[static_cast<size_t>(s.index)];
      if (library_function_traits(name).synchronises_host) plan_->graph_breaks.push_back(static_cast<int32_t>(i));
    }
  }
  return std::move(plan_);
}

}  // namespace relax::runtime::replay
