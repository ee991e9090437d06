// Checks a kernel makes at run time beyond its parameters' shapes.
//
// A PrimFunc may require some extents (expressions over its own symbolic
// variables) to be nonzero: argmax over an empty axis, a maximum over nothing
// or a pooling window over an empty input have no value to return, and a
// symbolic extent is only known when the kernel runs. Two attributes of the
// PrimFunc hold the requirements, kept parallel:
//   nonempty_extents = sym[m, h * w]              the extents
//   nonempty_what    = "argmax: dim 1 of x (the reduced axis)|..."  one text each
// The generated code checks them right after binding its variables, before
// touching any buffer, and fails with
//   "<what> is 0 (<extent>): <op> of an empty extent has no value"
// which the VM prefixes with the function and the kernel ("main: kernel
// argmax: ..."). fuse-tir carries the requirements of a group's members into
// the fused kernel, over its variables. A legalization adds them with
// require_nonempty; an extent the analyzer proves >= 1 needs none (deduction
// rejects an extent that is 0 outright, naming the op and the dim).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/op.h"
#include "relax/shape/analyzer.h"

namespace relax {

/// The attribute names (see above).
inline constexpr const char* kNonemptyExtentsAttr = "nonempty_extents";
inline constexpr const char* kNonemptyWhatAttr = "nonempty_what";

/// One requirement: `extent` (over the kernel's variables) must not be 0.
struct NonemptyExtent {
  SymExpr extent;
  /// What the extent is, naming the op: "argmax: dim 1 of x (the reduced axis)".
  std::string what;
};

/// The requirements `attrs` holds (none when it has neither attribute).
std::vector<NonemptyExtent> nonempty_extents(const Attrs& attrs);
/// `attrs` with `extents` added after those it holds.
Attrs with_nonempty_extents(Attrs attrs, const std::vector<NonemptyExtent>& extents);

/// `lowering` (unless an error, or a replacement) with its kernel requiring
/// each of `extents` that `analyzer` does not prove >= 1.
absl::StatusOr<Lowering> require_nonempty(absl::StatusOr<Lowering> lowering,
                                          const std::vector<NonemptyExtent>& extents, Analyzer& analyzer);

}  // namespace relax
