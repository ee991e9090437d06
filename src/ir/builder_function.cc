// FunctionState: parameters, bounds, dataflow blocks, If branches and ret.
#include <string>
#include <utility>
#include <variant>

#include "ir/builder_state.h"
#include "relax/ir/normalize.h"
#include "relax/ir/structural_equal.h"

namespace relax::detail {

Var FunctionState::add_param(std::string name, StructInfo sinfo, const SourceLocation& loc) {
  if (!sinfo.defined()) {
    error(loc, "param: parameter `" + name + "` has no annotation");
    sinfo = object_sinfo();
  } else if (absl::Status s = check_defined(sinfo, "the annotation of parameter `" + name + "`");
             !s.ok()) {
    error(loc, "param: " + std::string(s.message()));
    sinfo = object_sinfo();
  }
  Var var(std::move(name), std::move(sinfo));
  make_visible(var);
  if (params_sealed_ || record_->finished) {
    // Its variables become defined all the same, so that their uses are not reported again.
    define_syms({var.struct_info()}, [this](const SymVar& v) { return sym_defined(v); });
    error(loc, "parameter `" + var.name_hint() + "` is added after the body of `" + this->name() +
                   "` started; parameters come first");
    poisoned_.insert(var);
    return var;
  }
  params_.push_back(var);
  param_locs_.push_back(loc);
  return var;
}

void FunctionState::add_upper_bound(const SymVar& var, int64_t upper, const SourceLocation& loc) {
  if (upper < 0) {
    error(loc, "upper_bound: `" + var.name() + "` <= " + std::to_string(upper) +
                   " leaves no valid size");
    return;
  }
  for (const SymBound& b : upper_bounds_) {
    if (b.var.id() == var.id()) {
      error(loc, "upper_bound: `" + var.name() + "` already has an upper bound (" +
                     std::to_string(b.upper) + ")");
      return;
    }
  }
  upper_bounds_.push_back(SymBound{var, upper});
  upper_bound_locs_.push_back(loc);
  analyzer_.bind(var, 0, upper);
}

void FunctionState::set_attr(std::string name, AttrValue value, const SourceLocation& loc) {
  if (name.empty()) {
    error(loc, "set_attr: the attribute name is empty");
    return;
  }
  if (const auto* list = std::get_if<std::vector<SymExpr>>(&value)) {
    for (size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].defined()) continue;
      error(loc, "set_attr: element " + std::to_string(i) + " of attribute `" + name +
                     "` is undefined (a default-constructed handle)");
      return;
    }
  }
  attrs_[std::move(name)] = std::move(value);
}

uint64_t FunctionState::begin_dataflow(const SourceLocation& loc) {
  if (!can_emit(loc)) return 0;
  Frame& f = frame();
  if (f.in_dataflow) {
    error(loc, "dataflow blocks do not nest; this one is ignored");
    return 0;
  }
  f.in_dataflow = true;
  f.new_block = true;
  f.dataflow_token = next_token_++;
  f.dataflow_var_mark = visible_.size();
  return f.dataflow_token;
}

void FunctionState::end_dataflow(uint64_t token) {
  if (token == 0) return;
  for (size_t i = frames_.size(); i-- > 0;) {
    Frame& f = frames_[i];
    if (!f.in_dataflow || f.dataflow_token != token) continue;
    f.in_dataflow = false;
    f.new_block = true;
    // Only the innermost frame's variables are on top of the stack; a scope
    // that outlived its branch has already had its variables popped.
    if (i + 1 == frames_.size()) pop_visible(f.dataflow_var_mark, /*dataflow_only=*/true);
    return;
  }
}

Var FunctionState::emit_if(Expr cond, const std::function<Expr()>& then_branch,
                           const std::function<Expr()>& else_branch, std::string name,
                           const SourceLocation& loc) {
  if (!can_emit(loc)) return poisoned_var(std::move(name), false);
  bool in_dataflow = frame().in_dataflow;
  if (in_dataflow) error(loc, "emit_if inside a dataflow block; end the block first");
  Expr c = prepare(cond, loc, "emit_if");
  bool ok = c.defined() && !in_dataflow;

  Expr branches[2];
  const std::function<Expr()>* fns[2] = {&then_branch, &else_branch};
  const char* labels[2] = {"then", "else"};
  for (int i = 0; i < 2; ++i) {
    Frame nested;
    nested.var_mark = visible_.size();
    nested.sym_mark = syms_.size();
    frames_.push_back(std::move(nested));
    Expr result = *fns[i] ? (*fns[i])() : Expr();
    Expr value;
    if (!result.defined()) {
      error(loc, std::string("emit_if: the ") + labels[i] + " branch returned no value");
    } else {
      value = prepare(result, loc, "emit_if");
      if (value.defined()) value = as_body(value, loc);
    }
    if (frame().in_dataflow) {
      error(loc, std::string("emit_if: the ") + labels[i] + " branch left a dataflow block open");
      value = Expr();
    }
    Frame done = std::move(frames_.back());
    frames_.pop_back();
    pop_visible(done.var_mark, /*dataflow_only=*/false);
    pop_syms(done.sym_mark);
    if (!value.defined()) {
      ok = false;
      continue;
    }
    DeduceContext ctx = context();
    absl::StatusOr<Expr> seq = normalize(make_seq_expr(std::move(done.blocks), value), ctx);
    if (!seq.ok()) {
      error(loc, std::string(seq.status().message()));
      ok = false;
      continue;
    }
    branches[i] = *std::move(seq);
  }
  if (!ok) return poisoned_var(std::move(name), false);
  DeduceContext ctx = context();
  absl::StatusOr<Expr> if_expr = normalize(make_if(c, branches[0], branches[1]), ctx);
  if (!if_expr.ok()) {
    error(loc, std::string(if_expr.status().message()));
    return poisoned_var(std::move(name), false);
  }
  Var var = new_var(std::move(name), if_expr->struct_info(), false);
  append(Binding{var, *if_expr, false, StructInfo()});
  return var;
}

