// Rounding doubles to the float dtypes, and the bit layouts of the 16-bit ones.
//
// Tensors of float16 and bfloat16 hold the IEEE binary16 and the bfloat16
// (float32's top half) bit patterns. Rounding is to nearest, ties to even, with
// gradual underflow; a magnitude beyond the largest finite value becomes an
// infinity; NaN stays NaN. Header-only, like data_type.h; the one rounding of
// the shape layer, the text format and the loop-level evaluator. The 16-bit
// formats themselves are relax/support/half_float.h, of which every generated
// kernel source carries a verbatim copy, so kernels round as the compiler does.
#pragma once

#include <bit>  // (users of this header rely on it)
#include <cmath>

#include "relax/support/data_type.h"
#include "relax/support/half_float.h"

namespace relax {

/// The value of the float dtype `t` (float16, bfloat16, float32, float64)
/// nearest to `v`.
inline double round_to_dtype(double v, DataType t) {
  if (t.code == DataType::Code::kBFloat) return round_to_bfloat16(v);
  switch (t.bits) {
    case 16:
      return round_to_float16(v);
    case 32:
      return static_cast<double>(static_cast<float>(v));  // one IEEE rounding, ties to even
    default:
      return v;
  }
}

}  // namespace relax
