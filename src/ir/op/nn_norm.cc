// Normalisations: layer_norm, rms_norm, group_norm, batch_norm (inference).
//
// Every result has x's shape and dtype. The scale and shift arguments have the
// dims they scale: layer_norm's gamma and beta and rms_norm's weight are x's
// dims at `axes` (in the order of `axes`), group_norm's gamma and beta and
// batch_norm's four vectors are (C,) for x's channel dim (axis 1 for
// group_norm, `axis` for batch_norm). Dims that must agree and do not
// provably are errors naming both; group_norm's channel count must be
// provably divisible by num_groups. Rank-only and unknown inputs skip the
// checks they cannot make and give x's annotation. Normalised dims of 0 (or an
// empty batch) make the result empty, as in PyTorch: there is nothing to
// normalise, and the statistics of nothing (NaN) are never read.
//
// Kernels compute in float32 for float16 and bfloat16 storage. The statistics
// are reductions, each one loop nest around one block with spatial iteration
// variables for the kept dims and reduction ones for the normalised dims,
// accumulating in a workspace buffer; the variance is the mean of squared
// deviations from the mean (two passes, so that large means lose nothing):
//   layer_norm(x: (n, d), axes=[1])
//     block mean        sum[i] += A[i, k]                                   (init 0)
//     block var         sq[i] += (A[i, k] - sum[i] / d)^2                    (init 0)
//     block layer_norm  B[i, j] = (A[i, j] - sum[i] / d) * rsqrt(sq[i] / d + eps)
//                                 * gamma[j] + beta[j]
//   rms_norm: block sum_sq (sq[i] += A[i, k]^2), block rms_norm
//     (B = A * rsqrt(sq[i] / d + eps) * weight[j]).
//   group_norm(x: (N, C, S...), G): the statistics over (N, G) reduce
//     (C / G, S...), reading channel g * (C / G) + c; the output block reads
//     group c / (C / G).
//   batch_norm: one spatial block (x - mean[c]) * rsqrt(var[c] + eps) * gamma[c] + beta[c].
#include "ir/op/deduce_rules.h"
#include "ir/op/nn_common.h"
#include "ir/op/op_util.h"
#include "relax/ir/op/nn.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary
using Vars = std::vector<SymVar>;

struct LayerNormAttrs {
  std::vector<int64_t> axes = {-1};
  double epsilon = 1e-5;
  template <typename V>
  void fields(V& v) {
    v("axes", axes);
    v("epsilon", epsilon);
  }
};

struct GroupNormAttrs {
  int64_t num_groups = 0;
  double epsilon = 1e-5;
  template <typename V>
  void fields(V& v) {
    v.required("num_groups", num_groups);
    v("epsilon", epsilon);
  }
};

struct BatchNormAttrs {
  int64_t axis = 1;
  double epsilon = 1e-5;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
    v("epsilon", epsilon);
  }
};

// x's annotation with the dtype the arguments share.
StructInfo like_x(const CallNode& call, std::optional<DataType> dtype) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (x.shape) return tensor_sinfo(*x.shape, dtype, x.device);
  return tensor_sinfo_rank(x.ndim, dtype, x.device);
}

// `axes` counted from the front, in their order; an error for one out of
// range or given twice.
absl::StatusOr<std::vector<int64_t>> normalized_axes(const std::string& op,
                                                     const std::vector<int64_t>& axes, int ndim,
                                                     const std::string& x_text) {
  if (axes.empty()) return op_error(op, "axes must not be empty");
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    const int64_t i = a < 0 ? a + ndim : a;
    if (i < 0 || i >= ndim) {
      return op_error(op, "axis " + std::to_string(a) + " is out of range for rank " +
                              std::to_string(ndim) + " (x " + x_text + ")");
    }
    for (int64_t seen : out) {
      if (seen == i) return op_error(op, "axis " + std::to_string(i) + " appears twice in axes");
    }
    out.push_back(i);
  }
  return out;
}

// Argument `index` holds one value per channel: rank 1, its dim x's dim `axis`.
absl::Status check_channel_vector(const CallNode& call, DeduceContext& ctx, size_t index,
                                  int64_t axis) {
  if (absl::Status s = require_rank(call, index, 1); !s.ok()) return s;
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const TensorStructInfoNode& v = tensor_of(call, index);
  if (!x.shape || !v.shape) return absl::OkStatus();
  return require_dim(call, ctx, index, 0, (*x.shape)[static_cast<size_t>(axis)],
                     "x dim " + std::to_string(axis));
}

