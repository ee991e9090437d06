// The ONNX importer's control flow (onnx_importer.h): If.
//
// An If whose condition is known at import -- exporters write many, on a rank, a dim that is a
// constant, or a sample rate a branch of the model tests -- is decided there: the chosen branch's
// nodes are converted in place and the other is never read. One whose condition is computed at
// run time becomes a graph-level If of the condition (a one-element bool tensor), a symbolic
// condition (`n == 1`) one of a Prim[bool] value; its branches join their annotations (where
// they differ in a dim, the result keeps its rank only).
#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_importer.h"
#include "relax/ir/struct_info.h"

namespace relax::frontend::onnx_detail {
namespace {

Outputs convert_if(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 1); !s.ok()) return s;
  const onnx::AttributeProto* then_attr = find_attr(node, "then_branch");
  const onnx::AttributeProto* else_attr = find_attr(node, "else_branch");
  if (then_attr == nullptr || else_attr == nullptr || !then_attr->has_g() || !else_attr->has_g()) {
    return node_error(node, "needs the graph attributes then_branch and else_branch");
  }
  const Value& cond = *in[0];
  if (cond.known) {
    if (cond.known->size() != 1) {
      return node_error(node, absl::StrCat("its condition has ", cond.known->size(), " elements, expected one"));
    }
    SymExpr c = (*cond.known)[0];
    if (!cond.known_dtype.is_bool()) c = c != SymExpr(0);
    c = im.builder().analyzer().simplify(c);
    if (std::optional<int64_t> decided = c.as_const()) {
      return im.host().inline_graph(*decided != 0 ? then_attr->g() : else_attr->g());
    }
    return im.host().emit_if(node, make_prim_value(c), then_attr->g(), else_attr->g());
  }
  absl::StatusOr<Expr> c = im.tensor(cond, node);
  if (!c.ok()) return c.status();
  const std::optional<DataType> dtype = dtype_of_expr(*c);
  if (!dtype || !dtype->is_bool()) {
    return node_error(node, absl::StrCat("its condition is ", c->struct_info().to_string(), ", expected a bool tensor"));
  }
  return im.host().emit_if(node, *c, then_attr->g(), else_attr->g());
}

}  // namespace

void add_control_converters(const AddConverter& add) { add("If", convert_if); }

}  // namespace relax::frontend::onnx_detail
