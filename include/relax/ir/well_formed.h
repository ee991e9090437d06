// Well-formedness: the rules every IRModule that passes hand on must keep.
//
// Graph functions:
//   - a variable is used only where it is in scope: after its definition (a
//     parameter, or a binding earlier in the same or an enclosing SeqExpr) and
//     not after the SeqExpr (or function) that binds it has ended;
//   - a variable is defined once;
//   - DataflowVars are bound only inside dataflow blocks and used only inside
//     the block that binds them (never after it, nor in the function result);
//   - a symbolic variable is used (in an annotation, a ShapeExpr, a PrimValue,
//     an upper bound) only where it is defined: by the parameter annotations
//     (a bare-variable dim or Prim value, or a dim that solves linearly for
//     it, see defined_sym_vars) or by an earlier match_cast;
//   - every expression carries StructInfo (the module is normalised);
//   - a GlobalVar names a function of the module, and the callee of call_tir /
//     call_tir_inplace is a PrimFunc of the module;
//   - calls inside a dataflow block are pure (an op registered pure, or a
//     callee whose Func annotation is pure);
//   - the condition of an If is a Prim[bool] value;
//   - every expression's annotation is a base of what deduction gives it from
//     its children (deduce_struct_info, the deduction the builder and the
//     parser run), so that a reader which takes annotations as written (JSON)
//     cannot claim more than the value has; a deduction error is a violation;
//   - a binding's variable fits its value, a match_cast's pattern can match
//     its value, and a function's body fits its return annotation (each may
//     be left to a run-time check, never provably wrong);
//   - annotations have int64 dims and dtypes the IR supports (int8-64,
//     uint8-64, float16/32/64, bfloat16, bool), and an extern function has a
//     Func annotation.
// PrimFuncs:
//   - a buffer is stored to or loaded from only when defined (a parameter, or
//     an enclosing Allocate), with as many indices as its rank;
//   - a symbolic variable is used only where defined: a scalar parameter, a
//     bare-variable dim of a buffer parameter, an enclosing loop, `let` or
//     block iteration variable; a loop variable is not used outside its loop;
//   - the condition of an IfThenElse is boolean;
//   - a stored value has its buffer's dtype, a buffer has a supported dtype
//     and integer dims;
//   - a loop or block iteration variable has an integer dtype, and its bounds
//     (extent and binding) have the same one.
//
// Each violation is reported with its location: the function, then the
// enclosing bindings or statements, e.g.
//   @main: binding lv3: variable `x` is used before its definition
//   @add: for i: block add: BufferStore to undefined buffer `D`
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "relax/ir/module.h"

namespace relax {

/// Every violation in `mod`, one line each in the order found.
std::vector<std::string> well_formed_violations(const IRModule& mod);

/// OK, or one InvalidArgument status listing every violation (one per line).
absl::Status well_formed(const IRModule& mod);

}  // namespace relax
