// Recording an execution plan while the VM interprets a call (see replay_plan.h).
//
// The recorder mirrors the VM's frames with a Ref per register and follows every instruction:
// loads, shapes and ints computed from the binding are kFixed; argument registers are kArg
// nodes; storages and fresh tensors get a per-call base, and tensors placed in or viewed from
// per-call memory are kTensor at the offset the VM actually used (read from the produced
// tensor's address, so the recording never re-evaluates what the VM computed). Kernel calls are
// recorded as the argument arrays the VM passed, their shapes copied into the plan and the
// per-call data pointers and scalars listed as patches.
//
// It gives up (aborted) on what a later call of the same binding might do differently:
//   - kIf on a register that is not kFixed (a value read from data or from an argument);
//   - kMatch of a value whose structure the binding does not fix: an argument int or float
//     read against a pattern with dims (every other argument's structure is pinned by the
//     plan's argument nodes, and per-call tensors have recorded shapes);
//   - kCallBuiltin (results with data-dependent shapes, made by the builtin);
//   - a strided argument tensor, or a view that had to copy;
//   - a plan longer than kMaxSteps.
// kCallFunc is recorded through: the callee's frame is mirrored like the caller's.
#include <cstring>
#include <utility>

#include "relax/support/check.h"
#include "replay_plan.h"

namespace relax::runtime::replay {

namespace {

Ref fixed(Value v) {
  Ref r;
  r.kind = Ref::Kind::kFixed;
  r.fixed = std::move(v);
  return r;
}

int64_t byte_distance(const Tensor& from, const Tensor& to) {
  return static_cast<const char*>(to.data()) - static_cast<const char*>(from.data());
}

// The whole of the fresh tensor or storage `t` at per-call base `base`.
Ref whole_tensor(int32_t base, const Tensor& t) {
  Ref r;
  r.kind = Ref::Kind::kTensor;
  r.base = base;
  r.whole = true;
  r.shape = t.shape();
  r.dtype = t.dtype();
  return r;
}

}  // namespace

Recorder::Recorder(const Tables& tables, int32_t function, std::span<const Value> params)
    : tables_(tables), plan_(std::make_shared<Plan>()) {
  const VMFunction& fn = tables_.exec->functions[static_cast<size_t>(function)];
  Frame& frame = frames_.emplace_back();
  frame.regs.resize(static_cast<size_t>(fn.num_registers));
  plan_->num_params = static_cast<int32_t>(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    Ref& r = frame.regs[i];
    r.kind = Ref::Kind::kArg;
    r.node = add_node(params[i]);
  }
  plan_->num_bases = static_cast<int32_t>(plan_->nodes.size());
}

int32_t Recorder::add_node(const Value& v) {
  const auto index = static_cast<int32_t>(plan_->nodes.size());
  plan_->nodes.emplace_back();
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
      node.dims = t.shape();
      break;
    }
    case ValueKind::kShape: node.dims = v.shape_dims_or_die(); break;
    case ValueKind::kInt: node.int_value = v.int_value_or_die(); break;
    case ValueKind::kFloat: node.float_value = v.float_value_or_die(); break;
    case ValueKind::kTuple:
      for (const Value& field : v.fields_or_die()) node.children.push_back(add_node(field));
      break;
    default: break;
  }
  plan_->nodes[static_cast<size_t>(index)] = std::move(node);
  return index;
}

Ref Recorder::operand(const Operand& op, const Value& value) const {
  if (op.kind == Operand::Kind::kReg) return frames_.back().regs[static_cast<size_t>(op.value)];
  return fixed(value);  // a constant, or an int of the binding
}

bool Recorder::location(const Ref& r, int32_t* base, int64_t* offset) const {
  if (r.kind == Ref::Kind::kTensor) {
    *base = r.base;
    *offset = r.offset;
    return true;
  }
  if (r.kind == Ref::Kind::kArg && plan_->nodes[static_cast<size_t>(r.node)].kind == ValueKind::kTensor) {
    *base = r.node;
    *offset = 0;
    return true;
  }
  return false;
}

// `result`, a tensor the VM made over the memory of `source_value` (whose Ref is `source`).
Ref Recorder::derived(const Ref& source, const Value& source_value, const Value& result) {
  if (source.kind == Ref::Kind::kFixed) return fixed(result);
  int32_t base = 0;
  int64_t offset = 0;
  if (!location(source, &base, &offset) || !source_value.is_tensor() || !result.is_tensor()) {
    abort();
    return {};
  }
  const Tensor& from = source_value.tensor_or_die();
  const Tensor& t = result.tensor_or_die();
  Ref r;
  r.kind = Ref::Kind::kTensor;
  r.base = base;
  r.offset = offset + byte_distance(from, t);
  r.shape = t.shape();
  r.dtype = t.dtype();
  return r;
}

