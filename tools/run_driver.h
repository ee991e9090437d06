// The library behind the `relax-run` tool (relax_run.cc is a thin main() around it), so that
// tests call the tool's logic in-process.
//
//   relax-run model.relax --input=@x.npy --input=7 --input="shape(3, 4)" --output=@y.npy
//
// run_tool() loads the module -- a text module (`.relax` or any other name) or a JSON one
// (`.json`) is compiled with relax::build through the default pipeline or the one given
// (--passes, less any --disable-pass); an exported library (`.so`) is loaded with the runtime
// alone (relax::runtime::load_module) -- then calls one function with the inputs, in parameter
// order:
//   @PATH       a tensor read from the .npy file PATH
//   7, -3       an integer (a float when the parameter is a float Prim)
//   0.5, 1e-3   a float
//   shape(3, 4) a shape
// Each input may instead name its parameter, `--input=NAME=@x.npy` (an ONNX model's graph input
// names, a text module's parameter names), in any order; then every input names one.
//   random(3, 4) a tensor of those dims and the parameter's dtype holding deterministic
//               pseudo-random values (floats in [-1, 1), integers in [-5, 5] or [0, 9])
//   random(3, 4; 0.1, 10)
//               the same drawn from [0.1, 10) (floats) or the integers of [lo, hi], which
//               must fit the dtype
// The result is flattened (a tuple, nested or not, gives its fields in order); each flattened
// result goes to the matching --output=@PATH as a .npy file (a shape result as a 1-d int64
// array, an int or float result as a 0-d int64 or float64 one), or, without --output, is
// printed: its description and a numpy-like rendering of its values.
//
// Every error -- an unreadable module, an unknown function, the wrong number of inputs or
// outputs, an input that is not one of the forms above, a malformed .npy file, a shape or dtype
// the function rejects -- comes back as a Status whose message says what was wrong, never as a
// crash; the tool prints it on stderr and exits with status 1.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/module.h"
#include "relax/runtime/value.h"

namespace relax::tools {

/// What `relax-run` was asked to do: one field per command-line flag.
struct RunOptions {
  /// The module: text (default), `.json`, or an exported `.so`.
  std::string file;
  /// The function to call.
  std::string function = "main";
  /// The target text (relax::Target::parse); empty: the default target. Only for a module
  /// that is compiled here (an error with a `.so`).
  std::string target;
  /// A pipeline in the text form of transform::parse_pipeline ("legalize-ops,dce"); empty:
  /// the pipeline named by `pipeline`. Only for a module compiled here.
  std::string passes;
  /// A named pipeline: "default" (transform::build_default_pipeline), the one used when both
  /// this and `passes` are empty; giving both is an error.
  std::string pipeline;
  /// Passes that do not run (PassContext::disable_pass), one per --disable-pass.
  std::vector<std::string> disabled_passes;
  /// One entry per --input, in parameter order (see the file comment).
  std::vector<std::string> inputs;
  /// One entry per --output, `@PATH.npy`; empty: print the results.
  std::vector<std::string> outputs;
  /// One entry per --expect, `@PATH.npy`, one per flattened result: after the calls, each
  /// result is compared with the file and `expect K: max_abs_error=... max_rel_error=...` is
  /// printed (an error when the shapes or dtypes differ).
  std::vector<std::string> expects;
  /// One entry per --upper-bound, `NAME=VALUE`: the upper bound of an ONNX model's symbolic dim
  /// NAME (its dim_param) for memory planning and proofs; only for ONNX models.
  std::vector<std::string> upper_bounds;
  /// One entry per --dim-multiple, `NAME=M`: an ONNX model's symbolic dim NAME is taken only as a
  /// multiple of M (frontend::OnnxImportOptions::dim_multiples); only for ONNX models.
  std::vector<std::string> dim_multiples;
  /// 0: call once. N >= 1: call N times and print the median wall time of the calls.
  int64_t repeat = 0;
  /// After the calls, print one line per call of what it did with storage, as the
  /// ExecutionContext the calls run on counted it (runtime/execution_context.h):
  ///   call 1: arena_bytes=2048 output_bytes=1024 allocator_calls=2 context_reserved_bytes=3072
  /// (arena_bytes: the bytes of the call's storages it did not return -- the memory plan's
  /// arena; output_bytes: those of its outputs; allocator_calls: the allocations the call made,
  /// 0 once the context holds what the call needs; context_reserved_bytes: what the context
  /// keeps for the next call), then `peak_bytes=... allocations=... reserved_bytes=...` of the
  /// runtime's default allocator (peak and allocations over the calls, reserved at the end).
  bool memory_stats = false;
};

/// Runs the tool: loads, calls, writes or prints (to `out`). See the file comment.
absl::Status run_tool(const RunOptions& options, std::ostream& out);

/// The module of `options.file`, compiled or loaded as run_tool does. An ONNX model (recognised by
/// its content) is imported with its weights as constants: its inputs are the graph's, in order.
absl::StatusOr<runtime::Module> load_run_module(const RunOptions& options);

/// The argument that the input text `text` gives for parameter `index` of `fn` (see the file
/// comment); errors name the input by its position and the parameter.
absl::StatusOr<runtime::Value> parse_input(const std::string& text, size_t index,
                                           const runtime::Function& fn,
                                           const runtime::Module& module);

/// The values of `result` in order, tuples flattened depth-first.
std::vector<runtime::Value> flatten_result(const runtime::Value& result);

/// A numpy-like rendering of a host tensor's values: nested brackets, one row per line, the
/// columns aligned; with more than 1000 elements, only the first and last 3 entries of each
/// longer axis, with `...` between (numpy's threshold and edgeitems).
std::string summarize_tensor(const runtime::Tensor& tensor);

/// The largest absolute and relative errors of `got` against `want` (same shape and dtype, any
/// numeric or bool dtype), the relative one over the elements of |want| above 1e-6; NaN in one and
/// not the other is an infinite error (tensor_summary.cc, beside the element readers).
absl::StatusOr<std::pair<double, double>> tensor_errors(const runtime::Tensor& got, const runtime::Tensor& want);

}  // namespace relax::tools
