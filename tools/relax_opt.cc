// relax-opt: reads a module (text format or JSON), runs passes, writes the result.
//
//   relax-opt model.relax --passes='legalize-ops,fixed-point(canonicalize-bindings,dce)'
//   relax-opt model.relax --pipeline=default --timing --print-after=legalize-ops -o out.relax
//   relax-opt --list-passes
//   relax-opt model.relax --pipeline=default --plan-svg=plan.svg --plan-svg-values=n=128
//
// Errors go to stderr as `FILE:LINE:COL: message` (reading) or
// `pass P: @function: message` (a pass), with exit status 1.
#include <cstdint>
#include <fstream>
#include <map>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "list_flags.h"
#include "relax/frontend/onnx.h"
#include "relax/ir/json.h"
#include "relax/ir/printer.h"
#include "relax/ir/op.h"
#include "relax/transform/opt.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/plan_memory.h"

ABSL_FLAG(std::string, passes, "", "the pipeline to run, e.g. legalize-ops,fixed-point(cse,dce)");
ABSL_FLAG(std::string, pipeline, "", "`default`: the pipeline relax::build runs for --target");
ABSL_FLAG(std::string, target, "cpu", "the target the default pipeline is built for (e.g. \"cpu -threads=1\")");
ABSL_FLAG(int, opt_level, 2, "0..3: passes whose minimum opt level is above this are skipped");
ABSL_FLAG(std::vector<std::string>, disable_pass, {}, "skip this pass (repeatable, or a comma-separated list)");
ABSL_FLAG(std::vector<std::string>, pass_option, {},
          "set a pass option, <pass>.<option>=<value> (repeatable)");
ABSL_FLAG(bool, print_after_all, false, "print the module after every pass (to stderr)");
ABSL_FLAG(bool, print_before_all, false, "print the module before every pass (to stderr)");
ABSL_FLAG(std::vector<std::string>, print_before, {}, "print the module before this pass (repeatable)");
ABSL_FLAG(std::vector<std::string>, print_after, {}, "print the module after this pass (repeatable)");
ABSL_FLAG(std::string, print_dir, "", "write the --print-* modules to one file per pass in this folder");
ABSL_FLAG(bool, timing, false, "print the wall time of every pass (to stderr)");
ABSL_FLAG(bool, statistics, false, "print the pass statistics (to stderr)");
ABSL_FLAG(bool, verify_each, false, "check well-formedness and annotations after every pass");
ABSL_FLAG(bool, list_passes, false, "list the known passes and exit");
ABSL_FLAG(bool, list_ops, false, "list the operators (arguments, attributes with defaults) and exit");
ABSL_FLAG(std::string, emit, "text", "the output form: text or json");
ABSL_FLAG(std::string, o, "-", "the output file (- for standard output)");
ABSL_FLAG(std::string, plan_svg, "", "after the passes, write the memory plan of --plan-svg-function to this SVG file");
ABSL_FLAG(std::string, plan_svg_function, "main", "the graph function whose memory plan --plan-svg draws");
ABSL_FLAG(std::string, plan_svg_values, "",
          "values of the function's symbolic variables for --plan-svg, e.g. n=128,m=512 (default: upper bounds)");

namespace {

int fail(const std::string& message) {
  std::cerr << message << "\n";
  return 1;
}

void list_passes() {
  for (const relax::transform::PassInfo& info : relax::transform::list_passes()) {
    std::cout << info.name << "\n    " << info.summary << "\n";
    for (const relax::transform::PassOption& o : info.options) {
      std::cout << "    option " << info.name << "." << o.name << " ("
                << relax::transform::option_type_name(o.type()) << ", default "
                << relax::transform::option_value_to_string(o.default_value) << "): " << o.summary << "\n";
    }
    for (const relax::transform::PassStatistic& s : info.statistics) {
      std::cout << "    statistic " << s.name << ": " << s.summary << "\n";
    }
  }
}

// The --plan-svg picture of `out`, written to its file, or an error message.
std::string write_plan_svg(const relax::IRModule& out) {
  namespace memory = relax::transform::memory;
  const std::string function = absl::GetFlag(FLAGS_plan_svg_function);
  std::map<std::string, int64_t> given;
  const std::string values_flag = absl::GetFlag(FLAGS_plan_svg_values);
  for (absl::string_view item : absl::StrSplit(values_flag, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &value)) {
      return absl::StrCat("relax-opt: --plan-svg-values: expected name=integer, got `", item, "`");
    }
    given[kv.first] = value;
  }
  absl::StatusOr<relax::SymVarMap<int64_t>> values = memory::function_sym_values(out, function, given);
  absl::StatusOr<memory::FunctionMemoryPlan> plan = memory::read_memory_plan(out, function);
  if (!values.ok() || !plan.ok()) {
    return absl::StrCat("relax-opt: --plan-svg: ", (values.ok() ? plan.status() : values.status()).message());
  }
  absl::StatusOr<std::string> svg = memory::plan_to_svg(plan->plan, plan->tensors, *values, "@" + function);
  if (!svg.ok()) return absl::StrCat("relax-opt: --plan-svg: ", svg.status().message());
  std::ofstream file(absl::GetFlag(FLAGS_plan_svg), std::ios::binary);
  file << *svg;
  return file ? "" : absl::StrCat("relax-opt: cannot write ", absl::GetFlag(FLAGS_plan_svg));
}

}  // namespace

