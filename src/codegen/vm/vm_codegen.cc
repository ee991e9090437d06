// Graph functions → VM bytecode (see relax/codegen/vm_codegen.h).
//
// Each graph function becomes one VMFunction:
//   - registers 0..P-1 receive the parameters; the first instruction matches
//     them all against their annotations (one MatchGroup), which binds the
//     function's symbolic variables into slots and checks the rest;
//   - each binding evaluates into a register of its own (a binding of a plain
//     variable just reuses that variable's register);
//   - the module is first put through lower-alloc (a no-op on a lowered one),
//     so that outputs are explicit: alloc_storage is kAllocStorage (its size
//     computed from the slots), alloc_tensor kAllocTensorAt (named after its
//     variable, zeroed only when its zero_init says so), view kView, the kills
//     kKill, call_tir_dps kCallKernel of the kernel named after the PrimFunc
//     and call_library_dps kCallLibrary through the runtime's library registry
//     (inputs, destinations, then symbolic arguments; their value is the
//     constant ()); call_builtin (the
//     lowering of the data-dependent ops, such as nonzero) is kCallBuiltin,
//     whose runtime builtin allocates the result itself, followed, with
//     run-time checks on, by a match of the result against its annotation; a
//     call of another graph function is kCallFunc;
//   - match_cast matches the value (a MatchGroup of one) and binds the
//     variables its pattern introduces;
//   - If evaluates its condition, then one branch, and moves the branch's
//     result into the If's register;
//   - a declared upper bound of a variable (FunctionNode::upper_bounds) is
//     checked by the match group that binds the variable, at entry or at a
//     match_cast.
// Then reuse_registers (vm_register_alloc.h) kills each value after its last
// use, so that an intermediate tensor goes back to its pool at once, and
// packs the registers; a function that still needs more than the VM's limit
// is an error here, naming the function.
#include "relax/codegen/vm_codegen.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/op.h"
#include "relax/transform/passes.h"
#include "codegen/vm/vm_frame_layout.h"
#include "codegen/vm/vm_register_alloc.h"

namespace relax {
namespace {

using runtime::Instruction;
using runtime::Opcode;
using runtime::Operand;

// An instruction; kAllocTensor also sets dtype.
Instruction instr(Opcode op, int32_t dst = -1, int64_t index = 0, std::vector<Operand> operands = {}) {
  Instruction ins;
  ins.op = op;
  ins.dst = dst;
  ins.index = index;
  ins.operands = std::move(operands);
  return ins;
}

Operand reg_operand(int reg) { return Operand{Operand::Kind::kReg, reg}; }
Operand sym_operand(int expr) { return Operand{Operand::Kind::kSym, expr}; }

// Module-wide tables shared by every function being compiled.
struct ModuleTables {
  runtime::Executable& exec;
  absl::flat_hash_map<std::string, int> function_index;
  absl::flat_hash_map<std::string, int> kernel_index;
  absl::flat_hash_map<std::string, int> library_index;
  absl::flat_hash_map<std::string, int> builtin_index;

  int kernel(const std::string& name) {
    auto [it, inserted] = kernel_index.try_emplace(name, static_cast<int>(exec.kernel_names.size()));
    if (inserted) exec.kernel_names.push_back(name);
    return it->second;
  }
  int builtin(const std::string& name) {
    auto [it, inserted] =
        builtin_index.try_emplace(name, static_cast<int>(exec.builtin_functions.size()));
    if (inserted) exec.builtin_functions.push_back(name);
    return it->second;
  }
  int library(const std::string& name) {
    auto [it, inserted] =
        library_index.try_emplace(name, static_cast<int>(exec.library_functions.size()));
    if (inserted) exec.library_functions.push_back(name);
    return it->second;
  }
  int constant(runtime::Value value) {
    exec.constants.push_back(std::move(value));
    return static_cast<int>(exec.constants.size()) - 1;
  }
};

class FunctionCompiler {
 public:
  FunctionCompiler(ModuleTables& tables, runtime::VMFunction& fn, bool checks)
      : tables_(tables), fn_(fn), layout_(fn), checks_(checks) {}

