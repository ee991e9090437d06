// The ONNX importer's converters of convolution, pooling, normalization, reductions, clipping and
// quantization (onnx_importer.h). Windows take ONNX's pads, strides, dilations and auto_pad;
// uneven pads, which relax's windows do not take, become an explicit pad (or a crop, for
// ConvTranspose). The quantization operators are composed from elementwise ones.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_importer.h"
#include "relax/ir/op/conv.h"
#include "relax/ir/op/create.h"
#include "relax/ir/op/elementwise.h"
#include "relax/ir/op/linalg.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/op/nn.h"
#include "relax/ir/op/reduce.h"
#include "relax/ir/struct_info.h"

namespace relax::frontend::onnx_detail {
namespace {

using op::Operand;

// ---- Convolution and pooling (1-D and 2-D, NC...) ---------------------------------------------

// The spatial dims of a (N, C, ...) tensor, when constant (auto_pad SAME needs them).
std::optional<std::vector<int64_t>> constant_spatial(const Expr& x) {
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of(x);
  if (!dims || dims->size() < 3) return std::nullopt;
  std::vector<int64_t> out;
  for (size_t i = 2; i < dims->size(); ++i) {
    std::optional<int64_t> c = (*dims)[i].as_const();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

// A window's geometry: kernel, strides, dilations and pads (every dim's before, then after),
// auto_pad resolved.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool symmetric() const {
    const size_t n = kernel.size();
    for (size_t i = 0; i < n; ++i) {
      if (pads[i] != pads[i + n]) return false;
    }
    return true;
  }
  std::vector<int64_t> before() const { return std::vector<int64_t>(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(kernel.size())); }
};

absl::StatusOr<Window> window_of(const onnx::NodeProto& node, const Expr& x, std::vector<int64_t> kernel) {
  const size_t n = kernel.size();
  Window w;
  w.kernel = std::move(kernel);
  w.strides = ints_attr(node, "strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = ints_attr(node, "dilations").value_or(std::vector<int64_t>(n, 1));
  w.pads = ints_attr(node, "pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || w.pads.size() != 2 * n) {
    return node_error(node, absl::StrCat("strides, dilations and pads must have ", n, ", ", n, " and ", 2 * n,
                                         " values for a ", n, "-D window"));
  }
  const std::string auto_pad = string_attr(node, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    std::optional<std::vector<int64_t>> spatial = constant_spatial(x);
    if (!spatial) return node_error(node, absl::StrCat("auto_pad ", auto_pad, " needs the input's spatial dims known"));
    for (size_t i = 0; i < n; ++i) {
      const int64_t out = ((*spatial)[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - (*spatial)[i]);
      const int64_t small = total / 2, large = total - small;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads[i + n] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "NOTSET") {
    return node_error(node, absl::StrCat("auto_pad ", auto_pad, " is not NOTSET, VALID, SAME_UPPER or SAME_LOWER"));
  }
  return w;
}

// `x` padded explicitly by the window's pads (when a relax window takes only symmetric ones).
Expr padded(Importer& im, const Expr& x, const Window& w, double value) {
  const size_t n = w.kernel.size();
  std::vector<int64_t> widths = {0, 0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    widths.push_back(w.pads[i]);
    widths.push_back(w.pads[i + n]);
  }
  return im.emit(op::pad(x, widths, value));
}

Outputs convert_conv(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  Expr data = (*x)[0];
  const Expr& weight = (*x)[1];
  const int64_t rank = Importer::rank_of(weight);
  if (rank != 3 && rank != 4) return node_error(node, absl::StrCat("a weight of rank ", rank, ": relax converts 1-D and 2-D Conv"));
  std::optional<std::vector<SymExpr>> wdims = Importer::dims_of(weight);
  std::vector<int64_t> kernel;
  if (std::optional<std::vector<int64_t>> k = ints_attr(node, "kernel_shape")) {
    kernel = *k;
  } else {
    bool all = false;
    if (wdims) kernel = constants_of(std::vector<SymExpr>(wdims->begin() + 2, wdims->end()), &all);
    if (!all) return node_error(node, "needs kernel_shape or a weight of constant spatial dims");
  }
  absl::StatusOr<Window> w = window_of(node, data, kernel);
  if (!w.ok()) return w.status();
  std::vector<int64_t> padding = w->before();
  if (!w->symmetric()) {
    data = padded(im, data, *w, 0.0);
    std::fill(padding.begin(), padding.end(), 0);
  }
  const int64_t groups = int_attr(node, "group", 1);
  std::optional<Expr> bias;
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> b = im.tensor(*in[2], node);
    if (!b.ok()) return b.status();
    bias = *b;
  }
  Expr y = rank == 3 ? (bias ? op::conv1d(data, weight, *bias, w->strides, padding, w->dilations, groups)
                             : op::conv1d(data, weight, w->strides, padding, w->dilations, groups))
                     : (bias ? op::conv2d(data, weight, *bias, w->strides, padding, w->dilations, groups)
                             : op::conv2d(data, weight, w->strides, padding, w->dilations, groups));
  return std::vector<Value>{tensor_value(im.emit(y))};
}

// MaxPool and AveragePool over 2-D windows (floor mode).
ConvertFn pool(bool is_max) {
  return [is_max](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    Expr data = (*x)[0];
    std::optional<std::vector<int64_t>> kernel = ints_attr(node, "kernel_shape");
    if (!kernel || kernel->size() != 2) return node_error(node, "relax converts 2-D pools (kernel_shape of two values)");
    if (node.output_size() > 1) return node_error(node, "the Indices output of MaxPool is not converted");
    absl::StatusOr<Window> w = window_of(node, data, *kernel);
    if (!w.ok()) return w.status();
    if (int_attr(node, "ceil_mode", 0) != 0) {
      // The output dims rounded up: the last window may run past the end, over -inf. ONNX drops a
      // window that would start past the input and its leading pad; one whose kernel reaches at
      // least a stride cannot, when no pad follows. (AveragePool would count the extension.)
      if (!is_max) return node_error(node, "ceil_mode 1 of an AveragePool is not converted yet");
      const size_t n = kernel->size();
      for (size_t i = 0; i < n; ++i) {
        const int64_t reach = w->dilations[i] * ((*kernel)[i] - 1) + 1;
        if (w->pads[i + n] != 0 || reach < w->strides[i]) {
          return node_error(node, absl::StrCat("ceil_mode 1 with an end pad or a kernel shorter than its stride (dim ", i,
                                               ") is not converted yet"));
        }
        w->pads[i + n] = w->strides[i] - 1;
      }
    }
    std::vector<int64_t> padding = w->before();
    const bool include_pad = int_attr(node, "count_include_pad", 0) != 0;
    if (!w->symmetric()) {
      if (!is_max && !include_pad) return node_error(node, "uneven pads of an AveragePool that excludes them are not converted yet");
      data = padded(im, data, *w, is_max ? -std::numeric_limits<double>::infinity() : 0.0);
      std::fill(padding.begin(), padding.end(), 0);
    }
    Expr y = is_max ? op::max_pool2d(data, *kernel, w->strides, padding, w->dilations)
                    : op::avg_pool2d(data, *kernel, w->strides, padding, w->dilations, include_pad);
    return std::vector<Value>{tensor_value(im.emit(y))};
  };
}

// GlobalAveragePool and GlobalMaxPool: over every spatial dim, kept as 1.
ConvertFn global_pool(bool is_max) {
  return [is_max](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    const int64_t rank = Importer::rank_of((*x)[0]);
    if (rank < 3) return node_error(node, absl::StrCat("an input of rank ", rank, ", not (N, C, ...)"));
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
    Expr y = is_max ? op::max((*x)[0], axes, true) : op::mean((*x)[0], axes, true);
    return std::vector<Value>{tensor_value(im.emit(y))};
  };
}


// ConvTranspose (1-D as 2-D of height 1; data NCHW, weight IOHW): uneven pads crop the full
// output explicitly.
Outputs convert_conv_transpose(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  const int64_t weight_rank = Importer::rank_of((*x)[1]);
  if (weight_rank != 3 && weight_rank != 4) {
    return node_error(node, "relax converts 1-D and 2-D ConvTranspose (a weight of rank 3 or 4)");
  }
  const size_t n = static_cast<size_t>(weight_rank - 2);
  if (find_attr(node, "output_shape") != nullptr) return node_error(node, "output_shape is not converted yet (give pads)");
  const std::string auto_pad = string_attr(node, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return node_error(node, absl::StrCat("auto_pad ", auto_pad, " is not converted yet"));
  std::vector<int64_t> strides = ints_attr(node, "strides").value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> dilations = ints_attr(node, "dilations").value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> output_padding = ints_attr(node, "output_padding").value_or(std::vector<int64_t>(n, 0));
  std::vector<int64_t> pads = ints_attr(node, "pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (auto_pad == "VALID") pads.assign(2 * n, 0);
  if (strides.size() != n || dilations.size() != n || output_padding.size() != n || pads.size() != 2 * n) {
    return node_error(node, absl::StrCat("strides, dilations and output_padding take ", n, " values, pads ", 2 * n));
  }
  if (n == 1) {
    // 1-D: the 2-D transpose over a height of 1 (data (N, C, 1, W), weight (C, O / group, 1, k)).
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    output_padding.insert(output_padding.begin(), 0);
    pads = {0, pads[0], 0, pads[1]};
    (*x)[0] = im.emit(op::expand_dims((*x)[0], 2));
    (*x)[1] = im.emit(op::expand_dims((*x)[1], 2));
  }
  auto result = [&](Expr y) -> Outputs {
    if (n == 1) y = im.emit(op::squeeze(y, std::vector<int64_t>{2}));
    return std::vector<Value>{tensor_value(y)};
  };
  std::optional<Expr> bias;
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> b = im.tensor(*in[2], node);
    if (!b.ok()) return b.status();
    bias = *b;
  }
  const int64_t group = int_attr(node, "group", 1);
  std::optional<std::vector<SymExpr>> w_dims = Importer::dims_of((*x)[1]);
  std::optional<std::vector<SymExpr>> x_dims = Importer::dims_of((*x)[0]);
  bool kernel_is_stride = group == 1 && w_dims && x_dims && dilations == std::vector<int64_t>{1, 1} &&
                          output_padding == std::vector<int64_t>{0, 0} && pads == std::vector<int64_t>{0, 0, 0, 0};
  for (size_t d = 0; kernel_is_stride && d < 2; ++d) kernel_is_stride = (*w_dims)[2 + d].is_const(strides[d]);
  if (kernel_is_stride) {
    // A kernel as large as its stride (a segmentation head's 2x2 stride-2 upsampling): every
    // output pixel reads one input pixel, so it is a 1x1 convolution to O * kH * kW channels
    // (the library's fast case) whose channels are then spread over the kH x kW blocks:
    //   y[n, o, i*kH + a, j*kW + b] = sum_c x[n, c, i, j] w[c, o, a, b]
    const SymExpr o = (*w_dims)[1], c = (*w_dims)[0], kh(strides[0]), kw(strides[1]);
    const SymExpr batch = (*x_dims)[0], h = (*x_dims)[2], w = (*x_dims)[3];
    Expr w1 = im.emit(op::permute_dims((*x)[1], std::vector<int64_t>{1, 2, 3, 0}));
    w1 = im.emit(op::reshape(w1, std::vector<SymExpr>{im.builder().analyzer().simplify(o * kh * kw), c, SymExpr(1), SymExpr(1)}));
    Expr y = im.emit(op::conv2d((*x)[0], w1));
    y = im.emit(op::reshape(y, std::vector<SymExpr>{batch, o, kh, kw, h, w}));
    y = im.emit(op::permute_dims(y, std::vector<int64_t>{0, 1, 4, 2, 5, 3}));
    Analyzer& analyzer = im.builder().analyzer();
    y = im.emit(op::reshape(y, std::vector<SymExpr>{batch, o, analyzer.simplify(h * kh), analyzer.simplify(w * kw)}));
    if (bias) y = im.emit(op::add(y, im.emit(op::reshape(*bias, std::vector<SymExpr>{SymExpr(1), o, SymExpr(1), SymExpr(1)}))));
    return result(y);
  }
  const bool even = pads[0] == pads[2] && pads[1] == pads[3];
  const std::vector<int64_t> padding = even ? std::vector<int64_t>{pads[0], pads[1]} : std::vector<int64_t>{0, 0};
  Expr y = im.emit(op::conv2d_transpose((*x)[0], (*x)[1], bias, strides, padding, output_padding, dilations, group));
  if (!even) {
    std::optional<std::vector<SymExpr>> dims = Importer::dims_of(y);
    if (!dims) return node_error(node, "uneven pads need the output's dims");
    y = im.emit(op::strided_slice(y, {2, 3}, {SymExpr(pads[0]), SymExpr(pads[1])},
                                  {(*dims)[2] - pads[2], (*dims)[3] - pads[3]}));
  }
  return result(y);
}
// ---- Normalization ----------------------------------------------------------------------------

Outputs convert_batch_norm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 5);
  if (!x.ok()) return x.status();
  if (int_attr(node, "training_mode", 0) != 0 || node.output_size() > 1) {
    return node_error(node, "training mode (the running statistics as outputs) is not converted");
  }
  const double eps = float_attr(node, "epsilon", 1e-5f);
  return std::vector<Value>{tensor_value(im.emit(op::batch_norm((*x)[0], (*x)[1], (*x)[2], (*x)[3], (*x)[4], 1, eps)))};
}

Outputs convert_layer_norm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  if (node.output_size() > 1) return node_error(node, "the Mean and InvStdDev outputs are not converted");
  const int64_t rank = Importer::rank_of((*x)[0]);
  absl::StatusOr<int64_t> axis = axis_in(node, int_attr(node, "axis", -1), rank);
  if (!axis.ok()) return axis.status();
  if (rank < 0) return node_error(node, "needs its input's rank");
  std::vector<int64_t> axes;
  for (int64_t i = *axis; i < rank; ++i) axes.push_back(i);
  Expr beta;
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> b = im.tensor(*in[2], node);
    if (!b.ok()) return b.status();
    beta = *b;
  } else {
    beta = im.emit(op::zeros_like((*x)[1]));
  }
  const double eps = float_attr(node, "epsilon", 1e-5f);
  return std::vector<Value>{tensor_value(im.emit(op::layer_norm((*x)[0], (*x)[1], beta, axes, eps)))};
}

Outputs convert_instance_norm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 3);
  if (!x.ok()) return x.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
  std::optional<int64_t> channels = dims && dims->size() >= 3 ? (*dims)[1].as_const() : std::nullopt;
  if (!channels) return node_error(node, "needs a constant channel dim (dim 1)");
  const double eps = float_attr(node, "epsilon", 1e-5f);
  return std::vector<Value>{tensor_value(im.emit(op::group_norm((*x)[0], (*x)[1], (*x)[2], *channels, eps)))};
}
// ---- Reductions -------------------------------------------------------------------------------

