// Quantised weights: group-wise symmetric int4 / int8 (dequantize, quantize).
//
// Layout. Along `axis` a tensor of K values is cut into groups of
// `group_size` consecutive values (the last group may be shorter), each with
// one scale. The packed tensor has the values' shape except along `axis`:
//   bits = 8: int8, K entries, q = the byte;
//   bits = 4: uint8, K / 2 entries; value k sits in byte k / 2, the low nibble
//             first (k even: bits 0-3, k odd: bits 4-7), q = nibble - 8.
// The scales have the values' shape with ceil(K / group_size) along `axis`.
//
//   dequantize(packed, scales, group_size, axis, bits):
//     out[.., k, ..] = q[.., k, ..] * scales[.., floordiv(k, group_size), ..]
//     in the scales' dtype (float32 arithmetic for float16/bfloat16), with
//     K = 2 * packed[axis] for bits = 4.
//   quantize(x, group_size, axis, bits) -> (packed, scales):
//     scale = max(|x|) over the group / qmax  (qmax = 7 for bits 4, 127 for 8),
//             computed in float32 for 16-bit x and stored in x's dtype;
//     q     = clamp(round(x / scale), -qmax - 1, qmax), round half to even,
//             with x / scale read as 0 where scale == 0 (an all-zero group),
//             the stored (rounded) scale being the divisor;
//     bits 4: byte = (q_even + 8) + 16 * (q_odd + 8); K must be even.
//   So dequantize(quantize(x)) == x within scale / 2 per element.
//
// Deduction checks bits (4 or 8), group_size (>= 1), the packed dtype for
// bits (uint8 / int8), the ranks, and the scales' dims: provably equal to the
// packed tensor's elsewhere and to ceil(K / group_size) along `axis` (errors
// name the dims). Rank-only inputs give rank-only results.
//
// Kernels: dequantize is one injective block (shift and mask of the byte);
// quantize is three: a reduction "absmax" per group into a workspace, "scales",
// and "pack" over the packed tensor.
#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/quantize.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

struct QuantizeAttrs {
  int64_t group_size = 0;
  int64_t axis = -1;
  int64_t bits = 4;
  template <typename V>
  void fields(V& v) {
    v.required("group_size", group_size);
    v("axis", axis);
    v("bits", bits);
  }
};

absl::Status check_attrs(const std::string& op, const QuantizeAttrs& attrs) {
  if (attrs.bits != 4 && attrs.bits != 8) {
    return op_error(op, "attribute `bits` must be 4 or 8, got " + std::to_string(attrs.bits));
  }
  if (attrs.group_size < 1) {
    return op_error(op, "attribute `group_size` must be >= 1, got " + std::to_string(attrs.group_size));
  }
  return absl::OkStatus();
}

constexpr DataType kUInt8{DataType::Code::kUInt, 8, 1};
constexpr DataType kInt8{DataType::Code::kInt, 8, 1};

DataType packed_dtype(int64_t bits) { return bits == 4 ? kUInt8 : kInt8; }

SymExpr ceil_div(const SymExpr& a, int64_t b, Analyzer& analyzer) {
  return analyzer.simplify(floordiv(a + SymExpr(b - 1), SymExpr(b)));
}


absl::StatusOr<StructInfo> deduce_dequantize(const CallNode& call, const QuantizeAttrs& attrs,
                                             DeduceContext& ctx) {
  const std::string op = "dequantize";
  if (absl::Status s = check_attrs(op, attrs); !s.ok()) return s;
  const auto& packed = *call.args[0].struct_info().as<TensorStructInfoNode>();
  const auto& scales = *call.args[1].struct_info().as<TensorStructInfoNode>();
  const DataType want = packed_dtype(attrs.bits);
  if (packed.dtype && *packed.dtype != want) {
    return op_error(op, arg_label(0, "packed") + ": expected " + want.to_string() + " for bits=" +
                            std::to_string(attrs.bits) + ", got " + call.args[0].struct_info().to_string());
  }
  absl::StatusOr<Device> device = join_devices(op, packed, scales);
  if (!device.ok()) return device.status();
  if (packed.ndim != kUnknownNDim && scales.ndim != kUnknownNDim && packed.ndim != scales.ndim) {
    return op_error(op, "ranks differ: packed " + call.args[0].struct_info().to_string() + ", scales " +
                            call.args[1].struct_info().to_string());
  }
  const int ndim = packed.ndim != kUnknownNDim ? packed.ndim : scales.ndim;
  if (ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, scales.dtype, *device);
  absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, ndim);
  if (!axis.ok()) return axis.status();
  if (!packed.shape || !scales.shape) return tensor_sinfo_rank(ndim, scales.dtype, *device);
  Analyzer& an = ctx.analyzer;
  const auto a = static_cast<size_t>(*axis);
  std::vector<SymExpr> out = *packed.shape;
  out[a] = attrs.bits == 4 ? an.simplify(out[a] * 2) : out[a];
  const std::vector<SymExpr>& s = *scales.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    const SymExpr want_dim = d == a ? ceil_div(out[a], attrs.group_size, an) : out[d];
    if (!structural_equal(s[d], want_dim) && !an.prove_equal(s[d], want_dim)) {
      return op_error(op, "scales dim " + std::to_string(d) + " is " + quoted(s[d]) + ", expected " +
                              quoted(want_dim) +
                              (d == a ? " (ceil of K " + quoted(out[a]) + " / group_size " +
                                            std::to_string(attrs.group_size) + ")"
                                      : " (packed dim " + std::to_string(d) + ")"));
    }
  }
  return tensor_sinfo(std::move(out), scales.dtype, *device);
}

