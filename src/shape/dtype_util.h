// Dtype helpers of the shape layer: which dtypes a SymExpr may have, the
// value range of an integer dtype, rounding a double to a float dtype, and the
// literal suffixes of the text form (`5i32`, `1.5f32`, `1bf16`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "relax/support/data_type.h"

namespace relax::shape_detail {

/// A scalar integer (signed or unsigned) dtype that a SymExpr may have.
inline bool is_scalar_int(DataType t) {
  return t.lanes == 1 && t.is_int() && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64);
}

/// A scalar float dtype that a SymExpr may have: float16/32/64 and bfloat16.
inline bool is_scalar_float(DataType t) {
  if (t.lanes != 1) return false;
  if (t.code == DataType::Code::kBFloat) return t.bits == 16;
  return t.code == DataType::Code::kFloat && (t.bits == 16 || t.bits == 32 || t.bits == 64);
}

inline bool is_scalar_bool(DataType t) { return t.lanes == 1 && t.is_bool(); }

/// Any dtype a SymExpr node may have.
inline bool is_scalar_dtype(DataType t) {
  return is_scalar_int(t) || is_scalar_float(t) || is_scalar_bool(t);
}

/// A numeric (integer or float) scalar dtype: what arithmetic takes.
inline bool is_numeric(DataType t) { return is_scalar_int(t) || is_scalar_float(t); }

/// The smallest and largest value of an integer dtype, as int64 (uint64 is
/// limited to the int64 range, which is all a SymExpr constant can hold).
struct IntRange {
  int64_t lo;
  int64_t hi;
};
IntRange int_range(DataType t);
inline bool fits(int64_t v, DataType t) {
  const IntRange r = int_range(t);
  return v >= r.lo && v <= r.hi;
}

/// `v` converted to the integer dtype `t` as C++ converts (two's complement
/// wrap-around); bool gives v != 0.
int64_t wrap_to(int64_t v, DataType t);

/// The value of float dtype `t` nearest to `v` (ties to even; beyond the
/// largest finite value, an infinity). NaN stays NaN.
double round_to_float(double v, DataType t);

/// The text suffix of a literal of dtype `t`: "f32", "bf16", "i32", "u8"; ""
/// for int64 (which is written bare).
std::string literal_suffix(DataType t);
/// The dtype a literal suffix names, or nullopt.
std::optional<DataType> dtype_of_suffix(std::string_view suffix);
/// The dtype a dtype name (DataType::to_string's spelling, scalar only) names.
std::optional<DataType> parse_dtype_name(std::string_view name);

}  // namespace relax::shape_detail
