// Constructors of elementwise operator calls (see ops.h for the conventions).
#pragma once

#include <string>

#include "relax/ir/expr.h"
#include "relax/ir/op/operand.h"

namespace relax::op {

// ---- Unary (a Tensor; the result has its annotation, bool for isnan).

/// -x (numeric; unsigned integers wrap).
Expr neg(Expr x);
/// |x| (numeric).
Expr abs(Expr x);
/// e^x of a float tensor.
Expr exp(Expr x);
/// Natural logarithm of a float tensor.
Expr log(Expr x);
/// Square root of a float tensor.
Expr sqrt(Expr x);
/// 1 / sqrt(x) of a float tensor.
Expr rsqrt(Expr x);
/// Sine (radians) of a float tensor.
Expr sin(Expr x);
/// Cosine (radians) of a float tensor.
Expr cos(Expr x);
/// Hyperbolic tangent of a float tensor.
Expr tanh(Expr x);
/// 1 / (1 + e^-x) of a float tensor.
Expr sigmoid(Expr x);
/// The error function of a float tensor.
Expr erf(Expr x);
/// max(x, 0) (numeric).
Expr relu(Expr x);
/// x * Phi(x) of a float tensor: `approximate` "none" (with erf) or "tanh".
Expr gelu(Expr x, std::string approximate = "none");
/// x * sigmoid(x) of a float tensor.
Expr silu(Expr x);
/// minimum(maximum(x, min), max) (numeric; whole-number bounds for integers).
Expr clip(Expr x, double min, double max);
/// Largest integer <= x (integers unchanged).
Expr floor(Expr x);
/// Smallest integer >= x (integers unchanged).
Expr ceil(Expr x);
/// Nearest integer, ties to even (integers unchanged).
Expr round(Expr x);
/// -1, 0 or 1 by the sign of x (NaN stays NaN).
Expr sign(Expr x);
/// x * x (numeric).
Expr square(Expr x);
/// Not of a bool tensor.
Expr logical_not(Expr x);
/// Whether x is NaN, of a float tensor (a bool tensor).
Expr isnan(Expr x);

// ---- Binary with numpy broadcasting. Either operand may be a scalar: a Prim
// of the tensor's dtype, or a C++ number / an int64 or float64 constant that
// adapts to it. Two Prims give a Prim, whose value is known when theirs are.

/// lhs + rhs.
Expr add(Operand lhs, Operand rhs);
/// lhs - rhs.
Expr subtract(Operand lhs, Operand rhs);
/// lhs * rhs.
Expr multiply(Operand lhs, Operand rhs);
/// lhs / rhs, true division of floats (integers are an error: see floor_divide).
Expr divide(Operand lhs, Operand rhs);
/// floor(lhs / rhs) (integers and floats; an integer divisor of 0 gives 0).
Expr floor_divide(Operand lhs, Operand rhs);
/// lhs - floor_divide(lhs, rhs) * rhs: the divisor's sign (an integer divisor of 0 gives 0).
Expr mod(Operand lhs, Operand rhs);
/// lhs ** rhs of floats.
Expr power(Operand lhs, Operand rhs);
/// The larger of lhs and rhs.
Expr maximum(Operand lhs, Operand rhs);
/// The smaller of lhs and rhs.
Expr minimum(Operand lhs, Operand rhs);
/// lhs == rhs (bool result).
Expr equal(Operand lhs, Operand rhs);
/// lhs != rhs (bool result).
Expr not_equal(Operand lhs, Operand rhs);
/// lhs < rhs (bool result).
Expr less(Operand lhs, Operand rhs);
/// lhs <= rhs (bool result).
Expr less_equal(Operand lhs, Operand rhs);
/// lhs > rhs (bool result).
Expr greater(Operand lhs, Operand rhs);
/// lhs >= rhs (bool result).
Expr greater_equal(Operand lhs, Operand rhs);
/// lhs and rhs, of bools.
Expr logical_and(Operand lhs, Operand rhs);
/// lhs or rhs, of bools.
Expr logical_or(Operand lhs, Operand rhs);

// ---- Ternary.

/// x where cond (a bool tensor) holds, else y; all three broadcast together;
/// x and y (Tensors or scalars) share a dtype, the result's.
Expr where(Expr cond, Operand x, Operand y);

}  // namespace relax::op
