// Matching patterns against graph-level expressions.
//
// The matcher is a backtracking search written in continuation-passing style:
// match_node(p, e, k) matches p against e and then calls k, the rest of the
// match; when k fails, the choices made inside p (which branch of an
// alternative) are revisited before giving up. So `(a | b)` followed by a
// sibling that only fits b's symbolic values still matches, and an argument
// list is one chain of continuations. Every function leaves the state
// (captures, symbolic values, the bindings looked through) as it found it when
// it returns false, so no snapshots are needed.
//
// Looking through bindings is done where a pattern needs structure (a call, a
// tuple, a constant, ...): a DataflowVar that the block binds is replaced by
// its value, recursively. Wildcards, var patterns and captures see the
// expression as written. The declarative constraints check the expression as
// written too, before the pattern under them (they are cheap filters): its
// annotation is the bound value's (a binding's variable carries its value's
// StructInfo), and attribute constraints peek through to the call.
//
// The matched node. Every pattern, the moment it has matched, stores the node
// it matched in `matched_` and then calls its continuation: a structural
// pattern the value it looked through to (the Call, not the DataflowVar), a
// wildcard, var or param pattern the expression as written; alternatives,
// constraints and captures pass on their child's. A `.where` predicate runs in
// the continuation of the pattern under it -- after that structure matched,
// with its matched node -- so it never sees a node whose structure failed; a
// capture records the matched node beside the expression as written
// (Match::matched).
//
// Symbolic dims (has_shape): the constraint's SymVars are pattern variables,
// bound by solving each dim for the one still unbound variable
// (relax/shape/solve.h) when the division is provably exact, then every dim is
// proven equal with the Analyzer, which knows that the actual tensor's bare
// dims are >= 0.
#include <utility>

#include "transform/pattern/pattern_impl.h"
#include "relax/ir/op.h"
#include "relax/ir/struct_info.h"
#include "relax/shape/solve.h"
#include "relax/support/check.h"

namespace relax::transform {
namespace {

bool attr_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* da = std::get_if<std::vector<SymExpr>>(&a)) {
    const auto& db = std::get<std::vector<SymExpr>>(b);
    if (da->size() != db.size()) return false;
    for (size_t i = 0; i < da->size(); ++i) {
      if (!structural_equal((*da)[i], db[i])) return false;
    }
    return true;
  }
  return std::visit(
      [&](const auto& va) {
        using T = std::decay_t<decltype(va)>;
        if constexpr (std::is_same_v<T, std::vector<SymExpr>>) {
          return false;  // handled above
        } else {
          return va == std::get<T>(b);
        }
      },
      a);
}

// The dims of a Tensor or Shape annotation, when known.
const std::optional<std::vector<SymExpr>>* dims_of(const StructInfo& sinfo) {
  if (const auto* t = sinfo.as<TensorStructInfoNode>()) return &t->shape;
  if (const auto* s = sinfo.as<ShapeStructInfoNode>()) return &s->values;
  return nullptr;
}

}  // namespace

LookThrough look_through_bindings(const BindingBlock& block) {
  LookThrough out;
  for (const Binding& b : block.bindings) {
    if (b.is_match_cast || !b.var.is_dataflow()) continue;
    if (const auto* call = b.value.as<CallNode>(); call != nullptr && !is_pure_call(*call)) continue;
    out.emplace(b.var.get(), b.value);
  }
  return out;
}

std::optional<Match> Matcher::match(const Pattern& pattern, const Expr& expr,
                                    const Var& binding_var, IRModule* module) {
  RELAX_CHECK(captures_.empty() && matched_captures_.empty() && syms_.empty() && looked_through_.empty());
  if (!match_node(pattern.node(), expr, [] { return true; })) return std::nullopt;
  Match m;
  m.expr_ = expr;
  m.binding_var_ = binding_var;
  m.module_ = module;
  m.captures_ = std::move(captures_);
  m.matched_ = std::move(matched_captures_);
  m.syms_ = std::move(syms_);
  m.looked_through_ = std::move(looked_through_);
  captures_.clear();
  matched_captures_.clear();
  syms_.clear();
  looked_through_.clear();
  return m;
}

Expr Matcher::peek(const Expr& e) const {
  Expr cur = e;
  while (bindings_ != nullptr && cur.kind() == ExprKind::kDataflowVar) {
    auto it = bindings_->find(cur.get());
    if (it == bindings_->end()) break;
    cur = it->second;
  }
  return cur;
}

