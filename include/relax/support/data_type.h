// relax::DataType: the element type of scalars, symbolic expressions and tensors.
//
// The layout (code, bits, lanes) is the one DLPack uses, so a runtime tensor's
// dtype converts without a table. Header-only so that every layer, the runtime
// included, shares one definition.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace relax {

/// An element type: a kind of number, its width in bits and a vector lane count.
struct DataType {
  /// The kind of number; the values match DLPack's DLDataTypeCode.
  enum class Code : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kHandle = 3, kBFloat = 4, kBool = 6 };

  Code code = Code::kInt;
  uint8_t bits = 64;
  uint16_t lanes = 1;

  static constexpr DataType int64() { return {Code::kInt, 64, 1}; }
  static constexpr DataType int32() { return {Code::kInt, 32, 1}; }
  static constexpr DataType boolean() { return {Code::kBool, 8, 1}; }
  static constexpr DataType float32() { return {Code::kFloat, 32, 1}; }
  static constexpr DataType float16() { return {Code::kFloat, 16, 1}; }
  static constexpr DataType float64() { return {Code::kFloat, 64, 1}; }
  static constexpr DataType bfloat16() { return {Code::kBFloat, 16, 1}; }

  constexpr bool is_int() const { return code == Code::kInt || code == Code::kUInt; }
  constexpr bool is_bool() const { return code == Code::kBool; }
  constexpr bool is_float() const { return code == Code::kFloat || code == Code::kBFloat; }

  friend constexpr bool operator==(DataType a, DataType b) {
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
  }
  friend constexpr bool operator!=(DataType a, DataType b) { return !(a == b); }

  /// The conventional spelling: "int64", "float32", "bool", "float32x4".
  std::string to_string() const {
    if (code == Code::kBool) return lanes == 1 ? "bool" : "boolx" + std::to_string(lanes);
    std::string s;
    switch (code) {
      case Code::kInt: s = "int"; break;
      case Code::kUInt: s = "uint"; break;
      case Code::kFloat: s = "float"; break;
      case Code::kBFloat: s = "bfloat"; break;
      case Code::kHandle: s = "handle"; break;
      case Code::kBool: break;
    }
    s += std::to_string(bits);
    if (lanes != 1) s += "x" + std::to_string(lanes);
    return s;
  }
};

inline std::ostream& operator<<(std::ostream& os, DataType t) { return os << t.to_string(); }

}  // namespace relax
