// FunctionState: scoping, A-normal form, deduction and diagnostics behind
// FunctionBuilder. See builder_state.h for the model.
//
// Every public entry point of the builder ends here; none of them aborts on a
// user mistake. Each emitted value goes through the same path (prepare):
// check the variables it mentions are visible, bind its nested non-leaf
// operands to variables of their own, then normalise it, which deduces its
// StructInfo from its (already annotated) operands only -- so building a
// function costs time linear in its size.
#include "ir/builder_state.h"

#include <string>
#include <utility>

#include "relax/ir/normalize.h"

namespace relax::detail {
namespace {

bool is_impure_call(const Expr& e) {
  const auto* call = e.as<CallNode>();
  if (call == nullptr) return false;
  if (const auto* op = call->callee.as<OpNode>()) {
    const OpInfo* info = find_op(op->name);
    return info != nullptr && !info->pure;
  }
  const auto* fn = call->callee.struct_info().as<FuncStructInfoNode>();
  return fn != nullptr && !fn->pure;
}

std::string describe(const Expr& value) {
  if (const auto* v = value.as<VarNode>()) return "`" + v->name_hint + "`";
  return "the value";
}

}  // namespace

void ModuleState::error(const SourceLocation& loc, const std::string& message) {
  errors.push_back(std::string(loc.file_name()) + ":" + std::to_string(loc.line()) + ": " +
                   message);
}

FunctionState::FunctionState(std::shared_ptr<ModuleState> module,
                             std::shared_ptr<PendingFunction> record)
    : module_(std::move(module)), record_(std::move(record)) {
  frames_.emplace_back();
}

// ---------------------------------------------------------------------------
// Scopes.

void FunctionState::make_visible(const Var& var) {
  visible_.push_back(var);
  visible_set_.insert(var.get());
}

void FunctionState::pop_visible(size_t mark, bool dataflow_only) {
  std::vector<Expr> kept(visible_.begin(), visible_.begin() + mark);
  for (size_t i = mark; i < visible_.size(); ++i) {
    if (dataflow_only && visible_[i].kind() != ExprKind::kDataflowVar) {
      kept.push_back(visible_[i]);
    } else {
      visible_set_.erase(visible_[i].get());
    }
  }
  visible_ = std::move(kept);
}

void FunctionState::define_syms(const std::vector<StructInfo>& sinfos,
                                const std::function<bool(const SymVar&)>& outer_known) {
  for (const SymVar& v : defined_sym_vars(sinfos, outer_known)) {
    if (sym_ids_.insert(v.id()).second) syms_.push_back(v);
  }
  for (const SymVar& v : bare_dim_vars(sinfos)) analyzer_.bind(v, 0);
}

void FunctionState::pop_syms(size_t mark) {
  for (size_t i = mark; i < syms_.size(); ++i) sym_ids_.erase(syms_[i].id());
  syms_.erase(syms_.begin() + static_cast<std::ptrdiff_t>(mark), syms_.end());
}

bool FunctionState::check_sym_defined(const StructInfo& sinfo, const std::string& what,
                                      const SourceLocation& loc) {
  for (const SymVar& v : used_sym_vars(sinfo)) {
    if (sym_defined(v)) continue;
    error(loc, what + ": symbolic variable `" + v.name() + "` in " + sinfo.to_string() +
                   " is not defined (a bare dim of a parameter or of a match_cast pattern "
                   "defines it, and so does a dim that can be solved for it, such as `" +
                   v.name() + " * 2`)");
    return false;
  }
  return true;
}

void FunctionState::seal_params() {
  if (params_sealed_) return;
  params_sealed_ = true;
  // The parameters define their variables together: `x: Tensor[(n * 2,)]`
  // defines n unless a later bare dim `y: Tensor[(n,)]` does.
  std::vector<StructInfo> annotations;
  for (const Var& p : params_) annotations.push_back(p.struct_info());
  define_syms(annotations, nullptr);
  param_sym_mark_ = syms_.size();
  for (size_t i = 0; i < params_.size(); ++i) {
    check_sym_defined(params_[i].struct_info(), "parameter `" + params_[i].name_hint() + "`",
                      param_locs_[i]);
  }
}

bool FunctionState::can_emit(const SourceLocation& loc) {
  if (record_->finished) {
    error(loc, "function `" + name() + "` is finished (ret was called); nothing more can be added");
    return false;
  }
  seal_params();
  return true;
}

DeduceContext FunctionState::context() {
  return DeduceContext{analyzer_, &module_->module,
                       [this](const SymVar& v) { return sym_defined(v); }};
}

// ---------------------------------------------------------------------------
// Preparing values.

int FunctionState::check_scope(const Expr& value, const SourceLocation& loc) {
  bool poisoned = false;
  bool failed = false;
  absl::flat_hash_set<const ExprNode*> seen;
  absl::flat_hash_set<const ExprNode*> local;  // bound inside `value` itself
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (!e.defined() || !seen.insert(e.get()).second) return;
    switch (e.kind()) {
      case ExprKind::kVar:
      case ExprKind::kDataflowVar: {
        if (poisoned_.contains(e)) {
          poisoned = true;
        } else if (!visible_set_.contains(e.get()) && !local.contains(e.get())) {
          failed = true;
          const std::string& n = e.as<VarNode>()->name_hint;
          error(loc, e.kind() == ExprKind::kDataflowVar
                         ? "variable `" + n +
                               "` is a DataflowVar used outside its dataflow "
                               "block (bind it with emit_output to use it after the block)"
                         : "variable `" + n + "` is not defined in this scope");
        }
        return;
      }
      case ExprKind::kGlobalVar:
        if (module_->poisoned.contains(e)) poisoned = true;
        return;
      case ExprKind::kTuple:
        for (const Expr& f : e.as<TupleNode>()->fields) walk(f);
        return;
      case ExprKind::kTupleGetItem:
        walk(e.as<TupleGetItemNode>()->tuple);
        return;
      case ExprKind::kCall:
        walk(e.as<CallNode>()->callee);
        for (const Expr& a : e.as<CallNode>()->args) walk(a);
        return;
      case ExprKind::kIf: {
        const auto* n = e.as<IfNode>();
        walk(n->cond);
        walk(n->then_branch);
        walk(n->else_branch);
        return;
      }
      case ExprKind::kSeqExpr: {
        const auto* n = e.as<SeqExprNode>();
        for (const BindingBlock& block : n->blocks) {
          for (const Binding& b : block.bindings) {
            walk(b.value);
            local.insert(b.var.get());
          }
        }
        walk(n->body);
        return;
      }
      case ExprKind::kFunction: {
        const auto* n = e.as<FunctionNode>();
        for (const Var& p : n->params) local.insert(p.get());
        walk(n->body);
        return;
      }
      default:
        return;
    }
  };
  walk(value);
  return failed ? -1 : (poisoned ? 0 : 1);
}

