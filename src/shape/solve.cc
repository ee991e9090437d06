// solve_linear: reads the canonical Poly of a dim (simplify.h) instead of the
// tree as written, so that `4 * (n + 1)`, `n * 2 + n * 2` and `(n + 1) * 4 - 4`
// are all seen as multiples of n, and `n + m - n` as no use of n at all.
//
// The Poly is taken without variable ranges: its shape (which atoms, which
// coefficients) then depends only on the expression, never on what the caller
// happens to know about the variables, so every user of the rule agrees.
#include "relax/shape/solve.h"

#include <limits>

#include "shape/poly.h"
#include "shape/simplify/simplify.h"

namespace relax {

std::optional<LinearSolution> solve_linear(const SymExpr& expr,
                                           const std::function<bool(const SymVar&)>& known) {
  if (!expr.defined() || expr.dtype() != DataType::int64()) return std::nullopt;
  auto is_known = [&](const SymVar& v) { return known && known(v); };

  const shape_detail::VarRanges no_ranges;
  shape_detail::Simplifier simplifier(no_ranges);
  const shape_detail::Poly poly = simplifier.to_poly(expr);

  // The one unknown variable, and the coefficient of its degree-1 term.
  std::optional<SymVar> unknown;
  int64_t coeff = 0;
  // Notes an unknown variable; false when it is a second one.
  auto note = [&](const SymVar& v) {
    if (!unknown) unknown = v;
    return unknown->id() == v.id();
  };
  for (const shape_detail::Term& term : poly.terms()) {
    const bool linear_var = term.atoms.size() == 1 && term.atoms[0].is_var();
    if (linear_var) {
      const SymVar v = SymVar::from_expr(term.atoms[0]);
      if (is_known(v)) continue;
      if (!note(v)) return std::nullopt;
      coeff = term.coeff;  // a Poly holds each monomial once, so this is its only such term
      continue;
    }
    // Anything else must mention known variables only: an unknown inside a
    // product of atoms (n * n, n * m) or inside an atom (floordiv(n, 2),
    // min(n, 8)) cannot be read off.
    bool only_known = true;
    for (const SymExpr& atom : term.atoms) {
      for_each_var(atom, [&](const SymVar& v) { only_known = only_known && is_known(v); });
    }
    if (!only_known) return std::nullopt;
  }
  if (!unknown || coeff == 0 || coeff == std::numeric_limits<int64_t>::min()) return std::nullopt;

  // rest = poly - coeff * var.
  std::optional<shape_detail::Poly> rest =
      shape_detail::Poly::add(poly, shape_detail::Poly::atom(*unknown), -coeff);
  if (!rest) return std::nullopt;
  return LinearSolution{*unknown, coeff, rest->to_expr()};
}

}  // namespace relax
