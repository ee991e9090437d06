// lift-weight-transforms: what a function computes from its weights alone, without making them
// larger, is computed once, when the weights are bound, instead of on every call.
//
// What it does. In each graph function with a `weights` attribute
// (transform/weights/weight_params.h), a binding is lifted when its value is a pure operator
// call whose operands are weights or lifted values (directly or in a tuple of them), with a
// static tensor result no larger in bytes than its tensor operands: a concat of weights
// (combine-parallel-matmul's joined projections), a transpose, a slice. Widening or
// dequantising a weight stays in the function, where the kernels absorb it (lifting would store
// the wider copy). The lifted values that the rest of the function reads become parameters of
// the function, named after their variables ("layers_0_wq_wk_wv"), in place of the first weight
// they are computed from; weights that nothing reads any more leave the signature; the
// `weights` attribute names the new list. One new graph function,
//   func @transform_weights(<the weights read>) -> ((name, tensor), ...)
// computes every lifted value of every function once (a value two functions lift, compared by
// its operator calls and the names of the weights it reads, is one output), each output paired
// with the parameter name it is passed as. runtime::BoundWeights
// (relax/runtime/bound_weights.h) calls it when the weights are bound and passes each function
// its parameters by name.
//
// Invariants. Relies on a normalised module. Functions without a liftable binding stay
// pointer-identical; a module without any gets no transform_weights.
//
// Not handled: functions that another function calls (their callers would pass arguments that
// no longer exist: left as they are); weights with symbolic dims (the lifted results must have
// static shapes); bindings inside If branches; a module that already has a `transform_weights`
// and something more to lift (InvalidArgument: lift once).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/builder.h"
#include "relax/ir/normalize.h"
#include "relax/ir/printer.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/visitor.h"
#include "relax/runtime/bound_weights.h"
#include "relax/transform/passes.h"
#include "transform/purity.h"
#include "transform/weights/weight_params.h"

namespace relax::transform {
namespace {

using weights_detail::attrs_text;

// Bytes of a static tensor annotation (of each tensor of a tuple), or -1.
int64_t static_bytes(const StructInfo& sinfo) {
  if (const auto* tuple = sinfo.as<TupleStructInfoNode>()) {
    int64_t bytes = 0;
    for (const StructInfo& f : tuple->fields) {
      const int64_t b = static_bytes(f);
      if (b < 0) return -1;
      bytes += b;
    }
    return bytes;
  }
  const auto* t = sinfo.as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape || !t->dtype) return -1;
  int64_t elements = 1;
  for (const SymExpr& d : *t->shape) {
    const std::optional<int64_t> v = d.as_const();
    if (!v) return -1;
    elements *= *v;
  }
  // Bits rounded up to whole bytes per element (a bool is one byte).
  return elements * ((t->dtype->bits * t->dtype->lanes + 7) / 8);
}

// Whether `name` is a builder's default name (lv3, gv12), which says nothing of the value.
bool default_name(const std::string& name) {
  size_t digits = 2;
  if (!absl::StartsWith(name, "lv") && !absl::StartsWith(name, "gv")) return false;
  while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
  return digits == name.size();
}

// What one function lifts.
struct FunctionLift {
  std::string name;
  const FunctionNode* fn = nullptr;
  absl::flat_hash_set<const ExprNode*> weights;
  // Lifted binding variables and their values, in binding order.
  std::vector<std::pair<Var, Expr>> lifted;
  absl::flat_hash_map<const ExprNode*, Expr> value_of;
  // Lifted tuples that the rest of the function reads too: computed at bind where a lifted
  // value needs them, and kept in the function.
  absl::flat_hash_set<const ExprNode*> kept;
  // The lifted variables (tensors) the rest of the function reads.
  std::vector<Var> frontier;
  // Every variable the bindings left in the function (and its result) read.
  absl::flat_hash_set<const ExprNode*> read_by_rest;

  bool dropped(const ExprNode* var) const { return value_of.contains(var) && !kept.contains(var); }
};

// Every variable a value reads (one level: the operands of a call, the fields of a tuple, ...).
class VarUses : public ExprVisitor {
 public:
  absl::flat_hash_set<const ExprNode*> vars;
  void visit_var(const Var& v) override { vars.insert(v.get()); }
};

class Lifter {
 public:
  explicit Lifter(const IRModule& mod) : mod_(mod) {}

