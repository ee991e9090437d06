// The schedule primitives on resolved loops (schedule.h's functions resolve a
// printed name, then call these). schedule-cpu calls them directly and follows
// the loops it makes by their variables, whose printed names it never needs.
#pragma once

#include <functional>
#include <string_view>

#include <cstdint>
#include <string_view>
#include <vector>

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
/// The one store of a reduction block's body (cache_local and rfactor rewrite
/// it); FailedPrecondition naming the block when the body is not one store or
/// the store's indices use a reduction variable.
absl::StatusOr<const BufferStoreNode*> reduction_update(const BlockNode& block);
/// Whether two index lists are structurally equal, index by index.
bool same_indices(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b);
/// Where cache_local and rfactor take a reduction: the loops they rewrite (`inside`) bind
/// no spatial variable of `block`, its reduction variables are bound by no loop `outside`,
/// and it has one; then its update (reduction_update). FailedPrecondition with the text of
/// what fails, the loops named by `inside_text` ("it") and `outside_text` ("another loop").
absl::StatusOr<const BufferStoreNode*> reduction_bound_inside(const BlockNode& block,
                                                              const std::function<bool(const SymVar&)>& inside,
                                                              const std::function<bool(const SymVar&)>& outside,
                                                              std::string_view inside_text,
                                                              std::string_view outside_text);
/// Fresh copies of the spatial iteration variables of `block` (same extents and
/// bindings), with the map from the old variables to the new ones added to `map`
/// (cache_local and rfactor build their init and write-back blocks over them).
std::vector<IterVar> fresh_spatial(const BlockNode& block, SymVarMap<SymExpr>& map);
/// cache_local.
absl::StatusOr<Expr> cache_local_loop(const Expr& func, const LoopRef& loop);
/// rfactor; the variable of the vectorized loop that accumulates the lanes is
/// written to `lane` (left as it is when the reduction has no full vector).
absl::StatusOr<Expr> rfactor_loop(const Expr& func, const LoopRef& loop, int64_t lanes, SymVar* lane);
/// fuse_siblings.
absl::StatusOr<Expr> fuse_sibling_loops(const Expr& func, const LoopRef& first, const LoopRef& second);
/// `func` with the allocations of its top level (outside every loop) around
/// all of it, their bodies' statements flattened into one sequence.
Expr hoist_allocations(const Expr& func);
/// Each top-level allocation (as hoist_allocations leaves them) of rank
/// rows.size() that is accessed only inside the innermost of the perfectly
/// nested loops `rows`, at index [rows...] in every access, replaced by a
/// local buffer of one element allocated in that loop's body.
Expr localize_row_buffers(const Expr& func, const std::vector<SymVar>& rows);
/// The float subexpressions of the one compute block under `loop` (and the
/// loops under it) that depend on none of those loops and load nothing stored
/// under them, each computed once before `loop` into a one-element local
/// `<block>_inv`; values unchanged. `func` itself when there is none.
Expr hoist_invariants(const Expr& func, const LoopRef& loop);

/// `root` with the statement `target` (by identity) replaced by `replacement`.
Stmt replace_in(const Stmt& root, const StmtNode* target, const Stmt& replacement);

}  // namespace relax::transform::schedule