// ReduceSum (axes an input from opset 13), ReduceMean/Max/Min/Prod (an attribute up to 17).
ConvertFn reduction(Expr (*fn)(Expr, op::OptionalInts, bool), bool axes_input_from_13) {
  return [fn, axes_input_from_13](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    std::optional<std::vector<int64_t>> axes;
    if (axes_input_from_13 && im.opset() >= 13) {
      if (in.size() > 1 && in[1] != nullptr) {
        absl::StatusOr<std::vector<SymExpr>> known = known_input(node, in, 1, "axes");
        if (!known.ok()) return known.status();
        bool all = false;
        axes = constants_of(*known, &all);
        if (!all) return node_error(node, "its axes are not constants");
      }
    } else {
      axes = ints_attr(node, "axes");
    }
    const bool keepdims = int_attr(node, "keepdims", 1) != 0;
    if (axes && axes->empty()) axes.reset();
    if (!axes && int_attr(node, "noop_with_empty_axes", 0) != 0) return std::vector<Value>{tensor_value((*x)[0])};
    return std::vector<Value>{tensor_value(im.emit(fn((*x)[0], op::OptionalInts(axes), keepdims)))};
  };
}

ConvertFn arg_reduction(Expr (*fn)(Expr, std::optional<int64_t>, bool)) {
  return [fn](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    const bool keepdims = int_attr(node, "keepdims", 1) != 0;
    const int64_t axis = int_attr(node, "axis", 0);
    if (int_attr(node, "select_last_index", 0) == 0) {
      return std::vector<Value>{tensor_value(im.emit(fn((*x)[0], axis, keepdims)))};
    }
    // The last extreme: the first one of the flipped axis, counted back from the end.
    std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
    absl::StatusOr<int64_t> a = axis_in(node, axis, Importer::rank_of((*x)[0]));
    if (!a.ok()) return a.status();
    if (!dims) return node_error(node, "select_last_index needs its input's dims");
    const Expr first = im.emit(fn(im.emit(op::flip((*x)[0], *a)), *a, keepdims));
    const SymExpr last = (*dims)[static_cast<size_t>(*a)] - 1;
    return std::vector<Value>{tensor_value(im.emit(op::subtract(make_prim_value(last), first)))};
  };
}