Step& Recorder::add_step(StepKind kind, int32_t function) {
  if (plan_->steps.size() >= kMaxSteps) abort();
  Step& s = plan_->steps.emplace_back();
  s.kind = kind;
  s.function = function;
  return s;
}

bool Recorder::fixed_by_binding(const ValuePattern& p, const Ref& r) const {
  switch (r.kind) {
    case Ref::Kind::kTuple:
      if (p.kind != PatternKind::kTuple || p.fields.size() != r.fields.size()) return true;
      for (size_t i = 0; i < p.fields.size(); ++i) {
        if (!fixed_by_binding(p.fields[i], r.fields[i])) return false;
      }
      return true;
    case Ref::Kind::kArg: {
      const ArgNode& node = plan_->nodes[static_cast<size_t>(r.node)];
      if (node.kind == ValueKind::kTuple) {
        if (p.kind != PatternKind::kTuple || p.fields.size() != node.children.size()) return true;
        for (size_t i = 0; i < p.fields.size(); ++i) {
          Ref child;
          child.kind = Ref::Kind::kArg;
          child.node = node.children[i];
          if (!fixed_by_binding(p.fields[i], child)) return false;
        }
        return true;
      }
      // An int or float argument's value is per call: a pattern that reads it (dims) is not
      // fixed. Every other node's structure is what the plan's argument nodes require.
      const bool value = node.kind == ValueKind::kInt || node.kind == ValueKind::kFloat;
      return !(value && p.kind == PatternKind::kPrim && !p.dims.empty());
    }
    default: return true;  // fixed values; per-call tensors of recorded shapes
  }
}

void Recorder::after(int32_t function, const Instruction& ins, const std::vector<Value>& regs) {
  if (aborted_) return;
  const VMFunction& fn = tables_.exec->functions[static_cast<size_t>(function)];
  auto dst_value = [&]() -> const Value& { return regs[static_cast<size_t>(ins.dst)]; };
  auto value_of = [&](const Operand& op) -> Value {
    if (op.kind == Operand::Kind::kReg) return regs[static_cast<size_t>(op.value)];
    if (op.kind == Operand::Kind::kConst) return tables_.exec->constants[static_cast<size_t>(op.value)];
    return Value();  // ints: only kMove and kRet take them, and read the result instead
  };
  switch (ins.op) {
    case Opcode::kLoadConst:
    case Opcode::kMakeShape:
    case Opcode::kMakeInt:
      reg(ins.dst) = fixed(dst_value());
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
        Ref r;
        r.kind = Ref::Kind::kArg;
        r.node = plan_->nodes[static_cast<size_t>(source.node)].children[field];
        reg(ins.dst) = std::move(r);
      } else {
        abort();
      }
      break;
    }
    case Opcode::kMove:
      reg(ins.dst) = ins.operands[0].kind == Operand::Kind::kReg
                         ? reg(ins.operands[0].value)
                         : fixed(dst_value());
      break;
    case Opcode::kKill:
      for (const Operand& op : ins.operands) reg(op.value) = Ref();
      break;
    case Opcode::kIf:
      if (ins.operands[0].kind == Operand::Kind::kReg &&
          reg(ins.operands[0].value).kind != Ref::Kind::kFixed) {
        abort();  // a branch on data
      }
      break;
    case Opcode::kGoto: break;
    case Opcode::kMatch: {
      const MatchGroup& g = fn.matches[static_cast<size_t>(ins.index)];
      for (const MatchItem& item : g.items) {
        if (!fixed_by_binding(fn.patterns[static_cast<size_t>(item.pattern)], reg(item.reg))) abort();
      }
      break;
    }
    case Opcode::kView: {
      const Value source_value = value_of(ins.operands[0]);
      const Ref source = operand(ins.operands[0], source_value);
      // A strided source was copied: the view is not in the source's memory.
      if (source.kind != Ref::Kind::kFixed &&
          (!source_value.is_tensor() || !dst_value().is_tensor() ||
           source_value.tensor_or_die().data() != dst_value().tensor_or_die().data())) {
        abort();
        break;
      }
      reg(ins.dst) = derived(source, source_value, dst_value());
      break;
    }
    case Opcode::kAllocTensorAt: {
      const Value& storage = regs[static_cast<size_t>(ins.operands[0].value)];
      Ref r = derived(reg(ins.operands[0].value), storage, dst_value());
      if (aborted_) break;
      if (ins.index == 1 && r.kind == Ref::Kind::kTensor && dst_value().tensor_or_die().nbytes() != 0) {
        Step& s = add_step(StepKind::kZero, function);
        s.base = r.base;
        s.offset = r.offset;
        s.bytes = static_cast<int64_t>(dst_value().tensor_or_die().nbytes());
      } else if (ins.index == 1 && r.kind == Ref::Kind::kFixed) {
        abort();  // zeroing a constant's memory: not replayed as a fixed value
      }
      reg(ins.dst) = std::move(r);
      break;
    }
    case Opcode::kAllocTensor: {
      const Tensor& t = dst_value().tensor_or_die();
      Step& s = add_step(StepKind::kFresh, function);
      s.base = new_base();
      s.first = static_cast<int32_t>(plan_->arrays.size());
      plan_->arrays.push_back(t.shape());
      s.dtype = t.dtype();
      reg(ins.dst) = whole_tensor(s.base, t);
      break;
    }
    case Opcode::kCallBuiltin:
      abort();
      break;
    default:
      RELAX_CHECK(false) << "Recorder::after: " << static_cast<int>(ins.op) << " is reported apart";
  }
}