// The input module: text or JSON (relax::transform::read_module_file), or an ONNX model,
// recognised by its content and imported with its weights as parameters after the inputs.
namespace {
absl::StatusOr<relax::IRModule> read_input(const std::string& input) {
  if (input != "-") {
    std::ifstream in(input, std::ios::binary);
    char first[2] = {0, 0};
    if (in && in.read(first, 2)) {
      if (relax::frontend::looks_like_onnx(std::string_view(first, 2))) {
#if RELAX_WITH_ONNX
        absl::StatusOr<relax::frontend::OnnxModel> model = relax::frontend::import_onnx_file(input);
        if (!model.ok()) return absl::Status(model.status().code(), absl::StrCat(input, ": ", model.status().message()));
        return model->module;
#else
        return absl::UnimplementedError(absl::StrCat(input, ": an ONNX model, and this relax-opt was built without "
                                                     "the ONNX importer (RELAX_WITH_ONNX; Debian: libonnx-dev)"));
#endif
      }
    }
  }
  return relax::transform::read_module_file(input);
}
}  // namespace

int main(int argc, char** argv) {
  relax::tools::set_usage("relax_opt.cc",
      "relax-opt [FILE|-] [--passes=PIPELINE | --pipeline=default] [options]: reads a module in the "
      "text format or JSON, runs the passes and writes the result (flag names take - or _)");
  // Repeated list flags accumulate (Abseil keeps only the last occurrence).
  // A --pass-option value is one `key=value` (its value may hold commas: a list of files).
  relax::tools::ListFlags lists(argc, argv, {"disable_pass", "pass_option", "print_before", "print_after"},
                                {"pass_option"});
  std::vector<char*> positional = absl::ParseCommandLine(lists.argc(), lists.argv());
  if (absl::GetFlag(FLAGS_list_passes)) {
    list_passes();
    return 0;
  }
  if (absl::GetFlag(FLAGS_list_ops)) {
    for (const relax::OpInfo* info : relax::all_ops()) {
      std::cout << relax::op_signature(*info) << "\n    " << info->family << ": " << info->summary
                << "\n";
    }
    return 0;
  }
  if (positional.size() > 2) return fail("relax-opt: expected at most one input file");
  const std::string input = positional.size() == 2 ? positional[1] : "-";

  relax::transform::OptOptions options;
  options.passes = absl::GetFlag(FLAGS_passes);
  const std::string pipeline = absl::GetFlag(FLAGS_pipeline);
  if (!pipeline.empty() && pipeline != "default") {
    return fail(absl::StrCat("relax-opt: --pipeline takes `default`, not `", pipeline, "`"));
  }
  options.default_pipeline = pipeline == "default";
  options.target = absl::GetFlag(FLAGS_target);
  options.opt_level = absl::GetFlag(FLAGS_opt_level);
  options.disabled_passes = lists.values("disable_pass");
  options.pass_options = lists.values("pass_option");
  options.print_before = lists.values("print_before");
  options.print_after = lists.values("print_after");
  options.print_before_all = absl::GetFlag(FLAGS_print_before_all);
  options.print_after_all = absl::GetFlag(FLAGS_print_after_all);
  options.print_folder = absl::GetFlag(FLAGS_print_dir);
  options.timing = absl::GetFlag(FLAGS_timing);
  options.statistics = absl::GetFlag(FLAGS_statistics);
  options.verify_each = absl::GetFlag(FLAGS_verify_each);
  const std::string emit = absl::GetFlag(FLAGS_emit);
  if (emit != "text" && emit != "json") {
    return fail(absl::StrCat("relax-opt: --emit takes text or json, not `", emit, "`"));
  }

  absl::StatusOr<relax::IRModule> mod = read_input(input);
  if (!mod.ok()) return fail(std::string(mod.status().message()));
  absl::StatusOr<relax::IRModule> out = relax::transform::run_opt(*mod, options, std::cerr);
  if (!out.ok()) return fail(std::string(out.status().message()));
  if (!absl::GetFlag(FLAGS_plan_svg).empty()) {
    if (std::string error = write_plan_svg(*out); !error.empty()) return fail(error);
  }

  std::string text = emit == "json" ? relax::to_json(*out, 2) : relax::to_text(*out);
  if (text.empty() || text.back() != '\n') text.push_back('\n');
  const std::string output = absl::GetFlag(FLAGS_o);
  if (output == "-") {
    std::cout << text;
    return std::cout.good() ? 0 : fail("relax-opt: cannot write to standard output");
  }
  std::ofstream file(output, std::ios::binary);
  file << text;
  if (!file) return fail(absl::StrCat("relax-opt: cannot write ", output));
  return 0;
}