// Arguments `params` (gamma, beta or weight) have x's dims at `axes`.
absl::StatusOr<StructInfo> deduce_axes_norm(const CallNode& call, const LayerNormAttrs& attrs,
                                            DeduceContext& ctx, const std::vector<size_t>& params) {
  const std::string op = nn_op_name(call);
  if (attrs.axes.empty()) return op_error(op, "axes must not be empty");
  std::vector<size_t> all = {0};
  all.insert(all.end(), params.begin(), params.end());
  absl::StatusOr<std::optional<DataType>> dtype = shared_dtype(call, all);
  if (!dtype.ok()) return dtype.status();
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const int rank = static_cast<int>(attrs.axes.size());
  for (size_t p : params) {
    if (absl::Status s = require_rank(call, p, rank); !s.ok()) return s;
  }
  if (x.ndim == kUnknownNDim) return like_x(call, *dtype);
  absl::StatusOr<std::vector<int64_t>> axes =
      normalized_axes(op, attrs.axes, x.ndim, call.args[0].struct_info().to_string());
  if (!axes.ok()) return axes.status();
  if (x.shape) {
    for (size_t p : params) {
      if (!tensor_of(call, p).shape) continue;
      for (size_t i = 0; i < axes->size(); ++i) {
        const auto a = static_cast<size_t>((*axes)[i]);
        if (absl::Status s = require_dim(call, ctx, p, i, (*x.shape)[a], "x dim " + std::to_string(a));
            !s.ok()) {
          return s;
        }
      }
    }
  }
  return like_x(call, *dtype);
}

absl::StatusOr<StructInfo> deduce_group_norm(const CallNode& call, const GroupNormAttrs& attrs,
                                             DeduceContext& ctx) {
  const std::string op = "group_norm";
  absl::StatusOr<std::optional<DataType>> dtype = shared_dtype(call, {0, 1, 2});
  if (!dtype.ok()) return dtype.status();
  if (attrs.num_groups < 1) {
    return op_error(op, "num_groups must be at least 1, got " + std::to_string(attrs.num_groups));
  }
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (x.ndim != kUnknownNDim && x.ndim < 2) {
    return op_error(op, nn_arg_label(call, 0) + ": expected a tensor of rank >= 2 (N, C, ...), got " +
                            call.args[0].struct_info().to_string());
  }
  for (size_t p : {size_t{1}, size_t{2}}) {
    if (x.ndim == kUnknownNDim) {
      if (absl::Status s = require_rank(call, p, 1); !s.ok()) return s;
    } else if (absl::Status s = check_channel_vector(call, ctx, p, 1); !s.ok()) {
      return s;
    }
  }
  if (x.shape) {
    if (absl::Status s = require_divisible(call, ctx, (*x.shape)[1], attrs.num_groups,
                                           "the channel dim (x dim 1) must split into num_groups");
        !s.ok()) {
      return s;
    }
  }
  return like_x(call, *dtype);
}

absl::StatusOr<StructInfo> deduce_batch_norm(const CallNode& call, const BatchNormAttrs& attrs,
                                             DeduceContext& ctx) {
  absl::StatusOr<std::optional<DataType>> dtype = shared_dtype(call, {0, 1, 2, 3, 4});
  if (!dtype.ok()) return dtype.status();
  const TensorStructInfoNode& x = tensor_of(call, 0);
  for (size_t p = 1; p < 5; ++p) {
    if (x.ndim == kUnknownNDim) {
      if (absl::Status s = require_rank(call, p, 1); !s.ok()) return s;
      continue;
    }
    absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, x.ndim);
    if (!axis.ok()) return axis.status();
    if (absl::Status s = check_channel_vector(call, ctx, p, *axis); !s.ok()) return s;
  }
  return like_x(call, *dtype);
}

// ---------------------------------------------------------------------------
// Kernels.

// The checked annotations of a normalisation call: x, its parameter tensors
// (which must be known too) and the result.
struct NormCall {
  const TensorStructInfoNode* x = nullptr;
  const TensorStructInfoNode* out = nullptr;
  DataType dtype;  // storage
  DataType acc;    // arithmetic
};

absl::StatusOr<NormCall> check_norm_call(const CallNode& call, const std::string& op) {
  NormCall nc;
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  nc.x = *x;
  const OpInfo* info = find_op(op);
  for (size_t i = 1; i < call.args.size(); ++i) {
    absl::StatusOr<const TensorStructInfoNode*> p = known_tensor(call, i, op, info->args[i].role);
    if (!p.ok()) return p.status();
  }
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op, DtypeClass::kFloat);
  if (!out.ok()) return out.status();
  nc.out = *out;
  nc.dtype = *nc.out->dtype;
  nc.acc = compute_dtype(nc.dtype);
  return nc;
}

