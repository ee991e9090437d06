// Loop nests as the default schedules see them (schedule_cpu.cc and
// schedule_gpu.cc): the top-level nests of a kernel, fusing a chain of them,
// the rows of a reduction kernel's nest and merging the rows of neighbours.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/prim_func.h"
#include "relax/transform/op_pattern.h"

namespace relax::transform::schedule {

/// The loop variables of each nest under `s`: loops that no loop encloses,
/// with the perfectly nested loops under each (outermost first).
void collect_nests(const Stmt& s, std::vector<std::vector<SymVar>>& nests);

/// A kernel as the default schedules classify it: its pattern, its top-level nests
/// (collect_nests) and whether one of them is a matmul nest (of the matmul class, or a fused
/// dequantisation + matmul that the analysis calls a reduction).
struct KernelNests {
  OpPattern pattern = OpPattern::kOpaque;
  std::vector<std::vector<SymVar>> nests;
  bool has_matmul = false;
  /// A reduction kernel without a matmul nest: the row-reduction schedule's.
  bool row_reduction() const { return pattern == OpPattern::kReduction && !has_matmul; }
};

/// The nests of `func`; nullopt for what no schedule touches (not a PrimFunc, or opaque).
std::optional<KernelNests> kernel_nests(const Expr& func);

/// The loop of `var` given `kind` (set_loop_kind's legality checks).
absl::StatusOr<Expr> with_kind(const Expr& func, const SymVar& var, ForKind kind);

/// The loops of `vars` (perfectly nested, outermost first) fused into one,
/// whose variable is written to `fused`.
absl::StatusOr<Expr> fuse_all(const Expr& func, const std::vector<SymVar>& vars, SymVar* fused);

/// The loops of a nest of a reduction kernel, outermost first, and how many
/// of them (from the outside) are its rows: the spatial loops around its
/// reduction, or all loops but the innermost of a nest without one.
struct RowNest {
  std::vector<SymVar> chain;
  size_t rows = 0;
  bool reduction = false;
};

/// The rows of the nest `chain`, or nullopt when it is not loops around one
/// block with its spatial loops outside its reduction loops.
std::optional<RowNest> row_nest(const Expr& func, const std::vector<SymVar>& chain);

/// The loops of `from`'s rows merged into those of `into` (fuse_siblings,
/// level by level); nullopt (the kernel unchanged) unless every level merges.
std::optional<Expr> merge_rows(const Expr& func, const std::vector<SymVar>& into, const RowNest& from);

/// Neighbouring nests whose rows merged into one set of loops: the merged
/// row loops and the nests that share them.
struct RowGroup {
  std::vector<SymVar> rows;
  std::vector<RowNest> members;
};

/// The top-level nests of `*func` (allocations already hoisted) grouped:
/// each nest's rows merged into the previous group's where legal (`*func`
/// updated), a nest that is not a row nest an empty group that nothing
/// merges across.
std::vector<RowGroup> group_rows(Expr* func);

}  // namespace relax::transform::schedule
