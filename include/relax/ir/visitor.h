// Visitors and mutators of graph-level expressions and loop-level statements.
//
// Each class has one virtual hook per node kind whose default visits (or
// rebuilds) the children; a subclass overrides the hooks it cares about and
// calls the base hook to keep walking:
//
//   class CountAdds : public relax::ExprVisitor {
//    public:
//     void visit_call(const relax::Expr& e, const relax::CallNode& call) override {
//       if (const auto* op = call.callee.as<relax::OpNode>(); op && op->name == "add") ++adds;
//       ExprVisitor::visit_call(e, call);
//     }
//     int adds = 0;
//   };
//
// Mutators rebuild only what changed: a hook returns the very node it was given
// when none of its children changed, so `result.same_as(input)` tells whether a
// rewrite did anything. Every node that ExprMutator rebuilds is re-annotated
// through renormalize() (by default the deduction of normalize.h), so the
// annotations of a rewritten function stay current; a binding whose value's
// annotation changed gets a fresh variable with the new annotation, and later
// uses are redirected to it. A function's return annotation follows its body
// when it was the body's annotation before; one declared coarser is kept.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/op.h"
#include "relax/ir/prim_func.h"
#include "relax/shape/analyzer.h"

namespace relax {

/// Walks graph-level expressions. Hooks receive the handle and its node.
class ExprVisitor {
 public:
  /// With `visit_annotations`, visit_struct_info is called on every annotation
  /// written in the IR (parameter and binding variables, match_cast patterns,
  /// sinfo_args, return annotations); otherwise annotations are skipped.
  explicit ExprVisitor(bool visit_annotations = false) : visit_annotations_(visit_annotations) {}
  virtual ~ExprVisitor() = default;

  /// Every graph function of `mod`, in order (PrimFuncs go to visit_prim_func).
  void visit_module(const IRModule& mod);

  /// Dispatches on the kind of `e`.
  virtual void visit_expr(const Expr& e);

  /// A use of a Var or DataflowVar.
  virtual void visit_var(const Var& var);
  /// Where a Var is defined: a function parameter or a binding.
  virtual void visit_var_def(const Var& var);

  virtual void visit_global_var(const Expr& e, const GlobalVarNode& node);
  virtual void visit_constant(const Expr& e, const ConstantNode& node);
  virtual void visit_tuple(const Expr& e, const TupleNode& node);
  virtual void visit_tuple_get_item(const Expr& e, const TupleGetItemNode& node);
  virtual void visit_call(const Expr& e, const CallNode& node);
  virtual void visit_shape_expr(const Expr& e, const ShapeExprNode& node);
  virtual void visit_prim_value(const Expr& e, const PrimValueNode& node);
  virtual void visit_string_imm(const Expr& e, const StringImmNode& node);
  virtual void visit_if(const Expr& e, const IfNode& node);
  virtual void visit_seq_expr(const Expr& e, const SeqExprNode& node);
  virtual void visit_function(const Expr& e, const FunctionNode& node);
  virtual void visit_extern_func(const Expr& e, const ExternFuncNode& node);
  virtual void visit_op(const Expr& e, const OpNode& node);
  /// Default: nothing (see StmtVisitor for the body).
  virtual void visit_prim_func(const Expr& e, const PrimFuncNode& node);

  virtual void visit_binding_block(const BindingBlock& block);
  /// Default: the value, the match_cast pattern, then visit_var_def of the variable.
  virtual void visit_binding(const Binding& binding);

  /// Default: visit_sym_expr on each dim and Prim value, through tuples and
  /// functions. Only called when annotations are visited.
  virtual void visit_struct_info(const StructInfo& sinfo);
  /// Each SymExpr of ShapeExprs and PrimValues (and of annotations, when
  /// visited). Default: nothing.
  virtual void visit_sym_expr(const SymExpr& value);

 protected:
  void visit_annotation(const StructInfo& sinfo) {
    if (visit_annotations_ && sinfo.defined()) visit_struct_info(sinfo);
  }

