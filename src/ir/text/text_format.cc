// Shared spelling rules of the IR text format (see text_format.h).
#include "ir/text/text_format.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace relax::text {
namespace {

constexpr std::array<std::string_view, 22> kGraphKeywords = {
    "module",  "func",    "prim_func", "extern_func", "const",    "shape", "prim",  "op",
    "if",      "else",    "seq",       "match_cast",  "return",   "dataflow", "bindings",
    "output",  "attrs",   "upper_bounds", "impure",   "sinfo",    "true",  "false"};

constexpr std::array<std::string_view, 10> kStmtKeywords = {
    "for", "seq", "if", "else", "let", "alloc", "evaluate", "block", "init", "call_extern"};

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

template <size_t N>
bool contains(const std::array<std::string_view, N>& words, std::string_view name) {
  for (std::string_view w : words) {
    if (w == name) return true;
  }
  return false;
}

// A small IEEE-style float with `mant` fraction bits and `exp_bits` exponent bits.
}  // namespace

bool is_identifier(std::string_view name) {
  if (name.empty() || !is_name_start(name[0])) return false;
  for (char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

bool is_graph_keyword(std::string_view name) { return contains(kGraphKeywords, name); }
bool is_stmt_keyword(std::string_view name) { return contains(kStmtKeywords, name); }

std::string sanitize_name(std::string_view hint) {
  std::string out;
  for (char c : hint) out += is_name_char(c) ? c : '_';
  if (out.empty() || !is_name_start(out[0])) out = "v" + out;
  return out;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          out += absl::StrFormat("\\x%02x", byte);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string name_or_quoted(std::string_view name) {
  if (is_identifier(name) && !is_graph_keyword(name)) return std::string(name);
  return quote(name);
}

std::string unsupported_dtype_message(DataType t) {
  return "unsupported dtype " + dtype_name(t) +
         " (supported: int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, "
         "float32, float64, bfloat16, bool)";
}

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string out(buf, ec == std::errc() ? ptr : buf);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::optional<uint64_t> read_u64(std::string_view s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

namespace {
template <typename F>
std::optional<F> read_float(std::string_view s) {
  F v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}
}  // namespace

std::optional<float> read_float32(std::string_view s) { return read_float<float>(s); }
std::optional<double> read_float64(std::string_view s) { return read_float<double>(s); }

bool looks_float(std::string_view s) {
  return s.find_first_of(".eE") != std::string_view::npos && s.substr(0, 2) != "0x";
}


}  // namespace relax::text
