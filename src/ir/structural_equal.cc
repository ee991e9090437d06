// Structural equality up to alpha-equivalence, and the first difference: the
// graph level and the public entry points (the walker is described in
// structural_equal_walker.h; its loop-level half is structural_equal_loop.cc).
#include "relax/ir/structural_equal.h"

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "structural_equal_walker.h"

namespace relax {
namespace detail {

std::string diff_text(const Expr& e) {
  if (!e.defined()) return "nothing";
  std::string kind(expr_kind_name(e.kind()));
  switch (e.kind()) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
      return kind + " " + e.as<VarNode>()->name_hint;
    case ExprKind::kGlobalVar:
      return "GlobalVar @" + e.as<GlobalVarNode>()->name;
    case ExprKind::kConstant:
      return "Constant " + e.as<ConstantNode>()->data.describe();
    case ExprKind::kCall:
      return "Call of " + diff_text(e.as<CallNode>()->callee);
    case ExprKind::kShapeExpr:
      return "ShapeExpr " + e.struct_info().to_string();
    case ExprKind::kPrimValue:
      return "PrimValue " + e.as<PrimValueNode>()->value.to_string();
    case ExprKind::kStringImm:
      return "StringImm \"" + e.as<StringImmNode>()->value + "\"";
    case ExprKind::kExternFunc:
      return "ExternFunc " + e.as<ExternFuncNode>()->symbol;
    case ExprKind::kOp:
      return "Op " + e.as<OpNode>()->name;
    default:
      return kind;
  }
}

std::string diff_text(const StructInfo& s) { return s.defined() ? s.to_string() : "nothing"; }
std::string diff_text(const SymExpr& s) { return s.defined() ? s.to_string() : "nothing"; }

std::string diff_text(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
        if constexpr (std::is_same_v<T, double>) return std::to_string(x);
        if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        if constexpr (std::is_same_v<T, std::string>) return "\"" + x + "\"";
        if constexpr (std::is_same_v<T, DataType>) return x.to_string();
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + std::to_string(x[i]);
          return s + "]";
        }
        if constexpr (std::is_same_v<T, std::vector<SymExpr>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + x[i].to_string();
          return s + "]";
        }
      },
      v);
}

bool EqualWalker::module(const IRModule& a, const IRModule& b) {
  for (const auto& [name, func] : a.functions()) {
    if (!b.contains(name)) return fail_at_function(name, "only in the first module");
  }
  for (const auto& [name, func] : b.functions()) {
    if (!a.contains(name)) return fail_at_function(name, "only in the second module");
  }
  for (const auto& [name, func] : a.functions()) {
    reset();
    path_.push_back({nullptr, -1, &name, true});
    bool same = expr(func, b.lookup(name));
    path_.pop_back();
    if (!same) return false;
  }
  reset();
  Step s(*this, "attrs");
  return attrs(a.attrs(), b.attrs());
}

bool EqualWalker::expr(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) {
    if (!a.defined() && !b.defined()) return true;
    return fail(diff_text(a) + " vs " + diff_text(b));
  }
  switch (a.kind()) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
      return var_use(a, b);
    case ExprKind::kGlobalVar:
      return a.as<GlobalVarNode>()->name == b.as<GlobalVarNode>()->name || fail_expr(a, b);
    case ExprKind::kConstant:
      return constant(a, b);
    case ExprKind::kTuple:
      return list("fields", a.as<TupleNode>()->fields, b.as<TupleNode>()->fields, "fields",
                  [&](const Expr& x, const Expr& y) { return expr(x, y); });
    case ExprKind::kTupleGetItem: {
      const auto* x = a.as<TupleGetItemNode>();
      const auto* y = b.as<TupleGetItemNode>();
      if (x->index != y->index) {
        Step s(*this, "index");
        return fail(std::to_string(x->index) + " vs " + std::to_string(y->index));
      }
      Step s(*this, "tuple");
      return expr(x->tuple, y->tuple);
    }
    case ExprKind::kCall:
      return call(*a.as<CallNode>(), *b.as<CallNode>());
    case ExprKind::kShapeExpr:
      return list("values", a.as<ShapeExprNode>()->values, b.as<ShapeExprNode>()->values, "dims",
                  [&](const SymExpr& x, const SymExpr& y) { return sym(x, y, BindMode::kUse); });
    case ExprKind::kPrimValue: {
      Step s(*this, "value");
      return sym(a.as<PrimValueNode>()->value, b.as<PrimValueNode>()->value, BindMode::kUse);
    }
    case ExprKind::kStringImm:
      return a.as<StringImmNode>()->value == b.as<StringImmNode>()->value || fail_expr(a, b);
    case ExprKind::kIf: {
      const auto* x = a.as<IfNode>();
      const auto* y = b.as<IfNode>();
      return field("cond", x->cond, y->cond) &&
             field("then_branch", x->then_branch, y->then_branch) &&
             field("else_branch", x->else_branch, y->else_branch);
    }
    case ExprKind::kSeqExpr:
      return seq(*a.as<SeqExprNode>(), *b.as<SeqExprNode>());
    case ExprKind::kFunction:
      return function(*a.as<FunctionNode>(), *b.as<FunctionNode>());
    case ExprKind::kExternFunc: {
      if (a.as<ExternFuncNode>()->symbol != b.as<ExternFuncNode>()->symbol) return fail_expr(a, b);
      Step s(*this, "struct_info");
      return sinfo(a.struct_info(), b.struct_info(), BindMode::kUse);
    }
    case ExprKind::kOp:
      return a.as<OpNode>()->name == b.as<OpNode>()->name || fail_expr(a, b);
    case ExprKind::kPrimFunc:
      return prim_func(*a.as<PrimFuncNode>(), *b.as<PrimFuncNode>());
  }
  return fail("unknown expression kind");
}

