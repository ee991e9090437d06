// relax::runtime::Value: the tagged union held by VM registers, arguments and results.
#include "relax/runtime/value.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/support/check.h"

namespace relax::runtime {

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNone: return "none";
    case ValueKind::kTensor: return "tensor";
    case ValueKind::kShape: return "shape";
    case ValueKind::kInt: return "int";
    case ValueKind::kFloat: return "float";
    case ValueKind::kString: return "string";
    case ValueKind::kTuple: return "tuple";
  }
  return "unknown";
}

// An undefined Tensor handle carries nothing, so it is stored as none: a
// kTensor Value always has a defined tensor.
Value::Value(Tensor tensor) {
  if (tensor.defined()) v_ = std::move(tensor);
}
Value::Value(int64_t v) : v_(v) {}
Value::Value(double v) : v_(v) {}
Value::Value(std::string s) : v_(std::make_shared<const std::string>(std::move(s))) {}

Value Value::shape(std::vector<int64_t> dims) {
  Value v;
  v.v_ = Shape{std::make_shared<const std::vector<int64_t>>(std::move(dims))};
  return v;
}

Value Value::tuple(std::vector<Value> fields) {
  Value v;
  v.v_ = Tuple{std::make_shared<const std::vector<Value>>(std::move(fields))};
  return v;
}

// The variant's alternatives are declared in ValueKind's order.
ValueKind Value::kind() const { return static_cast<ValueKind>(v_.index()); }

// The checked accessors say what the value is instead; the _or_die ones are
// for callers that have checked kind() (the VM, the serialiser).
absl::Status Value::wrong_kind(const char* accessor, ValueKind wanted) const {
  std::string what = describe();
  constexpr size_t kMaxShown = 80;
  if (what.size() > kMaxShown) what = what.substr(0, kMaxShown) + "...";
  return absl::InvalidArgumentError(absl::StrCat("Value::", accessor, ": the value is a ", value_kind_name(kind()),
                                                 " (", what, "), not a ", value_kind_name(wanted)));
}

absl::StatusOr<Tensor> Value::tensor() const {
  if (!is_tensor()) return wrong_kind("tensor", ValueKind::kTensor);
  return std::get<Tensor>(v_);
}

absl::StatusOr<std::vector<int64_t>> Value::shape_dims() const {
  if (!is_shape()) return wrong_kind("shape_dims", ValueKind::kShape);
  return *std::get<Shape>(v_).dims;
}

absl::StatusOr<int64_t> Value::int_value() const {
  if (!is_int()) return wrong_kind("int_value", ValueKind::kInt);
  return std::get<int64_t>(v_);
}

absl::StatusOr<double> Value::float_value() const {
  if (!is_float()) return wrong_kind("float_value", ValueKind::kFloat);
  return std::get<double>(v_);
}

absl::StatusOr<std::string> Value::string_value() const {
  if (!is_string()) return wrong_kind("string_value", ValueKind::kString);
  return *std::get<std::shared_ptr<const std::string>>(v_);
}

absl::StatusOr<std::vector<Value>> Value::fields() const {
  if (!is_tuple()) return wrong_kind("fields", ValueKind::kTuple);
  return *std::get<Tuple>(v_).fields;
}

const Tensor& Value::tensor_or_die() const {
  RELAX_CHECK(is_tensor()) << "Value::tensor_or_die() on a " << value_kind_name(kind());
  return std::get<Tensor>(v_);
}

const std::vector<int64_t>& Value::shape_dims_or_die() const {
  RELAX_CHECK(is_shape()) << "Value::shape_dims_or_die() on a " << value_kind_name(kind());
  return *std::get<Shape>(v_).dims;
}

int64_t Value::int_value_or_die() const {
  RELAX_CHECK(is_int()) << "Value::int_value_or_die() on a " << value_kind_name(kind());
  return std::get<int64_t>(v_);
}

double Value::float_value_or_die() const {
  RELAX_CHECK(is_float()) << "Value::float_value_or_die() on a " << value_kind_name(kind());
  return std::get<double>(v_);
}

const std::string& Value::string_value_or_die() const {
  RELAX_CHECK(is_string()) << "Value::string_value_or_die() on a " << value_kind_name(kind());
  return *std::get<std::shared_ptr<const std::string>>(v_);
}

const std::vector<Value>& Value::fields_or_die() const {
  RELAX_CHECK(is_tuple()) << "Value::fields_or_die() on a " << value_kind_name(kind());
  return *std::get<Tuple>(v_).fields;
}

namespace {

// "0.5", "2.0", "1e+30": a float never reads like an int.
std::string describe_float(double v) {
  std::string s = absl::StrCat(v);
  if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string Value::describe() const {
  switch (kind()) {
    case ValueKind::kNone: return "None";
    case ValueKind::kTensor: return tensor_or_die().describe();
    case ValueKind::kShape: return absl::StrCat("Shape(", absl::StrJoin(shape_dims_or_die(), ", "), ")");
    case ValueKind::kInt: return absl::StrCat(int_value_or_die());
    case ValueKind::kFloat: return describe_float(float_value_or_die());
    case ValueKind::kString: return quote(string_value_or_die());
    case ValueKind::kTuple: {
      const std::vector<Value>& fs = fields_or_die();
      std::string out = "(";
      for (size_t i = 0; i < fs.size(); ++i) {
        if (i > 0) out += ", ";
        out += fs[i].describe();
      }
      return out + (fs.size() == 1 ? ",)" : ")");
    }
  }
  return "?";
}

}  // namespace relax::runtime
