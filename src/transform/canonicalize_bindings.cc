// canonicalize-bindings: bindings that only rename a value disappear.
//
// What it does. In every graph function (nested functions and If branches
// included), a binding whose variable is just another name for a value
// already at hand is removed and its uses become uses of that value:
//   - a var-to-var binding `y = x`;
//   - a tuple item of a known tuple, `y = t[i]` where `t = (a, b, ...)` was
//     bound earlier (in any block in scope): `y` becomes the i-th field. The
//     item is replaced wherever it stands (an operand too, in text that is
//     not in A-normal form), but only by a leaf (a variable, a constant, ...):
//     a call written inside a tuple is not computed twice;
//   - a trivial match_cast `y = match_cast(x, S)`: `x`'s annotation is
//     already at least as precise as `S` (is_base_of proves it) and every
//     symbolic variable of `S` is already defined, so the cast checks nothing
//     and defines nothing.
// Chains resolve in one run (`b = a; c = b` makes uses of `c` uses of `a`),
// and a value found through a tuple is itself resolved. When the value is not
// a variable (a tuple field that is a constant, a match_cast of a constant),
// the binding stays and binds that value directly.
//
// Dataflow blocks. A DataflowVar cannot be used after its block, so an output
// `output y = x` of a DataflowVar `x` of the same block cannot simply become
// `x`. Instead `x`'s own binding takes over `y` (the binding of `x` now
// defines the output, with `x`'s annotation) and `x`'s uses become uses of
// `y`; further outputs aliasing `x` then become `y`. A value that refers to a
// DataflowVar of another block is never substituted.
//
// Stages:
//   1. at the start of each dataflow block, a scan of its bindings (with the
//      same rules on the input, chains resolved) picks, for each DataflowVar
//      of the block that some output aliases, the first such output;
//   2. an ExprMutator rewrites bindings in order: a picked DataflowVar's
//      binding defines the output variable instead, the output's own binding
//      goes, an alias binding is dropped with its variable redirected to the
//      value (set_var_remap), and known tuples are recorded as they are
//      emitted. The mutator re-deduces what changed, so annotations that a
//      coarser alias hid become the value's (a later binding may get a
//      fresh, more precise variable).
//
// Invariants. Relies on a well-formed module with current annotations. Keeps
// well-formedness: a variable is replaced only by a value defined before it
// and visible wherever it was (DataflowVars only inside their block);
// removing a trivial match_cast loses no symbolic variable. Unchanged
// functions stay pointer-identical.
//
// Not handled: an output that aliases a DataflowVar only once earlier
// rewrites refine annotations (a match_cast that becomes trivial during the
// run) keeps the alias binding `y = x`; the next run (the default pipeline
// runs this pass in a fixed-point group) resolves it. Dead bindings left
// behind (a tuple whose items were all resolved) are dce's job.
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "relax/ir/normalize.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

enum class AliasKind : uint8_t { kNone, kVar, kTupleItem, kMatchCast };

struct Alias {
  AliasKind kind = AliasKind::kNone;
  Expr target;
};

using TupleLookup = std::function<const TupleNode*(const Expr&)>;
using SymScope = std::function<bool(const SymVar&)>;

Alias find_candidate(const Binding& b, const Expr& value, const TupleLookup& tuple_of,
                     const SymScope& in_scope, Analyzer& analyzer) {
  if (b.is_match_cast) {
    if (!value.struct_info().defined()) return {};
    for (const SymVar& v : used_sym_vars(b.cast_sinfo)) {
      if (!in_scope(v)) return {};
    }
    if (!is_base_of(b.cast_sinfo, value.struct_info(), analyzer)) return {};
    return {AliasKind::kMatchCast, value};
  }
  if (value.as<VarNode>() != nullptr) return {AliasKind::kVar, value};
  if (const auto* item = value.as<TupleGetItemNode>()) {
    const TupleNode* tuple = tuple_of(item->tuple);
    if (tuple != nullptr && item->index >= 0 && static_cast<size_t>(item->index) < tuple->fields.size() &&
        is_leaf_value(tuple->fields[static_cast<size_t>(item->index)])) {
      return {AliasKind::kTupleItem, tuple->fields[static_cast<size_t>(item->index)]};
    }
  }
  return {};
}