// The graph-level dims of x at `axes`: what a parameter over those axes must have.
std::vector<SymExpr> dims_at(const std::vector<SymExpr>& dims, const std::vector<int64_t>& axes) {
  std::vector<SymExpr> out;
  for (int64_t a : axes) out.push_back(dims[static_cast<size_t>(a)]);
  return out;
}

// Splits x's dims into kept (spatial) and normalised (reduce) ones and maps
// iteration variables back to x's indices.
struct AxisSplit {
  std::vector<bool> reduced;
  std::vector<SymExpr> kept_dims, reduced_dims;

  AxisSplit(const std::vector<SymExpr>& dims, const std::vector<int64_t>& axes)
      : reduced(dims.size(), false) {
    for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
    for (size_t i = 0; i < dims.size(); ++i) (reduced[i] ? reduced_dims : kept_dims).push_back(dims[i]);
  }
  // x's index from the kept and the reduced iteration variables.
  std::vector<SymExpr> index(const Vars& kept, const Vars& red) const {
    std::vector<SymExpr> out;
    size_t k = 0, r = 0;
    for (bool is_reduced : reduced) out.push_back(is_reduced ? red[r++] : kept[k++]);
    return out;
  }
  // The kept part of x's index `v`.
  std::vector<SymExpr> kept_of(const Vars& v) const {
    std::vector<SymExpr> out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!reduced[i]) out.push_back(v[i]);
    }
    return out;
  }
};

// acc[o] = sum over the reduced dims of f(x value, o): one block `name`.
void sum_block(PrimFuncBuilder& pb, const std::string& name, const AxisSplit& split,
               const Buffer& x, const Buffer& acc,
               const std::function<SymExpr(const SymExpr&, const std::vector<SymExpr>&)>& f) {
  loop_block(
      pb, name, split.kept_dims, split.reduced_dims,
      [&](const Vars& o, const Vars&) {
        pb.store(acc, as_indices(o), SymExpr::float_imm(0, acc.dtype()));
      },
      [&](const Vars& o, const Vars& r) {
        SymExpr v = load_as(x, split.index(o, r), acc.dtype());
        pb.store(acc, as_indices(o), buffer_load(acc, as_indices(o)) + f(v, as_indices(o)));
      });
}

absl::StatusOr<Lowering> legalize_axes_norm(const CallNode& call, const LayerNormAttrs& attrs,
                                            bool centred) {
  const std::string op = centred ? "layer_norm" : "rms_norm";
  absl::StatusOr<NormCall> nc = check_norm_call(call, op);
  if (!nc.ok()) return nc.status();
  const std::vector<SymExpr>& x_dims = *nc->x->shape;
  absl::StatusOr<std::vector<int64_t>> axes = normalized_axes(
      op, attrs.axes, static_cast<int>(x_dims.size()), call.args[0].struct_info().to_string());
  if (!axes.ok()) return axes.status();
  const std::vector<SymExpr> param_dims = dims_at(x_dims, *axes);
  std::vector<std::vector<SymExpr>> buffer_dims = {x_dims};
  for (size_t i = 1; i < call.args.size(); ++i) buffer_dims.push_back(param_dims);
  buffer_dims.push_back(x_dims);

  KernelBuilder kb(op, buffer_dims);
  Buffer x = kb.input("A", call.args[0]);
  Buffer gamma = kb.input(centred ? "gamma" : "weight", call.args[1], param_dims);
  Buffer beta;
  if (centred) beta = kb.input("beta", call.args[2], param_dims);
  Buffer out = kb.output("B", *nc->out, x_dims);
  PrimFuncBuilder& pb = kb.body();
  const DataType acc = nc->acc;
  const AxisSplit split(x.shape(), *axes);
  const SymExpr count = cast(acc, dims_product(split.reduced_dims));
  const SymExpr eps = SymExpr::float_imm(attrs.epsilon, acc);

  Buffer sum;
  if (centred) {
    sum = pb.allocate("sum", split.kept_dims, acc, BufferScope::kWorkspace);
    sum_block(pb, "mean", split, x, sum,
              [](const SymExpr& v, const std::vector<SymExpr>&) { return v; });
  }
  Buffer sq = pb.allocate("sq", split.kept_dims, acc, BufferScope::kWorkspace);
  sum_block(pb, centred ? "var" : "sum_sq", split, x, sq,
            [&](const SymExpr& v, const std::vector<SymExpr>& o) {
              SymExpr d = centred ? v - buffer_load(sum, o) / count : v;
              return d * d;
            });
  loop_block(pb, op, x.shape(), {}, nullptr, [&](const Vars& v, const Vars&) {
    const std::vector<SymExpr> o = split.kept_of(v);
    std::vector<SymExpr> p;
    for (int64_t a : *axes) p.push_back(v[static_cast<size_t>(a)]);
    SymExpr value = load_as(x, as_indices(v), acc);
    if (centred) value = value - buffer_load(sum, o) / count;
    value = value * rsqrt(buffer_load(sq, o) / count + eps) * load_as(gamma, p, acc);
    if (centred) value = value + load_as(beta, p, acc);
    pb.store(out, as_indices(v), as_dtype(value, nc->dtype));
  });
  return kb.finish();
}

