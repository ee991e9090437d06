// Linear algebra: matmul, with the semantics of numpy.matmul.
//
// A rank-1 lhs is a row vector and a rank-1 rhs a column vector (the unit dim
// is dropped from the result); leading dims beyond the last two are batch dims
// and broadcast like elementwise operands. The inner dims (lhs's last, rhs's
// second to last) must be provably equal: a matmul whose validity depends on
// run-time values needs an explicit match_cast first.
#include <algorithm>

#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

absl::StatusOr<StructInfo> deduce_matmul(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "matmul";
  absl::StatusOr<const TensorStructInfoNode*> lhs_or = detail::tensor_arg(call, 0, op, "lhs");
  if (!lhs_or.ok()) return lhs_or.status();
  absl::StatusOr<const TensorStructInfoNode*> rhs_or = detail::tensor_arg(call, 1, op, "rhs");
  if (!rhs_or.ok()) return rhs_or.status();
  const TensorStructInfoNode& lhs = **lhs_or;
  const TensorStructInfoNode& rhs = **rhs_or;
  absl::StatusOr<std::optional<DataType>> dtype = detail::join_dtypes(op, lhs, rhs);
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<Device> device = detail::join_devices(op, lhs, rhs);
  if (!device.ok()) return device.status();

  const char* roles[] = {"lhs", "rhs"};
  const TensorStructInfoNode* operands[] = {&lhs, &rhs};
  for (size_t i = 0; i < 2; ++i) {
    if (operands[i]->ndim == 0) {
      return detail::op_error(op, detail::arg_label(i, roles[i]) +
                                      ": expected a tensor of rank >= 1, got " +
                                      call.args[i].struct_info().to_string());
    }
  }
  if (lhs.ndim == kUnknownNDim || rhs.ndim == kUnknownNDim) {
    return tensor_sinfo_rank(kUnknownNDim, *dtype, *device);
  }
  int lhs_batch = std::max(lhs.ndim - 2, 0);
  int rhs_batch = std::max(rhs.ndim - 2, 0);
  int out_ndim = std::max(lhs_batch, rhs_batch) + (lhs.ndim > 1) + (rhs.ndim > 1);
  if (!lhs.shape || !rhs.shape) return tensor_sinfo_rank(out_ndim, *dtype, *device);

  const std::vector<SymExpr>& a = *lhs.shape;
  const std::vector<SymExpr>& b = *rhs.shape;
  std::string context = " (lhs " + call.args[0].struct_info().to_string() + ", rhs " +
                        call.args[1].struct_info().to_string() + ")";
  size_t a_inner = a.size() - 1;
  size_t b_inner = b.size() == 1 ? 0 : b.size() - 2;
  if (!structural_equal(a[a_inner], b[b_inner]) &&
      !ctx.analyzer.prove_equal(a[a_inner], b[b_inner])) {
    return detail::op_error(op, "inner dims differ: lhs dim " + std::to_string(a_inner) + " is " +
                                    detail::quoted(a[a_inner]) + ", rhs dim " +
                                    std::to_string(b_inner) + " is " + detail::quoted(b[b_inner]) +
                                    context);
  }
  std::vector<SymExpr> a_batch(a.begin(), a.begin() + lhs_batch);
  std::vector<SymExpr> b_batch(b.begin(), b.begin() + rhs_batch);
  absl::StatusOr<std::vector<SymExpr>> out =
      detail::broadcast_shapes(a_batch, b_batch, ctx.analyzer, op, "batch dim", context);
  if (!out.ok()) return out.status();
  if (lhs.ndim > 1) out->push_back(a[a.size() - 2]);
  if (rhs.ndim > 1) out->push_back(b.back());
  return tensor_sinfo(std::move(*out), *dtype, *device);
}

}  // namespace

namespace detail {

void register_linalg_ops(OpTable& table) {
  table.add("matmul", 2, deduce_matmul, "matrix product with numpy.matmul semantics");
}

}  // namespace detail

namespace op {

Expr matmul(Expr lhs, Expr rhs) {
  return make_call(make_op_or_die("matmul"), {std::move(lhs), std::move(rhs)});
}

}  // namespace op
}  // namespace relax
