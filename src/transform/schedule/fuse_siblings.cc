// fuse_siblings (relax/transform/schedule.h): two loops that follow each other
// in a sequence made one.
//
//   for i in range(n) { max of row i }          for i in range(n) {
//   for i_1 in range(n) { sum of row i_1 }  =>    max of row i
//                                                 sum of row i
//                                               }
//
// so that a row read by both is read from memory once and from the cache the
// second time (softmax and the norms read their row three and two times).
//
// Legality: the loops have equal bounds, and every buffer that one of them
// stores into and both access is accessed, in every load and store of both
// loops (block iteration variables replaced by their bindings), with the
// loop's own variable as its index in one position d, the same for all. Then
// iteration v of either loop only touches elements whose index d is v: the
// second loop's iteration v reads only what the first wrote in its iteration
// v (which the merged loop has run before it) and nothing that a later
// iteration of the first loop writes, and the other way round. The merged
// loop is parallel when both were, else serial.
//
// localize_row_buffers (primitives.h) then gives each row its own
// one-element local copy of a top-level buffer that is only accessed inside
// the merged row loop at the row's own element (a softmax's row max and sum):
// the compiler sees a local that no store to the output can alias, keeps it in
// a register and vectorizes the loops that read it; and the kernel no longer
// needs the workspace.
//
// hoist_allocations (primitives.h) moves the allocations of a kernel's top
// level (outside every loop) around the whole of it, so that loops separated
// only by an allocation become neighbours in one sequence; it keeps values
// (an allocation is only visible inside its body, which the hoisting keeps
// inside the new one).
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/visitor.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

struct Access {
  std::vector<SymExpr> indices;  ///< block iteration variables replaced by their bindings
  bool store = false;
};

/// Every load and store under a statement, by buffer.
class AccessCollector : public StmtVisitor {
 public:
  void visit_block(const Stmt&, const BlockNode& node) override {
    for (const IterVar& iv : node.iter_vars) {
      visit_value(iv.binding);
      bindings_[iv.var] = substitute(iv.binding, bindings_);
    }
    visit_stmt(node.init);
    visit_stmt(node.body);
  }
  void visit_buffer_store(const Stmt& s, const BufferStoreNode& node) override {
    record(node.buffer.get(), node.indices, true);
    StmtVisitor::visit_buffer_store(s, node);
  }
  void visit_value(const SymExpr& value) override {
    if (!value.defined()) return;
    any_subexpr(value, [&](const SymExpr& e) {
      if (e.kind() == SymKind::kBufferLoad) {
        record(e->buffer_node(), std::vector<SymExpr>(e->operands().begin(), e->operands().end()), false);
      }
      return false;
    });
  }
  absl::flat_hash_map<const BufferNode*, std::vector<Access>> accesses;
  absl::flat_hash_map<const BufferNode*, std::string> names;

 private:
  void record(const BufferNode* buffer, const std::vector<SymExpr>& indices, bool store) {
    Access a{{}, store};
    for (const SymExpr& index : indices) a.indices.push_back(substitute(index, bindings_));
    accesses[buffer].push_back(std::move(a));
  }
  SymVarMap<SymExpr> bindings_;
};

bool stores_into(const std::vector<Access>& accesses) {
  for (const Access& a : accesses) {
    if (a.store) return true;
  }
  return false;
}

/// Whether every access has `var` itself as its index in position `d`.
bool indexed_by(const std::vector<Access>& accesses, size_t d, const SymVar& var) {
  for (const Access& a : accesses) {
    if (d >= a.indices.size() || !a.indices[d].is_var() || SymVar::from_expr(a.indices[d]).id() != var.id()) {
      return false;
    }
  }
  return true;
}

