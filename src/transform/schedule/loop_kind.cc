// parallel, vectorize and unroll (relax/transform/schedule.h): the loop keeps
// its bounds and body and changes its kind, which the code generator turns
// into an OpenMP parallel loop, `#pragma omp simd` or `#pragma GCC unroll`.
// A vectorized loop keeps its compute block, so that later primitives still
// apply; lower_vectorized_loops (vector_lanes.cc), run when the schedule is
// complete, turns it into vector lanes where its body allows.
// Parallel and vectorized loops must have independent iterations
// (check_independent_iterations, loop_tree.h): a loop bound to a reduction
// variable would race on the output element (or, under omp simd, reassociate
// it without a reduction clause), so it is refused; reduce into a local
// variable first (cache_local) and keep the reduction loop serial.
#include "relax/transform/schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

std::string_view verb(ForKind kind) {
  switch (kind) {
    case ForKind::kParallel: return "parallelize";
    case ForKind::kVectorized: return "vectorize";
    case ForKind::kUnrolled: return "unroll";
    case ForKind::kSerial: break;
  }
  return "serialize";
}

absl::StatusOr<Expr> set_kind_by_name(const Expr& func, std::string_view loop, ForKind kind) {
  absl::StatusOr<LoopRef> ref = find_loop(func, loop);
  if (!ref.ok()) return ref.status();
  return set_loop_kind(func, *ref, kind);
}

}  // namespace

absl::StatusOr<Expr> set_loop_kind(const Expr& func, const LoopRef& loop, ForKind kind) {
  if (kind == ForKind::kParallel || kind == ForKind::kVectorized) {
    absl::Status independent = check_independent_iterations(func, loop, verb(kind));
    if (!independent.ok()) return independent;
  }
  if (loop.node->for_kind == kind) return func;
  const ForNode& n = *loop.node;
  return replace_stmt(func, loop.node, make_for(n.loop_var, n.min, n.extent, kind, n.body));
}

absl::StatusOr<Expr> parallel(const Expr& func, std::string_view loop) {
  return set_kind_by_name(func, loop, ForKind::kParallel);
}
absl::StatusOr<Expr> vectorize(const Expr& func, std::string_view loop) {
  return set_kind_by_name(func, loop, ForKind::kVectorized);
}
absl::StatusOr<Expr> unroll(const Expr& func, std::string_view loop) {
  return set_kind_by_name(func, loop, ForKind::kUnrolled);
}

}  // namespace relax::transform::schedule
