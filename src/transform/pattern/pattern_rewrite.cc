// The pattern rewriter: rewrite() and find_matches() of relax/transform/pattern.h.
//
// Stages, per dataflow block:
//   1. match: the block's bindings, last to first, against the pattern, each
//      looking through the DataflowVars bound earlier in the block (a larger
//      match rooted at a later binding is found before the smaller ones that
//      it contains); the callback decides each match; a binding that an
//      accepted match looked through is not a root of its own;
//   2. replace: the block is rebuilt through ExprMutator, each accepted
//      replacement normalised and then visited (so that variables the mutator
//      renamed earlier are followed), the other bindings visited as usual;
//   3. clean: bindings of DataflowVars that were used before and are unused
//      now (the interior of the matches) are removed, transitively.
// Matching always sees the block as it was before the rewrite (the callback
// gets original expressions); replacements are never matched again.
//
// Invariants. Relies on a normalised, well-formed module. Keeps StructInfo
// current (ExprMutator re-annotates what it rebuilds; a binding whose
// annotation changes gets a fresh variable whose uses follow) and the scoping
// rules (a replacement may use what the matched binding could: captures are
// expressions of the same block or outside it, bound before the match root).
//
// Not handled: blocks that are not dataflow blocks (their calls may be
// impure); expressions nested inside a binding's value are matched only as part
// of a pattern rooted at the value; a replacement with nested calls stays
// nested (it is not bound to new variables).
#include <utility>

#include "transform/pattern/pattern_impl.h"
#include "relax/ir/normalize.h"
#include "relax/ir/visitor.h"

namespace relax::transform {
namespace {

// The DataflowVars that `e` uses.
class DataflowUses : public ExprVisitor {
 public:
  explicit DataflowUses(absl::flat_hash_set<const ExprNode*>& uses) : uses_(uses) {}
  void visit_var(const Var& var) override {
    if (var.is_dataflow()) uses_.insert(var.get());
  }

 private:
  absl::flat_hash_set<const ExprNode*>& uses_;
};

// The variables of `block` whose bindings are live: outputs, match_casts (a
// run-time check) and, transitively, the DataflowVars they use.
absl::flat_hash_set<const ExprNode*> live_bindings(const BindingBlock& block) {
  absl::flat_hash_set<const ExprNode*> used;
  absl::flat_hash_set<const ExprNode*> live;
  DataflowUses uses(used);
  for (auto it = block.bindings.rbegin(); it != block.bindings.rend(); ++it) {
    if (it->var.is_dataflow() && !it->is_match_cast && !used.contains(it->var.get())) continue;
    live.insert(it->var.get());
    uses.visit_expr(it->value);
  }
  return live;
}

Var fresh_like(const Var& v, StructInfo sinfo) {
  if (v.is_dataflow()) return DataflowVar(v.name_hint(), std::move(sinfo));
  return Var(v.name_hint(), std::move(sinfo));
}

ParamSet params_of(const FunctionNode& func) {
  ParamSet params;
  for (const Var& p : func.params) params.insert(p.get());
  return params;
}

absl::Status prefixed(const absl::Status& status, const std::string& prefix) {
  return absl::Status(status.code(), prefix + std::string(status.message()));
}

}  // namespace

class Rewriter : public ExprMutator {
 public:
  Rewriter(IRModule* module, std::string function_name, const Pattern& pattern,
           const RewriteCallback& callback)
      : ExprMutator(module),
        module_(module),
        function_name_(std::move(function_name)),
        pattern_(pattern),
        callback_(callback) {}

  Expr visit_function(const Expr& e, const FunctionNode& node) override {
    ParamSet saved = std::exchange(params_, params_of(node));
    Expr out = ExprMutator::visit_function(e, node);
    params_ = std::move(saved);
    return out;
  }

  BindingBlock visit_binding_block(const BindingBlock& block) override {
    // Blocks inside a replacement are not matched (replacements never are).
    if (!block.is_dataflow || !error_.ok() || in_replacement_) {
      return ExprMutator::visit_binding_block(block);
    }
    // 1. Match, last binding first.
    const LookThrough bindings = look_through_bindings(block);
    Matcher matcher(&bindings, &params_);
    absl::flat_hash_map<const ExprNode*, Expr> replacements;
    absl::flat_hash_set<const ExprNode*> claimed;
    for (auto it = block.bindings.rbegin(); it != block.bindings.rend(); ++it) {
      const Binding& b = *it;
      if (b.is_match_cast || claimed.contains(b.var.get())) continue;
      std::optional<Match> m = matcher.match(pattern_, b.value, b.var, module_);
      if (!m) continue;
      absl::StatusOr<Expr> replacement = callback_(b.value, *m);
      if (!replacement.ok()) {
        error_ = prefixed(replacement.status(), where(b.var));
        break;
      }
      if (!replacement->defined()) {
        error_ = absl::InvalidArgumentError(where(b.var) +
                                            "the rewrite callback returned an undefined Expr");
        break;
      }
      if (replacement->same_as(b.value)) continue;  // declined
      replacements.emplace(b.var.get(), *std::move(replacement));
      ++rewrites_;
      for (const Var& v : m->looked_through()) claimed.insert(v.get());
    }
    if (!error_.ok() || replacements.empty()) return ExprMutator::visit_binding_block(block);

    // 2. Replace.
    auto* saved = std::exchange(replacements_, &replacements);
    BindingBlock out = ExprMutator::visit_binding_block(block);
    replacements_ = saved;

    // 3. Remove the bindings that became dead.
    absl::flat_hash_set<const ExprNode*> live_before = live_bindings(block);
    absl::flat_hash_set<const ExprNode*> live_after = live_bindings(out);
    std::vector<Binding> kept;
    kept.reserve(out.bindings.size());
    for (Binding& b : out.bindings) {
      auto origin = origin_.find(b.var.get());
      const ExprNode* before = origin == origin_.end() ? b.var.get() : origin->second;
      if (!live_after.contains(b.var.get()) && live_before.contains(before)) continue;
      kept.push_back(std::move(b));
    }
    out.bindings = std::move(kept);
    return out;
  }

