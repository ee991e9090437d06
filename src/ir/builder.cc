// ModuleBuilder and FunctionBuilder: thin handles over the builder state.
#include "relax/ir/builder.h"

#include <utility>

#include "ir/builder_state.h"
#include "relax/ir/normalize.h"

namespace relax {
namespace {

// A module function's name is what calls, the printer and the runtime look
// it up by: it must not be empty. False (and reported, naming `call`) when it is.
bool check_function_name(detail::ModuleState& state, const char* call, const std::string& name,
                         const SourceLocation& loc) {
  if (!name.empty()) return true;
  state.error(loc, std::string(call) + ": the function name is empty");
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// DataflowScope.

DataflowScope::DataflowScope(std::shared_ptr<detail::FunctionState> state, uint64_t token)
    : state_(std::move(state)), token_(token) {}

DataflowScope::DataflowScope(DataflowScope&& other) noexcept
    : state_(std::move(other.state_)), token_(other.token_) {
  other.token_ = 0;
}

DataflowScope::~DataflowScope() { end(); }

void DataflowScope::end() {
  if (state_ != nullptr && token_ != 0) state_->end_dataflow(token_);
  token_ = 0;
}

// ---------------------------------------------------------------------------
// FunctionBuilder.

FunctionBuilder::FunctionBuilder(std::shared_ptr<detail::FunctionState> state)
    : state_(std::move(state)) {}

Var FunctionBuilder::param(std::string name, StructInfo sinfo, Location loc) {
  return state_->add_param(std::move(name), std::move(sinfo), loc);
}

void FunctionBuilder::upper_bound(const SymVar& var, int64_t upper, Location loc) {
  state_->add_upper_bound(var, upper, loc);
}

void FunctionBuilder::set_impure() { state_->set_impure(); }

void FunctionBuilder::set_attr(std::string name, AttrValue value, Location loc) {
  state_->set_attr(std::move(name), std::move(value), loc);
}

DataflowScope FunctionBuilder::dataflow(Location loc) {
  return DataflowScope(state_, state_->begin_dataflow(loc));
}

Var FunctionBuilder::emit(Expr value, std::string name, Location loc) {
  return state_->emit(std::move(value), std::move(name), /*output=*/false, loc);
}

Var FunctionBuilder::emit_output(Expr value, std::string name, Location loc) {
  return state_->emit(std::move(value), std::move(name), /*output=*/true, loc);
}

Var FunctionBuilder::match_cast(Expr value, StructInfo pattern, std::string name, Location loc) {
  return state_->match_cast(std::move(value), std::move(pattern), std::move(name), loc);
}

Var FunctionBuilder::emit_if(Expr cond, const std::function<Expr()>& then_branch,
                             const std::function<Expr()>& else_branch, std::string name,
                             Location loc) {
  return state_->emit_if(std::move(cond), then_branch, else_branch, std::move(name), loc);
}

Expr FunctionBuilder::ret(Expr value, Location loc) { return state_->ret(std::move(value), loc); }

Expr FunctionBuilder::global_var() const { return state_->global_var(); }

const std::string& FunctionBuilder::name() const { return state_->name(); }

Analyzer& FunctionBuilder::analyzer() { return state_->analyzer(); }

// ---------------------------------------------------------------------------
// ModuleBuilder.

ModuleBuilder::ModuleBuilder() : state_(std::make_shared<detail::ModuleState>()) {}

FunctionBuilder ModuleBuilder::function(std::string name, Location loc) {
  for (const auto& other : state_->functions) {
    if (other->name != name || !other->declared_gvar.defined() || other->has_body) continue;
    // The body of a declared function: its GlobalVar is already in the module.
    other->has_body = true;
    other->loc = loc;
    return FunctionBuilder(std::make_shared<detail::FunctionState>(state_, other));
  }
  auto record = std::make_shared<detail::PendingFunction>();
  record->name = name;
  record->loc = loc;
  record->has_body = true;
  if (!check_function_name(*state_, "function", name, loc)) {
    // Built as usual (its own mistakes are reported too) but never added.
    record->duplicate = true;
  } else {
    bool taken = state_->module.contains(name);
    for (const auto& other : state_->functions) taken = taken || other->name == name;
    if (taken) {
      state_->error(loc, "function `" + name + "` is defined twice");
      record->duplicate = true;
    }
  }
  state_->functions.push_back(record);
  return FunctionBuilder(std::make_shared<detail::FunctionState>(state_, std::move(record)));
}

Expr ModuleBuilder::declare_function(std::string name, StructInfo func_sinfo, Location loc) {
  auto poison = [&] {
    Expr poisoned = make_global_var(name, opaque_func_sinfo(object_sinfo()));
    state_->poisoned.insert(poisoned);
    return poisoned;
  };
  if (!check_function_name(*state_, "declare_function", name, loc)) return poison();
  if (func_sinfo.defined()) {
    if (absl::Status s = check_defined(func_sinfo, "the annotation"); !s.ok()) {
      state_->error(loc, "declare_function(`" + name + "`): " + std::string(s.message()));
      return poison();
    }
  }
  const auto* fn = func_sinfo.defined() ? func_sinfo.as<FuncStructInfoNode>() : nullptr;
  if (fn == nullptr || !fn->params.has_value()) {
    state_->error(loc, "declare_function(`" + name +
                           "`): expected a Func annotation with parameters, got " +
                           (func_sinfo.defined() ? func_sinfo.to_string() : std::string("none")));
    return poison();
  }
  bool taken = state_->module.contains(name);
  for (const auto& other : state_->functions) taken = taken || other->name == name;
  if (taken) {
    state_->error(loc, "function `" + name + "` is declared or defined twice");
    return poison();
  }
  // The module holds the declaration as an ExternFunc entry carrying the
  // declared annotation, which gives the function its GlobalVar now; ret()
  // replaces the entry by the body and keeps that GlobalVar. build() reports
  // a declaration whose body never came.
  state_->module.add(name, make_extern_func(name, func_sinfo));
  auto record = std::make_shared<detail::PendingFunction>();
  record->name = name;
  record->loc = loc;
  record->decl_loc = loc;
  record->declared_sinfo = func_sinfo;
  record->declared_gvar = state_->module.global_var(name);
  state_->functions.push_back(record);
  return record->declared_gvar;
}

Expr ModuleBuilder::global_var(std::string_view name, Location loc) {
  Expr gvar = state_->module.global_var(name);
  if (gvar.defined()) return gvar;
  std::string n(name);
  bool pending = false;
  for (const auto& f : state_->functions) pending = pending || (f->name == n && !f->finished);
  state_->error(loc,
                "no function named `" + n + "` in the module" +
                    (pending ? " yet (a graph function joins the module at its ret; declare it "
                               "with declare_function to call it earlier)"
                             : ""));
  Expr poisoned = make_global_var(n, opaque_func_sinfo(object_sinfo()));
  state_->poisoned.insert(poisoned);
  return poisoned;
}

Expr ModuleBuilder::add_prim_func(std::string name, Expr prim_func, Location loc) {
  if (!check_function_name(*state_, "add_prim_func", name, loc) || !prim_func.defined() ||
      prim_func.as<PrimFuncNode>() == nullptr) {
    if (!name.empty()) {
      state_->error(loc, "add_prim_func(`" + name + "`): expected a PrimFunc, got " +
                             (prim_func.defined() ? std::string(expr_kind_name(prim_func.kind()))
                                                  : std::string("an undefined expression")));
    }
    Expr poisoned = make_global_var(std::move(name), opaque_func_sinfo(object_sinfo()));
    state_->poisoned.insert(poisoned);
    return poisoned;
  }
  if (state_->module.contains(name)) {
    state_->error(loc, "function `" + name + "` is defined twice");
    return state_->module.global_var(name);
  }
  state_->module.add(name, std::move(prim_func));
  return state_->module.global_var(name);
}

Expr ModuleBuilder::add_extern_func(std::string name, std::string symbol, StructInfo sinfo,
                                    Location loc) {
  auto poison = [&] {
    Expr poisoned = make_global_var(name, opaque_func_sinfo(object_sinfo()));
    state_->poisoned.insert(poisoned);
    return poisoned;
  };
  if (!check_function_name(*state_, "add_extern_func", name, loc)) return poison();
  if (symbol.empty()) {
    state_->error(loc, "add_extern_func(`" + name + "`): the symbol is empty");
    return poison();
  }
  if (sinfo.defined()) {
    if (absl::Status s = check_defined(sinfo, "the annotation"); !s.ok()) {
      state_->error(loc, "add_extern_func(`" + name + "`): " + std::string(s.message()));
      return poison();
    }
  }
  if (sinfo.defined() && sinfo.kind() != StructInfoKind::kFunc) {
    state_->error(loc, "add_extern_func(`" + name + "`): expected a Func annotation, got " +
                           sinfo.to_string());
    sinfo = StructInfo();
  }
  if (state_->module.contains(name)) {
    state_->error(loc, "function `" + name + "` is defined twice");
    return state_->module.global_var(name);
  }
  state_->module.add(name, make_extern_func(std::move(symbol), std::move(sinfo)));
  return state_->module.global_var(name);
}

std::vector<std::string> ModuleBuilder::errors() const { return state_->errors; }

absl::StatusOr<IRModule> ModuleBuilder::build() const {
  std::vector<std::string> errors = state_->errors;
  // Placeholders of declared functions without a finished body stay in the
  // module; the errors below keep them from leaving the builder.
  for (const auto& f : state_->functions) {
    if (f->finished) continue;
    if (!f->has_body) {
      errors.push_back(std::string(f->decl_loc.file_name()) + ":" +
                       std::to_string(f->decl_loc.line()) + ": function `" + f->name +
                       "` is declared but never defined (start its body with function(\"" +
                       f->name + "\"))");
      continue;
    }
    errors.push_back(std::string(f->loc.file_name()) + ":" + std::to_string(f->loc.line()) +
                     ": function `" + f->name + "` was never finished with ret");
  }
  if (errors.empty()) return state_->module;
  std::string message;
  for (const std::string& e : errors) {
    if (!message.empty()) message += "\n";
    message += e;
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace relax
