// relax::Analyzer: simplification, bounds and proofs over SymExpr.
//
// The Analyzer knows a range for each bound variable and answers questions
// about expressions under those ranges:
//   - simplify(e): a canonical form of the same value (sum of monomials with
//     integer coefficients, sorted deterministically; floordiv/floormod by
//     constants resolved where the bounds allow; min/max and comparisons
//     decided where provable);
//   - const_int_bound(e): an interval [min, max] that holds every value of e;
//   - modular_set(e): e == coeff * k + base for some integer k;
//   - prove(cond) / prove_equal(a, b): true only when provable -- false means
//     "not proven", never "disproven";
//   - upper_bound(e) / lower_bound(e): finite bounds when the variables allow.
// Every one of them also uses the facts of the ConstraintScopes alive on the
// Analyzer (`i < n` inside a loop, `n % 4 == 0` under a branch): see
// Analyzer::ConstraintScope.
//
// Simplification never changes the value of an expression at any point where
// the original evaluates without error.
//
// Overflow. The simplified form computes in another order than the input: a
// sum is rebuilt as its positive-coefficient terms (canonical order), then the
// negative ones subtracted, then the constant; products are distributed over
// sums; min/max/select pull out a shared part. An intermediate of that order
// can leave int64 where the input's order did not, only when values come
// within the sum of the magnitudes of the terms of 2^63. Comparisons add
// nothing to this: `a < b` is never rewritten with a `+ 1`, a constant never
// grows, and terms or constants move between the two sides only when the new
// side needs no arithmetic, is the canonical form of one of the input's sides,
// or provably stays inside int64 under the declared ranges.
//
// Depth. Readers of outside input refuse trees deeper than kMaxNestingDepth
// (relax/support/limits.h); every function here is safe for such trees on a
// 1 MiB thread stack, whatever their shape. Chains of one operator (`a + b +
// c + ...`, `p || q || ...`, the form simplify() gives a long sum) are read in
// a loop at any length. Trees built in C++ that nest other operators deeper
// than 2 * kMaxNestingDepth are answered conservatively below that level:
// simplify() keeps such a subtree as written (so the result may be only
// partly simplified, and simplify(simplify(e)) == simplify(e) may not hold),
// const_int_bound() and modular_set() widen it to everything, prove() and
// prove_equal() may return false (not proven), upper_bound()/lower_bound()
// may report no finite bound; they never crash. evaluate() reports such depth
// as an error (sym_expr.h).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/shape/sym_expr.h"

namespace relax {

/// An inclusive interval of int64 values; kNegInf / kPosInf stand for unbounded ends.
struct ConstIntBound {
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();

  int64_t min_value = kNegInf;
  int64_t max_value = kPosInf;

  static ConstIntBound everything() { return {kNegInf, kPosInf}; }
  static ConstIntBound exactly(int64_t v) { return {v, v}; }
  bool is_const() const { return min_value == max_value; }
  bool has_lower() const { return min_value != kNegInf; }
  bool has_upper() const { return max_value != kPosInf; }
  bool operator==(const ConstIntBound&) const = default;
  std::string to_string() const;
};
std::ostream& operator<<(std::ostream& os, const ConstIntBound& b);

/// The set { coeff * k + base : k integer }. coeff == 0 means exactly `base`;
/// coeff == 1 (base 0) means any integer. coeff is never negative and
/// 0 <= base < coeff when coeff > 0.
struct ModularSet {
  int64_t coeff = 1;
  int64_t base = 0;

  static ModularSet everything() { return {1, 0}; }
  bool operator==(const ModularSet&) const = default;
  std::string to_string() const;
};
std::ostream& operator<<(std::ostream& os, const ModularSet& m);

/// One rewrite rule of the simplifier, as its rule table writes it (docs/shapes.md): `pattern`
/// becomes `result` when `condition` holds ("" for none). x, y, z, w stand for any int64
/// expression, c1 ... c4 for constants, b1, b2 for booleans.
struct RewriteRule {
  std::string name;
  std::string pattern;
  std::string result;
  std::string condition;
};

/// Every rewrite rule, in the order the simplifier tries them.
std::vector<RewriteRule> rewrite_rules();

/// Simplifies and proves facts about SymExprs under variable ranges and scoped facts.
/// Not thread-safe; cheap to construct. Copyable: a copy holds the declared
/// ranges and the facts in force at the time of the copy; the scopes alive on
/// the original never remove them from the copy (they stay for the copy's
/// life), and scopes on the copy do not touch the original.
class Analyzer {
 public:
  class ConstraintScope;

  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer&);
  Analyzer& operator=(const Analyzer&);
  Analyzer(Analyzer&&) noexcept;
  Analyzer& operator=(Analyzer&&) noexcept;

  /// Declares lo <= var <= hi (inclusive; kNegInf / kPosInf leave an end open).
  /// A second bind of the same variable narrows to the intersection. A bind is
  /// permanent: made inside a ConstraintScope, it stays after the scope ends.
  void bind(const SymVar& var, int64_t lo, int64_t hi = ConstIntBound::kPosInf);
  /// The range known for `var`: its declared range narrowed by the facts in
  /// force (everything when neither says anything).
  ConstIntBound var_bound(const SymVar& var) const;
  /// The number of ConstraintScopes alive on this Analyzer.
  size_t constraint_depth() const;

