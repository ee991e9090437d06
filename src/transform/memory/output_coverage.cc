// Whether a kernel writes every element of an output first (output_coverage.h).
//
// The proof reads the structure the compute library and fuse-tir produce: a
// perfect nest of loops from 0 whose variables index the output one to one
// (directly, or through a block's iteration variables bound to them). A loop
// `for i in range(0, d)` runs i over all of [0, d); distinct loop variables
// over the buffer's dims therefore visit every element. Anything else is "not
// proven", which only costs a memset.
#include "transform/memory/output_coverage.h"

#include <optional>
#include <vector>

#include "relax/ir/visitor.h"
#include "relax/shape/analyzer.h"

namespace relax::transform {
namespace {

// Whether a statement (or value) reads or writes `buffer`.
class Mentions : public StmtVisitor {
 public:
  explicit Mentions(const BufferNode* buffer) : buffer_(buffer) {}
  bool found = false;
  bool reads = false;

  void visit_buffer_store(const Stmt& s, const BufferStoreNode& node) override {
    if (node.buffer.get() == buffer_) found = true;
    StmtVisitor::visit_buffer_store(s, node);
  }
  void visit_value(const SymExpr& value) override {
    if (value.kind() == SymKind::kBufferLoad && value->buffer_node() == buffer_) {
      found = true;
      reads = true;
    }
    StmtVisitor::visit_value(value);
  }

 private:
  const BufferNode* buffer_;
};

bool mentions(const Stmt& s, const BufferNode* buffer) {
  Mentions m(buffer);
  m.visit_stmt(s);
  return m.found;
}

bool reads(const SymExpr& value, const BufferNode* buffer) {
  Mentions m(buffer);
  m.visit_value(value);
  return m.reads;
}

struct Loop {
  const SymExprNode* var;
  SymExpr extent;
};

// The loop (of `loops`) whose variable `e` is, or nullptr.
const Loop* loop_of(const SymExpr& e, const std::vector<Loop>& loops) {
  if (!e.is_var()) return nullptr;
  for (const Loop& l : loops) {
    if (l.var == e.get()) return &l;
  }
  return nullptr;
}

// Whether `indices` are distinct entries of `ranges` (a variable and its
// extent each), one per dim of `buffer`, each extent the dim.
bool covers(const std::vector<SymExpr>& indices, const std::vector<Loop>& ranges,
            const Buffer& buffer, Analyzer& analyzer) {
  if (indices.size() != buffer.ndim()) return false;
  std::vector<const Loop*> used;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Loop* l = loop_of(indices[i], ranges);
    if (l == nullptr) return false;
    for (const Loop* u : used) {
      if (u == l) return false;
    }
    used.push_back(l);
    if (!analyzer.prove_equal(l->extent, buffer.shape()[i])) return false;
  }
  return true;
}

// The first statement of `s` (through sequences) that mentions the buffer.
Stmt first_mention(const Stmt& s, const BufferNode* buffer) {
  if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& part : seq->stmts) {
      if (Stmt m = first_mention(part, buffer); m.defined()) return m;
    }
    return Stmt();
  }
  return mentions(s, buffer) ? s : Stmt();
}

// A store to `buffer` covering it, as the first mention in `s`.
bool store_covers(const Stmt& s, const Buffer& buffer, const std::vector<Loop>& ranges,
                  Analyzer& analyzer) {
  Stmt first = first_mention(s, buffer.get());
  const auto* store = first.defined() ? first.as<BufferStoreNode>() : nullptr;
  return store != nullptr && store->buffer.same_as(buffer) && !reads(store->value, buffer.get()) &&
         covers(store->indices, ranges, buffer, analyzer);
}

bool block_covers(const BlockNode& block, const Buffer& buffer, const std::vector<Loop>& loops,
                  Analyzer& analyzer) {
  // The spatial iteration variables bound to distinct enclosing loops of their extent.
  std::vector<Loop> spatial;
  for (const IterVar& iv : block.iter_vars) {
    const Loop* l = loop_of(iv.binding, loops);
    if (l == nullptr || !analyzer.prove_equal(l->extent, iv.extent)) return false;
    if (iv.type == IterType::kSpatial) spatial.push_back({static_cast<const SymExprNode*>(iv.var.get()), iv.extent});
  }
  if (block.init.defined()) {
    // Reduction blocks write their init when every reduction variable is 0: once per
    // spatial point, before the body reads the output.
    if (store_covers(block.init, buffer, spatial, analyzer)) return true;
    if (mentions(block.init, buffer.get())) return false;
  }
  return store_covers(block.body, buffer, spatial, analyzer);
}

bool nest_covers(const Stmt& s, const Buffer& buffer, std::vector<Loop>& loops, Analyzer& analyzer) {
  if (const auto* loop = s.as<ForNode>()) {
    if (!analyzer.prove_equal(loop->min, 0)) return false;
    loops.push_back({static_cast<const SymExprNode*>(loop->loop_var.get()), loop->extent});
    return nest_covers(loop->body, buffer, loops, analyzer);
  }
  if (const auto* block = s.as<BlockNode>()) return block_covers(*block, buffer, loops, analyzer);
  // Stores (in sequence) inside the innermost loop run on every iteration.
  if (s.as<BufferStoreNode>() != nullptr || s.as<SeqStmtNode>() != nullptr) {
    return store_covers(s, buffer, loops, analyzer);
  }
  return false;
}

// The statement of `body` that first mentions `buffer`, looking through
// top-level sequences, lets and allocations.
Stmt first_top_level_mention(const Stmt& body, const BufferNode* buffer) {
  if (!body.defined()) return Stmt();
  if (const auto* seq = body.as<SeqStmtNode>()) {
    for (const Stmt& part : seq->stmts) {
      if (Stmt m = first_top_level_mention(part, buffer); m.defined()) return m;
    }
    return Stmt();
  }
  if (const auto* let = body.as<LetStmtNode>()) {
    if (reads(let->value, buffer)) return body;
    return first_top_level_mention(let->body, buffer);
  }
  if (const auto* alloc = body.as<AllocateNode>()) return first_top_level_mention(alloc->body, buffer);
  return mentions(body, buffer) ? body : Stmt();
}

}  // namespace

bool writes_every_element(const PrimFuncNode& func, const Buffer& buffer) {
  Stmt first = first_top_level_mention(func.body, buffer.get());
  if (!first.defined()) return false;  // never written
  Analyzer analyzer;
  std::vector<Loop> loops;
  return nest_covers(first, buffer, loops, analyzer);
}

}  // namespace relax::transform
