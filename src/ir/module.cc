// IRModule: an ordered map from names to functions, with one GlobalVar each.
#include "relax/ir/module.h"

#include "relax/ir/structural_equal.h"
#include "relax/support/check.h"

namespace relax {
namespace {

// The annotation a GlobalVar of `func` carries.
StructInfo callee_sinfo(const Expr& func) {
  if (func.struct_info().defined()) return func.struct_info();
  return opaque_func_sinfo(object_sinfo());
}

}  // namespace

void IRModule::add(std::string name, Expr func) {
  RELAX_CHECK(func.defined()) << "IRModule::add(`" << name << "`) given an undefined function";
  RELAX_CHECK(func.as<FunctionNode>() || func.as<PrimFuncNode>() || func.as<ExternFuncNode>())
      << "IRModule::add(`" << name << "`) given a " << expr_kind_name(func.kind())
      << ", not a Function, PrimFunc or ExternFunc";
  StructInfo sinfo = callee_sinfo(func);
  auto it = index_.find(name);
  if (it == index_.end()) {
    index_.emplace(name, functions_.size());
    global_vars_.push_back(make_global_var(name, sinfo));
    functions_.emplace_back(std::move(name), std::move(func));
    return;
  }
  size_t pos = it->second;
  functions_[pos].second = std::move(func);
  // Keep the GlobalVar (and so the identity callers hold) while the annotation
  // stays the same up to renaming the symbolic variables its parameters bind.
  if (!structural_equal(global_vars_[pos].struct_info(), sinfo)) {
    global_vars_[pos] = make_global_var(std::move(name), sinfo);
  }
}

bool IRModule::remove(std::string_view name) {
  auto it = index_.find(name);
  if (it == index_.end()) return false;
  size_t pos = it->second;
  index_.erase(it);
  functions_.erase(functions_.begin() + static_cast<std::ptrdiff_t>(pos));
  global_vars_.erase(global_vars_.begin() + static_cast<std::ptrdiff_t>(pos));
  for (auto& [other, index] : index_) {
    if (index > pos) --index;
  }
  return true;
}

Expr IRModule::lookup(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? Expr() : functions_[it->second].second;
}

Expr IRModule::global_var(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? Expr() : global_vars_[it->second];
}

}  // namespace relax
