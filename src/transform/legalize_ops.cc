// legalize_ops: operator calls become call_tir of loop-level kernels.
//
// What it does. Every call of an operator whose table entry has a legalization
// (OpInfo::legalize, src/ir/op/<family>.cc) or that the user gave a rule, in
// every graph function (nested functions and If branches included), is
// replaced by call_tir of a PrimFunc built by the rule with PrimFuncBuilder.
// The call keeps its annotation, so the binding keeps its variable; the
// rewrite goes through ExprMutator, which re-normalises whatever it rebuilds.
//
// Stages, per call:
//   1. the rule (the op's entry, built with the compute library
//      relax/ir/compute.h) checks the operands and builds the kernel for the
//      call's pattern of annotations (graph-level symbolic variables become fresh kernel
//      variables, defined by bare buffer dims or, failing that, by trailing
//      int64 scalar parameters that the call fills with extra_sym_args);
//   2. the kernel is interned: a kernel structurally equal (up to its
//      "global_symbol") to one met before -- or to a PrimFunc already in the
//      module -- is that one; a new kernel is named after its operator
//      (`add`, then `add_1`, ... when the name is taken);
//   3. the call becomes call_tir(@kernel, args, out_sinfo = the call's
//      annotation[, extra_sym_args]), normalised in place.
// New kernels are added to the module after its existing functions.
//
// Invariants. Relies on a normalised module (annotations current). Keeps
// well-formedness: kernels define each symbolic variable they use (a bare
// buffer dim or a scalar parameter), and a call passes only values in scope
// (its own operands, and variables its annotations mention). Compute blocks
// name exactly their spatial and reduction iteration variables (later passes
// read them); each nest's outermost spatial loop is parallel, the rest serial.
//
// Kernels: see the comment at the top of each operator family's file. A
// reshape becomes `view(x, shape)` (no copy; manipulate.cc), except in a module
// that calls call_tir_inplace anywhere: a write into a tensor must not show
// through a reshape of it taken before (or be made through one), and a view
// may cross function boundaries, so such a module keeps every reshape a copy.
//
// Not handled (an error naming the function, binding and operator): operands
// with rank-only or unknown shapes or unknown dtypes; add / multiply of two
// Prims whose value is unknown (no kernel returns a Prim; a known value simply
// replaces the call). Every such call in the module is reported, not just the
// first.
#include "relax/transform/legalize_ops.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "relax/ir/kernel_table.h"
#include "relax/ir/normalize.h"
#include "relax/ir/op.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/ops.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

using Rule = LegalizeRule;

const Rule* find_rule(std::string_view op, const LegalizeRules& overrides) {
  if (auto it = overrides.find(op); it != overrides.end()) return &it->second;
  const OpInfo* info = find_op(op);
  return info != nullptr && info->legalize ? &info->legalize : nullptr;
}

// Whether any graph function of the module calls call_tir_inplace.
bool writes_in_place(const IRModule& mod) {
  class Finder : public ExprVisitor {
   public:
    bool found = false;
    void visit_call(const Expr& e, const CallNode& node) override {
      const auto* op = node.callee.as<OpNode>();
      found |= op != nullptr && op->name == "call_tir_inplace";
      ExprVisitor::visit_call(e, node);
    }
  };
  Finder finder;
  finder.visit_module(mod);
  return finder.found;
}

class Legalizer : public ExprMutator {
 public:
  Legalizer(const IRModule& mod, const LegalizeRules& overrides)
      : ExprMutator(&mod), kernels_(mod), overrides_(overrides), keep_reshape_copies_(writes_in_place(mod)) {}

  void set_function(const std::string& name) { function_ = name; }
  const KernelTable& kernels() const { return kernels_; }
  const std::vector<std::string>& errors() const { return errors_; }
  int64_t legalized() const { return legalized_; }

  void visit_binding(const Binding& binding) override {
    binding_ = binding.var.name_hint();
    ExprMutator::visit_binding(binding);
    binding_.clear();
  }

