// Modular-set analysis: for each expression a pair (coeff, base) such that
// every value of the expression is coeff * k + base for some integer k.
//
// Constants are exact (coeff 0); a variable is anything (coeff 1). Sums and
// products combine by gcd; floordiv by a constant keeps what the divisor
// leaves, floormod the residue common to the numerator and every divisor. The simplifier uses the result to drop remainders
// (floormod(n * 4, 2) == 0) and to decide equalities (n * 2 != 1). Any
// overflow gives up to "anything", which is always sound.
#include <cstdlib>

#include "absl/container/inlined_vector.h"
#include "shape/bounds/bounds.h"
#include "shape/int_math.h"
#include "shape/walk_depth.h"

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
  // A constant divisor d that divides a.coeff (0 included) leaves a.base mod d.
  if (b.coeff == 0 && b.base > 0 && a.coeff % b.base == 0) return ModularSet{0, floor_mod(a.base, b.base)};
  // floormod(a, b) == a - b * q, and every b is a multiple of gcd(b.coeff, b.base),
  // so the result keeps a's residue modulo gcd(a.coeff, b.coeff, b.base): by a
  // constant d that is gcd(a.coeff, d); by y * 8 (any y) it is gcd(a.coeff, 8).
  const std::optional<int64_t> g = abs_gcd(a.coeff, abs_gcd(b.coeff, b.base));
  // g == 0 only when a is a constant and b is 0: nothing evaluates.
  if (!g || *g == 0) return ModularSet::everything();
  return or_everything(normalized(*g, a.base));
}

}  // namespace

ModularSet modular_combine(SymKind kind, const ModularSet& a, const ModularSet& b) {
  switch (kind) {
    case SymKind::kAdd:
      return combine_add(a, b, 1);
    case SymKind::kSub:
      return combine_add(a, b, -1);
    case SymKind::kMul:
      return combine_mul(a, b);
    case SymKind::kFloorDiv:
      return combine_floordiv(a, b);
    case SymKind::kFloorMod:
      return combine_floormod(a, b);
    case SymKind::kMin:
    case SymKind::kMax:
    case SymKind::kSelect:
      return combine_union(a, b);
    default:
      return ModularSet::everything();
  }
}

namespace {

ModularSet modular_at(const SymExpr& e, int& depth);

/// Whether the modular set of a `kind` node folds from its operands' left to right.
bool is_chain_kind(SymKind kind) {
  return kind == SymKind::kAdd || kind == SymKind::kSub || kind == SymKind::kMul ||
         kind == SymKind::kMin || kind == SymKind::kMax;
}

/// modular_of() at `depth` levels of recursion (walk_depth.h); a chain of the
/// kinds above (`a + b * 4 - c ...`) is read in a loop over its left operands.
ModularSet modular_at(const SymExpr& e, int& depth) {
  const WalkDepth level(depth);
  if (level.too_deep() || e.dtype().lanes != 1) return ModularSet::everything();
  if (is_chain_kind(e.kind())) {
    absl::InlinedVector<const SymExpr*, 8> chain;
    for (const SymExpr* x = &e; is_chain_kind(x->kind()); x = &x->operand(0)) chain.push_back(x);
    ModularSet acc = modular_at(chain.back()->operand(0), depth);
    for (size_t i = chain.size(); i-- > 0;) {
      acc = modular_combine(chain[i]->kind(), acc, modular_at(chain[i]->operand(1), depth));
    }
    return acc;
  }
  switch (e.kind()) {
    case SymKind::kIntImm:
      return e.dtype().is_bool() ? ModularSet::everything() : ModularSet{0, e->value()};
    case SymKind::kFloorDiv:
    case SymKind::kFloorMod:
      return modular_combine(e.kind(), modular_at(e.operand(0), depth), modular_at(e.operand(1), depth));
    case SymKind::kSelect:
      return combine_union(modular_at(e.operand(1), depth), modular_at(e.operand(2), depth));
    default:
      return ModularSet::everything();
  }
}

}  // namespace

ModularSet modular_of(const SymExpr& e) {
  int depth = 0;
  return modular_at(e, depth);
}

}  // namespace shape_detail
}  // namespace relax
