// The compute library: loop-level kernels for operator calls.
//
// An operator's legalization (its entry in the operator table, see op.h)
// turns a call into a PrimFunc built here on top of PrimFuncBuilder, and the
// legalize-ops pass replaces the call with call_tir of it. The high-level
// builders cover most operators in a line:
//
//   compute::elementwise(call, analyzer, [](SymExpr x) { return tanh(x); });
//   compute::broadcast(call, analyzer, [](const std::vector<SymExpr>& v) { return v[0] + v[1]; });
//   compute::reduce(call, analyzer, {.axes = {1}}, compute::sum_reducer());
//   compute::injective(call, analyzer, [](const std::vector<SymExpr>& i, const compute::Inputs& in) {
//     return in.load(0, {i[1], i[0]});   // a transpose
//   });
//
// Kernels keep symbolic shapes (one kernel serves every size): their buffers
// have the call's dims over the kernel's own symbolic variables. Each loop
// nest surrounds one block whose iteration variables are marked spatial or
// reduction exactly, which the loop-pattern analysis and schedules read.
// User legalization rules (create_legalize_ops_pass overrides) use the same
// library.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/shape/analyzer.h"
#include "relax/ir/op.h"

namespace relax::compute {

// ---------------------------------------------------------------------------
// Checks.

/// InvalidArgument "<op>: <message>".
absl::Status error(const std::string& op, const std::string& message);

/// The Tensor annotation of call.args[index] when its shape and dtype are
/// known; otherwise an error naming the argument and its annotation.
absl::StatusOr<const TensorStructInfoNode*> known_tensor(const CallNode& call, size_t index,
                                                         const std::string& op,
                                                         const std::string& role);

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
  /// A scalar parameter for the Prim argument `arg`, of its dtype, as an expression of that
  /// dtype. A bool Prim travels as an int64 parameter (kernels take integer and float scalars)
  /// and comes back as its cast to bool.
  SymExpr scalar_input(const std::string& name, const Expr& arg);
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
/// one per reduction loop, each bound to its loop variable. `init` (optional)
/// and `body` fill the block; with no reduction extents the init runs at the
/// start of the body (a reduction over no axes).
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

// ---------------------------------------------------------------------------
// High-level kernels. Each checks the call (tensors of known shape and dtype,
// the result's annotation known) and returns the call's Lowering; the
// result's dims and dtype are the call's deduced annotation.

/// The dtype a kernel computes in for values stored as `dtype`: float32 for
/// float16 and bfloat16 (stored in 16 bits, computed in float32), `dtype`
/// itself otherwise.
DataType compute_dtype(DataType dtype);
/// `v` converted to `dtype` (itself when it already has that dtype).
SymExpr as_dtype(const SymExpr& v, DataType dtype);

/// A unary scalar function; its value is converted to the result's dtype.
using UnaryFn = std::function<SymExpr(const SymExpr& x)>;
/// out[i] = fn(x[i]) for argument 0 `x`. The block is named after the op.
absl::StatusOr<Lowering> elementwise(const CallNode& call, Analyzer& analyzer, const UnaryFn& fn);

/// A function of the call's arguments' values at one point (in argument order).
using NaryFn = std::function<SymExpr(const std::vector<SymExpr>& values)>;
/// out[i] = fn(a[i'], b[i''], ...) with numpy broadcasting of every argument
/// (Tensors, and Prims as scalar parameters). A Prim whose dtype differs from
/// `scalar_dtype` (unset: the first non-bool tensor argument's dtype, else the
/// result's) is converted to it first, so `add(x, 1)` adds a float 1 to a
/// float x. Two Prims of known value give that value without a kernel.
absl::StatusOr<Lowering> broadcast(const CallNode& call, Analyzer& analyzer, const NaryFn& fn,
                                   std::optional<DataType> scalar_dtype = std::nullopt);

/// How to reduce: acc = init; acc = combine(acc, x) over the reduced points;
/// out = finalize(acc, count) (unset: acc). Accumulation is in `acc_dtype`
/// (unset: the result's dtype, float32 for float16/bfloat16 results).
struct Reducer {
  std::function<SymExpr(DataType)> init;
  std::function<SymExpr(const SymExpr& acc, const SymExpr& x)> combine;
  std::function<SymExpr(const SymExpr& acc, const SymExpr& count)> finalize;
  /// Applied to x before combine (x * x for a sum of squares); unset: x.
  std::function<SymExpr(const SymExpr& x)> map;
  std::optional<DataType> acc_dtype;
};
/// Sum (init 0), product (init 1), max (init -inf / the dtype's lowest), min.
Reducer sum_reducer();
Reducer prod_reducer();
Reducer max_reducer();
Reducer min_reducer();
/// Sum then divided by the count of reduced elements.
Reducer mean_reducer();

/// Which axes of argument 0 to reduce (normalised, ascending; empty with
/// `all` unset reduces nothing) and whether they stay as 1.
struct ReduceAxes {
  std::vector<int64_t> axes;
  bool all = false;
  bool keepdims = false;
};
/// The axes of `axis` (unset: all) for argument 0 of `call`, checked.
absl::StatusOr<ReduceAxes> reduce_axes(const CallNode& call,
                                       const std::optional<std::vector<int64_t>>& axis,
                                       bool keepdims);
/// A reduction of argument 0 over `axes`: one block with spatial iteration
/// variables for the kept dims and reduction ones for the reduced dims
/// (accumulating in the output, or in a workspace buffer when the
/// accumulation dtype differs or a finalize step follows).
absl::StatusOr<Lowering> reduce(const CallNode& call, Analyzer& analyzer, const ReduceAxes& axes,
                                const Reducer& reducer);

/// What an injective kernel reads: the call's tensors in argument order (the
/// fields of a Tuple argument in their place) and its Prim arguments.
class Inputs {
 public:
  Inputs(std::vector<Buffer> buffers, std::vector<SymExpr> scalars, std::vector<SymExpr> out_shape)
      : buffers_(std::move(buffers)), scalars_(std::move(scalars)), out_shape_(std::move(out_shape)) {}
  /// Tensor input `k`'s element at `index` (kernel-level indices).
  SymExpr load(size_t k, std::vector<SymExpr> index) const;
  /// Tensor input `k`'s dims over the kernel's variables.
  const std::vector<SymExpr>& shape(size_t k) const { return buffers_[k].shape(); }
  /// Tensor input `k`'s buffer.
  const Buffer& buffer(size_t k) const { return buffers_[k]; }
  /// The number of tensor inputs.
  size_t size() const { return buffers_.size(); }
  /// Prim argument `k` (in the order of the call's Prim arguments) as a kernel scalar.
  SymExpr scalar(size_t k) const { return scalars_[k]; }
  /// The result's dims over the kernel's variables.
  const std::vector<SymExpr>& out_shape() const { return out_shape_; }

 private:
  std::vector<Buffer> buffers_;
  std::vector<SymExpr> scalars_;
  std::vector<SymExpr> out_shape_;
};
/// The value of the result at one point, from the inputs.
using IndexFn = std::function<SymExpr(const std::vector<SymExpr>& out_index, const Inputs& in)>;
/// out[i] = fn(i, inputs): one spatial block over the result (reshape,
/// permute_dims, slices, concat, take, creation ops that read nothing). Tuple
/// arguments are taken apart field by field.
absl::StatusOr<Lowering> injective(const CallNode& call, Analyzer& analyzer, const IndexFn& fn);

/// The flat (row-major) offset of `index` in `dims`, and back.
SymExpr flat_index(const std::vector<SymExpr>& index, const std::vector<SymExpr>& dims);
std::vector<SymExpr> unflatten_index(const SymExpr& flat, const std::vector<SymExpr>& dims);

}  // namespace relax::compute
