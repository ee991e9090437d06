// Reading an IRModule from JSON (relax/ir/json.h): the document, the node
// table, the field accessors, StructInfo and attributes. Graph expressions
// are read in json_reader_expr.cc, SymExprs, buffers and statements in
// json_reader_loop.cc; json_reader.h explains the design.
#include "ir/json/json_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "ir/json/json_schema.h"
#include "relax/ir/json.h"
#include "relax/support/check.h"
#include "relax/support/dtype_util.h"
#include "relax/support/limits.h"
#include "ir/text/text_format.h"

namespace relax {
namespace json_detail {
namespace {

const char* family_name(Family f) {
  switch (f) {
    case Family::kSym: return "a SymExpr";
    case Family::kBuffer: return "a buffer";
    case Family::kSInfo: return "a StructInfo";
    case Family::kExpr: return "an Expr";
    case Family::kStmt: return "a Stmt";
  }
  return "?";
}

// The family a node kind belongs to, from its prefix.
std::optional<Family> family_of(std::string_view kind) {
  if (kind.starts_with("sym.")) return Family::kSym;
  if (kind == "buffer") return Family::kBuffer;
  if (kind.starts_with("sinfo.")) return Family::kSInfo;
  if (kind.starts_with("expr.")) return Family::kExpr;
  if (kind.starts_with("stmt.")) return Family::kStmt;
  return std::nullopt;
}

}  // namespace

std::string Loc::str() const {
  if (parent == nullptr && field.empty()) return "";  // the document itself
  std::string prefix = parent ? parent->str() : std::string();
  if (field.empty()) return cat(prefix, "[", index, "]");
  return prefix.empty() ? std::string(field) : cat(prefix, ".", field);
}

namespace {
// Appends a short form of `v` to `out`, at most `depth` levels of it (dump()
// would recurse through a value nested a million levels deep).
void describe_into(const Json& v, int depth, std::string& out) {
  constexpr size_t kMax = 40;
  if (out.size() > kMax) return;
  if (!v.is_structured()) {
    out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  if (depth == 0 || v.empty()) {
    out += v.is_array() ? (v.empty() ? "[]" : "[...]") : (v.empty() ? "{}" : "{...}");
    return;
  }
  out += v.is_array() ? "[" : "{";
  bool first = true;
  for (auto it = v.begin(); it != v.end() && out.size() <= kMax; ++it) {
    if (!first) out += ",";
    first = false;
    if (v.is_object()) out += Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace) + ":";
    describe_into(it.value(), depth - 1, out);
  }
  out += v.is_array() ? "]" : "}";
}
}  // namespace

std::string describe(const Json& v) {
  constexpr size_t kMax = 40;
  std::string text;
  describe_into(v, 3, text);
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

// ---------------------------------------------------------------------------
// Errors and accessors.

bool Reader::fail(const Loc& at, std::string_view message) {
  if (error_.empty()) {
    std::string where = at.str();
    error_ = cat(where.empty() ? "<document>" : where, ": ", message);
  }
  return false;
}

const Json* Reader::field(const Json& obj, const Loc& at, std::string_view name) {
  auto it = obj.find(std::string(name));
  if (it == obj.end()) {
    fail(at, cat("missing field \"", name, "\""));
    return nullptr;
  }
  return &*it;
}

bool Reader::only_fields(const Json& obj, const Loc& at,
                         std::initializer_list<std::string_view> names) {
  for (const auto& [key, value] : obj.items()) {
    bool known = false;
    for (std::string_view n : names) known = known || key == n;
    if (!known) return fail(at, cat("unknown field \"", key, "\""));
  }
  return true;
}

const Json* Reader::as_object(const Json& v, const Loc& at) {
  if (v.is_object()) return &v;
  fail(at, cat("expected an object, found ", describe(v)));
  return nullptr;
}

std::optional<int64_t> Reader::as_int(const Json& v, const Loc& at) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(at, cat("integer ", describe(v), " is out of range"));
      return std::nullopt;
    }
    return v.get<int64_t>();
  }
  fail(at, cat("expected an integer, found ", describe(v)));
  return std::nullopt;
}

std::optional<int64_t> Reader::get_int(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  return v ? as_int(*v, at.key(name)) : std::nullopt;
}

std::optional<bool> Reader::get_bool(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  if (!v) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>();
  fail(at.key(name), cat("expected a boolean, found ", describe(*v)));
  return std::nullopt;
}