  absl::StatusOr<IRModule> run(int64_t* lifted_outputs, int64_t* lifted_bindings) {
    absl::flat_hash_set<std::string> called = called_functions();
    std::vector<FunctionLift> lifts;
    for (const auto& [name, func] : mod_.functions()) {
      const auto* fn = func.as<FunctionNode>();
      if (fn == nullptr || called.contains(name)) continue;
      absl::StatusOr<std::vector<Var>> weights = weights_detail::weight_params(name, *fn);
      if (!weights.ok()) return weights.status();
      if (weights->empty()) continue;
      FunctionLift lift = find_lifted(name, *fn, *weights);
      if (lift.frontier.empty()) continue;
      *lifted_bindings += static_cast<int64_t>(lift.lifted.size());
      lifts.push_back(std::move(lift));
    }
    if (lifts.empty()) return mod_;
    if (mod_.contains(runtime::kWeightTransformFunction)) {
      return absl::InvalidArgumentError(absl::StrCat("the module already has @", runtime::kWeightTransformFunction,
                                                     " and @", lifts[0].name,
                                                     " has more to lift (run lift-weight-transforms once)"));
    }
    for (const auto& [name, func] : mod_.functions()) {
      if (const auto* fn = func.as<FunctionNode>()) {
        for (const Var& p : fn->params) taken_names_.insert(p.name_hint());
      }
    }
    // Outputs: one per distinct lifted value (by key), named once.
    for (FunctionLift& lift : lifts) {
      for (const Var& v : lift.frontier) output_for(lift, v);
    }
    *lifted_outputs = static_cast<int64_t>(outputs_.size());
    IRModule out = mod_;
    for (FunctionLift& lift : lifts) {
      absl::StatusOr<Expr> rewritten = rewrite(lift);
      if (!rewritten.ok()) return rewritten.status();
      out.add(lift.name, *rewritten);
    }
    absl::StatusOr<Expr> transform = transform_function();
    if (!transform.ok()) return transform.status();
    out.add(runtime::kWeightTransformFunction, *transform);
    return out;
  }

 private:
  struct Output {
    std::string name;
    Var var;                      // the lifted variable (of the function first seen)
    const FunctionLift* lift;     // that function
  };

  absl::flat_hash_set<std::string> called_functions() const {
    class Calls : public ExprVisitor {
     public:
      absl::flat_hash_set<std::string> names;
      void visit_global_var(const Expr&, const GlobalVarNode& node) override { names.insert(node.name); }
    } calls;
    for (const auto& [name, func] : mod_.functions()) {
      if (func.as<FunctionNode>() != nullptr) calls.visit_expr(func);
    }
    return calls.names;
  }

  static FunctionLift find_lifted(const std::string& name, const FunctionNode& fn, const std::vector<Var>& weights) {
    FunctionLift lift;
    lift.name = name;
    lift.fn = &fn;
    for (const Var& w : weights) lift.weights.insert(w.get());
    const auto* body = fn.body.as<SeqExprNode>();
    if (body == nullptr) return lift;
    auto is_input = [&](const ExprNode* v) { return lift.weights.contains(v) || lift.value_of.contains(v); };
    for (const BindingBlock& block : body->blocks) {
      for (const Binding& b : block.bindings) {
        if (!b.is_match_cast && liftable(b.value, is_input)) {
          lift.lifted.emplace_back(b.var, b.value);
          lift.value_of.emplace(b.var.get(), b.value);
        }
      }
    }
    // What the rest of the function reads. A lifted tuple it reads stays in the function too
    // (a tuple is not a tensor to bind), and then so does what the tuple holds.
    absl::flat_hash_set<const ExprNode*> read_by_rest;
    for (bool changed = true; changed;) {
      changed = false;
      read_by_rest.clear();
      for (const BindingBlock& block : body->blocks) {
        for (const Binding& b : block.bindings) {
          if (lift.dropped(b.var.get())) continue;
          VarUses uses;
          uses.visit_expr(b.value);
          if (b.is_match_cast) uses.visit_struct_info(b.cast_sinfo);
          read_by_rest.insert(uses.vars.begin(), uses.vars.end());
        }
      }
      VarUses ret;
      ret.visit_expr(body->body);
      read_by_rest.insert(ret.vars.begin(), ret.vars.end());
      for (const auto& [var, value] : lift.lifted) {
        if (read_by_rest.contains(var.get()) && value.as<TupleNode>() != nullptr && lift.kept.insert(var.get()).second) {
          changed = true;
        }
      }
    }
    for (const auto& [var, value] : lift.lifted) {
      if (read_by_rest.contains(var.get()) && !lift.kept.contains(var.get())) lift.frontier.push_back(var);
    }
    lift.read_by_rest = std::move(read_by_rest);
    return lift;
  }

