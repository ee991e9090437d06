// The default pipeline (relax/transform/pipeline.h): what relax::build runs.
//
// Read top to bottom: the order of the passes is the order they run in. A pass
// that is not written yet has no line here; a new one gets its line where it
// belongs.
#include "relax/transform/pipeline.h"

#include <algorithm>
#include <utility>

#include "relax/support/check.h"
#include "relax/transform/dispatch_library.h"
#include "relax/transform/passes.h"
#include "relax/transform/schedule.h"

namespace relax::transform {

void build_default_pipeline(PassManager& pm, const Target& target) {
  // In functions that mark their weights: products of one operand by several weights (a
  // layer's q/k/v projections, its gate and up) become one product by the joined weights,
  // sliced after; the joining, like anything else computed from the weights alone that does not
  // make them larger, moves to @transform_weights, run once when the weights are bound.
  // Where a library may take the products of many rows (prefill: oneDNN, measured slower on
  // joined float32 and bf16 matrices), float weights stay separate; dequantised ones, which the
  // generated kernels multiply at every row count, are joined.
  int64_t library_rows = 0;
  if (!target.libraries.empty() && !target.is_cuda()) {
    library_rows = std::max<int64_t>(1, schedule::cpu_schedule_options(target).stream_rows);
  } else if (!target.libraries.empty()) {
    library_rows = 1;
  }
  pm.add(create_combine_parallel_matmul_pass(library_rows));
  pm.add(create_lift_weight_transforms_pass());
  // Where the target has libraries: matmul, linear and conv with their bias, activation and
  // residual add become library calls (oneDNN on the CPU; cuBLAS(Lt) and cuDNN on a GPU) where
  // the dtype suits and the work is not provably tiny, before anything is legalized; what stays
  // is legalized below as before.
  if (!target.libraries.empty()) {
    DispatchLibraryOptions dispatch;
    dispatch.libraries = target.libraries;
    // float32 matmuls of at most this many rows stay generated: the CPU schedule's rows kernel
    // reads the weights once for all of them.
    // bfloat16-weight matmuls of more rows (prefill) use the CPU's bf16 dot products in the
    // library where the target has them (the rows rounded to bf16; not with -exact-float).
    if (!target.is_cuda()) {
      const schedule::CpuScheduleOptions cpu = schedule::cpu_schedule_options(target);
      dispatch.stream_rows = std::max(dispatch.stream_rows, cpu.stream_rows);
      dispatch.bf16_products = cpu.bf16_products;
    }
    pm.add(create_dispatch_library_pass(std::move(dispatch)));
  }
  // Graph-level operators become loop-level kernels called through call_tir.
  pm.add(create_legalize_ops_pass());
  // Then, until nothing changes (each pass can expose work for the others): aliases and
  // tuple items of known tuples resolved, calls on constants evaluated (legalized kernels
  // included), repeated pure calls reused, dead bindings and the kernels only they called removed.
  pm.add(fixed_point({create_canonicalize_bindings_pass(), create_fold_constant_pass(), create_cse_pass(),
                      create_dce_pass()}));
  // Kernels classified from their loops (elementwise, broadcast, injective, reduction,
  // output-elementwise-fusible, opaque); chains of them grouped by that class with a
  // post-dominator analysis, never across an effect; each group merged into one kernel
  // (intermediates inlined where the index maps allow); the member kernels nothing calls any
  // more removed.
  pm.add(create_annotate_op_pattern_pass());
  pm.add(create_fuse_ops_pass());
  pm.add(create_fuse_tir_pass());
  pm.add(create_dce_pass());
  // The kernels that are left, each simplified under its loop ranges and branch conditions
  // (tail checks proven away, index arithmetic folded) before code generation reads them.
  pm.add(create_simplify_loops_pass());
  // Every call's outputs become explicit allocations (one storage each, zeroed only where the
  // kernel is not proven to write them all) and explicit destination-passing calls, which the
  // VM code generator translates one to one.
  pm.add(create_lower_alloc_pass());
  // Each kernel's loops then get a default schedule chosen from its op_pattern. On the CPU:
  // elementwise-like nests a parallel outer loop and a vectorized inner one, row reductions
  // parallel rows and a local accumulator, matmuls register tiles and a weight-streaming
  // one-row kernel; opaque kernels are left alone. On a GPU: the loops the CUDA code generator
  // maps to threads and blocks (elementwise nests fused into one parallel loop, one parallel
  // row loop around local reductions, matmul nests kept for the tiled and the matvec kernels).
  // It runs after lower-alloc, whose proof that a kernel writes every output element reads
  // the plain loop nests (a split or fused nest is not proven, and its outputs would be zeroed
  // first).
  // The rows kernels where the target's ISA has them (transform::schedule::cpu_schedule_options):
  // float32 matmuls of up to 16 rows (decode steps) and bfloat16 ones read each weight once for
  // all the rows of a call; with AVX-512 VNNI or AVX-VNNI (unless -exact-float), int4- and int8-weight matmuls quantise
  // their rows to int8 and use integer dot products.
  pm.add(target.is_cuda() ? create_schedule_gpu_pass() : create_schedule_cpu_pass(target));
  // Scratch that kernels would heap-allocate per call (top-level Allocates) and library calls'
  // declared workspaces become graph-level tensors passed as extra destinations, so that the
  // memory plan places them like any other tensor.
  pm.add(create_lift_workspace_pass());
  // The intermediates of each function then share one arena, reusing memory where lifetimes
  // allow and the sizes are proven to fit (a constant size under declared upper bounds).
  pm.add(create_plan_memory_pass());
}

PassManager default_pipeline(const Target& target) {
  PassManager pm;
  build_default_pipeline(pm, target);
  return pm;
}

}  // namespace relax::transform
