// Private entry points of the Analyzer's interval and modular analyses.
//
// Ends of an interval. INT64_MIN as a lower end and INT64_MAX as an upper end
// stand for -inf and +inf (an unbounded side). The other two are numbers: a
// lower end INT64_MAX says every value is at least INT64_MAX, an upper end
// INT64_MIN at most INT64_MIN (a variable declared exactly INT64_MAX; a
// product past int64). The arithmetic below reads them so, and clamps every
// result into int64 toward the loose side: INT64_MAX - 5 from a lower end
// INT64_MAX is INT64_MAX - 5, not +inf. That keeps it sound for partial sums
// that are never evaluated (the simplifier's canonical forms and views), where
// a term may lie past int64 while the total does not.
#pragma once

#include <cstdint>

#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax::shape_detail {

/// The declared range of each bound variable.
using VarRanges = SymVarMap<ConstIntBound>;

/// Interval analysis over the tree as written (no simplification). Each node's
/// interval is rounded inward to the members of its modular set (computed in the
/// same walk, with the ranges: a subtree of one value is exactly that value).
ConstIntBound interval_of(const SymExpr& e, const VarRanges& ranges);

/// The interval of the constant v. INT64_MIN and INT64_MAX double as the
/// infinities, so a constant equal to one of them widens by one step inward to
/// stay a true (if slightly loose) interval.
ConstIntBound interval_const(int64_t v);

/// Interval arithmetic on bounds (saturating at the infinities; 0 times an
/// unbounded factor is 0).
ConstIntBound interval_add(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound interval_mul(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound interval_scale(const ConstIntBound& a, int64_t k);
ConstIntBound interval_intersect(const ConstIntBound& a, const ConstIntBound& b);

/// A 128-bit integer: exact sums and products of int64 ends.
__extension__ typedef __int128 WideInt;  // NOLINT
/// Above every sum or product of two int64 values (|a * b| < 2^126): the
/// infinity of IntervalSum's arithmetic.
inline constexpr WideInt kWideInfinity = static_cast<WideInt>(1) << 126;

/// v clamped into int64 (INT64_MIN / INT64_MAX past either end).
int64_t clamp_to_int64(WideInt v);

/// The interval of c + k1 * p1 + k2 * p2 + ... (constants k, intervals p), its
/// partial sums kept exactly in 128 bits: a sum of terms past int64 can end inside
/// it (a view such as b - 2*floordiv(b, 2) at b near INT64_MIN), and int64
/// partial sums would lose it or, read as "no value", wrongly bound it.
class IntervalSum {
 public:
  explicit IntervalSum(int64_t constant) : lo_(constant), hi_(constant) {}
  /// Adds coeff * product.
  void add(const ConstIntBound& product, int64_t coeff);
  ConstIntBound total() const;

 private:
  WideInt lo_, hi_;  // +-kWideInfinity for an unbounded side
};

/// `r` with its finite ends moved inward to the nearest members of `m` (a lower
/// end up, an upper end down to coeff * k + base); `r` itself when that leaves
/// no member, or the infinities or INT64_MIN / INT64_MAX would be reached.
ConstIntBound interval_round_to(const ConstIntBound& r, const ModularSet& m);

/// The modular set { coeff * k + base } containing every value of `e`.
ModularSet modular_of(const SymExpr& e);

/// The modular set of `a kind b` from those of its operands, for kAdd, kSub,
/// kMul, kFloorDiv, kFloorMod, kMin, kMax and kSelect (the union of its two
/// branches); everything for any other kind.
ModularSet modular_combine(SymKind kind, const ModularSet& a, const ModularSet& b);

}  // namespace relax::shape_detail
