// The ONNX importer's parts (relax/frontend/onnx.h): the values a graph computes as the import
// sees them, the context a node's converter works in, and the table of converters.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "relax/ir/builder.h"
#include "relax/ir/expr.h"
#include "relax/runtime/mapped_file.h"
#include "relax/shape/sym_expr.h"

namespace relax::frontend::onnx_detail {

/// An ONNX value as the import holds it: a graph expression, and for the small int64 tensors
/// that compute shapes (rank 0 or 1), their elements as symbolic expressions when known at
/// import. A value may be known only (a Shape output never used as a tensor is never emitted).
struct Value {
  Expr expr;
  std::optional<std::vector<SymExpr>> known;
  bool scalar = false;  ///< `known` is of rank 0
  DataType known_dtype = DataType::int64();  ///< what `known` stands for: int64, int32, or bool (0 or 1)
};

class Importer;

/// What a Loop node gives its body (ONNX Loop): the trip count M and the condition (undefined
/// when omitted; tensors of one element), what the import knows of them, and the initial values
/// of the loop-carried dependencies.
struct LoopInputs {
  Expr trips;
  Expr cond;
  std::optional<SymExpr> known_trips;  ///< M as a shape value known at import
  bool cond_known_true = false;        ///< cond omitted or a constant true
  std::vector<Expr> carried;
};

/// What converts the graphs a node holds (the import's graph walk): If's branches, Loop's body.
class SubgraphHost {
 public:
  virtual ~SubgraphHost() = default;
  /// Converts `graph`'s nodes where the import stands (the enclosing graphs' values visible, its
  /// own names shadowing them) and returns its outputs: a branch chosen at import.
  virtual absl::StatusOr<std::vector<Value>> inline_graph(const onnx::GraphProto& graph) = 0;
  /// Emits an If of `cond` (a Prim[bool] or a one-element bool tensor) whose branches are the two
  /// graphs (no inputs, the same number of outputs) and returns its outputs.
  virtual absl::StatusOr<std::vector<Value>> emit_if(const onnx::NodeProto& node, Expr cond,
                                                     const onnx::GraphProto& then_graph,
                                                     const onnx::GraphProto& else_graph) = 0;
  /// Emits a Loop: `body` (inputs: iteration number, condition, the carried values; outputs: the
  /// condition, the carried values, the scan outputs) as a recursive function; returns the
  /// final carried values, then the scan outputs stacked along a new first dim.
  virtual absl::StatusOr<std::vector<Value>> emit_loop(const onnx::NodeProto& node, const LoopInputs& in,
                                                       const onnx::GraphProto& body) = 0;
};

/// Converts one node: its inputs (null for an omitted optional input) to its outputs, in order.
using ConvertFn = std::function<absl::StatusOr<std::vector<Value>>(Importer&, const onnx::NodeProto&,
                                                                   const std::vector<const Value*>&)>;

/// One row of the table: an op_type of the default domain and how it converts.
struct OpConverter {
  std::string_view op_type;
  ConvertFn convert;
};

/// The row of `op_type`, or null.
const OpConverter* find_converter(std::string_view op_type);
/// Every op_type the table converts, sorted.
std::vector<std::string> supported_op_types();

/// The context of a node's conversion.
class Importer {
 public:
  Importer(FunctionBuilder& f, int64_t opset, SubgraphHost& host) : f_(f), opset_(opset), host_(host) {}

  int64_t opset() const { return opset_; }
  FunctionBuilder& builder() { return f_; }
  SubgraphHost& host() { return host_; }

  /// Binds `e` to a new variable (its annotation deduced).
  Expr emit(Expr e) { return f_.emit(std::move(e)); }

  /// The graph expression of `v`: its expression, or its known elements as an int64 constant
  /// (an error naming `node` when they are symbolic and no expression computes them).
  absl::StatusOr<Expr> tensor(const Value& v, const onnx::NodeProto& node);

  /// The dims of `e`'s annotation when every one is known, else nullopt.
  static std::optional<std::vector<SymExpr>> dims_of(const Expr& e);
  /// The rank of `e`'s annotation, or -1 when unknown.
  static int64_t rank_of(const Expr& e);

  /// A constant of `t` (constants are values the function holds).
  static Expr constant(runtime::Tensor t);

  /// Records a symbolic dim bound at run time by a match_cast (a data-dependent shape).
  void note_data_dependent(std::string name) { data_dependent_.push_back(std::move(name)); }
  const std::vector<std::string>& data_dependent() const { return data_dependent_; }
  /// Records a dim equality a match_cast checks at run time (OnnxImportReport::runtime_checks).
  void note_runtime_check(std::string what) { runtime_checks_.push_back(std::move(what)); }
  const std::vector<std::string>& runtime_checks() const { return runtime_checks_; }
  /// Takes over what `other` (the import of a Loop's body function) recorded.
  void absorb(const Importer& other) {
    data_dependent_.insert(data_dependent_.end(), other.data_dependent_.begin(), other.data_dependent_.end());
    runtime_checks_.insert(runtime_checks_.end(), other.runtime_checks_.begin(), other.runtime_checks_.end());
  }

