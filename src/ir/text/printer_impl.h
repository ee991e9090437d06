// The printer of the IR text format, shared by printer.cc (modules, graph
// level), printer_value.cc (annotations, attributes, constants, scalar
// expressions) and printer_prim.cc (loop level). The format is described in
// relax/ir/printer.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/printer.h"
#include "relax/shape/buffer.h"

namespace relax::text {

/// The printed names of one function's variables: unique, valid, and stable
/// (each variable keeps the name it got first). Graph Vars live in one
/// namespace, SymVars and buffers in another.
class Namer {
 public:
  const std::string& var(const Expr& var);
  const std::string& sym(const SymVar& var);
  const std::string& buffer(const BufferNode* buffer);

 private:
  std::string fresh(const std::string& hint, absl::flat_hash_set<std::string>& taken,
                    bool sym_level);

  absl::flat_hash_map<const ExprNode*, std::string> vars_;
  absl::flat_hash_set<std::string> var_names_;
  absl::flat_hash_map<uint64_t, std::string> syms_;
  absl::flat_hash_map<const BufferNode*, std::string> buffers_;
  absl::flat_hash_set<std::string> sym_names_;
};

class Printer {
 public:
  Printer() = default;
  explicit Printer(const PrintOptions& options) : options_(options) {}
  std::string print_module(const IRModule& mod);
  std::string print_expr_text(const Expr& e);

  // ---- Output -------------------------------------------------------------
  void put(std::string_view s) { out_.append(s.data(), s.size()); }
  void newline();

  // ---- Graph level (printer.cc) ---------------------------------------------
  void function(const std::string* name, const FunctionNode& fn);
  void seq_items(const std::vector<BindingBlock>& blocks);
  void binding(const Binding& b, bool in_dataflow);
  void seq_body(const Expr& body, bool with_return);
  void expr(const Expr& e);
  void call(const CallNode& call);
  void extern_item(const std::string& name, const ExternFuncNode& ext);

  // ---- Values (printer_value.cc) ----------------------------------------------
  /// A scalar expression with this function's names.
  std::string sym(const SymExpr& e);
  std::string dims(const std::vector<SymExpr>& dims);
  std::string sinfo(const StructInfo& s);
  std::string attr_value(const AttrValue& v);
  /// ` attrs {k = v, ...}` (nothing when empty).
  void attrs_clause(const Attrs& attrs);
  void constant(const ConstantNode& c);

  // ---- Loop level (printer_prim.cc) -------------------------------------------
  void prim_func(const std::string* name, const PrimFuncNode& fn);
  std::string buffer_type(const Buffer& b);
  void stmt(const Stmt& s);
  /// `{`, the statements of `body` one a line, `}`.
  void stmt_block(const Stmt& body);

  Namer& namer() { return namer_; }

 private:
  bool name_all(const SymExpr& e);
  SymExpr renamed(const SymExpr& e);

  PrintOptions options_;

  std::string out_;
  int indent_ = 0;
  Namer namer_;
  absl::flat_hash_map<uint64_t, SymVar> renamed_vars_;
  absl::flat_hash_map<const BufferNode*, Buffer> renamed_buffers_;
};

/// The printed name of a module function or global: `@name` or `@"..."`.
std::string global_name(const std::string& name);

}  // namespace relax::text
