// The default GPU schedule of a kernel (schedule::schedule_gpu and the pass
// schedule-gpu, relax/transform/schedule.h): loops restructured so that the
// CUDA code generator (src/codegen/cuda/) can map each top-level nest onto
// blocks and threads. Chosen from the kernel's op_pattern like schedule-cpu,
// with the same primitives and their legality checks, but never a vector
// lane, an rfactor, a micro-kernel or a register-tiled matmul: the GPU's
// parallelism is the thread grid, which the code generator chooses.
//
// The contract with the code generator (each top-level nest of a kernel -- a
// statement reached from the body through allocations, lets and sequences --
// is one device function; the launch boundary is the barrier between nests):
//   - elementwise, broadcast and injective nests, and in any other kernel but
//     an opaque one the spatial nests and the nests whose spatial loops
//     enclose a reduction (conv2d, pooling, batched matmul): all the loops
//     around the reduction (all loops of a spatial nest) fused into one
//     parallel loop. The code generator runs it as a grid-stride loop over
//     blockIdx.x * blockDim.x + threadIdx.x, one iteration per thread, the
//     loops inside it serial;
//   - reduction kernels (sum, max, softmax, the norms), unless they hold a
//     matmul nest: the top-level allocations hoisted, neighbouring nests with
//     equal rows merged (fuse_siblings), row buffers made one-element locals
//     (localize_row_buffers), loop-invariant float subexpressions hoisted out
//     of each row's spatial loops (hoist_invariants), the rows fused into one
//     parallel loop, each reduction's loops fused into one and accumulated in
//     a one-element local (cache_local), the spatial loops of each row fused
//     into one and marked parallel. In a kernel whose op_pattern is
//     `reduction`, the code generator runs such a row loop as one block per
//     row: a parallel loop inside it is strided over the block's threads, a
//     reduction into a one-element local is split over the threads and
//     combined with warp shuffles and shared memory (every thread then holds
//     the row's value), a statement that stores only into locals runs on
//     every thread, one that stores into memory on thread 0, with
//     __syncthreads() between the stages;
//   - a matmul nest (match_matmul: out[i, j] (+)= lhs(i, k) * rhs(k, j), rhs
//     any expression such as a fused int4/int8/bf16 dequantisation) is left
//     as its three serial loops around one block: the code generator
//     recognises it with match_matmul and emits a tiled shared-memory matmul,
//     or, for at most 8 rows, a memory-bound matvec kernel;
//   - anything else (an opaque kernel, a nest a step does not apply to) keeps
//     its loops; a top-level nest without a parallel loop runs on one thread,
//     correct but slow.
// A nest where a step fails keeps what it had before that step (every
// primitive preserves values).
#include <optional>

#include "relax/transform/op_pattern.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/matmul_schedule.h"
#include "transform/schedule/nests.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

/// The loops of `vars` fused into one parallel loop; `func` unchanged when
/// either step fails.
Expr fuse_parallel(const Expr& func, const std::vector<SymVar>& vars) {
  if (vars.empty()) return func;
  SymVar fused = vars[0];
  absl::StatusOr<Expr> out = vars.size() > 1 ? fuse_all(func, vars, &fused) : absl::StatusOr<Expr>(func);
  if (out.ok()) out = with_kind(*out, fused, ForKind::kParallel);
  return out.ok() ? *out : func;
}

/// The reduction accumulated in a local at `loop` (the loops under it included).
std::optional<Expr> cache_local_at(const Expr& func, const SymVar& loop) {
  absl::StatusOr<LoopRef> ref = find_loop_var(func, loop);
  if (!ref.ok()) return std::nullopt;
  absl::StatusOr<Expr> cached = cache_local_loop(func, *ref);
  if (!cached.ok()) return std::nullopt;
  return *cached;
}

/// The loops of a reduction fused into one and accumulated in a local; where
/// cache_local refuses the fused loop (a binding through floordiv by a
/// symbolic extent), the outermost loop accumulates, the others under it.
Expr schedule_reduction_loops(const Expr& func, const std::vector<SymVar>& loops) {
  if (loops.size() > 1) {
    SymVar fused = loops[0];
    if (absl::StatusOr<Expr> out = fuse_all(func, loops, &fused); out.ok()) {
      if (std::optional<Expr> cached = cache_local_at(*out, fused)) return *cached;
    }
  }
  return cache_local_at(func, loops[0]).value_or(func);
}

/// A nest outside reduction kernels: a matmul keeps its loops, a spatial nest
/// or a reduction under spatial loops gets one parallel loop for its spatial
/// loops (one thread per output element).
Expr schedule_thread_nest(const Expr& func, const std::vector<SymVar>& chain) {
  if (match_matmul(func, chain)) return func;
  std::optional<RowNest> nest = row_nest(func, chain);
  if (!nest) return func;
  if (!nest->reduction) return fuse_parallel(func, chain);
  return fuse_parallel(func, std::vector<SymVar>(chain.begin(), chain.begin() + nest->rows));
}

/// A reduction kernel: merged rows, one parallel loop over them, the
/// reductions in locals, the spatial loops of each row parallel (the
/// threads of the row's block).
Expr schedule_reduction_kernel(const Expr& func) {
  Expr out = hoist_allocations(func);
  for (const RowGroup& group : group_rows(&out)) {
    if (group.members.empty()) continue;
    bool any_reduction = false;
    for (const RowNest& nest : group.members) any_reduction = any_reduction || nest.reduction;
    if (!any_reduction) {
      // Spatial nests alone (a softmax's last stage that did not merge): one thread per element.
      for (const RowNest& nest : group.members) out = fuse_parallel(out, nest.chain);
      continue;
    }
    if (group.members.size() > 1) out = localize_row_buffers(out, group.rows);
    for (const RowNest& nest : group.members) {
      const std::vector<SymVar> inner(nest.chain.begin() + nest.rows, nest.chain.end());
      if (nest.reduction) {
        out = schedule_reduction_loops(out, inner);
        continue;
      }
      if (absl::StatusOr<LoopRef> first = find_loop_var(out, inner[0]); first.ok()) {
        out = hoist_invariants(out, *first);
      }
      out = fuse_parallel(out, inner);
    }
    out = fuse_parallel(out, group.rows);
  }
  return out;
}

}  // namespace

Expr schedule_gpu(const Expr& func) {
  const std::optional<KernelNests> kernel = kernel_nests(func);
  if (!kernel) return func;
  if (kernel->row_reduction()) return schedule_reduction_kernel(func);
  Expr out = func;
  for (const std::vector<SymVar>& chain : kernel->nests) out = schedule_thread_nest(out, chain);
  return out;
}

}  // namespace relax::transform::schedule
