// Constructors of elementwise operator calls (see ops.h for the conventions).
#pragma once

#include "relax/ir/expr.h"
#include "relax/ir/op/operand.h"

namespace relax::op {

// ---- Unary (a Tensor; the result has its annotation).

/// e^x of a float tensor.
Expr exp(Expr x);

// ---- Binary with numpy broadcasting. Either operand may be a scalar: a Prim
// of the tensor's dtype, or a C++ number / an int64 or float64 constant that
// adapts to it. Two Prims give a Prim, whose value is known when theirs are.

/// lhs + rhs.
Expr add(Operand lhs, Operand rhs);
/// lhs * rhs.
Expr multiply(Operand lhs, Operand rhs);

}  // namespace relax::op
