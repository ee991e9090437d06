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
#include "onednn_name.h"
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
};

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

/// The residual arguments of `spec` (one per `add`, after the operands and the bias): each
/// checked to have shape `expected` (the output's), described as `md_dims` (the output's
/// dims as the primitive sees them) and entered into `plan`, then the destination `dst`.
/// Returns the residuals' descriptors (for make_attr), or an error naming the argument.
absl::StatusOr<std::vector<dnnl::memory::desc>> add_residuals_and_dst(
    const OpSpec& spec, std::span<const TensorInfo> tensors, const std::vector<int64_t>& expected,
    const dnnl::memory::dims& md_dims, const dnnl::memory::desc& dst, Plan& plan);

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
