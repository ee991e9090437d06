// Elementwise unary math: exp.
//
// The result has the annotation of the operand. Math functions are defined on
// floats only: a tensor of a known integer or bool dtype is an error, one of
// unknown dtype is accepted (its dtype is checked where it becomes known).
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

absl::StatusOr<StructInfo> deduce_float_unary(const std::string& op, const CallNode& call) {
  absl::StatusOr<const TensorStructInfoNode*> x = detail::tensor_arg(call, 0, op, "x");
  if (!x.ok()) return x.status();
  if ((*x)->dtype && !(*x)->dtype->is_float()) {
    return detail::op_error(op, detail::arg_label(0, "x") + ": expected a float tensor, got " +
                                    call.args[0].struct_info().to_string());
  }
  return call.args[0].struct_info();
}

}  // namespace

namespace detail {

void register_unary_ops(OpTable& table) {
  table.add(
      "exp", 1,
      [](const CallNode& call, DeduceContext&) { return deduce_float_unary("exp", call); },
      "elementwise e^x of a float tensor");
}

}  // namespace detail

namespace op {

Expr exp(Expr x) { return make_call(make_op_or_die("exp"), {std::move(x)}); }

}  // namespace op
}  // namespace relax