std::optional<std::string> Reader::as_string(const Json& v, const Loc& at) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.size() == 1 && v.contains("base64") && v["base64"].is_string()) {
    std::string bytes;
    if (absl::Base64Unescape(v["base64"].get_ref<const std::string&>(), &bytes)) return bytes;
    fail(at.key("base64"), "not valid base64");
    return std::nullopt;
  }
  fail(at, cat("expected a string, found ", describe(v)));
  return std::nullopt;
}

std::optional<std::string> Reader::get_string(const Json& obj, const Loc& at,
                                              std::string_view name) {
  const Json* v = field(obj, at, name);
  return v ? as_string(*v, at.key(name)) : std::nullopt;
}

std::optional<DataType> Reader::get_dtype(const Json& obj, const Loc& at, std::string_view name, bool allow_lanes) {
  const Json* v = field(obj, at, name);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(at.key(name), cat("expected a dtype string, found ", describe(*v)));
    return std::nullopt;
  }
  std::optional<DataType> t = parse_dtype(v->get_ref<const std::string&>());
  if (!t) {
    fail(at.key(name), cat("unknown dtype ", describe(*v)));
  } else if (!is_scalar_dtype(DataType{t->code, t->bits, 1}) ||
             (t->lanes != 1 && !(allow_lanes && is_vector_lanes(t->lanes)))) {
    fail(at.key(name), text::unsupported_dtype_message(*t));
    return std::nullopt;
  }
  return t;
}

const Json* Reader::get_array(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  if (!v) return nullptr;
  if (v->is_array()) return v;
  fail(at.key(name), cat("expected an array, found ", describe(*v)));
  return nullptr;
}

std::optional<double> Reader::as_float(const Json& v, const Loc& at) {
  if (v.is_number_float()) return v.get<double>();
  if (v.is_number_integer()) {
    // Integers are accepted where they are exactly doubles.
    std::optional<int64_t> i = as_int(v, at);
    if (!i) return std::nullopt;
    constexpr int64_t kExact = int64_t{1} << 53;
    if (*i >= -kExact && *i <= kExact) return static_cast<double>(*i);
    fail(at, cat("integer ", *i, " is not exactly a double"));
    return std::nullopt;
  }
  if (v.is_string()) {
    if (std::optional<double> d = float_from_json_text(v.get_ref<const std::string&>())) return d;
  }
  fail(at, cat("expected a number, \"inf\", \"-inf\", \"nan\" or \"0x<16 hex digits>\", found ",
                        describe(v)));
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// References.

std::optional<size_t> Reader::as_ref(const Json& v, const Loc& at, Family want) {
  if (!v.is_number_integer()) {
    fail(at, cat("expected a node index, found ", describe(v)));
    return std::nullopt;
  }
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0) {
    fail(at, cat("node index ", describe(v), " is negative"));
    return std::nullopt;
  }
  const uint64_t index = v.get<uint64_t>();
  if (index >= total_) {
    fail(at, cat("node index ", index, " is out of range (the table has ", total_,
                          " nodes)"));
    return std::nullopt;
  }
  if (index >= limit_) {
    fail(at, cat("node ", limit_, " refers to node ", index,
                          ": a node may only refer to nodes before it"));
    return std::nullopt;
  }
  const Entry& e = table_[index];
  if (family_of(e.kind) != want) {
    fail(at, cat("expected ", family_name(want), " node, node ", index, " is ", e.kind));
    return std::nullopt;
  }
  if (want == family_) depth_ = std::max(depth_, e.depth + 1);
  return static_cast<size_t>(index);
}

namespace {
template <typename T, typename Entries>
std::optional<T> get_value(const Entries& table, std::optional<size_t> index) {
  if (!index) return std::nullopt;
  return std::get<T>(table[*index].value);
}
}  // namespace

std::optional<SymExpr> Reader::sym_ref(const Json& v, const Loc& at) {
  return get_value<SymExpr>(table_, as_ref(v, at, Family::kSym));
}

std::optional<SymVar> Reader::sym_var_ref(const Json& v, const Loc& at) {
  std::optional<size_t> index = as_ref(v, at, Family::kSym);
  if (!index) return std::nullopt;
  const SymExpr& e = std::get<SymExpr>(table_[*index].value);
  if (!e.is_var()) {
    fail(at, cat("expected a sym.var node, node ", *index, " is ", table_[*index].kind));
    return std::nullopt;
  }
  return SymVar::from_expr(e);
}

std::optional<Buffer> Reader::buffer_ref(const Json& v, const Loc& at) {
  return get_value<Buffer>(table_, as_ref(v, at, Family::kBuffer));
}

