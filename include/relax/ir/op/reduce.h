// Constructors of reductions, scans and softmax.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/op/optional_ints.h"

namespace relax::op {

/// The sum of `x` over `axis` (negative axes count from the end; all axes when
/// not given, none when empty). The reduced dims are dropped, or kept as 1 with
/// `keepdims`.
Expr sum(Expr x, OptionalInts axis = std::nullopt, bool keepdims = false);

/// The mean of float `x` over `axis` (as sum; the result keeps x's dtype,
/// 16-bit floats accumulate in float32).
Expr mean(Expr x, OptionalInts axis = std::nullopt, bool keepdims = false);
/// The maximum of `x` over `axis` (as sum).
Expr max(Expr x, OptionalInts axis = std::nullopt, bool keepdims = false);
/// The minimum of `x` over `axis` (as sum).
Expr min(Expr x, OptionalInts axis = std::nullopt, bool keepdims = false);
/// The product of `x` over `axis` (as sum).
Expr prod(Expr x, OptionalInts axis = std::nullopt, bool keepdims = false);
/// The population variance (mean of squared deviations from the mean, numpy's
/// ddof=0) of float `x` over `axis` (as sum), computed in two passes.
Expr variance(Expr x, OptionalInts axis = std::nullopt, bool keepdims = false);
/// The population standard deviation, sqrt(variance(x, axis, keepdims)).
Expr std(Expr x, OptionalInts axis = std::nullopt, bool keepdims = false);
/// The int64 index of the first maximum of `x` along `axis`; without an axis,
/// the index into the flattened (row-major) tensor. `keepdims` keeps the
/// reduced dims as 1.
Expr argmax(Expr x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
/// The int64 index of the first minimum (as argmax).
Expr argmin(Expr x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
/// The running sum of `x` along `axis`, in x's dtype; without an axis, of the
/// flattened tensor (a 1-D result of x's element count), as numpy.
Expr cumsum(Expr x, std::optional<int64_t> axis = std::nullopt);
/// The running product of `x` (as cumsum).
Expr cumprod(Expr x, std::optional<int64_t> axis = std::nullopt);

/// The k largest (largest = false: smallest) elements of x along `axis`, sorted that way, and
/// their int64 indices along the axis: a Tuple (values, indices) of x's dims with the axis k
/// long. Equal elements keep their order (the lower index first), as ONNX TopK and torch.topk
/// do. k is a constant, provably at most the axis' length.
Expr topk(Expr x, int64_t k, int64_t axis = -1, bool largest = true);

/// exp(x) normalised along `axis` (negative counts from the end) so that each
/// slice sums to 1, computed stably (the slice's maximum is subtracted first).
/// `x` is a float tensor; the result has its annotation.
Expr softmax(Expr x, int64_t axis = -1);

}  // namespace relax::op
