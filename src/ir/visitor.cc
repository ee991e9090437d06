// ExprVisitor and StmtVisitor: default hooks that walk every child.
//
// The order of the walk follows evaluation: a binding's value before its
// variable, a function's parameters before its body, a loop's bounds before
// its body. Visitors keep no state of their own. visit_expr and visit_stmt
// dispatch through visitor_hooks.h, shared with the mutators.
#include "relax/ir/visitor.h"

#include "ir/visitor_hooks.h"

namespace relax {

// ---------------------------------------------------------------------------
// ExprVisitor

void ExprVisitor::visit_module(const IRModule& mod) {
  for (const auto& [name, func] : mod.functions()) visit_expr(func);
}

void ExprVisitor::visit_expr(const Expr& e) { detail::call_expr_hook(*this, e); }

void ExprVisitor::visit_var(const Var&) {}
void ExprVisitor::visit_var_def(const Var& var) { visit_annotation(var.struct_info()); }
void ExprVisitor::visit_global_var(const Expr&, const GlobalVarNode&) {}
void ExprVisitor::visit_constant(const Expr&, const ConstantNode&) {}

void ExprVisitor::visit_tuple(const Expr&, const TupleNode& node) {
  for (const Expr& f : node.fields) visit_expr(f);
}

void ExprVisitor::visit_tuple_get_item(const Expr&, const TupleGetItemNode& node) {
  visit_expr(node.tuple);
}

void ExprVisitor::visit_call(const Expr&, const CallNode& node) {
  visit_expr(node.callee);
  for (const Expr& a : node.args) visit_expr(a);
  for (const StructInfo& s : node.sinfo_args) visit_annotation(s);
}

void ExprVisitor::visit_shape_expr(const Expr&, const ShapeExprNode& node) {
  for (const SymExpr& v : node.values) visit_sym_expr(v);
}

void ExprVisitor::visit_prim_value(const Expr&, const PrimValueNode& node) {
  visit_sym_expr(node.value);
}

void ExprVisitor::visit_string_imm(const Expr&, const StringImmNode&) {}

void ExprVisitor::visit_if(const Expr&, const IfNode& node) {
  visit_expr(node.cond);
  visit_expr(node.then_branch);
  visit_expr(node.else_branch);
}

void ExprVisitor::visit_seq_expr(const Expr&, const SeqExprNode& node) {
  for (const BindingBlock& block : node.blocks) visit_binding_block(block);
  visit_expr(node.body);
}

void ExprVisitor::visit_function(const Expr&, const FunctionNode& node) {
  for (const Var& p : node.params) visit_var_def(p);
  visit_annotation(node.ret);
  visit_expr(node.body);
}

void ExprVisitor::visit_extern_func(const Expr&, const ExternFuncNode&) {}
void ExprVisitor::visit_op(const Expr&, const OpNode&) {}
void ExprVisitor::visit_prim_func(const Expr&, const PrimFuncNode&) {}

void ExprVisitor::visit_binding_block(const BindingBlock& block) {
  for (const Binding& b : block.bindings) visit_binding(b);
}

void ExprVisitor::visit_binding(const Binding& binding) {
  visit_expr(binding.value);
  if (binding.is_match_cast) visit_annotation(binding.cast_sinfo);
  visit_var_def(binding.var);
}

void ExprVisitor::visit_struct_info(const StructInfo& sinfo) {
  auto dims = [&](const std::optional<std::vector<SymExpr>>& values) {
    if (!values) return;
    for (const SymExpr& v : *values) visit_sym_expr(v);
  };
  const auto children = Overloaded{[](const ObjectStructInfoNode&) {},
                                   [&](const PrimStructInfoNode& n) {
                                     if (n.value.defined()) visit_sym_expr(n.value);
                                   },
                                   [&](const ShapeStructInfoNode& n) { dims(n.values); },
                                   [&](const TensorStructInfoNode& n) { dims(n.shape); },
                                   [&](const TupleStructInfoNode& n) {
                                     for (const StructInfo& f : n.fields) visit_struct_info(f);
                                   },
                                   [&](const FuncStructInfoNode& n) {
                                     if (n.params) {
                                       for (const StructInfo& p : *n.params) visit_struct_info(p);
                                     }
                                     if (n.ret.defined()) visit_struct_info(n.ret);
                                   }};
  dispatch_struct_info(sinfo, children);
}

void ExprVisitor::visit_sym_expr(const SymExpr&) {}

// ---------------------------------------------------------------------------
// StmtVisitor

void StmtVisitor::visit_prim_func(const PrimFuncNode& func) {
  for (const PrimParam& p : func.params) {
    if (!p.buffer) continue;
    for (const SymExpr& d : p.buffer->shape()) visit_value(d);
  }
  visit_stmt(func.body);
}

void StmtVisitor::visit_stmt(const Stmt& s) {
  if (s.defined()) detail::call_stmt_hook(*this, s);
}

void StmtVisitor::visit_for(const Stmt&, const ForNode& node) {
  visit_value(node.min);
  visit_value(node.extent);
  visit_stmt(node.body);
}

void StmtVisitor::visit_seq(const Stmt&, const SeqStmtNode& node) {
  for (const Stmt& s : node.stmts) visit_stmt(s);
}

void StmtVisitor::visit_buffer_store(const Stmt&, const BufferStoreNode& node) {
  for (const SymExpr& i : node.indices) visit_value(i);
  visit_value(node.value);
}

void StmtVisitor::visit_if_then_else(const Stmt&, const IfThenElseNode& node) {
  visit_value(node.cond);
  visit_stmt(node.then_case);
  visit_stmt(node.else_case);
}

void StmtVisitor::visit_let(const Stmt&, const LetStmtNode& node) {
  visit_value(node.value);
  visit_stmt(node.body);
}

void StmtVisitor::visit_allocate(const Stmt&, const AllocateNode& node) {
  for (const SymExpr& d : node.buffer.shape()) visit_value(d);
  visit_stmt(node.body);
}

void StmtVisitor::visit_evaluate(const Stmt&, const EvaluateNode& node) { visit_value(node.value); }

void StmtVisitor::visit_block(const Stmt&, const BlockNode& node) {
  for (const IterVar& iv : node.iter_vars) {
    visit_value(iv.extent);
    visit_value(iv.binding);
  }
  visit_stmt(node.init);
  visit_stmt(node.body);
}

void StmtVisitor::visit_extern_call(const Stmt&, const ExternCallNode& node) {
  for (const ExternArg& arg : node.args) {
    if (!arg.is_region()) visit_value(arg.value);
    for (const SymExpr& i : arg.indices) visit_value(i);
  }
}

void StmtVisitor::visit_value(const SymExpr& value) {
  if (!value.defined()) return;
  for (size_t i = 0; i < value.num_operands(); ++i) visit_value(value.operand(i));
}

}  // namespace relax
