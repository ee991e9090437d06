// The built-in passes, one factory each: what a user calls to make a pass by hand, to add to a
// PassManager or run alone. Their PassInfo says what they do; pass_registry.h has the table
// that knows them by name, and docs/passes.md describes each one.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "relax/ir/module.h"
#include "relax/runtime/tensor.h"
#include "relax/transform/pass.h"
#include "relax/transform/builtin_passes.h"

namespace relax::transform {

/// dispatch-library: matmul/linear/conv with their fused bias, activation and residual add
/// become call_dps_library of oneDNN where the dtype and size suit, and so do the matches of
/// registered user rules (dispatch_library.h has the options and the rule registry).
PassPtr create_dispatch_library_pass();
/// combine-parallel-matmul: in functions with a `weights` attribute, products of one left
/// operand by several weights of one form (plain, widened, dequantised along the depth)
/// become one product by the weights joined along their columns, sliced after. With
/// `library_rows` > 0, float-weight products of rows not provably within that many (they may
/// go to a library, which can be slower on the joined matrices than on the separate ones:
/// docs/performance.md) keep their weights separate, in every function that reads them.
PassPtr create_combine_parallel_matmul_pass(int64_t library_rows = 0);
/// lift-weight-transforms: what functions compute from their weights alone without making them
/// larger (a concat, a transpose) moves into @transform_weights, which
/// runtime::BoundWeights runs once at bind; the functions read its results as parameters.
PassPtr create_lift_weight_transforms_pass();
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
/// simplify-loops: every PrimFunc's expressions simplified under the facts of
/// the loops, branches, lets and blocks around them; decided ifs and loops that
/// never run are removed.
PassPtr create_simplify_loops_pass();
/// lower-alloc: the outputs of call_tir / call_tir_inplace / call_dps_library become
/// alloc_storage + alloc_tensor (zeroed only where the kernel is not proven to write
/// every element) and an explicit call_tir_dps / call_library_dps (docs/memory.md).
PassPtr create_lower_alloc_pass();
/// What lower-alloc does, as a function (the VM code generator runs it on a module
/// that still holds implicit outputs).
absl::StatusOr<IRModule> lower_alloc(const IRModule& mod);
/// lift-workspace: top-level scratch Allocates of kernels called through call_tir_dps become
/// extra workspace parameters filled by a graph-level alloc_storage + alloc_tensor at each call
/// site, and a library call's declared workspace becomes a uint8 destination after its outputs.
PassPtr create_lift_workspace_pass();
/// The library half of lift-workspace, as a function: call_library_dps with a declared workspace
/// gets its uint8 destination; kernels are left alone (the VM code generator runs it).
absl::StatusOr<IRModule> lift_library_workspaces(const IRModule& mod);
/// plan-memory: each graph function's intermediates share one arena storage at offsets the
/// memory planner chose (memory_planner.h), killed after their last uses (plan_memory.h reads
/// and checks the result; docs/memory.md).
PassPtr create_plan_memory_pass();
/// annotate-op-pattern: every PrimFunc gets `op_pattern`, its loop-pattern class read off its loops (op_pattern.h).
PassPtr create_annotate_op_pattern_pass();
/// fuse-ops: call_tir groups chosen by op_pattern (post-dominators, never across an effect) become primitive functions.
PassPtr create_fuse_ops_pass();
/// fuse-tir: each primitive graph function (a fuse-ops group) becomes one PrimFunc of that name, its calls call_tir.
PassPtr create_fuse_tir_pass();

/// fold-constant: pure calls whose arguments are all constants become
/// constants, computed by the loop-level evaluator (prim_eval.h); options
/// max-elements (65536) and max-steps (2^22).
PassPtr create_fold_constant_pass();

/// bind-params: the parameters of one graph function named in `params` become
/// Constants holding the tensors (copied) and leave the signature; their symbolic
/// dims take the tensors' dims throughout the function, whose annotations are
/// re-deduced (a weight `w: Tensor[(n, 4), f32]` bound to a (3, 4) tensor makes
/// n = 3 everywhere). Errors name the function, the parameter and the expected and
/// actual dtype, rank or dim; a function that another one calls cannot be bound.
/// This one binds `params` of `function` and ignores the pass options.
PassPtr create_bind_params_pass(std::string function, std::map<std::string, runtime::Tensor> params);
/// bind-params as relax-opt makes it: options `function` (default "main") and
/// `params` ("w=w.npy,b=b.npy", .npy files; empty: no change).
PassPtr create_bind_params_pass();
/// What the bind-params pass does, as a function: `mod` with `params` bound in
/// `function` (unchanged when `params` is empty).
absl::StatusOr<IRModule> bind_params(const IRModule& mod, const std::string& function,
                                     const std::map<std::string, runtime::Tensor>& params);

}  // namespace relax::transform
