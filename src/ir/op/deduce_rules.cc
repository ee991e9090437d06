// The shared deduction rules of deduce_rules.h.
#include "ir/op/deduce_rules.h"

#include <algorithm>
#include <utility>

#include "ir/op/op_util.h"

namespace relax::detail {
namespace {

std::string op_name(const CallNode& call) { return call.callee.as<OpNode>()->name; }

std::string dtype_text(const StructInfo& s) {
  if (const auto* t = s.as<TensorStructInfoNode>(); t != nullptr && t->dtype) {
    return t->dtype->to_string();
  }
  return s.to_string();
}

// `value` (a constant that adapts, or already of `dtype`) as a value of `dtype`.
SymExpr adapt_value(const SymExpr& value, DataType dtype) {
  if (value.dtype() == dtype) return value;
  if (std::optional<int64_t> c = value.as_const()) {
    return dtype.is_float() ? SymExpr::float_imm(static_cast<double>(*c), dtype)
                            : SymExpr::int_imm(*c, dtype);
  }
  return SymExpr::float_imm(*value.as_float(), dtype);
}

}  // namespace

absl::StatusOr<StructInfo> deduce_broadcast(const CallNode& call, DeduceContext& ctx,
                                            const BroadcastSpec& spec) {
  const std::string op = op_name(call);
  const size_t n = call.args.size();
  std::vector<const TensorStructInfoNode*> tensors(n, nullptr);
  std::vector<const PrimStructInfoNode*> prims(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const StructInfo& s = call.args[i].struct_info();
    tensors[i] = s.as<TensorStructInfoNode>();
    prims[i] = s.as<PrimStructInfoNode>();
    if (tensors[i] == nullptr && prims[i] == nullptr) {
      return op_error(op, arg_label(i, arg_role(call, i)) + ": expected a Tensor or a Prim, got " +
                              s.to_string());
    }
  }
  std::vector<size_t> same = spec.same_dtype;
  if (same.empty()) {
    for (size_t i = 0; i < n; ++i) same.push_back(i);
  }
  auto differ = [&](size_t a, size_t b) {
    if (b < a) std::swap(a, b);
    return op_error(op, "dtypes differ: " + arg_role(call, a) + " is " +
                            dtype_text(call.args[a].struct_info()) + ", " + arg_role(call, b) +
                            " is " + dtype_text(call.args[b].struct_info()));
  };
  // The agreed dtype: the tensors' (which must be equal), else a Prim's that
  // the other Prims adapt to.
  std::optional<DataType> joined;
  std::optional<size_t> joined_from;
  for (size_t i : same) {
    if (tensors[i] == nullptr || !tensors[i]->dtype) continue;
    if (joined && *joined != *tensors[i]->dtype) return differ(*joined_from, i);
    joined = tensors[i]->dtype;
    joined_from = i;
  }
  if (!joined) {
    for (size_t candidate : same) {
      if (prims[candidate] == nullptr) continue;
      bool all_adapt = true;
      for (size_t j : same) {
        if (prims[j] != nullptr) all_adapt = all_adapt && prim_adapts_to(*prims[j], prims[candidate]->dtype);
      }
      const bool has_unknown_tensor = std::any_of(same.begin(), same.end(), [&](size_t j) {
        return tensors[j] != nullptr;
      });
      // With a tensor of unknown dtype, a constant that adapts says nothing.
      if (all_adapt && !(has_unknown_tensor && is_adapting_constant(*prims[candidate]))) {
        joined = prims[candidate]->dtype;
        joined_from = candidate;
        break;
      }
    }
  }
  for (size_t i : same) {
    if (prims[i] == nullptr) continue;
    if (joined && !prim_adapts_to(*prims[i], *joined)) return differ(*joined_from, i);
    if (!joined && !is_adapting_constant(*prims[i])) {
      // Two Prims that adapt to nothing common.
      for (size_t j : same) {
        if (j != i && prims[j] != nullptr) return differ(i, j);
      }
    }
  }
  // A tensor of unknown dtype must have the agreed one (its kernel checks it),
  // so the result has it.
  const std::optional<DataType> dtype = spec.result_dtype ? spec.result_dtype : joined;

  const bool all_prims = std::all_of(prims.begin(), prims.end(), [](auto* p) { return p; });
  if (all_prims) {
    const DataType d = dtype ? *dtype : prims[0]->dtype;
    if (!spec.fold || !joined) return prim_sinfo(d);
    std::vector<SymExpr> values;
    for (size_t i = 0; i < n; ++i) {
      if (!prims[i]->value.defined()) return prim_sinfo(d);
      const bool agrees = std::find(same.begin(), same.end(), i) != same.end();
      values.push_back(agrees ? adapt_value(prims[i]->value, *joined) : prims[i]->value);
    }
    SymExpr value = spec.fold(values);
    if (value.dtype() == DataType::int64()) {
      value = ctx.analyzer.simplify(value);
    } else if (value.dtype().is_float()) {
      bool constants = true;
      for (const SymExpr& v : values) constants = constants && (v.as_float() || v.as_const());
      if (constants) {
        absl::StatusOr<double> folded = evaluate_float(value, {});
        if (folded.ok()) value = SymExpr::float_imm(*folded, value.dtype());
      }
    }
    return prim_sinfo(d, value);
  }

  Device device;
  int ndim = 0;
  bool rank_only = false;
  std::optional<size_t> device_from;
  for (size_t i = 0; i < n; ++i) {
    const TensorStructInfoNode* t = tensors[i];
    if (t == nullptr) continue;
    if (t->device.type != Device::Type::kUnknown) {
      if (device.type != Device::Type::kUnknown && device != t->device) {
        return op_error(op, "devices differ: " + arg_role(call, *device_from) + " is on " +
                                device.to_string() + ", " + arg_role(call, i) + " on " +
                                t->device.to_string());
      }
      device = t->device;
      device_from = i;
    }
    if (t->ndim == kUnknownNDim) {
      ndim = kUnknownNDim;
    } else if (ndim != kUnknownNDim) {
      ndim = std::max(ndim, t->ndim);
    }
    rank_only = rank_only || !t->shape;
  }
  if (ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, dtype, device);
  if (rank_only) return tensor_sinfo_rank(ndim, dtype, device);
  std::string context = " (";
  for (size_t i = 0; i < n; ++i) {
    context += (i ? ", " : "") + arg_role(call, i) + " " + call.args[i].struct_info().to_string();
  }
  context += ")";
  std::vector<SymExpr> shape;
  for (size_t i = 0; i < n; ++i) {
    if (tensors[i] == nullptr) continue;
    absl::StatusOr<std::vector<SymExpr>> next =
        broadcast_shapes(shape, *tensors[i]->shape, ctx.analyzer, op, "dim", context);
    if (!next.ok()) return next.status();
    shape = *std::move(next);
  }
  return tensor_sinfo(std::move(shape), dtype, device);
}

absl::StatusOr<StructInfo> deduce_like_arg(const CallNode& call, size_t index,
                                           std::optional<DataType> dtype) {
  const StructInfo& s = call.args[index].struct_info();
  if (!dtype) return s;
  if (const auto* t = s.as<TensorStructInfoNode>()) {
    if (!t->shape) return tensor_sinfo_rank(t->ndim, dtype, t->device);
    return tensor_sinfo(*t->shape, dtype, t->device);
  }
  if (s.as<PrimStructInfoNode>() != nullptr) return prim_sinfo(*dtype);
  return s;
}

absl::StatusOr<int64_t> checked_axis(const CallNode& call, int64_t axis, int ndim) {
  const int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) {
    return op_error(op_name(call), "axis " + std::to_string(axis) + " is out of range for rank " +
                                       std::to_string(ndim) + " (" + arg_role(call, 0) + " " +
                                       call.args[0].struct_info().to_string() + ")");
  }
  return a;
}

