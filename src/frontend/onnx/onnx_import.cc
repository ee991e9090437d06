// Importing an ONNX model (relax/frontend/onnx.h): the model, its graph's inputs, initializers
// and outputs, and the walk over its nodes in order (ONNX graphs are topologically sorted),
// each converted by its row of the converter table (onnx_ops.cc).
#include <cctype>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/onnx/onnx_importer.h"
#include "onnx/checker.h"
#include "relax/frontend/onnx.h"
#include "relax/ir/struct_info.h"

namespace relax::frontend {
namespace onnx_detail {

// ---- Attributes, dtypes, tensors --------------------------------------------------------------

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, std::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t int_attr(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a != nullptr ? a->i() : fallback;
}

float float_attr(const onnx::NodeProto& node, std::string_view name, float fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a != nullptr ? a->f() : fallback;
}

std::optional<std::vector<int64_t>> ints_attr(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* a = find_attr(node, name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string string_attr(const onnx::NodeProto& node, std::string_view name, std::string fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a != nullptr ? a->s() : fallback;
}

std::string node_text(const onnx::NodeProto& node) {
  return absl::StrCat("node `", node.name(), "` (", node.op_type(), ")");
}

absl::Status node_error(const onnx::NodeProto& node, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(node_text(node), ": ", std::string(what)));
}

std::optional<DataType> dtype_of(int32_t elem_type) {
  using T = onnx::TensorProto;
  switch (elem_type) {
    case T::FLOAT: return DataType::float32();
    case T::DOUBLE: return DataType::float64();
    case T::FLOAT16: return DataType::float16();
    case T::BFLOAT16: return DataType::bfloat16();
    case T::INT64: return DataType::int64();
    case T::INT32: return DataType::int32();
    case T::INT16: return DataType{DataType::Code::kInt, 16, 1};
    case T::INT8: return DataType{DataType::Code::kInt, 8, 1};
    case T::UINT8: return DataType{DataType::Code::kUInt, 8, 1};
    case T::UINT16: return DataType{DataType::Code::kUInt, 16, 1};
    case T::UINT32: return DataType{DataType::Code::kUInt, 32, 1};
    case T::UINT64: return DataType{DataType::Code::kUInt, 64, 1};
    case T::BOOL: return DataType::boolean();
    default: return std::nullopt;
  }
}

namespace {

std::string elem_type_name(int32_t elem_type) {
  return onnx::TensorProto::DataType_IsValid(elem_type)
             ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type))
             : absl::StrCat("element type ", elem_type);
}

// Copies the typed field `values` into `t`, converting each element to T.
template <typename T, typename Field>
void copy_values(const Field& values, runtime::Tensor& t) {
  T* out = static_cast<T*>(t.data());
  int64_t i = 0;
  for (const auto& v : values) out[i++] = static_cast<T>(v);
}

}  // namespace

absl::StatusOr<runtime::Tensor> tensor_of(const onnx::TensorProto& t, const std::string& model_dir) {
  const std::optional<DataType> dtype = dtype_of(t.data_type());
  if (!dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor `", t.name(), "`: ", elem_type_name(t.data_type()), " has no relax dtype"));
  }
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: a negative dim ", d));
    numel *= d;
  }
  absl::StatusOr<runtime::Tensor> out = runtime::Tensor::empty(shape, *dtype);
  if (!out.ok()) return out.status();
  const size_t bytes = static_cast<size_t>(numel) * ((dtype->bits + 7) / 8);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0;
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset") offset = std::stoll(e.value());
    }
    const std::string path = model_dir.empty() ? location : model_dir + "/" + location;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return absl::NotFoundError(absl::StrCat("tensor `", t.name(), "`: its external data file ", path,
                                              " cannot be opened"));
    }
    in.seekg(offset);
    in.read(static_cast<char*>(out->data()), static_cast<std::streamsize>(bytes));
    if (static_cast<size_t>(in.gcount()) != bytes) {
      return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: ", path, " holds fewer than ",
                                                     bytes, " bytes at offset ", offset));
    }
    return out;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes) {
      return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: raw_data has ",
                                                     t.raw_data().size(), " bytes, its shape and dtype need ", bytes));
    }
    if (bytes > 0) std::memcpy(out->data(), t.raw_data().data(), bytes);
    return out;
  }
  using T = onnx::TensorProto;
  auto check = [&](int64_t count) -> absl::Status {
    if (count == numel) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("tensor `", t.name(), "`: ", count, " values for a shape of ", numel, " elements"));
  };
  absl::Status s;
  switch (t.data_type()) {
    case T::FLOAT:
      if (s = check(t.float_data_size()); s.ok()) copy_values<float>(t.float_data(), *out);
      break;
    case T::DOUBLE:
      if (s = check(t.double_data_size()); s.ok()) copy_values<double>(t.double_data(), *out);
      break;
    case T::INT64:
      if (s = check(t.int64_data_size()); s.ok()) copy_values<int64_t>(t.int64_data(), *out);
      break;
    case T::INT32:
      if (s = check(t.int32_data_size()); s.ok()) copy_values<int32_t>(t.int32_data(), *out);
      break;
    case T::INT8:
      if (s = check(t.int32_data_size()); s.ok()) copy_values<int8_t>(t.int32_data(), *out);
      break;
    case T::UINT8:
    case T::BOOL:
      if (s = check(t.int32_data_size()); s.ok()) copy_values<uint8_t>(t.int32_data(), *out);
      break;
    default:
      s = absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: ", elem_type_name(t.data_type()),
                                                  " values outside raw_data are not read"));
  }
  if (!s.ok()) return s;
  return out;
}

