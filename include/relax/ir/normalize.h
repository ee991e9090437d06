// Normalisation: giving every expression its StructInfo.
//
// Deduction runs bottom-up and once per node: an expression whose children
// carry StructInfo gets its own from theirs, never by revisiting them, so
// normalising a function is linear in its size.
//
//   Tuple / TupleGetItem    the fields' annotations / the field's (index checked)
//   ShapeExpr / PrimValue   Shape[(dims)] / Prim[dtype, value]
//   Call of an Op           the op's deduction function (op.h)
//   Call of a function      cross-function deduction (below)
//   If                      struct_info_lca of the branches
//   SeqExpr                 the body's, erased to the symbolic variables in scope
//   Function                Func[(params) -> ret]
//
// Cross-function deduction. A call of a GlobalVar, a Var or an ExternFunc with
// a FuncStructInfo matches the parameter annotations against the arguments'
// and solves for the callee's symbolic variables: a parameter dim (or Prim
// value) that is a bare variable binds it to the argument's dim, the first time
// it is seen; then a dim linear in one unbound variable, such as `n * 2`, binds
// it when the argument's dim solves it exactly (10 gives n = 5; 7 is an error;
// a symbolic dim binds only when the Analyzer proves the division exact, see
// relax/shape/solve.h); every other dim is checked. The return annotation is
// then erased to the bound variables and substituted:
//
//   f(x: Tensor[(n, m), f32]) -> Tensor[(m + 1, n), f32]
//   f(Tensor[(10, 11), f32])    -> Tensor[(12, 10), f32]
//   f(Tensor[(n0, m0), f32])    -> Tensor[(m0 + 1, n0), f32]
//   f(Tensor[ndim=2, f32])      -> Tensor[ndim=2, f32]
//
// An argument that can never fit its parameter (check_base_of gives kFail) is
// an error; one that may fit is accepted and left to a run-time check. A
// GlobalVar without StructInfo takes its function's from DeduceContext::module
// (an error when the module lacks it; opaque when there is no module). A
// callee known only as an Object gives an Object.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/op.h"

namespace relax {

/// Whether `e` is a value whose use costs nothing and that a binding never
/// needs to hold: a variable, a constant, a literal (shape, Prim, string), or a
/// function or operator named directly. The builder binds every other operand;
/// passes may substitute these freely.
bool is_leaf_value(const Expr& e);

/// The StructInfo of `e`, computed from the StructInfo of its children, which
/// must be normalised. Errors name the construct (or op) and what is wrong.
absl::StatusOr<StructInfo> deduce_struct_info(const Expr& e, DeduceContext& ctx);

/// OK when no handle in the not yet normalised part of `value` is a
/// default-constructed one (an undefined Var, Expr, SymExpr or StructInfo: a
/// call's callee, arguments, annotation arguments and symbolic attributes, the
/// fields of tuples, the dims of shapes...); else InvalidArgument naming the
/// call and the argument, e.g. "add: argument 1 (rhs) is undefined (a
/// default-constructed handle)". `what` names `value` itself. normalize and
/// the builder run it first.
absl::Status check_defined(const Expr& value, std::string_view what = "the value");
/// The same for an annotation: defined, and so are the dims of its Tensors
/// and Shapes and its fields, parameters and return. `what` names it.
absl::Status check_defined(const StructInfo& sinfo, std::string_view what);

/// `e` with its StructInfo, normalising bottom-up every sub-expression that has
/// none (a node that has one is kept as it is, children included). Bindings
/// inside a SeqExpr keep their variables: a variable's annotation is fixed when
/// it is created. An undefined handle in `e` is an error (check_defined).
absl::StatusOr<Expr> normalize(const Expr& e, DeduceContext& ctx);

/// The StructInfo of a call of a function annotated `callee` with arguments
/// annotated `args` (cross-function deduction, see above). `callee_name` is
/// used in errors ("call to `f`: ...").
absl::StatusOr<StructInfo> deduce_func_call(const FuncStructInfoNode& callee,
                                            const std::vector<StructInfo>& args, Analyzer& analyzer,
                                            const std::string& callee_name);

}  // namespace relax
