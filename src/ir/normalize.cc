// Normalisation: StructInfo deduction for every kind of expression, and
// with_struct_info.
//
// deduce_struct_info looks only at a node and its children's annotations;
// normalize recurses into the children that lack one and rebuilds the node.
// Nodes that already carry StructInfo are never revisited, which keeps
// normalisation linear. Symbolic-variable scoping for SeqExpr annotations
// follows DeduceContext::sym_in_scope, extended (while normalize recurses)
// with the variables that enclosing SeqExprs and Functions define.
#include "relax/ir/normalize.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "relax/ir/module.h"
#include "relax/ir/prim_func.h"
#include "relax/support/check.h"

namespace relax {

bool is_leaf_value(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
    case ExprKind::kGlobalVar:
    case ExprKind::kConstant:
    case ExprKind::kShapeExpr:
    case ExprKind::kPrimValue:
    case ExprKind::kStringImm:
    case ExprKind::kExternFunc:
    case ExprKind::kOp:
    case ExprKind::kPrimFunc:
      return true;
    default:
      return false;
  }
}
namespace {

absl::Status not_normalised(std::string_view what) {
  return absl::InvalidArgumentError(std::string(what) + " is not normalised (no StructInfo)");
}

absl::StatusOr<StructInfo> deduce_tuple_get_item(const TupleGetItemNode& node) {
  const StructInfo& sinfo = node.tuple.struct_info();
  if (!sinfo.defined()) return not_normalised("the tuple of a TupleGetItem");
  if (sinfo.kind() == StructInfoKind::kObject) return object_sinfo();
  const auto* tuple = sinfo.as<TupleStructInfoNode>();
  if (tuple == nullptr) {
    return absl::InvalidArgumentError("TupleGetItem: expected a Tuple, got " + sinfo.to_string());
  }
  if (node.index < 0 || node.index >= static_cast<int>(tuple->fields.size())) {
    return absl::InvalidArgumentError("TupleGetItem: index " + std::to_string(node.index) +
                                      " is out of range for " + sinfo.to_string() + " (" +
                                      std::to_string(tuple->fields.size()) + " fields)");
  }
  return tuple->fields[node.index];
}

std::string callee_name(const Expr& callee) {
  if (const auto* g = callee.as<GlobalVarNode>()) return g->name;
  if (const auto* v = callee.as<VarNode>()) return v->name_hint;
  if (const auto* e = callee.as<ExternFuncNode>()) return e->symbol;
  return std::string(expr_kind_name(callee.kind()));
}

absl::StatusOr<StructInfo> deduce_call(const CallNode& call, DeduceContext& ctx) {
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (!call.args[i].struct_info().defined()) {
      return not_normalised("argument " + std::to_string(i) + " of a call");
    }
  }
  if (const auto* op = call.callee.as<OpNode>()) {
    const OpInfo* info = find_op(op->name);
    if (info == nullptr) return absl::InvalidArgumentError("no operator named `" + op->name + "`");
    const int n = static_cast<int>(call.args.size());
    if (info->num_args >= 0 && (n > info->num_args || n < info->min_args)) {
      const std::string expected =
          info->min_args == info->num_args
              ? std::to_string(info->num_args)
              : std::to_string(info->min_args) + " to " + std::to_string(info->num_args);
      return absl::InvalidArgumentError(op->name + ": expected " + expected +
                                        " arguments, got " + std::to_string(n));
    }
    return info->deduce(call, ctx);
  }
  StructInfo callee_sinfo = call.callee.struct_info();
  if (!callee_sinfo.defined()) {
    absl::StatusOr<StructInfo> deduced = deduce_struct_info(call.callee, ctx);
    if (!deduced.ok()) return deduced.status();
    callee_sinfo = *deduced;
  }
  const auto* func = callee_sinfo.as<FuncStructInfoNode>();
  if (func == nullptr) {
    if (callee_sinfo.kind() == StructInfoKind::kObject) return object_sinfo();
    return absl::InvalidArgumentError("call to `" + callee_name(call.callee) +
                                      "`: the callee is not a function, it is " +
                                      callee_sinfo.to_string());
  }
  std::vector<StructInfo> args;
  args.reserve(call.args.size());
  for (const Expr& a : call.args) args.push_back(a.struct_info());
  return deduce_func_call(*func, args, ctx.analyzer, callee_name(call.callee));
}

