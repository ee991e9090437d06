// Structural equality and hashing of IR, up to the names of bound variables.
//
// Two pieces of IR are structurally equal when they have the same tree and
// every variable they bind is bound at corresponding places (alpha-equivalence):
//
//   fn(x: Tensor[(n,), f32]) { lv = add(x, x); return lv }
//   fn(y: Tensor[(m,), f32]) { z = add(y, y);  return z }      equal
//   fn(y: Tensor[(m,), f32]) { z = add(y, y);  return y }      not equal
//
// What binds, and so what is compared by position rather than identity:
//   - graph Vars and DataflowVars: function parameters, bindings (match_cast too);
//   - SymVars: a bare-variable dim (or Prim value) of a parameter annotation, of a
//     match_cast pattern or of a Func annotation's parameters; loop variables,
//     `let` variables, block iteration variables; PrimFunc scalar parameters and
//     the bare-variable dims (and strides) of PrimFunc buffer parameters;
//   - Buffers: PrimFunc parameters and Allocate.
// A variable is bound where it first occurs at such a place; every later
// occurrence is a use. A parameter list binds all its variables at once, since
// a parameter may use a variable that a later one binds
// (`fn(x: Tensor[(n * 2,)], y: Tensor[(n,)])`). Anything free (bound nowhere
// inside the compared IR) is compared by identity. GlobalVars compare by name; Constants by dtype,
// shape and bytes; attributes by value. Variable names (name hints) never matter; block names do,
// because schedules refer to blocks by name. Annotations are compared where they are written
// (parameters, binding variables, match_cast patterns, sinfo_args, return annotations), not on
// every deduced node.
//
// Modules compare as maps from names to functions (the order of addition does
// not matter), plus their attributes. structural_hash is consistent with
// structural_equal: equal IR hashes equal (bound variables hash by the order in
// which they are bound, free ones by identity).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/struct_info.h"
#include "relax/shape/sym_expr.h"

namespace relax {

/// Alpha-equivalence of graph-level expressions (functions and PrimFuncs included).
bool structural_equal(const Expr& a, const Expr& b);
/// Alpha-equivalence of loop-level statements.
bool structural_equal(const Stmt& a, const Stmt& b);
/// Equality of annotations; variables are free (identity) except those that the
/// parameters of a Func annotation bind.
bool structural_equal(const StructInfo& a, const StructInfo& b);
/// The same function names with equal functions, and equal attributes.
bool structural_equal(const IRModule& a, const IRModule& b);
/// Equality of SymExprs where a variable of `a` found in `a_to_b` stands for its
/// image in `b`; other variables compare by identity.
bool structural_equal(const SymExpr& a, const SymExpr& b, const SymVarMap<SymVar>& a_to_b);

/// Hashes consistent with the structural_equal overloads above.
size_t structural_hash(const Expr& e);
size_t structural_hash(const Stmt& s);
size_t structural_hash(const StructInfo& sinfo);
size_t structural_hash(const IRModule& mod);

/// Where two modules first differ, or nullopt when they are structurally equal:
/// a path from the function to the differing node and both sides, e.g.
///   @main.body.blocks[0].bindings[2].value.args[1]: Var lv1 vs Var lv2
/// Functions are visited in the order of `a`.
std::optional<std::string> first_difference(const IRModule& a, const IRModule& b);
/// As above for two expressions; the path starts at the expression itself
/// (`params[0].struct_info: ...`, or `<root>: ...` for the top node).
std::optional<std::string> first_difference(const Expr& a, const Expr& b);
std::optional<std::string> first_difference(const Stmt& a, const Stmt& b);
std::optional<std::string> first_difference(const StructInfo& a, const StructInfo& b);

/// Hash and equality functors for hash maps keyed by IR up to alpha-equivalence
/// (common-subexpression elimination, deduplicating kernels).
struct StructuralHash {
  size_t operator()(const Expr& e) const { return structural_hash(e); }
  size_t operator()(const Stmt& s) const { return structural_hash(s); }
  size_t operator()(const StructInfo& s) const { return structural_hash(s); }
};
struct StructuralEqual {
  bool operator()(const Expr& a, const Expr& b) const { return structural_equal(a, b); }
  bool operator()(const Stmt& a, const Stmt& b) const { return structural_equal(a, b); }
  bool operator()(const StructInfo& a, const StructInfo& b) const { return structural_equal(a, b); }
};

}  // namespace relax
