// Constructors of creation operators: filled tensors, ranges, triangles.
#pragma once

#include <optional>

#include "relax/ir/expr.h"
#include "relax/ir/op/operand.h"

namespace relax::op {

/// A tensor of dims `shape` (a Shape value) and `dtype`, filled with 0.
Expr zeros(Expr shape, DataType dtype);
/// A tensor of dims `shape` and `dtype`, filled with 1.
Expr ones(Expr shape, DataType dtype);
/// A tensor of dims `shape` filled with `value` (a Prim, possibly symbolic),
/// converted to `dtype` (default: the value's dtype).
Expr full(Expr shape, Operand value, std::optional<DataType> dtype = std::nullopt);
/// A tensor of x's shape filled with 0, of `dtype` (default: x's).
Expr zeros_like(Expr x, std::optional<DataType> dtype = std::nullopt);
/// A tensor of x's shape filled with 1, of `dtype` (default: x's).
Expr ones_like(Expr x, std::optional<DataType> dtype = std::nullopt);
/// A tensor of x's shape filled with `value`, of `dtype` (default: x's).
Expr full_like(Expr x, Operand value, std::optional<DataType> dtype = std::nullopt);
/// The 1-D tensor start, start + step, ... (end excluded) of length
/// ceil((end - start) / step), 0 when negative. The bounds are Prims (an end
/// of `n` gives length `n - start` for integers with step 1). `dtype`
/// defaults to int64, or to the first float argument's dtype.
Expr arange(Operand start, Operand end, Operand step = 1,
            std::optional<DataType> dtype = std::nullopt);
/// x with the elements above the k-th diagonal of its last two dims zeroed
/// (k > 0 above the main diagonal, < 0 below; a Prim, possibly symbolic).
Expr tril(Expr x, Operand k = 0);
/// x with the elements below the k-th diagonal of its last two dims zeroed.
Expr triu(Expr x, Operand k = 0);

}  // namespace relax::op
