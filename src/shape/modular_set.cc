// Modular-set analysis: for each expression a pair (coeff, base) such that
// every value of the expression is coeff * k + base for some integer k.
//
// Constants are exact (coeff 0); a variable is anything (coeff 1). Sums and
// products combine by gcd; floordiv and floormod by a constant keep what the
// divisor leaves. The simplifier uses the result to drop remainders
// (floormod(n * 4, 2) == 0) and to decide equalities (n * 2 != 1). Any
// overflow gives up to "anything", which is always sound.
#include <cstdlib>

#include "bounds.h"
#include "int_math.h"

namespace relax {

std::string ModularSet::to_string() const {
  if (coeff == 0) return "{" + std::to_string(base) + "}";
  return "{" + std::to_string(coeff) + "*k + " + std::to_string(base) + "}";
}

std::ostream& operator<<(std::ostream& os, const ModularSet& m) { return os << m.to_string(); }

namespace shape_detail {
namespace {

/// Brings a set to its normal form: coeff >= 0 and 0 <= base < coeff.
std::optional<ModularSet> normalized(int64_t coeff, int64_t base) {
  if (coeff == kNegInf) return std::nullopt;
  coeff = coeff < 0 ? -coeff : coeff;
  if (coeff == 0) return ModularSet{0, base};
  return ModularSet{coeff, floor_mod(base, coeff)};
}

ModularSet or_everything(std::optional<ModularSet> m) { return m ? *m : ModularSet::everything(); }

std::optional<int64_t> abs_gcd(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b || *a == kNegInf || *b == kNegInf) return std::nullopt;
  return gcd(*a, *b);
}

ModularSet combine_add(const ModularSet& a, const ModularSet& b, int64_t sign) {
  const std::optional<int64_t> base =
      sign > 0 ? checked_add(a.base, b.base) : checked_sub(a.base, b.base);
  if (!base) return ModularSet::everything();
  return or_everything(normalized(gcd(a.coeff, b.coeff), *base));
}

ModularSet combine_mul(const ModularSet& a, const ModularSet& b) {
  // (ca*i + ba)(cb*j + bb) = ca*cb*ij + ca*bb*i + cb*ba*j + ba*bb
  auto g = abs_gcd(checked_mul(a.coeff, b.coeff),
                   abs_gcd(checked_mul(a.coeff, b.base), checked_mul(b.coeff, a.base)));
  auto base = checked_mul(a.base, b.base);
  if (!g || !base) return ModularSet::everything();
  return or_everything(normalized(*g, *base));
}

ModularSet combine_union(const ModularSet& a, const ModularSet& b) {
  auto diff = checked_sub(a.base, b.base);
  auto g = abs_gcd(abs_gcd(a.coeff, b.coeff), diff);
  if (!g) return ModularSet::everything();
  return or_everything(normalized(*g, a.base));
}

ModularSet combine_floordiv(const ModularSet& a, const ModularSet& b) {
  if (b.coeff != 0 || b.base <= 0) return ModularSet::everything();
  const int64_t d = b.base;
  if (a.coeff == 0) {
    return ModularSet{0, floor_div(a.base, d)};
  }
  // (c*k + base) / d == (c/d)*k + base/d exactly when d divides c.
  if (a.coeff % d != 0) return ModularSet::everything();
  return or_everything(normalized(a.coeff / d, floor_div(a.base, d)));
}

ModularSet combine_floormod(const ModularSet& a, const ModularSet& b) {
  if (b.coeff != 0 || b.base <= 0) return ModularSet::everything();
  const int64_t d = b.base;
  if (a.coeff == 0) return ModularSet{0, floor_mod(a.base, d)};
  // The result keeps a's residue modulo gcd(coeff, d).
  const int64_t g = gcd(a.coeff, d);
  if (g == d) return ModularSet{0, floor_mod(a.base, d)};
  return or_everything(normalized(g, a.base));
}

}  // namespace

ModularSet modular_of(const SymExpr& e) {
  switch (e.kind()) {
    case SymKind::kIntImm:
      return e.dtype().is_bool() ? ModularSet::everything() : ModularSet{0, e->value()};
    case SymKind::kAdd:
      return combine_add(modular_of(e.operand(0)), modular_of(e.operand(1)), 1);
    case SymKind::kSub:
      return combine_add(modular_of(e.operand(0)), modular_of(e.operand(1)), -1);
    case SymKind::kMul:
      return combine_mul(modular_of(e.operand(0)), modular_of(e.operand(1)));
    case SymKind::kFloorDiv:
      return combine_floordiv(modular_of(e.operand(0)), modular_of(e.operand(1)));
    case SymKind::kFloorMod:
      return combine_floormod(modular_of(e.operand(0)), modular_of(e.operand(1)));
    case SymKind::kMin:
    case SymKind::kMax:
      return combine_union(modular_of(e.operand(0)), modular_of(e.operand(1)));
    case SymKind::kSelect:
      return combine_union(modular_of(e.operand(1)), modular_of(e.operand(2)));
    default:
      return ModularSet::everything();
  }
}

}  // namespace shape_detail
}  // namespace relax
