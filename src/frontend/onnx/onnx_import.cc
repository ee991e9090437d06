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
  if (v.known_dtype.is_bool()) {
    absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(shape, DataType::boolean());
    if (!t.ok()) return t.status();
    for (size_t i = 0; i < values.size(); ++i) static_cast<uint8_t*>(t->data())[i] = values[i] != 0 ? 1 : 0;
    return constant(*std::move(t));
  }
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

// The names a graph reads from the graphs around it: what its nodes (and their subgraphs, in
// turn) read that neither its inputs, its initializers nor its nodes give.
void free_names(const onnx::GraphProto& graph, absl::flat_hash_set<std::string>& out) {
  absl::flat_hash_set<std::string> own;
  for (const onnx::ValueInfoProto& v : graph.input()) own.insert(v.name());
  for (const onnx::TensorProto& t : graph.initializer()) own.insert(t.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& name : node.input()) {
      if (!name.empty() && !own.contains(name)) out.insert(name);
    }
    for (const onnx::AttributeProto& a : node.attribute()) {
      absl::flat_hash_set<std::string> inner;
      if (a.has_g()) free_names(a.g(), inner);
      for (const onnx::GraphProto& g : a.graphs()) free_names(g, inner);
      for (const std::string& name : inner) {
        if (!own.contains(name)) out.insert(name);
      }
    }
    for (const std::string& name : node.output()) own.insert(name);
  }
  for (const onnx::ValueInfoProto& v : graph.output()) {
    if (!own.contains(v.name())) out.insert(v.name());
  }
}

// What a node reads: its inputs and its subgraphs' free names.
absl::flat_hash_set<std::string> reads_of(const onnx::NodeProto& node) {
  absl::flat_hash_set<std::string> out;
  for (const std::string& name : node.input()) {
    if (!name.empty()) out.insert(name);
  }
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.has_g()) free_names(a.g(), out);
    for (const onnx::GraphProto& g : a.graphs()) free_names(g, out);
  }
  return out;
}

// The import of one graph (and the graphs its nodes hold) into one function.
//
// A graph's nodes are emitted into dataflow blocks (what fusion and library dispatch rewrite).
// An If whose condition is known only at run time cannot stand in one: the block ends before it
// and a new one starts after it, and every value that crosses the boundary -- read by the If's
// branches or by a node after it -- leaves its block as an output. Which Ifs are such is known
// only once their condition is converted, so the import starts again when it meets a new one,
// knowing it (`boundaries_`).
class GraphImport : public onnx_detail::SubgraphHost {
 public:
  GraphImport(const onnx::ModelProto& model, const OnnxImportOptions& options, std::string model_dir)
      : model_(model), options_(options), model_dir_(std::move(model_dir)) {}

  absl::StatusOr<OnnxModel> run() {
    for (;;) {
      absl::StatusOr<OnnxModel> out = attempt();
      if (!out.ok() && restart_ != nullptr) {
        boundaries_.insert(restart_);
        restart_ = nullptr;
        continue;
      }
      return out;
    }
  }

  absl::StatusOr<std::vector<Value>> inline_graph(const onnx::GraphProto& graph) override {
    for (const onnx::NodeProto& node : graph.node()) {
      if (boundaries_.contains(&node)) {
        return onnx_detail::node_error(node, "an If decided at run time inside a branch chosen at import is not supported");
      }
    }
    scopes_.emplace_back();
    absl::StatusOr<std::vector<Value>> out = convert_graph_nodes(graph, /*own_blocks=*/false);
    scopes_.pop_back();
    return out;
  }

