// Recurrent networks: the step-by-step part of an LSTM, whose every step needs the state the
// step before it made.
//
// lstm_scan(gates_x, r, h0, c0): gates_x (T, B, 4H) holds what each step's gates take from its
// input, x_t W^T plus both biases, the gates in the order input, output, forget, cell (ONNX's);
// r (4H, H) is the recurrence weight in the same order, h0 and c0 (B, H) the initial hidden and
// cell states. The result (T + 1, B, 2, H) holds every state: [t, b, 0] the hidden and
// [t, b, 1] the cell state after t steps ([0] is (h0, c0)), so that one tensor gives an LSTM's
// three outputs (Y = [1:, :, 0], Y_h = [T, :, 0], Y_c = [T, :, 1]) and T = 0 is no special case.
// Each step, with g = gates_x[t, b] + r h_{t-1}:
//   i = sigmoid(g_i), o = sigmoid(g_o), f = sigmoid(g_f), c~ = tanh(g_c)
//   c_t = f c_{t-1} + i c~,  h_t = o tanh(c_t)
// The input projection, the bulk of the arithmetic, is a matmul before the call (one for all
// steps); what is left is the recurrence, a serial loop over the steps inside one block per
// batch row (the rows are independent and run in parallel):
//   block lstm_scan(b) { S[0, b] = (h0[b], c0[b])
//                        for t { for q { gates[b, q] = X[t, b, q] + sum_k R[q, k] S[t, b, 0, k] }
//                                for j { S[t + 1, b, 1, j] = c; S[t + 1, b, 0, j] = h } } }
// The gates of a row live in a (B, 4H) workspace, in float32 for 16-bit dtypes.
//
// gru_scan(gates_x, r, rb_h, h0, linear_before_reset=false) is a GRU's recurrence the same way:
// gates_x (T, B, 3H) holds x_t W^T + Wb plus the update and reset gates' recurrence biases, in
// the order update (z), reset (r), hidden (h) (ONNX's); r (3H, H) the recurrence weight; rb_h (H,)
// the hidden gate's recurrence bias, which stays apart because the reset gate multiplies it in
// one of the two forms; h0 (B, H). The result (T + 1, B, H) holds every hidden state. Each step:
//   z = sigmoid(g_z + h r_z^T), q = sigmoid(g_r + h r_r^T)
//   c = tanh(g_h + (q * h) r_h^T + rb_h)          (linear_before_reset = false)
//   c = tanh(g_h + q * (h r_h^T + rb_h))          (linear_before_reset = true)
//   h' = (1 - z) c + z h
#include "ir/op/nn_common.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/nn.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary
using Vars = std::vector<SymVar>;

// What both recurrences check: argument ranks (`ranks`), one dtype, gates_x (T, B, G * H) and r
// (G * H, H) for G `gates` per step, the state arguments `states` (B, H) and the bias `bias` (H,).
// The dims (T, B, H) when gates_x and r are known.
struct RecurrenceDims {
  SymExpr steps, batch, hidden;
};
absl::StatusOr<std::optional<RecurrenceDims>> check_recurrence(const CallNode& call, DeduceContext& ctx,
                                                               const std::vector<int>& ranks, int64_t gates,
                                                               const std::vector<size_t>& states,
                                                               std::optional<size_t> bias,
                                                               std::optional<DataType>* dtype) {
  std::vector<size_t> all;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (absl::Status s = require_rank(call, i, ranks[i]); !s.ok()) return s;
    all.push_back(i);
  }
  absl::StatusOr<std::optional<DataType>> shared = shared_dtype(call, all);
  if (!shared.ok()) return shared.status();
  *dtype = *shared;
  const TensorStructInfoNode& gx = tensor_of(call, 0);
  const TensorStructInfoNode& r = tensor_of(call, 1);
  if (!gx.shape || !r.shape) return std::optional<RecurrenceDims>();
  RecurrenceDims dims{(*gx.shape)[0], (*gx.shape)[1], (*r.shape)[1]};
  const SymExpr rows = ctx.analyzer.simplify(dims.hidden * gates);
  const std::string what = std::to_string(gates) + " * the hidden size, r dim 1";
  if (absl::Status s = require_dim(call, ctx, 1, 0, rows, what); !s.ok()) return s;
  if (absl::Status s = require_dim(call, ctx, 0, 2, rows, what); !s.ok()) return s;
  for (size_t state : states) {
    if (!tensor_of(call, state).shape) continue;
    if (absl::Status s = require_dim(call, ctx, state, 0, dims.batch, "the batch, gates_x dim 1"); !s.ok()) return s;
    if (absl::Status s = require_dim(call, ctx, state, 1, dims.hidden, "the hidden size, r dim 1"); !s.ok()) return s;
  }
  if (bias && tensor_of(call, *bias).shape) {
    if (absl::Status s = require_dim(call, ctx, *bias, 0, dims.hidden, "the hidden size, r dim 1"); !s.ok()) return s;
  }
  return std::optional<RecurrenceDims>(dims);
}