  SymExpr simplify(const SymExpr& e);
  /// simplify(e), also appending to `fired_rules` the name of each rewrite rule that fired,
  /// in order (see rewrite_rules()): for tests, and for asking why a form came out as it did.
  SymExpr simplify(const SymExpr& e, std::vector<std::string>* fired_rules);
  ConstIntBound const_int_bound(const SymExpr& e);
  ModularSet modular_set(const SymExpr& e);

  /// True when `cond` (a boolean SymExpr) holds for every value of the variables.
  bool prove(const SymExpr& cond);
  /// True when a and b provably have the same value.
  bool prove_equal(const SymExpr& a, const SymExpr& b);

  /// The quotient q of two int64 expressions when b divides a exactly as
  /// polynomials: a == q * b for every value of the variables, q with integer
  /// coefficients, read off the canonical forms of a and b (see simplify).
  /// Common factors cancel: n*64 / n = 64, b*n*4096 / (b*n) = 4096,
  /// n*m*6 / (n*3) = m*2, (n*n - 1) / (n + 1) = n - 1. nullopt when no such q is
  /// found (n / m, (n + 1) / 2, b == 0, a non-int64 operand). q is canonical and
  /// equals floordiv(a, b) wherever b != 0 (where b is 0, so is a).
  std::optional<SymExpr> exact_div(const SymExpr& a, const SymExpr& b);

  /// The largest value `e` can take; an error naming the unbounded variable
  /// when no finite bound follows from the declared ranges.
  absl::StatusOr<int64_t> upper_bound(const SymExpr& e);
  /// The smallest value `e` can take, or an error as for upper_bound.
  absl::StatusOr<int64_t> lower_bound(const SymExpr& e);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Adds a boolean fact to an Analyzer for as long as the scope lives:
///
///   Analyzer analyzer;
///   analyzer.bind(j, 0, 3);
///   {
///     Analyzer::ConstraintScope in_loop(analyzer, 0 <= i && i < n);
///     analyzer.prove(i * 4 + j < n * 4);        // true
///     analyzer.simplify(min(i, n));             // i
///     Analyzer::ConstraintScope even(analyzer, floormod(n, 2) == 0);
///     analyzer.simplify(floormod(n + 3, 2));    // 1
///   }                                           // both facts dropped
///   analyzer.prove(i < n);                      // false again
///
/// The fact is split at `&&` and each part simplified under what is already
/// known; an int64 comparison is used by its form:
///   - one variable against constants (`i < 10`, `0 <= i`, `i == 3`,
///     `i*4 < 40`, and `i != 9` where 9 is an end of i's range) narrows that
///     variable's range, which var_bound() reports;
///   - `floormod(v, c) == r` makes v == c*k + r for an integer k: modular_set(),
///     the floordiv/floormod rules and bounds use it (floormod(v + 2, c) is
///     r + 2 mod c; floordiv(v, c)*c == v - r is proven), and v's range ends
///     move to members of the set;
///   - any other comparison (`i < n`, `i + j <= m`, `x == y*4`) is a relation
///     that bounds use transitively: proving p >= 0 tries p - k*q for a fact
///     q >= 0 and a k > 0 that cancels a term the two share (up to three facts
///     chained), so `i < n` proves `i <= n`, `i < n + 1`, `min(i, n) == i` and
///     decides `select(i < n, a, b)`. It also bounds its plain variables by the
///     others' ranges (`i < n` with n <= 100 gives i <= 99).
/// Other parts (a boolean variable, `a || b`) are kept as written: prove()
/// answers true for a condition that is, after simplification, one of them or
/// a conjunction of them.
///
/// Every result outside the scope is what it was before it. Scopes nest and
/// must end in reverse order of creation (as block-scoped objects do); ending
/// one that is not the innermost, or outliving a moved-from Analyzer, is a
/// bug that aborts (RELAX_CHECK). The Analyzer must outlive its scopes.
///
/// A fact that contradicts what is known (`i < 0` where 0 <= i is declared,
/// `n < m` inside `m < n`, `floormod(n, 2) == 0` inside `floormod(n, 2) == 1`)
/// adds nothing: contradicts() reports it, and every answer under the scope
/// is the answer without it, which is sound whether or not the code under it
/// can run. (A contradiction that the analysis does not detect leaves the facts
/// in force; any answer is then vacuously true, as no point satisfies them.)
class Analyzer::ConstraintScope {
 public:
  /// Adds `fact` (a boolean SymExpr; anything else aborts) to `analyzer`.
  ConstraintScope(Analyzer& analyzer, const SymExpr& fact);
  /// Drops the fact (RELAX_CHECK: this must be the innermost scope).
  ~ConstraintScope();
  ConstraintScope(const ConstraintScope&) = delete;
  ConstraintScope& operator=(const ConstraintScope&) = delete;

  /// Whether the fact was found to contradict the facts and ranges in force
  /// when the scope began (it then adds nothing).
  bool contradicts() const { return contradicts_; }

 private:
  Analyzer& analyzer_;
  size_t depth_;  ///< the analyzer's constraint_depth() with this scope alive
  bool contradicts_;
};

}  // namespace relax
