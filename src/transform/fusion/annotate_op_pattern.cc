// annotate-op-pattern: every PrimFunc of the module gets the attribute
// `op_pattern`, its loop-pattern class (relax/transform/op_pattern.h) read off
// its loop code alone: no operator name, no hand annotation. fuse-ops reads it.
//
// What the analysis looks at. One walk over the kernel in program order
// collects each compute block (a BlockNode; a store outside every block is a
// pseudo-block of its own whose spatial variables are the loops around it,
// outermost first), with its spatial and reduction iteration variables and
// every BufferStore and BufferLoad in it. `let` variables are replaced by
// their values first; every index is simplified by one relax::Analyzer under
// the ranges of the loops and iteration variables around it, and indices are
// compared structurally after that.
//
// Buffers. The outputs are the buffer parameters some statement stores to;
// the inputs are the other buffer parameters; the intermediates are the
// buffers of `alloc` statements.
//
// Opaque (never fused), whatever the rest says:
//   - an `evaluate` statement (an effect), or a `call_extern` statement (a
//     micro-kernel) unless the kernel carries an `op_pattern` of its own, its
//     author's word, which is kept;
//   - an in-place write: a stored parameter followed by an unstored buffer
//     parameter (call_tir passes the outputs after the inputs, so this is a
//     kernel for call_tir_inplace), or a load of a stored buffer (output or
//     intermediate) that no earlier statement wrote: in its block's `init`
//     or earlier in its block at the same indices, or in an earlier block.
//     Such a load reads what the caller put in an output (or garbage);
//   - data-dependent control or writes: a loop bound, a block binding or an
//     `if` condition that reads a buffer, a store index that reads a buffer
//     (a scatter);
//   - a loop or a block inside a block (a scan such as cumsum: the block is not
//     one point of a computation), or a block body that uses a loop variable
//     from outside the block directly instead of its iteration variables;
//   - a store that misses a spatial variable of extent other than 1 (the same
//     element is overwritten along it), or a store of a reduction block that is
//     indexed by a reduction variable or does not accumulate (its value does
//     not read its own target at the same indices). So a reduction written as
//     plain loops without blocks is opaque;
//   - one output written by several blocks unless all of them write it whole
//     (each stores it at exactly its spatial variables, in order, over its
//     whole shape: a matmul block then an epilogue block on the same buffer),
//     or all of them are spatial and write boxes of it (every index a spatial
//     variable plus a constant, or a constant: concat);
//   - several outputs whose shapes are not provably equal (quantize's packed
//     values and scales; a split into unequal parts); outputs of equal shapes
//     (a split into equal parts) are fine;
//   - no output at all, or a load of a buffer that is neither a parameter nor
//     allocated.
//
// The class of a block (the kernel's is the largest class of its blocks, in
// the enum's order, so softmax -- two reductions and an elementwise block --
// is a reduction, a matmul followed by a bias-add block is
// output-elementwise-fusible, and so is attention, whose q.k block is a
// multiply-accumulate beside its softmax reductions):
//   - spatial block (no reduction variable):
//       elementwise  every store writes its buffer whole at exactly the block's
//                    spatial variables in order (extents equal to the dims, no
//                    `if` around it), and every load reads exactly those
//                    indices of a buffer of those dims;
//       broadcast    as elementwise, but some load reads a subsequence of the
//                    spatial variables in order, each over a dim equal to its
//                    extent, with constant 0 at dims equal to 1 (B[vi1],
//                    A[vi0, 0] from an (n, 1) buffer, a 0-d buffer);
//       injective    anything else over the iteration variables: loads at other
//                    index expressions (transpose, reshape's floordiv/floormod,
//                    a slice, the group-wise dequantisation's q[k / 2, n] and
//                    scale[k / 32, n]), a store of part of the buffer (one
//                    concat block), a store under an `if`. A gather -- a load
//                    whose index reads another buffer, as in take or an
//                    embedding lookup -- is injective too: each output
//                    element is still written once, at an index that does not
//                    depend on data, from a function of input elements; only
//                    data-dependent writes and control are opaque.
//   - reduction block (some reduction variable), whose stores are indexed by
//     spatial variables only and accumulate:
//       output-elementwise-fusible
//                    a multiply-accumulate: one store `C = C + X * Y` (either
//                    operand order, or fma(X, Y, C)), where X and Y, once casts
//                    and a zero-padding select(cond, load, constant) are taken
//                    off, are loads of two different buffers other than C, each
//                    indexed by some reduction variable (matmul, batch matmul,
//                    linear, conv: its input index is a spatial variable plus a
//                    reduction variable, attention's q.k block); or a window
//                    reduction: every store `C = C op W` with op +, max or min,
//                    W (casts and padding select off) a load of another buffer
//                    whose indices mention every reduction variable, and each
//                    index that mentions one also mentions a spatial variable
//                    (max/avg pooling, adaptive pooling: each reduced axis runs
//                    over a window around an output position);
//       reduction    any other accumulation (sum, max, argmax, the sums of a
//                    norm, sum of squares x * x).
//
// Not handled: facts from `if` conditions are not used to simplify indices;
// a condition that the loops already imply (a tail check) still makes the
// store injective (run simplify-loops first to remove it); a reduction whose
// `init` is a separate earlier block is accepted (the earlier write covers the
// accumulator's read) but its class is that of the blocks, so the init block
// must write the whole buffer for the two writers to be accepted.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/visitor.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

