// Comparisons and logic.
//
// Every comparison a OP b becomes one of  d <= 0,  d == 0,  d != 0  over the
// canonical d = a - b (integers: a < b is a - b + 1 <= 0):
//   a < b -> a - b + 1 <= 0     a <= b -> a - b <= 0
//   a > b -> b - a + 1 <= 0     a >= b -> b - a <= 0
// It is decided when the interval of d (see Simplifier::bound) or its modular
// set settles it. Otherwise d is divided by the gcd g of its coefficients
// (g*x + c <= 0 -> x + ceil(c/g) <= 0; g*x + c == 0 is false unless g divides c)
// and printed with positive coefficients on each side and the constant on the
// side where it is positive: `n <= m + 3`, `3 <= n`, `n <= 4`, `n * 2 == m`.
// Logic: constants fold, a && a -> a, a && !a -> false (likewise ||), ! pushes
// through comparisons and De Morgan. Operands of && and || keep their order,
// since evaluation short-circuits.
#include "int_math.h"
#include "simplify.h"

namespace relax::shape_detail {
namespace {

SymExpr decided(bool value) { return SymExpr::boolean(value); }

/// `lhs OP rhs` for d OP 0: positive terms on the left, negative ones on the
/// right, and the constant where it reads best (`n <= 4`, `3 <= n`, `n + 2 <= m`).
SymExpr normal_comparison(SymKind kind, const Poly& d) {
  std::vector<Term> left, right;
  for (const Term& t : d.terms()) {
    if (t.coeff > 0) {
      left.push_back(t);
    } else {
      right.push_back(Term{t.atoms, -t.coeff});  // INT64_MIN was ruled out by the caller
    }
  }
  const int64_t c = d.constant_term();
  // Alone on its side the constant moves across (n - 4 <= 0 reads n <= 4);
  // otherwise it stays on the side where it is positive.
  const bool constant_left = right.empty() ? false : left.empty() ? true : c > 0;
  const int64_t left_c = constant_left ? c : 0;
  const int64_t right_c = constant_left ? 0 : -c;
  const Poly lhs = *Poly::from_terms(std::move(left), left_c);
  const Poly rhs = *Poly::from_terms(std::move(right), right_c);
  return SymExpr::make(kind, lhs.to_expr(), rhs.to_expr());
}

/// The kind that `!(a kind b)` is.
SymKind negated_kind(SymKind kind) {
  switch (kind) {
    case SymKind::kEQ:
      return SymKind::kNE;
    case SymKind::kNE:
      return SymKind::kEQ;
    case SymKind::kLT:
      return SymKind::kGE;
    case SymKind::kLE:
      return SymKind::kGT;
    case SymKind::kGT:
      return SymKind::kLE;
    default:
      return SymKind::kLT;  // kGE
  }
}

bool is_comparison(SymKind kind) { return kind >= SymKind::kEQ && kind <= SymKind::kGE; }

}  // namespace

SymExpr Simplifier::simplify_bool(const SymExpr& e) {
  switch (e.kind()) {
    case SymKind::kIntImm:
      return e;
    case SymKind::kAnd:
    case SymKind::kOr:
    case SymKind::kNot:
      return logic(e);
    default:
      break;
  }
  if (is_comparison(e.kind()) && e.operand(0).dtype() == DataType::int64()) {
    return compare(e.kind(), e.operand(0), e.operand(1));
  }
  // Comparisons of other dtypes, bool variables, casts to bool, loads of bools.
  return simplify_operands(e);
}

SymExpr Simplifier::compare(SymKind kind, const SymExpr& a, const SymExpr& b) {
  const Poly pa = to_poly(a), pb = to_poly(b);
  // Bring every kind to d <= 0, d == 0 or d != 0.
  const bool swap = kind == SymKind::kGT || kind == SymKind::kGE;
  const int64_t offset = (kind == SymKind::kLT || kind == SymKind::kGT) ? 1 : 0;
  std::optional<Poly> d = swap ? Poly::add(pb, pa, -1) : Poly::add(pa, pb, -1);
  if (d && offset != 0) d = Poly::add(*d, Poly::constant(offset));
  auto has_min_int = [](const Poly& p) {
    if (p.constant_term() == kNegInf) return true;
    for (const Term& t : p.terms()) {
      if (t.coeff == kNegInf) return true;
    }
    return false;
  };
  // Normalising negates coefficients, which INT64_MIN does not survive.
  if (!d || has_min_int(*d)) return SymExpr::make(kind, pa.to_expr(), pb.to_expr());
  const SymKind normal = kind == SymKind::kEQ || kind == SymKind::kNE ? kind : SymKind::kLE;

  const ConstIntBound r = bound(*d);
  if (normal == SymKind::kLE) {
    if (r.max_value <= 0) return decided(true);
    if (r.min_value > 0) return decided(false);
  } else {
    const bool is_eq = normal == SymKind::kEQ;
    if (r.min_value == 0 && r.max_value == 0) return decided(is_eq);
    if (r.min_value > 0 || r.max_value < 0) return decided(!is_eq);
    const ModularSet m = modular(*d);
    if (m.base != 0) return decided(!is_eq);  // d == base (mod coeff) with base != 0
  }

  // Divide by the content of the terms.
  const int64_t g = d->term_content();
  const int64_t c = d->constant_term();
  std::vector<Term> terms = d->terms();
  int64_t constant = c;
  if (g > 1) {
    for (Term& t : terms) t.coeff /= g;
    if (normal == SymKind::kLE) {
      // g*x + c <= 0 over integers  <=>  x + ceil(c/g) <= 0
      constant = floor_div(c, g);
      if (constant * g != c) ++constant;
    } else {
      if (c % g != 0) return decided(normal == SymKind::kNE);
      constant = c / g;
    }
  }
  if (normal != SymKind::kLE && !terms.empty() && terms[0].coeff < 0) {
    // d == 0 and -d == 0 are the same equation: keep the first coefficient positive.
    for (Term& t : terms) t.coeff = -t.coeff;
    constant = -constant;
  }
  auto normal_d = Poly::from_terms(std::move(terms), constant);
  if (!normal_d) return SymExpr::make(kind, pa.to_expr(), pb.to_expr());
  return normal_comparison(normal, *normal_d);
}

SymExpr Simplifier::logic(const SymExpr& e) {
  if (e.kind() == SymKind::kNot) return negate(simplify_bool(e.operand(0)));
  const bool is_and = e.kind() == SymKind::kAnd;
  SymExpr a = simplify_bool(e.operand(0));
  SymExpr b = simplify_bool(e.operand(1));
  // The absorbing value (false for &&) decides; the neutral one drops out.
  for (const SymExpr* x : {&a, &b}) {
    if (auto c = x->as_const(); c && (*c != 0) != is_and) return decided(!is_and);
  }
  if (a.as_const()) return b;
  if (b.as_const()) return a;
  if (structural_equal(a, b)) return a;
  auto is_negation = [](const SymExpr& x, const SymExpr& y) {
    return x.kind() == SymKind::kNot && structural_equal(x.operand(0), y);
  };
  if (is_negation(a, b) || is_negation(b, a)) return decided(!is_and);
  if (structural_equal(a, negate(b))) return decided(!is_and);
  // Operands keep their order: evaluation short-circuits, so `m != 0 && floordiv(x, m) < 4`
  // must not become a form that divides first.
  return SymExpr::make(e.kind(), a, b);
}

SymExpr Simplifier::negate(const SymExpr& cond) {
  if (auto c = cond.as_const()) return decided(*c == 0);
  if (is_comparison(cond.kind()) && cond.operand(0).dtype() == DataType::int64()) {
    return compare(negated_kind(cond.kind()), cond.operand(0), cond.operand(1));
  }
  if (is_comparison(cond.kind()) && cond.operand(0).dtype().is_int()) {
    // Other integer widths are not canonicalised, but their order is total.
    return SymExpr::make(negated_kind(cond.kind()), cond.operand(0), cond.operand(1));
  }
  switch (cond.kind()) {
    case SymKind::kNot:
      return cond.operand(0);
    case SymKind::kAnd:  // De Morgan
      return logic(!cond.operand(0) || !cond.operand(1));
    case SymKind::kOr:
      return logic(!cond.operand(0) && !cond.operand(1));
    default:
      return !cond;
  }
}

}  // namespace relax::shape_detail
