// Lowering a vectorized loop to vector lanes (the second half of vectorize,
// relax/transform/schedule.h).
//
// `for v in range(m, m + L) vectorized { S }` with L a constant lane count
// (is_vector_lanes: a power of two, 2..64) and m a constant becomes S once,
// with L lanes and no loop, when S is one store (under at most one compute
// block, which is inlined: its iteration variables replaced by their bindings;
// a reduction variable only when the lanes share its binding, as an rfactor's
// per-lane partial sums do) whose
//   - store indices are independent of v except the last, which is affine in v
//     with stride 1: it becomes ramp(base, 1, L);
//   - value's loads are each independent of v (a scalar, broadcast where it
//     meets a vector) or, like the store, affine with stride 1 in the last
//     index only: a vector load at ramp(base, 1, L);
//   - other int64 subexpressions affine in v are ramps (an iota: cast(v)),
//     and every operator applies lane-wise, scalar operands broadcast.
// Affine is proven, not guessed: e(v) == e(m) + c * (v - m) for the constant
// c = e(m + 1) - e(m), by the Analyzer with v in [m, m + L).
//
// A split with a tail check leaves `if (a(v) < n) S` in the body; when a(v) is
// affine with a stride >= 0 and n is independent of v, the loop is peeled in
// place: `if (a(m + L - 1) < n) { S in lanes } else { the loop as it was }`
// -- every iteration but the last of the enclosing loop runs full vectors, the
// last runs the scalar remainder (an omp simd loop).
//
// What stays an omp simd loop (the loop is returned unchanged, and vectorize
// still succeeds): a symbolic extent or start, an extent that is not a lane
// count, a body of several statements, an if/else other than the tail check,
// a let, a block with an init or reducing along v, a store or load whose index
// depends on v other than with stride 1 in its last dimension (a transpose, a
// stride-2 access, floordiv(v, 2)), or float16/bfloat16 elements (whose
// vectors the C++ generator does not emit).
#include <optional>
#include <vector>

#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

bool is_half(DataType t) { return t.is_float() && t.bits == 16; }

class LaneLowering {
 public:
  LaneLowering(const SymVar& var, int64_t min, int64_t lanes) : var_(var), min_(min), lanes_(lanes) {
    analyzer_.bind(var, min, min + lanes - 1);
  }

  /// The store `s` in lanes, or nullopt when it does not lower.
  std::optional<Stmt> store(const BufferStoreNode& s) {
    if (is_half(s.buffer.dtype())) return std::nullopt;
    std::vector<SymExpr> indices;
    for (size_t d = 0; d < s.indices.size(); ++d) {
      std::optional<SymExpr> index = access_index(s.indices[d], d + 1 == s.indices.size());
      if (!index) return std::nullopt;
      indices.push_back(*index);
    }
    if (indices.empty() || indices.back().dtype().lanes == 1) return std::nullopt;  // one element for all lanes
    std::optional<SymExpr> value = lanes_of(s.value);
    if (!value) return std::nullopt;
    // The lanes load everything before storing anything; the loop ran lane after
    // lane. They agree unless a lane reads an element another lane writes: a load
    // from the stored buffer must be of the very elements stored.
    const bool overlapping = any_subexpr(*value, [&](const SymExpr& x) {
      if (x.kind() != SymKind::kBufferLoad || x->buffer_node() != s.buffer.get()) return false;
      for (size_t d = 0; d < indices.size(); ++d) {
        if (!structural_equal(x.operand(d), indices[d])) return true;
      }
      return false;
    });
    if (overlapping) return std::nullopt;
    return make_store(s.buffer, std::move(indices), widen(*value));
  }

  /// The value of `cond` at the last lane when it holds at every lane whenever
  /// it holds there: `a(v) < n` or `a(v) <= n` with a affine of stride >= 0.
  std::optional<SymExpr> last_lane_guard(const SymExpr& cond) {
    if (cond.kind() != SymKind::kLT && cond.kind() != SymKind::kLE) return std::nullopt;
    if (mentions_var(cond.operand(1), var_) || cond.operand(0).dtype() != DataType::int64()) return std::nullopt;
    std::optional<int64_t> stride = affine_stride(cond.operand(0));
    if (!stride || *stride < 0) return std::nullopt;
    return analyzer_.simplify(substitute(cond, SymVarMap<SymExpr>{{var_, SymExpr(min_ + lanes_ - 1)}}));
  }

