// Cooperative regions of the CUDA mapping (cuda_region.h): the block's
// threads split each reduction into a one-element local, and every thread
// keeps its own copy of the region's locals, so a statement that stores only
// into locals runs on every thread (each copy gets the same value) while one
// that stores into memory runs on thread 0.
#include "codegen/cuda/cuda_region.h"

#include <algorithm>

#include "relax/shape/sym_expr_search.h"

namespace relax::cpp_codegen {
namespace {

/// Collects the stores under `s`; false when something under it is not a
/// loop, block, sequence, branch, let or store (an allocation, a call).
bool collect_stores(const Stmt& s, std::vector<const BufferStoreNode*>& stores) {
  if (!s.defined()) return true;
  switch (s.kind()) {
    case StmtKind::kFor: return collect_stores(s.as<ForNode>()->body, stores);
    case StmtKind::kSeq:
      for (const Stmt& x : s.as<SeqStmtNode>()->stmts) {
        if (!collect_stores(x, stores)) return false;
      }
      return true;
    case StmtKind::kBufferStore: stores.push_back(s.as<BufferStoreNode>()); return true;
    case StmtKind::kIfThenElse:
      return collect_stores(s.as<IfThenElseNode>()->then_case, stores) &&
             collect_stores(s.as<IfThenElseNode>()->else_case, stores);
    case StmtKind::kLetStmt: return collect_stores(s.as<LetStmtNode>()->body, stores);
    case StmtKind::kBlock:
      return collect_stores(s.as<BlockNode>()->init, stores) && collect_stores(s.as<BlockNode>()->body, stores);
    case StmtKind::kEvaluate: return true;
    case StmtKind::kAllocate:
    case StmtKind::kExternCall: return false;
  }
  return false;
}

bool is_load_of(const SymExpr& e, const BufferStoreNode& store) {
  if (e.kind() != SymKind::kBufferLoad || e->buffer_node() != store.buffer.get()) return false;
  if (e.num_operands() != store.indices.size()) return false;
  for (size_t i = 0; i < store.indices.size(); ++i) {
    if (!structural_equal(e.operand(i), store.indices[i])) return false;
  }
  return true;
}

bool loads_buffer(const SymExpr& e, const BufferNode* b) {
  return any_subexpr(e, [&](const SymExpr& x) { return x.kind() == SymKind::kBufferLoad && x->buffer_node() == b; });
}

}  // namespace

bool contains_buffer(const std::vector<const BufferNode*>& list, const BufferNode* b) {
  return std::find(list.begin(), list.end(), b) != list.end();
}

bool loads_memory(const SymExpr& e) {
  return any_subexpr(e, [](const SymExpr& x) { return x.kind() == SymKind::kBufferLoad; });
}

std::optional<LocalReduction> local_reduction(const ForNode& loop, const std::vector<const BufferNode*>& locals) {
  if (loop.for_kind == ForKind::kParallel) return std::nullopt;
  std::vector<const BufferStoreNode*> stores;
  if (!collect_stores(loop.body, stores) || stores.size() != 1) return std::nullopt;
  const BufferStoreNode& store = *stores[0];
  if (!contains_buffer(locals, store.buffer.get())) return std::nullopt;
  for (const SymExpr& index : store.indices) {
    if (!index.as_const()) return std::nullopt;  // the element is the same on every iteration
  }
  const DataType t = store.buffer.dtype();
  if (t != DataType::int32() && t != DataType::int64() && t != DataType::float32() && t != DataType::float64()) {
    return std::nullopt;
  }
  const SymExpr& v = store.value;
  if (v.kind() != SymKind::kAdd && v.kind() != SymKind::kMul && v.kind() != SymKind::kMin &&
      v.kind() != SymKind::kMax) {
    return std::nullopt;
  }
  for (int first = 0; first < 2; ++first) {
    if (!is_load_of(v.operand(first), store)) continue;
    const SymExpr& operand = v.operand(1 - first);
    if (loads_buffer(operand, store.buffer.get()) || operand.dtype() != t) return std::nullopt;
    return LocalReduction{&store, operand, v.kind()};
  }
  return std::nullopt;
}

void stores_under(const Stmt& s, std::vector<const BufferNode*>& stored, std::vector<const BufferNode*>& allocated) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kFor: return stores_under(s.as<ForNode>()->body, stored, allocated);
    case StmtKind::kSeq:
      for (const Stmt& x : s.as<SeqStmtNode>()->stmts) stores_under(x, stored, allocated);
      return;
    case StmtKind::kBufferStore: stored.push_back(s.as<BufferStoreNode>()->buffer.get()); return;
    case StmtKind::kIfThenElse:
      stores_under(s.as<IfThenElseNode>()->then_case, stored, allocated);
      stores_under(s.as<IfThenElseNode>()->else_case, stored, allocated);
      return;
    case StmtKind::kLetStmt: return stores_under(s.as<LetStmtNode>()->body, stored, allocated);
    case StmtKind::kBlock:
      stores_under(s.as<BlockNode>()->init, stored, allocated);
      stores_under(s.as<BlockNode>()->body, stored, allocated);
      return;
    case StmtKind::kAllocate:
      allocated.push_back(s.as<AllocateNode>()->buffer.get());
      return stores_under(s.as<AllocateNode>()->body, stored, allocated);
    case StmtKind::kExternCall:
      // A call writes through its regions: count them as stores.
      for (const ExternArg& a : s.as<ExternCallNode>()->args) {
        if (a.is_region()) stored.push_back(a.buffer.get());
      }
      return;
    case StmtKind::kEvaluate: return;
  }
}

bool stores_memory(const Stmt& s, const std::vector<const BufferNode*>& locals) {
  std::vector<const BufferNode*> stored, allocated;
  stores_under(s, stored, allocated);
  for (const BufferNode* b : stored) {
    if (!contains_buffer(locals, b) && !contains_buffer(allocated, b)) return true;
  }
  return false;
}

bool stores_local(const Stmt& s, const std::vector<const BufferNode*>& locals) {
  std::vector<const BufferNode*> stored, allocated;
  stores_under(s, stored, allocated);
  for (const BufferNode* b : stored) {
    if (contains_buffer(locals, b) && !contains_buffer(allocated, b)) return true;
  }
  return false;
}

}  // namespace relax::cpp_codegen
