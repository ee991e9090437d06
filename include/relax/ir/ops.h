// Constructors of operator calls.
//
// Each function returns an unnormalised Call of a registered operator (see
// op.h): its StructInfo is computed when the builder emits it (or when
// `normalize` runs), which is also where shape errors are reported:
//
//   relax::Var y = f.emit(relax::op::matmul(x, w));   // y: Tensor[(n, 4096), float32]
//
// The constructors live by family in relax/ir/op/<family>.h (elementwise,
// linalg, manipulate, reduce, create, nn, conv, quantize, dynamic, memory); numbers may
// stand for scalar operands (relax/ir/op/operand.h). `relax-opt --list-ops`
// and docs/operators.md list every operator with its arguments and attributes. The
// cross-level calls are declared below:
//
// Operator            arguments                      attributes / sinfo_args
// call_tir            callee, Tuple(args)[, Shape]   sinfo_args = {out_sinfo}
// call_tir_inplace    callee, Tuple(args)            "inplace_indices", sinfo_args = {out_sinfo}
// call_dps_library    ExternFunc, Tuple(args)        sinfo_args = {out_sinfo}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/op/dynamic.h"
#include "relax/ir/op/conv.h"
#include "relax/ir/op/elementwise.h"
#include "relax/ir/op/linalg.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/op/nn.h"
#include "relax/ir/op/operand.h"
#include "relax/ir/op/optional_ints.h"
#include "relax/ir/op/quantize.h"
#include "relax/ir/op/reduce.h"
#include "relax/ir/op/create.h"

namespace relax::op {

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
