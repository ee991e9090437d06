// dce: dead-code elimination of bindings and of module functions.
//
// What it does.
//   - Bindings. In every graph function (nested functions and If branches
//     included) a binding is removed when nothing live uses its variable and
//     its value has no side effect (purity.h: no impure call, through tuples,
//     If branches and nested SeqExprs; an unknown callee counts as impure). An
//     impure call stays even when its result is unused. A match_cast stays
//     while a symbolic variable it defines is used by live code (an
//     annotation, a ShapeExpr, a PrimValue, a call's sinfo_args); one that
//     only checks variables already defined is removed like any binding.
//     Blocks left empty disappear.
//   - Functions. A graph Function is exported unless it carries the
//     attribute `private = true` (relax::build still makes a private one
//     callable from runtime::Module; the mark says only that it is not an
//     entry point). Exported functions are the roots; every function they
//     reach through GlobalVars (call_tir's kernel, a callee, a function value),
//     transitively through the graph functions reached, stays, and every other
//     one -- a private graph function, a PrimFunc, an ExternFunc -- is removed.
//     The option `remove-unused-functions=false` keeps them all (a module of
//     kernels compiled for their own sake).
//
// Stages, per graph function:
//   1. a forward walk records what each match_cast defines (the symbolic
//      variables of its pattern not already in scope at that point);
//   2. a backward walk over each SeqExpr (its body, then its bindings last to
//      first) marks variables and symbolic variables used by live code; a
//      binding is live when its variable is marked, its value has an effect,
//      or (a match_cast) it defines a marked symbolic variable, and only a
//      live binding's value, pattern and annotation mark further uses. Since
//      a variable is used only after its definition, one backward walk finds
//      everything that dies, however long the chain (`a` used only by `b`,
//      `b` by nothing: both die in the same run);
//   3. an ExprMutator drops the dead bindings (it keeps annotations current:
//      nothing else changes).
// Then, over the module: the functions reached from the exported ones, and the
// removal of the others.
//
// Invariants. Relies on a well-formed module (each variable defined once,
// before its uses). Keeps well-formedness: a removed binding has no live use,
// a removed match_cast defines nothing used, a removed function is named by
// no graph function. Unchanged functions stay pointer-identical.
//
// Not handled: a binding whose value is an If or nested SeqExpr holding an
// impure call stays whole (dead pure bindings inside its branches still go);
// unused parameters are kept (they are the function's signature).
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "purity.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

using VarSet = absl::flat_hash_set<const ExprNode*>;
using SymSet = absl::flat_hash_set<uint64_t>;  // SymVar ids

// Stage 1: the symbolic variables each match_cast defines, tracking the
// scope as the mutator does (parameters, then each SeqExpr's match_casts
// until the SeqExpr ends).
class MatchCastDefinitions : public ExprVisitor {
 public:
  absl::flat_hash_map<const ExprNode*, std::vector<SymVar>> defines;

  void visit_function(const Expr& e, const FunctionNode& node) override {
    std::vector<StructInfo> params;
    for (const Var& p : node.params) {
      if (p.struct_info().defined()) params.push_back(p.struct_info());
    }
    std::vector<SymVar> defined = defined_sym_vars(params);
    enter(defined);
    ExprVisitor::visit_function(e, node);
    leave(defined);
  }

  void visit_seq_expr(const Expr& e, const SeqExprNode& node) override {
    std::vector<SymVar> outer;
    outer.swap(seq_defined_);
    ExprVisitor::visit_seq_expr(e, node);
    leave(seq_defined_);
    seq_defined_.swap(outer);
  }

  void visit_binding(const Binding& binding) override {
    ExprVisitor::visit_binding(binding);
    if (!binding.is_match_cast) return;
    auto in_scope = [this](const SymVar& v) { return scope_.contains(v.id()); };
    // A bare dim already in scope is checked, not defined (struct_info.h).
    std::vector<SymVar> defined;
    for (const SymVar& v : defined_sym_vars({binding.cast_sinfo}, in_scope)) {
      if (!in_scope(v)) defined.push_back(v);
    }
    enter(defined);
    seq_defined_.insert(seq_defined_.end(), defined.begin(), defined.end());
    defines[binding.var.get()] = std::move(defined);
  }

 private:
  void enter(const std::vector<SymVar>& vars) {
    for (const SymVar& v : vars) ++scope_[v.id()];
  }
  void leave(const std::vector<SymVar>& vars) {
    for (const SymVar& v : vars) {
      auto it = scope_.find(v.id());
      if (it != scope_.end() && --it->second == 0) scope_.erase(it);
    }
  }

  absl::flat_hash_map<uint64_t, int> scope_;
  std::vector<SymVar> seq_defined_;
};

// Stage 2: the backward liveness walk. Everything it visits is live; it
// visits a binding only once the binding is known to be live.
class Liveness : public ExprVisitor {
 public:
  explicit Liveness(const absl::flat_hash_map<const ExprNode*, std::vector<SymVar>>& defines)
      : ExprVisitor(/*visit_annotations=*/true), defines_(defines) {}

