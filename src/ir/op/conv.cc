// Convolutions: conv1d, conv2d (data NCW/NCHW, weight OIW/OIHW) and
// conv1d_transpose (data NCW, weight IOW).
//
// Attributes: `strides`, `dilation` (one value for every spatial dim or one per
// dim, >= 1), `padding` (one value for every spatial dim or one per dim, on both
// sides; conv1d and conv1d_transpose also take [before, after]), `groups`
// (>= 1), `data_layout` / `kernel_layout` (only NCW/NCHW and OIW/OIHW/IOW, so
// that text written for other layouts is refused rather than misread);
// conv1d_transpose adds `output_padding` (< stride or < dilation per dim).
//
// Deduction (symbolic; rank-only or unknown operands give a rank-only result):
//   conv:      out = (N, O, floordiv(H + pb + pa - d * (k - 1) - 1, s) + 1, ...)
//              with C (data dim 1) provably equal to I * groups (weight dim 1)
//              and O (weight dim 0) a provable multiple of groups;
//   transpose: out = (N, O/g * groups, (W - 1) * s - pb - pa + d * (k - 1) + op + 1)
//              with C provably equal to the weight's dim 0, a multiple of groups.
// An output dim provably < 1 is an error.
//
// An optional third argument `bias` (O,) is added per output channel: a rank-1
// tensor whose dim is provably the result's dim 1, dtype and device joining
// the data's.
//
// Kernels: one block, spatial over the output and reduction over the input
// channels of a group and the kernel taps; out-of-range taps read 0 (window.h).
// With a bias, each output element's sum starts from bias[o].
//   conv2d:   out[n, o, y, x] += data[n, g * I + c, y * s - p + ky * d, x * s - p + kx * d]
//                                * weight[o, c, ky, kx],  g = o / (O / groups)
//   transpose: out[n, o, j] += data[n, g * Ig + c, (j + pb - k * d) / s] * weight[g * Ig + c, o % Og, k]
//              where (j + pb - k * d) is a non-negative multiple of s below W * s.
// float16/bfloat16 accumulate in a float32 workspace, stored by a second block.
#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "ir/op/window.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/conv.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

constexpr const char* data_layout_of(int dims) { return dims == 1 ? "NCW" : "NCHW"; }
constexpr const char* kernel_layout_of(int dims, bool transpose) {
  if (transpose) return dims == 1 ? "IOW" : "IOHW";
  return dims == 1 ? "OIW" : "OIHW";
}

template <int kDims, bool kTranspose>
struct ConvAttrs {
  std::vector<int64_t> strides = std::vector<int64_t>(kDims, 1);
  std::vector<int64_t> padding = std::vector<int64_t>(kDims, 0);
  std::vector<int64_t> output_padding = std::vector<int64_t>(kDims, 0);
  std::vector<int64_t> dilation = std::vector<int64_t>(kDims, 1);
  int64_t groups = 1;
  std::string data_layout = data_layout_of(kDims);
  std::string kernel_layout = kernel_layout_of(kDims, kTranspose);
  template <typename V>
  void fields(V& v) {
    v("strides", strides);
    v("padding", padding);
    if constexpr (kTranspose) v("output_padding", output_padding);
    v("dilation", dilation);
    v("groups", groups);
    v("data_layout", data_layout, {data_layout_of(kDims)});
    v("kernel_layout", kernel_layout, {kernel_layout_of(kDims, kTranspose)});
  }
};
using Conv1dAttrs = ConvAttrs<1, false>;
using Conv2dAttrs = ConvAttrs<2, false>;
using Conv1dTransposeAttrs = ConvAttrs<1, true>;
using Conv2dTransposeAttrs = ConvAttrs<2, true>;

// The attributes normalised to one value per spatial dim.
struct ConvParams {
  std::vector<int64_t> strides, dilation, output_padding;
  WindowPadding padding;
  int64_t groups = 1;
};

