// Reading SymExprs, buffers and loop-level statements from the JSON node
// table (see json_reader.h). The SymExpr constructors abort on operands that
// do not fit an operator; the checks here mirror theirs and report the same
// mistakes as errors instead.
#include <bit>
#include <cmath>
#include <utility>

#include "ir/json/json_reader.h"
#include "ir/json/json_schema.h"

namespace relax::json_detail {
namespace {

// How the operands of the operator nodes must look.
enum class OperandRule : uint8_t {
  kArith,      // + - * min max: numeric, of one dtype
  kIntOnly,    // floordiv floormod: integers of one dtype
  kFloatOnly,  // /: floats of one dtype
  kCompare,    // comparisons: numeric, of one dtype
  kLogic,      // && || !: bools
  kSelect,     // a bool, then two numeric operands of one dtype
};

struct OperatorShape {
  OperandRule rule;
  size_t arity;
};

std::optional<OperatorShape> operator_shape(SymKind kind) {
  switch (kind) {
    case SymKind::kAdd:
    case SymKind::kSub:
    case SymKind::kMul:
    case SymKind::kMin:
    case SymKind::kMax:
      return OperatorShape{OperandRule::kArith, 2};
    case SymKind::kFloorDiv:
    case SymKind::kFloorMod:
      return OperatorShape{OperandRule::kIntOnly, 2};
    case SymKind::kDiv:
      return OperatorShape{OperandRule::kFloatOnly, 2};
    case SymKind::kEQ:
    case SymKind::kNE:
    case SymKind::kLT:
    case SymKind::kLE:
    case SymKind::kGT:
    case SymKind::kGE:
      return OperatorShape{OperandRule::kCompare, 2};
    case SymKind::kAnd:
    case SymKind::kOr:
      return OperatorShape{OperandRule::kLogic, 2};
    case SymKind::kNot:
      return OperatorShape{OperandRule::kLogic, 1};
    case SymKind::kSelect:
      return OperatorShape{OperandRule::kSelect, 3};
    default:
      return std::nullopt;
  }
}

std::string operand_text(const SymExpr& e) {
  return cat(e.dtype().to_string(), " `", e.to_string(), "`");
}

// Why `ops` do not fit the operator `kind` of `shape`, or "" when they do.
std::string operand_mismatch(SymKind kind, OperatorShape shape, const std::vector<SymExpr>& ops) {
  const std::string_view name = sym_kind_json(kind);
  if (ops.size() != shape.arity) {
    return cat(name, " takes ", shape.arity, " operand", shape.arity == 1 ? "" : "s",
                        ", found ", ops.size());
  }
  if (shape.rule == OperandRule::kLogic) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!ops[i].dtype().is_bool()) {
        return cat("operand ", i, " of ", name, " must be boolean, found ",
                            operand_text(ops[i]));
      }
    }
    return "";
  }
  size_t first = 0;
  if (shape.rule == OperandRule::kSelect) {
    if (!ops[0].dtype().is_bool()) {
      return cat("operand 0 of ", name, " must be boolean, found ", operand_text(ops[0]));
    }
    first = 1;
  }
  for (size_t i = first; i < ops.size(); ++i) {
    const DataType t = ops[i].dtype();
    const bool ok = shape.rule == OperandRule::kIntOnly     ? is_sym_int(t)
                    : shape.rule == OperandRule::kFloatOnly ? is_sym_float(t)
                                                            : is_sym_numeric(t);
    if (!ok) {
      const char* wanted = shape.rule == OperandRule::kIntOnly     ? "an integer"
                           : shape.rule == OperandRule::kFloatOnly ? "a float"
                                                                   : "numeric";
      return cat("operand ", i, " of ", name, " must be ", wanted, ", found ",
                          operand_text(ops[i]));
    }
    if (t != ops[first].dtype()) {
      return cat("operands of ", name, " differ in dtype: ", operand_text(ops[first]),
                          " vs ", operand_text(ops[i]));
    }
  }
  return "";
}

