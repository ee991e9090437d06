// Interval analysis: an inclusive [min, max] that holds every value of an
// expression, given the declared ranges of its variables.
//
// Each node combines its operands' intervals; the infinities saturate. The
// analysis works on the tree as written, so correlated operands lose
// precision (n - n gives [-inf, inf] for unbounded n); the Analyzer runs it
// on the simplified form too and intersects the two answers.
#include <algorithm>
#include <array>

#include "absl/container/inlined_vector.h"
#include "bounds.h"
#include "dtype_util.h"
#include "int_math.h"
#include "walk_depth.h"

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

ConstIntBound interval_as_written(const SymExpr& e, const VarRanges& ranges, int& depth);
ConstIntBound interval_at(const SymExpr& e, const VarRanges& ranges, int& depth);

/// `r` clipped to the range of an integer dtype narrower than int64 (as interval_of
/// clips each node).
ConstIntBound clip_to_dtype(const ConstIntBound& r, DataType t) {
  if (t == DataType::int64() || !is_scalar_int(t)) return r;
  const IntRange range = int_range(t);
  return interval_intersect(r, {range.lo, range.hi});
}

ConstIntBound hull(std::array<int64_t, 4> corners) {
  return {*std::min_element(corners.begin(), corners.end()),
          *std::max_element(corners.begin(), corners.end())};
}

ConstIntBound interval_floordiv(const ConstIntBound& a, const ConstIntBound& b) {
  // A divisor range that holds 0 (or touches it) bounds nothing useful.
  if (b.min_value <= 0 && b.max_value >= 0) return ConstIntBound::everything();
  // For a divisor of one sign, floordiv is monotone in each operand, so the
  // corners bound it.
  return hull({bound_floordiv(a.min_value, b.min_value), bound_floordiv(a.min_value, b.max_value),
               bound_floordiv(a.max_value, b.min_value), bound_floordiv(a.max_value, b.max_value)});
}

ConstIntBound interval_floormod(const ConstIntBound& a, const ConstIntBound& b) {
  if (b.min_value > 0) {
    // Result in [0, b - 1]; a non-negative a smaller than every b is unchanged.
    if (a.min_value >= 0 && a.max_value < b.min_value) return a;
    const int64_t hi = is_inf(b.max_value) ? kPosInf : b.max_value - 1;
    return {0, a.min_value >= 0 ? std::min(hi, a.max_value) : hi};
  }
  if (b.max_value < 0) {
    const int64_t lo = is_inf(b.min_value) ? kNegInf : b.min_value + 1;
    return {lo, 0};
  }
  return ConstIntBound::everything();
}

