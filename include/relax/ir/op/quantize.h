// Constructors of group-wise symmetric quantisation calls (int4 / int8 weights).
#pragma once

#include <cstdint>

#include "relax/ir/expr.h"

namespace relax::op {

/// Floats from quantised values: out[.., k, ..] = q * scales[.., k / group_size, ..]
/// along `axis`, in the scales' dtype. bits=8: `packed` is int8 and q its value;
/// bits=4: `packed` is uint8 with two values per byte along `axis` (value k in
/// byte k / 2, low nibble first) and q = nibble - 8, so the result has twice
/// packed's extent along `axis`. `scales` has the result's shape with
/// ceil(K / group_size) along `axis`.
Expr dequantize(Expr packed, Expr scales, int64_t group_size, int64_t axis = -1, int64_t bits = 4);

/// The inverse for tools: a Tuple (packed, scales) with scale = max|x| over each
/// group / qmax (7 for bits=4, 127 for bits=8) in x's dtype and
/// q = clamp(round_half_even(x / scale), -qmax - 1, qmax) (0 where scale is 0),
/// packed as dequantize reads it (bits=4 needs an even extent along `axis`).
Expr quantize(Expr x, int64_t group_size, int64_t axis = -1, int64_t bits = 4);

}  // namespace relax::op
