// Purity of graph-level values (purity.h).
#include "purity.h"

#include "relax/ir/op.h"
#include "relax/ir/visitor.h"

namespace relax::transform {
namespace {

// Stops at the first impure call; does not enter nested functions.
class EffectFinder : public ExprVisitor {
 public:
  bool found = false;

  void visit_expr(const Expr& e) override {
    if (!found) ExprVisitor::visit_expr(e);
  }
  void visit_call(const Expr& e, const CallNode& node) override {
    if (!is_pure_call(node)) {
      found = true;
      return;
    }
    ExprVisitor::visit_call(e, node);
  }
  // Creating a closure has no effect; its body runs when it is called, and
  // that call is judged by the closure's annotation.
  void visit_function(const Expr&, const FunctionNode&) override {}
};

}  // namespace

bool is_pure_call(const CallNode& call) {
  if (const auto* op = call.callee.as<OpNode>()) {
    // call_tir_inplace may stand in a dataflow block (its operator counts as pure there), but
    // it writes the arguments it names: the caller's tensors when they are parameters. For
    // the passes that drop, merge or move calls that write is an effect: an unused in-place
    // call stays, and two equal ones both run.
    if (op->name == "call_tir_inplace") return false;
    const OpInfo* info = find_op(op->name);
    return info != nullptr && info->pure;
  }
  const StructInfo& sinfo = call.callee.struct_info();
  if (!sinfo.defined()) return false;
  const auto* fn = sinfo.as<FuncStructInfoNode>();
  return fn != nullptr && fn->pure;
}

bool has_side_effects(const Expr& value) {
  EffectFinder finder;
  finder.visit_expr(value);
  return finder.found;
}

}  // namespace relax::transform