/// [0, 0], [1, 1] or [0, 1] for a comparison decided by the interval of a - b.
ConstIntBound compare_interval(SymKind kind, const ConstIntBound& diff) {
  auto decided = [](bool v) { return ConstIntBound::exactly(v ? 1 : 0); };
  const bool neg = diff.max_value < 0, nonpos = diff.max_value <= 0;
  const bool pos = diff.min_value > 0, nonneg = diff.min_value >= 0;
  switch (kind) {
    case SymKind::kLT:
      if (neg || nonneg) return decided(neg);
      break;
    case SymKind::kLE:
      if (nonpos || pos) return decided(nonpos);
      break;
    case SymKind::kGT:
      if (pos || nonpos) return decided(pos);
      break;
    case SymKind::kGE:
      if (nonneg || neg) return decided(nonneg);
      break;
    case SymKind::kEQ:
    case SymKind::kNE:
      if (diff.is_const() && diff.min_value == 0) return decided(kind == SymKind::kEQ);
      if (neg || pos) return decided(kind == SymKind::kNE);
      break;
    default:
      break;
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
  return {bound_add(a.min_value, b.min_value, true), bound_add(a.max_value, b.max_value, false)};
}

ConstIntBound interval_mul(const ConstIntBound& a, const ConstIntBound& b) {
  return hull({bound_mul(a.min_value, b.min_value), bound_mul(a.min_value, b.max_value),
               bound_mul(a.max_value, b.min_value), bound_mul(a.max_value, b.max_value)});
}

ConstIntBound interval_scale(const ConstIntBound& a, int64_t k) {
  return interval_mul(a, ConstIntBound::exactly(k));
}

ConstIntBound interval_intersect(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

ConstIntBound interval_of(const SymExpr& e, const VarRanges& ranges) {
  int depth = 0;
  return interval_at(e, ranges, depth);
}

namespace {

/// interval_of() at `depth` levels of recursion (walk_depth.h).
ConstIntBound interval_at(const SymExpr& e, const VarRanges& ranges, int& depth) {
  const DataType t = e.dtype();
  if (t.is_float()) return ConstIntBound::everything();
  const WalkDepth level(depth);
  const ConstIntBound r = !level.too_deep() ? interval_as_written(e, ranges, depth)
                          : t.is_bool()     ? kBool
                                            : ConstIntBound::everything();
  if (t == DataType::int64() || !is_scalar_int(t)) return r;
  // Every value of a narrower integer dtype lies in its range.
  const IntRange range = int_range(t);
  return interval_intersect(r, {range.lo, range.hi});
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

ConstIntBound interval_as_written(const SymExpr& e, const VarRanges& ranges, int& depth) {
  if (is_chain_kind(e.kind())) {
    // a + b - c + ..., p || q || ...: the left operands of a chain of these kinds are
    // read in a loop (one level of recursion for the chain, not one per link). Every
    // link has the chain's dtype, so no clipping is lost on the way.
    absl::InlinedVector<const SymExpr*, 8> chain;
    for (const SymExpr* x = &e; is_chain_kind(x->kind()) && x->dtype() == e.dtype();
         x = &x->operand(0)) {
      chain.push_back(x);
    }
    ConstIntBound acc = interval_at(chain.back()->operand(0), ranges, depth);
    for (size_t i = chain.size(); i-- > 0;) {
      const ConstIntBound b = interval_at(chain[i]->operand(1), ranges, depth);
      acc = fold_interval(chain[i]->kind(), acc, b);
      if (i > 0) acc = clip_to_dtype(acc, e.dtype());
    }
    return acc;
  }
  switch (e.kind()) {
    case SymKind::kIntImm:
      return interval_const(e->value());
    case SymKind::kVar: {
      auto it = ranges.find(SymVar::from_expr(e));
      if (it != ranges.end()) return it->second;
      return e.dtype().is_bool() ? kBool : ConstIntBound::everything();
    }
    default:
      break;
  }
  auto operand = [&](size_t i) { return interval_at(e.operand(i), ranges, depth); };
  switch (e.kind()) {
    case SymKind::kAdd:
      return interval_add(operand(0), operand(1));
    case SymKind::kSub:
      return interval_add(operand(0), interval_scale(operand(1), -1));
    case SymKind::kMul:
      return interval_mul(operand(0), operand(1));
    case SymKind::kFloorDiv:
      return interval_floordiv(operand(0), operand(1));
    case SymKind::kFloorMod:
      return interval_floormod(operand(0), operand(1));
    case SymKind::kMin: {
      const ConstIntBound a = operand(0), b = operand(1);
      return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
    }
    case SymKind::kMax: {
      const ConstIntBound a = operand(0), b = operand(1);
      return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
    }
    case SymKind::kEQ:
    case SymKind::kNE:
    case SymKind::kLT:
    case SymKind::kLE:
    case SymKind::kGT:
    case SymKind::kGE:
      if (e.operand(0).dtype().is_float()) return kBool;
      return compare_interval(e.kind(), interval_add(operand(0), interval_scale(operand(1), -1)));
    case SymKind::kCast: {
      // An integer or boolean value that fits the new dtype keeps its interval;
      // interval_of() then clips to the dtype's range.
      const SymExpr& x = e.operand(0);
      if (x.dtype().is_float()) return e.dtype().is_bool() ? kBool : ConstIntBound::everything();
      const ConstIntBound a = operand(0);
      if (e.dtype().is_bool()) return a.min_value > 0 || a.max_value < 0 ? ConstIntBound::exactly(1) : kBool;
      const IntRange range = int_range(e.dtype());
      if (a.min_value >= range.lo && a.max_value <= range.hi) return a;
      return ConstIntBound::everything();
    }
    case SymKind::kAnd: {
      const ConstIntBound a = operand(0), b = operand(1);
      return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
    }
    case SymKind::kOr: {
      const ConstIntBound a = operand(0), b = operand(1);
      return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
    }
    case SymKind::kNot: {
      const ConstIntBound a = operand(0);
      return {1 - a.max_value, 1 - a.min_value};
    }
    case SymKind::kSelect: {
      const ConstIntBound c = operand(0);
      if (c.min_value == 1) return operand(1);
      if (c.max_value == 0) return operand(2);
      const ConstIntBound a = operand(1), b = operand(2);
      return {std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
    }
    default:
      return ConstIntBound::everything();
  }
}

}  // namespace

}  // namespace shape_detail
}  // namespace relax
