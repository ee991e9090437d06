// The 16-bit float formats: rounding to them and their bit layouts.
//
// float16 is IEEE binary16 (11 significand bits, exponents -14..15); bfloat16
// is float32's top half (8 significand bits, exponents -126..127). Rounding is
// to nearest, ties to even, with gradual underflow; a magnitude beyond the
// largest finite value becomes an infinity; NaN stays NaN (stored as the one
// quiet NaN, 0x7e00 and 0x7fc0).
//
// This is the one implementation of these conversions. The compiler uses it
// through relax/support/float_format.h (the shape layer, the text format, the
// loop-level evaluator), and the C++ code generator copies this file verbatim
// into every generated kernel source (embedded into the library at build time), so a
// kernel that stores a float16 rounds exactly as the compiler does. Hence its
// constraints: C++17, no relax includes, everything inline, include guards
// (the generated source is a main file, not a header).
#ifndef RELAX_SUPPORT_HALF_FLOAT_H_
#define RELAX_SUPPORT_HALF_FLOAT_H_

#include <cmath>
#include <cstdint>
#include <cstring>

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

/// The float16 value nearest to `v`.
inline double round_to_float16(double v) { return round_to_format(v, 11, -14, 15); }
/// The bfloat16 value nearest to `v`.
inline double round_to_bfloat16(double v) { return round_to_format(v, 8, -126, 127); }

/// The binary16 bit pattern of the float16 value nearest to `v` (NaN: 0x7e00).
inline uint16_t float16_bits(double v) {
  const double r = round_to_float16(v);
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
  const double r = round_to_bfloat16(v);
  if (std::isnan(r)) return 0x7fc0;
  // r is a bfloat16 value, so float32 holds it exactly and its low half is zero.
  const float f = static_cast<float>(r);
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<uint16_t>(u >> 16);
}

/// bfloat16_bits of a float32, on its bits alone (no libm; it vectorises): bfloat16 is
/// float32's top half, so rounding the value to nearest, ties to even, is rounding its bit
/// pattern at bit 16 the same way, through the subnormals and up to the infinity alike.
inline uint16_t bfloat16_bits_of_float(float v) {
  uint32_t u = 0;
  std::memcpy(&u, &v, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// The value of a bfloat16 bit pattern.
inline double bfloat16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return static_cast<double>(f);
}

/// The integer `magnitude` (with a sign) as a double rounded to odd: exact when
/// it fits 53 bits, otherwise truncated with the last bit set when anything
/// was cut off. Rounding that double once more to a format of at most 51
/// significand bits (float32, bfloat16, float16) gives what rounding the
/// integer once would.
inline double unsigned_to_double_odd(uint64_t magnitude, bool negative) {
  double d = 0;
  if (magnitude < (uint64_t{1} << 53)) {
    d = static_cast<double>(magnitude);
  } else {
    int width = 64;
    while (((magnitude >> (width - 1)) & 1) == 0) --width;
    const int cut = width - 53;
    const uint64_t kept = magnitude >> cut;
    const bool inexact = (magnitude & ((uint64_t{1} << cut) - 1)) != 0;
    d = std::ldexp(static_cast<double>(kept | (inexact ? 1 : 0)), cut);
  }
  return negative ? -d : d;
}

/// An int64 as a double rounded to odd (see unsigned_to_double_odd).
inline double int64_to_double_odd(int64_t v) {
  const uint64_t magnitude = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return unsigned_to_double_odd(magnitude, v < 0);
}

/// A uint64 as a double rounded to odd (see unsigned_to_double_odd).
inline double uint64_to_double_odd(uint64_t v) { return unsigned_to_double_odd(v, false); }

}  // namespace relax

#endif  // RELAX_SUPPORT_HALF_FLOAT_H_
