// Reductions: sum, and softmax (a normalisation over one axis).
//
// sum reduces the given axes (all of them when none are given); negative axes
// count from the end. The reduced dims disappear, or stay as 1 with keepdims.
// With x known only by rank the result is rank-only; with x's rank unknown it
// is unknown too; a 0-d result (a full sum without keepdims) is known anyway.
// softmax keeps x's annotation; its axis must lie within x's rank when known.
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

std::string axes_text(const std::vector<int64_t>& axes) {
  return detail::dims_string(std::vector<SymExpr>(axes.begin(), axes.end()));
}

absl::StatusOr<StructInfo> deduce_sum(const CallNode& call, DeduceContext&) {
  const std::string op = "sum";
  absl::StatusOr<const TensorStructInfoNode*> x_or = detail::tensor_arg(call, 0, op, "x");
  if (!x_or.ok()) return x_or.status();
  const TensorStructInfoNode& x = **x_or;
  if (x.dtype && x.dtype->is_bool()) {
    return detail::op_error(op, detail::arg_label(0, "x") + ": expected a numeric tensor, got " +
                                    call.args[0].struct_info().to_string());
  }
  absl::StatusOr<std::optional<std::vector<int64_t>>> axes =
      detail::attr_of<std::vector<int64_t>>(call, "axes", op, "a list of ints");
  if (!axes.ok()) return axes.status();
  absl::StatusOr<std::optional<bool>> keepdims_or =
      detail::attr_of<bool>(call, "keepdims", op, "a bool");
  if (!keepdims_or.ok()) return keepdims_or.status();
  const bool keepdims = keepdims_or->value_or(false);

  if (x.ndim == kUnknownNDim) {
    if (!*axes && !keepdims) return tensor_sinfo({}, x.dtype, x.device);
    return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
  }
  const int ndim = x.ndim;
  std::vector<bool> reduced(ndim, !axes->has_value());
  if (*axes) {
    for (int64_t a : **axes) {
      int64_t axis = a < 0 ? a + ndim : a;
      if (axis < 0 || axis >= ndim) {
        return detail::op_error(op, "axis " + std::to_string(a) + " in " + axes_text(**axes) +
                                        " is out of range for rank " + std::to_string(ndim) +
                                        " (x " + call.args[0].struct_info().to_string() + ")");
      }
      if (reduced[axis]) {
        return detail::op_error(
            op, "axis " + std::to_string(axis) + " appears twice in " + axes_text(**axes));
      }
      reduced[axis] = true;
    }
  }
  if (!x.shape) {
    int out_ndim = 0;
    for (bool r : reduced) out_ndim += (!r || keepdims) ? 1 : 0;
    // A 0-d result's shape is known whatever x's dims are.
    if (out_ndim == 0) return tensor_sinfo({}, x.dtype, x.device);
    return tensor_sinfo_rank(out_ndim, x.dtype, x.device);
  }
  std::vector<SymExpr> out;
  for (int i = 0; i < ndim; ++i) {
    if (!reduced[i]) {
      out.push_back((*x.shape)[i]);
    } else if (keepdims) {
      out.push_back(SymExpr(1));
    }
  }
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<StructInfo> deduce_softmax(const CallNode& call, DeduceContext&) {
  const std::string op = "softmax";
  absl::StatusOr<const TensorStructInfoNode*> x_or = detail::tensor_arg(call, 0, op, "x");
  if (!x_or.ok()) return x_or.status();
  const TensorStructInfoNode& x = **x_or;
  if (x.dtype && !x.dtype->is_float()) {
    return detail::op_error(op, detail::arg_label(0, "x") + ": expected a float tensor, got " +
                                    call.args[0].struct_info().to_string());
  }
  absl::StatusOr<std::optional<int64_t>> axis_or =
      detail::attr_of<int64_t>(call, "axis", op, "an int");
  if (!axis_or.ok()) return axis_or.status();
  const int64_t axis = axis_or->value_or(-1);
  if (x.ndim != kUnknownNDim && (axis < -x.ndim || axis >= x.ndim)) {
    return detail::op_error(op, "axis " + std::to_string(axis) + " is out of range for rank " +
                                    std::to_string(x.ndim) + " (x " +
                                    call.args[0].struct_info().to_string() + ")");
  }
  return call.args[0].struct_info();
}

}  // namespace

namespace detail {

void register_reduce_ops(OpTable& table) {
  table.add("sum", 1, deduce_sum, "sum of x over axes (default: all), keepdims keeps them as 1");
  table.add("softmax", 1, deduce_softmax, "exp(x) normalised to sum to 1 along axis (default -1)");
}

}  // namespace detail

namespace op {

Expr sum(Expr x, std::optional<std::vector<int64_t>> axes, bool keepdims) {
  Attrs attrs;
  if (axes) attrs.emplace("axes", std::move(*axes));
  attrs.emplace("keepdims", keepdims);
  return make_call(make_op_or_die("sum"), {std::move(x)}, std::move(attrs));
}

Expr softmax(Expr x, int64_t axis) {
  return make_call(make_op_or_die("softmax"), {std::move(x)}, Attrs{{"axis", axis}});
}

}  // namespace op
}  // namespace relax
