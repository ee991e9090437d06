// How deep the shape layer's recursive walks may go.
//
// Readers of outside input refuse trees deeper than kMaxNestingDepth
// (relax/support/limits.h), but trees built in C++ can be deeper, and the
// simplifier's own results can be deeper than its input (a sum of many terms
// becomes one long chain). The walks therefore come in two kinds:
//   - the generic ones (destruction, structural equality and order, printing,
//     substitution, variable traversal) use explicit stacks and take any depth;
//   - the analyses (simplify, bounds, modular sets, evaluation) walk chains of
//     one operator (`a + b + c + ...`, `p || q || ...`, the form simplify
//     produces) in a loop and recurse only into the other operands, counting
//     that recursion with a WalkDepth. Past kMaxWalkDepth levels they stop and
//     give a conservative answer (the subtree kept as written, the full range,
//     "not proven", an evaluation error) instead of going deeper.
// kMaxWalkDepth leaves room above the readers' limit for the few extra levels
// the simplifier adds (a comparison's sides, an atom's operand re-read), and is
// small enough that every analysis at that depth fits a 1 MiB thread stack
// (tests/shape/deep_tree_test.cc runs each one there).
#pragma once

#include "relax/support/limits.h"

namespace relax::shape_detail {

/// The deepest recursion of an analysis walk.
inline constexpr int kMaxWalkDepth = 2 * kMaxNestingDepth;

/// Counts one level of a recursive walk while it lives.
class WalkDepth {
 public:
  explicit WalkDepth(int& depth) : depth_(++depth) {}
  ~WalkDepth() { --depth_; }
  WalkDepth(const WalkDepth&) = delete;
  WalkDepth& operator=(const WalkDepth&) = delete;
  /// True when this level is past kMaxWalkDepth: answer conservatively.
  bool too_deep() const { return depth_ > kMaxWalkDepth; }

 private:
  int& depth_;
};

}  // namespace relax::shape_detail
