// The ONNX importer's recurrent networks (onnx_importer.h): LSTM and GRU.
//
// Per direction, the input projection of every step is one matmul, X W^T plus the biases that
// add to it (T, B, 4H or 3H), and the recurrence is relax's lstm_scan or gru_scan, which return
// every state; the outputs are slices of it. A reverse direction reads X flipped along time and
// flips its Y back. What relax does not compute -- other activations, clip, input_forget,
// peepholes, per-batch sequence_lens -- is refused, naming the node.
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

// What an LSTM and a GRU node share: X (time first), W, R, the direction count and the sizes.
struct Recurrence {
  Expr x, w, r;
  SymExpr steps, batch;
  int64_t hidden = 0, directions = 1;
  std::string direction;
  bool batch_first = false;
  DataType dtype = DataType::float32();

  bool reverse(int64_t d) const { return direction == "reverse" || d == 1; }
  // X flipped along time for a reverse direction, times W_d^T (T, B, gates).
  Expr projection(Importer& im, int64_t d) const {
    Expr xd = reverse(d) ? im.emit(op::flip(x, 0)) : x;
    return im.emit(op::matmul(xd, im.emit(op::permute_dims(direction_row(im, w, d), std::vector<int64_t>{1, 0}))));
  }
  // Row d of an initial state (D, B, H), or zeros.
  Expr initial(Importer& im, const Expr& given, int64_t d) const {
    return given.defined() ? direction_row(im, given, d)
                           : im.emit(op::zeros(make_shape_expr({batch, SymExpr(hidden)}), dtype));
  }
};

// The checks and the operands of an LSTM (activations Sigmoid, Tanh, Tanh) or GRU (Sigmoid, Tanh).
absl::StatusOr<Recurrence> recurrence(Importer& im, const onnx::NodeProto& node, const Inputs& in, int activations) {
  absl::StatusOr<std::vector<Expr>> xwr = tensors(im, node, in, 3);
  if (!xwr.ok()) return xwr.status();
  Recurrence rec;
  rec.direction = string_attr(node, "direction", "forward");
  if (rec.direction != "forward" && rec.direction != "reverse" && rec.direction != "bidirectional") {
    return node_error(node, absl::StrCat("direction `", rec.direction, "` is not forward, reverse or bidirectional"));
  }
  if (find_attr(node, "clip") != nullptr) return node_error(node, "clip is not supported");
  if (const onnx::AttributeProto* a = find_attr(node, "activations")) {
    for (int i = 0; i < a->strings_size(); ++i) {
      const char* expected = i % activations == 0 ? "Sigmoid" : "Tanh";
      if (a->strings(i) != expected) {
        return node_error(node, absl::StrCat("activation ", i, " is ", a->strings(i), "; relax computes the default ",
                                             activations == 3 ? "(Sigmoid, Tanh, Tanh)" : "(Sigmoid, Tanh)", " only"));
      }
    }
  }
  if (in.size() > 4 && in[4] != nullptr) return node_error(node, "sequence_lens is not supported (every sequence runs T steps)");
  rec.batch_first = int_attr(node, "layout", 0) != 0;
  rec.x = (*xwr)[0];
  rec.w = (*xwr)[1];
  rec.r = (*xwr)[2];
  if (rec.batch_first) rec.x = im.emit(op::permute_dims(rec.x, std::vector<int64_t>{1, 0, 2}));
  std::optional<std::vector<SymExpr>> x_dims = Importer::dims_of(rec.x);
  std::optional<std::vector<SymExpr>> r_dims = Importer::dims_of(rec.r);
  if (!x_dims || x_dims->size() != 3 || !r_dims || r_dims->size() != 3) {
    return node_error(node, "needs X of rank 3 and R of rank 3 with known dims");
  }
  rec.steps = (*x_dims)[0];
  rec.batch = (*x_dims)[1];
  const SymExpr hidden = (*r_dims)[2];
  rec.hidden = int_attr(node, "hidden_size", hidden.as_const().value_or(-1));
  if (!hidden.is_const(rec.hidden)) {
    return node_error(node, absl::StrCat("hidden_size is ", rec.hidden, " but R is ", rec.r.struct_info().to_string()));
  }
  rec.directions = rec.direction == "bidirectional" ? 2 : 1;
  rec.dtype = dtype_of_expr(rec.x).value_or(DataType::float32());
  return rec;
}

absl::StatusOr<Expr> optional_input(Importer& im, const onnx::NodeProto& node, const Inputs& in, size_t i) {
  if (i >= in.size() || in[i] == nullptr) return Expr();
  return im.tensor(*in[i], node);
}

