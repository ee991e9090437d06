// Plain-loop references of the neural-network operators (rows_nn.cc) and of linear
// (rows_linalg.cc): the textbook formulas over multi-indices, in double precision.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference/reference.h"

namespace relax::ops_test {

/// x - max - log(sum(exp(x - max))) along `axis`.
HostTensor log_softmax(const HostTensor& x, int64_t axis);

/// (x - mean) / sqrt(var + eps) * gamma + beta over `axes` (gamma and beta have x's dims at
/// `axes`, in that order); population variance.
HostTensor layer_norm(const HostTensor& x, const HostTensor& gamma, const HostTensor& beta,
                      const std::vector<int64_t>& axes, double eps);

/// x / sqrt(mean(x^2) + eps) * weight over `axes`.
HostTensor rms_norm(const HostTensor& x, const HostTensor& weight, const std::vector<int64_t>& axes,
                    double eps);

/// Group normalisation of x (N, C, ...) over `groups` channel groups; gamma, beta (C,).
HostTensor group_norm(const HostTensor& x, const HostTensor& gamma, const HostTensor& beta,
                      int64_t groups, double eps);

/// (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c] for c the index along `axis`.
HostTensor batch_norm(const HostTensor& x, const HostTensor& gamma, const HostTensor& beta,
                      const HostTensor& mean, const HostTensor& var, int64_t axis, double eps);

/// x (..., k) . weight (m, k)^T + bias (broadcast to the result; none when null); `out` dtype.
HostTensor linear(const HostTensor& x, const HostTensor& weight, const HostTensor* bias,
                  DataType out);

/// Scaled dot-product attention on (batch, seq, heads, dim): q (b, n, Hq, d), k (b, m, Hkv, d),
/// v (b, m, Hkv, dv); query head h reads KV head h / (Hq / Hkv); `mask` is "none", "TopLeft"
/// (j <= i) or "BottomRight" (j <= i + m - n); a query that sees no key gives zeros; scale
/// 1 / sqrt(d) when absent.
HostTensor attention(const HostTensor& q, const HostTensor& k, const HostTensor& v,
                     std::optional<double> scale, const std::string& mask);

/// Half-rotation rotary embedding of x (b, s, H, d) at positions (s,) with base `theta`.
HostTensor rotary_embedding(const HostTensor& x, const HostTensor& positions, double theta);

}  // namespace relax::ops_test