bool EqualWalker::sinfo(const StructInfo& a, const StructInfo& b, BindMode mode) {
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) {
    if (!a.defined() && !b.defined()) return true;
    return fail(diff_text(a) + " vs " + diff_text(b));
  }
  switch (a.kind()) {
    case StructInfoKind::kObject:
      return true;
    case StructInfoKind::kPrim: {
      const auto* x = a.as<PrimStructInfoNode>();
      const auto* y = b.as<PrimStructInfoNode>();
      return (x->dtype == y->dtype && sym_inner(x->value, y->value, mode)) || fail_sinfo(a, b);
    }
    case StructInfoKind::kShape: {
      const auto* x = a.as<ShapeStructInfoNode>();
      const auto* y = b.as<ShapeStructInfoNode>();
      return (x->ndim == y->ndim && dims(x->values, y->values, mode)) || fail_sinfo(a, b);
    }
    case StructInfoKind::kTensor: {
      const auto* x = a.as<TensorStructInfoNode>();
      const auto* y = b.as<TensorStructInfoNode>();
      return (x->ndim == y->ndim && x->dtype == y->dtype && x->device == y->device &&
              dims(x->shape, y->shape, mode)) ||
             fail_sinfo(a, b);
    }
    case StructInfoKind::kTuple:
      return list("fields", a.as<TupleStructInfoNode>()->fields,
                  b.as<TupleStructInfoNode>()->fields, "fields",
                  [&](const StructInfo& x, const StructInfo& y) { return sinfo(x, y, mode); });
    case StructInfoKind::kFunc: {
      const auto* x = a.as<FuncStructInfoNode>();
      const auto* y = b.as<FuncStructInfoNode>();
      if (x->params.has_value() != y->params.has_value() || x->pure != y->pure) {
        return fail_sinfo(a, b);
      }
      // A Func annotation's parameters bind their own variables.
      if (x->params) {
        prebind(detail::binding_sym_vars(*x->params), detail::binding_sym_vars(*y->params));
      }
      if (x->params && !list("params", *x->params, *y->params, "parameters",
                             [&](const StructInfo& p, const StructInfo& q) {
                               return sinfo(p, q, BindMode::kDefine);
                             })) {
        return false;
      }
      Step s(*this, "ret");
      return sinfo(x->ret, y->ret, BindMode::kUse);
    }
  }
  return fail("unknown annotation kind");
}

bool EqualWalker::sym(const SymExpr& a, const SymExpr& b, BindMode mode) {
  if (sym_inner(a, b, mode)) return true;
  std::string note;
  if (a.defined() && b.defined() && a.to_string() == b.to_string()) {
    note = " (different variables)";
  }
  return fail(diff_text(a) + " vs " + diff_text(b) + note);
}

std::string EqualWalker::path_text() const {
  std::string out;
  for (const PathStep& p : path_) {
    if (p.is_function) {
      out += "@" + *p.key;
      continue;
    }
    if (p.field != nullptr) {
      if (!out.empty()) out += ".";
      out += p.field;
    }
    if (p.index >= 0) out += "[" + std::to_string(p.index) + "]";
    if (p.key != nullptr && !p.is_function) out += "[\"" + *p.key + "\"]";
  }
  return out.empty() ? "<root>" : out;
}

bool EqualWalker::dims(const std::optional<std::vector<SymExpr>>& a,
                       const std::optional<std::vector<SymExpr>>& b, BindMode mode) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->size() != b->size()) return false;
  for (size_t i = 0; i < a->size(); ++i) {
    if (!sym_inner((*a)[i], (*b)[i], mode)) return false;
  }
  return true;
}

