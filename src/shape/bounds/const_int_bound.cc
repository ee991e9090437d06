// Interval analysis: an inclusive [min, max] that holds every value of an
// expression wherever it evaluates without error, given the declared ranges of
// its variables.
//
// Each node combines its operands' intervals; the infinities saturate (the ends
// INT64_MIN / INT64_MAX: bounds.h). The walk also carries each node's modular
// set and rounds the node's interval to its members: floormod(x*64 + 63, 256)
// is 63 mod 64, so [0, 255] becomes [63, 255]. A divisor is never 0 where the
// division evaluates, so a divisor range [0, hi] divides as [1, hi], and one
// across zero as the hull of its negative and positive parts.
//
// The analysis works on the tree as written, so correlated operands lose
// precision (n - n gives [-inf, inf] for unbounded n); the Analyzer runs it
// on the simplified form too and intersects the two answers.
#include <algorithm>
#include <array>

#include "absl/container/inlined_vector.h"
#include "shape/bounds/bounds.h"
#include "shape/dtype_util.h"
#include "shape/int_math.h"
#include "shape/walk_depth.h"

namespace relax {

std::string ConstIntBound::to_string() const {
  auto end = [](int64_t v) -> std::string {
    if (v == kNegInf) return "-inf";
    if (v == kPosInf) return "+inf";
    return std::to_string(v);
  };
  return "[" + end(min_value) + ", " + end(max_value) + "]";
}

std::ostream& operator<<(std::ostream& os, const ConstIntBound& b) { return os << b.to_string(); }

namespace shape_detail {
namespace {

const ConstIntBound kBool{0, 1};

/// What the walk knows of a subtree: an interval and a modular set of its values.
struct Facts {
  ConstIntBound range;
  ModularSet mod;
};

const Facts kAnything{ConstIntBound::everything(), ModularSet::everything()};

Facts facts_at(const SymExpr& e, const VarRanges& ranges, int& depth);
Facts facts_as_written(const SymExpr& e, const VarRanges& ranges, int& depth);

/// `r` clipped to the range of an integer dtype narrower than int64 (as interval_of
/// clips each node).
ConstIntBound clip_to_dtype(const ConstIntBound& r, DataType t) {
  if (t == DataType::int64() || !is_scalar_int(t)) return r;
  const IntRange range = int_range(t);
  return interval_intersect(r, {range.lo, range.hi});
}

// ---- End arithmetic --------------------------------------------------------
//
// A lower end is -inf (INT64_MIN) or a number, an upper end a number or +inf
// (INT64_MAX): a lower end INT64_MAX is the number (bounds.h). Corners are
// computed exactly in 128 bits and clamped back into int64, which moves a lower
// end down or an upper end up: sound for evaluated subexpressions and for the
// never-evaluated partial sums and products of the simplifier's views alike.

using Wide = WideInt;

constexpr Wide kWideInf = kWideInfinity;

Wide lower_of(const ConstIntBound& b) { return b.min_value == kNegInf ? -kWideInf : b.min_value; }
Wide upper_of(const ConstIntBound& b) { return b.max_value == kPosInf ? kWideInf : b.max_value; }

bool is_wide_inf(Wide v) { return v == kWideInf || v == -kWideInf; }

/// a * b; 0 times an infinity is 0 (every value is finite).
Wide wide_mul(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  if (is_wide_inf(a) || is_wide_inf(b)) return (a < 0) != (b < 0) ? -kWideInf : kWideInf;
  return a * b;  // |a|, |b| <= 2^63
}

/// floor(a / b), b not 0.
Wide wide_floordiv(Wide a, Wide b) {
  const bool negative = (a < 0) != (b < 0);
  if (is_wide_inf(a)) return negative ? -kWideInf : kWideInf;
  // A number over an infinite divisor tends to 0 from its side.
  if (is_wide_inf(b)) return a == 0 || !negative ? 0 : -1;
  Wide q = a / b;  // exact in 128 bits, INT64_MIN / -1 included
  if (a % b != 0 && negative) --q;
  return q;
}

/// The hull of f over the four corners of a x b.
template <typename F>
ConstIntBound corner_hull(const ConstIntBound& a, const ConstIntBound& b, F f) {
  const std::array<Wide, 4> corners = {f(lower_of(a), lower_of(b)), f(lower_of(a), upper_of(b)),
                                       f(upper_of(a), lower_of(b)), f(upper_of(a), upper_of(b))};
  return {clamp_to_int64(*std::min_element(corners.begin(), corners.end())),
          clamp_to_int64(*std::max_element(corners.begin(), corners.end()))};
}

ConstIntBound hull(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
}

// ---- Division ----------------------------------------------------------------

/// The divisors of a range that can divide: a division by 0 fails to evaluate,
/// so a range [lo, hi] divides as its parts [lo, -1] and [1, hi] (each rounded to
/// the divisor's modular set: y * 8 in [0, 32] divides as [8, 32]).
struct DivisorParts {
  std::optional<ConstIntBound> negative, positive;
};

DivisorParts divisor_parts(const Facts& b) {
  DivisorParts parts;
  if (b.range.min_value <= -1) {
    parts.negative = interval_round_to({b.range.min_value, std::min<int64_t>(b.range.max_value, -1)}, b.mod);
  }
  if (b.range.max_value >= 1) {
    parts.positive = interval_round_to({std::max<int64_t>(b.range.min_value, 1), b.range.max_value}, b.mod);
  }
  return parts;
}

ConstIntBound interval_floordiv(const ConstIntBound& a, const Facts& b) {
  const DivisorParts parts = divisor_parts(b);
  // For a divisor of one sign, floordiv is monotone in each operand, so the
  // corners bound it.
  std::optional<ConstIntBound> result;
  for (const auto& part : {parts.negative, parts.positive}) {
    if (!part) continue;
    const ConstIntBound r = corner_hull(a, *part, wide_floordiv);
    result = result ? hull(*result, r) : r;
  }
  // Only 0 divides: nothing evaluates.
  return result.value_or(ConstIntBound::everything());
}

/// floormod(a, d) for every d in `part` (all of one sign).
ConstIntBound floormod_by_part(const ConstIntBound& a, const ConstIntBound& part, bool positive) {
  if (part.is_const() && !is_inf(part.min_value) && !is_inf(a.min_value) && !is_inf(a.max_value) &&
      a.min_value <= a.max_value) {
    // One divisor d, and a between two neighbouring multiples of it: the result
    // is a shifted, floormod(a.min, d) to floormod(a.max, d).
    const int64_t d = part.min_value;
    if (floor_div(a.min_value, d) == floor_div(a.max_value, d)) {
      return {floor_mod(a.min_value, d), floor_mod(a.max_value, d)};
    }
  }
  if (positive) {
    // [0, d - 1]; a non-negative a never grows.
    const int64_t hi = part.max_value == kPosInf ? kPosInf : part.max_value - 1;
    return {0, a.min_value >= 0 ? std::min(hi, a.max_value) : hi};
  }
  // [d + 1, 0]; a non-positive a never shrinks (a - d*q with q >= 0).
  const int64_t lo = part.min_value == kNegInf ? kNegInf : part.min_value + 1;
  return {a.max_value <= 0 ? std::max(lo, a.min_value) : lo, 0};
}

ConstIntBound interval_floormod(const ConstIntBound& a, const Facts& b) {
  const DivisorParts parts = divisor_parts(b);
  std::optional<ConstIntBound> result;
  if (parts.negative) result = floormod_by_part(a, *parts.negative, false);
  if (parts.positive) {
    const ConstIntBound r = floormod_by_part(a, *parts.positive, true);
    result = result ? hull(*result, r) : r;
  }
  return result.value_or(ConstIntBound::everything());
}

/// [0, 0], [1, 1] or [0, 1] for a comparison decided by the interval of a - b:
/// `a kind b` is `(a - b) kind 0`, decided when both ends of the interval give one
/// answer and the interval does not straddle 0 (where == and != change twice).
ConstIntBound compare_interval(SymKind kind, const ConstIntBound& diff) {
  const SymIntEval compare = sym_kind_info(kind).eval_int;
  SymInt128 at_min = 0, at_max = 0;
  compare(diff.min_value, 0, &at_min);
  compare(diff.max_value, 0, &at_max);
  if (at_min == at_max && !(diff.min_value < 0 && diff.max_value > 0)) {
    return ConstIntBound::exactly(at_min != 0 ? 1 : 0);
  }
  return kBool;
}

}  // namespace

ConstIntBound interval_const(int64_t v) {
  if (v == kNegInf) return {kNegInf, kNegInf + 1};
  if (v == kPosInf) return {kPosInf - 1, kPosInf};
  return ConstIntBound::exactly(v);
}

ConstIntBound interval_add(const ConstIntBound& a, const ConstIntBound& b) {
  IntervalSum sum(0);
  sum.add(a, 1);
  sum.add(b, 1);
  return sum.total();
}

ConstIntBound interval_mul(const ConstIntBound& a, const ConstIntBound& b) {
  // The product is bilinear, so its extremes over a x b lie at the corners,
  // whatever the signs (a corner at an infinity is a limit of the values there).
  return corner_hull(a, b, wide_mul);
}

ConstIntBound interval_scale(const ConstIntBound& a, int64_t k) {
  return interval_mul(a, interval_const(k));
}

ConstIntBound interval_intersect(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

int64_t clamp_to_int64(WideInt v) {
  return v <= kNegInf ? kNegInf : v >= kPosInf ? kPosInf : static_cast<int64_t>(v);
}

void IntervalSum::add(const ConstIntBound& product, int64_t coeff) {
  const Wide at_lower = wide_mul(lower_of(product), coeff), at_upper = wide_mul(upper_of(product), coeff);
  const Wide term_lo = std::min(at_lower, at_upper), term_hi = std::max(at_lower, at_upper);
  // Each finite term and each clamped partial sum stays within 2^126, so no sum
  // overflows 128 bits; past 2^126 a lower end stops (moves down) and an upper
  // end becomes +inf, and likewise below -2^126.
  constexpr Wide kLimit = kWideInf - 1;
  if (lo_ != -kWideInf) lo_ = term_lo == -kWideInf ? -kWideInf : std::min(lo_ + term_lo, kLimit);
  if (lo_ < -kLimit) lo_ = -kWideInf;
  if (hi_ != kWideInf) hi_ = term_hi == kWideInf ? kWideInf : std::max(hi_ + term_hi, -kLimit);
  if (hi_ > kLimit) hi_ = kWideInf;
}

ConstIntBound IntervalSum::total() const { return {clamp_to_int64(lo_), clamp_to_int64(hi_)}; }

ConstIntBound interval_round_to(const ConstIntBound& r, const ModularSet& m) {
  if (m.coeff == 1) return r;
  if (m.coeff == 0) {
    const bool inside = r.min_value <= m.base && m.base <= r.max_value;
    return inside && !is_inf(m.base) ? ConstIntBound::exactly(m.base) : r;
  }
  ConstIntBound rounded = r;
  if (!is_inf(r.min_value)) {
    // Up by (base - lo) mod coeff; both residues lie in [0, coeff), so no overflow.
    auto lo = checked_add(r.min_value, floor_mod(m.base - floor_mod(r.min_value, m.coeff), m.coeff));
    if (lo && *lo != kPosInf) rounded.min_value = *lo;
  }
  if (!is_inf(r.max_value)) {
    auto hi = checked_sub(r.max_value, floor_mod(floor_mod(r.max_value, m.coeff) - m.base, m.coeff));
    if (hi && *hi != kNegInf) rounded.max_value = *hi;
  }
  // No member inside: nothing evaluates, and an empty interval would only puzzle callers.
  return rounded.min_value <= rounded.max_value ? rounded : r;
}

ConstIntBound interval_of(const SymExpr& e, const VarRanges& ranges) {
  int depth = 0;
  return facts_at(e, ranges, depth).range;
}

namespace {

/// The facts of a node of dtype `t` once its own rule has run: clipped to the
/// dtype, a one-value interval made an exact modular set, and the interval
/// rounded to the modular set.
[[gnu::noinline]] Facts refined(Facts f, DataType t) {
  f.range = clip_to_dtype(f.range, t);
  if (!is_scalar_int(t) || t.is_bool()) return f;
  if (f.range.is_const() && !is_inf(f.range.min_value)) f.mod = {0, f.range.min_value};
  f.range = interval_round_to(f.range, f.mod);
  return f;
}

/// facts_as_written() at `depth` levels of recursion (walk_depth.h).
Facts facts_at(const SymExpr& e, const VarRanges& ranges, int& depth) {
  const DataType t = e.dtype();
  // Vectors have no one interval: the analysis treats them (and so loads they index) as unknown.
  if (t.is_float() || t.lanes != 1) return kAnything;
  const WalkDepth level(depth);
  if (level.too_deep()) return {t.is_bool() ? kBool : clip_to_dtype(ConstIntBound::everything(), t), ModularSet::everything()};
  return refined(facts_as_written(e, ranges, depth), t);
}

/// Whether a chain of `kind` nodes continues through `e`'s left operand, for the
/// kinds whose interval folds left to right.
bool is_chain_kind(SymKind kind) {
  switch (kind) {
    case SymKind::kAdd:
    case SymKind::kSub:
    case SymKind::kMul:
    case SymKind::kMin:
    case SymKind::kMax:
    case SymKind::kAnd:
    case SymKind::kOr:
      return true;
    default:
      return false;
  }
}

/// The interval of `a kind b` from the intervals of a and b (a chain kind).
ConstIntBound fold_interval(SymKind kind, const ConstIntBound& a, const ConstIntBound& b) {
  switch (kind) {
    case SymKind::kAdd:
      return interval_add(a, b);
    case SymKind::kSub:
      return interval_add(a, interval_scale(b, -1));
    case SymKind::kMul:
      return interval_mul(a, b);
    case SymKind::kMin:
    case SymKind::kAnd:
      return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
    default:  // kMax, kOr
      return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
  }
}

Facts fold_facts(SymKind kind, const Facts& a, const Facts& b) {
  return {fold_interval(kind, a.range, b.range), modular_combine(kind, a.mod, b.mod)};
}

/// Only the interval of a boolean or other non-arithmetic node.
Facts range_only(const ConstIntBound& r) { return {r, ModularSet::everything()}; }

// The walk recurses through facts_at, facts_as_written and one of the handlers
// below, so each is kept apart ([[gnu::noinline]]) with only its own locals: a
// walk kMaxWalkDepth deep, started inside a simplifier walk as deep, must fit
// the 1 MiB stack of tests/shape/deep_tree_test.cc.

/// a + b - c + ..., p || q || ...: the left operands of a chain of these kinds are
/// read in a loop (one level of recursion for the chain, not one per link). Every
/// link has the chain's dtype, so no clipping is lost on the way.
[[gnu::noinline]] Facts chain_facts(const SymExpr& e, const VarRanges& ranges, int& depth) {
  absl::InlinedVector<const SymExpr*, 8> chain;
  for (const SymExpr* x = &e; is_chain_kind(x->kind()) && x->dtype() == e.dtype(); x = &x->operand(0)) {
    chain.push_back(x);
  }
  Facts acc = facts_at(chain.back()->operand(0), ranges, depth);
  for (size_t i = chain.size(); i-- > 0;) {
    acc = fold_facts(chain[i]->kind(), acc, facts_at(chain[i]->operand(1), ranges, depth));
    if (i > 0) acc = refined(acc, e.dtype());
  }
  return acc;
}

[[gnu::noinline]] Facts leaf_facts(const SymExpr& e, const VarRanges& ranges) {
  if (e.kind() == SymKind::kIntImm) {
    return {interval_const(e->value()),
            e.dtype().is_bool() ? ModularSet::everything() : ModularSet{0, e->value()}};
  }
  auto it = ranges.find(SymVar::from_expr(e));
  if (it != ranges.end()) return range_only(it->second);
  return range_only(e.dtype().is_bool() ? kBool : ConstIntBound::everything());
}

[[gnu::noinline]] Facts division_facts(const SymExpr& e, const Facts& a, const Facts& b) {
  if (e.kind() == SymKind::kFloorDiv) {
    return {interval_floordiv(a.range, b), modular_combine(e.kind(), a.mod, b.mod)};
  }
  // a in [0, b) or in (b, 0] for every b: floormod(a, b) is a.
  if ((a.range.min_value >= 0 && a.range.max_value < b.range.min_value) ||
      (a.range.max_value <= 0 && a.range.min_value > b.range.max_value)) {
    return a;
  }
  return {interval_floormod(a.range, b), modular_combine(e.kind(), a.mod, b.mod)};
}

[[gnu::noinline]] Facts binary_facts(const SymExpr& e, const VarRanges& ranges, int& depth) {
  const Facts a = facts_at(e.operand(0), ranges, depth);
  const Facts b = facts_at(e.operand(1), ranges, depth);
  if (e.kind() == SymKind::kFloorDiv || e.kind() == SymKind::kFloorMod) return division_facts(e, a, b);
  // A comparison of integers.
  return range_only(compare_interval(e.kind(), interval_add(a.range, interval_scale(b.range, -1))));
}

[[gnu::noinline]] Facts cast_facts(const SymExpr& e, const VarRanges& ranges, int& depth) {
  // An integer or boolean value that fits the new dtype keeps its interval;
  // interval_of() then clips to the dtype's range.
  const SymExpr& x = e.operand(0);
  if (x.dtype().is_float()) return range_only(e.dtype().is_bool() ? kBool : ConstIntBound::everything());
  const ConstIntBound a = facts_at(x, ranges, depth).range;
  if (e.dtype().is_bool()) {
    return range_only(a.min_value > 0 || a.max_value < 0 ? ConstIntBound::exactly(1) : kBool);
  }
  const IntRange range = int_range(e.dtype());
  if (a.min_value >= range.lo && a.max_value <= range.hi) return range_only(a);
  return kAnything;
}

[[gnu::noinline]] Facts select_facts(const SymExpr& e, const VarRanges& ranges, int& depth) {
  const ConstIntBound c = facts_at(e.operand(0), ranges, depth).range;
  if (c.min_value == 1) return facts_at(e.operand(1), ranges, depth);
  if (c.max_value == 0) return facts_at(e.operand(2), ranges, depth);
  const Facts a = facts_at(e.operand(1), ranges, depth);
  const Facts b = facts_at(e.operand(2), ranges, depth);
  return {hull(a.range, b.range), modular_combine(SymKind::kSelect, a.mod, b.mod)};
}

Facts facts_as_written(const SymExpr& e, const VarRanges& ranges, int& depth) {
  if (is_chain_kind(e.kind())) return chain_facts(e, ranges, depth);
  if (is_comparison(e.kind())) {
    if (e.operand(0).dtype().is_float()) return range_only(kBool);
    return binary_facts(e, ranges, depth);
  }
  switch (e.kind()) {
    case SymKind::kIntImm:
    case SymKind::kVar:
      return leaf_facts(e, ranges);
    case SymKind::kFloorDiv:
    case SymKind::kFloorMod:
      return binary_facts(e, ranges, depth);
    case SymKind::kCast:
      return cast_facts(e, ranges, depth);
    case SymKind::kNot: {
      const ConstIntBound a = facts_at(e.operand(0), ranges, depth).range;
      return range_only({1 - a.max_value, 1 - a.min_value});
    }
    case SymKind::kSelect:
      return select_facts(e, ranges, depth);
    default:
      return kAnything;
  }
}

}  // namespace

}  // namespace shape_detail
}  // namespace relax
