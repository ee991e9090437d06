// The reader of the JSON form of an IRModule (relax/ir/json.h), shared by
// json_reader.cc (the document, the table, StructInfo, attributes),
// json_reader_expr.cc (graph expressions) and json_reader_loop.cc (SymExprs,
// buffers, statements).
//
// The table is read in order, one node at a time, each from nodes before it,
// so reading never recurses and a document cannot describe a cycle. Every
// accessor checks what it reads and, on a mismatch, records the first error
// (with the JSON path of the offending value) and returns nothing; a node
// reader returns false as soon as anything it needs is missing, before it
// builds an IR node, so no IR constructor ever sees what it would abort on.
#pragma once

#include <cstddef>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nlohmann/json.hpp"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/prim_func.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"

namespace relax::json_detail {

// The reader parses into nlohmann::json, not ordered_json: growing an
// ordered_json object copies its values deeply (recursively), which a value
// nested a million levels deep turns into a stack overflow.
using Json = nlohmann::json;

/// A JSON path, built on the stack as the reader descends and spelled only for
/// an error: `nodes[12].args[1]`.
struct Loc {
  const Loc* parent = nullptr;
  std::string_view field;  ///< the object key; empty for an array element
  size_t index = 0;        ///< the array index when `field` is empty

  // A child refers to its parent, so a child of a temporary would dangle: name
  // the parent first (`const Loc list = at.key("args"); ... list.at(i)`).
  Loc key(std::string_view name) const& { return Loc{this, name, 0}; }
  Loc at(size_t i) const& { return Loc{this, {}, i}; }
  Loc key(std::string_view name) const&& = delete;
  Loc at(size_t i) const&& = delete;
  std::string str() const;
};

/// The families of node in the table; a reference names the family it wants.
enum class Family : uint8_t { kSym, kBuffer, kSInfo, kExpr, kStmt };

// How deep nodes may nest is kMaxNestingDepth (relax/support/limits.h), the
// limit of every reader, counted per family as nesting.h says: a SymExpr's
// depth(), statements in statements, expressions in expressions, annotations
// in annotations. The reader and writer keep their own stacks, but other
// walks over the IR recurse (printing, comparing, destroying), so a document
// may not build a tree deeper than the text parser would accept.

class Reader {
 public:
  /// The module of a parsed document, or the first error found.
  absl::StatusOr<IRModule> read(const Json& doc);

  // -------------------------------------------------------------------------
  // Errors.

  /// Records `message` at `at` unless an error is recorded already; returns false.
  bool fail(const Loc& at, std::string_view message);
  bool failed() const { return !error_.empty(); }

  // -------------------------------------------------------------------------
  // Field accessors: each records an error and returns nullopt (or nullptr) on a
  // mismatch. `obj` is an object; `at` is its path.

  /// The field `name`, or an error that it is missing.
  const Json* field(const Json& obj, const Loc& at, std::string_view name);
  /// Whether `obj` has only the fields listed (an unknown one is an error).
  bool only_fields(const Json& obj, const Loc& at, std::initializer_list<std::string_view> names);
  /// `v` as an object, or an error.
  const Json* as_object(const Json& v, const Loc& at);

  std::optional<int64_t> get_int(const Json& obj, const Loc& at, std::string_view name);
  std::optional<bool> get_bool(const Json& obj, const Loc& at, std::string_view name);
  /// A string field: a JSON string, or {"base64": "..."} for bytes that are not UTF-8.
  std::optional<std::string> get_string(const Json& obj, const Loc& at, std::string_view name);
  /// `allow_lanes`: a vector of a scalar dtype (float32x16, is_vector_lanes) too, as a cast has.
  std::optional<DataType> get_dtype(const Json& obj, const Loc& at, std::string_view name, bool allow_lanes = false);
  /// A JSON array field.
  const Json* get_array(const Json& obj, const Loc& at, std::string_view name);
  /// A double written by float_json: a number or one of its strings.
  std::optional<double> as_float(const Json& v, const Loc& at);

  std::optional<int64_t> as_int(const Json& v, const Loc& at);
  std::optional<std::string> as_string(const Json& v, const Loc& at);

  // -------------------------------------------------------------------------
  // References into the table. A reference is a node index below `limit_`
  // (the node being read) whose node is of the family wanted.

  std::optional<size_t> as_ref(const Json& v, const Loc& at, Family want);

