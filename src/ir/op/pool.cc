// Pooling on NCHW data: max_pool2d, avg_pool2d, adaptive_avg_pool2d.
//
// max_pool2d / avg_pool2d take `pool_size` (required), `strides` (default 1),
// `padding` (default 0; one value for both dims or one per dim, on both
// sides), `dilation` (default 1) and `layout` (only "NCHW"); the output size is
// floor mode: floordiv(H + 2p - d * (k - 1) - 1, s) + 1 (window.h), an output
// dim provably < 1 being an error. Padding reads -inf (the dtype's lowest for
// integers) in max_pool2d; avg_pool2d divides by the number of in-bounds taps,
// or by pool_size's product with `count_include_pad` (floor mode keeps every
// window inside the padded data, so the two agree without padding).
// adaptive_avg_pool2d(output_size) averages bin i of each spatial dim over
// [floor(i * H / OH), ceil((i + 1) * H / OH)); `output_size` has one value
// (both dims) or two, and absent keeps the input's size.
//
// A window over nothing has no value (numpy and PyTorch reject empty input
// to pooling): data whose height or width is 0 is an error for max_pool2d
// and avg_pool2d, and for adaptive_avg_pool2d when output_size gives it bins
// (without output_size the result is as empty as the data). Deduction rejects
// a dim that is 0 ("max_pool2d: dim 2 of data is 0 ..."); a symbolic one is
// checked by the kernel when it runs (relax/ir/kernel_checks.h).
//
// Kernels: a reduction block over the window's taps (spatial over the
// output), and for the averages a workspace sum (float32 for 16-bit floats)
// divided by the count in a second block.
#include <limits>

#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "ir/op/window.h"
#include "relax/ir/compute.h"
#include "relax/ir/kernel_checks.h"
#include "relax/ir/op/conv.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

struct Pool2dAttrs {
  std::vector<int64_t> pool_size;
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> padding = {0, 0};
  std::vector<int64_t> dilation = {1, 1};
  bool count_include_pad = false;  // avg_pool2d only
  std::string layout = "NCHW";
  template <typename V>
  void fields(V& v) {
    v.required("pool_size", pool_size);
    v("strides", strides);
    v("padding", padding);
    v("dilation", dilation);
    v("layout", layout, {"NCHW"});
  }
};

struct AvgPool2dAttrs : Pool2dAttrs {
  template <typename V>
  void fields(V& v) {
    Pool2dAttrs::fields(v);
    v("count_include_pad", count_include_pad);
  }
};

struct AdaptivePool2dAttrs {
  std::optional<std::vector<int64_t>> output_size;
  std::string layout = "NCHW";
  template <typename V>
  void fields(V& v) {
    v("output_size", output_size);
    v("layout", layout, {"NCHW"});
  }
};

struct PoolParams {
  std::vector<int64_t> pool_size, strides, dilation;
  WindowPadding padding;
};

absl::StatusOr<PoolParams> pool_params(const std::string& op, const Pool2dAttrs& attrs) {
  PoolParams p;
  absl::StatusOr<std::vector<int64_t>> size = per_spatial_dim(op, "pool_size", attrs.pool_size, 2, 1);
  if (!size.ok()) return size.status();
  absl::StatusOr<std::vector<int64_t>> strides = per_spatial_dim(op, "strides", attrs.strides, 2, 1);
  if (!strides.ok()) return strides.status();
  absl::StatusOr<std::vector<int64_t>> dilation = per_spatial_dim(op, "dilation", attrs.dilation, 2, 1);
  if (!dilation.ok()) return dilation.status();
  absl::StatusOr<WindowPadding> padding = window_padding(op, attrs.padding, 2, false);
  if (!padding.ok()) return padding.status();
  p.pool_size = *size;
  p.strides = *strides;
  p.dilation = *dilation;
  p.padding = *padding;
  return p;
}