Expr Matcher::resolve(const Expr& e) {
  Expr cur = e;
  while (bindings_ != nullptr && cur.kind() == ExprKind::kDataflowVar) {
    auto it = bindings_->find(cur.get());
    if (it == bindings_->end()) break;
    looked_through_.push_back(Var::from_expr(cur));
    cur = it->second;
  }
  return cur;
}

bool Matcher::match_node(const PatternNode& p, const Expr& e, Cont k) {
  if (!e.defined()) return false;
  // The continuation of a pattern that matched `node` (see "The matched node").
  auto matched = [&](const Expr& node) {
    matched_ = node;
    return k();
  };
  switch (p.kind) {
    case PatternKind::kWildcard:
      return matched(e);
    case PatternKind::kExpr:
      return e.same_as(p.expr) && matched(e);
    case PatternKind::kVar: {
      const auto* var = e.as<VarNode>();
      return var != nullptr && (p.name.empty() || var->name_hint == p.name) && matched(e);
    }
    case PatternKind::kParam:
      return params_ != nullptr && params_->contains(e.get()) && matched(e);
    case PatternKind::kAlt:
      return match_node(p.children[0].node(), e, k) || match_node(p.children[1].node(), e, k);
    case PatternKind::kConstraint:
      if (p.constraint.kind == ConstraintKind::kWhere) {
        // After the structure under it, on the node that structure matched.
        return match_node(p.children[0].node(), e, [&] {
          const Expr node = matched_;
          if (!p.constraint.where(node)) return false;
          matched_ = node;  // for the patterns around this one
          return k();
        });
      }
      return match_constraint(p.constraint, e, [&] { return match_node(p.children[0].node(), e, k); });
    case PatternKind::kCapture: {
      auto it = captures_.find(p.name);
      if (it != captures_.end()) {
        return it->second.same_as(e) && match_node(p.children[0].node(), e, k);
      }
      captures_.emplace(p.name, e);
      const bool ok = match_node(p.children[0].node(), e, [&] {
        matched_captures_.insert_or_assign(p.name, matched_);
        if (k()) return true;
        matched_captures_.erase(p.name);
        return false;
      });
      if (!ok) captures_.erase(p.name);
      return ok;
    }
    default:
      break;
  }

  // The structural kinds look through bindings.
  const size_t looked = looked_through_.size();
  const Expr v = resolve(e);
  auto k_matched = [&] { return matched(v); };
  const Cont k_v = k_matched;
  bool ok = false;
  switch (p.kind) {
    case PatternKind::kConstant: {
      const auto* c = v.as<ConstantNode>();
      ok = c != nullptr && (p.const_pred == nullptr || p.const_pred(c->data)) && k_v();
      break;
    }
    case PatternKind::kOp: {
      const auto* op = v.as<OpNode>();
      ok = op != nullptr && op->name == p.name && k_v();
      break;
    }
    case PatternKind::kCall: {
      const auto* call = v.as<CallNode>();
      if (call == nullptr || call->args.size() + 1 != p.children.size() || !is_pure_call(*call)) {
        break;
      }
      ok = match_node(p.children[0].node(), call->callee,
                      [&] { return match_list(p.children, 1, call->args, 0, k_v); });
      break;
    }
    case PatternKind::kCallTir: {
      const auto* call = v.as<CallNode>();
      const auto* op = call != nullptr ? call->callee.as<OpNode>() : nullptr;
      if (op == nullptr || op->name != "call_tir" || call->args.size() < 2) break;
      const auto* gvar = call->args[0].as<GlobalVarNode>();
      if (gvar == nullptr || gvar->name != p.name) break;
      if (p.any_args) {
        ok = k_v();
        break;
      }
      const auto* tuple = resolve(call->args[1]).as<TupleNode>();
      ok = tuple != nullptr && tuple->fields.size() == p.children.size() &&
           match_list(p.children, 0, tuple->fields, 0, k_v);
      break;
    }
    case PatternKind::kTuple: {
      const auto* tuple = v.as<TupleNode>();
      ok = tuple != nullptr && tuple->fields.size() == p.children.size() &&
           match_list(p.children, 0, tuple->fields, 0, k_v);
      break;
    }
    case PatternKind::kTupleGetItem: {
      const auto* item = v.as<TupleGetItemNode>();
      ok = item != nullptr && item->index == p.index &&
           match_node(p.children[0].node(), item->tuple, k_v);
      break;
    }
    default:
      RELAX_CHECK(false) << "unhandled pattern kind " << static_cast<int>(p.kind);
  }
  if (!ok) looked_through_.resize(looked);
  return ok;
}

