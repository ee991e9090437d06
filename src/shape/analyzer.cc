// Analyzer: the public face of the simplifier and the bound analyses.
#include "relax/shape/analyzer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "shape/bounds/bounds.h"
#include "shape/bounds/constraints.h"
#include "relax/support/check.h"
#include "shape/simplify/rewrite/rewriter.h"
#include "shape/simplify/simplify.h"

namespace relax {

namespace {
// Rounds of simplification at most (the first included) until the form is stable.
constexpr int kSimplifyRounds = 4;
}  // namespace

std::vector<RewriteRule> rewrite_rules() {
  std::vector<RewriteRule> rules;
  for (std::span<const shape_detail::RuleText> table : shape_detail::rule_tables()) {
    for (const shape_detail::RuleText& r : table) {
      rules.push_back(RewriteRule{r.name, r.pattern, r.result, r.when == nullptr ? "" : r.when});
    }
  }
  return rules;
}

struct Analyzer::Impl {
  /// The ranges given by bind().
  shape_detail::VarRanges declared;
  /// `declared` narrowed by the facts in force: what every analysis reads.
  shape_detail::VarRanges ranges;
  shape_detail::Facts facts;

  /// The facts the simplifier consults besides the ranges (null when none).
  const shape_detail::Facts* relations() const { return facts.empty() ? nullptr : &facts; }
  shape_detail::Simplifier simplifier() const { return shape_detail::Simplifier(ranges, relations()); }
};

Analyzer::Analyzer() : impl_(std::make_unique<Impl>()) {}
Analyzer::~Analyzer() = default;
Analyzer::Analyzer(const Analyzer& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Analyzer& Analyzer::operator=(const Analyzer& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Analyzer::Analyzer(Analyzer&&) noexcept = default;
Analyzer& Analyzer::operator=(Analyzer&&) noexcept = default;

void Analyzer::bind(const SymVar& var, int64_t lo, int64_t hi) {
  for (shape_detail::VarRanges* ranges : {&impl_->declared, &impl_->ranges}) {
    auto [it, inserted] = ranges->try_emplace(var, ConstIntBound{lo, hi});
    if (!inserted) it->second = shape_detail::interval_intersect(it->second, {lo, hi});
  }
  impl_->facts.refresh(impl_->ranges);
}

size_t Analyzer::constraint_depth() const { return impl_->facts.depth(); }

Analyzer::ConstraintScope::ConstraintScope(Analyzer& analyzer, const SymExpr& fact)
    : analyzer_(analyzer) {
  RELAX_CHECK(analyzer.impl_ != nullptr) << "ConstraintScope on a moved-from Analyzer";
  Impl& impl = *analyzer.impl_;
  contradicts_ = !impl.facts.push(fact, impl.declared, impl.ranges);
  depth_ = impl.facts.depth();
}

Analyzer::ConstraintScope::~ConstraintScope() {
  RELAX_CHECK(analyzer_.impl_ != nullptr)
      << "a ConstraintScope outlived its Analyzer's move (the scope must end first)";
  Impl& impl = *analyzer_.impl_;
  RELAX_CHECK(impl.facts.depth() == depth_)
      << "ConstraintScopes must end innermost first: this one began at depth " << depth_
      << " but the Analyzer holds " << impl.facts.depth();
  impl.facts.pop(impl.declared, impl.ranges);
}

ConstIntBound Analyzer::var_bound(const SymVar& var) const {
  auto it = impl_->ranges.find(var);
  return it == impl_->ranges.end() ? ConstIntBound::everything() : it->second;
}

SymExpr Analyzer::simplify(const SymExpr& e) { return simplify(e, nullptr); }

SymExpr Analyzer::simplify(const SymExpr& e, std::vector<std::string>* fired_rules) {
  auto canonical = [&](const SymExpr& x) {
    shape_detail::Simplifier simplifier = impl_->simplifier();
    simplifier.set_trace(fired_rules);
    SymExpr result = simplifier.simplify(x);
    // Without rewrite rules at work the canonical form is final. With them, a rule can fire
    // on a form that only this round produced (a sum built while opening a min, an expression
    // met while its own rules were being tried): more rounds, each with a fresh simplifier
    // (the memoized forms of the last may be stale), until one changes nothing.
    bool settled = simplifier.settled();
    for (int round = 1; round < kSimplifyRounds && !settled; ++round) {
      shape_detail::Simplifier next = impl_->simplifier();
      next.set_trace(fired_rules);
      SymExpr again = next.simplify(result);
      settled = structural_equal(again, result);
      result = std::move(again);
    }
    return result;
  };
  SymExpr result = canonical(e);
  // Written with shared factors outside its sums ((i*8 + j)*n*4, not i*n*32 + j*n*4). A
  // factor shared by terms holding other atoms than variables ((floordiv(x, n)*n +
  // floormod(x, n)) * n) leaves a sum that may simplify further on its own (to x): the form
  // is kept once simplifying it gives back the canonical form it came from, and the further
  // simplified form is taken otherwise (a few rounds at most; then the plain factored form).
  for (int round = 0; round < kSimplifyRounds; ++round) {
    bool compound = false;
    SymExpr factored = shape_detail::factor_common_atoms(result, /*compound=*/true, &compound);
    if (!compound) return factored;
    SymExpr again = canonical(factored);
    if (structural_equal(again, result)) return factored;
    result = std::move(again);
  }
  return shape_detail::factor_common_atoms(result);
}

std::optional<SymExpr> Analyzer::exact_div(const SymExpr& a, const SymExpr& b) {
  if (a.dtype() != DataType::int64() || b.dtype() != DataType::int64()) return std::nullopt;
  // One simplifier for both, so that equal atoms of a and b are the same canonical atoms.
  shape_detail::Simplifier simplifier(impl_->ranges);  // a polynomial identity: no facts needed
  std::optional<shape_detail::Poly> q =
      shape_detail::exact_divide(simplifier.to_poly(a), simplifier.to_poly(b));
  if (!q) return std::nullopt;
  return shape_detail::factor_common_atoms(q->to_expr());  // the form simplify gives
}

ConstIntBound Analyzer::const_int_bound(const SymExpr& e) {
  shape_detail::Simplifier simplifier = impl_->simplifier();
  const ConstIntBound as_written = shape_detail::interval_of(e, impl_->ranges);
  if (e.dtype().is_float()) return ConstIntBound::everything();
  if (e.dtype() != DataType::int64()) {  // booleans and narrower integers
    return shape_detail::interval_intersect(
        as_written, shape_detail::interval_of(simplifier.simplify(e), impl_->ranges));
  }
  return shape_detail::interval_intersect(as_written, simplifier.bound(simplifier.to_poly(e)));
}

ModularSet Analyzer::modular_set(const SymExpr& e) {
  if (e.dtype() != DataType::int64()) return ModularSet::everything();
  const ModularSet as_written = impl_->facts.modular(e);
  const ModularSet simplified = impl_->facts.modular(simplify(e));
  // Keep the finer of the two answers (a larger coefficient, or an exact value).
  if (as_written.coeff == 0) return as_written;
  if (simplified.coeff == 0) return simplified;
  return simplified.coeff > as_written.coeff ? simplified : as_written;
}

bool Analyzer::prove(const SymExpr& cond) {
  if (!cond.dtype().is_bool()) return false;
  const SymExpr simplified = simplify(cond);
  if (auto c = simplified.as_const()) return *c != 0;
  if (impl_->facts.depth() == 0) return false;
  // A conjunction of atoms in force (a boolean variable, an `||` given as a fact).
  std::vector<const SymExpr*> stack = {&simplified};
  while (!stack.empty()) {
    const SymExpr* x = stack.back();
    stack.pop_back();
    if (x->kind() == SymKind::kAnd) {
      stack.push_back(&x->operand(0));
      stack.push_back(&x->operand(1));
    } else if (!impl_->facts.holds(*x)) {
      return false;
    }
  }
  return true;
}

bool Analyzer::prove_equal(const SymExpr& a, const SymExpr& b) {
  if (structural_equal(a, b)) return true;
  if (a.dtype() != b.dtype()) return false;
  if (a.dtype() != DataType::int64()) return structural_equal(simplify(a), simplify(b));
  return prove(a == b);
}

namespace {

/// Names the variables of `e` whose declared range is open at either end
/// (either end can leave the asked-for side of `e` open: think of n * -1).
std::string unbounded_vars(const SymExpr& e, const Analyzer& analyzer) {
  std::string names;
  for_each_var(e, [&](const SymVar& var) {
    const ConstIntBound b = analyzer.var_bound(var);
    if (!b.has_lower() || !b.has_upper()) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", "`", var.name(), "` ", b.to_string());
    }
  });
  return names;
}

absl::Status no_bound(const SymExpr& e, const Analyzer& analyzer, std::string_view side) {
  std::string vars = unbounded_vars(e, analyzer);
  return absl::FailedPreconditionError(
      absl::StrCat("no finite ", std::string(side), " bound for `", e.to_string(), "`",
                   vars.empty() ? std::string() : absl::StrCat(": declared ranges are ", vars)));
}

}  // namespace

absl::StatusOr<int64_t> Analyzer::upper_bound(const SymExpr& e) {
  const ConstIntBound b = const_int_bound(e);
  if (b.has_upper()) return b.max_value;
  return no_bound(e, *this, "upper");
}

absl::StatusOr<int64_t> Analyzer::lower_bound(const SymExpr& e) {
  const ConstIntBound b = const_int_bound(e);
  if (b.has_lower()) return b.min_value;
  return no_bound(e, *this, "lower");
}

}  // namespace relax