std::optional<StructInfo> Reader::sinfo_ref(const Json& v, const Loc& at) {
  return get_value<StructInfo>(table_, as_ref(v, at, Family::kSInfo));
}

std::optional<Expr> Reader::expr_ref(const Json& v, const Loc& at) {
  return get_value<Expr>(table_, as_ref(v, at, Family::kExpr));
}

std::optional<Var> Reader::var_ref(const Json& v, const Loc& at) {
  std::optional<size_t> index = as_ref(v, at, Family::kExpr);
  if (!index) return std::nullopt;
  const Expr& e = std::get<Expr>(table_[*index].value);
  if (e.as<VarNode>() == nullptr) {
    fail(at, cat("expected an expr.var or expr.dataflow_var node, node ", *index,
                          " is ", table_[*index].kind));
    return std::nullopt;
  }
  return Var::from_expr(e);
}

std::optional<Stmt> Reader::stmt_ref(const Json& v, const Loc& at) {
  return get_value<Stmt>(table_, as_ref(v, at, Family::kStmt));
}

std::optional<SymExpr> Reader::sym_field(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  return v ? sym_ref(*v, at.key(name)) : std::nullopt;
}

std::optional<SymExpr> Reader::opt_sym_field(const Json& obj, const Loc& at,
                                             std::string_view name) {
  const Json* v = field(obj, at, name);
  if (!v) return std::nullopt;
  if (v->is_null()) return SymExpr();
  return sym_ref(*v, at.key(name));
}

std::optional<SymVar> Reader::sym_var_field(const Json& obj, const Loc& at,
                                            std::string_view name) {
  const Json* v = field(obj, at, name);
  return v ? sym_var_ref(*v, at.key(name)) : std::nullopt;
}

std::optional<Buffer> Reader::buffer_field(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  return v ? buffer_ref(*v, at.key(name)) : std::nullopt;
}

std::optional<StructInfo> Reader::sinfo_field(const Json& obj, const Loc& at,
                                              std::string_view name) {
  const Json* v = field(obj, at, name);
  return v ? sinfo_ref(*v, at.key(name)) : std::nullopt;
}

std::optional<StructInfo> Reader::opt_sinfo_field(const Json& obj, const Loc& at,
                                                  std::string_view name) {
  const Json* v = field(obj, at, name);
  if (!v) return std::nullopt;
  if (v->is_null()) return StructInfo();
  return sinfo_ref(*v, at.key(name));
}

std::optional<Expr> Reader::expr_field(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  return v ? expr_ref(*v, at.key(name)) : std::nullopt;
}

std::optional<Stmt> Reader::stmt_field(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  return v ? stmt_ref(*v, at.key(name)) : std::nullopt;
}

std::optional<Stmt> Reader::opt_stmt_field(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  if (!v) return std::nullopt;
  if (v->is_null()) return Stmt();
  return stmt_ref(*v, at.key(name));
}

namespace {
// Reads every element of the array field `name` with `read`.
template <typename T, typename ReadFn>
std::optional<std::vector<T>> read_list(Reader& r, const Json& obj, const Loc& at,
                                        std::string_view name, ReadFn&& read) {
  const Json* array = r.get_array(obj, at, name);
  if (!array) return std::nullopt;
  const Loc list_at = at.key(name);
  std::vector<T> out;
  out.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    std::optional<T> item = read((*array)[i], list_at.at(i));
    if (!item) return std::nullopt;
    out.push_back(std::move(*item));
  }
  return out;
}
}  // namespace

std::optional<std::vector<SymExpr>> Reader::sym_list(const Json& obj, const Loc& at,
                                                     std::string_view name) {
  return read_list<SymExpr>(*this, obj, at, name,
                            [this](const Json& v, const Loc& l) { return sym_ref(v, l); });
}

std::optional<std::vector<SymExpr>> Reader::int_sym_list(const Json& obj, const Loc& at,
                                                         std::string_view name) {
  return read_list<SymExpr>(*this, obj, at, name,
                            [this](const Json& v, const Loc& l) -> std::optional<SymExpr> {
                              std::optional<SymExpr> e = sym_ref(v, l);
                              if (e && !is_scalar_int(e->dtype())) {
                                fail(l, cat("expected an integer, found ",
                                                     e->dtype().to_string(), " `",
                                                     e->to_string(), "`"));
                                return std::nullopt;
                              }
                              return e;
                            });
}

