// The fields of every node, described once for structural equality and
// structural hashing (private to src/ir).
//
// `reduce_fields(r, a, b)` walks the fields of two nodes of one kind in a fixed
// order and hands each pair to the reducer `r`. The equality walker
// (structural_equal_walker.h) compares the pair and stops at the first
// difference; the hash walker (structural_hash.cc) passes the same node as `a`
// and `b` and mixes `a`'s fields into the hash. Both walkers therefore visit
// the same fields in the same order and bind variables at the same places,
// which is what makes equal IR hash equal; a new field or node kind is added
// here once. Every call returns false only on a difference, so a description
// is a chain of `&&`.
//
// What a reducer provides:
//   children, each under a field name in the path of a difference (nullptr: no step)
//     expr(field, a, b)  stmt(field, a, b)  sinfo(field, a, b, mode)  sym(field, a, b, mode)
//     list(field, a, b, noun[, each])   items through `each`, by default reduce_item
//     attrs(field, a, b)                 keys in order, values through reduce_attr_value
//   plain data, compared with == and hashed by value
//     value(field, a, b[, message])      a difference reads "a vs b", or message()
//   parts reported with their node as a whole ("Tensor[(n,)] vs Tensor[(m,)]")
//     label(a, b)  dim(a, b, mode)  label_buffer(a, b)  constant(a, b)
//   binding-aware fields (see structural_equal.h for where variables are bound)
//     define_together(a, b)  the variables a parameter list (or pattern) binds, all at once
//     define_var(field, a, b, mode)  define_sym(field, a, b)  define_buffer(field, a, b)
//     bind_var(a, b)  bind_buffer(a, b)  use_var(a, b)  use_sym_var(a, b, mode)  use_buffer(field,
//     a, b)
// The reducer also compares the kinds of two nodes (and the dtypes of two
// SymExprs) before it calls reduce_fields.
#pragma once

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/struct_info.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"
#include "ir/structural/structural_common.h"

namespace relax::detail {

// ---------------------------------------------------------------------------
// Items of lists: children through the reducer, records through their fields.

template <class R>
bool reduce_item(R& r, const Expr& a, const Expr& b) {
  return r.expr(nullptr, a, b);
}
template <class R>
bool reduce_item(R& r, const Stmt& a, const Stmt& b) {
  return r.stmt(nullptr, a, b);
}
template <class R>
bool reduce_item(R& r, const SymExpr& a, const SymExpr& b) {
  return r.sym(nullptr, a, b, BindMode::kUse);
}
template <class R>
bool reduce_item(R& r, const StructInfo& a, const StructInfo& b) {
  return r.sinfo(nullptr, a, b, BindMode::kUse);
}
template <class R, class T>
bool reduce_item(R& r, const T& a, const T& b) {
  return reduce_fields(r, a, b);
}

// ---------------------------------------------------------------------------
// Attribute values (attribute maps are walked by the reducers, key by key).

template <class R>
bool reduce_attr_value(R& r, const AttrValue& a, const AttrValue& b) {
  if (!r.label(a.index(), b.index())) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, double>) {
          return r.label(double_bits(x), double_bits(y));
        } else if constexpr (std::is_same_v<T, std::vector<SymExpr>>) {
          if (!r.label(x.size(), y.size())) return false;
          for (size_t i = 0; i < x.size(); ++i) {
            if (!r.dim(x[i], y[i], BindMode::kUse)) return false;
          }
          return true;
        } else {
          return r.label(x, y);
        }
      },
      a);
}

// ---------------------------------------------------------------------------
// SymExprs (the reducer compares kind and dtype first).

// Only a bare variable at the top may be bound (in `mode`); operands are uses.
template <class R>
bool reduce_fields(R& r, const SymExprNode& a, const SymExprNode& b, BindMode mode) {
  if (a.kind() == SymKind::kVar) return r.use_sym_var(a, b, mode);
  // value() is the constant, the float bits or the intrinsic: the node's whole payload.
  if (!r.label(a.value(), b.value()) || !r.label(a.num_operands(), b.num_operands())) return false;
  if (a.kind() == SymKind::kBufferLoad && !r.label_buffer(a.buffer_node(), b.buffer_node())) {
    return false;
  }
  for (size_t i = 0; i < a.num_operands(); ++i) {
    if (!r.dim(a.operand(i), b.operand(i), BindMode::kUse)) return false;
  }
  return true;
}