 private:
  /// The constant c with e(v) == e(m) + c * (v - m) on the loop's range, when there is one.
  std::optional<int64_t> affine_stride(const SymExpr& e) {
    const SymExpr first = analyzer_.simplify(substitute(e, SymVarMap<SymExpr>{{var_, SymExpr(min_)}}));
    const SymExpr second = analyzer_.simplify(substitute(e, SymVarMap<SymExpr>{{var_, SymExpr(min_ + 1)}}));
    std::optional<int64_t> c = analyzer_.simplify(second - first).as_const();
    if (!c) return std::nullopt;
    if (!analyzer_.prove_equal(e, first + SymExpr(*c) * (var_ - SymExpr(min_)))) return std::nullopt;
    return c;
  }

  /// An index of a load or store: itself when independent of v; in the last
  /// dimension a ramp of stride 1 when affine so; nullopt otherwise.
  std::optional<SymExpr> access_index(const SymExpr& index, bool last) {
    if (!mentions_var(index, var_)) return index;
    if (!last || index.dtype() != DataType::int64()) return std::nullopt;
    std::optional<int64_t> stride = affine_stride(index);
    if (!stride || *stride != 1) return std::nullopt;
    return ramp(analyzer_.simplify(substitute(index, SymVarMap<SymExpr>{{var_, SymExpr(min_)}})), 1, lanes_);
  }

  /// `e` as a vector of lanes_ lanes (its scalar self when independent of v).
  std::optional<SymExpr> lanes_of(const SymExpr& e) {
    if (!mentions_var(e, var_)) return e;
    if (e.dtype() == DataType::int64() && e.kind() != SymKind::kBufferLoad) {
      if (std::optional<int64_t> stride = affine_stride(e)) {
        return ramp(analyzer_.simplify(substitute(e, SymVarMap<SymExpr>{{var_, SymExpr(min_)}})), *stride, lanes_);
      }
    }
    switch (e.kind()) {
      case SymKind::kVar:  // v itself is affine: not reached
      case SymKind::kRamp:
      case SymKind::kBroadcast:
        return std::nullopt;
      case SymKind::kBufferLoad: {
        if (is_half(e.dtype())) return std::nullopt;
        std::vector<SymExpr> indices;
        for (size_t d = 0; d < e.num_operands(); ++d) {
          std::optional<SymExpr> index = access_index(e.operand(d), d + 1 == e.num_operands());
          if (!index) return std::nullopt;
          indices.push_back(*index);
        }
        return buffer_load(e->buffer(), std::move(indices));
      }
      case SymKind::kCast: {
        if (is_half(e.dtype()) || is_half(e.operand(0).dtype())) return std::nullopt;
        std::optional<SymExpr> x = lanes_of(e.operand(0));
        if (!x) return std::nullopt;
        const DataType t = e.dtype();
        return cast(DataType{t.code, t.bits, static_cast<uint16_t>(lanes_)}, widen(*x));
      }
      case SymKind::kFloorDiv:
      case SymKind::kFloorMod: {
        // Every lane is computed, the ones a select or the tail would have skipped too: an
        // integer division by a divisor that may be 0 (a loaded or lane-varying one) would trap
        // where the loop did not divide. Only a nonzero divisor the lanes share divides in lanes.
        const SymExpr& divisor = e.operand(1);
        const std::optional<int64_t> constant = divisor.as_const();
        if (mentions_var(divisor, var_) || (constant ? *constant == 0 : !analyzer_.prove(divisor != SymExpr::int_imm(0, divisor.dtype())))) {
          return std::nullopt;
        }
        break;
      }
      default:
        break;
    }
    if (is_half(e.dtype())) return std::nullopt;
    std::vector<SymExpr> operands;
    for (size_t i = 0; i < e.num_operands(); ++i) {
      std::optional<SymExpr> x = lanes_of(e.operand(i));
      if (!x) return std::nullopt;
      operands.push_back(widen(*x));
    }
    return e.with_operands(std::move(operands));
  }

  /// A scalar broadcast to the loop's lanes; a vector as it is.
  SymExpr widen(const SymExpr& e) const { return e.dtype().lanes == 1 ? broadcast(e, lanes_) : e; }

  SymVar var_;
  int64_t min_;
  int64_t lanes_;
  Analyzer analyzer_;
};