 private:
  bool visit_annotations_;
};

/// Rewrites graph-level expressions, rebuilding only what changed and
/// re-annotating what it rebuilds.
class ExprMutator {
 public:
  /// `module` (may be null) is consulted when deduction meets a GlobalVar
  /// without annotation; it must outlive the mutator.
  explicit ExprMutator(const IRModule* module = nullptr);
  virtual ~ExprMutator() = default;
  ExprMutator(const ExprMutator&) = delete;
  ExprMutator& operator=(const ExprMutator&) = delete;

  /// `mod` with every graph function rewritten through visit_expr (PrimFuncs
  /// and extern functions are kept). Functions that did not change keep their
  /// node; the module's attributes are kept.
  IRModule visit_module(const IRModule& mod);

  /// Dispatches on the kind of `e`.
  virtual Expr visit_expr(const Expr& e);

  /// A use of a variable. Default: its replacement (set_var_remap, or a
  /// re-annotated binding variable), else the variable itself.
  virtual Expr visit_var(const Var& var);
  /// A parameter of a function being rewritten. Default: the parameter itself.
  virtual Var visit_var_def(const Var& var);

  virtual Expr visit_global_var(const Expr& e, const GlobalVarNode& node);
  virtual Expr visit_constant(const Expr& e, const ConstantNode& node);
  virtual Expr visit_tuple(const Expr& e, const TupleNode& node);
  virtual Expr visit_tuple_get_item(const Expr& e, const TupleGetItemNode& node);
  virtual Expr visit_call(const Expr& e, const CallNode& node);
  virtual Expr visit_shape_expr(const Expr& e, const ShapeExprNode& node);
  virtual Expr visit_prim_value(const Expr& e, const PrimValueNode& node);
  virtual Expr visit_string_imm(const Expr& e, const StringImmNode& node);
  virtual Expr visit_if(const Expr& e, const IfNode& node);
  virtual Expr visit_seq_expr(const Expr& e, const SeqExprNode& node);
  virtual Expr visit_function(const Expr& e, const FunctionNode& node);
  virtual Expr visit_extern_func(const Expr& e, const ExternFuncNode& node);
  virtual Expr visit_op(const Expr& e, const OpNode& node);
  /// Default: `e` unchanged (see StmtMutator for bodies).
  virtual Expr visit_prim_func(const Expr& e, const PrimFuncNode& node);

  /// Rewrites a block: each binding through visit_binding into a new block of
  /// the same kind (the caller compares it with `block` to see what changed; a
  /// SeqExpr drops blocks that a rewrite emptied).
  virtual BindingBlock visit_binding_block(const BindingBlock& block);

  /// Rewrites one binding into the block being built, through emit_binding or
  /// emit: a hook may emit nothing (dropping it), one binding or several.
  /// Default: the rewritten value bound to the same variable, or to a fresh one
  /// when the value's annotation changed (see the file comment).
  virtual void visit_binding(const Binding& binding);

  /// Annotations of sinfo_args and match_cast patterns. Default: each dim and
  /// Prim value through visit_sym_expr, rebuilt only where one changed.
  virtual StructInfo visit_struct_info(const StructInfo& sinfo);
  /// Each SymExpr of ShapeExprs, PrimValues and (through visit_struct_info)
  /// annotations. Default: the value unchanged.
  virtual SymExpr visit_sym_expr(const SymExpr& value);

  /// The annotation of a node the mutator rebuilt (whose children are
  /// annotated). Default: deduce_struct_info with this mutator's context; on a
  /// deduction error the error is recorded (see status()) and Object returned.
  virtual StructInfo renormalize(const Expr& rebuilt);

  /// Every deduction error met so far (OK when none), one per line.
  absl::Status status() const;

 protected:
  /// Appends `binding` to the block being built (only inside visit_binding).
  void emit_binding(Binding binding);
  /// Normalises `value` and binds it to a new variable of the block being built
  /// (a DataflowVar in a dataflow block); `name_hint` defaults to lv<N> in a
  /// dataflow block and gv<N> elsewhere. (An output of a dataflow block is a
  /// plain Var: bind it with emit_binding.)
  Var emit(Expr value, std::string name_hint = "");
  /// Redirects every later use of `from` to `to`.
  void set_var_remap(const Var& from, const Var& to);
  /// Whether the block being built is a dataflow block.
  bool in_dataflow_block() const { return block_ != nullptr && block_->is_dataflow; }