absl::StatusOr<StructInfo> deduce_lstm_scan(const CallNode& call, const NoAttrs&, DeduceContext& ctx) {
  std::optional<DataType> dtype;
  absl::StatusOr<std::optional<RecurrenceDims>> dims = check_recurrence(call, ctx, {3, 2, 2, 2}, 4, {2, 3}, std::nullopt, &dtype);
  if (!dims.ok()) return dims.status();
  const TensorStructInfoNode& gx = tensor_of(call, 0);
  if (!*dims) return tensor_sinfo_rank(4, dtype, gx.device);
  return tensor_sinfo({ctx.analyzer.simplify((*dims)->steps + 1), (*dims)->batch, 2, (*dims)->hidden}, dtype, gx.device);
}

// Every argument (named by `roles`, in order) and the result known in shape and dtype: the
// result's annotation.
absl::StatusOr<const TensorStructInfoNode*> known_call(const CallNode& call, const std::string& op,
                                                       std::initializer_list<const char*> roles) {
  size_t index = 0;
  for (const char* role : roles) {
    absl::StatusOr<const TensorStructInfoNode*> t = known_tensor(call, index++, op, role);
    if (!t.ok()) return t.status();
  }
  return known_result(call, op, DtypeClass::kFloat);
}

absl::StatusOr<Lowering> legalize_lstm_scan(const CallNode& call, const NoAttrs&, Analyzer&) {
  const std::string op = "lstm_scan";
  absl::StatusOr<const TensorStructInfoNode*> out = known_call(call, op, {"gates_x", "r", "h0", "c0"});
  if (!out.ok()) return out.status();
  const std::vector<SymExpr>& gx_dims = *tensor_of(call, 0).shape;
  const std::vector<SymExpr>& r_dims = *tensor_of(call, 1).shape;
  const SymExpr steps = gx_dims[0], batch = gx_dims[1], gates = r_dims[0], hidden = r_dims[1];
  const std::vector<SymExpr> state_dims = {batch, hidden};
  const std::vector<SymExpr> out_dims = (*out)->shape.value();
  KernelBuilder kb(op, {{steps, batch, gates}, {gates, hidden}, state_dims, state_dims, out_dims});
  Buffer x = kb.input("X", call.args[0], {steps, batch, gates});
  Buffer r = kb.input("R", call.args[1], {gates, hidden});
  Buffer h0 = kb.input("H0", call.args[2], state_dims);
  Buffer c0 = kb.input("C0", call.args[3], state_dims);
  Buffer s = kb.output("S", **out, out_dims);
  PrimFuncBuilder& pb = kb.body();
  const DataType dtype = *(*out)->dtype;
  const DataType acc = compute_dtype(dtype);
  const SymExpr t_end = x.shape()[0], b_end = x.shape()[1], g_end = r.shape()[0], h_end = r.shape()[1];
  Buffer g = pb.allocate("gates", {b_end, g_end}, acc, BufferScope::kWorkspace);
  loop_block(pb, op, {b_end}, {}, nullptr, [&](const Vars& v, const Vars&) {
    const SymExpr b = v[0];
    pb.for_("j", 0, h_end, [&](SymVar j) {
      pb.store(s, {SymExpr(0), b, SymExpr(0), j}, buffer_load(h0, {b, j}));
      pb.store(s, {SymExpr(0), b, SymExpr(1), j}, buffer_load(c0, {b, j}));
    });
    pb.for_("t", 0, t_end, [&](SymVar t) {
      pb.for_("q", 0, g_end, [&](SymVar q) {
        pb.store(g, {b, q}, load_as(x, {t, b, q}, acc));
        pb.for_("k", 0, h_end, [&](SymVar k) {
          pb.store(g, {b, q},
                   buffer_load(g, {b, q}) + load_as(r, {q, k}, acc) * load_as(s, {t, b, SymExpr(0), k}, acc));
        });
      });
      pb.for_("j", 0, h_end, [&](SymVar j) {
        auto gate = [&](int64_t which) { return buffer_load(g, {b, SymExpr(j) + h_end * which}); };
        const SymExpr in = sigmoid(gate(0)), keep = sigmoid(gate(2)), out_gate = sigmoid(gate(1));
        const SymExpr cell = keep * load_as(s, {t, b, SymExpr(1), j}, acc) + in * tanh(gate(3));
        pb.store(s, {SymExpr(t) + 1, b, SymExpr(1), j}, as_dtype(cell, dtype));
        pb.store(s, {SymExpr(t) + 1, b, SymExpr(0), j}, as_dtype(out_gate * tanh(cell), dtype));
      });
    });
  });
  return kb.finish();
}

