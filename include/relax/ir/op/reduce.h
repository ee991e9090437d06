// Constructors of reductions and normalisations.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "relax/ir/expr.h"

namespace relax::op {

/// The sum of `x` over `axis` (negative axes count from the end; all axes when
/// not given, none when empty). The reduced dims are dropped, or kept as 1 with
/// `keepdims`.
Expr sum(Expr x, std::optional<std::vector<int64_t>> axis = std::nullopt, bool keepdims = false);

/// exp(x) normalised along `axis` (negative counts from the end) so that each
/// slice sums to 1, computed stably (the slice's maximum is subtracted first).
/// `x` is a float tensor; the result has its annotation.
Expr softmax(Expr x, int64_t axis = -1);

}  // namespace relax::op
