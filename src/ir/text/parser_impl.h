// The parser of the IR text format, shared by parser.cc (modules, functions,
// bindings), parser_expr.cc (graph-level expressions), parser_value.cc
// (annotations, scalar expressions), parser_attr.cc (attributes, constants)
// and parser_prim.cc (loop level). The grammar is in relax/ir/printer.h.
//
// Recursive descent over the token list of text_lexer.h. No function aborts or
// throws: the first error is kept in `status_` and every parse function
// returns an empty value once it is set, which its callers check with ok().
// Every recursive path passes through a DepthGuard, which bounds the nesting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/op.h"
#include "relax/ir/prim_func.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/buffer.h"
#include "relax/support/limits.h"
#include "ir/text/text_lexer.h"

namespace relax::text {

/// How deeply the parser itself may recurse (brackets, blocks, nested
/// statements and expressions). The trees it builds are bounded by
/// kMaxNestingDepth, measured on the result (nesting.h) as the JSON reader
/// measures them; printed, a statement takes up to two levels of syntax (the
/// statement and its block), so this leaves room for every tree the limit
/// admits and stays well inside a 1 MiB stack.
inline constexpr int kMaxNesting = 2 * kMaxNestingDepth + 16;

/// What the parser knows while reading one module item (a function, a PrimFunc,
/// an extern function): the names in scope and the facts for deduction.
struct ItemState {
  /// SymVars and buffers by name (one namespace per item; see printer.h).
  ParseContext syms;
  /// Graph variables by name, innermost scope last.
  std::vector<absl::flat_hash_map<std::string, Var>> var_scopes;
  /// Every graph variable name defined in the item (names are never reused).
  absl::flat_hash_set<std::string> var_names;
  /// SymVars defined per enclosing SeqExpr / function, for SeqExpr annotations.
  std::vector<std::vector<SymVar>> sym_frames;
  std::unique_ptr<Analyzer> analyzer = std::make_unique<Analyzer>();
  /// Module attributes may name symbolic variables that nothing defines.
  bool lenient_syms = false;
};

/// A graph function's header, read before its body.
struct FuncHeader {
  std::vector<Var> params;
  StructInfo ret;
  bool pure = true;
  std::vector<SymBound> bounds;
  Attrs attrs;
};

/// A PrimFunc's header.
struct PrimHeader {
  std::vector<PrimParam> params;
  Attrs attrs;
};

class Parser {
 public:
  explicit Parser(std::string_view text);
  absl::StatusOr<IRModule> run();

  // ---- Tokens and errors (parser.cc) ----------------------------------------
  const Token& tok() const { return toks_[pos_]; }
  const Token& peek(size_t k = 1) const {
    return toks_[pos_ + k < toks_.size() ? pos_ + k : toks_.size() - 1];
  }
  void advance() {
    if (pos_ + 1 < toks_.size()) ++pos_;
  }
  bool ok() const { return status_.ok(); }
  bool at_punct(std::string_view p) const {
    return tok().kind == TokenKind::kPunct && tok().text == p;
  }
  bool at_name(std::string_view n) const { return tok().kind == TokenKind::kName && tok().text == n; }
  bool accept_punct(std::string_view p);
  bool accept_name(std::string_view n);
  /// Consumes `p` or fails with "expected `p`, found ...".
  bool expect_punct(std::string_view p);
  bool expect_name(std::string_view n);
  /// A NAME token's text, or a failure naming `what`.
  std::optional<std::string> expect_identifier(std::string_view what);
  /// A NAME or STRING token's (decoded) text.
  std::optional<std::string> expect_name_or_string(std::string_view what);
  void fail(const Token& at, const std::string& message);
  void fail_at(size_t offset, const std::string& message);
  void fail_expected(std::string_view what);
  /// "L:C" of a byte offset.
  std::string location_of(size_t offset) const;

