// Limits that every reader of outside input applies in the same way.
//
// Text (SymExpr::parse, parse_module), JSON (from_json) and any later reader
// refuse input nested deeper than kMaxNestingDepth with an error naming the
// position and the limit, so that what one reader accepts another also accepts
// and every recursive walk of an accepted tree (simplify, bounds, printing,
// structural equality, code generation) stays far inside a thread's stack: each
// walk must be safe for a tree of that depth on a 1 MiB stack. Depth counts the
// nodes on the longest path from a root to a leaf: a SymExpr's operands
// (SymExprNode::depth()), statements inside statements, graph expressions
// inside graph expressions.
#pragma once

namespace relax {

/// The deepest nesting a reader of outside input accepts.
inline constexpr int kMaxNestingDepth = 256;

}  // namespace relax