absl::StatusOr<Lowering> legalize_group_norm(const CallNode& call, const GroupNormAttrs& attrs,
                                             Analyzer&) {
  const std::string op = "group_norm";
  absl::StatusOr<NormCall> nc = check_norm_call(call, op);
  if (!nc.ok()) return nc.status();
  const std::vector<SymExpr>& x_dims = *nc->x->shape;
  if (x_dims.size() < 2 || attrs.num_groups < 1) {
    return error(op, "expected x of rank >= 2 and num_groups >= 1, got " +
                         call.args[0].struct_info().to_string());
  }
  const std::vector<SymExpr> channel = {x_dims[1]};
  KernelBuilder kb(op, {x_dims, channel, channel, x_dims});
  Buffer x = kb.input("A", call.args[0]);
  Buffer gamma = kb.input("gamma", call.args[1], channel);
  Buffer beta = kb.input("beta", call.args[2], channel);
  Buffer out = kb.output("B", *nc->out, x_dims);
  PrimFuncBuilder& pb = kb.body();
  const DataType acc = nc->acc;
  const SymExpr groups(attrs.num_groups);
  const SymExpr per_group = floordiv(x.shape()[1], groups);
  // Statistics over (N, G), reducing (C / G, spatial dims...).
  const std::vector<SymExpr> kept = {x.shape()[0], groups};
  std::vector<SymExpr> reduced = {per_group};
  for (size_t i = 2; i < x.shape().size(); ++i) reduced.push_back(x.shape()[i]);
  const SymExpr count = cast(acc, dims_product(reduced));
  const SymExpr eps = SymExpr::float_imm(attrs.epsilon, acc);
  auto x_index = [&](const Vars& o, const Vars& r) {
    std::vector<SymExpr> index = {o[0], o[1] * per_group + r[0]};
    for (size_t i = 1; i < r.size(); ++i) index.push_back(r[i]);
    return index;
  };
  Buffer sum = pb.allocate("sum", kept, acc, BufferScope::kWorkspace);
  Buffer sq = pb.allocate("sq", kept, acc, BufferScope::kWorkspace);
  for (int pass = 0; pass < 2; ++pass) {
    const Buffer& target = pass == 0 ? sum : sq;
    loop_block(
        pb, pass == 0 ? "mean" : "var", kept, reduced,
        [&](const Vars& o, const Vars&) {
          pb.store(target, as_indices(o), SymExpr::float_imm(0, acc));
        },
        [&](const Vars& o, const Vars& r) {
          SymExpr v = load_as(x, x_index(o, r), acc);
          if (pass == 1) {
            SymExpr d = v - buffer_load(sum, as_indices(o)) / count;
            v = d * d;
          }
          pb.store(target, as_indices(o), buffer_load(target, as_indices(o)) + v);
        });
  }
  loop_block(pb, op, x.shape(), {}, nullptr, [&](const Vars& v, const Vars&) {
    const std::vector<SymExpr> o = {v[0], floordiv(v[1], per_group)};
    SymExpr value = (load_as(x, as_indices(v), acc) - buffer_load(sum, o) / count) *
                        rsqrt(buffer_load(sq, o) / count + eps) * load_as(gamma, {v[1]}, acc) +
                    load_as(beta, {v[1]}, acc);
    pb.store(out, as_indices(v), as_dtype(value, nc->dtype));
  });
  return kb.finish();
}