// The data's rank must be 4 (NCHW); nullopt when its dims are unknown.
absl::StatusOr<std::optional<std::vector<SymExpr>>> nchw_dims(const std::string& op,
                                                              const CallNode& call) {
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  if (x.ndim != kUnknownNDim && x.ndim != 4) {
    return op_error(op, arg_label(0, "data") + ": expected a tensor of rank 4 (NCHW), got " +
                            call.args[0].struct_info().to_string());
  }
  if (!x.shape) return std::optional<std::vector<SymExpr>>();
  return std::optional<std::vector<SymExpr>>(*x.shape);
}

// An error when data's height or width (dims 2 and 3 of `dims`) is provably 0.
absl::Status check_spatial_not_empty(const std::string& op, const CallNode& call, const std::vector<SymExpr>& dims,
                                     Analyzer& analyzer) {
  for (size_t d = 2; d < 4; ++d) {
    if (!analyzer.prove(dims[d] == 0)) continue;
    return op_error(op, "dim " + std::to_string(d) + " of data is 0, and a window over nothing has no value (data " +
                            call.args[0].struct_info().to_string() + ")");
  }
  return absl::OkStatus();
}

// The same at run time: the kernel `lowering` requires data's (its first
// parameter's) height and width nonzero.
absl::StatusOr<Lowering> require_spatial_not_empty(absl::StatusOr<Lowering> lowering, const std::string& op,
                                                   Analyzer& analyzer) {
  if (!lowering.ok() || !lowering->prim_func.defined()) return lowering;
  const Buffer& data = *lowering->prim_func.as<PrimFuncNode>()->params[0].buffer;
  std::vector<NonemptyExtent> extents;
  for (size_t d = 2; d < 4; ++d) {
    extents.push_back({data.shape()[d], op + ": dim " + std::to_string(d) + " of data (the windows' extent)"});
  }
  return require_nonempty(std::move(lowering), extents, analyzer);
}

template <typename A>
absl::StatusOr<StructInfo> deduce_pool(const std::string& op, const CallNode& call, const A& attrs,
                                       DeduceContext& ctx) {
  absl::StatusOr<PoolParams> p = pool_params(op, attrs);
  if (!p.ok()) return p.status();
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  absl::StatusOr<std::optional<std::vector<SymExpr>>> dims = nchw_dims(op, call);
  if (!dims.ok()) return dims.status();
  if (!*dims) return tensor_sinfo_rank(4, x.dtype, x.device);
  const std::vector<SymExpr>& xs = **dims;
  if (absl::Status s = check_spatial_not_empty(op, call, xs, ctx.analyzer); !s.ok()) return s;
  std::vector<SymExpr> out = {xs[0], xs[1]};
  for (size_t d = 0; d < 2; ++d) {
    const SymExpr k(p->pool_size[d]);
    SymExpr o = window_out_dim(xs[2 + d], k, p->strides[d], p->dilation[d], p->padding.before[d],
                               p->padding.after[d], ctx.analyzer);
    if (absl::Status s = check_window_out_dim(op, 2 + d, o, xs[2 + d], k, ctx.analyzer); !s.ok()) return s;
    out.push_back(o);
  }
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}


SymExpr lowest_of(DataType t) {
  if (t.is_float()) return SymExpr::float_imm(-std::numeric_limits<double>::infinity(), t);
  if (t.is_bool()) return SymExpr::boolean(false);
  if (t.code == DataType::Code::kUInt) return SymExpr::int_imm(0, t);
  const int64_t hi = t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (t.bits - 1)) - 1;
  return SymExpr::int_imm(-hi - 1, t);
}

// The number of taps k in [0, kernel) with 0 <= base + k * dilation < extent.
SymExpr taps_inside(const SymExpr& base, int64_t kernel, int64_t dilation, const SymExpr& extent) {
  const SymExpr d(dilation);
  // first = ceil(-base / d) clamped at 0; last = floor((extent - 1 - base) / d) clamped at kernel - 1.
  const SymExpr first = max(SymExpr(0), SymExpr(0) - floordiv(base, d));
  const SymExpr last = min(SymExpr(kernel - 1), floordiv(extent - 1 - base, d));
  return max(SymExpr(0), last - first + 1);
}