bool EqualWalker::var_use(const Expr& a, const Expr& b) {
  auto it = var_fwd_.find(a.get());
  bool same =
      it != var_fwd_.end() ? it->second == b.get() : !var_bwd_.contains(b.get()) && a.same_as(b);
  if (same) return true;
  bool same_name = a.as<VarNode>()->name_hint == b.as<VarNode>()->name_hint;
  return fail(diff_text(a) + " vs " + diff_text(b) + (same_name ? " (different variables)" : ""));
}

bool EqualWalker::var_def(const Var& a, const Var& b, BindMode annotation_mode) {
  if (a.kind() != b.kind()) return fail_expr(a, b);
  {
    Step s(*this, "struct_info");
    if (!sinfo(a.struct_info(), b.struct_info(), annotation_mode)) return false;
  }
  auto it = var_fwd_.find(a.get());
  if (it != var_fwd_.end()) return it->second == b.get() || fail_expr(a, b);
  if (var_bwd_.contains(b.get())) return fail_expr(a, b);
  var_fwd_[a.get()] = b.get();
  var_bwd_[b.get()] = a.get();
  return true;
}

void EqualWalker::prebind(const std::vector<SymVar>& a, const std::vector<SymVar>& b) {
  if (a.size() != b.size()) return;
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t x = a[i].id();
    uint64_t y = b[i].id();
    if (sym_fwd_.contains(x) || sym_bwd_.contains(y)) continue;
    sym_fwd_[x] = y;
    sym_bwd_[y] = x;
  }
}

bool EqualWalker::sym_var(const SymExpr& a, const SymExpr& b, BindMode mode) {
  uint64_t x = SymVar::from_expr(a).id();
  uint64_t y = SymVar::from_expr(b).id();
  auto it = sym_fwd_.find(x);
  if (it != sym_fwd_.end()) return it->second == y;
  if (sym_bwd_.contains(y)) return false;
  if (mode == BindMode::kUse) return x == y;
  sym_fwd_[x] = y;
  sym_bwd_[y] = x;
  return true;
}

bool EqualWalker::sym_inner(const SymExpr& a, const SymExpr& b, BindMode mode) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  if (a.kind() == SymKind::kVar) return sym_var(a, b, mode);
  // value() is the constant, float bits or intrinsic: the node's whole payload.
  if (a->value() != b->value() || a.num_operands() != b.num_operands()) return false;
  if (a.kind() == SymKind::kBufferLoad && !same_buffer(a->buffer_node(), b->buffer_node())) {
    return false;
  }
  for (size_t i = 0; i < a.num_operands(); ++i) {
    if (!sym_inner(a.operand(i), b.operand(i), BindMode::kUse)) return false;
  }
  return true;
}

bool EqualWalker::same_buffer(const BufferNode* a, const BufferNode* b) const {
  auto it = buf_fwd_.find(a);
  return it != buf_fwd_.end() ? it->second == b : !buf_bwd_.contains(b) && a == b;
}

bool EqualWalker::constant(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  const runtime::Tensor& x = a.as<ConstantNode>()->data;
  const runtime::Tensor& y = b.as<ConstantNode>()->data;
  if (x.dtype() != y.dtype() || x.shape() != y.shape()) return fail_expr(a, b);
  std::optional<std::string> bx = detail::host_bytes(x);
  std::optional<std::string> by = detail::host_bytes(y);
  bool same = (bx && by) ? *bx == *by : x.same_storage(y);
  return same || fail(diff_text(a) + " vs " + diff_text(b) + " (different values)");
}

