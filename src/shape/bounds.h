// Private entry points of the Analyzer's interval and modular analyses.
#pragma once

#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax::shape_detail {

/// The declared range of each bound variable.
using VarRanges = SymVarMap<ConstIntBound>;

/// Interval analysis over the tree as written (no simplification).
ConstIntBound interval_of(const SymExpr& e, const VarRanges& ranges);

/// The interval of the constant v. INT64_MIN and INT64_MAX double as the
/// infinities, so a constant equal to one of them widens by one step inward to
/// stay a true (if slightly loose) interval.
ConstIntBound interval_const(int64_t v);

/// Interval arithmetic on bounds (saturating at the infinities).
ConstIntBound interval_add(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound interval_mul(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound interval_scale(const ConstIntBound& a, int64_t k);
ConstIntBound interval_intersect(const ConstIntBound& a, const ConstIntBound& b);

/// The modular set { coeff * k + base } containing every value of `e`.
ModularSet modular_of(const SymExpr& e);

}  // namespace relax::shape_detail
