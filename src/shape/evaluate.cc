// Concrete evaluation, substitution and variable traversal of SymExpr.
//
// evaluate() is what runtime shape checks run, so it is a plain recursive walk
// that allocates nothing on success (unless a chain of one operator is longer
// than 8); error messages (which print the tree) are built only on failure.
// Chains like `a + b + c + ...` are walked in a loop; other nesting recurses, up
// to kMaxWalkDepth levels (walk_depth.h), past which the answer is an error. Arithmetic is checked int64 arithmetic: an overflow
// is an error, never a wrapped value. Division rounds toward negative infinity.
//
// `&&`, `||` and select evaluate lazily, as in C: the branch not taken is not
// evaluated, so `n > 0 && floordiv(m, n) > 2` and `select(n == 0, 0, floordiv(m, n))`
// are fine for n == 0.
//
// Integer dtypes narrower than int64 are checked too: an int32 sum outside the
// int32 range is an overflow error, like an int64 one. evaluate() refuses
// floats; evaluate_float() (the same walk with float support switched on)
// computes them in double, rounding each node's result to its dtype.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "shape/dtype_util.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/sym_expr.h"
#include "relax/shape/sym_expr_search.h"
#include "shape/int_math.h"
#include "relax/support/check.h"
#include "relax/support/limits.h"
#include "shape/walk_depth.h"

namespace relax {
namespace {

/// A kind that a walk over well-typed trees cannot meet where it met it.
[[noreturn]] void unhandled_kind(SymKind kind) {
  RELAX_CHECK(false) << "evaluate: unexpected " << sym_kind_name(kind) << " node";
  std::abort();
}

class Evaluator {
 public:
  /// `float_bindings` null: integers only (evaluate()); set: floats too (evaluate_float()).
  Evaluator(const SymExpr& root, const SymVarMap<int64_t>& bindings,
            const SymVarMap<double>* float_bindings = nullptr)
      : root_(root), bindings_(bindings), float_bindings_(float_bindings) {}

  absl::StatusOr<int64_t> run() {
    if (is_scalar_float(root_.dtype())) {
      not_integer(root_);
      return status_;
    }
    const int64_t value = eval(root_);
    if (!status_.ok()) return status_;
    return value;
  }

  absl::StatusOr<double> run_float() {
    if (root_.dtype().lanes != 1) {
      fail(absl::StrCat("not a scalar expression: `", to_string(root_), "`"));
      return status_;
    }
    const double value =
        is_scalar_float(root_.dtype()) ? eval_float(root_) : static_cast<double>(eval(root_));
    if (!status_.ok()) return status_;
    return value;
  }

 private:
  bool floats_allowed() const { return float_bindings_ != nullptr; }

