// Searches of a SymExpr tree that stop at the first hit: whether some subexpression satisfies
// a predicate, reads memory, or mentions a variable. (for_each_var, in sym_expr.h, visits them
// all.) Like for_each_var they look into a load's indices, not into its buffer's shape, and
// visit a subtree shared by several parents once.
#pragma once

#include <functional>

#include "relax/shape/sym_expr.h"

namespace relax {

/// Whether `e` or one of its subexpressions satisfies `pred`; pre-order, left to right,
/// stopping at the first that does.
bool any_subexpr(const SymExpr& e, const std::function<bool(const SymExpr&)>& pred);

/// Whether `e` holds a buffer load.
bool reads_memory(const SymExpr& e);

/// Whether `e` mentions `var`.
bool mentions_var(const SymExpr& e, const SymVar& var);

}  // namespace relax
