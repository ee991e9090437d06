// Elementwise binary operators with numpy broadcasting: add, multiply.
//
// Shapes align at the right; a pair of dims broadcasts when the Analyzer
// proves them equal or one of them is 1. A pair that is neither (n vs m, or 3
// vs 4) is an error, since the result's shape would depend on run-time values.
// When either operand is known only by rank, the result is rank-only with the
// larger rank; when either rank is unknown, so is the result's.
#include <algorithm>

#include "op_registry.h"
#include "op_util.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

absl::StatusOr<StructInfo> deduce_broadcast(const std::string& op, const CallNode& call,
                                            DeduceContext& ctx) {
  absl::StatusOr<const TensorStructInfoNode*> lhs = detail::tensor_arg(call, 0, op, "lhs");
  if (!lhs.ok()) return lhs.status();
  absl::StatusOr<const TensorStructInfoNode*> rhs = detail::tensor_arg(call, 1, op, "rhs");
  if (!rhs.ok()) return rhs.status();
  absl::StatusOr<std::optional<DataType>> dtype = detail::join_dtypes(op, **lhs, **rhs);
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<Device> device = detail::join_devices(op, **lhs, **rhs);
  if (!device.ok()) return device.status();

  if ((*lhs)->ndim == kUnknownNDim || (*rhs)->ndim == kUnknownNDim) {
    return tensor_sinfo_rank(kUnknownNDim, *dtype, *device);
  }
  if (!(*lhs)->shape || !(*rhs)->shape) {
    return tensor_sinfo_rank(std::max((*lhs)->ndim, (*rhs)->ndim), *dtype, *device);
  }
  std::string context = " (lhs " + call.args[0].struct_info().to_string() + ", rhs " +
                        call.args[1].struct_info().to_string() + ")";
  absl::StatusOr<std::vector<SymExpr>> shape =
      detail::broadcast_shapes(*(*lhs)->shape, *(*rhs)->shape, ctx.analyzer, op, "dim", context);
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
  register_binary(table, "add", "elementwise lhs + rhs with numpy broadcasting");
  register_binary(table, "multiply", "elementwise lhs * rhs with numpy broadcasting");
}

}  // namespace detail

namespace op {

Expr add(Expr lhs, Expr rhs) { return make_call(make_op("add"), {std::move(lhs), std::move(rhs)}); }

Expr multiply(Expr lhs, Expr rhs) {
  return make_call(make_op("multiply"), {std::move(lhs), std::move(rhs)});
}

}  // namespace op
}  // namespace relax
