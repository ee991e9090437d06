// floordiv and floormod.
//
// Rules, for a constant divisor d > 0 (each holds for every integer value):
//   floordiv(x, 1)                     -> x
//   floordiv(g*x, g*d)                 -> floordiv(x, d)           (g divides every coefficient)
//   floordiv(d*q + r, d)               -> q + floordiv(r, d)       (d*q: the terms d divides,
//                                                                   r's constant moved into [0, d))
//   floordiv(r, d)                     -> k                        if bounds put r in [k*d, k*d +
//   d) floordiv(floordiv(x, a) + r, d)    -> floordiv(x + r*a, a*d)   (0 <= r < d) floormod(x, 1)
//   -> 0 floormod(c*x + r, d)               -> floormod((c mod d)*x + r mod d, d) floormod(g*x,
//   g*d)                 -> g * floormod(x, d) floormod(r, d)                     -> r - k*d if
//   bounds put r in [k*d, k*d + d) floormod(r, d)                     -> b mod d if r == b (mod m)
//   and d divides m floormod(floormod(x, m), d)        -> floormod(x, d)           (d divides m)
// A negative constant divisor is turned positive: floordiv(x, -d) == floordiv(-x, d).
// For a divisor that is a single term m (provably non-zero), terms of the
// numerator that m divides leave the division: floordiv(m*q + r, m) -> q + floordiv(r, m),
// floormod(m*q + r, m) -> floormod(r, m), and 0 <= r < m resolves the rest.
// Division by a constant zero, and INT64_MIN / -1, stay as written so that
// evaluation still reports them.
#include <algorithm>

#include "shape/int_math.h"
#include "shape/simplify/simplify.h"