  absl::StatusOr<std::vector<Value>> emit_if(const onnx::NodeProto& node, Expr cond, const onnx::GraphProto& then_graph,
                                             const onnx::GraphProto& else_graph) override {
    if (!boundaries_.contains(&node)) {
      restart_ = &node;
      return absl::AbortedError("restarting the import with a block boundary at an If");
    }
    if (then_graph.output_size() != else_graph.output_size()) {
      return onnx_detail::node_error(node, absl::StrCat("its branches give ", then_graph.output_size(), " and ",
                                                        else_graph.output_size(), " outputs"));
    }
    FunctionBuilder& f = importer_->builder();
    absl::Status failed;
    auto branch = [&](const onnx::GraphProto& g) -> Expr {
      scopes_.emplace_back();
      absl::StatusOr<std::vector<Value>> outs = convert_graph_nodes(g, /*own_blocks=*/true);
      std::vector<Expr> results;
      if (outs.ok()) {
        for (const Value& v : *outs) results.push_back(v.expr);
      }
      scopes_.pop_back();
      if (!outs.ok()) {
        if (failed.ok()) failed = outs.status();
        return Expr();
      }
      return results.size() == 1 ? results[0] : make_tuple(results);
    };
    Var r = f.emit_if(cond, [&] { return branch(then_graph); }, [&] { return branch(else_graph); });
    if (!failed.ok()) return failed;
    std::vector<Value> outs;
    if (then_graph.output_size() == 1) {
      outs.push_back(onnx_detail::tensor_value(r));
    } else {
      for (int i = 0; i < then_graph.output_size(); ++i) {
        outs.push_back(onnx_detail::tensor_value(f.emit(make_tuple_get_item(r, i))));
      }
    }
    return outs;
  }

 private:
  absl::StatusOr<OnnxModel> attempt() {
    out_ = OnnxModel();
    scopes_.assign(1, {});
    sym_vars_.clear();
    used_multiples_.clear();
    absl::StatusOr<int64_t> opset = default_opset();
    if (!opset.ok()) return opset.status();
    out_.report.opset = *opset;
    const onnx::GraphProto& graph = model_.graph();
    if (absl::Status s = check_supported(graph, *opset); !s.ok()) return s;

    ModuleBuilder mb;
    FunctionBuilder f = mb.function(options_.function_name);
    Importer importer(f, *opset, *this);
    importer_ = &importer;
    mb_ = &mb;

    absl::flat_hash_map<std::string, const onnx::TensorProto*> initializers;
    for (const onnx::TensorProto& t : graph.initializer()) initializers[t.name()] = &t;
    // Graph inputs (an input that an initializer also names is the initializer: a default).
    dim_params_.clear();
    for (const onnx::ValueInfoProto& input : graph.input()) {
      if (initializers.contains(input.name()) || !input.type().tensor_type().has_shape()) continue;
      for (const auto& d : input.type().tensor_type().shape().dim()) {
        if (d.has_dim_param()) dim_params_.insert(d.dim_param());
      }
    }
    for (const onnx::ValueInfoProto& input : graph.input()) {
      if (initializers.contains(input.name())) continue;
      absl::StatusOr<StructInfo> sinfo = input_sinfo(input);
      if (!sinfo.ok()) return sinfo.status();
      set_value(input.name(), Value{f.param(input.name(), *sinfo), std::nullopt, false});
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
      Value v = initializer_value(*value);
      if (!v.expr.defined()) {
        std::vector<SymExpr> dims;
        for (int64_t d : value->shape()) dims.push_back(SymExpr(d));
        v.expr = f.param(t.name(), tensor_sinfo(dims, value->dtype()));
        out_.weights.emplace_back(t.name(), *value);
      }
      set_value(t.name(), std::move(v));
    }

    absl::StatusOr<std::vector<Value>> outputs = convert_graph_nodes(graph, /*own_blocks=*/true);
    if (!outputs.ok()) return outputs.status();
    std::vector<Expr> results;
    for (int i = 0; i < graph.output_size(); ++i) {
      results.push_back((*outputs)[static_cast<size_t>(i)].expr);
      out_.output_names.push_back(graph.output(i).name());
    }
    if (results.empty()) return absl::InvalidArgumentError("the graph has no outputs");
    out_.report.data_dependent_dims = importer.data_dependent();
    out_.report.runtime_checks = importer.runtime_checks();
    f.ret(results.size() == 1 ? results[0] : Expr(make_tuple(results)));
    absl::StatusOr<IRModule> module = mb.build();
    if (!module.ok()) return module.status();
    out_.module = *std::move(module);
    return std::move(out_);
  }

  // An initializer's value: a constant when asked for (or when a shape value, known at import),
  // else without an expression (the caller makes it a parameter).
  Value initializer_value(const runtime::Tensor& t) const {
    Value v;
    v.known = onnx_detail::known_ints(t);
    v.known_dtype = t.dtype();
    v.scalar = t.ndim() == 0;
    if (options_.weights_as_constants || v.known) v.expr = Importer::constant(t);
    return v;
  }

