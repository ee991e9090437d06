// Plain-loop references of the neural-network operators, in double precision.
#include "reference/reference_nn.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "relax/support/check.h"

namespace relax::ops_test {
namespace {

double plus(double a, double b) { return a + b; }

// The element count of x's dims at `axes`.
double count_at(const HostTensor& x, const std::vector<int64_t>& axes) {
  double n = 1;
  for (int64_t a : axes) n *= static_cast<double>(x.shape[static_cast<size_t>(normalize_axis(a, x.ndim()))]);
  return n;
}

// Index of a parameter over x's dims at `axes` (in that order), from x's index.
std::vector<int64_t> param_index(const HostTensor& x, const std::vector<int64_t>& index,
                                 const std::vector<int64_t>& axes) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(index[static_cast<size_t>(normalize_axis(a, x.ndim()))]);
  return out;
}

// `index` with the dims of `axes` set to 0 (an index into a keepdims reduction).
std::vector<int64_t> kept_index(const HostTensor& x, std::vector<int64_t> index,
                                const std::vector<int64_t>& axes) {
  for (int64_t a : axes) index[static_cast<size_t>(normalize_axis(a, x.ndim()))] = 0;
  return index;
}

}  // namespace

HostTensor log_softmax(const HostTensor& x, int64_t axis) {
  const int64_t ax = normalize_axis(axis, x.ndim());
  const double ninf = -std::numeric_limits<double>::infinity();
  HostTensor mx = reduce(x, {ax}, true, ninf, [](double a, double v) { return std::max(a, v); });
  HostTensor shifted = map_binary(x, mx, [](double v, double m) { return v - m; });
  HostTensor total = reduce(map_unary(shifted, [](double v) { return std::exp(v); }), {ax}, true, 0, plus);
  return map_binary(shifted, total, [](double v, double s) { return v - std::log(s); });
}

HostTensor layer_norm(const HostTensor& x, const HostTensor& gamma, const HostTensor& beta,
                      const std::vector<int64_t>& axes, double eps) {
  const double n = count_at(x, axes);
  HostTensor mean = reduce(x, axes, true, 0, plus);
  for (double& v : mean.values) v /= n;
  HostTensor dev = map_binary(x, mean, [](double v, double m) { return (v - m) * (v - m); });
  HostTensor var = reduce(dev, axes, true, 0, plus);
  for (double& v : var.values) v /= n;
  HostTensor y = HostTensor::filled(x.shape, x.dtype);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const std::vector<int64_t> index = unravel(i, x.shape);
    const std::vector<int64_t> k = kept_index(x, index, axes);
    const std::vector<int64_t> p = param_index(x, index, axes);
    y.values[static_cast<size_t>(i)] =
        (x.values[static_cast<size_t>(i)] - mean.at(k)) / std::sqrt(var.at(k) + eps) * gamma.at(p) + beta.at(p);
  }
  return y;
}

HostTensor rms_norm(const HostTensor& x, const HostTensor& weight, const std::vector<int64_t>& axes,
                    double eps) {
  const double n = count_at(x, axes);
  HostTensor sq = reduce(map_unary(x, [](double v) { return v * v; }), axes, true, 0, plus);
  HostTensor y = HostTensor::filled(x.shape, x.dtype);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const std::vector<int64_t> index = unravel(i, x.shape);
    y.values[static_cast<size_t>(i)] = x.values[static_cast<size_t>(i)] /
                                       std::sqrt(sq.at(kept_index(x, index, axes)) / n + eps) *
                                       weight.at(param_index(x, index, axes));
  }
  return y;
}

HostTensor group_norm(const HostTensor& x, const HostTensor& gamma, const HostTensor& beta,
                      int64_t groups, double eps) {
  const int64_t batch = x.shape[0], channels = x.shape[1];
  const int64_t per_group = channels / groups;
  int64_t spatial = 1;  // the product of the dims after the channels (any of them may be 0)
  for (size_t d = 2; d < x.shape.size(); ++d) spatial *= x.shape[d];
  HostTensor y = HostTensor::filled(x.shape, x.dtype);
  // Row-major: the elements of (n, group g) are contiguous.
  const int64_t block = per_group * spatial;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t start = (b * groups + g) * block;
      double mean = 0, var = 0;
      for (int64_t e = 0; e < block; ++e) mean += x.values[static_cast<size_t>(start + e)];
      mean /= static_cast<double>(block);
      for (int64_t e = 0; e < block; ++e) {
        const double d = x.values[static_cast<size_t>(start + e)] - mean;
        var += d * d;
      }
      var /= static_cast<double>(block);
      for (int64_t e = 0; e < block; ++e) {
        const int64_t c = g * per_group + e / spatial;
        const auto at = static_cast<size_t>(start + e);
        y.values[at] = (x.values[at] - mean) / std::sqrt(var + eps) * gamma.values[static_cast<size_t>(c)] +
                       beta.values[static_cast<size_t>(c)];
      }
    }
  }
  return y;
}

