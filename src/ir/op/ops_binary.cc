// Elementwise binary operators with numpy broadcasting: add, multiply.
//
// Shapes align at the right; a pair of dims broadcasts when the Analyzer
// proves them equal or one of them is 1. A pair that is neither (n vs m, or 3
// vs 4) is an error, since the result's shape would depend on run-time values.
// When either operand is known only by rank, the result is rank-only with the
// larger rank; when either rank is unknown, so is the result's.
//
// Either operand may also be a scalar: a numeric Prim broadcasts like a 0-d
// tensor of its dtype. Its dtype must be the tensor's, except for a constant
// that adapts (an int64 constant, a float64 constant to a float dtype; see
// prim_adapts_to in op_util.h), as in the SymExpr operators. Two Prims give a
// Prim, whose value is known when both operands' values are.
#include <algorithm>

#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

// An operand of a binary op: a Tensor or a numeric Prim.
struct Operand {
  const TensorStructInfoNode* tensor = nullptr;
  const PrimStructInfoNode* prim = nullptr;
};

absl::StatusOr<Operand> operand(const CallNode& call, size_t index, const std::string& op,
                                const std::string& role) {
  const StructInfo& sinfo = call.args[index].struct_info();
  if (const auto* tensor = sinfo.as<TensorStructInfoNode>()) return Operand{tensor, nullptr};
  if (const auto* prim = sinfo.as<PrimStructInfoNode>();
      prim != nullptr && (prim->dtype.is_int() || prim->dtype.is_float())) {
    return Operand{nullptr, prim};
  }
  return detail::op_error(op, detail::arg_label(index, role) +
                                  ": expected a Tensor or a numeric Prim, got " +
                                  sinfo.to_string());
}

std::string dtypes_differ(const CallNode& call) {
  auto describe = [&](size_t i) {
    const StructInfo& s = call.args[i].struct_info();
    if (const auto* t = s.as<TensorStructInfoNode>(); t != nullptr && t->dtype) {
      return t->dtype->to_string();
    }
    return s.to_string();
  };
  return "dtypes differ: lhs is " + describe(0) + ", rhs is " + describe(1);
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

// Tensor (op) Prim, in either order: the tensor's shape, the joined dtype.
absl::StatusOr<StructInfo> deduce_tensor_scalar(const std::string& op, const CallNode& call,
                                                const TensorStructInfoNode& tensor,
                                                const PrimStructInfoNode& prim) {
  std::optional<DataType> dtype = tensor.dtype;
  if (dtype) {
    if (!detail::prim_adapts_to(prim, *dtype)) return detail::op_error(op, dtypes_differ(call));
  } else if (!detail::is_adapting_constant(prim)) {
    dtype = prim.dtype;
  }
  if (!tensor.shape) return tensor_sinfo_rank(tensor.ndim, dtype, tensor.device);
  return tensor_sinfo(*tensor.shape, dtype, tensor.device);
}

// Prim (op) Prim: a Prim of the joined dtype, with the value when both are known.
absl::StatusOr<StructInfo> deduce_scalar_scalar(const std::string& op, const CallNode& call,
                                                const PrimStructInfoNode& lhs,
                                                const PrimStructInfoNode& rhs, DeduceContext& ctx) {
  DataType dtype = lhs.dtype;
  if (lhs.dtype != rhs.dtype) {
    if (detail::prim_adapts_to(rhs, lhs.dtype)) {
      dtype = lhs.dtype;
    } else if (detail::prim_adapts_to(lhs, rhs.dtype)) {
      dtype = rhs.dtype;
    } else {
      return detail::op_error(op, dtypes_differ(call));
    }
  }
  if (!lhs.value.defined() || !rhs.value.defined()) return prim_sinfo(dtype);
  SymExpr a = adapt_value(lhs.value, dtype);
  SymExpr b = adapt_value(rhs.value, dtype);
  SymExpr value = op == "add" ? a + b : a * b;
  if (dtype == DataType::int64()) {
    value = ctx.analyzer.simplify(value);
  } else if (dtype.is_float() && a.as_float() && b.as_float()) {
    absl::StatusOr<double> folded = evaluate_float(value, {});
    if (folded.ok()) value = SymExpr::float_imm(*folded, dtype);
  }
  return prim_sinfo(dtype, value);
}

absl::StatusOr<StructInfo> deduce_broadcast(const std::string& op, const CallNode& call,
                                            DeduceContext& ctx) {
  absl::StatusOr<Operand> lhs_or = operand(call, 0, op, "lhs");
  if (!lhs_or.ok()) return lhs_or.status();
  absl::StatusOr<Operand> rhs_or = operand(call, 1, op, "rhs");
  if (!rhs_or.ok()) return rhs_or.status();
  const Operand& l = *lhs_or;
  const Operand& r = *rhs_or;
  if (l.prim && r.prim) return deduce_scalar_scalar(op, call, *l.prim, *r.prim, ctx);
  if (l.prim) return deduce_tensor_scalar(op, call, *r.tensor, *l.prim);
  if (r.prim) return deduce_tensor_scalar(op, call, *l.tensor, *r.prim);

  const TensorStructInfoNode& lhs = *l.tensor;
  const TensorStructInfoNode& rhs = *r.tensor;
  absl::StatusOr<std::optional<DataType>> dtype = detail::join_dtypes(op, lhs, rhs);
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<Device> device = detail::join_devices(op, lhs, rhs);
  if (!device.ok()) return device.status();

  if (lhs.ndim == kUnknownNDim || rhs.ndim == kUnknownNDim) {
    return tensor_sinfo_rank(kUnknownNDim, *dtype, *device);
  }
  if (!lhs.shape || !rhs.shape) {
    return tensor_sinfo_rank(std::max(lhs.ndim, rhs.ndim), *dtype, *device);
  }
  std::string context = " (lhs " + call.args[0].struct_info().to_string() + ", rhs " +
                        call.args[1].struct_info().to_string() + ")";
  absl::StatusOr<std::vector<SymExpr>> shape =
      detail::broadcast_shapes(*lhs.shape, *rhs.shape, ctx.analyzer, op, "dim", context);
  if (!shape.ok()) return shape.status();
  return tensor_sinfo(std::move(*shape), *dtype, *device);
}

void register_binary(detail::OpTable& table, const std::string& name, std::string summary) {
  table.add(
      name, 2,
      [name](const CallNode& call, DeduceContext& ctx) {
        return deduce_broadcast(name, call, ctx);
      },
      std::move(summary));
}

}  // namespace

namespace detail {

void register_binary_ops(OpTable& table) {
  register_binary(table, "add",
                  "elementwise lhs + rhs with numpy broadcasting (Prims are scalars)");
  register_binary(table, "multiply",
                  "elementwise lhs * rhs with numpy broadcasting (Prims are scalars)");
}

}  // namespace detail

namespace op {

Expr add(Expr lhs, Expr rhs) { return make_call(make_op_or_die("add"), {std::move(lhs), std::move(rhs)}); }

Expr multiply(Expr lhs, Expr rhs) {
  return make_call(make_op_or_die("multiply"), {std::move(lhs), std::move(rhs)});
}

}  // namespace op
}  // namespace relax
