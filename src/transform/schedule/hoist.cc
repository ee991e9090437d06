// hoist_invariants (primitives.h): the loop-invariant float subexpressions of
// a loop's compute block computed once, before the loop.
//
//   for j in range(m) {                          alloc b_inv: Buffer[(1,), float32, local] {
//     block b(vi = spatial(n, i),                  block b_inv(vi_1 = spatial(n, i)) {
//             vj = spatial(m, j)) {        =>        b_inv[0] = rsqrt(s[0] / 4096f32 + 1e-05f32) }
//       B[vi, vj] = A[vi, vj] *                    for j in range(m) {
//         rsqrt(s[0] / 4096f32 + 1e-05f32)           block b(...) { B[vi, vj] = A[vi, vj] * b_inv[0] }
//     }                                            }
//   }                                            }
//
// The host compiler would hoist these itself, but not where it cannot prove
// that the loop's stores leave the loads alone, and not a square root, which
// may set errno: it then computes a packed square root and division for every
// vector of a row norm's normalisation. Hoisted: maximal subexpressions of a
// float dtype that are not a constant, a variable or a plain load, that
// mention neither the loop's variable nor a loop under it (through the block's
// bindings), and load no buffer stored under the loop. The same expression,
// evaluated once on the same values, gives the same value: the kernel keeps
// its results bit for bit. Evaluating it when the loop runs no iteration is
// harmless: it is float arithmetic on elements the enclosing iteration owns.
#include "absl/strings/str_cat.h"
#include "relax/ir/visitor.h"
#include "relax/shape/sym_expr_search.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

/// The buffers stored into under a statement.
class StoreCollector : public StmtVisitor {
 public:
  void visit_buffer_store(const Stmt& s, const BufferStoreNode& node) override {
    stored.push_back(node.buffer.get());
    StmtVisitor::visit_buffer_store(s, node);
  }
  void visit_value(const SymExpr&) override {}
  std::vector<const BufferNode*> stored;
};

struct Hoister {
  std::vector<SymVar> inner;               // the loop variables and the block variables bound to them
  std::vector<const BufferNode*> stored;   // buffers stored under the loop
  std::vector<std::pair<Buffer, SymExpr>> hoisted;
  std::string stem;

  bool invariant(const SymExpr& e) const {
    for (const SymVar& v : inner) {
      if (mentions_var(e, v)) return false;
    }
    return !any_subexpr(e, [&](const SymExpr& x) {
      if (x.kind() != SymKind::kBufferLoad) return false;
      for (const BufferNode* b : stored) {
        if (x->buffer_node() == b) return true;
      }
      return false;
    });
  }

  SymExpr visit(const SymExpr& e) {
    if (!e.defined() || e.num_operands() == 0) return e;
    if (e.dtype().is_float() && e.dtype().lanes == 1 && e.kind() != SymKind::kBufferLoad && invariant(e)) {
      Buffer local(absl::StrCat(stem, "_inv", hoisted.empty() ? "" : absl::StrCat("_", hoisted.size())), e.dtype(),
                   {SymExpr(1)}, {}, BufferScope::kLocal);
      hoisted.emplace_back(local, e);
      return buffer_load(local, {SymExpr(0)});
    }
    std::vector<SymExpr> operands;
    bool changed = false;
    for (const SymExpr& op : e->operands()) {
      operands.push_back(visit(op));
      changed |= !operands.back().same_as(op);
    }
    return changed ? e.with_operands(std::move(operands)) : e;
  }
};

}  // namespace

Expr hoist_invariants(const Expr& func, const LoopRef& loop) {
  Hoister h;
  h.inner.push_back(loop.node->loop_var);
  Stmt s = loop.node->body;
  while (const auto* inner = s.as<ForNode>()) {
    h.inner.push_back(inner->loop_var);
    s = inner->body;
  }
  const auto* block = s.as<BlockNode>();
  if (block == nullptr || block->init.defined()) return func;
  const auto* store = block->body.as<BufferStoreNode>();
  if (store == nullptr) return func;
  std::vector<IterVar> outer_iters;  // the block's variables bound outside the loop
  for (const IterVar& iv : block->iter_vars) {
    bool inside = false;
    for (size_t i = 0; i < h.inner.size() && !inside; ++i) inside = mentions_var(iv.binding, h.inner[i]);
    if (inside) h.inner.push_back(iv.var);
    else outer_iters.push_back(iv);
  }
  StoreCollector stores;
  stores.visit_stmt(loop.node->body);
  h.stored = stores.stored;
  h.stem = block->name;
  const SymExpr value = h.visit(store->value);
  if (h.hoisted.empty()) return func;
  Stmt body = replace_in(loop.stmt, block, make_block(block->name, block->iter_vars, Stmt(),
                                                      make_store(store->buffer, store->indices, value)));
  std::vector<Stmt> steps;
  for (const auto& [local, e] : h.hoisted) {
    SymVarMap<SymExpr> map;
    std::vector<IterVar> iters;
    for (const IterVar& iv : outer_iters) {
      SymVar v(iv.var.name(), iv.var.dtype());
      map.emplace(iv.var, v);
      iters.push_back({v, iv.extent, iv.type, iv.binding});
    }
    steps.push_back(make_block(local.name(), iters, Stmt(), make_store(local, {SymExpr(0)}, substitute(e, map))));
  }
  steps.push_back(body);
  Stmt result = make_seq(std::move(steps));
  for (auto it = h.hoisted.rbegin(); it != h.hoisted.rend(); ++it) result = make_allocate(it->first, result);
  return replace_stmt(func, loop.node, result);
}

}  // namespace relax::transform::schedule
