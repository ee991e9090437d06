// The memory planner: storage blocks for a function's intermediate tensors, laid out in one
// arena (docs/memory.md). The plan-memory pass feeds it the tensors of a
// function and rewrites the function's allocations after it; a pass author may call it for
// other buffers the same way. It knows nothing of the IR: a tensor is a name,
// a size in bytes (a SymExpr over the function's symbolic variables), an alignment and a live
// interval of instruction indices.
//
// The algorithm (one greedy walk, in the order of first use; ties by input order):
//   1. A block is free for tensor t when every tensor it held is dead before t is born: its
//      last holder's last_use < t.first_use. Intervals are inclusive, so a tensor read by
//      instruction i and a tensor written by instruction i never share a block (an in-place
//      kernel is the pass's business: it gives both one tensor).
//   2. t takes a free block it PROVABLY fits (size(t) <= size(block)), the tightest one: a
//      block of provably equal size first, then one provably no larger than every other
//      fitting block (among incomparable ones the first in creation order).
//   3. Otherwise t takes a free block PROVABLY no larger than itself, the largest such, and the
//      block grows to t's size: an arena grows by size(t) - size(block) instead of size(t).
//   4. Otherwise t gets a new block of its own size.
// Sizes. A tensor whose size has a finite upper bound under the Analyzer's declared ranges
// (Analyzer::upper_bound) is planned at that constant: it fits a constant block when its bound
// is no larger, and a block made or grown for it has the bound as its size. Any other tensor
// is planned at its symbolic size, and fits a block when the Analyzer proves size <= block
// (`n*4096` fits a freed `n*4096*2`); a bounded tensor meeting a symbolic block compares its
// size, not its bound, as that proves more. A block's size is therefore always the footprint (bound
// or size) of one tensor it holds, never a max() of two: two footprints neither of which is
// proven the larger never share a block (rule 4). This keeps every size and offset a short
// expression a reader can check, at the cost of some reuse a max() would allow.
// Alignment. A block is aligned to the largest alignment of the tensors it ever holds, and
// every tensor sits at offset 0 of its block, so the block's alignment serves all of them.
// Layout. The blocks are laid out one after another in ONE arena (a call makes one
// allocation): the constant blocks first, so that their offsets are constants, then the
// symbolic ones; each group by alignment, largest first (stable), which leaves padding only
// where a size is not a multiple of the next block's alignment. A symbolic block's offset is
// the previous block's offset plus the previous size rounded up to this block's alignment
// (floordiv(size + a - 1, a) * a, or the size itself when the Analyzer knows it is a multiple
// of a, as n*4096 is of 64), simplified: since alignments are powers of two that only
// decrease, that is the previous end rounded up, written as a sum of short terms instead of
// a nest of floordivs. The arena's size is the last block's end, its alignment the largest.
// When every tensor is bounded the arena is one constant size (constant_arena()), valid for
// every call under the bounds; otherwise sizes and offsets are evaluated once per call.
//
// What it proves. Every step rests on Analyzer::prove and upper_bound, which are sound: a
// block's size is >= the size of every tensor it holds at every point of the declared ranges,
// and tensors that share a block have disjoint live intervals. So, wherever the variables lie in
// their declared ranges and the sizes are non-negative (the caller declares shape variables as
// >= 0 or >= 1: a proof like n*4096 <= n*8192 needs it), no two tensors live at once overlap and
// every tensor lies inside its block and the arena. check_plan() verifies exactly that at
// concrete values, independently of how the plan was made. (Before a proof, the walk
// evaluates the two sides at a few points inside the declared ranges: a point where the
// comparison fails refutes it without asking the Analyzer. This only saves time; it never
// makes a comparison hold.)
//
// What it does not do. It is greedy, not optimal (no search over orders or offsets, no
// packing of two short-lived tensors into the space of one long-lived block); it never
// splits a block or places a tensor at a non-zero offset inside one; it knows nothing of
// aliasing (views, in-place calls, outputs returned to the caller): the pass leaves those out
// or merges them into one tensor before planning. Variables outside their declared ranges
// make the plan invalid; the runtime checks the bounds at function entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax::transform::memory {

/// One tensor to place: its bytes, alignment and live interval.
struct PlannedTensor {
  std::string name;    ///< for messages
  SymExpr size_bytes;  ///< int64, over the function's symbolic variables
  int64_t alignment = 64;  ///< bytes, a power of two
  int64_t first_use = 0;   ///< the instruction that writes it first (inclusive)
  int64_t last_use = 0;    ///< the last instruction that reads it (inclusive)
};

/// One storage block of the arena.
struct PlannedBlock {
  SymExpr size;        ///< bytes; a constant when every tensor it holds is bounded
  int64_t alignment;   ///< the largest alignment of the tensors it holds
  SymExpr offset;      ///< bytes from the start of the arena, a multiple of `alignment`
};

/// Where one tensor lives.
struct TensorPlacement {
  size_t block;    ///< index into MemoryPlan::blocks
  SymExpr offset;  ///< bytes from the start of the block (0 for every plan made here)
};

/// The result of plan_memory().
struct MemoryPlan {
  std::vector<PlannedBlock> blocks;       ///< in arena order
  std::vector<TensorPlacement> tensors;   ///< one per input tensor, in input order
  SymExpr arena_size;                     ///< bytes
  int64_t arena_alignment = 1;            ///< the largest block alignment (1 when empty)

  /// Whether the arena has one size for every value of the variables.
  bool constant_arena() const { return arena_size.as_const().has_value(); }
  /// The tensor's offset from the start of the arena (block offset + offset in the block).
  SymExpr arena_offset(size_t tensor) const;
  /// One line per block and per tensor, for messages and tests.
  std::string to_string(const std::vector<PlannedTensor>& tensors) const;
};

/// Plans `tensors` (see the comment at the top of this file). `analyzer` knows the declared
/// ranges of the variables the sizes use. Errors: a tensor whose alignment is not a positive
/// power of two, whose first use comes after its last, whose size is not an int64 expression
/// or is negative for every value; constant sizes whose sum leaves int64.
absl::StatusOr<MemoryPlan> plan_memory(const std::vector<PlannedTensor>& tensors,
                                       Analyzer& analyzer);

/// Checks `plan` for `tensors` at `values` of the variables: every size and offset evaluates,
/// is non-negative and aligned; every tensor lies inside its block and every block inside the
/// arena; no two tensors whose live intervals meet overlap in the arena. An error names what
/// failed: for an overlap, the two tensors, their live intervals and byte ranges.
absl::Status check_plan(const MemoryPlan& plan, const std::vector<PlannedTensor>& tensors,
                        const SymVarMap<int64_t>& values);

/// The plan at `values` of the variables as an SVG picture: a timeline whose x axis is the
/// instruction index and y axis the arena's bytes, each tensor a bar over its live interval at
/// its offset (height = its size; its block's color; its name, size and interval in a tooltip),
/// block boundaries dashed, and a caption with the arena size, the peak of live bytes and the
/// sum of all tensors' bytes. `title` heads the picture (XML-escaped like the names). Errors:
/// a size or offset that does not evaluate at `values` (check_plan's messages).
absl::StatusOr<std::string> plan_to_svg(const MemoryPlan& plan, const std::vector<PlannedTensor>& tensors,
                                        const SymVarMap<int64_t>& values, const std::string& title);

}  // namespace relax::transform::memory