// What binding `b`, whose value is (now) `value`, merely renames. The target
// must be known at least as precisely as `b`'s variable, so that no use
// loses what its annotation said (a variable annotated more precisely than
// its value is a check this pass does not drop).
Alias find_alias(const Binding& b, const Expr& value, const TupleLookup& tuple_of,
                 const SymScope& in_scope, Analyzer& analyzer) {
  Alias alias = find_candidate(b, value, tuple_of, in_scope, analyzer);
  if (alias.kind == AliasKind::kNone) return alias;
  const StructInfo& target = alias.target.struct_info();
  if (!target.defined() || !b.var.struct_info().defined() ||
      !is_base_of(b.var.struct_info(), target, analyzer)) {
    return {};
  }
  return alias;
}

Var fresh_like(const Var& v, StructInfo sinfo) {
  if (v.is_dataflow()) return DataflowVar(v.name_hint(), std::move(sinfo));
  return Var(v.name_hint(), std::move(sinfo));
}

class BindingCanonicalizer : public ExprMutator {
 public:
  explicit BindingCanonicalizer(const IRModule& mod) : ExprMutator(&mod) {}

  int64_t count(AliasKind kind) const { return counts_[static_cast<size_t>(kind)]; }

  BindingBlock visit_binding_block(const BindingBlock& block) override {
    absl::flat_hash_set<const ExprNode*> outer;
    outer.swap(block_dataflow_vars_);
    if (block.is_dataflow) plan_promotions(block);
    BindingBlock out = ExprMutator::visit_binding_block(block);
    block_dataflow_vars_.swap(outer);
    return out;
  }

  // An item of a known tuple, wherever it stands, is the field (when that is
  // a leaf: a nested call is not computed twice).
  Expr visit_tuple_get_item(const Expr& e, const TupleGetItemNode& node) override {
    Expr visited = ExprMutator::visit_tuple_get_item(e, node);
    const auto* item = visited.as<TupleGetItemNode>();
    if (item == nullptr) return visited;
    const TupleNode* tuple = known_tuple(item->tuple);
    if (tuple == nullptr || item->index < 0 || static_cast<size_t>(item->index) >= tuple->fields.size()) {
      return visited;
    }
    const Expr& field = tuple->fields[static_cast<size_t>(item->index)];
    if (!is_leaf_value(field) || !usable_here(field) || !field.struct_info().defined() ||
        !is_base_of(visited.struct_info(), field.struct_info(), analyzer())) {
      return visited;
    }
    ++counts_[static_cast<size_t>(AliasKind::kTupleItem)];
    return field;
  }

  void visit_binding(const Binding& b) override {
    // An output whose definition a DataflowVar's binding took over.
    if (auto it = promoted_output_.find(b.var.get()); it != promoted_output_.end()) {
      const Var& def = promoted_var_.at(it->second.first);
      if (!def.same_as(b.var)) set_var_remap(b.var, def);
      ++counts_[static_cast<size_t>(it->second.second)];
      return;
    }
    Expr value = visit_expr(b.value);
    if (auto it = promote_def_.find(b.var.get()); it != promote_def_.end()) {
      return emit_promoted(b, value, it->second);
    }
    Alias alias = find_alias(
        b, value, [this](const Expr& e) { return known_tuple(e); }, deduce_context().sym_in_scope,
        analyzer());
    if (alias.kind == AliasKind::kNone || !usable_here(alias.target)) {
      record(emit_as_is(b, value), value, b.is_match_cast);
      return;
    }
    const bool target_is_var = alias.target.as<VarNode>() != nullptr;
    if (target_is_var && (b.var.is_dataflow() || alias.target.kind() != ExprKind::kDataflowVar)) {
      set_var_remap(b.var, Var::from_expr(alias.target));
      ++counts_[static_cast<size_t>(alias.kind)];
      return;
    }
    // An output aliasing a DataflowVar, or a value that is no variable: the
    // binding stays, binding the value itself.
    if (alias.kind != AliasKind::kVar) ++counts_[static_cast<size_t>(alias.kind)];
    record(emit_plain(b, alias.target), alias.target, false);
  }

