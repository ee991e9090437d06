// Plain-loop references of the reductions and scans.
#include "reference/reference_reduce.h"

#include <cmath>

namespace relax::ops_test {
namespace {

// The number of elements folded into each result element.
int64_t reduced_count(const HostTensor& x, const std::vector<int64_t>& axes) {
  if (axes.empty()) return x.numel();
  int64_t count = 1;
  for (int64_t a : axes) count *= x.shape[static_cast<size_t>(normalize_axis(a, x.ndim()))];
  return count;
}

}  // namespace

HostTensor mean(const HostTensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  HostTensor total = reduce(x, axes, keepdims, 0, [](double a, double b) { return a + b; });
  const double count = static_cast<double>(reduced_count(x, axes));
  for (double& v : total.values) v /= count;
  return total;
}

HostTensor variance(const HostTensor& x, const std::vector<int64_t>& axes, bool keepdims, bool take_sqrt) {
  // The mean kept as dims of 1 broadcasts against x.
  const HostTensor m = mean(x, axes, true);
  HostTensor deviations = map_binary(x, m, [](double a, double b) { return (a - b) * (a - b); });
  HostTensor out = mean(deviations, axes, keepdims);
  if (take_sqrt) {
    for (double& v : out.values) v = std::sqrt(v);
  }
  return out;
}

HostTensor arg_extreme(const HostTensor& x, std::optional<int64_t> axis, bool keepdims, bool is_max) {
  // Flattened: the same as along the one dim of a 1-D view.
  const HostTensor view = axis ? x : reshape(x, {x.numel()});
  const int64_t a = axis ? normalize_axis(*axis, x.ndim()) : 0;
  std::vector<int64_t> out_shape = view.shape;
  out_shape[static_cast<size_t>(a)] = 1;
  HostTensor out = HostTensor::filled(out_shape, DataType::int64());
  const int64_t n = view.shape[static_cast<size_t>(a)];
  for (int64_t o = 0; o < out.numel(); ++o) {
    std::vector<int64_t> index = unravel(o, out_shape);
    int64_t best = 0;
    for (int64_t k = 0; k < n; ++k) {
      index[static_cast<size_t>(a)] = k;
      const double v = view.at(index);
      index[static_cast<size_t>(a)] = best;
      const double b = view.at(index);
      if (is_max ? v > b : v < b) best = k;
    }
    out.values[static_cast<size_t>(o)] = static_cast<double>(best);
  }
  if (!axis) {
    out.shape.assign(keepdims ? x.shape.size() : 0, 1);
  } else if (!keepdims) {
    out.shape.erase(out.shape.begin() + a);
  }
  return out;
}

HostTensor scan(const HostTensor& x, std::optional<int64_t> axis, bool is_sum) {
  HostTensor out = axis ? x : reshape(x, {x.numel()});
  const int64_t a = axis ? normalize_axis(*axis, x.ndim()) : 0;
  const int64_t n = out.shape[static_cast<size_t>(a)];
  std::vector<int64_t> others = out.shape;
  others[static_cast<size_t>(a)] = 1;
  for (int64_t o = 0; o < numel_of(others); ++o) {
    std::vector<int64_t> index = unravel(o, others);
    double run = is_sum ? 0 : 1;
    for (int64_t k = 0; k < n; ++k) {
      index[static_cast<size_t>(a)] = k;
      run = is_sum ? run + out.at(index) : run * out.at(index);
      out.at(index) = run;
    }
  }
  return out;
}

}  // namespace relax::ops_test
