// Constructors of shape-manipulation operator calls.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "relax/ir/expr.h"

namespace relax::op {

/// `x` with a new shape of the same element count; one dim may be -1, inferred.
Expr reshape(Expr x, Expr shape);
/// As above with the new shape given as dims (built into a ShapeExpr).
Expr reshape(Expr x, std::vector<SymExpr> shape);

/// `x` with its dims permuted: result dim i is x's dim axes[i]; without axes the
/// dims are reversed. Negative axes count from the end.
Expr permute_dims(Expr x, std::optional<std::vector<int64_t>> axes = std::nullopt);

}  // namespace relax::op