template <int kDims, bool kTranspose>
absl::StatusOr<ConvParams> conv_params(const std::string& op,
                                       const ConvAttrs<kDims, kTranspose>& attrs) {
  ConvParams p;
  absl::StatusOr<std::vector<int64_t>> strides = per_spatial_dim(op, "strides", attrs.strides, kDims, 1);
  if (!strides.ok()) return strides.status();
  absl::StatusOr<std::vector<int64_t>> dilation =
      per_spatial_dim(op, "dilation", attrs.dilation, kDims, 1);
  if (!dilation.ok()) return dilation.status();
  absl::StatusOr<WindowPadding> padding = window_padding(op, attrs.padding, kDims, kDims == 1);
  if (!padding.ok()) return padding.status();
  if (attrs.groups < 1) {
    return op_error(op, "attribute `groups` must be >= 1, got " + std::to_string(attrs.groups));
  }
  p.strides = *strides;
  p.dilation = *dilation;
  p.padding = *padding;
  p.groups = attrs.groups;
  if constexpr (kTranspose) {
    absl::StatusOr<std::vector<int64_t>> out_pad =
        per_spatial_dim(op, "output_padding", attrs.output_padding, kDims, 0);
    if (!out_pad.ok()) return out_pad.status();
    for (size_t d = 0; d < kDims; ++d) {
      if ((*out_pad)[d] >= p.strides[d] && (*out_pad)[d] >= p.dilation[d]) {
        return op_error(op, "attribute `output_padding` " + std::to_string((*out_pad)[d]) +
                                " must be smaller than the stride " +
                                std::to_string(p.strides[d]) + " or the dilation " +
                                std::to_string(p.dilation[d]));
      }
    }
    p.output_padding = *out_pad;
  }
  return p;
}

// Rank `ndim` for argument `index`, or an error naming its layout.
absl::Status check_rank(const CallNode& call, size_t index, const std::string& op,
                        const std::string& role, int ndim, const char* layout) {
  const auto& t = *call.args[index].struct_info().as<TensorStructInfoNode>();
  if (t.ndim == kUnknownNDim || t.ndim == ndim) return absl::OkStatus();
  return op_error(op, arg_label(index, role) + ": expected a tensor of rank " + std::to_string(ndim) +
                          " (" + layout + "), got " + call.args[index].struct_info().to_string());
}

// OK when `a` and `b` are provably equal; else the error `what`.
absl::Status check_equal(const std::string& op, const SymExpr& a, const SymExpr& b,
                         Analyzer& analyzer, const std::string& what) {
  if (structural_equal(a, b) || analyzer.prove_equal(a, b)) return absl::OkStatus();
  return op_error(op, what);
}

// OK when `dim` is a provable multiple of `groups`.
absl::Status check_multiple(const std::string& op, const SymExpr& dim, int64_t groups,
                            Analyzer& analyzer, const std::string& what) {
  if (groups == 1 || analyzer.prove(floormod(dim, SymExpr(groups)) == 0)) return absl::OkStatus();
  return op_error(op, what + " " + quoted(dim) + " is not a multiple of groups " +
                          std::to_string(groups));
}