std::optional<std::vector<SymExpr>> Reader::dim_list(const Json& obj, const Loc& at,
                                                     std::string_view name) {
  std::optional<std::vector<SymExpr>> dims = int_sym_list(obj, at, name);
  if (!dims) return std::nullopt;
  const Loc list = at.key(name);
  for (size_t i = 0; i < dims->size(); ++i) {
    const SymExpr& d = (*dims)[i];
    if (d.dtype() != DataType::int64()) {
      fail(list.at(i), cat("a dim must be an int64 expression, found `", d.to_string(),
                           "` of dtype ", d.dtype().to_string()));
      return std::nullopt;
    }
  }
  return dims;
}

std::optional<std::vector<StructInfo>> Reader::sinfo_list(const Json& obj, const Loc& at,
                                                          std::string_view name) {
  return read_list<StructInfo>(*this, obj, at, name,
                               [this](const Json& v, const Loc& l) { return sinfo_ref(v, l); });
}

std::optional<std::vector<Expr>> Reader::expr_list(const Json& obj, const Loc& at,
                                                   std::string_view name) {
  return read_list<Expr>(*this, obj, at, name,
                         [this](const Json& v, const Loc& l) { return expr_ref(v, l); });
}

// ---------------------------------------------------------------------------
// Attributes.

std::optional<AttrValue> Reader::read_attr(const Json& v, const Loc& at) {
  if (!as_object(v, at)) return std::nullopt;
  if (v.size() != 1) {
    fail(at, cat("an attribute is an object with one of the keys int, float, bool, "
                          "str, dtype, ints, syms; found ", describe(v)));
    return std::nullopt;
  }
  const std::string& tag = v.begin().key();
  const Json& value = v.begin().value();
  const Loc value_at = at.key(tag);
  if (tag == "int") return as_int(value, value_at);
  if (tag == "float") return as_float(value, value_at);
  if (tag == "bool") return get_bool(v, at, "bool");
  if (tag == "str") return as_string(value, value_at);
  if (tag == "dtype") return get_dtype(v, at, "dtype");
  if (tag == "ints") {
    return read_list<int64_t>(*this, v, at, "ints",
                              [this](const Json& x, const Loc& l) { return as_int(x, l); });
  }
  if (tag == "syms") return sym_list(v, at, "syms");
  fail(at, cat("unknown attribute type \"", tag,
                        "\" (expected int, float, bool, str, dtype, ints or syms)"));
  return std::nullopt;
}

std::optional<Attrs> Reader::attrs_field(const Json& obj, const Loc& at, std::string_view name) {
  const Json* v = field(obj, at, name);
  if (!v) return std::nullopt;
  const Loc attrs_at = at.key(name);
  if (!as_object(*v, attrs_at)) return std::nullopt;
  Attrs out;
  for (const auto& [key, value] : v->items()) {
    std::optional<AttrValue> a = read_attr(value, attrs_at.key(key));
    if (!a) return std::nullopt;
    out.emplace(key, std::move(*a));
  }
  return out;
}

// ---------------------------------------------------------------------------
// StructInfo.

namespace {
// The rank of a Shape or Tensor annotation against its dims.
bool rank_fits(int64_t ndim, const std::optional<std::vector<SymExpr>>& dims) {
  if (dims) return ndim == static_cast<int64_t>(dims->size());
  return ndim >= kUnknownNDim && ndim <= std::numeric_limits<int>::max();
}
}  // namespace

