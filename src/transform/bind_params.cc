// bind-params: parameters of a graph function become constant tensors.
//
// What it does. Given a function name and tensors by parameter name (a model's
// weights), the named parameters leave the function's signature and every use
// of them becomes a Constant holding the tensor, so the weights need not be
// passed on every call and fold-constant can evaluate what is computed from
// them alone (a transpose of a weight becomes a constant).
//
// Stages.
//   1. Match: each bound parameter's annotation must be a tensor (or Object)
//      whose dtype and rank, where known, are the tensor's. Symbolic dims are
//      then read off the tensors' shapes: a dim that is a bare variable binds
//      it (the first time; later occurrences must agree), then a dim linear in
//      one unknown variable solves for it (relax/shape/solve.h: `n * 2` with 6
//      gives n = 3), and finally every dim is evaluated and compared. A dim the
//      bound tensors do not determine (`n * m` with m known only from an
//      unbound parameter) is an error, since nothing would check it any more;
//      so is a value above the variable's declared upper bound.
//   2. Rewrite: uses of the bound parameters become Constants (a copy of each
//      tensor, so later writes to the caller's tensor do not reach the IR), and
//      each variable bound in stage 1 is replaced by its value throughout the
//      function: annotations of the other parameters, shape expressions, Prim
//      values, match_cast patterns, call annotations, the return annotation,
//      nested functions. Every rebuilt binding is re-deduced (ExprMutator), so
//      annotations become concrete where the values allow (`(n, 4)` becomes
//      `(3, 4)`), and the variable's declared upper bound is dropped.
//
// Errors name the function, the parameter, and the expected and actual dtype,
// rank or dim: an unknown function or parameter name, a parameter that is not a
// tensor, a mismatch, two bindings of one variable that disagree, a function
// that another function of the module calls (its callers would pass arguments
// that no longer exist).
//
// From the command line the pass reads two options: `bind-params.function`
// (default `main`) and `bind-params.params`, a list of `name=path.npy`
// separated by `;` or `,` (relax/runtime/npy.h; a relative path is relative to
// the working directory). relax-opt splits the value of --pass-option at
// commas, so there the entries are separated by `;` (quoted for the shell):
//   relax-opt model.relax --passes=bind-params,fold-constant
//       --pass-option='bind-params.params=w=w.npy;b=b.npy'
// With no params the pass changes nothing. A pass made by
// create_bind_params_pass(function, params) ignores the options.
//
// Not handled: binding a tuple, a shape or a Prim parameter; binding
// parameters of several functions at once (run the pass once per function).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "relax/ir/normalize.h"
#include "relax/ir/visitor.h"
#include "relax/runtime/npy.h"
#include "relax/shape/solve.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

using ParamMap = std::map<std::string, runtime::Tensor>;

std::string shape_text(const std::vector<int64_t>& shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), shape.size() == 1 ? ",)" : ")");
}

/// One bound parameter: the variable, its tensor (a private compact copy).
struct BoundParam {
  Var var;
  runtime::Tensor tensor;
};

/// Where a symbolic variable got its value, for messages.
struct Origin {
  std::string param;
  size_t dim;
  int64_t value;
};

/// Stage 1: the value of every symbolic variable the bound tensors determine.
class ShapeMatcher {
 public:
  ShapeMatcher(std::string function, const std::vector<SymBound>& upper_bounds)
      : function_(std::move(function)), upper_bounds_(upper_bounds) {}