Outputs convert_cumsum(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<SymExpr>> axis = known_input(node, in, 1, "axis");
  if (!axis.ok()) return axis.status();
  if (axis->size() != 1 || !(*axis)[0].as_const()) return node_error(node, "its axis is not one constant");
  const int64_t a = *(*axis)[0].as_const();
  // reverse: the sum of the flipped axis, flipped back; exclusive: each running sum less its own
  // element (exact for integers).
  const bool reverse = int_attr(node, "reverse", 0) != 0, exclusive = int_attr(node, "exclusive", 0) != 0;
  Expr y = (*x)[0];
  if (reverse) y = im.emit(op::flip(y, a));
  Expr sums = im.emit(op::cumsum(y, a));
  if (exclusive) sums = im.emit(op::subtract(sums, y));
  if (reverse) sums = im.emit(op::flip(sums, a));
  return std::vector<Value>{tensor_value(sums)};
}

// Clip: bounds as attributes (before opset 11) or constant inputs.
Outputs convert_clip(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (im.opset() < 11) {
    lo = float_attr(node, "min", -std::numeric_limits<float>::infinity());
    hi = float_attr(node, "max", std::numeric_limits<float>::infinity());
    return std::vector<Value>{tensor_value(im.emit(op::clip((*x)[0], lo, hi)))};
  }
  Expr y = (*x)[0];
  for (size_t i = 1; i <= 2; ++i) {
    if (i >= in.size() || in[i] == nullptr) continue;
    absl::StatusOr<Expr> bound = im.tensor(*in[i], node);
    if (!bound.ok()) return bound.status();
    y = im.emit(i == 1 ? op::maximum(y, *bound) : op::minimum(y, *bound));  // tensor bounds too
  }
  return std::vector<Value>{tensor_value(y)};
}