absl::StatusOr<StructInfo> deduce_if(const IfNode& node, DeduceContext& ctx) {
  const StructInfo& cond = node.cond.struct_info();
  if (!cond.defined()) return not_normalised("the condition of an If");
  if (!is_if_condition(cond)) {
    return absl::InvalidArgumentError("If: condition: expected Prim[bool] or a one-element bool tensor, got " +
                                      cond.to_string());
  }
  const StructInfo& a = node.then_branch.struct_info();
  const StructInfo& b = node.else_branch.struct_info();
  if (!a.defined() || !b.defined()) return not_normalised("a branch of an If");
  return struct_info_lca(a, b, ctx.analyzer);
}

// The variables a SeqExpr's own match_casts define (struct_info.h), each
// pattern seeing the variables of the enclosing scope (`enclosing`, may be
// null, and ctx.sym_in_scope) and of the match_casts before it. Without
// ctx.sym_in_scope the enclosing scope is unknown, and each pattern counts
// every variable it could define (definable_sym_vars): erasing one too many
// from the SeqExpr's annotation loses precision, keeping one would let it
// escape its scope.
absl::flat_hash_set<uint64_t> defined_by_match_casts(const SeqExprNode& seq,
                                                     const DeduceContext& ctx,
                                                     const absl::flat_hash_set<uint64_t>* enclosing) {
  absl::flat_hash_set<uint64_t> out;
  auto outer_known = [&](const SymVar& v) {
    return out.contains(v.id()) || (enclosing != nullptr && enclosing->contains(v.id())) ||
           ctx.sym_in_scope(v);
  };
  for (const BindingBlock& block : seq.blocks) {
    for (const Binding& b : block.bindings) {
      if (!b.is_match_cast) continue;
      std::vector<SymVar> defined = ctx.sym_in_scope
                                        ? defined_sym_vars({b.cast_sinfo}, outer_known)
                                        : definable_sym_vars(b.cast_sinfo);
      for (const SymVar& v : defined) out.insert(v.id());
    }
  }
  return out;
}

// `enclosing`: variables defined by enclosing SeqExprs / Functions (may be null).
StructInfo seq_struct_info(const SeqExprNode& seq, DeduceContext& ctx,
                           const absl::flat_hash_set<uint64_t>* enclosing) {
  absl::flat_hash_set<uint64_t> here = defined_by_match_casts(seq, ctx, enclosing);
  if (here.empty()) return seq.body.struct_info();
  return erase_to_scope(seq.body.struct_info(), [&](const SymVar& v) {
    if (!here.contains(v.id())) return true;
    if (enclosing != nullptr && enclosing->contains(v.id())) return true;
    return ctx.sym_in_scope && ctx.sym_in_scope(v);
  });
}

StructInfo prim_func_sinfo(const Expr& e) {
  return e.struct_info().defined() ? e.struct_info() : opaque_func_sinfo(object_sinfo(), false);
}

// Recursive normalisation; tracks the variables enclosing nodes define.
class Normalizer {
 public:
  explicit Normalizer(DeduceContext& ctx) : ctx_(ctx) {}

  absl::StatusOr<Expr> visit(const Expr& e) {
    if (!e.defined()) return absl::InvalidArgumentError("cannot normalise an undefined expression");
    if (e.struct_info().defined()) return e;
    absl::StatusOr<Expr> rebuilt = rebuild(e);
    if (!rebuilt.ok()) return rebuilt.status();
    if (rebuilt->struct_info().defined()) return rebuilt;
    absl::StatusOr<StructInfo> sinfo = deduce(*rebuilt);
    if (!sinfo.ok()) return sinfo.status();
    return with_struct_info(*rebuilt, *sinfo);
  }

 private:
  absl::StatusOr<StructInfo> deduce(const Expr& e) {
    if (const auto* seq = e.as<SeqExprNode>()) {
      if (!seq->body.struct_info().defined()) return not_normalised("the body of a SeqExpr");
      return seq_struct_info(*seq, ctx_, &enclosing_);
    }
    return deduce_struct_info(e, ctx_);
  }

  absl::Status visit_all(std::vector<Expr>& exprs) {
    for (Expr& x : exprs) {
      absl::StatusOr<Expr> n = visit(x);
      if (!n.ok()) return n.status();
      x = *std::move(n);
    }
    return absl::OkStatus();
  }

