// Lexical rules of the SymExpr text form, shared by the printer and the parser
// so that what one writes the other reads.
//
// A variable name is written bare when it is a plain name: [A-Za-z_][A-Za-z0-9_.]*
// and not a reserved word (a function name or a boolean constant). Any other
// name is written quoted, "like this", with `\"`, `\\` and `\xHH` escapes, so
// that every variable name survives a print/parse round trip.
#pragma once

#include <array>
#include <string_view>

#include "absl/strings/string_view.h"

namespace relax::sym_text {

inline bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

inline bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Names that mean something else in the text form and so cannot name a variable bare.
inline constexpr std::array<std::string_view, 7> kReservedNames = {
    "floordiv", "floormod", "min", "max", "select", "true", "false"};

inline bool is_reserved_name(std::string_view name) {
  for (std::string_view reserved : kReservedNames) {
    if (name == reserved) return true;
  }
  return false;
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
