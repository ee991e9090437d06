// The library behind `relax-opt`: read a module, run the passes a command line
// names, with the instruments it asks for. The project's pass-file tests and the
// tool share it, so a test file and a bug report are the same thing: a module
// plus a pipeline.
//
//   relax::transform::OptOptions options;
//   options.passes = "legalize-ops,fixed-point(canonicalize-bindings,dce)";
//   options.timing = true;
//   absl::StatusOr<relax::IRModule> out = relax::transform::run_opt(mod, options, std::cerr);
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/module.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/builtin_passes.h"

namespace relax::transform {

/// The opt levels a pipeline knows (PassContext::opt_level).
inline constexpr int kMinOptLevel = 0;
inline constexpr int kMaxOptLevel = 3;

/// What a relax-opt command line asks for.
struct OptOptions {
  /// A pipeline in text (pass_registry.h); empty with default_pipeline false: no pass.
  std::string passes;
  /// Run the default pipeline (pipeline.h) for `target` instead of `passes`.
  bool default_pipeline = false;
  /// The target text (Target::parse), read by the default pipeline.
  std::string target = "cpu";
  /// PassContext::opt_level: kMinOptLevel..kMaxOptLevel, else an error.
  int opt_level = 2;
  /// "<pass>.<option>=<value>", checked against the pass table.
  std::vector<std::string> pass_options;
  std::vector<std::string> disabled_passes;
  /// Print the module before / after these passes, or all of them.
  std::vector<std::string> print_before;
  std::vector<std::string> print_after;
  bool print_before_all = false;
  bool print_after_all = false;
  /// When set, the prints go to one file per pass in this folder instead of `log`.
  std::string print_folder;
  /// Print the per-pass wall-time table to `log` after the run.
  bool timing = false;
  /// Print the pass statistics to `log` after the run.
  bool statistics = false;
  /// Check well-formedness and current annotations after every pass.
  bool verify_each = false;
};

/// The PassManager that `options` names (the default pipeline or `passes`);
/// errors name the pipeline text's column.
absl::StatusOr<PassManager> opt_pipeline(const OptOptions& options);

/// Runs the pipeline of `options` on `mod`, printing what the options ask for
/// to `log`. Errors: "pass <name>: @<function>: <message>", or the pipeline's
/// or an option's error: an opt level outside kMinOptLevel..kMaxOptLevel, or a
/// --print-before/--print-after pass that is unknown or not in the pipeline
/// (naming the pipeline's passes), before any pass runs.
absl::StatusOr<IRModule> run_opt(const IRModule& mod, const OptOptions& options, std::ostream& log);

/// Reads a module from `text`: JSON when its first non-space character is
/// `{`, else the text format. `name` (a file name, or "<stdin>") starts every
/// error: "model.relax:3:14: expected `)`".
absl::StatusOr<IRModule> read_module(std::string_view text, std::string_view name);
/// read_module of the file at `path` ("-" reads standard input); NotFound or
/// an error naming the file when it cannot be read.
absl::StatusOr<IRModule> read_module_file(const std::string& path);

}  // namespace relax::transform
