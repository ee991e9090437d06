// The ONNX importer's checks of a whole model before its graph is walked (onnx_importer.h): the
// external data files, ONNX's checker looking beside the model, and what libonnx's version
// converter and shape inference cannot take (they crash on it; found by fuzzing).
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_importer.h"
#include "onnx/checker.h"

namespace relax::frontend::onnx_detail {

// Each external data file the graph's initializers (and its subgraphs') name lies beside the
// model and exists: else an error naming the tensor and the file (before the checker, whose
// message says less).
absl::Status check_external_files(const onnx::GraphProto& graph, const std::string& model_dir) {
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::string location;
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      if (e.key() == "location") location = e.value();
    }
    if (!file_beside_model(location)) {
      return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: external data location `", location,
                                                     "` is not a file name beside the model"));
    }
    const std::string path = model_dir.empty() ? location : model_dir + "/" + location;
    if (!std::filesystem::is_regular_file(path)) {
      return absl::NotFoundError(absl::StrCat("tensor `", t.name(), "`: cannot open external data file ", path));
    }
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) {
        if (absl::Status s = check_external_files(a.g(), model_dir); !s.ok()) return s;
      }
      for (const onnx::GraphProto& g : a.graphs()) {
        if (absl::Status s = check_external_files(g, model_dir); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

// The first output of `graph` (or of a graph its nodes hold) that neither its inputs, its
// initializers, its nodes nor the enclosing graphs' values (`outer`) give: the version
// converter's graph import dereferences it unchecked (a SEGV the fuzzer found).
std::optional<std::string> output_without_producer(const onnx::GraphProto& graph, absl::flat_hash_set<std::string> outer) {
  for (const onnx::ValueInfoProto& v : graph.input()) outer.insert(v.name());
  for (const onnx::TensorProto& t : graph.initializer()) outer.insert(t.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) {
        if (std::optional<std::string> inner = output_without_producer(a.g(), outer)) return inner;
      }
      for (const onnx::GraphProto& g : a.graphs()) {
        if (std::optional<std::string> inner = output_without_producer(g, outer)) return inner;
      }
    }
    for (const std::string& o : node.output()) outer.insert(o);
  }
  for (const onnx::ValueInfoProto& v : graph.output()) {
    if (!outer.contains(v.name())) return v.name();
  }
  return std::nullopt;
}

// The first convolution or pool of `graph` (or of a graph its nodes hold) without a
// kernel_shape attribute, as "node `name` (op_type)".
std::optional<std::string> conv_without_kernel_shape(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string& op = node.op_type();
    const bool windowed = op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "QLinearConv" ||
                          op == "MaxPool" || op == "AveragePool" || op == "LpPool";
    if (windowed && find_attr(node, "kernel_shape") == nullptr) return node_text(node);
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) {
        if (std::optional<std::string> inner = conv_without_kernel_shape(a.g())) return inner;
      }
      for (const onnx::GraphProto& g : a.graphs()) {
        if (std::optional<std::string> inner = conv_without_kernel_shape(g)) return inner;
      }
    }
  }
  return std::nullopt;
}

// The ONNX checker's check_model, with external data files looked up beside the model (its
// check_model of a message looks in the working directory).
void check_model_in(const onnx::ModelProto& model, const std::string& model_dir) {
  if (model.ir_version() == 0) throw std::runtime_error("the model does not set its ir_version");
  if (model.ir_version() > onnx::IR_VERSION) {
    throw std::runtime_error(absl::StrCat("the model's ir_version ", model.ir_version(), " is newer than the checker's ",
                                          static_cast<int64_t>(onnx::IR_VERSION)));
  }
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(model.ir_version()));
  ctx.set_model_dir(model_dir);
  std::unordered_map<std::string, int> opsets;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) opsets[id.domain()] = static_cast<int>(id.version());
  if (model.ir_version() >= 3 && opsets.empty()) throw std::runtime_error("the model imports no opset");
  if (model.ir_version() < 3) {
    if (!opsets.empty()) throw std::runtime_error("a model of ir_version below 3 imports opsets");
    opsets[""] = 1;
  }
  ctx.set_opset_imports(opsets);
  onnx::checker::LexicalScopeContext scope;
  onnx::checker::check_graph(model.graph(), ctx, scope);
  if (model.ir_version() >= 8) onnx::checker::check_model_local_functions(model, ctx, scope);
}

}  // namespace relax::frontend::onnx_detail
