// Graph-level expressions of relax.
//
// A graph function is a list of binding blocks followed by a result:
//
//   func @main(x: Tensor[(n, 4096), float32]) -> Tensor[(n, 4096), float32] {
//     dataflow {                      // DataflowBlock: pure, its vars stay inside
//       lv0 = add(x, x)               // VarBinding (lv0 is a DataflowVar)
//       gv  = multiply(lv0, x)        // gv is a Var: it leaves the block
//     }
//     y = match_cast(gv, Tensor[(m, 4096), float32])   // MatchCast: binds m
//     return y
//   }
//
// Every Expr carries a StructInfo once it has been normalised (the builder and
// the parser normalise as they go). Nodes are immutable handles; Vars and
// GlobalVars are compared by identity.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/struct_info.h"
#include "relax/runtime/tensor.h"
#include "relax/shape/sym_expr.h"

namespace relax {

enum class ExprKind : uint8_t {
  kVar,
  kDataflowVar,
  kGlobalVar,
  kConstant,
  kTuple,
  kTupleGetItem,
  kCall,
  kShapeExpr,
  kPrimValue,
  kStringImm,
  kIf,
  kSeqExpr,
  kFunction,
  kExternFunc,
  kOp,
  kPrimFunc,
};

class Expr;

/// Common part of every expression node.
class ExprNode {
 public:
  virtual ~ExprNode() = default;
  ExprKind kind() const { return kind_; }
  /// The annotation; undefined until the expression is normalised.
  const StructInfo& struct_info() const { return struct_info_; }

 protected:
  ExprNode(ExprKind kind, StructInfo sinfo) : kind_(kind), struct_info_(std::move(sinfo)) {}

 private:
  ExprKind kind_;
  StructInfo struct_info_;
};

/// Handle to an immutable expression node; null when default-constructed.
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  ExprKind kind() const { return node_->kind(); }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const StructInfo& struct_info() const { return node_->struct_info(); }
  bool same_as(const Expr& other) const { return node_ == other.node_; }

  /// The node as its concrete class, or nullptr when it is of another kind.
  template <typename T>
  const T* as() const {
    return node_ && T::matches(node_->kind()) ? static_cast<const T*>(node_.get()) : nullptr;
  }

 protected:
  std::shared_ptr<const ExprNode> node_;
  friend class Var;
};

/// Hash and equality by identity, for maps keyed by Var or GlobalVar.
struct ExprPtrHash {
  size_t operator()(const Expr& e) const { return std::hash<const void*>()(e.get()); }
};
struct ExprPtrEqual {
  bool operator()(const Expr& a, const Expr& b) const { return a.same_as(b); }
};

// ---------------------------------------------------------------------------
// Attributes of calls and functions.

/// One attribute value.
using AttrValue = std::variant<int64_t, double, bool, std::string, DataType, std::vector<int64_t>,
                               std::vector<SymExpr>>;
/// Named attributes, ordered by name (so printing and hashing are deterministic).
using Attrs = std::map<std::string, AttrValue>;
/// The text of a value as the text format writes it ("[0, 1]", "\"tanh\"").
std::string attr_value_text(const AttrValue& v);

// ---------------------------------------------------------------------------
// Leaves.

class VarNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kVar || k == ExprKind::kDataflowVar; }
  VarNode(std::string name_hint, StructInfo sinfo, bool dataflow)
      : ExprNode(dataflow ? ExprKind::kDataflowVar : ExprKind::kVar, std::move(sinfo)),
        name_hint(std::move(name_hint)) {}
  std::string name_hint;  ///< for printing only: identity makes a variable
};

/// A variable bound by a parameter or a binding outside dataflow blocks.
class Var : public Expr {
 public:
  Var() = default;
  Var(std::string name_hint, StructInfo sinfo);
  const std::string& name_hint() const { return static_cast<const VarNode*>(get())->name_hint; }
  bool is_dataflow() const { return kind() == ExprKind::kDataflowVar; }
  /// Views `e` as a Var; aborts unless it is one.
  static Var from_expr(const Expr& e);

