// The table of built-in passes: one line per pass. Everything that lists passes
// (relax-opt --list-passes, the pipeline parser, the README's table) reads it.
// A new pass is its own file, one line here, and (if it belongs there) one line
// in build_default_pipeline (pipeline.cc).
#include "pass_table.h"

#include "relax/transform/passes.h"
#include "relax/transform/schedule.h"

namespace relax::transform {

const std::vector<PassFactory>& builtin_pass_factories() {
  static const std::vector<PassFactory> kTable = {
      create_legalize_ops_pass,
      create_dispatch_library_pass,
      create_canonicalize_bindings_pass,
      create_fold_constant_pass,
      create_cse_pass,
      create_dce_pass,
      create_to_non_dataflow_pass,
      create_simplify_loops_pass,
      [] { return create_schedule_pass(); },
      [] { return create_schedule_cpu_pass(); },
      create_schedule_gpu_pass,
      create_lower_alloc_pass,
      create_lift_workspace_pass,
      create_plan_memory_pass,
      create_annotate_op_pattern_pass,
      create_fuse_ops_pass,
      create_fuse_tir_pass,
      [] { return create_bind_params_pass(); },
      [] { return create_combine_parallel_matmul_pass(); },
      create_lift_weight_transforms_pass,
  };
  return kTable;
}

}  // namespace relax::transform