absl::StatusOr<StructInfo> deduce_reduce(const CallNode& call,
                                         const std::optional<std::vector<int64_t>>& axis,
                                         bool keepdims, std::optional<DataType> dtype) {
  const std::string op = op_name(call);
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  if (!dtype) dtype = x.dtype;
  if (x.ndim == kUnknownNDim) {
    if (!axis && !keepdims) return tensor_sinfo({}, dtype, x.device);
    return tensor_sinfo_rank(kUnknownNDim, dtype, x.device);
  }
  const int ndim = x.ndim;
  std::vector<bool> reduced(ndim, !axis.has_value());
  if (axis) {
    auto axes_text = [&] {
      return dims_string(std::vector<SymExpr>(axis->begin(), axis->end()));
    };
    for (int64_t a : *axis) {
      const int64_t i = a < 0 ? a + ndim : a;
      if (i < 0 || i >= ndim) {
        return op_error(op, "axis " + std::to_string(a) + " in " + axes_text() +
                                " is out of range for rank " + std::to_string(ndim) + " (" +
                                arg_role(call, 0) + " " + call.args[0].struct_info().to_string() +
                                ")");
      }
      if (reduced[i]) {
        return op_error(op, "axis " + std::to_string(i) + " appears twice in " + axes_text());
      }
      reduced[i] = true;
    }
  }
  if (!x.shape) {
    int out_ndim = 0;
    for (bool r : reduced) out_ndim += (!r || keepdims) ? 1 : 0;
    // A 0-d result's shape is known whatever x's dims are.
    if (out_ndim == 0) return tensor_sinfo({}, dtype, x.device);
    return tensor_sinfo_rank(out_ndim, dtype, x.device);
  }
  std::vector<SymExpr> out;
  for (int i = 0; i < ndim; ++i) {
    if (!reduced[i]) {
      out.push_back((*x.shape)[i]);
    } else if (keepdims) {
      out.push_back(SymExpr(1));
    }
  }
  return tensor_sinfo(std::move(out), dtype, x.device);
}

}  // namespace relax::detail