  /// The value of an integer or boolean `e`; on an error, records it in status_ and
  /// returns 0. Float subtrees appear only under casts and comparisons.
  int64_t eval(const SymExpr& e) {
    const shape_detail::WalkDepth level(depth_);
    if (level.too_deep()) return too_deep();
    const SymExprNode& node = *e;
    // A vector (ramp, broadcast, a vector load or lane-wise operator) has no one value.
    if (node.dtype().lanes != 1) return not_integer(e);
    switch (node.kind()) {
      case SymKind::kIntImm:
        return node.value();
      case SymKind::kVar:
        return lookup(e);
      case SymKind::kCast:
        return eval_cast(e);
      case SymKind::kCall:
        return eval_int_call(e);
      case SymKind::kBufferLoad:
        return floats_allowed() ? no_load(e) : not_integer(e);
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
    if (is_scalar_float(node.operand(0).dtype())) return compare_floats(e);
    return eval_chain(e);
  }

  /// A binary integer node whose left operand is evaluated in a loop, not by recursion,
  /// while it is one too: `a + b + c + ...` (the form simplify gives a sum) costs one
  /// level of recursion, not one per term.
  static bool is_integer_binary(const SymExpr& e) {
    return sym_kind_info(e.kind()).eval_int != nullptr && !is_scalar_float(e.operand(0).dtype());
  }

  int64_t eval_chain(const SymExpr& e) {
    absl::InlinedVector<const SymExpr*, 8> spine;
    const SymExpr* x = &e;
    while (is_integer_binary(*x)) {
      spine.push_back(x);
      x = &x->operand(0);
    }
    int64_t a = eval(*x);
    for (size_t i = spine.size(); i-- > 0 && !failed();) {
      const SymExpr& node = *spine[i];
      const int64_t b = eval(node.operand(1));
      if (failed()) return 0;
      const int64_t result = binary(node, a, b);
      if (!failed() && node.dtype() != DataType::int64() && !node.dtype().is_bool() &&
          !fits_dtype(result, node.dtype())) {
        return overflow(node, a, b);
      }
      a = result;
    }
    return failed() ? 0 : a;
  }

  int64_t eval_cast(const SymExpr& e) {
    const SymExpr& x = e.operand(0);
    if (!is_scalar_float(x.dtype())) {
      const int64_t v = eval(x);
      return failed() ? 0 : shape_detail::wrap_to(v, e.dtype());
    }
    if (!floats_allowed()) return not_integer(x);
    const double v = eval_float(x);
    if (failed()) return 0;
    if (e.dtype().is_bool()) return v != 0 ? 1 : 0;
    // Truncation toward zero, defined only where the result fits the dtype.
    const double t = std::trunc(v);
    const IntRange r = int_range(e.dtype());
    // hi + 1 is a power of two, exact in double (INT64_MAX + 1 rounds to 2^63).
    if (std::isnan(v) || t < static_cast<double>(r.lo) || t >= static_cast<double>(r.hi) + 1.0) {
      return fail(absl::StrCat("cast of ", v, " to ", e.dtype().to_string(), " is out of range in `",
                               to_string(e), "`"));
    }
    return static_cast<int64_t>(t);
  }

  /// An intrinsic of integer or bool result: one of integers (abs, bitwise,
  /// shifts), or a predicate on a float (isnan, isinf; evaluate_float only).
  int64_t eval_int_call(const SymExpr& e) {
    const IntrinsicInfo& row = intrinsic_info(e->intrinsic());
    if (is_scalar_float(e.operand(0).dtype())) {
      if (!floats_allowed()) return not_integer(e);
      return eval_call(e) != 0 ? 1 : 0;
    }
    int64_t x[3] = {0, 0, 0};
    for (size_t i = 0; i < e.num_operands(); ++i) {
      x[i] = eval(e.operand(i));
      if (failed()) return 0;
    }
    RELAX_CHECK(row.eval_int != nullptr) << row.name << " of integers";
    const std::optional<int64_t> r = row.eval_int(x, e.dtype());
    if (!r) return undefined_call(e, row, x);
    return *r;
  }

  int64_t compare_floats(const SymExpr& e) {
    if (!floats_allowed()) return not_integer(e.operand(0));
    const double a = eval_float(e.operand(0));
    if (failed()) return 0;
    const double b = eval_float(e.operand(1));
    if (failed()) return 0;
    return sym_kind_info(e.kind()).eval_float(a, b) != 0 ? 1 : 0;
  }

  /// The value of a float `e`, rounded to its dtype (evaluate_float only).
  double eval_float(const SymExpr& e) {
    const shape_detail::WalkDepth level(depth_);
    if (level.too_deep()) return static_cast<double>(too_deep());
    const SymExprNode& node = *e;
    const DataType t = node.dtype();
    auto operand = [&](size_t i) { return eval_float(node.operand(i)); };
    auto round = [&](double v) { return round_to_dtype(v, t); };
    switch (node.kind()) {
      case SymKind::kFloatImm:
        return node.float_value();
      case SymKind::kVar: {
        auto it = float_bindings_->find(SymVar::from_expr(e));
        if (it == float_bindings_->end()) return static_cast<double>(unbound(e));
        return round(it->second);
      }
      case SymKind::kCast: {
        const SymExpr& x = node.operand(0);
        if (is_scalar_float(x.dtype())) return round(eval_float(x));
        return round(static_cast<double>(eval(x)));
      }
      case SymKind::kSelect: {
        const bool cond = eval(node.operand(0)) != 0;
        if (failed()) return 0;
        return operand(cond ? 1 : 2);
      }
      case SymKind::kCall:
        return round(eval_call(e));
      case SymKind::kBufferLoad:
        return static_cast<double>(no_load(e));
      default:
        break;
    }
    const double a = operand(0);
    if (failed()) return 0;
    const double b = operand(1);
    if (failed()) return 0;
    const SymFloatEval arithmetic = sym_kind_info(node.kind()).eval_float;
    if (arithmetic == nullptr) unhandled_kind(node.kind());
    return round(arithmetic(a, b));
  }

  double eval_call(const SymExpr& e) {
    double x[3] = {0, 0, 0};
    for (size_t i = 0; i < e.num_operands(); ++i) {
      x[i] = eval_float(e.operand(i));
      if (failed()) return 0;
    }
    const IntrinsicInfo& row = intrinsic_info(e->intrinsic());
    RELAX_CHECK(row.eval_float != nullptr) << row.name << " of floats";
    return row.eval_float(x);
  }

  bool failed() const { return !status_.ok(); }

  int64_t lookup(const SymExpr& e) {
    if (is_scalar_float(e.dtype())) return not_integer(e);
    auto it = bindings_.find(SymVar::from_expr(e));
    if (it == bindings_.end()) return unbound(e);
    return it->second;
  }

  /// Applies an arithmetic or comparison node to its operands' values (the table's
  /// arithmetic, exact in 128 bits; a result outside int64 is an overflow).
  int64_t binary(const SymExpr& e, int64_t a, int64_t b) {
    const SymIntEval arithmetic = sym_kind_info(e.kind()).eval_int;
    if (arithmetic == nullptr) unhandled_kind(e.kind());
    SymInt128 result = 0;
    switch (arithmetic(a, b, &result)) {
      case SymEvalError::kNone:
        break;
      case SymEvalError::kByZero:
        return by_zero(e, e.kind() == SymKind::kFloorMod ? "modulo" : "division");
      case SymEvalError::kOverflow:
        return overflow(e, a, b);
    }
    if (result < INT64_MIN || result > INT64_MAX) return overflow(e, a, b);
    return static_cast<int64_t>(result);
  }

  [[gnu::noinline, gnu::cold]] int64_t too_deep() {
    return fail(absl::StrCat("expression nested deeper than ", shape_detail::kMaxWalkDepth,
                             " levels (outside input is limited to ", kMaxNestingDepth,
                             "); not evaluated"));
  }

  [[gnu::noinline, gnu::cold]] int64_t not_integer(const SymExpr& e) {
    return fail(absl::StrCat("not an integer expression: `", to_string(e), "`"));
  }

  [[gnu::noinline, gnu::cold]] int64_t no_load(const SymExpr& e) {
    return fail(absl::StrCat("cannot evaluate the buffer load `", to_string(e), "`"));
  }

  [[gnu::noinline, gnu::cold]] int64_t unbound(const SymExpr& var) {
    return fail(
        absl::StrCat("unbound symbolic variable `", var->name(), "` in `", to_string(root_), "`"));
  }

  [[gnu::noinline, gnu::cold]] int64_t by_zero(const SymExpr& e, const char* what) {
    return fail(absl::StrCat(what, " by zero in `", to_string(e), "`"));
  }

  [[gnu::noinline, gnu::cold]] int64_t undefined_call(const SymExpr& e, const IntrinsicInfo& row,
                                                      const int64_t* x) {
    std::string values = absl::StrCat(std::string(row.name), "(");
    for (size_t i = 0; i < e.num_operands(); ++i) absl::StrAppend(&values, i > 0 ? ", " : "", x[i]);
    return fail(absl::StrCat(e.dtype().to_string(), " ", std::string(row.int_undefined), " in `",
                             to_string(e), "` (", values, "))"));
  }

  [[gnu::noinline, gnu::cold]] int64_t overflow(const SymExpr& e, int64_t a, int64_t b) {
    const SymKind kind = e.kind();
    const std::string values =
        kind == SymKind::kFloorDiv ? absl::StrCat("floordiv(", a, ", ", b, ")")
                                   : absl::StrCat(a, " ", std::string(sym_kind_name(kind)), " ", b);
    return fail(absl::StrCat(e.dtype().to_string(), " overflow in `", to_string(e), "` (", values,
                             ")"));
  }

  int64_t fail(std::string message) {
    status_ = absl::InvalidArgumentError(std::move(message));
    return 0;
  }

  const SymExpr& root_;
  const SymVarMap<int64_t>& bindings_;
  const SymVarMap<double>* float_bindings_;
  absl::Status status_;
  int depth_ = 0;
};

/// Rebuilds `e` with each variable replaced by image(var) where that is set, keeping every
/// subtree in which nothing changed. Post-order with an explicit stack, so any depth works.
template <typename Image>
SymExpr rewrite(const SymExpr& root, const Image& image) {
  auto leaf = [&](const SymExpr& e) -> SymExpr {
    if (e.kind() != SymKind::kVar) return e;
    std::optional<SymExpr> replacement = image(SymVar::from_expr(e));
    if (!replacement) return e;
    RELAX_CHECK(replacement->dtype() == e.dtype())
        << "substitute: `" << e << "` of dtype " << e.dtype() << " replaced by `" << *replacement
        << "` of dtype " << replacement->dtype();
    return *std::move(replacement);
  };
  if (root.num_operands() == 0) return leaf(root);
  struct Frame {
    const SymExpr* expr;
    std::vector<SymExpr> operands;  // the rewritten operands so far
    bool changed = false;
  };
  std::vector<Frame> stack;
  stack.push_back(Frame{&root, {}});
  while (true) {
    Frame& top = stack.back();
    const size_t next = top.operands.size();
    if (next < top.expr->num_operands()) {
      const SymExpr& child = top.expr->operand(next);
      if (child.num_operands() > 0) {
        stack.push_back(Frame{&child, {}});  // invalidates `top`
        continue;
      }
      top.operands.push_back(leaf(child));
      top.changed = top.changed || !top.operands.back().same_as(child);
      continue;
    }
    SymExpr done = top.changed ? top.expr->with_operands(std::move(top.operands)) : *top.expr;
    stack.pop_back();
    if (stack.empty()) return done;
    Frame& parent = stack.back();
    parent.changed = parent.changed || !done.same_as(parent.expr->operand(parent.operands.size()));
    parent.operands.push_back(std::move(done));
  }
}

}  // namespace

absl::StatusOr<int64_t> evaluate(const SymExpr& e, const SymVarMap<int64_t>& bindings) {
  RELAX_CHECK(e.defined()) << "evaluate() of an undefined SymExpr";
  return Evaluator(e, bindings).run();
}

absl::StatusOr<double> evaluate_float(const SymExpr& e, const SymVarMap<int64_t>& int_bindings,
                                      const SymVarMap<double>& float_bindings) {
  RELAX_CHECK(e.defined()) << "evaluate_float() of an undefined SymExpr";
  return Evaluator(e, int_bindings, &float_bindings).run_float();
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
    if (top.kind() == SymKind::kIntImm || top.kind() == SymKind::kFloatImm ||
        !seen.insert(top.get()).second)
      continue;
    if (top.kind() == SymKind::kVar) {
      visit(SymVar::from_expr(top));
      continue;
    }
    for (size_t i = top.num_operands(); i-- > 0;) stack.push_back(&top.operand(i));
  }
}

bool any_subexpr(const SymExpr& e, const std::function<bool(const SymExpr&)>& pred) {
  if (!e.defined()) return false;
  // As for_each_var: an explicit stack, and a node seen before is not searched again.
  absl::flat_hash_set<const SymExprNode*> seen;
  std::vector<const SymExpr*> stack = {&e};
  while (!stack.empty()) {
    const SymExpr& top = *stack.back();
    stack.pop_back();
    if (!seen.insert(top.get()).second) continue;
    if (pred(top)) return true;
    for (size_t i = top.num_operands(); i-- > 0;) stack.push_back(&top.operand(i));
  }
  return false;
}

bool reads_memory(const SymExpr& e) {
  return any_subexpr(e, [](const SymExpr& x) { return x.kind() == SymKind::kBufferLoad; });
}

bool mentions_var(const SymExpr& e, const SymVar& var) {
  return any_subexpr(e, [&var](const SymExpr& x) { return x.kind() == SymKind::kVar && x.get() == var.get(); });
}

}  // namespace relax