// HardSigmoid: max(0, min(1, alpha * x + beta)); HardSwish: x * HardSigmoid(x) with 1/6, 1/2.
ConvertFn hard_sigmoid(bool swish) {
  return [swish](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    const DataType t = dtype_of_expr((*x)[0]).value_or(DataType::float32());
    const double alpha = swish ? 1.0 / 6 : float_attr(node, "alpha", 0.2f);
    const double beta = swish ? 0.5 : float_attr(node, "beta", 0.5f);
    Expr y = im.emit(op::add(im.emit(op::multiply((*x)[0], scalar(alpha, t))), scalar(beta, t)));
    y = im.emit(op::clip(y, 0.0, 1.0));
    if (swish) y = im.emit(op::multiply((*x)[0], y));
    return std::vector<Value>{tensor_value(y)};
  };
}


// ---- Quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger) ----

// `scale` (a scalar or a vector along `axis` of a rank-`rank` tensor) shaped to broadcast.
absl::StatusOr<Expr> along_axis(Importer& im, const onnx::NodeProto& node, const Expr& scale, int64_t axis, int64_t rank) {
  if (Importer::rank_of(scale) != 1) return scale;
  absl::StatusOr<int64_t> a = axis_in(node, axis, rank);
  if (!a.ok()) return a.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of(scale);
  if (!dims) return node_error(node, "needs its scale's length");
  std::vector<SymExpr> shape(static_cast<size_t>(rank), SymExpr(1));
  shape[static_cast<size_t>(*a)] = (*dims)[0];
  return im.emit(op::reshape(scale, shape));
}

