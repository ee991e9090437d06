// The inits of reductions over an empty extent (relax/ir/empty_reduction.h).
#include "relax/ir/empty_reduction.h"

#include <vector>

#include "relax/shape/sym_expr_search.h"

namespace relax {
namespace {

// Where loop variable `v` is used in `s`: by a spatial iteration variable's
// binding (or anywhere but a binding: a store's index, a let), and whether it
// feeds a reduction iteration variable of a block that has an init.
struct LoopUse {
  bool other = false;
  bool reduction_with_init = false;
};

void find_uses(const Stmt& s, const SymVar& v, LoopUse& use) {
  if (!s.defined() || use.other) return;
  switch (s.kind()) {
    case StmtKind::kFor: {
      const auto* node = s.as<ForNode>();
      if (mentions_var(node->min, v) || mentions_var(node->extent, v)) use.other = true;
      return find_uses(node->body, v, use);
    }
    case StmtKind::kSeq:
      for (const Stmt& x : s.as<SeqStmtNode>()->stmts) find_uses(x, v, use);
      return;
    case StmtKind::kIfThenElse: {
      // A condition may mention it (the tail guard of a split reduction loop).
      find_uses(s.as<IfThenElseNode>()->then_case, v, use);
      return find_uses(s.as<IfThenElseNode>()->else_case, v, use);
    }
    case StmtKind::kLetStmt: {
      const auto* node = s.as<LetStmtNode>();
      if (mentions_var(node->value, v)) use.other = true;
      return find_uses(node->body, v, use);
    }
    case StmtKind::kAllocate: return find_uses(s.as<AllocateNode>()->body, v, use);
    case StmtKind::kBlock: {
      // A block's statements use its iteration variables, not the loops'.
      const auto* node = s.as<BlockNode>();
      for (const IterVar& iv : node->iter_vars) {
        if (!mentions_var(iv.binding, v)) continue;
        if (iv.type != IterType::kReduction) {
          use.other = true;
        } else if (node->init.defined()) {
          use.reduction_with_init = true;
        }
      }
      return;
    }
    case StmtKind::kBufferStore:
    case StmtKind::kEvaluate:
    case StmtKind::kExternCall:
      // Outside a block: loop code a schedule wrote, which uses the variable
      // as it likes.
      use.other = true;
      return;
  }
}

// The inits of the blocks in `s` with the loops, lets, allocations and
// conditions around them (see "Empty reductions" above); nullopt when `s`
// holds no block with an init. `v` is the loop variable that runs no
// iteration: a condition that mentions it guards the reduction's tail, and
// the copy keeps its then-branch unconditionally.
std::optional<Stmt> inits_only(const Stmt& s, const SymVar& v) {
  if (!s.defined()) return std::nullopt;
  switch (s.kind()) {
    case StmtKind::kFor: {
      const auto* node = s.as<ForNode>();
      std::optional<Stmt> body = inits_only(node->body, v);
      if (!body) return std::nullopt;
      return make_for(node->loop_var, node->min, node->extent, ForKind::kSerial, *body);
    }
    case StmtKind::kSeq: {
      std::vector<Stmt> stmts;
      for (const Stmt& x : s.as<SeqStmtNode>()->stmts) {
        if (std::optional<Stmt> y = inits_only(x, v)) stmts.push_back(*y);
      }
      if (stmts.empty()) return std::nullopt;
      return stmts.size() == 1 ? stmts[0] : make_seq(std::move(stmts));
    }
    case StmtKind::kIfThenElse: {
      const auto* node = s.as<IfThenElseNode>();
      std::optional<Stmt> then_case = inits_only(node->then_case, v);
      if (mentions_var(node->cond, v)) return then_case;
      std::optional<Stmt> else_case = inits_only(node->else_case, v);
      if (!then_case && !else_case) return std::nullopt;
      return make_if_then_else(node->cond, then_case ? *then_case : make_seq({}),
                               else_case ? *else_case : Stmt());
    }
    case StmtKind::kLetStmt: {
      const auto* node = s.as<LetStmtNode>();
      std::optional<Stmt> body = inits_only(node->body, v);
      if (!body) return std::nullopt;
      return make_let(node->var, node->value, *body);
    }
    case StmtKind::kAllocate: {
      const auto* node = s.as<AllocateNode>();
      std::optional<Stmt> body = inits_only(node->body, v);
      if (!body) return std::nullopt;
      return make_allocate(node->buffer, *body);
    }
    case StmtKind::kBlock: {
      const auto* node = s.as<BlockNode>();
      if (!node->init.defined()) return std::nullopt;
      return make_block(node->name, node->iter_vars, node->init, make_seq({}));
    }
    case StmtKind::kBufferStore:
    case StmtKind::kEvaluate:
    case StmtKind::kExternCall: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Stmt> inits_when_empty(const ForNode& loop) {
  if (std::optional<int64_t> extent = loop.extent.as_const(); extent && *extent > 0) return std::nullopt;
  LoopUse use;
  find_uses(loop.body, loop.loop_var, use);
  if (use.other || !use.reduction_with_init) return std::nullopt;
  return inits_only(loop.body, loop.loop_var);
}

}  // namespace relax
