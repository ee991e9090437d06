// cache_local (relax/transform/schedule.h): a reduction accumulated in a
// local variable.
//
//   for k in range(m) {                         alloc sum_acc: Buffer[(1,), float32, local] {
//     block sum(vi = spatial(n, i),               block sum_init(vi = spatial(n, i)) { sum_acc[0] = 0f32 }
//               vk = reduce(m, k)) {      =>      for k in range(m) {
//       init { B[vi] = 0f32 }                       block sum(vi = ..., vk = ...) { sum_acc[0] = sum_acc[0] + A[vi, vk] }
//       B[vi] = B[vi] + A[vi, vk]                 }
//     }                                           block sum_write(vi = spatial(n, i)) { B[vi] = sum_acc[0] }
//   }                                           }
//
// The generated code keeps the one-element local array in a register, reads
// and writes the output once per element instead of once per step, and drops
// the per-step `if (vk == 0)` test of the init. Conditions (each refused with a
// message naming the loop): the body of the loop is loops (and guards of a
// split, which read no memory) around one compute block; the block has a
// reduction variable, every one bound to the loop or loops under it (so its
// init belongs before the loop); its spatial variables are bound outside the
// loop; its body is one store, to the output at an index of spatial
// variables, and it loads the output only at that index; its init, if any, is
// one store to the same element. Without an init the accumulator starts from
// the output element's value.
#include "absl/strings/str_cat.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

/// `value` with each load of `out` at `index` replaced by `acc[0]`; `ok` is
/// cleared when `out` is loaded at another index.
SymExpr redirect_loads(const SymExpr& value, const Buffer& out, const std::vector<SymExpr>& index,
                       const Buffer& acc, bool& ok) {
  if (!value.defined()) return value;
  // (Checked before the leaves: a load of a 0-d buffer has no operands.)
  if (value.kind() == SymKind::kBufferLoad && value->buffer_node() == out.get()) {
    std::vector<SymExpr> indices(value->operands().begin(), value->operands().end());
    if (!same_indices(indices, index)) ok = false;
    return buffer_load(acc, {SymExpr::int_imm(0, DataType::int64())});
  }
  if (value.num_operands() == 0) return value;
  std::vector<SymExpr> operands;
  bool changed = false;
  for (const SymExpr& op : value->operands()) {
    operands.push_back(redirect_loads(op, out, index, acc, ok));
    changed |= !operands.back().same_as(op);
  }
  return changed ? value.with_operands(std::move(operands)) : value;
}

/// The loop variables of the loops under `s` down to the block, and the block;
/// null when `s` is not loops and memory-free guards around one block.
const BlockNode* block_below(const Stmt& s, std::vector<SymVar>& loop_vars) {
  if (const auto* loop = s.as<ForNode>()) {
    loop_vars.push_back(loop->loop_var);
    return block_below(loop->body, loop_vars);
  }
  if (const auto* guard = s.as<IfThenElseNode>()) {
    if (guard->else_case.defined() || reads_memory(guard->cond)) return nullptr;
    return block_below(guard->then_case, loop_vars);
  }
  return s.as<BlockNode>();
}

}  // namespace

std::vector<IterVar> fresh_spatial(const BlockNode& block, SymVarMap<SymExpr>& map) {
  std::vector<IterVar> out;
  for (const IterVar& iv : block.iter_vars) {
    if (iv.type != IterType::kSpatial) continue;
    SymVar v(iv.var.name(), iv.var.dtype());
    map.emplace(iv.var, v);
    out.push_back({v, iv.extent, IterType::kSpatial, iv.binding});
  }
  return out;
}

absl::StatusOr<const BufferStoreNode*> reduction_update(const BlockNode& block) {
  const auto* store = block.body.as<BufferStoreNode>();
  if (store == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("the body of block `", block.name, "` is not one store"));
  }
  for (const SymExpr& index : store->indices) {
    for (const IterVar& iv : block.iter_vars) {
      if (iv.type == IterType::kReduction && mentions_var(index, iv.var)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "block `", block.name, "` stores at an index of its reduction variable `", iv.var.name(), "`"));
      }
    }
  }
  return store;
}

bool same_indices(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!structural_equal(a[i], b[i])) return false;
  }
  return true;
}

