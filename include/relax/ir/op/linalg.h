// Constructors of linear-algebra operator calls.
#pragma once

#include <optional>

#include "relax/ir/expr.h"
#include "relax/support/data_type.h"

namespace relax::op {

/// Matrix product as numpy.matmul: a rank-1 operand is a vector, leading
/// (batch) dims broadcast, and the inner dims must be provably equal. The
/// result has dtype `out_dtype` when given (mixed precision: float16 operands
/// with a float32 result, int8 with int32), else the operands'.
Expr matmul(Expr lhs, Expr rhs, std::optional<DataType> out_dtype = std::nullopt);

/// x . weight^T + bias for x (..., k) and weight (m, k), giving (..., m); the
/// optional bias broadcasts to the result and has its dtype; `out_dtype` as
/// for matmul.
Expr linear(Expr x, Expr weight, std::optional<Expr> bias = std::nullopt,
            std::optional<DataType> out_dtype = std::nullopt);

}  // namespace relax::op