using VarSet = absl::flat_hash_set<SymVar, SymExprHash, SymExprEqual>;

/// The larger of two classes in the enum's order (opaque the largest).
OpPattern join(OpPattern a, OpPattern b) {
  return static_cast<uint8_t>(a) >= static_cast<uint8_t>(b) ? a : b;
}

/// Whether evaluating `e` reads a buffer.
bool mentions_any(const SymExpr& e, const std::vector<SymVar>& vars) {
  return std::any_of(vars.begin(), vars.end(), [&](const SymVar& v) { return mentions_var(e, v); });
}

bool same_indices(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!structural_equal(a[i], b[i])) return false;
  }
  return true;
}

/// `indices` is exactly `vars`, in order.
bool is_exactly(const std::vector<SymExpr>& indices, const std::vector<SymVar>& vars) {
  if (indices.size() != vars.size()) return false;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!structural_equal(indices[i], vars[i])) return false;
  }
  return true;
}

/// `e` without the casts around it.
const SymExpr& strip_casts(const SymExpr& e) {
  const SymExpr* p = &e;
  while (p->kind() == SymKind::kCast) p = &p->operand(0);
  return *p;
}

/// `e` without casts and without a zero-padding select around a load:
/// select(cond, x, constant) with a cond that reads no buffer gives x.
const SymExpr& strip_padding(const SymExpr& e) {
  const SymExpr* p = &strip_casts(e);
  while (p->kind() == SymKind::kSelect && !reads_memory(p->operand(0)) &&
         (p->operand(2).as_const() || p->operand(2).as_float())) {
    p = &strip_casts(p->operand(1));
  }
  return *p;
}

/// A load or store, its indices simplified under the facts where it occurs.
struct Access {
  const BufferNode* buffer = nullptr;
  std::vector<SymExpr> indices;
  bool data_dependent = false;  ///< some index reads a buffer
};

struct StoreRecord {
  Access target;
  SymExpr value;  ///< lets substituted, every load's indices simplified
  bool in_init = false;
  bool guarded = false;  ///< under an `if`
};

/// A compute block, or the pseudo-block of one store outside every block.
struct BlockRecord {
  std::vector<SymVar> spatial;
  std::vector<SymExpr> spatial_extents;
  std::vector<SymVar> reduce;
  bool partial = false;  ///< a pseudo-block under a loop that does not start at 0
  std::vector<StoreRecord> stores;
  std::vector<Access> loads;  ///< every load in the stored values and in load indices

  bool stores_to(const BufferNode* buffer) const {
    return std::any_of(stores.begin(), stores.end(),
                       [&](const StoreRecord& s) { return s.target.buffer == buffer; });
  }
};

/// Whether `e` is a load of `target` at `indices` (an accumulator's read).
bool is_load_of(const SymExpr& e, const Access& target) {
  if (e.kind() != SymKind::kBufferLoad || e->buffer_node() != target.buffer) return false;
  return same_indices(std::vector<SymExpr>(e->operands().begin(), e->operands().end()),
                      target.indices);
}

bool reads_target(const SymExpr& e, const Access& target) {
  return any_subexpr(e, [&target](const SymExpr& x) { return is_load_of(x, target); });
}

class KernelAnalysis {
 public:
  explicit KernelAnalysis(const PrimFuncNode& func) : func_(func) {}