// The dims of a Shape or Tensor annotation, when known.
template <class R>
bool reduce_dims(R& r, const std::optional<std::vector<SymExpr>>& a,
                 const std::optional<std::vector<SymExpr>>& b, BindMode mode) {
  if (!r.label(a.has_value(), b.has_value())) return false;
  if (!a) return true;
  if (!r.label(a->size(), b->size())) return false;
  for (size_t i = 0; i < a->size(); ++i) {
    if (!r.dim((*a)[i], (*b)[i], mode)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Annotations. `mode` says whether a bare-variable dim may bind. Leaf kinds
// are reported whole; Tuple and Func name the differing field.

template <class R>
bool reduce_fields(R&, const ObjectStructInfoNode&, const ObjectStructInfoNode&, BindMode) {
  return true;
}
template <class R>
bool reduce_fields(R& r, const PrimStructInfoNode& a, const PrimStructInfoNode& b, BindMode mode) {
  return r.label(a.dtype, b.dtype) && r.dim(a.value, b.value, mode);
}
template <class R>
bool reduce_fields(R& r, const ShapeStructInfoNode& a, const ShapeStructInfoNode& b,
                   BindMode mode) {
  return r.label(a.ndim, b.ndim) && reduce_dims(r, a.values, b.values, mode);
}
template <class R>
bool reduce_fields(R& r, const TensorStructInfoNode& a, const TensorStructInfoNode& b,
                   BindMode mode) {
  return r.label(a.ndim, b.ndim) && r.label(a.dtype, b.dtype) && r.label(a.device, b.device) &&
         reduce_dims(r, a.shape, b.shape, mode);
}
template <class R>
bool reduce_fields(R& r, const TupleStructInfoNode& a, const TupleStructInfoNode& b,
                   BindMode mode) {
  return r.list(
      "fields", a.fields, b.fields, "fields",
      [&](const StructInfo& x, const StructInfo& y) { return r.sinfo(nullptr, x, y, mode); });
}
// A Func annotation's parameters bind their own variables.
template <class R>
bool reduce_fields(R& r, const FuncStructInfoNode& a, const FuncStructInfoNode& b, BindMode) {
  if (!r.label(a.params.has_value(), b.params.has_value()) || !r.label(a.pure, b.pure))
    return false;
  if (a.params && !(r.define_together(*a.params, *b.params) &&
                    r.list("params", *a.params, *b.params, "parameters",
                           [&](const StructInfo& x, const StructInfo& y) {
                             return r.sinfo(nullptr, x, y, BindMode::kDefine);
                           }))) {
    return false;
  }
  return r.sinfo("ret", a.ret, b.ret, BindMode::kUse);
}

// ---------------------------------------------------------------------------
// Graph level (the reducer compares the kinds, Var against DataflowVar included).

template <class R>
bool reduce_fields(R& r, const VarNode& a, const VarNode& b) {
  return r.use_var(a, b);
}
template <class R>
bool reduce_fields(R& r, const GlobalVarNode& a, const GlobalVarNode& b) {
  return r.label(a.name, b.name);
}
template <class R>
bool reduce_fields(R& r, const ConstantNode& a, const ConstantNode& b) {
  return r.constant(a, b);
}
template <class R>
bool reduce_fields(R& r, const TupleNode& a, const TupleNode& b) {
  return r.list("fields", a.fields, b.fields, "fields");
}
template <class R>
bool reduce_fields(R& r, const TupleGetItemNode& a, const TupleGetItemNode& b) {
  return r.value("index", a.index, b.index) && r.expr("tuple", a.tuple, b.tuple);
}
template <class R>
bool reduce_fields(R& r, const CallNode& a, const CallNode& b) {
  return r.expr("callee", a.callee, b.callee) && r.list("args", a.args, b.args, "arguments") &&
         r.attrs("attrs", a.attrs, b.attrs) &&
         r.list("sinfo_args", a.sinfo_args, b.sinfo_args, "annotations");
}
template <class R>
bool reduce_fields(R& r, const ShapeExprNode& a, const ShapeExprNode& b) {
  return r.list("values", a.values, b.values, "dims");
}
template <class R>
bool reduce_fields(R& r, const PrimValueNode& a, const PrimValueNode& b) {
  return r.sym("value", a.value, b.value, BindMode::kUse);
}
template <class R>
bool reduce_fields(R& r, const StringImmNode& a, const StringImmNode& b) {
  return r.label(a.value, b.value);
}
template <class R>
bool reduce_fields(R& r, const IfNode& a, const IfNode& b) {
  return r.expr("cond", a.cond, b.cond) && r.expr("then_branch", a.then_branch, b.then_branch) &&
         r.expr("else_branch", a.else_branch, b.else_branch);
}
// Its annotation is the only description of an extern function's signature.
template <class R>
bool reduce_fields(R& r, const ExternFuncNode& a, const ExternFuncNode& b) {
  return r.label(a.symbol, b.symbol) &&
         r.sinfo("struct_info", a.struct_info(), b.struct_info(), BindMode::kUse);
}
template <class R>
bool reduce_fields(R& r, const OpNode& a, const OpNode& b) {
  return r.label(a.name, b.name);
}

// A graph variable where it is defined: its kind and annotation (whose bare
// dims bind in `mode`), then the variable itself is bound.
template <class R>
bool reduce_var_def(R& r, const Var& a, const Var& b, BindMode mode) {
  return r.label(a.kind(), b.kind()) &&
         r.sinfo("struct_info", a.struct_info(), b.struct_info(), mode) && r.bind_var(a, b);
}

inline std::string binding_kind(const Binding& b) {
  return (b.is_match_cast ? "match_cast of " : "binding of ") + b.var.name_hint();
}

// The value first: the variable is bound after it (and after a match_cast's
// pattern, whose variables the pattern binds together).
template <class R>
bool reduce_fields(R& r, const Binding& a, const Binding& b) {
  if (!r.value(nullptr, a.is_match_cast, b.is_match_cast,
               [&] { return binding_kind(a) + " vs " + binding_kind(b); }) ||
      !r.expr("value", a.value, b.value)) {
    return false;
  }
  if (a.is_match_cast && !(r.define_together(a.cast_sinfo, b.cast_sinfo) &&
                           r.sinfo("pattern", a.cast_sinfo, b.cast_sinfo, BindMode::kDefine))) {
    return false;
  }
  return r.define_var("var", a.var, b.var, BindMode::kUse);
}

inline std::string block_kind(const BindingBlock& b) {
  return b.is_dataflow ? "dataflow block" : "binding block";
}

template <class R>
bool reduce_fields(R& r, const BindingBlock& a, const BindingBlock& b) {
  return r.value(nullptr, a.is_dataflow, b.is_dataflow, [&] {
    return block_kind(a) + " vs " + block_kind(b);
  }) && r.list("bindings", a.bindings, b.bindings, "bindings");
}

template <class R>
bool reduce_fields(R& r, const SeqExprNode& a, const SeqExprNode& b) {
  return r.list("blocks", a.blocks, b.blocks, "blocks") && r.expr("body", a.body, b.body);
}

template <class R>
bool reduce_fields(R& r, const SymBound& a, const SymBound& b) {
  return r.value(nullptr, a.upper, b.upper) && r.sym(nullptr, a.var, b.var, BindMode::kUse);
}

inline std::string purity(bool pure) { return pure ? "pure" : "impure"; }

// The parameters bind first (all their variables at once), so that bounds,
// annotations and the body see them.
template <class R>
bool reduce_fields(R& r, const FunctionNode& a, const FunctionNode& b) {
  return r.define_together(a.params, b.params) &&
         r.list("params", a.params, b.params, "parameters",
                [&](const Var& x, const Var& y) {
                  return r.define_var(nullptr, x, y, BindMode::kDefine);
                }) &&
         r.list("upper_bounds", a.upper_bounds, b.upper_bounds, "bounds") &&
         r.attrs("attrs", a.attrs, b.attrs) &&
         r.value("pure", a.pure, b.pure,
                 [&] { return purity(a.pure) + " vs " + purity(b.pure); }) &&
         r.sinfo("ret", a.ret, b.ret, BindMode::kUse) && r.expr("body", a.body, b.body);
}

// ---------------------------------------------------------------------------
// Loop level.

// A buffer where it is defined (a PrimFunc parameter, an Allocate): dtype,
// scope, then shape and strides, whose bare variables it binds; then the
// buffer itself is bound.
template <class R>
bool reduce_buffer_def(R& r, const Buffer& a, const Buffer& b) {
  auto describe = [](const Buffer& x) {
    return "Buffer " + x.name() + " (" + x.dtype().to_string() + ", " +
           std::string(buffer_scope_name(x->scope)) + ")";
  };
  auto differ = [&] { return describe(a) + " vs " + describe(b); };
  auto define_dim = [&](const SymExpr& x, const SymExpr& y) {
    return r.sym(nullptr, x, y, BindMode::kDefine);
  };
  return r.value(nullptr, a.dtype(), b.dtype(), differ) &&
         r.value(nullptr, a->scope, b->scope, differ) &&
         r.list("shape", a.shape(), b.shape(), "dims", define_dim) &&
         r.list("strides", a->strides, b->strides, "strides", define_dim) && r.bind_buffer(a, b);
}

inline std::string param_kind(const PrimParam& p) { return p.buffer ? "buffer" : "scalar"; }

template <class R>
bool reduce_fields(R& r, const PrimParam& a, const PrimParam& b) {
  if (!r.value(nullptr, a.buffer.has_value(), b.buffer.has_value(),
               [&] { return param_kind(a) + " parameter vs " + param_kind(b) + " parameter"; })) {
    return false;
  }
  return a.buffer ? r.define_buffer(nullptr, *a.buffer, *b.buffer)
                  : r.define_sym(nullptr, *a.scalar, *b.scalar);
}

template <class R>
bool reduce_fields(R& r, const PrimFuncNode& a, const PrimFuncNode& b) {
  return r.define_together(a.params, b.params) &&
         r.list("params", a.params, b.params, "parameters") && r.attrs("attrs", a.attrs, b.attrs) &&
         r.stmt("body", a.body, b.body);
}

template <class R>
bool reduce_fields(R& r, const ForNode& a, const ForNode& b) {
  return r.sym("min", a.min, b.min, BindMode::kUse) &&
         r.sym("extent", a.extent, b.extent, BindMode::kUse) &&
         r.value("kind", a.for_kind, b.for_kind) &&
         r.define_sym("loop_var", a.loop_var, b.loop_var) && r.stmt("body", a.body, b.body);
}
template <class R>
bool reduce_fields(R& r, const SeqStmtNode& a, const SeqStmtNode& b) {
  return r.list("stmts", a.stmts, b.stmts, "statements");
}
template <class R>
bool reduce_fields(R& r, const BufferStoreNode& a, const BufferStoreNode& b) {
  return r.use_buffer("buffer", a.buffer, b.buffer) &&
         r.list("indices", a.indices, b.indices, "values") &&
         r.sym("value", a.value, b.value, BindMode::kUse);
}
template <class R>
bool reduce_fields(R& r, const IfThenElseNode& a, const IfThenElseNode& b) {
  return r.sym("cond", a.cond, b.cond, BindMode::kUse) &&
         r.stmt("then_case", a.then_case, b.then_case) &&
         r.stmt("else_case", a.else_case, b.else_case);
}
template <class R>
bool reduce_fields(R& r, const LetStmtNode& a, const LetStmtNode& b) {
  return r.sym("value", a.value, b.value, BindMode::kUse) && r.define_sym("var", a.var, b.var) &&
         r.stmt("body", a.body, b.body);
}
template <class R>
bool reduce_fields(R& r, const AllocateNode& a, const AllocateNode& b) {
  return r.define_buffer("buffer", a.buffer, b.buffer) && r.stmt("body", a.body, b.body);
}
template <class R>
bool reduce_fields(R& r, const EvaluateNode& a, const EvaluateNode& b) {
  return r.sym("value", a.value, b.value, BindMode::kUse);
}
template <class R>
bool reduce_fields(R& r, const IterVar& a, const IterVar& b) {
  return r.value("type", a.type, b.type) && r.sym("extent", a.extent, b.extent, BindMode::kUse) &&
         r.sym("binding", a.binding, b.binding, BindMode::kUse) &&
         r.define_sym("var", a.var, b.var);
}
// Block names matter: schedules refer to blocks by name.
template <class R>
bool reduce_fields(R& r, const BlockNode& a, const BlockNode& b) {
  return r.value("name", a.name, b.name) &&
         r.list("iter_vars", a.iter_vars, b.iter_vars, "iteration variables") &&
         r.stmt("init", a.init, b.init) && r.stmt("body", a.body, b.body);
}
// An extern call: the kernel's name, then its arguments (a region by its
// buffer and first element, a scalar by its value).
template <class R>
bool reduce_fields(R& r, const ExternArg& a, const ExternArg& b) {
  auto kind = [](const ExternArg& x) { return std::string(x.is_region() ? "region" : "scalar"); };
  if (!r.value(nullptr, a.is_region(), b.is_region(),
               [&] { return kind(a) + " argument vs " + kind(b) + " argument"; })) {
    return false;
  }
  if (!a.is_region()) return r.sym("value", a.value, b.value, BindMode::kUse);
  return r.use_buffer("buffer", a.buffer, b.buffer) &&
         r.list("indices", a.indices, b.indices, "values");
}
template <class R>
bool reduce_fields(R& r, const ExternCallNode& a, const ExternCallNode& b) {
  return r.value("name", a.name, b.name) && r.list("args", a.args, b.args, "arguments");
}

}  // namespace relax::detail