  absl::StatusOr<SymVarMap<int64_t>> match(const std::vector<BoundParam>& params) {
    std::vector<Pending> pending;
    for (const BoundParam& p : params) {
      const StructInfo& sinfo = p.var.struct_info();
      if (!sinfo.defined() || sinfo.as<ObjectStructInfoNode>() != nullptr) continue;
      const auto* t = sinfo.as<TensorStructInfoNode>();
      if (t == nullptr) {
        return error(p, absl::StrCat("is annotated ", sinfo.to_string(),
                                     "; only tensor parameters can be bound"));
      }
      if (t->dtype && *t->dtype != p.tensor.dtype()) {
        return error(p, absl::StrCat("expected dtype ", t->dtype->to_string(), ", got a tensor of ",
                                     p.tensor.dtype().to_string()));
      }
      if (t->ndim != kUnknownNDim && t->ndim != p.tensor.ndim()) {
        return error(p, absl::StrCat("expected rank ", t->ndim, " (", sinfo.to_string(),
                                     "), got a tensor of shape ", shape_text(p.tensor.shape())));
      }
      if (!t->shape) continue;
      for (size_t i = 0; i < t->shape->size(); ++i) {
        pending.push_back({&p, i, (*t->shape)[i], p.tensor.shape()[i]});
      }
    }
    // Bare variables first: they define their variables whatever the order.
    for (const Pending& d : pending) {
      if (!d.dim.is_var()) continue;
      if (absl::Status s = assign(SymVar::from_expr(d.dim), d); !s.ok()) return s;
    }
    // Then dims linear in one unknown, until none solves another variable.
    for (bool progress = true; progress;) {
      progress = false;
      for (const Pending& d : pending) {
        std::optional<LinearSolution> sol =
            solve_linear(d.dim, [&](const SymVar& v) { return values_.contains(v); });
        if (!sol) continue;
        absl::StatusOr<int64_t> rest = evaluate(sol->rest, values_);
        int64_t numerator = 0;
        if (!rest.ok() || __builtin_sub_overflow(d.actual, *rest, &numerator)) continue;  // checked below
        if (numerator % sol->coeff != 0) {
          return error(*d.param, absl::StrCat("dim ", d.index, " is ", to_string(d.dim),
                                              ", which no integer ", sol->var.name(),
                                              " makes equal to the tensor's ", d.actual));
        }
        if (absl::Status s = assign(sol->var, d, numerator / sol->coeff); !s.ok()) return s;
        progress = true;
      }
    }
    // Every dim, now that the variables are known.
    for (const Pending& d : pending) {
      if (d.dim.is_var()) continue;
      absl::StatusOr<int64_t> value = evaluate(d.dim, values_);
      if (!value.ok()) {
        return error(*d.param, absl::StrCat("dim ", d.index, " is ", to_string(d.dim),
                                            ", which the bound tensors do not determine; bind the "
                                            "parameters that define its variables too"));
      }
      if (*value != d.actual) {
        const std::string expected = d.dim.as_const() ? to_string(d.dim)
                                                      : absl::StrCat(to_string(d.dim), " = ", *value,
                                                                     bindings_text(d.dim));
        return error(*d.param, absl::StrCat("dim ", d.index, ": expected ", expected, ", got ",
                                            d.actual, " (a tensor of shape ",
                                            shape_text(d.param->tensor.shape()), ")"));
      }
    }
    return values_;
  }

 private:
  struct Pending {
    const BoundParam* param;
    size_t index;
    SymExpr dim;
    int64_t actual;
  };

  absl::Status error(const BoundParam& p, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("@", function_, ": parameter `", p.var.name_hint(), "` ", what));
  }

  /// " with n = 3 (from `w` dim 0)" for each variable of `dim`.
  std::string bindings_text(const SymExpr& dim) const {
    std::string text;
    for_each_var(dim, [&](const SymVar& v) {
      auto it = origins_.find(v);
      if (it == origins_.end()) return;
      absl::StrAppend(&text, text.empty() ? " with " : ", ", v.name(), " = ", it->second.value,
                      " (from `", it->second.param, "` dim ", it->second.dim, ")");
    });
    return text;
  }

  absl::Status assign(const SymVar& var, const Pending& d, std::optional<int64_t> solved = {}) {
    const int64_t value = solved.value_or(d.actual);
    auto it = origins_.find(var);
    if (it != origins_.end()) {
      if (it->second.value == value) return absl::OkStatus();
      return error(*d.param, absl::StrCat("dim ", d.index, " is ", to_string(d.dim), ", which needs ",
                                          var.name(), " = ", value, ", but `", it->second.param,
                                          "` dim ", it->second.dim, " binds ", var.name(), " = ",
                                          it->second.value));
    }
    for (const SymBound& bound : upper_bounds_) {
      if (bound.var.same_as(var) && value > bound.upper) {
        return error(*d.param, absl::StrCat("dim ", d.index, " gives ", var.name(), " = ", value,
                                            ", above its declared upper bound ", bound.upper));
      }
    }
    if (value < 0) {
      return error(*d.param, absl::StrCat("dim ", d.index, " gives ", var.name(), " = ", value,
                                          "; a dim is never negative"));
    }
    values_[var] = value;
    origins_.emplace(var, Origin{d.param->var.name_hint(), d.index, value});
    return absl::OkStatus();
  }

  std::string function_;
  const std::vector<SymBound>& upper_bounds_;
  SymVarMap<int64_t> values_;
  SymVarMap<Origin> origins_;
};

/// Stage 2: the bound parameters' uses become constants, the matched variables their values.
class ParamBinder : public ExprMutator {
 public:
  ParamBinder(const IRModule& mod, absl::flat_hash_map<const ExprNode*, Expr> constants,
              SymVarMap<SymExpr> dims)
      : ExprMutator(&mod), constants_(std::move(constants)), dims_(std::move(dims)) {}

