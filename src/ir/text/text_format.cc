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

constexpr std::array<std::string_view, 9> kStmtKeywords = {
    "for", "seq", "if", "else", "let", "alloc", "evaluate", "block", "init"};

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

template <size_t N>
bool contains(const std::array<std::string_view, N>& words, std::string_view name) {
  for (std::string_view w : words) {
    if (w == name) return true;
  }
  return false;
}

// Parses a decimal count (bits, lanes) that fills `s`; nullopt otherwise.
std::optional<int> parse_count(std::string_view s, int max) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || value < 1 || value > max ||
      s[0] == '0') {
    return std::nullopt;
  }
  return value;
}

// A small IEEE-style float with `mant` fraction bits and `exp_bits` exponent bits.
uint16_t encode_small(double v, int mant, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint16_t sign = std::signbit(v) ? uint16_t(1u << (mant + exp_bits)) : uint16_t(0);
  const uint16_t exp_all = uint16_t(((1u << exp_bits) - 1) << mant);
  if (std::isnan(v)) return uint16_t(exp_all | (1u << (mant - 1)));
  const double a = std::fabs(v);
  if (std::isinf(a)) return uint16_t(sign | exp_all);
  const int emin = 1 - bias;
  if (a < std::ldexp(1.0, emin)) {
    // Subnormal: a multiple of 2^(emin - mant); a carry into the exponent field is right.
    const double q = std::nearbyint(std::ldexp(a, mant - emin));
    return uint16_t(sign | static_cast<uint16_t>(q));
  }
  int e = std::ilogb(a);
  double m = std::nearbyint(std::ldexp(a, mant - e));
  if (m >= std::ldexp(1.0, mant + 1)) {
    m /= 2;
    ++e;
  }
  if (e > bias) return uint16_t(sign | exp_all);
  const auto frac = static_cast<uint16_t>(static_cast<uint32_t>(m) - (1u << mant));
  return uint16_t(sign | uint16_t((e + bias) << mant) | frac);
}

double decode_small(uint16_t bits, int mant, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const bool negative = (bits >> (mant + exp_bits)) & 1u;
  const int e = (bits >> mant) & ((1 << exp_bits) - 1);
  const int frac = bits & ((1 << mant) - 1);
  double v = 0;
  if (e == (1 << exp_bits) - 1) {
    v = frac != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(frac), 1 - bias - mant);
  } else {
    v = std::ldexp(static_cast<double>(frac + (1 << mant)), e - bias - mant);
  }
  return negative ? -v : v;
}

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

std::optional<DataType> parse_dtype(std::string_view name) {
  DataType t;
  std::string_view rest;
  auto starts = [&](std::string_view prefix) {
    if (name.substr(0, prefix.size()) != prefix) return false;
    rest = name.substr(prefix.size());
    return true;
  };
  if (starts("bool")) {
    t = DataType::boolean();
  } else if (starts("uint")) {
    t.code = DataType::Code::kUInt;
  } else if (starts("int")) {
    t.code = DataType::Code::kInt;
  } else if (starts("float")) {
    t.code = DataType::Code::kFloat;
  } else if (starts("bfloat")) {
    t.code = DataType::Code::kBFloat;
  } else if (starts("handle")) {
    t.code = DataType::Code::kHandle;
  } else {
    return std::nullopt;
  }
  const size_t x = rest.find('x');
  if (t.code != DataType::Code::kBool) {
    std::optional<int> bits = parse_count(rest.substr(0, x), 255);
    if (!bits) return std::nullopt;
    t.bits = static_cast<uint8_t>(*bits);
  } else if (x != 0 && !rest.empty()) {
    return std::nullopt;
  }
  if (x != std::string_view::npos) {
    std::optional<int> lanes = parse_count(rest.substr(x + 1), 65535);
    if (!lanes) return std::nullopt;
    t.lanes = static_cast<uint16_t>(*lanes);
  }
  return t;
}

bool is_sym_dtype(DataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case DataType::Code::kFloat:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case DataType::Code::kBFloat:
      return t.bits == 16;
    case DataType::Code::kBool:
      return t.bits == 8;
    case DataType::Code::kHandle:
      return false;
  }
  return false;
}

bool is_supported_dtype(DataType t) { return is_sym_dtype(t); }

std::string unsupported_dtype_message(DataType t) {
  return "unsupported dtype " + t.to_string() +
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

double decode_float16(uint16_t bits) { return decode_small(bits, 10, 5); }
uint16_t encode_float16(double v) { return encode_small(v, 10, 5); }
double decode_bfloat16(uint16_t bits) { return decode_small(bits, 7, 8); }
uint16_t encode_bfloat16(double v) { return encode_small(v, 7, 8); }

}  // namespace relax::text