template <int kDims, bool kTranspose>
absl::StatusOr<StructInfo> deduce_conv(const std::string& op, const CallNode& call,
                                       const ConvAttrs<kDims, kTranspose>& attrs,
                                       DeduceContext& ctx) {
  absl::StatusOr<ConvParams> p = conv_params(op, attrs);
  if (!p.ok()) return p.status();
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  const auto& w = *call.args[1].struct_info().as<TensorStructInfoNode>();
  absl::StatusOr<std::optional<DataType>> dtype = join_dtypes(op, x, w);
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<Device> device = join_devices(op, x, w);
  if (!device.ok()) return device.status();
  constexpr int kRank = kDims + 2;
  if (absl::Status s = check_rank(call, 0, op, "data", kRank, data_layout_of(kDims)); !s.ok()) return s;
  if (absl::Status s = check_rank(call, 1, op, "weight", kRank, kernel_layout_of(kDims, kTranspose));
      !s.ok()) {
    return s;
  }
  const TensorStructInfoNode* bias = nullptr;
  if (call.args.size() > 2) {
    bias = call.args[2].struct_info().as<TensorStructInfoNode>();
    if (absl::Status s = check_rank(call, 2, op, "bias", 1, "O"); !s.ok()) return s;
    absl::StatusOr<std::optional<DataType>> with_bias = join_dtypes(op, x, *bias);
    if (!with_bias.ok()) return with_bias.status();
    if (!*dtype) dtype = with_bias;
    if (absl::StatusOr<Device> d = join_devices(op, x, *bias); !d.ok()) return d.status();
  }
  if (!x.shape || !w.shape) return tensor_sinfo_rank(kRank, *dtype, *device);

  Analyzer& an = ctx.analyzer;
  const std::vector<SymExpr>& xs = *x.shape;
  const std::vector<SymExpr>& ws = *w.shape;
  const std::string g = std::to_string(p->groups);
  std::vector<SymExpr> out = {xs[0]};
  if constexpr (kTranspose) {
    if (absl::Status s = check_equal(op, xs[1], ws[0], an,
                                     "in channels differ: data dim 1 is " + quoted(xs[1]) +
                                         ", weight dim 0 is " + quoted(ws[0]));
        !s.ok()) {
      return s;
    }
    if (absl::Status s = check_multiple(op, xs[1], p->groups, an, "in channels (data dim 1)"); !s.ok()) {
      return s;
    }
    out.push_back(an.simplify(ws[1] * SymExpr(p->groups)));
  } else {
    const SymExpr expected = an.simplify(ws[1] * SymExpr(p->groups));
    if (absl::Status s = check_equal(op, xs[1], expected, an,
                                     "in channels differ: data dim 1 is " + quoted(xs[1]) +
                                         ", weight dim 1 is " + quoted(ws[1]) + " times groups " +
                                         g + " = " + quoted(expected));
        !s.ok()) {
      return s;
    }
    if (absl::Status s = check_multiple(op, ws[0], p->groups, an, "out channels (weight dim 0)");
        !s.ok()) {
      return s;
    }
    out.push_back(ws[0]);
  }
  if (bias != nullptr && bias->shape && !structural_equal((*bias->shape)[0], out[1]) &&
      !an.prove_equal((*bias->shape)[0], out[1])) {
    return op_error(op, arg_label(2, "bias") + ": expected a tensor of shape (" +
                            out[1].to_string() + ",) (one value per out channel), got " +
                            call.args[2].struct_info().to_string());
  }
  for (size_t d = 0; d < kDims; ++d) {
    const SymExpr& in = xs[2 + d];
    const SymExpr& k = ws[2 + d];
    SymExpr o;
    if constexpr (kTranspose) {
      o = an.simplify((in - 1) * SymExpr(p->strides[d]) -
                      SymExpr(p->padding.before[d] + p->padding.after[d]) +
                      SymExpr(p->dilation[d]) * (k - 1) + SymExpr(p->output_padding[d] + 1));
    } else {
      o = window_out_dim(in, k, p->strides[d], p->dilation[d], p->padding.before[d],
                         p->padding.after[d], an);
    }
    if (absl::Status s = check_window_out_dim(op, 2 + d, o, in, k, an); !s.ok()) return s;
    out.push_back(o);
  }
  return tensor_sinfo(std::move(out), *dtype, *device);
}



