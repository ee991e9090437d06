// Small readers of the explicit-allocation IR that the memory passes share (private to
// src/transform): lower-alloc, lift-workspace, plan-memory, and the plan checker, which keeps
// its own liveness walk (see memory_plan_ir.cc).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/op.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/visitor.h"

namespace relax::transform::memory_ir {

/// The call when `e` calls the operator `name`, else nullptr.
inline const CallNode* op_call(const Expr& e, std::string_view name) {
  const auto* call = e.as<CallNode>();
  if (call == nullptr) return nullptr;
  const auto* op = call->callee.as<OpNode>();
  return op != nullptr && op->name == name ? call : nullptr;
}

/// The bytes one element of `dtype` takes in a tensor (sub-byte dtypes round up).
inline int64_t element_bytes(DataType dtype) { return (int64_t{dtype.bits} * dtype.lanes + 7) / 8; }

/// Whether a value of this annotation can hold (or refer to) memory: not a Prim, a Shape, or a
/// tuple of those.
inline bool may_hold_memory(const StructInfo& sinfo) {
  if (!sinfo.defined()) return true;
  if (sinfo.kind() == StructInfoKind::kPrim || sinfo.kind() == StructInfoKind::kShape) return false;
  if (const auto* tuple = sinfo.as<TupleStructInfoNode>()) {
    for (const StructInfo& f : tuple->fields) {
      if (may_hold_memory(f)) return true;
    }
    return false;
  }
  return true;
}

/// Every variable `e` mentions, with multiplicity (nested functions and If branches too).
inline std::vector<const ExprNode*> mentioned_vars(const Expr& e) {
  class Collect : public ExprVisitor {
   public:
    std::vector<const ExprNode*> vars;
    void visit_var(const Var& var) override { vars.push_back(var.get()); }
  };
  Collect c;
  c.visit_expr(e);
  return c.vars;
}

}  // namespace relax::transform::memory_ir