absl::StatusOr<Lowering> legalize_pool(const std::string& op, const CallNode& call,
                                       const Pool2dAttrs& attrs, bool is_max, Analyzer& analyzer) {
  absl::StatusOr<PoolParams> p = pool_params(op, attrs);
  if (!p.ok()) return p.status();
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "data");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op);
  if (!out_or.ok()) return out_or.status();
  const TensorStructInfoNode& out = **out_or;
  const DataType dtype = *out.dtype;
  if (!is_max) {
    if (absl::Status s = check_dtype(op, dtype, DtypeClass::kFloat,
                                     "data " + call.args[0].struct_info().to_string());
        !s.ok()) {
      return s;
    }
  }
  KernelBuilder kb(op, {*(*x)->shape, *out.shape});
  Buffer xb = kb.input("data", call.args[0]);
  Buffer ob = kb.output("out", out);
  PrimFuncBuilder& pb = kb.body();
  const std::vector<SymExpr> taps = {SymExpr(p->pool_size[0]), SymExpr(p->pool_size[1])};
  auto window_index = [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
    std::vector<SymExpr> idx = {s[0], s[1]};
    for (size_t d = 0; d < 2; ++d) {
      idx.push_back(s[2 + d] * SymExpr(p->strides[d]) - SymExpr(p->padding.before[d]) +
                    r[d] * SymExpr(p->dilation[d]));
    }
    return idx;
  };
  const std::vector<bool> checked = {false, false,
                                     p->padding.before[0] != 0 || p->padding.after[0] != 0,
                                     p->padding.before[1] != 0 || p->padding.after[1] != 0};
  if (is_max) {
    const SymExpr lowest = lowest_of(dtype);
    loop_block(
        pb, op, ob.shape(), taps,
        [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
          pb.store(ob, as_indices(s), lowest);
        },
        [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
          pb.store(ob, as_indices(s),
                   max(buffer_load(ob, as_indices(s)), window_load(xb, window_index(s, r), checked, lowest)));
        });
    return require_spatial_not_empty(kb.finish(), op, analyzer);
  }
  const DataType acc_dtype = compute_dtype(dtype);
  Buffer acc = pb.allocate("acc", ob.shape(), acc_dtype, BufferScope::kWorkspace);
  const SymExpr zero = zero_of(dtype);
  loop_block(
      pb, op, ob.shape(), taps,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(acc, as_indices(s), zero_of(acc_dtype));
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        SymExpr v = window_load(xb, window_index(s, r), checked, zero);
        if (v.dtype() != acc_dtype) v = cast(acc_dtype, v);
        pb.store(acc, as_indices(s), buffer_load(acc, as_indices(s)) + v);
      });
  loop_block(pb, op + "_out", ob.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
               SymExpr count(p->pool_size[0] * p->pool_size[1]);
               if (!attrs.count_include_pad) {
                 count = SymExpr(1);
                 for (size_t d = 0; d < 2; ++d) {
                   const SymExpr base = s[2 + d] * SymExpr(p->strides[d]) - SymExpr(p->padding.before[d]);
                   count = count * taps_inside(base, p->pool_size[d], p->dilation[d], xb.shape()[2 + d]);
                 }
               }
               SymExpr v = buffer_load(acc, as_indices(s)) / cast(acc_dtype, count);
               pb.store(ob, as_indices(s), v.dtype() == dtype ? v : cast(dtype, v));
             });
  return require_spatial_not_empty(kb.finish(), op, analyzer);
}

absl::StatusOr<std::vector<int64_t>> adaptive_size(const std::string& op,
                                                   const AdaptivePool2dAttrs& attrs) {
  if (!attrs.output_size) return std::vector<int64_t>();
  return per_spatial_dim(op, "output_size", *attrs.output_size, 2, 1);
}

