// Constructors of operator calls.
//
// Each function returns an unnormalised Call of a registered operator (see
// op.h): its StructInfo is computed when the builder emits it (or when
// `normalize` runs), which is also where shape errors are reported:
//
//   relax::Var y = f.emit(relax::op::matmul(x, w));   // y: Tensor[(n, 4096), float32]
//
// Operator            arguments                      attributes / sinfo_args
// add, multiply       lhs, rhs (Tensors or Prims)    -
// exp                 x                              -
// matmul              lhs, rhs                       -
// reshape             x, shape (a Shape value)       -
// permute_dims        x                              "axes" (optional)
// sum                 x                              "axes" (optional), "keepdims"
// softmax             x                              "axis"
// call_tir            callee, Tuple(args)[, Shape]   sinfo_args = {out_sinfo}
// call_tir_inplace    callee, Tuple(args)            "inplace_indices", sinfo_args = {out_sinfo}
// call_dps_library    ExternFunc, Tuple(args)        sinfo_args = {out_sinfo}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "relax/ir/expr.h"

namespace relax::op {

/// Elementwise sum with numpy broadcasting; symbolic dims broadcast when they
/// are provably equal or one of them is 1. Either operand may be a scalar (a
/// numeric Prim of the tensor's dtype, or an int64 / float64 constant, which
/// adapts to it) that broadcasts like a 0-d tensor; two Prims give a Prim.
Expr add(Expr lhs, Expr rhs);
/// Elementwise product with the broadcasting of `add`.
Expr multiply(Expr lhs, Expr rhs);

/// Elementwise e^x of a float tensor.
Expr exp(Expr x);

/// Matrix product as numpy.matmul: a rank-1 operand is a vector, leading
/// (batch) dims broadcast, and the inner dims must be provably equal.
Expr matmul(Expr lhs, Expr rhs);

/// `x` with a new shape of the same element count; one dim may be -1, inferred.
Expr reshape(Expr x, Expr shape);
/// As above with the new shape given as dims (built into a ShapeExpr).
Expr reshape(Expr x, std::vector<SymExpr> shape);

/// `x` with its dims permuted: result dim i is x's dim axes[i]; without axes the
/// dims are reversed. Negative axes count from the end.
Expr permute_dims(Expr x, std::optional<std::vector<int64_t>> axes = std::nullopt);

/// The sum of `x` over `axes` (negative ones count from the end; all axes when
/// not given, none when empty). The reduced dims are dropped, or kept as 1 with
/// `keepdims`.
Expr sum(Expr x, std::optional<std::vector<int64_t>> axes = std::nullopt, bool keepdims = false);

/// exp(x) normalised along `axis` (negative counts from the end) so that each
/// slice sums to 1, computed stably (the slice's maximum is subtracted first).
/// `x` is a float tensor; the result has its annotation.
Expr softmax(Expr x, int64_t axis = -1);

/// Calls the PrimFunc `callee` (a GlobalVar) in destination-passing style: the
/// outputs described by `out_sinfo` (a Tensor, or a Tuple of Tensors) are
/// allocated by the caller and passed after `args`; `extra_sym_args` follow as
/// scalar arguments. Each of `args` is a Tensor (a buffer parameter) or a Prim
/// (a scalar parameter of its dtype). The call's value is the output(s).
Expr call_tir(Expr callee, std::vector<Expr> args, StructInfo out_sinfo,
              std::vector<SymExpr> extra_sym_args = {});

/// As call_tir, but output i is written into argument `inplace_indices[i]`
/// (or freshly allocated when that index is -1).
Expr call_tir_inplace(Expr callee, std::vector<Expr> args, std::vector<int64_t> inplace_indices,
                      StructInfo out_sinfo);

/// Calls the library function `symbol` (an ExternFunc) in destination-passing
/// style, like call_tir.
Expr call_dps_library(std::string symbol, std::vector<Expr> args, StructInfo out_sinfo);

}  // namespace relax::op
