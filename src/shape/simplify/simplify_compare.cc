// Comparisons and logic.
//
// Every comparison a OP b becomes one of  d <= 0,  d == 0,  d != 0  over the
// canonical d = a - b (integers: a < b is a - b + 1 <= 0):
//   a < b -> a - b + 1 <= 0     a <= b -> a - b <= 0
//   a > b -> b - a + 1 <= 0     a >= b -> b - a <= 0
// It is decided when the interval of d (see Simplifier::bound) or its modular
// set settles it. Otherwise d is divided by the gcd g of its coefficients
// (g*x + c <= 0 -> x + ceil(c/g) <= 0; g*x + c == 0 is false unless g divides c)
// and written with positive coefficients on each side and the constant on the
// side where it is positive: `n <= m + 3`, `3 <= n`, `n <= 4`, `n * 2 == m`;
// a positive constant c on the left of <= is written `P + (c - 1) < N`, so
// that `a < b` stays `a < b` (d's `+ 1` is never evaluated).
//
// Overflow. The written form is evaluated by generated code and run-time
// checks, so it must not overflow where the input did not. Moving a term or a
// constant to the other side can (a - 5 <= b -> a <= b + 5 at b = INT64_MAX),
// so the normal form is used only when each of its sides needs no arithmetic
// (a constant or one atom), is the canonical form of one of the input's sides,
// or provably stays inside int64 under the variable ranges; otherwise the
// comparison keeps each side where it was, in canonical form. The decision
// true/false never depends on this: it is exact arithmetic on intervals.
//
// Logic: constants fold, a && a -> a, a && !a -> false (likewise ||), ! pushes
// through comparisons and De Morgan. Operands of && and || keep their order,
// since evaluation short-circuits; chains of one operator are folded in a loop.
#include "absl/container/inlined_vector.h"
#include "shape/int_math.h"
#include "shape/simplify/simplify.h"