  /// `node` (a rebuilt node without annotation) annotated by renormalize().
  Expr annotate(const Expr& node);

  Analyzer& analyzer() { return analyzer_; }
  DeduceContext& deduce_context() { return ctx_; }

 private:
  void enter_sym_scope(const std::vector<SymVar>& vars);
  void leave_sym_scope(const std::vector<SymVar>& vars);

  Analyzer analyzer_;
  DeduceContext ctx_;
  /// from -> (from, to): the entry holds `from` too, so that its node cannot be freed and its
  /// address reused by another variable, which would then find this replacement.
  absl::flat_hash_map<const ExprNode*, std::pair<Var, Var>> var_remap_;
  absl::flat_hash_map<uint64_t, int> sym_scope_;  ///< SymVar id -> times defined in scope
  std::vector<SymVar> seq_defined_;               ///< defined by the current SeqExpr's match_casts
  BindingBlock* block_ = nullptr;                 ///< the block visit_binding emits into
  std::vector<std::string> errors_;
  int emitted_ = 0;
};

/// Walks loop-level statements and the SymExpr values inside them.
class StmtVisitor {
 public:
  virtual ~StmtVisitor() = default;

  /// The body of a PrimFunc (and the dims of its buffer parameters, through visit_value).
  void visit_prim_func(const PrimFuncNode& func);

  /// Dispatches on the kind of `s`; an undefined statement is skipped.
  virtual void visit_stmt(const Stmt& s);
  virtual void visit_for(const Stmt& s, const ForNode& node);
  virtual void visit_seq(const Stmt& s, const SeqStmtNode& node);
  virtual void visit_buffer_store(const Stmt& s, const BufferStoreNode& node);
  virtual void visit_if_then_else(const Stmt& s, const IfThenElseNode& node);
  virtual void visit_let(const Stmt& s, const LetStmtNode& node);
  virtual void visit_allocate(const Stmt& s, const AllocateNode& node);
  virtual void visit_evaluate(const Stmt& s, const EvaluateNode& node);
  virtual void visit_block(const Stmt& s, const BlockNode& node);
  /// Default: the scalar arguments and the regions' indices through visit_value.
  virtual void visit_extern_call(const Stmt& s, const ExternCallNode& node);

  /// Each SymExpr in a statement (bounds, indices, stored values, conditions,
  /// iteration extents and bindings) and each of its subexpressions: the
  /// default calls visit_value on every operand.
  virtual void visit_value(const SymExpr& value);
};

/// Rewrites loop-level statements, rebuilding only what changed.
class StmtMutator {
 public:
  virtual ~StmtMutator() = default;

  /// `prim_func` (a PrimFunc) with its body rewritten; the same node when
  /// nothing changed.
  Expr visit_prim_func(const Expr& prim_func);

  /// Dispatches on the kind of `s`; an undefined statement stays undefined.
  virtual Stmt visit_stmt(const Stmt& s);
  virtual Stmt visit_for(const Stmt& s, const ForNode& node);
  virtual Stmt visit_seq(const Stmt& s, const SeqStmtNode& node);
  virtual Stmt visit_buffer_store(const Stmt& s, const BufferStoreNode& node);
  virtual Stmt visit_if_then_else(const Stmt& s, const IfThenElseNode& node);
  virtual Stmt visit_let(const Stmt& s, const LetStmtNode& node);
  virtual Stmt visit_allocate(const Stmt& s, const AllocateNode& node);
  virtual Stmt visit_evaluate(const Stmt& s, const EvaluateNode& node);
  virtual Stmt visit_block(const Stmt& s, const BlockNode& node);
  virtual Stmt visit_extern_call(const Stmt& s, const ExternCallNode& node);

  /// Each SymExpr in a statement. Default: the operands through visit_value,
  /// the node rebuilt only when one changed (variables and constants are kept).
  virtual SymExpr visit_value(const SymExpr& value);

 protected:
  /// visit_value over a list; `changed` is set when any value changed.
  std::vector<SymExpr> visit_values(const std::vector<SymExpr>& values, bool& changed);
};

}  // namespace relax
