// The schedule primitives on resolved loops (schedule.h's functions resolve a
// printed name, then call these). schedule-cpu calls them directly and follows
// the loops it makes by their variables, whose printed names it never needs.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "relax/ir/prim_func.h"
#include "transform/schedule/loop_tree.h"

namespace relax::transform::schedule {

/// The loop whose variable is `var`; NotFound when the kernel has none.
absl::StatusOr<LoopRef> find_loop_var(const Expr& func, const SymVar& var);

/// split; the new loops' variables are written to `outer` and `inner`.
absl::StatusOr<Expr> split_loop(const Expr& func, const LoopRef& loop, int64_t factor, SymVar* outer, SymVar* inner);
/// fuse; the fused loop's variable is written to `fused`.
absl::StatusOr<Expr> fuse_loops(const Expr& func, const LoopRef& outer, const LoopRef& inner, SymVar* fused);
/// `loop` given `kind`; parallel and vectorized check check_independent_iterations.
absl::StatusOr<Expr> set_loop_kind(const Expr& func, const LoopRef& loop, ForKind kind);
/// `loop` (vectorized) as vector lanes when its body lowers (vector_lanes.cc);
/// `func` unchanged otherwise, the loop staying an omp simd loop.
Expr lower_vector_lanes(const Expr& func, const LoopRef& loop);
/// cache_local.
absl::StatusOr<Expr> cache_local_loop(const Expr& func, const LoopRef& loop);

/// `root` with the statement `target` (by identity) replaced by `replacement`.
Stmt replace_in(const Stmt& root, const StmtNode* target, const Stmt& replacement);

}  // namespace relax::transform::schedule