  absl::Status compile(const FunctionNode& func) {
    for (const SymBound& b : func.upper_bounds) layout_.set_upper_bound(b.var, b.upper);
    std::vector<codegen_detail::FrameLayout::Item> items;
    for (const Var& p : func.params) {
      int reg = new_reg();
      regs_.emplace(p, reg);
      fn_.param_names.push_back(p.name_hint());
      items.push_back({reg, p.struct_info(), "argument " + p.name_hint()});
    }
    if (!items.empty()) {
      absl::StatusOr<int> group = layout_.add_match(items, checks_);
      if (!group.ok()) return group.status();
      emit(instr(Opcode::kMatch, -1, *group));
    }
    absl::StatusOr<Operand> result = compile_expr(func.body, "the result");
    if (!result.ok()) return result.status();
    emit(instr(Opcode::kRet, -1, 0, {*result}));
    fn_.num_registers = num_regs_;
    const int64_t needed =
        codegen_detail::reuse_registers(fn_, regions_, static_cast<int32_t>(func.params.size()));
    if (needed > runtime::Executable::kMaxRegisters) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "function ", fn_.name, " needs ", needed, " registers, more than the VM's limit of ",
          runtime::Executable::kMaxRegisters, " (values live at once)"));
    }
    return absl::OkStatus();
  }

 private:
  // Virtual registers, one per value; reuse_registers packs them.
  int new_reg() { return num_regs_++; }
  void emit(Instruction ins) { fn_.code.push_back(std::move(ins)); }
  int pc() const { return static_cast<int>(fn_.code.size()); }

  absl::Status error(const std::string& where, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(fn_.name, ": ", where, ": ", what));
  }

  absl::StatusOr<int> sym(const SymExpr& e, const std::string& where) {
    absl::StatusOr<int> expr = layout_.add_expr(e);
    if (!expr.ok()) return error(where, std::string(expr.status().message()));
    return expr;
  }

  // Puts `op` into a fresh register.
  int materialize(const Operand& op) {
    if (op.kind == Operand::Kind::kReg) return static_cast<int>(op.value);
    int reg = new_reg();
    emit(instr(Opcode::kMove, reg, 0, {op}));
    return reg;
  }

  // The value of `e` as an operand: variables and constants directly, anything
  // else computed into a new register. `where` names the binding in errors.
  absl::StatusOr<Operand> compile_expr(const Expr& e, const std::string& where) {
    switch (e.kind()) {
      case ExprKind::kVar:
      case ExprKind::kDataflowVar: {
        if (units_.contains(e)) return unit();
        auto it = regs_.find(e);
        if (it == regs_.end()) {
          return error(where, "variable " + e.as<VarNode>()->name_hint + " is used before it is bound");
        }
        return reg_operand(it->second);
      }
      case ExprKind::kConstant:
        return Operand{Operand::Kind::kConst, tables_.constant(runtime::Value(e.as<ConstantNode>()->data))};
      case ExprKind::kStringImm:
        return Operand{Operand::Kind::kConst,
                       tables_.constant(runtime::Value(e.as<StringImmNode>()->value))};
      case ExprKind::kShapeExpr: {
        Instruction ins = instr(Opcode::kMakeShape, new_reg());
        for (const SymExpr& v : e.as<ShapeExprNode>()->values) {
          absl::StatusOr<int> expr = sym(v, where);
          if (!expr.ok()) return expr.status();
          ins.operands.push_back(sym_operand(*expr));
        }
        emit(ins);
        return reg_operand(ins.dst);
      }
      case ExprKind::kPrimValue: {
        const SymExpr& v = e.as<PrimValueNode>()->value;
        if (std::optional<double> f = v.as_float()) {
          return Operand{Operand::Kind::kConst, tables_.constant(runtime::Value(*f))};
        }
        absl::StatusOr<int> expr = sym(v, where);
        if (!expr.ok()) return expr.status();
        Instruction ins = instr(Opcode::kMakeInt, new_reg(), 0, {sym_operand(*expr)});
        emit(ins);
        return reg_operand(ins.dst);
      }
      case ExprKind::kTuple: {
        Instruction ins = instr(Opcode::kMakeTuple);
        for (const Expr& f : e.as<TupleNode>()->fields) {
          absl::StatusOr<Operand> op = compile_expr(f, where);
          if (!op.ok()) return op.status();
          ins.operands.push_back(*op);
        }
        ins.dst = new_reg();
        emit(ins);
        return reg_operand(ins.dst);
      }
      case ExprKind::kTupleGetItem: {
        const auto* item = e.as<TupleGetItemNode>();
        absl::StatusOr<Operand> tuple = compile_expr(item->tuple, where);
        if (!tuple.ok()) return tuple.status();
        Instruction ins = instr(Opcode::kTupleGet, new_reg(), item->index, {reg_operand(materialize(*tuple))});
        emit(ins);
        return reg_operand(ins.dst);
      }
      case ExprKind::kCall:
        return compile_call(*e.as<CallNode>(), where);
      case ExprKind::kSeqExpr:
        return compile_seq(*e.as<SeqExprNode>());
      case ExprKind::kIf:
        return compile_if(*e.as<IfNode>(), where);
      case ExprKind::kGlobalVar:
      case ExprKind::kFunction:
      case ExprKind::kExternFunc:
      case ExprKind::kOp:
      case ExprKind::kPrimFunc:
        break;
    }
    return error(where, absl::StrCat("a ", std::string(expr_kind_name(e.kind())),
                                     " value is not supported by the VM yet"));
  }

  absl::StatusOr<Operand> compile_seq(const SeqExprNode& seq) {
    for (const BindingBlock& block : seq.blocks) {
      for (const Binding& b : block.bindings) {
        std::string where = "binding " + b.var.name_hint();
        binding_name_ = b.var.name_hint();
        absl::StatusOr<Operand> value = compile_expr(b.value, where);
        if (!value.ok()) return value.status();
        if (!b.is_match_cast && value->kind == Operand::Kind::kConst && value->value == unit_const_) {
          units_.insert(b.var);  // the () of an explicit call or a kill: no register
          continue;
        }
        int reg = materialize(*value);
        if (b.is_match_cast) {
          absl::StatusOr<int> group =
              layout_.add_match({{reg, b.cast_sinfo, "match_cast of " + b.var.name_hint()}}, checks_);
          if (!group.ok()) return error(where, std::string(group.status().message()));
          emit(instr(Opcode::kMatch, -1, *group));
        }
        regs_[b.var] = reg;
      }
    }
    return compile_expr(seq.body, "the result");
  }

  absl::StatusOr<Operand> compile_if(const IfNode& node, const std::string& where) {
    absl::StatusOr<Operand> cond = compile_expr(node.cond, where);
    if (!cond.ok()) return cond.status();
    int result = new_reg();
    int branch = pc();
    emit(instr(Opcode::kIf, -1, 0, {reg_operand(materialize(*cond))}));
    absl::StatusOr<Operand> then_value = compile_expr(node.then_branch, where);
    if (!then_value.ok()) return then_value.status();
    emit(instr(Opcode::kMove, result, 0, {*then_value}));
    int jump = pc();
    emit(instr(Opcode::kGoto));
    fn_.code[branch].index = pc();
    absl::StatusOr<Operand> else_value = compile_expr(node.else_branch, where);
    if (!else_value.ok()) return else_value.status();
    emit(instr(Opcode::kMove, result, 0, {*else_value}));
    fn_.code[jump].index = pc();
    regions_.push_back({branch, jump, pc()});
    return reg_operand(result);
  }

  // The int64 value of a Prim or one-dim Shape argument (an expression of the slots), as
  // an operand.
  absl::StatusOr<Operand> int_operand(const Expr& arg, const std::string& what,
                                      const std::string& where) {
    const StructInfo& sinfo = arg.struct_info();
    SymExpr value;
    if (const auto* prim = sinfo.as<PrimStructInfoNode>()) value = prim->value;
    if (const auto* shape = sinfo.as<ShapeStructInfoNode>();
        shape != nullptr && shape->values && shape->values->size() == 1) {
      value = (*shape->values)[0];
    }
    if (!value.defined()) {
      return error(where, what + " must be known as an expression of the symbolic variables, got " +
                              sinfo.to_string());
    }
    if (std::optional<int64_t> c = value.as_const()) return Operand{Operand::Kind::kImm, *c};
    absl::StatusOr<int> expr = sym(value, where);
    if (!expr.ok()) return expr.status();
    return sym_operand(*expr);
  }

  // The dims of a Shape argument, appended to `ins` as operands.
  absl::Status append_dims(const Expr& shape, Instruction& ins, const std::string& where) {
    const auto* sinfo = shape.struct_info().as<ShapeStructInfoNode>();
    if (sinfo == nullptr || !sinfo->values) {
      return error(where, "the shape must be known as expressions of the symbolic variables, got " +
                              shape.struct_info().to_string());
    }
    for (const SymExpr& d : *sinfo->values) {
      absl::StatusOr<int> expr = sym(d, where);
      if (!expr.ok()) return expr.status();
      ins.operands.push_back(sym_operand(*expr));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int> reg_of(const Expr& e, const std::string& where) {
    absl::StatusOr<Operand> op = compile_expr(e, where);
    if (!op.ok()) return op.status();
    return materialize(*op);
  }

  // The empty tuple that the explicit calls and the kills give.
  Operand unit() {
    if (unit_const_ < 0) unit_const_ = tables_.constant(runtime::Value::tuple({}));
    return Operand{Operand::Kind::kConst, unit_const_};
  }

  // The explicit-allocation operators (the form lower-alloc leaves), one instruction each.
  absl::StatusOr<Operand> compile_memory_op(const std::string& name, const CallNode& call,
                                            const std::string& where) {
    if (name == "alloc_storage") {
      absl::StatusOr<Operand> size = int_operand(call.args[0], "the size", where);
      if (!size.ok()) return size.status();
      auto it = call.attrs.find("alignment");
      const int64_t alignment = it == call.attrs.end() ? 64 : std::get<int64_t>(it->second);
      Instruction ins = instr(Opcode::kAllocStorage, new_reg(), alignment, {*size});
      emit(ins);
      return reg_operand(ins.dst);
    }
    if (name == "alloc_tensor") {
      absl::StatusOr<int> storage = reg_of(call.args[0], where);
      if (!storage.ok()) return storage.status();
      absl::StatusOr<Operand> offset = int_operand(call.args[1], "the offset", where);
      if (!offset.ok()) return offset.status();
      const auto zero = call.attrs.find("zero_init");
      const bool zero_init = zero != call.attrs.end() && std::get<bool>(zero->second);
      Instruction ins = instr(Opcode::kAllocTensorAt, -1, zero_init ? 1 : 0);
      ins.dtype = std::get<DataType>(call.attrs.at("dtype"));
      ins.operands = {reg_operand(*storage),
                      Operand{Operand::Kind::kConst, tables_.constant(runtime::Value(binding_name_))},
                      *offset};
      if (absl::Status s = append_dims(call.args[2], ins, where); !s.ok()) return s;
      ins.dst = new_reg();
      emit(ins);
      return reg_operand(ins.dst);
    }
    if (name == "view") {
      absl::StatusOr<Operand> x = compile_expr(call.args[0], where);
      if (!x.ok()) return x.status();
      Instruction ins = instr(Opcode::kView, -1, 0, {*x});
      if (absl::Status s = append_dims(call.args[1], ins, where); !s.ok()) return s;
      ins.dst = new_reg();
      emit(ins);
      return reg_operand(ins.dst);
    }
    if (name == "kill_storage" || name == "kill_tensor") {
      absl::StatusOr<Operand> v = compile_expr(call.args[0], where);
      if (!v.ok()) return v.status();
      if (v->kind == Operand::Kind::kReg) emit(instr(Opcode::kKill, -1, 0, {*v}));
      return unit();
    }
    // call_tir_dps / call_library_dps: inputs, destinations, then extra symbolic arguments.
    Instruction ins;
    if (name == "call_tir_dps") {
      ins.op = Opcode::kCallKernel;
      ins.index = tables_.kernel(call.args[0].as<GlobalVarNode>()->name);
    } else {
      ins.op = Opcode::kCallLibrary;
      ins.index = tables_.library(call.args[0].as<ExternFuncNode>()->symbol);
    }
    for (size_t a = 1; a <= 2; ++a) {
      for (const Expr& e : call.args[a].as<TupleNode>()->fields) {
        absl::StatusOr<int> r = reg_of(e, where);
        if (!r.ok()) return r.status();
        ins.operands.push_back(reg_operand(*r));
      }
    }
    if (call.args.size() > 3) {
      for (const SymExpr& v : call.args[3].as<ShapeExprNode>()->values) {
        absl::StatusOr<int> expr = sym(v, where);
        if (!expr.ok()) return expr.status();
        ins.operands.push_back(sym_operand(*expr));
      }
    }
    emit(ins);
    return unit();
  }

  absl::StatusOr<Operand> compile_call(const CallNode& call, const std::string& where) {
    if (const auto* gvar = call.callee.as<GlobalVarNode>()) {
      auto it = tables_.function_index.find(gvar->name);
      if (it == tables_.function_index.end()) {
        return error(where, "call of @" + gvar->name + ", which is not a graph function of the module");
      }
      Instruction ins = instr(Opcode::kCallFunc, -1, it->second);
      for (const Expr& a : call.args) {
        absl::StatusOr<Operand> op = compile_expr(a, where);
        if (!op.ok()) return op.status();
        ins.operands.push_back(*op);
      }
      ins.dst = new_reg();
      emit(ins);
      return reg_operand(ins.dst);
    }
    const auto* op = call.callee.as<OpNode>();
    if (op == nullptr) {
      return error(where, absl::StrCat("calls of a ", std::string(expr_kind_name(call.callee.kind())),
                                       " are not supported by the VM yet"));
    }
    if (op->name == "call_builtin") return compile_builtin(call, where);
    static const char* const kMemoryOps[] = {"alloc_storage", "alloc_tensor", "view",
                                             "kill_storage", "kill_tensor", "call_tir_dps",
                                             "call_library_dps"};
    for (const char* name : kMemoryOps) {
      if (op->name == name) return compile_memory_op(op->name, call, where);
    }
    // call_tir, call_tir_inplace and call_dps_library are lowered before compilation.
    return error(where, "operator " + op->name +
                            " has no VM lowering; run relax::transform::legalize_ops first");
  }

  // call_builtin(extern_func(name), (args...), sinfo_args=[result]): the
  // builtin allocates the result; a match checks it against the annotation.
  absl::StatusOr<Operand> compile_builtin(const CallNode& call, const std::string& where) {
    Instruction ins = instr(Opcode::kCallBuiltin, -1, tables_.builtin(call.args[0].as<ExternFuncNode>()->symbol));
    for (const Expr& a : call.args[1].as<TupleNode>()->fields) {
      absl::StatusOr<Operand> input = compile_expr(a, where);
      if (!input.ok()) return input.status();
      ins.operands.push_back(*input);
    }
    ins.dst = new_reg();
    emit(ins);
    if (checks_) {
      absl::StatusOr<int> group = layout_.add_match(
          {{ins.dst, call.sinfo_args.at(0),
            "the result of builtin " + call.args[0].as<ExternFuncNode>()->symbol}},
          checks_);
      if (!group.ok()) return error(where, std::string(group.status().message()));
      emit(instr(Opcode::kMatch, -1, *group));
    }
    return reg_operand(ins.dst);
  }

  ModuleTables& tables_;
  runtime::VMFunction& fn_;
  codegen_detail::FrameLayout layout_;
  bool checks_;
  int num_regs_ = 0;
  int unit_const_ = -1;       // the constant () once used
  std::string binding_name_;  // the variable being bound, naming tensors in messages
  absl::flat_hash_map<Expr, int, ExprPtrHash, ExprPtrEqual> regs_;
  absl::flat_hash_set<Expr, ExprPtrHash, ExprPtrEqual> units_;  // variables bound to ()
  std::vector<codegen_detail::IfRegion> regions_;
};

}  // namespace