 protected:
  explicit Var(std::shared_ptr<const ExprNode> node) : Expr(std::move(node)) {}
};

/// A variable bound inside a dataflow block; it may not be used outside it.
class DataflowVar : public Var {
 public:
  DataflowVar(std::string name_hint, StructInfo sinfo);
};

class GlobalVarNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kGlobalVar; }
  GlobalVarNode(std::string name, StructInfo sinfo)
      : ExprNode(ExprKind::kGlobalVar, std::move(sinfo)), name(std::move(name)) {}
  std::string name;
};

class ConstantNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kConstant; }
  ConstantNode(runtime::Tensor data, StructInfo sinfo)
      : ExprNode(ExprKind::kConstant, std::move(sinfo)), data(std::move(data)) {}
  runtime::Tensor data;
};

class ShapeExprNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kShapeExpr; }
  ShapeExprNode(std::vector<SymExpr> values, StructInfo sinfo)
      : ExprNode(ExprKind::kShapeExpr, std::move(sinfo)), values(std::move(values)) {}
  std::vector<SymExpr> values;
};

class PrimValueNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kPrimValue; }
  PrimValueNode(SymExpr value, StructInfo sinfo)
      : ExprNode(ExprKind::kPrimValue, std::move(sinfo)), value(std::move(value)) {}
  SymExpr value;
};

class StringImmNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kStringImm; }
  StringImmNode(std::string value, StructInfo sinfo)
      : ExprNode(ExprKind::kStringImm, std::move(sinfo)), value(std::move(value)) {}
  std::string value;
};

/// A function implemented outside the module, called by its symbol name.
class ExternFuncNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kExternFunc; }
  ExternFuncNode(std::string symbol, StructInfo sinfo)
      : ExprNode(ExprKind::kExternFunc, std::move(sinfo)), symbol(std::move(symbol)) {}
  std::string symbol;
};

/// A reference to a registered operator (see op.h).
class OpNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kOp; }
  OpNode(std::string name, StructInfo sinfo)
      : ExprNode(ExprKind::kOp, std::move(sinfo)), name(std::move(name)) {}
  std::string name;
};

// ---------------------------------------------------------------------------
// Compound expressions.

class TupleNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kTuple; }
  TupleNode(std::vector<Expr> fields, StructInfo sinfo)
      : ExprNode(ExprKind::kTuple, std::move(sinfo)), fields(std::move(fields)) {}
  std::vector<Expr> fields;
};

class TupleGetItemNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kTupleGetItem; }
  TupleGetItemNode(Expr tuple, int index, StructInfo sinfo)
      : ExprNode(ExprKind::kTupleGetItem, std::move(sinfo)), tuple(std::move(tuple)), index(index) {}
  Expr tuple;
  int index;
};

/// A call of an Op, a GlobalVar, an ExternFunc or a Var holding a function.
/// `sinfo_args` carries annotations an op needs beyond its arguments (the
/// output annotation of call_tir, for instance).
class CallNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kCall; }
  CallNode(Expr callee, std::vector<Expr> args, Attrs attrs, std::vector<StructInfo> sinfo_args,
           StructInfo sinfo)
      : ExprNode(ExprKind::kCall, std::move(sinfo)),
        callee(std::move(callee)),
        args(std::move(args)),
        attrs(std::move(attrs)),
        sinfo_args(std::move(sinfo_args)) {}
  Expr callee;
  std::vector<Expr> args;
  Attrs attrs;
  std::vector<StructInfo> sinfo_args;
};

// ---------------------------------------------------------------------------
// Bindings, blocks, sequences, branches, functions.