  OpPattern run() {
    collect_kernel_facts();
    visit(func_.body);
    // An extern call is opaque to this analysis: the kernel's author may say
    // what it is with op_pattern (kept), otherwise it is opaque.
    if (has_extern_call_) return op_pattern_of(func_).value_or(OpPattern::kOpaque);
    if (opaque_) return OpPattern::kOpaque;
    return classify();
  }

 private:
  // ---- The walk ------------------------------------------------------------

  /// Parameters, allocated buffers, stored buffers and the variables every
  /// part of the kernel may use (buffer dims, scalar parameters).
  void collect_kernel_facts() {
    for (const PrimParam& p : func_.params) {
      if (p.scalar) kernel_vars_.insert(*p.scalar);
      if (!p.buffer) continue;
      known_buffers_.insert(p.buffer->get());
      add_shape_vars(*p.buffer);
      for (const SymExpr& dim : p.buffer->shape()) {
        if (dim.is_var() && dim.dtype() == DataType::int64()) {
          analyzer_.bind(SymVar::from_expr(dim), 0);
        }
      }
    }
    collect_stmt_facts(func_.body);
  }

  void add_shape_vars(const Buffer& buffer) {
    for (const SymExpr& dim : buffer.shape()) {
      for_each_var(dim, [&](const SymVar& v) { kernel_vars_.insert(v); });
    }
  }

  // The buffers the body stores to, and the ones it allocates (known, their dims the kernel's).
  class StmtFacts final : public StmtVisitor {
   public:
    explicit StmtFacts(KernelAnalysis& k) : k_(k) {}
    void visit_buffer_store(const Stmt&, const BufferStoreNode& node) override {
      k_.stored_.insert(node.buffer.get());
    }
    void visit_allocate(const Stmt& s, const AllocateNode& node) override {
      k_.known_buffers_.insert(node.buffer.get());
      k_.add_shape_vars(node.buffer);
      StmtVisitor::visit_allocate(s, node);
    }
    void visit_value(const SymExpr&) override {}  // only statements matter here

   private:
    KernelAnalysis& k_;
  };

  void collect_stmt_facts(const Stmt& s) {
    StmtFacts facts(*this);
    facts.visit_stmt(s);
  }

  void visit(const Stmt& s) {
    if (!s.defined() || opaque_) return;
    switch (s.kind()) {
      case StmtKind::kFor: visit_for(*s.as<ForNode>()); break;
      case StmtKind::kSeq:
        for (const Stmt& x : s.as<SeqStmtNode>()->stmts) visit(x);
        break;
      case StmtKind::kBufferStore: visit_store(*s.as<BufferStoreNode>()); break;
      case StmtKind::kIfThenElse: {
        const auto* node = s.as<IfThenElseNode>();
        if (reads_memory(substitute_lets(node->cond))) return mark_opaque();
        ++guards_;
        visit(node->then_case);
        visit(node->else_case);
        --guards_;
        break;
      }
      case StmtKind::kLetStmt: {
        const auto* node = s.as<LetStmtNode>();
        lets_[node->var] = substitute_lets(node->value);
        visit(node->body);
        lets_.erase(node->var);
        break;
      }
      case StmtKind::kAllocate: visit(s.as<AllocateNode>()->body); break;
      case StmtKind::kEvaluate: mark_opaque(); break;
      case StmtKind::kExternCall:
        has_extern_call_ = true;
        mark_opaque();
        break;
      case StmtKind::kBlock: visit_block(*s.as<BlockNode>()); break;
    }
  }

  void visit_for(const ForNode& node) {
    if (current_ != nullptr) return mark_opaque();  // a loop inside a block: a scan
    const SymExpr min = substitute_lets(node.min);
    const SymExpr extent = substitute_lets(node.extent);
    if (reads_memory(min) || reads_memory(extent)) return mark_opaque();
    loops_.push_back({node.loop_var, min, extent});
    std::optional<Analyzer::ConstraintScope> in_loop;
    if (is_int64(node.loop_var) && is_int64(min) && is_int64(extent)) {
      const SymExpr v = node.loop_var;
      in_loop.emplace(analyzer_, min <= v && v < min + extent);
    }
    visit(node.body);
    loops_.pop_back();
  }