struct GruAttrs {
  bool linear_before_reset = false;
  template <typename V>
  void fields(V& v) {
    v("linear_before_reset", linear_before_reset);
  }
};

absl::StatusOr<StructInfo> deduce_gru_scan(const CallNode& call, const GruAttrs&, DeduceContext& ctx) {
  std::optional<DataType> dtype;
  absl::StatusOr<std::optional<RecurrenceDims>> dims = check_recurrence(call, ctx, {3, 2, 1, 2}, 3, {3}, 2, &dtype);
  if (!dims.ok()) return dims.status();
  const TensorStructInfoNode& gx = tensor_of(call, 0);
  if (!*dims) return tensor_sinfo_rank(3, dtype, gx.device);
  return tensor_sinfo({ctx.analyzer.simplify((*dims)->steps + 1), (*dims)->batch, (*dims)->hidden}, dtype, gx.device);
}

absl::StatusOr<Lowering> legalize_gru_scan(const CallNode& call, const GruAttrs& attrs, Analyzer&) {
  const std::string op = "gru_scan";
  absl::StatusOr<const TensorStructInfoNode*> out = known_call(call, op, {"gates_x", "r", "rb_h", "h0"});
  if (!out.ok()) return out.status();
  const std::vector<SymExpr>& gx_dims = *tensor_of(call, 0).shape;
  const std::vector<SymExpr>& r_dims = *tensor_of(call, 1).shape;
  const SymExpr steps = gx_dims[0], batch = gx_dims[1], gates = r_dims[0], hidden = r_dims[1];
  const std::vector<SymExpr> out_dims = (*out)->shape.value();
  KernelBuilder kb(op, {{steps, batch, gates}, {gates, hidden}, {hidden}, {batch, hidden}, out_dims});
  Buffer x = kb.input("X", call.args[0], {steps, batch, gates});
  Buffer r = kb.input("R", call.args[1], {gates, hidden});
  Buffer rb = kb.input("RBH", call.args[2], {hidden});
  Buffer h0 = kb.input("H0", call.args[3], {batch, hidden});
  Buffer s = kb.output("S", **out, out_dims);
  PrimFuncBuilder& pb = kb.body();
  const DataType dtype = *(*out)->dtype;
  const DataType acc = compute_dtype(dtype);
  const SymExpr t_end = x.shape()[0], b_end = x.shape()[1], g_end = r.shape()[0], h_end = r.shape()[1];
  Buffer g = pb.allocate("gates", {b_end, g_end}, acc, BufferScope::kWorkspace);
  loop_block(pb, op, {b_end}, {}, nullptr, [&](const Vars& v, const Vars&) {
    const SymExpr b = v[0];
    pb.for_("j", 0, h_end, [&](SymVar j) { pb.store(s, {SymExpr(0), b, j}, buffer_load(h0, {b, j})); });
    pb.for_("t", 0, t_end, [&](SymVar t) {
      auto h_prev = [&](const SymExpr& k) { return load_as(s, {t, b, k}, acc); };
      auto reset = [&](const SymExpr& k) { return sigmoid(buffer_load(g, {b, h_end + k})); };
      // The update and reset gates: input part plus h r^T.
      pb.for_("q", 0, h_end * 2, [&](SymVar q) {
        pb.store(g, {b, q}, load_as(x, {t, b, q}, acc));
        pb.for_("k", 0, h_end, [&](SymVar k) {
          pb.store(g, {b, q}, buffer_load(g, {b, q}) + load_as(r, {q, k}, acc) * h_prev(k));
        });
      });
      // The hidden gate's recurrence part: (q * h) r_h^T + rb_h, or h r_h^T + rb_h.
      pb.for_("q", 0, h_end, [&](SymVar q) {
        const SymExpr row = h_end * 2 + q;
        pb.store(g, {b, row}, load_as(rb, {q}, acc));
        pb.for_("k", 0, h_end, [&](SymVar k) {
          const SymExpr h = attrs.linear_before_reset ? h_prev(k) : reset(k) * h_prev(k);
          pb.store(g, {b, row}, buffer_load(g, {b, row}) + load_as(r, {row, k}, acc) * h);
        });
      });
      pb.for_("j", 0, h_end, [&](SymVar j) {
        const SymExpr z = sigmoid(buffer_load(g, {b, SymExpr(j)}));
        const SymExpr recurrent = buffer_load(g, {b, h_end * 2 + j});
        const SymExpr input = load_as(x, {t, b, h_end * 2 + j}, acc);
        const SymExpr c = tanh(attrs.linear_before_reset ? input + reset(j) * recurrent : input + recurrent);
        const SymExpr one = SymExpr::float_imm(1.0, acc);
        pb.store(s, {SymExpr(t) + 1, b, j}, as_dtype((one - z) * c + z * h_prev(j), dtype));
      });
    });
  });
  return kb.finish();
}

}  // namespace