bool Reader::read_sinfo(const Json& node, const Loc& at, std::string_view kind) {
  // A field that may be null or a list of dims.
  auto opt_dims = [&](std::string_view name) -> std::optional<std::optional<std::vector<SymExpr>>> {
    const Json* v = field(node, at, name);
    if (!v) return std::nullopt;
    if (v->is_null()) return std::optional<std::vector<SymExpr>>();
    std::optional<std::vector<SymExpr>> dims = dim_list(node, at, name);
    if (!dims) return std::nullopt;
    return dims;
  };
  if (kind == "sinfo.object") {
    if (!only_fields(node, at, {"kind"})) return false;
    set(object_sinfo());
    return true;
  }
  if (kind == "sinfo.prim") {
    if (!only_fields(node, at, {"kind", "dtype", "value"})) return false;
    std::optional<DataType> dtype = get_dtype(node, at, "dtype");
    std::optional<SymExpr> value = opt_sym_field(node, at, "value");
    if (!dtype || !value) return false;
    if (value->defined() && value->dtype() != *dtype) {
      return fail(at.key("value"), cat("the value has dtype ", value->dtype().to_string(),
                                                ", the annotation ", dtype->to_string()));
    }
    set(StructInfo(std::make_shared<const PrimStructInfoNode>(*dtype, *value)));
    return true;
  }
  if (kind == "sinfo.shape" || kind == "sinfo.tensor") {
    const bool tensor = kind == "sinfo.tensor";
    if (!(tensor ? only_fields(node, at, {"kind", "ndim", "shape", "dtype", "device"})
                 : only_fields(node, at, {"kind", "ndim", "values"}))) {
      return false;
    }
    std::optional<int64_t> ndim = get_int(node, at, "ndim");
    auto dims = opt_dims(tensor ? "shape" : "values");
    if (!ndim || !dims) return false;
    if (!rank_fits(*ndim, *dims)) {
      return fail(at.key("ndim"), *dims ? cat("ndim is ", *ndim, " but there are ",
                                                       (*dims)->size(), " dims")
                                        : cat("bad rank ", *ndim));
    }
    if (!tensor) {
      set(StructInfo(std::make_shared<const ShapeStructInfoNode>(std::move(*dims),
                                                                 static_cast<int>(*ndim))));
      return true;
    }
    std::optional<DataType> dtype;
    const Json* dtype_json = field(node, at, "dtype");
    if (!dtype_json) return false;
    if (!dtype_json->is_null()) {
      dtype = get_dtype(node, at, "dtype");
      if (!dtype) return false;
    }
    Device device;
    if (node.contains("device")) {
      const Loc dev_at = at.key("device");
      const Json& d = node["device"];
      if (!as_object(d, dev_at) || !only_fields(d, dev_at, {"type", "index"})) return false;
      std::optional<std::string> type = get_string(d, dev_at, "type");
      std::optional<int64_t> index = get_int(d, dev_at, "index");
      if (!type || !index) return false;
      std::optional<Device::Type> t = device_type_from_json(*type);
      if (!t) return fail(dev_at.key("type"), cat("unknown device type \"", *type, "\""));
      if (*index < 0 || *index > std::numeric_limits<int32_t>::max()) {
        return fail(dev_at.key("index"), cat("bad device index ", *index));
      }
      device = Device{*t, static_cast<int32_t>(*index)};
    }
    set(StructInfo(std::make_shared<const TensorStructInfoNode>(
        std::move(*dims), static_cast<int>(*ndim), dtype, device)));
    return true;
  }
  if (kind == "sinfo.tuple") {
    if (!only_fields(node, at, {"kind", "fields"})) return false;
    std::optional<std::vector<StructInfo>> fields = sinfo_list(node, at, "fields");
    if (!fields) return false;
    set(StructInfo(std::make_shared<const TupleStructInfoNode>(std::move(*fields))));
    return true;
  }
  if (kind == "sinfo.func") {
    if (!only_fields(node, at, {"kind", "params", "ret", "pure"})) return false;
    const Json* params_json = field(node, at, "params");
    if (!params_json) return false;
    std::optional<std::vector<StructInfo>> params;
    if (!params_json->is_null()) {
      params = sinfo_list(node, at, "params");
      if (!params) return false;
    }
    std::optional<StructInfo> ret = sinfo_field(node, at, "ret");
    std::optional<bool> pure = get_bool(node, at, "pure");
    if (!ret || !pure) return false;
    set(StructInfo(std::make_shared<const FuncStructInfoNode>(std::move(params), *ret, *pure)));
    return true;
  }
  return fail(at.key("kind"), cat("unknown node kind \"", kind, "\""));
}

// ---------------------------------------------------------------------------
// The document.

