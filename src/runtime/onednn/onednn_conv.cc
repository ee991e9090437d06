// conv1d and conv2d as one oneDNN convolution primitive, conv2d_transpose as one deconvolution
// primitive (onednn_plan.h).
//
// Data and output stay in relax's plain NCW/NCHW layouts (the VM passes compact row-major
// tensors); the weight OIW/OIHW is read in place, as oneDNN's grouped (G, O/G, I, ...) view
// of the same memory when groups > 1, or reordered once for `:packed`. relax's dilation d is
// oneDNN's d - 1; the padding is split into the low and high sides the name gives.
#ifdef RELAX_WITH_ONEDNN

#include "absl/strings/str_cat.h"
#include "onednn_common.h"
#include "onednn_plan.h"

namespace relax::runtime::onednn {

namespace {

// The primitive descriptor of a convolution or deconvolution (`Primitive`) over the planned
// operands, with or without the bias.
template <typename Primitive>
dnnl::primitive_desc window_primitive(dnnl::algorithm algo, const OpSpec& spec, const OperandDescs& d,
                                      const dnnl::memory::dims& strides, const dnnl::memory::dims& dilation,
                                      const dnnl::memory::dims& padding_l, const dnnl::memory::dims& padding_r,
                                      const dnnl::primitive_attr& attr) {
  const auto prop = dnnl::prop_kind::forward_inference;
  const typename Primitive::desc desc =
      spec.bias ? typename Primitive::desc(prop, algo, d.src, d.weights, d.bias, d.dst, strides, dilation, padding_l, padding_r)
                : typename Primitive::desc(prop, algo, d.src, d.weights, d.dst, strides, dilation, padding_l, padding_r);
  return typename Primitive::primitive_desc(desc, attr, cpu_engine());
}

}  // namespace

absl::StatusOr<Plan> plan_conv(const OpSpec& spec, std::span<const TensorInfo> tensors) {
  if (absl::Status s = check_dtypes(spec, tensors); !s.ok()) return s;
  const size_t spatial = static_cast<size_t>(spec.spatial_dims());
  const bool transpose = spec.kind == OpKind::kConv2dTranspose;
  const char* layouts[2] = {spatial == 2 ? "NCHW" : "NCW", transpose ? "IOHW" : spatial == 2 ? "OIHW" : "OIW"};
  for (size_t i = 0; i < 2; ++i) {
    if (tensors[i].shape->size() != spatial + 2) {
      return arg_error(spec, i,
                       absl::StrCat("expected a tensor of rank ", spatial + 2, " (", layouts[i],
                                    "), got shape ", shape_text(*tensors[i].shape)));
    }
  }
  const std::vector<int64_t>& data = *tensors[0].shape;
  const std::vector<int64_t>& weight = *tensors[1].shape;
  const ConvAttrs& c = spec.conv;
  const int64_t groups = c.groups;
  // conv: weights (O, I / groups, ...); conv2d_transpose: (I, O / groups, ...).
  const int64_t in_channels = transpose ? weight[0] : weight[1] * groups;
  const int64_t out_channels = transpose ? weight[1] * groups : weight[0];
  if (data[1] != in_channels) {
    return arg_error(spec, 1,
                     transpose ? absl::StrCat("its dim 0 (", weight[0], ") must equal the input channels ", data[1], " of ",
                                              arg_label(spec, 0), " ", shape_text(data))
                               : absl::StrCat("its dim 1 times groups (", weight[1], " * ", groups,
                                              ") must equal the input channels ", data[1], " of ", arg_label(spec, 0), " ",
                                              shape_text(data)));
  }
  if ((transpose ? in_channels : out_channels) % groups != 0) {
    return arg_error(spec, 1,
                     absl::StrCat("its ", transpose ? "input" : "output", " channels ",
                                  transpose ? in_channels : out_channels, " are not a multiple of groups ", groups));
  }
  std::vector<int64_t> expected_out = {data[0], out_channels};
  dnnl::memory::dims dilation(spatial);
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t extent = c.dilation[d] * (weight[2 + d] - 1) + 1;
    if (transpose) {
      // Each input element spreads over the dilated kernel, `stride` apart; the padding crops.
      const int64_t full = data[2 + d] == 0 ? 0 : (data[2 + d] - 1) * c.strides[d] + extent;
      const int64_t cropped = full - c.padding_before[d] - c.padding_after[d];
      if (cropped < 1) {
        return arg_error(spec, 0,
                         absl::StrCat("spatial dim ", d, " (", data[2 + d], ") gives an output of ", full,
                                      " cropped by the padding to ", cropped, ", expected at least 1"));
      }
      expected_out.push_back(cropped);
    } else {
      const int64_t padded = data[2 + d] + c.padding_before[d] + c.padding_after[d];
      if (padded < extent) {
        return arg_error(spec, 0,
                         absl::StrCat("spatial dim ", d, " (", data[2 + d], " padded to ", padded,
                                      ") is smaller than the dilated kernel (", extent, ")"));
      }
      expected_out.push_back((padded - extent) / c.strides[d] + 1);
    }
    dilation[d] = c.dilation[d] - 1;
  }
  // oneDNN's logical weights: (O, I, ...), grouped (G, O / G, I / G, ...); the memory is relax's.
  std::vector<int64_t> weight_dims = weight;
  dnnl::memory::desc plain_weights;
  if (transpose) {
    const auto type = *dnnl_type(tensors[1].dtype);
    if (groups > 1) {
      weight_dims = {groups, out_channels / groups, in_channels / groups, weight[2], weight[3]};
      plain_weights = dnnl::memory::desc(weight_dims, type, dnnl::memory::format_tag::giohw);
    } else {
      weight_dims = {out_channels, in_channels, weight[2], weight[3]};
      plain_weights = dnnl::memory::desc(weight_dims, type, dnnl::memory::format_tag::iohw);
    }
  } else {
    if (groups > 1) {
      weight_dims[0] = out_channels / groups;
      weight_dims.insert(weight_dims.begin(), groups);
    }
    plain_weights = plain_md(weight_dims, tensors[1].dtype);
  }
  Plan plan;
  absl::StatusOr<OperandDescs> d = add_operands(
      spec, tensors,
      OperandDims{expected_out, data, weight_dims, plain_weights, out_channels, {out_channels}, expected_out},
      plan);
  if (!d.ok()) return d.status();
  if (plan.empty_output) return plan;
  // Packed weights and no residual: the activations in the layouts oneDNN prefers (blocked
  // channels), reordered around the primitive. In the plain layouts oneDNN 2.6 runs every
  // convolution as im2col and a GEMM; depthwise ones, a GEMM per channel, were 60% of PaddleOCR's
  // time.
  const bool any_activations = spec.packed && spec.num_adds == 0;
  if (any_activations) {
    d->src = dnnl::memory::desc(data, *dnnl_type(tensors[0].dtype), dnnl::memory::format_tag::any);
    d->dst = dnnl::memory::desc(expected_out, *dnnl_type(tensors.back().dtype), dnnl::memory::format_tag::any);
  }
  // `:nhwc_in` / `:nhwc_out`: that side's tensor holds N[H]WC (dispatch-library's nhwc-chains
  // step joins the convolutions of a chain so): the primitive reads or writes it as it is.
  const auto nhwc_tag = spatial == 2 ? dnnl::memory::format_tag::acdb : dnnl::memory::format_tag::acb;
  if (spec.nhwc_in) {
    plan.args[0].md = dnnl::memory::desc(data, *dnnl_type(tensors[0].dtype), nhwc_tag);
    d->src = plan.args[0].md;
  }
  if (spec.nhwc_out) {
    plan.args.back().md = dnnl::memory::desc(expected_out, *dnnl_type(tensors.back().dtype), nhwc_tag);
    d->dst = plan.args.back().md;
  }
  const dnnl::memory::dims strides(c.strides.begin(), c.strides.end());
  const dnnl::memory::dims padding_l(c.padding_before.begin(), c.padding_before.end());
  const dnnl::memory::dims padding_r(c.padding_after.begin(), c.padding_after.end());
  const dnnl::primitive_attr attr = make_attr(spec, d->residuals);
  plan.pd = transpose ? window_primitive<dnnl::deconvolution_forward>(dnnl::algorithm::deconvolution_direct, spec, *d,
                                                                      strides, dilation, padding_l, padding_r, attr)
                      : window_primitive<dnnl::convolution_forward>(dnnl::algorithm::convolution_direct, spec, *d,
                                                                    strides, dilation, padding_l, padding_r, attr);
  if (any_activations) {
    const dnnl::memory::desc src = plan.pd.src_desc(), dst = plan.pd.dst_desc();
    if (src != plan.args[0].md) plan.inner_src = src;
    if (dst != plan.args.back().md) plan.inner_dst = dst;
  }
  return plan;
}

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
