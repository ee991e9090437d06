// Cross-function deduction: the StructInfo of a call of a function whose
// parameter annotations mention symbolic variables.
//
// Stages:
//   1. bind: walk each (parameter, argument) pair of annotations in step; a
//      parameter dim or Prim value that is a bare variable, not yet bound, is
//      bound to the argument's dim.
//   2. solve: the parameter dims that are not bare variables (Tensor and Shape
//      dims, through tuples) are read as coeff * v + rest (relax/shape/solve.h)
//      with the bound variables known; for one whose v is still unbound,
//      value = argument dim - rest (bindings substituted) must be coeff * v:
//        - value an integer constant: v = value / coeff when coeff divides it,
//          otherwise the call is an error (no integer v fits: `n * 2` against 7);
//        - value symbolic: v = floordiv(value, coeff), simplified, when the
//          Analyzer proves floormod(value, coeff) == 0 (`n * 2` against
//          `m * 2` binds n = m); otherwise v stays unbound (`n * 2` against k).
//      Each dim is tried once (its value no longer changes once its rest is
//      bound); the stage repeats while it binds something, since a variable
//      bound by one dim may complete the rest of another. This mirrors the
//      rule by which parameters define their variables (struct_info.h).
//   3. check: substitute the bindings into each parameter and compare with the
//      argument by check_base_of; kFail is an error, kRuntimeCheck is accepted.
//   4. result: erase from the return annotation what mentions an unbound
//      variable, then substitute and simplify.
//
// Not handled: Prim values that are expressions are only checked (stage 3),
// never solved, as they define nothing either.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "relax/ir/normalize.h"
#include "relax/shape/solve.h"

namespace relax {
namespace {

// A parameter dim that is not a bare variable, with the argument's dim it meets.
struct DimPair {
  SymExpr param;
  SymExpr arg;
  std::string where;  ///< "argument 0, field 1, dim 2", for errors
  bool done = false;  ///< solved, or its value found undecidable
};

void bind_dims(const std::optional<std::vector<SymExpr>>& param,
               const std::optional<std::vector<SymExpr>>& arg, const std::string& where,
               SymVarMap<SymExpr>& bindings, std::vector<DimPair>& pairs) {
  if (!param || !arg || param->size() != arg->size()) return;
  for (size_t i = 0; i < param->size(); ++i) {
    const SymExpr& p = (*param)[i];
    if (p.is_var()) {
      bindings.try_emplace(SymVar::from_expr(p), (*arg)[i]);
    } else {
      pairs.push_back(DimPair{p, (*arg)[i], where + ", dim " + std::to_string(i)});
    }
  }
}

void bind_param(const StructInfo& param, const StructInfo& arg, const std::string& where,
          SymVarMap<SymExpr>& bindings, std::vector<DimPair>& pairs) {
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
                where, bindings, pairs);
      return;
    case StructInfoKind::kTensor:
      bind_dims(param.as<TensorStructInfoNode>()->shape, arg.as<TensorStructInfoNode>()->shape,
                where, bindings, pairs);
      return;
    case StructInfoKind::kTuple: {
      const auto& p = param.as<TupleStructInfoNode>()->fields;
      const auto& a = arg.as<TupleStructInfoNode>()->fields;
      if (p.size() != a.size()) return;
      for (size_t i = 0; i < p.size(); ++i) {
        bind_param(p[i], a[i], where + ", field " + std::to_string(i), bindings, pairs);
      }
      return;
    }
    case StructInfoKind::kObject:
    case StructInfoKind::kFunc:
      return;  // a function-typed parameter defines no variables of the callee
  }
}

// a / b when b divides a and the quotient is an int64; b != 0.
std::optional<int64_t> exact_quotient(int64_t a, int64_t b) {
  if (b == -1) {
    if (a == std::numeric_limits<int64_t>::min()) return std::nullopt;
    return -a;
  }
  if (a % b != 0) return std::nullopt;
  return a / b;
}

// Stage 2; an error when a dim can never fit.
absl::Status solve(std::vector<DimPair>& pairs, SymVarMap<SymExpr>& bindings, Analyzer& analyzer,
                   const std::string& prefix) {
  auto bound = [&](const SymVar& v) { return bindings.contains(v); };
  for (bool progress = true; progress;) {
    progress = false;
    for (DimPair& pair : pairs) {
      if (pair.done || pair.arg.dtype() != DataType::int64()) continue;
      std::optional<LinearSolution> s = solve_linear(pair.param, bound);
      if (!s) continue;  // nothing left to solve, or not yet (two unbound variables)
      pair.done = true;
      const SymExpr value = analyzer.simplify(pair.arg - substitute(s->rest, bindings));
      if (std::optional<int64_t> c = value.as_const()) {
        std::optional<int64_t> v = exact_quotient(*c, s->coeff);
        if (!v) {
          const SymExpr expected = analyzer.simplify(substitute(pair.param, bindings));
          return absl::InvalidArgumentError(prefix + pair.where + ": expected " +
                                            expected.to_string() + ", got " + pair.arg.to_string() +
                                            " (no integer " + s->var.name() + " solves " +
                                            expected.to_string() + " == " + pair.arg.to_string() +
                                            ")");
        }
        bindings.emplace(s->var, SymExpr(*v));
        progress = true;
      } else if (analyzer.prove(floormod(value, SymExpr(s->coeff)) == SymExpr(0))) {
        bindings.emplace(s->var, analyzer.simplify(floordiv(value, SymExpr(s->coeff))));
        progress = true;
      }
    }
  }
  return absl::OkStatus();
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
  std::vector<DimPair> pairs;
  for (size_t i = 0; i < params.size(); ++i) {
    bind_param(params[i], args[i], "argument " + std::to_string(i), bindings, pairs);
  }
  if (absl::Status s = solve(pairs, bindings, analyzer, prefix); !s.ok()) return s;
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
