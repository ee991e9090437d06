// Sliding windows: the shared arithmetic of the convolution and pooling
// families (private to src/ir/op).
//
// A window op reads its input at `out * stride - pad_before + tap * dilation`
// along each spatial dim; positions outside [0, dim) read the padding value.
// Deduction uses the output-size formula (floor mode):
//   out = floordiv(in + pad_before + pad_after - dilation * (kernel - 1) - 1, stride) + 1
// and the kernels use window_load, a load guarded by a select on the bounds
// (the index is also clamped into the buffer, so that no evaluator that
// computes both sides of the select reads outside it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/buffer.h"

namespace relax::detail {

/// A per-spatial-dim attribute (strides, dilation, pool_size) with `n` spatial
/// dims: one value applies to every dim, n values one each; any other count,
/// or a value below `min_value`, is an error naming the op and the key.
absl::StatusOr<std::vector<int64_t>> per_spatial_dim(const std::string& op, const std::string& key,
                                                     const std::vector<int64_t>& values, size_t n,
                                                     int64_t min_value);

/// The padding of each spatial dim, before and after.
struct WindowPadding {
  std::vector<int64_t> before;
  std::vector<int64_t> after;
};
/// `padding` with `n` spatial dims: one value (every dim, both sides) or n values
/// (one per dim, both sides); with `allow_before_after` and n == 1 also
/// [before, after]. Values must be >= 0.
absl::StatusOr<WindowPadding> window_padding(const std::string& op,
                                             const std::vector<int64_t>& padding, size_t n,
                                             bool allow_before_after);

/// The output extent of a window of `kernel` taps over `in` (floor mode), simplified.
SymExpr window_out_dim(const SymExpr& in, const SymExpr& kernel, int64_t stride, int64_t dilation,
                       int64_t pad_before, int64_t pad_after, Analyzer& analyzer);

/// OK unless `out` is provably < 1; the error names the op, the spatial dim
/// `dim` of the data, its extent and the kernel's.
absl::Status check_window_out_dim(const std::string& op, size_t dim, const SymExpr& out,
                                  const SymExpr& in, const SymExpr& kernel, Analyzer& analyzer);

/// `buffer[index]` where every index flagged in `checked` lies in [0, dim) and
/// `extra` (when defined) holds, else `pad` (of the buffer's dtype). Unchecked
/// indices must be in bounds.
SymExpr window_load(const Buffer& buffer, const std::vector<SymExpr>& index,
                    const std::vector<bool>& checked, const SymExpr& pad,
                    const SymExpr& extra = SymExpr());

/// A zero of `dtype` (float or integer).
SymExpr zero_of(DataType dtype);

}  // namespace relax::detail