  void visit_block(const BlockNode& node) {
    if (current_ != nullptr) return mark_opaque();  // a block inside a block
    BlockRecord block;
    SymExpr ranges = SymExpr::boolean(true);
    for (const IterVar& iv : node.iter_vars) {
      const SymExpr extent = substitute_lets(iv.extent);
      if (reads_memory(extent) || reads_memory(substitute_lets(iv.binding))) return mark_opaque();
      if (iv.type == IterType::kSpatial) {
        block.spatial.push_back(iv.var);
        block.spatial_extents.push_back(extent);
      } else {
        block.reduce.push_back(iv.var);
      }
      if (is_int64(iv.var) && is_int64(extent)) {
        ranges = ranges && 0 <= SymExpr(iv.var) && SymExpr(iv.var) < extent;
      }
    }
    {
      Analyzer::ConstraintScope in_block(analyzer_, ranges);
      current_ = &block;
      in_init_ = true;
      visit(node.init);
      in_init_ = false;
      visit(node.body);
      current_ = nullptr;
    }
    finish_block(std::move(block));
  }

  void visit_store(const BufferStoreNode& node) {
    std::optional<BlockRecord> pseudo;
    BlockRecord* block = current_;
    if (block == nullptr) {
      pseudo.emplace();
      for (const Loop& loop : loops_) {
        pseudo->spatial.push_back(loop.var);
        pseudo->spatial_extents.push_back(loop.extent);
        pseudo->partial = pseudo->partial || !loop.min.is_const(0);
      }
      block = &*pseudo;
    }
    StoreRecord store;
    store.in_init = in_init_;
    store.guarded = guards_ > 0;
    store.target.buffer = node.buffer.get();
    if (!known_buffers_.contains(store.target.buffer) ||
        node.indices.size() != node.buffer.ndim()) {
      return mark_opaque();
    }
    for (const SymExpr& index : node.indices) {
      SymExpr e = analyzer_.simplify(normalize(substitute_lets(index)));
      if (reads_memory(e)) return mark_opaque();  // a scatter
      store.target.indices.push_back(std::move(e));
    }
    store.value = normalize(substitute_lets(node.value));

    // Every variable must be the block's, or the kernel's.
    auto foreign = [&](const SymExpr& e) {
      bool found = false;
      for_each_var(e, [&](const SymVar& v) {
        if (kernel_vars_.contains(v)) return;
        if (std::find_if(block->spatial.begin(), block->spatial.end(),
                         [&](const SymVar& x) { return structural_equal(x, v); }) != block->spatial.end()) {
          return;
        }
        if (std::find_if(block->reduce.begin(), block->reduce.end(),
                         [&](const SymVar& x) { return structural_equal(x, v); }) != block->reduce.end()) {
          return;
        }
        found = true;
      });
      return found;
    };
    if (foreign(store.value)) return mark_opaque();
    for (const SymExpr& index : store.target.indices) {
      if (foreign(index)) return mark_opaque();
    }

    for (const SymExpr& index : store.target.indices) collect_loads(index, *block);
    collect_loads(store.value, *block);
    if (opaque_) return;
    block->stores.push_back(std::move(store));
    if (pseudo) finish_block(std::move(*pseudo));
  }

  /// Records every load in `e` (and in its load indices) in `block`, checking
  /// that each reads a buffer the kernel knows and has written (when it writes
  /// it at all) before.
  void collect_loads(const SymExpr& e, BlockRecord& block) {
    if (e.kind() == SymKind::kBufferLoad) {
      Access load;
      load.buffer = e->buffer_node();
      load.indices.assign(e->operands().begin(), e->operands().end());
      load.data_dependent = std::any_of(load.indices.begin(), load.indices.end(), reads_memory);
      if (!known_buffers_.contains(load.buffer) || load.indices.size() != load.buffer->shape.size()) {
        return mark_opaque();
      }
      if (stored_.contains(load.buffer) && !written_.contains(load.buffer) &&
          !written_in_block(block, load)) {
        return mark_opaque();  // reads what the caller left in it: an in-place update
      }
      block.loads.push_back(std::move(load));
    }
    for (size_t i = 0; i < e.num_operands(); ++i) collect_loads(e.operand(i), block);
  }

  static bool written_in_block(const BlockRecord& block, const Access& load) {
    return std::any_of(block.stores.begin(), block.stores.end(), [&](const StoreRecord& s) {
      return s.target.buffer == load.buffer && same_indices(s.target.indices, load.indices);
    });
  }