  void visit_binding(const Binding& binding) override {
    if (replacements_ == nullptr) return ExprMutator::visit_binding(binding);
    auto it = replacements_->find(binding.var.get());
    if (it == replacements_->end()) {
      // The binding may still get a fresh variable (its value's annotation
      // changed); remember where it came from.
      ExprMutator::visit_binding(binding);
      Expr now = ExprMutator::visit_var(binding.var);
      if (!now.same_as(binding.var)) origin_.emplace(now.get(), binding.var.get());
      return;
    }
    absl::StatusOr<Expr> normalized = normalize(it->second, deduce_context());
    if (!normalized.ok()) {
      error_ = prefixed(normalized.status(), where(binding.var) + "the replacement: ");
      return ExprMutator::visit_binding(binding);
    }
    in_replacement_ = true;
    Expr value = visit_expr(*normalized);
    in_replacement_ = false;
    Var var = binding.var;
    if (!struct_info_equal(value.struct_info(), var.struct_info())) {
      var = fresh_like(binding.var, value.struct_info());
      set_var_remap(binding.var, var);
    }
    emit_binding({var, value, false, StructInfo()});
    origin_.emplace(var.get(), binding.var.get());
  }

  absl::Status error() const {
    if (!error_.ok()) return error_;
    absl::Status s = status();
    return s.ok() ? s : prefixed(s, "@" + function_name_ + ": ");
  }
  int64_t rewrites() const { return rewrites_; }

 private:
  std::string where(const Var& var) const {
    return "@" + function_name_ + ": binding " + var.name_hint() + ": ";
  }

  IRModule* module_;
  std::string function_name_;
  const Pattern& pattern_;
  const RewriteCallback& callback_;
  ParamSet params_;
  const absl::flat_hash_map<const ExprNode*, Expr>* replacements_ = nullptr;
  absl::flat_hash_map<const ExprNode*, const ExprNode*> origin_;  ///< new var -> original var
  bool in_replacement_ = false;
  absl::Status error_;
  int64_t rewrites_ = 0;
};

absl::StatusOr<IRModule> rewrite(const IRModule& mod, const Pattern& pattern,
                                 const RewriteCallback& callback, int64_t* rewrites) {
  IRModule out = mod;
  // The callback may add functions to `out`; the graph functions to rewrite are the input's.
  std::vector<std::pair<std::string, Expr>> functions;
  for (const auto& [name, func] : mod.functions()) {
    if (func.as<FunctionNode>() != nullptr) functions.emplace_back(name, func);
  }
  for (const auto& [name, func] : functions) {
    Rewriter rewriter(&out, name, pattern, callback);
    Expr rewritten = rewriter.visit_expr(func);
    if (absl::Status s = rewriter.error(); !s.ok()) return s;
    if (rewrites != nullptr) *rewrites += rewriter.rewrites();
    if (!rewritten.same_as(func)) out.add(name, rewritten);
  }
  return out;
}

absl::StatusOr<Expr> rewrite(const Expr& function, const Pattern& pattern,
                             const RewriteCallback& callback, int64_t* rewrites) {
  if (function.as<FunctionNode>() == nullptr) {
    return absl::InvalidArgumentError(
        "rewrite: expected a Function, got " +
        (function.defined() ? std::string(expr_kind_name(function.kind())) : "an undefined Expr"));
  }
  Rewriter rewriter(nullptr, "function", pattern, callback);
  Expr rewritten = rewriter.visit_expr(function);
  if (absl::Status s = rewriter.error(); !s.ok()) return s;
  if (rewrites != nullptr) *rewrites += rewriter.rewrites();
  return rewritten;
}

// ---------------------------------------------------------------------------
// find_matches

namespace {

class MatchFinder : public ExprVisitor {
 public:
  explicit MatchFinder(const Pattern& pattern) : pattern_(pattern) {}

  void visit_function(const Expr& e, const FunctionNode& node) override {
    ParamSet saved = std::exchange(params_, params_of(node));
    ExprVisitor::visit_function(e, node);
    params_ = std::move(saved);
  }

  void visit_binding_block(const BindingBlock& block) override {
    if (block.is_dataflow) {
      const LookThrough bindings = look_through_bindings(block);
      Matcher matcher(&bindings, &params_);
      for (const Binding& b : block.bindings) {
        if (b.is_match_cast) continue;
        if (std::optional<Match> m = matcher.match(pattern_, b.value, b.var)) {
          matches.push_back(*std::move(m));
        }
      }
    }
    ExprVisitor::visit_binding_block(block);
  }

  std::vector<Match> matches;

 private:
  const Pattern& pattern_;
  ParamSet params_;
};

}  // namespace

std::vector<Match> find_matches(const Expr& function, const Pattern& pattern) {
  MatchFinder finder(pattern);
  if (function.as<FunctionNode>() != nullptr) finder.visit_expr(function);
  return std::move(finder.matches);
}

std::optional<Match> match(const Pattern& pattern, const Expr& expr) {
  Matcher matcher(nullptr, nullptr);
  return matcher.match(pattern, expr);
}

}  // namespace relax::transform