Expr FunctionState::flatten_operand(const Expr& operand, const SourceLocation& loc) {
  if (is_leaf_value(operand)) return operand;
  if (operand.kind() == ExprKind::kTuple) return flatten(operand, loc);
  Var var = bind_value(operand, "", false, loc, /*call=*/nullptr);
  if (poisoned_.contains(var)) flatten_poisoned_ = true;
  return var;
}

Expr FunctionState::flatten(const Expr& value, const SourceLocation& loc) {
  auto operands = [&](std::vector<Expr>& exprs) {
    bool changed = false;
    for (Expr& x : exprs) {
      Expr y = flatten_operand(x, loc);
      changed = changed || !y.same_as(x);
      x = std::move(y);
    }
    return changed;
  };
  switch (value.kind()) {
    case ExprKind::kCall: {
      const auto* n = value.as<CallNode>();
      std::vector<Expr> parts = {n->callee};
      parts.insert(parts.end(), n->args.begin(), n->args.end());
      if (!operands(parts)) return value;
      Expr callee = parts[0];
      parts.erase(parts.begin());
      return make_call(callee, std::move(parts), n->attrs, n->sinfo_args);
    }
    case ExprKind::kTuple: {
      std::vector<Expr> fields = value.as<TupleNode>()->fields;
      return operands(fields) ? make_tuple(std::move(fields)) : value;
    }
    case ExprKind::kTupleGetItem: {
      const auto* n = value.as<TupleGetItemNode>();
      Expr tuple = flatten_operand(n->tuple, loc);
      return tuple.same_as(n->tuple) ? value : make_tuple_get_item(tuple, n->index);
    }
    default:
      return value;
  }
}

Expr FunctionState::prepare(const Expr& value, const SourceLocation& loc, const char* call) {
  if (call != nullptr) {
    // Before anything looks into the value: an undefined operand has no node.
    if (absl::Status s = check_defined(value); !s.ok()) {
      error(loc, std::string(call) + ": " + std::string(s.message()));
      return Expr();
    }
    if (check_scope(value, loc) <= 0) return Expr();
  }
  bool outer_poisoned = flatten_poisoned_;
  flatten_poisoned_ = false;
  Expr flat = flatten(value, loc);
  bool poisoned = flatten_poisoned_;
  flatten_poisoned_ = outer_poisoned;
  if (poisoned) return Expr();
  DeduceContext ctx = context();
  absl::StatusOr<Expr> normalized = normalize(flat, ctx);
  if (!normalized.ok()) {
    error(loc, std::string(normalized.status().message()));
    return Expr();
  }
  return *std::move(normalized);
}

