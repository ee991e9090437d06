// Vectorisable exp, log, sigmoid, tanh, erf, sin and cos for generated kernels.
//
// libm's expf/logf/tanhf/erff/sinf/cosf are opaque calls, so a loop that calls them runs one
// element at a time. These are inline, branch-free float32 versions (range
// reduction, a polynomial, selects instead of branches, integer bit tricks
// instead of float-to-int conversions), so that g++ -O3 turns a loop over them
// into SIMD code. The C++ code generator copies this file verbatim into every
// generated kernel source (embedded into the library at build time) and the intrinsic
// table spells exp/log/sigmoid/tanh/erf/sin/cos as relax::vec_*; the project's tests
// check the very same code against libm in double.
// Hence the constraints: C++17, no relax includes, everything inline, include
// guards (the generated source is a main file, not a header).
//
// Error bounds, in ulp of the exact result's float32 spacing (the subnormal
// spacing below FLT_MIN), with and without FMA. The tests assert
// them over a sweep of 3.2 million inputs (all magnitudes, dense in
// [-100, 100], the special values), not exhaustively; the worst errors found
// with g++ 12 there and in a sparser sweep of all floats are in parentheses:
//   vec_exp      <= 1.5 ulp (1.04); subnormal results are rounded once, so
//                gradual underflow is kept; x > 88.7228 gives +inf, x < -103.98 +0.
//   vec_sigmoid  <= 3 ulp (2.78), the negative tail down to subnormals included.
//   vec_tanh     <= 2 ulp (1.30).
//   vec_erf      <= 3 ulp (2.51).
//   vec_log      <= 2 ulp (1.24), subnormal inputs included.
//   vec_sin, vec_cos <= 1 ulp (0.50) for |x| <= 1.6e9, which covers the
//                angles of rotary embeddings (positions up to ~1e5 or 1e6
//                times frequencies <= 1). The reduction by pi/2 and the
//                polynomials are computed in double (see sin_cos_quadrant),
//                so the only sizeable error is the final rounding to float.
//                |x| > 1.6e9 (where float32's spacing is 128 or more, so the
//                argument carries no phase at all) gives some value in
//                [-1, 1], not an accurate one.
// Special values: NaN gives NaN; exp(+inf) = +inf, exp(-inf) = +0;
// log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf; sigmoid(+inf) = 1,
// sigmoid(-inf) = +0; tanh(+-inf) = erf(+-inf) = +-1; tanh(-0) = erf(-0) = -0;
// sin(+-inf) = cos(+-inf) = NaN; sin(-0) = -0, cos(-0) = 1.
// The code is written so that g++ 12 if-converts every choice (see the notes
// in vec_log): a test checks that a loop over each function
// compiles to packed arithmetic.
//
// float64 keeps libm (std::exp, std::log, std::tanh, std::erf, std::sin, std::cos): those loops
// stay scalar; float64 kernels are not where models spend their time.
#ifndef RELAX_SUPPORT_KERNEL_MATH_H_
#define RELAX_SUPPORT_KERNEL_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__GNUC__)
#define RELAX_MATH_INLINE inline __attribute__((always_inline))
#else
#define RELAX_MATH_INLINE inline
#endif

