// What the schedule primitives share (relax/transform/schedule.h): finding a
// loop by its printed name, rebuilding a kernel with one loop replaced,
// substituting loop variables in statements, and the legality checks on the
// compute blocks under a loop.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/prim_func.h"
#include "relax/shape/sym_expr.h"

namespace relax::transform::schedule {

/// A loop of a kernel: its node, its statement handle and its printed name.
struct LoopRef {
  Stmt stmt;
  const ForNode* node = nullptr;
  std::string name;
};

/// The kernel's name for errors: "@name" from its global_symbol, or "prim_func".
std::string kernel_label(const Expr& func);

/// Every loop of `func` in pre-order (the printer's order) with its printed name.
std::vector<LoopRef> all_loops(const Expr& func);

/// The loop printed as `name`; InvalidArgument naming the kernel and the known
/// loops otherwise. `func` must be a PrimFunc (InvalidArgument otherwise).
absl::StatusOr<LoopRef> find_loop(const Expr& func, std::string_view name);

/// `func` with the statement `target` (by identity) replaced by `replacement`.
Expr replace_stmt(const Expr& func, const StmtNode* target, const Stmt& replacement);

/// `s` with the variables of `map` replaced, in every value it holds.
Stmt substitute_stmt(const Stmt& s, const SymVarMap<SymExpr>& map);

/// Whether a value held directly by `s` or any statement under it mentions `var`.
bool stmt_mentions(const Stmt& s, const SymVar& var);

/// Every compute block under `s` (outermost first).
std::vector<const BlockNode*> blocks_under(const Stmt& s);

/// OK when each iteration of `loop` writes its own elements: every block under
/// it binds the loop variable only to spatial iteration variables, and every
/// store under it is inside a block or into storage allocated under the loop.
/// Otherwise InvalidArgument "<kernel>: cannot <what> loop `<name>`: ...".
absl::Status check_independent_iterations(const Expr& func, const LoopRef& loop, std::string_view what);

/// InvalidArgument "<kernel>: cannot <what> loop `<name>`: <why>".
absl::Status loop_error(const Expr& func, std::string_view what, std::string_view name, std::string_view why);

/// An integer constant of `like`'s dtype.
SymExpr int_like(int64_t value, const SymExpr& like);

}  // namespace relax::transform::schedule