absl::StatusOr<Lowering> legalize_batch_norm(const CallNode& call, const BatchNormAttrs& attrs,
                                             Analyzer&) {
  const std::string op = "batch_norm";
  absl::StatusOr<NormCall> nc = check_norm_call(call, op);
  if (!nc.ok()) return nc.status();
  const std::vector<SymExpr>& x_dims = *nc->x->shape;
  absl::StatusOr<int64_t> axis_or = normalize_axis(op, attrs.axis, static_cast<int64_t>(x_dims.size()));
  if (!axis_or.ok()) return axis_or.status();
  const auto axis = static_cast<size_t>(*axis_or);
  const std::vector<SymExpr> channel = {x_dims[axis]};
  KernelBuilder kb(op, {x_dims, channel, channel, channel, channel, x_dims});
  Buffer x = kb.input("A", call.args[0]);
  Buffer gamma = kb.input("gamma", call.args[1], channel);
  Buffer beta = kb.input("beta", call.args[2], channel);
  Buffer mean = kb.input("mean", call.args[3], channel);
  Buffer var = kb.input("var", call.args[4], channel);
  Buffer out = kb.output("B", *nc->out, x_dims);
  PrimFuncBuilder& pb = kb.body();
  const DataType acc = nc->acc;
  const SymExpr eps = SymExpr::float_imm(attrs.epsilon, acc);
  loop_block(pb, op, x.shape(), {}, nullptr, [&](const Vars& v, const Vars&) {
    const std::vector<SymExpr> c = {v[axis]};
    SymExpr value = (load_as(x, as_indices(v), acc) - load_as(mean, c, acc)) *
                        rsqrt(load_as(var, c, acc) + eps) * load_as(gamma, c, acc) +
                    load_as(beta, c, acc);
    pb.store(out, as_indices(v), as_dtype(value, nc->dtype));
  });
  return kb.finish();
}

}  // namespace

void register_nn_norm_ops(OpTable& table) {
  table.def<LayerNormAttrs>("layer_norm",
                            "(x - mean) / sqrt(var + epsilon) * gamma + beta over axes (default [-1])")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("gamma", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("beta", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce([](const CallNode& call, const LayerNormAttrs& attrs, DeduceContext& ctx) {
        return deduce_axes_norm(call, attrs, ctx, {1, 2});
      })
      .legalize([](const CallNode& call, const LayerNormAttrs& attrs, Analyzer&) {
        return legalize_axes_norm(call, attrs, true);
      });
  table.def<LayerNormAttrs>("rms_norm",
                            "x / sqrt(mean(x^2) + epsilon) * weight over axes (default [-1])")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("weight", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce([](const CallNode& call, const LayerNormAttrs& attrs, DeduceContext& ctx) {
        return deduce_axes_norm(call, attrs, ctx, {1});
      })
      .legalize([](const CallNode& call, const LayerNormAttrs& attrs, Analyzer&) {
        return legalize_axes_norm(call, attrs, false);
      });
  table.def<GroupNormAttrs>("group_norm",
                            "layer_norm over each of num_groups channel groups (channel axis 1), "
                            "then per-channel gamma and beta")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("gamma", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("beta", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_group_norm)
      .legalize(legalize_group_norm);
  table.def<BatchNormAttrs>("batch_norm",
                            "inference batch norm: (x - mean) / sqrt(var + epsilon) * gamma + beta "
                            "per channel of axis (default 1)")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("gamma", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("beta", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("mean", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("var", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_batch_norm)
      .legalize(legalize_batch_norm);
}

}  // namespace detail

namespace op {

Expr layer_norm(Expr x, Expr gamma, Expr beta, std::vector<int64_t> axes, double epsilon) {
  return make_call(make_op_or_die("layer_norm"), {std::move(x), std::move(gamma), std::move(beta)},
                   detail::encode_attrs(detail::LayerNormAttrs{std::move(axes), epsilon}));
}

Expr rms_norm(Expr x, Expr weight, std::vector<int64_t> axes, double epsilon) {
  return make_call(make_op_or_die("rms_norm"), {std::move(x), std::move(weight)},
                   detail::encode_attrs(detail::LayerNormAttrs{std::move(axes), epsilon}));
}

Expr group_norm(Expr x, Expr gamma, Expr beta, int64_t num_groups, double epsilon) {
  return make_call(make_op_or_die("group_norm"), {std::move(x), std::move(gamma), std::move(beta)},
                   detail::encode_attrs(detail::GroupNormAttrs{num_groups, epsilon}));
}

Expr batch_norm(Expr x, Expr gamma, Expr beta, Expr mean, Expr var, int64_t axis, double epsilon) {
  return make_call(make_op_or_die("batch_norm"),
                   {std::move(x), std::move(gamma), std::move(beta), std::move(mean), std::move(var)},
                   detail::encode_attrs(detail::BatchNormAttrs{axis, epsilon}));
}

}  // namespace op
}  // namespace relax
