// min, max and select.
//
// min and max are associative and commutative, so a chain of them is
// simplified as one set of operands:
//   1. flatten nested min(min(a, b), c) into {a, b, c} (also after simplifying
//      each operand, which may itself become a min);
//   2. drop repeats and every operand another one provably dominates
//      (for min: a <= b proven by the interval of a - b drops b);
//   3. pull out what all operands share: common terms with equal coefficients,
//      and the smallest constant: min(n + 3, m + 1) -> min(n + 2, m) + 1;
//   4. rebuild the rest in structural order as a left-nested chain.
// select(c, a, b) picks a branch when c simplifies to a constant, and folds
// to a when both branches simplify to the same form.
#include <algorithm>

#include "shape/int_math.h"
#include "shape/simplify/simplify.h"

namespace relax::shape_detail {
namespace {

/// The operands of the tree of `kind` nodes at `e`, left to right (explicit stack: a
/// chain of any length flattens).
void flatten(const SymExpr& e, SymKind kind, std::vector<SymExpr>* out) {
  std::vector<const SymExpr*> stack = {&e};
  while (!stack.empty()) {
    const SymExpr* x = stack.back();
    stack.pop_back();
    if (x->kind() == kind) {
      stack.push_back(&x->operand(1));
      stack.push_back(&x->operand(0));
    } else {
      out->push_back(*x);
    }
  }
}

/// Terms present with the same coefficient in every operand, and the smallest constant.
Poly common_part(const std::vector<Poly>& operands) {
  std::vector<Term> shared = operands[0].terms();
  int64_t constant = operands[0].constant_term();
  for (size_t i = 1; i < operands.size(); ++i) {
    const std::vector<Term>& terms = operands[i].terms();
    std::erase_if(shared, [&](const Term& s) {
      return std::none_of(terms.begin(), terms.end(), [&](const Term& t) {
        return t.coeff == s.coeff && compare_monomials(t.atoms, s.atoms) == 0;
      });
    });
    constant = std::min(constant, operands[i].constant_term());
  }
  return *Poly::from_terms(std::move(shared), constant);
}

}  // namespace

Poly Simplifier::minmax_poly(const SymExpr& e) {
  const SymKind kind = e.kind();
  const bool is_min = kind == SymKind::kMin;
  std::vector<SymExpr> raw;
  flatten(e, kind, &raw);
  // Open every operand of the form chain + rest, where chain is a min (max)
  // with coefficient 1: min(min(a, b) + r, c) == min(a + r, b + r, c).
  std::vector<Poly> pending, operands;
  for (const SymExpr& operand : raw) pending.push_back(to_poly(operand));
  while (!pending.empty()) {
    Poly p = std::move(pending.back());
    pending.pop_back();
    const Term* chain = nullptr;
    for (const Term& t : p.terms()) {
      if (t.coeff == 1 && t.atoms.size() == 1 && t.atoms[0].kind() == kind) chain = &t;
    }
    std::optional<Poly> rest = chain ? Poly::add(p, Poly::atom(chain->atoms[0]), -1) : std::nullopt;
    std::vector<SymExpr> inner;
    if (rest) flatten(chain->atoms[0], kind, &inner);
    std::vector<Poly> opened;
    for (const SymExpr& x : inner) {
      auto shifted = Poly::add(to_poly(x), *rest);
      if (!shifted) break;
      opened.push_back(std::move(*shifted));
    }
    if (rest && opened.size() == inner.size()) {
      for (Poly& q : opened) pending.push_back(with_sum_rules(std::move(q)));
    } else {
      operands.push_back(std::move(p));
    }
  }
  std::reverse(operands.begin(), operands.end());

  // Drop repeats and dominated operands.
  std::vector<bool> dropped(operands.size(), false);
  for (size_t i = 0; i < operands.size(); ++i) {
    if (dropped[i]) continue;
    for (size_t j = 0; j < operands.size(); ++j) {
      if (i == j || dropped[j]) continue;
      if (same_poly(operands[i], operands[j])) {
        dropped[j] = true;
        continue;
      }
      // A constant at an end of int64 lies on one side of every value; bounds read those
      // ends as infinities and cannot tell (min(e, -9223372036854775808)).
      const auto end = [](const Poly& p, int64_t v) { return p.is_constant() && p.constant_term() == v; };
      if (end(operands[i], is_min ? kNegInf : kPosInf) || end(operands[j], is_min ? kPosInf : kNegInf)) {
        dropped[j] = true;
        continue;
      }
      auto diff = Poly::add(operands[i], operands[j], -1);  // i - j
      if (!diff) {
        // The difference overflows (max(e, n*-9223372036854775808)): compare the operands'
        // own intervals instead, which need no arithmetic.
        const ConstIntBound a = bound(operands[i]), b = bound(operands[j]);
        if (is_min ? a.max_value <= b.min_value : a.min_value >= b.max_value) dropped[j] = true;
        continue;
      }
      const ConstIntBound d = bound(*diff);
      if (is_min ? d.max_value <= 0 : d.min_value >= 0) dropped[j] = true;
    }
  }
  std::vector<Poly> kept;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!dropped[i]) kept.push_back(std::move(operands[i]));
  }
  if (kept.size() == 1) return kept[0];

  Poly common = common_part(kept);
  std::vector<SymExpr> parts;
  for (const Poly& p : kept) {
    auto part = Poly::add(p, common, -1);
    if (!part) {
      common = Poly::constant(0);
      parts.clear();
      for (const Poly& q : kept) flatten(q.to_expr(), kind, &parts);
      break;
    }
    // Taking out the common part can leave a bare chain of the same kind: open it.
    flatten(part->to_expr(), kind, &parts);
  }
  // Taking it out can also leave a constant at an end of int64 (min(n*c + m, n*c +
  // 9223372036854775807) leaves min(m, 9223372036854775807)): the dominating end decides,
  // the other drops out, as in the first round.
  const int64_t dominating = is_min ? kNegInf : kPosInf, neutral = is_min ? kPosInf : kNegInf;
  if (std::any_of(parts.begin(), parts.end(), [&](const SymExpr& x) { return x.is_const(dominating); })) {
    parts = {SymExpr(dominating)};
  }
  if (std::any_of(parts.begin(), parts.end(), [&](const SymExpr& x) { return !x.is_const(neutral); })) {
    std::erase_if(parts, [&](const SymExpr& x) { return x.is_const(neutral); });
  }
  std::sort(parts.begin(), parts.end(), SymExprLess());
  SymExpr chain = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) chain = SymExpr::make(kind, chain, parts[i]);
  const Poly rooted = chain.as_const() ? Poly::constant(*chain.as_const()) : rooted_atom(chain);
  auto result = Poly::add(common, rooted);
  return result ? *result : Poly::atom(chain);
}

Poly Simplifier::select_poly(const SymExpr& e) {
  const SymExpr cond = simplify_bool(e.operand(0));
  if (auto c = cond.as_const()) return to_poly(e.operand(*c ? 1 : 2));
  Poly a = to_poly(e.operand(1));
  Poly b = to_poly(e.operand(2));
  if (same_poly(a, b)) return a;
  return rooted_atom(select(cond, a.to_expr(), b.to_expr()));
}

}  // namespace relax::shape_detail
