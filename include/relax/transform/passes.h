// The built-in passes, one factory each (their PassInfo says what they do; see
// pass_registry.h for the table and src/transform/<pass>.cc for each design).
#pragma once

#include "relax/transform/pass.h"

namespace relax::transform {

/// legalize-ops: operator calls become call_tir of loop-level kernels
/// (legalize_ops.h has the variant with user rules).
PassPtr create_legalize_ops_pass();
/// canonicalize-bindings: var-to-var bindings, items of known tuples and trivial match_casts disappear.
PassPtr create_canonicalize_bindings_pass();
/// cse: a pure call repeated in the same dataflow block reuses the earlier result.
PassPtr create_cse_pass();
/// dce: unused pure bindings, and functions no exported graph function reaches, are removed.
PassPtr create_dce_pass();
/// to-non-dataflow: dataflow blocks become ordinary blocks (DataflowVars become Vars).
PassPtr create_to_non_dataflow_pass();

/// fold-constant: pure calls whose arguments are all constants become
/// constants, computed by the loop-level evaluator (prim_eval.h); options
/// max-elements (65536) and max-steps (2^22).
PassPtr create_fold_constant_pass();

}  // namespace relax::transform