  void finish_block(BlockRecord block) {
    for (const StoreRecord& s : block.stores) written_.insert(s.target.buffer);
    if (!block.stores.empty()) blocks_.push_back(std::move(block));
  }

  /// `e` with every load's indices simplified under the facts in force.
  SymExpr normalize(const SymExpr& e) {
    if (e.num_operands() == 0) return e;
    std::vector<SymExpr> operands;
    operands.reserve(e.num_operands());
    for (size_t i = 0; i < e.num_operands(); ++i) {
      SymExpr x = normalize(e.operand(i));
      if (e.kind() == SymKind::kBufferLoad) x = analyzer_.simplify(x);
      operands.push_back(std::move(x));
    }
    return e.with_operands(std::move(operands));
  }

  SymExpr substitute_lets(const SymExpr& e) const { return lets_.empty() ? e : substitute(e, lets_); }

  static bool is_int64(const SymExpr& e) { return e.dtype() == DataType::int64(); }

  void mark_opaque() { opaque_ = true; }

  // ---- Classification ------------------------------------------------------

  OpPattern classify() {
    // Outputs follow the inputs (call_tir's order); an output before an input
    // is a buffer written in place.
    std::vector<const BufferNode*> outputs;
    for (const PrimParam& p : func_.params) {
      if (!p.buffer) continue;
      const BufferNode* buffer = p.buffer->get();
      if (stored_.contains(buffer)) {
        outputs.push_back(buffer);
      } else if (!outputs.empty()) {
        return OpPattern::kOpaque;
      }
    }
    if (outputs.empty()) return OpPattern::kOpaque;
    for (const BufferNode* other : outputs) {
      if (!same_shape(other->shape, outputs[0]->shape)) return OpPattern::kOpaque;
    }
    for (const BufferNode* output : outputs) {
      if (!writers_agree(output)) return OpPattern::kOpaque;
    }
    OpPattern pattern = OpPattern::kElementwise;
    for (const BlockRecord& block : blocks_) pattern = join(pattern, classify_block(block));
    return pattern;
  }

  OpPattern classify_block(const BlockRecord& block) {
    for (const StoreRecord& s : block.stores) {
      if (!covers_spatial(block, s.target)) return OpPattern::kOpaque;
    }
    return block.reduce.empty() ? classify_spatial(block) : classify_reduction(block);
  }

  OpPattern classify_spatial(const BlockRecord& block) {
    OpPattern pattern = OpPattern::kElementwise;
    for (const StoreRecord& s : block.stores) {
      if (!writes_whole(block, s)) pattern = OpPattern::kInjective;
    }
    for (const Access& load : block.loads) pattern = join(pattern, classify_load(block, load));
    return pattern;
  }

  OpPattern classify_load(const BlockRecord& block, const Access& load) {
    if (load.data_dependent) return OpPattern::kInjective;  // a gather
    const std::vector<SymExpr>& shape = load.buffer->shape;
    if (is_exactly(load.indices, block.spatial)) {
      for (size_t i = 0; i < shape.size(); ++i) {
        if (!same_value(shape[i], block.spatial_extents[i])) return OpPattern::kInjective;
      }
      return OpPattern::kElementwise;
    }
    // A subsequence of the spatial variables, in order, with 0 at unit dims.
    size_t next = 0;
    for (size_t i = 0; i < load.indices.size(); ++i) {
      const SymExpr& index = load.indices[i];
      if (index.is_const(0) && same_value(shape[i], SymExpr(1))) continue;
      size_t k = next;
      while (k < block.spatial.size() && !structural_equal(index, block.spatial[k])) ++k;
      if (k == block.spatial.size() || !same_value(shape[i], block.spatial_extents[k])) {
        return OpPattern::kInjective;
      }
      next = k + 1;
    }
    return OpPattern::kBroadcast;
  }

  OpPattern classify_reduction(const BlockRecord& block) {
    for (const StoreRecord& s : block.stores) {
      for (const SymExpr& index : s.target.indices) {
        if (mentions_any(index, block.reduce)) return OpPattern::kOpaque;
      }
      // The update reads its own target at the same indices: an accumulation.
      if (!s.in_init && !reads_target(s.value, s.target)) return OpPattern::kOpaque;
    }
    if (is_multiply_accumulate(block) || is_window_reduction(block)) {
      return OpPattern::kOutputElementwiseFusible;
    }
    return OpPattern::kReduction;
  }

