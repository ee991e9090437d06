// Concrete evaluation, substitution and variable traversal of SymExpr.
//
// evaluate() is what runtime shape checks run, so it is a plain recursive walk
// that allocates nothing on success; error messages (which print the tree) are
// built only on failure. Arithmetic is checked int64 arithmetic: an overflow
// is an error, never a wrapped value. Division rounds toward negative infinity.
//
// `&&`, `||` and select evaluate lazily, as in C: the branch not taken is not
// evaluated, so `n > 0 && floordiv(m, n) > 2` and `select(n == 0, 0, floordiv(m, n))`
// are fine for n == 0.
#include <array>
#include <cstdlib>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "relax/shape/sym_expr.h"
#include "int_math.h"
#include "relax/support/check.h"

namespace relax {
namespace {

/// Reached only for a kind added to SymKind but not to the evaluator: a bug in relax.
[[noreturn]] void unhandled_kind(SymKind kind) {
  RELAX_CHECK(false) << "evaluate: unexpected " << sym_kind_name(kind) << " node";
  std::abort();
}

class Evaluator {
 public:
  Evaluator(const SymExpr& root, const SymVarMap<int64_t>& bindings)
      : root_(root), bindings_(bindings) {}

  absl::StatusOr<int64_t> run() {
    const int64_t value = eval(root_);
    if (!status_.ok()) return status_;
    return value;
  }

 private:
  /// The value of `e`; on an error, records it in status_ and returns 0.
  int64_t eval(const SymExpr& e) {
    const SymExprNode& node = *e;
    switch (node.kind()) {
      case SymKind::kIntImm:
        return node.value();
      case SymKind::kVar:
        return lookup(e);
      case SymKind::kNot:
        return eval(node.operand(0)) == 0 ? 1 : 0;
      case SymKind::kAnd:
        // The right side counts only when the left one does not decide.
        if (eval(node.operand(0)) == 0 || failed()) return 0;
        return eval(node.operand(1)) != 0 ? 1 : 0;
      case SymKind::kOr:
        if (eval(node.operand(0)) != 0) return failed() ? 0 : 1;
        return eval(node.operand(1)) != 0 ? 1 : 0;
      case SymKind::kSelect: {
        const bool cond = eval(node.operand(0)) != 0;
        if (failed()) return 0;
        return eval(node.operand(cond ? 1 : 2));
      }
      default:
        break;
    }
    const int64_t a = eval(node.operand(0));
    if (failed()) return 0;
    const int64_t b = eval(node.operand(1));
    if (failed()) return 0;
    return binary(e, a, b);
  }

  bool failed() const { return !status_.ok(); }

  int64_t lookup(const SymExpr& e) {
    auto it = bindings_.find(SymVar::from_expr(e));
    if (it == bindings_.end()) return unbound(e);
    return it->second;
  }

  /// Applies an arithmetic or comparison node to its operands' values.
  int64_t binary(const SymExpr& e, int64_t a, int64_t b) {
    int64_t result = 0;
    switch (e.kind()) {
      case SymKind::kAdd:
        if (__builtin_add_overflow(a, b, &result)) return overflow(e, a, b);
        return result;
      case SymKind::kSub:
        if (__builtin_sub_overflow(a, b, &result)) return overflow(e, a, b);
        return result;
      case SymKind::kMul:
        if (__builtin_mul_overflow(a, b, &result)) return overflow(e, a, b);
        return result;
      case SymKind::kFloorDiv:
        if (b == 0) return by_zero(e, "division");
        if (a == INT64_MIN && b == -1) return overflow(e, a, b);
        result = shape_detail::floor_div(a, b);
        return result;
      case SymKind::kFloorMod:
        if (b == 0) return by_zero(e, "modulo");
        return shape_detail::floor_mod(a, b);
      case SymKind::kMin:
        return a < b ? a : b;
      case SymKind::kMax:
        return a > b ? a : b;
      case SymKind::kEQ:
        return a == b;
      case SymKind::kNE:
        return a != b;
      case SymKind::kLT:
        return a < b;
      case SymKind::kLE:
        return a <= b;
      case SymKind::kGT:
        return a > b;
      case SymKind::kGE:
        return a >= b;
      default:
        break;
    }
    unhandled_kind(e.kind());
  }