  /// The variables of the bindings found dead.
  VarSet dead;

  void visit_var(const Var& var) override { live_.insert(var.get()); }

  void visit_sym_expr(const SymExpr& value) override {
    for_each_var(value, [this](const SymVar& v) { live_syms_.insert(v.id()); });
  }

  void visit_seq_expr(const Expr&, const SeqExprNode& node) override {
    visit_expr(node.body);
    for (auto block = node.blocks.rbegin(); block != node.blocks.rend(); ++block) {
      for (auto b = block->bindings.rbegin(); b != block->bindings.rend(); ++b) {
        if (is_live(*b)) {
          visit_binding(*b);
        } else {
          dead.insert(b->var.get());
        }
      }
    }
  }

 private:
  bool is_live(const Binding& b) const {
    if (live_.contains(b.var.get())) return true;
    if (b.is_match_cast) {
      auto it = defines_.find(b.var.get());
      if (it != defines_.end()) {
        for (const SymVar& v : it->second) {
          if (live_syms_.contains(v.id())) return true;
        }
      }
    }
    return has_side_effects(b.value);
  }

  const absl::flat_hash_map<const ExprNode*, std::vector<SymVar>>& defines_;
  VarSet live_;
  SymSet live_syms_;
};

// Stage 3: drops the dead bindings.
class DeadBindingRemover : public ExprMutator {
 public:
  DeadBindingRemover(const IRModule& mod, const VarSet& dead) : ExprMutator(&mod), dead_(dead) {}

  void visit_binding(const Binding& binding) override {
    if (dead_.contains(binding.var.get())) return;
    ExprMutator::visit_binding(binding);
  }

 private:
  const VarSet& dead_;
};

// Whether a graph function is marked private (`attrs {private = true}`): not an
// entry point of the module, so dce may remove it when no exported function
// reaches it.
bool is_private(const FunctionNode& f) {
  auto it = f.attrs.find("private");
  return it != f.attrs.end() && std::holds_alternative<bool>(it->second) && std::get<bool>(it->second);
}

// The names of the module functions that graph functions refer to.
class GlobalVarCollector : public ExprVisitor {
 public:
  absl::flat_hash_set<std::string> names;
  void visit_global_var(const Expr&, const GlobalVarNode& node) override { names.insert(node.name); }
};

class DcePass : public Pass {
 public:
  DcePass()
      : Pass(PassInfo("dce",
                      "removes unused pure bindings, and functions no exported graph function reaches")
                 .with_option("remove-unused-functions", true,
                              "remove private graph functions, PrimFuncs and ExternFuncs that no exported graph function reaches")
                 .with_statistic("removed_bindings", "unused pure bindings removed")
                 .with_statistic("removed_functions", "unreached functions removed")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule out = mod;
    int64_t removed_bindings = 0;
    for (const auto& [name, func] : mod.functions()) {
      if (func.as<FunctionNode>() == nullptr) continue;
      MatchCastDefinitions definitions;
      definitions.visit_expr(func);
      Liveness liveness(definitions.defines);
      liveness.visit_expr(func);
      if (liveness.dead.empty()) continue;
      DeadBindingRemover remover(mod, liveness.dead);
      Expr rewritten = remover.visit_expr(func);
      if (absl::Status s = remover.status(); !s.ok()) {
        return absl::InternalError("@" + name + ": " + std::string(s.message()));
      }
      removed_bindings += static_cast<int64_t>(liveness.dead.size());
      out.add(name, rewritten);
    }
    ctx.add_statistic("removed_bindings", removed_bindings);
    if (ctx.bool_option(*this, "remove-unused-functions")) {
      ctx.add_statistic("removed_functions", remove_unused_functions(out));
    }
    return out;
  }

 private:
  // Removes every function that no exported graph function reaches through
  // GlobalVars (transitively: a private helper that an exported function calls
  // keeps the kernels it calls).
  static int64_t remove_unused_functions(IRModule& mod) {
    std::vector<std::string> work;
    for (const auto& [name, func] : mod.functions()) {
      const auto* f = func.as<FunctionNode>();
      if (f != nullptr && !is_private(*f)) work.push_back(name);
    }
    absl::flat_hash_set<std::string> reached;
    while (!work.empty()) {
      std::string name = std::move(work.back());
      work.pop_back();
      if (!reached.insert(name).second) continue;
      Expr func = mod.lookup(name);
      if (func.as<FunctionNode>() == nullptr) continue;
      GlobalVarCollector used;
      used.visit_expr(func);
      for (const std::string& callee : used.names) {
        if (!reached.contains(callee)) work.push_back(callee);
      }
    }
    std::vector<std::string> unused;
    for (const auto& [name, func] : mod.functions()) {
      if (!reached.contains(name)) unused.push_back(name);
    }
    for (const std::string& name : unused) mod.remove(name);
    return static_cast<int64_t>(unused.size());
  }
};

}  // namespace

PassPtr create_dce_pass() { return std::make_shared<DcePass>(); }

}  // namespace relax::transform