template <int kDims, bool kTranspose>
absl::StatusOr<Lowering> legalize_conv(const std::string& op, const CallNode& call,
                                       const ConvAttrs<kDims, kTranspose>& attrs, Analyzer& analyzer) {
  absl::StatusOr<ConvParams> p = conv_params(op, attrs);
  if (!p.ok()) return p.status();
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "data");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> w = known_tensor(call, 1, op, "weight");
  if (!w.ok()) return w.status();
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op);
  if (!out_or.ok()) return out_or.status();
  const TensorStructInfoNode& out = **out_or;
  const DataType out_dtype = *out.dtype;
  const DataType acc_dtype = compute_dtype(out_dtype);
  const int64_t groups = p->groups;

  // The data's channel dim is written as the weight's (times groups for a
  // convolution), so that the kernel's entry check rejects data whose channels
  // differ instead of reading past them.
  std::vector<SymExpr> x_dims = *(*x)->shape;
  const std::vector<SymExpr>& w_dims = *(*w)->shape;
  x_dims[1] = kTranspose ? w_dims[0] : analyzer.simplify(w_dims[1] * SymExpr(groups));
  std::vector<SymExpr> o_dims = *out.shape;
  o_dims[0] = x_dims[0];
  const bool has_bias = call.args.size() > 2;
  std::vector<std::vector<SymExpr>> buffer_dims = {x_dims, w_dims, o_dims};
  if (has_bias) {
    absl::StatusOr<const TensorStructInfoNode*> b = known_tensor(call, 2, op, "bias");
    if (!b.ok()) return b.status();
    buffer_dims.push_back({o_dims[1]});
  }
  KernelBuilder kb(op, buffer_dims);
  Buffer xb = kb.input("data", call.args[0], x_dims);
  Buffer wb = kb.input("weight", call.args[1]);
  // The bias is written with the result's channel dim: the entry check rejects another length.
  Buffer bb = has_bias ? kb.input("bias", call.args[2], {o_dims[1]}) : Buffer();
  Buffer ob = kb.output("out", out, o_dims);
  PrimFuncBuilder& pb = kb.body();

  // Reduction: the input channels of one group, then the taps.
  const SymExpr in_per_group =
      kTranspose ? analyzer.simplify(floordiv(wb.shape()[0], SymExpr(groups))) : wb.shape()[1];
  const SymExpr out_per_group =
      kTranspose ? wb.shape()[1] : analyzer.simplify(floordiv(wb.shape()[0], SymExpr(groups)));
  std::vector<SymExpr> reduce_dims = {in_per_group};
  for (size_t d = 0; d < kDims; ++d) reduce_dims.push_back(wb.shape()[2 + d]);

  const bool use_workspace = acc_dtype != out_dtype;
  Buffer acc = use_workspace ? pb.allocate("acc", ob.shape(), acc_dtype, BufferScope::kWorkspace) : ob;
  const SymExpr zero = zero_of(acc_dtype);
  const SymExpr data_zero = zero_of(*(*x)->dtype);
  loop_block(
      pb, op, ob.shape(), reduce_dims,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        // The sum starts from the channel's bias.
        pb.store(acc, as_indices(s),
                 has_bias ? as_dtype(buffer_load(bb, {SymExpr(s[1])}), acc_dtype) : zero);
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        const SymExpr o = s[1];
        const SymExpr group = groups == 1 ? SymExpr(0) : floordiv(o, out_per_group);
        const SymExpr channel = groups == 1 ? SymExpr(r[0]) : group * in_per_group + r[0];
        std::vector<SymExpr> x_idx = {s[0], channel};
        std::vector<bool> checked = {false, false};
        std::vector<SymExpr> w_idx;
        SymExpr extra;
        for (size_t d = 0; d < kDims; ++d) {
          const SymExpr tap = r[1 + d] * SymExpr(p->dilation[d]);
          if constexpr (kTranspose) {
            // The data position i with i * s - pb + tap == j.
            const SymExpr t = s[2 + d] + SymExpr(p->padding.before[d]) - tap;
            const SymExpr stride(p->strides[d]);
            x_idx.push_back(p->strides[d] == 1 ? t : floordiv(t, stride));
            checked.push_back(true);
            if (p->strides[d] != 1) {
              SymExpr divisible = floormod(t, stride) == 0;
              extra = extra.defined() ? (extra && divisible) : divisible;
            }
          } else {
            x_idx.push_back(s[2 + d] * SymExpr(p->strides[d]) - SymExpr(p->padding.before[d]) + tap);
            // Without padding the window stays inside the data (floor mode).
            checked.push_back(p->padding.before[d] != 0 || p->padding.after[d] != 0);
          }
        }
        if constexpr (kTranspose) {
          w_idx = {channel, groups == 1 ? o : floormod(o, out_per_group)};
        } else {
          w_idx = {o, r[0]};
        }
        for (size_t d = 0; d < kDims; ++d) w_idx.push_back(r[1 + d]);
        const SymExpr xv = window_load(xb, x_idx, checked, data_zero, extra);
        const SymExpr wv = buffer_load(wb, w_idx);
        pb.store(acc, as_indices(s),
                 buffer_load(acc, as_indices(s)) + as_dtype(xv, acc_dtype) * as_dtype(wv, acc_dtype));
      });
  if (use_workspace) {
    loop_block(pb, op + "_out", ob.shape(), {}, nullptr,
               [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
                 pb.store(ob, as_indices(s), cast(out_dtype, buffer_load(acc, as_indices(s))));
               });
  }
  return kb.finish();
}

template <int kDims, bool kTranspose>
void def_conv(OpTable& table, const char* name, const char* summary) {
  using A = ConvAttrs<kDims, kTranspose>;
  const std::string op = name;
  table.def<A>(name, summary)
      .arg("data", ArgKind::kTensor, DtypeClass::kNumeric)
      .arg("weight", ArgKind::kTensor, DtypeClass::kNumeric)
      .optional_arg("bias", ArgKind::kTensor, DtypeClass::kNumeric)
      .deduce([op](const CallNode& call, const A& attrs, DeduceContext& ctx) {
        return deduce_conv<kDims, kTranspose>(op, call, attrs, ctx);
      })
      .legalize([op](const CallNode& call, const A& attrs, Analyzer& analyzer) {
        return legalize_conv<kDims, kTranspose>(op, call, attrs, analyzer);
      });
}

}  // namespace

