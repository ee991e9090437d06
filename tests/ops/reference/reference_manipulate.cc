// Plain-loop references of the manipulation operators (see reference_manipulate.h).
#include "reference/reference_manipulate.h"

#include <algorithm>
#include <cmath>

#include "relax/support/check.h"
#include "relax/support/float_format.h"

namespace relax::ops_test {
namespace {

// Calls f with every multi-index of `shape`, in row-major order.
template <typename F>
void for_each_index(const std::vector<int64_t>& shape, F f) {
  const int64_t n = numel_of(shape);
  for (int64_t flat = 0; flat < n; ++flat) f(unravel(flat, shape));
}

HostTensor flattened(const HostTensor& x) { return reshape(x, {x.numel()}); }

}  // namespace

HostTensor broadcast_to(const HostTensor& x, const std::vector<int64_t>& shape) {
  HostTensor out = HostTensor::filled(shape, x.dtype);
  const size_t offset = shape.size() - x.shape.size();
  for_each_index(shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> at(x.shape.size());
    for (size_t j = 0; j < at.size(); ++j) at[j] = x.shape[j] == 1 ? 0 : i[offset + j];
    out.at(i) = x.at(at);
  });
  return out;
}

HostTensor astype(const HostTensor& x, DataType dtype) {
  return map_unary(
      x,
      [dtype](double v) -> double {
        if (dtype.is_bool()) return v != 0 ? 1 : 0;
        if (dtype.is_float()) return round_to_dtype(v, dtype);
        const double t = std::trunc(v);
        // Integers wrap to the target width (two's complement).
        const int bits = dtype.bits;
        if (bits >= 64) return t;
        const int64_t modulus = int64_t{1} << bits;
        int64_t w = static_cast<int64_t>(t) % modulus;
        if (w < 0) w += modulus;
        if (dtype.code == DataType::Code::kInt && w >= modulus / 2) w -= modulus;
        return static_cast<double>(w);
      },
      dtype);
}

HostTensor flip(const HostTensor& x, int64_t axis) {
  axis = normalize_axis(axis, x.ndim());
  HostTensor out = x;
  for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> at = i;
    at[axis] = x.shape[axis] - 1 - i[axis];
    out.at(i) = x.at(at);
  });
  return out;
}

HostTensor repeat(const HostTensor& x, int64_t repeats, std::optional<int64_t> axis) {
  if (!axis) return repeat(flattened(x), repeats, 0);
  const int64_t a = normalize_axis(*axis, x.ndim());
  std::vector<int64_t> shape = x.shape;
  shape[a] *= repeats;
  HostTensor out = HostTensor::filled(shape, x.dtype);
  for_each_index(shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> at = i;
    at[a] = i[a] / repeats;
    out.at(i) = x.at(at);
  });
  return out;
}

HostTensor tile(const HostTensor& x, const std::vector<int64_t>& repeats) {
  const size_t ndim = std::max(x.shape.size(), repeats.size());
  std::vector<int64_t> xs(ndim - x.shape.size(), 1);
  xs.insert(xs.end(), x.shape.begin(), x.shape.end());
  std::vector<int64_t> rs(ndim - repeats.size(), 1);
  rs.insert(rs.end(), repeats.begin(), repeats.end());
  const HostTensor padded = reshape(x, xs);
  std::vector<int64_t> shape(ndim);
  for (size_t j = 0; j < ndim; ++j) shape[j] = xs[j] * rs[j];
  HostTensor out = HostTensor::filled(shape, x.dtype);
  for_each_index(shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> at(ndim);
    for (size_t j = 0; j < ndim; ++j) at[j] = i[j] % xs[j];
    out.at(i) = padded.at(at);
  });
  return out;
}

HostTensor concat(const std::vector<HostTensor>& xs, int64_t axis) {
  axis = normalize_axis(axis, xs[0].ndim());
  std::vector<int64_t> shape = xs[0].shape;
  shape[axis] = 0;
  for (const HostTensor& x : xs) shape[axis] += x.shape[axis];
  HostTensor out = HostTensor::filled(shape, xs[0].dtype);
  int64_t offset = 0;
  for (const HostTensor& x : xs) {
    for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
      std::vector<int64_t> at = i;
      at[axis] += offset;
      out.at(at) = x.at(i);
    });
    offset += x.shape[axis];
  }
  return out;
}