bool Reader::read_node(const Json& node, const Loc& at) {
  if (!as_object(node, at)) return false;
  const Json* kind_json = field(node, at, "kind");
  if (!kind_json) return false;
  if (!kind_json->is_string()) {
    return fail(at.key("kind"), cat("expected a node kind, found ", describe(*kind_json)));
  }
  const std::string& kind = kind_json->get_ref<const std::string&>();
  std::optional<Family> family = family_of(kind);
  if (!family) return fail(at.key("kind"), cat("unknown node kind \"", kind, "\""));
  table_.push_back(Entry{kind, {}, 0});
  depth_ = 1;
  family_ = *family;
  bool ok = false;
  switch (*family) {
    case Family::kSym: ok = read_sym(node, at, kind); break;
    case Family::kBuffer: ok = read_buffer(node, at); break;
    case Family::kSInfo: ok = read_sinfo(node, at, kind); break;
    case Family::kExpr: ok = read_expr(node, at, kind); break;
    case Family::kStmt: ok = read_stmt(node, at, kind); break;
  }
  if (!ok) return fail(at, "invalid node");  // a no-op: the reader said why already
  RELAX_CHECK(table_.back().value.index() != 0) << "the reader of " << kind << " built nothing";
  if (const auto* sym = std::get_if<SymExpr>(&table_.back().value)) depth_ = (*sym)->depth();
  if (depth_ > static_cast<size_t>(kMaxNestingDepth)) {
    const char* what = "";
    switch (*family) {
      case Family::kSym:
        what = "a scalar expression nests";
        break;
      case Family::kBuffer:
        what = "a buffer nests";
        break;
      case Family::kSInfo:
        what = "annotations nest";
        break;
      case Family::kExpr:
        what = "expressions nest";
        break;
      case Family::kStmt:
        what = "statements nest";
        break;
    }
    return fail(
        at, cat(what, " deeper than ", kMaxNestingDepth, " levels (the limit of every reader)"));
  }
  table_.back().depth = depth_;
  return true;
}

absl::StatusOr<IRModule> Reader::read(const Json& doc) {
  const Loc root;
  auto error = [this]() { return absl::InvalidArgumentError(error_); };
  if (!doc.is_object()) {
    fail(root, cat("not a relax IR JSON document: expected an object, found ",
                            describe(doc)));
    return error();
  }
  // The format and version first: nothing else means anything without them.
  if (!doc.contains("format")) {
    fail(root, "not a relax IR JSON document: missing \"format\"");
    return error();
  }
  const Json& format = *doc.find("format");
  if (!format.is_string() || format.get_ref<const std::string&>() != kFormat) {
    fail(root.key("format"), cat("unsupported format ", describe(format),
                                          " (expected \"", kFormat, "\")"));
    return error();
  }
  std::optional<int64_t> version = get_int(doc, root, "version");
  if (!version) return error();
  if (*version != kIRJsonVersion) {
    fail(root.key("version"), cat("unsupported relax IR JSON version ", *version,
                                           " (this build reads version ", kIRJsonVersion, ")"));
    return error();
  }
  if (!only_fields(doc, root, {"format", "version", "functions", "attrs", "nodes"})) return error();

  const Json* nodes = get_array(doc, root, "nodes");
  if (!nodes) return error();
  const Loc nodes_at = root.key("nodes");
  total_ = nodes->size();
  table_.reserve(total_);
  for (size_t i = 0; i < nodes->size(); ++i) {
    limit_ = i;
    if (!read_node((*nodes)[i], nodes_at.at(i))) return error();
  }
  limit_ = table_.size();

  IRModule mod;
  const Json* functions = get_array(doc, root, "functions");
  if (!functions) return error();
  const Loc functions_at = root.key("functions");
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < functions->size(); ++i) {
    const Loc f_at = functions_at.at(i);
    const Json& f = (*functions)[i];
    if (!as_object(f, f_at) || !only_fields(f, f_at, {"name", "func"})) return error();
    std::optional<std::string> name = get_string(f, f_at, "name");
    std::optional<Expr> func = expr_field(f, f_at, "func");
    if (!name || !func) return error();
    if (!func->as<FunctionNode>() && !func->as<PrimFuncNode>() && !func->as<ExternFuncNode>()) {
      fail(f_at.key("func"), cat("a module function is a Function, PrimFunc or "
                                          "ExternFunc, not a ",
                                          expr_kind_name(func->kind())));
      return error();
    }
    if (!names.insert(*name).second) {
      fail(f_at.key("name"), cat("function \"", *name, "\" is defined twice"));
      return error();
    }
    mod.add(std::move(*name), std::move(*func));
  }
  std::optional<Attrs> attrs = attrs_field(doc, root, "attrs");
  if (!attrs) return error();
  mod.attrs() = std::move(*attrs);
  return mod;
}

}  // namespace json_detail

absl::StatusOr<IRModule> from_json(std::string_view json) {
  json_detail::Json doc;
  try {
    doc = json_detail::Json::parse(json.begin(), json.end());
  } catch (const json_detail::Json::exception& e) {
    // nlohmann's message names the position: "parse error at line 1, column 9: ...".
    std::string_view what = e.what();
    if (size_t pos = what.find("] "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
    return absl::InvalidArgumentError(json_detail::cat("malformed JSON: ", what));
  }
  return json_detail::Reader().read(doc);
}

}  // namespace relax