 private:
  FunctionBuilder& f_;
  int64_t opset_;
  SubgraphHost& host_;
  std::vector<std::string> data_dependent_;
  std::vector<std::string> runtime_checks_;
};

// ---- What the converters share (onnx_ops.cc) --------------------------------------------------

using Outputs = absl::StatusOr<std::vector<Value>>;
using Inputs = std::vector<const Value*>;

/// A value that is a graph tensor.
inline Value tensor_value(Expr e) { return Value{std::move(e), std::nullopt, false}; }
/// An error naming `node` unless inputs [0, count) are given.
absl::Status need_inputs(const onnx::NodeProto& node, const Inputs& in, size_t count);
/// The graph tensors of inputs [0, count).
absl::StatusOr<std::vector<Expr>> tensors(Importer& im, const onnx::NodeProto& node, const Inputs& in, size_t count);
/// A rank-0 constant of `dtype` holding `value`.
Expr scalar(double value, DataType dtype);
/// The dtype of `e`'s annotation, when known.
std::optional<DataType> dtype_of_expr(const Expr& e);
/// `axis` of a tensor of `rank` dims, made non-negative (an error naming `node` out of range).
absl::StatusOr<int64_t> axis_in(const onnx::NodeProto& node, int64_t axis, int64_t rank);
/// The elements of input `i`, a shape value known at import (`what` names it in errors).
absl::StatusOr<std::vector<SymExpr>> known_input(const onnx::NodeProto& node, const Inputs& in, size_t i,
                                                 std::string_view what);
/// The constants of `dims`; `all` says whether every one is a constant.
std::vector<int64_t> constants_of(const std::vector<SymExpr>& dims, bool* all);
/// The operands of a numpy-broadcasting op, each dim the import cannot prove equal to the
/// others' (nor 1) -- but cannot prove unequal either -- asserted equal to the simplest of them
/// by a match_cast checked at run time (Importer::note_runtime_check).
std::vector<Expr> broadcast_checked(Importer& im, const onnx::NodeProto& node, std::vector<Expr> operands);
/// The same for a concatenation along `concat_axis` (non-negative): every other dim asserted
/// equal to the simplest of the operands' (no dim of 1 broadcasts).
std::vector<Expr> dims_checked(Importer& im, const onnx::NodeProto& node, std::vector<Expr> operands,
                               std::optional<int64_t> concat_axis);
/// The elements of a small int64, int32 or bool (0 or 1) tensor of rank 0 or 1 (at most 64), as a
/// shape value.
std::optional<std::vector<SymExpr>> known_ints(const runtime::Tensor& t);

/// Adds one row of the converter table.
using AddConverter = std::function<void(std::string_view op_type, ConvertFn convert)>;
/// The rows of each family: elementwise and linear algebra (onnx_ops.cc), shapes and layout
/// (onnx_ops_shape.cc), convolution, pooling, normalization, reductions and quantization
/// (onnx_ops_nn.cc), control flow, recurrent networks.
void add_shape_converters(const AddConverter& add);
void add_nn_converters(const AddConverter& add);
/// If and Loop (onnx_ops_control.cc); LSTM (onnx_ops_recurrent.cc).
void add_control_converters(const AddConverter& add);
void add_recurrent_converters(const AddConverter& add);

// ---- Attributes -------------------------------------------------------------------------------

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, std::string_view name);
int64_t int_attr(const onnx::NodeProto& node, std::string_view name, int64_t fallback);
float float_attr(const onnx::NodeProto& node, std::string_view name, float fallback);
std::optional<std::vector<int64_t>> ints_attr(const onnx::NodeProto& node, std::string_view name);
std::string string_attr(const onnx::NodeProto& node, std::string_view name, std::string fallback);

/// "node `name` (op_type)" for messages.
std::string node_text(const onnx::NodeProto& node);
/// InvalidArgument "<node text>: <what>".
absl::Status node_error(const onnx::NodeProto& node, std::string_view what);

/// The relax dtype of an ONNX element type, or nullopt for one relax has no dtype of.
std::optional<DataType> dtype_of(int32_t elem_type);
/// Where the tensors of a model come from: the folder of its external data files (mapped once
/// each), and whether the import owns the parsed message, so that a tensor may take its
/// raw_data bytes instead of copying them.
struct TensorSource {
  std::string dir;
  bool take_raw_data = false;
  absl::flat_hash_map<std::string, std::shared_ptr<const runtime::MappedFile>> files;
};

/// Whether an external data location names a file under the model's folder (relative, no `..`).
bool file_beside_model(const std::string& location);

// ---- Whole-model checks (onnx_model_checks.cc) --------------------------------------------------

/// Each external data file the graph's initializers (and its subgraphs') name lies beside the
/// model and exists: else an error naming the tensor and the file.
absl::Status check_external_files(const onnx::GraphProto& graph, const std::string& model_dir);
/// ONNX's check_model with external data files looked up in `model_dir`; throws its errors.
void check_model_in(const onnx::ModelProto& model, const std::string& model_dir);
/// The first output of `graph` (or of a graph its nodes hold) that nothing gives, `outer` the
/// enclosing graphs' values.
std::optional<std::string> output_without_producer(const onnx::GraphProto& graph, absl::flat_hash_set<std::string> outer);
/// The first convolution or pool (in `graph` or the graphs its nodes hold) without kernel_shape,
/// as node_text names it.
std::optional<std::string> conv_without_kernel_shape(const onnx::GraphProto& graph);

/// The tensor an ONNX TensorProto holds (raw_data or the typed fields). External data is a view
/// of its file beside `source->dir`, mapped (a copy where its bytes are not aligned to the
/// element size); with `source->take_raw_data` the tensor takes raw_data's bytes out of `t`. A
/// null source: copies, external files relative to the working directory.
absl::StatusOr<runtime::Tensor> tensor_of(const onnx::TensorProto& t, TensorSource* source);

}  // namespace relax::frontend::onnx_detail
