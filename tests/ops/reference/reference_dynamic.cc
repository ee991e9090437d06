#include "reference/reference_dynamic.h"

#include <cmath>
#include <set>

#include "relax/support/check.h"

namespace relax::ops_test {

HostTensor nonzero(const HostTensor& x) {
  std::vector<std::vector<int64_t>> found;
  for (int64_t flat = 0; flat < x.numel(); ++flat) {
    if (x.values[static_cast<size_t>(flat)] != 0) found.push_back(unravel(flat, x.shape));
  }
  const auto count = static_cast<int64_t>(found.size());
  HostTensor out = HostTensor::filled({x.ndim(), count}, DataType::int64());
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t d = 0; d < x.ndim(); ++d) {
      out.at({d, j}) = static_cast<double>(found[static_cast<size_t>(j)][static_cast<size_t>(d)]);
    }
  }
  return out;
}

HostTensor unique(const HostTensor& x) {
  std::set<double> seen;  // orders numbers; -0.0 and 0.0 compare equal
  bool nan = false;
  for (double v : x.values) {
    if (std::isnan(v)) {
      nan = true;
    } else {
      seen.insert(v);
    }
  }
  std::vector<double> values(seen.begin(), seen.end());
  if (nan) values.push_back(NAN);
  HostTensor out = HostTensor::filled({static_cast<int64_t>(values.size())}, x.dtype);
  out.values = std::move(values);
  return out;
}

HostTensor masked_select(const HostTensor& x, const HostTensor& mask) {
  RELAX_CHECK(x.shape == mask.shape) << "masked_select reference: " << x.describe() << " vs "
                                     << mask.describe();
  std::vector<double> picked;
  for (size_t i = 0; i < x.values.size(); ++i) {
    if (mask.values[i] != 0) picked.push_back(x.values[i]);
  }
  HostTensor out = HostTensor::filled({static_cast<int64_t>(picked.size())}, x.dtype);
  out.values = std::move(picked);
  return out;
}

}  // namespace relax::ops_test
