// Loop-level IR: PrimFunc and its statements.
//
// A PrimFunc is a kernel in destination-passing style: its parameters are
// buffers (inputs and outputs alike) and scalars, its body a statement tree:
//
//   prim_func @add(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32],
//                  C: Buffer[(n, 4), float32]) {
//     for i in range(0, n) parallel {
//       for j in range(0, 4) vectorized {
//         block add(vi = spatial(n, i), vj = spatial(4, j)) {
//           C[vi, vj] = A[vi, vj] + B[vi, vj]
//         }
//       }
//     }
//   }
//
// Values are SymExprs (the same family as shape dims, extended with float
// dtypes, casts, intrinsics and buffer loads; see relax/shape/). A compute
// block names its iteration variables as spatial or reduction, with the
// extent each ranges over and the value it takes from the enclosing loops,
// and may carry an `init` part run before the first reduction step: this is
// what loop-pattern analysis and scheduling read.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"

namespace relax {

enum class StmtKind : uint8_t {
  kFor,
  kSeq,
  kBufferStore,
  kIfThenElse,
  kLetStmt,
  kAllocate,
  kEvaluate,
  kBlock,
  kExternCall,
};

/// Common part of every statement node.
class StmtNode {
 public:
  virtual ~StmtNode() = default;
  StmtKind kind() const { return kind_; }

 protected:
  explicit StmtNode(StmtKind kind) : kind_(kind) {}

 private:
  StmtKind kind_;
};

/// Handle to an immutable statement node.
class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  StmtKind kind() const { return node_->kind(); }
  const StmtNode* get() const { return node_.get(); }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }
  template <typename T>
  const T* as() const {
    return node_ && node_->kind() == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> node_;
};

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled };

/// for loop_var in range(min, min + extent)
class ForNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kFor;
  ForNode(SymVar loop_var, SymExpr min, SymExpr extent, ForKind for_kind, Stmt body)
      : StmtNode(kKind),
        loop_var(std::move(loop_var)),
        min(std::move(min)),
        extent(std::move(extent)),
        for_kind(for_kind),
        body(std::move(body)) {}
  SymVar loop_var;
  SymExpr min;
  SymExpr extent;
  ForKind for_kind;
  Stmt body;
};

class SeqStmtNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kSeq;
  explicit SeqStmtNode(std::vector<Stmt> stmts) : StmtNode(kKind), stmts(std::move(stmts)) {}
  std::vector<Stmt> stmts;
};

/// buffer[indices] = value
class BufferStoreNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kBufferStore;
  BufferStoreNode(Buffer buffer, std::vector<SymExpr> indices, SymExpr value)
      : StmtNode(kKind), buffer(std::move(buffer)), indices(std::move(indices)), value(std::move(value)) {}
  Buffer buffer;
  std::vector<SymExpr> indices;
  SymExpr value;
};

class IfThenElseNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  IfThenElseNode(SymExpr cond, Stmt then_case, Stmt else_case)
      : StmtNode(kKind), cond(std::move(cond)), then_case(std::move(then_case)), else_case(std::move(else_case)) {}
  SymExpr cond;
  Stmt then_case;
  Stmt else_case;  ///< may be undefined
};

/// let var = value in body
class LetStmtNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kLetStmt;
  LetStmtNode(SymVar var, SymExpr value, Stmt body)
      : StmtNode(kKind), var(std::move(var)), value(std::move(value)), body(std::move(body)) {}
  SymVar var;
  SymExpr value;
  Stmt body;
};

/// Storage for `buffer` (its shape, dtype and scope say how much and where)
/// that lives while `body` runs.
class AllocateNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  AllocateNode(Buffer buffer, Stmt body) : StmtNode(kKind), buffer(std::move(buffer)), body(std::move(body)) {}
  Buffer buffer;
  Stmt body;
};