  [[gnu::noinline, gnu::cold]] int64_t unbound(const SymExpr& var) {
    return fail(
        absl::StrCat("unbound symbolic variable `", var->name(), "` in `", to_string(root_), "`"));
  }

  [[gnu::noinline, gnu::cold]] int64_t by_zero(const SymExpr& e, const char* what) {
    return fail(absl::StrCat(what, " by zero in `", to_string(e), "`"));
  }

  [[gnu::noinline, gnu::cold]] int64_t overflow(const SymExpr& e, int64_t a, int64_t b) {
    const SymKind kind = e.kind();
    const std::string values = kind == SymKind::kFloorDiv
                                   ? absl::StrCat("floordiv(", a, ", ", b, ")")
                                   : absl::StrCat(a, " ", std::string(sym_kind_name(kind)), " ", b);
    return fail(absl::StrCat("int64 overflow in `", to_string(e), "` (", values, ")"));
  }

  int64_t fail(std::string message) {
    status_ = absl::InvalidArgumentError(std::move(message));
    return 0;
  }

  const SymExpr& root_;
  const SymVarMap<int64_t>& bindings_;
  absl::Status status_;
};

/// Rebuilds `e` with each variable replaced by image(var) where that is set, keeping every
/// subtree in which nothing changed.
template <typename Image>
SymExpr rewrite(const SymExpr& e, const Image& image) {
  switch (e.kind()) {
    case SymKind::kIntImm:
      return e;
    case SymKind::kVar: {
      std::optional<SymExpr> replacement = image(SymVar::from_expr(e));
      return replacement ? *std::move(replacement) : e;
    }
    default:
      break;
  }
  std::array<SymExpr, 3> operands;
  bool changed = false;
  for (size_t i = 0; i < e.num_operands(); ++i) {
    operands[i] = rewrite(e.operand(i), image);
    changed = changed || !operands[i].same_as(e.operand(i));
  }
  if (!changed) return e;
  return SymExpr::make(e.kind(), operands[0], operands[1], operands[2]);
}

}  // namespace

absl::StatusOr<int64_t> evaluate(const SymExpr& e, const SymVarMap<int64_t>& bindings) {
  RELAX_CHECK(e.defined()) << "evaluate() of an undefined SymExpr";
  return Evaluator(e, bindings).run();
}

SymExpr substitute(const SymExpr& e, const SymVarMap<SymExpr>& map) {
  if (!e.defined() || map.empty()) return e;
  return rewrite(e, [&map](const SymVar& var) -> std::optional<SymExpr> {
    auto it = map.find(var);
    if (it == map.end()) return std::nullopt;
    return it->second;
  });
}

SymExpr substitute(const SymExpr& e,
                   const std::function<std::optional<SymExpr>(const SymVar&)>& image) {
  if (!e.defined()) return e;
  return rewrite(e, image);
}

void for_each_var(const SymExpr& e, const std::function<void(const SymVar&)>& visit) {
  if (!e.defined()) return;
  // Pre-order, left to right, with an explicit stack. A node seen before is skipped
  // whole: its variables were all reported the first time, and skipping keeps shared
  // subtrees (DAGs) linear.
  absl::flat_hash_set<const SymExprNode*> seen;
  std::vector<const SymExpr*> stack = {&e};
  while (!stack.empty()) {
    const SymExpr& top = *stack.back();
    stack.pop_back();
    if (top.kind() == SymKind::kIntImm || !seen.insert(top.get()).second) continue;
    if (top.kind() == SymKind::kVar) {
      visit(SymVar::from_expr(top));
      continue;
    }
    for (size_t i = top.num_operands(); i-- > 0;) stack.push_back(&top.operand(i));
  }
}

}  // namespace relax
