// resize(x, shape): x resampled to `shape` (same rank) by nearest, linear or cubic
// interpolation, with ONNX Resize's coordinate transformation modes (opsets 10-17).
//
// Along each resized axis the output index o maps to a coordinate in x, computed in float32
// (as ONNX Runtime does), where s is the axis' scale (`scale_num[a] / scale_den[a]` when given,
// exactly the float scale a model states, else out / in) and L the dims:
//   half_pixel          (o + 0.5) / s - 0.5
//   pytorch_half_pixel  L_out > 1 ? (o + 0.5) / s - 0.5 : 0
//   align_corners       L_out == 1 ? 0 : o * (L_in - 1) / (L_out - 1)
//   asymmetric          o / s
//   tf_half_pixel_for_nn  (o + 0.5) / s
// An axis whose dims are provably equal and whose scale is 1 (or not given) is not resized: the
// coordinate is o. Then
//   nearest: the coordinate rounded by `nearest_mode` (round_prefer_floor: halves down,
//     round_prefer_ceil: halves up, floor, ceil, simple: ceil when the axis shrinks, else
//     truncated), clamped to [0, L_in - 1];
//   linear: the coordinate clamped to [0, L_in - 1], the two neighbours weighted 1 - f and f;
//   cubic: the four neighbours floor(c) - 1 .. floor(c) + 2 (clamped to the edge) weighted by
//     Keys' cubic convolution with coefficient `cubic_coeff_a`; with `exclude_outside` the
//     weights of neighbours outside x are 0 and the others renormalised.
// Several resized axes combine as products of their weights (bilinear, trilinear, bicubic).
// The kernel is one injective block over the result; a whole scale read by floor in asymmetric
// coordinates (Upsample, PaddleOCR's feature pyramid) indexes in integers, o / k.
#include <cmath>

#include "ir/op/deduce_rules.h"
#include "ir/op/manipulate_util.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/manipulate.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

