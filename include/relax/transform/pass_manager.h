// PassManager: an ordered, editable list of passes.
//
//   relax::transform::PassManager pm;
//   relax::transform::build_default_pipeline(pm, target);   // pipeline.h
//   RELAX_CHECK_OK(pm.insert_after("legalize-ops", std::make_shared<MyPass>()));
//   RELAX_CHECK_OK(pm.remove("cse"));
//   absl::StatusOr<relax::IRModule> out = pm.run(mod, ctx);
//
// A pipeline holds ordinary passes and composite ones: a named sequence, and a
// fixed-point group, which repeats its passes until the module no longer
// changes (its structural hash and structure stay the same) or a maximum
// number of iterations is reached. Edits find passes by name anywhere in the
// pipeline, nested groups included. The pipeline prints as text that
// parse_pipeline (pass_registry.h) reads back:
//   legalize-ops,fixed-point(canonicalize-bindings,fold-constant,dce)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/module.h"
#include "relax/transform/pass.h"

namespace relax::transform {

/// A composite pass that runs `passes` in order once. Printed as
/// "sequence(a,b)" (a pipeline's top level prints without the wrapper).
PassPtr sequence(std::vector<PassPtr> passes);

/// The default bound of fixed_point.
inline constexpr int kDefaultFixedPointIterations = 10;

/// A composite pass that runs `passes` in order, again and again, until one
/// round leaves the module structurally unchanged or `max_iterations` rounds
/// have run (then it stops without error; the statistic `fixed-point.unconverged`
/// counts it). Counts its rounds in the statistic `fixed-point.iterations`.
/// Printed as "fixed-point(a,b)", or "fixed-point{max-iterations=N}(a,b)".
PassPtr fixed_point(std::vector<PassPtr> passes, int max_iterations = kDefaultFixedPointIterations);

class PassManager {
 public:
  PassManager() = default;
  explicit PassManager(std::vector<PassPtr> passes) : passes_(std::move(passes)) {}

  /// Appends a pass.
  PassManager& add(PassPtr pass);
  /// Appends the registered pass `name` (pass_registry.h); NotFound when unknown.
  absl::Status add(std::string_view name);

  /// Inserts `pass` before / after the first pass named `anchor` (depth first,
  /// nested groups included); NotFound naming the pipeline when there is none.
  absl::Status insert_before(std::string_view anchor, PassPtr pass);
  absl::Status insert_after(std::string_view anchor, PassPtr pass);
  /// Removes every pass named `name`; NotFound when there is none.
  absl::Status remove(std::string_view name);
  /// Replaces every pass named `name` by `pass`; NotFound when there is none.
  absl::Status replace(std::string_view name, PassPtr pass);
  /// Whether a pass named `name` is in the pipeline (nested groups included).
  bool contains(std::string_view name) const;

  const std::vector<PassPtr>& passes() const { return passes_; }
  bool empty() const { return passes_.empty(); }

  /// The pipeline as text (see parse_pipeline).
  std::string to_string() const;

  /// Runs the passes in order on `mod`. Before running, checks the context:
  /// every option key must belong to a pass of the pipeline and have its
  /// declared type, every disabled pass must be a known pass, and each pass's
  /// required passes must come earlier in the pipeline.
  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) const;
  /// As above with a default context.
  absl::StatusOr<IRModule> run(const IRModule& mod) const;

 private:
  std::vector<PassPtr> passes_;
};

}  // namespace relax::transform