namespace relax::shape_detail {
namespace {

/// a / g for a content g > 1 that divides every coefficient and the constant (so no quotient
/// overflows: only a division by -1 could).
Poly divided_exactly(const Poly& a, int64_t g) {
  std::vector<Term> terms = a.terms();
  for (Term& t : terms) t.coeff /= g;
  return *Poly::from_terms(std::move(terms), a.constant_term() / g);
}

}  // namespace

Poly Simplifier::floordiv_poly(const Poly& a, const Poly& b) {
  if (!b.is_constant()) {
    if (auto divided = divide_by_monomial(a, b, /*want_mod=*/false)) return *divided;
    return div_mod_atom(SymKind::kFloorDiv, a, b);
  }
  const int64_t d = b.constant_term();
  if (d == 0) return div_mod_atom(SymKind::kFloorDiv, a, b);
  if (a.is_constant()) {
    if (a.constant_term() == kNegInf && d == -1) return div_mod_atom(SymKind::kFloorDiv, a, b);
    return Poly::constant(floor_div(a.constant_term(), d));
  }
  if (d < 0) {
    auto negated = a.scaled(-1);
    if (d == kNegInf || !negated) return div_mod_atom(SymKind::kFloorDiv, a, b);
    return floordiv_by_const(std::move(*negated), -d);
  }
  return floordiv_by_const(a, d);
}

Poly Simplifier::floordiv_by_const(Poly a, int64_t d) {
  if (const int64_t g = gcd(a.content(), d); g > 1) {
    a = divided_exactly(a, g);
    d /= g;
  }
  if (d == 1) return a;
  std::vector<Term> quotient_terms, rest_terms;
  for (const Term& t : a.terms()) {
    if (t.coeff % d == 0) {
      quotient_terms.push_back(Term{t.atoms, t.coeff / d});
    } else {
      rest_terms.push_back(t);
    }
  }
  const int64_t c = a.constant_term();
  Poly quotient = *Poly::from_terms(std::move(quotient_terms), floor_div(c, d));
  Poly rest = *Poly::from_terms(std::move(rest_terms), floor_mod(c, d));

  auto plus_quotient = [&](const Poly& p) {
    auto sum = Poly::add(quotient, p);
    return sum ? *sum : div_mod_atom(SymKind::kFloorDiv, a, Poly::constant(d));
  };
  const ConstIntBound r = bound(rest);
  if (!is_inf(r.min_value) && !is_inf(r.max_value) &&
      floor_div(r.min_value, d) == floor_div(r.max_value, d)) {
    return plus_quotient(Poly::constant(floor_div(r.min_value, d)));
  }
  // floordiv(floordiv(x, inner) + r, d) == floordiv(x + r*inner, inner*d)
  if (rest.terms().size() == 1 && rest.terms()[0].coeff == 1 && rest.terms()[0].atoms.size() == 1) {
    const SymExpr& atom = rest.terms()[0].atoms[0];
    auto inner = atom.kind() == SymKind::kFloorDiv ? atom.operand(1).as_const() : std::nullopt;
    auto offset = inner ? checked_mul(rest.constant_term(), *inner) : std::nullopt;
    auto outer = inner ? checked_mul(*inner, d) : std::nullopt;
    if (inner && *inner > 0 && offset && outer) {
      if (auto x = Poly::add(to_poly(atom.operand(0)), Poly::constant(*offset))) {
        return plus_quotient(floordiv_by_const(std::move(*x), *outer));
      }
    }
  }
  return plus_quotient(div_mod_atom(SymKind::kFloorDiv, rest, Poly::constant(d)));
}

Poly Simplifier::floormod_poly(const Poly& a, const Poly& b) {
  if (!b.is_constant()) {
    if (auto reduced = divide_by_monomial(a, b, /*want_mod=*/true)) return *reduced;
    return div_mod_atom(SymKind::kFloorMod, a, b);
  }
  const int64_t d = b.constant_term();
  if (d == 0) return div_mod_atom(SymKind::kFloorMod, a, b);
  if (a.is_constant()) return Poly::constant(floor_mod(a.constant_term(), d));
  if (d < 0) {
    // floormod(x, -d) == -floormod(-x, d)
    auto negated = a.scaled(-1);
    if (d == kNegInf || !negated) return div_mod_atom(SymKind::kFloorMod, a, b);
    // (-d: d is not INT64_MIN here)
    std::optional<Poly> mod = floormod_by_const(std::move(*negated), -d).scaled(-1);
    return mod ? *mod : div_mod_atom(SymKind::kFloorMod, a, b);
  }
  return floormod_by_const(a, d);
}

Poly Simplifier::floormod_by_const(Poly a, int64_t d) {
  if (d == 1) return Poly::constant(0);
  std::vector<Term> reduced;
  for (const Term& t : a.terms()) {
    if (const int64_t c = floor_mod(t.coeff, d); c != 0) reduced.push_back(Term{t.atoms, c});
  }
  Poly rest = *Poly::from_terms(std::move(reduced), floor_mod(a.constant_term(), d));
  int64_t scale = 1;
  if (const int64_t g = gcd(rest.content(), d); g > 1) {
    rest = divided_exactly(rest, g);
    d /= g;
    scale = g;
  }
  auto scaled = [&](const Poly& p) {
    auto result = p.scaled(scale);
    return result ? *result : div_mod_atom(SymKind::kFloorMod, a, Poly::constant(d * scale));
  };
  if (rest.is_constant()) return scaled(rest);

  const ConstIntBound r = bound(rest);
  if (!is_inf(r.min_value) && !is_inf(r.max_value) &&
      floor_div(r.min_value, d) == floor_div(r.max_value, d)) {
    const int64_t k = floor_div(r.min_value, d);
    if (auto shifted = Poly::add(rest, Poly::constant(k), -d)) return scaled(*shifted);
  }
  const ModularSet m = modular(rest);
  if (m.coeff % d == 0) return scaled(Poly::constant(floor_mod(m.base, d)));
  // floormod(floormod(x, inner), d) == floormod(x, d) when d divides inner.
  if (auto atom = rest.as_atom(); atom && atom->kind() == SymKind::kFloorMod) {
    auto inner = atom->operand(1).as_const();
    if (inner && *inner > 0 && *inner % d == 0) {
      return scaled(floormod_by_const(to_poly(atom->operand(0)), d));
    }
  }
  return scaled(div_mod_atom(SymKind::kFloorMod, rest, Poly::constant(d)));
}

std::optional<Poly> Simplifier::divide_by_monomial(const Poly& a, const Poly& b, bool want_mod) {
  if (b.terms().size() != 1 || b.constant_term() != 0) return std::nullopt;
  const ConstIntBound b_range = bound(b);
  if (b_range.min_value <= 0 && b_range.max_value >= 0) return std::nullopt;  // may be zero
  const Term& divisor = b.terms()[0];
  std::vector<Term> quotient_terms, rest_terms;
  for (const Term& t : a.terms()) {
    const std::optional<int64_t> coeff = exact_div(t.coeff, divisor.coeff);
    auto rest_atoms = coeff ? remove_atoms(t.atoms, divisor.atoms) : std::nullopt;
    if (rest_atoms) {
      quotient_terms.push_back(Term{std::move(*rest_atoms), *coeff});
    } else {
      rest_terms.push_back(t);
    }
  }
  auto quotient = Poly::from_terms(std::move(quotient_terms), 0);
  auto rest = Poly::from_terms(std::move(rest_terms), a.constant_term());
  if (!quotient || !rest) return std::nullopt;
  // 0 <= rest < b (or b < rest <= 0 for a negative b) leaves floordiv 0, floormod rest.
  const ConstIntBound r = bound(*rest);
  auto gap = Poly::add(b, *rest, -1);
  const bool fits = gap && (b_range.min_value > 0 ? r.min_value >= 0 && bound(*gap).min_value > 0
                                                  : r.max_value <= 0 && bound(*gap).max_value < 0);
  if (want_mod) {
    if (fits || (rest->terms().empty() && rest->constant_term() == 0)) return *rest;
    if (quotient->terms().empty() && quotient->constant_term() == 0) return std::nullopt;
    return div_mod_atom(SymKind::kFloorMod, *rest, b);
  }
  if (fits) return *quotient;
  if (quotient->terms().empty() && quotient->constant_term() == 0) return std::nullopt;
  return Poly::add(*quotient, div_mod_atom(SymKind::kFloorDiv, *rest, b));
}

}  // namespace relax::shape_detail
