// Plain-loop references of the conformance rows: every operator written as the
// textbook loop over multi-indices, in double precision.
#include "reference/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "relax/support/check.h"

namespace relax::ops_test {

HostTensor HostTensor::filled(std::vector<int64_t> shape, DataType dtype, double fill) {
  HostTensor t;
  t.values.assign(static_cast<size_t>(numel_of(shape)), fill);
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

HostTensor HostTensor::scalar(double value, DataType dtype) { return filled({}, dtype, value); }

namespace {

int64_t flat_index(const std::vector<int64_t>& shape, const std::vector<int64_t>& index) {
  RELAX_CHECK(index.size() == shape.size()) << "index of rank " << index.size() << " into rank " << shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    RELAX_CHECK(index[d] >= 0 && index[d] < shape[d]) << "index " << index[d] << " out of dim " << shape[d];
    flat = flat * shape[d] + index[d];
  }
  return flat;
}

}  // namespace

double HostTensor::at(const std::vector<int64_t>& index) const {
  return values[static_cast<size_t>(flat_index(shape, index))];
}

double& HostTensor::at(const std::vector<int64_t>& index) {
  return values[static_cast<size_t>(flat_index(shape, index))];
}

std::string HostTensor::describe() const {
  std::ostringstream os;
  os << "Tensor[(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << (shape.size() == 1 ? ",), " : "), ") << dtype.to_string() << "]";
  return os.str();
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  RELAX_CHECK(axis >= -rank && axis < rank) << "axis " << axis << " out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

HostTensor map_unary(const HostTensor& x, const std::function<double(double)>& f, std::optional<DataType> out) {
  HostTensor y = HostTensor::filled(x.shape, out.value_or(x.dtype));
  for (size_t i = 0; i < x.values.size(); ++i) y.values[i] = f(x.values[i]);
  return y;
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    RELAX_CHECK(da == db || da == 1 || db == 1) << "dims " << da << " and " << db << " do not broadcast";
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// The element of `t` that broadcasting reads at `index` of the (larger) result.
double broadcast_read(const HostTensor& t, const std::vector<int64_t>& index) {
  const size_t offset = index.size() - t.shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) flat = flat * t.shape[d] + (t.shape[d] == 1 ? 0 : index[offset + d]);
  return t.values[static_cast<size_t>(flat)];
}

}  // namespace

HostTensor map_binary(const HostTensor& a, const HostTensor& b, const std::function<double(double, double)>& f,
                      std::optional<DataType> out) {
  HostTensor y = HostTensor::filled(broadcast_shapes(a.shape, b.shape), out.value_or(a.dtype));
  for (int64_t i = 0; i < y.numel(); ++i) {
    const std::vector<int64_t> index = unravel(i, y.shape);
    y.values[static_cast<size_t>(i)] = f(broadcast_read(a, index), broadcast_read(b, index));
  }
  return y;
}

HostTensor reduce(const HostTensor& x, std::vector<int64_t> axes, bool keepdims, double init,
                  const std::function<double(double, double)>& combine, std::optional<DataType> out) {
  std::vector<bool> reduced(x.shape.size(), axes.empty());
  for (int64_t axis : axes) reduced[static_cast<size_t>(normalize_axis(axis, x.ndim()))] = true;
  std::vector<int64_t> kept_shape;  // the result's shape with keepdims
  for (size_t d = 0; d < x.shape.size(); ++d) kept_shape.push_back(reduced[d] ? 1 : x.shape[d]);
  HostTensor y = HostTensor::filled(kept_shape, out.value_or(x.dtype), init);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> index = unravel(i, x.shape);
    for (size_t d = 0; d < index.size(); ++d) {
      if (reduced[d]) index[d] = 0;
    }
    double& acc = y.at(index);
    acc = combine(acc, x.values[static_cast<size_t>(i)]);
  }
  if (!keepdims) {
    y.shape.clear();
    for (size_t d = 0; d < x.shape.size(); ++d) {
      if (!reduced[d]) y.shape.push_back(x.shape[d]);
    }
  }
  return y;
}

