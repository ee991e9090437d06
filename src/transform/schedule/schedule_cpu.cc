// The default CPU schedule of a kernel (schedule::schedule_cpu, relax/transform/schedule.h).
//
// Chosen from the kernel's op_pattern (the attribute annotate-op-pattern
// writes; analyze_op_pattern when it is missing), nest by nest. A nest is a
// chain of perfectly nested loops that no other loop encloses, around one
// compute block:
//   - spatial nest (the block has no reduction variable), in a kernel that is
//     elementwise, broadcast, injective or a reduction (the last stage of a
//     softmax): the loops but the innermost fused into one parallel loop (the
//     rows), the innermost vectorized -- split by the vector width first, with
//     its tail check, unless its extent is a constant that is no multiple of
//     the width (then the compiler's own remainder loop is the tail). A nest of
//     one loop is split by the width: its outer part parallel, its inner part
//     vectorized.
//   - reduction nest (reduction kernels only): spatial loops around reduction
//     loops; the reduction accumulates in a local variable (cache_local, when
//     it applies: one output element per block) and the spatial loops are
//     fused into one parallel loop. The reduction loop
//     stays serial: `#pragma omp simd` without a reduction clause must not
//     carry a dependence, and reassociating a float reduction (an rfactor into
//     vector lanes) is not done here.
// Every step is a primitive with its legality checks; a nest where a step does
// not apply keeps what it had before that nest (each primitive keeps values,
// so nothing is left half-correct). A nest that computes a matmul (read off
// its loops by match_matmul, in a kernel of any pattern but opaque) gets the
// register-blocked matmul schedule of matmul_schedule.cc instead. Opaque
// kernels are returned as they are, as are the other nests of kernels that
// are neither elementwise-like nor reductions.
#include <optional>

#include "absl/strings/str_cat.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/matmul_schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

/// The loop variables of each nest: loops that no loop encloses, with the
/// perfectly nested loops under each.
void collect_nests(const Stmt& s, std::vector<std::vector<SymVar>>& nests) {
  if (!s.defined()) return;
  if (const auto* loop = s.as<ForNode>()) {
    std::vector<SymVar> chain{loop->loop_var};
    const ForNode* inner = loop;
    while ((inner = inner->body.as<ForNode>()) != nullptr) chain.push_back(inner->loop_var);
    nests.push_back(std::move(chain));
    return;
  }
  if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->stmts) collect_nests(x, nests);
  } else if (const auto* alloc = s.as<AllocateNode>()) {
    collect_nests(alloc->body, nests);
  } else if (const auto* let = s.as<LetStmtNode>()) {
    collect_nests(let->body, nests);
  } else if (const auto* branch = s.as<IfThenElseNode>()) {
    collect_nests(branch->then_case, nests);
    collect_nests(branch->else_case, nests);
  }
}

absl::StatusOr<Expr> with_kind(const Expr& func, const SymVar& var, ForKind kind) {
  absl::StatusOr<LoopRef> loop = find_loop_var(func, var);
  if (!loop.ok()) return loop.status();
  return set_loop_kind(func, *loop, kind);
}

/// The loops of `vars` (perfectly nested, outermost first) fused into one.
absl::StatusOr<Expr> fuse_all(const Expr& func, const std::vector<SymVar>& vars, SymVar* fused) {
  Expr out = func;
  SymVar current = vars[0];
  for (size_t i = 1; i < vars.size(); ++i) {
    absl::StatusOr<LoopRef> outer = find_loop_var(out, current);
    if (!outer.ok()) return outer.status();
    absl::StatusOr<LoopRef> inner = find_loop_var(out, vars[i]);
    if (!inner.ok()) return inner.status();
    absl::StatusOr<Expr> next = fuse_loops(out, *outer, *inner, &current);
    if (!next.ok()) return next.status();
    out = *next;
  }
  *fused = current;
  return out;
}

/// The innermost loop of a nest vectorized (split first when useful). When
/// `outer_parallel`, the split's outer part is made parallel.
absl::StatusOr<Expr> vectorize_innermost(const Expr& func, const SymVar& var, int64_t lanes, bool outer_parallel) {
  absl::StatusOr<LoopRef> loop = find_loop_var(func, var);
  if (!loop.ok()) return loop.status();
  std::optional<int64_t> extent = loop->node->extent.as_const();
  if (extent && (*extent <= lanes || *extent % lanes != 0) && !outer_parallel) {
    return set_loop_kind(func, *loop, ForKind::kVectorized);
  }
  SymVar outer("outer"), inner("inner");  // set by split_loop
  absl::StatusOr<Expr> out = split_loop(func, *loop, lanes, &outer, &inner);
  if (!out.ok()) return out.status();
  out = with_kind(*out, inner, ForKind::kVectorized);
  if (out.ok() && outer_parallel) out = with_kind(*out, outer, ForKind::kParallel);
  return out;
}

