// Constructors of linear-algebra operator calls.
#pragma once

#include "relax/ir/expr.h"

namespace relax::op {

/// Matrix product as numpy.matmul: a rank-1 operand is a vector, leading
/// (batch) dims broadcast, and the inner dims must be provably equal.
Expr matmul(Expr lhs, Expr rhs);

}  // namespace relax::op
