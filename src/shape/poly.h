// Poly: the simplifier's canonical form of an integer expression.
//
// A Poly is   sum_i coeff_i * (atom_i1 * atom_i2 * ...)  +  constant
// where an atom is any integer expression that is not a sum, a difference, a
// product or a constant: a variable, or a simplified floordiv / floormod /
// min / max / select that no rule could open. Terms are kept sorted by their
// atoms (structural order) with no zero coefficients and no two terms over the
// same atoms, so two Polys of the same value built from the same atoms are
// equal term by term: that is what makes `n*4 - 4*n` cancel.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "relax/shape/sym_expr.h"

namespace relax::shape_detail {

/// coeff * atoms[0] * atoms[1] * ...; atoms sorted, repeats allowed (n * n).
struct Term {
  std::vector<SymExpr> atoms;
  int64_t coeff = 0;
};

class Poly {
 public:
  Poly() = default;
  static Poly constant(int64_t value);
  static Poly atom(const SymExpr& atom);

  const std::vector<Term>& terms() const { return terms_; }
  int64_t constant_term() const { return constant_; }
  bool is_constant() const { return terms_.empty(); }
  /// The single atom when this Poly is exactly `1 * atom + 0`.
  std::optional<SymExpr> as_atom() const;

  /// a + scale * b; nullopt when a coefficient overflows.
  static std::optional<Poly> add(const Poly& a, const Poly& b, int64_t scale = 1);
  /// a * b by distribution; nullopt on overflow or when the result would hold
  /// more than kMaxTerms terms (the caller then keeps the product as an atom).
  static std::optional<Poly> mul(const Poly& a, const Poly& b);
  std::optional<Poly> scaled(int64_t k) const;

  /// The canonical expression: positive terms first, then the negative ones
  /// subtracted, then the constant. Deterministic for equal Polys.
  SymExpr to_expr() const;

  /// gcd of every coefficient and the constant (0 for the zero Poly).
  int64_t content() const;
  /// gcd of the coefficients of the non-constant terms (0 when there are none).
  int64_t term_content() const;

  /// Builds from terms in any order, merging equal monomials.
  static std::optional<Poly> from_terms(std::vector<Term> terms, int64_t constant);

  static constexpr size_t kMaxTerms = 64;

 private:
  std::vector<Term> terms_;
  int64_t constant_ = 0;
};

/// Compares two atom lists: structural order, element by element, then length.
int compare_monomials(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b);
/// Whether two Polys are the same canonical form: equal constants and, term by term, equal
/// coefficients over structurally equal atoms.
bool same_poly(const Poly& a, const Poly& b);

/// The product of the atoms (1 when empty), left to right.
SymExpr monomial_expr(const std::vector<SymExpr>& atoms);

/// When the sorted atom list `small` is a sub-multiset of the sorted `big`: the
/// atoms of `big` left after removing it; otherwise nullopt.
std::optional<std::vector<SymExpr>> remove_atoms(const std::vector<SymExpr>& big,
                                                 const std::vector<SymExpr>& small);

/// q with a == q * b as polynomials (integer coefficients, atoms opaque), found
/// by dividing leading terms in a graded monomial order; nullopt when b is zero,
/// when a leading term of the remainder is not a multiple of b's (then no such q
/// exists), or on overflow or a quotient of more than Poly::kMaxTerms terms.
std::optional<Poly> exact_divide(const Poly& a, const Poly& b);

}  // namespace relax::shape_detail