HostTensor batch_norm(const HostTensor& x, const HostTensor& gamma, const HostTensor& beta,
                      const HostTensor& mean, const HostTensor& var, int64_t axis, double eps) {
  const auto ax = static_cast<size_t>(normalize_axis(axis, x.ndim()));
  HostTensor y = HostTensor::filled(x.shape, x.dtype);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto c = static_cast<size_t>(unravel(i, x.shape)[ax]);
    y.values[static_cast<size_t>(i)] = (x.values[static_cast<size_t>(i)] - mean.values[c]) /
                                           std::sqrt(var.values[c] + eps) * gamma.values[c] +
                                       beta.values[c];
  }
  return y;
}

HostTensor linear(const HostTensor& x, const HostTensor& weight, const HostTensor* bias, DataType out) {
  HostTensor y = matmul(x, permute_dims(weight, {1, 0}));
  if (bias != nullptr) y = map_binary(y, *bias, plus);
  y.dtype = out;
  return y;
}

HostTensor attention(const HostTensor& q, const HostTensor& k, const HostTensor& v,
                     std::optional<double> scale, const std::string& mask) {
  const int64_t b = q.shape[0], n = q.shape[1], hq = q.shape[2], d = q.shape[3];
  const int64_t m = k.shape[1], hkv = k.shape[2], dv = v.shape[3];
  RELAX_CHECK(hq % hkv == 0) << "attention reference: " << hq << " heads over " << hkv;
  const int64_t group = hq / hkv;
  const double s = scale.value_or(1 / std::sqrt(static_cast<double>(d)));
  HostTensor y = HostTensor::filled({b, n, hq, dv}, q.dtype);
  std::vector<double> p(static_cast<size_t>(m));
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kh = h / group;
      for (int64_t i = 0; i < n; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < m; ++j) {
          const bool seen = mask == "TopLeft" ? j <= i : mask == "BottomRight" ? j <= i + m - n : true;
          double dot = 0;
          for (int64_t c = 0; c < d; ++c) dot += q.at({bi, i, h, c}) * k.at({bi, j, kh, c});
          p[static_cast<size_t>(j)] = seen ? dot * s : -std::numeric_limits<double>::infinity();
          mx = std::max(mx, p[static_cast<size_t>(j)]);
        }
        if (std::isinf(mx)) continue;  // no key seen: zeros
        double total = 0;
        for (double& e : p) total += (e = std::exp(e - mx));
        for (int64_t c = 0; c < dv; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < m; ++j) acc += p[static_cast<size_t>(j)] / total * v.at({bi, j, kh, c});
          y.at({bi, i, h, c}) = acc;
        }
      }
    }
  }
  return y;
}

HostTensor rotary_embedding(const HostTensor& x, const HostTensor& positions, double theta) {
  const int64_t d = x.shape[3], half = d / 2;
  HostTensor y = HostTensor::filled(x.shape, x.dtype);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> index = unravel(i, x.shape);
    const int64_t c = index[3];
    const int64_t pair = c < half ? c : c - half;
    // positions (s,) shared by the batch rows, or (b, s) one row each.
    const double position = positions.shape.size() == 2 ? positions.at({index[0], index[1]})
                                                         : positions.values[static_cast<size_t>(index[1])];
    const double angle = position * std::pow(theta, -2.0 * static_cast<double>(pair) / static_cast<double>(d));
    index[3] = c < half ? c + half : c - half;
    const double other = x.at(index);
    const double self = x.values[static_cast<size_t>(i)];
    y.values[static_cast<size_t>(i)] = c < half ? self * std::cos(angle) - other * std::sin(angle)
                                                : self * std::cos(angle) + other * std::sin(angle);
  }
  return y;
}

}  // namespace relax::ops_test
