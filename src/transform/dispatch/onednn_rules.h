// The built-in dispatch rules: oneDNN (onednn_rules.cc).
#pragma once

#include <vector>

#include "relax/transform/dispatch_library.h"

namespace relax::transform {

/// The oneDNN rules, in the order they are tried: linear, matmul, conv (1-D and 2-D).
std::vector<DispatchRule> make_onednn_rules();

}  // namespace relax::transform
