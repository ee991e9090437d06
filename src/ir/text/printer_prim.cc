// The printer of the IR text format: PrimFuncs and their statements, as loop nests.
//
// Every statement that has a body prints it in braces, so nothing depends on
// indentation. A body that is a SeqStmt of several statements, none of them a
// SeqStmt, prints as those statements; any other SeqStmt prints as `seq { }`,
// which is exactly what the parser needs to rebuild the same tree.
#include "ir/text/printer_impl.h"
#include "ir/text/text_format.h"

namespace relax::text {
namespace {

std::string_view for_kind_suffix(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "";
    case ForKind::kParallel: return " parallel";
    case ForKind::kVectorized: return " vectorized";
    case ForKind::kUnrolled: return " unrolled";
  }
  return "";
}

// `: dtype` for a variable that is not int64 (the default of the text form).
std::string dtype_suffix(const SymVar& var) {
  return var.dtype() == DataType::int64() ? "" : ": " + var.dtype().to_string();
}

// Whether the statements of `body` print one a line without a `seq { }` around them.
bool prints_as_list(const Stmt& body) {
  const auto* seq = body.as<SeqStmtNode>();
  if (seq == nullptr || seq->stmts.size() == 1) return false;
  for (const Stmt& s : seq->stmts) {
    if (s.as<SeqStmtNode>() != nullptr) return false;
  }
  return true;
}

}  // namespace

void Printer::prim_func(const std::string* name, const PrimFuncNode& fn) {
  put(name != nullptr ? "prim_func " + global_name(*name) + "(" : "prim_func(");
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (i > 0) put(", ");
    const PrimParam& p = fn.params[i];
    if (p.buffer && p.buffer->defined()) {
      put(namer_.buffer(p.buffer->get()) + ": " + buffer_type(*p.buffer));
    } else if (p.scalar && p.scalar->defined()) {
      put(namer_.sym(*p.scalar) + ": " + p.scalar->dtype().to_string());
    } else {
      put("<undefined>");
    }
  }
  put(")");
  attrs_clause(fn.attrs);
  put(" ");
  stmt_block(fn.body);
}

std::string Printer::buffer_type(const Buffer& b) {
  std::string out = "Buffer[" + dims(b->shape) + ", " + b.dtype().to_string();
  if (!b->strides.empty()) out += ", strides=" + dims(b->strides);
  if (b->scope != BufferScope::kGlobal) out += ", " + std::string(buffer_scope_name(b->scope));
  return out + "]";
}

void Printer::stmt_block(const Stmt& body) {
  put("{");
  ++indent_;
  if (prints_as_list(body)) {
    for (const Stmt& s : body.as<SeqStmtNode>()->stmts) {
      newline();
      stmt(s);
    }
  } else if (body.defined()) {
    newline();
    stmt(body);
  }
  --indent_;
  newline();
  put("}");
}

void Printer::stmt(const Stmt& s) {
  if (!s.defined()) {
    put("<undefined>");
    return;
  }
  switch (s.kind()) {
    case StmtKind::kFor: {
      const auto* node = s.as<ForNode>();
      put("for " + namer_.sym(node->loop_var) + dtype_suffix(node->loop_var) + " in range(");
      const bool from_zero = node->min.defined() && node->min.kind() == SymKind::kIntImm &&
                             node->min.is_const(0) && node->min.dtype() == node->loop_var.dtype();
      if (from_zero) {
        put(sym(node->extent));
      } else {
        put(sym(node->min) + ", extent=" + sym(node->extent));
      }
      put(")");
      put(for_kind_suffix(node->for_kind));
      put(" ");
      stmt_block(node->body);
      return;
    }
    case StmtKind::kSeq: {
      put("seq {");
      ++indent_;
      for (const Stmt& child : s.as<SeqStmtNode>()->stmts) {
        newline();
        stmt(child);
      }
      --indent_;
      newline();
      put("}");
      return;
    }
    case StmtKind::kBufferStore: {
      const auto* node = s.as<BufferStoreNode>();
      put(node->buffer.defined() ? namer_.buffer(node->buffer.get()) : "<undefined>");
      put("[");
      for (size_t i = 0; i < node->indices.size(); ++i) put((i > 0 ? ", " : "") + sym(node->indices[i]));
      put("] = " + sym(node->value));
      return;
    }
    case StmtKind::kIfThenElse: {
      const auto* node = s.as<IfThenElseNode>();
      put("if " + sym(node->cond) + " ");
      stmt_block(node->then_case);
      if (node->else_case.defined()) {
        put(" else ");
        stmt_block(node->else_case);
      }
      return;
    }
    case StmtKind::kLetStmt: {
      const auto* node = s.as<LetStmtNode>();
      put("let " + namer_.sym(node->var) + dtype_suffix(node->var) + " = " + sym(node->value) + " ");
      stmt_block(node->body);
      return;
    }
    case StmtKind::kAllocate: {
      const auto* node = s.as<AllocateNode>();
      if (!node->buffer.defined()) {
        put("alloc <undefined> ");
      } else {
        put("alloc " + namer_.buffer(node->buffer.get()) + ": " + buffer_type(node->buffer) + " ");
      }
      stmt_block(node->body);
      return;
    }
    case StmtKind::kEvaluate:
      put("evaluate " + sym(s.as<EvaluateNode>()->value));
      return;
    case StmtKind::kExternCall: {
      // call_extern name(&A[i, 0], n): a region is `&` and its first element.
      const auto* node = s.as<ExternCallNode>();
      put("call_extern " + node->name + "(");
      for (size_t a = 0; a < node->args.size(); ++a) {
        const ExternArg& arg = node->args[a];
        if (a > 0) put(", ");
        if (!arg.is_region()) {
          put(sym(arg.value));
          continue;
        }
        put("&" + namer_.buffer(arg.buffer.get()) + "[");
        for (size_t i = 0; i < arg.indices.size(); ++i) put((i > 0 ? ", " : "") + sym(arg.indices[i]));
        put("]");
      }
      put(")");
      return;
    }
    case StmtKind::kBlock: {
      const auto* node = s.as<BlockNode>();
      put("block " + name_or_quoted(node->name) + "(");
      for (size_t i = 0; i < node->iter_vars.size(); ++i) {
        const IterVar& iv = node->iter_vars[i];
        if (i > 0) put(", ");
        put(namer_.sym(iv.var) + dtype_suffix(iv.var) + " = ");
        put(iv.type == IterType::kSpatial ? "spatial(" : "reduce(");
        put(sym(iv.extent) + ", " + sym(iv.binding) + ")");
      }
      put(") {");
      ++indent_;
      if (node->init.defined()) {
        newline();
        put("init ");
        stmt_block(node->init);
      }
      if (prints_as_list(node->body)) {
        for (const Stmt& child : node->body.as<SeqStmtNode>()->stmts) {
          newline();
          stmt(child);
        }
      } else if (node->body.defined()) {
        newline();
        stmt(node->body);
      }
      --indent_;
      newline();
      put("}");
      return;
    }
  }
}

}  // namespace relax::text
