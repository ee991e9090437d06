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

const Tensor& Value::tensor() const {
  RELAX_CHECK(is_tensor()) << "Value::tensor() on a " << value_kind_name(kind());
  return std::get<Tensor>(v_);
}

const std::vector<int64_t>& Value::shape_dims() const {
  RELAX_CHECK(is_shape()) << "Value::shape_dims() on a " << value_kind_name(kind());
  return *std::get<Shape>(v_).dims;
}

int64_t Value::int_value() const {
  RELAX_CHECK(is_int()) << "Value::int_value() on a " << value_kind_name(kind());
  return std::get<int64_t>(v_);
}

double Value::float_value() const {
  RELAX_CHECK(is_float()) << "Value::float_value() on a " << value_kind_name(kind());
  return std::get<double>(v_);
}

const std::string& Value::string_value() const {
  RELAX_CHECK(is_string()) << "Value::string_value() on a " << value_kind_name(kind());
  return *std::get<std::shared_ptr<const std::string>>(v_);
}

const std::vector<Value>& Value::fields() const {
  RELAX_CHECK(is_tuple()) << "Value::fields() on a " << value_kind_name(kind());
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
    case ValueKind::kTensor: return tensor().describe();
    case ValueKind::kShape: return absl::StrCat("Shape(", absl::StrJoin(shape_dims(), ", "), ")");
    case ValueKind::kInt: return absl::StrCat(int_value());
    case ValueKind::kFloat: return describe_float(float_value());
    case ValueKind::kString: return quote(string_value());
    case ValueKind::kTuple: {
      const std::vector<Value>& fs = fields();
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
