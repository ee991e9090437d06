// relax::solve_linear: reading one unknown symbolic variable off a dim.
//
// A parameter annotated `Tensor[(n * 2,)]` defines n even though n is not a
// bare dim: given the dim's value d, n = d / 2 when 2 divides d. This header
// says when such a dim determines its variable, in the terms both the IR
// (which variables a parameter list defines, what a call binds, see
// relax/ir/struct_info.h and relax/ir/normalize.h) and the VM code generator
// (which computes the variable at run time) use, so that they always agree:
//
//   expr == coeff * var + rest      (after canonicalisation, see analyzer.h)
//
// with `var` the only variable not yet known, occurring in exactly that one
// degree-1 term, `coeff` a non-zero integer constant and `rest` mentioning
// only known variables. Given the dim's value d, var == (d - rest) / coeff,
// which is a solution only when the division is exact; a run-time check then
// re-checks every dim with the value found.
//
//   n * 2          -> var n, coeff 2,  rest 0
//   4 * (n + 1)    -> var n, coeff 4,  rest 4
//   n + m          -> var n, coeff 1,  rest m      (m known)
//   5 - n          -> var n, coeff -1, rest 5
//   n * n, floordiv(n, 2), min(n, 8), n * m (m known: not a constant coeff),
//   n + k (two unknowns), m + 1 (no unknown)  -> nothing
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "relax/shape/sym_expr.h"

namespace relax {

/// `expr` written as coeff * var + rest.
struct LinearSolution {
  SymVar var;
  int64_t coeff;  ///< never 0 (nor INT64_MIN, whose negation does not exist)
  SymExpr rest;   ///< canonical; mentions only known variables (may be a constant)
};

/// When `expr` (an integer SymExpr) is, after canonicalisation, coeff*v + rest with exactly one
/// variable v for which known(v) is false, v occurring only in that one degree-1 term, coeff a
/// non-zero integer constant, and `rest` mentioning only known variables (rest may be a
/// constant): that decomposition. Otherwise nullopt (no unknown variable, two unknowns, v
/// inside a division/min/max/nonlinear term, an expression that is not int64, ...).
std::optional<LinearSolution> solve_linear(const SymExpr& expr,
                                           const std::function<bool(const SymVar&)>& known);

}  // namespace relax
