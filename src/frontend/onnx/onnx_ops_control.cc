// The ONNX importer's control flow (onnx_importer.h): If and Loop.
//
// An If whose condition is known at import -- exporters write many, on a rank, a dim that is a
// constant, or a sample rate a branch of the model tests -- is decided there: the chosen branch's
// nodes are converted in place and the other is never read. One whose condition is computed at
// run time becomes a graph-level If of the condition (a one-element bool tensor), a symbolic
// condition (`n == 1`) one of a Prim[bool] value; its branches join their annotations (where
// they differ in a dim, the result keeps its rank only).
//
// A Loop becomes a private recursive function of the module (GraphImport::emit_loop): its
// parameters are the iteration number, M, the condition, the carried values, the scan outputs
// gathered so far and the enclosing graph's values the body reads; it runs the body and calls
// itself while i < M and the condition holds.
#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_importer.h"
#include "relax/ir/op/manipulate.h"
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

// Input `i` of a Loop (M or cond) as a rank-0 tensor of `dtype`, or undefined when omitted.
absl::StatusOr<Expr> loop_scalar(Importer& im, const onnx::NodeProto& node, const Inputs& in, size_t i, DataType dtype,
                                 const char* what) {
  if (i >= in.size() || in[i] == nullptr) return Expr();
  absl::StatusOr<Expr> e = im.tensor(*in[i], node);
  if (!e.ok()) return e.status();
  const std::optional<DataType> have = dtype_of_expr(*e);
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of(*e);
  bool one = dims.has_value();
  for (const SymExpr& d : dims.value_or(std::vector<SymExpr>())) one = one && d.is_const(1);
  if (!have || *have != dtype || !one) {
    return node_error(node, absl::StrCat("its ", what, " is ", e->struct_info().to_string(), ", expected one ", dtype.to_string()));
  }
  return dims->empty() ? *e : im.emit(op::reshape(*e, std::vector<SymExpr>{}));
}

Outputs convert_loop(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  const onnx::AttributeProto* body = find_attr(node, "body");
  if (body == nullptr || !body->has_g()) return node_error(node, "needs the graph attribute body");
  LoopInputs loop;
  absl::StatusOr<Expr> trips = loop_scalar(im, node, in, 0, DataType::int64(), "trip count M");
  if (!trips.ok()) return trips.status();
  absl::StatusOr<Expr> cond = loop_scalar(im, node, in, 1, DataType::boolean(), "condition");
  if (!cond.ok()) return cond.status();
  loop.trips = *trips;
  loop.cond = *cond;
  if (!in.empty() && in[0] != nullptr && in[0]->known && in[0]->known->size() == 1) loop.known_trips = (*in[0]->known)[0];
  loop.cond_known_true = in.size() < 2 || in[1] == nullptr;
  if (!loop.cond_known_true && in[1]->known && in[1]->known->size() == 1) {
    const std::optional<int64_t> c = (*in[1]->known)[0].as_const();
    loop.cond_known_true = c && *c != 0;
  }
  for (size_t i = 2; i < in.size(); ++i) {
    if (in[i] == nullptr) return node_error(node, absl::StrCat("its loop-carried input ", i, " is omitted"));
    absl::StatusOr<Expr> v = im.tensor(*in[i], node);
    if (!v.ok()) return v.status();
    loop.carried.push_back(*v);
  }
  return im.host().emit_loop(node, loop, body->g());
}

}  // namespace

void add_control_converters(const AddConverter& add) {
  add("If", convert_if);
  add("Loop", convert_loop);
}

}  // namespace relax::frontend::onnx_detail
