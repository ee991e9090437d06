// Purity of graph-level values, for the passes that remove or merge bindings
// (dce, cse) and for the pattern matcher (which looks only through pure
// bindings). Private to src/transform.
#pragma once

#include "relax/ir/expr.h"

namespace relax::transform {

/// Whether calling `call` has no effect beyond its result: its callee is a
/// pure operator, or a function (GlobalVar, ExternFunc, Var) whose annotation
/// is a pure Func. A callee whose annotation is not a Func (unknown) counts as
/// impure, and so does call_tir_inplace (it writes its in-place arguments).
bool is_pure_call(const CallNode& call);

/// Whether each call makes a distinct object although it is pure (alloc_storage,
/// alloc_tensor): two equal calls are two allocations, which cse must not merge.
bool makes_fresh_object(const CallNode& call);

/// Whether evaluating `value` may have an effect: it is, or contains (through
/// tuples, If branches and nested SeqExprs, not the bodies of nested
/// functions, which run only when called), an impure call. With
/// `count_library_calls`, a call_dps_library counts too (it runs code outside
/// the module, which fusion treats as an effect).
bool has_side_effects(const Expr& value, bool count_library_calls = false);

}  // namespace relax::transform
