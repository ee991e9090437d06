// The built-in passes, one factory each (their PassInfo says what they do; see
// pass_registry.h for the table and src/transform/<pass>.cc for each design).
#pragma once

#include "relax/transform/pass.h"

namespace relax::transform {

/// legalize-ops: operator calls become call_tir of loop-level kernels
/// (legalize_ops.h has the variant with user rules).
PassPtr create_legalize_ops_pass();

/// fold-constant: pure calls whose arguments are all constants become
/// constants, computed by the loop-level evaluator (prim_eval.h); options
/// max-elements (65536) and max-steps (2^22).
PassPtr create_fold_constant_pass();

}  // namespace relax::transform
