// IRModule: the unit that passes transform and codegen compiles.
//
// A module maps names to functions of three kinds: graph functions (Function),
// loop-level kernels (PrimFunc) and functions implemented outside (ExternFunc).
// Calls refer to a module function through a GlobalVar of the same name.
// Functions keep the order in which they were added, so printing is stable.
//
// The module owns one GlobalVar per function: global_var(name) returns the same
// handle every time (identity, as for every Var), until the function is
// replaced by one with a different annotation (one that is not structurally
// equal: renaming the symbolic variables that the parameters bind keeps it).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"

namespace relax {

class IRModule {
 public:
  IRModule() = default;

  /// Adds or replaces the function called `name` (a Function, PrimFunc or ExternFunc).
  void add(std::string name, Expr func);
  /// Removes `name`; false when there is no such function.
  bool remove(std::string_view name);
  /// The function called `name`, or an undefined Expr.
  Expr lookup(std::string_view name) const;
  bool contains(std::string_view name) const { return lookup(name).defined(); }

  /// A GlobalVar naming the module function `name`, annotated with its
  /// StructInfo (a FuncStructInfo for graph functions); undefined when there is
  /// no such function.
  Expr global_var(std::string_view name) const;

  /// Functions in the order they were added.
  const std::vector<std::pair<std::string, Expr>>& functions() const { return functions_; }

  Attrs& attrs() { return attrs_; }
  const Attrs& attrs() const { return attrs_; }

 private:
  std::vector<std::pair<std::string, Expr>> functions_;
  std::vector<Expr> global_vars_;                     ///< parallel to functions_
  std::map<std::string, size_t, std::less<>> index_;  ///< name -> position in functions_
  Attrs attrs_;
};

}  // namespace relax