  Expr visit_call(const Expr& e, const CallNode& node) override {
    ++call_depth_;
    Expr visited = ExprMutator::visit_call(e, node);
    --call_depth_;
    const auto* call = visited.as<CallNode>();
    const auto* op = call->callee.as<OpNode>();
    if (op == nullptr) return visited;
    const Rule* rule = find_rule(op->name, overrides_);
    if (rule == nullptr) return visited;
    // A reshape's rule gives a view of its input (no copy); where tensors are written in place
    // a view would see writes that a copy does not, so there the copy kernel stays.
    const bool copy_reshape = keep_reshape_copies_ && op->name == "reshape" && !overrides_.contains(op->name);
    absl::StatusOr<Lowering> lowered =
        copy_reshape ? op::reshape_copy_kernel(*call) : (*rule)(*call, analyzer());
    if (!lowered.ok()) {
      report(std::string(lowered.status().message()));
      return visited;
    }
    Expr replacement = lowered->replacement;
    if (!replacement.defined()) {
      Expr gvar = kernels_.intern(lowered->prim_func, op->name);
      replacement =
          op::call_tir(gvar, lowered->args, visited.struct_info(), lowered->extra_sym_args);
    }
    absl::StatusOr<Expr> normalized = normalize(replacement, deduce_context());
    if (!normalized.ok()) {
      report(std::string(normalized.status().message()));
      return visited;
    }
    ++legalized_;
    // A call nested in another binding's value (`y = exp(exp(x))`, or a rewrite's argument)
    // gets a binding of its own before it: the code generators read A-normal form.
    if (call_depth_ > 0 && !binding_.empty()) return emit(*normalized);
    return *normalized;
  }

 private:
  void report(const std::string& message) {
    std::string where = "@" + function_ + ": ";
    if (!binding_.empty()) where += "binding `" + binding_ + "`: ";
    errors_.push_back(where + message);
  }

  KernelTable kernels_;
  const LegalizeRules& overrides_;
  bool keep_reshape_copies_;
  int64_t legalized_ = 0;
  int call_depth_ = 0;  ///< calls being visited around the current one
  std::string function_;
  std::string binding_;
  std::vector<std::string> errors_;
};

// The module legalized, with the number of calls legalized and kernels added.
struct Legalized {
  IRModule module;
  int64_t calls = 0;
  int64_t kernels = 0;
};

absl::StatusOr<Legalized> legalize_module(const IRModule& mod, const LegalizeRules& overrides) {
  Legalizer legalizer(mod, overrides);
  IRModule out = mod;
  for (const auto& [name, func] : mod.functions()) {
    if (func.as<FunctionNode>() == nullptr) continue;
    legalizer.set_function(name);
    Expr rewritten = legalizer.visit_expr(func);
    if (!rewritten.same_as(func)) out.add(name, rewritten);
  }
  std::vector<std::string> errors = legalizer.errors();
  if (absl::Status s = legalizer.status(); !s.ok()) errors.emplace_back(std::string(s.message()));
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  }
  const auto kernels = static_cast<int64_t>(legalizer.kernels().added().size());
  return Legalized{legalizer.kernels().add_new_to(std::move(out)), legalizer.legalized(), kernels};
}

class LegalizeOpsPass : public Pass {
 public:
  explicit LegalizeOpsPass(LegalizeRules overrides)
      : Pass(PassInfo("legalize-ops",
                      "operator calls become call_tir of loop-level kernels (user rules override built-in ones)")
                 .with_statistic("legalized_calls", "operator calls rewritten")
                 .with_statistic("kernels_added", "PrimFuncs added to the module")),
        overrides_(std::move(overrides)) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    absl::StatusOr<Legalized> out = legalize_module(mod, overrides_);
    if (!out.ok()) return out.status();
    ctx.add_statistic("legalized_calls", out->calls);
    ctx.add_statistic("kernels_added", out->kernels);
    return std::move(out->module);
  }

 private:
  LegalizeRules overrides_;
};

}  // namespace

absl::StatusOr<IRModule> legalize_ops(const IRModule& mod, const LegalizeRules& overrides) {
  absl::StatusOr<Legalized> out = legalize_module(mod, overrides);
  if (!out.ok()) {
    return absl::InvalidArgumentError(
        "legalize_ops: " + absl::StrReplaceAll(out.status().message(), {{"\n", "\nlegalize_ops: "}}));
  }
  return std::move(out->module);
}

PassPtr create_legalize_ops_pass(LegalizeRules overrides) {
  return std::make_shared<LegalizeOpsPass>(std::move(overrides));
}

PassPtr create_legalize_ops_pass() { return create_legalize_ops_pass(LegalizeRules{}); }

std::vector<std::string> legalizable_ops() {
  std::vector<std::string> names;
  for (const OpInfo* info : all_ops()) {
    if (info->legalize) names.push_back(info->name);
  }
  return names;
}

}  // namespace relax::transform
