// Dtype helpers of the shape layer (see dtype_util.h).
#include "shape/dtype_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace relax::shape_detail {

std::string literal_suffix(DataType t) {
  if (t == DataType::int64()) return "";
  std::string prefix;
  switch (t.code) {
    case DataType::Code::kInt:
      prefix = "i";
      break;
    case DataType::Code::kUInt:
      prefix = "u";
      break;
    case DataType::Code::kFloat:
      prefix = "f";
      break;
    case DataType::Code::kBFloat:
      prefix = "bf";
      break;
    default:
      return "";
  }
  return prefix + std::to_string(t.bits);
}

std::optional<DataType> dtype_of_suffix(std::string_view suffix) {
  static constexpr struct {
    std::string_view suffix;
    DataType dtype;
  } kSuffixes[] = {
      {"i8", {DataType::Code::kInt, 8, 1}},     {"i16", {DataType::Code::kInt, 16, 1}},
      {"i32", {DataType::Code::kInt, 32, 1}},   {"i64", {DataType::Code::kInt, 64, 1}},
      {"u8", {DataType::Code::kUInt, 8, 1}},    {"u16", {DataType::Code::kUInt, 16, 1}},
      {"u32", {DataType::Code::kUInt, 32, 1}},  {"u64", {DataType::Code::kUInt, 64, 1}},
      {"f16", {DataType::Code::kFloat, 16, 1}}, {"f32", {DataType::Code::kFloat, 32, 1}},
      {"f64", {DataType::Code::kFloat, 64, 1}}, {"bf16", {DataType::Code::kBFloat, 16, 1}},
  };
  for (const auto& entry : kSuffixes) {
    if (entry.suffix == suffix) return entry.dtype;
  }
  return std::nullopt;
}

}  // namespace relax::shape_detail