HostTensor matmul(const HostTensor& a, const HostTensor& b) {
  RELAX_CHECK(a.ndim() >= 1 && b.ndim() >= 1) << "matmul of " << a.describe() << " and " << b.describe();
  // Promote 1-D operands: a vector lhs is a row (1, k), a vector rhs a column (k, 1).
  HostTensor lhs = a.ndim() == 1 ? reshape(a, {1, a.shape[0]}) : a;
  HostTensor rhs = b.ndim() == 1 ? reshape(b, {b.shape[0], 1}) : b;
  const int64_t n = lhs.shape[lhs.shape.size() - 2], k = lhs.shape.back();
  const int64_t k2 = rhs.shape[rhs.shape.size() - 2], m = rhs.shape.back();
  RELAX_CHECK(k == k2) << "matmul inner dims " << k << " and " << k2;
  const std::vector<int64_t> lhs_batch(lhs.shape.begin(), lhs.shape.end() - 2);
  const std::vector<int64_t> rhs_batch(rhs.shape.begin(), rhs.shape.end() - 2);
  std::vector<int64_t> out_shape = broadcast_shapes(lhs_batch, rhs_batch);
  const std::vector<int64_t> batch_shape = out_shape;
  out_shape.push_back(n);
  out_shape.push_back(m);
  HostTensor y = HostTensor::filled(out_shape, a.dtype);
  for (int64_t bi = 0; bi < numel_of(batch_shape); ++bi) {
    std::vector<int64_t> index = unravel(bi, batch_shape);
    index.push_back(0);
    index.push_back(0);
    std::vector<int64_t> li = index, ri = index;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          li[li.size() - 2] = i;
          li.back() = p;
          ri[ri.size() - 2] = p;
          ri.back() = j;
          acc += broadcast_read(lhs, li) * broadcast_read(rhs, ri);
        }
        index[index.size() - 2] = i;
        index.back() = j;
        y.at(index) = acc;
      }
    }
  }
  // Drop the dims the promotion added.
  std::vector<int64_t> shape = y.shape;
  if (b.ndim() == 1) shape.erase(shape.end() - 1);
  if (a.ndim() == 1) shape.erase(shape.end() - (b.ndim() == 1 ? 1 : 2));
  y.shape = shape;
  return y;
}

HostTensor softmax(const HostTensor& x, int64_t axis) {
  const int64_t ax = normalize_axis(axis, x.ndim());
  const auto ninf = -std::numeric_limits<double>::infinity();
  HostTensor max = reduce(x, {ax}, true, ninf, [](double acc, double v) { return std::max(acc, v); });
  HostTensor e = map_binary(x, max, [](double v, double mx) { return std::exp(v - mx); });
  HostTensor total = reduce(e, {ax}, true, 0, [](double acc, double v) { return acc + v; });
  return map_binary(e, total, [](double v, double s) { return v / s; });
}

HostTensor reshape(const HostTensor& x, std::vector<int64_t> shape) {
  int64_t known = 1;
  std::optional<size_t> inferred;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      RELAX_CHECK(!inferred) << "reshape: two -1 dims";
      inferred = d;
    } else {
      known *= shape[d];
    }
  }
  if (inferred) shape[*inferred] = known == 0 ? 0 : x.numel() / known;
  RELAX_CHECK(numel_of(shape) == x.numel()) << "reshape of " << x.describe() << " to " << numel_of(shape)
                                            << " elements";
  HostTensor y = x;
  y.shape = std::move(shape);
  return y;
}

HostTensor permute_dims(const HostTensor& x, std::vector<int64_t> axes) {
  if (axes.empty()) {
    for (int64_t d = x.ndim(); d-- > 0;) axes.push_back(d);
  }
  RELAX_CHECK(static_cast<int64_t>(axes.size()) == x.ndim()) << "permute_dims: " << axes.size() << " axes";
  std::vector<int64_t> shape;
  for (int64_t& axis : axes) {
    axis = normalize_axis(axis, x.ndim());
    shape.push_back(x.shape[static_cast<size_t>(axis)]);
  }
  HostTensor y = HostTensor::filled(shape, x.dtype);
  std::vector<int64_t> from(axes.size());
  for (int64_t i = 0; i < y.numel(); ++i) {
    const std::vector<int64_t> index = unravel(i, shape);
    for (size_t d = 0; d < axes.size(); ++d) from[static_cast<size_t>(axes[d])] = index[d];
    y.values[static_cast<size_t>(i)] = x.at(from);
  }
  return y;
}

// ---------------------------------------------------------------------------

const HostTensor& RefInputs::operator[](size_t i) const {
  RELAX_CHECK(i < args.size()) << "reference reads input " << i << " of " << args.size();
  return args[i];
}

int64_t RefInputs::dim(const std::string& var) const {
  auto it = dims.find(var);
  RELAX_CHECK(it != dims.end()) << "reference reads symbolic variable `" << var << "`, which the row does not have";
  return it->second;
}

RefResult RefResult::tuple(std::vector<HostTensor> fields) {
  RefResult r;
  r.fields = std::move(fields);
  r.is_tuple = true;
  return r;
}

RefResult RefResult::failure(std::string substring) {
  RefResult r;
  r.error = std::move(substring);
  return r;
}

Reference fails_when_zero(std::string var, std::string error, Reference ref) {
  return [var = std::move(var), error = std::move(error), ref = std::move(ref)](const RefInputs& in) {
    return in.dim(var) == 0 ? RefResult::failure(error) : ref(in);
  };
}

Reference ref_unary(std::function<double(double)> f, std::optional<DataType> out) {
  return [f = std::move(f), out](const RefInputs& in) -> RefResult { return map_unary(in[0], f, out); };
}

Reference ref_binary(std::function<double(double, double)> f, std::optional<DataType> out) {
  return [f = std::move(f), out](const RefInputs& in) -> RefResult { return map_binary(in[0], in[1], f, out); };
}

Reference ref_reduce(std::vector<int64_t> axes, bool keepdims, double init,
                     std::function<double(double, double)> combine, std::optional<DataType> out) {
  return [=](const RefInputs& in) -> RefResult { return reduce(in[0], axes, keepdims, init, combine, out); };
}

}  // namespace relax::ops_test