// The range of a quantized dtype.
std::pair<double, double> quantized_range(DataType t) {
  return t.code == DataType::Code::kUInt ? std::pair<double, double>(0, 255) : std::pair<double, double>(-128, 127);
}

Outputs convert_quantize_linear(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  const int64_t rank = Importer::rank_of((*x)[0]);
  absl::StatusOr<Expr> scale = along_axis(im, node, (*x)[1], int_attr(node, "axis", 1), rank);
  if (!scale.ok()) return scale.status();
  DataType q = DataType{DataType::Code::kUInt, 8, 1};
  Expr y = im.emit(op::round(im.emit(op::divide((*x)[0], *scale))));
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> zp = im.tensor(*in[2], node);
    if (!zp.ok()) return zp.status();
    q = dtype_of_expr(*zp).value_or(q);
    absl::StatusOr<Expr> z = along_axis(im, node, *zp, int_attr(node, "axis", 1), rank);
    if (!z.ok()) return z.status();
    y = im.emit(op::add(y, im.emit(op::astype(*z, dtype_of_expr(y).value_or(DataType::float32())))));
  }
  if (q != DataType{DataType::Code::kUInt, 8, 1} && q != DataType{DataType::Code::kInt, 8, 1}) {
    return node_error(node, absl::StrCat("quantizes to ", q.to_string(), "; relax converts uint8 and int8"));
  }
  const auto [lo, hi] = quantized_range(q);
  return std::vector<Value>{tensor_value(im.emit(op::astype(im.emit(op::clip(y, lo, hi)), q)))};
}

