// cse: common-subexpression elimination inside dataflow blocks.
//
// What it does. Inside each dataflow block (of every graph function, nested
// functions and If branches included), a binding whose value is a pure call
// structurally equal to the value of an earlier binding of the same block --
// the same callee, attributes and sinfo_args, and the same operand variables
// (structural equality compares free variables by identity) -- reuses the
// earlier variable instead of computing the call again:
//   - a DataflowVar is dropped and its uses become uses of the earlier one;
//   - an output Var (used after the block) is dropped in favour of an earlier
//     output Var; after an earlier DataflowVar it becomes the alias
//     `out = earlier`, which canonicalize-bindings turns into the earlier
//     binding's variable (the default pipeline runs both in one fixed-point
//     group), since a DataflowVar may not stand in for it after the block.
// Calls compare after the replacements made so far, so a chain of repeated
// calls collapses in one run (`b = exp(a); c = exp(a); d = add(b, b);
// e = add(c, c)` keeps `b` and `d`).
//
// Stages, per dataflow block: an ExprMutator visits the bindings in order,
// keeping a table from each pure call value seen (after the replacements) to
// the variable that holds it; the table starts empty for every block and a
// nested function's blocks get tables of their own.
//
// Invariants. Relies on well-formed input with current annotations. Keeps
// well-formedness: the earlier variable is defined before the later binding in
// the same block, and it replaces the later one only where the two carry
// equal annotations (a binding annotated coarser than its value keeps its own
// call). Unchanged functions stay pointer-identical.
//
// Not handled: blocks other than dataflow blocks (their calls may be impure,
// and ordering matters there); values across blocks (never merged); impure
// calls (never merged, wherever they are); values other than calls (tuples,
// tuple items, constants: canonicalize-bindings resolves what matters of
// those); commutativity (`add(a, b)` and `add(b, a)` differ).
#include <unordered_map>
#include <utility>
#include <vector>

#include "purity.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

class CommonCallEliminator : public ExprMutator {
 public:
  explicit CommonCallEliminator(const IRModule& mod) : ExprMutator(&mod) {}

  int64_t eliminated() const { return eliminated_; }

  BindingBlock visit_binding_block(const BindingBlock& block) override {
    // Each block, and each block of a nested function, starts a table of its own.
    Table outer;
    outer.swap(table_);
    BindingBlock out = ExprMutator::visit_binding_block(block);
    table_.swap(outer);
    return out;
  }

  void visit_binding(const Binding& binding) override {
    if (!in_dataflow_block() || binding.is_match_cast || binding.value.as<CallNode>() == nullptr) {
      return ExprMutator::visit_binding(binding);
    }
    Expr value = visit_expr(binding.value);
    const auto* call = value.as<CallNode>();
    if (call == nullptr || !is_pure_call(*call) || makes_fresh_object(*call)) {
      emit_value(binding, value);
      return;
    }
    auto it = table_.find(value);
    if (it == table_.end() || !struct_info_equal(it->second.struct_info(), binding.var.struct_info())) {
      Var var = emit_value(binding, value);
      table_.emplace(value, var);
      return;
    }
    const Var& earlier = it->second;
    ++eliminated_;
    if (binding.var.is_dataflow() || !earlier.is_dataflow()) {
      set_var_remap(binding.var, earlier);
      return;
    }
    // An output after a DataflowVar: the alias keeps it defined after the block.
    emit_binding({binding.var, earlier, false, StructInfo()});
  }

 private:
  using Table = std::unordered_map<Expr, Var, StructuralHash, StructuralEqual>;

  // `binding` with its value rewritten to `value`, emitted as ExprMutator
  // would: a fresh variable when the annotation changed. Returns the variable.
  Var emit_value(const Binding& binding, const Expr& value) {
    if (value.same_as(binding.value) || struct_info_equal(value.struct_info(), binding.var.struct_info())) {
      emit_binding({binding.var, value, false, StructInfo()});
      return binding.var;
    }
    Var var = binding.var.is_dataflow() ? DataflowVar(binding.var.name_hint(), value.struct_info())
                                        : Var(binding.var.name_hint(), value.struct_info());
    set_var_remap(binding.var, var);
    emit_binding({var, value, false, StructInfo()});
    return var;
  }

  Table table_;
  int64_t eliminated_ = 0;
};

class CsePass : public Pass {
 public:
  CsePass()
      : Pass(PassInfo("cse", "reuses the result of a pure call repeated in the same dataflow block")
                 .with_statistic("eliminated_calls", "repeated pure calls replaced by the earlier result")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule out = mod;
    int64_t eliminated = 0;
    for (const auto& [name, func] : mod.functions()) {
      if (func.as<FunctionNode>() == nullptr) continue;
      CommonCallEliminator eliminator(mod);
      Expr rewritten = eliminator.visit_expr(func);
      if (absl::Status s = eliminator.status(); !s.ok()) {
        // Uses that now see a more precise annotation can prove an error the
        // program had all along (a rank-only operand that turns out to be of
        // the wrong shape): the module is wrong, not the pass.
        return absl::InvalidArgumentError("@" + name +
                                          ": with the annotations made more precise, deduction fails: " +
                                          std::string(s.message()));
      }
      if (rewritten.same_as(func)) continue;
      eliminated += eliminator.eliminated();
      out.add(name, rewritten);
    }
    ctx.add_statistic("eliminated_calls", eliminated);
    return out;
  }
};

}  // namespace

PassPtr create_cse_pass() { return std::make_shared<CsePass>(); }

}  // namespace relax::transform
