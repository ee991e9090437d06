// Poly arithmetic: merge-sorted sums, distributed products, and the
// conversion back to a SymExpr in canonical order.
#include "shape/poly.h"

#include <algorithm>

#include "shape/int_math.h"

namespace relax::shape_detail {

int compare_monomials(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (int c = structural_compare(a[i], b[i]); c != 0) return c;
  }
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return 0;
}

SymExpr monomial_expr(const std::vector<SymExpr>& atoms) {
  if (atoms.empty()) return SymExpr(1);
  SymExpr product = atoms[0];
  for (size_t i = 1; i < atoms.size(); ++i) product = product * atoms[i];
  return product;
}

Poly Poly::constant(int64_t value) {
  Poly p;
  p.constant_ = value;
  return p;
}

Poly Poly::atom(const SymExpr& atom) {
  Poly p;
  p.terms_.push_back(Term{{atom}, 1});
  return p;
}

std::optional<SymExpr> Poly::as_atom() const {
  if (constant_ == 0 && terms_.size() == 1 && terms_[0].coeff == 1 && terms_[0].atoms.size() == 1) {
    return terms_[0].atoms[0];
  }
  return std::nullopt;
}

std::optional<Poly> Poly::add(const Poly& a, const Poly& b, int64_t scale) {
  Poly out;
  auto c = checked_mul(b.constant_, scale);
  if (!c) return std::nullopt;
  auto constant = checked_add(a.constant_, *c);
  if (!constant) return std::nullopt;
  out.constant_ = *constant;
  out.terms_.reserve(a.terms_.size() + b.terms_.size());
  size_t i = 0, j = 0;
  while (i < a.terms_.size() || j < b.terms_.size()) {
    int order = 0;
    if (i == a.terms_.size())
      order = 1;
    else if (j == b.terms_.size())
      order = -1;
    else
      order = compare_monomials(a.terms_[i].atoms, b.terms_[j].atoms);
    if (order < 0) {
      out.terms_.push_back(a.terms_[i++]);
      continue;
    }
    auto scaled = checked_mul(b.terms_[j].coeff, scale);
    if (!scaled) return std::nullopt;
    if (order > 0) {
      out.terms_.push_back(Term{b.terms_[j++].atoms, *scaled});
      continue;
    }
    auto sum = checked_add(a.terms_[i].coeff, *scaled);
    if (!sum) return std::nullopt;
    if (*sum != 0) out.terms_.push_back(Term{a.terms_[i].atoms, *sum});
    ++i;
    ++j;
  }
  return out;
}

std::optional<Poly> Poly::scaled(int64_t k) const {
  if (k == 0) return Poly::constant(0);
  Poly out = *this;
  auto c = checked_mul(constant_, k);
  if (!c) return std::nullopt;
  out.constant_ = *c;
  for (Term& t : out.terms_) {
    auto v = checked_mul(t.coeff, k);
    if (!v) return std::nullopt;
    t.coeff = *v;
  }
  return out;
}

std::optional<Poly> Poly::from_terms(std::vector<Term> terms, int64_t constant) {
  for (Term& t : terms) std::sort(t.atoms.begin(), t.atoms.end(), SymExprLess());
  std::sort(terms.begin(), terms.end(),
            [](const Term& x, const Term& y) { return compare_monomials(x.atoms, y.atoms) < 0; });
  Poly out;
  out.constant_ = constant;
  for (Term& t : terms) {
    if (t.atoms.empty()) {  // a term over no atoms is a constant
      auto sum = checked_add(out.constant_, t.coeff);
      if (!sum) return std::nullopt;
      out.constant_ = *sum;
      continue;
    }
    if (!out.terms_.empty() && compare_monomials(out.terms_.back().atoms, t.atoms) == 0) {
      auto sum = checked_add(out.terms_.back().coeff, t.coeff);
      if (!sum) return std::nullopt;
      out.terms_.back().coeff = *sum;
      if (*sum == 0) out.terms_.pop_back();
      continue;
    }
    if (t.coeff != 0) out.terms_.push_back(std::move(t));
  }
  return out;
}

std::optional<Poly> Poly::mul(const Poly& a, const Poly& b) {
  if (a.is_constant()) return b.scaled(a.constant_);
  if (b.is_constant()) return a.scaled(b.constant_);
  const size_t a_n = a.terms_.size() + (a.constant_ != 0);
  const size_t b_n = b.terms_.size() + (b.constant_ != 0);
  if (a_n * b_n > kMaxTerms) return std::nullopt;
  std::vector<Term> terms;
  terms.reserve(a_n * b_n);
  auto push = [&](std::vector<SymExpr> atoms, int64_t x, int64_t y) {
    auto coeff = checked_mul(x, y);
    if (!coeff) return false;
    terms.push_back(Term{std::move(atoms), *coeff});
    return true;
  };
  for (const Term& s : a.terms_) {
    for (const Term& t : b.terms_) {
      std::vector<SymExpr> atoms;
      atoms.reserve(s.atoms.size() + t.atoms.size());
      std::merge(s.atoms.begin(), s.atoms.end(), t.atoms.begin(), t.atoms.end(),
                 std::back_inserter(atoms), SymExprLess());
      if (!push(std::move(atoms), s.coeff, t.coeff)) return std::nullopt;
    }
    if (b.constant_ != 0 && !push(s.atoms, s.coeff, b.constant_)) return std::nullopt;
  }
  if (a.constant_ != 0) {
    for (const Term& t : b.terms_) {
      if (!push(t.atoms, a.constant_, t.coeff)) return std::nullopt;
    }
  }
  auto constant = checked_mul(a.constant_, b.constant_);
  if (!constant) return std::nullopt;
  return from_terms(std::move(terms), *constant);
}

