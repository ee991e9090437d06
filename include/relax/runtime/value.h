// relax::runtime::Value: what a VM register, a function argument or a result holds.
//
// One of: nothing, a Tensor, a shape tuple (int64 dims), an int64 scalar, a
// float64 scalar, a string, or a tuple of values. Values are cheap to copy
// (tensors and tuples share their contents) and immutable once made.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/tensor.h"

namespace relax::runtime {

enum class ValueKind : uint8_t { kNone, kTensor, kShape, kInt, kFloat, kString, kTuple };

/// "none", "tensor", "shape", "int", "float", "string", "tuple".
const char* value_kind_name(ValueKind kind);

class Value {
 public:
  Value() = default;
  /// An undefined Tensor handle makes a none Value: a kTensor Value's tensor is always defined.
  Value(Tensor tensor);  // NOLINT(google-explicit-constructor): arguments convert implicitly
  Value(int64_t v);      // NOLINT(google-explicit-constructor)
  Value(int v) : Value(static_cast<int64_t>(v)) {}  // NOLINT(google-explicit-constructor)
  Value(double v);       // NOLINT(google-explicit-constructor)
  Value(std::string s);  // NOLINT(google-explicit-constructor)

  static Value shape(std::vector<int64_t> dims);
  static Value tuple(std::vector<Value> fields);

  ValueKind kind() const;
  bool is_none() const { return kind() == ValueKind::kNone; }
  bool is_tensor() const { return kind() == ValueKind::kTensor; }
  bool is_shape() const { return kind() == ValueKind::kShape; }
  bool is_int() const { return kind() == ValueKind::kInt; }
  bool is_float() const { return kind() == ValueKind::kFloat; }
  bool is_string() const { return kind() == ValueKind::kString; }
  bool is_tuple() const { return kind() == ValueKind::kTuple; }

  // The contents: InvalidArgument naming the accessor, the value's kind and
  // the kind asked for when the value is of another kind.
  /// The tensor of a tensor value.
  absl::StatusOr<Tensor> tensor() const;
  /// The dims of a shape value.
  absl::StatusOr<std::vector<int64_t>> shape_dims() const;
  /// The integer of an int value.
  absl::StatusOr<int64_t> int_value() const;
  /// The number of a float value.
  absl::StatusOr<double> float_value() const;
  /// The text of a string value.
  absl::StatusOr<std::string> string_value() const;
  /// The fields of a tuple value.
  absl::StatusOr<std::vector<Value>> fields() const;

  // The same without a copy, aborting (RELAX_CHECK) on the wrong kind: for
  // code that has checked kind() already.
  const Tensor& tensor_or_die() const;
  const std::vector<int64_t>& shape_dims_or_die() const;
  int64_t int_value_or_die() const;
  double float_value_or_die() const;
  const std::string& string_value_or_die() const;
  const std::vector<Value>& fields_or_die() const;

  /// "Tensor[(2, 3), float32]", "Shape(2, 3)", "7", "0.5", "\"s\"", "(a, b)".
  std::string describe() const;

 private:
  absl::Status wrong_kind(const char* accessor, ValueKind wanted) const;

  struct Shape {
    std::shared_ptr<const std::vector<int64_t>> dims;
  };
  struct Tuple {
    std::shared_ptr<const std::vector<Value>> fields;
  };
  std::variant<std::monostate, Tensor, Shape, int64_t, double, std::shared_ptr<const std::string>,
               Tuple>
      v_;
};

}  // namespace relax::runtime
