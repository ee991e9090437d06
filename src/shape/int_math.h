// Integer helpers shared by evaluation, bounds and simplification:
// checked arithmetic, gcd, and arithmetic on bounds where
// INT64_MIN / INT64_MAX stand for -inf / +inf.
#pragma once

#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>

#include "relax/support/int_math.h"

namespace relax::shape_detail {

inline constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();

// The rule for int64 arithmetic in the shape layer: every operation on values that outside
// input can choose (literals, coefficients, constant terms, bounds, bindings) goes through the
// checked helpers below, which answer nullopt where C++ would overflow (undefined behaviour:
// a sum or product past ±2^63, the negation or absolute value of INT64_MIN, INT64_MIN / -1,
// INT64_MIN % -1) or divide by zero. On nullopt a rewrite does not fire (the expression is
// kept as it is), a bound widens to an infinity, and evaluation reports an error Status; no
// caller may go on with a wrapped value. Raw `-`, `/` and `%` are left only where a comment
// says why the operand cannot be INT64_MIN (or the divisor -1 or 0).

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// -a; nullopt for INT64_MIN.
inline std::optional<int64_t> checked_neg(int64_t a) {
  if (a == kNegInf) return std::nullopt;
  return -a;
}
/// |a|; nullopt for INT64_MIN.
inline std::optional<int64_t> checked_abs(int64_t a) {
  if (a == kNegInf) return std::nullopt;
  return a < 0 ? -a : a;
}
/// a / b rounded toward zero; nullopt for b == 0 and for INT64_MIN / -1.
inline std::optional<int64_t> checked_div(int64_t a, int64_t b) {
  if (b == 0 || (a == kNegInf && b == -1)) return std::nullopt;
  return a / b;
}
/// Whether b divides a (b != 0); defined for every a and b, INT64_MIN with -1 included
/// (C++'s INT64_MIN % -1 overflows).
inline bool divides(int64_t b, int64_t a) { return b != 0 && (b == -1 || a % b == 0); }
/// a / b when b divides a exactly and the quotient fits; nullopt otherwise (b == 0, a
/// remainder, INT64_MIN / -1).
inline std::optional<int64_t> exact_div(int64_t a, int64_t b) {
  if (!divides(b, a)) return std::nullopt;
  return checked_div(a, b);
}

/// gcd of absolute values; gcd(0, x) == |x|. Operands must not be INT64_MIN.
inline int64_t gcd(int64_t a, int64_t b) { return std::gcd(a, b); }

// ---------------------------------------------------------------------------
// Bound arithmetic: kNegInf and kPosInf are infinities, sums saturate.

inline bool is_inf(int64_t v) { return v == kNegInf || v == kPosInf; }

/// a + b on extended integers. For a lower end (`lower`) an infinite -inf
/// wins, for an upper end +inf wins; overflow saturates.
inline int64_t bound_add(int64_t a, int64_t b, bool lower) {
  const int64_t first = lower ? kNegInf : kPosInf;
  const int64_t second = lower ? kPosInf : kNegInf;
  if (a == first || b == first) return first;
  if (a == second || b == second) return second;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}

/// -a on extended integers.
inline int64_t bound_neg(int64_t a) {
  if (a == kNegInf) return kPosInf;
  if (a == kPosInf) return kNegInf;
  return -a;
}

/// a * b on extended integers; 0 * inf is 0 (an unbounded factor times zero is zero).
inline int64_t bound_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  const bool negative = (a < 0) != (b < 0);
  if (is_inf(a) || is_inf(b)) return negative ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return negative ? kNegInf : kPosInf;
  return r;
}

/// floor(a / b) on extended integers, b != 0.
inline int64_t bound_floordiv(int64_t a, int64_t b) {
  if (is_inf(a)) {
    const bool negative = (a < 0) != (b < 0);
    return negative ? kNegInf : kPosInf;
  }
  if (is_inf(b)) {
    // A finite numerator over an infinite divisor tends to 0 from one side.
    if (a == 0) return 0;
    return ((a < 0) != (b < 0)) ? -1 : 0;
  }
  if (a == kNegInf + 1 && b == -1) return kPosInf;
  return floor_div(a, b);
}

}  // namespace relax::shape_detail