  /// Counts one level of nesting for its lifetime; `ok()` is false past the limit.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p);
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  // ---- Annotations and scalar expressions (parser_value.cc) ----------------------
  /// An annotation. `defining`: whole-variable dims and Prim values define
  /// symbolic variables (parameters, match_cast patterns).
  StructInfo parse_sinfo(bool defining);
  /// A scalar expression up to its end (see printer.h). With `defining`, a lone
  /// name defines a variable of `bare_dtype` unless one is in scope.
  SymExpr parse_sym(bool defining = false, DataType bare_dtype = DataType::int64());
  /// `(d0, d1, ...)` of int64 dims.
  std::optional<std::vector<SymExpr>> parse_dims(bool defining);
  std::optional<DataType> parse_dtype_token();
  /// An optional `: DTYPE` after a loop or iteration variable: int64 when
  /// absent, an error naming `what` unless an integer dtype.
  DataType parse_index_dtype(const std::string& what);
  std::optional<int64_t> parse_int();
  // (parser_attr.cc)
  std::optional<AttrValue> parse_attr_value();
  /// `{k = v, ...}` after the `attrs` keyword.
  std::optional<Attrs> parse_attrs_body();
  /// A Constant after the `const` keyword.
  Expr parse_constant();
  /// Opens / closes a parameter list (or match_cast pattern) in which a
  /// variable may be named before what defines it: a whole-variable dim later
  /// in the list, or, once the list is read, the definition rule of
  /// struct_info.h over `annotations` (`x: Tensor[(n * 2,)]` defines n). At
  /// the end, a name used in the region that neither defines goes to the
  /// enclosing region, or is an error when there is none. `outer_known` is
  /// what the enclosing scope defines, for a match_cast pattern.
  void begin_sym_region() { regions_.emplace_back(); }
  void end_sym_region(const std::vector<StructInfo>& annotations = {},
                      const std::function<bool(const SymVar&)>& outer_known = nullptr);
  /// The variable `name` defines (or already names), of `dtype`.
  SymVar define_sym(const std::string& name, DataType dtype, const Token& at);

  // ---- Graph level (parser.cc; expressions in parser_expr.cc) ---------------------
  std::optional<FuncHeader> parse_func_header();
  /// The body `{ ... return e }` and the function; the header's params are in scope.
  Expr parse_func_body(FuncHeader header);
  Expr parse_expr();
  Expr parse_primary();
  // A bare number as an operand (`1.0`, `-2`, `0.5f16`): a PrimValue (printer.h).
  Expr parse_number_operand();
  Expr parse_call(Expr callee, const Token& at);
  /// Bindings and blocks up to (not including) the result of a SeqExpr.
  std::optional<std::vector<BindingBlock>> parse_seq_items();
  bool parse_binding(bool in_dataflow, std::vector<Binding>& out);
  /// `{ items result }` of an If branch or `seq`: a normalised SeqExpr.
  Expr parse_braced_seq();
  /// Finishes a SeqExpr opened by push_seq_scope: normalises it.
  Expr finish_seq(std::vector<BindingBlock> blocks, Expr result, const Token& at);
  Expr lookup_name(const Token& at);
  /// `e` normalised, or a failure at `at`.
  Expr normalize_at(const Expr& e, const Token& at, std::string_view what);
  void push_seq_scope();
  void pop_seq_scope();
  bool define_var(const std::string& name, const Var& var, const Token& at, size_t scope_index);
  /// Puts what `sinfos` define (defined_sym_vars) in the innermost scope frame.
  void note_defined_syms(const std::vector<StructInfo>& sinfos,
                         const std::function<bool(const SymVar&)>& outer_known);
  /// Whether a scope frame (an enclosing SeqExpr or the function) defines `v`.
  bool sym_in_scope(const SymVar& v) const;

  // ---- Loop level (parser_prim.cc) -------------------------------------------------
  std::optional<PrimHeader> parse_prim_header();
  Expr parse_prim_body(PrimHeader header);
  std::optional<Buffer> parse_buffer_type(const std::string& name, bool defining);
  /// `{ stmt* }`: one statement, or a SeqStmt of several.
  Stmt parse_stmt_block();
  std::optional<std::vector<Stmt>> parse_stmt_list();
  Stmt parse_stmt();
  Stmt parse_for();
  Stmt parse_store();
  Stmt parse_block();
  Stmt parse_extern_call();

  // ---- State -------------------------------------------------------------------
  std::string_view text_;
  std::vector<Token> toks_;
  std::vector<size_t> line_starts_;
  size_t pos_ = 0;
  int depth_ = 0;
  absl::Status status_;
  IRModule module_;
  ItemState st_;
  /// The open symbol regions, innermost last: each one's names used before any
  /// definition, with the offset of their first use.
  std::vector<std::vector<std::pair<std::string, size_t>>> regions_;
};

}  // namespace relax::text
