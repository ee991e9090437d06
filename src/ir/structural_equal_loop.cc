// Structural equality of loop-level IR: statements, PrimFuncs and buffers (the
// walker is described in structural_equal_walker.h).
#include <string>

#include "structural_equal_walker.h"

namespace relax::detail {

std::string diff_text(const Stmt& s) {
  if (!s.defined()) return "nothing";
  switch (s.kind()) {
    case StmtKind::kFor:
      return "For " + s.as<ForNode>()->loop_var.name();
    case StmtKind::kSeq:
      return "Seq";
    case StmtKind::kBufferStore:
      return "BufferStore " + s.as<BufferStoreNode>()->buffer.name();
    case StmtKind::kIfThenElse:
      return "IfThenElse";
    case StmtKind::kLetStmt:
      return "LetStmt " + s.as<LetStmtNode>()->var.name();
    case StmtKind::kAllocate:
      return "Allocate " + s.as<AllocateNode>()->buffer.name();
    case StmtKind::kEvaluate:
      return "Evaluate";
    case StmtKind::kBlock:
      return "Block " + s.as<BlockNode>()->name;
  }
  return "?";
}

bool EqualWalker::stmt(const Stmt& a, const Stmt& b) {
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) {
    if (!a.defined() && !b.defined()) return true;
    return fail(diff_text(a) + " vs " + diff_text(b));
  }
  switch (a.kind()) {
    case StmtKind::kFor: {
      const auto* x = a.as<ForNode>();
      const auto* y = b.as<ForNode>();
      if (!sym_field("min", x->min, y->min) || !sym_field("extent", x->extent, y->extent)) {
        return false;
      }
      if (x->for_kind != y->for_kind) {
        Step s(*this, "kind");
        return fail(std::string(for_kind_name(x->for_kind)) + " vs " +
                    std::string(for_kind_name(y->for_kind)));
      }
      {
        Step s(*this, "loop_var");
        if (!bind_sym(x->loop_var, y->loop_var)) return false;
      }
      return stmt_field("body", x->body, y->body);
    }
    case StmtKind::kSeq:
      return list("stmts", a.as<SeqStmtNode>()->stmts, b.as<SeqStmtNode>()->stmts, "statements",
                  [&](const Stmt& x, const Stmt& y) { return stmt(x, y); });
    case StmtKind::kBufferStore: {
      const auto* x = a.as<BufferStoreNode>();
      const auto* y = b.as<BufferStoreNode>();
      {
        Step s(*this, "buffer");
        if (!buffer_use(x->buffer, y->buffer)) return false;
      }
      return sym_list("indices", x->indices, y->indices) && sym_field("value", x->value, y->value);
    }
    case StmtKind::kIfThenElse: {
      const auto* x = a.as<IfThenElseNode>();
      const auto* y = b.as<IfThenElseNode>();
      return sym_field("cond", x->cond, y->cond) &&
             stmt_field("then_case", x->then_case, y->then_case) &&
             stmt_field("else_case", x->else_case, y->else_case);
    }
    case StmtKind::kLetStmt: {
      const auto* x = a.as<LetStmtNode>();
      const auto* y = b.as<LetStmtNode>();
      if (!sym_field("value", x->value, y->value)) return false;
      {
        Step s(*this, "var");
        if (!bind_sym(x->var, y->var)) return false;
      }
      return stmt_field("body", x->body, y->body);
    }
    case StmtKind::kAllocate: {
      const auto* x = a.as<AllocateNode>();
      const auto* y = b.as<AllocateNode>();
      {
        Step s(*this, "buffer");
        if (!buffer_def(x->buffer, y->buffer)) return false;
      }
      return stmt_field("body", x->body, y->body);
    }
    case StmtKind::kEvaluate:
      return sym_field("value", a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value);
    case StmtKind::kBlock:
      return block(*a.as<BlockNode>(), *b.as<BlockNode>());
  }
  return fail("unknown statement kind");
}

bool EqualWalker::bind_sym(const SymVar& a, const SymVar& b) {
  if (sym_inner(a, b, BindMode::kDefine)) return true;
  return fail(a.name() + " vs " + b.name() + " (bound at different places)");
}

bool EqualWalker::buffer_use(const Buffer& a, const Buffer& b) {
  return same_buffer(a.get(), b.get()) || fail("Buffer " + a.name() + " vs Buffer " + b.name());
}

bool EqualWalker::buffer_def(const Buffer& a, const Buffer& b) {
  if (a.dtype() != b.dtype() || a->scope != b->scope) {
    return fail("Buffer " + a.name() + " (" + a.dtype().to_string() + ", " +
                std::string(buffer_scope_name(a->scope)) + ") vs Buffer " + b.name() + " (" +
                b.dtype().to_string() + ", " + std::string(buffer_scope_name(b->scope)) + ")");
  }
  auto define_dims = [&](const SymExpr& x, const SymExpr& y) {
    return sym(x, y, BindMode::kDefine);
  };
  if (!list("shape", a.shape(), b.shape(), "dims", define_dims) ||
      !list("strides", a->strides, b->strides, "strides", define_dims)) {
    return false;
  }
  auto it = buf_fwd_.find(a.get());
  if (it != buf_fwd_.end()) return it->second == b.get() || buffer_use(a, b);
  if (buf_bwd_.contains(b.get())) return buffer_use(a, b);
  buf_fwd_[a.get()] = b.get();
  buf_bwd_[b.get()] = a.get();
  return true;
}

bool EqualWalker::prim_func(const PrimFuncNode& a, const PrimFuncNode& b) {
  prebind(detail::binding_sym_vars(a.params), detail::binding_sym_vars(b.params));
  if (!list("params", a.params, b.params, "parameters",
            [&](const PrimParam& x, const PrimParam& y) {
              if (x.buffer.has_value() != y.buffer.has_value()) {
                return fail(std::string(x.buffer ? "buffer" : "scalar") + " parameter vs " +
                            (y.buffer ? "buffer" : "scalar") + " parameter");
              }
              if (x.buffer) return buffer_def(*x.buffer, *y.buffer);
              return bind_sym(*x.scalar, *y.scalar);
            })) {
    return false;
  }
  {
    Step s(*this, "attrs");
    if (!attrs(a.attrs, b.attrs)) return false;
  }
  return stmt_field("body", a.body, b.body);
}

bool EqualWalker::block(const BlockNode& a, const BlockNode& b) {
  if (a.name != b.name) {
    Step s(*this, "name");
    return fail(a.name + " vs " + b.name);
  }
  if (!list("iter_vars", a.iter_vars, b.iter_vars, "iteration variables",
            [&](const IterVar& x, const IterVar& y) {
              if (x.type != y.type) {
                Step s(*this, "type");
                return fail(std::string(x.type == IterType::kSpatial ? "spatial" : "reduction") +
                            " vs " + (y.type == IterType::kSpatial ? "spatial" : "reduction"));
              }
              if (!sym_field("extent", x.extent, y.extent) ||
                  !sym_field("binding", x.binding, y.binding)) {
                return false;
              }
              Step s(*this, "var");
              return bind_sym(x.var, y.var);
            })) {
    return false;
  }
  return stmt_field("init", a.init, b.init) && stmt_field("body", a.body, b.body);
}

}  // namespace relax::detail