  // A copy of `e` (without StructInfo) whose children are normalised.
  absl::StatusOr<Expr> rebuild(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kTuple: {
        std::vector<Expr> fields = e.as<TupleNode>()->fields;
        if (absl::Status s = visit_all(fields); !s.ok()) return s;
        return make_tuple(std::move(fields));
      }
      case ExprKind::kTupleGetItem: {
        const auto* node = e.as<TupleGetItemNode>();
        absl::StatusOr<Expr> tuple = visit(node->tuple);
        if (!tuple.ok()) return tuple.status();
        return make_tuple_get_item(*tuple, node->index);
      }
      case ExprKind::kCall: {
        const auto* node = e.as<CallNode>();
        Expr callee = node->callee;
        if (!callee.as<OpNode>() && !callee.as<GlobalVarNode>()) {
          absl::StatusOr<Expr> c = visit(callee);
          if (!c.ok()) return c.status();
          callee = *c;
        }
        std::vector<Expr> args = node->args;
        if (absl::Status s = visit_all(args); !s.ok()) return s;
        return make_call(callee, std::move(args), node->attrs, node->sinfo_args);
      }
      case ExprKind::kIf: {
        const auto* node = e.as<IfNode>();
        std::vector<Expr> parts = {node->cond, node->then_branch, node->else_branch};
        if (absl::Status s = visit_all(parts); !s.ok()) return s;
        return make_if(parts[0], parts[1], parts[2]);
      }
      case ExprKind::kSeqExpr:
        return rebuild_seq(*e.as<SeqExprNode>());
      default:
        // Leaves: their StructInfo follows from the node alone.
        return e;
    }
  }

  absl::StatusOr<Expr> rebuild_seq(const SeqExprNode& seq) {
    std::vector<uint64_t> added;
    for (uint64_t id : defined_by_match_casts(seq, ctx_, &enclosing_)) {
      if (enclosing_.insert(id).second) added.push_back(id);
    }
    std::vector<BindingBlock> blocks = seq.blocks;
    absl::Status status = absl::OkStatus();
    for (BindingBlock& block : blocks) {
      for (Binding& b : block.bindings) {
        if (!status.ok() || b.value.struct_info().defined()) continue;
        absl::StatusOr<Expr> v = visit(b.value);
        if (v.ok()) {
          b.value = *std::move(v);
        } else {
          status = v.status();
        }
      }
    }
    absl::StatusOr<Expr> body = status.ok() ? visit(seq.body) : absl::StatusOr<Expr>(status);
    for (uint64_t id : added) enclosing_.erase(id);
    if (!body.ok()) return body.status();
    return make_seq_expr(std::move(blocks), *body);
  }

  DeduceContext& ctx_;
  absl::flat_hash_set<uint64_t> enclosing_;
};

}  // namespace

absl::StatusOr<StructInfo> deduce_struct_info(const Expr& e, DeduceContext& ctx) {
  if (!e.defined()) return absl::InvalidArgumentError("cannot deduce an undefined expression");
  switch (e.kind()) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
      if (!e.struct_info().defined()) {
        return absl::InvalidArgumentError("variable `" + e.as<VarNode>()->name_hint +
                                          "` has no annotation");
      }
      return e.struct_info();
    case ExprKind::kGlobalVar: {
      if (e.struct_info().defined()) return e.struct_info();
      // Without a module to look in, all that is known is that it is a function.
      if (ctx.module == nullptr) return opaque_func_sinfo(object_sinfo(), false);
      const std::string& name = e.as<GlobalVarNode>()->name;
      Expr gvar = ctx.module->global_var(name);
      if (!gvar.defined()) {
        return absl::InvalidArgumentError("no function named `" + name + "` in the module");
      }
      return gvar.struct_info();
    }
    case ExprKind::kConstant:
      return e.struct_info();
    case ExprKind::kTuple: {
      std::vector<StructInfo> fields;
      for (const Expr& f : e.as<TupleNode>()->fields) {
        if (!f.struct_info().defined()) return not_normalised("a tuple field");
        fields.push_back(f.struct_info());
      }
      return tuple_sinfo(std::move(fields));
    }
    case ExprKind::kTupleGetItem:
      return deduce_tuple_get_item(*e.as<TupleGetItemNode>());
    case ExprKind::kCall:
      return deduce_call(*e.as<CallNode>(), ctx);
    case ExprKind::kShapeExpr:
      return shape_sinfo(e.as<ShapeExprNode>()->values);
    case ExprKind::kPrimValue: {
      const SymExpr& v = e.as<PrimValueNode>()->value;
      return prim_sinfo(v.dtype(), v);
    }
    case ExprKind::kStringImm:
      return object_sinfo();
    case ExprKind::kIf:
      return deduce_if(*e.as<IfNode>(), ctx);
    case ExprKind::kSeqExpr: {
      const auto* seq = e.as<SeqExprNode>();
      if (!seq->body.struct_info().defined()) return not_normalised("the body of a SeqExpr");
      return seq_struct_info(*seq, ctx, nullptr);
    }
    case ExprKind::kFunction: {
      const auto* fn = e.as<FunctionNode>();
      std::vector<StructInfo> params;
      for (const Var& p : fn->params) params.push_back(p.struct_info());
      return func_sinfo(std::move(params), fn->ret, fn->pure);
    }
    case ExprKind::kExternFunc:
      return e.struct_info().defined() ? e.struct_info() : opaque_func_sinfo(object_sinfo());
    case ExprKind::kOp: {
      const OpInfo* info = find_op(e.as<OpNode>()->name);
      if (info == nullptr) {
        return absl::InvalidArgumentError("no operator named `" + e.as<OpNode>()->name + "`");
      }
      return info->op.struct_info();
    }
    case ExprKind::kPrimFunc:
      return prim_func_sinfo(e);
  }
  return absl::InternalError("unknown expression kind");
}

