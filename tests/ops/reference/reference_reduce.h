// Plain-loop references of the reductions and scans (rows_reduce.cc), in double precision.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "reference/reference.h"

namespace relax::ops_test {

/// The mean over `axes` (all when empty).
HostTensor mean(const HostTensor& x, const std::vector<int64_t>& axes, bool keepdims);
/// The population variance over `axes` (all when empty), two-pass in double; its square root
/// with `take_sqrt`.
HostTensor variance(const HostTensor& x, const std::vector<int64_t>& axes, bool keepdims, bool take_sqrt);
/// The int64 index of the first maximum (`is_max`) or minimum along `axis`; without an axis,
/// into the flattened tensor (keepdims: every dim 1).
HostTensor arg_extreme(const HostTensor& x, std::optional<int64_t> axis, bool keepdims, bool is_max);
/// The running sum (`is_sum`) or product along `axis`; without an axis, of the flattened
/// tensor (1-D). The result has x's dtype.
HostTensor scan(const HostTensor& x, std::optional<int64_t> axis, bool is_sum);

}  // namespace relax::ops_test
