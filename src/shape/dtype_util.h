// Dtype helpers of the shape layer: wrapping an integer to a dtype and the
// literal suffixes of the text form (`5i32`, `1.5f32`, `1bf16`). Which dtypes a
// SymExpr may have, integer ranges and dtype names are relax/support/dtype_util.h,
// and rounding to a float dtype relax/support/float_format.h, shared by every layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "relax/support/data_type.h"
#include "relax/support/dtype_util.h"
#include "relax/support/float_format.h"

namespace relax::shape_detail {

/// `v` converted to the integer dtype `t` as C++ converts (relax/support/dtype_util.h).
inline int64_t wrap_to(int64_t v, DataType t) { return wrap_to_dtype(v, t); }

/// The text suffix of a literal of dtype `t`: "f32", "bf16", "i32", "u8"; ""
/// for int64 (which is written bare).
std::string literal_suffix(DataType t);
/// The dtype a literal suffix names, or nullopt.
std::optional<DataType> dtype_of_suffix(std::string_view suffix);

}  // namespace relax::shape_detail
