// From a parsed name and the concrete shapes and dtypes of a call to a oneDNN primitive
// descriptor: the checks every kind shares (dtypes, argument roles), the post-ops as a
// primitive_attr, and one planner per kind (onednn_matmul.cc, onednn_conv.cc).
#pragma once

#ifdef RELAX_WITH_ONEDNN

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/onednn_call.h"
#include "relax/support/data_type.h"

namespace relax::runtime::onednn {

/// One tensor of a call: the inputs in call order, then the output.
struct TensorInfo {
  const std::vector<int64_t>* shape = nullptr;
  DataType dtype;
};

/// The memory descriptor of one call argument over its (compact) data, and oneDNN's name for
/// it (DNNL_ARG_SRC, ...).
struct ArgDesc {
  int arg = 0;
  dnnl::memory::desc md;
};

/// A primitive descriptor for one call's shapes and dtypes, and the descriptors of its
/// arguments in call order (the output last). For `:packed` the descriptor's weights layout
/// is oneDNN's choice (format any), args[1] the user's layout to reorder from.
struct Plan {
  dnnl::primitive_desc pd;  ///< empty when `empty_output`
  std::vector<ArgDesc> args;
  /// The output has no elements: the call has nothing to compute (oneDNN 2.6 is not asked;
  /// it divides by zero creating a primitive with a zero dim).
  bool empty_output = false;
  /// A convolution whose primitive reads or writes oneDNN's own (blocked) activation layouts:
  /// the source is reordered into `inner_src` and the result out of `inner_dst` around it, in
  /// the call's scratch after the primitive's scratchpad (extra_bytes()). Each empty when that
  /// side needs no reorder.
  dnnl::memory::desc inner_src, inner_dst;
  bool reorders_activations() const { return inner_src != dnnl::memory::desc() || inner_dst != dnnl::memory::desc(); }
  /// Bytes of scratch beyond the primitive's scratchpad: the two reordered activations, each
  /// 64-byte aligned.
  int64_t extra_bytes() const;
};

/// Rounds `bytes` up to a multiple of 64.
inline int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

/// "argument 2 (bias)": the argument `index` of a call of `spec` by its role.
std::string arg_label(const OpSpec& spec, size_t index);
/// "(2, 3)".
std::string shape_text(const std::vector<int64_t>& shape);
/// InvalidArgument "<name>: <label>: <what>".
absl::Status arg_error(const OpSpec& spec, size_t index, const std::string& what);

/// The dtype rules of every kind: operands both f32 or both bf16; the output f32, or bf16 for
/// bf16 operands; the bias f32 or the operands' dtype; each residual the output's dtype.
absl::Status check_dtypes(const OpSpec& spec, std::span<const TensorInfo> tensors);

/// The scratchpad mode (user) and the post-ops after the bias, in order; `residuals` holds
/// the descriptor of each residual tensor.
dnnl::primitive_attr make_attr(const OpSpec& spec,
                               const std::vector<dnnl::memory::desc>& residuals);

/// DNNL_ARG_ATTR_MULTIPLE_POST_OP(index of the k-th `add` among the posts) | DNNL_ARG_SRC_1.
int residual_arg(const OpSpec& spec, int k);

/// The shapes of a matmul's or a convolution's operands as its plan describes them.
struct OperandDims {
  std::vector<int64_t> expected_out;  ///< the output's shape (and each residual's)
  dnnl::memory::dims src;
  dnnl::memory::dims weights;         ///< as the primitive sees them (grouped convolutions: 5-D)
  dnnl::memory::desc weights_md;      ///< the plain weights
  int64_t channels = 0;               ///< the bias's length
  dnnl::memory::dims bias;            ///< the bias as the primitive sees it
  dnnl::memory::dims dst;             ///< the output (and each residual) as the primitive sees it
};

/// The descriptors a primitive is created from: the weights as format_tag::any for `:packed`.
struct OperandDescs {
  dnnl::memory::desc src, weights, bias, dst;
  std::vector<dnnl::memory::desc> residuals;  ///< for make_attr
};

/// What every plan shares: the output checked to have shape `dims.expected_out`, then the
/// arguments entered into `plan` in call order (src, weights, the bias checked to be
/// `(channels)` when the spec has one, one residual per `add` checked to have the output's
/// shape, dst), and `plan.empty_output` set when the call has nothing to compute
/// (output_is_empty). An error names the argument.
absl::StatusOr<OperandDescs> add_operands(const OpSpec& spec, std::span<const TensorInfo> tensors,
                                          const OperandDims& dims, Plan& plan);

/// Whether the call has nothing to compute (an empty output); an error naming the operand
/// when an operand is empty but the output is not (an empty reduction, which oneDNN 2.6
/// cannot run).
absl::StatusOr<bool> output_is_empty(const OpSpec& spec, std::span<const TensorInfo> tensors);

/// matmul and linear. Throws dnnl::error when oneDNN has no implementation.
absl::StatusOr<Plan> plan_matmul(const OpSpec& spec, std::span<const TensorInfo> tensors);
/// conv1d and conv2d. Throws dnnl::error when oneDNN has no implementation.
absl::StatusOr<Plan> plan_conv(const OpSpec& spec, std::span<const TensorInfo> tensors);

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