absl::StatusOr<StructInfo> deduce_adaptive(const CallNode& call, const AdaptivePool2dAttrs& attrs,
                                           DeduceContext& ctx) {
  const std::string op = "adaptive_avg_pool2d";
  absl::StatusOr<std::vector<int64_t>> size = adaptive_size(op, attrs);
  if (!size.ok()) return size.status();
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  absl::StatusOr<std::optional<std::vector<SymExpr>>> dims = nchw_dims(op, call);
  if (!dims.ok()) return dims.status();
  if (!*dims) return tensor_sinfo_rank(4, x.dtype, x.device);
  std::vector<SymExpr> out = **dims;
  if (!size->empty()) {
    if (absl::Status s = check_spatial_not_empty(op, call, out, ctx.analyzer); !s.ok()) return s;
    out[2] = SymExpr((*size)[0]);
    out[3] = SymExpr((*size)[1]);
  }
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_adaptive(const CallNode& call, const AdaptivePool2dAttrs& attrs,
                                           Analyzer& analyzer) {
  const std::string op = "adaptive_avg_pool2d";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "data");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op);
  if (!out_or.ok()) return out_or.status();
  const TensorStructInfoNode& out = **out_or;
  const DataType dtype = *out.dtype;
  if (absl::Status s = check_dtype(op, dtype, DtypeClass::kFloat,
                                   "data " + call.args[0].struct_info().to_string());
      !s.ok()) {
    return s;
  }
  // Without output_size the output's spatial dims are the data's.
  std::vector<SymExpr> o_dims = *out.shape;
  if (!attrs.output_size) o_dims = *(*x)->shape;
  KernelBuilder kb(op, {*(*x)->shape, o_dims});
  Buffer xb = kb.input("data", call.args[0]);
  Buffer ob = kb.output("out", out, o_dims);
  PrimFuncBuilder& pb = kb.body();
  // Bin i covers [floor(i * H / OH), ceil((i + 1) * H / OH)): at most
  // ceil(H / OH) + 1 taps, exactly H / OH when OH divides H.
  // Without output_size (or with the data's own size) bin i is element i: no
  // division, which an empty data (H = 0) would make a division by 0.
  auto same_size = [&](size_t d) { return analyzer.prove_equal(xb.shape()[2 + d], ob.shape()[2 + d]); };
  std::vector<SymExpr> taps;
  for (size_t d = 0; d < 2; ++d) {
    const SymExpr in = xb.shape()[2 + d];
    const SymExpr on = ob.shape()[2 + d];
    if (same_size(d)) {
      taps.push_back(SymExpr(1));
      continue;
    }
    taps.push_back(analyzer.prove(floormod(in, on) == 0)
                       ? analyzer.simplify(floordiv(in, on))
                       : analyzer.simplify(floordiv(in + on - 1, on) + 1));
  }
  auto bin = [&](const SymExpr& i, size_t d) {
    const SymExpr in = xb.shape()[2 + d];
    const SymExpr on = ob.shape()[2 + d];
    if (same_size(d)) return std::pair<SymExpr, SymExpr>(i, i + 1);
    return std::pair<SymExpr, SymExpr>(floordiv(i * in, on), floordiv((i + 1) * in + on - 1, on));
  };
  const DataType acc_dtype = compute_dtype(dtype);
  Buffer acc = pb.allocate("acc", ob.shape(), acc_dtype, BufferScope::kWorkspace);
  loop_block(
      pb, op, ob.shape(), taps,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(acc, as_indices(s), zero_of(acc_dtype));
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        std::vector<SymExpr> idx = {s[0], s[1]};
        SymExpr inside;
        for (size_t d = 0; d < 2; ++d) {
          auto [start, end] = bin(s[2 + d], d);
          SymExpr at = start + r[d];
          SymExpr ok = at < end;
          inside = inside.defined() ? (inside && ok) : ok;
          idx.push_back(min(at, xb.shape()[2 + d] - 1));
        }
        SymExpr v = buffer_load(xb, idx);
        if (v.dtype() != acc_dtype) v = cast(acc_dtype, v);
        pb.store(acc, as_indices(s),
                 buffer_load(acc, as_indices(s)) + select(inside, v, zero_of(acc_dtype)));
      });
  loop_block(pb, op + "_out", ob.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
               SymExpr count(1);
               for (size_t d = 0; d < 2; ++d) {
                 auto [start, end] = bin(s[2 + d], d);
                 count = count * (end - start);
               }
               SymExpr v = buffer_load(acc, as_indices(s)) / cast(acc_dtype, count);
               pb.store(ob, as_indices(s), v.dtype() == dtype ? v : cast(dtype, v));
             });
  // Without output_size an empty data has an empty result and no bin.
  if (!attrs.output_size) return kb.finish();
  return require_spatial_not_empty(kb.finish(), op, analyzer);
}

}  // namespace

