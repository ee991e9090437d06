// Facts: scoped boolean facts and their use by the simplifier (constraints.h).
#include "shape/bounds/constraints.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "shape/int_math.h"
#include "relax/support/check.h"
#include "shape/simplify/simplify.h"

namespace relax::shape_detail {
namespace {

// Exact intermediate products for the Chinese remainder step.
__extension__ typedef __int128 Wide;


/// The int64 variable that `t` is exactly (one atom, a variable), if any.
std::optional<SymVar> single_var(const Term& t) {
  if (t.atoms.size() != 1 || !t.atoms[0].is_var() || t.atoms[0].dtype() != DataType::int64()) {
    return std::nullopt;
  }
  return SymVar::from_expr(t.atoms[0]);
}

/// ceil(a / b) for b > 0 on extended integers (infinities stay).
int64_t ceil_div_bound(int64_t a, int64_t b) {
  if (is_inf(a)) return a;
  return -floor_div(-a, b);  // a > INT64_MIN here, so -a is defined
}
int64_t floor_div_bound(int64_t a, int64_t b) { return is_inf(a) ? a : floor_div(a, b); }

/// The common solutions of x == a.base (mod a.coeff) and x == b.base (mod
/// b.coeff) (coeff > 0 each); nullopt when there is none. When the combined
/// modulus would overflow, the set with the larger modulus (a superset of the
/// solutions, so still true).
std::optional<ModularSet> crt(const ModularSet& a, const ModularSet& b) {
  const int64_t g = gcd(a.coeff, b.coeff);
  if (floor_mod(b.base - a.base, g) != 0) return std::nullopt;
  const auto lcm = checked_mul(a.coeff / g, b.coeff);
  if (!lcm) return a.coeff >= b.coeff ? a : b;
  // x = a.base + a.coeff * t with a.coeff * t == b.base - a.base (mod b.coeff):
  // t == ((b.base - a.base) / g) * inverse(a.coeff / g) (mod b.coeff / g).
  const Wide m = b.coeff / g;
  Wide inverse = 1;
  if (m > 1) {
    // Extended Euclid on (a.coeff / g) mod m, which is coprime to m.
    Wide r0 = m, r1 = (a.coeff / g) % m, t0 = 0, t1 = 1;
    while (r1 != 0) {
      const Wide q = r0 / r1;
      std::tie(r0, r1) = std::pair(r1, r0 - q * r1);
      std::tie(t0, t1) = std::pair(t1, t0 - q * t1);
    }
    inverse = ((t0 % m) + m) % m;
  }
  const Wide diff = (static_cast<Wide>(b.base) - a.base) / g;
  const Wide t = m > 1 ? (((diff % m) * inverse) % m + m) % m : 0;
  const Wide x = static_cast<Wide>(a.base) + static_cast<Wide>(a.coeff) * t;
  return ModularSet{*lcm, static_cast<int64_t>(x % *lcm)};
}

}  // namespace

// ---------------------------------------------------------------------------
// Read side.

bool Facts::holds(const SymExpr& cond) const {
  return std::any_of(atoms_.begin(), atoms_.end(),
                     [&](const SymExpr& a) { return structural_equal(a, cond); });
}

std::optional<ModularSet> Facts::var_modular(const SymVar& var) const {
  ModularSet acc = ModularSet::everything();
  for (const ModularFact& f : modulars_) {
    if (!f.var.same_as(var)) continue;
    auto both = crt(acc, f.set);
    if (!both) return std::nullopt;
    acc = *both;
  }
  return acc;
}

SymExpr Facts::with_quotients(const SymExpr& e) const {
  if (modulars_.empty()) return e;
  return substitute(e, [&](const SymVar& v) -> std::optional<SymExpr> {
    // The last fact on v holds the quotient whose range follows the combined set.
    for (size_t i = modulars_.size(); i-- > 0;) {
      if (!modulars_[i].var.same_as(v)) continue;
      const std::optional<ModularSet> set = var_modular(v);
      if (!set || set->coeff <= 1) return std::nullopt;
      return SymExpr(modulars_[i].quotient) * SymExpr(set->coeff) + SymExpr(set->base);
    }
    return std::nullopt;
  });
}

ModularSet Facts::modular(const SymExpr& e) const { return modular_of(with_quotients(e)); }

const std::vector<Poly>& Facts::quotient_relations(Simplifier& s) const {
  if (!quotient_relations_valid_) {
    quotient_relations_.clear();
    for (const Poly& q : relations_) {
      const SymExpr e = q.to_expr();
      const SymExpr replaced = with_quotients(e);
      quotient_relations_.push_back(replaced.same_as(e) ? q : s.to_poly(replaced));
    }
    quotient_relations_valid_ = true;
  }
  return quotient_relations_;
}

ConstIntBound Facts::chain_bound(const Poly& p, const std::vector<Poly>& relations, uint32_t used,
                                 int depth, Side side, Simplifier& s, int& budget) const {
  --budget;
  ConstIntBound r = s.bound(p);
  if (depth == 0) return r;
  for (const Term& t : p.terms()) {
    for (size_t f = 0; f < relations.size() && f < 32; ++f) {
      if ((used >> f) & 1) continue;
      const Poly& q = relations[f];
      const Term* shared = nullptr;
      for (const Term& u : q.terms()) {
        if (compare_monomials(u.atoms, t.atoms) == 0) shared = &u;
      }
      if (shared == nullptr) continue;
      if (budget <= 0) return r;
      if (t.coeff == kNegInf || shared->coeff == kNegInf) continue;
      // Same signs improve the lower end, opposite ones the upper end: explore only
      // the pairs that improve the end the caller reads.
      const bool same_sign = (t.coeff > 0) == (shared->coeff > 0);
      if (side != Side::kBoth && same_sign != (side == Side::kLower)) continue;
      // a*p -+ b*q cancels the shared term: a*t.coeff == b*shared.coeff in magnitude.
      const int64_t g = gcd(t.coeff, shared->coeff);
      const int64_t a = std::abs(shared->coeff) / g, b = std::abs(t.coeff) / g;
      auto scaled = p.scaled(a);
      auto w = scaled ? Poly::add(*scaled, q, same_sign ? -b : b) : std::nullopt;
      if (!w) continue;
      const ConstIntBound wr =
          chain_bound(*w, relations, used | (uint32_t{1} << f), depth - 1,
                      same_sign ? Side::kLower : Side::kUpper, s, budget);
      // b*q >= 0: a*p >= a*p - b*q (a lower end), a*p <= a*p + b*q (an upper end).
      if (same_sign) {
        r.min_value = std::max(r.min_value, ceil_div_bound(wr.min_value, a));
      } else {
        r.max_value = std::min(r.max_value, floor_div_bound(wr.max_value, a));
      }
    }
  }
  return r;
}

ConstIntBound Facts::tighten(const Poly& p, const ConstIntBound& b, Simplifier& s) const {
  if (busy_ || empty() || b.is_const()) return b;
  busy_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{busy_};
  ConstIntBound r = b;
  if (!relations_.empty()) {
    int budget = kBudget;
    r = interval_intersect(r, chain_bound(p, relations_, 0, kMaxChain, Side::kBoth, s, budget));
  }
  if (!modulars_.empty()) {
    // The same search over the view with each modular variable v = c*k + r, against
    // the relations in that view: floordiv(v + 3, 4)*4 - v is 0 there for v = 4*k.
    const SymExpr e = p.to_expr();
    const SymExpr replaced = with_quotients(e);
    if (!replaced.same_as(e)) {
      const std::vector<Poly>& relations = quotient_relations(s);
      int budget = kBudget;
      r = interval_intersect(r, chain_bound(s.to_poly(replaced), relations, 0,
                                            relations.empty() ? 0 : kMaxChain, Side::kBoth, s,
                                            budget));
    }
  }
  return r;
}

// ---------------------------------------------------------------------------
// Write side.

void Facts::add_relation(const Poly& q, Simplifier& s) {
  relations_.push_back(q);
  // a*v + rest >= 0 bounds v by the range of rest: v >= -rest/a (a > 0) or
  // v <= rest/(-a) (a < 0); both need an upper end of rest.
  for (const Term& t : q.terms()) {
    const std::optional<SymVar> v = single_var(t);
    if (!v || t.coeff == kNegInf) continue;
    auto rest = Poly::add(q, Poly::atom(t.atoms[0]), -t.coeff);
    if (!rest) continue;
    const ConstIntBound rb = s.bound(*rest);
    if (!rb.has_upper()) continue;
    if (t.coeff > 0) {
      ranges_.push_back({*v, {ceil_div_bound(bound_neg(rb.max_value), t.coeff), ConstIntBound::kPosInf}});
    } else {
      ranges_.push_back({*v, {ConstIntBound::kNegInf, floor_div_bound(rb.max_value, -t.coeff)}});
    }
  }
}

bool Facts::add_atom(const SymExpr& atom, Simplifier& s) {
  atoms_.push_back(atom);
  if (!is_comparison(atom.kind()) || atom.operand(0).dtype() != DataType::int64()) return true;
  auto d = Poly::add(s.to_poly(atom.operand(0)), s.to_poly(atom.operand(1)), -1);  // lhs - rhs
  if (!d) return true;
  auto minus = [](const Poly& x, int64_t c) { return Poly::add(Poly::constant(c), x, -1); };
  std::vector<Poly> nonneg;  // each >= 0
  auto push = [&](std::optional<Poly> q) {
    if (q) nonneg.push_back(std::move(*q));
  };
  switch (atom.kind()) {
    case SymKind::kLT:  // rhs - lhs - 1 >= 0
      push(minus(*d, -1));
      break;
    case SymKind::kLE:
      push(minus(*d, 0));
      break;
    case SymKind::kGT:
      push(Poly::add(*d, Poly::constant(-1)));
      break;
    case SymKind::kGE:
      push(*d);
      break;
    case SymKind::kEQ: {
      // floormod(v, c) == r on a variable v is a modular fact.
      if (d->terms().size() == 1 && d->terms()[0].atoms.size() == 1 &&
          std::abs(d->terms()[0].coeff) == 1) {
        const SymExpr& a = d->terms()[0].atoms[0];
        const std::optional<int64_t> c =
            a.kind() == SymKind::kFloorMod ? a.operand(1).as_const() : std::nullopt;
        if (c && *c > 1 && a.operand(0).is_var() && d->constant_term() != kNegInf) {
          const int64_t r = -d->constant_term() * d->terms()[0].coeff;
          if (r < 0 || r >= *c) return false;
          const SymVar v = SymVar::from_expr(a.operand(0));
          modulars_.push_back({v, ModularSet{*c, r}, SymVar(v.name() + "_q")});
          return true;
        }
      }
      push(*d);
      push(minus(*d, 0));
      break;
    }
    default: {
      // d != 0 where d >= 0 is known gives d - 1 >= 0 (and d <= 0 gives -d - 1 >= 0):
      // `i != 0` for i >= 0, `floormod(n, 4) != 0`.
      const ConstIntBound known = s.bound(*d);
      if (known.min_value == 0) push(Poly::add(*d, Poly::constant(-1)));
      if (known.max_value == 0) push(minus(*d, -1));
      break;
    }
  }
  for (const Poly& q : nonneg) {
    // a*v + c >= 0 on one variable is a range fact; anything else is relational.
    if (q.terms().size() == 1) {
      const Term& t = q.terms()[0];
      const int64_t c = q.constant_term();
      if (const std::optional<SymVar> v = single_var(t); v && t.coeff != kNegInf && !is_inf(c)) {
        if (t.coeff > 0) {
          ranges_.push_back({*v, {ceil_div_bound(bound_neg(c), t.coeff), ConstIntBound::kPosInf}});
        } else {
          ranges_.push_back({*v, {ConstIntBound::kNegInf, floor_div_bound(c, -t.coeff)}});
        }
        continue;
      }
    }
    add_relation(q, s);
  }
  return true;
}

bool Facts::recompute(const SymVar& var, const VarRanges& declared, VarRanges& effective) const {
  auto it = declared.find(var);
  ConstIntBound r = it == declared.end() ? ConstIntBound::everything() : it->second;
  bool narrowed = it != declared.end();
  for (const RangeFact& f : ranges_) {
    if (!f.var.same_as(var)) continue;
    r = interval_intersect(r, f.range);
    narrowed = true;
  }
  const std::optional<ModularSet> set = var_modular(var);
  if (!set) return false;
  if (set->coeff > 1) {
    // The ends move inward to the nearest members of the set. Both residues lie in
    // [0, coeff), so their difference does not overflow (base - lo itself can, for an end
    // near INT64_MIN).
    if (r.has_lower()) {
      const int64_t up = floor_mod(set->base - floor_mod(r.min_value, set->coeff), set->coeff);
      if (auto lo = checked_add(r.min_value, up)) {
        r.min_value = *lo;
      }
    }
    if (r.has_upper()) {
      const int64_t down = floor_mod(floor_mod(r.max_value, set->coeff) - set->base, set->coeff);
      if (auto hi = checked_sub(r.max_value, down)) {
        r.max_value = *hi;
      }
    }
  }
  if (narrowed) {
    effective[var] = r;
  } else {
    effective.erase(var);
  }
  return r.min_value <= r.max_value;
}

void Facts::refresh(VarRanges& effective) const {
  for (const ModularFact& f : modulars_) {
    const std::optional<ModularSet> set = var_modular(f.var);
    auto it = effective.find(f.var);
    if (!set || set->coeff <= 1 || it == effective.end()) {
      effective.erase(f.quotient);
      continue;
    }
    // var == c*k + r: k in [ceil((lo - r) / c), floor((hi - r) / c)].
    const ConstIntBound v = it->second;
    const int64_t lo = bound_add(v.min_value, bound_neg(set->base), true);
    const int64_t hi = bound_add(v.max_value, bound_neg(set->base), false);
    effective[f.quotient] = {ceil_div_bound(lo, set->coeff), floor_div_bound(hi, set->coeff)};
  }
}

bool Facts::push(const SymExpr& fact, const VarRanges& declared, VarRanges& effective) {
  RELAX_CHECK(fact.dtype().is_bool()) << "a constraint must be boolean, not " << fact.dtype()
                                      << ": `" << fact << "`";
  const Frame frame{ranges_.size(), modulars_.size(), relations_.size(), atoms_.size(), false};
  quotient_relations_valid_ = false;
  frames_.push_back(frame);
  const SymExpr simplified = Simplifier(effective, empty() ? nullptr : this).simplify(fact);
  if (auto c = simplified.as_const()) {
    frames_.back().contradicts = *c == 0;
    return *c != 0;
  }
  // The && atoms, left to right (chains are read in a loop).
  absl::InlinedVector<SymExpr, 8> atoms, stack = {simplified};
  while (!stack.empty()) {
    SymExpr x = stack.back();
    stack.pop_back();
    if (x.kind() == SymKind::kAnd) {
      stack.push_back(x.operand(1));
      stack.push_back(x.operand(0));
    } else {
      atoms.push_back(std::move(x));
    }
  }
  bool consistent = true;
  {
    Simplifier s(effective, empty() ? nullptr : this);
    for (const SymExpr& atom : atoms) consistent = consistent && add_atom(atom, s);
  }
  absl::flat_hash_set<uint64_t> seen;
  for (size_t i = frame.ranges; consistent && i < ranges_.size(); ++i) {
    if (seen.insert(ranges_[i].var.id()).second) {
      consistent = recompute(ranges_[i].var, declared, effective);
    }
  }
  for (size_t i = frame.modulars; consistent && i < modulars_.size(); ++i) {
    if (seen.insert(modulars_[i].var.id()).second) {
      consistent = recompute(modulars_[i].var, declared, effective);
    }
  }
  if (!consistent) {
    truncate(frame, declared, effective);
    frames_.back().contradicts = true;
    return false;
  }
  refresh(effective);
  return true;
}

void Facts::truncate(const Frame& frame, const VarRanges& declared, VarRanges& effective) {
  std::vector<SymVar> touched;
  for (size_t i = frame.ranges; i < ranges_.size(); ++i) touched.push_back(ranges_[i].var);
  for (size_t i = frame.modulars; i < modulars_.size(); ++i) {
    touched.push_back(modulars_[i].var);
    effective.erase(modulars_[i].quotient);
  }
  quotient_relations_valid_ = false;
  auto cut = [](auto& list, size_t length) { list.erase(list.begin() + length, list.end()); };
  cut(ranges_, frame.ranges);
  cut(modulars_, frame.modulars);
  cut(relations_, frame.relations);
  cut(atoms_, frame.atoms);
  for (const SymVar& v : touched) recompute(v, declared, effective);
  refresh(effective);
}

void Facts::pop(const VarRanges& declared, VarRanges& effective) {
  RELAX_CHECK(!frames_.empty()) << "Facts::pop without a frame";
  truncate(frames_.back(), declared, effective);
  frames_.pop_back();
}

}  // namespace relax::shape_detail