absl::StatusOr<Expr> schedule_spatial(const Expr& func, const std::vector<SymVar>& chain, int64_t lanes) {
  if (chain.size() == 1) return vectorize_innermost(func, chain[0], lanes, /*outer_parallel=*/true);
  SymVar rows("rows");  // set by fuse_all
  absl::StatusOr<Expr> out = fuse_all(func, std::vector<SymVar>(chain.begin(), chain.end() - 1), &rows);
  if (out.ok()) out = with_kind(*out, rows, ForKind::kParallel);
  if (out.ok()) out = vectorize_innermost(*out, chain.back(), lanes, /*outer_parallel=*/false);
  return out;
}

absl::StatusOr<Expr> schedule_reduction(const Expr& func, const std::vector<SymVar>& chain, size_t first_reduction) {
  absl::StatusOr<LoopRef> reduction = find_loop_var(func, chain[first_reduction]);
  if (!reduction.ok()) return reduction.status();
  // A reduction cache_local refuses (several outputs, as an argmax) keeps its
  // form; its rows are still independent.
  absl::StatusOr<Expr> out = cache_local_loop(func, *reduction);
  if (!out.ok()) out = func;
  if (first_reduction == 0) return out;
  SymVar rows("rows");  // set by fuse_all
  out = fuse_all(*out, std::vector<SymVar>(chain.begin(), chain.begin() + first_reduction), &rows);
  if (out.ok()) out = with_kind(*out, rows, ForKind::kParallel);
  return out;
}

/// The nest's matmul schedule (matmul_schedule.h); FailedPrecondition when it is no matmul.
absl::StatusOr<Expr> schedule_matmul_nest(const Expr& func, const std::vector<SymVar>& chain, int64_t lanes) {
  std::optional<MatmulNest> matmul = match_matmul(func, chain);
  if (!matmul) return absl::FailedPreconditionError("not a matmul");
  MatmulTiles tiles;
  tiles.lanes = lanes;
  tiles.cols = 2 * lanes;
  return schedule_matmul(func, *matmul, tiles);
}

absl::StatusOr<Expr> schedule_nest(const Expr& func, const std::vector<SymVar>& chain, bool reductions, int64_t lanes) {
  if (absl::StatusOr<Expr> matmul = schedule_matmul_nest(func, chain, lanes); matmul.ok()) return matmul;
  absl::StatusOr<LoopRef> innermost = find_loop_var(func, chain.back());
  if (!innermost.ok()) return innermost.status();
  const auto* block = innermost->node->body.as<BlockNode>();
  if (block == nullptr) return absl::FailedPreconditionError("not loops around one block");
  // The first loop bound to a reduction variable; the loops before it must be
  // bound to spatial variables only, the loops from it on to reduction ones.
  size_t first_reduction = chain.size();
  for (size_t i = 0; i < chain.size(); ++i) {
    bool spatial = false, reduction = false;
    for (const IterVar& iv : block->iter_vars) {
      if (mentions_var(iv.binding, chain[i])) (iv.type == IterType::kSpatial ? spatial : reduction) = true;
    }
    if (spatial && reduction) return absl::FailedPreconditionError("a loop bound to both kinds");
    if (reduction && first_reduction == chain.size()) first_reduction = i;
    if (first_reduction < i && spatial) return absl::FailedPreconditionError("a spatial loop inside a reduction");
  }
  if (first_reduction == chain.size()) return schedule_spatial(func, chain, lanes);
  if (!reductions) return absl::FailedPreconditionError("a reduction outside a reduction kernel");
  return schedule_reduction(func, chain, first_reduction);
}

}  // namespace

Expr schedule_cpu(const Expr& func, int64_t vector_lanes) {
  const auto* node = func.as<PrimFuncNode>();
  if (node == nullptr || vector_lanes < 1) return func;
  const OpPattern pattern = op_pattern_of(*node).value_or(analyze_op_pattern(*node));
  if (pattern == OpPattern::kOpaque) return func;
  // Kernels of the matmul class (kOutputElementwiseFusible) get only their
  // matmul nests and elementwise epilogues scheduled.
  const bool elementwise_like = pattern == OpPattern::kElementwise || pattern == OpPattern::kBroadcast ||
                                pattern == OpPattern::kInjective || pattern == OpPattern::kReduction;
  std::vector<std::vector<SymVar>> nests;
  collect_nests(node->body, nests);
  Expr out = func;
  for (const std::vector<SymVar>& chain : nests) {
    absl::StatusOr<Expr> scheduled =
        elementwise_like ? schedule_nest(out, chain, pattern == OpPattern::kReduction, vector_lanes)
                         : schedule_matmul_nest(out, chain, vector_lanes);
    if (scheduled.ok()) out = *scheduled;
  }
  return out;
}

}  // namespace relax::transform::schedule