  Expr visit_var(const Var& var) override {
    auto it = constants_.find(var.get());
    return it != constants_.end() ? it->second : ExprMutator::visit_var(var);
  }

  Var visit_var_def(const Var& var) override {
    const StructInfo& sinfo = var.struct_info();
    if (!sinfo.defined()) return var;
    StructInfo bound = substitute_sinfo(sinfo, dims_, analyzer());
    if (struct_info_equal(bound, sinfo)) return var;
    return var.is_dataflow() ? DataflowVar(var.name_hint(), bound) : Var(var.name_hint(), bound);
  }

  SymExpr visit_sym_expr(const SymExpr& value) override {
    SymExpr bound = substitute(value, dims_);
    return bound.same_as(value) ? value : analyzer().simplify(bound);
  }

 private:
  absl::flat_hash_map<const ExprNode*, Expr> constants_;
  SymVarMap<SymExpr> dims_;
};

/// The functions of `mod` other than `name` that refer to it.
std::vector<std::string> callers_of(const IRModule& mod, const std::string& name) {
  class Finder : public ExprVisitor {
   public:
    explicit Finder(const std::string& name) : name_(name) {}
    void visit_global_var(const Expr&, const GlobalVarNode& node) override { found |= node.name == name_; }
    bool found = false;

   private:
    const std::string& name_;
  };
  std::vector<std::string> callers;
  for (const auto& [other, func] : mod.functions()) {
    if (other == name || func.as<FunctionNode>() == nullptr) continue;
    Finder finder(name);
    finder.visit_expr(func);
    if (finder.found) callers.push_back("@" + other);
  }
  return callers;
}

absl::StatusOr<runtime::Tensor> compact_copy(const runtime::Tensor& t, const std::string& where) {
  if (!t.defined()) return absl::InvalidArgumentError(where + ": the tensor is undefined");
  if (t.device().type != Device::Type::kCPU) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the tensor is on ", t.device().to_string(), "; constants are host tensors"));
  }
  absl::StatusOr<runtime::Tensor> copy = runtime::Tensor::empty(t.shape(), t.dtype());
  if (!copy.ok()) return copy.status();
  if (absl::Status s = copy->copy_from(t); !s.ok()) return s;
  return copy;
}

/// The `name=path.npy,...` of the params option, loaded.
absl::StatusOr<ParamMap> load_params(absl::string_view spec) {
  ParamMap params;
  for (absl::string_view entry : absl::StrSplit(spec, absl::ByAnyChar(",;"), absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos || eq == 0 || eq + 1 == entry.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "option bind-params.params: expected `name=path.npy`, got `", entry, "`"));
    }
    const std::string name(absl::StripAsciiWhitespace(entry.substr(0, eq)));
    const std::string path(absl::StripAsciiWhitespace(entry.substr(eq + 1)));
    if (params.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("option bind-params.params: parameter `", name, "` is given twice"));
    }
    absl::StatusOr<runtime::Tensor> tensor = runtime::load_npy(path);
    if (!tensor.ok()) {
      return absl::Status(tensor.status().code(),
                          absl::StrCat("option bind-params.params: parameter `", name,
                                       "`: ", tensor.status().message()));
    }
    params.emplace(name, *std::move(tensor));
  }
  return params;
}

struct BindCounts {
  int64_t params = 0;
  int64_t sym_vars = 0;
};