// op::ResizeOptions as the call's attributes.
struct ResizeAttrs : op::ResizeOptions {
  template <typename V>
  void fields(V& v) {
    v("mode", mode, {"nearest", "linear", "cubic"});
    v("coordinate_transformation_mode", coordinate_transformation_mode,
      {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"});
    v("nearest_mode", nearest_mode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"});
    v("cubic_coeff_a", cubic_coeff_a);
    v("exclude_outside", exclude_outside);
    v("scale_num", scale_num);
    v("scale_den", scale_den);
  }
};

absl::Status check_scales(const std::string& op, const ResizeAttrs& attrs, int ndim) {
  if (attrs.scale_num.size() != attrs.scale_den.size()) {
    return op_error(op, "scale_num has " + std::to_string(attrs.scale_num.size()) + " values and scale_den " +
                            std::to_string(attrs.scale_den.size()) + ", expected as many");
  }
  if (!attrs.scale_num.empty() && static_cast<int>(attrs.scale_num.size()) != ndim) {
    return op_error(op, "scale_num has " + std::to_string(attrs.scale_num.size()) + " values, expected x's rank " +
                            std::to_string(ndim));
  }
  for (size_t a = 0; a < attrs.scale_num.size(); ++a) {
    if (attrs.scale_num[a] <= 0 || attrs.scale_den[a] <= 0) {
      return op_error(op, "the scale of axis " + std::to_string(a) + " is " + std::to_string(attrs.scale_num[a]) + "/" +
                              std::to_string(attrs.scale_den[a]) + ", expected a positive ratio");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<StructInfo> deduce_resize(const CallNode& call, const ResizeAttrs& attrs, DeduceContext& ctx) {
  const std::string op = "resize";
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const auto& shape = *call.args[1].struct_info().as<ShapeStructInfoNode>();
  if (attrs.mode != "nearest" && x.dtype && !x.dtype->is_float()) {
    return op_error(op, attrs.mode + " interpolation needs a float x, got " + call.args[0].struct_info().to_string());
  }
  if (x.ndim != kUnknownNDim && shape.ndim != kUnknownNDim && x.ndim != shape.ndim) {
    return op_error(op, "shape has " + std::to_string(shape.ndim) + " dims, expected x's rank " + std::to_string(x.ndim) +
                            " (x " + call.args[0].struct_info().to_string() + ")");
  }
  const int ndim = x.ndim != kUnknownNDim ? x.ndim : shape.ndim;
  if (ndim != kUnknownNDim) {
    if (absl::Status s = check_scales(op, attrs, ndim); !s.ok()) return s;
  }
  if (!shape.values) return tensor_sinfo_rank(ndim, x.dtype, x.device);
  if (absl::Status s = check_defined(op, "shape " + dims_string(*shape.values), *shape.values, ctx); !s.ok()) return s;
  return tensor_sinfo(*shape.values, x.dtype, x.device);
}

// One resized axis of the kernel: the taps (indices into x along the axis) and their weights.
struct Taps {
  std::vector<SymExpr> index;
  std::vector<SymExpr> weight;  // empty: one tap of weight 1 (nearest)
};

SymExpr f32(double v) { return SymExpr::float_imm(v, DataType::float32()); }
SymExpr to_f32(const SymExpr& v) { return cast(DataType::float32(), v); }

Taps axis_taps(const ResizeAttrs& attrs, size_t axis, const SymExpr& o, const SymExpr& in_len, const SymExpr& out_len) {
  if (attrs.mode == "nearest" && attrs.coordinate_transformation_mode == "asymmetric" &&
      (attrs.nearest_mode == "floor" || attrs.nearest_mode == "simple") && !attrs.scale_num.empty() &&
      attrs.scale_den[axis] == 1) {
    // A whole scale k read by floor: each element repeated k times, in integers.
    Taps taps;
    taps.index.push_back(min(floordiv(o, SymExpr(attrs.scale_num[axis])), in_len - 1));
    return taps;
  }
  const SymExpr scale = attrs.scale_num.empty()
                            ? to_f32(out_len) / to_f32(in_len)
                            : f32(static_cast<double>(static_cast<float>(attrs.scale_num[axis]) /
                                                      static_cast<float>(attrs.scale_den[axis])));
  const SymExpr of = to_f32(o);
  const std::string& ct = attrs.coordinate_transformation_mode;
  SymExpr c;
  if (ct == "half_pixel") {
    c = (of + f32(0.5)) / scale - f32(0.5);
  } else if (ct == "pytorch_half_pixel") {
    c = select(out_len > SymExpr(1), (of + f32(0.5)) / scale - f32(0.5), f32(0));
  } else if (ct == "align_corners") {
    c = select(out_len == SymExpr(1), f32(0), of * to_f32(in_len - 1) / to_f32(max(out_len - 1, SymExpr(1))));
  } else if (ct == "asymmetric") {
    c = of / scale;
  } else {  // tf_half_pixel_for_nn
    c = (of + f32(0.5)) / scale;
  }
  const SymExpr last = in_len - 1;
  auto clamp = [&](const SymExpr& i) { return min(max(i, SymExpr(0)), last); };
  auto as_index = [](const SymExpr& v) { return cast(DataType::int64(), v); };
  Taps taps;
  if (attrs.mode == "nearest") {
    const std::string& nm = attrs.nearest_mode;
    SymExpr r;
    if (nm == "round_prefer_floor") r = ceil(c - f32(0.5));
    else if (nm == "round_prefer_ceil") r = floor(c + f32(0.5));
    else if (nm == "floor") r = floor(c);
    else if (nm == "ceil") r = ceil(c);
    else r = select(scale < f32(1), ceil(c), trunc(c));  // simple
    taps.index.push_back(clamp(as_index(r)));
  } else if (attrs.mode == "linear") {
    const SymExpr cc = min(max(c, f32(0)), to_f32(last));
    const SymExpr lo = floor(cc);
    const SymExpr f = cc - lo;
    const SymExpr i0 = as_index(lo);
    taps.index = {i0, min(i0 + 1, last)};
    taps.weight = {f32(1) - f, f};
  } else {  // cubic
    const SymExpr lo = floor(c);
    const SymExpr s = c - lo;
    const SymExpr i0 = as_index(lo);
    const SymExpr a = f32(attrs.cubic_coeff_a);
    auto far = [&](const SymExpr& t) { return ((a * t - f32(5) * a) * t + f32(8) * a) * t - f32(4) * a; };  // 1 <= t < 2
    auto near = [&](const SymExpr& t) { return ((a + f32(2)) * t - (a + f32(3))) * t * t + f32(1); };     // 0 <= t < 1
    std::vector<SymExpr> w = {far(s + f32(1)), near(s), near(f32(1) - s), far(f32(2) - s)};
    std::vector<SymExpr> raw;
    for (int k = 0; k < 4; ++k) raw.push_back(i0 + (k - 1));
    if (attrs.exclude_outside) {
      SymExpr total = f32(0);
      for (int k = 0; k < 4; ++k) {
        w[k] = select(raw[k] >= SymExpr(0) && raw[k] <= last, w[k], f32(0));
        total = total + w[k];
      }
      for (int k = 0; k < 4; ++k) w[k] = w[k] / total;
    }
    for (int k = 0; k < 4; ++k) taps.index.push_back(clamp(raw[k]));
    taps.weight = w;
  }
  return taps;
}

absl::StatusOr<Lowering> legalize_resize(const CallNode& call, const ResizeAttrs& attrs, Analyzer& analyzer) {
  const std::string op = "resize";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  if (absl::Status s = check_scales(op, attrs, (*x)->ndim); !s.ok()) return s;
  const std::vector<SymExpr>& in_dims = *(*x)->shape;
  const std::vector<SymExpr>& out_dims = *(*out)->shape;
  std::vector<bool> resized(in_dims.size());
  size_t count = 0;
  for (size_t a = 0; a < in_dims.size(); ++a) {
    const bool unit_scale = attrs.scale_num.empty() || attrs.scale_num[a] == attrs.scale_den[a];
    resized[a] = !(unit_scale && analyzer.prove(in_dims[a] == out_dims[a]));
    count += resized[a] ? 1 : 0;
  }
  const size_t per_axis = attrs.mode == "nearest" ? 1 : attrs.mode == "linear" ? 2 : 4;
  if (count > 3) {
    return op_error(op, std::to_string(count) + " axes resized, expected at most 3 (x " +
                            call.args[0].struct_info().to_string() + ", result " + dims_string(out_dims) + ")");
  }
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    const std::vector<SymExpr>& in_shape = in.shape(0);
    const std::vector<SymExpr>& out_shape = in.out_shape();
    std::vector<Taps> taps(i.size());
    size_t combos = 1;
    for (size_t a = 0; a < i.size(); ++a) {
      if (!resized[a]) continue;
      taps[a] = axis_taps(attrs, a, i[a], in_shape[a], out_shape[a]);
      combos *= per_axis;
    }
    SymExpr total;
    for (size_t combo = 0; combo < combos; ++combo) {
      std::vector<SymExpr> index = i;
      SymExpr weight;
      size_t rest = combo;
      for (size_t a = 0; a < i.size(); ++a) {
        if (!resized[a]) continue;
        const size_t k = rest % per_axis;
        rest /= per_axis;
        index[a] = taps[a].index[k];
        if (!taps[a].weight.empty()) weight = weight.defined() ? weight * taps[a].weight[k] : taps[a].weight[k];
      }
      SymExpr value = in.load(0, std::move(index));
      if (weight.defined()) value = to_f32(value) * weight;
      total = total.defined() ? total + value : value;
    }
    return total;
  });
}

}  // namespace

void register_manipulate_resize_ops(OpTable& table) {
  table.def<ResizeAttrs>("resize", "x resampled to `shape` (nearest, linear or cubic; ONNX Resize's coordinate modes)")
      .arg("x", ArgKind::kTensor)
      .arg("shape", ArgKind::kShape)
      .deduce(deduce_resize)
      .legalize(legalize_resize);
}

}  // namespace detail

namespace op {

Expr resize(Expr x, Expr shape, ResizeOptions options) {
  detail::ResizeAttrs attrs;
  static_cast<ResizeOptions&>(attrs) = std::move(options);
  return make_call(make_op_or_die("resize"), {std::move(x), std::move(shape)}, detail::encode_attrs(attrs));
}

}  // namespace op
}  // namespace relax