Outputs convert_dequantize_linear(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  const int64_t rank = Importer::rank_of((*x)[0]);
  const DataType f = dtype_of_expr((*x)[1]).value_or(DataType::float32());
  Expr v = im.emit(op::astype((*x)[0], f));
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> zp = im.tensor(*in[2], node);
    if (!zp.ok()) return zp.status();
    absl::StatusOr<Expr> z = along_axis(im, node, im.emit(op::astype(*zp, f)), int_attr(node, "axis", 1), rank);
    if (!z.ok()) return z.status();
    v = im.emit(op::subtract(v, *z));
  }
  absl::StatusOr<Expr> scale = along_axis(im, node, (*x)[1], int_attr(node, "axis", 1), rank);
  if (!scale.ok()) return scale.status();
  return std::vector<Value>{tensor_value(im.emit(op::multiply(v, *scale)))};
}

// y = saturate(round(x / s) + zp) with s = (max(0, max x) - min(0, min x)) / 255 and
// zp = saturate(round(-min(0, min x) / s)), uint8; the three outputs.
Outputs convert_dynamic_quantize_linear(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  const Expr& v = (*x)[0];
  const Expr zero = scalar(0.0, DataType::float32()), range = scalar(255.0, DataType::float32());
  Expr hi = im.emit(op::maximum(im.emit(op::max(v)), zero));
  Expr lo = im.emit(op::minimum(im.emit(op::min(v)), zero));
  Expr scale = im.emit(op::divide(im.emit(op::subtract(hi, lo)), range));
  Expr zp_float = im.emit(op::clip(im.emit(op::round(im.emit(op::divide(im.emit(op::neg(lo)), scale)))), 0, 255));
  const DataType u8{DataType::Code::kUInt, 8, 1};
  Expr y = im.emit(op::add(im.emit(op::round(im.emit(op::divide(v, scale)))), zp_float));
  y = im.emit(op::astype(im.emit(op::clip(y, 0, 255)), u8));
  return std::vector<Value>{tensor_value(y), tensor_value(scale), tensor_value(im.emit(op::astype(zp_float, u8)))};
}