// Why `ops` do not fit the intrinsic `op`, or "" when they do.
std::string intrinsic_mismatch(Intrinsic op, const std::vector<SymExpr>& ops) {
  const std::string_view name = intrinsic_json(op);
  const size_t arity = intrinsic_arity(op);
  if (ops.size() != arity) {
    return cat(name, " takes ", arity, " operand", arity == 1 ? "" : "s", ", found ",
                        ops.size());
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const DataType t = ops[i].dtype();
    if (!(is_sym_float(t) || (op == Intrinsic::kAbs && is_sym_int(t)))) {
      return cat("operand ", i, " of ", name, " must be a float",
                          op == Intrinsic::kAbs ? " or an integer" : "", ", found ",
                          operand_text(ops[i]));
    }
    if (t != ops[0].dtype()) {
      return cat("operands of ", name, " differ in dtype: ", operand_text(ops[0]),
                          " vs ", operand_text(ops[i]));
    }
  }
  return "";
}

}  // namespace

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
      if (!is_sym_int(*dtype) && *dtype != DataType::boolean()) {
        return fail(at.key("dtype"), cat("an integer constant cannot have dtype ",
                                                  dtype->to_string()));
      }
      if (!int_fits(*value, *dtype)) {
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
      if (!is_sym_float(*dtype)) {
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
      if (!is_sym_dtype(*dtype)) {
        return fail(at.key("dtype"), cat("a variable cannot have dtype ",
                                                  dtype->to_string()));
      }
      set(SymVar(std::move(*name), *dtype));
      return true;
    }
    case SymKind::kCast: {
      if (!only_fields(node, at, {"kind", "dtype", "operands"})) return false;
      std::optional<DataType> dtype = get_dtype(node, at, "dtype");
      std::optional<std::vector<SymExpr>> ops = sym_list(node, at, "operands");
      if (!dtype || !ops) return false;
      if (!is_sym_dtype(*dtype)) {
        return fail(at.key("dtype"), cat("cannot cast to ", dtype->to_string()));
      }
      if (ops->size() != 1) {
        return fail(at.key("operands"), cat("sym.cast takes 1 operand, found ", ops->size()));
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
      if (std::string why = intrinsic_mismatch(*op, *ops); !why.empty()) {
        return fail(at.key("operands"), why);
      }
      set(call(*op, std::move(*ops)));
      return true;
    }
    case SymKind::kBufferLoad: {
      if (!only_fields(node, at, {"kind", "buffer", "operands"})) return false;
      std::optional<Buffer> buffer = buffer_field(node, at, "buffer");
      std::optional<std::vector<SymExpr>> indices = int_sym_list(node, at, "operands");
      if (!buffer || !indices) return false;
      if (!is_sym_dtype(buffer->dtype())) {
        return fail(at.key("buffer"), cat("buffer `", buffer->name(), "` has dtype ",
                                                   buffer->dtype().to_string(),
                                                   ", which no scalar expression has"));
      }
      if (indices->size() != buffer->ndim()) {
        return fail(at.key("operands"),
                    cat("a load from `", buffer->name(), "` has ", indices->size(),
                                 " indices, but the buffer has rank ", buffer->ndim()));
      }
      set(buffer_load(*buffer, std::move(*indices)));
      return true;
    }
    default:
      break;
  }
  std::optional<OperatorShape> shape = operator_shape(*kind);
  if (!shape) return fail(at.key("kind"), cat("unknown node kind \"", kind_name, "\""));
  if (!only_fields(node, at, {"kind", "operands"})) return false;
  std::optional<std::vector<SymExpr>> ops = sym_list(node, at, "operands");
  if (!ops) return false;
  if (std::string why = operand_mismatch(*kind, *shape, *ops); !why.empty()) {
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
    std::optional<std::vector<SymExpr>> indices = int_sym_list(node, at, "indices");
    if (!indices) return false;
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
