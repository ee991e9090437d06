// dispatch-library's last step with oneDNN: chains of oneDNN convolutions joined by elementwise
// ops pass their activations in NHWC (nhwc_chains.cc says when).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "relax/ir/module.h"

namespace relax::transform {

/// `mod` with the convolutions of such chains marked `:nhwc_out` (the first) and `:nhwc_in`
/// (the next); adds the calls it renamed to `*joined`.
absl::StatusOr<IRModule> join_nhwc_chains(const IRModule& mod, int64_t* joined);

}  // namespace relax::transform