absl::StatusOr<const BufferStoreNode*> reduction_bound_inside(const BlockNode& block,
                                                              const std::function<bool(const SymVar&)>& inside,
                                                              const std::function<bool(const SymVar&)>& outside,
                                                              std::string_view inside_text,
                                                              std::string_view outside_text) {
  auto any_var = [](const SymExpr& e, const std::function<bool(const SymVar&)>& pred) {
    bool found = false;
    for_each_var(e, [&](const SymVar& v) { found = found || pred(v); });
    return found;
  };
  bool has_reduction = false;
  for (const IterVar& iv : block.iter_vars) {
    if (iv.type == IterType::kSpatial) {
      if (any_var(iv.binding, inside)) {
        return absl::FailedPreconditionError(absl::StrCat("block `", block.name, "` binds its spatial variable `",
                                                          iv.var.name(), "` to ", std::string(inside_text)));
      }
      continue;
    }
    has_reduction = true;
    if (any_var(iv.binding, outside)) {
      return absl::FailedPreconditionError(absl::StrCat("block `", block.name, "` binds its reduction variable `",
                                                        iv.var.name(), "` to ", std::string(outside_text),
                                                        " (its init would run more than once)"));
    }
  }
  if (!has_reduction) {
    return absl::FailedPreconditionError(absl::StrCat("block `", block.name, "` has no reduction variable"));
  }
  return reduction_update(block);
}

absl::StatusOr<Expr> cache_local_loop(const Expr& func, const LoopRef& loop) {
  auto refuse = [&](const std::string& why) { return loop_error(func, "cache_local", loop.name, why); };
  std::vector<SymVar> inner_vars{loop.node->loop_var};
  const BlockNode* block = block_below(loop.node->body, inner_vars);
  if (block == nullptr) return refuse("its body is not loops around one compute block");
  auto inside = [&](const SymVar& v) {
    for (const SymVar& w : inner_vars) {
      if (w.id() == v.id()) return true;
    }
    return false;
  };
  absl::StatusOr<const BufferStoreNode*> the_store = reduction_bound_inside(
      *block, inside, [&](const SymVar& v) { return !inside(v); }, "it or a loop under it", "a loop outside it");
  if (!the_store.ok()) return refuse(std::string(the_store.status().message()));
  const BufferStoreNode* store = *the_store;
  const Buffer& out = store->buffer;
  const Buffer acc(block->name + "_acc", out.dtype(), {SymExpr(1)}, {}, BufferScope::kLocal);
  const SymExpr acc0 = buffer_load(acc, {SymExpr(0)});
  bool ok = true;
  const SymExpr update = redirect_loads(store->value, out, store->indices, acc, ok);
  if (!ok) return refuse(absl::StrCat("block `", block->name, "` loads `", out.name(), "` at another index"));

  SymExpr start = buffer_load(out, store->indices);
  if (block->init.defined()) {
    const auto* init = block->init.as<BufferStoreNode>();
    if (init == nullptr || init->buffer.get() != out.get() || !same_indices(init->indices, store->indices)) {
      return refuse(absl::StrCat("the init of block `", block->name, "` is not one store to the element it reduces into"));
    }
    start = redirect_loads(init->value, out, store->indices, acc, ok);
    if (!ok) return refuse(absl::StrCat("the init of block `", block->name, "` loads `", out.name(), "`"));
    // The init runs when every reduction variable is 0; hoisted before the loop, it reads them
    // as 0 (an init may mention them: `select(vk == 0, 0, 99)`).
    SymVarMap<SymExpr> at_zero;
    for (const IterVar& iv : block->iter_vars) {
      if (iv.type == IterType::kReduction) at_zero[iv.var] = SymExpr::int_imm(0, iv.var.dtype());
    }
    start = substitute(start, at_zero);
  }
  SymVarMap<SymExpr> init_map, write_map;
  std::vector<IterVar> init_vars = fresh_spatial(*block, init_map);
  std::vector<IterVar> write_vars = fresh_spatial(*block, write_map);
  std::vector<SymExpr> write_index;
  for (const SymExpr& index : store->indices) write_index.push_back(substitute(index, write_map));
  Stmt init_block = make_block(block->name + "_init", init_vars, Stmt(),
                               make_store(acc, {SymExpr(0)}, substitute(start, init_map)));
  Stmt update_block = make_block(block->name, block->iter_vars, Stmt(), make_store(acc, {SymExpr(0)}, update));
  Stmt write_block = make_block(block->name + "_write", write_vars, Stmt(), make_store(out, write_index, acc0));
  // The block is found again by identity under the loop.
  Stmt reduction = replace_in(loop.stmt, block, update_block);
  Stmt result = make_allocate(acc, make_seq({init_block, reduction, write_block}));
  return replace_stmt(func, loop.node, result);
}

absl::StatusOr<Expr> cache_local(const Expr& func, std::string_view loop) {
  absl::StatusOr<LoopRef> ref = find_loop(func, loop);
  if (!ref.ok()) return ref.status();
  return cache_local_loop(func, *ref);
}

}  // namespace relax::transform::schedule