bool EqualWalker::attr_value(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a)) {
    return detail::double_bits(*x) == detail::double_bits(std::get<double>(b));
  }
  if (const auto* x = std::get_if<std::vector<SymExpr>>(&a)) {
    const auto& y = std::get<std::vector<SymExpr>>(b);
    if (x->size() != y.size()) return false;
    for (size_t i = 0; i < x->size(); ++i) {
      if (!sym_inner((*x)[i], y[i], BindMode::kUse)) return false;
    }
    return true;
  }
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<SymExpr>> || std::is_same_v<T, double>) {
          return false;  // handled above
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

bool EqualWalker::attrs(const Attrs& a, const Attrs& b) {
  auto x = a.begin();
  auto y = b.begin();
  for (; x != a.end() && y != b.end(); ++x, ++y) {
    if (x->first != y->first) {
      return fail("attribute `" + x->first + "` vs attribute `" + y->first + "`");
    }
    if (!attr_value(x->second, y->second)) {
      Step s(*this, nullptr, -1, &x->first);
      return fail(diff_text(x->second) + " vs " + diff_text(y->second));
    }
  }
  if (x != a.end()) return fail("attribute `" + x->first + "` only in the first");
  if (y != b.end()) return fail("attribute `" + y->first + "` only in the second");
  return true;
}

bool EqualWalker::call(const CallNode& a, const CallNode& b) {
  if (!field("callee", a.callee, b.callee)) return false;
  if (!list("args", a.args, b.args, "arguments",
            [&](const Expr& x, const Expr& y) { return expr(x, y); })) {
    return false;
  }
  {
    Step s(*this, "attrs");
    if (!attrs(a.attrs, b.attrs)) return false;
  }
  return list(
      "sinfo_args", a.sinfo_args, b.sinfo_args, "annotations",
      [&](const StructInfo& x, const StructInfo& y) { return sinfo(x, y, BindMode::kUse); });
}

bool EqualWalker::binding(const Binding& a, const Binding& b) {
  if (a.is_match_cast != b.is_match_cast) {
    return fail(std::string(a.is_match_cast ? "match_cast" : "binding") + " of " +
                a.var.name_hint() + " vs " + (b.is_match_cast ? "match_cast" : "binding") + " of " +
                b.var.name_hint());
  }
  if (!field("value", a.value, b.value)) return false;
  if (a.is_match_cast) {
    prebind(detail::binding_sym_vars({a.cast_sinfo}), detail::binding_sym_vars({b.cast_sinfo}));
    Step s(*this, "pattern");
    if (!sinfo(a.cast_sinfo, b.cast_sinfo, BindMode::kDefine)) return false;
  }
  Step s(*this, "var");
  return var_def(a.var, b.var, BindMode::kUse);
}

bool EqualWalker::seq(const SeqExprNode& a, const SeqExprNode& b) {
  bool blocks_same = list(
      "blocks", a.blocks, b.blocks, "blocks", [&](const BindingBlock& x, const BindingBlock& y) {
        if (x.is_dataflow != y.is_dataflow) {
          return fail(std::string(x.is_dataflow ? "dataflow block" : "binding block") + " vs " +
                      (y.is_dataflow ? "dataflow block" : "binding block"));
        }
        return list("bindings", x.bindings, y.bindings, "bindings",
                    [&](const Binding& p, const Binding& q) { return binding(p, q); });
      });
  return blocks_same && field("body", a.body, b.body);
}

bool EqualWalker::function(const FunctionNode& a, const FunctionNode& b) {
  prebind(detail::binding_sym_vars(a.params), detail::binding_sym_vars(b.params));
  if (!list("params", a.params, b.params, "parameters",
            [&](const Var& x, const Var& y) { return var_def(x, y, BindMode::kDefine); })) {
    return false;
  }
  if (!list("upper_bounds", a.upper_bounds, b.upper_bounds, "bounds",
            [&](const SymBound& x, const SymBound& y) {
              if (x.upper != y.upper) {
                return fail(std::to_string(x.upper) + " vs " + std::to_string(y.upper));
              }
              return sym(x.var, y.var, BindMode::kUse);
            })) {
    return false;
  }
  {
    Step s(*this, "attrs");
    if (!attrs(a.attrs, b.attrs)) return false;
  }
  if (a.pure != b.pure) {
    Step s(*this, "pure");
    return fail(std::string(a.pure ? "pure" : "impure") + " vs " + (b.pure ? "pure" : "impure"));
  }
  {
    Step s(*this, "ret");
    if (!sinfo(a.ret, b.ret, BindMode::kUse)) return false;
  }
  return field("body", a.body, b.body);
}

}  // namespace detail

using detail::BindMode;
using detail::EqualWalker;

bool structural_equal(const Expr& a, const Expr& b) { return EqualWalker().expr(a, b); }
bool structural_equal(const Stmt& a, const Stmt& b) { return EqualWalker().stmt(a, b); }
bool structural_equal(const StructInfo& a, const StructInfo& b) {
  return EqualWalker().sinfo(a, b, BindMode::kUse);
}
bool structural_equal(const IRModule& a, const IRModule& b) { return EqualWalker().module(a, b); }

bool structural_equal(const SymExpr& a, const SymExpr& b, const SymVarMap<SymVar>& a_to_b) {
  EqualWalker walker;
  walker.seed(a_to_b);
  return walker.sym(a, b, BindMode::kUse);
}

std::optional<std::string> first_difference(const IRModule& a, const IRModule& b) {
  EqualWalker walker;
  walker.module(a, b);
  return walker.difference();
}

std::optional<std::string> first_difference(const Expr& a, const Expr& b) {
  EqualWalker walker;
  walker.expr(a, b);
  return walker.difference();
}

std::optional<std::string> first_difference(const Stmt& a, const Stmt& b) {
  EqualWalker walker;
  walker.stmt(a, b);
  return walker.difference();
}

std::optional<std::string> first_difference(const StructInfo& a, const StructInfo& b) {
  EqualWalker walker;
  walker.sinfo(a, b, BindMode::kUse);
  return walker.difference();
}

}  // namespace relax
