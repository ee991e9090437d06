// Nesting depth of IR trees without recursion (nesting.h).
//
// One post-order walk per family with an explicit stack and a memo of the
// depth of each node met (a JSON document may share a node many times, and
// a DAG must not be walked once per path). The stack never holds more than
// limit + 1 frames: a path that long already answers the question.
#include "ir/nesting.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "relax/support/limits.h"

namespace relax::detail {
namespace {

template <typename Handle, typename ChildrenFn>
int tree_depth(const Handle& root, int limit, ChildrenFn children) {
  if (!root.defined()) return 0;
  struct Frame {
    Handle node;
    std::vector<Handle> kids;
    size_t next = 0;
    int deepest = 0;  ///< the deepest child so far
  };
  absl::flat_hash_map<const void*, int> memo;
  std::vector<Frame> stack;
  stack.push_back(Frame{root, children(root)});
  int result = 0;
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next < top.kids.size()) {
      Handle kid = top.kids[top.next++];
      if (!kid.defined()) continue;
      auto it = memo.find(kid.get());
      if (it != memo.end()) {
        top.deepest = std::max(top.deepest, it->second);
        continue;
      }
      if (static_cast<int>(stack.size()) > limit) return limit + 1;
      std::vector<Handle> grandkids = children(kid);
      stack.push_back(Frame{std::move(kid), std::move(grandkids)});
      continue;
    }
    const int depth = top.deepest + 1;
    memo.emplace(top.node.get(), depth);
    stack.pop_back();
    if (stack.empty()) {
      result = depth;
    } else {
      stack.back().deepest = std::max(stack.back().deepest, depth);
    }
  }
  return result;
}

std::vector<Stmt> stmt_children(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kFor:
      return {s.as<ForNode>()->body};
    case StmtKind::kSeq:
      return s.as<SeqStmtNode>()->stmts;
    case StmtKind::kIfThenElse: {
      const auto* n = s.as<IfThenElseNode>();
      return {n->then_case, n->else_case};
    }
    case StmtKind::kLetStmt:
      return {s.as<LetStmtNode>()->body};
    case StmtKind::kAllocate:
      return {s.as<AllocateNode>()->body};
    case StmtKind::kBlock: {
      const auto* n = s.as<BlockNode>();
      return {n->init, n->body};
    }
    case StmtKind::kBufferStore:
    case StmtKind::kEvaluate:
    case StmtKind::kExternCall:
      return {};
  }
  return {};
}

std::vector<Expr> expr_children(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kTuple:
      return e.as<TupleNode>()->fields;
    case ExprKind::kTupleGetItem:
      return {e.as<TupleGetItemNode>()->tuple};
    case ExprKind::kCall: {
      const auto* n = e.as<CallNode>();
      std::vector<Expr> out = {n->callee};
      out.insert(out.end(), n->args.begin(), n->args.end());
      return out;
    }
    case ExprKind::kIf: {
      const auto* n = e.as<IfNode>();
      return {n->cond, n->then_branch, n->else_branch};
    }
    case ExprKind::kSeqExpr: {
      const auto* n = e.as<SeqExprNode>();
      std::vector<Expr> out;
      for (const BindingBlock& block : n->blocks) {
        for (const Binding& b : block.bindings) {
          out.push_back(b.var);
          out.push_back(b.value);
        }
      }
      out.push_back(n->body);
      return out;
    }
    case ExprKind::kFunction: {
      const auto* n = e.as<FunctionNode>();
      std::vector<Expr> out(n->params.begin(), n->params.end());
      out.push_back(n->body);
      return out;
    }
    default:
      return {};
  }
}

std::vector<StructInfo> sinfo_children(const StructInfo& s) {
  if (const auto* t = s.as<TupleStructInfoNode>()) return t->fields;
  if (const auto* f = s.as<FuncStructInfoNode>()) {
    std::vector<StructInfo> out = f->params.value_or(std::vector<StructInfo>{});
    out.push_back(f->ret);
    return out;
  }
  return {};
}

// The annotations met in a graph function: every expression's and every
// variable's, and match_cast patterns.
std::vector<StructInfo> annotations_of(const Expr& func) {
  std::vector<StructInfo> out;
  absl::flat_hash_map<const void*, bool> seen;
  std::vector<Expr> stack = {func};
  while (!stack.empty()) {
    Expr e = std::move(stack.back());
    stack.pop_back();
    if (!e.defined() || !seen.emplace(e.get(), true).second) continue;
    if (e.struct_info().defined()) out.push_back(e.struct_info());
    if (const auto* seq = e.as<SeqExprNode>()) {
      for (const BindingBlock& block : seq->blocks) {
        for (const Binding& b : block.bindings) {
          if (b.is_match_cast) out.push_back(b.cast_sinfo);
        }
      }
    }
    if (const auto* fn = e.as<FunctionNode>()) out.push_back(fn->ret);
    for (Expr& kid : expr_children(e)) stack.push_back(std::move(kid));
  }
  return out;
}

}  // namespace

int stmt_depth(const Stmt& s, int limit) { return tree_depth(s, limit, stmt_children); }
int expr_depth(const Expr& e, int limit) { return tree_depth(e, limit, expr_children); }
int sinfo_depth(const StructInfo& s, int limit) { return tree_depth(s, limit, sinfo_children); }

std::optional<std::string> nesting_violation(const Expr& item) {
  const int limit = kMaxNestingDepth;
  if (const auto* prim = item.as<PrimFuncNode>()) {
    if (stmt_depth(prim->body, limit) > limit) {
      return absl::StrCat("statements nest deeper than ", limit, " levels");
    }
    return std::nullopt;
  }
  if (expr_depth(item, limit) > limit) {
    return absl::StrCat("expressions nest deeper than ", limit, " levels");
  }
  for (const StructInfo& s : annotations_of(item)) {
    if (sinfo_depth(s, limit) > limit) {
      return absl::StrCat("annotations nest deeper than ", limit, " levels");
    }
  }
  return std::nullopt;
}

}  // namespace relax::detail