 private:
  // Stage 1: which DataflowVar's binding defines which output instead.
  void plan_promotions(const BindingBlock& block) {
    absl::flat_hash_map<const ExprNode*, Expr> resolved;  // alias variable -> what it names
    absl::flat_hash_map<const ExprNode*, const TupleNode*> tuples;
    absl::flat_hash_set<const ExprNode*> defined_here;
    absl::flat_hash_set<uint64_t> block_syms;
    auto resolve = [&](Expr e) {
      while (e.as<VarNode>() != nullptr) {
        auto it = resolved.find(e.get());
        if (it == resolved.end()) break;
        e = it->second;
      }
      return e;
    };
    auto tuple_of = [&](const Expr& e) -> const TupleNode* {
      Expr r = resolve(e);
      if (auto it = tuples.find(r.get()); it != tuples.end()) return it->second;
      // A tuple bound before this block, as the rewrite emitted it.
      if (r.as<VarNode>() == nullptr) return nullptr;
      return known_tuple(ExprMutator::visit_var(Var::from_expr(r)));
    };
    SymScope in_scope = [&](const SymVar& v) {
      return block_syms.contains(v.id()) || deduce_context().sym_in_scope(v);
    };
    for (const Binding& b : block.bindings) {
      if (b.var.is_dataflow()) defined_here.insert(b.var.get());
      Alias alias = find_alias(b, b.value, tuple_of, in_scope, analyzer());
      if (alias.kind == AliasKind::kNone) {
        if (b.is_match_cast) {
          for (const SymVar& v : defined_sym_vars({b.cast_sinfo}, in_scope)) block_syms.insert(v.id());
        } else if (const auto* tuple = b.value.as<TupleNode>()) {
          tuples[b.var.get()] = tuple;
        }
        continue;
      }
      Expr target = resolve(alias.target);
      resolved[b.var.get()] = target;
      if (!b.var.is_dataflow() && target.kind() == ExprKind::kDataflowVar &&
          defined_here.contains(target.get()) && !promote_def_.contains(target.get())) {
        promote_def_[target.get()] = b.var;
        promoted_output_[b.var.get()] = {target.get(), alias.kind};
      }
    }
  }

  // The binding of DataflowVar `b.var`, defining `output` (or a fresh Var of
  // its name when the annotations differ) instead.
  void emit_promoted(const Binding& b, const Expr& value, const Var& output) {
    StructInfo pattern = b.is_match_cast ? visit_struct_info(b.cast_sinfo) : StructInfo();
    StructInfo annotation = b.is_match_cast ? pattern : value.struct_info();
    Var var = struct_info_equal(annotation, output.struct_info()) ? output
                                                                  : Var(output.name_hint(), annotation);
    emit_binding({var, value, b.is_match_cast, pattern});
    set_var_remap(b.var, var);
    promoted_var_.emplace(b.var.get(), var);
    record(var, value, b.is_match_cast);
  }

  // `b`'s variable bound to `value` by a plain binding; a fresh variable when
  // the annotation changed.
  Var emit_plain(const Binding& b, const Expr& value) {
    if (!b.is_match_cast && value.same_as(b.value)) {
      emit_binding(b);
      return b.var;
    }
    if (struct_info_equal(value.struct_info(), b.var.struct_info())) {
      emit_binding({b.var, value, false, StructInfo()});
      return b.var;
    }
    Var var = fresh_like(b.var, value.struct_info());
    set_var_remap(b.var, var);
    emit_binding({var, value, false, StructInfo()});
    return var;
  }