// ---------------------------------------------------------------------------
// Bindings.

Var FunctionState::new_var(std::string name, StructInfo sinfo, bool dataflow) {
  if (name.empty()) name = (dataflow ? "lv" : "gv") + std::to_string(next_name_++);
  Var var = dataflow ? DataflowVar(std::move(name), std::move(sinfo))
                     : Var(std::move(name), std::move(sinfo));
  make_visible(var);
  return var;
}

Var FunctionState::poisoned_var(std::string name, bool dataflow) {
  Var var = new_var(std::move(name), object_sinfo(), dataflow);
  poisoned_.insert(var);
  return var;
}

void FunctionState::append(Binding binding) {
  Frame& f = frame();
  if (f.blocks.empty() || f.new_block || f.blocks.back().is_dataflow != f.in_dataflow) {
    f.blocks.push_back(BindingBlock{{}, f.in_dataflow});
    f.new_block = false;
  }
  f.blocks.back().bindings.push_back(std::move(binding));
}

Var FunctionState::bind_value(const Expr& value, std::string name, bool output,
                              const SourceLocation& loc, const char* call) {
  bool dataflow = frame().in_dataflow && !output;
  Expr v = prepare(value, loc, call);
  if (!v.defined()) return poisoned_var(std::move(name), dataflow);
  if (frame().in_dataflow && is_impure_call(v)) {
    error(loc, "an impure call cannot be bound in a dataflow block");
    return poisoned_var(std::move(name), dataflow);
  }
  std::string what = name.empty() ? std::string("the bound value") : "`" + name + "`";
  if (!check_sym_defined(v.struct_info(), what, loc)) {
    return poisoned_var(std::move(name), dataflow);
  }
  Var var = new_var(std::move(name), v.struct_info(), dataflow);
  append(Binding{var, v, false, StructInfo()});
  return var;
}

Expr FunctionState::as_body(const Expr& prepared, const SourceLocation& loc) {
  if (is_leaf_value(prepared) || prepared.kind() == ExprKind::kTuple) return prepared;
  Var var = bind_value(prepared, "", false, loc, /*call=*/nullptr);
  return poisoned_.contains(var) ? Expr() : Expr(var);
}

Var FunctionState::emit(Expr value, std::string name, bool output, const SourceLocation& loc) {
  if (!can_emit(loc)) return poisoned_var(std::move(name), false);
  const char* call = output ? "emit_output" : "emit";
  if (output && !frame().in_dataflow) {
    error(loc, "emit_output outside a dataflow block (use emit)");
    output = false;
  }
  return bind_value(value, std::move(name), output, loc, call);
}

Var FunctionState::match_cast(Expr value, StructInfo pattern, std::string name,
                              const SourceLocation& loc) {
  if (!can_emit(loc)) return poisoned_var(std::move(name), false);
  bool dataflow = frame().in_dataflow;
  if (absl::Status s = check_defined(pattern, "the pattern"); !s.ok()) {
    error(loc, "match_cast: " + std::string(s.message()));
    return poisoned_var(std::move(name), dataflow);
  }
  Expr v = prepare(value, loc, "match_cast");
  // The pattern's variables become defined even when the value failed, so
  // that later uses of them are not reported again.
  define_syms({pattern}, [this](const SymVar& s) { return sym_defined(s); });
  if (!v.defined()) return poisoned_var(std::move(name), dataflow);
  if (!check_sym_defined(pattern, "match_cast pattern", loc)) {
    return poisoned_var(std::move(name), dataflow);
  }
  // The variables the pattern defines are fresh, so nothing is proven about
  // them: only dims that can never be equal fail here.
  if (check_base_of(pattern, v.struct_info(), analyzer_) == BaseCheck::kFail) {
    error(loc, "match_cast: " + describe(v) + " is " + v.struct_info().to_string() +
                   ", which can never match " + pattern.to_string());
    return poisoned_var(std::move(name), dataflow);
  }
  Var var = new_var(std::move(name), pattern, dataflow);
  append(Binding{var, v, true, pattern});
  return var;
}

}  // namespace relax::detail
