// Lexical rules of the SymExpr text form, shared by the printer and the parser
// so that what one writes the other reads.
//
// A variable (or buffer) name is written bare when it is a plain name:
// [A-Za-z_][A-Za-z0-9_.]* and not a reserved word (a function name, `cast`, a
// boolean constant or a float special like `inf_f32`). Any other name is
// written quoted, "like this", with `\"`, `\\` and `\xHH` escapes, so that
// every name survives a print/parse round trip.
#pragma once

#include <array>
#include <string_view>

#include "absl/strings/string_view.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/sym_kind.h"

namespace relax::sym_text {

inline bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

inline bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// The spellings of infinity and NaN for each float dtype: `inf_f32`, `nan_bf16`
/// (negative infinity is `-inf_f32`).
inline constexpr std::array<std::string_view, 8> kFloatSpecials = {
    "inf_f16", "inf_bf16", "inf_f32", "inf_f64", "nan_f16", "nan_bf16", "nan_f32", "nan_f64"};

/// Other words of the text form.
inline constexpr std::array<std::string_view, 3> kKeywords = {"true", "false", "cast"};

/// The functions of the text form: the SymKind rows written as calls (floordiv,
/// floormod, min, max, select), the vector makers ramp and broadcast, and the
/// intrinsics (relax/shape/intrinsics.h).
inline bool is_function_name(std::string_view name) {
  if (sym_kind_of_name(name, SymSyntax::kFunction) != SymKind::kIntImm) return true;
  if (name == sym_kind_name(SymKind::kRamp) || name == sym_kind_name(SymKind::kBroadcast)) return true;
  return intrinsic_from_name(name).has_value();
}

inline bool is_float_special(std::string_view name) {
  for (std::string_view f : kFloatSpecials) {
    if (name == f) return true;
  }
  return false;
}

/// Names that mean something else in the text form and so cannot name a variable bare.
inline bool is_reserved_name(std::string_view name) {
  for (std::string_view reserved : kKeywords) {
    if (name == reserved) return true;
  }
  return is_function_name(name) || is_float_special(name);
}

/// True when `name` can be written without quotes.
inline bool is_plain_name(std::string_view name) {
  if (name.empty() || !is_name_start(name[0])) return false;
  for (char c : name) {
    if (!is_name_char(c)) return false;
  }
  return !is_reserved_name(name);
}

/// The Debian build of absl keeps its own string_view type, which absl::StrCat takes but
/// std::string_view does not convert to.
inline absl::string_view to_absl(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace relax::sym_text
