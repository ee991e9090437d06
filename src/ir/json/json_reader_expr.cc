// Reading graph-level expressions from the JSON node table (see
// json_reader.h). Every node is built directly with the annotation the
// document gives it (the "sinfo" field), never deduced again, so what was
// written is what is read.
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/escaping.h"
#include "ir/json/json_reader.h"
#include "ir/json/json_schema.h"
#include "relax/ir/op.h"
#include "relax/runtime/tensor.h"

namespace relax::json_detail {
namespace {

// An Expr of node class `Node`, built from the constructor arguments.
template <typename Node, typename... Args>
Expr make_node(Args&&... args) {
  return Expr(std::make_shared<const Node>(std::forward<Args>(args)...));
}

}  // namespace

bool Reader::read_expr(const Json& node, const Loc& at, std::string_view kind) {
  if (kind == "expr.op") {
    if (!only_fields(node, at, {"kind", "name"})) return false;
    std::optional<std::string> name = get_string(node, at, "name");
    if (!name) return false;
    const OpInfo* info = find_op(*name);
    if (info == nullptr) {
      return fail(at.key("name"), cat("unknown operator \"", *name, "\""));
    }
    set(info->op);
    return true;
  }

  // Every other expression carries its annotation (null when not normalised).
  std::optional<StructInfo> sinfo = opt_sinfo_field(node, at, "sinfo");
  if (!sinfo) return false;

  if (kind == "expr.var" || kind == "expr.dataflow_var") {
    if (!only_fields(node, at, {"kind", "name", "sinfo"})) return false;
    std::optional<std::string> name = get_string(node, at, "name");
    if (!name) return false;
    if (kind == "expr.var") {
      set(Var(std::move(*name), *sinfo));
    } else {
      set(DataflowVar(std::move(*name), *sinfo));
    }
    return true;
  }
  if (kind == "expr.global_var") {
    if (!only_fields(node, at, {"kind", "name", "sinfo"})) return false;
    std::optional<std::string> name = get_string(node, at, "name");
    if (!name) return false;
    set(make_global_var(std::move(*name), *sinfo));
    return true;
  }
  if (kind == "expr.constant") {
    if (!only_fields(node, at, {"kind", "dtype", "shape", "data", "sinfo"})) return false;
    std::optional<DataType> dtype = get_dtype(node, at, "dtype");
    const Json* shape_json = get_array(node, at, "shape");
    const Json* data_json = field(node, at, "data");
    if (!dtype || !shape_json || !data_json) return false;
    std::vector<int64_t> shape;
    int64_t numel = 1;
    const Loc shape_at = at.key("shape");
    for (size_t i = 0; i < shape_json->size(); ++i) {
      const Loc dim_at = shape_at.at(i);
      std::optional<int64_t> d = as_int((*shape_json)[i], dim_at);
      if (!d) return false;
      if (*d < 0) return fail(dim_at, cat("negative dim ", *d));
      if (__builtin_mul_overflow(numel, *d, &numel)) {
        return fail(at.key("shape"), "the element count overflows int64");
      }
      shape.push_back(*d);
    }
    if (!data_json->is_string()) {
      return fail(at.key("data"), cat("expected a base64 string, found ",
                                               describe(*data_json)));
    }
    std::string bytes;
    if (!absl::Base64Unescape(data_json->get_ref<const std::string&>(), &bytes)) {
      return fail(at.key("data"), "not valid base64");
    }
    const size_t element = (static_cast<size_t>(dtype->bits) * dtype->lanes + 7) / 8;
    size_t expected = 0;
    if (__builtin_mul_overflow(static_cast<size_t>(numel), element, &expected)) {
      return fail(at.key("shape"), "the byte size overflows");
    }
    if (expected != bytes.size()) {
      return fail(at.key("data"), cat("holds ", bytes.size(), " bytes, but ", numel,
                                               " elements of ", dtype->to_string(), " take ",
                                               expected));
    }
    absl::StatusOr<runtime::Tensor> tensor = runtime::Tensor::empty(shape, *dtype);
    if (!tensor.ok()) return fail(at, std::string(tensor.status().message()));
    if (!bytes.empty()) std::memcpy(tensor->data(), bytes.data(), bytes.size());
    set(make_node<ConstantNode>(std::move(*tensor), *sinfo));
    return true;
  }
  if (kind == "expr.tuple") {
    if (!only_fields(node, at, {"kind", "fields", "sinfo"})) return false;
    std::optional<std::vector<Expr>> fields = expr_list(node, at, "fields");
    if (!fields) return false;
    set(make_tuple(std::move(*fields), *sinfo));
    return true;
  }
  if (kind == "expr.tuple_get_item") {
    if (!only_fields(node, at, {"kind", "tuple", "index", "sinfo"})) return false;
    std::optional<Expr> tuple = expr_field(node, at, "tuple");
    std::optional<int64_t> index = get_int(node, at, "index");
    if (!tuple || !index) return false;
    if (*index < 0 || *index > std::numeric_limits<int>::max()) {
      return fail(at.key("index"), cat("bad tuple index ", *index));
    }
    set(make_tuple_get_item(*tuple, static_cast<int>(*index), *sinfo));
    return true;
  }
  if (kind == "expr.call") {
    if (!only_fields(node, at, {"kind", "callee", "args", "attrs", "sinfo_args", "sinfo"})) {
      return false;
    }
    std::optional<Expr> callee = expr_field(node, at, "callee");
    if (!callee) return false;
    std::optional<std::vector<Expr>> args = expr_list(node, at, "args");
    if (!args) return false;
    std::optional<Attrs> attrs = attrs_field(node, at, "attrs");
    if (!attrs) return false;
    std::optional<std::vector<StructInfo>> sinfo_args = sinfo_list(node, at, "sinfo_args");
    if (!sinfo_args) return false;
    set(make_call(*callee, std::move(*args), std::move(*attrs), std::move(*sinfo_args), *sinfo));
    return true;
  }
  if (kind == "expr.shape") {
    if (!only_fields(node, at, {"kind", "values", "sinfo"})) return false;
    std::optional<std::vector<SymExpr>> values = dim_list(node, at, "values");
    if (!values) return false;
    set(make_node<ShapeExprNode>(std::move(*values), *sinfo));
    return true;
  }
  if (kind == "expr.prim_value") {
    if (!only_fields(node, at, {"kind", "value", "sinfo"})) return false;
    std::optional<SymExpr> value = sym_field(node, at, "value");
    if (!value) return false;
    set(make_node<PrimValueNode>(std::move(*value), *sinfo));
    return true;
  }
  if (kind == "expr.string") {
    if (!only_fields(node, at, {"kind", "value", "sinfo"})) return false;
    std::optional<std::string> value = get_string(node, at, "value");
    if (!value) return false;
    set(make_node<StringImmNode>(std::move(*value), *sinfo));
    return true;
  }
  if (kind == "expr.if") {
    if (!only_fields(node, at, {"kind", "cond", "then", "else", "sinfo"})) return false;
    std::optional<Expr> cond = expr_field(node, at, "cond");
    if (!cond) return false;
    std::optional<Expr> then_branch = expr_field(node, at, "then");
    if (!then_branch) return false;
    std::optional<Expr> else_branch = expr_field(node, at, "else");
    if (!else_branch) return false;
    set(make_if(*cond, *then_branch, *else_branch, *sinfo));
    return true;
  }
  if (kind == "expr.seq") {
    if (!only_fields(node, at, {"kind", "blocks", "body", "sinfo"})) return false;
    const Json* blocks_json = get_array(node, at, "blocks");
    if (!blocks_json) return false;
    std::vector<BindingBlock> blocks;
    const Loc blocks_at = at.key("blocks");
    for (size_t b = 0; b < blocks_json->size(); ++b) {
      const Loc block_at = blocks_at.at(b);
      const Json& block_json = (*blocks_json)[b];
      if (!as_object(block_json, block_at) ||
          !only_fields(block_json, block_at, {"dataflow", "bindings"})) {
        return false;
      }
      std::optional<bool> dataflow = get_bool(block_json, block_at, "dataflow");
      const Json* bindings_json = get_array(block_json, block_at, "bindings");
      if (!dataflow || !bindings_json) return false;
      BindingBlock block;
      block.is_dataflow = *dataflow;
      const Loc bindings_at = block_at.key("bindings");
      for (size_t i = 0; i < bindings_json->size(); ++i) {
        const Loc binding_at = bindings_at.at(i);
        const Json& binding_json = (*bindings_json)[i];
        if (!as_object(binding_json, binding_at) ||
            !only_fields(binding_json, binding_at, {"var", "value", "match_cast"})) {
          return false;
        }
        const Json* var_json = field(binding_json, binding_at, "var");
        if (!var_json) return false;
        std::optional<Var> var = var_ref(*var_json, binding_at.key("var"));
        if (!var) return false;
        std::optional<Expr> value = expr_field(binding_json, binding_at, "value");
        if (!value) return false;
        Binding binding{*var, *value, false, StructInfo()};
        if (binding_json.contains("match_cast")) {
          std::optional<StructInfo> pattern = opt_sinfo_field(binding_json, binding_at, "match_cast");
          if (!pattern) return false;
          binding.is_match_cast = true;
          binding.cast_sinfo = *pattern;
        }
        block.bindings.push_back(std::move(binding));
      }
      blocks.push_back(std::move(block));
    }
    std::optional<Expr> body = expr_field(node, at, "body");
    if (!body) return false;
    set(make_seq_expr(std::move(blocks), *body, *sinfo));
    return true;
  }
  if (kind == "expr.function") {
    if (!only_fields(node, at, {"kind", "params", "body", "ret", "pure", "upper_bounds", "attrs",
                                "sinfo"})) {
      return false;
    }
    const Json* params_json = get_array(node, at, "params");
    if (!params_json) return false;
    std::vector<Var> params;
    const Loc params_at = at.key("params");
    for (size_t i = 0; i < params_json->size(); ++i) {
      std::optional<Var> p = var_ref((*params_json)[i], params_at.at(i));
      if (!p) return false;
      params.push_back(std::move(*p));
    }
    std::optional<Expr> body = expr_field(node, at, "body");
    if (!body) return false;
    std::optional<StructInfo> ret = sinfo_field(node, at, "ret");
    if (!ret) return false;
    std::optional<bool> pure = get_bool(node, at, "pure");
    if (!pure) return false;
    const Json* bounds_json = get_array(node, at, "upper_bounds");
    if (!bounds_json) return false;
    std::vector<SymBound> bounds;
    const Loc upper_bounds_at = at.key("upper_bounds");
    for (size_t i = 0; i < bounds_json->size(); ++i) {
      const Loc bound_at = upper_bounds_at.at(i);
      const Json& bound_json = (*bounds_json)[i];
      if (!as_object(bound_json, bound_at) || !only_fields(bound_json, bound_at, {"var", "upper"})) {
        return false;
      }
      std::optional<SymVar> var = sym_var_field(bound_json, bound_at, "var");
      if (!var) return false;
      std::optional<int64_t> upper = get_int(bound_json, bound_at, "upper");
      if (!upper) return false;
      bounds.push_back(SymBound{*var, *upper});
    }
    std::optional<Attrs> attrs = attrs_field(node, at, "attrs");
    if (!attrs) return false;
    set(make_node<FunctionNode>(std::move(params), *body, *ret, *pure, std::move(bounds),
                                std::move(*attrs), *sinfo));
    return true;
  }
  if (kind == "expr.extern_func") {
    if (!only_fields(node, at, {"kind", "symbol", "sinfo"})) return false;
    std::optional<std::string> symbol = get_string(node, at, "symbol");
    if (!symbol) return false;
    set(make_node<ExternFuncNode>(std::move(*symbol), *sinfo));
    return true;
  }
  if (kind == "expr.prim_func") {
    if (!only_fields(node, at, {"kind", "params", "body", "attrs", "sinfo"})) return false;
    const Json* params_json = get_array(node, at, "params");
    if (!params_json) return false;
    std::vector<PrimParam> params;
    const Loc params_at = at.key("params");
    for (size_t i = 0; i < params_json->size(); ++i) {
      const Loc param_at = params_at.at(i);
      const Json& param_json = (*params_json)[i];
      if (!as_object(param_json, param_at)) return false;
      if (param_json.size() != 1 || !(param_json.contains("buffer") || param_json.contains("scalar"))) {
        return fail(param_at, cat("a PrimFunc parameter is {\"buffer\": b} or "
                                           "{\"scalar\": v}, found ",
                                           describe(param_json)));
      }
      PrimParam param;
      if (param_json.contains("buffer")) {
        std::optional<Buffer> b = buffer_field(param_json, param_at, "buffer");
        if (!b) return false;
        param.buffer = std::move(*b);
      } else {
        std::optional<SymVar> v = sym_var_field(param_json, param_at, "scalar");
        if (!v) return false;
        if (!is_sym_int(v->dtype()) && !v->dtype().is_float()) {
          return fail(param_at.key("scalar"),
                      cat("a scalar parameter is an integer or a float, `", v->name(), "` is ",
                          v->dtype().to_string()));
        }
        param.scalar = std::move(*v);
      }
      params.push_back(std::move(param));
    }
    std::optional<Stmt> body = stmt_field(node, at, "body");
    if (!body) return false;
    std::optional<Attrs> attrs = attrs_field(node, at, "attrs");
    if (!attrs) return false;
    set(make_node<PrimFuncNode>(std::move(params), *body, std::move(*attrs), *sinfo));
    return true;
  }
  return fail(at.key("kind"), cat("unknown node kind \"", kind, "\""));
}

}  // namespace relax::json_detail
