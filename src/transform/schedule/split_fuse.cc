// split and fuse (relax/transform/schedule.h).
//
// split(i, f): `for i in range(min, extent=n) { body }` becomes
//   for i_o in range(ceildiv(n, f)) { for i_i in range(f) { [if i_o * f + i_i < n] body' } }
// with i replaced by min + i_o * f + i_i in body'. The tail check is left out
// when the Analyzer proves n a multiple of f (facts: the kernel's buffer dims
// are >= 0); elsewhere simplify-loops removes it wherever the facts of the
// enclosing loops and branches prove it. The check goes around the innermost
// statement of the perfectly nested loops under i_i whose bounds do not depend
// on i (so that those loops stay perfectly nested with i_o and i_i for reorder
// and fuse, and no loop bound is evaluated at an index past the end).
//
// fuse(i, j): `for i in range(a, extent=n) { for j in range(b, extent=m) { body } }`
// becomes `for i_j in range(n * m) { body' }` with i = a + floordiv(i_j, m) and
// j = b + floormod(i_j, m); m must not depend on i.
#include <optional>

#include "absl/strings/str_cat.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

/// An Analyzer knowing that the kernel's bare-variable buffer dims are >= 0.
Analyzer kernel_analyzer(const Expr& func) {
  Analyzer analyzer;
  for (const PrimParam& param : func.as<PrimFuncNode>()->params) {
    if (!param.buffer) continue;
    for (const SymExpr& dim : param.buffer->shape()) {
      if (dim.is_var() && dim.dtype() == DataType::int64()) analyzer.bind(SymVar::from_expr(dim), 0);
    }
  }
  return analyzer;
}

/// `s` with `cond` guarding its innermost statement below loops whose bounds
/// do not mention `vars`.
Stmt guard_innermost(const Stmt& s, const SymExpr& cond, const std::vector<SymVar>& vars) {
  if (const auto* loop = s.as<ForNode>()) {
    bool independent = true;
    for (const SymVar& v : vars) independent = independent && !mentions_var(loop->min, v) && !mentions_var(loop->extent, v);
    if (independent) {
      return make_for(loop->loop_var, loop->min, loop->extent, loop->for_kind, guard_innermost(loop->body, cond, vars));
    }
  }
  return make_if_then_else(cond, s);
}

/// A printed loop name without its occurrence suffix (`j#2` -> `j`): the stem of new names.
std::string stem(const std::string& name) { return name.substr(0, name.find('#')); }

bool is_zero(const SymExpr& e) { return e.as_const() == std::optional<int64_t>(0); }

}  // namespace

absl::StatusOr<Expr> split_loop(const Expr& func, const LoopRef& loop, int64_t factor, SymVar* outer_var,
                                SymVar* inner_var) {
  if (factor < 1) return loop_error(func, "split", loop.name, absl::StrCat("the factor must be >= 1, got ", factor));
  const ForNode& node = *loop.node;
  const DataType dtype = node.loop_var.dtype();
  if (!dtype.is_int()) return loop_error(func, "split", loop.name, "its variable is not an integer");
  SymVar outer(stem(loop.name) + "_o", dtype);
  SymVar inner(stem(loop.name) + "_i", dtype);
  const SymExpr f = SymExpr::int_imm(factor, dtype);
  Analyzer analyzer = kernel_analyzer(func);
  const SymExpr outer_extent = analyzer.simplify(floordiv(node.extent + SymExpr::int_imm(factor - 1, dtype), f));
  const SymExpr index = SymExpr(outer) * f + inner;
  SymVarMap<SymExpr> map;
  map.emplace(node.loop_var, is_zero(node.min) ? index : node.min + index);
  Stmt body = substitute_stmt(node.body, map);
  if (!analyzer.prove(floormod(node.extent, f) == 0)) body = guard_innermost(body, index < node.extent, {outer, inner});
  const ForKind outer_kind = node.for_kind == ForKind::kParallel ? ForKind::kParallel : ForKind::kSerial;
  const ForKind inner_kind =
      node.for_kind == ForKind::kVectorized || node.for_kind == ForKind::kUnrolled ? node.for_kind : ForKind::kSerial;
  Stmt result = make_for(outer, SymExpr::int_imm(0, dtype), outer_extent, outer_kind,
                         make_for(inner, SymExpr::int_imm(0, dtype), f, inner_kind, body));
  if (outer_var != nullptr) *outer_var = outer;
  if (inner_var != nullptr) *inner_var = inner;
  return replace_stmt(func, loop.node, result);
}

absl::StatusOr<Expr> fuse_loops(const Expr& func, const LoopRef& outer, const LoopRef& inner, SymVar* fused_var) {
  if (!outer.node->body.same_as(inner.stmt)) {
    return loop_error(func, "fuse", outer.name,
                      absl::StrCat("its body is not exactly the loop `", inner.name, "` (not perfectly nested)"));
  }
  const SymVar& ov = outer.node->loop_var;
  if (mentions_var(inner.node->min, ov) || mentions_var(inner.node->extent, ov)) {
    return loop_error(func, "fuse", outer.name, absl::StrCat("the bounds of `", inner.name, "` depend on it"));
  }
  const DataType dtype = ov.dtype();
  if (inner.node->loop_var.dtype() != dtype) {
    return loop_error(func, "fuse", outer.name,
                      absl::StrCat("its variable is ", dtype.to_string(), " and that of `", inner.name, "` is ",
                                   inner.node->loop_var.dtype().to_string()));
  }
  SymVar fused(stem(outer.name) + "_" + stem(inner.name), dtype);
  Analyzer analyzer = kernel_analyzer(func);
  const SymExpr& m = inner.node->extent;
  SymExpr o = floordiv(fused, m);
  SymExpr i = floormod(fused, m);
  SymVarMap<SymExpr> map;
  map.emplace(ov, is_zero(outer.node->min) ? o : outer.node->min + o);
  map.emplace(inner.node->loop_var, is_zero(inner.node->min) ? i : inner.node->min + i);
  Stmt body = substitute_stmt(inner.node->body, map);
  const ForKind kind = outer.node->for_kind == inner.node->for_kind ? outer.node->for_kind : ForKind::kSerial;
  Stmt result = make_for(fused, SymExpr::int_imm(0, dtype), analyzer.simplify(outer.node->extent * m), kind, body);
  if (fused_var != nullptr) *fused_var = fused;
  return replace_stmt(func, outer.node, result);
}

absl::StatusOr<Expr> split(const Expr& func, std::string_view loop, int64_t factor) {
  absl::StatusOr<LoopRef> ref = find_loop(func, loop);
  if (!ref.ok()) return ref.status();
  return split_loop(func, *ref, factor, nullptr, nullptr);
}

absl::StatusOr<Expr> fuse(const Expr& func, std::string_view outer, std::string_view inner) {
  absl::StatusOr<LoopRef> o = find_loop(func, outer);
  if (!o.ok()) return o.status();
  absl::StatusOr<LoopRef> i = find_loop(func, inner);
  if (!i.ok()) return i.status();
  return fuse_loops(func, *o, *i, nullptr);
}

}  // namespace relax::transform::schedule
