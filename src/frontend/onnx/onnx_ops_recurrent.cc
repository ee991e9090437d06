// The ONNX importer's recurrent networks (onnx_importer.h): LSTM.
//
// Per direction, the input projection of every step is one matmul, X W^T + Wb + Rb (T, B, 4H),
// and the recurrence is relax's lstm_scan, which returns every (hidden, cell) state; the three
// outputs are slices of it. A reverse direction reads X flipped along time and flips its Y back.
// What relax does not compute -- other activations, clip, input_forget, peepholes, per-batch
// sequence_lens -- is refused, naming the node.
#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_importer.h"
#include "relax/ir/op/create.h"
#include "relax/ir/op/elementwise.h"
#include "relax/ir/op/linalg.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/op/nn.h"
#include "relax/ir/struct_info.h"

namespace relax::frontend::onnx_detail {
namespace {

// Row `d` of a (D, ...) tensor, the leading dim dropped.
Expr direction_row(Importer& im, const Expr& x, int64_t d) {
  return im.emit(op::squeeze(im.emit(op::strided_slice(x, {0}, {SymExpr(d)}, {SymExpr(d + 1)})), std::vector<int64_t>{0}));
}

// Elements [from, to) of the last axis of a (D, n) tensor's row d.
Expr bias_part(Importer& im, const Expr& b, int64_t d, const SymExpr& from, const SymExpr& to) {
  return im.emit(op::strided_slice(direction_row(im, b, d), {0}, {from}, {to}));
}

Outputs convert_lstm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> xwr = tensors(im, node, in, 3);
  if (!xwr.ok()) return xwr.status();
  const std::string direction = string_attr(node, "direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return node_error(node, absl::StrCat("direction `", direction, "` is not forward, reverse or bidirectional"));
  }
  if (find_attr(node, "clip") != nullptr) return node_error(node, "clip is not supported");
  if (int_attr(node, "input_forget", 0) != 0) return node_error(node, "input_forget = 1 is not supported");
  if (const onnx::AttributeProto* a = find_attr(node, "activations")) {
    for (int i = 0; i < a->strings_size(); ++i) {
      const char* expected = i % 3 == 0 ? "Sigmoid" : "Tanh";
      if (a->strings(i) != expected) {
        return node_error(node, absl::StrCat("activation ", i, " is ", a->strings(i), "; relax computes the default ",
                                             "(Sigmoid, Tanh, Tanh) only"));
      }
    }
  }
  if (in.size() > 4 && in[4] != nullptr) return node_error(node, "sequence_lens is not supported (every sequence runs T steps)");
  if (in.size() > 7 && in[7] != nullptr) return node_error(node, "peepholes (input P) are not supported");
  const bool batch_first = int_attr(node, "layout", 0) != 0;
  Expr x = (*xwr)[0], w = (*xwr)[1], r = (*xwr)[2];
  if (batch_first) x = im.emit(op::permute_dims(x, std::vector<int64_t>{1, 0, 2}));
  std::optional<std::vector<SymExpr>> x_dims = Importer::dims_of(x);
  std::optional<std::vector<SymExpr>> r_dims = Importer::dims_of(r);
  if (!x_dims || x_dims->size() != 3 || !r_dims || r_dims->size() != 3) {
    return node_error(node, "needs X of rank 3 and R of rank 3 with known dims");
  }
  const SymExpr steps = (*x_dims)[0], batch = (*x_dims)[1], hidden = (*r_dims)[2];
  const int64_t hidden_size = int_attr(node, "hidden_size", hidden.as_const().value_or(-1));
  if (!hidden.is_const(hidden_size)) {
    return node_error(node, absl::StrCat("hidden_size is ", hidden_size, " but R is ", r.struct_info().to_string()));
  }
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  const DataType dtype = dtype_of_expr(x).value_or(DataType::float32());
  auto optional_input = [&](size_t i) -> absl::StatusOr<Expr> {
    if (i >= in.size() || in[i] == nullptr) return Expr();
    return im.tensor(*in[i], node);
  };
  absl::StatusOr<Expr> bias = optional_input(3), h_init = optional_input(5), c_init = optional_input(6);
  for (const auto* e : {&bias, &h_init, &c_init}) {
    if (!e->ok()) return e->status();
  }
  std::vector<Expr> ys, hs, cs;
  for (int64_t d = 0; d < directions; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    Expr xd = reverse ? im.emit(op::flip(x, 0)) : x;
    Expr gates = im.emit(op::matmul(xd, im.emit(op::permute_dims(direction_row(im, w, d), std::vector<int64_t>{1, 0}))));
    if (bias->defined()) {
      const SymExpr four = SymExpr(4 * hidden_size), eight = SymExpr(8 * hidden_size);
      Expr both = im.emit(op::add(bias_part(im, *bias, d, 0, four), bias_part(im, *bias, d, four, eight)));
      gates = im.emit(op::add(gates, both));
    }
    auto initial = [&](const Expr& given) {
      return given.defined() ? direction_row(im, given, d)
                             : im.emit(op::zeros(make_shape_expr({batch, SymExpr(hidden_size)}), dtype));
    };
    Expr states = im.emit(op::lstm_scan(gates, direction_row(im, r, d), initial(*h_init), initial(*c_init)));
    // states (T + 1, B, 2, H): Y from steps 1..T, Y_h and Y_c from step T.
    auto pick = [&](const SymExpr& from, const SymExpr& to, int64_t which) {
      Expr part = im.emit(op::strided_slice(states, {0, 2}, {from, SymExpr(which)}, {to, SymExpr(which + 1)}));
      return im.emit(op::squeeze(part, std::vector<int64_t>{2}));
    };
    Expr y = pick(1, steps + 1, 0);
    if (reverse) y = im.emit(op::flip(y, 0));
    ys.push_back(im.emit(op::expand_dims(y, 1)));
    hs.push_back(pick(steps, steps + 1, 0));
    cs.push_back(pick(steps, steps + 1, 1));
  }
  auto joined = [&](const std::vector<Expr>& parts, int64_t axis) {
    return parts.size() == 1 ? parts[0] : im.emit(op::concat(parts, axis));
  };
  Expr y = joined(ys, 1), y_h = joined(hs, 0), y_c = joined(cs, 0);  // (T, D, B, H), (D, B, H)
  if (batch_first) {
    y = im.emit(op::permute_dims(y, std::vector<int64_t>{2, 0, 1, 3}));
    y_h = im.emit(op::permute_dims(y_h, std::vector<int64_t>{1, 0, 2}));
    y_c = im.emit(op::permute_dims(y_c, std::vector<int64_t>{1, 0, 2}));
  }
  return std::vector<Value>{tensor_value(y), tensor_value(y_h), tensor_value(y_c)};
}

}  // namespace

void add_recurrent_converters(const AddConverter& add) { add("LSTM", convert_lstm); }

}  // namespace relax::frontend::onnx_detail