  /// One update `C = C + X * Y` (or fma(X, Y, C)), X and Y loads of two
  /// different buffers other than C, each indexed by a reduction variable.
  static bool is_multiply_accumulate(const BlockRecord& block) {
    const StoreRecord* update = nullptr;
    for (const StoreRecord& s : block.stores) {
      if (s.in_init) continue;
      if (update != nullptr) return false;
      update = &s;
    }
    if (update == nullptr) return false;
    const SymExpr& value = strip_casts(update->value);
    SymExpr x, y;
    if (value.kind() == SymKind::kAdd) {
      const SymExpr* product = nullptr;
      if (is_load_of(strip_casts(value.operand(0)), update->target)) product = &value.operand(1);
      if (is_load_of(strip_casts(value.operand(1)), update->target)) product = &value.operand(0);
      if (product == nullptr) return false;
      const SymExpr& p = strip_casts(*product);
      if (p.kind() != SymKind::kMul) return false;
      x = p.operand(0);
      y = p.operand(1);
    } else if (value.kind() == SymKind::kCall && value->intrinsic() == Intrinsic::kFma &&
               is_load_of(strip_casts(value.operand(2)), update->target)) {
      x = value.operand(0);
      y = value.operand(1);
    } else {
      return false;
    }
    const SymExpr& a = strip_padding(x);
    const SymExpr& b = strip_padding(y);
    if (a.kind() != SymKind::kBufferLoad || b.kind() != SymKind::kBufferLoad) return false;
    if (a->buffer_node() == b->buffer_node()) return false;  // x * x: a sum of squares
    for (const SymExpr* load : {&a, &b}) {
      if ((*load)->buffer_node() == update->target.buffer) return false;
      bool by_reduction = false;
      for (const SymExpr& index : (*load)->operands()) {
        by_reduction = by_reduction || mentions_any(index, block.reduce);
      }
      if (!by_reduction) return false;
    }
    return true;
  }

  /// Every update `C = C op W` (op +, max or min) with W a load of another
  /// buffer over a window: each reduction variable indexes it, and only in
  /// indices that also follow a spatial variable.
  static bool is_window_reduction(const BlockRecord& block) {
    bool any = false;
    for (const StoreRecord& s : block.stores) {
      if (s.in_init) continue;
      const SymExpr& value = strip_casts(s.value);
      if (value.kind() != SymKind::kAdd && value.kind() != SymKind::kMax &&
          value.kind() != SymKind::kMin) {
        return false;
      }
      const SymExpr* window = nullptr;
      if (is_load_of(strip_casts(value.operand(0)), s.target)) window = &value.operand(1);
      if (is_load_of(strip_casts(value.operand(1)), s.target)) window = &value.operand(0);
      if (window == nullptr) return false;
      const SymExpr& w = strip_padding(*window);
      if (w.kind() != SymKind::kBufferLoad || w->buffer_node() == s.target.buffer) return false;
      for (const SymVar& r : block.reduce) {
        bool indexed = false;
        for (const SymExpr& index : w->operands()) indexed = indexed || mentions_var(index, r);
        if (!indexed) return false;
      }
      for (const SymExpr& index : w->operands()) {
        if (mentions_any(index, block.reduce) && !mentions_any(index, block.spatial)) return false;
      }
      any = true;
    }
    return any;
  }

  // ---- Whole-kernel checks -------------------------------------------------

  /// Every spatial variable whose extent is not 1 indexes the store (else the
  /// same element is overwritten along it).
  bool covers_spatial(const BlockRecord& block, const Access& target) {
    for (size_t i = 0; i < block.spatial.size(); ++i) {
      if (same_value(block.spatial_extents[i], SymExpr(1))) continue;
      if (!std::any_of(target.indices.begin(), target.indices.end(),
                       [&](const SymExpr& index) { return mentions_var(index, block.spatial[i]); })) {
        return false;
      }
    }
    return true;
  }

