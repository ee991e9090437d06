// The dataflow graph of one segment of a dataflow block, and its partition into
// fusion groups by the post-dominator rule (private to fuse-ops; see the design
// comment of fuse_ops.cc for the rules and why they are what they are).
//
// The graph knows nothing of the IR: a node is a binding with a loop-pattern
// class (kOpaque for everything fuse-ops may not fuse), an edge goes from a
// producer to a consumer that reads its value and carries the pattern of that
// use. Nodes are numbered in a topological order (producers first), which the
// bindings' order in their block is. Uses outside the segment are no edges: a
// value used there and inside the segment is simply an extra output of the group
// it ends up in.
#pragma once

#include <cstdint>
#include <vector>

#include "relax/transform/op_pattern.h"

namespace relax::transform::fusion {

/// One use of a node's value by a later node of the segment.
struct FusionEdge {
  int consumer;  ///< the using node's index (greater than the producer's)
  /// How the consumer reads the value: the consumer's class, except that a
  /// broadcast consumer reading this value at its own full shape reads it
  /// elementwise.
  OpPattern pattern;
};

struct FusionNode {
  OpPattern pattern = OpPattern::kOpaque;
  std::vector<FusionEdge> consumers;  ///< one per consuming node, no repeats
};

/// Nodes in topological order.
struct FusionGraph {
  std::vector<FusionNode> nodes;
};

/// The immediate post-dominator of each node within the segment (-1 when some
/// path from it ends elsewhere than through one node of the segment: no
/// consumer, or consumers without a common post-dominator), and the combined
/// (largest) pattern of the edges on the paths from the node up to it.
struct PostDominator {
  int parent = -1;
  int depth = 1;
  OpPattern pattern = OpPattern::kOpaque;
};
std::vector<PostDominator> post_dominator_tree(const FusionGraph& graph);

/// The group of every node: the index of the group's root (the member that
/// post-dominates all the others). A node alone in its group is its own root.
/// No group holds more than `max_fuse_size` nodes.
std::vector<int> partition_fusion_graph(const FusionGraph& graph, int64_t max_fuse_size);

}  // namespace relax::transform::fusion
