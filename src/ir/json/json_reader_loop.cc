// Reading SymExprs, buffers and loop-level statements from the JSON node
// table (see json_reader.h). The SymExpr constructors abort on operands that
// do not fit an operator; the reader asks the same checks first
// (sym_operand_mismatch, intrinsic_operand_mismatch) and reports an error instead.
#include <bit>
#include <cmath>
#include <utility>

#include "ir/json/json_reader.h"
#include "ir/json/json_schema.h"
#include "relax/ir/micro_kernel.h"
#include "relax/support/dtype_util.h"

namespace relax::json_detail {

bool Reader::read_sym(const Json& node, const Loc& at, std::string_view kind_name) {
  std::optional<SymKind> kind = sym_kind_from_json(kind_name);
  if (!kind) return fail(at.key("kind"), cat("unknown node kind \"", kind_name, "\""));
  switch (*kind) {
    case SymKind::kIntImm: {
      if (!only_fields(node, at, {"kind", "dtype", "value"})) return false;
      std::optional<DataType> dtype = get_dtype(node, at, "dtype");
      std::optional<int64_t> value = get_int(node, at, "value");
      if (!dtype || !value) return false;
      // A bool constant is always the 8-bit bool (SymExpr::boolean).
      if (!is_scalar_int(*dtype) && *dtype != DataType::boolean()) {
        return fail(at.key("dtype"), cat("an integer constant cannot have dtype ",
                                                  dtype->to_string()));
      }
      if (!fits_dtype(*value, *dtype)) {
        return fail(at.key("value"), cat(*value, " is not a value of ", dtype->to_string()));
      }
      set(SymExpr::int_imm(*value, *dtype));
      return true;
    }
    case SymKind::kFloatImm: {
      if (!only_fields(node, at, {"kind", "dtype", "value"})) return false;
      std::optional<DataType> dtype = get_dtype(node, at, "dtype");
      if (!dtype) return false;
      const Json* value_json = field(node, at, "value");
      if (!value_json) return false;
      std::optional<double> value = as_float(*value_json, at.key("value"));
      if (!value) return false;
      if (!is_scalar_float(*dtype)) {
        return fail(at.key("dtype"), cat("a float constant cannot have dtype ",
                                                  dtype->to_string()));
      }
      SymExpr e = SymExpr::float_imm(*value, *dtype);
      // Exactly the value written: one the dtype holds (and the one NaN SymExprs use).
      if (std::bit_cast<uint64_t>(e->float_value()) != std::bit_cast<uint64_t>(*value)) {
        return fail(at.key("value"), cat(describe(*value_json), " is not exactly a ",
                                                  dtype->to_string(), " value"));
      }
      set(std::move(e));
      return true;
    }
    case SymKind::kVar: {
      if (!only_fields(node, at, {"kind", "dtype", "name"})) return false;
      std::optional<DataType> dtype = get_dtype(node, at, "dtype");
      std::optional<std::string> name = get_string(node, at, "name");
      if (!dtype || !name) return false;
      if (name->empty()) return fail(at.key("name"), "a variable needs a name");
      if (!is_scalar_dtype(*dtype)) {
        return fail(at.key("dtype"), cat("a variable cannot have dtype ",
                                                  dtype->to_string()));
      }
      set(SymVar(std::move(*name), *dtype));
      return true;
    }
    case SymKind::kCast: {
      if (!only_fields(node, at, {"kind", "dtype", "operands"})) return false;
      std::optional<DataType> dtype = get_dtype(node, at, "dtype", /*allow_lanes=*/true);
      std::optional<std::vector<SymExpr>> ops = sym_list(node, at, "operands");
      if (!dtype || !ops) return false;
      const DataType lane{dtype->code, dtype->bits, 1};
      if (!is_scalar_dtype(lane) || (dtype->lanes != 1 && !is_vector_lanes(dtype->lanes))) {
        return fail(at.key("dtype"), cat("cannot cast to ", dtype->to_string()));
      }
      if (ops->size() != 1) {
        return fail(at.key("operands"), cat("sym.cast takes 1 operand, found ", ops->size()));
      }
      if ((*ops)[0].dtype().lanes != dtype->lanes) {
        return fail(at.key("operands"), cat("a cast to ", dtype->to_string(), " of ",
                                            (*ops)[0].dtype().to_string(), " `", to_string((*ops)[0]),
                                            "`: the lanes differ"));
      }
      set(cast(*dtype, (*ops)[0]));
      return true;
    }
    case SymKind::kCall: {
      if (!only_fields(node, at, {"kind", "intrinsic", "operands"})) return false;
      std::optional<std::string> name = get_string(node, at, "intrinsic");
      std::optional<std::vector<SymExpr>> ops = sym_list(node, at, "operands");
      if (!name || !ops) return false;
      std::optional<Intrinsic> op = intrinsic_from_json(*name);
      if (!op) return fail(at.key("intrinsic"), cat("unknown intrinsic \"", *name, "\""));
      if (std::string why = intrinsic_operand_mismatch(*op, *ops, intrinsic_json(*op)); !why.empty()) {
        return fail(at.key("operands"), why);
      }
      set(call(*op, std::move(*ops)));
      return true;
    }
    case SymKind::kBufferLoad: {
      if (!only_fields(node, at, {"kind", "buffer", "operands"})) return false;
      std::optional<Buffer> buffer = buffer_field(node, at, "buffer");
      // Indices are integers, or int64 vectors (ramps) of one lane count.
      std::optional<std::vector<SymExpr>> indices = sym_list(node, at, "operands");
      if (!buffer || !indices) return false;
      if (!is_scalar_dtype(buffer->dtype())) {
        return fail(at.key("buffer"), cat("buffer `", buffer->name(), "` has dtype ",
                                                   buffer->dtype().to_string(),
                                                   ", which no scalar expression has"));
      }
      if (indices->size() != buffer->ndim()) {
        return fail(at.key("operands"),
                    cat("a load from `", buffer->name(), "` has ", indices->size(),
                                 " indices, but the buffer has rank ", buffer->ndim()));
      }
      if (std::string why = load_index_mismatch(*buffer, *indices); !why.empty()) {
        return fail(at.key("operands"), why);
      }
      set(buffer_load(*buffer, std::move(*indices)));
      return true;
    }
    case SymKind::kRamp:
    case SymKind::kBroadcast: {
      if (!only_fields(node, at, {"kind", "lanes", "operands"})) return false;
      std::optional<int64_t> lanes = get_int(node, at, "lanes");
      std::optional<std::vector<SymExpr>> ops = sym_list(node, at, "operands");
      if (!lanes || !ops) return false;
      if (std::string why = vector_operand_mismatch(*kind, *ops, *lanes); !why.empty()) {
        return fail(at.key(is_vector_lanes(*lanes) ? "operands" : "lanes"), why);
      }
      set(*kind == SymKind::kRamp ? ramp((*ops)[0], (*ops)[1], *lanes) : broadcast((*ops)[0], *lanes));
      return true;
    }
    default:
      break;
  }
  if (sym_operator_arity(*kind) == 0) return fail(at.key("kind"), cat("unknown node kind \"", kind_name, "\""));
  if (!only_fields(node, at, {"kind", "operands"})) return false;
  std::optional<std::vector<SymExpr>> ops = sym_list(node, at, "operands");
  if (!ops) return false;
  if (std::string why = sym_operand_mismatch(*kind, *ops, sym_kind_json(*kind)); !why.empty()) {
    return fail(at.key("operands"), why);
  }
  ops->resize(3);
  set(SymExpr::make(*kind, (*ops)[0], (*ops)[1], (*ops)[2]));
  return true;
}

bool Reader::read_buffer(const Json& node, const Loc& at) {
  if (!only_fields(node, at, {"kind", "name", "dtype", "shape", "strides", "scope"})) return false;
  std::optional<std::string> name = get_string(node, at, "name");
  std::optional<DataType> dtype = get_dtype(node, at, "dtype");
  std::optional<std::string> scope_name = get_string(node, at, "scope");
  if (!name || !dtype || !scope_name) return false;
  std::optional<std::vector<SymExpr>> shape = int_sym_list(node, at, "shape");
  if (!shape) return false;
  std::optional<std::vector<SymExpr>> strides = int_sym_list(node, at, "strides");
  if (!strides) return false;
  if (dtype->lanes != 1) {
    return fail(at.key("dtype"), cat("a buffer's dtype is a scalar one, found ",
                                              dtype->to_string()));
  }
  if (!strides->empty() && strides->size() != shape->size()) {
    return fail(at.key("strides"), cat(strides->size(), " strides for ", shape->size(),
                                                " dims"));
  }
  std::optional<BufferScope> scope = scope_from_json(*scope_name);
  if (!scope) {
    return fail(at.key("scope"), cat("unknown buffer scope \"", *scope_name, "\""));
  }
  set(Buffer(std::move(*name), *dtype, std::move(*shape), std::move(*strides), *scope));
  return true;
}

bool Reader::read_stmt(const Json& node, const Loc& at, std::string_view kind) {
  auto make = [](auto node_ptr) { return Stmt(std::move(node_ptr)); };
  if (kind == "stmt.for") {
    if (!only_fields(node, at, {"kind", "var", "min", "extent", "for_kind", "body"})) return false;
    std::optional<SymVar> var = sym_var_field(node, at, "var");
    if (!var) return false;
    std::optional<SymExpr> min = sym_field(node, at, "min");
    if (!min) return false;
    std::optional<SymExpr> extent = sym_field(node, at, "extent");
    if (!extent) return false;
    std::optional<std::string> for_kind_name = get_string(node, at, "for_kind");
    if (!for_kind_name) return false;
    std::optional<ForKind> for_kind = for_kind_from_json(*for_kind_name);
    if (!for_kind) {
      return fail(at.key("for_kind"), cat("unknown loop kind \"", *for_kind_name, "\""));
    }
    std::optional<Stmt> body = stmt_field(node, at, "body");
    if (!body) return false;
    set(make(std::make_shared<const ForNode>(*var, *min, *extent, *for_kind, *body)));
    return true;
  }
  if (kind == "stmt.seq") {
    if (!only_fields(node, at, {"kind", "stmts"})) return false;
    const Json* stmts_json = get_array(node, at, "stmts");
    if (!stmts_json) return false;
    std::vector<Stmt> stmts;
    const Loc stmts_at = at.key("stmts");
    for (size_t i = 0; i < stmts_json->size(); ++i) {
      std::optional<Stmt> s = stmt_ref((*stmts_json)[i], stmts_at.at(i));
      if (!s) return false;
      stmts.push_back(std::move(*s));
    }
    set(make(std::make_shared<const SeqStmtNode>(std::move(stmts))));
    return true;
  }
  if (kind == "stmt.store") {
    if (!only_fields(node, at, {"kind", "buffer", "indices", "value"})) return false;
    std::optional<Buffer> buffer = buffer_field(node, at, "buffer");
    if (!buffer) return false;
    std::optional<std::vector<SymExpr>> indices = sym_list(node, at, "indices");
    if (!indices) return false;
    if (indices->size() == (*buffer).ndim()) {  // a wrong count is well-formedness's to report
      if (std::string why = load_index_mismatch(*buffer, *indices); !why.empty()) {
        return fail(at.key("indices"), why);
      }
    }
    std::optional<SymExpr> value = sym_field(node, at, "value");
    if (!value) return false;
    set(make(std::make_shared<const BufferStoreNode>(*buffer, std::move(*indices), *value)));
    return true;
  }
  if (kind == "stmt.if") {
    if (!only_fields(node, at, {"kind", "cond", "then", "else"})) return false;
    std::optional<SymExpr> cond = sym_field(node, at, "cond");
    if (!cond) return false;
    std::optional<Stmt> then_case = stmt_field(node, at, "then");
    if (!then_case) return false;
    std::optional<Stmt> else_case = opt_stmt_field(node, at, "else");
    if (!else_case) return false;
    set(make(std::make_shared<const IfThenElseNode>(*cond, *then_case, *else_case)));
    return true;
  }
  if (kind == "stmt.let") {
    if (!only_fields(node, at, {"kind", "var", "value", "body"})) return false;
    std::optional<SymVar> var = sym_var_field(node, at, "var");
    if (!var) return false;
    std::optional<SymExpr> value = sym_field(node, at, "value");
    if (!value) return false;
    std::optional<Stmt> body = stmt_field(node, at, "body");
    if (!body) return false;
    set(make(std::make_shared<const LetStmtNode>(*var, *value, *body)));
    return true;
  }
  if (kind == "stmt.allocate") {
    if (!only_fields(node, at, {"kind", "buffer", "body"})) return false;
    std::optional<Buffer> buffer = buffer_field(node, at, "buffer");
    if (!buffer) return false;
    std::optional<Stmt> body = stmt_field(node, at, "body");
    if (!body) return false;
    set(make(std::make_shared<const AllocateNode>(*buffer, *body)));
    return true;
  }
  if (kind == "stmt.evaluate") {
    if (!only_fields(node, at, {"kind", "value"})) return false;
    std::optional<SymExpr> value = sym_field(node, at, "value");
    if (!value) return false;
    set(make(std::make_shared<const EvaluateNode>(*value)));
    return true;
  }
  if (kind == "stmt.extern_call") {
    if (!only_fields(node, at, {"kind", "name", "args"})) return false;
    std::optional<std::string> name = get_string(node, at, "name");
    if (!name) return false;
    if (!is_micro_kernel_name(*name)) {
      return fail(at.key("name"), cat("a micro-kernel name must be a C identifier, found \"", *name, "\""));
    }
    const Json* args_json = get_array(node, at, "args");
    if (!args_json) return false;
    std::vector<ExternArg> args;
    const Loc args_at = at.key("args");
    for (size_t i = 0; i < args_json->size(); ++i) {
      const Loc arg_at = args_at.at(i);
      const Json& arg_json = (*args_json)[i];
      if (!as_object(arg_json, arg_at)) return false;
      if (!arg_json.contains("buffer")) {
        if (!only_fields(arg_json, arg_at, {"value"})) return false;
        std::optional<SymExpr> value = sym_field(arg_json, arg_at, "value");
        if (!value) return false;
        args.push_back(extern_scalar(*value));
        continue;
      }
      if (!only_fields(arg_json, arg_at, {"buffer", "indices"})) return false;
      std::optional<Buffer> buffer = buffer_field(arg_json, arg_at, "buffer");
      if (!buffer) return false;
      std::optional<std::vector<SymExpr>> indices = int_sym_list(arg_json, arg_at, "indices");
      if (!indices) return false;
      if (indices->size() != buffer->ndim()) {
        return fail(arg_at.key("indices"), cat(indices->size(), " indices for buffer `", buffer->name(),
                                               "` of rank ", buffer->ndim()));
      }
      args.push_back(extern_region(*buffer, std::move(*indices)));
    }
    set(make(std::make_shared<const ExternCallNode>(std::move(*name), std::move(args))));
    return true;
  }
  if (kind == "stmt.block") {
    if (!only_fields(node, at, {"kind", "name", "iter_vars", "init", "body"})) return false;
    std::optional<std::string> name = get_string(node, at, "name");
    if (!name) return false;
    const Json* iters_json = get_array(node, at, "iter_vars");
    if (!iters_json) return false;
    std::vector<IterVar> iter_vars;
    const Loc iter_vars_at = at.key("iter_vars");
    for (size_t i = 0; i < iters_json->size(); ++i) {
      const Loc iv_at = iter_vars_at.at(i);
      const Json& iv_json = (*iters_json)[i];
      if (!as_object(iv_json, iv_at) ||
          !only_fields(iv_json, iv_at, {"var", "extent", "type", "binding"})) {
        return false;
      }
      std::optional<SymVar> var = sym_var_field(iv_json, iv_at, "var");
      if (!var) return false;
      std::optional<SymExpr> extent = sym_field(iv_json, iv_at, "extent");
      if (!extent) return false;
      std::optional<std::string> type_name = get_string(iv_json, iv_at, "type");
      if (!type_name) return false;
      std::optional<IterType> type = iter_type_from_json(*type_name);
      if (!type) {
        return fail(iv_at.key("type"), cat("unknown iteration type \"", *type_name, "\""));
      }
      std::optional<SymExpr> binding = sym_field(iv_json, iv_at, "binding");
      if (!binding) return false;
      iter_vars.push_back(IterVar{*var, *extent, *type, *binding});
    }
    std::optional<Stmt> init = opt_stmt_field(node, at, "init");
    if (!init) return false;
    std::optional<Stmt> body = stmt_field(node, at, "body");
    if (!body) return false;
    set(make(std::make_shared<const BlockNode>(std::move(*name), std::move(iter_vars), *init,
                                               *body)));
    return true;
  }
  return fail(at.key("kind"), cat("unknown node kind \"", kind, "\""));
}

}  // namespace relax::json_detail