  // Converts `graph`'s nodes in the innermost scope and returns its outputs. With `own_blocks`
  // the nodes go into dataflow blocks of their own, split at the If boundaries (else into the
  // caller's block: a branch inlined at import).
  absl::StatusOr<std::vector<Value>> convert_graph_nodes(const onnx::GraphProto& graph, bool own_blocks) {
    // A subgraph's initializers are constants (they are not the model's weights).
    if (&graph != &model_.graph()) {
      for (const onnx::TensorProto& t : graph.initializer()) {
        absl::StatusOr<runtime::Tensor> value = onnx_detail::tensor_of(t, model_dir_);
        if (!value.ok()) return value.status();
        Value v = initializer_value(*value);
        if (!v.expr.defined()) v.expr = Importer::constant(*value);
        set_value(t.name(), std::move(v));
      }
    }
    const absl::flat_hash_set<std::string> crossing = own_blocks ? crossing_names(graph) : absl::flat_hash_set<std::string>();
    FunctionBuilder& f = importer_->builder();
    std::optional<DataflowScope> block;
    if (own_blocks) block.emplace(f.dataflow());
    for (const onnx::NodeProto& node : graph.node()) {
      const bool boundary = boundaries_.contains(&node);
      if (boundary && block) block->end();
      if (absl::Status s = convert(node); !s.ok()) return s;
      if (boundary && own_blocks) {
        block.reset();
        block.emplace(f.dataflow());
      }
      for (const std::string& name : node.output()) {
        if (!crossing.contains(name)) continue;
        Value* v = find_value(name);
        if (v != nullptr && v->expr.defined() && v->expr.kind() == ExprKind::kDataflowVar) {
          v->expr = f.emit_output(v->expr);
        }
      }
    }
    std::vector<Value> outputs;
    for (const onnx::ValueInfoProto& output : graph.output()) {
      const Value* v = find_value(output.name());
      if (v == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("graph output `", output.name(), "` is computed by no node"));
      }
      outputs.push_back(*v);
      if (own_blocks) {
        // Leaving the block: the graph's results are its outputs.
        absl::StatusOr<Expr> e = importer_->tensor(*v, onnx::NodeProto());
        if (!e.ok()) return e.status();
        outputs.back().expr = f.emit_output(*e);
      }
    }
    if (block) block->end();
    return outputs;
  }

  // The values of `graph` that cross one of its block boundaries: made in one block and read by
  // a boundary If, a later block, or the graph's outputs (which are emitted after the last block).
  absl::flat_hash_set<std::string> crossing_names(const onnx::GraphProto& graph) const {
    absl::flat_hash_set<std::string> out;
    bool any = false;
    for (const onnx::NodeProto& node : graph.node()) any = any || boundaries_.contains(&node);
    absl::flat_hash_map<std::string, int> segment_of;
    int segment = 0;
    for (const onnx::NodeProto& node : graph.node()) {
      const bool boundary = boundaries_.contains(&node);
      for (const std::string& name : reads_of(node)) {
        auto it = segment_of.find(name);
        if (it != segment_of.end() && (boundary || it->second != segment)) out.insert(name);
      }
      if (boundary) ++segment;
      for (const std::string& name : node.output()) segment_of[name] = boundary ? -1 : segment;
    }
    // The outputs are emitted in the last block.
    for (const onnx::ValueInfoProto& output : graph.output()) {
      auto it = segment_of.find(output.name());
      if (it != segment_of.end() && it->second != segment) out.insert(output.name());
    }
    if (!any) out.clear();
    return out;
  }

  Value* find_value(const std::string& name) {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(name);
      if (it != scope->end()) return &it->second;
    }
    return nullptr;
  }
  void set_value(const std::string& name, Value v) { scopes_.back()[name] = std::move(v); }

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

  // Every node the table cannot convert, in the graph and the graphs its nodes hold, all at once.
  absl::Status check_supported(const onnx::GraphProto& graph, int64_t opset) const {
    std::vector<std::string> unsupported;
    collect_unsupported(graph, opset, unsupported);
    if (unsupported.empty()) return absl::OkStatus();
    return absl::UnimplementedError(absl::StrCat(unsupported.size(), " node", unsupported.size() == 1 ? "" : "s",
                                                 " of unsupported operators: ", absl::StrJoin(unsupported, ", "),
                                                 "; relax converts ",
                                                 absl::StrJoin(onnx_detail::supported_op_types(), ", ")));
  }
  static void collect_unsupported(const onnx::GraphProto& graph, int64_t opset, std::vector<std::string>& out) {
    for (const onnx::NodeProto& node : graph.node()) {
      for (const onnx::AttributeProto& a : node.attribute()) {
        if (a.has_g()) collect_unsupported(a.g(), opset, out);
        for (const onnx::GraphProto& g : a.graphs()) collect_unsupported(g, opset, out);
      }
      const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
      if (default_domain && onnx_detail::find_converter(node.op_type()) != nullptr) continue;
      out.push_back(absl::StrCat("`", node.name(), "` (", node.op_type(), ", domain \"",
                                 node.domain().empty() ? "ai.onnx" : node.domain(), "\", opset ", opset, ")"));
    }
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
        absl::StatusOr<SymExpr> dim = named_dim(d.dim_param());
        if (!dim.ok()) return dim.status();
        dims.push_back(*dim);
      } else {
        dims.push_back(sym_var(absl::StrCat(input.name(), "_dim", i)));
      }
    }
    return tensor_sinfo(dims, *dtype);
  }

  // The dim a dim_param names: its variable (m * NAME_over_m with a declared multiple m), or --
  // when the text is an expression over other inputs' dim_params, as exporters write a sum they
  // know (`past_sequence + sequence`) -- that expression of their dims.
  absl::StatusOr<SymExpr> named_dim(const std::string& name) {
    absl::flat_hash_map<std::string, SymVar> names;
    absl::StatusOr<SymExpr> parsed = SymExpr::parse(name, &names);
    bool over_params = parsed.ok() && !parsed->is_var() && !names.empty();
    for (const auto& [n, var] : names) over_params = over_params && n != name && dim_params_.contains(n);
    if (over_params) {
      SymVarMap<SymExpr> to_dims;
      for (const auto& [n, var] : names) {
        absl::StatusOr<SymExpr> dim = named_dim(n);
        if (!dim.ok()) return dim.status();
        to_dims[var] = *dim;
      }
      return substitute(*parsed, to_dims);
    }
    auto multiple = options_.dim_multiples.find(name);
    if (multiple == options_.dim_multiples.end()) return SymExpr(sym_var(name));
    if (multiple->second < 1) {
      return absl::InvalidArgumentError(absl::StrCat("dim multiple of `", name, "`: ", multiple->second,
                                                     " is not a positive number"));
    }
    used_multiples_.insert(name);
    return sym_var(absl::StrCat(name, "_over_", multiple->second)) * multiple->second;
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

  absl::Status convert(const onnx::NodeProto& node) {
    const onnx_detail::OpConverter* row = onnx_detail::find_converter(node.op_type());
    std::vector<const Value*> inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        inputs.push_back(nullptr);  // an omitted optional input
        continue;
      }
      const Value* v = find_value(name);
      if (v == nullptr) {
        return onnx_detail::node_error(node, absl::StrCat("reads `", name, "`, which no input, initializer or earlier node gives"));
      }
      inputs.push_back(v);
    }
    const size_t errors_before = mb_->errors().size();
    absl::StatusOr<std::vector<Value>> outputs = row->convert(*importer_, node, inputs);
    if (!outputs.ok()) return outputs.status();
    const std::vector<std::string> errors = mb_->errors();
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
      set_value(node.output(static_cast<int>(i)), std::move(v));
    }
    return absl::OkStatus();
  }

  const onnx::ModelProto& model_;
  const OnnxImportOptions& options_;
  std::string model_dir_;
  Importer* importer_ = nullptr;
  ModuleBuilder* mb_ = nullptr;
  /// The values by name: the model's graph's, then one scope per subgraph being converted.
  std::vector<absl::flat_hash_map<std::string, Value>> scopes_;
  absl::flat_hash_map<std::string, SymVar> sym_vars_;
  absl::flat_hash_set<std::string> dim_params_;
  absl::flat_hash_set<std::string> used_multiples_;
  /// The Ifs decided at run time (block boundaries), and the one that asks for a new attempt.
  absl::flat_hash_set<const onnx::NodeProto*> boundaries_;
  const onnx::NodeProto* restart_ = nullptr;
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
