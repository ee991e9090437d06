// Plain-loop references of the data-dependent operators (rows_dynamic.cc).
#pragma once

#include "reference/reference.h"

namespace relax::ops_test {

/// int64 (x.ndim, count): the multi-index of each non-zero element of x in row-major order,
/// one column per element (NaN is non-zero).
HostTensor nonzero(const HostTensor& x);
/// x's distinct values in ascending order, 1-D, x's dtype (NaNs last, as one value).
HostTensor unique(const HostTensor& x);
/// The elements of x where mask (x's shape) is non-zero, in row-major order, 1-D, x's dtype.
HostTensor masked_select(const HostTensor& x, const HostTensor& mask);

}  // namespace relax::ops_test
