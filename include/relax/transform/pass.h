// Passes: the unit of work of the compiler, and the context they run in.
//
// A pass is a class with a name, a one-line summary, the opt level from which it
// runs, the passes that must have run before it, and the options and statistics
// it declares; `run` maps a module to a module. A user subclasses Pass (or one
// of the adaptors below, which visit every function of one kind so that the
// author writes only the rewrite of one function or block):
//
//   class MyPass : public relax::transform::FunctionPass {
//    public:
//     MyPass() : FunctionPass(PassInfo("my-pass", "does one thing")) {}
//    protected:
//     absl::StatusOr<relax::Expr> run_on_function(const FunctionRef& f, PassContext& ctx) override;
//   };
//
// Passes are run by a PassManager (pass_manager.h), which applies the
// context's instruments (instrument.h) around each pass. Every pass hands on a
// module whose StructInfo is current: the adaptors normalise what a rewrite
// left unannotated, and the well-formedness instrument (on in every test)
// checks the result after each pass.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/support/check.h"

namespace relax::transform {

class PassContext;
class PassInstrument;

/// The value of a pass option.
using OptionValue = std::variant<bool, int64_t, double, std::string>;

/// The type of a pass option (the index of its alternative in OptionValue).
enum class OptionType : uint8_t { kBool = 0, kInt = 1, kFloat = 2, kString = 3 };

/// "bool", "int", "float", "string".
std::string_view option_type_name(OptionType type);
/// The type of `value`.
OptionType option_type(const OptionValue& value);
/// `value` as the text form accepted by parse_option_value.
std::string option_value_to_string(const OptionValue& value);
/// `text` read as a value of `type` ("true"/"false", a decimal integer, a number,
/// any text), or InvalidArgument naming the expected type and the text.
absl::StatusOr<OptionValue> parse_option_value(OptionType type, std::string_view text);

/// An option a pass declares: PassContext keys it as "<pass>.<name>".
struct PassOption {
  std::string name;
  OptionValue default_value;
  std::string summary;
  OptionType type() const { return option_type(default_value); }
};

/// A counter a pass declares and increments through PassContext::add_statistic.
struct PassStatistic {
  std::string name;
  std::string summary;
};

/// What a pass is, declared once with the pass:
///   PassInfo("fold-constant", "evaluates pure calls of constants")
///       .with_option("max-elements", int64_t{1 << 16}, "largest result folded")
///       .with_statistic("folded_calls", "calls replaced by a constant")
struct PassInfo {
  PassInfo(std::string name, std::string summary) : name(std::move(name)), summary(std::move(summary)) {}

  PassInfo& at_opt_level(int level) {
    min_opt_level = level;
    return *this;
  }
  PassInfo& requires_pass(std::string pass) {
    required.push_back(std::move(pass));
    return *this;
  }
  PassInfo& with_option(std::string option, OptionValue default_value, std::string option_summary) {
    options.push_back({std::move(option), std::move(default_value), std::move(option_summary)});
    return *this;
  }
  PassInfo& with_statistic(std::string statistic, std::string statistic_summary) {
    statistics.push_back({std::move(statistic), std::move(statistic_summary)});
    return *this;
  }

  /// kebab-case, unique among registered passes ("fold-constant").
  std::string name;
  /// One line, for --list-passes and the pass table of docs/passes.md.
  std::string summary;
  /// The pass is skipped when the context's opt level is below this.
  int min_opt_level = 0;
  /// Passes that must have run earlier in the same pipeline.
  std::vector<std::string> required;
  std::vector<PassOption> options;
  std::vector<PassStatistic> statistics;
};

/// The base class of every pass.
class Pass {
 public:
  explicit Pass(PassInfo info);
  virtual ~Pass() = default;
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;

  const PassInfo& info() const { return info_; }
  const std::string& name() const { return info_.name; }

  /// Rewrites `mod`. Errors name the function ("@main: ...") where there is
  /// one; the PassManager prefixes "pass <name>: ".
  virtual absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) = 0;

  /// The passes a composite pass (a sequence, a fixed-point group) runs, in
  /// order; null for an ordinary pass. PassManager edits reach into them.
  virtual std::vector<std::shared_ptr<Pass>>* children() { return nullptr; }
  const std::vector<std::shared_ptr<Pass>>* children() const {
    return const_cast<Pass*>(this)->children();
  }
  /// The pass in pipeline text: its name, or for a composite its name and
  /// arguments ("fixed-point(cse,dce)").
  virtual std::string to_string() const { return info_.name; }

 private:
  PassInfo info_;
};

using PassPtr = std::shared_ptr<Pass>;

/// A graph function of a module, as an adaptor hands it to a pass.
struct FunctionRef {
  const std::string& name;
  const Expr& func;  ///< a Function (FunctionPass) or a PrimFunc (PrimFuncPass)
  const IRModule& module;
};

/// Visits every graph Function of the module. A function for which
/// run_on_function returns the same node stays pointer-identical; a changed one
/// is normalised (nodes the rewrite left unannotated get their StructInfo) and
/// replaces it. An error is prefixed with "@<function>: ".
class FunctionPass : public Pass {
 public:
  using Pass::Pass;
  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) final;

 protected:
  virtual absl::StatusOr<Expr> run_on_function(const FunctionRef& f, PassContext& ctx) = 0;
};

