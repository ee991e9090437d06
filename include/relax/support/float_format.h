// Rounding doubles to the float dtypes, and the bit layouts of the 16-bit ones.
//
// Loop-level values are computed in double and rounded to their node's dtype
// after each operation; tensors of float16 and bfloat16 hold the IEEE binary16
// and the bfloat16 (float32's top half) bit patterns. Rounding is to nearest,
// ties to even, with gradual underflow; a magnitude beyond the largest finite
// value becomes an infinity; NaN stays NaN. Header-only, like data_type.h; the
// one rounding of the shape layer, the text format and the loop-level evaluator.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "relax/support/data_type.h"

namespace relax {

/// The value nearest to `v` in a binary format with `precision` significand
/// bits (the implicit one included) and normal exponents [min_exp, max_exp].
inline double round_to_format(double v, int precision, int min_exp, int max_exp) {
  if (!std::isfinite(v) || v == 0) return v;
  int e = 0;
  (void)std::frexp(v, &e);  // v = m * 2^e with 0.5 <= |m| < 1: the exponent is e - 1
  const int exponent = e - 1 < min_exp ? min_exp : e - 1;
  const double quantum = std::ldexp(1.0, exponent - (precision - 1));
  // v / quantum is exact (a power-of-two scaling); rint rounds ties to even.
  const double rounded = std::rint(v / quantum) * quantum;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), max_exp);
  if (std::fabs(rounded) > max_finite) return std::copysign(INFINITY, v);
  return rounded;
}

/// The value of the float dtype `t` (float16, bfloat16, float32, float64)
/// nearest to `v`.
inline double round_to_dtype(double v, DataType t) {
  if (t.code == DataType::Code::kBFloat) return round_to_format(v, 8, -126, 127);
  switch (t.bits) {
    case 16:
      return round_to_format(v, 11, -14, 15);
    case 32:
      return static_cast<double>(static_cast<float>(v));  // one IEEE rounding, ties to even
    default:
      return v;
  }
}

/// The binary16 bit pattern of the float16 value nearest to `v` (NaN: 0x7e00).
inline uint16_t float16_bits(double v) {
  const double r = round_to_format(v, 11, -14, 15);
  if (std::isnan(r)) return 0x7e00;
  const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  const double a = std::fabs(r);
  if (std::isinf(a)) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) return sign | static_cast<uint16_t>(a * std::ldexp(1.0, 24));
  int e = 0;
  (void)std::frexp(a, &e);
  const int exponent = e - 1;
  const auto mantissa = static_cast<uint16_t>((std::ldexp(a, -exponent) - 1.0) * 1024.0);
  return sign | static_cast<uint16_t>((exponent + 15) << 10) | mantissa;
}

/// The value of a binary16 bit pattern.
inline double float16_value(uint16_t bits) {
  const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa != 0 ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

/// The bit pattern of the bfloat16 value nearest to `v` (NaN: 0x7fc0).
inline uint16_t bfloat16_bits(double v) {
  const double r = round_to_format(v, 8, -126, 127);
  if (std::isnan(r)) return 0x7fc0;
  // r is a bfloat16 value, so float32 holds it exactly and its low half is zero.
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16);
}

/// The value of a bfloat16 bit pattern.
inline double bfloat16_value(uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

}  // namespace relax
