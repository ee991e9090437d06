// Group-wise symmetric int4 weights, made at run time: the layout the compiler's int4 matmul
// reads (relax/ir/op/quantize.h, bits = 4 along axis 0; relax_int4_row_f32 of
// relax/support/micro_kernels.h).
//
//   absl::StatusOr<std::pair<Tensor, Tensor>> q = quantize_int4(w, 32);  // w: float32 (K, N)
//   // q->first: uint8 (K / 2, N), q->second: float32 (K / 32, N)
//
// A weight W of shape (K, N) (row k = input feature k) is cut along K into groups of
// `group_size` rows, one float32 scale per group and column:
//   scale[g, j] = max |W[k, j]| over the group's rows / 7            (float32 division)
//   q[k, j]     = clamp(round_half_even(W[k, j] / scale[g, j]), -8, 7), 0 where the scale is 0
//   packed[k / 2, j] = (q[2i, j] + 8) + 16 * (q[2i + 1, j] + 8)      (low nibble: even k)
// which is op::quantize(w, group_size, /*axis=*/0, /*bits=*/4) bit for bit (its float32
// arithmetic: the scale is the stored float, the ratio a float32 quotient). dequantize_int4 is
// the inverse, W ~= (nibble - 8) * scale, within scale / 2 per element.
#pragma once

#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "relax/runtime/tensor.h"

namespace relax::runtime {

/// Quantises `w` (a contiguous host float32 tensor of shape (K, N)) to (packed, scales) as the
/// file comment says. InvalidArgument naming the expected and actual values for another dtype
/// or rank, a strided tensor, an odd or non-positive group_size, K not a multiple of
/// group_size, and for an infinite or NaN weight (naming its row and column).
absl::StatusOr<std::pair<Tensor, Tensor>> quantize_int4(const Tensor& w, int64_t group_size);

/// The float32 (K, N) weights that `packed` (uint8 (K / 2, N)) and `scales` (float32
/// (K / group_size, N)) hold: (nibble - 8) * scale. InvalidArgument naming the expected and
/// actual shapes and dtypes otherwise.
absl::StatusOr<Tensor> dequantize_int4(const Tensor& packed, const Tensor& scales, int64_t group_size);

}  // namespace relax::runtime