std::optional<std::vector<SymExpr>> known_ints(const runtime::Tensor& t) {
  const bool i64 = t.dtype() == DataType::int64();
  if ((!i64 && t.dtype() != DataType::int32()) || t.ndim() > 1 || t.numel() > 64) return std::nullopt;
  std::vector<SymExpr> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    out.push_back(SymExpr(i64 ? static_cast<const int64_t*>(t.data())[i] : static_cast<const int32_t*>(t.data())[i]));
  }
  return out;
}

// ---- The importer's context -------------------------------------------------------------------

Expr Importer::constant(runtime::Tensor t) { return make_constant(std::move(t)); }

absl::StatusOr<Expr> Importer::tensor(const Value& v, const onnx::NodeProto& node) {
  if (v.expr.defined()) return v.expr;
  if (!v.known) return node_error(node, "an input has no value");
  std::vector<int64_t> values;
  for (const SymExpr& e : *v.known) {
    std::optional<int64_t> c = e.as_const();
    if (!c) {
      return node_error(node, absl::StrCat("takes the shape value [", absl::StrJoin(*v.known, ", ",
                                                                                   [](std::string* out, const SymExpr& x) {
                                                                                     out->append(x.to_string());
                                                                                   }),
                                           "] as a tensor, which needs it computed at run time (not supported yet)"));
    }
    values.push_back(*c);
  }
  std::vector<int64_t> shape;
  if (!v.scalar) shape.push_back(static_cast<int64_t>(values.size()));
  absl::StatusOr<runtime::Tensor> t =
      v.known_dtype == DataType::int32()
          ? runtime::Tensor::from_vector(shape, std::vector<int32_t>(values.begin(), values.end()))
          : runtime::Tensor::from_vector(shape, values);
  if (!t.ok()) return t.status();
  return constant(*std::move(t));
}

std::optional<std::vector<SymExpr>> Importer::dims_of(const Expr& e) {
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape) return std::nullopt;
  return std::vector<SymExpr>(t->shape->begin(), t->shape->end());
}

int64_t Importer::rank_of(const Expr& e) {
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  return t == nullptr ? -1 : t->ndim;
}

}  // namespace onnx_detail

// ---------------------------------------------------------------------------------------------

using onnx_detail::Importer;
using onnx_detail::Value;

namespace {

constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 17;

// The import of one graph into one function.
class GraphImport {
 public:
  GraphImport(const onnx::ModelProto& model, const OnnxImportOptions& options, std::string model_dir)
      : model_(model), options_(options), model_dir_(std::move(model_dir)) {}

