// The default pipeline that relax::build runs.
#pragma once

#include "relax/support/target.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/builtin_passes.h"

namespace relax::transform {

/// Appends the default passes for `target` to `pm`, in order (docs/passes.md lists
/// them; PassManager::to_string() prints the result).
void build_default_pipeline(PassManager& pm, const Target& target);

/// A PassManager holding the default pipeline for `target`.
PassManager default_pipeline(const Target& target);

}  // namespace relax::transform