bool Matcher::match_list(const std::vector<Pattern>& patterns, size_t first,
                         const std::vector<Expr>& exprs, size_t offset, Cont k) {
  if (first == patterns.size()) return k();
  return match_node(patterns[first].node(), exprs[offset],
                    [&] { return match_list(patterns, first + 1, exprs, offset + 1, k); });
}

bool Matcher::match_constraint(const Constraint& c, const Expr& e, Cont k) {
  const StructInfo& sinfo = e.struct_info();
  switch (c.kind) {
    case ConstraintKind::kDtype: {
      if (!sinfo.defined()) return false;
      if (const auto* t = sinfo.as<TensorStructInfoNode>()) return t->dtype == c.dtype && k();
      if (const auto* p = sinfo.as<PrimStructInfoNode>()) return p->dtype == c.dtype && k();
      return false;
    }
    case ConstraintKind::kRank: {
      if (!sinfo.defined()) return false;
      if (const auto* t = sinfo.as<TensorStructInfoNode>()) return t->ndim == c.ndim && k();
      if (const auto* s = sinfo.as<ShapeStructInfoNode>()) return s->ndim == c.ndim && k();
      return false;
    }
    case ConstraintKind::kShape: {
      if (!sinfo.defined()) return false;
      const std::optional<std::vector<SymExpr>>* dims = dims_of(sinfo);
      if (dims == nullptr || !dims->has_value()) return false;
      return match_shape(c.dims, **dims, k);
    }
    case ConstraintKind::kAttr:
    case ConstraintKind::kLacksAttr: {
      const auto* call = peek(e).as<CallNode>();
      if (call == nullptr) return false;
      auto it = call->attrs.find(c.key);
      if (c.kind == ConstraintKind::kLacksAttr) return it == call->attrs.end() && k();
      return it != call->attrs.end() && attr_equal(it->second, c.value) && k();
    }
    case ConstraintKind::kWhere:
      RELAX_CHECK(false) << "a where constraint runs after its pattern (match_node)";
      return false;
  }
  return false;
}

bool Matcher::match_shape(const std::vector<SymExpr>& pattern, const std::vector<SymExpr>& actual,
                          Cont k) {
  if (pattern.size() != actual.size()) return false;
  // Dims are int64 in a well-formed module; anything else is not matched.
  for (const SymExpr& d : actual) {
    if (!d.defined() || d.dtype() != DataType::int64()) return false;
  }
  // The actual dims that are bare variables are sizes: >= 0.
  for (const SymExpr& d : actual) {
    if (d.is_var()) analyzer_.bind(SymVar::from_expr(d), 0);
  }
  // This constraint's pattern variables that are still unbound.
  SymVarMap<bool> unbound;
  for (const SymExpr& d : pattern) {
    for_each_var(d, [&](const SymVar& v) {
      if (!syms_.contains(v)) unbound.emplace(v, true);
    });
  }
  std::vector<SymVar> newly;
  auto undo = [&] {
    for (const SymVar& v : newly) syms_.erase(v);
    return false;
  };
  auto known = [&](const SymVar& v) { return !unbound.contains(v); };
  // Solve dims for one unbound variable each until nothing changes.
  for (bool progress = true; progress && !unbound.empty();) {
    progress = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
      std::optional<LinearSolution> sol = solve_linear(substitute(pattern[i], syms_), known);
      if (!sol) continue;
      SymExpr diff = actual[i] - sol->rest;
      if (!analyzer_.prove(floormod(diff, sol->coeff) == 0)) continue;
      syms_.emplace(sol->var, analyzer_.simplify(floordiv(diff, sol->coeff)));
      unbound.erase(sol->var);
      newly.push_back(sol->var);
      progress = true;
    }
  }
  if (!unbound.empty()) return undo();
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (!analyzer_.prove_equal(substitute(pattern[i], syms_), actual[i])) return undo();
  }
  return k() || undo();
}

}  // namespace relax::transform
