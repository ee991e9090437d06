// What the CUDA mapping reads off a cooperative region (a row of a row
// reduction, or a top-level statement run by one block): its stages, the
// reductions into one-element locals that the block's threads can split, and
// which buffers a statement stores into (cuda_region.cc).
#pragma once

#include <optional>
#include <vector>

#include "relax/ir/prim_func.h"

namespace relax::cpp_codegen {

/// A loop whose one store is `acc[idx] = combine(acc[idx], operand)` into a
/// local of the region, with `combine` one of +, *, min, max and `acc` of
/// dtype int32, int64, float32 or float64 (what warp shuffles carry).
struct LocalReduction {
  const BufferStoreNode* store = nullptr;
  SymExpr operand;
  SymKind combiner = SymKind::kAdd;
};

/// The reduction of `loop` (a serial loop), or nullopt when it is none.
std::optional<LocalReduction> local_reduction(const ForNode& loop, const std::vector<const BufferNode*>& locals);

/// The buffers stored into under `s` (with repeats), and those allocated under it.
void stores_under(const Stmt& s, std::vector<const BufferNode*>& stored, std::vector<const BufferNode*>& allocated);

/// Whether `b` is one of `list`.
bool contains_buffer(const std::vector<const BufferNode*>& list, const BufferNode* b);

/// Whether `s` stores into memory: a buffer that is neither one of `locals`
/// nor allocated under `s`.
bool stores_memory(const Stmt& s, const std::vector<const BufferNode*>& locals);

/// Whether `s` stores into one of `locals`.
bool stores_local(const Stmt& s, const std::vector<const BufferNode*>& locals);

/// Whether `e` loads from a buffer.
bool loads_memory(const SymExpr& e);

}  // namespace relax::cpp_codegen
