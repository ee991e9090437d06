// Plain-loop references of the creation operators.
#include "reference/reference_create.h"

#include <cmath>

namespace relax::ops_test {

HostTensor arange(double start, double end, double step, DataType dtype) {
  const double n = std::ceil((end - start) / step);
  HostTensor out = HostTensor::filled({n > 0 ? static_cast<int64_t>(n) : 0}, dtype);
  for (int64_t i = 0; i < out.numel(); ++i) {
    out.values[static_cast<size_t>(i)] = start + static_cast<double>(i) * step;
  }
  return out;
}

HostTensor triangle(const HostTensor& x, int64_t k, bool lower) {
  HostTensor out = x;
  const size_t r = x.shape.size();
  for (int64_t f = 0; f < x.numel(); ++f) {
    const std::vector<int64_t> index = unravel(f, x.shape);
    const int64_t offset = index[r - 1] - index[r - 2];
    if (lower ? offset > k : offset < k) out.values[static_cast<size_t>(f)] = 0;
  }
  return out;
}

}  // namespace relax::ops_test
