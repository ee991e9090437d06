// The resolver of the family "onednn." (registered by src/runtime/library_registry.cc when
// the runtime is built with oneDNN).
#pragma once

#ifdef RELAX_WITH_ONEDNN

#include <string>

#include "absl/status/statusor.h"
#include "relax/runtime/onednn_call.h"
#include "relax/runtime/module.h"

namespace relax::runtime::onednn {

/// A new function object for `name` (its own primitive cache and packed weights), or the
/// parse error of the name.
absl::StatusOr<LibraryFunction> resolve_function(const std::string& name);

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