Outputs convert_matmul_integer(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  std::vector<Expr> sides;
  for (size_t i = 0; i < 2; ++i) {
    Expr side = im.emit(op::astype((*x)[i], DataType::int32()));
    if (in.size() > 2 + i && in[2 + i] != nullptr) {
      absl::StatusOr<Expr> zp = im.tensor(*in[2 + i], node);
      if (!zp.ok()) return zp.status();
      if (Importer::rank_of(*zp) > 0) {
        // a's zero point per row (M,) and b's per column (N,): the matching broadcast.
        std::optional<std::vector<SymExpr>> d = Importer::dims_of(*zp);
        if (!d) return node_error(node, "needs its zero points' lengths");
        Expr shaped = i == 0 ? im.emit(op::reshape(*zp, std::vector<SymExpr>{(*d)[0], SymExpr(1)})) : *zp;
        side = im.emit(op::subtract(side, im.emit(op::astype(shaped, DataType::int32()))));
      } else {
        side = im.emit(op::subtract(side, im.emit(op::astype(*zp, DataType::int32()))));
      }
    }
    sides.push_back(side);
  }
  return std::vector<Value>{tensor_value(im.emit(op::matmul(sides[0], sides[1], DataType::int32())))};
}

}  // namespace

namespace {

// TopK: k from the K input (opset 10 on) or the attribute, known at import; the values and
// their int64 indices, sorted (a `sorted` of 0 allows any order, so sorted is right too).
Outputs convert_topk(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  int64_t k = int_attr(node, "k", -1);
  if (im.opset() >= 10) {
    absl::StatusOr<std::vector<SymExpr>> given = known_input(node, in, 1, "K");
    if (!given.ok()) return given.status();
    const std::optional<int64_t> c = given->size() == 1 ? (*given)[0].as_const() : std::nullopt;
    if (!c) return node_error(node, "its K is not a constant (a k known only at run time makes a data-dependent shape)");
    k = *c;
  }
  Expr both = im.emit(op::topk((*x)[0], k, int_attr(node, "axis", -1), int_attr(node, "largest", 1) != 0));
  return std::vector<Value>{tensor_value(im.emit(make_tuple_get_item(both, 0))),
                            tensor_value(im.emit(make_tuple_get_item(both, 1)))};
}

}  // namespace

void add_nn_converters(const AddConverter& add) {
  add("TopK", convert_topk);
  add("Conv", convert_conv);
  add("MaxPool", pool(true));
  add("AveragePool", pool(false));
  add("GlobalAveragePool", global_pool(false));
  add("GlobalMaxPool", global_pool(true));
  add("BatchNormalization", convert_batch_norm);
  add("LayerNormalization", convert_layer_norm);
  add("ReduceSum", reduction(op::sum, true));
  add("ReduceMean", reduction(op::mean, false));
  add("ReduceMax", reduction(op::max, false));
  add("ReduceMin", reduction(op::min, false));
  add("ReduceProd", reduction(op::prod, false));
  add("ArgMax", arg_reduction(op::argmax));
  add("ArgMin", arg_reduction(op::argmin));
  add("CumSum", convert_cumsum);
  add("Clip", convert_clip);
  add("HardSigmoid", hard_sigmoid(false));
  add("HardSwish", hard_sigmoid(true));
  add("QuantizeLinear", convert_quantize_linear);
  add("DequantizeLinear", convert_dequantize_linear);
  add("DynamicQuantizeLinear", convert_dynamic_quantize_linear);
  add("MatMulInteger", convert_matmul_integer);
  add("InstanceNormalization", convert_instance_norm);
  add("ConvTranspose", convert_conv_transpose);
}

}  // namespace relax::frontend::onnx_detail
