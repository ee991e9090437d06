// The nest helpers of the default schedules (nests.h).
#include "transform/schedule/nests.h"

#include "relax/shape/sym_expr_search.h"
#include "transform/schedule/matmul_schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {

/// The loop variables of each nest: loops that no loop encloses, with the
/// perfectly nested loops under each.
std::optional<KernelNests> kernel_nests(const Expr& func) {
  const auto* node = func.as<PrimFuncNode>();
  if (node == nullptr) return std::nullopt;
  KernelNests k;
  k.pattern = op_pattern_of(*node).value_or(analyze_op_pattern(*node));
  if (k.pattern == OpPattern::kOpaque) return std::nullopt;
  collect_nests(node->body, k.nests);
  for (const std::vector<SymVar>& chain : k.nests) k.has_matmul = k.has_matmul || match_matmul(func, chain).has_value();
  return k;
}

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

std::optional<RowNest> row_nest(const Expr& func, const std::vector<SymVar>& chain) {
  absl::StatusOr<LoopRef> innermost = find_loop_var(func, chain.back());
  if (!innermost.ok()) return std::nullopt;
  const auto* block = innermost->node->body.as<BlockNode>();
  if (block == nullptr) return std::nullopt;
  size_t first_reduction = chain.size();
  for (size_t i = 0; i < chain.size(); ++i) {
    bool spatial = false, reduction = false;
    for (const IterVar& iv : block->iter_vars) {
      if (mentions_var(iv.binding, chain[i])) (iv.type == IterType::kSpatial ? spatial : reduction) = true;
    }
    if (spatial && reduction) return std::nullopt;
    if (reduction && first_reduction == chain.size()) first_reduction = i;
    if (first_reduction < i && spatial) return std::nullopt;
  }
  if (first_reduction == chain.size()) return RowNest{chain, chain.size() - 1, false};
  return RowNest{chain, first_reduction, true};
}

std::optional<Expr> merge_rows(const Expr& func, const std::vector<SymVar>& into, const RowNest& from) {
  if (into.empty() || into.size() != from.rows) return std::nullopt;
  Expr out = func;
  for (size_t d = 0; d < into.size(); ++d) {
    absl::StatusOr<LoopRef> a = find_loop_var(out, into[d]);
    absl::StatusOr<LoopRef> b = find_loop_var(out, from.chain[d]);
    if (!a.ok() || !b.ok()) return std::nullopt;
    absl::StatusOr<Expr> merged = fuse_sibling_loops(out, *a, *b);
    if (!merged.ok()) return std::nullopt;
    out = *merged;
  }
  return out;
}

std::vector<RowGroup> group_rows(Expr* func) {
  std::vector<std::vector<SymVar>> chains;
  collect_nests(func->as<PrimFuncNode>()->body, chains);
  std::vector<RowGroup> groups;
  for (const std::vector<SymVar>& chain : chains) {
    std::optional<RowNest> nest = row_nest(*func, chain);
    if (!nest) {
      groups.push_back({});  // a barrier: nothing merges across it
      continue;
    }
    if (!groups.empty()) {
      if (std::optional<Expr> merged = merge_rows(*func, groups.back().rows, *nest)) {
        *func = *merged;
        groups.back().members.push_back(*nest);
        continue;
      }
    }
    groups.push_back({std::vector<SymVar>(nest->chain.begin(), nest->chain.begin() + nest->rows), {*nest}});
  }
  return groups;
}

}  // namespace relax::transform::schedule
