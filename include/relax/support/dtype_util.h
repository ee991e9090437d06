// The dtype rules every layer shares: which dtypes a scalar (a SymExpr, a
// symbolic variable, a Prim value, a buffer element) may have, the values an
// integer dtype holds, and dtype names.
//
// The scalar dtypes are the dtypes the IR supports anywhere: int and uint of 8,
// 16, 32 or 64 bits, float16/32/64, bfloat16 and bool (8 bits), one lane each.
// The readers (text, JSON, SymExpr::parse) accept no others.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "relax/support/check.h"
#include "relax/support/data_type.h"

namespace relax {

/// A scalar integer dtype: int8-64 or uint8-64.
inline bool is_scalar_int(DataType t) {
  return t.lanes == 1 && t.is_int() && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64);
}

/// A scalar float dtype: float16, float32, float64 or bfloat16.
inline bool is_scalar_float(DataType t) {
  if (t.lanes != 1) return false;
  if (t.code == DataType::Code::kBFloat) return t.bits == 16;
  return t.code == DataType::Code::kFloat && (t.bits == 16 || t.bits == 32 || t.bits == 64);
}

/// bool (8 bits, one lane).
inline bool is_scalar_bool(DataType t) { return t == DataType::boolean(); }

/// An integer or float scalar dtype: what arithmetic takes.
inline bool is_scalar_numeric(DataType t) { return is_scalar_int(t) || is_scalar_float(t); }

/// Any scalar dtype: the dtypes the IR supports.
inline bool is_scalar_dtype(DataType t) { return is_scalar_numeric(t) || is_scalar_bool(t); }

/// The smallest and largest value of an integer or bool dtype.
struct IntRange {
  int64_t lo;
  int64_t hi;
};

/// The values of the scalar integer or bool dtype `t`, as int64: uint64 is
/// limited to the int64 range (all an int64 can hold), bool is [0, 1].
inline IntRange int_range(DataType t) {
  RELAX_CHECK(is_scalar_int(t) || is_scalar_bool(t)) << "int_range of " << t;
  if (t.is_bool()) return {0, 1};
  if (t.code == DataType::Code::kUInt) {
    if (t.bits == 64) return {0, std::numeric_limits<int64_t>::max()};
    return {0, (int64_t{1} << t.bits) - 1};
  }
  if (t.bits == 64) return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  return {-(int64_t{1} << (t.bits - 1)), (int64_t{1} << (t.bits - 1)) - 1};
}

/// Whether `value` is a value of `t`: true when `t` is a scalar integer or
/// bool dtype whose range holds it; false for every other dtype.
inline bool fits_dtype(int64_t value, DataType t) {
  if (!is_scalar_int(t) && !is_scalar_bool(t)) return false;
  const IntRange r = int_range(t);
  return value >= r.lo && value <= r.hi;
}

/// `v` converted to the integer dtype `t` as C++ converts (two's complement
/// wrap-around); bool gives v != 0.
inline int64_t wrap_to_dtype(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0 ? 1 : 0;
  if (t.bits >= 64) return v;
  const uint64_t mask = (uint64_t{1} << t.bits) - 1;
  const uint64_t low = static_cast<uint64_t>(v) & mask;
  if (t.code == DataType::Code::kUInt) return static_cast<int64_t>(low);
  const uint64_t sign = uint64_t{1} << (t.bits - 1);
  return static_cast<int64_t>((low ^ sign) - sign);  // the low bits, sign-extended
}

/// The name of `t`: DataType::to_string's spelling ("int64", "float32x4",
/// "bool"), except that a bool of other than 8 bits is "bool<bits>" (to_string
/// drops the width of bools), so that different dtypes have different names.
/// A code that DataType::Code does not name is "code<code>_<bits>".
std::string dtype_name(DataType t);

/// The dtype `name` names, accepting exactly the names dtype_name writes for a
/// known code ("int64", not "int064", "int64x1" or "i64"; "bool", not
/// "bool8"), whatever the bits and lanes (1-255 bits, 2-65535 lanes, handle
/// included); nullopt for anything else. Whether the IR supports the dtype is
/// the caller's question (is_scalar_dtype).
std::optional<DataType> parse_dtype(std::string_view name);

}  // namespace relax