/// Replaces the neighbours `first`, `second` of a sequence by `merged`.
class NeighbourReplacer : public StmtMutator {
 public:
  NeighbourReplacer(const StmtNode* first, const StmtNode* second, Stmt merged)
      : first_(first), second_(second), merged_(std::move(merged)) {}
  Stmt visit_seq(const Stmt& s, const SeqStmtNode& node) override {
    for (size_t i = 0; i + 1 < node.stmts.size(); ++i) {
      if (node.stmts[i].get() != first_ || node.stmts[i + 1].get() != second_) continue;
      found = true;
      std::vector<Stmt> stmts(node.stmts.begin(), node.stmts.begin() + static_cast<std::ptrdiff_t>(i));
      stmts.push_back(merged_);
      stmts.insert(stmts.end(), node.stmts.begin() + static_cast<std::ptrdiff_t>(i + 2), node.stmts.end());
      return stmts.size() == 1 ? stmts[0] : make_seq(std::move(stmts));
    }
    return StmtMutator::visit_seq(s, node);
  }
  SymExpr visit_value(const SymExpr& value) override { return value; }
  bool found = false;

 private:
  const StmtNode* first_;
  const StmtNode* second_;
  Stmt merged_;
};

/// Every load and store of `from` made one of `to` at index 0.
class BufferRedirector : public StmtMutator {
 public:
  BufferRedirector(const Buffer& from, const Buffer& to) : from_(from), to_(to) {}
  Stmt visit_buffer_store(const Stmt& s, const BufferStoreNode& node) override {
    if (node.buffer.get() != from_.get()) return StmtMutator::visit_buffer_store(s, node);
    return make_store(to_, {SymExpr(0)}, visit_value(node.value));
  }
  SymExpr visit_value(const SymExpr& value) override {
    if (!value.defined()) return value;
    if (value.kind() == SymKind::kBufferLoad && value->buffer_node() == from_.get()) {
      return buffer_load(to_, {SymExpr(0)});
    }
    return StmtMutator::visit_value(value);
  }

 private:
  const Buffer& from_;
  const Buffer& to_;
};

void flatten(const Stmt& s, std::vector<Buffer>& allocs, std::vector<Stmt>& stmts) {
  if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->stmts) flatten(x, allocs, stmts);
  } else if (const auto* alloc = s.as<AllocateNode>()) {
    allocs.push_back(alloc->buffer);
    flatten(alloc->body, allocs, stmts);
  } else {
    stmts.push_back(s);
  }
}

}  // namespace

absl::StatusOr<Expr> fuse_sibling_loops(const Expr& func, const LoopRef& first, const LoopRef& second) {
  auto refuse = [&](const std::string& why) {
    return loop_error(func, "fuse_siblings", first.name, absl::StrCat("with `", second.name, "`: ", why));
  };
  const ForNode& a = *first.node;
  const ForNode& b = *second.node;
  if (!structural_equal(a.min, b.min) || !structural_equal(a.extent, b.extent)) {
    return refuse(absl::StrCat("their bounds differ (", a.min.to_string(), ", ", a.extent.to_string(), " and ",
                               b.min.to_string(), ", ", b.extent.to_string(), ")"));
  }
  if (a.loop_var.dtype() != b.loop_var.dtype()) return refuse("their variables' dtypes differ");
  AccessCollector in_a, in_b;
  in_a.visit_stmt(a.body);
  in_b.visit_stmt(b.body);
  for (const auto& [buffer, accesses_a] : in_a.accesses) {
    auto it = in_b.accesses.find(buffer);
    if (it == in_b.accesses.end()) continue;
    const std::vector<Access>& accesses_b = it->second;
    if (!stores_into(accesses_a) && !stores_into(accesses_b)) continue;
    const size_t rank = accesses_a.front().indices.size();
    bool ok = false;
    for (size_t d = 0; d < rank && !ok; ++d) {
      ok = indexed_by(accesses_a, d, a.loop_var) && indexed_by(accesses_b, d, b.loop_var);
    }
    if (!ok) {
      return refuse(absl::StrCat("a buffer that one stores into and both access is not indexed by the loop "
                                 "variable in one position in every access (`", buffer->name, "`)"));
    }
  }
  Stmt b_body = substitute_stmt(b.body, {{b.loop_var, SymExpr(a.loop_var)}});
  const ForKind kind = a.for_kind == ForKind::kParallel && b.for_kind == ForKind::kParallel ? ForKind::kParallel
                                                                                              : ForKind::kSerial;
  std::vector<Stmt> body;
  for (const Stmt& part : {a.body, b_body}) {
    if (const auto* seq = part.as<SeqStmtNode>()) body.insert(body.end(), seq->stmts.begin(), seq->stmts.end());
    else body.push_back(part);
  }
  Stmt merged = make_for(a.loop_var, a.min, a.extent, kind, make_seq(std::move(body)));
  NeighbourReplacer replacer(first.node, second.node, merged);
  Expr out = replacer.visit_prim_func(func);
  if (!replacer.found) return refuse("they are not neighbours in one sequence");
  return out;
}