/// The statement a block stands for: its body with the iteration variables
/// replaced by their bindings; nullopt for a block with an init, or with a
/// reduction variable whose binding varies across the lanes of `lane` (one
/// whose binding the lanes share -- the outer loop of an rfactor's partial
/// sums, `acc[l] = acc[l] + A[i, o * 16 + l]` -- leaves each lane its own
/// accumulator, which the lanes update at once).
std::optional<Stmt> inline_block(const BlockNode& block, const SymVar& lane) {
  if (block.init.defined()) return std::nullopt;
  SymVarMap<SymExpr> bindings;
  for (const IterVar& iv : block.iter_vars) {
    if (iv.type != IterType::kSpatial && (iv.type != IterType::kReduction || mentions_var(iv.binding, lane))) return std::nullopt;
    bindings.emplace(iv.var, iv.binding);
  }
  return substitute_stmt(block.body, bindings);
}

/// Whether `loop` is the else part of an if under `s`: the scalar remainder of
/// a loop peeled already, which a second lowering must leave alone.
bool is_peeled_remainder(const Stmt& s, const StmtNode* loop) {
  if (!s.defined()) return false;
  switch (s.kind()) {
    case StmtKind::kFor:
      return is_peeled_remainder(s.as<ForNode>()->body, loop);
    case StmtKind::kSeq:
      for (const Stmt& x : s.as<SeqStmtNode>()->stmts) {
        if (is_peeled_remainder(x, loop)) return true;
      }
      return false;
    case StmtKind::kIfThenElse: {
      const auto* n = s.as<IfThenElseNode>();
      if (n->else_case.get() == loop && n->then_case.as<BufferStoreNode>() != nullptr) return true;
      return is_peeled_remainder(n->then_case, loop) || is_peeled_remainder(n->else_case, loop);
    }
    case StmtKind::kLetStmt:
      return is_peeled_remainder(s.as<LetStmtNode>()->body, loop);
    case StmtKind::kAllocate:
      return is_peeled_remainder(s.as<AllocateNode>()->body, loop);
    case StmtKind::kBlock:
      return is_peeled_remainder(s.as<BlockNode>()->init, loop) || is_peeled_remainder(s.as<BlockNode>()->body, loop);
    default:
      return false;
  }
}

/// The one store `s` is (under at most one block, see inline_block), or nullopt.
std::optional<Stmt> single_store(const Stmt& s, const SymVar& lane) {
  if (s.as<BufferStoreNode>() != nullptr) return s;
  if (const auto* block = s.as<BlockNode>()) {
    std::optional<Stmt> body = inline_block(*block, lane);
    if (body && body->as<BufferStoreNode>() != nullptr) return body;
  }
  return std::nullopt;
}

}  // namespace

Expr lower_vector_lanes(const Expr& func, const LoopRef& loop) {
  const ForNode& n = *loop.node;
  const std::optional<int64_t> extent = n.extent.as_const();
  const std::optional<int64_t> min = n.min.as_const();
  if (!extent || !min || !is_vector_lanes(*extent) || n.loop_var.dtype() != DataType::int64()) return func;
  LaneLowering lowering(n.loop_var, *min, *extent);
  if (std::optional<Stmt> store = single_store(n.body, n.loop_var)) {
    std::optional<Stmt> lowered = lowering.store(*store->as<BufferStoreNode>());
    return lowered ? replace_stmt(func, loop.node, *lowered) : func;
  }
  // The tail check of a split: full vectors where the last lane passes it.
  const auto* tail = n.body.as<IfThenElseNode>();
  if (tail == nullptr || tail->else_case.defined()) return func;
  if (is_peeled_remainder(func.as<PrimFuncNode>()->body, loop.node)) return func;
  std::optional<Stmt> store = single_store(tail->then_case, n.loop_var);
  if (!store) return func;
  std::optional<SymExpr> guard = lowering.last_lane_guard(tail->cond);
  if (!guard) return func;
  std::optional<Stmt> lowered = lowering.store(*store->as<BufferStoreNode>());
  if (!lowered) return func;
  return replace_stmt(func, loop.node, make_if_then_else(*guard, *lowered, loop.stmt));
}

Expr lower_vectorized_loops(const Expr& func) {
  if (func.as<PrimFuncNode>() == nullptr) return func;
  std::vector<SymVar> vectorized;
  for (const LoopRef& loop : all_loops(func)) {
    if (loop.node->for_kind == ForKind::kVectorized) vectorized.push_back(loop.node->loop_var);
  }
  Expr out = func;
  for (const SymVar& var : vectorized) {
    absl::StatusOr<LoopRef> loop = find_loop_var(out, var);
    if (loop.ok()) out = lower_vector_lanes(out, *loop);
  }
  return out;
}

}  // namespace relax::transform::schedule
