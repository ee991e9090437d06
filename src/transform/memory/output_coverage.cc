// Whether a kernel writes every element of an output first (output_coverage.h).
//
// The proof reads the structure the compute library and fuse-tir produce: nests
// of loops from 0 whose variables index the output one to one, each index a
// loop variable plus an offset (directly, or through a block's iteration
// variables bound to them). A loop `for i in range(0, d)` runs i over all of
// [0, d); distinct loop variables over the buffer's dims therefore visit a box
// of it, [offset, offset + d) in each dim. Nests in sequence write the union of
// their boxes; the union is proven to be the whole buffer when the boxes chain
// along one dim and span the others (a concat). Anything else is "not proven",
// which only costs a memset.
#include "transform/memory/output_coverage.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "relax/ir/visitor.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr_search.h"

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
  // A micro-kernel given a region of the buffer may read it as well as write it.
  void visit_extern_call(const Stmt& s, const ExternCallNode& node) override {
    for (const ExternArg& a : node.args) {
      if (a.is_region() && a.buffer.get() == buffer_) found = reads = true;
    }
    StmtVisitor::visit_extern_call(s, node);
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
  SymExpr var;
  SymExpr extent;
};

// The loop (of `loops`) whose variable `e` is, or nullptr.
const Loop* loop_of(const SymExpr& e, const std::vector<Loop>& loops) {
  if (!e.is_var()) return nullptr;
  for (const Loop& l : loops) {
    if (l.var.get() == e.get()) return &l;
  }
  return nullptr;
}

// The elements one loop nest writes: per dim of the buffer, the interval
// [lo, lo + extent) its index runs over.
struct Interval {
  SymExpr lo;
  SymExpr extent;
};
using Box = std::vector<Interval>;

