// ExprMutator and StmtMutator: rebuild only what changed.
//
// Every default hook compares what its children became with what they were
// (`same_as`) and returns its own node when nothing changed, so unchanged
// subtrees are shared between the input and the output.
//
// ExprMutator keeps annotations current. A rebuilt node gets its StructInfo from
// renormalize() (deduction from its already annotated children, never a walk
// of the subtree). A binding keeps its variable when the new value has the
// same annotation; otherwise a fresh variable with the value's annotation
// takes its place and later uses are redirected, so that deductions further
// down see the new annotation. For SeqExpr annotations the mutator tracks the
// symbolic variables in scope (function parameters and match_casts), which is
// what DeduceContext::sym_in_scope asks for.
#include <utility>

#include "absl/strings/str_join.h"
#include "relax/ir/normalize.h"
#include "relax/ir/visitor.h"
#include "relax/support/check.h"
#include "ir/visitor_hooks.h"

namespace relax {
namespace {

// A variable like `v` (same name and kind) annotated `sinfo`.
Var fresh_like(const Var& v, StructInfo sinfo) {
  if (v.is_dataflow()) return DataflowVar(v.name_hint(), std::move(sinfo));
  return Var(v.name_hint(), std::move(sinfo));
}

bool same_binding(const Binding& a, const Binding& b) {
  return a.var.same_as(b.var) && a.value.same_as(b.value) && a.is_match_cast == b.is_match_cast &&
         a.cast_sinfo.same_as(b.cast_sinfo);
}

bool same_block(const BindingBlock& a, const BindingBlock& b) {
  if (a.is_dataflow != b.is_dataflow || a.bindings.size() != b.bindings.size()) return false;
  for (size_t i = 0; i < a.bindings.size(); ++i) {
    if (!same_binding(a.bindings[i], b.bindings[i])) return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------
// ExprMutator

ExprMutator::ExprMutator(const IRModule* module) : ctx_{analyzer_, module, nullptr} {
  ctx_.sym_in_scope = [this](const SymVar& v) { return sym_scope_.contains(v.id()); };
}

IRModule ExprMutator::visit_module(const IRModule& mod) {
  const IRModule* saved = ctx_.module;
  if (saved == nullptr) ctx_.module = &mod;
  IRModule out = mod;
  for (const auto& [name, func] : mod.functions()) {
    if (func.as<FunctionNode>() == nullptr) continue;
    Expr rewritten = visit_expr(func);
    if (!rewritten.same_as(func)) out.add(name, rewritten);
  }
  ctx_.module = saved;
  return out;
}

Expr ExprMutator::visit_expr(const Expr& e) { return detail::call_expr_hook(*this, e); }

Expr ExprMutator::visit_var(const Var& var) {
  auto it = var_remap_.find(var.get());
  return it == var_remap_.end() ? Expr(var) : Expr(it->second.second);
}

Var ExprMutator::visit_var_def(const Var& var) { return var; }
Expr ExprMutator::visit_global_var(const Expr& e, const GlobalVarNode&) { return e; }
Expr ExprMutator::visit_constant(const Expr& e, const ConstantNode&) { return e; }
Expr ExprMutator::visit_string_imm(const Expr& e, const StringImmNode&) { return e; }
Expr ExprMutator::visit_extern_func(const Expr& e, const ExternFuncNode&) { return e; }
Expr ExprMutator::visit_op(const Expr& e, const OpNode&) { return e; }
Expr ExprMutator::visit_prim_func(const Expr& e, const PrimFuncNode&) { return e; }

Expr ExprMutator::visit_tuple(const Expr& e, const TupleNode& node) {
  bool changed = false;
  std::vector<Expr> fields;
  fields.reserve(node.fields.size());
  for (const Expr& f : node.fields) {
    fields.push_back(visit_expr(f));
    changed |= !fields.back().same_as(f);
  }
  return changed ? annotate(make_tuple(std::move(fields))) : e;
}

Expr ExprMutator::visit_tuple_get_item(const Expr& e, const TupleGetItemNode& node) {
  Expr tuple = visit_expr(node.tuple);
  return tuple.same_as(node.tuple) ? e : annotate(make_tuple_get_item(tuple, node.index));
}

Expr ExprMutator::visit_call(const Expr& e, const CallNode& node) {
  Expr callee = visit_expr(node.callee);
  bool changed = !callee.same_as(node.callee);
  std::vector<Expr> args;
  args.reserve(node.args.size());
  for (const Expr& a : node.args) {
    args.push_back(visit_expr(a));
    changed |= !args.back().same_as(a);
  }
  std::vector<StructInfo> sinfo_args;
  sinfo_args.reserve(node.sinfo_args.size());
  for (const StructInfo& s : node.sinfo_args) {
    sinfo_args.push_back(visit_struct_info(s));
    changed |= !sinfo_args.back().same_as(s);
  }
  if (!changed) return e;
  return annotate(make_call(callee, std::move(args), node.attrs, std::move(sinfo_args)));
}

Expr ExprMutator::visit_shape_expr(const Expr& e, const ShapeExprNode& node) {
  bool changed = false;
  std::vector<SymExpr> values;
  values.reserve(node.values.size());
  for (const SymExpr& v : node.values) {
    values.push_back(visit_sym_expr(v));
    changed |= !values.back().same_as(v);
  }
  return changed ? annotate(make_shape_expr(std::move(values))) : e;
}

Expr ExprMutator::visit_prim_value(const Expr& e, const PrimValueNode& node) {
  SymExpr value = visit_sym_expr(node.value);
  return value.same_as(node.value) ? e : annotate(make_prim_value(value));
}

Expr ExprMutator::visit_if(const Expr& e, const IfNode& node) {
  Expr cond = visit_expr(node.cond);
  Expr then_branch = visit_expr(node.then_branch);
  Expr else_branch = visit_expr(node.else_branch);
  if (cond.same_as(node.cond) && then_branch.same_as(node.then_branch) &&
      else_branch.same_as(node.else_branch)) {
    return e;
  }
  return annotate(make_if(cond, then_branch, else_branch));
}

Expr ExprMutator::visit_seq_expr(const Expr& e, const SeqExprNode& node) {
  std::vector<SymVar> outer_scope;
  outer_scope.swap(seq_defined_);
  bool changed = false;
  std::vector<BindingBlock> blocks;
  blocks.reserve(node.blocks.size());
  for (const BindingBlock& block : node.blocks) {
    BindingBlock rewritten = visit_binding_block(block);
    bool same = same_block(rewritten, block);
    changed |= !same;
    // A block that a rewrite emptied disappears.
    if (same || !rewritten.bindings.empty()) blocks.push_back(std::move(rewritten));
  }
  Expr body = visit_expr(node.body);
  changed |= !body.same_as(node.body);
  // The SeqExpr's own match_cast variables are out of scope for its annotation.
  leave_sym_scope(seq_defined_);
  seq_defined_.swap(outer_scope);
  if (!changed) return e;
  return annotate(make_seq_expr(std::move(blocks), body));
}

Expr ExprMutator::visit_function(const Expr& e, const FunctionNode& node) {
  bool changed = false;
  std::vector<Var> params;
  std::vector<StructInfo> annotations;
  params.reserve(node.params.size());
  for (const Var& p : node.params) {
    params.push_back(visit_var_def(p));
    if (!params.back().same_as(p)) {
      changed = true;
      set_var_remap(p, params.back());
    }
    if (params.back().struct_info().defined()) annotations.push_back(params.back().struct_info());
  }
  // The parameters define their variables together (struct_info.h).
  std::vector<SymVar> defined = defined_sym_vars(annotations);
  enter_sym_scope(defined);
  Expr body = visit_expr(node.body);
  leave_sym_scope(defined);
  if (!changed && body.same_as(node.body)) return e;
  // A return annotation that was the body's (deduced, not declared coarser) follows the body.
  StructInfo ret = node.ret;
  if (struct_info_equal(ret, node.body.struct_info()) && body.struct_info().defined()) {
    ret = body.struct_info();
  }
  return annotate(make_function(std::move(params), body, std::move(ret), node.pure,
                                node.upper_bounds, node.attrs));
}

BindingBlock ExprMutator::visit_binding_block(const BindingBlock& block) {
  BindingBlock out;
  out.is_dataflow = block.is_dataflow;
  out.bindings.reserve(block.bindings.size());
  BindingBlock* saved = block_;
  block_ = &out;
  for (const Binding& b : block.bindings) visit_binding(b);
  block_ = saved;
  return out;
}

void ExprMutator::visit_binding(const Binding& binding) {
  Expr value = visit_expr(binding.value);
  if (binding.is_match_cast) {
    StructInfo pattern = visit_struct_info(binding.cast_sinfo);
    if (value.same_as(binding.value) && pattern.same_as(binding.cast_sinfo)) {
      return emit_binding(binding);
    }
    Var var = binding.var;
    if (!pattern.same_as(binding.cast_sinfo)) {
      var = fresh_like(binding.var, pattern);
      set_var_remap(binding.var, var);
    }
    return emit_binding({var, value, true, pattern});
  }
  if (value.same_as(binding.value)) return emit_binding(binding);
  Var var = binding.var;
  if (!struct_info_equal(value.struct_info(), var.struct_info())) {
    var = fresh_like(binding.var, value.struct_info());
    set_var_remap(binding.var, var);
  }
  emit_binding({var, value, false, StructInfo()});
}

StructInfo ExprMutator::visit_struct_info(const StructInfo& sinfo) {
  if (!sinfo.defined()) return sinfo;
  bool changed = false;
  auto dims = [&](const std::optional<std::vector<SymExpr>>& values) {
    std::optional<std::vector<SymExpr>> out = values;
    if (!out) return out;
    for (SymExpr& d : *out) {
      SymExpr v = visit_sym_expr(d);
      changed |= !v.same_as(d);
      d = std::move(v);
    }
    return out;
  };
  auto rewrite_all = [&](const std::vector<StructInfo>& items) {
    std::vector<StructInfo> out;
    out.reserve(items.size());
    for (const StructInfo& s : items) {
      out.push_back(visit_struct_info(s));
      changed |= !out.back().same_as(s);
    }
    return out;
  };
  const auto rebuild =
      Overloaded{[&](const ObjectStructInfoNode&) { return sinfo; },
                 [&](const PrimStructInfoNode& n) {
                   if (!n.value.defined()) return sinfo;
                   SymExpr v = visit_sym_expr(n.value);
                   return v.same_as(n.value) ? sinfo : prim_sinfo(n.dtype, v);
                 },
                 [&](const ShapeStructInfoNode& n) {
                   auto values = dims(n.values);
                   return changed ? shape_sinfo(std::move(*values)) : sinfo;
                 },
                 [&](const TensorStructInfoNode& n) {
                   auto shape = dims(n.shape);
                   return changed ? tensor_sinfo(std::move(*shape), n.dtype, n.device) : sinfo;
                 },
                 [&](const TupleStructInfoNode& n) {
                   std::vector<StructInfo> fields = rewrite_all(n.fields);
                   return changed ? tuple_sinfo(std::move(fields)) : sinfo;
                 },
                 [&](const FuncStructInfoNode& n) {
                   StructInfo ret = visit_struct_info(n.ret);
                   changed = !ret.same_as(n.ret);
                   if (!n.params) return changed ? opaque_func_sinfo(ret, n.pure) : sinfo;
                   std::vector<StructInfo> params = rewrite_all(*n.params);
                   return changed ? func_sinfo(std::move(params), ret, n.pure) : sinfo;
                 }};
  return dispatch_struct_info(sinfo, rebuild);
}

SymExpr ExprMutator::visit_sym_expr(const SymExpr& value) { return value; }

StructInfo ExprMutator::renormalize(const Expr& rebuilt) {
  absl::StatusOr<StructInfo> sinfo = deduce_struct_info(rebuilt, ctx_);
  if (sinfo.ok()) return *std::move(sinfo);
  errors_.push_back(std::string(sinfo.status().message()));
  return object_sinfo();
}

absl::Status ExprMutator::status() const {
  if (errors_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors_, "\n"));
}

void ExprMutator::emit_binding(Binding binding) {
  RELAX_CHECK(block_ != nullptr) << "emit_binding is only valid inside visit_binding";
  if (binding.is_match_cast) {
    std::vector<SymVar> defined = defined_sym_vars(
        {binding.cast_sinfo}, [this](const SymVar& v) { return sym_scope_.contains(v.id()); });
    enter_sym_scope(defined);
    seq_defined_.insert(seq_defined_.end(), defined.begin(), defined.end());
  }
  block_->bindings.push_back(std::move(binding));
}

Var ExprMutator::emit(Expr value, std::string name_hint) {
  RELAX_CHECK(block_ != nullptr) << "emit is only valid inside visit_binding";
  absl::StatusOr<Expr> normalized = normalize(value, ctx_);
  if (!normalized.ok()) {
    errors_.push_back(std::string(normalized.status().message()));
    normalized = with_struct_info(value, object_sinfo());
  }
  if (name_hint.empty())
    name_hint = (block_->is_dataflow ? "lv" : "gv") + std::to_string(emitted_++);
  Var var = block_->is_dataflow ? DataflowVar(std::move(name_hint), normalized->struct_info())
                                : Var(std::move(name_hint), normalized->struct_info());
  emit_binding({var, *std::move(normalized), false, StructInfo()});
  return var;
}

void ExprMutator::set_var_remap(const Var& from, const Var& to) { var_remap_[from.get()] = {from, to}; }

Expr ExprMutator::annotate(const Expr& node) { return with_struct_info(node, renormalize(node)); }

void ExprMutator::enter_sym_scope(const std::vector<SymVar>& vars) {
  for (const SymVar& v : vars) ++sym_scope_[v.id()];
}

void ExprMutator::leave_sym_scope(const std::vector<SymVar>& vars) {
  for (const SymVar& v : vars) {
    auto it = sym_scope_.find(v.id());
    if (it != sym_scope_.end() && --it->second == 0) sym_scope_.erase(it);
  }
}

// ---------------------------------------------------------------------------
// StmtMutator

Expr StmtMutator::visit_prim_func(const Expr& prim_func) {
  const auto* node = prim_func.as<PrimFuncNode>();
  RELAX_CHECK(node != nullptr) << "StmtMutator::visit_prim_func given a "
                               << expr_kind_name(prim_func.kind());
  Stmt body = visit_stmt(node->body);
  if (body.same_as(node->body)) return prim_func;
  return Expr(std::make_shared<const PrimFuncNode>(node->params, body, node->attrs,
                                                   prim_func.struct_info()));
}

Stmt StmtMutator::visit_stmt(const Stmt& s) {
  return s.defined() ? detail::call_stmt_hook(*this, s) : s;
}

Stmt StmtMutator::visit_for(const Stmt& s, const ForNode& node) {
  SymExpr min = visit_value(node.min);
  SymExpr extent = visit_value(node.extent);
  Stmt body = visit_stmt(node.body);
  if (min.same_as(node.min) && extent.same_as(node.extent) && body.same_as(node.body)) return s;
  return Stmt(std::make_shared<const ForNode>(node.loop_var, min, extent, node.for_kind, body));
}

Stmt StmtMutator::visit_seq(const Stmt& s, const SeqStmtNode& node) {
  bool changed = false;
  std::vector<Stmt> stmts;
  stmts.reserve(node.stmts.size());
  for (const Stmt& x : node.stmts) {
    stmts.push_back(visit_stmt(x));
    changed |= !stmts.back().same_as(x);
  }
  return changed ? Stmt(std::make_shared<const SeqStmtNode>(std::move(stmts))) : s;
}

Stmt StmtMutator::visit_buffer_store(const Stmt& s, const BufferStoreNode& node) {
  bool changed = false;
  std::vector<SymExpr> indices = visit_values(node.indices, changed);
  SymExpr value = visit_value(node.value);
  if (!changed && value.same_as(node.value)) return s;
  return Stmt(std::make_shared<const BufferStoreNode>(node.buffer, std::move(indices), value));
}

Stmt StmtMutator::visit_if_then_else(const Stmt& s, const IfThenElseNode& node) {
  SymExpr cond = visit_value(node.cond);
  Stmt then_case = visit_stmt(node.then_case);
  Stmt else_case = visit_stmt(node.else_case);
  if (cond.same_as(node.cond) && then_case.same_as(node.then_case) &&
      else_case.same_as(node.else_case)) {
    return s;
  }
  return Stmt(std::make_shared<const IfThenElseNode>(cond, then_case, else_case));
}

Stmt StmtMutator::visit_let(const Stmt& s, const LetStmtNode& node) {
  SymExpr value = visit_value(node.value);
  Stmt body = visit_stmt(node.body);
  if (value.same_as(node.value) && body.same_as(node.body)) return s;
  return Stmt(std::make_shared<const LetStmtNode>(node.var, value, body));
}

Stmt StmtMutator::visit_allocate(const Stmt& s, const AllocateNode& node) {
  Stmt body = visit_stmt(node.body);
  if (body.same_as(node.body)) return s;
  return Stmt(std::make_shared<const AllocateNode>(node.buffer, body));
}

Stmt StmtMutator::visit_evaluate(const Stmt& s, const EvaluateNode& node) {
  SymExpr value = visit_value(node.value);
  return value.same_as(node.value) ? s : Stmt(std::make_shared<const EvaluateNode>(value));
}

Stmt StmtMutator::visit_extern_call(const Stmt& s, const ExternCallNode& node) {
  bool changed = false;
  std::vector<ExternArg> args = node.args;
  for (ExternArg& arg : args) {
    if (arg.is_region()) {
      arg.indices = visit_values(arg.indices, changed);
    } else {
      SymExpr value = visit_value(arg.value);
      changed |= !value.same_as(arg.value);
      arg.value = std::move(value);
    }
  }
  return changed ? Stmt(std::make_shared<const ExternCallNode>(node.name, std::move(args))) : s;
}

Stmt StmtMutator::visit_block(const Stmt& s, const BlockNode& node) {
  bool changed = false;
  std::vector<IterVar> iter_vars = node.iter_vars;
  for (IterVar& iv : iter_vars) {
    SymExpr extent = visit_value(iv.extent);
    SymExpr binding = visit_value(iv.binding);
    changed |= !extent.same_as(iv.extent) || !binding.same_as(iv.binding);
    iv.extent = std::move(extent);
    iv.binding = std::move(binding);
  }
  Stmt init = visit_stmt(node.init);
  Stmt body = visit_stmt(node.body);
  if (!changed && init.same_as(node.init) && body.same_as(node.body)) return s;
  return Stmt(std::make_shared<const BlockNode>(node.name, std::move(iter_vars), init, body));
}

SymExpr StmtMutator::visit_value(const SymExpr& value) {
  if (!value.defined() || value.num_operands() == 0) return value;
  bool changed = false;
  std::vector<SymExpr> ops;
  ops.reserve(value.num_operands());
  for (size_t i = 0; i < value.num_operands(); ++i) {
    ops.push_back(visit_value(value.operand(i)));
    changed |= !ops.back().same_as(value.operand(i));
  }
  return changed ? value.with_operands(std::move(ops)) : value;
}

std::vector<SymExpr> StmtMutator::visit_values(const std::vector<SymExpr>& values, bool& changed) {
  std::vector<SymExpr> out;
  out.reserve(values.size());
  for (const SymExpr& v : values) {
    out.push_back(visit_value(v));
    changed |= !out.back().same_as(v);
  }
  return out;
}

}  // namespace relax
