// Private to the VM code generator: how one graph function's symbolic
// variables, expressions and patterns are laid out in its VMFunction.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "relax/ir/struct_info.h"
#include "relax/runtime/executable.h"
#include "relax/shape/sym_expr.h"

namespace relax::codegen_detail {

/// Assigns slots to symbolic variables and compiles SymExprs and StructInfo
/// patterns into the tables of one VMFunction.
class FrameLayout {
 public:
  explicit FrameLayout(runtime::VMFunction& fn) : fn_(fn) {}

  /// Declares `var <= upper`: the match group that binds `var` checks it.
  void set_upper_bound(const SymVar& var, int64_t upper) { upper_bounds_[var] = upper; }

  /// The slot of `var`, or -1 when it has none yet.
  int slot_of(const SymVar& var) const;
  /// The program computing `expr` from the slots, appended to fn.exprs; an
  /// error names the variable that no slot holds or the unsupported node.
  absl::StatusOr<int> add_expr(const SymExpr& expr);

  /// One value to match: `reg` against `sinfo`, named `what` in messages.
  struct Item {
    int reg;
    StructInfo sinfo;
    std::string what;
  };
  /// Compiles a MatchGroup for `items` and returns its index. Dims that are a
  /// variable without a slot bind it (first occurrence); dims that solve
  /// linearly for a variable without a slot solve it; every other dim is
  /// checked. A Func-annotated item is an error. The group checks the
  /// declared upper bound of each variable it binds.
  absl::StatusOr<int> add_match(const std::vector<Item>& items, bool checked);

 private:
  int new_slot(const SymVar& var);

  runtime::VMFunction& fn_;
  SymVarMap<int> slots_;
  // The exprs compiled so far: a slot never changes once given, so an equal
  // SymExpr compiles to the same program and shares its entry.
  absl::flat_hash_map<SymExpr, int, SymExprHash, SymExprEqual> exprs_;
  SymVarMap<int64_t> upper_bounds_;
  std::vector<runtime::SlotBound> new_bounds_;  // of the slots made by the add_match running
};

/// Compiles an integer SymExpr into postfix code over `slot_of`; an error
/// names the variable without a slot or the unsupported node kind.
absl::StatusOr<runtime::SymProgram> compile_sym_program(
    const SymExpr& expr, const std::function<int(const SymVar&)>& slot_of);

}  // namespace relax::codegen_detail
