// The built-in pass table (pass_table.cc), read by pass_registry.cc.
#pragma once

#include <vector>

#include "relax/transform/pass_registry.h"

namespace relax::transform {

/// A factory per built-in pass, in the order --list-passes shows them.
const std::vector<PassFactory>& builtin_pass_factories();

}  // namespace relax::transform
