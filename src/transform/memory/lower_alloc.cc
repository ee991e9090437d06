// lower-alloc: the implicit outputs of destination-passing calls become
// explicit allocations.
//
// What it does. In every graph function (nested functions and If branches
// included) each binding
//
//   y: Tensor[(n, 4), float32] = call_tir(@k, (x,), shape(m), sinfo=Tensor[(n, 4), float32])
//
// becomes
//
//   y_storage: Object = alloc_storage(prim(n * 16))
//   y: Tensor[(n, 4), float32] = alloc_tensor(y_storage, prim(0), shape(n, 4), dtype=float32)
//   _y: Tuple[()] = call_tir_dps(@k, (x,), (y,), shape(m))
//
// one storage per output, sized exactly (the byte count simplified), aligned
// to 64 bytes; the memory planner (plan-memory) later shares storages between
// tensors whose lifetimes do not overlap. A tuple output gets a storage and a
// tensor per field (`y_0`, `y_1`, ...) and `y = (y_0, y_1)` after the call.
// call_tir_inplace allocates only its fresh outputs (inplace index -1); an
// output written into argument j is that argument (uses of y use it).
// call_dps_library becomes call_library_dps the same way, keeping a declared
// workspace argument (lift-workspace allocates it).
//
// Zeroing. The VM no longer zeroes what it allocates: alloc_tensor gets
// `zero_init=true` only when output_coverage.h cannot prove that the kernel
// writes every element of that output before reading it (a PrimFunc of the
// module, inspected per output buffer parameter; a callee not in the module
// is zeroed). Library functions are not zeroed: their contract
// (runtime/module.h) is to write their destinations.
//
// Stages, per block: (1) a dataflow block that holds (anywhere in its
// bindings, not in nested functions) a call to lower becomes a plain block,
// its DataflowVars Vars -- the explicit calls are effects (impure), which a
// dataflow block may not hold; (2) each call to lower is replaced as above.
//
// Invariants. Relies on a normalised module in which every output annotation
// of a call to lower has a known shape and dtype (the deduction of those calls
// requires it). Keeps well-formedness; a function without calls to lower
// stays pointer-identical; running the pass twice changes nothing more.
//
// Not handled: kills (the VM releases a register after its last use, and a
// storage's memory returns once its last tensor is dead; the planner emits
// kill_storage / kill_tensor where it shares memory); a reshape is already a view
// (legalize-ops) or a copy kernel like any other; outputs returned to the
// caller are allocated the same way as intermediates.
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/op.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"
#include "transform/memory/output_coverage.h"
#include "transform/memory/memory_ir.h"

namespace relax::transform {
namespace {

bool is_call_to_lower(const Expr& e) {
  const auto* call = e.as<CallNode>();
  if (call == nullptr) return false;
  const auto* op = call->callee.as<OpNode>();
  return op != nullptr &&
         (op->name == "call_tir" || op->name == "call_tir_inplace" || op->name == "call_dps_library");
}

// Whether a value holds a call to lower (not looking into nested functions).
class CallFinder : public ExprVisitor {
 public:
  bool found = false;
  void visit_call(const Expr& e, const CallNode& node) override {
    if (is_call_to_lower(e)) found = true;
    if (!found) ExprVisitor::visit_call(e, node);
  }
  void visit_function(const Expr&, const FunctionNode&) override {}
};

bool holds_call_to_lower(const BindingBlock& block) {
  CallFinder finder;
  for (const Binding& b : block.bindings) {
    finder.visit_expr(b.value);
    if (finder.found) return true;
  }
  return false;
}

class AllocLowerer : public ExprMutator {
 public:
  explicit AllocLowerer(const IRModule& mod) : ExprMutator(&mod), mod_(mod) {}

  int64_t lowered_calls() const { return lowered_calls_; }
  int64_t zeroed_outputs() const { return zeroed_outputs_; }

  BindingBlock visit_binding_block(const BindingBlock& block) override {
    if (!block.is_dataflow || !holds_call_to_lower(block)) {
      return ExprMutator::visit_binding_block(block);
    }
    BindingBlock plain = block;
    plain.is_dataflow = false;
    return ExprMutator::visit_binding_block(plain);
  }

  void visit_binding(const Binding& binding) override {
    Binding b = binding;
    // In a block made plain, a DataflowVar becomes a Var (dataflow blocks are left as they are).
    if (b.var.is_dataflow() && !in_dataflow_block()) b.var = Var(b.var.name_hint(), b.var.struct_info());
    if (!is_call_to_lower(b.value)) {
      ExprMutator::visit_binding(b);
      if (!b.var.same_as(binding.var)) {
        set_var_remap(binding.var, Var::from_expr(ExprMutator::visit_var(b.var)));
      }
      return;
    }
    Expr value = visit_expr(b.value);
    if (!b.is_match_cast) {
      lower(*value.as<CallNode>(), binding.var);
      return;
    }
    // `v = match_cast(call, pattern)`: the outputs under a variable of the call's
    // annotation, then the match_cast of that variable.
    Var outputs(b.var.name_hint() + "_out", value.struct_info());
    lower(*value.as<CallNode>(), outputs);
    Expr matched = ExprMutator::visit_var(outputs);
    Binding cast = b;
    cast.value = matched;
    ExprMutator::visit_binding(cast);
    if (!b.var.same_as(binding.var)) {
      set_var_remap(binding.var, Var::from_expr(ExprMutator::visit_var(b.var)));
    }
  }