/// Evaluates a value for its effect (an intrinsic call).
class EvaluateNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  explicit EvaluateNode(SymExpr value) : StmtNode(kKind), value(std::move(value)) {}
  SymExpr value;
};

/// An argument of an extern call: a scalar value, or a region of a buffer
/// (`&buffer[indices]`), passed as a pointer to its first element.
struct ExternArg {
  SymExpr value;                 ///< the scalar; undefined for a region
  Buffer buffer;                 ///< the region's buffer; undefined for a scalar
  std::vector<SymExpr> indices;  ///< the region's first element, one index per dim
  bool is_region() const { return buffer.defined(); }
};

/// call_extern name(args...): a call of the registered micro-kernel `name`
/// (relax/ir/micro_kernel.h), made for its effect on the buffer regions it is
/// given. Opaque to loop analysis: what it reads and writes is only what its
/// registered signature says.
class ExternCallNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kExternCall;
  ExternCallNode(std::string name, std::vector<ExternArg> args)
      : StmtNode(kKind), name(std::move(name)), args(std::move(args)) {}
  std::string name;
  std::vector<ExternArg> args;
};

enum class IterType : uint8_t { kSpatial, kReduction };

/// An iteration variable of a compute block: it ranges over [0, extent) and
/// takes `binding` (an expression of the enclosing loop variables).
struct IterVar {
  SymVar var;
  SymExpr extent;
  IterType type;
  SymExpr binding;
};

/// A compute block: one point of a computation named by its iteration
/// variables. `init` (optional) runs when every reduction variable is 0.
class BlockNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kBlock;
  BlockNode(std::string name, std::vector<IterVar> iter_vars, Stmt init, Stmt body)
      : StmtNode(kKind), name(std::move(name)), iter_vars(std::move(iter_vars)), init(std::move(init)), body(std::move(body)) {}
  std::string name;
  std::vector<IterVar> iter_vars;
  Stmt init;  ///< may be undefined
  Stmt body;
};

// ---------------------------------------------------------------------------
// PrimFunc.

/// A PrimFunc parameter: a buffer, or a scalar (a SymVar of an integer or float dtype).
struct PrimParam {
  std::optional<Buffer> buffer;
  std::optional<SymVar> scalar;
};

class PrimFuncNode : public ExprNode {
 public:
  static bool matches(ExprKind k) { return k == ExprKind::kPrimFunc; }
  PrimFuncNode(std::vector<PrimParam> params, Stmt body, Attrs attrs, StructInfo sinfo)
      : ExprNode(ExprKind::kPrimFunc, std::move(sinfo)),
        params(std::move(params)),
        body(std::move(body)),
        attrs(std::move(attrs)) {}
  std::vector<PrimParam> params;
  Stmt body;
  Attrs attrs;
};

// Constructors.
Stmt make_for(SymVar loop_var, SymExpr min, SymExpr extent, ForKind kind, Stmt body);
Stmt make_seq(std::vector<Stmt> stmts);
Stmt make_store(Buffer buffer, std::vector<SymExpr> indices, SymExpr value);
Stmt make_if_then_else(SymExpr cond, Stmt then_case, Stmt else_case = Stmt());
Stmt make_let(SymVar var, SymExpr value, Stmt body);
Stmt make_allocate(Buffer buffer, Stmt body);
Stmt make_evaluate(SymExpr value);
Stmt make_block(std::string name, std::vector<IterVar> iter_vars, Stmt init, Stmt body);
/// `name` must be a C identifier (it is the function the generated code calls).
Stmt make_extern_call(std::string name, std::vector<ExternArg> args);
/// A scalar argument of an extern call.
ExternArg extern_scalar(SymExpr value);
/// A region argument of an extern call: a pointer to `buffer[indices]`.
ExternArg extern_region(Buffer buffer, std::vector<SymExpr> indices);
Expr make_prim_func(std::vector<PrimParam> params, Stmt body, Attrs attrs = {});

std::string_view for_kind_name(ForKind kind);

}  // namespace relax
