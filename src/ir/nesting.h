// Nesting depth of IR trees, as relax/support/limits.h counts it, measured
// without recursion so that it is safe on any input.
//
// Three families nest on their own: statements inside statements, graph
// expressions inside graph expressions, annotations inside annotations
// (Tuple fields, Func parameters and results). A SymExpr's depth is
// SymExprNode::depth(). The readers refuse a tree deeper than
// kMaxNestingDepth in any family (the JSON reader as it reads each node, the
// text parser on each item it has read), so every walk of an accepted module
// may recurse to that depth.
#pragma once

#include <optional>
#include <string>

#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/struct_info.h"

namespace relax::detail {

/// The depth of each family, capped: a result above `limit` means "deeper
/// than limit" (the walk stops there).
int stmt_depth(const Stmt& s, int limit);
int expr_depth(const Expr& e, int limit);
int sinfo_depth(const StructInfo& s, int limit);

/// What of `item` (a graph Function or a PrimFunc) nests deeper than
/// kMaxNestingDepth, as a message ("statements nest deeper than 256 levels"),
/// or nullopt. SymExprs are checked by the readers where they are read.
std::optional<std::string> nesting_violation(const Expr& item);

}  // namespace relax::detail
