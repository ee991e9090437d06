// Constructors of neural-network operator calls: log_softmax, the
// normalisations, attention and rotary embedding. Every one takes float
// tensors and computes in float32 when they are stored as float16 or bfloat16.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "relax/ir/expr.h"

namespace relax::op {

/// x - log(sum(exp(x))) along `axis` (negative counts from the end), computed
/// stably; the result has x's annotation.
Expr log_softmax(Expr x, int64_t axis = -1);

/// (x - mean) / sqrt(var + epsilon) * gamma + beta, the mean and the
/// (population) variance taken over `axes` of x; gamma and beta have x's dims
/// at `axes`, in that order.
Expr layer_norm(Expr x, Expr gamma, Expr beta, std::vector<int64_t> axes = {-1},
                double epsilon = 1e-5);

/// x / sqrt(mean(x^2) + epsilon) * weight over `axes` of x; weight has x's dims
/// at `axes`, in that order.
Expr rms_norm(Expr x, Expr weight, std::vector<int64_t> axes = {-1}, double epsilon = 1e-5);

/// x (N, C, ...) normalised over each of `num_groups` groups of C / num_groups
/// channels (and every spatial dim), then scaled by gamma and shifted by beta,
/// both (C,). C must be provably divisible by num_groups.
Expr group_norm(Expr x, Expr gamma, Expr beta, int64_t num_groups, double epsilon = 1e-5);

/// Inference batch normalisation along x's channel dim `axis`:
/// (x - mean) / sqrt(var + epsilon) * gamma + beta, the four vectors (C,).
/// One tensor result.
Expr batch_norm(Expr x, Expr gamma, Expr beta, Expr mean, Expr var, int64_t axis = 1,
                double epsilon = 1e-5);

/// Scaled dot-product attention on the (batch, seq, heads, head_dim) layout:
/// query (b, n, Hq, d), key (b, m, Hkv, d), value (b, m, Hkv, dv) give
/// (b, n, Hq, dv). Query head h reads KV head h / (Hq / Hkv); `scale` defaults
/// to 1 / sqrt(d); `causal_mask` is "none", "TopLeft" (query i sees keys
/// j <= i) or "BottomRight" (j <= i + m - n, the KV-cache form). A query that
/// sees no key gives zeros.
Expr attention(Expr query, Expr key, Expr value, std::optional<double> scale = std::nullopt,
               std::string causal_mask = "none");

/// Rotary position embedding, half-rotation (Llama) form: x (b, s, heads, d),
/// d even, positions (s,) of an integer dtype (shared by every batch row) or
/// (b, s) (one row per batch row: sequences at different lengths of a KV
/// cache); with h = d / 2 and angle = positions[p] * theta^(-2i/d),
/// out[i] = x[i] cos - x[i+h] sin and out[i+h] = x[i+h] cos + x[i] sin.
Expr rotary_embedding(Expr x, Expr positions, double theta = 10000);

/// The recurrence of an LSTM: gates_x (T, B, 4H), what each step's gates take from its input
/// (x_t W^T plus both biases; gates in the order input, output, forget, cell), r (4H, H) the
/// recurrence weight, h0 and c0 (B, H) the initial states. Returns every state, (T + 1, B, 2, H):
/// [t, b, 0] the hidden and [t, b, 1] the cell state after t steps ([0] holds h0, c0). Each step
/// computes g = gates_x[t] + h r^T, c = sigmoid(g_f) c + sigmoid(g_i) tanh(g_c) and
/// h = sigmoid(g_o) tanh(c).
Expr lstm_scan(Expr gates_x, Expr r, Expr h0, Expr c0);

/// The recurrence of a GRU: gates_x (T, B, 3H), what each step's gates take from its input
/// (x_t W^T + Wb, plus the update and reset gates' recurrence biases; order update z, reset r,
/// hidden h), r (3H, H) the recurrence weight, rb_h (H,) the hidden gate's recurrence bias, h0
/// (B, H). Returns every hidden state, (T + 1, B, H) ([0] is h0). Each step: z = sigmoid(g_z +
/// h r_z^T), q = sigmoid(g_r + h r_r^T), c = tanh(g_h + (q * h) r_h^T + rb_h) (or, with
/// linear_before_reset, tanh(g_h + q * (h r_h^T + rb_h))), h' = (1 - z) c + z h.
Expr gru_scan(Expr gates_x, Expr r, Expr rb_h, Expr h0, bool linear_before_reset = false);

}  // namespace relax::op
