// Simplifier driver: dispatch by node kind, sums and products as Polys, and
// the intervals of canonical forms.
//
// Sums and products are opened completely (products distribute over sums up
// to Poly::kMaxTerms terms), so equal polynomials over the same atoms meet in
// one form: `b*n*32*128` and `b*(n*4096)` both become `b * n * 4096`. When a
// coefficient would overflow int64, the node is kept as written (its operands
// simplified) rather than risk a wrong value.
#include "shape/simplify/simplify.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"

#include "shape/bounds/constraints.h"
#include "shape/dtype_util.h"
#include "shape/int_math.h"
#include "relax/support/check.h"

namespace relax::shape_detail {
namespace {

bool is_float_dtype(DataType t) { return t.is_float(); }

bool is_const_divisor_atom(const SymExpr& atom, SymKind kind) {
  if (atom.kind() != kind) return false;
  auto d = atom.operand(1).as_const();
  return d && *d > 0;
}

}  // namespace

SymExpr Simplifier::simplify(const SymExpr& e) {
  // Vectors are not simplified algebraically: their scalar parts (a ramp's base and
  // stride, a broadcast value, scalar load indices) are, and the node is rebuilt.
  if (e.dtype().lanes != 1) return simplify_vector(e);
  if (e.dtype().is_bool()) return simplify_bool(e);
  if (e.dtype() == DataType::int64()) return to_poly(e).to_expr();
  return simplify_operands(e);
}

SymExpr Simplifier::simplify_vector(const SymExpr& e) {
  const WalkDepth level(depth_);
  if (level.too_deep()) return e;
  std::vector<SymExpr> operands;
  operands.reserve(e.num_operands());
  for (size_t i = 0; i < e.num_operands(); ++i) operands.push_back(simplify(e.operand(i)));
  return e.with_operands(std::move(operands));
}

SymExpr Simplifier::simplify_operands(const SymExpr& e) {
  const WalkDepth level(depth_);
  if (level.too_deep()) return e;
  switch (e.kind()) {
    case SymKind::kIntImm:
    case SymKind::kVar:
    case SymKind::kFloatImm:
      return e;
    case SymKind::kSelect: {
      const SymExpr cond = simplify_bool(e.operand(0));
      if (auto c = cond.as_const()) return simplify(e.operand(*c ? 1 : 2));
      return e.with_operands({cond, simplify(e.operand(1)), simplify(e.operand(2))});
    }
    case SymKind::kCast: {
      const SymExpr x = simplify(e.operand(0));
      const DataType t = e.dtype();
      if (x.dtype() == t) return x;
      if (auto c = x.as_const(); c && !is_float_dtype(t)) {
        return t.is_bool() ? SymExpr::boolean(*c != 0) : SymExpr::int_imm(shape_detail::wrap_to(*c, t), t);
      }
      return e.with_operands({x});
    }
    default:
      break;
  }
  std::vector<SymExpr> operands;
  operands.reserve(e.num_operands());
  for (size_t i = 0; i < e.num_operands(); ++i) operands.push_back(simplify(e.operand(i)));
  return e.with_operands(std::move(operands));
}

Poly Simplifier::to_poly(const SymExpr& e) {
  RELAX_CHECK(e.dtype() == DataType::int64())
      << "to_poly of `" << e << "`, of dtype " << e.dtype() << " (only int64 has a Poly)";
  const WalkDepth level(depth_);
  if (level.too_deep()) return e.as_const() ? Poly::constant(*e.as_const()) : Poly::atom(e);
  if (auto it = poly_memo_.find(e.get()); it != poly_memo_.end()) return it->second.second;
  Poly p = to_poly_uncached(e);
  poly_memo_.try_emplace(e.get(), e, p);
  // An atom the result holds is canonical: reading it again gives the same Poly.
  if (auto atom = p.as_atom(); atom && !atom->same_as(e)) poly_memo_.try_emplace(atom->get(), *atom, p);
  return p;
}

Poly Simplifier::to_poly_uncached(const SymExpr& e) {
  switch (e.kind()) {
    case SymKind::kIntImm:
      return Poly::constant(e->value());
    case SymKind::kVar:
      return Poly::atom(e);
    case SymKind::kAdd:
    case SymKind::kSub:
      return sum_poly(e);
    case SymKind::kMul:
      return product_poly(e);
    case SymKind::kFloorDiv:
      return floordiv_poly(to_poly(e.operand(0)), to_poly(e.operand(1)));
    case SymKind::kFloorMod:
      return floormod_poly(to_poly(e.operand(0)), to_poly(e.operand(1)));
    case SymKind::kMin:
    case SymKind::kMax:
      return minmax_poly(e);
    case SymKind::kSelect:
      return select_poly(e);
    case SymKind::kCast:
      // An int64 value cast to int64 is itself.
      if (e.operand(0).dtype() == DataType::int64()) return to_poly(e.operand(0));
      [[fallthrough]];
    case SymKind::kCall:
    case SymKind::kBufferLoad: {
      SymExpr rebuilt = simplify_operands(e);
      if (auto c = rebuilt.as_const()) return Poly::constant(*c);
      return Poly::atom(rebuilt);
    }
    default:
      break;
  }
  RELAX_CHECK(false) << "to_poly of an unexpected " << sym_kind_name(e.kind()) << " `" << e << "`";
  return Poly();
}

namespace {

/// The nodes of the chain of `kinds` that starts at `e` and continues through
/// left operands, outermost first: for `a + b - c` the `-` node, then the `+`.
template <typename IsLink>
absl::InlinedVector<const SymExpr*, 8> left_chain(const SymExpr& e, IsLink is_link) {
  absl::InlinedVector<const SymExpr*, 8> chain;
  for (const SymExpr* x = &e; is_link(*x); x = &x->operand(0)) chain.push_back(x);
  return chain;
}

bool is_sum(const SymExpr& e) { return e.kind() == SymKind::kAdd || e.kind() == SymKind::kSub; }
bool is_product(const SymExpr& e) { return e.kind() == SymKind::kMul; }

}  // namespace

Poly Simplifier::sum_poly(const SymExpr& e) {
  // A chain a + b - c + ... is read in a loop: its left operands are sums too.
  const auto chain = left_chain(e, is_sum);
  const SymExpr& first = chain.back()->operand(0);
  std::vector<Poly> parts;  // the operand Polys, left to right, signs applied
  parts.reserve(chain.size() + 1);
  parts.push_back(to_poly(first));
  bool fits = true;
  for (size_t i = chain.size(); i-- > 0;) {
    Poly b = to_poly(chain[i]->operand(1));
    if (chain[i]->kind() == SymKind::kSub) {
      auto negated = b.scaled(-1);
      fits = fits && negated.has_value();
      parts.push_back(negated ? std::move(*negated) : std::move(b));
    } else {
      parts.push_back(std::move(b));
    }
  }
  // All terms at once, sorted and merged once: n terms cost n log n, where adding
  // them one by one would copy the growing sum n times.
  if (fits) {
    std::vector<Term> terms;
    int64_t constant = 0;
    for (const Poly& p : parts) {
      auto c = checked_add(constant, p.constant_term());
      if (!c) {
        fits = false;
        break;
      }
      constant = *c;
      terms.insert(terms.end(), p.terms().begin(), p.terms().end());
    }
    if (fits) {
      if (auto sum = Poly::from_terms(std::move(terms), constant)) {
        return with_sum_rules(merge_divmod(std::move(*sum)));
      }
    }
  }
  // A coefficient overflows somewhere: add left to right, keeping a node as written
  // (its operands simplified) where its own sum overflows. Re-reading the operands
  // keeps the sign of a subtraction on the node.
  Poly acc = std::move(parts[0]);
  for (size_t i = chain.size(); i-- > 0;) {
    const SymExpr& node = *chain[i];
    const Poly b = to_poly(node.operand(1));
    const int64_t sign = node.kind() == SymKind::kAdd ? 1 : -1;
    if (auto sum = Poly::add(acc, b, sign)) {
      acc = merge_divmod(std::move(*sum));
    } else {
      acc = Poly::atom(SymExpr::make(node.kind(), acc.to_expr(), b.to_expr()));
    }
  }
  return with_sum_rules(std::move(acc));
}

Poly Simplifier::with_sum_rules(Poly p) {
  // Each rewrite makes the sum smaller (rewrite_measure), so this ends.
  while (std::optional<Poly> rewritten = apply_sum_rules(p)) p = merge_divmod(std::move(*rewritten));
  return p;
}

Poly Simplifier::rooted_atom(const SymExpr& e) {
  if (std::optional<SymExpr> rewritten = apply_rules(e)) return to_poly(*rewritten);
  return Poly::atom(e);
}

Poly Simplifier::product_poly(const SymExpr& e) {
  // A chain a * b * c * ... (the form of a simplified monomial) is read in a loop.
  const auto chain = left_chain(e, is_product);
  Poly acc = to_poly(chain.back()->operand(0));
  for (size_t i = chain.size(); i-- > 0;) {
    const Poly b = to_poly(chain[i]->operand(1));
    if (auto product = Poly::mul(acc, b)) {
      acc = std::move(*product);
    } else {
      acc = Poly::atom(acc.to_expr() * b.to_expr());
    }
  }
  return with_sum_rules(std::move(acc));
}

Poly Simplifier::merge_divmod(Poly p) {
  // Look for k*floormod(x, c) next to (k*c)*floordiv(x, c): together they are k*x.
  // After each merge, look again (the merged sum may hold a new pair).
  while (true) {
    std::optional<Poly> merged = merge_one_divmod(p);
    if (!merged) return p;
    p = std::move(*merged);
  }
}

std::optional<Poly> Simplifier::merge_one_divmod(const Poly& p) {
  for (const Term& mod_term : p.terms()) {
    if (mod_term.atoms.size() != 1 || !is_const_divisor_atom(mod_term.atoms[0], SymKind::kFloorMod))
      continue;
    const SymExpr& mod = mod_term.atoms[0];
    const int64_t c = *mod.operand(1).as_const();
    auto div_coeff = checked_mul(mod_term.coeff, c);
    if (!div_coeff) continue;
    for (const Term& div_term : p.terms()) {
      if (div_term.atoms.size() != 1 || div_term.coeff != *div_coeff) continue;
      const SymExpr& div = div_term.atoms[0];
      if (div.kind() != SymKind::kFloorDiv || !structural_equal(div.operand(0), mod.operand(0)) ||
          !structural_equal(div.operand(1), mod.operand(1)))
        continue;
      // p - k*mod - k*c*div + k*x
      Poly both = Poly::atom(mod);
      auto with_div = Poly::add(both, Poly::atom(div), c);
      auto x_scaled = to_poly(mod.operand(0)).scaled(mod_term.coeff);
      auto minus_coeff = checked_neg(mod_term.coeff);
      if (!with_div || !x_scaled || !minus_coeff) return std::nullopt;
      auto without = Poly::add(p, *with_div, *minus_coeff);
      if (!without) return std::nullopt;
      return Poly::add(*without, *x_scaled);
    }
  }
  return std::nullopt;
}

ConstIntBound Simplifier::term_interval(const Poly& p) {
  // The terms and partial sums are never evaluated: IntervalSum keeps them exact.
  IntervalSum sum(p.constant_term());
  for (const Term& t : p.terms()) {
    ConstIntBound product = ConstIntBound::exactly(1);
    for (const SymExpr& atom : t.atoms) product = interval_mul(product, interval_of(atom, ranges_));
    sum.add(product, t.coeff);
  }
  return sum.total();
}

ConstIntBound Simplifier::bound(const Poly& p) {
  ConstIntBound result = term_interval(p);
  if (result.is_const()) return result;
  for (bool expand_div : {true, false}) {
    if (auto view = expand_divmod(*this, p, expand_div)) {
      result = interval_intersect(result, term_interval(*view));
    }
  }
  // k*min(a, b) + r lies at or below k*a + r and k*b + r when k > 0 (at or
  // above when k < 0; the other way round for max), so each operand gives a
  // bound on one side: this proves min(n, m) <= n.
  for (const Term& t : p.terms()) {
    if (t.atoms.size() != 1) continue;
    const SymExpr& atom = t.atoms[0];
    if (atom.kind() != SymKind::kMin && atom.kind() != SymKind::kMax) continue;
    const bool bounds_upper = (atom.kind() == SymKind::kMin) == (t.coeff > 0);
    auto minus_coeff = checked_neg(t.coeff);
    auto rest = minus_coeff ? Poly::add(p, Poly::atom(atom), *minus_coeff) : std::nullopt;
    if (!rest) continue;
    for (size_t i = 0; i < 2; ++i) {
      auto view = Poly::add(*rest, to_poly(atom.operand(i)), t.coeff);
      if (!view) continue;
      const ConstIntBound v = term_interval(*view);
      if (bounds_upper) {
        result.max_value = std::min(result.max_value, v.max_value);
      } else {
        result.min_value = std::max(result.min_value, v.min_value);
      }
    }
  }
  // A product of atoms, one of them a with constant bounds [lo, hi] and the rest R of known
  // sign: k*a*R lies between k*lo*R and k*hi*R, so replacing a by one of its ends gives a
  // view that bounds p on one side, and whose terms can cancel against others: with x in
  // [0, c] and y >= 0, x*y - c*x - c*y is at most c*y - c*x - c*y = -c*x <= 0.
  for (const bool upper : {true, false}) {
    if (auto view = product_end_view(p, upper)) {
      const ConstIntBound v = term_interval(*view);
      if (upper) {
        result.max_value = std::min(result.max_value, v.max_value);
      } else {
        result.min_value = std::max(result.min_value, v.min_value);
      }
    }
  }
  return facts_ ? facts_->tighten(p, result, *this) : result;
}

ModularSet Simplifier::modular(const Poly& p) {
  return facts_ ? facts_->modular(p.to_expr()) : modular_of(p.to_expr());
}

std::optional<Poly> Simplifier::product_end_view(const Poly& p, bool upper) {
  std::vector<Term> terms;
  bool changed = false;
  for (const Term& t : p.terms()) {
    if (t.atoms.size() < 2) {
      terms.push_back(t);
      continue;
    }
    bool replaced = false;
    for (size_t i = 0; i < t.atoms.size() && !replaced; ++i) {
      const ConstIntBound a = interval_of(t.atoms[i], ranges_);
      if (!a.has_lower() || !a.has_upper()) continue;
      std::vector<SymExpr> rest = t.atoms;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
      ConstIntBound r = interval_const(t.coeff);
      for (const SymExpr& atom : rest) r = interval_mul(r, interval_of(atom, ranges_));
      // The sign of k*R decides which end of a bounds k*a*R from above (below).
      int64_t end = 0;
      if (r.min_value >= 0) {
        end = upper ? a.max_value : a.min_value;
      } else if (r.max_value <= 0) {
        end = upper ? a.min_value : a.max_value;
      } else {
        continue;
      }
      std::optional<int64_t> coeff = checked_mul(t.coeff, end);
      if (!coeff) continue;
      if (*coeff != 0) terms.push_back(Term{std::move(rest), *coeff});
      replaced = changed = true;
    }
    if (!replaced) terms.push_back(t);
  }
  if (!changed) return std::nullopt;
  return Poly::from_terms(std::move(terms), p.constant_term());
}

std::optional<Poly> expand_divmod(Simplifier& s, const Poly& p, bool expand_div) {
  const SymKind kind = expand_div ? SymKind::kFloorDiv : SymKind::kFloorMod;
  std::optional<Poly> view;
  Poly rest = p;
  for (const Term& t : p.terms()) {
    if (t.atoms.size() != 1 || !is_const_divisor_atom(t.atoms[0], kind)) continue;
    const SymExpr& atom = t.atoms[0];
    const int64_t c = *atom.operand(1).as_const();
    if (expand_div && t.coeff % c != 0) continue;
    const SymExpr& x = atom.operand(0);
    // c*floordiv(x, c) == x - floormod(x, c);  floormod(x, c) == x - c*floordiv(x, c)
    const SymExpr other = expand_div ? floormod(x, atom.operand(1)) : floordiv(x, atom.operand(1));
    const int64_t other_scale = expand_div ? -1 : -c;
    auto replacement = Poly::add(s.to_poly(x), Poly::atom(other), other_scale);
    if (!replacement) continue;
    auto scaled = replacement->scaled(expand_div ? t.coeff / c : t.coeff);  // c > 0
    if (!scaled) continue;
    auto minus_coeff = checked_neg(t.coeff);
    auto removed = minus_coeff ? Poly::add(rest, Poly::atom(atom), *minus_coeff) : std::nullopt;
    if (!removed) continue;
    auto next = Poly::add(*removed, *scaled);
    if (!next) continue;
    rest = std::move(*next);
    view = rest;
  }
  return view;
}

}  // namespace relax::shape_detail