/// As FunctionPass, for every PrimFunc of the module.
class PrimFuncPass : public Pass {
 public:
  using Pass::Pass;
  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) final;

 protected:
  virtual absl::StatusOr<Expr> run_on_prim_func(const FunctionRef& f, PassContext& ctx) = 0;
};

/// Visits every dataflow block of every graph function (nested functions and
/// If branches included). The block run_on_block returns is re-normalised
/// binding by binding (a binding whose value's annotation changed gets a fresh
/// variable, and later uses follow it), so a rewrite may build new values
/// without annotations. Returning the block unchanged (the same bindings)
/// keeps the function pointer-identical.
class DataflowBlockPass : public Pass {
 public:
  using Pass::Pass;
  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) final;

 protected:
  virtual absl::StatusOr<BindingBlock> run_on_block(const BindingBlock& block,
                                                    const FunctionRef& f, PassContext& ctx) = 0;
};

/// A module pass from a function: for passes small enough to be a lambda.
PassPtr make_module_pass(PassInfo info,
                         std::function<absl::StatusOr<IRModule>(const IRModule&, PassContext&)> fn);
/// A FunctionPass from a function.
PassPtr make_function_pass(PassInfo info,
                           std::function<absl::StatusOr<Expr>(const FunctionRef&, PassContext&)> fn);
/// A DataflowBlockPass from a function.
PassPtr make_dataflow_block_pass(
    PassInfo info,
    std::function<absl::StatusOr<BindingBlock>(const BindingBlock&, const FunctionRef&, PassContext&)> fn);

/// What passes run with: the opt level, options, disabled passes, instruments
/// and the statistics the passes count.
class PassContext {
 public:
  PassContext() = default;

  /// Passes whose min_opt_level is above this are skipped (0-3, default 2).
  int opt_level = 2;

  /// Sets the option `key` ("<pass>.<option>", e.g. "fold-constant.max-elements").
  /// Checked when a pipeline runs: every key must name an option that a pass of
  /// the pipeline declares, with a value of the declared type.
  void set_option(std::string key, OptionValue value) { options_[std::move(key)] = std::move(value); }
  /// As set_option, from text: the pass must be registered (pass_registry.h),
  /// the option declared and the text of its type.
  absl::Status set_option_text(std::string_view key, std::string_view text);
  const std::map<std::string, OptionValue, std::less<>>& options() const { return options_; }

  /// The value of `pass`'s option `name`: the one set, else the declared
  /// default. The option must be declared (a programming error otherwise).
  const OptionValue& option(const Pass& pass, std::string_view name) const;
  bool bool_option(const Pass& pass, std::string_view name) const {
    return std::get<bool>(option(pass, name));
  }
  int64_t int_option(const Pass& pass, std::string_view name) const {
    return std::get<int64_t>(option(pass, name));
  }
  double float_option(const Pass& pass, std::string_view name) const {
    return std::get<double>(option(pass, name));
  }
  const std::string& string_option(const Pass& pass, std::string_view name) const {
    return std::get<std::string>(option(pass, name));
  }

  /// Passes skipped wherever they appear in a pipeline.
  void disable_pass(std::string name) { disabled_.insert(std::move(name)); }
  bool is_disabled(std::string_view name) const { return disabled_.find(name) != disabled_.end(); }
  const std::set<std::string, std::less<>>& disabled_passes() const { return disabled_; }

  /// Instruments called around every pass, in order.
  void add_instrument(std::shared_ptr<PassInstrument> instrument) {
    instruments_.push_back(std::move(instrument));
  }
  const std::vector<std::shared_ptr<PassInstrument>>& instruments() const { return instruments_; }

  /// Adds `delta` to the running pass's counter `name` (declared in its PassInfo).
  void add_statistic(std::string_view name, int64_t delta = 1);
  /// Counters by pass name, then counter name, summed over every run.
  const std::map<std::string, std::map<std::string, int64_t>>& statistics() const {
    return statistics_;
  }

  /// The passes being run, outermost first (the PassManager maintains it).
  const std::vector<const Pass*>& pass_stack() const { return pass_stack_; }

 private:
  friend absl::StatusOr<IRModule> run_pass(Pass& pass, const IRModule& mod, PassContext& ctx);

  std::map<std::string, OptionValue, std::less<>> options_;
  std::set<std::string, std::less<>> disabled_;
  std::vector<std::shared_ptr<PassInstrument>> instruments_;
  std::map<std::string, std::map<std::string, int64_t>> statistics_;
  std::vector<const Pass*> pass_stack_;
};

/// Runs one pass the way a PassManager does: skipped when disabled or below
/// its opt level; instruments called before and after; an error prefixed with
/// "pass <name>: ". Composite passes call it for each of their children.
absl::StatusOr<IRModule> run_pass(Pass& pass, const IRModule& mod, PassContext& ctx);

}  // namespace relax::transform
