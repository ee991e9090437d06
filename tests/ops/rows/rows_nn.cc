// Conformance rows of the neural-network operators: softmax and log_softmax (attribute
// `axis`, default -1), layer_norm and rms_norm (`axes`, default [-1]; `epsilon`), group_norm
// (`num_groups`, channel axis 1), batch_norm (inference; `axis`, default 1), attention
// (`scale`, `causal_mask`), rotary_embedding (`theta`), lstm_scan and gru_scan (the recurrences of an
// LSTM and a GRU, against their plain loops here). The attention rows keep their sizes
// moderate (n, m <= 64) so that the plain-loop reference stays fast.
#include <cmath>

#include "families.h"
#include "reference/reference_nn.h"
#include "rows/rows_nn.h"

namespace relax::ops_test {

namespace {

OpRows softmax_rows() {
  return {
      deduce("softmax", "x: Tensor[(n, 16), float32]", "softmax(x)", "Tensor[(n, 16), float32]"),
      deduce("softmax", "x: Tensor[(n, 16), float32]", "softmax(x, axis=0)", "Tensor[(n, 16), float32]"),
      deduce("softmax", "x: Tensor[(n,), float64]", "softmax(x, axis=-1)", "Tensor[(n,), float64]"),
      deduce("softmax", "x: Tensor[ndim=2, float32]", "softmax(x, axis=1)", "Tensor[ndim=2, float32]"),
      deduce("softmax", "x: Tensor[ndim=?, float32]", "softmax(x, axis=5)", "Tensor[ndim=?, float32]"),
      deduce("softmax", "x: Tensor[(n, 3), ?]", "softmax(x)", "Tensor[(n, 3), ?]"),
      deduce("softmax", "x: Tensor[(n, 4), float32]", "softmax(x, axis=2)",
             error("softmax: axis 2 is out of range for rank 2 (x Tensor[(n, 4), float32])")),
      deduce("softmax", "x: Tensor[(n, 4), float32]", "softmax(x, axis=-3)",
             error("softmax: axis -3 is out of range for rank 2")),
      deduce("softmax", "x: Tensor[(), float32]", "softmax(x)", error("softmax: axis -1 is out of range for rank 0")),
      deduce("softmax", "x: Tensor[(n,), int32]", "softmax(x)",
             error("softmax: argument 0 (x): expected a float tensor, got Tensor[(n,), int32]")),
      deduce("softmax", "x: Tensor[(n,), float32]", "softmax(x, axis=0.5)", error("softmax: attribute `axis`")),
      numeric("softmax", "x: Tensor[(n, 16), float32]", "softmax(x)",
              [](const RefInputs& in) { return softmax(in[0], -1); })
          .range(-5, 5),
      numeric("softmax", "x: Tensor[(n, m), float32]", "softmax(x, axis=0)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 33}}}, [](const RefInputs& in) { return softmax(in[0], 0); })
          .range(-5, 5),
      numeric("softmax", "x: Tensor[(b, n, 7), float32]", "softmax(x, axis=1)",
              {{"b", {1, 2, 3}}, {"n", {1, 13, 300}}}, [](const RefInputs& in) { return softmax(in[0], 1); })
          .range(-30, 30),
      // An empty axis, or empty other dims: an empty result.
      numeric("softmax", "x: Tensor[(n, m), float32]", "softmax(x, axis=1)", {{"n", {3, 4, 0}}, {"m", {5, 0, 2}}},
              [](const RefInputs& in) { return softmax(in[0], 1); }),
      numeric("log_softmax", "x: Tensor[(n, m), float32]", "log_softmax(x, axis=0)",
              {{"n", {3, 0, 4}}, {"m", {5, 2, 0}}}, [](const RefInputs& in) { return log_softmax(in[0], 0); }),
      numeric("softmax", "x: Tensor[(n,), float64]", "softmax(x)",
              [](const RefInputs& in) { return softmax(in[0], -1); })
          .range(-50, 50),
      // log_softmax
      deduce("log_softmax", "x: Tensor[(n, 16), float32]", "log_softmax(x)", "Tensor[(n, 16), float32]"),
      deduce("log_softmax", "x: Tensor[ndim=3, float16]", "log_softmax(x, axis=1)", "Tensor[ndim=3, float16]"),
      deduce("log_softmax", "x: Tensor[ndim=?, float32]", "log_softmax(x, axis=5)", "Tensor[ndim=?, float32]"),
      deduce("log_softmax", "x: Tensor[(n, 4), float32]", "log_softmax(x, axis=2)",
             error("log_softmax: axis 2 is out of range for rank 2 (x Tensor[(n, 4), float32])")),
      deduce("log_softmax", "x: Tensor[(n,), int32]", "log_softmax(x)",
             error("log_softmax: argument 0 (x): expected a float tensor, got Tensor[(n,), int32]")),
      deduce("log_softmax", "x: Tensor[(n,), float32]", "log_softmax(x, dim=0)",
             error("log_softmax: unknown attribute `dim`")),
      numeric("log_softmax", "x: Tensor[(n, 16), float32]", "log_softmax(x)",
              [](const RefInputs& in) { return log_softmax(in[0], -1); })
          .range(-5, 5),
      numeric("log_softmax", "x: Tensor[(b, n, 7), float32]", "log_softmax(x, axis=1)",
              {{"b", {1, 2, 3}}, {"n", {1, 13, 300}}}, [](const RefInputs& in) { return log_softmax(in[0], 1); })
          .range(-30, 30),
      numeric("log_softmax", "x: Tensor[(n, 33), float16]", "log_softmax(x)",
              [](const RefInputs& in) { return log_softmax(in[0], -1); })
          .range(-4, 4),
      numeric("log_softmax", "x: Tensor[(n, 33), bfloat16]", "log_softmax(x, axis=0)",
              [](const RefInputs& in) { return log_softmax(in[0], 0); })
          .range(-4, 4),
  };
}

// lstm_scan's plain loops, in double: every (hidden, cell) state step by step; gates in the
// order input, output, forget, cell.
HostTensor lstm_scan_reference(const RefInputs& in) {
  const HostTensor &gx = in[0], &r = in[1], &h0 = in[2], &c0 = in[3];
  const int64_t steps = gx.shape[0], batch = gx.shape[1], hidden = r.shape[1];
  HostTensor s = HostTensor::filled({steps + 1, batch, 2, hidden}, gx.dtype);
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < hidden; ++j) {
      s.at({0, b, 0, j}) = h0.at({b, j});
      s.at({0, b, 1, j}) = c0.at({b, j});
    }
    for (int64_t t = 0; t < steps; ++t) {
      std::vector<double> g(static_cast<size_t>(4 * hidden));
      for (int64_t q = 0; q < 4 * hidden; ++q) {
        double v = gx.at({t, b, q});
        for (int64_t k = 0; k < hidden; ++k) v += r.at({q, k}) * s.at({t, b, 0, k});
        g[static_cast<size_t>(q)] = v;
      }
      for (int64_t j = 0; j < hidden; ++j) {
        auto gate = [&](int64_t which) { return g[static_cast<size_t>(which * hidden + j)]; };
        const double c = sigmoid(gate(2)) * s.at({t, b, 1, j}) + sigmoid(gate(0)) * std::tanh(gate(3));
        s.at({t + 1, b, 1, j}) = c;
        s.at({t + 1, b, 0, j}) = sigmoid(gate(1)) * std::tanh(c);
      }
    }
  }
  return s;
}

// gru_scan's plain loops, in double: every hidden state; gates in the order update, reset, hidden.
HostTensor gru_scan_reference(const RefInputs& in, bool linear_before_reset) {
  const HostTensor &gx = in[0], &r = in[1], &rb = in[2], &h0 = in[3];
  const int64_t steps = gx.shape[0], batch = gx.shape[1], hidden = r.shape[1];
  HostTensor s = HostTensor::filled({steps + 1, batch, hidden}, gx.dtype);
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < hidden; ++j) s.at({0, b, j}) = h0.at({b, j});
    for (int64_t t = 0; t < steps; ++t) {
      auto h = [&](int64_t k) { return s.at({t, b, k}); };
      auto recur = [&](int64_t row, auto&& operand) {
        double v = 0;
        for (int64_t k = 0; k < hidden; ++k) v += r.at({row, k}) * operand(k);
        return v;
      };
      std::vector<double> reset(static_cast<size_t>(hidden));
      for (int64_t k = 0; k < hidden; ++k) reset[static_cast<size_t>(k)] = sigmoid(gx.at({t, b, hidden + k}) + recur(hidden + k, h));
      for (int64_t j = 0; j < hidden; ++j) {
        const double z = sigmoid(gx.at({t, b, j}) + recur(j, h));
        const double q = reset[static_cast<size_t>(j)];
        const double c = linear_before_reset
                             ? std::tanh(gx.at({t, b, 2 * hidden + j}) + q * (recur(2 * hidden + j, h) + rb.at({j})))
                             : std::tanh(gx.at({t, b, 2 * hidden + j}) +
                                         recur(2 * hidden + j, [&](int64_t k) { return reset[static_cast<size_t>(k)] * h(k); }) +
                                         rb.at({j}));
        s.at({t + 1, b, j}) = (1 - z) * c + z * h(j);
      }
    }
  }
  return s;
}