  template <typename IsInput>
  static bool liftable(const Expr& value, const IsInput& is_input) {
    // An operand: a weight or lifted variable (its bytes counted), or a literal.
    int64_t in_bytes = 0;
    bool reads_var = false;
    auto operand_ok = [&](const Expr& e) {
      if (const auto* v = e.as<VarNode>()) {
        const int64_t bytes = static_bytes(e.struct_info());
        if (!is_input(v) || bytes < 0) return false;
        in_bytes += bytes;
        reads_var = true;
        return true;
      }
      return e.kind() == ExprKind::kConstant || e.kind() == ExprKind::kShapeExpr ||
             e.kind() == ExprKind::kPrimValue || e.kind() == ExprKind::kStringImm;
    };
    auto operands_ok = [&](const std::vector<Expr>& operands) {
      for (const Expr& e : operands) {
        const auto* tuple = e.as<TupleNode>();
        if (tuple != nullptr ? !std::all_of(tuple->fields.begin(), tuple->fields.end(), operand_ok) : !operand_ok(e)) {
          return false;
        }
      }
      return reads_var;
    };
    if (const auto* tuple = value.as<TupleNode>()) return operands_ok(tuple->fields);
    const auto* call = value.as<CallNode>();
    if (call == nullptr || call->callee.as<OpNode>() == nullptr || !is_pure_call(*call)) return false;
    if (!operands_ok(call->args)) return false;
    const int64_t out_bytes = static_bytes(value.struct_info());
    return out_bytes >= 0 && out_bytes <= in_bytes;
  }

  // A key of a lifted value that two functions share: operators, attributes and the names of
  // the weights, through lifted variables.
  static std::string key_of(const FunctionLift& lift, const Expr& e) {
    if (const auto* v = e.as<VarNode>()) {
      auto it = lift.value_of.find(v);
      return it != lift.value_of.end() ? key_of(lift, it->second) : "%" + v->name_hint;
    }
    if (const auto* tuple = e.as<TupleNode>()) {
      std::string out = "(";
      for (const Expr& f : tuple->fields) absl::StrAppend(&out, key_of(lift, f), ",");
      return out + ")";
    }
    if (const auto* call = e.as<CallNode>()) {
      std::string out = call->callee.as<OpNode>()->name + "(";
      for (const Expr& a : call->args) absl::StrAppend(&out, key_of(lift, a), ",");
      absl::StrAppend(&out, ")[", attrs_text(call->attrs), "]");
      for (const StructInfo& s : call->sinfo_args) absl::StrAppend(&out, "<", s.to_string(), ">");
      return out;
    }
    return to_text(e);
  }

  void output_for(const FunctionLift& lift, const Var& var) {
    const std::string key = key_of(lift, var);
    auto [it, fresh] = output_of_key_.emplace(key, outputs_.size());
    if (fresh) {
      std::string base = var.name_hint();
      if (default_name(base)) {
        const auto* call = lift.value_of.at(var.get()).as<CallNode>();
        base = call != nullptr ? call->callee.as<OpNode>()->name + "_of_weights" : "weights";
      }
      std::string name = base;
      for (int i = 2; taken_names_.contains(name); ++i) name = absl::StrCat(base, "_", i);
      taken_names_.insert(name);
      outputs_.push_back({name, var, &lift});
    }
    output_index_[&lift][var.get()] = it->second;
  }