void register_nn_recurrent_ops(OpTable& table) {
  table.def<GruAttrs>("gru_scan",
                      "the recurrence of a GRU: every hidden state (T + 1, B, H) from the input gates "
                      "(T, B, 3H, order z r h), the recurrence weight (3H, H), its hidden-gate bias (H,) and h0 (B, H)")
      .arg("gates_x", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("r", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("rb_h", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("h0", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_gru_scan)
      .legalize(legalize_gru_scan);
  table.def("lstm_scan",
            "the recurrence of an LSTM: every (hidden, cell) state (T + 1, B, 2, H) from the input "
            "gates (T, B, 4H, order i o f c), the recurrence weight (4H, H) and h0, c0 (B, H)")
      .arg("gates_x", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("r", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("h0", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("c0", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_lstm_scan)
      .legalize(legalize_lstm_scan);
}

}  // namespace detail

namespace op {

Expr gru_scan(Expr gates_x, Expr r, Expr rb_h, Expr h0, bool linear_before_reset) {
  return make_call(make_op_or_die("gru_scan"), {std::move(gates_x), std::move(r), std::move(rb_h), std::move(h0)},
                   detail::encode_attrs(detail::GruAttrs{linear_before_reset}));
}

Expr lstm_scan(Expr gates_x, Expr r, Expr h0, Expr c0) {
  return make_call(make_op_or_die("lstm_scan"), {std::move(gates_x), std::move(r), std::move(h0), std::move(c0)});
}

}  // namespace op
}  // namespace relax
