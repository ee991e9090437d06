// Pass instruments: code that runs around every pass of a pipeline.
//
//   relax::transform::PassContext ctx;
//   auto timing = std::make_shared<relax::transform::TimingInstrument>();
//   ctx.add_instrument(timing);
//   ctx.add_instrument(std::make_shared<relax::transform::VerifyInstrument>());
//   absl::StatusOr<relax::IRModule> out = pm.run(mod, ctx);
//   std::cout << timing->report();
//
// Built in: per-pass wall time (TimingInstrument, a table in pipeline order with
// nested groups indented), IR printing before/after chosen passes or all of them
// to a stream or one file per pass in a folder (PrintIRInstrument), a
// well-formedness check after every pass (VerifyInstrument), and the pass
// statistics of the context (statistics_report).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "relax/ir/module.h"
#include "relax/transform/pass.h"

namespace relax::transform {

/// The base class of instruments. Composite passes (sequences, fixed-point
/// groups) are reported too; `pass.children()` tells them apart.
class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  /// Before `pass` runs on `mod`.
  virtual void before_pass(const Pass& pass, const IRModule& mod, const PassContext& ctx);
  /// After `pass` turned `before` into `after`; an error stops the pipeline
  /// (it is reported as the pass's error).
  virtual absl::Status after_pass(const Pass& pass, const IRModule& before, const IRModule& after,
                                  const PassContext& ctx);
  /// When a pass is skipped (disabled, or below the opt level).
  virtual void skipped_pass(const Pass& pass, const PassContext& ctx);
};

/// Wall time per pass, like MLIR's -mlir-timing: one row per pass of the
/// pipeline in the order they first ran (a pass appearing twice has a row each
/// place it appears), nested groups indented under their group's row.
class TimingInstrument : public PassInstrument {
 public:
  void before_pass(const Pass& pass, const IRModule& mod, const PassContext& ctx) override;
  absl::Status after_pass(const Pass& pass, const IRModule& before, const IRModule& after,
                          const PassContext& ctx) override;

  struct Row {
    std::string name;
    int depth = 0;       ///< nesting level (0 = top-level pass)
    int runs = 0;        ///< times it ran (a fixed-point group runs its passes repeatedly)
    double seconds = 0;  ///< total wall time
  };
  /// The rows collected so far.
  const std::vector<Row>& rows() const { return rows_; }
  /// The table: wall time, percentage of the total, runs and the name.
  std::string report() const;

 private:
  struct Open {
    const Pass* pass;
    size_t row;
    std::chrono::steady_clock::time_point start;
  };
  std::vector<Row> rows_;
  std::vector<Open> open_;
  // (parent row + 1, pass) -> row, so that a pass run again in a loop reuses its row.
  std::vector<std::pair<std::pair<size_t, const Pass*>, size_t>> index_;
};

/// Which passes to print the module around, and where.
struct PrintIROptions {
  std::set<std::string, std::less<>> before;  ///< pass names
  std::set<std::string, std::less<>> after;
  bool before_all = false;
  bool after_all = false;
  /// Where to print; ignored when `folder` is set. Null: std::cerr.
  std::ostream* out = nullptr;
  /// When not empty: one file per print, "<NN>-<pass>-{before,after}.relax",
  /// numbered in order (the folder is created).
  std::string folder;
};

/// Prints the module in the text format before and/or after chosen passes
/// (composite passes are never printed; their children are).
class PrintIRInstrument : public PassInstrument {
 public:
  explicit PrintIRInstrument(PrintIROptions options) : options_(std::move(options)) {}
  void before_pass(const Pass& pass, const IRModule& mod, const PassContext& ctx) override;
  absl::Status after_pass(const Pass& pass, const IRModule& before, const IRModule& after,
                          const PassContext& ctx) override;

 private:
  absl::Status print(const Pass& pass, const IRModule& mod, const char* when);
  PrintIROptions options_;
  int printed_ = 0;
  absl::Status folder_error_;
};

/// Checks after every (non-composite) pass that the module is well formed
/// (relax/ir/well_formed.h) and that every annotation is what re-normalising
/// would give it (check_annotations_current); a violation is the pass's error.
class VerifyInstrument : public PassInstrument {
 public:
  absl::Status after_pass(const Pass& pass, const IRModule& before, const IRModule& after,
                          const PassContext& ctx) override;
};

/// OK when every call, tuple and tuple-get-item of the module's graph functions
/// carries exactly the StructInfo deduction gives it from its operands, as the
/// parser and the builder give it (a pass that rebuilt a node without
/// re-normalising leaves a stale one). A binding's variable may keep an
/// annotation coarser than its value's, as a written one may (well_formed
/// checks that it fits). Otherwise an InvalidArgument naming the function and
/// the binding.
absl::Status check_annotations_current(const IRModule& mod);

/// The context's statistics as a table: "<pass>.<counter>  <value>" per line,
/// sorted; empty when no pass counted anything.
std::string statistics_report(const PassContext& ctx);

}  // namespace relax::transform