// The box written by a store at `indices` inside `ranges`: each index is a
// distinct loop variable of `ranges` plus an offset that mentions none of them
// (`v`, or `m + v` for the second part of a concat), one per dim of `buffer`.
std::optional<Box> box_of(const std::vector<SymExpr>& indices, const std::vector<Loop>& ranges,
                          const Buffer& buffer, Analyzer& analyzer) {
  if (indices.size() != buffer.ndim()) return std::nullopt;
  auto mentions_a_range = [&](const SymExpr& e) {
    return any_subexpr(e, [&](const SymExpr& x) { return loop_of(x, ranges) != nullptr; });
  };
  std::vector<const Loop*> used;
  Box box;
  for (const SymExpr& index : indices) {
    const Loop* loop = nullptr;
    SymExpr offset;
    for (const Loop& l : ranges) {
      if (!mentions_var(index, SymVar::from_expr(l.var))) continue;
      offset = analyzer.simplify(index - l.var);
      if (!mentions_a_range(offset)) loop = &l;
      break;
    }
    if (loop == nullptr || std::find(used.begin(), used.end(), loop) != used.end()) return std::nullopt;
    used.push_back(loop);
    box.push_back({offset, loop->extent});
  }
  return box;
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

// The box of a store to `buffer` that is the first mention in `s` and does not read it.
std::optional<Box> store_box(const Stmt& s, const Buffer& buffer, const std::vector<Loop>& ranges,
                             Analyzer& analyzer) {
  Stmt first = first_mention(s, buffer.get());
  const auto* store = first.defined() ? first.as<BufferStoreNode>() : nullptr;
  if (store == nullptr || !store->buffer.same_as(buffer) || reads(store->value, buffer.get())) return std::nullopt;
  return box_of(store->indices, ranges, buffer, analyzer);
}

std::optional<Box> block_box(const BlockNode& block, const Buffer& buffer, const std::vector<Loop>& loops,
                             Analyzer& analyzer) {
  // The spatial iteration variables bound to distinct enclosing loops of their extent.
  std::vector<Loop> spatial;
  for (const IterVar& iv : block.iter_vars) {
    const Loop* l = loop_of(iv.binding, loops);
    if (l == nullptr || !analyzer.prove_equal(l->extent, iv.extent)) return std::nullopt;
    if (iv.type == IterType::kSpatial) spatial.push_back({iv.var, iv.extent});
  }
  if (block.init.defined()) {
    // Reduction blocks write their init when every reduction variable is 0: once per
    // spatial point, before the body reads the output.
    if (std::optional<Box> box = store_box(block.init, buffer, spatial, analyzer)) return box;
    if (mentions(block.init, buffer.get())) return std::nullopt;
  }
  return store_box(block.body, buffer, spatial, analyzer);
}

std::optional<Box> nest_box(const Stmt& s, const Buffer& buffer, std::vector<Loop>& loops, Analyzer& analyzer) {
  if (const auto* loop = s.as<ForNode>()) {
    if (!analyzer.prove_equal(loop->min, 0)) return std::nullopt;
    loops.push_back({loop->loop_var, loop->extent});
    return nest_box(loop->body, buffer, loops, analyzer);
  }
  if (const auto* block = s.as<BlockNode>()) return block_box(*block, buffer, loops, analyzer);
  // Stores (in sequence) inside the innermost loop run on every iteration.
  if (s.as<BufferStoreNode>() != nullptr || s.as<SeqStmtNode>() != nullptr) {
    return store_box(s, buffer, loops, analyzer);
  }
  return std::nullopt;
}

// The statements of `body` in execution order, looking through top-level
// sequences and allocations, and through lets whose value does not read `buffer`
// (one that does is kept whole: a read).
void top_level_statements(const Stmt& body, const BufferNode* buffer, std::vector<Stmt>& out) {
  if (!body.defined()) return;
  if (const auto* seq = body.as<SeqStmtNode>()) {
    for (const Stmt& part : seq->stmts) top_level_statements(part, buffer, out);
  } else if (const auto* let = body.as<LetStmtNode>(); let != nullptr && !reads(let->value, buffer)) {
    top_level_statements(let->body, buffer, out);
  } else if (const auto* alloc = body.as<AllocateNode>()) {
    top_level_statements(alloc->body, buffer, out);
  } else {
    out.push_back(body);
  }
}

// Whether `boxes` together cover `buffer`: in every dim but one, each box spans
// the whole dim; along that one, the boxes' intervals chain from 0 to the dim
// (each starting where an earlier one ends, proven equal).
bool boxes_cover(const std::vector<Box>& boxes, const Buffer& buffer, Analyzer& analyzer) {
  const size_t ndim = buffer.ndim();
  auto full = [&](const Interval& i, size_t d) {
    return analyzer.prove_equal(i.lo, 0) && analyzer.prove_equal(i.extent, buffer.shape()[d]);
  };
  for (size_t along = 0; along < std::max<size_t>(ndim, 1); ++along) {
    bool others_full = true;
    for (const Box& box : boxes) {
      for (size_t d = 0; d < ndim && others_full; ++d) others_full = d == along || full(box[d], d);
    }
    if (!others_full) continue;
    if (ndim == 0) return !boxes.empty();
    SymExpr end = SymExpr(int64_t{0});
    std::vector<bool> taken(boxes.size(), false);
    for (bool advanced = true; advanced;) {
      if (analyzer.prove_equal(end, buffer.shape()[along])) return true;
      advanced = false;
      for (size_t b = 0; b < boxes.size() && !advanced; ++b) {
        if (taken[b] || !analyzer.prove_equal(boxes[b][along].lo, end)) continue;
        taken[b] = true;
        end = analyzer.simplify(end + boxes[b][along].extent);
        advanced = true;
      }
    }
  }
  return false;
}

}  // namespace

bool writes_every_element(const PrimFuncNode& func, const Buffer& buffer) {
  // The top-level statements that mention the buffer, in order, each a nest that
  // writes a box of it without reading it, until their boxes cover it.
  std::vector<Stmt> statements;
  top_level_statements(func.body, buffer.get(), statements);
  Analyzer analyzer;
  std::vector<Box> boxes;
  for (const Stmt& s : statements) {
    if (!mentions(s, buffer.get())) continue;
    std::vector<Loop> loops;
    std::optional<Box> box = nest_box(s, buffer, loops, analyzer);
    if (!box) return false;  // read, or written in a way not proven here, before covered
    boxes.push_back(*std::move(box));
    if (boxes_cover(boxes, buffer, analyzer)) return true;
  }
  return false;  // never (wholly) written
}

}  // namespace relax::transform
