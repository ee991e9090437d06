// The references of reference_elementwise.h.
#include "reference/reference_elementwise.h"

#include <cmath>
#include <numbers>

namespace relax::ops_test {
namespace {

// The element of `t` that broadcasts to `out_index` (dims aligned at the end).
double read_broadcast(const HostTensor& t, const std::vector<int64_t>& out_index) {
  std::vector<int64_t> index(t.shape.size());
  const size_t offset = out_index.size() - t.shape.size();
  for (size_t d = 0; d < t.shape.size(); ++d) index[d] = t.shape[d] == 1 ? 0 : out_index[offset + d];
  return t.at(index);
}

}  // namespace

double gelu_ref(double x, bool tanh_form) {
  if (tanh_form) {
    const double inner = std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1 + std::tanh(inner));
  }
  // Phi(x) = erfc(-x / sqrt 2) / 2.
  return x * 0.5 * std::erfc(-x / std::numbers::sqrt2);
}

double sign_ref(double x) {
  if (std::isnan(x)) return x;
  return x > 0 ? 1 : x < 0 ? -1 : 0;
}

double floor_divide_ref(double a, double b, bool integer) {
  if (integer && b == 0) return 0;
  return std::floor(a / b);
}

double mod_ref(double a, double b, bool integer) {
  if (integer && b == 0) return 0;
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

HostTensor map_ternary(const HostTensor& a, const HostTensor& b, const HostTensor& c,
                       const std::function<double(double, double, double)>& f, DataType out) {
  HostTensor y = HostTensor::filled(broadcast_shapes(a.shape, broadcast_shapes(b.shape, c.shape)), out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const std::vector<int64_t> index = unravel(i, y.shape);
    y.values[static_cast<size_t>(i)] =
        f(read_broadcast(a, index), read_broadcast(b, index), read_broadcast(c, index));
  }
  return y;
}

Reference ref_where() {
  return [](const RefInputs& in) -> RefResult {
    return map_ternary(
        in[0], in[1], in[2], [](double c, double x, double y) { return c != 0 ? x : y; }, in[1].dtype);
  };
}

}  // namespace relax::ops_test
