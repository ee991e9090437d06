// relax::frontend: importing ONNX models into an IRModule whose dynamic dimensions stay symbolic.
//
// ONNX marks a dynamic dimension with a name (`dim_param`) or leaves it unnamed, and exported
// graphs compute their reshapes at run time (Shape -> Gather -> Unsqueeze -> Concat -> Reshape).
// The importer keeps what those computations know: every `dim_param` becomes one SymVar of that
// name (the same name is the same variable across inputs), an unnamed dynamic dim a fresh one,
// and shape-computing nodes are evaluated symbolically at import, so that the reshape of a
// (batch, seq, 768) tensor is annotated (batch, seq, 12, 64), not "rank 4".
//
//   absl::StatusOr<relax::frontend::OnnxModel> m = relax::frontend::import_onnx_file("bert.onnx");
//   absl::StatusOr<relax::runtime::Module> built = relax::build(m->module, "cpu");
//   // inputs in graph order, then the weights in m->weights' order
//
// The graph becomes one function ("main" unless asked otherwise): its parameters are the graph
// inputs in order (initializers excluded), then (by default) one parameter per initializer,
// whose values OnnxModel::weights carries for the caller to pass or bind; with
// `weights_as_constants` the initializers are constants in the module instead. Its result is
// the graph output, or a tuple of the outputs in graph order.
//
// Errors are Statuses: bytes that are not a ModelProto, a model the ONNX checker refuses, an
// opset above 17 of the default domain (a model of opsets 1-6 is first brought to 7 by ONNX's
// version converter), and every unsupported node of the model at once
// (name, op_type, domain, opset), each naming what was found and what is taken. A shape known
// only at run time (NonZero's count) becomes a symbolic dim bound by a match_cast.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/module.h"
#include "relax/runtime/tensor.h"

namespace relax::frontend {

/// How a model is imported.
struct OnnxImportOptions {
  /// The name of the graph's function in the module.
  std::string function_name = "main";
  /// Initializers as constants in the module (true) or as parameters after the graph inputs
  /// whose values OnnxModel::weights carries (false).
  bool weights_as_constants = false;
  /// Upper bounds of symbolic dims by their dim_param name (FunctionBuilder::upper_bound: memory
  /// planning and proofs use them); a name no input declares is an error.
  std::map<std::string, int64_t> upper_bounds;
  /// Dims a model takes only as multiples of a number (an image side that downsamples by 32 and
  /// upsamples back) by their dim_param name: such a dim becomes `m * <name>_over_m`, a new
  /// variable times m, so that the shapes that meet again are provably equal; a call whose dim
  /// is not a multiple is refused when it binds the variable. A name no input declares is an error.
  std::map<std::string, int64_t> dim_multiples;
};

/// What the import found.
struct OnnxImportReport {
  int64_t opset = 0;             ///< the default domain's opset the model imports
  /// The opset the model was written for when below 7: ONNX's version converter brought it to 7
  /// before the import (0 when it was not converted).
  int64_t converted_from_opset = 0;
  int64_t symbolic_values = 0;   ///< values whose every dim is known (constant or symbolic)
  int64_t rank_only_values = 0;  ///< values known only by rank (data-dependent shapes)
  std::vector<std::string> dim_params;  ///< the symbolic variables, in order of appearance
  /// Dims known only at run time (NonZero's count, ...): bound by a match_cast where they
  /// appear, so that what follows is deduced in terms of them.
  std::vector<std::string> data_dependent_dims;
  /// Broadcasts whose dims the import could not prove equal (nor 1) and did not prove unequal:
  /// `pos[: n]` of a fixed table against a tensor of n rows is (min(1500, n), n) until n <= 1500
  /// is known. Each operand's dim is then asserted by a match_cast, checked when the function
  /// runs (an error naming both dims, where ONNX Runtime too would fail); upper bounds prove most
  /// of them away. One line per check: "node `NAME` (OP): DIM == DIM".
  std::vector<std::string> runtime_checks;
};

/// An imported model.
struct OnnxModel {
  IRModule module;
  std::vector<std::string> input_names;   ///< the graph inputs, the function's first parameters
  std::vector<std::string> output_names;  ///< the graph outputs, in result order
  /// The initializers as parameters after the inputs, in order (empty with weights_as_constants).
  std::vector<std::pair<std::string, runtime::Tensor>> weights;
  OnnxImportReport report;
};

/// Whether `bytes` look like a serialized ONNX ModelProto: they start with the tag of a field a
/// serializer writes first (ir_version 0x08, producer_name 0x12, graph 0x3a, opset_import 0x42),
/// where a text module starts with a letter, a comment or a space and JSON with `{`. How the tools
/// tell a model file from a module; inline, so that a tool built without the importer can still
/// say that the file is a model it cannot read.
inline bool looks_like_onnx(std::string_view bytes) {
  if (bytes.size() < 2) return false;
  const auto tag = static_cast<unsigned char>(bytes[0]);
  return tag == 0x08 || tag == 0x12 || tag == 0x3a || tag == 0x42;
}

/// Imports the serialized ModelProto `bytes`.
absl::StatusOr<OnnxModel> import_onnx(std::string_view bytes, const OnnxImportOptions& options = {});

/// Imports the model file at `path`.
absl::StatusOr<OnnxModel> import_onnx_file(const std::string& path, const OnnxImportOptions& options = {});

}  // namespace relax::frontend
