// The attribute codecs, argument checks and table of op_def.h.
#include "ir/op/op_def.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/op/op_util.h"
#include "relax/support/check.h"

namespace relax {

std::string_view dtype_class_text(DtypeClass c) {
  switch (c) {
    case DtypeClass::kAny:
      return "any";
    case DtypeClass::kNumeric:
      return "numeric";
    case DtypeClass::kFloat:
      return "float";
    case DtypeClass::kInt:
      return "integer";
    case DtypeClass::kIntOrBool:
      return "integer or bool";
    case DtypeClass::kBool:
      return "bool";
  }
  return "?";
}

bool dtype_in_class(DataType dtype, DtypeClass c) {
  switch (c) {
    case DtypeClass::kAny:
      return true;
    case DtypeClass::kNumeric:
      return dtype.is_int() || dtype.is_float();
    case DtypeClass::kFloat:
      return dtype.is_float();
    case DtypeClass::kInt:
      return dtype.is_int();
    case DtypeClass::kIntOrBool:
      return dtype.is_int() || dtype.is_bool();
    case DtypeClass::kBool:
      return dtype.is_bool();
  }
  return false;
}

namespace detail {

// ---------------------------------------------------------------------------
// Value types.

std::optional<int64_t> AttrType<int64_t>::decode(const AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return std::nullopt;
}

std::optional<double> AttrType<double>::decode(const AttrValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> AttrType<bool>::decode(const AttrValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  return std::nullopt;
}

std::optional<std::string> AttrType<std::string>::decode(const AttrValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return std::nullopt;
}

std::optional<DataType> AttrType<DataType>::decode(const AttrValue& v) {
  if (const auto* t = std::get_if<DataType>(&v)) return *t;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> AttrType<std::vector<int64_t>>::decode(const AttrValue& v) {
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) return *l;
  if (const auto* i = std::get_if<int64_t>(&v)) return std::vector<int64_t>{*i};
  return std::nullopt;
}

std::optional<std::vector<SymExpr>> AttrType<std::vector<SymExpr>>::decode(const AttrValue& v) {
  if (const auto* l = std::get_if<std::vector<SymExpr>>(&v)) return *l;
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) {
    return std::vector<SymExpr>(l->begin(), l->end());
  }
  return std::nullopt;
}

std::optional<IntOrInts> AttrType<IntOrInts>::decode(const AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return IntOrInts(*i);
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) return IntOrInts(*l);
  return std::nullopt;
}

AttrValue AttrType<IntOrInts>::encode(const IntOrInts& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return std::get<std::vector<int64_t>>(v);
}

bool attr_values_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* l = std::get_if<std::vector<SymExpr>>(&a)) {
    const auto& r = std::get<std::vector<SymExpr>>(b);
    if (l->size() != r.size()) return false;
    for (size_t i = 0; i < l->size(); ++i) {
      if (!structural_equal((*l)[i], r[i])) return false;
    }
    return true;
  }
  if (const auto* d = std::get_if<double>(&a)) {
    // Bitwise, so that NaN equals itself and -0 differs from 0.
    const double e = std::get<double>(b);
    return std::memcmp(d, &e, sizeof(double)) == 0;
  }
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<SymExpr>> || std::is_same_v<T, double>) {
          return false;  // handled above
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}


// ---------------------------------------------------------------------------
// Visitors.

const AttrValue* AttrDecoder::take(const char* key) {
  taken_.emplace_back(key);
  auto it = attrs_.find(key);
  return it == attrs_.end() ? nullptr : &it->second;
}

void AttrDecoder::operator()(const char* key, std::string& field,
                             std::initializer_list<const char*> choices) {
  const AttrValue* v = take(key);
  if (v == nullptr) return;
  std::string value;
  if (!decode_into(key, *v, value)) return;
  for (const char* c : choices) {
    if (value == c) {
      field = value;
      return;
    }
  }
  std::vector<std::string> quoted;
  for (const char* c : choices) quoted.push_back(absl::StrCat("\"", c, "\""));
  fail(absl::StrCat("attribute `", key, "` is \"", value, "\", expected one of ",
                    absl::StrJoin(quoted, ", ")));
}

void AttrDecoder::wrong_type(const char* key, const char* expected, const AttrValue& v) {
  fail(absl::StrCat("attribute `", key, "` must be ", expected, ", got ", attr_value_text(v)));
}

void AttrDecoder::fail(const std::string& message) {
  if (status_.ok()) status_ = op_error(op_, message);
}