  // `b` with its value rewritten to `value`, as ExprMutator would emit it.
  Var emit_as_is(const Binding& b, const Expr& value) {
    if (!b.is_match_cast) return emit_plain(b, value);
    StructInfo pattern = visit_struct_info(b.cast_sinfo);
    if (value.same_as(b.value) && pattern.same_as(b.cast_sinfo)) {
      emit_binding(b);
      return b.var;
    }
    Var var = b.var;
    if (!pattern.same_as(b.cast_sinfo)) {
      var = fresh_like(b.var, pattern);
      set_var_remap(b.var, var);
    }
    emit_binding({var, value, true, pattern});
    return var;
  }

  // Notes what the emitted binding `var = value` makes known.
  void record(const Var& var, const Expr& value, bool is_match_cast) {
    if (var.is_dataflow()) block_dataflow_vars_.insert(var.get());
    if (!is_match_cast && value.as<TupleNode>() != nullptr) tuples_[var.get()] = value;
  }

  const TupleNode* known_tuple(const Expr& e) const {
    auto it = tuples_.find(e.get());
    return it == tuples_.end() ? nullptr : it->second.as<TupleNode>();
  }

  // A DataflowVar may only replace a variable of its own block.
  bool usable_here(const Expr& target) const {
    return target.kind() != ExprKind::kDataflowVar || block_dataflow_vars_.contains(target.get());
  }

  // Stage 1's picks: DataflowVar -> the output its binding defines, and
  // output -> (that DataflowVar, the kind of alias the output was).
  absl::flat_hash_map<const ExprNode*, Var> promote_def_;
  absl::flat_hash_map<const ExprNode*, std::pair<const ExprNode*, AliasKind>> promoted_output_;
  // DataflowVar -> the variable its binding now defines.
  absl::flat_hash_map<const ExprNode*, Var> promoted_var_;
  // Emitted variables bound to a Tuple, and their Tuple.
  absl::flat_hash_map<const ExprNode*, Expr> tuples_;
  // The DataflowVars emitted in the block being rewritten.
  absl::flat_hash_set<const ExprNode*> block_dataflow_vars_;
  int64_t counts_[4] = {0, 0, 0, 0};
};

class CanonicalizeBindingsPass : public Pass {
 public:
  CanonicalizeBindingsPass()
      : Pass(PassInfo("canonicalize-bindings",
                      "removes var-to-var bindings, tuple items of known tuples and trivial match_casts")
                 .with_statistic("removed_aliases", "var-to-var bindings replaced by their value")
                 .with_statistic("resolved_tuple_items", "items of known tuples replaced by the field")
                 .with_statistic("removed_match_casts", "match_casts that check and define nothing")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule out = mod;
    int64_t counts[4] = {0, 0, 0, 0};
    for (const auto& [name, func] : mod.functions()) {
      if (func.as<FunctionNode>() == nullptr) continue;
      BindingCanonicalizer canonicalizer(mod);
      Expr rewritten = canonicalizer.visit_expr(func);
      if (absl::Status s = canonicalizer.status(); !s.ok()) {
        // Uses that now see a more precise annotation can prove an error the
        // program had all along (a rank-only operand that turns out to be of
        // the wrong shape): the module is wrong, not the pass.
        return absl::InvalidArgumentError("@" + name +
                                          ": with the annotations made more precise, deduction fails: " +
                                          std::string(s.message()));
      }
      if (rewritten.same_as(func)) continue;
      for (AliasKind kind : {AliasKind::kVar, AliasKind::kTupleItem, AliasKind::kMatchCast}) {
        counts[static_cast<size_t>(kind)] += canonicalizer.count(kind);
      }
      out.add(name, rewritten);
    }
    ctx.add_statistic("removed_aliases", counts[static_cast<size_t>(AliasKind::kVar)]);
    ctx.add_statistic("resolved_tuple_items", counts[static_cast<size_t>(AliasKind::kTupleItem)]);
    ctx.add_statistic("removed_match_casts", counts[static_cast<size_t>(AliasKind::kMatchCast)]);
    return out;
  }
};

}  // namespace

PassPtr create_canonicalize_bindings_pass() { return std::make_shared<CanonicalizeBindingsPass>(); }

}  // namespace relax::transform
