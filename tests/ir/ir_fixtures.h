// Small helpers that build IR nodes directly for the structural-equality,
// visitor and well-formedness tests. Graph-level values are normalised as they
// are built, so the results look like what the builder produces.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/normalize.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/visitor.h"
#include "relax/support/check.h"

namespace relax::fixtures {

inline DataType f32() { return DataType::float32(); }

inline StructInfo tensor(std::vector<SymExpr> dims) { return tensor_sinfo(std::move(dims), f32()); }

/// `e` normalised without a module; aborts on a deduction error.
inline Expr norm(const Expr& e) {
  Analyzer analyzer;
  DeduceContext ctx{analyzer};
  absl::StatusOr<Expr> out = normalize(e, ctx);
  RELAX_CHECK(out.ok()) << out.status().message();
  return *out;
}

/// A normalised call of the registered op `name`.
inline Expr op_call(std::string_view name, std::vector<Expr> args) {
  return norm(make_call(make_op_or_die(name), std::move(args)));
}

inline Binding bind(Var var, Expr value) { return {std::move(var), std::move(value), false, {}}; }

inline Binding match(Var var, Expr value, StructInfo pattern) {
  return {std::move(var), std::move(value), true, std::move(pattern)};
}

inline BindingBlock dataflow(std::vector<Binding> bindings) { return {std::move(bindings), true}; }
inline BindingBlock plain(std::vector<Binding> bindings) { return {std::move(bindings), false}; }

/// A DataflowVar / Var annotated like `value`.
inline Var dvar(std::string name, const Expr& value) {
  return DataflowVar(std::move(name), value.struct_info());
}
inline Var var(std::string name, const Expr& value) {
  return Var(std::move(name), value.struct_info());
}

/// fn(params) { blocks; return result } with the result's annotation as `ret`.
inline Expr function(std::vector<Var> params, std::vector<BindingBlock> blocks, Expr result) {
  Expr body = norm(make_seq_expr(std::move(blocks), std::move(result)));
  return make_function(std::move(params), body, body.struct_info());
}

// ---------------------------------------------------------------------------
// Loop level (nodes built directly).

inline Stmt loop(SymVar v, SymExpr extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return Stmt(std::make_shared<const ForNode>(std::move(v), SymExpr(0), std::move(extent), kind,
                                              std::move(body)));
}

// An integer constant `value` is taken in the buffer's dtype (a store must
// match it, see well_formed.h).
inline Stmt store(Buffer b, std::vector<SymExpr> indices, SymExpr value) {
  if (std::optional<int64_t> c = value.as_const(); c && value.dtype() != b.dtype()) {
    value = b.dtype().is_float() ? SymExpr::float_imm(static_cast<double>(*c), b.dtype())
                                 : SymExpr::int_imm(*c, b.dtype());
  }
  return Stmt(
      std::make_shared<const BufferStoreNode>(std::move(b), std::move(indices), std::move(value)));
}

inline Stmt seq(std::vector<Stmt> stmts) {
  return Stmt(std::make_shared<const SeqStmtNode>(std::move(stmts)));
}

inline Stmt let(SymVar v, SymExpr value, Stmt body) {
  return Stmt(std::make_shared<const LetStmtNode>(std::move(v), std::move(value), std::move(body)));
}

inline Stmt if_then(SymExpr cond, Stmt then_case) {
  return Stmt(
      std::make_shared<const IfThenElseNode>(std::move(cond), std::move(then_case), Stmt()));
}

inline Stmt allocate(Buffer b, Stmt body) {
  return Stmt(std::make_shared<const AllocateNode>(std::move(b), std::move(body)));
}

inline Stmt block(std::string name, std::vector<IterVar> iter_vars, Stmt body, Stmt init = Stmt()) {
  return Stmt(std::make_shared<const BlockNode>(std::move(name), std::move(iter_vars),
                                                std::move(init), std::move(body)));
}

inline PrimParam buffer_param(Buffer b) { return {std::move(b), std::nullopt}; }
inline PrimParam scalar_param(SymVar v) { return {std::nullopt, std::move(v)}; }

inline Expr prim_func(std::vector<PrimParam> params, Stmt body, Attrs attrs = {}) {
  return Expr(std::make_shared<const PrimFuncNode>(std::move(params), std::move(body),
                                                   std::move(attrs),
                                                   opaque_func_sinfo(object_sinfo(), false)));
}

/// prim_func(A, C: Buffer[(n,), f32]) { for i in [0, n): C[i] = A[i] + 1.0 }
inline Expr fill_kernel(const std::string& n_name = "n", const std::string& i_name = "i") {
  SymVar n(n_name);
  SymVar i(i_name);
  Buffer a("A", f32(), {n});
  Buffer c("C", f32(), {n});
  SymExpr value = buffer_load(a, {i}) + SymExpr::float_imm(1.0, f32());
  return prim_func({buffer_param(a), buffer_param(c)}, loop(i, n, store(c, {i}, value)));
}

/// Gives every graph variable, parameter or binding, a fresh variable with
/// another name (`<name>_`); uses follow. The result is alpha-equivalent.
class Renamer : public ExprMutator {
 public:
  using ExprMutator::ExprMutator;
  Var visit_var_def(const Var& v) override { return copy(v); }
  void visit_binding(const Binding& b) override {
    Expr value = visit_expr(b.value);
    Var fresh = copy(b.var);
    set_var_remap(b.var, fresh);
    emit_binding({fresh, value, b.is_match_cast, b.cast_sinfo});
  }

 private:
  static Var copy(const Var& v) {
    return v.is_dataflow() ? DataflowVar(v.name_hint() + "_", v.struct_info())
                           : Var(v.name_hint() + "_", v.struct_info());
  }
};

}  // namespace relax::fixtures