absl::StatusOr<Expr> fuse_siblings(const Expr& func, std::string_view first, std::string_view second) {
  absl::StatusOr<LoopRef> a = find_loop(func, first);
  if (!a.ok()) return a.status();
  absl::StatusOr<LoopRef> b = find_loop(func, second);
  if (!b.ok()) return b.status();
  return fuse_sibling_loops(func, *a, *b);
}

Expr localize_row_buffers(const Expr& func, const std::vector<SymVar>& rows) {
  const auto* node = func.as<PrimFuncNode>();
  if (node == nullptr || rows.empty()) return func;
  std::vector<const AllocateNode*> top;
  for (Stmt s = node->body; s.as<AllocateNode>() != nullptr; s = s.as<AllocateNode>()->body) {
    top.push_back(s.as<AllocateNode>());
  }
  Expr out = func;
  for (const AllocateNode* alloc : top) {
    const Buffer& b = alloc->buffer;
    if (b.ndim() != rows.size()) continue;
    absl::StatusOr<LoopRef> loop = find_loop_var(out, rows.back());
    if (!loop.ok()) return out;
    AccessCollector everywhere, inside;
    everywhere.visit_stmt(out.as<PrimFuncNode>()->body);
    inside.visit_stmt(loop->node->body);
    auto all = everywhere.accesses.find(b.get());
    auto in_rows = inside.accesses.find(b.get());
    if (all == everywhere.accesses.end() || in_rows == inside.accesses.end() ||
        all->second.size() != in_rows->second.size()) {
      continue;
    }
    bool ok = true;
    for (size_t d = 0; d < rows.size() && ok; ++d) ok = indexed_by(in_rows->second, d, rows[d]);
    if (!ok) continue;
    const Buffer local(b.name(), b.dtype(), {SymExpr(1)}, {}, BufferScope::kLocal);
    BufferRedirector redirect(b, local);
    Stmt body = make_allocate(local, redirect.visit_stmt(loop->node->body));
    const ForNode& r = *loop->node;
    out = replace_stmt(out, loop->node, make_for(r.loop_var, r.min, r.extent, r.for_kind, body));
    // The allocation itself (found again: the kernel was rebuilt) is dropped.
    const auto* rebuilt = out.as<PrimFuncNode>();
    for (Stmt s = rebuilt->body; s.as<AllocateNode>() != nullptr; s = s.as<AllocateNode>()->body) {
      if (s.as<AllocateNode>()->buffer.get() == b.get()) {
        out = replace_stmt(out, s.get(), s.as<AllocateNode>()->body);
        break;
      }
    }
  }
  return out;
}

Expr hoist_allocations(const Expr& func) {
  const auto* node = func.as<PrimFuncNode>();
  if (node == nullptr) return func;
  std::vector<Buffer> allocs;
  std::vector<Stmt> stmts;
  flatten(node->body, allocs, stmts);
  if (allocs.empty()) return func;
  Stmt body = stmts.size() == 1 ? stmts[0] : make_seq(std::move(stmts));
  for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) body = make_allocate(*it, body);
  return replace_stmt(func, node->body.get(), body);
}

}  // namespace relax::transform::schedule