  /// The store writes its whole buffer, point for point with the block's
  /// spatial variables.
  bool writes_whole(const BlockRecord& block, const StoreRecord& s) {
    if (block.partial || s.guarded || !is_exactly(s.target.indices, block.spatial)) return false;
    const std::vector<SymExpr>& shape = s.target.buffer->shape;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!same_value(shape[i], block.spatial_extents[i])) return false;
    }
    return true;
  }

  /// The store writes a box of its buffer: each index a distinct spatial
  /// variable plus a constant, or a constant.
  static bool writes_box(const BlockRecord& block, const StoreRecord& s) {
    std::vector<SymVar> used;
    for (const SymExpr& index : s.target.indices) {
      if (index.as_const()) continue;
      const SymExpr* var = &index;
      if (index.kind() == SymKind::kAdd && index.operand(1).as_const()) var = &index.operand(0);
      if (index.kind() == SymKind::kAdd && index.operand(0).as_const()) var = &index.operand(1);
      if (!var->is_var()) return false;
      const SymVar v = SymVar::from_expr(*var);
      auto is_v = [&](const SymVar& x) { return structural_equal(x, v); };
      if (std::none_of(block.spatial.begin(), block.spatial.end(), is_v)) return false;
      if (std::any_of(used.begin(), used.end(), is_v)) return false;
      used.push_back(v);
    }
    return true;
  }

  /// Several blocks writing `output` must write it whole each, or boxes of it
  /// from spatial blocks.
  bool writers_agree(const BufferNode* output) {
    std::vector<const BlockRecord*> writers;
    for (const BlockRecord& block : blocks_) {
      if (block.stores_to(output)) writers.push_back(&block);
    }
    if (writers.size() < 2) return true;
    bool whole = true;
    bool boxes = true;
    for (const BlockRecord* block : writers) {
      for (const StoreRecord& s : block->stores) {
        if (s.target.buffer != output) continue;
        whole = whole && writes_whole(*block, s);
        boxes = boxes && block->reduce.empty() && writes_box(*block, s);
      }
    }
    return whole || boxes;
  }

  bool same_shape(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!same_value(a[i], b[i])) return false;
    }
    return true;
  }

  bool same_value(const SymExpr& a, const SymExpr& b) {
    if (is_int64(a) && is_int64(b)) return analyzer_.prove_equal(a, b);
    return structural_equal(a, b);
  }

  struct Loop {
    SymVar var;
    SymExpr min;
    SymExpr extent;
  };

  const PrimFuncNode& func_;
  Analyzer analyzer_;
  VarSet kernel_vars_;
  absl::flat_hash_set<const BufferNode*> known_buffers_;
  absl::flat_hash_set<const BufferNode*> stored_;   ///< stored anywhere in the kernel
  absl::flat_hash_set<const BufferNode*> written_;  ///< stored by a finished block
  SymVarMap<SymExpr> lets_;
  std::vector<Loop> loops_;  ///< the loops around the current point, outside blocks
  BlockRecord* current_ = nullptr;
  bool in_init_ = false;
  int guards_ = 0;
  std::vector<BlockRecord> blocks_;
  bool opaque_ = false;
  bool has_extern_call_ = false;
};

class AnnotateOpPatternPass : public Pass {
 public:
  AnnotateOpPatternPass()
      : Pass(PassInfo("annotate-op-pattern",
                      "every PrimFunc gets op_pattern, its loop-pattern class read off its loops "
                      "(elementwise, broadcast, injective, reduction, output-elementwise-fusible, "
                      "opaque)")
                 .with_statistic("annotated", "PrimFuncs whose op_pattern was written or changed")
                 .with_statistic("opaque", "PrimFuncs classified opaque")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule out = mod;
    int64_t annotated = 0;
    int64_t opaque = 0;
    const std::string key(kOpPatternAttr);
    for (const auto& [name, func] : mod.functions()) {
      const auto* node = func.as<PrimFuncNode>();
      if (node == nullptr) continue;
      const OpPattern pattern = analyze_op_pattern(*node);
      if (pattern == OpPattern::kOpaque) ++opaque;
      const std::string value(op_pattern_name(pattern));
      auto it = node->attrs.find(key);
      if (it != node->attrs.end()) {
        const std::string* old = std::get_if<std::string>(&it->second);
        if (old != nullptr && *old == value) continue;
      }
      Attrs attrs = node->attrs;
      attrs[key] = value;
      out.add(name, make_prim_func(node->params, node->body, std::move(attrs)));
      ++annotated;
    }
    ctx.add_statistic("annotated", annotated);
    ctx.add_statistic("opaque", opaque);
    return out;
  }
};

}  // namespace

OpPattern analyze_op_pattern(const PrimFuncNode& func) { return KernelAnalysis(func).run(); }

PassPtr create_annotate_op_pattern_pass() { return std::make_shared<AnnotateOpPatternPass>(); }

}  // namespace relax::transform