void Recorder::storage(int32_t function, const Instruction& ins, int32_t site, const Value& storage) {
  if (aborted_) return;
  const Tensor& t = storage.tensor_or_die();
  Step& s = add_step(StepKind::kStorage, function);
  s.index = site;
  s.base = new_base();
  s.bytes = t.shape()[0];
  s.offset = ins.index;  // the alignment
  reg(ins.dst) = whole_tensor(s.base, t);
}

void Recorder::kernel(int32_t function, const Instruction& ins, const RelaxKernelArg* args, size_t n) {
  if (aborted_) return;
  Step& s = add_step(StepKind::kKernel, function);
  s.index = static_cast<int32_t>(ins.index);
  s.first = static_cast<int32_t>(plan_->kernel_args.size());
  s.count = static_cast<int32_t>(n);
  s.patch_first = static_cast<int32_t>(plan_->patches.size());
  ++plan_->kernel_calls;
  for (size_t i = 0; i < n; ++i) {
    RelaxKernelArg arg = args[i];
    const auto index = static_cast<int32_t>(plan_->kernel_args.size());
    const Operand& op = ins.operands[i];
    const Ref r = op.kind == Operand::Kind::kReg ? reg(op.value) : Ref();
    if (arg.kind == RELAX_ARG_BUFFER) {
      const auto ndim = static_cast<size_t>(arg.ndim);
      arg.shape = plan_->arrays.emplace_back(arg.shape, arg.shape + ndim).data();
      if (arg.strides != nullptr) arg.strides = plan_->arrays.emplace_back(arg.strides, arg.strides + ndim).data();
      int32_t base = 0;
      int64_t offset = 0;
      if (location(r, &base, &offset)) {
        plan_->patches.push_back({Patch::Kind::kData, index, base, offset});
        arg.data = nullptr;
      } else if (op.kind == Operand::Kind::kConst || r.kind == Ref::Kind::kFixed) {
        // A constant's memory: the same on every call.
        plan_->keep_alive.push_back(op.kind == Operand::Kind::kConst
                                        ? tables_.exec->constants[static_cast<size_t>(op.value)]
                                        : r.fixed);
      } else {
        abort();
        return;
      }
    } else if (r.kind == Ref::Kind::kArg) {
      // An int or float argument of the call.
      plan_->patches.push_back(
          {arg.kind == RELAX_ARG_INT ? Patch::Kind::kInt : Patch::Kind::kFloat, index, r.node, 0});
    } else if (op.kind == Operand::Kind::kReg && r.kind != Ref::Kind::kFixed) {
      abort();
      return;
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
  frame.regs.resize(static_cast<size_t>(callee.num_registers));
  frame.return_dst = ins.dst;
  for (size_t i = 0; i < ins.operands.size(); ++i) {
    const Operand& op = ins.operands[i];
    frame.regs[i] = op.kind == Operand::Kind::kReg
                        ? reg(op.value)
                        : fixed(tables_.exec->constants[static_cast<size_t>(op.value)]);
  }
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
  return std::move(plan_);
}

}  // namespace relax::runtime::replay