absl::StatusOr<Lowering> legalize_dequantize(const CallNode& call, const QuantizeAttrs& attrs,
                                             Analyzer& analyzer) {
  const std::string op = "dequantize";
  if (absl::Status s = check_attrs(op, attrs); !s.ok()) return s;
  absl::StatusOr<const TensorStructInfoNode*> packed = known_tensor(call, 0, op, "packed");
  if (!packed.ok()) return packed.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op, DtypeClass::kFloat);
  if (!out.ok()) return out.status();
  absl::StatusOr<int64_t> axis_or =
      normalize_axis(op, attrs.axis, static_cast<int64_t>((*packed)->shape->size()));
  if (!axis_or.ok()) return axis_or.status();
  const auto axis = static_cast<size_t>(*axis_or);
  const DataType out_dtype = *(*out)->dtype;
  const DataType math = compute_dtype(out_dtype);
  const int64_t bits = attrs.bits;
  const int64_t group = attrs.group_size;
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    const SymExpr k = i[axis];
    std::vector<SymExpr> byte_at = i;
    std::vector<SymExpr> scale_at = i;
    scale_at[axis] = floordiv(k, SymExpr(group));
    SymExpr q;
    if (bits == 4) {
      byte_at[axis] = floordiv(k, SymExpr(2));
      const SymExpr byte = cast(DataType::int32(), in.load(0, byte_at));
      const SymExpr shift = cast(DataType::int32(), floormod(k, SymExpr(2)) * 4);
      q = bitwise_and(shift_right(byte, shift), SymExpr::int_imm(15, DataType::int32())) -
          SymExpr::int_imm(8, DataType::int32());
    } else {
      q = in.load(0, byte_at);
    }
    SymExpr scale = in.load(1, scale_at);
    if (scale.dtype() != math) scale = cast(math, scale);
    return cast(math, q) * scale;
  });
}

absl::StatusOr<StructInfo> deduce_quantize(const CallNode& call, const QuantizeAttrs& attrs,
                                           DeduceContext& ctx) {
  const std::string op = "quantize";
  if (absl::Status s = check_attrs(op, attrs); !s.ok()) return s;
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  const DataType pdt = packed_dtype(attrs.bits);
  if (x.ndim == kUnknownNDim) {
    return tuple_sinfo({tensor_sinfo_rank(kUnknownNDim, pdt, x.device),
                        tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device)});
  }
  absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, x.ndim);
  if (!axis.ok()) return axis.status();
  if (!x.shape) {
    return tuple_sinfo({tensor_sinfo_rank(x.ndim, pdt, x.device), tensor_sinfo_rank(x.ndim, x.dtype, x.device)});
  }
  Analyzer& an = ctx.analyzer;
  const auto a = static_cast<size_t>(*axis);
  const SymExpr k = (*x.shape)[a];
  std::vector<SymExpr> packed = *x.shape;
  std::vector<SymExpr> scales = *x.shape;
  if (attrs.bits == 4) {
    if (!an.prove(floormod(k, SymExpr(2)) == 0)) {
      return op_error(op, "bits=4 packs two values per byte: x dim " + std::to_string(a) + " is " +
                              quoted(k) + ", not provably even");
    }
    packed[a] = an.simplify(floordiv(k, SymExpr(2)));
  }
  scales[a] = ceil_div(k, attrs.group_size, an);
  return tuple_sinfo({tensor_sinfo(std::move(packed), pdt, x.device), tensor_sinfo(std::move(scales), x.dtype, x.device)});
}

