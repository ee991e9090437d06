// The pieces that the legalization rules of legalize_*.cc share (private to
// src/transform): what a rule returns, the parameter list of a kernel over
// fresh symbolic variables, loop nests around one compute block, and the
// checks of a call's operands.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/shape/analyzer.h"
#include "relax/transform/legalize_ops.h"

namespace relax::transform::legalize {

using Lowering = transform::Lowering;
using Rule = transform::LegalizeRule;

// The rules, by family. Each returns InvalidArgument "<op>: <what>" when the
// call cannot be legalized (unknown shapes or dtypes, unsupported dtypes).
absl::StatusOr<Lowering> legalize_add(const CallNode& call, Analyzer& analyzer);
absl::StatusOr<Lowering> legalize_multiply(const CallNode& call, Analyzer& analyzer);
absl::StatusOr<Lowering> legalize_exp(const CallNode& call, Analyzer& analyzer);
absl::StatusOr<Lowering> legalize_matmul(const CallNode& call, Analyzer& analyzer);
absl::StatusOr<Lowering> legalize_reshape(const CallNode& call, Analyzer& analyzer);
absl::StatusOr<Lowering> legalize_permute_dims(const CallNode& call, Analyzer& analyzer);
absl::StatusOr<Lowering> legalize_sum(const CallNode& call, Analyzer& analyzer);
absl::StatusOr<Lowering> legalize_softmax(const CallNode& call, Analyzer& analyzer);

/// The built-in rule of `op` (legalize_ops.cc's table), or nullptr: for
/// passes that legalize a single call themselves (fold-constant).
const Rule* builtin_rule(std::string_view op);

// ---------------------------------------------------------------------------
// Checks.

/// InvalidArgument "<op>: <message>".
absl::Status rule_error(const std::string& op, const std::string& message);

/// The Tensor annotation of call.args[index] when its shape and dtype are
/// known; otherwise an error naming the argument and its annotation.
absl::StatusOr<const TensorStructInfoNode*> known_tensor(const CallNode& call, size_t index,
                                                         const std::string& op,
                                                         const std::string& role);
/// The element types a kernel computes with.
enum class DtypeClass : uint8_t {
  kAny,      ///< data movement: every dtype
  kNumeric,  ///< arithmetic: integers and floats
  kFloat,    ///< math functions: floats
};

/// The call's own annotation, a Tensor with known shape and a dtype of class
/// `allowed`, or an error.
absl::StatusOr<const TensorStructInfoNode*> known_result(const CallNode& call,
                                                         const std::string& op,
                                                         DtypeClass allowed = DtypeClass::kAny);
/// OK when `dtype` belongs to `allowed`, else an error naming `what`.
absl::Status check_dtype(const std::string& op, DataType dtype, DtypeClass allowed,
                         const std::string& what);

/// An axis attribute counted from the front (negative ones from the end), or an
/// error when out of range for `ndim`.
absl::StatusOr<int64_t> normalize_axis(const std::string& op, int64_t axis, int64_t ndim);

// ---------------------------------------------------------------------------
// Kernels.

/// The parameters of one kernel, declared in a PrimFuncBuilder: a buffer per
/// tensor argument and per output, whose dims are the call's dims with every
/// graph-level symbolic variable replaced by a fresh kernel variable (a buffer
/// dim that is a bare variable defines it); a scalar per Prim argument; and,
/// last, an int64 scalar for each variable that no buffer dim defines (a dim
/// `n * 4` where `n` is nowhere a whole dim), whose graph-level value the call
/// passes as an extra_sym_arg. Parameters follow the call_tir order: the
/// arguments as declared with input()/scalar_input(), then the outputs, then
/// those scalars.
class KernelBuilder {
 public:
  /// `op` names the kernel; `buffer_dims` are the graph-level dims of every
  /// buffer parameter the kernel will declare (inputs and outputs), from which
  /// the variables needing a scalar parameter are found.
  KernelBuilder(const std::string& op, const std::vector<std::vector<SymExpr>>& buffer_dims);

  /// A buffer parameter for the tensor argument `arg` (known shape and dtype),
  /// which the call passes.
  Buffer input(const std::string& name, const Expr& arg);
  /// The same with the buffer's graph-level dims given: dims that the kernel
  /// relies on being equal to another buffer's are written as that buffer's,
  /// so that the kernel's entry check rejects an argument that lacks them
  /// (an annotation may claim more than the value has).
  Buffer input(const std::string& name, const Expr& arg, const std::vector<SymExpr>& graph_dims);
  /// A scalar parameter for the Prim argument `arg`, of its dtype.
  SymVar scalar_input(const std::string& name, const Expr& arg);
  /// A buffer parameter for an output of annotation `out` (known shape and dtype).
  Buffer output(const std::string& name, const TensorStructInfoNode& out);
  /// The same with the buffer's graph-level dims given (see input()).
  Buffer output(const std::string& name, const TensorStructInfoNode& out,
                const std::vector<SymExpr>& graph_dims);

  /// `graph_dims` over the kernel's variables.
  std::vector<SymExpr> dims(const std::vector<SymExpr>& graph_dims) const;

  /// The builder, for the body.
  PrimFuncBuilder& body() { return b_; }

  /// The kernel and its call's arguments.
  absl::StatusOr<Lowering> finish();

 private:
  std::string op_;
  PrimFuncBuilder b_;
  SymVarMap<SymExpr> to_kernel_;     ///< graph-level variable -> kernel variable
  std::vector<SymExpr> extra_args_;  ///< graph-level variables passed as scalars
  std::vector<Expr> args_;
};

/// Receives the spatial and the reduction iteration variables of a block.
using IterFn =
    std::function<void(const std::vector<SymVar>& spatial, const std::vector<SymVar>& reduce)>;

/// Loops over `spatial` then `reduce` extents, the outermost spatial loop
/// parallel (each of its iterations writes its own elements), around one block
/// `name` with a spatial iteration variable per spatial loop and a reduction
/// one per reduction loop, each bound to its loop variable. `init` (optional,
/// only with reductions) and `body` fill the block.
void loop_block(PrimFuncBuilder& b, const std::string& name, const std::vector<SymExpr>& spatial,
                const std::vector<SymExpr>& reduce, const IterFn& init, const IterFn& body);

/// How an operand of dims `operand` broadcasts (numpy, aligned at the right)
/// to dims `out`: for each operand dim, the position of the result dim it
/// follows (the dims are provably equal), or -1 where the operand's dim is
/// provably 1 (index 0). Any other pair is an error naming `what`.
using BroadcastMap = std::vector<int64_t>;
absl::StatusOr<BroadcastMap> broadcast_map(const std::string& op, const std::string& what,
                                           const std::vector<SymExpr>& operand,
                                           const std::vector<SymExpr>& out, Analyzer& analyzer);
/// The operand's indices for the result's iteration variables `out_vars`.
std::vector<SymExpr> broadcast_index(const BroadcastMap& map, const std::vector<SymVar>& out_vars);

/// `vars` as SymExprs (index lists).
std::vector<SymExpr> as_indices(const std::vector<SymVar>& vars);

}  // namespace relax::transform::legalize
