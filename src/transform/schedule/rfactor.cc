// rfactor (relax/transform/schedule.h): a reduction split into vector lanes.
//
//   for k in range(m) {                      alloc sum_rf: Buffer[(16,), float32, local] {
//     block sum(vi = spatial(n, i),            for k_l in range(16) vectorized {
//               vk = reduce(m, k)) {             block sum_rf_init(vl = spatial(16, k_l)) { sum_rf[vl] = 0f32 }
//       init { B[vi] = 0f32 }                  }
//       B[vi] = B[vi] + A[vi, vk]              for k_o in range(floordiv(m, 16)) {
//     }                                 =>       for k_l in range(16) vectorized {
//   }                                              block sum_rf(vi = spatial(n, i), vl = spatial(16, k_l),
//                                                               vo = reduce(floordiv(m, 16), k_o)) {
//                                                  sum_rf[vl] = sum_rf[vl] + A[vi, vo * 16 + vl]
//                                                } } }
//                                              alloc sum_acc: Buffer[(1,), float32, local] {
//                                                block sum_init(vi = spatial(n, i)) { sum_acc[0] = 0f32 }
//                                                for k_c in range(16) unrolled {
//                                                  block sum_combine(vl = reduce(16, k_c)) { sum_acc[0] = sum_acc[0] + sum_rf[vl] } }
//                                                for k_t in range(floormod(m, 16)) {
//                                                  block sum(vi = ..., vk = reduce(m, floordiv(m, 16) * 16 + k_t)) {
//                                                    sum_acc[0] = sum_acc[0] + A[vi, vk] } }
//                                                block sum_write(vi = spatial(n, i)) { B[vi] = sum_acc[0] }
//                                            } }
//
// Each lane of the local buffer `<block>_rf` accumulates every L-th element
// from the combiner's identity; the lanes do not depend on each other, so the
// lane loop is vectorized (`#pragma omp simd` is correct on it: it carries no
// dependence). The partials are then combined in lane order after the block's
// init (or the output element's current value when the block has none), the
// elements of the tail (m mod L of them) after them, and the result is
// written once.
//
// The combiner is read off the update, never off names: the block's body must
// be one store `out[idx] = c(out[idx], x)` or `c(x, out[idx])` with c one of
// +, *, min, max and x free of loads of `out`; its identity follows from c and
// the dtype (0, 1, the dtype's largest or smallest value; infinities for
// floats). Integer sums, products (wrapping) and every min and max give the
// same values as the loop they replace; float sums and products are
// reassociated, so they may differ in the last bits.
//
// Conditions (each refused with a message naming the loop), as for cache_local
// and in addition: the loop's body is the block itself (fuse nested reduction
// loops first), every reduction variable of the block is bound to the loop
// alone, its init (if any) is one store to the element it reduces into and
// does not load the output, and the lane count is at least 2.
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

bool loads_buffer(const SymExpr& e, const Buffer& buffer) {
  return e.defined() && any_subexpr(e, [&](const SymExpr& x) {
           return x.kind() == SymKind::kBufferLoad && x->buffer_node() == buffer.get();
         });
}

bool is_load_of(const SymExpr& e, const Buffer& buffer, const std::vector<SymExpr>& index) {
  if (e.kind() != SymKind::kBufferLoad || e->buffer_node() != buffer.get()) return false;
  return same_indices(std::vector<SymExpr>(e->operands().begin(), e->operands().end()), index);
}

/// The identity of `kind` over `dtype`: x = kind(identity, x) for every x.
std::optional<SymExpr> identity_of(SymKind kind, DataType dtype) {
  if (dtype.lanes != 1 || dtype.is_bool()) return std::nullopt;
  if (kind == SymKind::kAdd) return dtype.is_float() ? SymExpr::float_imm(0, dtype) : SymExpr::int_imm(0, dtype);
  if (kind == SymKind::kMul) return dtype.is_float() ? SymExpr::float_imm(1, dtype) : SymExpr::int_imm(1, dtype);
  const bool is_max = kind == SymKind::kMax;
  if (!is_max && kind != SymKind::kMin) return std::nullopt;
  const double inf = std::numeric_limits<double>::infinity();
  if (dtype.is_float()) return SymExpr::float_imm(is_max ? -inf : inf, dtype);
  if (!dtype.is_int() || dtype.bits > 64) return std::nullopt;
  if (dtype.code == DataType::Code::kUInt) {
    if (is_max) return SymExpr::int_imm(0, dtype);
    if (dtype.bits == 64) return std::nullopt;  // 2^64 - 1 does not fit an int64 constant
    return SymExpr::int_imm((int64_t{1} << dtype.bits) - 1, dtype);
  }
  const int64_t largest = dtype.bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (dtype.bits - 1)) - 1;
  return SymExpr::int_imm(is_max ? -largest - 1 : largest, dtype);
}

