// The relax-opt library (relax/transform/opt.h).
#include "relax/transform/opt.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "relax/ir/json.h"
#include "relax/ir/parser.h"
#include "relax/support/target.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/pipeline.h"

namespace relax::transform {

absl::StatusOr<PassManager> opt_pipeline(const OptOptions& options) {
  if (options.default_pipeline) {
    if (!options.passes.empty()) {
      return absl::InvalidArgumentError("give either a pipeline of passes or the default pipeline, not both");
    }
    absl::StatusOr<Target> target = Target::parse(options.target);
    if (!target.ok()) return target.status();
    return default_pipeline(*target);
  }
  if (options.passes.empty()) return PassManager();
  return parse_pipeline(options.passes);
}

absl::StatusOr<IRModule> run_opt(const IRModule& mod, const OptOptions& options, std::ostream& log) {
  if (options.opt_level < kMinOptLevel || options.opt_level > kMaxOptLevel) {
    return absl::InvalidArgumentError(absl::StrCat("--opt-level=", options.opt_level, ": the opt level must be in ",
                                                   kMinOptLevel, "..", kMaxOptLevel, " (default 2)"));
  }
  absl::StatusOr<PassManager> pm = opt_pipeline(options);
  if (!pm.ok()) return pm.status();
  // A print of a pass the pipeline does not run would print nothing: say so instead.
  auto check_in_pipeline = [&](const char* flag, const std::vector<std::string>& names) -> absl::Status {
    for (const std::string& p : names) {
      if (find_pass_info(p) == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(flag, ": unknown pass `", p, "`"));
      }
      if (!pm->contains(p)) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, "=", p, ": pass `", p, "` is not in the pipeline, so nothing would be printed (the pipeline: ",
            pm->empty() ? std::string("no passes") : pm->to_string(), ")"));
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status s = check_in_pipeline("--print-before", options.print_before); !s.ok()) return s;
  if (absl::Status s = check_in_pipeline("--print-after", options.print_after); !s.ok()) return s;
  PassContext ctx;
  ctx.opt_level = options.opt_level;
  for (const std::string& option : options.pass_options) {
    size_t eq = option.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("pass option `", option, "`: expected <pass>.<option>=<value>"));
    }
    if (absl::Status s = ctx.set_option_text(option.substr(0, eq), option.substr(eq + 1)); !s.ok()) return s;
  }
  for (const std::string& name : options.disabled_passes) {
    if (find_pass_info(name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("cannot disable unknown pass `", name, "`"));
    }
    ctx.disable_pass(name);
  }
  std::shared_ptr<TimingInstrument> timing;
  if (options.timing) {
    timing = std::make_shared<TimingInstrument>();
    ctx.add_instrument(timing);
  }
  if (options.print_before_all || options.print_after_all || !options.print_before.empty() ||
      !options.print_after.empty()) {
    PrintIROptions print;
    print.before_all = options.print_before_all;
    print.after_all = options.print_after_all;
    print.before.insert(options.print_before.begin(), options.print_before.end());
    print.after.insert(options.print_after.begin(), options.print_after.end());
    print.out = &log;
    print.folder = options.print_folder;
    ctx.add_instrument(std::make_shared<PrintIRInstrument>(std::move(print)));
  }
  if (options.verify_each) ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = pm->run(mod, ctx);
  if (timing) log << timing->report();
  if (options.statistics) log << statistics_report(ctx);
  return out;
}

absl::StatusOr<IRModule> read_module(std::string_view text, std::string_view name) {
  size_t first = text.find_first_not_of(" \t\r\n");
  bool json = first != std::string_view::npos && text[first] == '{';
  absl::StatusOr<IRModule> mod = json ? from_json(text) : parse_module(text);
  if (!mod.ok()) {
    // Text errors start with "line:column: ", JSON ones with the JSON path.
    return absl::Status(mod.status().code(),
                        absl::StrCat(std::string(name), json ? ": " : ":", mod.status().message()));
  }
  return mod;
}

absl::StatusOr<IRModule> read_module_file(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return read_module(text, "<stdin>");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": cannot read the file"));
  return read_module(text, path);
}

}  // namespace relax::transform