int64_t Poly::term_content() const {
  int64_t g = 0;
  for (const Term& t : terms_) {
    if (t.coeff == kNegInf) return 1;
    g = gcd(g, t.coeff);
  }
  return g;
}

int64_t Poly::content() const {
  if (constant_ == kNegInf) return 1;
  return gcd(term_content(), constant_);
}

SymExpr Poly::to_expr() const {
  auto term_expr = [](const Term& t, int64_t coeff) {
    SymExpr e = monomial_expr(t.atoms);
    return coeff == 1 ? e : e * SymExpr(coeff);
  };
  SymExpr sum;
  for (const Term& t : terms_) {
    if (t.coeff > 0) sum = sum.defined() ? sum + term_expr(t, t.coeff) : term_expr(t, t.coeff);
  }
  // With no positive term, a constant leads: `5 - n`, not `n * -1 + 5`, and `-5 - n`,
  // not `n * -1 - 5` (whose `n * -1` overflows at n = INT64_MIN where -5 - n does not).
  const bool constant_leads = !sum.defined() && constant_ != 0;
  if (constant_leads) sum = SymExpr(constant_);
  for (const Term& t : terms_) {
    if (t.coeff >= 0) continue;
    if (!sum.defined()) {
      sum = term_expr(t, t.coeff);  // a leading negative term: `n * -1`
    } else if (t.coeff == kNegInf) {
      sum = sum + term_expr(t, t.coeff);  // -INT64_MIN does not exist
    } else {
      sum = sum - term_expr(t, -t.coeff);
    }
  }
  if (!sum.defined()) return SymExpr(constant_);
  if (constant_leads) return sum;
  if (constant_ > 0) return sum + SymExpr(constant_);
  if (constant_ < 0) {
    return constant_ == kNegInf ? sum + SymExpr(constant_) : sum - SymExpr(-constant_);
  }
  return sum;
}

bool same_poly(const Poly& a, const Poly& b) {
  if (a.constant_term() != b.constant_term() || a.terms().size() != b.terms().size()) return false;
  for (size_t i = 0; i < a.terms().size(); ++i) {
    if (a.terms()[i].coeff != b.terms()[i].coeff ||
        compare_monomials(a.terms()[i].atoms, b.terms()[i].atoms) != 0)
      return false;
  }
  return true;
}

std::optional<std::vector<SymExpr>> remove_atoms(const std::vector<SymExpr>& big,
                                                 const std::vector<SymExpr>& small) {
  std::vector<SymExpr> rest;
  size_t j = 0;
  for (const SymExpr& atom : big) {
    if (j < small.size() && structural_compare(atom, small[j]) == 0) {
      ++j;
    } else {
      rest.push_back(atom);
    }
  }
  if (j != small.size()) return std::nullopt;
  return rest;
}

namespace {

// The leading term of `p` (its constant counting as a term over no atoms) in the
// graded order: more atoms first, then compare_monomials. The order is kept by
// multiplication (m1 < m2 implies m1*m < m2*m), so the leading term of a product
// is the product of the leading terms: what makes the division below exact.
std::optional<Term> leading_term(const Poly& p) {
  const Term* best = nullptr;
  for (const Term& t : p.terms()) {
    if (best == nullptr || t.atoms.size() > best->atoms.size() ||
        (t.atoms.size() == best->atoms.size() && compare_monomials(t.atoms, best->atoms) > 0)) {
      best = &t;
    }
  }
  if (best != nullptr) return *best;
  if (p.constant_term() != 0) return Term{{}, p.constant_term()};
  return std::nullopt;
}

}  // namespace

std::optional<Poly> exact_divide(const Poly& a, const Poly& b) {
  const std::optional<Term> divisor = leading_term(b);
  if (!divisor) return std::nullopt;  // b == 0
  // If a == q * b then lead(a) == lead(q) * lead(b): peel lead(q) off the
  // remainder one term at a time; a remainder whose leading term lead(b) does not
  // divide proves that no polynomial q exists.
  std::vector<Term> quotient;
  Poly rest = a;
  while (std::optional<Term> lead = leading_term(rest)) {
    if (quotient.size() >= Poly::kMaxTerms) return std::nullopt;
    if ((lead->coeff == kNegInf && divisor->coeff == -1) || lead->coeff % divisor->coeff != 0) {
      return std::nullopt;
    }
    std::optional<std::vector<SymExpr>> atoms = remove_atoms(lead->atoms, divisor->atoms);
    if (!atoms) return std::nullopt;
    Term step{std::move(*atoms), lead->coeff / divisor->coeff};
    std::optional<Poly> step_poly = Poly::from_terms({step}, 0);
    std::optional<Poly> product = step_poly ? Poly::mul(*step_poly, b) : std::nullopt;
    std::optional<Poly> next = product ? Poly::add(rest, *product, -1) : std::nullopt;
    if (!next) return std::nullopt;
    rest = std::move(*next);
    quotient.push_back(std::move(step));
  }
  return Poly::from_terms(std::move(quotient), 0);
}

}  // namespace relax::shape_detail