  // The function without its lifted bindings, reading their values as parameters.
  absl::StatusOr<Expr> rewrite(const FunctionLift& lift) {
    const FunctionNode& fn = *lift.fn;
    const auto& index = output_index_.at(&lift);
    const absl::flat_hash_set<const ExprNode*>& read = lift.read_by_rest;

    // Each lifted parameter goes where the first weight its value reads was.
    absl::flat_hash_map<const ExprNode*, std::vector<Var>> placed_at;
    std::vector<std::pair<Var, Var>> remap;
    for (const Var& v : lift.frontier) {
      const Output& out = outputs_[index.at(v.get())];
      Var param(out.name, v.struct_info());
      remap.emplace_back(v, param);
      placed_at[first_weight(lift, v).get()].push_back(param);
    }
    std::vector<Var> params, weights;
    for (const Var& p : fn.params) {
      const bool weight = lift.weights.contains(p.get());
      if (auto it = placed_at.find(p.get()); it != placed_at.end()) {
        for (const Var& lifted : it->second) {
          params.push_back(lifted);
          weights.push_back(lifted);
        }
      }
      if (weight && !read.contains(p.get())) continue;  // read by lifted values alone
      params.push_back(p);
      if (weight) weights.push_back(p);
    }

    // The function's body without the lifted bindings, the frontier read from the parameters.
    class Dropper : public ExprMutator {
     public:
      Dropper(const IRModule& mod, const FunctionLift& lift, const std::vector<std::pair<Var, Var>>& remap)
          : ExprMutator(&mod), lift_(lift) {
        for (const auto& [from, to] : remap) set_var_remap(from, to);
      }
      void visit_binding(const Binding& binding) override {
        if (lift_.dropped(binding.var.get())) return;
        ExprMutator::visit_binding(binding);
      }

     private:
      const FunctionLift& lift_;
    } dropper(mod_, lift, remap);

    Attrs attrs = fn.attrs;
    attrs[weights_detail::kWeightsAttr] = weights_detail::weights_attr_text(weights);
    Expr rebuilt = make_function(params, fn.body, fn.ret, fn.pure, fn.upper_bounds, attrs);
    Expr out = dropper.visit_expr(rebuilt);
    if (absl::Status s = dropper.status(); !s.ok()) {
      return absl::InternalError(absl::StrCat("@", lift.name, ": ", s.message()));
    }
    if (!out.struct_info().defined()) {
      Analyzer analyzer;
      DeduceContext ctx{analyzer, &mod_};
      absl::StatusOr<Expr> annotated = normalize(out, ctx);
      if (!annotated.ok()) return annotated.status();
      out = *std::move(annotated);
    }
    return out;
  }

  // The first weight parameter (in parameter order) that `v`'s value reads.
  static Var first_weight(const FunctionLift& lift, const Var& v) {
    std::vector<Var> leaves;
    collect_leaves(lift, v, leaves);
    for (const Var& p : lift.fn->params) {
      if (std::any_of(leaves.begin(), leaves.end(), [&](const Var& l) { return l.same_as(p); })) return p;
    }
    return lift.fn->params.front();
  }

  // @transform_weights: every output's value, over the weights by name.
  absl::StatusOr<Expr> transform_function() {
    ModuleBuilder mb;
    FunctionBuilder f = mb.function(runtime::kWeightTransformFunction);
    std::map<std::string, Var> params;  // by name
    // The weights the outputs read, in the order of the functions' parameters.
    absl::flat_hash_set<std::string> read;
    std::vector<const FunctionLift*> lifts;
    for (const Output& out : outputs_) {
      std::vector<Var> leaves;
      collect_leaves(*out.lift, out.var, leaves);
      for (const Var& l : leaves) read.insert(l.name_hint());
      if (std::find(lifts.begin(), lifts.end(), out.lift) == lifts.end()) lifts.push_back(out.lift);
    }
    for (const FunctionLift* lift : lifts) {
      for (const Var& p : lift->fn->params) {
        if (read.contains(p.name_hint()) && !params.contains(p.name_hint())) {
          params.emplace(p.name_hint(), f.param(p.name_hint(), p.struct_info()));
        }
      }
    }
    std::vector<Expr> pairs;
    {
      auto df = f.dataflow();
      for (const Output& out : outputs_) {
        absl::flat_hash_map<const ExprNode*, Var> emitted;
        Var value = emit_value(f, *out.lift, out.var, params, emitted);
        pairs.push_back(make_tuple({make_string_imm(out.name), value}));
      }
      Var result = f.emit_output(make_tuple(std::move(pairs)), "bound");
      df.end();
      f.ret(result);
    }
    absl::StatusOr<IRModule> built = mb.build();
    if (!built.ok()) {
      return absl::InternalError(absl::StrCat("@", runtime::kWeightTransformFunction, ": ", built.status().message()));
    }
    return built->lookup(runtime::kWeightTransformFunction);
  }

