// Purity of graph-level values (purity.h).
#include "purity.h"

#include "relax/ir/op.h"
#include "relax/ir/visitor.h"

namespace relax::transform {
namespace {

// Stops at the first impure call; does not enter nested functions.
class EffectFinder : public ExprVisitor {
 public:
  explicit EffectFinder(bool count_library_calls) : count_library_calls_(count_library_calls) {}
  bool found = false;

  void visit_expr(const Expr& e) override {
    if (!found) ExprVisitor::visit_expr(e);
  }
  void visit_call(const Expr& e, const CallNode& node) override {
    const auto* op = node.callee.as<OpNode>();
    if (!is_pure_call(node) || (count_library_calls_ && op != nullptr && op->name == "call_dps_library")) {
      found = true;
      return;
    }
    ExprVisitor::visit_call(e, node);
  }
  // Creating a closure has no effect; its body runs when it is called, and
  // that call is judged by the closure's annotation.
  void visit_function(const Expr&, const FunctionNode&) override {}

 private:
  bool count_library_calls_;
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

bool makes_fresh_object(const CallNode& call) {
  const auto* op = call.callee.as<OpNode>();
  return op != nullptr && (op->name == "alloc_storage" || op->name == "alloc_tensor");
}

bool has_side_effects(const Expr& value, bool count_library_calls) {
  EffectFinder finder(count_library_calls);
  finder.visit_expr(value);
  return finder.found;
}

}  // namespace relax::transform