void register_conv_ops(OpTable& table) {
  def_conv<1, false>(table, "conv1d", "1-D convolution, data NCW, weight OIW");
  def_conv<2, false>(table, "conv2d", "2-D convolution, data NCHW, weight OIHW");
  def_conv<1, true>(table, "conv1d_transpose",
                    "1-D transposed convolution (gradient of conv1d), data NCW, weight IOW");
  def_conv<2, true>(table, "conv2d_transpose",
                    "2-D transposed convolution (gradient of conv2d), data NCHW, weight IOHW");
}

}  // namespace detail

namespace op {
namespace {

std::vector<Expr> conv_args(Expr data, Expr weight, std::optional<Expr> bias) {
  std::vector<Expr> args = {std::move(data), std::move(weight)};
  if (bias) args.push_back(std::move(*bias));
  return args;
}

template <typename A>
Expr conv_call(const char* name, std::vector<Expr> args, std::vector<int64_t> strides,
               std::vector<int64_t> padding, std::optional<std::vector<int64_t>> output_padding,
               std::vector<int64_t> dilation, int64_t groups) {
  A attrs;
  attrs.strides = std::move(strides);
  attrs.padding = std::move(padding);
  if (output_padding) attrs.output_padding = std::move(*output_padding);
  attrs.dilation = std::move(dilation);
  attrs.groups = groups;
  return make_call(make_op_or_die(name), std::move(args), detail::encode_attrs(attrs));
}

}  // namespace

Expr conv1d(Expr data, Expr weight, std::vector<int64_t> strides, std::vector<int64_t> padding,
            std::vector<int64_t> dilation, int64_t groups) {
  return conv_call<detail::Conv1dAttrs>("conv1d", conv_args(std::move(data), std::move(weight), {}),
                                        std::move(strides), std::move(padding), std::nullopt,
                                        std::move(dilation), groups);
}

Expr conv1d(Expr data, Expr weight, Expr bias, std::vector<int64_t> strides,
            std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
  return conv_call<detail::Conv1dAttrs>(
      "conv1d", conv_args(std::move(data), std::move(weight), std::move(bias)), std::move(strides),
      std::move(padding), std::nullopt, std::move(dilation), groups);
}

Expr conv2d(Expr data, Expr weight, std::vector<int64_t> strides, std::vector<int64_t> padding,
            std::vector<int64_t> dilation, int64_t groups) {
  return conv_call<detail::Conv2dAttrs>("conv2d", conv_args(std::move(data), std::move(weight), {}),
                                        std::move(strides), std::move(padding), std::nullopt,
                                        std::move(dilation), groups);
}

Expr conv2d(Expr data, Expr weight, Expr bias, std::vector<int64_t> strides,
            std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
  return conv_call<detail::Conv2dAttrs>(
      "conv2d", conv_args(std::move(data), std::move(weight), std::move(bias)), std::move(strides),
      std::move(padding), std::nullopt, std::move(dilation), groups);
}

Expr conv1d_transpose(Expr data, Expr weight, std::vector<int64_t> strides,
                      std::vector<int64_t> padding, std::vector<int64_t> output_padding,
                      std::vector<int64_t> dilation, int64_t groups) {
  return conv_call<detail::Conv1dTransposeAttrs>(
      "conv1d_transpose", conv_args(std::move(data), std::move(weight), {}), std::move(strides),
      std::move(padding), std::move(output_padding), std::move(dilation), groups);
}

Expr conv1d_transpose(Expr data, Expr weight, Expr bias, std::vector<int64_t> strides,
                      std::vector<int64_t> padding, std::vector<int64_t> output_padding,
                      std::vector<int64_t> dilation, int64_t groups) {
  return conv_call<detail::Conv1dTransposeAttrs>(
      "conv1d_transpose", conv_args(std::move(data), std::move(weight), std::move(bias)),
      std::move(strides), std::move(padding), std::move(output_padding), std::move(dilation),
      groups);
}

Expr conv2d_transpose(Expr data, Expr weight, std::optional<Expr> bias, std::vector<int64_t> strides,
                      std::vector<int64_t> padding, std::vector<int64_t> output_padding,
                      std::vector<int64_t> dilation, int64_t groups) {
  return conv_call<detail::Conv2dTransposeAttrs>(
      "conv2d_transpose", conv_args(std::move(data), std::move(weight), std::move(bias)), std::move(strides),
      std::move(padding), std::move(output_padding), std::move(dilation), groups);
}

}  // namespace op
}  // namespace relax
