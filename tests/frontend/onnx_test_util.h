// Helpers of the importer's tests: ONNX models written node by node with the ONNX protobuf
// classes, and random inputs.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "relax/runtime/npy.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"

namespace relax::frontend::onnx_test {

using Dim = std::variant<int64_t, std::string>;

/// A model written node by node.
class OnnxGraph {
 public:
  explicit OnnxGraph(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("relax-test");
    onnx::OperatorSetIdProto* id = model_.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
    model_.mutable_graph()->set_name("g");
  }

  void input(const std::string& name, std::vector<Dim> dims, int32_t type = onnx::TensorProto::FLOAT) {
    value_info(model_.mutable_graph()->add_input(), name, type, &dims);
  }
  // The checker wants an output's shape; unnamed dims of its rank do (the importer deduces it).
  void output(const std::string& name, size_t rank, int32_t type = onnx::TensorProto::FLOAT) {
    std::vector<Dim> dims(rank, Dim(std::string()));
    value_info(model_.mutable_graph()->add_output(), name, type, &dims);
  }
  void floats(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  void ints(const std::string& name, std::vector<int64_t> values) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  /// A float32 initializer whose data lies in the file `location` (beside the model) at
  /// `offset`.
  void external(const std::string& name, std::vector<int64_t> dims, const std::string& location, int64_t offset) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [key, value] : {std::pair<const char*, std::string>{"location", location}, {"offset", std::to_string(offset)}}) {
      onnx::StringStringEntryProto* e = t->add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
  }
  /// An initializer of any element type from its raw little-endian bytes.
  void raw(const std::string& name, int32_t type, std::vector<int64_t> dims, const std::string& bytes) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(bytes);
  }
  onnx::NodeProto& node(const std::string& op_type, std::vector<std::string> inputs, std::vector<std::string> outputs) {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_name(absl::StrCat("n", model_.graph().node_size() - 1, "_", op_type));
    n->set_op_type(op_type);
    for (const std::string& i : inputs) n->add_input(i);
    for (const std::string& o : outputs) n->add_output(o);
    return *n;
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, float v) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  /// Float lists (Upsample-7's scales).
  static void attr(onnx::NodeProto& n, const std::string& name, std::vector<float> v) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  /// A graph attribute (If's branches): `body` is another OnnxGraph's graph.
  static void attr(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& body) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = body;
    a->mutable_g()->set_name(name);
  }
  const onnx::GraphProto& graph() const { return model_.graph(); }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  static void value_info(onnx::ValueInfoProto* v, const std::string& name, int32_t type, std::vector<Dim>* dims) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    if (dims == nullptr) return;
    onnx::TensorShapeProto* shape = t->mutable_shape();
    for (const Dim& d : *dims) {
      onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
      if (const auto* value = std::get_if<int64_t>(&d)) {
        dim->set_dim_value(*value);
      } else if (!std::get<std::string>(d).empty()) {
        dim->set_dim_param(std::get<std::string>(d));
      }
    }
  }

  onnx::ModelProto model_;
};

/// A call's result as tensors: the fields of a tuple (a model with several outputs), else itself.
inline std::vector<runtime::Tensor> result_tensors(const runtime::Value& y) {
  std::vector<runtime::Tensor> out;
  if (y.is_tuple()) {
    const absl::StatusOr<std::vector<runtime::Value>> fields = y.fields();
    for (const runtime::Value& v : *fields) out.push_back(v.tensor_or_die());
  } else {
    out.push_back(y.tensor_or_die());
  }
  return out;
}

inline std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> out(n);
  for (float& v : out) v = dist(rng);
  return out;
}

}  // namespace relax::frontend::onnx_test
