// Analyzer: the public face of the simplifier and the bound analyses.
#include "relax/shape/analyzer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "bounds.h"
#include "rewrite/rewriter.h"
#include "simplify.h"

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
  shape_detail::VarRanges ranges;
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
  auto [it, inserted] = impl_->ranges.try_emplace(var, ConstIntBound{lo, hi});
  if (!inserted) it->second = shape_detail::interval_intersect(it->second, {lo, hi});
}

ConstIntBound Analyzer::var_bound(const SymVar& var) const {
  auto it = impl_->ranges.find(var);
  return it == impl_->ranges.end() ? ConstIntBound::everything() : it->second;
}

SymExpr Analyzer::simplify(const SymExpr& e) { return simplify(e, nullptr); }

SymExpr Analyzer::simplify(const SymExpr& e, std::vector<std::string>* fired_rules) {
  shape_detail::Simplifier simplifier(impl_->ranges);
  simplifier.set_trace(fired_rules);
  SymExpr result = simplifier.simplify(e);
  // A rule can fire on a form that only the first round produced (a sum built while opening
  // a min, an expression met while its own rules were being tried); another round settles it.
  for (int round = 1; round < kSimplifyRounds; ++round) {
    SymExpr again = simplifier.simplify(result);
    if (structural_equal(again, result)) break;
    result = std::move(again);
  }
  return result;
}

std::optional<SymExpr> Analyzer::exact_div(const SymExpr& a, const SymExpr& b) {
  if (a.dtype() != DataType::int64() || b.dtype() != DataType::int64()) return std::nullopt;
  // One simplifier for both, so that equal atoms of a and b are the same canonical atoms.
  shape_detail::Simplifier simplifier(impl_->ranges);
  std::optional<shape_detail::Poly> q =
      shape_detail::exact_divide(simplifier.to_poly(a), simplifier.to_poly(b));
  if (!q) return std::nullopt;
  return q->to_expr();
}

ConstIntBound Analyzer::const_int_bound(const SymExpr& e) {
  shape_detail::Simplifier simplifier(impl_->ranges);
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
  const ModularSet as_written = shape_detail::modular_of(e);
  const ModularSet simplified = shape_detail::modular_of(simplify(e));
  // Keep the finer of the two answers (a larger coefficient, or an exact value).
  if (as_written.coeff == 0) return as_written;
  if (simplified.coeff == 0) return simplified;
  return simplified.coeff > as_written.coeff ? simplified : as_written;
}

bool Analyzer::prove(const SymExpr& cond) {
  if (!cond.dtype().is_bool()) return false;
  return simplify(cond).is_const(1);
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
