// relax-run: compile a text module (or load an exported library) and call one function.
//
//   relax-run model.relax --input=@x.npy --input=7 --input="shape(3, 4)" --output=@y.npy
//
// The flags map one to one onto relax::tools::RunOptions (run_driver.h), which documents them;
// any error is printed on stderr and the exit status is 1.
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "list_flags.h"
#include "run_driver.h"

ABSL_FLAG(std::string, function, "main", "the function to call");
ABSL_FLAG(std::string, target, "",
          "the target of a module compiled here, e.g. \"cpu -threads=1\" or \"cuda -arch=sm_90\" "
          "(default: cpu); a cuda module gets its tensor inputs copied to the GPU and its results "
          "copied back");
ABSL_FLAG(std::string, passes, "",
          "the pass pipeline, e.g. \"legalize-ops,dce\" (default: the default pipeline)");
ABSL_FLAG(std::string, pipeline, "", "a named pipeline instead of --passes: default");
ABSL_FLAG(std::string, disable_pass, "",
          "a pass that does not run (spelled --disable-pass or --disable_pass); repeat the flag "
          "for each pass");
ABSL_FLAG(std::string, input, "",
          "one per parameter, in order: @FILE.npy (a tensor), random(d0, d1, ...) (a tensor of "
          "pseudo-random values; random(d0, ...; lo, hi) draws them from [lo, hi) for floats, the integers in [lo, hi] for integer dtypes), an integer or a number (a Prim), or shape(d0, d1, ...); repeat "
          "the flag for each parameter");
ABSL_FLAG(std::string, output, "",
          "@FILE.npy for each result (a tuple result flattened in order); without it the results "
          "are printed");
ABSL_FLAG(std::string, expect, "",
          "@FILE.npy for each result: compare it with the file and print its max_abs_error and "
          "max_rel_error; repeat the flag for each result");
ABSL_FLAG(std::string, upper_bound, "",
          "NAME=VALUE: the upper bound of an ONNX model's symbolic dim NAME (spelled --upper-bound "
          "or --upper_bound); repeat the flag for each dim");
ABSL_FLAG(std::string, dim_multiple, "",
          "NAME=M: an ONNX model's symbolic dim NAME is taken only as a multiple of M (spelled "
          "--dim-multiple or --dim_multiple); repeat the flag for each dim");
ABSL_FLAG(int64_t, repeat, 0, "call the function N times and print the median wall time");
ABSL_FLAG(bool, memory_stats, false,
          "after the calls, print for each call `call K: arena_bytes=... output_bytes=... "
          "allocator_calls=... context_reserved_bytes=...` (the bytes of the storages the call "
          "used and did not return -- the memory plan's arena --, those of its outputs, the "
          "allocations it made, and what the execution context the calls share keeps for the "
          "next call), then peak_bytes=... allocations=... reserved_bytes=... of the runtime "
          "allocator (the GPU's pool for a cuda module) over all the calls (spelled --memory-stats "
          "or --memory_stats)");

int main(int argc, char** argv) {
  // Repeated flags accumulate in order (Abseil keeps only the last occurrence); --input and
  // --output keep their commas ("shape(3, 4)").
  relax::tools::ListFlags lists(argc, argv, {"disable_pass", "input", "output", "expect", "upper_bound", "dim_multiple"},
                                {"input", "output", "expect"});
  relax::tools::set_usage("relax_run.cc",
      "relax-run FILE [--function=main] [--target=cpu] [--passes=PIPELINE | --pipeline=default] "
      "[--disable-pass=P] --input=@x.npy --input=7 "
      "--input=\"shape(3, 4)\" ... [--output=@y.npy ...] [--repeat=N] [--memory-stats]\n"
      "Compiles a text module (or loads an exported .so) and calls one function.");
  std::vector<char*> positional = absl::ParseCommandLine(lists.argc(), lists.argv());
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
  options.disabled_passes = lists.values("disable_pass");
  options.inputs = lists.values("input");
  options.outputs = lists.values("output");
  options.expects = lists.values("expect");
  options.upper_bounds = lists.values("upper_bound");
  options.dim_multiples = lists.values("dim_multiple");
  options.repeat = absl::GetFlag(FLAGS_repeat);
  options.memory_stats = absl::GetFlag(FLAGS_memory_stats);
  absl::Status s = relax::tools::run_tool(options, std::cout);
  if (!s.ok()) {
    std::cerr << "relax-run: " << s.message() << "\n";
    return 1;
  }
  return 0;
}
