// check_defined: finding default-constructed handles in a value before it is
// normalised.
//
// Every handle type of the IR (Expr, Var, SymExpr, StructInfo) has an
// undefined state, the default-constructed one, which only assignment and
// defined() accept. An operator constructor does not look at its operands, so
// `op::add(x, Var())` builds a Call holding an undefined argument; the builder
// and normalize() run this check first and report the call and the argument
// instead of reaching into the missing node. A message names the innermost
// call and the path to the handle in it: "concat: field 0 of argument 0
// (tensors) is undefined", "reshape: dim 1 of argument 1 (shape) is undefined".
//
// The walk visits what has no StructInfo yet: a node that carries one was
// built by normalisation (or by a constructor that checked it) and is not
// entered again, which keeps the check linear in the new part of a value.
// ShapeExpr and PrimValue get an annotation when they are made, so their
// values are always looked at.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "relax/ir/normalize.h"

namespace relax {
namespace {

// Where an undefined handle was found: "dim 1 of argument 1 (shape)", and
// whether that path already names the call it is in (the innermost call
// names itself; the calls around it do not add their names).
struct Undefined {
  std::string where;
  bool named = false;
};
using Found = std::optional<Undefined>;

Found undefined(std::string where) { return Undefined{std::move(where), false}; }

// `found` in part `part` of a value: "<path> of <part>", or "<part>" for the
// part itself (a call's own name stays in front).
Found in_part(Found found, const std::string& part) {
  if (!found || found->named) return found;
  found->where = found->where.empty() ? part : found->where + " of " + part;
  return found;
}

std::string call_name(const CallNode& call) {
  if (const auto* op = call.callee.as<OpNode>()) return op->name;
  if (const auto* g = call.callee.as<GlobalVarNode>()) return "call to `" + g->name + "`";
  if (const auto* v = call.callee.as<VarNode>()) return "call to `" + v->name_hint + "`";
  if (const auto* e = call.callee.as<ExternFuncNode>()) return "call to `" + e->symbol + "`";
  return "call";
}

Found check_dims(const std::vector<SymExpr>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i].defined()) return undefined("dim " + std::to_string(i));
  }
  return std::nullopt;
}

Found check_sinfo(const StructInfo& sinfo) {
  if (!sinfo.defined()) return undefined("");
  switch (sinfo.kind()) {
    case StructInfoKind::kTensor: {
      const auto* t = sinfo.as<TensorStructInfoNode>();
      return t->shape ? check_dims(*t->shape) : std::nullopt;
    }
    case StructInfoKind::kShape: {
      const auto* s = sinfo.as<ShapeStructInfoNode>();
      return s->values ? check_dims(*s->values) : std::nullopt;
    }
    case StructInfoKind::kTuple: {
      const auto& fields = sinfo.as<TupleStructInfoNode>()->fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (Found f = check_sinfo(fields[i])) return in_part(f, "field " + std::to_string(i));
      }
      return std::nullopt;
    }
    case StructInfoKind::kFunc: {
      const auto* fn = sinfo.as<FuncStructInfoNode>();
      if (fn->params) {
        for (size_t i = 0; i < fn->params->size(); ++i) {
          if (Found f = check_sinfo((*fn->params)[i])) {
            return in_part(f, "parameter " + std::to_string(i));
          }
        }
      }
      return in_part(check_sinfo(fn->ret), "the return annotation");
    }
    default:
      return std::nullopt;
  }
}

// The path of an undefined handle in `e`, relative to `e` ("" for `e` itself).
Found check_expr(const Expr& e);

Found check_call(const CallNode& call) {
  const std::string name = call_name(call);
  Found found;
  if (!call.callee.defined()) {
    found = undefined("the callee");
  } else {
    found = in_part(check_expr(call.callee), "the callee");
  }
  for (size_t i = 0; !found && i < call.args.size(); ++i) {
    const std::string role = arg_role(call, i);
    std::string arg = "argument " + std::to_string(i);
    if (role != arg) arg += " (" + role + ")";
    found = in_part(check_expr(call.args[i]), arg);
  }
  for (size_t i = 0; !found && i < call.sinfo_args.size(); ++i) {
    found = in_part(check_sinfo(call.sinfo_args[i]), "annotation argument " + std::to_string(i));
  }
  for (auto it = call.attrs.begin(); !found && it != call.attrs.end(); ++it) {
    const auto* list = std::get_if<std::vector<SymExpr>>(&it->second);
    if (list == nullptr) continue;
    for (size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].defined()) {
        found = undefined("element " + std::to_string(i) + " of attribute `" + it->first + "`");
        break;
      }
    }
  }
  if (found && !found->named) {
    found->where = name + ": " + found->where;
    found->named = true;
  }
  return found;
}

Found check_expr(const Expr& e) {
  if (!e.defined()) return undefined("");
  switch (e.kind()) {
    case ExprKind::kShapeExpr:
      return check_dims(e.as<ShapeExprNode>()->values);
    case ExprKind::kPrimValue:
      if (!e.as<PrimValueNode>()->value.defined()) return undefined("the value");
      return std::nullopt;
    default:
      break;
  }
  if (e.struct_info().defined()) return std::nullopt;
  switch (e.kind()) {
    case ExprKind::kCall:
      return check_call(*e.as<CallNode>());
    case ExprKind::kTuple: {
      const auto& fields = e.as<TupleNode>()->fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (Found f = in_part(check_expr(fields[i]), "field " + std::to_string(i))) return f;
      }
      return std::nullopt;
    }
    case ExprKind::kTupleGetItem:
      return in_part(check_expr(e.as<TupleGetItemNode>()->tuple), "the tuple");
    case ExprKind::kIf: {
      const auto* n = e.as<IfNode>();
      if (Found f = in_part(check_expr(n->cond), "the condition")) return f;
      if (Found f = in_part(check_expr(n->then_branch), "the then branch")) return f;
      return in_part(check_expr(n->else_branch), "the else branch");
    }
    case ExprKind::kSeqExpr: {
      const auto* n = e.as<SeqExprNode>();
      for (const BindingBlock& block : n->blocks) {
        for (const Binding& b : block.bindings) {
          if (!b.var.defined()) return undefined("a bound variable");
          const std::string what = "the value bound to `" + b.var.name_hint() + "`";
          if (Found f = in_part(check_expr(b.value), what)) return f;
          if (b.is_match_cast) {
            if (Found f = in_part(check_sinfo(b.cast_sinfo), "the pattern of " + what)) return f;
          }
        }
      }
      return in_part(check_expr(n->body), "the body");
    }
    case ExprKind::kFunction: {
      const auto* n = e.as<FunctionNode>();
      for (size_t i = 0; i < n->params.size(); ++i) {
        if (!n->params[i].defined()) return undefined("parameter " + std::to_string(i));
      }
      return in_part(check_expr(n->body), "the body");
    }
    default:
      return std::nullopt;
  }
}

absl::Status to_status(Found found, std::string_view what) {
  if (!found) return absl::OkStatus();
  std::string where = found->where;
  if (!found->named) where = where.empty() ? std::string(what) : where + " of " + std::string(what);
  return absl::InvalidArgumentError(where + " is undefined (a default-constructed handle)");
}

}  // namespace

absl::Status check_defined(const Expr& value, std::string_view what) {
  return to_status(check_expr(value), what);
}

absl::Status check_defined(const StructInfo& sinfo, std::string_view what) {
  return to_status(check_sinfo(sinfo), what);
}

}  // namespace relax
