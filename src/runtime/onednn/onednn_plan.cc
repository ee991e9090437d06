// The checks and post-ops every oneDNN kind shares (onednn_plan.h).
#ifdef RELAX_WITH_ONEDNN

#include "onednn_plan.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onednn_common.h"

namespace relax::runtime::onednn {
namespace {

const char* operand_role(OpKind kind, size_t index) {
  switch (kind) {
    case OpKind::kMatmul:
      return index == 0 ? "a" : "b";
    case OpKind::kLinear:
      return index == 0 ? "x" : "w";
    case OpKind::kConv1d:
    case OpKind::kConv2d:
    case OpKind::kConv2dTranspose:
      return index == 0 ? "data" : "weight";
  }
  return "?";
}

dnnl::algorithm eltwise_algorithm(PostKind post) {
  switch (post) {
    case PostKind::kRelu:
      return dnnl::algorithm::eltwise_relu;
    case PostKind::kGeluErf:
      return dnnl::algorithm::eltwise_gelu_erf;
    case PostKind::kGeluTanh:
      return dnnl::algorithm::eltwise_gelu_tanh;
    case PostKind::kSilu:
      return dnnl::algorithm::eltwise_swish;  // x * sigmoid(alpha x), alpha = 1
    case PostKind::kSigmoid:
      return dnnl::algorithm::eltwise_logistic;
    case PostKind::kTanh:
      return dnnl::algorithm::eltwise_tanh;
    case PostKind::kBias:
    case PostKind::kAdd:
      break;
  }
  return dnnl::algorithm::undef;
}

}  // namespace

std::string arg_label(const OpSpec& spec, size_t index) {
  std::string role;
  if (index < 2) {
    role = operand_role(spec.kind, index);
  } else if (spec.bias && index == 2) {
    role = "bias";
  } else if (index < spec.num_inputs()) {
    role = absl::StrCat("residual ", index - 2 - (spec.bias ? 1 : 0));
  } else if (index == spec.num_inputs()) {
    role = "out";
  } else {
    role = "workspace";
  }
  return absl::StrCat("argument ", index, " (", role, ")");
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

absl::Status arg_error(const OpSpec& spec, size_t index, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(spec.name, ": ", arg_label(spec, index), ": ", what));
}

absl::Status check_dtypes(const OpSpec& spec, std::span<const TensorInfo> tensors) {
  const DataType in = tensors[0].dtype;
  if (in != DataType::float32() && in != DataType::bfloat16()) {
    return arg_error(spec, 0, absl::StrCat("expected float32 or bfloat16, got ", in.to_string()));
  }
  if (tensors[1].dtype != in) {
    return arg_error(spec, 1,
                     absl::StrCat("expected ", in.to_string(), " (the dtype of ",
                                  arg_label(spec, 0), "), got ", tensors[1].dtype.to_string()));
  }
  const size_t out_index = spec.num_inputs();
  const DataType out = tensors[out_index].dtype;
  if (out != DataType::float32() && out != in) {
    return arg_error(
        spec, out_index,
        absl::StrCat("expected ", in == DataType::float32() ? "float32" : "bfloat16 or float32",
                     " for ", in.to_string(), " operands, got ", out.to_string()));
  }
  if (spec.bias) {
    const DataType b = tensors[2].dtype;
    if (b != DataType::float32() && b != in) {
      return arg_error(
          spec, 2, absl::StrCat("expected float32 or ", in.to_string(), ", got ", b.to_string()));
    }
  }
  for (size_t i = 2 + (spec.bias ? 1 : 0); i < out_index; ++i) {
    if (tensors[i].dtype != out) {
      return arg_error(spec, i,
                       absl::StrCat("expected ", out.to_string(), " (the output's dtype), got ",
                                    tensors[i].dtype.to_string()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> output_is_empty(const OpSpec& spec, std::span<const TensorInfo> tensors) {
  auto empty = [](const TensorInfo& t) {
    for (int64_t d : *t.shape) {
      if (d == 0) return true;
    }
    return false;
  };
  if (empty(tensors[spec.num_inputs()])) return true;
  for (size_t i = 0; i < 2; ++i) {
    if (empty(tensors[i])) {
      return arg_error(spec, i,
                       absl::StrCat("shape ", shape_text(*tensors[i].shape),
                                    " is empty while the output is not (an empty "
                                    "reduction, which oneDNN does not run)"));
    }
  }
  return false;
}

dnnl::primitive_attr make_attr(const OpSpec& spec,
                               const std::vector<dnnl::memory::desc>& residuals) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  size_t k = 0;
  for (PostKind post : spec.posts) {
    if (post == PostKind::kAdd) {
      ops.append_binary(dnnl::algorithm::binary_add, residuals[k++]);
    } else {
      const float alpha = post == PostKind::kSilu ? 1.0f : 0.0f;
      ops.append_eltwise(1.0f, eltwise_algorithm(post), alpha, 0.0f);
    }
  }
  attr.set_post_ops(ops);
  return attr;
}

absl::StatusOr<OperandDescs> add_operands(const OpSpec& spec, std::span<const TensorInfo> tensors,
                                          const OperandDims& dims, Plan& plan) {
  const size_t out_index = spec.num_inputs();
  const TensorInfo& out = tensors[out_index];
  if (*out.shape != dims.expected_out) {
    return arg_error(spec, out_index,
                     absl::StrCat("expected shape ", shape_text(dims.expected_out), ", got ", shape_text(*out.shape)));
  }
  OperandDescs d;
  d.src = plain_md(dims.src, tensors[0].dtype);
  d.dst = plain_md(dims.dst, out.dtype);
  plan.args.push_back({DNNL_ARG_SRC, d.src});
  plan.args.push_back({DNNL_ARG_WEIGHTS, dims.weights_md});
  if (spec.bias) {
    if (*tensors[2].shape != std::vector<int64_t>{dims.channels}) {
      return arg_error(spec, 2,
                       absl::StrCat("expected shape (", dims.channels, "), got ", shape_text(*tensors[2].shape)));
    }
    d.bias = plain_md(dims.bias, tensors[2].dtype);
    plan.args.push_back({DNNL_ARG_BIAS, d.bias});
  }
  for (int k = 0; k < spec.num_adds; ++k) {
    const size_t index = 2 + (spec.bias ? 1 : 0) + static_cast<size_t>(k);
    if (*tensors[index].shape != dims.expected_out) {
      return arg_error(spec, index,
                       absl::StrCat("expected shape ", shape_text(dims.expected_out), " (the output's), got ",
                                    shape_text(*tensors[index].shape)));
    }
    d.residuals.push_back(plain_md(dims.dst, tensors[index].dtype));
    plan.args.push_back({residual_arg(spec, k), d.residuals.back()});
  }
  plan.args.push_back({DNNL_ARG_DST, d.dst});
  absl::StatusOr<bool> empty = output_is_empty(spec, tensors);
  if (!empty.ok()) return empty.status();
  plan.empty_output = *empty;
  d.weights = spec.packed ? dnnl::memory::desc(dims.weights, *dnnl_type(tensors[1].dtype), dnnl::memory::format_tag::any)
                          : dims.weights_md;
  return d;
}

int64_t Plan::extra_bytes() const {
  return align64(static_cast<int64_t>(inner_src.get_size())) + align64(static_cast<int64_t>(inner_dst.get_size()));
}

int residual_arg(const OpSpec& spec, int k) {
  int seen = 0;
  for (size_t i = 0; i < spec.posts.size(); ++i) {
    if (spec.posts[i] != PostKind::kAdd) continue;
    if (seen++ == k) return DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1;
  }
  return 0;
}

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