absl::StatusOr<Expr> normalize(const Expr& e, DeduceContext& ctx) {
  if (absl::Status s = check_defined(e); !s.ok()) return s;
  return Normalizer(ctx).visit(e);
}

Expr with_struct_info(const Expr& e, StructInfo sinfo) {
  RELAX_CHECK(e.defined()) << "with_struct_info of an undefined expression";
  switch (e.kind()) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar: {
      const auto* n = e.as<VarNode>();
      return Expr(std::make_shared<const VarNode>(n->name_hint, std::move(sinfo),
                                                  e.kind() == ExprKind::kDataflowVar));
    }
    case ExprKind::kGlobalVar:
      return make_global_var(e.as<GlobalVarNode>()->name, std::move(sinfo));
    case ExprKind::kConstant:
      return Expr(
          std::make_shared<const ConstantNode>(e.as<ConstantNode>()->data, std::move(sinfo)));
    case ExprKind::kTuple:
      return make_tuple(e.as<TupleNode>()->fields, std::move(sinfo));
    case ExprKind::kTupleGetItem: {
      const auto* n = e.as<TupleGetItemNode>();
      return make_tuple_get_item(n->tuple, n->index, std::move(sinfo));
    }
    case ExprKind::kCall: {
      const auto* n = e.as<CallNode>();
      return make_call(n->callee, n->args, n->attrs, n->sinfo_args, std::move(sinfo));
    }
    case ExprKind::kShapeExpr:
      return Expr(
          std::make_shared<const ShapeExprNode>(e.as<ShapeExprNode>()->values, std::move(sinfo)));
    case ExprKind::kPrimValue:
      return Expr(
          std::make_shared<const PrimValueNode>(e.as<PrimValueNode>()->value, std::move(sinfo)));
    case ExprKind::kStringImm:
      return Expr(
          std::make_shared<const StringImmNode>(e.as<StringImmNode>()->value, std::move(sinfo)));
    case ExprKind::kIf: {
      const auto* n = e.as<IfNode>();
      return make_if(n->cond, n->then_branch, n->else_branch, std::move(sinfo));
    }
    case ExprKind::kSeqExpr: {
      const auto* n = e.as<SeqExprNode>();
      return make_seq_expr(n->blocks, n->body, std::move(sinfo));
    }
    case ExprKind::kFunction: {
      const auto* n = e.as<FunctionNode>();
      return Expr(std::make_shared<const FunctionNode>(
          n->params, n->body, n->ret, n->pure, n->upper_bounds, n->attrs, std::move(sinfo)));
    }
    case ExprKind::kExternFunc:
      return make_extern_func(e.as<ExternFuncNode>()->symbol, std::move(sinfo));
    case ExprKind::kOp:
      return Expr(std::make_shared<const OpNode>(e.as<OpNode>()->name, std::move(sinfo)));
    case ExprKind::kPrimFunc: {
      const auto* n = e.as<PrimFuncNode>();
      return Expr(
          std::make_shared<const PrimFuncNode>(n->params, n->body, n->attrs, std::move(sinfo)));
    }
  }
  RELAX_CHECK(false) << "unknown expression kind";
  return Expr();
}

}  // namespace relax