/// Whether `e` is 0, or floordiv or floormod of 0 (a fused loop's first
/// iteration: the divisor is not 0 where the loop runs at all).
bool is_zero(const SymExpr& e) {
  if (e.as_const() == std::optional<int64_t>(0)) return true;
  return (e.kind() == SymKind::kFloorDiv || e.kind() == SymKind::kFloorMod) && is_zero(e.operand(0));
}

/// A printed loop name without its occurrence suffix (`j#2` -> `j`).
std::string stem(const std::string& name) { return name.substr(0, name.find('#')); }

}  // namespace

absl::StatusOr<Expr> rfactor_loop(const Expr& func, const LoopRef& loop, int64_t lanes, SymVar* lane_var) {
  auto refuse = [&](const std::string& why) { return loop_error(func, "rfactor", loop.name, why); };
  if (lanes < 2) return refuse(absl::StrCat("the lane count must be >= 2, got ", lanes));
  const ForNode& node = *loop.node;
  const SymVar& k = node.loop_var;
  const DataType kt = k.dtype();
  if (!kt.is_int()) return refuse("its variable is not an integer");
  const auto* block = node.body.as<BlockNode>();
  if (block == nullptr) return refuse("its body is not one compute block");
  auto is_k = [&](const SymVar& v) { return v.id() == k.id(); };
  auto other_loop = [&](const SymVar& v) {
    for (const LoopRef& other : all_loops(func)) {
      if (other.node != loop.node && other.node->loop_var.id() == v.id()) return true;
    }
    return false;
  };
  absl::StatusOr<const BufferStoreNode*> the_store =
      reduction_bound_inside(*block, is_k, other_loop, "it", "another loop");
  if (!the_store.ok()) return refuse(std::string(the_store.status().message()));
  const BufferStoreNode* store = *the_store;
  const Buffer& out = store->buffer;
  const SymExpr& update = store->value;
  // The combiner and the element combined: c(out[idx], x) or c(x, out[idx]).
  const SymKind kind = update.kind();
  std::optional<SymExpr> identity = identity_of(kind, out.dtype());
  SymExpr x;
  if (identity && update.num_operands() == 2) {
    if (is_load_of(update.operand(0), out, store->indices)) x = update.operand(1);
    else if (is_load_of(update.operand(1), out, store->indices)) x = update.operand(0);
  }
  if (!x.defined() || loads_buffer(x, out)) {
    return refuse(absl::StrCat("the update of block `", block->name, "` is not `", out.name(),
                               "[...] = c(", out.name(), "[...], x)` with c one of +, *, min, max over ",
                               out.dtype().to_string(), " and x free of `", out.name(), "`"));
  }
  auto combine = [&](const SymExpr& a, const SymExpr& b) { return SymExpr::make(kind, a, b); };
  SymExpr start = buffer_load(out, store->indices);
  if (block->init.defined()) {
    const auto* init = block->init.as<BufferStoreNode>();
    if (init == nullptr || init->buffer.get() != out.get() || !same_indices(init->indices, store->indices)) {
      return refuse(absl::StrCat("the init of block `", block->name, "` is not one store to the element it reduces into"));
    }
    if (loads_buffer(init->value, out)) return refuse(absl::StrCat("the init of block `", block->name, "` loads `", out.name(), "`"));
    // The init runs when every reduction variable is 0: in the first iteration, or never.
    for (const IterVar& iv : block->iter_vars) {
      if (iv.type != IterType::kReduction) continue;
      const SymExpr first_value = Analyzer().simplify(substitute(iv.binding, {{k, node.min}}));
      if (!is_zero(first_value)) {
        return refuse(absl::StrCat("block `", block->name, "` runs its init only when `", iv.var.name(),
                                   "` is 0, which its first iteration does not bind it to"));
      }
    }
    SymVarMap<SymExpr> at_zero;
    for (const IterVar& iv : block->iter_vars) {
      if (iv.type == IterType::kReduction) at_zero[iv.var] = SymExpr::int_imm(0, iv.var.dtype());
    }
    start = substitute(init->value, at_zero);
  }

  const std::string base = stem(loop.name);
  const DataType dtype = out.dtype();
  const SymExpr L = SymExpr::int_imm(lanes, kt);
  const SymExpr zero = SymExpr::int_imm(0, kt);
  Analyzer analyzer;
  const SymExpr main_count = analyzer.simplify(floordiv(node.extent, L));
  const SymExpr tail_count = analyzer.simplify(floormod(node.extent, L));
  const Buffer rf(block->name + "_rf", dtype, {SymExpr(lanes)}, {}, BufferScope::kLocal);
  const Buffer acc(block->name + "_acc", dtype, {SymExpr(1)}, {}, BufferScope::kLocal);
  const SymExpr acc0 = buffer_load(acc, {SymExpr(0)});
  std::vector<Stmt> steps;

  // The lanes start from the identity.
  SymVar init_lane(base + "_l", kt), init_vl("vl", kt);
  steps.push_back(make_for(init_lane, zero, L, ForKind::kVectorized,
                           make_block(block->name + "_rf_init", {{init_vl, L, IterType::kSpatial, init_lane}}, Stmt(),
                                      make_store(rf, {init_vl}, *identity))));
  // Lane l accumulates the elements k = min + o * L + l.
  if (main_count.as_const() != std::optional<int64_t>(0)) {
    SymVar outer(base + "_o", kt), lane(base + "_l", kt), vl("vl", kt), vo("vo", kt);
    SymVarMap<SymExpr> map;
    std::vector<IterVar> iters = fresh_spatial(*block, map);
    iters.push_back({vl, L, IterType::kSpatial, lane});
    iters.push_back({vo, main_count, IterType::kReduction, outer});
    const SymExpr at = SymExpr(vo) * L + vl;
    SymVarMap<SymExpr> k_map{{k, node.min.is_const(0) ? at : node.min + at}};
    for (const IterVar& iv : block->iter_vars) {
      if (iv.type == IterType::kReduction) map.emplace(iv.var, substitute(iv.binding, k_map));
    }
    const SymExpr lane_value = buffer_load(rf, {vl});
    Stmt body = make_block(block->name + "_rf", iters, Stmt(),
                           make_store(rf, {vl}, combine(lane_value, substitute(x, map))));
    steps.push_back(make_for(outer, zero, main_count, ForKind::kSerial, make_for(lane, zero, L, ForKind::kVectorized, body)));
    if (lane_var != nullptr) *lane_var = lane;
  }
  // The partials combined in lane order after the start, then the tail.
  std::vector<Stmt> finish;
  SymVarMap<SymExpr> init_map, write_map;
  std::vector<IterVar> init_iters = fresh_spatial(*block, init_map);
  finish.push_back(make_block(block->name + "_init", init_iters, Stmt(), make_store(acc, {SymExpr(0)}, substitute(start, init_map))));
  SymVar combine_lane(base + "_c", kt), cl("vl", kt);
  finish.push_back(make_for(combine_lane, zero, L, ForKind::kUnrolled,
                            make_block(block->name + "_combine", {{cl, L, IterType::kReduction, combine_lane}}, Stmt(),
                                       make_store(acc, {SymExpr(0)}, combine(acc0, buffer_load(rf, {cl}))))));
  if (tail_count.as_const() != std::optional<int64_t>(0)) {
    SymVar tail(base + "_t", kt);
    const SymExpr at = main_count * L + tail;
    SymVarMap<SymExpr> k_map{{k, node.min.is_const(0) ? at : node.min + at}};
    std::vector<IterVar> iters;
    for (const IterVar& iv : block->iter_vars) {
      iters.push_back({iv.var, iv.extent, iv.type, iv.type == IterType::kReduction ? substitute(iv.binding, k_map) : iv.binding});
    }
    finish.push_back(make_for(tail, zero, tail_count, ForKind::kSerial,
                              make_block(block->name, iters, Stmt(), make_store(acc, {SymExpr(0)}, combine(acc0, x)))));
  }
  std::vector<IterVar> write_iters = fresh_spatial(*block, write_map);
  std::vector<SymExpr> write_index;
  for (const SymExpr& index : store->indices) write_index.push_back(substitute(index, write_map));
  finish.push_back(make_block(block->name + "_write", write_iters, Stmt(), make_store(out, write_index, acc0)));
  steps.push_back(make_allocate(acc, make_seq(std::move(finish))));
  return replace_stmt(func, loop.node, make_allocate(rf, make_seq(std::move(steps))));
}

absl::StatusOr<Expr> rfactor(const Expr& func, std::string_view loop, int64_t lanes) {
  absl::StatusOr<LoopRef> ref = find_loop(func, loop);
  if (!ref.ok()) return ref.status();
  return rfactor_loop(func, *ref, lanes, nullptr);
}

}  // namespace relax::transform::schedule
