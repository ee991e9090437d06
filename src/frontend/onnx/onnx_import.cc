// Importing an ONNX model (relax/frontend/onnx.h): the model, its graph's inputs, initializers
// and outputs, and the walk over its nodes in order (ONNX graphs are topologically sorted),
// each converted by its row of the converter table (onnx_ops.cc); its tensors are read by
// onnx_tensors.cc, the whole model checked first by onnx_model_checks.cc.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <exception>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/onnx/onnx_importer.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"
#include "relax/frontend/onnx.h"
#include "relax/ir/op/create.h"
#include "relax/ir/op/elementwise.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/struct_info.h"

namespace relax::frontend {
namespace onnx_detail {

// ---- The importer's context -------------------------------------------------------------------

Expr Importer::constant(runtime::Tensor t) { return make_constant(std::move(t)); }

absl::StatusOr<Expr> Importer::tensor(const Value& v, const onnx::NodeProto& node) {
  if (v.expr.defined()) return v.expr;
  if (!v.known) return node_error(node, "an input has no value");
  std::vector<int64_t> values;
  bool all_constant = true;
  for (const SymExpr& e : *v.known) {
    std::optional<int64_t> c = e.as_const();
    all_constant = all_constant && c.has_value();
    values.push_back(c.value_or(0));
  }
  if (!all_constant) {
    // Symbolic elements (dims of the inputs): each filled in when the call runs.
    const DataType dtype = v.known_dtype;
    auto filled = [&](const SymExpr& e, std::vector<SymExpr> shape) {
      return emit(op::full(make_shape_expr(std::move(shape)), make_prim_value(e), dtype));
    };
    if (v.scalar) return filled((*v.known)[0], {});
    std::vector<Expr> parts;
    for (const SymExpr& e : *v.known) parts.push_back(filled(e, {SymExpr(1)}));
    return parts.size() == 1 ? parts[0] : emit(op::concat(parts, 0));
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

// The dims of a tensor annotation when every one is known.
std::optional<std::vector<SymExpr>> sinfo_dims(const StructInfo& sinfo) {
  const auto* t = sinfo.as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape) return std::nullopt;
  return *t->shape;
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
  GraphImport(const onnx::ModelProto& model, const OnnxImportOptions& options, std::string model_dir, bool own_model)
      : model_(model), options_(options) {
    source_.dir = std::move(model_dir);
    source_.take_raw_data = own_model;
  }

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

  // The Loop's body as the private recursive function loop_<k>:
  //   loop_k(i, m, c, v..., acc..., free...) =
  //     if (i < m && c) { c', v'..., s... = body(i, c, v...)
  //                       loop_k(i + 1, m, c', v'..., (i == 0 ? [s] : concat(acc, [s]))..., free...) }
  //     else (v..., acc...)
  // The carried values' dims are the function's own variables; `free` are the enclosing graphs'
  // values the body reads (constants are read in place). Where the body keeps a carried value's
  // dim (its output dim is the input's), the result has the initial value's dim; other dims, and
  // the scan outputs' (their count is M when nothing else ends the loop), are bound when the
  // call returns (data-dependent).
  absl::StatusOr<std::vector<Value>> emit_loop(const onnx::NodeProto& node, const onnx_detail::LoopInputs& in,
                                               const onnx::GraphProto& body) override {
    const size_t n = in.carried.size();
    if (static_cast<size_t>(body.input_size()) != n + 2) {
      return onnx_detail::node_error(node, absl::StrCat("its body has ", body.input_size(), " inputs, expected ", n + 2,
                                                        " (iteration number, condition, ", n, " carried values)"));
    }
    if (static_cast<size_t>(body.output_size()) < n + 1) {
      return onnx_detail::node_error(node, absl::StrCat("its body has ", body.output_size(), " outputs, expected at least ",
                                                        n + 1, " (condition, ", n, " carried values)"));
    }
    const size_t scans = static_cast<size_t>(body.output_size()) - 1 - n;
    const std::string name = absl::StrCat("loop_", ++loops_);
    // An enclosing value's annotation with a variable of the function's own for each
    // non-constant dim.
    auto fresh = [&](const StructInfo& sinfo, const std::string& what) -> StructInfo {
      const auto* t = sinfo.as<TensorStructInfoNode>();
      if (t == nullptr || !t->shape) return sinfo;
      std::vector<SymExpr> dims;
      for (size_t i = 0; i < t->shape->size(); ++i) {
        const SymExpr& d = (*t->shape)[i];
        dims.push_back(d.as_const() ? d : SymExpr(SymVar(absl::StrCat(name, "_", what, "_d", i))));
      }
      return tensor_sinfo(dims, t->dtype, t->device);
    };
    // The enclosing values the body reads, in name order.
    absl::flat_hash_set<std::string> free_set;
    free_names(body, free_set);
    std::vector<std::string> free(free_set.begin(), free_set.end());
    std::sort(free.begin(), free.end());
    std::vector<std::pair<std::string, Value>> captured;  // read in place
    std::vector<std::pair<std::string, Expr>> passed;     // passed as parameters
    for (const std::string& f : free) {
      const Value* v = find_value(f);
      if (v == nullptr) {
        return onnx_detail::node_error(node, absl::StrCat("its body reads `", f, "`, which no input, initializer or earlier node gives"));
      }
      bool constant = v->expr.defined() && v->expr.as<ConstantNode>() != nullptr;
      if (v->known && !v->expr.defined()) {
        bool all = true;
        onnx_detail::constants_of(*v->known, &all);
        constant = all;
      }
      if (constant) {
        captured.emplace_back(f, *v);
        continue;
      }
      absl::StatusOr<Expr> e = importer_->tensor(*v, node);
      if (!e.ok()) return e.status();
      passed.emplace_back(f, *e);
    }
    // The signature.
    const StructInfo scalar_i64 = tensor_sinfo(std::vector<SymExpr>{}, DataType::int64());
    const StructInfo scalar_bool = tensor_sinfo(std::vector<SymExpr>{}, DataType::boolean());
    std::vector<StructInfo> params = {scalar_i64, scalar_i64, scalar_bool};
    std::vector<StructInfo> results;
    std::vector<DataType> scan_dtypes;
    for (size_t j = 0; j < n; ++j) {
      const int64_t rank = Importer::rank_of(in.carried[j]);
      const std::optional<DataType> dtype = onnx_detail::dtype_of_expr(in.carried[j]);
      if (rank < 0 || !dtype) {
        return onnx_detail::node_error(node, absl::StrCat("its carried value ", j, " is ", in.carried[j].struct_info().to_string(),
                                                          ": relax needs its rank and dtype"));
      }
      std::vector<SymExpr> dims;
      for (int64_t i = 0; i < rank; ++i) dims.push_back(SymVar(absl::StrCat(name, "_v", j, "_d", i)));
      params.push_back(tensor_sinfo(dims, *dtype));
      results.push_back(tensor_sinfo_rank(static_cast<int>(rank), *dtype));
    }
    for (size_t j = 0; j < scans; ++j) {
      const onnx::TypeProto& type = body.output(static_cast<int>(1 + n + j)).type();
      const std::optional<DataType> dtype = onnx_detail::dtype_of(type.tensor_type().elem_type());
      if (!type.has_tensor_type() || !dtype) {
        return onnx_detail::node_error(node, absl::StrCat("its scan output ", j, " has no tensor element type relax reads"));
      }
      scan_dtypes.push_back(*dtype);
      params.push_back(tensor_sinfo_rank(kUnknownNDim, *dtype));
      results.push_back(tensor_sinfo_rank(kUnknownNDim, *dtype));
    }
    for (size_t j = 0; j < passed.size(); ++j) params.push_back(fresh(passed[j].second.struct_info(), absl::StrCat("free", j)));
    const Expr self = mb_->declare_function(name, func_sinfo(params, tuple_sinfo(results)));

    // The body function, imported with its own Importer and scopes.
    FunctionBuilder lf = mb_->function(name);
    lf.set_attr("private", true);
    std::vector<Var> p;
    p.push_back(lf.param("i", params[0]));
    p.push_back(lf.param("m", params[1]));
    p.push_back(lf.param("cond", params[2]));
    for (size_t j = 0; j < n; ++j) p.push_back(lf.param(absl::StrCat("v", j), params[3 + j]));
    for (size_t j = 0; j < scans; ++j) p.push_back(lf.param(absl::StrCat("scan", j), params[3 + n + j]));
    for (size_t j = 0; j < passed.size(); ++j) p.push_back(lf.param(absl::StrCat("free", j), params[3 + n + scans + j]));
    Importer body_importer(lf, importer_->opset(), *this);
    Importer* const outer_importer = importer_;
    std::vector<absl::flat_hash_map<std::string, Value>> outer_scopes = std::move(scopes_);
    importer_ = &body_importer;
    scopes_.assign(1, {});
    for (const auto& [f, v] : captured) set_value(f, v);
    for (size_t j = 0; j < passed.size(); ++j) set_value(passed[j].first, onnx_detail::tensor_value(p[3 + n + scans + j]));

    absl::Status failed;
    std::vector<StructInfo> body_outs;  // the body's carried and scan outputs, as deduced
    bool cond_stays_true = false;
    const Var go = lf.emit(op::logical_and(op::less(p[0], p[1]), p[2]), "go");
    const Var r = lf.emit_if(
        go,
        [&]() -> Expr {
          scopes_.emplace_back();
          set_value(body.input(0).name(), onnx_detail::tensor_value(p[0]));
          set_value(body.input(1).name(), onnx_detail::tensor_value(p[2]));
          for (size_t j = 0; j < n; ++j) set_value(body.input(static_cast<int>(2 + j)).name(), onnx_detail::tensor_value(p[3 + j]));
          absl::StatusOr<std::vector<Value>> outs = convert_graph_nodes(body, /*own_blocks=*/true);
          scopes_.pop_back();
          if (!outs.ok()) {
            failed = outs.status();
            return Expr();
          }
          const Value& c = (*outs)[0];
          if (c.known && c.known->size() == 1) {
            const std::optional<int64_t> k = (*c.known)[0].as_const();
            cond_stays_true = k && *k != 0;
          }
          const std::optional<DataType> c_dtype = onnx_detail::dtype_of_expr(c.expr);
          std::optional<std::vector<SymExpr>> c_dims = Importer::dims_of(c.expr);
          if (!c_dtype || !c_dtype->is_bool() || !c_dims || c_dims->size() > 1 || (c_dims->size() == 1 && !(*c_dims)[0].is_const(1))) {
            failed = onnx_detail::node_error(node, absl::StrCat("its body's condition is ", c.expr.struct_info().to_string(),
                                                                ", expected one bool"));
            return Expr();
          }
          std::vector<Expr> args = {lf.emit(op::add(p[0], onnx_detail::scalar(1, DataType::int64()))), p[1],
                                    c_dims->empty() ? c.expr : lf.emit(op::reshape(c.expr, std::vector<SymExpr>{}))};
          for (size_t j = 0; j < n; ++j) {
            args.push_back((*outs)[1 + j].expr);
            body_outs.push_back((*outs)[1 + j].expr.struct_info());
          }
          for (size_t j = 0; j < scans; ++j) {
            const Expr s = (*outs)[1 + n + j].expr;
            body_outs.push_back(s.struct_info());
            std::optional<std::vector<SymExpr>> s_dims = Importer::dims_of(s);
            if (!s_dims) {
              failed = onnx_detail::node_error(node, absl::StrCat("its scan output ", j, " is ", s.struct_info().to_string(),
                                                                  ": relax needs its dims"));
              return Expr();
            }
            const Var one = lf.emit(op::expand_dims(s, 0));
            const Var first = lf.emit(op::equal(p[0], onnx_detail::scalar(0, DataType::int64())));
            args.push_back(lf.emit_if(
                first, [&]() -> Expr { return one; },
                [&]() -> Expr {
                  std::vector<SymExpr> dims = {SymVar(absl::StrCat(name, "_scan", j, "_count"))};
                  dims.insert(dims.end(), s_dims->begin(), s_dims->end());
                  const Var so_far = lf.match_cast(p[3 + n + j], tensor_sinfo(dims, scan_dtypes[j]));
                  return lf.emit(op::concat({so_far, one}, 0));
                }));
          }
          for (size_t j = 0; j < passed.size(); ++j) args.push_back(p[3 + n + scans + j]);
          return make_call(self, args);
        },
        [&]() -> Expr {
          std::vector<Expr> fields;
          for (size_t j = 0; j < n + scans; ++j) fields.push_back(p[3 + j]);
          return make_tuple(fields);
        },
        "result");
    lf.ret(r);
    importer_ = outer_importer;
    scopes_ = std::move(outer_scopes);
    importer_->absorb(body_importer);
    if (!failed.ok()) return failed;

    // The call, and what the import knows of its results.
    FunctionBuilder& f = importer_->builder();
    Analyzer& analyzer = lf.analyzer();
    SymVarMap<SymExpr> back;  // the body function's variables that are the caller's dims
    for (size_t j = 0; j < passed.size(); ++j) {
      const auto* inner = params[3 + n + scans + j].as<TensorStructInfoNode>();
      std::optional<std::vector<SymExpr>> outer = Importer::dims_of(passed[j].second);
      if (inner == nullptr || !inner->shape || !outer) continue;
      for (size_t i = 0; i < outer->size(); ++i) {
        if ((*inner->shape)[i].is_var()) back[SymVar::from_expr((*inner->shape)[i])] = (*outer)[i];
      }
    }
    std::vector<std::vector<SymExpr>> carried_dims(n);
    for (size_t j = 0; j < n; ++j) {
      const std::vector<SymExpr>& inner = *params[3 + j].as<TensorStructInfoNode>()->shape;
      std::optional<std::vector<SymExpr>> outer = Importer::dims_of(in.carried[j]);
      std::optional<std::vector<SymExpr>> after = j < body_outs.size() ? sinfo_dims(body_outs[j]) : std::nullopt;
      for (size_t i = 0; i < inner.size(); ++i) {
        // Kept: the body gives back the dim it got, or always the constant the loop starts with.
        const bool kept = outer && after && i < after->size() &&
                          (analyzer.prove((*after)[i] == inner[i]) ||
                           ((*after)[i].as_const() && (*outer)[i].as_const() && *(*after)[i].as_const() == *(*outer)[i].as_const()));
        if (kept) back[SymVar::from_expr(inner[i])] = (*outer)[i];
      }
    }
    const std::string out_name = node.name().empty() ? name : node.name();
    auto mapped = [&](const SymExpr& inner_dim) -> std::optional<SymExpr> {
      bool all = true;
      for_each_var(inner_dim, [&](const SymVar& v) { all = all && back.contains(v); });
      if (!all) return std::nullopt;
      return analyzer.simplify(substitute(inner_dim, back));
    };
    auto outer_dim = [&](const SymExpr& inner_dim, const std::string& what) -> SymExpr {
      if (std::optional<SymExpr> d = mapped(inner_dim)) return *d;
      const std::string var = absl::StrCat(out_name, "_", what);
      importer_->note_data_dependent(var);
      return SymVar(var);
    };
    std::vector<Expr> args = {onnx_detail::scalar(0, DataType::int64()),
                              in.trips.defined() ? in.trips : onnx_detail::scalar(static_cast<double>(INT64_MAX), DataType::int64()),
                              in.cond.defined() ? in.cond : Importer::constant(*runtime::Tensor::from_vector<bool>({}, {true}))};
    for (const Expr& v : in.carried) args.push_back(v);
    for (size_t j = 0; j < scans; ++j) {
      // None gathered yet: (0, the scan output's dims where the caller knows them, else 0), which
      // is the result when the loop runs no step.
      std::vector<SymExpr> none = {SymExpr(0)};
      const std::vector<SymExpr> s_dims = sinfo_dims(body_outs[n + j]).value_or(std::vector<SymExpr>());
      for (const SymExpr& d : s_dims) none.push_back(mapped(d).value_or(SymExpr(0)));
      args.push_back(op::zeros(make_shape_expr(none), scan_dtypes[j]));
    }
    for (const auto& [name_j, e] : passed) args.push_back(e);
    const Var call = f.emit(make_call(self, args));
    std::vector<Value> outs;
    for (size_t j = 0; j < n + scans; ++j) {
      const Var item = f.emit(make_tuple_get_item(call, static_cast<int>(j)));
      std::vector<SymExpr> dims;
      DataType dtype;
      if (j < n) {
        const std::vector<SymExpr>& inner = *params[3 + j].as<TensorStructInfoNode>()->shape;
        for (size_t i = 0; i < inner.size(); ++i) dims.push_back(outer_dim(inner[i], absl::StrCat(node.output(static_cast<int>(j)), "_d", i)));
        dtype = *onnx_detail::dtype_of_expr(in.carried[j]);
      } else {
        const std::string output = j < static_cast<size_t>(node.output_size()) ? node.output(static_cast<int>(j)) : absl::StrCat("scan", j - n);
        const bool counted = in.known_trips && in.cond_known_true && cond_stays_true;
        dims.push_back(counted ? *in.known_trips : SymExpr(SymVar(absl::StrCat(out_name, "_", output, "_count"))));
        if (!counted) importer_->note_data_dependent(absl::StrCat(out_name, "_", output, "_count"));
        std::optional<std::vector<SymExpr>> s_dims = sinfo_dims(body_outs[j]);
        for (size_t i = 0; i < s_dims->size(); ++i) dims.push_back(outer_dim((*s_dims)[i], absl::StrCat(output, "_d", i + 1)));
        dtype = scan_dtypes[j - n];
      }
      outs.push_back(onnx_detail::tensor_value(f.match_cast(item, tensor_sinfo(dims, dtype))));
    }
    return outs;
  }


 private:
  absl::StatusOr<OnnxModel> attempt() {
    out_ = OnnxModel();
    scopes_.assign(1, {});
    sym_vars_.clear();
    used_multiples_.clear();
    loops_ = 0;
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
      absl::StatusOr<runtime::Tensor> value = load(t);
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
        absl::StatusOr<runtime::Tensor> value = load(t);
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

  absl::StatusOr<runtime::Tensor> load(const onnx::TensorProto& t) {
    auto it = loaded_.find(&t);
    if (it != loaded_.end()) return it->second;
    absl::StatusOr<runtime::Tensor> value = onnx_detail::tensor_of(t, &source_);
    if (value.ok()) loaded_.emplace(&t, *value);
    return value;
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
  /// Where external data lives; the tensors of the model, each read once for every attempt.
  onnx_detail::TensorSource source_;
  absl::flat_hash_map<const onnx::TensorProto*, runtime::Tensor> loaded_;
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
  int loops_ = 0;  ///< the Loop functions made so far (their names)
  OnnxModel out_;
};

// Checks and imports a parsed model; the import takes the weights' bytes out of it. A model
// of an opset before 7 is checked, then brought to 7 by ONNX's version converter.
absl::StatusOr<OnnxModel> import_model(onnx::ModelProto& model, const OnnxImportOptions& options,
                                       const std::string& model_dir) {
  // Checked first: ONNX's version converter and shape inference trust what they read (a node
  // reading an undefined value crashed the converter's graph import, found by the fuzzer).
  if (absl::Status s = onnx_detail::check_external_files(model.graph(), model_dir); !s.ok()) return s;
  try {
    onnx_detail::check_model_in(model, model_dir);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the ONNX checker refuses the model: ", e.what()));
  }
  int64_t old_opset = 0;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if ((id.domain().empty() || id.domain() == "ai.onnx") && id.version() >= 1 && id.version() < kMinOpset) {
      old_opset = id.version();
    }
  }
  if (old_opset != 0) {
    // ONNX's shape inference (which the converter's adapters need) reads past a convolution's
    // input dims when it takes the kernel's rank from a weight of a higher rank (a SEGV in
    // convPoolShapeInference of libonnx 1.12, found by the fuzzer); models of those opsets state
    // kernel_shape, so one that does not is refused before it runs.
    if (std::optional<std::string> output = onnx_detail::output_without_producer(model.graph(), {})) {
      return absl::InvalidArgumentError(absl::StrCat("the model imports opset ", old_opset, " of the default domain; its graph output `",
                                                     *output, "` is computed by no node"));
    }
    if (std::optional<std::string> node = onnx_detail::conv_without_kernel_shape(model.graph())) {
      return absl::InvalidArgumentError(absl::StrCat("the model imports opset ", old_opset, " of the default domain; ", *node,
                                                     " has no kernel_shape, which relax needs to bring it to opset ",
                                                     kMinOpset));
    }
    try {
      // The converter's adapters read the shapes of what they rewrite: the initializers become
      // graph inputs too (as models of those opsets listed them), and shape inference annotates
      // the rest.
      absl::flat_hash_set<std::string> inputs;
      for (const onnx::ValueInfoProto& v : model.graph().input()) inputs.insert(v.name());
      for (const onnx::TensorProto& t : model.graph().initializer()) {
        if (inputs.contains(t.name())) continue;
        onnx::ValueInfoProto* v = model.mutable_graph()->add_input();
        v->set_name(t.name());
        onnx::TypeProto_Tensor* type = v->mutable_type()->mutable_tensor_type();
        type->set_elem_type(t.data_type());
        for (int64_t d : t.dims()) type->mutable_shape()->add_dim()->set_dim_value(d);
      }
      onnx::shape_inference::InferShapes(model);
      onnx::ModelProto converted = onnx::version_conversion::ConvertVersion(model, static_cast<int>(kMinOpset));
      model.Swap(&converted);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat("the model imports opset ", old_opset,
                                                     " of the default domain; ONNX's version converter cannot bring it to ",
                                                     kMinOpset, ": ", e.what()));
    }
  }
  absl::StatusOr<OnnxModel> out = GraphImport(model, options, model_dir, /*own_model=*/true).run();
  if (out.ok()) out->report.converted_from_opset = old_opset;
  return out;
}

}  // namespace

absl::StatusOr<OnnxModel> import_onnx(std::string_view bytes, const OnnxImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an ONNX model: ", bytes.size(), " bytes that do not parse as a ModelProto"));
  }
  return import_model(model, options, "");
}

absl::StatusOr<OnnxModel> import_onnx_file(const std::string& path, const OnnxImportOptions& options) {
  // Parsed from the file as it is read: its bytes are never held in a buffer of their own (only
  // the weights' bytes, in the message, which the import then takes over).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string text = absl::StrCat("cannot open ONNX model ", path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(text) : absl::UnavailableError(text);
  }
  onnx::ModelProto model;
  const bool parsed = model.ParseFromFileDescriptor(fd);
  struct stat st {};
  const bool sized = fstat(fd, &st) == 0;
  ::close(fd);
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an ONNX model: ", sized ? absl::StrCat(st.st_size, " bytes") : "bytes",
                                                   " that do not parse as a ModelProto"));
  }
  const size_t slash = path.find_last_of('/');
  return import_model(model, options, slash == std::string::npos ? "" : path.substr(0, slash));
}

}  // namespace relax::frontend