// Y (T, D, B, H) from each direction's (T, B, H) and the final states (D, B, H) from each's
// (1, B, H), put back batch first for layout 1.
std::vector<Value> recurrence_outputs(Importer& im, const Recurrence& rec, const std::vector<Expr>& ys,
                                      std::vector<std::vector<Expr>> states) {
  auto joined = [&](const std::vector<Expr>& parts, int64_t axis) {
    return parts.size() == 1 ? parts[0] : im.emit(op::concat(parts, axis));
  };
  Expr y = joined(ys, 1);
  if (rec.batch_first) y = im.emit(op::permute_dims(y, std::vector<int64_t>{2, 0, 1, 3}));
  std::vector<Value> out = {tensor_value(y)};
  for (const std::vector<Expr>& parts : states) {
    Expr s = joined(parts, 0);
    if (rec.batch_first) s = im.emit(op::permute_dims(s, std::vector<int64_t>{1, 0, 2}));
    out.push_back(tensor_value(s));
  }
  return out;
}

Outputs convert_lstm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (int_attr(node, "input_forget", 0) != 0) return node_error(node, "input_forget = 1 is not supported");
  if (in.size() > 7 && in[7] != nullptr) return node_error(node, "peepholes (input P) are not supported");
  absl::StatusOr<Recurrence> rec = recurrence(im, node, in, 3);
  if (!rec.ok()) return rec.status();
  absl::StatusOr<Expr> bias = optional_input(im, node, in, 3), h_init = optional_input(im, node, in, 5),
                       c_init = optional_input(im, node, in, 6);
  for (const auto* e : {&bias, &h_init, &c_init}) {
    if (!e->ok()) return e->status();
  }
  const int64_t hidden_size = rec->hidden;
  const SymExpr steps = rec->steps;
  std::vector<Expr> ys, hs, cs;
  for (int64_t d = 0; d < rec->directions; ++d) {
    const bool reverse = rec->reverse(d);
    Expr gates = rec->projection(im, d);
    if (bias->defined()) {
      const SymExpr four = SymExpr(4 * hidden_size), eight = SymExpr(8 * hidden_size);
      Expr both = im.emit(op::add(bias_part(im, *bias, d, 0, four), bias_part(im, *bias, d, four, eight)));
      gates = im.emit(op::add(gates, both));
    }
    auto initial = [&](const Expr& given) { return rec->initial(im, given, d); };
    Expr states = im.emit(op::lstm_scan(gates, direction_row(im, rec->r, d), initial(*h_init), initial(*c_init)));
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
  return recurrence_outputs(im, *rec, ys, {hs, cs});
}

Outputs convert_gru(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<Recurrence> rec = recurrence(im, node, in, 2);
  if (!rec.ok()) return rec.status();
  absl::StatusOr<Expr> bias = optional_input(im, node, in, 3), h_init = optional_input(im, node, in, 5);
  for (const auto* e : {&bias, &h_init}) {
    if (!e->ok()) return e->status();
  }
  const int64_t h = rec->hidden;
  const bool linear_before_reset = int_attr(node, "linear_before_reset", 0) != 0;
  std::vector<Expr> ys, hs;
  for (int64_t d = 0; d < rec->directions; ++d) {
    Expr gates = rec->projection(im, d);
    // Wb (3H) and the update and reset gates' Rb add to the projection; the hidden gate's Rb
    // goes to gru_scan (the reset gate may multiply it).
    Expr rb_h;
    if (bias->defined()) {
      Expr wb = bias_part(im, *bias, d, 0, SymExpr(3 * h));
      Expr rb_zr = bias_part(im, *bias, d, SymExpr(3 * h), SymExpr(5 * h));
      Expr zero_h = im.emit(op::zeros(make_shape_expr({SymExpr(h)}), rec->dtype));
      gates = im.emit(op::add(gates, im.emit(op::add(wb, im.emit(op::concat(std::vector<Expr>{rb_zr, zero_h}, 0))))));
      rb_h = bias_part(im, *bias, d, SymExpr(5 * h), SymExpr(6 * h));
    } else {
      rb_h = im.emit(op::zeros(make_shape_expr({SymExpr(h)}), rec->dtype));
    }
    Expr states = im.emit(op::gru_scan(gates, direction_row(im, rec->r, d), rb_h, rec->initial(im, *h_init, d),
                                       linear_before_reset));
    // states (T + 1, B, H): Y from steps 1..T, Y_h from step T.
    Expr y = im.emit(op::strided_slice(states, {0}, {SymExpr(1)}, {rec->steps + 1}));
    if (rec->reverse(d)) y = im.emit(op::flip(y, 0));
    ys.push_back(im.emit(op::expand_dims(y, 1)));
    hs.push_back(im.emit(op::strided_slice(states, {0}, {rec->steps}, {rec->steps + 1})));
  }
  return recurrence_outputs(im, *rec, ys, {hs});
}

}  // namespace

void add_recurrent_converters(const AddConverter& add) {
  add("GRU", convert_gru);
  add("LSTM", convert_lstm);
}

}  // namespace relax::frontend::onnx_detail
