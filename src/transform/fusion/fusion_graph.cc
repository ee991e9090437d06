// Post-dominator tree and partition of a fusion graph (fusion_graph.h).
#include "transform/fusion/fusion_graph.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "relax/support/check.h"

namespace relax::transform::fusion {
namespace {

bool at_most(OpPattern p, OpPattern limit) { return static_cast<uint8_t>(p) <= static_cast<uint8_t>(limit); }

OpPattern combine(OpPattern a, OpPattern b) { return at_most(a, b) ? b : a; }

// The lowest common ancestor of `a` and `b` in the (partial) tree, combining
// into `pattern` the patterns of the tree edges climbed; -1 when they meet
// only above the roots.
int lowest_common_ancestor(const std::vector<PostDominator>& tree, int a, int b, OpPattern& pattern) {
  while (a != b) {
    if (a < 0 || b < 0) return -1;
    const int da = tree[a].depth;
    const int db = tree[b].depth;
    if (da <= db) {
      pattern = combine(pattern, tree[b].pattern);
      b = tree[b].parent;
    }
    if (db <= da) {
      pattern = combine(pattern, tree[a].pattern);
      a = tree[a].parent;
    }
  }
  return a;
}

// Union-find over the nodes; the root of a group is the node that the group's
// other members were fused into (their common post-dominator).
class Partitioner {
 public:
  Partitioner(const FusionGraph& graph, int64_t max_fuse_size)
      : graph_(graph), max_fuse_size_(max_fuse_size), tree_(post_dominator_tree(graph)) {
    const size_t n = graph.nodes.size();
    parent_.resize(n);
    size_.assign(n, 1);
    pattern_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      parent_[i] = static_cast<int>(i);
      pattern_[i] = graph.nodes[i].pattern;
    }
  }

  std::vector<int> run() {
    // Phase 0 fuses what anchors a group (output-elementwise-fusible ops with
    // their epilogues, elementwise/broadcast producers into their consumers);
    // phase 1 then adds injective ops, so that an injective op after a matmul's
    // epilogue does not take the epilogue first.
    for (int phase = 0; phase < 2; ++phase) {
      for (int i = 0; i < static_cast<int>(graph_.nodes.size()); ++i) visit(i, phase);
    }
    std::vector<int> roots(graph_.nodes.size());
    for (size_t i = 0; i < roots.size(); ++i) roots[i] = find(static_cast<int>(i));
    return roots;
  }

 private:
  int find(int i) {
    while (parent_[i] != i) {
      parent_[i] = parent_[parent_[i]];
      i = parent_[i];
    }
    return i;
  }

  void visit(int node, int phase) {
    const int group = find(node);
    const OpPattern pattern = pattern_[group];
    const int sink = tree_[node].parent;
    if (pattern == OpPattern::kOpaque || sink < 0) return;
    if (find(sink) == group) return;  // already fused with its post-dominator
    const OpPattern relation = tree_[node].pattern;
    using P = OpPattern;
    if (pattern == P::kOutputElementwiseFusible) {
      // Its epilogue: the post-dominator reads the result elementwise and every
      // op on the way is elementwise or broadcast. Two such ops never meet in
      // a group: the sink's group must itself be at most broadcast.
      if (phase != 0 || relation != P::kElementwise) return;
      try_fuse(node, sink, [](P p, bool) { return at_most(p, P::kBroadcast); });
    } else if (at_most(pattern, P::kBroadcast)) {
      // Into any non-opaque post-dominator (a chain, a reduction, a matmul as
      // its prologue) through ops that are at most injective.
      if (relation == P::kOpaque) return;
      try_fuse(node, sink, [](P p, bool is_sink) {
        return is_sink ? p != P::kOpaque : at_most(p, P::kInjective);
      });
    } else if (pattern == P::kInjective) {
      if (phase != 1 || relation == P::kOpaque) return;
      try_fuse(node, sink, [](P p, bool is_sink) {
        return is_sink ? p != P::kOpaque : at_most(p, P::kInjective);
      });
    }
    // A reduction's group never fuses into its consumers.
  }

  // Fuses `src` (a group root) and every node on the paths from it to `sink`
  // into sink's group, when `accept(group pattern, is_sink)` holds for every
  // node on those paths and the result stays within max_fuse_size.
  void try_fuse(int src, int sink, const std::function<bool(OpPattern, bool)>& accept) {
    // Iterative walks: a path may be as long as the block.
    const int sink_group = find(sink);
    absl::flat_hash_set<int> visited;
    absl::flat_hash_set<int> groups;  // the groups on the paths, sink's excluded
    groups.insert(find(src));
    std::vector<int> stack;
    for (const FusionEdge& e : graph_.nodes[src].consumers) stack.push_back(e.consumer);
    while (!stack.empty()) {
      const int node = stack.back();
      stack.pop_back();
      if (!visited.insert(node).second) continue;
      const int group = find(node);
      if (!accept(pattern_[group], node == sink)) return;
      if (node == sink) continue;
      if (group != sink_group) groups.insert(group);
      for (const FusionEdge& e : graph_.nodes[node].consumers) stack.push_back(e.consumer);
    }
    int64_t total = size_[sink_group];
    for (int g : groups) total += size_[g];
    if (total > max_fuse_size_) return;
    // Every node on the paths (all visited above, src aside) joins sink's group.
    merge(find(src), sink_group);
    for (int node : visited) merge(find(node), sink_group);
  }

  void merge(int child, int root) {
    if (child == root) return;
    RELAX_CHECK(parent_[child] == child && parent_[root] == root) << "fusion: merging non-root groups";
    parent_[child] = root;
    size_[root] += size_[child];
    pattern_[root] = combine(pattern_[root], pattern_[child]);
  }

  const FusionGraph& graph_;
  int64_t max_fuse_size_;
  std::vector<PostDominator> tree_;
  std::vector<int> parent_;
  std::vector<int64_t> size_;
  std::vector<OpPattern> pattern_;  ///< per group root: the largest class of its members
};

}  // namespace

std::vector<PostDominator> post_dominator_tree(const FusionGraph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<PostDominator> tree(n);
  // Consumers come after their producers, so a node's consumers are placed in
  // the tree before it.
  for (int i = n - 1; i >= 0; --i) {
    const std::vector<FusionEdge>& consumers = graph.nodes[i].consumers;
    if (consumers.empty()) continue;  // a root
    int lca = consumers[0].consumer;
    OpPattern pattern = consumers[0].pattern;
    for (size_t k = 1; k < consumers.size() && lca >= 0; ++k) {
      pattern = combine(pattern, consumers[k].pattern);
      lca = lowest_common_ancestor(tree, lca, consumers[k].consumer, pattern);
    }
    if (lca < 0) continue;
    RELAX_CHECK(lca > i) << "fusion graph: node " << i << " is post-dominated by the earlier node " << lca;
    tree[i] = PostDominator{lca, tree[lca].depth + 1, pattern};
  }
  return tree;
}

std::vector<int> partition_fusion_graph(const FusionGraph& graph, int64_t max_fuse_size) {
  return Partitioner(graph, max_fuse_size).run();
}

}  // namespace relax::transform::fusion