StructInfo FunctionState::check_declaration(const StructInfo& body_sinfo,
                                            const SourceLocation& loc) {
  const StructInfo& declared = record_->declared_sinfo;
  const auto* decl = declared.as<FuncStructInfoNode>();
  std::vector<StructInfo> actual_params;
  for (const Var& p : params_) actual_params.push_back(p.struct_info());
  StructInfo actual = func_sinfo(actual_params, body_sinfo, pure_);
  auto mismatch = [&](const std::string& why) {
    error(loc, "function `" + name() + "` does not match its declaration at " +
                   std::string(record_->decl_loc.file_name()) + ":" +
                   std::to_string(record_->decl_loc.line()) + " (" + why + "): declared " +
                   declared.to_string() + ", actual " + actual.to_string());
    return StructInfo();
  };
  if (decl->params->size() != params_.size()) {
    return mismatch("declared with " + std::to_string(decl->params->size()) +
                    " parameters, defined with " + std::to_string(params_.size()));
  }
  if (decl->pure != pure_) return mismatch(decl->pure ? "declared pure" : "declared impure");
  // Parameters must be equal up to renaming their symbolic variables.
  if (!structural_equal(func_sinfo(*decl->params, object_sinfo(), pure_),
                        func_sinfo(actual_params, object_sinfo(), pure_))) {
    return mismatch("the parameter annotations differ");
  }
  // The declared return in terms of the actual parameters' variables.
  absl::StatusOr<StructInfo> ret = deduce_func_call(*decl, actual_params, analyzer_, name());
  if (!ret.ok()) return mismatch(std::string(ret.status().message()));
  if (check_base_of(*ret, body_sinfo, analyzer_) == BaseCheck::kFail) {
    return mismatch("the result does not fit the declared return annotation");
  }
  return *std::move(ret);
}

Expr FunctionState::ret(Expr value, const SourceLocation& loc) {
  if (record_->finished) {
    error(loc, "ret: function `" + name() + "` is already finished");
    return Expr();
  }
  seal_params();
  if (frames_.size() > 1) {
    error(loc, "ret inside an emit_if branch; a branch returns its value from its function");
    return Expr();
  }
  if (frame().in_dataflow) error(loc, "ret inside a dataflow block; end the block first");
  Expr v = prepare(value, loc, "ret");
  if (v.defined()) v = as_body(v, loc);
  record_->finished = true;
  for (size_t i = 0; i < upper_bounds_.size(); ++i) {
    if (!sym_defined(upper_bounds_[i].var)) {
      error(upper_bound_locs_[i], "upper_bound: `" + upper_bounds_[i].var.name() +
                                      "` is not a symbolic variable of function `" + name() + "`");
    }
  }
  bool poisoned = !v.defined();
  if (poisoned) v = poisoned_var("", false);

  // The return annotation may only mention what the parameters define.
  absl::flat_hash_set<uint64_t> param_syms;
  for (size_t i = 0; i < param_sym_mark_; ++i) param_syms.insert(syms_[i].id());
  DeduceContext ctx{analyzer_, &module_->module,
                    [&](const SymVar& s) { return param_syms.contains(s.id()); }};
  absl::StatusOr<Expr> body = normalize(make_seq_expr(frame().blocks, v), ctx);
  if (!body.ok()) {
    error(loc, std::string(body.status().message()));
    return Expr();
  }
  if (record_->duplicate) return Expr();
  StructInfo ret_sinfo = body->struct_info();
  if (record_->declared_gvar.defined()) {
    ret_sinfo = check_declaration(ret_sinfo, loc);
    if (!ret_sinfo.defined()) return Expr();
  }
  Expr fn = make_function(params_, *body, ret_sinfo, pure_, upper_bounds_, attrs_);
  module_->module.add(name(), fn);
  global_var_ = module_->module.global_var(name());
  if (poisoned) module_->poisoned.insert(global_var_);
  return global_var_;
}

}  // namespace relax::detail