namespace relax {
namespace kernel_math_detail {

RELAX_MATH_INLINE uint32_t bits_of(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

RELAX_MATH_INLINE float float_of(uint32_t u) {
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// a * b + c: one rounding where the ISA has FMA (a libm fmaf call would not
// vectorise), two otherwise; the error bounds hold for both.
RELAX_MATH_INLINE float mul_add(float a, float b, float c) {
#if defined(__FMA__)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

RELAX_MATH_INLINE uint64_t bits_of(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

RELAX_MATH_INLINE double double_of(uint64_t u) {
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// sin(x) for quadrant_offset 0, cos(x) = sin(x + pi/2) for 1.
//
// x = n pi/2 + r, |r| <= pi/4 (a hair more when x (2/pi) is close to a half
// integer), is computed in double: n = round(x 2/pi) by the shifter trick (its
// low two bits, read from the bits, are the quadrant), then r = x - n C1 - n C2
// - n C3 (Cody-Waite) with pi/2 = C1 + C2 + C3 + O(2^-103), C1 and C2 of 23
// significant bits. For |n| < 2^30 (|x| < 1.68e9) n C1 and n C2 are exact
// doubles and so are both subtractions (x is a float: every term is a
// multiple of 2^-46 below 2^8), so r is x - n pi/2 with one rounding (2^-53
// relative) plus n 2^-103 absolute: far below float32's resolution even when
// x is the float closest to a multiple of pi/2. With FMA the same holds (the
// fused forms are exact or better). sin(r) and cos(r) are Taylor polynomials
// in double (truncation error below 1e-11 on |r| <= pi/4), so the result is
// off by the final rounding to float and 2^-40 or so more.
//
// Beyond |n| >= 2^30 r is no longer accurate; it is clamped to [-0.8, 0.8] so
// that the result stays in [-1, 1]. NaN and +-inf give NaN (inf - inf in r).
RELAX_MATH_INLINE float sin_cos_quadrant(float x, uint64_t quadrant_offset) {
  const double xd = x;
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52
  const double t = xd * 0x1.45f306dc9c883p-1 + shifter;  // 2/pi
  const double n = t - shifter;
  const uint64_t quadrant = bits_of(t) + quadrant_offset;  // low two bits
  double r = xd - n * 0x1.921fb4p+0;
  r = r - n * 0x1.4442d0p-24;
  r = r - n * 0x1.8469898cc5170p-48;
  r = r > 0.8 ? 0.8 : r;
  r = r < -0.8 ? -0.8 : r;
  const double r2 = r * r;
  // sin(r) = r (1 + r^2 S(r^2)), so sin(-0) = -0.
  double s = -1.0 / 39916800.0;
  s = s * r2 + 1.0 / 362880.0;
  s = s * r2 - 1.0 / 5040.0;
  s = s * r2 + 1.0 / 120.0;
  s = s * r2 - 1.0 / 6.0;
  const double sin_r = r * (1.0 + r2 * s);
  // cos(r) = 1 + r^2 C(r^2).
  double c = 1.0 / 479001600.0;
  c = c * r2 - 1.0 / 3628800.0;
  c = c * r2 + 1.0 / 40320.0;
  c = c * r2 - 1.0 / 720.0;
  c = c * r2 + 1.0 / 24.0;
  c = c * r2 - 0.5;
  const double cos_r = 1.0 + r2 * c;
  // Quadrant q: sin(x) = sin(r), cos(r), -sin(r), -cos(r) for q = 0, 1, 2, 3.
  // Both choices are blends of bits (as selects g++ may branch, and the loop
  // stays scalar).
  const uint64_t use_cos = 0u - (quadrant & 1u);
  const uint64_t chosen = (bits_of(cos_r) & use_cos) | (bits_of(sin_r) & ~use_cos);
  return static_cast<float>(double_of(chosen ^ ((quadrant & 2u) << 62)));
}

}  // namespace kernel_math_detail

/// sin(x) in float32 (<= 1 ulp for |x| <= 1.6e9; see the top of this file).
RELAX_MATH_INLINE float vec_sin(float x) { return kernel_math_detail::sin_cos_quadrant(x, 0); }

/// cos(x) in float32 (<= 1 ulp for |x| <= 1.6e9; see the top of this file).
RELAX_MATH_INLINE float vec_cos(float x) { return kernel_math_detail::sin_cos_quadrant(x, 1); }

/// e^x in float32 (<= 1.5 ulp; see the top of this file).
RELAX_MATH_INLINE float vec_exp(float x) {
  using namespace kernel_math_detail;
  // Beyond these the result is +inf or +0 anyway; NaN passes both (comparisons
  // with NaN are false) and stays NaN through the arithmetic below.
  x = x > 89.0f ? 89.0f : x;
  x = x < -104.0f ? -104.0f : x;
  // n = round(x / ln 2): adding 1.5 * 2^23 leaves the rounded integer in the
  // low significand bits, read back as bits (no float-to-int conversion).
  const float shifter = 12582912.0f;
  const float t = mul_add(x, 1.44269504f, shifter);
  const float n = t - shifter;
  const uint32_t n_bits = bits_of(t) - bits_of(shifter);  // n as two's complement
  // r = x - n ln 2 in two steps (Cody-Waite): n * 0.693359375 is exact for |n| < 2^15.
  float r = mul_add(n, -0.693359375f, x);
  r = mul_add(n, 2.12194440e-4f, r);
  // e^r = 1 + r + r^2 q(r) on |r| <= ln2/2, q a near-minimax fit (error 8e-9).
  float q = 1.39269268e-3f;
  q = mul_add(q, r, 8.36377405e-3f);
  q = mul_add(q, r, 4.16665487e-2f);
  q = mul_add(q, r, 1.66665733e-1f);
  q = mul_add(q, r, 0.5f);
  const float p = mul_add(r * r, q, r) + 1.0f;
  // p * 2^n as p * 2^n1 * 2^n2 with n1 = floor(n / 2): both factors are normal
  // for n in [-150, 129], so the first product is exact and the second rounds
  // once (overflowing to inf, or gradually to a subnormal or zero).
  const int32_t n_int = static_cast<int32_t>(n_bits);
  const uint32_t n1 = static_cast<uint32_t>(n_int >> 1);
  const uint32_t n2 = n_bits - n1;
  const float s1 = float_of((n1 + 127u) << 23);
  const float s2 = float_of((n2 + 127u) << 23);
  return p * s1 * s2;
}

/// 1 / (1 + e^-x) in float32 (<= 3 ulp). For x < 0 it is e^x / (1 + e^x), so
/// the tail keeps its relative accuracy down to the subnormals.
RELAX_MATH_INLINE float vec_sigmoid(float x) {
  const float e = vec_exp(-std::fabs(x));
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

/// tanh(x) in float32 (<= 2 ulp).
RELAX_MATH_INLINE float vec_tanh(float x) {
  using namespace kernel_math_detail;
  const float a = std::fabs(x);
  // tanh(|x|) with x's sign (so tanh(-0) = -0).
  // |x| < 0.625: |x| + |x|^3 P(x^2), P a near-minimax fit (relative error 6e-10).
  const float x2 = a * a;
  float p = 2.29274482e-3f;
  p = mul_add(p, x2, -8.34394526e-3f);
  p = mul_add(p, x2, 2.17689183e-2f);
  p = mul_add(p, x2, -5.39592579e-2f);
  p = mul_add(p, x2, 1.33333042e-1f);
  p = mul_add(p, x2, -3.33333343e-1f);
  const float small = mul_add(a * x2, p, a);
  // Otherwise 1 - 2 / (e^2|x| + 1) (e^2|x| = inf gives 1).
  const float big = 1.0f - 2.0f / (vec_exp(2.0f * a) + 1.0f);
  return std::copysign(a < 0.625f ? small : big, x);
}

/// erf(x) in float32 (<= 3 ulp).
RELAX_MATH_INLINE float vec_erf(float x) {
  using namespace kernel_math_detail;
  const float a = std::fabs(x);
  // |x| < 0.875: x P(x^2), P a near-minimax fit (error 2e-10).
  const float x2 = x * x;
  float p = 8.69036885e-5f;
  p = mul_add(p, x2, -8.2145707e-4f);
  p = mul_add(p, x2, 5.20704873e-3f);
  p = mul_add(p, x2, -2.68617067e-2f);
  p = mul_add(p, x2, 1.12837352e-1f);
  p = mul_add(p, x2, -3.76126349e-1f);
  p = mul_add(p, x2, 1.12837923f);
  const float small = x * p;
  // Otherwise 1 - e^-x^2 Q(|x| - 2) with |x| clamped to 4 (erf(4) rounds to 1),
  // Q a near-minimax fit of e^x^2 erfc(x) on [0.875, 4] (error 2e-8).
  const float c = a > 4.0f ? 4.0f : a;
  const float t = c - 2.0f;
  float q = -5.19998252e-7f;
  q = mul_add(q, t, 4.58922432e-6f);
  q = mul_add(q, t, -1.89884358e-5f);
  q = mul_add(q, t, 5.85813614e-5f);
  q = mul_add(q, t, -1.82247459e-4f);
  q = mul_add(q, t, 5.88024384e-4f);
  q = mul_add(q, t, -1.83226867e-3f);
  q = mul_add(q, t, 5.44318883e-3f);
  q = mul_add(q, t, -1.54607501e-2f);
  q = mul_add(q, t, 4.18022908e-2f);
  q = mul_add(q, t, -1.06796436e-1f);
  q = mul_add(q, t, 2.55395681e-1f);
  const float big = std::copysign(1.0f - vec_exp(-c * c) * q, x);
  return a < 0.875f ? small : big;
}

/// ln(x) in float32 (<= 2 ulp).
RELAX_MATH_INLINE float vec_log(float x) {
  using namespace kernel_math_detail;
  // A subnormal x is scaled by 2^23 into the normal range first (the scale's
  // exponent gives the 23 back).
  const float scale = x < 1.17549435e-38f ? 8388608.0f : 1.0f;
  const uint32_t u = bits_of(x * scale);
  const int32_t scale_exponent = static_cast<int32_t>((bits_of(scale) - 0x3f800000u) >> 23);
  // x = 2^e m with m in [sqrt(1/2), sqrt(2)): e is the exponent of x / sqrt(1/2).
  const int32_t e_field = static_cast<int32_t>(u - 0x3f3504f3u) >> 23;
  const float m = float_of(u - (static_cast<uint32_t>(e_field) << 23));
  const float e = static_cast<float>(e_field - scale_exponent);
  // ln(1 + f) = f - f^2/2 + f^3 P(f), P a near-minimax fit (error 2e-9).
  const float f = m - 1.0f;  // exact
  float p = 6.97134659e-2f;
  p = mul_add(p, f, -1.14830814e-1f);
  p = mul_add(p, f, 1.16870247e-1f);
  p = mul_add(p, f, -1.24253601e-1f);
  p = mul_add(p, f, 1.42488763e-1f);
  p = mul_add(p, f, -1.66678101e-1f);
  p = mul_add(p, f, 2.0000720e-1f);
  p = mul_add(p, f, -2.4999997e-1f);
  p = mul_add(p, f, 3.33333313e-1f);
  const float f2 = f * f;
  const float r = mul_add(f2 * f, p, mul_add(-0.5f, f2, f));
  // + e ln 2, in two parts (Cody-Waite).
  const float result = mul_add(e, 0.693359375f, mul_add(e, -2.12194440e-4f, r));
  // 0 gives -inf, inf gives inf, negative and NaN inputs give NaN. The last
  // choice is a blend of bits: as a select, g++ 12 moves the polynomial into
  // a branch of its own and leaves the loop scalar.
  const float inf = HUGE_VALF;
  float special = NAN;
  special = x == inf ? inf : special;
  special = x == 0.0f ? -inf : special;
  const uint32_t keep = 0u - static_cast<uint32_t>((x > 0.0f) & (x < inf));
  return float_of((bits_of(result) & keep) | (bits_of(special) & ~keep));
}

// float64: libm (see the top of this file).
inline double vec_exp(double x) { return std::exp(x); }
inline double vec_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double vec_tanh(double x) { return std::tanh(x); }
inline double vec_erf(double x) { return std::erf(x); }
inline double vec_log(double x) { return std::log(x); }
inline double vec_sin(double x) { return std::sin(x); }
inline double vec_cos(double x) { return std::cos(x); }

}  // namespace relax

#undef RELAX_MATH_INLINE

#endif  // RELAX_SUPPORT_KERNEL_MATH_H_
