// Constructors of data-dependent operator calls: operators whose result's
// size depends on the values of their inputs, not only on their shapes.
//
// Their results are annotated by rank only (the count is unknown at compile
// time); `match_cast` names the count where later code needs it:
//
//   relax::Var y = f.emit(relax::op::nonzero(x));             // Tensor[ndim=2, int64]
//   relax::Var z = f.match_cast(y, relax::tensor_sinfo({1, k}, relax::DataType::int64()));
//
// which checks the actual shape at run time (a mismatch is an error naming the
// expected and the actual dims). They are lowered not to kernels but to
// `call_builtin` of the runtime's builtin of the same name, which allocates
// its own result.
#pragma once

#include <string>
#include <vector>

#include "relax/ir/expr.h"

namespace relax::op {

/// The multi-indices of the non-zero elements of `x` (NaN counts as non-zero)
/// in row-major order: an int64 tensor of shape (x.ndim, count), one column per
/// element.
Expr nonzero(Expr x);

/// The distinct values of `x`, sorted ascending, as a 1-D tensor of x's dtype
/// (floats: NaNs last, all NaNs as one value; -0.0 equals 0.0).
Expr unique(Expr x);

/// The elements of `x` where the bool tensor `mask` (x's shape) is true, in
/// row-major order, as a 1-D tensor of x's dtype.
Expr masked_select(Expr x, Expr mask);

/// Calls the runtime builtin `name` on `args` (Tensors or Prims); the builtin
/// allocates its result, which `result_sinfo` describes (the VM checks the
/// result against it when run-time checks are on). Builtins are pure. The
/// lowering of the data-dependent operators; names: nonzero, unique,
/// masked_select.
Expr call_builtin(std::string name, std::vector<Expr> args, StructInfo result_sinfo);

}  // namespace relax::op
