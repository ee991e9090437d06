// The printer of the IR text format: modules and graph-level expressions.
//
// The format is described, with its grammar, in relax/ir/printer.h. The
// printer writes every node kind so that the parser can rebuild it:
//   - names come from a Namer that makes them unique within a function, never
//     a keyword and never the name of a registered op (so a bare name in a
//     call always means what it meant);
//   - binding blocks print bare where the parser would form the same block
//     again, and as `bindings { }` where it would not (an empty block, or a
//     plain block right after another);
//   - a SeqExpr's result follows `return` in a function body and stands alone
//     as the last line of an If branch or a `seq { }`.
// Printing never fails: undefined parts print as `<undefined>` (which the
// parser rejects), so that broken IR can still be looked at.
#include "relax/ir/printer.h"

#include "ir/text/printer_impl.h"
#include "relax/ir/op.h"
#include "ir/text/text_format.h"

namespace relax {
namespace text {

// ---------------------------------------------------------------------------
// Names.

std::string Namer::fresh(const std::string& hint, absl::flat_hash_set<std::string>& taken,
                         bool sym_level) {
  const std::string base = sanitize_name(hint);
  auto usable = [&](const std::string& name) {
    if (taken.contains(name)) return false;
    if (sym_level) {
      // The SymExpr printer must write it bare, and no statement may start with it.
      return !is_stmt_keyword(name) && SymVar(name).to_string() == name;
    }
    return !is_graph_keyword(name) && find_op(name) == nullptr;
  };
  std::string name = base;
  for (int suffix = 1; !usable(name); ++suffix) name = base + "_" + std::to_string(suffix);
  taken.insert(name);
  return name;
}

const std::string& Namer::var(const Expr& var) {
  auto it = vars_.find(var.get());
  if (it != vars_.end()) return it->second;
  const auto* node = var.as<VarNode>();
  std::string name = fresh(node != nullptr ? node->name_hint : "v", var_names_, false);
  return vars_.emplace(var.get(), std::move(name)).first->second;
}

const std::string& Namer::sym(const SymVar& var) {
  auto it = syms_.find(var.id());
  if (it != syms_.end()) return it->second;
  return syms_.emplace(var.id(), fresh(var.name(), sym_names_, true)).first->second;
}

const std::string& Namer::buffer(const BufferNode* buffer) {
  auto it = buffers_.find(buffer);
  if (it != buffers_.end()) return it->second;
  return buffers_.emplace(buffer, fresh(buffer->name, sym_names_, true)).first->second;
}

std::string global_name(const std::string& name) {
  return "@" + (is_identifier(name) ? name : quote(name));
}

// ---------------------------------------------------------------------------
// Module and functions.

void Printer::newline() {
  out_ += '\n';
  out_.append(static_cast<size_t>(indent_) * 2, ' ');
}

std::string Printer::print_module(const IRModule& mod) {
  put("module");
  attrs_clause(mod.attrs());
  put(" {");
  ++indent_;
  for (const auto& [name, func] : mod.functions()) {
    namer_ = Namer();
    newline();
    if (const auto* fn = func.as<FunctionNode>()) {
      function(&name, *fn);
    } else if (const auto* prim = func.as<PrimFuncNode>()) {
      prim_func(&name, *prim);
    } else if (const auto* ext = func.as<ExternFuncNode>()) {
      extern_item(name, *ext);
    }
  }
  --indent_;
  newline();
  put("}\n");
  return std::move(out_);
}

std::string Printer::print_expr_text(const Expr& e) {
  expr(e);
  return std::move(out_);
}

void Printer::extern_item(const std::string& name, const ExternFuncNode& ext) {
  put("extern_func " + global_name(name));
  if (ext.symbol != name) put(" = " + quote(ext.symbol));
  put(" : " + sinfo(ext.struct_info()));
}

void Printer::function(const std::string* name, const FunctionNode& fn) {
  put(name != nullptr ? "func " + global_name(*name) + "(" : "func(");
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (i > 0) put(", ");
    put(namer_.var(fn.params[i]) + ": " + sinfo(fn.params[i].struct_info()));
  }
  put(") -> " + sinfo(fn.ret));
  if (!fn.pure) put(" impure");
  if (!fn.upper_bounds.empty()) {
    put(" upper_bounds {");
    for (size_t i = 0; i < fn.upper_bounds.size(); ++i) {
      if (i > 0) put(", ");
      put(namer_.sym(fn.upper_bounds[i].var) + ": " + std::to_string(fn.upper_bounds[i].upper));
    }
    put("}");
  }
  attrs_clause(fn.attrs);
  put(" {");
  ++indent_;
  seq_body(fn.body, true);
  --indent_;
  newline();
  put("}");
}

// The items and the result of a SeqExpr (or of another body, as if it were a
// SeqExpr without bindings), each on its own line.
void Printer::seq_body(const Expr& body, bool with_return) {
  const auto* seq = body.as<SeqExprNode>();
  if (seq != nullptr) seq_items(seq->blocks);
  newline();
  if (with_return) put("return ");
  expr(seq != nullptr ? seq->body : body);
}

void Printer::seq_items(const std::vector<BindingBlock>& blocks) {
  bool after_plain = false;
  for (const BindingBlock& block : blocks) {
    const bool bare = !block.is_dataflow && !block.bindings.empty() && !after_plain;
    after_plain = !block.is_dataflow;
    if (bare) {
      for (const Binding& b : block.bindings) {
        newline();
        binding(b, false);
      }
      continue;
    }
    newline();
    put(block.is_dataflow ? "dataflow {" : "bindings {");
    ++indent_;
    for (const Binding& b : block.bindings) {
      newline();
      binding(b, block.is_dataflow);
    }
    --indent_;
    newline();
    put("}");
  }
}

void Printer::binding(const Binding& b, bool in_dataflow) {
  if (!b.var.defined()) {
    put("<undefined>");
    return;
  }
  if (in_dataflow && !b.var.is_dataflow()) put("output ");
  put(namer_.var(b.var));
  if (b.var.struct_info().defined()) put(": " + sinfo(b.var.struct_info()));
  put(" = ");
  if (b.is_match_cast) {
    put("match_cast(");
    expr(b.value);
    put(", " + sinfo(b.cast_sinfo) + ")");
  } else {
    expr(b.value);
  }
}

// ---------------------------------------------------------------------------
// Expressions.

void Printer::call(const CallNode& node) {
  expr(node.callee);
  put("(");
  bool first = true;
  auto sep = [&] {
    if (!first) put(", ");
    first = false;
  };
  for (const Expr& arg : node.args) {
    sep();
    expr(arg);
  }
  for (const auto& [key, value] : node.attrs) {
    sep();
    put((key == "sinfo" ? quote(key) : name_or_quoted(key)) + "=" + attr_value(value));
  }
  for (const StructInfo& s : node.sinfo_args) {
    sep();
    put("sinfo=" + sinfo(s));
  }
  put(")");
}

void Printer::expr(const Expr& e) {
  if (!e.defined()) {
    put("<undefined>");
    return;
  }
  switch (e.kind()) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
      put(namer_.var(e));
      return;
    case ExprKind::kGlobalVar:
      put(global_name(e.as<GlobalVarNode>()->name));
      return;
    case ExprKind::kConstant:
      constant(*e.as<ConstantNode>());
      return;
    case ExprKind::kTuple: {
      const auto& fields = e.as<TupleNode>()->fields;
      put("(");
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) put(", ");
        expr(fields[i]);
      }
      put(fields.size() == 1 ? ",)" : ")");
      return;
    }
    case ExprKind::kTupleGetItem: {
      const auto* node = e.as<TupleGetItemNode>();
      expr(node->tuple);
      put("[" + std::to_string(node->index) + "]");
      return;
    }
    case ExprKind::kCall:
      call(*e.as<CallNode>());
      return;
    case ExprKind::kShapeExpr: {
      const auto& values = e.as<ShapeExprNode>()->values;
      put("shape(");
      for (size_t i = 0; i < values.size(); ++i) put((i > 0 ? ", " : "") + sym(values[i]));
      put(")");
      return;
    }
    case ExprKind::kPrimValue:
      put("prim(" + sym(e.as<PrimValueNode>()->value) + ")");
      return;
    case ExprKind::kStringImm:
      put(quote(e.as<StringImmNode>()->value));
      return;
    case ExprKind::kIf: {
      const auto* node = e.as<IfNode>();
      put("if ");
      expr(node->cond);
      put(" {");
      ++indent_;
      seq_body(node->then_branch, false);
      --indent_;
      newline();
      put("} else {");
      ++indent_;
      seq_body(node->else_branch, false);
      --indent_;
      newline();
      put("}");
      return;
    }
    case ExprKind::kSeqExpr:
      put("seq {");
      ++indent_;
      seq_body(e, false);
      --indent_;
      newline();
      put("}");
      return;
    case ExprKind::kFunction:
      function(nullptr, *e.as<FunctionNode>());
      return;
    case ExprKind::kExternFunc: {
      const auto* node = e.as<ExternFuncNode>();
      put("extern_func(" + quote(node->symbol));
      if (!struct_info_equal(node->struct_info(), opaque_func_sinfo(object_sinfo()))) {
        put(", " + sinfo(node->struct_info()));
      }
      put(")");
      return;
    }
    case ExprKind::kOp: {
      const std::string& name = e.as<OpNode>()->name;
      put(is_identifier(name) && !is_graph_keyword(name) ? name : "op(" + quote(name) + ")");
      return;
    }
    case ExprKind::kPrimFunc:
      prim_func(nullptr, *e.as<PrimFuncNode>());
      return;
  }
}

}  // namespace text

std::string to_text(const IRModule& mod, const PrintOptions& options) {
  return text::Printer(options).print_module(mod);
}

std::string to_text(const Expr& expr) { return text::Printer().print_expr_text(expr); }

}  // namespace relax