OpRows lstm_rows() {
  const std::string gru =
      "g: Tensor[(t, b, 12), float32], r: Tensor[(12, 4), float32], rb: Tensor[(4,), float32], "
      "h: Tensor[(b, 4), float32]";
  const std::string params =
      "g: Tensor[(t, b, 12), float32], r: Tensor[(12, 3), float32], h: Tensor[(b, 3), float32], "
      "c: Tensor[(b, 3), float32]";
  return {
      deduce("lstm_scan", params, "lstm_scan(g, r, h, c)", "Tensor[(t + 1, b, 2, 3), float32]"),
      deduce("lstm_scan",
             "g: Tensor[(t, b, 4 * k), float32], r: Tensor[(4 * k, k), float32], h: Tensor[(b, k), float32], "
             "c: Tensor[(b, k), float32]",
             "lstm_scan(g, r, h, c)", "Tensor[(t + 1, b, 2, k), float32]"),
      deduce("lstm_scan",
             "g: Tensor[(t, b, 12), float32], r: Tensor[(12, 4), float32], h: Tensor[(b, 4), float32], "
             "c: Tensor[(b, 4), float32]",
             "lstm_scan(g, r, h, c)", error("lstm_scan: argument 1 (r) dim 0 is `12`, expected `16`")),
      deduce("lstm_scan",
             "g: Tensor[(t, b, 12), float32], r: Tensor[(12, 3), float32], h: Tensor[(n, 3), float32], "
             "c: Tensor[(b, 3), float32]",
             "lstm_scan(g, r, h, c)", error("lstm_scan: argument 2 (h0) dim 0 is `n`, expected `b` (the batch")),
      deduce("lstm_scan", "g: Tensor[ndim=3, float32], r: Tensor[ndim=2, float32], h: Tensor[ndim=2, float32], "
                          "c: Tensor[ndim=2, float32]",
             "lstm_scan(g, r, h, c)", "Tensor[ndim=4, float32]"),
      deduce("lstm_scan",
             "g: Tensor[(t, b, 12), float32], r: Tensor[(12, 3), float64], h: Tensor[(b, 3), float32], "
             "c: Tensor[(b, 3), float32]",
             "lstm_scan(g, r, h, c)", error("lstm_scan")),
      numeric("lstm_scan", params, "lstm_scan(g, r, h, c)", {{"t", {0, 1, 9}}, {"b", {1, 3, 2}}},
              [](const RefInputs& in) { return lstm_scan_reference(in); })
          .range(-2, 2),
      // gru_scan
      deduce("gru_scan", gru, "gru_scan(g, r, rb, h)", "Tensor[(t + 1, b, 4), float32]"),
      deduce("gru_scan", gru, "gru_scan(g, r, rb, h, linear_before_reset=true)", "Tensor[(t + 1, b, 4), float32]"),
      deduce("gru_scan",
             "g: Tensor[(t, b, 12), float32], r: Tensor[(12, 4), float32], rb: Tensor[(3,), float32], "
             "h: Tensor[(b, 4), float32]",
             "gru_scan(g, r, rb, h)", error("gru_scan: argument 2 (rb_h) dim 0 is `3`, expected `4`")),
      deduce("gru_scan",
             "g: Tensor[(t, b, 16), float32], r: Tensor[(12, 4), float32], rb: Tensor[(4,), float32], "
             "h: Tensor[(b, 4), float32]",
             "gru_scan(g, r, rb, h)", error("gru_scan: argument 0 (gates_x) dim 2 is `16`, expected `12`")),
      numeric("gru_scan", gru, "gru_scan(g, r, rb, h)", {{"t", {0, 1, 9}}, {"b", {1, 3, 2}}},
              [](const RefInputs& in) { return gru_scan_reference(in, false); })
          .range(-2, 2),
      numeric("gru_scan", gru, "gru_scan(g, r, rb, h, linear_before_reset=true)", {{"t", {1, 7}}, {"b", {2, 1}}},
              [](const RefInputs& in) { return gru_scan_reference(in, true); })
          .range(-2, 2),
  };
}

}  // namespace

OpRows nn_rows() {
  OpRows rows = softmax_rows();
  for (OpRow& row : lstm_rows()) rows.push_back(std::move(row));
  for (OpRows more : {nn_norm_rows(), nn_attention_rows()}) {
    for (OpRow& row : more) rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace relax::ops_test