  static void collect_leaves(const FunctionLift& lift, const Expr& e, std::vector<Var>& leaves) {
    VarUses uses;
    auto it = lift.value_of.find(e.get());
    if (it == lift.value_of.end()) {
      if (lift.weights.contains(e.get())) leaves.push_back(Var::from_expr(e));
      return;
    }
    uses.visit_expr(it->second);
    for (const auto& [var, value] : lift.lifted) {
      if (uses.vars.contains(var.get())) collect_leaves(lift, var, leaves);
    }
    for (const Var& p : lift.fn->params) {
      if (uses.vars.contains(p.get()) && lift.weights.contains(p.get())) leaves.push_back(p);
    }
  }

  // Re-emits the lifted variable `var`'s value (and what it reads) in the transform function.
  static Var emit_value(FunctionBuilder& f, const FunctionLift& lift, const Expr& var,
                        const std::map<std::string, Var>& params, absl::flat_hash_map<const ExprNode*, Var>& emitted) {
    if (auto it = emitted.find(var.get()); it != emitted.end()) return it->second;
    const Expr& value = lift.value_of.at(var.get());
    auto operand = [&](const Expr& e) -> Expr {
      if (e.as<VarNode>() == nullptr) return e;
      if (lift.value_of.contains(e.get())) return emit_value(f, lift, e, params, emitted);
      return params.at(Var::from_expr(e).name_hint());
    };
    // An operand, or a tuple of them.
    auto rebuild = [&](const Expr& e) -> Expr {
      const auto* tuple = e.as<TupleNode>();
      if (tuple == nullptr) return operand(e);
      std::vector<Expr> fields;
      for (const Expr& x : tuple->fields) fields.push_back(operand(x));
      return make_tuple(std::move(fields));
    };
    Expr rebuilt;
    if (value.as<TupleNode>() != nullptr) {
      rebuilt = rebuild(value);
    } else {
      const auto& call = *value.as<CallNode>();
      std::vector<Expr> args;
      for (const Expr& a : call.args) args.push_back(rebuild(a));
      rebuilt = make_call(call.callee, std::move(args), call.attrs, call.sinfo_args);
    }
    Var out = f.emit(rebuilt, Var::from_expr(var).name_hint());
    emitted.emplace(var.get(), out);
    return out;
  }

  const IRModule& mod_;
  absl::flat_hash_set<std::string> taken_names_;
  std::vector<Output> outputs_;
  std::map<std::string, size_t> output_of_key_;
  absl::flat_hash_map<const FunctionLift*, absl::flat_hash_map<const ExprNode*, size_t>> output_index_;
};

class LiftWeightTransformsPass : public Pass {
 public:
  LiftWeightTransformsPass()
      : Pass(PassInfo("lift-weight-transforms",
                      "computes what functions derive from their weights alone once, at bind "
                      "(@transform_weights), passing the results as parameters")
                 .with_statistic("lifted_bindings", "bindings moved out of the functions")
                 .with_statistic("bound_outputs", "values @transform_weights computes")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    int64_t outputs = 0, bindings = 0;
    Lifter lifter(mod);
    absl::StatusOr<IRModule> out = lifter.run(&outputs, &bindings);
    if (!out.ok()) return out.status();
    ctx.add_statistic("lifted_bindings", bindings);
    ctx.add_statistic("bound_outputs", outputs);
    return out;
  }
};

}  // namespace

PassPtr create_lift_weight_transforms_pass() { return std::make_shared<LiftWeightTransformsPass>(); }

}  // namespace relax::transform