std::vector<HostTensor> split_points(const HostTensor& x, const std::vector<int64_t>& points, int64_t axis) {
  axis = normalize_axis(axis, x.ndim());
  const int64_t d = x.shape[axis];
  std::vector<HostTensor> out;
  int64_t start = 0;
  for (size_t k = 0; k <= points.size(); ++k) {
    const int64_t stop = k < points.size() ? std::min(points[k], d) : d;
    out.push_back(strided_slice(x, {axis}, {start}, {std::max(stop, start)}, {1}));
    start = std::max(stop, start);
  }
  return out;
}

std::vector<HostTensor> split_sections(const HostTensor& x, int64_t sections, int64_t axis) {
  const int64_t each = x.shape[normalize_axis(axis, x.ndim())] / sections;
  std::vector<int64_t> points;
  for (int64_t k = 1; k < sections; ++k) points.push_back(k * each);
  return split_points(x, points, axis);
}

HostTensor strided_slice(const HostTensor& x, const std::vector<int64_t>& axes, const std::vector<int64_t>& begin,
                         const std::vector<int64_t>& end, const std::vector<int64_t>& strides) {
  std::vector<int64_t> start(x.shape.size(), 0);
  std::vector<int64_t> step(x.shape.size(), 1);
  std::vector<int64_t> shape = x.shape;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = normalize_axis(axes[k], x.ndim());
    const int64_t d = x.shape[a];
    auto clamp = [d](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + d : v, 0, d); };
    const int64_t b = clamp(begin[k]);
    const int64_t e = clamp(end[k]);
    const int64_t s = strides[k];
    start[a] = b;
    step[a] = s;
    shape[a] = e > b ? (e - b + s - 1) / s : 0;
  }
  HostTensor out = HostTensor::filled(shape, x.dtype);
  for_each_index(shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> at(i.size());
    for (size_t j = 0; j < i.size(); ++j) at[j] = start[j] + i[j] * step[j];
    out.at(i) = x.at(at);
  });
  return out;
}

HostTensor take(const HostTensor& x, const HostTensor& indices, std::optional<int64_t> axis, bool wrap) {
  if (!axis) return take(flattened(x), indices, 0, wrap);
  const int64_t a = normalize_axis(*axis, x.ndim());
  const int64_t d = x.shape[a];
  std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + a);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), x.shape.begin() + a + 1, x.shape.end());
  HostTensor out = HostTensor::filled(shape, x.dtype);
  const size_t k = indices.shape.size();
  for_each_index(shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> idx(i.begin() + a, i.begin() + a + static_cast<int64_t>(k));
    int64_t v = static_cast<int64_t>(indices.at(idx));
    v = wrap ? ((v % d) + d) % d : std::clamp<int64_t>(v, 0, d - 1);
    std::vector<int64_t> at(i.begin(), i.begin() + a);
    at.push_back(v);
    at.insert(at.end(), i.begin() + a + static_cast<int64_t>(k), i.end());
    out.at(i) = x.at(at);
  });
  return out;
}

HostTensor pad(const HostTensor& x, const std::vector<int64_t>& pad_width, double value) {
  std::vector<int64_t> shape = x.shape;
  for (size_t j = 0; j < shape.size(); ++j) shape[j] += pad_width[2 * j] + pad_width[2 * j + 1];
  HostTensor out = HostTensor::filled(shape, x.dtype, value);
  for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> at = i;
    for (size_t j = 0; j < at.size(); ++j) at[j] += pad_width[2 * j];
    out.at(at) = x.at(i);
  });
  return out;
}

HostTensor one_hot(const HostTensor& indices, int64_t depth, int64_t axis, double on, double off, DataType dtype) {
  const int64_t a = normalize_axis(axis, indices.ndim() + 1);
  std::vector<int64_t> shape = indices.shape;
  shape.insert(shape.begin() + a, depth);
  HostTensor out = HostTensor::filled(shape, dtype);
  for_each_index(shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> at = i;
    at.erase(at.begin() + a);
    out.at(i) = static_cast<int64_t>(indices.at(at)) == i[a] ? on : off;
  });
  return out;
}

}  // namespace relax::ops_test
