// relax-run: compile a text module (or load an exported library) and call one function.
//
//   relax-run model.relax --input=@x.npy --input=7 --input="shape(3, 4)" --output=@y.npy
//
// The flags map one to one onto relax::tools::RunOptions (run_driver.h), which documents them;
// any error is printed on stderr and the exit status is 1.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "run_driver.h"

ABSL_FLAG(std::string, function, "main", "the function to call");
ABSL_FLAG(std::string, target, "",
          "the target of a module compiled here, e.g. \"cpu -threads=1\" (default: cpu)");
ABSL_FLAG(std::string, passes, "",
          "the pass pipeline, e.g. \"legalize-ops,dce\" (default: the default pipeline)");
ABSL_FLAG(std::string, pipeline, "", "a named pipeline instead of --passes: default");
ABSL_FLAG(std::string, disable_pass, "",
          "a pass that does not run (spelled --disable-pass or --disable_pass); repeat the flag "
          "for each pass");
ABSL_FLAG(std::string, input, "",
          "one per parameter, in order: @FILE.npy (a tensor), an integer or a number (a Prim), "
          "or shape(d0, d1, ...); repeat the flag for each parameter");
ABSL_FLAG(std::string, output, "",
          "@FILE.npy for each result (a tuple result flattened in order); without it the results "
          "are printed");
ABSL_FLAG(int64_t, repeat, 0, "call the function N times and print the median wall time");
ABSL_FLAG(bool, memory_stats, false,
          "print peak_bytes=... allocations=... reserved_bytes=... of the runtime allocator after "
          "the calls (spelled --memory-stats or --memory_stats)");

namespace {

// Abseil keeps only the last value of a flag given more than once, so the repeated flags
// (--input, --output, --disable-pass) are collected from argv here, in order, in each form Abseil accepts:
// --name=value, -name=value, --name value, -name value. (A list-typed flag would split
// "shape(3, 4)" at its comma.)
std::vector<std::string> repeated(int argc, char** argv, const std::string& name) {
  std::vector<std::string> values;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    for (const std::string dashes : {"--", "-"}) {
      const std::string flag = dashes + name;
      if (arg.rfind(flag + "=", 0) == 0) {
        values.push_back(arg.substr(flag.size() + 1));
        break;
      }
      if (arg == flag && i + 1 < argc) {
        values.push_back(argv[++i]);
        break;
      }
    }
  }
  return values;
}

// Abseil flag names are C++ identifiers; the command line spells them with dashes
// (--memory-stats), as relax-opt does. Rewrites the name part of each flag argument, up to
// its '=', to underscores; values are untouched.
std::vector<std::string> underscore_flag_names(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    const size_t start = arg.find_first_not_of('-');
    const size_t end = std::min(arg.find('='), arg.size());
    for (size_t c = start; c < end; ++c) {
      if (arg[c] == '-') arg[c] = '_';
    }
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> arg_storage = underscore_flag_names(argc, argv);
  std::vector<char*> args;
  for (std::string& arg : arg_storage) args.push_back(arg.data());
  argc = static_cast<int>(args.size());
  argv = args.data();
  // --help lists the flags of this file (Abseil's default looks for a file named after the
  // program, relax-run.cc).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) { return absl::EndsWith(file, "relax_run.cc"); };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(
      "relax-run FILE [--function=main] [--target=cpu] [--passes=PIPELINE | --pipeline=default] "
      "[--disable-pass=P] --input=@x.npy --input=7 "
      "--input=\"shape(3, 4)\" ... [--output=@y.npy ...] [--repeat=N] [--memory-stats]\n"
      "Compiles a text module (or loads an exported .so) and calls one function.");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  relax::tools::RunOptions options;
  if (positional.size() != 2) {
    std::cerr << "relax-run: expected one module file, got " << positional.size() - 1
              << "; usage: " << absl::ProgramUsageMessage() << "\n";
    return 1;
  }
  options.file = positional[1];
  options.function = absl::GetFlag(FLAGS_function);
  options.target = absl::GetFlag(FLAGS_target);
  options.passes = absl::GetFlag(FLAGS_passes);
  options.pipeline = absl::GetFlag(FLAGS_pipeline);
  options.disabled_passes = repeated(argc, argv, "disable_pass");
  options.inputs = repeated(argc, argv, "input");
  options.outputs = repeated(argc, argv, "output");
  options.repeat = absl::GetFlag(FLAGS_repeat);
  options.memory_stats = absl::GetFlag(FLAGS_memory_stats);
  absl::Status s = relax::tools::run_tool(options, std::cout);
  if (!s.ok()) {
    std::cerr << "relax-run: " << s.message() << "\n";
    return 1;
  }
  return 0;
}
