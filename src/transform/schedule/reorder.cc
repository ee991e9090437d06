// reorder (relax/transform/schedule.h).
//
// The loops named must lie in one perfectly nested chain (each loop's body is
// exactly the next loop). The segment of the chain from the outermost named
// loop to the innermost one is rebuilt with the named loops permuted among
// their positions; the loops of the segment that are not named stay where they
// are. Conditions, each refused with a message naming the loop:
//   - no loop bound of the segment depends on another loop of the segment;
//   - below the segment every store is inside a compute block (what a block
//     declares is what makes the reorder provably keep the values), and no
//     call_extern (opaque);
//   - no loop is bound to both a spatial and a reduction iteration variable of
//     a block (such a loop carries a dependence that the order matters for);
//   - a block with reduction variables writes at indices of its spatial
//     variables only (each output element is one reduction, done in the order
//     its reduction loops keep among themselves).
// Moving a reduction loop outside a spatial one is legal under these: a
// block's init runs when its reduction variables are all 0, whatever the order.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/visitor.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

/// The perfectly nested chain of loops starting at `top`.
std::vector<const ForNode*> chain_from(const ForNode* top) {
  std::vector<const ForNode*> chain{top};
  while (const auto* next = chain.back()->body.as<ForNode>()) chain.push_back(next);
  return chain;
}

/// Every store under a statement that is not inside a block, and every store
/// of a block's body.
class StoreCollector : public StmtVisitor {
 public:
  void visit_buffer_store(const Stmt&, const BufferStoreNode& node) override {
    if (block_ == nullptr) loose = loose.empty() ? node.buffer.name() : loose;
    if (block_ != nullptr && !in_init_) stores.push_back({block_, &node});
  }
  void visit_block(const Stmt&, const BlockNode& node) override {
    const BlockNode* saved = block_;
    block_ = &node;
    in_init_ = true;
    visit_stmt(node.init);
    in_init_ = false;
    visit_stmt(node.body);
    block_ = saved;
  }
  // A micro-kernel's effects are not declared as a block's are.
  void visit_extern_call(const Stmt&, const ExternCallNode& node) override {
    if (extern_call.empty()) extern_call = node.name;
  }
  void visit_value(const SymExpr&) override {}
  std::string loose;
  std::string extern_call;
  std::vector<std::pair<const BlockNode*, const BufferStoreNode*>> stores;

 private:
  const BlockNode* block_ = nullptr;
  bool in_init_ = false;
};

}  // namespace

absl::StatusOr<Expr> reorder(const Expr& func, const std::vector<std::string>& names) {
  if (names.empty()) return absl::InvalidArgumentError(kernel_label(func) + ": reorder needs at least one loop");
  std::vector<LoopRef> loops;
  for (const std::string& name : names) {
    absl::StatusOr<LoopRef> ref = find_loop(func, name);
    if (!ref.ok()) return ref.status();
    for (const LoopRef& seen : loops) {
      if (seen.node == ref->node) return loop_error(func, "reorder", name, "it is named twice");
    }
    loops.push_back(*ref);
  }
  // The named loop whose chain holds all the others is the outermost.
  std::vector<const ForNode*> chain;
  for (const LoopRef& candidate : loops) {
    std::vector<const ForNode*> c = chain_from(candidate.node);
    bool holds_all = std::all_of(loops.begin(), loops.end(), [&](const LoopRef& l) {
      return std::find(c.begin(), c.end(), l.node) != c.end();
    });
    if (holds_all) {
      chain = std::move(c);
      break;
    }
  }
  if (chain.empty()) {
    return loop_error(func, "reorder", names[0],
                      "the loops named are not in one perfectly nested chain (each loop's body exactly the next)");
  }
  size_t last = 0;
  for (const LoopRef& l : loops) {
    last = std::max(last, static_cast<size_t>(std::find(chain.begin(), chain.end(), l.node) - chain.begin()));
  }
  chain.resize(last + 1);
  auto name_of = [&](const ForNode* node) {
    for (const LoopRef& l : all_loops(func)) {
      if (l.node == node) return l.name;
    }
    return node->loop_var.name();
  };
  for (const ForNode* a : chain) {
    for (const ForNode* b : chain) {
      if (a != b && (mentions_var(a->min, b->loop_var) || mentions_var(a->extent, b->loop_var))) {
        return loop_error(func, "reorder", name_of(a), absl::StrCat("its bounds depend on `", name_of(b), "`"));
      }
    }
  }
  const Stmt& innermost = chain.back()->body;
  StoreCollector stores;
  stores.visit_stmt(innermost);
  if (!stores.loose.empty()) {
    return loop_error(func, "reorder", name_of(chain.back()),
                      absl::StrCat("its body stores into `", stores.loose, "` outside a compute block"));
  }
  if (!stores.extern_call.empty()) {
    return loop_error(func, "reorder", name_of(chain.back()),
                      absl::StrCat("its body calls the micro-kernel `", stores.extern_call, "` (an opaque call)"));
  }
  for (const BlockNode* block : blocks_under(innermost)) {
    for (const ForNode* loop : chain) {
      bool spatial = false, reduction = false;
      for (const IterVar& iv : block->iter_vars) {
        if (!mentions_var(iv.binding, loop->loop_var)) continue;
        (iv.type == IterType::kSpatial ? spatial : reduction) = true;
      }
      if (spatial && reduction) {
        return loop_error(func, "reorder", name_of(loop),
                          absl::StrCat("block `", block->name,
                                       "` binds it to both a spatial and a reduction iteration variable"));
      }
    }
  }
  for (const auto& [block, store] : stores.stores) {
    for (const IterVar& iv : block->iter_vars) {
      if (iv.type != IterType::kReduction) continue;
      for (const SymExpr& index : store->indices) {
        if (mentions_var(index, iv.var)) {
          return loop_error(func, "reorder", names[0],
                            absl::StrCat("block `", block->name, "` stores into `", store->buffer.name(),
                                         "` at an index of its reduction variable `", iv.var.name(),
                                         "` (not one reduction per output element)"));
        }
      }
    }
  }
  // The named loops take the named positions, in the order given.
  std::vector<const ForNode*> order = chain;
  size_t next = 0;
  for (const ForNode*& slot : order) {
    bool named = std::any_of(loops.begin(), loops.end(), [&](const LoopRef& l) { return l.node == slot; });
    if (named) slot = loops[next++].node;
  }
  Stmt body = innermost;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    body = make_for((*it)->loop_var, (*it)->min, (*it)->extent, (*it)->for_kind, body);
  }
  return replace_stmt(func, chain.front(), body);
}

}  // namespace relax::transform::schedule
