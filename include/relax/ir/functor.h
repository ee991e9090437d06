// One dispatch on the kind of a node, shared by every walk of the IR.
//
// dispatch_expr(e, f) calls `f` with the node of `e` as its concrete class and
// returns what `f` returns; a generic lambda or an Overloaded set of lambdas
// then handles each kind in one place:
//
//   std::string describe(const Expr& e) {
//     return dispatch_expr(e, relax::Overloaded{
//         [](const relax::CallNode&) { return std::string("a call"); },
//         [](const auto&) { return std::string("something else"); }});
//   }
//
// Var and DataflowVar share VarNode (ask the handle's kind() to tell them
// apart). ExprVisitor and ExprMutator dispatch through these functions, as do
// their loop-level pair and structural equality and hashing, so a new node
// kind is added to the switch here once. The handle must be defined.
#pragma once

#include <type_traits>
#include <utility>

#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/struct_info.h"
#include "relax/support/check.h"

namespace relax {

/// Several callables as one overload set: `Overloaded{[](const A&) {...}, [](const B&) {...}}`.
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

/// Calls `f(node)` with the node of `e` (defined) as its concrete class.
template <class F>
std::invoke_result_t<F, const VarNode&> dispatch_expr(const Expr& e, F&& f) {
  const ExprNode& n = *e.get();
  switch (n.kind()) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
      return f(static_cast<const VarNode&>(n));
    case ExprKind::kGlobalVar:
      return f(static_cast<const GlobalVarNode&>(n));
    case ExprKind::kConstant:
      return f(static_cast<const ConstantNode&>(n));
    case ExprKind::kTuple:
      return f(static_cast<const TupleNode&>(n));
    case ExprKind::kTupleGetItem:
      return f(static_cast<const TupleGetItemNode&>(n));
    case ExprKind::kCall:
      return f(static_cast<const CallNode&>(n));
    case ExprKind::kShapeExpr:
      return f(static_cast<const ShapeExprNode&>(n));
    case ExprKind::kPrimValue:
      return f(static_cast<const PrimValueNode&>(n));
    case ExprKind::kStringImm:
      return f(static_cast<const StringImmNode&>(n));
    case ExprKind::kIf:
      return f(static_cast<const IfNode&>(n));
    case ExprKind::kSeqExpr:
      return f(static_cast<const SeqExprNode&>(n));
    case ExprKind::kFunction:
      return f(static_cast<const FunctionNode&>(n));
    case ExprKind::kExternFunc:
      return f(static_cast<const ExternFuncNode&>(n));
    case ExprKind::kOp:
      return f(static_cast<const OpNode&>(n));
    case ExprKind::kPrimFunc:
      return f(static_cast<const PrimFuncNode&>(n));
  }
  RELAX_CHECK(false) << "expression of unknown kind " << static_cast<int>(n.kind());
  __builtin_unreachable();
}

/// Calls `f(node)` with the node of `s` (defined) as its concrete class.
template <class F>
std::invoke_result_t<F, const ForNode&> dispatch_stmt(const Stmt& s, F&& f) {
  const StmtNode& n = *s.get();
  switch (n.kind()) {
    case StmtKind::kFor:
      return f(static_cast<const ForNode&>(n));
    case StmtKind::kSeq:
      return f(static_cast<const SeqStmtNode&>(n));
    case StmtKind::kBufferStore:
      return f(static_cast<const BufferStoreNode&>(n));
    case StmtKind::kIfThenElse:
      return f(static_cast<const IfThenElseNode&>(n));
    case StmtKind::kLetStmt:
      return f(static_cast<const LetStmtNode&>(n));
    case StmtKind::kAllocate:
      return f(static_cast<const AllocateNode&>(n));
    case StmtKind::kEvaluate:
      return f(static_cast<const EvaluateNode&>(n));
    case StmtKind::kBlock:
      return f(static_cast<const BlockNode&>(n));
    case StmtKind::kExternCall:
      return f(static_cast<const ExternCallNode&>(n));
  }
  RELAX_CHECK(false) << "statement of unknown kind " << static_cast<int>(n.kind());
  __builtin_unreachable();
}

/// Calls `f(node)` with the node of `s` (defined) as its concrete class.
template <class F>
std::invoke_result_t<F, const ObjectStructInfoNode&> dispatch_struct_info(const StructInfo& s,
                                                                          F&& f) {
  const StructInfoNode& n = *s.get();
  switch (n.kind()) {
    case StructInfoKind::kObject:
      return f(static_cast<const ObjectStructInfoNode&>(n));
    case StructInfoKind::kPrim:
      return f(static_cast<const PrimStructInfoNode&>(n));
    case StructInfoKind::kShape:
      return f(static_cast<const ShapeStructInfoNode&>(n));
    case StructInfoKind::kTensor:
      return f(static_cast<const TensorStructInfoNode&>(n));
    case StructInfoKind::kTuple:
      return f(static_cast<const TupleStructInfoNode&>(n));
    case StructInfoKind::kFunc:
      return f(static_cast<const FuncStructInfoNode&>(n));
  }
  RELAX_CHECK(false) << "annotation of unknown kind " << static_cast<int>(n.kind());
  __builtin_unreachable();
}

}  // namespace relax
