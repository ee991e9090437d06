// Structural equality up to alpha-equivalence, and the first difference: the
// walker's entry points per node family and the public functions (the walker
// is described in structural_equal_walker.h, the fields it compares in
// structural_fields.h).
#include "relax/ir/structural_equal.h"

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "relax/ir/functor.h"
#include "ir/structural/structural_equal_walker.h"

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

std::string diff_text(const Stmt& s) {
  if (!s.defined()) return "nothing";
  switch (s.kind()) {
    case StmtKind::kFor:
      return "For " + s.as<ForNode>()->loop_var.name();
    case StmtKind::kSeq:
      return "Seq";
    case StmtKind::kBufferStore:
      return "BufferStore " + s.as<BufferStoreNode>()->buffer.name();
    case StmtKind::kIfThenElse:
      return "IfThenElse";
    case StmtKind::kLetStmt:
      return "LetStmt " + s.as<LetStmtNode>()->var.name();
    case StmtKind::kAllocate:
      return "Allocate " + s.as<AllocateNode>()->buffer.name();
    case StmtKind::kEvaluate:
      return "Evaluate";
    case StmtKind::kBlock:
      return "Block " + s.as<BlockNode>()->name;
    case StmtKind::kExternCall:
      return "ExternCall " + s.as<ExternCallNode>()->name;
  }
  return "?";
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
  return dispatch_expr(a,
                       [&](const auto& x) {
                         using Node = std::decay_t<decltype(x)>;
                         return reduce_fields(*this, x, static_cast<const Node&>(*b.get()));
                       }) ||
         whole(a, b);
}

bool EqualWalker::stmt(const Stmt& a, const Stmt& b) {
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) {
    if (!a.defined() && !b.defined()) return true;
    return fail(diff_text(a) + " vs " + diff_text(b));
  }
  return dispatch_stmt(a,
                       [&](const auto& x) {
                         using Node = std::decay_t<decltype(x)>;
                         return reduce_fields(*this, x, static_cast<const Node&>(*b.get()));
                       }) ||
         whole(a, b);
}

bool EqualWalker::sinfo(const StructInfo& a, const StructInfo& b, BindMode mode) {
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) {
    if (!a.defined() && !b.defined()) return true;
    return fail(diff_text(a) + " vs " + diff_text(b));
  }
  return dispatch_struct_info(a,
                              [&](const auto& x) {
                                using Node = std::decay_t<decltype(x)>;
                                return reduce_fields(*this, x, static_cast<const Node&>(*b.get()),
                                                     mode);
                              }) ||
         whole(a, b);
}

bool EqualWalker::sym(const SymExpr& a, const SymExpr& b, BindMode mode) {
  if (dim(a, b, mode)) return true;
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

bool EqualWalker::use_var(const VarNode& a, const VarNode& b) {
  auto it = var_fwd_.find(&a);
  bool same = it != var_fwd_.end() ? it->second == &b : !var_bwd_.contains(&b) && &a == &b;
  if (same) return true;
  return fail(std::string(expr_kind_name(a.kind())) + " " + a.name_hint + " vs " +
              std::string(expr_kind_name(b.kind())) + " " + b.name_hint +
              (a.name_hint == b.name_hint ? " (different variables)" : ""));
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

bool EqualWalker::constant(const ConstantNode& a, const ConstantNode& b) {
  if (&a == &b) return true;
  const runtime::Tensor& x = a.data;
  const runtime::Tensor& y = b.data;
  if (x.dtype() != y.dtype() || x.shape() != y.shape()) return false;
  std::optional<std::string> bx = host_bytes(x);
  std::optional<std::string> by = host_bytes(y);
  bool same = (bx && by) ? *bx == *by : x.same_storage(y);
  return same ||
         fail("Constant " + x.describe() + " vs Constant " + y.describe() + " (different values)");
}

bool EqualWalker::attrs(const Attrs& a, const Attrs& b) {
  auto x = a.begin();
  auto y = b.begin();
  for (; x != a.end() && y != b.end(); ++x, ++y) {
    if (x->first != y->first) {
      return fail("attribute `" + x->first + "` vs attribute `" + y->first + "`");
    }
    if (!reduce_attr_value(*this, x->second, y->second)) {
      Step s(*this, nullptr, -1, &x->first);
      return fail(diff_text(x->second) + " vs " + diff_text(y->second));
    }
  }
  if (x != a.end()) return fail("attribute `" + x->first + "` only in the first");
  if (y != b.end()) return fail("attribute `" + y->first + "` only in the second");
  return true;
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
