// KernelTable (relax/ir/kernel_table.h): PrimFuncs interned by structure.
#include "relax/ir/kernel_table.h"

#include "relax/ir/prim_func.h"
#include "relax/support/check.h"

namespace relax {
namespace {

// `func` (a PrimFunc) with its attributes, "global_symbol" set to `symbol`
// (or removed when `symbol` is empty).
Expr with_symbol(const Expr& func, const std::string& symbol) {
  const auto* node = func.as<PrimFuncNode>();
  Attrs attrs = node->attrs;
  attrs.erase("global_symbol");
  if (!symbol.empty()) attrs.emplace("global_symbol", symbol);
  return make_prim_func(node->params, node->body, std::move(attrs));
}

}  // namespace

KernelTable::KernelTable(const IRModule& mod) {
  for (const auto& [name, func] : mod.functions()) {
    names_.insert(name);
    // emplace keeps the first of several equal kernels.
    if (func.as<PrimFuncNode>() != nullptr) {
      by_structure_.emplace(with_symbol(func, ""), mod.global_var(name));
    }
  }
}

Expr KernelTable::intern(const Expr& func, std::string_view base) {
  RELAX_CHECK(func.as<PrimFuncNode>() != nullptr) << "KernelTable::intern of a non-PrimFunc";
  RELAX_CHECK(!base.empty()) << "KernelTable::intern with an empty base name";
  // The key has no "global_symbol": a kernel's own name must not keep it apart
  // from an equal kernel under another name.
  Expr key = with_symbol(func, "");
  if (auto it = by_structure_.find(key); it != by_structure_.end()) return it->second;
  std::string name(base);
  for (int i = 1; names_.contains(name); ++i) name = std::string(base) + "_" + std::to_string(i);
  names_.insert(name);
  Expr kernel = with_symbol(func, name);
  Expr gvar = make_global_var(name, kernel.struct_info());
  by_structure_.emplace(std::move(key), gvar);
  added_.emplace_back(name, std::move(kernel));
  return gvar;
}

IRModule KernelTable::add_new_to(IRModule mod) const {
  for (const auto& [name, kernel] : added_) {
    // The names were free in the table's module; a caller that has since added
    // a function of the same name would lose it here.
    RELAX_CHECK(!mod.contains(name)) << "KernelTable::add_new_to: @" << name << " already exists";
    mod.add(name, kernel);
  }
  return mod;
}

}  // namespace relax
