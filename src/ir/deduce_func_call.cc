// Cross-function deduction: the StructInfo of a call of a function whose
// parameter annotations mention symbolic variables.
//
// Stages:
//   1. bind: walk each (parameter, argument) pair of annotations in step; a
//      parameter dim or Prim value that is a bare variable, not yet bound, is
//      bound to the argument's dim. Nothing is solved beyond that (`n * 2`
//      against 10 does not bind n).
//   2. check: substitute the bindings into each parameter and compare with the
//      argument by check_base_of; kFail is an error, kRuntimeCheck is accepted.
//   3. result: erase from the return annotation what mentions an unbound
//      variable, then substitute and simplify.
#include "relax/ir/normalize.h"

namespace relax {
namespace {

void bind_dims(const std::optional<std::vector<SymExpr>>& param,
               const std::optional<std::vector<SymExpr>>& arg, SymVarMap<SymExpr>& bindings) {
  if (!param || !arg || param->size() != arg->size()) return;
  for (size_t i = 0; i < param->size(); ++i) {
    const SymExpr& p = (*param)[i];
    if (p.is_var()) bindings.try_emplace(SymVar::from_expr(p), (*arg)[i]);
  }
}

void bind(const StructInfo& param, const StructInfo& arg, SymVarMap<SymExpr>& bindings) {
  if (param.kind() != arg.kind()) return;
  switch (param.kind()) {
    case StructInfoKind::kPrim: {
      const auto* p = param.as<PrimStructInfoNode>();
      const auto* a = arg.as<PrimStructInfoNode>();
      if (p->value.defined() && p->value.is_var() && a->value.defined() &&
          p->value.dtype() == a->value.dtype()) {
        bindings.try_emplace(SymVar::from_expr(p->value), a->value);
      }
      return;
    }
    case StructInfoKind::kShape:
      bind_dims(param.as<ShapeStructInfoNode>()->values, arg.as<ShapeStructInfoNode>()->values,
                bindings);
      return;
    case StructInfoKind::kTensor:
      bind_dims(param.as<TensorStructInfoNode>()->shape, arg.as<TensorStructInfoNode>()->shape,
                bindings);
      return;
    case StructInfoKind::kTuple: {
      const auto& p = param.as<TupleStructInfoNode>()->fields;
      const auto& a = arg.as<TupleStructInfoNode>()->fields;
      if (p.size() != a.size()) return;
      for (size_t i = 0; i < p.size(); ++i) bind(p[i], a[i], bindings);
      return;
    }
    case StructInfoKind::kObject:
    case StructInfoKind::kFunc:
      return;  // a function-typed parameter defines no variables of the callee
  }
}

}  // namespace

absl::StatusOr<StructInfo> deduce_func_call(const FuncStructInfoNode& callee,
                                            const std::vector<StructInfo>& args, Analyzer& analyzer,
                                            const std::string& callee_name) {
  if (!callee.params) return callee.ret;
  const std::vector<StructInfo>& params = *callee.params;
  std::string prefix = "call to `" + callee_name + "`: ";
  if (params.size() != args.size()) {
    return absl::InvalidArgumentError(prefix + "expected " + std::to_string(params.size()) +
                                      " arguments, got " + std::to_string(args.size()));
  }
  SymVarMap<SymExpr> bindings;
  for (size_t i = 0; i < params.size(); ++i) bind(params[i], args[i], bindings);
  for (size_t i = 0; i < params.size(); ++i) {
    StructInfo expected = substitute_sinfo(params[i], bindings, analyzer);
    if (check_base_of(expected, args[i], analyzer) == BaseCheck::kFail) {
      return absl::InvalidArgumentError(prefix + "argument " + std::to_string(i) + ": expected " +
                                        expected.to_string() + ", got " + args[i].to_string());
    }
  }
  StructInfo ret =
      erase_to_scope(callee.ret, [&](const SymVar& v) { return bindings.contains(v); });
  return substitute_sinfo(ret, bindings, analyzer);
}

}  // namespace relax