/// `var = value`, or `var = match_cast(value, struct_info)` when `is_match_cast`:
/// the latter checks `value` against `struct_info` at run time and binds the
/// symbolic variables that `struct_info` introduces.
struct Binding {
  Var var;
  Expr value;
  bool is_match_cast = false;
  StructInfo cast_sinfo;  ///< the pattern of a match_cast
};

/// A sequence of bindings; a dataflow block is pure and its DataflowVars stay inside.
struct BindingBlock {
  std::vector<Binding> bindings;
  bool is_dataflow = false;
};

class SeqExprNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kSeqExpr; }
  SeqExprNode(std::vector<BindingBlock> blocks, Expr body, StructInfo sinfo)
      : ExprNode(ExprKind::kSeqExpr, std::move(sinfo)), blocks(std::move(blocks)), body(std::move(body)) {}
  std::vector<BindingBlock> blocks;
  Expr body;
};

class IfNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kIf; }
  IfNode(Expr cond, Expr then_branch, Expr else_branch, StructInfo sinfo)
      : ExprNode(ExprKind::kIf, std::move(sinfo)),
        cond(std::move(cond)),
        then_branch(std::move(then_branch)),
        else_branch(std::move(else_branch)) {}
  Expr cond;         ///< a Prim[bool] value or a one-element bool tensor (is_if_condition)
  Expr then_branch;  ///< a SeqExpr
  Expr else_branch;  ///< a SeqExpr
};

/// An upper bound declared for a symbolic variable of a function.
struct SymBound {
  SymVar var;
  int64_t upper;
};

class FunctionNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kFunction; }
  FunctionNode(std::vector<Var> params, Expr body, StructInfo ret, bool pure,
               std::vector<SymBound> upper_bounds, Attrs attrs, StructInfo sinfo)
      : ExprNode(ExprKind::kFunction, std::move(sinfo)),
        params(std::move(params)),
        body(std::move(body)),
        ret(std::move(ret)),
        pure(pure),
        upper_bounds(std::move(upper_bounds)),
        attrs(std::move(attrs)) {}
  std::vector<Var> params;
  Expr body;  ///< a SeqExpr
  StructInfo ret;
  bool pure;
  std::vector<SymBound> upper_bounds;
  Attrs attrs;
};

// ---------------------------------------------------------------------------
// Constructors. Each returns a node with the StructInfo it is given (undefined
// for an unnormalised node); the builder and normalizer fill it in.

Expr make_global_var(std::string name, StructInfo sinfo = StructInfo());
Expr make_constant(runtime::Tensor data);
Expr make_shape_expr(std::vector<SymExpr> values);
Expr make_prim_value(SymExpr value);
Expr make_string_imm(std::string value);
Expr make_extern_func(std::string symbol, StructInfo sinfo = StructInfo());
/// The Op named `name`, or NotFound naming it when no such op is registered.
absl::StatusOr<Expr> make_op(std::string_view name);
/// As make_op, aborting (RELAX_CHECK) on an unknown name: for names fixed in code.
Expr make_op_or_die(std::string_view name);
Expr make_tuple(std::vector<Expr> fields, StructInfo sinfo = StructInfo());
Expr make_tuple_get_item(Expr tuple, int index, StructInfo sinfo = StructInfo());
Expr make_call(Expr callee, std::vector<Expr> args, Attrs attrs = {},
               std::vector<StructInfo> sinfo_args = {}, StructInfo sinfo = StructInfo());
Expr make_seq_expr(std::vector<BindingBlock> blocks, Expr body, StructInfo sinfo = StructInfo());
Expr make_if(Expr cond, Expr then_branch, Expr else_branch, StructInfo sinfo = StructInfo());
Expr make_function(std::vector<Var> params, Expr body, StructInfo ret, bool pure = true,
                   std::vector<SymBound> upper_bounds = {}, Attrs attrs = {});

/// A copy of `e` with another annotation.
Expr with_struct_info(const Expr& e, StructInfo sinfo);

std::string_view expr_kind_name(ExprKind kind);

}  // namespace relax
