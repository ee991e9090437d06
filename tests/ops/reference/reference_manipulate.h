// Plain-loop references of the manipulation operators (rows_manipulate.cc), written from the
// numpy definitions, independent of relax's legalization. Each works on HostTensors
// (reference.h); axes are normalised by the callers' conventions noted below.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "reference/reference.h"

namespace relax::ops_test {

/// numpy.broadcast_to.
HostTensor broadcast_to(const HostTensor& x, const std::vector<int64_t>& shape);
/// numpy astype: float to integer truncates toward zero, to bool is `!= 0`; integers wrap to
/// the target width; float16/bfloat16 results round to nearest even.
HostTensor astype(const HostTensor& x, DataType dtype);
/// numpy.flip along one axis.
HostTensor flip(const HostTensor& x, int64_t axis);
/// numpy.repeat (without axis: of the flattened x).
HostTensor repeat(const HostTensor& x, int64_t repeats, std::optional<int64_t> axis);
/// numpy.tile.
HostTensor tile(const HostTensor& x, const std::vector<int64_t>& repeats);
/// numpy.concatenate.
HostTensor concat(const std::vector<HostTensor>& xs, int64_t axis);
/// numpy.split (an int count or ascending points).
std::vector<HostTensor> split_sections(const HostTensor& x, int64_t sections, int64_t axis);
std::vector<HostTensor> split_points(const HostTensor& x, const std::vector<int64_t>& points, int64_t axis);
/// x[begin:end:stride] along `axes` (numpy slice semantics, positive strides).
HostTensor strided_slice(const HostTensor& x, const std::vector<int64_t>& axes, const std::vector<int64_t>& begin,
                         const std::vector<int64_t>& end, const std::vector<int64_t>& strides);
/// numpy.take with mode "clip" (wrap = false) or "wrap"; without axis: of the flattened x.
HostTensor take(const HostTensor& x, const HostTensor& indices, std::optional<int64_t> axis, bool wrap);
/// numpy.pad, constant mode, pad_width flat [before_0, after_0, ...].
HostTensor pad(const HostTensor& x, const std::vector<int64_t>& pad_width, double value);
/// One-hot: a new dim of `depth` at `axis` (of the result), `on` where it equals the index.
HostTensor one_hot(const HostTensor& indices, int64_t depth, int64_t axis, double on, double off, DataType dtype);

}  // namespace relax::ops_test
