// Recognising a matmul from its loop code (matmul_schedule.h), never from
// names: a nest of three perfectly nested loops, each bound directly to one
// iteration variable of one compute block, two spatial (vi, vj) and one
// reduction (vk), whose body is
//   out[vi, vj] = out[vi, vj] + a * b      (either order of either sum or product)
// with one factor free of vj (the rows' operand, `X[vi, vk]`) and the other
// free of vi (the weights: `W[vk, vj]`, `W[vj, vk]`, or any expression of vk
// and vj such as a dequantisation of packed bytes, `(q[vk / 2, vj] >> ...) *
// s[vk / 32, vj]`), neither reading `out`. The init, when there is one, is one
// store to out[vi, vj] of a value free of vk that does not read `out`; without
// one the accumulation starts from out's value. Batched matmuls (a third
// spatial variable) are not recognised and keep their loops.
#include "absl/strings/str_cat.h"
#include "relax/shape/sym_expr_search.h"
#include "transform/schedule/matmul_schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

bool loads_buffer(const SymExpr& e, const Buffer& b) {
  return any_subexpr(e, [&](const SymExpr& x) {
    return x.kind() == SymKind::kBufferLoad && x->buffer_node() == b.get();
  });
}

bool is_load_at(const SymExpr& e, const Buffer& b, const SymVar& vi, const SymVar& vj) {
  if (e.kind() != SymKind::kBufferLoad || e->buffer_node() != b.get() || e.num_operands() != 2) return false;
  return e.operand(0).is_var() && SymVar::from_expr(e.operand(0)).id() == vi.id() && e.operand(1).is_var() &&
         SymVar::from_expr(e.operand(1)).id() == vj.id();
}

/// Whether some load in `w` varies fastest with `vk`: its last index mentions
/// vk and not vj.
bool k_contiguous(const SymExpr& w, const SymVar& vk, const SymVar& vj) {
  return any_subexpr(w, [&](const SymExpr& x) {
    if (x.kind() != SymKind::kBufferLoad || x.num_operands() == 0) return false;
    const SymExpr& last = x.operand(x.num_operands() - 1);
    return mentions_var(last, vk) && !mentions_var(last, vj);
  });
}

}  // namespace

std::optional<MatmulNest> match_matmul(const Expr& func, const std::vector<SymVar>& chain) {
  if (chain.size() != 3) return std::nullopt;
  absl::StatusOr<LoopRef> outer = find_loop_var(func, chain[0]);
  if (!outer.ok()) return std::nullopt;
  std::vector<const ForNode*> loops{outer->node};
  while (loops.size() < 3) {
    const auto* next = loops.back()->body.as<ForNode>();
    if (next == nullptr) return std::nullopt;
    loops.push_back(next);
  }
  const auto* block = loops.back()->body.as<BlockNode>();
  if (block == nullptr || block->iter_vars.size() != 3) return std::nullopt;
  MatmulNest nest;
  nest.outer = outer->node;
  int spatial = 0, reduction = 0;
  for (const IterVar& iv : block->iter_vars) {
    // Bound directly to one of the loops, which runs over [0, extent).
    const ForNode* bound = nullptr;
    for (const ForNode* loop : loops) {
      if (iv.binding.is_var() && SymVar::from_expr(iv.binding).id() == loop->loop_var.id()) bound = loop;
    }
    // (int64 indices, as legalization makes them: the schedule's index arithmetic is int64.)
    if (bound == nullptr || !bound->min.is_const(0) || !structural_equal(bound->extent, iv.extent) ||
        iv.var.dtype() != DataType::int64() || iv.extent.dtype() != DataType::int64() ||
        bound->loop_var.dtype() != DataType::int64()) {
      return std::nullopt;
    }
    if (iv.type == IterType::kReduction) {
      nest.vk = iv.var;
      nest.depth = iv.extent;
      ++reduction;
    } else {
      (spatial == 0 ? nest.vi : nest.vj) = iv.var;
      (spatial == 0 ? nest.rows : nest.cols) = iv.extent;
      ++spatial;
    }
  }
  if (spatial != 2 || reduction != 1) return std::nullopt;
  const auto* store = block->body.as<BufferStoreNode>();
  if (store == nullptr || store->indices.size() != 2 || !store->buffer.dtype().is_float()) return std::nullopt;
  nest.out = store->buffer;
  // The output is out[vi, vj]: the first spatial variable indexes its rows.
  auto index_is = [&](size_t d, const SymVar& v) {
    return store->indices[d].is_var() && SymVar::from_expr(store->indices[d]).id() == v.id();
  };
  if (index_is(0, nest.vj) && index_is(1, nest.vi)) {
    std::swap(nest.vi, nest.vj);
    std::swap(nest.rows, nest.cols);
  }
  if (!index_is(0, nest.vi) || !index_is(1, nest.vj)) return std::nullopt;
  const SymExpr& value = store->value;
  if (value.kind() != SymKind::kAdd) return std::nullopt;
  SymExpr product;
  if (is_load_at(value.operand(0), nest.out, nest.vi, nest.vj)) {
    product = value.operand(1);
  } else if (is_load_at(value.operand(1), nest.out, nest.vi, nest.vj)) {
    product = value.operand(0);
  } else {
    return std::nullopt;
  }
  if (product.kind() != SymKind::kMul || loads_buffer(product, nest.out)) return std::nullopt;
  for (int first = 0; first < 2; ++first) {
    const SymExpr& a = product.operand(first);
    const SymExpr& b = product.operand(1 - first);
    if (!mentions_var(a, nest.vj) && !mentions_var(b, nest.vi) && mentions_var(a, nest.vi) &&
        mentions_var(b, nest.vj)) {
      nest.lhs = a;
      nest.rhs = b;
      break;
    }
  }
  if (!nest.lhs.defined()) return std::nullopt;
  if (block->init.defined()) {
    const auto* init = block->init.as<BufferStoreNode>();
    if (init == nullptr || init->buffer.get() != nest.out.get() || init->indices.size() != 2 ||
        !structural_equal(init->indices[0], store->indices[0]) ||
        !structural_equal(init->indices[1], store->indices[1]) || mentions_var(init->value, nest.vk) ||
        loads_buffer(init->value, nest.out)) {
      return std::nullopt;
    }
    nest.init = init->value;
  } else {
    nest.init = buffer_load(nest.out, {nest.vi, nest.vj});
  }
  nest.weights_k_contiguous = k_contiguous(nest.rhs, nest.vk, nest.vj);
  return nest;
}

}  // namespace relax::transform::schedule