absl::StatusOr<Lowering> legalize_quantize(const CallNode& call, const QuantizeAttrs& attrs, Analyzer&) {
  const std::string op = "quantize";
  if (absl::Status s = check_attrs(op, attrs); !s.ok()) return s;
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  const auto* tuple = call.struct_info().as<TupleStructInfoNode>();
  const TensorStructInfoNode* outs[2] = {nullptr, nullptr};
  for (size_t i = 0; tuple != nullptr && tuple->fields.size() == 2 && i < 2; ++i) {
    const auto* t = tuple->fields[i].as<TensorStructInfoNode>();
    if (t != nullptr && t->shape && t->dtype) outs[i] = t;
  }
  if (outs[0] == nullptr || outs[1] == nullptr) {
    return error(op, "the result " + call.struct_info().to_string() +
                         " is not a Tuple of two Tensors of known shape and dtype");
  }
  const DataType dtype = *(*x)->dtype;
  if (absl::Status s = check_dtype(op, dtype, DtypeClass::kFloat, "x " + call.args[0].struct_info().to_string());
      !s.ok()) {
    return s;
  }
  absl::StatusOr<int64_t> axis_or = normalize_axis(op, attrs.axis, static_cast<int64_t>((*x)->shape->size()));
  if (!axis_or.ok()) return axis_or.status();
  const auto axis = static_cast<size_t>(*axis_or);
  const DataType math = compute_dtype(dtype);
  const int64_t bits = attrs.bits;
  const int64_t group = attrs.group_size;
  const double qmax = bits == 4 ? 7 : 127;

  KernelBuilder kb(op, {*(*x)->shape, *outs[0]->shape, *outs[1]->shape});
  Buffer xb = kb.input("x", call.args[0]);
  Buffer packed = kb.output("packed", *outs[0]);
  Buffer scales = kb.output("scales", *outs[1]);
  PrimFuncBuilder& pb = kb.body();
  const SymExpr extent = xb.shape()[axis];
  auto load_x = [&](std::vector<SymExpr> idx) {
    SymExpr v = buffer_load(xb, std::move(idx));
    return v.dtype() == math ? v : cast(math, v);
  };

  Buffer absmax = pb.allocate("absmax", scales.shape(), math, BufferScope::kWorkspace);
  loop_block(
      pb, "absmax", scales.shape(), {SymExpr(group)},
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(absmax, as_indices(s), SymExpr::float_imm(0, math));
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        std::vector<SymExpr> idx = as_indices(s);
        const SymExpr k = s[axis] * SymExpr(group) + r[0];
        idx[axis] = min(k, extent - 1);
        const SymExpr v = select(k < extent, abs(load_x(idx)), SymExpr::float_imm(0, math));
        pb.store(absmax, as_indices(s), max(buffer_load(absmax, as_indices(s)), v));
      });
  loop_block(pb, "scales", scales.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
               SymExpr v = buffer_load(absmax, as_indices(s)) / SymExpr::float_imm(qmax, math);
               pb.store(scales, as_indices(s), v.dtype() == dtype ? v : cast(dtype, v));
             });
  // q of the value at `idx`, as an int32.
  auto quantized = [&](const std::vector<SymExpr>& idx) {
    std::vector<SymExpr> scale_at = idx;
    scale_at[axis] = floordiv(idx[axis], SymExpr(group));
    SymExpr scale = buffer_load(scales, scale_at);
    if (scale.dtype() != math) scale = cast(math, scale);
    const SymExpr zero = SymExpr::float_imm(0, math);
    const SymExpr ratio = select(scale == zero, zero, load_x(idx) / scale);
    const SymExpr clamped = min(max(round(ratio), SymExpr::float_imm(-qmax - 1, math)),
                                SymExpr::float_imm(qmax, math));
    return cast(DataType::int32(), clamped);
  };
  loop_block(pb, "pack", packed.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
               std::vector<SymExpr> idx = as_indices(s);
               if (bits == 8) {
                 pb.store(packed, as_indices(s), cast(kInt8, quantized(idx)));
                 return;
               }
               std::vector<SymExpr> lo = idx;
               std::vector<SymExpr> hi = idx;
               lo[axis] = s[axis] * 2;
               hi[axis] = s[axis] * 2 + 1;
               const SymExpr eight = SymExpr::int_imm(8, DataType::int32());
               const SymExpr byte = (quantized(lo) + eight) +
                                    (quantized(hi) + eight) * SymExpr::int_imm(16, DataType::int32());
               pb.store(packed, as_indices(s), cast(kUInt8, byte));
             });
  return kb.finish();
}

}  // namespace

void register_quantize_ops(OpTable& table) {
  table.def<QuantizeAttrs>("dequantize",
                           "group-wise symmetric int4/int8 weights to floats: q * scales[k / group_size]")
      .arg("packed", ArgKind::kTensor, DtypeClass::kInt)
      .arg("scales", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_dequantize)
      .legalize(legalize_dequantize);
  table.def<QuantizeAttrs>("quantize",
                           "group-wise symmetric int4/int8 quantisation: (packed, scales)")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_quantize)
      .legalize(legalize_quantize);
}

}  // namespace detail

namespace op {

Expr dequantize(Expr packed, Expr scales, int64_t group_size, int64_t axis, int64_t bits) {
  return make_call(make_op_or_die("dequantize"), {std::move(packed), std::move(scales)},
                   detail::encode_attrs(detail::QuantizeAttrs{group_size, axis, bits}));
}

Expr quantize(Expr x, int64_t group_size, int64_t axis, int64_t bits) {
  return make_call(make_op_or_die("quantize"), {std::move(x)},
                   detail::encode_attrs(detail::QuantizeAttrs{group_size, axis, bits}));
}

}  // namespace op
}  // namespace relax
