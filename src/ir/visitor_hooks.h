// The hook of each node class, shared by the visitors and mutators of visitor.h
// (private to src/ir).
//
// ExprVisitor and ExprMutator (and StmtVisitor and StmtMutator) name their hooks
// alike and differ only in what the hooks return, so one table maps a node
// class to its hook for both: visit_expr of either class is
// call_expr_hook(*this, e), which dispatches once (relax/ir/functor.h) and
// returns the hook's result.
#pragma once

#include "relax/ir/functor.h"
#include "relax/ir/visitor.h"

namespace relax::detail {

template <class V>
auto expr_hook(V& v, const Expr& e, const VarNode&) {
  return v.visit_var(Var::from_expr(e));
}
template <class V>
auto expr_hook(V& v, const Expr& e, const GlobalVarNode& n) {
  return v.visit_global_var(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const ConstantNode& n) {
  return v.visit_constant(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const TupleNode& n) {
  return v.visit_tuple(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const TupleGetItemNode& n) {
  return v.visit_tuple_get_item(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const CallNode& n) {
  return v.visit_call(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const ShapeExprNode& n) {
  return v.visit_shape_expr(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const PrimValueNode& n) {
  return v.visit_prim_value(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const StringImmNode& n) {
  return v.visit_string_imm(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const IfNode& n) {
  return v.visit_if(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const SeqExprNode& n) {
  return v.visit_seq_expr(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const FunctionNode& n) {
  return v.visit_function(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const ExternFuncNode& n) {
  return v.visit_extern_func(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const OpNode& n) {
  return v.visit_op(e, n);
}
template <class V>
auto expr_hook(V& v, const Expr& e, const PrimFuncNode& n) {
  return v.visit_prim_func(e, n);
}

/// The hook of `v` (an ExprVisitor or ExprMutator) for the kind of `e`.
template <class V>
auto call_expr_hook(V& v, const Expr& e) {
  return dispatch_expr(e, [&](const auto& node) { return expr_hook(v, e, node); });
}

template <class V>
auto stmt_hook(V& v, const Stmt& s, const ForNode& n) {
  return v.visit_for(s, n);
}
template <class V>
auto stmt_hook(V& v, const Stmt& s, const SeqStmtNode& n) {
  return v.visit_seq(s, n);
}
template <class V>
auto stmt_hook(V& v, const Stmt& s, const BufferStoreNode& n) {
  return v.visit_buffer_store(s, n);
}
template <class V>
auto stmt_hook(V& v, const Stmt& s, const IfThenElseNode& n) {
  return v.visit_if_then_else(s, n);
}
template <class V>
auto stmt_hook(V& v, const Stmt& s, const LetStmtNode& n) {
  return v.visit_let(s, n);
}
template <class V>
auto stmt_hook(V& v, const Stmt& s, const AllocateNode& n) {
  return v.visit_allocate(s, n);
}
template <class V>
auto stmt_hook(V& v, const Stmt& s, const EvaluateNode& n) {
  return v.visit_evaluate(s, n);
}
template <class V>
auto stmt_hook(V& v, const Stmt& s, const BlockNode& n) {
  return v.visit_block(s, n);
}
template <class V>
auto stmt_hook(V& v, const Stmt& s, const ExternCallNode& n) {
  return v.visit_extern_call(s, n);
}

/// The hook of `v` (a StmtVisitor or StmtMutator) for the kind of `s` (defined).
template <class V>
auto call_stmt_hook(V& v, const Stmt& s) {
  return dispatch_stmt(s, [&](const auto& node) { return stmt_hook(v, s, node); });
}

}  // namespace relax::detail