namespace relax::shape_detail {
namespace {

SymExpr decided(bool value) { return SymExpr::boolean(value); }

/// The two sides and the operator of a comparison in normal form.
struct Sides {
  SymKind kind;
  Poly lhs;
  Poly rhs;
};

/// `lhs OP rhs` for d OP 0 (OP is <=, == or !=): positive terms on the left,
/// negative ones on the right, and the constant where it reads best and never
/// grows. Alone on its side the constant moves across (n - 4 <= 0 reads
/// n <= 4, 3 - n <= 0 reads 3 <= n); otherwise it stays on the side where it
/// is positive, and for <= a positive constant c on the left is written
/// `P + (c - 1) < N`: the `+ 1` that d carries for a strict comparison is not
/// added (a < b stays a < b, not a + 1 <= b, which overflows at a = INT64_MAX).
Sides normal_sides(SymKind kind, const Poly& d) {
  std::vector<Term> left, right;
  for (const Term& t : d.terms()) {
    if (t.coeff > 0) {
      left.push_back(t);
    } else {
      right.push_back(Term{t.atoms, -t.coeff});  // INT64_MIN was ruled out by the caller
    }
  }
  const int64_t c = d.constant_term();  // never INT64_MIN (ruled out by the caller)
  const bool constant_left = right.empty() ? false : left.empty() ? true : c > 0;
  int64_t left_c = constant_left ? c : 0;
  const int64_t right_c = constant_left ? 0 : -c;
  if (kind == SymKind::kLE && !left.empty() && !right.empty() && left_c > 0) {
    kind = SymKind::kLT;
    --left_c;
  }
  return Sides{kind, *Poly::from_terms(std::move(left), left_c),
               *Poly::from_terms(std::move(right), right_c)};
}

/// Whether evaluating `q` needs no arithmetic: a constant, or one atom alone.
bool without_arithmetic(const Poly& q) {
  if (q.is_constant()) return true;
  return q.constant_term() == 0 && q.terms().size() == 1 && q.terms()[0].coeff == 1 &&
         q.terms()[0].atoms.size() == 1;
}

/// Whether no partial product or partial sum of q.to_expr() (Poly::to_expr's
/// order: positive terms, then the negative ones subtracted, then the constant)
/// can leave int64 when the variables lie in `ranges`.
bool overflow_free(const Poly& q, const VarRanges& ranges) {
  auto inside = [](const ConstIntBound& b) { return b.has_lower() && b.has_upper(); };
  std::optional<ConstIntBound> sum;
  auto add = [&](const ConstIntBound& b) {
    sum = sum ? interval_add(*sum, b) : b;
    return inside(*sum);
  };
  for (const bool positive : {true, false}) {
    for (const Term& t : q.terms()) {
      if ((t.coeff > 0) != positive) continue;
      ConstIntBound product = interval_of(t.atoms[0], ranges);
      for (size_t i = 1; i < t.atoms.size(); ++i) {
        product = interval_mul(product, interval_of(t.atoms[i], ranges));
        if (!inside(product)) return false;
      }
      if (t.coeff != 1) {
        product = interval_scale(product, t.coeff);
        if (!inside(product)) return false;
      }
      if (!add(product)) return false;
    }
  }
  return q.constant_term() == 0 || !sum || add(interval_const(q.constant_term()));
}

/// The kind that `!(a kind b)` is.
SymKind negated_kind(SymKind kind) { return sym_kind_info(kind).negated; }

}  // namespace

SymExpr Simplifier::simplify_bool(const SymExpr& e) {
  const WalkDepth level(depth_);
  if (level.too_deep()) return e;
  if (auto it = bool_memo_.find(e.get()); it != bool_memo_.end()) return it->second.second;
  SymExpr result = simplify_bool_uncached(e);
  bool_memo_.try_emplace(e.get(), e, result);
  return result;
}

SymExpr Simplifier::simplify_bool_uncached(const SymExpr& e) {
  if (e.dtype().lanes != 1) return simplify_vector(e);
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
  SymExpr normal = compare_normal(kind, a, b);
  if (is_comparison(normal.kind())) {
    if (std::optional<SymExpr> rewritten = apply_rules(normal)) return *rewritten;
  }
  return normal;
}

SymExpr Simplifier::compare_normal(SymKind kind, const SymExpr& a, const SymExpr& b) {
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
      // (c % g, not floor_div(c, g) * g != c: the product overflows for c near INT64_MIN)
      constant = floor_div(c, g);
      if (c % g != 0) ++constant;
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
  // The normal form moves terms and constants between the sides, which can overflow
  // where the input did not (a - 5 <= b becomes a <= b + 5, which fails at
  // b = INT64_MAX). Each side must need no arithmetic, be the canonical form of an
  // input side, or be proven by the ranges to stay inside int64; otherwise the
  // comparison keeps its sides where they were, each in canonical form.
  const Sides sides = normal_sides(normal, *normal_d);
  auto safe = [&](const Poly& side) {
    return without_arithmetic(side) || same_poly(side, pa) || same_poly(side, pb) ||
           overflow_free(side, ranges_);
  };
  if (!safe(sides.lhs) || !safe(sides.rhs)) return SymExpr::make(kind, pa.to_expr(), pb.to_expr());
  return SymExpr::make(sides.kind, sides.lhs.to_expr(), sides.rhs.to_expr());
}

SymExpr Simplifier::logic(const SymExpr& e) {
  if (e.kind() == SymKind::kNot) return negate(simplify_bool(e.operand(0)));
  const SymKind kind = e.kind();
  // A chain a && b && c ... (left operands of the same kind) is folded left to right in
  // a loop, as the recursion over its left operands would: ((a && b) && c) && ...
  absl::InlinedVector<const SymExpr*, 8> chain;
  for (const SymExpr* x = &e; x->kind() == kind; x = &x->operand(0)) chain.push_back(x);
  SymExpr a = simplify_bool(chain.back()->operand(0));
  for (size_t i = chain.size(); i-- > 0;) {
    a = combine_logic(kind, a, simplify_bool(chain[i]->operand(1)));
  }
  return a;
}

SymExpr Simplifier::combine_logic(SymKind kind, const SymExpr& a, const SymExpr& b) {
  const bool is_and = kind == SymKind::kAnd;
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
  // a against the negation of b, for a b whose negation is one node (a comparison):
  // negating an && / || chain rebuilds and re-simplifies it, and doing that at every
  // link of a chain costs time exponential in its length.
  const bool cheap_negation = b.kind() != SymKind::kAnd && b.kind() != SymKind::kOr &&
                              b.kind() != SymKind::kNot;
  if (cheap_negation && structural_equal(a, negate(b))) return decided(!is_and);
  // Operands keep their order: evaluation short-circuits, so `m != 0 && floordiv(x, m) < 4`
  // must not become a form that divides first.
  SymExpr both = SymExpr::make(kind, a, b);
  if (std::optional<SymExpr> rewritten = apply_rules(both)) return *rewritten;
  return both;
}

SymExpr Simplifier::negate(const SymExpr& cond) {
  const WalkDepth level(depth_);
  if (level.too_deep()) return !cond;
  if (auto it = negate_memo_.find(cond.get()); it != negate_memo_.end()) return it->second.second;
  SymExpr result = negate_uncached(cond);
  negate_memo_.try_emplace(cond.get(), cond, result);
  return result;
}

SymExpr Simplifier::negate_uncached(const SymExpr& cond) {
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
