// The pass table: every pass known by name, and pipelines as text.
//
// The built-in passes are declared once, in one table: a factory per pass (the
// create_*_pass functions of passes.h and the other pass headers), whose PassInfo
// holds the name, summary, options and statistics. Listing passes (relax-opt
// --list-passes), parsing and printing pipelines and the pass table of
// docs/passes.md all come from it. A user registers a pass of their own to make
// it reachable from pipeline text.
//
// Pipeline text:  item (',' item)*   where item is
//   name                                  a registered pass
//   fixed-point[{max-iterations=N}](...)  a fixed-point group
//   sequence(...)                         a nested sequence
// e.g. "legalize-ops,fixed-point(canonicalize-bindings,fold-constant,dce)".
// Spaces are allowed between items. A pass may appear more than once.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/transform/pass.h"
#include "relax/transform/pass_manager.h"

namespace relax::transform {

/// Makes a new instance of a pass.
using PassFactory = std::function<PassPtr()>;

/// The info of every known pass: the built-in ones in table order, then the
/// registered ones in registration order.
std::vector<PassInfo> list_passes();
/// The info of the pass called `name`, or nullptr.
const PassInfo* find_pass_info(std::string_view name);
/// A new instance of the pass called `name`; NotFound listing the known names.
absl::StatusOr<PassPtr> create_pass(std::string_view name);
/// Makes a user pass known by name (its factory's PassInfo gives the name).
/// AlreadyExists when the name is taken; InvalidArgument when it is not
/// kebab-case. Thread-safe.
absl::Status register_pass(PassFactory factory);

/// The built-in passes' table: a factory per pass, in the order --list-passes shows them.
using BuiltinPassTable = const std::vector<PassFactory>& (*)();
/// Hands the built-in table to the registry, which reads it on first use. The
/// infrastructure links no pass; relax/transform/builtin_passes.h makes every
/// program that includes it (through relax.h, passes.h, pipeline.h, opt.h) link
/// the table and hand it in. Returns true.
bool set_builtin_pass_table(BuiltinPassTable table);

/// The pipeline described by `text` (see above). Errors name the column:
/// "pipeline:14: unknown pass `cse2`; known passes: ...".
absl::StatusOr<PassManager> parse_pipeline(std::string_view text);

/// The table of built-in passes in Markdown (name, summary, options,
/// statistics): the table of docs/passes.md is this text, and a test keeps them equal.
std::string pass_table_markdown();

}  // namespace relax::transform