absl::StatusOr<runtime::Executable> compile_to_executable(const IRModule& input,
                                                          const VMCodegenOptions& options) {
  // Implicit outputs (call_tir, call_tir_inplace, call_dps_library) become explicit
  // allocations first, so that one translation serves modules lowered or not.
  // Declared library workspaces become destinations too (kernels keep their scratch here: the
  // C++ code generator compiles the PrimFuncs as given).
  absl::StatusOr<IRModule> lowered = transform::lower_alloc(input);
  if (lowered.ok()) lowered = transform::lift_library_workspaces(*lowered);
  if (!lowered.ok()) return lowered.status();
  const IRModule& mod = *lowered;
  runtime::Executable exec;
  exec.device = options.device;
  ModuleTables tables{exec, {}, {}, {}, {}};
  std::vector<const FunctionNode*> funcs;
  for (const auto& [name, func] : mod.functions()) {
    if (const auto* f = func.as<FunctionNode>()) {
      tables.function_index.emplace(name, static_cast<int>(exec.functions.size()));
      exec.functions.emplace_back().name = name;
      funcs.push_back(f);
    }
  }
  for (size_t i = 0; i < funcs.size(); ++i) {
    FunctionCompiler compiler(tables, exec.functions[i], options.runtime_checks);
    if (absl::Status s = compiler.compile(*funcs[i]); !s.ok()) return s;
  }
  for (const std::string& kernel : exec.kernel_names) {
    if (mod.lookup(kernel).as<PrimFuncNode>() == nullptr) {
      return absl::InvalidArgumentError("call_tir of @" + kernel +
                                        ", which is not a PrimFunc of the module");
    }
  }
  return exec;
}

}  // namespace relax