  absl::StatusOr<OnnxModel> run() {
    absl::StatusOr<int64_t> opset = default_opset();
    if (!opset.ok()) return opset.status();
    out_.report.opset = *opset;
    const onnx::GraphProto& graph = model_.graph();
    if (absl::Status s = check_supported(graph, *opset); !s.ok()) return s;

    ModuleBuilder mb;
    FunctionBuilder f = mb.function(options_.function_name);
    Importer importer(f, *opset);

    absl::flat_hash_map<std::string, const onnx::TensorProto*> initializers;
    for (const onnx::TensorProto& t : graph.initializer()) initializers[t.name()] = &t;
    // Graph inputs (an input that an initializer also names is the initializer: a default).
    for (const onnx::ValueInfoProto& input : graph.input()) {
      if (initializers.contains(input.name())) continue;
      absl::StatusOr<StructInfo> sinfo = input_sinfo(input);
      if (!sinfo.ok()) return sinfo.status();
      values_[input.name()] = Value{f.param(input.name(), *sinfo), std::nullopt, false};
      out_.input_names.push_back(input.name());
    }
    for (const auto& [name, multiple] : options_.dim_multiples) {
      if (!used_multiples_.contains(name)) {
        return absl::InvalidArgumentError(absl::StrCat("dim multiple of `", name, "`: no input has a dim of that name"));
      }
    }
    for (const auto& [name, upper] : options_.upper_bounds) {
      auto it = sym_vars_.find(name);
      if (it == sym_vars_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("upper bound of `", name, "`: no input has a dim of that name (",
                                                       absl::StrJoin(out_.report.dim_params, ", "), ")"));
      }
      f.upper_bound(it->second, upper);
    }
    // Initializers: parameters after the inputs, or constants.
    for (const onnx::TensorProto& t : graph.initializer()) {
      absl::StatusOr<runtime::Tensor> value = onnx_detail::tensor_of(t, model_dir_);
      if (!value.ok()) return value.status();
      Value v;
      v.known = onnx_detail::known_ints(*value);
      v.known_dtype = value->dtype();
      v.scalar = value->ndim() == 0;
      if (options_.weights_as_constants || v.known) {
        v.expr = Importer::constant(*value);
      } else {
        std::vector<SymExpr> dims;
        for (int64_t d : value->shape()) dims.push_back(SymExpr(d));
        v.expr = f.param(t.name(), tensor_sinfo(dims, value->dtype()));
        out_.weights.emplace_back(t.name(), *value);
      }
      values_[t.name()] = std::move(v);
    }

    // The graph is pure: one dataflow block (what fusion and library dispatch rewrite), whose
    // outputs leave it as the function's result.
    DataflowScope block = f.dataflow();
    for (const onnx::NodeProto& node : graph.node()) {
      if (absl::Status s = convert(importer, mb, node); !s.ok()) return s;
    }

