// Plain-loop references of the creation operators (rows_create.cc).
#pragma once

#include <cstdint>

#include "reference/reference.h"

namespace relax::ops_test {

/// start, start + step, ... below `end` (above it for a negative step), in `dtype`; each
/// element computed as start + i * step in double.
HostTensor arange(double start, double end, double step, DataType dtype);
/// x with the elements of its last two dims kept where j - i <= k (`lower`) or j - i >= k,
/// zero elsewhere.
HostTensor triangle(const HostTensor& x, int64_t k, bool lower);

}  // namespace relax::ops_test
