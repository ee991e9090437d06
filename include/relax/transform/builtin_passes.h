// The built-in passes, linked into every program that includes this header.
//
// The pass infrastructure (Pass, PassContext, PassManager, the registry) links
// no pass; the table of built-in passes registers into it. Including this
// header (relax.h, passes.h, pipeline.h and opt.h do) references the table, so
// the linker keeps it with every pass it names, and hands it to the registry
// before main: a pipeline string, --list-passes or a PassContext option then
// knows every built-in pass by name. A program of only the infrastructure and
// passes of its own does not link the built-in ones.
#pragma once

#include <vector>

#include "relax/transform/pass_registry.h"

namespace relax::transform {

/// A factory per built-in pass, in the order --list-passes shows them (defined
/// with the passes, in the transform library).
const std::vector<PassFactory>& builtin_pass_factories();

namespace builtin_passes_detail {
/// Set once per program (an inline variable: one object however many units include this).
inline const bool kTableHandedIn = set_builtin_pass_table(&builtin_pass_factories);
}  // namespace builtin_passes_detail

}  // namespace relax::transform