void register_pool_ops(OpTable& table) {
  table.def<Pool2dAttrs>("max_pool2d", "maximum over 2-D windows of NCHW data (floor mode)")
      .arg("data", ArgKind::kTensor, DtypeClass::kNumeric)
      .deduce([](const CallNode& call, const Pool2dAttrs& attrs, DeduceContext& ctx) {
        return deduce_pool("max_pool2d", call, attrs, ctx);
      })
      .legalize([](const CallNode& call, const Pool2dAttrs& attrs, Analyzer& analyzer) {
        return legalize_pool("max_pool2d", call, attrs, true, analyzer);
      });
  table.def<AvgPool2dAttrs>("avg_pool2d", "mean over 2-D windows of NCHW data (floor mode)")
      .arg("data", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce([](const CallNode& call, const AvgPool2dAttrs& attrs, DeduceContext& ctx) {
        return deduce_pool("avg_pool2d", call, attrs, ctx);
      })
      .legalize([](const CallNode& call, const AvgPool2dAttrs& attrs, Analyzer& analyzer) {
        return legalize_pool("avg_pool2d", call, attrs, false, analyzer);
      });
  table.def<AdaptivePool2dAttrs>("adaptive_avg_pool2d",
                                 "mean over output_size bins of NCHW data (default: the input's size)")
      .arg("data", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_adaptive)
      .legalize(legalize_adaptive);
}

}  // namespace detail

namespace op {

Expr max_pool2d(Expr data, std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                std::vector<int64_t> padding, std::vector<int64_t> dilation) {
  detail::Pool2dAttrs attrs;
  attrs.pool_size = std::move(pool_size);
  attrs.strides = std::move(strides);
  attrs.padding = std::move(padding);
  attrs.dilation = std::move(dilation);
  return make_call(make_op_or_die("max_pool2d"), {std::move(data)}, detail::encode_attrs(attrs));
}

Expr avg_pool2d(Expr data, std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                std::vector<int64_t> padding, std::vector<int64_t> dilation, bool count_include_pad) {
  detail::AvgPool2dAttrs attrs;
  attrs.pool_size = std::move(pool_size);
  attrs.strides = std::move(strides);
  attrs.padding = std::move(padding);
  attrs.dilation = std::move(dilation);
  attrs.count_include_pad = count_include_pad;
  return make_call(make_op_or_die("avg_pool2d"), {std::move(data)}, detail::encode_attrs(attrs));
}

Expr adaptive_avg_pool2d(Expr data, OptionalInts output_size) {
  detail::AdaptivePool2dAttrs attrs;
  attrs.output_size = std::move(output_size);
  return make_call(make_op_or_die("adaptive_avg_pool2d"), {std::move(data)},
                   detail::encode_attrs(attrs));
}

}  // namespace op
}  // namespace relax