  std::optional<SymExpr> sym_ref(const Json& v, const Loc& at);
  /// A reference to a sym.var node.
  std::optional<SymVar> sym_var_ref(const Json& v, const Loc& at);
  std::optional<Buffer> buffer_ref(const Json& v, const Loc& at);
  std::optional<StructInfo> sinfo_ref(const Json& v, const Loc& at);
  std::optional<Expr> expr_ref(const Json& v, const Loc& at);
  /// A reference to an expr.var or expr.dataflow_var node.
  std::optional<Var> var_ref(const Json& v, const Loc& at);
  std::optional<Stmt> stmt_ref(const Json& v, const Loc& at);

  /// The field `name` as a reference (null allowed for the opt_ forms, which
  /// give an undefined handle for it).
  std::optional<SymExpr> sym_field(const Json& obj, const Loc& at, std::string_view name);
  std::optional<SymExpr> opt_sym_field(const Json& obj, const Loc& at, std::string_view name);
  std::optional<SymVar> sym_var_field(const Json& obj, const Loc& at, std::string_view name);
  std::optional<Buffer> buffer_field(const Json& obj, const Loc& at, std::string_view name);
  std::optional<StructInfo> sinfo_field(const Json& obj, const Loc& at, std::string_view name);
  std::optional<StructInfo> opt_sinfo_field(const Json& obj, const Loc& at, std::string_view name);
  std::optional<Expr> expr_field(const Json& obj, const Loc& at, std::string_view name);
  std::optional<Stmt> stmt_field(const Json& obj, const Loc& at, std::string_view name);
  std::optional<Stmt> opt_stmt_field(const Json& obj, const Loc& at, std::string_view name);

  /// Array fields of references.
  std::optional<std::vector<SymExpr>> sym_list(const Json& obj, const Loc& at, std::string_view name);
  /// As sym_list, each of an integer dtype (dims, indices).
  std::optional<std::vector<SymExpr>> int_sym_list(const Json& obj, const Loc& at,
                                                   std::string_view name);
  /// An int_sym_list of dims (of an annotation or a ShapeExpr): int64 each, as
  /// the text format writes them.
  std::optional<std::vector<SymExpr>> dim_list(const Json& obj, const Loc& at,
                                               std::string_view name);
  std::optional<std::vector<StructInfo>> sinfo_list(const Json& obj, const Loc& at,
                                                    std::string_view name);
  std::optional<std::vector<Expr>> expr_list(const Json& obj, const Loc& at, std::string_view name);

  std::optional<Attrs> attrs_field(const Json& obj, const Loc& at, std::string_view name);

  // -------------------------------------------------------------------------
  // Node readers: each reads table entry `node` (an object with a valid
  // "kind") and stores what it builds with set(); false on an error.

  bool read_sym(const Json& node, const Loc& at, std::string_view kind);
  bool read_buffer(const Json& node, const Loc& at);
  bool read_sinfo(const Json& node, const Loc& at, std::string_view kind);
  bool read_expr(const Json& node, const Loc& at, std::string_view kind);
  bool read_stmt(const Json& node, const Loc& at, std::string_view kind);

  void set(SymExpr e) { table_.back().value = std::move(e); }
  void set(Buffer b) { table_.back().value = std::move(b); }
  void set(StructInfo s) { table_.back().value = std::move(s); }
  void set(Expr e) { table_.back().value = std::move(e); }
  void set(Stmt s) { table_.back().value = std::move(s); }

 private:
  struct Entry {
    std::string kind;  ///< the node's "kind", for messages
    std::variant<std::monostate, SymExpr, Buffer, StructInfo, Expr, Stmt> value;
    size_t depth;  ///< 1 + the deepest node of its own family it refers to
  };

  bool read_node(const Json& node, const Loc& at);
  std::optional<AttrValue> read_attr(const Json& v, const Loc& at);
  const Entry* entry(size_t index) const { return &table_[index]; }

  std::vector<Entry> table_;
  size_t limit_ = 0;  ///< references must be below this index
  size_t total_ = 0;  ///< the number of nodes in the document
  size_t depth_ = 0;  ///< the depth of the node being read in its family, so far
  Family family_ = Family::kSym;  ///< the family of the node being read
  std::string error_;
};

/// Concatenates strings and integers for a message (absl::StrCat does not take
/// std::string_view where absl has its own string_view).
inline void append_to(std::string& out, std::string_view s) { out.append(s); }
template <std::integral T>
void append_to(std::string& out, T v) {
  out += std::to_string(v);
}
template <typename... Args>
std::string cat(const Args&... args) {
  std::string out;
  (append_to(out, args), ...);
  return out;
}

/// `v` abbreviated for a message: `"x"`, `[1,2]`, `{"kind":...}`.
std::string describe(const Json& v);

}  // namespace relax::json_detail
