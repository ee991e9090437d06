// to-non-dataflow: dataflow blocks become ordinary binding blocks.
//
// What it does. In every graph function (nested functions and If branches
// included) each dataflow block becomes a plain block: its DataflowVars become
// Vars of the same name and annotation, and every use follows. A plain block
// that ends up next to another plain block is merged with it, so the result
// reads as one run of bindings (`a; dataflow { b }; c` becomes `a; b; c`).
//
// Stages, per dataflow block:
//   1. each binding is rewritten by ExprMutator with its DataflowVar replaced
//      by a fresh Var, to which later uses are redirected;
//   2. the SeqExpr holding the block merges adjacent plain blocks.
//
// Invariants. Relies on a well-formed module. Keeps well-formedness (a Var
// may be used wherever the DataflowVar could, and beyond) and every
// annotation (nothing is re-deduced differently: values are unchanged). A
// function without dataflow blocks stays pointer-identical.
//
// Not handled: nothing is reordered or removed; the purity that a dataflow
// block promised is simply no longer stated (later passes that want it, like
// cse, no longer act on these bindings).
#include <utility>

#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

class DataflowRemover : public ExprMutator {
 public:
  explicit DataflowRemover(const IRModule& mod) : ExprMutator(&mod) {}

  int64_t converted_blocks() const { return converted_blocks_; }

  BindingBlock visit_binding_block(const BindingBlock& block) override {
    if (!block.is_dataflow) return ExprMutator::visit_binding_block(block);
    ++converted_blocks_;
    BindingBlock plain = block;
    plain.is_dataflow = false;
    return ExprMutator::visit_binding_block(plain);
  }

  void visit_binding(const Binding& binding) override {
    if (!binding.var.is_dataflow()) return ExprMutator::visit_binding(binding);
    Binding renamed = binding;
    renamed.var = Var(binding.var.name_hint(), binding.var.struct_info());
    ExprMutator::visit_binding(renamed);
    // The base may have given the binding yet another variable (when the
    // value's annotation changed); uses of the DataflowVar follow whichever
    // one it emitted.
    set_var_remap(binding.var, Var::from_expr(ExprMutator::visit_var(renamed.var)));
  }

  Expr visit_seq_expr(const Expr& e, const SeqExprNode& node) override {
    Expr out = ExprMutator::visit_seq_expr(e, node);
    if (out.same_as(e)) return out;
    const auto* seq = out.as<SeqExprNode>();
    std::vector<BindingBlock> merged;
    bool changed = false;
    for (const BindingBlock& block : seq->blocks) {
      if (!block.is_dataflow && !merged.empty() && !merged.back().is_dataflow) {
        merged.back().bindings.insert(merged.back().bindings.end(), block.bindings.begin(),
                                      block.bindings.end());
        changed = true;
      } else {
        merged.push_back(block);
      }
    }
    if (!changed) return out;
    // Merging changes no value, so the annotation is the one just deduced.
    return with_struct_info(make_seq_expr(std::move(merged), seq->body), out.struct_info());
  }

 private:
  int64_t converted_blocks_ = 0;
};

class ToNonDataflowPass : public Pass {
 public:
  ToNonDataflowPass()
      : Pass(PassInfo("to-non-dataflow",
                      "dataflow blocks become ordinary blocks (DataflowVars become Vars)")
                 .with_statistic("converted_blocks", "dataflow blocks made ordinary")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    DataflowRemover remover(mod);
    IRModule out = remover.visit_module(mod);
    if (absl::Status s = remover.status(); !s.ok()) return s;
    ctx.add_statistic("converted_blocks", remover.converted_blocks());
    return out;
  }
};

}  // namespace

PassPtr create_to_non_dataflow_pass() { return std::make_shared<ToNonDataflowPass>(); }

}  // namespace relax::transform