absl::Status AttrDecoder::finish(const std::vector<std::string>& declared) {
  if (!status_.ok()) return status_;
  for (const auto& [key, value] : attrs_) {
    if (std::find(taken_.begin(), taken_.end(), key) != taken_.end()) continue;
    if (declared.empty()) return op_error(op_, "takes no attributes, got `" + key + "`");
    std::vector<std::string> names;
    for (const std::string& d : declared) names.push_back("`" + d + "`");
    return op_error(op_, "unknown attribute `" + key + "` (its attributes are " +
                             absl::StrJoin(names, ", ") + ")");
  }
  return absl::OkStatus();
}

void AttrLister::operator()(const char* key, const std::string& field,
                            std::initializer_list<const char*> choices) {
  std::vector<std::string> quoted;
  for (const char* c : choices) quoted.push_back(absl::StrCat("\"", c, "\""));
  out_.push_back({key, absl::StrJoin(quoted, " | "), "\"" + field + "\""});
}

// ---------------------------------------------------------------------------
// Arguments.

namespace {

std::string_view kind_text(ArgKind kind) {
  switch (kind) {
    case ArgKind::kTensor:
      return "a Tensor";
    case ArgKind::kTensorOrScalar:
      return "a Tensor or a Prim";
    case ArgKind::kPrim:
      return "a Prim";
    case ArgKind::kShape:
      return "a Shape";
    case ArgKind::kTuple:
      return "a Tuple";
    case ArgKind::kAny:
      return "a value";
  }
  return "?";
}

bool kind_fits(ArgKind kind, StructInfoKind actual) {
  switch (kind) {
    case ArgKind::kTensor:
      return actual == StructInfoKind::kTensor;
    case ArgKind::kTensorOrScalar:
      return actual == StructInfoKind::kTensor || actual == StructInfoKind::kPrim;
    case ArgKind::kPrim:
      return actual == StructInfoKind::kPrim;
    case ArgKind::kShape:
      return actual == StructInfoKind::kShape;
    case ArgKind::kTuple:
      return actual == StructInfoKind::kTuple;
    case ArgKind::kAny:
      return true;
  }
  return false;
}

}  // namespace

absl::Status check_args(const OpInfo& info, const CallNode& call) {
  const size_t n = std::min(call.args.size(), info.args.size());
  for (size_t i = 0; i < n; ++i) {
    const ArgSpec& spec = info.args[i];
    const StructInfo& sinfo = call.args[i].struct_info();
    auto fail = [&](const std::string& expected) {
      return op_error(info.name, arg_label(i, spec.role) + ": expected " + expected + ", got " +
                                     sinfo.to_string());
    };
    if (!kind_fits(spec.kind, sinfo.kind())) return fail(std::string(kind_text(spec.kind)));
    if (spec.dtypes == DtypeClass::kAny) continue;
    std::optional<DataType> dtype;
    std::string what = "tensor";
    if (const auto* t = sinfo.as<TensorStructInfoNode>()) {
      dtype = t->dtype;
    } else if (const auto* p = sinfo.as<PrimStructInfoNode>()) {
      dtype = p->dtype;
      what = "Prim";
    }
    if (dtype && !dtype_in_class(*dtype, spec.dtypes)) {
      const std::string_view cls = dtype_class_text(spec.dtypes);
      const bool vowel = cls[0] == 'i' || cls[0] == 'a';
      return fail(std::string(vowel ? "an " : "a ") + std::string(cls) + " " + what);
    }
  }
  return absl::OkStatus();
}

OpInfo& OpTable::add_entry(std::string name, std::string summary) {
  for (const auto& e : entries_) {
    RELAX_CHECK(e->name != name) << "operator `" << name << "` registered twice";
  }
  auto info = std::make_unique<OpInfo>();
  info->name = std::move(name);
  info->summary = std::move(summary);
  info->family = family_;
  info->canonical_attrs = [](const Attrs& attrs) -> absl::StatusOr<Attrs> { return attrs; };
  entries_.push_back(std::move(info));
  return *entries_.back();
}

}  // namespace detail
std::string attr_value_text(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return absl::StrCat(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + x + "\"";
        } else if constexpr (std::is_same_v<T, DataType>) {
          return x.to_string();
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return "[" + absl::StrJoin(x, ", ") + "]";
        } else {
          std::vector<std::string> parts;
          for (const SymExpr& e : x) parts.push_back(e.to_string());
          return "sym[" + absl::StrJoin(parts, ", ") + "]";
        }
      },
      v);
}

}  // namespace relax
