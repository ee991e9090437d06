// KernelTable: the loop-level kernels of a module, found by structure, for the
// passes that create PrimFuncs (legalization, fusion, library dispatch).
//
//   KernelTable kernels(mod);
//   Expr gvar = kernels.intern(prim_func, "add");   // @add, or @add_1 if taken
//   ... op::call_tir(gvar, args, out_sinfo) ...
//   IRModule out = kernels.add_new_to(std::move(rewritten));
//
// intern() returns the GlobalVar of the kernel structurally equal to the one
// given -- compared without the attribute "global_symbol", which every kernel
// carries under its own name -- so identical kernels are shared: by the calls
// of one pass, and with the PrimFuncs the module held before. A kernel met for
// the first time gets a name based on the caller's base name (`add`, then
// `add_1`, `add_2`, ... when the name is taken by any function of the module or
// by a kernel added before), with "global_symbol" set to that name. The table
// never edits the module; added() lists the new kernels in the order they were
// interned, and add_new_to() adds them to a module after its functions.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/structural_equal.h"

namespace relax {

/// The PrimFuncs of a module and those a pass creates, interned by structure.
class KernelTable {
 public:
  /// A table of the PrimFuncs of `mod`; every function name of `mod` counts as
  /// taken. Of several structurally equal PrimFuncs of `mod`, the first is the
  /// one intern() returns.
  explicit KernelTable(const IRModule& mod);

  /// The GlobalVar (annotated with the kernel's StructInfo) of the kernel
  /// structurally equal to the PrimFunc `func` up to "global_symbol". When
  /// there is none, `func` is recorded as a new kernel named `base`, or
  /// `base_1`, `base_2`, ... (the first name not taken), with "global_symbol"
  /// set to that name. `func` must be a PrimFunc and `base` non-empty.
  Expr intern(const Expr& func, std::string_view base);

  /// The kernels intern() added, as (name, PrimFunc), in the order interned.
  const std::vector<std::pair<std::string, Expr>>& added() const { return added_; }

  /// `mod` with the kernels of added() appended after its functions.
  IRModule add_new_to(IRModule mod) const;

 private:
  std::unordered_map<Expr, Expr, StructuralHash, StructuralEqual> by_structure_;
  std::set<std::string, std::less<>> names_;
  std::vector<std::pair<std::string, Expr>> added_;
};

}  // namespace relax