 private:
  // Emits the allocations and the explicit call of `call` (its arguments rewritten), and
  // makes `var` (the binding's variable) stand for its outputs.
  void lower(const CallNode& call, const Var& var) {
    ++lowered_calls_;
    const std::string op = call.callee.as<OpNode>()->name;
    const std::string name = var.name_hint();
    const std::vector<Expr>& args = call.args[1].as<TupleNode>()->fields;
    const StructInfo& out = call.sinfo_args.at(0);
    const auto* tuple = out.as<TupleStructInfoNode>();
    const std::vector<StructInfo> outs = tuple != nullptr ? tuple->fields : std::vector<StructInfo>{out};
    std::vector<int64_t> inplace(outs.size(), -1);
    if (op == "call_tir_inplace") {
      inplace = std::get<std::vector<int64_t>>(call.attrs.at("inplace_indices"));
    }
    const PrimFuncNode* kernel = nullptr;
    if (op != "call_dps_library") {
      kernel = mod_.lookup(call.args[0].as<GlobalVarNode>()->name).as<PrimFuncNode>();
    }

    std::vector<Expr> dests;
    std::vector<Expr> fresh;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (inplace[i] >= 0) {
        dests.push_back(args[static_cast<size_t>(inplace[i])]);
        continue;
      }
      const auto& t = *outs[i].as<TensorStructInfoNode>();
      const std::string tensor_name = tuple != nullptr ? name + "_" + std::to_string(i) : name;
      SymExpr bytes = memory_ir::element_bytes(*t.dtype);
      for (const SymExpr& d : *t.shape) bytes = bytes * d;
      bytes = analyzer().simplify(bytes);
      // The kernel's parameter for this output: after the arguments, in fresh-output order.
      const size_t param = args.size() + fresh.size();
      bool zero = false;
      if (op != "call_dps_library") {
        zero = kernel == nullptr || param >= kernel->params.size() || !kernel->params[param].buffer ||
               !writes_every_element(*kernel, *kernel->params[param].buffer);
      }
      zeroed_outputs_ += zero ? 1 : 0;
      Var storage = emit(op::alloc_storage(make_prim_value(bytes)), tensor_name + "_storage");
      Var tensor = emit(op::alloc_tensor(storage, make_prim_value(0), make_shape_expr(*t.shape),
                                         *t.dtype, zero),
                        tensor_name);
      dests.push_back(tensor);
      fresh.push_back(tensor);
    }

    if (op == "call_dps_library") {
      // A declared workspace (argument 2) stays declared; lift-workspace allocates it.
      std::vector<Expr> lib_args = {call.args[0], make_tuple(args), make_tuple(fresh)};
      if (call.args.size() > 2) lib_args.push_back(call.args[2]);
      emit(make_call(make_op_or_die("call_library_dps"), std::move(lib_args)), "_" + name);
    } else {
      std::vector<SymExpr> sym_args;
      if (call.args.size() > 2) sym_args = call.args[2].as<ShapeExprNode>()->values;
      emit(op::call_tir_dps(call.args[0], args, fresh, std::move(sym_args)), "_" + name);
    }

    if (tuple != nullptr) {
      set_var_remap(var, emit(make_tuple(dests), name));
    } else if (dests[0].as<VarNode>() != nullptr) {
      set_var_remap(var, Var::from_expr(dests[0]));
    } else {
      set_var_remap(var, emit(dests[0], name));  // an in-place write into a constant
    }
  }

  const IRModule& mod_;
  int64_t lowered_calls_ = 0;
  int64_t zeroed_outputs_ = 0;
};

class LowerAllocPass : public Pass {
 public:
  LowerAllocPass()
      : Pass(PassInfo("lower-alloc",
                      "the outputs of call_tir / call_tir_inplace / call_dps_library become "
                      "alloc_storage + alloc_tensor and an explicit call_tir_dps / call_library_dps")
                 .with_statistic("lowered_calls", "destination-passing calls made explicit")
                 .with_statistic("zeroed_outputs",
                                 "outputs zeroed: the kernel is not proven to write every element")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    AllocLowerer lowerer(mod);
    IRModule out = lowerer.visit_module(mod);
    if (absl::Status s = lowerer.status(); !s.ok()) return s;
    ctx.add_statistic("lowered_calls", lowerer.lowered_calls());
    ctx.add_statistic("zeroed_outputs", lowerer.zeroed_outputs());
    return out;
  }
};

}  // namespace

PassPtr create_lower_alloc_pass() { return std::make_shared<LowerAllocPass>(); }

absl::StatusOr<IRModule> lower_alloc(const IRModule& mod) {
  AllocLowerer lowerer(mod);
  IRModule out = lowerer.visit_module(mod);
  if (absl::Status s = lowerer.status(); !s.ok()) return s;
  return out;
}

}  // namespace relax::transform