    std::vector<Expr> results;
    for (const onnx::ValueInfoProto& output : graph.output()) {
      auto it = values_.find(output.name());
      if (it == values_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("graph output `", output.name(), "` is computed by no node"));
      }
      absl::StatusOr<Expr> e = importer.tensor(it->second, onnx::NodeProto());
      if (!e.ok()) return e.status();
      results.push_back(f.emit_output(*e));
      out_.output_names.push_back(output.name());
    }
    if (results.empty()) return absl::InvalidArgumentError("the graph has no outputs");
    block.end();
    out_.report.data_dependent_dims = importer.data_dependent();
    f.ret(results.size() == 1 ? results[0] : Expr(make_tuple(results)));
    absl::StatusOr<IRModule> module = mb.build();
    if (!module.ok()) return module.status();
    out_.module = *std::move(module);
    return std::move(out_);
  }

 private:
  absl::StatusOr<int64_t> default_opset() const {
    for (const onnx::OperatorSetIdProto& id : model_.opset_import()) {
      if (!id.domain().empty() && id.domain() != "ai.onnx") continue;
      if (id.version() < kMinOpset || id.version() > kMaxOpset) {
        return absl::InvalidArgumentError(absl::StrCat("the model imports opset ", id.version(),
                                                       " of the default domain; relax reads opsets ", kMinOpset,
                                                       " to ", kMaxOpset));
      }
      return id.version();
    }
    return absl::InvalidArgumentError("the model imports no opset of the default domain");
  }

  // Every node the table cannot convert, all at once.
  absl::Status check_supported(const onnx::GraphProto& graph, int64_t opset) const {
    std::vector<std::string> unsupported;
    for (const onnx::NodeProto& node : graph.node()) {
      const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
      if (default_domain && onnx_detail::find_converter(node.op_type()) != nullptr) continue;
      unsupported.push_back(absl::StrCat("`", node.name(), "` (", node.op_type(), ", domain \"",
                                         node.domain().empty() ? "ai.onnx" : node.domain(), "\", opset ", opset, ")"));
    }
    if (unsupported.empty()) return absl::OkStatus();
    return absl::UnimplementedError(absl::StrCat(unsupported.size(), " node", unsupported.size() == 1 ? "" : "s",
                                                 " of unsupported operators: ", absl::StrJoin(unsupported, ", "),
                                                 "; relax converts ",
                                                 absl::StrJoin(onnx_detail::supported_op_types(), ", ")));
  }

  absl::StatusOr<StructInfo> input_sinfo(const onnx::ValueInfoProto& input) {
    if (!input.type().has_tensor_type()) {
      return absl::InvalidArgumentError(absl::StrCat("graph input `", input.name(), "` is not a tensor"));
    }
    const onnx::TypeProto_Tensor& t = input.type().tensor_type();
    const std::optional<DataType> dtype = onnx_detail::dtype_of(t.elem_type());
    if (!dtype) {
      return absl::InvalidArgumentError(absl::StrCat("graph input `", input.name(), "`: element type ",
                                                     t.elem_type(), " has no relax dtype"));
    }
    if (!t.has_shape()) return tensor_sinfo_rank(-1, *dtype);
    std::vector<SymExpr> dims;
    for (int i = 0; i < t.shape().dim_size(); ++i) {
      const onnx::TensorShapeProto_Dimension& d = t.shape().dim(i);
      if (d.has_dim_value()) {
        dims.push_back(SymExpr(d.dim_value()));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        auto multiple = options_.dim_multiples.find(d.dim_param());
        if (multiple != options_.dim_multiples.end()) {
          if (multiple->second < 1) {
            return absl::InvalidArgumentError(absl::StrCat("dim multiple of `", d.dim_param(), "`: ", multiple->second,
                                                           " is not a positive number"));
          }
          used_multiples_.insert(d.dim_param());
          dims.push_back(sym_var(absl::StrCat(d.dim_param(), "_over_", multiple->second)) * multiple->second);
        } else {
          dims.push_back(sym_var(d.dim_param()));
        }
      } else {
        dims.push_back(sym_var(absl::StrCat(input.name(), "_dim", i)));
      }
    }
    return tensor_sinfo(dims, *dtype);
  }

  // The variable named `name`: one per name in the whole model.
  SymVar sym_var(const std::string& name) {
    auto it = sym_vars_.find(name);
    if (it != sym_vars_.end()) return it->second;
    SymVar v(name);
    sym_vars_.emplace(name, v);
    out_.report.dim_params.push_back(name);
    return v;
  }

  absl::Status convert(Importer& importer, const ModuleBuilder& mb, const onnx::NodeProto& node) {
    const onnx_detail::OpConverter* row = onnx_detail::find_converter(node.op_type());
    std::vector<const Value*> inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        inputs.push_back(nullptr);  // an omitted optional input
        continue;
      }
      auto it = values_.find(name);
      if (it == values_.end()) {
        return onnx_detail::node_error(node, absl::StrCat("reads `", name, "`, which no input, initializer or earlier node gives"));
      }
      inputs.push_back(&it->second);
    }
    const size_t errors_before = mb.errors().size();
    absl::StatusOr<std::vector<Value>> outputs = row->convert(importer, node, inputs);
    if (!outputs.ok()) return outputs.status();
    const std::vector<std::string> errors = mb.errors();
    if (errors.size() > errors_before) {
      std::vector<std::string> said;
      for (size_t i = errors_before; i < errors.size(); ++i) {
        // The builder's "file:line: " is the importer's own source; the node says where.
        const std::string& e = errors[i];
        const size_t colon = e.find(": ");
        const bool located = colon != std::string::npos && colon > 0 && std::isdigit(static_cast<unsigned char>(e[colon - 1]));
        said.push_back(located ? e.substr(colon + 2) : e);
      }
      return onnx_detail::node_error(node, absl::StrJoin(said, "; "));
    }
    for (size_t i = 0; i < outputs->size() && i < static_cast<size_t>(node.output_size()); ++i) {
      Value& v = (*outputs)[i];
      if (v.expr.defined()) {
        if (Importer::dims_of(v.expr)) {
          ++out_.report.symbolic_values;
        } else {
          ++out_.report.rank_only_values;
        }
      }
      values_[node.output(static_cast<int>(i))] = std::move(v);
    }
    return absl::OkStatus();
  }

  const onnx::ModelProto& model_;
  const OnnxImportOptions& options_;
  std::string model_dir_;
  absl::flat_hash_map<std::string, Value> values_;
  absl::flat_hash_map<std::string, SymVar> sym_vars_;
  absl::flat_hash_set<std::string> used_multiples_;
  OnnxModel out_;
};

absl::StatusOr<OnnxModel> import_model(std::string_view bytes, const OnnxImportOptions& options,
                                       const std::string& model_dir) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an ONNX model: ", bytes.size(), " bytes that do not parse as a ModelProto"));
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the ONNX checker refuses the model: ", e.what()));
  }
  return GraphImport(model, options, model_dir).run();
}

}  // namespace

absl::StatusOr<OnnxModel> import_onnx(std::string_view bytes, const OnnxImportOptions& options) {
  return import_model(bytes, options, "");
}

absl::StatusOr<OnnxModel> import_onnx_file(const std::string& path, const OnnxImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ONNX model ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  const size_t slash = path.find_last_of('/');
  return import_model(bytes, options, slash == std::string::npos ? "" : path.substr(0, slash));
}

}  // namespace relax::frontend