absl::StatusOr<IRModule> bind_params_impl(const IRModule& mod, const std::string& function,
                                          const ParamMap& params, BindCounts* counts) {
  if (params.empty()) return mod;
  const Expr func = mod.lookup(function);
  const auto* f = func.defined() ? func.as<FunctionNode>() : nullptr;
  if (f == nullptr) {
    std::vector<std::string> graph_functions;
    for (const auto& [name, e] : mod.functions()) {
      if (e.as<FunctionNode>() != nullptr) graph_functions.push_back("@" + name);
    }
    return absl::NotFoundError(absl::StrCat(
        "no graph function @", function, " in the module (graph functions: ",
        graph_functions.empty() ? "none" : absl::StrJoin(graph_functions, ", "), ")"));
  }
  const std::string where = "@" + function;
  if (std::vector<std::string> callers = callers_of(mod, function); !callers.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        where, " is called by ", absl::StrJoin(callers, ", "),
        "; only the parameters of a function that no other function calls can be bound"));
  }

  // Which parameters are bound, in parameter order.
  std::vector<BoundParam> bound;
  std::vector<Var> kept;
  absl::flat_hash_set<std::string> seen;
  for (const Var& p : f->params) {
    auto it = params.find(p.name_hint());
    if (it == params.end()) {
      kept.push_back(p);
      continue;
    }
    if (!seen.insert(p.name_hint()).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": two parameters are named `", p.name_hint(),
                                                     "`; the binding is ambiguous"));
    }
    absl::StatusOr<runtime::Tensor> copy =
        compact_copy(it->second, absl::StrCat(where, ": parameter `", p.name_hint(), "`"));
    if (!copy.ok()) return copy.status();
    bound.push_back({p, *std::move(copy)});
  }
  for (const auto& [name, tensor] : params) {
    if (seen.contains(name)) continue;
    std::vector<std::string> names;
    for (const Var& p : f->params) names.push_back("`" + p.name_hint() + "`");
    return absl::NotFoundError(absl::StrCat(where, " has no parameter `", name, "` (its parameters: ",
                                            names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
  }

  ShapeMatcher matcher(function, f->upper_bounds);
  absl::StatusOr<SymVarMap<int64_t>> values = matcher.match(bound);
  if (!values.ok()) return values.status();

  Analyzer analyzer;
  DeduceContext ctx{analyzer, &mod};
  absl::flat_hash_map<const ExprNode*, Expr> constants;
  for (const BoundParam& p : bound) {
    absl::StatusOr<Expr> constant = normalize(make_constant(p.tensor), ctx);
    if (!constant.ok()) return constant.status();
    constants.emplace(p.var.get(), *std::move(constant));
  }
  SymVarMap<SymExpr> dims;
  for (const auto& [var, value] : *values) dims.emplace(var, SymExpr(value));
  std::vector<SymBound> upper_bounds;
  for (const SymBound& b : f->upper_bounds) {
    if (!dims.contains(b.var)) upper_bounds.push_back(b);
  }

  // The function without the bound parameters (its body still refers to them:
  // the binder replaces those uses) and with the return annotation substituted;
  // the binder then rebuilds and re-annotates it.
  const StructInfo ret = f->ret.defined() ? substitute_sinfo(f->ret, dims, analyzer) : f->ret;
  Expr unbound = make_function(kept, f->body, ret, f->pure, upper_bounds, f->attrs);
  ParamBinder binder(mod, std::move(constants), std::move(dims));
  Expr out = binder.visit_expr(unbound);
  if (absl::Status s = binder.status(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": after binding, ", s.message()));
  }
  if (!out.struct_info().defined()) {  // nothing but the signature changed
    absl::StatusOr<Expr> annotated = normalize(out, ctx);
    if (!annotated.ok()) return annotated.status();
    out = *std::move(annotated);
  }
  IRModule result = mod;
  result.add(function, out);
  if (counts != nullptr) {
    counts->params += static_cast<int64_t>(bound.size());
    counts->sym_vars += static_cast<int64_t>(values->size());
  }
  return result;
}

class BindParamsPass : public Pass {
 public:
  BindParamsPass(std::optional<std::pair<std::string, ParamMap>> given)
      : Pass(PassInfo("bind-params",
                      "binds parameters of a graph function to constant tensors (weights) and their "
                      "symbolic dims to the tensors' dims; from relax-opt: "
                      "--pass-option='bind-params.params=w=w.npy;b=b.npy'")
                 .with_option("function", std::string("main"), "the graph function whose parameters are bound")
                 .with_option("params", std::string(),
                              "parameters to bind, `name=path.npy` separated by `;` or `,` (none: no change)")
                 .with_statistic("bound_params", "parameters replaced by constants")
                 .with_statistic("bound_sym_vars", "symbolic variables replaced by the tensors' dims")),
        given_(std::move(given)) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    BindCounts counts;
    absl::StatusOr<IRModule> out;
    if (given_) {
      out = bind_params_impl(mod, given_->first, given_->second, &counts);
    } else {
      absl::StatusOr<ParamMap> params = load_params(ctx.string_option(*this, "params"));
      if (!params.ok()) return params.status();
      out = bind_params_impl(mod, ctx.string_option(*this, "function"), *params, &counts);
    }
    ctx.add_statistic("bound_params", counts.params);
    ctx.add_statistic("bound_sym_vars", counts.sym_vars);
    return out;
  }

 private:
  std::optional<std::pair<std::string, ParamMap>> given_;
};

}  // namespace

absl::StatusOr<IRModule> bind_params(const IRModule& mod, const std::string& function,
                                     const std::map<std::string, runtime::Tensor>& params) {
  return bind_params_impl(mod, function, params, nullptr);
}

PassPtr create_bind_params_pass() { return std::make_shared<BindParamsPass>(std::nullopt); }

PassPtr create_bind_params_pass(std::string function, std::map<std::string, runtime::Tensor> params) {
  return std::make_shared<BindParamsPass>(std::make_pair(std::move(function), std::move(params)));
}

}  // namespace relax::transform
